/* API server defaulting of pod templates (pod_defaults.h). */
#include "sim/workloads/pod_defaults.h"

#include <string.h>

static bool absent(const ks_tree *v) { return !v || v->type == KT_NULL; }

static ks_tree *get_mut(ks_tree *m, const char *key) { return (ks_tree *)kt_get(m, key); }

ks_tree *wl_map_child(ks_arena *a, ks_tree *m, const char *key) {
    ks_tree *c = get_mut(m, key);
    if (c && c->type == KT_MAP) return c;
    c = kt_new(a, KT_MAP, m->line);
    kt_map_set(a, m, key, c);
    return c;
}

void wl_set_str(ks_arena *a, ks_tree *m, const char *key, const char *val) {
    kt_map_set(a, m, key, kt_string(a, val, m->line));
}

static void set_default_str(ks_arena *a, ks_tree *m, const char *key, const char *val) {
    const ks_tree *v = kt_get(m, key);
    if (absent(v) || (v->type == KT_STRING && !*v->text)) wl_set_str(a, m, key, val);
}

static void set_default_int(ks_arena *a, ks_tree *m, const char *key, int64_t val) {
    const ks_tree *v = kt_get(m, key);
    if (absent(v) || (v->type == KT_INT && v->ival == 0)) kt_map_set(a, m, key, kt_int(a, val));
}

static void set_default_ptr_int(ks_arena *a, ks_tree *m, const char *key, int64_t val) {
    if (absent(kt_get(m, key))) kt_map_set(a, m, key, kt_int(a, val));
}

/* The tag of an image reference (parsers.ParseImageName): after the last
 * ':' that follows the last '/', before any '@' digest. */
static bool image_tag_latest(const char *image) {
    if (!image) return true;
    const char *at = strchr(image, '@');
    size_t len = at ? (size_t)(at - image) : strlen(image);
    const char *slash = NULL, *colon = NULL;
    for (size_t i = 0; i < len; i++) {
        if (image[i] == '/') slash = image + i, colon = NULL;
        else if (image[i] == ':') colon = image + i;
    }
    (void)slash;
    if (!colon) return !at; /* no tag: "latest" unless pinned by digest */
    return (size_t)(image + len - colon - 1) == 6 && strncmp(colon + 1, "latest", 6) == 0;
}

static void default_http_get(ks_arena *a, ks_tree *h) {
    if (absent(h) || h->type != KT_MAP) return;
    set_default_str(a, h, "path", "/");
    set_default_str(a, h, "scheme", "HTTP");
}

static void default_handler(ks_arena *a, ks_tree *p) {
    if (absent(p) || p->type != KT_MAP) return;
    default_http_get(a, get_mut(p, "httpGet"));
    ks_tree *g = get_mut(p, "grpc");
    if (g && g->type == KT_MAP && absent(kt_get(g, "service"))) wl_set_str(a, g, "service", "");
}

static void default_probe(ks_arena *a, ks_tree *p) {
    if (absent(p) || p->type != KT_MAP) return;
    default_handler(a, p);
    set_default_int(a, p, "timeoutSeconds", 1);
    set_default_int(a, p, "periodSeconds", 10);
    set_default_int(a, p, "successThreshold", 1);
    set_default_int(a, p, "failureThreshold", 3);
}

static void default_container(ks_arena *a, ks_tree *c) {
    if (absent(c) || c->type != KT_MAP) return;
    const ks_tree *img = kt_get(c, "image");
    set_default_str(a, c, "imagePullPolicy",
                    image_tag_latest(img && img->type == KT_STRING ? img->text : NULL) ? "Always"
                                                                                       : "IfNotPresent");
    set_default_str(a, c, "terminationMessagePath", "/dev/termination-log");
    set_default_str(a, c, "terminationMessagePolicy", "File");
    ks_tree *ports = get_mut(c, "ports");
    if (ports && ports->type == KT_SEQ)
        for (uint32_t i = 0; i < ports->n; i++)
            if (ports->items[i] && ports->items[i]->type == KT_MAP)
                set_default_str(a, ports->items[i], "protocol", "TCP");
    ks_tree *env = get_mut(c, "env");
    if (env && env->type == KT_SEQ)
        for (uint32_t i = 0; i < env->n; i++) {
            ks_tree *vf = env->items[i] ? get_mut(env->items[i], "valueFrom") : NULL;
            ks_tree *fr = vf ? get_mut(vf, "fieldRef") : NULL;
            if (fr && fr->type == KT_MAP) set_default_str(a, fr, "apiVersion", "v1");
        }
    default_probe(a, get_mut(c, "livenessProbe"));
    default_probe(a, get_mut(c, "readinessProbe"));
    default_probe(a, get_mut(c, "startupProbe"));
    ks_tree *lc = get_mut(c, "lifecycle");
    if (lc && lc->type == KT_MAP) {
        default_handler(a, get_mut(lc, "postStart"));
        default_handler(a, get_mut(lc, "preStop"));
    }
}

