/* Rollouts of a changed DaemonSet or StatefulSet template over running
 * pods (src/sim/workloads/rollout.c), one controller sync per ks_wl_step,
 * with pods made ready by hand between syncs as the controllers' own
 * tests do. The create/delete counts per sync are those of
 * pkg/controller/daemon/update_test.go (TestDaemonSetUpdatesPods,
 * TestDaemonSetUpdatesPodsWithMaxSurge, TestDaemonSetUpdatesWhenNewPodIsNotReady,
 * TestDaemonSetUpdatesAllOldPodsNotReady) and of
 * pkg/controller/statefulset/stateful_set_control_test.go's rolling
 * update with a partition (ordinals replaced from the highest down, one
 * at a time, those below the partition kept). */
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

/* The cluster as the fake ops see it: pods alive, and which are ready. */
#define MAXP 64
typedef struct fake {
    const ks_pod *live[MAXP];
    bool ready[MAXP];
    uint32_t n, created, deleted;
    ks_pod *owned[MAXP]; /* references handed over by create */
    uint32_t nowned;
} fake;

static int find(const fake *f, const ks_pod *p) {
    for (uint32_t i = 0; i < f->n; i++)
        if (f->live[i]->key == p->key) return (int)i;
    return -1;
}

static bool is_bound(void *ctx, const ks_pod *p) {
    const fake *f = ctx;
    int i = find(f, p);
    return i >= 0 && f->ready[i];
}

static void create(void *ctx, ks_pod *p) {
    fake *f = ctx;
    assert_true(find(f, p) < 0);
    f->live[f->n] = p;
    f->ready[f->n++] = false;
    f->owned[f->nowned++] = p;
    f->created++;
}

static void removed(void *ctx, const ks_pod *p) {
    fake *f = ctx;
    int i = find(f, p);
    assert_true(i >= 0);
    assert_ptr_equal(f->live[i], p);
    f->live[i] = f->live[f->n - 1];
    f->ready[i] = f->ready[f->n - 1];
    f->n--;
    f->deleted++;
}

static void mark_ready(fake *f) {
    for (uint32_t i = 0; i < f->n; i++) f->ready[i] = true;
}

typedef struct world {
    ks_cluster *c;
    ks_wl_generated gen;
    fake f;
    ks_wl_step_ops ops;
} world;

/* Load nodes + running pods + the changed workload; the pods of the
 * cluster (running, bound) start alive and ready. */
