/* Pod requests as upstream's resource.PodRequests computes them (regular
 * containers summed, sidecars counted alongside them, each init container
 * at the moment it runs, overhead, pod-level resources) and the non-zero
 * variant scoring uses (100m / 200Mi for containers that name neither). */
#include "api/pod.h"
#include "codec/decode.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

/* Decode a pod whose spec is given as YAML (indented two spaces). */
static ks_pod *pod_from(const char *spec_yaml) {
    char doc[8192];
    snprintf(doc, sizeof(doc), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n%s", spec_yaml);
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (!kt_parse(a, "test.yaml", doc, strlen(doc), &docs, &n, &err)) fail_msg("%s", err);
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = "test.yaml", .errs = &errs};
    ks_pod *p = ks_decode_pod(docs[0], &ctx);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_non_null(p);
    ks_errors_free(&errs);
    ks_arena_free(a);
    return p;
}

static void expect(const ks_pod *p, int64_t milli, int64_t mem, int64_t nz_milli, int64_t nz_mem) {
    assert_int_equal(p->requests.milli_cpu, milli);
    assert_int_equal(p->requests.memory, mem);
    assert_int_equal(p->nonzero_requests.milli_cpu, nz_milli);
    assert_int_equal(p->nonzero_requests.memory, nz_mem);
}

#define C(name, cpu, mem) \
    "  - name: " name "\n    image: x\n    resources:\n      requests: {cpu: \"" cpu "\", memory: " mem "}\n"
#define SIDECAR(name, cpu, mem) C(name, cpu, mem) "    restartPolicy: Always\n"

/* The seed's example: init {2 cpu, 1Gi} then {1 cpu, 2Gi}; the regular
 * containers sum to {1 cpu, 3Gi}: the pod needs {2 cpu, 3Gi}. */
static void test_seed_example(void **st) {
    (void)st;
    ks_pod *p = pod_from("  initContainers:\n" C("i1", "2", "1Gi") C("i2", "1", "2Gi")
                         "  containers:\n" C("a", "500m", "1Gi") C("b", "500m", "2Gi"));
    expect(p, 2000, 3 * GI, 2000, 3 * GI);
    ks_pod_unref(p);
}

/* A sidecar started before an init container runs alongside it. */
static void test_sidecar_before_init(void **st) {
    (void)st;
    ks_pod *p = pod_from("  initContainers:\n" SIDECAR("proxy", "1", "1Gi") C("setup", "2500m", "1Gi")
                         "  containers:\n" C("app", "1", "1Gi"));
    /* regular + sidecar = {2, 2Gi}; setup runs with the proxy: {3.5, 2Gi} */
    expect(p, 3500, 2 * GI, 3500, 2 * GI);
    ks_pod_unref(p);
}

/* A sidecar started after an init container does not run alongside it. */
static void test_sidecar_after_init(void **st) {
    (void)st;
    ks_pod *p = pod_from("  initContainers:\n" C("setup", "2500m", "1Gi") SIDECAR("proxy", "1", "1Gi")
                         "  containers:\n" C("app", "1", "1Gi"));
    /* regular + sidecar = {2, 2Gi}; setup alone {2.5, 1Gi} */
    expect(p, 2500, 2 * GI, 2500, 2 * GI);
    ks_pod_unref(p);
}

static void test_sidecars_accumulate(void **st) {
    (void)st;
    ks_pod *p = pod_from("  initContainers:\n" SIDECAR("s1", "1", "1Gi") SIDECAR("s2", "1", "1Gi")
                             C("late", "1", "4Gi")
                         "  containers:\n" C("app", "100m", "100Mi"));
    /* regular {0.1+1+1, 100Mi+2Gi}; late runs with both sidecars {3, 6Gi} */
    expect(p, 3000, 6 * GI, 3000, 6 * GI);
    ks_pod_unref(p);
}

static void test_overhead(void **st) {
    (void)st;
    ks_pod *p = pod_from("  overhead: {cpu: 250m, memory: 120Mi}\n"
                         "  initContainers:\n" C("i", "2", "1Gi")
                         "  containers:\n" C("a", "1", "3Gi"));
    expect(p, 2250, 3 * GI + 120 * MI, 2250, 3 * GI + 120 * MI);
    assert_true(ks_pod_has_overhead(p));
    assert_int_equal(p->level->overhead.milli_cpu, 250);
    ks_pod_unref(p);
}

