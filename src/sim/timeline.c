#include "sim/timeline.h"
#include "api/pod.h"
#include "codec/decode.h"
#include "framework/status.h"
#include "sim/memory_client.h"
#include "sim/simulate.h"
#include "sim/workloads/workloads.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- events -------------------------------------------------------------------- */

ks_tl_event *ks_tl_event_new(ks_tl_kind kind, int64_t at_ns) {
    ks_tl_event *ev = ks_xcalloc(1, sizeof(*ev));
    ev->kind = kind;
    ev->at_ns = at_ns;
    return ev;
}

void ks_tl_event_free(ks_tl_event *ev) {
    if (!ev) return;
    if (ev->pod) ks_pod_unref(ev->pod);
    if (ev->node) ks_node_unref(ev->node);
    if (ev->workload) KS_OBJECT_UNREF(ev->workload);
    free(ev->workload_kind);
    free(ev->ns);
    free(ev->name);
    free(ev->node_name);
    for (uint32_t i = 0; i < ev->nlabels; i++) {
        free(ev->label_keys[i]);
        free(ev->label_values[i]);
    }
    free(ev->label_keys);
    free(ev->label_values);
    if (ev->arena) ks_arena_free(ev->arena);
    free(ev);
}

static const char *const state_names[] = {
    [KS_TL_RUNNING] = "Running",     [KS_TL_PENDING] = "Pending",     [KS_TL_FINISHED] = "Finished",
    [KS_TL_DELETED] = "Deleted",     [KS_TL_PREEMPTED] = "Preempted", [KS_TL_EVICTED] = "Evicted",
};

const char *ks_tl_pod_state_name(ks_tl_pod_state s) { return state_names[s]; }

/* ---- pending-time quantiles ------------------------------------------------------ */

/* Exact while there are at most EXACT_MAX samples (2 MiB); then a log
 * histogram with buckets 1% wide, so memory stays flat in the trace. */
#define EXACT_MAX (1u << 18)
#define HIST_BUCKETS 2600 /* 1.01^2600 ms: far beyond any time bound */

typedef struct quantiles {
    int64_t *v;
    size_t n, cap;
    uint64_t *hist;
    uint64_t total;
    int64_t max;
} quantiles;

static size_t hist_bucket(int64_t ns) {
    double ms = (double)ns / 1e6;
    if (ms < 1) return 0;
    size_t b = (size_t)(log(ms) / log(1.01)) + 1;
    return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

static void q_add(quantiles *q, int64_t ns) {
    if (ns > q->max) q->max = ns;
    q->total++;
    if (!q->hist && q->n < EXACT_MAX) {
        KS_GROW(q->v, q->cap, q->n + 1);
        q->v[q->n++] = ns;
        return;
    }
    if (!q->hist) {
        q->hist = ks_xcalloc(HIST_BUCKETS, sizeof(*q->hist));
        for (size_t i = 0; i < q->n; i++) q->hist[hist_bucket(q->v[i])]++;
        free(q->v);
        q->v = NULL;
        q->n = q->cap = 0;
    }
    q->hist[hist_bucket(ns)]++;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank quantile (the smallest value with at least p of the
 * samples at or below it). */
static int64_t q_get(quantiles *q, double p) {
    if (!q->total) return 0;
    uint64_t rank = (uint64_t)ceil(p * (double)q->total);
    if (rank < 1) rank = 1;
    if (!q->hist) {
        qsort(q->v, q->n, sizeof(int64_t), cmp_i64);
        return q->v[rank - 1];
    }
    uint64_t seen = 0;
    for (size_t b = 0; b < HIST_BUCKETS; b++) {
        seen += q->hist[b];
        if (seen >= rank) {
            if (b == 0) return 0;
            int64_t v = (int64_t)(pow(1.01, (double)b) * 1e6);
            return v < q->max ? v : q->max;
        }
    }
    return q->max;
}

/* ---- the engine ---------------------------------------------------------------------- */

/* A pod the replay follows, from its arrival until it leaves. */
typedef struct tl_pod {
    uint64_t gen;            /* tells this pod from a later one of the same name */
    uint64_t key;
    char *name;
    int64_t arrival, scheduled, departure;
    ks_id node;              /* permanent id of the node it was bound to */
    uint32_t attempts;
    int64_t run_ns, delete_at;
    bool counted;            /* its requests are in the allocation */
    bool untracked;          /* bound at the start: no record */
    char *recorded_node, *recorded_reason;
    int recorded_feasible;
} tl_pod;

/* A departure or a deletion at a time, for the pod of that generation. */
typedef struct timer {
    int64_t at;
    uint64_t seq, gen, key;
    bool finish;             /* ran its duration (else: deleted) */
} timer;

typedef struct metric {
    char *name;
    double (*fn)(void *ctx, ks_timeline *tl);
    void *ctx;
} metric;

struct ks_timeline {
    ks_timeline_options o;
    ks_observer obs;
    ks_cluster *cluster;
    ks_memory_client *mb;
    const ks_cluster_client *inner;
    ks_cluster_client wrapped;
    ks_clock *clock;
    ks_scheduler *s;
    int64_t start, limit;
    bool stopped;            /* the bound was reached */

    ks_map pods;             /* key + 1 -> tl_pod */
    uint64_t next_gen, next_seq;
    timer *heap;
    size_t nheap, heap_cap;

    /* allocation */
    uint32_t nres;
    ks_id res[KS_TL_MAX_RESOURCES];
    int64_t allocated[KS_TL_MAX_RESOURCES], allocatable[KS_TL_MAX_RESOURCES];
    double integral[KS_TL_MAX_RESOURCES];
    int64_t integrated_to;

    /* series */
    int64_t next_sample;
    ks_tl_sample step;       /* counters of the step in progress */
    metric *metrics;
    size_t nmetrics;

    quantiles pending;
    ks_tl_result res_out;
};

/* ---- timers (a binary heap by time, then insertion) ---------------------------------- */

static bool timer_less(const timer *a, const timer *b) {
    return a->at != b->at ? a->at < b->at : a->seq < b->seq;
}

static void heap_push(ks_timeline *tl, timer t) {
    t.seq = tl->next_seq++;
    KS_GROW(tl->heap, tl->heap_cap, tl->nheap + 1);
    size_t i = tl->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!timer_less(&t, &tl->heap[p])) break;
        tl->heap[i] = tl->heap[p];
        i = p;
    }
    tl->heap[i] = t;
}

