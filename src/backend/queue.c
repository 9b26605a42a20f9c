#include "backend/queue_internal.h"
#include "api/pod.h"
#include "framework/events.h"
#include "framework/status.h"
#include "metrics/sched_metrics.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BACKOFF_WINDOW_NS KS_NS_PER_SEC
#define DEFAULT_MAX_IN_UNSCHEDULABLE_NS (5LL * 60 * KS_NS_PER_SEC)

typedef enum { STRAT_SKIP = 0, STRAT_AFTER_BACKOFF, STRAT_IMMEDIATELY } strategy;

/* The reasons a pod enters a queue (upstream event labels, which the
 * scheduler_queue_incoming_pods_total metric carries). */
#define EV_UNSCHEDULED_POD_ADD "UnschedulablePodAdd"
#define EV_UNSCHEDULED_POD_UPDATE "UnschedulablePodUpdate"
#define EV_BACKOFF_COMPLETE "BackoffComplete"
#define EV_FORCE_ACTIVATE "ForceActivate"
#define EV_ATTEMPT_FAILURE "ScheduleAttemptFailure"
#define EV_POP_FROM_BACKOFF "PopFromBackoffQ"
#define EV_UNSCHEDULABLE_TIMEOUT "UnschedulableTimeout"

/* scheduler_queue_incoming_pods_total{queue, event}. The labels are
 * mostly the constants above: their series are kept by address in the
 * queue (under its lock) so that a pod entering a queue costs an atomic
 * add. */
#define INCOMING_SLOTS 32
typedef struct incoming_slot {
    const char *queue, *event;
    ks_metric *m;
} incoming_slot;
static void count_incoming(incoming_slot *cache, const char *queue, const char *event) {
    static const char *const constants[] = {EV_UNSCHEDULED_POD_ADD, EV_UNSCHEDULED_POD_UPDATE, EV_BACKOFF_COMPLETE,
                                            EV_FORCE_ACTIVATE, EV_ATTEMPT_FAILURE, EV_POP_FROM_BACKOFF,
                                            EV_UNSCHEDULABLE_TIMEOUT};
    bool constant = false;
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
        if (event == constants[i]) constant = true;
    if (!constant) {
        ks_counter_inc(ks_metric_get(ks_sm()->queue_incoming_pods, queue, event));
        return;
    }
    ks_metric *m = NULL;
    size_t i = 0;
    for (; i < INCOMING_SLOTS && cache[i].m; i++)
        if (cache[i].queue == queue && cache[i].event == event) {
            m = cache[i].m;
            break;
        }
    if (!m) {
        m = ks_metric_get(ks_sm()->queue_incoming_pods, queue, event);
        if (i < INCOMING_SLOTS) cache[i] = (incoming_slot){queue, event, m};
    }
    ks_counter_inc(m);
}

/* A binary heap with Go container/heap's exact sift order, so that pods
 * comparing equal come out in the same order as upstream's. */
typedef struct heap {
    ks_queued_pod **v;
    uint32_t n, cap;
    int kind; /* 0 active, 1 backoff, 2 error backoff */
} heap;

typedef struct in_flight {
    uint64_t key;
    uint64_t start_seq; /* events with seq >= start_seq happened while in flight */
} in_flight;

/* An event seen while pods were in flight, with its objects (referenced)
 * for the hints that will look at it when a pod comes back. */
typedef struct logged_event {
    uint64_t seq;
    ks_cluster_event ev;
    uint64_t target; /* wildcard events for one pod */
    ks_kind kind;
    const void *old_obj, *new_obj;
} logged_event;

typedef struct nom_list {
    ks_pod **pods;
    uint32_t n, cap;
} nom_list;

struct ks_queue {
    pthread_mutex_t mu;
    incoming_slot incoming[INCOMING_SLOTS]; /* count_incoming's series */
    pthread_cond_t cv;
    ks_clock *clock;
    int64_t initial_backoff, max_backoff, max_in_unsched;
    ks_framework **fws;
    size_t nfws;
    ks_pod *(*lookup_pod)(void *ctx, uint64_t key);
    void *ctx;
    bool closed;

    heap active, backoff, error_backoff;
    ks_map all;           /* key + 1 -> queued pod (any sub-queue) */
    size_t nunsched, ngated;
    int64_t cycle;
    int64_t last_stamp;
    uint64_t epoch;

    in_flight *inflight;
    uint32_t ninflight, inflight_cap;
    logged_event *events;
    uint32_t nevents, events_cap;
    uint64_t next_seq;

    ks_map hint_series; /* plugin ops -> hint_series_list (observe_hint) */

    pthread_mutex_t nom_mu;
    ks_map nom_by_node;   /* node id + 1 -> nom_list* */
    ks_map nom_by_pod;    /* pod key + 1 -> node id */
    /* nom_by_pod.len, readable without nom_mu: Filter asks about every
     * node it evaluates, and usually nothing is nominated anywhere */
    atomic_size_t nominated;
};

static const ks_cluster_event wildcard_event = {KS_EV_WILDCARD, KS_ACT_ALL};

static bool is_wildcard(ks_cluster_event e) { return ks_event_is_wildcard(e); }

/* The objects of the event being handled, as the hints see them. */
typedef struct event_objs {
    ks_event_object o, n;
    const ks_event_object *old_obj, *new_obj;
} event_objs;

static void objs_set(event_objs *e, ks_kind kind, const void *old_obj, const void *new_obj) {
    e->old_obj = ks_event_object_of(&e->o, kind, old_obj);
    e->new_obj = ks_event_object_of(&e->n, kind, new_obj);
}

/* ---- heaps ---------------------------------------------------------------- */

static int64_t backoff_time(ks_queue *q, ks_queued_pod *qp);

static bool heap_less(ks_queue *q, const heap *h, ks_queued_pod *a, ks_queued_pod *b) {
    if (h->kind != 0) {
        int64_t ba = backoff_time(q, a), bb = backoff_time(q, b);
        if (ba != bb || h->kind == 2) return ba < bb;
    }
    return ks_framework_less(q->fws[0], a, b);
}

static void heap_swap(heap *h, uint32_t i, uint32_t j) {
    ks_queued_pod *t = h->v[i];
    h->v[i] = h->v[j];
    h->v[j] = t;
    h->v[i]->heap_index = (int)i;
    h->v[j]->heap_index = (int)j;
}

