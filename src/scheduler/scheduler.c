/* The scheduler object: profiles, cache, queue and dispatcher wired to a
 * backend (upstream scheduler.go), and its run mode chosen once: the two
 * loops are stepping.c and threaded.c (executor.h). The handlers of the
 * backend's watch events are eventhandlers.c. */
#include "api/node.h"
#include "api/pod.h"
#include "backend/listers.h"
#include "framework/plugin_api.h"
#include "framework/status.h"
#include "scheduler/executor.h"
#include "scheduler/extender.h"
#include "scheduler/scheduler_internal.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

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

static void *view_suspend(ks_scheduler *s);
static void view_resume(ks_scheduler *s, void *v);

static ks_status *env_bind(void *ctx, const ks_pod *pod, const char *node) {
    ks_scheduler *s = ctx;
    void *v = view_suspend(s);
    ks_status *st = s->exec->bind(s, pod, node);
    view_resume(s, v);
    return st;
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
    void *v = view_suspend(s);
    ks_status *st = ks_api_dispatcher_execute_now(s->disp, call);
    view_resume(s, v);
    return st;
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

/* The views this thread pinned, one per scheduler (a thread may run
 * the cycles of several schedulers, nested: a why run inside a
 * simulation's observer). Few: a linear search. */
#define MAX_THREAD_VIEWS 8
typedef struct thread_view {
    const ks_scheduler *s;
    const ks_objects *view; /* NULL while suspended (view_suspend) */
    uint64_t token;
    int depth;
    bool binding; /* a binding cycle's own pin (ks_sched_run_binding_cycle) */
} thread_view;
static _Thread_local thread_view tls_views[MAX_THREAD_VIEWS];

static thread_view *thread_view_of(const ks_scheduler *s) {
    for (int i = 0; i < MAX_THREAD_VIEWS; i++)
        if (tls_views[i].s == s) return &tls_views[i];
    return NULL;
}

void ks_sched_view_enter(ks_scheduler *s) {
    thread_view *v = thread_view_of(s);
    if (!v) {
        v = thread_view_of(NULL);
        if (!v) {
            /* a program error (schedulers nested that deep), not input */
            fprintf(stderr, "ksched: more than %d schedulers pinned views on one thread\n", MAX_THREAD_VIEWS);
            abort();
        }
        v->s = s;
    }
    if (v->depth++ > 0 && v->view) return;
    v->view = ks_listers_pin(s->listers, &v->token);
}

void ks_sched_view_exit(ks_scheduler *s) {
    thread_view *v = thread_view_of(s);
    if (!v || --v->depth > 0) return;
    if (v->view) ks_listers_unpin(s->listers, v->token);
    *v = (thread_view){0};
}

/* A binding cycle's API calls wait on the API server (the binding, claim
 * and volume writes; VolumeBinding waits up to bindTimeoutSeconds for the
 * PV controller). Its view is released meanwhile and a current one pinned
 * after: a pin held keeps every object version and vector the listers
 * replaced since (DRA through the API server: 20-40 views behind, 1-3 MB
 * of claim vectors; docs/performance.md, fifth pass), and upstream's
 * binding cycle reads its informers' current objects anyway. What a
 * binding cycle keeps across a call is referenced by its cycle state. Only
 * a pin the binding cycle made itself on a scheduler thread (not one it
 * shares with a scheduling cycle that runs it inline), for a profile whose
 * binding plugins are all in-tree (ks_framework_binding_plugins_own:
 * an out-of-tree plugin is promised what it read until it returns), is
 * released.
 * Returns what view_resume needs (NULL: nothing released). */
static void *view_suspend(ks_scheduler *s) {
    if (s->exec != &ks_executor_threaded) return NULL; /* simulations stay as they were */
    thread_view *v = thread_view_of(s);
    if (!v || !v->binding || !v->view) return NULL;
    ks_listers_unpin(s->listers, v->token);
    v->view = NULL;
    return v;
}

static void view_resume(ks_scheduler *s, void *p) {
    thread_view *v = p;
    /* a view entered during the call pinned one already */
    if (v && !v->view) v->view = ks_listers_pin(s->listers, &v->token);
}

void ks_sched_binding_view_enter(ks_scheduler *s, bool releasable) {
    ks_sched_view_enter(s);
    thread_view *v = thread_view_of(s);
    if (v->depth == 1) v->binding = releasable;
}

static const ks_objects *thread_view_get(const ks_scheduler *s) {
    const thread_view *v = thread_view_of(s);
    return v ? v->view : NULL;
}

void ks_sched_cycle_view_set(ks_scheduler *s, bool on) {
    atomic_store_explicit(&s->cycle_view, on ? thread_view_get(s) : NULL, memory_order_release);
}

static const ks_objects *env_objects(void *ctx) {
    ks_scheduler *s = ctx;
    const ks_objects *v = thread_view_get(s);
    if (v) return v;
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
    /* Threads, binders and workers run on real time. */
    if (o->mode == KS_RUN_THREADED && o->clock && o->clock != ks_clock_real()) {
        if (err) *err = ks_xstrdup("a threaded scheduler runs on the real clock");
        return NULL;
    }
    ks_scheduler *s = ks_xcalloc(1, sizeof(*s));
    /* The run mode, chosen here once. */
    s->exec = o->mode == KS_RUN_THREADED ? &ks_executor_threaded : &ks_executor_stepping;
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
    s->exec->attach(s);
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
                            .api_call = env_api_call};
    /* Without a preemptVerb preemption never reaches the extenders. */
    if (ks_extenders_support_preemption(s->exts, s->nexts)) env.preempt_extenders = env_preempt_extenders;
    s->fws = ks_xcalloc(s->cfg->nprofiles ? s->cfg->nprofiles : 1, sizeof(*s->fws));
    for (uint32_t i = 0; i < s->cfg->nprofiles; i++) {
        ks_framework_options fo = {.parallelism = 1, .seed = o->seed, .ties = o->ties};
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
    /* No worker yet: a stepping loop drains it; the threaded loop starts
     * the workers. */
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
    s->exec->finish(s, SHUTDOWN_GRACE_NS);
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

bool ks_scheduler_synced(ks_scheduler *s) {
    return s->started && (!s->backend->synced || s->backend->synced(s->backend->ctx));
}

/* upstream WaitForCacheSync: no cycle before every informer has listed. */
void ks_scheduler_run(ks_scheduler *s) { s->exec->run(s); }

void ks_scheduler_stop(ks_scheduler *s) {
    pthread_mutex_lock(&s->mu);
    bool was = s->stopping;
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (was) return;
    if (s->queue) ks_queue_close(s->queue);
    s->exec->stop(s);
}

void ks_scheduler_view_enter(ks_scheduler *s) { ks_sched_view_enter(s); }
void ks_scheduler_view_exit(ks_scheduler *s) { ks_sched_view_exit(s); }

/* The profile whose schedulerName is scheduler_name, or NULL. */
ks_framework *ks_sched_framework_for(ks_scheduler *s, ks_id scheduler_name) {
    for (size_t i = 0; i < s->nfws; i++)
        if (ks_intern(ks_framework_profile_name(s->fws[i])) == scheduler_name) return s->fws[i];
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
