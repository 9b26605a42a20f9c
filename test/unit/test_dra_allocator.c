/* The structured allocator, case by case in the spirit of upstream's
 * allocator_testing.go: which devices it picks (first fit in pool order,
 * backtracking for constraints), what it refuses (devices in use, too
 * many devices, incomplete or invalid pools, missing classes), "All",
 * firstAvailable, admin access, configs and node selectors of results. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "codec/errors.h"
#include "plugins/dynamicresources/allocator.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define HDR "apiVersion: resource.k8s.io/v1\n"

static const char *const common =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {zone: b}}\n"
    "---\n" HDR "kind: DeviceClass\nmetadata: {name: gpu}\n"
    "spec:\n  selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]\n"
    "  config: [{opaque: {driver: gpu.example.com, parameters: {mode: shared}}}]\n"
    "---\n" HDR "kind: DeviceClass\nmetadata: {name: big}\n"
    "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}},\n"
    "  {cel: {expression: 'device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"64Gi\")) >= 0'}}]}\n"
    "---\n" HDR "kind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
    "spec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n"
    "  devices:\n"
    "  - {name: gpu-0, attributes: {numa: {int: 0}, model: {string: a100}}, capacity: {memory: {value: 40Gi}}}\n"
    "  - {name: gpu-1, attributes: {numa: {int: 1}, model: {string: a100}}, capacity: {memory: {value: 40Gi}}}\n"
    "  - {name: gpu-2, attributes: {numa: {int: 1}, model: {string: h100}}, capacity: {memory: {value: 80Gi}}}\n"
    "---\n" HDR "kind: ResourceSlice\nmetadata: {name: zone-a-fabric}\n"
    "spec:\n  driver: fabric.example.com\n  pool: {name: zone-a, generation: 1, resourceSliceCount: 1}\n"
    "  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}\n"
    "  devices: [{name: link-0}]\n"
    "---\n" HDR "kind: DeviceClass\nmetadata: {name: fabric}\n"
    "spec: {selectors: [{cel: {expression: 'device.driver == \"fabric.example.com\"'}}]}\n";

typedef struct env {
    ks_cluster *c;
    ks_dra_cel_cache *cache;
} env;

static void env_load(env *e, const char *extra) {
    char *all = ks_xasprintf("%s---\n%s", common, extra);
    e->c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    if (!ks_load_buffer(e->c, "test.yaml", all, strlen(all), &errs)) {
        for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
        fail();
    }
    ks_errors_free(&errs);
    free(all);
    char *err = NULL;
    assert_true(ks_cluster_admit(e->c, &err));
    e->cache = ks_dra_cel_cache_new(16);
}

static void env_free(env *e) {
    ks_dra_cel_cache_free(e->cache);
    ks_cluster_free(e->c);
}

static const ks_resource_claim *claim(env *e, const char *name) {
    for (uint32_t i = 0; i < e->c->resource_claims.n; i++)
        if (strcmp(ks_str(e->c->resource_claims.v[i]->name), name) == 0) return e->c->resource_claims.v[i];
    fail_msg("no claim %s", name);
    return NULL;
}

/* Allocate the comma-separated claims on node, with `used` devices
 * ("pool/device,...") in use: "claim: req=pool/device ..." per claim
 * joined by "; ", "unschedulable", or "error: ...". */
static const char *alloc_on(env *e, const char *node, const char *claims, const char *used) {
    static char out[4096];
    const ks_resource_claim *cl[8];
    size_t n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", claims);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) cl[n++] = claim(e, tok);
    ks_dra_device_set set;
    ks_dra_device_set_init(&set);
    if (used) {
        char ub[512];
        snprintf(ub, sizeof ub, "%s", used);
        for (char *tok = strtok(ub, ","); tok; tok = strtok(NULL, ",")) {
            char *slash = strchr(tok, '/');
            *slash = 0;
            ks_dra_device_set_add(&set, "gpu.example.com", tok, slash + 1);
        }
    }
    ks_dra_allocator *al = ks_dra_allocator_new(NULL, &set, e->c->device_classes.v, e->c->device_classes.n,
                                                e->c->resource_slices.v, e->c->resource_slices.n, e->cache);
    ks_node *nd = ks_cluster_node(e->c, ks_intern(node));
    ks_arena *a = ks_arena_new(1024);
    ks_allocation_result res[8];
    char *err = NULL;
    ks_dra_outcome o = ks_dra_allocate(al, nd, cl, n, a, res, 0, &err);
    ks_strbuf b;
    ks_sb_init(&b);
    if (o == KS_DRA_UNSCHEDULABLE) {
        ks_sb_puts(&b, "unschedulable");
    } else if (o == KS_DRA_ERROR) {
        ks_sb_printf(&b, "error: %s", err);
    } else {
        for (size_t i = 0; i < n; i++) {
            ks_sb_printf(&b, "%s%s:", i ? "; " : "", ks_str(cl[i]->name));
            for (uint32_t k = 0; k < res[i].nresults; k++) {
                const ks_device_result *r = &res[i].results[k];
                ks_sb_printf(&b, " %s=%s/%s%s", r->request, r->pool, r->device, r->admin_access ? "(admin)" : "");
            }
            if (res[i].nconfig) {
                ks_sb_puts(&b, " config:");
                for (uint32_t k = 0; k < res[i].nconfig; k++)
                    ks_sb_printf(&b, " %s[%u]", res[i].config[k].from_class ? "class" : "claim",
                                 res[i].config[k].nrequests);
            }
            if (res[i].has_node_selector) {
                const ks_node_selector_term *t = &res[i].node_selector.terms[0];
                ks_sb_puts(&b, " on:");
                for (uint32_t k = 0; k < t->nfields; k++)
                    ks_sb_printf(&b, " %s=%s", ks_str(t->fields[k].key), ks_str(t->fields[k].values[0]));
                for (uint32_t k = 0; k < t->nexpr; k++)
                    ks_sb_printf(&b, " %s=%s", ks_str(t->exprs[k].key), ks_str(t->exprs[k].values[0]));
            }
        }
    }
    snprintf(out, sizeof out, "%s", ks_sb_str(&b));
    ks_sb_free(&b);
    free(err);
    ks_arena_free(a);
    ks_dra_allocator_free(al);
    ks_dra_device_set_free(&set);
    return out;
}

