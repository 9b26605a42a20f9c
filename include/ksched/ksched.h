/* ksched plugin API.
 *
 * This header is everything a plugin may use. It is installed with ksched
 * (`pkg-config --cflags ksched`), compiles as C11 and as C++, and is
 * versioned by KS_ABI_VERSION (see "ABI" below and docs/plugin-guide.md).
 *
 * A plugin is a struct of function pointers (ks_plugin_ops) plus the ABI
 * version it was compiled against. Every extension point of the Kubernetes
 * scheduling framework is one optional pointer; NULL means the plugin does
 * not implement that point. In-tree plugins use exactly this struct.
 *
 * An out-of-tree plugin is a shared object exporting
 *
 *     KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg);
 *
 * which calls ks_registry_add() once per plugin it provides and returns 0
 * (non-zero refuses the load). A program that links libksched may instead
 * call ks_registry_add() on ks_default_registry() and then ks_main() (see
 * examples/plugins/embed).
 *
 * Ownership and threading:
 * - Everything a plugin receives as `const` is owned by the framework and is
 *   valid for the duration of the call only; keep a pod or node longer with
 *   ks_pod_retain / ks_node_retain.
 * - NodeInfo comes from an immutable per-cycle snapshot; Filter and Score
 *   run concurrently on several threads for different nodes, so they must
 *   only read shared plugin state. Every other extension point is called
 *   from one thread at a time (the scheduling thread, or for PreBind, Bind
 *   and PostBind a binding thread).
 * - A status returned by a plugin is owned by the framework from then on.
 *   NULL means Success.
 * - Strings returned by accessors are owned by the object (or interned for
 *   the life of the process) and must not be freed.
 *
 * ABI: KS_ABI_VERSION changes whenever a change to this header would break
 * an already compiled plugin: the layout of ks_plugin_ops or of a public
 * struct, or the signature or meaning of an existing function. Adding a
 * function does not change it. `abi_version` stays the first member of
 * ks_plugin_ops forever so that any ksched can read it. A plugin built for
 * another ABI version is refused at load time, never called.
 */
#ifndef KSCHED_KSCHED_H
#define KSCHED_KSCHED_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KS_ABI_VERSION 1u
#define KS_MAX_NODE_SCORE 100
#define KS_MIN_NODE_SCORE 0

#if defined(__GNUC__)
#define KS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define KS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define KS_PRINTF(f, a)
#define KS_PLUGIN_EXPORT
#endif

/* Opaque types. */
typedef struct ks_pod ks_pod;
typedef struct ks_node ks_node;
typedef struct ks_node_info ks_node_info;
typedef struct ks_cycle_state ks_cycle_state;
typedef struct ks_status ks_status;
typedef struct ks_handle ks_handle;
typedef struct ks_tree ks_args; /* a pluginConfig args tree, or an object */
typedef struct ks_registry ks_registry;
typedef struct ks_pre_filter_result ks_pre_filter_result;
typedef struct ks_node_status_map ks_node_status_map;
typedef struct ks_waiting_pod ks_waiting_pod;
typedef struct ks_queued_pod ks_queued_pod;

/* ---- Status ----------------------------------------------------------
 * What an extension point returns. NULL is Success everywhere. The codes
 * and their meaning are upstream's:
 *   KS_ERROR                           internal error; the pod is retried
 *   KS_UNSCHEDULABLE                   does not fit; preemption may help
 *   KS_UNSCHEDULABLE_AND_UNRESOLVABLE  does not fit; preemption cannot help
 *   KS_WAIT                            Permit only: hold the pod
 *   KS_SKIP                            PreFilter/PreScore: skip my Filter/
 *                                      Score this cycle; Bind: not mine
 *   KS_PENDING                         waiting for something external
 */
typedef enum ks_code {
    KS_SUCCESS = 0,
    KS_ERROR,
    KS_UNSCHEDULABLE,
    KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
    KS_WAIT,
    KS_SKIP,
    KS_PENDING,
} ks_code;

/* A new status with one reason built from a printf format (NULL fmt: no
 * reason). The reason is what appears in events and in the scheduler's
 * "0/N nodes are available: ..." message. */
