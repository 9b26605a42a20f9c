/* MostAllocated: favour nodes with more requested capacity (bin packing).
 * Per resource requested * 100 / capacity, with requested capped at
 * capacity (pods without requests count the defaults and may overshoot),
 * then the weighted average in integers. */
#include "plugins/noderesources/resource_allocation.h"

int64_t ks_most_requested_score(int64_t requested, int64_t capacity) {
    if (capacity == 0) return 0;
    if (requested > capacity) requested = capacity;
    return requested * KS_MAX_NODE_SCORE / capacity;
}

int64_t ks_most_resource_scorer(const ks_resource_allocation_scorer *r, const int64_t *requested,
                                const int64_t *allocatable) {
    int64_t node_score = 0, weight_sum = 0;
    for (uint32_t i = 0; i < r->nresources; i++) {
        if (allocatable[i] == 0) continue;
        int64_t w = r->resources[i].weight;
        node_score += ks_most_requested_score(requested[i], allocatable[i]) * w;
        weight_sum += w;
    }
    return weight_sum == 0 ? 0 : node_score / weight_sum;
}
