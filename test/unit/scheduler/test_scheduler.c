/* The scheduler end to end on the in-memory backend and the simulated
 * clock: a few hundred pods, failure handling (one status write per failed
 * attempt, nominatedNodeName set only by the failure handler), Permit
 * waits across the loop, binding failures, node sampling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/dra.h"
#include "backend/api_calls.h"
#include "codec/decode.h"
#include "framework/handle.h"
#include "framework/status.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "testutil.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <dirent.h>

#define GI (1LL << 30)

/* ---- fixture ------------------------------------------------------------- */

typedef struct sim {
    ks_cluster *c;
    ks_memory_client *mb;
    ks_config *cfg;
    ks_registry *reg;
    ks_clock *clock;
    ks_run_mode mode; /* stepping unless a test says threaded */
    ks_scheduler *s;
    /* observer */
    int attempts, bound, bind_failed;
    char first_eval[64][16]; /* first node evaluated per attempt */
    char last_msg[1024];
} sim;

static sim S;

static void on_attempt(void *ctx, const ks_attempt_record *r) {
    sim *s = ctx;
    if (s->attempts < 64 && r->nevaluated)
        snprintf(s->first_eval[s->attempts], sizeof(s->first_eval[0]), "%s", ks_str(r->evaluated[0]->name));
    if (r->message) snprintf(s->last_msg, sizeof(s->last_msg), "%s", r->message);
    s->attempts++;
}
/* On binder threads in the real-clock tests. */
static void on_bound(void *ctx, const ks_pod *pod, const char *node) {
    __atomic_fetch_add(&((sim *)ctx)->bound, 1, __ATOMIC_RELAXED);
}
static void on_bind_failed(void *ctx, const ks_pod *pod, const char *node, const ks_status *st, const char *m) {
    __atomic_fetch_add(&((sim *)ctx)->bind_failed, 1, __ATOMIC_RELAXED);
}
static const ks_observer observer = {.ctx = &S, .on_attempt = on_attempt, .on_bound = on_bound,
                                     .on_bind_failed = on_bind_failed};

static void sim_init(tu_profile *tp, const ks_plugin_ops *const *extra, size_t nextra) {
    memset(&S, 0, sizeof(S));
    S.c = ks_cluster_new();
    S.reg = tu_registry(extra, nextra);
    tu_profile *ps[1] = {tp};
    S.cfg = tu_config(ps, 1);
    S.clock = ks_clock_sim_new(1700000000LL * KS_NS_PER_SEC);
}

static void sim_start(bool deterministic) {
    S.mb = ks_memory_client_new(S.c);
    ks_scheduler_options o = {.config = S.cfg, .registry = S.reg, .backend = ks_memory_client_iface(S.mb),
                              .clock = S.clock, .seed = 42,
                              .ties = deterministic ? KS_TIES_BY_NAME : KS_TIES_RANDOM, .mode = S.mode,
                              .observer = &observer};
    char *err = NULL;
    S.s = ks_scheduler_new(&o, &err);
    if (!S.s) fail_msg("scheduler: %s", err);
    assert_null(ks_scheduler_start(S.s));
}

static void sim_free(void) {
    ks_scheduler_free(S.s);
    ks_memory_client_free(S.mb);
    ks_cluster_free(S.c);
    tu_config_free(S.cfg);
    ks_registry_free(S.reg);
    ks_clock_free(S.clock);
}

static void add_node(const char *name, int64_t cpu, const char *zone) {
    KS_VEC_PUSH(S.c->nodes, tu_node(name, cpu, 64 * GI, "topology.kubernetes.io/zone", zone, NULL));
}

static ks_pod *add_pod(const char *name, int64_t cpu, int32_t prio) {
    ks_pod *p = tu_pod("default", name, cpu, 0, prio);
    KS_VEC_PUSH(S.c->pods, p);
    return p;
}

static const ks_pod *pod_now(const char *name) {
    return ks_memory_client_pod(S.mb, ks_pod_key(ks_intern("default"), ks_intern(name)));
}

static const ks_pod_condition *scheduled_cond(const ks_pod *p) {
    for (uint32_t i = 0; i < p->nconditions; i++)
        if (p->conditions[i].type == ks_intern("PodScheduled")) return &p->conditions[i];
    return NULL;
}

