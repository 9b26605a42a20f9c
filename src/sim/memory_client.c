#include "sim/memory_client.h"
#include "api/node.h"
#include "api/pod.h"
#include "framework/status.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ks_memory_client {
    pthread_mutex_t mu;
    ks_cluster *c;
    ks_cluster_client iface;
    /* Set by start, cleared by stop while other threads may deliver. */
    _Atomic(ks_watch_fn) fn;
    void *arg;
    /* pod key + 1 -> position in c->pods + 1, as of the last reindex:
     * positions deleted since then are in `dead` (sorted), and a pod's
     * position is its indexed one minus the dead ones before it. A
     * deletion (preemption victims) then costs a memmove, not a rebuild
     * of the index over every pod. */
    ks_map index;
    uint32_t *dead;
    size_t ndead, dead_cap;
    /* (kind, ns, name) -> position in the kind's vector + 1, for object
     * writes: a hint checked on use (objects come and go through
     * add_object/remove_object) */
    ks_map write_pos;
    ks_recorded_event *events;
    size_t nevents, events_cap;
    ks_memory_client_stats stats;
    int fail_binds;
    bool unordered; /* removal moves the last pod into the hole */
};

/* ---- pods by key ----------------------------------------------------------- */

#define MAX_DEAD 256

static void reindex(ks_memory_client *mb) {
    ks_map_clear(&mb->index);
    for (uint32_t i = 0; i < mb->c->pods.n; i++)
        ks_map_put(&mb->index, mb->c->pods.v[i]->key + 1, (void *)(uintptr_t)(i + 1));
    mb->ndead = 0;
}

