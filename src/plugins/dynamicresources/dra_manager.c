/* The shared DRA state (see dra_manager.h). Entries are few (claims
 * between Reserve and the backend's next report), so they are kept in
 * small arrays searched linearly. */
#include "plugins/dynamicresources/dra_manager.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending {
    char *uid;
    ks_resource_claim *claim;
} pending;

typedef struct assumed {
    ks_id ns, name;
    ks_resource_claim *base;    /* the objects' version it was assumed over (referenced) */
    ks_resource_claim *claim;   /* what the plugin wrote (referenced) */
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
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static ks_dra_manager *registry;

/* Upstream keeps the 10 most recently used programs; ksched more, since a
 * program stays compiled only while it is cached. */
#define CEL_CACHE_SIZE 64

ks_dra_manager *ks_dra_manager_acquire(const void *key) {
    pthread_mutex_lock(&registry_mu);
    ks_dra_manager *m;
    for (m = registry; m; m = m->next)
        if (m->key == key) break;
    if (!m) {
        m = ks_xcalloc(1, sizeof(*m));
        m->key = key;
        pthread_mutex_init(&m->mu, NULL);
        m->cel = ks_dra_cel_cache_new(CEL_CACHE_SIZE);
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
        unref_claim(m->a[i].base);
        unref_claim(m->a[i].claim);
    }
    free(m->p);
    free(m->a);
    ks_dra_cel_cache_free(m->cel);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

ks_dra_cel_cache *ks_dra_manager_cel(ks_dra_manager *m) { return m->cel; }

static ks_resource_claim *view_claim(const ks_objects *o, ks_id ns, ks_id name) {
    if (!o) return NULL;
    for (uint32_t i = 0; i < o->resource_claims.n; i++) {
        ks_resource_claim *c = o->resource_claims.v[i];
        if (c->ns == ns && c->name == name) return c;
    }
    return NULL;
}

/* mu held: drop assumption i. */
static void drop_assumed(ks_dra_manager *m, size_t i) {
    unref_claim(m->a[i].base);
    unref_claim(m->a[i].claim);
    m->a[i] = m->a[--m->na];
}

ks_resource_claim *ks_dra_manager_claim(ks_dra_manager *m, const ks_objects *o, ks_id ns, ks_id name) {
    ks_resource_claim *v = view_claim(o, ns, name);
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->na; i++) {
        if (m->a[i].ns != ns || m->a[i].name != name) continue;
        /* the objects moved on (the backend reported a newer version, or
         * the claim is gone): the assumption has served its purpose */
        if (m->a[i].base != v) {
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
    for (size_t i = 0; i < m->na; i++)
        if (m->a[i].ns == written->ns && m->a[i].name == written->name) {
            drop_assumed(m, i);
            break;
        }
    KS_GROW(m->a, m->cap_a, m->na + 1);
    m->a[m->na++] = (assumed){written->ns, written->name, base ? KS_OBJECT_REF((ks_resource_claim *)base) : NULL,
                              KS_OBJECT_REF(written)};
    pthread_mutex_unlock(&m->mu);
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

void ks_dra_manager_allocated(ks_dra_manager *m, const ks_objects *o, ks_dra_device_set *out) {
    for (uint32_t i = 0; o && i < o->resource_claims.n; i++) {
        const ks_resource_claim *c = o->resource_claims.v[i];
        ks_resource_claim *seen = ks_dra_manager_claim(m, o, c->ns, c->name);
        ks_dra_device_set_add_allocation(out, seen->allocation);
        unref_claim(seen);
    }
    pthread_mutex_lock(&m->mu);
    /* assumed claims the objects do not have yet */
    for (size_t i = 0; i < m->na; i++)
        if (!m->a[i].base) ks_dra_device_set_add_allocation(out, m->a[i].claim->allocation);
    for (size_t i = 0; i < m->np; i++) ks_dra_device_set_add_allocation(out, m->p[i].claim->allocation);
    pthread_mutex_unlock(&m->mu);
}
