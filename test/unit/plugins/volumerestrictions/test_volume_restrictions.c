/* VolumeRestrictions: disk conflicts (GCE PD, AWS EBS, RBD, ISCSI) and
 * ReadWriteOncePod conflicts, cases from upstream's
 * volume_restrictions_test.go, plus the preemption extensions. */
#include "testutil_volumes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#define NODE "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '10'}}\n"
#define DISK "Unschedulable: node(s) had no available disk"
#define RWOP                                                                                            \
    "Unschedulable: node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode " \
    "already in-use by another pod"

/* The verdict of pod "new" with volume `incoming` on n1, which runs a pod
 * with volume `existing` (either may be empty). */
static const char *verdict(const char *incoming, const char *existing) {
    static char out[512], yaml[4096];
    snprintf(yaml, sizeof yaml,
             NODE "---\napiVersion: v1\nkind: Pod\nmetadata: {name: old}\n"
                  "spec: {nodeName: n1, containers: [{name: c, image: i}], volumes: [%s]}\n"
                  "---\napiVersion: v1\nkind: Pod\nmetadata: {name: new}\n"
                  "spec: {containers: [{name: c, image: i}], volumes: [%s]}\n",
             existing, incoming);
    tv_env e;
    tv_init(&e, "VolumeRestrictions", yaml);
    snprintf(out, sizeof out, "%s", tv_filter(&e, "new"));
    tv_free(&e);
    /* "n1 <verdict>" */
    return out + 3;
}

#define GCE(pd, ro) "{name: v, gcePersistentDisk: {pdName: " pd ", readOnly: " ro "}}"
#define EBS(id, ro) "{name: v, awsElasticBlockStore: {volumeID: " id ", readOnly: " ro "}}"
#define RBD(mons, pool, image, ro) \
    "{name: v, rbd: {monitors: " mons ", pool: " pool ", image: " image ", readOnly: " ro "}}"
#define ISCSI(iqn, ro) "{name: v, iscsi: {targetPortal: 't:3260', iqn: " iqn ", lun: 0, readOnly: " ro "}}"
#define EMPTY "{name: v, emptyDir: {}}"

static void pod_without_volumes_skips(void **st) { assert_string_equal(verdict("", GCE("foo", "false")), "Success (skip)"); }
static void volume_without_restrictions_skips(void **st) { assert_string_equal(verdict(EMPTY, ""), "Success (skip)"); }

static void gce_same_disk_conflicts(void **st) {
    assert_string_equal(verdict(GCE("foo", "false"), GCE("foo", "false")), DISK);
}
static void gce_different_disk_fits(void **st) { assert_string_equal(verdict(GCE("bar", "false"), GCE("foo", "false")), "Success"); }
static void gce_same_disk_read_only_everywhere_fits(void **st) {
    assert_string_equal(verdict(GCE("foo", "true"), GCE("foo", "true")), "Success");
}
static void gce_same_disk_one_writer_conflicts(void **st) {
    assert_string_equal(verdict(GCE("foo", "true"), GCE("foo", "false")), DISK);
}

static void aws_same_volume_conflicts(void **st) { assert_string_equal(verdict(EBS("foo", "false"), EBS("foo", "false")), DISK); }
static void aws_same_volume_read_only_still_conflicts(void **st) {
    assert_string_equal(verdict(EBS("foo", "true"), EBS("foo", "true")), DISK);
}
static void aws_different_volume_fits(void **st) { assert_string_equal(verdict(EBS("bar", "false"), EBS("foo", "false")), "Success"); }

static void rbd_shared_monitor_same_image_conflicts(void **st) {
    assert_string_equal(verdict(RBD("[a, b]", "foo", "bar", "false"), RBD("[b, c]", "foo", "bar", "false")), DISK);
}
static void rbd_disjoint_monitors_fit(void **st) {
    assert_string_equal(verdict(RBD("[c, d]", "foo", "bar", "false"), RBD("[a, b]", "foo", "bar", "false")), "Success");
}
static void rbd_other_pool_fits(void **st) {
    assert_string_equal(verdict(RBD("[a]", "p2", "bar", "false"), RBD("[a]", "foo", "bar", "false")), "Success");
}
static void rbd_read_only_everywhere_fits(void **st) {
    assert_string_equal(verdict(RBD("[a]", "foo", "bar", "true"), RBD("[a]", "foo", "bar", "true")), "Success");
}

static void iscsi_same_iqn_conflicts(void **st) {
    assert_string_equal(verdict(ISCSI("iqn.2016-12.server:storage.target01", "false"),
                                ISCSI("iqn.2016-12.server:storage.target01", "false")),
                        DISK);
}
static void iscsi_other_iqn_fits(void **st) {
    assert_string_equal(verdict(ISCSI("iqn.2017-12.server:storage.target01", "false"),
                                ISCSI("iqn.2016-12.server:storage.target01", "false")),
                        "Success");
}
static void iscsi_read_only_everywhere_fits(void **st) {
    assert_string_equal(verdict(ISCSI("iqn.x", "true"), ISCSI("iqn.x", "true")), "Success");
}

/* ---- ReadWriteOncePod (TestAccessModeConflicts) ---- */

#define PVC(name, mode)                                                                     \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name "}\n" \
    "spec: {accessModes: [" mode "], resources: {requests: {storage: 1Gi}}}\n"
