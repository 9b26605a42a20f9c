/* The scheduler object: profiles, cache, queue and dispatcher wired to a
 * backend (upstream scheduler.go), and the two loops: stepping and real
 * time. The handlers of the backend's watch events are eventhandlers.c. */
#include "api/node.h"
#include "api/pod.h"
#include "backend/listers.h"
#include "framework/plugin_api.h"
#include "framework/status.h"
#include "scheduler/extender.h"
#include "scheduler/scheduler_internal.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#define BACKOFF_FLUSH_PERIOD_NS KS_NS_PER_SEC
#define LEFTOVER_FLUSH_PERIOD_NS (30LL * KS_NS_PER_SEC)
#define ASSUMED_CLEANUP_PERIOD_NS KS_NS_PER_SEC
/* A simulation that keeps going without binding anything (pods that keep
 * requeueing each other, as they would forever in a real cluster) stops
 * after this much simulated time, or this many loop turns. */
#define SIM_IDLE_HORIZON_NS (30LL * 60 * KS_NS_PER_SEC)
#define MAX_SIM_ITERATIONS 10000000ULL

void ks_sched_stat(ks_scheduler *s, uint64_t *field) {
    pthread_mutex_lock(&s->mu);
    (*field)++;
    pthread_mutex_unlock(&s->mu);
}

/* ---- the pod store (what an informer would hold) ----------------------- */

ks_pod *ks_sched_lookup_pod(ks_scheduler *s, uint64_t key) {
    pthread_mutex_lock(&s->pods_mu);
    ks_pod *p = ks_map_get(&s->pods, key + 1);
    if (p) ks_pod_ref(p);
    pthread_mutex_unlock(&s->pods_mu);
    return p;
}

static ks_pod *lookup_for_queue(void *ctx, uint64_t key) { return ks_sched_lookup_pod(ctx, key); }

/* ---- the environment plugins reach through the handle ------------------- */

static ks_status *env_bind(void *ctx, const ks_pod *pod, const char *node) {
    ks_scheduler *s = ctx;
    return ks_api_dispatcher_bind_sync(s->disp, pod, node);
}

static ks_status *env_delete(void *ctx, const ks_pod *pod) {
    ks_scheduler *s = ctx;
    return ks_api_dispatcher_delete(s->disp, pod, NULL, NULL);
}

static void env_delete_async(void *ctx, const ks_pod *pod, bool first,
                             void (*done)(void *arg, const ks_status *st), void *arg) {
    ks_scheduler *s = ctx;
    /* done hears the result, skipped-at-once included */
    ks_status_free(first ? ks_api_dispatcher_delete_first(s->disp, pod, done, arg)
                         : ks_api_dispatcher_delete(s->disp, pod, done, arg));
}

static void env_patch(void *ctx, const ks_pod *pod, const ks_status_patch *patch) {
    ks_scheduler *s = ctx;
    ks_status_free(ks_api_dispatcher_patch_status(s->disp, pod, patch, NULL, NULL));
}

static void env_event(void *ctx, const ks_pod *regarding, const ks_pod *related, const char *type,
                      const char *reason, const char *action, const char *note) {
    ks_scheduler *s = ctx;
    ks_api_dispatcher_event(s->disp, regarding, related, type, reason, action, note);
}

static ks_status *env_api_call(void *ctx, const ks_api_call *call) {
    ks_scheduler *s = ctx;
    return ks_api_dispatcher_execute_now(s->disp, call);
}

static ks_status *env_preempt_extenders(void *ctx, const ks_pod *pod, const ks_snapshot *snap, ks_candidates *cands) {
    ks_scheduler *s = ctx;
    return ks_extenders_process_preemption(s->exts, s->nexts, pod, snap, cands);
}

/* ---- object views -----------------------------------------------------------
 *
 * Watch threads change the listers while cycles run; each thread that runs
 * plugins pins a view first (the scheduling cycle, a binding cycle, a
 * watch event's PreEnqueue, a timer pass) and plugins read the view pinned
 * on their thread. The Filter and Score workers of the parallelizer run
 * inside the scheduling cycle and read the view it pinned (cycle_view). */

static _Thread_local const ks_objects *tls_view;
static _Thread_local int tls_view_depth;
static _Thread_local uint64_t tls_view_token;

