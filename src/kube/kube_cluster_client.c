/* The kube-apiserver backend (see backend.h).
 *
 * Watch side: one reflector per kind. Every event is decoded on the
 * reflector's thread and handed to the scheduler under one lock, so the
 * scheduler's handlers see one event at a time, as they do with the
 * memory backend. The backend keeps the latest version of every object
 * (one reference each) so that an update can carry the old version and a
 * delete the last one, whatever the API server sent with it. */
#include "kube/kube_cluster_client.h"

#include "api/cluster.h"
#include "api/dra.h"
#include "codec/decode.h"
#include "codec/pb.h"
#include "framework/status.h"
#include "kube/reflector.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <pthread.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

/* ---- kinds ---------------------------------------------------------------- */

typedef void *(*decode_fn)(const ks_tree *t, ks_decode_ctx *ctx);
typedef void (*free_fn)(void *o);

#define OBJ_FREE_FN(name, T) \
    static void name(void *o) { T *x = o; KS_OBJECT_UNREF(x); }
OBJ_FREE_FN(free_namespace, ks_namespace)
OBJ_FREE_FN(free_pv, ks_pv)
OBJ_FREE_FN(free_pvc, ks_pvc)
OBJ_FREE_FN(free_storage_class, ks_storage_class)
OBJ_FREE_FN(free_csinode, ks_csinode)
OBJ_FREE_FN(free_csi_driver, ks_csi_driver)
OBJ_FREE_FN(free_csi_capacity, ks_csi_capacity)
OBJ_FREE_FN(free_volume_attachment, ks_volume_attachment)
OBJ_FREE_FN(free_pdb, ks_pdb)
OBJ_FREE_FN(free_pod_group, ks_pod_group)
OBJ_FREE_FN(free_workload, ks_workload)
OBJ_FREE_FN(free_claim, ks_resource_claim)
OBJ_FREE_FN(free_slice, ks_resource_slice)
OBJ_FREE_FN(free_class, ks_device_class)
OBJ_FREE_FN(free_taint_rule, ks_device_taint_rule)

static void *dec_namespace(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_namespace(t, c); }
static void *dec_pv(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pv(t, c); }
static void *dec_pvc(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pvc(t, c); }
static void *dec_storage_class(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_storage_class(t, c); }
static void *dec_csinode(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_csinode(t, c); }
static void *dec_csi_driver(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_csi_driver(t, c); }
static void *dec_csi_capacity(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_csi_capacity(t, c); }
static void *dec_volume_attachment(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_volume_attachment(t, c); }
static void *dec_pdb(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pdb(t, c); }
static void *dec_pod_group(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pod_group(t, c); }
static void *dec_service(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_SERVICE, c); }
static void *dec_rs(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_REPLICASET, c); }
static void *dec_sts(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_STATEFULSET, c); }
static void *dec_rc(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_RC, c); }
static void *dec_claim(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_resource_claim(t, c); }
static void *dec_slice(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_resource_slice(t, c); }
static void *dec_class(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_device_class(t, c); }
static void *dec_taint_rule(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_device_taint_rule(t, c); }

/* Which option turns a kind's watch on. */
typedef enum watch_when { ALWAYS, WITH_DRA, WITH_TAINT_RULES, WITH_POD_GROUPS } watch_when;

typedef struct kind_def {
    const char *kind, *path;
    ks_kind k;
    decode_fn decode;   /* NULL: pods and nodes */
    free_fn free;
    bool optional;      /* a CRD: readiness does not wait for it */
    watch_when when;
    /* kept as JSON too: its writes PUT whole objects from the client's
     * copy (DynamicResources' claim updates) */
    bool keep_json;
} kind_def;

/* What kube-scheduler v1.34.1 watches with the default plugins (plus
 * PodGroups for Coscheduling). */
static const kind_def kinds[] = {
    {"Node", "/api/v1/nodes", KS_KIND_NODE, NULL, NULL, false, ALWAYS, false},
    {"Pod", "/api/v1/pods", KS_KIND_POD, NULL, NULL, false, ALWAYS, false},
    {"Namespace", "/api/v1/namespaces", KS_KIND_NAMESPACE, dec_namespace, free_namespace, false, ALWAYS, false},
    {"PersistentVolume", "/api/v1/persistentvolumes", KS_KIND_PV, dec_pv, free_pv, false, ALWAYS, false},
    {"PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", KS_KIND_PVC, dec_pvc, free_pvc, false, ALWAYS, false},
    {"StorageClass", "/apis/storage.k8s.io/v1/storageclasses", KS_KIND_STORAGE_CLASS, dec_storage_class,
     free_storage_class, false, ALWAYS, false},
    {"CSINode", "/apis/storage.k8s.io/v1/csinodes", KS_KIND_CSINODE, dec_csinode, free_csinode, false, ALWAYS, false},
    {"CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", KS_KIND_CSI_DRIVER, dec_csi_driver, free_csi_driver, false,
     ALWAYS, false},
    {"CSIStorageCapacity", "/apis/storage.k8s.io/v1/csistoragecapacities", KS_KIND_CSI_CAPACITY, dec_csi_capacity,
     free_csi_capacity, false, ALWAYS, false},
    {"VolumeAttachment", "/apis/storage.k8s.io/v1/volumeattachments", KS_KIND_VOLUME_ATTACHMENT,
     dec_volume_attachment, free_volume_attachment, false, ALWAYS, false},
    {"PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", KS_KIND_PDB, dec_pdb, free_pdb, false, ALWAYS, false},
    {"Service", "/api/v1/services", KS_KIND_WORKLOAD, dec_service, free_workload, false, ALWAYS, false},
    {"ReplicationController", "/api/v1/replicationcontrollers", KS_KIND_WORKLOAD, dec_rc, free_workload, false,
     ALWAYS, false},
    {"ReplicaSet", "/apis/apps/v1/replicasets", KS_KIND_WORKLOAD, dec_rs, free_workload, false, ALWAYS, false},
    {"StatefulSet", "/apis/apps/v1/statefulsets", KS_KIND_WORKLOAD, dec_sts, free_workload, false, ALWAYS, false},
    /* DynamicResources (resource.k8s.io/v1; watch_dra) */
    {"ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", KS_KIND_RESOURCE_CLAIM, dec_claim, free_claim, false,
     WITH_DRA, true},
    {"ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices", KS_KIND_RESOURCE_SLICE, dec_slice, free_slice, false,
     WITH_DRA, false},
    {"DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses", KS_KIND_DEVICE_CLASS, dec_class, free_class, false,
     WITH_DRA, false},
    /* DRADeviceTaints (watch_device_taint_rules) */
    {"DeviceTaintRule", "/apis/resource.k8s.io/v1alpha3/devicetaintrules", KS_KIND_DEVICE_TAINT_RULE, dec_taint_rule,
     free_taint_rule, false, WITH_TAINT_RULES, false},
    {"PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", KS_KIND_POD_GROUP, dec_pod_group, free_pod_group, true,
     WITH_POD_GROUPS, false},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* The index of a kind's entry (the first, for the workload kinds). */
static size_t kind_index(ks_kind k) {
    size_t i = 0;
    while (i < NKINDS - 1 && kinds[i].k != k) i++;
    return i;
}

/* A kind's entry by its name ("PersistentVolume"); NULL when not watched. */
static const kind_def *kind_named(const char *kind) {
    for (size_t i = 0; i < NKINDS; i++)
        if (!strcmp(kinds[i].kind, kind)) return &kinds[i];
    return NULL;
}

/* The REST path of one object of a kind in the table, from the kind's
 * list path: "/api/v1/persistentvolumes/NAME", or with a namespace
 * "/api/v1/namespaces/NS/pods/NAME"; sub: a subresource ("status",
 * "binding") or NULL. */
static char *object_path(const char *kind, const char *ns, const char *name, const char *sub) {
    const kind_def *k = kind_named(kind);
    const char *list = k ? k->path : "/unknown";
    const char *res = strrchr(list, '/');
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_printf(&b, "%.*s", (int)(res - list), list);
    if (ns) ks_sb_printf(&b, "/namespaces/%s", ns);
    ks_sb_printf(&b, "%s/%s%s%s", res, name, sub ? "/" : "", sub ? sub : "");
    return ks_sb_take(&b);
}

/* ---- per-kind stores: "namespace/name" -> object ---------------------------- */

typedef struct entry {
    char *key;
    void *obj;
    struct entry *next; /* same hash */
} entry;

typedef struct store {
    ks_map by_hash; /* hash(key) -> entry chain */
    uint32_t n;
} store;

static entry *store_find(store *st, const char *key, uint64_t h) {
    for (entry *e = ks_map_get(&st->by_hash, h); e; e = e->next)
        if (strcmp(e->key, key) == 0) return e;
    return NULL;
}

/* Put obj under key; returns the object it replaced (or NULL). */
static void *store_put(store *st, const char *key, void *obj) {
    uint64_t h = ks_hash_bytes(key, strlen(key));
    entry *e = store_find(st, key, h);
    if (e) {
        void *old = e->obj;
        e->obj = obj;
        return old;
    }
    e = ks_xcalloc(1, sizeof(*e));
    e->key = ks_xstrdup(key);
    e->obj = obj;
    e->next = ks_map_get(&st->by_hash, h);
    ks_map_put(&st->by_hash, h, e);
    st->n++;
    return NULL;
}

static void *store_del(store *st, const char *key) {
    uint64_t h = ks_hash_bytes(key, strlen(key));
    entry *head = ks_map_get(&st->by_hash, h), **pp = &head;
    for (entry *e = head; e; pp = &e->next, e = e->next) {
        if (strcmp(e->key, key) != 0) continue;
        *pp = e->next;
        if (head) ks_map_put(&st->by_hash, h, head);
        else ks_map_del(&st->by_hash, h);
        void *o = e->obj;
        free(e->key);
        free(e);
        st->n--;
        return o;
    }
    return NULL;
}

static void store_free(store *st, free_fn fn) {
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&st->by_hash, &it, &k, &v);) {
        for (entry *e = v, *nx; e; e = nx) {
            nx = e->next;
            if (fn) fn(e->obj);
            free(e->key);
            free(e);
        }
    }
    ks_map_free(&st->by_hash);
}

