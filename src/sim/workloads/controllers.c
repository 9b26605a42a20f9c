/* The per-kind rules of kube-controller-manager v1.34's pod-making
 * controllers (pkg/controller/{deployment,replicaset,statefulset,daemon,
 * job,cronjob}), applied once to a workload as the controllers would on
 * their first sync: which pods (and claims, ReplicaSets, Jobs) exist
 * afterwards, named, labelled and owned as theirs are. */
#include "api/selector.h"
#include "sim/workloads/pod_defaults.h"
#include "sim/workloads/generate.h"
#include "sim/workloads/template_hash.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool pod_active(const ks_pod *p) {
    return !ks_pod_is_terminating(p) && p->phase != KS_PHASE_SUCCEEDED && p->phase != KS_PHASE_FAILED;
}

/* Active pods whose controller is KIND ns/name. */
static int32_t owned_pods(const ks_cluster *c, const char *kind, ks_id ns, const char *name) {
    ks_id k = ks_intern(kind);
    int32_t n = 0;
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (p->ns != ns || !pod_active(p)) continue;
        const ks_owner_ref *r = ks_pod_controller(p);
        if (r && r->kind == k && r->name && strcmp(r->name, name) == 0) n++;
    }
    return n;
}

static const ks_workload *find_workload(const ks_cluster *c, ks_workload_kind kind, ks_id ns, ks_id name) {
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *w = c->workloads.v[i];
        if (w->kind == kind && w->ns == ns && w->name == name) return w;
    }
    return NULL;
}

static const char *pod_label(const ks_pod *p, const char *key) {
    ks_id v;
    return ks_labels_get(&p->labels, ks_intern(key), &v) ? ks_str(v) : NULL;
}

static const ks_tree *spec_of(const ks_workload *w) { return kt_get(w->tree, "spec"); }

static void push_pod(wl_ctx *x, ks_pod *p, bool held) {
    if (held) KS_VEC_PUSH(x->out->held, p);
    else KS_VEC_PUSH(x->out->pods, p);
}

/* Pods of a ReplicaSet-like controller (ReplicaSet, ReplicationController):
 * `n` pods named <prefix><random> from tmpl, owned by the given reference. */
static bool replica_pods(wl_ctx *x, const ks_tree *tmpl, const char *owner_name, ks_tree *owner, int32_t n) {
    const char *prefix = wl_prefix(x, owner_name);
    for (int32_t i = 0; i < n; i++) {
        const char *name = wl_generate_name(x, prefix);
        ks_pod *p = wl_decode_pod(x, wl_pod_tree(x, tmpl, name, prefix, owner));
        if (!p) return false;
        push_pod(x, p, false);
    }
    return true;
}

static int32_t replicas_of(const ks_workload *w) { return w->replicas >= 0 ? w->replicas : 1; }

static bool expand_replicaset(wl_ctx *x) {
    const ks_workload *w = x->w;
    bool rc = w->kind == KS_WORKLOAD_RC;
    ks_tree *tmpl = wl_default_template(x->a, kt_get(spec_of(w), "template"));
    int32_t want = replicas_of(w);
    x->out->desired = want;
    int32_t have = owned_pods(x->c, rc ? "ReplicationController" : "ReplicaSet", w->ns, x->name);
    ks_tree *owner = wl_owner_ref(x, rc ? "v1" : "apps/v1", rc ? "ReplicationController" : "ReplicaSet",
                                  x->name, x->uid);
    return replica_pods(x, tmpl, x->name, owner, want - have);
}

/* maxSurge as the Deployment controller resolves it (percentages round
 * up), for the max-replicas annotation. */
static int32_t max_surge(const ks_tree *spec, int32_t replicas) {
    const ks_tree *st = kt_get(spec, "strategy");
    const ks_tree *type = kt_get(st, "type");
    if (type && type->type == KT_STRING && strcmp(type->text, "Recreate") == 0) return 0;
    const ks_tree *v = kt_get(kt_get(st, "rollingUpdate"), "maxSurge");
    if (v && v->type == KT_INT) return (int32_t)v->ival;
    int pct = 25;
    if (v && v->type == KT_STRING) pct = atoi(v->text);
    return (int32_t)(((int64_t)replicas * pct + 99) / 100);
}

/* maxUnavailable (percentages round down), default 25%. */
static int32_t max_unavailable(const ks_tree *spec, int32_t replicas) {
    const ks_tree *v = kt_get(kt_get(kt_get(spec, "strategy"), "rollingUpdate"), "maxUnavailable");
    if (v && v->type == KT_INT) return (int32_t)v->ival;
    int pct = 25;
    if (v && v->type == KT_STRING) pct = atoi(v->text);
    return (int32_t)(((int64_t)replicas * pct) / 100);
}

