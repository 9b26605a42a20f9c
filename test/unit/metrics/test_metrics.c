/* The metrics registry and its text format: exact output for each type,
 * label order and escaping, Go's number format, histograms from several
 * threads, collectors; the scheduler's families (names, HELP with the
 * stability level, buckets as upstream's); and the counts recorded by a
 * small scheduling run. */
#include "metrics/metrics.h"
#include "metrics/sched_metrics.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static char *write_all(ks_metrics *r) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_metrics_write(r, &b);
    return ks_sb_take(&b);
}

static void test_go_float(void **state) {
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},         {1, "1"},           {0.001, "0.001"},   {0.0001, "0.0001"},   {1e-05, "1e-05"},
        {1.5e-05, "1.5e-05"}, {2.25e-05, "2.25e-05"}, {123456, "123456"}, {1e6, "1e+06"}, {1234567, "1.234567e+06"},
        {0.5, "0.5"},     {-2.5, "-2.5"},     {64, "64"},         {0.1, "0.1"},         {3.0517578125e-05, "3.0517578125e-05"},
        {100.25, "100.25"}, {1.0 / 3, "0.3333333333333333"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[48];
        ks_format_go_float(cases[i].v, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].want);
    }
    char buf[48];
    ks_format_go_float(1.0 / 0.0, buf, sizeof(buf));
    assert_string_equal(buf, "+Inf");
}

static void test_text_format(void **state) {
    (void)state;
    ks_metrics *r = ks_metrics_new();
    ks_metric_vec *c = ks_metrics_counter(r, "b_total", "A counter.", KS_STABLE, "zeta,alpha");
    ks_counter_add(ks_metric_get(c, "z1", "a1"), 3);
    ks_counter_inc(ks_metric_get(c, "z0", "a2"));
    ks_counter_inc(ks_metric_get(c, "z0", "a2"));
    ks_metric_vec *g = ks_metrics_gauge(r, "a_gauge", "Line one\nback\\slash", KS_ALPHA, "v");
    ks_gauge_set(ks_metric_get(g, "quote\"d\nx\\"), 2.5);
    double b[3];
    ks_buckets_exponential(0.001, 2, 3, b);
    ks_metric_vec *h = ks_metrics_histogram(r, "c_seconds", "A histogram.", KS_BETA, NULL, b, 3);
    ks_metric *hm = ks_metric_get(h);
    ks_histogram_observe(hm, 0.0005);
    ks_histogram_observe(hm, 0.002);
    ks_histogram_observe(hm, 10);
    ks_metrics_gauge(r, "d_empty", "No series yet.", KS_ALPHA, "x");
    ks_metrics_counter(r, "e_plain_total", "Always there.", KS_INTERNAL, NULL);
    char *out = write_all(r);
    const char *want =
        "# HELP a_gauge [ALPHA] Line one\\nback\\\\slash\n"
        "# TYPE a_gauge gauge\n"
        "a_gauge{v=\"quote\\\"d\\nx\\\\\"} 2.5\n"
        "# HELP b_total [STABLE] A counter.\n"
        "# TYPE b_total counter\n"
        "b_total{alpha=\"a1\",zeta=\"z1\"} 3\n"
        "b_total{alpha=\"a2\",zeta=\"z0\"} 2\n"
        "# HELP c_seconds [BETA] A histogram.\n"
        "# TYPE c_seconds histogram\n"
        "c_seconds_bucket{le=\"0.001\"} 1\n"
        "c_seconds_bucket{le=\"0.002\"} 2\n"
        "c_seconds_bucket{le=\"0.004\"} 2\n"
        "c_seconds_bucket{le=\"+Inf\"} 3\n"
        "c_seconds_sum 10.0025\n"
        "c_seconds_count 3\n"
        "# HELP e_plain_total Always there.\n"
        "# TYPE e_plain_total counter\n"
        "e_plain_total 0\n";
    assert_string_equal(out, want);
    free(out);
    /* Same name again: the same family; another type: refused. */
    assert_ptr_equal(ks_metrics_counter(r, "b_total", "x", KS_ALPHA, "zeta,alpha"), c);
    assert_null(ks_metrics_gauge(r, "b_total", "x", KS_ALPHA, "zeta,alpha"));
    assert_null(ks_metrics_counter(r, "b_total", "x", KS_ALPHA, "zeta"));
    ks_metrics_free(r);
}

