/* ksched run (src/cmd/run_cmd.c) against a stand-in API server: it lists
 * the cluster, binds the pending pod and stops cleanly (status 0) on
 * SIGTERM; with leader election it takes the lease first; a kubeconfig
 * that cannot be read is bad input (2); --write-config-to writes the
 * configuration and exits; --report without --shadow is refused; -h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd_fake.h"

#include <sys/stat.h>

static int setup(void **st) { return cf_start() ? 0 : -1; }
static int teardown(void **st) {
    cf_stop();
    return 0;
}

static bool bound(void *arg) { return cf_path_seen("/pods/p/binding"); }

static void test_binds_and_stops(void **st) {
    char *argv[] = {"run", "--kubeconfig", CF.kubeconfig, "--leader-elect=false", "--secure-port=0", NULL};
    cf_cmd c = {.fn = cmd_run, .argc = 5, .argv = argv};
    cf_cmd_start(&c);
    bool ok = af_wait(bound, NULL, 30);
    assert_int_equal(cf_cmd_stop(&c), 0);
    assert_true(ok);
    assert_true(af_count("GET", "/api/v1/nodes") >= 1);
}

static bool leased(void *arg) { return cf_path_seen("/leases"); }

/* With leader election the lease is asked for first (the stand-in refuses
 * it: a standby waits, then stops cleanly on SIGTERM). */
static void test_leader_election_standby(void **st) {
    char *argv[] = {"run", "--kubeconfig", CF.kubeconfig, "--leader-elect=true", "--secure-port=0",
                    "--leader-elect-retry-period=100ms", NULL};
    cf_cmd c = {.fn = cmd_run, .argc = 6, .argv = argv};
    cf_cmd_start(&c);
    bool ok = af_wait(leased, NULL, 30);
    assert_int_equal(cf_cmd_stop(&c), 0);
    assert_true(ok);
    assert_int_equal(af_count("POST", "/api/v1/namespaces/default/pods/p/binding"), 0);
}

static void test_bad_kubeconfig(void **st) {
    char *argv[] = {"run", "--kubeconfig", "/nonexistent/kubeconfig", "--leader-elect=false", "--secure-port=0", NULL};
    assert_int_equal(cmd_run(5, argv), 2);
}

static void test_write_config(void **st) {
    char path[] = "/tmp/ksched-run-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char arg[128];
    snprintf(arg, sizeof arg, "--write-config-to=%s", path);
    char *argv[] = {"run", arg, "--kube-api-qps=30", NULL};
    assert_int_equal(cmd_run(3, argv), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > 100);
    FILE *f = fopen(path, "r");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "kind: KubeSchedulerConfiguration"));
    assert_non_null(strstr(buf, "qps: 30"));
}

static void test_command_line(void **st) {
    char *report[] = {"run", "--report", "x.log", NULL};
    assert_int_equal(cmd_run(3, report), 2);
    char *help[] = {"run", "-h", NULL};
    assert_int_equal(cmd_run(2, help), 0);
    char *shadow_help[] = {"run", "--shadow", "--help", NULL};
    assert_int_equal(cmd_run(3, shadow_help), 0);
    char *unknown[] = {"run", "--no-such-flag", NULL};
    assert_int_equal(cmd_run(2, unknown), 2);
}

int main(void) {
    cf_block_signals();
    ks_log_set_output(fopen("/dev/null", "w"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_binds_and_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leader_election_standby, setup, teardown),
        cmocka_unit_test(test_bad_kubeconfig),
        cmocka_unit_test(test_write_config),
        cmocka_unit_test(test_command_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
