/* Decoding of the resource.k8s.io kinds: v1 as written, v1beta1 converted
 * (requests without `exactly`, device fields under `basic`), the API
 * server's defaults, the pod's resourceClaims and resourceClaimStatuses,
 * the claims the claim controller generates, and errors with their path. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "codec/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static ks_cluster *load(const char *yaml, ks_errors *errs) {
    ks_cluster *c = ks_cluster_new();
    ks_errors_init(errs);
    if (!ks_load_buffer(c, "t.yaml", yaml, strlen(yaml), errs)) {
        ks_cluster_free(c);
        return NULL;
    }
    return c;
}

static void v1_objects(void **st) {
    ks_errors errs;
    ks_cluster *c = load("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                         "spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
                         "  pool: {name: p, generation: 2, resourceSliceCount: 1}\n"
                         "  devices:\n  - name: gpu-0\n    attributes:\n      model: {string: a100}\n"
                         "      other.example.com/numa: {int: 1}\n      mig: {bool: true}\n"
                         "      version: {version: 1.2.3}\n    capacity: {memory: {value: 40Gi}}\n"
                         "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\n"
                         "spec:\n  devices:\n    requests:\n    - {name: a, exactly: {deviceClassName: gpu}}\n"
                         "    - {name: b, exactly: {deviceClassName: gpu, allocationMode: All, adminAccess: true}}\n"
                         "    - name: c\n      firstAvailable: [{name: x, deviceClassName: big, count: 2}, "
                         "{name: yy, deviceClassName: gpu}]\n"
                         "    constraints: [{requests: [a, c], matchAttribute: gpu.example.com/model}]\n"
                         "    config: [{requests: [a], opaque: {driver: gpu.example.com, parameters: {k: v}}}]\n"
                         "status:\n  allocation:\n    devices: {results: [{request: a, driver: gpu.example.com, pool: p, "
                         "device: gpu-0}]}\n"
                         "  reservedFor: [{resource: pods, name: p1, uid: u1}]\n"
                         "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                         "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n",
                         &errs);
    assert_non_null(c);
    assert_int_equal(c->resource_slices.n, 1);
    const ks_resource_slice *s = c->resource_slices.v[0];
    assert_string_equal(s->driver, "gpu.example.com");
    assert_string_equal(s->pool, "p");
    assert_int_equal(s->generation, 2);
    assert_string_equal(ks_str(s->node_name), "n1");
    assert_int_equal(s->ndevices, 1);
    const ks_device *d = &s->devices[0];
    assert_int_equal(d->cel.nattrs, 4);
    assert_string_equal(d->cel.attrs[0].domain, "gpu.example.com");
    assert_string_equal(d->cel.attrs[0].id, "model");
    assert_string_equal(d->cel.attrs[1].domain, "other.example.com");
    assert_string_equal(d->cel.attrs[1].id, "numa");
    assert_int_equal(d->cel.attrs[1].kind, KS_CEL_ATTR_INT);
    assert_int_equal(d->cel.attrs[3].kind, KS_CEL_ATTR_VERSION);
    assert_non_null(ks_device_attribute(d, "gpu.example.com/model"));
    assert_non_null(ks_device_attribute(d, "other.example.com/numa"));
    assert_null(ks_device_attribute(d, "other.example.com/model"));
    assert_true(d->cel.caps[0].nano == (__int128)40 * 1024 * 1024 * 1024 * 1000000000);
    const ks_resource_claim *cl = c->resource_claims.v[0];
    assert_string_equal(ks_str(cl->ns), "ml");
    assert_int_equal(cl->nrequests, 3);
    assert_true(cl->requests[0].has_exactly);
    assert_int_equal(cl->requests[0].exactly.mode, KS_ALLOC_EXACT_COUNT);
    assert_int_equal(cl->requests[0].exactly.count, 1); /* defaulted */
    assert_int_equal(cl->requests[1].exactly.mode, KS_ALLOC_ALL);
    assert_true(cl->requests[1].has_admin_access && cl->requests[1].admin_access);
    assert_int_equal(cl->requests[2].nfirst, 2);
    assert_int_equal(cl->requests[2].first[0].count, 2);
    assert_string_equal(cl->requests[2].first[1].device_class, "gpu");
    assert_int_equal(cl->nconstraints, 1);
    assert_string_equal(cl->constraints[0].match_attribute, "gpu.example.com/model");
    assert_int_equal(cl->nconfig, 1);
    assert_string_equal(cl->config[0].driver, "gpu.example.com");
    assert_non_null(cl->allocation);
    assert_string_equal(cl->allocation->results[0].device, "gpu-0");
    assert_int_equal(cl->nreserved, 1);
    assert_string_equal(cl->reserved[0].uid, "u1");
    assert_int_equal(c->device_classes.v[0]->nselectors, 1);
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void v1beta1_converted(void **st) {
    ks_errors errs;
    ks_cluster *c = load("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                         "spec:\n  driver: d\n  allNodes: true\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                         "  devices: [{name: x, basic: {attributes: {a: {int: 3}}, capacity: {m: {value: '1'}}}}]\n"
                         "---\napiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                         "spec: {devices: {requests: [{name: r, deviceClassName: k, count: 2},\n"
                         "  {name: f, firstAvailable: [{name: s, deviceClassName: k}]}]}}\n",
                         &errs);
    assert_non_null(c);
    const ks_resource_slice *s = c->resource_slices.v[0];
    assert_true(s->all_nodes);
    assert_int_equal(s->devices[0].cel.nattrs, 1);
    assert_int_equal(s->devices[0].cel.attrs[0].i, 3);
    assert_int_equal(s->devices[0].cel.ncaps, 1);
    const ks_resource_claim *cl = c->resource_claims.v[0];
    assert_true(cl->requests[0].has_exactly);
    assert_string_equal(cl->requests[0].exactly.device_class, "k");
    assert_int_equal(cl->requests[0].exactly.count, 2);
    assert_int_equal(cl->requests[1].nfirst, 1);
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void pod_claims_and_generated_claims(void **st) {
    ks_errors errs;
    ks_cluster *c = load("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                         "metadata: {name: t, namespace: default}\n"
                         "spec: {metadata: {annotations: {team: ml}}, spec: {devices: {requests: "
                         "[{name: g, exactly: {deviceClassName: gpu}}]}}}\n"
                         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a-pod-with-a-rather-long-name-for-testing}\n"
                         "spec:\n  containers: [{name: c, image: i}]\n"
                         "  resourceClaims: [{name: gpu-claim-with-a-long-name, resourceClaimTemplateName: t}, "
                         "{name: b, resourceClaimName: shared}]\n"
                         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: done}\n"
                         "spec:\n  containers: [{name: c, image: i}]\n"
                         "  resourceClaims: [{name: g, resourceClaimTemplateName: t}]\n"
                         "status: {resourceClaimStatuses: [{name: g, resourceClaimName: done-g-abcde}]}\n",
                         &errs);
    assert_non_null(c);
    char *err = NULL;
    assert_true(ks_cluster_admit(c, &err));
    const ks_pod *p = c->pods.v[0];
    assert_int_equal(p->nresource_claims, 2);
    assert_string_equal(p->resource_claims[1].claim_name, "shared");
    assert_int_equal(p->nclaim_statuses, 1);
    /* generateName shortened proportionally, then 5 characters */
    const char *name = p->claim_statuses[0].claim_name;
    assert_int_equal(strlen(name), 60);
    assert_int_equal(strncmp(name, "a-pod-with-a-rather-long-name-for-gpu-claim-with-a-long", 55), 0);
    assert_int_equal(c->resource_claims.n, 1);
    const ks_resource_claim *cl = c->resource_claims.v[0];
    assert_string_equal(ks_str(cl->name), name);
    assert_true(ks_claim_owned_by(cl, p->uid));
    assert_int_equal(cl->nrequests, 1);
    ks_id v;
    assert_true(ks_labels_get(&cl->annotations, ks_intern("resource.kubernetes.io/pod-claim-name"), &v));
    assert_string_equal(ks_str(v), "gpu-claim-with-a-long-name");
    assert_true(ks_labels_get(&cl->annotations, ks_intern("team"), &v));
    /* a pod whose claim exists already gets none */
    assert_int_equal(c->pods.v[1]->nclaim_statuses, 1);
    bool check, skip;
    assert_string_equal(ks_pod_claim_name(c->pods.v[1], 0, &check, &skip), "done-g-abcde");
    assert_true(check);
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void errors_name_the_field(void **st) {
    ks_errors errs;
    ks_cluster *c = load("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                         "spec:\n  pool: {name: p}\n  devices: [{name: x, capacity: {m: {value: lots}}}]\n",
                         &errs);
    assert_null(c);
    assert_int_equal(errs.n, 2);
    assert_non_null(strstr(errs.v[0], "resourceslice s: spec.driver: required"));
    assert_non_null(strstr(errs.v[1], "spec.devices[0].capacity.m.value"));
    ks_errors_free(&errs);
}

/* The alpha gates' fields: taints, tolerations, counters, per-device node
 * selection, bindsToNode, DeviceTaintRules. */
static void alpha_fields(void **st) {
    ks_errors errs;
    ks_cluster *c = load("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                         "spec:\n  driver: gpu.example.com\n  perDeviceNodeSelection: false\n"
                         "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                         "  sharedCounters: [{name: set0, counters: {mem: {value: 80Gi}, sm: {value: '7'}}}]\n"
                         "  devices:\n  - name: d0\n    nodeName: n1\n    bindsToNode: true\n"
                         "    taints: [{key: k, value: v, effect: NoSchedule, timeAdded: '2025-01-01T00:00:00Z'}]\n"
                         "    consumesCounters: [{counterSet: set0, counters: {mem: {value: 10Gi}}}]\n"
                         "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\n"
                         "spec:\n  devices:\n    requests:\n    - {name: a, exactly: {deviceClassName: gpu, tolerations: "
                         "[{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]}}\n"
                         "---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                         "spec:\n  deviceSelector: {deviceClassName: gpu, driver: gpu.example.com, pool: p, device: d0,\n"
                         "    selectors: [{cel: {expression: 'true'}}]}\n"
                         "  taint: {key: broken, value: x, effect: NoExecute}\n",
                         &errs);
    for (size_t i = 0; !c && i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_non_null(c);
    const ks_resource_slice *s = c->resource_slices.v[0];
    assert_true(s->has_per_device_node_selection);
    assert_false(s->per_device_node_selection);
    assert_int_equal(s->nshared_counters, 1);
    assert_string_equal(s->shared_counters[0].name, "set0");
    assert_int_equal(s->shared_counters[0].ncounters, 2);
    assert_true(s->shared_counters[0].counters[0].nano == (__int128)80 * 1024 * 1024 * 1024 * 1000000000);
    const ks_device *d = &s->devices[0];
    assert_string_equal(ks_str(d->node_name), "n1");
    assert_true(d->binds_to_node);
    assert_int_equal(d->ntaints, 1);
    assert_string_equal(d->taints[0].key, "k");
    assert_string_equal(d->taints[0].value, "v");
    assert_string_equal(d->taints[0].effect, "NoSchedule");
    assert_int_equal(d->nconsumes, 1);
    assert_string_equal(d->consumes[0].name, "set0");
    assert_string_equal(d->consumes[0].counters[0].name, "mem");
    const ks_device_subrequest *r = &c->resource_claims.v[0]->requests[0].exactly;
    assert_int_equal(r->ntolerations, 1);
    assert_string_equal(r->tolerations[0].key, "k");
    assert_string_equal(r->tolerations[0].op, "Exists");
    assert_string_equal(r->tolerations[0].value, "");
    assert_true(ks_device_toleration_tolerates(&r->tolerations[0], &d->taints[0]));
    assert_int_equal(c->device_taint_rules.n, 1);
    const ks_device_taint_rule *rule = c->device_taint_rules.v[0];
    assert_true(rule->has_selector);
    assert_string_equal(rule->device_class, "gpu");
    assert_string_equal(rule->device, "d0");
    assert_int_equal(rule->nselectors, 1);
    assert_string_equal(rule->taint.key, "broken");
    assert_string_equal(rule->taint.effect, "NoExecute");
    assert_false(ks_device_toleration_tolerates(&r->tolerations[0], &rule->taint));
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v1_objects),
        cmocka_unit_test(v1beta1_converted),
        cmocka_unit_test(pod_claims_and_generated_claims),
        cmocka_unit_test(errors_name_the_field),
        cmocka_unit_test(alpha_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