static void heap_up(ks_queue *q, heap *h, uint32_t j) {
    while (j > 0) {
        uint32_t i = (j - 1) / 2;
        if (!heap_less(q, h, h->v[j], h->v[i])) break;
        heap_swap(h, i, j);
        j = i;
    }
}

static bool heap_down(ks_queue *q, heap *h, uint32_t i0, uint32_t n) {
    uint32_t i = i0;
    for (;;) {
        uint32_t j1 = 2 * i + 1;
        if (j1 >= n) break;
        uint32_t j = j1;
        if (j1 + 1 < n && heap_less(q, h, h->v[j1 + 1], h->v[j1])) j = j1 + 1;
        if (!heap_less(q, h, h->v[j], h->v[i])) break;
        heap_swap(h, i, j);
        i = j;
    }
    return i > i0;
}

static void heap_push(ks_queue *q, heap *h, ks_queued_pod *qp) {
    KS_GROW(h->v, h->cap, h->n + 1);
    h->v[h->n] = qp;
    qp->heap_index = (int)h->n;
    h->n++;
    heap_up(q, h, h->n - 1);
}

static void heap_fix(ks_queue *q, heap *h, uint32_t i) {
    if (!heap_down(q, h, i, h->n)) heap_up(q, h, i);
}

static ks_queued_pod *heap_remove(ks_queue *q, heap *h, uint32_t i) {
    uint32_t last = h->n - 1;
    if (last != i) {
        heap_swap(h, i, last);
        if (!heap_down(q, h, i, last)) heap_up(q, h, i);
    }
    ks_queued_pod *qp = h->v[last];
    h->n--;
    qp->heap_index = -1;
    return qp;
}

static heap *heap_of(ks_queue *q, ks_qwhere w) {
    switch (w) {
    case KS_Q_ACTIVE: return &q->active;
    case KS_Q_BACKOFF: return &q->backoff;
    case KS_Q_ERROR_BACKOFF: return &q->error_backoff;
    default: return NULL;
    }
}

/* ---- bookkeeping ------------------------------------------------------- */

static bool gated(const ks_queued_pod *qp) { return qp->gating_plugin >= 0; }

static ks_queued_pod *find(ks_queue *q, uint64_t key) { return ks_map_get(&q->all, key + 1); }

/* Take qp out of whatever sub-queue holds it. */
static void detach(ks_queue *q, ks_queued_pod *qp) {
    heap *h = heap_of(q, qp->where);
    if (h) heap_remove(q, h, (uint32_t)qp->heap_index);
    if (qp->where == KS_Q_UNSCHEDULABLE) {
        q->nunsched--;
        if (qp->counted_gated) q->ngated--;
        qp->counted_gated = false;
    }
    if (qp->where != KS_Q_NONE) ks_map_del(&q->all, qp->pod->key + 1);
    qp->where = KS_Q_NONE;
}

/* Put qp into a sub-queue. An older record for the same pod (there should
 * be none) is replaced. */
static void attach(ks_queue *q, ks_queued_pod *qp, ks_qwhere w) {
    ks_queued_pod *old = find(q, qp->pod->key);
    if (old && old != qp) {
        detach(q, old);
        ks_queued_pod_free(old);
    } else if (old == qp) {
        detach(q, qp);
    }
    qp->where = w;
    ks_map_put(&q->all, qp->pod->key + 1, qp);
    heap *h = heap_of(q, w);
    if (h) heap_push(q, h, qp);
    if (w == KS_Q_UNSCHEDULABLE) {
        q->nunsched++;
        qp->counted_gated = gated(qp);
        if (qp->counted_gated) q->ngated++;
    }
}

static int64_t stamp(ks_queue *q) {
    int64_t t = ks_clock_now(q->clock);
    /* Strictly increasing enqueue times: on a simulated clock many pods
     * arrive at the same instant, and QueueSort must still see them in
     * arrival order as it would in real time. */
    if (t <= q->last_stamp) t = q->last_stamp + 1;
    q->last_stamp = t;
    return t;
}

static ks_framework *framework_for(ks_queue *q, ks_id scheduler_name) {
    for (size_t i = 0; i < q->nfws; i++)
        if (ks_intern(ks_framework_profile_name(q->fws[i])) == scheduler_name) return q->fws[i];
    return NULL;
}

static ks_queued_pod *new_qp(ks_queue *q, ks_pod *pod) {
    ks_queued_pod *qp = ks_xcalloc(1, sizeof(*qp));
    qp->pod = ks_pod_ref(pod);
    qp->fw = framework_for(q, pod->scheduler_name);
    qp->timestamp_ns = stamp(q);
    qp->gating_plugin = -1;
    qp->heap_index = -1;
    return qp;
}

void ks_queued_pod_free(ks_queued_pod *qp) {
    if (!qp) return;
    ks_pod_unref(qp->pod);
    free(qp);
}

static void set_pod(ks_queued_pod *qp, ks_pod *pod) {
    if (pod == qp->pod) return;
    ks_pod_ref(pod);
    ks_pod_unref(qp->pod);
    qp->pod = pod;
}

/* ---- public accessors of ks_queued_pod ----------------------------------- */

const ks_pod *ks_queued_pod_pod(const ks_queued_pod *q) { return q->pod; }
int64_t ks_queued_pod_timestamp_ns(const ks_queued_pod *q) { return q->timestamp_ns; }
uint32_t ks_queued_pod_attempts(const ks_queued_pod *q) { return q->attempts; }
int64_t ks_queued_pod_initial_attempt_ns(const ks_queued_pod *q) {
    return q->has_initial_attempt ? q->initial_attempt_ns : q->timestamp_ns;
}
ks_framework *ks_queued_pod_framework(const ks_queued_pod *qp) { return qp->fw; }
ks_qwhere ks_queued_pod_where(const ks_queued_pod *qp) { return qp->where; }
bool ks_queued_pod_has_initial_attempt(const ks_queued_pod *qp) { return qp->has_initial_attempt; }
const ks_plugin_mask *ks_queued_pod_unschedulable_plugins(const ks_queued_pod *qp) {
    return &qp->unschedulable_plugins;
}
const ks_plugin_mask *ks_queued_pod_pending_plugins(const ks_queued_pod *qp) { return &qp->pending_plugins; }
int ks_queued_pod_gating_plugin(const ks_queued_pod *qp) { return qp->gating_plugin; }
const char *ks_queued_pod_requeue_event(const ks_queued_pod *qp) {
    return qp->requeue_event[0] ? qp->requeue_event : NULL;
}
const char *ks_queued_pod_requeue_plugin(const ks_queued_pod *qp) { return qp->requeue_plugin; }
void ks_queued_pod_set_rejectors(ks_queued_pod *qp, const ks_plugin_mask *unschedulable,
                                 const ks_plugin_mask *pending, bool extender_rejected) {
    qp->unschedulable_plugins = *unschedulable;
    qp->pending_plugins = *pending;
    qp->extender_rejected = extender_rejected;
}
void ks_queued_pod_set_pod(ks_queued_pod *qp, ks_pod *pod) { set_pod(qp, pod); }

