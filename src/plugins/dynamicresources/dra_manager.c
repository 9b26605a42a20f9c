/* The shared DRA state (see dra_manager.h). Entries are few (claims
 * between Reserve and the backend's next report), so they are kept in
 * small arrays searched linearly; ks_dra_manager_allocated, which walks
 * every claim, hashes them and drops those the backend has reported. */
#include "plugins/dynamicresources/dra_manager.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending {
    char *uid;
    ks_resource_claim *claim;
} pending;

/* An assumption: `claim` stands for ns/name while the objects show one
 * of the versions it was written over (older[]: the version the plugin
 * read, and earlier assumptions' writes still unreported; NULL: the
 * objects had no such claim). */
typedef struct assumed {
    ks_id ns, name;
    ks_resource_claim **older; /* referenced */
    uint32_t nolder;
    ks_resource_claim *claim; /* what the plugin wrote (referenced) */
} assumed;

struct ks_dra_manager {
    const void *key;
    int users;
    ks_dra_manager *next;
    pthread_mutex_t mu;
    pending *p;
    size_t np, cap_p;
    assumed *a;
    size_t na, cap_a;
    ks_dra_cel_cache *cel;
    /* the devices the objects' claims allocate, as of the view whose
     * claims are vclaims (referenced, in the view's order); vpos: claim
     * ns/name -> position + 1 */
    ks_dra_device_set vset;
    ks_resource_claim **vclaims;
    uint32_t nv, cap_v;
    ks_map vpos;
    ks_dra_slices *slices; /* the last view's, indexed */
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static ks_dra_manager *registry;

/* Upstream keeps the 10 most recently used programs; ksched more, since a
 * program stays compiled only while it is cached. */
#define CEL_CACHE_SIZE 64

ks_dra_manager *ks_dra_manager_acquire(const void *key, bool shares) {
    pthread_mutex_lock(&registry_mu);
    ks_dra_manager *m;
    for (m = registry; m; m = m->next)
        if (m->key == key) break;
    if (!m) {
        m = ks_xcalloc(1, sizeof(*m));
        m->key = key;
        pthread_mutex_init(&m->mu, NULL);
        m->cel = ks_dra_cel_cache_new(CEL_CACHE_SIZE);
        ks_dra_device_set_init(&m->vset);
        m->vset.shares = shares; /* one scheduler's profiles share its gates */
        ks_map_init(&m->vpos);
        m->next = registry;
        registry = m;
    }
    m->users++;
    pthread_mutex_unlock(&registry_mu);
    return m;
}

static void unref_claim(ks_resource_claim *c) { KS_OBJECT_UNREF(c); }

void ks_dra_manager_release(ks_dra_manager *m) {
    if (!m) return;
    pthread_mutex_lock(&registry_mu);
    if (--m->users > 0) {
        pthread_mutex_unlock(&registry_mu);
        return;
    }
    for (ks_dra_manager **pp = &registry; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    pthread_mutex_unlock(&registry_mu);
    for (size_t i = 0; i < m->np; i++) {
        free(m->p[i].uid);
        unref_claim(m->p[i].claim);
    }
    for (size_t i = 0; i < m->na; i++) {
        for (uint32_t k = 0; k < m->a[i].nolder; k++) unref_claim(m->a[i].older[k]);
        free(m->a[i].older);
        unref_claim(m->a[i].claim);
    }
    free(m->p);
    free(m->a);
    for (uint32_t i = 0; i < m->nv; i++) unref_claim(m->vclaims[i]);
    free(m->vclaims);
    ks_map_free(&m->vpos);
    ks_dra_device_set_free(&m->vset);
    ks_dra_slices_unref(m->slices);
    ks_dra_cel_cache_free(m->cel);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

ks_dra_cel_cache *ks_dra_manager_cel(ks_dra_manager *m) { return m->cel; }

static void sync_view(ks_dra_manager *m, const ks_objects *o);
static uint64_t claim_key(ks_id ns, ks_id name) { return (uint64_t)ns << 32 | name; }

/* mu held: drop assumption i. */
static void drop_assumed(ks_dra_manager *m, size_t i) {
    for (uint32_t k = 0; k < m->a[i].nolder; k++) unref_claim(m->a[i].older[k]);
    free(m->a[i].older);
    unref_claim(m->a[i].claim);
    m->a[i] = m->a[--m->na];
}

static bool parse_rv(const char *s, unsigned long long *v) {
    if (!s || !*s) return false;
    char *end;
    *v = strtoull(s, &end, 10);
    return *end == 0;
}

/* Whether the objects' version v (NULL: none) of an assumed claim means
 * the assumption has served its purpose: the backend reported the write
 * or something newer, or the claim is gone. Where the backend gives
 * written versions their own resourceVersion, as the API server does, the
 * assume cache's rule: v is at least as new as the assumed version. Else
 * (the memory backend reports the written object itself): v is none of
 * the versions the assumption was written over. */
static bool assumption_stale(const assumed *a, const ks_resource_claim *v) {
    unsigned long long vrv, arv, brv;
    const ks_resource_claim *b = a->nolder ? a->older[0] : NULL;
    if (v && b && parse_rv(v->resource_version, &vrv) && parse_rv(a->claim->resource_version, &arv) &&
        parse_rv(b->resource_version, &brv) && arv > brv)
        return vrv >= arv;
    for (uint32_t k = 0; k < a->nolder; k++)
        if (a->older[k] == v) return false;
    return true;
}

/* What the plugin sees for claim ns/name whose objects' version is v
 * (NULL: the objects have none): a reference. */
static ks_resource_claim *seen_as(ks_dra_manager *m, ks_resource_claim *v, ks_id ns, ks_id name) {
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->na; i++) {
        if (m->a[i].ns != ns || m->a[i].name != name) continue;
        if (assumption_stale(&m->a[i], v)) {
            drop_assumed(m, i);
            break;
        }
        ks_resource_claim *c = KS_OBJECT_REF(m->a[i].claim);
        pthread_mutex_unlock(&m->mu);
        return c;
    }
    pthread_mutex_unlock(&m->mu);
    return v ? KS_OBJECT_REF(v) : NULL;
}

ks_resource_claim *ks_dra_manager_claim(ks_dra_manager *m, const ks_objects *o, ks_id ns, ks_id name) {
    pthread_mutex_lock(&m->mu);
    sync_view(m, o);
    uintptr_t at = (uintptr_t)ks_map_get(&m->vpos, claim_key(ns, name));
    ks_resource_claim *v = at ? m->vclaims[at - 1] : NULL;
    /* v stays alive: the objects have it */
    pthread_mutex_unlock(&m->mu);
    return seen_as(m, v, ns, name);
}

bool ks_dra_manager_pending(ks_dra_manager *m, const char *uid) {
    bool found = false;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->np && !found; i++) found = strcmp(m->p[i].uid, uid) == 0;
    pthread_mutex_unlock(&m->mu);
    return found;
}

void ks_dra_manager_signal_pending(ks_dra_manager *m, const char *uid, ks_resource_claim *claim) {
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->np; i++) {
        if (strcmp(m->p[i].uid, uid) != 0) continue;
        unref_claim(m->p[i].claim);
        m->p[i].claim = KS_OBJECT_REF(claim);
        pthread_mutex_unlock(&m->mu);
        return;
    }
    KS_GROW(m->p, m->cap_p, m->np + 1);
    m->p[m->np++] = (pending){ks_xstrdup(uid), KS_OBJECT_REF(claim)};
    pthread_mutex_unlock(&m->mu);
}

