/* The API dispatcher: merging and ordering of calls per pod, skipping of
 * no-op patches, synchronous binding, and the worker pool (calls for
 * different pods at once, never two for one pod, closing with calls in
 * flight). Calls land on the in-memory backend, or on a backend whose
 * calls block until the test lets them go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "framework/status.h"
#include "backend/api_dispatcher.h"
#include "sim/memory_client.h"
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fx {
    ks_cluster *c;
    ks_memory_client *mb;
    ks_api_dispatcher *d;
    ks_pod *pod;
} fx;
static fx F;

static int setup_mode(bool threaded) {
    memset(&F, 0, sizeof(F));
    F.c = ks_cluster_new();
    KS_VEC_PUSH(F.c->nodes, tu_node("n1", 1000, 1 << 30, NULL));
    F.pod = tu_pod("default", "p", 100, 0, 0);
    KS_VEC_PUSH(F.c->pods, ks_pod_ref(F.pod));
    F.mb = ks_memory_client_new(F.c);
    F.d = ks_api_dispatcher_new(ks_memory_client_iface(F.mb), NULL, threaded ? 4 : 0);
    return 0;
}
static int setup(void **state) { return setup_mode(false); }
static int setup_threaded(void **state) { return setup_mode(true); }

static int teardown(void **state) {
    ks_api_dispatcher_free(F.d);
    ks_memory_client_free(F.mb);
    ks_cluster_free(F.c);
    ks_pod_unref(F.pod);
    return 0;
}

static ks_status_patch cond(const char *reason, const char *msg) {
    return (ks_status_patch){.has_condition = true, .cond_type = "PodScheduled", .cond_status = "False",
                             .cond_reason = reason, .cond_message = msg};
}

static const ks_pod_condition *scheduled_cond(const ks_pod *p) {
    for (uint32_t i = 0; i < p->nconditions; i++)
        if (p->conditions[i].type == ks_intern("PodScheduled")) return &p->conditions[i];
    return NULL;
}

static int nskips;
static void count_skip(void *arg, const ks_status *r) {
    if (ks_status_code(r) == KS_SKIP) nskips++;
}

static void test_patches_merge(void **state) {
    ks_status_patch a = cond("Unschedulable", "first");
    a.set_nominated = true;
    a.nominated = "n1";
    ks_status_patch b = cond("Unschedulable", "second");
    nskips = 0;
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, count_skip, NULL));
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &b, count_skip, NULL));
    assert_int_equal(ks_api_dispatcher_pending(F.d), 1);
    assert_int_equal(nskips, 1); /* the first was overwritten */
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    ks_memory_client_stats st;
    ks_memory_client_stats_get(F.mb, &st);
    assert_int_equal(st.status_patches, 1);
    const ks_pod *now = ks_memory_client_pod(F.mb, F.pod->key);
    assert_string_equal(scheduled_cond(now)->message, "second");
    assert_int_equal(now->nominated_node, ks_intern("n1"));
}

static void test_relevance(void **state) {
    /* Binding replaces a pending patch; a patch behind a pending binding
     * is skipped. */
    ks_status_patch a = cond("Unschedulable", "x");
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, NULL, NULL));
    assert_null(ks_api_dispatcher_bind(F.d, F.pod, "n1", NULL, NULL));
    ks_status *s = ks_api_dispatcher_patch_status(F.d, F.pod, &a, NULL, NULL);
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_BINDING), 1);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_STATUS_PATCH), 0);
    assert_int_equal(ks_memory_client_pod(F.mb, F.pod->key)->node_name, ks_intern("n1"));
}

static void test_delete_runs_the_patch_it_displaces(void **state) {
    /* Preemption marks a victim (DisruptionTarget) and deletes it: both
     * reach the backend, in that order. */
    ks_status_patch a = {.has_condition = true, .cond_type = "DisruptionTarget", .cond_status = "True",
                         .cond_reason = "PreemptionByScheduler", .cond_message = "preempted"};
    nskips = 0;
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, count_skip, NULL));
    assert_null(ks_api_dispatcher_delete(F.d, F.pod, count_skip, NULL));
    assert_int_equal(ks_api_dispatcher_pending(F.d), 1);
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    assert_int_equal(nskips, 0);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_STATUS_PATCH), 1);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_DELETE), 1);
    ks_memory_client_stats st;
    ks_memory_client_stats_get(F.mb, &st);
    assert_int_equal(st.status_patches, 1);
    assert_int_equal(st.deletes, 1);
}