static bool expand_deployment(wl_ctx *x) {
    const ks_workload *w = x->w;
    const ks_tree *spec = spec_of(w);
    ks_tree *tmpl = wl_default_template(x->a, kt_get(spec, "template"));
    int32_t want = replicas_of(w);
    x->out->desired = want;
    const ks_tree *cc = kt_get(kt_get(w->tree, "status"), "collisionCount");
    char hash[16];
    wl_pod_template_hash(tmpl, cc && cc->type == KT_INT ? cc->ival : -1, hash);
    const char *rs_name = ks_arena_printf(x->a, "%s-%s", x->name, hash);

    /* pods of every ReplicaSet the Deployment owns count (a scale, not a
     * second copy of what runs); pods of another template's ReplicaSet
     * are rolled over */
    int32_t have = 0, have_new = 0;
    const ks_workload *rs = NULL;
    for (uint32_t i = 0; i < x->c->workloads.n; i++) {
        const ks_workload *o = x->c->workloads.v[i];
        if (o->kind != KS_WORKLOAD_REPLICASET || o->ns != w->ns || o->owner_name != w->name ||
            o->owner_kind != ks_intern("Deployment"))
            continue;
        int32_t n = owned_pods(x->c, "ReplicaSet", o->ns, ks_str(o->name));
        have += n;
        if (strcmp(ks_str(o->name), rs_name) == 0) {
            rs = o;
            have_new = n;
        } else if (n) {
            ks_id k = ks_intern("ReplicaSet");
            for (uint32_t j = 0; j < x->c->pods.n; j++) {
                ks_pod *p = x->c->pods.v[j];
                const ks_owner_ref *r = ks_pod_controller(p);
                if (p->ns == o->ns && pod_active(p) && r && r->kind == k && r->name &&
                    strcmp(r->name, ks_str(o->name)) == 0)
                    KS_VEC_PUSH(x->out->rollout.old, ks_pod_ref(p));
            }
        }
    }

    /* the ReplicaSet's template: the Deployment's plus pod-template-hash */
    ks_tree *rs_tmpl = kt_copy(x->a, tmpl);
    wl_set_str(x->a, wl_labels(x, rs_tmpl), "pod-template-hash", hash);
    const char *rs_uid = rs && rs->uid ? rs->uid : wl_uid(x, "ReplicaSet", rs_name);
    if (!rs) {
        ks_tree *o = wl_object(x, "apps/v1", "ReplicaSet", rs_name, NULL, rs_uid);
        ks_tree *md = (ks_tree *)kt_get(o, "metadata");
        kt_map_set(x->a, md, "labels", kt_copy(x->a, wl_labels(x, rs_tmpl)));
        ks_tree *ann = wl_map_child(x->a, md, "annotations");
        char buf[32];
        snprintf(buf, sizeof(buf), "%d", want);
        wl_set_str(x->a, ann, "deployment.kubernetes.io/desired-replicas", buf);
        snprintf(buf, sizeof(buf), "%d", want + max_surge(spec, want));
        wl_set_str(x->a, ann, "deployment.kubernetes.io/max-replicas", buf);
        wl_set_str(x->a, ann, "deployment.kubernetes.io/revision", "1");
        kt_map_set(x->a, md, "ownerReferences", wl_owner_ref(x, "apps/v1", "Deployment", x->name, x->uid));
        ks_tree *rspec = wl_map_child(x->a, o, "spec");
        kt_map_set(x->a, rspec, "replicas", kt_int(x->a, want));
        const ks_tree *sel = kt_get(spec, "selector");
        ks_tree *nsel = sel ? kt_copy(x->a, sel) : kt_new(x->a, KT_MAP, x->line);
        wl_set_str(x->a, wl_map_child(x->a, nsel, "matchLabels"), "pod-template-hash", hash);
        kt_map_set(x->a, rspec, "selector", nsel);
        const ks_tree *mrs = kt_get(spec, "minReadySeconds");
        if (mrs) kt_map_set(x->a, rspec, "minReadySeconds", kt_copy(x->a, mrs));
        kt_map_set(x->a, rspec, "template", rs_tmpl);
        ks_workload *nw = wl_decode_workload(x, o, KS_WORKLOAD_REPLICASET);
        if (!nw) return false;
        nw->desired = want;
        KS_VEC_PUSH(x->out->workloads, nw);
    }
    ks_tree *owner = wl_owner_ref(x, "apps/v1", "ReplicaSet", rs_name, rs_uid);
    if (!x->out->rollout.old.n) return replica_pods(x, rs_tmpl, rs_name, owner, want - have);
    /* the template changed: the new ReplicaSet's pods come as the
     * strategy lets them (ks_wl_step) */
    if (!replica_pods(x, rs_tmpl, rs_name, owner, want - have_new)) return false;
    x->out->rollout.active = true;
    x->out->rollout.replicas = want;
    const ks_tree *st = kt_get(spec, "strategy");
    const ks_tree *type = kt_get(st, "type");
    x->out->rollout.recreate = type && type->type == KT_STRING && strcmp(type->text, "Recreate") == 0;
    x->out->rollout.kind = KS_WORKLOAD_DEPLOYMENT;
    x->out->rollout.strategy = x->out->rollout.recreate ? "Recreate" : "RollingUpdate";
    x->out->rollout.max_surge = max_surge(spec, want);
    x->out->rollout.max_unavailable = max_unavailable(spec, want);
    /* a surge and an unavailability of 0 together: the API server refuses it */
    if (!x->out->rollout.recreate && !x->out->rollout.max_surge && !x->out->rollout.max_unavailable)
        x->out->rollout.max_surge = 1;
    for (uint32_t i = 0; i < x->out->pods.n; i++) KS_VEC_PUSH(x->out->rollout.fresh, x->out->pods.v[i]);
    x->out->pods.n = 0;
    return true;
}

/* A volumeClaimTemplate's claim for one ordinal (getPersistentVolumeClaims). */
static ks_tree *claim_tree(wl_ctx *x, const ks_tree *ct, const char *claim_name, const ks_tree *match_labels,
                           bool owned) {
    ks_tree *pvc = wl_object(x, "v1", "PersistentVolumeClaim", claim_name, NULL,
                             wl_uid(x, "PersistentVolumeClaim", claim_name));
    ks_tree *md = (ks_tree *)kt_get(pvc, "metadata");
    const ks_tree *cmd = kt_get(ct, "metadata");
    const ks_tree *ann = kt_get(cmd, "annotations");
    if (ann && ann->type == KT_MAP) kt_map_set(x->a, md, "annotations", kt_copy(x->a, ann));
    ks_tree *labels = wl_map_child(x->a, md, "labels");
    const ks_tree *cl = kt_get(cmd, "labels");
    for (uint32_t i = 0; cl && cl->type == KT_MAP && i < cl->n; i++)
        kt_map_set(x->a, labels, cl->keys[i], kt_copy(x->a, cl->items[i]));
    for (uint32_t i = 0; match_labels && match_labels->type == KT_MAP && i < match_labels->n; i++)
        kt_map_set(x->a, labels, match_labels->keys[i], kt_copy(x->a, match_labels->items[i]));
    if (!labels->n) kt_map_set(x->a, md, "labels", kt_new(x->a, KT_NULL, x->line));
    if (owned) kt_map_set(x->a, md, "ownerReferences", wl_owner_ref(x, "apps/v1", "StatefulSet", x->name, x->uid));
    const ks_tree *cs = kt_get(ct, "spec");
    ks_tree *spec = cs ? kt_copy(x->a, cs) : kt_new(x->a, KT_MAP, x->line);
    if (!kt_get(spec, "volumeMode")) wl_set_str(x->a, spec, "volumeMode", "Filesystem");
    /* the DefaultStorageClass admission plugin: a claim naming no class
     * gets the default one (the last marked, when several are) */
    if (!kt_get(spec, "storageClassName")) {
        const ks_storage_class *dflt = NULL;
        for (uint32_t i = 0; i < x->c->storage_classes.n; i++)
            if (x->c->storage_classes.v[i]->is_default) dflt = x->c->storage_classes.v[i];
        if (dflt) wl_set_str(x->a, spec, "storageClassName", ks_str(dflt->name));
    }
    kt_map_set(x->a, pvc, "spec", spec);
    ks_tree *status = wl_map_child(x->a, pvc, "status");
    wl_set_str(x->a, status, "phase", "Pending");
    return pvc;
}

