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
} kind_def;

/* What kube-scheduler v1.34.1 watches with the default plugins (plus
 * PodGroups for Coscheduling). */
static const kind_def kinds[] = {
    {"Node", "/api/v1/nodes", KS_KIND_NODE, NULL, NULL, false, ALWAYS},
    {"Pod", "/api/v1/pods", KS_KIND_POD, NULL, NULL, false, ALWAYS},
    {"Namespace", "/api/v1/namespaces", KS_KIND_NAMESPACE, dec_namespace, free_namespace, false, ALWAYS},
    {"PersistentVolume", "/api/v1/persistentvolumes", KS_KIND_PV, dec_pv, free_pv, false, ALWAYS},
    {"PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", KS_KIND_PVC, dec_pvc, free_pvc, false, ALWAYS},
    {"StorageClass", "/apis/storage.k8s.io/v1/storageclasses", KS_KIND_STORAGE_CLASS, dec_storage_class,
     free_storage_class, false, ALWAYS},
    {"CSINode", "/apis/storage.k8s.io/v1/csinodes", KS_KIND_CSINODE, dec_csinode, free_csinode, false, ALWAYS},
    {"CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", KS_KIND_CSI_DRIVER, dec_csi_driver, free_csi_driver, false,
     ALWAYS},
    {"CSIStorageCapacity", "/apis/storage.k8s.io/v1/csistoragecapacities", KS_KIND_CSI_CAPACITY, dec_csi_capacity,
     free_csi_capacity, false, ALWAYS},
    {"VolumeAttachment", "/apis/storage.k8s.io/v1/volumeattachments", KS_KIND_VOLUME_ATTACHMENT,
     dec_volume_attachment, free_volume_attachment, false, ALWAYS},
    {"PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", KS_KIND_PDB, dec_pdb, free_pdb, false, ALWAYS},
    {"Service", "/api/v1/services", KS_KIND_WORKLOAD, dec_service, free_workload, false, ALWAYS},
    {"ReplicationController", "/api/v1/replicationcontrollers", KS_KIND_WORKLOAD, dec_rc, free_workload, false,
     ALWAYS},
    {"ReplicaSet", "/apis/apps/v1/replicasets", KS_KIND_WORKLOAD, dec_rs, free_workload, false, ALWAYS},
    {"StatefulSet", "/apis/apps/v1/statefulsets", KS_KIND_WORKLOAD, dec_sts, free_workload, false, ALWAYS},
    /* DynamicResources (resource.k8s.io/v1; watch_dra) */
    {"ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", KS_KIND_RESOURCE_CLAIM, dec_claim, free_claim, false,
     WITH_DRA},
    {"ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices", KS_KIND_RESOURCE_SLICE, dec_slice, free_slice, false,
     WITH_DRA},
    {"DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses", KS_KIND_DEVICE_CLASS, dec_class, free_class, false,
     WITH_DRA},
    /* DRADeviceTaints (watch_device_taint_rules) */
    {"DeviceTaintRule", "/apis/resource.k8s.io/v1alpha3/devicetaintrules", KS_KIND_DEVICE_TAINT_RULE, dec_taint_rule,
     free_taint_rule, false, WITH_TAINT_RULES},
    {"PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", KS_KIND_POD_GROUP, dec_pod_group, free_pod_group, true,
     WITH_POD_GROUPS},
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
    int64_t bind_timeout_s;
    bool watch_pod_groups;
    bool watch_dra;
    bool watch_device_taint_rules;

    ks_watch_fn fn;
    void *arg;
    pthread_mutex_t deliver_mu; /* one watch event at a time */
    pthread_cond_t claims_cv;   /* a PVC was delivered, or stop (deliver_mu) */
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

    /* ResourceClaims as JSON text ("ns/name" -> the newest version seen,
     * from the watch or a write's answer), the objects the plugin's
     * status updates are made from (claims_mu) */
    pthread_mutex_t claims_mu;
    store claim_json;
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
    if (k->k == KS_KIND_PVC) pthread_cond_broadcast(&kb->claims_cv);
}

static void claim_json_note(ks_kube_cluster_client *kb, ks_refl_event type, const ks_tree *obj);