static void default_containers(ks_arena *a, ks_tree *list) {
    if (list && list->type == KT_SEQ)
        for (uint32_t i = 0; i < list->n; i++) default_container(a, list->items[i]);
}

static const char *const volume_sources[] = {
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
    "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
    "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
    "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
    "image", NULL};

static void default_volume(ks_arena *a, ks_tree *v) {
    if (absent(v) || v->type != KT_MAP) return;
    bool any = false;
    for (int i = 0; volume_sources[i]; i++) any |= !absent(kt_get(v, volume_sources[i]));
    if (!any) kt_map_set(a, v, "emptyDir", kt_new(a, KT_MAP, v->line));
    static const char *const mode420[] = {"secret", "configMap", "downwardAPI", "projected"};
    for (int i = 0; i < 4; i++) {
        ks_tree *s = get_mut(v, mode420[i]);
        if (s && s->type == KT_MAP) set_default_ptr_int(a, s, "defaultMode", 420);
    }
    ks_tree *hp = get_mut(v, "hostPath");
    if (hp && hp->type == KT_MAP && absent(kt_get(hp, "type"))) wl_set_str(a, hp, "type", "");
    ks_tree *pr = get_mut(v, "projected");
    ks_tree *srcs = pr ? get_mut(pr, "sources") : NULL;
    if (srcs && srcs->type == KT_SEQ)
        for (uint32_t i = 0; i < srcs->n; i++) {
            ks_tree *sat = srcs->items[i] ? get_mut(srcs->items[i], "serviceAccountToken") : NULL;
            if (sat && sat->type == KT_MAP) set_default_ptr_int(a, sat, "expirationSeconds", 3600);
        }
    ks_tree *iscsi = get_mut(v, "iscsi");
    if (iscsi && iscsi->type == KT_MAP) set_default_str(a, iscsi, "iscsiInterface", "default");
    ks_tree *rbd = get_mut(v, "rbd");
    if (rbd && rbd->type == KT_MAP) {
        set_default_str(a, rbd, "pool", "rbd");
        set_default_str(a, rbd, "user", "admin");
        set_default_str(a, rbd, "keyring", "/etc/ceph/keyring");
    }
    ks_tree *ad = get_mut(v, "azureDisk");
    if (ad && ad->type == KT_MAP) {
        set_default_str(a, ad, "cachingMode", "ReadWrite");
        set_default_str(a, ad, "fsType", "ext4");
        if (absent(kt_get(ad, "readOnly"))) kt_map_set(a, ad, "readOnly", kt_bool(a, false));
        set_default_str(a, ad, "kind", "Shared");
    }
    ks_tree *sio = get_mut(v, "scaleIO");
    if (sio && sio->type == KT_MAP) {
        set_default_str(a, sio, "storageMode", "ThinProvisioned");
        set_default_str(a, sio, "fsType", "xfs");
    }
}

ks_tree *wl_default_template(ks_arena *a, const ks_tree *tmpl) {
    ks_tree *t = absent(tmpl) ? kt_new(a, KT_MAP, 0) : kt_copy(a, tmpl);
    if (t->type != KT_MAP) return t;
    ks_tree *spec = wl_map_child(a, t, "spec");
    set_default_str(a, spec, "dnsPolicy", "ClusterFirst");
    set_default_str(a, spec, "restartPolicy", "Always");
    if (absent(kt_get(spec, "securityContext"))) kt_map_set(a, spec, "securityContext", kt_new(a, KT_MAP, spec->line));
    set_default_ptr_int(a, spec, "terminationGracePeriodSeconds", 30);
    set_default_str(a, spec, "schedulerName", "default-scheduler");
    default_containers(a, get_mut(spec, "containers"));
    default_containers(a, get_mut(spec, "initContainers"));
    ks_tree *vols = get_mut(spec, "volumes");
    if (vols && vols->type == KT_SEQ)
        for (uint32_t i = 0; i < vols->n; i++) default_volume(a, vols->items[i]);
    return t;
}