static timer heap_pop(ks_timeline *tl) {
    timer top = tl->heap[0], last = tl->heap[--tl->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= tl->nheap) break;
        if (c + 1 < tl->nheap && timer_less(&tl->heap[c + 1], &tl->heap[c])) c++;
        if (!timer_less(&tl->heap[c], &last)) break;
        tl->heap[i] = tl->heap[c];
        i = c;
    }
    if (tl->nheap) tl->heap[i] = last;
    return top;
}

/* ---- allocation ------------------------------------------------------------------ */

static int res_index(ks_timeline *tl, ks_id name, bool add) {
    for (uint32_t i = 0; i < tl->nres; i++)
        if (tl->res[i] == name) return (int)i;
    if (!add || tl->nres == KS_TL_MAX_RESOURCES) return -1;
    tl->res[tl->nres] = name;
    return (int)tl->nres++;
}

static int64_t res_value(const ks_resource *r, uint32_t i, ks_id name) {
    if (i == 0) return r->milli_cpu;
    if (i == 1) return r->memory;
    return ks_resource_get(r, name);
}

/* The time integral of allocated/allocatable up to now (for the means). */
static void integrate(ks_timeline *tl) {
    int64_t now = ks_clock_now(tl->clock);
    if (now <= tl->integrated_to) return;
    double dt = (double)(now - tl->integrated_to);
    for (uint32_t i = 0; i < tl->nres; i++)
        if (tl->allocatable[i] > 0) tl->integral[i] += dt * (double)tl->allocated[i] / (double)tl->allocatable[i];
    tl->integrated_to = now;
}

static void note_peaks(ks_timeline *tl) {
    ks_tl_summary *sm = &tl->res_out.summary;
    for (uint32_t i = 0; i < tl->nres; i++) {
        if (tl->allocated[i] > sm->peak_allocated[i]) sm->peak_allocated[i] = tl->allocated[i];
        if (tl->allocatable[i] > 0) {
            double f = (double)tl->allocated[i] / (double)tl->allocatable[i];
            if (f > sm->peak_alloc[i]) sm->peak_alloc[i] = f;
        }
    }
}

static void count_node(ks_timeline *tl, const ks_node *n, int sign, bool peaks) {
    integrate(tl);
    const ks_resource *a = &n->allocatable;
    for (uint32_t i = 0; i < a->nscalar; i++) res_index(tl, a->scalars[i].name, true);
    for (uint32_t i = 0; i < tl->nres; i++) {
        int64_t v = i == 2 ? a->allowed_pods : res_value(a, i, tl->res[i]);
        tl->allocatable[i] += sign * v;
    }
    if (peaks) note_peaks(tl);
}

static void count_pod(ks_timeline *tl, const ks_pod *p, int sign) {
    integrate(tl);
    for (uint32_t i = 0; i < tl->nres; i++) {
        int64_t v = i == 2 ? 1 : res_value(&p->requests, i, tl->res[i]);
        tl->allocated[i] += sign * v;
    }
    note_peaks(tl);
}

/* ---- records ------------------------------------------------------------------------ */

static tl_pod *tracked(ks_timeline *tl, uint64_t key) { return ks_map_get(&tl->pods, key + 1); }

static void free_tl_pod(tl_pod *tp) {
    free(tp->name);
    free(tp->recorded_node);
    free(tp->recorded_reason);
    free(tp);
}

/* The pod leaves the replay (its record is final): hand the record out,
 * add to the summary, free it. */
