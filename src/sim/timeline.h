/* The replay engine (`ksched replay`, docs/replay.md): the real scheduler
 * on the in-memory cluster and a simulated clock, driven by a time-ordered
 * stream of cluster changes — pods created and deleted (or finishing after
 * running a while), nodes added, removed, cordoned, uncordoned, drained,
 * relabelled, retainted. Between changes the clock jumps from timer to
 * timer (backoff expiries, Permit waits, the 30 s unschedulable flush), so
 * a pod that does not fit waits and is retried by events as in a live
 * cluster. What happened is kept in a result structure (per-pod records
 * handed out as each becomes final, a summary, time series); printers read
 * it (replay_report.c). Memory does not grow with the trace: a pod's state
 * is freed when it leaves, its record goes to the callback.
 *
 * Use as a library (the GPU study does):
 *
 *     ks_timeline *tl = ks_timeline_new(cluster, &opts, &err);
 *     while (next event ev)  ks_timeline_feed(tl, ev, &err);   // in time order
 *     ks_timeline_finish(tl);        // departures left, final records
 *     const ks_tl_result *r = ks_timeline_result(tl);
 *     ks_timeline_free(tl);
 *
 * ks_timeline_advance(tl, t) moves the clock (scheduling on the way);
 * opts.on_attempt / on_record observe each attempt / final record;
 * ks_timeline_cluster() is the cluster as it is now (pods bound to nodes). */
#ifndef KS_TIMELINE_H
#define KS_TIMELINE_H

#include "api/cluster.h"
#include "codec/tree.h"
#include "config/config.h"
#include "scheduler/scheduler.h"

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stdint.h>

/* ---- events ---------------------------------------------------------------- */

typedef enum ks_tl_kind {
    KS_TL_POD_CREATE = 0, /* pod */
    KS_TL_POD_DELETE,     /* ns/name */
    KS_TL_NODE_ADD,       /* node */
    KS_TL_NODE_REMOVE,    /* name */
    KS_TL_NODE_CORDON,
    KS_TL_NODE_UNCORDON,
    KS_TL_NODE_DRAIN,     /* cordon, then evict its pods (re-created pending) */
    KS_TL_NODE_UPDATE,    /* name; labels merged, taints replaced */
    KS_TL_POD_BOUND,      /* audit: the recorded scheduler bound ns/name to node */
    KS_TL_WORKLOAD_CREATE, /* workload: its controllers' pods arrive (sim/workloads) */
    KS_TL_WORKLOAD_DELETE, /* workload_kind ns/name: its pods are deleted */
} ks_tl_kind;

typedef struct ks_tl_event {
    int64_t at_ns;          /* simulated time (unix ns) */
    ks_tl_kind kind;
    ks_pod *pod;            /* POD_CREATE (owned) */
    ks_node *node;          /* NODE_ADD (owned); NODE_UPDATE: the whole new node, when given */
    ks_workload *workload;  /* WORKLOAD_CREATE (a reference) */
    char *workload_kind;    /* WORKLOAD_DELETE: Deployment, StatefulSet, ... */
    int64_t run_ns;         /* POD/WORKLOAD_CREATE: each pod finishes this long after it is bound (0: never) */
    int64_t delete_at_ns;   /* POD/WORKLOAD_CREATE: deleted at this time wherever it is (0: never) */
    char *ns, *name;        /* POD_DELETE, POD_BOUND (ns/name); node ops (name) */
    char *node_name;        /* POD_BOUND: the recorded node */
    /* NODE_UPDATE: labels to set (value NULL: remove), taints replacing the
     * node's when set_taints (a KT_SEQ tree of v1.Taint, in `arena`) */
    uint32_t nlabels;
    char **label_keys, **label_values;
    bool set_taints;
    ks_tree *taints;
    ks_arena *arena;
    /* where it was read, for errors */
    const char *file;       /* borrowed from the reader */
    int line;
} ks_tl_event;

ks_tl_event *ks_tl_event_new(ks_tl_kind kind, int64_t at_ns);
void ks_tl_event_free(ks_tl_event *ev);

/* ---- results ---------------------------------------------------------------- */

typedef enum ks_tl_pod_state {
    KS_TL_RUNNING = 0,     /* bound at the end */
    KS_TL_PENDING,         /* never bound, still there at the end */
    KS_TL_FINISHED,        /* ran its duration */
    KS_TL_DELETED,         /* deleted by the trace (bound or not) */
    KS_TL_PREEMPTED,       /* deleted by preemption */
    KS_TL_EVICTED,         /* drained or its node removed (a new pod replaces it) */
} ks_tl_pod_state;

const char *ks_tl_pod_state_name(ks_tl_pod_state s);

/* A pod's record, final when handed to on_record. Times are unix ns; -1
 * when it never happened. */
