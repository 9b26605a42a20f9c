/* The structured allocator, case by case in the spirit of upstream's
 * allocator_testing.go: which devices it picks (first fit in pool order,
 * backtracking for constraints), what it refuses (devices in use, too
 * many devices, incomplete or invalid pools, missing classes), "All",
 * firstAvailable, admin access, configs and node selectors of results. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "codec/errors.h"
#include "plugins/dynamicresources/allocator.h"
#include "plugins/dynamicresources/dra_manager.h"
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
static const char *alloc_f(env *e, const ks_dra_features *f, const char *node, const char *claims, const char *used);
static const char *alloc_on(env *e, const char *node, const char *claims, const char *used) {
    return alloc_f(e, NULL, node, claims, used);
}

/* With features f; the cluster's DeviceTaintRules apply when f has
 * device_taints. */
static const char *alloc_f(env *e, const ks_dra_features *f, const char *node, const char *claims, const char *used) {
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
            /* "driver:pool/device" for another driver */
            char *colon = strchr(tok, ':');
            if (colon) *colon = 0;
            ks_dra_device_set_add(&set, colon ? tok : "gpu.example.com", colon ? colon + 1 : tok, slash + 1);
        }
    }
    ks_dra_taint_rules rules = {e->c->device_taint_rules.v, e->c->device_taint_rules.n, e->c->device_classes.v,
                                e->c->device_classes.n, e->cache};
    const ks_dra_taint_rules *rp = f && f->device_taints ? &rules : NULL;
    ks_dra_slices *sl = ks_dra_slices_new(e->c->resource_slices.v, e->c->resource_slices.n, rp);
    assert_true(ks_dra_slices_same(sl, e->c->resource_slices.v, e->c->resource_slices.n, rp));
    ks_dra_allocator *al = ks_dra_allocator_new(f, &set, e->c->device_classes.v, e->c->device_classes.n, sl,
                                                e->cache);
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
    ks_dra_slices_unref(sl);
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

/* firstAvailable with every mix of count, "All" and selectors (issue #37):
 * each alternative is tried in order with its own class, selectors, count
 * and mode. n3 holds four l4 GPUs (numa 0 0 1 1); n4 a t4 and three h100
 * (numa 0 0 0 1). */
