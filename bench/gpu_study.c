/* gpu-study: the experiment of "Beware of Fragmentation" (Weng et al.,
 * USENIX ATC '23) on ksched's real scheduling loop: tasks sampled from an
 * openb trace arrive one by one until their GPU demand reaches 130 % of
 * the cluster's GPUs; after each arrival the GPU allocation ratio is
 * recorded; every policy, every seed. The protocol follows the FGD
 * simulator's (hkust-adsl/kubernetes-scheduler-simulator); where it could
 * not be matched docs/gpu-sharing.md says so.
 *
 *   gpu-study --nodes NODES.csv --trace PODS.csv [--trace ...]
 *             --policies Random,DotProd,GpuClustering,GpuPacking,BestFit,FGD
 *             --seeds 42-51 [--ratio 1.3] [--jobs N] [--plugin GpuShare.so]
 *             [--expected analysis_allo_discrete.csv] [--out FILE]
 *
 * Output: CSV `workload,policy,seed,total_gpus,0,1,...,130` (the GPU
 * allocation ratio in percent once the arrived GPU demand reached each
 * percent of the cluster's GPUs), to stdout or FILE; a summary table (the
 * means over seeds at 50..130 %, next to the paper's when --expected is
 * given) and timings on stderr. */
#include "api/cluster.h"
#include "api/pod.h"
#include "api/objects.h"
#include "config/config.h"
#include "config/feature_gates.h"
#include "framework/loader.h"
#include "backend/api_dispatcher.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "sim/openb.h"
#include "sim/simulate.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NPCT 131 /* 0..130 % */

/* ---- the policies ----------------------------------------------------------- */

typedef struct policy {
    const char *name;   /* the paper's */
    const char *plugin; /* its Score plugin */
    const char *gpusel; /* OpenGpuShare's GPU choice, as the paper's runs set it */
    ks_openb_dra dra;   /* the DRA forms: no plugin, upstream's default profile */
} policy;

static const policy policies[] = {
    {"Random", "RandomScore", "random", KS_OPENB_NO_DRA},
    {"DotProd", "DotProductScore", "best", KS_OPENB_NO_DRA},
    {"GpuClustering", "GpuClusteringScore", "best", KS_OPENB_NO_DRA},
    {"GpuPacking", "GpuPackingScore", "best", KS_OPENB_NO_DRA},
    {"BestFit", "BestFitScore", "best", KS_OPENB_NO_DRA},
    {"FGD", "FGDScore", "FGD", KS_OPENB_NO_DRA},
    /* beyond the paper: the GPUs as DRA devices, upstream's default
     * profile (DynamicResources picks the devices); a ResourceSlice per
     * node, or one per GPU (docs/gpu-sharing.md) */
    {"DRA", NULL, NULL, KS_OPENB_DRA_NODE_SLICE},
    {"DRAPerGPU", NULL, NULL, KS_OPENB_DRA_GPU_SLICE},
};
#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

/* ---- a random stream per experiment --------------------------------------- */

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t rnd_below(uint64_t *s, uint32_t n) { return (uint32_t)(rnd(s) % n); }

/* ---- traces ------------------------------------------------------------------ */

typedef struct trace {
    char *path, *name;
    ks_openb_tasks t;
    uint32_t *by_name; /* task indices in name order (the simulator's workload order) */
    char *typical;     /* FGD's typicalPods, as YAML flow text */
} trace;

static const ks_openb_tasks *sort_tasks;
static int cmp_task_name(const void *a, const void *b) {
    return strcmp(sort_tasks->v[*(const uint32_t *)a].name, sort_tasks->v[*(const uint32_t *)b].name);
}

static const ks_openb_nodes *sort_nodes;
static int cmp_node_name(const void *a, const void *b) {
    return strcmp(sort_nodes->v[*(const uint32_t *)a].name, sort_nodes->v[*(const uint32_t *)b].name);
}

typedef struct shape {
    int64_t cpu, milli;
    int count;
    const char *model;
    uint32_t n;
} shape;

/* The simulator's PodResource order, for equal counts. */
static int shape_less(const shape *a, const shape *b) {
    if (a->cpu != b->cpu) return a->cpu < b->cpu;
    if (a->milli != b->milli) return a->milli < b->milli;
    if (a->count != b->count) return a->count < b->count;
    return strcmp(a->model, b->model) < 0;
}

