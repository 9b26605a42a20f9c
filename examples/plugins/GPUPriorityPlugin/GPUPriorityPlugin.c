/* GPUPriorityPlugin: prefer nodes with more GPUs.
 *
 * Score is the node's allocatable count of a GPU resource, and
 * NormalizeScore rescales so that the node with the most GPUs gets 100
 * (score * 100 / max). Nodes without GPUs score 0.
 *
 * Args (all optional) show how a plugin reads its pluginConfig:
 *
 *     pluginConfig:
 *     - name: GPUPriorityPlugin
 *       args:
 *         resourceName: nvidia.com/gpu   # the resource to count
 *         subtractRequested: false       # true: count only GPUs not yet requested
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <ksched/ksched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_priority {
    char *resource;
    bool subtract_requested;
} gpu_priority;

static char *errorf(const char *fmt, const char *arg) {
    size_t n = strlen(fmt) + strlen(arg) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, fmt, arg);
    return s;
}

static void *gpu_create(const ks_args *args, ks_handle *h, char **err) {
    (void)h;
    const char *resource = "nvidia.com/gpu";
    bool subtract = false;
    for (size_t i = 0; i < ks_args_len(args) && ks_args_is_map(args); i++) {
        const char *key = ks_args_key(args, i);
        const ks_args *v = ks_args_item(args, i);
        if (strcmp(key, "resourceName") == 0) {
            resource = ks_args_string(v);
            if (!resource || !*resource) {
                *err = errorf("%s: must be a non-empty string", key);
                return NULL;
            }
        } else if (strcmp(key, "subtractRequested") == 0) {
            if (!ks_args_bool(v, &subtract)) {
                *err = errorf("%s: must be true or false", key);
                return NULL;
            }
        } else if (strcmp(key, "apiVersion") != 0 && strcmp(key, "kind") != 0) {
            *err = errorf("unknown field \"%s\"", key);
            return NULL;
        }
    }
    gpu_priority *g = calloc(1, sizeof(*g));
    if (!g || !(g->resource = strdup(resource))) {
        free(g);
        *err = errorf("%s", "out of memory");
        return NULL;
    }
    g->subtract_requested = subtract;
    return g;
}

static void gpu_destroy(void *self) {
    gpu_priority *g = self;
    free(g->resource);
    free(g);
}

static ks_status *gpu_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *ni, int64_t *score) {
    (void)st, (void)pod;
    const gpu_priority *g = self;
    int64_t n = ks_node_info_allocatable(ni, g->resource);
    if (g->subtract_requested) n -= ks_node_info_requested(ni, g->resource);
    *score = n > 0 ? n : 0;
    return NULL;
}

static ks_status *gpu_normalize(void *self, ks_cycle_state *st, const ks_pod *pod,
                                ks_node_score *scores, size_t n) {
    (void)self, (void)st, (void)pod;
    int64_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max) max = scores[i].score;
    for (size_t i = 0; i < n; i++)
        scores[i].score = max ? scores[i].score * KS_MAX_NODE_SCORE / max : 0;
    return NULL;
}

static const ks_plugin_ops gpu_priority_ops = {
    .abi_version = KS_ABI_VERSION,
    .name = "GPUPriorityPlugin",
    .create = gpu_create,
    .destroy = gpu_destroy,
    .score = gpu_score,
    .normalize_score = gpu_normalize,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &gpu_priority_ops, NULL) ? 0 : 1;
}
