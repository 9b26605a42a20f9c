/* NodeAffinity: nodeSelector, required and preferred terms, metadata.name
 * narrowing in PreFilter, addedAffinity (cases from upstream
 * node_affinity_test.go). */
#include "testutil_plugins.h"

#include <ksched/framework.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_node_affinity;

#define POD_REASON "UnschedulableAndUnresolvable: node(s) didn't match Pod's node affinity/selector"
#define ENFORCED "UnschedulableAndUnresolvable: node(s) didn't match scheduler-enforced node affinity"

/* Verdict (PreFilter, then Filter) of pod on a node named name with labels
 * given as "k=v" strings, NULL-terminated. */
static const char *verdict_args(ks_pod *pod, const char *name, const char *const *labels,
                                const char *args) {
    static char buf[512];
    tp_pod_done(pod);
    ks_node *n = tp_node(name);
    for (; labels && *labels; labels++) {
        char k[128], v[128] = "";
        if (sscanf(*labels, "%127[^=]=%127s", k, v) < 1) fail();
        tp_node_label(n, k, v);
    }
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_node_affinity, args ? tp_args(args) : NULL, NULL);
    char *v[1];
    tp_filter_all(&p, pod, &ni, 1, v);
    snprintf(buf, sizeof(buf), "%s", v[0]);
    free(v[0]);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(pod);
    return buf;
}

static const char *verdict(ks_pod *pod, const char *const *labels) {
    return verdict_args(pod, "node1", labels, NULL);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NOLABELS ((const char *const *)NULL)

static ks_pod *selector_pod(void) {
    ks_pod *p = tp_pod("p");
    tp_pod_node_selector(p, "foo", "bar");
    return p;
}

static void node_selector_missing_labels(void **st) {
    assert_string_equal(verdict(selector_pod(), NOLABELS), POD_REASON);
}
static void node_selector_same_labels(void **st) {
    assert_string_equal(verdict(selector_pod(), L("foo=bar")), "Success");
}
static void node_selector_node_labels_superset(void **st) {
    assert_string_equal(verdict(selector_pod(), L("foo=bar", "baz=blah")), "Success");
}
static void node_selector_node_labels_subset(void **st) {
    ks_pod *p = selector_pod();
    tp_pod_node_selector(p, "baz", "blah");
    assert_string_equal(verdict(p, L("foo=bar")), POD_REASON);
}

static void required_in_matches(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_IN, "bar", "value2", NULL);
    assert_string_equal(verdict(p, L("foo=bar")), "Success");
}

static void required_gt_matches(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "kernel-version", KS_OP_GT, "0204", NULL);
    assert_string_equal(verdict(p, L("kernel-version=0206")), "Success");
}

static void required_not_in_matches(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "mem-type", KS_OP_NOT_IN, "DDR", "DDR2", NULL);
    assert_string_equal(verdict(p, L("mem-type=DDR3")), "Success");
}

static void required_exists_matches(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "GPU", KS_OP_EXISTS, NULL);
    assert_string_equal(verdict(p, L("GPU=NVIDIA-GRID-K1")), "Success");
}

static void required_not_matching_rejects(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_IN, "value1", "value2", NULL);
    assert_string_equal(verdict(p, L("foo=bar")), POD_REASON);
}

static void required_empty_term_matches_nothing(void **st) {
    ks_pod *p = tp_pod("p");
    tp_pod_required_term(p);
    assert_string_equal(verdict(p, L("foo=bar")), POD_REASON);
}

static void required_without_terms_matches_nothing(void **st) {
    ks_pod *p = tp_pod("p");
    tp_pod_required_affinity(p);
    assert_string_equal(verdict(p, L("foo=bar")), POD_REASON);
}

static void no_affinity_skips_pre_filter(void **st) {
    ks_pod *p = tp_pod_done(tp_pod("p"));
    tp_plugin pl = tp_create(&ks_plugin_node_affinity, NULL, NULL);
    ks_cycle_state *cs = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    assert_string_equal(tp_status_str(pl.ops->pre_filter(pl.self, cs, p, NULL, 0, &r)), "Skip");
    assert_null(r);
    ks_cycle_state_free(cs);
    tp_destroy(&pl);
    ks_pod_unref(p);
}

static void required_expressions_are_anded(void **st) {
    ks_pod *p = tp_pod("p");
    ks_node_selector_term *t = tp_pod_required_term(p);
    tp_term_expr(t, "GPU", KS_OP_EXISTS, NULL);
    tp_term_expr(t, "GPU", KS_OP_NOT_IN, "AMD", "INTER", NULL);
    assert_string_equal(verdict(p, L("GPU=NVIDIA-GRID-K1")), "Success");
    p = tp_pod("p");
    t = tp_pod_required_term(p);
    tp_term_expr(t, "GPU", KS_OP_EXISTS, NULL);
    tp_term_expr(t, "GPU", KS_OP_IN, "AMD", "INTER", NULL);
    assert_string_equal(verdict(p, L("GPU=NVIDIA-GRID-K1")), POD_REASON);
}

