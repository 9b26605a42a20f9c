/* The asynchronous API dispatcher (upstream backend/api_dispatcher): every
 * call the scheduler makes to the backend — bindings, pod status patches,
 * pod deletions, events — is queued here and executed off the scheduling
 * thread (run mode: a dispatcher thread; simulated mode: by the loop,
 * deterministically, in queue order).
 *
 * Calls for the same pod are merged as upstream's call queue does: one
 * pending call per pod; a less relevant call than the pending one is
 * skipped, a more relevant one replaces it, two status patches merge (the
 * newer one wins field by field, keeping the older nominatedNodeName
 * override and condition when the newer has none), and a status patch that
 * would change nothing is skipped. Relevance: status patch < binding <
 * deletion. Events are never merged. */
#ifndef KS_API_DISPATCHER_H
#define KS_API_DISPATCHER_H

#include "scheduler/backend.h"

typedef enum ks_call_type {
    KS_CALL_EVENT = 0,
    KS_CALL_STATUS_PATCH,
    KS_CALL_BINDING,
    KS_CALL_DELETE,
    KS_CALL_TYPES
} ks_call_type;

const char *ks_call_type_name(ks_call_type t); /* upstream's: "pod_status_patch", ... */

typedef void (*ks_call_done_fn)(void *arg, const ks_status *result);

typedef struct ks_api_dispatcher ks_api_dispatcher;

/* threaded: execute on a dispatcher thread (run mode); otherwise only
 * ks_api_dispatcher_drain executes calls. */
ks_api_dispatcher *ks_api_dispatcher_new(const ks_backend *b, ks_clock *clock, bool threaded);
/* Stops the thread; pending calls are dropped (their done callbacks get an
 * Error status). */
void ks_api_dispatcher_free(ks_api_dispatcher *d);

/* Queue calls. done (optional) is called exactly once, from the executing
 * thread, with NULL on success, a Skip status when the call was skipped or
 * overwritten, or the backend's error. Returns the Skip status (caller's)
 * when the call was skipped at once, else NULL. */
ks_status *ks_api_dispatcher_patch_status(ks_api_dispatcher *d, const ks_pod *pod,
                                          const ks_status_patch *patch, ks_call_done_fn done,
                                          void *arg);
ks_status *ks_api_dispatcher_bind(ks_api_dispatcher *d, const ks_pod *pod, const char *node,
                                  ks_call_done_fn done, void *arg);
ks_status *ks_api_dispatcher_delete(ks_api_dispatcher *d, const ks_pod *pod,
                                    ks_call_done_fn done, void *arg);
void ks_api_dispatcher_event(ks_api_dispatcher *d, const ks_pod *regarding, const char *type,
                             const char *reason, const char *action, const char *note);

/* Queue a binding and wait for its result (the Bind extension point waits
 * like upstream's DefaultBinder). Simulated: drains the queue up to it. */
ks_status *ks_api_dispatcher_bind_sync(ks_api_dispatcher *d, const ks_pod *pod,
                                       const char *node);

/* Execute everything pending now, on the calling thread (simulated mode).
 * Returns the number of calls executed. */
size_t ks_api_dispatcher_drain(ks_api_dispatcher *d);
size_t ks_api_dispatcher_pending(ks_api_dispatcher *d);
/* Wait until nothing is pending or executing (threaded mode). */
void ks_api_dispatcher_flush(ks_api_dispatcher *d);

/* Calls executed against the backend, by type (tests, metrics). */
uint64_t ks_api_dispatcher_executed(ks_api_dispatcher *d, ks_call_type t);
uint64_t ks_api_dispatcher_skipped(ks_api_dispatcher *d, ks_call_type t);

#endif
