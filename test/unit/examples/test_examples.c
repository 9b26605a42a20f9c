/* The example plugins of examples/plugins, loaded from their .so files as
 * ksched loads them, each called on hand-built NodeInfos: verdicts,
 * messages, raw and normalized scores, args handling. Also the public
 * accessors they rely on. */
#include "api/node.h"
#include "api/pod.h"
#include "api/resource.h"
#include "codec/tree.h"
#include "framework/cycle_state.h"
#include "framework/events.h"
#include "framework/framework_internal.h"
#include "framework/loader.h"
#include "framework/nodeinfo.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PLUGINS KS_BUILD_DIR "/plugins/"

static ks_registry *reg;

static const ks_plugin_ops *plugin(const char *name) {
    const ks_plugin_ops *ops = ks_registry_find(reg, name);
    assert_non_null(ops);
    return ops;
}

/* ---- building objects ---- */

typedef struct kv {
    const char *k, *v;
} kv;

static void set_labels(ks_arena *a, ks_labels *l, const kv *labels) {
    size_t n = 0;
    while (labels && labels[n].k) n++;
    l->n = (uint32_t)n;
    l->kv = n ? ks_arena_calloc(a, n, sizeof(ks_label)) : NULL;
    for (size_t i = 0; i < n; i++)
        l->kv[i] = (ks_label){ks_intern(labels[i].k), ks_intern(labels[i].v)};
    assert_true(ks_labels_sort(l));
}

static ks_node *mk_node(const char *name, const kv *labels, int64_t milli_cpu, int64_t gpus) {
    ks_node *n = ks_node_new();
    n->name = ks_intern(name);
    set_labels(n->arena, &n->labels, labels);
    n->allocatable.milli_cpu = milli_cpu;
    n->allocatable.memory = 8LL << 30;
    n->allocatable.allowed_pods = 110;
    if (gpus) ks_resource_set(&n->allocatable, n->arena, ks_intern("nvidia.com/gpu"), gpus);
    n->capacity = n->allocatable;
    return n;
}

static ks_pod *mk_pod(const char *name, const kv *labels, int64_t milli_cpu, int64_t gpus) {
    ks_pod *p = ks_pod_new();
    p->ns = ks_intern("default");
    p->name = ks_intern(name);
    p->uid = ks_arena_printf(p->arena, "uid-%s", name);
    p->key = ks_pod_key(p->ns, p->name);
    p->scheduler_name = ks_intern("default-scheduler");
    set_labels(p->arena, &p->labels, labels);
    p->requests.milli_cpu = milli_cpu;
    if (gpus) ks_resource_set(&p->requests, p->arena, ks_intern("nvidia.com/gpu"), gpus);
    return p;
}

/* A NodeInfo for node with npods pods of 100m each on it. */
static ks_node_info *mk_info(ks_node *node, int npods) {
    ks_node_info *ni = ks_node_info_new();
    ks_node_info_set_node(ni, node);
    ks_node_unref(node);
    for (int i = 0; i < npods; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s-pod-%d", ks_str(node->name), i);
        ks_pod *p = mk_pod(name, NULL, 100, 0);
        p->node_name = node->name;
        ks_node_info_add_pod(ni, p);
        ks_pod_unref(p);
    }
    return ni;
}

static void expect_status(ks_status *s, ks_code code, const char *reason) {
    assert_int_equal(ks_status_code(s), code);
    if (reason) {
        assert_int_equal(ks_status_nreasons(s), 1);
        assert_string_equal(ks_status_reason(s, 0), reason);
    }
    ks_status_free(s);
}

/* ---- AvoidNodePlugin ---- */

static void test_avoid_node(void **state) {
    (void)state;
    const ks_plugin_ops *ops = plugin("AvoidNodePlugin");
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pod *pod = mk_pod("web", NULL, 100, 0);
    ks_node_info *avoid = mk_info(mk_node("node01", (kv[]){{"avoid", "true"}, {0}}, 4000, 0), 0);
    ks_node_info *other = mk_info(mk_node("node02", (kv[]){{"avoid", "false"}, {0}}, 4000, 0), 0);
    ks_node_info *bare = mk_info(mk_node("node03", NULL, 4000, 0), 0);

    expect_status(ops->filter(NULL, st, pod, avoid), KS_UNSCHEDULABLE,
                  "node node01 is labeled avoid=true");
    assert_null(ops->filter(NULL, st, pod, other));
    assert_null(ops->filter(NULL, st, pod, bare));
    assert_null(ops->score);
    assert_null(ops->create);

    ks_node_info_free(avoid);
    ks_node_info_free(other);
    ks_node_info_free(bare);
    ks_pod_unref(pod);
    ks_cycle_state_free(st);
}