/* ---- hundreds of pods -------------------------------------------------- */

static void scenario(bool deterministic, char placement[][16]) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    sim_init(&tp, NULL, 0);
    char name[32];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "node-%02d", i);
        add_node(name, 4000, i % 2 ? "b" : "a");
    }
    for (int i = 0; i < 340; i++) {
        snprintf(name, sizeof(name), "pod-%03d", i);
        add_pod(name, 250, i % 3);
    }
    sim_start(deterministic);
    size_t attempts = ks_scheduler_run_until_idle(S.s);
    assert_true(attempts >= 340);

    /* 20 nodes x 16 pods of 250m fit: 320 bound, 20 left unschedulable. */
    int bound = 0;
    int64_t used[20] = {0};
    for (uint32_t i = 0; i < S.c->pods.n; i++) {
        const ks_pod *p = S.c->pods.v[i];
        if (placement) snprintf(placement[i], 16, "%s", p->node_name ? ks_str(p->node_name) : "-");
        if (!p->node_name) {
            const ks_pod_condition *c = scheduled_cond(p);
            assert_non_null(c);
            assert_string_equal(c->reason, "Unschedulable");
            assert_string_equal(c->message, "0/20 nodes are available: 20 Insufficient cpu.");
            /* Priority 0 pods lose: they are tried last. */
            continue;
        }
        bound++;
        used[atoi(ks_str(p->node_name) + 5)] += p->requests.milli_cpu;
    }
    assert_int_equal(bound, 320);
    for (int i = 0; i < 20; i++) assert_int_equal(used[i], 4000);
    assert_int_equal(S.bound, 320);
    ks_scheduler_stats st;
    ks_scheduler_stats_get(S.s, &st);
    assert_int_equal(st.bound, 320);
    assert_int_equal(st.scheduled, 320);
    ks_queue_stats qs;
    ks_queue_stats_get(ks_scheduler_queue(S.s), &qs);
    assert_int_equal(qs.unschedulable, 20);
    assert_int_equal(qs.active + qs.backoff + qs.in_flight, 0);
    /* Every unschedulable pod is a priority-0 one. */
    for (uint32_t i = 0; i < S.c->pods.n; i++)
        if (!S.c->pods.v[i]->node_name) assert_int_equal(S.c->pods.v[i]->priority, 0);
    /* Events: one Scheduled per bound pod. */
    int scheduled = 0;
    for (size_t i = 0; i < ks_memory_client_nevents(S.mb); i++) {
        const ks_recorded_event *e = ks_memory_client_event(S.mb, i);
        if (strcmp(e->reason, "Scheduled") == 0) {
            scheduled++;
            assert_non_null(strstr(e->note, "Successfully assigned default/pod-"));
        }
    }
    assert_int_equal(scheduled, 320);
    sim_free();
}

static void test_hundreds_of_pods(void **state) { scenario(true, NULL); }

static void test_same_seed_same_result(void **state) {
    static char a[340][16], b[340][16];
    scenario(false, a);
    scenario(false, b);
    assert_memory_equal(a, b, sizeof(a));
}

/* ---- failure handling ------------------------------------------------------ */

static int postfilter_patches_seen = -1;
static const char *postfilter_nominate;
static ks_status *postfilter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_status_map *m,
                             ks_post_filter_result *r) {
    /* No write has happened for this attempt yet: PostFilter itself never
     * touches the pod's status. */
    ks_memory_client_stats bs;
    ks_memory_client_stats_get(S.mb, &bs);
    postfilter_patches_seen = (int)bs.status_patches;
    r->nominated_node = postfilter_nominate;
    return ks_status_new(KS_UNSCHEDULABLE, "preemption: 0/%zu nodes are available: %zu No preemption victims found for incoming pod.",
                         ks_node_status_map_len(m), ks_node_status_map_len(m));
}
static const ks_plugin_ops p_post = {.abi_version = KS_ABI_VERSION, .name = "TestPreempt", .post_filter = postfilter};

