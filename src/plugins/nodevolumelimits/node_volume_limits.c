/* NodeVolumeLimits (upstream CSILimits): the CSI volumes of the pod plus
 * those already attached by the node's pods must stay within the per-driver
 * limit the node's CSINode reports (spec.drivers[].allocatable.count).
 *
 * A volume counts for a driver through its PVC: the bound PV's CSI source,
 * an in-tree PV translated to CSI when the node migrated its plugin, or,
 * for a claim not bound yet, the provisioner of its StorageClass. Inline
 * in-tree volumes count when their plugin is migrated on the node. A
 * volume used by several pods on the node counts once. VolumeAttachment
 * objects are not modelled (none are loaded), so they add nothing. */
#include "framework/handle.h"
#include "plugins/helper/volumes.h"
#include "util/arena.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

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

static void *create(const ks_args *args, ks_handle *h, char **err) {
    node_volume_limits *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    state_key = ks_state_key_get("PreFilterNodeVolumeLimits");
    return pl;
}

static void destroy(void *self) { free(self); }

/* Upstream: CSINode Add|Update, Pod/Delete, PVC/Add, VolumeAttachment/
 * Delete (no such kind here). */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_CSINODE, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_POD, KS_ACT_DELETE},
        {KS_EV_PVC, KS_ACT_ADD},
    };
    size_t n = 0;
    for (; n < max && n < sizeof(ev) / sizeof(ev[0]); n++) out[n] = ev[n];
    return n;
}

static bool inline_migratable(const ks_volume *v) { return ks_vol_kind_plugin(v->kind) != NULL; }

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    node_volume_limits *pl = self;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind == KS_VOL_PVC || v->kind == KS_VOL_EPHEMERAL || inline_migratable(v)) {
            /* Filter looks up every claim of every pod on each node */
            ks_vol_index *x = ks_vol_index_new(pl->h ? ks_handle_objects(pl->h) : NULL);
            ks_cycle_state_write(st, state_key, x, ks_vol_index_free, NULL);
            return NULL;
        }
    }
    return ks_status_new(KS_SKIP, NULL);
}

/* ---- counting ---------------------------------------------------------- */

/* Volumes by unique name "<driver>/<handle>" -> driver. */
typedef struct vol_set {
    uint32_t n, cap;
    const char **names, **drivers;
} vol_set;

static long vs_find(const vol_set *s, const char *name) {
    for (uint32_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0) return i;
    return -1;
}

static void vs_put(vol_set *s, const char *name, const char *driver) {
    long i = vs_find(s, name);
    if (i >= 0) {
        s->drivers[i] = driver;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->names = ks_xrealloc(s->names, s->cap * sizeof(*s->names));
        s->drivers = ks_xrealloc(s->drivers, s->cap * sizeof(*s->drivers));
    }
    s->names[s->n] = name;
    s->drivers[s->n++] = driver;
}

static void vs_del(vol_set *s, long i) {
    s->names[i] = s->names[s->n - 1];
    s->drivers[i] = s->drivers[s->n - 1];
    s->n--;
}

static void vs_free(vol_set *s) {
    free(s->names);
    free(s->drivers);
}

/* getCSIDriverInfoFromSC: an unbound claim counts for its class's
 * provisioner (or the CSI driver an in-tree provisioner migrated to). */
static void driver_from_class(ks_arena *a, const ks_cluster *c, const ks_csinode *cn, const ks_pvc *pvc,
                              const char **driver, const char **handle) {
    ks_id cls = ks_vol_pvc_class(pvc);
    if (cls == KS_ID_NONE) return;
    const ks_storage_class *sc = ks_vol_class(c, cls);
    if (!sc) return;
    const char *prov = sc->provisioner ? sc->provisioner : "";
    const char *migrated = ks_vol_intree_csi_driver(prov);
    if (migrated) {
        if (!ks_vol_migration_on(cn, prov)) return;
        *driver = migrated;
    } else {
        *driver = prov;
    }
    *handle = ks_arena_printf(a, UNBOUND_PREFIX "-%s/%s", ks_str(pvc->ns), ks_str(pvc->name));
}

