/* ksched run --shadow (src/cmd/shadow_cmd.c) against a stand-in API
 * server: it lists the cluster, writes nothing (no binding, no status
 * patch, no event), and stops cleanly (status 0) on SIGTERM; a report
 * file it cannot open and a kubeconfig it cannot read are bad input (2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd_fake.h"

static int setup(void **st) { return cf_start() ? 0 : -1; }
static int teardown(void **st) {
    cf_stop();
    return 0;
}

static bool listed(void *arg) { return AF.nlog > 0 && cf_path_seen("/api/v1/pods") && cf_path_seen("/api/v1/nodes"); }

static void test_watches_writes_nothing(void **st) {
    char report[] = "/tmp/ksched-shadow-report-XXXXXX";
    int fd = mkstemp(report);
    assert_true(fd >= 0);
    close(fd);
    /* the same watches as run: DynamicResources' claims with the default
     * profile */
    char *argv[] = {"run", "--shadow", "--kubeconfig", CF.kubeconfig, "--secure-port=0", "--report", report, NULL};
    cf_cmd c = {.fn = cmd_run, .argc = 7, .argv = argv};
    cf_cmd_start(&c);
    bool ok = af_wait(listed, NULL, 30);
    bool claims = af_wait(cf_path_seen, "/resourceclaims", 30);
    int rc = cf_cmd_stop(&c);
    unlink(report);
    assert_int_equal(rc, 0);
    assert_true(ok);
    assert_true(claims);
    assert_int_equal(af_count("POST", NULL), 0);
    assert_int_equal(af_count("PATCH", NULL), 0);
    assert_int_equal(af_count("PUT", NULL), 0);
}

static void test_bad_inputs(void **st) {
    char *report[] = {"run", "--shadow", "--kubeconfig", CF.kubeconfig, "--report", "/nonexistent/dir/r.log", NULL};
    assert_int_equal(cmd_run(6, report), 2);
    char *kc[] = {"run", "--shadow", "--kubeconfig", "/nonexistent/kubeconfig", "--secure-port=0", NULL};
    assert_int_equal(cmd_run(5, kc), 2);
}

int main(void) {
    cf_block_signals();
    ks_log_set_output(fopen("/dev/null", "w"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_watches_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_inputs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
