/* VolumeBinding: bound and unbound claims, matching PVs, dynamic
 * provisioning, in-tree migration, and the assume cache across pods. Cases
 * from upstream's binder_test.go (FindPodVolumes without and with
 * provisioning, with CSI migration, Assume/Revert) and
 * volume_binding_test.go. */
#include "testutil_volumes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define BIND_CONFLICT "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind"
#define NODE_CONFLICT "UnschedulableAndUnresolvable: node(s) didn't match PersistentVolume's node affinity"
#define PV_MISSING \
    "UnschedulableAndUnresolvable: node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define NO_SPACE "UnschedulableAndUnresolvable: node(s) did not have enough free storage"
#define IMMEDIATE "UnschedulableAndUnresolvable: pod has unbound immediate PersistentVolumeClaims"

#define SC(name, prov, mode, extra)                                                                           \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " name "}\nprovisioner: " prov \
    "\nvolumeBindingMode: " mode "\n" extra
#define PV(name, node, size, cls, claim)                                                                      \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name "}\nspec:\n  capacity: {storage: " size \
    "}\n  accessModes: [ReadWriteOnce]\n  storageClassName: " cls "\n  local: {path: /m}\n" claim                  \
    "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: nodeKey, operator: In, values: [" node \
    "]}]}]}}\nstatus: {phase: Available}\n"
#define CLAIMREF(name) "  claimRef: {namespace: default, name: " name ", uid: uid-" name "}\n"
#define PVC(name, size, cls, extra)                                                                           \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", uid: uid-" name "}\nspec: {" extra \
    "accessModes: [ReadWriteOnce], storageClassName: " cls ", resources: {requests: {storage: " size "}}}\n"
#define BOUND(pv) "volumeName: " pv ", "
#define ANN_BOUND(name) "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name

/* The fixture of upstream's binder tests. */
static const char *const fixture =
    "apiVersion: v1\nkind: Node\nmetadata: {name: node1, labels: {nodeKey: node1}}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: node2, labels: {nodeKey: node2}}\n"
    SC("waitClass", "kubernetes.io/no-provisioner", "WaitForFirstConsumer", "")
    SC("immediateClass", "kubernetes.io/no-provisioner", "Immediate", "")
    SC("waitClassWithProvisioner", "test-provisioner", "WaitForFirstConsumer", "")
    SC("topoMismatchClass", "test-provisioner", "WaitForFirstConsumer",
       "allowedTopologies: [{matchLabelExpressions: [{key: nodeKey, values: [mismatch]}]}]\n")
    SC("capacityClass", "capacity-provisioner", "WaitForFirstConsumer", "")
    "---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: capacity-provisioner}\nspec: {storageCapacity: true}\n"
    PV("pv-node1a", "node1", "5G", "waitClass", "") PV("pv-node1b", "node1", "10G", "waitClass", "")
    PV("pv-node2", "node2", "1G", "waitClass", "") PV("pv-bound", "node1", "1G", "waitClass", CLAIMREF("bound-pvc"))
    PV("pv-bound-immediate", "node1", "1G", "immediateClass", CLAIMREF("immediate-bound-pvc"))
    PV("pv-bound-immediate-node2", "node2", "1G", "immediateClass", CLAIMREF("immediate-bound-pvc-node2"))
    PVC("unbound-pvc", "1G", "waitClass", "") PVC("unbound-pvc2", "5G", "waitClass", "")
    PVC("other-pvc", "1G", "waitClass", "")
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: bound-pvc, uid: uid-bound-pvc, annotations: "
    "{pv.kubernetes.io/bind-completed: 'yes'}}\n"
    "spec: {volumeName: pv-bound, accessModes: [ReadWriteOnce], storageClassName: waitClass, resources: {requests: {storage: 1G}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: bound-pvc-no-pv, annotations: "
    "{pv.kubernetes.io/bind-completed: 'yes'}}\n"
    "spec: {volumeName: pv-gone, accessModes: [ReadWriteOnce], storageClassName: waitClass, resources: {requests: {storage: 1G}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: immediate-bound-pvc, uid: uid-immediate-bound-pvc, "
    "annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
    "spec: {volumeName: pv-bound-immediate, accessModes: [ReadWriteOnce], storageClassName: immediateClass, resources: "
    "{requests: {storage: 1G}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: immediate-bound-pvc-node2, uid: "
    "uid-immediate-bound-pvc-node2, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
    "spec: {volumeName: pv-bound-immediate-node2, accessModes: [ReadWriteOnce], storageClassName: immediateClass, resources: "
    "{requests: {storage: 1G}}}\n"
    PVC("prebound-pvc", "1G", "waitClass", BOUND("pv-node1a")) PVC("immediate-unbound-pvc", "1G", "immediateClass", "")
    PVC("provisioned-pvc", "1Gi", "waitClassWithProvisioner", "") PVC("provisioned-pvc2", "1Gi", "waitClassWithProvisioner", "")
    PVC("no-provisioner-pvc", "100G", "waitClass", "") PVC("topo-mismatch-pvc", "1Gi", "topoMismatchClass", "")
    PVC("capacity-pvc", "1Gi", "capacityClass", "")
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: selected-node-pvc, annotations: "
    "{volume.kubernetes.io/selected-node: node1}}\n"
    "spec: {accessModes: [ReadWriteOnce], storageClassName: waitClassWithProvisioner, resources: {requests: {storage: 1Gi}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: lost-pvc}\n"
    "spec: {volumeName: pv-gone, accessModes: [ReadWriteOnce], storageClassName: waitClass}\nstatus: {phase: Lost}\n";

