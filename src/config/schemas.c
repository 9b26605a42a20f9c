/* The v1 field lists: KubeSchedulerConfiguration (k8s.io/kube-scheduler
 * config/v1 and component-base v1alpha1), the in-tree plugin args and the
 * core/v1 types they embed. Names, and omitempty/pointer-ness (which decide
 * what is printed back), follow the Go json tags. */
#include "config/internal.h"

#define F(n, k, fl) {n, k, fl, SK_ANY, NULL}
#define OBJ(n, fl, t) {n, SK_OBJ, fl, SK_ANY, &t}
#define LIST(n, fl, e) {n, SK_LIST, fl, e, NULL}
#define LISTOF(n, fl, t) {n, SK_LIST, fl, SK_OBJ, &t}
#define END {NULL, SK_ANY, 0, SK_ANY, NULL}
#define OE SF_OMITEMPTY
#define PTR (SF_PTR | SF_OMITEMPTY)

/* ---- core/v1 and meta/v1 ------------------------------------------------ */

static const sk_field f_label_req[] = {
    F("key", SK_STR, 0), F("operator", SK_STR, 0), LIST("values", OE, SK_STR), END};
static const sk_type t_label_req = {"LabelSelectorRequirement", f_label_req};

static const sk_field f_label_selector[] = {
    F("matchLabels", SK_STRMAP, OE), LISTOF("matchExpressions", OE, t_label_req), END};
static const sk_type t_label_selector = {"LabelSelector", f_label_selector};

static const sk_field f_tsc[] = {
    F("maxSkew", SK_I32, 0),
    F("topologyKey", SK_STR, 0),
    F("whenUnsatisfiable", SK_STR, 0),
    OBJ("labelSelector", PTR, t_label_selector),
    F("minDomains", SK_I32, PTR),
    F("nodeAffinityPolicy", SK_STR, PTR),
    F("nodeTaintsPolicy", SK_STR, PTR),
    LIST("matchLabelKeys", OE, SK_STR),
    END};
static const sk_type t_tsc = {"TopologySpreadConstraint", f_tsc};

static const sk_field f_ns_req[] = {
    F("key", SK_STR, 0), F("operator", SK_STR, 0), LIST("values", OE, SK_STR), END};
static const sk_type t_ns_req = {"NodeSelectorRequirement", f_ns_req};

static const sk_field f_ns_term[] = {
    LISTOF("matchExpressions", OE, t_ns_req), LISTOF("matchFields", OE, t_ns_req), END};
static const sk_type t_ns_term = {"NodeSelectorTerm", f_ns_term};

static const sk_field f_node_selector[] = {LISTOF("nodeSelectorTerms", 0, t_ns_term), END};
static const sk_type t_node_selector = {"NodeSelector", f_node_selector};

static const sk_field f_pref_term[] = {F("weight", SK_I32, 0), OBJ("preference", 0, t_ns_term), END};
static const sk_type t_pref_term = {"PreferredSchedulingTerm", f_pref_term};

static const sk_field f_node_affinity[] = {
    OBJ("requiredDuringSchedulingIgnoredDuringExecution", PTR, t_node_selector),
    LISTOF("preferredDuringSchedulingIgnoredDuringExecution", OE, t_pref_term),
    END};
static const sk_type t_node_affinity = {"NodeAffinity", f_node_affinity};

/* ---- plugin args -------------------------------------------------------- */

#define TYPEMETA F("apiVersion", SK_STR, OE), F("kind", SK_STR, OE)

static const sk_field f_shape_point[] = {F("utilization", SK_I32, 0), F("score", SK_I32, 0), END};
static const sk_type t_shape_point = {"UtilizationShapePoint", f_shape_point};

static const sk_field f_resource_spec[] = {F("name", SK_STR, 0), F("weight", SK_I64, OE), END};
static const sk_type t_resource_spec = {"ResourceSpec", f_resource_spec};

