/* The listers (see listers.h).
 *
 * Each kind keeps its objects in one vector of pointers (positions stay
 * while an object is updated; a removed one's place goes to the last) and
 * a store per identity (namespace and name ids; workloads also by their
 * kind) giving its position. A view is a small struct of those vectors,
 * shared: a change copies its kind's vector once if the current view shows
 * it, and keeps the object it replaced or removed aside; the other kinds
 * stay shared. The next pin makes a new view and retires the old one with
 * the vectors and objects set aside, tagged with the new epoch. A pin
 * records the epoch of the view it got; a retired item is released once no
 * pin older than its epoch is left (epoch-based reclamation). A change
 * therefore costs a store update and at most one copy of its own kind's
 * pointers per view (measured in docs/performance.md, "Listers"). */
#include "backend/listers.h"

#include "api/dra.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- kinds ------------------------------------------------------------------ */

typedef struct kind_ops {
    ks_kind kind;
    size_t vec;                          /* offset of its vector in ks_objects */
    uint64_t (*key)(const void *o);
    void (*ref)(void *o);
    void (*unref)(void *o);
} kind_ops;

static uint64_t nskey(ks_id ns, ks_id name) { return ((uint64_t)ns << 32) | name; }

#define OPS(fn, T, KEY)                                                        \
    static uint64_t fn##_key(const void *o) { const T *x = o; return KEY; }    \
    static void fn##_ref(void *o) { (void)KS_OBJECT_REF((T *)o); }             \
    static void fn##_unref(void *o) { T *x = o; KS_OBJECT_UNREF(x); }
OPS(pc, ks_priority_class, x->name)
OPS(ns, ks_namespace, x->name)
OPS(pv, ks_pv, x->name)
OPS(pvc, ks_pvc, nskey(x->ns, x->name))
OPS(sc, ks_storage_class, x->name)
OPS(csinode, ks_csinode, x->name)
OPS(driver, ks_csi_driver, x->name)
OPS(cap, ks_csi_capacity, nskey(x->ns, x->name))
OPS(va, ks_volume_attachment, x->name)
OPS(pdb, ks_pdb, nskey(x->ns, x->name))
OPS(pg, ks_pod_group, nskey(x->ns, x->name))
OPS(wl, ks_workload, nskey(x->ns, x->name))
OPS(rc, ks_resource_claim, nskey(x->ns, x->name))
OPS(rs, ks_resource_slice, x->name)
OPS(dc, ks_device_class, x->name)
OPS(dtr, ks_device_taint_rule, x->name)

#define K(kind, field, fn) {kind, offsetof(ks_objects, field), fn##_key, fn##_ref, fn##_unref}
static const kind_ops kinds[] = {
    K(KS_KIND_PRIORITY_CLASS, priority_classes, pc),
    K(KS_KIND_NAMESPACE, namespaces, ns),
    K(KS_KIND_PV, pvs, pv),
    K(KS_KIND_PVC, pvcs, pvc),
    K(KS_KIND_STORAGE_CLASS, storage_classes, sc),
    K(KS_KIND_CSINODE, csinodes, csinode),
    K(KS_KIND_CSI_DRIVER, csi_drivers, driver),
    K(KS_KIND_CSI_CAPACITY, csi_capacities, cap),
    K(KS_KIND_VOLUME_ATTACHMENT, volume_attachments, va),
    K(KS_KIND_PDB, pdbs, pdb),
    K(KS_KIND_POD_GROUP, pod_groups, pg),
    K(KS_KIND_RESOURCE_CLAIM, resource_claims, rc),
    K(KS_KIND_RESOURCE_SLICE, resource_slices, rs),
    K(KS_KIND_DEVICE_CLASS, device_classes, dc),
    K(KS_KIND_DEVICE_TAINT_RULE, device_taint_rules, dtr),
    K(KS_KIND_WORKLOAD, workloads, wl), /* last: its extra stores follow */
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
/* The workload kinds (Services, ReplicaSets, StatefulSets, ...) share one
 * vector but have a store each. */
#define NWORKLOAD_KINDS KS_WORKLOAD_NKINDS
#define NSTORES (NKINDS + NWORKLOAD_KINDS - 1)

static int kind_index(ks_kind k) {
    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i].kind == k) return (int)i;
    return -1;
}

typedef struct ptr_vec {
    void **v;
    uint32_t n, cap;
} ptr_vec;

/* ---- state -------------------------------------------------------------------- */