void ks_sched_view_enter(ks_scheduler *s) {
    if (tls_view_depth++ > 0) return;
    tls_view = ks_listers_pin(s->listers, &tls_view_token);
}

void ks_sched_view_exit(ks_scheduler *s) {
    if (--tls_view_depth > 0) return;
    ks_listers_unpin(s->listers, tls_view_token);
    tls_view = NULL;
}

void ks_sched_cycle_view_set(ks_scheduler *s, bool on) {
    atomic_store_explicit(&s->cycle_view, on ? tls_view : NULL, memory_order_release);
}

static const ks_objects *env_objects(void *ctx) {
    ks_scheduler *s = ctx;
    if (tls_view) return tls_view;
    return atomic_load_explicit(&s->cycle_view, memory_order_acquire);
}

static void env_activate(void *ctx, const ks_pod *pod) {
    ks_scheduler *s = ctx;
    ks_queue_activate(s->queue, pod);
}

static size_t env_nominated(void *ctx, ks_id node, ks_pod **out, size_t max) {
    ks_scheduler *s = ctx;
    return ks_queue_nominated_pods(s->queue, node, out, max);
}

static size_t env_list_pods(void *ctx, ks_id ns, ks_id key, ks_id value, const ks_pod **out, size_t max) {
    ks_scheduler *s = ctx;
    size_t n = 0;
    pthread_mutex_lock(&s->pods_mu);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&s->pods, &it, &k, &v);) {
        const ks_pod *p = v;
        if (!ks_pod_matches(p, ns, key, value)) continue;
        if (n < max) out[n] = ks_pod_ref((ks_pod *)p);
        n++;
    }
    pthread_mutex_unlock(&s->pods_mu);
    return n;
}

static int64_t env_now(void *ctx) { return ks_clock_now(((ks_scheduler *)ctx)->clock); }

static size_t env_nominated_count(void *ctx, ks_id node) {
    ks_scheduler *s = ctx;
    return ks_queue_nominated_count(s->queue, node);
}

static ks_pod *env_lookup_pod(void *ctx, uint64_t key) { return ks_sched_lookup_pod(ctx, key); }

static bool env_responsible(void *ctx, const ks_pod *pod) {
    return ks_sched_framework_for(ctx, pod->scheduler_name) != NULL;
}

static ks_id env_nominated_node(void *ctx, const ks_pod *pod) {
    ks_scheduler *s = ctx;
    return ks_queue_nominated_node(s->queue, pod->key);
}

/* ---- creation ------------------------------------------------------------- */

