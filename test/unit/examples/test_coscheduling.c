/* Coscheduling (examples/plugins/Coscheduling), loaded from its .so and
 * driven extension point by extension point against a framework whose
 * environment the test provides: the pods the scheduler knows, the
 * PodGroups, the clock and the waiting pods map. The whole gang flow
 * through the real scheduler is in test/scenarios/coscheduling-*. */
#include "api/cluster.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/loader.h"
#include "framework/nodeinfo.h"
#include "framework/plugin_api.h"
#include "framework/status.h"
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define G "scheduling.x-k8s.io/pod-group"

static ks_registry *reg;
static const ks_plugin_ops *ops;

/* ---- the world the plugin sees ---- */

typedef struct world {
    ks_framework fw;
    ks_cluster *cluster;
    ks_objects view;
    ks_clock *clock;
    ks_pod *pods[64];
    size_t npods;
    char activated[512];
    ks_cycle_state *st;
    void *self;
} world;

static size_t env_list_pods(void *ctx, ks_id ns, ks_id key, ks_id value, const ks_pod **out,
                            size_t max) {
    world *w = ctx;
    size_t n = 0;
    for (size_t i = 0; i < w->npods; i++) {
        if (!ks_pod_matches(w->pods[i], ns, key, value)) continue;
        if (n < max) out[n] = ks_pod_ref(w->pods[i]);
        n++;
    }
    return n;
}

static int64_t env_now(void *ctx) { return ks_clock_now(((world *)ctx)->clock); }
static const ks_objects *env_objects(void *ctx) {
    world *w = ctx;
    w->view = ks_cluster_view(w->cluster);
    return &w->view;
}

static void env_activate(void *ctx, const ks_pod *pod) {
    world *w = ctx;
    strcat(w->activated, ks_str(pod->name));
    strcat(w->activated, " ");
}

static world *world_new(const ks_tree *args) {
    world *w = calloc(1, sizeof(*w));
    w->clock = ks_clock_sim_new(1700000000LL * KS_NS_PER_SEC);
    w->cluster = ks_cluster_new();
    w->fw.handle.fw = &w->fw;
    w->fw.env = (ks_framework_env){.ctx = w,
                                   .objects = env_objects,
                                   .activate = env_activate,
                                   .list_pods = env_list_pods,
                                   .now = env_now};
    w->fw.waiting = ks_waiting_pods_new(w->clock);
    w->st = ks_cycle_state_new();
    char *err = NULL;
    w->self = ops->create(args, &w->fw.handle, &err);
    assert_null(err);
    assert_non_null(w->self);
    return w;
}

static void world_free(world *w) {
    ops->destroy(w->self);
    for (size_t i = 0; i < w->npods; i++) ks_pod_unref(w->pods[i]);
    ks_cycle_state_free(w->st);
    ks_waiting_pods_free(w->fw.waiting);
    ks_cluster_free(w->cluster);
    ks_clock_free(w->clock);
    free(w);
}

static void add_group(world *w, const char *name, int min_member, int timeout_s,
                      int64_t min_cpu_milli) {
    /* Owned by its arena, as decoded objects are (ks_cluster_free). */
    ks_arena *a = ks_arena_new(1024);
    ks_pod_group *pg = ks_arena_alloc(a, sizeof(*pg));
    pg->arena = a;
    pg->ns = ks_intern("default");
    pg->name = ks_intern(name);
    pg->min_member = min_member;
    pg->schedule_timeout_seconds = timeout_s;
    pg->creation_ts = 1600000000;
    if (min_cpu_milli) {
        pg->has_min_resources = true;
        pg->min_resources.milli_cpu = min_cpu_milli;
    }
    KS_VEC_PUSH(w->cluster->pod_groups, pg);
}

static ks_pod *add_pod(world *w, const char *name, const char *group, int64_t milli_cpu) {
    ks_pod *p = ks_pod_new();
    p->ns = ks_intern("default");
    p->name = ks_intern(name);
    p->key = ks_pod_key(p->ns, p->name);
    p->uid = ks_arena_printf(p->arena, "uid-%s", name);
    p->scheduler_name = ks_intern("default-scheduler");
    if (group) {
        p->labels.n = 1;
        p->labels.kv = ks_arena_calloc(p->arena, 1, sizeof(ks_label));
        p->labels.kv[0] = (ks_label){ks_intern(G), ks_intern(group)};
    }
    p->requests.milli_cpu = milli_cpu;
    w->pods[w->npods++] = p;
    return p;
}