static char order[64];
static void record_order(void *arg, const ks_status *r) {
    (void)r;
    strncat(order, arg, sizeof(order) - strlen(order) - 1);
}

static ks_pod *add_pod(const char *name) {
    ks_pod *p = tu_pod("default", name, 100, 0, 0);
    KS_VEC_PUSH(F.c->pods, ks_pod_ref(p));
    return p;
}

static void test_deletions_go_first(void **state) {
    /* Evictions do not wait behind the queued patches of other pods (as
     * upstream makes them outside its dispatcher), a deletion that
     * displaces its pod's queued patch takes that patch along, first, and
     * a preemption's last victim goes before the deletions queued. */
    ks_memory_client_free(F.mb);
    ks_pod *b = add_pod("b"), *c = add_pod("c"), *v = add_pod("v"), *w = add_pod("w");
    F.mb = ks_memory_client_new(F.c);
    ks_api_dispatcher_free(F.d);
    F.d = ks_api_dispatcher_new(ks_memory_client_iface(F.mb), NULL, 0);
    ks_status_patch m = cond("Unschedulable", "m");
    ks_status_patch dt = {.has_condition = true, .cond_type = "DisruptionTarget", .cond_status = "True",
                          .cond_reason = "PreemptionByScheduler", .cond_message = "preempted"};
    order[0] = 0;
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &m, record_order, "A"));
    assert_null(ks_api_dispatcher_patch_status(F.d, b, &m, record_order, "B"));
    assert_null(ks_api_dispatcher_delete(F.d, c, record_order, "c"));
    assert_null(ks_api_dispatcher_patch_status(F.d, v, &dt, record_order, "V"));
    assert_null(ks_api_dispatcher_delete(F.d, v, record_order, "v"));
    assert_null(ks_api_dispatcher_delete_first(F.d, w, record_order, "w"));
    assert_int_equal(ks_api_dispatcher_drain(F.d), 5);
    assert_string_equal(order, "wcVvAB");
    ks_memory_client_stats st;
    ks_memory_client_stats_get(F.mb, &st);
    assert_int_equal(st.deletes, 3);
    assert_int_equal(st.status_patches, 3);
    ks_pod_unref(b);
    ks_pod_unref(c);
    ks_pod_unref(v);
    ks_pod_unref(w);
}

static void test_bindings_before_patches_and_events(void **state) {
    /* A binding does not wait behind the status patches and events of
     * other pods (events are outside upstream's dispatcher), nor behind
     * deletions (upstream binds from the binding cycle's goroutine):
     * the first preemptor's binding waited for every later preemptor's
     * evictions. */
    ks_memory_client_free(F.mb);
    ks_pod *b = add_pod("b"), *c = add_pod("c"), *e = add_pod("e");
    F.mb = ks_memory_client_new(F.c);
    ks_api_dispatcher_free(F.d);
    F.d = ks_api_dispatcher_new(ks_memory_client_iface(F.mb), NULL, 0);
    ks_status_patch m = cond("Unschedulable", "m");
    ks_status_patch nom = {.set_nominated = true, .nominated = "n1"};
    order[0] = 0;
    /* e's nomination patch, queued first, is replaced by its binding: the
     * binding goes with the bindings, not in the patch's place. */
    assert_null(ks_api_dispatcher_patch_status(F.d, e, &nom, record_order, "x"));
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &m, record_order, "A"));
    ks_api_dispatcher_event(F.d, F.pod, NULL, "Warning", "FailedScheduling", "Scheduling", "no fit");
    assert_null(ks_api_dispatcher_delete(F.d, c, record_order, "c"));
    assert_null(ks_api_dispatcher_bind(F.d, b, "n1", record_order, "B"));
    assert_null(ks_api_dispatcher_bind(F.d, e, "n1", record_order, "E"));
    assert_int_equal(ks_api_dispatcher_drain(F.d), 5);
    /* x: e's patch, overwritten when its binding came */
    assert_string_equal(order, "xBEcA");
    ks_pod_unref(b);
    ks_pod_unref(c);
    ks_pod_unref(e);
}