static void refl_event(void *arg, ks_refl_event type, const ks_tree *obj) {
    kind_ctx *kc = arg;
    ks_kube_cluster_client *kb = kc->kb;
    pthread_mutex_lock(&kb->deliver_mu);
    switch (kinds[kc->i].k) {
    case KS_KIND_POD: on_pod(kb, type, obj); break;
    case KS_KIND_NODE: on_node(kb, type, obj); break;
    default: on_object(kb, kc->i, type, obj); break;
    }
    if (kinds[kc->i].k == KS_KIND_RESOURCE_CLAIM) claim_json_note(kb, type, obj);
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
    pthread_cond_broadcast(&kb->claims_cv);
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

static ks_status *kb_bind(void *ctx, const ks_pod *pod, const char *node) {
    ks_kube_cluster_client *kb = ctx;
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
    char *path = pod_path(pod, "binding");
    ks_kube_request req = {
        .method = "POST", .path = path, .content_type = ctype, .body = js, .body_len = len, .negotiate = true};
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &req, &r);
    ks_status *st = NULL;
    pthread_mutex_lock(&kb->mu);
    kb->stats.binds++;
    if (r.code == 409) kb->stats.bind_conflicts++;
    pthread_mutex_unlock(&kb->mu);
    if (r.code != 200 && r.code != 201) st = api_error("binding", pod, &r);
    ks_kube_response_free(&r);
    free(path);
    free(js);
    return st;
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

/* A plugin's PreBind annotations (ks_handle_patch_pod_annotations): one
 * strategic-merge PATCH of the pod's metadata, as a client-go plugin
 * patching its pod would send (a null value removes the key). */
static ks_status *kb_patch_annotations(void *ctx, const ks_pod *pod, const ks_annotation_patch *m) {
    ks_kube_cluster_client *kb = ctx;
    json_t *ann = json_object();
    for (size_t i = 0; i < m->n; i++)
        json_object_set_new(ann, m->keys[i], m->values[i] ? json_string(m->values[i]) : json_null());
    return patch_pod(kb, pod, NULL, json_pack("{s:{s:o}}", "metadata", "annotations", ann), "annotating");
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

/* ---- volume bindings --------------------------------------------------------- */

/* GET the object, let edit change it, PUT it back (409: get again). */
static ks_status *update_object(ks_kube_cluster_client *kb, const char *path, void (*edit)(json_t *o, const void *arg),
                                const void *arg) {
    for (int attempt = 0; attempt < 5; attempt++) {
        ks_kube_request get = {.method = "GET", .path = path, .idempotent = true};
        ks_kube_response r = {0};
        ks_kube_do(kb->client, &get, &r);
        if (r.code != 200) {
            ks_status *st = ks_status_new(KS_ERROR, "GET %s: %ld %s", path, r.code, r.error ? r.error : "");
            ks_kube_response_free(&r);
            return st;
        }
        json_t *o = json_loadb(r.body, r.body_len, 0, NULL);
        ks_kube_response_free(&r);
        if (!o) return ks_status_new(KS_ERROR, "GET %s: not JSON", path);
        edit(o, arg);
        char *js = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        ks_kube_request put = {.method = "PUT", .path = path, .body = js, .body_len = strlen(js)};
        ks_kube_do(kb->client, &put, &r);
        free(js);
        long code = r.code;
        ks_status *st = code == 200 ? NULL : ks_status_new(KS_ERROR, "PUT %s: %ld %s", path, code, r.error ? r.error : "");
        ks_kube_response_free(&r);
        if (code != 409) return st;
        ks_status_free(st);
    }
    return ks_status_new(KS_ERROR, "PUT %s: conflicts", path);
}

typedef struct claim_ref {
    const ks_pvc *pvc;
} claim_ref;

/* upstream BindVolumeToClaim: claimRef and the bound-by-controller
 * annotation on the PV. */
static void set_claim_ref(json_t *o, const void *arg) {
    const ks_pvc *pvc = ((const claim_ref *)arg)->pvc;
    json_t *spec = json_object_get(o, "spec");
    if (!spec) json_object_set_new(o, "spec", spec = json_object());
    json_object_set_new(spec, "claimRef",
                        json_pack("{s:s, s:s, s:s, s:s, s:s?}", "kind", "PersistentVolumeClaim", "apiVersion", "v1",
                                  "namespace", ks_str(pvc->ns), "name", ks_str(pvc->name), "uid", pvc->uid));
    json_t *md = json_object_get(o, "metadata");
    json_t *ann = json_object_get(md, "annotations");
    if (!ann) json_object_set_new(md, "annotations", ann = json_object());
    json_object_set_new(ann, "pv.kubernetes.io/bound-by-controller", json_string("yes"));
}

static void set_selected_node(json_t *o, const void *arg) {
    const char *node = arg;
    json_t *md = json_object_get(o, "metadata");
    json_t *ann = json_object_get(md, "annotations");
    if (!ann) json_object_set_new(md, "annotations", ann = json_object());
    json_object_set_new(ann, "volume.kubernetes.io/selected-node", json_string(node));
}

/* deliver_mu held. */
static bool claim_bound(ks_kube_cluster_client *kb, const ks_pvc *want) {
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ks_str(want->ns), ks_str(want->name));
    entry *e = store_find(&kb->stores[kind_index(KS_KIND_PVC)], key, ks_hash_bytes(key, strlen(key)));
    const ks_pvc *cur = e ? e->obj : NULL;
    return cur && cur->volume_name && cur->volume_name != ks_intern("");
}

/* Wait until the PV controller has bound every claim, or limit_s seconds:
 * woken by each claim the watch delivers (on_object), not by polling. */
static bool wait_claims_bound(ks_kube_cluster_client *kb, const ks_volume_binding *b, size_t n, int64_t limit_s) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += limit_s;
    pthread_mutex_lock(&kb->deliver_mu);
    bool all = false;
    for (;;) {
        size_t done = 0;
        for (size_t i = 0; i < n; i++) done += claim_bound(kb, b[i].pvc);
        all = done == n;
        if (all || kb->stopped) break;
        if (pthread_cond_timedwait(&kb->claims_cv, &kb->deliver_mu, &deadline) == ETIMEDOUT) {
            done = 0;
            for (size_t i = 0; i < n; i++) done += claim_bound(kb, b[i].pvc);
            all = done == n;
            break;
        }
    }
    pthread_mutex_unlock(&kb->deliver_mu);
    return all;
}

