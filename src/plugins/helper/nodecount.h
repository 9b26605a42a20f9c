/* One count per node, kept across scheduling cycles.
 *
 * PodTopologySpread's Score counts, on every node it scores, the pods
 * matching the hostname constraint's selector (upstream does so each
 * cycle). What a node counts depends only on the node's NodeInfo
 * generation (globally unique per change; copies keep it) and on the
 * question (namespace and selector: a signature, compared byte for byte,
 * as ks_nodememo's). Between two cycles usually one node changes, so the
 * counts of the others are read back instead of walking their pods.
 *
 * Slots are indexed by the node's name id: Score is handed a NodeInfo, not
 * its position. A pass holds the cache from begin (before the parallel
 * Score calls, which write distinct slots: one per node) to end; a
 * concurrent pass gets 0 from begin and counts without it.
 *
 *     uint32_t pass = ks_nodecount_begin(&c, &sig, nodes, n);
 *     per node (any thread): ks_nodecount_slot *s = ks_nodecount_at(&c, pass, ni);
 *         if (s && ks_nodecount_hit(s, pass, ni)) use s->val;
 *         else { count; if (s) ks_nodecount_keep(s, pass, ni, count); }
 *     ks_nodecount_end(&c, pass);
 */
#ifndef KS_NODECOUNT_H
#define KS_NODECOUNT_H

#include "framework/nodeinfo.h"
#include "plugins/helper/nodememo.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define KS_NODECOUNT_SIGS 4

typedef struct ks_nodecount_slot {
    uint64_t gen;
    uint32_t pass; /* signature id of the pass that stored it */
    int32_t val;
} ks_nodecount_slot;

typedef struct ks_nodecount {
    pthread_mutex_t mu;
    bool busy;
    ks_nodecount_slot *slots; /* by node name id */
    size_t n;
    struct {
        ks_sig sig;
        uint32_t id;
    } sigs[KS_NODECOUNT_SIGS]; /* recent signatures */
    uint32_t next_sig, next_id;
} ks_nodecount;

void ks_nodecount_init(ks_nodecount *c);
void ks_nodecount_free(ks_nodecount *c);
/* Take the cache for a pass asking sig about nodes (slots are made for
 * their names); 0 when another pass holds it. */
uint32_t ks_nodecount_begin(ks_nodecount *c, const ks_sig *sig, const ks_node_info *const *nodes, size_t n);
void ks_nodecount_end(ks_nodecount *c, uint32_t pass);

/* Node ni's slot during pass, NULL without one (no pass, or a node the
 * pass was not begun with). */
static inline ks_nodecount_slot *ks_nodecount_at(const ks_nodecount *c, uint32_t pass, const ks_node_info *ni) {
    return pass && ni->name < c->n ? &c->slots[ni->name] : NULL;
}

static inline bool ks_nodecount_hit(const ks_nodecount_slot *s, uint32_t pass, const ks_node_info *ni) {
    return s->pass == pass && s->gen == ni->generation;
}

static inline void ks_nodecount_keep(ks_nodecount_slot *s, uint32_t pass, const ks_node_info *ni, int64_t val) {
    /* a count that does not fit is simply not kept */
    if (val < INT32_MIN || val > INT32_MAX) return;
    *s = (ks_nodecount_slot){.gen = ni->generation, .pass = pass, .val = (int32_t)val};
}

#endif
