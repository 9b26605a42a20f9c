/* RequestedToCapacityRatio: score each resource by a user-given piecewise
 * linear function of its utilization (0..100 percent), then average with
 * weights, rounding to nearest as upstream does with math.Round. */
#include "plugins/noderesources/resource_allocation.h"

#include <math.h>

#define MAX_UTILIZATION 100

static int64_t resource_score(const ks_resource_allocation_scorer *r, int64_t requested,
                              int64_t capacity) {
    if (capacity == 0 || requested > capacity)
        return ks_broken_linear(r->shape, r->nshape, MAX_UTILIZATION);
    return ks_broken_linear(r->shape, r->nshape, requested * MAX_UTILIZATION / capacity);
}

int64_t ks_requested_to_capacity_ratio_scorer(const ks_resource_allocation_scorer *r,
                                              const int64_t *requested,
                                              const int64_t *allocatable) {
    int64_t node_score = 0, weight_sum = 0;
    for (uint32_t i = 0; i < r->nresources; i++) {
        if (allocatable[i] == 0) continue;
        int64_t w = r->resources[i].weight;
        int64_t s = resource_score(r, requested[i], allocatable[i]);
        /* Upstream leaves resources scoring 0 out of the average. */
        if (s > 0) {
            node_score += s * w;
            weight_sum += w;
        }
    }
    if (weight_sum == 0) return 0;
    return (int64_t)round((double)node_score / (double)weight_sum);
}