static int cmp_shape_desc(const void *pa, const void *pb) {
    const shape *a = pa, *b = pb;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    return shape_less(b, a) ? -1 : shape_less(a, b) ? 1 : 0;
}

/* FGD's workload distribution: the task shapes (CPU, GPU share, GPU
 * count, models) by frequency, the most frequent ones covering 95 % of
 * the tasks (the simulator's typical pods, popularity threshold 95). */
static char *typical_pods(const ks_openb_tasks *t) {
    shape *s = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        const ks_openb_task *k = &t->v[i];
        shape x = {k->cpu_milli, k->num_gpu ? k->gpu_milli : 0, k->num_gpu, k->gpu_spec, 1};
        size_t j = 0;
        while (j < n && !(s[j].cpu == x.cpu && s[j].milli == x.milli && s[j].count == x.count &&
                          !strcmp(s[j].model, x.model)))
            j++;
        if (j < n) {
            s[j].n++;
            continue;
        }
        KS_GROW(s, cap, n + 1);
        s[n++] = x;
    }
    qsort(s, n, sizeof(*s), cmp_shape_desc);
    double want = 0.95 * (double)t->n, cum = 0;
    size_t keep = 0;
    while (keep < n && cum < want) cum += s[keep++].n;
    size_t len = 0, sz = 256 + keep * 128;
    char *out = ks_xmalloc(sz);
    len += (size_t)snprintf(out + len, sz - len, "[");
    for (size_t i = 0; i < keep; i++)
        len += (size_t)snprintf(out + len, sz - len, "%s{milliCpu: %lld, milliGpu: %lld, gpuCount: %d, gpuModel: \"%s\", weight: %u}",
                                i ? ", " : "", (long long)s[i].cpu, (long long)s[i].milli, s[i].count, s[i].model, s[i].n);
    snprintf(out + len, sz - len, "]");
    free(s);
    return out;
}

static bool trace_load(trace *tr, const char *path, char **err) {
    memset(tr, 0, sizeof(*tr));
    if (!ks_openb_read_tasks(path, &tr->t, err)) return false;
    if (!tr->t.n) {
        *err = ks_xasprintf("%s: no tasks", path);
        return false;
    }
    tr->path = ks_xstrdup(path);
    const char *base = strrchr(path, '/');
    tr->name = ks_xstrdup(base ? base + 1 : path);
    char *dot = strrchr(tr->name, '.');
    if (dot && !strcmp(dot, ".csv")) *dot = '\0';
    tr->by_name = ks_xmalloc(tr->t.n * sizeof(uint32_t));
    for (uint32_t i = 0; i < tr->t.n; i++) tr->by_name[i] = i;
    sort_tasks = &tr->t;
    qsort(tr->by_name, tr->t.n, sizeof(uint32_t), cmp_task_name);
    tr->typical = typical_pods(&tr->t);
    return true;
}

static void trace_free(trace *tr) {
    ks_openb_tasks_free(&tr->t);
    free(tr->by_name);
    free(tr->typical);
    free(tr->path);
    free(tr->name);
}

/* ---- one experiment ------------------------------------------------------------ */

typedef struct study {
    ks_openb_nodes nodes;
    uint32_t *node_by_name; /* node indices in name order */
    int64_t node_gpu_milli;
    int total_gpus;
    double ratio;
    bool narrow; /* OpenGpuShare narrowNodes (same decisions, faster) */
    bool why;    /* print each failed task's FailedScheduling message */
    ks_registry *reg;
} study;

typedef struct result {
    double alloc[NPCT]; /* NAN: no sample */
    uint32_t arrived, scheduled;
    double seconds;     /* wall */
    double cpu_seconds; /* the process's CPU (one experiment at a time per process) */
} result;


static uint32_t points(void *reg, const char *name) {
    uint32_t m = ks_registry_points(reg, name);
    return m ? m : ks_config_intree_points(NULL, name);
}

/* A configuration from YAML text, resolved against the registry. */
static ks_config *load_config_text(const char *yaml, char **err) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("gpu-study config", yaml, strlen(yaml), &errs);
    if (cfg && !ks_config_resolve(cfg, points, ks_default_registry(), &errs)) {
        ks_config_free(cfg);
        cfg = NULL;
    }
    if (!cfg) *err = ks_xasprintf("%s", errs.n ? errs.msgs[0] : "bad configuration");
    ks_config_errors_free(&errs);
    return cfg;
}