typedef struct kind_ctx {
    struct ks_kube_cluster_client *kb;
    size_t i;
    bool synced; /* (mu) */
} kind_ctx;

struct ks_kube_cluster_client {
    ks_cluster_client iface;
    ks_kube_client *client;
    ks_event_recorder *events;
    bool watch_pod_groups;
    bool watch_dra;
    bool watch_device_taint_rules;
    uint32_t first_list_page; /* first_list_page() */

    ks_watch_fn fn;
    void *arg;
    pthread_mutex_t deliver_mu; /* one watch event at a time */
    pthread_cond_t objects_cv;  /* an object was delivered, or stop (deliver_mu) */
    bool stopped;
    ks_reflector *refl[NKINDS];
    kind_ctx kctx[NKINDS];
    bool started;

    /* the latest pods and nodes delivered (referenced), for old versions */
    ks_map pods;  /* pod key + 1 -> ks_pod* */
    ks_map nodes; /* name id + 1 -> ks_node* */

    /* the other kinds (deliver_mu), counters and flags (mu) */
    pthread_mutex_t mu;
    store stores[NKINDS];

    ks_kube_cluster_client_stats stats;

    /* the keep_json kinds as JSON text ("ns/name" -> the newest version
     * seen, from the watch or a write's answer), the objects their
     * updates are made from (json_mu) */
    pthread_mutex_t json_mu;
    store json[NKINDS];
    z_stream z; /* deflates what json_keep keeps (json_mu); z_ready once set up */
    bool z_ready;
};

/* ---- watch events ------------------------------------------------------------ */


static void obj_key(const ks_tree *obj, char *buf, size_t n) {
    const ks_tree *md = kt_get(obj, "metadata");
    const ks_tree *ns = kt_get(md, "namespace"), *name = kt_get(md, "name");
    snprintf(buf, n, "%s/%s", ns && ns->type == KT_STRING ? ns->text : "",
             name && name->type == KT_STRING ? name->text : "");
}

static void deliver(ks_kube_cluster_client *kb, const ks_watch_event *ev) {
    if (kb->fn) kb->fn(kb->arg, ev);
}

/* Decode one object; on error log every problem with the kind and name. */
static void *decode(ks_kube_cluster_client *kb, const kind_def *k, const ks_tree *obj) {
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx dc = {.file = NULL, .doc = NULL, .errs = &errs};
    void *o;
    if (k->k == KS_KIND_POD) o = ks_decode_pod(obj, &dc);
    else if (k->k == KS_KIND_NODE) o = ks_decode_node(obj, &dc);
    else o = k->decode(obj, &dc);
    if (!o || errs.n) {
        char key[512];
        obj_key(obj, key, sizeof(key));
        /* The decoders name a file first; an API object has none. */
        for (size_t i = 0; i < errs.n; i++) {
            const char *m = errs.v[i];
            if (!strncmp(m, "<input>: ", 9)) m += 9;
            ks_errorf("skipping %s %s from the API server: %s", k->kind, key, m);
        }
        if (!errs.n) ks_errorf("skipping %s %s from the API server: cannot decode it", k->kind, key);
        pthread_mutex_lock(&kb->mu);
        kb->stats.decode_errors++;
        pthread_mutex_unlock(&kb->mu);
    }
    ks_errors_free(&errs);
    return o;
}

