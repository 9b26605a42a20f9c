/* The simulator: run the real scheduler loop on simulated time over an
 * in-memory cluster loaded from manifests, and collect what happened to
 * every pending pod: where it went, why not, who was preempted, which
 * events were emitted, and (with explain) every plugin's verdict and score
 * on every node for each attempt. Printing is separate (report_*.c). */
#ifndef KS_SIMULATE_H
#define KS_SIMULATE_H

#include "api/cluster.h"
#include "config/config.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "sim/workloads/workloads.h"

#include <ksched/ksched.h>

typedef enum ks_sim_state {
    KS_SIM_PENDING = 0,       /* never attempted (should not stay so) */
    KS_SIM_SCHEDULED,
    KS_SIM_UNSCHEDULABLE,
    KS_SIM_GATED,             /* spec.schedulingGates not empty */
    KS_SIM_PREEMPTED,         /* a running pod deleted by preemption */
} ks_sim_state;

const char *ks_sim_state_name(ks_sim_state s);

/* One node's Filter verdict in an attempt. */
typedef struct ks_sim_verdict {
    ks_id node;
    ks_code code;            /* KS_SUCCESS when the node passed */
    const char *plugin;      /* the rejecting plugin ("" when passed) */
    uint32_t nreasons;
    char **reasons;
} ks_sim_verdict;

/* Everything the scheduler decided in one attempt (explain mode). */
typedef struct ks_sim_attempt {
    uint32_t number;         /* 1 for the pod's first attempt */
    char *requeue_event;     /* ks_attempt_record's, NULL when none */
    const char *requeue_plugin;
    int64_t time_ns;
    /* PreFilter */
    ks_code pre_filter_code;
    const char *pre_filter_plugin;
    char *pre_filter_message;
    bool pre_filter_narrowed;   /* a PreFilterResult restricted the nodes */
    /* Filter, in evaluation order; the profile's Filter plugins in order */
    uint32_t nfilter_plugins;
    const char **filter_plugins;
    uint32_t nverdicts;
    ks_sim_verdict *verdicts;
    /* Score: nscored nodes x nplugins (the best rows only, with
     * explain_score_rows; nscored_all: how many nodes were scored) */
    uint32_t nscored, nplugins;
    uint32_t nscored_all;
    ks_id *scored_nodes;
    const char **score_plugins;
    int64_t *weights;
    int64_t *raw, *normalized, *weighted; /* [node * nplugins + plugin] */
    int64_t *total;
    /* Outcome */
    char *selected_node;
    char *message;           /* FailedScheduling message */
    bool post_filter_ran;
    const char *post_filter_plugin;
    ks_code post_filter_code;
    char *post_filter_message;
    char *nominated_node;
} ks_sim_attempt;

typedef struct ks_sim_pod {
    ks_pod *pod;             /* the final version (referenced) */
    ks_pod *input;           /* as loaded and admitted (referenced) */
    ks_sim_state state;
    char *node;              /* bound node */
    char *nominated;         /* status.nominatedNodeName at the end */
    char *message;           /* last FailedScheduling message / preemption note */
    char *reason;            /* PodScheduled=False reason */
    uint32_t order;          /* scheduling order: first attempt; gated last */
    uint32_t attempts;
    int64_t deleted_ns;      /* victims: when deleted */
    uint32_t nexplain;
    ks_sim_attempt *explain; /* every attempt, with explain */
    int32_t workload;        /* index in ks_sim_result.workloads; -1: none */
} ks_sim_pod;

/* A workload and what became of its pods: the pods of this run whose
 * controller (followed up through ReplicaSets and Jobs) it is. */
typedef struct ks_sim_workload {
    const ks_workload *workload; /* borrowed from the cluster */
    int32_t desired;             /* pods its controller wants; -1 unknown */
    uint32_t running;            /* its pods bound before the run */
    uint32_t scheduled;          /* its pending pods the run placed */
    uint32_t pending;            /* its pending pods left unscheduled */
    uint32_t not_created;        /* OrderedReady ordinals never created (a
                                  * previous one did not run) */
    int32_t first_pending;       /* index in pods of the first unscheduled; -1 */
    const ks_pod *first_not_created; /* borrowed; NULL */
    /* A workload rolling out a changed template: new pods bound of
     * those to make, old pods still running (complete: old_left 0 and
     * new == total). */
    bool rollout, rollout_recreate;
    const char *rollout_strategy; /* "RollingUpdate", "Recreate", "OnDelete" (static) */
    uint32_t rollout_new, rollout_total, rollout_old_left;
} ks_sim_workload;

