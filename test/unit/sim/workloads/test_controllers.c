/* The objects the workload controllers create (src/sim/workloads): names,
 * labels, owner references, DaemonSet targeting, Job indexes, StatefulSet
 * claims and OrderedReady, and workloads already running being scaled.
 * Cases follow kube-controller-manager's own tests where they exist:
 * daemon_controller_test.go TestNodeShouldRunDaemonPod,
 * daemonset_util_test.go TestReplaceDaemonSetPodNodeNameNodeAffinity,
 * stateful_set_utils_test.go TestGetPersistentVolumeClaims,
 * job_controller_test.go (Indexed pods' names and hostnames),
 * cronjob utils_test.go (the Job's name from the scheduled time). */
#include "api/cluster.h"
#include "codec/decode.h"
#include "sim/workloads/workloads.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE(name, extra)                                                                                         \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {kubernetes.io/hostname: " name "}}\n" extra \
    "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n"

typedef struct {
    ks_cluster *c;
    ks_wl_generated gen;
} world;

static world expand(const char *yaml, uint64_t seed) {
    world w = {.c = ks_cluster_new()};
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = ks_load_buffer(w.c, "in.yaml", yaml, strlen(yaml), &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_true(ok);
    char *err = NULL;
    assert_true(ks_cluster_admit(w.c, &err));
    ks_wl_options o = {.seed = seed, .now = 1764147600}; /* 2025-11-26T09:00:00Z */
    ok = ks_workloads_expand(w.c, &o, &w.gen, &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_true(ok);
    ks_errors_free(&errs);
    return w;
}

static void done(world *w) {
    ks_wl_generated_free(&w->gen);
    ks_cluster_free(w->c);
}

static const char *label(const ks_labels *l, const char *key) {
    ks_id v;
    return ks_labels_get(l, ks_intern(key), &v) ? ks_str(v) : NULL;
}

static const char *text(const ks_tree *t, const char *a, const char *b, const char *c) {
    t = kt_get(t, a);
    if (b) t = kt_get(t, b);
    if (c) t = kt_get(t, c);
    return t && t->type == KT_STRING ? t->text : NULL;
}

static uint32_t pods_with_prefix(const ks_cluster *c, const char *prefix, const ks_pod **out, uint32_t max) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (strncmp(ks_str(c->pods.v[i]->name), prefix, strlen(prefix)) == 0) {
            if (n < max) out[n] = c->pods.v[i];
            n++;
        }
    return n;
}

static const ks_workload *workload(const ks_cluster *c, ks_workload_kind kind, const char *name) {
    for (uint32_t i = 0; i < c->workloads.n; i++)
        if (c->workloads.v[i]->kind == kind && strcmp(ks_str(c->workloads.v[i]->name), name) == 0)
            return c->workloads.v[i];
    return NULL;
}

static const char *DEPLOY =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, uid: d-uid}\n"
    "spec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n"
    "  template:\n    metadata: {labels: {app: web}}\n"
    "    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n"
    "        resources: {requests: {cpu: '1', memory: 512Mi}}\n";

/* The ReplicaSet is <name>-<pod-template-hash> (8668b7d879 is what
 * controller.ComputeHash gives for this template: test_template_hash),
 * owned by the Deployment; its pods are <rs>-<5 random>, labelled with
 * the hash, owned by it. */
