/* ksched plugin API.
 *
 * A plugin is a struct of function pointers (ks_plugin_ops) plus the ABI
 * version it was compiled against. Every extension point of the Kubernetes
 * scheduling framework is one optional pointer; NULL means the plugin does
 * not implement that point. In-tree plugins use exactly this struct.
 *
 * An out-of-tree plugin is a shared object exporting
 *
 *     int ks_plugin_init(ks_registry *reg);
 *
 * which calls ks_registry_add() once per plugin it provides. A program that
 * links libksched may call ks_registry_add() on ks_default_registry()
 * before starting the scheduler instead (see examples/plugins/embed).
 *
 * Ownership and threading:
 * - Everything a plugin receives as `const` is owned by the framework and is
 *   valid for the duration of the call only (pods and nodes may be kept
 *   with ks_pod_ref / ks_node_ref).
 * - NodeInfo comes from an immutable per-cycle snapshot; Filter and Score
 *   run concurrently on several threads for different nodes, so they must
 *   only read shared plugin state.
 * - A status returned by a plugin is owned by the framework from then on.
 *   NULL means Success.
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

/* Opaque types. */
typedef struct ks_pod ks_pod;
typedef struct ks_node ks_node;
typedef struct ks_node_info ks_node_info;
typedef struct ks_cycle_state ks_cycle_state;
typedef struct ks_status ks_status;
typedef struct ks_handle ks_handle;
typedef struct ks_tree ks_args; /* a plugin's pluginConfig args */
typedef struct ks_registry ks_registry;
typedef struct ks_pre_filter_result ks_pre_filter_result;
typedef struct ks_node_status_map ks_node_status_map;
typedef struct ks_waiting_pod ks_waiting_pod;
typedef struct ks_queued_pod ks_queued_pod;

/* ---- Status ---------------------------------------------------------- */

typedef enum ks_code {
    KS_SUCCESS = 0,
    KS_ERROR,
    KS_UNSCHEDULABLE,
    KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
    KS_WAIT,
    KS_SKIP,
    KS_PENDING,
} ks_code;

