/* The stepping executor (executor.h): the caller's thread does everything,
 * in a fixed order, and nothing runs behind its back. The loops here try
 * one pod at a time, run its binding cycle at once (or, after a Permit
 * wait, when the loop finds it decided), drain the dispatcher's queue, and
 * when nothing is runnable move the clock to the next timer and fire it:
 * a simulation ends as soon as it can and the same way every time. */
#include "scheduler/executor.h"
#include "scheduler/scheduler_internal.h"
#include "util/log.h"

/* A simulation that keeps going without binding anything (pods that keep
 * requeueing each other, as they would forever in a real cluster) stops
 * after this much simulated time, or this many loop turns. */
#define SIM_IDLE_HORIZON_NS (30LL * 60 * KS_NS_PER_SEC)
#define MAX_SIM_ITERATIONS 10000000ULL

/* Steps that may run plugins outside a cycle (done callbacks,
 * Permit waits ending) read the objects as they are now. */
static void drain(ks_scheduler *s) {
    ks_sched_view_enter(s);
    ks_api_dispatcher_drain(s->disp);
    ks_sched_view_exit(s);
}

/* Run the parked binding cycles whose Permit wait is over. */
static size_t ready_bindings(ks_scheduler *s) {
    ks_sched_view_enter(s);
    size_t n = 0;
    for (binding_cycle *bc; (bc = ks_sched_unpark_ready(s)) != NULL; n++) ks_sched_run_binding_cycle(bc);
    ks_sched_view_exit(s);
    return n;
}

bool ks_scheduler_attempt_one(ks_scheduler *s) { return ks_sched_schedule_one(s, false); }

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

/* ---- the executor ---------------------------------------------------------- */

/* No thread of its own. */
static void stepping_attach(ks_scheduler *s) {}

static void stepping_run(ks_scheduler *s) {
    ks_errorf("ks_scheduler_run: this scheduler steps (KS_RUN_STEPPING): its caller runs it");
}

static void stepping_run_binding(ks_scheduler *s, binding_cycle *bc) { ks_sched_run_binding_cycle(bc); }

/* The loop runs it once decided (ready_bindings). */
static void stepping_parked(ks_scheduler *s) {}

static ks_status *stepping_bind(ks_scheduler *s, const ks_pod *pod, const char *node) {
    return ks_api_dispatcher_bind_drain(s->disp, pod, node);
}

/* No timer thread. */
static void stepping_stop(ks_scheduler *s) {}

static void stepping_finish(ks_scheduler *s, int64_t grace_ns) {
    if (s->disp) ks_api_dispatcher_close(s->disp, grace_ns);
}

const ks_executor ks_executor_stepping = {.name = "stepping",
                                          .attach = stepping_attach,
                                          .run = stepping_run,
                                          .run_binding = stepping_run_binding,
                                          .parked = stepping_parked,
                                          .bind = stepping_bind,
                                          .stop = stepping_stop,
                                          .finish = stepping_finish};