static void required_terms_are_ored(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_IN, "bar", "value2", NULL);
    tp_term_expr(tp_pod_required_term(p), "diffkey", KS_OP_IN, "wrong", "value2", NULL);
    assert_string_equal(verdict(p, L("foo=bar")), "Success");
}

static void node_selector_and_affinity_both_needed(void **st) {
    ks_pod *p = selector_pod();
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_EXISTS, NULL);
    assert_string_equal(verdict(p, L("foo=bar")), "Success");
    p = selector_pod();
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_EXISTS, NULL);
    assert_string_equal(verdict(p, L("foo=barrrrrr")), POD_REASON);
}

static void match_fields_in_matches_node_name(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node1", NULL);
    assert_string_equal(verdict_args(p, "node1", NOLABELS, NULL), "Success");
    p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node1", NULL);
    assert_string_equal(verdict_args(p, "node2", NOLABELS, NULL), POD_REASON);
}

static void match_fields_and_expressions(void **st) {
    /* two terms: fields do not match, expressions do */
    ks_pod *p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node1", NULL);
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_IN, "bar", NULL);
    assert_string_equal(verdict_args(p, "node2", L("foo=bar"), NULL), "Success");
    /* one term: fields do not match, expressions do */
    p = tp_pod("p");
    ks_node_selector_term *t = tp_pod_required_term(p);
    tp_term_field(t, KS_OP_IN, "node1", NULL);
    tp_term_expr(t, "foo", KS_OP_IN, "bar", NULL);
    assert_string_equal(verdict_args(p, "node2", L("foo=bar"), NULL), POD_REASON);
    /* one term: both match */
    p = tp_pod("p");
    t = tp_pod_required_term(p);
    tp_term_field(t, KS_OP_IN, "node1", NULL);
    tp_term_expr(t, "foo", KS_OP_IN, "bar", NULL);
    assert_string_equal(verdict_args(p, "node1", L("foo=bar"), NULL), "Success");
    /* two terms: neither matches */
    p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node1", NULL);
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_IN, "not-match-to-bar", NULL);
    assert_string_equal(verdict_args(p, "node2", L("foo=bar"), NULL), POD_REASON);
}

/* PreFilter's node-name set for pod ("" when all nodes). */
static const char *pre_filter_names(ks_pod *pod) {
    static char buf[256];
    tp_pod_done(pod);
    tp_plugin pl = tp_create(&ks_plugin_node_affinity, NULL, NULL);
    ks_cycle_state *cs = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    ks_status *s = pl.ops->pre_filter(pl.self, cs, pod, NULL, 0, &r);
    if (s) {
        snprintf(buf, sizeof(buf), "%s", tp_status_str(s));
    } else if (!r) {
        snprintf(buf, sizeof(buf), "all");
    } else {
        buf[0] = 0;
        for (size_t i = 0; i < ks_pre_filter_result_len(r); i++)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? "," : "",
                     ks_pre_filter_result_node(r, i));
    }
    ks_cycle_state_free(cs);
    tp_destroy(&pl);
    ks_pod_unref(pod);
    return buf;
}

static void pre_filter_unions_node_names_of_terms(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node1", NULL);
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node2", NULL);
    const char *got = pre_filter_names(p);
    assert_true(strcmp(got, "node1,node2") == 0 || strcmp(got, "node2,node1") == 0);
}

static void pre_filter_intersects_requirements_of_a_term(void **st) {
    ks_pod *p = tp_pod("p");
    ks_node_selector_term *t = tp_pod_required_term(p);
    tp_term_field(t, KS_OP_IN, "node1", "node2", NULL);
    tp_term_field(t, KS_OP_IN, "node2", "node3", NULL);
    assert_string_equal(pre_filter_names(p), "node2");
}

static void pre_filter_conflicting_names_are_unresolvable(void **st) {
    ks_pod *p = tp_pod("p");
    ks_node_selector_term *t = tp_pod_required_term(p);
    tp_term_field(t, KS_OP_IN, "node1", NULL);
    tp_term_field(t, KS_OP_IN, "node2", NULL);
    assert_string_equal(pre_filter_names(p),
                        "UnschedulableAndUnresolvable: pod affinity terms conflict");
}