#define POD(name, node, claims)                                                                    \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {" node "containers: [{name: c, " \
    "image: i}], volumes: [" claims "]}\n"
#define CLAIM(n) "{name: " n ", persistentVolumeClaim: {claimName: " n "}}"

static const char *const rwop_yaml =
    NODE PVC("claim-with-rwop-1", "ReadWriteOncePod") PVC("claim-with-rwop-2", "ReadWriteOncePod")
        PVC("claim-with-rwx", "ReadWriteMany")
        POD("pod-with-rwx", "nodeName: n1, ", CLAIM("claim-with-rwx"))
        POD("pod-with-one-pvc", "", CLAIM("claim-with-rwop-1"))
        POD("pod-with-missing", "", CLAIM("nope"))
        POD("pod-with-two-pvcs", "", CLAIM("claim-with-rwop-1") ", " CLAIM("claim-with-rwop-2"));

static void rwop_missing_claim_rejects_at_prefilter(void **st) {
    tv_env e;
    tv_init(&e, "VolumeRestrictions", rwop_yaml);
    assert_string_equal(tv_filter(&e, "pod-with-missing"),
                        "UnschedulableAndUnresolvable: persistentvolumeclaim \"nope\" not found");
    tv_free(&e);
}

static void rwop_claim_unused_skips(void **st) {
    tv_env e;
    tv_init(&e, "VolumeRestrictions", rwop_yaml);
    assert_string_equal(tv_filter(&e, "pod-with-one-pvc"), "n1 Success (skip)");
    tv_free(&e);
}

static void rwop_claim_in_use_conflicts_on_every_node(void **st) {
    tv_env e;
    tv_init(&e, "VolumeRestrictions",
            NODE "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n" PVC("claim-with-rwop-1", "ReadWriteOncePod")
                PVC("claim-with-rwop-2", "ReadWriteOncePod")
                POD("holder", "nodeName: n1, ", CLAIM("claim-with-rwop-1") ", " CLAIM("claim-with-rwop-2"))
                POD("one", "", CLAIM("claim-with-rwop-1"))
                POD("two", "", CLAIM("claim-with-rwop-1") ", " CLAIM("claim-with-rwop-2")));
    assert_string_equal(tv_filter(&e, "one"), "n1 " RWOP "; n2 " RWOP);
    assert_string_equal(tv_filter(&e, "two"), "n1 " RWOP "; n2 " RWOP);
    tv_free(&e);
}

/* Preemption dry runs: removing the holder lifts the conflict, adding it
 * back restores it (AddPod/RemovePod on a cloned state). */
static void rwop_conflict_follows_remove_and_add_pod(void **st) {
    tv_env e;
    tv_init(&e, "VolumeRestrictions",
            NODE PVC("claim-with-rwop-1", "ReadWriteOncePod") POD("holder", "nodeName: n1, ", CLAIM("claim-with-rwop-1"))
                POD("one", "", CLAIM("claim-with-rwop-1")));
    assert_string_equal(tv_filter(&e, "one"), "n1 " RWOP);
    ks_pod *pod = tv_pod(&e, "one"), *holder = tv_pod(&e, "holder");
    const ks_node_info *ni = e.snap->nodes[0];
    ks_cycle_state *clone = ks_cycle_state_clone(e.st);
    assert_null(ks_framework_run_pre_filter_remove_pod(e.fw, clone, pod, holder, ni));
    assert_string_equal(tv_status(ks_framework_run_filter(e.fw, clone, pod, ni)), "Success");
    /* the original state is untouched */
    assert_string_equal(tv_status(ks_framework_run_filter(e.fw, e.st, pod, ni)), RWOP);
    assert_null(ks_framework_run_pre_filter_add_pod(e.fw, clone, pod, holder, ni));
    assert_string_equal(tv_status(ks_framework_run_filter(e.fw, clone, pod, ni)), RWOP);
    ks_cycle_state_free(clone);
    tv_free(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pod_without_volumes_skips),
        cmocka_unit_test(volume_without_restrictions_skips),
        cmocka_unit_test(gce_same_disk_conflicts),
        cmocka_unit_test(gce_different_disk_fits),
        cmocka_unit_test(gce_same_disk_read_only_everywhere_fits),
        cmocka_unit_test(gce_same_disk_one_writer_conflicts),
        cmocka_unit_test(aws_same_volume_conflicts),
        cmocka_unit_test(aws_same_volume_read_only_still_conflicts),
        cmocka_unit_test(aws_different_volume_fits),
        cmocka_unit_test(rbd_shared_monitor_same_image_conflicts),
        cmocka_unit_test(rbd_disjoint_monitors_fit),
        cmocka_unit_test(rbd_other_pool_fits),
        cmocka_unit_test(rbd_read_only_everywhere_fits),
        cmocka_unit_test(iscsi_same_iqn_conflicts),
        cmocka_unit_test(iscsi_other_iqn_fits),
        cmocka_unit_test(iscsi_read_only_everywhere_fits),
        cmocka_unit_test(rwop_missing_claim_rejects_at_prefilter),
        cmocka_unit_test(rwop_claim_unused_skips),
        cmocka_unit_test(rwop_claim_in_use_conflicts_on_every_node),
        cmocka_unit_test(rwop_conflict_follows_remove_and_add_pod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
