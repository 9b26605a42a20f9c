/* Scheduler extenders (upstream pkg/scheduler/extender.go): HTTP services
 * named in KubeSchedulerConfiguration `extenders[]` that filter, score and
 * bind pods next to the plugins. JSON over HTTP(S) with libcurl. */
#ifndef KS_SCHEDULER_EXTENDER_H
#define KS_SCHEDULER_EXTENDER_H

#include "api/pod.h"
#include "framework/snapshot.h"
#include "config/config.h"
#include "framework/nodeinfo.h"
#include "framework/preemption.h"
#include "framework/status.h"

#include <stdbool.h>
#include <stddef.h>

/* upstream MaxExtenderPriority */
#define KS_MAX_EXTENDER_PRIORITY 10

typedef struct ks_extender ks_extender;

/* The largest answer read from an extender (512 MiB: full Node objects
 * for thousands of nodes fit); a bigger one is an error of the call, not
 * memory without bound. Tests lower it. */
extern size_t ks_extender_max_answer;

/* The config is borrowed and must outlive the extender. */
ks_extender *ks_extender_new(const ks_extender_config *c);
void ks_extender_free(ks_extender *e);
const ks_extender_config *ks_extender_config_of(const ks_extender *e);

/* upstream IsInterested: no managedResources, or a container (regular or
 * init) requests or limits one of them. */
bool ks_extender_interested(const ks_extender_config *c, const ks_pod *pod);

/* A node an extender filtered out, with its reason. */
typedef struct ks_extender_failed {
    ks_id node;
    char *msg;
    bool unresolvable; /* from failedAndUnresolvableNodes */
} ks_extender_failed;

typedef struct ks_extender_filter_result {
    const ks_node_info **nodes; /* the nodes that passed, a subset of the input */
    size_t nnodes;
    ks_extender_failed *failed; /* failedAndUnresolvableNodes first, then failedNodes not in it */
    size_t nfailed;
} ks_extender_filter_result;

/* Filter verb (the input unchanged without one). Errors: transport, a
 * non-200 answer, the answer's `Error`, a node not in the input. */
ks_status *ks_extender_filter(ks_extender *e, const ks_pod *pod, const ks_node_info *const *nodes, size_t n,
                              ks_extender_filter_result *out);
void ks_extender_filter_result_free(ks_extender_filter_result *r);

/* Prioritize verb: host names and scores as the extender answered
 * (malloc'd arrays, *count entries; none without a verb). */
ks_status *ks_extender_prioritize(ks_extender *e, const ks_pod *pod, const ks_node_info *const *nodes, size_t n,
                                  ks_id **hosts, int64_t **scores, size_t *count);

/* Bind verb (ExtenderBindingArgs). */
ks_status *ks_extender_bind(ks_extender *e, const ks_pod *pod, const char *node);

/* Preempt verb (ExtenderPreemptionArgs with NodeNameToVictims, or
 * NodeNameToMetaVictims when nodeCacheCapable): the answer's
 * NodeNameToMetaVictims into out, victims found by UID among the pods of
 * the snapshot's node. out lists in's nodes in in's order, then nodes the
 * extender added in its order. Errors: transport, a non-200 answer, a node
 * not in snap, an unknown UID (out is then empty). */
ks_status *ks_extender_preempt(ks_extender *e, const ks_pod *pod, const ks_snapshot *snap,
                               const ks_candidates *in, ks_candidates *out);

/* Whether any extender has a preemptVerb (upstream SupportsPreemption). */
bool ks_extenders_support_preemption(ks_extender *const *exts, size_t n);

/* upstream callExtenders: each extender with a preemptVerb interested in
 * pod, in order, replaces *cands with its answer until none is left. An
 * ignorable extender's error skips it; any other error is returned (*cands
 * is then unchanged). */
ks_status *ks_extenders_process_preemption(ks_extender *const *exts, size_t n, const ks_pod *pod,
                                           const ks_snapshot *snap, ks_candidates *cands);

#endif
