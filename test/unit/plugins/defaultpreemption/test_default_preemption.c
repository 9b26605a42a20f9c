/* DefaultPreemption: each case is named after the upstream rule it pins
 * (pkg/scheduler/framework/plugins/defaultpreemption and
 * framework/preemption in v1.34). Clusters are small and built by hand; the
 * Filter is the core tests' TestFit (cpu and memory requests), so "does the
 * pod fit after evicting X" is plain arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "codec/tree.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/preemption.h"
#include "framework/status.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "util/gosort.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GI (1024LL * 1024 * 1024)

/* ---- a small world: framework, snapshot and a recording backend --------- */

typedef struct world {
    ks_registry *reg;
    tu_profile tp;
    ks_framework *fw;
    ks_snapshot *snap;
    ks_cluster *objs;
    ks_objects view;
    const ks_plugin_inst *dp;
    ks_pod *nominated[8];
    ks_id nominated_on[8];
    size_t nnominated;
    ks_pod *preemptor; /* for the PreEnqueue probe in delete */
    uint64_t nom_key;  /* the nominator's one entry: pod key -> node */
    ks_id nom_node;
    bool fail_delete;  /* deletions answer 500 */
    bool lookup;       /* the scheduler's pods are the snapshot's ... */
    uint64_t gone_key; /* ... but this one, whose deletion it has seen */
    char log[64][256];
    size_t nlog;
} world;

static void logf_(world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(world *w, const char *fmt, ...) {
    if (w->nlog == 64) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->log[w->nlog++], sizeof(w->log[0]), fmt, ap);
    va_end(ap);
}

static const char *full(const ks_pod *p) {
    static _Thread_local char buf[4][128];
    static _Thread_local int k;
    char *b = buf[k++ & 3];
    snprintf(b, sizeof(buf[0]), "%s/%s", ks_str(p->ns), ks_str(p->name));
    return b;
}

static ks_status *env_delete(void *ctx, const ks_pod *pod) {
    world *w = ctx;
    const char *gate = "";
    if (w->preemptor) {
        ks_status *s = w->dp->ops->pre_enqueue(w->dp->self, w->preemptor);
        gate = s ? " (preemptor gated)" : " (preemptor free)";
        ks_status_free(s);
    }
    logf_(w, "delete %s%s", full(pod), gate);
    return w->fail_delete ? ks_status_new(KS_ERROR, "the server is currently unable to handle the request") : NULL;
}

static void env_patch(void *ctx, const ks_pod *pod, const ks_status_patch *p) {
    world *w = ctx;
    if (p->has_condition)
        logf_(w, "patch %s %s=%s %s: %s", full(pod), p->cond_type, p->cond_status, p->cond_reason,
              p->cond_message);
    if (p->set_nominated) logf_(w, "patch %s nominated=\"%s\"", full(pod), p->nominated);
}

static void env_event(void *ctx, const ks_pod *regarding, const ks_pod *related, const char *type,
                      const char *reason, const char *action, const char *note) {
    logf_(ctx, "event %s %s %s %s: %s", full(regarding), type, reason, action, note);
    assert_non_null(related);
}

static const ks_objects *env_objects(void *ctx) {
    world *w = ctx;
    w->view = ks_cluster_view(w->objs);
    return &w->view;
}

static void env_activate(void *ctx, const ks_pod *pod) { logf_(ctx, "activate %s", full(pod)); }

static size_t env_nominated(void *ctx, ks_id node, ks_pod **out, size_t max) {
    world *w = ctx;
    size_t n = 0;
    for (size_t i = 0; i < w->nnominated; i++) {
        if (w->nominated_on[i] != node) continue;
        if (n < max) out[n] = ks_pod_ref(w->nominated[i]);
        n++;
    }
    return n;
}

static size_t env_nominated_count(void *ctx, ks_id node) { return env_nominated(ctx, node, NULL, 0); }

static ks_pod *env_lookup_pod(void *ctx, uint64_t key) {
    world *w = ctx;
    if (!w->lookup || key == w->gone_key) return NULL;
    for (uint32_t i = 0; i < w->snap->nnodes; i++) {
        const ks_node_info *ni = w->snap->nodes[i];
        for (uint32_t k = 0; k < ni->npods; k++)
            if (ni->pods[k]->key == key) return ks_pod_ref(ni->pods[k]);
    }
    return NULL;
}

static ks_id env_nominated_node(void *ctx, const ks_pod *pod) {
    world *w = ctx;
    return w->nom_key == pod->key ? w->nom_node : 0;
}

/* A PreFilter plugin with extensions: its state counts the pods removed
 * minus those added, so a test can see that dry runs work on clones. It
 * fails RemovePod on nodes labelled error=true. */
static ks_state_key count_key(void) {
    static ks_state_key k = -1;
    if (k < 0) k = ks_state_key_get("PreFilterTestExt");
    return k;
}

static void *clone_int(const void *v) {
    int *c = malloc(sizeof(int));
    *c = *(const int *)v;
    return c;
}

static ks_status *ext_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                 const ks_node_info *const *nodes, size_t n,
                                 ks_pre_filter_result **r) {
    int *v = calloc(1, sizeof(int));
    ks_cycle_state_write(st, count_key(), v, free, clone_int);
    return NULL;
}

static ks_status *ext_add(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *add,
                          const ks_node_info *ni) {
    int *v = ks_cycle_state_read(st, count_key());
    if (v) (*v)--;
    return NULL;
}

static ks_status *ext_remove(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_pod *rm, const ks_node_info *ni) {
    if (ks_labels_has(&ni->node->labels, ks_intern("error")))
        return ks_status_new(KS_ERROR, "failed to remove pod: %s", ks_str(rm->name));
    int *v = ks_cycle_state_read(st, count_key());
    if (v) (*v)++;
    return NULL;
}

static const ks_plugin_ops ext_plugin = {.abi_version = KS_ABI_VERSION,
                                         .name = "TestExt",
                                         .pre_filter = ext_pre_filter,
                                         .add_pod = ext_add,
                                         .remove_pod = ext_remove};

