/* Storage lookups and small upstream helpers for the volume plugins. */
#include "plugins/helper/volumes.h"

#include "util/strbuf.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The loader refuses duplicate names, so the first match is the only one.
 * Linear: stores hold few storage objects next to pods and nodes. */
const ks_pvc *ks_vol_pvc(const ks_objects *c, ks_id ns, const char *name) {
    if (!c || !name) return NULL;
    ks_id id = ks_intern_find(name);
    if (id == KS_ID_INVALID) return NULL;
    for (uint32_t i = 0; i < c->pvcs.n; i++)
        if (c->pvcs.v[i]->name == id && c->pvcs.v[i]->ns == ns) return c->pvcs.v[i];
    return NULL;
}

const ks_pv *ks_vol_pv(const ks_objects *c, ks_id name) {
    if (!c) return NULL;
    for (uint32_t i = 0; i < c->pvs.n; i++)
        if (c->pvs.v[i]->name == name) return c->pvs.v[i];
    return NULL;
}

const ks_storage_class *ks_vol_class(const ks_objects *c, ks_id name) {
    if (!c) return NULL;
    for (uint32_t i = 0; i < c->storage_classes.n; i++)
        if (c->storage_classes.v[i]->name == name) return c->storage_classes.v[i];
    return NULL;
}

const ks_csinode *ks_vol_csinode(const ks_objects *c, ks_id name) {
    if (!c) return NULL;
    for (uint32_t i = 0; i < c->csinodes.n; i++)
        if (c->csinodes.v[i]->name == name) return c->csinodes.v[i];
    return NULL;
}

const ks_csi_driver *ks_vol_csi_driver(const ks_objects *c, const char *name) {
    if (!c || !name) return NULL;
    ks_id id = ks_intern_find(name);
    if (id == KS_ID_INVALID) return NULL;
    for (uint32_t i = 0; i < c->csi_drivers.n; i++)
        if (c->csi_drivers.v[i]->name == id) return c->csi_drivers.v[i];
    return NULL;
}

ks_vol_index *ks_vol_index_new(const ks_objects *c) {
    ks_vol_index *x = ks_xcalloc(1, sizeof(*x));
    x->c = c;
    ks_map_init(&x->pvcs);
    ks_map_init(&x->pvs);
    for (uint32_t i = 0; c && i < c->pvcs.n; i++)
        ks_map_put(&x->pvcs, ks_pod_key(c->pvcs.v[i]->ns, c->pvcs.v[i]->name) + 1, c->pvcs.v[i]);
    for (uint32_t i = 0; c && i < c->pvs.n; i++) ks_map_put(&x->pvs, (uint64_t)c->pvs.v[i]->name + 1, c->pvs.v[i]);
    ks_map_init(&x->csinodes);
    for (uint32_t i = 0; c && i < c->csinodes.n; i++)
        ks_map_put(&x->csinodes, (uint64_t)c->csinodes.v[i]->name + 1, c->csinodes.v[i]);
    return x;
}

void ks_vol_index_free(void *p) {
    ks_vol_index *x = p;
    if (!x) return;
    ks_map_free(&x->pvcs);
    ks_map_free(&x->pvs);
    ks_map_free(&x->csinodes);
    free(x);
}

const ks_pvc *ks_vol_index_pvc(const ks_vol_index *x, ks_id ns, const char *name) {
    ks_id id = name ? ks_intern_find(name) : KS_ID_INVALID;
    if (id == KS_ID_INVALID) return NULL;
    return ks_map_get(&x->pvcs, ks_pod_key(ns, id) + 1);
}

const ks_pv *ks_vol_index_pv(const ks_vol_index *x, ks_id name) {
    return ks_map_get(&x->pvs, (uint64_t)name + 1);
}

const ks_csinode *ks_vol_index_csinode(const ks_vol_index *x, ks_id name) {
    return ks_map_get(&x->csinodes, (uint64_t)name + 1);
}

