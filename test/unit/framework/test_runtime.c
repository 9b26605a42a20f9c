/* The framework's extension point contracts (upstream runtime/framework.go
 * semantics), run through the public run functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "framework/snapshot.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/holds.h"
#include "framework/status.h"
#include "testutil.h"
#include "util/clock.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a trace of plugin calls ------------------------------------------- */

static char trace[4096];
static void tr(const char *fmt, const char *name) {
    size_t n = strlen(trace);
    snprintf(trace + n, sizeof(trace) - n, fmt, name);
    strncat(trace, " ", sizeof(trace) - strlen(trace) - 1);
}

/* ---- test plugins --------------------------------------------------------- */

static ks_status *pf_skip(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                          size_t n, ks_pre_filter_result **r) {
    return ks_status_new(KS_SKIP, NULL);
}
static ks_status *filter_never(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    return ks_status_new(KS_UNSCHEDULABLE, "filter of a skipped plugin ran");
}
static const ks_plugin_ops p_skip = {.abi_version = KS_ABI_VERSION, .name = "SkipMe", .pre_filter = pf_skip,
                                     .filter = filter_never};

static ks_pre_filter_result *set_of(ks_cycle_state *st, const char *a, const char *b) {
    ks_pre_filter_result *r = ks_pre_filter_result_new(st);
    if (a) ks_pre_filter_result_add(r, a);
    if (b) ks_pre_filter_result_add(r, b);
    return r;
}
static ks_status *pf_ab(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                        size_t n, ks_pre_filter_result **r) {
    *r = set_of(st, "n1", "n2");
    return NULL;
}
static ks_status *pf_bc(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                        size_t n, ks_pre_filter_result **r) {
    *r = set_of(st, "n2", "n3");
    return NULL;
}
static ks_status *pf_c(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                       size_t n, ks_pre_filter_result **r) {
    *r = set_of(st, "n3", NULL);
    return NULL;
}
static ks_status *pf_none(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                          size_t n, ks_pre_filter_result **r) {
    *r = set_of(st, NULL, NULL);
    return NULL;
}
static ks_status *pf_unsched(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **r) {
    return ks_status_new(KS_UNSCHEDULABLE, "not now");
}
static ks_status *pf_unres(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                           size_t n, ks_pre_filter_result **r) {
    return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "never");
}
static ks_status *pf_err(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                         size_t n, ks_pre_filter_result **r) {
    return ks_status_new(KS_ERROR, "boom");
}
static const ks_plugin_ops p_ab = {.abi_version = KS_ABI_VERSION, .name = "SetAB", .pre_filter = pf_ab};
static const ks_plugin_ops p_bc = {.abi_version = KS_ABI_VERSION, .name = "SetBC", .pre_filter = pf_bc};
static const ks_plugin_ops p_c = {.abi_version = KS_ABI_VERSION, .name = "SetC", .pre_filter = pf_c};
static const ks_plugin_ops p_none = {.abi_version = KS_ABI_VERSION, .name = "SetNone", .pre_filter = pf_none};
static const ks_plugin_ops p_unsched = {.abi_version = KS_ABI_VERSION, .name = "PFUnsched", .pre_filter = pf_unsched};
static const ks_plugin_ops p_unres = {.abi_version = KS_ABI_VERSION, .name = "PFUnres", .pre_filter = pf_unres};
static const ks_plugin_ops p_pferr = {.abi_version = KS_ABI_VERSION, .name = "PFErr", .pre_filter = pf_err};

static ks_status *f_not_n1(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    tr("Filter:%s", "NotN1");
    return strcmp(ks_str(ni->name), "n1") == 0 ? ks_status_new(KS_UNSCHEDULABLE, "not on n1") : NULL;
}
static ks_status *f_err(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    tr("Filter:%s", "FErr");
    return ks_status_new(KS_ERROR, "boom");
}
static const ks_plugin_ops p_not_n1 = {.abi_version = KS_ABI_VERSION, .name = "NotN1", .filter = f_not_n1};
static const ks_plugin_ops p_ferr = {.abi_version = KS_ABI_VERSION, .name = "FErr", .filter = f_err};

