/* The scheduling queue: ordering, transitions between activeQ, backoffQ
 * and the unschedulable map on cluster events, backoff durations, flushes,
 * PreEnqueue gating, in-flight events and the nominator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/queue.h"
#include "framework/status.h"
#include "testutil.h"
#include "util/clock.h"

#include <stdlib.h>
#include <string.h>

/* Gate: PreEnqueue rejects pods labelled gated=yes; interested in updates
 * of unscheduled pods. Picky: a Filter that registers no events. */
static ks_status *gate(void *self, const ks_pod *pod) {
    ks_id v;
    if (ks_labels_get(&pod->labels, ks_intern("gated"), &v) && v == ks_intern("yes"))
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [example.com/g]");
    return NULL;
}
static size_t gate_events(void *self, ks_cluster_event *out, size_t max) {
    out[0] = (ks_cluster_event){KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE};
    return 1;
}
static ks_status *picky(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) { return NULL; }
static const ks_plugin_ops p_gate = {.abi_version = KS_ABI_VERSION, .name = "Gate", .pre_enqueue = gate,
                                     .events_to_register = gate_events};
static const ks_plugin_ops p_picky = {.abi_version = KS_ABI_VERSION, .name = "Picky", .filter = picky};

typedef struct fx {
    ks_clock *clock;
    ks_registry *reg;
    ks_framework *fw;
    ks_queue *q;
    ks_pod *known[16]; /* what lookup_pod finds */
    int nknown;
} fx;
static fx F;

static ks_pod *lookup(void *ctx, uint64_t key) {
    for (int i = 0; i < F.nknown; i++)
        if (F.known[i]->key == key) return ks_pod_ref(F.known[i]);
    return NULL;
}

static int setup(void **state) {
    memset(&F, 0, sizeof(F));
    const ks_plugin_ops *extra[] = {&p_gate, &p_picky};
    F.reg = tu_registry(extra, 2);
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&tp, &p_gate, 0);
    tu_profile_add_plugin(&tp, &p_picky, 0);
    char *err = NULL;
    F.fw = ks_framework_new(F.reg, &tp.p, NULL, &err);
    assert_non_null(F.fw);
    F.clock = ks_clock_sim_new(1000 * KS_NS_PER_SEC);
    ks_queue_options o = {.clock = F.clock,
                          .initial_backoff_ns = KS_NS_PER_SEC,
                          .max_backoff_ns = 10 * KS_NS_PER_SEC,
                          .frameworks = &F.fw,
                          .nframeworks = 1,
                          .lookup_pod = lookup};
    F.q = ks_queue_new(&o);
    return 0;
}

static int teardown(void **state) {
    ks_queue_free(F.q);
    ks_framework_free(F.fw);
    ks_registry_free(F.reg);
    ks_clock_free(F.clock);
    for (int i = 0; i < F.nknown; i++) ks_pod_unref(F.known[i]);
    return 0;
}

static ks_pod *add(const char *name, int32_t prio) {
    ks_pod *p = tu_pod("default", name, 100, 0, prio);
    ks_queue_add(F.q, p);
    F.known[F.nknown++] = p;
    return p;
}

static int where(const ks_pod *p) { return ks_queue_where(F.q, p->key, NULL); }

/* Pop a pod and hand it back rejected by `plugin` (NULL: an error). */
static void fail_with(const char *plugin) {
    ks_queued_pod *qp = ks_queue_pop(F.q, false);
    assert_non_null(qp);
    if (plugin) ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, plugin));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
}

static void test_order(void **state) {
    add("low", 1);
    add("high", 5);
    add("mid", 3);
    add("mid2", 3);
    const char *want[] = {"high", "mid", "mid2", "low"};
    for (int i = 0; i < 4; i++) {
        ks_queued_pod *qp = ks_queue_pop(F.q, false);
        assert_string_equal(ks_str(qp->pod->name), want[i]);
        assert_int_equal(qp->attempts, 1);
        assert_int_equal(ks_queued_pod_initial_attempt_ns(qp), 1000 * KS_NS_PER_SEC);
        ks_queue_done(F.q, qp->pod->key);
        ks_queued_pod_free(qp);
    }
    assert_null(ks_queue_pop(F.q, false));
    assert_int_equal(ks_queue_scheduling_cycle(F.q), 4);
}