/* upstream volumebinding BindPodVolumes: the API updates, then a wait
 * (up to bindTimeoutSeconds) until the PV controller has bound every
 * claim. Upstream polls every second; this wakes on the claim's watch
 * event, so the answer is the same, up to a second sooner. */
static ks_status *kb_bind_volumes(void *ctx, const ks_pod *pod, const ks_volume_binding *b, size_t n) {
    ks_kube_cluster_client *kb = ctx;
    for (size_t i = 0; i < n; i++) {
        ks_status *st;
        char *path;
        if (b[i].pv) {
            path = object_path("PersistentVolume", NULL, ks_str(b[i].pv->name), NULL);
            claim_ref cr = {b[i].pvc};
            st = update_object(kb, path, set_claim_ref, &cr);
        } else {
            path = object_path("PersistentVolumeClaim", ks_str(b[i].pvc->ns), ks_str(b[i].pvc->name), NULL);
            st = update_object(kb, path, set_selected_node, ks_str(b[i].selected_node));
        }
        free(path);
        if (st) return st;
    }
    if (wait_claims_bound(kb, b, n, kb->bind_timeout_s > 0 ? kb->bind_timeout_s : 600)) return NULL;
    char buf[300];
    return ks_status_new(KS_ERROR, "binding volumes: timed out waiting for the condition (pod %s)",
                          ks_pod_fullname(pod, buf, sizeof(buf)));
}

/* ---- resource claims (DynamicResources) ------------------------------------- */

/* The claim writes kube-scheduler v1.34.1's DynamicResources plugin makes
 * (bindClaim in PreBind, Unreserve, PostFilter), call for call. Status
 * updates are PUTs of the whole object, so the backend keeps every
 * claim's JSON as the API server last showed it: the plugin's version is
 * that text, or, when the plugin holds another resourceVersion, that text
 * under the plugin's version (the API server then answers as it would to
 * upstream's copy: a conflict unless it is current). */

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

/* A claim's JSON text and its resourceVersion. */
typedef struct claim_text {
    long long rv;
    char *text;
} claim_text;

static void claim_text_free(void *p) {
    claim_text *t = p;
    if (t) free(t->text);
    free(t);
}

