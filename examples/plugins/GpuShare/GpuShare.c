/* GPU sharing as open-gpu-share does it, and the six GPU-sharing score
 * policies of "Beware of Fragmentation" (Weng et al., USENIX ATC '23),
 * written from the paper's and its simulator's definitions
 * (hkust-adsl/kubernetes-scheduler-simulator). See docs/gpu-sharing.md.
 *
 * One shared object registers seven plugins:
 *
 *   OpenGpuShare        PreFilter, Filter, Reserve, Unreserve: per-GPU fit
 *                       (a 0.6 task needs one GPU with 0.6 free) and the
 *                       choice of the GPU(s) at Reserve
 *   RandomScore         one feasible node at random gets 100
 *   DotProductScore     Tetris' dot product of free and requested CPU/GPU
 *   GpuClusteringScore  keeps tasks of one GPU shape together
 *   GpuPackingScore     shared GPUs first, then used nodes, then idle ones
 *   BestFitScore        least free CPU/GPU left after placement
 *   FGDScore            fragmentation gradient descent
 *
 * Requests and capacity use open-gpu-share's names, as the FGD simulator
 * does: a pod's annotations (or, failing that, its extended resource
 * requests) alibabacloud.com/gpu-count (GPUs) and alibabacloud.com/gpu-milli
 * (thousandths of each GPU; 1000 for whole GPUs), alibabacloud.com/gpu-card-model
 * ("V100M16|V100M32": the models it accepts); a node's capacity
 * alibabacloud.com/gpu-count and its label alibabacloud.com/gpu-card-model.
 *
 * The GPUs a pod got are alibabacloud.com/gpu-index ("2-3") on the pod:
 * pods that carry the annotation are counted on those GPUs. Reserve
 * records its choice in a table of the plugin's (by pod UID) that later
 * cycles read until the bound pod carries the annotation, which PreBind
 * writes (with alibabacloud.com/assume-time, as open-gpu-share does)
 * through ks_handle_patch_pod_annotations (docs/gpu-sharing.md).
 *
 * Threads: Filter and Score only read. PreFilter and PreScore (one at a
 * time) bring the per-node GPU table up to date and compute the scores;
 * Filter/Score recompute a node privately when its NodeInfo is not the
 * one the table saw (preemption's what-if NodeInfos). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <ksched/ksched.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANN_COUNT "alibabacloud.com/gpu-count"
#define ANN_MILLI "alibabacloud.com/gpu-milli"
#define ANN_MODEL "alibabacloud.com/gpu-card-model"
#define ANN_INDEX "alibabacloud.com/gpu-index"
#define ANN_ASSUME "alibabacloud.com/assume-time"
#define MILLI 1000
#define MAX_GPUS 16
/* The normalisers of BestFit and DotProduct: the largest node of the
 * simulator's clusters (128 cores, 8 GPUs). */
#define MAX_SPEC_CPU 128000.0
#define MAX_SPEC_GPU 8000

/* ---- requests and node state ------------------------------------------- */

typedef struct gpu_req {
    int64_t cpu;      /* millicores */
    int64_t milli;    /* per GPU, 1..1000; 0: no GPU */
    int count;        /* GPUs */
    const char *model; /* accepted models, "A|B"; NULL or "": any */
} gpu_req;

#define SC_WAYS 16

/* One node's GPU state. Laid out by use: the first cache line is what
 * every cycle's sync, Filter and Score read, the second what PreFilter
 * and PreScore read, then FGD's per-request scores, then the rest (every
 * cycle visits hundreds of nodes: their lines miss the cache). */
typedef struct gnode {
    /* line 0 */
    const char *name;       /* ks_node_info_name's: interned, so compared by pointer */
    const ks_node_info *ni; /* the NodeInfo the last sync saw */
    uint64_t fp;
    uint64_t stamp; /* the last PreScore's verdict for this node */
    int64_t score;
    int64_t cpu_left;
    const char *model; /* the node's label (owned by the node object) */
    const void *sc_w;  /* the workload sc[] is for (NULL: none) */
    /* line 1: the state as FGD's score memo keys it: free shares sorted,
     * hashed with the CPU left and the model; OpenGpuShare's PreFilter
     * verdict (whether the pod's GPUs fit, for sync fit_sync) */
    int16_t sorted[MAX_GPUS];
    uint64_t shash;
    uint64_t fit_sync;
    int ngpu;
    uint32_t slot; /* its place in the last sync's list */
    bool fits;
    /* lines 2-3: FGDScore's scores of this state by request, two ways by
     * the request's hash: a node keeps its state until a pod lands on it,
     * and a few dozen task shapes make most of a trace (the default
     * openb trace: 16 shapes 75 % of it) */
    struct {
        int32_t cpu;
        int16_t milli;
        uint8_t count, score; /* count 0: empty */
    } sc[SC_WAYS] __attribute__((aligned(64)));
    /* the rest */
    uint64_t hash;
    uint64_t name_hash; /* of the name's text: RandomScore's draw */
    int32_t left[MAX_GPUS];
    const ks_node *node_ref;
    /* pods per GPU shape: [0] sharing one GPU, [k] k whole GPUs */
    uint32_t shapes[MAX_GPUS + 1];
    /* FGD's measure of this state for workload frag_w (NULL: not known) */
    const void *frag_w;
    double frag;
} __attribute__((aligned(64))) gnode;
_Static_assert(offsetof(gnode, sorted) == 64 && offsetof(gnode, sc) == 128, "gnode's hot lines");

/* Whether r's GPUs fit g: count GPUs with milli free each (the sorted
 * shares: the count-th largest). */
static bool gpus_fit(const gnode *g, int64_t milli, int count) {
    return count <= g->ngpu && g->sorted[g->ngpu - count] >= milli;
}

/* The integer in annotation name, else the pod's request of the extended
 * resource of that name (looked up only then). */
static int64_t annotation_or_request(const ks_pod *p, const char *name) {
    const char *s = ks_pod_annotation(p, name);
    if (s && *s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end != s) return (int64_t)v;
    }
    return ks_pod_request(p, name);
}

/* What pod asks for. false when the request is malformed. A count
 * without a share is whole GPUs; a share without a count is no GPU (as
 * the simulator counts it). */
static bool pod_request(const ks_pod *p, gpu_req *r) {
    r->cpu = ks_pod_request(p, "cpu");
    r->count = (int)annotation_or_request(p, ANN_COUNT);
    r->milli = annotation_or_request(p, ANN_MILLI);
    r->model = ks_pod_annotation(p, ANN_MODEL);
    if (r->count < 0) return false;
    if (r->count == 0) {
        r->milli = 0;
        return true;
    }
    if (r->milli <= 0) r->milli = MILLI;
    return r->milli <= MILLI && r->count <= MAX_GPUS && (r->count == 1 || r->milli == MILLI);
}

static bool model_ok(const char *node_model, const char *want) {
    if (!want || !*want) return true;
    if (!node_model || !*node_model) return false;
    size_t n = strlen(node_model);
    bool any = false;
    for (const char *s = want; *s;) {
        const char *e = strchr(s, '|');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len) {
            any = true;
            if (len == n && !strncmp(s, node_model, n)) return true;
        }
        s += len + (e ? 1 : 0);
    }
    return !any;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ? h : 1;
}

