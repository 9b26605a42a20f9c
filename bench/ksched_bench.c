/* ksched_bench: one scheduler_perf workload (a directory written by
 * bench/gen.py) through ksched's real scheduling loop on the in-memory
 * backend, measured the way scheduler_perf's SchedulingThroughput does.
 * Prints one JSON object; test/reference's `kschedref --bench DIR` prints
 * the same for upstream. See bench/README.md for what is measured and how.
 *
 *   ksched_bench [--config FILE] [--parallelism N] [--seed S] [-v N] DIR
 *
 * Phases: load the manifests (not measured); start the scheduler (nodes
 * and init pods listed); schedule pending init pods (not measured); reset
 * the peak RSS; add every measured pod; then run the loop until every
 * measured pod is bound, with the churn op firing on the wall clock.
 *
 * The scheduler runs on its simulated clock (nothing runs behind the
 * loop's back), which this loop moves with the wall clock, so backoff and
 * the queue's flushes behave as in a live scheduler, and fires the
 * timers the real-time scheduler's timer thread would. */
#include "api/cluster.h"
#include "api/node.h"
#include "api/pod.h"
#include "codec/decode.h"
#include "codec/tree.h"
#include "config/config.h"
#include "framework/framework.h"
#include "framework/status.h"
#include "backend/cache.h"
#include "backend/queue.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef KS_BENCH_CALLGRIND /* counts of the measured phase only: callgrind --collect-atstart=no */
#include <valgrind/callgrind.h>
#define MEASURE_BEGIN() CALLGRIND_START_INSTRUMENTATION
#define MEASURE_END() CALLGRIND_STOP_INSTRUMENTATION
#else
#define MEASURE_BEGIN() ((void)0)
#define MEASURE_END() ((void)0)
#endif

/* A run that binds nothing for this long is stuck (a bug, not a figure). */
#define STUCK_NS (300LL * KS_NS_PER_SEC)
#define BACKOFF_FLUSH_NS KS_NS_PER_SEC
#define LEFTOVER_FLUSH_NS (30LL * KS_NS_PER_SEC)

typedef struct churn_op {
    bool on;
    bool recreate;
    int number;
    int64_t interval_ns;
    int per_tick;
    int kinds[8];          /* what each template of a tick creates */
    ks_cluster *pool;      /* the objects, in creation order */
    uint32_t next_node, next_pod, next_svc;
    /* recreate: what each slot holds, per template (kind + handle) */
    struct churn_slot { int kind; uint64_t key; ks_id name; ks_workload *svc; } *slots;
    uint64_t ticks;
    bool exhausted;
} churn_op;

typedef struct bench {
    ks_cluster *c;           /* the backend's cluster */
    ks_memory_client *mb;
    ks_scheduler *s;
    ks_clock *clock;
    int64_t sim0, mono0;     /* sim = sim0 + (mono - mono0) */
    ks_id measured_ns;
    bool measuring;
    /* measured binds (monotonic ns) */
    int64_t *binds;
    size_t nbinds, binds_cap;
    size_t init_pending, init_bound;
    /* attempt latencies (ns) */
    int64_t call_start;
    bool attempt_seen, attempt_timed;
    int64_t *lat;
    size_t nlat, lat_cap;
    /* the pods attempted in the measured phase (hash of "ns/name"): the
     * attempts per pod, side by side with upstream's */
    ks_map attempted;
    churn_op churn;
} bench;

static bench B;

/* ---- observer ------------------------------------------------------------ */

static void on_attempt(void *ctx, const ks_attempt_record *r) {
    bench *b = ctx;
    if (r->result == KS_ATTEMPT_SKIPPED) return;
    b->attempt_seen = true;
    if (b->measuring) {
        char name[512];
        ks_pod_fullname(r->pod, name, sizeof(name));
        uint64_t h = ks_hash_bytes(name, strlen(name));
        ks_map_put(&b->attempted, h ? h : 1, (void *)1);
    }
    /* A scheduled pod's attempt ends here, before its binding cycle (which
     * upstream runs on another goroutine); a failed one when the failure
     * handling returns (see the loop). */
    if (r->result == KS_ATTEMPT_SCHEDULED && b->measuring) {
        KS_GROW(b->lat, b->lat_cap, b->nlat + 1);
        b->lat[b->nlat++] = ks_monotonic_ns() - b->call_start;
        b->attempt_timed = true;
    }
}

