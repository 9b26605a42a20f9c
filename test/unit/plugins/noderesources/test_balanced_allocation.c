/* NodeResourcesBalancedAllocation (cases from upstream
 * balanced_allocation_test.go, plus rounding edges). */
#include "testutil_plugins.h"
#include "plugins/noderesources/resource_allocation.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_node_resources_balanced_allocation;

enum { CPU_AND_MEMORY, CPU_ONLY, CPU_MEM_GPU, NOTHING, MEM0_GPU1 };

static ks_pod *make(int kind, const char *name) {
    ks_pod *p = tp_pod(name);
    switch (kind) {
    case CPU_AND_MEMORY:
        tp_container(p, 1000, 2000);
        tp_container(p, 2000, 3000);
        break;
    case CPU_ONLY:
        tp_container(p, 1000, 0);
        tp_container(p, 2000, 0);
        break;
    case CPU_MEM_GPU:
        tp_container(p, 1000, 2000);
        tp_container_scalar(p, tp_container(p, 2000, 3000), "nvidia.com/gpu", 3);
        break;
    case MEM0_GPU1:
        tp_container_scalar(p, tp_container(p, TP_NONE, 0), "nvidia.com/gpu", 1);
        break;
    default:
        break;
    }
    return tp_pod_done(p);
}

typedef struct nspec {
    int64_t cpu, mem, gpu;
} nspec;

typedef struct placed {
    int kind, node;
} placed;

#define GPU3 "resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 1}]"

/* Returns the PreScore status; scores in out. */
static const char *scores(const char *args, int pod_kind, const nspec *ns, size_t nn, const placed *pl,
                          size_t npl, int64_t *out, bool run_pre_score) {
    static char ret[256];
    ks_pod *pod = make(pod_kind, "incoming");
    ks_node *nodes[4];
    ks_node_info *nis[4];
    ks_pod *pods[8];
    for (size_t i = 0; i < npl; i++) {
        char name[32]; /* room for any size_t: -O1 checks the bound */
        snprintf(name, sizeof(name), "e%zu", i);
        pods[i] = make(pl[i].kind, name);
    }
    for (size_t i = 0; i < nn; i++) {
        char name[32]; /* room for any size_t: -O1 checks the bound */
        snprintf(name, sizeof(name), "node%zu", i + 1);
        nodes[i] = tp_node(name);
        tp_node_alloc(nodes[i], ns[i].cpu, ns[i].mem, 110);
        if (ns[i].gpu) tp_node_scalar(nodes[i], "nvidia.com/gpu", ns[i].gpu);
        ks_pod *on[8];
        size_t k = 0;
        for (size_t j = 0; j < npl; j++)
            if (pl[j].node == (int)i) on[k++] = pods[j];
        nis[i] = tp_node_info(nodes[i], on, k);
    }
    tp_plugin p = tp_create(&ks_plugin_node_resources_balanced_allocation, args ? tp_args(args) : NULL, NULL);
    if (run_pre_score) {
        snprintf(ret, sizeof(ret), "%s", tp_score_all(&p, pod, nis, nn, out));
    } else {
        ks_cycle_state *cs = ks_cycle_state_new();
        snprintf(ret, sizeof(ret), "Success");
        for (size_t i = 0; i < nn; i++) {
            ks_status *s = p.ops->score(p.self, cs, pod, nis[i], &out[i]);
            if (s) snprintf(ret, sizeof(ret), "%s", tp_status_str(s));
        }
        ks_cycle_state_free(cs);
    }
    tp_destroy(&p);
    tp_free_infos(nis, nn);
    for (size_t i = 0; i < nn; i++) ks_node_unref(nodes[i]);
    for (size_t i = 0; i < npl; i++) ks_pod_unref(pods[i]);
    ks_pod_unref(pod);
    return ret;
}

static void best_effort_pod_is_skipped_in_pre_score(void **st) {
    nspec ns[2] = {{4000, 10000, 0}, {4000, 10000, 0}};
    int64_t s[2];
    assert_string_equal(scores(NULL, NOTHING, ns, 2, NULL, 0, s, true), "Skip");
}

static void best_effort_pod_scores_zero_without_pre_score(void **st) {
    nspec ns[1] = {{4000, 10000, 0}};
    int64_t s[1] = {-1};
    assert_string_equal(scores(NULL, NOTHING, ns, 1, NULL, 0, s, false), "Success");
    assert_int_equal(s[0], 0);
}

static void two_resources_std_is_half_the_difference(void **st) {
    /* node1: 0.75 and 0.5 -> std 0.125 -> 87; node2: 0.5 and 0.5 -> 100 */
    nspec ns[2] = {{4000, 10000, 0}, {6000, 10000, 0}};
    int64_t s[2];
    assert_string_equal(scores(NULL, CPU_AND_MEMORY, ns, 2, NULL, 0, s, true), "Success");
    assert_int_equal(s[0], 87);
    assert_int_equal(s[1], 100);
}

