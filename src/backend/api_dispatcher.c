#include "backend/api_dispatcher.h"
#include "api/pod.h"
#include "framework/status.h"
#include "metrics/sched_metrics.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Calls that never merge (events) get a key of their own, above any pod
 * key. */
#define OWN_KEY_BASE (1ULL << 63)

typedef struct call {
    ks_api_call *ac; /* owned (ks_api_call_clone) */
    const ks_call_rules *rules;
    uint64_t key;
    uint64_t id;
    ks_call_done_fn done;
    void *arg;
    /* Claimed by whoever calls done: the worker that ran the call, or
     * closing when it gives up on a call in flight. */
    atomic_bool done_called;
    bool in_flight;
    bool abandoned; /* closing gave up on it while in flight */
    /* A deletion runs the status patch it displaced first: upstream's
     * preemption patches a victim's DisruptionTarget condition and then
     * deletes it, outside the dispatcher, so neither call is dropped. */
    struct call *before;
    bool first; /* a deletion to run before the other deletions queued */
    /* Started by the caller's thread straight on the client (try_direct) */
    ks_api_dispatcher *d;
    int64_t start_ns;
} call;

typedef struct worker {
    ks_api_dispatcher *d;
    pthread_t thread;
    bool exited;
    bool evictions; /* runs deletions only (see ks_api_dispatcher_start) */
} worker;

typedef struct key_ring {
    uint64_t *v;
    uint32_t head, n, cap;
} key_ring;

struct ks_api_dispatcher {
    pthread_mutex_t mu;
    pthread_cond_t work_cv, evict_cv, idle_cv;
    const ks_cluster_client *backend;
    ks_clock *clock;
    ks_map calls;      /* key + 1 -> the newest call for the key (queued or in flight) */
    ks_map inflight;   /* key + 1 -> the call of the key being executed */
    /* Keys in arrival order, one queue per lane (rules->lane), each key
     * at most once in them and none in flight; popped from the highest
     * lane down (see push_key). */
    key_ring lanes[KS_LANES];
    uint32_t in_flight, max_in_flight;
    uint64_t next_id, next_own;
    uint64_t executed[KS_CALL_TYPES], skipped[KS_CALL_TYPES];
    /* run mode: up to max_workers of each kind (regular, eviction),
     * started when a key is queued while every one is busy */
    worker *workers;   /* 2 * max_workers slots, the started ones first */
    int nworkers;
    int max_workers;
    int started[2];    /* per kind: [0] regular, [1] eviction */
    int busy[2];       /* per kind: running a call */
    int alive;         /* workers that have not exited */
    uint32_t direct;   /* calls started by their callers on the client, not answered yet */
    bool closed;
    bool orphaned;     /* freed while workers were still in abandoned calls */
};

static void free_call(call *c) {
    if (!c) return;
    free_call(c->before);
    ks_api_call_free(c->ac);
    free(c);
}

static bool claim_done(call *c) { return !atomic_exchange(&c->done_called, true); }

static void finish(call *c, const ks_status *result) {
    if (c->before) finish(c->before, result);
    if (claim_done(c) && c->done) c->done(c->arg, result);
}

/* ---- queued keys -------------------------------------------------------- */

static void ring_push(key_ring *r, uint64_t key) {
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? r->cap * 2 : 64;
        uint64_t *nv = ks_xmalloc(nc * sizeof(uint64_t));
        for (uint32_t i = 0; i < r->n; i++) nv[i] = r->v[(r->head + i) % r->cap];
        free(r->v);
        r->v = nv;
        r->cap = nc;
        r->head = 0;
    }
    r->v[(r->head + r->n) % r->cap] = key;
    r->n++;
}

static void ring_push_front(key_ring *r, uint64_t key) {
    ring_push(r, key); /* grows the ring when full; the copy at the tail is dropped */
    r->n--;
    r->head = (r->head + r->cap - 1) % r->cap;
    r->v[r->head] = key;
    r->n++;
}

static uint64_t ring_pop(key_ring *r) {
    uint64_t k = r->v[r->head];
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return k;
}

