/* A scheduler's run mode as one object, chosen in ks_scheduler_new from
 * ks_scheduler_options.mode: the scheduling core asks it what to do with
 * a binding cycle, a Bind's API call and the loop, instead of testing a
 * pointer or a flag. Two implementations:
 *
 *                  stepping (stepping.c)         threaded (threaded.c)
 *  clock           the caller's: simulated       the real one
 *                  (the shadow: real)
 *  scheduling      the caller's steps            ks_scheduler_run's loop
 *  binding cycle   at once, on the caller's      on a binder thread
 *                  thread
 *  after a Permit  the loop runs it when it      the verdict hands it to a
 *  wait            asks for ready bindings       binder (no thread before)
 *  API calls       the loop drains the queue;    the dispatcher's workers;
 *                  Bind drains up to its call    Bind waits for the answer
 *  timers          the loop jumps the clock to   a timer thread
 *                  the next one and fires it
 *
 * Waiting itself is the clock's: the simulated clock never blocks
 * (ks_clock_cond_wait). The random choices are neither's: ks_tie_rules.
 * The framework, the queue and the dispatcher offer both ways (drain and
 * bind_drain, workers and bind_wait; a non-blocking pop and a wait) and
 * do not know which one their scheduler uses. */
#ifndef KS_EXECUTOR_H
#define KS_EXECUTOR_H

#include "framework/status.h"

struct ks_scheduler;
struct binding_cycle;

typedef struct ks_executor {
    const char *name; /* "stepping", "threaded" */
    /* ks_scheduler_new: the threads the mode keeps (threaded: binders). */
    void (*attach)(struct ks_scheduler *s);
    /* ks_scheduler_run: the threaded loop; stepping refuses. */
    void (*run)(struct ks_scheduler *s);
    /* A binding cycle that may run now (its pod does not wait on Permit). */
    void (*run_binding)(struct ks_scheduler *s, struct binding_cycle *bc);
    /* A binding cycle was parked until its pod's Permit verdict. */
    void (*parked)(struct ks_scheduler *s);
    /* The Bind extension point's call (DefaultBinder): queued in the
     * dispatcher, answered before this returns. */
    ks_status *(*bind)(struct ks_scheduler *s, const ks_pod *pod, const char *node);
    /* ks_scheduler_stop, once the stop flag is set: stop the timers. */
    void (*stop)(struct ks_scheduler *s);
    /* ks_scheduler_free: binding cycles under way get grace_ns of real
     * time to finish their API calls; then the dispatcher closes and the
     * threads that run binding cycles go. */
    void (*finish)(struct ks_scheduler *s, int64_t grace_ns);
} ks_executor;

extern const ks_executor ks_executor_stepping;
extern const ks_executor ks_executor_threaded;

#endif