#define CLAIM(name, devices) HDR "kind: ResourceClaim\nmetadata: {name: " name ", namespace: default}\nspec: {devices: " devices "}\n---\n"

static void first_fit_in_order(void **st) {
    env e;
    env_load(&e, CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("two", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}]}")
                 CLAIM("four", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 4}}]}"));
    assert_string_equal(alloc_on(&e, "n1", "one", NULL), "one: gpu=n1/gpu-0 config: class[0] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "one", "n1/gpu-0"), "one: gpu=n1/gpu-1 config: class[0] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "two", NULL),
                        "two: gpus=n1/gpu-0 gpus=n1/gpu-1 config: class[0] on: metadata.name=n1");
    /* two claims of a pod never share a device */
    assert_string_equal(alloc_on(&e, "n1", "one,two", NULL),
                        "one: gpu=n1/gpu-0 config: class[0] on: metadata.name=n1; "
                        "two: gpus=n1/gpu-1 gpus=n1/gpu-2 config: class[0] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "four", NULL), "unschedulable");
    assert_string_equal(alloc_on(&e, "n2", "one", NULL), "unschedulable");
    env_free(&e);
}

/* matchAttribute: the search backtracks until the devices agree. */
static void match_attribute(void **st) {
    env e;
    env_load(&e, CLAIM("same-numa", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}],\n"
                                    "  constraints: [{matchAttribute: gpu.example.com/numa}]}")
                 CLAIM("same-model", "{requests: [{name: a, exactly: {deviceClassName: gpu}}, "
                                     "{name: b, exactly: {deviceClassName: gpu}}],\n"
                                     "  constraints: [{requests: [a, b], matchAttribute: gpu.example.com/model}]}")
                 CLAIM("no-attr", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}],\n"
                                  "  constraints: [{matchAttribute: gpu.example.com/serial}]}"));
    assert_string_equal(alloc_on(&e, "n1", "same-numa", NULL),
                        "same-numa: gpus=n1/gpu-1 gpus=n1/gpu-2 config: class[0] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "same-model", NULL),
                        "same-model: a=n1/gpu-0 b=n1/gpu-1 config: class[0] class[0] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "same-model", "n1/gpu-1"), "unschedulable");
    assert_string_equal(alloc_on(&e, "n1", "no-attr", NULL), "unschedulable");
    env_free(&e);
}

static void all_devices(void **st) {
    env e;
    env_load(&e, CLAIM("all", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, allocationMode: All,\n"
                              "  selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].model == \"a100\"'}}]}}]}")
                 CLAIM("all-fabric", "{requests: [{name: links, exactly: {deviceClassName: fabric, allocationMode: All}}]}")
                 HDR "kind: ResourceSlice\nmetadata: {name: n2-gpus}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 2}\n"
                 "  devices: [{name: gpu-0}]\n---\n");
    assert_string_equal(alloc_on(&e, "n1", "all", NULL),
                        "all: gpus=n1/gpu-0 gpus=n1/gpu-1 config: class[0] on: metadata.name=n1");
    /* "All" fails when one of them is in use */
    assert_string_equal(alloc_on(&e, "n1", "all", "n1/gpu-1"), "unschedulable");
    /* a network-attached pool: the claim gets the pool's node selector */
    assert_string_equal(alloc_on(&e, "n1", "all-fabric", NULL), "all-fabric: links=zone-a/link-0 on: zone=a");
    /* a pool still being published */
    assert_string_equal(alloc_on(&e, "n2", "all", NULL),
                        "error: claim default/all, request gpus: asks for all devices, but resource pool "
                        "gpu.example.com/n2 is currently being updated");
    env_free(&e);
}

