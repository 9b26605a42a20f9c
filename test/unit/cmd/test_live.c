/* The live-cluster flags (src/cmd/live.c): --kubeconfig/--master, the
 * what-ifs (--drain, --remove-node, --add-node with --count) parsed and
 * refused where wrong; the cluster listed from a stand-in API server with
 * more pods from files on top and nodes added from a manifest; the
 * what-ifs on files alone; a what-if naming no node is an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd/live.h"
#include "cmd_fake.h"
#include "util/intern.h"

static char node_file[64], pod_file[64];

static void write_file(char *path, const char *text) {
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static int setup(void **st) {
    if (!cf_start()) return -1;
    snprintf(node_file, sizeof node_file, "/tmp/ksched-live-node-XXXXXX");
    snprintf(pod_file, sizeof pod_file, "/tmp/ksched-live-pod-XXXXXX");
    write_file(node_file, "apiVersion: v1\nkind: Node\nmetadata:\n  name: big\nstatus:\n  allocatable:\n"
                          "    cpu: \"8\"\n    memory: 16Gi\n    pods: \"110\"\n");
    write_file(pod_file, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: extra\n  namespace: default\nspec:\n"
                         "  containers:\n  - name: c\n    image: pause\n");
    return 0;
}

static int teardown(void **st) {
    cf_stop();
    unlink(node_file);
    unlink(pod_file);
    return 0;
}

/* Parse argv[1..] with ks_cli_live_parse alone; the last result. */
static int parse(ks_cli_live *l, int argc, char **argv, char **err) {
    int r = 0;
    for (int i = 1; i < argc; i++)
        if ((r = ks_cli_live_parse(l, argc, argv, &i, err)) != 1) return r;
    return r;
}

static void test_parse(void **st) {
    ks_cli_live l = {0};
    char *err = NULL;
    char *argv[] = {"x", "--kubeconfig", "k", "--master=http://m", "--drain", "a", "--remove-node=b",
                    "--add-node", "f.yaml", "--count", "3", "--add-node", "g.yaml"};
    assert_int_equal(parse(&l, 13, argv, &err), 1);
    assert_true(ks_cli_live_is_live(&l));
    assert_true(ks_cli_live_has_whatifs(&l));
    assert_int_equal(l.ndrain, 1);
    assert_int_equal(l.nremove, 1);
    assert_int_equal(l.nadd, 2);
    assert_int_equal(l.count[0], 3);
    assert_int_equal(l.count[1], 1);
    ks_cli_live_free(&l);
    char *first[] = {"x", "--count", "2"};
    assert_int_equal(parse(&l, 3, first, &err), -1);
    assert_non_null(strstr(err, "--count goes after"));
    free(err);
    err = NULL;
    char *bad[] = {"x", "--add-node", "f", "--count", "0"};
    assert_int_equal(parse(&l, 5, bad, &err), -1);
    assert_non_null(strstr(err, "1 to 100000"));
    free(err);
    err = NULL;
    char *missing[] = {"x", "--drain"};
    assert_int_equal(parse(&l, 2, missing, &err), -1);
    free(err);
    err = NULL;
    char *other[] = {"x", "--seed", "1"};
    assert_int_equal(parse(&l, 3, other, &err), 0);
    ks_cli_live_free(&l);
}

static bool has_node(const ks_cluster *c, const char *name) {
    for (uint32_t i = 0; i < c->nodes.n; i++)
        if (c->nodes.v[i]->name == ks_intern(name)) return true;
    return false;
}

static void test_live_cluster(void **st) {
    ks_cli_live l = {.kubeconfig = CF.kubeconfig};
    char *err = NULL;
    char *argv[] = {"x", "--add-node", node_file, "--count", "2"};
    assert_int_equal(parse(&l, 5, argv, &err), 1);
    const char *paths[] = {pod_file};
    ks_cluster *c = ks_cli_live_cluster(&l, paths, 1, "test");
    assert_non_null(c);
    assert_int_equal(c->nodes.n, 3);
    assert_true(has_node(c, "n1") && has_node(c, "big-1") && has_node(c, "big-2"));
    assert_int_equal(c->pods.n, 2); /* listed, and the file's on top */
    ks_cluster_free(c);
    ks_cli_live_free(&l);
}

static void test_files_with_whatifs(void **st) {
    ks_cli_live l = {0};
    char *err = NULL;
    char *argv[] = {"x", "--add-node", node_file, "--remove-node", "big"};
    assert_int_equal(parse(&l, 5, argv, &err), 1);
    const char *paths[] = {pod_file};
    ks_cluster *c = ks_cli_live_cluster(&l, paths, 1, "test");
    assert_non_null(c);
    assert_int_equal(c->nodes.n, 0);
    assert_int_equal(c->pods.n, 1);
    ks_cluster_free(c);
    ks_cli_live_free(&l);
    /* a drain of a node that is not there */
    char *drain[] = {"x", "--drain", "nowhere"};
    assert_int_equal(parse(&l, 3, drain, &err), 1);
    assert_null(ks_cli_live_cluster(&l, paths, 1, "test"));
    ks_cli_live_free(&l);
}

static void test_unreachable(void **st) {
    ks_cli_live l = {.kubeconfig = "/nonexistent/kubeconfig"};
    assert_null(ks_cli_live_cluster(&l, NULL, 0, "test"));
}

int main(void) {
    ks_log_set_output(fopen("/dev/null", "w"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test_setup_teardown(test_live_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_files_with_whatifs, setup, teardown),
        cmocka_unit_test(test_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