static void ring_remove(key_ring *r, uint64_t key) {
    uint32_t w = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        uint64_t k = r->v[(r->head + i) % r->cap];
        if (k != key) r->v[(r->head + w++) % r->cap] = k;
    }
    r->n = w;
}

static uint32_t queued(const ks_api_dispatcher *d) {
    uint32_t n = 0;
    for (int l = 0; l < KS_LANES; l++) n += d->lanes[l].n;
    return n;
}

/* What a worker may pop: an eviction worker only deletions. */
static uint32_t poppable(const ks_api_dispatcher *d, bool evictions) {
    return evictions ? d->lanes[KS_LANE_EVICTION].n : queued(d);
}

/* Deletions are preemption's evictions: upstream makes them from the
 * preemption goroutine, outside its dispatcher, so they never wait behind
 * status patches and events. Here they have a lane of their own, popped
 * before those: the preemptor is gated until they are answered, and
 * behind a queue thousands of calls deep (1000 preemptions decided in two
 * seconds) its last victim waited for seconds, while the pod was retried
 * in vain. A preemption's last victim goes first (c->first).
 *
 * Bindings have the lane above: upstream binds from the binding cycle's
 * goroutine, so a binding never waits behind another pod's call. Behind
 * the deletions, the first preemptor whose victims were gone waited for
 * the evictions of every later preemptor (PreemptionBasic through
 * kube-apiserver: 1000 preemptors, 6000 victim calls, nothing bound for
 * 37-57 s; docs/performance.md); behind the events (which upstream sends
 * outside its dispatcher) and status patches of thousands of failed
 * attempts, tens of seconds too. */
static void push_key(ks_api_dispatcher *d, uint64_t key, const call *c) {
    key_ring *r = &d->lanes[c->rules->lane];
    if (c->first) ring_push_front(r, key);
    else ring_push(r, key);
}

static void remove_key(ks_api_dispatcher *d, uint64_t key) {
    for (int l = 0; l < KS_LANES; l++) ring_remove(&d->lanes[l], key);
}

static uint64_t pop_key(ks_api_dispatcher *d, bool evictions) {
    int l = evictions ? KS_LANE_EVICTION : KS_LANES - 1;
    while (!d->lanes[l].n) l--;
    return ring_pop(&d->lanes[l]);
}

static void *worker_main(void *arg);
static void destroy(ks_api_dispatcher *d);

/* One more worker of a kind, when more keys wait than workers of that
 * kind are free and the kind is below its cap (lock held). */
static void spawn_worker(ks_api_dispatcher *d, bool evictions) {
    int k = evictions;
    if (d->closed || d->started[k] >= d->max_workers || (int)poppable(d, evictions) <= d->started[k] - d->busy[k])
        return;
    worker *w = &d->workers[d->nworkers];
    *w = (worker){.d = d, .evictions = evictions};
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) return;
    d->nworkers++;
    d->started[k]++;
    d->alive++;
}

/* A key was queued: a worker, and an eviction worker for a deletion;
 * started when none is idle (the threads a run holds are as many as
 * calls were ever in flight at once, up to the caps: an idle cluster
 * holds none, SchedulingBasic through kube-apiserver all 16 binders'
 * worth). */
static void wake(ks_api_dispatcher *d, const call *c) {
    spawn_worker(d, false);
    pthread_cond_signal(&d->work_cv);
    if (c->rules->lane == KS_LANE_EVICTION) {
        spawn_worker(d, true);
        pthread_cond_signal(&d->evict_cv);
    }
}

/* ---- adding ------------------------------------------------------------- */

typedef struct deferred {
    call *c;
    ks_status *result; /* owned */
} deferred;

static ks_status *closed_status(void) { return ks_status_new(KS_ERROR, "API dispatcher closed"); }

/* upstream callQueue.add (merge, then enqueue). Returns the Skip status
 * of the new call when it is skipped at once. */
