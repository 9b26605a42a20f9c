/* Pods that a Permit plugin asked to wait (upstream waitingPodsMap). Each
 * waiting pod has the set of plugins still to allow it, each with its own
 * deadline. Allow from the last pending plugin lets it go on; a Reject
 * from anyone, or any deadline passing, rejects it.
 *
 * Time: deadlines are on the scheduler's clock. With the real clock a
 * thread blocked in ks_waiting_pod_wait() wakes at the earliest deadline
 * by itself; with the simulated clock nothing blocks: the loop asks for
 * the next deadline, advances the clock and calls ks_waiting_pods_expire(). */
#ifndef KS_WAITING_PODS_H
#define KS_WAITING_PODS_H

#include "util/clock.h"

#include <ksched/ksched.h>

#include <pthread.h>

typedef struct ks_waiting_pods ks_waiting_pods;

typedef struct ks_waiting_plugin {
    const char *plugin; /* static */
    int64_t timeout_ns;
    int64_t deadline_ns;
} ks_waiting_plugin;

struct ks_waiting_pod {
    ks_waiting_pods *owner;
    ks_pod *pod;               /* referenced */
    ks_waiting_plugin *pending;
    uint32_t npending;
    bool done;                 /* verdict reached */
    ks_status *verdict;        /* NULL = allowed */
    uint32_t refs;             /* map + holds (see _list_held) */
};

ks_waiting_pods *ks_waiting_pods_new(ks_clock *clock);
void ks_waiting_pods_free(ks_waiting_pods *wp);

/* Register a pod; plugins/timeouts are the ones that returned Wait. */
ks_waiting_pod *ks_waiting_pods_add(ks_waiting_pods *wp, ks_pod *pod,
                                    const ks_waiting_plugin *plugins, uint32_t n);
/* Lookup by pod key (ns/name); the result stays valid until the pod is
 * removed. */
ks_waiting_pod *ks_waiting_pods_get(ks_waiting_pods *wp, uint64_t pod_key);
/* Remove from the map (the waiter does this once it has the verdict). */
void ks_waiting_pods_remove(ks_waiting_pods *wp, uint64_t pod_key);
size_t ks_waiting_pods_count(ks_waiting_pods *wp);

/* For plugins (ks_handle_waiting_pods): the waiting pods (up to max, in
 * insertion order; returns how many there are), each written to out held
 * (framework/holds.h) until the extension point returns, so that the
 * binding cycle of a pod decided meanwhile cannot free it under the
 * plugin. */
size_t ks_waiting_pods_list_held(ks_waiting_pods *wp, ks_waiting_pod **out, size_t max);
/* The waiting pod with this uid, held as above; NULL when none. */
ks_waiting_pod *ks_waiting_pods_find_uid_held(ks_waiting_pods *wp, const char *uid);

/* Reject a waiting pod (deleted, preempted); false when not waiting. */
bool ks_waiting_pods_reject(ks_waiting_pods *wp, uint64_t pod_key, const char *plugin,
                            const char *msg);

/* Wait for the verdict (block: on the real clock, until it comes or the
 * deadline passes; the simulated clock does not wait: false at once when
 * there is none yet). On true *verdict is the caller's (NULL = allowed). */
bool ks_waiting_pod_wait(ks_waiting_pod *w, bool block, ks_status **verdict);
bool ks_waiting_pod_decided(ks_waiting_pod *w);
/* Reject every undecided waiting pod with msg (shutdown). */
void ks_waiting_pods_reject_all(ks_waiting_pods *wp, const char *msg);

/* Earliest pending deadline, INT64_MAX when none. */
int64_t ks_waiting_pods_next_deadline(ks_waiting_pods *wp);
/* Reject every pod whose deadline is <= now (simulated clock). Returns how
 * many were rejected. */
size_t ks_waiting_pods_expire(ks_waiting_pods *wp, int64_t now);

/* Called (outside the lock) whenever a waiting pod gets its verdict, so
 * that the real-time loop can resume its parked binding cycle. fn NULL:
 * none. Not called by ks_waiting_pods_reject_all. */
void ks_waiting_pods_set_notify(ks_waiting_pods *wp, void (*fn)(void *arg, ks_waiting_pod *w),
                                void *arg);

#endif