/* Upstream's tests start the dry runs at the first node; so do these,
 * unless a test says otherwise. */
static bool zero_offset = true;
static uint64_t world_seed;

static void world_init(world *w, ks_node **nodes, size_t nn, ks_pod **pods, size_t np) {
    memset(w, 0, sizeof(*w));
    const ks_plugin_ops *extra[] = {&ks_plugin_default_preemption, &ext_plugin};
    w->reg = tu_registry(extra, 2);
    tu_profile_init(&w->tp, NULL);
    tu_profile_add_plugin(&w->tp, &ext_plugin, 0);
    tu_profile_add_plugin(&w->tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&w->tp, &ks_plugin_default_preemption, 0);
    ks_framework_options o = {.parallelism = 4, .seed = world_seed};
    char *err = NULL;
    w->fw = ks_framework_new(w->reg, &w->tp.p, &o, &err);
    if (!w->fw) fail_msg("framework: %s", err);
    w->snap = ks_snapshot_from(nodes, nn, pods, np);
    ks_framework_set_snapshot(w->fw, w->snap);
    w->objs = ks_cluster_new();
    ks_framework_env env = {.ctx = w,
                            .delete_pod = env_delete,
                            .patch_status = env_patch,
                            .event = env_event,
                            .objects = env_objects,
                            .activate = env_activate,
                            .nominated_pods = env_nominated,
                            .nominated_count = env_nominated_count,
                            .nominated_node = env_nominated_node,
                            .lookup_pod = env_lookup_pod};
    ks_framework_set_env(w->fw, &env);
    w->dp = ks_framework_plugin(w->fw, "DefaultPreemption");
    assert_non_null(w->dp);
    ks_default_preemption_set_zero_offset(w->dp->self, zero_offset);
    for (size_t i = 0; i < nn; i++) ks_node_unref(nodes[i]);
    for (size_t i = 0; i < np; i++) ks_pod_unref(pods[i]);
}

/* The PDBs are the test's own (on its stack), not the cluster's. */
static void drop_pdbs(ks_cluster *c) {
    free(c->pdbs.v);
    memset(&c->pdbs, 0, sizeof(c->pdbs));
}

static void world_free(world *w) {
    for (size_t i = 0; i < w->nnominated; i++) ks_pod_unref(w->nominated[i]);
    drop_pdbs(w->objs);
    ks_cluster_free(w->objs);
    ks_framework_free(w->fw);
    ks_snapshot_free(w->snap);
    ks_registry_free(w->reg);
}

static void world_nominate(world *w, ks_pod *p, const char *node) {
    w->nominated[w->nnominated] = p;
    w->nominated_on[w->nnominated++] = ks_intern(node);
}

/* "Success" or "Code: message"; frees s. */
static const char *status_str(ks_status *s) {
    static char buf[1024];
    if (ks_status_is_success(s)) {
        ks_status_free(s);
        return "Success";
    }
    char *m = ks_status_message(s);
    snprintf(buf, sizeof(buf), "%s: %s", ks_code_name(s->code), m);
    free(m);
    ks_status_free(s);
    return buf;
}

/* Filter statuses as the scheduler records them. */
static void filter_all(world *w, ks_cycle_state *st, const ks_pod *pod, ks_node_status_map *m) {
    for (uint32_t i = 0; i < w->snap->nnodes; i++) {
        const ks_node_info *ni = w->snap->nodes[i];
        ks_status *s = ks_framework_run_filter_with_nominated_pods(w->fw, st, pod, ni);
        if (s) ks_node_status_map_put(m, ni->name, s);
    }
}

typedef struct outcome {
    char status[1024];
    const char *nominated; /* NULL, "" or a node */
    int counter;           /* TestExt's state in the cycle's own state afterwards */
} outcome;

/* PreFilter, Filter on every node (unless m is given), then PostFilter. */
static outcome preempt(world *w, ks_pod *pod, ks_node_status_map *given) {
    outcome o = {0};
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *pfr = NULL;
    ks_status *s = ks_framework_run_pre_filter(w->fw, st, pod, &pfr, NULL);
    assert_string_equal(status_str(s), "Success");
    ks_node_status_map own;
    ks_node_status_map_init(&own);
    if (!given) filter_all(w, st, pod, &own);
    ks_post_filter_result r = {0};
    s = w->dp->ops->post_filter(w->dp->self, st, pod, given ? given : &own, &r);
    snprintf(o.status, sizeof(o.status), "%s", status_str(s));
    o.nominated = r.nominated_node;
    int *c = ks_cycle_state_read(st, count_key());
    o.counter = c ? *c : -1;
    ks_node_status_map_clear(&own);
    ks_cycle_state_free(st);
    return o;
}

static void assert_log(world *w, const char *const *want) {
    size_t n = 0;
    while (want[n]) n++;
    for (size_t i = 0; i < w->nlog || i < n; i++) {
        const char *got = i < w->nlog ? w->log[i] : "(nothing)";
        const char *exp = i < n ? want[i] : "(nothing)";
        if (strcmp(got, exp) != 0) fail_msg("log[%zu]:\n  got  %s\n  want %s", i, got, exp);
    }
}

/* Seed requirement 2: the preemption path never writes the preemptor. */
static void assert_preemptor_untouched(world *w, const ks_pod *p) {
    char prefix[160];
    snprintf(prefix, sizeof(prefix), "patch %s ", full(p));
    for (size_t i = 0; i < w->nlog; i++)
        if (strncmp(w->log[i], prefix, strlen(prefix)) == 0)
            fail_msg("the preemption path wrote the preemptor: %s", w->log[i]);
}

static ks_pod *bound(const char *name, int64_t cpu, int32_t prio, const char *node) {
    ks_pod *p = tu_pod_on("default", name, cpu, 0, node);
    p->priority = prio;
    return p;
}

static ks_pod *pending(const char *name, int64_t cpu, int32_t prio) {
    return tu_pod("default", name, cpu, 0, prio);
}

