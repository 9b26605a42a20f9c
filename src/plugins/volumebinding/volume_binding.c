/* VolumeBinding: a pod's PersistentVolumeClaims must be satisfiable on the
 * node. Bound claims need their PV's node affinity to match; unbound
 * claims of WaitForFirstConsumer classes need a matching available PV on
 * the node (smallest that fits, by class, size, access modes, volume mode,
 * selector and node affinity) or dynamic provisioning (a provisioner and
 * the class's allowed topologies); unbound claims of Immediate classes
 * make the pod wait for the PV controller.
 *
 * Reserve assumes the chosen bindings in the plugin's assume cache (a PV
 * gets the claim in its claimRef, a claim to provision gets the
 * selected-node annotation), so later pods see them before any API update;
 * Unreserve reverts them. PreBind hands the bindings to the backend when
 * it can apply them (the simulator then binds the in-memory objects); an
 * assumption is dropped once the backend shows a new version of the
 * object. Scoring (StorageCapacityScoring) is off by default in v1.34:
 * PreScore always skips. */
#include "backend/api_calls.h"
#include "framework/handle.h"
#include "plugins/helper/hints.h"
#include "plugins/helper/volumes.h"
#include "plugins/volumebinding/volume_writes.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REASON_BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define REASON_NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity"
#define REASON_NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define REASON_PV_NOT_EXIST "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define UNBOUND_IMMEDIATE "pod has unbound immediate PersistentVolumeClaims"

#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define NO_PROVISIONER "kubernetes.io/no-provisioner"
/* CycleState.Read of a missing key */
#define NOT_FOUND_STATE "not found"

/* ---- the assume cache -------------------------------------------------- */

/* What Reserve assumed about a PV or claim, on top of the backend's object
 * it was assumed on (`api`, referenced so that its address is not reused
 * while the assumption lives). When the listers' current object is another
 * one, the assumption is stale (upstream: the informer delivered a newer
 * resourceVersion) and dropped. */
typedef struct pv_assumed {
    const ks_pv *api;
    ks_id claim_ns, claim_name;
    char *claim_uid;
} pv_assumed;

typedef struct pvc_assumed {
    const ks_pvc *api;
    ks_id selected_node;
} pvc_assumed;

typedef struct volume_binding {
    ks_handle *h;
    pthread_mutex_t mu; /* the maps: PreBind runs on binding threads */
    ks_map pvs;         /* pv name + 1 -> pv_assumed* */
    ks_map pvcs;        /* pod key of (ns, name) + 1 -> pvc_assumed* */
    int64_t bind_timeout_ms; /* bindTimeoutSeconds */
} volume_binding;

static ks_state_key state_key = -1;
static ks_id hostname_key, available_phase;
/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading it. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    state_key = ks_state_key_get("VolumeBinding");
    hostname_key = ks_intern("kubernetes.io/hostname");
    available_phase = ks_intern("Available");
}

/* ---- per-cycle views ------------------------------------------------------ */

/* A PV as the assume cache shows it: the object with the claimRef that
 * was assumed, if any. */
typedef struct pv_view {
    const ks_pv *pv;
    bool has_claim_ref;
    ks_id claim_ns, claim_name;
    const char *claim_uid;
} pv_view;

/* A claim as the assume cache shows it. */
typedef struct pvc_view {
    const ks_pvc *pvc;
    bool has_selected_node;
    ks_id selected_node;
} pvc_view;

/* A bound claim and its PV (NULL: the PV does not exist). */
typedef struct bound_claim {
    pvc_view claim;
    const pv_view *pv;
} bound_claim;

/* The PVs an unbound claim may get, in the order of upstream's listing,
 * after every check that does not depend on the node (FindMatchingVolume's
 * claimRef, size, volume mode, attributes class, deletion, phase, selector,
 * class and access modes). `bound[i]`: the PV is already bound to the
 * claim. PVs pinned to nodes by a hostname requirement (local volumes) are
 * also indexed by hostname, so that Filter looks at the node's own PVs and
 * the unpinned ones only. */
typedef struct idx_list {
    uint32_t n;
    uint32_t *v; /* candidate indices, ascending */
} idx_list;

typedef struct claim_pvs {
    uint32_t n;
    pv_view *pv;
    bool *bound;
    ks_map by_host; /* hostname value id + 1 -> idx_list* */
    idx_list others;
} claim_pvs;

/* What Filter found on a node: static bindings (PV i to delay claim j)
 * and claims to provision (delay claim indices). */
typedef struct node_volumes {
    uint32_t nstatic, ndynamic;
    const pv_view **static_pv;
    uint32_t *static_claim;
    uint32_t *dynamic_claim;
} node_volumes;

/* The CSIStorageCapacities that may hold a claim to provision (its
 * class, a limit at least its size), found once per cycle; `checked`
 * false when its driver publishes no capacity or it requests no size. */
typedef struct claim_caps {
    bool checked;
    uint32_t n;
    const ks_csi_capacity **v;
} claim_caps;

typedef struct vb_state {
    bool all_bound;
    uint32_t nbound, ndelay;
    bound_claim *bound;
    pvc_view *delay; /* sorted by requested size */
    claim_pvs *cands; /* per delay claim */
    claim_caps *caps; /* per delay claim */
    ks_arena *arena; /* everything above */
    const ks_objects *objects; /* the store this cycle */
    ks_vol_index *index;       /* ... by name, when worth it (else NULL) */
    pthread_mutex_t mu;
    ks_map by_node; /* node name id + 1 -> node_volumes* (malloc'd) */
    bool has_static_bindings;
} vb_state;

