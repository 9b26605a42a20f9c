/* DynamicResources at every extension point, in the spirit of upstream's
 * dynamicresources_test.go: pods without claims, claims that are missing,
 * being deleted or not the pod's, classes that do not exist, allocation on
 * the nodes that have devices, allocated claims pinned to other nodes,
 * PostFilter deallocation, in-flight allocations between Reserve and
 * PreBind, the claim writes of PreBind and Unreserve, CEL errors. */
#include "testutil_volumes.h"
#include "config/feature_gates.h"
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define HDR "apiVersion: resource.k8s.io/v1\n"

static const char *const base_yaml =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '10'}}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '8', pods: '10'}}\n"
    "---\n" HDR "kind: DeviceClass\nmetadata: {name: gpu}\n"
    "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n"
    "---\n" HDR "kind: DeviceClass\nmetadata: {name: broken}\n"
    "spec: {selectors: [{cel: {expression: 'device.driver =='}}]}\n"
    "---\n" HDR "kind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
    "spec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n"
    "  devices:\n"
    "  - {name: gpu-0, attributes: {model: {string: a100}, numa: {int: 0}}, capacity: {memory: {value: 40Gi}}}\n"
    "  - {name: gpu-1, attributes: {model: {string: h100}, numa: {int: 1}}, capacity: {memory: {value: 80Gi}}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: one, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: one-b, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: three, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 3}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: noclass, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: nope}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: bad-cel, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu,\n"
    "  selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].mig'}}]}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: bad-class, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: broken}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: deleting, namespace: default, deletionTimestamp: '2024-01-01T00:00:00Z'}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: on-n2, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
    "status:\n  allocation:\n    devices: {results: [{request: gpu, driver: gpu.example.com, pool: n2, device: gpu-9}]}\n"
    "    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n2]}]}]}\n"
    "---\n" HDR "kind: ResourceClaim\nmetadata: {name: on-n2-used, namespace: default}\n"
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
    "status:\n  allocation:\n    devices: {results: [{request: gpu, driver: gpu.example.com, pool: n2, device: gpu-8}]}\n"
    "    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n2]}]}]}\n"
    "  reservedFor: [{resource: pods, name: other, uid: uid-other}]\n"
    "---\n" HDR "kind: ResourceClaimTemplate\nmetadata: {name: tmpl, namespace: default}\n"
    "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: c, image: i}]}\n"
#define POD(name, claims) \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {containers: [{name: c, image: i}], resourceClaims: " claims "}\n"
    POD("p-one", "[{name: gpu, resourceClaimName: one}]")
    POD("p-one-b", "[{name: gpu, resourceClaimName: one-b}]")
    POD("p-one-again", "[{name: gpu, resourceClaimName: one}]")
    POD("p-three", "[{name: gpu, resourceClaimName: three}]")
    POD("p-missing", "[{name: gpu, resourceClaimName: no-such}]")
    POD("p-no-template", "[{name: gpu, resourceClaimTemplateName: no-such-template}]")
    POD("p-template", "[{name: gpu, resourceClaimTemplateName: tmpl}]")
    POD("p-noclass", "[{name: gpu, resourceClaimName: noclass}]")
    POD("p-bad-cel", "[{name: gpu, resourceClaimName: bad-cel}]")
    POD("p-bad-class", "[{name: gpu, resourceClaimName: bad-class}]")
    POD("p-deleting", "[{name: gpu, resourceClaimName: deleting}]")
    POD("p-on-n2", "[{name: gpu, resourceClaimName: on-n2}]")
    POD("p-on-n2-used", "[{name: gpu, resourceClaimName: on-n2-used}]")
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-not-owner}\n"
    "spec: {containers: [{name: c, image: i}], resourceClaims: [{name: gpu, resourceClaimTemplateName: tmpl}]}\n"
    "status: {resourceClaimStatuses: [{name: gpu, resourceClaimName: one}]}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-none-needed}\n"
    "spec: {containers: [{name: c, image: i}], resourceClaims: [{name: gpu, resourceClaimTemplateName: tmpl}]}\n"
    "status: {resourceClaimStatuses: [{name: gpu}]}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: missing-pvc}\n"
    "spec:\n  containers: [{name: c, image: i}]\n"
    "  volumes: [{name: data, persistentVolumeClaim: {claimName: missing-claim}}]\n";