typedef struct observer_arg {
    ks_metric *m;
    int n;
} observer_arg;

static void *observe_many(void *arg) {
    observer_arg *a = arg;
    for (int i = 0; i < a->n; i++) ks_histogram_observe(a->m, (i % 2) ? 0.5 : 2.0);
    return NULL;
}

static void test_histogram_threads(void **state) {
    (void)state;
    ks_metrics *r = ks_metrics_new();
    double b[1] = {1};
    ks_metric *m = ks_metric_get(ks_metrics_histogram(r, "h", "h", KS_ALPHA, NULL, b, 1));
    pthread_t t[4];
    observer_arg a = {m, 10000};
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, observe_many, &a);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    uint64_t count;
    double sum;
    ks_histogram_totals(m, &count, &sum);
    assert_int_equal(count, 40000);
    assert_true(sum == 4 * 5000 * 0.5 + 4 * 5000 * 2.0);
    char *out = write_all(r);
    assert_non_null(strstr(out, "h_bucket{le=\"1\"} 20000\nh_bucket{le=\"+Inf\"} 40000\nh_sum 50000\nh_count 40000\n"));
    free(out);
    ks_metrics_free(r);
}

static int collected;
static ks_metric *collected_gauge;
static void collector(void *arg) {
    collected++;
    ks_gauge_set(collected_gauge, *(double *)arg);
}

static void test_collector(void **state) {
    (void)state;
    ks_metrics *r = ks_metrics_new();
    collected_gauge = ks_metric_get(ks_metrics_gauge(r, "q", "q", KS_ALPHA, NULL));
    double v = 7;
    ks_metrics_add_collector(r, collector, &v);
    char *out = write_all(r);
    assert_int_equal(collected, 1);
    assert_non_null(strstr(out, "\nq 7\n"));
    free(out);
    ks_metrics_remove_collector(r, collector, &v);
    free(write_all(r));
    assert_int_equal(collected, 1);
    ks_metrics_register_process(r);
    out = write_all(r);
    assert_non_null(strstr(out, "# TYPE process_resident_memory_bytes gauge\n"));
    assert_non_null(strstr(out, "# TYPE process_cpu_seconds_total counter\n"));
    assert_non_null(strstr(out, "# HELP process_start_time_seconds [ALPHA] Start time"));
    free(out);
    ks_metrics_free(r);
}

/* The upstream families: a few names, HELP lines and buckets checked
 * against pkg/scheduler/metrics/metrics.go v1.34.1. */