/* A pod named `name` using the comma-separated claims. */
static char *pod_yaml(const char *name, const char *claims) {
    static char buf[2048];
    int n = snprintf(buf, sizeof buf, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, uid: uid-%s}\n"
                                      "spec:\n  containers: [{name: c, image: i}]\n  volumes:\n", name, name);
    if (!*claims) n += snprintf(buf + n, sizeof buf - (size_t)n, "  - {name: e, emptyDir: {}}\n");
    for (const char *p = claims; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        n += snprintf(buf + n, sizeof buf - (size_t)n, "  - {name: v%d, persistentVolumeClaim: {claimName: %.*s}}\n", n,
                      (int)len, p);
        p += len + (c ? 1 : 0);
    }
    return buf;
}

static char yaml[65536];

static void env(tv_env *e, const char *extra) {
    snprintf(yaml, sizeof yaml, "%s%s", fixture, extra);
    tv_init(e, "VolumeBinding", yaml);
}

/* PreFilter + Filter of a pod using claims on node1 and node2. */
static const char *find(const char *claims) {
    static char out[1024];
    tv_env e;
    env(&e, pod_yaml("test-pod", claims));
    snprintf(out, sizeof out, "%s", tv_filter(&e, "test-pod"));
    tv_free(&e);
    return out;
}

/* The bindings PreBind hands the backend after Reserve on node. */
static const char *bind_on(tv_env *e, const char *pod, const char *node) {
    static char out[512];
    e->bound[0] = 0;
    const char *r = tv_reserve(e, pod, node);
    if (strcmp(r, "Success") != 0) return r;
    const char *pb = tv_pre_bind(e, pod, node);
    snprintf(out, sizeof out, "%s", strcmp(pb, "Success") == 0 ? e->bound : pb);
    return out;
}

/* ---- FindPodVolumes without provisioning ---- */