static void on_pod(ks_kube_cluster_client *kb, ks_refl_event type, const ks_tree *obj) {
    ks_watch_event ev = {.kind = KS_KIND_POD};
    ks_pod *np = NULL;
    if (type == KS_REFL_DELETED) {
        char key[512];
        obj_key(obj, key, sizeof(key));
        const ks_tree *md = kt_get(obj, "metadata");
        const ks_tree *ns = kt_get(md, "namespace"), *name = kt_get(md, "name");
        if (!ns || !name || ns->type != KT_STRING || name->type != KT_STRING) return;
        ks_id nsid = ks_intern_find(ns->text), nid = ks_intern_find(name->text);
        if (nsid == KS_ID_INVALID || nid == KS_ID_INVALID) return;
        ks_pod *old = ks_map_del(&kb->pods, ks_pod_key(nsid, nid) + 1);
        if (!old) return;
        ev.type = KS_WATCH_DELETED;
        ev.old_pod = old;
        deliver(kb, &ev);
        ks_pod_unref(old);
        return;
    }
    np = decode(kb, &kinds[kind_index(KS_KIND_POD)], obj);
    if (!np) return;
    ks_pod *old = ks_map_put(&kb->pods, np->key + 1, np);
    /* The same name with another UID: the old pod is gone, a new one came. */
    if (old && old->uid && np->uid && strcmp(old->uid, np->uid) != 0) {
        ev.type = KS_WATCH_DELETED;
        ev.old_pod = old;
        deliver(kb, &ev);
        ks_pod_unref(old);
        old = NULL;
    }
    ev.type = old ? KS_WATCH_MODIFIED : KS_WATCH_ADDED;
    ev.old_pod = old;
    ev.new_pod = np;
    deliver(kb, &ev);
    if (old) ks_pod_unref(old);
}

static void on_node(ks_kube_cluster_client *kb, ks_refl_event type, const ks_tree *obj) {
    ks_watch_event ev = {.kind = KS_KIND_NODE};
    if (type == KS_REFL_DELETED) {
        const ks_tree *name = kt_get(kt_get(obj, "metadata"), "name");
        if (!name || name->type != KT_STRING) return;
        ks_id id = ks_intern_find(name->text);
        if (id == KS_ID_INVALID) return;
        ks_node *old = ks_map_del(&kb->nodes, (uint64_t)id + 1);
        if (!old) return;
        ev.type = KS_WATCH_DELETED;
        ev.old_node = old;
        deliver(kb, &ev);
        ks_node_unref(old);
        return;
    }
    ks_node *nn = decode(kb, &kinds[kind_index(KS_KIND_NODE)], obj);
    if (!nn) return;
    ks_node *old = ks_map_put(&kb->nodes, (uint64_t)nn->name + 1, nn);
    ev.type = old ? KS_WATCH_MODIFIED : KS_WATCH_ADDED;
    ev.old_node = old;
    ev.new_node = nn;
    deliver(kb, &ev);
    if (old) ks_node_unref(old);
}

static void on_object(ks_kube_cluster_client *kb, size_t i, ks_refl_event type, const ks_tree *obj) {
    const kind_def *k = &kinds[i];
    char key[512];
    obj_key(obj, key, sizeof(key));
    void *o = type == KS_REFL_DELETED ? NULL : decode(kb, k, obj);
    if (type != KS_REFL_DELETED && !o) return;
    void *old = o ? store_put(&kb->stores[i], key, o) : store_del(&kb->stores[i], key);
    if (!old && !o) return;
    ks_watch_event ev = {.kind = k->k,
                         .type = !o ? KS_WATCH_DELETED : old ? KS_WATCH_MODIFIED : KS_WATCH_ADDED,
                         .old_obj = old,
                         .new_obj = o};
    deliver(kb, &ev);
    if (old) k->free(old);
    pthread_cond_broadcast(&kb->objects_cv);
}

static void json_note(ks_kube_cluster_client *kb, size_t ki, ks_refl_event type, const ks_tree *obj);

static void refl_event(void *arg, ks_refl_event type, const ks_tree *obj) {
    kind_ctx *kc = arg;
    ks_kube_cluster_client *kb = kc->kb;
    pthread_mutex_lock(&kb->deliver_mu);
    switch (kinds[kc->i].k) {
    case KS_KIND_POD: on_pod(kb, type, obj); break;
    case KS_KIND_NODE: on_node(kb, type, obj); break;
    default: on_object(kb, kc->i, type, obj); break;
    }
    if (kinds[kc->i].keep_json) json_note(kb, kc->i, type, obj);
    pthread_mutex_unlock(&kb->deliver_mu);
}

static bool watched(const ks_kube_cluster_client *kb, const kind_def *k) {
    switch (k->when) {
    case WITH_DRA: return kb->watch_dra;
    case WITH_TAINT_RULES: return kb->watch_device_taint_rules;
    case WITH_POD_GROUPS: return kb->watch_pod_groups;
    default: return true;
    }
}

static void refl_synced(void *arg) {
    kind_ctx *kc = arg;
    pthread_mutex_lock(&kc->kb->mu);
    kc->synced = true;
    pthread_mutex_unlock(&kc->kb->mu);
    ks_infof(2, "\"Caches populated\" type=\"%s\" reflector=\"%s\"", kinds[kc->i].kind, kinds[kc->i].path);
}

static bool kb_synced(void *ctx) {
    ks_kube_cluster_client *kb = ctx;
    bool ok = true;
    pthread_mutex_lock(&kb->mu);
    for (size_t i = 0; i < NKINDS; i++)
        if (kb->refl[i] && !kinds[i].optional && !kb->kctx[i].synced) ok = false;
    pthread_mutex_unlock(&kb->mu);
    return ok;
}

/* The first list of every kind is a consistent list (resourceVersion
 * unset: never older than etcd) in pages of this many items, each asked
 * for as soon as the previous page's continue token is in (reflector.h
 * first_page_size): the API server prepares page k+1 while it sends page
 * k, so ksched decodes from the first page on instead of waiting for the
 * whole list's conversion (first byte 0.3-0.8 s instead of 0.8-1.1 s at
 * 150,000 pods; the API server's CPU for the list within 5 %: larger
 * pages cost it less, as each page's lookup walks the rest of its cache).
 * kube-scheduler lists at resourceVersion 0, one page from the watch
 * cache: KSCHED_FIRST_LIST_PAGE=0 does the same (docs/differences.md,
 * docs/performance.md "fourth pass"). */
#define KS_KUBE_FIRST_LIST_PAGE 25000

static uint32_t first_list_page(void) {
    const char *e = getenv("KSCHED_FIRST_LIST_PAGE");
    if (!e || !*e) return KS_KUBE_FIRST_LIST_PAGE;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(e, &end, 10);
    if (*end || errno || v > UINT32_MAX || *e == '-') {
        ks_warnf("KSCHED_FIRST_LIST_PAGE=%s: not a page size; %d is used", e, KS_KUBE_FIRST_LIST_PAGE);
        return KS_KUBE_FIRST_LIST_PAGE;
    }
    return (uint32_t)v;
}

static ks_status *kb_start(void *ctx, ks_watch_fn fn, void *arg) {
    ks_kube_cluster_client *kb = ctx;
    if (kb->started) return ks_status_new(KS_ERROR, "the backend is already started");
    kb->fn = fn;
    kb->arg = arg;
    kb->started = true;
    for (size_t i = 0; i < NKINDS; i++) {
        if (!watched(kb, &kinds[i])) continue;
        kb->kctx[i] = (kind_ctx){kb, i, false};
        ks_reflector_options ro = {.kind = kinds[i].kind, .path = kinds[i].path, .json_only = kinds[i].optional};
        /* upstream's pod informer: finished pods are never seen. */
        if (kinds[i].k == KS_KIND_POD) ro.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
        ro.first_page_size = kb->first_list_page;
        ks_reflector_handler h = {.arg = &kb->kctx[i], .event = refl_event, .synced = refl_synced};
        kb->refl[i] = ks_reflector_start(kb->client, &ro, &h);
        if (!kb->refl[i]) return ks_status_new(KS_ERROR, "cannot start the %s reflector", kinds[i].kind);
    }
    return NULL;
}