static void finish_record(ks_timeline *tl, tl_pod *tp, ks_tl_pod_state st, int64_t when) {
    ks_tl_summary *sm = &tl->res_out.summary;
    ks_map_del(&tl->pods, tp->key + 1);
    if (tp->untracked) {
        free_tl_pod(tp);
        return;
    }
    ks_tl_record r = {
        .name = tp->name,
        .arrival = tp->arrival,
        .scheduled = tp->scheduled,
        .departure = (st == KS_TL_RUNNING || st == KS_TL_PENDING) ? -1 : when,
        .node = tp->node ? ks_str(tp->node) : NULL,
        .attempts = tp->attempts,
        .pending_ns = (tp->scheduled >= 0 ? tp->scheduled : when) - tp->arrival,
        .state = st,
        .recorded_node = tp->recorded_node,
        .recorded_feasible = tp->recorded_feasible,
        .recorded_reason = tp->recorded_reason,
    };
    if (tp->scheduled < 0) sm->never_scheduled++;
    switch (st) {
    case KS_TL_FINISHED: sm->finished++; break;
    case KS_TL_DELETED: sm->deleted++; break;
    case KS_TL_PREEMPTED: sm->preempted++; break;
    case KS_TL_EVICTED: sm->evicted++; break;
    default: break;
    }
    if (tp->recorded_node) {
        sm->recorded++;
        if (tp->node && !strcmp(ks_str(tp->node), tp->recorded_node)) sm->same_node++;
        if (tp->recorded_feasible == 0) {
            sm->recorded_infeasible++;
            ks_tl_result *res = &tl->res_out;
            if (res->ndisagreements < KS_TL_MAX_DISAGREEMENTS) {
                res->disagreements = ks_xrealloc(res->disagreements, (res->ndisagreements + 1) * sizeof(ks_tl_disagreement));
                res->disagreements[res->ndisagreements++] = (ks_tl_disagreement){
                    ks_xstrdup(tp->name), ks_xstrdup(tp->recorded_node),
                    ks_xstrdup(tp->recorded_reason ? tp->recorded_reason : ""), tp->arrival};
            }
        }
    }
    if (tl->o.on_record) tl->o.on_record(tl->o.ctx, &r);
    free_tl_pod(tp);
}

static tl_pod *track(ks_timeline *tl, const ks_pod *p, int64_t now) {
    tl_pod *tp = ks_xcalloc(1, sizeof(*tp));
    tp->gen = ++tl->next_gen;
    tp->key = p->key;
    char buf[600];
    tp->name = ks_xstrdup(ks_pod_fullname(p, buf, sizeof(buf)));
    tp->arrival = now;
    tp->scheduled = -1;
    tp->departure = -1;
    tp->recorded_feasible = -1;
    ks_map_put(&tl->pods, p->key + 1, tp);
    return tp;
}

/* ---- the client wrapper: bindings and preemption's deletions ---------------------- */

static ks_status *w_start(void *ctx, ks_watch_fn fn, void *arg) {
    ks_timeline *tl = ctx;
    return tl->inner->start(tl->inner->ctx, fn, arg);
}
static void w_stop(void *ctx) {
    ks_timeline *tl = ctx;
    tl->inner->stop(tl->inner->ctx);
}
/* The inner client's binding, as a call of its own (another scheduler's
 * pods bound where the trace says). */
static ks_status *inner_bind(ks_timeline *tl, const ks_pod *pod, const char *node) {
    ks_api_call call = {.type = KS_CALL_BINDING, .pod = pod, .node = node};
    return tl->inner->execute(tl->inner->ctx, &call);
}

static ks_status *w_bind(ks_timeline *tl, const ks_api_call *call) {
    const ks_pod *pod = call->pod;
    const char *node = call->node;
    ks_status *st = tl->inner->execute(tl->inner->ctx, call);
    if (st) return st;
    int64_t now = ks_clock_now(tl->clock);
    ks_pod *cur = ks_memory_client_pod(tl->mb, pod->key);
    tl_pod *tp = tracked(tl, pod->key);
    if (cur && tp) {
        count_pod(tl, cur, 1);
        tp->counted = true;
        tp->node = ks_intern(node);
        tl->step.scheduled++;
        if (tp->scheduled < 0) {
            tp->scheduled = now;
            tl->res_out.summary.scheduled++;
            q_add(&tl->pending, now - tp->arrival);
        }
        if (tp->run_ns > 0) heap_push(tl, (timer){.at = now + tp->run_ns, .gen = tp->gen, .key = tp->key, .finish = true});
    }
    return NULL;
}
/* The scheduler deletes only preemption victims. */
static ks_status *w_delete(ks_timeline *tl, const ks_api_call *call) {
    const ks_pod *pod = call->pod;
    ks_pod *cur = ks_memory_client_pod(tl->mb, pod->key);
    tl_pod *tp = tracked(tl, pod->key);
    if (cur && tp && tp->counted) count_pod(tl, cur, -1);
    ks_status *st = tl->inner->execute(tl->inner->ctx, call);
    if (!st && tp) {
        tl->step.preemptions++;
        finish_record(tl, tp, KS_TL_PREEMPTED, ks_clock_now(tl->clock));
    }
    return st;
}
static ks_status *w_execute(void *ctx, const ks_api_call *call) {
    ks_timeline *tl = ctx;
    switch (call->type) {
    case KS_CALL_BINDING: return w_bind(tl, call);
    case KS_CALL_DELETE: return w_delete(tl, call);
    /* Events are counted, not kept: a month of FailedScheduling would not fit. */
    case KS_CALL_EVENT: tl->res_out.summary.events++; return NULL;
    default: return tl->inner->execute(tl->inner->ctx, call);
    }
}

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    ks_timeline *tl = ctx;
    if (rec->result == KS_ATTEMPT_SKIPPED) return;
    tl->res_out.summary.attempts++;
    tl_pod *tp = tracked(tl, rec->pod->key);
    if (tp) {
        tp->attempts++;
        /* the recorded node under ksched's view, at the first attempt */
        if (tp->attempts == 1 && tp->recorded_node) {
            ks_id want = ks_intern(tp->recorded_node);
            for (size_t i = 0; i < rec->nevaluated; i++) {
                if (rec->evaluated[i]->name != want) continue;
                const ks_status *v = rec->verdicts[i];
                tp->recorded_feasible = ks_status_is_success(v) ? 1 : 0;
                if (v && !ks_status_is_success(v)) {
                    char *m = ks_status_message(v);
                    tp->recorded_reason = ks_xasprintf("%s: %s", ks_status_plugin(v), m);
                    free(m);
                }
            }
            if (tp->recorded_feasible < 0 && !ks_cluster_node(tl->cluster, want)) {
                tp->recorded_feasible = 0;
                tp->recorded_reason = ks_xstrdup("the node does not exist");
            }
        }
    }
    if (tl->o.on_attempt) tl->o.on_attempt(tl->o.ctx, rec);
}

