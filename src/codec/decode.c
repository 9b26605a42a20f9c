/* Dispatch of a document to the decoder of its kind; List kinds recurse. */
#include "codec/decode_internal.h"
#include "util/log.h"

#include <stdio.h>
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

/* The workload kinds and the one version of each that ksched reads. */
static const struct {
    const char *kind, *api_version;
} workload_versions[KS_WORKLOAD_NKINDS] = {
    [KS_WORKLOAD_SERVICE] = {"Service", "v1"},
    [KS_WORKLOAD_REPLICASET] = {"ReplicaSet", "apps/v1"},
    [KS_WORKLOAD_STATEFULSET] = {"StatefulSet", "apps/v1"},
    [KS_WORKLOAD_RC] = {"ReplicationController", "v1"},
    [KS_WORKLOAD_DEPLOYMENT] = {"Deployment", "apps/v1"},
    [KS_WORKLOAD_DAEMONSET] = {"DaemonSet", "apps/v1"},
    [KS_WORKLOAD_JOB] = {"Job", "batch/v1"},
    [KS_WORKLOAD_CRONJOB] = {"CronJob", "batch/v1"},
};

static int workload_kind(const char *kind) {
    for (int i = 0; i < KS_WORKLOAD_NKINDS; i++)
        if (strcmp(workload_versions[i].kind, kind) == 0) return i;
    return -1;
}

static const char *object_name(const ks_tree *t) {
    const ks_tree *name = kt_get(kt_get(t, "metadata"), "name");
    return name && name->type == KT_STRING ? name->text : "";
}

/* A kind ksched reads, in an API version it does not (extensions/v1beta1
 * Deployments, batch/v1beta1 CronJobs): the pods it would make are not
 * known, so simulating without it would answer the wrong question. */
static void version_error(ks_decode_ctx *ctx, const ks_tree *t, const char *kind, const char *api_version,
                          const char *want) {
    if (!ctx->errs) return;
    const ks_tree *av = kt_get(t, "apiVersion");
    int line = av && av->line ? av->line : t->line;
    const ks_tree *ns = kt_get(kt_get(t, "metadata"), "namespace");
    const char *nss = ns && ns->type == KT_STRING ? ns->text : NULL;
    char where[64] = "";
    if (line > 0) snprintf(where, sizeof(where), ":%d", line);
    ks_errors_add(ctx->errs, "%s%s: %s %s%s%s: apiVersion: %s is not read by ksched (it reads %s %s)",
                  ctx->file ? ctx->file : "<input>", where, kind, nss ? nss : "", nss ? "/" : "",
                  object_name(t), api_version, kind, want);
}

/* An object of a kind the simulator does not use: counted for the
 * "skipped:" line; another group's kind of a used kind's name is named
 * with its group (Deployment.example.com). */
static void skipped(ks_cluster *c, const ks_tree *t, const char *kind, const char *group, bool collides,
                    ks_decode_ctx *ctx) {
    char buf[300];
    if (collides && *group) snprintf(buf, sizeof(buf), "%s.%s", kind, group);
    else snprintf(buf, sizeof(buf), "%s", kind);
    ks_cluster_count_skipped(c, ks_intern(buf), 1);
    ks_infof(2, "%s:%d: skipping %s %s: not a kind the scheduler reads", ctx->file ? ctx->file : "<input>",
             t->line, buf, object_name(t));
}

/* helm.sh/hook: test: run by `helm test` only, never by an install. */
static bool helm_test_hook(const ks_tree *t) {
    const ks_tree *h = kt_get(kt_get(kt_get(t, "metadata"), "annotations"), "helm.sh/hook");
    if (!h || h->type != KT_STRING) return false;
    for (const char *p = h->text; (p = strstr(p, "test")); p += 4) {
        bool start = p == h->text || p[-1] == ',' || p[-1] == ' ';
        bool end = p[4] == 0 || p[4] == ',' || p[4] == ' ' || strncmp(p + 4, "-success", 8) == 0 ||
                   strncmp(p + 4, "-failure", 8) == 0;
        if (start && end) return true;
    }
    return false;
}

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
    if (helm_test_hook(t)) {
        char buf[300];
        snprintf(buf, sizeof(buf), "%s (helm test hook)", kind);
        ks_cluster_count_skipped(c, ks_intern(buf), 1);
        return true;
    }

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
    int wk = workload_kind(kind);
    if (wk >= 0) {
        const char *want = workload_versions[wk].api_version;
        char want_group[128];
        api_group(want, want_group, sizeof(want_group));
        bool same_group = strcmp(group, want_group) == 0 ||
                          (strcmp(want_group, "apps") == 0 && strcmp(group, "extensions") == 0);
        if (same_group || !*api_version) {
            if (*api_version && strcmp(api_version, want) != 0) {
                version_error(ctx, t, kind, api_version, want);
                return false;
            }
            ADD(workloads, ks_decode_workload(t, (ks_workload_kind)wk, ctx));
        }
    }
#undef ADD

    skipped(c, t, kind, group, wk >= 0, ctx);
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