static void kb_stop(void *ctx) {
    ks_kube_cluster_client *kb = ctx;
    for (size_t i = 0; i < NKINDS; i++) {
        if (kb->refl[i]) ks_reflector_stop(kb->refl[i]);
        kb->refl[i] = NULL;
    }
    pthread_mutex_lock(&kb->deliver_mu);
    kb->fn = NULL;
    kb->stopped = true;
    pthread_cond_broadcast(&kb->objects_cv);
    pthread_mutex_unlock(&kb->deliver_mu);
}

/* ---- writes -------------------------------------------------------------- */

static ks_status *api_error(const char *what, const ks_pod *pod, const ks_kube_response *r) {
    char buf[300];
    char *msg = r->code ? ks_kube_status_message(r->body, r->body_len) : NULL;
    ks_status *st;
    if (r->code)
        st = ks_status_new(KS_ERROR, "%s %s: %ld %s", what, ks_pod_fullname(pod, buf, sizeof(buf)), r->code,
                            msg ? msg : (r->body && !ks_pb_is_protobuf(r->body, r->body_len) ? r->body : ""));
    else
        st = ks_status_new(KS_ERROR, "%s %s: %s", what, ks_pod_fullname(pod, buf, sizeof(buf)),
                            r->error ? r->error : "no answer from the API server");
    free(msg);
    return st;
}

static char *pod_path(const ks_pod *pod, const char *sub) {
    return object_path("Pod", ks_str(pod->ns), ks_str(pod->name), sub);
}

/* The Binding as upstream sends it: protobuf when clientConnection.contentType is.
 * Built as a tree and written once (it went JSON text, parsed to a tree,
 * then protobuf: three encodings per pod). */
static ks_tree *binding_tree(ks_arena *a, const ks_pod *pod, const char *node) {
    ks_tree *md = kt_new(a, KT_MAP, 0);
    kt_map_add(a, md, "name", kt_string(a, ks_str(pod->name), 0));
    kt_map_add(a, md, "namespace", kt_string(a, ks_str(pod->ns), 0));
    if (pod->uid) kt_map_add(a, md, "uid", kt_string(a, pod->uid, 0));
    ks_tree *target = kt_new(a, KT_MAP, 0);
    kt_map_add(a, target, "apiVersion", kt_string(a, "v1", 0));
    kt_map_add(a, target, "kind", kt_string(a, "Node", 0));
    kt_map_add(a, target, "name", kt_string(a, node, 0));
    ks_tree *b = kt_new(a, KT_MAP, 0);
    kt_map_add(a, b, "apiVersion", kt_string(a, "v1", 0));
    kt_map_add(a, b, "kind", kt_string(a, "Binding", 0));
    kt_map_add(a, b, "metadata", md);
    kt_map_add(a, b, "target", target);
    return b;
}

/* A binding's request, for ks_kube_do or ks_kube_do_async (which copies it). */
typedef struct bind_req {
    ks_kube_request req;
    char *path, *body;
} bind_req;

static void bind_req_init(ks_kube_cluster_client *kb, bind_req *b, const ks_pod *pod, const char *node) {
    ks_arena *a = ks_arena_new(0);
    ks_tree *bt = binding_tree(a, pod, node);
    char *js = NULL, *perr = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    if (ks_kube_client_writes_protobuf(kb->client) && ks_pb_encode_object(bt, "v1", "Binding", &js, &len, &perr))
        ctype = KS_KUBE_PROTOBUF;
    free(perr);
    if (!js) {
        js = kt_to_json(bt, 0);
        len = strlen(js);
    }
    ks_arena_free(a);
    b->path = pod_path(pod, "binding");
    b->body = js;
    b->req = (ks_kube_request){
        .method = "POST", .path = b->path, .content_type = ctype, .body = js, .body_len = len, .negotiate = true};
}

static void bind_req_free(bind_req *b) {
    free(b->path);
    free(b->body);
}

static ks_status *bind_result(ks_kube_cluster_client *kb, const ks_pod *pod, const ks_kube_response *r) {
    pthread_mutex_lock(&kb->mu);
    kb->stats.binds++;
    if (r->code == 409) kb->stats.bind_conflicts++;
    pthread_mutex_unlock(&kb->mu);
    return r->code != 200 && r->code != 201 ? api_error("binding", pod, r) : NULL;
}

static ks_status *kb_bind(void *ctx, const ks_pod *pod, const char *node) {
    ks_kube_cluster_client *kb = ctx;
    bind_req b;
    bind_req_init(kb, &b, pod, node);
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &b.req, &r);
    ks_status *st = bind_result(kb, pod, &r);
    ks_kube_response_free(&r);
    bind_req_free(&b);
    return st;
}

/* A binding started by kb_execute_async: answered on the client's I/O
 * thread. */
typedef struct async_bind {
    ks_kube_cluster_client *kb;
    ks_pod *pod; /* referenced */
    bind_req b;
    void (*done)(void *arg, ks_status *result);
    void *arg;
} async_bind;

static void async_bind_done(void *arg, const ks_kube_response *r) {
    async_bind *ab = arg;
    /* a 401 with an exec plugin's credentials was retried by the client */
    ks_status *st = bind_result(ab->kb, ab->pod, r);
    bind_req_free(&ab->b);
    ks_pod_unref(ab->pod);
    void (*done)(void *, ks_status *) = ab->done;
    void *darg = ab->arg;
    free(ab);
    done(darg, st);
}

static void kb_bind_async(ks_kube_cluster_client *kb, const ks_pod *pod, const char *node,
                          void (*done)(void *arg, ks_status *result), void *arg) {
    async_bind *ab = ks_xcalloc(1, sizeof(*ab));
    ab->kb = kb;
    ab->pod = ks_pod_ref((ks_pod *)pod);
    ab->done = done;
    ab->arg = arg;
    bind_req_init(kb, &ab->b, pod, node);
    ks_kube_do_async(kb->client, &ab->b.req, async_bind_done, ab);
}


static const ks_pod_condition *find_condition(const ks_pod *p, const char *type) {
    ks_id t = ks_intern_find(type);
    for (uint32_t i = 0; i < p->nconditions; i++)
        if (p->conditions[i].type == t) return &p->conditions[i];
    return NULL;
}

/* One strategic-merge PATCH of the pod (or its subresource), body
 * consumed; `doing` words the error ("patching the status of"). */
static ks_status *patch_pod(ks_kube_cluster_client *kb, const ks_pod *pod, const char *subresource, json_t *body,
                            const char *doing) {
    char *js = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *path = pod_path(pod, subresource);
    ks_kube_request req = {.method = "PATCH",
                           .path = path,
                           .content_type = "application/strategic-merge-patch+json",
                           .body = js,
                           .body_len = strlen(js),
                           .idempotent = true,
                           .negotiate = true};
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &req, &r);
    pthread_mutex_lock(&kb->mu);
    kb->stats.patches++;
    pthread_mutex_unlock(&kb->mu);
    ks_status *st = r.code == 200 ? NULL : api_error(doing, pod, &r);
    ks_kube_response_free(&r);
    free(path);
    free(js);
    return st;
}