/* Keep text as the claim's JSON unless a newer version is already kept
 * (a write's answer can arrive before the watch shows it). A write's
 * answer (known_only) only replaces a claim the watch shows: one deleted
 * meanwhile stays gone. Takes text. */
static void claim_json_keep(ks_kube_cluster_client *kb, const char *key, char *text, const char *rv, bool known_only) {
    long long got = rv_num(rv);
    pthread_mutex_lock(&kb->claims_mu);
    entry *e = store_find(&kb->claim_json, key, ks_hash_bytes(key, strlen(key)));
    claim_text *cur = e ? e->obj : NULL;
    if ((!cur && known_only) || (cur && cur->rv >= 0 && got >= 0 && got < cur->rv)) {
        pthread_mutex_unlock(&kb->claims_mu);
        free(text);
        return;
    }
    claim_text *t = ks_xcalloc(1, sizeof(*t));
    t->rv = got;
    t->text = text;
    claim_text_free(store_put(&kb->claim_json, key, t));
    pthread_mutex_unlock(&kb->claims_mu);
}

static void claim_json_note(ks_kube_cluster_client *kb, ks_refl_event type, const ks_tree *obj) {
    char key[512];
    obj_key(obj, key, sizeof(key));
    if (type == KS_REFL_DELETED) {
        pthread_mutex_lock(&kb->claims_mu);
        claim_text_free(store_del(&kb->claim_json, key));
        pthread_mutex_unlock(&kb->claims_mu);
        return;
    }
    const ks_tree *rv = kt_get(kt_get(obj, "metadata"), "resourceVersion");
    claim_json_keep(kb, key, kt_to_json(obj, 0), rv && rv->type == KT_STRING ? rv->text : NULL, false);
}

static char *claim_path(const ks_resource_claim *c, bool status) {
    return object_path("ResourceClaim", ks_str(c->ns), ks_str(c->name), status ? "status" : NULL);
}

/* The plugin's version of the claim as an object to send (NULL: not known). */
static json_t *claim_object(ks_kube_cluster_client *kb, const ks_resource_claim *c) {
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ks_str(c->ns), ks_str(c->name));
    pthread_mutex_lock(&kb->claims_mu);
    entry *e = store_find(&kb->claim_json, key, ks_hash_bytes(key, strlen(key)));
    json_t *o = e ? json_loads(((claim_text *)e->obj)->text, 0, NULL) : NULL;
    pthread_mutex_unlock(&kb->claims_mu);
    if (!o) return NULL;
    const char *rv = json_rv(o);
    if (c->resource_version && (!rv || strcmp(rv, c->resource_version) != 0))
        json_object_set_new(json_object_get(o, "metadata"), "resourceVersion", json_string(c->resource_version));
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

/* One call with a JSON body; the answer's object on 200 (*code set). */
static json_t *claim_call(ks_kube_cluster_client *kb, const char *method, const char *path, const char *ctype, json_t *body,
                          long *code, char **err) {
    char *js = body ? json_dumps(body, JSON_COMPACT) : NULL;
    ks_kube_request req = {.method = method,
                           .path = path,
                           .content_type = ctype,
                           .body = js,
                           .body_len = js ? strlen(js) : 0,
                           .idempotent = !strcmp(method, "GET")};
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &req, &r);
    free(js);
    *code = r.code;
    json_t *o = r.code == 200 ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    if (!o) *err = r.code == 200 ? ks_xstrdup("the answer is not a JSON object") : call_error(&r);
    if (r.code == 200 && !o) *code = -1;
    ks_kube_response_free(&r);
    pthread_mutex_lock(&kb->mu);
    kb->stats.claim_writes += strcmp(method, "GET") != 0;
    pthread_mutex_unlock(&kb->mu);
    return o;
}

static json_t *str_list(const char *const *v, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *requirements_json(const ks_requirement *r, uint32_t n) {
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        json_t *x = json_pack("{s:s, s:s}", "key", ks_str(r[i].key), "operator", ops[r[i].op]);
        if (r[i].nvalues) {
            json_t *vals = json_array();
            for (uint32_t k = 0; k < r[i].nvalues; k++) json_array_append_new(vals, json_string(ks_str(r[i].values[k])));
            json_object_set_new(x, "values", vals);
        }
        json_array_append_new(a, x);
    }
    return a;
}