/* Dead positions before indexed position o. */
static size_t dead_before(const ks_memory_client *mb, uint32_t o) {
    size_t lo = 0, hi = mb->ndead;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (mb->dead[mid] < o) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int pod_pos(const ks_memory_client *mb, uint64_t key) {
    uintptr_t at = (uintptr_t)ks_map_get(&mb->index, key + 1);
    if (!at) return -1;
    uint32_t o = (uint32_t)(at - 1);
    return (int)(o - dead_before(mb, o));
}

/* Index a pod just appended at the end. */
static void index_last(ks_memory_client *mb) {
    uint32_t pos = mb->c->pods.n - 1;
    ks_map_put(&mb->index, mb->c->pods.v[pos]->key + 1, (void *)(uintptr_t)(pos + mb->ndead + 1));
}

/* Deliver a watch event outside the lock: the scheduler's handlers may call
 * back into the backend. */
static void deliver(ks_memory_client *mb, ks_watch_type type, ks_kind kind, ks_pod *op, ks_pod *np,
                    ks_node *on, ks_node *nn) {
    ks_watch_fn fn = atomic_load(&mb->fn);
    if (!fn) return;
    ks_watch_event ev = {.type = type, .kind = kind, .old_pod = op, .new_pod = np, .old_node = on,
                         .new_node = nn};
    fn(mb->arg, &ev);
}

static ks_status *not_found(const ks_pod *pod) {
    return ks_status_new(KS_ERROR, "pods \"%s\" not found", ks_str(pod->name));
}

/* Replace the pod at pos with np (taking the reference); returns the old. */
/* The stored pod at pos becomes np (called with mu held; releases it)
 * and the watchers see the update, outside the lock. */
static void update_pod(ks_memory_client *mb, int pos, ks_pod *np) {
    ks_pod *old = mb->c->pods.v[pos];
    mb->c->pods.v[pos] = np;
    ks_pod_ref(np);
    pthread_mutex_unlock(&mb->mu);
    deliver(mb, KS_WATCH_MODIFIED, KS_KIND_POD, old, np, NULL, NULL);
    ks_pod_unref(old);
    ks_pod_unref(np);
}

static void set_condition(ks_pod *np, const char *type, const char *status, const char *reason,
                          const char *message) {
    ks_id t = ks_intern(type);
    uint32_t n = np->nconditions;
    int at = -1;
    for (uint32_t i = 0; i < n; i++)
        if (np->conditions[i].type == t) at = (int)i;
    ks_pod_condition *v = ks_arena_calloc(np->arena, n + 1, sizeof(*v));
    if (n) memcpy(v, np->conditions, n * sizeof(*v));
    ks_pod_condition *c = at >= 0 ? &v[at] : &v[n];
    c->type = t;
    c->status = ks_intern(status);
    c->reason = reason ? ks_arena_strdup(np->arena, reason) : NULL;
    c->message = message ? ks_arena_strdup(np->arena, message) : NULL;
    np->conditions = v;
    np->nconditions = at >= 0 ? n : n + 1;
}

/* What set_condition allocates, so that the clone holds it in one block. */
static size_t condition_room(const ks_pod *p, const char *reason, const char *message) {
    size_t n = ((p->nconditions + 1) * sizeof(ks_pod_condition) + 15) & ~(size_t)15;
    if (reason) n += (strlen(reason) + 16) & ~(size_t)15;
    if (message) n += (strlen(message) + 16) & ~(size_t)15;
    return n + 64;
}

/* ---- the backend interface ------------------------------------------------ */

static void deliver_obj(ks_memory_client *mb, ks_watch_type type, ks_kind kind, void *old, void *nw) {
    ks_watch_fn fn = atomic_load(&mb->fn);
    if (!fn) return;
    ks_watch_event ev = {.type = type, .kind = kind, .old_obj = old, .new_obj = nw};
    fn(mb->arg, &ev);
}

#define DELIVER_ALL(mb, vec, kind)                                                             \
    for (uint32_t i_ = 0; i_ < (vec).n; i_++) deliver_obj(mb, KS_WATCH_ADDED, kind, NULL, (vec).v[i_])

static ks_status *mb_start(void *ctx, ks_watch_fn fn, void *arg) {
    ks_memory_client *mb = ctx;
    mb->arg = arg;
    atomic_store(&mb->fn, fn);
    /* The initial list: the other kinds (the listers'), then nodes, then
     * pods, in input order. */
    ks_cluster *c = mb->c;
    DELIVER_ALL(mb, c->priority_classes, KS_KIND_PRIORITY_CLASS);
    DELIVER_ALL(mb, c->namespaces, KS_KIND_NAMESPACE);
    DELIVER_ALL(mb, c->pvs, KS_KIND_PV);
    DELIVER_ALL(mb, c->pvcs, KS_KIND_PVC);
    DELIVER_ALL(mb, c->storage_classes, KS_KIND_STORAGE_CLASS);
    DELIVER_ALL(mb, c->csinodes, KS_KIND_CSINODE);
    DELIVER_ALL(mb, c->csi_drivers, KS_KIND_CSI_DRIVER);
    DELIVER_ALL(mb, c->csi_capacities, KS_KIND_CSI_CAPACITY);
    DELIVER_ALL(mb, c->volume_attachments, KS_KIND_VOLUME_ATTACHMENT);
    DELIVER_ALL(mb, c->pdbs, KS_KIND_PDB);
    DELIVER_ALL(mb, c->pod_groups, KS_KIND_POD_GROUP);
    DELIVER_ALL(mb, c->workloads, KS_KIND_WORKLOAD);
    DELIVER_ALL(mb, c->device_classes, KS_KIND_DEVICE_CLASS);
    DELIVER_ALL(mb, c->device_taint_rules, KS_KIND_DEVICE_TAINT_RULE);
    DELIVER_ALL(mb, c->resource_slices, KS_KIND_RESOURCE_SLICE);
    DELIVER_ALL(mb, c->resource_claims, KS_KIND_RESOURCE_CLAIM);
    for (uint32_t i = 0; i < mb->c->nodes.n; i++)
        deliver(mb, KS_WATCH_ADDED, KS_KIND_NODE, NULL, NULL, NULL, mb->c->nodes.v[i]);
    pthread_mutex_lock(&mb->mu);
    uint32_t n = mb->c->pods.n;
    ks_pod **pods = ks_xmalloc((n ? n : 1) * sizeof(*pods));
    for (uint32_t i = 0; i < n; i++) pods[i] = ks_pod_ref(mb->c->pods.v[i]);
    pthread_mutex_unlock(&mb->mu);
    for (uint32_t i = 0; i < n; i++) {
        deliver(mb, KS_WATCH_ADDED, KS_KIND_POD, NULL, pods[i], NULL, NULL);
        ks_pod_unref(pods[i]);
    }
    free(pods);
    return NULL;
}

static void mb_stop(void *ctx) {
    ks_memory_client *mb = ctx;
    atomic_store(&mb->fn, (ks_watch_fn)NULL);
}


static ks_status *mb_bind(void *ctx, const ks_pod *pod, const char *node) {
    ks_memory_client *mb = ctx;
    pthread_mutex_lock(&mb->mu);
    mb->stats.binds++;
    int pos = pod_pos(mb, pod->key);
    ks_status *err = NULL;
    if (mb->fail_binds > 0) {
        mb->fail_binds--;
        err = ks_status_new(KS_ERROR, "binding rejected by the test backend");
    } else if (pos < 0) {
        err = not_found(pod);
    } else if (mb->c->pods.v[pos]->node_name) {
        err = ks_status_new(KS_ERROR, "pod %s is already assigned to node \"%s\"", ks_str(pod->name),
                            ks_str(mb->c->pods.v[pos]->node_name));
    }
    if (err) {
        mb->stats.bind_failures++;
        pthread_mutex_unlock(&mb->mu);
        return err;
    }
    ks_pod *np = ks_pod_clone_room(mb->c->pods.v[pos], condition_room(mb->c->pods.v[pos], NULL, NULL));
    np->node_name = ks_intern(node);
    /* The API server marks a bound pod scheduled. */
    set_condition(np, "PodScheduled", "True", NULL, NULL);
    update_pod(mb, pos, np);
    return NULL;
}

static ks_status *mb_patch(void *ctx, const ks_pod *pod, const ks_status_patch *patch) {
    ks_memory_client *mb = ctx;
    pthread_mutex_lock(&mb->mu);
    mb->stats.status_patches++;
    int pos = pod_pos(mb, pod->key);
    if (pos < 0) {
        pthread_mutex_unlock(&mb->mu);
        return not_found(pod);
    }
    const ks_pod *cur = mb->c->pods.v[pos];
    ks_pod *np = ks_pod_clone_room(cur, patch->has_condition ? condition_room(cur, patch->cond_reason, patch->cond_message) : 64);
    if (patch->has_condition)
        set_condition(np, patch->cond_type, patch->cond_status, patch->cond_reason, patch->cond_message);
    if (patch->set_nominated) np->nominated_node = ks_intern(patch->nominated ? patch->nominated : "");
    update_pod(mb, pos, np);
    return NULL;
}

static ks_pod *take_pod(ks_memory_client *mb, uint64_t key) {
    int pos = pod_pos(mb, key);
    if (pos < 0) return NULL;
    if (mb->unordered) {
        /* no dead positions are ever recorded: the index is exact */
        ks_map_del(&mb->index, key + 1);
        ks_pod *old = mb->c->pods.v[pos];
        uint32_t last = --mb->c->pods.n;
        if ((uint32_t)pos != last) {
            mb->c->pods.v[pos] = mb->c->pods.v[last];
            ks_map_put(&mb->index, mb->c->pods.v[pos]->key + 1, (void *)(uintptr_t)(pos + 1));
        }
        return old;
    }
    uint32_t o = (uint32_t)((uintptr_t)ks_map_del(&mb->index, key + 1) - 1);
    ks_pod *old = mb->c->pods.v[pos];
    memmove(&mb->c->pods.v[pos], &mb->c->pods.v[pos + 1], (mb->c->pods.n - (uint32_t)pos - 1) * sizeof(ks_pod *));
    mb->c->pods.n--;
    if (mb->ndead == MAX_DEAD) {
        reindex(mb);
    } else {
        size_t at = dead_before(mb, o);
        KS_GROW(mb->dead, mb->dead_cap, mb->ndead + 1);
        memmove(&mb->dead[at + 1], &mb->dead[at], (mb->ndead - at) * sizeof(*mb->dead));
        mb->dead[at] = o;
        mb->ndead++;
    }
    return old;
}

static ks_status *mb_delete(void *ctx, const ks_pod *pod) {
    ks_memory_client *mb = ctx;
    pthread_mutex_lock(&mb->mu);
    mb->stats.deletes++;
    ks_pod *old = take_pod(mb, pod->key);
    pthread_mutex_unlock(&mb->mu);
    if (!old) return not_found(pod);
    deliver(mb, KS_WATCH_DELETED, KS_KIND_POD, old, NULL, NULL, NULL);
    ks_pod_unref(old);
    return NULL;
}

static void mb_event(void *ctx, const ks_event_record *ev) {
    ks_memory_client *mb = ctx;
    char name[512] = "";
    if (ev->regarding) ks_pod_fullname(ev->regarding, name, sizeof(name));
    pthread_mutex_lock(&mb->mu);
    mb->stats.events++;
    KS_GROW(mb->events, mb->events_cap, mb->nevents + 1);
    mb->events[mb->nevents++] = (ks_recorded_event){
        .pod_key = ev->regarding ? ev->regarding->key : 0,
        .pod_name = ks_xstrdup(name),
        .type = ks_xstrdup(ev->type ? ev->type : ""),
        .reason = ks_xstrdup(ev->reason ? ev->reason : ""),
        .action = ks_xstrdup(ev->action ? ev->action : ""),
        .note = ks_xstrdup(ev->note ? ev->note : ""),
        .time_ns = ev->time_ns,
    };
    pthread_mutex_unlock(&mb->mu);
}

/* ---- object writes ------------------------------------------------------- */

/* A plugin's write (api_calls.h ks_object_write): the stored object's new
 * version is what the plugin's apply makes of it, as the API server's
 * answer would show it, and the watchers see the update. The in-memory
 * cluster runs no controllers: a write a controller makes in a cluster
 * (w->controller) is applied here, and an await has nothing to wait for. */

static ks_status *write_not_found(const ks_object_write *w, const char *resource) {
    char msg[600];
    snprintf(msg, sizeof(msg), "%s \"%s\" not found", resource, w->name);
    if (!w->action) return ks_status_new(KS_ERROR, "%s", msg);
    if (w->noun) return ks_status_new(KS_ERROR, "%s %s: %s", w->action, w->noun, msg);
    return ks_status_new(KS_ERROR, "%s %s %s%s%s: %s", w->action, w->kind, w->ns ? w->ns : "", w->ns ? "/" : "",
                         w->name, msg);
}

static ks_status *write_pod(ks_memory_client *mb, const ks_object_write *w, ks_id ns, ks_id name) {
    pthread_mutex_lock(&mb->mu);
    int pos = ns == KS_ID_INVALID || name == KS_ID_INVALID ? -1 : pod_pos(mb, ks_pod_key(ns, name));
    if (pos < 0) {
        pthread_mutex_unlock(&mb->mu);
        return write_not_found(w, "pods");
    }
    ks_status *err = NULL;
    ks_pod *np = w->apply(mb->c->pods.v[pos], w, &err);
    if (!np) {
        pthread_mutex_unlock(&mb->mu);
        return err;
    }
    if (w->written) *w->written = ks_pod_ref(np);
    update_pod(mb, pos, np);
    return NULL;
}

#define IN_NS(o) ((o)->ns == ns && (o)->name == name)
#define CLUSTER(o) ((o)->name == name)

/* The kinds plugins write: name, kind, the cluster's vector, type, how
 * one is found, the resource in a not-found error. A kind the cluster
 * stores is one more row. */
#define WRITABLE(X)                                                                                                \
    X("PersistentVolume", KS_KIND_PV, pvs, ks_pv, CLUSTER, "persistentvolumes")                                  \
    X("PersistentVolumeClaim", KS_KIND_PVC, pvcs, ks_pvc, IN_NS, "persistentvolumeclaims")                       \
    X("ResourceClaim", KS_KIND_RESOURCE_CLAIM, resource_claims, ks_resource_claim, IN_NS,                        \
      "resourceclaims.resource.k8s.io")                                                                           \
    X("PodGroup", KS_KIND_POD_GROUP, pod_groups, ks_pod_group, IN_NS, "podgroups.scheduling.x-k8s.io")

/* One function per kind: find the object (a position hint first: claims
 * are written by the thousand), apply, store, deliver. */
#define WRITE_FN(kname, K, f, T, MATCH, resource)                                                                \
    static ks_status *write_##f(ks_memory_client *mb, const ks_object_write *w, ks_id ns, ks_id name) {          \
        ks_cluster *c = mb->c;                                                                                    \
        uint64_t key = ((uint64_t)(K) << 58) ^ ((uint64_t)ns << 32) ^ name;                                       \
        pthread_mutex_lock(&mb->mu);                                                                              \
        int at = -1;                                                                                              \
        uintptr_t hint = (uintptr_t)ks_map_get(&mb->write_pos, key);                                              \
        if (hint && hint <= c->f.n && MATCH(c->f.v[hint - 1])) {                                                  \
            at = (int)(hint - 1);                                                                                 \
        } else if (name != KS_ID_INVALID) {                                                                       \
            for (uint32_t i = 0; i < c->f.n && at < 0; i++)                                                       \
                if (MATCH(c->f.v[i])) at = (int)i;                                                                \
            if (at >= 0) ks_map_put(&mb->write_pos, key, (void *)((uintptr_t)at + 1));                           \
        }                                                                                                         \
        if (at < 0) {                                                                                             \
            pthread_mutex_unlock(&mb->mu);                                                                        \
            return write_not_found(w, resource);                                                                  \
        }                                                                                                         \
        T *cur = c->f.v[at];                                                                                      \
        ks_status *err = NULL;                                                                                    \
        T *nw = w->apply(cur, w, &err);                                                                           \
        if (!nw) {                                                                                                \
            pthread_mutex_unlock(&mb->mu);                                                                        \
            return err;                                                                                           \
        }                                                                                                         \
        c->f.v[at] = nw;                                                                                          \
        if (w->written) *w->written = KS_OBJECT_REF(nw);                                                          \
        pthread_mutex_unlock(&mb->mu);                                                                            \
        /* the cluster held the old version's first reference: the                                             \
         * event's receivers keep what they still need */                                                         \
        deliver_obj(mb, KS_WATCH_MODIFIED, K, cur, nw);                                                           \
        KS_OBJECT_UNREF(cur);                                                                                     \
        return NULL;                                                                                              \
    }
