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
    /* claim ns/name -> position in c->resource_claims + 1, a hint checked
     * on use (claims come and go through add_object/remove_object) */
    ks_map claim_pos;
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

/* A plugin's PreBind annotations: the stored pod gets them (kept sorted
 * by key; a NULL value removes the key), as the API server would. */
static ks_status *mb_patch_annotations(void *ctx, const ks_pod *pod, const ks_annotation_patch *m) {
    ks_memory_client *mb = ctx;
    pthread_mutex_lock(&mb->mu);
    mb->stats.annotation_patches++;
    int pos = pod_pos(mb, pod->key);
    if (pos < 0) {
        pthread_mutex_unlock(&mb->mu);
        return not_found(pod);
    }
    const ks_pod *cur = mb->c->pods.v[pos];
    size_t room = (cur->annotations.n + m->n) * sizeof(ks_annotation) + 64;
    for (size_t i = 0; i < m->n; i++) room += m->values[i] ? strlen(m->values[i]) + 1 : 0;
    ks_pod *np = ks_pod_clone_room(cur, room);
    ks_annotations a = {0, ks_arena_calloc(np->arena, cur->annotations.n + m->n, sizeof(ks_annotation))};
    for (uint32_t i = 0; i < cur->annotations.n; i++) a.kv[a.n++] = cur->annotations.kv[i];
    for (size_t i = 0; i < m->n; i++) {
        ks_id key = ks_intern(m->keys[i]);
        uint32_t j = 0;
        while (j < a.n && a.kv[j].key != key) j++;
        if (!m->values[i]) {
            if (j < a.n) a.kv[j] = a.kv[--a.n];
            continue;
        }
        if (j == a.n) a.n++;
        a.kv[j] = (ks_annotation){key, ks_arena_strdup(np->arena, m->values[i])};
    }
    ks_annotations_sort(&a);
    np->annotations = a;
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

/* ---- volume bindings ------------------------------------------------------ */

/* A copy of a label set with key set to value (kept sorted). */
static ks_labels labels_with(ks_arena *a, const ks_labels *in, const char *key, const char *value) {
    ks_id k = ks_intern(key), v = ks_intern(value);
    ks_labels out = {0, ks_arena_calloc(a, in->n + 1, sizeof(ks_label))};
    for (uint32_t i = 0; i < in->n; i++)
        if (in->kv[i].key != k) out.kv[out.n++] = in->kv[i];
    out.kv[out.n++] = (ks_label){k, v};
    ks_labels_sort(&out);
    return out;
}

static void pv_unref(void *p) {
    ks_pv *o = p;
    KS_OBJECT_UNREF(o);
}

static void pvc_unref(void *p) {
    ks_pvc *o = p;
    KS_OBJECT_UNREF(o);
}

/* New versions of a PV and a claim: the objects are immutable, the copies
 * live in arenas of their own and keep the original (whose arena their
 * fields point into) and the source document alive. */
static ks_pv *pv_copy(ks_pv *o) {
    ks_arena *a = ks_arena_new(512);
    ks_pv *n = ks_arena_alloc(a, sizeof(*n));
    *n = *o;
    n->arena = a;
    atomic_init(&n->refs, 0);
    n->base = KS_OBJECT_REF(o);
    n->base_unref = pv_unref;
    n->doc = o->doc ? ks_docref_ref(o->doc) : NULL;
    return n;
}

static ks_pvc *pvc_copy(ks_pvc *o) {
    ks_arena *a = ks_arena_new(512);
    ks_pvc *n = ks_arena_alloc(a, sizeof(*n));
    *n = *o;
    n->arena = a;
    atomic_init(&n->refs, 0);
    n->base = KS_OBJECT_REF(o);
    n->base_unref = pvc_unref;
    n->doc = o->doc ? ks_docref_ref(o->doc) : NULL;
    return n;
}

static int find_pv(const ks_cluster *c, const ks_pv *pv) {
    for (uint32_t i = 0; i < c->pvs.n; i++)
        if (c->pvs.v[i]->name == pv->name) return (int)i;
    return -1;
}

static int find_pvc(const ks_cluster *c, const ks_pvc *pvc) {
    for (uint32_t i = 0; i < c->pvcs.n; i++)
        if (c->pvcs.v[i]->name == pvc->name && c->pvcs.v[i]->ns == pvc->ns) return (int)i;
    return -1;
}

/* What the API updates and then the PV controller do: a static binding
 * leaves the PV Bound to the claim and the claim Bound to the PV
 * (bind-completed); a claim to provision gets the selected node, and stays
 * so, since no provisioner runs here. */
static ks_status *mb_bind_volumes(void *ctx, const ks_pod *pod, const ks_volume_binding *b, size_t n) {
    ks_memory_client *mb = ctx;
    ks_cluster *c = mb->c;
    /* the replaced versions, delivered as updates once the lock is off */
    typedef struct change { ks_kind kind; void *old, *nw; } change;
    change *ch = ks_xcalloc(2 * n + 1, sizeof(*ch));
    size_t nch = 0;
    pthread_mutex_lock(&mb->mu);
    for (size_t i = 0; i < n; i++) {
        int ci = find_pvc(c, b[i].pvc);
        if (ci < 0) {
            pthread_mutex_unlock(&mb->mu);
            free(ch);
            return ks_status_new(KS_ERROR, "persistentvolumeclaims \"%s\" not found", ks_str(b[i].pvc->name));
        }
        ks_pvc *claim = pvc_copy(c->pvcs.v[ci]);
        if (b[i].pv) {
            int pi = find_pv(c, b[i].pv);
            if (pi < 0) {
                KS_OBJECT_UNREF(claim);
                pthread_mutex_unlock(&mb->mu);
                free(ch);
                return ks_status_new(KS_ERROR, "persistentvolumes \"%s\" not found", ks_str(b[i].pv->name));
            }
            ks_pv *pv = pv_copy(c->pvs.v[pi]);
            char uid[512];
            if (claim->uid && *claim->uid) snprintf(uid, sizeof uid, "%s", claim->uid);
            else snprintf(uid, sizeof uid, "uid-persistentvolumeclaim-%s/%s", ks_str(claim->ns), ks_str(claim->name));
            pv->has_claim_ref = true;
            pv->claim_ns = claim->ns;
            pv->claim_name = claim->name;
            pv->claim_uid = ks_arena_strdup(pv->arena, uid);
            pv->phase = ks_intern("Bound");
            pv->annotations = labels_with(pv->arena, &pv->annotations, "pv.kubernetes.io/bound-by-controller", "yes");
            ch[nch++] = (change){KS_KIND_PV, c->pvs.v[pi], pv};
            c->pvs.v[pi] = pv;
            claim->volume_name = pv->name;
            claim->phase = ks_intern("Bound");
            claim->annotations = labels_with(claim->arena, &claim->annotations, "pv.kubernetes.io/bind-completed", "yes");
            claim->annotations =
                labels_with(claim->arena, &claim->annotations, "pv.kubernetes.io/bound-by-controller", "yes");
        } else {
            claim->annotations = labels_with(claim->arena, &claim->annotations, "volume.kubernetes.io/selected-node",
                                             ks_str(b[i].selected_node));
        }
        ch[nch++] = (change){KS_KIND_PVC, c->pvcs.v[ci], claim};
        c->pvcs.v[ci] = claim;
    }
    pthread_mutex_unlock(&mb->mu);
    /* The cluster held the old versions' first reference: the event's
     * receivers keep what they still need. */
    for (size_t i = 0; i < nch; i++) {
        deliver_obj(mb, KS_WATCH_MODIFIED, ch[i].kind, ch[i].old, ch[i].nw);
        if (ch[i].kind == KS_KIND_PV) {
            ks_pv *o = ch[i].old;
            KS_OBJECT_UNREF(o);
        } else {
            ks_pvc *o = ch[i].old;
            KS_OBJECT_UNREF(o);
        }
    }
    free(ch);
    return NULL;
}

/* ---- resource claims ------------------------------------------------------ */

/* DynamicResources' claim writes, applied to the current version of the
 * claim as the API server would: a new version with the new status. */
static ks_status *mb_update_claim(void *ctx, const ks_claim_update *u, ks_resource_claim **updated) {
    ks_memory_client *mb = ctx;
    ks_cluster *c = mb->c;
    if (updated) *updated = NULL;
    pthread_mutex_lock(&mb->mu);
    int at = -1;
    uint64_t key = (uint64_t)u->claim->ns << 32 | u->claim->name;
    uintptr_t hint = (uintptr_t)ks_map_get(&mb->claim_pos, key);
    if (hint && hint <= c->resource_claims.n && c->resource_claims.v[hint - 1]->ns == u->claim->ns &&
        c->resource_claims.v[hint - 1]->name == u->claim->name) {
        at = (int)(hint - 1);
    } else {
        for (uint32_t i = 0; i < c->resource_claims.n; i++)
            if (c->resource_claims.v[i]->ns == u->claim->ns && c->resource_claims.v[i]->name == u->claim->name)
                at = (int)i;
        if (at >= 0) ks_map_put(&mb->claim_pos, key, (void *)((uintptr_t)at + 1));
    }
    if (at < 0) {
        pthread_mutex_unlock(&mb->mu);
        /* as upstream's bindClaim reports the API error: the step first */
        if (u->op == KS_CLAIM_RESERVE)
            return ks_status_new(KS_ERROR, "%s to claim %s/%s: resourceclaims.resource.k8s.io \"%s\" not found",
                                 u->allocation ? "add allocation and reservation" : "add reservation",
                                 ks_str(u->claim->ns), ks_str(u->claim->name), ks_str(u->claim->name));
        return ks_status_new(KS_ERROR, "resourceclaims.resource.k8s.io \"%s\" not found", ks_str(u->claim->name));
    }
    ks_resource_claim *cur = c->resource_claims.v[at], *nw = NULL;
    const char *uid = u->pod && u->pod->uid ? u->pod->uid : "";
    switch (u->op) {
    case KS_CLAIM_RESERVE: {
        ks_claim_consumer *r = ks_xcalloc(cur->nreserved + 1, sizeof(*r));
        if (cur->nreserved) memcpy(r, cur->reserved, cur->nreserved * sizeof(*r));
        r[cur->nreserved] = (ks_claim_consumer){NULL, "pods", ks_str(u->pod->name), uid};
        nw = ks_claim_with_status(cur, u->allocation ? u->allocation : cur->allocation, r, cur->nreserved + 1,
                                  u->allocation != NULL);
        free(r);
        break;
    }
    case KS_CLAIM_UNRESERVE: {
        ks_claim_consumer *r = ks_xcalloc(cur->nreserved + 1, sizeof(*r));
        uint32_t n = 0;
        for (uint32_t i = 0; i < cur->nreserved; i++)
            if (!cur->reserved[i].uid || strcmp(cur->reserved[i].uid, uid) != 0) r[n++] = cur->reserved[i];
        nw = ks_claim_with_status(cur, cur->allocation, r, n, false);
        free(r);
        break;
    }
    case KS_CLAIM_DEALLOCATE: nw = ks_claim_with_status(cur, NULL, NULL, 0, false); break;
    }
    c->resource_claims.v[at] = nw;
    if (updated) *updated = KS_OBJECT_REF(nw);
    pthread_mutex_unlock(&mb->mu);
    deliver_obj(mb, KS_WATCH_MODIFIED, KS_KIND_RESOURCE_CLAIM, cur, nw);
    KS_OBJECT_UNREF(cur);
    return NULL;
}

/* Every write, by type (backend/api_calls.h). */
static ks_status *mb_execute(void *ctx, const ks_api_call *c) {
    switch (c->type) {
    case KS_CALL_BINDING: return mb_bind(ctx, c->pod, c->node);
    case KS_CALL_STATUS_PATCH: return mb_patch(ctx, c->pod, c->patch);
    case KS_CALL_DELETE: return mb_delete(ctx, c->pod);
    case KS_CALL_EVENT: mb_event(ctx, c->event); return NULL;
    case KS_CALL_VOLUME_BINDING: return mb_bind_volumes(ctx, c->pod, c->volumes, c->nvolumes);
    case KS_CALL_CLAIM_UPDATE: return mb_update_claim(ctx, c->claim, c->claim_written);
    case KS_CALL_POD_ANNOTATIONS: return mb_patch_annotations(ctx, c->pod, c->annotations);
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
    ks_map_free(&mb->claim_pos);
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
