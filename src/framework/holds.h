/* References lent to plugins. What the handle hands a plugin (a pod from
 * ks_handle_list_pods, a waiting pod) stays valid until the extension
 * point that asked for it returns: the lender takes a reference and
 * registers its release here, and the framework, which brackets every
 * extension point it runs with ks_holds_enter/ks_holds_exit, releases the
 * thread's holds when the outermost one returns. Nothing else (the
 * worker pool, the scheduler's loops) has to know about it.
 *
 * Per thread: Filter and Score on the worker pool are bracketed on the
 * worker. A handle call outside any extension point (an embedder calling
 * the handle itself) holds until ks_holds_release() or the thread's next
 * extension point ends. */
#ifndef KS_HOLDS_H
#define KS_HOLDS_H

void ks_holds_enter(void);
void ks_holds_exit(void);
/* Keep p until the current extension point returns; then release(p). */
void ks_hold(void (*release)(void *p), void *p);
/* Release this thread's holds now (outside any extension point). */
void ks_holds_release(void);

#endif