/* getCSIDriverInfo for a claim. */
static void driver_of_claim(ks_arena *a, const ks_vol_index *x, const ks_csinode *cn, const ks_pvc *pvc,
                            const char **driver, const char **handle) {
    *driver = *handle = NULL;
    const ks_pv *pv = pvc->volume_name != KS_ID_NONE ? ks_vol_index_pv(x, pvc->volume_name) : NULL;
    if (!pv) {
        driver_from_class(a, x->c, cn, pvc, driver, handle);
        return;
    }
    if (pv->source == KS_VOL_CSI) {
        *driver = pv->csi_driver;
        *handle = pv->volume_handle;
        return;
    }
    const char *plugin = ks_vol_kind_plugin(pv->source);
    if (!plugin || !ks_vol_migration_on(cn, plugin)) return;
    char *err = NULL;
    if (!ks_vol_pv_to_csi(a, pv, handle, NULL, &err)) {
        free(err); /* not counted, as upstream */
        *handle = NULL;
        return;
    }
    *driver = ks_vol_intree_csi_driver(plugin);
}

/* filterAttachableVolumes: add pod's counted volumes to out. Returns a
 * status for the new pod's missing claims and for translation errors. */
static ks_status *attachable(ks_arena *a, const ks_vol_index *x, const ks_csinode *cn, const ks_pod *pod,
                             bool new_pod, vol_set *out) {
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC && v->kind != KS_VOL_EPHEMERAL) {
            const char *plugin = ks_vol_kind_plugin(v->kind);
            if (!plugin || !ks_vol_migration_on(cn, plugin)) continue;
            char *err = NULL;
            const char *h = ks_vol_inline_csi_handle(a, v, &err);
            if (!h) {
                ks_status *s = ks_status_new(KS_ERROR, "converting volume(%s) from inline to csi: %s", v->name, err);
                free(err);
                return s;
            }
            const char *driver = ks_vol_intree_csi_driver(plugin);
            vs_put(out, ks_arena_printf(a, "%s/%s", driver, h), driver);
            continue;
        }
        const char *claim = v->claim_name ? v->claim_name : "";
        if (!*claim) return ks_status_new(KS_ERROR, "PersistentVolumeClaim had no name");
        const ks_pvc *pvc = ks_vol_index_pvc(x, pod->ns, claim);
        if (!pvc) {
            if (!new_pod) continue; /* may not belong to the running pod: not counted */
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not found", ks_str(pod->ns),
                                 claim, claim);
        }
        if (v->kind == KS_VOL_EPHEMERAL && !ks_vol_pvc_is_for_pod(pvc, pod))
            return ks_status_new(KS_ERROR, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                                 ks_str(pvc->ns), ks_str(pvc->name), ks_str(pod->ns), ks_str(pod->name));
        const char *driver, *handle;
        driver_of_claim(a, x, cn, pvc, &driver, &handle);
        if (!driver || !*driver || !handle || !*handle) continue;
        vs_put(out, ks_arena_printf(a, "%s/%s", driver, handle), driver);
    }
    return NULL;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    node_volume_limits *pl = self;
    if (pod->nvolumes == 0) return NULL;
    const ks_vol_index *x = ks_cycle_state_read(st, state_key);
    ks_vol_index *own = NULL;
    if (!x) x = own = ks_vol_index_new(pl->h ? ks_handle_objects(pl->h) : NULL);
    const ks_csinode *cn = ks_vol_csinode(x->c, ni->name);
    ks_arena *a = ks_arena_new(1024);
    vol_set fresh = {0}, attached = {0};
    ks_status *r = attachable(a, x, cn, pod, true, &fresh);
    if (r || fresh.n == 0 || !cn) goto done;
    bool limited = false;
    for (uint32_t i = 0; i < cn->ndrivers; i++)
        if (cn->drivers[i].has_allocatable) limited = true;
    if (!limited) goto done;
    for (uint32_t i = 0; i < ni->npods && !r; i++) r = attachable(a, x, cn, ni->pods[i], false, &attached);
    if (r) {
        /* upstream wraps nothing here: the error is the status */
        goto done;
    }
    /* A volume already attached for another pod is not attached again. */
    for (uint32_t i = 0; i < attached.n; i++) {
        long j = vs_find(&fresh, attached.names[i]);
        if (j >= 0) vs_del(&fresh, j);
    }
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
            if (strcmp(fresh.drivers[i], di->name) == 0) want++;
        if (!want) continue;
        for (uint32_t i = 0; i < attached.n; i++)
            if (strcmp(attached.drivers[i], di->name) == 0) have++;
        if (have + want > (int64_t)di->allocatable_count)
            r = ks_status_new(KS_UNSCHEDULABLE, REASON_MAX_VOLUME_COUNT);
    }
done:
    vs_free(&fresh);
    vs_free(&attached);
    ks_arena_free(a);
    ks_vol_index_free(own);
    return r;
}

const ks_plugin_ops ks_plugin_node_volume_limits = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeVolumeLimits",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .pre_filter = pre_filter,
    .filter = filter,
};