/* Needs company: fails on a node without pods (tests the second pass of
 * filtering with nominated pods). */
static ks_status *f_company(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    return ni->npods ? NULL : ks_status_new(KS_UNSCHEDULABLE, "lonely");
}
static const ks_plugin_ops p_company = {.abi_version = KS_ABI_VERSION, .name = "Company", .filter = f_company};

/* Reserve R1..R3 (R3 can be told to fail). */
static bool r3_fails;
static ks_status *reserve_r(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);
static void unreserve_r(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node);
static void *named(const ks_args *a, ks_handle *h, char **err);
static const ks_plugin_ops p_r1 = {.abi_version = KS_ABI_VERSION, .name = "R1", .create = named,
                                   .reserve = reserve_r, .unreserve = unreserve_r};
static const ks_plugin_ops p_r2 = {.abi_version = KS_ABI_VERSION, .name = "R2", .create = named,
                                   .reserve = reserve_r, .unreserve = unreserve_r};
static const ks_plugin_ops p_r3 = {.abi_version = KS_ABI_VERSION, .name = "R3", .create = named,
                                   .reserve = reserve_r, .unreserve = unreserve_r};
static const char *names_by_create[16];
static int ncreated;
static void *named(const ks_args *a, ks_handle *h, char **err) {
    /* self = a static string naming the instance */
    static const char *const pool[] = {"R1", "R2", "R3", "B1", "B2", "B3", "W1", "W2"};
    const char *n = pool[ncreated % 8];
    names_by_create[ncreated++ % 16] = n;
    return (void *)n;
}
static ks_status *reserve_r(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    tr("Reserve:%s", self);
    if (r3_fails && strcmp(self, "R3") == 0) return ks_status_new(KS_UNSCHEDULABLE, "no room");
    return NULL;
}
static void unreserve_r(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    tr("Unreserve:%s", self);
}

/* Bind B1 (skips), B2 (binds), B3 (never reached). */
static ks_status *bind_b(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    tr("Bind:%s", self);
    return strcmp(self, "B1") == 0 ? ks_status_new(KS_SKIP, NULL) : NULL;
}
static void *bname(const ks_args *a, ks_handle *h, char **err);
static const ks_plugin_ops p_b1 = {.abi_version = KS_ABI_VERSION, .name = "B1", .create = bname, .bind = bind_b};
static const ks_plugin_ops p_b2 = {.abi_version = KS_ABI_VERSION, .name = "B2", .create = bname, .bind = bind_b};
static const ks_plugin_ops p_b3 = {.abi_version = KS_ABI_VERSION, .name = "B3", .create = bname, .bind = bind_b};
static int nb;
static void *bname(const ks_args *a, ks_handle *h, char **err) {
    static const char *const pool[] = {"B1", "B2", "B3"};
    return (void *)pool[nb++ % 3];
}

/* Permit: W waits (5 s), A allows. */
static ks_handle *permit_handle;
static void *permit_create(const ks_args *a, ks_handle *h, char **err) {
    permit_handle = h;
    return h;
}
static ks_status *permit_wait(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                              int64_t *timeout_ms) {
    *timeout_ms = 5000;
    return ks_status_new(KS_WAIT, NULL);
}
static ks_status *permit_reject(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                                int64_t *timeout_ms) {
    return ks_status_new(KS_UNSCHEDULABLE, "gang incomplete");
}
static const ks_plugin_ops p_wait = {.abi_version = KS_ABI_VERSION, .name = "Gang", .create = permit_create,
                                     .permit = permit_wait};
static const ks_plugin_ops p_wait2 = {.abi_version = KS_ABI_VERSION, .name = "Gang2", .permit = permit_wait};
static const ks_plugin_ops p_reject = {.abi_version = KS_ABI_VERSION, .name = "Deny", .permit = permit_reject};

/* Score: S1 scores 10 x the node's number, normalizes to 100 - x;
 * S2 scores 7; Big scores 150. */