static ks_status *add_call(ks_api_dispatcher *d, call *c) {
    deferred later[2];
    int nlater = 0;
    ks_status *ret = NULL;
    pthread_mutex_lock(&d->mu);
    if (d->closed) {
        pthread_mutex_unlock(&d->mu);
        ks_status *st = closed_status();
        finish(c, st);
        ks_status_free(st);
        free_call(c);
        return NULL;
    }
    c->id = d->next_id++;
    call *old = ks_map_get(&d->calls, c->key + 1);
    bool old_in_flight = old && old->in_flight;
    if (old) {
        if (c->rules->relevance < old->rules->relevance) {
            d->skipped[c->ac->type]++;
            pthread_mutex_unlock(&d->mu);
            ret = ks_status_new(KS_SKIP, "a more relevant call is already enqueued for this object: call skipped");
            finish(c, ret);
            free_call(c);
            return ret;
        }
        if (old->ac->type == c->ac->type && c->rules->merge) c->rules->merge(c->ac, old->ac);
        bool keep = c->rules->keeps_displaced & KS_CALL_BIT(old->ac->type);
        if (c->rules->keeps_displaced && !old_in_flight && (keep || old->before)) {
            /* Keep the displaced call (or the one a displaced call kept)
             * to run before this one. */
            if (keep) {
                c->before = old;
                old = NULL;
            } else {
                c->before = old->before;
                old->before = NULL;
            }
        }
    }
    if (old) {
        const char *why = old->ac->type != c->ac->type
                              ? "a more relevant call was enqueued for this object: call overwritten"
                              : "a call of the same type was enqueued for this object: call overwritten";
        /* A call in flight reports its own result when it ends. */
        if (!old_in_flight) later[nlater++] = (deferred){old, ks_status_new(KS_SKIP, "%s", why)};
        d->skipped[old->ac->type]++;
    }
    /* A call that changes nothing is dropped, unless a call for the pod is
     * in flight (its outcome may make this one needed). */
    bool key_in_flight = ks_map_get(&d->inflight, c->key + 1) != NULL;
    if (c->rules->is_noop && c->rules->is_noop(c->ac) && !key_in_flight) {
        if (ks_map_get(&d->calls, c->key + 1)) {
            ks_map_del(&d->calls, c->key + 1);
            remove_key(d, c->key);
        }
        d->skipped[c->ac->type]++;
        ret = ks_status_new(KS_SKIP, "call does not need to be executed because it has no effect: call skipped");
        later[nlater++] = (deferred){c, ks_status_clone(ret)};
    } else {
        bool had = ks_map_put(&d->calls, c->key + 1, c) != NULL;
        /* A key already queued keeps its place (a deletion or a binding
         * moves it to its own lane: rules->requeues); a key in flight goes back to a
         * queue when its call ends (never queued twice: two calls for one
         * pod must not run at once). */
        if (c->rules->requeues && had && !key_in_flight) remove_key(d, c->key);
        if (!key_in_flight && (!had || c->rules->requeues)) {
            push_key(d, c->key, c);
            wake(d, c);
        }
    }
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < nlater; i++) {
        finish(later[i].c, later[i].result);
        ks_status_free(later[i].result);
        free_call(later[i].c);
    }
    return ret;
}

/* A copy of ac; an own key for calls that never merge. */
static call *new_call(ks_api_dispatcher *d, const ks_api_call *ac, bool first, ks_call_done_fn done, void *arg) {
    call *c = ks_xcalloc(1, sizeof(*c));
    c->ac = ks_api_call_clone(ac);
    c->rules = ks_api_call_rules(ac);
    c->done = done;
    c->arg = arg;
    c->first = first;
    if (c->rules->relevance) {
        c->key = ac->pod ? ac->pod->key : 0;
    } else {
        pthread_mutex_lock(&d->mu);
        c->key = OWN_KEY_BASE | d->next_own++;
        pthread_mutex_unlock(&d->mu);
    }
    return c;
}

static ks_status *add(ks_api_dispatcher *d, const ks_api_call *ac, bool first, ks_call_done_fn done, void *arg) {
    return add_call(d, new_call(d, ac, first, done, arg));
}

ks_status *ks_api_dispatcher_add(ks_api_dispatcher *d, const ks_api_call *ac, ks_call_done_fn done, void *arg) {
    return add(d, ac, false, done, arg);
}

ks_status *ks_api_dispatcher_patch_status(ks_api_dispatcher *d, const ks_pod *pod,
                                          const ks_status_patch *patch, ks_call_done_fn done,
                                          void *arg) {
    ks_api_call ac = {.type = KS_CALL_STATUS_PATCH, .pod = pod, .patch = patch};
    return add(d, &ac, false, done, arg);
}