static ks_config *policy_config(const policy *p, const trace *tr, uint64_t seed, bool narrow, char **err) {
    if (!p->plugin) { /* DRA: the default profile, every node scored, no preemption */
        static const char dra_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                       "kind: KubeSchedulerConfiguration\n"
                                       "percentageOfNodesToScore: 100\n"
                                       "profiles:\n"
                                       "- schedulerName: default-scheduler\n"
                                       "  plugins:\n"
                                       "    postFilter: {disabled: [{name: '*'}]}\n";
        return load_config_text(dra_yaml, err);
    }
    char *fgd_args = NULL;
    if (!strcmp(p->gpusel, "FGD") || !strcmp(p->plugin, "FGDScore"))
        fgd_args = ks_xasprintf("      typicalPods: %s\n", tr->typical);
    char *yaml = ks_xasprintf(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 100\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  plugins:\n"
        "    preFilter: {enabled: [{name: OpenGpuShare}]}\n"
        "    filter: {enabled: [{name: OpenGpuShare}]}\n"
        "    reserve: {enabled: [{name: OpenGpuShare}]}\n"
        "    preBind: {enabled: [{name: OpenGpuShare}]}\n"
        "    postFilter: {disabled: [{name: '*'}]}\n"
        "    preScore: {disabled: [{name: '*'}], enabled: [{name: %s}]}\n"
        "    score: {disabled: [{name: '*'}], enabled: [{name: %s, weight: 1}]}\n"
        "  pluginConfig:\n"
        "  - name: OpenGpuShare\n"
        "    args:\n"
        "      gpuSelection: %s\n"
        "      narrowNodes: %s\n"
        "      seed: %llu\n"
        "%s"
        "  - name: %s\n"
        "    args:\n"
        "      seed: %llu\n"
        "%s",
        p->plugin, p->plugin, p->gpusel, narrow ? "true" : "false", (unsigned long long)seed, !strcmp(p->gpusel, "FGD") ? fgd_args : "",
        p->plugin, (unsigned long long)seed * 7919 + 1, !strcmp(p->plugin, "FGDScore") ? fgd_args : "");
    ks_config *cfg = load_config_text(yaml, err);
    free(yaml);
    free(fgd_args);
    return cfg;
}

/* The arrival order, as the simulator builds it for --shuffle-pod and
 * -tune RATIO: the trace's tasks in name order, shuffled; then tasks
 * drawn at random (with replacement, from the name order) are appended
 * while the GPU demand stays within RATIO of the cluster's GPUs (or, when
 * the trace asks for more, tasks are dropped at random until it fits). */
static uint32_t *arrival_order(const study *sy, const trace *tr, uint64_t *rng, size_t *n, char ***names) {
    size_t cap = tr->t.n * 2 + 16, k = tr->t.n;
    uint32_t *o = ks_xmalloc(cap * sizeof(*o));
    *names = ks_xcalloc(cap, sizeof(char *));
    memcpy(o, tr->by_name, k * sizeof(*o));
    for (size_t i = k - 1; i > 0; i--) { /* Fisher-Yates, as Go's rand.Shuffle */
        size_t j = rnd_below(rng, (uint32_t)(i + 1));
        uint32_t t = o[i];
        o[i] = o[j];
        o[j] = t;
    }
    int64_t total = 0;
    for (size_t i = 0; i < k; i++) total += ks_openb_task_gpu_milli(&tr->t.v[o[i]]);
    double target = sy->ratio * (double)sy->node_gpu_milli;
    if ((double)total < target) {
        for (uint32_t i = 0;; i++) {
            uint32_t t = tr->by_name[rnd_below(rng, (uint32_t)tr->t.n)];
            /* the simulator compares with the task's per-GPU share here */
            if ((double)(total + tr->t.v[t].gpu_milli) > target) break;
            total += ks_openb_task_gpu_milli(&tr->t.v[t]);
            if (k == cap) {
                cap *= 2;
                o = ks_xrealloc(o, cap * sizeof(*o));
                *names = ks_xrealloc(*names, cap * sizeof(char *));
            }
            o[k] = t;
            (*names)[k] = ks_xasprintf("%s-tuned-%u", tr->t.v[t].name, i);
            k++;
        }
    } else {
        while ((double)total > target && k) {
            size_t j = rnd_below(rng, (uint32_t)k);
            total -= ks_openb_task_gpu_milli(&tr->t.v[o[j]]);
            memmove(o + j, o + j + 1, (k - j - 1) * sizeof(*o));
            free((*names)[j]);
            memmove(*names + j, *names + j + 1, (k - j - 1) * sizeof(char *));
            k--;
        }
    }
    *n = k;
    return o;
}

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

