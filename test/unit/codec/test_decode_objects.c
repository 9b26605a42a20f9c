/* The storage fields the volume plugins read: PV sources and defaults,
 * claim owners and selectors, CSIDriver, CSINode annotations,
 * CSIStorageCapacity, VolumeAttachment, pod volume kinds and resource
 * claims. */
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

static ks_cluster *load(const char *yaml) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = ks_load_buffer(c, "t.yaml", yaml, strlen(yaml), &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    ks_errors_free(&errs);
    assert_true(ok);
    return c;
}

static const char *label(const ks_labels *l, const char *key) {
    ks_id v;
    return ks_labels_get(l, ks_intern(key), &v) ? ks_str(v) : NULL;
}

static void pv_sources_and_defaults(void **st) {
    ks_cluster *c = load("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: gce}\n"
                         "spec: {gcePersistentDisk: {pdName: d1}, claimRef: {namespace: ns, name: c, uid: u1}}\n"
                         "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: az, deletionTimestamp: "
                         "'2024-01-01T00:00:00Z', annotations: {a: b}}\n"
                         "spec: {azureDisk: {diskName: x, diskURI: uri}, volumeMode: Block, volumeAttributesClassName: gold}\n"
                         "status: {phase: Available}\n"
                         "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: csi}\n"
                         "spec: {csi: {driver: d, volumeHandle: h}}\n");
    assert_int_equal(c->pvs.n, 3);
    const ks_pv *gce = c->pvs.v[0], *az = c->pvs.v[1], *csi = c->pvs.v[2];
    assert_int_equal(gce->source, KS_VOL_GCE_PD);
    assert_string_equal(gce->source_id, "d1");
    assert_true(gce->has_claim_ref);
    assert_string_equal(gce->claim_uid, "u1");
    assert_string_equal(ks_str(gce->volume_mode), "Filesystem");
    assert_string_equal(ks_str(gce->phase), "Pending"); /* the API server's default */
    assert_false(gce->deleting);
    assert_int_equal(az->source, KS_VOL_AZURE_DISK);
    assert_string_equal(az->source_extra, "Shared"); /* kind defaults to Shared */
    assert_string_equal(ks_str(az->volume_mode), "Block");
    assert_string_equal(ks_str(az->vac), "gold");
    assert_true(az->deleting);
    assert_string_equal(label(&az->annotations, "a"), "b");
    assert_string_equal(ks_str(az->phase), "Available");
    assert_int_equal(csi->source, KS_VOL_CSI);
    assert_string_equal(csi->csi_driver, "d");
    assert_false(csi->has_claim_ref);
    ks_cluster_free(c);
}

static void pvc_owner_selector_and_request(void **st) {
    ks_cluster *c = load("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: p\n  uid: pu\n"
                         "  ownerReferences: [{apiVersion: v1, kind: Pod, name: x, uid: other}, "
                         "{apiVersion: v1, kind: Pod, name: y, uid: ctl, controller: true}]\n"
                         "spec: {selector: {matchLabels: {tier: gold}}, volumeMode: Block}\n"
                         "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: q}\n"
                         "spec: {resources: {requests: {storage: 1Gi}}}\n");
    const ks_pvc *p = c->pvcs.v[0], *q = c->pvcs.v[1];
    assert_string_equal(p->uid, "pu");
    assert_string_equal(p->controller_uid, "ctl");
    assert_true(p->has_selector);
    assert_int_equal(p->selector.nreq, 1);
    assert_false(p->has_request);
    assert_string_equal(ks_str(p->volume_mode), "Block");
    assert_string_equal(ks_str(p->phase), "Pending");
    assert_null(q->controller_uid);
    assert_true(q->has_request);
    assert_int_equal(q->request, 1LL << 30);
    assert_string_equal(ks_str(q->volume_mode), "Filesystem");
    ks_cluster_free(c);
}

