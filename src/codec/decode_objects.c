/* The kinds other than Pod and Node: PriorityClass, Namespace, storage
 * (PV, PVC, StorageClass, CSINode, CSIDriver, CSIStorageCapacity,
 * VolumeAttachment),
 * PodDisruptionBudget, PodGroup and the workloads whose selectors default
 * spreading reads. */
#include "api/quantity.h"
#include "codec/decode_internal.h"

#include <stdlib.h>
#include <string.h>

ks_priority_class *ks_decode_priority_class(const ks_tree *t, ks_decode_ctx *ctx) {
    static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
    DEC_NEW_OBJECT(ks_priority_class, o, "priorityclass", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        const ks_tree *v = kt_get(t, "value");
        if (d_absent(v)) derr(d, t, KP(NULL, "value"), "required");
        else d_int32(d, v, KP(NULL, "value"), &o->value);
        d_bool(d, kt_get(t, "globalDefault"), KP(NULL, "globalDefault"), &o->global_default);
        int p = d_enum(d, kt_get(t, "preemptionPolicy"), KP(NULL, "preemptionPolicy"), policies);
        o->preemption_policy = p == 1 ? KS_PREEMPT_NEVER : KS_PREEMPT_LOWER_PRIORITY;
    }
    DEC_FINISH(o);
}

ks_namespace *ks_decode_namespace(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_namespace, o, "namespace", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        /* the API server always labels a namespace with its name */
        ks_id key = ks_intern("kubernetes.io/metadata.name");
        ks_id val;
        if (!ks_labels_get(&m.labels, key, &val) || val != m.name) {
            ks_label *kv = ks_arena_calloc(d->a, m.labels.n + 1, sizeof(*kv));
            uint32_t n = 0;
            for (uint32_t i = 0; i < m.labels.n; i++)
                if (m.labels.kv[i].key != key) kv[n++] = m.labels.kv[i];
            kv[n++] = (ks_label){key, m.name};
            m.labels.kv = kv;
            m.labels.n = n;
            ks_labels_sort(&m.labels);
        }
        o->labels = m.labels;
    }
    DEC_FINISH(o);
}

static uint32_t d_access_modes(dec *d, const ks_tree *v, const kpath *p) {
    static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod", NULL};
    uint32_t bits = 0;
    if (!d_seq(d, v, p)) return 0;
    for (uint32_t i = 0; i < v->n; i++) {
        int m = d_enum(d, v->items[i], KI(p, i), modes);
        if (m >= 0) bits |= 1u << m;
    }
    return bits;
}

/* The storage request or capacity, in bytes. */
static int64_t d_storage(dec *d, const ks_tree *list, const kpath *p) {
    ks_qlist q;
    if (!d_qlist(d, list, p, &q)) return 0;
    const ks_qentry *e = ks_qlist_find(&q, ks_intern("storage"));
    int64_t v = 0;
    if (e) ks_nano_to_value(e->nano, &v);
    return v;
}

/* A string field of a map, kept with the object; NULL when absent. */
static const char *str_field(dec *d, const ks_tree *m, const char *key, const kpath *p) {
    const char *s = NULL;
    d_str(d, kt_get(m, key), KP(p, key), &s);
    return dkeep(d, s);
}

/* The in-tree volume sources csi-translation-lib knows, with the field
 * that identifies the disk; azureDisk also keeps its kind (the API server
 * defaults it to Shared). */
static const struct {
    const char *field, *id;
    ks_volume_kind kind;
} intree_sources[] = {
    {"gcePersistentDisk", "pdName", KS_VOL_GCE_PD},
    {"awsElasticBlockStore", "volumeID", KS_VOL_AWS_EBS},
    {"azureDisk", "diskURI", KS_VOL_AZURE_DISK},
    {"azureFile", "shareName", KS_VOL_AZURE_FILE},
    {"cinder", "volumeID", KS_VOL_CINDER},
    {"vsphereVolume", "volumePath", KS_VOL_VSPHERE},
    {"portworxVolume", "volumeID", KS_VOL_PORTWORX},
};