static void test_backoff_durations(void **state) {
    int64_t want[] = {1, 2, 4, 8, 10, 10, 10};
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(ks_queue_backoff_duration(F.q, i + 1), want[i] * KS_NS_PER_SEC);
    assert_int_equal(ks_queue_backoff_duration(F.q, 100), 10 * KS_NS_PER_SEC);
}

static void test_unschedulable_moves_on_registered_event(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("TestFit");
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* TestFit does not care about PVCs. */
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_PVC, KS_ACT_ADD}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* A new node may help: backoffQ (still backing off). */
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
    /* With activeQ empty it is popped from backoffQ at once. */
    ks_queued_pod *qp = ks_queue_pop(F.q, false);
    assert_ptr_equal(qp->pod, p);
    assert_int_equal(qp->attempts, 2);
    assert_int_equal(qp->unschedulable_count, 1);
    ks_queue_done(F.q, p->key);
    ks_queued_pod_free(qp);
}

static void test_pod_pattern_matches_assigned_pods(void **state) {
    /* TestFit registered Pod/Delete: an assigned pod going away counts. */
    ks_pod *p = add("p", 0);
    fail_with("TestFit");
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_ASSIGNED_POD, KS_ACT_ADD}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_ASSIGNED_POD, KS_ACT_DELETE}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
}

static void test_rejector_without_events_moves_on_any_event(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Picky");
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_PVC, KS_ACT_ADD}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
}

static void test_backoff_completes_into_active(void **state) {
    ks_pod *p = add("p", 0);
    ks_pod *other = add("other", 0);
    ks_queued_pod *qp = ks_queue_pop(F.q, false); /* p */
    ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "Picky"));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
    assert_int_equal(where(other), KS_Q_ACTIVE);
    /* Backoff 1 s from the failure, on 1 s windows. */
    int64_t due = ks_queue_next_backoff_expiry(F.q);
    ks_clock_sim_set(F.clock, due - 1);
    ks_queue_flush_backoff_completed(F.q);
    assert_int_equal(where(p), KS_Q_BACKOFF);
    ks_clock_sim_set(F.clock, due);
    ks_queue_flush_backoff_completed(F.q);
    assert_int_equal(where(p), KS_Q_ACTIVE);
    assert_true(due - 1001 * KS_NS_PER_SEC <= 2 * KS_NS_PER_SEC);
}

static void test_error_backoff(void **state) {
    ks_pod *p = add("p", 0);
    fail_with(NULL);
    assert_int_equal(where(p), KS_Q_ERROR_BACKOFF);
    /* Error backoff is not popped early. */
    assert_null(ks_queue_pop(F.q, false));
    ks_clock_sim_set(F.clock, ks_queue_next_backoff_expiry(F.q));
    ks_queue_flush_backoff_completed(F.q);
    assert_int_equal(where(p), KS_Q_ACTIVE);
    ks_queued_pod *qp = ks_queue_pop(F.q, false);
    assert_int_equal(qp->consecutive_errors, 1);
    /* Failing again doubles it. */
    int64_t before = ks_clock_now(F.clock);
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    int64_t due = ks_queue_next_backoff_expiry(F.q);
    assert_true(due - before >= 2 * KS_NS_PER_SEC);
    assert_true(due - before <= 3 * KS_NS_PER_SEC);
}

static void test_gated_pod_waits_for_its_event(void **state) {
    ks_pod *p = tu_pod("default", "g", 100, 0, 0);
    tu_pod_labels(p, "gated", "yes", NULL);
    F.known[F.nknown++] = p;
    ks_queue_add(F.q, p);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_queue_stats st;
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.gated, 1);
    assert_int_equal(st.active, 0);
    assert_null(ks_queue_pop(F.q, false));
    /* Other events do not move it. */
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, 0, NULL, NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* The gate is lifted by an update. */
    ks_pod *p2 = tu_pod("default", "g", 100, 0, 0);
    ks_queue_update(F.q, p, p2, true);
    assert_int_equal(where(p2), KS_Q_ACTIVE);
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.gated, 0);
    ks_pod_unref(p2);
}

static void test_status_only_update_does_not_move(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Picky");
    ks_pod *p2 = ks_pod_clone(p);
    ks_queue_update(F.q, p, p2, false);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_pod_unref(p2);
}