static void no_volumes_skips(void **st) { assert_string_equal(find(""), "node1 Success; node2 Success (skip)"); }
static void claim_not_found(void **st) {
    assert_string_equal(find("nope"), "UnschedulableAndUnresolvable: persistentvolumeclaim \"nope\" not found");
}
static void bound_claim_pv_on_node(void **st) {
    assert_string_equal(find("bound-pvc"), "node1 Success; node2 " NODE_CONFLICT);
}
static void bound_claim_pv_missing(void **st) {
    assert_string_equal(find("bound-pvc-no-pv"), "node1 " PV_MISSING "; node2 " PV_MISSING);
}
static void prebound_claim_waits_for_pv_controller(void **st) { assert_string_equal(find("prebound-pvc"), IMMEDIATE); }
static void unbound_claim_pv_same_node(void **st) {
    tv_env e;
    env(&e, pod_yaml("test-pod", "unbound-pvc"));
    assert_string_equal(tv_filter(&e, "test-pod"), "node1 Success; node2 Success");
    /* the smallest PV that fits: pv-node2 (1G) on node2, pv-node1a (5G) on node1 */
    assert_string_equal(bind_on(&e, "test-pod", "node1"), "unbound-pvc=pv-node1a");
    tv_free(&e);
}
static void unbound_claim_no_pv_fits(void **st) {
    assert_string_equal(find("unbound-pvc2,no-provisioner-pvc"), "node1 " BIND_CONFLICT "; node2 " BIND_CONFLICT);
}
static void two_unbound_claims_ordered_by_size(void **st) {
    tv_env e;
    env(&e, pod_yaml("test-pod", "unbound-pvc2,unbound-pvc"));
    assert_string_equal(tv_filter(&e, "test-pod"), "node1 Success; node2 " BIND_CONFLICT);
    /* the 1G claim takes pv-node1a first, leaving pv-node1b to the 5G one */
    assert_string_equal(bind_on(&e, "test-pod", "node1"), "unbound-pvc=pv-node1a unbound-pvc2=pv-node1b");
    tv_free(&e);
}
static void one_bound_one_unbound(void **st) {
    assert_string_equal(find("unbound-pvc,bound-pvc"), "node1 Success; node2 " NODE_CONFLICT);
}
static void immediate_bound_claim(void **st) {
    assert_string_equal(find("immediate-bound-pvc"), "node1 Success; node2 " NODE_CONFLICT);
}
static void immediate_bound_claim_wrong_node(void **st) {
    assert_string_equal(find("immediate-bound-pvc-node2"), "node1 " NODE_CONFLICT "; node2 Success");
}
static void immediate_unbound_claim(void **st) { assert_string_equal(find("immediate-unbound-pvc"), IMMEDIATE); }
static void immediate_unbound_with_delayed_bound(void **st) {
    assert_string_equal(find("immediate-unbound-pvc,bound-pvc"), IMMEDIATE);
}
static void lost_claim(void **st) {
    assert_string_equal(find("lost-pvc"),
                        "UnschedulableAndUnresolvable: persistentvolumeclaim \"lost-pvc\" bound to non-existent "
                        "persistentvolume \"pv-gone\"");
}

/* ---- with provisioning ---- */

static void one_provisioned(void **st) {
    tv_env e;
    env(&e, pod_yaml("test-pod", "provisioned-pvc"));
    assert_string_equal(tv_filter(&e, "test-pod"), "node1 Success; node2 Success");
    assert_string_equal(bind_on(&e, "test-pod", "node2"), "provisioned-pvc@node2");
    tv_free(&e);
}
static void one_matched_one_provisioned(void **st) {
    tv_env e;
    env(&e, pod_yaml("test-pod", "unbound-pvc2,provisioned-pvc"));
    /* node2's only PV is too small, and waitClass cannot provision */
    assert_string_equal(tv_filter(&e, "test-pod"), "node1 Success; node2 " BIND_CONFLICT);
    assert_string_equal(bind_on(&e, "test-pod", "node1"), "unbound-pvc2=pv-node1a provisioned-pvc@node1");
    tv_free(&e);
}
static void selected_node_pins_the_claim(void **st) {
    /* every check runs: the bound claim's and the selected node's */
    assert_string_equal(find("bound-pvc,selected-node-pvc"),
                        "node1 Success; node2 UnschedulableAndUnresolvable: node(s) didn't match PersistentVolume's "
                        "node affinity, node(s) didn't find available persistent volumes to bind");
    assert_string_equal(find("selected-node-pvc"), "node1 Success; node2 " BIND_CONFLICT);
}
static void no_provisioner(void **st) {
    assert_string_equal(find("no-provisioner-pvc"), "node1 " BIND_CONFLICT "; node2 " BIND_CONFLICT);
}
static void topology_unsatisfied(void **st) {
    assert_string_equal(find("topo-mismatch-pvc"), "node1 " BIND_CONFLICT "; node2 " BIND_CONFLICT);
}
/* A driver publishing storage capacity, and no CSIStorageCapacity known. */
static void capacity_not_published(void **st) {
    assert_string_equal(find("capacity-pvc"), "node1 " NO_SPACE "; node2 " NO_SPACE);
}
/* ---- storage capacity (upstream TestCapacity's cases and more) ---- */

