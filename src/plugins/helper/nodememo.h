/* What a pass over every node counted per node, kept across scheduling
 * cycles, and the sums of it.
 *
 * InterPodAffinity and PodTopologySpread count, in PreFilter and PreScore,
 * the pods of every node of the cluster (upstream does the same, each
 * cycle) into tables keyed by topology pair. Between two cycles one node
 * changes, usually: the one the last pod went to. A node's contribution
 * depends only on the node (its NodeInfo generation: every change to a
 * NodeInfo takes a new, globally unique generation, and copies keep it) and
 * on what the pass asks (the incoming pod's terms or constraints, its
 * namespace, ...: the pass's signature, compared byte for byte). So a pass
 * records, per node position, the pairs that node added (a slot), and the
 * memo keeps the tables summed over the slots: a pass looks at the nodes
 * whose generation moved, takes their old pairs out of the sums and puts
 * the new ones in, and copies the sums.
 *
 * Invariant: for the signature `agg.pass`, agg.val/agg.cnt hold, per key,
 * the sum of the values and the number of entries of the slots at
 * positions [0, agg.n) recorded by that signature. A key whose count drops
 * to 0 is not in the result (a fresh pass would not have added it); a key
 * counted with value 0 is.
 *
 * A memo belongs to one plugin instance and one pass. Usage:
 *
 *     uint64_t pass = ks_nodememo_begin(&m, n, &sig, ntabs);   (0: memo busy)
 *     if (pass) chunks:
 *         ks_nodememo_sum sum; ks_nodememo_sum_init(&sum, &m);
 *         for node i:
 *             const ks_nodememo_slot *hit = ks_nodememo_hit(&m, pass, i, ni, gens);
 *             if (hit) { ks_nodememo_sum_hit(&sum, i, hit); continue; }
 *             ks_nodememo_rec rec; ks_nodememo_rec_init(&rec);
 *             ... ks_nodememo_rec_add(&rec, tab, key, val) for each pair ...
 *             ks_nodememo_sum_store(&sum, pass, i, ni, &rec);
 *         ks_nodememo_sum_flush(&sum);
 *     ok = ks_nodememo_done(&m, pass);     false: a node had too many pairs,
 *                                          count again without the memo
 *     ks_nodememo_result(&m, tab, &table) for each table
 *     ks_nodememo_end(&m, pass);
 *
 * Chunks write disjoint slots and add to the sums through buffers;
 * begin/end hold the memo for one pass at a time (a concurrent pass runs
 * without it: begin returns 0). */
#ifndef KS_NODEMEMO_H
#define KS_NODEMEMO_H

#include "api/selector.h"
#include "framework/nodeinfo.h"
#include "plugins/helper/topocount.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Distinct pairs a node may contribute to a pass that keeps them; one with
 * more makes the pass count again without the memo. */
#define KS_NODEMEMO_MAX 4
#define KS_NODEMEMO_SIGS 4
#define KS_NODEMEMO_TABS 2

typedef struct ks_nodememo_entry {
    uint64_t key;
    int64_t val;
    uint32_t tab; /* which of the pass's tables */
} ks_nodememo_entry;

/* A slot's header; its entries are in a separate array, so that telling
 * which nodes changed reads 32 bytes per node. */
typedef struct ks_nodememo_slot {
    const ks_node_info *ni;
    uint64_t gen;
    uint64_t pass_sig; /* signature id of the pass that recorded it */
    uint64_t n;        /* entries, at ks_nodememo.entries + KS_NODEMEMO_MAX * position */
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
void ks_sig_requirements(ks_sig *s, const ks_requirement *reqs, uint32_t n);
void ks_sig_labels(ks_sig *s, const ks_labels *l);

typedef struct ks_nodememo {
    pthread_mutex_t mu;
    bool busy;
    ks_nodememo_slot *slots;
    ks_nodememo_entry *entries; /* KS_NODEMEMO_MAX per slot */
    size_t cap;
    struct {
        ks_sig sig;
        uint64_t id;
    } sigs[KS_NODEMEMO_SIGS]; /* recent signatures */
    uint32_t next_sig;
    uint64_t next_id;
    /* the sums (see the invariant above) */
    struct {
        uint64_t pass;
        size_t n;
        uint32_t ntabs;
        size_t summed;       /* during a pass: positions below are in the sums */
        atomic_bool overflow; /* during a pass: a node had too many pairs */
        ks_pairtab val[KS_NODEMEMO_TABS], cnt[KS_NODEMEMO_TABS];
        ks_pairtab_par pval[KS_NODEMEMO_TABS], pcnt[KS_NODEMEMO_TABS];
    } agg;
} ks_nodememo;

void ks_nodememo_init(ks_nodememo *m);
void ks_nodememo_free(ks_nodememo *m);
/* Start a pass over n positions filling ntabs tables; returns its
 * signature id, or 0 when the memo is in use by another pass (then count
 * without it). */
uint64_t ks_nodememo_begin(ks_nodememo *m, size_t n, const ks_sig *sig, uint32_t ntabs);
/* After the chunks: false when the sums could not be kept (count again
 * without the memo; the next pass sums from scratch). */
bool ks_nodememo_done(ks_nodememo *m, uint64_t pass);
/* Table tab as a fresh pass would have filled it (nnonzero recounted). */
void ks_nodememo_result(ks_nodememo *m, uint32_t tab, ks_pairtab *out);
/* The sum of key in table tab, false when no node counted it. */
bool ks_nodememo_sum_of(const ks_nodememo *m, uint32_t tab, uint64_t key, int64_t *val);
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

/* A chunk's buffered changes to the sums (the buffers are set up on the
 * first change: most chunks have none). */
typedef struct ks_nodememo_sum {
    ks_nodememo *m;
    bool ready;
    ks_pairbuf val[KS_NODEMEMO_TABS], cnt[KS_NODEMEMO_TABS];
} ks_nodememo_sum;

void ks_nodememo_sum_init(ks_nodememo_sum *s, ks_nodememo *m);
/* A node that did not change: its pairs are already in the sums, unless
 * the sums are being rebuilt. */
void ks_nodememo_sum_hit(ks_nodememo_sum *s, size_t i, const ks_nodememo_slot *hit);
/* A node counted again: its old pairs out of the sums, the new ones in,
 * the slot kept. */
void ks_nodememo_sum_store(ks_nodememo_sum *s, uint64_t pass, size_t i, const ks_node_info *ni,
                           const ks_nodememo_rec *r);
void ks_nodememo_sum_flush(ks_nodememo_sum *s);

/* One chunk [lo, hi) of a pass: nodes that did not change keep their
 * pairs, the others are counted again by count(ni, rec, arg). */
void ks_nodememo_scan(ks_nodememo *m, uint64_t pass, const ks_node_info *const *nodes, const uint64_t *gens,
                      size_t lo, size_t hi, void (*count)(const ks_node_info *ni, ks_nodememo_rec *rec, void *arg),
                      void *arg);

#endif
