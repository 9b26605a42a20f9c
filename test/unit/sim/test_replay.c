/* ksched simulate --replay (the differential harness's event replay):
 * steps read from a file, the queue's moves printed per step. A small
 * sequence whose moves are known: a pod too big for the cluster is
 * rejected by NodeResourcesFit, a taint update requeues it (the taint
 * registration added for plugins registering node adds), a flush after
 * its backoff moves it to activeQ, a node that fits arrives while it is
 * in flight, and it is bound. kschedref --replay prints the same lines
 * for these steps. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "config/config.h"
#include "sim/replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *config_yaml = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                 "kind: KubeSchedulerConfiguration\n";

static const char *cluster_yaml =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '110'}, capacity: {cpu: '2', memory: 4Gi, pods: '110'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '3'}}}]}\n";

#define NODE(name, cpu, taints)                                                                              \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"},\"spec\":{" taints "},"   \
    "\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"4Gi\",\"pods\":\"110\"},"                 \
    "\"capacity\":{\"cpu\":\"" cpu "\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}"

static const char *events =
    "# comment lines and blank lines are skipped\n"
    "{\"op\":\"attempt\"}\n"
    "\n"
    "{\"op\":\"update\",\"object\":" NODE("n1", "2", "\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]") "}\n"
    "{\"op\":\"tick\",\"seconds\":3}\n"
    "{\"op\":\"flush\"}\n"
    "{\"op\":\"attempt\",\"during\":[{\"op\":\"add\",\"object\":" NODE("n2", "4", "") "}]}\n"
    "{\"op\":\"attempt\"}\n"
    "{\"op\":\"delete\",\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"gone\"}\n";

static char *run_replay(const char *steps, bool *ok) {
    ks_config_errors cerrs;
    ks_config_errors_init(&cerrs);
    ks_config *cfg = ks_config_load_buffer("cfg.yaml", config_yaml, strlen(config_yaml), &cerrs);
    assert_non_null(cfg);
    assert_true(ks_config_resolve(cfg, NULL, NULL, &cerrs));
    ks_config_errors_free(&cerrs);
    ks_cluster *cl = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    char *err = NULL;
    assert_true(ks_load_buffer(cl, "cluster.yaml", cluster_yaml, strlen(cluster_yaml), &e));
    assert_true(ks_cluster_admit(cl, &err));
    ks_errors_free(&e);

    char path[] = "/tmp/ksched-test-replay-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, steps, strlen(steps)), (ssize_t)strlen(steps));
    close(fd);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    *ok = ks_replay_run(out, cl, cfg, ks_default_registry(), path, &err);
    fclose(out);
    unlink(path);
    if (!*ok) {
        free(buf);
        buf = err;
    } else {
        free(err);
    }
    ks_cluster_free(cl);
    ks_config_free(cfg);
    return buf;
}

/* The n-th line of s (0-based), copied. */
static char *line_of(const char *s, int n) {
    for (int i = 0; i < n && s; i++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    assert_non_null(s);
    const char *e = strchr(s, '\n');
    return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

static void expect_line(const char *out, int n, const char *want) {
    char *l = line_of(out, n);
    if (strcmp(l, want) != 0) fail_msg("line %d:\n  got  %s\n  want %s", n, l, want);
    free(l);
}

static void test_replay_moves(void **state) {
    bool ok;
    char *out = run_replay(events, &ok);
    if (!ok) fail_msg("replay failed: %s", out);
    expect_line(out, 0, "{\"format\":\"ksched-replay/v1\"}");
    expect_line(out, 1,
                "{\"step\":1,\"op\":\"attempt\",\"pod\":\"default/big\",\"result\":\"Unschedulable\","
                "\"unschedulable\":[\"NodeResourcesFit\"],\"moves\":[[\"default/big\",\"active\",\"unschedulable\"]]}");
    /* NodeResourcesFit registered node adds, not taint updates: it was
     * given them, with no hint of its own; the pod is backing off (1 s) */
    expect_line(out, 2,
                "{\"step\":2,\"op\":\"update\",\"object\":\"Node n1\","
                "\"moves\":[[\"default/big\",\"unschedulable\",\"backoff\"]]}");
    expect_line(out, 3, "{\"step\":3,\"op\":\"tick\",\"moves\":[]}");
    expect_line(out, 4, "{\"step\":4,\"op\":\"flush\",\"moves\":[[\"default/big\",\"backoff\",\"active\"]]}");
    /* n1 is tainted now (its first failing Filter is TaintToleration);
     * n2 arrives while the pod is in flight: it comes back by that event
     * (in flight), to backoffQ (2 s) */
    expect_line(out, 5,
                "{\"step\":5,\"op\":\"attempt\",\"pod\":\"default/big\",\"result\":\"Unschedulable\","
                "\"unschedulable\":[\"TaintToleration\"],"
                "\"moves\":[[\"default/big\",\"active\",\"backoff\"]]}");
    expect_line(out, 6,
                "{\"step\":6,\"op\":\"attempt\",\"pod\":\"default/big\",\"result\":\"Scheduled\",\"node\":\"n2\","
                "\"moves\":[[\"default/big\",\"backoff\",\"\"]]}");
    /* a pod that is not there: no change */
    expect_line(out, 7, "{\"step\":7,\"op\":\"delete\",\"object\":\"Pod default/gone\",\"moves\":[]}");
    free(out);
}

static void test_replay_bad_steps(void **state) {
    bool ok;
    char *err = run_replay("{\"op\":\"jump\"}\n", &ok);
    assert_false(ok);
    assert_non_null(strstr(err, "unknown op \"jump\""));
    free(err);
    err = run_replay("{\"op\":\"update\",\"object\":" NODE("n9", "2", "") "}\n", &ok);
    assert_false(ok);
    assert_non_null(strstr(err, "update of node n9"));
    free(err);
    err = run_replay("{\"op\":\"delete\",\"kind\":\"Secret\",\"name\":\"s\"}\n", &ok);
    assert_false(ok);
    assert_non_null(strstr(err, "kind Secret is not replayed"));
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_moves),
        cmocka_unit_test(test_replay_bad_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