static void on_bound(void *ctx, const ks_pod *pod, const char *node) {
    bench *b = ctx;
    if (!b->measuring) {
        b->init_bound++;
        return;
    }
    if (pod->ns != b->measured_ns) return;
    KS_GROW(b->binds, b->binds_cap, b->nbinds + 1);
    b->binds[b->nbinds++] = ks_monotonic_ns();
}

static const ks_observer observer = {.ctx = &B, .on_attempt = on_attempt, .on_bound = on_bound};

/* Events are built and sent as always; the in-memory backend would keep
 * every one (the simulator reports them), which a scheduler does not do
 * and the upstream runner does not do either (no event sink). */

/* ---- churn (scheduler_perf's churn op) ---------------------------------- */

enum { CH_NODE, CH_POD, CH_SVC };

static bool churn_create(bench *b, churn_op *ch, int kind, struct churn_slot *slot) {
    ks_cluster *p = ch->pool;
    slot->kind = kind;
    switch (kind) {
    case CH_NODE:
        if (ch->next_node >= p->nodes.n) return false;
        slot->name = p->nodes.v[ch->next_node]->name;
        ks_memory_client_add_node(b->mb, ks_node_ref(p->nodes.v[ch->next_node++]));
        return true;
    case CH_POD:
        if (ch->next_pod >= p->pods.n) return false;
        slot->key = p->pods.v[ch->next_pod]->key;
        ks_memory_client_add_pod(b->mb, ks_pod_ref(p->pods.v[ch->next_pod++]));
        return true;
    case CH_SVC:
        if (ch->next_svc >= p->workloads.n) return false;
        /* Services are read on demand (default spreading); the scheduler
         * has no handler for them, as upstream's v1.34 has none. */
        slot->svc = p->workloads.v[ch->next_svc++];
        ks_memory_client_add_object(b->mb, KS_KIND_WORKLOAD, slot->svc);
        return true;
    }
    return false;
}

static void churn_delete(bench *b, struct churn_slot *slot) {
    switch (slot->kind) {
    case CH_NODE: ks_memory_client_remove_node(b->mb, slot->name); break;
    case CH_POD: ks_memory_client_remove_pod(b->mb, slot->key); break;
    case CH_SVC: ks_memory_client_remove_object(b->mb, KS_KIND_WORKLOAD, slot->svc); break;
    }
    memset(slot, 0, sizeof(*slot));
    slot->kind = -1;
}

/* One tick, as runChurnOp's ticker case: create mode creates one object
 * per template; recreate mode alternates, per slot, create and delete. */
static void churn_tick(bench *b) {
    churn_op *ch = &b->churn;
    for (int t = 0; t < ch->per_tick; t++) {
        int kind = ch->kinds[t];
        if (!ch->recreate) {
            struct churn_slot tmp;
            if (!churn_create(b, ch, kind, &tmp)) ch->exhausted = true;
            continue;
        }
        struct churn_slot *slot = &ch->slots[t * ch->number + (int)(ch->ticks % (uint64_t)ch->number)];
        if (slot->kind >= 0) churn_delete(b, slot);
        else if (!churn_create(b, ch, kind, slot)) ch->exhausted = true;
    }
    ch->ticks++;
}

/* ---- measurement helpers (the same rules as test/reference/bench.go) ---- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_f64(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* upstream's percentile: sorted ascending, v[ceil(n*p/100) - 1] */
static size_t pct_index(size_t n, int p) {
    size_t i = (size_t)ceil((double)n * p / 100.0);
    return i ? i - 1 : 0;
}

typedef struct throughput {
    double average, p50, p90, p99, overall, window_s;
    size_t samples;
} throughput;