/* Build a status with one reason (printf format; NULL for none). */
ks_status *ks_status_new(ks_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
ks_status *ks_status_newv(ks_code code, const char *fmt, va_list ap);
void ks_status_add_reason(ks_status *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
ks_code ks_status_code(const ks_status *s); /* KS_SUCCESS for NULL */
size_t ks_status_nreasons(const ks_status *s);
const char *ks_status_reason(const ks_status *s, size_t i);
/* The plugin that produced the status (set by the framework). */
const char *ks_status_plugin(const ks_status *s);
void ks_status_free(ks_status *s);
const char *ks_code_name(ks_code c); /* "Success", "Unschedulable", ... */
static inline bool ks_status_is_success(const ks_status *s) { return s == NULL || ks_status_code(s) == KS_SUCCESS; }

/* ---- Cycle state ------------------------------------------------------
 * Per scheduling attempt key/value store. Keys are small integers obtained
 * once (at plugin creation) from a name. Values written in PreFilter or
 * PreScore are read in Filter or Score. `clone` is called when the state is
 * copied for preemption dry runs; values without a clone are shared. */
typedef int ks_state_key;
ks_state_key ks_state_key_get(const char *name);
void ks_cycle_state_write(ks_cycle_state *st, ks_state_key key, void *value,
                          void (*free_fn)(void *), void *(*clone_fn)(const void *));
void *ks_cycle_state_read(const ks_cycle_state *st, ks_state_key key);
/* Allocation that lives exactly as long as the cycle (freed with it). */
void *ks_cycle_state_alloc(ks_cycle_state *st, size_t n);

/* ---- Read-only object accessors ---------------------------------------- */

typedef uint32_t ks_name_id; /* interned string */
ks_name_id ks_intern_name(const char *s);
const char *ks_name_str(ks_name_id id);

const char *ks_pod_namespace(const ks_pod *p);
const char *ks_pod_name(const ks_pod *p);
const char *ks_pod_uid(const ks_pod *p);
const char *ks_pod_label(const ks_pod *p, const char *key);      /* NULL if absent */
const char *ks_pod_annotation(const ks_pod *p, const char *key); /* NULL if absent */
const char *ks_pod_scheduler_name(const ks_pod *p);
const char *ks_pod_node_name(const ks_pod *p); /* "" when not bound */
int32_t ks_pod_get_priority(const ks_pod *p);
/* Effective request of the pod for a resource name ("cpu" in millicores,
 * "memory" in bytes, "nvidia.com/gpu", ...). */
int64_t ks_pod_request(const ks_pod *p, const char *resource);
int64_t ks_pod_creation_unix(const ks_pod *p);
ks_pod *ks_pod_ref_public(ks_pod *p);
void ks_pod_unref_public(ks_pod *p);

const char *ks_node_name(const ks_node *n);
const char *ks_node_label(const ks_node *n, const char *key);
const char *ks_node_annotation(const ks_node *n, const char *key);
size_t ks_node_ntaints(const ks_node *n);
/* Taint i: key, value and effect ("NoSchedule", ...). */
void ks_node_taint(const ks_node *n, size_t i, const char **key, const char **value,
                   const char **effect);
bool ks_node_is_unschedulable(const ks_node *n);
int64_t ks_node_allocatable(const ks_node *n, const char *resource);

const ks_node *ks_node_info_node(const ks_node_info *ni);
size_t ks_node_info_npods(const ks_node_info *ni);
const ks_pod *ks_node_info_pod(const ks_node_info *ni, size_t i);
int64_t ks_node_info_allocatable(const ks_node_info *ni, const char *resource);
int64_t ks_node_info_requested(const ks_node_info *ni, const char *resource);
/* Size in bytes of an image present on the node, 0 when absent. */
int64_t ks_node_info_image_size(const ks_node_info *ni, const char *image);

/* ---- PreFilter result, scores, PostFilter -------------------------------- */

/* Restrict the nodes Filter considers (NULL result = all nodes). */
ks_pre_filter_result *ks_pre_filter_result_new(ks_cycle_state *st);
void ks_pre_filter_result_add(ks_pre_filter_result *r, const char *node_name);

typedef struct ks_node_score {
    const ks_node_info *node;
    int64_t score;
} ks_node_score;

/* Per-node filter statuses handed to PostFilter. */
size_t ks_node_status_map_len(const ks_node_status_map *m);
const ks_status *ks_node_status_map_get(const ks_node_status_map *m, const char *node_name);

typedef struct ks_post_filter_result {
    const char *nominated_node; /* NULL or a node name (copied by the framework) */
} ks_post_filter_result;

/* ---- Queue ------------------------------------------------------------ */

const ks_pod *ks_queued_pod_pod(const ks_queued_pod *q);
int64_t ks_queued_pod_timestamp_ns(const ks_queued_pod *q); /* when it entered activeQ */
uint32_t ks_queued_pod_attempts(const ks_queued_pod *q);

/* Cluster events a plugin wants to be requeued on (EventsToRegister). */
typedef enum ks_event_resource {
    KS_EV_POD = 1,
    KS_EV_ASSIGNED_POD = 2,
    KS_EV_UNSCHEDULED_POD = 4,
    KS_EV_NODE = 8,
    KS_EV_PVC = 16,
    KS_EV_PV = 32,
    KS_EV_STORAGE_CLASS = 64,
    KS_EV_CSINODE = 128,
    KS_EV_POD_GROUP = 256,
    KS_EV_WILDCARD = 0x7fff,
} ks_event_resource;

typedef enum ks_event_action {
    KS_ACT_ADD = 1,
    KS_ACT_DELETE = 2,
    KS_ACT_UPDATE = 4, /* any update; finer update kinds are not distinguished */
    KS_ACT_ALL = 7,
} ks_event_action;

typedef struct ks_cluster_event {
    uint32_t resource; /* ks_event_resource bits */
    uint32_t actions;  /* ks_event_action bits */
} ks_cluster_event;

/* ---- The plugin ------------------------------------------------------- */

typedef struct ks_plugin_ops {
    uint32_t abi_version; /* KS_ABI_VERSION */
    const char *name;     /* upstream-style name, e.g. "NodeResourcesFit" */

    /* Create an instance from its pluginConfig args (NULL when none given).
     * Return NULL and set *err (malloc'd) to refuse the args. A plugin
     * without state may leave create NULL; self is then NULL. */
    void *(*create)(const ks_args *args, ks_handle *h, char **err);
    void (*destroy)(void *self);

    /* Events that may make a pod this plugin rejected schedulable.
     * Returns the count written to out (at most max). NULL: every event. */
    size_t (*events_to_register)(void *self, ks_cluster_event *out, size_t max);

    ks_status *(*pre_enqueue)(void *self, const ks_pod *pod);
    /* QueueSort: true when a should be popped before b. */
    bool (*less)(void *self, const ks_queued_pod *a, const ks_queued_pod *b);

    ks_status *(*pre_filter)(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result);
    /* PreFilter extensions: update the state as if pod_to_add were on node. */
    ks_status *(*add_pod)(void *self, ks_cycle_state *st, const ks_pod *pod,
                          const ks_pod *pod_to_add, const ks_node_info *node);
    ks_status *(*remove_pod)(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_pod *pod_to_remove, const ks_node_info *node);
    ks_status *(*filter)(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *node);
    ks_status *(*post_filter)(void *self, ks_cycle_state *st, const ks_pod *pod,
                              const ks_node_status_map *statuses, ks_post_filter_result *result);

    ks_status *(*pre_score)(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes);
    ks_status *(*score)(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *node, int64_t *score);
    /* NormalizeScore: rewrite scores in place to 0..KS_MAX_NODE_SCORE. */
    ks_status *(*normalize_score)(void *self, ks_cycle_state *st, const ks_pod *pod,
                                  ks_node_score *scores, size_t n);

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
    void (*post_bind)(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);

    void *reserved[8]; /* zero: room for later extension points */
} ks_plugin_ops;

/* Register a plugin. Returns false (and *err, malloc'd) on a duplicate name
 * or an ABI mismatch. */
bool ks_registry_add(ks_registry *reg, const ks_plugin_ops *ops, char **err);
ks_registry *ks_default_registry(void);

/* Entry point a plugin .so must export. */
typedef int (*ks_plugin_init_fn)(ks_registry *reg);
#define KS_PLUGIN_INIT_SYMBOL "ks_plugin_init"

/* ---- Plugin args (the pluginConfig args tree, read-only) --------------- */

const ks_args *ks_args_get(const ks_args *a, const char *key); /* NULL if absent */
bool ks_args_is_map(const ks_args *a);
size_t ks_args_len(const ks_args *a);                /* map entries / list items */
const ks_args *ks_args_item(const ks_args *a, size_t i);
const char *ks_args_key(const ks_args *a, size_t i); /* map key i */
const char *ks_args_string(const ks_args *a);        /* scalar text; NULL if not scalar */
bool ks_args_int(const ks_args *a, int64_t *out);
bool ks_args_bool(const ks_args *a, bool *out);

/* ---- Framework handle ------------------------------------------------- */

/* The current snapshot's node infos (valid during a scheduling cycle). */
size_t ks_handle_num_nodes(const ks_handle *h);
const ks_node_info *ks_handle_node_info(const ks_handle *h, size_t i);
const ks_node_info *ks_handle_node_info_by_name(const ks_handle *h, const char *name);

/* Waiting pods (Permit returned Wait). */
size_t ks_handle_waiting_pods(ks_handle *h, ks_waiting_pod **out, size_t max);
ks_waiting_pod *ks_handle_get_waiting_pod(ks_handle *h, const char *pod_uid);
const ks_pod *ks_waiting_pod_pod(const ks_waiting_pod *w);
/* Allow on behalf of plugin; the pod proceeds when every plugin that made
 * it wait has allowed it. */
void ks_waiting_pod_allow(ks_waiting_pod *w, const char *plugin);
void ks_waiting_pod_reject(ks_waiting_pod *w, const char *plugin, const char *msg);

/* Backend client for Bind/PreBind plugins. */
ks_status *ks_handle_bind(ks_handle *h, const ks_pod *pod, const char *node);
ks_status *ks_handle_delete_pod(ks_handle *h, const ks_pod *pod);
/* Objects of other kinds known to the backend, by kind and namespace/name;
 * returns the args-style tree of the object or NULL. */
const ks_args *ks_handle_get_object(ks_handle *h, const char *kind, const char *ns,
                                    const char *name);

/* Events (events.k8s.io/v1): type "Normal" or "Warning". */
void ks_handle_event(ks_handle *h, const ks_pod *regarding, const char *type,
                     const char *reason, const char *action, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* klog-style logging at verbosity v (shown with -v=v or higher). */
bool ks_log_enabled(int v);
void ks_logf(int v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
