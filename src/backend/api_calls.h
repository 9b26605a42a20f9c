/* Every write the scheduler makes, as one typed call (upstream's
 * framework/api_calls): bindings, pod status patches, deletions (preemption
 * victims), events, and the PreBind writes of VolumeBinding (PV/PVC
 * updates) and DynamicResources (ResourceClaim updates). The dispatcher
 * (api_dispatcher.h) queues, merges and skips them by type; a cluster
 * client (cluster_client.h) executes them: the kube-apiserver client turns
 * each into its REST calls, the in-memory cluster applies it to its
 * objects. A wrapper that watches or changes the writes (simulate, trace,
 * shadow) wraps the one execute function. */
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
} ks_api_call;

#endif