#define CAP(name, cls, topo, extra)                                                                    \
    "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: " name           \
    ", namespace: kube-system}\nstorageClassName: " cls "\n" topo extra
#define ON(node) "nodeTopology: {matchLabels: {nodeKey: " node "}}\n"

/* PreFilter + Filter of a pod using claims, with extra objects. */
static const char *find_with(const char *objs, const char *claims) {
    static char out[1024];
    tv_env e;
    char extra[8192];
    snprintf(extra, sizeof extra, "%s%s", objs, pod_yaml("test-pod", claims));
    env(&e, extra);
    snprintf(out, sizeof out, "%s", tv_filter(&e, "test-pod"));
    tv_free(&e);
    return out;
}

static void capacity_on_one_node(void **st) {
    assert_string_equal(find_with(CAP("c1", "capacityClass", ON("node1"), "capacity: 1Gi\n"), "capacity-pvc"),
                        "node1 Success; node2 " NO_SPACE);
}
static void capacity_insufficient(void **st) {
    assert_string_equal(find_with(CAP("c1", "capacityClass", ON("node1"), "capacity: 1023Mi\n"), "capacity-pvc"),
                        "node1 " NO_SPACE "; node2 " NO_SPACE);
}
static void maximum_volume_size_is_preferred(void **st) {
    /* plenty of capacity, but no single volume that large */
    assert_string_equal(find_with(CAP("c1", "capacityClass", ON("node1"), "capacity: 100Gi\nmaximumVolumeSize: 512Mi\n")
                                      CAP("c2", "capacityClass", ON("node2"), "capacity: 1Mi\nmaximumVolumeSize: 1Gi\n"),
                                  "capacity-pvc"),
                        "node1 " NO_SPACE "; node2 Success");
}
static void capacity_without_sizes(void **st) {
    assert_string_equal(find_with(CAP("c1", "capacityClass", ON("node1"), "") CAP("c2", "capacityClass", ON("node2"),
                                                                                   "capacity: null\n"),
                                  "capacity-pvc"),
                        "node1 " NO_SPACE "; node2 " NO_SPACE);
}
static void capacity_without_topology(void **st) {
    /* no nodeTopology: no node has access; an empty one: every node */
    assert_string_equal(find_with(CAP("c1", "capacityClass", "", "capacity: 5Gi\n"), "capacity-pvc"),
                        "node1 " NO_SPACE "; node2 " NO_SPACE);
    assert_string_equal(find_with(CAP("c1", "capacityClass", "nodeTopology: {}\n", "capacity: 5Gi\n"), "capacity-pvc"),
                        "node1 Success; node2 Success");
}
static void capacity_of_other_class(void **st) {
    assert_string_equal(find_with(CAP("c1", "waitClass", ON("node1"), "capacity: 5Gi\n"), "capacity-pvc"),
                        "node1 " NO_SPACE "; node2 " NO_SPACE);
}
static void capacity_by_expression_and_any_match(void **st) {
    /* any one sufficient capacity object is enough */
    assert_string_equal(
        find_with(CAP("small", "capacityClass", "nodeTopology: {}\n", "capacity: 1Mi\n")
                      CAP("big", "capacityClass",
                          "nodeTopology: {matchExpressions: [{key: nodeKey, operator: NotIn, values: [node1]}]}\n",
                          "capacity: 2Gi\n"),
                  "capacity-pvc"),
        "node1 " NO_SPACE "; node2 Success");
}
static void capacity_claim_without_request(void **st) {
    const char *objs = "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: no-size}\n"
                       "spec: {accessModes: [ReadWriteOnce], storageClassName: capacityClass}\n";
    assert_string_equal(find_with(objs, "no-size"), "node1 Success; node2 Success");
}
static void capacity_of_untracked_driver_ignored(void **st) {
    /* the driver exists but does not publish capacity */
    const char *objs = SC("offClass", "off-provisioner", "WaitForFirstConsumer", "")
        "---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: off-provisioner}\n"
        "spec: {storageCapacity: false}\n" PVC("off-pvc", "1Gi", "offClass", "");
    assert_string_equal(find_with(objs, "off-pvc"), "node1 Success; node2 Success");
}
static void capacity_checked_for_selected_node(void **st) {
    /* a claim already given a node is still checked */
    const char *objs = "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: sel-cap, annotations: "
                       "{volume.kubernetes.io/selected-node: node1}}\n"
                       "spec: {accessModes: [ReadWriteOnce], storageClassName: capacityClass, resources: {requests: "
                       "{storage: 3Gi}}}\n" CAP("c1", "capacityClass", ON("node1"), "capacity: 2Gi\n");
    assert_string_equal(find_with(objs, "sel-cap"), "node1 " NO_SPACE "; node2 " BIND_CONFLICT);
}

