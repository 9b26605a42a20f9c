/* v1.Pod into ks_pod, with the defaults the API server would have filled
 * in (requests from limits, pod-level requests, host ports of host-network
 * pods, scheduler name, phase) and the per-pod precomputation. */
#include "codec/decode_internal.h"

#include <string.h>

static bool d_port(dec *d, const ks_tree *v, const kpath *p, bool host_network,
                   ks_container_port *out) {
    static const char *const protocols[] = {"TCP", "UDP", "SCTP", NULL};
    memset(out, 0, sizeof(*out));
    if (!d_map(d, v, p)) return d_absent(v);
    d_int32(d, kt_get(v, "containerPort"), KP(p, "containerPort"), &out->container_port);
    d_int32(d, kt_get(v, "hostPort"), KP(p, "hostPort"), &out->host_port);
    int proto = d_enum(d, kt_get(v, "protocol"), KP(p, "protocol"), protocols);
    out->protocol = ks_intern(proto >= 0 ? protocols[proto] : "TCP");
    out->host_ip = d_id(d, kt_get(v, "hostIP"), KP(p, "hostIP"));
    /* host-network pods listen on the node: hostPort defaults to the
     * container port */
    if (host_network && out->host_port == 0) out->host_port = out->container_port;
    return true;
}

/* Requests default to limits for the names only limits give. */
static void default_requests(dec *d, ks_qlist *req, const ks_qlist *lim) {
    uint32_t extra = 0;
    for (uint32_t i = 0; i < lim->n; i++)
        if (!ks_qlist_find(req, lim->v[i].name)) extra++;
    if (!extra) return;
    ks_qentry *v = ks_arena_calloc(d->a, req->n + extra, sizeof(*v));
    if (req->n) memcpy(v, req->v, req->n * sizeof(*v));
    uint32_t n = req->n;
    for (uint32_t i = 0; i < lim->n; i++)
        if (!ks_qlist_find(req, lim->v[i].name)) v[n++] = lim->v[i];
    req->v = v;
    req->n = n;
}

static bool d_container(dec *d, const ks_tree *v, const kpath *p, bool init, bool host_network,
                        ks_container *c) {
    static const char *const restart[] = {"Always", "OnFailure", "Never", NULL};
    memset(c, 0, sizeof(*c));
    if (!d_map(d, v, p)) {
        if (d_absent(v)) derr(d, v, p, "container must not be null");
        return false;
    }
    d_str(d, kt_get(v, "name"), KP(p, "name"), &c->name);
    c->name = dkeep(d, c->name ? c->name : "");
    d_str(d, kt_get(v, "image"), KP(p, "image"), &c->image);
    c->image_id = ks_normalize_image(c->image ? c->image : "");
    /* a tagged image is its own normalized name: share the interned copy */
    if (c->image && strcmp(c->image, ks_str(c->image_id)) == 0) c->image = ks_str(c->image_id);
    else c->image = dkeep(d, c->image ? c->image : "");
    if (init) c->sidecar = d_enum(d, kt_get(v, "restartPolicy"), KP(p, "restartPolicy"), restart) == 0;

    const ks_tree *res = kt_get(v, "resources");
    const kpath *rp = KP(p, "resources");
    static ks_qentry none[1]; /* an empty list that is not "unset" */
    c->req_q.v = c->lim_q.v = none;
    if (d_map(d, res, rp)) {
        d_qlist(d, kt_get(res, "limits"), KP(rp, "limits"), &c->lim_q);
        d_qlist(d, kt_get(res, "requests"), KP(rp, "requests"), &c->req_q);
        if (!c->lim_q.v) c->lim_q.v = none;
        if (!c->req_q.v) c->req_q.v = none;
        default_requests(d, &c->req_q, &c->lim_q);
    }
    if (!ks_resource_add_qlist(&c->requests, d->a, &c->req_q) ||
        !ks_resource_add_qlist(&c->limits, d->a, &c->lim_q))
        derr(d, res, rp, "resource quantities do not fit an int64");
    c->has_cpu_request = ks_qlist_find(&c->req_q, KS_RES_CPU) != NULL;
    c->has_memory_request = ks_qlist_find(&c->req_q, KS_RES_MEMORY) != NULL;

    const ks_tree *ports = kt_get(v, "ports");
    const kpath *pp = KP(p, "ports");
    if (d_seq(d, ports, pp) && ports->n) {
        c->ports = ks_arena_calloc(d->a, ports->n, sizeof(*c->ports));
        for (uint32_t i = 0; i < ports->n; i++)
            if (d_port(d, ports->items[i], KI(pp, i), host_network, &c->ports[c->nports]))
                c->nports++;
    }
    return true;
}

