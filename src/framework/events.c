#include "framework/events.h"

#include "api/dra.h"
#include "api/node.h"
#include "api/pod.h"
#include "util/intern.h"

#include <stdio.h>
#include <string.h>

/* The action bits as upstream numbers them (Add 1, Delete 2, then the
 * finer updates from UpdateNodeAllocatable 4 to
 * UpdatePodGeneratedResourceClaim 2048; Update is their union): the match
 * compares them numerically as upstream does. */
static uint32_t upstream_actions(uint32_t a) {
    uint32_t u = (a & (KS_ACT_ADD | KS_ACT_DELETE)) | ((a >> 3) << 2);
    if (a & KS_ACT_UPDATE) u |= 4092;
    return u;
}

bool ks_event_match(ks_cluster_event reg, ks_cluster_event in) {
    if (ks_event_is_wildcard(reg)) return true;
    uint32_t r = reg.resource;
    if (r & KS_EV_POD) r |= KS_EV_ASSIGNED_POD | KS_EV_UNSCHEDULED_POD;
    if (!(r & in.resource)) return false;
    /* upstream MatchClusterEvents: the actions overlap and the incoming
     * one is no wider than the registered one (a generic Update does not
     * match a registration of one finer update kind) */
    uint32_t ra = upstream_actions(reg.actions), ia = upstream_actions(in.actions);
    return (ra & ia) != 0 && ia <= ra;
}

const char *ks_action_name(uint32_t a) {
    switch (a) {
    case KS_ACT_ADD: return "Add";
    case KS_ACT_DELETE: return "Delete";
    case KS_ACT_UPDATE_NODE_ALLOCATABLE: return "UpdateNodeAllocatable";
    case KS_ACT_UPDATE_NODE_LABEL: return "UpdateNodeLabel";
    case KS_ACT_UPDATE_NODE_TAINT: return "UpdateNodeTaint";
    case KS_ACT_UPDATE_NODE_CONDITION: return "UpdateNodeCondition";
    case KS_ACT_UPDATE_NODE_ANNOTATION: return "UpdateNodeAnnotation";
    case KS_ACT_UPDATE_POD_LABEL: return "UpdatePodLabel";
    case KS_ACT_UPDATE_POD_SCALE_DOWN: return "UpdatePodScaleDown";
    case KS_ACT_UPDATE_POD_TOLERATION: return "UpdatePodToleration";
    case KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED: return "UpdatePodSchedulingGatesEliminated";
    case KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM: return "UpdatePodGeneratedResourceClaim";
    case KS_ACT_UPDATE: return "Update";
    }
    if ((a & KS_ACT_ALL) == KS_ACT_ALL) return "All";
    return "";
}

static const struct {
    uint32_t bit;
    const char *name;
} resource_names[] = {
    {KS_EV_ASSIGNED_POD, "AssignedPod"},
    {KS_EV_UNSCHEDULED_POD, "UnschedulablePod"},
    {KS_EV_POD, "Pod"},
    {KS_EV_NODE, "Node"},
    {KS_EV_PVC, "PersistentVolumeClaim"},
    {KS_EV_PV, "PersistentVolume"},
    {KS_EV_STORAGE_CLASS, "storage.k8s.io/StorageClass"},
    {KS_EV_CSINODE, "storage.k8s.io/CSINode"},
    {KS_EV_CSI_STORAGE_CAPACITY, "storage.k8s.io/CSIStorageCapacity"},
    {KS_EV_VOLUME_ATTACHMENT, "storage.k8s.io/VolumeAttachment"},
    {KS_EV_CSI_DRIVER, "storage.k8s.io/CSIDriver"},
    {KS_EV_POD_GROUP, "PodGroup"},
    {KS_EV_RESOURCE_CLAIM, "resource.k8s.io/ResourceClaim"},
    {KS_EV_RESOURCE_SLICE, "resource.k8s.io/ResourceSlice"},
    {KS_EV_DEVICE_CLASS, "resource.k8s.io/DeviceClass"},
};

const char *ks_event_label(ks_cluster_event ev, char *buf, size_t n) {
    if (ks_event_is_wildcard(ev)) return "UnschedulableTimeout";
    const char *r = "*";
    for (size_t i = 0; i < sizeof(resource_names) / sizeof(resource_names[0]); i++)
        if (ev.resource & resource_names[i].bit) {
            r = resource_names[i].name;
            break;
        }
    snprintf(buf, n, "%s%s", r, ks_action_name(ev.actions));
    return buf;
}

/* ---- pod and node updates ------------------------------------------------ */

static bool labels_equal(const ks_labels *a, const ks_labels *b) {
    if (a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->kv[i].key != b->kv[i].key || a->kv[i].value != b->kv[i].value) return false;
    return true;
}

/* A request that went down, or a resource requested before and not now
 * (upstream compares the pods' request maps resource by resource). */
