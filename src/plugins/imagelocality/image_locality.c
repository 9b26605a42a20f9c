/* ImageLocality: favour nodes that already have the pod's container
 * images. Each image present counts its size scaled by the fraction of all
 * nodes that have it (so an image on every node does not pull pods to one
 * node); the sum, clamped between 23MB and 1000MB per container, maps
 * linearly onto 0..100. */
#include "plugins/imagelocality/image_locality.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdlib.h>

#define MB (1024LL * 1024)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)

typedef struct image_locality {
    ks_handle *handle;
} image_locality;

static void *create(const ks_args *args, ks_handle *h, char **err) {
    image_locality *pl = ks_xcalloc(1, sizeof(*pl));
    pl->handle = h;
    return pl;
}

static void destroy(void *self) { free(self); }

/* The node's summary of an image by its (normalized) name, or NULL. The
 * snapshot keeps the summaries sorted by name id. */
static const ks_image_state *find_image(const ks_node_info *ni, ks_id name) {
    uint32_t lo = 0, hi = ni->nimages;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ni->images[mid].name < name) lo = mid + 1;
        else hi = mid;
    }
    return lo < ni->nimages && ni->images[lo].name == name ? &ni->images[lo] : NULL;
}

static int64_t scaled_image_score(const ks_image_state *s, int64_t total_nodes) {
    double spread = (double)s->num_nodes / (double)total_nodes;
    return (int64_t)((double)s->size * spread);
}

static int64_t sum_image_scores(const ks_node_info *ni, const ks_pod *pod, int64_t total_nodes) {
    int64_t sum = 0;
    const ks_image_state *s;
    for (uint32_t i = 0; i < pod->ninit; i++)
        if ((s = find_image(ni, pod->init_containers[i].image_id)))
            sum += scaled_image_score(s, total_nodes);
    for (uint32_t i = 0; i < pod->ncontainers; i++)
        if ((s = find_image(ni, pod->containers[i].image_id)))
            sum += scaled_image_score(s, total_nodes);
    return sum;
}

static int64_t calculate_priority(int64_t sum, int64_t ncontainers) {
    int64_t max_threshold = MAX_CONTAINER_THRESHOLD * ncontainers;
    if (sum < MIN_THRESHOLD) sum = MIN_THRESHOLD;
    else if (sum > max_threshold) sum = max_threshold;
    return KS_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD);
}

int64_t ks_image_locality_score(const ks_node_info *ni, const ks_pod *pod, int64_t total_nodes) {
    return calculate_priority(sum_image_scores(ni, pod, total_nodes),
                              (int64_t)pod->ninit + pod->ncontainers);
}

static ks_status *score(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *ni, int64_t *out) {
    image_locality *pl = self;
    *out = ks_image_locality_score(ni, pod, (int64_t)ks_handle_num_nodes(pl->handle));
    return NULL;
}

const ks_plugin_ops ks_plugin_image_locality = {
    .abi_version = KS_ABI_VERSION,
    .name = "ImageLocality",
    .create = create,
    .destroy = destroy,
    .score = score,
};
