/* KubeSchedulerConfiguration defaults: the v1.34 values, the default plugin
 * set and weights, every in-tree plugin's default args, and partial args
 * completed the way SetDefaults_*Args do. Expected values come from
 * upstream's v1 defaulting (checked against kube-scheduler's own output). */
#include "config/config.h"
#include "config/feature_gates.h"
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define HDR "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static ks_config *load(const char *yaml) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("t.yaml", yaml, strlen(yaml), &errs);
    for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "unexpected: %s\n", errs.msgs[i]);
    assert_int_equal(errs.n, 0);
    assert_non_null(cfg);
    ks_config_errors_free(&errs);
    return cfg;
}

static int64_t arg_int(const ks_tree *args, const char *path) {
    /* "a.b" */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const ks_tree *t = args;
    for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, ".")) t = kt_get(t, tok);
    assert_non_null(t);
    assert_int_equal(t->type, KT_INT);
    return t->ival;
}

static const char *arg_str(const ks_tree *args, const char *key) {
    const ks_tree *t = kt_get(args, key);
    assert_non_null(t);
    assert_int_equal(t->type, KT_STRING);
    return t->text;
}

static void test_top_level_defaults(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    assert_non_null(cfg);
    assert_int_equal(cfg->parallelism, 16);
    assert_int_equal(cfg->percentage_of_nodes_to_score, 0);
    assert_int_equal(cfg->pod_initial_backoff_seconds, 1);
    assert_int_equal(cfg->pod_max_backoff_seconds, 10);
    assert_true(cfg->leader_election.leader_elect);
    assert_int_equal(cfg->leader_election.lease_duration_ns, 15000000000LL);
    assert_int_equal(cfg->leader_election.renew_deadline_ns, 10000000000LL);
    assert_int_equal(cfg->leader_election.retry_period_ns, 2000000000LL);
    assert_string_equal(cfg->leader_election.resource_lock, "leases");
    assert_string_equal(cfg->leader_election.resource_name, "kube-scheduler");
    assert_string_equal(cfg->leader_election.resource_namespace, "kube-system");
    assert_string_equal(cfg->client_connection.content_type, "application/vnd.kubernetes.protobuf");
    assert_string_equal(cfg->client_connection.kubeconfig, "");
    assert_true(cfg->client_connection.qps == 50.0f);
    assert_int_equal(cfg->client_connection.burst, 100);
    assert_true(cfg->enable_profiling);
    assert_true(cfg->enable_contention_profiling);
    assert_false(cfg->delay_cache_until_active);
    assert_int_equal(cfg->nextenders, 0);
    assert_int_equal(cfg->nprofiles, 1);
    assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
    assert_false(cfg->profiles[0].has_percentage);
    ks_config_free(cfg);
}

/* getDefaultPlugins in v1.34, DynamicResources included (the feature is GA). */
static const struct {
    const char *name;
    int32_t weight;
} default_multi_point[] = {
    {"SchedulingGates", 0},   {"PrioritySort", 0},     {"NodeUnschedulable", 0},
    {"NodeName", 0},          {"TaintToleration", 3},  {"NodeAffinity", 2},
    {"NodePorts", 0},         {"NodeResourcesFit", 1}, {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},  {"VolumeBinding", 0},    {"VolumeZone", 0},
    {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DynamicResources", 0},
    {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},     {"DefaultBinder", 0},
};

static void test_default_plugins(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    const ks_plugins_config *pl = &cfg->profiles[0].plugins;
    size_t n = sizeof default_multi_point / sizeof default_multi_point[0];
    assert_int_equal(pl->multi_point.nenabled, n);
    assert_int_equal(pl->multi_point.ndisabled, 0);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(pl->multi_point.enabled[i].name, default_multi_point[i].name);
        assert_int_equal(pl->multi_point.enabled[i].weight, default_multi_point[i].weight);
    }
    for (int e = 0; e < KS_EP_COUNT; e++) {
        assert_int_equal(pl->point[e].nenabled, 0);
        assert_int_equal(pl->point[e].ndisabled, 0);
    }
    /* the named members alias the array */
    assert_ptr_equal(&pl->score, &pl->point[KS_EP_SCORE]);
    assert_ptr_equal(&pl->pre_enqueue, &pl->point[KS_EP_PRE_ENQUEUE]);
    assert_ptr_equal(&pl->post_bind, &pl->point[KS_EP_POST_BIND]);
    ks_config_free(cfg);
}

