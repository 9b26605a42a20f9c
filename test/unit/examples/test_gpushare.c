/* GpuShare (examples/plugins/GpuShare), loaded from its .so and driven
 * extension point by extension point on hand-worked nodes: per-GPU fit
 * (Filter), the GPU chosen at Reserve and written at PreBind (through the
 * handle's annotation patch, captured here), FGD's score of a small node
 * against a small workload. The whole flow through the real scheduler is
 * in test/scenarios/gpushare-fit and gpushare-fgd. */
#include "api/cluster.h"
#include "backend/api_calls.h"
#include "codec/decode.h"
#include "codec/errors.h"
#include "codec/tree.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/loader.h"
#include "framework/snapshot.h"
#include "framework/status.h"
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

static ks_registry *reg;

/* Four V100M16 GPUs, left = [500, 700, 0, 1000] (0.5 on GPU 0, 0.3 on
 * GPU 1, GPU 2 whole); two T4 GPUs at [500, 500]; two V100M16 at
 * [500, 600]; two idle V100M16. */
static const char cluster_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: four, labels: {alibabacloud.com/gpu-card-model: V100M16}}\n"
    "status:\n"
    "  allocatable: {cpu: '32', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '4'}\n"
    "  capacity: {cpu: '32', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '4'}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: halves, labels: {alibabacloud.com/gpu-card-model: T4}}\n"
    "status:\n"
    "  allocatable: {cpu: '32', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '2'}\n"
    "  capacity: {cpu: '32', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '2'}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: fgd, labels: {alibabacloud.com/gpu-card-model: V100M16}}\n"
    "status:\n"
    "  allocatable: {cpu: '32', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '2'}\n"
    "  capacity: {cpu: '32', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '2'}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: idle, labels: {alibabacloud.com/gpu-card-model: V100M16}}\n"
    "status:\n"
    "  allocatable: {cpu: '8', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '2'}\n"
    "  capacity: {cpu: '8', memory: 64Gi, pods: '110', alibabacloud.com/gpu-count: '2'}\n"
#define RUN(name, node, milli, idx)                                                                            \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, annotations: "          \
    "{alibabacloud.com/gpu-count: '1', alibabacloud.com/gpu-milli: '" milli "', alibabacloud.com/gpu-index: '" \
    idx "'}}\nspec: {nodeName: " node ", containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    RUN("four-a", "four", "500", "0") RUN("four-b", "four", "300", "1") RUN("four-c", "four", "1000", "2")
    RUN("halves-a", "halves", "500", "0") RUN("halves-b", "halves", "500", "1")
    RUN("fgd-a", "fgd", "500", "0") RUN("fgd-b", "fgd", "400", "1");

typedef struct world {
    ks_framework fw;
    ks_cluster *c;
    ks_snapshot *snap;
    ks_clock *clock;
    ks_cycle_state *st;
    const ks_plugin_ops *ops;
    void *self;
    /* the last annotation patch the plugin asked for */
    int patches;
    char index[64], assume[64];
    bool removed;
} world;

static ks_status *env_api_call(void *ctx, const ks_api_call *call) {
    world *w = ctx;
    /* the REST form: a patch of the pod's annotations */
    assert_int_equal(call->type, KS_CALL_OBJECT_WRITE);
    assert_string_equal(call->write->kind, "Pod");
    w->patches++;
    w->removed = false;
    json_t *body = call->write->patch(call->write);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(json_object_get(body, "metadata"), "annotations"), k, v) {
        if (json_is_null(v)) w->removed = true;
        else if (!strcmp(k, "alibabacloud.com/gpu-index")) snprintf(w->index, sizeof(w->index), "%s", json_string_value(v));
        else if (!strcmp(k, "alibabacloud.com/assume-time")) snprintf(w->assume, sizeof(w->assume), "%s", json_string_value(v));
    }
    json_decref(body);
    return NULL;
}

static int64_t env_now(void *ctx) { return ks_clock_now(((world *)ctx)->clock); }

static ks_tree *parse_args(ks_arena *a, const char *yaml) {
    ks_tree **docs = NULL;
    uint32_t n = 0;
    char *err = NULL;
    assert_true(kt_parse(a, "args", yaml, strlen(yaml), &docs, &n, &err));
    assert_int_equal(n, 1);
    return docs[0];
}

static world *world_new(const char *plugin, const char *args_yaml) {
    world *w = calloc(1, sizeof(*w));
    ks_errors errs = {0};
    w->c = ks_cluster_new();
    assert_true(ks_load_buffer(w->c, "cluster.yaml", cluster_yaml, strlen(cluster_yaml), &errs));
    ks_errors_free(&errs);
    char *err = NULL;
    assert_true(ks_cluster_admit(w->c, &err));
    w->snap = ks_snapshot_from(w->c->nodes.v, w->c->nodes.n, w->c->pods.v, w->c->pods.n);
    w->clock = ks_clock_sim_new(1700000000LL * KS_NS_PER_SEC);
    w->fw.handle.fw = &w->fw;
    w->fw.snapshot = w->snap;
    w->fw.env = (ks_framework_env){.ctx = w,
                                   .now = env_now,
                                   .api_call = env_api_call};
    w->st = ks_cycle_state_new();
    w->ops = ks_registry_find(reg, plugin);
    assert_non_null(w->ops);
    ks_arena *a = ks_arena_new(4096);
    w->self = w->ops->create(args_yaml ? parse_args(a, args_yaml) : NULL, &w->fw.handle, &err);
    ks_arena_free(a);
    if (err) fprintf(stderr, "%s\n", err);
    assert_null(err);
    assert_non_null(w->self);
    return w;
}