WRITABLE(WRITE_FN)
#undef WRITE_FN

static ks_status *mb_write(ks_memory_client *mb, const ks_object_write *w) {
    if (w->written) *w->written = NULL;
    if (w->verb == KS_WRITE_AWAIT || !w->apply) return NULL;
    pthread_mutex_lock(&mb->mu);
    mb->stats.object_writes++;
    pthread_mutex_unlock(&mb->mu);
    ks_id ns = w->ns ? ks_intern_find(w->ns) : KS_ID_INVALID, name = ks_intern_find(w->name);
    if (!strcmp(w->kind, "Pod")) return write_pod(mb, w, ns, name);
#define WRITE_CASE(kname, K, f, T, MATCH, resource) \
    if (!strcmp(w->kind, kname)) return write_##f(mb, w, ns, name);
    WRITABLE(WRITE_CASE)
#undef WRITE_CASE
    return ks_status_new(KS_ERROR, "writing %s %s: the in-memory cluster does not store that kind", w->kind, w->name);
}

/* Every write, by type (backend/api_calls.h). */
static ks_status *mb_execute(void *ctx, const ks_api_call *c) {
    switch (c->type) {
    case KS_CALL_BINDING: return mb_bind(ctx, c->pod, c->node);
    case KS_CALL_STATUS_PATCH: return mb_patch(ctx, c->pod, c->patch);
    case KS_CALL_DELETE: return mb_delete(ctx, c->pod);
    case KS_CALL_EVENT: mb_event(ctx, c->event); return NULL;
    case KS_CALL_OBJECT_WRITE: return mb_write(ctx, c->write);
    default: return ks_status_new(KS_ERROR, "unknown API call %d", (int)c->type);
    }
}

