/* What a scheduling run records: attempts by result and profile, the
 * Filter evaluation counts derived from the nodes' verdicts (the plugins
 * up to the one that rejected a node ran), extension point durations,
 * pods bound, queue arrivals; with sampling at 100% every plugin call is
 * timed. Simulations on small clusters, values read back as deltas of
 * the process-wide registry. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "config/config.h"
#include "framework/fw_metrics.h"
#include "metrics/sched_metrics.h"
#include "sim/simulate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *config_yaml = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                 "kind: KubeSchedulerConfiguration\n"
                                 "profiles:\n"
                                 "- schedulerName: metrics-test\n";

static void simulate(const char *cluster_yaml) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("cfg.yaml", config_yaml, strlen(config_yaml), &errs);
    assert_non_null(cfg);
    assert_true(ks_config_resolve(cfg, NULL, NULL, &errs));
    ks_config_errors_free(&errs);
    ks_cluster *cl = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    char *err = NULL;
    assert_true(ks_load_buffer(cl, "cluster.yaml", cluster_yaml, strlen(cluster_yaml), &e));
    assert_true(ks_cluster_admit(cl, &err));
    ks_errors_free(&e);
    ks_sim_options so = {.seed = 1, .deterministic = true, .percentage_of_nodes_to_score = -1};
    ks_sim_result res;
    assert_true(ks_simulate(cl, cfg, ks_default_registry(), &so, &res, &err));
    ks_sim_result_free(&res);
    ks_cluster_free(cl);
    ks_config_free(cfg);
}

static uint64_t counter(ks_metric_vec *v, const char *a, const char *b, const char *c) {
    return ks_counter_value(ks_metric_get(v, a, b, c));
}

static uint64_t hcount(ks_metric *m) {
    uint64_t n;
    double s;
    ks_histogram_totals(m, &n, &s);
    return n;
}

#define NODE(name, cpu, extra)                                                                                      \
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: " name "\nspec:\n" extra "  taints: []\nstatus:\n  allocatable:\n" \
    "    cpu: \"" cpu "\"\n    memory: 8Gi\n    pods: \"110\"\n---\n"

static const char *pod_yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
                              "spec:\n  schedulerName: metrics-test\n  containers:\n  - name: c\n    image: x\n"
                              "    resources:\n      requests:\n        cpu: \"2\"\n";

static void test_filter_evaluations(void **state) {
    (void)state;
    const ks_sched_metrics *sm = ks_sm();
    ks_metric_vec *ev = sm->plugin_evaluation_total;
    uint64_t unsched0 = counter(ev, "NodeUnschedulable", "Filter", "metrics-test");
    uint64_t fit0 = counter(ev, "NodeResourcesFit", "Filter", "metrics-test");
    uint64_t taint0 = counter(ev, "TaintToleration", "Filter", "metrics-test");
    uint64_t att0 = ks_counter_value(ks_metric_get(sm->schedule_attempts, "scheduled", "metrics-test"));
    uint64_t filt0 = hcount(ks_metric_get(sm->framework_extension_point_duration, "Filter", "Success", "metrics-test"));
    uint64_t bind0 = hcount(ks_metric_get(sm->framework_extension_point_duration, "Bind", "Success", "metrics-test"));
    uint64_t incoming0 = ks_counter_value(ks_metric_get(sm->queue_incoming_pods, "active", "UnschedulablePodAdd"));
    uint64_t podatt0 = hcount(ks_metric_get(sm->pod_scheduling_attempts));

    /* n0 too small (NodeResourcesFit rejects it), n3 cordoned
     * (NodeUnschedulable, the first Filter, rejects it), n1 and n2 fit. */
    char cl[4096];
    snprintf(cl, sizeof(cl), "%s%s%s%s%s", NODE("n0", "1", ""), NODE("n1", "4", ""), NODE("n2", "4", ""),
             NODE("n3", "4", "  unschedulable: true\n"), pod_yaml);
    simulate(cl);
    assert_int_equal(counter(ev, "NodeUnschedulable", "Filter", "metrics-test") - unsched0, 4);
    /* TaintToleration comes between them in the default order */
    assert_int_equal(counter(ev, "TaintToleration", "Filter", "metrics-test") - taint0, 3);
    assert_int_equal(counter(ev, "NodeResourcesFit", "Filter", "metrics-test") - fit0, 3);
    assert_int_equal(ks_counter_value(ks_metric_get(sm->schedule_attempts, "scheduled", "metrics-test")) - att0, 1);
    assert_int_equal(hcount(ks_metric_get(sm->framework_extension_point_duration, "Filter", "Success",
                                          "metrics-test")) - filt0,
                     1);
    assert_int_equal(hcount(ks_metric_get(sm->framework_extension_point_duration, "Bind", "Success",
                                          "metrics-test")) - bind0,
                     1);
    assert_int_equal(ks_counter_value(ks_metric_get(sm->queue_incoming_pods, "active", "UnschedulablePodAdd")) -
                         incoming0,
                     1);
    assert_int_equal(hcount(ks_metric_get(sm->pod_scheduling_attempts)) - podatt0, 1);

    /* Every node passes: the counts come without reading the verdicts. */
    unsched0 = counter(ev, "NodeUnschedulable", "Filter", "metrics-test");
    fit0 = counter(ev, "NodeResourcesFit", "Filter", "metrics-test");
    snprintf(cl, sizeof(cl), "%s%s%s", NODE("m1", "4", ""), NODE("m2", "4", ""), pod_yaml);
    simulate(cl);
    assert_int_equal(counter(ev, "NodeUnschedulable", "Filter", "metrics-test") - unsched0, 2);
    assert_int_equal(counter(ev, "NodeResourcesFit", "Filter", "metrics-test") - fit0, 2);
}

static void test_unschedulable_and_timing(void **state) {
    (void)state;
    const ks_sched_metrics *sm = ks_sm();
    /* every call timed */
    ks_fwm_set_sampling(100, 1);
    uint64_t un0 = ks_counter_value(ks_metric_get(sm->schedule_attempts, "unschedulable", "metrics-test"));
    ks_metric *fit_timed =
        ks_metric_get(sm->plugin_execution_duration, "NodeResourcesFit", "Filter", "UnschedulableAndUnresolvable");
    uint64_t timed0 = hcount(fit_timed);
    char cl[4096];
    snprintf(cl, sizeof(cl), "%s%s%s", NODE("s1", "1", ""), NODE("s2", "1", ""), pod_yaml);
    simulate(cl);
    ks_fwm_set_sampling(KS_PLUGIN_METRICS_SAMPLE_PERCENT, KS_FWM_NODE_SAMPLE);
    /* one attempt (no event can help: nothing else happens), both nodes
     * rejected by NodeResourcesFit (more cpu than either has at all:
     * UnschedulableAndUnresolvable), both calls timed */
    assert_int_equal(ks_counter_value(ks_metric_get(sm->schedule_attempts, "unschedulable", "metrics-test")) - un0, 1);
    assert_true(hcount(fit_timed) - timed0 >= 2);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_plugin_timing_report(&b, false);
    assert_non_null(strstr(ks_sb_str(&b), "NodeResourcesFit                 Filter"));
    ks_sb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_evaluations),
        cmocka_unit_test(test_unschedulable_and_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
