/* DynamicResources for pods without resource claims (the only pods ksched
 * supports), as upstream's dynamicresources_test.go "empty" cases, and the
 * PostFilter texts that appear in FailedScheduling messages. */
#include "testutil_volumes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static const char *const cluster_yaml =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: c, image: i}]}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: claims}\n"
    "spec:\n  containers: [{name: c, image: i}]\n  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: missing-pvc}\n"
    "spec:\n  containers: [{name: c, image: i}]\n"
    "  volumes: [{name: data, persistentVolumeClaim: {claimName: missing-claim}}]\n";

static void pod_without_claims_skips_filter(void **st) {
    tv_env e;
    tv_init(&e, "DynamicResources", cluster_yaml);
    assert_string_equal(tv_filter(&e, "plain"), "n1 Success (skip)");
    tv_free(&e);
}

static void post_filter_without_claims_has_no_claims_to_deallocate(void **st) {
    tv_env e;
    tv_init(&e, "DynamicResources", cluster_yaml);
    tv_filter(&e, "plain");
    assert_string_equal(tv_post_filter(&e, "plain"), "Unschedulable: no new claims to deallocate");
    tv_free(&e);
}

/* An earlier PreFilter plugin rejected the pod: DynamicResources' PreFilter
 * never ran and its PostFilter cannot read its state. */
static void post_filter_without_prefilter_state_is_error_not_found(void **st) {
    tv_env e;
    tv_init(&e, "VolumeBinding,DynamicResources", cluster_yaml);
    assert_string_equal(tv_filter(&e, "missing-pvc"),
                        "UnschedulableAndUnresolvable: persistentvolumeclaim \"missing-claim\" not found");
    assert_string_equal(tv_post_filter(&e, "missing-pvc"), "Error: not found");
    tv_free(&e);
}

static void pod_with_claims_is_unsupported(void **st) {
    tv_env e;
    tv_init(&e, "DynamicResources", cluster_yaml);
    assert_string_equal(tv_filter(&e, "claims"),
                        "UnschedulableAndUnresolvable: pod has resourceClaims: dynamic resource allocation is not "
                        "supported by ksched yet (DynamicResources)");
    /* the state PreFilter wrote says "no claims", as upstream's does */
    assert_string_equal(tv_post_filter(&e, "claims"), "Unschedulable: no new claims to deallocate");
    tv_free(&e);
}

static void reserve_and_pre_bind_do_nothing_without_claims(void **st) {
    tv_env e;
    tv_init(&e, "DynamicResources", cluster_yaml);
    tv_filter(&e, "plain");
    assert_string_equal(tv_reserve(&e, "plain", "n1"), "Success");
    assert_string_equal(tv_pre_bind(&e, "plain", "n1"), "Skip");
    tv_unreserve(&e, "plain", "n1");
    tv_free(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pod_without_claims_skips_filter),
        cmocka_unit_test(post_filter_without_claims_has_no_claims_to_deallocate),
        cmocka_unit_test(post_filter_without_prefilter_state_is_error_not_found),
        cmocka_unit_test(pod_with_claims_is_unsupported),
        cmocka_unit_test(reserve_and_pre_bind_do_nothing_without_claims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