bool ks_dra_manager_remove_pending(ks_dra_manager *m, const char *uid) {
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->np; i++) {
        if (strcmp(m->p[i].uid, uid) != 0) continue;
        free(m->p[i].uid);
        unref_claim(m->p[i].claim);
        m->p[i] = m->p[--m->np];
        pthread_mutex_unlock(&m->mu);
        return true;
    }
    pthread_mutex_unlock(&m->mu);
    return false;
}

void ks_dra_manager_assume(ks_dra_manager *m, const ks_resource_claim *base, ks_resource_claim *written) {
    pthread_mutex_lock(&m->mu);
    assumed n = {written->ns, written->name, NULL, 0, KS_OBJECT_REF(written)};
    for (size_t i = 0; i < m->na; i++) {
        if (m->a[i].ns != written->ns || m->a[i].name != written->name) continue;
        if (m->a[i].claim == base) {
            /* written over an earlier assumption: the objects may still
             * show any version that one was written over, or its write */
            n.older = m->a[i].older;
            n.nolder = m->a[i].nolder;
            m->a[i].older = NULL;
            m->a[i].nolder = 0;
        }
        drop_assumed(m, i);
        break;
    }
    n.older = ks_xrealloc(n.older, (n.nolder + 1) * sizeof(*n.older));
    n.older[n.nolder++] = base ? KS_OBJECT_REF((ks_resource_claim *)base) : NULL;
    KS_GROW(m->a, m->cap_a, m->na + 1);
    m->a[m->na++] = n;
    pthread_mutex_unlock(&m->mu);
}

/* Whether the backend reported assumption a's write, by resourceVersions
 * alone: v is at least as new as the write (the API server's rule of the
 * assume cache). False whenever that cannot be told (no numbers, the
 * memory backend). */
static bool write_reported(const assumed *a, const ks_resource_claim *v) {
    unsigned long long vrv, arv, brv;
    const ks_resource_claim *b = a->nolder ? a->older[0] : NULL;
    return v && b && parse_rv(v->resource_version, &vrv) && parse_rv(a->claim->resource_version, &arv) &&
           parse_rv(b->resource_version, &brv) && arv > brv && vrv >= arv;
}