#define MODEL(m) "selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].model == \"" m "\"'}}]"
static void first_available_mixes(void **st) {
    env e;
    env_load(&e,
             "apiVersion: v1\nkind: Node\nmetadata: {name: n3}\n---\n"
             "apiVersion: v1\nkind: Node\nmetadata: {name: n4}\n---\n" HDR "kind: ResourceSlice\nmetadata: {name: n3-gpus}\n"
             "spec:\n  driver: gpu.example.com\n  nodeName: n3\n  pool: {name: n3, generation: 1, resourceSliceCount: 1}\n"
             "  devices:\n"
             "  - {name: gpu-0, attributes: {numa: {int: 0}, model: {string: l4}}}\n"
             "  - {name: gpu-1, attributes: {numa: {int: 0}, model: {string: l4}}}\n"
             "  - {name: gpu-2, attributes: {numa: {int: 1}, model: {string: l4}}}\n"
             "  - {name: gpu-3, attributes: {numa: {int: 1}, model: {string: l4}}}\n"
             "---\n" HDR "kind: ResourceSlice\nmetadata: {name: n4-gpus}\n"
             "spec:\n  driver: gpu.example.com\n  nodeName: n4\n  pool: {name: n4, generation: 1, resourceSliceCount: 1}\n"
             "  devices:\n"
             "  - {name: gpu-0, attributes: {numa: {int: 0}, model: {string: t4}}}\n"
             "  - {name: gpu-1, attributes: {numa: {int: 0}, model: {string: h100}}}\n"
             "  - {name: gpu-2, attributes: {numa: {int: 0}, model: {string: h100}}}\n"
             "  - {name: gpu-3, attributes: {numa: {int: 1}, model: {string: h100}}}\n"
             "---\n"
             CLAIM("pair-or-all", "{requests: [{name: gpu, firstAvailable: [\n"
                                  "  {name: pair, deviceClassName: gpu, count: 2, " MODEL("h100") "},\n"
                                  "  {name: all, deviceClassName: gpu, allocationMode: All, " MODEL("l4") "},\n"
                                  "  {name: one, deviceClassName: gpu}]}]}")
             CLAIM("all-first", "{requests: [{name: gpu, firstAvailable: [\n"
                                "  {name: all, deviceClassName: gpu, allocationMode: All, " MODEL("l4") "},\n"
                                "  {name: two, deviceClassName: gpu, count: 2},\n"
                                "  {name: one, deviceClassName: gpu}]}]}")
             CLAIM("two-all", "{requests: [{name: gpu, firstAvailable: [\n"
                              "  {name: all-a, deviceClassName: gpu, allocationMode: All, " MODEL("h100") "},\n"
                              "  {name: all-b, deviceClassName: gpu, allocationMode: All, " MODEL("l4") "},\n"
                              "  {name: any, deviceClassName: gpu}]}]}")
             CLAIM("numa", "{requests: [{name: gpu, firstAvailable: [\n"
                           "  {name: pair, deviceClassName: gpu, count: 2, " MODEL("h100") "},\n"
                           "  {name: two, deviceClassName: gpu, count: 2, " MODEL("l4") "}]},\n"
                           "  {name: extra, exactly: {deviceClassName: gpu}}],\n"
                           "  constraints: [{requests: [gpu, extra], matchAttribute: gpu.example.com/numa}]}")
             CLAIM("numa-pair-only", "{requests: [{name: gpu, firstAvailable: [\n"
                                     "  {name: pair, deviceClassName: gpu, count: 2, " MODEL("h100") "},\n"
                                     "  {name: two, deviceClassName: gpu, count: 2, " MODEL("l4") "}]},\n"
                                     "  {name: extra, exactly: {deviceClassName: gpu}}],\n"
                                     "  constraints: [{requests: [gpu/pair, extra], matchAttribute: gpu.example.com/numa}]}"));
#define ON3 " config: class[0] on: metadata.name=n3"
#define ON4 " config: class[0] on: metadata.name=n4"
    /* the counted pair has no h100 on n3; All fails on the devices in use;
     * the last alternative takes the first free one (it used to get two l4s
     * as "pair", read from the All check's cache entries) */
    assert_string_equal(alloc_on(&e, "n3", "pair-or-all", "n3/gpu-0,n3/gpu-1"), "pair-or-all: gpu/one=n3/gpu-2" ON3);
    /* upstream's All branch goes on with the first alternative's data after
     * its first device (the subrequest index is dropped), so All in second
     * place only ever succeeds when the first alternative takes the rest */
    assert_string_equal(alloc_on(&e, "n3", "pair-or-all", NULL), "pair-or-all: gpu/one=n3/gpu-0" ON3);
    /* and h100s are the pair's, even though the All check ran over them */
    assert_string_equal(alloc_on(&e, "n4", "pair-or-all", NULL), "pair-or-all: gpu/pair=n4/gpu-1 gpu/pair=n4/gpu-2" ON4);
    assert_string_equal(alloc_on(&e, "n4", "pair-or-all", "n4/gpu-2"),
                        "pair-or-all: gpu/pair=n4/gpu-1 gpu/pair=n4/gpu-3" ON4);
    assert_string_equal(alloc_on(&e, "n4", "pair-or-all", "n4/gpu-1,n4/gpu-2"), "pair-or-all: gpu/one=n4/gpu-0" ON4);
    /* All first: taken whole, else the next alternative */
    assert_string_equal(alloc_on(&e, "n3", "all-first", NULL),
                        "all-first: gpu/all=n3/gpu-0 gpu/all=n3/gpu-1 gpu/all=n3/gpu-2 gpu/all=n3/gpu-3" ON3);
    assert_string_equal(alloc_on(&e, "n3", "all-first", "n3/gpu-3"), "all-first: gpu/two=n3/gpu-0 gpu/two=n3/gpu-1" ON3);
    assert_string_equal(alloc_on(&e, "n4", "all-first", NULL), "all-first: gpu/two=n4/gpu-0 gpu/two=n4/gpu-1" ON4);
    assert_string_equal(alloc_on(&e, "n4", "all-first", "n4/gpu-0,n4/gpu-1,n4/gpu-2"), "all-first: gpu/one=n4/gpu-3" ON4);
    /* Two All alternatives: upstream checks the second with the first's
     * cache key while validating, so the second's devices are the ones the
     * first's selectors match (on n3: none, though all four are l4) */
    assert_string_equal(alloc_on(&e, "n4", "two-all", NULL),
                        "two-all: gpu/all-a=n4/gpu-1 gpu/all-a=n4/gpu-2 gpu/all-a=n4/gpu-3" ON4);
    assert_string_equal(alloc_on(&e, "n4", "two-all", "n4/gpu-3"), "two-all: gpu/any=n4/gpu-0" ON4);
    assert_string_equal(alloc_on(&e, "n3", "two-all", NULL), "two-all: gpu/any=n3/gpu-0" ON3);
    /* matchAttribute over the parent request covers whichever alternative
     * is chosen, with backtracking inside it */
    assert_string_equal(alloc_on(&e, "n4", "numa", NULL),
                        "numa: gpu/pair=n4/gpu-1 gpu/pair=n4/gpu-2 extra=n4/gpu-0 config: class[0] class[0] on: metadata.name=n4");
    assert_string_equal(alloc_on(&e, "n4", "numa", "n4/gpu-0"), "unschedulable");
    assert_string_equal(alloc_on(&e, "n3", "numa", NULL), "unschedulable");

    /* a constraint naming one alternative does not bind the others */
    assert_string_equal(alloc_on(&e, "n3", "numa-pair-only", NULL),
                        "numa-pair-only: gpu/two=n3/gpu-0 gpu/two=n3/gpu-1 extra=n3/gpu-2 config: class[0] class[0] on: metadata.name=n3");
    assert_string_equal(alloc_on(&e, "n3", "numa-pair-only", "n3/gpu-0"),
                        "numa-pair-only: gpu/two=n3/gpu-1 gpu/two=n3/gpu-2 extra=n3/gpu-3 config: class[0] class[0] on: metadata.name=n3");
    assert_string_equal(alloc_on(&e, "n4", "numa-pair-only", NULL),
                        "numa-pair-only: gpu/pair=n4/gpu-1 gpu/pair=n4/gpu-2 extra=n4/gpu-0 config: class[0] class[0] on: metadata.name=n4");
    assert_string_equal(alloc_on(&e, "n4", "numa-pair-only", "n4/gpu-0"), "unschedulable");
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
    /* within one slice: the first name seen again */
    env_load(&e, CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 HDR "kind: ResourceSlice\nmetadata: {name: n2-a}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 1}\n"
                 "  devices: [{name: d-0}, {name: d-1}, {name: d-2}, {name: d-1}, {name: d-0}]\n---\n");
    assert_string_equal(alloc_on(&e, "n2", "one", NULL), "error: pool n2 is invalid: duplicate device name d-1");
    env_free(&e);
}