/* A kind's vector keeps the positions of its last LOG_SIZE writes, so that
 * a vector no pin sees any more (a spare) is brought up to date by copying
 * just the positions written since it was current instead of all of them.
 * Between two views there are a few writes (the scheduler pins a view
 * around every watch event); a vector further behind, as after a list of
 * thousands of objects, is copied whole. Up to SPARES are kept: pins end
 * in batches, freeing several vectors at once while the next events each
 * need one. ksched run, DRA at 500 nodes, when binding cycles held their
 * pins across API calls: 5-9 pins held, the oldest 30-40 views behind;
 * 9 updates in 10 copied the claims' vector whole with one spare, 1 in 2
 * with 8. Since they let go during calls (scheduler.c view_suspend): 0-9
 * views behind, 4-17 spares in use. A spare the log no longer covers is
 * freed when next looked at. */
#define LOG_SIZE 256
#define SPARES 32

typedef struct spare_vec {
    void **v;       /* no view shows it; equal to cur as of `writes` */
    uint32_t cap;
    uint64_t writes;
} spare_vec;

typedef struct kind_vec {
    ptr_vec cur;            /* the current objects, one reference each */
    bool shown;             /* the current view shows cur: copy before a change */
    uint64_t writes;        /* positions written into cur and its predecessors */
    uint32_t log[LOG_SIZE]; /* the position of write w at w % LOG_SIZE */
    spare_vec spares[SPARES];
    uint32_t nspares;
} kind_vec;

typedef struct retired {
    void *p;
    void (*release)(void *p);
    uint64_t epoch; /* 0 while the current view still shows it */
    int kind;       /* a kind's vector (-1: an object or a view) */
    uint32_t cap;   /* of the vector, */
    uint64_t writes; /* which was current up to this write */
    struct retired *next;
} retired;

typedef struct pin_count {
    uint64_t epoch;
    uint32_t n;
} pin_count;

struct ks_listers {
    pthread_mutex_t mu;
    ks_map stores[NSTORES];  /* key + 1 -> position + 1 in its kind's vector */
    kind_vec vecs[NKINDS];
    ks_objects *view;        /* the current view, NULL until the first pin */
    bool stale;
    uint64_t epoch;
    retired *pending;        /* replaced or removed, still in the view */
    retired *retired_list;   /* waiting for the pins older than their epoch */
    pin_count *pins;
    uint32_t npins, pins_cap;
    ks_listers_stats stats;
};

static void release_list(retired *r) {
    for (retired *nx; r; r = nx) {
        nx = r->next;
        r->release(r->p);
        free(r);
    }
}

