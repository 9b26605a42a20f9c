/* ksched framework runtime for embedders.
 *
 * The scheduler runs every extension point through these functions, and so
 * can a program that links libksched and only wants part of a scheduling
 * cycle: a cluster autoscaler asking "would this pod fit on that node"
 * runs PreFilter + Filter on a snapshot; the simulator's --explain runs
 * Score and reads the raw, normalized and weighted scores.
 *
 * A framework is one profile (one schedulerName): one instance of every
 * plugin the profile enables, shared by all the extension points the
 * plugin serves, in the profile's order.
 *
 * Typical embedder use:
 *
 *     ks_framework *fw = ks_framework_new_default(NULL, NULL, &err);
 *     ks_snapshot *snap = ks_snapshot_from(nodes, nn, pods, np);
 *     ks_framework_set_snapshot(fw, snap);
 *     ks_cycle_state *st = ks_cycle_state_new();
 *     ks_pre_filter_result *pfr = NULL;
 *     ks_status *s = ks_framework_run_pre_filter(fw, st, pod, &pfr, NULL);
 *     for each node info ni: ks_framework_run_filter(fw, st, pod, ni)
 *     ks_cycle_state_free(st);
 *
 * Ownership: statuses returned are the caller's (ks_status_free); NULL is
 * Success. Results that are arrays (scores, PreFilter node sets) live in
 * the cycle state's arena and die with it. The snapshot must outlive every
 * call that uses it.
 */
#ifndef KSCHED_FRAMEWORK_H
#define KSCHED_FRAMEWORK_H

#include <ksched/ksched.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_framework ks_framework;
typedef struct ks_snapshot ks_snapshot;
struct ks_profile_config; /* src/config/config.h */

/* ---- creation ----------------------------------------------------------- */

/* How the framework breaks the ties upstream leaves to chance (a random
 * pick, a random start) or to map order. A rule off is upstream's way,
 * random from the seed; all on (KS_TIES_BY_NAME) give one answer for any
 * seed: the differential tests' rule, `simulate --tie-break name`. */
typedef struct ks_tie_rules {
    /* selectHost: equal top totals go to the smallest node name. */
    bool host_by_name;
    /* Preemption: the potential nodes are tried in name order from the
     * first (not from a random offset in snapshot order), and of equally
     * good candidate nodes the smallest name wins. */
    bool preemption_nodes_by_name;
    /* Preemption: victims of equal priority and start time are ordered by
     * namespace/name (a pod not started reads one fixed time). */
    bool victims_by_name;
} ks_tie_rules;

#define KS_TIES_RANDOM ((ks_tie_rules){0})
#define KS_TIES_BY_NAME \
    ((ks_tie_rules){.host_by_name = true, .preemption_nodes_by_name = true, .victims_by_name = true})

typedef struct ks_framework_options {
    int parallelism;              /* workers for Filter/Score; 0 = 16 */
    bool debug_checksums;         /* verify NodeInfo immutability (always on in KS_DEBUG builds) */
    /* Every random choice of the framework and its plugins (selectHost
     * among equal scores, DefaultPreemption's first candidate node) is
     * drawn from this seed (0: a fixed default): same seed, same choices. */
    uint64_t seed;
    /* Which of those choices go by name instead (zero: none). */
    ks_tie_rules ties;
} ks_framework_options;

/* Build the framework of one resolved profile: create each plugin with its
 * pluginConfig args. reg NULL = ks_default_registry(). Returns NULL and
 * *err (malloc'd) when a plugin is unknown or refuses its args. */
ks_framework *ks_framework_new(ks_registry *reg, const struct ks_profile_config *profile,
                               const ks_framework_options *opts, char **err);
/* The default-scheduler profile of the v1.34 default configuration. */
ks_framework *ks_framework_new_default(ks_registry *reg, const ks_framework_options *opts,
                                       char **err);
void ks_framework_free(ks_framework *fw);

const char *ks_framework_profile_name(const ks_framework *fw);
/* Plugins of the profile, in creation order (the index used by masks). */
size_t ks_framework_nplugins(const ks_framework *fw);
const char *ks_framework_plugin_name(const ks_framework *fw, size_t i);
/* Index of a plugin by name, -1 when the profile does not have it. */
int ks_framework_plugin_index(const ks_framework *fw, const char *name);
bool ks_framework_has_filter_plugins(const ks_framework *fw);
bool ks_framework_has_score_plugins(const ks_framework *fw);
bool ks_framework_has_post_filter_plugins(const ks_framework *fw);

/* ---- snapshot ----------------------------------------------------------- */

/* A standalone snapshot built from nodes and pods (pods with a node name
 * are placed on their node). References are taken; free with
 * ks_snapshot_free. Node order is upstream's (zones interleaved). */
ks_snapshot *ks_snapshot_from(ks_node *const *nodes, size_t nnodes, ks_pod *const *pods,
                              size_t npods);
void ks_snapshot_free(ks_snapshot *s);
size_t ks_snapshot_num_nodes(const ks_snapshot *s);
const ks_node_info *ks_snapshot_node(const ks_snapshot *s, size_t i);
const ks_node_info *ks_snapshot_node_by_name(const ks_snapshot *s, const char *name);

/* The snapshot plugins see through the handle from now on. */
void ks_framework_set_snapshot(ks_framework *fw, const ks_snapshot *snap);

/* ---- cycle state ------------------------------------------------------- */

ks_cycle_state *ks_cycle_state_new(void);
void ks_cycle_state_free(ks_cycle_state *st);

/* ---- run functions ------------------------------------------------------ */

/* A set of plugins of one profile (by plugin index): every per-plugin bit
 * set (skipped Filters and Scores, rejecting plugins) is this size. */