static void state_free(void *p) {
    vb_state *s = p;
    if (!s) return;
    size_t it = 0;
    uint64_t k;
    void *v;
    while (ks_map_next(&s->by_node, &it, &k, &v)) {
        node_volumes *nv = v;
        free(nv->static_pv);
        free(nv->static_claim);
        free(nv->dynamic_claim);
        free(nv);
    }
    ks_map_free(&s->by_node);
    for (uint32_t i = 0; s->cands && i < s->ndelay; i++) ks_map_free(&s->cands[i].by_host);
    ks_vol_index_free(s->index);
    pthread_mutex_destroy(&s->mu);
    ks_arena_free(s->arena);
    free(s);
}

/* with_arena: the pod has claims (a skipped state waits with the
 * binding cycle: no arena for it) */
static vb_state *state_new(bool with_arena) {
    vb_state *s = ks_xcalloc(1, sizeof(*s));
    s->arena = with_arena ? ks_arena_new(1024) : NULL;
    pthread_mutex_init(&s->mu, NULL);
    ks_map_init(&s->by_node);
    return s;
}

/* ---- plugin ------------------------------------------------------------- */

static void *create(const ks_args *args, ks_handle *h, char **err) {
    volume_binding *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    int64_t t = 600; /* the configuration's default, without args */
    ks_args_int(ks_args_get(args, "bindTimeoutSeconds"), &t);
    pl->bind_timeout_ms = t * 1000;
    pthread_mutex_init(&pl->mu, NULL);
    ks_map_init(&pl->pvs);
    ks_map_init(&pl->pvcs);
    pthread_once(&keys_once, init_keys);
    return pl;
}

static void pv_assumed_free(pv_assumed *a) {
    if (!a) return;
    ks_pv *api = (ks_pv *)a->api;
    KS_OBJECT_UNREF(api);
    free(a->claim_uid);
    free(a);
}

static void pvc_assumed_free(pvc_assumed *a) {
    if (!a) return;
    ks_pvc *api = (ks_pvc *)a->api;
    KS_OBJECT_UNREF(api);
    free(a);
}

static void destroy(void *self) {
    volume_binding *pl = self;
    size_t it = 0;
    uint64_t k;
    void *v;
    while (ks_map_next(&pl->pvs, &it, &k, &v)) pv_assumed_free(v);
    it = 0;
    while (ks_map_next(&pl->pvcs, &it, &k, &v)) pvc_assumed_free(v);
    ks_map_free(&pl->pvs);
    ks_map_free(&pl->pvcs);
    pthread_mutex_destroy(&pl->mu);
    free(pl);
}

/* Upstream (queueing hints on): StorageClass Add|Update, PVC Add|Update,
 * PV Add|Update, Node Add|UpdateNodeLabel, CSINode Add|Update,
 * CSIStorageCapacity Add|Update, CSIDriver Update. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_STORAGE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_PVC, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_PV, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL},
        {KS_EV_CSINODE, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_CSI_STORAGE_CAPACITY, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_CSI_DRIVER, KS_ACT_UPDATE},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

/* Whether the pod uses the claim (namespace and name), directly or as
 * the claim a generic ephemeral volume generates. */
static bool pod_uses_claim(const ks_pod *pod, const ks_pvc *c) {
    if (c->ns != pod->ns) return false;
    const char *name = ks_str(c->name);
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if ((v->kind == KS_VOL_PVC || v->kind == KS_VOL_EPHEMERAL) && v->claim_name &&
            strcmp(v->claim_name, name) == 0)
            return true;
    }
    return false;
}

static bool requirements_equal(const ks_requirement *a, const ks_requirement *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].nvalues != b[i].nvalues || a[i].num != b[i].num)
            return false;
        for (uint32_t j = 0; j < a[i].nvalues; j++)
            if (a[i].values[j] != b[i].values[j]) return false;
    }
    return true;
}

static bool topologies_equal(const ks_storage_class *a, const ks_storage_class *b) {
    if (a->nallowed_topologies != b->nallowed_topologies) return false;
    for (uint32_t i = 0; i < a->nallowed_topologies; i++) {
        const ks_node_selector_term *x = &a->allowed_topologies[i], *y = &b->allowed_topologies[i];
        if (x->nexpr != y->nexpr || x->nfields != y->nfields || !requirements_equal(x->exprs, y->exprs, x->nexpr) ||
            !requirements_equal(x->fields, y->fields, x->nfields))
            return false;
    }
    return true;
}

static const char *migrated_plugins(const ks_csinode *c) {
    ks_id v;
    return ks_labels_get(&c->annotations, ks_intern("storage.alpha.kubernetes.io/migrated-plugins"), &v) ? ks_str(v)
                                                                                                        : "";
}