static bool d_containers(dec *d, const ks_tree *v, const kpath *p, bool init, bool host_network,
                         uint32_t *n, ks_container **out) {
    *n = 0;
    *out = NULL;
    if (!d_seq(d, v, p)) return d_absent(v);
    if (!v->n) return true;
    *out = ks_arena_calloc(d->a, v->n, sizeof(ks_container));
    for (uint32_t i = 0; i < v->n; i++)
        if (d_container(d, v->items[i], KI(p, i), init, host_network, &(*out)[*n])) (*n)++;
    return true;
}

/* status.containerStatuses[].resources / allocatedResources, matched to
 * the containers by name. */
static void d_container_statuses(dec *d, const ks_tree *v, const kpath *p, ks_container *cs,
                                 uint32_t n) {
    if (!d_seq(d, v, p)) return;
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *st = v->items[i];
        const kpath *sp = KI(p, i);
        if (!d_map(d, st, sp)) continue;
        const char *name = NULL;
        if (!d_str(d, kt_get(st, "name"), KP(sp, "name"), &name)) continue;
        ks_container *c = NULL;
        for (uint32_t j = 0; j < n; j++)
            if (strcmp(cs[j].name, name) == 0) c = &cs[j];
        if (!c) continue;
        const ks_tree *res = kt_get(st, "resources");
        if (d_map(d, res, KP(sp, "resources"))) {
            c->has_status_resources = true;
            d_qlist(d, kt_get(res, "requests"), KP(KP(sp, "resources"), "requests"), &c->status_req_q);
        }
        d_qlist(d, kt_get(st, "allocatedResources"), KP(sp, "allocatedResources"), &c->allocated_q);
    }
}

static bool d_toleration(dec *d, const ks_tree *v, const kpath *p, ks_toleration *t) {
    static const char *const ops[] = {"Equal", "Exists", "", NULL};
    static const char *const effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
    memset(t, 0, sizeof(*t));
    if (!d_map(d, v, p)) return d_absent(v);
    t->key = d_id(d, kt_get(v, "key"), KP(p, "key"));
    t->value = d_id(d, kt_get(v, "value"), KP(p, "value"));
    int op = d_enum(d, kt_get(v, "operator"), KP(p, "operator"), ops);
    t->op = op == 1 ? KS_TOL_EXISTS : KS_TOL_EQUAL;
    int e = d_enum(d, kt_get(v, "effect"), KP(p, "effect"), effects);
    t->effect = e > 0 ? (ks_effect)e : KS_EFFECT_ALL;
    t->has_seconds = d_int64(d, kt_get(v, "tolerationSeconds"), KP(p, "tolerationSeconds"), &t->seconds);
    return op != -2 && e != -2;
}

static bool d_affinity_term(dec *d, const ks_tree *v, const kpath *p, ks_pod_affinity_term *t) {
    memset(t, 0, sizeof(*t));
    if (!d_map(d, v, p)) return false;
    bool ok = d_label_selector(d, kt_get(v, "labelSelector"), KP(p, "labelSelector"), &t->selector);
    const ks_tree *nss = kt_get(v, "namespaceSelector");
    if (!d_absent(nss)) {
        t->has_ns_selector = true;
        ok &= d_label_selector(d, nss, KP(p, "namespaceSelector"), &t->ns_selector);
    }
    d_ids(d, kt_get(v, "namespaces"), KP(p, "namespaces"), &t->nnamespaces, &t->namespaces);
    t->topology_key = d_id(d, kt_get(v, "topologyKey"), KP(p, "topologyKey"));
    d_ids(d, kt_get(v, "matchLabelKeys"), KP(p, "matchLabelKeys"), &t->nmatch_label_keys,
          &t->match_label_keys);
    d_ids(d, kt_get(v, "mismatchLabelKeys"), KP(p, "mismatchLabelKeys"), &t->nmismatch_label_keys,
          &t->mismatch_label_keys);
    return ok;
}

/* The API server merges matchLabelKeys / mismatchLabelKeys into the term's
 * selector (key In / NotIn the pod's own value) when it creates the pod. */