static ks_node_info *mk_info(const char *name, int64_t milli_cpu) {
    ks_node *n = ks_node_new();
    n->name = ks_intern(name);
    n->allocatable.milli_cpu = milli_cpu;
    n->allocatable.memory = 8LL << 30;
    n->allocatable.allowed_pods = 110;
    ks_node_info *ni = ks_node_info_new();
    ks_node_info_set_node(ni, n);
    ks_node_unref(n);
    return ni;
}

/* Permit; on Wait, put the pod in the waiting map as the framework does. */
static ks_status *permit(world *w, ks_pod *p, int64_t *timeout_ms) {
    *timeout_ms = 0;
    ks_status *s = ops->permit(w->self, w->st, p, "node-a", timeout_ms);
    if (ks_status_code(s) == KS_WAIT) {
        ks_waiting_plugin wpl = {.plugin = "Coscheduling", .timeout_ns = *timeout_ms * KS_NS_PER_MS};
        ks_waiting_pods_add(w->fw.waiting, p, &wpl, 1);
    }
    return s;
}

/* The verdict of a waiting pod: "waiting", "allowed" or the rejection. */
static const char *verdict(world *w, const ks_pod *p, char *buf, size_t n) {
    ks_waiting_pod *wp = ks_waiting_pods_get(w->fw.waiting, p->key);
    assert_non_null(wp);
    ks_status *v = NULL;
    if (!ks_waiting_pod_wait(wp, false, &v)) return "waiting";
    if (!v) return "allowed";
    snprintf(buf, n, "%s: %s", ks_status_plugin(v), ks_status_reason(v, 0));
    ks_status_free(v);
    return buf;
}

static void expect_reason(ks_status *s, ks_code code, const char *reason) {
    assert_int_equal(ks_status_code(s), code);
    if (reason) assert_string_equal(ks_status_reason(s, 0), reason);
    else assert_int_equal(ks_status_nreasons(s), 0);
    ks_status_free(s);
}

/* ---- tests ---- */

static void test_permit_waits_then_allows_all(void **state) {
    (void)state;
    world *w = world_new(NULL);
    add_group(w, "train", 3, 10, 0);
    ks_pod *p0 = add_pod(w, "train-0", "train", 1000);
    ks_pod *p1 = add_pod(w, "train-1", "train", 1000);
    ks_pod *p2 = add_pod(w, "train-2", "train", 1000);
    ks_pod *solo = add_pod(w, "solo", NULL, 1000);
    char buf[256];
    int64_t t;

    /* Not in a group: allowed at once. */
    assert_null(permit(w, solo, &t));

    expect_reason(permit(w, p0, &t), KS_WAIT, NULL);
    assert_int_equal(t, 10000); /* the group's scheduleTimeoutSeconds */
    /* The first member to wait brings its siblings forward. */
    assert_string_equal(w->activated, "train-1 train-2 ");
    expect_reason(permit(w, p1, &t), KS_WAIT, NULL);
    assert_string_equal(w->activated, "train-1 train-2 ");
    assert_string_equal(verdict(w, p0, buf, sizeof(buf)), "waiting");

    /* The third completes the quorum: allowed, and so are the others. */
    assert_null(permit(w, p2, &t));
    assert_string_equal(verdict(w, p0, buf, sizeof(buf)), "allowed");
    assert_string_equal(verdict(w, p1, buf, sizeof(buf)), "allowed");
    world_free(w);
}

static void test_permit_counts_bound_members(void **state) {
    (void)state;
    world *w = world_new(NULL);
    add_group(w, "train", 2, 0, 0);
    ks_pod *bound = add_pod(w, "train-0", "train", 1000);
    bound->node_name = ks_intern("node-b");
    ks_pod *p1 = add_pod(w, "train-1", "train", 1000);
    int64_t t;
    /* One member already runs: the second completes the gang. */
    assert_null(permit(w, p1, &t));

    /* Without scheduleTimeoutSeconds the wait is permitWaitingTimeSeconds. */
    add_group(w, "other", 2, 0, 0);
    ks_pod *o = add_pod(w, "other-0", "other", 1000);
    add_pod(w, "other-1", "other", 1000);
    expect_reason(permit(w, o, &t), KS_WAIT, NULL);
    assert_int_equal(t, 60000);
    world_free(w);
}

