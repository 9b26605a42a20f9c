/* NodeVolumeLimits: CSI volume counts against CSINode allocatable counts,
 * with in-tree migration and ephemeral volumes; the cases of upstream's
 * csi_test.go TestCSILimits, with VolumeAttachments (those upstream
 * counts and those it skips). */
#include "testutil_volumes.h"

#include "util/strbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define EBS "ebs.csi.aws.com"
#define GCE "pd.csi.storage.gke.io"
#define INTREE_EBS "kubernetes.io/aws-ebs"
#define HOSTPATH "kubernetes.io/hostpath"
#define EXCEED "Unschedulable: node(s) exceed max volume count"

/* Pods by name: the claims (or the volume YAML) they use. */
static const struct {
    const char *name, *ns, *uid, *volumes;
} pods[] = {
    {"running", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-" EBS "-3}}"},
    {"pending-volume", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-4}}"},
    {"unbound-pvc-2", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-4}}"},
    {"missing-pv", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-6}}"},
    {"no-sc-pvc", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-5}}"},
    {"gce-two-vol", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-" GCE "-1}}, {name: b, persistentVolumeClaim: {claimName: csi-" GCE
     "-2}}"},
    {"in-tree-one-vol", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-" INTREE_EBS "-0}}"},
    {"in-tree-two-vol", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-" INTREE_EBS "-1}}, {name: b, persistentVolumeClaim: {claimName: csi-" INTREE_EBS
     "-2}}"},
    {"csi-ebs-one-vol", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-" EBS "-0}}"},
    {"csi-ebs-two-vol", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-" EBS "-1}}, {name: b, persistentVolumeClaim: {claimName: csi-" EBS "-2}}"},
    {"in-tree-non-migratable", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-" HOSTPATH "-0}}"},
    {"abc", "test", "12345", "{name: xyz, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}"},
    {"abc2", "test", "12345II",
     "{name: x, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}, "
     "{name: \"y\", ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}"},
    {"in-tree-inline", NULL, NULL, "{name: a, awsElasticBlockStore: {volumeID: aws-inline1}}"},
    {"in-tree-inline-same-csi-id", NULL, NULL, "{name: a, awsElasticBlockStore: {volumeID: csi-" EBS "-1}}"},
    {"only-configmap-secret", NULL, NULL, "{name: a, configMap: {name: c}}, {name: b, secret: {secretName: s}}"},
    {"pvc-configmap-secret", NULL, NULL,
     "{name: a, configMap: {name: c}}, {name: b, secret: {secretName: s}}, {name: c, persistentVolumeClaim: {claimName: csi-" EBS
     "-0}}"},
    {"abc3", "test", NULL,
     "{name: a, configMap: {name: c}}, {name: b, secret: {secretName: s}}, "
     "{name: xyz, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}"},
    {"inline-configmap-secret", NULL, NULL,
     "{name: a, configMap: {name: c}}, {name: b, secret: {secretName: s}}, {name: c, awsElasticBlockStore: {volumeID: aws-inline1}}"},
};

static void add_pod(ks_strbuf *b, const char *name, bool on_node) {
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        if (strcmp(pods[i].name, name) != 0) continue;
        ks_sb_printf(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s", name);
        if (pods[i].ns) ks_sb_printf(b, ", namespace: %s", pods[i].ns);
        if (pods[i].uid) ks_sb_printf(b, ", uid: '%s'", pods[i].uid);
        ks_sb_puts(b, "}\n");
        ks_sb_printf(b, "spec: {%scontainers: [{name: c, image: i}], volumes: [%s]}\n",
                     on_node ? "nodeName: node-1, " : "", pods[i].volumes);
        return;
    }
    fail_msg("no pod %s", name);
}

/* An ephemeral claim test/<name> owned (controller) by the pod with uid, or
 * by no one (uid NULL). */
static void add_ephemeral_claim(ks_strbuf *b, const char *name, const char *uid) {
    ks_sb_printf(b, "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: test", name);
    if (uid) ks_sb_printf(b, ", ownerReferences: [{apiVersion: v1, kind: Pod, name: x, uid: '%s', controller: true}]", uid);
    ks_sb_puts(b, "}\nspec: {storageClassName: csi-sc}\n");
}

