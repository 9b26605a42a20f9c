/* Two schedulers in one process, on two threads at once, with different
 * profiles and different feature gates, do not interfere: each decides
 * exactly what it decides when it runs alone. The state that used to be
 * process-wide (feature gates read by plugins, a thread's object view, the
 * queue's metric series cache) is each scheduler's own; run under
 * ThreadSanitizer too (Makefile TSAN_TESTS).
 *
 * A: the default profile with the v1.34 default gates. B: MostAllocated
 * scoring, and DRAPrioritizedList off when its configuration was loaded
 * (the process gates are back to the defaults while it runs), so the
 * pod whose claim uses firstAvailable (infer-0) cannot be placed by B. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "config/config.h"
#include "config/feature_gates.h"
#include "sim/simulate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLUSTER "examples/clusters/dra-gpu"
#define ROUNDS 3

static const char *config_a = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n";

static const char *config_b = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "profiles:\n"
                              "- schedulerName: default-scheduler\n"
                              "  pluginConfig:\n"
                              "  - name: NodeResourcesFit\n"
                              "    args:\n"
                              "      scoringStrategy:\n"
                              "        type: MostAllocated\n";

static ks_config *load_config(const char *yaml) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("cfg.yaml", yaml, strlen(yaml), &errs);
    assert_non_null(cfg);
    assert_true(ks_config_resolve(cfg, NULL, NULL, &errs));
    ks_config_errors_free(&errs);
    return cfg;
}

/* One run's answer: "ns/name node state" per pending pod, in scheduling
 * order (malloc'd). */
static char *simulate(const ks_config *cfg) {
    ks_cluster *cl = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    const char *paths[] = {CLUSTER};
    char *err = NULL;
    if (!ks_load_paths(cl, paths, 1, &e) || !ks_cluster_admit(cl, &err)) {
        fprintf(stderr, "loading %s failed: %s\n", CLUSTER, err ? err : "");
        abort();
    }
    ks_errors_free(&e);
    ks_sim_options so = {.seed = 7, .deterministic = true, .percentage_of_nodes_to_score = -1, .parallelism = 4};
    ks_sim_result res;
    if (!ks_simulate(cl, cfg, ks_default_registry(), &so, &res, &err)) {
        fprintf(stderr, "simulate: %s\n", err);
        abort();
    }
    size_t cap = 64 * (res.npods + 1), len = 0;
    char *out = calloc(1, cap);
    for (uint32_t i = 0; i < res.npods; i++) {
        const ks_sim_pod *p = &res.pods[i];
        len += (size_t)snprintf(out + len, cap - len, "%s/%s %s %d\n", ks_str(p->pod->ns), ks_str(p->pod->name),
                                p->node ? p->node : "-", (int)p->state);
    }
    ks_sim_result_free(&res);
    ks_cluster_free(cl);
    return out;
}

typedef struct runner {
    const ks_config *cfg;
    char *answers[ROUNDS];
} runner;

static void *run(void *arg) {
    runner *r = arg;
    for (int i = 0; i < ROUNDS; i++) r->answers[i] = simulate(r->cfg);
    return NULL;
}

static void test_two_schedulers_do_not_interfere(void **state) {
    (void)state;
    ks_feature_gates_reset();
    ks_config *a = load_config(config_a);
    const char *off = "DRAPrioritizedList=false";
    char *err = NULL;
    assert_true(ks_feature_gates_apply(&off, 1, &err));
    ks_config *b = load_config(config_b);
    ks_feature_gates_reset(); /* B keeps the gates it was loaded with */

    /* Alone, one after the other. */
    char *alone_a = simulate(a), *alone_b = simulate(b);
    /* The gate made a difference: infer-0's claim has subrequests
     * (firstAvailable), which B refuses. */
    char want[64];
    snprintf(want, sizeof(want), "ml/infer-0 - %d\n", KS_SIM_UNSCHEDULABLE);
    assert_non_null(strstr(alone_b, want));
    assert_null(strstr(alone_a, want));
    assert_non_null(strstr(alone_a, "ml/infer-0 gpu-"));
    assert_string_not_equal(alone_a, alone_b);

    /* Together, on two threads at once. */
    runner ra = {.cfg = a}, rb = {.cfg = b};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, run, &ra), 0);
    assert_int_equal(pthread_create(&tb, NULL, run, &rb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        assert_string_equal(ra.answers[i], alone_a);
        assert_string_equal(rb.answers[i], alone_b);
        free(ra.answers[i]);
        free(rb.answers[i]);
    }
    free(alone_a);
    free(alone_b);
    ks_config_free(a);
    ks_config_free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_schedulers_do_not_interfere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