static void deployment(void **st) {
    (void)st;
    world w = expand(DEPLOY, 1);
    const ks_workload *rs = workload(w.c, KS_WORKLOAD_REPLICASET, "web-8668b7d879");
    assert_non_null(rs);
    assert_int_equal(rs->owner_kind, ks_intern("Deployment"));
    assert_string_equal(ks_str(rs->owner_name), "web");
    assert_string_equal(text(rs->tree, "metadata", "labels", "pod-template-hash"), "8668b7d879");
    assert_string_equal(text(rs->tree, "metadata", "annotations", "deployment.kubernetes.io/revision"), "1");
    assert_string_equal(text(rs->tree, "metadata", "annotations", "deployment.kubernetes.io/max-replicas"), "4");
    assert_string_equal(text(kt_get(rs->tree, "spec"), "selector", "matchLabels", "pod-template-hash"), "8668b7d879");
    const ks_pod *p[8];
    assert_int_equal(pods_with_prefix(w.c, "web-8668b7d879-", p, 8), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(strlen(ks_str(p[i]->name)), strlen("web-8668b7d879-") + 5);
        assert_string_equal(label(&p[i]->labels, "pod-template-hash"), "8668b7d879");
        assert_string_equal(label(&p[i]->labels, "app"), "web");
        const ks_owner_ref *r = ks_pod_controller(p[i]);
        assert_non_null(r);
        assert_string_equal(ks_str(r->kind), "ReplicaSet");
        assert_string_equal(r->name, "web-8668b7d879");
        assert_string_equal(r->uid, rs->uid);
        assert_int_equal(p[i]->requests.milli_cpu, 1000);
        assert_string_equal(ks_str(p[i]->scheduler_name), "default-scheduler");
        assert_string_equal(text(p[i]->tree, "spec", "dnsPolicy", NULL), "ClusterFirst");
        assert_ptr_equal(ks_workload_of_pod(w.c, p[i]), workload(w.c, KS_WORKLOAD_DEPLOYMENT, "web"));
        for (int j = 0; j < i; j++) assert_string_not_equal(ks_str(p[i]->name), ks_str(p[j]->name));
    }
    assert_int_equal(workload(w.c, KS_WORKLOAD_DEPLOYMENT, "web")->desired, 3);
    /* the same seed gives the same names, another seed others */
    char first[64];
    snprintf(first, sizeof(first), "%s", ks_str(p[0]->name));
    done(&w);
    w = expand(DEPLOY, 1);
    pods_with_prefix(w.c, "web-8668b7d879-", p, 8);
    assert_string_equal(ks_str(p[0]->name), first);
    done(&w);
    w = expand(DEPLOY, 2);
    pods_with_prefix(w.c, "web-8668b7d879-", p, 8);
    assert_string_not_equal(ks_str(p[0]->name), first);
    done(&w);
}

/* A Deployment whose ReplicaSet and pods run already is scaled, not
 * created twice. */
static void deployment_scaled(void **st) {
    (void)st;
    char buf[8192];
    snprintf(buf, sizeof(buf),
             "%s---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-8668b7d879\n  namespace: shop\n"
             "  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}]\n"
             "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n"
             "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx:1.27}]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web-8668b7d879-aaaaa\n  namespace: shop\n"
             "  labels: {app: web}\n"
             "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-8668b7d879, uid: x, controller: true}]\n"
             "spec: {nodeName: n1, containers: [{name: web, image: nginx:1.27}]}\n",
             DEPLOY);
    world w = expand(buf, 1);
    const ks_pod *p[8];
    assert_int_equal(pods_with_prefix(w.c, "web-8668b7d879-", p, 8), 3); /* 1 running + 2 new */
    assert_int_equal(w.gen.npods, 2);
    assert_int_equal(w.gen.workloads.n, 0); /* its ReplicaSet exists */
    done(&w);
}

/* ReplicaSet and ReplicationController: replicas default to 1; a name too
 * long for a suffix is cut to 58 characters before the 5 random ones. */
static void replicaset_names(void **st) {
    (void)st;
    world w = expand("apiVersion: v1\nkind: ReplicationController\n"
                     "metadata: {name: a-very-long-replication-controller-name-that-goes-on-and-on-and-on}\n"
                     "spec:\n  selector: {app: x}\n  template:\n    metadata: {labels: {app: x}}\n"
                     "    spec: {containers: [{name: c, image: i}]}\n",
                     1);
    assert_int_equal(w.c->pods.n, 1);
    const ks_pod *p = w.c->pods.v[0];
    assert_int_equal(strlen(ks_str(p->name)), 63);
    assert_int_equal(strncmp(ks_str(p->name), "a-very-long-replication-controller-name-that-goes-on-and-o", 58), 0);
    assert_string_equal(text(p->tree, "metadata", "generateName", NULL),
                        "a-very-long-replication-controller-name-that-goes-on-and-on-and-on-");
    assert_string_equal(ks_str(ks_pod_controller(p)->kind), "ReplicationController");
    assert_string_equal(ks_pod_controller(p)->api_version, "v1");
    done(&w);
}

