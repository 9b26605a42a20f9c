/* The one interface between the scheduler and the world: list/watch the
 * objects, bind, patch pod status, delete pods (preemption victims), emit
 * events. Two implementations: the in-memory cluster (src/sim, simulate
 * and tests) and the kube-apiserver client (src/kube). Nothing above
 * src/kube knows HTTP exists.
 *
 * Objects are immutable and reference counted (ks_pod, ks_node): a change
 * is a new object. Watch callbacks get references valid for the call; the
 * scheduler takes its own references. */
#ifndef KS_BACKEND_H
#define KS_BACKEND_H

#include "api/cluster.h"
#include "framework/framework.h"

#include <ksched/ksched.h>

typedef enum ks_watch_type { KS_WATCH_ADDED = 0, KS_WATCH_MODIFIED, KS_WATCH_DELETED } ks_watch_type;

typedef enum ks_kind {
    KS_KIND_NODE = 0,
    KS_KIND_POD,
    KS_KIND_PVC,
    KS_KIND_PV,
    KS_KIND_STORAGE_CLASS,
    KS_KIND_CSINODE,
    KS_KIND_POD_GROUP,
    KS_KIND_NAMESPACE,
    KS_KIND_PDB,
    KS_KIND_PRIORITY_CLASS,
    KS_KIND_WORKLOAD,
    KS_KIND_CSI_DRIVER,
} ks_kind;

/* One change. For nodes and pods old/new are the objects (old NULL for
 * ADDED, new NULL for DELETED); for the other kinds the scheduler re-reads
 * the backend's object store (objects()) and only learns the kind. */
typedef struct ks_watch_event {
    ks_watch_type type;
    ks_kind kind;
    ks_node *old_node, *new_node;
    ks_pod *old_pod, *new_pod;
} ks_watch_event;

typedef void (*ks_watch_fn)(void *arg, const ks_watch_event *ev);

/* An event (events.k8s.io/v1) about a pod. */
typedef struct ks_event_record {
    const ks_pod *regarding;
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
    /* Objects other than nodes and pods, for a backend whose objects never
     * change under a running cycle (the memory backend: read between watch
     * events). NULL when the backend has objects_pin. */
    const ks_cluster *(*objects)(void *ctx);
    ks_status *(*bind)(void *ctx, const ks_pod *pod, const char *node);
    ks_status *(*patch_pod_status)(void *ctx, const ks_pod *pod, const ks_status_patch *patch);
    ks_status *(*delete_pod)(void *ctx, const ks_pod *pod);
    void (*emit_event)(void *ctx, const ks_event_record *ev);
    /* VolumeBinding's PreBind: bind each PV to its claim, or mark a claim
     * to be provisioned on a node (the API updates kube-scheduler makes;
     * the memory backend also does what the PV controller would then do).
     * NULL: volume bindings stay assumed in the plugin. */
    ks_status *(*bind_volumes)(void *ctx, const ks_pod *pod, const ks_volume_binding *b, size_t n);
    /* The same for a backend whose watch threads change objects while
     * cycles run: pin returns the current view (immutable) and keeps it,
     * and every object in it, valid until unpin with the token it set.
     * The scheduler pins one view per scheduling cycle, binding cycle and
     * watch event, so a plugin that reads an object twice in a cycle sees
     * one version. */
    const ks_cluster *(*objects_pin)(void *ctx, uint64_t *token);
    void (*objects_unpin)(void *ctx, uint64_t token);
    /* Whether the initial list of every kind the scheduler needs has been
     * delivered (upstream's WaitForCacheSync). NULL: start() delivers it
     * before returning. */
    bool (*synced)(void *ctx);
} ks_backend;

#endif