static void test_permit_unknown_group(void **state) {
    (void)state;
    world *w = world_new(NULL);
    ks_pod *p = add_pod(w, "lost-0", "lost", 1000);
    int64_t t;
    expect_reason(permit(w, p, &t), KS_UNSCHEDULABLE, "PodGroup not found");
    world_free(w);
}

static void test_post_filter_rejects_the_gang(void **state) {
    (void)state;
    world *w = world_new(NULL);
    add_group(w, "train", 3, 10, 0);
    ks_pod *p0 = add_pod(w, "train-0", "train", 1000);
    ks_pod *p1 = add_pod(w, "train-1", "train", 1000);
    ks_pod *p2 = add_pod(w, "train-2", "train", 1000);
    char buf[256];
    int64_t t;
    ks_status_free(permit(w, p0, &t));
    ks_status_free(permit(w, p1, &t));

    ks_post_filter_result r = {0};
    expect_reason(ops->post_filter(w->self, w->st, p2, NULL, &r), KS_UNSCHEDULABLE,
                  "PodGroup default/train gets rejected due to Pod train-2 is unschedulable even "
                  "after PostFilter");
    assert_null(r.nominated_node);
    assert_string_equal(verdict(w, p0, buf, sizeof(buf)),
                        "Coscheduling: optimistic rejection in PostFilter");
    assert_string_equal(verdict(w, p1, buf, sizeof(buf)),
                        "Coscheduling: optimistic rejection in PostFilter");
    world_free(w);
}

static void test_post_filter_small_gap_keeps_waiting(void **state) {
    (void)state;
    world *w = world_new(NULL);
    add_group(w, "big", 10, 10, 0);
    ks_pod *m[10];
    char name[32], buf[256];
    int64_t t;
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "big-%d", i);
        m[i] = add_pod(w, name, "big", 100);
    }
    for (int i = 0; i < 9; i++) ks_status_free(permit(w, m[i], &t));
    /* 1 of 10 missing is within podGroupRejectPercentage (10): no rejection. */
    ks_post_filter_result r = {0};
    expect_reason(ops->post_filter(w->self, w->st, m[9], NULL, &r), KS_UNSCHEDULABLE, NULL);
    assert_string_equal(verdict(w, m[0], buf, sizeof(buf)), "waiting");

    /* No PodGroup at all. */
    ks_pod *lost = add_pod(w, "lost", "lost", 100);
    expect_reason(ops->post_filter(w->self, w->st, lost, NULL, &r), KS_UNSCHEDULABLE,
                  "can not find pod group");
    world_free(w);
}

static void test_unreserve_rejects_the_others(void **state) {
    (void)state;
    world *w = world_new(NULL);
    add_group(w, "train", 3, 10, 0);
    ks_pod *p0 = add_pod(w, "train-0", "train", 1000);
    ks_pod *p1 = add_pod(w, "train-1", "train", 1000);
    ks_pod *p2 = add_pod(w, "train-2", "train", 1000);
    char buf[256];
    int64_t t;
    ks_status_free(permit(w, p0, &t));
    ks_status_free(permit(w, p1, &t));

    /* train-0 timed out (or was rejected): Unreserve rejects train-1. */
    ops->unreserve(w->self, w->st, p0, "node-a");
    assert_string_equal(verdict(w, p1, buf, sizeof(buf)), "Coscheduling: rejection in Unreserve");
    /* train-0 no longer counts: train-2 alone does not complete the gang. */
    expect_reason(permit(w, p2, &t), KS_WAIT, NULL);
    world_free(w);
}