typedef struct tc {
    const char *new_pod;
    const char *existing[4];
    int max_vols;
    const char *drivers[3];
    const char *limit_source; /* "csinode", "csinode-with-no-limit", NULL: no CSINode */
    const char *claims;       /* "claim", "conflicting", "xy" (ephemeral claims) */
} tc;

/* For the VolumeAttachment cases: attachments of csi-<driver>-0.. on
 * node-1 per driver, and more objects. */
static int va_count;
static const char *extra;

/* A VolumeAttachment; pv NULL: no persistentVolumeName. */
static void add_va(ks_strbuf *b, const char *name, const char *attacher, const char *node, const char *pv) {
    ks_sb_printf(b, "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: '%s'}\n"
                    "spec: {attacher: '%s', nodeName: %s, source: {",
                 name, attacher, node);
    if (pv) ks_sb_printf(b, "persistentVolumeName: '%s'", pv);
    ks_sb_puts(b, "}}\n");
}

static const char *run(const tc *t) {
    static char out[512];
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n");
    /* PVs and PVCs csi-<driver>-<j> for every driver, and csi-4/5/6 */
    for (int d = 0; d < 3 && t->drivers[d]; d++)
        for (int j = 0; j < 4; j++) {
            const char *drv = t->drivers[d];
            ks_sb_printf(&b, "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: 'csi-%s-%d'}\nspec: {", drv, j);
            if (strcmp(drv, INTREE_EBS) == 0) ks_sb_printf(&b, "awsElasticBlockStore: {volumeID: 'csi-%s-%d'}}\n", drv, j);
            else if (strcmp(drv, HOSTPATH) == 0) ks_sb_puts(&b, "hostPath: {path: /tmp}}\n");
            else ks_sb_printf(&b, "csi: {driver: %s, volumeHandle: 'csi-%s-%d'}}\n", drv, drv, j);
            ks_sb_printf(&b, "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: 'csi-%s-%d'}\n"
                             "spec: {volumeName: 'csi-%s-%d'}\n",
                         drv, j, drv, j);
        }
    ks_sb_puts(&b, "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-4}\nspec: {storageClassName: csi-sc}\n"
                   "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-5}\nspec: {}\n"
                   "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-6}\n"
                   "spec: {storageClassName: csi-sc, volumeName: missing-in-action}\n");
    ks_sb_printf(&b, "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: csi-sc}\nprovisioner: %s\n",
                 t->drivers[0]);
    if (t->limit_source) {
        ks_sb_puts(&b, "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: node-1, annotations: "
                       "{storage.alpha.kubernetes.io/migrated-plugins: " INTREE_EBS "}}\nspec:\n  drivers:\n");
        for (int d = 0; d < 3 && t->drivers[d]; d++) {
            ks_sb_printf(&b, "  - {name: %s, nodeID: node-1", t->drivers[d]);
            if (strcmp(t->limit_source, "csinode") == 0) ks_sb_printf(&b, ", allocatable: {count: %d}", t->max_vols);
            ks_sb_puts(&b, "}\n");
        }
    }
    if (t->claims && strcmp(t->claims, "claim") == 0) add_ephemeral_claim(&b, "abc-xyz", "12345");
    if (t->claims && strcmp(t->claims, "conflicting") == 0) add_ephemeral_claim(&b, "abc-xyz", NULL);
    if (t->claims && strcmp(t->claims, "xy") == 0) {
        add_ephemeral_claim(&b, "abc2-x", "12345II");
        add_ephemeral_claim(&b, "abc2-y", "12345II");
    }
    for (int d = 0; d < 3 && t->drivers[d]; d++)
        for (int j = 0; j < va_count; j++) {
            char name[128], pv[128];
            snprintf(name, sizeof name, "va-%s-%d", t->drivers[d], j);
            snprintf(pv, sizeof pv, "csi-%s-%d", t->drivers[d], j);
            add_va(&b, name, t->drivers[d], "node-1", pv);
        }
    if (extra) ks_sb_puts(&b, extra);
    for (int i = 0; i < 4 && t->existing[i]; i++) add_pod(&b, t->existing[i], true);
    add_pod(&b, t->new_pod, false);
    tv_env e;
    tv_init(&e, "NodeVolumeLimits", ks_sb_str(&b));
    const char *v = tv_filter(&e, t->new_pod);
    snprintf(out, sizeof out, "%s", strncmp(v, "node-1 ", 7) == 0 ? v + 7 : v);
    tv_free(&e);
    ks_sb_free(&b);
    return out;
}