static void world_free(world *w) {
    w->ops->destroy(w->self);
    ks_cycle_state_free(w->st);
    ks_snapshot_free(w->snap);
    ks_cluster_free(w->c);
    ks_clock_free(w->clock);
    free(w);
}

/* A pending task: count GPUs of milli each (count 0: CPU only). */
static ks_pod *task(const char *name, int count, int milli, const char *model) {
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, uid: uid-%s, annotations: "
             "{alibabacloud.com/gpu-count: '%d', alibabacloud.com/gpu-milli: '%d'%s%s%s}}\n"
             "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n",
             name, name, count, milli, model ? ", alibabacloud.com/gpu-card-model: '" : "", model ? model : "",
             model ? "'" : "");
    ks_cluster *c = ks_cluster_new();
    ks_errors errs = {0};
    assert_true(ks_load_buffer(c, "task.yaml", yaml, strlen(yaml), &errs));
    ks_errors_free(&errs);
    char *err = NULL;
    assert_true(ks_cluster_admit(c, &err));
    ks_pod *p = ks_pod_ref(c->pods.v[0]);
    ks_cluster_free(c);
    return p;
}

static const ks_node_info *node(world *w, const char *name) {
    const ks_node_info *ni = ks_snapshot_get(w->snap, ks_intern(name));
    assert_non_null(ni);
    return ni;
}

/* Filter's verdict on a node: "" (fits) or the reason. */
static const char *filter(world *w, ks_pod *p, const char *n, char *buf, size_t len) {
    ks_status *s = w->ops->filter(w->self, w->st, p, node(w, n));
    snprintf(buf, len, "%s", s ? ks_status_reason(s, 0) : "");
    ks_status_free(s);
    return buf;
}

/* ---- per-GPU fit ---- */

static void test_fit_per_gpu(void **state) {
    (void)state;
    world *w = world_new("OpenGpuShare", NULL);
    char b[256];
    ks_pod *p;
    /* 0.6: GPU 1 (0.7 free) or GPU 3 */
    p = task("share-06", 1, 600, NULL);
    assert_string_equal(filter(w, p, "four", b, sizeof(b)), "");
    /* two T4 GPUs with 0.5 free each: 1.0 free in sum, but no GPU has 0.6 */
    assert_string_equal(filter(w, p, "halves", b, sizeof(b)), "node(s) had no GPU with enough free share");
    ks_pod_unref(p);
    /* 0.5 fits the halves exactly */
    p = task("share-05", 1, 500, NULL);
    assert_string_equal(filter(w, p, "halves", b, sizeof(b)), "");
    ks_pod_unref(p);
    /* whole GPUs: one is free on four (GPU 3), two are not */
    p = task("one-gpu", 1, 1000, NULL);
    assert_string_equal(filter(w, p, "four", b, sizeof(b)), "");
    ks_pod_unref(p);
    p = task("two-gpus", 2, 1000, NULL);
    assert_string_equal(filter(w, p, "four", b, sizeof(b)), "node(s) had not enough free GPUs");
    ks_pod_unref(p);
    /* models */
    p = task("t4-only", 1, 100, "T4");
    assert_string_equal(filter(w, p, "four", b, sizeof(b)), "node(s) didn't match the GPU model");
    assert_string_equal(filter(w, p, "halves", b, sizeof(b)), "");
    ks_pod_unref(p);
    p = task("v100", 1, 100, "V100M16|V100M32");
    assert_string_equal(filter(w, p, "four", b, sizeof(b)), "");
    ks_pod_unref(p);
    world_free(w);
}

/* ---- the GPU chosen at Reserve, written at PreBind ---- */

/* Reserve then PreBind pod on n; returns the index written ("" none). */
static const char *place(world *w, ks_pod *p, const char *n) {
    w->index[0] = '\0';
    assert_null(w->ops->reserve(w->self, w->st, p, n));
    assert_null(w->ops->pre_bind_pre_flight(w->self, w->st, p, n));
    assert_null(w->ops->pre_bind(w->self, w->st, p, n));
    return w->index;
}