static void test_failure_one_write_and_nomination(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&tp, &p_post, 0);
    const ks_plugin_ops *extra[] = {&p_post};
    sim_init(&tp, extra, 1);
    add_node("n1", 1000, "a");
    add_node("n2", 1000, "a");
    add_node("n3", 1000, "b");
    ks_pod *big = add_pod("big", 2000, 100);
    big->nominated_node = ks_intern("n2"); /* from an earlier preemption */
    sim_start(true);

    /* Attempt 1: PostFilter nominates n3. One patch: condition + n3. */
    postfilter_nominate = "n3";
    assert_true(ks_scheduler_schedule_one(S.s));
    assert_int_equal(postfilter_patches_seen, 0);
    ks_memory_client_stats bs;
    ks_memory_client_stats_get(S.mb, &bs);
    assert_int_equal(bs.status_patches, 1);
    const ks_pod *p = pod_now("big");
    assert_int_equal(p->nominated_node, ks_intern("n3"));
    assert_string_equal(scheduled_cond(p)->message,
                        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "
                        "preemption victims found for incoming pod.");
    assert_string_equal(S.last_msg, scheduled_cond(p)->message);
    assert_int_equal(ks_queue_nominated_node(ks_scheduler_queue(S.s), p->key), ks_intern("n3"));

    /* Attempt 2: PostFilter says "no node" (""): the failure handler
     * clears the nomination, again in one write. */
    ks_queue_activate(ks_scheduler_queue(S.s), p);
    postfilter_nominate = "";
    assert_true(ks_scheduler_schedule_one(S.s));
    ks_memory_client_stats_get(S.mb, &bs);
    assert_int_equal(postfilter_patches_seen, 1);
    assert_int_equal(bs.status_patches, 2);
    p = pod_now("big");
    assert_int_equal(p->nominated_node, 0);
    assert_int_equal(ks_queue_nominated_node(ks_scheduler_queue(S.s), p->key), 0);

    /* Attempt 3: PostFilter has no opinion (NULL): the nomination stays
     * as it is and the identical condition is not written again. */
    ks_queue_activate(ks_scheduler_queue(S.s), p);
    postfilter_nominate = NULL;
    assert_true(ks_scheduler_schedule_one(S.s));
    ks_memory_client_stats_get(S.mb, &bs);
    assert_int_equal(bs.status_patches, 2);
    /* Each attempt sent one FailedScheduling event. */
    int failed = 0;
    for (size_t i = 0; i < ks_memory_client_nevents(S.mb); i++)
        if (strcmp(ks_memory_client_event(S.mb, i)->reason, "FailedScheduling") == 0) failed++;
    assert_int_equal(failed, 3);
    sim_free();
}

static void test_no_nodes(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    sim_init(&tp, NULL, 0);
    add_pod("lonely", 100, 0);
    sim_start(true);
    ks_scheduler_run_until_idle(S.s);
    const ks_pod *p = pod_now("lonely");
    assert_string_equal(scheduled_cond(p)->message, "no nodes available to schedule pods");
    assert_string_equal(scheduled_cond(p)->reason, "Unschedulable");
    /* Retried with error backoff until nothing changes; then at rest. */
    ks_queue_stats qs;
    ks_queue_stats_get(ks_scheduler_queue(S.s), &qs);
    assert_int_equal(qs.error_backoff, 1);
    /* A node appears: scheduled. */
    ks_memory_client_add_node(S.mb, tu_node("late", 1000, GI, NULL));
    ks_scheduler_run_until_idle(S.s);
    assert_int_equal(pod_now("lonely")->node_name, ks_intern("late"));
    sim_free();
}

/* PreFilter shapes the message: a node set leaves nodes out, a rejection
 * replaces the per-node reasons. */
static ks_status *pf_only_n1(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                             size_t n, ks_pre_filter_result **r) {
    if (ks_pod_label(pod, "reject")) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "pod says no");
    *r = ks_pre_filter_result_new(st);
    ks_pre_filter_result_add(*r, "n1");
    return NULL;
}
static const ks_plugin_ops p_only_n1 = {.abi_version = KS_ABI_VERSION, .name = "OnlyN1", .pre_filter = pf_only_n1};