size_t ks_dra_manager_sweep(ks_dra_manager *m, const ks_objects *o) {
    pthread_mutex_lock(&m->mu);
    /* o is as new as the objects this binding cycle saw: the versions
     * the last scheduling cycle synced (every claim written since, which
     * may be all of them once the last pod is scheduled) go too */
    if (o) sync_view(m, o);
    for (size_t i = m->na; i-- > 0;) {
        assumed *a = &m->a[i];
        uintptr_t at = (uintptr_t)ks_map_get(&m->vpos, claim_key(a->ns, a->name));
        const ks_resource_claim *v = at ? m->vclaims[at - 1] : NULL;
        if (write_reported(a, v)) drop_assumed(m, i);
    }
    size_t left = m->na;
    pthread_mutex_unlock(&m->mu);
    return left;
}

void ks_dra_manager_restore(ks_dra_manager *m, ks_id ns, ks_id name) {
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->na; i++)
        if (m->a[i].ns == ns && m->a[i].name == name) {
            drop_assumed(m, i);
            break;
        }
    pthread_mutex_unlock(&m->mu);
}

/* mu held: bring vset, vclaims and vpos to the claims of view o, position
 * by position (the listers keep positions while claims are only
 * updated, so a cycle costs a pass over the pointers and the changes). */
static void sync_view(ks_dra_manager *m, const ks_objects *o) {
    uint32_t n = o ? o->resource_claims.n : 0;
    uint32_t both = n > m->nv ? n : m->nv;
    KS_GROW(m->vclaims, m->cap_v, both);
    for (uint32_t i = 0; i < both; i++) {
        ks_resource_claim *old = i < m->nv ? m->vclaims[i] : NULL;
        ks_resource_claim *nw = i < n ? o->resource_claims.v[i] : NULL;
        if (old == nw) continue;
        if (old) {
            ks_dra_device_set_remove_allocation(&m->vset, old->allocation);
            uint64_t k = claim_key(old->ns, old->name);
            if ((uintptr_t)ks_map_get(&m->vpos, k) == (uintptr_t)i + 1) ks_map_del(&m->vpos, k);
            unref_claim(old);
        }
        if (nw) {
            ks_dra_device_set_add_allocation(&m->vset, nw->allocation);
            ks_map_put(&m->vpos, claim_key(nw->ns, nw->name), (void *)((uintptr_t)i + 1));
            (void)KS_OBJECT_REF(nw);
        }
        m->vclaims[i] = nw;
    }
    m->nv = n;
}

void ks_dra_manager_allocated(ks_dra_manager *m, const ks_objects *o, ks_dra_device_set *out, ks_dra_capacities *caps) {
    pthread_mutex_lock(&m->mu);
    sync_view(m, o);
    ks_dra_device_set_copy(out, &m->vset);
    /* an assumption stands for the objects' version while it is not
     * stale; stale ones are dropped (the backend reported the write, or
     * the claim is gone) */
    for (size_t i = m->na; i-- > 0;) {
        assumed *a = &m->a[i];
        uintptr_t at = (uintptr_t)ks_map_get(&m->vpos, claim_key(a->ns, a->name));
        const ks_resource_claim *v = at ? m->vclaims[at - 1] : NULL;
        if (assumption_stale(a, v)) {
            drop_assumed(m, i);
            continue;
        }
        if (v) ks_dra_device_set_remove_allocation(out, v->allocation);
        ks_dra_device_set_add_allocation(out, a->claim->allocation);
    }
    for (size_t i = 0; i < m->np; i++) ks_dra_device_set_add_allocation(out, m->p[i].claim->allocation);
    if (caps) {
        /* what shares consume: each claim as the plugin sees it (an
         * assumption stands for the objects' version), and in flight */
        for (uint32_t i = 0; i < m->nv; i++) {
            const ks_resource_claim *v = m->vclaims[i];
            bool assumed_over = false;
            for (size_t k = 0; k < m->na && !assumed_over; k++)
                assumed_over = m->a[k].ns == v->ns && m->a[k].name == v->name;
            if (!assumed_over) ks_dra_capacities_add_allocation(caps, v->allocation);
        }
        for (size_t k = 0; k < m->na; k++) ks_dra_capacities_add_allocation(caps, m->a[k].claim->allocation);
        for (size_t i = 0; i < m->np; i++) ks_dra_capacities_add_allocation(caps, m->p[i].claim->allocation);
    }
    pthread_mutex_unlock(&m->mu);
}

ks_dra_slices *ks_dra_manager_slices(ks_dra_manager *m, const ks_objects *o, bool device_taints) {
    struct ks_resource_slice *const *v = o ? o->resource_slices.v : NULL;
    size_t n = o ? o->resource_slices.n : 0;
    ks_dra_taint_rules rules = {0}, *rp = NULL;
    if (device_taints) {
        if (o) {
            rules.rules = o->device_taint_rules.v;
            rules.nrules = o->device_taint_rules.n;
            rules.classes = o->device_classes.v;
            rules.nclasses = o->device_classes.n;
        }
        rules.cache = m->cel;
        rp = &rules;
    }
    pthread_mutex_lock(&m->mu);
    if (!ks_dra_slices_same(m->slices, v, n, rp)) {
        ks_dra_slices_unref(m->slices);
        m->slices = ks_dra_slices_new(v, n, rp);
    }
    ks_dra_slices *x = ks_dra_slices_ref(m->slices);
    pthread_mutex_unlock(&m->mu);
    return x;
}