/* Storage classes: a new one, or changed allowed topologies. Claims: one
 * the pod uses. CSINodes: a new one, or a change of the migrated plugins.
 * CSIStorageCapacities: a new one, or a larger volume limit. CSIDrivers:
 * storage capacity turned off for a driver of the pod's inline CSI
 * volumes. PVs and nodes have no hint. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    if (ev.resource & KS_EV_STORAGE_CLASS) {
        const ks_storage_class *o = old_obj && old_obj->kind == KS_KIND_STORAGE_CLASS ? old_obj->obj : NULL;
        const ks_storage_class *m = new_obj && new_obj->kind == KS_KIND_STORAGE_CLASS ? new_obj->obj : NULL;
        if (!m) return ks_hint_type_error(err, "StorageClass");
        if (!o) return KS_QUEUE;
        return topologies_equal(o, m) ? KS_QUEUE_SKIP : KS_QUEUE;
    }
    if (ev.resource & KS_EV_PVC) {
        const ks_pvc *c = new_obj && new_obj->kind == KS_KIND_PVC ? new_obj->obj : NULL;
        if (!c) return ks_hint_type_error(err, "PersistentVolumeClaim");
        return pod_uses_claim(pod, c) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (ev.resource & KS_EV_CSINODE) {
        if (!old_obj) return KS_QUEUE;
        const ks_csinode *o = old_obj->kind == KS_KIND_CSINODE ? old_obj->obj : NULL;
        const ks_csinode *m = new_obj && new_obj->kind == KS_KIND_CSINODE ? new_obj->obj : NULL;
        if (!o || !m) return ks_hint_type_error(err, "CSINode");
        return strcmp(migrated_plugins(o), migrated_plugins(m)) != 0 ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (ev.resource & KS_EV_CSI_STORAGE_CAPACITY) {
        const ks_csi_capacity *m = new_obj && new_obj->kind == KS_KIND_CSI_CAPACITY ? new_obj->obj : NULL;
        if (!m) return ks_hint_type_error(err, "CSIStorageCapacity");
        if (!old_obj) return KS_QUEUE;
        const ks_csi_capacity *o = old_obj->kind == KS_KIND_CSI_CAPACITY ? old_obj->obj : NULL;
        if (!o) return ks_hint_type_error(err, "CSIStorageCapacity");
        /* a new object, or a volume limit that appeared or went up */
        bool has_new = m->has_max_size || m->has_capacity, has_old = o->has_max_size || o->has_capacity;
        int64_t now = m->has_max_size ? m->max_size : m->capacity, before = o->has_max_size ? o->max_size : o->capacity;
        return has_new && (!has_old || now > before) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (ev.resource & KS_EV_CSI_DRIVER) {
        const ks_csi_driver *o = old_obj && old_obj->kind == KS_KIND_CSI_DRIVER ? old_obj->obj : NULL;
        const ks_csi_driver *m = new_obj && new_obj->kind == KS_KIND_CSI_DRIVER ? new_obj->obj : NULL;
        if (!o || !m) return ks_hint_type_error(err, "CSIDriver");
        /* capacity tracking turned off for a driver of the pod's inline
         * CSI volumes */
        if (!o->storage_capacity || m->storage_capacity) return KS_QUEUE_SKIP;
        const char *name = ks_str(m->name);
        for (uint32_t i = 0; i < pod->nvolumes; i++) {
            const ks_volume *v = &pod->volumes[i];
            if (v->csi_driver && strcmp(v->csi_driver, name) == 0) return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    return KS_QUEUE;
}

static const ks_objects *objects(const volume_binding *pl) { return pl->h ? ks_handle_objects(pl->h) : NULL; }

static uint64_t pvc_key(ks_id ns, ks_id name) { return ks_pod_key(ns, name) + 1; }

/* Drop assumptions whose object the backend changed or removed. Called
 * with the lock held. */
static const ks_pv *lookup_pv(const ks_vol_index *x, const ks_objects *c, ks_id name) {
    return x ? ks_vol_index_pv(x, name) : ks_vol_pv(c, name);
}

static const ks_pvc *lookup_pvc(const ks_vol_index *x, const ks_objects *c, ks_id ns, const char *name) {
    return x ? ks_vol_index_pvc(x, ns, name) : ks_vol_pvc(c, ns, name);
}

static void purge_stale(volume_binding *pl, const ks_vol_index *x, const ks_objects *c) {
    size_t it;
    uint64_t k, drop[64];
    void *v;
    /* the objects assumed on may be gone: compare pointers only */
    for (size_t nd = 64; nd == 64;) {
        nd = 0;
        it = 0;
        while (nd < 64 && ks_map_next(&pl->pvs, &it, &k, &v))
            if (lookup_pv(x, c, (ks_id)(k - 1)) != ((pv_assumed *)v)->api) drop[nd++] = k;
        for (size_t i = 0; i < nd; i++) pv_assumed_free(ks_map_del(&pl->pvs, drop[i]));
    }
    for (size_t nd = 64; nd == 64;) {
        nd = 0;
        it = 0;
        while (nd < 64 && ks_map_next(&pl->pvcs, &it, &k, &v)) {
            ks_id ns = (ks_id)((k - 1) >> 32), name = (ks_id)((k - 1) & 0xffffffffu);
            if (lookup_pvc(x, c, ns, ks_str(name)) != ((pvc_assumed *)v)->api) drop[nd++] = k;
        }
        for (size_t i = 0; i < nd; i++) pvc_assumed_free(ks_map_del(&pl->pvcs, drop[i]));
    }
}

/* The assume cache's view of a PV / claim (lock held). */
static void view_pv(volume_binding *pl, const ks_pv *pv, pv_view *out) {
    memset(out, 0, sizeof(*out));
    out->pv = pv;
    const pv_assumed *a = ks_map_get(&pl->pvs, (uint64_t)pv->name + 1);
    if (a) {
        out->has_claim_ref = true;
        out->claim_ns = a->claim_ns;
        out->claim_name = a->claim_name;
        out->claim_uid = a->claim_uid;
    } else {
        out->has_claim_ref = pv->has_claim_ref;
        out->claim_ns = pv->claim_ns;
        out->claim_name = pv->claim_name;
        out->claim_uid = pv->claim_uid;
    }
}

static void view_pvc(volume_binding *pl, const ks_pvc *pvc, pvc_view *out) {
    memset(out, 0, sizeof(*out));
    out->pvc = pvc;
    const pvc_assumed *a = ks_map_get(&pl->pvcs, pvc_key(pvc->ns, pvc->name));
    const char *sel = ks_vol_pvc_annotation(pvc, ANN_SELECTED_NODE);
    if (a) {
        out->has_selected_node = true;
        out->selected_node = a->selected_node;
    } else if (sel) {
        out->has_selected_node = true;
        out->selected_node = ks_intern(sel);
    }
}

/* isPVCFullyBound: the claim names its volume and the PV controller
 * finished the binding. */
static bool fully_bound(const ks_pvc *pvc) {
    return pvc->volume_name != KS_ID_NONE && ks_vol_pvc_annotation(pvc, ANN_BIND_COMPLETED) != NULL;
}

/* podHasPVCs: every claim must exist, not be lost or being deleted, and
 * an ephemeral volume's claim must belong to the pod. */
static ks_status *check_claims_exist(const ks_objects *c, const ks_pod *pod, bool *has) {
    *has = false;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC && v->kind != KS_VOL_EPHEMERAL) continue;
        *has = true;
        const char *name = v->claim_name ? v->claim_name : "";
        const ks_pvc *pvc = ks_vol_pvc(c, pod->ns, name);
        if (!pvc) {
            if (v->kind == KS_VOL_EPHEMERAL)
                return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                     "\"%s\"",
                                     name);
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"%s\" not found", name);
        }
        if (strcmp(ks_str(pvc->phase), "Lost") == 0)
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" bound to non-existent persistentvolume \"%s\"", name,
                                 ks_str(pvc->volume_name));
        if (pvc->deleting)
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"%s\" is being deleted",
                                 name);
        if (v->kind == KS_VOL_EPHEMERAL && !ks_vol_pvc_is_for_pod(pvc, pod))
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "PVC %s/%s was not created for pod %s/%s (pod is not owner)", ks_str(pvc->ns), name,
                                 ks_str(pod->ns), ks_str(pod->name));
    }
    return NULL;
}

