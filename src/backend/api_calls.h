/* Every write the scheduler makes, as one typed call (upstream's
 * framework/api_calls): bindings, pod status patches, deletions (preemption
 * victims; their DisruptionTarget condition is a status patch run first),
 * events, and the PreBind writes of VolumeBinding (PV/PVC updates),
 * DynamicResources (ResourceClaim updates) and out-of-tree plugins (pod
 * annotations, ks_handle_patch_pod_annotations). Each type carries its rules
 * (ks_call_rules: upstream's APICall Merge and IsNoOp, its relevance, and
 * how the dispatcher queues it), which the dispatcher (api_dispatcher.h)
 * applies without knowing the types; a cluster client (cluster_client.h)
 * executes them: the kube-apiserver client turns each into its REST calls,
 * the in-memory cluster applies it to its objects. A wrapper that watches
 * or changes the writes (simulate, trace, shadow) wraps the one execute
 * function.
 *
 * Adding a write: its type below, its rules in api_calls.c, and its
 * execution in the two clients; a plugin builds it and hands it to
 * ks_handle_api_call. */
#ifndef KS_API_CALLS_H
#define KS_API_CALLS_H

#include "api/pod.h"
#include "framework/framework.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ks_call_type {
    KS_CALL_EVENT = 0,
    KS_CALL_STATUS_PATCH,
    KS_CALL_BINDING,
    KS_CALL_DELETE,
    KS_CALL_VOLUME_BINDING, /* VolumeBinding's PreBind */
    KS_CALL_CLAIM_UPDATE,   /* DynamicResources' claim writes */
    KS_CALL_POD_ANNOTATIONS, /* a plugin's PreBind annotations (ks_handle_patch_pod_annotations) */
    KS_CALL_TYPES
} ks_call_type;

/* upstream's names: "pod_status_patch", "pod_binding", ... */
const char *ks_call_type_name(ks_call_type t);

#define KS_CALL_BIT(t) (1u << (t))
#define KS_CALLS_ALL ((1u << KS_CALL_TYPES) - 1)

/* An event (events.k8s.io/v1) about a pod. */
typedef struct ks_event_record {
    const ks_pod *regarding;
    const ks_pod *related; /* or NULL */
    const char *type;    /* "Normal" / "Warning" */
    const char *reason;  /* "Scheduled", "FailedScheduling", "Preempted" */
    const char *action;  /* "Binding", "Scheduling", "Preempting" */
    const char *note;
    int64_t time_ns;
} ks_event_record;

/* Annotations to merge into a pod's metadata: keys[i] = values[i], a
 * NULL value removing the key. */
typedef struct ks_annotation_patch {
    const char *const *keys;
    const char *const *values;
    size_t n;
} ks_annotation_patch;

/* One call, borrowed for the execution: the fields of its type are set. */
typedef struct ks_api_call {
    ks_call_type type;
    const ks_pod *pod;                 /* the pod it is about (events: regarding) */
    const char *node;                  /* BINDING */
    const ks_status_patch *patch;      /* STATUS_PATCH */
    const ks_event_record *event;      /* EVENT */
    const ks_volume_binding *volumes;  /* VOLUME_BINDING: bind each PV to its claim */
    size_t nvolumes;                   /*   or mark a claim for provisioning */
    const ks_claim_update *claim;      /* CLAIM_UPDATE (see framework.h) */
    struct ks_resource_claim **claim_written; /* CLAIM_UPDATE, RESERVE: the claim as written */
    const ks_annotation_patch *annotations;   /* POD_ANNOTATIONS */
} ks_api_call;

/* The dispatcher's queue a call waits in, popped from the highest down
 * (api_dispatcher.c push_key). Evictions also have workers of their own. */
typedef enum ks_call_lane {
    KS_LANE_OTHER,    /* status patches, events: in arrival order */
    KS_LANE_EVICTION, /* preemption's deletions */
    KS_LANE_BINDING,  /* what a scheduled pod waits on */
    KS_LANES
} ks_call_lane;

/* A type's rules (upstream's APICall interface, less Execute, which is the
 * cluster client's). */
typedef struct ks_call_rules {
    const char *name; /* upstream's APICallType: "pod_status_patch", ... */
    /* Queued calls for one pod merge: a call less relevant than the one
     * queued is skipped, a more relevant one replaces it (upstream's
     * APICallRelevances). 0: never merged, each call its own (events). */
    int relevance;
    /* Its queue (bindings, then deletions, ahead of the others). */
    ks_call_lane lane;
    /* Made through the dispatcher's queue; false: executed at once by
     * the binding cycle that makes it (PreBind writes). */
    bool queued;
    /* A client that does not make calls of this type: the call fails
     * with this text; NULL: it is assumed done. */
    const char *unmade;
    /* Replacing a queued call of its pod: the displaced calls of these
     * types (KS_CALL_BIT) run first instead of being dropped, and the
     * pod's place in the queue is taken anew by this call's rules
     * (requeues) instead of kept. */
    uint32_t keeps_displaced;
    bool requeues;
    /* The result is dropped and not measured (events: fire and forget). */
    bool forget;
    /* Take from an older queued call of the same type what this one
     * leaves alone (upstream Merge); NULL: the newer overwrites. */
    void (*merge)(ks_api_call *newer, const ks_api_call *older);
    /* Whether executing it would change nothing (upstream IsNoOp); NULL:
     * never. Checked when queued and, for PreBind writes, when made. */
    bool (*is_noop)(const ks_api_call *c);
    /* Logged as the call starts (klog V(3) lines upstream prints); NULL. */
    void (*trace)(const ks_api_call *c);
} ks_call_rules;

const ks_call_rules *ks_call_rules_of(ks_call_type t);

/* An owned copy of a queued call (the pods referenced, the strings and
 * the event copied); ks_api_call_free releases it. Only queued types. */
ks_api_call *ks_api_call_clone(const ks_api_call *c);
void ks_api_call_free(ks_api_call *c);

#endif