/* ---- lifecycle ------------------------------------------------------------ */

ks_memory_client *ks_memory_client_new(ks_cluster *cluster) {
    ks_memory_client *mb = ks_xcalloc(1, sizeof(*mb));
    pthread_mutex_init(&mb->mu, NULL);
    mb->c = cluster;
    mb->iface = (ks_cluster_client){.ctx = mb,
                                    .start = mb_start,
                                    .stop = mb_stop,
                                    .execute = mb_execute,
                                    .executes = KS_CALLS_ALL};
    reindex(mb);
    return mb;
}

void ks_memory_client_free(ks_memory_client *mb) {
    if (!mb) return;
    for (size_t i = 0; i < mb->nevents; i++) {
        ks_recorded_event *e = &mb->events[i];
        free(e->pod_name);
        free(e->type);
        free(e->reason);
        free(e->action);
        free(e->note);
    }
    free(mb->events);
    free(mb->dead);
    ks_map_free(&mb->index);
    ks_map_free(&mb->write_pos);
    pthread_mutex_destroy(&mb->mu);
    free(mb);
}

const ks_cluster_client *ks_memory_client_iface(ks_memory_client *mb) { return &mb->iface; }

void ks_memory_client_set_unordered(ks_memory_client *mb) {
    pthread_mutex_lock(&mb->mu);
    if (mb->ndead) reindex(mb);
    mb->unordered = true;
    pthread_mutex_unlock(&mb->mu);
}