static ks_status *score_s1(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                           int64_t *score) {
    *score = 10 * atoi(ks_str(ni->name) + 1);
    return NULL;
}
static ks_status *norm_s1(void *self, ks_cycle_state *st, const ks_pod *pod, ks_node_score *s, size_t n) {
    for (size_t i = 0; i < n; i++) s[i].score = 100 - s[i].score;
    return NULL;
}
static ks_status *score_s2(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                           int64_t *score) {
    *score = 7;
    return NULL;
}
static ks_status *score_big(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                            int64_t *score) {
    *score = 150;
    return NULL;
}
static ks_status *prescore_skip(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *n,
                                size_t nn) {
    return ks_status_new(KS_SKIP, NULL);
}
static const ks_plugin_ops p_s1 = {.abi_version = KS_ABI_VERSION, .name = "S1", .score = score_s1,
                                   .normalize_score = norm_s1};
static const ks_plugin_ops p_s2 = {.abi_version = KS_ABI_VERSION, .name = "S2", .score = score_s2};
static const ks_plugin_ops p_s2skip = {.abi_version = KS_ABI_VERSION, .name = "S2Skip", .score = score_s2,
                                       .pre_score = prescore_skip};
static const ks_plugin_ops p_big = {.abi_version = KS_ABI_VERSION, .name = "Big", .score = score_big};

/* Writes to the NodeInfo it is handed. */
static ks_status *f_evil(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    ((ks_node_info *)ni)->requested.milli_cpu += 1;
    return NULL;
}
static const ks_plugin_ops p_evil = {.abi_version = KS_ABI_VERSION, .name = "Evil", .filter = f_evil};

/* ---- fixture -------------------------------------------------------------- */

static const ks_plugin_ops *const all_plugins[] = {
    &p_skip, &p_ab, &p_bc, &p_c, &p_none, &p_unsched, &p_unres, &p_pferr, &p_not_n1, &p_ferr,
    &p_company, &p_r1, &p_r2, &p_r3, &p_b1, &p_b2, &p_b3, &p_wait, &p_wait2, &p_reject, &p_s1,
    &p_s2, &p_s2skip, &p_big, &p_evil};

typedef struct fx {
    ks_registry *reg;
    ks_snapshot *snap;
    ks_node *nodes[3];
    ks_pod *pod;
    ks_cycle_state *st;
} fx;

static fx F;

static int setup(void **state) {
    memset(&F, 0, sizeof(F));
    trace[0] = 0;
    F.reg = tu_registry(all_plugins, sizeof(all_plugins) / sizeof(all_plugins[0]));
    F.nodes[0] = tu_node("n1", 1000, 1 << 30, NULL);
    F.nodes[1] = tu_node("n2", 2000, 1 << 30, NULL);
    F.nodes[2] = tu_node("n3", 3000, 1 << 30, NULL);
    F.snap = ks_snapshot_from(F.nodes, 3, NULL, 0);
    F.pod = tu_pod("default", "p", 500, 1 << 20, 0);
    F.st = ks_cycle_state_new();
    return 0;
}

static int teardown(void **state) {
    ks_cycle_state_free(F.st);
    ks_pod_unref(F.pod);
    ks_snapshot_free(F.snap);
    for (int i = 0; i < 3; i++) ks_node_unref(F.nodes[i]);
    ks_registry_free(F.reg);
    return 0;
}

static ks_framework *make_fw(tu_profile *tp) {
    char *err = NULL;
    ks_framework_options o = {.parallelism = 2};
    ks_framework *fw = ks_framework_new(F.reg, &tp->p, &o, &err);
    if (!fw) fail_msg("framework: %s", err);
    ks_framework_set_snapshot(fw, F.snap);
    return fw;
}

static char *msg_of(const ks_status *s) { return ks_status_message(s); }

/* ---- PreFilter ----------------------------------------------------------- */

static void test_prefilter_skip_skips_filter(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_skip, 0);
    ks_framework *fw = make_fw(&tp);
    ks_pre_filter_result *r = (void *)1;
    ks_status *s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL);
    assert_null(s);
    assert_null(r);
    for (int i = 0; i < 3; i++) assert_null(ks_framework_run_filter(fw, F.st, F.pod, F.snap->nodes[i]));
    ks_framework_free(fw);
}