/* IsDelayBindingMode: the claim's class exists and waits for the first
 * consumer. */
static bool delay_binding(const ks_objects *c, const ks_pvc *pvc) {
    ks_id cls = ks_vol_pvc_class(pvc);
    if (cls == KS_ID_NONE) return false;
    const ks_storage_class *sc = ks_vol_class(c, cls);
    return sc && sc->binding_mode == KS_BIND_WAIT_FOR_FIRST_CONSUMER;
}

/* Claims sort by requested size (sort.Sort over few claims: insertion
 * sort, which keeps equal claims in pod order). */
static void sort_by_size(pvc_view *v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && v[j].pvc->request < v[j - 1].pvc->request; j--) {
            pvc_view t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* IsVolumeBoundToClaim. */
static bool bound_to_claim(const pv_view *v, const ks_pvc *pvc) {
    if (!v->has_claim_ref) return false;
    if (v->claim_name != pvc->name || v->claim_ns != pvc->ns) return false;
    char buf[512];
    if (v->claim_uid && *v->claim_uid && !str_eq(v->claim_uid, ks_vol_pvc_uid(pvc, buf, sizeof buf))) return false;
    return true;
}

/* CheckAccessModes: every mode the claim asks for is one of the PV's. */
static bool access_ok(const ks_pvc *pvc, const ks_pv *pv) { return (pvc->access_modes & ~pv->access_modes) == 0; }

/* The hostnames a PV is pinned to: every term of its node affinity has a
 * hostname In requirement (NULL: not pinned). */
static const ks_requirement *pinned_host(const ks_pv *pv, uint32_t term) {
    const ks_node_selector_term *t = &pv->node_affinity.terms[term];
    for (uint32_t j = 0; j < t->nexpr; j++)
        if (t->exprs[j].key == hostname_key && t->exprs[j].op == KS_OP_IN) return &t->exprs[j];
    return NULL;
}

static bool is_pinned(const ks_pv *pv) {
    if (!pv->has_node_affinity || pv->node_affinity.nterms == 0) return false;
    for (uint32_t i = 0; i < pv->node_affinity.nterms; i++)
        if (!pinned_host(pv, i)) return false;
    return true;
}

typedef struct host_idx {
    ks_id host;
    uint32_t idx;
} host_idx;

static int cmp_host_idx(const void *x, const void *y) {
    const host_idx *a = x, *b = y;
    if (a->host != b->host) return a->host < b->host ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The node-independent part of FindMatchingVolume for one claim, over the
 * PVs of its class as the cache shows them (lock held). */
static void claim_candidates(volume_binding *pl, ks_arena *a, const ks_objects *c, const pvc_view *claim,
                             claim_pvs *out) {
    const ks_pvc *pvc = claim->pvc;
    ks_id cls = ks_vol_pvc_class(pvc);
    uint32_t cap = c ? c->pvs.n : 0, npinned = 0, pinned_cap = 0;
    out->pv = ks_arena_calloc(a, cap + 1, sizeof(*out->pv));
    out->bound = ks_arena_calloc(a, cap + 1, sizeof(*out->bound));
    out->others.v = ks_arena_calloc(a, cap + 1, sizeof(uint32_t));
    ks_map_init(&out->by_host);
    host_idx *pinned = NULL;
    for (uint32_t j = 0; j < cap; j++) {
        const ks_pv *pv = c->pvs.v[j];
        /* upstream lists the PVs of the claim's class only */
        if (ks_vol_pv_class(pv) != cls) continue;
        pv_view v;
        view_pv(pl, pv, &v);
        bool bound = bound_to_claim(&v, pvc);
        if (v.has_claim_ref && !bound) continue;
        if (pv->capacity < pvc->request) continue;
        if (pv->volume_mode != pvc->volume_mode) continue;
        if (pv->vac != pvc->vac) continue;
        if (pv->deleting) continue;
        if (!bound) {
            if (pv->phase != available_phase) continue;
            if (pvc->has_selector && !ks_selector_matches(&pvc->selector, &pv->labels)) continue;
            if (!access_ok(pvc, pv)) continue;
        }
        uint32_t k = out->n++;
        out->pv[k] = v;
        out->bound[k] = bound;
        /* a PV bound to the claim decides on every node: never only indexed */
        if (bound || !is_pinned(pv)) {
            out->others.v[out->others.n++] = k;
            continue;
        }
        for (uint32_t t = 0; t < pv->node_affinity.nterms; t++) {
            const ks_requirement *r = pinned_host(pv, t);
            for (uint32_t h = 0; h < r->nvalues; h++) {
                KS_GROW(pinned, pinned_cap, (size_t)npinned + 1);
                pinned[npinned++] = (host_idx){r->values[h], k};
            }
        }
    }
    /* group by host, candidates in listing order, each once */
    if (npinned) qsort(pinned, npinned, sizeof(*pinned), cmp_host_idx);
    uint32_t *all = npinned ? ks_arena_calloc(a, npinned, sizeof(uint32_t)) : NULL;
    for (uint32_t i = 0, used = 0; i < npinned;) {
        uint32_t j = i;
        idx_list *l = ks_arena_alloc(a, sizeof(*l));
        l->v = all + used;
        for (; j < npinned && pinned[j].host == pinned[i].host; j++)
            if (!l->n || l->v[l->n - 1] != pinned[j].idx) l->v[l->n++] = pinned[j].idx;
        used += l->n;
        ks_map_put(&out->by_host, (uint64_t)pinned[i].host + 1, l);
        i = j;
    }
    free(pinned);
}

/* hasEnoughCapacity, the part that holds for every node: only drivers
 * that opt in (CSIDriver spec.storageCapacity) are checked, and only
 * claims that request a size; the capacities that may then hold the
 * claim are those of its class whose limit (maximumVolumeSize when set,
 * else capacity; neither: nothing to offer) is at least that size. A
 * claim without a usable class is left to check_provisions. */
static void claim_capacities(ks_arena *a, const ks_objects *c, const ks_pvc *pvc, claim_caps *out) {
    memset(out, 0, sizeof(*out));
    if (!pvc->has_request) return;
    ks_id cls = ks_vol_pvc_class(pvc);
    const ks_storage_class *sc = cls != KS_ID_NONE ? ks_vol_class(c, cls) : NULL;
    if (!sc || !sc->provisioner) return;
    const ks_csi_driver *d = ks_vol_csi_driver(c, sc->provisioner);
    if (!d || !d->storage_capacity) return;
    out->checked = true;
    uint32_t n = c->csi_capacities.n;
    if (!n) return;
    out->v = ks_arena_calloc(a, n, sizeof(*out->v));
    for (uint32_t i = 0; i < n; i++) {
        const ks_csi_capacity *cap = c->csi_capacities.v[i];
        if (cap->storage_class != sc->name) continue;
        bool has = cap->has_max_size || cap->has_capacity;
        int64_t limit = cap->has_max_size ? cap->max_size : cap->capacity;
        if (has && limit >= pvc->request) out->v[out->n++] = cap;
    }
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    volume_binding *pl = self;
    const ks_objects *c = objects(pl);
    bool has;
    ks_status *err = check_claims_exist(c, pod, &has);
    if (err) return err;
    vb_state *s = state_new(has);
    if (!has) {
        ks_cycle_state_write(st, state_key, s, state_free, NULL);
        return ks_status_new(KS_SKIP, NULL);
    }
    ks_arena *a = s->arena;
    /* maps by name pay off only when many assumptions are checked */
    if (pl->pvs.len + pl->pvcs.len > 16) s->index = ks_vol_index_new(c);
    s->objects = c;
    s->bound = ks_arena_calloc(a, pod->nvolumes, sizeof(*s->bound));
    s->delay = ks_arena_calloc(a, pod->nvolumes, sizeof(*s->delay));
    bool immediate = false;

    pthread_mutex_lock(&pl->mu);
    purge_stale(pl, s->index, c);
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC && v->kind != KS_VOL_EPHEMERAL) continue;
        const ks_pvc *pvc = lookup_pvc(s->index, c, pod->ns, v->claim_name);
        pvc_view view;
        view_pvc(pl, pvc, &view);
        if (fully_bound(pvc)) {
            bound_claim *b = &s->bound[s->nbound++];
            b->claim = view;
            const ks_pv *pv = lookup_pv(s->index, c, pvc->volume_name);
            if (pv) {
                pv_view *pvv = ks_arena_alloc(a, sizeof(*pvv));
                view_pv(pl, pv, pvv);
                b->pv = pvv;
            }
        } else if (delay_binding(c, pvc) && pvc->volume_name == KS_ID_NONE) {
            s->delay[s->ndelay++] = view;
        } else {
            immediate = true;
        }
    }
    if (!immediate && s->ndelay) {
        sort_by_size(s->delay, s->ndelay);
        s->cands = ks_arena_calloc(a, s->ndelay, sizeof(*s->cands));
        for (uint32_t i = 0; i < s->ndelay; i++) claim_candidates(pl, a, c, &s->delay[i], &s->cands[i]);
        s->caps = ks_arena_calloc(a, s->ndelay, sizeof(*s->caps));
        for (uint32_t i = 0; i < s->ndelay; i++) claim_capacities(a, c, s->delay[i].pvc, &s->caps[i]);
    }
    pthread_mutex_unlock(&pl->mu);

    if (immediate) {
        state_free(s);
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, UNBOUND_IMMEDIATE);
    }
    ks_cycle_state_write(st, state_key, s, state_free, NULL);
    return NULL;
}