static void test_prefilter_messages(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_only_n1, 0);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    const ks_plugin_ops *extra[] = {&p_only_n1};
    sim_init(&tp, extra, 1);
    add_node("n1", 1000, "a");
    add_node("n2", 8000, "a");
    add_node("n3", 8000, "b");
    add_pod("wide", 2000, 0);
    ks_pod *no = add_pod("no", 10, 0);
    tu_pod_labels(no, "reject", "yes", NULL);
    sim_start(true);
    ks_scheduler_run_until_idle(S.s);
    assert_string_equal(scheduled_cond(pod_now("wide"))->message,
                        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [OnlyN1].");
    assert_string_equal(scheduled_cond(pod_now("no"))->message, "0/3 nodes are available: pod says no.");
    sim_free();
}

/* A PreFilter result made from the NodeInfos it was handed: the nodes
 * whose names end in an odd digit. The result's ids here span more than
 * 70,000 interned strings (the node list is looked up per node, not
 * through a bitmap of that span): the same nodes are kept either way. */
static ks_status *pf_odd(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                         size_t n, ks_pre_filter_result **r) {
    *r = ks_pre_filter_result_new(st);
    for (size_t i = 0; i < n; i++) {
        const char *name = ks_node_info_name(nodes[i]);
        if ((name[strlen(name) - 1] - '0') % 2) ks_pre_filter_result_add_node(*r, nodes[i]);
    }
    return NULL;
}
static const ks_plugin_ops p_odd = {.abi_version = KS_ABI_VERSION, .name = "KeepOdd", .pre_filter = pf_odd};

static void test_prefilter_node_sets(void **state) {
    for (int spread = 0; spread < 2; spread++) {
        tu_profile tp;
        tu_profile_init(&tp, NULL);
        tu_profile_add_plugin(&tp, &p_odd, 0);
        tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
        const ks_plugin_ops *extra[] = {&p_odd};
        sim_init(&tp, extra, 1);
        add_node(spread ? "s1" : "n1", 1000, "a");
        add_node(spread ? "s2" : "n2", 8000, "a");
        if (spread) {
            char junk[32];
            for (int i = 0; i < 70000; i++) {
                snprintf(junk, sizeof(junk), "pf-node-set-junk-%d", i);
                ks_intern(junk);
            }
        }
        add_node(spread ? "s3" : "n3", 4000, "b");
        add_node(spread ? "s4" : "n4", 8000, "b");
        if (spread) assert_true(ks_intern_find("s3") - ks_intern_find("s1") > 70000);
        add_pod("fits", 2000, 0);
        add_pod("big", 6000, 0);
        sim_start(true);
        ks_scheduler_run_until_idle(S.s);
        assert_int_equal(pod_now("fits")->node_name, ks_intern(spread ? "s3" : "n3"));
        assert_string_equal(scheduled_cond(pod_now("big"))->message,
                            "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [KeepOdd].");
        sim_free();
    }
}

/* ---- Permit across the loop ------------------------------------------------ */

/* Gang of two: the first member waits; the second allows it. */
static ks_handle *gang_handle;
static void *gang_create(const ks_args *a, ks_handle *h, char **err) {
    gang_handle = h;
    return h;
}
static ks_status *gang_permit(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                              int64_t *timeout_ms) {
    ks_waiting_pod *w[4];
    size_t n = ks_handle_waiting_pods(gang_handle, w, 4);
    for (size_t i = 0; i < n && i < 4; i++) ks_waiting_pod_allow(w[i], "Gang");
    if (n) return NULL;
    *timeout_ms = 5000;
    return ks_status_new(KS_WAIT, NULL);
}
/* A member arriving may complete the gang. (Registering nothing would
 * mean every event, the pod's own status update included, as upstream's
 * default for plugins without EnqueueExtensions.) */
static size_t gang_events(void *self, ks_cluster_event *out, size_t max) {
    out[0] = (ks_cluster_event){KS_EV_POD, KS_ACT_ADD};
    return 1;
}
static const ks_plugin_ops p_gang = {.abi_version = KS_ABI_VERSION, .name = "Gang", .create = gang_create,
                                     .events_to_register = gang_events, .permit = gang_permit};