/* upstream util.PatchPodStatus: a strategic merge patch of the status
 * (conditions merged by type). lastTransitionTime moves only when the
 * condition's status changes, as podutil.UpdatePodCondition does. */
static ks_status *kb_patch(void *ctx, const ks_pod *pod, const ks_status_patch *patch) {
    ks_kube_cluster_client *kb = ctx;
    json_t *status = json_object();
    if (patch->has_condition) {
        json_t *c = json_pack("{s:s, s:s, s:n}", "type", patch->cond_type, "status", patch->cond_status,
                              "lastProbeTime");
        if (patch->cond_reason && *patch->cond_reason) json_object_set_new(c, "reason", json_string(patch->cond_reason));
        if (patch->cond_message && *patch->cond_message)
            json_object_set_new(c, "message", json_string(patch->cond_message));
        const ks_pod_condition *cur = find_condition(pod, patch->cond_type);
        if (!cur || strcmp(ks_str(cur->status), patch->cond_status) != 0) {
            char t[64];
            ks_time_format_now_rfc3339(false, t);
            json_object_set_new(c, "lastTransitionTime", json_string(t));
        }
        json_object_set_new(status, "conditions", json_pack("[o]", c));
    }
    if (patch->set_nominated)
        json_object_set_new(status, "nominatedNodeName",
                            patch->nominated && *patch->nominated ? json_string(patch->nominated) : json_null());
    return patch_pod(kb, pod, "status", json_pack("{s:o}", "status", status), "patching the status of");
}

/* upstream util.DeletePod: a plain DELETE; a pod already gone is fine. */
static ks_status *kb_delete(void *ctx, const ks_pod *pod) {
    ks_kube_cluster_client *kb = ctx;
    char *path = pod_path(pod, NULL);
    ks_kube_request req = {.method = "DELETE", .path = path, .idempotent = true, .negotiate = true};
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &req, &r);
    pthread_mutex_lock(&kb->mu);
    kb->stats.deletes++;
    pthread_mutex_unlock(&kb->mu);
    ks_status *st = (r.code == 200 || r.code == 202 || r.code == 404) ? NULL : api_error("deleting", pod, &r);
    ks_kube_response_free(&r);
    free(path);
    return st;
}

/* ---- events --------------------------------------------------------------- */

static void pod_ref(const ks_pod *p, ks_event_ref *r) {
    *r = (ks_event_ref){.kind = "Pod",
                        .api_version = "v1",
                        .ns = ks_str(p->ns),
                        .name = ks_str(p->name),
                        .uid = p->uid,
                        .resource_version = p->resource_version};
}

/* Through the recorder (event_recorder.h: series, bounded queue, its own client).
 * reportingController is the profile's schedulerName: the pod's own, or
 * for a victim the preemptor's, whose profile preempted it. */
static void kb_event(void *ctx, const ks_event_record *ev) {
    ks_kube_cluster_client *kb = ctx;
    if (!kb->events) return;
    ks_event_ref regarding, related;
    pod_ref(ev->regarding, &regarding);
    if (ev->related) pod_ref(ev->related, &related);
    const ks_pod *by = ev->related ? ev->related : ev->regarding;
    ks_event_recorder_emit(kb->events, ks_str(by->scheduler_name), &regarding, ev->related ? &related : NULL,
                           ev->type ? ev->type : "Normal", ev->reason ? ev->reason : "",
                           ev->action ? ev->action : "", ev->note ? ev->note : "");
}

/* ---- object writes (api_calls.h ks_object_write) ------------------------------ */

/* A plugin's write of one object, by kind name through the kind table:
 * a PATCH of the body it builds, or upstream's RetryOnConflict update (the
 * object from the client's copy, under the writer's resourceVersion, or
 * read; edited by the writer; PUT; a 409 reads the newest and edits that),
 * or a wait for the watch to show what the writer waits for. Kinds whose
 * writes PUT whole objects from the client's copy (keep_json) are kept as
 * the API server last showed them: a decoded object would lose the fields
 * ksched does not read. */

/* resourceVersions are etcd revisions; -1 when not a number. */
static long long rv_num(const char *rv) {
    if (!rv || !*rv) return -1;
    char *end;
    long long v = strtoll(rv, &end, 10);
    return *end ? -1 : v;
}

