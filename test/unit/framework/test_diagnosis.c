/* FailedScheduling messages: upstream FitError.Error(), exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "framework/status.h"
#include "framework/diagnosis.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(ks_fit_error *fe, const char *node, ks_code code, const char *r1, const char *r2) {
    ks_status *s = ks_status_new(code, "%s", r1);
    if (r2) ks_status_add_reason(s, "%s", r2);
    ks_node_status_map_put(&fe->diagnosis.statuses, ks_intern(node), s);
}

static void check(ks_fit_error *fe, const char *want) {
    char *m = ks_fit_error_message(fe);
    assert_string_equal(m, want);
    free(m);
}

static void test_reason_histogram_sorted(void **state) {
    ks_fit_error fe = {.num_all_nodes = 5};
    ks_diagnosis_init(&fe.diagnosis);
    put(&fe, "n1", KS_UNSCHEDULABLE, "Insufficient cpu", NULL);
    put(&fe, "n2", KS_UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory");
    put(&fe, "n3", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {gpu: true}", NULL);
    put(&fe, "n4", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {gpu: true}", NULL);
    put(&fe, "n5", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {gpu: true}", NULL);
    check(&fe, "0/5 nodes are available: 1 Insufficient memory, 2 Insufficient cpu, 3 node(s) had untolerated "
               "taint {gpu: true}.");
    fe.diagnosis.post_filter_msg = strdup("preemption: 0/5 nodes are available: 5 No preemption victims found "
                                          "for incoming pod.");
    check(&fe, "0/5 nodes are available: 1 Insufficient memory, 2 Insufficient cpu, 3 node(s) had untolerated "
               "taint {gpu: true}. preemption: 0/5 nodes are available: 5 No preemption victims found for "
               "incoming pod.");
    ks_diagnosis_free(&fe.diagnosis);
}

static void test_counts_sort_as_strings(void **state) {
    /* "10 x" sorts before "2 y": upstream sorts the formatted strings. */
    ks_fit_error fe = {.num_all_nodes = 12};
    ks_diagnosis_init(&fe.diagnosis);
    char name[16];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "a%d", i);
        put(&fe, name, KS_UNSCHEDULABLE, "x", NULL);
    }
    put(&fe, "b1", KS_UNSCHEDULABLE, "y", NULL);
    put(&fe, "b2", KS_UNSCHEDULABLE, "y", NULL);
    check(&fe, "0/12 nodes are available: 10 x, 2 y.");
    ks_diagnosis_free(&fe.diagnosis);
}

static void test_absent_nodes_use_prefilter_set_status(void **state) {
    /* PreFilter kept 2 of 6 nodes; one of those failed Filter. */
    ks_fit_error fe = {.num_all_nodes = 6};
    ks_diagnosis_init(&fe.diagnosis);
    ks_node_status_map_set_absent(&fe.diagnosis.statuses,
                                  ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                "node(s) didn't satisfy plugin(s) [NodeAffinity]"));
    put(&fe, "n1", KS_UNSCHEDULABLE, "Insufficient cpu", NULL);
    put(&fe, "n2", KS_UNSCHEDULABLE, "Insufficient cpu", NULL);
    check(&fe, "0/6 nodes are available: 2 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].");
    ks_diagnosis_free(&fe.diagnosis);
}

static void test_prefilter_rejection_message(void **state) {
    ks_fit_error fe = {.num_all_nodes = 3};
    ks_diagnosis_init(&fe.diagnosis);
    fe.diagnosis.pre_filter_msg = strdup("node(s) didn't match Pod's node affinity/selector");
    ks_node_status_map_set_absent(&fe.diagnosis.statuses,
                                  ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                "node(s) didn't match Pod's node affinity/selector"));
    check(&fe, "0/3 nodes are available: node(s) didn't match Pod's node affinity/selector.");
    fe.diagnosis.post_filter_msg = strdup("preemption: not eligible due to preemptionPolicy=Never.");
    check(&fe, "0/3 nodes are available: node(s) didn't match Pod's node affinity/selector. preemption: not "
               "eligible due to preemptionPolicy=Never.");
    ks_diagnosis_free(&fe.diagnosis);
}

static void test_no_reasons(void **state) {
    /* A status without reasons contributes nothing (no trailing period). */
    ks_fit_error fe = {.num_all_nodes = 1};
    ks_diagnosis_init(&fe.diagnosis);
    ks_node_status_map_put(&fe.diagnosis.statuses, ks_intern("n1"), ks_status_new(KS_UNSCHEDULABLE, NULL));
    check(&fe, "0/1 nodes are available:");
    ks_diagnosis_free(&fe.diagnosis);
}

static void test_truncate(void **state) {
    char big[2000];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    char *t = ks_truncate_message(big);
    assert_int_equal(strlen(t), 1024);
    assert_string_equal(t + 1020, " ...");
    free(t);
    t = ks_truncate_message("short");
    assert_string_equal(t, "short");
    free(t);
}

int main(void) {
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reason_histogram_sorted),
        cmocka_unit_test(test_counts_sort_as_strings),
        cmocka_unit_test(test_absent_nodes_use_prefilter_set_status),
        cmocka_unit_test(test_prefilter_rejection_message),
        cmocka_unit_test(test_no_reasons),
        cmocka_unit_test(test_truncate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