static void merge_label_keys(dec *d, ks_pod_affinity_term *t, const ks_labels *labels) {
    if (t->selector.nothing || (!t->nmatch_label_keys && !t->nmismatch_label_keys)) return;
    uint32_t n = t->selector.nreq + t->nmatch_label_keys + t->nmismatch_label_keys;
    ks_requirement *r = ks_arena_calloc(d->a, n, sizeof(*r));
    if (t->selector.nreq) memcpy(r, t->selector.reqs, t->selector.nreq * sizeof(*r));
    uint32_t o = t->selector.nreq;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t nk = pass ? t->nmismatch_label_keys : t->nmatch_label_keys;
        ks_id *keys = pass ? t->mismatch_label_keys : t->match_label_keys;
        for (uint32_t i = 0; i < nk; i++) {
            ks_id val;
            if (!ks_labels_get(labels, keys[i], &val)) continue;
            r[o].key = keys[i];
            r[o].op = pass ? KS_OP_NOT_IN : KS_OP_IN;
            r[o].nvalues = 1;
            r[o].values = ks_arena_alloc(d->a, sizeof(ks_id));
            r[o].values[0] = val;
            o++;
        }
    }
    t->selector.reqs = r;
    t->selector.nreq = o;
}

/* required: [term], preferred: [{weight, podAffinityTerm}] */
static void d_pod_affinity(dec *d, const ks_tree *v, const kpath *p, uint32_t *nreq,
                           ks_pod_affinity_term **req, uint32_t *npref, ks_pod_affinity_term **pref) {
    if (!d_map(d, v, p)) return;
    const ks_tree *r = kt_get(v, "requiredDuringSchedulingIgnoredDuringExecution");
    const kpath *rp = KP(p, "requiredDuringSchedulingIgnoredDuringExecution");
    if (d_seq(d, r, rp) && r->n) {
        *req = ks_arena_calloc(d->a, r->n, sizeof(**req));
        for (uint32_t i = 0; i < r->n; i++) {
            if (d_absent(r->items[i])) {
                derr(d, r->items[i], KI(rp, i), "term must not be null");
                continue;
            }
            if (d_affinity_term(d, r->items[i], KI(rp, i), &(*req)[*nreq])) (*nreq)++;
        }
    }
    const ks_tree *pr = kt_get(v, "preferredDuringSchedulingIgnoredDuringExecution");
    const kpath *pp = KP(p, "preferredDuringSchedulingIgnoredDuringExecution");
    if (d_seq(d, pr, pp) && pr->n) {
        *pref = ks_arena_calloc(d->a, pr->n, sizeof(**pref));
        for (uint32_t i = 0; i < pr->n; i++) {
            const ks_tree *w = pr->items[i];
            const kpath *wp = KI(pp, i);
            if (!d_map(d, w, wp)) continue;
            ks_pod_affinity_term *t = &(*pref)[*npref];
            const ks_tree *term = kt_get(w, "podAffinityTerm");
            if (d_absent(term)) {
                derr(d, w, KP(wp, "podAffinityTerm"), "required");
                continue;
            }
            if (!d_affinity_term(d, term, KP(wp, "podAffinityTerm"), t)) continue;
            d_int32(d, kt_get(w, "weight"), KP(wp, "weight"), &t->weight);
            (*npref)++;
        }
    }
}

static void d_affinity(dec *d, const ks_tree *v, const kpath *p, ks_pod *pod) {
    if (!d_map(d, v, p)) return;
    const ks_tree *na = kt_get(v, "nodeAffinity");
    const kpath *np = KP(p, "nodeAffinity");
    if (d_map(d, na, np)) {
        const ks_tree *req = kt_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
        const kpath *rp = KP(np, "requiredDuringSchedulingIgnoredDuringExecution");
        if (!d_absent(req)) {
            pod->has_required_node_affinity = true;
            d_node_selector(d, req, rp, &pod->required_node_affinity);
        }
        const ks_tree *pref = kt_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
        const kpath *pp = KP(np, "preferredDuringSchedulingIgnoredDuringExecution");
        if (d_seq(d, pref, pp) && pref->n) {
            pod->preferred_node = ks_arena_calloc(d->a, pref->n, sizeof(*pod->preferred_node));
            for (uint32_t i = 0; i < pref->n; i++) {
                const ks_tree *w = pref->items[i];
                const kpath *wp = KI(pp, i);
                if (!d_map(d, w, wp)) continue;
                ks_preferred_node_term *t = &pod->preferred_node[pod->npreferred_node];
                d_int32(d, kt_get(w, "weight"), KP(wp, "weight"), &t->weight);
                if (d_node_selector_term(d, kt_get(w, "preference"), KP(wp, "preference"), &t->term))
                    pod->npreferred_node++;
            }
        }
        pod->has_node_affinity = pod->has_required_node_affinity || pod->npreferred_node;
    }
    d_pod_affinity(d, kt_get(v, "podAffinity"), KP(p, "podAffinity"), &pod->nreq_affinity,
                   &pod->req_affinity, &pod->npref_affinity, &pod->pref_affinity);
    d_pod_affinity(d, kt_get(v, "podAntiAffinity"), KP(p, "podAntiAffinity"), &pod->nreq_anti,
                   &pod->req_anti, &pod->npref_anti, &pod->pref_anti);
}