ks_scheduler *ks_scheduler_new(const ks_scheduler_options *o, char **err) {
    if (err) *err = NULL;
    if (!o->config || !o->backend) {
        if (err) *err = ks_xstrdup("a scheduler needs a configuration and a backend");
        return NULL;
    }
    ks_scheduler *s = ks_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->pods_mu, NULL);
    pthread_mutex_init(&s->bind_mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->cfg = o->config;
    s->reg = o->registry ? o->registry : ks_default_registry();
    s->backend = o->backend;
    s->clock = o->clock ? o->clock : ks_clock_real();
    s->obs = o->observer;
    s->parked_tail = &s->parked;
    s->last_leftover_flush = ks_clock_now(s->clock);
    s->last_progress = s->last_leftover_flush;

    int par = o->parallelism > 0 ? o->parallelism : s->cfg->parallelism;
    s->par = ks_parallelizer_new(par > 0 ? par : KS_DEFAULT_PARALLELISM);
    s->waiting = ks_waiting_pods_new(s->clock);
    s->snap = ks_snapshot_new();
    s->nexts = s->cfg->nextenders;
    s->exts = ks_xcalloc(s->nexts ? s->nexts : 1, sizeof(*s->exts));
    for (size_t i = 0; i < s->nexts; i++) s->exts[i] = ks_extender_new(&s->cfg->extenders[i]);
    s->cache = ks_cache_new(s->clock, 0);
    s->listers = ks_listers_new();

    ks_framework_env env = {.ctx = s,
                            .bind = env_bind,
                            .delete_pod = env_delete,
                            .delete_pod_async = env_delete_async,
                            .patch_status = env_patch,
                            .event = env_event,
                            .objects = env_objects,
                            .activate = env_activate,
                            .nominated_pods = env_nominated,
                            .nominated_count = env_nominated_count,
                            .nominated_node = env_nominated_node,
                            .lookup_pod = env_lookup_pod,
                            .responsible = env_responsible,
                            .list_pods = env_list_pods,
                            .now = env_now,
                            .api_call = env_api_call,
                            .api_calls = s->backend->executes};
    /* Without a preemptVerb preemption never reaches the extenders. */
    if (ks_extenders_support_preemption(s->exts, s->nexts)) env.preempt_extenders = env_preempt_extenders;
    s->fws = ks_xcalloc(s->cfg->nprofiles ? s->cfg->nprofiles : 1, sizeof(*s->fws));
    for (uint32_t i = 0; i < s->cfg->nprofiles; i++) {
        ks_framework_options fo = {.parallelism = 1, .seed = o->seed, .deterministic = o->deterministic};
        ks_framework *fw = ks_framework_new(s->reg, &s->cfg->profiles[i], &fo, err);
        if (!fw) {
            ks_scheduler_free(s);
            return NULL;
        }
        ks_framework_share(fw, s->waiting, s->par);
        ks_framework_set_env(fw, &env);
        ks_framework_set_snapshot(fw, s->snap);
        s->fws[s->nfws++] = fw;
    }
    if (s->nfws == 0) {
        if (err) *err = ks_xstrdup("the configuration has no profile");
        ks_scheduler_free(s);
        return NULL;
    }

    ks_queue_options qo = {.clock = s->clock,
                           .initial_backoff_ns = s->cfg->pod_initial_backoff_seconds * KS_NS_PER_SEC,
                           .max_backoff_ns = s->cfg->pod_max_backoff_seconds * KS_NS_PER_SEC,
                           .max_in_unschedulable_ns = s->cfg->pod_max_in_unschedulable_ns,
                           .frameworks = s->fws,
                           .nframeworks = s->nfws,
                           .lookup_pod = lookup_for_queue,
                           .ctx = s};
    s->queue = ks_queue_new(&qo);
    /* No worker yet: the stepping loop drains it; ks_scheduler_run
     * starts the workers. */
    s->disp = ks_api_dispatcher_new(s->backend, s->clock, 0);
    ks_sched_metrics_attach(s);
    return s;
}

/* How long a stopping scheduler lets binding cycles in progress finish
 * (real time) before their API calls are given up on. */
#define SHUTDOWN_GRACE_NS (5LL * KS_NS_PER_SEC)

