/* The one interface between the scheduler and the world: list/watch the
 * objects (every kind the scheduler or a plugin reads), bind, patch pod
 * status, delete pods (preemption victims), emit events. Two implementations: the in-memory cluster (src/sim, simulate
 * and tests) and the kube-apiserver client (src/kube). Nothing above
 * src/kube knows HTTP exists.
 *
 * Objects are immutable and reference counted (ks_pod, ks_node): a change
 * is a new object. Watch callbacks get references valid for the call; the
 * scheduler takes its own references. */
#ifndef KS_CLUSTER_CLIENT_H
#define KS_CLUSTER_CLIENT_H

#include "api/node.h"
#include "api/objects.h"
#include "api/pod.h"
#include "framework/framework.h"

#include <ksched/ksched.h>

/* One change: old and new versions of the object (old NULL for ADDED,
 * new NULL for DELETED), in the fields of its kind: nodes and pods in
 * their own, every other kind in old_obj/new_obj (ks_pvc *, ks_pv *, ...;
 * a ks_workload * for KS_KIND_WORKLOAD). The objects are referenced for
 * the call; the scheduler takes its own references. */
typedef struct ks_watch_event {
    ks_watch_type type;
    ks_kind kind;
    ks_node *old_node, *new_node;
    ks_pod *old_pod, *new_pod;
    void *old_obj, *new_obj;
} ks_watch_event;

typedef void (*ks_watch_fn)(void *arg, const ks_watch_event *ev);

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

typedef struct ks_backend {
    void *ctx;
    /* List every object (ADDED events: nodes first, then pods, in the
     * backend's order), then keep calling fn for every change until stop.
     * The memory backend calls fn synchronously from bind/patch/delete;
     * the kube backend from its watch threads, one call at a time. A
     * relist after a lost watch arrives as the ADDED, MODIFIED and
     * DELETED events that turn the old set into the new one. */
    ks_status *(*start)(void *ctx, ks_watch_fn fn, void *arg);
    void (*stop)(void *ctx);
    ks_status *(*bind)(void *ctx, const ks_pod *pod, const char *node);
    ks_status *(*patch_pod_status)(void *ctx, const ks_pod *pod, const ks_status_patch *patch);
    ks_status *(*delete_pod)(void *ctx, const ks_pod *pod);
    void (*emit_event)(void *ctx, const ks_event_record *ev);
    /* VolumeBinding's PreBind: bind each PV to its claim, or mark a claim
     * to be provisioned on a node (the API updates kube-scheduler makes;
     * the memory backend also does what the PV controller would then do).
     * NULL: volume bindings stay assumed in the plugin. */
    ks_status *(*bind_volumes)(void *ctx, const ks_pod *pod, const ks_volume_binding *b, size_t n);
    /* DynamicResources' ResourceClaim writes (see ks_claim_update in
     * framework.h for what each does; the memory backend applies them to
     * its claims). *updated (RESERVE): a reference to the claim as
     * written, for the plugin's assume cache. NULL: claims stay assumed
     * in the plugin. */
    ks_status *(*update_claim)(void *ctx, const ks_claim_update *u, struct ks_resource_claim **updated);
    /* Whether the initial list of every kind the scheduler needs has been
     * delivered (upstream's WaitForCacheSync). NULL: start() delivers it
     * before returning. */
    bool (*synced)(void *ctx);
} ks_backend;

#endif