static ks_status *extender_bound(void *ctx, const ks_pod *pod, const char *node) {
    return ks_sim_extender_bound(((ks_timeline *)ctx)->s, pod, node);
}

/* ---- series ---------------------------------------------------------------------------- */

typedef struct pending_count {
    int64_t now, older_than;
    uint32_t pending, pending_long, running;
} pending_count;

static void take_sample(ks_timeline *tl, int64_t t) {
    ks_tl_sample sp = tl->step;
    sp.t = t;
    sp.nodes = tl->cluster->nodes.n;
    for (uint32_t i = 0; i < tl->cluster->nodes.n; i++)
        if (!tl->cluster->nodes.v[i]->unschedulable) sp.schedulable_nodes++;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&tl->pods, &it, &k, &v);) {
        tl_pod *tp = v;
        if (tp->untracked) continue;
        if (tp->counted) sp.running++;
        else {
            sp.pending++;
            if (tl->o.pending_long_ns > 0 && t - tp->arrival > tl->o.pending_long_ns) sp.pending_long++;
        }
    }
    const ks_cluster *c = tl->cluster;
    for (uint32_t i = 0; i < c->resource_slices.n; i++) sp.devices += c->resource_slices.v[i]->ndevices;
    for (uint32_t i = 0; i < c->resource_claims.n; i++)
        if (c->resource_claims.v[i]->allocation) sp.devices_allocated += c->resource_claims.v[i]->allocation->nresults;
    memcpy(sp.allocated, tl->allocated, sizeof(sp.allocated));
    memcpy(sp.allocatable, tl->allocatable, sizeof(sp.allocatable));
    if (tl->nmetrics) {
        sp.extra = ks_xcalloc(tl->nmetrics, sizeof(double));
        for (size_t i = 0; i < tl->nmetrics; i++) sp.extra[i] = tl->metrics[i].fn(tl->metrics[i].ctx, tl);
    }
    ks_tl_result *r = &tl->res_out;
    r->samples = ks_xrealloc(r->samples, (r->nsamples + 1) * sizeof(*r->samples));
    r->samples[r->nsamples++] = sp;
    memset(&tl->step, 0, sizeof(tl->step));
}

/* Samples due before t. A sample at time s is the state once everything
 * at s has happened; its counters cover the time since the previous
 * sample. */
static void sample_before(ks_timeline *tl, int64_t t) {
    if (tl->o.step_ns <= 0) return;
    while (tl->next_sample < t) {
        /* the timers up to the sample happen first */
        if (tl->next_sample > ks_clock_now(tl->clock)) ks_scheduler_run_until(tl->s, tl->next_sample);
        take_sample(tl, tl->next_sample);
        tl->next_sample += tl->o.step_ns;
    }
}

/* ---- moving the clock --------------------------------------------------------------------- */

static void remove_pod(ks_timeline *tl, tl_pod *tp, ks_tl_pod_state st) {
    ks_pod *cur = ks_memory_client_pod(tl->mb, tp->key);
    if (cur && tp->counted) count_pod(tl, cur, -1);
    tp->counted = false;
    if (cur) ks_memory_client_remove_pod(tl->mb, tp->key);
    finish_record(tl, tp, st, ks_clock_now(tl->clock));
}

static void run_timer(ks_timeline *tl, const timer *t) {
    tl_pod *tp = tracked(tl, t->key);
    if (!tp || tp->gen != t->gen) return; /* gone meanwhile */
    if (t->finish) remove_pod(tl, tp, KS_TL_FINISHED);
    else remove_pod(tl, tp, KS_TL_DELETED);
}

/* Schedule at the current instant, then at each timer up to t. */
static bool advance(ks_timeline *tl, int64_t t) {
    if (tl->stopped) return false;
    if (tl->limit > 0 && t > tl->limit) t = tl->limit;
    for (;;) {
        int64_t now = ks_clock_now(tl->clock);
        ks_scheduler_run_until(tl->s, now);
        int64_t next = tl->nheap ? tl->heap[0].at : INT64_MAX;
        if (next > t) next = t;
        if (next < now) next = now;
        sample_before(tl, next);
        ks_scheduler_run_until(tl->s, next);
        while (tl->nheap && tl->heap[0].at <= next) {
            timer tm = heap_pop(tl);
            run_timer(tl, &tm);
        }
        if (next >= t) break;
    }
    if (tl->limit > 0 && t >= tl->limit) {
        ks_scheduler_run_until(tl->s, t);
        tl->stopped = true;
        tl->res_out.summary.bounded = true;
        return false;
    }
    return true;
}

bool ks_timeline_advance(ks_timeline *tl, int64_t t) {
    if (t < ks_clock_now(tl->clock)) t = ks_clock_now(tl->clock);
    return advance(tl, t);
}

