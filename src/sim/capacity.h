/* Capacity (cluster-capacity's question): how many more replicas of a pod
 * fit on the cluster, where they would go, and what stops the next one.
 * Replicas are scheduled one at a time by the real scheduler on simulated
 * time; they never preempt anything (a capacity answer that evicts running
 * pods would be misleading), so each replica gets preemptionPolicy Never. */
#ifndef KS_CAPACITY_H
#define KS_CAPACITY_H

#include "api/cluster.h"
#include "config/config.h"

#include <ksched/ksched.h>

typedef struct ks_capacity_node {
    ks_id node;
    uint32_t replicas;
} ks_capacity_node;

typedef struct ks_capacity_reason {
    char *reason;
    uint32_t nodes;
} ks_capacity_reason;

typedef struct ks_capacity_result {
    uint32_t replicas;            /* replicas that fit */
    bool hit_max;                 /* stopped because --max was reached */
    ks_capacity_node *per_node;   /* nodes with at least one replica, in node order */
    uint32_t nper_node;
    char *message;                /* FailedScheduling message of the first replica that did not fit */
    ks_capacity_reason *reasons;  /* per-reason node counts of that attempt, by count then text */
    uint32_t nreasons;
} ks_capacity_result;

/* max 0: no limit (stops at the first replica that does not fit, or at
 * 100000 replicas). */
bool ks_capacity(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_pod *tmpl,
                 uint32_t max, ks_capacity_result *out, char **err);

/* Where the replicas come from: make(ctx, i) is replica i (1-based), a
 * new pod (the reference handed over) with the claims it needs (each
 * with a reference handed over, added to the cluster before the pod);
 * NULL when it cannot be made. tmpl is the first replica, for checks. */
typedef struct ks_capacity_source {
    void *ctx;
    ks_pod *(*make)(void *ctx, uint32_t i, ks_pvc **pvcs, uint32_t *npvcs, uint32_t max_pvcs);
} ks_capacity_source;
bool ks_capacity_from(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_pod *tmpl,
                      const ks_capacity_source *src, uint32_t max, ks_capacity_result *out, char **err);
void ks_capacity_result_free(ks_capacity_result *r);

/* A workload's replicas (capacity_workload.c): as its controller adds
 * them when scaled up — a StatefulSet's next ordinals with their claims,
 * otherwise copies of the pod it makes. *first: the first replica
 * (referenced), for the report's header. Not for DaemonSets. */
struct ks_workload;
bool ks_capacity_workload(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg,
                          const struct ks_workload *w, uint64_t seed, uint32_t max, ks_capacity_result *out,
                          ks_pod **first, char **err);
/* A DaemonSet: its pods on every node it targets (*targeted) scheduled
 * on the cluster; res says where each did not fit and why. */
struct ks_sim_result;
bool ks_capacity_daemonset(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg,
                           const struct ks_workload *w, uint64_t seed, struct ks_sim_result *res, int32_t *targeted,
                           char **err);

#endif