static void several_reasons_at_once(void **st) {
    assert_string_equal(find("immediate-bound-pvc-node2,no-provisioner-pvc"),
                        "node1 UnschedulableAndUnresolvable: node(s) didn't match PersistentVolume's node affinity, "
                        "node(s) didn't find available persistent volumes to bind; node2 " BIND_CONFLICT);
}

/* ---- the assume cache ---- */

static void assumed_pv_is_taken_for_other_claims(void **st) {
    tv_env e;
    snprintf(yaml, sizeof yaml, "%s%s", fixture, pod_yaml("a", "unbound-pvc"));
    size_t n = strlen(yaml);
    snprintf(yaml + n, sizeof yaml - n, "%s", pod_yaml("b", "other-pvc"));
    tv_init(&e, "VolumeBinding", yaml);
    tv_filter(&e, "a");
    assert_string_equal(bind_on(&e, "a", "node1"), "unbound-pvc=pv-node1a");
    tv_filter(&e, "b");
    assert_string_equal(bind_on(&e, "b", "node1"), "other-pvc=pv-node1b");
    tv_free(&e);
}

static void unreserve_reverts_the_assumption(void **st) {
    tv_env e;
    snprintf(yaml, sizeof yaml, "%s%s", fixture, pod_yaml("a", "unbound-pvc"));
    size_t n = strlen(yaml);
    snprintf(yaml + n, sizeof yaml - n, "%s", pod_yaml("b", "other-pvc"));
    tv_init(&e, "VolumeBinding", yaml);
    tv_filter(&e, "a");
    assert_string_equal(tv_reserve(&e, "a", "node1"), "Success");
    tv_unreserve(&e, "a", "node1");
    tv_filter(&e, "b");
    assert_string_equal(bind_on(&e, "b", "node1"), "other-pvc=pv-node1a");
    tv_free(&e);
}

/* A second pod of the same claim finds the PV assumed for it, and only on
 * that PV's node. */
static void same_claim_follows_its_assumed_pv(void **st) {
    tv_env e;
    snprintf(yaml, sizeof yaml, "%s%s", fixture, pod_yaml("a", "unbound-pvc"));
    size_t n = strlen(yaml);
    snprintf(yaml + n, sizeof yaml - n, "%s", pod_yaml("b", "unbound-pvc"));
    tv_init(&e, "VolumeBinding", yaml);
    tv_filter(&e, "a");
    assert_string_equal(bind_on(&e, "a", "node2"), "unbound-pvc=pv-node2");
    assert_string_equal(tv_filter(&e, "b"), "node1 " BIND_CONFLICT "; node2 Success");
    tv_free(&e);
}

/* The same with PVs pinned to hostnames (indexed by hostname in Filter). */
static void same_claim_follows_its_assumed_local_pv(void **st) {
    tv_env e;
    tv_init(&e, "VolumeBinding",
            "apiVersion: v1\nkind: Node\nmetadata: {name: h1, labels: {kubernetes.io/hostname: h1}}\n"
            "---\napiVersion: v1\nkind: Node\nmetadata: {name: h2, labels: {kubernetes.io/hostname: h2}}\n"
            SC("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer", "")
            "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-h1}\nspec: {capacity: {storage: 1G}, "
            "accessModes: [ReadWriteOnce], storageClassName: local, local: {path: /m}, nodeAffinity: {required: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [h1]}]}]}}}\n"
            "status: {phase: Available}\n"
            "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-h2}\nspec: {capacity: {storage: 1G}, "
            "accessModes: [ReadWriteOnce], storageClassName: local, local: {path: /m}, nodeAffinity: {required: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [h2]}]}]}}}\n"
            "status: {phase: Available}\n" PVC("shared", "1G", "local", "")
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: i}], volumes: "
            "[{name: v, persistentVolumeClaim: {claimName: shared}}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, image: i}], volumes: "
            "[{name: v, persistentVolumeClaim: {claimName: shared}}]}\n");
    assert_string_equal(tv_filter(&e, "a"), "h1 Success; h2 Success");
    assert_string_equal(bind_on(&e, "a", "h1"), "shared=pv-h1");
    /* pv-h2 would fit h2, but the claim's PV is pv-h1 now */
    assert_string_equal(tv_filter(&e, "b"), "h1 Success; h2 " BIND_CONFLICT);
    tv_free(&e);
}

