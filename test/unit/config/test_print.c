/* Printing: byte-identical to `kube-scheduler --write-config-to` (goldens in
 * test/fixtures/config/printed were written by kube-scheduler v1.34's own
 * encoder), print-and-reload round trips, and the Go-compatible pieces it
 * rests on (key order, string quoting, durations, floats). Run from the
 * repository root. */
#include "config/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define HDR "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) fprintf(stderr, "cannot open %s (run from the repository root)\n", path);
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static ks_config *load(const char *name, const char *yaml) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer(name, yaml, strlen(yaml), &errs);
    for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "unexpected: %s\n", errs.msgs[i]);
    assert_int_equal(errs.n, 0);
    assert_non_null(cfg);
    ks_config_errors_free(&errs);
    return cfg;
}

/* print(load(yaml)) and print(load(print(load(yaml)))) are equal; returns
 * the first print (malloc'd). */
static char *print_round_trip(const char *yaml) {
    ks_config *cfg = load("in.yaml", yaml);
    char *once = ks_config_to_yaml(cfg);
    ks_config_free(cfg);
    cfg = load("printed.yaml", once);
    char *twice = ks_config_to_yaml(cfg);
    ks_config_free(cfg);
    assert_string_equal(once, twice);
    free(twice);
    return once;
}

/* Found by fuzz_config: a !!binary plugin name (any bytes) made libyaml's
 * emitter fail, and the events given to it after the failure made it
 * loop forever. Invalid UTF-8 prints as U+FFFD, as Go writes it. */
static void test_print_binary_name(void **state) {
    (void)state;
    const char *yaml = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "kind: KubeSchedulerConfiguration\n"
                       "profiles:\n"
                       "- plugins:\n"
                       "    multiPoint:\n"
                       "      enabled:\n"
                       "      - name: !!binary TaintToleration\n"
                       "      - name: NodeAffinity\n"
                       "        weight: 2\n";
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("bin.yaml", yaml, strlen(yaml), &errs);
    assert_non_null(cfg);
    char *out = ks_config_to_yaml(cfg);
    assert_non_null(out);
    assert_non_null(strstr(out, "\xef\xbf\xbd"));
    /* what follows the odd name is printed too */
    assert_non_null(strstr(out, "schedulerName: default-scheduler"));
    free(out);
    ks_config_free(cfg);
    ks_config_errors_free(&errs);
}