static void pre_filter_unrestricted_term_allows_all(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_IN, "node1", NULL);
    tp_term_expr(tp_pod_required_term(p), "foo", KS_OP_EXISTS, NULL);
    assert_string_equal(pre_filter_names(p), "all");
    /* NotIn on the name does not restrict. */
    p = tp_pod("p");
    tp_term_field(tp_pod_required_term(p), KS_OP_NOT_IN, "node1", NULL);
    assert_string_equal(pre_filter_names(p), "all");
}

static void pre_filter_only_node_selector_allows_all(void **st) {
    assert_string_equal(pre_filter_names(selector_pod()), "all");
}

/* ---- addedAffinity ---- */

#define ADDED_ZONE                                                                        \
    "addedAffinity:\n"                                                                   \
    "  requiredDuringSchedulingIgnoredDuringExecution:\n"                                \
    "    nodeSelectorTerms:\n"                                                           \
    "    - matchExpressions:\n"                                                          \
    "      - {key: zone, operator: In, values: [foo, bar]}\n"

static void added_and_pod_affinity_both_match(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "x", KS_OP_EXISTS, NULL);
    assert_string_equal(verdict_args(p, "node1", L("zone=foo", "x=y"), ADDED_ZONE), "Success");
}

static void added_matches_pod_affinity_does_not(void **st) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_required_term(p), "x", KS_OP_EXISTS, NULL);
    assert_string_equal(verdict_args(p, "node1", L("zone=foo"), ADDED_ZONE), POD_REASON);
}

static void added_affinity_does_not_match(void **st) {
    assert_string_equal(verdict_args(tp_pod("p"), "node1", L("zone=baz"), ADDED_ZONE), ENFORCED);
}

static void added_affinity_disables_pre_filter_skip(void **st) {
    assert_string_equal(verdict_args(tp_pod("p"), "node1", L("zone=bar"), ADDED_ZONE), "Success");
}

static void args_reject_invalid_added_affinity(void **st) {
    char *err = tp_create_error(&ks_plugin_node_affinity,
                                tp_args("addedAffinity:\n"
                                        "  requiredDuringSchedulingIgnoredDuringExecution:\n"
                                        "    nodeSelectorTerms:\n"
                                        "    - matchExpressions:\n"
                                        "      - {key: zone, operator: Foo, values: [a]}\n"));
    assert_non_null(err);
    free(err);
}

/* ---- score ---- */

static void scores(ks_pod *pod, const char *const *const *labels, size_t n, const char *args,
                   int64_t *out, const char *want_status) {
    tp_pod_done(pod);
    ks_node *nodes[4];
    ks_node_info *nis[4];
    for (size_t i = 0; i < n; i++) {
        char name[32]; /* room for any size_t: -O1 checks the bound */
        snprintf(name, sizeof(name), "node%zu", i + 1);
        nodes[i] = tp_node(name);
        for (const char *const *l = labels[i]; l && *l; l++) {
            char k[128], v[128] = "";
            sscanf(*l, "%127[^=]=%127s", k, v);
            tp_node_label(nodes[i], k, v);
        }
        nis[i] = tp_node_info(nodes[i], NULL, 0);
    }
    tp_plugin p = tp_create(&ks_plugin_node_affinity, args ? tp_args(args) : NULL, NULL);
    assert_string_equal(tp_score_all(&p, pod, nis, n, out), want_status);
    tp_destroy(&p);
    tp_free_infos(nis, n);
    for (size_t i = 0; i < n; i++) ks_node_unref(nodes[i]);
    ks_pod_unref(pod);
}

static ks_pod *preferred_pod(void) {
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_preferred_term(p, 2), "foo", KS_OP_IN, "bar", NULL);
    tp_term_expr(tp_pod_preferred_term(p, 4), "key", KS_OP_IN, "value", NULL);
    ks_node_selector_term *t = tp_pod_preferred_term(p, 5);
    tp_term_expr(t, "foo", KS_OP_IN, "bar", NULL);
    tp_term_expr(t, "key", KS_OP_IN, "value", NULL);
    tp_term_expr(t, "az", KS_OP_IN, "az1", NULL);
    return p;
}

static void score_no_preferences_is_skipped(void **st) {
    const char *const *labels[2] = {L("foo=bar"), L("key=value")};
    int64_t s[2];
    scores(tp_pod("p"), labels, 2, NULL, s, "Skip");
}

static void score_no_node_matches(void **st) {
    const char *const *labels[3] = {L("foo=bar"), L("key=value"), L("az=az1")};
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_preferred_term(p, 2), "foo", KS_OP_IN, "x", NULL);
    int64_t s[3];
    scores(p, labels, 3, NULL, s, "Success");
    assert_int_equal(s[0], 0);
    assert_int_equal(s[1], 0);
    assert_int_equal(s[2], 0);
}

