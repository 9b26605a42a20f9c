/* The kube-apiserver backend (see backend.h).
 *
 * Watch side: one reflector per kind. Every event is decoded on the
 * reflector's thread and handed to the scheduler under one lock, so the
 * scheduler's handlers see one event at a time, as they do with the
 * memory backend. The backend keeps the latest version of every object
 * (one reference each) so that an update can carry the old version and a
 * delete the last one, whatever the API server sent with it. */
#include "kube/backend.h"

#include "api/cluster.h"
#include "codec/decode.h"
#include "framework/status.h"
#include "kube/reflector.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
OBJ_FREE_FN(free_pdb, ks_pdb)
OBJ_FREE_FN(free_pod_group, ks_pod_group)
OBJ_FREE_FN(free_workload, ks_workload)

static void *dec_namespace(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_namespace(t, c); }
static void *dec_pv(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pv(t, c); }
static void *dec_pvc(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pvc(t, c); }
static void *dec_storage_class(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_storage_class(t, c); }
static void *dec_csinode(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_csinode(t, c); }
static void *dec_csi_driver(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_csi_driver(t, c); }
static void *dec_pdb(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pdb(t, c); }
static void *dec_pod_group(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_pod_group(t, c); }
static void *dec_service(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_SERVICE, c); }
static void *dec_rs(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_REPLICASET, c); }
static void *dec_sts(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_STATEFULSET, c); }
static void *dec_rc(const ks_tree *t, ks_decode_ctx *c) { return ks_decode_workload(t, KS_WORKLOAD_RC, c); }

typedef struct kind_def {
    const char *kind, *path;
    ks_kind k;
    decode_fn decode;   /* NULL: pods and nodes */
    free_fn free;
    bool optional;      /* a CRD: readiness does not wait for it */
} kind_def;

/* What kube-scheduler v1.34.1 watches with the default plugins (plus
 * PodGroups for Coscheduling). */
static const kind_def kinds[] = {
    {"Node", "/api/v1/nodes", KS_KIND_NODE, NULL, NULL, false},
    {"Pod", "/api/v1/pods", KS_KIND_POD, NULL, NULL, false},
    {"Namespace", "/api/v1/namespaces", KS_KIND_NAMESPACE, dec_namespace, free_namespace, false},
    {"PersistentVolume", "/api/v1/persistentvolumes", KS_KIND_PV, dec_pv, free_pv, false},
    {"PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", KS_KIND_PVC, dec_pvc, free_pvc, false},
    {"StorageClass", "/apis/storage.k8s.io/v1/storageclasses", KS_KIND_STORAGE_CLASS, dec_storage_class,
     free_storage_class, false},
    {"CSINode", "/apis/storage.k8s.io/v1/csinodes", KS_KIND_CSINODE, dec_csinode, free_csinode, false},
    {"CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", KS_KIND_CSI_DRIVER, dec_csi_driver, free_csi_driver, false},
    {"PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", KS_KIND_PDB, dec_pdb, free_pdb, false},
    {"Service", "/api/v1/services", KS_KIND_WORKLOAD, dec_service, free_workload,
     false},
    {"ReplicationController", "/api/v1/replicationcontrollers", KS_KIND_WORKLOAD, dec_rc, free_workload, false},
    {"ReplicaSet", "/apis/apps/v1/replicasets", KS_KIND_WORKLOAD, dec_rs, free_workload, false},
    {"StatefulSet", "/apis/apps/v1/statefulsets", KS_KIND_WORKLOAD, dec_sts, free_workload, false},
    {"PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", KS_KIND_POD_GROUP, dec_pod_group, free_pod_group, true},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
#define POD_GROUP_KIND (NKINDS - 1)

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
    struct ks_kube_backend *kb;
    size_t i;
    bool synced; /* (mu) */
} kind_ctx;

struct ks_kube_backend {
    ks_backend iface;
    ks_kube_client *client;
    ks_event_recorder *events;
    int64_t bind_timeout_s;
    bool watch_pod_groups;

    ks_watch_fn fn;
    void *arg;
    pthread_mutex_t deliver_mu; /* one watch event at a time */
    ks_reflector *refl[NKINDS];
    kind_ctx kctx[NKINDS];
    bool started;

    /* the latest pods and nodes delivered (referenced), for old versions */
    ks_map pods;  /* pod key + 1 -> ks_pod* */
    ks_map nodes; /* name id + 1 -> ks_node* */