/* What upstream's framework builds from the defaults (ListPlugins). */
static const char *const default_resolved[KS_EP_COUNT] = {
    [KS_EP_PRE_ENQUEUE] = "SchedulingGates DynamicResources DefaultPreemption",
    [KS_EP_QUEUE_SORT] = "PrioritySort",
    [KS_EP_PRE_FILTER] = "NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits "
                         "VolumeBinding VolumeZone PodTopologySpread InterPodAffinity DynamicResources",
    [KS_EP_FILTER] = "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "
                     "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread "
                     "InterPodAffinity DynamicResources",
    [KS_EP_POST_FILTER] = "DynamicResources DefaultPreemption",
    [KS_EP_PRE_SCORE] = "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding PodTopologySpread "
                        "InterPodAffinity NodeResourcesBalancedAllocation",
    [KS_EP_SCORE] = "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
                    "InterPodAffinity:2 NodeResourcesBalancedAllocation:1 ImageLocality:1",
    [KS_EP_RESERVE] = "VolumeBinding DynamicResources",
    [KS_EP_PERMIT] = "",
    [KS_EP_PRE_BIND] = "VolumeBinding DynamicResources",
    [KS_EP_BIND] = "DefaultBinder",
    [KS_EP_POST_BIND] = "",
};

static void list_str(const ks_resolved_list *l, bool weights, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < l->n; i++) {
        if (weights) {
            n += (size_t)snprintf(out + n, cap - n, "%s%s:%d", i ? " " : "", l->plugins[i].name, l->plugins[i].weight);
        } else {
            n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " " : "", l->plugins[i].name);
        }
    }
}

static void test_default_resolved(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    const ks_profile_config *p = &cfg->profiles[0];
    assert_true(p->resolved_ok);
    char buf[1024];
    for (int e = 0; e < KS_EP_COUNT; e++) {
        list_str(&p->resolved[e], e == KS_EP_SCORE, buf, sizeof buf);
        assert_string_equal(buf, default_resolved[e]);
    }
    ks_config_free(cfg);
}

static void test_default_args(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    const ks_profile_config *p = &cfg->profiles[0];
    /* upstream appends them in name order */
    static const char *const names[] = {"DefaultPreemption", "DynamicResources", "InterPodAffinity",
                                        "NodeAffinity",      "NodeResourcesBalancedAllocation",
                                        "NodeResourcesFit",  "PodTopologySpread", "VolumeBinding"};
    assert_int_equal(p->nplugin_config, 8);
    for (int i = 0; i < 8; i++) {
        assert_string_equal(p->plugin_config[i].name, names[i]);
        assert_string_equal(arg_str(p->plugin_config[i].args, "apiVersion"), "kubescheduler.config.k8s.io/v1");
    }
    const ks_tree *a = ks_profile_plugin_args(p, "DefaultPreemption");
    assert_string_equal(arg_str(a, "kind"), "DefaultPreemptionArgs");
    assert_int_equal(arg_int(a, "minCandidateNodesPercentage"), 10);
    assert_int_equal(arg_int(a, "minCandidateNodesAbsolute"), 100);

    a = ks_profile_plugin_args(p, "InterPodAffinity");
    assert_int_equal(arg_int(a, "hardPodAffinityWeight"), 1);
    assert_int_equal(kt_get(a, "ignorePreferredTermsOfExistingPods")->type, KT_BOOL);
    assert_false(kt_get(a, "ignorePreferredTermsOfExistingPods")->bval);

    a = ks_profile_plugin_args(p, "NodeResourcesFit");
    const ks_tree *ss = kt_get(a, "scoringStrategy");
    assert_string_equal(arg_str(ss, "type"), "LeastAllocated");
    const ks_tree *res = kt_get(ss, "resources");
    assert_int_equal(res->n, 2);
    assert_string_equal(arg_str(res->items[0], "name"), "cpu");
    assert_int_equal(arg_int(res->items[0], "weight"), 1);
    assert_string_equal(arg_str(res->items[1], "name"), "memory");
    assert_int_equal(arg_int(res->items[1], "weight"), 1);

    a = ks_profile_plugin_args(p, "NodeResourcesBalancedAllocation");
    res = kt_get(a, "resources");
    assert_int_equal(res->n, 2);
    assert_string_equal(arg_str(res->items[0], "name"), "cpu");
    assert_int_equal(arg_int(res->items[1], "weight"), 1);

    a = ks_profile_plugin_args(p, "PodTopologySpread");
    assert_string_equal(arg_str(a, "defaultingType"), "System");
    assert_null(kt_get(a, "defaultConstraints"));

    a = ks_profile_plugin_args(p, "VolumeBinding");
    assert_int_equal(arg_int(a, "bindTimeoutSeconds"), 600);
    assert_null(kt_get(a, "shape")); /* StorageCapacityScoring is off */

    a = ks_profile_plugin_args(p, "DynamicResources");
    assert_string_equal(arg_str(a, "filterTimeout"), "10s");

    a = ks_profile_plugin_args(p, "NodeAffinity");
    assert_string_equal(arg_str(a, "kind"), "NodeAffinityArgs");
    assert_null(kt_get(a, "addedAffinity"));

    assert_null(ks_profile_plugin_args(p, "ImageLocality"));
    ks_config_free(cfg);
}