static bool d_spread(dec *d, const ks_tree *v, const kpath *p, ks_spread_constraint *c) {
    static const char *const when[] = {"DoNotSchedule", "ScheduleAnyway", NULL};
    static const char *const policies[] = {"Honor", "Ignore", NULL};
    memset(c, 0, sizeof(*c));
    if (!d_map(d, v, p)) return false;
    d_int32(d, kt_get(v, "maxSkew"), KP(p, "maxSkew"), &c->max_skew);
    c->topology_key = d_id(d, kt_get(v, "topologyKey"), KP(p, "topologyKey"));
    int w = d_enum(d, kt_get(v, "whenUnsatisfiable"), KP(p, "whenUnsatisfiable"), when);
    c->when_unsatisfiable = w == 1 ? KS_SCHEDULE_ANYWAY : KS_DO_NOT_SCHEDULE;
    bool ok = d_label_selector(d, kt_get(v, "labelSelector"), KP(p, "labelSelector"), &c->selector);
    c->has_min_domains = d_int32(d, kt_get(v, "minDomains"), KP(p, "minDomains"), &c->min_domains);
    int na = d_enum(d, kt_get(v, "nodeAffinityPolicy"), KP(p, "nodeAffinityPolicy"), policies);
    c->has_node_affinity_policy = na >= 0;
    c->node_affinity_policy = na == 1 ? KS_POLICY_IGNORE : KS_POLICY_HONOR;
    int nt = d_enum(d, kt_get(v, "nodeTaintsPolicy"), KP(p, "nodeTaintsPolicy"), policies);
    c->has_node_taints_policy = nt >= 0;
    c->node_taints_policy = nt == 0 ? KS_POLICY_HONOR : KS_POLICY_IGNORE;
    d_ids(d, kt_get(v, "matchLabelKeys"), KP(p, "matchLabelKeys"), &c->nmatch_label_keys,
          &c->match_label_keys);
    return ok;
}

static const char *str_of(dec *d, const ks_tree *m, const char *key, const kpath *p) {
    const char *s = NULL;
    d_str(d, kt_get(m, key), KP(p, key), &s);
    return dkeep(d, s);
}

static bool d_volume(dec *d, const ks_tree *v, const kpath *p, const char *pod_name, ks_volume *vol) {
    memset(vol, 0, sizeof(*vol));
    if (!d_map(d, v, p)) return false;
    vol->tree = d->ctx->doc ? v : NULL;
    vol->name = str_of(d, v, "name", p);
    if (!vol->name) vol->name = "";
    const ks_tree *s;
    const kpath *sp;
    bool ro = false;
    if ((s = kt_get(v, "persistentVolumeClaim")) && d_map(d, s, sp = KP(p, "persistentVolumeClaim"))) {
        vol->kind = KS_VOL_PVC;
        vol->claim_name = str_of(d, s, "claimName", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "ephemeral")) && d_map(d, s, KP(p, "ephemeral"))) {
        /* the claim a generic ephemeral volume gets: <pod>-<volume> */
        vol->kind = KS_VOL_EPHEMERAL;
        vol->claim_name = ks_arena_printf(d->a, "%s-%s", pod_name, vol->name);
    } else if ((s = kt_get(v, "gcePersistentDisk")) && d_map(d, s, sp = KP(p, "gcePersistentDisk"))) {
        vol->kind = KS_VOL_GCE_PD;
        vol->disk_id = str_of(d, s, "pdName", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "awsElasticBlockStore")) &&
               d_map(d, s, sp = KP(p, "awsElasticBlockStore"))) {
        vol->kind = KS_VOL_AWS_EBS;
        vol->disk_id = str_of(d, s, "volumeID", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "rbd")) && d_map(d, s, sp = KP(p, "rbd"))) {
        vol->kind = KS_VOL_RBD;
        vol->disk_id = str_of(d, s, "image", sp);
        vol->extra = str_of(d, s, "pool", sp);
        if (!vol->extra) vol->extra = "rbd"; /* the API default pool */
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
        const ks_tree *mons = kt_get(s, "monitors");
        if (d_seq(d, mons, KP(sp, "monitors")) && mons->n) {
            vol->monitors = ks_arena_calloc(d->a, mons->n, sizeof(char *));
            for (uint32_t i = 0; i < mons->n; i++) {
                const char *m;
                if (d_str(d, mons->items[i], KI(KP(sp, "monitors"), i), &m))
                    vol->monitors[vol->nmonitors++] = dkeep(d, m);
            }
        }
    } else if ((s = kt_get(v, "iscsi")) && d_map(d, s, sp = KP(p, "iscsi"))) {
        vol->kind = KS_VOL_ISCSI;
        vol->disk_id = str_of(d, s, "iqn", sp);
        vol->extra = str_of(d, s, "targetPortal", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "azureDisk")) && d_map(d, s, sp = KP(p, "azureDisk"))) {
        vol->kind = KS_VOL_AZURE_DISK;
        vol->disk_id = str_of(d, s, "diskURI", sp);
        vol->extra = str_of(d, s, "kind", sp);
        if (!vol->extra) vol->extra = "Shared"; /* the API default */
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "azureFile")) && d_map(d, s, sp = KP(p, "azureFile"))) {
        vol->kind = KS_VOL_AZURE_FILE;
        vol->disk_id = str_of(d, s, "shareName", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "cinder")) && d_map(d, s, sp = KP(p, "cinder"))) {
        vol->kind = KS_VOL_CINDER;
        vol->disk_id = str_of(d, s, "volumeID", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "vsphereVolume")) && d_map(d, s, sp = KP(p, "vsphereVolume"))) {
        vol->kind = KS_VOL_VSPHERE;
        vol->disk_id = str_of(d, s, "volumePath", sp);
    } else if ((s = kt_get(v, "portworxVolume")) && d_map(d, s, sp = KP(p, "portworxVolume"))) {
        vol->kind = KS_VOL_PORTWORX;
        vol->disk_id = str_of(d, s, "volumeID", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    } else if ((s = kt_get(v, "csi")) && d_map(d, s, sp = KP(p, "csi"))) {
        vol->csi_driver = str_of(d, s, "driver", sp);
        d_bool(d, kt_get(s, "readOnly"), KP(sp, "readOnly"), &ro);
    }
    vol->read_only = ro;
    return true;
}