static bool pvc_exists(const ks_cluster *c, ks_id ns, const char *name) {
    for (uint32_t i = 0; i < c->pvcs.n; i++)
        if (c->pvcs.v[i]->ns == ns && strcmp(ks_str(c->pvcs.v[i]->name), name) == 0) return true;
    return false;
}

/* What the StatefulSet controller needs for every ordinal. */
typedef struct sts_info {
    ks_tree *tmpl;
    const char *revision, *service;
    bool parallel, claims_owned;
    int32_t start;
    const ks_tree *claims, *match;
} sts_info;

static bool sts_info_init(wl_ctx *x, sts_info *si) {
    const ks_workload *w = x->w;
    const ks_tree *spec = spec_of(w);
    si->tmpl = wl_default_template(x->a, kt_get(spec, "template"));
    /* the ControllerRevision of the set: FNV-32 of its patch, then the
     * collision count (getStatefulSetRevisions passes 0 when unset) */
    const ks_tree *cc = kt_get(kt_get(w->tree, "status"), "collisionCount");
    char hash[16];
    wl_revision_hash(si->tmpl, cc && cc->type == KT_INT ? cc->ival : 0, hash);
    si->revision = ks_arena_printf(x->a, "%.223s-%s", x->name, hash);
    const ks_tree *svc = kt_get(spec, "serviceName");
    si->service = svc && svc->type == KT_STRING ? svc->text : "";
    const ks_tree *pmp = kt_get(spec, "podManagementPolicy");
    si->parallel = pmp && pmp->type == KT_STRING && strcmp(pmp->text, "Parallel") == 0;
    si->start = wl_int(kt_get(spec, "ordinals"), "start", 0);
    si->claims = kt_get(spec, "volumeClaimTemplates");
    si->match = kt_get(kt_get(spec, "selector"), "matchLabels");
    const ks_tree *wd = kt_get(kt_get(spec, "persistentVolumeClaimRetentionPolicy"), "whenDeleted");
    si->claims_owned = wd && wd->type == KT_STRING && strcmp(wd->text, "Delete") == 0;
    return true;
}

/* newStatefulSetPod for one ordinal, and the claims it needs that do not
 * exist yet. */
static ks_pod *sts_pod(wl_ctx *x, const sts_info *si, int32_t ord) {
    const char *name = ks_arena_printf(x->a, "%s-%d", x->name, ord);
    ks_tree *pt = wl_pod_tree(x, si->tmpl, name, NULL, wl_owner_ref(x, "apps/v1", "StatefulSet", x->name, x->uid));
    ks_tree *md = (ks_tree *)kt_get(pt, "metadata");
    ks_tree *labels = wl_map_child(x->a, md, "labels");
    wl_set_str(x->a, labels, "statefulset.kubernetes.io/pod-name", name);
    wl_set_str(x->a, labels, "apps.kubernetes.io/pod-index", ks_arena_printf(x->a, "%d", ord));
    wl_set_str(x->a, labels, "controller-revision-hash", si->revision);
    ks_tree *ps = (ks_tree *)kt_get(pt, "spec");
    wl_set_str(x->a, ps, "hostname", name);
    if (*si->service) wl_set_str(x->a, ps, "subdomain", si->service);
    const ks_tree *claims = si->claims;
    if (claims && claims->type == KT_SEQ && claims->n) {
        /* updateStorage: one volume per claim template, then the
         * template's volumes of other names */
        ks_tree *vols = kt_new(x->a, KT_SEQ, x->line);
        for (uint32_t i = 0; i < claims->n; i++) {
            const ks_tree *cn = kt_get(kt_get(claims->items[i], "metadata"), "name");
            const char *cname = cn && cn->type == KT_STRING ? cn->text : "";
            const char *claim = ks_arena_printf(x->a, "%s-%s-%d", cname, x->name, ord);
            ks_tree *v = kt_new(x->a, KT_MAP, x->line);
            wl_set_str(x->a, v, "name", cname);
            ks_tree *src = wl_map_child(x->a, v, "persistentVolumeClaim");
            wl_set_str(x->a, src, "claimName", claim);
            kt_seq_add(x->a, vols, v);
            if (!pvc_exists(x->c, x->w->ns, claim)) {
                ks_pvc *pvc = wl_decode_pvc(x, claim_tree(x, claims->items[i], claim, si->match, si->claims_owned));
                if (!pvc) return NULL;
                KS_VEC_PUSH(x->out->pvcs, pvc);
            }
        }
        const ks_tree *old = kt_get(ps, "volumes");
        for (uint32_t i = 0; old && old->type == KT_SEQ && i < old->n; i++) {
            const ks_tree *vn = kt_get(old->items[i], "name");
            bool replaced = false;
            for (uint32_t j = 0; j < claims->n && vn; j++) {
                const ks_tree *cn = kt_get(kt_get(claims->items[j], "metadata"), "name");
                if (cn && cn->text && vn->text && strcmp(cn->text, vn->text) == 0) replaced = true;
            }
            if (!replaced) kt_seq_add(x->a, vols, old->items[i]);
        }
        kt_map_set(x->a, ps, "volumes", vols);
    }
    return wl_decode_pod(x, pt);
}

/* An active pod of the set by name (the controller's ordinal). */
static ks_pod *sts_existing(wl_ctx *x, const char *name) {
    ks_id id = ks_intern(name);
    for (uint32_t i = 0; i < x->c->pods.n; i++) {
        ks_pod *p = x->c->pods.v[i];
        if (p->ns == x->w->ns && p->name == id && pod_active(p)) return p;
    }
    return NULL;
}

/* The set's RollingUpdate parameters; false for OnDelete. */
static bool sts_rolling(const ks_workload *w, int32_t *partition) {
    const ks_tree *us = kt_get(spec_of(w), "updateStrategy");
    const ks_tree *type = kt_get(us, "type");
    *partition = wl_int(kt_get(us, "rollingUpdate"), "partition", 0);
    return !(type && type->type == KT_STRING && strcmp(type->text, "OnDelete") == 0);
}

