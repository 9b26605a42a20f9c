/* The scheduler's state, shared by scheduler.c (setup, loops),
 * eventhandlers.c (watch events) and schedule_one.c (the scheduling and
 * binding cycles). */
#ifndef KS_SCHEDULER_INTERNAL_H
#define KS_SCHEDULER_INTERNAL_H

#include "framework/diagnosis.h"
#include "scheduler/scheduler.h"
#include "util/taskpool.h"

#include <pthread.h>
#include <stdatomic.h>

/* The timers both loops fire (upstream's defaults). */
#define BACKOFF_FLUSH_PERIOD_NS KS_NS_PER_SEC
#define LEFTOVER_FLUSH_PERIOD_NS (30LL * KS_NS_PER_SEC)

/* One pod's binding cycle: everything the scheduling cycle hands over. */
typedef struct binding_cycle {
    struct ks_scheduler *s;
    ks_framework *fw;
    ks_cycle_state *st;
    ks_queued_pod *qp;   /* the pod's queue entry (unassigned pod) */
    ks_pod *assumed;     /* the assumed copy, node set (referenced) */
    char *node;
    int64_t start_ns;    /* monotonic: when the attempt began (metrics) */
    struct binding_cycle *next;
} binding_cycle;

struct ks_scheduler {
    const ks_config *cfg;
    ks_registry *reg;
    const ks_cluster_client *backend;
    ks_clock *clock;
    const ks_observer *obs;

    ks_framework **fws;
    size_t nfws;
    ks_parallelizer *par;
    ks_waiting_pods *waiting;
    ks_cache *cache;
    ks_snapshot *snap;
    ks_queue *queue;
    ks_api_dispatcher *disp;

    uint32_t next_start_node_index;
    /* the scheduling cycle's pinned view, for its workers */
    _Atomic(const ks_objects *) cycle_view;
    /* every kind plugins read other than nodes and pods */
    struct ks_listers *listers;

    /* cfg->extenders, in order (upstream sched.Extenders) */
    struct ks_extender **exts;
    size_t nexts;

    /* What the backend last reported for every pod (the informer cache). */
    pthread_mutex_t pods_mu;
    ks_map pods; /* pod key + 1 -> ks_pod* (referenced) */

    /* The run mode (executor.h), chosen in ks_scheduler_new. */
    const struct ks_executor *exec;

    /* Binding cycles whose pod waits on Permit, in order: they hold no
     * thread; the stepping loop runs them once decided, the threaded one
     * hands them to the binders then. */
    pthread_mutex_t bind_mu;
    binding_cycle *parked, **parked_tail;

    /* The stop flag, the counters; the threaded loop's timer waits on cv. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping;
    bool started;

    /* threaded.c's: the threads that run binding cycles, the timer thread */
    ks_taskpool *binders;
    pthread_t timer;
    bool timer_running;

    int64_t last_leftover_flush;
    /* the stepping loop's: last bind (or start); binders write it too */
    _Atomic int64_t last_progress;
    ks_scheduler_stats stats;
};

/* schedule_one.c */
bool ks_sched_schedule_one(struct ks_scheduler *s, bool block);
void ks_sched_run_binding_cycle(binding_cycle *bc);
void ks_sched_free_binding_cycle(binding_cycle *bc);
/* Take the first parked binding cycle whose Permit wait is over (NULL:
 * none); the caller runs it. */
binding_cycle *ks_sched_unpark_ready(struct ks_scheduler *s);

/* eventhandlers.c: the backend's watch callback (arg: the scheduler). */
void ks_sched_on_watch(void *arg, const ks_watch_event *ev);

/* metrics_collect.c: the scheduler's gauges in /metrics (queue, cache). */
void ks_sched_metrics_attach(struct ks_scheduler *s);
void ks_sched_metrics_detach(struct ks_scheduler *s);

/* scheduler.c */
/* Pin the backend's object view for the calling thread (nested calls
 * share the outer pin); plugins on this thread read it until exit. */
void ks_sched_view_enter(struct ks_scheduler *s);
void ks_sched_view_exit(struct ks_scheduler *s);
/* A binding cycle's enter: with releasable, its own pin (none outer on
 * this thread) is released while its API calls wait, and a current one
 * pinned after. */
void ks_sched_binding_view_enter(struct ks_scheduler *s, bool releasable);
/* Share (or stop sharing) the calling thread's view with the workers of
 * the current scheduling cycle. */
void ks_sched_cycle_view_set(struct ks_scheduler *s, bool on);
ks_pod *ks_sched_lookup_pod(struct ks_scheduler *s, uint64_t key);
ks_framework *ks_sched_framework_for(struct ks_scheduler *s, ks_id scheduler_name);
void ks_sched_stat(struct ks_scheduler *s, uint64_t *field);

#endif
