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
void ks_capacity_result_free(ks_capacity_result *r);

#endif
