/* NodeInfo bookkeeping: what adding and removing pods does to the
 * aggregates plugins read (requests, host ports, affinity lists, PVC
 * references, generation), as upstream's framework.NodeInfo does it. */
#include "framework/nodeinfo.h"
#include "testutil_plugins.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

static ks_pod *web(const char *name, int64_t cpu, int64_t mem, int32_t host_port) {
    ks_pod *p = tp_pod(name);
    ks_container *c = tp_container(p, cpu, mem);
    if (host_port) tp_container_port(p, c, host_port, "TCP", NULL);
    return tp_pod_done(p);
}

static void requests_add_up_and_come_back(void **st) {
    (void)st;
    ks_node *n = tp_node("n1");
    tp_node_alloc(n, 4000, 8LL << 30, 110);
    ks_node_info *ni = ks_node_info_new();
    ks_node_info_set_node(ni, n);
    ks_pod *a = web("a", 500, 1LL << 30, 0), *b = web("b", TP_NONE, TP_NONE, 0);
    uint64_t g0 = ni->generation;
    ks_node_info_add_pod(ni, a);
    ks_node_info_add_pod(ni, b);
    assert_true(ni->generation > g0);
    assert_int_equal(ni->npods, 2);
    assert_int_equal(ni->requested.milli_cpu, 500);
    assert_int_equal(ni->requested.memory, 1LL << 30);
    /* b asks for nothing: scoring counts it at the 100m / 200Mi defaults. */
    assert_int_equal(ni->nonzero_requested.milli_cpu, 600);
    assert_int_equal(ni->nonzero_requested.memory, (1LL << 30) + KS_DEFAULT_MEMORY_REQUEST);
    assert_true(ks_node_info_remove_pod(ni, a));
    assert_false(ks_node_info_remove_pod(ni, a));
    assert_int_equal(ni->npods, 1);
    assert_int_equal(ni->requested.milli_cpu, 0);
    assert_int_equal(ni->nonzero_requested.milli_cpu, 100);
    ks_node_info_free(ni);
    ks_pod_unref(a);
    ks_pod_unref(b);
    ks_node_unref(n);
}

static void host_ports_are_a_set(void **st) {
    (void)st;
    ks_node_info *ni = ks_node_info_new();
    ks_pod *a = web("a", 100, 0, 8080), *b = web("b", 100, 0, 8080), *c = web("c", 100, 0, 9090);
    ks_node_info_add_pod(ni, a);
    ks_node_info_add_pod(ni, b); /* same port: nothing new to record */
    ks_node_info_add_pod(ni, c);
    assert_int_equal(ni->nports, 2);
    ks_container_port want = {.host_port = 8080, .protocol = ks_intern("TCP")};
    assert_true(ks_node_info_port_conflict(ni, &want));
    /* Removing either user frees the port, as upstream's set does. */
    assert_true(ks_node_info_remove_pod(ni, a));
    assert_false(ks_node_info_port_conflict(ni, &want));
    want.host_port = 9090;
    assert_true(ks_node_info_port_conflict(ni, &want));
    want.protocol = ks_intern("UDP");
    assert_false(ks_node_info_port_conflict(ni, &want));
    ks_node_info_free(ni);
    ks_pod_unref(a);
    ks_pod_unref(b);
    ks_pod_unref(c);
}

static void removal_moves_the_last_pod_into_the_gap(void **st) {
    (void)st;
    ks_node_info *ni = ks_node_info_new();
    ks_pod *p[4] = {web("p0", 1, 0, 0), web("p1", 1, 0, 0), web("p2", 1, 0, 0), web("p3", 1, 0, 0)};
    for (int i = 0; i < 4; i++) ks_node_info_add_pod(ni, p[i]);
    assert_true(ks_node_info_remove_pod(ni, p[1]));
    assert_int_equal(ni->npods, 3);
    assert_ptr_equal(ni->pods[0], p[0]);
    assert_ptr_equal(ni->pods[1], p[3]);
    assert_ptr_equal(ni->pods[2], p[2]);
    ks_node_info_free(ni);
    for (int i = 0; i < 4; i++) ks_pod_unref(p[i]);
}