static void test_defaults_golden(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    char *got = ks_config_to_yaml(cfg);
    char *want = slurp("test/fixtures/config/printed/defaults.yaml");
    assert_string_equal(got, want);
    free(got);
    free(want);
    ks_config_free(cfg);
    /* an empty configuration prints the same */
    got = print_round_trip(HDR);
    want = slurp("test/fixtures/config/printed/defaults.yaml");
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static void test_round_trip(void **state) {
    (void)state;
    static const char *const cases[] = {
        HDR "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      disabled:\n      - name: '*'\n"
            "      enabled:\n      - name: NodeResourcesFit\n        weight: 5\n"
            "    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 0\n"
            "      disabled:\n      - name: ImageLocality\n        weight: 4\n"
            "- schedulerName: b\n  percentageOfNodesToScore: 0\n",
        HDR "parallelism: 3\nclientConnection:\n  qps: 1234567.5\n  acceptContentTypes: 'yes'\n"
            "leaderElection:\n  leaderElect: false\n  leaseDuration: 90m\n  renewDeadline: 1.5s\n"
            "  retryPeriod: 1h2m3.5s\ndelayCacheUntilActive: true\nenableProfiling: false\n"
            "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n  weight: 3\n  httpTimeout: 500ms\n"
            "  tlsConfig: {insecure: true, certData: aGVsbG8=}\n  managedResources:\n"
            "  - {name: example.com/foo, ignoredByScheduler: true}\n",
        /* out-of-tree args go through untouched (keys sorted as yaml.v2 does) */
        HDR "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Custom\n"
            "  pluginConfig:\n  - name: Custom\n    args:\n      z: 1.0\n      b_c: 'true'\n      B: 'x: y'\n"
            "      a10: 1\n      a9: 2\n      list: [1, 2.5, '3']\n      empty: ''\n      nested: {k: null}\n"
            "  - name: Unused\n    args: {x: 1}\n",
        HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n"
            "      defaultConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n"
            "        whenUnsatisfiable: ScheduleAnyway\n        minDomains: 2\n        nodeTaintsPolicy: Honor\n"
            "        matchLabelKeys: [app]\n"
            "  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
            "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
            "          - matchExpressions:\n            - {key: pool, operator: NotIn, values: [batch]}\n"
            "        preferredDuringSchedulingIgnoredDuringExecution:\n        - weight: 3\n"
            "          preference:\n            matchFields:\n            - {key: metadata.name, operator: In, "
            "values: [n1]}\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) free(print_round_trip(cases[i]));
}

/* Out-of-tree args as kube-scheduler prints them: yaml.v2 key order (B
 * before a9 before a10), strings quoted when they would read back as
 * something else, long strings folded at 80 columns, multi-line strings as
 * literal blocks, integral floats as integers. */
static void test_printed_details(void **state) {
    (void)state;
    char *out = print_round_trip(
        HDR "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Custom\n"
            "  pluginConfig:\n  - name: Custom\n    args:\n      z: 1.0\n      b_c: \"true\"\n      B: \"x: y\"\n"
            "      a10: 1\n      a9: 2\n      list: [1, 2.5, \"3\"]\n      empty: \"\"\n      nested: {k: null}\n"
            "      long: \"aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq "
            "rrrr\"\n"
            "      multi: \"line1\\nline2\"\n      num: \"0x1F\"\n      date: \"2024-01-02\"\n      colon: \"1:30\"\n"
            "      star: \"*\"\n      tilde: \"~\"\n      dot: \".5\"\n      exp: \"1e3\"\n      under: \"1_000\"\n"
            "  - name: Unused\n    args: {x: 1}\n");
    const char *want = "- pluginConfig:\n"
                       "  - args:\n"
                       "      B: 'x: y'\n"
                       "      a9: 2\n"
                       "      a10: 1\n"
                       "      b_c: \"true\"\n"
                       "      colon: \"1:30\"\n"
                       "      date: \"2024-01-02\"\n"
                       "      dot: \".5\"\n"
                       "      empty: \"\"\n"
                       "      exp: \"1e3\"\n"
                       "      list:\n"
                       "      - 1\n"
                       "      - 2.5\n"
                       "      - \"3\"\n"
                       "      long: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn\n"
                       "        oooo pppp qqqq rrrr\n"
                       "      multi: |-\n"
                       "        line1\n"
                       "        line2\n"
                       "      nested:\n"
                       "        k: null\n"
                       "      num: \"0x1F\"\n"
                       "      star: '*'\n"
                       "      tilde: \"~\"\n"
                       "      under: \"1_000\"\n"
                       "      z: 1\n"
                       "    name: Custom\n";
    assert_non_null(strstr(out, want));
    /* pluginConfig of plugins the profile does not use is not printed */
    assert_null(strstr(out, "Unused"));
    free(out);

    out = print_round_trip(HDR "clientConnection:\n  qps: 1234567.5\n  burst: 7\n"
                               "leaderElection:\n  leaseDuration: 90m\n  renewDeadline: 1.5s\n  retryPeriod: 1h2m3.5s\n"
                               "extenders:\n- urlPrefix: http://x\n");
    assert_non_null(strstr(out, "  burst: 7\n  contentType: application/vnd.kubernetes.protobuf\n"
                                "  kubeconfig: \"\"\n  qps: 1.2345675e+06\n"));
    assert_non_null(strstr(out, "  leaseDuration: 1h30m0s\n  renewDeadline: 1.5s\n"));
    assert_non_null(strstr(out, "  retryPeriod: 1h2m3.5s\n"));
    assert_non_null(strstr(out, "extenders:\n- httpTimeout: 0s\n  urlPrefix: http://x\n"));
    free(out);
}

static void test_go_durations(void **state) {
    (void)state;
    static const struct {
        const char *in, *out;
    } ok[] = {
        {"0", "0s"},          {"15s", "15s"},      {"1m", "1m0s"},          {"90m", "1h30m0s"},
        {"1.5s", "1.5s"},     {"500ms", "500ms"},  {"1500ms", "1.5s"},      {"2us", "2\xc2\xb5s"},
        {"-1s", "-1s"},       {"1h2m3.5s", "1h2m3.5s"}, {"+3ns", "3ns"},   {".5m", "30s"},
        {"1.000000001s", "1.000000001s"}, {"2562047h47m16.854775807s", "2562047h47m16.854775807s"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ns;
        char *err = NULL;
        assert_true(go_parse_duration(ok[i].in, &ns, &err));
        char buf[40];
        go_format_duration(ns, buf);
        assert_string_equal(buf, ok[i].out);
    }
    static const struct {
        const char *in, *err;
    } bad[] = {
        {"", "time: invalid duration \"\""},
        {"15", "time: missing unit in duration \"15\""},
        {"5x", "time: unknown unit \"x\" in duration \"5x\""},
        {"abc", "time: invalid duration \"abc\""},
        {"1.s.", "time: invalid duration \"1.s.\""},
        {"9999999999h", "time: invalid duration \"9999999999h\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ns;
        char *err = NULL;
        assert_false(go_parse_duration(bad[i].in, &ns, &err));
        assert_string_equal(err, bad[i].err);
        free(err);
    }
}

static void test_go_floats(void **state) {
    (void)state;
    static const struct {
        double v;
        int bits;
        const char *out;
    } cases[] = {
        {50, 32, "50"},           {12.5, 32, "12.5"},        {0.1f, 32, "0.1"},     {1234567.5, 32, "1.2345675e+06"},
        {100000.5, 64, "100000.5"}, {0.0001, 64, "0.0001"},  {0.00001, 64, "1e-05"}, {1e21, 64, "1e+21"},
        {-2.5, 64, "-2.5"},       {0, 64, "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[40];
        go_format_float(cases[i].v, cases[i].bits, buf);
        assert_string_equal(buf, cases[i].out);
    }
    assert_int_equal(go_base64_invalid_at("aGVsbG8="), -1);
    assert_int_equal(go_base64_invalid_at("aGVs\nbG8="), -1);
    assert_int_equal(go_base64_invalid_at("abc"), 3);
    assert_int_equal(go_base64_invalid_at("a*"), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_golden), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_printed_details), cmocka_unit_test(test_print_binary_name), cmocka_unit_test(test_go_durations),
        cmocka_unit_test(test_go_floats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
