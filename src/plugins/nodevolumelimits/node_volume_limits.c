/* NodeVolumeLimits (upstream CSILimits): the CSI volumes of the pod plus
 * those already attached by the node's pods must stay within the per-driver
 * limit the node's CSINode reports (spec.drivers[].allocatable.count).
 *
 * A volume counts for a driver through its PVC: the bound PV's CSI source,
 * an in-tree PV translated to CSI when the node migrated its plugin, or,
 * for a claim not bound yet, the provisioner of its StorageClass. Inline
 * in-tree volumes count when their plugin is migrated on the node. A
 * volume used by several pods on the node counts once. The node's
 * VolumeAttachments of CSI PVs count for their attacher too, unless one
 * of the node's pods already counts the volume; as upstream, the pod's
 * own volumes are not compared with them. */
#include "framework/handle.h"
#include "framework/status.h"
#include "plugins/helper/hints.h"
#include "plugins/helper/volumes.h"
#include "util/arena.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REASON_MAX_VOLUME_COUNT "node(s) exceed max volume count"

/* Upstream uses 32 random characters so that the handle it makes up for
 * an unbound claim never equals a real one; any such constant does. */
#define UNBOUND_PREFIX "ksched-unbound-claim"

typedef struct node_volume_limits {
    ks_handle *h;
} node_volume_limits;

static ks_state_key state_key = -1;
/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading it. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    state_key = ks_state_key_get("PreFilterNodeVolumeLimits");
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    node_volume_limits *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    pthread_once(&keys_once, init_keys);
    return pl;
}

static void destroy(void *self) { free(self); }