static void test_noop_patch_skipped(void **state) {
    ks_status_patch a = cond("Unschedulable", "same");
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, NULL, NULL));
    ks_api_dispatcher_drain(F.d);
    /* Sent for the updated pod, the same condition changes nothing. */
    const ks_pod *now = ks_memory_client_pod(F.mb, F.pod->key);
    ks_status *s = ks_api_dispatcher_patch_status(F.d, now, &a, NULL, NULL);
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    /* Clearing a nomination the pod does not have: nothing either. */
    ks_status_patch c = {.set_nominated = true, .nominated = ""};
    s = ks_api_dispatcher_patch_status(F.d, now, &c, NULL, NULL);
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    assert_int_equal(ks_api_dispatcher_pending(F.d), 0);
}

static void test_events_in_order_never_merged(void **state) {
    ks_api_dispatcher_event(F.d, F.pod, NULL, "Warning", "FailedScheduling", "Scheduling", "one");
    ks_api_dispatcher_event(F.d, F.pod, NULL, "Warning", "FailedScheduling", "Scheduling", "two");
    ks_api_dispatcher_event(F.d, F.pod, NULL, "Normal", "Scheduled", "Binding", "three");
    assert_int_equal(ks_api_dispatcher_drain(F.d), 3);
    assert_int_equal(ks_memory_client_nevents(F.mb), 3);
    assert_string_equal(ks_memory_client_event(F.mb, 0)->note, "one");
    assert_string_equal(ks_memory_client_event(F.mb, 2)->reason, "Scheduled");
    assert_string_equal(ks_memory_client_event(F.mb, 2)->pod_name, "default/p");
}

/* A caller that answers a call's outcome with a new call for the same pod
 * (a failed binding patches the pod's status, and the pod is bound again
 * later): both run. The pod was still counted in flight while its caller
 * heard, so the patch waited for a finalize that had already happened, and
 * the next binding behind it forever. */
static int nanswered;
static void patch_on_failure(void *arg, const ks_status *r) {
    nanswered++;
    if (ks_status_code(r) != KS_ERROR) return;
    ks_status_patch p = cond("SchedulerError", "binding failed");
    ks_status_free(ks_api_dispatcher_patch_status(F.d, F.pod, &p, count_skip, NULL));
}

static void test_call_from_done_callback(void **state) {
    ks_memory_client_fail_binds(F.mb, 1);
    nanswered = nskips = 0;
    assert_null(ks_api_dispatcher_bind(F.d, F.pod, "n1", patch_on_failure, NULL));
    assert_int_equal(ks_api_dispatcher_drain(F.d), 2);
    assert_int_equal(nanswered, 1);
    assert_int_equal(nskips, 0);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_STATUS_PATCH), 1);
    assert_int_equal(ks_api_dispatcher_pending(F.d), 0);
    const ks_pod_condition *pc = scheduled_cond(ks_memory_client_pod(F.mb, F.pod->key));
    assert_non_null(pc);
    assert_string_equal(pc->reason, "SchedulerError");
    /* the next binding of the pod runs */
    assert_null(ks_api_dispatcher_bind(F.d, F.pod, "n1", patch_on_failure, NULL));
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    assert_int_equal(nanswered, 2);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_BINDING), 2);
    assert_int_equal(ks_api_dispatcher_pending(F.d), 0);
}

static void test_bind_drain_and_errors(void **state) {
    ks_memory_client_fail_binds(F.mb, 1);
    ks_status *s = ks_api_dispatcher_bind_drain(F.d, F.pod, "n1");
    assert_int_equal(ks_status_code(s), KS_ERROR);
    ks_status_free(s);
    assert_null(ks_api_dispatcher_bind_drain(F.d, F.pod, "n1"));
    s = ks_api_dispatcher_bind_drain(F.d, F.pod, "n1");
    char *m = ks_status_message(s);
    assert_string_equal(m, "pod p is already assigned to node \"n1\"");
    free(m);
    ks_status_free(s);
}