static void test_permit_gang(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&tp, &p_gang, 0);
    const ks_plugin_ops *extra[] = {&p_gang};
    sim_init(&tp, extra, 1);
    add_node("n1", 4000, "a");
    add_pod("m1", 100, 0);
    sim_start(true);

    /* Alone, the member waits 5 s and is rejected. */
    int64_t t0 = ks_clock_now(S.clock);
    assert_true(ks_scheduler_schedule_one(S.s));
    assert_int_equal(ks_waiting_pods_count(ks_scheduler_waiting_pods(S.s)), 1);
    assert_int_equal(S.bound, 0);
    ks_scheduler_run_until_idle(S.s);
    assert_int_equal(ks_clock_now(S.clock) - t0, 5 * KS_NS_PER_SEC);
    assert_int_equal(S.bind_failed, 1);
    const ks_pod *p = pod_now("m1");
    assert_int_equal(p->node_name, 0);
    assert_string_equal(scheduled_cond(p)->message,
                        "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Gang.");
    /* Its resources were given back. */
    assert_int_equal(ks_cache_assumed_count(ks_scheduler_cache(S.s)), 0);

    /* With its partner the pair goes through (a gang plugin would
     * activate the waiting members; an unscheduled pod's arrival is not an
     * event that requeues others). */
    ks_memory_client_add_pod(S.mb, tu_pod("default", "m2", 100, 0, 0));
    ks_queue_activate(ks_scheduler_queue(S.s), pod_now("m1"));
    ks_scheduler_run_until_idle(S.s);
    assert_int_equal(pod_now("m1")->node_name, ks_intern("n1"));
    assert_int_equal(pod_now("m2")->node_name, ks_intern("n1"));
    assert_int_equal(S.bound, 2);
    sim_free();
}

/* ---- binding failures ---------------------------------------------------- */

static void test_bind_failure_retried(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    sim_init(&tp, NULL, 0);
    add_node("n1", 1000, "a");
    add_pod("p", 100, 0);
    sim_start(true);
    ks_memory_client_fail_binds(S.mb, 1);
    ks_scheduler_run_until_idle(S.s);
    const ks_pod *p = pod_now("p");
    assert_int_equal(p->node_name, ks_intern("n1"));
    assert_int_equal(S.bind_failed, 1);
    assert_int_equal(S.bound, 1);
    bool saw = false;
    for (size_t i = 0; i < ks_memory_client_nevents(S.mb); i++) {
        const ks_recorded_event *e = ks_memory_client_event(S.mb, i);
        if (strcmp(e->reason, "FailedScheduling") == 0) {
            assert_string_equal(e->note, "running Bind plugin \"TestBind\": binding rejected by the test backend");
            saw = true;
        }
    }
    assert_true(saw);
    sim_free();
}

/* ---- sampling and rotation -------------------------------------------------- */

static void test_num_feasible_nodes(void **state) {
    assert_int_equal(ks_num_feasible_nodes_to_find(0, 50), 50);
    assert_int_equal(ks_num_feasible_nodes_to_find(0, 100), 100);
    assert_int_equal(ks_num_feasible_nodes_to_find(0, 1000), 420);
    assert_int_equal(ks_num_feasible_nodes_to_find(0, 5000), 500);
    assert_int_equal(ks_num_feasible_nodes_to_find(0, 6000), 300);
    assert_int_equal(ks_num_feasible_nodes_to_find(30, 1000), 300);
    assert_int_equal(ks_num_feasible_nodes_to_find(5, 1000), 100);
    assert_int_equal(ks_num_feasible_nodes_to_find(100, 1000), 1000);
}

static void test_rotating_start_index(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tp.p.has_percentage = true;
    tp.p.percentage_of_nodes_to_score = 50;
    sim_init(&tp, NULL, 0);
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "n%03d", i);
        add_node(name, 4000, "a");
    }
    add_pod("p1", 10, 0);
    add_pod("p2", 10, 0);
    add_pod("p3", 10, 0);
    sim_start(true);
    ks_scheduler_run_until_idle(S.s);
    /* 150 of 300 nodes are looked at per pod, each time from where the
     * previous search stopped. */
    assert_string_equal(S.first_eval[0], "n000");
    assert_string_equal(S.first_eval[1], "n150");
    assert_string_equal(S.first_eval[2], "n000");
    sim_free();
}

static void test_deleting_pod_skipped(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    sim_init(&tp, NULL, 0);
    add_node("n1", 1000, "a");
    ks_pod *p = add_pod("dying", 10, 0);
    p->has_deletion_ts = true;
    sim_start(true);
    ks_scheduler_run_until_idle(S.s);
    assert_int_equal(pod_now("dying")->node_name, 0);
    assert_int_equal(ks_memory_client_nevents(S.mb), 1);
    assert_string_equal(ks_memory_client_event(S.mb, 0)->note, "skip schedule deleting pod: default/dying");
    sim_free();
}