/* The device set counts: a device two claims allocate is in use until
 * both let it go; removed entries do not break other lookups; copies are
 * independent. */
static void device_set_counts(void **st) {
    ks_dra_device_set s, c;
    ks_dra_device_set_init(&s);
    ks_dra_device_set_init(&c);
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "gpu-%d", i);
        ks_dra_device_set_add(&s, "d", "p", name);
    }
    ks_dra_device_set_add(&s, "d", "p", "gpu-7");
    assert_int_equal(s.n, 1000);
    ks_device_result r = {.driver = "d", .pool = "p", .device = "gpu-7"};
    ks_allocation_result a = {.nresults = 1, .results = &r};
    ks_dra_device_set_remove_allocation(&s, &a);
    assert_true(ks_dra_device_set_has(&s, "d", "p", "gpu-7"));
    ks_dra_device_set_remove_allocation(&s, &a);
    assert_false(ks_dra_device_set_has(&s, "d", "p", "gpu-7"));
    ks_dra_device_set_remove_allocation(&s, &a); /* not there: no-op */
    assert_int_equal(s.n, 999);
    /* admin access does not count */
    r.has_admin_access = r.admin_access = true;
    ks_dra_device_set_add_allocation(&s, &a);
    assert_false(ks_dra_device_set_has(&s, "d", "p", "gpu-7"));
    ks_dra_device_set_copy(&c, &s);
    /* remove all but the multiples of 10, re-add some: compaction keeps them */
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 1000; i++) {
            if (i % 10 == 0 || i == 7) continue;
            snprintf(name, sizeof name, "gpu-%d", i);
            ks_device_result x = {.driver = "d", .pool = "p", .device = name};
            ks_allocation_result xa = {.nresults = 1, .results = &x};
            if (round != 1) ks_dra_device_set_remove_allocation(&s, &xa);
            else ks_dra_device_set_add_allocation(&s, &xa);
        }
    assert_int_equal(s.n, 100);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "gpu-%d", i);
        assert_int_equal(ks_dra_device_set_has(&s, "d", "p", name), i % 10 == 0);
        assert_int_equal(ks_dra_device_set_has(&c, "d", "p", name), i != 7);
    }
    ks_dra_device_set_free(&s);
    ks_dra_device_set_free(&c);
}

/* ---- the DRA manager's view of claims ---- */

static ks_resource_claim *with_device(const ks_resource_claim *c, const char *device) {
    if (!device) return ks_claim_with_status(c, NULL, NULL, 0, false);
    ks_device_result r = {.request = "gpu", .driver = "gpu.example.com", .pool = "n1", .device = device};
    ks_allocation_result a = {.nresults = 1, .results = &r};
    return ks_claim_with_status(c, &a, NULL, 0, true);
}

/* The devices in use as the manager reports them for a view of claims,
 * "gpu-0 gpu-2" (the n1 pool's devices in use). */
static const char *in_use(ks_dra_manager *m, ks_resource_claim **claims, uint32_t n) {
    static char out[64];
    ks_objects o = {0};
    o.resource_claims.v = claims;
    o.resource_claims.n = n;
    ks_dra_device_set s;
    ks_dra_device_set_init(&s);
    ks_dra_manager_allocated(m, &o, &s, NULL);
    out[0] = 0;
    for (int i = 0; i < 3; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        if (ks_dra_device_set_has(&s, "gpu.example.com", "n1", d))
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "", d);
    }
    ks_dra_device_set_free(&s);
    return out;
}

/* What the plugin sees of a claim, by its device ("-": no allocation,
 * "none": no claim). */