/* ---- backoff ----------------------------------------------------------- */

static int64_t align_window(int64_t t) {
    /* Go's Time.Truncate(1s): round down to a whole second. */
    int64_t r = t % BACKOFF_WINDOW_NS;
    if (r < 0) r += BACKOFF_WINDOW_NS;
    return t - r;
}

int64_t ks_queue_backoff_duration(const ks_queue *q, uint32_t count) {
    if (count == 0) return 0;
    uint32_t shift = count - 1;
    if (shift >= 62 || q->initial_backoff > (q->max_backoff >> shift)) return q->max_backoff;
    return q->initial_backoff << shift;
}

/* INT64_MIN: no backoff at all (Go's zero time). */
static int64_t backoff_time(ks_queue *q, ks_queued_pod *qp) {
    if (q->max_backoff == 0) return INT64_MIN;
    uint32_t count = qp->consecutive_errors > 0 ? qp->consecutive_errors : qp->unschedulable_count;
    if (count == 0) return INT64_MIN;
    if (!qp->backoff_computed) {
        qp->backoff_expiration_ns = align_window(qp->timestamp_ns + ks_queue_backoff_duration(q, count));
        qp->backoff_computed = true;
    }
    return qp->backoff_expiration_ns;
}

static bool backing_off(ks_queue *q, ks_queued_pod *qp) {
    return backoff_time(q, qp) >= align_window(ks_clock_now(q->clock));
}

/* ---- nominator (nom_mu) ------------------------------------------------- */

static void nom_delete_locked(ks_queue *q, uint64_t key) {
    uintptr_t node = (uintptr_t)ks_map_del(&q->nom_by_pod, key + 1);
    if (!node) return;
    atomic_store_explicit(&q->nominated, q->nom_by_pod.len, memory_order_relaxed);
    nom_list *l = ks_map_get(&q->nom_by_node, (uint64_t)node);
    for (uint32_t i = 0; l && i < l->n; i++) {
        if (l->pods[i]->key != key) continue;
        ks_pod_unref(l->pods[i]);
        memmove(&l->pods[i], &l->pods[i + 1], (l->n - i - 1) * sizeof(*l->pods));
        l->n--;
        if (l->n == 0) {
            ks_map_del(&q->nom_by_node, (uint64_t)node);
            free(l->pods);
            free(l);
        }
        break;
    }
}

static void nom_add_locked(ks_queue *q, ks_pod *pod, const ks_nominating_info *ni) {
    nom_delete_locked(q, pod->key);
    ks_id node;
    if (ni && ni->mode == KS_NOMINATE_OVERRIDE) node = ni->node;
    else node = pod->nominated_node;
    if (node == 0) return;
    /* Only pods that still exist and are not bound yet are nominated. */
    if (q->lookup_pod) {
        ks_pod *cur = q->lookup_pod(q->ctx, pod->key);
        bool skip = !cur || cur->node_name != 0;
        if (cur) ks_pod_unref(cur);
        if (skip) return;
    }
    ks_map_put(&q->nom_by_pod, pod->key + 1, (void *)((uintptr_t)node + 1));
    atomic_store_explicit(&q->nominated, q->nom_by_pod.len, memory_order_relaxed);
    nom_list *l = ks_map_get(&q->nom_by_node, (uint64_t)node + 1);
    if (!l) {
        l = ks_xcalloc(1, sizeof(*l));
        ks_map_put(&q->nom_by_node, (uint64_t)node + 1, l);
    }
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->pods[i]->key == pod->key) {
            ks_pod_ref(pod);
            ks_pod_unref(l->pods[i]);
            l->pods[i] = pod;
            return;
        }
    }
    KS_GROW(l->pods, l->cap, l->n + 1);
    l->pods[l->n++] = ks_pod_ref(pod);
}

static void nom_add(ks_queue *q, ks_pod *pod, const ks_nominating_info *ni) {
    pthread_mutex_lock(&q->nom_mu);
    nom_add_locked(q, pod, ni);
    pthread_mutex_unlock(&q->nom_mu);
}

/* upstream UpdateNominatedPod: keep a nomination the scheduler made itself
 * (not yet visible in the pod's status) across an update. */
static void nom_update(ks_queue *q, ks_pod *old_pod, ks_pod *new_pod) {
    pthread_mutex_lock(&q->nom_mu);
    ks_nominating_info ni = {0};
    const ks_nominating_info *use = NULL;
    if (old_pod->nominated_node == 0 && new_pod->nominated_node == 0) {
        uintptr_t node = (uintptr_t)ks_map_get(&q->nom_by_pod, old_pod->key + 1);
        if (node) {
            ni.mode = KS_NOMINATE_OVERRIDE;
            ni.node = (ks_id)(node - 1);
            use = &ni;
        }
    }
    nom_delete_locked(q, old_pod->key);
    nom_add_locked(q, new_pod, use);
    pthread_mutex_unlock(&q->nom_mu);
}

void ks_queue_add_nominated(ks_queue *q, ks_pod *pod, const ks_nominating_info *ni) { nom_add(q, pod, ni); }

void ks_queue_delete_nominated(ks_queue *q, const ks_pod *pod) {
    pthread_mutex_lock(&q->nom_mu);
    nom_delete_locked(q, pod->key);
    pthread_mutex_unlock(&q->nom_mu);
}

size_t ks_queue_nominated_pods(ks_queue *q, ks_id node, ks_pod **out, size_t max) {
    pthread_mutex_lock(&q->nom_mu);
    nom_list *l = ks_map_get(&q->nom_by_node, (uint64_t)node + 1);
    size_t n = l ? l->n : 0;
    for (size_t i = 0; i < n && i < max; i++) out[i] = ks_pod_ref(l->pods[i]);
    pthread_mutex_unlock(&q->nom_mu);
    return n;
}

