/* The one interface between the scheduler and the world (upstream's
 * clientset and informers): list/watch the objects (every kind the
 * scheduler or a plugin reads), and execute the typed calls of
 * api_calls.h. Two implementations: the in-memory cluster (src/sim,
 * simulate and tests) and the kube-apiserver client (src/kube). Nothing
 * above src/kube knows HTTP exists.
 *
 * Objects are immutable and reference counted (ks_pod, ks_node): a change
 * is a new object. Watch callbacks get references valid for the call; the
 * scheduler takes its own references. */
#ifndef KS_CLUSTER_CLIENT_H
#define KS_CLUSTER_CLIENT_H

#include "api/node.h"
#include "api/objects.h"
#include "api/pod.h"
#include "backend/api_calls.h"
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

typedef struct ks_cluster_client {
    void *ctx;
    /* List every object (ADDED events: nodes first, then pods, in the
     * client's order), then keep calling fn for every change until stop.
     * The in-memory cluster calls fn synchronously from execute; the
     * kube-apiserver client from its watch threads, one call at a time. A
     * relist after a lost watch arrives as the ADDED, MODIFIED and DELETED
     * events that turn the old set into the new one. */
    ks_status *(*start)(void *ctx, ks_watch_fn fn, void *arg);
    void (*stop)(void *ctx);
    /* Execute one write (api_calls.h); NULL on success; a KS_SKIP status:
     * not made (the trace's volume bindings), the plugin keeps it assumed. */
    ks_status *(*execute)(void *ctx, const ks_api_call *call);
    /* The call types execute makes (KS_CALL_BIT each). Object writes it
     * does not make stay assumed in their plugins. */
    uint32_t executes;
    /* Optional: start one call of a type in `starts` (a subset of
     * executes) without waiting for its answer. done gets the result
     * (owned by done; NULL on success) exactly once: from the client's own
     * thread, or from this one before execute_async returns (an event
     * handed to a queue, a request that could not be sent). The call is
     * borrowed until execute_async returns. The dispatcher's run mode uses
     * it to make a binding or an event without a thread of its own in
     * between (api_dispatcher.c try_direct). */
    void (*execute_async)(void *ctx, const ks_api_call *call, void (*done)(void *arg, ks_status *result),
                          void *arg);
    uint32_t starts;
    /* Whether the initial list of every kind the scheduler needs has been
     * delivered (upstream's WaitForCacheSync). NULL: start() delivers it
     * before returning. */
    bool (*synced)(void *ctx);
} ks_cluster_client;

#endif