/* Identifies a NodeInfo's content (never 0 for a real NodeInfo). */
static uint64_t node_fp(const ks_node_info *ni) { return ks_node_info_generation(ni) + 1; }

/* ---- the shared table: GPUs of each node, GPUs of each pod -------------- */

typedef struct assign {
    char *key;
    uint8_t n;
    bool written; /* PreBind wrote it onto the pod */
    uint8_t idx[MAX_GPUS];
} assign;

typedef struct gctx {
    ks_handle *h;
    int refs;
    pthread_mutex_t mu; /* Reserve/Unreserve vs PreFilter across profiles */
    gnode *nodes;       /* open addressing by name hash */
    const char **keys;  /* keys[i]: nodes[i].name (a compact probe) */
    size_t ncap, nused;
    assign *asg;        /* open addressing by key hash; key NULL empty, "" deleted */
    size_t acap, aused;
    size_t alive;       /* entries not deleted */
    /* the last sync's list: slot_ni[i] was nodes[i], its entry slot_g[i]
     * (NodeInfos stay put from one cycle to the next: no hashing) */
    const ks_node_info **slot_ni;
    gnode **slot_g;
    size_t nslots, slot_cap;
    uint64_t cycle;
    uint64_t syncs; /* OpenGpuShare's PreFilters so far */
} gctx;

static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static gctx **ctxs;
static size_t nctxs;

static gctx *ctx_get(ks_handle *h) {
    pthread_mutex_lock(&ctx_mu);
    gctx *c = NULL;
    for (size_t i = 0; i < nctxs; i++)
        if (ctxs[i]->h == h) c = ctxs[i];
    if (!c) {
        c = calloc(1, sizeof(*c));
        c->h = h;
        pthread_mutex_init(&c->mu, NULL);
        gctx **nv = realloc(ctxs, (nctxs + 1) * sizeof(*ctxs));
        if (nv) {
            ctxs = nv;
            ctxs[nctxs++] = c;
        }
    }
    c->refs++;
    pthread_mutex_unlock(&ctx_mu);
    return c;
}

static void ctx_put(gctx *c) {
    pthread_mutex_lock(&ctx_mu);
    if (--c->refs == 0) {
        for (size_t i = 0; i < nctxs; i++)
            if (ctxs[i] == c) ctxs[i] = ctxs[--nctxs];
        for (size_t i = 0; i < c->acap; i++)
            if (c->asg[i].key && *c->asg[i].key) free(c->asg[i].key);
        free(c->nodes);
        free(c->keys);
        free(c->asg);
        free(c->slot_ni);
        free(c->slot_g);
        pthread_mutex_destroy(&c->mu);
        free(c);
        if (!nctxs) {
            free(ctxs);
            ctxs = NULL;
        }
    }
    pthread_mutex_unlock(&ctx_mu);
}

static const char *pod_key(const ks_pod *p, char *buf, size_t len) {
    const char *uid = ks_pod_uid(p);
    if (uid && *uid) return uid;
    snprintf(buf, len, "%s/%s", ks_pod_namespace(p), ks_pod_name(p));
    return buf;
}

static assign *asg_find(const gctx *c, const char *key) {
    if (!c->acap) return NULL;
    size_t m = c->acap - 1;
    for (size_t i = str_hash(key) & m;; i = (i + 1) & m) {
        assign *a = &c->asg[i];
        if (!a->key) return NULL;
        if (*a->key && !strcmp(a->key, key)) return a;
    }
}

static void asg_put(gctx *c, const char *key, const uint8_t *idx, int n);

static void asg_grow(gctx *c) {
    assign *old = c->asg;
    size_t ocap = c->acap;
    c->acap = ocap ? ocap * 2 : 1024;
    c->asg = calloc(c->acap, sizeof(*c->asg));
    c->aused = 0;
    c->alive = 0;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].key) continue;
        if (*old[i].key) {
            asg_put(c, old[i].key, old[i].idx, old[i].n);
            asg_find(c, old[i].key)->written = old[i].written;
            free(old[i].key);
        }
    }
    free(old);
}

static void asg_put(gctx *c, const char *key, const uint8_t *idx, int n) {
    assign *a = asg_find(c, key);
    if (!a) {
        if ((c->aused + 1) * 2 > c->acap) asg_grow(c);
        size_t m = c->acap - 1;
        size_t i = str_hash(key) & m;
        while (c->asg[i].key && *c->asg[i].key) i = (i + 1) & m;
        a = &c->asg[i];
        if (!a->key) c->aused++;
        a->key = strdup(key);
        c->alive++;
    }
    a->n = (uint8_t)n;
    a->written = false;
    memcpy(a->idx, idx, (size_t)n);
}

static void asg_del(gctx *c, const char *key) {
    assign *a = asg_find(c, key);
    if (!a) return;
    free(a->key);
    a->key = ""; /* a tombstone keeps the probe chains intact */
    c->alive--;
}

/* Put pod's request on the GPUs of g that it holds. */
static void place_pod(const gctx *c, gnode *g, const ks_pod *p) {
    gpu_req r;
    if (!pod_request(p, &r) || !r.count) return;
    if (r.milli < MILLI && r.count == 1) g->shapes[0]++;
    else if (r.count <= MAX_GPUS) g->shapes[r.count]++;
    uint8_t idx[MAX_GPUS];
    int n = 0;
    const char *ann = ks_pod_annotation(p, ANN_INDEX);
    if (ann && *ann) {
        for (const char *s = ann; *s && n < MAX_GPUS;) {
            char *end;
            long v = strtol(s, &end, 10);
            if (end == s || v < 0 || v >= g->ngpu) {
                n = 0;
                break;
            }
            idx[n++] = (uint8_t)v;
            s = *end == '-' ? end + 1 : end;
            if (end == s && *s) {
                n = 0;
                break;
            }
        }
    }
    if (!n && c) {
        char buf[512];
        const assign *a = asg_find(c, pod_key(p, buf, sizeof(buf)));
        if (a) {
            n = a->n;
            memcpy(idx, a->idx, (size_t)n);
        }
    }
    if (n) {
        for (int i = 0; i < n; i++) g->left[idx[i]] -= (int32_t)r.milli;
        return;
    }
    /* Bound by someone else without an index: the tightest GPUs that fit,
     * as the simulator accounts for such pods. */
    for (int k = 0; k < r.count; k++) {
        int best = -1;
        for (int i = 0; i < g->ngpu; i++)
            if (g->left[i] >= r.milli && (best < 0 || g->left[i] < g->left[best])) best = i;
        if (best < 0) break;
        g->left[best] -= (int32_t)r.milli;
    }
}