size_t ks_queue_nominated_count(ks_queue *q, ks_id node) {
    if (atomic_load_explicit(&q->nominated, memory_order_relaxed) == 0) return 0;
    pthread_mutex_lock(&q->nom_mu);
    nom_list *l = ks_map_get(&q->nom_by_node, (uint64_t)node + 1);
    size_t n = l ? l->n : 0;
    pthread_mutex_unlock(&q->nom_mu);
    return n;
}

ks_id ks_queue_nominated_node(ks_queue *q, uint64_t pod_key) {
    pthread_mutex_lock(&q->nom_mu);
    uintptr_t node = (uintptr_t)ks_map_get(&q->nom_by_pod, pod_key + 1);
    pthread_mutex_unlock(&q->nom_mu);
    return node ? (ks_id)(node - 1) : 0;
}

/* ---- in-flight events ----------------------------------------------------- */

static in_flight *inflight_find(ks_queue *q, uint64_t key) {
    for (uint32_t i = 0; i < q->ninflight; i++)
        if (q->inflight[i].key == key) return &q->inflight[i];
    return NULL;
}

static void log_event(ks_queue *q, ks_cluster_event ev, uint64_t target, ks_kind kind, const void *old_obj,
                      const void *new_obj) {
    KS_GROW(q->events, q->events_cap, q->nevents + 1);
    ks_kind_object_ref(kind, old_obj);
    ks_kind_object_ref(kind, new_obj);
    q->events[q->nevents++] = (logged_event){
        .seq = q->next_seq++, .ev = ev, .target = target, .kind = kind, .old_obj = old_obj, .new_obj = new_obj};
}

static void release_events(logged_event *e, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        ks_kind_object_unref(e[i].kind, e[i].old_obj);
        ks_kind_object_unref(e[i].kind, e[i].new_obj);
    }
}

/* Forget events no in-flight pod can need any more. */
static void trim_events(ks_queue *q) {
    uint64_t min = q->next_seq;
    for (uint32_t i = 0; i < q->ninflight; i++)
        if (q->inflight[i].start_seq < min) min = q->inflight[i].start_seq;
    uint32_t drop = 0;
    while (drop < q->nevents && q->events[drop].seq < min) drop++;
    if (drop) {
        release_events(q->events, drop);
        memmove(q->events, q->events + drop, (q->nevents - drop) * sizeof(*q->events));
        q->nevents -= drop;
    }
}

static void done_locked(ks_queue *q, uint64_t key) {
    for (uint32_t i = 0; i < q->ninflight; i++) {
        if (q->inflight[i].key != key) continue;
        q->inflight[i] = q->inflight[--q->ninflight];
        trim_events(q);
        return;
    }
}

/* ---- requeueing ----------------------------------------------------------- */

/* scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}:
 * every hint call is observed, a plugin without a hint of its own included
 * (upstream calls its default hint, which answers Queue). Upstream hands
 * the observations to a buffer flushed every second (dropped when 1000
 * are waiting); ksched observes at once. The series are kept per plugin,
 * under the queue lock, so that a call costs no family lookup. */
typedef struct hint_series {
    ks_cluster_event ev;
    int hint;
    ks_metric *m;
} hint_series;

typedef struct hint_series_list {
    hint_series *v;
    uint32_t n, cap;
} hint_series_list;

enum { HINT_QUEUE = 0, HINT_SKIP, HINT_ERROR };

static void observe_hint(ks_queue *q, const char *plugin, ks_cluster_event ev, int hint, int64_t ns) {
    uint64_t key = (uint64_t)(uintptr_t)plugin; /* a plugin's static name */
    hint_series_list *l = ks_map_get(&q->hint_series, key);
    if (!l) {
        l = ks_xcalloc(1, sizeof(*l));
        ks_map_put(&q->hint_series, key, l);
    }
    ks_metric *m = NULL;
    for (uint32_t i = 0; i < l->n && !m; i++)
        if (l->v[i].hint == hint && l->v[i].ev.resource == ev.resource && l->v[i].ev.actions == ev.actions)
            m = l->v[i].m;
    if (!m) {
        static const char *const names[] = {"Queue", "QueueSkip", "Error"};
        char buf[96];
        m = ks_metric_get(ks_sm()->queueing_hint_execution_duration, plugin,
                          ks_event_label(ev, buf, sizeof(buf)), names[hint]);
        KS_GROW(l->v, l->cap, l->n + 1);
        l->v[l->n++] = (hint_series){ev, hint, m};
    }
    ks_histogram_observe(m, (double)ns / 1e9);
}

/* upstream isPodWorthRequeuing: ask the QueueingHint of every rejecting
 * plugin that registered the event. A pending plugin saying Queue sends
 * the pod to activeQ at once; otherwise Queue means after its backoff.
 * *why (may be NULL) gets the plugin whose hint decided (NULL when no hint
 * did: no rejector, the wildcard, an extender). */
static strategy worth_requeuing(ks_queue *q, ks_queued_pod *qp, ks_cluster_event ev, uint64_t target,
                                const event_objs *eo, const char **why) {
    if (why) *why = NULL;
    ks_plugin_mask rej = qp->unschedulable_plugins;
    for (int i = 0; i < KS_PLUGIN_MASK_WORDS; i++) rej.bits[i] |= qp->pending_plugins.bits[i];
    if (ks_plugin_mask_empty(&rej) && !qp->extender_rejected) return STRAT_AFTER_BACKOFF;
    if (is_wildcard(ev)) {
        if (target && target != qp->pod->key) return STRAT_SKIP;
        return STRAT_AFTER_BACKOFF;
    }
    ks_framework *fw = qp->fw;
    if (!fw) return STRAT_AFTER_BACKOFF;
    bool no_pending = ks_plugin_mask_empty(&qp->pending_plugins);
    strategy st = STRAT_SKIP;
    /* Extenders register no events: every event is worth a retry. */
    if (qp->extender_rejected) {
        if (no_pending) return STRAT_AFTER_BACKOFF;
        st = STRAT_AFTER_BACKOFF;
    }
    for (uint32_t i = 0, n = (uint32_t)ks_framework_nplugins(fw); i < n; i++) {
        if (!ks_plugin_mask_has(&rej, i)) continue;
        if (!ks_framework_plugin_registered(fw, i, ev)) continue;
        const char *name = ks_framework_plugin_name(fw, i);
        int64_t t0 = ks_monotonic_ns();
        bool failed = false;
        ks_queueing_hint h = ks_framework_plugin_hint(fw, i, ev, qp->pod, eo ? eo->old_obj : NULL,
                                                      eo ? eo->new_obj : NULL, &failed);
        observe_hint(q, name, ev, failed ? HINT_ERROR : h == KS_QUEUE_SKIP ? HINT_SKIP : HINT_QUEUE,
                     ks_monotonic_ns() - t0);
        if (h == KS_QUEUE_SKIP) continue;
        if (why && (st == STRAT_SKIP || ks_plugin_mask_has(&qp->pending_plugins, i))) *why = name;
        if (ks_plugin_mask_has(&qp->pending_plugins, i)) return STRAT_IMMEDIATELY;
        if (no_pending) return STRAT_AFTER_BACKOFF;
        st = STRAT_AFTER_BACKOFF;
    }
    return st;
}