static void test_pre_filter(void **state) {
    (void)state;
    world *w = world_new(NULL);
    ks_node_info *nodes[2] = {mk_info("node-a", 4000), mk_info("node-b", 4000)};
    const ks_node_info *const *nv = (const ks_node_info *const *)nodes;
    add_group(w, "small", 4, 0, 0);
    add_group(w, "greedy", 2, 0, 20000);
    add_group(w, "fits", 2, 0, 6000);
    ks_pod *s0 = add_pod(w, "small-0", "small", 1000);
    add_pod(w, "small-1", "small", 1000);
    add_pod(w, "small-2", "small", 1000);
    ks_pod *g0 = add_pod(w, "greedy-0", "greedy", 1000);
    add_pod(w, "greedy-1", "greedy", 1000);
    ks_pod *f0 = add_pod(w, "fits-0", "fits", 1000);
    ks_pod *f1 = add_pod(w, "fits-1", "fits", 1000);
    ks_pod *solo = add_pod(w, "solo", NULL, 1000);
    ks_pod *lost = add_pod(w, "lost-0", "lost", 1000);
    ks_pre_filter_result *res = NULL;

    assert_null(ops->pre_filter(w->self, w->st, solo, nv, 2, &res));
    assert_null(ops->pre_filter(w->self, w->st, lost, nv, 2, &res));
    expect_reason(ops->pre_filter(w->self, w->st, s0, nv, 2, &res),
                  KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                  "pre-filter pod small-0 cannot find enough sibling pods, current pods number: 3, "
                  "minMember of group: 4");
    expect_reason(ops->pre_filter(w->self, w->st, g0, nv, 2, &res),
                  KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "resource gap: cpu=12000m");
    assert_null(ops->pre_filter(w->self, w->st, f0, nv, 2, &res));
    assert_null(res);

    /* A gated member that keeps the group below minMember. */
    f1->ngates = 1;
    expect_reason(ops->pre_filter(w->self, w->st, f0, nv, 2, &res),
                  KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                  "pre-filter pod fits-0 cannot proceed due to gated pods in the same PodGroup");
    f1->ngates = 0;

    /* The group's own pods on a node count for the gang, not against it;
     * other pods do. */
    ks_pod *other = add_pod(w, "filler", NULL, 3000);
    other->node_name = nodes[0]->name;
    ks_node_info_add_pod(nodes[0], other);
    ks_node_info_add_pod(nodes[1], f1);
    add_group(w, "fits2", 2, 0, 6000);
    ks_pod *h0 = add_pod(w, "fits2-0", "fits2", 1000);
    add_pod(w, "fits2-1", "fits2", 1000);
    expect_reason(ops->pre_filter(w->self, w->st, h0, nv, 2, &res),
                  KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "resource gap: cpu=2000m");
    assert_null(ops->pre_filter(w->self, w->st, f0, nv, 2, &res)); /* checked earlier: cached */

    ks_node_info_free(nodes[0]);
    ks_node_info_free(nodes[1]);
    world_free(w);
}

static ks_tree *int_args(ks_arena *a, const char *key, int64_t v) {
    ks_tree *t = kt_new(a, KT_MAP, 0);
    kt_map_add(a, t, key, kt_int(a, v));
    return t;
}

static void test_backoff(void **state) {
    (void)state;
    ks_arena *a = ks_arena_new(1024);
    world *w = world_new(int_args(a, "podGroupBackoffSeconds", 30));
    add_group(w, "train", 2, 0, 0);
    ks_pod *p0 = add_pod(w, "train-0", "train", 1000);
    ks_pod *p1 = add_pod(w, "train-1", "train", 1000);
    ks_post_filter_result r = {0};
    ks_pre_filter_result *res = NULL;
    ks_status_free(ops->post_filter(w->self, w->st, p1, NULL, &r));
    expect_reason(ops->pre_filter(w->self, w->st, p0, NULL, 0, &res),
                  KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "podGroup default/train failed recently");
    ks_clock_sim_set(w->clock, ks_clock_now(w->clock) + 31 * KS_NS_PER_SEC);
    assert_null(ops->pre_filter(w->self, w->st, p0, NULL, 0, &res));
    world_free(w);
    ks_arena_free(a);
}

