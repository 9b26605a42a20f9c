/* The scheduling queue: ordering, transitions between activeQ, backoffQ
 * and the unschedulable map on cluster events, backoff durations, flushes,
 * PreEnqueue gating, in-flight events and the nominator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/queue_internal.h"
#include "framework/events.h"
#include "framework/status.h"
#include "metrics/sched_metrics.h"
#include "testutil.h"
#include "util/clock.h"

#include <stdlib.h>
#include <string.h>

/* Gate: PreEnqueue rejects pods labelled gated=yes; interested in updates
 * of unscheduled pods. Picky: a Filter that registers no events. */
static bool gate_all; /* reject every pod */
static ks_status *gate(void *self, const ks_pod *pod) {
    ks_id v;
    if (gate_all) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished");
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

/* Hinted: a Filter registering node adds and label updates, whose
 * QueueingHint says Queue for a node labelled ready=yes, fails for one
 * labelled ready=bad, and skips the others. Counts its calls. */
static int hinted_calls;
static size_t hinted_events(void *self, ks_cluster_event *out, size_t max) {
    out[0] = (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL};
    return 1;
}
static ks_queueing_hint hinted_hint(void *self, ks_cluster_event ev, const ks_pod *pod, const ks_event_object *old_obj,
                                    const ks_event_object *new_obj, char **err) {
    hinted_calls++;
    const ks_node *n = ks_event_object_node(new_obj);
    const char *v = n ? ks_node_label(n, "ready") : NULL;
    if (v && strcmp(v, "bad") == 0) {
        *err = strdup("cannot tell");
        return KS_QUEUE_SKIP;
    }
    return v && strcmp(v, "yes") == 0 ? KS_QUEUE : KS_QUEUE_SKIP;
}
static const ks_plugin_ops p_hinted = {.abi_version = KS_ABI_VERSION, .name = "Hinted", .filter = picky,
                                       .events_to_register = hinted_events, .queueing_hint = hinted_hint};

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
    const ks_plugin_ops *extra[] = {&p_gate, &p_picky, &p_hinted};
    F.reg = tu_registry(extra, 3);
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&tp, &p_gate, 0);
    tu_profile_add_plugin(&tp, &p_picky, 0);
    tu_profile_add_plugin(&tp, &p_hinted, 0);
    hinted_calls = 0;
    gate_all = false;
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
    ks_queued_pod *qp = ks_queue_pop(F.q);
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
        ks_queued_pod *qp = ks_queue_pop(F.q);
        assert_string_equal(ks_str(qp->pod->name), want[i]);
        assert_int_equal(qp->attempts, 1);
        assert_int_equal(ks_queued_pod_initial_attempt_ns(qp), 1000 * KS_NS_PER_SEC);
        ks_queue_done(F.q, qp->pod->key);
        ks_queued_pod_free(qp);
    }
    assert_null(ks_queue_pop(F.q));
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
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_PVC, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* A new node may help: backoffQ (still backing off). */
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
    /* With activeQ empty it is popped from backoffQ at once. */
    ks_queued_pod *qp = ks_queue_pop(F.q);
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
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_ASSIGNED_POD, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_ASSIGNED_POD, KS_ACT_DELETE}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
}

static void test_rejector_without_events_moves_on_any_event(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Picky");
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_PVC, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(p), KS_Q_BACKOFF);
}

static void test_backoff_completes_into_active(void **state) {
    ks_pod *p = add("p", 0);
    ks_pod *other = add("other", 0);
    ks_queued_pod *qp = ks_queue_pop(F.q); /* p */
    ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "Picky"));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
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
    assert_null(ks_queue_pop(F.q));
    ks_clock_sim_set(F.clock, ks_queue_next_backoff_expiry(F.q));
    ks_queue_flush_backoff_completed(F.q);
    assert_int_equal(where(p), KS_Q_ACTIVE);
    ks_queued_pod *qp = ks_queue_pop(F.q);
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
    assert_null(ks_queue_pop(F.q));
    /* Other events do not move it. */
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* The gate is lifted by an update. */
    ks_pod *p2 = tu_pod("default", "g", 100, 0, 0);
    ks_queue_update(F.q, p, p2);
    assert_int_equal(where(p2), KS_Q_ACTIVE);
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.gated, 0);
    ks_pod_unref(p2);
}

/* A preemptor held back by PreEnqueue while its victims go, then let in,
 * is retried at once rather than after the backoff of the attempt that
 * preempted (docs/differences.md). */
static void test_pod_let_in_by_pre_enqueue_skips_its_backoff(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Picky");
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    gate_all = true;
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE}, KS_KIND_POD, NULL, NULL, NULL,
                      NULL);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    ks_queue_stats st;
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.gated, 1);
    gate_all = false;
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE}, KS_KIND_POD, NULL, NULL, NULL,
                      NULL);
    assert_int_equal(where(p), KS_Q_ACTIVE);
}

