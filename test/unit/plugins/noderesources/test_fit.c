/* NodeResourcesFit: filter verdicts and reasons, the three scoring
 * strategies, args defaults and validation. Cases and numbers from
 * upstream fit_test.go, least_allocated_test.go, most_allocated_test.go and
 * requested_to_capacity_ratio_test.go; more where ksched needs them. */
#include "testutil_plugins.h"
#include "plugins/helper/shape_score.h"
#include "plugins/noderesources/resource_allocation.h"
#include "api/cluster.h"
#include "codec/decode.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_node_resources_fit;

#define EXT_A "example.com/aaa"
#define EXT_B "example.com/bbb"
#define K8S_A "kubernetes.io/something"
#define K8S_B "subdomain.kubernetes.io/something"
#define HUGE_A "hugepages-2Mi"

/* ---- filter ---- */

/* A pod with one container per (cpu, memory) pair, no scalars. */
static ks_pod *res_pod(const char *name, int64_t cpu, int64_t mem) {
    ks_pod *p = tp_pod(name);
    tp_container(p, cpu, mem);
    return p;
}

/* Upstream's test node: 10m cpu, 20 bytes, 32 pods, 5 example.com/aaa,
 * 20 bytes ephemeral storage, 5 hugepages-2Mi. */
static ks_node *fit_node(int64_t pods) {
    ks_node *n = tp_node("node");
    tp_node_alloc(n, 10, 20, pods);
    tp_node_ephemeral(n, 20);
    tp_node_scalar(n, EXT_A, 5);
    tp_node_scalar(n, HUGE_A, 5);
    return n;
}

/* Verdict of pod on fit_node(pods) already running `existing`. */
static const char *verdict_args(ks_pod *pod, ks_pod *existing, int64_t pods, const char *args) {
    static char buf[1024];
    tp_pod_done(pod);
    tp_pod_done(existing);
    ks_node *n = fit_node(pods);
    ks_node_info *ni = tp_node_info(n, &existing, 1);
    tp_plugin p = tp_create(&ks_plugin_node_resources_fit, args ? tp_args(args) : NULL, NULL);
    char *v[1];
    tp_filter_all(&p, pod, &ni, 1, v);
    snprintf(buf, sizeof(buf), "%s", v[0]);
    free(v[0]);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(existing);
    ks_pod_unref(pod);
    return buf;
}

static const char *verdict(ks_pod *pod, ks_pod *existing) { return verdict_args(pod, existing, 32, NULL); }

static void no_request_always_fits(void **st) {
    assert_string_equal(verdict(tp_pod("p"), res_pod("e", 10, 20)), "Success");
}

static void too_many_resources_fails_each_named(void **st) {
    assert_string_equal(verdict(res_pod("p", 1, 1), res_pod("e", 10, 20)),
                        "Unschedulable: Insufficient cpu, Insufficient memory");
}

static void init_container_cpu_counts_when_largest(void **st) {
    ks_pod *p = res_pod("p", 1, 1);
    tp_init_container(p, 3, 1, false);
    assert_string_equal(verdict(p, res_pod("e", 8, 19)), "Unschedulable: Insufficient cpu");
    p = res_pod("p", 1, 1);
    tp_init_container(p, 3, 1, false);
    tp_init_container(p, 2, 1, false);
    assert_string_equal(verdict(p, res_pod("e", 8, 19)), "Unschedulable: Insufficient cpu");
}

static void init_container_memory_counts_when_largest(void **st) {
    ks_pod *p = res_pod("p", 1, 1);
    tp_init_container(p, 1, 3, false);
    tp_init_container(p, 1, 2, false);
    assert_string_equal(verdict(p, res_pod("e", 9, 19)), "Unschedulable: Insufficient memory");
}

static void init_containers_take_max_not_sum(void **st) {
    ks_pod *p = res_pod("p", 1, 1);
    tp_init_container(p, 1, 1, false);
    tp_init_container(p, 1, 1, false);
    assert_string_equal(verdict(p, res_pod("e", 9, 19)), "Success");
}

static void sidecar_adds_to_containers_and_later_init_containers(void **st) {
    /* sidecar 2 + container 1 = 3 running; init after the sidecar needs
     * 2 + 5 = 7 > 3: the pod needs 7m on a node with 10 - 4 = 6 free. */
    ks_pod *p = res_pod("p", 1, 1);
    tp_init_container(p, 2, 1, true);
    tp_init_container(p, 5, 1, false);
    assert_string_equal(verdict(p, res_pod("e", 4, 0)), "Unschedulable: Insufficient cpu");
    p = res_pod("p", 1, 1);
    tp_init_container(p, 2, 1, true);
    tp_init_container(p, 5, 1, false);
    assert_string_equal(verdict(p, res_pod("e", 3, 0)), "Success");
}