ks_status *ks_api_dispatcher_bind(ks_api_dispatcher *d, const ks_pod *pod, const char *node,
                                  ks_call_done_fn done, void *arg) {
    ks_api_call ac = {.type = KS_CALL_BINDING, .pod = pod, .node = node};
    return add(d, &ac, false, done, arg);
}

ks_status *ks_api_dispatcher_delete(ks_api_dispatcher *d, const ks_pod *pod,
                                    ks_call_done_fn done, void *arg) {
    ks_api_call ac = {.type = KS_CALL_DELETE, .pod = pod};
    return add(d, &ac, false, done, arg);
}

ks_status *ks_api_dispatcher_delete_first(ks_api_dispatcher *d, const ks_pod *pod,
                                          ks_call_done_fn done, void *arg) {
    ks_api_call ac = {.type = KS_CALL_DELETE, .pod = pod};
    return add(d, &ac, true, done, arg);
}

static void drop_result(void *arg, ks_status *result) { ks_status_free(result); }

void ks_api_dispatcher_event(ks_api_dispatcher *d, const ks_pod *regarding, const ks_pod *related,
                             const char *type, const char *reason, const char *action,
                             const char *note) {
    ks_event_record ev = {.regarding = regarding, .related = related, .type = type, .reason = reason,
                          .action = action, .note = note, .time_ns = ks_clock_now(d->clock)};
    ks_api_call ac = {.type = KS_CALL_EVENT, .pod = regarding, .event = &ev};
    /* Run mode, a client that takes events without blocking (the kube
     * client hands them to its event recorder's queue): from here, with
     * no copy and no worker woken per event. Events never merge, so the
     * queue adds nothing but a thread hand-off. */
    const ks_cluster_client *b = d->backend;
    if (b->execute_async && (b->starts & b->executes & KS_CALL_BIT(KS_CALL_EVENT))) {
        pthread_mutex_lock(&d->mu);
        bool direct = d->max_workers > 0 && !d->closed;
        if (direct) d->executed[KS_CALL_EVENT]++;
        pthread_mutex_unlock(&d->mu);
        if (direct) {
            b->execute_async(b->ctx, &ac, drop_result, NULL);
            return;
        }
    }
    ks_status_free(add(d, &ac, false, NULL, NULL));
}

/* ---- executing ---------------------------------------------------------- */

static ks_status *execute_call(ks_api_dispatcher *d, const call *c) {
    const ks_cluster_client *b = d->backend;
    if (c->rules->trace) c->rules->trace(c->ac);
    /* A type the client does not make: nothing to write a status or an
     * event to; bindings and deletions cannot be assumed (rules->unmade). */
    if (!(b->executes & KS_CALL_BIT(c->ac->type)))
        return c->rules->unmade ? ks_status_new(KS_ERROR, "%s", c->rules->unmade) : NULL;
    ks_status *r = b->execute(b->ctx, c->ac);
    if (c->rules->forget) {
        ks_status_free(r);
        return NULL;
    }
    return r;
}

/* The call, counted and timed as upstream's dispatcher does its API
 * calls (events are not among them: upstream sends them elsewhere). */
static void observe(const call *c, int64_t t0, const ks_status *r) {
    ks_call_type t = c->ac->type;
    const ks_sched_metrics *sm = ks_sm();
    bool ok = ks_status_is_success(r);
    const char *v[2] = {c->rules->name, ok ? "success" : "error"};
    static ks_metric *_Atomic calls[KS_CALL_TYPES][2], *_Atomic durations[KS_CALL_TYPES][2];
    ks_counter_inc(ks_metric_cached(&calls[t][ok], sm->async_api_call_execution, v));
    ks_histogram_observe(ks_metric_cached(&durations[t][ok], sm->async_api_call_duration, v),
                         (double)(ks_monotonic_ns() - t0) / 1e9);
}

static ks_status *execute(ks_api_dispatcher *d, const call *c) {
    if (c->rules->forget) return execute_call(d, c);
    int64_t t0 = ks_monotonic_ns();
    ks_status *r = execute_call(d, c);
    observe(c, t0, r);
    return r;
}