static void started(ks_pod *p, int64_t t) {
    p->has_start_time = true;
    p->start_time = t;
}

static void terminating(ks_pod *p, bool by_preemption) {
    p->has_deletion_ts = true;
    p->deletion_ts = 1000;
    if (!by_preemption) return;
    p->conditions = ks_arena_calloc(p->arena, 1, sizeof(*p->conditions));
    p->conditions[0] = (ks_pod_condition){.type = ks_intern("DisruptionTarget"),
                                          .status = ks_intern("True"),
                                          .reason = "PreemptionByScheduler"};
    p->nconditions = 1;
}

/* A PDB over app=<app> in default allowing `allowed` disruptions. */
typedef struct test_pdb {
    ks_pdb pdb;
    ks_requirement req;
    ks_id value;
    ks_id disrupted;
} test_pdb;

static void add_pdb(world *w, test_pdb *t, const char *app, int32_t allowed, const char *disrupted) {
    memset(t, 0, sizeof(*t));
    t->value = ks_intern(app);
    t->req = (ks_requirement){.key = ks_intern("app"), .op = KS_OP_IN, .nvalues = 1, .values = &t->value};
    t->pdb.ns = ks_intern("default");
    t->pdb.name = ks_intern(app);
    t->pdb.selector = (ks_label_selector){.nreq = 1, .reqs = &t->req};
    t->pdb.disruptions_allowed = allowed;
    if (disrupted) {
        t->disrupted = ks_intern(disrupted);
        t->pdb.disrupted_pods = &t->disrupted;
        t->pdb.ndisrupted = 1;
    }
    KS_VEC_PUSH(w->objs->pdbs, &t->pdb);
}

static void setup_once(void) {
    tu_init();
    zero_offset = true;
    world_seed = 0;
}

/* ---- eligibility ----------------------------------------------------------- */

