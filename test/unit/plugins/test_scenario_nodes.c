/* Scenario: the node plugins (taints, unschedulable, affinity, ports,
 * resources, balance, images) together on one cluster, run through the
 * framework the way a scheduling cycle runs them. Every verdict and score
 * below is derived by hand from the upstream formulas. */
#include "testutil_plugins.h"
#include "config/config.h"
#include "framework/framework_internal.h"

#include <ksched/framework.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* A profile of these plugins only, with the default profile's weights. */
static const char *const config_yaml =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: default-scheduler\n"
    "  plugins:\n"
    "    multiPoint:\n"
    "      enabled:\n"
    "      - name: SchedulingGates\n"
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
    "      - name: NodeResourcesBalancedAllocation\n"
    "        weight: 1\n"
    "      - name: ImageLocality\n"
    "        weight: 1\n"
    "      - name: DefaultBinder\n"
    "      disabled:\n"
    "      - name: '*'\n";

#define NNODES 9
#define MB (1024LL * 1024)

typedef struct cluster {
    ks_node *nodes[NNODES];
    ks_pod *existing[3];
    ks_pod *pod;
    ks_snapshot *snap;
    ks_config *cfg;
    ks_framework *fw;
    char bound[64];
} cluster;

static ks_node *node(const char *name, int64_t mcpu, int64_t mem, const char *zone) {
    ks_node *n = tp_node(name);
    tp_node_alloc(n, mcpu, mem, 110);
    tp_node_label(n, "kubernetes.io/hostname", name);
    tp_node_label(n, "zone", zone);
    return n;
}

static ks_pod *existing(const char *name, const char *node_name, int64_t mcpu, int64_t mem,
                        int32_t host_port) {
    ks_pod *p = tp_pod(name);
    ks_container *c = tp_container(p, mcpu, mem);
    if (host_port) tp_container_port(p, c, host_port, "TCP", NULL);
    tp_pod_node_name(p, node_name);
    return tp_pod_done(p);
}

static ks_status *record_bind(void *ctx, const ks_pod *pod, const char *node_name) {
    snprintf(((cluster *)ctx)->bound, sizeof(((cluster *)ctx)->bound), "%s", node_name);
    return NULL;
}

static void build(cluster *c) {
    memset(c, 0, sizeof(*c));
    c->nodes[0] = node("n1", 4000, TP_GI(8), "a");
    tp_node_taint(c->nodes[0], "dedicated", "gpu", KS_EFFECT_NO_SCHEDULE);
    c->nodes[1] = node("n2", 4000, TP_GI(8), "a");
    c->nodes[1]->unschedulable = true;
    c->nodes[2] = node("n3", 500, TP_GI(8), "b");
    c->nodes[3] = node("n4", 8000, TP_GI(16), "b");
    tp_node_taint(c->nodes[3], "spot", "true", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_image(c->nodes[3], 500 * MB, "registry.example/app:1.0");
    c->nodes[4] = node("n5", 4000, TP_GI(8), "b");
    c->nodes[5] = node("n6", 4000, TP_GI(8), "c");
    c->nodes[6] = node("n7", 4000, TP_GI(4), "a");
    c->nodes[7] = node("n8", 2000, TP_GI(4), "b");
    c->nodes[8] = node("n9", 4000, TP_GI(8), "a");
    c->existing[0] = existing("ports", "n5", 100, 100 * MB, 8080);
    c->existing[1] = existing("busy", "n7", 3500, TP_GI(1), 0);
    c->existing[2] = existing("half", "n8", 500, 512 * MB, 0);

    /* The incoming pod: 1 cpu, 1Gi, host port 8080, zone a or b required,
     * zone b preferred, image on n4 only. */
    ks_pod *p = tp_pod("web");
    ks_container *ct = tp_container(p, 1000, TP_GI(1));
    tp_container_image(ct, "registry.example/app:1.0");
    tp_container_port(p, ct, 8080, "TCP", NULL);
    tp_term_expr(tp_pod_required_term(p), "zone", KS_OP_IN, "a", "b", NULL);
    tp_term_expr(tp_pod_preferred_term(p, 10), "zone", KS_OP_IN, "b", NULL);
    c->pod = tp_pod_done(p);

    c->snap = ks_snapshot_from(c->nodes, NNODES, c->existing, 3);
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    c->cfg = ks_config_load_buffer("scenario.yaml", config_yaml, strlen(config_yaml), &errs);
    if (!c->cfg) {
        for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.msgs[i]);
        fail();
    }
    ks_config_errors_free(&errs);
    char *err = NULL;
    c->fw = ks_framework_new(NULL, &c->cfg->profiles[0], NULL, &err);
    if (!c->fw) {
        fprintf(stderr, "framework: %s\n", err);
        fail();
    }
    ks_framework_env env = {.ctx = c, .bind = record_bind};
    ks_framework_set_env(c->fw, &env);
    ks_framework_set_snapshot(c->fw, c->snap);
}