/* A template change under RollingUpdate while outdated pods run at or
 * above the partition: every ordinal becomes a slot (its pod of the old
 * revision, the pod of the new one), stepped by ks_wl_step. */
static bool sts_update(wl_ctx *x, const sts_info *si, int32_t want, int32_t partition, bool *update) {
    *update = false;
    for (int32_t i = partition; i < want && !*update; i++) {
        const ks_pod *p = sts_existing(x, ks_arena_printf(x->a, "%s-%d", x->name, si->start + i));
        const char *rev = p ? pod_label(p, "controller-revision-hash") : NULL;
        if (p && (!rev || strcmp(rev, si->revision) != 0)) *update = true;
    }
    if (!*update) return true;
    for (int32_t i = 0; i < want; i++) {
        ks_pod *p = sts_existing(x, ks_arena_printf(x->a, "%s-%d", x->name, si->start + i));
        const char *rev = p ? pod_label(p, "controller-revision-hash") : NULL;
        ks_pod *old = NULL, *fresh = NULL;
        uint8_t flags = 0;
        if (p && rev && strcmp(rev, si->revision) == 0) {
            fresh = ks_pod_ref(p);
            flags = KS_WL_SLOT_CREATED;
        } else {
            old = p ? ks_pod_ref(p) : NULL;
            if (!p || i >= partition) {
                fresh = sts_pod(x, si, si->start + i);
                if (!fresh) {
                    ks_pod_unref(old);
                    return false;
                }
            }
            if (p && i >= partition) flags = KS_WL_SLOT_REPLACE;
        }
        KS_VEC_PUSH(x->out->rollout.old, old);
        KS_VEC_PUSH(x->out->rollout.fresh, fresh);
        KS_VEC_PUSH(x->out->rollout.flags, flags);
    }
    x->out->rollout.active = true;
    x->out->rollout.kind = KS_WORKLOAD_STATEFULSET;
    x->out->rollout.strategy = "RollingUpdate";
    x->out->rollout.replicas = want;
    x->out->rollout.partition = partition;
    x->out->rollout.parallel = si->parallel;
    return true;
}

static bool expand_statefulset(wl_ctx *x) {
    sts_info si;
    if (!sts_info_init(x, &si)) return false;
    int32_t want = replicas_of(x->w);
    x->out->desired = want;
    int32_t partition;
    if (sts_rolling(x->w, &partition)) {
        bool update;
        if (!sts_update(x, &si, want, partition, &update)) return false;
        if (update) return true;
    }
    bool held = false;
    for (int32_t ord = si.start; ord < si.start + want; ord++) {
        if (wl_name_taken(x, ks_arena_printf(x->a, "%s-%d", x->name, ord))) continue;
        ks_pod *p = sts_pod(x, &si, ord);
        if (!p) return false;
        /* OrderedReady: the next ordinal waits until this one runs */
        push_pod(x, p, held);
        if (!si.parallel) held = true;
    }
    return true;
}

bool ks_statefulset_ordinal(const ks_workload *w, const ks_cluster *c, const ks_wl_options *o, int32_t ordinal,
                            ks_wl_objects *out, ks_errors *errs) {
    memset(out, 0, sizeof(*out));
    wl_ctx x;
    wl_ctx_init(&x, w, c, o, out, errs);
    sts_info si;
    ks_pod *p = NULL;
    size_t nerr = errs->n;
    if (w->kind == KS_WORKLOAD_STATEFULSET && kt_get(spec_of(w), "template") && sts_info_init(&x, &si))
        p = sts_pod(&x, &si, si.start + ordinal);
    if (p) KS_VEC_PUSH(out->pods, p);
    wl_ctx_fini(&x);
    if (!p || errs->n != nerr) {
        ks_wl_objects_free(out);
        return false;
    }
    return true;
}

/* Taints a DaemonSet pod must tolerate to be placed on a node: NoSchedule
 * and NoExecute (predicates in daemon_controller.go). */
static bool untolerated(const ks_pod *p, const ks_node *n) {
    for (uint32_t i = 0; i < n->ntaints; i++) {
        const ks_taint *t = &n->taints[i];
        if (t->effect != KS_EFFECT_NO_SCHEDULE && t->effect != KS_EFFECT_NO_EXECUTE) continue;
        if (!ks_tolerations_tolerate(p->tolerations, p->ntolerations, t)) return true;
    }
    return false;
}

bool wl_daemon_targets(const ks_pod *probe, const ks_node *n) {
    if (probe->node_name && probe->node_name != n->name) return false;
    for (uint32_t i = 0; i < probe->node_selector.n; i++) {
        ks_id v;
        if (!ks_labels_get(&n->labels, probe->node_selector.kv[i].key, &v) || v != probe->node_selector.kv[i].value)
            return false;
    }
    if (probe->has_required_node_affinity &&
        !ks_node_selector_matches(&probe->required_node_affinity, &n->labels, n->name))
        return false;
    return !untolerated(probe, n);
}

/* util.AddOrUpdateDaemonPodTolerations: appended unless an equal one is there. */
static void add_daemon_tolerations(wl_ctx *x, ks_tree *spec) {
    static const struct {
        const char *key, *effect;
    } tols[] = {{"node.kubernetes.io/not-ready", "NoExecute"},
                {"node.kubernetes.io/unreachable", "NoExecute"},
                {"node.kubernetes.io/disk-pressure", "NoSchedule"},
                {"node.kubernetes.io/memory-pressure", "NoSchedule"},
                {"node.kubernetes.io/pid-pressure", "NoSchedule"},
                {"node.kubernetes.io/unschedulable", "NoSchedule"},
                {"node.kubernetes.io/network-unavailable", "NoSchedule"}};
    const ks_tree *hn = kt_get(spec, "hostNetwork");
    bool host_network = hn && hn->type == KT_BOOL && hn->bval;
    ks_tree *list = (ks_tree *)kt_get(spec, "tolerations");
    if (!list || list->type != KT_SEQ) {
        list = kt_new(x->a, KT_SEQ, x->line);
        kt_map_set(x->a, spec, "tolerations", list);
    }
    for (size_t i = 0; i < sizeof(tols) / sizeof(tols[0]); i++) {
        if (i == 6 && !host_network) break;
        ks_tree *t = kt_new(x->a, KT_MAP, x->line);
        wl_set_str(x->a, t, "key", tols[i].key);
        wl_set_str(x->a, t, "operator", "Exists");
        wl_set_str(x->a, t, "effect", tols[i].effect);
        /* MatchToleration: same key, operator, value and effect */
        int found = -1;
        for (uint32_t j = 0; j < list->n; j++) {
            const ks_tree *o = list->items[j];
            const ks_tree *k = kt_get(o, "key"), *op = kt_get(o, "operator"), *e = kt_get(o, "effect"),
                          *v = kt_get(o, "value");
            if (k && k->text && strcmp(k->text, tols[i].key) == 0 && op && op->text &&
                strcmp(op->text, "Exists") == 0 && e && e->text && strcmp(e->text, tols[i].effect) == 0 &&
                (!v || !v->text || !*v->text))
                found = (int)j;
        }
        if (found >= 0) list->items[found] = t;
        else kt_seq_add(x->a, list, t);
    }
}

/* ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity
 * becomes the one term matchFields metadata.name In [node]. */
static void pin_to_node(wl_ctx *x, ks_tree *spec, const char *node) {
    ks_tree *aff = wl_map_child(x->a, spec, "affinity");
    ks_tree *na = wl_map_child(x->a, aff, "nodeAffinity");
    ks_tree *req = wl_map_child(x->a, na, "requiredDuringSchedulingIgnoredDuringExecution");
    ks_tree *terms = kt_new(x->a, KT_SEQ, x->line);
    ks_tree *term = kt_new(x->a, KT_MAP, x->line);
    ks_tree *mf = kt_new(x->a, KT_SEQ, x->line);
    ks_tree *r = kt_new(x->a, KT_MAP, x->line);
    wl_set_str(x->a, r, "key", "metadata.name");
    wl_set_str(x->a, r, "operator", "In");
    ks_tree *vals = kt_new(x->a, KT_SEQ, x->line);
    kt_seq_add(x->a, vals, kt_string(x->a, node, x->line));
    kt_map_set(x->a, r, "values", vals);
    kt_seq_add(x->a, mf, r);
    kt_map_set(x->a, term, "matchFields", mf);
    kt_seq_add(x->a, terms, term);
    kt_map_set(x->a, req, "nodeSelectorTerms", terms);
}

/* NodeShouldRunDaemonPod's second answer: a pod already there may stay
 * (the node still selected, no untolerated NoExecute taint). */
static bool daemon_continues(const ks_pod *probe, const ks_node *n) {
    if (wl_daemon_targets(probe, n)) return true;
    if (probe->node_name && probe->node_name != n->name) return false;
    for (uint32_t i = 0; i < probe->node_selector.n; i++) {
        ks_id v;
        if (!ks_labels_get(&n->labels, probe->node_selector.kv[i].key, &v) || v != probe->node_selector.kv[i].value)
            return false;
    }
    if (probe->has_required_node_affinity &&
        !ks_node_selector_matches(&probe->required_node_affinity, &n->labels, n->name))
        return false;
    for (uint32_t i = 0; i < n->ntaints; i++)
        if (n->taints[i].effect == KS_EFFECT_NO_EXECUTE &&
            !ks_tolerations_tolerate(probe->tolerations, probe->ntolerations, &n->taints[i]))
            return false;
    return true;
}

/* A pod of the set is on n: bound there, or pinned there by its affinity. */
static bool daemon_pod_on(const ks_cluster *c, const ks_pod *p, const ks_node *n) {
    (void)c;
    if (p->node_name) return p->node_name == n->name;
    return p->has_required_node_affinity && ks_node_selector_matches(&p->required_node_affinity, &n->labels, n->name);
}

/* intstr.GetScaledValueFromIntOrPercent of an update strategy field. */
static int32_t scaled(const ks_tree *v, int32_t total, bool round_up, int32_t dflt) {
    if (!v) return dflt;
    if (v->type == KT_INT) return (int32_t)v->ival;
    if (v->type != KT_STRING || !v->text) return dflt;
    int64_t pct = atoi(v->text);
    return (int32_t)(round_up ? ((int64_t)total * pct + 99) / 100 : (int64_t)total * pct / 100);
}

/* The DaemonSet controller's view of one node during an update. */
typedef struct ds_slot {
    ks_pod *old, *fresh;
    uint8_t flags;
} ds_slot;

static void ds_slots_free(ds_slot *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        ks_pod_unref(v[i].old);
        ks_pod_unref(v[i].fresh);
    }
    free(v);
}

typedef struct ds_info {
    ks_tree *pt, *owner;
    const char *prefix, *hash, *generation;
    bool rolling;
} ds_info;

static ks_pod *daemon_pod(wl_ctx *x, const ds_info *d, const ks_node *n) {
    const char *name = wl_generate_name(x, d->prefix);
    ks_tree *t = wl_pod_tree(x, d->pt, name, d->prefix, d->owner);
    pin_to_node(x, (ks_tree *)kt_get(t, "spec"), ks_str(n->name));
    return wl_decode_pod(x, t);
}

/* IsPodUpdated: the pod carries the template's hash or generation. */
static bool daemon_pod_updated(const ds_info *d, const ks_pod *p) {
    const char *h = pod_label(p, "controller-revision-hash");
    const char *g = pod_label(p, "pod-template-generation");
    return (h && strcmp(h, d->hash) == 0) || (d->generation && g && strcmp(g, d->generation) == 0);
}

/* One node: the set's pods there (an outdated one and an updated one),
 * the pod to create, and what the controller may do. */