/* status.resourceClaimStatuses: what the claim controller generated. */
static void d_claim_statuses(dec *d, const ks_tree *v, const kpath *p, ks_pod *pod) {
    if (!d_seq(d, v, p) || !v->n) return;
    pod->claim_statuses = ks_arena_calloc(d->a, v->n, sizeof(ks_pod_claim_status));
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *c = v->items[i];
        ks_pod_claim_status *cs = &pod->claim_statuses[pod->nclaim_statuses];
        if (!d_map(d, c, KI(p, i))) continue;
        d_str(d, kt_get(c, "name"), KP(KI(p, i), "name"), &cs->name);
        d_str(d, kt_get(c, "resourceClaimName"), KP(KI(p, i), "resourceClaimName"), &cs->claim_name);
        cs->name = dkeep(d, cs->name ? cs->name : "");
        cs->claim_name = dkeep(d, cs->claim_name);
        pod->nclaim_statuses++;
    }
}

static void d_status(dec *d, const ks_tree *st, const kpath *sp, ks_pod *pod) {
    d_claim_statuses(d, kt_get(st, "resourceClaimStatuses"), KP(sp, "resourceClaimStatuses"), pod);
    static const char *const phases[] = {"Unknown", "Pending", "Running", "Succeeded", "Failed", NULL};
    int ph = d_enum(d, kt_get(st, "phase"), KP(sp, "phase"), phases);
    if (ph >= 0) pod->phase = (ks_pod_phase)ph;
    pod->nominated_node = d_id(d, kt_get(st, "nominatedNodeName"), KP(sp, "nominatedNodeName"));
    pod->has_start_time = d_time(d, kt_get(st, "startTime"), KP(sp, "startTime"), &pod->start_time);
    const ks_tree *conds = kt_get(st, "conditions");
    const kpath *cp = KP(sp, "conditions");
    if (d_seq(d, conds, cp) && conds->n) {
        pod->conditions = ks_arena_calloc(d->a, conds->n, sizeof(*pod->conditions));
        ks_id resize = ks_intern("PodResizePending");
        for (uint32_t i = 0; i < conds->n; i++) {
            const ks_tree *c = conds->items[i];
            const kpath *ip = KI(cp, i);
            if (!d_map(d, c, ip)) continue;
            ks_pod_condition *pc = &pod->conditions[pod->nconditions++];
            pc->type = d_id(d, kt_get(c, "type"), KP(ip, "type"));
            pc->status = d_id(d, kt_get(c, "status"), KP(ip, "status"));
            pc->reason = str_of(d, c, "reason", ip);
            pc->message = str_of(d, c, "message", ip);
            /* the first PodResizePending condition decides */
            if (pc->type == resize && !pod->resize_infeasible) {
                bool seen = false;
                for (uint32_t j = 0; j + 1 < pod->nconditions; j++)
                    if (pod->conditions[j].type == resize) seen = true;
                if (!seen) pod->resize_infeasible = pc->reason && strcmp(pc->reason, "Infeasible") == 0;
            }
        }
    }
    d_container_statuses(d, kt_get(st, "containerStatuses"), KP(sp, "containerStatuses"),
                         pod->containers, pod->ncontainers);
    d_container_statuses(d, kt_get(st, "initContainerStatuses"), KP(sp, "initContainerStatuses"),
                         pod->init_containers, pod->ninit);
}

