/* The scheduling queue (upstream backend/queue, v1.34 defaults: queueing
 * hints on, pop from backoffQ on):
 *
 *   activeQ        pods ready to be tried, ordered by the QueueSort plugin
 *   backoffQ       pods waiting out their backoff, ordered by expiry then
 *                  QueueSort; popped directly when activeQ is empty
 *   errorBackoffQ  pods that failed with an error (not a rejection)
 *   unschedulable  pods rejected by plugins, waiting for a cluster event
 *                  that one of their rejecting plugins registered for (or
 *                  the 5 minute leftover flush)
 *
 * Gated pods (PreEnqueue rejected) stay in the unschedulable map until an
 * event their gating plugin registered for moves them.
 *
 * Events that arrive while a pod is being scheduled ("in flight") are
 * remembered and considered when the pod comes back rejected.
 *
 * Queueing hints: an event requeues a pod when one of its rejecting
 * plugins registered the event (EventsToRegister) and that plugin's
 * QueueingHint, given the old and new object, says Queue (no hint: Queue;
 * an error: Queue). A plugin that registered nothing is interested in
 * every event.
 *
 * The nominator (pods nominated to nodes by preemption) lives here too.
 *
 * Thread-safe: one mutex; ks_queue_pop can block (real clock). */
#ifndef KS_QUEUE_H
#define KS_QUEUE_H

#include "framework/framework.h"
#include "util/clock.h"

#include <ksched/framework.h>
#include <ksched/ksched.h>

typedef struct ks_queue ks_queue;

typedef enum ks_qwhere {
    KS_Q_NONE = 0,    /* in flight (popped) or gone */
    KS_Q_ACTIVE,
    KS_Q_BACKOFF,
    KS_Q_ERROR_BACKOFF,
    KS_Q_UNSCHEDULABLE,
} ks_qwhere;

/* A pod in the queue (struct in queue_internal.h, src/backend only).
 * ks_queued_pod_pod, _timestamp_ns, _attempts and _initial_attempt_ns
 * are <ksched/ksched.h>'s; these are the scheduler's. */
ks_framework *ks_queued_pod_framework(const ks_queued_pod *qp); /* the pod's profile; NULL: none */
ks_qwhere ks_queued_pod_where(const ks_queued_pod *qp);
bool ks_queued_pod_has_initial_attempt(const ks_queued_pod *qp);
/* The plugins that rejected it in its last attempt (Unschedulable /
 * Pending), and the plugin index that gates it (-1: not gated). */
const ks_plugin_mask *ks_queued_pod_unschedulable_plugins(const ks_queued_pod *qp);
const ks_plugin_mask *ks_queued_pod_pending_plugins(const ks_queued_pod *qp);
int ks_queued_pod_gating_plugin(const ks_queued_pod *qp);
/* Why it last left the unschedulable pods: the event's label (NULL when
 * it did not) and the plugin whose QueueingHint said Queue (NULL: none). */
const char *ks_queued_pod_requeue_event(const ks_queued_pod *qp);
const char *ks_queued_pod_requeue_plugin(const ks_queued_pod *qp);
/* A failed attempt's verdict, for the requeue (upstream
 * handleSchedulingFailure): the rejecting plugins and whether an
 * extender rejected it. */
void ks_queued_pod_set_rejectors(ks_queued_pod *qp, const ks_plugin_mask *unschedulable,
                                 const ks_plugin_mask *pending, bool extender_rejected);
/* Requeue this version of the pod (referenced) instead. */
void ks_queued_pod_set_pod(ks_queued_pod *qp, ks_pod *pod);

typedef enum { KS_NOMINATE_NOOP = 0, KS_NOMINATE_OVERRIDE } ks_nominating_mode;

typedef struct ks_nominating_info {
    ks_nominating_mode mode;
    ks_id node; /* with OVERRIDE: 0 clears */
} ks_nominating_info;

typedef struct ks_queue_options {
    ks_clock *clock;
    int64_t initial_backoff_ns;       /* podInitialBackoffSeconds */
    int64_t max_backoff_ns;           /* podMaxBackoffSeconds */
    int64_t max_in_unschedulable_ns;  /* 0 = 5 minutes */
    /* The profiles; the first one's QueueSort orders activeQ (upstream
     * requires every profile to use the same QueueSort). */
    ks_framework *const *frameworks;
    size_t nframeworks;
    /* The latest version of a pod as the backend reported it (referenced),
     * NULL when it does not exist. Used by the nominator. */
    ks_pod *(*lookup_pod)(void *ctx, uint64_t pod_key);
    void *ctx;
} ks_queue_options;