static const char *seen(ks_dra_manager *m, ks_resource_claim **claims, uint32_t n, const ks_resource_claim *c) {
    ks_objects o = {0};
    o.resource_claims.v = claims;
    o.resource_claims.n = n;
    ks_resource_claim *v = ks_dra_manager_claim(m, &o, c->ns, c->name);
    const char *r = !v ? "none" : v->allocation ? v->allocation->results[0].device : "-";
    KS_OBJECT_UNREF(v);
    return r;
}

/* Views change position by position (claims updated, moved, removed);
 * assumptions stand for the objects' version until the backend reports
 * the write (memory backend: the written object itself; else a newer
 * resourceVersion) or the claim goes away. */
static void manager_views_and_assumptions(void **st) {
    env e;
    env_load(&e, CLAIM("a", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("b", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}"));
    static int key;
    ks_dra_manager *m = ks_dra_manager_acquire(&key, false);
    ks_resource_claim *a0 = with_device(claim(&e, "a"), "gpu-0"), *b0 = (ks_resource_claim *)claim(&e, "b");
    ks_resource_claim *v1[] = {a0, b0};
    assert_string_equal(in_use(m, v1, 2), "gpu-0");
    /* b allocated and assumed (PreBind) */
    ks_resource_claim *b1 = with_device(b0, "gpu-1");
    ks_dra_manager_assume(m, b0, b1);
    assert_string_equal(in_use(m, v1, 2), "gpu-0 gpu-1");
    assert_string_equal(seen(m, v1, 2, b0), "gpu-1");
    /* then deallocated and allocated again before the backend reports */
    ks_resource_claim *b2 = with_device(b1, NULL), *b3 = with_device(b2, "gpu-2");
    ks_dra_manager_assume(m, b1, b2);
    assert_string_equal(in_use(m, v1, 2), "gpu-0");
    ks_dra_manager_assume(m, b2, b3);
    assert_string_equal(in_use(m, v1, 2), "gpu-0 gpu-2");
    /* the backend reports the earlier writes: the last assumption stands */
    ks_resource_claim *v2[] = {a0, b1};
    assert_string_equal(in_use(m, v2, 2), "gpu-0 gpu-2");
    ks_resource_claim *v3[] = {b2, a0}; /* and positions move */
    assert_string_equal(in_use(m, v3, 2), "gpu-0 gpu-2");
    assert_string_equal(seen(m, v3, 2, b0), "gpu-2");
    /* ... and the last one: dropped, the objects' version counts */
    ks_resource_claim *v4[] = {a0, b3};
    assert_string_equal(in_use(m, v4, 2), "gpu-0 gpu-2");
    assert_string_equal(seen(m, v1, 2, b0), "-");
    assert_string_equal(in_use(m, v1, 2), "gpu-0");
    /* a claim the objects do not have yet, then a claim gone */
    ks_resource_claim *v5[] = {a0};
    ks_dra_manager_assume(m, NULL, b3);
    assert_string_equal(in_use(m, v5, 1), "gpu-0 gpu-2");
    assert_string_equal(in_use(m, v1, 2), "gpu-0"); /* b0 is not what it was assumed over */
    ks_dra_manager_assume(m, b0, b3);
    assert_string_equal(in_use(m, v5, 1), "gpu-0");
    assert_string_equal(seen(m, v1, 2, b0), "-");
    /* resource versions, where the backend gives written versions their own */
    ks_resource_claim *b4 = with_device(b0, "gpu-1"), *b5 = with_device(b0, NULL), *b6 = with_device(b0, NULL);
    b0->resource_version = "5";
    b4->resource_version = "7";
    b5->resource_version = "6";
    b6->resource_version = "7";
    ks_dra_manager_assume(m, b0, b4);
    ks_resource_claim *v6[] = {a0, b5}, *v7[] = {a0, b6};
    assert_string_equal(in_use(m, v6, 2), "gpu-0 gpu-1"); /* older than the write */
    assert_string_equal(in_use(m, v7, 2), "gpu-0");       /* the write reported */
    assert_string_equal(in_use(m, v6, 2), "gpu-0");
    assert_string_equal(in_use(m, NULL, 0), "");
    ks_dra_manager_release(m);
    ks_resource_claim *all[] = {a0, b1, b2, b3, b4, b5, b6};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) KS_OBJECT_UNREF(all[i]);
    env_free(&e);
}

/* PreBind's sweep brings the manager to the binding cycle's view (the
 * versions an earlier view showed are let go) and drops an assumption as
 * soon as the view shows its write (by resourceVersion), without a
 * scheduling cycle; the rest (not yet reported, the memory backend's)
 * stays. */
static void manager_sweep(void **st) {
    env e;
    env_load(&e, CLAIM("a", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("b", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}"));
    static int key;
    ks_dra_manager *m = ks_dra_manager_acquire(&key, false);
    ks_resource_claim *a0 = with_device(claim(&e, "a"), NULL), *b0 = with_device(claim(&e, "b"), NULL);
    a0->resource_version = "3";
    b0->resource_version = "5";
    ks_resource_claim *v1[] = {a0, b0};
    assert_string_equal(in_use(m, v1, 2), ""); /* synced: b at position 2 */
    ks_resource_claim *b1 = with_device(b0, "gpu-1"), *b1w = with_device(b0, "gpu-1");
    b1->resource_version = "7";
    b1w->resource_version = "7"; /* the watch's copy of the write */
    ks_dra_manager_assume(m, b0, b1);
    ks_objects o = {0};
    o.resource_claims.v = v1;
    o.resource_claims.n = 2;
    assert_int_equal(ks_dra_manager_sweep(m, &o), 1); /* not reported yet */
    /* the synced view and the assumption hold b0 (and b1, b1w: copies of
     * it share its spec) */
    int held = (int)b0->refs;
    ks_resource_claim *moved[] = {b1w, a0}; /* reported, and moved */
    o.resource_claims.v = moved;
    assert_int_equal(ks_dra_manager_sweep(m, &o), 0);
    assert_int_equal((int)b0->refs, held - 2); /* neither holds the old version now */
    assert_string_equal(seen(m, v1, 2, b0), "-"); /* the objects' version again */
    ks_resource_claim *v2[] = {a0, b1w};
    o.resource_claims.v = v2;
    /* without resourceVersions (the memory backend) only a sync decides */
    ks_resource_claim *a1 = with_device(a0, "gpu-0");
    a1->resource_version = NULL;
    ks_dra_manager_assume(m, a0, a1);
    ks_resource_claim *v3[] = {a1, b1w};
    o.resource_claims.v = v3;
    assert_int_equal(ks_dra_manager_sweep(m, &o), 1);
    assert_int_equal(ks_dra_manager_sweep(m, NULL), 1);
    assert_string_equal(in_use(m, v3, 2), "gpu-0 gpu-1");
    assert_int_equal(ks_dra_manager_sweep(m, &o), 0);
    ks_dra_manager_release(m);
    ks_resource_claim *all[] = {a0, b0, b1, b1w, a1};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) KS_OBJECT_UNREF(all[i]);
    env_free(&e);
}

static const ks_dra_features taints_on = {.admin_access = true, .prioritized_list = true, .device_status = true,
                                          .device_taints = true};
static const ks_dra_features partitions_on = {.admin_access = true, .prioritized_list = true, .device_status = true,
                                              .partitionable_devices = true};

/* DRADeviceTaints: a tainted device needs a toleration of every taint,
 * its slice's and those of DeviceTaintRules; with the gate off taints
 * are ignored. */
static void device_taints(void **st) {
    env e;
    env_load(&e, HDR "kind: ResourceSlice\nmetadata: {name: n2-gpus}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 1}\n"
                 "  devices:\n"
                 "  - {name: gpu-0, taints: [{key: broken, effect: NoSchedule}]}\n"
                 "  - {name: gpu-1, taints: [{key: maint, value: 'yes', effect: NoExecute}]}\n"
                 "  - {name: gpu-2, attributes: {model: {string: l4}}}\n---\n"
                 CLAIM("plain", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("two", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}]}")
                 CLAIM("tol-maint", "{requests: [{name: gpu, exactly: {deviceClassName: gpu, tolerations: [{key: maint, "
                                    "operator: Equal, value: 'yes'}]}}]}")
                 CLAIM("tol-all", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 3, tolerations: "
                                  "[{operator: Exists}]}}]}")
                 CLAIM("tol-wrong", "{requests: [{name: gpu, exactly: {deviceClassName: gpu, tolerations: [{key: maint, "
                                    "value: 'no'}, {key: broken, effect: NoExecute}]}}]}"));
    assert_string_equal(alloc_f(&e, &taints_on, "n2", "plain", NULL), "plain: gpu=n2/gpu-2 config: class[0] on: metadata.name=n2");
    assert_string_equal(alloc_f(&e, &taints_on, "n2", "two", NULL), "unschedulable");
    assert_string_equal(alloc_f(&e, &taints_on, "n2", "tol-maint", "n2/gpu-2"),
                        "tol-maint: gpu=n2/gpu-1 config: class[0] on: metadata.name=n2");
    assert_string_equal(alloc_f(&e, &taints_on, "n2", "tol-wrong", "n2/gpu-2"), "unschedulable");
    assert_string_equal(alloc_f(&e, &taints_on, "n2", "tol-all", NULL),
                        "tol-all: gpus=n2/gpu-0 gpus=n2/gpu-1 gpus=n2/gpu-2 config: class[0] on: metadata.name=n2");
    /* gate off: taints do not count */
    assert_string_equal(alloc_on(&e, "n2", "two", NULL),
                        "two: gpus=n2/gpu-0 gpus=n2/gpu-1 config: class[0] on: metadata.name=n2");
    env_free(&e);
}

/* DeviceTaintRules: by driver, pool and device; by the class's selectors;
 * by their own CEL selectors; a selector that does not compile leaves the
 * slices it would look at out. */
static void device_taint_rules(void **st) {
    env e;
    env_load(&e, "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: gpu0}\n"
                 "spec: {deviceSelector: {driver: gpu.example.com, pool: n1, device: gpu-0}, taint: {key: k, effect: NoSchedule}}\n"
                 "---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: h100}\n"
                 "spec: {deviceSelector: {deviceClassName: big, selectors: [{cel: {expression: "
                 "'device.attributes[\"gpu.example.com\"].model == \"h100\"'}}]}, taint: {key: h, effect: NoExecute}}\n"
                 "---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: other-pool}\n"
                 "spec: {deviceSelector: {pool: n9}, taint: {key: z, effect: NoSchedule}}\n---\n"
                 CLAIM("three", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 3}}]}")
                 CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("three-tol-k", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2, "
                                      "tolerations: [{key: k, operator: Exists}]}}]}"));
    assert_string_equal(alloc_f(&e, &taints_on, "n1", "one", NULL), "one: gpu=n1/gpu-1 config: class[0] on: metadata.name=n1");
    assert_string_equal(alloc_f(&e, &taints_on, "n1", "three", NULL), "unschedulable");
    assert_string_equal(alloc_f(&e, &taints_on, "n1", "three-tol-k", NULL),
                        "three-tol-k: gpus=n1/gpu-0 gpus=n1/gpu-1 config: class[0] on: metadata.name=n1");
    assert_string_equal(alloc_on(&e, "n1", "three", NULL),
                        "three: gpus=n1/gpu-0 gpus=n1/gpu-1 gpus=n1/gpu-2 config: class[0] on: metadata.name=n1");
    ks_dra_taint_rules rules = {e.c->device_taint_rules.v, e.c->device_taint_rules.n, e.c->device_classes.v,
                                e.c->device_classes.n, e.cache};
    ks_dra_slices *sl = ks_dra_slices_new(e.c->resource_slices.v, e.c->resource_slices.n, &rules);
    uint32_t n = 0;
    const ks_device_taint *const *t = ks_dra_slices_rule_taints(sl, e.c->resource_slices.v[0], 2, &n);
    assert_int_equal(n, 1);
    assert_string_equal(t[0]->key, "h");
    assert_string_equal(t[0]->effect, "NoExecute");
    assert_null(ks_dra_slices_rule_taints(sl, e.c->resource_slices.v[1], 0, &n));
    assert_false(ks_dra_slices_same(sl, e.c->resource_slices.v, e.c->resource_slices.n, NULL));
    ks_dra_slices_unref(sl);
    env_free(&e);

    env_load(&e, "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: bad}\n"
                 "spec: {deviceSelector: {driver: gpu.example.com, selectors: [{cel: {expression: 'device.driver =='}}]}, "
                 "taint: {key: k, effect: NoSchedule}}\n---\n"
                 CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("link", "{requests: [{name: l, exactly: {deviceClassName: fabric}}]}"));
    assert_string_equal(alloc_f(&e, &taints_on, "n1", "one", NULL), "unschedulable");
    assert_string_equal(alloc_f(&e, &taints_on, "n1", "link", NULL),
                        "link: l=zone-a/link-0 on: zone=a");
    env_free(&e);
}