/* ---- Filter (FindPodVolumes) ---------------------------------------------- */

/* CheckNodeAffinity: the node is matched as a node without a name, so
 * matchFields requirements are not checked. */
static bool affinity_ok(const ks_vol_affinity *aff, const ks_node *node) {
    return !aff->has || ks_node_selector_matches(&aff->sel, &node->labels, KS_ID_NONE);
}

static bool pv_affinity_ok(const ks_pv *pv, const ks_node *node) {
    ks_vol_affinity aff = {pv->has_node_affinity, pv->node_affinity};
    return affinity_ok(&aff, node);
}

/* FindMatchingVolume on a node over the claim's candidates: the node's
 * pinned PVs and the unpinned ones, merged in listing order. A PV already
 * bound to the claim decides alone (itself, or nothing when it does not
 * fit the node); else the smallest fitting PV, the first of equals. */
static const pv_view *find_matching(const claim_pvs *cp, const pv_view **chosen, uint32_t nchosen,
                                    const ks_node *node) {
    static const idx_list none = {0, NULL};
    const idx_list *pinned = &none;
    ks_id host;
    if (ks_labels_get(&node->labels, hostname_key, &host)) {
        const idx_list *l = ks_map_get(&cp->by_host, (uint64_t)host + 1);
        if (l) pinned = l;
    }
    const pv_view *best = NULL;
    for (uint32_t i = 0, j = 0; i < pinned->n || j < cp->others.n;) {
        uint32_t k;
        if (j >= cp->others.n || (i < pinned->n && pinned->v[i] < cp->others.v[j])) k = pinned->v[i++];
        else k = cp->others.v[j++];
        const pv_view *v = &cp->pv[k];
        bool taken = false;
        for (uint32_t c = 0; c < nchosen; c++) taken |= chosen[c]->pv == v->pv;
        if (taken) continue;
        bool aff = pv_affinity_ok(v->pv, node);
        if (cp->bound[k]) return aff ? v : NULL;
        if (!aff) continue;
        if (!best || best->pv->capacity > v->pv->capacity) best = v;
    }
    return best;
}