/* upstream callQueue.pop: the call of the first queued key (a deletion's
 * for an eviction worker), now in flight. Called with the lock held; NULL
 * when nothing is queued. */
static call *pop_locked(ks_api_dispatcher *d, bool evictions) {
    while (poppable(d, evictions)) {
        uint64_t key = pop_key(d, evictions);
        call *c = ks_map_get(&d->calls, key + 1);
        if (!c) continue;
        c->in_flight = true;
        ks_map_put(&d->inflight, key + 1, c);
        if (++d->in_flight > d->max_in_flight) d->max_in_flight = d->in_flight;
        return c;
    }
    return NULL;
}

/* Execute a popped call, then upstream's finalize: a newer call for the
 * same pod that came in meanwhile goes to the back of the queue, and the
 * pod is no longer in flight before its caller hears. A call the caller
 * makes for the pod from its done callback (a binding's failure patches
 * the pod's status) is then queued as any other: were the pod still in
 * flight, it would wait for a finalize that has already run, and so would
 * every later call for the pod (a pod never bound again, seen under the
 * fault proxy). */
static void complete(ks_api_dispatcher *d, call *c, ks_status *result, bool executed, int *busy);

static void run_popped(ks_api_dispatcher *d, call *c, int *busy) {
    if (c->before) {
        ks_status *r = execute(d, c->before);
        pthread_mutex_lock(&d->mu);
        d->executed[c->before->ac->type]++;
        pthread_mutex_unlock(&d->mu);
        finish(c->before, r);
        ks_status_free(r);
    }
    pthread_mutex_lock(&d->mu);
    bool abandoned = c->abandoned;
    pthread_mutex_unlock(&d->mu);
    complete(d, c, abandoned ? NULL : execute(d, c), !abandoned, busy);
}

/* The end of a call in flight (result consumed): run_popped's, or the
 * client's answer to a call started directly (busy NULL, c->d set). */
static void complete(ks_api_dispatcher *d, call *c, ks_status *result, bool executed, int *busy) {
    pthread_mutex_lock(&d->mu);
    if (executed) d->executed[c->ac->type]++;
    call *cur = ks_map_get(&d->calls, c->key + 1);
    if (cur == c) {
        ks_map_del(&d->calls, c->key + 1);
    } else if (cur) {
        push_key(d, c->key, cur);
        wake(d, cur);
    }
    ks_map_del(&d->inflight, c->key + 1);
    pthread_mutex_unlock(&d->mu);
    finish(c, result);
    ks_status_free(result);
    /* Counted in flight until its caller has heard: flushing and closing
     * wait for that. */
    pthread_mutex_lock(&d->mu);
    d->in_flight--;
    if (busy) (*busy)--; /* free from here: a call queued now need not start a worker */
    bool direct = c->d != NULL;
    if (direct) d->direct--;
    /* Freed meanwhile (ks_api_dispatcher_free): the last one out frees it. */
    bool last = direct && d->orphaned && d->alive == 0 && d->direct == 0;
    pthread_cond_broadcast(&d->idle_cv);
    pthread_mutex_unlock(&d->mu);
    free_call(c);
    if (last) destroy(d);
}

/* ---- calls started on the client by their callers --------------------------- */

/* The client's answer to a call try_direct started. */
static void direct_done(void *arg, ks_status *result) {
    call *c = arg;
    if (c->rules->forget) {
        ks_status_free(result);
        result = NULL;
    } else {
        observe(c, c->start_ns, result);
    }
    complete(c->d, c, result, true, NULL);
}

/* Run mode: a binding cycle's binding that no other call for its pod
 * waits behind (none queued, none in flight) goes to the client from the
 * binder's thread, when the client can start it without blocking
 * (execute_async): upstream's binding goroutine makes its call itself.
 * Through a worker it cost two thread hand-offs more per pod (binder ->
 * worker -> client's I/O thread -> worker -> binder), about 50 us of CPU
 * per pod on SchedulingBasic through kube-apiserver (docs/performance.md,
 * fourth pass). It is in flight as any other call: a call for the pod
 * queued meanwhile waits for it, closing gives it the grace period and
 * then abandons it. Takes c (done or freed) when it returns true. */
