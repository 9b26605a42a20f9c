/* SchedulingGates (cases from upstream scheduling_gates_test.go). */
#include "testutil_plugins.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_scheduling_gates;

static void pod_without_gates_is_enqueued(void **st) {
    ks_pod *p = tp_pod_done(tp_pod("p"));
    assert_string_equal(tp_status_str(ks_plugin_scheduling_gates.pre_enqueue(NULL, p)), "Success");
    ks_pod_unref(p);
}

static void gated_pod_lists_gates_like_go(void **st) {
    ks_pod *p = tp_pod("p");
    tp_pod_gate(p, "foo");
    tp_pod_gate(p, "bar");
    tp_pod_done(p);
    assert_string_equal(tp_status_str(ks_plugin_scheduling_gates.pre_enqueue(NULL, p)),
                        "UnschedulableAndUnresolvable: waiting for scheduling gates: [foo bar]");
    ks_pod_unref(p);
}

static void events_pod_update(void **st) {
    ks_cluster_event ev[2];
    assert_int_equal(ks_plugin_scheduling_gates.events_to_register(NULL, ev, 2), 1);
    assert_int_equal(ev[0].resource, KS_EV_POD);
    assert_int_equal(ev[0].actions, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pod_without_gates_is_enqueued),
        cmocka_unit_test(gated_pod_lists_gates_like_go),
        cmocka_unit_test(events_pod_update),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