static const char *STS =
    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\n"
    "spec:\n  serviceName: db-headless\n  replicas: 3\n%s"
    "  selector: {matchLabels: {app: db, tier: data}}\n"
    "  template:\n    metadata: {labels: {app: db, tier: data}}\n"
    "    spec:\n      containers: [{name: db, image: postgres}]\n"
    "      volumes: [{name: data, emptyDir: {}}, {name: scratch, emptyDir: {}}]\n"
    "  volumeClaimTemplates:\n  - metadata: {name: data, labels: {kind: pgdata}}\n"
    "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";

/* Pods <set>-<ordinal> with the controller's labels, hostname and
 * subdomain; claims <template>-<set>-<ordinal> labelled with the
 * template's and the selector's labels (TestGetPersistentVolumeClaims);
 * the claim replaces the template's volume of the same name.
 * OrderedReady: only ordinal 0 now, the rest held in order. */
static void statefulset(void **st) {
    (void)st;
    char buf[4096];
    snprintf(buf, sizeof(buf), STS, "");
    world w = expand(buf, 1);
    const ks_pod *p[4];
    assert_int_equal(pods_with_prefix(w.c, "db-", p, 4), 1);
    assert_string_equal(ks_str(p[0]->name), "db-0");
    assert_string_equal(label(&p[0]->labels, "statefulset.kubernetes.io/pod-name"), "db-0");
    assert_string_equal(label(&p[0]->labels, "apps.kubernetes.io/pod-index"), "0");
    assert_int_equal(strncmp(label(&p[0]->labels, "controller-revision-hash"), "db-", 3), 0);
    assert_string_equal(text(p[0]->tree, "spec", "hostname", NULL), "db-0");
    assert_string_equal(text(p[0]->tree, "spec", "subdomain", NULL), "db-headless");
    const ks_tree *vols = kt_get(kt_get(p[0]->tree, "spec"), "volumes");
    assert_int_equal(vols->n, 2);
    assert_string_equal(text(vols->items[0], "persistentVolumeClaim", "claimName", NULL), "data-db-0");
    assert_string_equal(text(vols->items[1], "name", NULL, NULL), "scratch");
    assert_int_equal(w.gen.pvcs.n, 3);
    const ks_pvc *pvc = w.gen.pvcs.v[1];
    assert_string_equal(ks_str(pvc->name), "data-db-1");
    assert_string_equal(text(pvc->tree, "metadata", "labels", "kind"), "pgdata");
    assert_string_equal(text(pvc->tree, "metadata", "labels", "app"), "db");
    assert_string_equal(text(pvc->tree, "metadata", "labels", "tier"), "data");
    assert_int_equal(ks_wl_held_count(w.gen.held), 2);
    const ks_pod *held[4];
    assert_int_equal(ks_wl_held_list(w.gen.held, held, 4), 2);
    assert_string_equal(ks_str(held[0]->name), "db-1");
    assert_string_equal(ks_str(held[1]->name), "db-2");
    done(&w);

    /* Parallel: all at once; ordinals.start shifts the names */
    snprintf(buf, sizeof(buf), STS, "  podManagementPolicy: Parallel\n  ordinals: {start: 5}\n");
    w = expand(buf, 1);
    assert_int_equal(pods_with_prefix(w.c, "db-", p, 4), 3);
    assert_string_equal(ks_str(p[0]->name), "db-5");
    assert_string_equal(ks_str(p[2]->name), "db-7");
    assert_int_equal(ks_wl_held_count(w.gen.held), 0);
    done(&w);
}