static void d_pv_source(dec *d, const ks_tree *spec, const kpath *sp, ks_pv *o) {
    const ks_tree *csi = kt_get(spec, "csi");
    const kpath *csp = KP(sp, "csi");
    if (d_map(d, csi, csp)) {
        o->source = KS_VOL_CSI;
        d_str(d, kt_get(csi, "driver"), KP(csp, "driver"), &o->csi_driver);
        d_str(d, kt_get(csi, "volumeHandle"), KP(csp, "volumeHandle"), &o->volume_handle);
        o->csi_driver = dkeep(d, o->csi_driver);
        o->volume_handle = dkeep(d, o->volume_handle);
        return;
    }
    for (size_t i = 0; i < sizeof(intree_sources) / sizeof(intree_sources[0]); i++) {
        const ks_tree *src = kt_get(spec, intree_sources[i].field);
        const kpath *p = KP(sp, intree_sources[i].field);
        if (!d_map(d, src, p)) continue;
        o->source = intree_sources[i].kind;
        o->source_id = str_field(d, src, intree_sources[i].id, p);
        if (!o->source_id) o->source_id = "";
        if (o->source == KS_VOL_AZURE_DISK) {
            o->source_extra = str_field(d, src, "kind", p);
            if (!o->source_extra) o->source_extra = "Shared";
        }
        return;
    }
}

/* An id field that the API server defaults when unset. */
static ks_id d_id_default(dec *d, const ks_tree *m, const char *key, const kpath *p, const char *def) {
    const ks_tree *v = kt_get(m, key);
    return d_absent(v) ? ks_intern(def) : d_id(d, v, KP(p, key));
}

ks_pv *ks_decode_pv(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_pv, o, "persistentvolume", 512);
    o->volume_mode = ks_intern("Filesystem");
    o->phase = ks_intern("Pending");
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        o->labels = m.labels;
        o->annotations = m.annotations;
        o->deleting = m.has_deletion;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (d_map(d, spec, sp)) {
            o->capacity = d_storage(d, kt_get(spec, "capacity"), KP(sp, "capacity"));
            o->access_modes = d_access_modes(d, kt_get(spec, "accessModes"), KP(sp, "accessModes"));
            o->storage_class = d_id(d, kt_get(spec, "storageClassName"), KP(sp, "storageClassName"));
            const ks_tree *cr = kt_get(spec, "claimRef");
            const kpath *cp = KP(sp, "claimRef");
            if (d_map(d, cr, cp)) {
                o->has_claim_ref = true;
                o->claim_ns = d_id(d, kt_get(cr, "namespace"), KP(cp, "namespace"));
                o->claim_name = d_id(d, kt_get(cr, "name"), KP(cp, "name"));
                o->claim_uid = str_field(d, cr, "uid", cp);
            }
            o->volume_mode = d_id_default(d, spec, "volumeMode", sp, "Filesystem");
            o->vac = d_id(d, kt_get(spec, "volumeAttributesClassName"), KP(sp, "volumeAttributesClassName"));
            const ks_tree *na = kt_get(spec, "nodeAffinity");
            const kpath *np = KP(sp, "nodeAffinity");
            if (d_map(d, na, np)) {
                const ks_tree *req = kt_get(na, "required");
                if (!d_absent(req)) {
                    o->has_node_affinity = true;
                    d_node_selector(d, req, KP(np, "required"), &o->node_affinity);
                }
            }
            d_pv_source(d, spec, sp, o);
        }
        const ks_tree *st = kt_get(t, "status");
        if (d_map(d, st, KP(NULL, "status")))
            o->phase = d_id_default(d, st, "phase", KP(NULL, "status"), "Pending");
    }
    DEC_FINISH(o);
}