/* Compute g from a NodeInfo (c NULL: annotations only). */
static void gnode_fill(const gctx *c, gnode *g, const ks_node_info *ni) {
    const ks_node *node = ks_node_info_node(ni);
    memset(g->shapes, 0, sizeof(g->shapes));
    g->node_ref = node;
    g->ngpu = node ? (int)ks_node_capacity(node, ANN_COUNT) : 0;
    if (g->ngpu < 0) g->ngpu = 0;
    if (g->ngpu > MAX_GPUS) g->ngpu = MAX_GPUS;
    g->model = node ? ks_node_label(node, ANN_MODEL) : NULL;
    g->cpu_left = ks_node_info_allocatable(ni, "cpu") - ks_node_info_requested(ni, "cpu");
    for (int i = 0; i < g->ngpu; i++) g->left[i] = MILLI;
    g->frag_w = NULL;
    g->sc_w = NULL;
    size_t n = ks_node_info_npods(ni);
    for (size_t i = 0; i < n; i++) place_pod(c, g, ks_node_info_pod(ni, i));
    g->fp = node_fp(ni);
    memset(g->sorted, 0, sizeof(g->sorted));
    for (int i = 0; i < g->ngpu; i++) { /* insertion sort: a handful of GPUs */
        /* (a share below -30000: GPUs over-committed by hand-written indexes) */
        int16_t v = (int16_t)(g->left[i] < -30000 ? -30000 : g->left[i]);
        int j = i;
        for (; j > 0 && g->sorted[j - 1] > v; j--) g->sorted[j] = g->sorted[j - 1];
        g->sorted[j] = v;
    }
    uint64_t h = mix(mix((uint64_t)g->cpu_left, (uint64_t)(uintptr_t)g->model), (uint64_t)g->ngpu);
    for (int i = 0; i < g->ngpu; i++) h = mix(h, (uint64_t)(uint16_t)g->sorted[i]);
    g->shash = h;
}

static uint64_t ptr_hash(const char *p) { return mix(0, (uint64_t)(uintptr_t)p); }

static gnode *gnode_slot(gctx *c, const char *name, uint64_t h) {
    if ((c->nused + 1) * 2 > c->ncap) {
        gnode *old = c->nodes;
        size_t ocap = c->ncap;
        c->ncap = ocap ? ocap * 2 : 256;
        c->nodes = aligned_alloc(64, c->ncap * sizeof(*c->nodes)); /* lines as gnode's layout says */
        memset(c->nodes, 0, c->ncap * sizeof(*c->nodes));
        free(c->keys);
        c->keys = calloc(c->ncap, sizeof(*c->keys));
        for (size_t i = 0; i < ocap; i++) {
            if (!old[i].name) continue;
            size_t j = old[i].hash & (c->ncap - 1);
            while (c->keys[j]) j = (j + 1) & (c->ncap - 1);
            c->nodes[j] = old[i];
            c->keys[j] = old[i].name;
        }
        free(old);
    }
    size_t m = c->ncap - 1;
    size_t i = h & m;
    for (; c->keys[i]; i = (i + 1) & m)
        if (c->keys[i] == name) return &c->nodes[i];
    c->keys[i] = name;
    c->nodes[i].name = name;
    c->nodes[i].name_hash = str_hash(name);
    c->nodes[i].hash = h;
    c->nodes[i].fp = 0;
    c->nused++;
    return &c->nodes[i];
}

static const gnode *gnode_lookup(const gctx *c, const char *name) {
    if (!c->ncap) return NULL;
    size_t m = c->ncap - 1;
    for (size_t i = ptr_hash(name) & m; c->keys[i]; i = (i + 1) & m)
        if (c->keys[i] == name) return &c->nodes[i];
    return NULL;
}

/* Reserve's entries for the pods of ni that carry their index now (the
 * bound pod came back with PreBind's annotation): the table holds only
 * the pods in between. */
static void prune_written(gctx *c, const ks_node_info *ni) {
    char buf[512];
    size_t n = ks_node_info_npods(ni);
    for (size_t i = 0; i < n && c->alive; i++) {
        const ks_pod *p = ks_node_info_pod(ni, i);
        const char *ann = ks_pod_annotation(p, ANN_INDEX);
        if (ann && *ann) asg_del(c, pod_key(p, buf, sizeof(buf)));
    }
}

/* Bring the table up to date for these NodeInfos (one thread); after it
 * c->slot_g[i] is nodes[i]'s entry. */
static void ctx_sync(gctx *c, const ks_node_info *const *nodes, size_t n) {
    pthread_mutex_lock(&c->mu);
    if (n > c->slot_cap) {
        c->slot_ni = realloc(c->slot_ni, n * sizeof(*c->slot_ni));
        c->slot_g = realloc(c->slot_g, n * sizeof(*c->slot_g));
        c->slot_cap = n;
    }
    size_t cap = c->ncap;
    for (size_t i = 0; i < n; i++) {
        if (i + 8 < n) { /* hundreds of nodes: their lines miss the cache */
            __builtin_prefetch(nodes[i + 8]);
            if (i + 8 < c->nslots) __builtin_prefetch(c->slot_g[i + 8]);
        }
        uint64_t fp = node_fp(nodes[i]);
        /* Same NodeInfo, same generation: the entry is this node's and up
         * to date (generations are unique to one node's content). */
        if (i < c->nslots && c->slot_ni[i] == nodes[i] && c->slot_g[i]->fp == fp) continue;
        const char *name = ks_node_info_name(nodes[i]);
        gnode *g;
        if (i < c->nslots && c->slot_ni[i] == nodes[i] && c->slot_g[i]->name == name) g = c->slot_g[i];
        else g = gnode_slot(c, name, ptr_hash(name));
        if (g->fp != fp) {
            gnode_fill(c, g, nodes[i]);
            if (c->alive) prune_written(c, nodes[i]);
        }
        g->ni = nodes[i];
        g->slot = (uint32_t)i;
        c->slot_ni[i] = nodes[i];
        c->slot_g[i] = g;
    }
    c->nslots = n;
    if (c->ncap != cap) /* the table grew: its entries moved */
        for (size_t i = 0; i < n; i++) c->slot_g[i] = (gnode *)gnode_lookup(c, ks_node_info_name(nodes[i]));
    pthread_mutex_unlock(&c->mu);
}

/* The table's entry for ni, as gnode_lookup by its name. Filter, PreScore
 * and Score go through the nodes in an order close to the last sync's
 * list (a rotation of it, some left out): the entry is found by looking
 * a few places on from where *hint (NULL: none) says the last one was,
 * which reads the list in order instead of missing the cache on a hash
 * probe per node. A hint shared by threads only finds less. */
static const gnode *gnode_find(const gctx *c, const ks_node_info *ni, atomic_size_t *hint) {
    size_t n = c->nslots, h = hint ? atomic_load_explicit(hint, memory_order_relaxed) : 0;
    for (size_t k = 0; hint && k < 16 && n; k++, h++) {
        if (h >= n) h = 0;
        if (c->slot_ni[h] != ni) continue;
        if (c->slot_g[h]->fp != node_fp(ni)) break; /* (a NodeInfo at a reused address) */
        if (h + 3 < n) __builtin_prefetch(c->slot_g[h + 3]); /* the next calls' */
        atomic_store_explicit(hint, h + 1, memory_order_relaxed);
        return c->slot_g[h];
    }
    const gnode *g = gnode_lookup(c, ks_node_info_name(ni));
    if (hint && g && g->ni == ni) atomic_store_explicit(hint, g->slot + 1, memory_order_relaxed);
    return g;
}

/* The node's state: the table's entry when this cycle's sync saw this
 * NodeInfo (the snapshot's do not change within a cycle), else computed
 * into *tmp (preemption's what-if copies). */
