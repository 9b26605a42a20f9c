/* Framework runtime internals: the registry, one profile's plugin
 * instances and per-extension-point lists, and what the scheduler plugs
 * into a framework (the environment: backend calls, the nominator, the
 * waiting pods map, the worker pool). The run functions themselves are
 * declared in <ksched/framework.h>. */
#ifndef KS_FRAMEWORK_H
#define KS_FRAMEWORK_H

#include "api/objects.h"
#include "framework/events.h"
#include "framework/snapshot.h"
#include "config/config.h"
#include "framework/parallelize.h"
#include "framework/waiting_pods.h"
#include "util/strbuf.h"

#include <ksched/framework.h>
#include <ksched/ksched.h>

#include <stdatomic.h>

/* ---- registry ------------------------------------------------------------ */

struct ks_candidates; /* framework/preemption.h */

struct ks_registry {
    const ks_plugin_ops **ops;
    uint32_t n, cap;
    const ks_plugin_ops **own; /* of ops, those ksched registered as its own */
    uint32_t nown, cap_own;
    char *error; /* first refusal not yet taken (see ks_registry_take_error) */
};

ks_registry *ks_registry_new(void);
void ks_registry_free(ks_registry *reg);
const ks_plugin_ops *ks_registry_find(const ks_registry *reg, const char *name);
/* The first refusal by ks_registry_add since the last call (malloc'd, the
 * caller frees), NULL when none: the loader reports it even when the
 * plugin ignored the error. */
char *ks_registry_take_error(ks_registry *reg);
/* ks_registry_add for ksched's own plugins (the in-tree ones; tests' stand-ins
 * for them): plugins that keep nothing they read through the handle across
 * their own API calls (ks_framework_binding_plugins_own). */
bool ks_registry_add_own(ks_registry *reg, const ks_plugin_ops *ops, char **err);
bool ks_registry_is_own(const ks_registry *reg, const ks_plugin_ops *ops);
/* Which extension points the named plugin implements (KS_EP_BIT mask),
 * 0 when unknown; a ks_plugin_points_fn for ks_config_resolve with the
 * registry as ctx. */
uint32_t ks_registry_points(void *reg, const char *name);
uint32_t ks_plugin_ops_points(const ks_plugin_ops *ops);

/* True when every PreBind, Bind and PostBind plugin of fw is ksched's own
 * (ks_registry_add_own). The plugin API promises what a plugin reads
 * through the handle (objects, pods) until its extension point returns;
 * ksched's own keep nothing of it across their own API calls
 * (ks_handle_bind, annotation patches, claim and volume writes), so the
 * scheduler may let a binding cycle's view go while such a call waits. A
 * plugin from a .so or an embedder may keep it. */
bool ks_framework_binding_plugins_own(const ks_framework *fw);

/* src/plugins/registry.c: the in-tree plugins. */
extern const ks_plugin_ops *const ks_intree_plugins[];
extern const size_t ks_intree_plugins_count;

/* ---- environment ------------------------------------------------------- */

/* A pod status change sent through the API dispatcher: an optional
 * condition and an optional nominatedNodeName override. */
typedef struct ks_status_patch {
    bool has_condition;
    const char *cond_type;    /* "PodScheduled", "DisruptionTarget" */
    const char *cond_status;  /* "True" / "False" */
    const char *cond_reason;
    const char *cond_message;
    bool set_nominated;       /* override nominatedNodeName ... */
    const char *nominated;    /* ... with this ("" clears) */
} ks_status_patch;

struct ks_api_call;

/* What the scheduler provides to a framework's plugins through the handle.
 * A framework built for an embedder has none: backend calls then fail with
 * an Error status and objects are empty. */
