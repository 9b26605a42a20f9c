/* PodTopologySpread internals, shared by plugin.c, common.c, filtering.c
 * and scoring.c (upstream pkg/scheduler/framework/plugins/podtopologyspread). */
#ifndef KS_PODTOPOLOGYSPREAD_H
#define KS_PODTOPOLOGYSPREAD_H

#include "api/objects.h"
#include "api/pod.h"
#include "framework/nodeinfo.h"
#include "plugins/helper/nodecount.h"
#include "plugins/helper/nodememo.h"
#include "plugins/helper/topocount.h"
#include "util/hash.h"

#include <ksched/ksched.h>

#define PTS_NAME "PodTopologySpread"

#define PTS_ERR_CONSTRAINTS "node(s) didn't match pod topology spread constraints"
#define PTS_ERR_MISSING_LABEL PTS_ERR_CONSTRAINTS " (missing required label)"

/* A constraint from the args (defaultConstraints, or the system defaults). */
typedef struct pts_default {
    int32_t max_skew;
    ks_id key;
    ks_unsatisfiable when;
    int32_t min_domains;
    ks_inclusion_policy affinity_policy, taints_policy;
} pts_default;

typedef struct pts {
    ks_handle *h;
    bool system_defaulted;
    uint32_t ndefaults;
    pts_default *defaults;
    /* Test seams: used instead of the handle's when set. */
    const ks_objects *objects;
    const ks_node_info *const *all_nodes;
    size_t nall_nodes;
    bool have_all_nodes;
    /* Per-node counts of the PreFilter and PreScore passes, kept across
     * cycles (plugins/helper/nodememo.h). */
    ks_nodememo pf_memo, ps_memo;
    /* Score's per-node counts of the hostname constraint, across cycles */
    ks_nodecount host;
} pts;

/* A constraint as the plugin applies it in one cycle. */
typedef struct pts_constraint {
    int32_t max_skew, min_domains;
    ks_id key;
    bool hostname;              /* key is kubernetes.io/hostname */
    bool honor_affinity, honor_taints;
    const ks_label_selector *sel;
    uint32_t nextra;            /* matchLabelKeys merged in: key=value */
    ks_label *extra;
    bool empty;                 /* selects everything: counts no pod (upstream quirk) */
    bool self_match;            /* the incoming pod matches the selector */
    uint32_t same_as;           /* first constraint with the same selector */
} pts_constraint;

/* The two domains with the fewest matching pods (upstream criticalPaths). */
typedef struct pts_paths {
    ks_id value[2];
    int64_t num[2];
} pts_paths;

typedef struct pts_pf_state {
    const ks_pod *pod;
    uint32_t n;
    pts_constraint *c;     /* cycle arena, shared by clones */
    ks_pairtab counts;     /* (constraint index, value) -> matching pods */
    uint32_t *ndomains;    /* per constraint */
    pts_paths *paths;      /* per constraint */
} pts_pf_state;

typedef struct pts_ps_state {
    uint32_t n;
    pts_constraint *c;
    double *weight;        /* log(domains + 2) per constraint */
    ks_pairtab counts;     /* (constraint index, value) -> matching pods */
    ks_map ignored;        /* node name id + 1 -> 1: nodes missing a topology key */
    ks_nodecount *host;    /* held from PreScore to NormalizeScore when host_pass */
    uint32_t host_pass;
    uint32_t host_k;       /* the constraint counted through it */
} pts_ps_state;

extern ks_state_key pts_pf_key, pts_ps_key;
extern ks_id pts_hostname_key;

/* common.c */
void pts_init_ids(void);
const ks_objects *pts_objects(const pts *pl);
/* The pod's constraints for one action (its own, else the defaults),
 * in the cycle arena; returns the count. */
uint32_t pts_constraints(const pts *pl, ks_cycle_state *st, const ks_pod *pod, ks_unsatisfiable action,
                         pts_constraint **out);
bool pts_node_has_keys(const ks_node_info *ni, const pts_constraint *c, uint32_t n);
/* The node's value for every constraint's key into vals; false when a key
 * is missing (vals then partly filled). */
bool pts_node_values(const ks_node_info *ni, const pts_constraint *c, uint32_t n, ks_id *vals);
bool pts_selector_matches(const pts_constraint *c, const ks_labels *labels);
/* What the pods counted per node depend on: the namespace and, per
 * constraint, the key, the selector and which inclusion policies it
 * honours (pts_sig_policies adds what they read of the pod). */
void pts_sig(ks_sig *sig, const pts_constraint *c, uint32_t n, ks_id ns);
/* What the node inclusion policies read of the pod: its node selector and
 * required node affinity (affinity), its tolerations (taints). */
void pts_sig_policies(ks_sig *sig, const ks_pod *pod, bool affinity, bool taints);
/* Pods of ns on the node, not terminating, matching the selector. */
int64_t pts_count_matching(const pts_constraint *c, const ks_node_info *ni, ks_id ns);
/* nodeAffinityPolicy / nodeTaintsPolicy: does this node count at all? */
bool pts_node_affinity_matches(const ks_pod *pod, const ks_node_info *ni);
bool pts_node_taints_tolerated(const ks_pod *pod, const ks_node_info *ni);
void pts_paths_update(pts_paths *p, ks_id value, int64_t num);

/* filtering.c */
ks_status *pts_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                          const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **res);
ks_status *pts_add_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *add,
                       const ks_node_info *ni);
ks_status *pts_remove_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *rm,
                          const ks_node_info *ni);
ks_status *pts_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni);

/* scoring.c */
ks_status *pts_pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *const *nodes, size_t n);
ks_status *pts_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                     int64_t *score);
ks_status *pts_normalize_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                               ks_node_score *scores, size_t n);

#endif