/* Upstream: CSINode Add|Update, Pod/Delete, PVC/Add, VolumeAttachment/
 * Delete. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_CSINODE, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_POD, KS_ACT_DELETE},
        {KS_EV_PVC, KS_ACT_ADD},
        {KS_EV_VOLUME_ATTACHMENT, KS_ACT_DELETE},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

static bool inline_migratable(const ks_volume *v) { return ks_vol_kind_plugin(v->kind) != NULL; }

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

static int32_t driver_limit(const ks_csinode *c, const char *driver) {
    for (uint32_t i = 0; i < c->ndrivers; i++)
        if (c->drivers[i].name && strcmp(c->drivers[i].name, driver) == 0)
            return c->drivers[i].has_allocatable ? c->drivers[i].allocatable_count : 0;
    return 0;
}

/* VolumeAttachment deletions: a pod with a claim, or with an inline
 * volume that migrates to the attachment's driver. CSINode updates: a
 * driver's limit went up (adds have no hint). A
 * deleted pod that was bound or nominated and had a claim, a generic
 * ephemeral volume or a migratable in-tree volume. A claim the pod uses
 * being added. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    if (ev.resource & KS_EV_CSINODE) {
        if (ev.actions & KS_ACT_ADD) return KS_QUEUE;
        const ks_csinode *o = old_obj && old_obj->kind == KS_KIND_CSINODE ? old_obj->obj : NULL;
        const ks_csinode *m = new_obj && new_obj->kind == KS_KIND_CSINODE ? new_obj->obj : NULL;
        if (!o || !m) return ks_hint_type_error(err, "CSINode");
        for (uint32_t i = 0; i < m->ndrivers; i++) {
            const ks_csi_driver_info *d = &m->drivers[i];
            int32_t now = d->has_allocatable ? d->allocatable_count : 0;
            if (now > driver_limit(o, d->name ? d->name : "")) return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    if (ev.resource & KS_EV_PVC) {
        const ks_pvc *c = new_obj && new_obj->kind == KS_KIND_PVC ? new_obj->obj : NULL;
        if (!c) return ks_hint_type_error(err, "PersistentVolumeClaim");
        return pod_uses_claim(pod, c) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (ev.resource & KS_EV_VOLUME_ATTACHMENT) {
        const ks_volume_attachment *va =
            old_obj && old_obj->kind == KS_KIND_VOLUME_ATTACHMENT ? old_obj->obj : NULL;
        if (!va) return ks_hint_type_error(err, "VolumeAttachment");
        /* a claim (not a generic ephemeral volume), or an inline in-tree
         * volume that migrates to the attacher's driver */
        for (uint32_t i = 0; i < pod->nvolumes; i++) {
            const ks_volume *v = &pod->volumes[i];
            if (v->kind == KS_VOL_PVC) return KS_QUEUE;
            if (!inline_migratable(v)) continue;
            ks_arena *a = ks_arena_new(256);
            char *e = NULL;
            const char *h = ks_vol_inline_csi_handle(a, v, &e);
            ks_arena_free(a);
            if (!h) {
                if (err) *err = ks_xasprintf("converting volume(%s) from inline to csi: %s", v->name, e ? e : "");
                free(e);
                return KS_QUEUE;
            }
            if (strcmp(va->attacher, ks_vol_intree_csi_driver(ks_vol_kind_plugin(v->kind))) == 0) return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    const ks_pod *d = ks_hint_pod(old_obj);
    if (!d) return ks_hint_type_error(err, "Pod");
    if (d->nvolumes == 0) return KS_QUEUE_SKIP;
    if (d->node_name == 0 && d->nominated_node == 0) return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < d->nvolumes; i++) {
        const ks_volume *v = &d->volumes[i];
        if (v->kind == KS_VOL_PVC || v->kind == KS_VOL_EPHEMERAL || inline_migratable(v)) return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* ---- counting ---------------------------------------------------------- */

/* Volumes by unique name "<driver>/<handle>", kept as the two parts (no
 * string is built per node); a claim not bound yet is identified by the
 * claim itself, standing for upstream's made-up handle. Small sets live in
 * the struct: no allocation per node in the common case. */
typedef struct vol {
    const char *driver, *handle;
    const ks_pvc *unbound;
} vol;

typedef struct vol_set {
    uint32_t n, cap;
    vol *v;
    vol local[16];
} vol_set;

static void vs_init(vol_set *s) {
    s->n = 0;
    s->cap = 16;
    s->v = s->local;
}

/* driver1 + "/" + handle1 == driver2 + "/" + handle2, as upstream compares
 * the joined names. */
static bool joined_eq(const char *d1, const char *h1, const char *d2, const char *h2) {
    const char *p[2][3] = {{d1, "/", h1}, {d2, "/", h2}};
    int i = 0, j = 0;
    const char *x = p[0][0], *y = p[1][0];
    for (;;) {
        while (!*x && i < 2) x = p[0][++i];
        while (!*y && j < 2) y = p[1][++j];
        if (!*x || !*y) return !*x && !*y;
        if (*x++ != *y++) return false;
    }
}

static bool vol_eq(const vol *a, const vol *b) {
    if (a->unbound || b->unbound)
        return a->unbound && b->unbound && a->unbound->ns == b->unbound->ns && a->unbound->name == b->unbound->name &&
               strcmp(a->driver, b->driver) == 0;
    return joined_eq(a->driver, a->handle, b->driver, b->handle);
}

static long vs_find(const vol_set *s, const vol *x) {
    for (uint32_t i = 0; i < s->n; i++)
        if (vol_eq(&s->v[i], x)) return i;
    return -1;
}

static void vs_put(vol_set *s, vol x) {
    long i = vs_find(s, &x);
    if (i >= 0) {
        s->v[i] = x;
        return;
    }
    if (s->n == s->cap) {
        vol *nv = ks_xmalloc(2 * s->cap * sizeof(*nv));
        memcpy(nv, s->v, s->n * sizeof(*nv));
        if (s->v != s->local) free(s->v);
        s->v = nv;
        s->cap *= 2;
    }
    s->v[s->n++] = x;
}

static void vs_del(vol_set *s, long i) { s->v[i] = s->v[--s->n]; }

static void vs_free(vol_set *s) {
    if (s->v != s->local) free(s->v);
    s->v = s->local;
    s->n = 0;
}

/* Where counting happens: the memory for names, the store, the node's
 * CSINode; node_dependent records whether the node's CSINode was
 * consulted (in-tree migration), i.e. whether the result holds for every
 * node. */
typedef struct counting {
    ks_arena *a; /* for translated handles; made when first needed */
    const ks_vol_index *x;
    const ks_csinode *cn;
    bool node_dependent;
} counting;

static ks_arena *arena_of(counting *cc) {
    if (!cc->a) cc->a = ks_arena_new(512);
    return cc->a;
}

static bool migrated(counting *cc, const char *plugin) {
    cc->node_dependent = true;
    return ks_vol_migration_on(cc->cn, plugin);
}

/* getCSIDriverInfoFromSC: an unbound claim counts for its class's
 * provisioner (or the CSI driver an in-tree provisioner migrated to). */
static void driver_from_class(counting *cc, const ks_pvc *pvc, vol *out) {
    ks_id cls = ks_vol_pvc_class(pvc);
    if (cls == KS_ID_NONE) return;
    const ks_storage_class *sc = ks_vol_class(cc->x->c, cls);
    if (!sc) return;
    const char *prov = sc->provisioner ? sc->provisioner : "";
    const char *csi = ks_vol_intree_csi_driver(prov);
    if (csi) {
        if (!migrated(cc, prov)) return;
        out->driver = csi;
    } else {
        out->driver = prov;
    }
    out->handle = UNBOUND_PREFIX;
    out->unbound = pvc;
}

/* getCSIDriverInfo for a claim; out->driver stays NULL when the claim
 * does not count. */
static void driver_of_claim(counting *cc, const ks_pvc *pvc, vol *out) {
    memset(out, 0, sizeof(*out));
    const ks_pv *pv = pvc->volume_name != KS_ID_NONE ? ks_vol_index_pv(cc->x, pvc->volume_name) : NULL;
    if (!pv) {
        driver_from_class(cc, pvc, out);
        return;
    }
    if (pv->source == KS_VOL_CSI) {
        out->driver = pv->csi_driver;
        out->handle = pv->volume_handle;
        return;
    }
    const char *plugin = ks_vol_kind_plugin(pv->source);
    if (!plugin || !migrated(cc, plugin)) return;
    char *err = NULL;
    if (!ks_vol_pv_to_csi(arena_of(cc), pv, &out->handle, NULL, &err)) {
        free(err); /* not counted, as upstream */
        out->handle = NULL;
        return;
    }
    out->driver = ks_vol_intree_csi_driver(plugin);
}

/* filterAttachableVolumes: add pod's counted volumes to out. Returns a
 * status for the new pod's missing claims and for translation errors. */
static ks_status *attachable(counting *cc, const ks_pod *pod, bool new_pod, vol_set *out) {
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC && v->kind != KS_VOL_EPHEMERAL) {
            const char *plugin = ks_vol_kind_plugin(v->kind);
            if (!plugin || !migrated(cc, plugin)) continue;
            char *err = NULL;
            const char *h = ks_vol_inline_csi_handle(arena_of(cc), v, &err);
            if (!h) {
                ks_status *s = ks_status_new(KS_ERROR, "converting volume(%s) from inline to csi: %s", v->name, err);
                free(err);
                return s;
            }
            vs_put(out, (vol){ks_vol_intree_csi_driver(plugin), h, NULL});
            continue;
        }
        const char *claim = v->claim_name ? v->claim_name : "";
        if (!*claim) return ks_status_new(KS_ERROR, "PersistentVolumeClaim had no name");
        const ks_pvc *pvc = ks_vol_index_pvc(cc->x, pod->ns, claim);
        if (!pvc) {
            if (!new_pod) continue; /* may not belong to the running pod: not counted */
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not found", ks_str(pod->ns),
                                 claim, claim);
        }
        if (v->kind == KS_VOL_EPHEMERAL && !ks_vol_pvc_is_for_pod(pvc, pod))
            return ks_status_new(KS_ERROR, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                                 ks_str(pvc->ns), ks_str(pvc->name), ks_str(pod->ns), ks_str(pod->name));
        vol x;
        driver_of_claim(cc, pvc, &x);
        if (!x.driver || !*x.driver || !x.handle || !*x.handle) continue;
        vs_put(out, x);
    }
    return NULL;
}