typedef struct ks_framework_env {
    void *ctx;
    ks_status *(*bind)(void *ctx, const ks_pod *pod, const char *node);
    ks_status *(*delete_pod)(void *ctx, const ks_pod *pod);
    /* The deletion queued (first: before the other deletions queued);
     * done is called exactly once (maybe before this returns) with NULL
     * once the API server deleted the pod, else the reason. NULL:
     * delete_pod is used and done called with its result. */
    void (*delete_pod_async)(void *ctx, const ks_pod *pod, bool first,
                             void (*done)(void *arg, const ks_status *st), void *arg);
    void (*patch_status)(void *ctx, const ks_pod *pod, const ks_status_patch *patch);
    /* related: the other pod the event is about (the preemptor of a
     * Preempted victim), or NULL. */
    void (*event)(void *ctx, const ks_pod *regarding, const ks_pod *related, const char *type,
                  const char *reason, const char *action, const char *note);
    const ks_objects *(*objects)(void *ctx);
    /* Move the pod (unschedulable or backing off) to activeQ. */
    void (*activate)(void *ctx, const ks_pod *pod);
    /* Nominated pods on a node (refs taken into out; returns the count,
     * which may exceed max). */
    size_t (*nominated_pods)(void *ctx, ks_id node, ks_pod **out, size_t max);
    size_t (*nominated_count)(void *ctx, ks_id node);
    /* The node the scheduling queue's nominator holds pod nominated to (0:
     * none). It learns a nomination when the attempt ends, before the
     * status patch that writes it comes back from the API server. */
    ks_id (*nominated_node)(void *ctx, const ks_pod *pod);
    /* The scheduler's current version of the pod with this key (a
     * reference; the caller unrefs), NULL when it has none. */
    ks_pod *(*lookup_pod)(void *ctx, uint64_t key);
    /* Whether one of the scheduler's profiles schedules pod (the
     * nominator also holds other schedulers' nominations). NULL: all. */
    bool (*responsible)(void *ctx, const ks_pod *pod);
    /* Every pod the scheduler knows (bound, assumed, waiting, pending) in
     * namespace ns (KS_ID_INVALID: any) whose label key is value (key
     * KS_ID_INVALID: any pod). A reference is taken on each pod written to
     * out (the handle holds them for the plugin). Returns the count, which
     * may exceed max. For ks_handle_list_pods (Coscheduling counts a gang's
     * members with it). */
    size_t (*list_pods)(void *ctx, ks_id ns, ks_id key, ks_id value, const ks_pod **out,
                        size_t max);
    /* The scheduler's clock (simulated or real), for ks_handle_now_ns. */
    int64_t (*now)(void *ctx);
    /* The writes plugins build themselves (VolumeBinding's volume
     * bindings, DynamicResources' claim updates: a struct ks_api_call of
     * backend/api_calls.h), executed through the API dispatcher
     * (ks_handle_api_call): a KS_SKIP status when not made. NULL: none,
     * the plugins keep them assumed. */
    ks_status *(*api_call)(void *ctx, const struct ks_api_call *call);
    /* The extenders' preempt verbs (upstream Handle.Extenders() in
     * callExtenders): replace *cands with the candidates they leave.
     * NULL when no extender has a preemptVerb. */
    ks_status *(*preempt_extenders)(void *ctx, const ks_pod *pod, const ks_snapshot *snap,
                                    struct ks_candidates *cands);
} ks_framework_env;

/* ---- the framework ---------------------------------------------------- */

/* struct ks_framework and its plugin instances are framework_internal.h's
 * (src/framework only); other folders use the functions below and the
 * public ones of <ksched/framework.h>. */

#define KS_MAX_PLUGINS 256
_Static_assert(KS_MAX_PLUGINS <= KS_PLUGIN_MASK_BITS, "a plugin mask must hold every plugin of a profile");

/* The QueueingHint of the profile's plugin i for a pod and an event (no
 * hint, an error, or an event that only the added UpdateNodeTaint
 * registration matches: KS_QUEUE). *failed (may be NULL) is set when the
 * hint returned an error. */
ks_queueing_hint ks_framework_plugin_hint(const ks_framework *fw, unsigned i, ks_cluster_event ev,
                                          const ks_pod *pod, const ks_event_object *old_obj,
                                          const ks_event_object *new_obj, bool *failed);
/* Whether plugin i registered ev (EventsToRegister; a plugin that
 * registered nothing is interested in everything). */
bool ks_framework_plugin_registered(const ks_framework *fw, unsigned i, ks_cluster_event ev);
/* Whether a plugin that can reject a pod registered ev. */
bool ks_framework_registered(const ks_framework *fw, ks_cluster_event ev);
/* The plugins of an extension point, in order: how many, and the name of
 * the i-th (static). */
