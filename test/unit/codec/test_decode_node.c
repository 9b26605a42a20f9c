/* Node status defaulting the scheduler depends on: the API server stores a
 * node without status.allocatable with allocatable = capacity. */
#include "api/cluster.h"
#include "codec/decode.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static ks_cluster *load(const char *yaml) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    assert_true(ks_load_buffer(c, "node.yaml", yaml, strlen(yaml), &errs));
    ks_errors_free(&errs);
    return c;
}

static void missing_allocatable_defaults_to_capacity(void **st) {
    ks_cluster *c = load("apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n"
                         "status:\n  capacity: {cpu: '8', memory: 16Gi, pods: '250', example.com/fpga: '2'}\n");
    ks_node *n = c->nodes.v[0];
    assert_int_equal(n->allocatable.milli_cpu, 8000);
    assert_int_equal(n->allocatable.memory, 16LL << 30);
    assert_int_equal(n->allocatable.allowed_pods, 250);
    assert_int_equal(ks_resource_get(&n->allocatable, ks_intern("example.com/fpga")), 2);
    ks_cluster_free(c);
}

static void written_allocatable_wins(void **st) {
    ks_cluster *c = load("apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n"
                         "status:\n  capacity: {cpu: '8', pods: '250'}\n  allocatable: {cpu: 7500m, pods: '110'}\n");
    ks_node *n = c->nodes.v[0];
    assert_int_equal(n->allocatable.milli_cpu, 7500);
    assert_int_equal(n->allocatable.allowed_pods, 110);
    ks_cluster_free(c);
}

static void empty_allocatable_stays_empty(void **st) {
    ks_cluster *c = load("apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n"
                         "status:\n  capacity: {cpu: '8'}\n  allocatable: {}\n");
    assert_int_equal(c->nodes.v[0]->allocatable.milli_cpu, 0);
    ks_cluster_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_allocatable_defaults_to_capacity),
        cmocka_unit_test(written_allocatable_wins),
        cmocka_unit_test(empty_allocatable_stays_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
