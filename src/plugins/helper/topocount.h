/* Counting by topology pair, shared by InterPodAffinity and
 * PodTopologySpread.
 *
 * Both plugins count pods per (topology key, topology value) across every
 * node in PreFilter/PreScore, then look counts up per node in Filter/Score.
 * Upstream uses Go maps keyed by string pairs; we key an open-addressing
 * table by a 64-bit pair of interned ids and fill it from the worker pool:
 * each chunk of nodes aggregates into a small local buffer and flushes it
 * with atomic adds, so low-cardinality keys (zones) see one atomic per chunk
 * and high-cardinality keys (hostnames) never serialize on a lock. */
#ifndef KS_TOPOCOUNT_H
#define KS_TOPOCOUNT_H

#include "api/labels.h"
#include "framework/nodeinfo.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct ks_handle;

/* A pair of ids as a table key; never 0. */
static inline uint64_t ks_pair(uint32_t a, uint32_t b) { return (((uint64_t)a << 32) | b) + 1; }
static inline uint32_t ks_pair_a(uint64_t k) { return (uint32_t)((k - 1) >> 32); }
static inline uint32_t ks_pair_b(uint64_t k) { return (uint32_t)(k - 1); }

/* Pair -> int64 count. A key present with count 0 is distinct from an absent
 * key (PodTopologySpread counts empty domains); `nnonzero` is what upstream
 * sees as the map length when entries are deleted on reaching zero. */
typedef struct ks_pairtab {
    uint64_t *keys; /* 0 = empty slot */
    int64_t *vals;
    uint32_t cap;   /* power of two, 0 before the first insert */
    uint32_t nkeys;
    uint32_t nnonzero;
} ks_pairtab;

void ks_pairtab_init(ks_pairtab *t, uint32_t expected);
void ks_pairtab_free(ks_pairtab *t);
void ks_pairtab_copy(ks_pairtab *dst, const ks_pairtab *src);
/* Serial add (inserts the key, even with delta 0); returns the new count. */
int64_t ks_pairtab_add(ks_pairtab *t, uint64_t key, int64_t delta);
/* Count of key, 0 when absent. */
int64_t ks_pairtab_get(const ks_pairtab *t, uint64_t key);
bool ks_pairtab_find(const ks_pairtab *t, uint64_t key, int64_t *val);
/* Recompute nnonzero after a parallel fill. */
void ks_pairtab_recount(ks_pairtab *t);

/* ---- parallel fill ---------------------------------------------------- */

/* A table being filled concurrently. Adds go through a per-chunk buffer. */
typedef struct ks_pairtab_par {
    ks_pairtab *t;
    pthread_rwlock_t lock; /* writers grow the table */
    uint32_t reserved;     /* keys present + keys being inserted */
    bool existing_only;    /* adds to absent keys are dropped */
} ks_pairtab_par;

void ks_pairtab_par_begin(ks_pairtab_par *p, ks_pairtab *t, bool existing_only);
void ks_pairtab_par_end(ks_pairtab_par *p);

#define KS_PAIRBUF_SLOTS 128
#define KS_PAIRBUF_MAX 64
typedef struct ks_pairbuf {
    ks_pairtab_par *dst;
    uint32_t n;
    uint64_t keys[KS_PAIRBUF_SLOTS];
    int64_t vals[KS_PAIRBUF_SLOTS];
} ks_pairbuf;

void ks_pairbuf_init(ks_pairbuf *b, ks_pairtab_par *dst);
void ks_pairbuf_add(ks_pairbuf *b, uint64_t key, int64_t delta);
void ks_pairbuf_flush(ks_pairbuf *b);

/* Run fn over [0, n) in chunks on the handle's worker pool (serially when h
 * is NULL, as in unit tests). Chunks are sized like upstream's parallelizer
 * (about sqrt(n)). */
typedef void (*ks_chunk_fn)(size_t lo, size_t hi, void *arg);
void ks_parallel_chunks(struct ks_handle *h, size_t n, ks_chunk_fn fn, void *arg);

/* ---- small shared helpers --------------------------------------------- */

/* Label of the node of a NodeInfo (false when absent or no node). */
static inline bool ks_ni_label(const ks_node_info *ni, ks_id key, ks_id *val) {
    return ni->node && ks_labels_get(&ni->node->labels, key, val);
}
static inline const ks_labels *ks_ni_labels(const ks_node_info *ni) {
    static const ks_labels none;
    return ni->node ? &ni->node->labels : &none;
}

/* Natural logarithm computed exactly as Go's math.Log does on amd64 (the
 * fdlibm reduction and polynomial), so that scores rounding at .5 agree
 * bit for bit with kube-scheduler whatever the C library. */
double ks_go_log(double x);

#endif