/* A list grown in the object's arena, for defaulting. */
static void qlist_put(dec *d, ks_qlist *l, ks_id name, __int128 nano) {
    ks_qentry *v = ks_arena_calloc(d->a, l->n + 1, sizeof(*v));
    if (l->n) memcpy(v, l->v, l->n * sizeof(*v));
    v[l->n] = (ks_qentry){name, nano};
    l->v = v;
    l->n++;
}

/* Pod-level resources defaulting (PodLevelResources): with pod-level limits
 * set, hugepage limits default to the containers' sum, and each supported
 * request defaults to the containers' effective request (cpu, memory), else
 * to the pod-level limit. */
static void default_pod_level(dec *d, const ks_pod *pod, ks_pod_level *lv, bool has_resources) {
    if (!has_resources || (lv->lim_q.n == 0 && lv->req_q.n == 0)) return;
    ks_qentry agg[64];
    uint32_t n = ks_pod_aggregate_containers(pod, true, agg, 64);
    for (uint32_t i = 0; i < n && i < 64; i++) {
        ks_id name = agg[i].name;
        if (!ks_resource_is_hugepages(ks_str(name)) || ks_qlist_find(&lv->req_q, name)) continue;
        if (!ks_qlist_find(&lv->lim_q, name)) qlist_put(d, &lv->lim_q, name, agg[i].nano);
    }
    if (lv->lim_q.n == 0) return;
    n = ks_pod_aggregate_containers(pod, false, agg, 64);
    for (uint32_t i = 0; i < n && i < 64; i++) {
        ks_id name = agg[i].name;
        bool overcommit = name == KS_RES_CPU || name == KS_RES_MEMORY;
        if (overcommit && !ks_qlist_find(&lv->req_q, name)) qlist_put(d, &lv->req_q, name, agg[i].nano);
    }
    for (uint32_t i = 0; i < lv->lim_q.n; i++) {
        ks_id name = lv->lim_q.v[i].name;
        if (ks_pod_level_supported(name) && !ks_qlist_find(&lv->req_q, name))
            qlist_put(d, &lv->req_q, name, lv->lim_q.v[i].nano);
    }
}

/* Host ports of the sidecars, then of the regular containers, as
 * upstream's GetHostPorts lists them; out NULL only counts. */
static uint32_t collect_host_ports(const ks_pod *pod, ks_container_port *out) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < pod->ninit; i++) {
        const ks_container *c = &pod->init_containers[i];
        for (uint32_t j = 0; c->sidecar && j < c->nports; j++)
            if (c->ports[j].host_port > 0) {
                if (out) out[n] = c->ports[j];
                n++;
            }
    }
    for (uint32_t i = 0; i < pod->ncontainers; i++) {
        const ks_container *c = &pod->containers[i];
        for (uint32_t j = 0; j < c->nports; j++)
            if (c->ports[j].host_port > 0) {
                if (out) out[n] = c->ports[j];
                n++;
            }
    }
    return n;
}

static void flatten_host_ports(dec *d, ks_pod *pod) {
    uint32_t n = collect_host_ports(pod, NULL);
    if (!n) return;
    pod->host_ports = ks_arena_calloc(d->a, n, sizeof(*pod->host_ports));
    pod->nhost_ports = collect_host_ports(pod, pod->host_ports);
}

