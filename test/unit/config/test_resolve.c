/* Plugin set merging (v1 mergePlugins) and resolution into per-point lists
 * (the framework's updatePluginList / expandMultiPointPlugins /
 * getScoreWeights). Every expectation was produced by upstream's own
 * framework (v1.34) for the same file. */
#include "config/config.h"

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

static char buf[2048];

static const char *list(const ks_profile_config *p, ks_ext_point e) {
    size_t n = 0;
    buf[0] = '\0';
    const ks_resolved_list *l = &p->resolved[e];
    for (uint32_t i = 0; i < l->n; i++) {
        if (e == KS_EP_SCORE) {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%d", i ? " " : "", l->plugins[i].name,
                                  l->plugins[i].weight);
        } else {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", l->plugins[i].name);
        }
    }
    return buf;
}

static const char *set(const ks_plugin_set *s, bool disabled) {
    size_t n = 0;
    buf[0] = '\0';
    const ks_plugin_ref *r = disabled ? s->disabled : s->enabled;
    uint32_t cnt = disabled ? s->ndisabled : s->nenabled;
    for (uint32_t i = 0; i < cnt; i++) n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%d", i ? " " : "", r[i].name, r[i].weight);
    return buf;
}

/* Resolution must fail with exactly msg. */
static void expect_resolve_error(const char *yaml, ks_plugin_points_fn fn, void *ctx, const char *msg) {
    ks_config *cfg = load(yaml);
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    assert_false(ks_config_resolve(cfg, fn, ctx, &errs));
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.msgs[0], msg);
    assert_false(cfg->profiles[0].resolved_ok);
    ks_config_errors_free(&errs);
    ks_config_free(cfg);
}

/* score: disable "*", then enable two: only those score, in that order;
 * filter disables one default and names another explicitly, which moves it
 * to the front; multiPoint re-weights a default in place and disables one. */
static void test_disable_all_then_enable(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- schedulerName: a\n  plugins:\n"
                              "    score:\n      disabled:\n      - name: '*'\n      enabled:\n"
                              "      - name: NodeResourcesFit\n        weight: 5\n      - name: PodTopologySpread\n"
                              "    filter:\n      disabled:\n      - name: TaintToleration\n      enabled:\n"
                              "      - name: NodeAffinity\n"
                              "    multiPoint:\n      enabled:\n      - name: ImageLocality\n        weight: 9\n"
                              "      disabled:\n      - name: InterPodAffinity\n");
    const ks_profile_config *p = &cfg->profiles[0];
    assert_true(p->resolved_ok);
    assert_string_equal(list(p, KS_EP_SCORE), "NodeResourcesFit:5 PodTopologySpread:1");
    assert_string_equal(list(p, KS_EP_FILTER),
                        "NodeAffinity NodeUnschedulable NodeName NodePorts NodeResourcesFit VolumeRestrictions "
                        "NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread DynamicResources");
    assert_string_equal(list(p, KS_EP_PRE_FILTER),
                        "NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding "
                        "VolumeZone PodTopologySpread DynamicResources");
    assert_string_equal(list(p, KS_EP_PRE_SCORE),
                        "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding PodTopologySpread "
                        "NodeResourcesBalancedAllocation");
    /* the merged multiPoint set keeps the defaults' order */
    const ks_plugin_set *mp = &p->plugins.multi_point;
    assert_int_equal(mp->nenabled, 18);
    assert_string_equal(mp->enabled[16].name, "ImageLocality");
    assert_int_equal(mp->enabled[16].weight, 9);
    assert_string_equal(set(mp, true), "InterPodAffinity:0");
    assert_string_equal(set(&p->plugins.score, true), "*:0");
    ks_config_free(cfg);
}

/* multiPoint disables everything and enables a few; a per-point entry that
 * multiPoint also enables is an override and goes first. */