/* Partial args are completed field by field. */
static void test_partial_args(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n"
                              "- pluginConfig:\n"
                              "  - name: NodeResourcesFit\n"
                              "    args:\n"
                              "      scoringStrategy:\n"
                              "        type: MostAllocated\n"
                              "        resources:\n"
                              "        - name: cpu\n"
                              "        - name: nvidia.com/gpu\n"
                              "          weight: 0\n"
                              "        - name: memory\n"
                              "          weight: 5\n"
                              "  - name: NodeResourcesBalancedAllocation\n"
                              "    args:\n"
                              "      resources:\n"
                              "      - name: nvidia.com/gpu\n"
                              "  - name: DefaultPreemption\n"
                              "    args: {minCandidateNodesPercentage: 5}\n"
                              "  - name: PodTopologySpread\n"
                              "    args:\n"
                              "      defaultingType: List\n"
                              "  - name: DynamicResources\n"
                              "    args: {filterTimeout: 90s}\n"
                              "  - name: VolumeBinding\n"
                              "    args: {bindTimeoutSeconds: 30}\n"
                              "  - name: InterPodAffinity\n"
                              "    args: {ignorePreferredTermsOfExistingPods: true}\n");
    const ks_profile_config *p = &cfg->profiles[0];
    const ks_tree *ss = kt_get(ks_profile_plugin_args(p, "NodeResourcesFit"), "scoringStrategy");
    assert_string_equal(arg_str(ss, "type"), "MostAllocated");
    const ks_tree *res = kt_get(ss, "resources");
    assert_int_equal(res->n, 3);
    assert_int_equal(arg_int(res->items[0], "weight"), 1);
    assert_string_equal(arg_str(res->items[1], "name"), "nvidia.com/gpu");
    assert_int_equal(arg_int(res->items[1], "weight"), 1);
    assert_int_equal(arg_int(res->items[2], "weight"), 5);

    res = kt_get(ks_profile_plugin_args(p, "NodeResourcesBalancedAllocation"), "resources");
    assert_int_equal(res->n, 1);
    assert_int_equal(arg_int(res->items[0], "weight"), 1);

    const ks_tree *a = ks_profile_plugin_args(p, "DefaultPreemption");
    assert_int_equal(arg_int(a, "minCandidateNodesPercentage"), 5);
    assert_int_equal(arg_int(a, "minCandidateNodesAbsolute"), 100);
    assert_string_equal(arg_str(ks_profile_plugin_args(p, "PodTopologySpread"), "defaultingType"), "List");
    /* durations are normalised as Go prints them */
    assert_string_equal(arg_str(ks_profile_plugin_args(p, "DynamicResources"), "filterTimeout"), "1m30s");
    assert_int_equal(arg_int(ks_profile_plugin_args(p, "VolumeBinding"), "bindTimeoutSeconds"), 30);
    a = ks_profile_plugin_args(p, "InterPodAffinity");
    assert_true(kt_get(a, "ignorePreferredTermsOfExistingPods")->bval);
    assert_int_equal(arg_int(a, "hardPodAffinityWeight"), 1);
    /* file entries first, then defaults for the other enabled plugins */
    assert_int_equal(p->nplugin_config, 8);
    assert_string_equal(p->plugin_config[7].name, "NodeAffinity");
    ks_config_free(cfg);
}