/* Remember why a pod left the unschedulable pods (--explain, the trace). */
static void note_requeue(ks_queued_pod *qp, const char *event, const char *plugin) {
    snprintf(qp->requeue_event, sizeof(qp->requeue_event), "%s", event ? event : "");
    qp->requeue_plugin = plugin;
}

static void run_pre_enqueue(ks_queued_pod *qp) {
    if (!qp->fw) return;
    int g = -1;
    ks_status *s = ks_framework_run_pre_enqueue(qp->fw, qp->pod, qp->gating_plugin, &g);
    if (s) {
        ks_plugin_mask_add(&qp->unschedulable_plugins, (unsigned)g);
        if (s->code == KS_ERROR) {
            char *m = ks_status_message(s);
            ks_errorf("unexpected error running PreEnqueue plugin %s: %s", s->plugin ? s->plugin : "", m);
            free(m);
        }
        ks_status_free(s);
    }
    qp->gating_plugin = g;
}

/* upstream's "Pod moved to an internal scheduling queue" line (-v=5). */
static void log_moved(const ks_queued_pod *qp, const char *event, const char *queue) {
    if (!KS_V(5)) return;
    char name[512];
    ks_infos(5, "Pod moved to an internal scheduling queue", "pod", ks_pod_fullname(qp->pod, name, sizeof(name)),
             "event", event, "queue", queue);
}

/* Gated pods (PreEnqueue said no) wait in the unschedulable map; a pod
 * already in activeQ or backoffQ stays there. */
static void park_gated(ks_queue *q, ks_queued_pod *qp, const char *event) {
    ks_queued_pod *cur = find(q, qp->pod->key);
    if (cur && cur != qp) return;
    if (cur == qp && qp->where != KS_Q_UNSCHEDULABLE) return;
    if (qp->where != KS_Q_UNSCHEDULABLE) count_incoming(q->incoming, "unschedulable", event);
    attach(q, qp, KS_Q_UNSCHEDULABLE);
    log_moved(qp, event, "Unschedulable");
}

static bool move_to_active(ks_queue *q, ks_queued_pod *qp, const char *event) {
    /* Pods coming out of backoffQ had PreEnqueue run when they went in. */
    if (strcmp(event, EV_BACKOFF_COMPLETE) != 0) run_pre_enqueue(qp);
    if (gated(qp)) {
        park_gated(q, qp, event);
        return false;
    }
    if (!qp->has_initial_attempt) {
        qp->initial_attempt_ns = ks_clock_now(q->clock);
        qp->has_initial_attempt = true;
    }
    attach(q, qp, KS_Q_ACTIVE);
    count_incoming(q->incoming, "active", event);
    log_moved(qp, event, "Active");
    if (strcmp(event, EV_UNSCHEDULED_POD_ADD) == 0 || strcmp(event, EV_UNSCHEDULED_POD_UPDATE) == 0)
        nom_add(q, qp->pod, NULL);
    return true;
}

static bool move_to_backoff(ks_queue *q, ks_queued_pod *qp, const char *event) {
    run_pre_enqueue(qp);
    if (gated(qp)) {
        park_gated(q, qp, event);
        return false;
    }
    bool error = ks_plugin_mask_empty(&qp->unschedulable_plugins) && ks_plugin_mask_empty(&qp->pending_plugins) &&
                 !qp->extender_rejected;
    attach(q, qp, error ? KS_Q_ERROR_BACKOFF : KS_Q_BACKOFF);
    count_incoming(q->incoming, "backoff", event);
    log_moved(qp, event, "Backoff");
    return true;
}

static ks_qwhere requeue(ks_queue *q, ks_queued_pod *qp, strategy st, const char *event) {
    if (st == STRAT_SKIP) {
        if (qp->where != KS_Q_UNSCHEDULABLE) {
            attach(q, qp, KS_Q_UNSCHEDULABLE);
            count_incoming(q->incoming, "unschedulable", event);
            log_moved(qp, event, "Unschedulable");
        }
        return KS_Q_UNSCHEDULABLE;
    }
    if (st == STRAT_AFTER_BACKOFF && backing_off(q, qp)) {
        /* A pod PreEnqueue held back and now lets in (a preemptor whose
         * victims the scheduler has seen go) has waited its turn already:
         * it is retried at once, before another scheduler fills the room
         * it made (upstream: after the backoff of its preempting attempt). */
        if (gated(qp)) {
            run_pre_enqueue(qp);
            if (gated(qp)) {
                park_gated(q, qp, event);
                return KS_Q_UNSCHEDULABLE;
            }
        } else if (move_to_backoff(q, qp, event)) {
            return qp->where;
        } else {
            return KS_Q_UNSCHEDULABLE;
        }
    }
    if (move_to_active(q, qp, event)) return KS_Q_ACTIVE;
    return KS_Q_UNSCHEDULABLE;
}

static bool event_of_interest(ks_queue *q, ks_cluster_event ev) {
    if (is_wildcard(ev)) return true;
    for (size_t f = 0; f < q->nfws; f++)
        if (ks_framework_registered(q->fws[f], ev)) return true;
    return false;
}

static bool gating_plugin_interested(const ks_queued_pod *qp, ks_cluster_event ev) {
    if (!qp->fw || qp->gating_plugin < 0) return true;
    return ks_framework_plugin_registered(qp->fw, (unsigned)qp->gating_plugin, ev);
}

