/* Dispatch of a document to the decoder of its kind; List kinds recurse. */
#include "codec/decode_internal.h"
#include "util/log.h"

#include <string.h>

static void doc_error(ks_decode_ctx *ctx, const ks_tree *t, const char *msg, const char *arg) {
    if (!ctx->errs) return;
    const char *file = ctx->file ? ctx->file : "<input>";
    if (t && t->line > 0) ks_errors_add(ctx->errs, "%s:%d: %s%s", file, t->line, msg, arg ? arg : "");
    else ks_errors_add(ctx->errs, "%s: %s%s", file, msg, arg ? arg : "");
}

/* The API group of an apiVersion ("" for the core group). */
static void api_group(const char *api_version, char *buf, size_t n) {
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    size_t len = slash ? (size_t)(slash - api_version) : 0;
    if (len >= n) len = n - 1;
    memcpy(buf, api_version ? api_version : "", len);
    buf[len] = 0;
}

static bool decode_kind(ks_cluster *c, const ks_tree *t, const char *kind, const char *api_version,
                        ks_decode_ctx *ctx, int depth);

static bool decode_list(ks_cluster *c, const ks_tree *t, const char *kind, const char *api_version,
                        ks_decode_ctx *ctx, int depth) {
    const ks_tree *items = kt_get(t, "items");
    if (!items || items->type == KT_NULL) return true;
    if (items->type != KT_SEQ) {
        doc_error(ctx, items, kind, ": items: expected list");
        return false;
    }
    /* items of a typed list (PodList) may leave out their kind */
    char item_kind[128] = "";
    size_t kl = strlen(kind);
    if (strcmp(kind, "List") != 0 && kl - 4 < sizeof(item_kind)) {
        memcpy(item_kind, kind, kl - 4);
        item_kind[kl - 4] = 0;
    }
    bool ok = true;
    for (uint32_t i = 0; i < items->n; i++) {
        const ks_tree *it = items->items[i];
        if (!it || it->type != KT_MAP) {
            doc_error(ctx, it ? it : items, kind, ": items: expected a list of objects");
            ok = false;
            continue;
        }
        const ks_tree *k = kt_get(it, "kind");
        const ks_tree *av = kt_get(it, "apiVersion");
        const char *ik = k && k->type == KT_STRING ? k->text : item_kind;
        const char *iav = av && av->type == KT_STRING ? av->text : api_version;
        if (!*ik) {
            doc_error(ctx, it, "object has no kind", NULL);
            ok = false;
            continue;
        }
        ok &= decode_kind(c, it, ik, iav, ctx, depth + 1);
    }
    return ok;
}

static bool decode_kind(ks_cluster *c, const ks_tree *t, const char *kind, const char *api_version,
                        ks_decode_ctx *ctx, int depth) {
    if (depth > 8) {
        doc_error(ctx, t, "lists nested too deeply", NULL);
        return false;
    }
    size_t kl = strlen(kind);
    if (kl >= 4 && strcmp(kind + kl - 4, "List") == 0)
        return decode_list(c, t, kind, api_version, ctx, depth);
    char group[128];
    api_group(api_version, group, sizeof(group));

#define ADD(vec, expr)                                                       \
    do {                                                                     \
        void *o_ = (expr);                                                   \
        if (!o_) return false;                                               \
        KS_VEC_PUSH(c->vec, o_);                                             \
        return true;                                                         \
    } while (0)

    if (strcmp(kind, "Pod") == 0) ADD(pods, ks_decode_pod(t, ctx));
    if (strcmp(kind, "Node") == 0) ADD(nodes, ks_decode_node(t, ctx));
    if (strcmp(kind, "PriorityClass") == 0) ADD(priority_classes, ks_decode_priority_class(t, ctx));
    if (strcmp(kind, "Namespace") == 0) ADD(namespaces, ks_decode_namespace(t, ctx));
    if (strcmp(kind, "PersistentVolume") == 0) ADD(pvs, ks_decode_pv(t, ctx));
    if (strcmp(kind, "PersistentVolumeClaim") == 0) ADD(pvcs, ks_decode_pvc(t, ctx));
    if (strcmp(kind, "StorageClass") == 0) ADD(storage_classes, ks_decode_storage_class(t, ctx));
    if (strcmp(kind, "CSINode") == 0) ADD(csinodes, ks_decode_csinode(t, ctx));
    if (strcmp(kind, "CSIDriver") == 0) ADD(csi_drivers, ks_decode_csi_driver(t, ctx));
    if (strcmp(kind, "CSIStorageCapacity") == 0) ADD(csi_capacities, ks_decode_csi_capacity(t, ctx));
    if (strcmp(kind, "VolumeAttachment") == 0) ADD(volume_attachments, ks_decode_volume_attachment(t, ctx));
    if (strcmp(kind, "PodDisruptionBudget") == 0) ADD(pdbs, ks_decode_pdb(t, ctx));
    if (strcmp(kind, "PodGroup") == 0 && strcmp(group, "scheduling.x-k8s.io") == 0)
        ADD(pod_groups, ks_decode_pod_group(t, ctx));
    if (strcmp(group, "resource.k8s.io") == 0) {
        if (strcmp(kind, "ResourceClaim") == 0) ADD(resource_claims, ks_decode_resource_claim(t, ctx));
        if (strcmp(kind, "ResourceClaimTemplate") == 0) ADD(claim_templates, ks_decode_claim_template(t, ctx));
        if (strcmp(kind, "ResourceSlice") == 0) ADD(resource_slices, ks_decode_resource_slice(t, ctx));
        if (strcmp(kind, "DeviceClass") == 0) ADD(device_classes, ks_decode_device_class(t, ctx));
        if (strcmp(kind, "DeviceTaintRule") == 0) ADD(device_taint_rules, ks_decode_device_taint_rule(t, ctx));
    }
    if (strcmp(kind, "Service") == 0) ADD(workloads, ks_decode_workload(t, KS_WORKLOAD_SERVICE, ctx));
    if (strcmp(kind, "ReplicaSet") == 0) ADD(workloads, ks_decode_workload(t, KS_WORKLOAD_REPLICASET, ctx));
    if (strcmp(kind, "StatefulSet") == 0) ADD(workloads, ks_decode_workload(t, KS_WORKLOAD_STATEFULSET, ctx));
    if (strcmp(kind, "ReplicationController") == 0)
        ADD(workloads, ks_decode_workload(t, KS_WORKLOAD_RC, ctx));
#undef ADD

    if (KS_V(2)) {
        const ks_tree *md = kt_get(t, "metadata");
        const ks_tree *name = kt_get(md, "name");
        ks_infof(2, "%s:%d: skipping %s/%s %s: not a kind the scheduler reads",
                 ctx->file ? ctx->file : "<input>", t->line, api_version ? api_version : "", kind,
                 name && name->text ? name->text : "");
    }
    return true;
}

bool ks_decode_document(ks_cluster *c, const ks_tree *t, ks_decode_ctx *ctx) {
    if (!t || t->type != KT_MAP) {
        doc_error(ctx, t, "expected an object, got ", t ? kt_type_name(t->type) : "nothing");
        return false;
    }
    const ks_tree *k = kt_get(t, "kind");
    if (!k || k->type != KT_STRING || !*k->text) {
        doc_error(ctx, k ? k : t, "object has no kind", NULL);
        return false;
    }
    const ks_tree *av = kt_get(t, "apiVersion");
    return decode_kind(c, t, k->text, av && av->type == KT_STRING ? av->text : "", ctx, 0);
}