static bool daemon_node(wl_ctx *x, const ds_info *d, const ks_pod *probe, const ks_node *n, ks_pod *const *mine,
                        uint32_t nmine, ds_slot *s) {
    memset(s, 0, sizeof(*s));
    bool run = wl_daemon_targets(probe, n), cont = run || daemon_continues(probe, n);
    s->flags = (uint8_t)((run ? KS_WL_SLOT_RUN : 0) | (cont ? KS_WL_SLOT_CONTINUE : 0));
    for (uint32_t j = 0; j < nmine; j++) {
        if (!daemon_pod_on(x->c, mine[j], n)) continue;
        if (daemon_pod_updated(d, mine[j])) {
            if (!s->fresh) s->fresh = ks_pod_ref(mine[j]), s->flags |= KS_WL_SLOT_CREATED;
        } else if (!s->old) {
            s->old = ks_pod_ref(mine[j]);
        }
    }
    /* outdated under RollingUpdate, or on a node the set left */
    if (s->old && (!cont || d->rolling)) s->flags |= KS_WL_SLOT_REPLACE;
    if (run && !s->fresh && (!s->old || d->rolling)) {
        s->fresh = daemon_pod(x, d, n);
        if (!s->fresh) return false;
        /* a node without the set's pod gets one in the first sync */
        if (!s->old) {
            s->flags |= KS_WL_SLOT_CREATED;
            push_pod(x, ks_pod_ref(s->fresh), false);
        }
    }
    return true;
}

/* The DaemonSet's update parameters (util.SurgeCount, UnavailableCount,
 * updatedDesiredNodeCounts): percentages of the targeted nodes round up;
 * both 0 means maxUnavailable 1. */
static void daemon_strategy(wl_ctx *x, const ks_tree *spec, int32_t targeted) {
    const ks_tree *us = kt_get(spec, "updateStrategy");
    const ks_tree *type = kt_get(us, "type");
    bool on_delete = type && type->type == KT_STRING && strcmp(type->text, "OnDelete") == 0;
    const ks_tree *ru = kt_get(us, "rollingUpdate");
    x->out->rollout.kind = KS_WORKLOAD_DAEMONSET;
    x->out->rollout.strategy = on_delete ? "OnDelete" : "RollingUpdate";
    x->out->rollout.desired = targeted;
    x->out->rollout.replicas = targeted;
    x->out->rollout.max_surge = on_delete ? 0 : scaled(kt_get(ru, "maxSurge"), targeted, true, 0);
    x->out->rollout.max_unavailable = on_delete ? 0 : scaled(kt_get(ru, "maxUnavailable"), targeted, true, 1);
    if (targeted > 0 && !x->out->rollout.max_surge && !x->out->rollout.max_unavailable)
        x->out->rollout.max_unavailable = 1;
}

static bool expand_daemonset(wl_ctx *x) {
    const ks_workload *w = x->w;
    ks_tree *tmpl = wl_default_template(x->a, kt_get(spec_of(w), "template"));
    char hash[16];
    const ks_tree *cc = kt_get(kt_get(w->tree, "status"), "collisionCount");
    wl_pod_template_hash(tmpl, cc && cc->type == KT_INT ? cc->ival : -1, hash);
    ds_info d = {.hash = hash};
    const ks_tree *us_type = kt_get(kt_get(spec_of(w), "updateStrategy"), "type");
    d.rolling = !(us_type && us_type->type == KT_STRING && strcmp(us_type->text, "OnDelete") == 0);
    /* util.CreatePodTemplate: tolerations, generation and hash labels */
    d.pt = kt_copy(x->a, tmpl);
    add_daemon_tolerations(x, wl_map_child(x->a, d.pt, "spec"));
    ks_tree *labels = wl_labels(x, d.pt);
    const ks_tree *gen = kt_get(kt_get(w->tree, "metadata"), "generation");
    if (gen && gen->type == KT_INT) d.generation = ks_arena_printf(x->a, "%lld", (long long)gen->ival);
    wl_set_str(x->a, labels, "pod-template-generation", d.generation ? d.generation : "1");
    wl_set_str(x->a, labels, "controller-revision-hash", hash);
    d.prefix = wl_prefix(x, x->name);
    d.owner = wl_owner_ref(x, "apps/v1", "DaemonSet", x->name, x->uid);
    /* the pod as NodeShouldRunDaemonPod sees it: the template's own node
     * selection, with the added tolerations */
    ks_pod *probe = wl_decode_pod(x, wl_pod_tree(x, d.pt, x->name, NULL, NULL));
    if (!probe) return false;
    /* the set's active pods, once */
    KS_VEC(ks_pod *) mine = {0};
    ks_id k = ks_intern("DaemonSet");
    for (uint32_t i = 0; i < x->c->pods.n; i++) {
        ks_pod *p = x->c->pods.v[i];
        const ks_owner_ref *r = ks_pod_controller(p);
        if (p->ns == w->ns && pod_active(p) && r && r->kind == k && r->name && strcmp(r->name, x->name) == 0)
            KS_VEC_PUSH(mine, p);
    }
    KS_VEC(ds_slot) sl = {0};
    int32_t targeted = 0;
    bool ok = true, update = false;
    for (uint32_t i = 0; i < x->c->nodes.n && ok; i++) {
        ds_slot s;
        ok = daemon_node(x, &d, probe, x->c->nodes.v[i], mine.v, mine.n, &s);
        targeted += (s.flags & KS_WL_SLOT_RUN) != 0;
        update |= (s.flags & KS_WL_SLOT_REPLACE) != 0;
        if (s.old || s.fresh) KS_VEC_PUSH(sl, s);
    }
    ks_pod_unref(probe);
    free(mine.v);
    x->out->desired = targeted;
    if (ok && update) {
        /* pods to replace or delete: stepped by the update strategy */
        x->out->rollout.active = true;
        daemon_strategy(x, spec_of(w), targeted);
        for (uint32_t i = 0; i < sl.n; i++) {
            KS_VEC_PUSH(x->out->rollout.old, sl.v[i].old);
            KS_VEC_PUSH(x->out->rollout.fresh, sl.v[i].fresh);
            KS_VEC_PUSH(x->out->rollout.flags, sl.v[i].flags);
        }
        free(sl.v);
        return true;
    }
    ds_slots_free(sl.v, sl.n);
    return ok;
}

/* generateSelector (the Job's registry strategy): unless manualSelector,
 * the template is labelled with the job's name and uid. */
static void job_selector_labels(wl_ctx *x, const ks_tree *spec, ks_tree *tmpl, const char *name, const char *uid) {
    const ks_tree *ms = kt_get(spec, "manualSelector");
    if (ms && ms->type == KT_BOOL && ms->bval) return;
    ks_tree *labels = wl_labels(x, tmpl);
    static const char *const name_keys[] = {"job-name", "batch.kubernetes.io/job-name"};
    static const char *const uid_keys[] = {"controller-uid", "batch.kubernetes.io/controller-uid"};
    for (int i = 0; i < 2; i++) {
        if (!kt_get(labels, name_keys[i])) wl_set_str(x->a, labels, name_keys[i], name);
        if (!kt_get(labels, uid_keys[i])) wl_set_str(x->a, labels, uid_keys[i], uid);
    }
}