/* DRAPartitionableDevices: devices consuming a slice's shared counters,
 * per-device node selection. */
static void partitionable_devices(void **st) {
    env e;
    env_load(&e, HDR "kind: ResourceSlice\nmetadata: {name: n2-parts}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 1}\n"
                 "  sharedCounters: [{name: gpu-0, counters: {memory: {value: 80Gi}, sm: {value: '8'}}}]\n"
                 "  devices:\n"
                 "  - {name: whole, attributes: {numa: {int: 0}}, consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 80Gi}, sm: {value: '8'}}}]}\n"
                 "  - {name: half-0, attributes: {numa: {int: 0}}, consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}, sm: {value: '4'}}}]}\n"
                 "  - {name: half-1, attributes: {numa: {int: 1}}, consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}, sm: {value: '4'}}}]}\n"
                 "  - {name: half-2, attributes: {numa: {int: 1}}, consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]}\n"
                 "---\n" HDR "kind: ResourceSlice\nmetadata: {name: shared-links}\n"
                 "spec:\n  driver: fabric.example.com\n  perDeviceNodeSelection: true\n"
                 "  pool: {name: links, generation: 1, resourceSliceCount: 1}\n"
                 "  devices: [{name: l1, nodeName: n1}, {name: l2, nodeSelector: {nodeSelectorTerms: [{matchExpressions: "
                 "[{key: zone, operator: In, values: [b]}]}]}}]\n---\n"
                 CLAIM("one", "{requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("two", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}]}")
                 CLAIM("two-numa", "{requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}],\n"
                                   "  constraints: [{matchAttribute: gpu.example.com/numa}]}")
                 CLAIM("link", "{requests: [{name: l, exactly: {deviceClassName: fabric}}]}"));
    assert_string_equal(alloc_f(&e, &partitions_on, "n2", "one", NULL),
                        "one: gpu=n2/whole config: class[0] on: metadata.name=n2");
    /* the whole GPU leaves nothing: backtrack to the halves */
    assert_string_equal(alloc_f(&e, &partitions_on, "n2", "two", NULL),
                        "two: gpus=n2/half-0 gpus=n2/half-1 config: class[0] on: metadata.name=n2");
    /* an allocated half takes its counters: the whole no longer fits */
    assert_string_equal(alloc_f(&e, &partitions_on, "n2", "one", "n2/half-1"),
                        "one: gpu=n2/half-0 config: class[0] on: metadata.name=n2");
    /* upstream keeps the counters of a device the constraint refused: with
     * half-0 taken, half-1 is refused by the constraint but keeps its 40Gi,
     * and half-2 no longer fits; nor does anything after backtracking */
    assert_string_equal(alloc_f(&e, &partitions_on, "n2", "two-numa", NULL), "unschedulable");
    /* gate off: devices with counters are never allocated */
    assert_string_equal(alloc_on(&e, "n2", "one", NULL), "unschedulable");
    /* per-device node selection: each node sees its own device */
    assert_string_equal(alloc_f(&e, &partitions_on, "n1", "link", NULL), "link: l=links/l1 on: metadata.name=n1");
    assert_string_equal(alloc_f(&e, &partitions_on, "n2", "link", NULL), "link: l=links/l2 on: zone=b");
    /* gate off: the slice is left out (the zone-a pool remains for n1) */
    assert_string_equal(alloc_on(&e, "n1", "link", NULL), "link: l=zone-a/link-0 on: zone=a");
    assert_string_equal(alloc_on(&e, "n2", "link", NULL), "unschedulable");
    env_free(&e);
}

