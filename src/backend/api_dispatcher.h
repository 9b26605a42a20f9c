/* The asynchronous API dispatcher (upstream backend/api_dispatcher): every
 * call the scheduler makes to the backend — bindings, pod status patches,
 * pod deletions, events — is queued here and executed off the scheduling
 * thread: by a bounded set of worker threads (run mode; upstream allows
 * `parallelism` calls in flight, 16 by default; deletions get as many
 * threads more), or by the stepping loop,
 * deterministically, in queue order (ks_api_dispatcher_drain).
 *
 * Calls for the same pod are merged as upstream's call queue does, by the
 * rules of their types (api_calls.h, ks_call_rules): one queued call per
 * pod; a less relevant call than the queued one is skipped, a more
 * relevant one replaces it, two calls of a type with a merge rule merge
 * (status patches: the newer one wins field by field), and a call that
 * would change nothing is skipped. Relevance: status patch < binding <
 * deletion; events are never merged. Two calls for the same pod never run
 * at once: a call queued while another for its pod is in flight waits for
 * it to end, then goes to the back of the queue. Queue order: bindings
 * first, then deletions, then the rest, each in arrival order (the
 * types' lanes). The dispatcher knows no type by name.
 *
 * Run mode, a client with execute_async (the kube client): a binding
 * cycle's binding that no call of its pod waits behind, and every event,
 * go from the caller's thread to the client, no worker in between (the
 * binding is still in flight for the pod's other calls and for closing). */
#ifndef KS_API_DISPATCHER_H
#define KS_API_DISPATCHER_H

#include "backend/cluster_client.h"

typedef void (*ks_call_done_fn)(void *arg, const ks_status *result);

typedef struct ks_api_dispatcher ks_api_dispatcher;

/* How long closing waits for calls in flight (real time) before it gives
 * up on them. */
#define KS_API_DISPATCHER_GRACE_NS (5LL * KS_NS_PER_SEC)

/* workers > 0: that many threads execute calls, and as many more execute
 * only deletions (preemption's evictions, which upstream makes outside
 * its dispatcher), started now; 0: nothing runs a call until
 * ks_api_dispatcher_drain or ks_api_dispatcher_start. The dispatcher does
 * not ask which: its owner's run mode calls drain and bind_drain
 * (stepping) or starts workers and calls bind_wait and flush (threaded). */
ks_api_dispatcher *ks_api_dispatcher_new(const ks_cluster_client *b, ks_clock *clock, int workers);
/* Start worker threads, workers of each kind (no-op when some already run). */
void ks_api_dispatcher_start(ks_api_dispatcher *d, int workers);
/* Stop: no call starts from now on. Queued calls are dropped (their done
 * callbacks get an Error status), calls queued later too. Calls in flight
 * may finish within grace_ns of real time; those still running then are
 * abandoned: their done callbacks get an Error status at once, and what
 * the backend answers later is dropped. Returns the number abandoned.
 * The backend must stay usable until its abandoned calls return. */
size_t ks_api_dispatcher_close(ks_api_dispatcher *d, int64_t grace_ns);
/* Closes (KS_API_DISPATCHER_GRACE_NS) if not closed yet, then frees. A
 * worker still inside an abandoned call frees the rest when it returns. */
void ks_api_dispatcher_free(ks_api_dispatcher *d);

/* Queue a copy of a call of a queued type (ks_call_rules.queued). done
 * (optional) is called exactly once, from the executing thread, with NULL
 * on success, a Skip status when the call was skipped or overwritten, or
 * the client's error. Returns the Skip status (caller's) when the call
 * was skipped at once, else NULL. */
ks_status *ks_api_dispatcher_add(ks_api_dispatcher *d, const ks_api_call *call, ks_call_done_fn done, void *arg);

/* The same for each type. done (optional) is called exactly once, from the executing
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
/* A deletion that goes before every deletion queued (deletions go after
 * bindings, before other calls): the last victim of a preemption, whose preemptor may be
 * retried in vain until its deletion event comes. */
ks_status *ks_api_dispatcher_delete_first(ks_api_dispatcher *d, const ks_pod *pod,
                                          ks_call_done_fn done, void *arg);
void ks_api_dispatcher_event(ks_api_dispatcher *d, const ks_pod *regarding, const ks_pod *related,
                             const char *type, const char *reason, const char *action,
                             const char *note);

/* Queue a binding and wait for its result (the Bind extension point waits
 * like upstream's DefaultBinder): started on the client from this thread
 * or answered by the workers (threaded), or
 * by executing the queue on the calling thread, in order, up to it
 * (stepping, no workers). Which one is the caller's run mode's choice. */
ks_status *ks_api_dispatcher_bind_wait(ks_api_dispatcher *d, const ks_pod *pod,
                                       const char *node);
ks_status *ks_api_dispatcher_bind_drain(ks_api_dispatcher *d, const ks_pod *pod,
                                        const char *node);

/* A plugin's write (OBJECT_WRITE), executed at once on the calling
 * thread, as upstream's plugins make these calls themselves (PreBind,
 * Unreserve, PostFilter), outside its dispatcher (nothing to merge: the
 * cycle waits for each). A KS_SKIP status when the client does not make
 * it (the plugin then keeps what it wrote assumed); NULL for a no-op.
 * Counted in ks_api_dispatcher_executed. */
ks_status *ks_api_dispatcher_execute_now(ks_api_dispatcher *d, const ks_api_call *call);

/* Execute everything queued now, on the calling thread, in queue order
 * (the stepping loop; no workers). Returns the number of calls executed. */
size_t ks_api_dispatcher_drain(ks_api_dispatcher *d);
/* Calls queued or in flight. */
size_t ks_api_dispatcher_pending(ks_api_dispatcher *d);
/* Wait until the workers leave nothing queued or in flight. */
void ks_api_dispatcher_flush(ks_api_dispatcher *d);

/* Calls executed against the backend, by type (tests, metrics). */
uint64_t ks_api_dispatcher_executed(ks_api_dispatcher *d, ks_call_type t);
/* The most calls that were in flight at once (tests). */
uint32_t ks_api_dispatcher_max_in_flight(ks_api_dispatcher *d);
/* Worker threads started so far (tests): they start as calls wait for
 * one, up to the workers given to ks_api_dispatcher_start per kind. */
int ks_api_dispatcher_threads(ks_api_dispatcher *d);

#endif