static bool scaled_down(const ks_resource *o, const ks_resource *n) {
    if (n->milli_cpu < o->milli_cpu || n->memory < o->memory || n->ephemeral_storage < o->ephemeral_storage)
        return true;
    for (uint32_t i = 0; i < o->nscalar; i++)
        if (ks_resource_get(n, o->scalars[i].name) < o->scalars[i].val) return true;
    return false;
}

static bool claim_statuses_equal(const ks_pod *a, const ks_pod *b) {
    if (a->nclaim_statuses != b->nclaim_statuses) return false;
    for (uint32_t i = 0; i < a->nclaim_statuses; i++) {
        const ks_pod_claim_status *x = &a->claim_statuses[i], *y = &b->claim_statuses[i];
        if (strcmp(x->name ? x->name : "", y->name ? y->name : "") != 0) return false;
        /* an unset claim name differs from an empty one: both unset or both equal */
        if ((x->claim_name == NULL) != (y->claim_name == NULL)) return false;
        if (x->claim_name && strcmp(x->claim_name, y->claim_name) != 0) return false;
    }
    return true;
}

size_t ks_pod_change_events(const ks_pod *o, const ks_pod *n, ks_cluster_event out[5]) {
    uint32_t r = n->node_name ? KS_EV_ASSIGNED_POD : KS_EV_UNSCHEDULED_POD;
    size_t k = 0;
    /* upstream's order: labels, scale down, gates eliminated, tolerations,
     * generated claims */
    if (!labels_equal(&o->labels, &n->labels)) out[k++] = (ks_cluster_event){r, KS_ACT_UPDATE_POD_LABEL};
    if (scaled_down(&o->requests, &n->requests)) out[k++] = (ks_cluster_event){r, KS_ACT_UPDATE_POD_SCALE_DOWN};
    if (n->ngates == 0 && o->ngates != 0)
        out[k++] = (ks_cluster_event){r, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED};
    if (n->ntolerations != o->ntolerations) out[k++] = (ks_cluster_event){r, KS_ACT_UPDATE_POD_TOLERATION};
    if (!claim_statuses_equal(o, n)) out[k++] = (ks_cluster_event){r, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM};
    if (k == 0) out[k++] = (ks_cluster_event){r, KS_ACT_UPDATE};
    return k;
}

static bool taints_equal(const ks_node *a, const ks_node *b) {
    if (a->ntaints != b->ntaints) return false;
    for (uint32_t i = 0; i < a->ntaints; i++)
        if (a->taints[i].key != b->taints[i].key || a->taints[i].value != b->taints[i].value ||
            a->taints[i].effect != b->taints[i].effect)
            return false;
    return true;
}

size_t ks_node_change_events(const ks_node *o, const ks_node *n, ks_cluster_event out[5]) {
    size_t k = 0;
    /* upstream's order: unschedulable cleared, allocatable, labels, taints,
     * (conditions), annotations */
    if (o->unschedulable != n->unschedulable && !n->unschedulable)
        out[k++] = (ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_TAINT};
    if (!ks_resource_equal(&o->allocatable, &n->allocatable))
        out[k++] = (ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_ALLOCATABLE};
    if (!labels_equal(&o->labels, &n->labels)) out[k++] = (ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_LABEL};
    if (!taints_equal(o, n)) out[k++] = (ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_TAINT};
    if (!ks_annotations_equal(&o->annotations, &n->annotations))
        out[k++] = (ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_ANNOTATION};
    return k;
}

/* ---- objects ---------------------------------------------------------------- */

uint32_t ks_kind_event_resource(ks_kind k) {
    switch (k) {
    case KS_KIND_NODE: return KS_EV_NODE;
    case KS_KIND_POD: return KS_EV_POD;
    case KS_KIND_PVC: return KS_EV_PVC;
    case KS_KIND_PV: return KS_EV_PV;
    case KS_KIND_STORAGE_CLASS: return KS_EV_STORAGE_CLASS;
    case KS_KIND_CSINODE: return KS_EV_CSINODE;
    case KS_KIND_CSI_CAPACITY: return KS_EV_CSI_STORAGE_CAPACITY;
    case KS_KIND_VOLUME_ATTACHMENT: return KS_EV_VOLUME_ATTACHMENT;
    case KS_KIND_CSI_DRIVER: return KS_EV_CSI_DRIVER;
    case KS_KIND_POD_GROUP: return KS_EV_POD_GROUP;
    case KS_KIND_RESOURCE_CLAIM: return KS_EV_RESOURCE_CLAIM;
    case KS_KIND_RESOURCE_SLICE: return KS_EV_RESOURCE_SLICE;
    case KS_KIND_DEVICE_CLASS: return KS_EV_DEVICE_CLASS;
    /* a rule changes the devices' taints: upstream's slice tracker
     * reports it as an update of the slices */
    case KS_KIND_DEVICE_TAINT_RULE: return KS_EV_RESOURCE_SLICE;
    default: return 0;
    }
}