/* ---- NodeTypeFilter ---- */

static void test_node_type_filter(void **state) {
    (void)state;
    const ks_plugin_ops *ops = plugin("NodeTypeFilter");
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pod *pod = mk_pod("web", NULL, 100, 0);
    ks_node_info *special = mk_info(mk_node("s1", (kv[]){{"node-type", "special"}, {0}}, 4000, 0), 0);
    ks_node_info *plain = mk_info(mk_node("p1", (kv[]){{"node-type", "plain"}, {0}}, 4000, 0), 0);
    ks_node_info *bare = mk_info(mk_node("b1", NULL, 4000, 0), 0);

    assert_null(ops->filter(NULL, st, pod, special));
    expect_status(ops->filter(NULL, st, pod, plain), KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                  "node(s) didn't have label node-type=special");
    expect_status(ops->filter(NULL, st, pod, bare), KS_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL);

    /* Its QueueingHint, through the public event objects: a node that
     * becomes special queues the pod, anything else skips. */
    ks_event_object s_obj, p_obj, b_obj;
    const ks_event_object *so = ks_event_object_of(&s_obj, KS_KIND_NODE, special->node);
    const ks_event_object *po = ks_event_object_of(&p_obj, KS_KIND_NODE, plain->node);
    const ks_event_object *bo = ks_event_object_of(&b_obj, KS_KIND_NODE, bare->node);
    ks_cluster_event add = {KS_EV_NODE, KS_ACT_ADD}, relabel = {KS_EV_NODE, KS_ACT_UPDATE_NODE_LABEL};
    char *err = NULL;
    assert_non_null(ops->queueing_hint);
    assert_int_equal(ops->queueing_hint(NULL, add, pod, NULL, so, &err), KS_QUEUE);
    assert_int_equal(ops->queueing_hint(NULL, add, pod, NULL, po, &err), KS_QUEUE_SKIP);
    assert_int_equal(ops->queueing_hint(NULL, relabel, pod, bo, so, &err), KS_QUEUE);
    assert_int_equal(ops->queueing_hint(NULL, relabel, pod, so, so, &err), KS_QUEUE_SKIP);
    assert_int_equal(ops->queueing_hint(NULL, relabel, pod, so, po, &err), KS_QUEUE_SKIP);
    assert_null(err);
    assert_string_equal(ks_event_object_kind(so), "Node");
    assert_string_equal(ks_event_object_name(so), "s1");
    assert_null(ks_event_object_pod(so));

    ks_node_info_free(special);
    ks_node_info_free(plain);
    ks_node_info_free(bare);
    ks_pod_unref(pod);
    ks_cycle_state_free(st);
}

/* ---- PodDensityScore ---- */

static void test_pod_density(void **state) {
    (void)state;
    const ks_plugin_ops *ops = plugin("PodDensityScore");
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pod *pod = mk_pod("web", NULL, 100, 0);
    ks_node_info *ni[4] = {
        mk_info(mk_node("n0", NULL, 64000, 0), 0),
        mk_info(mk_node("n1", NULL, 64000, 0), 3),
        mk_info(mk_node("n2", NULL, 64000, 0), 50),
        mk_info(mk_node("n3", NULL, 64000, 0), 120),
    };
    const int64_t raw[4] = {100, 97, 50, 0};
    ks_node_score scores[4];
    for (int i = 0; i < 4; i++) {
        int64_t s = -1;
        assert_null(ops->score(NULL, st, pod, ni[i], &s));
        assert_int_equal(s, raw[i]);
        scores[i] = (ks_node_score){ni[i], s};
    }
    assert_null(ops->normalize_score(NULL, st, pod, scores, 4));
    assert_int_equal(scores[0].score, 100);
    assert_int_equal(scores[1].score, 97);
    assert_int_equal(scores[2].score, 50);
    assert_int_equal(scores[3].score, 0);

    /* Without an empty node the best one still gets 100. */
    ks_node_score two[2] = {{ni[1], 97}, {ni[2], 50}};
    assert_null(ops->normalize_score(NULL, st, pod, two, 2));
    assert_int_equal(two[0].score, 100);
    assert_int_equal(two[1].score, 51);
    /* All zero stays zero (no division by zero). */
    ks_node_score zero[1] = {{ni[3], 0}};
    assert_null(ops->normalize_score(NULL, st, pod, zero, 1));
    assert_int_equal(zero[0].score, 0);

    for (int i = 0; i < 4; i++) ks_node_info_free(ni[i]);
    ks_pod_unref(pod);
    ks_cycle_state_free(st);
}

