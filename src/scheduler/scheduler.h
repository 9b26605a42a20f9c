/* The scheduler: profiles (one framework per schedulerName), the cache and
 * snapshot, the scheduling queue, the API dispatcher and a backend, wired
 * together the way kube-scheduler's Scheduler is.
 *
 * Two ways to run the same cycle, chosen once when the scheduler is made
 * (ks_scheduler_options.mode) and held by one object, its executor
 * (executor.h: who runs binding cycles, API calls and timers; the clock
 * answers what time it is and whether waiting passes time):
 *
 * - stepping (simulate, replay, the shadow, tests; usually on a simulated
 *   clock): nothing blocks and nothing runs behind the caller's back.
 *   ks_scheduler_schedule_one() tries one pod; its binding cycle runs
 *   right after it (or when the Permit wait ends); API calls execute when
 *   the loop drains the dispatcher. ks_scheduler_run_until_idle() loops,
 *   moving the clock to the next timer when nothing is runnable, until
 *   nothing can make progress.
 * - threaded (run; the real clock): ks_scheduler_run() blocks on the
 *   queue; binding cycles run on a fixed set of binder threads (a cycle
 *   whose pod waits on Permit is parked without a thread until the
 *   verdict), API calls on the dispatcher's workers, timers (backoff flush
 *   every second, unschedulable flush every 30 s, Permit timeouts) on a
 *   timer thread.
 *
 * What the simulator adds comes through the clock, the cluster client and
 * the observer (trace records, an extender's binding recorded in the
 * simulator's cluster). */
#ifndef KS_SCHEDULER_H
#define KS_SCHEDULER_H

#include "backend/cache.h"
#include "backend/queue.h"
#include "config/config.h"
#include "backend/api_dispatcher.h"
#include "backend/cluster_client.h"
#include "scheduler/observer.h"

typedef struct ks_scheduler ks_scheduler;

typedef enum ks_run_mode {
    KS_RUN_STEPPING, /* the caller steps it: nothing runs behind its back */
    KS_RUN_THREADED, /* ks_scheduler_run: binders, API workers, a timer thread */
} ks_run_mode;

typedef struct ks_scheduler_options {
    const ks_config *config;     /* resolved; borrowed, must outlive the scheduler */
    ks_registry *registry;       /* NULL = ks_default_registry() */
    const ks_cluster_client *backend;   /* borrowed */
    /* Stepping (the default) or threaded; threaded runs on the real clock. */
    ks_run_mode mode;
    ks_clock *clock;             /* NULL = real clock; borrowed */
    /* Each profile's seed: every random choice (selectHost among equal
     * scores, preemption's first candidate) comes from it (0 = a fixed
     * default). */
    uint64_t seed;
    /* Which of those choices go by node or pod name instead (the
     * differential tests need one answer: KS_TIES_BY_NAME). */
    ks_tie_rules ties;
    int parallelism;             /* 0 = config's parallelism */
    const ks_observer *observer; /* optional, borrowed */
} ks_scheduler_options;

ks_scheduler *ks_scheduler_new(const ks_scheduler_options *o, char **err);
void ks_scheduler_free(ks_scheduler *s);

/* List and watch the backend (the initial objects are added at once). */
ks_status *ks_scheduler_start(ks_scheduler *s);

/* Stepping: one scheduling attempt (plus its binding cycle when it
 * can run now). false when no pod was runnable. */
bool ks_scheduler_schedule_one(ks_scheduler *s);
/* Stepping: one scheduling attempt, leaving the API calls it queued in
 * the dispatcher (the caller drains them: the differential replay). */
bool ks_scheduler_attempt_one(ks_scheduler *s);
/* Pin the objects plugins read for the calling thread, around plugin
 * calls made outside a cycle (a PreEnqueue asked by the simulator). */
void ks_scheduler_view_enter(ks_scheduler *s);
void ks_scheduler_view_exit(ks_scheduler *s);
/* Stepping: schedule until nothing can make progress: activeQ and
 * backoffQ empty, no pod waiting on Permit, no API call pending, no timer
 * other than the unschedulable flush (and error-backoff pods that already
 * failed since the last cluster change). Returns the attempts made. */
size_t ks_scheduler_run_until_idle(ks_scheduler *s);
/* Stepping, on a simulated clock driven by the caller (replay): schedule
 * and fire the timers due up to deadline, the clock jumping from one to
 * the next; the clock is at deadline on return. Returns the attempts. */
size_t ks_scheduler_run_until(ks_scheduler *s, int64_t deadline);
/* Stepping: one attempt of the given pending pod, wherever it waits
 * in the queue (the simulator's trace mode orders attempts itself). false
 * when the queue does not hold it. */
bool ks_scheduler_attempt(ks_scheduler *s, uint64_t pod_key);

/* Threaded: wait until the backend has synced, start the binders and
 * the API workers, then schedule until ks_scheduler_stop() (from another
 * thread or a signal-safe flag poll). A stepping scheduler returns at once
 * (its caller steps it), logging an error. */
void ks_scheduler_run(ks_scheduler *s);
/* Started, and the backend's initial lists are all delivered (run waits
 * for this before its first cycle; /readyz reports it). */
bool ks_scheduler_synced(ks_scheduler *s);
void ks_scheduler_stop(ks_scheduler *s);

/* Parts, for the simulator, the server and tests. */
ks_framework *ks_scheduler_framework(ks_scheduler *s, const char *scheduler_name);
size_t ks_scheduler_nframeworks(const ks_scheduler *s);
ks_framework *ks_scheduler_framework_at(ks_scheduler *s, size_t i);
ks_queue *ks_scheduler_queue(ks_scheduler *s);
ks_cache *ks_scheduler_cache(ks_scheduler *s);
ks_api_dispatcher *ks_scheduler_dispatcher(ks_scheduler *s);
ks_clock *ks_scheduler_clock(ks_scheduler *s);
const ks_snapshot *ks_scheduler_snapshot(ks_scheduler *s);
ks_waiting_pods *ks_scheduler_waiting_pods(ks_scheduler *s);
/* The latest version of a pod the scheduler has seen (referenced). */
ks_pod *ks_scheduler_pod(ks_scheduler *s, uint64_t pod_key);

/* Counters. */
typedef struct ks_scheduler_stats {
    uint64_t attempts, scheduled, unschedulable, errors, bound, bind_failures;
} ks_scheduler_stats;
void ks_scheduler_stats_get(ks_scheduler *s, ks_scheduler_stats *out);

/* upstream numFeasibleNodesToFind. percentage 0 = adaptive. */
uint32_t ks_num_feasible_nodes_to_find(int32_t percentage, uint32_t num_all_nodes);

#endif
