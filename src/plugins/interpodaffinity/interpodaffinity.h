/* InterPodAffinity internals, shared by plugin.c, filtering.c and scoring.c
 * (upstream pkg/scheduler/framework/plugins/interpodaffinity). */
#ifndef KS_INTERPODAFFINITY_H
#define KS_INTERPODAFFINITY_H

#include "api/objects.h"
#include "api/pod.h"
#include "framework/nodeinfo.h"
#include "plugins/helper/nodememo.h"
#include "plugins/helper/topocount.h"

#include <ksched/ksched.h>

#define IPA_NAME "InterPodAffinity"

#define IPA_ERR_EXISTING_ANTI "node(s) didn't satisfy existing pods anti-affinity rules"
#define IPA_ERR_AFFINITY "node(s) didn't match pod affinity rules"
#define IPA_ERR_ANTI "node(s) didn't match pod anti-affinity rules"

typedef struct ipa {
    ks_handle *h;
    int32_t hard_weight;      /* hardPodAffinityWeight, default 1 */
    bool ignore_preferred;    /* ignorePreferredTermsOfExistingPods */
    /* Test seams: used instead of the handle's when set. */
    const ks_objects *objects;
    const ks_node_info *const *all_nodes;
    size_t nall_nodes;
    bool have_all_nodes;
    /* Per-node pairs of the PreFilter passes (the incoming pod's terms; the
     * existing pods' anti-affinity) and of PreScore, kept across cycles
     * (plugins/helper/nodememo.h). */
    ks_nodememo incoming_memo, existing_memo, score_memo;
} ipa;

/* A requirement added to a term by matchLabelKeys (In) or
 * mismatchLabelKeys (NotIn), with the value taken from the term's pod. */
typedef struct ipa_extra {
    ks_id key, value;
    bool mismatch;
} ipa_extra;

/* An affinity term of the incoming pod, ready for matching against many
 * existing pods: the namespaceSelector is already resolved into the
 * namespace list (upstream mergeAffinityTermNamespacesIfNotEmpty). */
typedef struct ipa_term {
    ks_id key;           /* topologyKey */
    int32_t weight;      /* preferred terms */
    const ks_label_selector *sel;
    bool all_ns;         /* namespaceSelector: {} */
    uint32_t nns;
    ks_id *ns;           /* sorted */
    uint32_t nextra;
    ipa_extra *extra;
} ipa_term;

/* PreFilter state. The terms live in the cycle arena (shared by clones);
 * the counts are cloned for preemption dry runs. */
typedef struct ipa_pf_state {
    const ks_pod *pod;
    ks_labels ns_labels;       /* the incoming pod's namespace labels */
    uint32_t naff, nanti;
    ipa_term *aff, *anti;
    ks_pairtab existing_anti;  /* (key,value) -> existing pods whose anti-affinity matches pod */
    ks_pairtab aff_counts;     /* (key,value) -> existing pods matching all affinity terms */
    ks_pairtab anti_counts;    /* (key,value) -> existing pods matching an anti-affinity term */
    uint32_t nexisting_keys, existing_keys_cap;
    ks_id *existing_keys;      /* topology keys present in existing_anti */
} ipa_pf_state;

typedef struct ipa_ps_state {
    ks_pairtab scores;         /* (key,value) -> summed weights */
    uint32_t nkeys;
    ks_id *keys;
} ipa_ps_state;

extern ks_state_key ipa_pf_key, ipa_ps_key;
extern ks_id ipa_hostname_key;

/* plugin.c */
const ks_objects *ipa_objects(const ipa *pl);
/* Labels of a namespace; empty when unknown. */
ks_labels ipa_namespace_labels(const ks_objects *c, ks_id ns);
/* Compile one term of the incoming pod into the cycle arena. */
void ipa_compile_term(ks_cycle_state *st, const ks_objects *c, const ks_pod *pod,
                      const ks_pod_affinity_term *t, ipa_term *out);
/* Incoming pod's (compiled) term against an existing pod. */
bool ipa_term_matches(const ipa_term *t, const ks_pod *p);
/* Existing pod's term against the incoming pod, with the incoming pod's
 * namespace labels for the term's namespaceSelector. */
bool ipa_existing_term_matches(const ks_pod *owner, const ks_pod_affinity_term *t,
                               const ks_pod *p, const ks_labels *ns_labels);
bool ipa_matches_all(const ipa_term *terms, uint32_t n, const ks_pod *p);
/* What matching existing pods against compiled terms depends on. */
void ipa_sig_terms(ks_sig *sig, const ipa_term *t, uint32_t n);
/* What matching existing pods' terms against the pod depends on. */
void ipa_sig_pod(ks_sig *sig, const ks_pod *pod, const ks_labels *ns_labels);
/* Initial table size: about one entry per node for hostname terms. */
uint32_t ipa_size_hint(const ipa_term *terms, uint32_t n, size_t nnodes);

/* filtering.c */
ks_status *ipa_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                          const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **res);
ks_status *ipa_add_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *add,
                       const ks_node_info *ni);
ks_status *ipa_remove_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *rm,
                          const ks_node_info *ni);
ks_status *ipa_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni);

/* scoring.c */
ks_status *ipa_pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *const *nodes, size_t n);
ks_status *ipa_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                     int64_t *score);
ks_status *ipa_normalize_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                               ks_node_score *scores, size_t n);

#endif