size_t ks_framework_point_nplugins(const ks_framework *fw, ks_ext_point ep);
const char *ks_framework_point_plugin(const ks_framework *fw, ks_ext_point ep, size_t i);
/* The profile's percentageOfNodesToScore: false when it sets none. */
bool ks_framework_percentage_of_nodes_to_score(const ks_framework *fw, int32_t *pct);
/* The worker pool Filter and Score run on. */
ks_parallelizer *ks_framework_parallelizer(const ks_framework *fw);
/* ks_framework_options.ties: how equal choices are broken. */
ks_tie_rules ks_framework_tie_rules(const ks_framework *fw);
/* The next number of the framework's generator (splitmix64 from the
 * seed): selectHost's choice among equal scores, for every tie. The
 * scheduling cycle's (one thread per framework at a time): not for other
 * threads. */
uint64_t ks_framework_rand(ks_framework *fw);

/* Attach the scheduler's environment, waiting pods map and worker pool
 * (shared across profiles). */
void ks_framework_set_env(ks_framework *fw, const ks_framework_env *env);
void ks_framework_share(ks_framework *fw, ks_waiting_pods *wp, ks_parallelizer *par);

/* The waiting pods map (a private one when none was shared). */
ks_waiting_pods *ks_framework_waiting(ks_framework *fw);
/* Non-blocking WaitOnPermit for the simulated loop: false while the pod
 * waits; true with *out set (NULL: allowed, or the pod was not waiting). */
bool ks_framework_try_wait_on_permit(ks_framework *fw, const ks_pod *pod, bool block,
                                     ks_status **out);

/* scheduler_plugin_evaluation_total for Filter, from the verdicts of the
 * n nodes a cycle evaluated (NULL = passed); passed_all: how many passed
 * (when it is n, the verdicts are not read). */
void ks_framework_record_filter_evals(ks_framework *fw, const ks_cycle_state *st, ks_status *const *verdicts,
                                      size_t n, size_t passed_all);

/* QueueSort less of the profile's queue sort plugin. */
bool ks_framework_less(const ks_framework *fw, const ks_queued_pod *a, const ks_queued_pod *b);
/* PreEnqueue of every plugin; on rejection returns the status and sets
 * *gating_plugin to the plugin index. Starts with `first` (>= 0) when a
 * plugin gated the pod before, as upstream does. */
ks_status *ks_framework_run_pre_enqueue(ks_framework *fw, const ks_pod *pod, int first,
                                        int *gating_plugin);

/* Append the names of the plugins in m to b, sorted, separated by spaces
 * (how Go prints a sorted []string inside "[...]"); returns how many. */
size_t ks_framework_mask_names(const ks_framework *fw, const ks_plugin_mask *m, ks_strbuf *b);

/* ---- node status map --------------------------------------------------- */

typedef struct ks_node_status_entry {
    ks_id node;
    ks_status *status;
} ks_node_status_entry;

struct ks_node_status_map {
    ks_node_status_entry *v;
    uint32_t n, cap;
    ks_map index;          /* node id + 1 -> entry index + 1 */
    ks_status *absent;     /* NULL = UnschedulableAndUnresolvable, no reason */
};

void ks_node_status_map_init(ks_node_status_map *m);
void ks_node_status_map_clear(ks_node_status_map *m);
void ks_node_status_map_put(ks_node_status_map *m, ks_id node, ks_status *s);
/* Room for `more` puts without growing. */
void ks_node_status_map_reserve(ks_node_status_map *m, size_t more);
const ks_status *ks_node_status_map_lookup(const ks_node_status_map *m, ks_id node);
/* The absent status (a static UnschedulableAndUnresolvable when unset). */
const ks_status *ks_node_status_map_absent_status(const ks_node_status_map *m);

/* ---- PreFilter result -------------------------------------------------- */

struct ks_pre_filter_result {
    ks_cycle_state *st;
    ks_id *nodes;     /* sorted, unique (arena) */
    uint32_t n, cap;
};

bool ks_pre_filter_result_has_id(const ks_pre_filter_result *r, ks_id id);

#endif