static const gnode *gnode_of(const gctx *c, const ks_node_info *ni, gnode *tmp, atomic_size_t *hint) {
    const gnode *g = gnode_find(c, ni, hint);
    if (g && g->ni == ni) return g;
    memset(tmp, 0, sizeof(*tmp));
    gnode_fill(c, tmp, ni);
    return tmp;
}

static int64_t gpu_left_total(const gnode *g) {
    int64_t t = 0;
    for (int i = 0; i < g->ngpu; i++) t += g->left[i];
    return t;
}

static int gpus_fitting(const gnode *g, int64_t milli) {
    int k = 0;
    for (int i = 0; i < g->ngpu; i++) k += g->left[i] >= milli;
    return k;
}

static int fully_free(const gnode *g) {
    int k = 0;
    for (int i = 0; i < g->ngpu; i++) k += g->left[i] == MILLI;
    return k;
}

/* GPUs [out] the first `count` fully free GPUs by index (open-gpu-share's
 * exclusive allocation); returns how many. */
static int exclusive_gpus(const gnode *g, int count, uint8_t *out) {
    int n = 0;
    for (int i = 0; i < g->ngpu && n < count; i++)
        if (g->left[i] == MILLI) out[n++] = (uint8_t)i;
    return n;
}

/* ---- the workload's task types (FGD's "typical pods") ------------------- */

typedef struct task_type {
    int64_t cpu, milli;
    int count;
    char *model;
    double freq;
} task_type;

typedef struct workload {
    task_type *t;
    size_t n;
} workload;

static void workload_free(workload *w) {
    for (size_t i = 0; i < w->n; i++) free(w->t[i].model);
    free(w->t);
    w->t = NULL;
    w->n = 0;
}

static bool arg_double(const ks_args *a, double *out) {
    const char *s = ks_args_string(a);
    if (!s) return false;
    char *end;
    *out = strtod(s, &end);
    return end != s && !*end;
}

/* typicalPods: [{milliCpu, milliGpu, gpuCount, gpuModel, weight}, ...] */
static bool workload_parse(const ks_args *a, workload *w, char **err) {
    size_t n = ks_args_len(a);
    if (ks_args_is_map(a) || !n) {
        *err = strdup("typicalPods: want a non-empty list of {milliCpu, milliGpu, gpuCount, gpuModel, weight}");
        return false;
    }
    w->t = calloc(n, sizeof(*w->t));
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        const ks_args *e = ks_args_item(a, i);
        task_type *t = &w->t[w->n++];
        int64_t v = 0;
        if (!ks_args_int(ks_args_get(e, "milliCpu"), &t->cpu) || t->cpu < 0) goto bad;
        if (ks_args_get(e, "milliGpu") && (!ks_args_int(ks_args_get(e, "milliGpu"), &t->milli) || t->milli < 0 ||
                                           t->milli > MILLI))
            goto bad;
        if (ks_args_get(e, "gpuCount")) {
            if (!ks_args_int(ks_args_get(e, "gpuCount"), &v) || v < 0 || v > MAX_GPUS) goto bad;
            t->count = (int)v;
        }
        if (!t->count) t->milli = 0;
        const char *m = ks_args_string(ks_args_get(e, "gpuModel"));
        if (m && *m) t->model = strdup(m);
        t->freq = 1;
        if (ks_args_get(e, "weight") && (!arg_double(ks_args_get(e, "weight"), &t->freq) || t->freq < 0)) goto bad;
        sum += t->freq;
        continue;
    bad: {
        char buf[160];
        snprintf(buf, sizeof(buf), "typicalPods[%zu]: want milliCpu >= 0, milliGpu 0..1000, gpuCount 0..%d, weight >= 0",
                 i, MAX_GPUS);
        *err = strdup(buf);
        workload_free(w);
        return false;
    }
    }
    if (sum <= 0) {
        *err = strdup("typicalPods: the weights sum to 0");
        workload_free(w);
        return false;
    }
    for (size_t i = 0; i < w->n; i++) w->t[i].freq /= sum;
    return true;
}

/* ---- FGD: the expected unusable GPU capacity of a node ------------------ */

/* The GPU milli of node state (cpu_left, left[], model) that a task drawn
 * from w could not use: for each task type, all the idle GPU capacity
 * when the task cannot run there at all (lacks GPU, CPU, the model, or
 * asks no GPU), else the GPUs with less free than the task's share;
 * weighted by the type's frequency. */
static double node_frag(const workload *w, int64_t cpu_left, const int32_t *left, int ngpu, const char *model) {
    int64_t total = 0;
    for (int i = 0; i < ngpu; i++) total += left[i];
    if (!total) return 0;
    double frag = 0;
    for (size_t k = 0; k < w->n; k++) {
        const task_type *t = &w->t[k];
        if (t->milli == 0 || !model_ok(model, t->model) || cpu_left < t->cpu) {
            frag += t->freq * (double)total;
            continue;
        }
        int fit = 0;
        int64_t small = 0;
        for (int i = 0; i < ngpu; i++) {
            if (left[i] >= t->milli) fit++;
            else small += left[i];
        }
        frag += t->freq * (double)(fit >= t->count ? small : total);
    }
    return frag;
}

/* The memos below are open-addressing tables started over when half full
 * (bounded memory): doubled from 4096 slots up to max, then cleared. */
static void *restart_if_full(void *e, size_t *cap, size_t *n, size_t elsz, size_t max) {
    if (*n * 2 < *cap) return e;
    if (*cap < max) {
        free(e);
        *cap = *cap ? *cap * 2 : 4096;
        e = calloc(*cap, elsz);
    } else {
        memset(e, 0, *cap * elsz);
    }
    *n = 0;
    return e;
}

/* Memo of node_frag by state (CPU left, GPUs left as a multiset, model):
 * identical nodes are common (every idle node of a type), and the score
 * asks for each node's state before and after the placement. */
typedef struct memo_ent {
    int64_t cpu;
    const char *model;
    uint8_t ngpu, used;
    int16_t left[MAX_GPUS];
    double frag;
} memo_ent;

typedef struct memo {
    memo_ent *e;
    size_t cap, n;
} memo;


static double frag_memo(memo *m, const workload *w, int64_t cpu_left, const int32_t *left, int ngpu,
                        const char *model) {
    if (!m) return node_frag(w, cpu_left, left, ngpu, model);
    memo_ent k;
    memset(&k, 0, sizeof(k));
    k.cpu = cpu_left;
    k.model = model; /* labels are interned by the node: same text, same pointer */
    k.ngpu = (uint8_t)ngpu;
    k.used = 1;
    for (int i = 0; i < ngpu; i++) { /* insertion sort: a handful of GPUs */
        int16_t v = (int16_t)left[i];
        int j = i;
        for (; j > 0 && k.left[j - 1] > v; j--) k.left[j] = k.left[j - 1];
        k.left[j] = v;
    }
    m->e = restart_if_full(m->e, &m->cap, &m->n, sizeof(*m->e), (size_t)1 << 20);
    uint64_t h = mix(mix((uint64_t)cpu_left, (uint64_t)(uintptr_t)model), (uint64_t)ngpu);
    for (int i = 0; i < ngpu; i++) h = mix(h, (uint64_t)(uint16_t)k.left[i]);
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        memo_ent *e = &m->e[i];
        if (!e->used) {
            k.frag = node_frag(w, cpu_left, left, ngpu, model);
            *e = k;
            m->n++;
            return k.frag;
        }
        if (e->cpu == k.cpu && e->model == k.model && e->ngpu == k.ngpu &&
            !memcmp(e->left, k.left, sizeof(int16_t) * (size_t)ngpu))
            return e->frag;
    }
}