static void equal_edge_case_fits(void **st) {
    assert_string_equal(verdict(res_pod("p", 5, 1), res_pod("e", 5, 19)), "Success");
    ks_pod *p = res_pod("p", 4, 1);
    tp_init_container(p, 5, 1, false);
    assert_string_equal(verdict(p, res_pod("e", 5, 19)), "Success");
}

static void one_resource_short(void **st) {
    assert_string_equal(verdict(res_pod("p", 2, 1), res_pod("e", 9, 5)),
                        "Unschedulable: Insufficient cpu");
    assert_string_equal(verdict(res_pod("p", 1, 2), res_pod("e", 5, 19)),
                        "Unschedulable: Insufficient memory");
}

static ks_pod *scalar_pod(const char *name, int64_t cpu, int64_t mem, const char *res, int64_t v) {
    ks_pod *p = tp_pod(name);
    tp_container_scalar(p, tp_container(p, cpu, mem), res, v);
    return p;
}

static void extended_resource_fits(void **st) {
    assert_string_equal(verdict(scalar_pod("p", TP_NONE, TP_NONE, EXT_A, 1), tp_pod("e")), "Success");
}

static void extended_resource_over_capacity_is_unresolvable(void **st) {
    assert_string_equal(verdict(scalar_pod("p", 1, 1, EXT_A, 10), scalar_pod("e", 0, 0, EXT_A, 0)),
                        "UnschedulableAndUnresolvable: Insufficient example.com/aaa");
}

static void extended_resource_over_free_is_resolvable(void **st) {
    assert_string_equal(verdict(scalar_pod("p", 1, 1, EXT_A, 1), scalar_pod("e", 0, 0, EXT_A, 5)),
                        "Unschedulable: Insufficient example.com/aaa");
}

static void extended_resource_sums_containers(void **st) {
    ks_pod *p = scalar_pod("p", 1, 1, EXT_A, 3);
    tp_container_scalar(p, tp_container(p, 1, 1), EXT_A, 3);
    assert_string_equal(verdict(p, scalar_pod("e", 0, 0, EXT_A, 2)),
                        "UnschedulableAndUnresolvable: Insufficient example.com/aaa");
}

static void extended_resource_init_containers_take_max(void **st) {
    ks_pod *p = tp_pod("p");
    tp_container_scalar(p, tp_init_container(p, 1, 1, false), EXT_A, 3);
    tp_container_scalar(p, tp_init_container(p, 1, 1, false), EXT_A, 3);
    assert_string_equal(verdict(p, scalar_pod("e", 0, 0, EXT_A, 2)), "Success");
}

static void unknown_extended_resource_is_unresolvable(void **st) {
    assert_string_equal(verdict(scalar_pod("p", 1, 1, EXT_B, 1), res_pod("e", 0, 0)),
                        "UnschedulableAndUnresolvable: Insufficient example.com/bbb");
}

static void kubernetes_io_resources_are_checked(void **st) {
    assert_string_equal(verdict(scalar_pod("p", 1, 1, K8S_A, 10), res_pod("e", 0, 0)),
                        "UnschedulableAndUnresolvable: Insufficient kubernetes.io/something");
    assert_string_equal(verdict(scalar_pod("p", 1, 1, K8S_B, 10), res_pod("e", 0, 0)),
                        "UnschedulableAndUnresolvable: Insufficient subdomain.kubernetes.io/something");
}

static void hugepages_are_checked(void **st) {
    assert_string_equal(verdict(scalar_pod("p", 1, 1, HUGE_A, 10), scalar_pod("e", 0, 0, HUGE_A, 0)),
                        "UnschedulableAndUnresolvable: Insufficient hugepages-2Mi");
    ks_pod *p = scalar_pod("p", 1, 1, HUGE_A, 3);
    tp_container_scalar(p, tp_container(p, 1, 1), HUGE_A, 3);
    assert_string_equal(verdict(p, scalar_pod("e", 0, 0, HUGE_A, 2)),
                        "UnschedulableAndUnresolvable: Insufficient hugepages-2Mi");
}

static void ignored_resource_is_not_checked(void **st) {
    assert_string_equal(verdict_args(scalar_pod("p", 1, 1, EXT_B, 1), res_pod("e", 0, 0), 32,
                                     "ignoredResources: [example.com/bbb]"),
                        "Success");
}