typedef struct ks_tl_record {
    const char *name;       /* ns/name */
    int64_t arrival, scheduled, departure;
    const char *node;       /* the node it ran on, NULL when never bound */
    uint32_t attempts;
    int64_t pending_ns;     /* arrival to first bound, or to departure/end when never bound */
    ks_tl_pod_state state;
    /* audit logs: the node the recorded scheduler chose (NULL: none recorded) */
    const char *recorded_node;
    /* ... and whether ksched's filters accept it at the pod's first attempt
     * (-1 not checked, 0 rejected, 1 feasible) with the first rejection */
    int recorded_feasible;
    const char *recorded_reason;
} ks_tl_record;

/* Resources followed for allocation: cpu (milli), memory (bytes), pods,
 * and each extended resource some node offers (nvidia.com/gpu, ...). */
#define KS_TL_MAX_RESOURCES 16

typedef struct ks_tl_sample {
    int64_t t;
    uint32_t nodes, schedulable_nodes;
    uint32_t pending, pending_long, running;
    uint32_t arrived, scheduled, evictions, preemptions; /* during the step */
    uint32_t devices, devices_allocated; /* DRA: devices in ResourceSlices, allocated to claims */
    int64_t allocated[KS_TL_MAX_RESOURCES], allocatable[KS_TL_MAX_RESOURCES];
    double *extra;          /* the extra metrics (ks_timeline_add_metric), in order */
} ks_tl_sample;

typedef struct ks_tl_summary {
    int64_t start, end;     /* simulated time span */
    uint64_t arrived, scheduled, never_scheduled, preempted, evicted, finished, deleted;
    uint64_t attempts, events;
    /* pending time of the pods that were bound (ns) */
    int64_t pending_p50, pending_p90, pending_p99, pending_max;
    bool pending_exact;     /* false: from a log histogram (over 2^18 samples), within 1% */
    /* per resource: peak and time-weighted mean of allocated/allocatable */
    uint32_t nres;
    const char *res_names[KS_TL_MAX_RESOURCES];
    double peak_alloc[KS_TL_MAX_RESOURCES], mean_alloc[KS_TL_MAX_RESOURCES];
    int64_t peak_allocated[KS_TL_MAX_RESOURCES];
    /* audit logs */
    uint64_t recorded, same_node, recorded_infeasible;
    double wall_seconds;
    bool bounded;           /* stopped by the simulated-time bound */
} ks_tl_summary;

/* An audit log's recorded node that ksched's filters reject. */
typedef struct ks_tl_disagreement {
    char *pod, *node, *reason;
    int64_t arrival;
} ks_tl_disagreement;

/* At most this many disagreements are kept (all are counted). */
#define KS_TL_MAX_DISAGREEMENTS 1000

typedef struct ks_tl_result {
    ks_tl_summary summary;
    ks_tl_disagreement *disagreements;
    size_t ndisagreements;
    ks_tl_sample *samples;
    size_t nsamples;
    uint32_t nextra;
    const char **extra_names;
} ks_tl_result;

/* ---- the engine --------------------------------------------------------------- */

typedef struct ks_timeline ks_timeline;

typedef struct ks_timeline_options {
    const ks_config *config;      /* borrowed */
    ks_registry *registry;        /* NULL: default */
    uint64_t seed;
    bool deterministic;           /* ties to the smallest node name */
    int64_t start_ns;             /* the clock at the start */
    int64_t max_ns;               /* hard bound on simulated time past start (0: none) */
    int64_t step_ns;              /* series step (0: no series) */
    int64_t pending_long_ns;      /* "pending longer than" threshold of the series */
    /* each record when final; the record is valid during the call */
    void (*on_record)(void *ctx, const ks_tl_record *r);
    /* each scheduling attempt, as the scheduler reports it */
    void (*on_attempt)(void *ctx, const ks_attempt_record *r);
    void *ctx;
} ks_timeline_options;

/* The engine on `cluster` (admitted; taken over and freed with the
 * engine). Its pending pods arrive at start. NULL with *err. */
ks_timeline *ks_timeline_new(ks_cluster *cluster, const ks_timeline_options *o, char **err);
void ks_timeline_free(ks_timeline *tl);

/* An extra series column, computed at every sample (the GPU study's
 * fragmentation). fn reads the cluster (ks_timeline_cluster). */
void ks_timeline_add_metric(ks_timeline *tl, const char *name, double (*fn)(void *ctx, ks_timeline *tl), void *ctx);

/* Move the clock to t (>= now): departures and timers up to t happen,
 * the scheduler runs at each; false once the time bound is reached. */
bool ks_timeline_advance(ks_timeline *tl, int64_t t);
/* Apply ev (taken over) at its time (the clock advances to it first; an
 * event earlier than now happens now). false with *err ("FILE:LINE: ...")
 * for an event that cannot apply (a node that does not exist, ...). */
bool ks_timeline_feed(ks_timeline *tl, ks_tl_event *ev, char **err);
/* No more events: let the running pods with a duration finish (within
 * the bound), schedule what that frees, hand out the remaining records. */
void ks_timeline_finish(ks_timeline *tl);

int64_t ks_timeline_now(const ks_timeline *tl);
ks_cluster *ks_timeline_cluster(ks_timeline *tl);
ks_scheduler *ks_timeline_scheduler(ks_timeline *tl);
const ks_tl_result *ks_timeline_result(const ks_timeline *tl);

#endif