/* Memo of FGD's node score by node state (gnode.sorted, cpu_left, model)
 * and request (CPU, share, count): most nodes keep their state from one
 * cycle to the next, identical nodes are common and a few task shapes
 * make most of a trace, so the score of a (state, request) pair is asked
 * again and again. Bounded: started over when half full. */
typedef struct smemo_ent { /* one cache line */
    uint64_t h; /* 0: empty */
    const char *model;
    int32_t cpu, rcpu;
    int16_t left[MAX_GPUS];
    int16_t rmilli;
    uint8_t ngpu, rcount, score;
} smemo_ent;
_Static_assert(sizeof(smemo_ent) <= 64, "a score memo entry fits a cache line");

typedef struct smemo {
    smemo_ent *e;
    size_t cap, n;
} smemo;

#define SMEMO_MAX ((size_t)1 << 18)

static smemo_ent *smemo_slot(smemo *m, const gnode *g, const gpu_req *r, bool *found) {
    m->e = restart_if_full(m->e, &m->cap, &m->n, sizeof(*m->e), SMEMO_MAX);
    uint64_t h = mix(mix(mix(g->shash, (uint64_t)r->cpu), (uint64_t)r->milli), (uint64_t)r->count) | 1;
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        smemo_ent *e = &m->e[i];
        if (!e->h) {
            *e = (smemo_ent){.h = h, .cpu = (int32_t)g->cpu_left, .rcpu = (int32_t)r->cpu, .model = g->model, .rmilli = (int16_t)r->milli,
                             .ngpu = (uint8_t)g->ngpu, .rcount = (uint8_t)r->count};
            memcpy(e->left, g->sorted, sizeof(e->left));
            m->n++;
            *found = false;
            return e;
        }
        if (e->h == h && e->cpu == g->cpu_left && e->rcpu == r->cpu && e->model == g->model &&
            e->rmilli == r->milli && e->ngpu == g->ngpu && e->rcount == r->count &&
            !memcmp(e->left, g->sorted, sizeof(e->left))) {
            *found = true;
            return e;
        }
    }
}

/* The first way of r's scores in gnode.sc. */
static size_t sc_index(const gpu_req *r) {
    return mix(mix((uint64_t)r->cpu, (uint64_t)r->milli), (uint64_t)r->count) & (SC_WAYS - 1);
}

static int64_t frag_score(double before, double after) {
    double x = (before - after) / 1000.0;
    return (int64_t)(1.0 / (1.0 + exp(-x)) * KS_MAX_NODE_SCORE);
}

static int64_t fgd_score_of(memo *m, const workload *w, const gnode *g, const gpu_req *r, int *gpu);

/* FGD's score of placing r on g, and for a sharing task the GPU it
 * would take (the first of the best); *gpu -1 otherwise. With sm (PreScore)
 * the score alone, memoized. */
static int64_t fgd_score(memo *m, smemo *sm, const workload *w, const gnode *g, const gpu_req *r, int *gpu) {
    *gpu = -1;
    if (r->cpu == 0 && r->count == 0) return KS_MAX_NODE_SCORE;
    if (!sm || g->cpu_left != (int32_t)g->cpu_left || r->cpu != (int32_t)r->cpu)
        return fgd_score_of(m, w, g, r, gpu);
    /* PreScore's one thread: the table entry's own cache first (in cache
     * already), then the memo shared by all states */
    gnode *gw = (gnode *)g;
    if (gw->sc_w != w) {
        memset(gw->sc, 0, sizeof(gw->sc));
        gw->sc_w = w;
    }
    size_t k = sc_index(r);
    for (int way = 0; way < 2; way++, k ^= 1)
        if (gw->sc[k].count == r->count && gw->sc[k].milli == r->milli && gw->sc[k].cpu == r->cpu)
            return gw->sc[k].score;
    bool found;
    smemo_ent *e = smemo_slot(sm, g, r, &found);
    if (!found) e->score = (uint8_t)fgd_score_of(m, w, g, r, gpu); /* 0..100 */
    if (gw->sc[k].count) k ^= 1; /* the first way when free, else the second */
    gw->sc[k].cpu = (int32_t)r->cpu;
    gw->sc[k].milli = (int16_t)r->milli;
    gw->sc[k].count = (uint8_t)r->count;
    gw->sc[k].score = e->score;
    return e->score;
}

static int64_t fgd_score_of(memo *m, const workload *w, const gnode *g, const gpu_req *r, int *gpu) {
    double before;
    if (g->frag_w == w) {
        before = g->frag;
    } else {
        before = frag_memo(m, w, g->cpu_left, g->left, g->ngpu, g->model);
        if (m) { /* PreScore's one thread: the table entry may be written */
            ((gnode *)g)->frag = before;
            ((gnode *)g)->frag_w = w;
        }
    }
    int32_t after[MAX_GPUS];
    memcpy(after, g->left, sizeof(after));
    if (r->count == 1 && r->milli < MILLI) {
        int64_t best = 0;
        for (int i = 0; i < g->ngpu; i++) {
            if (g->left[i] < r->milli) continue;
            after[i] -= (int32_t)r->milli;
            int64_t s = frag_score(before, frag_memo(m, w, g->cpu_left - r->cpu, after, g->ngpu, g->model));
            after[i] += (int32_t)r->milli;
            if (*gpu < 0 || s > best) {
                best = s;
                *gpu = i;
            }
        }
        return best;
    }
    /* whole GPUs (or none): the tightest GPUs that fit, the simulator's
     * NodeResource.Sub */
    for (int k = 0; k < r->count; k++) {
        int best = -1;
        for (int i = 0; i < g->ngpu; i++)
            if (after[i] >= r->milli && (best < 0 || after[i] < after[best])) best = i;
        if (best < 0) break;
        after[best] -= (int32_t)r->milli;
    }
    return frag_score(before, frag_memo(m, w, g->cpu_left - r->cpu, after, g->ngpu, g->model));
}

/* ---- OpenGpuShare ------------------------------------------------------ */

static ks_state_key req_key;

/* OpenGpuShare's PreFilter state: the pod's request, and the number of
 * the sync whose gnode.fits are this pod's. */
typedef struct req_state {
    gpu_req r;
    uint64_t sync;
    atomic_size_t hint; /* Filter's gnode_find */
} req_state;
static void keys_init(void);

typedef enum gpu_sel { SEL_BEST, SEL_WORST, SEL_RANDOM, SEL_FGD } gpu_sel;

typedef struct share {
    gctx *c;
    gpu_sel sel;
    bool narrow; /* PreFilter hands Filter only the nodes that fit */
    uint64_t rng;
    workload w;
} share;