ks_status *ks_status_new(ks_code code, const char *fmt, ...) KS_PRINTF(2, 3);
/* ks_status_new with a va_list. */
ks_status *ks_status_newv(ks_code code, const char *fmt, va_list ap);
/* Append one more reason. */
void ks_status_add_reason(ks_status *s, const char *fmt, ...) KS_PRINTF(2, 3);
/* The code; KS_SUCCESS for NULL. */
ks_code ks_status_code(const ks_status *s);
/* Number of reasons (0 for NULL). */
size_t ks_status_nreasons(const ks_status *s);
/* Reason i, NULL when out of range. */
const char *ks_status_reason(const ks_status *s, size_t i);
/* The plugin that produced the status (set by the framework; "" if none). */
const char *ks_status_plugin(const ks_status *s);
/* Free a status a plugin created but does not return. */
void ks_status_free(ks_status *s);
/* "Success", "Unschedulable", ... as upstream spells them. */
const char *ks_code_name(ks_code c);
/* True for NULL and for KS_SUCCESS. */
static inline bool ks_status_is_success(const ks_status *s) {
    return s == NULL || ks_status_code(s) == KS_SUCCESS;
}

/* ---- Cycle state ------------------------------------------------------
 * Per scheduling attempt key/value store. Keys are small integers obtained
 * once (in create) from a name. Values written in PreFilter or PreScore
 * are read in Filter or Score (read-only there: they run in parallel). */
typedef int ks_state_key;
/* The key for a name (the same key for the same name, process-wide);
 * -1 when the table is full. */
ks_state_key ks_state_key_get(const char *name);
/* Store value under key, replacing (and freeing) any previous value.
 * free_fn frees it with the cycle (NULL: not freed, e.g. arena memory);
 * clone_fn copies it when the state is cloned for a preemption dry run
 * (NULL: the copy shares the value, which must then be read-only). */
void ks_cycle_state_write(ks_cycle_state *st, ks_state_key key, void *value,
                          void (*free_fn)(void *), void *(*clone_fn)(const void *));
/* The value under key, NULL when none. */
void *ks_cycle_state_read(const ks_cycle_state *st, ks_state_key key);
/* Zeroed memory that lives exactly as long as the cycle (never free it). */
void *ks_cycle_state_alloc(ks_cycle_state *st, size_t n);

/* ---- Read-only object accessors ----------------------------------------
 * Resource names are Kubernetes' ("cpu", "memory", "ephemeral-storage",
 * "pods", "nvidia.com/gpu", "hugepages-2Mi", ...). Amounts are integers:
 * cpu in millicores, everything else in base units (bytes, counts). A
 * resource the object does not have reads as 0. */

typedef uint32_t ks_name_id; /* interned string */
/* Intern a string: equal strings get equal ids for the life of the process. */
ks_name_id ks_intern_name(const char *s);
/* The string of an id. */
const char *ks_name_str(ks_name_id id);

/* Pod metadata. Every string is "" when unset, except where NULL is noted. */
const char *ks_pod_namespace(const ks_pod *p);
const char *ks_pod_name(const ks_pod *p);
const char *ks_pod_uid(const ks_pod *p);
/* Label / annotation value; NULL when the key is absent. */
const char *ks_pod_label(const ks_pod *p, const char *key);
const char *ks_pod_annotation(const ks_pod *p, const char *key);
/* Number of labels, and label i (in no particular order). */
size_t ks_pod_nlabels(const ks_pod *p);
void ks_pod_label_at(const ks_pod *p, size_t i, const char **key, const char **value);
/* spec.schedulerName (defaulted to "default-scheduler"). */
const char *ks_pod_scheduler_name(const ks_pod *p);
/* spec.nodeName: "" when not bound (or assumed). */
const char *ks_pod_node_name(const ks_pod *p);
/* status.nominatedNodeName, "" when none. */
const char *ks_pod_nominated_node_name(const ks_pod *p);
/* status.phase: "Pending", "Running", "Succeeded", "Failed" or "". */
const char *ks_pod_phase_name(const ks_pod *p);
/* The pod's priority (spec.priority as resolved by admission; 0 unset). */
int32_t ks_pod_get_priority(const ks_pod *p);
/* Number of spec.schedulingGates still present. */
size_t ks_pod_nscheduling_gates(const ks_pod *p);
/* Effective request of the pod for a resource: the larger of the regular
 * containers (with sidecars) and the largest init container, plus
 * overhead — what NodeResourcesFit compares. */