/* Python's round(x, 2) on the simulator's ratios, closely enough. */
static double round2(double x) { return nearbyint(x * 100) / 100; }

static bool run_one(const study *sy, const trace *tr, const policy *p, uint64_t seed, result *res, char **err) {
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    memset(res, 0, sizeof(*res));
    uint64_t rng = seed;
    size_t n = 0;
    char **names = NULL;
    uint32_t *order = arrival_order(sy, tr, &rng, &n, &names);
    ks_cluster *c = ks_cluster_new(), *pool = ks_cluster_new();
    ks_config *cfg = NULL;
    ks_scheduler *s = NULL;
    ks_memory_client *mb = NULL;
    ks_clock *clk = NULL;
    double *arr = NULL, *used = NULL;
    char **node_names = NULL;
    bool ok = false;
    /* The simulator names node i (in name order) "NNNN-name" after a random
     * permutation, and its scheduler breaks ties between equal scores by
     * the smallest name: a fixed random preference among nodes per seed.
     * ksched's deterministic tie-break (smallest name) on the same names
     * is that rule. */
    size_t nn = sy->nodes.n;
    uint32_t *perm = ks_xmalloc(nn * sizeof(*perm));
    for (uint32_t i = 0; i < nn; i++) perm[i] = i;
    for (size_t i = nn - 1; i > 0; i--) {
        size_t j = rnd_below(&rng, (uint32_t)(i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    node_names = ks_xcalloc(nn, sizeof(char *));
    for (size_t i = 0; i < nn; i++)
        node_names[sy->node_by_name[i]] = ks_xasprintf("%04u-%s", perm[i], sy->nodes.v[sy->node_by_name[i]].name);
    free(perm);
    ks_openb_dra dra = p->dra;
    if (!ks_openb_add_nodes(c, &sy->nodes, (const char *const *)node_names, err)) goto out;
    if (dra && !ks_openb_add_dra(c, &sy->nodes, (const char *const *)node_names, dra, err)) goto out;
    if (!ks_openb_add_pods(pool, &tr->t, order, (const char *const *)names, n, "default", dra, err)) goto out;
    if (pool->pods.n != n) {
        *err = ks_xasprintf("%s: %u pods decoded of %zu", tr->name, pool->pods.n, n);
        goto out;
    }
    cfg = policy_config(p, tr, seed, sy->narrow, err);
    if (!cfg) goto out;
    clk = ks_clock_sim_new(4102444800LL * KS_NS_PER_SEC);
    mb = ks_memory_client_new(c);
    ks_cluster_client be = *ks_memory_client_iface(mb);
    be.executes &= ~KS_CALL_BIT(KS_CALL_EVENT); /* events dropped */
    ks_scheduler_options so = {
        .config = cfg, .registry = sy->reg, .backend = &be, .clock = clk, .seed = seed, .ties = KS_TIES_BY_NAME,
        .parallelism = 1};
    s = ks_sim_start(&so, err);
    if (!s) goto out;
    arr = ks_xmalloc(n * sizeof(double));
    used = ks_xmalloc(n * sizeof(double));
    int64_t arrived = 0, alloc = 0;
    ks_map claims; /* DRA: each pod's claim, by its name (the same as the pod's) */
    ks_map_init(&claims);
    for (uint32_t i = 0; i < pool->resource_claims.n; i++)
        ks_map_put(&claims, pool->resource_claims.v[i]->name, pool->resource_claims.v[i]);
    /* One task at a time, as the simulator creates them: it is scheduled
     * (or fails) before the next arrives; a task that fails is deleted,
     * never retried. Its GPUs count as arrived either way. */
    for (size_t i = 0; i < n; i++) {
        ks_pod *pod = pool->pods.v[i];
        int64_t milli = ks_openb_task_gpu_milli(&tr->t.v[order[i]]);
        arrived += milli;
        ks_resource_claim *claim = dra && milli ? ks_map_get(&claims, pod->name) : NULL;
        if (claim) ks_memory_client_add_object(mb, KS_KIND_RESOURCE_CLAIM, KS_OBJECT_REF(claim));
        ks_memory_client_add_pod(mb, ks_pod_ref(pod));
        ks_scheduler_schedule_one(s);
        ks_api_dispatcher_drain(ks_scheduler_dispatcher(s));
        const ks_pod *now = ks_memory_client_pod(mb, pod->key);
        if (now && now->node_name) {
            alloc += milli;
            res->scheduled++;
        } else if (now) {
            if (sy->why)
                for (uint32_t k = 0; k < now->nconditions; k++)
                    if (now->conditions[k].message) fprintf(stderr, "%zu %s: %s\n", i, ks_str(now->name), now->conditions[k].message);
            ks_memory_client_remove_pod(mb, pod->key);
        }
        arr[i] = (double)arrived / sy->total_gpus / 10;
        used[i] = round2((double)alloc / sy->total_gpus / 10);
    }
    res->arrived = (uint32_t)n;
    ks_map_free(&claims);
    /* The simulator's analysis: the mean allocation over the arrivals whose
     * arrived share rounds to x %, else over x-1..x+1 %. */
    for (int x = 0; x < NPCT; x++) {
        double sum = 0;
        int cnt = 0;
        for (size_t i = 0; i < n; i++)
            if (nearbyint(arr[i]) == x) sum += used[i], cnt++;
        if (!cnt)
            for (size_t i = 0; i < n; i++)
                if (nearbyint(arr[i]) >= x - 1 && nearbyint(arr[i]) <= x + 1) sum += used[i], cnt++;
        res->alloc[x] = cnt ? round2(sum / cnt) : NAN;
    }
    ok = true;
out:
    if (s) {
        ks_scheduler_stop(s);
        ks_scheduler_free(s);
    }
    if (mb) ks_memory_client_free(mb);
    if (clk) ks_clock_free(clk);
    if (cfg) ks_config_free(cfg);
    ks_cluster_free(c);
    ks_cluster_free(pool);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    for (size_t i = 0; node_names && i < sy->nodes.n; i++) free(node_names[i]);
    free(node_names);
    free(order);
    free(arr);
    free(used);
    res->seconds = now_s() - t0;
    res->cpu_seconds = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return ok;
}

/* ---- output ------------------------------------------------------------------- */

typedef struct job {
    size_t trace, policy, seed;
} job;

static void print_row(FILE *f, const char *workload, const char *pol, uint64_t seed, int total, const result *r) {
    fprintf(f, "%s,%s,%llu,%d", workload, pol, (unsigned long long)seed, total);
    for (int x = 0; x < NPCT; x++) {
        if (isnan(r->alloc[x])) fputs(",", f);
        else fprintf(f, ",%.2f", r->alloc[x]);
    }
    fputc('\n', f);
}

/* The paper's results (analysis_allo_discrete.csv: workload, sc_policy
 * "NN-Name", tune, seed, total_gpus, 0..130): mean per workload and
 * policy at each percent. */
typedef struct expected {
    char workload[96], policy[32];
    double sum[NPCT];
    int n;
} expected;

static expected *load_expected(const char *path, size_t *nout) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gpu-study: %s: cannot open\n", path);
        return NULL;
    }
    expected *e = NULL;
    size_t n = 0, cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    if (getline(&line, &lcap, f) < 0) n = 0;
    while (getline(&line, &lcap, f) >= 0) {
        char *fld[NPCT + 8];
        int nf = 0;
        for (char *s = line, *c; nf < NPCT + 8; s = c + 1) {
            fld[nf++] = s;
            c = strchr(s, ',');
            if (!c) break;
            *c = '\0';
        }
        if (nf < 5 + NPCT) continue;
        const char *pol = strchr(fld[1], '-') ? strchr(fld[1], '-') + 1 : fld[1];
        size_t j = 0;
        while (j < n && (strcmp(e[j].workload, fld[0]) || strcmp(e[j].policy, pol))) j++;
        if (j == n) {
            KS_GROW(e, cap, n + 1);
            memset(&e[n], 0, sizeof(e[n]));
            snprintf(e[n].workload, sizeof(e[n].workload), "%s", fld[0]);
            snprintf(e[n].policy, sizeof(e[n].policy), "%s", pol);
            n++;
        }
        for (int x = 0; x < NPCT; x++) e[j].sum[x] += atof(fld[5 + x]);
        e[j].n++;
    }
    free(line);
    fclose(f);
    *nout = n;
    return e;
}

static const expected *find_expected(const expected *e, size_t n, const char *w, const char *p) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(e[i].workload, w) && !strcmp(e[i].policy, p)) return &e[i];
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One trace's CPU seconds: in all, and the median and range of one
 * experiment. */