static void test_threaded(void **state) {
    for (int i = 0; i < 50; i++) {
        char note[32];
        snprintf(note, sizeof(note), "e%d", i);
        ks_api_dispatcher_event(F.d, F.pod, NULL, "Normal", "X", "Y", note);
    }
    assert_null(ks_api_dispatcher_bind_wait(F.d, F.pod, "n1"));
    ks_api_dispatcher_flush(F.d);
    /* Events run side by side: all of them, in some order. */
    assert_int_equal(ks_memory_client_nevents(F.mb), 50);
    bool seen[50] = {false};
    for (int i = 0; i < 50; i++) {
        int k = atoi(ks_memory_client_event(F.mb, (size_t)i)->note + 1);
        assert_true(k >= 0 && k < 50 && !seen[k]);
        seen[k] = true;
    }
}

/* ---- the worker pool, on a backend whose calls block ------------------------ */

#define GATE_PODS 8

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;             /* calls return at once */
    int inside;            /* calls in the backend now */
    int max_inside;
    int per_pod[GATE_PODS];/* calls in the backend now, per pod */
    bool overlap;          /* two calls for one pod at once */
    char log[64][32];      /* calls in the order they entered */
    int nlog;
} gate;

static gate G = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static ks_pod *gate_pods[GATE_PODS];

static int pod_index(const ks_pod *p) {
    for (int i = 0; i < GATE_PODS; i++)
        if (gate_pods[i]->key == p->key) return i;
    return -1;
}

static ks_status *gate_call(const ks_pod *pod, const char *what) {
    int i = pod_index(pod);
    pthread_mutex_lock(&G.mu);
    if (G.nlog < 64) snprintf(G.log[G.nlog++], sizeof(G.log[0]), "%s %s", what, ks_str(pod->name));
    G.inside++;
    if (G.inside > G.max_inside) G.max_inside = G.inside;
    if (i >= 0 && ++G.per_pod[i] > 1) G.overlap = true;
    pthread_cond_broadcast(&G.cv);
    while (!G.open) pthread_cond_wait(&G.cv, &G.mu);
    G.inside--;
    if (i >= 0) G.per_pod[i]--;
    pthread_mutex_unlock(&G.mu);
    return NULL;
}

static ks_status *gate_execute(void *ctx, const ks_api_call *c) {
    return gate_call(c->pod, c->type == KS_CALL_BINDING ? "bind" : c->type == KS_CALL_DELETE ? "delete" : "patch");
}
static const ks_cluster_client gate_backend = {
    .execute = gate_execute,
    .executes = KS_CALL_BIT(KS_CALL_BINDING) | KS_CALL_BIT(KS_CALL_STATUS_PATCH) | KS_CALL_BIT(KS_CALL_DELETE)};

static void gate_set(bool open) {
    pthread_mutex_lock(&G.mu);
    G.open = open;
    pthread_cond_broadcast(&G.cv);
    pthread_mutex_unlock(&G.mu);
}

/* Wait (bounded, 20 s) until `inside` calls are in the backend. */
static bool gate_wait_inside(int inside) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    pthread_mutex_lock(&G.mu);
    int rc = 0;
    while (G.inside < inside && rc == 0) rc = pthread_cond_timedwait(&G.cv, &G.mu, &ts);
    bool ok = G.inside >= inside;
    pthread_mutex_unlock(&G.mu);
    return ok;
}

static int setup_gate(void **state) {
    pthread_mutex_lock(&G.mu);
    G.open = false;
    G.inside = G.max_inside = G.nlog = 0;
    G.overlap = false;
    memset(G.per_pod, 0, sizeof(G.per_pod));
    pthread_mutex_unlock(&G.mu);
    for (int i = 0; i < GATE_PODS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "g%d", i);
        gate_pods[i] = tu_pod("default", name, 100, 0, 0);
    }
    return 0;
}

static int teardown_gate(void **state) {
    /* A failed test may leave calls blocked: let them go (the gate's lock
     * is not destroyed, they may still use it). */
    gate_set(true);
    for (int i = 0; i < GATE_PODS; i++) ks_pod_unref(gate_pods[i]);
    return 0;
}

typedef struct result_box {
    pthread_mutex_t mu;
    int n;
    ks_code codes[16];
} result_box;

static void record(void *arg, const ks_status *r) {
    result_box *b = arg;
    pthread_mutex_lock(&b->mu);
    if (b->n < 16) b->codes[b->n] = ks_status_code(r);
    b->n++;
    pthread_mutex_unlock(&b->mu);
}

