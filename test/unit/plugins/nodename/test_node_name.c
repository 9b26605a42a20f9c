/* NodeName (cases from upstream node_name_test.go). */
#include "testutil_plugins.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_node_name;

static const char *verdict(const char *pod_node, const char *node) {
    static char buf[256];
    ks_pod *p = tp_pod("p");
    if (pod_node) tp_pod_node_name(p, pod_node);
    tp_pod_done(p);
    ks_node *n = tp_node(node);
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    snprintf(buf, sizeof(buf), "%s", tp_filter1(&ks_plugin_node_name, p, ni));
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(p);
    return buf;
}

static void no_node_name_fits_any_node(void **st) {
    assert_string_equal(verdict(NULL, "foo"), "Success");
}

static void matching_node_name_fits(void **st) {
    assert_string_equal(verdict("foo", "foo"), "Success");
}

static void other_node_name_is_unresolvable(void **st) {
    assert_string_equal(verdict("bar", "foo"),
                        "UnschedulableAndUnresolvable: node(s) didn't match the requested node name");
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_node_name_fits_any_node),
        cmocka_unit_test(matching_node_name_fits),
        cmocka_unit_test(other_node_name_is_unresolvable),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
