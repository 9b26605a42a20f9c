/* VolumeZone: zone and region labels of bound PVs against node labels,
 * cases from upstream's volume_zone_test.go (TestSingleZone, TestMultiZone,
 * TestWithBinding). */
#include "testutil_volumes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define CONFLICT "UnschedulableAndUnresolvable: node(s) had no available volume zone"
#define BZ "failure-domain.beta.kubernetes.io/zone"
#define BR "failure-domain.beta.kubernetes.io/region"
#define Z "topology.kubernetes.io/zone"
#define R "topology.kubernetes.io/region"

#define PV(name, labels) \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name ", labels: {" labels "}}\nspec: {capacity: {storage: 1Gi}}\n"
#define BOUND(claim, pv)                                                                              \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " claim "}\nspec: {volumeName: " pv \
    ", resources: {requests: {storage: 1Gi}}}\n"

static const char *const objects =
    PV("vol-1", BZ ": us-west1-a") PV("vol-2", BR ": us-west1, uselessLabel: none") PV("vol-3", BR ": us-west1")
    PV("vol-stable-1", Z ": us-west1-a") PV("vol-stable-2", R ": us-west1, uselessLabel: none")
    PV("vol-stable-3", Z ": us-west1-a, " R ": us-west1-a")
    PV("vol-multi", BZ ": us-west1-a__us-west1-b") PV("vol-multi-ga", Z ": us-west1-a__us-west1-b")
    PV("vol-bad", Z ": 'us-west1-a__'")
    BOUND("pvc-1", "vol-1") BOUND("pvc-2", "vol-2") BOUND("pvc-3", "vol-3") BOUND("pvc-4", "vol-not-exist")
    BOUND("pvc-stable-1", "vol-stable-1") BOUND("pvc-stable-2", "vol-stable-2") BOUND("pvc-stable-3", "vol-stable-3")
    BOUND("pvc-multi", "vol-multi") BOUND("pvc-multi-ga", "vol-multi-ga") BOUND("pvc-bad", "vol-bad")
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: wait}\nprovisioner: x\n"
    "volumeBindingMode: WaitForFirstConsumer\n"
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: immediate}\nprovisioner: x\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: unbound-empty-class}\n"
    "spec: {storageClassName: '', resources: {requests: {storage: 1Gi}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: unbound-no-class}\n"
    "spec: {resources: {requests: {storage: 1Gi}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: unbound-immediate}\n"
    "spec: {storageClassName: immediate, resources: {requests: {storage: 1Gi}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: unbound-wait}\n"
    "spec: {storageClassName: wait, resources: {requests: {storage: 1Gi}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: unbound-missing-class}\n"
    "spec: {storageClassName: gone, resources: {requests: {storage: 1Gi}}}\n";

/* Verdict of a pod using claim (NULL: no volume) on a node with labels. */
static const char *verdict(const char *claim, const char *node_labels) {
    static char yaml[8192], out[512];
    if (claim)
        snprintf(yaml, sizeof yaml,
                 "apiVersion: v1\nkind: Node\nmetadata: {name: host1, labels: {%s}}\n%s"
                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                 "spec: {containers: [{name: c, image: i}], volumes: [{name: v, persistentVolumeClaim: {claimName: %s}}]}\n",
                 node_labels, objects, claim);
    else
        snprintf(yaml, sizeof yaml,
                 "apiVersion: v1\nkind: Node\nmetadata: {name: host1, labels: {%s}}\n%s"
                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
                 node_labels, objects);
    tv_env e;
    tv_init(&e, "VolumeZone", yaml);
    const char *v = tv_filter(&e, "p");
    snprintf(out, sizeof out, "%s", strncmp(v, "host1 ", 6) == 0 ? v + 6 : v);
    tv_free(&e);
    return out;
}

/* TestSingleZone */
static void pod_without_volume_skips(void **st) { assert_string_equal(verdict(NULL, BZ ": us-west1-a"), "Success (skip)"); }
static void node_without_labels_fits(void **st) { assert_string_equal(verdict("pvc-1", ""), "Success"); }
static void beta_zone_label_matched(void **st) {
    assert_string_equal(verdict("pvc-1", BZ ": us-west1-a, uselessLabel: none"), "Success");
}
static void beta_region_label_matched(void **st) {
    assert_string_equal(verdict("pvc-2", BR ": us-west1, uselessLabel: none"), "Success");
}
static void beta_region_label_mismatch(void **st) {
    assert_string_equal(verdict("pvc-2", BR ": no_us-west1, uselessLabel: none"), CONFLICT);
}
static void beta_zone_label_mismatch(void **st) {
    assert_string_equal(verdict("pvc-1", BZ ": no_us-west1-a, uselessLabel: none"), CONFLICT);
}
static void zone_label_matched(void **st) {
    assert_string_equal(verdict("pvc-stable-1", Z ": us-west1-a, uselessLabel: none"), "Success");
}
static void region_label_matched(void **st) {
    assert_string_equal(verdict("pvc-stable-2", R ": us-west1, uselessLabel: none"), "Success");
}
static void region_label_mismatch(void **st) {
    assert_string_equal(verdict("pvc-stable-2", R ": no_us-west1, uselessLabel: none"), CONFLICT);
}
static void zone_label_mismatch(void **st) {
    assert_string_equal(verdict("pvc-stable-1", Z ": no_us-west1-a, uselessLabel: none"), CONFLICT);
}
static void pv_zone_and_region_node_only_zone(void **st) {
    assert_string_equal(verdict("pvc-stable-3", Z ": us-west1-a"), CONFLICT);
}
static void pv_ga_zone_node_beta_zone(void **st) {
    assert_string_equal(verdict("pvc-stable-1", BZ ": us-west1-a"), CONFLICT);
}
static void pv_beta_label_node_ga_label_matched(void **st) {
    assert_string_equal(verdict("pvc-1", Z ": us-west1-a"), "Success");
}
static void pv_beta_label_node_ga_label_mismatch(void **st) {
    assert_string_equal(verdict("pvc-1", Z ": us-west1-b"), CONFLICT);
}