static void assumed_provisioning_selects_the_node(void **st) {
    tv_env e;
    snprintf(yaml, sizeof yaml, "%s%s", fixture, pod_yaml("a", "provisioned-pvc"));
    size_t n = strlen(yaml);
    snprintf(yaml + n, sizeof yaml - n, "%s", pod_yaml("b", "provisioned-pvc"));
    tv_init(&e, "VolumeBinding", yaml);
    tv_filter(&e, "a");
    assert_string_equal(bind_on(&e, "a", "node1"), "provisioned-pvc@node1");
    assert_string_equal(tv_filter(&e, "b"), "node1 Success; node2 " BIND_CONFLICT);
    tv_free(&e);
}

/* An assumption lasts until the store shows a new version of the object. */
static void new_object_version_drops_the_assumption(void **st) {
    tv_env e;
    snprintf(yaml, sizeof yaml, "%s%s", fixture, pod_yaml("a", "unbound-pvc"));
    size_t n = strlen(yaml);
    snprintf(yaml + n, sizeof yaml - n, "%s", pod_yaml("b", "unbound-pvc"));
    tv_init(&e, "VolumeBinding", yaml);
    tv_filter(&e, "a");
    assert_string_equal(bind_on(&e, "a", "node2"), "unbound-pvc=pv-node2");
    tv_reload(&e, "");
    assert_string_equal(tv_filter(&e, "b"), "node1 Success; node2 Success");
    tv_free(&e);
}

static void all_bound_pod_skips_pre_bind(void **st) {
    tv_env e;
    env(&e, pod_yaml("test-pod", "bound-pvc"));
    tv_filter(&e, "test-pod");
    assert_string_equal(tv_reserve(&e, "test-pod", "node1"), "Success");
    assert_string_equal(tv_pre_bind(&e, "test-pod", "node1"), "Skip");
    assert_int_equal(e.nbind_calls, 0);
    tv_free(&e);
}

static void scoring_is_off(void **st) {
    tv_env e;
    env(&e, pod_yaml("test-pod", "unbound-pvc"));
    tv_filter(&e, "test-pod");
    assert_string_equal(tv_status(ks_framework_run_pre_score(e.fw, e.st, tv_pod(&e, "test-pod"),
                                                             (const ks_node_info *const *)e.snap->nodes, e.snap->nnodes)),
                        "Success");
    /* PreScore skipped: no VolumeBinding score */
    ks_score_result r;
    assert_null(ks_framework_run_score(e.fw, e.st, tv_pod(&e, "test-pod"), (const ks_node_info *const *)e.snap->nodes,
                                       e.snap->nnodes, &r));
    assert_int_equal(r.nplugins, 0);
    tv_free(&e);
}

/* ---- CSI migration (FindPodVolumesWithCSIMigration) ---- */