int64_t ks_pod_request(const ks_pod *p, const char *resource);
/* metadata.creationTimestamp in unix seconds (0 when unset). */
int64_t ks_pod_creation_unix(const ks_pod *p);
/* Keep a pod beyond the call that handed it out; returns p. Every retain
 * is paired with one ks_pod_release. */
const ks_pod *ks_pod_retain(const ks_pod *p);
void ks_pod_release(const ks_pod *p);

/* Node metadata and status. */
const char *ks_node_name(const ks_node *n);
/* Label / annotation value; NULL when absent. */
const char *ks_node_label(const ks_node *n, const char *key);
const char *ks_node_annotation(const ks_node *n, const char *key);
/* Number of labels, and label i (in no particular order). */
size_t ks_node_nlabels(const ks_node *n);
void ks_node_label_at(const ks_node *n, size_t i, const char **key, const char **value);
/* Number of taints, and taint i: key, value ("" if none) and effect
 * ("NoSchedule", "PreferNoSchedule" or "NoExecute"). */
size_t ks_node_ntaints(const ks_node *n);
void ks_node_taint(const ks_node *n, size_t i, const char **key, const char **value,
                   const char **effect);
/* spec.unschedulable. */
bool ks_node_is_unschedulable(const ks_node *n);
/* status.allocatable / status.capacity of a resource. */
int64_t ks_node_allocatable(const ks_node *n, const char *resource);
int64_t ks_node_capacity(const ks_node *n, const char *resource);
/* Keep a node beyond the call; pair with ks_node_release. */
const ks_node *ks_node_retain(const ks_node *n);
void ks_node_release(const ks_node *n);

/* NodeInfo: a node and the pods on it (bound and assumed) in this cycle's
 * snapshot. */
/* The node; NULL in the rare case the snapshot has pods for a node that
 * is gone. */
const ks_node *ks_node_info_node(const ks_node_info *ni);
/* The node's name (also when the node object is gone). */
const char *ks_node_info_name(const ks_node_info *ni);
/* Pods on the node, and pod i. */
size_t ks_node_info_npods(const ks_node_info *ni);
const ks_pod *ks_node_info_pod(const ks_node_info *ni, size_t i);
/* Allocatable of the node (as ks_node_allocatable). */
int64_t ks_node_info_allocatable(const ks_node_info *ni, const char *resource);
/* Sum of the requests of the pods on the node; "pods" is their number. */
int64_t ks_node_info_requested(const ks_node_info *ni, const char *resource);
/* Changes whenever the node or its pods change (upstream
 * NodeInfo.Generation): equal generations mean equal content, so a plugin
 * can cache what it derives from a NodeInfo across cycles. */
uint64_t ks_node_info_generation(const ks_node_info *ni);
/* Size in bytes of an image present on the node, 0 when absent. The name is
 * normalized as upstream does (":latest" added when untagged). */
int64_t ks_node_info_image_size(const ks_node_info *ni, const char *image);

/* ---- PreFilter result, scores, PostFilter -------------------------------- */

/* Restrict the nodes Filter considers: create a result in PreFilter, add
 * node names, and hand it back through PreFilter's *result. Results of
 * several plugins are intersected. No result means all nodes. */
ks_pre_filter_result *ks_pre_filter_result_new(ks_cycle_state *st);
void ks_pre_filter_result_add(ks_pre_filter_result *r, const char *node_name);
/* The same for a NodeInfo's node, without looking its name up: for a
 * PreFilter that keeps a part of the nodes[] it was handed. */
void ks_pre_filter_result_add_node(ks_pre_filter_result *r, const ks_node_info *ni);

/* One node's score in NormalizeScore. */
typedef struct ks_node_score {
    const ks_node_info *node;
    int64_t score;
} ks_node_score;

/* Per-node Filter statuses handed to PostFilter: the number of nodes with
 * a status of their own, and the status of a node. A node without one
 * (not examined, or left out by a PreFilter node set) gets the map's
 * absent-nodes status: UnschedulableAndUnresolvable, or the PreFilter
 * rejection when PreFilter failed (upstream NodeToStatus.Get). */
size_t ks_node_status_map_len(const ks_node_status_map *m);
const ks_status *ks_node_status_map_get(const ks_node_status_map *m, const char *node_name);