ks_pvc *ks_decode_pvc(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_pvc, o, "persistentvolumeclaim", 512);
    o->volume_mode = ks_intern("Filesystem");
    o->phase = ks_intern("Pending");
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        o->uid = m.uid;
        o->annotations = m.annotations;
        o->deleting = m.has_deletion;
        /* the controller owner (ephemeral volumes: the pod) */
        const ks_tree *owners = kt_get(kt_get(t, "metadata"), "ownerReferences");
        const kpath *op = KP(KP(NULL, "metadata"), "ownerReferences");
        if (d_seq(d, owners, op))
            for (uint32_t i = 0; i < owners->n; i++) {
                const ks_tree *or = owners->items[i];
                bool ctl = false;
                if (!d_map(d, or, KI(op, i))) continue;
                d_bool(d, kt_get(or, "controller"), KP(KI(op, i), "controller"), &ctl);
                if (ctl && !o->controller_uid) o->controller_uid = str_field(d, or, "uid", KI(op, i));
            }
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (d_map(d, spec, sp)) {
            const ks_tree *sc = kt_get(spec, "storageClassName");
            if (!d_absent(sc)) {
                o->has_storage_class = true;
                o->storage_class = d_id(d, sc, KP(sp, "storageClassName"));
            }
            o->access_modes = d_access_modes(d, kt_get(spec, "accessModes"), KP(sp, "accessModes"));
            const ks_tree *res = kt_get(spec, "resources");
            if (d_map(d, res, KP(sp, "resources"))) {
                const ks_tree *req = kt_get(res, "requests");
                o->has_request = !d_absent(kt_get(req, "storage"));
                o->request = d_storage(d, req, KP(KP(sp, "resources"), "requests"));
            }
            o->volume_name = d_id(d, kt_get(spec, "volumeName"), KP(sp, "volumeName"));
            o->volume_mode = d_id_default(d, spec, "volumeMode", sp, "Filesystem");
            o->vac = d_id(d, kt_get(spec, "volumeAttributesClassName"), KP(sp, "volumeAttributesClassName"));
            const ks_tree *sel = kt_get(spec, "selector");
            if (!d_absent(sel)) {
                o->has_selector = true;
                d_label_selector(d, sel, KP(sp, "selector"), &o->selector);
            }
        }
        /* the beta annotation names the class when the field is unset */
        ks_id beta;
        if (!o->has_storage_class &&
            ks_labels_get(&m.annotations, ks_intern("volume.beta.kubernetes.io/storage-class"), &beta)) {
            o->has_storage_class = true;
            o->storage_class = beta;
        }
        const ks_tree *st = kt_get(t, "status");
        if (d_map(d, st, KP(NULL, "status")))
            o->phase = d_id_default(d, st, "phase", KP(NULL, "status"), "Pending");
    }
    DEC_FINISH(o);
}

ks_storage_class *ks_decode_storage_class(const ks_tree *t, ks_decode_ctx *ctx) {
    static const char *const modes[] = {"Immediate", "WaitForFirstConsumer", NULL};
    DEC_NEW_OBJECT(ks_storage_class, o, "storageclass", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        d_str(d, kt_get(t, "provisioner"), KP(NULL, "provisioner"), &o->provisioner);
        o->provisioner = dkeep(d, o->provisioner);
        int bm = d_enum(d, kt_get(t, "volumeBindingMode"), KP(NULL, "volumeBindingMode"), modes);
        o->binding_mode = bm == 1 ? KS_BIND_WAIT_FOR_FIRST_CONSUMER : KS_BIND_IMMEDIATE;
        /* allowedTopologies: [{matchLabelExpressions: [{key, values}]}],
         * each term a node selector term of In requirements */
        const ks_tree *at = kt_get(t, "allowedTopologies");
        const kpath *ap = KP(NULL, "allowedTopologies");
        if (d_seq(d, at, ap) && at->n) {
            o->allowed_topologies = ks_arena_calloc(d->a, at->n, sizeof(*o->allowed_topologies));
            for (uint32_t i = 0; i < at->n; i++) {
                const ks_tree *term = at->items[i];
                const kpath *tp = KI(ap, i);
                if (!d_map(d, term, tp)) continue;
                ks_node_selector_term *nt = &o->allowed_topologies[o->nallowed_topologies++];
                const ks_tree *ex = kt_get(term, "matchLabelExpressions");
                const kpath *ep = KP(tp, "matchLabelExpressions");
                if (!d_seq(d, ex, ep) || !ex->n) continue;
                nt->exprs = ks_arena_calloc(d->a, ex->n, sizeof(*nt->exprs));
                for (uint32_t j = 0; j < ex->n; j++) {
                    const ks_tree *r = ex->items[j];
                    const kpath *rp = KI(ep, j);
                    if (!d_map(d, r, rp)) continue;
                    ks_requirement *req = &nt->exprs[nt->nexpr++];
                    req->key = d_id(d, kt_get(r, "key"), KP(rp, "key"));
                    req->op = KS_OP_IN;
                    d_ids(d, kt_get(r, "values"), KP(rp, "values"), &req->nvalues, &req->values);
                }
            }
        }
        ks_id v;
        o->is_default =
            (ks_labels_get(&m.annotations, ks_intern("storageclass.kubernetes.io/is-default-class"), &v) &&
             strcmp(ks_str(v), "true") == 0) ||
            (ks_labels_get(&m.annotations, ks_intern("storageclass.beta.kubernetes.io/is-default-class"), &v) &&
             strcmp(ks_str(v), "true") == 0);
    }
    DEC_FINISH(o);
}