static void existing_pods_requests_count(void **st) {
    nspec ns[2] = {{10000, 20000, 0}, {10000, 20000, 0}};
    placed pl[2] = {{CPU_ONLY, 0}, {CPU_AND_MEMORY, 1}};
    int64_t s[2];
    scores(NULL, CPU_AND_MEMORY, ns, 2, pl, 2, s, true);
    assert_int_equal(s[0], 82);
    assert_int_equal(s[1], 95);
    nspec ns2[2] = {{10000, 20000, 0}, {10000, 50000, 0}};
    scores(NULL, CPU_AND_MEMORY, ns2, 2, pl, 2, s, true);
    assert_int_equal(s[0], 82);
    assert_int_equal(s[1], 80);
}

static void same_scores_without_pre_score(void **st) {
    nspec ns[2] = {{10000, 20000, 0}, {10000, 20000, 0}};
    placed pl[2] = {{CPU_ONLY, 0}, {CPU_AND_MEMORY, 1}};
    int64_t s[2];
    scores(NULL, CPU_AND_MEMORY, ns, 2, pl, 2, s, false);
    assert_int_equal(s[0], 82);
    assert_int_equal(s[1], 95);
}

static void fractions_are_capped_at_one(void **st) {
    /* node1: cpu 6000/6000, memory 0 -> 50; node2: 1 and 0.5 -> 75 */
    nspec ns[2] = {{6000, 10000, 0}, {6000, 10000, 0}};
    placed pl[2] = {{CPU_ONLY, 0}, {CPU_AND_MEMORY, 1}};
    int64_t s[2];
    scores(NULL, CPU_ONLY, ns, 2, pl, 2, s, true);
    assert_int_equal(s[0], 50);
    assert_int_equal(s[1], 75);
    /* Over capacity still caps: 9000/6000 -> 1. */
    placed pl2[2] = {{CPU_ONLY, 0}, {CPU_ONLY, 0}};
    scores(NULL, CPU_ONLY, ns, 1, pl2, 2, s, true);
    assert_int_equal(s[0], 50);
}

static void three_resources_use_standard_deviation(void **st) {
    nspec ns[2] = {{3500, 40000, 8}, {3500, 40000, 8}};
    placed pl[2] = {{CPU_AND_MEMORY, 1}, {CPU_MEM_GPU, 0}};
    int64_t s[2];
    assert_string_equal(scores(GPU3, MEM0_GPU1, ns, 2, pl, 2, s, true), "Success");
    assert_int_equal(s[0], 70);
    assert_int_equal(s[1], 65);
}

static void scalar_resource_missing_on_node_is_skipped(void **st) {
    nspec ns[2] = {{3500, 40000, 8}, {3500, 40000, 0}};
    int64_t s[2];
    scores(GPU3, CPU_AND_MEMORY, ns, 2, NULL, 0, s, true);
    assert_int_equal(s[0], 63);
    assert_int_equal(s[1], 63);
}

static void single_resource_has_no_deviation(void **st) {
    nspec ns[1] = {{4000, 10000, 0}};
    int64_t s[1];
    scores("resources: [{name: cpu}]", CPU_AND_MEMORY, ns, 1, NULL, 0, s, true);
    assert_int_equal(s[0], 100);
}

static void score_truncates_toward_zero(void **st) {
    /* fractions 1/3 and 0: std 1/6, (1 - 1/6) * 100 = 83.33 -> 83. */
    ks_resource_allocation_scorer r = {.nresources = 2};
    int64_t req[2] = {1, 0}, alloc[2] = {3, 5};
    assert_int_equal(ks_balanced_resource_scorer(&r, req, alloc), 83);
    /* 0.29 and 0: (1 - 0.145) * 100 = 85.5 -> 85. */
    int64_t req2[2] = {29, 0}, alloc2[2] = {100, 1};
    assert_int_equal(ks_balanced_resource_scorer(&r, req2, alloc2), 85);
    /* zero allocatable resources are left out: one fraction left. */
    int64_t req3[2] = {1, 1}, alloc3[2] = {0, 2};
    assert_int_equal(ks_balanced_resource_scorer(&r, req3, alloc3), 100);
}

static void args_reject_weight_other_than_one_and_duplicates(void **st) {
    char *err = tp_create_error(&ks_plugin_node_resources_balanced_allocation,
                                tp_args("resources: [{name: cpu, weight: 2}, {name: cpu, weight: 1}]"));
    assert_non_null(err);
    assert_string_equal(err, "[resources[0].weight: Invalid value: 2: must be 1, "
                             "resources[1].name: Duplicate value: \"cpu\"]");
    free(err);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(best_effort_pod_is_skipped_in_pre_score),
        cmocka_unit_test(best_effort_pod_scores_zero_without_pre_score),
        cmocka_unit_test(two_resources_std_is_half_the_difference),
        cmocka_unit_test(existing_pods_requests_count),
        cmocka_unit_test(same_scores_without_pre_score),
        cmocka_unit_test(fractions_are_capped_at_one),
        cmocka_unit_test(three_resources_use_standard_deviation),
        cmocka_unit_test(scalar_resource_missing_on_node_is_skipped),
        cmocka_unit_test(single_resource_has_no_deviation),
        cmocka_unit_test(score_truncates_toward_zero),
        cmocka_unit_test(args_reject_weight_other_than_one_and_duplicates),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