typedef struct ks_sim_event {
    ks_pod *regarding;       /* referenced */
    char *type, *reason, *action, *note;
    char *controller;        /* the reporting scheduler's name */
    int64_t time_ns;
} ks_sim_event;

typedef struct ks_sim_options {
    uint64_t seed;
    bool explain;
    /* No random choice: ties go to the smallest node name instead of a
     * seeded random pick, preemption takes its candidates in name order. */
    bool deterministic;
    int32_t percentage_of_nodes_to_score; /* -1: from the configuration */
    int parallelism;                      /* 0: from the configuration */
    /* Explain this pod's attempts only (pod key; 0: none), when explain
     * is off: `why` needs one pod's verdicts, not every pod's. */
    uint64_t explain_pod;
    /* With explain: keep only this many Score rows per attempt, the best
     * by total (ties: node name) and the chosen node (0: every row). The
     * HTML page shows no more, and on 5,000 nodes every row of every
     * attempt is most of the memory. */
    uint32_t explain_score_rows;
    /* Called for every attempt (after the result records it), on the
     * scheduling thread; the record is valid only during the call. */
    void (*on_attempt)(void *ctx, const ks_attempt_record *rec);
    void *on_attempt_ctx;
    /* What the workloads' controllers created (ks_workloads_expand); its
     * held pods are created as their predecessors are bound. NULL: none. */
    ks_wl_generated *workloads;
} ks_sim_options;

typedef struct ks_sim_result {
    ks_sim_pod *pods;        /* pending pods, in scheduling order */
    uint32_t npods;
    ks_sim_pod *victims;     /* pods deleted by preemption, in order */
    uint32_t nvictims;
    ks_sim_event *events;
    uint32_t nevents;
    int64_t start_ns, end_ns; /* simulated time */
    uint64_t attempts;
    double wall_seconds;
    /* Final cluster state: nodes and the pods bound to them. */
    ks_cluster *cluster;     /* borrowed from the caller */
    /* Pods grouped by workload, in the cluster's workload order; only
     * workloads with pods (or wanting some). */
    ks_sim_workload *workloads;
    uint32_t nworkloads;
    const ks_wl_generated *generated; /* borrowed from the options; NULL */
} ks_sim_result;

/* Which pods are pending for a configuration: no nodeName, not
 * terminating, not finished, schedulerName naming one of the profiles. */
bool ks_sim_is_pending(const ks_config *cfg, const ks_pod *p);

/* Run the simulation on cluster (admitted already; modified in place).
 * false with *err (malloc'd) when the scheduler cannot be built. */
bool ks_simulate(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg,
                 const ks_sim_options *opts, ks_sim_result *out, char **err);
void ks_sim_result_free(ks_sim_result *r);
/* Fill r->workloads (and each pod's workload) from the pods' controller
 * owner references through r->cluster's workloads; held: pods never
 * created (src/sim/workload_groups.c). */
void ks_sim_group_workloads(ks_sim_result *r, const ks_wl_held *held);

/* A scheduler built from o and started (the backend's objects listed into
 * it); NULL with *err (malloc'd) when either step fails. */
ks_scheduler *ks_sim_start(const ks_scheduler_options *o, char **err);
/* The observer's extender_bound for a simulation: the in-memory cluster
 * has no API server for an extender to write to, so the binding the
 * extender reported is made through s's dispatcher (in queue order). */
ks_status *ks_sim_extender_bound(ks_scheduler *s, const ks_pod *pod, const char *node);

/* A cluster sharing c's objects (each referenced once more): one input
 * simulated several times (why's changes, compare's configurations). */
ks_cluster *ks_sim_clone_cluster(const ks_cluster *c);

/* The simulated clock starts at the newest creationTimestamp in the input
 * (so output does not depend on when it runs), or at the epoch. */
int64_t ks_sim_start_time(const ks_cluster *c);

#endif