/* MatchTopologySelectorTerms over a class's allowedTopologies: no terms
 * match every node; else some term whose every expression has the node's
 * label value among its values. */
static bool topology_ok(const ks_storage_class *sc, const ks_node *node) {
    if (sc->nallowed_topologies == 0) return true;
    for (uint32_t i = 0; i < sc->nallowed_topologies; i++) {
        const ks_node_selector_term *t = &sc->allowed_topologies[i];
        bool all = true;
        for (uint32_t j = 0; j < t->nexpr && all; j++) {
            ks_id v;
            if (!ks_labels_get(&node->labels, t->exprs[j].key, &v)) {
                all = false;
                break;
            }
            bool in = false;
            for (uint32_t k = 0; k < t->exprs[j].nvalues; k++) in |= t->exprs[j].values[k] == v;
            all = in;
        }
        if (all) return true;
    }
    return false;
}

typedef struct find_result {
    bool node_conflict, bind_conflict, not_enough_space, pv_missing;
    ks_status *err;
    node_volumes *nv;
} find_result;

/* checkBoundClaims: each bound claim's PV must exist and its (translated,
 * when the node migrated the plugin) node affinity match the node. */
static void check_bound(const vb_state *s, const ks_node_info *ni, find_result *r) {
    const ks_csinode *cn = NULL;
    bool cn_looked = false;
    for (uint32_t i = 0; i < s->nbound; i++) {
        const pv_view *v = s->bound[i].pv;
        if (!v) {
            r->pv_missing = true;
            return;
        }
        const ks_pv *pv = v->pv;
        const char *plugin = ks_vol_kind_plugin(pv->source);
        if (plugin) {
            if (!cn_looked) {
                cn = s->index ? ks_vol_index_csinode(s->index, ni->name) : ks_vol_csinode(s->objects, ni->name);
                cn_looked = true;
            }
            if (ks_vol_migration_on(cn, plugin)) {
                ks_arena *a = ks_arena_new(512);
                ks_vol_affinity aff;
                const char *handle;
                char *err = NULL;
                bool ok = ks_vol_pv_to_csi(a, pv, &handle, &aff, &err);
                if (!ok) {
                    r->err = ks_status_new(KS_ERROR, "could not translate pv: %s", err);
                    free(err);
                    ks_arena_free(a);
                    return;
                }
                bool match = affinity_ok(&aff, ni->node);
                ks_arena_free(a);
                if (!match) {
                    r->node_conflict = true;
                    return;
                }
                continue;
            }
        }
        if (!pv_affinity_ok(pv, ni->node)) {
            r->node_conflict = true;
            return;
        }
    }
}

/* hasEnoughCapacity, the node's part: some capacity of the claim's
 * (claim_capacities) is in a topology that selects the node (an unset
 * nodeTopology gives no node access). */
static bool enough_capacity(const claim_caps *cc, const ks_node *node) {
    if (!cc->checked) return true;
    for (uint32_t i = 0; i < cc->n; i++)
        if (ks_selector_matches(&cc->v[i]->node_topology, &node->labels)) return true;
    return false;
}

/* checkVolumeProvisions: each claim needs a class with a provisioner,
 * allowed topologies matching the node and, for a driver that publishes
 * storage capacity, a CSIStorageCapacity that holds it. Returns false
 * when not satisfied. */
