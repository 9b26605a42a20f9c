/* What NodeResourcesFit's scoring strategies and
 * NodeResourcesBalancedAllocation share (upstream resource_allocation.go):
 * the list of scored resources with weights, the pod's request of each, and
 * the per-node (requested, allocatable) pairs handed to a scorer function. */
#ifndef KS_PLUGINS_RESOURCE_ALLOCATION_H
#define KS_PLUGINS_RESOURCE_ALLOCATION_H

#include "api/resource.h"
#include "framework/nodeinfo.h"
#include "plugins/helper/shape_score.h"

#include <ksched/ksched.h>

/* Resources a scorer considers; upstream has no limit, 64 is plenty. */
#define KS_MAX_SCORED_RESOURCES 64
#define KS_MAX_SHAPE_POINTS 64
/* Upstream config.MaxCustomPriorityScore: shape scores are 0..10. */
#define KS_MAX_CUSTOM_PRIORITY_SCORE 10

typedef struct ks_resource_spec {
    const char *name; /* as configured */
    ks_id id;
    ks_rclass cls;
    int64_t weight;
} ks_resource_spec;

typedef struct ks_resource_allocation_scorer ks_resource_allocation_scorer;
typedef int64_t (*ks_resource_scorer_fn)(const ks_resource_allocation_scorer *r,
                                         const int64_t *requested, const int64_t *allocatable);

struct ks_resource_allocation_scorer {
    const char *name; /* strategy name, for logs */
    /* true: node's Requested for cpu/memory (BalancedAllocation); false:
     * NonZeroRequested (the Fit strategies). */
    bool use_requested;
    ks_resource_scorer_fn scorer;
    uint32_t nresources;
    ks_resource_spec resources[KS_MAX_SCORED_RESOURCES];
    /* RequestedToCapacityRatio: the shape, scores already scaled to 0..100. */
    uint32_t nshape;
    ks_shape_point shape[KS_MAX_SHAPE_POINTS];
};

/* The pod's request of each scored resource, in the order of r->resources
 * (upstream calculatePodResourceRequestList). Fit strategies count
 * containers without a cpu/memory request as 100m/200Mi and ignore
 * pod-level requests; BalancedAllocation uses the pod's effective request. */
void ks_pod_resource_request_list(const ks_resource_allocation_scorer *r, const ks_pod *pod,
                                  int64_t *out);
bool ks_is_best_effort_request(const int64_t *requests, uint32_t n);

/* Score a node from precomputed pod requests. */
int64_t ks_resource_allocation_score(const ks_resource_allocation_scorer *r,
                                     const ks_node_info *ni, const int64_t *pod_requests);

/* Scorer functions (least_allocated.c, most_allocated.c,
 * requested_to_capacity_ratio.c, balanced_allocation.c). */
int64_t ks_least_resource_scorer(const ks_resource_allocation_scorer *r, const int64_t *requested,
                                 const int64_t *allocatable);
int64_t ks_most_resource_scorer(const ks_resource_allocation_scorer *r, const int64_t *requested,
                                const int64_t *allocatable);
int64_t ks_requested_to_capacity_ratio_scorer(const ks_resource_allocation_scorer *r,
                                              const int64_t *requested,
                                              const int64_t *allocatable);
int64_t ks_balanced_resource_scorer(const ks_resource_allocation_scorer *r,
                                    const int64_t *requested, const int64_t *allocatable);
int64_t ks_least_requested_score(int64_t requested, int64_t capacity);
int64_t ks_most_requested_score(int64_t requested, int64_t capacity);

/* Args: parse a `resources: [{name, weight}]` list into r->resources,
 * applying the v1 defaults (empty list: cpu and memory; weight 0: 1).
 * Returns false with *err (malloc'd) when malformed. `path` prefixes
 * messages ("scoringStrategy.resources"). */
bool ks_resource_specs_parse(const ks_args *list, const char *path,
                             ks_resource_allocation_scorer *r, char **err);
void ks_resource_specs_default(ks_resource_allocation_scorer *r);

#endif