/* Per-window throughput samples as the SchedulingThroughput collector
 * takes them: count binds per window, a window without binds is merged
 * into the next one (and its rate recorded once per window merged), the
 * trailing partial window is not sampled. Upstream samples every second;
 * a run shorter than 20 s gets 20 windows of duration/20 instead, so a
 * fast run still has a distribution. */
static throughput sample_throughput(int64_t *ts, size_t n, int64_t t0) {
    throughput r = {0};
    if (!n) return r;
    qsort(ts, n, sizeof(*ts), cmp_i64);
    int64_t dur = ts[n - 1] - t0;
    if (dur <= 0) dur = 1;
    r.overall = (double)n / ((double)dur / 1e9);
    int64_t w = dur / 20;
    if (w > KS_NS_PER_SEC) w = KS_NS_PER_SEC;
    if (w < 1) w = 1;
    size_t nwin = (size_t)(dur / w);
    r.window_s = (double)w / 1e9;
    uint32_t *cnt = ks_xcalloc(nwin ? nwin : 1, sizeof(*cnt));
    for (size_t i = 0; i < n; i++) {
        int64_t d = ts[i] - t0;
        if (d < 0) d = 0;
        size_t k = (size_t)(d / w);
        if (k < nwin) cnt[k]++;
    }
    double *v = ks_xcalloc(nwin ? nwin : 1, sizeof(*v));
    size_t nv = 0, skipped = 0;
    for (size_t k = 0; k < nwin; k++) {
        if (!cnt[k]) {
            skipped++;
            continue;
        }
        double rate = (double)cnt[k] / ((double)w * (double)(skipped + 1) / 1e9);
        for (size_t j = 0; j <= skipped; j++) v[nv++] = rate;
        skipped = 0;
    }
    free(cnt);
    if (!nv) v[nv++] = r.overall; /* everything in the partial window */
    qsort(v, nv, sizeof(*v), cmp_f64);
    double sum = 0;
    for (size_t i = 0; i < nv; i++) sum += v[i];
    r.average = sum / (double)nv;
    r.p50 = v[pct_index(nv, 50)];
    r.p90 = v[pct_index(nv, 90)];
    r.p99 = v[pct_index(nv, 99)];
    r.samples = nv;
    free(v);
    return r;
}

/* VmHWM of this process, in MiB. */
static double peak_rss_mb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmHWM:", 6)) kb = strtod(line + 6, NULL);
    fclose(f);
    return kb / 1024.0;
}

/* Reset VmHWM to the current RSS (Linux: clear_refs 5), so the peak is the
 * scheduler's and not the manifest loader's. */
static bool reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

/* User+system time of the process: with other work on the machine,
 * wall-clock figures move and CPU time much less. */
static double cpu_seconds(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* ---- loading -------------------------------------------------------------- */

/* The manifests are decoded as a scheduler decodes API responses: the
 * objects keep what they need and no source document (ksched simulate
 * keeps the parsed files for its messages; a running scheduler does not
 * hold its watch responses). */
static ks_cluster *load(const char *dir, const char *file, bool must) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (must) fprintf(stderr, "ksched_bench: %s: cannot open\n", path);
        return must ? NULL : ks_cluster_new();
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = ks_xmalloc(cap);
    for (size_t r; (r = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += r;
        if (len == cap) buf = ks_xrealloc(buf, cap *= 2);
    }
    fclose(f);
    ks_cluster *c = ks_cluster_new();
    ks_arena *a = ks_arena_new(len + len / 2 + 4096);
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *err = NULL;
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = kt_parse(a, path, buf, len, &docs, &ndocs, &err);
    if (ok) {
        ks_decode_ctx ctx = {.file = path, .errs = &errs};
        for (uint32_t i = 0; i < ndocs; i++) ok &= ks_decode_document(c, docs[i], &ctx);
        c->next_input_index = ctx.next_input_index;
    }
    ks_arena_free(a);
    free(buf);
    if (ok) {
        ks_cluster_add_implicit_namespaces(c);
        ok = ks_cluster_admit(c, &err);
    }
    if (!ok) {
        for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
        if (err) fprintf(stderr, "%s\n", err);
        ks_cluster_free(c);
        c = NULL;
    }
    free(err);
    ks_errors_free(&errs);
    return c;
}

static uint32_t points(void *reg, const char *name) {
    uint32_t m = ks_registry_points(reg, name);
    return m ? m : ks_config_intree_points(NULL, name);
}

static ks_config *load_config(const char *path) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = path ? ks_config_load(path, &errs) : ks_config_default();
    if (cfg && !ks_config_resolve(cfg, points, ks_default_registry(), &errs)) {
        ks_config_free(cfg);
        cfg = NULL;
    }
    if (!cfg)
        for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.msgs[i]);
    ks_config_errors_free(&errs);
    return cfg;
}