/* status.allocation as the allocator's result serializes (v1). */
static json_t *allocation_json(const ks_allocation_result *al) {
    json_t *results = json_array();
    for (uint32_t i = 0; i < al->nresults; i++) {
        const ks_device_result *d = &al->results[i];
        json_t *x = json_pack("{s:s, s:s, s:s, s:s}", "request", d->request, "driver", d->driver, "pool", d->pool,
                              "device", d->device);
        if (d->has_admin_access) json_object_set_new(x, "adminAccess", json_boolean(d->admin_access));
        if (d->share_id) json_object_set_new(x, "shareID", json_string(d->share_id));
        if (d->nconsumed) {
            json_t *cc = json_object();
            for (uint32_t k = 0; k < d->nconsumed; k++) {
                char q[64];
                ks_quantity_format(&d->consumed[k].q, q, sizeof q);
                json_object_set_new(cc, d->consumed[k].name, json_string(q));
            }
            json_object_set_new(x, "consumedCapacity", cc);
        }
        json_array_append_new(results, x);
    }
    json_t *devices = json_pack("{s:o}", "results", results);
    if (al->nconfig) {
        json_t *cfg = json_array();
        for (uint32_t i = 0; i < al->nconfig; i++) {
            const ks_device_config *dc = &al->config[i];
            json_t *x = json_pack("{s:s}", "source", dc->from_class ? "FromClass" : "FromClaim");
            if (dc->nrequests) json_object_set_new(x, "requests", str_list(dc->requests, dc->nrequests));
            json_t *op = json_pack("{s:s}", "driver", dc->driver ? dc->driver : "");
            if (dc->parameters) {
                char *t = kt_to_json(dc->parameters, 0);
                json_t *pj = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
                free(t);
                if (pj) json_object_set_new(op, "parameters", pj);
            }
            json_object_set_new(x, "opaque", op);
            json_array_append_new(cfg, x);
        }
        json_object_set_new(devices, "config", cfg);
    }
    json_t *a = json_pack("{s:o}", "devices", devices);
    if (al->has_node_selector) {
        json_t *terms = json_array();
        for (uint32_t i = 0; i < al->node_selector.nterms; i++) {
            const ks_node_selector_term *t = &al->node_selector.terms[i];
            json_t *x = json_object();
            if (t->nexpr) json_object_set_new(x, "matchExpressions", requirements_json(t->exprs, t->nexpr));
            if (t->nfields) json_object_set_new(x, "matchFields", requirements_json(t->fields, t->nfields));
            json_array_append_new(terms, x);
        }
        json_object_set_new(a, "nodeSelector", json_pack("{s:o}", "nodeSelectorTerms", terms));
    }
    return a;
}

static json_t *status_of(json_t *o) {
    json_t *st = json_object_get(o, "status");
    if (!json_is_object(st)) json_object_set_new(o, "status", st = json_object());
    return st;
}

/* The claim the API server answered, decoded (NULL when it cannot be). */
static ks_resource_claim *claim_decode(json_t *o) {
    char *js = json_dumps(o, JSON_COMPACT);
    ks_arena *a = ks_arena_new(4096);
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *perr = NULL;
    ks_resource_claim *c = NULL;
    if (kt_parse(a, "ResourceClaim", js, strlen(js), &docs, &ndocs, &perr) && ndocs == 1) {
        ks_errors errs;
        ks_errors_init(&errs);
        ks_decode_ctx dc = {.errs = &errs};
        c = ks_decode_resource_claim(docs[0], &dc);
        ks_errors_free(&errs);
    }
    free(perr);
    ks_arena_free(a);
    free(js);
    return c;
}

/* Remember a claim as a write's answer shows it. */
static void claim_json_answer(ks_kube_cluster_client *kb, const ks_resource_claim *c, json_t *o) {
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ks_str(c->ns), ks_str(c->name));
    claim_json_keep(kb, key, json_dumps(o, JSON_COMPACT), json_rv(o), true);
}