static void load(world *w, const char *yaml) {
    memset(w, 0, sizeof(*w));
    w->c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = ks_load_buffer(w->c, "in.yaml", yaml, strlen(yaml), &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_true(ok);
    char *err = NULL;
    assert_true(ks_cluster_admit(w->c, &err));
    ks_wl_options o = {.seed = 1, .now = 1764147600};
    assert_true(ks_workloads_expand(w->c, &o, &w->gen, &errs));
    ks_errors_free(&errs);
    for (uint32_t i = 0; i < w->c->pods.n; i++) {
        w->f.live[w->f.n] = w->c->pods.v[i];
        w->f.ready[w->f.n++] = w->c->pods.v[i]->node_name != 0;
    }
    w->ops = (ks_wl_step_ops){.ctx = &w->f, .is_bound = is_bound, .create = create, .remove = removed};
}

static void done(world *w) {
    for (uint32_t i = 0; i < w->f.nowned; i++) ks_pod_unref(w->f.owned[i]);
    ks_wl_generated_free(&w->gen);
    ks_cluster_free(w->c);
}

/* One sync: want `creates` pods created and `deletes` deleted. */
static void sync_expect(world *w, uint32_t creates, uint32_t deletes) {
    uint32_t c0 = w->f.created, d0 = w->f.deleted;
    ks_wl_step(w->gen.held, &w->ops);
    assert_int_equal(w->f.created - c0, creates);
    assert_int_equal(w->f.deleted - d0, deletes);
}

static char *cluster_with_daemon_pods(int nodes, const char *strategy, const char *old_phase_ready) {
    static char buf[16384];
    size_t n = 0;
    for (int i = 0; i < nodes; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "apiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: {kubernetes.io/hostname: n%d}}\n"
                              "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n"
                              "apiVersion: v1\nkind: Pod\nmetadata:\n  name: foo-old%d\n  namespace: default\n"
                              "  labels: {app: foo, controller-revision-hash: oldhash}\n"
                              "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: foo, uid: ds1, "
                              "controller: true}]\n"
                              "spec:\n  %s: n%d\n  containers: [{name: c, image: foo/bar}]\n---\n",
                              i, i, i, old_phase_ready, i);
    snprintf(buf + n, sizeof(buf) - n,
             "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: foo, namespace: default, uid: ds1}\n"
             "spec:\n  selector: {matchLabels: {app: foo}}\n%s"
             "  template:\n    metadata: {labels: {app: foo}}\n"
             "    spec: {containers: [{name: c, image: foo2/bar2}]}\n",
             strategy);
    return buf;
}

/* TestDaemonSetUpdatesPods: 5 nodes, maxUnavailable 2: delete 2, create
 * their replacements, wait for them, and so on; nothing once all are new. */
static void daemon_max_unavailable(void **st) {
    (void)st;
    world w;
    load(&w, cluster_with_daemon_pods(5, "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}\n",
                                      "nodeName"));
    sync_expect(&w, 0, 2);
    sync_expect(&w, 2, 0);
    sync_expect(&w, 0, 0); /* the new pods are not ready yet */
    mark_ready(&w.f);
    sync_expect(&w, 0, 2);
    sync_expect(&w, 2, 0);
    mark_ready(&w.f);
    sync_expect(&w, 0, 1);
    sync_expect(&w, 1, 0);
    mark_ready(&w.f);
    sync_expect(&w, 0, 0);
    assert_int_equal(w.f.n, 5);
    done(&w);
}

/* TestDaemonSetUpdatesPodsWithMaxSurge: maxSurge 2: 2 new pods beside old
 * ones; once ready, their old pods go and 2 more surge. */
static void daemon_max_surge(void **st) {
    (void)st;
    world w;
    load(&w, cluster_with_daemon_pods(
                 5, "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 2, maxUnavailable: 0}}\n",
                 "nodeName"));
    sync_expect(&w, 2, 0);
    sync_expect(&w, 0, 0);
    mark_ready(&w.f);
    sync_expect(&w, 2, 2);
    sync_expect(&w, 0, 0);
    mark_ready(&w.f);
    sync_expect(&w, 1, 2);
    sync_expect(&w, 0, 0);
    mark_ready(&w.f);
    sync_expect(&w, 0, 1);
    sync_expect(&w, 0, 0);
    done(&w);
}

/* TestDaemonSetUpdatesWhenNewPodIsNotReady: maxUnavailable 3 of 5; the
 * new pods never become ready: the update stops after the first 3. */
static void daemon_new_not_ready(void **st) {
    (void)st;
    world w;
    load(&w, cluster_with_daemon_pods(5, "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 3}}\n",
                                      "nodeName"));
    sync_expect(&w, 0, 3);
    sync_expect(&w, 3, 0);
    sync_expect(&w, 0, 0);
    sync_expect(&w, 0, 0);
    ks_wl_rollout_state rs;
    const ks_workload *ds = NULL;
    for (uint32_t i = 0; i < w.c->workloads.n; i++)
        if (w.c->workloads.v[i]->kind == KS_WORKLOAD_DAEMONSET) ds = w.c->workloads.v[i];
    assert_true(ks_wl_rollout_state_of(w.gen.held, ds, w.c, is_bound, &w.f, &rs));
    assert_string_equal(rs.strategy, "RollingUpdate");
    assert_int_equal(rs.total, 5);
    assert_int_equal(rs.created, 3);
    assert_int_equal(rs.bound, 0);
    assert_int_equal(rs.old_left, 2);
    done(&w);
}

/* TestDaemonSetUpdatesAllOldPodsNotReady: old pods not running are all
 * replaced at once, whatever maxUnavailable says. */
static void daemon_old_not_ready(void **st) {
    (void)st;
    world w;
    load(&w, cluster_with_daemon_pods(5, "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 3}}\n",
                                      "nodeName"));
    /* bound but not ready, as the upstream test's pods */
    for (uint32_t i = 0; i < w.f.n; i++) w.f.ready[i] = false;
    sync_expect(&w, 0, 5);
    sync_expect(&w, 5, 0);
    done(&w);
}

/* OnDelete: no running pod is replaced; only a node the set no longer
 * selects loses its pod (the manage loop), whatever the strategy. */
static void daemon_on_delete(void **st) {
    (void)st;
    world w;
    char *y = cluster_with_daemon_pods(3, "  updateStrategy: {type: OnDelete}\n", "nodeName");
    /* select only n1 */
    char *at = strstr(y, "    spec: {containers:");
    assert_non_null(at);
    char tail[512];
    snprintf(tail, sizeof(tail), "    spec: {nodeSelector: {kubernetes.io/hostname: n1}, containers: [{name: c, image: foo2/bar2}]}\n");
    strcpy(at, tail);
    load(&w, y);
    sync_expect(&w, 0, 2);
    sync_expect(&w, 0, 0);
    assert_int_equal(w.f.n, 1);
    assert_string_equal(ks_str(w.f.live[0]->name), "foo-old1");
    done(&w);
}

static const char *STS_PODS =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n0, labels: {kubernetes.io/hostname: n0}}\n"
    "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-0\n  namespace: default\n"
    "  labels: {app: web, controller-revision-hash: web-old}\n"
    "  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: s1, controller: true}]\n"
    "spec: {nodeName: n0, containers: [{name: c, image: nginx:1}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: default\n"
    "  labels: {app: web, controller-revision-hash: web-old}\n"
    "  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: s1, controller: true}]\n"
    "spec: {nodeName: n0, containers: [{name: c, image: nginx:1}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-2\n  namespace: default\n"
    "  labels: {app: web, controller-revision-hash: web-old}\n"
    "  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: s1, controller: true}]\n"
    "spec: {nodeName: n0, containers: [{name: c, image: nginx:1}]}\n---\n";