/* ---- the loop ------------------------------------------------------------- */

static int64_t timers_backoff, timers_leftover;

/* Move the simulated clock to the wall clock and fire what the real-time
 * scheduler's timer thread would have fired by now. */
static void tick_clock(bench *b) {
    int64_t now = b->sim0 + (ks_monotonic_ns() - b->mono0);
    ks_clock_sim_set(b->clock, now);
    now = ks_clock_now(b->clock);
    if (now >= timers_backoff) {
        ks_queue_flush_backoff_completed(ks_scheduler_queue(b->s));
        ks_cache_cleanup_assumed(ks_scheduler_cache(b->s), now);
        timers_backoff = now + BACKOFF_FLUSH_NS;
    }
    if (now >= timers_leftover) {
        ks_queue_flush_unschedulable_leftover(ks_scheduler_queue(b->s));
        timers_leftover = now + LEFTOVER_FLUSH_NS;
    }
}

static void pause_briefly(void) {
    struct timespec ts = {0, 100 * 1000};
    nanosleep(&ts, NULL);
}

static void usage(FILE *f) {
    fprintf(f, "usage: ksched_bench [--config FILE] [--parallelism N] [--seed S] [-v N] DIR\n");
}

int main(int argc, char **argv) {
    const char *dir = NULL, *config_path = NULL;
    int parallelism = 0;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--config") && i + 1 < argc) config_path = argv[++i];
        else if (!strcmp(a, "--parallelism") && i + 1 < argc) parallelism = atoi(argv[++i]);
        else if (!strcmp(a, "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "-v") && i + 1 < argc) ks_log_set_verbosity(atoi(argv[++i]));
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-') {
            usage(stderr);
            return 2;
        } else dir = a;
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }

    /* workload.json */
    char path[4096];
    snprintf(path, sizeof(path), "%s/workload.json", dir);
    json_error_t jerr;
    json_t *meta = json_load_file(path, 0, &jerr);
    if (!meta) {
        fprintf(stderr, "ksched_bench: %s: %s\n", path, jerr.text);
        return 2;
    }
    const char *name = json_string_value(json_object_get(meta, "workload"));
    const char *mns = json_string_value(json_object_get(meta, "measured_namespace"));
    json_int_t nmeasured = json_integer_value(json_object_get(meta, "measured_pods"));
    json_t *jchurn = json_object_get(meta, "churn");
    if (!name || !mns) {
        fprintf(stderr, "ksched_bench: %s: workload and measured_namespace are required\n", path);
        json_decref(meta);
        return 2;
    }

    int64_t t_load = ks_monotonic_ns();
    ks_config *cfg = load_config(config_path);
    ks_cluster *c = cfg ? load(dir, "cluster.yaml", true) : NULL;
    ks_cluster *m = c ? load(dir, "measured.yaml", true) : NULL;
    ks_cluster *pool = m ? load(dir, "churn.yaml", false) : NULL;
    if (!pool) {
        json_decref(meta);
        return 2;
    }
    double load_s = (double)(ks_monotonic_ns() - t_load) / 1e9;

    bench *b = &B;
    b->c = c;
    b->measured_ns = ks_intern(mns);
    if (json_is_object(jchurn)) {
        churn_op *ch = &b->churn;
        ch->on = true;
        const char *mode = json_string_value(json_object_get(jchurn, "mode"));
        ch->recreate = mode && !strcmp(mode, "recreate");
        ch->number = (int)json_integer_value(json_object_get(jchurn, "number"));
        if (ch->number < 1) ch->number = 1;
        ch->interval_ns = json_integer_value(json_object_get(jchurn, "interval_ms")) * KS_NS_PER_MS;
        if (ch->interval_ns <= 0) ch->interval_ns = 500 * KS_NS_PER_MS;
        json_t *kinds = json_object_get(jchurn, "kinds");
        ch->per_tick = (int)json_array_size(kinds);
        if (ch->per_tick > 8) ch->per_tick = 8;
        for (int i = 0; i < ch->per_tick; i++) {
            const char *k = json_string_value(json_array_get(kinds, (size_t)i));
            ch->kinds[i] = !k ? CH_POD : !strcmp(k, "Node") ? CH_NODE : !strcmp(k, "Service") ? CH_SVC : CH_POD;
        }
        ch->pool = pool;
        ch->slots = ks_xcalloc((size_t)(ch->per_tick * ch->number) + 1, sizeof(*ch->slots));
        for (int i = 0; i < ch->per_tick * ch->number; i++) ch->slots[i].kind = -1;
    }
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (!c->pods.v[i]->node_name) b->init_pending++;

    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    b->sim0 = (int64_t)rt.tv_sec * KS_NS_PER_SEC + rt.tv_nsec;
    b->clock = ks_clock_sim_new(b->sim0);
    b->mb = ks_memory_client_new(c);
    ks_cluster_client backend = *ks_memory_client_iface(b->mb);
    backend.executes &= ~KS_CALL_BIT(KS_CALL_EVENT);
    ks_scheduler_options so = {
        .config = cfg,
        .backend = &backend,
        .clock = b->clock,
        .seed = seed,
        .parallelism = parallelism,
        .observer = &observer,
    };
    char *err = NULL;
    int rc = 1;
    b->s = ks_scheduler_new(&so, &err);
    if (!b->s) {
        fprintf(stderr, "ksched_bench: %s\n", err ? err : "cannot create the scheduler");
        free(err);
        goto out;
    }

    /* Start: the nodes and the init pods; schedule the pending ones. */
    int64_t t_init = ks_monotonic_ns();
    ks_status *st = ks_scheduler_start(b->s);
    if (st) {
        char *msg = ks_status_message(st);
        fprintf(stderr, "ksched_bench: %s\n", msg);
        free(msg);
        ks_status_free(st);
        goto out;
    }
    if (b->init_pending) ks_scheduler_run_until_idle(b->s);
    double init_s = (double)(ks_monotonic_ns() - t_init) / 1e9;
    if (b->init_bound < b->init_pending)
        fprintf(stderr, "ksched_bench: %s: %zu of %zu init pods bound\n", name, b->init_bound, b->init_pending);

    malloc_trim(0); /* the parser's memory goes back, as Go's FreeOSMemory */
    bool rss_reset = reset_peak_rss();

    /* The claims the claim controller made for the measured pods exist
     * before them (not measured). */
    for (uint32_t i = 0; i < m->resource_claims.n; i++)
        ks_memory_client_add_object(b->mb, KS_KIND_RESOURCE_CLAIM, KS_OBJECT_REF(m->resource_claims.v[i]));
    /* The measured pods all enter the queue, then the clock starts. */
    for (uint32_t i = 0; i < m->pods.n; i++) ks_memory_client_add_pod(b->mb, ks_pod_ref(m->pods.v[i]));
    b->measuring = true;
    MEASURE_BEGIN();
    double cpu0 = cpu_seconds();
    b->mono0 = ks_monotonic_ns();
    b->sim0 = ks_clock_now(b->clock);
    timers_backoff = b->sim0 + BACKOFF_FLUSH_NS;
    timers_leftover = b->sim0 + LEFTOVER_FLUSH_NS;
    int64_t next_churn = b->mono0 + b->churn.interval_ns;
    int64_t last_progress = b->mono0;
    size_t last_binds = 0;
    bool stuck = false;

    while (b->nbinds < (size_t)nmeasured) {
        int64_t now = ks_monotonic_ns();
        if (b->churn.on && now >= next_churn) {
            churn_tick(b);
            /* a late tick is not repeated (Go's ticker drops them) */
            while (next_churn <= now) next_churn += b->churn.interval_ns;
        }
        tick_clock(b);
        b->attempt_seen = b->attempt_timed = false;
        b->call_start = ks_monotonic_ns();
        bool did = ks_scheduler_schedule_one(b->s);
        if (b->attempt_seen && !b->attempt_timed) {
            KS_GROW(b->lat, b->lat_cap, b->nlat + 1);
            b->lat[b->nlat++] = ks_monotonic_ns() - b->call_start;
        }
        if (b->nbinds != last_binds) {
            last_binds = b->nbinds;
            last_progress = ks_monotonic_ns();
        } else if (ks_monotonic_ns() - last_progress > STUCK_NS) {
            stuck = true;
            break;
        }
        if (!did) pause_briefly(); /* waiting for backoff or churn, in real time */
    }
    int64_t end = ks_monotonic_ns();
    MEASURE_END();
    b->measuring = false;
    /* for `perf record -k CLOCK_MONOTONIC` + `perf report --time A,B` */
    ks_infof(1, "measured phase: CLOCK_MONOTONIC %.6f,%.6f", (double)b->mono0 / 1e9, (double)end / 1e9);
    double cpu_s = cpu_seconds() - cpu0;
    double rss = peak_rss_mb();

    size_t nbinds = b->nbinds;
    throughput tp = sample_throughput(b->binds, nbinds, b->mono0);
    qsort(b->lat, b->nlat, sizeof(*b->lat), cmp_i64);
    double lat50 = b->nlat ? (double)b->lat[pct_index(b->nlat, 50)] / 1e6 : 0;
    double lat99 = b->nlat ? (double)b->lat[pct_index(b->nlat, 99)] / 1e6 : 0;

    printf("{\"workload\":\"%s\",\"scheduler\":\"ksched\",\"nodes\":%u,\"init_pods\":%lld,"
           "\"measured_pods\":%lld,\"scheduled\":%zu,\"attempts\":%zu,\"attempted_pods\":%zu,\"duration_s\":%.6f,\"cpu_s\":%.3f,"
           "\"throughput\":{\"average\":%.1f,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"overall\":%.1f,"
           "\"window_s\":%.6f,\"samples\":%zu},"
           "\"latency_ms\":{\"p50\":%.4f,\"p99\":%.4f,\"attempts\":%zu},"
           "\"peak_rss_mb\":%.1f,\"rss_reset\":%s,\"load_s\":%.3f,\"init_s\":%.3f,\"churn_ticks\":%llu%s",
           name, (unsigned)json_integer_value(json_object_get(meta, "nodes")), (long long)json_integer_value(json_object_get(meta, "init_pods")),
           (long long)nmeasured, nbinds, b->nlat, b->attempted.len, (double)(end - b->mono0) / 1e9, cpu_s, tp.average, tp.p50, tp.p90, tp.p99, tp.overall, tp.window_s,
           tp.samples, lat50, lat99, b->nlat, rss, rss_reset ? "true" : "false", load_s, init_s,
           (unsigned long long)b->churn.ticks, b->churn.exhausted ? ",\"churn_exhausted\":true" : "");
    if (stuck) printf(",\"error\":\"no measured pod bound for 300 s: %zu of %lld bound\"", nbinds, (long long)nmeasured);
    printf("}\n");
    rc = stuck ? 1 : 0;

out:
    if (b->s) {
        ks_scheduler_stop(b->s);
        ks_scheduler_free(b->s);
    }
    /* The cluster holds references of its own to the pool's services. */
    ks_memory_client_free(b->mb);
    ks_cluster_free(c);
    ks_cluster_free(m);
    ks_cluster_free(pool);
    ks_clock_free(b->clock);
    ks_config_free(cfg);
    free(b->churn.slots);
    free(b->binds);
    free(b->lat);
    json_decref(meta);
    return rc;
}