/* A pluginConfig entry without args, or with args: null, gets the defaults. */
static void test_args_absent(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                              "  - name: InterPodAffinity\n    args: null\n");
    const ks_profile_config *p = &cfg->profiles[0];
    assert_int_equal(arg_int(ks_profile_plugin_args(p, "DefaultPreemption"), "minCandidateNodesAbsolute"), 100);
    assert_int_equal(arg_int(ks_profile_plugin_args(p, "InterPodAffinity"), "hardPodAffinityWeight"), 1);
    ks_config_free(cfg);
}

/* Out-of-tree args are handed over as written. */
static void test_out_of_tree_args(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- pluginConfig:\n  - name: Coscheduling\n"
                              "    args:\n      permitWaitingTimeSeconds: 10\n      anything: [1, two]\n"
                              "  - name: NoArgs\n");
    const ks_profile_config *p = &cfg->profiles[0];
    const ks_tree *a = ks_profile_plugin_args(p, "Coscheduling");
    assert_non_null(a);
    assert_int_equal(a->n, 2);
    assert_null(kt_get(a, "apiVersion"));
    assert_int_equal(arg_int(a, "permitWaitingTimeSeconds"), 10);
    assert_int_equal(kt_get(a, "anything")->n, 2);
    assert_null(ks_profile_plugin_args(p, "NoArgs"));
    ks_config_free(cfg);
}

static void test_scheduler_names(void **state) {
    (void)state;
    /* a lone profile is named default-scheduler */
    ks_config *cfg = load(HDR "profiles:\n- percentageOfNodesToScore: 30\n");
    assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
    assert_true(cfg->profiles[0].has_percentage);
    assert_int_equal(cfg->profiles[0].percentage_of_nodes_to_score, 30);
    ks_config_free(cfg);
    /* an empty list gets one default profile */
    cfg = load(HDR "profiles: []\n");
    assert_int_equal(cfg->nprofiles, 1);
    assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
    ks_config_free(cfg);
    /* lookup by name; unknown names find nothing */
    cfg = load(HDR "profiles:\n- schedulerName: a\n- schedulerName: b\n");
    assert_ptr_equal(ks_config_profile(cfg, "b"), &cfg->profiles[1]);
    assert_null(ks_config_profile(cfg, "default-scheduler"));
    assert_null(ks_config_profile(cfg, NULL));
    ks_config_free(cfg);
}

static void test_partial_top_level(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "leaderElection:\n  leaderElect: false\n  leaseDuration: 1m\n"
                              "clientConnection:\n  qps: 12.5\n  kubeconfig: /k\n"
                              "enableProfiling: false\n"
                              "percentageOfNodesToScore: 40\n"
                              "podMaxBackoffSeconds: 60\n");
    assert_false(cfg->leader_election.leader_elect);
    assert_int_equal(cfg->leader_election.lease_duration_ns, 60000000000LL);
    assert_int_equal(cfg->leader_election.renew_deadline_ns, 10000000000LL);
    assert_string_equal(cfg->leader_election.resource_lock, "leases");
    assert_true(cfg->client_connection.qps == 12.5f);
    assert_int_equal(cfg->client_connection.burst, 100);
    assert_string_equal(cfg->client_connection.kubeconfig, "/k");
    /* contention profiling follows profiling */
    assert_false(cfg->enable_profiling);
    assert_false(cfg->enable_contention_profiling);
    assert_int_equal(cfg->percentage_of_nodes_to_score, 40);
    assert_int_equal(cfg->pod_initial_backoff_seconds, 1);
    assert_int_equal(cfg->pod_max_backoff_seconds, 60);
    ks_config_free(cfg);
}