#define KS_PLUGIN_MASK_WORDS 4
#define KS_PLUGIN_MASK_BITS (64 * KS_PLUGIN_MASK_WORDS)
typedef struct ks_plugin_mask {
    uint64_t bits[KS_PLUGIN_MASK_WORDS];
} ks_plugin_mask;

static inline bool ks_plugin_mask_has(const ks_plugin_mask *m, unsigned i) {
    return i < KS_PLUGIN_MASK_BITS && ((m->bits[i >> 6] >> (i & 63)) & 1);
}
static inline void ks_plugin_mask_add(ks_plugin_mask *m, unsigned i) {
    if (i < KS_PLUGIN_MASK_BITS) m->bits[i >> 6] |= 1ULL << (i & 63);
}
static inline bool ks_plugin_mask_empty(const ks_plugin_mask *m) {
    uint64_t any = 0;
    for (int w = 0; w < KS_PLUGIN_MASK_WORDS; w++) any |= m->bits[w];
    return !any;
}

/* PreFilter over the framework's snapshot. *result receives the merged
 * node set (NULL = all nodes). `rejectors` (optional) receives the plugins
 * whose node sets excluded nodes. A Skip from a plugin disables its Filter
 * (and PreFilter extensions) for this cycle. */
ks_status *ks_framework_run_pre_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                       ks_pre_filter_result **result,
                                       ks_plugin_mask *rejectors);
bool ks_pre_filter_result_all_nodes(const ks_pre_filter_result *r); /* true for NULL */
size_t ks_pre_filter_result_len(const ks_pre_filter_result *r);
const char *ks_pre_filter_result_node(const ks_pre_filter_result *r, size_t i);
bool ks_pre_filter_result_has(const ks_pre_filter_result *r, const char *node_name);

/* PreFilter extensions on every PreFilter plugin (not skipped). */
ks_status *ks_framework_run_pre_filter_add_pod(ks_framework *fw, ks_cycle_state *st,
                                               const ks_pod *pod, const ks_pod *to_add,
                                               const ks_node_info *ni);
ks_status *ks_framework_run_pre_filter_remove_pod(ks_framework *fw, ks_cycle_state *st,
                                                  const ks_pod *pod, const ks_pod *to_remove,
                                                  const ks_node_info *ni);

/* Filter plugins on one node; stops at the first rejection. The returned
 * status names the plugin (ks_status_plugin). */
ks_status *ks_framework_run_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *ni);
/* One Filter plugin only (explain output); NULL status also when the
 * plugin was skipped by its PreFilter or has no Filter. */
ks_status *ks_framework_run_filter_plugin(ks_framework *fw, ks_cycle_state *st,
                                          const ks_pod *pod, const ks_node_info *ni,
                                          size_t plugin_index);
/* Filter as the scheduler runs it: first with the nominated pods of equal
 * or higher priority added to the node, then (if any were added and that
 * passed) without them. */
ks_status *ks_framework_run_filter_with_nominated_pods(ks_framework *fw, ks_cycle_state *st,
                                                       const ks_pod *pod,
                                                       const ks_node_info *ni);

/* PostFilter: statuses are the per-node Filter results. On return
 * *nominated_node is NULL or a malloc'd node name to nominate. */
ks_node_status_map *ks_node_status_map_new(void);
/* Take ownership of status for node (replacing any previous one). */
void ks_node_status_map_set(ks_node_status_map *m, const char *node_name, ks_status *status);
/* Status for nodes not in the map (default UnschedulableAndUnresolvable). */
void ks_node_status_map_set_absent(ks_node_status_map *m, ks_status *status);
void ks_node_status_map_free(ks_node_status_map *m);
ks_status *ks_framework_run_post_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                        const ks_node_status_map *statuses,
                                        char **nominated_node);

ks_status *ks_framework_run_pre_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                      const ks_node_info *const *nodes, size_t nnodes);

/* Scores of every Score plugin (not skipped by its PreScore) on every
 * node: raw (as Score returned), normalized (after NormalizeScore; equal to
 * raw without one) and weighted (normalized x weight), and each node's
 * total. Index [node * nplugins + plugin]. Arrays live in the cycle arena. */
typedef struct ks_score_result {
    size_t nnodes, nplugins;
    const ks_node_info *const *nodes;
    const char **plugins;   /* names, nplugins */
    const int64_t *weights; /* nplugins */
    int64_t *raw, *normalized, *weighted;
    int64_t *total;         /* nnodes */
} ks_score_result;

ks_status *ks_framework_run_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                  const ks_node_info *const *nodes, size_t nnodes,
                                  ks_score_result *out);

ks_status *ks_framework_run_reserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                    const char *node);
/* Unreserve of every Reserve plugin, in reverse order. */
void ks_framework_run_unreserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node);
/* Permit: NULL (allowed), a rejection, an error, or KS_WAIT — then the pod
 * is in the waiting pods map until allowed, rejected or timed out. */
ks_status *ks_framework_run_permit(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const char *node);
/* Block until a waiting pod is allowed (NULL) or rejected; returns NULL at
 * once when the pod is not waiting. */
ks_status *ks_framework_wait_on_permit(ks_framework *fw, const ks_pod *pod);
/* KS_SKIP when no PreBind plugin has work for the pod. */
ks_status *ks_framework_run_pre_bind_pre_flight(ks_framework *fw, ks_cycle_state *st,
                                                const ks_pod *pod, const char *node);
ks_status *ks_framework_run_pre_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                     const char *node);
/* Bind plugins in order until one does not Skip. */
ks_status *ks_framework_run_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                 const char *node);
void ks_framework_run_post_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node);

#ifdef __cplusplus
}
#endif

#endif