static void teardown_cluster(cluster *c) {
    ks_framework_free(c->fw);
    ks_config_free(c->cfg);
    ks_snapshot_free(c->snap);
    for (int i = 0; i < NNODES; i++) ks_node_unref(c->nodes[i]);
    for (int i = 0; i < 3; i++) ks_pod_unref(c->existing[i]);
    ks_pod_unref(c->pod);
    tp_reset();
}

/* "Plugin: Code: reasons" of a filter status (freed). */
static const char *verdict(ks_status *s) {
    static char buf[512];
    char plugin[64];
    snprintf(plugin, sizeof(plugin), "%s", ks_status_plugin(s));
    const char *v = tp_status_str(s);
    if (strcmp(v, "Success") == 0) return "Success";
    snprintf(buf, sizeof(buf), "%s: %s", plugin, v);
    return buf;
}

static void every_node_gets_the_first_rejecting_plugins_reason(void **st) {
    cluster c;
    build(&c);
    ks_cycle_state *cs = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    assert_null(ks_framework_run_pre_filter(c.fw, cs, c.pod, &r, NULL));
    assert_true(ks_pre_filter_result_all_nodes(r));
    static const char *const want[NNODES][2] = {
        {"n1", "TaintToleration: UnschedulableAndUnresolvable: node(s) had untolerated taint {dedicated: gpu}"},
        {"n2", "NodeUnschedulable: UnschedulableAndUnresolvable: node(s) were unschedulable"},
        {"n3", "NodeResourcesFit: UnschedulableAndUnresolvable: Insufficient cpu"},
        {"n4", "Success"},
        {"n5", "NodePorts: Unschedulable: node(s) didn't have free ports for the requested pod ports"},
        {"n6", "NodeAffinity: UnschedulableAndUnresolvable: node(s) didn't match Pod's node affinity/selector"},
        {"n7", "NodeResourcesFit: Unschedulable: Insufficient cpu"},
        {"n8", "Success"},
        {"n9", "Success"},
    };
    for (int i = 0; i < NNODES; i++) {
        const ks_node_info *ni = ks_snapshot_node_by_name(c.snap, want[i][0]);
        assert_non_null(ni);
        const char *got = verdict(ks_framework_run_filter(c.fw, cs, c.pod, ni));
        if (strcmp(got, want[i][1]) != 0) fprintf(stderr, "%s: got %s\n", want[i][0], got);
        assert_string_equal(got, want[i][1]);
    }
    ks_cycle_state_free(cs);
    teardown_cluster(&c);
}

static int64_t score_of(const ks_score_result *res, size_t node, const char *plugin, int which) {
    for (size_t p = 0; p < res->nplugins; p++) {
        if (strcmp(res->plugins[p], plugin) != 0) continue;
        size_t k = node * res->nplugins + p;
        return which == 0 ? res->raw[k] : which == 1 ? res->normalized[k] : res->weighted[k];
    }
    fail_msg("no score of %s", plugin);
    return -1;
}