static bool try_direct(ks_api_dispatcher *d, call *c) {
    const ks_cluster_client *b = d->backend;
    uint32_t bit = KS_CALL_BIT(c->ac->type);
    if (!b->execute_async || !(b->starts & b->executes & bit)) return false;
    pthread_mutex_lock(&d->mu);
    bool ok = d->max_workers > 0 && !d->closed && !ks_map_get(&d->calls, c->key + 1) &&
              !ks_map_get(&d->inflight, c->key + 1);
    if (ok) {
        c->id = d->next_id++;
        c->in_flight = true;
        c->d = d;
        ks_map_put(&d->calls, c->key + 1, c);
        ks_map_put(&d->inflight, c->key + 1, c);
        if (++d->in_flight > d->max_in_flight) d->max_in_flight = d->in_flight;
        d->direct++;
    }
    pthread_mutex_unlock(&d->mu);
    if (!ok) return false;
    if (c->rules->trace) c->rules->trace(c->ac);
    c->start_ns = ks_monotonic_ns();
    b->execute_async(b->ctx, c->ac, direct_done, c);
    return true;
}

/* Pop one call and run it on this thread; false when nothing is queued. */
static bool run_one(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    call *c = d->closed ? NULL : pop_locked(d, false);
    pthread_mutex_unlock(&d->mu);
    if (!c) return false;
    run_popped(d, c, NULL);
    return true;
}

static void destroy(ks_api_dispatcher *d) {
    ks_map_free(&d->calls);
    ks_map_free(&d->inflight);
    for (int l = 0; l < KS_LANES; l++) free(d->lanes[l].v);
    free(d->workers);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work_cv);
    pthread_cond_destroy(&d->evict_cv);
    pthread_cond_destroy(&d->idle_cv);
    free(d);
}

static void *worker_main(void *arg) {
    pthread_setname_np(pthread_self(), "api-dispatch"); /* top -H, pprof's thread label */
    worker *w = arg;
    ks_api_dispatcher *d = w->d;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->closed && poppable(d, w->evictions) == 0)
            pthread_cond_wait(w->evictions ? &d->evict_cv : &d->work_cv, &d->mu);
        if (d->closed) break;
        call *c = pop_locked(d, w->evictions);
        if (!c) continue;
        d->busy[w->evictions]++;
        pthread_mutex_unlock(&d->mu);
        run_popped(d, c, &d->busy[w->evictions]);
        pthread_mutex_lock(&d->mu);
    }
    w->exited = true;
    d->alive--;
    bool last = d->orphaned && d->alive == 0 && d->direct == 0;
    pthread_cond_broadcast(&d->idle_cv);
    pthread_mutex_unlock(&d->mu);
    /* Freed while this worker was in an abandoned call: the last one out
     * frees the rest. */
    if (last) destroy(d);
    return NULL;
}

ks_api_dispatcher *ks_api_dispatcher_new(const ks_cluster_client *b, ks_clock *clock, int workers) {
    ks_api_dispatcher *d = ks_xcalloc(1, sizeof(*d));
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    pthread_cond_init(&d->evict_cv, NULL);
    pthread_cond_init(&d->idle_cv, NULL);
    d->backend = b;
    d->clock = clock ? clock : ks_clock_real();
    ks_api_dispatcher_start(d, workers);
    return d;
}

void ks_api_dispatcher_start(ks_api_dispatcher *d, int workers) {
    if (workers <= 0) return;
    pthread_mutex_lock(&d->mu);
    if (!d->closed && !d->max_workers) {
        /* As many eviction workers again: upstream's preemption deletes
         * its victims from its own goroutines (up to parallelism at once
         * per preemption, preemptions side by side), outside the
         * dispatcher's parallelism. With one set of 16 for everything,
         * PreemptionBasic through a loaded kube-apiserver deleted 60
         * victims/s while the API server used half a core. Threads start
         * with the first calls (spawn_worker). */
        d->workers = ks_xcalloc((size_t)workers * 2, sizeof(*d->workers));
        d->max_workers = workers;
        d->nworkers = 0;
        for (int l = KS_LANES - 1; l >= 0; l--)
            for (uint32_t i = 0; i < d->lanes[l].n; i++) spawn_worker(d, false);
        for (uint32_t i = 0; i < d->lanes[KS_LANE_EVICTION].n; i++) spawn_worker(d, true);
        pthread_cond_broadcast(&d->work_cv);
        pthread_cond_broadcast(&d->evict_cv);
    }
    pthread_mutex_unlock(&d->mu);
}