/* An index that has an active or a succeeded pod needs no new one. */
static bool active_index(const ks_cluster *c, ks_id ns, const char *job, int32_t idx) {
    ks_id k = ks_intern("Job"), ann = ks_intern("batch.kubernetes.io/job-completion-index");
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (p->ns != ns || (!pod_active(p) && p->phase != KS_PHASE_SUCCEEDED)) continue;
        const ks_owner_ref *r = ks_pod_controller(p);
        if (!r || r->kind != k || !r->name || strcmp(r->name, job) != 0) continue;
        const char *v = ks_annotations_get(&p->annotations, ann);
        if (v && atoi(v) == idx) return true;
    }
    return false;
}

/* Pods of the job that succeeded (a Job from a snapshot). */
static int32_t succeeded_pods(const ks_cluster *c, ks_id ns, const char *job) {
    ks_id k = ks_intern("Job");
    int32_t n = 0;
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        const ks_owner_ref *r = ks_pod_controller(p);
        if (p->ns == ns && p->phase == KS_PHASE_SUCCEEDED && r && r->kind == k && r->name &&
            strcmp(r->name, job) == 0)
            n++;
    }
    return n;
}

/* The Job controller's manageJob: parallelism pods, capped by the
 * completions not yet succeeded. */
static bool job_pods(wl_ctx *x, const ks_tree *spec, const char *name, const char *uid) {
    ks_tree *tmpl = wl_default_template(x->a, kt_get(spec, "template"));
    job_selector_labels(x, spec, tmpl, name, uid);
    const ks_tree *comp = kt_get(spec, "completions"), *par = kt_get(spec, "parallelism");
    int32_t parallelism = par && par->type == KT_INT ? (int32_t)par->ival : 1;
    int32_t want = parallelism;
    int32_t left = comp && comp->type == KT_INT ? (int32_t)comp->ival - succeeded_pods(x->c, x->w->ns, name) : want;
    if (left < want) want = left;
    const ks_tree *susp = kt_get(spec, "suspend");
    if (susp && susp->type == KT_BOOL && susp->bval) want = 0;
    if (want < 0) want = 0;
    x->out->desired = want;
    const ks_tree *mode = kt_get(spec, "completionMode");
    bool indexed = mode && mode->type == KT_STRING && strcmp(mode->text, "Indexed") == 0;
    ks_tree *md = wl_map_child(x->a, tmpl, "metadata");
    /* the job-tracking finalizer on every pod */
    ks_tree *fin = (ks_tree *)kt_get(md, "finalizers");
    if (!fin || fin->type != KT_SEQ) {
        fin = kt_new(x->a, KT_SEQ, x->line);
        kt_map_set(x->a, md, "finalizers", fin);
    }
    bool has_fin = false;
    for (uint32_t i = 0; i < fin->n; i++)
        if (fin->items[i]->text && strcmp(fin->items[i]->text, "batch.kubernetes.io/job-tracking") == 0) has_fin = true;
    if (!has_fin) kt_seq_add(x->a, fin, kt_string(x->a, "batch.kubernetes.io/job-tracking", x->line));
    ks_tree *owner = wl_owner_ref(x, "batch/v1", "Job", name, uid);
    int32_t have = owned_pods(x->c, "Job", x->w->ns, name);
    if (!indexed) {
        const char *prefix = wl_prefix(x, name);
        for (int32_t i = have; i < want; i++) {
            ks_pod *p = wl_decode_pod(x, wl_pod_tree(x, tmpl, wl_generate_name(x, prefix), prefix, owner));
            if (!p) return false;
            push_pod(x, p, false);
        }
        return true;
    }
    /* Indexed: the lowest indexes without an active pod; each pod knows
     * its index (annotation, label, JOB_COMPLETION_INDEX) and hostname */
    ks_tree *specm = wl_map_child(x->a, tmpl, "spec");
    static const char *const lists[] = {"initContainers", "containers"};
    for (int l = 0; l < 2; l++) {
        ks_tree *cs = (ks_tree *)kt_get(specm, lists[l]);
        for (uint32_t i = 0; cs && cs->type == KT_SEQ && i < cs->n; i++) {
            ks_tree *c = cs->items[i];
            ks_tree *env = (ks_tree *)kt_get(c, "env");
            bool has = false;
            for (uint32_t j = 0; env && env->type == KT_SEQ && j < env->n; j++) {
                const ks_tree *en = kt_get(env->items[j], "name");
                if (en && en->text && strcmp(en->text, "JOB_COMPLETION_INDEX") == 0) has = true;
            }
            if (has) continue;
            if (!env || env->type != KT_SEQ) {
                env = kt_new(x->a, KT_SEQ, x->line);
                kt_map_set(x->a, c, "env", env);
            }
            ks_tree *e = kt_new(x->a, KT_MAP, x->line);
            wl_set_str(x->a, e, "name", "JOB_COMPLETION_INDEX");
            ks_tree *fr = wl_map_child(x->a, wl_map_child(x->a, e, "valueFrom"), "fieldRef");
            wl_set_str(x->a, fr, "apiVersion", "v1");
            wl_set_str(x->a, fr, "fieldPath", "metadata.labels['batch.kubernetes.io/job-completion-index']");
            kt_seq_add(x->a, env, e);
        }
    }
    int32_t completions = comp && comp->type == KT_INT ? (int32_t)comp->ival : want;
    int32_t made = have;
    for (int32_t idx = 0; idx < completions && made < want; idx++) {
        if (active_index(x->c, x->w->ns, name, idx)) continue;
        ks_tree *t = kt_copy(x->a, tmpl);
        char ibuf[16];
        snprintf(ibuf, sizeof(ibuf), "%d", idx);
        ks_tree *tmd = wl_map_child(x->a, t, "metadata");
        wl_set_str(x->a, wl_map_child(x->a, tmd, "annotations"), "batch.kubernetes.io/job-completion-index", ibuf);
        wl_set_str(x->a, wl_map_child(x->a, tmd, "labels"), "batch.kubernetes.io/job-completion-index", ibuf);
        wl_set_str(x->a, wl_map_child(x->a, t, "spec"), "hostname", ks_arena_printf(x->a, "%s-%d", name, idx));
        /* podGenerateNameWithIndex */
        const char *prefix = ks_arena_printf(x->a, "%s-%d-", name, idx);
        if (strlen(prefix) > 58) {
            size_t tail = strlen(ibuf) + 2;
            prefix = ks_arena_printf(x->a, "%.*s-%d-", (int)(58 - tail), name, idx);
        }
        ks_pod *p = wl_decode_pod(x, wl_pod_tree(x, t, wl_generate_name(x, prefix), prefix, owner));
        if (!p) return false;
        push_pod(x, p, false);
        made++;
    }
    return true;
}