size_t ks_memory_client_nevents(const ks_memory_client *mb) { return mb->nevents; }

const ks_recorded_event *ks_memory_client_event(const ks_memory_client *mb, size_t i) {
    return i < mb->nevents ? &mb->events[i] : NULL;
}

void ks_memory_client_stats_get(const ks_memory_client *mb, ks_memory_client_stats *out) {
    *out = mb->stats;
}

void ks_memory_client_fail_binds(ks_memory_client *mb, int n) {
    pthread_mutex_lock(&mb->mu);
    mb->fail_binds = n;
    pthread_mutex_unlock(&mb->mu);
}

ks_pod *ks_memory_client_pod(const ks_memory_client *mb, uint64_t key) {
    int pos = pod_pos(mb, key);
    return pos >= 0 ? mb->c->pods.v[pos] : NULL;
}

/* ---- changes from outside ---------------------------------------------- */

void ks_memory_client_add_node(ks_memory_client *mb, ks_node *node) {
    pthread_mutex_lock(&mb->mu);
    KS_VEC_PUSH(mb->c->nodes, node);
    pthread_mutex_unlock(&mb->mu);
    deliver(mb, KS_WATCH_ADDED, KS_KIND_NODE, NULL, NULL, NULL, node);
}

void ks_memory_client_update_node(ks_memory_client *mb, ks_node *node) {
    pthread_mutex_lock(&mb->mu);
    ks_node *old = NULL;
    for (uint32_t i = 0; i < mb->c->nodes.n; i++) {
        if (mb->c->nodes.v[i]->name == node->name) {
            old = mb->c->nodes.v[i];
            mb->c->nodes.v[i] = node;
            break;
        }
    }
    if (!old) KS_VEC_PUSH(mb->c->nodes, node);
    pthread_mutex_unlock(&mb->mu);
    if (old) {
        deliver(mb, KS_WATCH_MODIFIED, KS_KIND_NODE, NULL, NULL, old, node);
        ks_node_unref(old);
    } else {
        deliver(mb, KS_WATCH_ADDED, KS_KIND_NODE, NULL, NULL, NULL, node);
    }
}

