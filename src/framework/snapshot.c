#include "framework/snapshot.h"
#include "api/node.h"
#include "api/pod.h"
#include "framework/status.h"
#include "util/xalloc.h"

#include <stdlib.h>

ks_snapshot *ks_snapshot_new(void) { return ks_xcalloc(1, sizeof(ks_snapshot)); }

void ks_snapshot_free(ks_snapshot *s) {
    if (!s) return;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&s->by_name, &it, &k, &v);) ks_node_info_free(v);
    ks_map_free(&s->by_name);
    ks_map_free(&s->used_pvcs);
    ks_map_free(&s->pos);
    free(s->gens);
    free(s->nodes);
    free(s->with_affinity);
    free(s->with_required_anti);
    free(s);
}

const ks_node_info *ks_snapshot_get(const ks_snapshot *s, ks_id node_name) {
    const ks_node_info *ni = ks_map_get(&s->by_name, (uint64_t)node_name + 1);
    return ni && ni->node ? ni : NULL;
}

bool ks_snapshot_pvc_used(const ks_snapshot *s, ks_id ns, ks_id claim) {
    return ks_map_get(&s->used_pvcs, ((((uint64_t)ns << 32) | claim) + 1)) != NULL;
}

size_t ks_snapshot_num_nodes(const ks_snapshot *s) { return s ? s->nnodes : 0; }

const ks_node_info *ks_snapshot_node(const ks_snapshot *s, size_t i) {
    return s && i < s->nnodes ? s->nodes[i] : NULL;
}

const ks_node_info *ks_snapshot_node_by_name(const ks_snapshot *s, const char *name) {
    ks_id id = ks_intern_find(name);
    return id == KS_ID_INVALID ? NULL : ks_snapshot_get(s, id);
}