/* What PostFilter may hand back (preemption nominates a node). */
typedef struct ks_post_filter_result {
    /* NULL: no opinion (the pod's nomination stays as it is); "": clear
     * the pod's nomination; else the node to nominate. The framework
     * copies it; the scheduler's failure handler applies it. */
    const char *nominated_node;
} ks_post_filter_result;

/* ---- Queue ------------------------------------------------------------ */

/* The pod of a queue entry (QueueSort's less sees queue entries). */
const ks_pod *ks_queued_pod_pod(const ks_queued_pod *q);
/* When the pod last entered the active queue, in ns of the scheduler clock. */
int64_t ks_queued_pod_timestamp_ns(const ks_queued_pod *q);
/* When the pod first entered the active queue (upstream's
 * InitialAttemptTimestamp; scheduler clock, ns); the enqueue timestamp
 * while it never has. */
int64_t ks_queued_pod_initial_attempt_ns(const ks_queued_pod *q);
/* Number of scheduling attempts so far. */
uint32_t ks_queued_pod_attempts(const ks_queued_pod *q);

/* Cluster events a plugin wants a pod it rejected to be retried on
 * (upstream EventsToRegister). */
typedef enum ks_event_resource {
    KS_EV_POD = 1, /* registering Pod covers assigned and unscheduled pods */
    KS_EV_ASSIGNED_POD = 2,
    KS_EV_UNSCHEDULED_POD = 4,
    KS_EV_NODE = 8,
    KS_EV_PVC = 16,
    KS_EV_PV = 32,
    KS_EV_STORAGE_CLASS = 64,
    KS_EV_CSINODE = 128,
    KS_EV_POD_GROUP = 256,
    KS_EV_RESOURCE_CLAIM = 512, /* resource.k8s.io (DRA) */
    KS_EV_RESOURCE_SLICE = 1024,
    KS_EV_DEVICE_CLASS = 2048,
    KS_EV_CSI_STORAGE_CAPACITY = 4096, /* storage.k8s.io */
    KS_EV_VOLUME_ATTACHMENT = 8192,
    KS_EV_CSI_DRIVER = 16384,
    KS_EV_WILDCARD = 0x7fff,
} ks_event_resource;

/* What happened (upstream ActionType). KS_ACT_UPDATE is any update: as a
 * registration it matches every finer update kind below; as an incoming
 * event it is an update none of the finer kinds describes, which only
 * registrations of KS_ACT_UPDATE match (as upstream's MatchClusterEvents,
 * whose incoming event must be no wider than the registered one). The
 * finer kinds are computed from
 * the old and new object as upstream does (NodeSchedulingPropertiesChange,
 * PodSchedulingPropertiesChange); one object update may be several
 * events. */
typedef enum ks_event_action {
    KS_ACT_ADD = 1,
    KS_ACT_DELETE = 2,
    KS_ACT_UPDATE = 4,
    KS_ACT_ALL = 7,
    KS_ACT_UPDATE_NODE_ALLOCATABLE = 1u << 3,
    KS_ACT_UPDATE_NODE_LABEL = 1u << 4,
    KS_ACT_UPDATE_NODE_TAINT = 1u << 5,  /* taints, or spec.unschedulable cleared */
    KS_ACT_UPDATE_NODE_CONDITION = 1u << 6,
    KS_ACT_UPDATE_NODE_ANNOTATION = 1u << 7,
    KS_ACT_UPDATE_POD_LABEL = 1u << 8,
    KS_ACT_UPDATE_POD_SCALE_DOWN = 1u << 9, /* a resource request went down */
    KS_ACT_UPDATE_POD_TOLERATION = 1u << 10,
    KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1u << 11,
    KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1u << 12,
} ks_event_action;

typedef struct ks_cluster_event {
    uint32_t resource; /* ks_event_resource bits */
    uint32_t actions;  /* ks_event_action bits */
} ks_cluster_event;

/* ---- Queueing hints ---------------------------------------------------
 * When an event a plugin registered happens, the scheduling queue asks the
 * plugin, for each pod the plugin rejected, whether the change may make
 * the pod schedulable (upstream QueueingHintFn). The objects are the old
 * and new version (old NULL for an add, new NULL for a delete). */
typedef enum ks_queueing_hint {
    KS_QUEUE_SKIP = 0, /* the event cannot help the pod: leave it */
    KS_QUEUE = 1,      /* it may: retry the pod (after its backoff) */
} ks_queueing_hint;