ks_pod *ks_decode_pod(const ks_tree *t, ks_decode_ctx *ctx) {
    ks_pod *pod = ks_pod_new();
    dec dd, *d = &dd;
    dec_init(d, ctx, pod->arena, "pod", t);
    /* Pod names come and go by the million in a long-running scheduler:
     * the pod holds a reference on its name, released when it goes. */
    d->counted_name = true;
    d->plain_annotations = true;
    meta m;
    if (!d_map(d, t, NULL)) goto fail;
    bool meta_ok = d_meta(d, t, true, &m);
    pod->name = m.name;
    pod->name_counted = m.name != KS_ID_NONE;
    if (!meta_ok) goto fail;
    pod->ns = m.ns;
    pod->key = ks_pod_key(m.ns, m.name);
    pod->uid = m.uid;
    pod->resource_version = m.resource_version;
    pod->labels = m.labels;
    pod->annotations = m.plain_annotations;
    pod->creation_ts = m.has_creation ? m.creation_ts : 0;
    pod->has_deletion_ts = m.has_deletion;
    pod->deletion_ts = m.deletion_ts;

    const ks_tree *md = kt_get(t, "metadata");
    const ks_tree *owners = kt_get(md, "ownerReferences");
    const kpath *op = KP(KP(NULL, "metadata"), "ownerReferences");
    if (d_seq(d, owners, op) && owners->n) {
        pod->owners = ks_arena_calloc(d->a, owners->n, sizeof(*pod->owners));
        for (uint32_t i = 0; i < owners->n; i++) {
            const ks_tree *o = owners->items[i];
            const kpath *ip = KI(op, i);
            if (!d_map(d, o, ip)) continue;
            ks_owner_ref *r = &pod->owners[pod->nowners++];
            r->kind = d_id(d, kt_get(o, "kind"), KP(ip, "kind"));
            r->api_version = str_of(d, o, "apiVersion", ip);
            r->name = str_of(d, o, "name", ip);
            r->uid = str_of(d, o, "uid", ip);
            d_bool(d, kt_get(o, "controller"), KP(ip, "controller"), &r->controller);
        }
    }

    const ks_tree *spec = kt_get(t, "spec");
    const kpath *sp = KP(NULL, "spec");
    if (!d_map(d, spec, sp)) {
        if (d_absent(spec)) derr(d, t, sp, "required");
        goto fail;
    }
    static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
    const char *sched = NULL;
    d_str(d, kt_get(spec, "schedulerName"), KP(sp, "schedulerName"), &sched);
    pod->scheduler_name = ks_intern(sched && *sched ? sched : "default-scheduler");
    pod->node_name = d_id(d, kt_get(spec, "nodeName"), KP(sp, "nodeName"));
    pod->has_priority = d_int32(d, kt_get(spec, "priority"), KP(sp, "priority"), &pod->priority);
    pod->priority_class = d_id(d, kt_get(spec, "priorityClassName"), KP(sp, "priorityClassName"));
    int pp = d_enum(d, kt_get(spec, "preemptionPolicy"), KP(sp, "preemptionPolicy"), policies);
    pod->has_preemption_policy = pp >= 0;
    pod->preemption_policy = pp == 1 ? KS_PREEMPT_NEVER : KS_PREEMPT_LOWER_PRIORITY;
    d_bool(d, kt_get(spec, "hostNetwork"), KP(sp, "hostNetwork"), &pod->host_network);
    d_labels(d, kt_get(spec, "nodeSelector"), KP(sp, "nodeSelector"), &pod->node_selector);
    d_affinity(d, kt_get(spec, "affinity"), KP(sp, "affinity"), pod);

    const ks_tree *tols = kt_get(spec, "tolerations");
    const kpath *tp = KP(sp, "tolerations");
    if (d_seq(d, tols, tp) && tols->n) {
        pod->tolerations = ks_arena_calloc(d->a, tols->n, sizeof(*pod->tolerations));
        for (uint32_t i = 0; i < tols->n; i++)
            if (d_toleration(d, tols->items[i], KI(tp, i), &pod->tolerations[pod->ntolerations]))
                pod->ntolerations++;
    }
    const ks_tree *tsc = kt_get(spec, "topologySpreadConstraints");
    const kpath *cp = KP(sp, "topologySpreadConstraints");
    if (d_seq(d, tsc, cp) && tsc->n) {
        pod->spread = ks_arena_calloc(d->a, tsc->n, sizeof(*pod->spread));
        for (uint32_t i = 0; i < tsc->n; i++)
            if (d_spread(d, tsc->items[i], KI(cp, i), &pod->spread[pod->nspread])) pod->nspread++;
    }

    d_containers(d, kt_get(spec, "containers"), KP(sp, "containers"), false, pod->host_network,
                 &pod->ncontainers, &pod->containers);
    d_containers(d, kt_get(spec, "initContainers"), KP(sp, "initContainers"), true,
                 pod->host_network, &pod->ninit, &pod->init_containers);

    /* decoded aside; kept (pod->level) only when the pod sets either */
    ks_pod_level lv = {0};
    const ks_tree *ovh = kt_get(spec, "overhead");
    if (!d_absent(ovh)) {
        lv.has_overhead = d_resource(d, ovh, KP(sp, "overhead"), &lv.overhead_q, &lv.overhead);
    }
    const ks_tree *pres = kt_get(spec, "resources");
    const kpath *prp = KP(sp, "resources");
    bool has_pres = d_map(d, pres, prp);
    if (has_pres) {
        d_qlist(d, kt_get(pres, "requests"), KP(prp, "requests"), &lv.req_q);
        d_qlist(d, kt_get(pres, "limits"), KP(prp, "limits"), &lv.lim_q);
    }
    default_pod_level(d, pod, &lv, has_pres);
    for (uint32_t i = 0; i < lv.req_q.n; i++)
        if (ks_pod_level_supported(lv.req_q.v[i].name)) lv.has_requests = true;
    if (!ks_resource_add_qlist(&lv.requests, d->a, &lv.req_q))
        derr(d, pres, prp, "resource quantities do not fit an int64");
    if (!d_absent(ovh) || has_pres) *ks_pod_level_make(pod) = lv;

    const ks_tree *vols = kt_get(spec, "volumes");
    const kpath *vp = KP(sp, "volumes");
    if (d_seq(d, vols, vp) && vols->n) {
        pod->volumes = ks_arena_calloc(d->a, vols->n, sizeof(*pod->volumes));
        for (uint32_t i = 0; i < vols->n; i++)
            if (d_volume(d, vols->items[i], KI(vp, i), d->name, &pod->volumes[pod->nvolumes]))
                pod->nvolumes++;
    }
    const ks_tree *claims = kt_get(spec, "resourceClaims");
    const kpath *rcp = KP(sp, "resourceClaims");
    if (d_seq(d, claims, rcp) && claims->n) {
        pod->resource_claims = ks_arena_calloc(d->a, claims->n, sizeof(ks_pod_claim));
        for (uint32_t i = 0; i < claims->n; i++) {
            const ks_tree *c = claims->items[i];
            ks_pod_claim *pc = &pod->resource_claims[pod->nresource_claims];
            if (!d_map(d, c, KI(rcp, i))) continue;
            d_str(d, kt_get(c, "name"), KP(KI(rcp, i), "name"), &pc->name);
            d_str(d, kt_get(c, "resourceClaimName"), KP(KI(rcp, i), "resourceClaimName"), &pc->claim_name);
            d_str(d, kt_get(c, "resourceClaimTemplateName"), KP(KI(rcp, i), "resourceClaimTemplateName"),
                  &pc->template_name);
            pc->name = dkeep(d, pc->name ? pc->name : "");
            pc->claim_name = dkeep(d, pc->claim_name);
            pc->template_name = dkeep(d, pc->template_name);
            pod->nresource_claims++;
        }
    }
    const ks_tree *gates = kt_get(spec, "schedulingGates");
    const kpath *gp = KP(sp, "schedulingGates");
    if (d_seq(d, gates, gp) && gates->n) {
        pod->scheduling_gates = ks_arena_calloc(d->a, gates->n, sizeof(ks_id));
        for (uint32_t i = 0; i < gates->n; i++) {
            const ks_tree *g = gates->items[i];
            if (d_map(d, g, KI(gp, i)))
                pod->scheduling_gates[pod->ngates++] = d_id(d, kt_get(g, "name"), KP(KI(gp, i), "name"));
        }
    }

    pod->phase = KS_PHASE_PENDING; /* what the API server sets on creation */
    const ks_tree *st = kt_get(t, "status");
    if (d_map(d, st, KP(NULL, "status"))) d_status(d, st, KP(NULL, "status"), pod);

    /* A pod the API server never saw (no uid, no creation time) gets the
     * creation-time mutations: match/mismatchLabelKeys merged into its
     * pod (anti-)affinity selectors. */
    if (!pod->uid && !m.has_creation) {
        ks_pod_affinity_term *sets[4] = {pod->req_affinity, pod->pref_affinity, pod->req_anti,
                                         pod->pref_anti};
        uint32_t ns[4] = {pod->nreq_affinity, pod->npref_affinity, pod->nreq_anti, pod->npref_anti};
        for (int s = 0; s < 4; s++)
            for (uint32_t i = 0; i < ns[s]; i++) merge_label_keys(d, &sets[s][i], &pod->labels);
    }
    flatten_host_ports(d, pod);
    if (!d->failed && !ks_pod_compute_requests(pod))
        derr(d, spec, sp, "resource requests do not fit an int64");
    if (!dec_done(d)) goto fail;
    D_SET_SOURCE(d, pod, t);
    ks_pod_note_arena(pod);
    return pod;
fail:
    dec_done(d);
    ks_pod_unref(pod);
    return NULL;
}