typedef struct pending_done {
    ks_call_done_fn fn;
    void *arg;
} pending_done;

size_t ks_api_dispatcher_close(ks_api_dispatcher *d, int64_t grace_ns) {
    pthread_mutex_lock(&d->mu);
    if (d->closed) {
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    d->closed = true;
    pthread_cond_broadcast(&d->work_cv);
    pthread_cond_broadcast(&d->evict_cv);
    /* Queued calls are dropped; calls in flight stay (their newer queued
     * call, if any, is dropped). */
    size_t ndrop = 0;
    call **drop = ks_xmalloc((d->calls.len ? d->calls.len : 1) * sizeof(*drop));
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&d->calls, &it, &k, &v);)
        if (!((call *)v)->in_flight) drop[ndrop++] = v;
    for (size_t i = 0; i < ndrop; i++) ks_map_del(&d->calls, drop[i]->key + 1);
    for (int l = 0; l < KS_LANES; l++) d->lanes[l].n = 0;
    /* Calls in flight get the grace period, on the real clock. */
    ks_clock *real = ks_clock_real();
    int64_t deadline = ks_clock_now(real) + grace_ns;
    while (d->in_flight > 0 && (d->alive > 0 || d->direct > 0))
        if (!ks_clock_cond_wait(real, &d->idle_cv, &d->mu, deadline)) break;
    /* Whatever is still in flight is given up on: its waiters hear now. */
    size_t nab = 0, ndone = 0;
    pending_done *dones = ks_xmalloc((d->inflight.len * 2 + 1) * sizeof(*dones));
    for (size_t it = 0; ks_map_next(&d->inflight, &it, &k, &v);) {
        call *c = v;
        c->abandoned = true;
        nab++;
        if (c->before && claim_done(c->before) && c->before->done)
            dones[ndone++] = (pending_done){c->before->done, c->before->arg};
        if (claim_done(c) && c->done) dones[ndone++] = (pending_done){c->done, c->arg};
    }
    pthread_mutex_unlock(&d->mu);

    ks_status *st = closed_status();
    for (size_t i = 0; i < ndrop; i++) {
        finish(drop[i], st);
        free_call(drop[i]);
    }
    free(drop);
    ks_status *ab = ks_status_new(KS_ERROR, "API dispatcher closed while the call was in flight");
    for (size_t i = 0; i < ndone; i++) dones[i].fn(dones[i].arg, ab);
    free(dones);
    ks_status_free(ab);
    ks_status_free(st);
    return nab;
}

void ks_api_dispatcher_free(ks_api_dispatcher *d) {
    if (!d) return;
    ks_api_dispatcher_close(d, KS_API_DISPATCHER_GRACE_NS);
    /* Join the workers that are done; leave the ones still inside an
     * abandoned backend call to free the dispatcher when they return. */
    worker **join = ks_xmalloc((size_t)(d->nworkers ? d->nworkers : 1) * sizeof(*join));
    int njoin = 0;
    pthread_mutex_lock(&d->mu);
    /* Idle workers are on their way out: wait for them. */
    while (d->alive > (int)(d->in_flight - d->direct)) pthread_cond_wait(&d->idle_cv, &d->mu);
    for (int i = 0; i < d->nworkers; i++) {
        if (d->workers[i].exited) join[njoin++] = &d->workers[i];
        else pthread_detach(d->workers[i].thread);
    }
    d->orphaned = d->alive > 0 || d->direct > 0;
    bool orphaned = d->orphaned;
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < njoin; i++) pthread_join(join[i]->thread, NULL);
    free(join);
    if (orphaned) return;
    destroy(d);
}

size_t ks_api_dispatcher_drain(ks_api_dispatcher *d) {
    size_t n = 0;
    while (run_one(d)) n++;
    return n;
}