static const char *label_str(const ks_labels *l, const char *key) {
    ks_id k = ks_intern_find(key), v;
    if (k == KS_ID_INVALID || !ks_labels_get(l, k, &v)) return NULL;
    return ks_str(v);
}

/* The beta class annotation, interned once: classes are looked up per PV
 * and node in VolumeBinding's Filter. */
static ks_id beta_class;
static pthread_once_t beta_class_once = PTHREAD_ONCE_INIT;
static void beta_class_init(void) { beta_class = ks_intern("volume.beta.kubernetes.io/storage-class"); }

ks_id ks_vol_pvc_class(const ks_pvc *pvc) {
    ks_id v;
    pthread_once(&beta_class_once, beta_class_init);
    if (ks_labels_get(&pvc->annotations, beta_class, &v)) return v;
    return pvc->has_storage_class ? pvc->storage_class : KS_ID_NONE;
}

ks_id ks_vol_pv_class(const ks_pv *pv) {
    ks_id v;
    pthread_once(&beta_class_once, beta_class_init);
    return ks_labels_get(&pv->annotations, beta_class, &v) ? v : pv->storage_class;
}

const char *ks_vol_pvc_annotation(const ks_pvc *pvc, const char *key) {
    return label_str(&pvc->annotations, key);
}

const char *ks_vol_csinode_annotation(const ks_csinode *cn, const char *key) {
    return cn ? label_str(&cn->annotations, key) : NULL;
}

const char *ks_vol_pvc_uid(const ks_pvc *pvc, char *buf, int n) {
    if (pvc->uid && *pvc->uid) return pvc->uid;
    snprintf(buf, (size_t)n, "uid-persistentvolumeclaim-%s/%s", ks_str(pvc->ns), ks_str(pvc->name));
    return buf;
}

const char *ks_vol_pod_uid(const ks_pod *pod, char *buf, int n) {
    if (pod->uid && *pod->uid) return pod->uid;
    snprintf(buf, (size_t)n, "uid-pod-%s/%s", ks_str(pod->ns), ks_str(pod->name));
    return buf;
}

bool ks_vol_pvc_is_for_pod(const ks_pvc *pvc, const ks_pod *pod) {
    char buf[512];
    return pvc->ns == pod->ns && pvc->controller_uid &&
           strcmp(pvc->controller_uid, ks_vol_pod_uid(pod, buf, sizeof buf)) == 0;
}

/* ---- CSI migration (csi-translation-lib) ------------------------------ */