static void setup(tv_env *e, const char *plugins) {
    tv_init(e, plugins, base_yaml);
    tv_admit(e);
}

static const char *pre_enqueue(tv_env *e, const char *pod) {
    int plugin = -1;
    return tv_status(ks_framework_run_pre_enqueue(e->fw, tv_pod(e, pod), 0, &plugin));
}

static void pod_without_claims_skips_filter(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    assert_string_equal(pre_enqueue(&e, "plain"), "Success");
    assert_string_equal(tv_filter(&e, "plain"), "n1 Success; n2 Success (skip)");
    assert_string_equal(tv_post_filter(&e, "plain"), "Unschedulable: no new claims to deallocate");
    assert_string_equal(tv_reserve(&e, "plain", "n1"), "Success");
    assert_string_equal(tv_pre_bind(&e, "plain", "n1"), "Skip");
    tv_free(&e);
}

/* An earlier PreFilter plugin rejected the pod: DynamicResources' PreFilter
 * never ran and its PostFilter cannot read its state. */
static void post_filter_without_prefilter_state_is_error_not_found(void **st) {
    tv_env e;
    setup(&e, "VolumeBinding,DynamicResources");
    assert_string_equal(tv_filter(&e, "missing-pvc"),
                        "UnschedulableAndUnresolvable: persistentvolumeclaim \"missing-claim\" not found");
    assert_string_equal(tv_post_filter(&e, "missing-pvc"), "Error: not found");
    tv_free(&e);
}

/* PreEnqueue and PreFilter: claims that cannot be used (upstream's
 * foreachPodResourceClaim and validateDeviceClass texts). */