static void ignored_resource_group_is_not_checked(void **st) {
    ks_pod *p = scalar_pod("p", 1, 1, EXT_B, 1);
    tp_container_scalar(p, &p->containers[0], K8S_A, 1);
    assert_string_equal(verdict_args(p, res_pod("e", 0, 0), 32, "ignoredResourceGroups: [example.com]"),
                        "UnschedulableAndUnresolvable: Insufficient kubernetes.io/something");
}

static void ignored_groups_never_apply_to_native_resources(void **st) {
    /* kubernetes.io/ resources are not extended: a group named like their
     * prefix does not hide them. */
    assert_string_equal(verdict_args(scalar_pod("p", 1, 1, K8S_A, 1), res_pod("e", 0, 0), 32,
                                     "ignoredResourceGroups: [kubernetes.io]"),
                        "UnschedulableAndUnresolvable: Insufficient kubernetes.io/something");
}

static void zero_scalar_request_is_not_checked(void **st) {
    assert_string_equal(verdict(scalar_pod("p", 1, 1, EXT_B, 0), res_pod("e", 0, 0)), "Success");
}

static void overhead_is_added_to_the_request(void **st) {
    ks_pod *p = res_pod("p", 1, 1);
    tp_pod_overhead(p, 3, 13);
    assert_string_equal(verdict(p, res_pod("e", 5, 5)), "Success");
    p = res_pod("p", 1, 1);
    tp_pod_overhead(p, 1, 15);
    assert_string_equal(verdict(p, res_pod("e", 5, 5)), "Unschedulable: Insufficient memory");
}

static void ephemeral_storage_is_checked(void **st) {
    ks_pod *p = tp_pod("p");
    tp_container_ephemeral(tp_container(p, TP_NONE, TP_NONE), 25);
    assert_string_equal(verdict(p, res_pod("e", 0, 0)),
                        "UnschedulableAndUnresolvable: Insufficient ephemeral-storage");
    p = tp_pod("p");
    tp_container_ephemeral(tp_container(p, TP_NONE, TP_NONE), 10);
    ks_pod *e = tp_pod("e");
    tp_container_ephemeral(tp_container(e, TP_NONE, TP_NONE), 15);
    assert_string_equal(verdict(p, e), "Unschedulable: Insufficient ephemeral-storage");
}

static void pod_level_requests_override_containers(void **st) {
    ks_pod *p = res_pod("p", 1, 1);
    ks_pod_level *lv = ks_pod_level_make(p);
    lv->has_requests = true;
    lv->requests.milli_cpu = 7;
    lv->requests.memory = 2;
    assert_string_equal(verdict(p, res_pod("e", 5, 5)), "Unschedulable: Insufficient cpu");
}

static void scalar_reasons_are_in_name_order_after_native(void **st) {
    ks_pod *p = tp_pod("p");
    ks_container *c = tp_container(p, 11, 1);
    tp_container_scalar(p, c, "zz.io/last", 1);
    tp_container_scalar(p, c, EXT_B, 1);
    tp_container_scalar(p, c, "aa.io/first", 1);
    assert_string_equal(verdict(p, res_pod("e", 0, 0)),
                        "UnschedulableAndUnresolvable: Insufficient cpu, Insufficient aa.io/first, "
                        "Insufficient example.com/bbb, Insufficient zz.io/last");
}

static void too_many_pods_even_without_requests(void **st) {
    assert_string_equal(verdict_args(tp_pod("p"), res_pod("e", 10, 20), 1, NULL),
                        "Unschedulable: Too many pods");
    assert_string_equal(verdict_args(res_pod("p", 1, 1), res_pod("e", 5, 5), 1, NULL),
                        "Unschedulable: Too many pods");
    ks_pod *p = res_pod("p", 5, 1);
    tp_init_container(p, 5, 1, false);
    assert_string_equal(verdict_args(p, res_pod("e", 5, 19), 1, NULL), "Unschedulable: Too many pods");
}

static void too_many_pods_comes_first_and_stays_resolvable(void **st) {
    assert_string_equal(verdict_args(res_pod("p", 11, 1), res_pod("e", 0, 0), 1, NULL),
                        "UnschedulableAndUnresolvable: Too many pods, Insufficient cpu");
}