ks_csinode *ks_decode_csinode(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_csinode, o, "csinode", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        o->annotations = m.annotations;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        const ks_tree *drv = d_map(d, spec, sp) ? kt_get(spec, "drivers") : NULL;
        const kpath *dp = KP(sp, "drivers");
        if (d_seq(d, drv, dp) && drv->n) {
            o->drivers = ks_arena_calloc(d->a, drv->n, sizeof(*o->drivers));
            for (uint32_t i = 0; i < drv->n; i++) {
                const ks_tree *x = drv->items[i];
                const kpath *ip = KI(dp, i);
                if (!d_map(d, x, ip)) continue;
                ks_csi_driver_info *di = &o->drivers[o->ndrivers++];
                d_str(d, kt_get(x, "name"), KP(ip, "name"), &di->name);
                di->name = dkeep(d, di->name ? di->name : "");
                d_ids(d, kt_get(x, "topologyKeys"), KP(ip, "topologyKeys"), &di->ntopology_keys,
                      &di->topology_keys);
                const ks_tree *al = kt_get(x, "allocatable");
                if (d_map(d, al, KP(ip, "allocatable")))
                    di->has_allocatable = d_int32(d, kt_get(al, "count"),
                                                  KP(KP(ip, "allocatable"), "count"), &di->allocatable_count);
            }
        }
    }
    DEC_FINISH(o);
}

ks_csi_driver *ks_decode_csi_driver(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_csi_driver, o, "csidriver", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (d_map(d, spec, sp))
            d_bool(d, kt_get(spec, "storageCapacity"), KP(sp, "storageCapacity"), &o->storage_capacity);
    }
    DEC_FINISH(o);
}

/* An optional Quantity field in bytes; false when absent (null is unset,
 * as a nil *Quantity). */
static bool d_opt_bytes(dec *d, const ks_tree *v, const kpath *p, int64_t *out) {
    *out = 0;
    if (d_absent(v)) return false;
    __int128 nano;
    if (!d_quantity(d, v, p, &nano)) return false;
    ks_nano_to_value(nano, out);
    return true;
}

/* CSIStorageCapacity's fields sit at the top level, beside metadata. */
ks_csi_capacity *ks_decode_csi_capacity(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_csi_capacity, o, "csistoragecapacity", 512);
    o->node_topology.nothing = true;
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        const ks_tree *sc = kt_get(t, "storageClassName");
        if (d_absent(sc)) derr(d, t, KP(NULL, "storageClassName"), "required");
        else o->storage_class = d_id(d, sc, KP(NULL, "storageClassName"));
        d_label_selector(d, kt_get(t, "nodeTopology"), KP(NULL, "nodeTopology"), &o->node_topology);
        o->has_capacity = d_opt_bytes(d, kt_get(t, "capacity"), KP(NULL, "capacity"), &o->capacity);
        o->has_max_size =
            d_opt_bytes(d, kt_get(t, "maximumVolumeSize"), KP(NULL, "maximumVolumeSize"), &o->max_size);
    }
    DEC_FINISH(o);
}

ks_volume_attachment *ks_decode_volume_attachment(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_volume_attachment, o, "volumeattachment", 512);
    o->attacher = "";
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (d_map(d, spec, sp)) {
            const char *att = str_field(d, spec, "attacher", sp);
            if (att) o->attacher = att;
            o->node_name = d_id(d, kt_get(spec, "nodeName"), KP(sp, "nodeName"));
            const ks_tree *src = kt_get(spec, "source");
            const kpath *srcp = KP(sp, "source");
            if (d_map(d, src, srcp)) {
                const ks_tree *pv = kt_get(src, "persistentVolumeName");
                if (!d_absent(pv)) {
                    o->has_pv = true;
                    o->pv_name = d_id(d, pv, KP(srcp, "persistentVolumeName"));
                }
            }
        }
    }
    DEC_FINISH(o);
}

/* intstr.IntOrString: an integer, or a string that is an integer or a
 * percentage ("50%"). */
static void d_int_or_percent(dec *d, const ks_tree *v, const kpath *p, ks_int_or_percent *out) {
    memset(out, 0, sizeof(*out));
    if (d_absent(v)) return;
    if (v->type == KT_STRING) {
        size_t n = strlen(v->text);
        char *end;
        long x = strtol(v->text, &end, 10);
        bool pct = n > 1 && v->text[n - 1] == '%' && end == v->text + n - 1;
        if ((pct || (n && *end == 0)) && x >= INT32_MIN && x <= INT32_MAX && n && v->text[0] != ' ') {
            out->set = true;
            out->is_percent = pct;
            out->value = (int32_t)x;
            return;
        }
        derr(d, v, p, "invalid value \"%s\": must be an integer or a percentage", v->text);
        return;
    }
    out->set = d_int32(d, v, p, &out->value);
}

