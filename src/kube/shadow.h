/* Shadow mode (ksched run --shadow): ksched watches a cluster another
 * scheduler schedules, decides every pod that scheduler binds, and
 * records whether they agree. It writes nothing: the backend it gives
 * the scheduler wraps the kube backend's watches, and its bind, status
 * patch, deletion, event, volume and claim writes do nothing.
 *
 * When the watch shows a pending pod of one of ksched's profiles bound
 * by someone else, ksched first runs one scheduling cycle for the
 * pending version on its cache as it is at that moment (every binding
 * seen before is in it), then hands the binding on: the real node
 * replaces whatever ksched assumed, so ksched's own choices never
 * linger in its cache. The scheduler is driven by these calls only
 * (its stepping interface, one event at a time under the backend's
 * delivery lock); ks_scheduler_run is not used.
 *
 * Agreement, per pod:
 *   same-top      the real node is feasible for ksched and has ksched's
 *                 top score (ties count)
 *   feasible      feasible for ksched, with a lower score
 *   infeasible    ksched's filters reject the real node (or the pod
 *                 fits nowhere and ksched would not preempt)
 *   incomparable  a preemption was involved (the real scheduler had
 *                 nominated the pod, or ksched would preempt), or ksched
 *                 could not try the pod (not in its queue, an error)
 * See docs/run.md. */
#ifndef KS_KUBE_SHADOW_H
#define KS_KUBE_SHADOW_H

#include "scheduler/scheduler.h"

#include <stdio.h>

typedef struct ks_shadow ks_shadow;

typedef enum ks_shadow_agreement {
    KS_SHADOW_SAME_TOP = 0,
    KS_SHADOW_FEASIBLE,
    KS_SHADOW_INFEASIBLE,
    KS_SHADOW_INCOMPARABLE,
    KS_SHADOW_NAGREEMENT
} ks_shadow_agreement;

const char *ks_shadow_agreement_name(ks_shadow_agreement a);

typedef struct ks_shadow_options {
    const ks_cluster_client *inner; /* borrowed: the kube backend (watches) */
    FILE *report;            /* borrowed, optional: one JSON line per pod */
} ks_shadow_options;

ks_shadow *ks_shadow_new(const ks_shadow_options *o);
void ks_shadow_free(ks_shadow *sh);
/* The backend and the observer to give the scheduler. */
const ks_cluster_client *ks_shadow_backend(ks_shadow *sh);
const ks_observer *ks_shadow_observer(ks_shadow *sh);
/* The scheduler made with them (before ks_scheduler_start). */
void ks_shadow_attach(ks_shadow *sh, ks_scheduler *s);

typedef struct ks_shadow_stats {
    uint64_t decisions[KS_SHADOW_NAGREEMENT];
} ks_shadow_stats;
void ks_shadow_stats_get(ks_shadow *sh, ks_shadow_stats *out);

#endif