static void test_workers_run_calls_at_once(void **state) {
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 4);
    for (int i = 0; i < GATE_PODS; i++) assert_null(ks_api_dispatcher_bind(d, gate_pods[i], "n1", NULL, NULL));
    /* Four workers: four bindings in the backend at once, no more. */
    assert_true(gate_wait_inside(4));
    gate_set(true);
    ks_api_dispatcher_flush(d);
    assert_int_equal(G.max_inside, 4);
    assert_int_equal(ks_api_dispatcher_max_in_flight(d), 4);
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_BINDING), GATE_PODS);
    ks_api_dispatcher_free(d);
}

/* Threads start as calls wait for one: none before the first call, one
 * for calls made one after the other, as many as calls in the backend at
 * once up to the cap; deletions start eviction workers of their own. */
static void test_workers_start_on_demand(void **state) {
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 4);
    assert_int_equal(ks_api_dispatcher_threads(d), 0);
    gate_set(true);
    for (int i = 0; i < 5; i++) {
        assert_null(ks_api_dispatcher_bind(d, gate_pods[i], "n1", NULL, NULL));
        ks_api_dispatcher_flush(d);
    }
    assert_int_equal(ks_api_dispatcher_threads(d), 1);
    gate_set(false);
    ks_status_patch p = cond("Unschedulable", "x");
    for (int i = 0; i < 3; i++) assert_null(ks_api_dispatcher_patch_status(d, gate_pods[i], &p, NULL, NULL));
    assert_true(gate_wait_inside(3));
    assert_int_equal(ks_api_dispatcher_threads(d), 3);
    for (int i = 3; i < GATE_PODS; i++) assert_null(ks_api_dispatcher_bind(d, gate_pods[i], "n1", NULL, NULL));
    assert_true(gate_wait_inside(4));
    /* the cap: four regular workers, the other bindings wait */
    assert_int_equal(ks_api_dispatcher_threads(d), 4);
    assert_null(ks_api_dispatcher_delete(d, gate_pods[7], NULL, NULL));
    assert_true(gate_wait_inside(5));
    assert_int_equal(ks_api_dispatcher_threads(d), 5);
    gate_set(true);
    ks_api_dispatcher_flush(d);
    assert_int_equal(G.max_inside, 5);
    /* the deletion displaced g7's queued binding */
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_BINDING), 5 + GATE_PODS - 3 - 1);
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_DELETE), 1);
    ks_api_dispatcher_free(d);
}

static void test_deletions_have_workers_of_their_own(void **state) {
    /* Preemption's deletions run beside the other calls, as upstream
     * makes them outside its dispatcher: two workers, four deletions in
     * the backend at once. */
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 2);
    for (int i = 0; i < 4; i++) assert_null(ks_api_dispatcher_delete(d, gate_pods[i], NULL, NULL));
    assert_true(gate_wait_inside(4));
    assert_int_equal(ks_api_dispatcher_max_in_flight(d), 4);
    gate_set(true);
    ks_api_dispatcher_flush(d);
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_DELETE), 4);
    ks_api_dispatcher_free(d);
}

static void test_one_call_per_pod_in_flight(void **state) {
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 4);
    result_box b = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ks_status_patch a = cond("Unschedulable", "x");
    /* g0's patch is in flight; a second patch queues behind it, and a
     * binding then replaces the queued patch. It runs after the first
     * patch ended, never beside it. */
    assert_null(ks_api_dispatcher_patch_status(d, gate_pods[0], &a, record, &b));
    assert_true(gate_wait_inside(1));
    ks_status_patch a2 = cond("Unschedulable", "y");
    assert_null(ks_api_dispatcher_patch_status(d, gate_pods[0], &a2, record, &b));
    assert_null(ks_api_dispatcher_bind(d, gate_pods[0], "n1", record, &b));
    /* Other pods' calls go past it. */
    assert_null(ks_api_dispatcher_bind(d, gate_pods[1], "n1", NULL, NULL));
    assert_true(gate_wait_inside(2));
    assert_int_equal(ks_api_dispatcher_pending(d), 3); /* two in flight, one queued */
    gate_set(true);
    ks_api_dispatcher_flush(d);
    assert_false(G.overlap);
    assert_int_equal(b.n, 3);
    assert_int_equal(b.codes[0], KS_SKIP);    /* the queued patch, overwritten */
    assert_int_equal(b.codes[1], KS_SUCCESS); /* the first patch */
    assert_int_equal(b.codes[2], KS_SUCCESS); /* the binding */
    assert_string_equal(G.log[0], "patch g0");
    assert_string_equal(G.log[1], "bind g1");
    assert_string_equal(G.log[2], "bind g0");
    assert_int_equal(G.nlog, 3);
    ks_api_dispatcher_free(d);
}