/* ---- applying events ----------------------------------------------------------------- */

static char *event_err(const ks_tl_event *ev, const char *fmt, const char *arg) {
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, arg);
    if (ev->file) return ks_xasprintf("%s:%d: %s", ev->file, ev->line, msg);
    return ks_xstrdup(msg);
}

static void add_pod(ks_timeline *tl, ks_pod *p, int64_t run_ns, int64_t delete_at, const char *recorded) {
    int64_t now = ks_clock_now(tl->clock);
    tl_pod *tp = track(tl, p, now);
    tp->run_ns = run_ns;
    tp->delete_at = delete_at;
    if (recorded) tp->recorded_node = ks_xstrdup(recorded);
    tl->res_out.summary.arrived++;
    tl->step.arrived++;
    if (delete_at > 0) heap_push(tl, (timer){.at = delete_at > now ? delete_at : now, .gen = tp->gen, .key = tp->key});
    ks_memory_client_add_pod(tl->mb, p);
}

/* The node as a tree in a new arena, to be changed and decoded again. */
static ks_tree *node_tree(const ks_node *n, ks_arena *a) {
    if (!n->tree) return NULL;
    return kt_copy(a, n->tree);
}

static ks_tree *ensure_map(ks_arena *a, ks_tree *parent, const char *key) {
    ks_tree *m = (ks_tree *)kt_get(parent, key);
    if (!m || m->type != KT_MAP) {
        m = kt_new(a, KT_MAP, 0);
        kt_map_set(a, parent, key, m);
    }
    return m;
}

/* A new version of node `cur` with ev's changes (cordon, uncordon, labels,
 * taints) decoded from its tree. NULL with *err. */
static ks_node *changed_node(ks_timeline *tl, const ks_node *cur, const ks_tl_event *ev, char **err) {
    (void)tl;
    ks_arena *a = ks_arena_new(4096);
    ks_tree *t = node_tree(cur, a);
    if (!t || t->type != KT_MAP) {
        ks_arena_free(a);
        *err = event_err(ev, "node %s has no manifest to change", ks_str(cur->name));
        return NULL;
    }
    ks_tree *spec = ensure_map(a, t, "spec");
    if (ev->kind == KS_TL_NODE_CORDON || ev->kind == KS_TL_NODE_DRAIN) kt_map_set(a, spec, "unschedulable", kt_bool(a, true));
    if (ev->kind == KS_TL_NODE_UNCORDON) kt_map_set(a, spec, "unschedulable", kt_bool(a, false));
    if (ev->kind == KS_TL_NODE_UPDATE) {
        if (ev->nlabels) {
            ks_tree *md = ensure_map(a, t, "metadata");
            ks_tree *old = (ks_tree *)kt_get(md, "labels");
            ks_tree *nl = kt_new(a, KT_MAP, 0);
            for (uint32_t i = 0; old && old->type == KT_MAP && i < old->n; i++) {
                bool drop = false;
                for (uint32_t j = 0; j < ev->nlabels; j++)
                    if (!strcmp(old->keys[i], ev->label_keys[j])) drop = true;
                if (!drop) kt_map_add(a, nl, old->keys[i], old->items[i]);
            }
            for (uint32_t j = 0; j < ev->nlabels; j++)
                if (ev->label_values[j]) kt_map_add(a, nl, ev->label_keys[j], kt_string(a, ev->label_values[j], 0));
            kt_map_set(a, md, "labels", nl);
        }
        if (ev->set_taints) kt_map_set(a, spec, "taints", ev->taints ? kt_copy(a, ev->taints) : kt_new(a, KT_SEQ, 0));
    }
    ks_errors errs;
    ks_errors_init(&errs);
    ks_docref *doc = ks_docref_new(a);
    ks_decode_ctx ctx = {.file = ev->file, .doc = doc, .next_input_index = cur->input_index, .errs = &errs};
    ks_node *n = ks_decode_node(t, &ctx);
    ks_docref_unref(doc);
    if (!n) {
        *err = event_err(ev, "%s", errs.n ? errs.v[0] : "invalid node");
        ks_errors_free(&errs);
        return NULL;
    }
    ks_errors_free(&errs);
    return n;
}

static void replace_node(ks_timeline *tl, ks_node *old, ks_node *n) {
    /* one change: no peak measured between the two halves */
    count_node(tl, old, -1, false);
    count_node(tl, n, 1, true);
    ks_memory_client_update_node(tl->mb, n);
}

static bool is_daemon_pod(const ks_pod *p) {
    const ks_owner_ref *o = ks_pod_controller(p);
    return o && !strcmp(ks_str(o->kind), "DaemonSet");
}

/* The pods bound to node: evicted (deleted), and each re-created pending
 * as its controller would, with the same spec and lifetime. DaemonSet
 * pods stay on a drained node (kubectl drain leaves them) and go with a
 * removed one. */