static void test_policy_never_is_not_eligible(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("low", 1000, 0, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_pod *p = pending("p", 1000, 100);
    p->preemption_policy = KS_PREEMPT_NEVER;
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Unschedulable: preemption: not eligible due to preemptionPolicy=Never.");
    assert_null(o.nominated); /* the nomination is left alone */
    assert_int_equal(w.nlog, 0);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_nominated_node_with_terminating_victim_is_not_eligible(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *gone = bound("gone", 1000, 0, "node1");
    terminating(gone, true);
    ks_pod *pods[] = {gone, bound("low2", 1000, 0, "node2")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    ks_pod *p = pending("p", 1000, 100);
    p->nominated_node = ks_intern("node1");
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: not eligible due to a terminating pod on the "
                        "nominated node.");
    assert_null(o.nominated);
    assert_int_equal(w.nlog, 0);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_nominated_node_unresolvable_allows_preempting_again(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *gone = bound("gone", 1000, 0, "node1");
    terminating(gone, true);
    ks_pod *pods[] = {gone, bound("low2", 1000, 0, "node2")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    ks_pod *p = pending("p", 1000, 100);
    p->nominated_node = ks_intern("node1");
    ks_node_status_map m;
    ks_node_status_map_init(&m);
    ks_node_status_map_put(&m, ks_intern("node1"),
                           ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match"));
    ks_node_status_map_put(&m, ks_intern("node2"), ks_status_new(KS_UNSCHEDULABLE, "Insufficient cpu"));
    outcome o = preempt(&w, p, &m);
    assert_string_equal(o.status, "Success");
    assert_string_equal(o.nominated, "node2");
    ks_node_status_map_clear(&m);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_terminating_pod_without_disruption_condition_does_not_block(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *gone = bound("gone", 1000, 0, "node1");
    terminating(gone, false);
    ks_pod *pods[] = {gone};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_pod *p = pending("p", 1000, 100);
    p->nominated_node = ks_intern("node1");
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Success");
    assert_string_equal(o.nominated, "node1");
    /* The victim is already terminating: no second delete, and with
     * nothing to delete nothing else is done (upstream returns early). */
    assert_int_equal(w.nlog, 0);
    ks_pod_unref(p);
    world_free(&w);
}

/* ksched run: the victims' deletions have been answered but the watch has
 * not delivered them, and the preemptor's nominatedNodeName patch has not
 * come back either (only the nominator has the node). A retry must wait
 * for the victims as upstream waits for terminating ones, not preempt
 * again: the victims it would pick are still in the snapshot. */
static void test_own_victims_on_the_nominators_node_make_the_pod_wait(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("low1", 1000, 0, "node1"), bound("low2", 1000, 0, "node2")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    ks_pod *p = pending("p", 1000, 100);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Success");
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/low1");
    w.nlog = 0;
    w.nom_key = p->key;
    w.nom_node = ks_intern("node1");
    o = preempt(&w, p, NULL);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: not eligible due to a terminating pod on the "
                        "nominated node.");
    assert_null(o.nominated);
    assert_int_equal(w.nlog, 0);
    /* The same with the nomination in the pod's status. */
    w.nom_key = 0;
    p->nominated_node = ks_intern("node1");
    o = preempt(&w, p, NULL);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: not eligible due to a terminating pod on the "
                        "nominated node.");
    assert_int_equal(w.nlog, 0);
    /* The snapshot no longer holds low1; a pod of the same name that is
     * another object (uid) is no victim of ours: preempting it is fine. */
    ks_pod *again = bound("low1", 1000, 0, "node1");
    again->uid = "uid-recreated";
    ks_node *nodes2[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *pods2[] = {again, bound("low2", 1000, 0, "node2")};
    ks_snapshot *snap2 = ks_snapshot_from(nodes2, 2, pods2, 2);
    ks_framework_set_snapshot(w.fw, snap2);
    o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Success");
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/low1");
    ks_framework_set_snapshot(w.fw, w.snap);
    ks_snapshot_free(snap2);
    for (size_t i = 0; i < 2; i++) ks_node_unref(nodes2[i]), ks_pod_unref(pods2[i]);
    ks_pod_unref(p);
    world_free(&w);
}

/* Upstream ungates the preemptor when its last victim's deletion is
 * issued; ksched keeps it gated until the scheduler has seen the victims
 * deleted (the deletion event's PreEnqueue lets it in), so that no
 * attempt is made while they still look alive. */
static void test_preemptor_stays_gated_until_its_victims_are_seen_deleted(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *low = bound("low1", 1000, 0, "node1");
    uint64_t low_key = low->key;
    ks_pod *pods[] = {low};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    w.lookup = true;
    ks_pod *p = pending("p", 1000, 100);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/low1");
    ks_status *s = w.dp->ops->pre_enqueue(w.dp->self, p);
    assert_string_equal(status_str(s),
                        "UnschedulableAndUnresolvable: waiting for the preemption for this pod to be finished");
    /* A deletion without grace period: the update with the timestamp
     * comes just before the deletion; still held back. */
    low->has_deletion_ts = true;
    low->deletion_ts = time(NULL);
    s = w.dp->ops->pre_enqueue(w.dp->self, p);
    assert_string_equal(status_str(s),
                        "UnschedulableAndUnresolvable: waiting for the preemption for this pod to be finished");
    /* A grace period: terminating as upstream knows it; let in (it waits
     * as upstream's retries wait, not eligible to preempt again). */
    low->deletion_ts = time(NULL) + 30;
    s = w.dp->ops->pre_enqueue(w.dp->self, p);
    assert_string_equal(status_str(s), "Success");
    low->has_deletion_ts = false;
    w.gone_key = low_key; /* the watch delivered the deletion */
    s = w.dp->ops->pre_enqueue(w.dp->self, p);
    assert_string_equal(status_str(s), "Success");
    ks_pod_unref(p);
    world_free(&w);
}

/* A victim whose deletion failed is not being deleted: the preemptor,
 * activated by the failure, may preempt it again. */
static void test_failed_eviction_does_not_make_the_pod_wait(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("low1", 1000, 0, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_pod *p = pending("p", 1000, 100);
    w.fail_delete = true;
    w.lookup = true;
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[w.nlog - 1], "activate default/p");
    /* not held back for a victim that stays */
    ks_status *gate = w.dp->ops->pre_enqueue(w.dp->self, p);
    assert_string_equal(status_str(gate), "Success");
    w.fail_delete = false;
    w.nlog = 0;
    w.nom_key = p->key;
    w.nom_node = ks_intern("node1");
    o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Success");
    assert_string_equal(w.log[1], "delete default/low1");
    ks_pod_unref(p);
    world_free(&w);
}

/* ---- no candidates: the FitError message ----------------------------------- */

static void test_tied_priority_finds_no_victims(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("p1", 1000, 0, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_pod *p = pending("p", 1000, 0);
    p->nominated_node = ks_intern("node9");
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: 0/1 nodes are available: 1 No preemption "
                        "victims found for incoming pod.");
    /* "" asks the failure handler to clear the nomination; nothing here
     * writes it. */
    assert_string_equal(o.nominated, "");
    assert_int_equal(w.nlog, 0);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_unresolvable_nodes_are_not_tried(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("p1", 1000, 0, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_pod *p = pending("p", 1000, 100);
    ks_node_status_map m;
    ks_node_status_map_init(&m);
    ks_node_status_map_put(&m, ks_intern("node1"), ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "x"));
    outcome o = preempt(&w, p, &m);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: 0/1 nodes are available: 1 Preemption is not "
                        "helpful for scheduling.");
    assert_string_equal(o.nominated, "");
    ks_node_status_map_clear(&m);
    /* A node absent from the map counts as UnschedulableAndUnresolvable. */
    ks_node_status_map_init(&m);
    o = preempt(&w, p, &m);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: 0/1 nodes are available: 1 Preemption is not "
                        "helpful for scheduling.");
    ks_node_status_map_clear(&m);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_no_candidates_mixed_reasons(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 200, 4 * GI, NULL),
                        tu_node("node3", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("h1", 1000, 100, "node1"), bound("l2", 100, 0, "node2"),
                      bound("h3", 1000, 100, "node3")};
    world w;
    world_init(&w, nodes, 3, pods, 3);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 "
                        "No preemption victims found for incoming pod.");
    assert_string_equal(o.nominated, "");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_no_candidates_counts_untried_nodes_as_not_helpful(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 200, 4 * GI, NULL), tu_node("node2", 200, 4 * GI, NULL),
                        tu_node("node3", 200, 4 * GI, NULL), tu_node("node4", 200, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("p1", 100, 0, "node1"), bound("p2", 100, 0, "node2")};
    world w;
    world_init(&w, nodes, 4, pods, 2);
    ks_pod *p = pending("p", 1000, 10);
    ks_node_status_map m;
    ks_node_status_map_init(&m);
    ks_node_status_map_put(&m, ks_intern("node1"), ks_status_new(KS_UNSCHEDULABLE, "Insufficient cpu"));
    ks_node_status_map_put(&m, ks_intern("node2"), ks_status_new(KS_UNSCHEDULABLE, "Insufficient cpu"));
    ks_node_status_map_put(&m, ks_intern("node4"), ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "x"));
    outcome o = preempt(&w, p, &m);
    assert_string_equal(o.status,
                        "Unschedulable: preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 "
                        "Preemption is not helpful for scheduling.");
    ks_node_status_map_clear(&m);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_prefilter_extension_error_is_an_error(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, "error", "true", NULL)};
    ks_pod *pods[] = {bound("p1", 1000, 0, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status,
                        "Error: preemption: running RemovePod on PreFilter plugin \"TestExt\": "
                        "failed to remove pod: p1");
    assert_null(o.nominated);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_error_on_one_node_does_not_hide_another_candidate(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, "error", "true", NULL),
                        tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("p1", 1000, 0, "node1"), bound("p2", 1000, 0, "node2")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Success");
    assert_string_equal(o.nominated, "node2");
    ks_pod_unref(p);
    world_free(&w);
}

/* ---- victims -------------------------------------------------------------- */

static void test_lowest_priority_pod_is_preempted(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("low", 500, 1, "node1"), bound("mid", 500, 5, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 2);
    ks_pod *p = pending("p", 500, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.status, "Success");
    assert_string_equal(o.nominated, "node1");
    const char *want[] = {
        "patch default/low DisruptionTarget=True PreemptionByScheduler: default-scheduler: "
        "preempting to accommodate a higher priority pod",
        "delete default/low",
        "event default/low Normal Preempted Preempting: Preempted by pod uid-default-p on node node1",
        NULL};
    assert_log(&w, want);
    assert_preemptor_untouched(&w, p);
    /* Dry runs worked on clones: the cycle's own state is untouched. */
    assert_int_equal(o.counter, 0);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_reprieve_keeps_older_pods_of_equal_priority(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1200, 4 * GI, NULL)};
    ks_pod *x = bound("x", 400, 1, "node1"), *y = bound("y", 400, 1, "node1"),
           *z = bound("z", 400, 1, "node1");
    started(x, 100);
    started(y, 300);
    started(z, 200);
    ks_pod *pods[] = {x, y, z};
    world w;
    world_init(&w, nodes, 1, pods, 3);
    ks_pod *p = pending("p", 400, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/y"); /* the most recently started */
    ks_pod_unref(p);
    world_free(&w);
}

static void test_reprieve_ties_without_start_time_follow_upstream_sort(void **state) {
    /* Pods that never started all read "now"; upstream's comparison then
     * says the first of any pair is older, and sort.Slice's insertion sort
     * reverses them: the reprieve runs from the last pod to the first. */
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1200, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("a", 400, 1, "node1"), bound("b", 400, 1, "node1"),
                      bound("c", 400, 1, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 3);
    ks_pod *p = pending("p", 400, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/a");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_reprieve_tries_pdb_violating_victims_first(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *db = bound("db", 500, 1, "node1"), *web = bound("web", 500, 2, "node1");
    tu_pod_labels(db, "app", "db", NULL);
    ks_pod *pods[] = {db, web};
    world w;
    world_init(&w, nodes, 1, pods, 2);
    test_pdb pdb;
    add_pdb(&w, &pdb, "db", 0, NULL);
    ks_pod *p = pending("p", 500, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    /* Without the PDB "db" (lower priority) would go. */
    assert_string_equal(w.log[1], "delete default/web");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_pdb_steers_the_node_choice(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *db = bound("db", 1000, 1, "node1");
    tu_pod_labels(db, "app", "db", NULL);
    ks_pod *pods[] = {db, bound("web", 1000, 5, "node2")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    test_pdb pdb;
    add_pdb(&w, &pdb, "db", 0, NULL);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node2");
    assert_string_equal(w.log[1], "delete default/web");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_pdb_disrupted_pods_do_not_count_as_violations(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL)};
    ks_pod *db = bound("db", 1000, 1, "node1");
    tu_pod_labels(db, "app", "db", NULL);
    ks_pod *pods[] = {db, bound("web", 1000, 5, "node2")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    test_pdb pdb;
    add_pdb(&w, &pdb, "db", 0, "db"); /* db's eviction is already processed */
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_pdb_split_keeps_order_and_budget(void **state) {
    setup_once();
    ks_pod *a = bound("a", 1, 1, "n"), *b = bound("b", 1, 1, "n"), *c = bound("c", 1, 1, "n"),
           *d = bound("d", 1, 1, "n");
    tu_pod_labels(a, "app", "db", NULL);
    tu_pod_labels(b, "app", "web", NULL);
    tu_pod_labels(c, "app", "db", NULL);
    tu_pod_labels(d, "app", "db", NULL);
    world w;
    memset(&w, 0, sizeof(w));
    w.objs = ks_cluster_new();
    test_pdb pdb;
    add_pdb(&w, &pdb, "db", 1, NULL); /* one db pod may go */
    ks_pdb_list pdbs = {w.objs->pdbs.v, w.objs->pdbs.n};
    ks_pod *in[] = {a, b, c, d}, *bad[4], *ok[4];
    size_t nbad, nok;
    ks_filter_pods_with_pdb_violation(in, 4, &pdbs, bad, &nbad, ok, &nok);
    assert_int_equal(nbad, 2);
    assert_ptr_equal(bad[0], c);
    assert_ptr_equal(bad[1], d);
    assert_int_equal(nok, 2);
    assert_ptr_equal(ok[0], a);
    assert_ptr_equal(ok[1], b);
    drop_pdbs(w.objs);
    ks_cluster_free(w.objs);
    for (int i = 0; i < 4; i++) ks_pod_unref(in[i]);
}

static void test_lower_priority_nominated_pods_lose_their_nomination(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("low", 1000, 1, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    world_nominate(&w, pending("q", 0, 3), "node1");
    world_nominate(&w, pending("r", 0, 20), "node1");
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    const char *want[] = {
        "patch default/q nominated=\"\"",
        "patch default/low DisruptionTarget=True PreemptionByScheduler: default-scheduler: "
        "preempting to accommodate a higher priority pod",
        "delete default/low",
        "event default/low Normal Preempted Preempting: Preempted by pod uid-default-p on node node1",
        NULL};
    assert_log(&w, want);
    ks_pod_unref(p);
    world_free(&w);
}

static void test_preemptor_is_gated_until_the_last_victim_is_deleted(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *a = bound("a", 500, 1, "node1"), *b = bound("b", 500, 1, "node1");
    started(a, 100);
    started(b, 200);
    ks_pod *pods[] = {a, b};
    world w;
    world_init(&w, nodes, 1, pods, 2);
    ks_pod *p = pending("p", 1000, 10);
    w.preemptor = p;
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/a (preemptor gated)");
    assert_string_equal(w.log[4], "delete default/b (preemptor free)");
    ks_status *s = w.dp->ops->pre_enqueue(w.dp->self, p);
    assert_string_equal(status_str(s), "Success");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_waiting_victim_is_rejected_not_deleted(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL)};
    ks_pod *low = bound("low", 1000, 1, "node1");
    ks_pod *pods[] = {ks_pod_ref(low)};
    world w;
    world_init(&w, nodes, 1, pods, 1);
    ks_waiting_plugin wpl = {.plugin = "TestPermit", .timeout_ns = INT64_MAX / 2,
                             .deadline_ns = INT64_MAX / 2};
    ks_waiting_pod *wp = ks_waiting_pods_add(ks_framework_waiting(w.fw), low, &wpl, 1);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    const char *want[] = {
        "event default/low Normal Preempted Preempting: Preempted by pod uid-default-p on node node1",
        NULL};
    assert_log(&w, want);
    ks_status *verdict = NULL;
    assert_true(ks_waiting_pod_wait(wp, false, &verdict));
    char *m = ks_status_message(verdict);
    assert_string_equal(m, "preempted");
    free(m);
    ks_status_free(verdict);
    ks_waiting_pods_remove(ks_framework_waiting(w.fw), low->key);
    ks_pod_unref(low);
    ks_pod_unref(p);
    world_free(&w);
}

/* ---- candidates: how many, from where ------------------------------------- */

static void test_num_candidates_from_args(void **state) {
    assert_int_equal(ks_default_preemption_num_candidates(5, 40, 1), 2);
    assert_int_equal(ks_default_preemption_num_candidates(5, 40, 2), 2);
    assert_int_equal(ks_default_preemption_num_candidates(5, 10, 100), 5);
    assert_int_equal(ks_default_preemption_num_candidates(1000, 10, 100), 100);
    assert_int_equal(ks_default_preemption_num_candidates(5000, 10, 100), 500);
    assert_int_equal(ks_default_preemption_num_candidates(50, 0, 7), 7);
    assert_int_equal(ks_default_preemption_num_candidates(0, 10, 100), 0);
}

static void five_node_world(world *w, bool pdb_labels) {
    ks_node *nodes[5];
    ks_pod *pods[5];
    for (int i = 0; i < 5; i++) {
        char n[24], pn[24];
        snprintf(n, sizeof(n), "node%d", i + 1);
        snprintf(pn, sizeof(pn), "p%d", i + 1);
        nodes[i] = tu_node(n, 1000, 4 * GI, NULL);
        pods[i] = bound(pn, 1000, 5, n);
        if (pdb_labels && (i == 0 || i == 1 || i == 4)) tu_pod_labels(pods[i], "app", "foo", NULL);
    }
    world_init(w, nodes, 5, pods, 5);
}

static void dry_run(world *w, ks_pod *p, int32_t offset, int32_t num, char *out, size_t n) {
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *pfr = NULL;
    ks_status_free(ks_framework_run_pre_filter(w->fw, st, p, &pfr, NULL));
    ks_pdb_list pdbs = {w->objs->pdbs.v, w->objs->pdbs.n};
    ks_candidates c;
    ks_status *err = NULL;
    ks_dry_run_preemption(ks_default_preemption_evaluator(w->dp->self), st, p,
                          (const ks_node_info *const *)w->snap->nodes, w->snap->nnodes, &pdbs,
                          offset, num, &c, NULL, &err);
    assert_null(err);
    out[0] = 0;
    for (uint32_t i = 0; i < c.n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s(%s,%lld)", i ? " " : "", ks_str(c.v[i].node),
                 ks_str(c.v[i].victims.pods[0]->name), (long long)c.v[i].victims.num_pdb_violations);
    }
    ks_candidates_free(&c);
    ks_cycle_state_free(st);
}

static void test_dry_run_stops_at_num_candidates_from_the_offset(void **state) {
    setup_once();
    world w;
    five_node_world(&w, false);
    ks_pod *p = pending("p", 1000, 10);
    char got[512];
    int32_t num = ks_default_preemption_num_candidates(5, 40, 1);
    dry_run(&w, p, 0, num, got, sizeof(got));
    assert_string_equal(got, "node1(p1,0) node2(p2,0)");
    dry_run(&w, p, 4, num, got, sizeof(got)); /* wraps around */
    assert_string_equal(got, "node5(p5,0) node1(p1,0)");
    dry_run(&w, p, 0, 5, got, sizeof(got));
    assert_string_equal(got, "node1(p1,0) node2(p2,0) node3(p3,0) node4(p4,0) node5(p5,0)");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_dry_run_looks_past_num_candidates_for_a_pdb_clean_node(void **state) {
    setup_once();
    world w;
    five_node_world(&w, true);
    test_pdb pdb;
    add_pdb(&w, &pdb, "foo", 0, NULL);
    ks_pod *p = pending("p", 1000, 10);
    char got[512];
    /* From node5: node5 and node1 violate (the violating list is then
     * full, so node2 is dropped), node3 is clean: stop. Clean ones first. */
    dry_run(&w, p, 4, ks_default_preemption_num_candidates(5, 40, 2), got, sizeof(got));
    assert_string_equal(got, "node3(p3,0) node5(p5,1) node1(p1,1)");
    ks_pod_unref(p);
    world_free(&w);
}

/* The offsets come from the profile's seed: two frameworks with the same
 * seed draw the same ones, another seed others. */
static void draw_offsets(uint64_t seed, int32_t *seq, int n) {
    setup_once();
    zero_offset = false;
    world_seed = seed;
    world w;
    five_node_world(&w, false);
    const ks_preemption_ops *ops = ks_default_preemption_evaluator(w.dp->self)->ops;
    for (int i = 0; i < n; i++) {
        int32_t num;
        ops->offset_and_num_candidates(w.dp->self, 1000, &seq[i], &num);
        assert_true(seq[i] >= 0 && seq[i] < 1000);
        assert_int_equal(num, 100);
    }
    ks_default_preemption_set_zero_offset(w.dp->self, true);
    int32_t off, num;
    ops->offset_and_num_candidates(w.dp->self, 1000, &off, &num);
    assert_int_equal(off, 0);
    world_free(&w);
    setup_once();
}

static void test_random_offset_is_seedable(void **state) {
    int32_t seq1[8], seq2[8], seq3[8];
    draw_offsets(42, seq1, 8);
    draw_offsets(42, seq2, 8);
    draw_offsets(43, seq3, 8);
    assert_memory_equal(seq1, seq2, sizeof(seq1));
    assert_memory_not_equal(seq1, seq3, sizeof(seq1));
}

/* ---- pickOneNodeForPreemption, criterion by criterion ---------------------- */

typedef struct pick_case {
    const char *name;
    /* per candidate: victims as "prio@start" (start 0 = not started), and
     * the PDB violations */
    const char *victims[4];
    int violations[4];
    int want;
} pick_case;

static void run_pick(const pick_case *pc) {
    ks_candidates c = {0};
    for (int i = 0; i < 4 && pc->victims[i]; i++) {
        ks_candidate cand = {.node = ks_intern("n")};
        cand.victims.pods = calloc(8, sizeof(ks_pod *));
        cand.victims.num_pdb_violations = pc->violations[i];
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", pc->victims[i]);
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            long long prio = 0, start = 0;
            sscanf(tok, "%lld@%lld", &prio, &start);
            ks_pod *v = pending("v", 0, (int32_t)prio);
            if (start) started(v, start);
            cand.victims.pods[cand.victims.npods++] = v;
        }
        KS_GROW(c.v, c.cap, c.n + 1);
        c.v[c.n++] = cand;
    }
    int got = ks_pick_one_node_for_preemption(&c, false);
    if (got != pc->want) fail_msg("%s: picked %d, want %d", pc->name, got, pc->want);
    ks_candidates_free(&c);
}

static void test_pick_one_node_criteria_in_order(void **state) {
    setup_once();
    static const pick_case cases[] = {
        {"fewest PDB violations first", {"1@0", "100@0"}, {1, 0}, 1},
        {"lowest highest-priority victim", {"5@0 1@0", "3@0 3@0", "4@0"}, {0}, 1},
        {"smallest sum of priorities", {"5@0 5@0", "5@0 1@0"}, {0}, 1},
        /* Priorities are shifted by MaxInt32+1 before summing, so two
         * negative-priority victims never undercut one. */
        {"sum of shifted priorities", {"5@0 -10@0 -10@0", "5@0 -10@0"}, {0}, 1},
        /* Equal shifted sums: 1e9 == 1e9 + MinInt32 + (MaxInt32+1). */
        {"fewest victims", {"1000000000@0 -2147483648@0", "1000000000@0"}, {0}, 1},
        {"latest start of the highest-priority victims", {"5@100 1@900", "5@200 1@50"}, {0}, 1},
        {"not started counts as now", {"5@0", "5@200"}, {0}, 0},
        {"all equal: the first", {"5@100", "5@100", "5@100"}, {0}, 0},
        {"one candidate", {"7@1"}, {3}, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) run_pick(&cases[i]);
    ks_candidates none = {0};
    assert_int_equal(ks_pick_one_node_for_preemption(&none, false), -1);
}

static void test_node_with_lowest_highest_priority_victim_wins(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1000, 4 * GI, NULL), tu_node("node2", 1000, 4 * GI, NULL),
                        tu_node("node3", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("a1", 500, 5, "node1"), bound("a2", 500, 5, "node1"),
                      bound("b1", 500, 5, "node2"), bound("b2", 500, 1, "node2"),
                      bound("c1", 500, 1, "node3"), bound("c2", 500, 1, "node3")};
    world w;
    world_init(&w, nodes, 3, pods, 6);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node3");
    ks_pod_unref(p);
    world_free(&w);
}

/* ---- the differential tests' name tie rule --------------------------------- */

static void test_name_tie_rule_picks_smallest_node_name(void **state) {
    setup_once();
    zero_offset = false; /* the rule pins it anyway */
    ks_node *nodes[] = {tu_node("node-b", 1000, 4 * GI, NULL), tu_node("node-a", 1000, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("b", 1000, 1, "node-b"), bound("a", 1000, 1, "node-a")};
    world w;
    world_init(&w, nodes, 2, pods, 2);
    ks_pod *p = pending("p", 1000, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node-b"); /* all equal: the first */
    w.fw->ties = KS_TIES_BY_NAME;
    w.nlog = 0;
    o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node-a");
    ks_pod_unref(p);
    world_free(&w);
}

static void test_name_tie_rule_orders_equal_victims_by_name(void **state) {
    setup_once();
    ks_node *nodes[] = {tu_node("node1", 1200, 4 * GI, NULL)};
    ks_pod *pods[] = {bound("a", 400, 1, "node1"), bound("b", 400, 1, "node1"),
                      bound("c", 400, 1, "node1")};
    world w;
    world_init(&w, nodes, 1, pods, 3);
    w.fw->ties = KS_TIES_BY_NAME;
    ks_pod *p = pending("p", 400, 10);
    outcome o = preempt(&w, p, NULL);
    assert_string_equal(o.nominated, "node1");
    assert_string_equal(w.log[1], "delete default/c"); /* a and b are reprieved first */
    ks_pod_unref(p);
    world_free(&w);
}

/* ---- args -------------------------------------------------------------- */

static char *create_err(ks_arena *a, int64_t pct, int64_t abs) {
    ks_tree *t = kt_new(a, KT_MAP, 0);
    if (pct != -999) kt_map_add(a, t, "minCandidateNodesPercentage", kt_int(a, pct));
    if (abs != -999) kt_map_add(a, t, "minCandidateNodesAbsolute", kt_int(a, abs));
    char *err = NULL;
    void *self = ks_plugin_default_preemption.create(t, NULL, &err);
    if (self) ks_plugin_default_preemption.destroy(self);
    return err;
}

static void test_args_validation(void **state) {
    setup_once();
    ks_arena *a = ks_arena_new(4096);
    ks_tree *probe = kt_new(a, KT_MAP, 0);
    kt_map_add(a, probe, "k", kt_int(a, 1));
    if (!ks_args_get(probe, "k")) {
        ks_arena_free(a);
        skip(); /* args trees need the codec */
    }
    char *e = create_err(a, -999, -999);
    assert_null(e);
    e = create_err(a, 101, 100);
    assert_non_null(e);
    assert_string_equal(e, "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]");
    free(e);
    e = create_err(a, 10, -1);
    assert_non_null(e);
    assert_string_equal(e, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)");
    free(e);
    e = create_err(a, 0, 0);
    assert_non_null(e);
    assert_string_equal(e,
                        "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
                        "time as minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: "
                        "0: cannot be zero at the same time as minCandidateNodesPercentage]");
    free(e);
    assert_null(create_err(a, 0, 1));
    assert_null(create_err(a, 100, 0));
    ks_arena_free(a);
}

/* ---- Go's sort.Slice ------------------------------------------------------ */

typedef struct go_vec {
    int n;
    int keys[100];
    int want[100];
    bool le; /* less is <= (ties always "less", like unset start times) */
} go_vec;

static const go_vec go_vecs[] = {
    {21, {0,1,1,0,0,0,1,0,0,1,1,0,1,1,1,1,1,0,1,1,0}, {7,20,11,4,3,0,17,8,5,19,18,1,16,2,14,13,12,9,10,6,15}, true},
    {60, {0}, {13,52,29,17,4,57,9,41,1,39,19,55,24,15,56,11,31,7,47,3,23,59,46,54,51,20,22,53,18,44,38,34,14,48,12,32,10,42,36,30,6,50,5,28,2,40,0,58,27,49,45,37,21,43,8,33,26,35,16,25}, true},
    {89, {0,0,0,0,0,0,2,2,2,1,2,0,2,2,2,2,2,0,0,1,2,2,2,0,1,2,0,1,0,1,2,0,2,2,2,0,2,2,2,2,2,0,2,0,2,2,2,1,2,1,0,0,1,0,0,2,0,1,2,0,1,0,1,2,2,1,0,2,1,1,1,0,0,2,2,2,1,1,0,0,2,1,0,1,0,1,0,2,0},
     {78,17,2,3,4,5,88,86,35,50,84,11,53,82,1,54,51,79,18,56,43,0,59,23,41,72,26,61,28,66,71,31,83,69,68,70,29,65,62,27,60,24,76,77,57,19,81,47,52,49,9,85,21,48,46,55,45,44,58,42,40,39,38,63,64,37,36,67,34,33,32,30,25,73,74,75,22,20,16,15,80,14,13,12,10,8,7,87,6}, false},
};

static bool vec_less(const void *a, const void *b, void *ctx) {
    const go_vec *v = ctx;
    int ka = v->keys[(intptr_t)a], kb = v->keys[(intptr_t)b];
    return v->le ? ka <= kb : ka < kb;
}

static void test_go_sort_matches_go(void **state) {
    for (size_t t = 0; t < sizeof(go_vecs) / sizeof(go_vecs[0]); t++) {
        const go_vec *v = &go_vecs[t];
        void *idx[100];
        for (intptr_t i = 0; i < v->n; i++) idx[i] = (void *)i;
        ks_go_sort_ptrs(idx, (size_t)v->n, vec_less, (void *)v);
        for (int i = 0; i < v->n; i++)
            if ((intptr_t)idx[i] != v->want[i])
                fail_msg("vector %zu: position %d holds %d, Go has %d", t, i, (int)(intptr_t)idx[i],
                         v->want[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_never_is_not_eligible),
        cmocka_unit_test(test_nominated_node_with_terminating_victim_is_not_eligible),
        cmocka_unit_test(test_nominated_node_unresolvable_allows_preempting_again),
        cmocka_unit_test(test_terminating_pod_without_disruption_condition_does_not_block),
        cmocka_unit_test(test_tied_priority_finds_no_victims),
        cmocka_unit_test(test_unresolvable_nodes_are_not_tried),
        cmocka_unit_test(test_no_candidates_mixed_reasons),
        cmocka_unit_test(test_no_candidates_counts_untried_nodes_as_not_helpful),
        cmocka_unit_test(test_prefilter_extension_error_is_an_error),
        cmocka_unit_test(test_error_on_one_node_does_not_hide_another_candidate),
        cmocka_unit_test(test_lowest_priority_pod_is_preempted),
        cmocka_unit_test(test_reprieve_keeps_older_pods_of_equal_priority),
        cmocka_unit_test(test_reprieve_ties_without_start_time_follow_upstream_sort),
        cmocka_unit_test(test_reprieve_tries_pdb_violating_victims_first),
        cmocka_unit_test(test_pdb_steers_the_node_choice),
        cmocka_unit_test(test_pdb_disrupted_pods_do_not_count_as_violations),
        cmocka_unit_test(test_pdb_split_keeps_order_and_budget),
        cmocka_unit_test(test_lower_priority_nominated_pods_lose_their_nomination),
        cmocka_unit_test(test_own_victims_on_the_nominators_node_make_the_pod_wait),
        cmocka_unit_test(test_failed_eviction_does_not_make_the_pod_wait),
        cmocka_unit_test(test_preemptor_stays_gated_until_its_victims_are_seen_deleted),
        cmocka_unit_test(test_preemptor_is_gated_until_the_last_victim_is_deleted),
        cmocka_unit_test(test_waiting_victim_is_rejected_not_deleted),
        cmocka_unit_test(test_num_candidates_from_args),
        cmocka_unit_test(test_dry_run_stops_at_num_candidates_from_the_offset),
        cmocka_unit_test(test_dry_run_looks_past_num_candidates_for_a_pdb_clean_node),
        cmocka_unit_test(test_random_offset_is_seedable),
        cmocka_unit_test(test_pick_one_node_criteria_in_order),
        cmocka_unit_test(test_node_with_lowest_highest_priority_victim_wins),
        cmocka_unit_test(test_name_tie_rule_picks_smallest_node_name),
        cmocka_unit_test(test_name_tie_rule_orders_equal_victims_by_name),
        cmocka_unit_test(test_args_validation),
        cmocka_unit_test(test_go_sort_matches_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
