/* LeastAllocated: favour nodes with more unrequested capacity. Per
 * resource (capacity - requested) * 100 / capacity, then the weighted
 * average, all in integer arithmetic. */
#include "plugins/noderesources/resource_allocation.h"

int64_t ks_least_requested_score(int64_t requested, int64_t capacity) {
    if (capacity == 0 || requested > capacity) return 0;
    return (capacity - requested) * KS_MAX_NODE_SCORE / capacity;
}

int64_t ks_least_resource_scorer(const ks_resource_allocation_scorer *r, const int64_t *requested,
                                 const int64_t *allocatable) {
    int64_t node_score = 0, weight_sum = 0;
    for (uint32_t i = 0; i < r->nresources; i++) {
        if (allocatable[i] == 0) continue;
        int64_t w = r->resources[i].weight;
        node_score += ks_least_requested_score(requested[i], allocatable[i]) * w;
        weight_sum += w;
    }
    return weight_sum == 0 ? 0 : node_score / weight_sum;
}