/* ---- the run mode ---------------------------------------------------------- */

/* The mode is chosen once, at creation: threads need real time, and a
 * stepping scheduler does not start a loop of its own. */
static void test_run_mode_chosen_at_creation(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    sim_init(&tp, NULL, 0);
    add_node("n1", 1000, "a");
    add_pod("p", 100, 0);
    S.mb = ks_memory_client_new(S.c);
    ks_scheduler_options o = {.config = S.cfg, .registry = S.reg, .backend = ks_memory_client_iface(S.mb),
                              .clock = S.clock, .mode = KS_RUN_THREADED};
    char *err = NULL;
    assert_null(ks_scheduler_new(&o, &err));
    assert_string_equal(err, "a threaded scheduler runs on the real clock");
    free(err);
    ks_memory_client_free(S.mb);
    /* Stepping: ks_scheduler_run refuses at once, nothing was scheduled
     * behind the caller's back; the caller's step does it. */
    sim_start(true);
    ks_scheduler_run(S.s);
    assert_int_equal(S.attempts, 0);
    assert_int_equal(ks_api_dispatcher_pending(ks_scheduler_dispatcher(S.s)), 0);
    assert_true(ks_scheduler_schedule_one(S.s));
    assert_int_equal(S.bound, 1);
    assert_string_equal(ks_str(pod_now("p")->node_name), "n1");
    sim_free();
}

/* A pod whose ResourceClaim is created after it: DynamicResources'
 * PreEnqueue holds it, and the claim's add event lets it in only if the
 * listers already show the claim when the event's hints run (as an
 * informer's store does before its handlers; the other order held such
 * pods for good when `ksched run` listed claims after pods). */
extern const ks_plugin_ops ks_plugin_dynamic_resources;

static ks_cluster *load_yaml(const char *yaml) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    if (!ks_load_buffer(c, "test.yaml", yaml, strlen(yaml), &errs)) fail_msg("%s", errs.n ? errs.v[0] : "load");
    ks_errors_free(&errs);
    return c;
}

static void test_claim_created_after_pod(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    const ks_plugin_ops *extra[] = {&ks_plugin_dynamic_resources};
    tu_profile_add_plugin(&tp, &ks_plugin_dynamic_resources, 0);
    sim_init(&tp, extra, 1);
    ks_cluster_free(S.c);
    S.c = load_yaml("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '10'}}\n"
                    "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                    "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n"
                    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
                    "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, resourceSliceCount: 1},\n"
                    "  devices: [{name: gpu-0}]}\n"
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                    "spec: {containers: [{name: c, image: i}], resourceClaims: [{name: gpu, resourceClaimName: late}]}\n");
    sim_start(true);
    ks_scheduler_run_until_idle(S.s);
    assert_int_equal(S.attempts, 0); /* held by PreEnqueue */
    ks_cluster *later = load_yaml("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                  "metadata: {name: late, namespace: default}\n"
                                  "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n");
    ks_memory_client_add_object(S.mb, KS_KIND_RESOURCE_CLAIM, later->resource_claims.v[0]);
    ks_scheduler_run_until_idle(S.s);
    assert_int_equal(S.bound, 1);
    assert_int_equal(pod_now("p")->node_name, ks_intern("n1"));
    ks_cluster_free(later);
    sim_free();
}

/* ---- the real-time loop --------------------------------------------------- */

static void *run_thread(void *arg) {
    ks_scheduler_run(arg);
    return NULL;
}