static void test_prefilter_node_sets_intersect(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_ab, 0);
    tu_profile_add_plugin(&tp, &p_bc, 0);
    ks_framework *fw = make_fw(&tp);
    ks_pre_filter_result *r = NULL;
    ks_plugin_mask rej;
    ks_status *s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, &rej);
    assert_null(s);
    assert_non_null(r);
    assert_int_equal(ks_pre_filter_result_len(r), 1);
    assert_string_equal(ks_pre_filter_result_node(r, 0), "n2");
    assert_true(ks_pre_filter_result_has(r, "n2"));
    assert_false(ks_pre_filter_result_has(r, "n1"));
    assert_true(ks_plugin_mask_has(&rej, (unsigned)ks_framework_plugin_index(fw, "SetAB")));
    assert_true(ks_plugin_mask_has(&rej, (unsigned)ks_framework_plugin_index(fw, "SetBC")));
    ks_framework_free(fw);
}

static void test_prefilter_empty_intersection(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_c, 0);
    tu_profile_add_plugin(&tp, &p_ab, 0);
    ks_framework *fw = make_fw(&tp);
    ks_pre_filter_result *r = NULL;
    ks_status *s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    char *m = msg_of(s);
    assert_string_equal(m, "node(s) didn't satisfy plugin(s) [SetAB SetC] simultaneously");
    free(m);
    ks_status_free(s);
    ks_framework_free(fw);

    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_none, 0);
    fw = make_fw(&tp);
    s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL);
    m = msg_of(s);
    assert_string_equal(m, "node(s) didn't satisfy plugin SetNone");
    free(m);
    ks_status_free(s);
    ks_framework_free(fw);
}

static void test_prefilter_statuses(void **state) {
    /* Unschedulable keeps going (a later UnschedulableAndUnresolvable
     * wins); errors are wrapped and name the plugin. */
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_unsched, 0);
    tu_profile_add_plugin(&tp, &p_unres, 0);
    ks_framework *fw = make_fw(&tp);
    ks_pre_filter_result *r = NULL;
    ks_status *s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_string_equal(ks_status_plugin(s), "PFUnres");
    ks_status_free(s);
    ks_framework_free(fw);

    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_unsched, 0);
    fw = make_fw(&tp);
    s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    assert_string_equal(ks_status_plugin(s), "PFUnsched");
    ks_status_free(s);
    ks_framework_free(fw);

    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_pferr, 0);
    fw = make_fw(&tp);
    s = ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL);
    assert_int_equal(ks_status_code(s), KS_ERROR);
    char *m = msg_of(s);
    assert_string_equal(m, "running PreFilter plugin \"PFErr\": boom");
    free(m);
    ks_status_free(s);
    ks_framework_free(fw);
}

/* ---- Filter --------------------------------------------------------------- */

static void test_filter_first_rejection_named(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_not_n1, 0);
    tu_profile_add_plugin(&tp, &p_ferr, 0);
    ks_framework *fw = make_fw(&tp);
    ks_pre_filter_result *r = NULL;
    assert_null(ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL));
    const ks_node_info *n1 = ks_snapshot_node_by_name(F.snap, "n1");
    ks_status *s = ks_framework_run_filter(fw, F.st, F.pod, n1);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    assert_string_equal(ks_status_plugin(s), "NotN1");
    assert_string_equal(trace, "Filter:NotN1 "); /* FErr not reached */
    ks_status_free(s);
    s = ks_framework_run_filter(fw, F.st, F.pod, ks_snapshot_node_by_name(F.snap, "n2"));
    assert_int_equal(ks_status_code(s), KS_ERROR);
    assert_string_equal(ks_status_plugin(s), "FErr");
    char *m = msg_of(s);
    assert_string_equal(m, "running \"FErr\" filter plugin: boom");
    free(m);
    ks_status_free(s);
    /* One plugin alone (explain). */
    s = ks_framework_run_filter_plugin(fw, F.st, F.pod, n1, (size_t)ks_framework_plugin_index(fw, "FErr"));
    assert_int_equal(ks_status_code(s), KS_ERROR);
    ks_status_free(s);
    ks_framework_free(fw);
}

