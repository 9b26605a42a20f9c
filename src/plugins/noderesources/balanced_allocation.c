/* NodeResourcesBalancedAllocation: favour nodes whose resources would be
 * used in equal proportion with the pod placed. Score = (1 - std) * 100
 * where std is the standard deviation of the requested/allocatable
 * fractions (each capped at 1) of the configured resources, truncated to
 * an integer, in double precision exactly as upstream computes it. */
#include "plugins/noderesources/resource_allocation.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct balanced_allocation {
    ks_resource_allocation_scorer scorer;
    ks_state_key pre_score_key;
} balanced_allocation;


int64_t ks_balanced_resource_scorer(const ks_resource_allocation_scorer *r,
                                    const int64_t *requested, const int64_t *allocatable) {
    double fractions[KS_MAX_SCORED_RESOURCES];
    double total = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->nresources; i++) {
        if (allocatable[i] == 0) continue;
        double f = (double)requested[i] / (double)allocatable[i];
        if (f > 1) f = 1;
        total += f;
        fractions[n++] = f;
    }
    double std = 0;
    /* Two resources (the usual cpu and memory): the deviation is half the
     * difference; more: the population standard deviation. */
    if (n == 2) {
        std = fabs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
        double mean = total / (double)n, sum = 0;
        for (uint32_t i = 0; i < n; i++) sum = sum + (fractions[i] - mean) * (fractions[i] - mean);
        std = sqrt(sum / (double)n);
    }
    return (int64_t)((1 - std) * (double)KS_MAX_NODE_SCORE);
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    balanced_allocation *pl = ks_xcalloc(1, sizeof(*pl));
    pl->pre_score_key = ks_state_key_get("PreScoreNodeResourcesBalancedAllocation");
    ks_resource_allocation_scorer *r = &pl->scorer;
    r->name = "NodeResourcesBalancedAllocation";
    r->use_requested = true;
    r->scorer = ks_balanced_resource_scorer;
    if (!ks_resource_specs_parse(ks_args_get(args, "resources"), "resources", r, err)) {
        free(pl);
        return NULL;
    }
    /* Validation as upstream: names unique, every weight 1. */
    ks_strbuf b;
    ks_sb_init(&b);
    int nerr = 0;
    for (uint32_t i = 0; i < r->nresources; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (r->resources[j].id == r->resources[i].id) {
                ks_sb_printf(&b, "%sresources[%u].name: Duplicate value: \"%s\"", nerr++ ? ", " : "",
                             i, r->resources[i].name);
                break;
            }
        }
        if (r->resources[i].weight != 1)
            ks_sb_printf(&b, "%sresources[%u].weight: Invalid value: %lld: must be 1",
                         nerr++ ? ", " : "", i, (long long)r->resources[i].weight);
    }
    if (nerr) {
        *err = nerr == 1 ? ks_sb_take(&b) : ks_xasprintf("[%s]", ks_sb_str(&b));
        ks_sb_free(&b);
        free(pl);
        return NULL;
    }
    ks_sb_free(&b);
    return pl;
}

static void destroy(void *self) { free(self); }

static ks_status *pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes) {
    balanced_allocation *pl = self;
    /* the scored resources' requests only (not KS_MAX_SCORED_RESOURCES):
     * the state waits with the binding cycle */
    int64_t *req = ks_cycle_state_alloc(st, (pl->scorer.nresources ? pl->scorer.nresources : 1) * sizeof(int64_t));
    ks_pod_resource_request_list(&pl->scorer, pod, req);
    /* A pod requesting nothing would otherwise pile onto the most
     * balanced node (kubernetes#129138): not scored at all. */
    if (ks_is_best_effort_request(req, pl->scorer.nresources))
        return ks_status_new(KS_SKIP, NULL);
    ks_cycle_state_write(st, pl->pre_score_key, req, NULL, NULL);
    return NULL;
}

static ks_status *score(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *ni, int64_t *out) {
    balanced_allocation *pl = self;
    const int64_t *req = ks_cycle_state_read(st, pl->pre_score_key);
    int64_t local[KS_MAX_SCORED_RESOURCES];
    if (!req) {
        ks_pod_resource_request_list(&pl->scorer, pod, local);
        if (ks_is_best_effort_request(local, pl->scorer.nresources)) {
            *out = 0;
            return NULL;
        }
        req = local;
    }
    if (pl->scorer.nresources == 0) return ks_status_new(KS_ERROR, "resources not found");
    *out = ks_resource_allocation_score(&pl->scorer, ni, req);
    return NULL;
}

const ks_plugin_ops ks_plugin_node_resources_balanced_allocation = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeResourcesBalancedAllocation",
    .create = create,
    .destroy = destroy,
    .pre_score = pre_score,
    .score = score,
};