#define CASE(fn, want, ...)                                   \
    static void fn(void **st) {                               \
        static const tc t = __VA_ARGS__;                      \
        va_count = 0;                                         \
        extra = NULL;                                         \
        assert_string_equal(run(&t), want);                   \
    }
#define CASE_VA(fn, want, vas, more, ...)                     \
    static void fn(void **st) {                               \
        static const tc t = __VA_ARGS__;                      \
        va_count = vas;                                       \
        extra = more;                                         \
        assert_string_equal(run(&t), want);                   \
    }

CASE(fits_when_limit_at_least_volumes, "Success", {"csi-ebs-one-vol", {"running", "csi-ebs-two-vol"}, 4, {EBS}, "csinode", NULL})
CASE(exceeds_when_limit_below_volumes, EXCEED, {"csi-ebs-one-vol", {"running", "csi-ebs-two-vol"}, 2, {EBS}, "csinode", NULL})
CASE(driver_without_limit_fits, "Success",
     {"csi-ebs-one-vol", {"running", "csi-ebs-two-vol"}, 2, {EBS}, "csinode-with-no-limit", NULL})
CASE(pending_claim_counts_by_class_provisioner, EXCEED,
     {"csi-ebs-one-vol", {"pending-volume", "csi-ebs-two-vol"}, 2, {EBS}, "csinode", NULL})
CASE(same_pending_claim_counts_once, "Success",
     {"csi-ebs-one-vol", {"pending-volume", "unbound-pvc-2", "csi-ebs-two-vol"}, 4, {EBS}, "csinode", NULL})
CASE(claim_with_missing_pv_counts_by_class, EXCEED,
     {"csi-ebs-one-vol", {"missing-pv", "csi-ebs-two-vol"}, 2, {EBS}, "csinode", NULL})
CASE(claim_without_class_is_not_counted, "Success", {"csi-ebs-one-vol", {"running", "no-sc-pvc"}, 2, {EBS}, "csinode", NULL})
CASE(same_driver_volumes_count_together, EXCEED,
     {"csi-ebs-one-vol", {"gce-two-vol", "csi-ebs-two-vol"}, 2, {EBS, GCE}, "csinode", NULL})
CASE(other_driver_volumes_do_not_count, "Success",
     {"gce-two-vol", {"csi-ebs-two-vol", "running"}, 2, {EBS, GCE}, "csinode", NULL})