static void test_status_only_update_does_not_move(void **state) {
    /* A status-only change is a generic UnschedulablePod Update, which
     * TestFit (Node, Pod Delete) did not register. */
    ks_pod *p = add("p", 0);
    fail_with("TestFit");
    ks_pod *p2 = ks_pod_clone(p);
    ks_queue_update(F.q, p, p2);
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
    ks_queued_pod *qp = ks_queue_pop(F.q);
    ks_queue_stats st;
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.in_flight, 1);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
    ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "TestFit"));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    /* The node that arrived during the attempt may help: not parked. */
    assert_int_equal(where(p), KS_Q_BACKOFF);
    ks_queue_stats_get(F.q, &st);
    assert_int_equal(st.in_flight, 0);

    /* An uninteresting event during the attempt: parked. */
    ks_pod *q2 = add("q2", 0);
    ks_queued_pod *a = ks_queue_pop(F.q);
    assert_ptr_equal(a->pod, q2);
    ks_queue_move_all(F.q, (ks_cluster_event){KS_EV_ASSIGNED_POD, KS_ACT_ADD}, KS_KIND_POD, NULL, NULL, NULL, NULL);
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
    ks_queued_pod *qp = ks_queue_pop(F.q);
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

static void node_event(ks_cluster_event ev, ks_node *old_n, ks_node *new_n) {
    ks_queue_move_all(F.q, ev, KS_KIND_NODE, old_n, new_n, NULL, NULL);
}

static void test_hint_decides(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Hinted");
    ks_node *plain = tu_node("n1", 1000, 0, NULL);
    ks_node *ready = tu_node("n1", 1000, 0, "ready", "yes", NULL);
    ks_node *tainted = tu_node("n1", 1000, 0, "ready", "yes", NULL);
    /* Registered, but the hint says QueueSkip. */
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, NULL, plain);
    assert_int_equal(hinted_calls, 1);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* Not registered (a node delete): the hint is not asked. */
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_DELETE}, ready, NULL);
    assert_int_equal(hinted_calls, 1);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* A generic update is wider than the label updates registered: no
     * match (upstream's MatchClusterEvents). */
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE}, ready, plain);
    assert_int_equal(hinted_calls, 1);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* The label update the hint likes: requeued (counted under upstream's
     * event label), and the reason kept. */
    ks_metric *in_backoff = ks_metric_get(ks_sm()->queue_incoming_pods, "backoff", "NodeUpdateNodeLabel");
    uint64_t before = ks_counter_value(in_backoff);
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_LABEL}, plain, ready);
    assert_int_equal(ks_counter_value(in_backoff) - before, 1);
    assert_int_equal(hinted_calls, 2);
    ks_queued_pod *snap = NULL;
    assert_int_not_equal(ks_queue_where(F.q, p->key, &snap), KS_Q_UNSCHEDULABLE);
    assert_non_null(snap);
    assert_string_equal(ks_queued_pod_requeue_event(snap), "NodeUpdateNodeLabel");
    assert_string_equal(ks_queued_pod_requeue_plugin(snap), "Hinted");
    ks_queued_pod_free(snap);
    ks_node_unref(plain);
    ks_node_unref(ready);
    ks_node_unref(tainted);
}

/* upstream buildQueueingHintMap: a plugin registering node adds but not
 * taint updates (Hinted) is given taint updates with the default hint, so
 * a taint change requeues its pods without asking its hint (found by the
 * event replay differential). */
static void test_node_add_registration_adds_taint_updates(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Hinted");
    ks_node *plain = tu_node("n1", 1000, 0, NULL);
    ks_node *tainted = tu_node("n1", 1000, 0, NULL);
    const ks_plugin_inst *pl = &F.fw->plugins[ks_framework_plugin_index(F.fw, "Hinted")];
    assert_true(pl->taint_added);
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_TAINT}, plain, tainted);
    assert_int_equal(hinted_calls, 0);
    assert_int_not_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* a plugin that registered taint updates itself gets nothing added */
    const ks_plugin_inst *gate_pl = &F.fw->plugins[ks_framework_plugin_index(F.fw, "Gate")];
    assert_false(gate_pl->taint_added);
    ks_node_unref(plain);
    ks_node_unref(tainted);
}

static uint64_t hint_count(const char *plugin, const char *event, const char *hint) {
    uint64_t n = 0;
    double sum = 0;
    ks_histogram_totals(ks_metric_get(ks_sm()->queueing_hint_execution_duration, plugin, event, hint), &n, &sum);
    return n;
}

static void test_hint_error_queues(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Hinted");
    ks_node *bad = tu_node("n1", 1000, 0, "ready", "bad", NULL);
    uint64_t errors = hint_count("Hinted", "NodeAdd", "Error");
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, NULL, bad);
    assert_int_not_equal(where(p), KS_Q_UNSCHEDULABLE);
    assert_int_equal(hint_count("Hinted", "NodeAdd", "Error") - errors, 1);
    ks_node_unref(bad);
}

/* scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}:
 * one observation per hint asked, under upstream's labels; a plugin
 * without a hint of its own counts as Queue. */