static bool expand_job(wl_ctx *x) { return job_pods(x, spec_of(x->w), x->name, x->uid); }

/* A CronJob fires now: the Job getJobFromTemplate2 makes, named
 * <cronjob>-<scheduled time in minutes>, then that Job's pods. */
static bool expand_cronjob(wl_ctx *x) {
    const ks_tree *spec = spec_of(x->w);
    const ks_tree *susp = kt_get(spec, "suspend");
    if (susp && susp->type == KT_BOOL && susp->bval) {
        x->out->desired = 0;
        return true;
    }
    const ks_tree *jt = kt_get(spec, "jobTemplate");
    int64_t minutes = x->o->now / 60;
    const char *job = ks_arena_printf(x->a, "%s-%lld", x->name, (long long)minutes);
    const char *juid = wl_uid(x, "Job", job);
    ks_tree *o = wl_object(x, "batch/v1", "Job", job, NULL, juid);
    ks_tree *md = (ks_tree *)kt_get(o, "metadata");
    const ks_tree *jmd = kt_get(jt, "metadata");
    const ks_tree *l = kt_get(jmd, "labels"), *an = kt_get(jmd, "annotations");
    if (l && l->type == KT_MAP) kt_map_set(x->a, md, "labels", kt_copy(x->a, l));
    ks_tree *ann = an && an->type == KT_MAP ? kt_copy(x->a, an) : kt_new(x->a, KT_MAP, x->line);
    wl_set_str(x->a, ann, "batch.kubernetes.io/cronjob-scheduled-timestamp",
               ks_arena_printf(x->a, "%s", wl_now_text(x)));
    kt_map_set(x->a, md, "annotations", ann);
    kt_map_set(x->a, md, "ownerReferences", wl_owner_ref(x, "batch/v1", "CronJob", x->name, x->uid));
    const ks_tree *js = kt_get(jt, "spec");
    ks_tree *jspec = js ? kt_copy(x->a, js) : kt_new(x->a, KT_MAP, x->line);
    kt_map_set(x->a, o, "spec", jspec);
    /* SetDefaults_Job */
    if (!kt_get(jspec, "completions") && !kt_get(jspec, "parallelism")) {
        kt_map_set(x->a, jspec, "completions", kt_int(x->a, 1));
        kt_map_set(x->a, jspec, "parallelism", kt_int(x->a, 1));
    }
    ks_workload *jw = wl_decode_workload(x, o, KS_WORKLOAD_JOB);
    if (!jw) return false;
    KS_VEC_PUSH(x->out->workloads, jw);
    if (!job_pods(x, jspec, job, juid)) return false;
    jw->desired = x->out->desired;
    return true;
}

bool ks_workload_expand(const ks_workload *w, const ks_cluster *c, const ks_wl_options *o, ks_wl_objects *out,
                        ks_errors *errs) {
    memset(out, 0, sizeof(*out));
    if (w->kind == KS_WORKLOAD_SERVICE || !w->tree) {
        out->desired = -1;
        out->next_input_index = c->next_input_index;
        return true;
    }
    /* A workload without a template can only be a hand-written stand-in
     * for the spreading plugins (an API server refuses it): nothing to
     * create. */
    if (!kt_get(kt_get(w->tree, "spec"), w->kind == KS_WORKLOAD_CRONJOB ? "jobTemplate" : "template")) {
        out->desired = -1;
        out->next_input_index = c->next_input_index;
        return true;
    }
    wl_ctx x;
    wl_ctx_init(&x, w, c, o, out, errs);
    size_t nerr = errs->n;
    bool ok = false;
    switch (w->kind) {
    case KS_WORKLOAD_REPLICASET:
    case KS_WORKLOAD_RC: ok = expand_replicaset(&x); break;
    case KS_WORKLOAD_DEPLOYMENT: ok = expand_deployment(&x); break;
    case KS_WORKLOAD_STATEFULSET: ok = expand_statefulset(&x); break;
    case KS_WORKLOAD_DAEMONSET: ok = expand_daemonset(&x); break;
    case KS_WORKLOAD_JOB: ok = expand_job(&x); break;
    case KS_WORKLOAD_CRONJOB: ok = expand_cronjob(&x); break;
    default: ok = true; break;
    }
    ok = ok && errs->n == nerr;
    wl_ctx_fini(&x);
    if (!ok) {
        int32_t d = out->desired;
        ks_wl_objects_free(out);
        out->desired = d;
    }
    return ok;
}

const ks_workload *ks_workload_of_pod(const ks_cluster *c, const ks_pod *p) {
    const ks_owner_ref *r = ks_pod_controller(p);
    if (!r || !r->name) return NULL;
    static const ks_workload_kind kinds[] = {KS_WORKLOAD_REPLICASET, KS_WORKLOAD_STATEFULSET, KS_WORKLOAD_RC,
                                             KS_WORKLOAD_DAEMONSET, KS_WORKLOAD_JOB};
    const ks_workload *w = NULL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !w; i++)
        if (r->kind == ks_intern(ks_workload_kind_name(kinds[i])))
            w = find_workload(c, kinds[i], p->ns, ks_intern(r->name));
    if (!w || !w->owner_kind) return w;
    const ks_workload *up = NULL;
    if (w->kind == KS_WORKLOAD_REPLICASET && w->owner_kind == ks_intern("Deployment"))
        up = find_workload(c, KS_WORKLOAD_DEPLOYMENT, w->ns, w->owner_name);
    else if (w->kind == KS_WORKLOAD_JOB && w->owner_kind == ks_intern("CronJob"))
        up = find_workload(c, KS_WORKLOAD_CRONJOB, w->ns, w->owner_name);
    return up ? up : w;
}