static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void *share_create(const ks_args *args, ks_handle *h, char **err) {
    share *s = calloc(1, sizeof(*s));
    const char *sel = ks_args_string(ks_args_get(args, "gpuSelection"));
    int64_t seed = 0;
    ks_args_int(ks_args_get(args, "seed"), &seed);
    s->rng = (uint64_t)seed;
    if (ks_args_get(args, "narrowNodes") && !ks_args_bool(ks_args_get(args, "narrowNodes"), &s->narrow)) {
        *err = strdup("narrowNodes: want true or false");
        free(s);
        return NULL;
    }
    if (!sel || !strcmp(sel, "best")) s->sel = SEL_BEST;
    else if (!strcmp(sel, "worst")) s->sel = SEL_WORST;
    else if (!strcmp(sel, "random")) s->sel = SEL_RANDOM;
    else if (!strcmp(sel, "FGD")) s->sel = SEL_FGD;
    else {
        *err = strdup("gpuSelection: want best, worst, random or FGD");
        free(s);
        return NULL;
    }
    if (s->sel == SEL_FGD && !workload_parse(ks_args_get(args, "typicalPods"), &s->w, err)) {
        free(s);
        return NULL;
    }
    s->c = ctx_get(h);
    keys_init();
    return s;
}

static void share_destroy(void *self) {
    share *s = self;
    ctx_put(s->c);
    workload_free(&s->w);
    free(s);
}

static ks_status *share_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **res) {
    share *s = self;
    gpu_req r;
    if (!pod_request(pod, &r))
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "invalid GPU request: %s must be 1..1000, and 1000 when %s > 1", ANN_MILLI, ANN_COUNT);
    if (!r.count) return ks_status_new(KS_SKIP, "no GPU");
    req_state *saved = ks_cycle_state_alloc(st, sizeof(*saved));
    saved->r = r;
    ks_cycle_state_write(st, req_key, saved, NULL, NULL);
    ctx_sync(s->c, nodes, n);
    /* Which nodes' GPUs fit, for Filter (a node that fits passes at once)
     * and narrowNodes. */
    saved->sync = ++s->c->syncs;
    size_t fit = 0;
    gnode *const *gs = s->c->slot_g;
    for (size_t i = 0; i < n; i++) {
        gnode *g = gs[i];
        g->fits = g->ngpu && gpus_fit(g, r.milli, r.count) && model_ok(g->model, r.model);
        g->fit_sync = saved->sync;
        fit += g->fits;
    }
    /* narrowNodes: the nodes whose GPUs fit, so that the other filters
     * skip the rest (same decisions, faster on large clusters; the others
     * are reported as not satisfying OpenGpuShare). */
    if (s->narrow) {
        /* worth it only when it leaves out most nodes */
        if (fit * 2 < n) {
            *res = ks_pre_filter_result_new(st);
            for (size_t i = 0; i < n; i++)
                if (gs[i]->fits) ks_pre_filter_result_add_node(*res, nodes[i]);
        }
    }
    return NULL;
}

static ks_status *share_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    share *s = self;
    gpu_req r;
    req_state *saved = ks_cycle_state_read(st, req_key);
    if (saved) r = saved->r;
    else if (!pod_request(pod, &r)) return NULL;
    if (!r.count) return NULL;
    gnode tmp;
    const gnode *g = gnode_of(s->c, ni, &tmp, saved ? &saved->hint : NULL);
    if (saved && g->fit_sync == saved->sync && g->fits) return NULL; /* PreFilter's verdict on this NodeInfo */
    if (g->ngpu == 0) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had no GPU");
    if (!model_ok(g->model, r.model))
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match the GPU model");
    if (gpus_fitting(g, r.milli) < r.count) {
        if (r.count == 1) return ks_status_new(KS_UNSCHEDULABLE, "node(s) had no GPU with enough free share");
        return ks_status_new(KS_UNSCHEDULABLE, "node(s) had not enough free GPUs");
    }
    return NULL;
}

/* The GPU(s) for r on g by the configured rule; returns how many. */
static int choose_gpus(share *s, const gnode *g, const gpu_req *r, uint8_t *out) {
    if (r->milli >= MILLI) return exclusive_gpus(g, r->count, out);
    int pick = -1;
    if (s->sel == SEL_FGD) {
        fgd_score(NULL, NULL, &s->w, g, r, &pick);
    } else {
        int seen = 0;
        for (int i = 0; i < g->ngpu; i++) {
            if (g->left[i] < r->milli) continue;
            seen++;
            if (pick < 0 || (s->sel == SEL_BEST && g->left[i] < g->left[pick]) ||
                (s->sel == SEL_WORST && g->left[i] > g->left[pick]) ||
                (s->sel == SEL_RANDOM && rng_next(&s->rng) % (uint64_t)seen == 0))
                pick = i;
        }
    }
    if (pick < 0) return 0;
    out[0] = (uint8_t)pick;
    return 1;
}

static ks_status *share_reserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)st;
    share *s = self;
    gpu_req r;
    if (!pod_request(pod, &r) || !r.count) return NULL;
    if (ks_pod_annotation(pod, ANN_INDEX) && *ks_pod_annotation(pod, ANN_INDEX)) return NULL;
    const ks_node_info *ni = ks_handle_node_info_by_name(s->c->h, node);
    if (!ni) return ks_status_new(KS_ERROR, "node %s not found", node);
    gnode g;
    memset(&g, 0, sizeof(g));
    pthread_mutex_lock(&s->c->mu);
    gnode_fill(s->c, &g, ni);
    uint8_t idx[MAX_GPUS];
    int n = choose_gpus(s, &g, &r, idx);
    char buf[512];
    if (n == r.count) asg_put(s->c, pod_key(pod, buf, sizeof(buf)), idx, n);
    pthread_mutex_unlock(&s->c->mu);
    if (n != r.count) return ks_status_new(KS_UNSCHEDULABLE, "node %s has no GPU left for the pod", node);
    return NULL;
}

/* PreBind: the index Reserve chose goes onto the pod, with the time, as
 * open-gpu-share writes them; device plugins and later cycles read it. */
static ks_status *share_pre_bind_pre_flight(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)self, (void)st, (void)node;
    gpu_req r;
    if (!pod_request(pod, &r) || !r.count) return ks_status_new(KS_SKIP, "no GPU");
    const char *ann = ks_pod_annotation(pod, ANN_INDEX);
    if (ann && *ann) return ks_status_new(KS_SKIP, "GPU index given");
    return NULL;
}

static ks_status *share_pre_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)st, (void)node;
    share *s = self;
    char buf[512], idx[MAX_GPUS * 4 + 1] = "", when[32];
    const char *key = pod_key(pod, buf, sizeof(buf));
    pthread_mutex_lock(&s->c->mu);
    assign *a = asg_find(s->c, key);
    size_t len = 0;
    for (int i = 0; a && i < a->n; i++)
        len += (size_t)snprintf(idx + len, sizeof(idx) - len, "%s%u", i ? "-" : "", a->idx[i]);
    pthread_mutex_unlock(&s->c->mu);
    if (!len) return NULL; /* nothing chosen here (an index given, no GPU) */
    snprintf(when, sizeof(when), "%lld", (long long)ks_handle_now_ns(s->c->h));
    const char *keys[] = {ANN_INDEX, ANN_ASSUME}, *vals[] = {idx, when};
    ks_status *st_w = ks_handle_patch_pod_annotations(s->c->h, pod, keys, vals, 2);
    if (st_w) return st_w;
    pthread_mutex_lock(&s->c->mu);
    if ((a = asg_find(s->c, key))) a->written = true;
    pthread_mutex_unlock(&s->c->mu);
    return NULL;
}