static void score_sums_matching_weights_and_normalizes(void **st) {
    /* raw 2, 4, 11 (2+4+5) -> 100*2/11 = 18, 100*4/11 = 36, 100 */
    const char *const *labels[3] = {L("foo=bar"), L("key=value"),
                                    L("foo=bar", "key=value", "az=az1")};
    int64_t s[3];
    scores(preferred_pod(), labels, 3, NULL, s, "Success");
    assert_int_equal(s[0], 18);
    assert_int_equal(s[1], 36);
    assert_int_equal(s[2], 100);
}

static void score_zero_weight_and_empty_terms_count_nothing(void **st) {
    const char *const *labels[2] = {L("foo=bar"), NOLABELS};
    ks_pod *p = tp_pod("p");
    tp_term_expr(tp_pod_preferred_term(p, 0), "foo", KS_OP_IN, "bar", NULL);
    tp_pod_preferred_term(p, 7);
    tp_term_expr(tp_pod_preferred_term(p, 3), "foo", KS_OP_EXISTS, NULL);
    int64_t s[2];
    scores(p, labels, 2, NULL, s, "Success");
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 0);
}

#define ADDED_PREF                                                                        \
    "addedAffinity:\n"                                                                   \
    "  preferredDuringSchedulingIgnoredDuringExecution:\n"                               \
    "  - weight: 5\n"                                                                    \
    "    preference:\n"                                                                  \
    "      matchExpressions:\n"                                                          \
    "      - {key: zone, operator: In, values: [foo]}\n"

static void score_added_preferred_terms(void **st) {
    const char *const *labels[2] = {L("zone=foo"), L("zone=bar")};
    int64_t s[2];
    scores(tp_pod("p"), labels, 2, ADDED_PREF, s, "Success");
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 0);
}

static void score_added_and_pod_preferred_terms_add_up(void **st) {
    /* node1: 5 (added) + 2; node2: 4; node3: 5 + 2 + 4 + 5 = 16 ->
     * 700/16 = 43, 400/16 = 25, 100 */
    const char *const *labels[3] = {L("zone=foo", "foo=bar"), L("key=value"),
                                    L("zone=foo", "foo=bar", "key=value", "az=az1")};
    int64_t s[3];
    scores(preferred_pod(), labels, 3, ADDED_PREF, s, "Success");
    assert_int_equal(s[0], 43);
    assert_int_equal(s[1], 25);
    assert_int_equal(s[2], 100);
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
        cmocka_unit_test(node_selector_missing_labels),
        cmocka_unit_test(node_selector_same_labels),
        cmocka_unit_test(node_selector_node_labels_superset),
        cmocka_unit_test(node_selector_node_labels_subset),
        cmocka_unit_test(required_in_matches),
        cmocka_unit_test(required_gt_matches),
        cmocka_unit_test(required_not_in_matches),
        cmocka_unit_test(required_exists_matches),
        cmocka_unit_test(required_not_matching_rejects),
        cmocka_unit_test(required_empty_term_matches_nothing),
        cmocka_unit_test(required_without_terms_matches_nothing),
        cmocka_unit_test(no_affinity_skips_pre_filter),
        cmocka_unit_test(required_expressions_are_anded),
        cmocka_unit_test(required_terms_are_ored),
        cmocka_unit_test(node_selector_and_affinity_both_needed),
        cmocka_unit_test(match_fields_in_matches_node_name),
        cmocka_unit_test(match_fields_and_expressions),
        cmocka_unit_test(pre_filter_unions_node_names_of_terms),
        cmocka_unit_test(pre_filter_intersects_requirements_of_a_term),
        cmocka_unit_test(pre_filter_conflicting_names_are_unresolvable),
        cmocka_unit_test(pre_filter_unrestricted_term_allows_all),
        cmocka_unit_test(pre_filter_only_node_selector_allows_all),
        cmocka_unit_test(added_and_pod_affinity_both_match),
        cmocka_unit_test(added_matches_pod_affinity_does_not),
        cmocka_unit_test(added_affinity_does_not_match),
        cmocka_unit_test(added_affinity_disables_pre_filter_skip),
        cmocka_unit_test(args_reject_invalid_added_affinity),
        cmocka_unit_test(score_no_preferences_is_skipped),
        cmocka_unit_test(score_no_node_matches),
        cmocka_unit_test(score_sums_matching_weights_and_normalizes),
        cmocka_unit_test(score_zero_weight_and_empty_terms_count_nothing),
        cmocka_unit_test(score_added_preferred_terms),
        cmocka_unit_test(score_added_and_pod_preferred_terms_add_up),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
