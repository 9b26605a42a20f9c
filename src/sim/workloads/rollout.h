/* A workload's rollout of a changed template, stepped while the
 * simulation runs (ks_wl_step): the Deployment controller's rolling.go and
 * recreate.go, the DaemonSet controller's update.go (with its manage
 * loop), the StatefulSet controller's update part of
 * stateful_set_control.go. A pod counts as available once bound. */
#ifndef KS_WL_ROLLOUT_H
#define KS_WL_ROLLOUT_H

#include "sim/workloads/workloads.h"

typedef struct wl_rollout {
    const ks_workload *w;
    ks_workload_kind kind;
    const char *strategy;
    bool recreate, parallel;
    int32_t replicas, max_surge, max_unavailable, partition, desired;
    /* Deployment: old[nold] and fresh[nfresh], two lists; `next` fresh
     * pods created, `old_removed` old ones deleted, in order.
     * DaemonSet, StatefulSet: nold == nfresh slots with flags. Every
     * non-NULL pod is referenced. */
    ks_pod **old, **fresh;
    uint8_t *flags;
    uint32_t nold, nfresh, next, old_removed;
} wl_rollout;

/* Take over what ks_workload_expand built (its rollout vectors). */
void wl_rollout_init(wl_rollout *r, const ks_workload *w, ks_wl_objects *x);
void wl_rollout_free(wl_rollout *r);
/* One sync of the controller; how many pods it created or deleted. */
uint32_t wl_rollout_step(wl_rollout *r, const ks_wl_step_ops *ops);
/* The end the rollout aims at, for runs that cannot step it: the old pods
 * to delete and the new ones to create, each written to its list
 * (borrowed). */
void wl_rollout_end(const wl_rollout *r, ks_pod ***gone, uint32_t *ngone, ks_pod ***made, uint32_t *nmade);
void wl_rollout_state(const wl_rollout *r, bool (*is_bound)(void *ctx, const ks_pod *p), void *ctx,
                      ks_wl_rollout_state *out);

#endif
