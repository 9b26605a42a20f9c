/* NodeUnschedulable (cases from upstream node_unschedulable_test.go). */
#include "testutil_plugins.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_node_unschedulable;

static const char *verdict(ks_pod *pod, bool unschedulable) {
    static char buf[256];
    tp_pod_done(pod);
    ks_node *n = tp_node("node");
    n->unschedulable = unschedulable;
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    snprintf(buf, sizeof(buf), "%s", tp_filter1(&ks_plugin_node_unschedulable, pod, ni));
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(pod);
    return buf;
}

static void unschedulable_node_rejects_pod(void **st) {
    assert_string_equal(verdict(tp_pod("p"), true),
                        "UnschedulableAndUnresolvable: node(s) were unschedulable");
}

static void schedulable_node_admits_pod(void **st) {
    assert_string_equal(verdict(tp_pod("p"), false), "Success");
}

static void toleration_of_unschedulable_taint_admits_pod(void **st) {
    ks_pod *p = tp_pod("p");
    tp_pod_toleration(p, "node.kubernetes.io/unschedulable", KS_TOL_EXISTS, NULL,
                      KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(verdict(p, true), "Success");
}

static void toleration_with_other_effect_does_not_admit(void **st) {
    ks_pod *p = tp_pod("p");
    tp_pod_toleration(p, "node.kubernetes.io/unschedulable", KS_TOL_EXISTS, NULL,
                      KS_EFFECT_NO_EXECUTE);
    assert_string_equal(verdict(p, true),
                        "UnschedulableAndUnresolvable: node(s) were unschedulable");
}

static void tolerate_everything_admits_pod(void **st) {
    ks_pod *p = tp_pod("p");
    tp_pod_toleration(p, "", KS_TOL_EXISTS, NULL, KS_EFFECT_ALL);
    assert_string_equal(verdict(p, true), "Success");
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unschedulable_node_rejects_pod),
        cmocka_unit_test(schedulable_node_admits_pod),
        cmocka_unit_test(toleration_of_unschedulable_taint_admits_pod),
        cmocka_unit_test(toleration_with_other_effect_does_not_admit),
        cmocka_unit_test(tolerate_everything_admits_pod),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