static const ks_dra_features capacity_on = {.admin_access = true, .prioritized_list = true, .device_status = true,
                                            .consumable_capacity = true};

/* Results with their shares: "req=pool/device[share bw=..]" */
static const char *alloc_shares(env *e, const char *node, const char *claims, ks_dra_capacities *caps) {
    static char out[4096];
    const ks_resource_claim *cl[8];
    size_t n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", claims);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) cl[n++] = claim(e, tok);
    ks_dra_device_set set;
    ks_dra_device_set_init(&set);
    ks_dra_slices *sl = ks_dra_slices_new(e->c->resource_slices.v, e->c->resource_slices.n, NULL);
    ks_dra_allocator *al = ks_dra_allocator_new(&capacity_on, &set, e->c->device_classes.v, e->c->device_classes.n,
                                                sl, e->cache);
    ks_dra_allocator_set_capacities(al, caps);
    ks_node *nd = ks_cluster_node(e->c, ks_intern(node));
    ks_arena *a = ks_arena_new(1024);
    ks_allocation_result res[8];
    char *err = NULL;
    ks_dra_outcome o = ks_dra_allocate(al, nd, cl, n, a, res, 0, &err);
    ks_strbuf b;
    ks_sb_init(&b);
    if (o == KS_DRA_UNSCHEDULABLE) ks_sb_puts(&b, "unschedulable");
    else if (o == KS_DRA_ERROR) ks_sb_printf(&b, "error: %s", err);
    else
        for (size_t i = 0; i < n; i++) {
            ks_sb_printf(&b, "%s%s:", i ? "; " : "", ks_str(cl[i]->name));
            for (uint32_t k = 0; k < res[i].nresults; k++) {
                const ks_device_result *r = &res[i].results[k];
                ks_sb_printf(&b, " %s=%s/%s", r->request, r->pool, r->device);
                if (r->share_id) {
                    assert_int_equal(strlen(r->share_id), 36);
                    ks_sb_puts(&b, "[share");
                    for (uint32_t q = 0; q < r->nconsumed; q++) {
                        char qs[64];
                        ks_quantity_format(&r->consumed[q].q, qs, sizeof qs);
                        ks_sb_printf(&b, " %s=%s", r->consumed[q].name, qs);
                    }
                    ks_sb_puts(&b, "]");
                }
            }
        }
    snprintf(out, sizeof out, "%s", ks_sb_str(&b));
    ks_sb_free(&b);
    free(err);
    ks_arena_free(a);
    ks_dra_allocator_free(al);
    ks_dra_slices_unref(sl);
    ks_dra_device_set_free(&set);
    return out;
}