/* upstream movePodsToActiveOrBackoffQueue. */
static void move_pods(ks_queue *q, ks_queued_pod **list, size_t n, ks_cluster_event ev, uint64_t target, ks_kind kind,
                      const void *old_obj, const void *new_obj) {
    if (!event_of_interest(q, ev)) return;
    bool activated = false;
    char buf[96];
    const char *label = NULL; /* made when a pod moves */
    event_objs eo;
    objs_set(&eo, kind, old_obj, new_obj);
    for (size_t i = 0; i < n; i++) {
        ks_queued_pod *qp = list[i];
        if (gated(qp) && !gating_plugin_interested(qp, ev)) continue;
        const char *why;
        strategy st = worth_requeuing(q, qp, ev, target, &eo, &why);
        if (st == STRAT_SKIP) continue;
        if (!label) label = ks_event_label(ev, buf, sizeof(buf));
        note_requeue(qp, label, why);
        ks_qwhere w = requeue(q, qp, st, label);
        if (w == KS_Q_ACTIVE || w == KS_Q_BACKOFF || w == KS_Q_ERROR_BACKOFF) activated = true;
    }
    if (q->ninflight) log_event(q, ev, target, kind, old_obj, new_obj);
    if (activated) pthread_cond_broadcast(&q->cv);
}

/* ---- lifecycle --------------------------------------------------------- */

ks_queue *ks_queue_new(const ks_queue_options *o) {
    ks_queue *q = ks_xcalloc(1, sizeof(*q));
    pthread_mutex_init(&q->mu, NULL);
    pthread_mutex_init(&q->nom_mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->clock = o->clock ? o->clock : ks_clock_real();
    q->initial_backoff = o->initial_backoff_ns;
    q->max_backoff = o->max_backoff_ns;
    q->max_in_unsched = o->max_in_unschedulable_ns ? o->max_in_unschedulable_ns : DEFAULT_MAX_IN_UNSCHEDULABLE_NS;
    q->nfws = o->nframeworks;
    q->fws = ks_xcalloc(q->nfws ? q->nfws : 1, sizeof(*q->fws));
    for (size_t i = 0; i < q->nfws; i++) q->fws[i] = o->frameworks[i];
    q->lookup_pod = o->lookup_pod;
    q->ctx = o->ctx;
    q->active.kind = 0;
    q->backoff.kind = 1;
    q->error_backoff.kind = 2;
    q->last_stamp = INT64_MIN;
    return q;
}

void ks_queue_free(ks_queue *q) {
    if (!q) return;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&q->all, &it, &k, &v);) ks_queued_pod_free(v);
    ks_map_free(&q->all);
    free(q->active.v);
    free(q->backoff.v);
    free(q->error_backoff.v);
    free(q->inflight);
    release_events(q->events, q->nevents);
    free(q->events);
    for (size_t it = 0; ks_map_next(&q->nom_by_node, &it, &k, &v);) {
        nom_list *l = v;
        for (uint32_t i = 0; i < l->n; i++) ks_pod_unref(l->pods[i]);
        free(l->pods);
        free(l);
    }
    ks_map_free(&q->nom_by_node);
    ks_map_free(&q->nom_by_pod);
    for (size_t it = 0; ks_map_next(&q->hint_series, &it, &k, &v);) {
        hint_series_list *l = v;
        free(l->v);
        free(l);
    }
    ks_map_free(&q->hint_series);
    free(q->fws);
    pthread_mutex_destroy(&q->mu);
    pthread_mutex_destroy(&q->nom_mu);
    pthread_cond_destroy(&q->cv);
    free(q);
}