static void first_available(void **st) {
    env e;
    env_load(&e, CLAIM("prefer-big", "{requests: [{name: gpu, firstAvailable: [\n"
                                     "  {name: two-big, deviceClassName: big, count: 2},\n"
                                     "  {name: big, deviceClassName: big},\n"
                                     "  {name: any, deviceClassName: gpu}]}],\n"
                                     "  config: [{requests: [gpu/any], opaque: {driver: gpu.example.com, parameters: {}}},\n"
                                     "           {requests: [gpu], opaque: {driver: gpu.example.com, parameters: {}}}]}"));
    assert_string_equal(alloc_on(&e, "n1", "prefer-big", NULL),
                        "prefer-big: gpu/big=n1/gpu-2 config: claim[1] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "prefer-big", "n1/gpu-2"),
                        "prefer-big: gpu/any=n1/gpu-0 config: class[0] claim[1] claim[1] on: metadata.name=n1");
    env_free(&e);
}

static void admin_access(void **st) {
    env e;
    env_load(&e, CLAIM("monitor", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, allocationMode: All, adminAccess: true}}]}"));
    assert_string_equal(alloc_on(&e, "n1", "monitor", "n1/gpu-0,n1/gpu-1,n1/gpu-2"),
                        "monitor: gpus=n1/gpu-0(admin) gpus=n1/gpu-1(admin) gpus=n1/gpu-2(admin) config: class[0] "
                        "on: metadata.name=n1");
    env_free(&e);
}

static void refusals(void **st) {
    env e;
    env_load(&e, CLAIM("too-many", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 33}}]}")
                 CLAIM("no-class", "{requests: [{name: gpu, exactly: {deviceClassName: nope}}]}")
                 CLAIM("bad-cel", "{requests: [{name: gpu, exactly: {deviceClassName: gpu,\n"
                                  "  selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].model'}}]}}]}")
                 CLAIM("not-bool", "{requests: [{name: gpu, exactly: {deviceClassName: gpu,\n"
                                   "  selectors: [{cel: {expression: '1'}}]}}]}"));
    assert_string_equal(alloc_on(&e, "n1", "too-many", NULL),
                        "error: claim default/too-many: number of requested devices 33 exceeds the claim limit of 32");
    assert_string_equal(alloc_on(&e, "n1", "no-class", NULL),
                        "error: claim default/no-class, request gpu: could not retrieve device class nope: "
                        "deviceclass.resource.k8s.io \"nope\" not found");
    assert_string_equal(alloc_on(&e, "n1", "bad-cel", NULL),
                        "error: claim default/bad-cel: selector #0: CEL runtime error: CEL result of type string "
                        "could not be converted to bool: unsupported native conversion from string to 'bool'");
    assert_string_equal(alloc_on(&e, "n1", "not-bool", NULL),
                        "error: claim default/not-bool: selector #0: CEL compile error: must evaluate to bool or the "
                        "unknown type, not int");
    /* no device to check: no error either */
    assert_string_equal(alloc_on(&e, "n2", "bad-cel", NULL), "unschedulable");
    env_free(&e);
}

/* Duplicate device names make a pool invalid; only the newest generation
 * of a pool counts. */
static void pools(void **st) {
    env e;
    env_load(&e, CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 HDR "kind: ResourceSlice\nmetadata: {name: n2-a}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 3, resourceSliceCount: 1}\n"
                 "  devices: [{name: new-0}]\n---\n"
                 HDR "kind: ResourceSlice\nmetadata: {name: n2-old}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 2, resourceSliceCount: 1}\n"
                 "  devices: [{name: old-0}]\n---\n");
    assert_string_equal(alloc_on(&e, "n2", "one", NULL), "one: gpu=n2/new-0 config: class[0] on: metadata.name=n2");
    env_free(&e);
    env_load(&e, CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 HDR "kind: ResourceSlice\nmetadata: {name: n2-a}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 2}\n"
                 "  devices: [{name: gpu-0}]\n---\n"
                 HDR "kind: ResourceSlice\nmetadata: {name: n2-b}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 2}\n"
                 "  devices: [{name: gpu-0}]\n---\n");
    assert_string_equal(alloc_on(&e, "n2", "one", NULL), "error: pool n2 is invalid: duplicate device name gpu-0");
    env_free(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_fit_in_order), cmocka_unit_test(match_attribute), cmocka_unit_test(all_devices),
        cmocka_unit_test(first_available),    cmocka_unit_test(admin_access),    cmocka_unit_test(refusals),
        cmocka_unit_test(pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