static bool has_finalizer(json_t *o) {
    json_t *f = json_object_get(json_object_get(o, "metadata"), "finalizers");
    size_t i;
    json_t *v;
    json_array_foreach(f, i, v) if (!strcmp(json_string_value(v) ? json_string_value(v) : "", KS_DRA_FINALIZER)) return true;
    return false;
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

/* upstream bindClaim's retry.RetryOnConflict loop: 5 attempts, a 409 on
 * either update gets the claim again; the checks before each attempt and
 * the error texts are upstream's. */
static ks_status *claim_reserve(ks_kube_cluster_client *kb, const ks_claim_update *u, ks_resource_claim **updated) {
    const ks_resource_claim *c = u->claim;
    char ref[600];
    snprintf(ref, sizeof(ref), "%s/%s", ks_str(c->ns), ks_str(c->name));
    char *path = claim_path(c, false), *spath = claim_path(c, true);
    json_t *o = claim_object(kb, c);
    bool refresh = o == NULL;
    char *err = NULL;
    for (int attempt = 0; attempt < 5; attempt++) {
        free(err);
        err = NULL;
        long code = 0;
        char *cerr = NULL;
        if (attempt) retry_pause();
        if (refresh) {
            json_decref(o);
            o = claim_call(kb, "GET", path, NULL, NULL, &code, &cerr);
            if (!o) {
                err = ks_xasprintf("get updated claim %s after conflict: %s", ref, cerr);
                free(cerr);
                break;
            }
            ks_infof(5, "retrying update after conflict claim=%s", ref);
        }
        refresh = true;
        json_t *md = json_object_get(o, "metadata");
        if (json_object_get(md, "deletionTimestamp") && !json_is_null(json_object_get(md, "deletionTimestamp"))) {
            err = ks_xasprintf("claim %s got deleted in the meantime", ref);
            break;
        }
        if (u->allocation) {
            json_t *cur = json_object_get(json_object_get(o, "status"), "allocation");
            if (cur && !json_is_null(cur)) {
                err = ks_xasprintf("claim %s got allocated elsewhere in the meantime", ref);
                break;
            }
            if (!has_finalizer(o)) {
                json_t *f = json_object_get(md, "finalizers");
                if (!json_is_array(f)) json_object_set_new(md, "finalizers", f = json_array());
                json_array_append_new(f, json_string(KS_DRA_FINALIZER));
                json_t *nw = claim_call(kb, "PUT", path, NULL, o, &code, &cerr);
                if (!nw) {
                    err = ks_xasprintf("add finalizer to claim %s: %s", ref, cerr);
                    free(cerr);
                    if (code == 409) continue;
                    break;
                }
                json_decref(o);
                o = nw;
                claim_json_answer(kb, c, o);
            }
            json_object_set_new(status_of(o), "allocation", allocation_json(u->allocation));
        }
        json_t *st = status_of(o), *rf = json_object_get(st, "reservedFor");
        if (!json_is_array(rf)) json_object_set_new(st, "reservedFor", rf = json_array());
        json_array_append_new(rf, json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", ks_str(u->pod->name), "uid",
                                            u->pod->uid ? u->pod->uid : ""));
        json_t *nw = claim_call(kb, "PUT", spath, NULL, o, &code, &cerr);
        if (!nw) {
            err = ks_xasprintf("%s to claim %s: %s", u->allocation ? "add allocation and reservation" : "add reservation",
                        ref, cerr);
            free(cerr);
            if (code == 409) continue;
            break;
        }
        json_decref(o);
        o = nw;
        claim_json_answer(kb, c, o);
        if (updated) *updated = claim_decode(o);
        break;
    }
    json_decref(o);
    free(path);
    free(spath);
    ks_status *st = err ? ks_status_new(KS_ERROR, "%s", err) : NULL;
    free(err);
    return st;
}