static ks_pod *nominated[2];
static size_t nnominated;
static size_t nom_pods(void *ctx, ks_id node, ks_pod **out, size_t max) {
    if (strcmp(ks_str(node), "n1") != 0) return 0;
    for (size_t i = 0; i < nnominated && i < max; i++) out[i] = ks_pod_ref(nominated[i]);
    return nnominated;
}
static size_t nom_count(void *ctx, ks_id node) { return strcmp(ks_str(node), "n1") == 0 ? nnominated : 0; }

static void test_filter_with_nominated_pods(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    ks_framework *fw = make_fw(&tp);
    ks_framework_env env = {.nominated_pods = nom_pods, .nominated_count = nom_count};
    ks_framework_set_env(fw, &env);
    const ks_node_info *n1 = ks_snapshot_node_by_name(F.snap, "n1");
    ks_pre_filter_result *r = NULL;
    assert_null(ks_framework_run_pre_filter(fw, F.st, F.pod, &r, NULL));

    /* A higher-priority pod nominated to n1 takes 800m of its 1000m. */
    nominated[0] = tu_pod("default", "big", 800, 0, 100);
    nnominated = 1;
    ks_status *s = ks_framework_run_filter_with_nominated_pods(fw, F.st, F.pod, n1);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    char *m = msg_of(s);
    assert_string_equal(m, "Insufficient cpu");
    free(m);
    ks_status_free(s);
    assert_int_equal(n1->npods, 0); /* the snapshot is untouched */
    ks_pod_unref(nominated[0]);

    /* A lower-priority one is ignored. */
    nominated[0] = tu_pod("default", "small", 800, 0, -5);
    s = ks_framework_run_filter_with_nominated_pods(fw, F.st, F.pod, n1);
    assert_null(s);
    ks_pod_unref(nominated[0]);
    ks_framework_free(fw);

    /* Second pass: passing with the nominated pod is not enough, the node
     * must also pass without it. A cycle state of its own: the first one's
     * filter list belongs to the framework just freed, and a new one may
     * come at its address (TSan, without ASan's quarantine, saw it). */
    ks_cycle_state_free(F.st);
    F.st = ks_cycle_state_new();
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_company, 0);
    fw = make_fw(&tp);
    ks_framework_set_env(fw, &env);
    nominated[0] = tu_pod("default", "friend", 0, 0, 100);
    s = ks_framework_run_filter_with_nominated_pods(fw, F.st, F.pod, n1);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    m = msg_of(s);
    assert_string_equal(m, "lonely");
    free(m);
    ks_status_free(s);
    ks_pod_unref(nominated[0]);
    nnominated = 0;
    ks_framework_free(fw);
}

/* ---- Score ---------------------------------------------------------------- */

static void test_score_raw_normalized_weighted(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_s1, 2);
    tu_profile_add_plugin(&tp, &p_s2, 3);
    ks_framework *fw = make_fw(&tp);
    const ks_node_info *const *nodes = (const ks_node_info *const *)F.snap->nodes;
    assert_null(ks_framework_run_pre_score(fw, F.st, F.pod, nodes, 3));
    ks_score_result r;
    assert_null(ks_framework_run_score(fw, F.st, F.pod, nodes, 3, &r));
    assert_int_equal(r.nplugins, 2);
    assert_string_equal(r.plugins[0], "S1");
    assert_int_equal(r.weights[0], 2);
    assert_int_equal(r.weights[1], 3);
    for (size_t i = 0; i < 3; i++) {
        int k = atoi(ks_str(r.nodes[i]->name) + 1);
        assert_int_equal(r.raw[i * 2 + 0], 10 * k);
        assert_int_equal(r.normalized[i * 2 + 0], 100 - 10 * k);
        assert_int_equal(r.weighted[i * 2 + 0], 2 * (100 - 10 * k));
        assert_int_equal(r.raw[i * 2 + 1], 7);
        assert_int_equal(r.weighted[i * 2 + 1], 21);
        assert_int_equal(r.total[i], 2 * (100 - 10 * k) + 21);
    }
    ks_framework_free(fw);
}