static void evict_pods(ks_timeline *tl, ks_id node, bool removing) {
    size_t n = 0;
    ks_pod **v = NULL;
    for (uint32_t i = 0; i < tl->cluster->pods.n; i++) {
        ks_pod *p = tl->cluster->pods.v[i];
        if (p->node_name != node) continue;
        if (!removing && is_daemon_pod(p)) continue;
        v = ks_xrealloc(v, (n + 1) * sizeof(*v));
        v[n++] = ks_pod_ref(p);
    }
    for (size_t i = 0; i < n; i++) {
        ks_pod *p = v[i];
        tl_pod *tp = tracked(tl, p->key);
        int64_t run_ns = tp ? tp->run_ns : 0, delete_at = tp ? tp->delete_at : 0;
        bool daemon = is_daemon_pod(p);
        tl->step.evictions++;
        if (tp) {
            remove_pod(tl, tp, KS_TL_EVICTED);
        } else {
            ks_memory_client_remove_pod(tl->mb, p->key);
        }
        if (!daemon) {
            ks_pod *np = ks_pod_clone(p);
            np->node_name = 0;
            np->nominated_node = 0;
            np->nconditions = 0;
            add_pod(tl, np, run_ns, delete_at, NULL);
        }
        ks_pod_unref(p);
    }
    free(v);
}

/* A workload: the objects its controllers create against the cluster as
 * it is now (sim/workloads): its pods arrive, each with the event's
 * lifetime; OrderedReady StatefulSet pods all at once. */
static bool add_workload(ks_timeline *tl, ks_tl_event *ev, char **err) {
    int64_t now = ks_clock_now(tl->clock);
    ks_wl_options wo = {.seed = tl->o.seed + tl->next_gen, .now = now / KS_NS_PER_SEC, .no_hold = true};
    ks_wl_objects out;
    memset(&out, 0, sizeof(out));
    ks_errors errs;
    ks_errors_init(&errs);
    if (!ks_workload_expand(ev->workload, tl->cluster, &wo, &out, &errs)) {
        *err = event_err(ev, "%s", errs.n ? errs.v[0] : "the workload cannot be expanded");
        ks_errors_free(&errs);
        ks_wl_objects_free(&out);
        return false;
    }
    ks_errors_free(&errs);
    tl->cluster->next_input_index = out.next_input_index;
    ks_memory_client_add_object(tl->mb, KS_KIND_WORKLOAD, ev->workload);
    for (uint32_t i = 0; i < out.workloads.n; i++) ks_memory_client_add_object(tl->mb, KS_KIND_WORKLOAD, out.workloads.v[i]);
    for (uint32_t i = 0; i < out.pvcs.n; i++) ks_memory_client_add_object(tl->mb, KS_KIND_PVC, out.pvcs.v[i]);
    bool ok = true;
    for (uint32_t i = 0; i < out.pods.n && ok; i++) {
        ks_pod *p = out.pods.v[i];
        char buf[600];
        if (tracked(tl, p->key) || ks_memory_client_pod(tl->mb, p->key)) {
            *err = event_err(ev, "pod %s already exists", ks_pod_fullname(p, buf, sizeof(buf)));
            ok = false;
        } else if (p->node_name || !ks_sim_is_pending(tl->o.config, p)) {
            tl_pod *tp = track(tl, p, now);
            tp->untracked = true;
            tp->counted = p->node_name != 0;
            if (tp->counted) count_pod(tl, p, 1);
            ks_memory_client_add_pod(tl->mb, ks_pod_ref(p));
        } else {
            add_pod(tl, ks_pod_ref(p), ev->run_ns, ev->delete_at_ns, NULL);
        }
    }
    ks_wl_objects_free(&out);
    return ok;
}