static void test_deletion_waits_for_its_pod(void **state) {
    /* A deletion goes to the front of the queue, but not past a call for
     * its own pod in flight (with a call of the pod queued behind that). */
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 4);
    ks_status_patch a = cond("Unschedulable", "x");
    assert_null(ks_api_dispatcher_patch_status(d, gate_pods[0], &a, NULL, NULL));
    assert_true(gate_wait_inside(1));
    ks_status_patch a2 = cond("Unschedulable", "y");
    assert_null(ks_api_dispatcher_patch_status(d, gate_pods[0], &a2, NULL, NULL));
    assert_null(ks_api_dispatcher_delete(d, gate_pods[0], NULL, NULL));
    assert_null(ks_api_dispatcher_delete(d, gate_pods[1], NULL, NULL));
    assert_true(gate_wait_inside(2));
    gate_set(true);
    ks_api_dispatcher_flush(d);
    assert_false(G.overlap);
    assert_int_equal(G.nlog, 4);
    assert_string_equal(G.log[0], "patch g0");
    assert_string_equal(G.log[1], "delete g1");
    assert_string_equal(G.log[2], "patch g0");
    assert_string_equal(G.log[3], "delete g0");
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_DELETE), 2);
    ks_api_dispatcher_free(d);
}

static void test_many_calls_same_pods(void **state) {
    /* A stream of calls for a few pods on eight workers: calls for one pod
     * never overlap. */
    gate_set(true);
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 8);
    ks_status_patch a = cond("Unschedulable", "x");
    for (int r = 0; r < 2000; r++) {
        const ks_pod *p = gate_pods[r % 3];
        if (r % 7 == 0) ks_status_free(ks_api_dispatcher_delete(d, p, NULL, NULL));
        else if (r % 5 == 0) ks_status_free(ks_api_dispatcher_bind(d, p, "n1", NULL, NULL));
        else ks_status_free(ks_api_dispatcher_patch_status(d, p, &a, NULL, NULL));
    }
    ks_api_dispatcher_flush(d);
    assert_false(G.overlap);
    assert_int_equal(ks_api_dispatcher_pending(d), 0);
    ks_api_dispatcher_free(d);
}

static int count_threads(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.') n++;
    closedir(dir);
    return n;
}