static void test_score_out_of_range_and_prescore_skip(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_big, 1);
    ks_framework *fw = make_fw(&tp);
    const ks_node_info *const *nodes = (const ks_node_info *const *)F.snap->nodes;
    ks_score_result r;
    ks_status *s = ks_framework_run_score(fw, F.st, F.pod, nodes, 3, &r);
    assert_int_equal(ks_status_code(s), KS_ERROR);
    char *m = msg_of(s);
    assert_string_equal(m, "applying score defaultWeights on Score plugins: plugin \"Big\" returns an invalid "
                           "score 150, it should in the range of [0, 100] after normalizing");
    free(m);
    ks_status_free(s);
    ks_framework_free(fw);

    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_s2skip, 1);
    tu_profile_add_plugin(&tp, &p_s2, 1);
    fw = make_fw(&tp);
    assert_null(ks_framework_run_pre_score(fw, F.st, F.pod, nodes, 3));
    assert_null(ks_framework_run_score(fw, F.st, F.pod, nodes, 3, &r));
    assert_int_equal(r.nplugins, 1);
    assert_string_equal(r.plugins[0], "S2");
    ks_framework_free(fw);
}

/* ---- Reserve / Unreserve ------------------------------------------------ */

static void test_reserve_unreserve_reverse(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_r1, 0);
    tu_profile_add_plugin(&tp, &p_r2, 0);
    tu_profile_add_plugin(&tp, &p_r3, 0);
    ncreated = 0;
    ks_framework *fw = make_fw(&tp);
    r3_fails = true;
    ks_status *s = ks_framework_run_reserve(fw, F.st, F.pod, "n1");
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    assert_string_equal(ks_status_plugin(s), "R3");
    ks_status_free(s);
    ks_framework_run_unreserve(fw, F.st, F.pod, "n1");
    assert_string_equal(trace, "Reserve:R1 Reserve:R2 Reserve:R3 Unreserve:R3 Unreserve:R2 Unreserve:R1 ");
    r3_fails = false;
    ks_framework_free(fw);
}

/* ---- Bind ------------------------------------------------------------------ */

static void test_bind_stops_at_first_non_skip(void **state) {
    tu_profile tp;
    memset(&tp, 0, sizeof(tp));
    tu_profile_init(&tp, NULL);
    tp.p.resolved[KS_EP_BIND].n = 0; /* replace TestBind */
    tu_profile_add_plugin(&tp, &p_b1, 0);
    tu_profile_add_plugin(&tp, &p_b2, 0);
    tu_profile_add_plugin(&tp, &p_b3, 0);
    nb = 0;
    ks_framework *fw = make_fw(&tp);
    assert_null(ks_framework_run_bind(fw, F.st, F.pod, "n1"));
    assert_string_equal(trace, "Bind:B1 Bind:B2 ");
    ks_framework_free(fw);
}

/* ---- Permit ---------------------------------------------------------------- */

static void test_permit_reject(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_wait, 0);
    tu_profile_add_plugin(&tp, &p_reject, 0);
    ks_framework *fw = make_fw(&tp);
    ks_status *s = ks_framework_run_permit(fw, F.st, F.pod, "n1");
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    assert_string_equal(ks_status_plugin(s), "Deny");
    ks_status_free(s);
    ks_framework_free(fw);
}

static ks_framework *permit_fw(ks_clock *clock, bool two) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_wait, 0);
    if (two) tu_profile_add_plugin(&tp, &p_wait2, 0);
    ks_framework *fw = make_fw(&tp);
    ks_framework_share(fw, ks_waiting_pods_new(clock), NULL);
    fw->owns_waiting = true;
    return fw;
}

