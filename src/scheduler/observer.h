/* Hooks to watch the scheduler work (the simulator's trace and --explain,
 * tests). Everything an observer receives is valid only for the call. All
 * hooks run on the scheduling thread, except on_bound/on_bind_failed which
 * run where the binding cycle runs (the stepping loop, or a binder thread). */
#ifndef KS_OBSERVER_H
#define KS_OBSERVER_H

#include "framework/diagnosis.h"

#include <ksched/framework.h>

typedef enum ks_attempt_result {
    KS_ATTEMPT_SCHEDULED = 0,     /* assumed, reserved, permitted (maybe waiting) */
    KS_ATTEMPT_UNSCHEDULABLE,     /* rejected: FitError */
    KS_ATTEMPT_ERROR,             /* an error status */
    KS_ATTEMPT_SKIPPED,           /* deleted or already assumed: not tried */
} ks_attempt_result;

/* One scheduling attempt of one pod. */
typedef struct ks_attempt_record {
    const ks_pod *pod;
    const ks_framework *fw;
    uint32_t attempt;                 /* 1 for the first try */
    /* Why the pod was retried: the event that moved it out of the
     * unschedulable pods ("NodeAdd", "UnschedulableTimeout", ...) and the
     * plugin whose QueueingHint said Queue (NULL: none decided). NULL
     * event: the first attempt, or a retry after backoff alone. */
    const char *requeue_event;
    const char *requeue_plugin;
    int64_t time_ns;                  /* scheduler clock */
    ks_attempt_result result;
    const ks_snapshot *snapshot;
    const ks_cycle_state *state;
    /* PreFilter */
    const ks_status *pre_filter_status;
    const ks_pre_filter_result *pre_filter_result; /* NULL: all nodes */
    /* The reason given to the nodes a PreFilterResult left out
     * ("node(s) didn't satisfy plugin(s) [...]"), NULL when none were. */
    const char *pre_filter_excluded_reason;
    /* Filter: the nodes evaluated (in evaluation order) and the verdict on
     * each (NULL = passed). nevaluated may be less than the number of
     * nodes (percentageOfNodesToScore). */
    size_t nevaluated;
    const ks_node_info *const *evaluated;
    const ks_status *const *verdicts;
    bool nominated_node_fast_path;    /* the nominated node alone was tried and fit */
    /* The nominated node when it was tried alone first and did not fit,
     * with its verdict: the evaluation that follows may leave it out (a
     * PreFilterResult without it), and then this verdict is its last. */
    const ks_node_info *nominated_tried;
    const ks_status *nominated_verdict;
    /* Score (NULL when fewer than two nodes fit or nothing was scored). */
    const ks_score_result *scores;
    const char *chosen_node;          /* NULL unless SCHEDULED */
    /* Failure */
    const ks_status *status;          /* the failing status (NULL on success) */
    const char *message;              /* FailedScheduling message, or NULL */
    const ks_diagnosis *diagnosis;    /* NULL unless a FitError */
    bool post_filter_ran;
    const ks_status *post_filter_status;
    const char *nominated_node;       /* PostFilter's nomination, or NULL */
    bool waiting_on_permit;
} ks_attempt_record;

typedef struct ks_observer {
    void *ctx;
    void (*on_attempt)(void *ctx, const ks_attempt_record *r);
    void (*on_bound)(void *ctx, const ks_pod *pod, const char *node);
    /* Binding cycle failure (permit rejection/timeout, PreBind, Bind). */
    void (*on_bind_failed)(void *ctx, const ks_pod *pod, const char *node,
                           const ks_status *status, const char *message);
    /* An extender bound the pod itself (its bindVerb). In a cluster the
     * binding comes back through the watch; an observer that stands in
     * for the API server (the simulator's in-memory cluster) makes it
     * happen there and returns the result. NULL: nothing to do. */
    ks_status *(*extender_bound)(void *ctx, const ks_pod *pod, const char *node);
} ks_observer;

#endif