static void cpu_line(const result *res, const job *jl, size_t njobs, size_t t) {
    double *v = ks_xmalloc((njobs ? njobs : 1) * sizeof(double)), sum = 0;
    size_t n = 0;
    for (size_t j = 0; j < njobs; j++)
        if (jl[j].trace == t) sum += v[n++] = res[j].cpu_seconds;
    qsort(v, n, sizeof(double), cmp_double);
    if (n)
        fprintf(stderr, "CPU: %.1f s in all; one experiment %.2f s median, %.2f-%.2f s\n", sum,
                n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]);
    free(v);
}

/* ---- command line ---------------------------------------------------------------- */

static void usage(FILE *f) {
    fprintf(f, "usage: gpu-study --nodes NODES.csv --trace PODS.csv [--trace PODS.csv ...]\n"
               "                 [--policies Random,DotProd,GpuClustering,GpuPacking,BestFit,FGD] [--seeds 42-51]\n"
               "                 [--ratio 1.3] [--jobs N] [--plugin GpuShare.so] [--expected FILE] [--out FILE]\n"
               "                 [--no-narrow] [--why-failed]\n");
}

static bool parse_seeds(const char *s, uint64_t **out, size_t *n) {
    *n = 0;
    size_t cap = 0;
    while (*s) {
        char *end;
        unsigned long long a = strtoull(s, &end, 10), b = a;
        if (end == s) return false;
        if (*end == '-') {
            s = end + 1;
            b = strtoull(s, &end, 10);
            if (end == s || b < a || b - a > 100000) return false;
        }
        for (unsigned long long v = a; v <= b; v++) {
            KS_GROW(*out, cap, *n + 1);
            (*out)[(*n)++] = v;
        }
        s = end;
        if (*s == ',') s++;
        else if (*s) return false;
    }
    return *n > 0;
}