static void test_permit_wait_allow_through_handle(void **state) {
    ks_clock *clock = ks_clock_sim_new(0);
    ks_framework *fw = permit_fw(clock, true);
    ks_status *s = ks_framework_run_permit(fw, F.st, F.pod, "n1");
    assert_int_equal(ks_status_code(s), KS_WAIT);
    char *m = msg_of(s);
    assert_string_equal(m, "one or more plugins asked to wait and no plugin rejected pod \"p\"");
    free(m);
    ks_status_free(s);

    /* Another plugin finds the waiting pod through the handle. */
    ks_waiting_pod *list[4];
    assert_int_equal(ks_handle_waiting_pods(permit_handle, list, 4), 1);
    ks_waiting_pod *w = ks_handle_get_waiting_pod(permit_handle, F.pod->uid);
    assert_ptr_equal(w, list[0]);
    assert_ptr_equal(ks_waiting_pod_pod(w), F.pod);
    ks_waiting_pod_allow(w, "Gang");
    ks_status *v = NULL;
    assert_false(ks_framework_try_wait_on_permit(fw, F.pod, false, &v)); /* Gang2 still waits */
    ks_waiting_pod_allow(w, "Gang2");
    assert_true(ks_framework_try_wait_on_permit(fw, F.pod, false, &v));
    assert_null(v);
    assert_int_equal(ks_handle_waiting_pods(permit_handle, list, 4), 0);
    ks_framework_free(fw);
    ks_clock_free(clock);
}

static void test_permit_wait_reject_and_timeout(void **state) {
    ks_clock *clock = ks_clock_sim_new(0);
    ks_framework *fw = permit_fw(clock, false);
    ks_status *s = ks_framework_run_permit(fw, F.st, F.pod, "n1");
    ks_status_free(s);
    ks_waiting_pod *w = ks_handle_get_waiting_pod(permit_handle, F.pod->uid);
    ks_waiting_pod_reject(w, "Gang", "member failed");
    ks_status *v = NULL;
    assert_true(ks_framework_try_wait_on_permit(fw, F.pod, false, &v));
    assert_int_equal(ks_status_code(v), KS_UNSCHEDULABLE);
    assert_string_equal(ks_status_plugin(v), "Gang");
    char *m = msg_of(v);
    assert_string_equal(m, "member failed");
    free(m);
    ks_status_free(v);

    /* Timeout: nothing happens before the deadline, then the plugin that
     * asked to wait rejects with upstream's message. */
    s = ks_framework_run_permit(fw, F.st, F.pod, "n1");
    ks_status_free(s);
    ks_waiting_pods *wp = ks_framework_waiting(fw);
    assert_int_equal(ks_waiting_pods_next_deadline(wp), 5 * KS_NS_PER_SEC);
    ks_clock_sim_set(clock, 5 * KS_NS_PER_SEC - 1);
    assert_int_equal(ks_waiting_pods_expire(wp, ks_clock_now(clock)), 0);
    assert_false(ks_framework_try_wait_on_permit(fw, F.pod, false, &v));
    ks_clock_sim_set(clock, 5 * KS_NS_PER_SEC);
    assert_int_equal(ks_waiting_pods_expire(wp, ks_clock_now(clock)), 1);
    assert_true(ks_framework_try_wait_on_permit(fw, F.pod, false, &v));
    m = msg_of(v);
    assert_string_equal(m, "rejected due to timeout after waiting 5s at plugin Gang");
    free(m);
    assert_string_equal(ks_status_plugin(v), "Gang");
    ks_status_free(v);
    ks_framework_free(fw);
    ks_clock_free(clock);
}

/* A plugin's pointer from the handle outlives the pod's removal from the
 * map (its binding thread finishing meanwhile) until the thread releases
 * its holds; then the waiting pod and its pod reference go. */