void ks_scheduler_free(ks_scheduler *s) {
    if (!s) return;
    ks_sched_metrics_detach(s);
    ks_scheduler_stop(s);
    if (s->backend && s->backend->stop && s->started) s->backend->stop(s->backend->ctx);
    /* Pods waiting on Permit stay where they are: their parked binding
     * cycles are dropped below. Binding cycles under way may finish their
     * API calls for a while; then the dispatcher gives up on the calls
     * still in flight, which ends the cycles waiting on them. */
    if (s->waiting) {
        ks_waiting_pods_set_notify(s->waiting, NULL, NULL);
        ks_waiting_pods_reject_all(s->waiting, "scheduler stopped");
    }
    if (s->binders) ks_taskpool_wait_idle(s->binders, ks_clock_now(ks_clock_real()) + SHUTDOWN_GRACE_NS);
    if (s->disp) ks_api_dispatcher_close(s->disp, SHUTDOWN_GRACE_NS);
    ks_taskpool_free(s->binders);
    while (s->parked) {
        binding_cycle *bc = s->parked;
        s->parked = bc->next;
        ks_sched_free_binding_cycle(bc);
    }
    ks_api_dispatcher_free(s->disp);
    ks_queue_free(s->queue);
    for (size_t i = 0; i < s->nfws; i++) ks_framework_free(s->fws[i]);
    free(s->fws);
    ks_cache_free(s->cache);
    ks_listers_free(s->listers);
    ks_snapshot_free(s->snap);
    for (size_t i = 0; i < s->nexts; i++) ks_extender_free(s->exts[i]);
    free(s->exts);
    ks_waiting_pods_free(s->waiting);
    ks_parallelizer_free(s->par);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&s->pods, &it, &k, &v);) ks_pod_unref(v);
    ks_map_free(&s->pods);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->pods_mu);
    pthread_mutex_destroy(&s->bind_mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

ks_status *ks_scheduler_start(ks_scheduler *s) {
    if (s->started) return NULL;
    s->started = true;
    if (!s->backend->start) return ks_status_new(KS_ERROR, "the backend cannot list and watch");
    return s->backend->start(s->backend->ctx, ks_sched_on_watch, s);
}

/* ---- the stepping loop ---------------------------------------------------- */

/* Steps that may run plugins outside a cycle (done callbacks,
 * Permit waits ending) read the objects as they are now. */
static void drain(ks_scheduler *s) {
    ks_sched_view_enter(s);
    ks_api_dispatcher_drain(s->disp);
    ks_sched_view_exit(s);
}

static size_t ready_bindings(ks_scheduler *s) {
    ks_sched_view_enter(s);
    size_t n = ks_sched_run_ready_bindings(s);
    ks_sched_view_exit(s);
    return n;
}

bool ks_scheduler_attempt_one(ks_scheduler *s) { return ks_sched_schedule_one(s, false); }
void ks_scheduler_view_enter(ks_scheduler *s) { ks_sched_view_enter(s); }
void ks_scheduler_view_exit(ks_scheduler *s) { ks_sched_view_exit(s); }

bool ks_scheduler_schedule_one(ks_scheduler *s) {
    drain(s);
    ready_bindings(s);
    bool did = ks_sched_schedule_one(s, false);
    drain(s);
    return did;
}

static void fire_timers_now(ks_scheduler *s);

/* Fire the timers due now. */
static void fire_timers(ks_scheduler *s) {
    ks_sched_view_enter(s); /* expiring waits and flushes run plugins */
    fire_timers_now(s);
    ks_sched_view_exit(s);
}

static void fire_timers_now(ks_scheduler *s) {
    int64_t now = ks_clock_now(s->clock);
    ks_cache_cleanup_assumed(s->cache, now);
    ks_waiting_pods_expire(s->waiting, now);
    ks_queue_flush_backoff_completed(s->queue);
    if (now - s->last_leftover_flush >= LEFTOVER_FLUSH_PERIOD_NS) {
        ks_queue_flush_unschedulable_leftover(s->queue);
        s->last_leftover_flush = now;
    }
}

/* How many attempts in a row may bind nothing before a simulation gives
 * up: every queued pod gets many tries (pods requeued by events retry in
 * the same instant), and a small cluster still gets a fair number. */
static uint64_t futile_attempt_limit(ks_scheduler *s) {
    ks_queue_stats q;
    ks_queue_stats_get(s->queue, &q);
    uint64_t pods = q.active + q.backoff + q.error_backoff + q.unschedulable + q.in_flight;
    return 10000 + 100 * pods;
}

/* Where a stepping loop stands: attempts made, and how many in a row bound
 * nothing since the bound count was last seen to move. */
typedef struct step_state {
    size_t attempts;
    uint64_t bound_mark, futile;
} step_state;

enum step { STEP_WORKED, STEP_FUTILE, STEP_IDLE };

static step_state step_start(ks_scheduler *s) {
    ks_scheduler_stats st;
    ks_scheduler_stats_get(s, &st);
    return (step_state){0, st.bound, 0};
}

/* One step of both stepping loops: a ready binding, an attempt or an API
 * call. STEP_FUTILE when a long run of attempts bound nothing (pods
 * requeueing each other with no time passing); STEP_IDLE when nothing is
 * runnable without a timer. */
static enum step step_once(ks_scheduler *s, step_state *ss) {
    drain(s);
    if (ready_bindings(s)) return STEP_WORKED;
    if (ks_sched_schedule_one(s, false)) {
        ss->attempts++;
        ks_scheduler_stats st;
        ks_scheduler_stats_get(s, &st);
        if (st.bound != ss->bound_mark) {
            ss->bound_mark = st.bound;
            ss->futile = 0;
        } else if (++ss->futile > futile_attempt_limit(s)) {
            return STEP_FUTILE;
        }
        return STEP_WORKED;
    }
    if (ks_api_dispatcher_pending(s->disp)) return STEP_WORKED;
    return STEP_IDLE;
}

/* The next backoff expiry or Permit timeout, INT64_MAX if none. */
static int64_t next_timer(ks_scheduler *s) {
    int64_t next = ks_queue_next_backoff_expiry(s->queue);
    int64_t w = ks_waiting_pods_next_deadline(s->waiting);
    return w < next ? w : next;
}

size_t ks_scheduler_run_until_idle(ks_scheduler *s) {
    s->last_progress = ks_clock_now(s->clock);
    step_state ss = step_start(s);
    for (uint64_t iter = 0; iter < MAX_SIM_ITERATIONS; iter++) {
        enum step r = step_once(s, &ss);
        if (r == STEP_WORKED) continue;
        if (r == STEP_FUTILE) {
            ks_infof(1, "simulation: %llu attempts in a row bound nothing, stopping", (unsigned long long)ss.futile);
            break;
        }
        /* Nothing runnable now. */
        bool waiting = ks_waiting_pods_count(s->waiting) > 0;
        if (!waiting && ks_queue_at_rest(s->queue)) break;
        int64_t next = next_timer(s);
        if (next == INT64_MAX) break;
        if (next - s->last_progress > SIM_IDLE_HORIZON_NS) {
            ks_infof(1, "simulation: nothing bound for %lld s of simulated time, stopping",
                     (long long)(SIM_IDLE_HORIZON_NS / KS_NS_PER_SEC));
            break;
        }
        /* A simulated clock jumps to the next timer. */
        ks_clock_wait_until(s->clock, next);
        fire_timers(s);
    }
    drain(s);
    return ss.attempts;
}

/* The replay's loop: like run_until_idle, but time is the caller's. Pods
 * that cannot schedule wait in the queue; the clock moves from timer to
 * timer (backoff expiry, Permit waits, and the leftover flush every 30 s
 * while unschedulable pods wait, as upstream's timer does) up to deadline,
 * where it stays. */
size_t ks_scheduler_run_until(ks_scheduler *s, int64_t deadline) {
    step_state ss = step_start(s);
    uint64_t stalled = 0;
    for (uint64_t iter = 0; iter < MAX_SIM_ITERATIONS; iter++) {
        enum step r = step_once(s, &ss);
        if (r == STEP_WORKED) continue;
        if (r == STEP_FUTILE) {
            /* pods requeueing each other at one instant: let time move */
            ks_infof(1, "replay: %llu attempts in a row bound nothing, moving on", (unsigned long long)ss.futile);
            break;
        }
        int64_t next = next_timer(s);
        ks_queue_stats q;
        ks_queue_stats_get(s->queue, &q);
        if (q.unschedulable > q.gated) {
            int64_t f = s->last_leftover_flush + LEFTOVER_FLUSH_PERIOD_NS;
            if (f < next) next = f;
        }
        if (next > deadline) break;
        int64_t now = ks_clock_now(s->clock);
        if (next <= now) {
            /* timers due now that move nothing must not spin */
            if (++stalled > 1000) break;
            next = now;
        } else {
            stalled = 0;
        }
        ks_clock_wait_until(s->clock, next);
        fire_timers(s);
    }
    drain(s);
    if (ks_clock_now(s->clock) < deadline) ks_clock_wait_until(s->clock, deadline);
    return ss.attempts;
}

/* ---- the real-time loop ------------------------------------------------- */

static void on_permit_decided(void *arg, ks_waiting_pod *w) { ks_sched_submit_ready_bindings(arg); }

static void *timer_thread(void *arg) {
    pthread_setname_np(pthread_self(), "sched-timer"); /* top -H, pprof's thread label */
    ks_scheduler *s = arg;
    int64_t next_backoff = ks_clock_now(s->clock) + BACKOFF_FLUSH_PERIOD_NS;
    int64_t next_leftover = ks_clock_now(s->clock) + LEFTOVER_FLUSH_PERIOD_NS;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        int64_t deadline = next_backoff < next_leftover ? next_backoff : next_leftover;
        /* Permit timeouts: nobody else waits for them (parked binding
         * cycles hold no thread). A new one wakes this thread up. */
        int64_t permit = ks_waiting_pods_next_deadline(s->waiting);
        if (permit < deadline) deadline = permit;
        ks_clock_cond_wait(s->clock, &s->cv, &s->mu, deadline);
        if (s->stopping) break;
        int64_t now = ks_clock_now(s->clock);
        pthread_mutex_unlock(&s->mu);
        ks_sched_view_enter(s); /* moves run PreEnqueue plugins */
        ks_waiting_pods_expire(s->waiting, now);
        if (now >= next_backoff) {
            ks_queue_flush_backoff_completed(s->queue);
            ks_cache_cleanup_assumed(s->cache, now);
            next_backoff = now + BACKOFF_FLUSH_PERIOD_NS;
        }
        if (now >= next_leftover) {
            ks_queue_flush_unschedulable_leftover(s->queue);
            next_leftover = now + LEFTOVER_FLUSH_PERIOD_NS;
        }
        ks_sched_view_exit(s);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

bool ks_scheduler_synced(ks_scheduler *s) {
    return s->started && (!s->backend->synced || s->backend->synced(s->backend->ctx));
}

/* upstream WaitForCacheSync: no cycle before every informer has listed. */
static bool wait_synced(ks_scheduler *s) {
    pthread_mutex_lock(&s->mu);
    while (!s->stopping && !ks_scheduler_synced(s))
        ks_clock_cond_wait(s->clock, &s->cv, &s->mu, ks_clock_now(s->clock) + KS_NS_PER_SEC / 10);
    bool ok = !s->stopping;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

void ks_scheduler_run(ks_scheduler *s) {
    if (!wait_synced(s)) return;
    ks_infof(2, "caches synced, scheduling");
    pthread_mutex_lock(&s->mu);
    bool stop = s->stopping;
    if (!stop && !s->binders) {
        /* Binding cycles and API calls get bounded sets of threads (the
         * dispatcher's as upstream's: parallelism calls at once). */
        int n = ks_parallelizer_parallelism(s->par);
        s->binders = ks_taskpool_new(n);
        ks_api_dispatcher_start(s->disp, n);
        ks_waiting_pods_set_notify(s->waiting, on_permit_decided, s);
        /* Cycles parked before the loop started. */
        ks_sched_submit_ready_bindings(s);
    }
    if (!stop && !s->timer_running && pthread_create(&s->timer, NULL, timer_thread, s) == 0)
        s->timer_running = true;
    pthread_mutex_unlock(&s->mu);
    while (!stop) {
        ks_sched_schedule_one(s, true);
        pthread_mutex_lock(&s->mu);
        stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
    }
}

void ks_scheduler_stop(ks_scheduler *s) {
    pthread_mutex_lock(&s->mu);
    bool was = s->stopping;
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    bool timer = s->timer_running;
    s->timer_running = false;
    pthread_mutex_unlock(&s->mu);
    if (was) return;
    if (s->queue) ks_queue_close(s->queue);
    if (timer) pthread_join(s->timer, NULL);
}

/* The profile whose schedulerName is scheduler_name, or NULL. */
ks_framework *ks_sched_framework_for(ks_scheduler *s, ks_id scheduler_name) {
    for (size_t i = 0; i < s->nfws; i++)
        if (ks_intern(s->fws[i]->profile_name) == scheduler_name) return s->fws[i];
    return NULL;
}

/* ---- accessors ------------------------------------------------------------- */

ks_framework *ks_scheduler_framework(ks_scheduler *s, const char *name) {
    return ks_sched_framework_for(s, ks_intern(name ? name : KS_DEFAULT_SCHEDULER_NAME));
}
size_t ks_scheduler_nframeworks(const ks_scheduler *s) { return s->nfws; }
ks_framework *ks_scheduler_framework_at(ks_scheduler *s, size_t i) { return i < s->nfws ? s->fws[i] : NULL; }
ks_queue *ks_scheduler_queue(ks_scheduler *s) { return s->queue; }
ks_cache *ks_scheduler_cache(ks_scheduler *s) { return s->cache; }
ks_api_dispatcher *ks_scheduler_dispatcher(ks_scheduler *s) { return s->disp; }
ks_clock *ks_scheduler_clock(ks_scheduler *s) { return s->clock; }
const ks_snapshot *ks_scheduler_snapshot(ks_scheduler *s) { return s->snap; }
ks_waiting_pods *ks_scheduler_waiting_pods(ks_scheduler *s) { return s->waiting; }
ks_pod *ks_scheduler_pod(ks_scheduler *s, uint64_t key) { return ks_sched_lookup_pod(s, key); }

void ks_scheduler_stats_get(ks_scheduler *s, ks_scheduler_stats *out) {
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}
