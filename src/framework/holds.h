/* References lent to plugins. What the handle hands a plugin (a pod from
 * ks_handle_list_pods, a waiting pod) stays valid until the extension
 * point that asked for it returns: the lender takes a reference and
 * registers its release here (ks_hold), and the framework, which marks
 * the thread's holds when it starts an extension point and releases the
 * ones registered since when it returns, lets them go. Nothing else (the
 * worker pool, the scheduler's loops) has to know about it.
 *
 * Per thread: Filter and Score on the worker pool are marked on the
 * worker. Nested points (preemption's dry runs inside PostFilter) release
 * only their own. A handle call outside any extension point (an embedder
 * calling the handle itself) holds until ks_holds_release(). */
#ifndef KS_HOLDS_H
#define KS_HOLDS_H

#include <stddef.h>

/* Keep p until the current extension point returns; then release(p). */
void ks_hold(void (*release)(void *p), void *p);
/* Release every hold of this thread (outside any extension point). */
void ks_holds_release(void);
/* Release the holds registered after mark (ks_holds_mark). */
void ks_holds_release_from(size_t mark);

/* Around every Filter and Score call, node by node: inline, one load of
 * a counter in the thread's storage at each end. */
extern _Thread_local size_t ks_holds_n __attribute__((tls_model("initial-exec")));

static inline size_t ks_holds_mark(void) { return ks_holds_n; }
static inline void ks_holds_release_to(size_t mark) {
    if (ks_holds_n > mark) ks_holds_release_from(mark);
}

#endif