int main(int argc, char **argv) {
    const char *nodes_path = NULL, *out_path = NULL, *plugin = NULL, *expected_path = NULL;
    const char *pol_arg = "Random,DotProd,GpuClustering,GpuPacking,BestFit,FGD", *seed_arg = "42-51";
    const char **trace_paths = NULL;
    size_t ntraces = 0, tcap = 0;
    int jobs = 1;
    double ratio = 1.3;
    bool narrow = true, why = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-narrow")) { /* every node through every filter: a check */
            narrow = false;
            continue;
        }
        if (!strcmp(a, "--why-failed")) {
            why = true;
            continue;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--nodes")) nodes_path = v;
        else if (!strcmp(a, "--trace")) {
            KS_GROW(trace_paths, tcap, ntraces + 1);
            trace_paths[ntraces++] = v;
        } else if (!strcmp(a, "--policies")) pol_arg = v;
        else if (!strcmp(a, "--seeds")) seed_arg = v;
        else if (!strcmp(a, "--out")) out_path = v;
        else if (!strcmp(a, "--plugin")) plugin = v;
        else if (!strcmp(a, "--expected")) expected_path = v;
        else if (!strcmp(a, "--jobs")) jobs = atoi(v);
        else if (!strcmp(a, "--ratio")) ratio = atof(v);
        else if (!strcmp(a, "-v")) ks_log_set_verbosity(atoi(v));
        else {
            usage(stderr);
            return 2;
        }
    }
    if (!nodes_path || !ntraces || jobs < 1 || ratio <= 0) {
        usage(stderr);
        return 2;
    }
    size_t pol_idx[NPOLICIES], npol = 0;
    for (const char *s = pol_arg; *s;) {
        size_t len = strcspn(s, ",");
        size_t k = 0;
        while (k < NPOLICIES && (strlen(policies[k].name) != len || strncmp(policies[k].name, s, len))) k++;
        if (k == NPOLICIES || npol == NPOLICIES) {
            fprintf(stderr, "gpu-study: --policies: unknown policy %.*s (have Random, DotProd, GpuClustering, "
                            "GpuPacking, BestFit, FGD, DRA, DRAPerGPU)\n", (int)len, s);
            return 2;
        }
        pol_idx[npol++] = k;
        s += len + (s[len] == ',');
    }
    uint64_t *seeds = NULL;
    size_t nseeds = 0;
    if (!parse_seeds(seed_arg, &seeds, &nseeds)) {
        fprintf(stderr, "gpu-study: --seeds: want N, A-B or a comma list\n");
        return 2;
    }

    double t_start = now_s();
    study sy = {.ratio = ratio, .narrow = narrow, .why = why, .reg = ks_default_registry()};
    char *err = NULL;
    for (size_t i = 0; i < npol; i++)
        if (!policies[pol_idx[i]].plugin) {
            const char *gate = "DRAConsumableCapacity=true";
            if (!ks_feature_gates_apply(&gate, 1, &err)) {
                fprintf(stderr, "gpu-study: %s\n", err);
                return 2;
            }
        }
    char defplugin[4096];
    if (!plugin) { /* next to this binary: build/<mode>/bench -> build/<mode>/plugins */
        ssize_t k = readlink("/proc/self/exe", defplugin, sizeof(defplugin) - 64);
        if (k > 0) {
            defplugin[k] = '\0';
            char *sl = strrchr(defplugin, '/');
            if (sl) *sl = '\0';
            sl = strrchr(defplugin, '/');
            if (sl) strcpy(sl, "/plugins/GpuShare.so");
            plugin = defplugin;
        }
    }
    if (!plugin || !ks_plugin_load(sy.reg, plugin, &err)) {
        fprintf(stderr, "gpu-study: %s\n", err ? err : "no plugin");
        return 2;
    }
    if (!ks_openb_read_nodes(nodes_path, &sy.nodes, &err)) {
        fprintf(stderr, "gpu-study: %s\n", err);
        return 2;
    }
    sy.node_by_name = ks_xmalloc(sy.nodes.n * sizeof(uint32_t));
    for (uint32_t i = 0; i < sy.nodes.n; i++) sy.node_by_name[i] = i;
    sort_nodes = &sy.nodes;
    qsort(sy.node_by_name, sy.nodes.n, sizeof(uint32_t), cmp_node_name);
    for (size_t i = 0; i < sy.nodes.n; i++) {
        sy.total_gpus += sy.nodes.v[i].gpus;
        sy.node_gpu_milli += (int64_t)sy.nodes.v[i].gpus * 1000;
    }
    if (!sy.total_gpus) {
        fprintf(stderr, "gpu-study: %s: no GPUs\n", nodes_path);
        return 2;
    }
    trace *traces = ks_xcalloc(ntraces, sizeof(*traces));
    for (size_t i = 0; i < ntraces; i++)
        if (!trace_load(&traces[i], trace_paths[i], &err)) {
            fprintf(stderr, "gpu-study: %s\n", err);
            return 2;
        }
    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "gpu-study: %s: cannot write\n", out_path);
        return 2;
    }

    size_t njobs = ntraces * npol * nseeds;
    job *jl = ks_xmalloc(njobs * sizeof(*jl));
    size_t k = 0;
    for (size_t t = 0; t < ntraces; t++)
        for (size_t p = 0; p < npol; p++)
            for (size_t s = 0; s < nseeds; s++) jl[k++] = (job){t, pol_idx[p], s};
    result *res = ks_xcalloc(njobs, sizeof(*res));

    /* Experiments are independent: --jobs N runs them in N processes. They
     * take the next experiment from a shared counter as each finishes (an
     * experiment lasts 0.2-2 s by policy and trace, so a fixed share would
     * leave processes idle at the end) and write its result into a shared
     * array; the parent waits for them all. */
    if (jobs > (int)njobs) jobs = (int)njobs;
    if (jobs == 1) {
        for (size_t j = 0; j < njobs; j++)
            if (!run_one(&sy, &traces[jl[j].trace], &policies[jl[j].policy], seeds[jl[j].seed], &res[j], &err)) {
                fprintf(stderr, "gpu-study: %s\n", err);
                return 1;
            }
    } else {
        size_t shared_len = sizeof(atomic_size_t) + njobs * sizeof(result);
        void *shared = mmap(NULL, shared_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared == MAP_FAILED) {
            fprintf(stderr, "gpu-study: cannot map shared memory for %zu results\n", njobs);
            return 1;
        }
        atomic_size_t *next = shared;
        atomic_init(next, 0);
        result *sres = (result *)((char *)shared + sizeof(atomic_size_t));
        pid_t *pids = ks_xcalloc((size_t)jobs, sizeof(*pids));
        int failed = 0;
        for (int w = 0; w < jobs; w++) {
            pids[w] = fork();
            if (pids[w] < 0) {
                failed = 1;
                break;
            }
            if (pids[w] == 0) {
                for (size_t j; (j = atomic_fetch_add(next, 1)) < njobs;)
                    if (!run_one(&sy, &traces[jl[j].trace], &policies[jl[j].policy], seeds[jl[j].seed], &sres[j],
                                 &err)) {
                        fprintf(stderr, "gpu-study: %s\n", err);
                        _exit(1);
                    }
                _exit(0);
            }
        }
        for (int w = 0; w < jobs && pids[w] > 0; w++) {
            int st = 0;
            if (waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) failed = 1;
        }
        memcpy(res, sres, njobs * sizeof(result));
        munmap(shared, shared_len);
        free(pids);
        if (failed) {
            fprintf(stderr, "gpu-study: a worker failed\n");
            return 1;
        }
    }
    double wall = now_s() - t_start;

    fprintf(out, "workload,policy,seed,total_gpus");
    for (int x = 0; x < NPCT; x++) fprintf(out, ",%d", x);
    fputc('\n', out);
    for (size_t j = 0; j < njobs; j++)
        print_row(out, traces[jl[j].trace].name, policies[jl[j].policy].name, seeds[jl[j].seed], sy.total_gpus, &res[j]);
    if (out != stdout) fclose(out);

    /* Summary: the mean over seeds at every 10 % from 50 %, and the paper's. */
    size_t nexp = 0;
    expected *ex = expected_path ? load_expected(expected_path, &nexp) : NULL;
    double tsum = 0, tmax = 0, csum = 0;
    for (size_t j = 0; j < njobs; j++) {
        tsum += res[j].seconds;
        csum += res[j].cpu_seconds;
        if (res[j].seconds > tmax) tmax = res[j].seconds;
    }
    for (size_t t = 0; t < ntraces; t++) {
        fprintf(stderr, "\n%s: GPU allocation ratio (%%) by arrived GPU demand (%% of %d GPUs), mean of %zu seeds%s\n",
                traces[t].name, sy.total_gpus, nseeds, ex ? "; paper's in brackets" : "");
        fprintf(stderr, "%-14s", "policy");
        for (int x = 50; x <= 130; x += 10) fprintf(stderr, ex ? "  %16d" : "  %6d", x);
        fputc('\n', stderr);
        for (size_t p = 0; p < npol; p++) {
            const policy *pol = &policies[pol_idx[p]];
            const expected *e = ex ? find_expected(ex, nexp, traces[t].name, pol->name) : NULL;
            fprintf(stderr, "%-14s", pol->name);
            for (int x = 50; x <= 130; x += 10) {
                double sum = 0;
                int cnt = 0;
                for (size_t j = 0; j < njobs; j++)
                    if (jl[j].trace == t && jl[j].policy == pol_idx[p] && !isnan(res[j].alloc[x]))
                        sum += res[j].alloc[x], cnt++;
                double m = cnt ? sum / cnt : NAN;
                if (e) fprintf(stderr, "  %6.2f [%6.2f]%+5.1f", m, e->sum[x] / e->n, m - e->sum[x] / e->n);
                else if (ex) fprintf(stderr, "  %6.2f [     -]     ", m);
                else fprintf(stderr, "  %6.2f", m);
            }
            fputc('\n', stderr);
        }
        cpu_line(res, jl, njobs, t);
    }
    fprintf(stderr, "\n%zu experiments in %.1f s wall (%d jobs); per experiment mean %.2f s, max %.2f s; CPU %.1f s in all\n",
            njobs, wall, jobs, tsum / (double)njobs, tmax, csum);
    free(ex);
    for (size_t i = 0; i < ntraces; i++) trace_free(&traces[i]);
    free(traces);
    free(trace_paths);
    free(jl);
    free(res);
    free(seeds);
    ks_openb_nodes_free(&sy.nodes);
    free(sy.node_by_name);
    return 0;
}
