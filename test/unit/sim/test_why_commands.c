/* why_pod_command: the kubectl command printed for a pod change, by where
 * the pod comes from (docs/why.md "How the changes are made"). */
#include "api/cluster.h"
#include "codec/decode.h"
#include "sim/why_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define OWNED(kind, name) \
    ", ownerReferences: [{apiVersion: apps/v1, kind: " kind ", name: " name ", uid: u-" name ", controller: true}]"
#define POD(name, meta) \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default" meta "}\n" \
    "spec: {nodeSelector: {disk: nvme}, containers: [{name: c, image: x}]}\n---\n"
#define TEMPLATE "template: {metadata: {labels: {app: a}}, spec: {nodeSelector: {disk: nvme}, containers: [{name: c, image: x}]}}"

static const char *const cluster_yaml =
    POD("solo", "")
    POD("web-abc12-x1", ", labels: {pod-template-hash: abc12}" OWNED("ReplicaSet", "web-abc12"))
    POD("plain-x1", OWNED("ReplicaSet", "plain"))
    POD("ds-x1", OWNED("DaemonSet", "ds"))
    POD("dsr-x1", OWNED("DaemonSet", "dsr"))
    POD("db-0", OWNED("StatefulSet", "db"))
    POD("job-x1", OWNED("Job", "job"))
    POD("nightly-29000000-x1", OWNED("Job", "nightly-29000000"))
    "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, namespace: default, uid: u-ds}\n"
    "spec: {updateStrategy: {type: OnDelete}, selector: {matchLabels: {app: a}}, " TEMPLATE "}\n---\n"
    "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: dsr, namespace: default, uid: u-dsr}\n"
    "spec: {selector: {matchLabels: {app: a}}, " TEMPLATE "}\n---\n"
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: job, namespace: default, uid: u-job}\n"
    "spec: {" TEMPLATE "}\n---\n"
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly-29000000, namespace: default, uid: u-n, "
    "ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, uid: u-c, controller: true}]}\n"
    "spec: {" TEMPLATE "}\n";

static int setup(void **state) {
    ks_cluster *c = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    char *err = NULL;
    assert_true(ks_load_buffer(c, "cluster.yaml", cluster_yaml, strlen(cluster_yaml), &e));
    assert_true(ks_cluster_admit(c, &err));
    ks_errors_free(&e);
    *state = c;
    return 0;
}

static int teardown(void **state) {
    ks_cluster_free(*state);
    return 0;
}

static const char *const drop = "[{\"op\":\"remove\",\"path\":\"/spec/nodeSelector/disk\"}]";
static const char *const drop_in_template = "'[{\"op\":\"remove\",\"path\":\"/spec/template/spec/nodeSelector/disk\"}]'";

static char *command(void **state, ks_why_change_kind kind, const char *pod, const char *patch) {
    ks_why_change c = {.kind = kind, .object = "Pod", .ns = "default", .name = (char *)pod, .patch = (char *)patch};
    return why_pod_command(*state, &c);
}

static void expect(void **state, const char *pod, const char *want) {
    char *got = command(state, KS_WHY_DROP_SELECTOR, pod, drop);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* Gates and tolerations change in place, whoever owns the pod. */
static void test_in_place(void **state) {
    char *got = command(state, KS_WHY_REMOVE_GATES, "web-abc12-x1", "[{\"op\":\"remove\",\"path\":\"/spec/schedulingGates\"}]");
    assert_string_equal(got, "kubectl patch pod web-abc12-x1 -n default --type=json -p "
                             "'[{\"op\":\"remove\",\"path\":\"/spec/schedulingGates\"}]'");
    free(got);
}

/* A pod of its own is replaced by the changed pod. */
static void test_bare_pod_replaced(void **state) {
    char want[512];
    snprintf(want, sizeof(want),
             "kubectl get pod solo -n default -o json | kubectl patch --local -f - --type=json -p '%s' -o json"
             " | kubectl replace --force -f -",
             drop);
    expect(state, "solo", want);
}

/* A ReplicaSet named <name>-<its pods' pod-template-hash> is a
 * Deployment's; one without the hash is changed and its pod deleted. */
static void test_replicasets(void **state) {
    char want[512];
    snprintf(want, sizeof(want), "kubectl patch deployment web -n default --type=json -p %s", drop_in_template);
    expect(state, "web-abc12-x1", want);
    snprintf(want, sizeof(want),
             "kubectl patch replicaset plain -n default --type=json -p %s && kubectl delete pod plain-x1 -n default",
             drop_in_template);
    expect(state, "plain-x1", want);
    snprintf(want, sizeof(want),
             "kubectl patch statefulset db -n default --type=json -p %s && kubectl delete pod db-0 -n default",
             drop_in_template);
    expect(state, "db-0", want);
}

/* An OnDelete DaemonSet needs the pod deleted, a RollingUpdate one does
 * not; a patch the template does not take gets no command. */
static void test_daemonsets(void **state) {
    char want[512];
    snprintf(want, sizeof(want),
             "kubectl patch daemonset ds -n default --type=json -p %s && kubectl delete pod ds-x1 -n default",
             drop_in_template);
    expect(state, "ds-x1", want);
    snprintf(want, sizeof(want), "kubectl patch daemonset dsr -n default --type=json -p %s", drop_in_template);
    expect(state, "dsr-x1", want);
    assert_null(command(state, KS_WHY_DROP_TERM, "ds-x1", "[{\"op\":\"remove\",\"path\":\"/spec/affinity\"}]"));
}

/* A Job's template is immutable; a CronJob's Job changes through the
 * CronJob's jobTemplate. */
static void test_jobs(void **state) {
    expect(state, "job-x1", NULL);
    char want[512];
    snprintf(want, sizeof(want),
             "kubectl patch cronjob nightly -n default --type=json -p "
             "'[{\"op\":\"remove\",\"path\":\"/spec/jobTemplate/spec/template/spec/nodeSelector/disk\"}]'");
    expect(state, "nightly-29000000-x1", want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_place),    cmocka_unit_test(test_bare_pod_replaced), cmocka_unit_test(test_replicasets),
        cmocka_unit_test(test_daemonsets), cmocka_unit_test(test_jobs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