static void csidriver_and_csinode_annotations(void **st) {
    ks_cluster *c = load("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\nspec: {storageCapacity: true}\n"
                         "---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: e}\nspec: {}\n"
                         "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1, annotations: "
                         "{storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/gce-pd}}\nspec: {drivers: []}\n");
    assert_int_equal(c->csi_drivers.n, 2);
    assert_true(c->csi_drivers.v[0]->storage_capacity);
    assert_false(c->csi_drivers.v[1]->storage_capacity);
    assert_string_equal(label(&c->csinodes.v[0]->annotations, "storage.alpha.kubernetes.io/migrated-plugins"),
                        "kubernetes.io/gce-pd");
    ks_cluster_free(c);
}

static void duplicate_csidriver_is_refused(void **st) {
    const char *y = "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\n"
                    "---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\n";
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    assert_false(ks_load_buffer(c, "t.yaml", y, strlen(y), &errs));
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.v[0], "csidriver d: already defined"));
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void csi_storage_capacity(void **st) {
    ks_cluster *c = load("apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
                         "metadata: {name: a, namespace: kube-system}\nstorageClassName: fast\n"
                         "nodeTopology: {matchLabels: {zone: z1}}\ncapacity: 10Gi\nmaximumVolumeSize: 1500M\n"
                         "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
                         "metadata: {name: b}\nstorageClassName: slow\nnodeTopology: {}\ncapacity: 0.5\n"
                         "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
                         "metadata: {name: c}\nstorageClassName: slow\nnodeTopology: null\ncapacity: null\n");
    assert_int_equal(c->csi_capacities.n, 3);
    const ks_csi_capacity *a = c->csi_capacities.v[0], *b = c->csi_capacities.v[1], *x = c->csi_capacities.v[2];
    assert_string_equal(ks_str(a->ns), "kube-system");
    assert_string_equal(ks_str(a->name), "a");
    assert_string_equal(ks_str(a->storage_class), "fast");
    assert_false(a->node_topology.nothing);
    assert_int_equal(a->node_topology.nreq, 1);
    assert_true(a->has_capacity);
    assert_int_equal(a->capacity, 10LL << 30);
    assert_true(a->has_max_size);
    assert_int_equal(a->max_size, 1500000000LL);
    /* the namespace defaults; an empty selector selects every node;
     * a fraction rounds up as Quantity.Value() */
    assert_string_equal(ks_str(b->ns), "default");
    assert_false(b->node_topology.nothing);
    assert_int_equal(b->node_topology.nreq, 0);
    assert_true(b->has_capacity);
    assert_int_equal(b->capacity, 1);
    assert_false(b->has_max_size);
    /* null: unset */
    assert_true(x->node_topology.nothing);
    assert_false(x->has_capacity);
    assert_false(x->has_max_size);
    ks_cluster_free(c);
}