static char *sts(const char *extra) {
    static char buf[8192];
    snprintf(buf, sizeof(buf),
             "%sapiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: default, uid: s1}\n"
             "spec:\n  replicas: %s\n  serviceName: web\n  selector: {matchLabels: {app: web}}\n%s"
             "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx:2}]}\n",
             STS_PODS, strstr(extra, "replicas4") ? "4" : "3", strstr(extra, "replicas4") ? "" : extra);
    return buf;
}

static const char *live_revision(const fake *f, const char *name) {
    for (uint32_t i = 0; i < f->n; i++)
        if (strcmp(ks_str(f->live[i]->name), name) == 0) {
            ks_id v;
            return ks_labels_get(&f->live[i]->labels, ks_intern("controller-revision-hash"), &v) ? ks_str(v) : "";
        }
    return NULL;
}

/* RollingUpdate with partition 1: web-2 deleted, recreated at the new
 * revision, ready; then web-1; web-0 keeps the old revision. */
static void statefulset_partition(void **st) {
    (void)st;
    world w;
    load(&w, sts("  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}\n"));
    sync_expect(&w, 0, 1);
    assert_null(live_revision(&w.f, "web-2"));
    sync_expect(&w, 1, 0);
    const char *rev = live_revision(&w.f, "web-2");
    assert_non_null(rev);
    assert_string_not_equal(rev, "web-old");
    sync_expect(&w, 0, 0); /* web-2 not ready: wait */
    mark_ready(&w.f);
    sync_expect(&w, 0, 1);
    sync_expect(&w, 1, 0);
    mark_ready(&w.f);
    sync_expect(&w, 0, 0);
    assert_string_equal(live_revision(&w.f, "web-0"), "web-old");
    assert_string_equal(live_revision(&w.f, "web-1"), rev);
    done(&w);
}

/* OnDelete: nothing replaced. */
static void statefulset_on_delete(void **st) {
    (void)st;
    world w;
    load(&w, sts("  updateStrategy: {type: OnDelete}\n"));
    sync_expect(&w, 0, 0);
    assert_string_equal(live_revision(&w.f, "web-2"), "web-old");
    done(&w);
}

/* Scaled and updated at once (OrderedReady): web-3 is created first, at
 * the new revision; once it runs, the update goes down from web-3. */
static void statefulset_scale_and_update(void **st) {
    (void)st;
    world w;
    load(&w, sts("replicas4"));
    sync_expect(&w, 1, 0);
    assert_non_null(live_revision(&w.f, "web-3"));
    sync_expect(&w, 0, 0);
    mark_ready(&w.f);
    sync_expect(&w, 0, 1);
    assert_null(live_revision(&w.f, "web-2"));
    done(&w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(daemon_max_unavailable), cmocka_unit_test(daemon_max_surge),
        cmocka_unit_test(daemon_new_not_ready),   cmocka_unit_test(daemon_old_not_ready),
        cmocka_unit_test(daemon_on_delete),       cmocka_unit_test(statefulset_partition),
        cmocka_unit_test(statefulset_on_delete),  cmocka_unit_test(statefulset_scale_and_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