#define EACH_META_KIND(X)                                                                     \
    X(KS_KIND_PVC, ks_pvc, 1)                                                                 \
    X(KS_KIND_PV, ks_pv, 0)                                                                   \
    X(KS_KIND_STORAGE_CLASS, ks_storage_class, 0)                                             \
    X(KS_KIND_CSINODE, ks_csinode, 0)                                                         \
    X(KS_KIND_CSI_CAPACITY, ks_csi_capacity, 1)                                               \
    X(KS_KIND_VOLUME_ATTACHMENT, ks_volume_attachment, 0)                                     \
    X(KS_KIND_CSI_DRIVER, ks_csi_driver, 0)                                                   \
    X(KS_KIND_POD_GROUP, ks_pod_group, 1)                                                     \
    X(KS_KIND_RESOURCE_CLAIM, ks_resource_claim, 1)                                           \
    X(KS_KIND_RESOURCE_SLICE, ks_resource_slice, 0)                                           \
    X(KS_KIND_DEVICE_CLASS, ks_device_class, 0)                                               \
    X(KS_KIND_DEVICE_TAINT_RULE, ks_device_taint_rule, 0)

void ks_kind_object_ref(ks_kind k, const void *obj) {
    if (!obj) return;
    void *o = (void *)obj; /* references are counted on immutable objects */
    switch (k) {
    case KS_KIND_POD: ks_pod_ref(o); return;
    case KS_KIND_NODE: ks_node_ref(o); return;
#define REF(K, T, NS) \
    case K: (void)KS_OBJECT_REF((T *)o); return;
        EACH_META_KIND(REF)
#undef REF
    default: return;
    }
}

void ks_kind_object_unref(ks_kind k, const void *obj) {
    if (!obj) return;
    void *o = (void *)obj;
    switch (k) {
    case KS_KIND_POD: ks_pod_unref(o); return;
    case KS_KIND_NODE: ks_node_unref(o); return;
#define UNREF(K, T, NS)    \
    case K: {              \
        T *x = o;          \
        KS_OBJECT_UNREF(x); \
        return;            \
    }
        EACH_META_KIND(UNREF)
#undef UNREF
    default: return;
    }
}

const ks_pod *ks_event_object_pod(const ks_event_object *o) {
    return o && o->kind == KS_KIND_POD ? o->obj : NULL;
}

const ks_node *ks_event_object_node(const ks_event_object *o) {
    return o && o->kind == KS_KIND_NODE ? o->obj : NULL;
}

const char *ks_event_object_kind(const ks_event_object *o) {
    if (!o) return "";
    switch (o->kind) {
    case KS_KIND_POD: return "Pod";
    case KS_KIND_NODE: return "Node";
    case KS_KIND_PVC: return "PersistentVolumeClaim";
    case KS_KIND_PV: return "PersistentVolume";
    case KS_KIND_STORAGE_CLASS: return "StorageClass";
    case KS_KIND_CSINODE: return "CSINode";
    case KS_KIND_CSI_CAPACITY: return "CSIStorageCapacity";
    case KS_KIND_VOLUME_ATTACHMENT: return "VolumeAttachment";
    case KS_KIND_CSI_DRIVER: return "CSIDriver";
    case KS_KIND_POD_GROUP: return "PodGroup";
    case KS_KIND_RESOURCE_CLAIM: return "ResourceClaim";
    case KS_KIND_RESOURCE_SLICE: return "ResourceSlice";
    case KS_KIND_DEVICE_CLASS: return "DeviceClass";
    case KS_KIND_DEVICE_TAINT_RULE: return "DeviceTaintRule";
    default: return "";
    }
}

const ks_args *ks_event_object_tree(const ks_event_object *o) {
    if (!o) return NULL;
    switch (o->kind) {
    case KS_KIND_POD: return (const ks_args *)((const ks_pod *)o->obj)->tree;
    case KS_KIND_NODE: return (const ks_args *)((const ks_node *)o->obj)->tree;
#define TREE(K, T, NS) \
    case K: return (const ks_args *)((const T *)o->obj)->tree;
        EACH_META_KIND(TREE)
#undef TREE
    default: return NULL;
    }
}

const char *ks_event_object_namespace(const ks_event_object *o) {
    if (!o) return "";
    switch (o->kind) {
    case KS_KIND_POD: return ks_str(((const ks_pod *)o->obj)->ns);
    case KS_KIND_PVC: return ks_str(((const ks_pvc *)o->obj)->ns);
    case KS_KIND_POD_GROUP: return ks_str(((const ks_pod_group *)o->obj)->ns);
    case KS_KIND_RESOURCE_CLAIM: return ks_str(((const ks_resource_claim *)o->obj)->ns);
    case KS_KIND_CSI_CAPACITY: return ks_str(((const ks_csi_capacity *)o->obj)->ns);
    default: return "";
    }
}

const char *ks_event_object_name(const ks_event_object *o) {
    if (!o) return "";
    switch (o->kind) {
    case KS_KIND_POD: return ks_str(((const ks_pod *)o->obj)->name);
    case KS_KIND_NODE: return ks_str(((const ks_node *)o->obj)->name);
#define NAME(K, T, NS) \
    case K: return ks_str(((const T *)o->obj)->name);
        EACH_META_KIND(NAME)
#undef NAME
    default: return "";
    }
}