static const char *DS = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\n"
                        "spec:\n  selector: {matchLabels: {app: agent}}\n"
                        "  template:\n    metadata: {labels: {app: agent}}\n"
                        "    spec:\n%s      containers: [{name: a, image: agent:1}]\n";

static bool has_pod_for(const ks_cluster *c, const char *node) {
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (!p->has_required_node_affinity || strncmp(ks_str(p->name), "agent-", 6) != 0) continue;
        const ks_node_selector_term *t = &p->required_node_affinity.terms[0];
        if (t->nfields && strcmp(ks_str(t->fields[0].values[0]), node) == 0) return true;
    }
    return false;
}

/* TestNodeShouldRunDaemonPod: a node whose NoSchedule or NoExecute taint
 * the pod does not tolerate gets none; the tolerations the controller
 * adds (unschedulable, pressure, not-ready/unreachable NoExecute) let it
 * onto cordoned and pressured nodes; node selector and nodeName narrow;
 * PreferNoSchedule does not stop it. */
static void daemonset_targets(void **st) {
    (void)st;
    char buf[8192];
    char ds[1024];
    snprintf(ds, sizeof(ds), DS, "      nodeSelector: {pool: general}\n");
    snprintf(buf, sizeof(buf), "%s%s%s%s%s%s%s%s",
             NODE("plain", "") /* no pool label */,
             "apiVersion: v1\nkind: Node\nmetadata: {name: ok, labels: {pool: general}}\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             "apiVersion: v1\nkind: Node\nmetadata: {name: cordoned, labels: {pool: general}}\n"
             "spec:\n  unschedulable: true\n  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             "apiVersion: v1\nkind: Node\nmetadata: {name: pressure, labels: {pool: general}}\n"
             "spec:\n  taints: [{key: node.kubernetes.io/memory-pressure, effect: NoSchedule},"
             " {key: node.kubernetes.io/not-ready, effect: NoExecute}]\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             "apiVersion: v1\nkind: Node\nmetadata: {name: gpu, labels: {pool: general}}\n"
             "spec:\n  taints: [{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             "apiVersion: v1\nkind: Node\nmetadata: {name: evicting, labels: {pool: general}}\n"
             "spec:\n  taints: [{key: maintenance, effect: NoExecute}]\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             "apiVersion: v1\nkind: Node\nmetadata: {name: prefer, labels: {pool: general}}\n"
             "spec:\n  taints: [{key: spot, effect: PreferNoSchedule},"
             " {key: node.kubernetes.io/network-unavailable, effect: NoSchedule}]\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             ds);
    world w = expand(buf, 1);
    assert_false(has_pod_for(w.c, "plain"));
    assert_true(has_pod_for(w.c, "ok"));
    assert_true(has_pod_for(w.c, "cordoned"));
    assert_true(has_pod_for(w.c, "pressure"));
    assert_false(has_pod_for(w.c, "gpu"));
    assert_false(has_pod_for(w.c, "evicting"));
    assert_false(has_pod_for(w.c, "prefer")); /* network-unavailable: only tolerated with hostNetwork */
    assert_int_equal(workload(w.c, KS_WORKLOAD_DAEMONSET, "agent")->desired, 3);
    done(&w);

    /* hostNetwork adds the network-unavailable toleration */
    snprintf(ds, sizeof(ds), DS, "      hostNetwork: true\n");
    snprintf(buf, sizeof(buf), "%s%s",
             "apiVersion: v1\nkind: Node\nmetadata: {name: prefer}\n"
             "spec:\n  taints: [{key: node.kubernetes.io/network-unavailable, effect: NoSchedule}]\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             ds);
    w = expand(buf, 1);
    assert_true(has_pod_for(w.c, "prefer"));
    const ks_pod *p = w.c->pods.v[0];
    assert_int_equal(p->ntolerations, 7);
    assert_string_equal(label(&p->labels, "pod-template-generation"), "1");
    assert_non_null(label(&p->labels, "controller-revision-hash"));
    done(&w);
}

/* TestReplaceDaemonSetPodNodeNameNodeAffinity: the template's required
 * terms (already used for targeting) give way to the one matchFields
 * term; preferred terms stay. */
static void daemonset_affinity_replaced(void **st) {
    (void)st;
    char ds[2048], buf[4096];
    snprintf(ds, sizeof(ds), DS,
             "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
             "            nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]\n"
             "          preferredDuringSchedulingIgnoredDuringExecution:\n"
             "          - {weight: 1, preference: {matchExpressions: [{key: ssd, operator: Exists}]}}\n");
    snprintf(buf, sizeof(buf), "%s%s%s",
             "apiVersion: v1\nkind: Node\nmetadata: {name: in-a, labels: {zone: a}}\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             "apiVersion: v1\nkind: Node\nmetadata: {name: in-b, labels: {zone: b}}\n"
             "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n",
             ds);
    world w = expand(buf, 1);
    assert_true(has_pod_for(w.c, "in-a"));
    assert_false(has_pod_for(w.c, "in-b"));
    const ks_pod *p = w.c->pods.v[w.c->pods.n - 1];
    assert_int_equal(p->required_node_affinity.nterms, 1);
    assert_int_equal(p->required_node_affinity.terms[0].nexpr, 0);
    assert_int_equal(p->required_node_affinity.terms[0].nfields, 1);
    const ks_tree *pref = kt_get(kt_get(kt_get(kt_get(p->tree, "spec"), "affinity"), "nodeAffinity"),
                                 "preferredDuringSchedulingIgnoredDuringExecution");
    assert_non_null(pref);
    assert_int_equal(pref->n, 1);
    done(&w);
}

static const char *JOB = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: etl, namespace: batch, uid: job-uid}\n"
                         "spec:\n%s  template:\n    spec:\n      restartPolicy: Never\n"
                         "      containers: [{name: c, image: i}]\n";

/* parallelism pods capped by completions; none when suspended; the
 * selector labels and the tracking finalizer; Indexed: the lowest
 * indexes, <job>-<index>-<random>, hostname <job>-<index>, the index in
 * an annotation, a label and JOB_COMPLETION_INDEX. */
static void job(void **st) {
    (void)st;
    char buf[2048];
    snprintf(buf, sizeof(buf), JOB, "  parallelism: 5\n  completions: 3\n");
    world w = expand(buf, 1);
    const ks_pod *p[8];
    assert_int_equal(pods_with_prefix(w.c, "etl-", p, 8), 3);
    assert_string_equal(label(&p[0]->labels, "batch.kubernetes.io/job-name"), "etl");
    assert_string_equal(label(&p[0]->labels, "job-name"), "etl");
    assert_string_equal(label(&p[0]->labels, "batch.kubernetes.io/controller-uid"), "job-uid");
    assert_string_equal(label(&p[0]->labels, "controller-uid"), "job-uid");
    assert_string_equal(kt_get(kt_get(p[0]->tree, "metadata"), "finalizers")->items[0]->text,
                        "batch.kubernetes.io/job-tracking");
    done(&w);

    /* completions already succeeded are not run again */
    char two[4096];
    snprintf(buf, sizeof(buf), JOB, "  parallelism: 3\n  completions: 3\n");
    snprintf(two, sizeof(two),
             "%s---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: done-1\n  namespace: batch\n"
             "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: etl, uid: job-uid, controller: true}]\n"
             "spec: {nodeName: n1, containers: [{name: c, image: i}]}\nstatus: {phase: Succeeded}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: done-2\n  namespace: batch\n"
             "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: etl, uid: job-uid, controller: true}]\n"
             "spec: {nodeName: n1, containers: [{name: c, image: i}]}\nstatus: {phase: Succeeded}\n",
             buf);
    w = expand(two, 1);
    assert_int_equal(pods_with_prefix(w.c, "etl-", p, 8), 1);
    done(&w);

    snprintf(buf, sizeof(buf), JOB, "  parallelism: 2\n  suspend: true\n");
    w = expand(buf, 1);
    assert_int_equal(pods_with_prefix(w.c, "etl-", p, 8), 0);
    done(&w);

    snprintf(buf, sizeof(buf), JOB, "  parallelism: 2\n  completions: 4\n  completionMode: Indexed\n");
    w = expand(buf, 1);
    assert_int_equal(pods_with_prefix(w.c, "etl-", p, 8), 2);
    for (int i = 0; i < 2; i++) {
        char idx[16], prefix[32], host[32];
        snprintf(idx, sizeof(idx), "%d", i);
        snprintf(prefix, sizeof(prefix), "etl-%d-", i);
        snprintf(host, sizeof(host), "etl-%d", i);
        assert_int_equal(strncmp(ks_str(p[i]->name), prefix, strlen(prefix)), 0);
        assert_int_equal(strlen(ks_str(p[i]->name)), strlen(prefix) + 5);
        assert_string_equal(label(&p[i]->labels, "batch.kubernetes.io/job-completion-index"), idx);
        assert_string_equal(ks_annotations_get(&p[i]->annotations, ks_intern("batch.kubernetes.io/job-completion-index")),
                            idx);
        assert_string_equal(text(p[i]->tree, "spec", "hostname", NULL), host);
        const ks_tree *env = kt_get(kt_get(p[i]->tree, "spec"), "containers")->items[0];
        env = kt_get(env, "env");
        assert_string_equal(text(env->items[0], "name", NULL, NULL), "JOB_COMPLETION_INDEX");
    }
    done(&w);
}

/* The CronJob fires now: Job <name>-<minutes since the epoch> owned by the
 * CronJob, with the scheduled-timestamp annotation, then its pods. */
static void cronjob(void **st) {
    (void)st;
    world w = expand("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: ops}\n"
                     "spec:\n  schedule: '0 2 * * *'\n  jobTemplate:\n    metadata: {labels: {team: ops}}\n"
                     "    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n"
                     "          containers: [{name: c, image: i}]\n",
                     1);
    const ks_workload *j = workload(w.c, KS_WORKLOAD_JOB, "nightly-29402460");
    assert_non_null(j);
    assert_string_equal(ks_str(j->owner_kind), "CronJob");
    assert_string_equal(text(j->tree, "metadata", "labels", "team"), "ops");
    assert_string_equal(text(j->tree, "metadata", "annotations", "batch.kubernetes.io/cronjob-scheduled-timestamp"),
                        "2025-11-26T09:00:00Z");
    const ks_pod *p[2];
    assert_int_equal(pods_with_prefix(w.c, "nightly-29402460-", p, 2), 1);
    assert_ptr_equal(ks_workload_of_pod(w.c, p[0]), workload(w.c, KS_WORKLOAD_CRONJOB, "nightly"));
    done(&w);
}

/* A workload without a template (a stand-in for the spreading plugins)
 * creates nothing; an invalid template is an error naming the workload. */
static void templates(void **st) {
    (void)st;
    world w = expand("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\n"
                     "spec: {selector: {matchLabels: {app: x}}}\n",
                     1);
    assert_int_equal(w.c->pods.n, 0);
    done(&w);
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    const char *y = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\n"
                    "spec:\n  template:\n    spec: {priorityClassName: nope, containers: [{name: c, image: i}]}\n";
    assert_true(ks_load_buffer(c, "bad.yaml", y, strlen(y), &errs));
    ks_wl_options o = {.seed = 1};
    ks_wl_generated gen;
    assert_false(ks_workloads_expand(c, &o, &gen, &errs));
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.v[0], "bad.yaml:1: deployment default/bad: no PriorityClass with name nope was found"));
    assert_int_equal(c->pods.n, 0);
    ks_wl_generated_free(&gen);
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deployment),         cmocka_unit_test(deployment_scaled),
        cmocka_unit_test(replicaset_names),   cmocka_unit_test(statefulset),
        cmocka_unit_test(daemonset_targets),  cmocka_unit_test(daemonset_affinity_replaced),
        cmocka_unit_test(job),                cmocka_unit_test(cronjob),
        cmocka_unit_test(templates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