static void test_multipoint_and_point_overrides(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- schedulerName: a\n  plugins:\n"
                              "    multiPoint:\n      disabled:\n      - name: '*'\n      enabled:\n"
                              "      - name: PrioritySort\n      - name: DefaultBinder\n"
                              "      - name: NodeResourcesFit\n        weight: 3\n"
                              "    preFilter:\n      enabled:\n      - name: NodePorts\n"
                              "    filter:\n      enabled:\n      - name: NodeResourcesFit\n      - name: NodePorts\n");
    const ks_profile_config *p = &cfg->profiles[0];
    assert_string_equal(set(&p->plugins.multi_point, false), "PrioritySort:0 DefaultBinder:0 NodeResourcesFit:3");
    assert_string_equal(list(p, KS_EP_PRE_FILTER), "NodeResourcesFit NodePorts");
    assert_string_equal(list(p, KS_EP_FILTER), "NodeResourcesFit NodePorts");
    assert_string_equal(list(p, KS_EP_SCORE), "NodeResourcesFit:3");
    assert_string_equal(list(p, KS_EP_QUEUE_SORT), "PrioritySort");
    assert_string_equal(list(p, KS_EP_BIND), "DefaultBinder");
    assert_string_equal(list(p, KS_EP_PRE_ENQUEUE), "");
    assert_string_equal(list(p, KS_EP_POST_FILTER), "");
    ks_config_free(cfg);
}

/* Weights: the score point's entry wins over multiPoint's; weight 0 is 1;
 * a profile disabling all scoring has an empty score list. */
static void test_weight_overrides(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- schedulerName: a\n  plugins:\n"
                              "    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 7\n"
                              "    score:\n      enabled:\n      - name: ImageLocality\n        weight: 4\n"
                              "      - name: TaintToleration\n"
                              "- schedulerName: b\n  plugins:\n"
                              "    preScore:\n      disabled:\n      - name: '*'\n"
                              "    score:\n      disabled:\n      - name: '*'\n");
    assert_string_equal(list(&cfg->profiles[0], KS_EP_SCORE),
                        "ImageLocality:4 TaintToleration:1 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 "
                        "PodTopologySpread:2 InterPodAffinity:2 NodeResourcesBalancedAllocation:1");
    /* the multiPoint default was replaced in place by the file's entry */
    assert_string_equal(cfg->profiles[0].plugins.multi_point.enabled[4].name, "TaintToleration");
    assert_int_equal(cfg->profiles[0].plugins.multi_point.enabled[4].weight, 7);
    assert_string_equal(list(&cfg->profiles[1], KS_EP_SCORE), "");
    assert_string_equal(list(&cfg->profiles[1], KS_EP_PRE_SCORE), "");
    assert_string_equal(list(&cfg->profiles[1], KS_EP_FILTER),
                        "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "
                        "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread "
                        "InterPodAffinity DynamicResources");
    ks_config_free(cfg);
}

/* Disabled in multiPoint, enabled again at one point: only there. */
static void test_disabled_multipoint_reenabled_at_point(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- schedulerName: a\n  plugins:\n"
                              "    multiPoint:\n      disabled:\n      - name: ImageLocality\n"
                              "    score:\n      enabled:\n      - name: ImageLocality\n        weight: 3\n");
    const ks_profile_config *p = &cfg->profiles[0];
    assert_string_equal(list(p, KS_EP_SCORE),
                        "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
                        "InterPodAffinity:2 NodeResourcesBalancedAllocation:1 ImageLocality:3");
    assert_int_equal(p->plugins.multi_point.nenabled, 18);
    ks_config_free(cfg);
}

/* An out-of-tree plugin: what it implements comes from the callback. */
static uint32_t with_custom(void *ctx, const char *name) {
    (void)ctx;
    if (strcmp(name, "Custom") == 0) return KS_EP_BIT(KS_EP_FILTER) | KS_EP_BIT(KS_EP_SCORE);
    return ks_config_intree_points(NULL, name);
}