ks_listers *ks_listers_new(void) {
    ks_listers *l = ks_xcalloc(1, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
    for (size_t i = 0; i < NSTORES; i++) ks_map_init(&l->stores[i]);
    return l;
}

void ks_listers_free(ks_listers *l) {
    if (!l) return;
    release_list(l->pending);
    release_list(l->retired_list);
    free(l->view); /* its vectors are current or were retired above */
    for (size_t i = 0; i < NKINDS; i++) {
        ptr_vec *pv = &l->vecs[i].cur;
        for (uint32_t j = 0; j < pv->n; j++) kinds[i].unref(pv->v[j]);
        free(pv->v);
        for (uint32_t j = 0; j < l->vecs[i].nspares; j++) free(l->vecs[i].spares[j].v);
    }
    for (size_t i = 0; i < NSTORES; i++) ks_map_free(&l->stores[i]);
    free(l->pins);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

static size_t store_of(int ki, const void *obj) {
    if (kinds[ki].kind != KS_KIND_WORKLOAD || ((const ks_workload *)obj)->kind == 0) return (size_t)ki;
    return NKINDS + ((const ks_workload *)obj)->kind - 1;
}

/* mu held: p stays until the next view is built, then until no pin can
 * see it. */
static retired *set_aside(ks_listers *l, void *p, void (*release)(void *)) {
    retired *r = ks_xcalloc(1, sizeof(*r));
    r->p = p;
    r->release = release;
    r->kind = -1;
    r->next = l->pending;
    l->pending = r;
    return r;
}

/* mu held: a retired item no pin can see. A kind's vector becomes one of
 * its spares, in place of the oldest when they are all taken. */
static void release_retired(ks_listers *l, retired *r) {
    kind_vec *kv = r->kind >= 0 ? &l->vecs[r->kind] : NULL;
    if (!kv) {
        r->release(r->p);
        free(r);
        return;
    }
    spare_vec *slot;
    if (kv->nspares < SPARES) {
        slot = &kv->spares[kv->nspares++];
    } else {
        slot = &kv->spares[0];
        for (uint32_t i = 1; i < SPARES; i++)
            if (kv->spares[i].writes < slot->writes) slot = &kv->spares[i];
        if (slot->writes >= r->writes) { /* r is the oldest */
            free(r->p);
            free(r);
            return;
        }
        free(slot->v);
    }
    *slot = (spare_vec){r->p, r->cap, r->writes};
    free(r);
}

/* mu held: kv's newest spare, taken out ({0}: none the log can bring up
 * to date); spares the log no longer covers are freed. */
static spare_vec take_spare(kind_vec *kv) {
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < kv->nspares;) {
        spare_vec *sp = &kv->spares[i];
        if (kv->writes - sp->writes > LOG_SIZE) {
            free(sp->v);
            *sp = kv->spares[--kv->nspares];
            continue;
        }
        if (best == UINT32_MAX || sp->writes > kv->spares[best].writes) best = i;
        i++;
    }
    if (best == UINT32_MAX) return (spare_vec){0};
    spare_vec out = kv->spares[best];
    kv->spares[best] = kv->spares[--kv->nspares];
    return out;
}

/* mu held: a copy of kv's current vector: a spare brought up to date when
 * the log still holds every write since it was current, else a new
 * vector. */
static void **copy_current(ks_listers *l, kind_vec *kv, uint32_t *cap) {
    ptr_vec *pv = &kv->cur;
    /* a copy has room for a few adds, not the doubling's spare half
     * (5000 claims: 40 KB, not 64) */
    *cap = pv->n + pv->n / 16 + 8;
    if (*cap > pv->cap && pv->cap) *cap = pv->cap;
    spare_vec sp = take_spare(kv);
    void **v = sp.v;
    if (v) {
        if (sp.cap < *cap) v = ks_xrealloc(v, *cap * sizeof(*v));
        else *cap = sp.cap;
        for (uint64_t w = sp.writes; w < kv->writes; w++) {
            uint32_t at = kv->log[w % LOG_SIZE];
            if (at < pv->n) v[at] = pv->v[at];
        }
        l->stats.copied += kv->writes - sp.writes;
        return v;
    }
    v = ks_xmalloc(*cap * sizeof(*v));
    if (pv->n) memcpy(v, pv->v, pv->n * sizeof(*v));
    l->stats.copied += pv->n;
    return v;
}

/* mu held: kind ki's vector, ready to change for `need` objects. A view
 * shows it, so it is copied first (once per view); the other kinds' stay
 * shared with that view. */
static ptr_vec *writable(ks_listers *l, int ki, uint32_t need) {
    kind_vec *kv = &l->vecs[ki];
    ptr_vec *pv = &kv->cur;
    if (kv->shown) {
        uint32_t cap;
        void **v = copy_current(l, kv, &cap);
        if (pv->v) {
            retired *r = set_aside(l, pv->v, free);
            r->kind = ki;
            r->cap = pv->cap;
            r->writes = kv->writes;
        }
        pv->v = v;
        pv->cap = cap;
        kv->shown = false;
    }
    KS_GROW(pv->v, pv->cap, need);
    return pv;
}

/* Object o into position at of kind ki's (writable) vector. */
static void put_at(ks_listers *l, int ki, uint32_t at, void *o) {
    kind_vec *kv = &l->vecs[ki];
    kv->cur.v[at] = o;
    kv->log[kv->writes++ % LOG_SIZE] = at;
}

bool ks_listers_apply(ks_listers *l, ks_kind kind, ks_watch_type type, void *old_obj, void *new_obj) {
    int ki = kind_index(kind);
    if (ki < 0) return false;
    const kind_ops *k = &kinds[ki];
    void *ident = new_obj ? new_obj : old_obj;
    if (!ident) return true;
    ks_map *store = &l->stores[store_of(ki, ident)];
    uint64_t key = k->key(ident) + 1;
    pthread_mutex_lock(&l->mu);
    uint32_t at = (uint32_t)(uintptr_t)ks_map_get(store, key);
    uint32_t n = l->vecs[ki].cur.n;
    if (type == KS_WATCH_DELETED || !new_obj) {
        if (at) {
            /* the last object takes the removed one's place */
            ptr_vec *pv = writable(l, ki, n);
            set_aside(l, pv->v[at - 1], k->unref);
            ks_map_del(store, key);
            void *last = pv->v[--pv->n];
            if (at - 1 < pv->n) {
                put_at(l, ki, at - 1, last);
                ks_map_put(&l->stores[store_of(ki, last)], k->key(last) + 1, (void *)(uintptr_t)at);
            }
            l->stale = true;
        }
    } else {
        k->ref(new_obj);
        if (at) {
            ptr_vec *pv = writable(l, ki, n);
            set_aside(l, pv->v[at - 1], k->unref);
            put_at(l, ki, at - 1, new_obj);
        } else {
            writable(l, ki, n + 1);
            put_at(l, ki, n, new_obj);
            l->vecs[ki].cur.n = n + 1;
            ks_map_put(store, key, (void *)(uintptr_t)(n + 1));
        }
        l->stale = true;
    }
    pthread_mutex_unlock(&l->mu);
    return true;
}

/* mu held: a view of the current vectors (shared, not copied). */
static ks_objects *new_view(ks_listers *l) {
    ks_objects *v = ks_xcalloc(1, sizeof(*v));
    for (size_t i = 0; i < NKINDS; i++) {
        *(ptr_vec *)((char *)v + kinds[i].vec) = l->vecs[i].cur;
        l->vecs[i].shown = true;
    }
    return v;
}

/* mu held: release what no pin can still see. */
static void reclaim(ks_listers *l) {
    uint64_t oldest = UINT64_MAX;
    for (uint32_t i = 0; i < l->npins; i++)
        if (l->pins[i].epoch < oldest) oldest = l->pins[i].epoch;
    for (retired **pp = &l->retired_list; *pp;) {
        retired *r = *pp;
        if (r->epoch <= oldest) {
            *pp = r->next;
            release_retired(l, r);
        } else {
            pp = &r->next;
        }
    }
}

const ks_objects *ks_listers_pin(ks_listers *l, uint64_t *token) {
    pthread_mutex_lock(&l->mu);
    if (l->stale || !l->view) {
        ks_objects *nv = new_view(l);
        l->epoch++;
        /* The old view and what only it still showed: retired together,
         * visible to pins of earlier epochs only. */
        if (l->view) set_aside(l, l->view, free);
        for (retired *r = l->pending, *nx; r; r = nx) {
            nx = r->next;
            r->epoch = l->epoch;
            r->next = l->retired_list;
            l->retired_list = r;
        }
        l->pending = NULL;
        l->view = nv;
        l->stale = false;
        l->stats.views++;
        reclaim(l);
    }
    uint32_t i = 0;
    while (i < l->npins && l->pins[i].epoch != l->epoch) i++;
    if (i == l->npins) {
        KS_GROW(l->pins, l->pins_cap, (size_t)l->npins + 1);
        l->pins[l->npins++] = (pin_count){l->epoch, 0};
    }
    l->pins[i].n++;
    *token = l->epoch;
    const ks_objects *v = l->view;
    pthread_mutex_unlock(&l->mu);
    return v;
}

void ks_listers_unpin(ks_listers *l, uint64_t token) {
    pthread_mutex_lock(&l->mu);
    for (uint32_t i = 0; i < l->npins; i++) {
        if (l->pins[i].epoch != token) continue;
        if (--l->pins[i].n == 0) l->pins[i] = l->pins[--l->npins];
        break;
    }
    reclaim(l);
    pthread_mutex_unlock(&l->mu);
}

void ks_listers_stats_get(ks_listers *l, ks_listers_stats *out) {
    pthread_mutex_lock(&l->mu);
    *out = l->stats;
    out->objects = 0;
    for (size_t i = 0; i < NSTORES; i++) out->objects += l->stores[i].len;
    out->retired_pending = 0;
    out->vector_bytes = 0;
    for (retired *r = l->retired_list; r; r = r->next) {
        out->retired_pending++;
        if (r->kind >= 0) out->vector_bytes += (uint64_t)r->cap * sizeof(void *);
    }
    for (retired *r = l->pending; r; r = r->next)
        if (r->kind >= 0) out->vector_bytes += (uint64_t)r->cap * sizeof(void *);
    for (size_t i = 0; i < NKINDS; i++) {
        const kind_vec *kv = &l->vecs[i];
        out->vector_bytes += (uint64_t)kv->cur.cap * sizeof(void *);
        for (uint32_t j = 0; j < kv->nspares; j++) out->vector_bytes += (uint64_t)kv->spares[j].cap * sizeof(void *);
    }
    pthread_mutex_unlock(&l->mu);
}