/* Containers without requests count as 100m / 200Mi for scoring only. */
static void test_nonzero_defaults(void **st) {
    (void)st;
    ks_pod *p = pod_from("  containers:\n  - name: a\n    image: x\n  - name: b\n    image: x\n");
    expect(p, 0, 0, 200, 400 * MI);
    ks_pod_unref(p);
    /* only the resource a container leaves out gets the default */
    p = pod_from("  containers:\n  - name: a\n    image: x\n    resources:\n      requests: {cpu: 300m}\n");
    expect(p, 300, 0, 300, 200 * MI);
    ks_pod_unref(p);
    /* an explicit zero is a request */
    p = pod_from("  containers:\n  - name: a\n    image: x\n    resources:\n      requests: {cpu: 0, memory: 0}\n");
    expect(p, 0, 0, 0, 0);
    ks_pod_unref(p);
    /* init containers get the defaults too, then the max applies */
    p = pod_from("  initContainers:\n  - name: i\n    image: x\n"
                 "  containers:\n" C("a", "50m", "50Mi"));
    expect(p, 50, 50 * MI, 100, 200 * MI);
    ks_pod_unref(p);
    /* overhead counts in both */
    p = pod_from("  overhead: {cpu: 10m}\n  containers:\n  - name: a\n    image: x\n");
    expect(p, 10, 0, 110, 200 * MI);
    ks_pod_unref(p);
}

static void test_requests_default_to_limits(void **st) {
    (void)st;
    ks_pod *p = pod_from("  containers:\n  - name: a\n    image: x\n    resources:\n"
                         "      limits: {cpu: \"2\", memory: 1Gi, nvidia.com/gpu: 1}\n"
                         "      requests: {cpu: 500m}\n");
    expect(p, 500, GI, 500, GI);
    assert_int_equal(ks_resource_get(&p->requests, ks_intern("nvidia.com/gpu")), 1);
    assert_int_equal(p->containers[0].limits.milli_cpu, 2000);
    ks_pod_unref(p);
}

/* Quantities are summed exactly before converting, as upstream adds
 * resource.Quantity values: two 0.5m requests are 1m, not 2m. */
static void test_exact_sums(void **st) {
    (void)st;
    ks_pod *p = pod_from("  containers:\n" C("a", "0.5m", "\"1.5\"") C("b", "0.5m", "\"1.5\""));
    expect(p, 1, 3, 1, 3);
    assert_int_equal(p->containers[0].requests.milli_cpu, 1); /* alone it rounds up */
    ks_pod_unref(p);
}

static void test_pod_level_resources(void **st) {
    (void)st;
    /* pod-level requests replace the containers' cpu and memory; other
     * resources still come from the containers; overhead is added */
    ks_pod *p = pod_from("  resources:\n    requests: {cpu: \"4\", memory: 8Gi}\n"
                         "  overhead: {cpu: 100m}\n"
                         "  containers:\n  - name: a\n    image: x\n    resources:\n"
                         "      requests: {cpu: \"1\", memory: 1Gi, ephemeral-storage: 1Gi}\n");
    expect(p, 4100, 8 * GI, 4100, 8 * GI);
    assert_int_equal(p->requests.ephemeral_storage, GI);
    assert_true(ks_pod_has_level_requests(p));
    ks_pod_unref(p);

    /* no defaults for what the pod level names; the rest defaults */
    p = pod_from("  resources:\n    requests: {cpu: \"1\"}\n"
                 "  containers:\n  - name: a\n    image: x\n");
    expect(p, 1000, 0, 1000, 200 * MI);
    ks_pod_unref(p);

    /* pod-level limits alone: requests default to them (API defaulting) */
    p = pod_from("  resources:\n    limits: {cpu: \"2\", memory: 2Gi}\n"
                 "  containers:\n  - name: a\n    image: x\n");
    expect(p, 2000, 2 * GI, 2000, 2 * GI);
    ks_pod_unref(p);

    /* pod-level limits with container requests: cpu/memory requests
     * default to the containers' sum */
    p = pod_from("  resources:\n    limits: {cpu: \"2\", memory: 2Gi}\n"
                 "  containers:\n" C("a", "300m", "100Mi") C("b", "200m", "100Mi"));
    expect(p, 500, 200 * MI, 500, 200 * MI);
    ks_pod_unref(p);

    /* hugepage limits of the containers become pod-level limits, and then
     * requests, when the pod level sets other limits */
    p = pod_from("  resources:\n    limits: {cpu: \"1\"}\n"
                 "  containers:\n  - name: a\n    image: x\n    resources:\n"
                 "      limits: {hugepages-2Mi: 4Mi, memory: 1Gi}\n");
    assert_true(ks_pod_has_level_requests(p));
    assert_non_null(ks_qlist_find(&p->level->lim_q, ks_intern("hugepages-2Mi")));
    assert_int_equal(ks_resource_get(&p->requests, ks_intern("hugepages-2Mi")), 4 * MI);
    expect(p, 1000, GI, 1000, GI);
    ks_pod_unref(p);

    /* unsupported names at the pod level do not count as set */
    p = pod_from("  resources:\n    requests: {ephemeral-storage: 1Gi}\n"
                 "  containers:\n" C("a", "300m", "100Mi"));
    assert_false(ks_pod_has_level_requests(p));
    expect(p, 300, 100 * MI, 300, 100 * MI);
    ks_pod_unref(p);
}

