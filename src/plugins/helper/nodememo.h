/* What a pass over every node emitted per node, kept across scheduling
 * cycles.
 *
 * InterPodAffinity and PodTopologySpread count, in PreFilter and PreScore,
 * the pods of every node of the cluster (upstream does the same, each
 * cycle). Between two cycles one node changes, usually: the one the last
 * pod went to. A node's contribution to the counts depends only on the
 * node (its NodeInfo generation: every change to a NodeInfo takes a new,
 * globally unique generation, and copies keep it) and on what the pass
 * asks (the incoming pod's terms or constraints, its namespace, ...: the
 * pass's signature). So the pass records, per node position, the pairs it
 * added for that node, and replays them when the node and the signature
 * are the same as last time, without looking at the node's pods.
 *
 * A memo belongs to one plugin instance and one pass. Usage:
 *
 *     ks_sig sig; ks_sig_init(&sig); ks_sig_u64(&sig, ...); ...
 *     uint64_t pass = ks_nodememo_begin(&m, n, &sig);   (0: memo busy)
 *     ... in the chunk function, for node i:
 *         const ks_nodememo_slot *hit = ks_nodememo_hit(&m, pass, i, ni);
 *         if (hit) { replay hit->e[0..n); continue; }
 *         ks_nodememo_rec rec; ks_nodememo_rec_init(&rec);
 *         ... ks_nodememo_rec_add(&rec, tab, key, val) for each pair ...
 *         ks_nodememo_store(&m, pass, i, ni, &rec);
 *     ks_nodememo_end(&m, pass);
 *
 * Chunks write disjoint slots; begin/end hold the memo for one pass at a
 * time (a concurrent pass runs without it). */
#ifndef KS_NODEMEMO_H
#define KS_NODEMEMO_H

#include "api/selector.h"
#include "framework/nodeinfo.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Pairs a node may contribute; a node with more is not memoized. */
#define KS_NODEMEMO_MAX 4
#define KS_NODEMEMO_SIGS 4

typedef struct ks_nodememo_entry {
    uint64_t key;
    int64_t val;
    uint32_t tab; /* which of the pass's tables */
} ks_nodememo_entry;

typedef struct ks_nodememo_slot {
    const ks_node_info *ni;
    uint64_t gen;
    uint64_t pass_sig; /* signature id of the pass that recorded it */
    uint32_t n;
    ks_nodememo_entry e[KS_NODEMEMO_MAX];
} ks_nodememo_slot;

/* A signature: the bytes of everything a pass's per-node results depend on
 * besides the node. Compared exactly (not hashed). */
typedef struct ks_sig {
    unsigned char *b;
    size_t n, cap;
} ks_sig;

void ks_sig_init(ks_sig *s);
void ks_sig_free(ks_sig *s);
void ks_sig_u64(ks_sig *s, uint64_t v);
void ks_sig_selector(ks_sig *s, const ks_label_selector *sel);
void ks_sig_labels(ks_sig *s, const ks_labels *l);

typedef struct ks_nodememo {
    pthread_mutex_t mu;
    bool busy;
    ks_nodememo_slot *slots;
    size_t cap;
    struct {
        ks_sig sig;
        uint64_t id;
    } sigs[KS_NODEMEMO_SIGS]; /* recent signatures */
    uint32_t next_sig;
    uint64_t next_id;
} ks_nodememo;

void ks_nodememo_init(ks_nodememo *m);
void ks_nodememo_free(ks_nodememo *m);
/* Start a pass over n positions; returns its signature id, or 0 when the
 * memo is in use by another pass (then run without it). */
uint64_t ks_nodememo_begin(ks_nodememo *m, size_t n, const ks_sig *sig);
void ks_nodememo_end(ks_nodememo *m, uint64_t pass);

/* The slot recorded for node ni at position i by a pass with this
 * signature, or NULL. gens: the list's generations when the caller has
 * them (ks_snapshot_gens), so that a hit does not read the NodeInfo. */
static inline const ks_nodememo_slot *ks_nodememo_hit(const ks_nodememo *m, uint64_t pass, size_t i,
                                                       const ks_node_info *ni, const uint64_t *gens) {
    if (!pass) return NULL;
    const ks_nodememo_slot *s = &m->slots[i];
    return s->pass_sig == pass && s->ni == ni && s->gen == (gens ? gens[i] : ni->generation) ? s : NULL;
}

/* One node's pairs, merged by (tab, key) as they are emitted. */
typedef struct ks_nodememo_rec {
    uint32_t n;
    bool overflow;
    ks_nodememo_entry e[KS_NODEMEMO_MAX];
} ks_nodememo_rec;

static inline void ks_nodememo_rec_init(ks_nodememo_rec *r) {
    r->n = 0;
    r->overflow = false;
}

static inline void ks_nodememo_rec_add(ks_nodememo_rec *r, uint32_t tab, uint64_t key, int64_t val) {
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->e[i].key == key && r->e[i].tab == tab) {
            r->e[i].val += val;
            return;
        }
    }
    if (r->n == KS_NODEMEMO_MAX) {
        r->overflow = true;
        return;
    }
    r->e[r->n++] = (ks_nodememo_entry){.key = key, .val = val, .tab = tab};
}

void ks_nodememo_store(ks_nodememo *m, uint64_t pass, size_t i, const ks_node_info *ni,
                       const ks_nodememo_rec *r);

#endif