static void test_close_with_calls_in_flight(void **state) {
    int before = count_threads();
    ks_api_dispatcher *d = ks_api_dispatcher_new(&gate_backend, NULL, 2);
    result_box b = {.mu = PTHREAD_MUTEX_INITIALIZER};
    for (int i = 0; i < 4; i++) assert_null(ks_api_dispatcher_bind(d, gate_pods[i], "n1", record, &b));
    assert_true(gate_wait_inside(2));
    /* Two in flight, two queued: the queued ones are dropped, the two in
     * flight given up on after the grace period; all four hear about it. */
    assert_int_equal(ks_api_dispatcher_close(d, 10 * KS_NS_PER_MS), 2);
    assert_int_equal(b.n, 4);
    for (int i = 0; i < 4; i++) assert_int_equal(b.codes[i], KS_ERROR);
    /* Closed: a new call fails at once. */
    ks_status *s = ks_api_dispatcher_bind_wait(d, gate_pods[5], "n1");
    assert_int_equal(ks_status_code(s), KS_ERROR);
    ks_status_free(s);
    /* Freed while the backend still holds two calls: the workers finish
     * the job when the calls return. */
    ks_api_dispatcher_free(d);
    gate_set(true);
    for (int i = 0; i < 20000 && count_threads() > before; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(count_threads(), before);
    assert_int_equal(b.n, 4);
}

/* ---- calls started by their callers (a client with execute_async) ---------- */

/* The client's pending answers: execute_async keeps them until the test,
 * playing the client's I/O thread, answers. */
typedef struct pending_answer {
    int pod;
    void (*done)(void *arg, ks_status *result);
    void *arg;
} pending_answer;

static struct {
    pending_answer v[16];
    int n;
    int events;
} A;

static void async_execute(void *ctx, const ks_api_call *c, void (*done)(void *arg, ks_status *result), void *arg) {
    if (c->type == KS_CALL_EVENT) {
        pthread_mutex_lock(&G.mu);
        A.events++;
        pthread_mutex_unlock(&G.mu);
        done(arg, NULL);
        return;
    }
    int i = pod_index(c->pod);
    pthread_mutex_lock(&G.mu);
    if (G.nlog < 64) snprintf(G.log[G.nlog++], sizeof(G.log[0]), "start %s", ks_str(c->pod->name));
    if (i >= 0 && ++G.per_pod[i] > 1) G.overlap = true;
    A.v[A.n++] = (pending_answer){i, done, arg};
    G.inside++;
    pthread_cond_broadcast(&G.cv);
    pthread_mutex_unlock(&G.mu);
}

/* Answer the oldest pending call, from this thread. */
static void async_answer(ks_status *result) {
    pthread_mutex_lock(&G.mu);
    pending_answer a = A.v[0];
    memmove(A.v, A.v + 1, (size_t)(--A.n) * sizeof(A.v[0]));
    G.inside--;
    if (a.pod >= 0) G.per_pod[a.pod]--;
    pthread_mutex_unlock(&G.mu);
    a.done(a.arg, result);
}

static const ks_cluster_client async_backend = {
    .execute = gate_execute,
    .executes = KS_CALL_BIT(KS_CALL_BINDING) | KS_CALL_BIT(KS_CALL_STATUS_PATCH) | KS_CALL_BIT(KS_CALL_DELETE) |
                KS_CALL_BIT(KS_CALL_EVENT),
    .execute_async = async_execute,
    .starts = KS_CALL_BIT(KS_CALL_BINDING) | KS_CALL_BIT(KS_CALL_EVENT)};

typedef struct binder {
    pthread_t t;
    ks_api_dispatcher *d;
    const ks_pod *pod;
    ks_status *result;
} binder;

static void *binder_main(void *arg) {
    binder *b = arg;
    b->result = ks_api_dispatcher_bind_wait(b->d, b->pod, "n1");
    return NULL;
}

/* Wait (bounded, 20 s) until n calls are queued or in flight. */
static bool wait_pending(ks_api_dispatcher *d, size_t n) {
    for (int i = 0; i < 20000; i++) {
        if (ks_api_dispatcher_pending(d) >= n) return true;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static int setup_async(void **state) {
    setup_gate(state);
    memset(&A, 0, sizeof(A));
    return 0;
}

/* In run mode a binding nothing waits behind goes from the binding
 * cycle's thread to the client: no worker starts; a call for the pod
 * made meanwhile waits for its answer (never two at once for a pod),
 * then runs on a worker. */
static void test_binding_started_by_its_caller(void **state) {
    ks_api_dispatcher *d = ks_api_dispatcher_new(&async_backend, NULL, 4);
    gate_set(true); /* calls made through execute return at once */
    binder b = {.d = d, .pod = gate_pods[0]};
    assert_int_equal(pthread_create(&b.t, NULL, binder_main, &b), 0);
    assert_true(gate_wait_inside(1));
    assert_int_equal(ks_api_dispatcher_threads(d), 0);
    /* (a status patch would be skipped: less relevant than the binding) */
    assert_null(ks_api_dispatcher_delete(d, gate_pods[0], NULL, NULL));
    assert_int_equal(ks_api_dispatcher_pending(d), 2);
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_DELETE), 0);
    async_answer(NULL);
    pthread_join(b.t, NULL);
    assert_null(b.result);
    ks_api_dispatcher_flush(d);
    assert_false(G.overlap);
    assert_int_equal(G.nlog, 2);
    assert_string_equal(G.log[0], "start g0");
    assert_string_equal(G.log[1], "delete g0");
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_BINDING), 1);
    assert_true(ks_api_dispatcher_threads(d) >= 1); /* the deletion's worker */

    /* A binding behind a queued call of its pod goes through the queue. */
    gate_set(false);
    ks_status_patch p = cond("Unschedulable", "x");
    assert_null(ks_api_dispatcher_patch_status(d, gate_pods[1], &p, NULL, NULL));
    assert_true(gate_wait_inside(1));
    binder b2 = {.d = d, .pod = gate_pods[1]};
    assert_int_equal(pthread_create(&b2.t, NULL, binder_main, &b2), 0);
    assert_true(wait_pending(d, 2)); /* the patch in flight, the binding queued */
    gate_set(true);
    pthread_join(b2.t, NULL);
    assert_null(b2.result);
    assert_int_equal(A.n, 0); /* made by a worker, through execute */
    assert_string_equal(G.log[G.nlog - 1], "bind g1");

    /* An error from the client is the binding's result. */
    binder b3 = {.d = d, .pod = gate_pods[2]};
    assert_int_equal(pthread_create(&b3.t, NULL, binder_main, &b3), 0);
    assert_true(gate_wait_inside(1));
    async_answer(ks_status_new(KS_ERROR, "binding g2: 409 conflict"));
    pthread_join(b3.t, NULL);
    assert_int_equal(ks_status_code(b3.result), KS_ERROR);
    char *msg = ks_status_message(b3.result);
    assert_string_equal(msg, "binding g2: 409 conflict");
    free(msg);
    ks_status_free(b3.result);
    ks_api_dispatcher_free(d);
}