/* Unreserve: forget the choice; when PreBind wrote it (the binding then
 * failed), take it off the pod again, or the next attempt would honour a
 * stale index. */
static void share_unreserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)st, (void)node;
    share *s = self;
    char buf[512];
    const char *key = pod_key(pod, buf, sizeof(buf));
    pthread_mutex_lock(&s->c->mu);
    const assign *a = asg_find(s->c, key);
    bool written = a && a->written;
    asg_del(s->c, key);
    pthread_mutex_unlock(&s->c->mu);
    if (!written) return;
    const char *keys[] = {ANN_INDEX, ANN_ASSUME}, *vals[] = {NULL, NULL};
    ks_status *err = ks_handle_patch_pod_annotations(s->c->h, pod, keys, vals, 2);
    if (err) {
        KS_LOG_ERROR("OpenGpuShare: removing the GPU index of %s: %s", ks_pod_name(pod), ks_status_reason(err, 0));
        ks_status_free(err);
    }
}

static size_t share_events(void *self, ks_cluster_event *out, size_t max) {
    (void)self;
    const ks_cluster_event ev[] = {
        {KS_EV_ASSIGNED_POD, KS_ACT_DELETE},
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE | KS_ACT_UPDATE_NODE_LABEL},
    };
    size_t n = sizeof(ev) / sizeof(ev[0]);
    if (n > max) n = max;
    memcpy(out, ev, n * sizeof(*ev));
    return n;
}

/* ---- the score policies ------------------------------------------------ */

typedef enum policy { P_RANDOM, P_DOTPROD, P_CLUSTERING, P_PACKING, P_BESTFIT, P_FGD } policy;

typedef struct scorer {
    gctx *c;
    policy p;
    uint64_t rng;
    workload w;
    memo m;
    smemo sm;
} scorer;

/* Cycle-state keys: the pod's request (OpenGpuShare's PreFilter), each
 * policy's stamp (PreScore). */
static ks_state_key stamp_keys[6];

static void keys_init(void) {
    static const char *const names[] = {"GpuShare/random", "GpuShare/dotprod", "GpuShare/clustering",
                                        "GpuShare/packing", "GpuShare/bestfit", "GpuShare/fgd"};
    req_key = ks_state_key_get("GpuShare/request");
    for (int i = 0; i < 6; i++) stamp_keys[i] = ks_state_key_get(names[i]);
}

static void *scorer_new(policy p, const ks_args *args, ks_handle *h, char **err) {
    scorer *s = calloc(1, sizeof(*s));
    s->p = p;
    int64_t seed = 0;
    ks_args_int(ks_args_get(args, "seed"), &seed);
    s->rng = (uint64_t)seed;
    if (p == P_FGD && !workload_parse(ks_args_get(args, "typicalPods"), &s->w, err)) {
        free(s);
        return NULL;
    }
    s->c = ctx_get(h);
    keys_init();
    return s;
}

static void *random_create(const ks_args *a, ks_handle *h, char **e) { return scorer_new(P_RANDOM, a, h, e); }
static void *dotprod_create(const ks_args *a, ks_handle *h, char **e) { return scorer_new(P_DOTPROD, a, h, e); }
static void *clustering_create(const ks_args *a, ks_handle *h, char **e) { return scorer_new(P_CLUSTERING, a, h, e); }
static void *packing_create(const ks_args *a, ks_handle *h, char **e) { return scorer_new(P_PACKING, a, h, e); }
static void *bestfit_create(const ks_args *a, ks_handle *h, char **e) { return scorer_new(P_BESTFIT, a, h, e); }
static void *fgd_create(const ks_args *a, ks_handle *h, char **e) { return scorer_new(P_FGD, a, h, e); }

static void scorer_destroy(void *self) {
    scorer *s = self;
    ctx_put(s->c);
    workload_free(&s->w);
    free(s->m.e);
    free(s->sm.e);
    free(s);
}

/* Tetris' alignment of free and requested (CPU, GPU), both scaled by the
 * largest node; aligned is worse: 100 * (1 - dot / 2). */
static int64_t dotprod_score(const gnode *g, const gpu_req *r) {
    if (g->cpu_left < r->cpu) return 0;
    double dot = (double)g->cpu_left / MAX_SPEC_CPU * ((double)r->cpu / MAX_SPEC_CPU) +
                 (double)gpu_left_total(g) / MAX_SPEC_GPU * ((double)(r->milli * r->count) / MAX_SPEC_GPU);
    return (int64_t)(KS_MAX_NODE_SCORE * (1.0 - dot / 2));
}

/* Tasks of one GPU shape (sharing, 1, 2, ... whole GPUs) together: nodes
 * holding only that shape (75..100), that shape among others (50..75),
 * idle nodes (25..50), other shapes only (0..25); fuller nodes higher
 * within each band. CPU-only tasks: 0. */
static int64_t clustering_score(const gnode *g, const gpu_req *r) {
    if (!r->count) return 0;
    int shape = r->milli < MILLI ? 0 : r->count;
    int kinds = 0;
    for (int i = 0; i <= MAX_GPUS; i++) kinds += g->shapes[i] > 0;
    int64_t base = (KS_MAX_NODE_SCORE / 4) * (MAX_SPEC_GPU - gpu_left_total(g)) / MAX_SPEC_GPU;
    if (g->shapes[shape]) return base + (kinds == 1 ? KS_MAX_NODE_SCORE * 3 / 4 : KS_MAX_NODE_SCORE * 2 / 4);
    return base + (kinds == 0 ? KS_MAX_NODE_SCORE / 4 : 0);
}

/* Shared GPUs first (50..100, the less free the better), then whole free
 * GPUs of a used node (33..50, the fewer the better), then idle nodes
 * (0..33, the fewer GPUs the better). CPU-only tasks: 0. */