size_t ks_api_dispatcher_pending(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    size_t n = d->calls.len;
    /* An in-flight call that a newer one replaced in `calls` counts too. */
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&d->inflight, &it, &k, &v);)
        if (ks_map_get(&d->calls, k) != v) n++;
    pthread_mutex_unlock(&d->mu);
    return n;
}

void ks_api_dispatcher_flush(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    while (!d->closed && (d->calls.len || d->in_flight)) pthread_cond_wait(&d->idle_cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

/* A binding cycle waiting for its call: a condition of its own, so that
 * one answer wakes one binder, not every binder waiting on idle_cv. */
typedef struct sync_wait {
    ks_api_dispatcher *d;
    pthread_cond_t cv;
    bool done;
    ks_status *result;
} sync_wait;

static void sync_done(void *arg, const ks_status *result) {
    sync_wait *w = arg;
    ks_status *r = ks_status_clone(result);
    pthread_mutex_lock(&w->d->mu);
    w->result = r;
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->d->mu);
}

static void sync_start(ks_api_dispatcher *d, sync_wait *w, const ks_pod *pod, const char *node) {
    *w = (sync_wait){.d = d};
    pthread_cond_init(&w->cv, NULL);
    ks_api_call ac = {.type = KS_CALL_BINDING, .pod = pod, .node = node};
    call *c = new_call(d, &ac, false, sync_done, w);
    if (!try_direct(d, c)) ks_status_free(add_call(d, c));
}

static bool sync_answered(sync_wait *w) {
    pthread_mutex_lock(&w->d->mu);
    bool done = w->done;
    pthread_mutex_unlock(&w->d->mu);
    return done;
}

static ks_status *sync_result(sync_wait *w) {
    bool done = sync_answered(w);
    pthread_cond_destroy(&w->cv);
    if (!done) return ks_status_new(KS_ERROR, "binding was dropped by the API dispatcher");
    /* A binding overwritten by a deletion did not happen. */
    if (ks_status_code(w->result) == KS_SKIP) w->result->code = KS_ERROR;
    return w->result;
}

ks_status *ks_api_dispatcher_bind_wait(ks_api_dispatcher *d, const ks_pod *pod, const char *node) {
    sync_wait w;
    sync_start(d, &w, pod, node);
    pthread_mutex_lock(&d->mu);
    while (!w.done) pthread_cond_wait(&w.cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
    return sync_result(&w);
}

ks_status *ks_api_dispatcher_bind_drain(ks_api_dispatcher *d, const ks_pod *pod, const char *node) {
    sync_wait w;
    sync_start(d, &w, pod, node);
    while (!sync_answered(&w) && run_one(d)) {
    }
    return sync_result(&w);
}

ks_status *ks_api_dispatcher_execute_now(ks_api_dispatcher *d, const ks_api_call *ac) {
    const ks_cluster_client *b = d->backend;
    const ks_call_rules *rules = ks_api_call_rules(ac);
    if (ac->write && ac->write->written) *ac->write->written = NULL;
    if (rules->is_noop && rules->is_noop(ac)) return NULL;
    if (ac->type >= KS_CALL_TYPES || !(b->executes & KS_CALL_BIT(ac->type)))
        return ks_status_new(KS_SKIP, "the cluster client does not make %s calls", rules->name);
    if (rules->trace) rules->trace(ac);
    ks_status *r = b->execute(b->ctx, ac);
    pthread_mutex_lock(&d->mu);
    d->executed[ac->type] += ks_status_code(r) != KS_SKIP;
    pthread_mutex_unlock(&d->mu);
    return r;
}

uint64_t ks_api_dispatcher_executed(ks_api_dispatcher *d, ks_call_type t) {
    pthread_mutex_lock(&d->mu);
    uint64_t v = t < KS_CALL_TYPES ? d->executed[t] : 0;
    pthread_mutex_unlock(&d->mu);
    return v;
}

uint32_t ks_api_dispatcher_max_in_flight(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    uint32_t v = d->max_in_flight;
    pthread_mutex_unlock(&d->mu);
    return v;
}

int ks_api_dispatcher_threads(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    int n = d->started[0] + d->started[1];
    pthread_mutex_unlock(&d->mu);
    return n;
}