static ks_status *kb_update_claim(void *ctx, const ks_claim_update *u, ks_resource_claim **updated) {
    ks_kube_cluster_client *kb = ctx;
    const ks_resource_claim *c = u->claim;
    if (updated) *updated = NULL;
    if (u->op == KS_CLAIM_RESERVE) return claim_reserve(kb, u, updated);
    long code = 0;
    char *err = NULL;
    json_t *ans = NULL;
    if (u->op == KS_CLAIM_UNRESERVE) {
        /* a strategic merge patch: no need for the latest version */
        char *path = claim_path(c, true);
        json_t *patch = json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "uid", c->uid ? c->uid : "", "status",
                                  "reservedFor", "$patch", "delete", "uid", u->pod && u->pod->uid ? u->pod->uid : "");
        ans = claim_call(kb, "PATCH", path, "application/strategic-merge-patch+json", patch, &code, &err);
        json_decref(patch);
        free(path);
    } else {
        /* PostFilter: the plugin's version without reservation and allocation */
        json_t *o = claim_object(kb, c);
        if (!o) {
            char ref[600];
            snprintf(ref, sizeof(ref), "%s/%s", ks_str(c->ns), ks_str(c->name));
            return ks_status_new(KS_ERROR, "resourceclaim %s: not in the backend's cache", ref);
        }
        json_t *st = status_of(o);
        json_object_del(st, "reservedFor");
        json_object_del(st, "allocation");
        json_object_del(st, "devices");
        char *path = claim_path(c, true);
        ans = claim_call(kb, "PUT", path, NULL, o, &code, &err);
        json_decref(o);
        free(path);
    }
    if (!ans) {
        ks_status *st = ks_status_new(KS_ERROR, "%s", err);
        free(err);
        return st;
    }
    /* upstream does not assume these: the watch brings them */
    claim_json_answer(kb, c, ans);
    json_decref(ans);
    return NULL;
}

/* ---- lifetime ---------------------------------------------------------------- */

/* Every write, by type (backend/api_calls.h). */
static ks_status *kb_execute(void *ctx, const ks_api_call *c) {
    switch (c->type) {
    case KS_CALL_BINDING: return kb_bind(ctx, c->pod, c->node);
    case KS_CALL_STATUS_PATCH: return kb_patch(ctx, c->pod, c->patch);
    case KS_CALL_DELETE: return kb_delete(ctx, c->pod);
    case KS_CALL_EVENT: kb_event(ctx, c->event); return NULL;
    case KS_CALL_VOLUME_BINDING: return kb_bind_volumes(ctx, c->pod, c->volumes, c->nvolumes);
    case KS_CALL_CLAIM_UPDATE: return kb_update_claim(ctx, c->claim, c->claim_written);
    case KS_CALL_POD_ANNOTATIONS: return kb_patch_annotations(ctx, c->pod, c->annotations);
    default: return ks_status_new(KS_ERROR, "unknown API call %d", (int)c->type);
    }
}

ks_kube_cluster_client *ks_kube_cluster_client_new(const ks_kube_cluster_client_options *o) {
    ks_kube_cluster_client *kb = ks_xcalloc(1, sizeof(*kb));
    kb->client = o->client;
    kb->events = o->events;
    kb->bind_timeout_s = o->bind_timeout_s;
    kb->watch_pod_groups = o->watch_pod_groups;
    kb->watch_dra = o->watch_dra;
    kb->watch_device_taint_rules = o->watch_dra && o->watch_device_taint_rules;
    pthread_mutex_init(&kb->claims_mu, NULL);
    ks_map_init(&kb->claim_json.by_hash);
    pthread_mutex_init(&kb->mu, NULL);
    pthread_mutex_init(&kb->deliver_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&kb->claims_cv, &ca);
    pthread_condattr_destroy(&ca);
    ks_map_init(&kb->pods);
    ks_map_init(&kb->nodes);
    for (size_t i = 0; i < NKINDS; i++) ks_map_init(&kb->stores[i].by_hash);
    kb->iface = (ks_cluster_client){.ctx = kb,
                                    .start = kb_start,
                                    .stop = kb_stop,
                                    .synced = kb_synced,
                                    .execute = kb_execute,
                                    .executes = KS_CALLS_ALL};
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
    store_free(&kb->claim_json, claim_text_free);
    pthread_mutex_destroy(&kb->claims_mu);
    pthread_mutex_destroy(&kb->mu);
    pthread_mutex_destroy(&kb->deliver_mu);
    pthread_cond_destroy(&kb->claims_cv);
    free(kb);
}

const ks_cluster_client *ks_kube_cluster_client_iface(ks_kube_cluster_client *kb) { return &kb->iface; }

void ks_kube_cluster_client_stats_get(ks_kube_cluster_client *kb, ks_kube_cluster_client_stats *out) {
    pthread_mutex_lock(&kb->mu);
    *out = kb->stats;
    pthread_mutex_unlock(&kb->mu);
}