    /* the other kinds (deliver_mu), counters and flags (mu) */
    pthread_mutex_t mu;
    store stores[NKINDS];

    ks_kube_backend_stats stats;
};

/* ---- watch events ------------------------------------------------------------ */


static void obj_key(const ks_tree *obj, char *buf, size_t n) {
    const ks_tree *md = kt_get(obj, "metadata");
    const ks_tree *ns = kt_get(md, "namespace"), *name = kt_get(md, "name");
    snprintf(buf, n, "%s/%s", ns && ns->type == KT_STRING ? ns->text : "",
             name && name->type == KT_STRING ? name->text : "");
}

static void deliver(ks_kube_backend *kb, const ks_watch_event *ev) {
    if (kb->fn) kb->fn(kb->arg, ev);
}

/* Decode one object; on error log every problem with the kind and name. */
static void *decode(ks_kube_backend *kb, const kind_def *k, const ks_tree *obj) {
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

static void on_pod(ks_kube_backend *kb, ks_refl_event type, const ks_tree *obj) {
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
    np = decode(kb, &kinds[1], obj);
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

static void on_node(ks_kube_backend *kb, ks_refl_event type, const ks_tree *obj) {
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
    ks_node *nn = decode(kb, &kinds[0], obj);
    if (!nn) return;
    ks_node *old = ks_map_put(&kb->nodes, (uint64_t)nn->name + 1, nn);
    ev.type = old ? KS_WATCH_MODIFIED : KS_WATCH_ADDED;
    ev.old_node = old;
    ev.new_node = nn;
    deliver(kb, &ev);
    if (old) ks_node_unref(old);
}

static void on_object(ks_kube_backend *kb, size_t i, ks_refl_event type, const ks_tree *obj) {
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
}

static void refl_event(void *arg, ks_refl_event type, const ks_tree *obj) {
    kind_ctx *kc = arg;
    ks_kube_backend *kb = kc->kb;
    pthread_mutex_lock(&kb->deliver_mu);
    switch (kinds[kc->i].k) {
    case KS_KIND_POD: on_pod(kb, type, obj); break;
    case KS_KIND_NODE: on_node(kb, type, obj); break;
    default: on_object(kb, kc->i, type, obj); break;
    }
    pthread_mutex_unlock(&kb->deliver_mu);
}

static void refl_synced(void *arg) {
    kind_ctx *kc = arg;
    pthread_mutex_lock(&kc->kb->mu);
    kc->synced = true;
    pthread_mutex_unlock(&kc->kb->mu);
    ks_infof(2, "\"Caches populated\" type=\"%s\" reflector=\"%s\"", kinds[kc->i].kind, kinds[kc->i].path);
}

static bool kb_synced(void *ctx) {
    ks_kube_backend *kb = ctx;
    bool ok = true;
    pthread_mutex_lock(&kb->mu);
    for (size_t i = 0; i < NKINDS; i++)
        if (kb->refl[i] && !kinds[i].optional && !kb->kctx[i].synced) ok = false;
    pthread_mutex_unlock(&kb->mu);
    return ok;
}

static ks_status *kb_start(void *ctx, ks_watch_fn fn, void *arg) {
    ks_kube_backend *kb = ctx;
    if (kb->started) return ks_status_new(KS_ERROR, "the backend is already started");
    kb->fn = fn;
    kb->arg = arg;
    kb->started = true;
    for (size_t i = 0; i < NKINDS; i++) {
        if (i == POD_GROUP_KIND && !kb->watch_pod_groups) continue;
        kb->kctx[i] = (kind_ctx){kb, i, false};
        ks_reflector_options ro = {.kind = kinds[i].kind, .path = kinds[i].path};
        /* upstream's pod informer: finished pods are never seen. */
        if (kinds[i].k == KS_KIND_POD) ro.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
        ks_reflector_handler h = {.arg = &kb->kctx[i], .event = refl_event, .synced = refl_synced};
        kb->refl[i] = ks_reflector_start(kb->client, &ro, &h);
        if (!kb->refl[i]) return ks_status_new(KS_ERROR, "cannot start the %s reflector", kinds[i].kind);
    }
    return NULL;
}

static void kb_stop(void *ctx) {
    ks_kube_backend *kb = ctx;
    for (size_t i = 0; i < NKINDS; i++) {
        if (kb->refl[i]) ks_reflector_stop(kb->refl[i]);
        kb->refl[i] = NULL;
    }
    pthread_mutex_lock(&kb->deliver_mu);
    kb->fn = NULL;
    pthread_mutex_unlock(&kb->deliver_mu);
}

/* ---- writes -------------------------------------------------------------- */

static ks_status *api_error(const char *what, const ks_pod *pod, const ks_kube_response *r) {
    char buf[300];
    char *msg = r->code ? ks_kube_status_message(r->body, r->body_len) : NULL;
    ks_status *st;
    if (r->code)
        st = ks_status_new(KS_ERROR, "%s %s: %ld %s", what, ks_pod_fullname(pod, buf, sizeof(buf)), r->code,
                            msg ? msg : (r->body ? r->body : ""));
    else
        st = ks_status_new(KS_ERROR, "%s %s: %s", what, ks_pod_fullname(pod, buf, sizeof(buf)),
                            r->error ? r->error : "no answer from the API server");
    free(msg);
    return st;
}

static char *pod_path(const ks_pod *pod, const char *sub) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_printf(&b, "/api/v1/namespaces/%s/pods/%s%s%s", ks_str(pod->ns), ks_str(pod->name), sub ? "/" : "",
                     sub ? sub : "");
    return ks_sb_take(&b);
}

static ks_status *kb_bind(void *ctx, const ks_pod *pod, const char *node) {
    ks_kube_backend *kb = ctx;
    json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s?}, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
                             "Binding", "metadata", "name", ks_str(pod->name), "namespace", ks_str(pod->ns), "uid",
                             pod->uid, "target", "apiVersion", "v1", "kind", "Node", "name", node);
    char *js = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *path = pod_path(pod, "binding");
    ks_kube_request req = {.method = "POST", .path = path, .body = js, .body_len = strlen(js)};
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