void ks_queue_close(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    q->ninflight = 0;
    release_events(q->events, q->nevents);
    q->nevents = 0;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* ---- pods in and out -------------------------------------------------- */

void ks_queue_add(ks_queue *q, ks_pod *pod) {
    pthread_mutex_lock(&q->mu);
    q->epoch++;
    ks_queued_pod *qp = new_qp(q, pod);
    if (move_to_active(q, qp, EV_UNSCHEDULED_POD_ADD)) pthread_cond_broadcast(&q->cv);
    else if (qp->where == KS_Q_NONE) ks_queued_pod_free(qp); /* already queued */
    pthread_mutex_unlock(&q->mu);
}

/* upstream Update with queueing hints: the events the change makes are
 * remembered for the pod's attempt when it is in flight, and asked of the
 * rejecting plugins' hints when it is unschedulable. */
void ks_queue_update(ks_queue *q, ks_pod *old_pod, ks_pod *new_pod) {
    pthread_mutex_lock(&q->mu);
    ks_cluster_event evs[5];
    size_t nev = old_pod ? ks_pod_change_events(old_pod, new_pod, evs) : 0;
    in_flight *f = inflight_find(q, new_pod->key);
    if (f) {
        /* The attempt in progress will look at these when it fails. */
        q->epoch++;
        for (size_t i = 0; i < nev; i++) log_event(q, evs[i], 0, KS_KIND_POD, old_pod, new_pod);
        pthread_mutex_unlock(&q->mu);
        return;
    }
    ks_queued_pod *qp = find(q, old_pod ? old_pod->key : new_pod->key);
    if (qp && (qp->where == KS_Q_ACTIVE || qp->where == KS_Q_BACKOFF || qp->where == KS_Q_ERROR_BACKOFF)) {
        set_pod(qp, new_pod);
        heap_fix(q, heap_of(q, qp->where), (uint32_t)qp->heap_index);
        if (old_pod) nom_update(q, old_pod, new_pod);
        pthread_mutex_unlock(&q->mu);
        return;
    }
    if (qp) { /* unschedulable */
        set_pod(qp, new_pod);
        if (old_pod) nom_update(q, old_pod, new_pod);
        q->epoch++;
        event_objs eo;
        objs_set(&eo, KS_KIND_POD, old_pod, new_pod);
        for (size_t i = 0; i < nev; i++) {
            const char *why;
            strategy st = worth_requeuing(q, qp, evs[i], 0, &eo, &why);
            char buf[96];
            const char *label = ks_event_label(evs[i], buf, sizeof(buf));
            if (st != STRAT_SKIP) note_requeue(qp, label, why);
            ks_qwhere w = requeue(q, qp, st, label);
            /* out of the unschedulable pods: the later events are moot */
            if (w == KS_Q_ACTIVE || w == KS_Q_BACKOFF || w == KS_Q_ERROR_BACKOFF) {
                pthread_cond_broadcast(&q->cv);
                break;
            }
        }
        pthread_mutex_unlock(&q->mu);
        return;
    }
    q->epoch++;
    qp = new_qp(q, new_pod);
    if (move_to_active(q, qp, EV_UNSCHEDULED_POD_UPDATE)) pthread_cond_broadcast(&q->cv);
    else if (qp->where == KS_Q_NONE) ks_queued_pod_free(qp);
    pthread_mutex_unlock(&q->mu);
}

void ks_queue_delete(ks_queue *q, const ks_pod *pod) {
    pthread_mutex_lock(&q->mu);
    q->epoch++;
    ks_queue_delete_nominated(q, pod);
    ks_queued_pod *qp = find(q, pod->key);
    if (qp) {
        detach(q, qp);
        ks_queued_pod_free(qp);
    }
    pthread_mutex_unlock(&q->mu);
}

/* A popped pod is in flight: count the attempt, remember which events
 * arrive while it is being scheduled, clear the last attempt's rejectors. */
static void start_in_flight(ks_queue *q, ks_queued_pod *qp) {
    qp->attempts++;
    KS_GROW(q->inflight, q->inflight_cap, q->ninflight + 1);
    q->inflight[q->ninflight++] = (in_flight){.key = qp->pod->key, .start_seq = q->next_seq};
    q->cycle++;
    memset(&qp->unschedulable_plugins, 0, sizeof(qp->unschedulable_plugins));
    memset(&qp->pending_plugins, 0, sizeof(qp->pending_plugins));
    qp->extender_rejected = false;
    qp->gating_plugin = -1;
    qp->mutation_epoch = q->epoch;
}

ks_queued_pod *ks_queue_pop(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    ks_queued_pod *qp = NULL;
    if (q->closed) {
        /* nothing from a closed queue */
    } else if (q->active.n) {
        qp = heap_remove(q, &q->active, 0);
    } else if (q->backoff.n) {
        /* With activeQ empty, the pods waiting out a backoff go now rather
         * than leave the scheduler idle (SchedulerPopFromBackoffQ). */
        qp = heap_remove(q, &q->backoff, 0);
        count_incoming(q->incoming, "active", EV_POP_FROM_BACKOFF);
    }
    if (qp) {
        qp->where = KS_Q_NONE;
        ks_map_del(&q->all, qp->pod->key + 1);
        start_in_flight(q, qp);
    }
    pthread_mutex_unlock(&q->mu);
    return qp;
}

bool ks_queue_wait(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    while (!q->closed && !q->active.n && !q->backoff.n) pthread_cond_wait(&q->cv, &q->mu);
    bool open = !q->closed;
    pthread_mutex_unlock(&q->mu);
    return open;
}

ks_queued_pod *ks_queue_pop_pod(ks_queue *q, uint64_t pod_key) {
    pthread_mutex_lock(&q->mu);
    ks_queued_pod *qp = find(q, pod_key);
    if (qp) {
        detach(q, qp);
        start_in_flight(q, qp);
    }
    pthread_mutex_unlock(&q->mu);
    return qp;
}

void ks_queue_done(ks_queue *q, uint64_t pod_key) {
    pthread_mutex_lock(&q->mu);
    done_locked(q, pod_key);
    pthread_mutex_unlock(&q->mu);
}

int64_t ks_queue_scheduling_cycle(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    int64_t c = q->cycle;
    pthread_mutex_unlock(&q->mu);
    return c;
}

/* upstream determineSchedulingHintForInFlightPod. */
static strategy hint_for_in_flight(ks_queue *q, ks_queued_pod *qp) {
    if (ks_plugin_mask_empty(&qp->unschedulable_plugins) && ks_plugin_mask_empty(&qp->pending_plugins) &&
        !qp->extender_rejected)
        return STRAT_AFTER_BACKOFF;
    in_flight *f = inflight_find(q, qp->pod->key);
    if (!f) return STRAT_AFTER_BACKOFF;
    bool no_pending = ks_plugin_mask_empty(&qp->pending_plugins);
    strategy st = STRAT_SKIP;
    for (uint32_t i = 0; i < q->nevents; i++) {
        const logged_event *e = &q->events[i];
        if (e->seq < f->start_seq) continue;
        event_objs eo;
        objs_set(&eo, e->kind, e->old_obj, e->new_obj);
        const char *why;
        strategy s1 = worth_requeuing(q, qp, e->ev, e->target, &eo, &why);
        if (s1 == STRAT_SKIP) continue;
        if (st == STRAT_SKIP || s1 == STRAT_IMMEDIATELY) {
            char buf[96];
            note_requeue(qp, ks_event_label(e->ev, buf, sizeof(buf)), why);
        }
        if (s1 == STRAT_IMMEDIATELY) return s1;
        st = STRAT_AFTER_BACKOFF;
        if (no_pending) return st;
    }
    return st;
}

ks_status *ks_queue_add_unschedulable(ks_queue *q, ks_queued_pod *qp) {
    uint64_t key = qp->pod->key;
    pthread_mutex_lock(&q->mu);
    ks_queued_pod *cur = find(q, qp->pod->key);
    if (cur) {
        const char *where = cur->where == KS_Q_UNSCHEDULABLE ? "unschedulable queue"
                            : cur->where == KS_Q_ACTIVE      ? "active queue"
                                                             : "backoff queue";
        char buf[512];
        ks_status *s = ks_status_new(KS_ERROR, "Pod %s is already present in the %s",
                                     ks_pod_fullname(qp->pod, buf, sizeof(buf)), where);
        done_locked(q, qp->pod->key);
        pthread_mutex_unlock(&q->mu);
        ks_queued_pod_free(qp);
        return s;
    }
    if (ks_plugin_mask_empty(&qp->unschedulable_plugins) && ks_plugin_mask_empty(&qp->pending_plugins) &&
        !qp->extender_rejected) {
        qp->consecutive_errors++;
    } else {
        qp->unschedulable_count++;
        qp->consecutive_errors = 0;
    }
    qp->timestamp_ns = stamp(q);
    qp->backoff_computed = false;
    note_requeue(qp, NULL, NULL);
    strategy st = hint_for_in_flight(q, qp);
    ks_qwhere w = requeue(q, qp, st, EV_ATTEMPT_FAILURE);
    if (w != KS_Q_UNSCHEDULABLE) pthread_cond_broadcast(&q->cv);
    if (qp->where == KS_Q_NONE) ks_queued_pod_free(qp); /* could not be queued */
    done_locked(q, key);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

void ks_queue_move_all(ks_queue *q, ks_cluster_event ev, ks_kind kind, const void *old_obj, const void *new_obj,
                       bool (*precheck)(const ks_pod *pod, void *arg), void *arg) {
    pthread_mutex_lock(&q->mu);
    q->epoch++;
    if (!event_of_interest(q, ev)) {
        pthread_mutex_unlock(&q->mu);
        return;
    }
    ks_queued_pod **list = ks_xmalloc((q->nunsched ? q->nunsched : 1) * sizeof(*list));
    size_t n = 0, seen = 0;
    uint64_t k;
    void *v;
    /* The map holds every queued pod (the active ones too): stop once the
     * unschedulable ones are all seen (every bind comes here). */
    for (size_t it = 0; seen < q->nunsched && ks_map_next(&q->all, &it, &k, &v);) {
        ks_queued_pod *qp = v;
        if (qp->where != KS_Q_UNSCHEDULABLE) continue;
        seen++;
        if (precheck && !precheck(qp->pod, arg)) continue;
        list[n++] = qp;
    }
    move_pods(q, list, n, ev, 0, kind, old_obj, new_obj);
    free(list);
    pthread_mutex_unlock(&q->mu);
}

void ks_queue_activate(ks_queue *q, const ks_pod *pod) {
    pthread_mutex_lock(&q->mu);
    q->epoch++;
    ks_queued_pod *qp = find(q, pod->key);
    if (qp && (qp->where == KS_Q_UNSCHEDULABLE || qp->where == KS_Q_BACKOFF ||
               qp->where == KS_Q_ERROR_BACKOFF)) {
        /* Out of backoffQ first: if PreEnqueue now gates it, it parks in
         * the unschedulable map rather than going back. */
        if (qp->where != KS_Q_UNSCHEDULABLE) detach(q, qp);
        note_requeue(qp, EV_FORCE_ACTIVATE, NULL);
        if (move_to_active(q, qp, EV_FORCE_ACTIVATE)) pthread_cond_broadcast(&q->cv);
        else if (qp->where == KS_Q_NONE) ks_queued_pod_free(qp);
    } else if (!qp && inflight_find(q, pod->key)) {
        /* Being scheduled: make sure it comes back when it fails. */
        log_event(q, wildcard_event, pod->key, KS_KIND_POD, NULL, NULL);
    }
    pthread_mutex_unlock(&q->mu);
}

/* ---- timers ------------------------------------------------------------- */

void ks_queue_flush_backoff_completed(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    bool activated = false;
    heap *hs[2] = {&q->backoff, &q->error_backoff};
    for (int i = 0; i < 2; i++) {
        heap *h = hs[i];
        while (h->n && !backing_off(q, h->v[0])) {
            ks_queued_pod *qp = heap_remove(q, h, 0);
            /* detach() bookkeeping without the heap removal done above */
            ks_map_del(&q->all, qp->pod->key + 1);
            qp->where = KS_Q_NONE;
            if (move_to_active(q, qp, EV_BACKOFF_COMPLETE)) activated = true;
            else if (qp->where == KS_Q_NONE) ks_queued_pod_free(qp);
        }
    }
    if (activated) pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void ks_queue_flush_unschedulable_leftover(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    int64_t now = ks_clock_now(q->clock);
    ks_queued_pod **list = ks_xmalloc((q->nunsched ? q->nunsched : 1) * sizeof(*list));
    size_t n = 0;
    uint64_t k;
    void *v;
    size_t seen = 0;
    for (size_t it = 0; seen < q->nunsched && ks_map_next(&q->all, &it, &k, &v);) {
        ks_queued_pod *qp = v;
        if (qp->where != KS_Q_UNSCHEDULABLE) continue;
        seen++;
        if (now - qp->timestamp_ns > q->max_in_unsched) list[n++] = qp;
    }
    if (n) move_pods(q, list, n, wildcard_event, 0, KS_KIND_POD, NULL, NULL);
    free(list);
    pthread_mutex_unlock(&q->mu);
}

int64_t ks_queue_next_backoff_expiry(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    int64_t t = INT64_MAX;
    if (q->backoff.n) t = backoff_time(q, q->backoff.v[0]);
    if (q->error_backoff.n) {
        int64_t e = backoff_time(q, q->error_backoff.v[0]);
        if (e < t) t = e;
    }
    pthread_mutex_unlock(&q->mu);
    /* A pod stops backing off once the aligned now passes its expiry. */
    return t == INT64_MAX || t == INT64_MIN ? t : t + BACKOFF_WINDOW_NS;
}

/* ---- introspection -------------------------------------------------------- */

void ks_queue_stats_get(ks_queue *q, ks_queue_stats *out) {
    pthread_mutex_lock(&q->mu);
    out->active = q->active.n;
    out->backoff = q->backoff.n;
    out->error_backoff = q->error_backoff.n;
    out->unschedulable = q->nunsched;
    out->gated = q->ngated;
    out->in_flight = q->ninflight;
    pthread_mutex_unlock(&q->mu);
}

ks_qwhere ks_queue_where(ks_queue *q, uint64_t pod_key, ks_queued_pod **out) {
    pthread_mutex_lock(&q->mu);
    ks_queued_pod *qp = find(q, pod_key);
    ks_qwhere w = KS_Q_NONE;
    if (out) *out = NULL;
    if (qp) {
        w = qp->where;
        if (out) {
            *out = ks_xmalloc(sizeof(**out));
            **out = *qp;
            ks_pod_ref(qp->pod);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return w;
}

void ks_queue_foreach(ks_queue *q, void (*fn)(void *arg, const ks_queued_pod *qp), void *arg) {
    pthread_mutex_lock(&q->mu);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&q->all, &it, &k, &v);) fn(arg, v);
    pthread_mutex_unlock(&q->mu);
}

bool ks_queue_at_rest(ks_queue *q) {
    pthread_mutex_lock(&q->mu);
    bool rest = q->active.n == 0 && q->backoff.n == 0;
    for (uint32_t i = 0; rest && i < q->error_backoff.n; i++)
        if (q->error_backoff.v[i]->mutation_epoch != q->epoch) rest = false;
    pthread_mutex_unlock(&q->mu);
    return rest;
}