/* in-tree volumes, migration on for aws-ebs */
CASE(in_tree_volumes_count_when_migrated, EXCEED, {"in-tree-one-vol", {"in-tree-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode", NULL})
CASE(no_csinode_no_limits, "Success", {"in-tree-inline", {"in-tree-two-vol"}, 0, {INTREE_EBS, EBS}, NULL, NULL})
CASE(unbound_in_tree_claim_counts_when_migrated, EXCEED,
     {"pending-volume", {"in-tree-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode", NULL})
CASE(in_tree_without_reported_limit_fits, "Success",
     {"in-tree-one-vol", {"in-tree-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode-with-no-limit", NULL})
CASE(non_migratable_in_tree_not_counted, "Success",
     {"in-tree-non-migratable", {"csi-ebs-two-vol"}, 2, {HOSTPATH, EBS}, "csinode", NULL})
CASE(inline_in_tree_counts_when_migrated, EXCEED, {"in-tree-inline", {"in-tree-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode", NULL})
CASE(in_tree_and_csi_count_together, EXCEED, {"in-tree-one-vol", {"csi-ebs-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode", NULL})
CASE(inline_in_tree_and_csi_count_together, EXCEED,
     {"in-tree-inline", {"csi-ebs-two-vol", "in-tree-one-vol"}, 3, {INTREE_EBS, EBS}, "csinode", NULL})
CASE(inline_with_attached_volume_handle_counts_once, "Success",
     {"in-tree-inline-same-csi-id", {"csi-ebs-two-vol", "in-tree-one-vol"}, 3, {INTREE_EBS, EBS}, "csinode", NULL})
CASE(csi_and_in_tree_count_together, EXCEED, {"csi-ebs-one-vol", {"in-tree-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode", NULL})
/* ephemeral volumes */
CASE(ephemeral_claim_missing, "UnschedulableAndUnresolvable: looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found",
     {"abc", {NULL}, 0, {EBS}, "csinode-with-no-limit", NULL})
CASE(ephemeral_claim_not_owned, "Error: running \"NodeVolumeLimits\" filter plugin: PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",
     {"abc", {NULL}, 0, {EBS}, "csinode-with-no-limit", "conflicting"})
CASE(ephemeral_claim_unbound_fits, "Success", {"abc", {NULL}, 0, {EBS}, "csinode-with-no-limit", "claim"})
CASE(ephemeral_exceeds_with_csi_volumes, EXCEED, {"abc", {"running", "csi-ebs-two-vol"}, 2, {EBS}, "csinode", "claim"})
CASE(ephemeral_volumes_of_existing_pod_count, EXCEED, {"csi-ebs-one-vol", {"running", "abc2"}, 2, {EBS}, "csinode", "xy"})
CASE(persistent_and_ephemeral_exceed, EXCEED, {"csi-ebs-one-vol", {"running", "abc", "csi-ebs-two-vol"}, 3, {EBS}, "csinode", "claim"})
CASE(persistent_and_ephemeral_fit, "Success", {"csi-ebs-one-vol", {"running", "abc", "csi-ebs-two-vol"}, 5, {EBS}, "csinode", "claim"})
/* PreFilter */
CASE(configmaps_and_secrets_skip, "Success (skip)", {"only-configmap-secret", {NULL}, 2, {EBS}, "csinode", NULL})
CASE(claims_do_not_skip, "Success", {"pvc-configmap-secret", {NULL}, 2, {EBS}, "csinode", NULL})
CASE(ephemeral_does_not_skip, "UnschedulableAndUnresolvable: looking up PVC test/abc3-xyz: persistentvolumeclaim \"abc3-xyz\" not found",
     {"abc3", {NULL}, 0, {EBS}, "csinode-with-no-limit", NULL})
CASE(inline_migratable_does_not_skip, EXCEED, {"inline-configmap-secret", {"in-tree-two-vol"}, 2, {INTREE_EBS, EBS}, "csinode", NULL})

/* VolumeAttachments */
CASE_VA(va_counts_toward_limit, EXCEED, 2, NULL, {"csi-ebs-one-vol", {NULL}, 2, {EBS}, "csinode", NULL})
CASE_VA(va_within_limit, "Success", 1, NULL, {"csi-ebs-one-vol", {NULL}, 2, {EBS}, "csinode", NULL})
/* csi-ebs-1 is attached and used by a running pod: counted once (2 + 1
 * attachment + the new volume = 4) */
CASE_VA(va_of_running_pod_volume_counts_once, "Success", 2, NULL, {"csi-ebs-one-vol", {"csi-ebs-two-vol"}, 4, {EBS}, "csinode", NULL})
CASE_VA(va_of_running_pod_volume_limit, EXCEED, 2, NULL, {"csi-ebs-one-vol", {"csi-ebs-two-vol"}, 3, {EBS}, "csinode", NULL})
/* the new pod's own volume is attached: upstream counts it twice */
CASE_VA(va_of_new_pod_volume_counts_again, EXCEED, 1, NULL, {"csi-ebs-one-vol", {NULL}, 1, {EBS}, "csinode", NULL})
CASE_VA(va_skipped_when_upstream_skips, "Success", 0,
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: no-attacher}\n"
      "spec: {attacher: '', nodeName: node-1, source: {persistentVolumeName: csi-" EBS "-1}}\n"
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: no-pv-name}\n"
      "spec: {attacher: " EBS ", nodeName: node-1, source: {}}\n"
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: pv-missing}\n"
      "spec: {attacher: " EBS ", nodeName: node-1, source: {persistentVolumeName: nowhere}}\n"
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: not-csi}\n"
      "spec: {attacher: " EBS ", nodeName: node-1, source: {persistentVolumeName: csi-" HOSTPATH "-1}}\n"
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: other-node}\n"
      "spec: {attacher: " EBS ", nodeName: node-2, source: {persistentVolumeName: csi-" EBS "-1}}\n",
        {"csi-ebs-one-vol", {NULL}, 1, {EBS, HOSTPATH}, "csinode", NULL})
/* two attachments of one volume are one; the attacher is the driver counted */
CASE_VA(va_same_volume_counts_once, "Success", 0,
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a1}\n"
      "spec: {attacher: " EBS ", nodeName: node-1, source: {persistentVolumeName: csi-" EBS "-1}}\n"
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a2}\n"
      "spec: {attacher: " EBS ", nodeName: node-1, source: {persistentVolumeName: csi-" EBS "-1}}\n",
        {"csi-ebs-one-vol", {NULL}, 2, {EBS}, "csinode", NULL})
