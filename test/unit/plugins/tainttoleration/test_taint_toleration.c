/* TaintToleration: filter verdicts and scores (cases from upstream's
 * taint_toleration_test.go). */
#include "testutil_plugins.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_taint_toleration;

static const char *filter_one(ks_pod *pod, ks_node *node) {
    static char buf[512];
    tp_pod_done(pod);
    ks_node_info *ni = tp_node_info(node, NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_taint_toleration, NULL, NULL);
    char *v[1];
    tp_filter_all(&p, pod, &ni, 1, v);
    snprintf(buf, sizeof(buf), "%s", v[0]);
    tp_free_verdicts(v, 1);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(node);
    ks_pod_unref(pod);
    return buf;
}

static void filter_no_tolerations_rejects_noschedule_taint(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "dedicated", "user1", KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(filter_one(tp_pod("pod1"), n),
                        "UnschedulableAndUnresolvable: node(s) had untolerated taint {dedicated: user1}");
}

static void filter_matching_toleration_admits(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "dedicated", "user1", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "dedicated", KS_TOL_EQUAL, "user1", KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(filter_one(p, n), "Success");
}

static void filter_value_mismatch_rejects(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "dedicated", "user1", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "dedicated", KS_TOL_EQUAL, "user2", KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(filter_one(p, n),
                        "UnschedulableAndUnresolvable: node(s) had untolerated taint {dedicated: user1}");
}

static void filter_exists_operator_tolerates_any_value(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "foo", "bar", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "foo", KS_TOL_EXISTS, NULL, KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(filter_one(p, n), "Success");
}

static void filter_all_taints_tolerated(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "dedicated", "user2", KS_EFFECT_NO_SCHEDULE);
    tp_node_taint(n, "foo", "bar", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "dedicated", KS_TOL_EQUAL, "user2", KS_EFFECT_NO_SCHEDULE);
    tp_pod_toleration(p, "foo", KS_TOL_EXISTS, NULL, KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(filter_one(p, n), "Success");
}

static void filter_effect_mismatch_rejects(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "foo", "bar", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "foo", KS_TOL_EQUAL, "bar", KS_EFFECT_PREFER_NO_SCHEDULE);
    assert_string_equal(filter_one(p, n),
                        "UnschedulableAndUnresolvable: node(s) had untolerated taint {foo: bar}");
}

static void filter_empty_effect_tolerates_every_effect(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "foo", "bar", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "foo", KS_TOL_EQUAL, "bar", KS_EFFECT_ALL);
    assert_string_equal(filter_one(p, n), "Success");
}

static void filter_ignores_prefer_no_schedule_taints(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "dedicated", "user1", KS_EFFECT_PREFER_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "dedicated", KS_TOL_EQUAL, "user2", KS_EFFECT_NO_SCHEDULE);
    assert_string_equal(filter_one(p, n), "Success");
    n = tp_node("nodeA");
    tp_node_taint(n, "dedicated", "user1", KS_EFFECT_PREFER_NO_SCHEDULE);
    assert_string_equal(filter_one(tp_pod("pod1"), n), "Success");
}

static void filter_no_execute_taint_is_checked(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "node.kubernetes.io/not-ready", "", KS_EFFECT_NO_EXECUTE);
    assert_string_equal(filter_one(tp_pod("pod1"), n),
                        "UnschedulableAndUnresolvable: node(s) had untolerated taint "
                        "{node.kubernetes.io/not-ready: }");
}

static void filter_names_first_untolerated_taint(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "a", "1", KS_EFFECT_NO_SCHEDULE);
    tp_node_taint(n, "b", "2", KS_EFFECT_NO_EXECUTE);
    tp_node_taint(n, "c", "3", KS_EFFECT_NO_SCHEDULE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "a", KS_TOL_EXISTS, NULL, KS_EFFECT_ALL);
    assert_string_equal(filter_one(p, n),
                        "UnschedulableAndUnresolvable: node(s) had untolerated taint {b: 2}");
}

