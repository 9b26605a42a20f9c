/* InterPodAffinity and PodTopologySpread inside the real framework: the
 * default profile, its worker pool (the parallel PreFilter/PreScore paths),
 * Skip handling, the order of Filter plugins, and a preemption-style dry
 * run on a cloned cycle state.
 *
 *   zone z1: a1 (web)   a2 (web)
 *   zone z2: b1 (web)   b2 (db, required anti-affinity to web in its zone)
 *   zone z3: c1 (cache) c2 (tainted) c3
 *
 * The incoming web pod spreads by zone (maxSkew 2, DoNotSchedule), by
 * hostname (ScheduleAnyway, over web and cache pods), avoids other web
 * pods on its host, and prefers zones with a cache pod. */
#include "framework/snapshot.h"
#include "config/config.h"
#include "framework/cycle_state.h"
#include "framework/status.h"
#include "testutil_topology.h"

#include <ksched/framework.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *node_specs[] = {
    "a1 kubernetes.io/hostname=a1,topology.kubernetes.io/zone=z1",
    "a2 kubernetes.io/hostname=a2,topology.kubernetes.io/zone=z1",
    "b1 kubernetes.io/hostname=b1,topology.kubernetes.io/zone=z2",
    "b2 kubernetes.io/hostname=b2,topology.kubernetes.io/zone=z2",
    "c1 kubernetes.io/hostname=c1,topology.kubernetes.io/zone=z3",
    "c2 kubernetes.io/hostname=c2,topology.kubernetes.io/zone=z3 taint:{dedicated|gpu|NoSchedule}",
    "c3 kubernetes.io/hostname=c3,topology.kubernetes.io/zone=z3",
};
#define NNODES (sizeof(node_specs) / sizeof(node_specs[0]))

static const char *pod_specs[] = {
    "ns:default name:web-1 node:a1 labels:{app=web}",
    "ns:default name:web-2 node:a2 labels:{app=web}",
    "ns:default name:web-3 node:b1 labels:{app=web}",
    "ns:default name:db-1 node:b2 labels:{app=db} anti:{topology.kubernetes.io/zone|app=web}",
    "ns:default name:cache-1 node:c1 labels:{app=cache}",
};
#define NPODS (sizeof(pod_specs) / sizeof(pod_specs[0]))

#define INCOMING                                                                              \
    "ns:default name:web-4 labels:{app=web} "                                                 \
    "spread:{2|topology.kubernetes.io/zone|DoNotSchedule|app=web} "                           \
    "spread:{1|kubernetes.io/hostname|ScheduleAnyway|app in (web,cache)} "                    \
    "anti:{kubernetes.io/hostname|app=web} paff:{50|topology.kubernetes.io/zone|app=cache}"

/* The plugins this scenario needs, in upstream's default order (volume
 * plugins and preemption are other issues' and not needed here). */