static void test_hint_duration_metric(void **state) {
    ks_pod *p = add("p", 0);
    fail_with("Hinted");
    ks_node *plain = tu_node("n1", 1000, 0, NULL);
    ks_node *ready = tu_node("n1", 1000, 0, "ready", "yes", NULL);
    uint64_t skip = hint_count("Hinted", "NodeAdd", "QueueSkip");
    uint64_t queue = hint_count("Hinted", "NodeUpdateNodeLabel", "Queue");
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, NULL, plain);
    assert_int_equal(hint_count("Hinted", "NodeAdd", "QueueSkip") - skip, 1);
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_LABEL}, plain, ready);
    assert_int_equal(hint_count("Hinted", "NodeUpdateNodeLabel", "Queue") - queue, 1);
    assert_int_not_equal(where(p), KS_Q_UNSCHEDULABLE);
    /* the taint update Hinted was given has the default hint: Queue */
    ks_pod *p2 = add("p2", 0);
    (void)p2;
    fail_with("Hinted");
    uint64_t taint = hint_count("Hinted", "NodeUpdateNodeTaint", "Queue");
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_TAINT}, plain, plain);
    assert_int_equal(hint_count("Hinted", "NodeUpdateNodeTaint", "Queue") - taint, 1);
    ks_node_unref(plain);
    ks_node_unref(ready);
}

static void test_hint_sees_in_flight_objects(void **state) {
    /* An event during the attempt is kept with its objects: the hint
     * looks at them when the pod comes back rejected. */
    ks_pod *p = add("p", 0);
    ks_queued_pod *qp = ks_queue_pop(F.q);
    ks_node *plain = tu_node("n1", 1000, 0, NULL);
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, NULL, plain);
    ks_node_unref(plain); /* the queue holds its own reference */
    ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "Hinted"));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    assert_int_equal(hinted_calls, 1);
    assert_int_equal(where(p), KS_Q_UNSCHEDULABLE);

    ks_pod *p2 = add("p2", 0);
    qp = ks_queue_pop(F.q);
    assert_ptr_equal(qp->pod, p2);
    ks_node *ready = tu_node("n2", 1000, 0, "ready", "yes", NULL);
    node_event((ks_cluster_event){KS_EV_NODE, KS_ACT_ADD}, NULL, ready);
    ks_node_unref(ready);
    ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)ks_framework_plugin_index(F.fw, "Hinted"));
    assert_null(ks_queue_add_unschedulable(F.q, qp));
    assert_int_equal(where(p2), KS_Q_BACKOFF);
}

static void test_pod_update_events(void **state) {
    /* The finer update kinds, as upstream's PodSchedulingPropertiesChange. */
    ks_pod *a = tu_pod("default", "a", 500, 0, 0);
    ks_pod *b = tu_pod("default", "a", 200, 0, 0);
    tu_pod_labels(b, "app", "x", NULL);
    ks_cluster_event ev[5];
    size_t n = ks_pod_change_events(a, b, ev);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].resource, KS_EV_UNSCHEDULED_POD);
    assert_int_equal(ev[0].actions, KS_ACT_UPDATE_POD_LABEL);
    assert_int_equal(ev[1].actions, KS_ACT_UPDATE_POD_SCALE_DOWN);
    char buf[96];
    assert_string_equal(ks_event_label(ev[1], buf, sizeof(buf)), "UnschedulablePodUpdatePodScaleDown");
    /* A scale up or a status change: one generic update. */
    ks_pod *b2 = ks_pod_clone(b);
    n = ks_pod_change_events(b, b2, ev);
    ks_pod_unref(b2);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].actions, KS_ACT_UPDATE);
    ks_pod *c = tu_pod_on("default", "a", 500, 0, "n1");
    tu_pod_labels(c, "app", "x", NULL);
    n = ks_pod_change_events(b, c, ev);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].resource, KS_EV_ASSIGNED_POD);
    assert_int_equal(ev[0].actions, KS_ACT_UPDATE);
    ks_pod_unref(a);
    ks_pod_unref(b);
    ks_pod_unref(c);
}

static void test_node_update_events(void **state) {
    ks_node *a = tu_node("n", 1000, 0, "zone", "a", NULL);
    ks_node *b = tu_node("n", 2000, 0, "zone", "b", NULL);
    ks_cluster_event ev[5];
    size_t n = ks_node_change_events(a, b, ev);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].actions, KS_ACT_UPDATE_NODE_ALLOCATABLE);
    assert_int_equal(ev[1].actions, KS_ACT_UPDATE_NODE_LABEL);
    char buf[96];
    assert_string_equal(ks_event_label(ev[1], buf, sizeof(buf)), "NodeUpdateNodeLabel");
    assert_int_equal(ks_node_change_events(a, a, ev), 0);
    ks_node_unref(a);
    ks_node_unref(b);
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
        cmocka_unit_test_setup_teardown(test_pod_let_in_by_pre_enqueue_skips_its_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_only_update_does_not_move, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftover_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_while_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_activate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nominator, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hint_decides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_add_registration_adds_taint_updates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hint_error_queues, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hint_duration_metric, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hint_sees_in_flight_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_update_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_update_events, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