/* RFC 3339 with seconds (metav1.Time) or microseconds (MicroTime). */
static void format_time(char *buf, size_t n, bool micro) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro) snprintf(buf + k, n - k, ".%06ldZ", ts.tv_nsec / 1000);
    else snprintf(buf + k, n - k, "Z");
}

static const ks_pod_condition *find_condition(const ks_pod *p, const char *type) {
    ks_id t = ks_intern_find(type);
    for (uint32_t i = 0; i < p->nconditions; i++)
        if (p->conditions[i].type == t) return &p->conditions[i];
    return NULL;
}

/* upstream util.PatchPodStatus: a strategic merge patch of the status
 * (conditions merged by type). lastTransitionTime moves only when the
 * condition's status changes, as podutil.UpdatePodCondition does. */
static ks_status *kb_patch(void *ctx, const ks_pod *pod, const ks_status_patch *patch) {
    ks_kube_backend *kb = ctx;
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
            format_time(t, sizeof(t), false);
            json_object_set_new(c, "lastTransitionTime", json_string(t));
        }
        json_object_set_new(status, "conditions", json_pack("[o]", c));
    }
    if (patch->set_nominated)
        json_object_set_new(status, "nominatedNodeName",
                            patch->nominated && *patch->nominated ? json_string(patch->nominated) : json_null());
    json_t *body = json_pack("{s:o}", "status", status);
    char *js = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *path = pod_path(pod, "status");
    ks_kube_request req = {.method = "PATCH",
                           .path = path,
                           .content_type = "application/strategic-merge-patch+json",
                           .body = js,
                           .body_len = strlen(js),
                           .idempotent = true};
    ks_kube_response r = {0};
    ks_kube_do(kb->client, &req, &r);
    pthread_mutex_lock(&kb->mu);
    kb->stats.patches++;
    pthread_mutex_unlock(&kb->mu);
    ks_status *st = r.code == 200 ? NULL : api_error("patching the status of", pod, &r);
    ks_kube_response_free(&r);
    free(path);
    free(js);
    return st;
}