ks_pdb *ks_decode_pdb(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_pdb, o, "poddisruptionbudget", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        o->selector.nothing = true;
        if (d_map(d, spec, sp)) {
            d_int_or_percent(d, kt_get(spec, "maxUnavailable"), KP(sp, "maxUnavailable"),
                             &o->max_unavailable);
            d_int_or_percent(d, kt_get(spec, "minAvailable"), KP(sp, "minAvailable"), &o->min_available);
            d_label_selector(d, kt_get(spec, "selector"), KP(sp, "selector"), &o->selector);
        }
        const ks_tree *st = kt_get(t, "status");
        const kpath *stp = KP(NULL, "status");
        if (d_map(d, st, stp)) {
            d_int32(d, kt_get(st, "disruptionsAllowed"), KP(stp, "disruptionsAllowed"),
                    &o->disruptions_allowed);
            const ks_tree *dp = kt_get(st, "disruptedPods");
            if (d_map(d, dp, KP(stp, "disruptedPods")) && dp->n) {
                o->disrupted_pods = ks_arena_calloc(d->a, dp->n, sizeof(ks_id));
                for (uint32_t i = 0; i < dp->n; i++) o->disrupted_pods[o->ndisrupted++] = ks_intern(dp->keys[i]);
            }
        }
    }
    DEC_FINISH(o);
}

ks_pod_group *ks_decode_pod_group(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_pod_group, o, "podgroup", 512);
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        o->creation_ts = m.has_creation ? m.creation_ts : 0;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (d_map(d, spec, sp)) {
            d_int32(d, kt_get(spec, "minMember"), KP(sp, "minMember"), &o->min_member);
            const ks_tree *mr = kt_get(spec, "minResources");
            if (!d_absent(mr))
                o->has_min_resources = d_resource(d, mr, KP(sp, "minResources"), NULL, &o->min_resources);
            d_int32(d, kt_get(spec, "scheduleTimeoutSeconds"), KP(sp, "scheduleTimeoutSeconds"),
                    &o->schedule_timeout_seconds);
        }
    }
    DEC_FINISH(o);
}

ks_workload *ks_decode_workload(const ks_tree *t, ks_workload_kind kind, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_workload, o, ks_workload_kind_lower(kind), 512);
    o->kind = kind;
    o->replicas = -1;
    o->desired = -1;
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        o->uid = m.uid;
        const ks_tree *owners = kt_get(kt_get(t, "metadata"), "ownerReferences");
        const kpath *op = KP(KP(NULL, "metadata"), "ownerReferences");
        if (d_seq(d, owners, op))
            for (uint32_t i = 0; i < owners->n; i++) {
                const ks_tree *or = owners->items[i];
                bool ctl = false;
                if (!d_map(d, or, KI(op, i))) continue;
                d_bool(d, kt_get(or, "controller"), KP(KI(op, i), "controller"), &ctl);
                if (!ctl) continue;
                o->owner_kind = d_id(d, kt_get(or, "kind"), KP(KI(op, i), "kind"));
                o->owner_name = d_id(d, kt_get(or, "name"), KP(KI(op, i), "name"));
            }
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        o->selector.nothing = true;
        if (d_map(d, spec, sp)) {
            const ks_tree *sel = kt_get(spec, "selector");
            /* Services and ReplicationControllers select with a plain map,
             * the apps kinds with a LabelSelector */
            if (kind == KS_WORKLOAD_SERVICE || kind == KS_WORKLOAD_RC)
                d_map_selector(d, sel, KP(sp, "selector"), &o->selector);
            else if (kind != KS_WORKLOAD_CRONJOB)
                d_label_selector(d, sel, KP(sp, "selector"), &o->selector);
            const ks_tree *r = kt_get(spec, "replicas");
            if (kind != KS_WORKLOAD_SERVICE && !d_absent(r) &&
                d_int32(d, r, KP(sp, "replicas"), &o->replicas) && o->replicas < 0)
                derr(d, r, KP(sp, "replicas"), "must be greater than or equal to 0");
        }
    }
    DEC_FINISH(o);
}