static void filter_empty_key_exists_tolerates_everything(void **st) {
    ks_node *n = tp_node("nodeA");
    tp_node_taint(n, "a", "1", KS_EFFECT_NO_SCHEDULE);
    tp_node_taint(n, "b", "2", KS_EFFECT_NO_EXECUTE);
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "", KS_TOL_EXISTS, NULL, KS_EFFECT_ALL);
    assert_string_equal(filter_one(p, n), "Success");
}

/* ---- score ---- */

/* Scores of pod on nodes, after NormalizeScore. */
static void score_nodes(ks_pod *pod, ks_node **nodes, size_t n, int64_t *out) {
    tp_pod_done(pod);
    ks_node_info *nis[8];
    for (size_t i = 0; i < n; i++) nis[i] = tp_node_info(nodes[i], NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_taint_toleration, NULL, NULL);
    assert_string_equal(tp_score_all(&p, pod, nis, n, out), "Success");
    tp_destroy(&p);
    tp_free_infos(nis, n);
    for (size_t i = 0; i < n; i++) ks_node_unref(nodes[i]);
    ks_pod_unref(pod);
}

static void score_tolerated_taint_beats_intolerable(void **st) {
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "foo", KS_TOL_EQUAL, "bar", KS_EFFECT_PREFER_NO_SCHEDULE);
    ks_node *n[2] = {tp_node("nodeA"), tp_node("nodeB")};
    tp_node_taint(n[0], "foo", "bar", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_taint(n[1], "foo", "blah", KS_EFFECT_PREFER_NO_SCHEDULE);
    int64_t s[2];
    score_nodes(p, n, 2, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 0);
}