/* Closing gives a binding the client holds the grace period, then its
 * waiter hears an error; freed before the client answers, the dispatcher
 * is freed by that answer (ASan: nothing leaks, nothing used after). */
static void test_close_with_a_started_binding(void **state) {
    ks_api_dispatcher *d = ks_api_dispatcher_new(&async_backend, NULL, 2);
    binder b = {.d = d, .pod = gate_pods[3]};
    assert_int_equal(pthread_create(&b.t, NULL, binder_main, &b), 0);
    assert_true(gate_wait_inside(1));
    assert_int_equal(ks_api_dispatcher_close(d, 10 * KS_NS_PER_MS), 1);
    pthread_join(b.t, NULL);
    assert_int_equal(ks_status_code(b.result), KS_ERROR);
    ks_status_free(b.result);
    ks_api_dispatcher_free(d);
    async_answer(NULL);
    assert_int_equal(A.n, 0);
}

/* Events in run mode go to a client that takes them without blocking at
 * once (no copy, no worker); without workers (stepping) they are queued
 * and made in queue order by drain. */
static void test_events_started_by_their_callers(void **state) {
    ks_api_dispatcher *d = ks_api_dispatcher_new(&async_backend, NULL, 4);
    for (int i = 0; i < 3; i++)
        ks_api_dispatcher_event(d, gate_pods[i], NULL, "Normal", "Scheduled", "Binding", "x");
    assert_int_equal(A.events, 3);
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_EVENT), 3);
    assert_int_equal(ks_api_dispatcher_threads(d), 0);
    assert_int_equal(ks_api_dispatcher_pending(d), 0);
    ks_api_dispatcher_free(d);

    gate_set(true);
    d = ks_api_dispatcher_new(&async_backend, NULL, 0);
    ks_api_dispatcher_event(d, gate_pods[0], NULL, "Normal", "Scheduled", "Binding", "x");
    assert_int_equal(ks_api_dispatcher_pending(d), 1);
    assert_int_equal(A.events, 3);
    assert_int_equal(ks_api_dispatcher_drain(d), 1);
    assert_int_equal(ks_api_dispatcher_executed(d, KS_CALL_EVENT), 1);
    ks_api_dispatcher_free(d);
}

int main(void) {
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_patches_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relevance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_runs_the_patch_it_displaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deletions_go_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bindings_before_patches_and_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noop_patch_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_in_order_never_merged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_from_done_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_drain_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threaded, setup_threaded, teardown),
        cmocka_unit_test_setup_teardown(test_workers_run_calls_at_once, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_workers_start_on_demand, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_deletions_have_workers_of_their_own, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_one_call_per_pod_in_flight, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_deletion_waits_for_its_pod, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_many_calls_same_pods, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_close_with_calls_in_flight, setup_gate, teardown_gate),
        cmocka_unit_test_setup_teardown(test_binding_started_by_its_caller, setup_async, teardown_gate),
        cmocka_unit_test_setup_teardown(test_close_with_a_started_binding, setup_async, teardown_gate),
        cmocka_unit_test_setup_teardown(test_events_started_by_their_callers, setup_async, teardown_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