static void test_leftover_flush(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("TestFit");
    ks_clock_sim_set(F.clock, ks_clock_now(F.clock) + 5 * 60 * KS_NS_PER_SEC);
    ks_queue_flush_unschedulable_leftover(F.q);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE); /* not longer than 5 minutes yet */
    ks_clock_sim_set(F.clock, ks_clock_now(F.clock) + KS_NS_PER_SEC);
    ks_queue_flush_unschedulable_leftover(F.q);
    assert_int_equal(where(p), KS_Q_ACTIVE); /* backoff long over */
}

static void test_event_while_in_flight(void **state) {
    ks_pod *p = add("p", 0);
    ks_queued_pod *qp = ks_queue_pop(F.q, false);
    ks_queue_stats st;
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.in_flight, 1);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, 0, NULL, NULL);
    ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "TestFit"));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    /* The node that arrived during the attempt may help: not parked. */
    assert_int_equal(where(p), KS_Q_BACKOFF);
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.in_flight, 0);

    /* An uninteresting event during the attempt: parked. */
    ks_pod *q2 = add("q2", 0);
    ks_queued_pod *a = ks_queue_pop(F.q, false);
    assert_ptr_equal(a->pod, q2);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_ASSIGNED_POD, KS_ACT_ADD}, 0, NULL, NULL);
    ks_plugin_mask_add(&a->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "TestFit"));
    assert_null(ks_queue_add_unschedulable(F.q, a));
    assert_int_equal(where(q2), KS_Q_UNSCHEDULABLE);
}

static void test_activate(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("TestFit");
    ks_queue_activate(F.q, p);
    assert_int_equal(where(p), KS_Q_ACTIVE);
}

static void test_delete_and_duplicates(void **state) {
    ks_pod *p = add("p", 0);
    ks_queue_delete(F.q, p);
    assert_int_equal(where(p), KS_Q_NONE);
    add("p2", 0);
    ks_queued_pod *qp = ks_queue_pop(F.q, false);
    ks_queue_add(F.q, qp->pod); /* the same pod re-added while in flight */
    ks_status *e = ks_queue_add_unschedulable(F.q, qp);
    char *m = ks_status_message(e);
    assert_string_equal(m, "Pod default/p2 is already present in the active queue");
    free(m);
    ks_status_free(e);
}

static void test_nominator(void **state) {
    ks_pod *p = add("p", 10);
    ks_nominating_info ni = {.mode = KS_NOMINATE_OVERRIDE, .node = ks_intern("n1")};
    ks_queue_add_nominated(F.q, p, &ni);
    assert_int_equal(ks_queue_nominated_count(F.q, ks_intern("n1")), 1);
    assert_int_equal(ks_queue_nominated_node(F.q, p->key), ks_intern("n1"));
    ks_pod *out[4];
    assert_int_equal(ks_queue_nominated_pods(F.q, ks_intern("n1"), out, 4), 1);
    assert_ptr_equal(out[0], p);
    ks_pod_unref(out[0]);
    /* Noop keeps what the pod's status says (nothing): removed. */
    ks_nominating_info noop = {.mode = KS_NOMINATE_NOOP};
    ks_queue_add_nominated(F.q, p, &noop);
    assert_int_equal(ks_queue_nominated_count(F.q, ks_intern("n1")), 0);
    /* A pod the backend no longer has is never nominated. */
    ks_pod *gone = tu_pod("default", "gone", 0, 0, 0);
    ks_queue_add_nominated(F.q, gone, &ni);
    assert_int_equal(ks_queue_nominated_count(F.q, ks_intern("n1")), 0);
    ks_pod_unref(gone);
    /* Override with an empty node clears; deleting the pod clears. */
    ks_queue_add_nominated(F.q, p, &ni);
    ks_nominating_info clear = {.mode = KS_NOMINATE_OVERRIDE, .node = 0};
    ks_queue_add_nominated(F.q, p, &clear);
    assert_int_equal(ks_queue_nominated_node(F.q, p->key), 0);
    ks_queue_add_nominated(F.q, p, &ni);
    ks_queue_delete(F.q, p);
    assert_int_equal(ks_queue_nominated_count(F.q, ks_intern("n1")), 0);
}

int main(void) {
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_durations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unschedulable_moves_on_registered_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_pattern_matches_assigned_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejector_without_events_moves_on_any_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_completes_into_active, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gated_pod_waits_for_its_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_only_update_does_not_move, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftover_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_while_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_activate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nominator, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
