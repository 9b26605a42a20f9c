#include "sim/gpu_frag.h"
#include "api/node.h"
#include "api/pod.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdlib.h>
#include <string.h>

#define MILLI 1000
#define MAX_GPUS 64

static int64_t num(const char *s, int64_t dflt) {
    if (!s || !*s) return dflt;
    char *end;
    long long v = strtoll(s, &end, 10);
    return end == s ? dflt : (int64_t)v;
}

/* A pod's GPU shape: open-gpu-share's annotations, else whole
 * nvidia.com/gpu devices with openb/gpu-milli as the share. */
static void shape_of(const ks_pod *p, ks_gpu_task_type *t) {
    memset(t, 0, sizeof(*t));
    t->cpu = ks_pod_request(p, "cpu");
    t->model = "";
    const char *cnt = ks_pod_annotation(p, "alibabacloud.com/gpu-count");
    if (cnt) {
        t->count = (int)num(cnt, 0);
        t->milli = num(ks_pod_annotation(p, "alibabacloud.com/gpu-milli"), MILLI);
        const char *m = ks_pod_annotation(p, "alibabacloud.com/gpu-card-model");
        if (m) t->model = m;
    } else {
        t->count = (int)ks_pod_request(p, "nvidia.com/gpu");
        t->milli = num(ks_pod_annotation(p, "openb/gpu-milli"), MILLI);
    }
    if (t->count <= 0) t->count = 0, t->milli = 0;
    if (t->milli > MILLI || t->milli <= 0) t->milli = t->count ? MILLI : 0;
}

static int cmp_type(const void *pa, const void *pb) {
    const ks_gpu_task_type *a = pa, *b = pb;
    if (a->freq != b->freq) return a->freq > b->freq ? -1 : 1;
    if (a->cpu != b->cpu) return a->cpu > b->cpu ? -1 : 1;
    if (a->milli != b->milli) return a->milli > b->milli ? -1 : 1;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return -strcmp(a->model, b->model);
}

void ks_gpu_workload_of(ks_gpu_workload *w, const ks_cluster *c) {
    memset(w, 0, sizeof(*w));
    size_t cap = 0;
    for (uint32_t i = 0; i < c->pods.n; i++) {
        ks_gpu_task_type t;
        shape_of(c->pods.v[i], &t);
        size_t j = 0;
        while (j < w->n && !(w->v[j].cpu == t.cpu && w->v[j].milli == t.milli && w->v[j].count == t.count &&
                             !strcmp(w->v[j].model, t.model)))
            j++;
        if (j == w->n) {
            KS_GROW(w->v, cap, w->n + 1);
            w->v[w->n++] = t;
        }
        w->v[j].freq += 1;
    }
    if (!w->n) return;
    qsort(w->v, w->n, sizeof(*w->v), cmp_type);
    double total = c->pods.n, cum = 0;
    size_t keep = 0;
    while (keep < w->n && cum < 0.95 * total) cum += w->v[keep++].freq;
    w->n = keep;
    for (size_t i = 0; i < keep; i++) w->v[i].freq /= cum;
}

void ks_gpu_workload_free(ks_gpu_workload *w) {
    free(w->v);
    memset(w, 0, sizeof(*w));
}

static bool model_ok(const char *node_model, const char *want) {
    if (!*want) return true;
    if (!node_model || !*node_model) return false;
    size_t n = strlen(node_model);
    for (const char *s = want; *s;) {
        size_t len = strcspn(s, "|");
        if (len == n && !strncmp(s, node_model, n)) return true;
        s += len + (s[len] == '|');
    }
    return false;
}

typedef struct gnode {
    int ngpu;
    bool share; /* open-gpu-share accounting, else whole devices */
    int32_t left[MAX_GPUS];
    int64_t cpu_left;
    const char *model;
} gnode;

