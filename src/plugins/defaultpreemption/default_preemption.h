/* DefaultPreemption internals shared with tests. */
#ifndef KS_PLUGINS_DEFAULT_PREEMPTION_H
#define KS_PLUGINS_DEFAULT_PREEMPTION_H

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stdint.h>

extern const ks_plugin_ops ks_plugin_default_preemption;

/* The dry runs start at a random potential node (upstream rand.Int31n),
 * drawn from the instance's generator, seeded with the profile's seed
 * (ks_framework_options.seed); with the tie rule preemption_nodes_by_name
 * (ks_framework_options.ties) they always start at the first node.
 * zero_offset does that for one instance (tests, as upstream's do),
 * without the name ordering. */
void ks_default_preemption_set_zero_offset(void *self, bool on);

/* The Evaluator of a DefaultPreemption instance (tests run dry runs
 * directly, as upstream's do). */
struct ks_evaluator;
struct ks_evaluator *ks_default_preemption_evaluator(void *self);

/* Upstream calculateNumCandidates: max(n * pct / 100, abs), at most n. */
int32_t ks_default_preemption_num_candidates(int32_t n, int32_t pct, int32_t abs);

#endif