static void test_extenders_decoded(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "extenders:\n"
                              "- urlPrefix: https://ext:8443/scheduler\n"
                              "  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 2\n"
                              "  preemptVerb: preempt\n  bindVerb: bind\n  enableHTTPS: true\n"
                              "  httpTimeout: 30s\n  nodeCacheCapable: true\n  ignorable: true\n"
                              "  tlsConfig:\n    insecure: true\n    serverName: ext\n    caData: aGVsbG8=\n"
                              "  managedResources:\n  - name: example.com/foo\n    ignoredByScheduler: true\n");
    assert_int_equal(cfg->nextenders, 1);
    const ks_extender_config *e = &cfg->extenders[0];
    assert_string_equal(e->url_prefix, "https://ext:8443/scheduler");
    assert_string_equal(e->filter_verb, "filter");
    assert_string_equal(e->prioritize_verb, "prioritize");
    assert_string_equal(e->preempt_verb, "preempt");
    assert_string_equal(e->bind_verb, "bind");
    assert_int_equal(e->weight, 2);
    assert_true(e->enable_https && e->node_cache_capable && e->ignorable);
    assert_int_equal(e->http_timeout_ns, 30000000000LL);
    assert_true(e->has_tls);
    assert_true(e->tls.insecure);
    assert_string_equal(e->tls.server_name, "ext");
    assert_string_equal(e->tls.ca_data, "aGVsbG8=");
    assert_int_equal(e->nmanaged_resources, 1);
    assert_string_equal(e->managed_resources[0].name, "example.com/foo");
    assert_true(e->managed_resources[0].ignored_by_scheduler);
    ks_config_free(cfg);
}

static bool set_gates(const char *v) {
    char *err = NULL;
    const char *vals[] = {v};
    bool ok = ks_feature_gates_apply(vals, 1, &err);
    if (err) fprintf(stderr, "gates: %s\n", err);
    free(err);
    return ok;
}

static bool has_multi_point(const ks_config *cfg, const char *name) {
    const ks_plugin_set *mp = &cfg->profiles[0].plugins.multi_point;
    for (uint32_t i = 0; i < mp->nenabled; i++)
        if (!strcmp(mp->enabled[i].name, name)) return true;
    return false;
}

/* The defaults follow the feature gates, as upstream's: DynamicResources
 * is a default plugin only with DynamicResourceAllocation (applyFeatureGates),
 * filterTimeout is defaulted only with DRASchedulerFilterTimeout, and set
 * without it, it is refused. */
static void test_feature_gates(void **state) {
    (void)state;
    ks_log_set_output(fopen("/dev/null", "w")); /* the GA gate's warning */
    assert_true(set_gates("DynamicResourceAllocation=false"));
    ks_config *cfg = ks_config_default();
    assert_false(has_multi_point(cfg, "DynamicResources"));
    assert_true(has_multi_point(cfg, "DefaultPreemption"));
    ks_config_free(cfg);

    assert_true(set_gates("DRASchedulerFilterTimeout=false"));
    cfg = ks_config_default();
    assert_true(has_multi_point(cfg, "DynamicResources"));
    const ks_tree *a = ks_profile_plugin_args(&cfg->profiles[0], "DynamicResources");
    const ks_tree *ft = kt_get(a, "filterTimeout");
    assert_true(!ft || ft->type == KT_NULL);
    ks_config_free(cfg);
    const char *y = HDR "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: 5s}\n";
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    cfg = ks_config_load_buffer("t.yaml", y, strlen(y), &errs);
    assert_null(cfg);
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.msgs[0], "profiles[0].pluginConfig[0].args.filterTimeout: Forbidden: "
                                         "DRASchedulingFilterTimeout feature gate is disabled"));
    ks_config_errors_free(&errs);

    ks_feature_gates_reset();
    cfg = load(y);
    assert_string_equal(arg_str(ks_profile_plugin_args(&cfg->profiles[0], "DynamicResources"), "filterTimeout"), "5s");
    ks_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feature_gates),
        cmocka_unit_test(test_top_level_defaults), cmocka_unit_test(test_default_plugins),
        cmocka_unit_test(test_default_resolved),   cmocka_unit_test(test_default_args),
        cmocka_unit_test(test_partial_args),       cmocka_unit_test(test_args_absent),
        cmocka_unit_test(test_out_of_tree_args),   cmocka_unit_test(test_scheduler_names),
        cmocka_unit_test(test_partial_top_level),  cmocka_unit_test(test_extenders_decoded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
