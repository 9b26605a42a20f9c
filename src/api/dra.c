#include "api/dra.h"
#include "util/hash.h"

#include <stdatomic.h>
#include <string.h>

uint64_t ks_device_id_hash(const char *driver, const char *pool, const char *device) {
    uint64_t h = 1469598103934665603ULL;
    const char *parts[3] = {driver, pool, device};
    for (int i = 0; i < 3; i++) {
        for (const char *s = parts[i]; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        h = (h ^ 0x1f) * 1099511628211ULL;
    }
    h = ks_hash_u64(h);
    return h ? h : 1; /* 0 is a map's empty key */
}

bool ks_device_toleration_tolerates(const ks_device_toleration *t, const ks_device_taint *taint) {
    if (*t->effect && strcmp(t->effect, taint->effect) != 0) return false;
    if (*t->key && strcmp(t->key, taint->key) != 0) return false;
    /* an empty operator is Equal (the API server defaults it) */
    if (!*t->op || strcmp(t->op, "Equal") == 0) return strcmp(t->value, taint->value) == 0;
    return strcmp(t->op, "Exists") == 0;
}

const ks_cel_attr *ks_device_attribute(const ks_device *d, const char *qualified) {
    const char *slash = strchr(qualified, '/');
    for (uint32_t i = 0; i < d->cel.nattrs; i++) {
        const ks_cel_attr *a = &d->cel.attrs[i];
        if (strcmp(a->name, qualified) == 0) return a;
    }
    if (!slash) return NULL;
    /* the driver's own domain also names its unqualified attributes */
    size_t dl = (size_t)(slash - qualified);
    if (strlen(d->cel.driver) != dl || memcmp(d->cel.driver, qualified, dl) != 0) return NULL;
    for (uint32_t i = 0; i < d->cel.nattrs; i++) {
        const ks_cel_attr *a = &d->cel.attrs[i];
        if (strcmp(a->name, slash + 1) == 0) return a;
    }
    return NULL;
}

bool ks_claim_reserved_for(const ks_resource_claim *c, const char *pod_uid) {
    for (uint32_t i = 0; i < c->nreserved; i++)
        if (c->reserved[i].uid && pod_uid && strcmp(c->reserved[i].uid, pod_uid) == 0) return true;
    return false;
}

bool ks_claim_owned_by(const ks_resource_claim *c, const char *pod_uid) {
    for (uint32_t i = 0; i < c->nowners; i++) {
        const ks_owner_ref *o = &c->owners[i];
        if (o->controller && o->uid && pod_uid && strcmp(o->uid, pod_uid) == 0) return true;
    }
    return false;
}

static const char *dup(ks_arena *a, const char *s) { return s ? ks_arena_strdup(a, s) : NULL; }

static void copy_selector(ks_arena *a, ks_node_selector *dst, const ks_node_selector *src) {
    dst->nterms = src->nterms;
    dst->terms = ks_arena_calloc(a, src->nterms ? src->nterms : 1, sizeof(ks_node_selector_term));
    for (uint32_t i = 0; i < src->nterms; i++) {
        const ks_node_selector_term *s = &src->terms[i];
        ks_node_selector_term *d = &dst->terms[i];
        d->nexpr = s->nexpr;
        d->nfields = s->nfields;
        d->exprs = ks_arena_calloc(a, s->nexpr ? s->nexpr : 1, sizeof(ks_requirement));
        d->fields = ks_arena_calloc(a, s->nfields ? s->nfields : 1, sizeof(ks_requirement));
        for (int k = 0; k < 2; k++) {
            const ks_requirement *from = k ? s->fields : s->exprs;
            ks_requirement *to = k ? d->fields : d->exprs;
            uint32_t n = k ? s->nfields : s->nexpr;
            for (uint32_t j = 0; j < n; j++) {
                to[j] = from[j];
                to[j].values = ks_arena_calloc(a, from[j].nvalues ? from[j].nvalues : 1, sizeof(ks_id));
                if (from[j].nvalues) memcpy(to[j].values, from[j].values, from[j].nvalues * sizeof(ks_id));
            }
        }
    }
}

ks_allocation_result *ks_allocation_copy(ks_arena *a, const ks_allocation_result *r) {
    ks_allocation_result *c = ks_arena_alloc(a, sizeof(*c));
    c->nresults = r->nresults;
    c->results = ks_arena_calloc(a, r->nresults ? r->nresults : 1, sizeof(ks_device_result));
    for (uint32_t i = 0; i < r->nresults; i++) {
        c->results[i] = r->results[i];
        c->results[i].request = dup(a, r->results[i].request);
        c->results[i].driver = dup(a, r->results[i].driver);
        c->results[i].pool = dup(a, r->results[i].pool);
        c->results[i].device = dup(a, r->results[i].device);
        c->results[i].share_id = dup(a, r->results[i].share_id);
        if (r->results[i].nconsumed) {
            c->results[i].consumed = ks_arena_calloc(a, r->results[i].nconsumed, sizeof(ks_named_quantity));
            for (uint32_t k = 0; k < r->results[i].nconsumed; k++) {
                c->results[i].consumed[k] = r->results[i].consumed[k];
                c->results[i].consumed[k].name = dup(a, r->results[i].consumed[k].name);
            }
        }
    }
    /* configs point at their class's or claim's strings and parameter
     * trees, which the new claim version keeps alive (its base) */
    c->nconfig = r->nconfig;
    c->config = ks_arena_calloc(a, r->nconfig ? r->nconfig : 1, sizeof(ks_device_config));
    if (r->nconfig) memcpy(c->config, r->config, r->nconfig * sizeof(ks_device_config));
    c->has_node_selector = r->has_node_selector;
    if (r->has_node_selector) copy_selector(a, &c->node_selector, &r->node_selector);
    return c;
}

static void claim_unref(void *p) {
    ks_resource_claim *o = p;
    KS_OBJECT_UNREF(o);
}

ks_resource_claim *ks_claim_with_status(const ks_resource_claim *c, const ks_allocation_result *allocation,
                                        const ks_claim_consumer *reserved, uint32_t nreserved, bool add_finalizer) {
    ks_arena *a = ks_arena_new(1024);
    ks_resource_claim *n = ks_arena_alloc(a, sizeof(*n));
    *n = *c;
    n->arena = a;
    atomic_init(&n->refs, 0);
    n->base = KS_OBJECT_REF((ks_resource_claim *)c);
    n->base_unref = claim_unref;
    n->doc = c->doc ? ks_docref_ref(c->doc) : NULL;
    n->allocation = allocation ? ks_allocation_copy(a, allocation) : NULL;
    n->nreserved = nreserved;
    n->reserved = ks_arena_calloc(a, nreserved ? nreserved : 1, sizeof(ks_claim_consumer));
    for (uint32_t i = 0; i < nreserved; i++) {
        n->reserved[i].api_group = dup(a, reserved[i].api_group);
        n->reserved[i].resource = dup(a, reserved[i].resource);
        n->reserved[i].name = dup(a, reserved[i].name);
        n->reserved[i].uid = dup(a, reserved[i].uid);
    }
    if (!allocation) n->has_device_status = false;
    if (add_finalizer) {
        bool has = false;
        for (uint32_t i = 0; i < c->nfinalizers; i++) has |= strcmp(c->finalizers[i], KS_DRA_FINALIZER) == 0;
        if (!has) {
            n->finalizers = ks_arena_calloc(a, c->nfinalizers + 1, sizeof(char *));
            if (c->nfinalizers) memcpy(n->finalizers, c->finalizers, c->nfinalizers * sizeof(char *));
            n->finalizers[n->nfinalizers++] = KS_DRA_FINALIZER;
        }
    }
    return n;
}

const char *ks_pod_claim_name(const ks_pod *p, uint32_t i, bool *must_check_owner, bool *skip) {
    const ks_pod_claim *pc = &p->resource_claims[i];
    *skip = false;
    *must_check_owner = false;
    if (pc->claim_name) return pc->claim_name;
    if (pc->template_name) {
        for (uint32_t k = 0; k < p->nclaim_statuses; k++) {
            if (strcmp(p->claim_statuses[k].name, pc->name) != 0) continue;
            *must_check_owner = true;
            if (!p->claim_statuses[k].claim_name) *skip = true;
            return p->claim_statuses[k].claim_name;
        }
    }
    return NULL;
}