static const char *json_rv(json_t *o) {
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

/* An object's JSON text, deflated (zlen 0: as is), and its
 * resourceVersion: one block. */
typedef struct json_text {
    long long rv;
    uint32_t len, zlen; /* the text's length, its deflated length */
    unsigned char z[];
} json_text;

static void json_text_free(void *p) { free(p); }

/* Kept texts are deflated (raw, level 1, a 2 KB window) against this
 * claim's usual text: most of a claim's text is its keys and the
 * scheduler's own strings. DRA benchmark: an allocated claim as kept
 * ~650 bytes -> ~170, an unallocated one ~570 -> ~175; 5000 claims ~2.4
 * MB less. The texts are read back only for a write. */
static const char kept_dict[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"\",\"namespace\":\"\","
    "\"uid\":\"\",\"resourceVersion\":\"\",\"generation\":1,\"creationTimestamp\":\"\",\"annotations\":{},"
    "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"],\"ownerReferences\":[{\"apiVersion\":\"v1\","
    "\"kind\":\"Pod\",\"name\":\"\",\"uid\":\"\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"\",\"exactly\":{\"deviceClassName\":\"\","
    "\"allocationMode\":\"ExactCount\",\"count\":1}}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":"
    "[{\"request\":\"\",\"driver\":\"\",\"pool\":\"\",\"device\":\"\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":"
    "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"\"]}]}]}},"
    "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"\",\"uid\":\"\"}]}}";
#define KEPT_WBITS (-11)

/* json_mu held: text as kept (deflated when that works). */
static json_text *json_text_new(ks_kube_cluster_client *kb, const char *text, long long rv) {
    size_t len = strlen(text);
    z_stream *z = &kb->z;
    bool ok = len < UINT32_MAX / 2;
    if (ok && !kb->z_ready) {
        memset(z, 0, sizeof(*z));
        ok = kb->z_ready = deflateInit2(z, 1, Z_DEFLATED, KEPT_WBITS, 4, Z_DEFAULT_STRATEGY) == Z_OK;
    } else if (ok) {
        ok = deflateReset(z) == Z_OK;
    }
    ok = ok && deflateSetDictionary(z, (const Bytef *)kept_dict, sizeof kept_dict - 1) == Z_OK;
    size_t room = ok ? deflateBound(z, (uLong)len) : len;
    json_text *t = ks_xmalloc(sizeof(*t) + (room > len ? room : len));
    t->rv = rv;
    t->len = (uint32_t)len;
    t->zlen = 0;
    if (ok) {
        z->next_in = (Bytef *)text;
        z->avail_in = (uInt)len;
        z->next_out = t->z;
        z->avail_out = (uInt)room;
        if (deflate(z, Z_FINISH) == Z_STREAM_END && room - z->avail_out < len) t->zlen = (uint32_t)(room - z->avail_out);
    }
    if (!t->zlen) memcpy(t->z, text, len);
    return ks_xrealloc(t, sizeof(*t) + (t->zlen ? t->zlen : len));
}

/* The kept text again (NULL: it does not inflate). */
static char *json_text_get(const json_text *t) {
    char *s = ks_xmalloc((size_t)t->len + 1);
    s[t->len] = 0;
    if (!t->zlen) {
        memcpy(s, t->z, t->len);
        return s;
    }
    z_stream z;
    memset(&z, 0, sizeof(z));
    bool ok = inflateInit2(&z, KEPT_WBITS) == Z_OK;
    if (ok) {
        ok = inflateSetDictionary(&z, (const Bytef *)kept_dict, sizeof kept_dict - 1) == Z_OK;
        z.next_in = (Bytef *)t->z;
        z.avail_in = t->zlen;
        z.next_out = (Bytef *)s;
        z.avail_out = t->len;
        ok = ok && inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == t->len;
        inflateEnd(&z);
    }
    if (!ok) {
        free(s);
        return NULL;
    }
    return s;
}

/* Keep text as the object's JSON unless a newer version is already kept
 * (a write's answer can arrive before the watch shows it). A write's
 * answer (known_only) only replaces an object the watch shows: one
 * deleted meanwhile stays gone. Takes text. */
static void json_keep(ks_kube_cluster_client *kb, size_t ki, const char *key, char *text, const char *rv,
                      bool known_only) {
    long long got = rv_num(rv);
    pthread_mutex_lock(&kb->json_mu);
    entry *e = store_find(&kb->json[ki], key, ks_hash_bytes(key, strlen(key)));
    json_text *cur = e ? e->obj : NULL;
    if ((!cur && known_only) || (cur && cur->rv >= 0 && got >= 0 && got < cur->rv)) {
        pthread_mutex_unlock(&kb->json_mu);
        free(text);
        return;
    }
    json_text_free(store_put(&kb->json[ki], key, json_text_new(kb, text, got)));
    pthread_mutex_unlock(&kb->json_mu);
    free(text);
}

/* What of a kept object an update needs. A claim not yet allocated: all
 * of it (PreBind adds the finalizer with an update of the object, whose
 * spec must be the stored one). An allocated claim is only written
 * through /status (a reservation added, PostFilter's deallocation), and
 * a status update takes the spec and the metadata from the stored object
 * (resourceclaim statusStrategy.PrepareForUpdate: the spec and
 * ResetObjectMetaForStatus; rest.BeforeUpdate: uid, creationTimestamp,
 * generation): kept are apiVersion, kind, the identity and
 * resourceVersion, the status, and the deletionTimestamp and finalizers
 * the writes' checks read (claim_writes.c). A claim of the DRA benchmark:
 * ~950 bytes whole, ~550 so. */
static const char *const status_update_top[] = {"apiVersion", "kind", "metadata", "status"};
static const char *const status_update_meta[] = {"name",          "namespace",         "uid",
                                                 "resourceVersion", "deletionTimestamp", "finalizers"};

static bool listed(const char *key, const char *const *keys, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0) return true;
    return false;
}

static bool tree_allocated(const ks_tree *obj) {
    const ks_tree *a = kt_get(kt_get(obj, "status"), "allocation");
    return a && a->type == KT_MAP;
}

/* A shallow copy of map t with the keys keep() accepts: its own vectors,
 * the reflector's items. */
static ks_tree tree_subset(const ks_tree *t, bool (*keep)(const char *key, void *arg), void *arg) {
    ks_tree m = *t;
    m.keys = ks_xcalloc(t->n ? t->n : 1, sizeof(*m.keys));
    m.items = ks_xcalloc(t->n ? t->n : 1, sizeof(*m.items));
    m.n = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        if (!keep(t->keys[i], arg)) continue;
        m.keys[m.n] = t->keys[i];
        m.items[m.n++] = t->items[i];
    }
    return m;
}

static bool keep_meta(const char *key, void *status_only) {
    return status_only ? listed(key, status_update_meta, sizeof status_update_meta / sizeof *status_update_meta)
                       : strcmp(key, "managedFields") != 0;
}

static bool keep_top(const char *key, void *status_only) {
    return !status_only || listed(key, status_update_top, sizeof status_update_top / sizeof *status_update_top);
}

/* The JSON text of obj as kept, without metadata.managedFields (a third
 * to half of a claim's text): a PUT that carries none keeps the live
 * object's (the API server's field manager reads the live object's when an
 * update has none, "to prevent clients who don't understand managedFields
 * from deleting it"), and a status PUT always keeps them; an allocated
 * claim as a status update needs it (above). The tree is the reflector's:
 * shallow copies of the two maps leave the rest out. */
static char *kept_text(const ks_tree *obj, bool claim) {
    void *status_only = claim && tree_allocated(obj) ? (void *)obj : NULL;
    const ks_tree *md = kt_get(obj, "metadata");
    if (!md || md->type != KT_MAP || obj->type != KT_MAP) return kt_to_json(obj, 0);
    ks_tree m = tree_subset(md, keep_meta, status_only), top = tree_subset(obj, keep_top, status_only);
    for (uint32_t i = 0; i < top.n; i++)
        if (top.items[i] == md) top.items[i] = &m;
    char *text = kt_to_json(&top, 0);
    free(m.keys);
    free(m.items);
    free(top.keys);
    free(top.items);
    return text;
}

/* The same for a write's answer (a JSON object, changed in place). */
static void json_to_kept(json_t *o, bool claim) {
    json_t *md = json_object_get(o, "metadata");
    json_object_del(md, "managedFields");
    json_t *al = json_object_get(json_object_get(o, "status"), "allocation");
    if (!claim || !json_is_object(al)) return;
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(o, tmp, key, v) if (!keep_top(key, o)) json_object_del(o, key);
    json_object_foreach_safe(md, tmp, key, v) if (!keep_meta(key, o)) json_object_del(md, key);
}

static void json_note(ks_kube_cluster_client *kb, size_t ki, ks_refl_event type, const ks_tree *obj) {
    char key[512];
    obj_key(obj, key, sizeof(key));
    if (type == KS_REFL_DELETED) {
        pthread_mutex_lock(&kb->json_mu);
        json_text_free(store_del(&kb->json[ki], key));
        pthread_mutex_unlock(&kb->json_mu);
        return;
    }
    const ks_tree *rv = kt_get(kt_get(obj, "metadata"), "resourceVersion");
    json_keep(kb, ki, key, kept_text(obj, kinds[ki].k == KS_KIND_RESOURCE_CLAIM), rv && rv->type == KT_STRING ? rv->text : NULL,
              false);
}

static void write_key(const ks_object_write *w, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", w->ns ? w->ns : "", w->name);
}

/* The client's copy of the object under the writer's resourceVersion
 * (NULL: not kept). */