static const char profile_yaml[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: default-scheduler\n"
    "  plugins:\n"
    "    multiPoint:\n"
    "      enabled:\n"
    "      - name: PrioritySort\n"
    "      - name: NodeUnschedulable\n"
    "      - name: NodeName\n"
    "      - name: TaintToleration\n"
    "        weight: 3\n"
    "      - name: NodeAffinity\n"
    "        weight: 2\n"
    "      - name: NodePorts\n"
    "      - name: NodeResourcesFit\n"
    "        weight: 1\n"
    "      - name: PodTopologySpread\n"
    "        weight: 2\n"
    "      - name: InterPodAffinity\n"
    "        weight: 2\n"
    "      - name: NodeResourcesBalancedAllocation\n"
    "        weight: 1\n"
    "      - name: ImageLocality\n"
    "        weight: 1\n"
    "      - name: DefaultBinder\n"
    "      disabled:\n"
    "      - name: '*'\n";

typedef struct world {
    ks_config *cfg;
    ks_framework *fw;
    ks_snapshot *snap;
    ks_node *nodes[NNODES];
    ks_pod *pods[NPODS];
    ks_pod *pod;
} world;

static void world_init(world *w) {
    ks_framework_options opts = {.parallelism = 4};
    char *err = NULL;
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    w->cfg = ks_config_load_buffer("scenario.yaml", profile_yaml, sizeof(profile_yaml) - 1, &errs);
    if (!w->cfg) fail_msg("config: %s", errs.n ? errs.msgs[0] : "?");
    ks_config_errors_free(&errs);
    w->fw = ks_framework_new(NULL, &w->cfg->profiles[0], &opts, &err);
    if (!w->fw) fail_msg("framework: %s", err);
    for (size_t i = 0; i < NNODES; i++) w->nodes[i] = tt_node(node_specs[i]);
    for (size_t i = 0; i < NPODS; i++) w->pods[i] = tt_pod(pod_specs[i]);
    w->snap = ks_snapshot_from(w->nodes, NNODES, w->pods, NPODS);
    ks_framework_set_snapshot(w->fw, w->snap);
    w->pod = tt_pod(INCOMING);
}

static void world_free(world *w) {
    ks_framework_free(w->fw);
    ks_config_free(w->cfg);
    ks_snapshot_free(w->snap);
    for (size_t i = 0; i < NNODES; i++) ks_node_unref(w->nodes[i]);
    for (size_t i = 0; i < NPODS; i++) ks_pod_unref(w->pods[i]);
    ks_pod_unref(w->pod);
}

/* "Plugin: reason" or "Success". */
static const char *verdict(ks_status *s) {
    static char buf[512];
    if (!s) return "Success";
    snprintf(buf, sizeof(buf), "%s: %s", ks_status_plugin(s) ? ks_status_plugin(s) : "?",
             ks_status_nreasons(s) ? ks_status_reason(s, 0) : "");
    ks_status_free(s);
    return buf;
}

static const ks_node_info *node(world *w, const char *name) {
    const ks_node_info *ni = ks_snapshot_node_by_name(w->snap, name);
    assert_non_null(ni);
    return ni;
}

static void test_filter_verdicts_in_plugin_order(void **s) {
    world w;
    world_init(&w);
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *pfr = NULL;
    assert_null(ks_framework_run_pre_filter(w.fw, st, w.pod, &pfr, NULL));
    struct {
        const char *node, *want;
    } want[] = {
        {"a1", "PodTopologySpread: node(s) didn't match pod topology spread constraints"},
        {"a2", "PodTopologySpread: node(s) didn't match pod topology spread constraints"},
        {"b1", "InterPodAffinity: node(s) didn't match pod anti-affinity rules"},
        {"b2", "InterPodAffinity: node(s) didn't satisfy existing pods anti-affinity rules"},
        {"c1", "Success"},
        {"c2", "TaintToleration: node(s) had untolerated taint {dedicated: gpu}"},
        {"c3", "Success"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(verdict(ks_framework_run_filter(w.fw, st, w.pod, node(&w, want[i].node))),
                            want[i].want);
    ks_cycle_state_free(st);
    world_free(&w);
}

static int64_t normalized(const ks_score_result *r, size_t node, const char *plugin) {
    for (size_t p = 0; p < r->nplugins; p++)
        if (strcmp(r->plugins[p], plugin) == 0) return r->normalized[node * r->nplugins + p];
    fail_msg("no score from %s", plugin);
    return -1;
}

static void test_scores_of_feasible_nodes(void **s) {
    world w;
    world_init(&w);
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *pfr = NULL;
    assert_null(ks_framework_run_pre_filter(w.fw, st, w.pod, &pfr, NULL));
    const ks_node_info *feasible[] = {node(&w, "c1"), node(&w, "c3")};
    assert_null(ks_framework_run_pre_score(w.fw, st, w.pod, feasible, 2));
    ks_score_result r;
    assert_null(ks_framework_run_score(w.fw, st, w.pod, feasible, 2, &r));
    /* hostname spread: c1 holds a cache pod: 1*log(2+2) -> 1, c3 0;
     * normalized 100*(max+min-s)/max */
    assert_int_equal(normalized(&r, 0, "PodTopologySpread"), 0);
    assert_int_equal(normalized(&r, 1, "PodTopologySpread"), 100);
    /* both in z3 with the cache pod: equal raw scores normalize to 0 */
    assert_int_equal(normalized(&r, 0, "InterPodAffinity"), 0);
    assert_int_equal(normalized(&r, 1, "InterPodAffinity"), 0);
    ks_cycle_state_free(st);
    world_free(&w);
}

/* What preemption does for a candidate node: copy the state, remove the
 * victim from a copy of the node, tell the PreFilter plugins, filter again.
 * The original state must still reject the node. */
static void test_dry_run_removing_the_anti_affinity_pod(void **s) {
    world w;
    world_init(&w);
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *pfr = NULL;
    assert_null(ks_framework_run_pre_filter(w.fw, st, w.pod, &pfr, NULL));

    ks_cycle_state *dry = ks_cycle_state_clone(st);
    ks_node_info *b2 = ks_node_info_clone(node(&w, "b2"));
    ks_pod *victim = w.pods[3]; /* db-1 */
    assert_true(ks_node_info_remove_pod(b2, victim));
    assert_null(ks_framework_run_pre_filter_remove_pod(w.fw, dry, w.pod, victim, b2));
    assert_string_equal(verdict(ks_framework_run_filter(w.fw, dry, w.pod, b2)), "Success");
    assert_string_equal(verdict(ks_framework_run_filter(w.fw, st, w.pod, node(&w, "b2"))),
                        "InterPodAffinity: node(s) didn't satisfy existing pods anti-affinity rules");

    /* a (nominated) web pod added to c3 in the dry run: the incoming pod's
     * hostname anti-affinity now rejects c3; the original is untouched */
    ks_node_info *c3 = ks_node_info_clone(node(&w, "c3"));
    ks_pod *extra = tt_pod("ns:default name:web-9 node:c3 labels:{app=web}");
    ks_node_info_add_pod(c3, extra);
    assert_null(ks_framework_run_pre_filter_add_pod(w.fw, dry, w.pod, extra, c3));
    assert_string_equal(verdict(ks_framework_run_filter(w.fw, dry, w.pod, c3)),
                        "InterPodAffinity: node(s) didn't match pod anti-affinity rules");
    assert_string_equal(verdict(ks_framework_run_filter(w.fw, st, w.pod, node(&w, "c3"))), "Success");

    ks_pod_unref(extra);
    ks_node_info_free(b2);
    ks_node_info_free(c3);
    ks_cycle_state_free(dry);
    ks_cycle_state_free(st);
    world_free(&w);
}

/* A pod with no affinity and no constraints, in a cluster with no
 * required anti-affinity matching it: both plugins skip PreFilter, the
 * system default spreading applies only with an owning workload. */
static void test_plugins_skip_when_nothing_applies(void **s) {
    world w;
    world_init(&w);
    ks_pod *plain = tt_pod("ns:default name:plain labels:{app=other}");
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *pfr = NULL;
    assert_null(ks_framework_run_pre_filter(w.fw, st, plain, &pfr, NULL));
    int ipa = ks_framework_plugin_index(w.fw, "InterPodAffinity");
    int pts = ks_framework_plugin_index(w.fw, "PodTopologySpread");
    assert_true(ipa >= 0 && pts >= 0);
    assert_true(ks_bit_get(st->skip_filter, (unsigned)ipa));
    assert_true(ks_bit_get(st->skip_filter, (unsigned)pts));
    assert_string_equal(verdict(ks_framework_run_filter(w.fw, st, plain, node(&w, "a1"))), "Success");
    ks_cycle_state_free(st);
    ks_pod_unref(plain);
    world_free(&w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_verdicts_in_plugin_order),
        cmocka_unit_test(test_scores_of_feasible_nodes),
        cmocka_unit_test(test_dry_run_removing_the_anti_affinity_pod),
        cmocka_unit_test(test_plugins_skip_when_nothing_applies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