static bool apply(ks_timeline *tl, ks_tl_event *ev, char **err) {
    switch (ev->kind) {
    case KS_TL_POD_CREATE: {
        ks_pod *p = ev->pod;
        char buf[600];
        if (tracked(tl, p->key) || ks_memory_client_pod(tl->mb, p->key)) {
            *err = event_err(ev, "pod %s already exists", ks_pod_fullname(p, buf, sizeof(buf)));
            return false;
        }
        char *aerr = NULL;
        if (!ks_pod_admit(p, tl->cluster, &aerr)) {
            *err = event_err(ev, "%s", aerr);
            free(aerr);
            return false;
        }
        ev->pod = NULL;
        if (p->node_name || !ks_sim_is_pending(tl->o.config, p)) {
            /* created bound, or for another scheduler: it occupies what it
             * is bound to, without a record */
            tl_pod *tp = track(tl, p, ks_clock_now(tl->clock));
            tp->untracked = true;
            tp->counted = p->node_name != 0;
            if (tp->counted) count_pod(tl, p, 1);
            ks_memory_client_add_pod(tl->mb, p);
            return true;
        }
        add_pod(tl, p, ev->run_ns, ev->delete_at_ns, ev->node_name);
        return true;
    }
    case KS_TL_POD_DELETE: {
        ks_id ns = ks_intern_find(ev->ns ? ev->ns : "default"), name = ks_intern_find(ev->name);
        if (ns == KS_ID_INVALID || name == KS_ID_INVALID) return true; /* never existed or gone: no change */
        uint64_t key = ks_pod_key(ns, name);
        tl_pod *tp = tracked(tl, key);
        if (tp) remove_pod(tl, tp, KS_TL_DELETED);
        else if (ks_memory_client_pod(tl->mb, key)) ks_memory_client_remove_pod(tl->mb, key);
        return true;
    }
    case KS_TL_POD_BOUND: {
        /* the recorded scheduler's choice, kept for comparison */
        ks_id ns = ks_intern_find(ev->ns ? ev->ns : "default"), name = ks_intern_find(ev->name);
        if (ns == KS_ID_INVALID || name == KS_ID_INVALID) return true;
        tl_pod *tp = tracked(tl, ks_pod_key(ns, name));
        if (tp && !tp->untracked && !tp->recorded_node) tp->recorded_node = ks_xstrdup(ev->node_name);
        if (tp && tp->untracked && !tp->counted) {
            /* another scheduler's pod: bound where it was */
            ks_pod *cur = ks_memory_client_pod(tl->mb, tp->key);
            ks_status *bs = cur ? inner_bind(tl, cur, ev->node_name) : NULL;
            if (bs) ks_status_free(bs);
            else if (cur && (cur = ks_memory_client_pod(tl->mb, tp->key))) {
                count_pod(tl, cur, 1);
                tp->counted = true;
            }
        }
        return true;
    }
    case KS_TL_WORKLOAD_CREATE: return add_workload(tl, ev, err);
    case KS_TL_WORKLOAD_DELETE: {
        /* the pods its controllers made (following owner references) */
        ks_id ns = ks_intern_find(ev->ns ? ev->ns : "default"), name = ks_intern_find(ev->name);
        if (ns == KS_ID_INVALID || name == KS_ID_INVALID) return true;
        size_t n = 0;
        uint64_t *keys = NULL;
        for (uint32_t i = 0; i < tl->cluster->pods.n; i++) {
            const ks_pod *p = tl->cluster->pods.v[i];
            const ks_workload *w = ks_workload_of_pod(tl->cluster, p);
            if (!w || w->ns != ns || w->name != name || strcmp(ks_workload_kind_name(w->kind), ev->workload_kind) != 0)
                continue;
            keys = ks_xrealloc(keys, (n + 1) * sizeof(*keys));
            keys[n++] = p->key;
        }
        for (size_t i = 0; i < n; i++) {
            tl_pod *tp = tracked(tl, keys[i]);
            if (tp) remove_pod(tl, tp, KS_TL_DELETED);
            else ks_memory_client_remove_pod(tl->mb, keys[i]);
        }
        free(keys);
        return true;
    }
    case KS_TL_NODE_ADD: {
        if (ks_cluster_node(tl->cluster, ev->node->name)) {
            *err = event_err(ev, "node %s already exists", ks_str(ev->node->name));
            return false;
        }
        ks_node *n = ev->node;
        ev->node = NULL;
        count_node(tl, n, 1, true);
        ks_memory_client_add_node(tl->mb, n);
        return true;
    }
    default: break;
    }
    /* node changes */
    ks_id nid = ks_intern_find(ev->name ? ev->name : "");
    ks_node *cur = nid != KS_ID_INVALID ? ks_cluster_node(tl->cluster, nid) : NULL;
    if (!cur) {
        *err = event_err(ev, "node %s does not exist", ev->name ? ev->name : "");
        return false;
    }
    if (ev->kind == KS_TL_NODE_REMOVE) {
        evict_pods(tl, nid, true);
        count_node(tl, cur, -1, true);
        ks_memory_client_remove_node(tl->mb, nid);
        return true;
    }
    ks_node *n;
    if (ev->kind == KS_TL_NODE_UPDATE && ev->node) {
        n = ev->node;
        ev->node = NULL;
    } else {
        n = changed_node(tl, cur, ev, err);
        if (!n) return false;
    }
    replace_node(tl, cur, n);
    if (ev->kind == KS_TL_NODE_DRAIN) evict_pods(tl, nid, false);
    return true;
}

bool ks_timeline_feed(ks_timeline *tl, ks_tl_event *ev, char **err) {
    int64_t now = ks_clock_now(tl->clock);
    int64_t at = ev->at_ns < now ? now : ev->at_ns;
    if (!advance(tl, at)) {
        ks_tl_event_free(ev);
        return true; /* past the bound: ignored */
    }
    bool ok = apply(tl, ev, err);
    ks_tl_event_free(ev);
    return ok;
}

void ks_timeline_finish(ks_timeline *tl) {
    /* departures still due, then what they free is scheduled */
    while (!tl->stopped) {
        ks_scheduler_run_until(tl->s, ks_clock_now(tl->clock));
        /* the timers of pods gone meanwhile do not make the replay longer */
        while (tl->nheap) {
            tl_pod *tp = tracked(tl, tl->heap[0].key);
            if (tp && tp->gen == tl->heap[0].gen) break;
            heap_pop(tl);
        }
        if (!tl->nheap || !advance(tl, tl->heap[0].at)) break;
    }
    int64_t end = ks_clock_now(tl->clock);
    integrate(tl);
    if (tl->o.step_ns > 0) {
        sample_before(tl, end);
        take_sample(tl, end);
    }
    ks_tl_summary *sm = &tl->res_out.summary;
    sm->end = end;
    double span = (double)(end - tl->start);
    for (uint32_t i = 0; i < tl->nres; i++) sm->mean_alloc[i] = span > 0 ? tl->integral[i] / span : 0;
    /* the records of the pods still there, in arrival order */
    size_t n = 0;
    tl_pod **v = ks_xcalloc(tl->pods.len + 1, sizeof(*v));
    uint64_t k;
    void *val;
    for (size_t it = 0; ks_map_next(&tl->pods, &it, &k, &val);) v[n++] = val;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1]->gen > v[j]->gen; j--) {
            tl_pod *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) finish_record(tl, v[i], v[i]->counted ? KS_TL_RUNNING : KS_TL_PENDING, end);
    free(v);
    sm->pending_exact = tl->pending.hist == NULL;
    sm->pending_p50 = q_get(&tl->pending, 0.50);
    sm->pending_p90 = q_get(&tl->pending, 0.90);
    sm->pending_p99 = q_get(&tl->pending, 0.99);
    sm->pending_max = tl->pending.max;
}

