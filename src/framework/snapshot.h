/* The per-cycle snapshot: copies of the cache's NodeInfos, taken at the
 * start of each scheduling cycle and updated incrementally (only NodeInfos
 * whose generation changed are copied). Plugins see it through the handle
 * as const: one consistent view for the whole cycle. */
#ifndef KS_SNAPSHOT_H
#define KS_SNAPSHOT_H

#include "framework/nodeinfo.h"
#include "util/hash.h"

typedef struct ks_snapshot {
    /* Nodes in upstream's order: zones interleaved round-robin, zones in
     * order of first appearance, nodes of a zone in the order added. */
    ks_node_info **nodes;
    uint32_t nnodes, nodes_cap;
    /* These two are in no particular order (their users sum over them): a
     * node joins at the end and leaves by the last one taking its place. */
    ks_node_info **with_affinity;      /* nodes having pods with (anti)affinity */
    uint32_t nwith_affinity, with_affinity_cap;
    ks_node_info **with_required_anti; /* nodes having pods with required anti-affinity */
    uint32_t nwith_required_anti, with_required_anti_cap;
    ks_map by_name;                    /* node name id + 1 -> ks_node_info* */
    /* nodes[i]->generation, so that a pass can tell which nodes changed
     * without touching every NodeInfo (plugins/helper/nodememo.h) */
    uint64_t *gens;
    ks_map pos;                        /* node name id + 1 -> index in nodes + 1 */
    ks_map used_pvcs;                  /* (ns<<32|claim)+1 -> (void*)1: claims used by any pod */
    uint64_t generation;               /* the cache generation it reflects */
    /* Observability: NodeInfos copied from the cache, in total and by the
     * last update (incrementality is tested through these). */
    uint64_t copied_total;
    uint32_t copied_last;
} ks_snapshot;

ks_snapshot *ks_snapshot_new(void);
void ks_snapshot_free(ks_snapshot *s);
const ks_node_info *ks_snapshot_get(const ks_snapshot *s, ks_id node_name);
/* Build a standalone snapshot from nodes and pods (tests, embedders):
 * pods with node_name set are placed on their nodes. */
ks_snapshot *ks_snapshot_from(ks_node *const *nodes, size_t nnodes, ks_pod *const *pods,
                              size_t npods);
/* s->gens when list is the snapshot's node list, else NULL. */
static inline const uint64_t *ks_snapshot_gens(const ks_snapshot *s, const ks_node_info *const *list,
                                               size_t n) {
    return s && list == (const ks_node_info *const *)s->nodes && n == s->nnodes ? s->gens : NULL;
}
/* Whether a pod bound to some node uses the claim ns/name. */
bool ks_snapshot_pvc_used(const ks_snapshot *s, ks_id ns, ks_id claim);

#endif