static void test_real_clock_threads(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    const ks_plugin_ops *extra[] = {&p_gang};
    tu_profile_add_plugin(&tp, &p_gang, 0);
    sim_init(&tp, extra, 1);
    ks_clock_free(S.clock);
    S.clock = ks_clock_real();
    S.mode = KS_RUN_THREADED;
    char name[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "node-%02d", i);
        add_node(name, 4000, i % 2 ? "b" : "a");
    }
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "pod-%03d", i);
        add_pod(name, 200, 0);
    }
    sim_start(false);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_thread, S.s), 0);
    /* Gang pods wait on Permit in their binding threads until the next
     * pod lets them go. Wait (no timing asserted) for all but the last. */
    ks_scheduler_stats st;
    for (int i = 0; i < 60000; i++) {
        ks_scheduler_stats_get(S.s, &st);
        if (st.bound >= 199) break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    ks_scheduler_stop(S.s);
    pthread_join(t, NULL);
    ks_scheduler_stats_get(S.s, &st);
    assert_true(st.bound >= 199);
    ks_scheduler_free(S.s);
    S.s = NULL;
    int bound = 0;
    for (uint32_t i = 0; i < S.c->pods.n; i++) bound += S.c->pods.v[i]->node_name != 0;
    assert_true(bound >= 199);
    S.clock = NULL;
    sim_free();
}

/* A hundred pods wait on Permit; a last one lets them all go. Waiting
 * pods hold no thread: the process has as many threads with a hundred
 * pods waiting as with none. */
static ks_handle *hold_handle;
static void *hold_create(const ks_args *a, ks_handle *h, char **err) {
    hold_handle = h;
    return h;
}
static ks_status *hold_permit(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                              int64_t *timeout_ms) {
    if (strcmp(ks_str(pod->name), "release") != 0) {
        *timeout_ms = 10 * 60 * 1000;
        return ks_status_new(KS_WAIT, NULL);
    }
    ks_waiting_pod *w[128];
    size_t n = ks_handle_waiting_pods(hold_handle, w, 128);
    for (size_t i = 0; i < n && i < 128; i++) ks_waiting_pod_allow(w[i], "Hold");
    return NULL;
}
static const ks_plugin_ops p_hold = {.abi_version = KS_ABI_VERSION, .name = "Hold", .create = hold_create,
                                     .permit = hold_permit};

static int count_threads(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.') n++;
    closedir(dir);
    return n;
}

/* Wait (bounded: 60 s) until cond(arg) holds. */
static bool eventually(bool (*cond)(void *), void *arg) {
    for (int i = 0; i < 60000; i++) {
        if (cond(arg)) return true;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return cond(arg);
}
static bool n_waiting(void *arg) {
    return ks_waiting_pods_count(ks_scheduler_waiting_pods(S.s)) == (size_t)(uintptr_t)arg;
}
static bool n_bound(void *arg) {
    ks_scheduler_stats st;
    ks_scheduler_stats_get(S.s, &st);
    return st.bound >= (uint64_t)(uintptr_t)arg;
}

static void test_real_clock_waiting_pods_hold_no_thread(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    const ks_plugin_ops *extra[] = {&p_hold};
    tu_profile_add_plugin(&tp, &p_hold, 0);
    sim_init(&tp, extra, 1);
    ks_clock_free(S.clock);
    S.clock = ks_clock_real();
    S.mode = KS_RUN_THREADED;
    char name[32];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "node-%d", i);
        add_node(name, 64000, "a");
    }
    add_pod("first", 10, 0);
    sim_start(false);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_thread, S.s), 0);
    /* Every thread the loop needs is there once one pod waits. */
    assert_true(eventually(n_waiting, (void *)(uintptr_t)1));
    int threads = count_threads();
    for (int i = 0; i < 99; i++) {
        snprintf(name, sizeof(name), "pod-%03d", i);
        ks_memory_client_add_pod(S.mb, tu_pod("default", name, 10, 0, 0));
    }
    assert_true(eventually(n_waiting, (void *)(uintptr_t)100));
    assert_int_equal(count_threads(), threads);
    ks_memory_client_add_pod(S.mb, tu_pod("default", "release", 10, 0, 0));
    assert_true(eventually(n_bound, (void *)(uintptr_t)101));
    ks_scheduler_stop(S.s);
    pthread_join(t, NULL);
    ks_scheduler_free(S.s);
    S.s = NULL;
    for (uint32_t i = 0; i < S.c->pods.n; i++) assert_true(S.c->pods.v[i]->node_name != 0);
    S.clock = NULL;
    sim_free();
}

/* A binding cycle's view is let go while its API calls wait (a pin held
 * keeps every version the listers replace meanwhile) and a current one is
 * pinned after, when its binding plugins are ksched's own: PreBind writes
 * a claim and then reads it as written. An out-of-tree plugin is promised
 * what it read until it returns: its view stays, the claim it read before
 * the write still readable (ASan) and the same. */