CASE_VA(va_counts_for_its_attacher, EXCEED, 0,
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a1}\n"
      "spec: {attacher: " EBS ", nodeName: node-1, source: {persistentVolumeName: csi-" GCE "-1}}\n",
        {"csi-ebs-one-vol", {NULL}, 1, {EBS, GCE}, "csinode", NULL})
CASE_VA(va_of_other_driver_does_not_count, "Success", 0,
      "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a1}\n"
      "spec: {attacher: " GCE ", nodeName: node-1, source: {persistentVolumeName: csi-" EBS "-1}}\n",
        {"csi-ebs-one-vol", {NULL}, 1, {EBS, GCE}, "csinode", NULL})

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fits_when_limit_at_least_volumes),
        cmocka_unit_test(exceeds_when_limit_below_volumes),
        cmocka_unit_test(driver_without_limit_fits),
        cmocka_unit_test(pending_claim_counts_by_class_provisioner),
        cmocka_unit_test(same_pending_claim_counts_once),
        cmocka_unit_test(claim_with_missing_pv_counts_by_class),
        cmocka_unit_test(claim_without_class_is_not_counted),
        cmocka_unit_test(same_driver_volumes_count_together),
        cmocka_unit_test(other_driver_volumes_do_not_count),
        cmocka_unit_test(in_tree_volumes_count_when_migrated),
        cmocka_unit_test(no_csinode_no_limits),
        cmocka_unit_test(unbound_in_tree_claim_counts_when_migrated),
        cmocka_unit_test(in_tree_without_reported_limit_fits),
        cmocka_unit_test(non_migratable_in_tree_not_counted),
        cmocka_unit_test(inline_in_tree_counts_when_migrated),
        cmocka_unit_test(in_tree_and_csi_count_together),
        cmocka_unit_test(inline_in_tree_and_csi_count_together),
        cmocka_unit_test(inline_with_attached_volume_handle_counts_once),
        cmocka_unit_test(csi_and_in_tree_count_together),
        cmocka_unit_test(ephemeral_claim_missing),
        cmocka_unit_test(ephemeral_claim_not_owned),
        cmocka_unit_test(ephemeral_claim_unbound_fits),
        cmocka_unit_test(ephemeral_exceeds_with_csi_volumes),
        cmocka_unit_test(ephemeral_volumes_of_existing_pod_count),
        cmocka_unit_test(persistent_and_ephemeral_exceed),
        cmocka_unit_test(persistent_and_ephemeral_fit),
        cmocka_unit_test(configmaps_and_secrets_skip),
        cmocka_unit_test(claims_do_not_skip),
        cmocka_unit_test(ephemeral_does_not_skip),
        cmocka_unit_test(inline_migratable_does_not_skip),
        cmocka_unit_test(va_counts_toward_limit),
        cmocka_unit_test(va_within_limit),
        cmocka_unit_test(va_of_running_pod_volume_counts_once),
        cmocka_unit_test(va_of_running_pod_volume_limit),
        cmocka_unit_test(va_of_new_pod_volume_counts_again),
        cmocka_unit_test(va_skipped_when_upstream_skips),
        cmocka_unit_test(va_same_volume_counts_once),
        cmocka_unit_test(va_counts_for_its_attacher),
        cmocka_unit_test(va_of_other_driver_does_not_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