static void feasible_nodes_score_per_plugin_and_in_total(void **st) {
    cluster c;
    build(&c);
    ks_cycle_state *cs = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    assert_null(ks_framework_run_pre_filter(c.fw, cs, c.pod, &r, NULL));
    const ks_node_info *feasible[3] = {ks_snapshot_node_by_name(c.snap, "n4"),
                                       ks_snapshot_node_by_name(c.snap, "n8"),
                                       ks_snapshot_node_by_name(c.snap, "n9")};
    for (int i = 0; i < 3; i++) assert_null(ks_framework_run_filter(c.fw, cs, c.pod, feasible[i]));
    assert_null(ks_framework_run_pre_score(c.fw, cs, c.pod, feasible, 3));
    ks_score_result res;
    assert_null(ks_framework_run_score(c.fw, cs, c.pod, feasible, 3, &res));

    /* TaintToleration: n4's PreferNoSchedule taint is intolerable: raw 1,
     * reversed 0; the others 100. Weight 3. */
    assert_int_equal(score_of(&res, 0, "TaintToleration", 0), 1);
    assert_int_equal(score_of(&res, 0, "TaintToleration", 1), 0);
    assert_int_equal(score_of(&res, 1, "TaintToleration", 2), 300);
    assert_int_equal(score_of(&res, 2, "TaintToleration", 2), 300);
    /* NodeAffinity: zone b preferred with weight 10: n4, n8 -> 100; n9 0.
     * Weight 2. */
    assert_int_equal(score_of(&res, 0, "NodeAffinity", 0), 10);
    assert_int_equal(score_of(&res, 0, "NodeAffinity", 2), 200);
    assert_int_equal(score_of(&res, 1, "NodeAffinity", 2), 200);
    assert_int_equal(score_of(&res, 2, "NodeAffinity", 2), 0);
    /* NodeResourcesFit (LeastAllocated, non-zero requests):
     * n4 cpu 7000/8000 -> 87, memory 15/16 -> 93: 90
     * n8 cpu 500/2000 -> 25, memory 2560/4096 -> 62: 43
     * n9 cpu 3000/4000 -> 75, memory 7/8 -> 87: 81 */
    assert_int_equal(score_of(&res, 0, "NodeResourcesFit", 2), 90);
    assert_int_equal(score_of(&res, 1, "NodeResourcesFit", 2), 43);
    assert_int_equal(score_of(&res, 2, "NodeResourcesFit", 2), 81);
    /* BalancedAllocation: (1 - |cpu - mem| / 2) * 100, truncated:
     * n4 0.125/0.0625 -> 96; n8 0.75/0.375 -> 81; n9 0.25/0.125 -> 93 */
    assert_int_equal(score_of(&res, 0, "NodeResourcesBalancedAllocation", 2), 96);
    assert_int_equal(score_of(&res, 1, "NodeResourcesBalancedAllocation", 2), 81);
    assert_int_equal(score_of(&res, 2, "NodeResourcesBalancedAllocation", 2), 93);
    /* ImageLocality: 500MB on 1 of 9 nodes -> 58254222 bytes;
     * 100 * (58254222 - 23MB) / (1000MB - 23MB) = 3 on n4. */
    assert_int_equal(score_of(&res, 0, "ImageLocality", 2), 3);
    assert_int_equal(score_of(&res, 1, "ImageLocality", 2), 0);
    /* Totals: n4 0+200+90+96+3 = 389; n8 300+200+43+81 = 624;
     * n9 300+0+81+93 = 474. */
    assert_int_equal(res.total[0], 389);
    assert_int_equal(res.total[1], 624);
    assert_int_equal(res.total[2], 474);

    assert_null(ks_framework_run_bind(c.fw, cs, c.pod, "n8"));
    assert_string_equal(c.bound, "n8");
    ks_cycle_state_free(cs);
    teardown_cluster(&c);
}

static void gated_pod_waits_before_any_filtering(void **st) {
    cluster c;
    build(&c);
    ks_pod *p = tp_pod("gated");
    tp_container(p, 100, 100);
    tp_pod_gate(p, "example.com/wait");
    tp_pod_done(p);
    int gating = -1;
    ks_status *s = ks_framework_run_pre_enqueue(c.fw, p, -1, &gating);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_string_equal(ks_status_reason(s, 0), "waiting for scheduling gates: [example.com/wait]");
    ks_status_free(s);
    ks_pod_unref(p);
    teardown_cluster(&c);
}

static void node_name_pins_the_pod(void **st) {
    cluster c;
    build(&c);
    ks_pod *p = tp_pod("pinned");
    tp_container(p, 100, 100);
    tp_pod_node_name(p, "n9");
    tp_pod_done(p);
    ks_cycle_state *cs = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    ks_status_free(ks_framework_run_pre_filter(c.fw, cs, p, &r, NULL));
    assert_string_equal(verdict(ks_framework_run_filter(c.fw, cs, p, ks_snapshot_node_by_name(c.snap, "n8"))),
                        "NodeName: UnschedulableAndUnresolvable: node(s) didn't match the requested node name");
    assert_string_equal(verdict(ks_framework_run_filter(c.fw, cs, p, ks_snapshot_node_by_name(c.snap, "n9"))),
                        "Success");
    ks_cycle_state_free(cs);
    ks_pod_unref(p);
    teardown_cluster(&c);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_node_gets_the_first_rejecting_plugins_reason),
        cmocka_unit_test(feasible_nodes_score_per_plugin_and_in_total),
        cmocka_unit_test(gated_pod_waits_before_any_filtering),
        cmocka_unit_test(node_name_pins_the_pod),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