/* Put a bound pod on g's GPUs: its gpu-index, else the tightest fit. */
static void place(gnode *g, const ks_pod *p) {
    ks_gpu_task_type t;
    shape_of(p, &t);
    if (!t.count) return;
    if (!g->share) { /* whole devices, counted as used from the end */
        for (int k = 0; k < t.count; k++) {
            int i = g->ngpu - 1;
            while (i >= 0 && g->left[i] < MILLI) i--;
            if (i < 0) break;
            g->left[i] = 0;
        }
        return;
    }
    const char *idx = ks_pod_annotation(p, "alibabacloud.com/gpu-index");
    if (idx && *idx) {
        for (const char *s = idx; *s;) {
            char *end;
            long v = strtol(s, &end, 10);
            if (end == s) break;
            if (v >= 0 && v < g->ngpu) g->left[v] -= (int32_t)t.milli;
            s = *end == '-' ? end + 1 : end;
            if (s == end && *s) break;
        }
        return;
    }
    for (int k = 0; k < t.count; k++) {
        int best = -1;
        for (int i = 0; i < g->ngpu; i++)
            if (g->left[i] >= t.milli && (best < 0 || g->left[i] < g->left[best])) best = i;
        if (best < 0) break;
        g->left[best] -= (int32_t)t.milli;
    }
}

static ks_gpu_frag node_frag(const ks_gpu_workload *w, const gnode *g) {
    ks_gpu_frag f = {0, 0};
    int64_t total = 0;
    for (int i = 0; i < g->ngpu; i++) total += g->left[i] > 0 ? g->left[i] : 0;
    f.idle_milli = (double)total;
    if (!total) return f;
    for (size_t k = 0; k < w->n; k++) {
        const ks_gpu_task_type *t = &w->v[k];
        int64_t unusable = total;
        if (t->milli && model_ok(g->model, t->model) && g->cpu_left >= t->cpu) {
            int fit = 0;
            int64_t small = 0;
            for (int i = 0; i < g->ngpu; i++) {
                if (g->left[i] >= t->milli) fit++;
                else if (g->left[i] > 0) small += g->left[i];
            }
            if (fit >= t->count) unusable = small;
        }
        f.frag_milli += t->freq * (double)unusable;
    }
    return f;
}

ks_gpu_frag ks_gpu_frag_cluster(const ks_gpu_workload *w, const ks_cluster *c, ks_gpu_frag *per_node) {
    ks_gpu_frag sum = {0, 0};
    size_t n = c->nodes.n;
    gnode *g = ks_xcalloc(n ? n : 1, sizeof(*g));
    ks_map at; /* node name -> index + 1 */
    ks_map_init(&at);
    for (size_t i = 0; i < n; i++) {
        const ks_node *node = c->nodes.v[i];
        ks_map_put(&at, node->name, (void *)(uintptr_t)(i + 1));
        int64_t share = ks_node_capacity(node, "alibabacloud.com/gpu-count");
        g[i].share = share > 0;
        int64_t ngpu = g[i].share ? share : ks_node_allocatable(node, "nvidia.com/gpu");
        g[i].ngpu = (int)(ngpu < 0 ? 0 : ngpu > MAX_GPUS ? MAX_GPUS : ngpu);
        for (int k = 0; k < g[i].ngpu; k++) g[i].left[k] = MILLI;
        g[i].cpu_left = ks_node_allocatable(node, "cpu");
        g[i].model = ks_node_label(node, "alibabacloud.com/gpu-card-model");
    }
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (!p->node_name) continue;
        uintptr_t j = (uintptr_t)ks_map_get(&at, p->node_name);
        if (!j) continue;
        g[j - 1].cpu_left -= ks_pod_request(p, "cpu");
        place(&g[j - 1], p);
    }
    for (size_t i = 0; i < n; i++) {
        ks_gpu_frag f = node_frag(w, &g[i]);
        sum.frag_milli += f.frag_milli;
        sum.idle_milli += f.idle_milli;
        if (per_node) per_node[i] = f;
    }
    ks_map_free(&at);
    free(g);
    return sum;
}