/* What PreFilter leaves for Filter: the store by name and, when no node's
 * CSINode can change it, the incoming pod's volumes counted once. */
typedef struct nvl_state {
    ks_vol_index *x;
    ks_arena *a;
    bool fixed;        /* fresh / fresh_err hold for every node */
    vol_set fresh;
    ks_status *fresh_err;
    /* the VolumeAttachments that count, by node: node name id + 1 ->
     * va_list_* */
    ks_map vas;
} nvl_state;

/* getNodeVolumeAttachmentInfo's entries for one node: "attacher/handle"
 * (as the two parts), the attacher being the driver counted. */
typedef struct va_list_ {
    uint32_t n, cap;
    vol *v;
} va_list_;

static void nvl_state_free(void *p) {
    nvl_state *s = p;
    if (!s) return;
    ks_vol_index_free(s->x);
    vs_free(&s->fresh);
    ks_status_free(s->fresh_err);
    ks_arena_free(s->a);
    size_t it = 0;
    uint64_t k;
    void *v;
    while (ks_map_next(&s->vas, &it, &k, &v)) {
        va_list_ *l = v;
        free(l->v);
        free(l);
    }
    ks_map_free(&s->vas);
    free(s);
}

/* Index the VolumeAttachments by node, keeping those upstream counts: an
 * attacher, a PV name, a PV that exists and is a CSI volume. Two of
 * them with the same attacher and volume handle are one volume. */