static const char *migration(const char *node_zone, const char *csinode_plugins) {
    static char out[512], y[8192];
    int n = snprintf(y, sizeof y,
                     "apiVersion: v1\nkind: Node\nmetadata: {name: node1, labels: {topology.gke.io/zone: %s}}\n"
                     SC("waitClass", "kubernetes.io/no-provisioner", "WaitForFirstConsumer", "")
                     "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-migration-bound, labels: "
                     "{failure-domain.beta.kubernetes.io/zone: us-east-1, failure-domain.beta.kubernetes.io/region: us-east-1a}}\n"
                     "spec: {capacity: {storage: 1G}, accessModes: [ReadWriteOnce], storageClassName: waitClass, "
                     "gcePersistentDisk: {pdName: test-disk}, claimRef: {namespace: default, name: pvc-migration-bound}}\n"
                     "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-migration-bound, annotations: "
                     "{pv.kubernetes.io/bind-completed: 'yes'}}\n"
                     "spec: {volumeName: pv-migration-bound, accessModes: [ReadWriteOnce], storageClassName: waitClass}\n%s",
                     node_zone, pod_yaml("test-pod", "pvc-migration-bound"));
    if (csinode_plugins)
        snprintf(y + n, sizeof y - (size_t)n,
                 "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: node1, annotations: "
                 "{storage.alpha.kubernetes.io/migrated-plugins: '%s'}}\nspec: {drivers: []}\n",
                 csinode_plugins);
    tv_env e;
    tv_init(&e, "VolumeBinding", y);
    snprintf(out, sizeof out, "%s", tv_filter(&e, "test-pod") + 6);
    tv_free(&e);
    return out;
}

static void migrated_pv_zone_matches(void **st) { assert_string_equal(migration("us-east-1", "kubernetes.io/gce-pd"), "Success"); }
static void migration_off_on_node_ignores_zone(void **st) { assert_string_equal(migration("us-east-2", ""), "Success"); }
static void missing_csinode_ignores_zone(void **st) { assert_string_equal(migration("us-east-2", NULL), "Success"); }
static void migrated_pv_other_zone_conflicts(void **st) {
    assert_string_equal(migration("us-east-2", "kubernetes.io/gce-pd"), NODE_CONFLICT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_volumes_skips),
        cmocka_unit_test(claim_not_found),
        cmocka_unit_test(bound_claim_pv_on_node),
        cmocka_unit_test(bound_claim_pv_missing),
        cmocka_unit_test(prebound_claim_waits_for_pv_controller),
        cmocka_unit_test(unbound_claim_pv_same_node),
        cmocka_unit_test(unbound_claim_no_pv_fits),
        cmocka_unit_test(two_unbound_claims_ordered_by_size),
        cmocka_unit_test(one_bound_one_unbound),
        cmocka_unit_test(immediate_bound_claim),
        cmocka_unit_test(immediate_bound_claim_wrong_node),
        cmocka_unit_test(immediate_unbound_claim),
        cmocka_unit_test(immediate_unbound_with_delayed_bound),
        cmocka_unit_test(lost_claim),
        cmocka_unit_test(one_provisioned),
        cmocka_unit_test(one_matched_one_provisioned),
        cmocka_unit_test(selected_node_pins_the_claim),
        cmocka_unit_test(no_provisioner),
        cmocka_unit_test(topology_unsatisfied),
        cmocka_unit_test(capacity_not_published),
        cmocka_unit_test(capacity_on_one_node),
        cmocka_unit_test(capacity_insufficient),
        cmocka_unit_test(maximum_volume_size_is_preferred),
        cmocka_unit_test(capacity_without_sizes),
        cmocka_unit_test(capacity_without_topology),
        cmocka_unit_test(capacity_of_other_class),
        cmocka_unit_test(capacity_by_expression_and_any_match),
        cmocka_unit_test(capacity_claim_without_request),
        cmocka_unit_test(capacity_of_untracked_driver_ignored),
        cmocka_unit_test(capacity_checked_for_selected_node),
        cmocka_unit_test(several_reasons_at_once),
        cmocka_unit_test(assumed_pv_is_taken_for_other_claims),
        cmocka_unit_test(unreserve_reverts_the_assumption),
        cmocka_unit_test(same_claim_follows_its_assumed_pv),
        cmocka_unit_test(same_claim_follows_its_assumed_local_pv),
        cmocka_unit_test(assumed_provisioning_selects_the_node),
        cmocka_unit_test(new_object_version_drops_the_assumption),
        cmocka_unit_test(all_bound_pod_skips_pre_bind),
        cmocka_unit_test(scoring_is_off),
        cmocka_unit_test(migrated_pv_zone_matches),
        cmocka_unit_test(migration_off_on_node_ignores_zone),
        cmocka_unit_test(missing_csinode_ignores_zone),
        cmocka_unit_test(migrated_pv_other_zone_conflicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
