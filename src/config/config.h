/* KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), in memory.
 *
 * Life of a configuration:
 *
 *   ks_config_load()      parse a YAML/JSON file, decode strictly, apply the
 *                         v1.34 defaults (default plugins merged with the
 *                         profile's plugins, default plugin args), validate,
 *                         and resolve the per-extension-point plugin lists
 *                         using the built-in table of in-tree plugins. A
 *                         resolution failure there is not a load failure
 *                         (the plugin may come from a .so): it only leaves
 *                         the profile's resolved_ok false.
 *   ks_config_default()   the same for an empty file (what kube-scheduler
 *                         runs with when given no --config).
 *   ks_config_resolve()   (re)build every profile's `resolved` lists; the
 *                         framework calls it again with its registry once
 *                         out-of-tree plugins are loaded, because which
 *                         extension points a multiPoint plugin expands to
 *                         depends on what the plugin implements.
 *   ks_config_to_yaml()   print like `kube-scheduler --write-config-to`.
 *   ks_config_free()
 *
 * Everything a ks_config points to lives in its arena; the structs are plain
 * data and may be read freely (never modified) once loaded.
 *
 * Errors are collected, never printed: every function taking a
 * ks_config_errors appends one line per problem ("FILE:LINE: path: message"
 * when the line is known) and the caller decides what to do with them.
 */
#ifndef KS_CONFIG_H
#define KS_CONFIG_H

#include "codec/tree.h"
#include "config/feature_gates.h"
#include "util/arena.h"

#include <stdbool.h>
#include <stdint.h>

#define KS_CONFIG_API_VERSION "kubescheduler.config.k8s.io/v1"
#define KS_CONFIG_KIND "KubeSchedulerConfiguration"
#define KS_DEFAULT_SCHEDULER_NAME "default-scheduler"

/* ---- errors ----------------------------------------------------------- */

typedef struct ks_config_errors {
    char **msgs; /* malloc'd strings */
    uint32_t n, cap;
} ks_config_errors;