static void index_attachments(nvl_state *s, const ks_objects *c) {
    ks_map_init(&s->vas);
    for (uint32_t i = 0; c && i < c->volume_attachments.n; i++) {
        const ks_volume_attachment *va = c->volume_attachments.v[i];
        if (!*va->attacher || !va->has_pv) continue;
        const ks_pv *pv = ks_vol_index_pv(s->x, va->pv_name);
        if (!pv || pv->source != KS_VOL_CSI) continue;
        vol x = {va->attacher, pv->volume_handle ? pv->volume_handle : "", NULL};
        va_list_ *l = ks_map_get(&s->vas, (uint64_t)va->node_name + 1);
        if (!l) {
            l = ks_xcalloc(1, sizeof(*l));
            ks_map_put(&s->vas, (uint64_t)va->node_name + 1, l);
        }
        bool dup = false;
        for (uint32_t j = 0; j < l->n && !dup; j++) dup = vol_eq(&l->v[j], &x);
        if (dup) continue;
        KS_GROW(l->v, l->cap, (size_t)l->n + 1);
        l->v[l->n++] = x;
    }
}

static nvl_state *nvl_state_new(const ks_objects *c, const ks_pod *pod) {
    nvl_state *s = ks_xcalloc(1, sizeof(*s));
    s->x = ks_vol_index_new(c);
    index_attachments(s, c);
    vs_init(&s->fresh);
    counting cc = {NULL, s->x, NULL, false};
    s->fresh_err = attachable(&cc, pod, true, &s->fresh);
    s->a = cc.a;
    s->fixed = !cc.node_dependent;
    /* the set must not point into the struct: it moves with the state */
    if (s->fresh.v == s->fresh.local) {
        vol *v = ks_xmalloc((s->fresh.n ? s->fresh.n : 1) * sizeof(*v));
        memcpy(v, s->fresh.local, s->fresh.n * sizeof(*v));
        s->fresh.v = v;
        s->fresh.cap = s->fresh.n ? s->fresh.n : 1;
    }
    return s;
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    node_volume_limits *pl = self;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind == KS_VOL_PVC || v->kind == KS_VOL_EPHEMERAL || inline_migratable(v)) {
            nvl_state *s = nvl_state_new(pl->h ? ks_handle_objects(pl->h) : NULL, pod);
            ks_cycle_state_write(st, state_key, s, nvl_state_free, NULL);
            return NULL;
        }
    }
    return ks_status_new(KS_SKIP, NULL);
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    node_volume_limits *pl = self;
    if (pod->nvolumes == 0) return NULL;
    const nvl_state *s = ks_cycle_state_read(st, state_key);
    nvl_state *own = NULL;
    if (!s) s = own = nvl_state_new(pl->h ? ks_handle_objects(pl->h) : NULL, pod);
    const ks_csinode *cn = ks_vol_index_csinode(s->x, ni->name);
    vol_set fresh, attached;
    vs_init(&fresh);
    vs_init(&attached);
    ks_status *r = NULL;
    counting cc = {NULL, s->x, cn, false};
    if (s->fixed) {
        if (s->fresh_err) {
            r = ks_status_clone(s->fresh_err);
            goto done;
        }
        if (s->fresh.n == 0 || !cn) goto done;
    }
    bool limited = false;
    for (uint32_t i = 0; cn && i < cn->ndrivers; i++)
        if (cn->drivers[i].has_allocatable) limited = true;
    if (s->fixed && !limited) goto done;
    if (s->fixed) {
        for (uint32_t i = 0; i < s->fresh.n; i++) vs_put(&fresh, s->fresh.v[i]);
    } else {
        r = attachable(&cc, pod, true, &fresh);
        if (r || fresh.n == 0 || !limited) goto done;
    }
    for (uint32_t i = 0; i < ni->npods && !r; i++) r = attachable(&cc, ni->pods[i], false, &attached);
    if (r) goto done; /* an existing pod's error is the status, unwrapped */
    /* A volume already attached for another pod is not attached again. */
    for (uint32_t i = 0; i < attached.n; i++) {
        long j = vs_find(&fresh, &attached.v[i]);
        if (j >= 0) vs_del(&fresh, j);
    }
    const va_list_ *vas = ks_map_get(&s->vas, (uint64_t)ni->name + 1);
    for (uint32_t d = 0; d < cn->ndrivers && !r; d++) {
        const ks_csi_driver_info *di = &cn->drivers[d];
        if (!di->has_allocatable) continue;
        /* a driver listed twice: the later entry's limit wins (map insert) */
        bool later = false;
        for (uint32_t e = d + 1; e < cn->ndrivers; e++)
            if (cn->drivers[e].has_allocatable && strcmp(cn->drivers[e].name, di->name) == 0) later = true;
        if (later) continue;
        int64_t want = 0, have = 0;
        for (uint32_t i = 0; i < fresh.n; i++)
            if (strcmp(fresh.v[i].driver, di->name) == 0) want++;
        if (!want) continue;
        for (uint32_t i = 0; i < attached.n; i++)
            if (strcmp(attached.v[i].driver, di->name) == 0) have++;
        /* attachments of volumes no pod on the node counts */
        for (uint32_t i = 0; vas && i < vas->n; i++)
            if (strcmp(vas->v[i].driver, di->name) == 0 && vs_find(&attached, &vas->v[i]) < 0) have++;
        if (have + want > (int64_t)di->allocatable_count)
            r = ks_status_new(KS_UNSCHEDULABLE, REASON_MAX_VOLUME_COUNT);
    }
done:
    vs_free(&fresh);
    vs_free(&attached);
    ks_arena_free(cc.a);
    nvl_state_free(own);
    return r;
}

const ks_plugin_ops ks_plugin_node_volume_limits = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeVolumeLimits",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .filter = filter,
};