ks_queue *ks_queue_new(const ks_queue_options *o);
void ks_queue_free(ks_queue *q);
/* Wake a blocked ks_queue_pop; later pops return NULL. */
void ks_queue_close(ks_queue *q);

/* A new unscheduled pod. */
void ks_queue_add(ks_queue *q, ks_pod *pod);
/* An unscheduled pod changed: the events of the change
 * (ks_pod_change_events) go through the rejecting plugins' hints. */
void ks_queue_update(ks_queue *q, ks_pod *old_pod, ks_pod *new_pod);
void ks_queue_delete(ks_queue *q, const ks_pod *pod);

/* Block until a pod can be popped (activeQ or backoffQ not empty) or the
 * queue is closed (false): the threaded loop's wait, on the real clock. */
bool ks_queue_wait(ks_queue *q);
/* The next pod to schedule (in flight from now on, owned by the caller
 * until handed back with ks_queue_add_unschedulable or freed with
 * ks_queue_done + ks_queued_pod_free). NULL when there is none or the
 * queue is closed; never blocks. */
ks_queued_pod *ks_queue_pop(ks_queue *q);
/* Take one given pod out of whichever sub-queue holds it, as a pop would
 * (the simulator's trace mode picks the order itself). NULL if absent. */
ks_queued_pod *ks_queue_pop_pod(ks_queue *q, uint64_t pod_key);
/* The pod's scheduling attempt is over as far as events are concerned. */
void ks_queue_done(ks_queue *q, uint64_t pod_key);
void ks_queued_pod_free(ks_queued_pod *qp);
/* Hand a failed pod back: it goes to unschedulable, backoffQ or activeQ
 * depending on its rejecting plugins and the events seen while in flight.
 * Takes ownership of qp. Error when the pod is already queued. */
ks_status *ks_queue_add_unschedulable(ks_queue *q, ks_queued_pod *qp);
int64_t ks_queue_scheduling_cycle(ks_queue *q);

/* A cluster event: move the unschedulable pods it may help. old_obj and
 * new_obj (of kind; NULL for an add / a delete) are what the hints see
 * (referenced while pods in flight may still need them). precheck (may be
 * NULL) filters the pods considered. */
void ks_queue_move_all(ks_queue *q, ks_cluster_event ev, ks_kind kind, const void *old_obj, const void *new_obj,
                       bool (*precheck)(const ks_pod *pod, void *arg), void *arg);
/* Move a pod from unschedulable/backoff to activeQ (ForceActivate). */
void ks_queue_activate(ks_queue *q, const ks_pod *pod);

/* Timers. */
void ks_queue_flush_backoff_completed(ks_queue *q);
void ks_queue_flush_unschedulable_leftover(ks_queue *q);
/* When the first pod in the (error) backoff queues completes its backoff,
 * INT64_MAX if none. */
int64_t ks_queue_next_backoff_expiry(ks_queue *q);
/* Backoff duration for a failure count (exponential, capped). */
int64_t ks_queue_backoff_duration(const ks_queue *q, uint32_t count);

/* The nominator. */
void ks_queue_add_nominated(ks_queue *q, ks_pod *pod, const ks_nominating_info *ni);
void ks_queue_delete_nominated(ks_queue *q, const ks_pod *pod);
size_t ks_queue_nominated_pods(ks_queue *q, ks_id node, ks_pod **out, size_t max);
size_t ks_queue_nominated_count(ks_queue *q, ks_id node);
/* The node a pod is nominated to in the nominator (0 = none). */
ks_id ks_queue_nominated_node(ks_queue *q, uint64_t pod_key);

/* Introspection (tests, simulator, debugging). */
typedef struct ks_queue_stats {
    size_t active, backoff, error_backoff, unschedulable, gated, in_flight;
} ks_queue_stats;
void ks_queue_stats_get(ks_queue *q, ks_queue_stats *out);
/* Where a pod is; sets *out (a copy: free with ks_queued_pod_free) when
 * out is non-NULL and the pod is queued. */
ks_qwhere ks_queue_where(ks_queue *q, uint64_t pod_key, ks_queued_pod **out);
/* Visit every queued pod (not in flight), under the queue lock. */
void ks_queue_foreach(ks_queue *q, void (*fn)(void *arg, const ks_queued_pod *qp), void *arg);

/* True when activeQ and backoffQ are empty and every pod in the error
 * backoff queue was last tried after the last cluster change (an event
 * that could change a scheduling result): retrying would change nothing,
 * so a simulation is at rest. */
bool ks_queue_at_rest(ks_queue *q);

#endif