static ks_handle *rb_handle;
static _Atomic int rb_saw_write = -1, rb_kept = -1;
static void *rb_create(const ks_args *a, ks_handle *h, char **err) {
    rb_handle = h;
    return h;
}
static const ks_resource_claim *rb_claim(void) {
    const ks_objects *o = ks_handle_objects(rb_handle);
    for (uint32_t i = 0; o && i < o->resource_claims.n; i++)
        if (o->resource_claims.v[i]->name == ks_intern("c")) return o->resource_claims.v[i];
    return NULL;
}
static void *rb_apply(const void *cur, const ks_object_write *w, ks_status **err) {
    return ks_claim_with_status(cur, NULL, NULL, 0, true);
}
static ks_status *rb_pre_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    const ks_resource_claim *before = rb_claim();
    static const ks_call_rules rules = {.name = "resource_claim_update"};
    ks_object_write w = {.kind = "ResourceClaim", .ns = "default", .name = "c", .verb = KS_WRITE_UPDATE,
                         .apply = rb_apply};
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .pod = pod, .write = &w, .rules = &rules};
    ks_status *e = ks_handle_api_call(rb_handle, &call);
    if (e) return e;
    const ks_resource_claim *after = rb_claim();
    rb_saw_write = before && after && after != before && after->nfinalizers == 1;
    rb_kept = before && after == before && before->nfinalizers == 0;
    return NULL;
}
static const ks_plugin_ops p_read_back = {.abi_version = KS_ABI_VERSION, .name = "ReadBack", .create = rb_create,
                                          .pre_bind = rb_pre_bind};

static void binding_view_case(bool own) {
    rb_saw_write = rb_kept = -1;
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    const ks_plugin_ops *extra[] = {&p_read_back};
    tu_profile_add_plugin(&tp, &p_read_back, 0);
    sim_init(&tp, own ? NULL : extra, own ? 0 : 1);
    if (own) assert_true(ks_registry_add_own(S.reg, &p_read_back, NULL));
    ks_cluster_free(S.c);
    S.c = load_yaml("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '10'}}\n"
                    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
                    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                    "spec: {containers: [{name: c, image: i}]}\n");
    ks_clock_free(S.clock);
    S.clock = ks_clock_real();
    S.mode = KS_RUN_THREADED;
    sim_start(true);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_thread, S.s), 0);
    assert_true(eventually(n_bound, (void *)(uintptr_t)1));
    ks_scheduler_stop(S.s);
    pthread_join(t, NULL);
    assert_int_equal(rb_saw_write, own ? 1 : 0);
    assert_int_equal(rb_kept, own ? 0 : 1);
    ks_scheduler_free(S.s);
    S.s = NULL;
    S.clock = NULL;
    sim_free();
}

static void test_real_clock_binding_view_after_call(void **state) { binding_view_case(true); }
static void test_real_clock_binding_view_kept_for_plugins(void **state) { binding_view_case(false); }

int main(void) {
    tu_init();
    /* The scheduler logs errors it recovers from (a failed bind); keep
     * them out of the test report. */
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull) ks_log_set_output(devnull);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hundreds_of_pods),
        cmocka_unit_test(test_same_seed_same_result),
        cmocka_unit_test(test_failure_one_write_and_nomination),
        cmocka_unit_test(test_no_nodes),
        cmocka_unit_test(test_prefilter_messages),
        cmocka_unit_test(test_prefilter_node_sets),
        cmocka_unit_test(test_permit_gang),
        cmocka_unit_test(test_bind_failure_retried),
        cmocka_unit_test(test_num_feasible_nodes),
        cmocka_unit_test(test_rotating_start_index),
        cmocka_unit_test(test_deleting_pod_skipped),
        cmocka_unit_test(test_run_mode_chosen_at_creation),
        cmocka_unit_test(test_claim_created_after_pod),
        cmocka_unit_test(test_real_clock_threads),
        cmocka_unit_test(test_real_clock_waiting_pods_hold_no_thread),
        cmocka_unit_test(test_real_clock_binding_view_after_call),
        cmocka_unit_test(test_real_clock_binding_view_kept_for_plugins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
