/* The threaded executor (executor.h), for ksched run on the real clock:
 * ks_scheduler_run's thread runs scheduling cycles one pod at a time,
 * blocking on the queue; binding cycles run on a fixed set of binder
 * threads (a cycle whose pod waits on Permit is parked without a thread
 * until the verdict hands it over), API calls on the dispatcher's
 * workers, and a timer thread flushes backoff every second, the
 * unschedulable leftovers every 30 s and expires Permit waits. */
#include "metrics/sched_metrics.h"
#include "scheduler/executor.h"
#include "scheduler/scheduler_internal.h"
#include "util/log.h"

#include <pthread.h>

static void binding_task(void *arg) {
    /* upstream's Goroutines{operation="binding"}: binding cycles running */
    static const char *const op[1] = {"binding"};
    static ks_metric *_Atomic running;
    ks_metric *g = ks_metric_cached(&running, ks_sm()->goroutines, op);
    ks_gauge_add(g, 1);
    ks_sched_run_binding_cycle(arg);
    ks_gauge_add(g, -1);
}

/* Hand the parked binding cycles whose Permit wait is over to the binders. */
static void submit_ready(ks_scheduler *s) {
    for (binding_cycle *bc; (bc = ks_sched_unpark_ready(s)) != NULL;) ks_taskpool_submit(s->binders, binding_task, bc);
}

/* The waiting pods' hook: a verdict came (a Permit plugin allowing on the
 * scheduling thread, a rejection from a watch handler, the timer thread at
 * the deadline). */
static void on_permit_decided(void *arg, ks_waiting_pod *w) { submit_ready(arg); }

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

static bool wait_synced(ks_scheduler *s) {
    pthread_mutex_lock(&s->mu);
    while (!s->stopping && !ks_scheduler_synced(s))
        ks_clock_cond_wait(s->clock, &s->cv, &s->mu, ks_clock_now(s->clock) + KS_NS_PER_SEC / 10);
    bool ok = !s->stopping;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static void threaded_run(ks_scheduler *s) {
    if (!wait_synced(s)) return;
    ks_infof(2, "caches synced, scheduling");
    pthread_mutex_lock(&s->mu);
    bool stop = s->stopping;
    if (!stop) {
        /* API calls get as many threads as the binders (the dispatcher's
         * as upstream's: parallelism calls at once); starting twice is a
         * no-op. */
        ks_api_dispatcher_start(s->disp, ks_parallelizer_parallelism(s->par));
        ks_waiting_pods_set_notify(s->waiting, on_permit_decided, s);
        /* Cycles parked before the loop started. */
        submit_ready(s);
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

/* ---- the executor ---------------------------------------------------------- */

/* Binding cycles get as many threads as Filter and Score workers; the
 * binders exist from the start (idle until the loop runs), so a binding
 * cycle always has somewhere to go. */
static void threaded_attach(ks_scheduler *s) { s->binders = ks_taskpool_new(ks_parallelizer_parallelism(s->par)); }

static void threaded_run_binding(ks_scheduler *s, binding_cycle *bc) { ks_taskpool_submit(s->binders, binding_task, bc); }

static void threaded_parked(ks_scheduler *s) {
    /* The verdict may have come before the cycle was parked; and the
     * timer thread now has a Permit deadline to watch. */
    submit_ready(s);
    pthread_mutex_lock(&s->mu);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static ks_status *threaded_bind(ks_scheduler *s, const ks_pod *pod, const char *node) {
    return ks_api_dispatcher_bind_wait(s->disp, pod, node);
}

static void threaded_stop(ks_scheduler *s) {
    pthread_mutex_lock(&s->mu);
    bool timer = s->timer_running;
    s->timer_running = false;
    pthread_mutex_unlock(&s->mu);
    if (timer) pthread_join(s->timer, NULL);
}

static void threaded_finish(ks_scheduler *s, int64_t grace_ns) {
    ks_taskpool_wait_idle(s->binders, ks_clock_now(ks_clock_real()) + grace_ns);
    if (s->disp) ks_api_dispatcher_close(s->disp, grace_ns);
    /* the cycles that were waiting on the dispatcher end now */
    ks_taskpool_free(s->binders);
    s->binders = NULL;
}

const ks_executor ks_executor_threaded = {.name = "threaded",
                                          .attach = threaded_attach,
                                          .run = threaded_run,
                                          .run_binding = threaded_run_binding,
                                          .parked = threaded_parked,
                                          .bind = threaded_bind,
                                          .stop = threaded_stop,
                                          .finish = threaded_finish};