/* ---- GPUPriorityPlugin ---- */

static ks_tree *args_map(ks_arena *a, const kv *entries) {
    ks_tree *t = kt_new(a, KT_MAP, 0);
    for (size_t i = 0; entries && entries[i].k; i++) {
        ks_tree *v;
        if (strcmp(entries[i].v, "true") == 0 || strcmp(entries[i].v, "false") == 0)
            v = kt_bool(a, strcmp(entries[i].v, "true") == 0);
        else v = kt_string(a, entries[i].v, 0);
        kt_map_add(a, t, entries[i].k, v);
    }
    return t;
}

static void test_gpu_priority(void **state) {
    (void)state;
    const ks_plugin_ops *ops = plugin("GPUPriorityPlugin");
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pod *pod = mk_pod("train", NULL, 100, 1);
    ks_node_info *ni[3] = {
        mk_info(mk_node("cpu-only", NULL, 8000, 0), 0),
        mk_info(mk_node("gpu-2", NULL, 8000, 2), 0),
        mk_info(mk_node("gpu-8", NULL, 8000, 8), 0),
    };
    /* Two GPUs already requested on gpu-8. */
    ks_pod *user = mk_pod("user", NULL, 100, 2);
    user->node_name = ks_intern("gpu-8");
    ks_node_info_add_pod(ni[2], user);
    ks_pod_unref(user);

    char *err = NULL;
    void *self = ops->create(NULL, NULL, &err);
    assert_non_null(self);
    ks_node_score scores[3];
    const int64_t raw[3] = {0, 2, 8};
    for (int i = 0; i < 3; i++) {
        int64_t s = -1;
        assert_null(ops->score(self, st, pod, ni[i], &s));
        assert_int_equal(s, raw[i]);
        scores[i] = (ks_node_score){ni[i], s};
    }
    assert_null(ops->normalize_score(self, st, pod, scores, 3));
    assert_int_equal(scores[0].score, 0);
    assert_int_equal(scores[1].score, 25);
    assert_int_equal(scores[2].score, 100);
    ops->destroy(self);

    /* subtractRequested: free GPUs only (gpu-8 has 6 left). */
    ks_arena *a = ks_arena_new(1024);
    self = ops->create(args_map(a, (kv[]){{"subtractRequested", "true"}, {0}}), NULL, &err);
    assert_non_null(self);
    int64_t s;
    assert_null(ops->score(self, st, pod, ni[2], &s));
    assert_int_equal(s, 6);
    ops->destroy(self);

    /* Another resource name. */
    self = ops->create(args_map(a, (kv[]){{"resourceName", "example.com/fpga"}, {0}}), NULL, &err);
    assert_non_null(self);
    assert_null(ops->score(self, st, pod, ni[2], &s));
    assert_int_equal(s, 0);
    ops->destroy(self);

    /* Refused args. */
    assert_null(ops->create(args_map(a, (kv[]){{"resourcename", "x"}, {0}}), NULL, &err));
    assert_string_equal(err, "unknown field \"resourcename\"");
    free(err);
    err = NULL;
    assert_null(ops->create(args_map(a, (kv[]){{"subtractRequested", "yes"}, {0}}), NULL, &err));
    assert_string_equal(err, "subtractRequested: must be true or false");
    free(err);
    ks_arena_free(a);

    for (int i = 0; i < 3; i++) ks_node_info_free(ni[i]);
    ks_pod_unref(pod);
    ks_cycle_state_free(st);
}

/* ---- the accessors plugins use ---- */