/* DRAConsumableCapacity: devices that allow multiple allocations are
 * shared by claims as long as their capacity lasts, with request
 * policies; a request naming a capacity a device lacks skips it. */
static void consumable_capacity(void **st) {
    env e;
    env_load(&e, HDR "kind: ResourceSlice\nmetadata: {name: n2-nics}\n"
                 "spec:\n  driver: gpu.example.com\n  nodeName: n2\n  pool: {name: n2, generation: 1, resourceSliceCount: 1}\n"
                 "  devices:\n"
                 "  - name: nic-0\n    allowMultipleAllocations: true\n    capacity:\n"
                 "      bw: {value: 10Gi, requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}}\n"
                 "      queues: {value: '8', requestPolicy: {default: '1', validValues: ['1', '2', '4']}}\n"
                 "  - name: nic-1\n    allowMultipleAllocations: true\n    capacity:\n"
                 "      bw: {value: 10Gi}\n"
                 "---\n"
                 CLAIM("small", "{requests: [{name: nic, exactly: {deviceClassName: gpu}}]}")
                 CLAIM("big", "{requests: [{name: nic, exactly: {deviceClassName: gpu, capacity: {requests: {bw: 7.5Gi, queues: '3'}}}}]}")
                 CLAIM("two", "{requests: [{name: nic, exactly: {deviceClassName: gpu, count: 2, capacity: {requests: {bw: 4Gi}}}}]}")
                 CLAIM("odd", "{requests: [{name: nic, exactly: {deviceClassName: gpu, capacity: {requests: {bw: 1Gi, queues: '16'}}}}]}")
                 CLAIM("unknown", "{requests: [{name: nic, exactly: {deviceClassName: gpu, capacity: {requests: {power: '1'}}}}]}")
                 CLAIM("distinct", "{requests: [{name: a, exactly: {deviceClassName: gpu}}, {name: b, exactly: {deviceClassName: gpu}}],\n"
                                   "  constraints: [{distinctAttribute: gpu.example.com/model}]}"));
    /* nothing requested: the default bw, all the queues */
    assert_string_equal(alloc_shares(&e, "n2", "small", NULL), "small: nic=n2/nic-0[share bw=1Gi queues=1]");
    /* 7.5Gi rounds up to the step; 3 queues up to the next valid value */
    assert_string_equal(alloc_shares(&e, "n2", "big", NULL), "big: nic=n2/nic-0[share bw=8Gi queues=4]");
    /* two shares of the one device */
    assert_string_equal(alloc_shares(&e, "n2", "two", NULL),
                        "two: nic=n2/nic-0[share bw=4Gi queues=1] nic=n2/nic-0[share bw=4Gi queues=1]");
    /* queues 16: over the capacity */
    assert_string_equal(alloc_shares(&e, "n2", "odd", NULL), "unschedulable");
    assert_string_equal(alloc_shares(&e, "n2", "unknown", NULL), "unschedulable");
    /* what shares consume already counts */
    ks_dra_capacities caps;
    ks_dra_capacities_init(&caps);
    ks_named_quantity used[] = {{"bw", {.nano = (__int128)3 * 1024 * 1024 * 1024 * 1000000000}}};
    ks_device_result r = {.request = "nic", .driver = "gpu.example.com", .pool = "n2", .device = "nic-0",
                          .share_id = "x", .nconsumed = 1, .consumed = used};
    ks_allocation_result ar = {.nresults = 1, .results = &r};
    ks_dra_capacities_add_allocation(&caps, &ar);
    assert_string_equal(alloc_shares(&e, "n2", "big", &caps), "unschedulable");
    assert_string_equal(alloc_shares(&e, "n2", "small", &caps), "small: nic=n2/nic-0[share bw=1Gi queues=1]");
    ks_dra_capacities_free(&caps);
    /* Upstream's allocateDevice checks the capacity of the slice's device
     * at the request's device position: with nic-0 full, nic-1 (free) is
     * refused for a first device, since nic-0 is checked for it */
    ks_dra_capacities_init(&caps);
    used[0].q.nano = (__int128)10 * 1024 * 1024 * 1024 * 1000000000;
    ks_dra_capacities_add_allocation(&caps, &ar);
    assert_string_equal(alloc_shares(&e, "n2", "small", &caps), "unschedulable");
    ks_dra_capacities_free(&caps);
    /* gate off: a capacity request is refused */
    assert_string_equal(alloc_on(&e, "n2", "big", NULL),
                        "error: claim default/big, request nic: has capacity requests, but the DRAConsumableCapacity "
                        "feature is disabled");
    /* distinctAttribute: the same device twice shares one value */
    assert_string_equal(alloc_shares(&e, "n1", "distinct", NULL), "distinct: a=n1/gpu-0 b=n1/gpu-1");
    env_free(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_fit_in_order), cmocka_unit_test(match_attribute), cmocka_unit_test(all_devices),
        cmocka_unit_test(first_available), cmocka_unit_test(first_available_mixes),    cmocka_unit_test(admin_access),    cmocka_unit_test(refusals),
        cmocka_unit_test(pools), cmocka_unit_test(device_set_counts), cmocka_unit_test(manager_views_and_assumptions),
        cmocka_unit_test(manager_sweep),
        cmocka_unit_test(device_taints), cmocka_unit_test(device_taint_rules), cmocka_unit_test(partitionable_devices),
        cmocka_unit_test(consumable_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