/* TestMultiZone: "a__b" lists zones. */
static void multi_zone_beta_matched(void **st) { assert_string_equal(verdict("pvc-multi", BZ ": us-west1-b"), "Success"); }
static void multi_zone_beta_mismatch(void **st) { assert_string_equal(verdict("pvc-multi", BZ ": us-west1-c"), CONFLICT); }
static void multi_zone_ga_matched(void **st) { assert_string_equal(verdict("pvc-multi-ga", Z ": us-west1-a"), "Success"); }
static void multi_zone_ga_mismatch(void **st) { assert_string_equal(verdict("pvc-multi-ga", Z ": us-west1-c"), CONFLICT); }
/* An unparsable label is ignored, as upstream logs and skips it. */
static void invalid_zone_label_is_ignored(void **st) {
    assert_string_equal(verdict("pvc-bad", Z ": elsewhere"), "Success (skip)");
}

/* TestWithBinding */
static void missing_pv_rejects(void **st) {
    assert_string_equal(verdict("pvc-4", Z ": a"), "UnschedulableAndUnresolvable: persistentvolume \"vol-not-exist\" not found");
}
static void missing_claim_rejects(void **st) {
    assert_string_equal(verdict("nope", Z ": a"), "UnschedulableAndUnresolvable: persistentvolumeclaim \"nope\" not found");
}
static void unbound_empty_class_rejects(void **st) {
    assert_string_equal(verdict("unbound-empty-class", Z ": a"),
                        "UnschedulableAndUnresolvable: PersistentVolumeClaim had no pv name and storageClass name");
}
static void unbound_no_class_rejects(void **st) {
    assert_string_equal(verdict("unbound-no-class", Z ": a"),
                        "UnschedulableAndUnresolvable: PersistentVolumeClaim had no pv name and storageClass name");
}
static void unbound_missing_class_rejects(void **st) {
    assert_string_equal(verdict("unbound-missing-class", Z ": a"),
                        "UnschedulableAndUnresolvable: storageclass.storage.k8s.io \"gone\" not found");
}
/* The API server defaults volumeBindingMode to Immediate: an unbound claim
 * of such a class has no PV name yet. */
static void unbound_immediate_rejects(void **st) {
    assert_string_equal(verdict("unbound-immediate", Z ": a"), "UnschedulableAndUnresolvable: PersistentVolume had no name");
}
static void unbound_wait_for_first_consumer_skips(void **st) {
    assert_string_equal(verdict("unbound-wait", Z ": a"), "Success (skip)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pod_without_volume_skips),
        cmocka_unit_test(node_without_labels_fits),
        cmocka_unit_test(beta_zone_label_matched),
        cmocka_unit_test(beta_region_label_matched),
        cmocka_unit_test(beta_region_label_mismatch),
        cmocka_unit_test(beta_zone_label_mismatch),
        cmocka_unit_test(zone_label_matched),
        cmocka_unit_test(region_label_matched),
        cmocka_unit_test(region_label_mismatch),
        cmocka_unit_test(zone_label_mismatch),
        cmocka_unit_test(pv_zone_and_region_node_only_zone),
        cmocka_unit_test(pv_ga_zone_node_beta_zone),
        cmocka_unit_test(pv_beta_label_node_ga_label_matched),
        cmocka_unit_test(pv_beta_label_node_ga_label_mismatch),
        cmocka_unit_test(multi_zone_beta_matched),
        cmocka_unit_test(multi_zone_beta_mismatch),
        cmocka_unit_test(multi_zone_ga_matched),
        cmocka_unit_test(multi_zone_ga_mismatch),
        cmocka_unit_test(invalid_zone_label_is_ignored),
        cmocka_unit_test(missing_pv_rejects),
        cmocka_unit_test(missing_claim_rejects),
        cmocka_unit_test(unbound_empty_class_rejects),
        cmocka_unit_test(unbound_no_class_rejects),
        cmocka_unit_test(unbound_missing_class_rejects),
        cmocka_unit_test(unbound_immediate_rejects),
        cmocka_unit_test(unbound_wait_for_first_consumer_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