static void csi_storage_capacity_errors(void **st) {
    const char *y = "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: a}\ncapacity: lots\n"
                    "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: b}\n"
                    "storageClassName: s\nnodeTopology: {matchLabels: [x]}\n"
                    "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: d, namespace: ns}\n"
                    "storageClassName: s\n"
                    "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: d, namespace: ns}\n"
                    "storageClassName: s\n";
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    assert_false(ks_load_buffer(c, "t.yaml", y, strlen(y), &errs));
    bool required = false, quantity = false, selector = false, dup = false;
    for (size_t i = 0; i < errs.n; i++) {
        if (strstr(errs.v[i], "storageClassName") && strstr(errs.v[i], "required")) required = true;
        if (strstr(errs.v[i], "capacity") && strstr(errs.v[i], "lots")) quantity = true;
        if (strstr(errs.v[i], "nodeTopology.matchLabels")) selector = true;
        if (strstr(errs.v[i], "csistoragecapacity ns/d: already defined")) dup = true;
    }
    assert_true(required);
    assert_true(quantity);
    assert_true(selector);
    assert_true(dup);
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void volume_attachment(void **st) {
    ks_cluster *c = load("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va1}\n"
                         "spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv1}}\n"
                         "status: {attached: true}\n"
                         "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va2}\n"
                         "spec: {nodeName: n2, source: {inlineVolumeSpec: {csi: {driver: d, volumeHandle: h}}}}\n"
                         "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachmentList\nitems:\n"
                         "- metadata: {name: va3}\n  spec: {attacher: d, nodeName: n1, source: {persistentVolumeName: ''}}\n");
    assert_int_equal(c->volume_attachments.n, 3);
    const ks_volume_attachment *a = c->volume_attachments.v[0], *b = c->volume_attachments.v[1],
                               *x = c->volume_attachments.v[2];
    assert_string_equal(ks_str(a->name), "va1");
    assert_string_equal(a->attacher, "ebs.csi.aws.com");
    assert_string_equal(ks_str(a->node_name), "n1");
    assert_true(a->has_pv);
    assert_string_equal(ks_str(a->pv_name), "pv1");
    assert_string_equal(b->attacher, "");
    assert_false(b->has_pv);
    assert_true(x->has_pv); /* set, though empty: no PV has that name */
    assert_string_equal(ks_str(x->pv_name), "");
    ks_cluster_free(c);
}

static void duplicate_volume_attachment_is_refused(void **st) {
    const char *y = "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: v}\nspec: {attacher: d}\n"
                    "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: v}\nspec: {attacher: d}\n";
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    assert_false(ks_load_buffer(c, "t.yaml", y, strlen(y), &errs));
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.v[0], "volumeattachment v: already defined"));
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void pod_volume_kinds_and_resource_claims(void **st) {
    ks_cluster *c = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"
                         "  resourceClaims: [{name: a, resourceClaimName: x}, {name: b, resourceClaimTemplateName: t}]\n"
                         "  volumes:\n"
                         "  - {name: az, azureDisk: {diskName: n, diskURI: u, kind: Managed}}\n"
                         "  - {name: af, azureFile: {secretName: s, shareName: sh}}\n"
                         "  - {name: ci, cinder: {volumeID: v1}}\n"
                         "  - {name: vs, vsphereVolume: {volumePath: /p}}\n"
                         "  - {name: px, portworxVolume: {volumeID: v2}}\n"
                         "  - {name: eph, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}\n");
    const ks_pod *p = c->pods.v[0];
    assert_int_equal(p->nresource_claims, 2);
    assert_int_equal(p->nvolumes, 6);
    assert_int_equal(p->volumes[0].kind, KS_VOL_AZURE_DISK);
    assert_string_equal(p->volumes[0].disk_id, "u");
    assert_string_equal(p->volumes[0].extra, "Managed");
    assert_int_equal(p->volumes[1].kind, KS_VOL_AZURE_FILE);
    assert_int_equal(p->volumes[2].kind, KS_VOL_CINDER);
    assert_string_equal(p->volumes[2].disk_id, "v1");
    assert_int_equal(p->volumes[3].kind, KS_VOL_VSPHERE);
    assert_int_equal(p->volumes[4].kind, KS_VOL_PORTWORX);
    assert_int_equal(p->volumes[5].kind, KS_VOL_EPHEMERAL);
    assert_string_equal(p->volumes[5].claim_name, "p-eph");
    ks_cluster_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pv_sources_and_defaults),
        cmocka_unit_test(pvc_owner_selector_and_request),
        cmocka_unit_test(csidriver_and_csinode_annotations),
        cmocka_unit_test(duplicate_csidriver_is_refused),
        cmocka_unit_test(csi_storage_capacity),
        cmocka_unit_test(csi_storage_capacity_errors),
        cmocka_unit_test(volume_attachment),
        cmocka_unit_test(duplicate_volume_attachment_is_refused),
        cmocka_unit_test(pod_volume_kinds_and_resource_claims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
