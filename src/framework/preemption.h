/* The preemption Evaluator (upstream framework/preemption): the part of
 * preemption that does not depend on the policy. A PostFilter plugin fills
 * in ks_preemption_ops (which pods may be victims, how many candidates to
 * look at) and calls ks_evaluator_preempt(); the Evaluator finds candidate
 * nodes by dry runs, picks one, and evicts the victims through the backend.
 *
 * Determinism. Upstream leaves three things to chance; ksched fixes them:
 * - potential nodes are taken in snapshot order (upstream: map order when
 *   the Filter statuses are per node);
 * - dry runs run in parallel but the result is the one a sequential run
 *   over [offset, offset + n) gives (upstream with parallelism 1);
 * - candidates are kept in that order, non-PDB-violating ones first, and
 *   the last tie-break of pickOneNodeForPreemption takes the first (upstream:
 *   map order).
 * With the framework's tie rules by name (ks_tie_rules; the differential
 * tests' rule, which pins upstream the same way) potential nodes go in
 * name order, the dry runs start at the first and the last tie-break is
 * the smallest node name (preemption_nodes_by_name); victims of equal
 * priority and start time are ordered by namespace/name (victims_by_name). */
#ifndef KS_PREEMPTION_H
#define KS_PREEMPTION_H

#include "api/objects.h"
#include "framework/nodeinfo.h"

#include <ksched/ksched.h>

#include <pthread.h>

/* Pods to evict on one node, most important first, and how many of them
 * violate a PodDisruptionBudget. pods are referenced. */
typedef struct ks_victims {
    ks_pod **pods;
    uint32_t npods;
    int64_t num_pdb_violations;
} ks_victims;

void ks_victims_free(ks_victims *v);

typedef struct ks_candidate {
    ks_id node;
    ks_victims victims;
} ks_candidate;

typedef struct ks_candidates {
    ks_candidate *v;
    uint32_t n, cap;
} ks_candidates;

void ks_candidates_free(ks_candidates *c);

/* The PodDisruptionBudgets preemption considers. */
typedef struct ks_pdb_list {
    ks_pdb *const *v;
    size_t n;
} ks_pdb_list;

/* What a preemption plugin decides (upstream preemption.Interface). */
typedef struct ks_preemption_ops {
    /* Where the dry runs start among the n potential nodes and how many
     * candidates they should produce. */
    void (*offset_and_num_candidates)(void *pl, int32_t n, int32_t *offset, int32_t *num);
    /* Whether pod may preempt at all; *why gets the message when not.
     * nominated_status is the Filter status of the pod's nominated node. */
    bool (*pod_eligible)(void *pl, const ks_pod *pod, const ks_status *nominated_status,
                         const char **why);
    /* Victims on ni (a private copy the function may change) for pod, with
     * st a private clone of the cycle state. Success with out filled, or a
     * status saying why the node cannot help. */
    ks_status *(*select_victims)(void *pl, ks_cycle_state *st, const ks_pod *pod, ks_node_info *ni,
                                 const ks_pdb_list *pdbs, ks_victims *out);
} ks_preemption_ops;

typedef struct ks_evaluator {
    const char *plugin_name; /* static */
    ks_handle *h;
    const ks_preemption_ops *ops;
    void *pl;
    bool async; /* SchedulerAsyncPreemption (on by default in v1.34) */
    pthread_mutex_t mu;
    ks_map preempting; /* pod key + 1 -> (void*)1: pods whose victims are being evicted */
    /* Victims this evaluator has decided to delete, until a cycle's
     * snapshot no longer holds them or their deletion failed: victim key
     * + 1 -> the victim (referenced). */
    ks_map evicting;
    size_t evicting_prune_at; /* prune the map when it grows to this */
    /* Asynchronous preemptions whose victims the scheduler may still hold
     * as they were before ksched deleted them: preemptor key + 1 -> its
     * victims (an evict_wait). */
    ks_map awaiting;
    size_t awaiting_prune_at;
} ks_evaluator;

void ks_evaluator_init(ks_evaluator *ev, const char *plugin_name, ks_handle *h,
                       const ks_preemption_ops *ops, void *pl, bool async);
void ks_evaluator_destroy(ks_evaluator *ev);

/* Upstream Evaluator.Preempt. On return *nominated is NULL (leave the
 * pod's nominatedNodeName alone), "" (clear it) or the node the pod is
 * nominated to (interned string). Returns NULL on success. The preemptor's
 * own nominatedNodeName is never written here: the scheduling-failure
 * handler does that from *nominated, in its one status write. */
ks_status *ks_evaluator_preempt(ks_evaluator *ev, ks_cycle_state *st, const ks_pod *pod,
                                const ks_node_status_map *m, const char **nominated);

/* Whether the victims of pod's last preemption are still being evicted. */
bool ks_evaluator_is_preempting(ks_evaluator *ev, const ks_pod *pod);

/* Whether a victim of pod's last asynchronous preemption is still held by
 * the scheduler with no sign of its deletion (not gone, no deletion
 * timestamp): the deletion has been issued, the watch has not said so. */
bool ks_evaluator_awaits_victims(ks_evaluator *ev, const ks_pod *pod);

/* Whether p (this object's uid) is a victim whose deletion this evaluator
 * has issued and whose removal the snapshots have not shown yet. */
bool ks_evaluator_is_evicting(ks_evaluator *ev, const ks_pod *p);

/* Dry-run preemption on nodes[(offset + i) % n] until num candidates are
 * found (at least one not violating a PDB). Statuses of the nodes that
 * cannot help go to statuses (owned by the caller; may be NULL). Errors
 * from dry runs are joined into *err (NULL when none). */
void ks_dry_run_preemption(ks_evaluator *ev, ks_cycle_state *st, const ks_pod *pod,
                           const ks_node_info *const *nodes, size_t n, const ks_pdb_list *pdbs,
                           int32_t offset, int32_t num, ks_candidates *out,
                           ks_node_status_map *statuses, ks_status **err);

/* Upstream pickOneNodeForPreemption with its default criteria; returns the
 * index into c, -1 when empty. by_name: the name tie rule (see below). */
int ks_pick_one_node_for_preemption(const ks_candidates *c, bool by_name);

/* Upstream util.MoreImportantPod: higher priority, then earlier start. */
bool ks_more_important_pod(const ks_pod *a, const ks_pod *b);
/* Sort most important first, exactly as upstream's sort.Slice does.
 * by_name: equal start times are ordered by namespace/name. */
void ks_sort_by_importance(ks_pod **pods, size_t n, bool by_name);

/* Upstream filterPodsWithPDBViolation: split pods (order kept) into those
 * whose eviction would exceed a PDB's disruptionsAllowed and the rest.
 * violating/ok must each have room for n pods. */
void ks_filter_pods_with_pdb_violation(ks_pod *const *pods, size_t n, const ks_pdb_list *pdbs,
                                       ks_pod **violating, size_t *nviolating, ks_pod **ok,
                                       size_t *nok);

#endif