static void test_gpu_choice(void **state) {
    (void)state;
    struct {
        const char *sel;
        int count, milli;
        const char *want;
    } cases[] = {
        {"best", 1, 600, "1"},   /* the tightest that fits: 0.7 free */
        {"worst", 1, 600, "3"},  /* the loosest: the idle GPU */
        {"best", 1, 1000, "3"},  /* whole GPUs: the free ones by index */
        {"best", 1, 300, "0"},   /* 0.5 free is tighter than 0.7 */
        {"worst", 1, 300, "3"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[64];
        snprintf(args, sizeof(args), "{gpuSelection: %s}", cases[i].sel);
        world *w = world_new("OpenGpuShare", args);
        ks_pod *p = task("t", cases[i].count, cases[i].milli, NULL);
        assert_string_equal(place(w, p, "four"), cases[i].want);
        assert_int_equal(w->patches, 1);
        assert_string_equal(w->assume, "1700000000000000000"); /* the scheduler's clock, in ns */
        ks_pod_unref(p);
        world_free(w);
    }
}

static void test_prebind_and_unreserve(void **state) {
    (void)state;
    world *w = world_new("OpenGpuShare", NULL);
    ks_pod *p = task("t", 1, 200, NULL);
    /* nothing reserved: nothing written */
    assert_null(w->ops->pre_bind(w->self, w->st, p, "four"));
    assert_int_equal(w->patches, 0);
    assert_string_equal(place(w, p, "four"), "0");
    /* the binding fails: Unreserve takes the index off the pod again */
    w->ops->unreserve(w->self, w->st, p, "four");
    assert_int_equal(w->patches, 2);
    assert_true(w->removed);
    /* a second Unreserve has nothing to take off */
    w->ops->unreserve(w->self, w->st, p, "four");
    assert_int_equal(w->patches, 2);
    ks_pod_unref(p);
    /* a pod that comes with its index: nothing to choose or write */
    ks_pod *given = ks_pod_ref(w->c->pods.v[0]);
    ks_status *s = w->ops->pre_bind_pre_flight(w->self, w->st, given, "four");
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    ks_pod_unref(given);
    /* CPU-only: skipped */
    ks_pod *cpu = task("cpu", 0, 0, NULL);
    s = w->ops->pre_bind_pre_flight(w->self, w->st, cpu, "four");
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    ks_pod_unref(cpu);
    world_free(w);
}

/* ---- FGD ---- */

/* Node fgd, left [500, 600]; the workload one type asking 0.5 of a GPU.
 * Before: both GPUs fit the type, frag 0. A 0.1 task on GPU 0 leaves
 * [400, 600]: GPU 0 cannot take the type, frag 400, score
 * floor(100 sigmoid(-0.4)) = 40; on GPU 1 [500, 500]: frag 0, score
 * floor(100 sigmoid(0)) = 50. FGD takes GPU 1 and scores 50; best fit
 * would take GPU 0. */
static void test_fgd_score_and_choice(void **state) {
    (void)state;
    const char *wl = "[{milliCpu: 1000, milliGpu: 500, gpuCount: 1, weight: 1}]";
    char args[256];
    snprintf(args, sizeof(args), "{typicalPods: %s}", wl);
    world *w = world_new("FGDScore", args);
    ks_pod *p = task("t", 1, 100, NULL);
    int64_t score = -1;
    assert_null(w->ops->score(w->self, w->st, p, node(w, "fgd"), &score));
    assert_int_equal(score, 50);
    world_free(w);

    snprintf(args, sizeof(args), "{gpuSelection: FGD, typicalPods: %s}", wl);
    w = world_new("OpenGpuShare", args);
    assert_string_equal(place(w, p, "fgd"), "1");
    world_free(w);
    w = world_new("OpenGpuShare", "{gpuSelection: best}");
    assert_string_equal(place(w, p, "fgd"), "0");
    world_free(w);
    ks_pod_unref(p);
}

/* Node idle, two idle GPUs; the workload half 0.5 tasks, half whole-GPU
 * tasks. Before: frag 0. A 0.5 task leaves [500, 1000]: the whole-GPU
 * type cannot use GPU 0's 500, frag 0.5 x 500 = 250, score
 * floor(100 sigmoid(-0.25)) = 43. A CPU-only task asks nothing: 100. */
static void test_fgd_score_idle_node(void **state) {
    (void)state;
    world *w = world_new("FGDScore", "{typicalPods: [{milliCpu: 1000, milliGpu: 500, gpuCount: 1, weight: 1},"
                                     " {milliCpu: 1000, milliGpu: 1000, gpuCount: 1, weight: 1}]}");
    ks_pod *p = task("t", 1, 500, NULL);
    int64_t score = -1;
    assert_null(w->ops->score(w->self, w->st, p, node(w, "idle"), &score));
    assert_int_equal(score, 43);
    ks_pod_unref(p);
    world_free(w);
}

static int setup(void **state) {
    (void)state;
    ks_api_init();
    reg = ks_registry_new();
    char *err = NULL;
    if (!ks_plugin_load(reg, KS_BUILD_DIR "/plugins/GpuShare.so", &err)) {
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
        cmocka_unit_test(test_fit_per_gpu),
        cmocka_unit_test(test_gpu_choice),
        cmocka_unit_test(test_prebind_and_unreserve),
        cmocka_unit_test(test_fgd_score_and_choice),
        cmocka_unit_test(test_fgd_score_idle_node),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
