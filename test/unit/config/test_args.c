/* InterPodAffinityArgs and PodTopologySpreadArgs as the configuration
 * hands them to the plugins (decoded, defaulted, re-encoded v1 trees), and
 * the plugins' own refusal of bad args when given a tree directly. */
#include "codec/tree.h"
#include "config/config.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/podtopologyspread/podtopologyspread.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_inter_pod_affinity, ks_plugin_pod_topology_spread;

static ks_config *load(const char *yaml) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("args.yaml", yaml, strlen(yaml), &errs);
    if (!cfg) fail_msg("config: %s", errs.n ? errs.msgs[0] : "?");
    ks_config_errors_free(&errs);
    return cfg;
}

static void *create(const ks_plugin_ops *ops, const ks_config *cfg, char **err) {
    const ks_tree *args = ks_profile_plugin_args(&cfg->profiles[0], ops->name);
    return ops->create((const ks_args *)args, NULL, err);
}

static void test_defaults_from_the_default_configuration(void **s) {
    ks_config *cfg = ks_config_default();
    char *err = NULL;
    ipa *i = create(&ks_plugin_inter_pod_affinity, cfg, &err);
    assert_non_null(i);
    assert_int_equal(i->hard_weight, 1);
    assert_false(i->ignore_preferred);
    pts *p = create(&ks_plugin_pod_topology_spread, cfg, &err);
    assert_non_null(p);
    assert_true(p->system_defaulted);
    assert_int_equal(p->ndefaults, 2);
    assert_string_equal(ks_str(p->defaults[0].key), "kubernetes.io/hostname");
    assert_int_equal(p->defaults[0].max_skew, 3);
    assert_string_equal(ks_str(p->defaults[1].key), "topology.kubernetes.io/zone");
    assert_int_equal(p->defaults[1].max_skew, 5);
    assert_int_equal(p->defaults[1].when, KS_SCHEDULE_ANYWAY);
    ks_plugin_inter_pod_affinity.destroy(i);
    ks_plugin_pod_topology_spread.destroy(p);
    ks_config_free(cfg);
}

static void test_args_from_plugin_config(void **s) {
    ks_config *cfg = load("apiVersion: kubescheduler.config.k8s.io/v1\n"
                          "kind: KubeSchedulerConfiguration\n"
                          "profiles:\n"
                          "- pluginConfig:\n"
                          "  - name: InterPodAffinity\n"
                          "    args:\n"
                          "      hardPodAffinityWeight: 7\n"
                          "      ignorePreferredTermsOfExistingPods: true\n"
                          "  - name: PodTopologySpread\n"
                          "    args:\n"
                          "      defaultingType: List\n"
                          "      defaultConstraints:\n"
                          "      - maxSkew: 2\n"
                          "        topologyKey: topology.kubernetes.io/zone\n"
                          "        whenUnsatisfiable: DoNotSchedule\n"
                          "        minDomains: 3\n"
                          "        nodeTaintsPolicy: Honor\n"
                          "      - maxSkew: 1\n"
                          "        topologyKey: kubernetes.io/hostname\n"
                          "        whenUnsatisfiable: ScheduleAnyway\n"
                          "        nodeAffinityPolicy: Ignore\n");
    char *err = NULL;
    ipa *i = create(&ks_plugin_inter_pod_affinity, cfg, &err);
    assert_non_null(i);
    assert_int_equal(i->hard_weight, 7);
    assert_true(i->ignore_preferred);
    pts *p = create(&ks_plugin_pod_topology_spread, cfg, &err);
    assert_non_null(p);
    assert_false(p->system_defaulted);
    assert_int_equal(p->ndefaults, 2);
    assert_int_equal(p->defaults[0].max_skew, 2);
    assert_int_equal(p->defaults[0].when, KS_DO_NOT_SCHEDULE);
    assert_int_equal(p->defaults[0].min_domains, 3);
    assert_int_equal(p->defaults[0].taints_policy, KS_POLICY_HONOR);
    assert_int_equal(p->defaults[0].affinity_policy, KS_POLICY_HONOR);
    assert_int_equal(p->defaults[1].when, KS_SCHEDULE_ANYWAY);
    assert_int_equal(p->defaults[1].affinity_policy, KS_POLICY_IGNORE);
    assert_int_equal(p->defaults[1].min_domains, 1);
    ks_plugin_inter_pod_affinity.destroy(i);
    ks_plugin_pod_topology_spread.destroy(p);
    ks_config_free(cfg);
}

/* Trees built by hand reach create() without the configuration's
 * validation (an embedder passing its own args): the plugins refuse them
 * with upstream's messages. */
static ks_tree *map(ks_arena *a) { return kt_new(a, KT_MAP, 0); }

static void test_bad_args_are_refused(void **s) {
    ks_arena *a = ks_arena_new(1024);
    char *err = NULL;

    ks_tree *t = map(a);
    kt_map_add(a, t, "hardPodAffinityWeight", kt_int(a, 101));
    assert_null(ks_plugin_inter_pod_affinity.create((const ks_args *)t, NULL, &err));
    assert_string_equal(err, "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]");
    free(err);

    t = map(a);
    kt_map_add(a, t, "defaultingType", kt_string(a, "System", 0));
    ks_tree *list = kt_new(a, KT_SEQ, 0), *c = map(a);
    kt_map_add(a, c, "maxSkew", kt_int(a, 1));
    kt_map_add(a, c, "topologyKey", kt_string(a, "zone", 0));
    kt_map_add(a, c, "whenUnsatisfiable", kt_string(a, "DoNotSchedule", 0));
    kt_seq_add(a, list, c);
    kt_map_add(a, t, "defaultConstraints", list);
    err = NULL;
    assert_null(ks_plugin_pod_topology_spread.create((const ks_args *)t, NULL, &err));
    assert_string_equal(err, "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty");
    free(err);

    kt_map_set(a, t, "defaultingType", kt_string(a, "List", 0));
    kt_seq_add(a, list, c); /* the same {zone, DoNotSchedule} twice */
    err = NULL;
    assert_null(ks_plugin_pod_topology_spread.create((const ks_args *)t, NULL, &err));
    assert_string_equal(err, "defaultConstraints[1]: Duplicate value: \"{zone, DoNotSchedule}\"");
    free(err);
    ks_arena_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_from_the_default_configuration),
        cmocka_unit_test(test_args_from_plugin_config),
        cmocka_unit_test(test_bad_args_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