static const sk_field f_rtcr[] = {LISTOF("shape", OE, t_shape_point), END};
static const sk_type t_rtcr = {"RequestedToCapacityRatioParam", f_rtcr};

static const sk_field f_scoring[] = {
    F("type", SK_STR, OE),
    LISTOF("resources", OE, t_resource_spec),
    OBJ("requestedToCapacityRatio", PTR, t_rtcr),
    END};
static const sk_type t_scoring = {"ScoringStrategy", f_scoring};

static const sk_field f_default_preemption[] = {
    TYPEMETA, F("minCandidateNodesPercentage", SK_I32, PTR), F("minCandidateNodesAbsolute", SK_I32, PTR), END};
const sk_type sk_default_preemption_args = {"DefaultPreemptionArgs", f_default_preemption};

static const sk_field f_inter_pod_affinity[] = {
    TYPEMETA, F("hardPodAffinityWeight", SK_I32, PTR), F("ignorePreferredTermsOfExistingPods", SK_BOOL, 0),
    END};
const sk_type sk_inter_pod_affinity_args = {"InterPodAffinityArgs", f_inter_pod_affinity};

static const sk_field f_fit[] = {
    TYPEMETA,
    LIST("ignoredResources", OE, SK_STR),
    LIST("ignoredResourceGroups", OE, SK_STR),
    OBJ("scoringStrategy", PTR, t_scoring),
    END};
const sk_type sk_node_resources_fit_args = {"NodeResourcesFitArgs", f_fit};

static const sk_field f_pts[] = {
    TYPEMETA, LISTOF("defaultConstraints", OE, t_tsc), F("defaultingType", SK_STR, OE), END};
const sk_type sk_pod_topology_spread_args = {"PodTopologySpreadArgs", f_pts};

static const sk_field f_balanced[] = {TYPEMETA, LISTOF("resources", OE, t_resource_spec), END};
const sk_type sk_balanced_allocation_args = {"NodeResourcesBalancedAllocationArgs", f_balanced};

static const sk_field f_volume_binding[] = {
    TYPEMETA, F("bindTimeoutSeconds", SK_I64, PTR), LISTOF("shape", OE, t_shape_point), END};
const sk_type sk_volume_binding_args = {"VolumeBindingArgs", f_volume_binding};

static const sk_field f_node_affinity_args[] = {TYPEMETA, OBJ("addedAffinity", PTR, t_node_affinity), END};
const sk_type sk_node_affinity_args = {"NodeAffinityArgs", f_node_affinity_args};

/* filterTimeout is a pointer without omitempty: absent prints null */
static const sk_field f_dra[] = {TYPEMETA, F("filterTimeout", SK_DUR, SF_PTR), END};
const sk_type sk_dynamic_resources_args = {"DynamicResourcesArgs", f_dra};

/* ---- KubeSchedulerConfiguration ------------------------------------------ */

static const sk_field f_plugin[] = {F("name", SK_STR, 0), F("weight", SK_I32, PTR), END};
static const sk_type t_plugin = {"Plugin", f_plugin};

static const sk_field f_plugin_set[] = {LISTOF("enabled", OE, t_plugin), LISTOF("disabled", OE, t_plugin), END};
static const sk_type t_plugin_set = {"PluginSet", f_plugin_set};

static const sk_field f_plugins[] = {
    OBJ("preEnqueue", 0, t_plugin_set), OBJ("queueSort", 0, t_plugin_set), OBJ("preFilter", 0, t_plugin_set),
    OBJ("filter", 0, t_plugin_set),     OBJ("postFilter", 0, t_plugin_set), OBJ("preScore", 0, t_plugin_set),
    OBJ("score", 0, t_plugin_set),      OBJ("reserve", 0, t_plugin_set),    OBJ("permit", 0, t_plugin_set),
    OBJ("preBind", 0, t_plugin_set),    OBJ("bind", 0, t_plugin_set),       OBJ("postBind", 0, t_plugin_set),
    OBJ("multiPoint", 0, t_plugin_set), END};