static bool check_provisions(const vb_state *s, const ks_objects *c, const ks_node *node, const uint32_t *claims,
                             uint32_t n, find_result *r) {
    for (uint32_t i = 0; i < n; i++) {
        const ks_pvc *pvc = s->delay[claims[i]].pvc;
        ks_id cls = ks_vol_pvc_class(pvc);
        if (cls == KS_ID_NONE) {
            r->err = ks_status_new(KS_ERROR, "no class for claim \"%s/%s\"", ks_str(pvc->ns), ks_str(pvc->name));
            return false;
        }
        const ks_storage_class *sc = ks_vol_class(c, cls);
        if (!sc) {
            r->err = ks_status_new(KS_ERROR, "failed to find storage class \"%s\"", ks_str(cls));
            return false;
        }
        const char *prov = sc->provisioner ? sc->provisioner : "";
        if (!*prov || strcmp(prov, NO_PROVISIONER) == 0 || !topology_ok(sc, node)) {
            r->bind_conflict = true;
            return false;
        }
        if (!enough_capacity(&s->caps[claims[i]], node)) {
            r->not_enough_space = true;
            return false;
        }
    }
    return true;
}

static void find_pod_volumes(const vb_state *s, const ks_objects *c, const ks_node_info *ni, find_result *r) {
    const ks_node *node = ni->node;
    memset(r, 0, sizeof(*r));
    if (s->nbound) {
        check_bound(s, ni, r);
        if (r->err) return;
    }
    if (!s->ndelay) return;
    uint32_t *provision = ks_xcalloc(s->ndelay, sizeof(uint32_t));
    uint32_t *match = ks_xcalloc(s->ndelay, sizeof(uint32_t));
    uint32_t nprov = 0, nmatch = 0;
    for (uint32_t i = 0; i < s->ndelay; i++) {
        const pvc_view *cl = &s->delay[i];
        if (cl->has_selected_node) {
            if (cl->selected_node != ni->name) {
                r->bind_conflict = true;
                goto out;
            }
            provision[nprov++] = i;
        } else {
            match[nmatch++] = i;
        }
    }
    node_volumes *nv = ks_xcalloc(1, sizeof(*nv));
    r->nv = nv;
    if (nmatch) {
        nv->static_pv = ks_xcalloc(nmatch, sizeof(*nv->static_pv));
        nv->static_claim = ks_xcalloc(nmatch, sizeof(*nv->static_claim));
        for (uint32_t k = 0; k < nmatch; k++) {
            const pv_view *pv = find_matching(&s->cands[match[k]], nv->static_pv, nv->nstatic, node);
            if (!pv) {
                /* no PV: provisioning may still satisfy it */
                r->bind_conflict = true;
                provision[nprov++] = match[k];
                continue;
            }
            nv->static_pv[nv->nstatic] = pv;
            nv->static_claim[nv->nstatic++] = match[k];
        }
    }
    if (nprov) {
        /* the provisioning check decides whether unbound claims are satisfied */
        r->bind_conflict = false;
        if (check_provisions(s, c, node, provision, nprov, r)) {
            nv->dynamic_claim = ks_xcalloc(nprov, sizeof(uint32_t));
            memcpy(nv->dynamic_claim, provision, nprov * sizeof(uint32_t));
            nv->ndynamic = nprov;
        } else {
            /* upstream keeps the static bindings found but no provisions */
            nv->ndynamic = 0;
        }
    }
out:
    free(provision);
    free(match);
}

static void node_volumes_free(node_volumes *nv) {
    if (!nv) return;
    free(nv->static_pv);
    free(nv->static_claim);
    free(nv->dynamic_claim);
    free(nv);
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    volume_binding *pl = self;
    vb_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND_STATE);
    find_result r;
    find_pod_volumes(s, objects(pl), ni, &r);
    if (r.err) {
        node_volumes_free(r.nv);
        return r.err;
    }
    if (r.node_conflict || r.bind_conflict || r.not_enough_space || r.pv_missing) {
        node_volumes_free(r.nv);
        ks_status *st2 = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL);
        if (r.node_conflict) ks_status_add_reason(st2, "%s", REASON_NODE_CONFLICT);
        if (r.bind_conflict) ks_status_add_reason(st2, "%s", REASON_BIND_CONFLICT);
        if (r.not_enough_space) ks_status_add_reason(st2, "%s", REASON_NOT_ENOUGH_SPACE);
        if (r.pv_missing) ks_status_add_reason(st2, "%s", REASON_PV_NOT_EXIST);
        return st2;
    }
    if (!r.nv) r.nv = ks_xcalloc(1, sizeof(*r.nv));
    pthread_mutex_lock(&s->mu);
    node_volumes_free(ks_map_put(&s->by_node, (uint64_t)ni->name + 1, r.nv));
    if (r.nv->nstatic) s->has_static_bindings = true;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* StorageCapacityScoring is off in v1.34: no scorer, always skip. */
static ks_status *pre_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                            size_t nnodes) {
    return ks_status_new(KS_SKIP, NULL);
}

static ks_status *score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni, int64_t *out) {
    *out = 0;
    return NULL;
}

/* ---- Reserve / Unreserve / PreBind ------------------------------------------ */

static node_volumes *node_result(vb_state *s, const char *node) {
    ks_id id = ks_intern_find(node);
    if (id == KS_ID_INVALID) return NULL;
    pthread_mutex_lock(&s->mu);
    node_volumes *nv = ks_map_get(&s->by_node, (uint64_t)id + 1);
    pthread_mutex_unlock(&s->mu);
    return nv;
}

