/* ksched snapshot (src/cmd/snapshot_cmd.c): a live cluster listed from a
 * stand-in API server into a directory, one file per kind; that directory
 * read back with a what-if (drain) into another; a refused list fails the
 * command (1); a bad command line or feature gate is bad input (2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd_fake.h"

#include <sys/stat.h>

static char dir[64], dir2[64];

static int setup(void **st) {
    snprintf(dir, sizeof dir, "/tmp/ksched-snap-XXXXXX");
    snprintf(dir2, sizeof dir2, "/tmp/ksched-snap2-XXXXXX");
    if (!mkdtemp(dir) || !mkdtemp(dir2)) return -1;
    return cf_start() ? 0 : -1;
}

static int teardown(void **st) {
    cf_stop();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, dir2);
    return system(cmd) != 0 ? -1 : 0;
}

static char *slurp(const char *d, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_live_then_files(void **st) {
    char *live[] = {"snapshot", "--kubeconfig", CF.kubeconfig, "-o", dir, NULL};
    assert_int_equal(cmd_snapshot(5, live), 0);
    char *nodes = slurp(dir, "18-nodes.json");
    assert_non_null(nodes);
    assert_non_null(strstr(nodes, "\"n1\""));
    char *pods = slurp(dir, "19-pods.json");
    assert_non_null(pods);
    assert_non_null(strstr(pods, "\"p\""));
    /* read back from the files, n1 drained: the pending pod stays */
    char *files[] = {"snapshot", dir, "--drain", "n1", "--output", dir2, NULL};
    assert_int_equal(cmd_snapshot(6, files), 0);
    nodes = slurp(dir2, "18-nodes.json");
    assert_non_null(nodes);
    assert_non_null(strstr(nodes, "unschedulable"));
}

static void test_refused_list(void **st) {
    af_lock();
    CF.refuse_lists = true;
    af_unlock();
    char *argv[] = {"snapshot", "--kubeconfig", CF.kubeconfig, "-o", dir, NULL};
    assert_int_equal(cmd_snapshot(5, argv), 1);
}

static void test_command_line(void **st) {
    char *none[] = {"snapshot", "-o", dir, NULL};
    assert_int_equal(cmd_snapshot(3, none), 2);
    char *both[] = {"snapshot", "x.yaml", "--kubeconfig", CF.kubeconfig, "-o", dir, NULL};
    assert_int_equal(cmd_snapshot(6, both), 2);
    char *gate[] = {"snapshot", "--kubeconfig", CF.kubeconfig, "-o", dir, "--feature-gates", "NoSuchGate=true", NULL};
    assert_int_equal(cmd_snapshot(7, gate), 2);
    char *help[] = {"snapshot", "-h", NULL};
    assert_int_equal(cmd_snapshot(2, help), 0);
}

int main(void) {
    ks_log_set_output(fopen("/dev/null", "w"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_live_then_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