static json_t *kept_object(ks_kube_cluster_client *kb, size_t ki, const ks_object_write *w) {
    if (!kinds[ki].keep_json) return NULL;
    char key[512];
    write_key(w, key, sizeof(key));
    pthread_mutex_lock(&kb->json_mu);
    entry *e = store_find(&kb->json[ki], key, ks_hash_bytes(key, strlen(key)));
    char *text = e ? json_text_get(e->obj) : NULL;
    pthread_mutex_unlock(&kb->json_mu);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!o) return NULL;
    const char *rv = json_rv(o);
    if (w->resource_version && (!rv || strcmp(rv, w->resource_version) != 0))
        json_object_set_new(json_object_get(o, "metadata"), "resourceVersion", json_string(w->resource_version));
    return o;
}

/* An API call's failure as client-go's error reads: the Status message,
 * else the body, else the transport error. */
static char *call_error(const ks_kube_response *r) {
    char *msg = r->code ? ks_kube_status_message(r->body, r->body_len) : NULL;
    if (msg) return msg;
    if (r->code) {
        ks_strbuf b;
        ks_sb_init(&b);
        ks_sb_printf(&b, "the server responded with the status code %ld", r->code);
        return ks_sb_take(&b);
    }
    return ks_xstrdup(r->error ? r->error : "no answer from the API server");
}

/* One request with a JSON body; the answer's object on 200 (*code set;
 * else NULL and *err). */
static json_t *object_call(ks_kube_cluster_client *kb, const char *method, const char *path, const char *ctype,
                           json_t *body, long *code, char **err) {
    char *js = body ? json_dumps(body, JSON_COMPACT) : NULL;
    ks_kube_request req = {.method = method,
                           .path = path,
                           .content_type = ctype,
                           .body = js,
                           .body_len = js ? strlen(js) : 0,
                           /* a patch says what to set: sent again, the same */
                           .idempotent = !strcmp(method, "GET") || !strcmp(method, "PATCH")};
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &req, &r);
    free(js);
    *code = r.code;
    json_t *o = r.code == 200 ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    if (!o) *err = r.code == 200 ? ks_xstrdup("the answer is not a JSON object") : call_error(&r);
    if (r.code == 200 && !o) *code = -1;
    ks_kube_response_free(&r);
    pthread_mutex_lock(&kb->mu);
    kb->stats.object_writes += strcmp(method, "GET") != 0;
    pthread_mutex_unlock(&kb->mu);
    return o;
}

static const char *noun_of(const ks_object_write *w, char *buf, size_t n) {
    if (w->noun) return w->noun;
    snprintf(buf, n, "%s %s%s%s", w->kind, w->ns ? w->ns : "", w->ns ? "/" : "", w->name);
    return buf;
}

/* "<action> <noun>: <err>", or err alone without an action (takes err). */
static ks_status *write_failed(const ks_object_write *w, const char *action, char *err) {
    char noun[600];
    ks_status *st = action ? ks_status_new(KS_ERROR, "%s %s: %s", action, noun_of(w, noun, sizeof(noun)), err)
                           : ks_status_new(KS_ERROR, "%s", err);
    free(err);
    return st;
}

/* A write's answer: kept (keep_json), decoded for the writer. */
static void answered(ks_kube_cluster_client *kb, size_t ki, const ks_object_write *w, json_t *o) {
    /* kept as the watch's copies are (kept_text); the decoder reads no
     * managedFields either */
    json_object_del(json_object_get(o, "metadata"), "managedFields");
    char *js = json_dumps(o, JSON_COMPACT);
    if (kinds[ki].keep_json) {
        char key[512];
        write_key(w, key, sizeof(key));
        json_to_kept(o, kinds[ki].k == KS_KIND_RESOURCE_CLAIM);
        char *kept = json_dumps(o, JSON_COMPACT);
        if (kept) json_keep(kb, ki, key, kept, json_rv(o), true);
    }
    if (w->written) {
        ks_arena *a = ks_arena_new(4096);
        ks_tree **docs = NULL;
        uint32_t ndocs = 0;
        char *perr = NULL;
        if (kt_parse(a, kinds[ki].kind, js, strlen(js), &docs, &ndocs, &perr) && ndocs == 1)
            *w->written = decode(kb, &kinds[ki], docs[0]);
        free(perr);
        ks_arena_free(a);
    }
    free(js);
}

static const char *const patch_types[] = {
    [KS_WRITE_MERGE_PATCH] = "application/merge-patch+json",
    [KS_WRITE_STRATEGIC_PATCH] = "application/strategic-merge-patch+json",
    [KS_WRITE_JSON_PATCH] = "application/json-patch+json",
};

static ks_status *write_patch(ks_kube_cluster_client *kb, size_t ki, const ks_object_write *w, const char *path) {
    json_t *body = w->patch(w);
    long code = 0;
    char *err = NULL;
    json_t *o = object_call(kb, "PATCH", path, patch_types[w->verb], body, &code, &err);
    json_decref(body);
    if (!o) return write_failed(w, w->action, err);
    answered(kb, ki, w, o);
    json_decref(o);
    return NULL;
}

/* client-go's retry.DefaultRetry between attempts: 10ms, jitter 0.1
 * (a generator per thread, not the process-wide rand()). */
static void retry_pause(void) {
    static _Thread_local uint64_t x;
    if (!x) x = (uint64_t)ks_monotonic_ns() | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    struct timespec ts = {0, 10000000L + (long)(x % 1000000)};
    nanosleep(&ts, NULL);
}

/* upstream retry.RetryOnConflict around Get/Update: 5 attempts, a 409
 * gets the object again; the edit decides on each version. */
static ks_status *write_update(ks_kube_cluster_client *kb, size_t ki, const ks_object_write *w, const char *path) {
    char *get = object_path(w->kind, w->ns, w->name, NULL);
    json_t *o = kept_object(kb, ki, w);
    bool refresh = o == NULL;
    ks_status *st = NULL;
    for (int attempt = 0; attempt < 5; attempt++) {
        ks_status_free(st);
        st = NULL;
        long code = 0;
        char *err = NULL;
        if (attempt) retry_pause();
        if (refresh) {
            json_decref(o);
            o = object_call(kb, "GET", get, NULL, NULL, &code, &err);
            if (!o) {
                char noun[600];
                /* upstream's words for its Get after a conflict */
                st = attempt ? ks_status_new(KS_ERROR, "get updated %s after conflict: %s", noun_of(w, noun, sizeof(noun)), err)
                             : ks_status_new(KS_ERROR, "get %s: %s", noun_of(w, noun, sizeof(noun)), err);
                free(err);
                break;
            }
            if (attempt) ks_infof(5, "retrying update after conflict %s=%s/%s", w->kind, w->ns ? w->ns : "", w->name);
        }
        refresh = true;
        st = w->edit(o, w);
        if (st) break;
        json_t *nw = object_call(kb, "PUT", path, NULL, o, &code, &err);
        if (!nw) {
            st = write_failed(w, w->action, err);
            if (code == 409) continue;
            break;
        }
        answered(kb, ki, w, nw);
        json_decref(nw);
        break;
    }
    json_decref(o);
    free(get);
    /* the edit found nothing to change: no request, done */
    if (ks_status_code(st) == KS_SKIP) {
        ks_status_free(st);
        st = NULL;
    }
    return st;
}