typedef struct ks_event_object ks_event_object;
/* The pod of a Pod event, else NULL. */
const ks_pod *ks_event_object_pod(const ks_event_object *o);
/* The node of a Node event, else NULL. */
const ks_node *ks_event_object_node(const ks_event_object *o);
/* The object's kind as the API spells it ("Pod", "Node",
 * "PersistentVolumeClaim", "ResourceClaim", ...); "" for NULL. */
const char *ks_event_object_kind(const ks_event_object *o);
/* Any object as a read-only tree (apiVersion, kind, metadata, spec, ...),
 * when its source is kept; NULL otherwise. Valid during the call. */
const ks_args *ks_event_object_tree(const ks_event_object *o);
/* metadata.namespace and metadata.name ("" when unset or NULL). */
const char *ks_event_object_namespace(const ks_event_object *o);
const char *ks_event_object_name(const ks_event_object *o);

/* ---- The plugin ------------------------------------------------------- */

typedef struct ks_plugin_ops {
    uint32_t abi_version; /* KS_ABI_VERSION; always the first member */
    const char *name;     /* upstream-style name, e.g. "NodeResourcesFit" */

    /* Create an instance from its pluginConfig args (NULL when none given).
     * Return NULL and set *err (malloc'd) to refuse the args; the scheduler
     * then does not start. A plugin without state may leave create NULL;
     * self is then NULL. h lives as long as the instance. */
    void *(*create)(const ks_args *args, ks_handle *h, char **err);
    void (*destroy)(void *self);

    /* Events that may make a pod this plugin rejected schedulable.
     * Returns the count written to out (at most max). NULL: every event. */
    size_t (*events_to_register)(void *self, ks_cluster_event *out, size_t max);

    /* PreEnqueue: non-NULL keeps the pod out of the active queue. */
    ks_status *(*pre_enqueue)(void *self, const ks_pod *pod);
    /* QueueSort: true when a should be popped before b. */
    bool (*less)(void *self, const ks_queued_pod *a, const ks_queued_pod *b);

    /* PreFilter sees every node of the snapshot; may restrict them with
     * *result (see ks_pre_filter_result_new). */
    ks_status *(*pre_filter)(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result);
    /* PreFilter extensions: update the state as if pod_to_add were on node
     * (or pod_to_remove were not), for nominated pods and preemption. */
    ks_status *(*add_pod)(void *self, ks_cycle_state *st, const ks_pod *pod,
                          const ks_pod *pod_to_add, const ks_node_info *node);
    ks_status *(*remove_pod)(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_pod *pod_to_remove, const ks_node_info *node);
    /* Filter: NULL when the pod fits the node. Runs in parallel. */
    ks_status *(*filter)(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *node);
    /* PostFilter: runs when no node fits (e.g. preemption). */
    ks_status *(*post_filter)(void *self, ks_cycle_state *st, const ks_pod *pod,
                              const ks_node_status_map *statuses, ks_post_filter_result *result);

    ks_status *(*pre_score)(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes);
    /* Score: write any int64 to *score; without normalize_score it must be
     * in 0..KS_MAX_NODE_SCORE. Runs in parallel. */
    ks_status *(*score)(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *node, int64_t *score);
    /* NormalizeScore: rewrite scores in place to 0..KS_MAX_NODE_SCORE. */
    ks_status *(*normalize_score)(void *self, ks_cycle_state *st, const ks_pod *pod,
                                  ks_node_score *scores, size_t n);

    /* Reserve: the pod is assumed on node. On any later failure Unreserve
     * is called (for every Reserve plugin, in reverse order). */
    ks_status *(*reserve)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);
    void (*unreserve)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);
    /* Permit: return NULL (allow), a rejecting status, or KS_WAIT with
     * *timeout_ms set: the pod then waits until allowed or rejected through
     * the handle, or until the timeout rejects it. */
    ks_status *(*permit)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                         int64_t *timeout_ms);
    /* PreBindPreFlight: KS_SKIP when PreBind would do nothing for this pod. */
    ks_status *(*pre_bind_pre_flight)(void *self, ks_cycle_state *st, const ks_pod *pod,
                                      const char *node);
    ks_status *(*pre_bind)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);
    /* Bind: KS_SKIP passes the pod to the next bind plugin. */
    ks_status *(*bind)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);
    /* PostBind: informational, after a successful bind. */
    void (*post_bind)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);

    /* QueueingHint for the events of events_to_register: ev is the
     * incoming event (one of those registered). Return KS_QUEUE_SKIP or
     * KS_QUEUE; set *err (malloc'd) to report a failure, which counts as
     * KS_QUEUE. NULL: KS_QUEUE for every registered event. Called with the
     * queue locked: it must not call back into the scheduler. */
    ks_queueing_hint (*queueing_hint)(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj,
                                      char **err);

    void *reserved[7]; /* zero: room for later extension points */
} ks_plugin_ops;