/* While an in-place resize is in flight the larger of spec and status
 * counts; when it is infeasible, the status alone. */
static void test_resize_status(void **st) {
    (void)st;
    ks_pod *p = pod_from("  containers:\n" C("a", "1", "1Gi") "status:\n  containerStatuses:\n"
                         "  - name: a\n    resources:\n      requests: {cpu: \"2\", memory: 512Mi}\n");
    expect(p, 2000, GI, 2000, GI);
    ks_pod_unref(p);
    p = pod_from("  containers:\n" C("a", "1", "1Gi")
                 "status:\n  conditions:\n  - type: PodResizePending\n    status: \"True\"\n"
                 "    reason: Infeasible\n  containerStatuses:\n"
                 "  - name: a\n    resources:\n      requests: {cpu: 500m, memory: 512Mi}\n");
    expect(p, 500, 512 * MI, 500, 512 * MI);
    ks_pod_unref(p);
    /* without status resources the spec counts */
    p = pod_from("  containers:\n" C("a", "1", "1Gi") "status:\n  containerStatuses:\n  - name: a\n");
    expect(p, 1000, GI, 1000, GI);
    ks_pod_unref(p);
}

static void test_scalars(void **st) {
    (void)st;
    ks_pod *p = pod_from("  initContainers:\n  - name: i\n    image: x\n    resources:\n"
                         "      requests: {example.com/foo: 3, hugepages-2Mi: 4Mi}\n"
                         "  containers:\n  - name: a\n    image: x\n    resources:\n"
                         "      requests: {example.com/foo: 1, nvidia.com/gpu: 2, storage: 5, hugepages-2Mi: 2Mi}\n");
    assert_int_equal(ks_resource_get(&p->requests, ks_intern("example.com/foo")), 3);
    assert_int_equal(ks_resource_get(&p->requests, ks_intern("nvidia.com/gpu")), 2);
    assert_int_equal(ks_resource_get(&p->requests, ks_intern("hugepages-2Mi")), 4 * MI);
    /* "storage" is neither native nor extended: ignored */
    assert_int_equal(p->requests.nscalar, 3);
    ks_pod_unref(p);
}

/* Pods built in code (no exact lists) go through the same rules. */
static void test_built_in_code(void **st) {
    (void)st;
    ks_api_init();
    ks_pod *p = ks_pod_new();
    p->ncontainers = 2;
    p->containers = ks_arena_calloc(p->arena, 2, sizeof(ks_container));
    p->containers[0].requests.milli_cpu = 500;
    p->containers[0].requests.memory = GI;
    p->containers[0].has_cpu_request = p->containers[0].has_memory_request = true;
    p->containers[1].requests.milli_cpu = 500;
    p->containers[1].has_cpu_request = true;
    p->ninit = 2;
    p->init_containers = ks_arena_calloc(p->arena, 2, sizeof(ks_container));
    p->init_containers[0].requests.milli_cpu = 2000;
    p->init_containers[0].requests.memory = GI;
    p->init_containers[0].has_cpu_request = p->init_containers[0].has_memory_request = true;
    p->init_containers[1].requests.milli_cpu = 1000;
    p->init_containers[1].requests.memory = 2 * GI;
    p->init_containers[1].has_cpu_request = p->init_containers[1].has_memory_request = true;
    assert_true(ks_pod_compute_requests(p));
    /* requests max({1, 1Gi}, {2, 2Gi}); the second container's memory
     * defaults to 200Mi for scoring */
    expect(p, 2000, 2 * GI, 2000, 2 * GI);
    ks_pod_unref(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_example),        cmocka_unit_test(test_sidecar_before_init),
        cmocka_unit_test(test_sidecar_after_init),  cmocka_unit_test(test_sidecars_accumulate),
        cmocka_unit_test(test_overhead),            cmocka_unit_test(test_nonzero_defaults),
        cmocka_unit_test(test_requests_default_to_limits), cmocka_unit_test(test_exact_sums),
        cmocka_unit_test(test_pod_level_resources), cmocka_unit_test(test_resize_status),
        cmocka_unit_test(test_scalars),             cmocka_unit_test(test_built_in_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