/* Wait until the watch shows what the writer waits for, or the timeout:
 * woken by every object the watch delivers (on_object), not by polling. */
static ks_status *write_await(ks_kube_cluster_client *kb, size_t ki, const ks_object_write *w) {
    const kind_def *k = &kinds[ki];
    if (k->k == KS_KIND_POD || k->k == KS_KIND_NODE)
        return ks_status_new(KS_ERROR, "waiting on a %s is not supported", k->kind);
    char key[512];
    write_key(w, key, sizeof(key));
    uint64_t h = ks_hash_bytes(key, strlen(key));
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    int64_t ns = (int64_t)deadline.tv_nsec + (w->timeout_ms % 1000) * 1000000;
    deadline.tv_sec += w->timeout_ms / 1000 + ns / 1000000000;
    deadline.tv_nsec = ns % 1000000000;
    pthread_mutex_lock(&kb->deliver_mu);
    bool done = false;
    for (;;) {
        entry *e = store_find(&kb->stores[ki], key, h);
        done = w->until(e ? e->obj : NULL, w);
        if (done || kb->stopped) break;
        if (pthread_cond_timedwait(&kb->objects_cv, &kb->deliver_mu, &deadline) == ETIMEDOUT) {
            e = store_find(&kb->stores[ki], key, h);
            done = w->until(e ? e->obj : NULL, w);
            break;
        }
    }
    pthread_mutex_unlock(&kb->deliver_mu);
    return done ? NULL : write_failed(w, w->action, ks_xstrdup("timed out waiting for the condition"));
}

static ks_status *kb_write(ks_kube_cluster_client *kb, const ks_object_write *w) {
    if (w->written) *w->written = NULL;
    /* a cluster's controller makes it */
    if (w->controller) return NULL;
    const kind_def *k = kind_named(w->kind);
    if (!k) return ks_status_new(KS_ERROR, "writing %s %s: not a kind the client knows", w->kind, w->name);
    size_t ki = (size_t)(k - kinds);
    if (w->verb == KS_WRITE_AWAIT) return write_await(kb, ki, w);
    char *path = object_path(w->kind, w->ns, w->name, w->subresource);
    ks_status *st = w->verb == KS_WRITE_UPDATE ? write_update(kb, ki, w, path) : write_patch(kb, ki, w, path);
    free(path);
    return st;
}

/* ---- lifetime ---------------------------------------------------------------- */

/* Every write, by type (backend/api_calls.h). */
static ks_status *kb_execute(void *ctx, const ks_api_call *c) {
    switch (c->type) {
    case KS_CALL_BINDING: return kb_bind(ctx, c->pod, c->node);
    case KS_CALL_STATUS_PATCH: return kb_patch(ctx, c->pod, c->patch);
    case KS_CALL_DELETE: return kb_delete(ctx, c->pod);
    case KS_CALL_EVENT: kb_event(ctx, c->event); return NULL;
    case KS_CALL_OBJECT_WRITE: return kb_write(ctx, c->write);
    default: return ks_status_new(KS_ERROR, "unknown API call %d", (int)c->type);
    }
}

/* Bindings go out without blocking the caller; an event only enters the
 * recorder's queue; anything else is made at once on the caller's thread. */
static void kb_execute_async(void *ctx, const ks_api_call *c, void (*done)(void *arg, ks_status *result),
                             void *arg) {
    if (c->type == KS_CALL_BINDING) {
        kb_bind_async(ctx, c->pod, c->node, done, arg);
        return;
    }
    done(arg, kb_execute(ctx, c));
}

ks_kube_cluster_client *ks_kube_cluster_client_new(const ks_kube_cluster_client_options *o) {
    ks_kube_cluster_client *kb = ks_xcalloc(1, sizeof(*kb));
    kb->client = o->client;
    kb->events = o->events;
    kb->watch_pod_groups = o->watch_pod_groups;
    kb->watch_dra = o->watch_dra;
    kb->watch_device_taint_rules = o->watch_dra && o->watch_device_taint_rules;
    kb->first_list_page = first_list_page();
    pthread_mutex_init(&kb->json_mu, NULL);
    pthread_mutex_init(&kb->mu, NULL);
    pthread_mutex_init(&kb->deliver_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&kb->objects_cv, &ca);
    pthread_condattr_destroy(&ca);
    ks_map_init(&kb->pods);
    ks_map_init(&kb->nodes);
    for (size_t i = 0; i < NKINDS; i++) {
        ks_map_init(&kb->stores[i].by_hash);
        ks_map_init(&kb->json[i].by_hash);
    }
    kb->iface = (ks_cluster_client){.ctx = kb,
                                    .start = kb_start,
                                    .stop = kb_stop,
                                    .synced = kb_synced,
                                    .execute = kb_execute,
                                    .executes = KS_CALLS_ALL,
                                    .execute_async = kb_execute_async,
                                    .starts = KS_CALL_BIT(KS_CALL_BINDING) | KS_CALL_BIT(KS_CALL_EVENT)};
    return kb;
}

void ks_kube_cluster_client_free(ks_kube_cluster_client *kb) {
    if (!kb) return;
    kb_stop(kb);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&kb->pods, &it, &k, &v);) ks_pod_unref(v);
    for (size_t it = 0; ks_map_next(&kb->nodes, &it, &k, &v);) ks_node_unref(v);
    ks_map_free(&kb->pods);
    ks_map_free(&kb->nodes);
    for (size_t i = 0; i < NKINDS; i++) store_free(&kb->stores[i], kinds[i].free);
    for (size_t i = 0; i < NKINDS; i++) store_free(&kb->json[i], json_text_free);
    if (kb->z_ready) deflateEnd(&kb->z);
    pthread_mutex_destroy(&kb->json_mu);
    pthread_mutex_destroy(&kb->mu);
    pthread_mutex_destroy(&kb->deliver_mu);
    pthread_cond_destroy(&kb->objects_cv);
    free(kb);
}

const ks_cluster_client *ks_kube_cluster_client_iface(ks_kube_cluster_client *kb) { return &kb->iface; }

void ks_kube_cluster_client_stats_get(ks_kube_cluster_client *kb, ks_kube_cluster_client_stats *out) {
    pthread_mutex_lock(&kb->mu);
    *out = kb->stats;
    pthread_mutex_unlock(&kb->mu);
    out->kept_json = out->kept_json_bytes = out->kept_json_text_bytes = 0;
    pthread_mutex_lock(&kb->json_mu);
    for (size_t i = 0; i < NKINDS; i++) {
        uint64_t k;
        void *v;
        for (size_t it = 0; ks_map_next(&kb->json[i].by_hash, &it, &k, &v);)
            for (const entry *e = v; e; e = e->next) {
                const json_text *t = e->obj;
                out->kept_json++;
                out->kept_json_bytes += t->zlen ? t->zlen : t->len;
                out->kept_json_text_bytes += t->len;
            }
    }
    pthread_mutex_unlock(&kb->json_mu);
}
