/* PodDensityScore: prefer nodes running fewer pods.
 *
 * Score is 100 minus the number of pods on the node (never below 0), and
 * NormalizeScore rescales so that the best node gets 100, the way upstream's
 * DefaultNormalizeScore does: score * 100 / max. */
#include <ksched/ksched.h>

static ks_status *density_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                                const ks_node_info *ni, int64_t *score) {
    (void)self, (void)st, (void)pod;
    int64_t s = KS_MAX_NODE_SCORE - (int64_t)ks_node_info_npods(ni);
    *score = s < 0 ? 0 : s;
    return NULL;
}

static ks_status *density_normalize(void *self, ks_cycle_state *st, const ks_pod *pod,
                                    ks_node_score *scores, size_t n) {
    (void)self, (void)st, (void)pod;
    int64_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max) max = scores[i].score;
    for (size_t i = 0; i < n; i++)
        scores[i].score = max ? scores[i].score * KS_MAX_NODE_SCORE / max : 0;
    return NULL;
}

static const ks_plugin_ops pod_density = {
    .abi_version = KS_ABI_VERSION,
    .name = "PodDensityScore",
    .score = density_score,
    .normalize_score = density_normalize,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &pod_density, NULL) ? 0 : 1;
}