static void test_args(void **state) {
    (void)state;
    ks_arena *a = ks_arena_new(1024);
    char *err = NULL;
    struct {
        const char *key;
        int64_t v;
        const char *msg;
    } bad[] = {
        {"podGroupBackoffSeconds", -1, "podGroupBackoffSeconds: must be greater than or equal to 0"},
        {"permitWaitingTimeSeconds", -5, "permitWaitingTimeSeconds: must be greater than or equal to 0"},
        {"podGroupRejectPercentage", 101, "podGroupRejectPercentage: must be between 0 and 100"},
        {"kubeConfigPath", 1, "unknown field \"kubeConfigPath\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_null(ops->create(int_args(a, bad[i].key, bad[i].v), NULL, &err));
        assert_string_equal(err, bad[i].msg);
        free(err);
        err = NULL;
    }
    ks_tree *t = kt_new(a, KT_MAP, 0);
    kt_map_add(a, t, "permitWaitingTimeSeconds", kt_string(a, "soon", 0));
    assert_null(ops->create(t, NULL, &err));
    assert_string_equal(err, "permitWaitingTimeSeconds: must be an integer");
    free(err);
    ks_arena_free(a);
}

static void test_events_and_points(void **state) {
    (void)state;
    ks_cluster_event ev[8];
    size_t n = ops->events_to_register(NULL, ev, 8);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].resource, KS_EV_POD);
    assert_int_equal(ev[0].actions, KS_ACT_ADD);
    assert_int_equal(ev[1].resource, KS_EV_POD_GROUP);
    /* multiPoint expands it to exactly what scheduler-plugins' does. */
    assert_int_equal(ks_registry_points(reg, "Coscheduling"),
                     KS_EP_BIT(KS_EP_QUEUE_SORT) | KS_EP_BIT(KS_EP_PRE_FILTER) |
                         KS_EP_BIT(KS_EP_POST_FILTER) | KS_EP_BIT(KS_EP_RESERVE) |
                         KS_EP_BIT(KS_EP_PERMIT));
}

static void test_pod_group_tree(void **state) {
    (void)state;
    ks_pod_group pg = {.arena = ks_arena_new(1024),
                       .ns = ks_intern("ml"),
                       .name = ks_intern("train"),
                       .min_member = 4,
                       .schedule_timeout_seconds = 30,
                       .creation_ts = 1704164645,
                       .has_min_resources = true};
    pg.min_resources.milli_cpu = 1500;
    pg.min_resources.memory = 3LL << 30;
    ks_resource_set(&pg.min_resources, pg.arena, ks_intern("nvidia.com/gpu"), 8);
    const ks_tree *t = ks_pod_group_tree(&pg);
    assert_ptr_equal(ks_pod_group_tree(&pg), t); /* built once */
    int64_t v;
    const ks_args *spec = ks_args_get(t, "spec");
    assert_true(ks_args_int(ks_args_get(spec, "minMember"), &v));
    assert_int_equal(v, 4);
    assert_true(ks_args_int(ks_args_get(spec, "scheduleTimeoutSeconds"), &v));
    assert_int_equal(v, 30);
    const ks_args *mr = ks_args_get(spec, "minResources");
    assert_true(ks_args_quantity(ks_args_get(mr, "cpu"), "cpu", &v));
    assert_int_equal(v, 1500);
    assert_true(ks_args_quantity(ks_args_get(mr, "memory"), "memory", &v));
    assert_int_equal(v, 3LL << 30);
    assert_true(ks_args_quantity(ks_args_get(mr, "nvidia.com/gpu"), "nvidia.com/gpu", &v));
    assert_int_equal(v, 8);
    assert_true(ks_args_time(ks_args_get(ks_args_get(t, "metadata"), "creationTimestamp"), &v));
    assert_int_equal(v, 1704164645);
    assert_string_equal(ks_args_string(ks_args_get(ks_args_get(t, "metadata"), "namespace")), "ml");
    ks_arena_free(pg.arena);
}

static int setup(void **state) {
    (void)state;
    ks_api_init();
    reg = ks_registry_new();
    char *err = NULL;
    if (!ks_plugin_load(reg, KS_BUILD_DIR "/plugins/Coscheduling.so", &err)) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return -1;
    }
    ops = ks_registry_find(reg, "Coscheduling");
    return ops ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ks_registry_free(reg);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permit_waits_then_allows_all),
        cmocka_unit_test(test_permit_counts_bound_members),
        cmocka_unit_test(test_permit_unknown_group),
        cmocka_unit_test(test_post_filter_rejects_the_gang),
        cmocka_unit_test(test_post_filter_small_gap_keeps_waiting),
        cmocka_unit_test(test_unreserve_rejects_the_others),
        cmocka_unit_test(test_pre_filter),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_events_and_points),
        cmocka_unit_test(test_pod_group_tree),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