static void score_number_of_tolerated_taints_does_not_matter(void **st) {
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "cpu-type", KS_TOL_EQUAL, "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_pod_toleration(p, "disk-type", KS_TOL_EQUAL, "ssd", KS_EFFECT_PREFER_NO_SCHEDULE);
    ks_node *n[3] = {tp_node("nodeA"), tp_node("nodeB"), tp_node("nodeC")};
    tp_node_taint(n[1], "cpu-type", "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_taint(n[2], "cpu-type", "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_taint(n[2], "disk-type", "ssd", KS_EFFECT_PREFER_NO_SCHEDULE);
    int64_t s[3];
    score_nodes(p, n, 3, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 100);
    assert_int_equal(s[2], 100);
}

static void score_more_intolerable_taints_lower_score(void **st) {
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "foo", KS_TOL_EQUAL, "bar", KS_EFFECT_PREFER_NO_SCHEDULE);
    ks_node *n[3] = {tp_node("nodeA"), tp_node("nodeB"), tp_node("nodeC")};
    tp_node_taint(n[1], "cpu-type", "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_taint(n[2], "cpu-type", "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_taint(n[2], "disk-type", "ssd", KS_EFFECT_PREFER_NO_SCHEDULE);
    int64_t s[3];
    score_nodes(p, n, 3, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 50);
    assert_int_equal(s[2], 0);
}

static void score_only_prefer_no_schedule_counts(void **st) {
    ks_pod *p = tp_pod("pod1");
    tp_pod_toleration(p, "cpu-type", KS_TOL_EQUAL, "arm64", KS_EFFECT_NO_SCHEDULE);
    tp_pod_toleration(p, "disk-type", KS_TOL_EQUAL, "ssd", KS_EFFECT_NO_SCHEDULE);
    ks_node *n[3] = {tp_node("nodeA"), tp_node("nodeB"), tp_node("nodeC")};
    tp_node_taint(n[1], "cpu-type", "arm64", KS_EFFECT_NO_SCHEDULE);
    tp_node_taint(n[2], "cpu-type", "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    tp_node_taint(n[2], "disk-type", "ssd", KS_EFFECT_PREFER_NO_SCHEDULE);
    int64_t s[3];
    score_nodes(p, n, 3, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 100);
    assert_int_equal(s[2], 0);
}

static void score_no_taints_no_tolerations(void **st) {
    ks_node *n[2] = {tp_node("nodeA"), tp_node("nodeB")};
    tp_node_taint(n[1], "cpu-type", "arm64", KS_EFFECT_PREFER_NO_SCHEDULE);
    int64_t s[2];
    score_nodes(tp_pod("pod1"), n, 2, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 0);
}

/* Reverse normalization with integer division: counts 0,1,2,3 over a
 * max of 3 give 100 - 100*c/3 = 100, 67, 34, 0. */
static void score_reverse_normalization_rounds_down_the_scaled_count(void **st) {
    ks_node *n[4] = {tp_node("n0"), tp_node("n1"), tp_node("n2"), tp_node("n3")};
    const char *keys[3] = {"a", "b", "c"};
    for (int i = 1; i < 4; i++)
        for (int k = 0; k < i; k++) tp_node_taint(n[i], keys[k], "x", KS_EFFECT_PREFER_NO_SCHEDULE);
    int64_t s[4];
    score_nodes(tp_pod("pod1"), n, 4, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 67);
    assert_int_equal(s[2], 34);
    assert_int_equal(s[3], 0);
}

static void score_without_pre_score_is_an_error(void **st) {
    ks_pod *pod = tp_pod_done(tp_pod("pod1"));
    ks_node *n = tp_node("nodeA");
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_taint_toleration, NULL, NULL);
    ks_cycle_state *cs = ks_cycle_state_new();
    int64_t v;
    assert_string_equal(tp_status_str(p.ops->score(p.self, cs, pod, ni, &v)),
                        "Error: failed to read \"PreScoreTaintToleration\" from cycleState: not found");
    ks_cycle_state_free(cs);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(pod);
}

static void events_node_add_update_and_pod_update(void **st) {
    tp_plugin p = tp_create(&ks_plugin_taint_toleration, NULL, NULL);
    ks_cluster_event ev[4];
    size_t n = p.ops->events_to_register(p.self, ev, 4);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].resource, KS_EV_NODE);
    assert_int_equal(ev[0].actions, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT);
    assert_int_equal(ev[1].resource, KS_EV_POD);
    assert_int_equal(ev[1].actions, KS_ACT_UPDATE_POD_TOLERATION);
    tp_destroy(&p);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

static int teardown(void **st) {
    tp_reset();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_no_tolerations_rejects_noschedule_taint),
        cmocka_unit_test(filter_matching_toleration_admits),
        cmocka_unit_test(filter_value_mismatch_rejects),
        cmocka_unit_test(filter_exists_operator_tolerates_any_value),
        cmocka_unit_test(filter_all_taints_tolerated),
        cmocka_unit_test(filter_effect_mismatch_rejects),
        cmocka_unit_test(filter_empty_effect_tolerates_every_effect),
        cmocka_unit_test(filter_ignores_prefer_no_schedule_taints),
        cmocka_unit_test(filter_no_execute_taint_is_checked),
        cmocka_unit_test(filter_names_first_untolerated_taint),
        cmocka_unit_test(filter_empty_key_exists_tolerates_everything),
        cmocka_unit_test(score_tolerated_taint_beats_intolerable),
        cmocka_unit_test(score_number_of_tolerated_taints_does_not_matter),
        cmocka_unit_test(score_more_intolerable_taints_lower_score),
        cmocka_unit_test(score_only_prefer_no_schedule_counts),
        cmocka_unit_test(score_no_taints_no_tolerations),
        cmocka_unit_test(score_reverse_normalization_rounds_down_the_scaled_count),
        cmocka_unit_test(score_without_pre_score_is_an_error),
        cmocka_unit_test(events_node_add_update_and_pod_update),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