static const sk_type t_plugins = {"Plugins", f_plugins};

static const sk_field f_plugin_config[] = {F("name", SK_STR, 0), F("args", SK_ANY, OE), END};
static const sk_type t_plugin_config = {"PluginConfig", f_plugin_config};

static const sk_field f_profile[] = {
    F("schedulerName", SK_STR, PTR),
    F("percentageOfNodesToScore", SK_I32, PTR),
    OBJ("plugins", PTR, t_plugins),
    LISTOF("pluginConfig", OE, t_plugin_config),
    END};
static const sk_type t_profile = {"KubeSchedulerProfile", f_profile};

static const sk_field f_managed_resource[] = {F("name", SK_STR, 0), F("ignoredByScheduler", SK_BOOL, OE), END};
static const sk_type t_managed_resource = {"ExtenderManagedResource", f_managed_resource};

static const sk_field f_tls[] = {
    F("insecure", SK_BOOL, OE), F("serverName", SK_STR, OE), F("certFile", SK_STR, OE),
    F("keyFile", SK_STR, OE),   F("caFile", SK_STR, OE),     F("certData", SK_B64, OE),
    F("keyData", SK_B64, OE),   F("caData", SK_B64, OE),     END};
static const sk_type t_tls = {"ExtenderTLSConfig", f_tls};

static const sk_field f_extender[] = {
    F("urlPrefix", SK_STR, 0),
    F("filterVerb", SK_STR, OE),
    F("preemptVerb", SK_STR, OE),
    F("prioritizeVerb", SK_STR, OE),
    F("weight", SK_I64, OE),
    F("bindVerb", SK_STR, OE),
    F("enableHTTPS", SK_BOOL, OE),
    OBJ("tlsConfig", PTR, t_tls),
    F("httpTimeout", SK_DUR, 0),
    F("nodeCacheCapable", SK_BOOL, OE),
    LISTOF("managedResources", OE, t_managed_resource),
    F("ignorable", SK_BOOL, OE),
    END};
static const sk_type t_extender = {"Extender", f_extender};

static const sk_field f_leader_election[] = {
    F("leaderElect", SK_BOOL, SF_PTR),   F("leaseDuration", SK_DUR, 0), F("renewDeadline", SK_DUR, 0),
    F("retryPeriod", SK_DUR, 0),         F("resourceLock", SK_STR, 0),  F("resourceName", SK_STR, 0),
    F("resourceNamespace", SK_STR, 0),   END};
static const sk_type t_leader_election = {"LeaderElectionConfiguration", f_leader_election};

static const sk_field f_client_connection[] = {
    F("kubeconfig", SK_STR, 0), F("acceptContentTypes", SK_STR, 0), F("contentType", SK_STR, 0),
    F("qps", SK_F32, 0),        F("burst", SK_I32, 0),             END};
static const sk_type t_client_connection = {"ClientConnectionConfiguration", f_client_connection};

static const sk_field f_config[] = {
    F("apiVersion", SK_STR, OE),
    F("kind", SK_STR, OE),
    F("parallelism", SK_I32, PTR),
    OBJ("leaderElection", 0, t_leader_election),
    OBJ("clientConnection", 0, t_client_connection),
    F("enableProfiling", SK_BOOL, PTR),
    F("enableContentionProfiling", SK_BOOL, PTR),
    F("percentageOfNodesToScore", SK_I32, PTR),
    F("podInitialBackoffSeconds", SK_I64, PTR),
    F("podMaxBackoffSeconds", SK_I64, PTR),
    LISTOF("profiles", OE, t_profile),
    LISTOF("extenders", OE, t_extender),
    F("delayCacheUntilActive", SK_BOOL, OE),
    END};
const sk_type sk_config = {"KubeSchedulerConfiguration", f_config};