/* Register a plugin. ops is kept, not copied: it and its name must stay
 * valid as long as the registry (a static const struct, as in the
 * examples; ksched never unloads a plugin .so). Returns false and sets
 * *err (malloc'd; err may be NULL) on an ABI mismatch, a duplicate name or
 * an empty name; the loader reports the refusal even when the plugin
 * ignores it. From then on the plugin can be named in
 * KubeSchedulerConfiguration like an in-tree one. */
bool ks_registry_add(ks_registry *reg, const ks_plugin_ops *ops, char **err);
/* The registry ksched builds its profiles from (in-tree plugins plus
 * everything added before ks_main or the framework starts). */
ks_registry *ks_default_registry(void);

/* Entry point a plugin .so must export (as KS_PLUGIN_INIT_SYMBOL): register
 * the plugins with ks_registry_add and return 0; non-zero fails the load. */
typedef int (*ks_plugin_init_fn)(ks_registry *reg);
#define KS_PLUGIN_INIT_SYMBOL "ks_plugin_init"

/* Run the ksched command line (simulate, run, check-config, ...) with
 * argv, as the `ksched` binary does; returns its exit status. Lets a
 * custom scheduler binary register plugins in main() and then behave
 * exactly like ksched (upstream's app.NewSchedulerCommand(WithPlugin)). */
int ks_main(int argc, char **argv);

/* ---- Plugin args and objects (read-only trees) ----------------------- *
 * A plugin's pluginConfig args and the objects returned by
 * ks_handle_get_object are trees of maps, lists and scalars, as in the
 * YAML/JSON they came from. Every function accepts NULL and then returns
 * NULL / 0 / false. */

/* The value of a map key; NULL when absent or a is not a map. */
const ks_args *ks_args_get(const ks_args *a, const char *key);
/* True for a map. */
bool ks_args_is_map(const ks_args *a);
/* Number of map entries or list items (0 for scalars). */
size_t ks_args_len(const ks_args *a);
/* Map value or list item i. */
const ks_args *ks_args_item(const ks_args *a, size_t i);
/* Map key i. */
const char *ks_args_key(const ks_args *a, size_t i);
/* Scalar text as written; NULL when not a scalar. */
const char *ks_args_string(const ks_args *a);
/* An integer scalar; false when absent or not an integer. */
bool ks_args_int(const ks_args *a, int64_t *out);
/* A boolean scalar; false when absent or not a boolean. */
bool ks_args_bool(const ks_args *a, bool *out);
/* A Kubernetes quantity ("500m", "8Gi", 4) read in the unit of the named
 * resource as ks_pod_request uses it (millicores for "cpu", base units
 * otherwise, rounded up); false when absent or invalid. */
bool ks_args_quantity(const ks_args *a, const char *resource, int64_t *out);
/* An RFC 3339 timestamp ("2024-01-02T03:04:05Z") in unix seconds. */
bool ks_args_time(const ks_args *a, int64_t *unix_seconds);

/* ---- Framework handle ------------------------------------------------- *
 * Handed to create and kept by the plugin. */

/* The current snapshot's node infos (valid during a scheduling cycle). */
size_t ks_handle_num_nodes(const ks_handle *h);
const ks_node_info *ks_handle_node_info(const ks_handle *h, size_t i);
/* NULL when there is no such node. */
const ks_node_info *ks_handle_node_info_by_name(const ks_handle *h, const char *name);

/* Every pod the scheduler knows (bound, assumed, waiting and pending) in
 * namespace ns (NULL: all) whose label key equals value (key NULL: any
 * pod). Writes at most max pods to out and returns how many match (as
 * snprintf: call with max 0 to size the array). The pods are valid until
 * the calling extension point returns. */