static void test_accessors(void **state) {
    (void)state;
    ks_node *n = mk_node("acc", (kv[]){{"zone", "a"}, {"avoid", "true"}, {0}}, 3500, 4);
    n->ntaints = 1;
    n->taints = ks_arena_calloc(n->arena, 1, sizeof(ks_taint));
    n->taints[0] = (ks_taint){ks_intern("gpu"), ks_intern("true"), KS_EFFECT_NO_SCHEDULE};
    ks_node_info *ni = mk_info(n, 2);
    const ks_node *node = ks_node_info_node(ni);

    assert_string_equal(ks_node_name(node), "acc");
    assert_string_equal(ks_node_info_name(ni), "acc");
    assert_string_equal(ks_node_label(node, "zone"), "a");
    assert_null(ks_node_label(node, "no-such-label-anywhere"));
    assert_int_equal(ks_node_nlabels(node), 2);
    const char *k, *v, *e;
    ks_node_taint(node, 0, &k, &v, &e);
    assert_string_equal(k, "gpu");
    assert_string_equal(v, "true");
    assert_string_equal(e, "NoSchedule");
    assert_int_equal(ks_node_allocatable(node, "cpu"), 3500);
    assert_int_equal(ks_node_allocatable(node, "memory"), 8LL << 30);
    assert_int_equal(ks_node_allocatable(node, "nvidia.com/gpu"), 4);
    assert_int_equal(ks_node_allocatable(node, "example.com/unknown"), 0);
    assert_int_equal(ks_node_info_npods(ni), 2);
    assert_int_equal(ks_node_info_requested(ni, "cpu"), 200);
    assert_int_equal(ks_node_info_requested(ni, "pods"), 2);

    ks_pod *p = mk_pod("acc-pod", (kv[]){{"app", "web"}, {0}}, 250, 1);
    assert_string_equal(ks_pod_namespace(p), "default");
    assert_string_equal(ks_pod_name(p), "acc-pod");
    assert_string_equal(ks_pod_uid(p), "uid-acc-pod");
    assert_string_equal(ks_pod_label(p, "app"), "web");
    assert_null(ks_pod_label(p, "tier"));
    assert_string_equal(ks_pod_node_name(p), "");
    assert_int_equal(ks_pod_request(p, "cpu"), 250);
    assert_int_equal(ks_pod_request(p, "nvidia.com/gpu"), 1);
    assert_ptr_equal(ks_pod_retain(p), p);
    ks_pod_release(p);

    ks_node_info_free(ni);
    ks_pod_unref(p);
}

static void test_args_readers(void **state) {
    (void)state;
    ks_arena *a = ks_arena_new(1024);
    int64_t v;
    assert_true(ks_args_quantity(kt_string(a, "1500m", 0), "cpu", &v));
    assert_int_equal(v, 1500);
    assert_true(ks_args_quantity(kt_string(a, "2", 0), "cpu", &v));
    assert_int_equal(v, 2000);
    assert_true(ks_args_quantity(kt_string(a, "1Gi", 0), "memory", &v));
    assert_int_equal(v, 1LL << 30);
    assert_true(ks_args_quantity(kt_int(a, 4), "nvidia.com/gpu", &v));
    assert_int_equal(v, 4);
    assert_false(ks_args_quantity(kt_string(a, "12XY", 0), "cpu", &v));
    assert_false(ks_args_quantity(NULL, "cpu", &v));

    assert_true(ks_args_time(kt_string(a, "2024-01-02T03:04:05Z", 0), &v));
    assert_int_equal(v, 1704164645);
    assert_true(ks_args_time(kt_string(a, "2024-01-02T04:04:05.123+01:00", 0), &v));
    assert_int_equal(v, 1704164645);
    assert_false(ks_args_time(kt_string(a, "yesterday", 0), &v));
    assert_false(ks_args_time(kt_string(a, "2024-01-02T03:04:05", 0), &v));
    ks_arena_free(a);
}

static int setup(void **state) {
    (void)state;
    ks_api_init();
    reg = ks_registry_new();
    char *err = NULL;
    if (!ks_plugin_load_dir(reg, KS_BUILD_DIR "/plugins", &err)) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ks_registry_free(reg);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avoid_node),
        cmocka_unit_test(test_node_type_filter),
        cmocka_unit_test(test_pod_density),
        cmocka_unit_test(test_gpu_priority),
        cmocka_unit_test(test_accessors),
        cmocka_unit_test(test_args_readers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