static void test_out_of_tree_multipoint(void **state) {
    (void)state;
    ks_config *cfg = load(HDR "profiles:\n- schedulerName: a\n  plugins:\n"
                              "    multiPoint:\n      enabled:\n      - name: NodeAffinity\n        weight: 9\n"
                              "      - name: Custom\n        weight: 4\n"
                              "    filter:\n      disabled:\n      - name: '*'\n      enabled:\n"
                              "      - name: NodeName\n      - name: Custom\n"
                              "    preFilter:\n      disabled:\n      - name: NodeAffinity\n");
    /* loading resolves with the in-tree table only: Custom is unknown */
    assert_false(cfg->profiles[0].resolved_ok);
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    assert_true(ks_config_resolve(cfg, with_custom, NULL, &errs));
    assert_int_equal(errs.n, 0);
    const ks_profile_config *p = &cfg->profiles[0];
    assert_true(p->resolved_ok);
    assert_string_equal(list(p, KS_EP_FILTER), "NodeName Custom");
    assert_string_equal(list(p, KS_EP_PRE_FILTER),
                        "NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone "
                        "PodTopologySpread InterPodAffinity DynamicResources");
    assert_string_equal(list(p, KS_EP_SCORE),
                        "TaintToleration:3 NodeAffinity:9 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
                        "InterPodAffinity:2 NodeResourcesBalancedAllocation:1 ImageLocality:1 Custom:4");
    ks_config_errors_free(&errs);
    ks_config_free(cfg);
}

static void test_framework_errors(void **state) {
    (void)state;
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    filter:\n      enabled:\n"
                             "      - name: NodeName\n      - name: NodeName\n",
                         NULL, NULL,
                         "t.yaml:4: creating profile for scheduler name a: plugin \"NodeName\" already registered as "
                         "\"FilterPlugin\"");
    /* a duplicate in multiPoint survives the merge and is caught here */
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      enabled:\n"
                             "      - name: NodeName\n      - name: NodeName\n",
                         NULL, NULL,
                         "t.yaml:4: creating profile for scheduler name a: plugin \"NodeName\" already registered as "
                         "\"FilterPlugin\"");
    /* unknown multiPoint plugins are reported at the first point expanded */
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      enabled:\n"
                             "      - name: Nope\n",
                         NULL, NULL,
                         "t.yaml:4: creating profile for scheduler name a: PreFilterPlugin \"Nope\" does not exist");
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled:\n"
                             "      - name: Nope\n",
                         NULL, NULL, "t.yaml:4: creating profile for scheduler name a: ScorePlugin \"Nope\" does not exist");
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled:\n"
                             "      - name: NodeName\n",
                         NULL, NULL,
                         "t.yaml:4: creating profile for scheduler name a: plugin \"NodeName\" does not extend "
                         "ScorePlugin plugin");
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      disabled:\n"
                             "      - name: '*'\n",
                         NULL, NULL,
                         "t.yaml:4: creating profile for scheduler name a: only one queue sort plugin required for "
                         "profile with scheduler name \"a\", but got 0");
    expect_resolve_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      disabled:\n"
                             "      - name: DefaultBinder\n",
                         NULL, NULL,
                         "t.yaml:4: creating profile for scheduler name a: at least one bind plugin is needed for "
                         "profile with scheduler name \"a\"");
}

/* Resolving again (the framework does, with its registry) replaces the
 * lists; the defaults resolve against the in-tree table. */
static void test_resolve_again(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    assert_true(ks_config_resolve(cfg, NULL, NULL, &errs));
    assert_true(ks_config_resolve(cfg, with_custom, NULL, &errs));
    assert_int_equal(errs.n, 0);
    assert_string_equal(list(&cfg->profiles[0], KS_EP_BIND), "DefaultBinder");
    assert_string_equal(ks_ext_point_field(KS_EP_PRE_ENQUEUE), "preEnqueue");
    assert_string_equal(ks_ext_point_type(KS_EP_POST_BIND), "PostBindPlugin");
    assert_int_equal(ks_config_intree_points(NULL, "DefaultPreemption"),
                     KS_EP_BIT(KS_EP_PRE_ENQUEUE) | KS_EP_BIT(KS_EP_POST_FILTER));
    assert_int_equal(ks_config_intree_points(NULL, "Nope"), 0);
    ks_config_errors_free(&errs);
    ks_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disable_all_then_enable),
        cmocka_unit_test(test_multipoint_and_point_overrides),
        cmocka_unit_test(test_weight_overrides),
        cmocka_unit_test(test_disabled_multipoint_reenabled_at_point),
        cmocka_unit_test(test_out_of_tree_multipoint),
        cmocka_unit_test(test_framework_errors),
        cmocka_unit_test(test_resolve_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