void ks_memory_client_remove_node(ks_memory_client *mb, ks_id name) {
    pthread_mutex_lock(&mb->mu);
    ks_node *old = NULL;
    for (uint32_t i = 0; i < mb->c->nodes.n; i++) {
        if (mb->c->nodes.v[i]->name == name) {
            old = mb->c->nodes.v[i];
            memmove(&mb->c->nodes.v[i], &mb->c->nodes.v[i + 1], (mb->c->nodes.n - i - 1) * sizeof(ks_node *));
            mb->c->nodes.n--;
            break;
        }
    }
    pthread_mutex_unlock(&mb->mu);
    if (!old) return;
    deliver(mb, KS_WATCH_DELETED, KS_KIND_NODE, NULL, NULL, old, NULL);
    ks_node_unref(old);
}

void ks_memory_client_add_pod(ks_memory_client *mb, ks_pod *pod) {
    pthread_mutex_lock(&mb->mu);
    ks_pod *old = take_pod(mb, pod->key);
    KS_VEC_PUSH(mb->c->pods, pod);
    index_last(mb);
    pthread_mutex_unlock(&mb->mu);
    if (old) {
        deliver(mb, KS_WATCH_MODIFIED, KS_KIND_POD, old, pod, NULL, NULL);
        ks_pod_unref(old);
    } else {
        deliver(mb, KS_WATCH_ADDED, KS_KIND_POD, NULL, pod, NULL, NULL);
    }
}

void ks_memory_client_remove_pod(ks_memory_client *mb, uint64_t key) {
    pthread_mutex_lock(&mb->mu);
    ks_pod *old = take_pod(mb, key);
    pthread_mutex_unlock(&mb->mu);
    if (!old) return;
    deliver(mb, KS_WATCH_DELETED, KS_KIND_POD, old, NULL, NULL, NULL);
    ks_pod_unref(old);
}

/* ---- other kinds --------------------------------------------------------- */