static void clone_is_equal_and_independent(void **st) {
    (void)st;
    ks_node_info *ni = ks_node_info_new();
    ks_pod *a = web("a", 300, 100, 80);
    ks_node_info_add_pod(ni, a);
    ks_node_info *c = ks_node_info_clone(ni);
    assert_int_equal(ks_node_info_checksum(c), ks_node_info_checksum(ni));
    ks_pod *b = web("b", 200, 0, 0);
    ks_node_info_add_pod(c, b);
    assert_int_not_equal(ks_node_info_checksum(c), ks_node_info_checksum(ni));
    assert_int_equal(ni->npods, 1);
    assert_int_equal(ni->requested.milli_cpu, 300);
    assert_int_equal(c->requested.milli_cpu, 500);
    ks_node_info_free(c);
    ks_node_info_free(ni);
    ks_pod_unref(a);
    ks_pod_unref(b);
}

/* Scalar sums are the NodeInfo's own: a clone changes independently, and
 * a node takes more distinct scalars than a pod may carry. */
static void scalar_sums_are_owned_and_unlimited(void **st) {
    (void)st;
    ks_node *n = tp_node("n1");
    tp_node_alloc(n, 4000, 8LL << 30, 110);
    ks_node_info *ni = ks_node_info_new();
    ks_node_info_set_node(ni, n);
    enum { NPODS = 20 };
    ks_pod *pods[NPODS];
    for (int i = 0; i < NPODS; i++) {
        char name[16], res[32];
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(res, sizeof(res), "example.com/r%02d", i);
        pods[i] = tp_pod(name);
        ks_container *c = tp_container(pods[i], 10, 10);
        tp_container_scalar(pods[i], c, res, i + 1);
        tp_container_scalar(pods[i], c, "nvidia.com/gpu", 1);
        tp_pod_done(pods[i]);
        ks_node_info_add_pod(ni, pods[i]);
    }
    ks_id gpu = ks_intern("nvidia.com/gpu"), last = ks_intern("example.com/r19");
    assert_int_equal(ni->requested.nscalar, NPODS + 1);
    assert_int_equal(ks_resource_get(&ni->requested, gpu), NPODS);
    assert_int_equal(ks_resource_get(&ni->requested, last), NPODS);
    ks_node_info *c = ks_node_info_clone(ni);
    assert_true(ks_node_info_remove_pod(ni, pods[NPODS - 1]));
    assert_int_equal(ks_resource_get(&ni->requested, gpu), NPODS - 1);
    assert_int_equal(ks_resource_get(&ni->requested, last), 0);
    assert_int_equal(ks_resource_get(&c->requested, gpu), NPODS);
    assert_int_equal(ks_resource_get(&c->requested, last), NPODS);
    ks_node_info_copy_into(c, ni);
    assert_true(ks_resource_equal(&c->requested, &ni->requested));
    ks_node_info_free(c);
    ks_node_info_free(ni);
    for (int i = 0; i < NPODS; i++) ks_pod_unref(pods[i]);
    ks_node_unref(n);
}

/* Arena-backed vectors are copied on write: a struct copy keeps its value. */
static void arena_vectors_copy_on_write(void **st) {
    (void)st;
    ks_arena *a = ks_arena_new(0);
    ks_id gpu = ks_intern("nvidia.com/gpu"), fpga = ks_intern("example.com/fpga");
    ks_resource r = {0};
    ks_resource_set(&r, a, gpu, 2);
    ks_resource copy = r;
    ks_resource_set(&r, a, gpu, 3);
    ks_resource_set(&r, a, fpga, 1);
    assert_int_equal(ks_resource_get(&copy, gpu), 2);
    assert_int_equal(copy.nscalar, 1);
    assert_int_equal(ks_resource_get(&r, gpu), 3);
    assert_int_equal(ks_resource_get(&r, fpga), 1);
    ks_resource sum = {0};
    ks_resource_add(&sum, NULL, &r);
    ks_resource_add(&sum, NULL, &sum);
    ks_resource_sub(&sum, NULL, &copy);
    assert_int_equal(ks_resource_get(&sum, gpu), 4);
    assert_int_equal(ks_resource_get(&sum, fpga), 2);
    assert_int_equal(ks_resource_get(&r, gpu), 3);
    ks_resource_fini(&sum);
    ks_arena_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests_add_up_and_come_back),
        cmocka_unit_test(host_ports_are_a_set),
        cmocka_unit_test(removal_moves_the_last_pod_into_the_gap),
        cmocka_unit_test(clone_is_equal_and_independent),
        cmocka_unit_test(scalar_sums_are_owned_and_unlimited),
        cmocka_unit_test(arena_vectors_copy_on_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