static void filter_without_pre_filter_is_an_error(void **st) {
    ks_pod *pod = tp_pod_done(tp_pod("p"));
    ks_node *n = fit_node(32);
    ks_node_info *ni = tp_node_info(n, NULL, 0);
    tp_plugin p = tp_create(&ks_plugin_node_resources_fit, NULL, NULL);
    ks_cycle_state *cs = ks_cycle_state_new();
    assert_string_equal(tp_status_str(p.ops->filter(p.self, cs, pod, ni)),
                        "Error: error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
    ks_cycle_state_free(cs);
    tp_destroy(&p);
    ks_node_info_free(ni);
    ks_node_unref(n);
    ks_pod_unref(pod);
}

/* ---- score ---- */

#define CORES(x) ((int64_t)(x) * 1000)

typedef struct node_spec {
    int64_t cpu, mem;       /* allocatable: millicores, bytes */
    const char *ext;        /* optional scalar resource */
    int64_t ext_val;
} node_spec;

typedef struct existing {
    int node;               /* index into nodes */
    int64_t cpu, mem;       /* TP_NONE: unset */
    bool no_containers;
} existing;

/* Scores of pod (done here) on nodes with existing pods, no normalize. */
static void fit_scores(const char *args, ks_pod *pod, const node_spec *ns, size_t nn,
                       const existing *ex, size_t nex, int64_t *out) {
    tp_pod_done(pod);
    ks_node *nodes[8];
    ks_node_info *nis[8];
    ks_pod *pods[16];
    for (size_t i = 0; i < nn; i++) {
        char name[32]; /* room for any size_t: -O1 checks the bound */
        snprintf(name, sizeof(name), "node%zu", i + 1);
        nodes[i] = tp_node(name);
        tp_node_alloc(nodes[i], ns[i].cpu, ns[i].mem, 110);
        if (ns[i].ext) tp_node_scalar(nodes[i], ns[i].ext, ns[i].ext_val);
    }
    for (size_t i = 0; i < nex; i++) {
        char name[32]; /* room for any size_t: -O1 checks the bound */
        snprintf(name, sizeof(name), "e%zu", i);
        pods[i] = tp_pod(name);
        if (!ex[i].no_containers) tp_container(pods[i], ex[i].cpu, ex[i].mem);
        tp_pod_done(pods[i]);
    }
    for (size_t i = 0; i < nn; i++) {
        ks_pod *on[16];
        size_t k = 0;
        for (size_t j = 0; j < nex; j++)
            if (ex[j].node == (int)i) on[k++] = pods[j];
        nis[i] = tp_node_info(nodes[i], on, k);
    }
    tp_plugin p = tp_create(&ks_plugin_node_resources_fit, tp_args(args), NULL);
    assert_string_equal(tp_score_all(&p, pod, nis, nn, out), "Success");
    tp_destroy(&p);
    tp_free_infos(nis, nn);
    for (size_t i = 0; i < nn; i++) ks_node_unref(nodes[i]);
    for (size_t i = 0; i < nex; i++) ks_pod_unref(pods[i]);
    ks_pod_unref(pod);
}

/* The usual upstream incoming pod: two containers, 1+2 cores, 2000+3000 bytes. */
static ks_pod *pod_3c_5k(void) {
    ks_pod *p = tp_pod("p");
    tp_container(p, CORES(1000), 2000);
    tp_container(p, CORES(2000), 3000);
    return p;
}

#define LEAST "scoringStrategy: {type: LeastAllocated}"
#define MOST "scoringStrategy: {type: MostAllocated}"

static void least_nothing_requested_scores_max(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(4000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores(LEAST, tp_pod("p"), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 100);
}

static void least_differently_sized_nodes(void **st) {
    /* node1: cpu (4000-3000)*100/4000 = 25, mem (10000-5000)*100/10000 = 50 -> 37 */
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(6000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores(LEAST, pod_3c_5k(), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 37);
    assert_int_equal(s[1], 50);
}

static void least_existing_pods_count(void **st) {
    node_spec ns[2] = {{CORES(10000), 20000, NULL, 0}, {CORES(10000), 20000, NULL, 0}};
    existing ex[4] = {{0, CORES(3000), 0, false}, {0, CORES(3000), 0, false},
                      {1, CORES(3000), 0, false}, {1, CORES(3000), 5000, false}};
    int64_t s[2];
    fit_scores(LEAST, tp_pod("p"), ns, 2, ex, 4, s);
    assert_int_equal(s[0], 70);
    assert_int_equal(s[1], 57);
    existing ex2[2] = {{0, CORES(3000), 0, false}, {1, CORES(3000), 5000, false}};
    fit_scores(LEAST, pod_3c_5k(), ns, 2, ex2, 2, s);
    assert_int_equal(s[0], 57);
    assert_int_equal(s[1], 45);
    node_spec ns2[2] = {{CORES(10000), 20000, NULL, 0}, {CORES(10000), 50000, NULL, 0}};
    fit_scores(LEAST, pod_3c_5k(), ns2, 2, ex2, 2, s);
    assert_int_equal(s[0], 57);
    assert_int_equal(s[1], 60);
}

static void least_request_over_capacity_scores_zero_for_that_resource(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(4000), 10000, NULL, 0}};
    existing ex[2] = {{0, CORES(3000), 0, false}, {1, CORES(3000), 5000, false}};
    ks_pod *p = tp_pod("p");
    tp_container(p, CORES(3000), 0);
    int64_t s[2];
    fit_scores(LEAST, p, ns, 2, ex, 2, s);
    assert_int_equal(s[0], 50);
    assert_int_equal(s[1], 25);
}

static void least_zero_allocatable_scores_zero(void **st) {
    node_spec ns[2] = {{0, 0, NULL, 0}, {0, 0, NULL, 0}};
    existing ex[2] = {{0, CORES(3000), 0, false}, {1, CORES(3000), 5000, false}};
    int64_t s[2];
    fit_scores(LEAST, tp_pod("p"), ns, 2, ex, 2, s);
    assert_int_equal(s[0], 0);
    assert_int_equal(s[1], 0);
}

static void least_weights_are_applied(void **st) {
    /* node1: (25*1 + 50*2)/3 = 41 */
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(6000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores("scoringStrategy: {type: LeastAllocated, resources: [{name: memory, weight: 2}, "
               "{name: cpu, weight: 1}]}",
               pod_3c_5k(), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 41);
    assert_int_equal(s[1], 50);
}

#define EXT_SET                                                                           \
    "scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 1}, "       \
    "{name: memory, weight: 1}, {name: abc.com/xyz, weight: 1}]}"

static void least_extended_resource_skipped_when_not_requested(void **st) {
    node_spec ns[2] = {{CORES(6000), 10000, NULL, 0}, {CORES(6000), 10000, "abc.com/xyz", 4}};
    int64_t s[2];
    fit_scores(EXT_SET, pod_3c_5k(), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 50);
    assert_int_equal(s[1], 50);
}

static void least_extended_resource_scored_when_requested(void **st) {
    node_spec ns[2] = {{CORES(6000), 10000, "abc.com/xyz", 4}, {CORES(6000), 10000, "abc.com/xyz", 10}};
    ks_pod *p = tp_pod("p");
    tp_container_scalar(p, tp_container(p, CORES(3000), 5000), "abc.com/xyz", 2);
    int64_t s[2];
    fit_scores(EXT_SET, p, ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 50);
    assert_int_equal(s[1], 60);
}

static void least_resource_missing_on_node_is_left_out(void **st) {
    node_spec ns[2] = {{CORES(6000), 10000, NULL, 0}, {CORES(6000), 10000, "abc.com/xyz", 4}};
    ks_pod *p = tp_pod("p");
    tp_container(p, CORES(3000), 4000);
    int64_t s[2];
    fit_scores("scoringStrategy: {type: LeastAllocated, resources: [{name: abc.com/xyz, weight: 2}, "
               "{name: cpu, weight: 1}, {name: memory, weight: 1}]}",
               p, ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 55);
    assert_int_equal(s[1], 55);
}

static void least_containers_without_requests_count_defaults(void **st) {
    /* 100m of 1000m and 200Mi of 1Gi: cpu 90, memory (1024-200)*100/1024 = 80 -> 85 */
    node_spec ns[1] = {{1000, TP_GI(1), NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, TP_NONE, TP_NONE);
    int64_t s[1];
    fit_scores(LEAST, p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 85);
    /* An existing pod without requests adds its defaults too. */
    existing ex[1] = {{0, TP_NONE, TP_NONE, false}};
    fit_scores(LEAST, tp_pod("p"), ns, 1, ex, 1, s);
    assert_int_equal(s[0], 85);
}

static void least_explicit_zero_request_is_not_defaulted(void **st) {
    node_spec ns[1] = {{1000, TP_GI(1), NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, 0, 0);
    int64_t s[1];
    fit_scores(LEAST, p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 100);
}

static void least_defaults_apply_per_container_and_init_container(void **st) {
    /* Two request-less containers: 200m cpu, 400Mi. A request-less init
     * container needs 100m/200Mi, less than the sum. cpu (1000-200)*100/1000
     * = 80; memory (1024-400)*100/1024 = 60 -> 70. */
    node_spec ns[1] = {{1000, TP_GI(1), NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, TP_NONE, TP_NONE);
    tp_container(p, TP_NONE, TP_NONE);
    tp_init_container(p, TP_NONE, TP_NONE, false);
    int64_t s[1];
    fit_scores(LEAST, p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 70);
}

static void least_pod_level_requests_are_ignored_by_scoring(void **st) {
    /* Upstream's Fit scorer does not enable pod-level resources. */
    node_spec ns[1] = {{1000, 1000, NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, 500, 500);
    ks_pod_level *lv = ks_pod_level_make(p);
    lv->has_requests = true;
    lv->requests.milli_cpu = 900;
    lv->requests.memory = 900;
    int64_t s[1];
    fit_scores(LEAST, p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 50);
}

static void least_overhead_is_added_to_score_request(void **st) {
    node_spec ns[1] = {{1000, 1000, NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, 400, 400);
    tp_pod_overhead(p, 100, 100);
    int64_t s[1];
    fit_scores(LEAST, p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 50);
}

static void most_nothing_requested_scores_zero(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(4000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores(MOST, tp_pod("p"), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 0);
    assert_int_equal(s[1], 0);
}

static void most_differently_sized_nodes(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(6000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores(MOST, pod_3c_5k(), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 62);
    assert_int_equal(s[1], 50);
}

static void most_existing_pods_count(void **st) {
    node_spec ns[2] = {{CORES(10000), 20000, NULL, 0}, {CORES(10000), 20000, NULL, 0}};
    existing ex[4] = {{0, CORES(3000), 0, false}, {0, CORES(3000), 0, false},
                      {1, CORES(3000), 0, false}, {1, CORES(3000), 5000, false}};
    int64_t s[2];
    fit_scores(MOST, tp_pod("p"), ns, 2, ex, 4, s);
    assert_int_equal(s[0], 30);
    assert_int_equal(s[1], 42);
    existing ex2[2] = {{0, CORES(3000), 0, false}, {1, CORES(3000), 5000, false}};
    fit_scores(MOST, pod_3c_5k(), ns, 2, ex2, 2, s);
    assert_int_equal(s[0], 42);
    assert_int_equal(s[1], 55);
}

static void most_requested_equal_capacity(void **st) {
    node_spec ns[2] = {{CORES(5000), 10000, NULL, 0}, {CORES(10000), 9000, NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, CORES(2000), 4000);
    tp_container(p, CORES(3000), 5000);
    int64_t s[2];
    fit_scores(MOST, p, ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 95);
    assert_int_equal(s[1], 75);
}

static void most_weights_are_applied(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(6000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores("scoringStrategy: {type: MostAllocated, resources: [{name: memory, weight: 2}, "
               "{name: cpu, weight: 1}]}",
               pod_3c_5k(), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 58);
    assert_int_equal(s[1], 50);
}

static void most_request_over_capacity_is_capped(void **st) {
    /* Defaults of request-less pods may exceed a small node: capped at 100. */
    node_spec ns[1] = {{50, TP_MI(100), NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, TP_NONE, TP_NONE);
    int64_t s[1];
    fit_scores(MOST, p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 100);
}

#define RTCR_LEAST                                                                        \
    "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "       \
    "{shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}}"

static void rtcr_nothing_requested_scores_max(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(4000), 10000, NULL, 0}};
    existing ex[2] = {{0, 0, 0, true}, {0, 0, 0, true}};
    int64_t s[2];
    fit_scores(RTCR_LEAST, tp_pod("p"), ns, 2, ex, 2, s);
    assert_int_equal(s[0], 100);
    assert_int_equal(s[1], 100);
}

static void rtcr_rounds_to_nearest(void **st) {
    /* node1: cpu 75% -> 25, memory 50% -> 50, mean 37.5 -> 38 */
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(6000), 10000, NULL, 0}};
    existing ex[2] = {{0, 0, 0, true}, {0, 0, 0, true}};
    int64_t s[2];
    fit_scores(RTCR_LEAST, pod_3c_5k(), ns, 2, ex, 2, s);
    assert_int_equal(s[0], 38);
    assert_int_equal(s[1], 50);
    existing ex2[2] = {{0, CORES(3000), 5000, false}, {1, CORES(3000), 5000, false}};
    fit_scores(RTCR_LEAST, tp_pod("p"), ns, 2, ex2, 2, s);
    assert_int_equal(s[0], 38);
    assert_int_equal(s[1], 50);
}

#define RTCR_FOO                                                                         \
    "scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: intel.com/foo, " \
    "weight: 1}], requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, "       \
    "{utilization: 100, score: 1}]}}"

static void rtcr_single_extended_resource(void **st) {
    node_spec ns[2] = {{4000, TP_MI(10000), "intel.com/foo", 8}, {4000, TP_MI(10000), "intel.com/foo", 4}};
    int64_t s[2];
    fit_scores(RTCR_FOO, tp_pod("p"), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 0);
    assert_int_equal(s[1], 0);
    ks_pod *p = tp_pod("p");
    tp_container_scalar(p, tp_container(p, TP_NONE, TP_NONE), "intel.com/foo", 2);
    fit_scores(RTCR_FOO, p, ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 2);
    assert_int_equal(s[1], 5);
    p = tp_pod("p");
    tp_container_scalar(p, tp_container(p, TP_NONE, TP_NONE), "intel.com/foo", 4);
    fit_scores(RTCR_FOO, p, ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 5);
    assert_int_equal(s[1], 10);
}

static void rtcr_zero_resource_scores_leave_the_average(void **st) {
    /* shape 0 -> 0, 100 -> 10: cpu 0% scores 0 and is dropped from the
     * average; memory 50% scores 50: the node scores 50, not 25. */
    node_spec ns[1] = {{1000, 1000, NULL, 0}};
    ks_pod *p = tp_pod("p");
    tp_container(p, 0, 500);
    int64_t s[1];
    fit_scores("scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
               "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}",
               p, ns, 1, NULL, 0, s);
    assert_int_equal(s[0], 50);
}

static void broken_linear_function_points(void **st) {
    ks_shape_point a[2] = {{10, 1}, {90, 9}};
    int64_t pa[][2] = {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2},
                       {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}};
    for (size_t i = 0; i < sizeof(pa) / sizeof(pa[0]); i++)
        assert_int_equal(ks_broken_linear(a, 2, pa[i][0]), pa[i][1]);
    ks_shape_point b[3] = {{0, 2}, {40, 10}, {100, 0}};
    int64_t pb[][2] = {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}};
    for (size_t i = 0; i < sizeof(pb) / sizeof(pb[0]); i++)
        assert_int_equal(ks_broken_linear(b, 3, pb[i][0]), pb[i][1]);
    /* Falling segments truncate toward zero: 10 + (0-10)*45/60 = 10 - 7 = 3. */
    assert_int_equal(ks_broken_linear(b, 3, 85), 3);
}

static void score_request_sums_exact_quantities_then_rounds_up_once(void **st) {
    /* 0.5m + 0.5m of cpu is 1m, 1.5 + 1.5 bytes is 3: upstream adds the
     * quantities and rounds once; rounding each container would give 2m
     * and 4. Overhead 0.5m rounds the total up: 1.5m -> 2m. */
    const char *yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: exact, namespace: default}\n"
                       "spec:\n  overhead: {cpu: '0.0005'}\n  containers:\n"
                       "  - {name: a, image: x, resources: {requests: {cpu: '0.0005', memory: '1.5'}}}\n"
                       "  - {name: b, image: x, resources: {requests: {cpu: '0.0005', memory: '1.5'}}}\n";
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    assert_true(ks_load_buffer(c, "pod.yaml", yaml, strlen(yaml), &errs));
    ks_errors_free(&errs);
    ks_resource_allocation_scorer r = {.use_requested = false};
    ks_resource_specs_default(&r);
    int64_t req[2];
    ks_pod_resource_request_list(&r, c->pods.v[0], req);
    assert_int_equal(req[0], 2);
    assert_int_equal(req[1], 3);
    ks_cluster_free(c);
}

/* ---- args ---- */

static void args_error(const char *args, const char *want) {
    char *err = tp_create_error(&ks_plugin_node_resources_fit, tp_args(args));
    assert_non_null(err);
    assert_string_equal(err, want);
    free(err);
}

static void args_reject_weight_out_of_range(void **st) {
    args_error("scoringStrategy: {type: LeastAllocated, resources: [{name: memory, weight: -1}, "
               "{name: cpu, weight: 1}]}",
               "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory "
               "not in valid range (0, 100]");
    args_error("scoringStrategy: {type: LeastAllocated, resources: [{name: memory, weight: 1}, "
               "{name: cpu, weight: 101}]}",
               "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu "
               "not in valid range (0, 100]");
}

static void args_reject_unknown_strategy(void **st) {
    args_error("scoringStrategy: {type: Foo}",
               "scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
               "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"");
}

static void args_reject_bad_shape(void **st) {
    args_error("scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: []}}",
               "scoringStrategy.shape: Required value: at least one point must be specified");
    args_error("scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
               "{shape: [{utilization: 50, score: 1}, {utilization: 10, score: 2}]}}",
               "scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in "
               "increasing order");
    args_error("scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
               "{shape: [{utilization: 10, score: 11}, {utilization: 110, score: 2}]}}",
               "[scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10], "
               "scoringStrategy.shape[1].utilization: Invalid value: 110: not in valid range [0, 100]]");
}

static void args_reject_group_with_slash(void **st) {
    args_error("ignoredResourceGroups: [example.com/aaa]",
               "ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name "
               "can't contain '/'");
}

static void args_weight_zero_defaults_to_one(void **st) {
    node_spec ns[2] = {{CORES(4000), 10000, NULL, 0}, {CORES(6000), 10000, NULL, 0}};
    int64_t s[2];
    fit_scores("scoringStrategy: {type: LeastAllocated, resources: [{name: memory}, {name: cpu, weight: 0}]}",
               pod_3c_5k(), ns, 2, NULL, 0, s);
    assert_int_equal(s[0], 37);
    assert_int_equal(s[1], 50);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_request_always_fits),
        cmocka_unit_test(too_many_resources_fails_each_named),
        cmocka_unit_test(init_container_cpu_counts_when_largest),
        cmocka_unit_test(init_container_memory_counts_when_largest),
        cmocka_unit_test(init_containers_take_max_not_sum),
        cmocka_unit_test(sidecar_adds_to_containers_and_later_init_containers),
        cmocka_unit_test(equal_edge_case_fits),
        cmocka_unit_test(one_resource_short),
        cmocka_unit_test(extended_resource_fits),
        cmocka_unit_test(extended_resource_over_capacity_is_unresolvable),
        cmocka_unit_test(extended_resource_over_free_is_resolvable),
        cmocka_unit_test(extended_resource_sums_containers),
        cmocka_unit_test(extended_resource_init_containers_take_max),
        cmocka_unit_test(unknown_extended_resource_is_unresolvable),
        cmocka_unit_test(kubernetes_io_resources_are_checked),
        cmocka_unit_test(hugepages_are_checked),
        cmocka_unit_test(ignored_resource_is_not_checked),
        cmocka_unit_test(ignored_resource_group_is_not_checked),
        cmocka_unit_test(ignored_groups_never_apply_to_native_resources),
        cmocka_unit_test(zero_scalar_request_is_not_checked),
        cmocka_unit_test(overhead_is_added_to_the_request),
        cmocka_unit_test(ephemeral_storage_is_checked),
        cmocka_unit_test(pod_level_requests_override_containers),
        cmocka_unit_test(scalar_reasons_are_in_name_order_after_native),
        cmocka_unit_test(too_many_pods_even_without_requests),
        cmocka_unit_test(too_many_pods_comes_first_and_stays_resolvable),
        cmocka_unit_test(filter_without_pre_filter_is_an_error),
        cmocka_unit_test(least_nothing_requested_scores_max),
        cmocka_unit_test(least_differently_sized_nodes),
        cmocka_unit_test(least_existing_pods_count),
        cmocka_unit_test(least_request_over_capacity_scores_zero_for_that_resource),
        cmocka_unit_test(least_zero_allocatable_scores_zero),
        cmocka_unit_test(least_weights_are_applied),
        cmocka_unit_test(least_extended_resource_skipped_when_not_requested),
        cmocka_unit_test(least_extended_resource_scored_when_requested),
        cmocka_unit_test(least_resource_missing_on_node_is_left_out),
        cmocka_unit_test(least_containers_without_requests_count_defaults),
        cmocka_unit_test(least_explicit_zero_request_is_not_defaulted),
        cmocka_unit_test(least_defaults_apply_per_container_and_init_container),
        cmocka_unit_test(least_pod_level_requests_are_ignored_by_scoring),
        cmocka_unit_test(least_overhead_is_added_to_score_request),
        cmocka_unit_test(most_nothing_requested_scores_zero),
        cmocka_unit_test(most_differently_sized_nodes),
        cmocka_unit_test(most_existing_pods_count),
        cmocka_unit_test(most_requested_equal_capacity),
        cmocka_unit_test(most_weights_are_applied),
        cmocka_unit_test(most_request_over_capacity_is_capped),
        cmocka_unit_test(rtcr_nothing_requested_scores_max),
        cmocka_unit_test(rtcr_rounds_to_nearest),
        cmocka_unit_test(rtcr_single_extended_resource),
        cmocka_unit_test(rtcr_zero_resource_scores_leave_the_average),
        cmocka_unit_test(broken_linear_function_points),
        cmocka_unit_test(score_request_sums_exact_quantities_then_rounds_up_once),
        cmocka_unit_test(args_reject_weight_out_of_range),
        cmocka_unit_test(args_reject_unknown_strategy),
        cmocka_unit_test(args_reject_bad_shape),
        cmocka_unit_test(args_reject_group_with_slash),
        cmocka_unit_test(args_weight_zero_defaults_to_one),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