void ks_config_errors_init(ks_config_errors *e);
void ks_config_errors_free(ks_config_errors *e);
void ks_config_errors_add(ks_config_errors *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- plugins ----------------------------------------------------------- */

/* Extension points in the order of the v1 Plugins struct; the order of the
 * named members of ks_plugins_config below matches it. */
typedef enum ks_ext_point {
    KS_EP_PRE_ENQUEUE = 0,
    KS_EP_QUEUE_SORT,
    KS_EP_PRE_FILTER,
    KS_EP_FILTER,
    KS_EP_POST_FILTER,
    KS_EP_PRE_SCORE,
    KS_EP_SCORE,
    KS_EP_RESERVE,
    KS_EP_PERMIT,
    KS_EP_PRE_BIND,
    KS_EP_BIND,
    KS_EP_POST_BIND,
    KS_EP_COUNT
} ks_ext_point;

#define KS_EP_BIT(p) (1u << (p))

/* "preEnqueue", "queueSort", ... (the v1 field name). */
const char *ks_ext_point_field(ks_ext_point p);
/* "PreEnqueuePlugin", "QueueSortPlugin", ... (used in framework errors). */
const char *ks_ext_point_type(ks_ext_point p);

/* A plugin named in a set. weight 0 means "not set" (as in upstream's
 * internal config); a score plugin with weight 0 scores with weight 1. */
typedef struct ks_plugin_ref {
    const char *name;
    int32_t weight;
    int line; /* source line, 0 when unknown or from defaults */
} ks_plugin_ref;

typedef struct ks_plugin_set {
    ks_plugin_ref *enabled;
    uint32_t nenabled;
    ks_plugin_ref *disabled;
    uint32_t ndisabled;
} ks_plugin_set;

/* After defaulting these are the *merged* sets (default plugins merged with
 * the file's, as upstream's mergePlugins does), which is what is printed. */
typedef struct ks_plugins_config {
    union {
        struct {
            ks_plugin_set pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score,
                score, reserve, permit, pre_bind, bind, post_bind;
        };
        ks_plugin_set point[KS_EP_COUNT]; /* indexed by ks_ext_point */
    };
    ks_plugin_set multi_point;
} ks_plugins_config;

/* One pluginConfig entry. For in-tree plugins `args` is the decoded and
 * defaulted args re-encoded as a tree in upstream's v1 shape (including
 * apiVersion and kind), e.g. for NodeResourcesFit
 *   {apiVersion, kind, scoringStrategy: {type, resources: [{name, weight}]}}
 * Integers are KT_INT, durations are KT_STRING ("10s"). For out-of-tree
 * plugins it is the tree from the file, untouched (NULL when absent). */
typedef struct ks_plugin_config {
    const char *name;
    ks_tree *args;
} ks_plugin_config;

/* The final, ordered plugin list of one extension point, exactly as
 * upstream's framework builds it (NewFramework: per-point lists, then
 * expandMultiPointPlugins' reordering: overridden plugins, then multiPoint
 * plugins, then the remaining per-point ones). For KS_EP_SCORE `weight` is
 * the effective weight (per-point weight wins over multiPoint; 0 -> 1);
 * for the other points it is 0. */
typedef struct ks_resolved_list {
    ks_plugin_ref *plugins;
    uint32_t n;
} ks_resolved_list;

typedef struct ks_profile_config {
    const char *scheduler_name;
    int32_t percentage_of_nodes_to_score; /* valid when has_percentage */
    bool has_percentage;
    ks_plugins_config plugins;
    ks_plugin_config *plugin_config; /* after defaulting: file entries first,
                                        then defaults for the other in-tree
                                        plugins that are enabled anywhere */
    uint32_t nplugin_config;
    int line; /* line of this profile in the file, 0 if unknown */
    /* The feature gates its framework and plugins read: the process
     * gates when it was defaulted (features_set); unset, ks_framework_new
     * takes the process gates then. */
    ks_feature_set features;
    bool features_set;

    /* Filled by ks_config_resolve(). */
    bool resolved_ok;
    ks_resolved_list resolved[KS_EP_COUNT];
} ks_profile_config;

/* ---- extenders --------------------------------------------------------- */

typedef struct ks_extender_tls {
    bool insecure;
    const char *server_name, *cert_file, *key_file, *ca_file;
    /* []byte fields; base64 text as written (decoded length is checked) */
    const char *cert_data, *key_data, *ca_data;
} ks_extender_tls;

typedef struct ks_extender_resource {
    const char *name;
    bool ignored_by_scheduler;
} ks_extender_resource;

typedef struct ks_extender_config {
    const char *url_prefix;
    const char *filter_verb, *preempt_verb, *prioritize_verb, *bind_verb;
    int64_t weight;
    bool enable_https;
    bool has_tls;
    ks_extender_tls tls;
    int64_t http_timeout_ns; /* 0 = client default (upstream prints "0s") */
    bool node_cache_capable;
    ks_extender_resource *managed_resources;
    uint32_t nmanaged_resources;
    bool ignorable;
} ks_extender_config;

/* ---- the whole configuration -------------------------------------------- */

typedef struct ks_leader_election {
    bool leader_elect;
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    const char *resource_lock, *resource_name, *resource_namespace;
} ks_leader_election;

typedef struct ks_client_connection {
    const char *kubeconfig;
    const char *accept_content_types;
    const char *content_type;
    float qps;
    int32_t burst;
} ks_client_connection;

typedef struct ks_config {
    const char *source; /* file name, or "<defaults>" */
    int32_t parallelism;
    int32_t percentage_of_nodes_to_score; /* 0 = adaptive */
    int64_t pod_initial_backoff_seconds, pod_max_backoff_seconds;
    ks_leader_election leader_election;
    ks_client_connection client_connection;
    bool enable_profiling, enable_contention_profiling;
    bool delay_cache_until_active;
    /* kube-scheduler's deprecated --pod-max-in-unschedulable-pods-duration
     * (not a field of the file); 0: 5 minutes. */
    int64_t pod_max_in_unschedulable_ns;
    ks_extender_config *extenders;
    uint32_t nextenders;
    ks_profile_config *profiles;
    uint32_t nprofiles;
    ks_arena *arena;
} ks_config;

/* ---- functions --------------------------------------------------------- */

/* Load, default, validate and resolve (with the in-tree table) a file.
 * Returns NULL when anything is wrong; every problem is in *errs. */
ks_config *ks_config_load(const char *path, ks_config_errors *errs);
/* Same from a buffer; `name` is used in messages. */
ks_config *ks_config_load_buffer(const char *name, const char *buf, size_t len,
                                 ks_config_errors *errs);
/* The v1.34 defaults (never fails). */
ks_config *ks_config_default(void);
void ks_config_free(ks_config *cfg);

/* Which extension points a plugin implements (KS_EP_BIT mask); 0 means the
 * plugin does not exist. */
typedef uint32_t (*ks_plugin_points_fn)(void *ctx, const char *plugin);
/* The built-in table of in-tree plugins (v1.34 interfaces). */
uint32_t ks_config_intree_points(void *ctx, const char *plugin);

/* Build each profile's `resolved` lists with upstream's framework rules.
 * fn NULL means ks_config_intree_points. May be called again (the lists
 * are rebuilt). One error per failing profile, in the framework's wording:
 * "FILE:LINE: creating profile for scheduler name NAME: " followed by
 * "PreFilterPlugin \"Foo\" does not exist", "plugin \"X\" does not
 * extend ScorePlugin plugin", "plugin \"X\" already registered as
 * \"FilterPlugin\"", "only one queue sort plugin required ...", "at least
 * one bind plugin is needed ...". Returns false if any profile failed. */
bool ks_config_resolve(ks_config *cfg, ks_plugin_points_fn fn, void *ctx,
                       ks_config_errors *errs);

/* The profile with that scheduler name, NULL when none (pods naming an
 * unknown scheduler are left alone). */
const ks_profile_config *ks_config_profile(const ks_config *cfg, const char *scheduler_name);
/* The args of a plugin in a profile, NULL when the profile has none. */
const ks_tree *ks_profile_plugin_args(const ks_profile_config *p, const char *plugin);

/* Go's time.ParseDuration (for duration flags); false with *err
 * (malloc'd, Go's wording) when invalid. */
bool ks_parse_duration(const char *s, int64_t *ns, char **err);

/* Print as v1 YAML, fields in upstream's serialization order (sorted keys,
 * as sigs.k8s.io/yaml emits). malloc'd. */
char *ks_config_to_yaml(const ks_config *cfg);
/* The same as compact JSON (what /configz serves). malloc'd. */
char *ks_config_to_json(const ks_config *cfg);

#endif