static int64_t packing_score(const gnode *g, const gpu_req *r) {
    if (r->milli <= 0) return 0;
    int free_n = fully_free(g);
    if (free_n == g->ngpu) {
        int64_t v = KS_MAX_NODE_SCORE / 3 - free_n;
        return v > free_n ? v : free_n;
    }
    int order[MAX_GPUS];
    for (int i = 0; i < g->ngpu; i++) order[i] = i;
    for (int i = 1; i < g->ngpu; i++) /* stable: least free first */
        for (int j = i; j > 0 && g->left[order[j - 1]] > g->left[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int want = r->count, use_free = 0;
    int64_t pct = 0;
    for (int i = 0; i < g->ngpu && want > 0; i++) {
        int32_t l = g->left[order[i]];
        if (l < r->milli) continue;
        want--;
        use_free += l == MILLI;
        pct += (int64_t)l * 100 / MILLI;
    }
    if (want > 0) return 0;
    if (use_free > 0) {
        int64_t v = KS_MAX_NODE_SCORE / 2 - use_free;
        return v > KS_MAX_NODE_SCORE / 3 ? v : KS_MAX_NODE_SCORE / 3;
    }
    int64_t v = KS_MAX_NODE_SCORE - pct / 10;
    return v > KS_MAX_NODE_SCORE / 2 ? v : KS_MAX_NODE_SCORE / 2;
}

/* The less CPU and GPU left after placement, the better (raw; the
 * framework's NormalizeScore then maps the nodes' range to 0..100). */
static int64_t bestfit_score(const gnode *g, const gpu_req *r) {
    double v = (double)(g->cpu_left - r->cpu) / MAX_SPEC_CPU * 0.5 +
               (double)(gpu_left_total(g) - r->milli * r->count) / MAX_SPEC_GPU * 0.5;
    return (int64_t)((1.0 - v) * KS_MAX_NODE_SCORE);
}

static int64_t policy_score(scorer *s, memo *m, smemo *sm, const gnode *g, const gpu_req *r) {
    int gpu;
    switch (s->p) {
    case P_DOTPROD: return dotprod_score(g, r);
    case P_CLUSTERING: return clustering_score(g, r);
    case P_PACKING: return packing_score(g, r);
    case P_BESTFIT: return bestfit_score(g, r);
    case P_FGD: return fgd_score(m, sm, &s->w, g, r, &gpu);
    case P_RANDOM: break;
    }
    return 0;
}

typedef struct stamp {
    uint64_t cycle;
    const ks_node_info *chosen; /* RandomScore */
    atomic_size_t hint;         /* Score's gnode_find */
} stamp;

/* PreScore computes every node's score (one thread: the FGD memo is
 * written here) and leaves it in the table, stamped with this cycle. */
static ks_status *scorer_pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *const *nodes, size_t n) {
    scorer *s = self;
    gpu_req r;
    if (!pod_request(pod, &r)) r = (gpu_req){.cpu = ks_pod_request(pod, "cpu")};
    stamp *sp = ks_cycle_state_alloc(st, sizeof(*sp));
    memset(sp, 0, sizeof(*sp));
    /* OpenGpuShare's PreFilter synced every node of this cycle already */
    if (!ks_cycle_state_read(st, req_key)) ctx_sync(s->c, nodes, n);
    if (s->p == P_RANDOM) {
        /* a uniform draw that does not depend on the order of nodes[]:
         * the node whose name hashes lowest under this cycle's key */
        uint64_t key = rng_next(&s->rng), best = UINT64_MAX;
        for (size_t i = 0; i < n; i++) {
            const gnode *g = gnode_find(s->c, nodes[i], &sp->hint);
            uint64_t v = mix(key, g ? g->name_hash : 0);
            if (!sp->chosen || v < best) {
                best = v;
                sp->chosen = nodes[i];
            }
        }
        ks_cycle_state_write(st, stamp_keys[P_RANDOM], sp, NULL, NULL);
        return NULL;
    }
    pthread_mutex_lock(&s->c->mu);
    sp->cycle = ++s->c->cycle;
    /* the entries first (a compact probe each), then their lines fetched
     * ahead of the scoring: hundreds of nodes, each a cache miss */
    gnode **gs = ks_cycle_state_alloc(st, (n ? n : 1) * sizeof(*gs));
    for (size_t i = 0; i < n; i++) gs[i] = (gnode *)gnode_find(s->c, nodes[i], &sp->hint);
    atomic_store_explicit(&sp->hint, 0, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        if (i + 4 < n && gs[i + 4]) {
            __builtin_prefetch(gs[i + 4]);
            __builtin_prefetch((const char *)gs[i + 4] + 64);
            if (s->p == P_FGD) __builtin_prefetch(&gs[i + 4]->sc[sc_index(&r)]);
        }
        gnode *g = gs[i];
        if (!g) continue;
        g->score = policy_score(s, &s->m, &s->sm, g, &r);
        g->stamp = sp->cycle;
    }
    pthread_mutex_unlock(&s->c->mu);
    ks_cycle_state_write(st, stamp_keys[s->p], sp, NULL, NULL);
    return NULL;
}

static ks_status *scorer_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                               int64_t *score) {
    scorer *s = self;
    if (s->p == P_RANDOM) {
        const stamp *sp = ks_cycle_state_read(st, stamp_keys[P_RANDOM]);
        *score = sp && sp->chosen == ni ? KS_MAX_NODE_SCORE : 0;
        return NULL;
    }
    stamp *sp = ks_cycle_state_read(st, stamp_keys[s->p]);
    const gnode *g = gnode_find(s->c, ni, sp ? &sp->hint : NULL);
    if (sp && g && g->stamp == sp->cycle && g->ni == ni) {
        *score = g->score;
        return NULL;
    }
    gpu_req r;
    if (!pod_request(pod, &r)) r = (gpu_req){.cpu = ks_pod_request(pod, "cpu")};
    gnode tmp;
    *score = policy_score(s, NULL, NULL, gnode_of(s->c, ni, &tmp, NULL), &r);
    return NULL;
}

/* BestFit's raw scores span any range: map min..max to 0..100 (all equal: 0). */
static ks_status *minmax_normalize(void *self, ks_cycle_state *st, const ks_pod *pod, ks_node_score *sc, size_t n) {
    (void)self, (void)st, (void)pod;
    int64_t hi = INT64_MIN, lo = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (sc[i].score > hi) hi = sc[i].score;
        if (sc[i].score < lo) lo = sc[i].score;
    }
    for (size_t i = 0; i < n; i++)
        sc[i].score = hi == lo ? 0 : (sc[i].score - lo) * KS_MAX_NODE_SCORE / (hi - lo);
    return NULL;
}

/* ---- registration ------------------------------------------------------ */

static const ks_plugin_ops share_ops = {
    .abi_version = KS_ABI_VERSION,
    .name = "OpenGpuShare",
    .create = share_create,
    .destroy = share_destroy,
    .events_to_register = share_events,
    .pre_filter = share_pre_filter,
    .filter = share_filter,
    .reserve = share_reserve,
    .unreserve = share_unreserve,
    .pre_bind_pre_flight = share_pre_bind_pre_flight,
    .pre_bind = share_pre_bind,
};

#define SCORER(var, nm, cr, norm)                                                                              \
    static const ks_plugin_ops var = {                                                                         \
        .abi_version = KS_ABI_VERSION,                                                                         \
        .name = nm,                                                                                            \
        .create = cr,                                                                                          \
        .destroy = scorer_destroy,                                                                             \
        .pre_score = scorer_pre_score,                                                                         \
        .score = scorer_score,                                                                                 \
        .normalize_score = norm,                                                                               \
    }
SCORER(random_ops, "RandomScore", random_create, NULL);
SCORER(dotprod_ops, "DotProductScore", dotprod_create, NULL);
SCORER(clustering_ops, "GpuClusteringScore", clustering_create, NULL);
SCORER(packing_ops, "GpuPackingScore", packing_create, NULL);
SCORER(bestfit_ops, "BestFitScore", bestfit_create, minmax_normalize);
SCORER(fgd_ops, "FGDScore", fgd_create, NULL);

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    const ks_plugin_ops *all[] = {&share_ops,   &random_ops,  &dotprod_ops, &clustering_ops,
                                  &packing_ops, &bestfit_ops, &fgd_ops};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!ks_registry_add(reg, all[i], NULL)) return 1;
    return 0;
}