static void test_sched_families(void **state) {
    (void)state;
    const ks_sched_metrics *sm = ks_sm();
    ks_counter_inc(ks_metric_get(sm->schedule_attempts, "scheduled", "default-scheduler"));
    ks_histogram_observe(ks_metric_get(sm->plugin_execution_duration, "NodeResourcesFit", "Filter", "Success"),
                         0.00002);
    ks_histogram_observe(ks_metric_get(sm->pod_scheduling_sli_duration, "1"), 0.5);
    char *out = write_all(sm->reg);
    assert_non_null(strstr(out, "# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule "
                                "pods, by the result. 'unschedulable' means a pod could not be scheduled, while "
                                "'error' means an internal scheduler problem.\n"
                                "# TYPE scheduler_schedule_attempts_total counter\n"
                                "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"}"));
    /* ExponentialBuckets(0.00001, 1.5, 20), computed as Go computes them
     * (repeated multiplication) and printed as Go prints them */
    assert_non_null(strstr(out, "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
                                "plugin=\"NodeResourcesFit\",status=\"Success\",le=\"1e-05\"} 0\n"
                                "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
                                "plugin=\"NodeResourcesFit\",status=\"Success\",le=\"1.5000000000000002e-05\"} 0\n"
                                "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
                                "plugin=\"NodeResourcesFit\",status=\"Success\",le=\"2.2500000000000005e-05\"} 1\n"));
    assert_non_null(strstr(out, "le=\"0.0029192926025390638\"} 1\n"));
    assert_non_null(strstr(out, "le=\"0.02216837820053101\"} 1\n"));
    assert_non_null(strstr(out, "# HELP scheduler_pod_scheduling_sli_duration_seconds [BETA] E2e latency"));
    assert_non_null(strstr(out, "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"5242.88\"} 1\n"));
    assert_non_null(strstr(out, "# HELP scheduler_preemption_attempts_total [STABLE] Total preemption attempts in the "
                                "cluster till now\n# TYPE scheduler_preemption_attempts_total counter\n"
                                "scheduler_preemption_attempts_total "));
    free(out);
    char b[8];
    assert_string_equal(ks_sm_attempts_label(3, b), "3");
    assert_string_equal(ks_sm_attempts_label(15, b), "15+");
}

static void test_kube_hooks(void **state) {
    (void)state;
    ks_sm_rest_request("GET", "127.0.0.1:6443", 200, 0.01);
    ks_sm_rest_request("POST", "127.0.0.1:6443", 0, 1);
    ks_sm_relist("pods");
    ks_sm_watch_restart("nodes", "expired");
    ks_sm_event_dropped("decode");
    char *out = write_all(ks_sm()->reg);
    assert_non_null(strstr(out, "rest_client_requests_total{code=\"200\",host=\"127.0.0.1:6443\",method=\"GET\"} 1\n"));
    assert_non_null(strstr(out, "rest_client_requests_total{code=\"<error>\",host=\"127.0.0.1:6443\",method=\"POST\"} 1\n"));
    assert_non_null(strstr(out, "rest_client_request_duration_seconds_bucket{host=\"127.0.0.1:6443\",verb=\"GET\",le=\"0.025\"} 1\n"));
    assert_non_null(strstr(out, "ksched_relists_total{resource=\"pods\"} 1\n"));
    assert_non_null(strstr(out, "ksched_watch_restarts_total{reason=\"expired\",resource=\"nodes\"} 1\n"));
    assert_non_null(strstr(out, "ksched_watch_events_dropped_total{reason=\"decode\"} 1\n"));
    free(out);
}

static void test_plugin_timing_report(void **state) {
    (void)state;
    const ks_sched_metrics *sm = ks_sm();
    ks_histogram_observe_n(ks_metric_get(sm->plugin_execution_duration, "Slow", "Score", "Success"), 0.001, 10);
    ks_histogram_observe_n(ks_metric_get(sm->plugin_execution_duration, "Fast", "Filter", "Success"), 0.00001, 10);
    ks_counter_add(ks_metric_get(sm->plugin_evaluation_total, "Slow", "Score", "p"), 100);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_plugin_timing_report(&b, false);
    const char *slow = strstr(ks_sb_str(&b), "\nSlow ");
    const char *fast = strstr(ks_sb_str(&b), "\nFast ");
    assert_non_null(slow);
    assert_non_null(fast);
    assert_true(slow < fast);
    /* 100 calls x 1 ms */
    assert_non_null(strstr(slow, " 100        100.000\n"));
    ks_sb_reset(&b);
    ks_plugin_timing_report(&b, true);
    assert_non_null(strstr(ks_sb_str(&b), "{\"plugin\":\"Slow\",\"extensionPoint\":\"Score\",\"sampledCalls\":10,"
                                          "\"sampledSeconds\":0.01,\"meanSeconds\":0.001,\"calls\":100,"
                                          "\"estimatedSeconds\":0.1}"));
    ks_sb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_float),
        cmocka_unit_test(test_text_format),
        cmocka_unit_test(test_histogram_threads),
        cmocka_unit_test(test_collector),
        cmocka_unit_test(test_sched_families),
        cmocka_unit_test(test_kube_hooks),
        cmocka_unit_test(test_plugin_timing_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