/* arePodVolumesBound, against the cache (lock held). */
static bool pod_volumes_bound(volume_binding *pl, const ks_objects *c, const ks_pod *pod) {
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC && v->kind != KS_VOL_EPHEMERAL) continue;
        const ks_pvc *pvc = ks_vol_pvc(c, pod->ns, v->claim_name);
        if (!pvc || !fully_bound(pvc)) return false;
        if (v->kind == KS_VOL_EPHEMERAL && !ks_vol_pvc_is_for_pod(pvc, pod)) return false;
    }
    return true;
}

static ks_status *reserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    volume_binding *pl = self;
    vb_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND_STATE);
    node_volumes *nv = node_result(s, node);
    if (!nv) {
        s->all_bound = true;
        return NULL;
    }
    const ks_objects *c = objects(pl);
    pthread_mutex_lock(&pl->mu);
    if (pod_volumes_bound(pl, c, pod)) {
        pthread_mutex_unlock(&pl->mu);
        s->all_bound = true;
        return NULL;
    }
    ks_id node_id = ks_intern(node);
    for (uint32_t i = 0; i < nv->nstatic; i++) {
        /* GetBindVolumeToClaim: only a PV not yet pointing at the claim
         * (or missing the bound-by-controller mark) changes */
        const pv_view *v = nv->static_pv[i];
        const ks_pvc *pvc = s->delay[nv->static_claim[i]].pvc;
        char buf[512];
        const char *uid = ks_vol_pvc_uid(pvc, buf, sizeof buf);
        bool same = v->has_claim_ref && v->claim_name == pvc->name && v->claim_ns == pvc->ns &&
                    str_eq(v->claim_uid, uid);
        if (same) continue;
        pv_assumed *a = ks_xcalloc(1, sizeof(*a));
        a->api = KS_OBJECT_REF((ks_pv *)v->pv);
        a->claim_ns = pvc->ns;
        a->claim_name = pvc->name;
        a->claim_uid = ks_xstrdup(uid);
        pv_assumed_free(ks_map_put(&pl->pvs, (uint64_t)v->pv->name + 1, a));
    }
    for (uint32_t i = 0; i < nv->ndynamic; i++) {
        const ks_pvc *pvc = s->delay[nv->dynamic_claim[i]].pvc;
        pvc_assumed *a = ks_xcalloc(1, sizeof(*a));
        a->api = KS_OBJECT_REF((ks_pvc *)pvc);
        a->selected_node = node_id;
        pvc_assumed_free(ks_map_put(&pl->pvcs, pvc_key(pvc->ns, pvc->name), a));
    }
    pthread_mutex_unlock(&pl->mu);
    s->all_bound = false;
    return NULL;
}

static void unreserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    volume_binding *pl = self;
    vb_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return;
    node_volumes *nv = node_result(s, node);
    if (!nv) return;
    pthread_mutex_lock(&pl->mu);
    for (uint32_t i = 0; i < nv->nstatic; i++)
        pv_assumed_free(ks_map_del(&pl->pvs, (uint64_t)nv->static_pv[i]->pv->name + 1));
    for (uint32_t i = 0; i < nv->ndynamic; i++) {
        const ks_pvc *pvc = s->delay[nv->dynamic_claim[i]].pvc;
        pvc_assumed_free(ks_map_del(&pl->pvcs, pvc_key(pvc->ns, pvc->name)));
    }
    pthread_mutex_unlock(&pl->mu);
}

static ks_status *pre_bind_pre_flight(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    vb_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND_STATE);
    if (s->all_bound) return ks_status_new(KS_SKIP, NULL);
    if (!node_result(s, node)) return ks_status_new(KS_ERROR, "no pod volume found for node \"%s\"", node);
    return NULL;
}

static ks_status *handle_exec(void *h, const ks_api_call *call) { return ks_handle_api_call(h, call); }

static ks_status *pre_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    volume_binding *pl = self;
    vb_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND_STATE);
    if (s->all_bound) return NULL;
    node_volumes *nv = node_result(s, node);
    if (!nv) return ks_status_new(KS_ERROR, "no pod volume found for node \"%s\"", node);
    /* The writes volume_writes.c builds, executed through the scheduler's
     * API dispatcher; where nothing makes them the bindings stay assumed,
     * as a scheduler whose PV controller has not acted yet would see
     * them. */
    ks_volume_binding *b = ks_xcalloc(nv->nstatic + nv->ndynamic + 1, sizeof(*b));
    uint32_t n = 0;
    for (uint32_t i = 0; i < nv->nstatic; i++)
        b[n++] = (ks_volume_binding){s->delay[nv->static_claim[i]].pvc, nv->static_pv[i]->pv, KS_ID_NONE};
    for (uint32_t i = 0; i < nv->ndynamic; i++)
        b[n++] = (ks_volume_binding){s->delay[nv->dynamic_claim[i]].pvc, NULL, ks_intern(node)};
    ks_status *r = pl->h && n ? ks_volume_bindings_write(pod, b, n, pl->bind_timeout_ms, handle_exec, pl->h) : NULL;
    free(b);
    if (ks_status_code(r) == KS_SKIP) {
        ks_status_free(r);
        r = NULL;
    }
    return r;
}

const ks_plugin_ops ks_plugin_volume_binding = {
    .abi_version = KS_ABI_VERSION,
    .name = "VolumeBinding",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .reserve = reserve,
    .unreserve = unreserve,
    .pre_bind_pre_flight = pre_bind_pre_flight,
    .pre_bind = pre_bind,
};
