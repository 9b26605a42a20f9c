/* ksched run's kube-scheduler flags (src/cmd/run_flags.c): each deprecated
 * flag parsed (both --flag=V and --flag V, pflag's booleans), bad values
 * refused with the flag named, and their precedence: used without
 * --config, ignored with it, except the unschedulable-pods duration. */
#include "cmd/run_flags.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Parses every argument of argv with ks_run_flag_parse; returns the last
 * result (1 all matched, 0 one not a run flag, -1 an error in *err). */
static int parse_all(ks_run_flags *f, int argc, char **argv, char **err) {
    int r = 0;
    for (int i = 0; i < argc; i++) {
        r = ks_run_flag_parse(f, argc, argv, &i, err);
        if (r != 1) return r;
    }
    return r;
}

static void test_parse(void **st) {
    (void)st;
    ks_run_flags f = {0};
    char *err = NULL;
    char *argv[] = {"--kube-api-qps=50.5", "--kube-api-burst", "100", "--kube-api-content-type=application/json",
                    "--kubeconfig", "/k", "--master=https://127.0.0.1:6443", "--profiling=false",
                    "--contention-profiling", "--pod-max-in-unschedulable-pods-duration=90s",
                    "--write-config-to=/tmp/out.yaml"};
    assert_int_equal(parse_all(&f, 11, argv, &err), 1);
    assert_null(err);
    assert_true(f.has_qps);
    assert_true(f.qps > 50.4f && f.qps < 50.6f);
    assert_true(f.has_burst);
    assert_int_equal(f.burst, 100);
    assert_string_equal(f.content_type, "application/json");
    assert_string_equal(f.kubeconfig, "/k");
    assert_string_equal(f.master, "https://127.0.0.1:6443");
    assert_true(f.has_profiling);
    assert_false(f.profiling);
    assert_true(f.has_contention);
    assert_true(f.contention);
    assert_true(f.has_max_unsched);
    assert_int_equal(f.max_unsched_ns, 90LL * 1000000000LL);
    assert_string_equal(f.write_config, "/tmp/out.yaml");

    char *other[] = {"--config=x.yaml"};
    ks_run_flags g = {0};
    assert_int_equal(parse_all(&g, 1, other, &err), 0); /* not a run flag */
}

static void expect_bad(const char *arg, const char *want) {
    ks_run_flags f = {0};
    char *err = NULL;
    char *argv[] = {(char *)arg};
    assert_int_equal(parse_all(&f, 1, argv, &err), -1);
    assert_non_null(err);
    if (!strstr(err, want)) fail_msg("error \"%s\" does not name \"%s\"", err, want);
    free(err);
}

static void test_bad_values(void **st) {
    (void)st;
    expect_bad("--kube-api-qps=fast", "--kube-api-qps");
    expect_bad("--kube-api-burst=1.5", "--kube-api-burst");
    expect_bad("--kube-api-burst=99999999999", "--kube-api-burst");
    expect_bad("--profiling=maybe", "--profiling=maybe");
    expect_bad("--pod-max-in-unschedulable-pods-duration=soon", "--pod-max-in-unschedulable-pods-duration");
}

static void test_apply(void **st) {
    (void)st;
    ks_run_flags f = {.kubeconfig = "/k", .content_type = "application/json", .has_qps = true, .qps = 7,
                      .has_burst = true, .burst = 9, .has_profiling = true, .profiling = false,
                      .has_contention = true, .contention = true, .has_max_unsched = true,
                      .max_unsched_ns = 42};
    ks_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.enable_profiling = true;
    ks_run_flags_apply(&f, false, &cfg, "run"); /* no --config: the flags are used */
    assert_string_equal(cfg.client_connection.kubeconfig, "/k");
    assert_string_equal(cfg.client_connection.content_type, "application/json");
    assert_true(cfg.client_connection.qps > 6.9 && cfg.client_connection.qps < 7.1);
    assert_int_equal(cfg.client_connection.burst, 9);
    assert_false(cfg.enable_profiling);
    assert_true(cfg.enable_contention_profiling);
    assert_int_equal(cfg.pod_max_in_unschedulable_ns, 42);

    memset(&cfg, 0, sizeof cfg);
    cfg.enable_profiling = true;
    ks_run_flags_apply(&f, true, &cfg, "run"); /* --config: ignored (a warning), but the duration */
    assert_null(cfg.client_connection.kubeconfig);
    assert_null(cfg.client_connection.content_type);
    assert_int_equal(cfg.client_connection.burst, 0);
    assert_true(cfg.enable_profiling);
    assert_false(cfg.enable_contention_profiling);
    assert_int_equal(cfg.pod_max_in_unschedulable_ns, 42);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_apply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