static void claims_that_cannot_be_used(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    static const char *const cases[][2] = {
        {"p-missing", "UnschedulableAndUnresolvable: could not find ResourceClaim \"default/no-such\""},
        {"p-no-template", "UnschedulableAndUnresolvable: pod \"default/p-no-template\": ResourceClaim not created yet"},
        {"p-deleting", "UnschedulableAndUnresolvable: resourceclaim \"deleting\" is being deleted"},
        {"p-not-owner", "UnschedulableAndUnresolvable: ResourceClaim default/one was not created for pod "
                        "default/p-not-owner (pod is not owner)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_string_equal(pre_enqueue(&e, cases[i][0]), cases[i][1]);
        assert_string_equal(tv_filter(&e, cases[i][0]), cases[i][1]);
        /* the state holds no claims: nothing to deallocate */
        assert_string_equal(tv_post_filter(&e, cases[i][0]), "Unschedulable: no new claims to deallocate");
    }
    assert_string_equal(pre_enqueue(&e, "p-noclass"), "Success");
    assert_string_equal(tv_filter(&e, "p-noclass"),
                        "UnschedulableAndUnresolvable: request gpu: device class nope does not exist");
    /* an entry whose claim the controller found unnecessary */
    assert_string_equal(pre_enqueue(&e, "p-none-needed"), "Success");
    assert_string_equal(tv_filter(&e, "p-none-needed"), "n1 Success; n2 Success (skip)");
    tv_free(&e);
}

/* The template's claim was generated by admission (the claim controller). */
static void claim_from_template(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    const ks_pod *p = tv_pod(&e, "p-template");
    assert_int_equal(p->nclaim_statuses, 1);
    assert_non_null(strstr(p->claim_statuses[0].claim_name, "p-template-gpu-"));
    assert_int_equal(strlen(p->claim_statuses[0].claim_name), strlen("p-template-gpu-") + 5);
    assert_string_equal(pre_enqueue(&e, "p-template"), "Success");
    assert_string_equal(tv_filter(&e, "p-template"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    tv_free(&e);
}

static void allocation_needs_devices_on_the_node(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    assert_string_equal(tv_filter(&e, "p-one"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    assert_string_equal(tv_filter(&e, "p-three"),
                        "n1 UnschedulableAndUnresolvable: cannot allocate all claims; "
                        "n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    assert_string_equal(tv_post_filter(&e, "p-three"), "Unschedulable: still not schedulable");
    tv_free(&e);
}

/* Broken selectors stop the attempt with an error, in upstream's words. */
static void cel_errors(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    assert_string_equal(tv_filter(&e, "p-bad-cel"),
                        "n1 Error: running \"DynamicResources\" filter plugin: claim default/bad-cel: selector #0: "
                        "CEL runtime error: no such key: mig; "
                        "n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    const char *f = tv_filter(&e, "p-bad-class");
    assert_non_null(strstr(f, "filter plugin: class broken: selector #0: CEL compile error: compilation failed: "
                              "ERROR: <input>:1:"));
    tv_free(&e);
}

/* An allocated claim is only available where its node selector says. */
static void allocated_claim_elsewhere(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    tv_claim_writes(&e);
    assert_string_equal(tv_filter(&e, "p-on-n2-used"),
                        "n1 UnschedulableAndUnresolvable: resourceclaim not available on the node; n2 Success");
    /* reserved for another pod: not deallocated */
    assert_string_equal(tv_post_filter(&e, "p-on-n2-used"), "Unschedulable: still not schedulable");
    assert_string_equal(e.claims, "");
    /* not reserved: PostFilter deallocates it, and it can then be
     * allocated anew */
    assert_string_equal(tv_filter(&e, "p-on-n2"),
                        "n1 UnschedulableAndUnresolvable: resourceclaim not available on the node; n2 Success");
    assert_string_equal(tv_post_filter(&e, "p-on-n2"), "Unschedulable: deallocation of ResourceClaim completed");
    assert_string_equal(e.claims, "DEALLOCATE default/on-n2 p-on-n2");
    assert_string_equal(tv_filter(&e, "p-on-n2"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    tv_free(&e);
}

/* Between Reserve and PreBind the allocation is in flight: its devices
 * are taken and its claim cannot be allocated again. */
static void in_flight_allocation(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    assert_string_equal(tv_filter(&e, "p-one"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    assert_string_equal(tv_reserve(&e, "p-one", "n1"), "Success");
    ks_cycle_state *one = e.st;
    e.st = NULL;
    assert_string_equal(tv_filter(&e, "p-one-again"),
                        "UnschedulableAndUnresolvable: resource claim default/one is in the process of being allocated");
    /* one GPU left for another claim */
    assert_string_equal(tv_filter(&e, "p-three"),
                        "n1 UnschedulableAndUnresolvable: cannot allocate all claims; "
                        "n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    assert_string_equal(tv_filter(&e, "p-one-b"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    /* Unreserve ends it */
    ks_cycle_state *b = e.st;
    e.st = one;
    tv_unreserve(&e, "p-one", "n1");
    e.st = b;
    assert_string_equal(tv_filter(&e, "p-one-again"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    tv_free(&e);
    ks_cycle_state_free(one);
}

/* PreBind writes the allocation and the reservation; the claim is then
 * allocated for every later pod, on the node its devices are on. */
static void pre_bind_writes_the_claim(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    tv_claim_writes(&e);
    tv_filter(&e, "p-one");
    assert_string_equal(tv_reserve(&e, "p-one", "n1"), "Success");
    assert_string_equal(tv_pre_bind(&e, "p-one", "n1"), "Success");
    assert_string_equal(e.claims, "RESERVE default/one p-one gpu=n1/gpu-0");
    /* a second pod shares the claim: only n1 will do, and its PreBind
     * only adds the reservation */
    assert_string_equal(tv_filter(&e, "p-one-again"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: resourceclaim not available on the node");
    assert_string_equal(tv_reserve(&e, "p-one-again", "n1"), "Success");
    assert_string_equal(tv_pre_bind(&e, "p-one-again", "n1"), "Success");
    assert_string_equal(e.claims, "RESERVE default/one p-one gpu=n1/gpu-0; RESERVE default/one p-one-again");
    /* the other GPU remains */
    assert_string_equal(tv_filter(&e, "p-one-b"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: cannot allocate all claims");
    tv_reserve(&e, "p-one-b", "n1");
    tv_pre_bind(&e, "p-one-b", "n1");
    assert_non_null(strstr(e.claims, "RESERVE default/one-b p-one-b gpu=n1/gpu-1"));
    /* Unreserve after PreBind takes the reservation back */
    tv_unreserve(&e, "p-one-b", "n1");
    assert_non_null(strstr(e.claims, "UNRESERVE default/one-b p-one-b"));
    tv_free(&e);
}

/* Without a backend call (embedders), the written claim stays assumed in
 * the plugin. */
static void pre_bind_without_backend_assumes(void **st) {
    tv_env e;
    setup(&e, "DynamicResources");
    tv_filter(&e, "p-one");
    tv_reserve(&e, "p-one", "n1");
    assert_string_equal(tv_pre_bind(&e, "p-one", "n1"), "Success");
    assert_string_equal(tv_filter(&e, "p-one-again"),
                        "n1 Success; n2 UnschedulableAndUnresolvable: resourceclaim not available on the node");
    tv_free(&e);
}

static void set_gates(const char *v) {
    char *err = NULL;
    const char *vals[] = {v};
    ks_log_set_output(fopen("/dev/null", "w")); /* the GA gate's warning */
    bool ok = ks_feature_gates_apply(vals, 1, &err);
    if (!ok) fail_msg("%s", err);
}

/* DynamicResourceAllocation off: the plugin exists but does nothing, as
 * upstream's (New returns a disabled plugin): claims are not looked at. */
static void disabled_by_gate(void **st) {
    set_gates("DynamicResourceAllocation=false");
    tv_env e;
    setup(&e, "DynamicResources");
    assert_string_equal(pre_enqueue(&e, "p-missing"), "Success");
    assert_string_equal(tv_filter(&e, "p-three"), "n1 Success; n2 Success (skip)");
    assert_string_equal(tv_post_filter(&e, "p-three"), "Unschedulable: plugin disabled");
    assert_string_equal(tv_reserve(&e, "p-three", "n1"), "Success");
    assert_string_equal(tv_pre_bind(&e, "p-three", "n1"), "Skip");
    tv_free(&e);
    ks_feature_gates_reset();
}

/* DRAPrioritizedList off: a claim with firstAvailable is refused. */
static void prioritized_list_off(void **st) {
    set_gates("DRAPrioritizedList=false");
    static const char *const y =
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '10'}}\n"
        "---\n" HDR "kind: DeviceClass\nmetadata: {name: gpu}\n"
        "---\n" HDR "kind: ResourceClaim\nmetadata: {name: alt, namespace: default}\n"
        "spec: {devices: {requests: [{name: gpu, firstAvailable: [{name: a, deviceClassName: gpu}]}]}}\n"
        POD("p-alt", "[{name: gpu, resourceClaimName: alt}]");
    tv_env e;
    tv_init(&e, "DynamicResources", y);
    tv_admit(&e);
    assert_string_equal(tv_filter(&e, "p-alt"),
                        "UnschedulableAndUnresolvable: resource claim default/alt, request gpu: has subrequests, but "
                        "the DRAPrioritizedList feature is disabled");
    tv_free(&e);
    ks_feature_gates_reset();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disabled_by_gate),
        cmocka_unit_test(prioritized_list_off),
        cmocka_unit_test(pod_without_claims_skips_filter),
        cmocka_unit_test(post_filter_without_prefilter_state_is_error_not_found),
        cmocka_unit_test(claims_that_cannot_be_used),
        cmocka_unit_test(claim_from_template),
        cmocka_unit_test(allocation_needs_devices_on_the_node),
        cmocka_unit_test(cel_errors),
        cmocka_unit_test(allocated_claim_elsewhere),
        cmocka_unit_test(in_flight_allocation),
        cmocka_unit_test(pre_bind_writes_the_claim),
        cmocka_unit_test(pre_bind_without_backend_assumes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