static void test_waiting_pod_held_past_removal(void **state) {
    ks_clock *clock = ks_clock_sim_new(0);
    ks_framework *fw = permit_fw(clock, false);
    int refs0 = atomic_load(&F.pod->refs);
    ks_status_free(ks_framework_run_permit(fw, F.st, F.pod, "n1"));
    assert_int_equal(atomic_load(&F.pod->refs), refs0 + 1);
    ks_waiting_pod *list[2];
    assert_int_equal(ks_handle_waiting_pods(permit_handle, list, 2), 1);
    ks_waiting_pod *w = ks_handle_get_waiting_pod(permit_handle, F.pod->uid);
    assert_ptr_equal(w, list[0]);

    ks_waiting_pod_allow(w, "Gang");
    ks_status *v = NULL;
    assert_true(ks_framework_try_wait_on_permit(fw, F.pod, false, &v)); /* removed */
    assert_null(v);
    assert_int_equal(ks_handle_waiting_pods(permit_handle, list, 2), 0);
    assert_null(ks_handle_get_waiting_pod(permit_handle, F.pod->uid));
    /* Still readable and a no-op to decide again (ASan checks the reads). */
    assert_ptr_equal(ks_waiting_pod_pod(w), F.pod);
    ks_waiting_pod_reject(w, "Gang", "late");
    assert_int_equal(atomic_load(&F.pod->refs), refs0 + 1);

    ks_holds_release();
    assert_int_equal(atomic_load(&F.pod->refs), refs0);
    ks_framework_free(fw);
    ks_clock_free(clock);
}

/* ---- immutability ------------------------------------------------------- */

static void test_immutability_check_catches_writer(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &p_evil, 0);
    char *err = NULL;
    ks_framework_options o = {.parallelism = 1, .debug_checksums = true};
    ks_framework *fw = ks_framework_new(F.reg, &tp.p, &o, &err);
    ks_framework_set_snapshot(fw, F.snap);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child must die in the check, with a message naming the
         * plugin and the extension point. */
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        ks_status_free(ks_framework_run_filter(fw, F.st, F.pod, F.snap->nodes[0]));
        _exit(0);
    }
    close(pipefd[1]);
    char buf[512] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(buf) - 1 && (r = read(pipefd[0], buf + got, sizeof(buf) - 1 - got)) > 0) got += (size_t)r;
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_non_null(strstr(buf, "plugin Evil changed the NodeInfo of node n1 during Filter"));
    ks_framework_free(fw);
}

/* ---- registry ---------------------------------------------------------------- */

static void test_registry_abi_and_duplicates(void **state) {
    ks_registry *r = ks_registry_new();
    ks_plugin_ops bad = p_s2;
    bad.abi_version = KS_ABI_VERSION + 1;
    char *err = NULL;
    assert_false(ks_registry_add(r, &bad, &err));
    assert_non_null(strstr(err, "ABI"));
    free(err);
    err = NULL;
    assert_true(ks_registry_add(r, &p_s2, &err));
    assert_false(ks_registry_add(r, &p_s2, &err));
    assert_non_null(strstr(err, "already registered"));
    free(err);
    assert_ptr_equal(ks_registry_find(r, "S2"), &p_s2);
    assert_null(ks_registry_find(r, "S3"));
    free(ks_registry_take_error(r));
    ks_registry_free(r);
}

static void test_profile_errors(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add(&tp, KS_EP_FILTER, "Nope", 0);
    char *err = NULL;
    assert_null(ks_framework_new(F.reg, &tp.p, NULL, &err));
    assert_string_equal(err, "FilterPlugin \"Nope\" does not exist");
    free(err);
    tu_profile_init(&tp, NULL);
    tu_profile_add(&tp, KS_EP_FILTER, "S2", 0);
    assert_null(ks_framework_new(F.reg, &tp.p, NULL, &err));
    assert_string_equal(err, "plugin \"S2\" does not extend FilterPlugin plugin");
    free(err);
    tu_profile_init(&tp, NULL);
    tp.p.resolved[KS_EP_BIND].n = 0;
    assert_null(ks_framework_new(F.reg, &tp.p, NULL, &err));
    assert_string_equal(err, "at least one bind plugin is needed for profile with scheduler name \"default-scheduler\"");
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prefilter_skip_skips_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefilter_node_sets_intersect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefilter_empty_intersection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefilter_statuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_first_rejection_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_with_nominated_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_score_raw_normalized_weighted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_score_out_of_range_and_prescore_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserve_unreserve_reverse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_stops_at_first_non_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permit_reject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permit_wait_allow_through_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permit_wait_reject_and_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waiting_pod_held_past_removal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_immutability_check_catches_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_abi_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profile_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