static const struct {
    ks_volume_kind kind;
    const char *plugin, *driver;
} intree[] = {
    {KS_VOL_GCE_PD, "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
    {KS_VOL_AWS_EBS, "kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
    {KS_VOL_CINDER, "kubernetes.io/cinder", "cinder.csi.openstack.org"},
    {KS_VOL_AZURE_DISK, "kubernetes.io/azure-disk", "disk.csi.azure.com"},
    {KS_VOL_AZURE_FILE, "kubernetes.io/azure-file", "file.csi.azure.com"},
    {KS_VOL_VSPHERE, "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
    {KS_VOL_PORTWORX, "kubernetes.io/portworx-volume", "pxd.portworx.com"},
};
#define NINTREE (sizeof(intree) / sizeof(intree[0]))

const char *ks_vol_kind_plugin(ks_volume_kind kind) {
    for (size_t i = 0; i < NINTREE; i++)
        if (intree[i].kind == kind) return intree[i].plugin;
    return NULL;
}

const char *ks_vol_intree_csi_driver(const char *plugin) {
    for (size_t i = 0; plugin && i < NINTREE; i++)
        if (strcmp(intree[i].plugin, plugin) == 0) return intree[i].driver;
    return NULL;
}

bool ks_vol_migration_on(const ks_csinode *cn, const char *plugin) {
    if (!cn || !plugin || !*plugin) return false;
    /* v1.34: migration is on (GA) for these; Portworx's gate is on by
     * default; Azure File and vSphere are not considered. */
    static const char *const on[] = {"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd",
                                     "kubernetes.io/azure-disk", "kubernetes.io/cinder",
                                     "kubernetes.io/portworx-volume"};
    bool known = false;
    for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
        if (strcmp(on[i], plugin) == 0) known = true;
    if (!known) return false;
    const char *mpa = ks_vol_csinode_annotation(cn, "storage.alpha.kubernetes.io/migrated-plugins");
    if (!mpa) return false;
    /* a comma separated list, compared token by token as written */
    size_t pl = strlen(plugin);
    for (const char *p = mpa;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == pl && strncmp(p, plugin, n) == 0) return true;
        if (!e) return false;
        p = e + 1;
    }
}

/* ---- translation of in-tree sources to CSI ---------------------------- */

/* KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<vol-id>" or a bare id. */
static bool ebs_volume_id(ks_arena *a, const char *id, const char **out, char **err) {
    if (strncmp(id, "aws://", 6) != 0) {
        *out = id;
        return true;
    }
    const char *path = strchr(id + 6, '/');
    const char *p = path ? path : "";
    while (*p == '/') p++;
    size_t n = strlen(p);
    while (n && p[n - 1] == '/') n--;
    const char *v = ks_arena_strndup(a, p, n);
    if (strncmp(v, "vol-", 4) != 0 || strchr(v, '/')) {
        *err = ks_xasprintf("failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (%s)",
                            id);
        return false;
    }
    *out = v;
    return true;
}

static bool azure_managed(const char *kind) { return kind && strcasecmp(kind, "Managed") == 0; }

static int cmp_cstr(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* gceGetRegionFromZones: every zone "<locale>-<region>-<zone>" must give
 * the same "<locale>-<region>". */
static bool gce_region(ks_arena *a, const char *const *zones, size_t n, const char **out, char **err) {
    const char *regions[64];
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        const char *z = zones[i];
        const char *d1 = strchr(z, '-');
        const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
        if (!d2 || strchr(d2 + 1, '-')) {
            *err = ks_xasprintf("failed to get region from zones: zone in unexpected format, expected: "
                                "{locale}-{region}-{zone}, got: %s",
                                z);
            return false;
        }
        const char *r = ks_arena_strndup(a, z, (size_t)(d2 - z));
        bool seen = false;
        for (size_t j = 0; j < nr; j++)
            if (strcmp(regions[j], r) == 0) seen = true;
        if (!seen && nr < 64) regions[nr++] = r;
    }
    if (nr != 1) {
        /* Go prints the set as a map: map[a:{} b:{}] */
        qsort(regions, nr, sizeof(regions[0]), cmp_cstr);
        ks_strbuf b;
        ks_sb_init(&b);
        ks_sb_puts(&b, "map[");
        for (size_t j = 0; j < nr; j++) ks_sb_printf(&b, "%s%s:{}", j ? " " : "", regions[j]);
        ks_sb_putc(&b, ']');
        *err = ks_xasprintf("failed to get region from zones: multiple or no regions gotten from zones, got: %s",
                            ks_sb_str(&b));
        ks_sb_free(&b);
        return false;
    }
    *out = regions[0];
    return true;
}

static const char *pv_label(const ks_pv *pv, const char *key) { return label_str(&pv->labels, key); }

#define GA_ZONE "topology.kubernetes.io/zone"
#define GA_REGION "topology.kubernetes.io/region"
#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"

static bool affinity_has_key(const ks_pv *pv, ks_id key) {
    if (!pv->has_node_affinity) return false;
    for (uint32_t i = 0; i < pv->node_affinity.nterms; i++)
        for (uint32_t j = 0; j < pv->node_affinity.terms[i].nexpr; j++)
            if (pv->node_affinity.terms[i].exprs[j].key == key) return true;
    return false;
}

/* Whether some requirement on key lists values (getTopologyValues). */
static bool affinity_has_values(const ks_pv *pv, ks_id key) {
    if (!pv->has_node_affinity) return false;
    for (uint32_t i = 0; i < pv->node_affinity.nterms; i++)
        for (uint32_t j = 0; j < pv->node_affinity.terms[i].nexpr; j++)
            if (pv->node_affinity.terms[i].exprs[j].key == key && pv->node_affinity.terms[i].exprs[j].nvalues)
                return true;
    return false;
}

/* translateTopologyFromInTreeToCSI: the zone key of the PV's affinity (or
 * labels) becomes the driver's topology key; a beta region key becomes the
 * GA one. */
static void translate_topology(ks_arena *a, const ks_pv *pv, const char *csi_key, ks_node_selector *out,
                               bool *has) {
    ks_id ga_zone = ks_intern(GA_ZONE), beta_zone = ks_intern(BETA_ZONE);
    ks_id zone_key, region_key;
    if (affinity_has_key(pv, ga_zone)) zone_key = ga_zone, region_key = ks_intern(GA_REGION);
    else if (affinity_has_key(pv, beta_zone)) zone_key = beta_zone, region_key = ks_intern(BETA_REGION);
    else if (ks_labels_has(&pv->labels, ga_zone)) zone_key = ga_zone, region_key = ks_intern(GA_REGION);
    else if (ks_labels_has(&pv->labels, beta_zone)) zone_key = beta_zone, region_key = ks_intern(BETA_REGION);
    else zone_key = ga_zone, region_key = ks_intern(GA_REGION);

    /* a deep enough copy of the terms to rename keys and add one */
    *has = pv->has_node_affinity;
    out->nterms = pv->node_affinity.nterms;
    out->terms = ks_arena_calloc(a, out->nterms + 1, sizeof(*out->terms));
    for (uint32_t i = 0; i < out->nterms; i++) {
        const ks_node_selector_term *t = &pv->node_affinity.terms[i];
        out->terms[i] = *t;
        out->terms[i].exprs = ks_arena_calloc(a, t->nexpr + 1, sizeof(*t->exprs));
        if (t->nexpr) memcpy(out->terms[i].exprs, t->exprs, t->nexpr * sizeof(*t->exprs));
    }
    ks_id csi = ks_intern(csi_key);
    if (affinity_has_values(pv, zone_key)) {
        for (uint32_t i = 0; i < out->nterms; i++)
            for (uint32_t j = 0; j < out->terms[i].nexpr; j++)
                if (out->terms[i].exprs[j].key == zone_key) out->terms[i].exprs[j].key = csi;
    } else {
        ks_id v;
        if (ks_labels_get(&pv->labels, zone_key, &v)) {
            /* addTopology: trimmed, non-empty, unique zones (an error, which
             * upstream ignores, when none) */
            const char *label = ks_str(v);
            ks_id *zones = ks_arena_calloc(a, strlen(label) / 2 + 2, sizeof(ks_id));
            uint32_t nz = 0;
            for (const char *p = label;;) {
                const char *e = strstr(p, "__");
                const char *end = e ? e : p + strlen(p);
                while (p < end && strchr(" \t\n\r\v\f", *p)) p++;
                while (end > p && strchr(" \t\n\r\v\f", end[-1])) end--;
                if (end > p) {
                    ks_id z = ks_intern_n(p, (size_t)(end - p));
                    bool dup = false;
                    for (uint32_t k = 0; k < nz; k++) dup |= zones[k] == z;
                    if (!dup) zones[nz++] = z;
                }
                if (!e) break;
                p = e + 2;
            }
            if (nz) {
                /* ids sorted, as requirement values are kept */
                for (uint32_t x = 1; x < nz; x++)
                    for (uint32_t y = x; y > 0 && zones[y - 1] > zones[y]; y--) {
                        ks_id t = zones[y];
                        zones[y] = zones[y - 1];
                        zones[y - 1] = t;
                    }
                ks_requirement r = {.key = csi, .op = KS_OP_IN, .nvalues = nz, .values = zones};
                if (out->nterms == 0) out->nterms = 1; /* one empty term to add to */
                *has = true;
                for (uint32_t i = 0; i < out->nterms; i++) {
                    ks_node_selector_term *t = &out->terms[i];
                    if (!t->exprs) t->exprs = ks_arena_calloc(a, 1, sizeof(*t->exprs));
                    t->exprs[t->nexpr++] = r;
                }
            }
        }
    }
    if (region_key == ks_intern(BETA_REGION) && affinity_has_values(pv, region_key)) {
        ks_id ga_region = ks_intern(GA_REGION);
        for (uint32_t i = 0; i < out->nterms; i++)
            for (uint32_t j = 0; j < out->terms[i].nexpr; j++)
                if (out->terms[i].exprs[j].key == region_key) out->terms[i].exprs[j].key = ga_region;
    }
}

bool ks_vol_pv_to_csi(ks_arena *a, const ks_pv *pv, const char **handle, ks_vol_affinity *aff, char **err) {
    const char *id = pv->source_id ? pv->source_id : "";
    const char *topo_key = NULL;
    *err = NULL;
    switch (pv->source) {
    case KS_VOL_GCE_PD: {
        const char *label = pv_label(pv, BETA_ZONE);
        if (!label || !*label) label = pv_label(pv, GA_ZONE);
        const char *zones[64];
        size_t nz = 0;
        for (const char *p = label ? label : ""; nz < 64;) {
            const char *e = strstr(p, "__");
            zones[nz++] = ks_arena_strndup(a, p, e ? (size_t)(e - p) : strlen(p));
            if (!e) break;
            p = e + 2;
        }
        if (nz == 1 && *zones[0]) {
            *handle = ks_arena_printf(a, "projects/UNSPECIFIED/zones/%s/disks/%s", zones[0], id);
        } else if (nz > 1) {
            const char *region;
            if (!gce_region(a, zones, nz, &region, err)) return false;
            *handle = ks_arena_printf(a, "projects/UNSPECIFIED/regions/%s/disks/%s", region, id);
        } else {
            *handle = ks_arena_printf(a, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/%s", id);
        }
        topo_key = "topology.gke.io/zone";
        break;
    }
    case KS_VOL_AWS_EBS:
        if (!ebs_volume_id(a, id, handle, err)) return false;
        topo_key = "topology.ebs.csi.aws.com/zone";
        break;
    case KS_VOL_AZURE_DISK:
        if (!azure_managed(pv->source_extra)) {
            *err = ks_xasprintf("kind(%s) is not supported in csi migration", pv->source_extra ? pv->source_extra : "");
            return false;
        }
        *handle = id;
        break;
    case KS_VOL_CINDER:
        *handle = id;
        topo_key = "topology.cinder.csi.openstack.org/zone";
        break;
    case KS_VOL_PORTWORX:
        *handle = id;
        break;
    default:
        /* Azure File and vSphere translate too, but migration is never on
         * for them in v1.34, so no caller gets here with them. */
        *err = ks_xasprintf("could not find in-tree plugin translation logic for \"%s\"", ks_str(pv->name));
        return false;
    }
    if (aff) {
        if (topo_key) {
            translate_topology(a, pv, topo_key, &aff->sel, &aff->has);
        } else {
            aff->has = pv->has_node_affinity;
            aff->sel = pv->node_affinity;
        }
    }
    return true;
}

const char *ks_vol_inline_csi_handle(ks_arena *a, const ks_volume *v, char **err) {
    const char *id = v->disk_id ? v->disk_id : "";
    *err = NULL;
    switch (v->kind) {
    case KS_VOL_GCE_PD:
        return ks_arena_printf(a, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/%s", id);
    case KS_VOL_AWS_EBS: {
        const char *h;
        return ebs_volume_id(a, id, &h, err) ? h : NULL;
    }
    case KS_VOL_AZURE_DISK:
        if (azure_managed(v->extra)) return id;
        *err = ks_xasprintf("kind(%s) is not supported in csi migration", v->extra ? v->extra : "");
        return NULL;
    default:
        return id;
    }
}