size_t ks_handle_list_pods(ks_handle *h, const char *ns, const char *label_key,
                           const char *label_value, const ks_pod **out, size_t max);
/* Move a pending pod to the active queue now (upstream PodsToActivate),
 * e.g. the siblings of a gang member that just arrived at Permit. */
void ks_handle_activate_pod(ks_handle *h, const ks_pod *pod);
/* The scheduler's clock in ns (simulated time under `ksched simulate`).
 * Use it instead of the system clock for anything that affects decisions. */
int64_t ks_handle_now_ns(const ks_handle *h);

/* Waiting pods (Permit returned KS_WAIT). Writes at most max to out and
 * returns the total number; valid until the calling extension point
 * returns. */
size_t ks_handle_waiting_pods(ks_handle *h, ks_waiting_pod **out, size_t max);
/* The waiting pod with this uid, NULL when it is not waiting. */
ks_waiting_pod *ks_handle_get_waiting_pod(ks_handle *h, const char *pod_uid);
const ks_pod *ks_waiting_pod_pod(const ks_waiting_pod *w);
/* Allow on behalf of plugin; the pod proceeds when every plugin that made
 * it wait has allowed it. */
void ks_waiting_pod_allow(ks_waiting_pod *w, const char *plugin);
/* Reject: the pod fails its scheduling attempt with msg as the reason
 * (Unreserve runs for it). */
void ks_waiting_pod_reject(ks_waiting_pod *w, const char *plugin, const char *msg);

/* Backend client for Bind/PreBind plugins: bind pod to node, delete a pod. */
ks_status *ks_handle_bind(ks_handle *h, const ks_pod *pod, const char *node);
ks_status *ks_handle_delete_pod(ks_handle *h, const ks_pod *pod);
/* PreBind: write n annotations (keys[i] = values[i]; a NULL value removes
 * the key) onto pod's metadata on the API server before it is bound, as
 * device-sharing stacks record the device a pod got (open-gpu-share's
 * alibabacloud.com/gpu-index). Synchronous, through the scheduler's write
 * path (`ksched run`: one PATCH of the pod; `ksched simulate`: the pod as
 * printed by -o yaml/json). Returns the write's error, or NULL; also NULL
 * when this scheduler writes no pods (a shadow, an embedder without an API
 * client), so keep what the annotation says in the plugin until the bound
 * pod carries it. Keys must be valid annotation keys; at most 64. */
ks_status *ks_handle_patch_pod_annotations(ks_handle *h, const ks_pod *pod, const char *const *keys,
                                           const char *const *values, size_t n);
/* Objects of other kinds known to the backend, by kind ("PodGroup",
 * "PriorityClass", ...), namespace ("" for cluster-scoped) and name: the
 * object as a tree (apiVersion, kind, metadata, spec, ...) or NULL. Valid
 * until the calling extension point returns. */
const ks_args *ks_handle_get_object(ks_handle *h, const char *kind, const char *ns,
                                    const char *name);

/* Record an event (events.k8s.io/v1) about a pod: type "Normal" or
 * "Warning", reason ("FailedScheduling"), action ("Scheduling"), note. */
void ks_handle_event(ks_handle *h, const ks_pod *regarding, const char *type,
                     const char *reason, const char *action, const char *fmt, ...)
    KS_PRINTF(6, 7);

/* ---- Logging -----------------------------------------------------------
 * klog-style lines on the scheduler's log (`I0102 15:04:05.000000 pid
 * file.c:42] msg`), shown when ksched runs with -v=V or higher. */

/* True when messages at verbosity v are shown (guards expensive logging). */
bool ks_log_enabled(int v);
/* Log at verbosity v; severity 'I', 'W' or 'E' (warnings and errors are
 * always shown). Use the macros below, which fill in file and line. */
void ks_log_at(char severity, int v, const char *file, int line, const char *fmt, ...)
    KS_PRINTF(5, 6);
/* Info at verbosity v without a source location. */
void ks_logf(int v, const char *fmt, ...) KS_PRINTF(2, 3);

#define KS_LOG_INFO(v, ...) ks_log_at('I', (v), __FILE__, __LINE__, __VA_ARGS__)
#define KS_LOG_WARN(...) ks_log_at('W', 0, __FILE__, __LINE__, __VA_ARGS__)
#define KS_LOG_ERROR(...) ks_log_at('E', 0, __FILE__, __LINE__, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
