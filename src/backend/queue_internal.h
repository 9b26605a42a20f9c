/* The queue entry's insides, for src/backend only (test/sh/layers.sh
 * fails when another folder includes this; they use queue.h's
 * accessors). */
#ifndef KS_QUEUE_INTERNAL_H
#define KS_QUEUE_INTERNAL_H

#include "backend/queue.h"

struct ks_queued_pod {
    ks_pod *pod;                     /* referenced; replaced on updates */
    ks_framework *fw;                /* the pod's profile */
    int64_t timestamp_ns;            /* last (re)enqueue */
    int64_t initial_attempt_ns;      /* when first moved to activeQ ... */
    bool has_initial_attempt;        /* ... once it was */
    uint32_t attempts;
    uint32_t unschedulable_count;
    uint32_t consecutive_errors;
    int64_t backoff_expiration_ns;   /* valid when backoff_computed */
    bool backoff_computed;
    ks_plugin_mask unschedulable_plugins;
    ks_plugin_mask pending_plugins;
    bool extender_rejected; /* see ks_diagnosis */
    int gating_plugin;               /* plugin index, -1 = not gated */
    /* queue bookkeeping */
    ks_qwhere where;
    int heap_index;
    bool counted_gated;              /* counted as gated while unschedulable */
    uint64_t mutation_epoch;         /* cluster epoch at its last pop */
    /* Why it last left the unschedulable pods: the event's label
     * ("NodeAdd", "UnschedulableTimeout", "ForceActivate"; "" when it did
     * not) and the plugin whose QueueingHint said Queue (NULL: no hint
     * decided: no rejecting plugin, the wildcard, an extender). */
    char requeue_event[64];
    const char *requeue_plugin;
};

#endif
