/* CycleState internals: a small array indexed by ks_state_key, plus an arena
 * for per-cycle allocations and the flags upstream keeps on CycleState. */
#ifndef KS_CYCLE_STATE_H
#define KS_CYCLE_STATE_H

#include "util/arena.h"

#include <ksched/framework.h>
#include <ksched/ksched.h>

#define KS_MAX_STATE_KEYS 128

typedef struct ks_state_slot {
    void *value;
    void (*free_fn)(void *);
    void *(*clone_fn)(const void *);
} ks_state_slot;

struct ks_cycle_state {
    /* One slot per key registered when the state was made (a dozen in a
     * default profile, not KS_MAX_STATE_KEYS: a state waits with its
     * binding cycle, thousands at once when the API server binds slower
     * than pods are scheduled); a later key's write grows it. */
    ks_state_slot *slots;
    uint32_t nslots;
    ks_arena *arena;
    /* The scheduling cycle's own tables (Score's per-node tables, the
     * feasible and evaluated node lists): dropped when the cycle hands
     * the pod to its binding cycle, so that the bindings waiting on the
     * API server hold a few KB each instead of a few hundred. */
    ks_arena *scratch;
    bool record_plugin_metrics;
    /* Plugins whose PreFilter / PreScore returned Skip: their Filter /
     * Score are not run in this cycle. Indexed by profile plugin index. */
    uint64_t skip_filter[KS_PLUGIN_MASK_WORDS], skip_score[KS_PLUGIN_MASK_WORDS];
    /* PreBind plugins whose PreBindPreFlight returned Skip. */
    uint64_t skip_pre_bind[KS_PLUGIN_MASK_WORDS];
    /* The Filter plugins not skipped, in order, listed once PreFilter is
     * done (arena memory) for the framework filters_for. */
    const struct ks_framework *filters_for;
    const struct ks_plugin_inst **filters;
    uint32_t nfilters;
    /* filters_for's Filter plugins run as plain calls: no debug checksum,
     * no timing (decided once with the list). */
    bool plain_filters;
};

ks_cycle_state *ks_cycle_state_new(void);
/* Cycle memory not zeroed, for arrays written whole before they are read
 * (Score's per-node tables: a few hundred KB a cycle at 5000 nodes). */
static inline void *ks_cycle_state_alloc_uninit(ks_cycle_state *st, size_t n) {
    if (!st->scratch) st->scratch = ks_arena_new(16384);
    return ks_arena_alloc_uninit(st->scratch, n);
}
/* End of the scheduling cycle: what alloc_uninit gave is freed, and the
 * values of keys marked scheduling-only. */
void ks_cycle_state_drop_scratch(ks_cycle_state *st);
/* An in-tree plugin's key whose value is read only in the scheduling
 * cycle (PreFilter/Filter/PreScore/Score and their extensions, never from
 * Reserve on): freed when the pod goes to its binding cycle, which may
 * wait long on the API server. Mark it where the key is made. */
void ks_state_key_scheduling_only(ks_state_key key);
void ks_cycle_state_free(ks_cycle_state *st);
/* Copy for a preemption dry run: values cloned where a clone_fn exists. */
ks_cycle_state *ks_cycle_state_clone(const ks_cycle_state *st);

static inline bool ks_bit_get(const uint64_t *b, unsigned i) { return (b[i >> 6] >> (i & 63)) & 1; }
static inline void ks_bit_set(uint64_t *b, unsigned i) { b[i >> 6] |= 1ULL << (i & 63); }

#endif