/* ---- setup ------------------------------------------------------------------------------- */

ks_timeline *ks_timeline_new(ks_cluster *cluster, const ks_timeline_options *o, char **err) {
    ks_timeline *tl = ks_xcalloc(1, sizeof(*tl));
    tl->o = *o;
    tl->cluster = cluster;
    tl->start = o->start_ns;
    tl->limit = o->max_ns > 0 ? o->start_ns + o->max_ns : 0;
    tl->integrated_to = o->start_ns;
    tl->next_sample = o->start_ns;
    ks_map_init(&tl->pods);
    tl->res[0] = KS_RES_CPU;
    tl->res[1] = KS_RES_MEMORY;
    tl->res[2] = KS_RES_PODS;
    tl->nres = 3;
    tl->res_out.summary.start = o->start_ns;

    tl->clock = ks_clock_sim_new(o->start_ns);
    tl->mb = ks_memory_client_new(cluster);
    ks_memory_client_set_unordered(tl->mb);
    tl->inner = ks_memory_client_iface(tl->mb);
    tl->wrapped = (ks_cluster_client){
        .ctx = tl,
        .start = w_start,
        .stop = w_stop,
        .execute = w_execute,
        .executes = tl->inner->executes,
    };
    tl->obs = (ks_observer){.ctx = tl, .on_attempt = on_attempt, .extender_bound = extender_bound};

    /* what is there at the start: nodes, bound pods (no records), pending
     * pods (arriving now) */
    for (uint32_t i = 0; i < cluster->nodes.n; i++) count_node(tl, cluster->nodes.v[i], 1, true);
    for (uint32_t i = 0; i < cluster->pods.n; i++) {
        ks_pod *p = cluster->pods.v[i];
        if (p->node_name) {
            tl_pod *tp = track(tl, p, o->start_ns);
            tp->untracked = true;
            tp->counted = true;
            count_pod(tl, p, 1);
        } else if (ks_sim_is_pending(o->config, p)) {
            track(tl, p, o->start_ns);
            tl->res_out.summary.arrived++;
            tl->step.arrived++;
        }
    }
    ks_scheduler_options so = {
        .config = o->config,
        .registry = o->registry,
        .backend = &tl->wrapped,
        .clock = tl->clock,
        .seed = o->seed,
        .ties = o->deterministic ? KS_TIES_BY_NAME : KS_TIES_RANDOM,
        .parallelism = 1,
        .observer = &tl->obs,
    };
    tl->s = ks_sim_start(&so, err);
    if (!tl->s) {
        ks_timeline_free(tl);
        return NULL;
    }
    return tl;
}

void ks_timeline_add_metric(ks_timeline *tl, const char *name, double (*fn)(void *ctx, ks_timeline *tl), void *ctx) {
    tl->metrics = ks_xrealloc(tl->metrics, (tl->nmetrics + 1) * sizeof(*tl->metrics));
    tl->metrics[tl->nmetrics++] = (metric){ks_xstrdup(name), fn, ctx};
    tl->res_out.nextra = (uint32_t)tl->nmetrics;
    tl->res_out.extra_names = ks_xrealloc(tl->res_out.extra_names, tl->nmetrics * sizeof(char *));
    tl->res_out.extra_names[tl->nmetrics - 1] = tl->metrics[tl->nmetrics - 1].name;
}

int64_t ks_timeline_now(const ks_timeline *tl) { return ks_clock_now(tl->clock); }
ks_cluster *ks_timeline_cluster(ks_timeline *tl) { return tl->cluster; }
ks_scheduler *ks_timeline_scheduler(ks_timeline *tl) { return tl->s; }

const ks_tl_result *ks_timeline_result(const ks_timeline *tl) {
    ks_timeline *m = (ks_timeline *)tl;
    ks_tl_summary *sm = &m->res_out.summary;
    sm->nres = tl->nres;
    for (uint32_t i = 0; i < tl->nres; i++) sm->res_names[i] = ks_str(tl->res[i]);
    return &tl->res_out;
}

void ks_timeline_free(ks_timeline *tl) {
    if (!tl) return;
    if (tl->s) ks_scheduler_free(tl->s);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&tl->pods, &it, &k, &v);) free_tl_pod(v);
    ks_map_free(&tl->pods);
    ks_memory_client_free(tl->mb);
    ks_cluster_free(tl->cluster);
    ks_clock_free(tl->clock);
    free(tl->heap);
    free(tl->pending.v);
    free(tl->pending.hist);
    for (size_t i = 0; i < tl->res_out.nsamples; i++) free(tl->res_out.samples[i].extra);
    free(tl->res_out.samples);
    for (size_t i = 0; i < tl->res_out.ndisagreements; i++) {
        free(tl->res_out.disagreements[i].pod);
        free(tl->res_out.disagreements[i].node);
        free(tl->res_out.disagreements[i].reason);
    }
    free(tl->res_out.disagreements);
    for (size_t i = 0; i < tl->nmetrics; i++) free(tl->metrics[i].name);
    free(tl->metrics);
    free(tl->res_out.extra_names);
    free(tl);
}