/* upstream util.DeletePod: a plain DELETE; a pod already gone is fine. */
static ks_status *kb_delete(void *ctx, const ks_pod *pod) {
    ks_kube_backend *kb = ctx;
    char *path = pod_path(pod, NULL);
    ks_kube_request req = {.method = "DELETE", .path = path, .idempotent = true};
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

/* Through the recorder (events.h: series, bounded queue, its own client).
 * reportingController is the profile's schedulerName: the pod's own, or
 * for a victim the preemptor's, whose profile preempted it. */
static void kb_event(void *ctx, const ks_event_record *ev) {
    ks_kube_backend *kb = ctx;
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
static ks_status *update_object(ks_kube_backend *kb, const char *path, void (*edit)(json_t *o, const void *arg),
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

static bool claim_bound(ks_kube_backend *kb, const ks_pvc *want) {
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ks_str(want->ns), ks_str(want->name));
    pthread_mutex_lock(&kb->deliver_mu);
    size_t i = 0;
    while (kinds[i].k != KS_KIND_PVC) i++;
    entry *e = store_find(&kb->stores[i], key, ks_hash_bytes(key, strlen(key)));
    const ks_pvc *cur = e ? e->obj : NULL;
    bool bound = cur && cur->volume_name && cur->volume_name != ks_intern("");
    pthread_mutex_unlock(&kb->deliver_mu);
    return bound;
}

/* upstream volumebinding BindPodVolumes: the API updates, then a wait
 * (polling every second, up to bindTimeoutSeconds) until the PV
 * controller has bound every claim. */
static ks_status *kb_bind_volumes(void *ctx, const ks_pod *pod, const ks_volume_binding *b, size_t n) {
    ks_kube_backend *kb = ctx;
    char path[512];
    for (size_t i = 0; i < n; i++) {
        ks_status *st;
        if (b[i].pv) {
            snprintf(path, sizeof(path), "/api/v1/persistentvolumes/%s", ks_str(b[i].pv->name));
            claim_ref cr = {b[i].pvc};
            st = update_object(kb, path, set_claim_ref, &cr);
        } else {
            snprintf(path, sizeof(path), "/api/v1/namespaces/%s/persistentvolumeclaims/%s", ks_str(b[i].pvc->ns),
                     ks_str(b[i].pvc->name));
            st = update_object(kb, path, set_selected_node, ks_str(b[i].selected_node));
        }
        if (st) return st;
    }
    int64_t limit = kb->bind_timeout_s > 0 ? kb->bind_timeout_s : 600;
    for (int64_t waited = 0;; waited++) {
        size_t done = 0;
        for (size_t i = 0; i < n; i++) done += claim_bound(kb, b[i].pvc);
        if (done == n) return NULL;
        if (waited >= limit) break;
        sleep(1);
    }
    char buf[300];
    return ks_status_new(KS_ERROR, "binding volumes: timed out waiting for the condition (pod %s)",
                          ks_pod_fullname(pod, buf, sizeof(buf)));
}

/* ---- lifetime ---------------------------------------------------------------- */

ks_kube_backend *ks_kube_backend_new(const ks_kube_backend_options *o) {
    ks_kube_backend *kb = ks_xcalloc(1, sizeof(*kb));
    kb->client = o->client;
    kb->events = o->events;
    kb->bind_timeout_s = o->bind_timeout_s;
    kb->watch_pod_groups = o->watch_pod_groups;
    pthread_mutex_init(&kb->mu, NULL);
    pthread_mutex_init(&kb->deliver_mu, NULL);
    ks_map_init(&kb->pods);
    ks_map_init(&kb->nodes);
    for (size_t i = 0; i < NKINDS; i++) ks_map_init(&kb->stores[i].by_hash);
    kb->iface = (ks_backend){.ctx = kb,
                             .start = kb_start,
                             .stop = kb_stop,
                             .synced = kb_synced,
                             .bind = kb_bind,
                             .patch_pod_status = kb_patch,
                             .delete_pod = kb_delete,
                             .emit_event = kb_event,
                             .bind_volumes = kb_bind_volumes};
    return kb;
}

void ks_kube_backend_free(ks_kube_backend *kb) {
    if (!kb) return;
    kb_stop(kb);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&kb->pods, &it, &k, &v);) ks_pod_unref(v);
    for (size_t it = 0; ks_map_next(&kb->nodes, &it, &k, &v);) ks_node_unref(v);
    ks_map_free(&kb->pods);
    ks_map_free(&kb->nodes);
    for (size_t i = 0; i < NKINDS; i++) store_free(&kb->stores[i], kinds[i].free);
    pthread_mutex_destroy(&kb->mu);
    pthread_mutex_destroy(&kb->deliver_mu);
    free(kb);
}

const ks_backend *ks_kube_backend_iface(ks_kube_backend *kb) { return &kb->iface; }

void ks_kube_backend_stats_get(ks_kube_backend *kb, ks_kube_backend_stats *out) {
    pthread_mutex_lock(&kb->mu);
    *out = kb->stats;
    pthread_mutex_unlock(&kb->mu);
}