#define VEC_ADD(vec, T) KS_VEC_PUSH(vec, KS_OBJECT_REF((T *)obj))
#define VEC_DEL(vec, T)                                                                     \
    for (uint32_t i = 0; i < (vec).n; i++) {                                                \
        if ((void *)(vec).v[i] != obj) continue;                                            \
        memmove(&(vec).v[i], &(vec).v[i + 1], ((vec).n - i - 1) * sizeof((vec).v[0]));    \
        (vec).n--;                                                                          \
        found = true;                                                                       \
        break;                                                                              \
    }

#define EACH_KIND(X)                                         \
    X(KS_KIND_PRIORITY_CLASS, priority_classes, ks_priority_class) \
    X(KS_KIND_NAMESPACE, namespaces, ks_namespace)           \
    X(KS_KIND_PV, pvs, ks_pv)                                \
    X(KS_KIND_PVC, pvcs, ks_pvc)                             \
    X(KS_KIND_STORAGE_CLASS, storage_classes, ks_storage_class) \
    X(KS_KIND_CSINODE, csinodes, ks_csinode)                 \
    X(KS_KIND_CSI_DRIVER, csi_drivers, ks_csi_driver)        \
    X(KS_KIND_CSI_CAPACITY, csi_capacities, ks_csi_capacity) \
    X(KS_KIND_VOLUME_ATTACHMENT, volume_attachments, ks_volume_attachment) \
    X(KS_KIND_PDB, pdbs, ks_pdb)                             \
    X(KS_KIND_POD_GROUP, pod_groups, ks_pod_group)           \
    X(KS_KIND_WORKLOAD, workloads, ks_workload)              \
    X(KS_KIND_RESOURCE_CLAIM, resource_claims, ks_resource_claim) \
    X(KS_KIND_RESOURCE_SLICE, resource_slices, ks_resource_slice) \
    X(KS_KIND_DEVICE_CLASS, device_classes, ks_device_class) \
    X(KS_KIND_DEVICE_TAINT_RULE, device_taint_rules, ks_device_taint_rule)

void ks_memory_client_add_object(ks_memory_client *mb, ks_kind kind, void *obj) {
    pthread_mutex_lock(&mb->mu);
    switch (kind) {
#define ADD_CASE(k, f, T) \
    case k: VEC_ADD(mb->c->f, T); break;
        EACH_KIND(ADD_CASE)
#undef ADD_CASE
    default: pthread_mutex_unlock(&mb->mu); return;
    }
    pthread_mutex_unlock(&mb->mu);
    deliver_obj(mb, KS_WATCH_ADDED, kind, NULL, obj);
}

void ks_memory_client_remove_object(ks_memory_client *mb, ks_kind kind, void *obj) {
    bool found = false;
    pthread_mutex_lock(&mb->mu);
    switch (kind) {
#define DEL_CASE(k, f, T) \
    case k: VEC_DEL(mb->c->f, T); break;
        EACH_KIND(DEL_CASE)
#undef DEL_CASE
    default: break;
    }
    pthread_mutex_unlock(&mb->mu);
    if (!found) return;
    deliver_obj(mb, KS_WATCH_DELETED, kind, obj, NULL);
    switch (kind) {
#define UNREF_CASE(k, f, T) \
    case k: { T *o = obj; KS_OBJECT_UNREF(o); break; }
        EACH_KIND(UNREF_CASE)
#undef UNREF_CASE
    default: break;
    }
}

void ks_memory_client_update_object(ks_memory_client *mb, ks_kind kind, void *old, void *obj) {
    bool found = false;
    pthread_mutex_lock(&mb->mu);
    switch (kind) {
#define SWAP_CASE(k, f, T)                                   \
    case k:                                                  \
        for (uint32_t i = 0; i < mb->c->f.n; i++) {          \
            if ((void *)mb->c->f.v[i] != old) continue;      \
            mb->c->f.v[i] = KS_OBJECT_REF((T *)obj);         \
            found = true;                                    \
            break;                                           \
        }                                                    \
        break;
        EACH_KIND(SWAP_CASE)
#undef SWAP_CASE
    default: break;
    }
    pthread_mutex_unlock(&mb->mu);
    if (!found) return;
    deliver_obj(mb, KS_WATCH_MODIFIED, kind, old, obj);
    switch (kind) {
#define UNREF_CASE(k, f, T) \
    case k: { T *o = old; KS_OBJECT_UNREF(o); break; }
        EACH_KIND(UNREF_CASE)
#undef UNREF_CASE
    default: break;
    }
}
