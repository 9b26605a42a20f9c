/* The structured allocator (see allocator.h), following upstream's
 * experimental implementation step by step: gather the pools available on
 * the node, check every request (its class, its device count, "All"
 * devices), then allocateOne: one device at a time, claim after claim,
 * request after request, trying every eligible device in pool order and
 * backtracking, keeping the first complete solution.
 *
 * Decided where upstream is not deterministic: pools are tried in
 * (driver, pool name) order and a pool's slices in name order (upstream
 * iterates a Go map and its informer's list). */
#include "plugins/dynamicresources/allocator.h"
#include "config/feature_gates.h"
#include "framework/handle.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const ks_dra_features KS_DRA_DEFAULT_FEATURES = {
    .admin_access = true,
    .prioritized_list = true,
    .device_status = true,
};

ks_dra_features ks_dra_features_of(const ks_handle *h) {
    return (ks_dra_features){
        .admin_access = ks_handle_feature_enabled(h, KS_FEAT_DRA_ADMIN_ACCESS),
        .prioritized_list = ks_handle_feature_enabled(h, KS_FEAT_DRA_PRIORITIZED_LIST),
        .device_status = ks_handle_feature_enabled(h, KS_FEAT_DRA_DEVICE_STATUS),
        .partitionable_devices = ks_handle_feature_enabled(h, KS_FEAT_DRA_PARTITIONABLE_DEVICES),
        .device_taints = ks_handle_feature_enabled(h, KS_FEAT_DRA_DEVICE_TAINTS),
        .device_binding = ks_handle_feature_enabled(h, KS_FEAT_DRA_BINDING_CONDITIONS),
        .consumable_capacity = ks_handle_feature_enabled(h, KS_FEAT_DRA_CONSUMABLE_CAPACITY),
    };
}

/* ---- device sets ---------------------------------------------------------------- */

/* A device is known by a 64-bit hash of its id: the set holds no strings
 * (so nothing it points to can go away) and a lookup is one probe. Two
 * ids colliding would need 2^64 tries; with the devices of a cluster the
 * odds of it ever happening are below 1e-9. */
uint64_t ks_dra_device_hash(const char *driver, const char *pool, const char *device) {
    return ks_device_id_hash(driver, pool, device);
}

#define SET_EMPTY 0
#define SET_REMOVED 1

static uint64_t set_key(uint64_t h) { return h <= SET_REMOVED ? h + 2 : h; }

void ks_dra_device_set_init(ks_dra_device_set *s) { *s = (ks_dra_device_set){0}; }

void ks_dra_device_set_free(ks_dra_device_set *s) {
    free(s->key);
    free(s->count);
    *s = (ks_dra_device_set){0};
}

void ks_dra_device_set_copy(ks_dra_device_set *dst, const ks_dra_device_set *src) {
    if (dst->cap != src->cap) {
        ks_dra_device_set_free(dst);
        if (src->cap) {
            dst->key = ks_xmalloc(src->cap * sizeof(*dst->key));
            dst->count = ks_xmalloc(src->cap * sizeof(*dst->count));
        }
    }
    if (src->cap) {
        memcpy(dst->key, src->key, src->cap * sizeof(*dst->key));
        memcpy(dst->count, src->count, src->cap * sizeof(*dst->count));
    }
    dst->cap = src->cap;
    dst->used = src->used;
    dst->n = src->n;
    dst->shares = src->shares;
}

/* The slot of key k, or the empty slot that ends its probe sequence. */
static size_t set_probe(const ks_dra_device_set *s, uint64_t k) {
    size_t i = (size_t)(k ^ k >> 29) & (s->cap - 1);
    while (s->key[i] != SET_EMPTY && s->key[i] != k) i = (i + 1) & (s->cap - 1);
    return i;
}

bool ks_dra_device_set_has_hash(const ks_dra_device_set *s, uint64_t h) {
    if (!s || !s->n) return false;
    uint64_t k = set_key(h);
    return s->key[set_probe(s, k)] == k;
}

bool ks_dra_device_set_has(const ks_dra_device_set *s, const char *driver, const char *pool, const char *device) {
    return ks_dra_device_set_has_hash(s, ks_dra_device_hash(driver, pool, device));
}

static void set_add_hash(ks_dra_device_set *s, uint64_t h) {
    uint64_t k = set_key(h);
    if (2 * (s->used + 1) > s->cap) {
        /* grow (or just drop the removed slots) */
        ks_dra_device_set old = *s;
        s->cap = s->cap && 4 * (s->n + 1) <= s->cap ? s->cap : (s->cap ? 2 * s->cap : 64);
        s->key = ks_xcalloc(s->cap, sizeof(*s->key));
        s->count = ks_xcalloc(s->cap, sizeof(*s->count));
        s->used = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.key[i] > SET_REMOVED) {
                size_t j = set_probe(s, old.key[i]);
                s->key[j] = old.key[i];
                s->count[j] = old.count[i];
                s->used++;
            }
        free(old.key);
        free(old.count);
    }
    size_t i = set_probe(s, k);
    if (s->key[i] == k) {
        s->count[i]++;
        return;
    }
    s->key[i] = k;
    s->count[i] = 1;
    s->used++;
    s->n++;
}

static void set_remove_hash(ks_dra_device_set *s, uint64_t h) {
    if (!s->n) return;
    uint64_t k = set_key(h);
    size_t i = set_probe(s, k);
    if (s->key[i] != k || --s->count[i]) return;
    s->key[i] = SET_REMOVED; /* still part of other keys' probe sequences */
    s->n--;
}

void ks_dra_device_set_add(ks_dra_device_set *s, const char *driver, const char *pool, const char *device) {
    set_add_hash(s, ks_dra_device_hash(driver, pool, device));
}

static uint64_t result_hash(const ks_device_result *r) {
    return r->id_hash ? r->id_hash : ks_dra_device_hash(r->driver, r->pool, r->device);
}

/* A share of a device (DRAConsumableCapacity): not its allocation. */
static bool shared_result(const ks_dra_device_set *s, const ks_device_result *r) {
    return r->share_id && s->shares;
}

void ks_dra_device_set_add_allocation(ks_dra_device_set *s, const ks_allocation_result *a) {
    if (!a) return;
    for (uint32_t i = 0; i < a->nresults; i++) {
        const ks_device_result *r = &a->results[i];
        if ((r->has_admin_access && r->admin_access) || shared_result(s, r)) continue;
        set_add_hash(s, result_hash(r));
    }
}

void ks_dra_device_set_remove_allocation(ks_dra_device_set *s, const ks_allocation_result *a) {
    if (!a) return;
    for (uint32_t i = 0; i < a->nresults; i++) {
        const ks_device_result *r = &a->results[i];
        if ((r->has_admin_access && r->admin_access) || shared_result(s, r)) continue;
        set_remove_hash(s, result_hash(r));
    }
}

/* ---- consumed capacities ---------------------------------------------------------------- */

void ks_dra_capacities_init(ks_dra_capacities *c) {
    memset(c, 0, sizeof(*c));
    c->arena = ks_arena_new(1024);
}

void ks_dra_capacities_free(ks_dra_capacities *c) {
    free(c->v);
    ks_arena_free(c->arena);
    memset(c, 0, sizeof(*c));
}

void ks_dra_capacities_add_allocation(ks_dra_capacities *c, const ks_allocation_result *a) {
    if (!a) return;
    for (uint32_t i = 0; i < a->nresults; i++) {
        const ks_device_result *r = &a->results[i];
        if ((r->has_admin_access && r->admin_access) || !r->share_id) continue;
        for (uint32_t k = 0; k < r->nconsumed; k++) {
            KS_GROW(c->v, c->cap, c->n + 1);
            c->v[c->n++] = (ks_dra_cap_use){result_hash(r), ks_arena_strdup(c->arena, r->consumed[k].name),
                                            r->consumed[k].q.nano};
        }
    }
    c->sorted = false;
}

static int cmp_use(const void *a, const void *b) {
    const ks_dra_cap_use *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return strcmp(x->name, y->name);
}

__int128 ks_dra_capacities_get(ks_dra_capacities *c, uint64_t dev, const char *name) {
    if (!c || !c->n) return 0;
    if (!c->sorted) {
        qsort(c->v, c->n, sizeof(*c->v), cmp_use);
        c->sorted = true;
    }
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->v[mid].dev < dev) lo = mid + 1;
        else hi = mid;
    }
    __int128 sum = 0;
    for (size_t i = lo; i < c->n && c->v[i].dev == dev; i++)
        if (strcmp(c->v[i].name, name) == 0) sum += c->v[i].nano;
    return sum;
}

/* ---- compiled selectors ------------------------------------------------------------ */

struct ks_dra_expr {
    _Atomic int refs;
    char *src;
    ks_cel_program *prog; /* NULL: compile failed */
    char *error;          /* the compile error */
    uint64_t used;        /* LRU clock */
};

struct ks_dra_cel_cache {
    pthread_mutex_t mu;
    size_t cap, n;
    ks_dra_expr **v;
    uint64_t clock;
    ks_cel_ctx **ctxs; /* idle evaluation contexts */
    size_t nctx, ctx_cap;
};

ks_dra_cel_cache *ks_dra_cel_cache_new(size_t cap) {
    ks_dra_cel_cache *c = ks_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    c->cap = cap ? cap : 1;
    c->v = ks_xcalloc(c->cap, sizeof(*c->v));
    return c;
}

void ks_dra_expr_unref(const ks_dra_expr *ce) {
    ks_dra_expr *e = (ks_dra_expr *)ce;
    if (!e || atomic_fetch_sub(&e->refs, 1) != 1) return;
    ks_cel_program_free(e->prog);
    free(e->src);
    free(e->error);
    free(e);
}

void ks_dra_cel_cache_free(ks_dra_cel_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) ks_dra_expr_unref(c->v[i]);
    for (size_t i = 0; i < c->nctx; i++) ks_cel_ctx_free(c->ctxs[i]);
    free(c->ctxs);
    free(c->v);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const ks_dra_expr *ks_dra_cel_get(ks_dra_cel_cache *c, const char *expression) {
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->v[i]->src, expression) == 0) {
            ks_dra_expr *e = c->v[i];
            e->used = ++c->clock;
            atomic_fetch_add(&e->refs, 1);
            pthread_mutex_unlock(&c->mu);
            return e;
        }
    }
    pthread_mutex_unlock(&c->mu);
    /* compile outside the lock; a concurrent compile of the same text
     * only costs a duplicate */
    ks_dra_expr *e = ks_xcalloc(1, sizeof(*e));
    e->src = ks_xstrdup(expression);
    e->prog = ks_cel_compile(expression, NULL, &e->error);
    atomic_init(&e->refs, 2); /* the cache's and the caller's */
    pthread_mutex_lock(&c->mu);
    e->used = ++c->clock;
    if (c->n == c->cap) {
        size_t old = 0;
        for (size_t i = 1; i < c->n; i++)
            if (c->v[i]->used < c->v[old]->used) old = i;
        ks_dra_expr_unref(c->v[old]);
        c->v[old] = c->v[--c->n];
    }
    c->v[c->n++] = e;
    pthread_mutex_unlock(&c->mu);
    return e;
}

ks_cel_ctx *ks_dra_cel_ctx_get(ks_dra_cel_cache *c) {
    pthread_mutex_lock(&c->mu);
    ks_cel_ctx *x = c->nctx ? c->ctxs[--c->nctx] : NULL;
    pthread_mutex_unlock(&c->mu);
    return x ? x : ks_cel_ctx_new();
}

void ks_dra_cel_ctx_put(ks_dra_cel_cache *c, ks_cel_ctx *x) {
    pthread_mutex_lock(&c->mu);
    /* keep a few for the next evaluators; the rest go */
    if (c->nctx < 64) {
        KS_GROW(c->ctxs, c->ctx_cap, c->nctx + 1);
        c->ctxs[c->nctx++] = x;
        x = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    ks_cel_ctx_free(x);
}

/* ---- the allocator ----------------------------------------------------------------- */

/* The taints rules add to one slice's devices. */
typedef struct dev_taints {
    uint32_t n, cap;
    const ks_device_taint **v;
} dev_taints;

struct ks_dra_slices {
    _Atomic int refs;
    struct ks_resource_slice **slices; /* referenced */
    size_t nslices;
    /* DRADeviceTaints: the rules and classes applied (referenced), per
     * slice NULL or one dev_taints per device */
    bool patched;
    struct ks_device_taint_rule **rules;
    size_t nrules;
    struct ks_device_class **classes;
    size_t nclasses;
    dev_taints **xt;
    /* node id + 1 -> first index + 1 in by_node, a run ending at the next
     * different node; others: the slices not tied to one node; each in
     * input order */
    ks_map node_index;
    uint32_t *by_node;
    uint32_t *others;
    uint32_t nothers, nby_node;
};

struct ks_dra_allocator {
    ks_dra_features f;
    ks_dra_capacities *caps; /* DRAConsumableCapacity, borrowed */
    const ks_dra_device_set *allocated; /* borrowed */
    struct ks_device_class *const *classes;
    size_t nclasses;
    const ks_dra_slices *idx; /* borrowed */
    ks_dra_cel_cache *cache;
};

static int cmp_by_node(const void *a, const void *b, void *arg) {
    struct ks_resource_slice *const *s = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (s[x]->node_name != s[y]->node_name) return s[x]->node_name < s[y]->node_name ? -1 : 1;
    return (x > y) - (x < y);
}

/* A device as CEL sees it in a DeviceTaintRule: the tracker passes no
 * allowMultipleAllocations. */
static int rule_cel_match(ks_cel_ctx *ctx, const ks_dra_expr *e, const ks_device *d) {
    ks_cel_device cd = d->cel;
    cd.allow_multiple_allocations = false;
    const char *err = NULL;
    return ks_cel_device_matches(e->prog, &cd, KS_CEL_SELECTOR_MAX_COST, ctx, &err);
}

/* upstream's tracker applyPatches for one slice: false when a selector
 * does not compile (the slice is then left out). */
static bool patch_slice(ks_dra_slices *x, size_t si, const ks_dra_taint_rules *in, ks_cel_ctx *ctx) {
    const ks_resource_slice *s = x->slices[si];
    for (size_t r = 0; r < in->nrules; r++) {
        const ks_device_taint_rule *rule = in->rules[r];
        const ks_dra_expr *cls_e[64], *sel_e[64];
        uint32_t ncls = 0, nsel = 0;
        const char *only = NULL;
        if (rule->has_selector) {
            if (rule->driver && strcmp(rule->driver, s->driver) != 0) continue;
            if (rule->pool && strcmp(rule->pool, s->pool) != 0) continue;
            only = rule->device;
            if (rule->device_class) {
                const ks_device_class *cls = NULL;
                ks_id id = ks_intern_find(rule->device_class);
                for (size_t k = 0; id != KS_ID_INVALID && k < in->nclasses && !cls; k++)
                    if (in->classes[k]->name == id) cls = in->classes[k];
                if (!cls) continue;
                for (uint32_t k = 0; k < cls->nselectors && ncls < 64; k++)
                    if (cls->selectors[k]) cls_e[ncls++] = ks_dra_cel_get(in->cache, cls->selectors[k]);
            }
            for (uint32_t k = 0; k < rule->nselectors && nsel < 64; k++)
                if (rule->selectors[k]) sel_e[nsel++] = ks_dra_cel_get(in->cache, rule->selectors[k]);
        }
        bool ok = true;
        for (uint32_t d = 0; d < s->ndevices && ok; d++) {
            const ks_device *dev = &s->devices[d];
            if (only && strcmp(only, dev->name) != 0) continue;
            bool match = true;
            for (uint32_t k = 0; k < ncls && match && ok; k++) {
                if (!cls_e[k]->prog) ok = false;
                else match = rule_cel_match(ctx, cls_e[k], dev) == 1;
            }
            for (uint32_t k = 0; k < nsel && match && ok; k++) {
                if (!sel_e[k]->prog) ok = false;
                else match = rule_cel_match(ctx, sel_e[k], dev) == 1;
            }
            if (!ok || !match) continue;
            if (!x->xt[si]) x->xt[si] = ks_xcalloc(s->ndevices, sizeof(dev_taints));
            dev_taints *t = &x->xt[si][d];
            KS_GROW(t->v, t->cap, t->n + 1);
            t->v[t->n++] = &rule->taint;
        }
        for (uint32_t k = 0; k < ncls; k++) ks_dra_expr_unref(cls_e[k]);
        for (uint32_t k = 0; k < nsel; k++) ks_dra_expr_unref(sel_e[k]);
        if (!ok) return false;
    }
    return true;
}

static void free_xt(ks_dra_slices *x, size_t si) {
    if (!x->xt || !x->xt[si]) return;
    for (uint32_t d = 0; d < x->slices[si]->ndevices; d++) free(x->xt[si][d].v);
    free(x->xt[si]);
    x->xt[si] = NULL;
}

ks_dra_slices *ks_dra_slices_new(struct ks_resource_slice *const *slices, size_t nslices,
                                 const ks_dra_taint_rules *rules) {
    ks_dra_slices *x = ks_xcalloc(1, sizeof(*x));
    atomic_init(&x->refs, 1);
    x->nslices = nslices;
    x->slices = ks_xcalloc(nslices ? nslices : 1, sizeof(*x->slices));
    for (size_t i = 0; i < nslices; i++) x->slices[i] = KS_OBJECT_REF(slices[i]);
    ks_map_init(&x->node_index);
    x->by_node = ks_xcalloc(nslices ? nslices : 1, sizeof(uint32_t));
    x->others = ks_xcalloc(nslices ? nslices : 1, sizeof(uint32_t));
    bool *dropped = ks_xcalloc(nslices ? nslices : 1, sizeof(bool));
    if (rules) {
        x->patched = true;
        x->nrules = rules->nrules;
        x->rules = ks_xcalloc(rules->nrules ? rules->nrules : 1, sizeof(*x->rules));
        for (size_t i = 0; i < rules->nrules; i++) x->rules[i] = KS_OBJECT_REF(rules->rules[i]);
        x->nclasses = rules->nclasses;
        x->classes = ks_xcalloc(rules->nclasses ? rules->nclasses : 1, sizeof(*x->classes));
        for (size_t i = 0; i < rules->nclasses; i++) x->classes[i] = KS_OBJECT_REF(rules->classes[i]);
        x->xt = ks_xcalloc(nslices ? nslices : 1, sizeof(*x->xt));
        if (rules->nrules) {
            ks_cel_ctx *ctx = ks_dra_cel_ctx_get(rules->cache);
            for (size_t i = 0; i < nslices; i++)
                if (!patch_slice(x, i, rules, ctx)) {
                    free_xt(x, i);
                    dropped[i] = true;
                }
            ks_dra_cel_ctx_put(rules->cache, ctx);
        }
    }
    uint32_t nb = 0;
    for (size_t i = 0; i < nslices; i++) {
        if (dropped[i]) continue;
        if (slices[i]->node_name != KS_ID_NONE && !slices[i]->per_device_node_selection) x->by_node[nb++] = (uint32_t)i;
        else x->others[x->nothers++] = (uint32_t)i;
    }
    free(dropped);
    qsort_r(x->by_node, nb, sizeof(uint32_t), cmp_by_node, (void *)x->slices);
    for (uint32_t i = nb; i-- > 0;)
        ks_map_put(&x->node_index, (uint64_t)x->slices[x->by_node[i]]->node_name + 1, (void *)(uintptr_t)(i + 1));
    x->nby_node = nb;
    return x;
}

ks_dra_slices *ks_dra_slices_ref(ks_dra_slices *x) {
    if (x) atomic_fetch_add(&x->refs, 1);
    return x;
}

void ks_dra_slices_unref(ks_dra_slices *x) {
    if (!x || atomic_fetch_sub(&x->refs, 1) != 1) return;
    for (size_t i = 0; x->xt && i < x->nslices; i++) free_xt(x, i);
    free(x->xt);
    for (size_t i = 0; i < x->nrules; i++) KS_OBJECT_UNREF(x->rules[i]);
    free(x->rules);
    for (size_t i = 0; i < x->nclasses; i++) KS_OBJECT_UNREF(x->classes[i]);
    free(x->classes);
    for (size_t i = 0; i < x->nslices; i++) KS_OBJECT_UNREF(x->slices[i]);
    free(x->slices);
    ks_map_free(&x->node_index);
    free(x->by_node);
    free(x->others);
    free(x);
}

bool ks_dra_slices_same(const ks_dra_slices *x, struct ks_resource_slice *const *slices, size_t n,
                        const ks_dra_taint_rules *rules) {
    if (!x || x->nslices != n || (n && memcmp(x->slices, slices, n * sizeof(*slices)) != 0)) return false;
    if (!rules) return !x->patched;
    return x->patched && x->nrules == rules->nrules && x->nclasses == rules->nclasses &&
           (!x->nrules || memcmp(x->rules, rules->rules, x->nrules * sizeof(*x->rules)) == 0) &&
           (!x->nclasses || memcmp(x->classes, rules->classes, x->nclasses * sizeof(*x->classes)) == 0);
}

static const dev_taints *rule_taints_at(const ks_dra_slices *x, size_t si, uint32_t d) {
    return x && x->xt && x->xt[si] && x->xt[si][d].n ? &x->xt[si][d] : NULL;
}

const ks_device_taint *const *ks_dra_slices_rule_taints(const ks_dra_slices *x, const ks_resource_slice *s, uint32_t d,
                                                        uint32_t *n) {
    *n = 0;
    for (size_t i = 0; x && i < x->nslices; i++) {
        if (x->slices[i] != s) continue;
        const dev_taints *t = rule_taints_at(x, i, d);
        if (!t) return NULL;
        *n = t->n;
        return t->v;
    }
    return NULL;
}

ks_dra_allocator *ks_dra_allocator_new(const ks_dra_features *f, const ks_dra_device_set *allocated,
                                       struct ks_device_class *const *classes, size_t nclasses,
                                       const ks_dra_slices *slices, ks_dra_cel_cache *cache) {
    ks_dra_allocator *a = ks_xcalloc(1, sizeof(*a));
    a->f = f ? *f : KS_DRA_DEFAULT_FEATURES;
    a->allocated = allocated;
    a->classes = classes;
    a->nclasses = nclasses;
    a->idx = slices;
    a->cache = cache;
    return a;
}

void ks_dra_allocator_free(ks_dra_allocator *a) { free(a); }

void ks_dra_allocator_set_capacities(ks_dra_allocator *a, ks_dra_capacities *caps) {
    /* sorted now: allocations on several nodes read it at once */
    if (caps) ks_dra_capacities_get(caps, 0, "");
    a->caps = caps;
}

const char *ks_dra_claim_ref(const ks_resource_claim *c, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", ks_str(c->ns), ks_str(c->name));
    return buf;
}

/* ---- one Allocate call ---------------------------------------------------------------- */

typedef struct pool {
    const char *driver, *name;
    const ks_resource_slice **slices;
    uint32_t *sidx;            /* each slice's index in the view */
    uint32_t nslices, cap;
    int64_t generation;
    bool incomplete, invalid;
    const char *invalid_reason;
    bool binding; /* has devices with binding conditions: tried last */
    uint32_t first_dev, ndevs; /* range in the flattened device list */
} pool;

/* DRAPartitionableDevices: one slice's counters during a run, flattened
 * over its shared counter sets (set k's counters from first[k]). */
typedef struct slice_counters {
    const ks_resource_slice *slice;
    uint32_t *first;
    __int128 *avail;    /* shared counters less what allocated devices consume */
    __int128 *consumed; /* by the devices this run is allocating */
    struct slice_counters *next;
} slice_counters;

typedef struct devref {
    const ks_resource_slice *slice;
    const ks_device *dev;
    bool allocated; /* in use by another claim */
    uint64_t allocating; /* claims (bits) this attempt gives it to */
    const dev_taints *rule_taints; /* DRADeviceTaints: from DeviceTaintRules */
    /* DRAConsumableCapacity, per device capacity (NULL until needed): what
     * shares consume already, and what this run gives shares */
    __int128 *cap_allocated, *cap_allocating;
} devref;

/* A request or one subrequest of a firstAvailable list. */
typedef struct reqdata {
    const ks_device_subrequest *req;
    const ks_device_request *parent; /* set for subrequests */
    const char *name;                /* the request's, or the subrequest's own */
    bool admin;                      /* adminAccess true (requests only) */
    const ks_device_class *cls;
    int num_devices;
    uint32_t *all;                   /* "All": indices of the devices chosen up front */
    uint32_t nall;
    uint32_t key;                    /* index of this (sub)request, for the match cache */
    const ks_dra_expr **class_sel, **req_sel;
} reqdata;

typedef struct claim_reqs {
    uint32_t nreqs;
    uint32_t *nsub;                  /* per request: 0 (plain) or its subrequests */
    reqdata **rd;                    /* per request: nsub entries (1 for plain) */
    int *selected;                   /* per request: the subrequest chosen */
} claim_reqs;

typedef struct constraint {
    bool distinct;
    const char *attr;
    uint32_t nrequests;
    const char **requests;
    const ks_cel_attr *value; /* matchAttribute: the first device's */
    /* distinctAttribute: upstream's map from request name to the value
     * last added for it (m_req/m_dev: its entries) */
    const char **m_req;
    const ks_device **m_dev;
    uint32_t nm;
    int num;
} constraint;

typedef struct result_dev {
    const char *request, *parent;
    uint32_t dev;
    bool admin;
    bool shared;              /* DRAConsumableCapacity: a share of the device */
    ks_quantity *consumed;    /* per device capacity, for a share */
} result_dev;

typedef struct claim_result {
    result_dev v[KS_DRA_ALLOCATION_RESULTS_MAX + 1];
    uint32_t n;
} claim_result;

typedef struct run {
    ks_dra_allocator *al;
    const ks_node *node;
    const ks_resource_claim *const *claims;
    size_t nclaims;
    ks_arena *a;
    pool *pools;
    uint32_t npools;
    devref *devs;
    uint32_t ndevs;
    claim_reqs *cr;
    constraint **cons;
    uint32_t *ncons;
    claim_result *res;
    uint32_t nkeys;
    int8_t *match;    /* ndevs x nkeys: -1 unknown, 0/1 */
    slice_counters *counters;
    ks_cel_ctx *ctx;
    char *err;
    int64_t deadline;
    uint64_t steps;
} run;

enum { R_DONE = 1, R_NOT = 0, R_ERROR = -1, R_TIMEOUT = -2, R_EXCEEDED = -3 };

static int fail(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(run *r, const char *fmt, ...) {
    if (!r->err) {
        va_list ap;
        va_start(ap, fmt);
        char buf[2048];
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        r->err = ks_xstrdup(buf);
    }
    return R_ERROR;
}

static const char *cref(run *r, size_t claim, char *buf, size_t n) {
    return ks_dra_claim_ref(r->claims[claim], buf, n);
}

/* ---- pools ---------------------------------------------------------------------------- */

/* upstream nodeMatches */
static bool node_matches(run *r, ks_id node_name, bool all_nodes, bool has_sel, const ks_node_selector *sel) {
    if (node_name != KS_ID_NONE) return r->node && r->node->name == node_name;
    if (all_nodes) return true;
    if (has_sel) return r->node && ks_node_selector_matches(sel, &r->node->labels, r->node->name);
    return false;
}

/* Whether GatherPools takes the slice for this node: by the slice's node
 * selection, or with per-device node selection when one of its devices
 * is available there. */
static bool slice_on_node(run *r, const ks_resource_slice *s) {
    if (s->node_name != KS_ID_NONE || s->all_nodes || s->has_node_selector)
        return node_matches(r, s->node_name, s->all_nodes, s->has_node_selector, &s->node_selector);
    if (!s->per_device_node_selection) return false;
    for (uint32_t d = 0; d < s->ndevices; d++) {
        const ks_device *dev = &s->devices[d];
        if (node_matches(r, dev->node_name, dev->all_nodes, dev->has_node_selector, &dev->node_selector)) return true;
    }
    return false;
}

static bool slice_has_binding(const ks_resource_slice *s) {
    for (uint32_t i = 0; i < s->ndevices; i++)
        if (s->devices[i].has_binding_conditions) return true;
    return false;
}

static int cmp_pool(const void *a, const void *b) {
    const pool *x = a, *y = b;
    if (x->binding != y->binding) return x->binding ? 1 : -1;
    int c = strcmp(x->driver, y->driver);
    return c ? c : strcmp(x->name, y->name);
}

static void add_slice(run *r, const ks_resource_slice *s, uint32_t si) {
    pool *p = NULL;
    for (uint32_t i = 0; i < r->npools; i++)
        if (strcmp(r->pools[i].driver, s->driver) == 0 && strcmp(r->pools[i].name, s->pool) == 0) p = &r->pools[i];
    if (!p) {
        p = &r->pools[r->npools++];
        memset(p, 0, sizeof(*p));
        p->driver = s->driver;
        p->name = s->pool;
        p->generation = s->generation;
    }
    /* only the newest generation of a pool counts */
    if (s->generation < p->generation) return;
    if (s->generation > p->generation) {
        p->nslices = 0;
        p->generation = s->generation;
    }
    if (p->nslices == p->cap) {
        uint32_t nc = p->cap ? p->cap * 2 : 4;
        const ks_resource_slice **v = ks_arena_calloc(r->a, nc, sizeof(*v));
        uint32_t *ix = ks_arena_calloc(r->a, nc, sizeof(*ix));
        if (p->nslices) {
            memcpy(v, p->slices, p->nslices * sizeof(*v));
            memcpy(ix, p->sidx, p->nslices * sizeof(*ix));
        }
        p->slices = v;
        p->sidx = ix;
        p->cap = nc;
    }
    p->sidx[p->nslices] = si;
    p->slices[p->nslices++] = s;
}

/* A pool's slices in name order (insertion sort: pools have few). */
static void sort_pool_slices(pool *p) {
    for (uint32_t i = 1; i < p->nslices; i++) {
        const ks_resource_slice *s = p->slices[i];
        uint32_t ix = p->sidx[i], k = i;
        while (k > 0 && strcmp(ks_str(p->slices[k - 1]->name), ks_str(s->name)) > 0) {
            p->slices[k] = p->slices[k - 1];
            p->sidx[k] = p->sidx[k - 1];
            k--;
        }
        p->slices[k] = s;
        p->sidx[k] = ix;
    }
}

static void gather_pools(run *r) {
    ks_dra_allocator *al = r->al;
    const ks_dra_slices *x = al->idx;
    /* the node's own slices (a run of by_node) and the shared ones */
    uint32_t first = 0, nmine = 0;
    if (r->node && x) {
        uintptr_t at = (uintptr_t)ks_map_get(&x->node_index, (uint64_t)r->node->name + 1);
        if (at) {
            first = (uint32_t)(at - 1);
            while (first + nmine < x->nby_node && x->slices[x->by_node[first + nmine]]->node_name == r->node->name)
                nmine++;
        }
    }
    size_t cand = (size_t)nmine + (x ? x->nothers : 0);
    r->pools = ks_arena_calloc(r->a, cand ? cand : 1, sizeof(pool));
    /* slices with binding conditions join their pools after the others */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < cand; k++) {
            uint32_t si = k < nmine ? x->by_node[first + k] : x->others[k - nmine];
            const ks_resource_slice *s = x->slices[si];
            /* the field set at all, even to false, as upstream */
            if (!al->f.partitionable_devices && s->has_per_device_node_selection) continue;
            if (!slice_on_node(r, s)) continue;
            if (slice_has_binding(s) != (pass == 1)) continue;
            add_slice(r, s, si);
        }
    }
    uint32_t total = 0;
    for (uint32_t i = 0; i < r->npools; i++) {
        pool *p = &r->pools[i];
        sort_pool_slices(p);
        p->incomplete = (int64_t)p->nslices != p->slices[0]->slice_count;
        for (uint32_t k = 0; k < p->nslices; k++) {
            p->binding |= slice_has_binding(p->slices[k]);
            total += p->slices[k]->ndevices;
        }
        /* duplicate device names make a pool invalid (the first name seen
         * again, in slice order) */
        if (p->nslices == 1 && p->slices[0]->duplicate_device) {
            p->invalid = true;
            p->invalid_reason = ks_arena_printf(r->a, "duplicate device name %s", p->slices[0]->duplicate_device);
        }
        for (uint32_t k = 0; p->nslices > 1 && k < p->nslices && !p->invalid; k++)
            for (uint32_t d = 0; d < p->slices[k]->ndevices && !p->invalid; d++)
                for (uint32_t k2 = 0; k2 <= k && !p->invalid; k2++)
                    for (uint32_t d2 = 0; d2 < (k2 == k ? d : p->slices[k2]->ndevices); d2++)
                        if (strcmp(p->slices[k]->devices[d].name, p->slices[k2]->devices[d2].name) == 0) {
                            p->invalid = true;
                            p->invalid_reason =
                                ks_arena_printf(r->a, "duplicate device name %s", p->slices[k]->devices[d].name);
                            break;
                        }
    }
    qsort(r->pools, r->npools, sizeof(pool), cmp_pool);
    r->devs = ks_arena_calloc(r->a, total ? total : 1, sizeof(devref));
    for (uint32_t i = 0; i < r->npools; i++) {
        pool *p = &r->pools[i];
        p->first_dev = r->ndevs;
        for (uint32_t k = 0; k < p->nslices; k++) {
            const ks_resource_slice *s = p->slices[k];
            for (uint32_t d = 0; d < s->ndevices; d++) {
                devref *dr = &r->devs[r->ndevs++];
                dr->slice = s;
                dr->dev = &s->devices[d];
                dr->allocated = ks_dra_device_set_has_hash(al->allocated, s->devices[d].id_hash);
                dr->rule_taints = rule_taints_at(x, p->sidx[k], d);
            }
        }
        p->ndevs = r->ndevs - p->first_dev;
    }
}

static int cmp_capacity(run *r, devref *d, const ks_device_subrequest *req);

/* ---- selectors -------------------------------------------------------------------------- */

static const ks_device_class *find_class(run *r, const char *name) {
    ks_id id = ks_intern_find(name);
    if (id == KS_ID_INVALID) return NULL;
    for (size_t i = 0; i < r->al->nclasses; i++)
        if (r->al->classes[i]->name == id) return r->al->classes[i];
    return NULL;
}

static const ks_dra_expr **compile_all(run *r, const char *const *sel, uint32_t n) {
    const ks_dra_expr **v = ks_arena_calloc(r->a, n ? n : 1, sizeof(*v));
    for (uint32_t i = 0; i < n; i++) v[i] = sel[i] ? ks_dra_cel_get(r->al->cache, sel[i]) : NULL;
    return v;
}

static void release_all(const ks_dra_expr **v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) ks_dra_expr_unref(v[i]);
}

/* 1 match, 0 not, R_ERROR */
static int selectors_match(run *r, size_t claim, const ks_device_class *cls, const ks_dra_expr *const *sel, uint32_t n,
                           const ks_device *dev) {
    for (uint32_t i = 0; i < n; i++) {
        const ks_dra_expr *e = sel[i];
        char buf[600];
        if (!e->prog) {
            if (cls) return fail(r, "class %s: selector #%u: CEL compile error: %s", ks_str(cls->name), i, e->error);
            return fail(r, "claim %s: selector #%u: CEL compile error: %s", cref(r, claim, buf, sizeof buf), i,
                        e->error);
        }
        const char *merr = NULL;
        int m = ks_cel_device_matches(e->prog, &dev->cel, KS_CEL_SELECTOR_MAX_COST, r->ctx, &merr);
        if (m < 0) {
            if (cls) return fail(r, "class %s: selector #%u: CEL runtime error: %s", ks_str(cls->name), i, merr);
            return fail(r, "claim %s: selector #%u: CEL runtime error: %s", cref(r, claim, buf, sizeof buf), i, merr);
        }
        if (!m) return 0;
    }
    return 1;
}

/* key: the match cache slot (normally rd->key, see validate). */
static int is_selectable(run *r, size_t claim, const reqdata *rd, uint32_t di, uint32_t key) {
    const ks_device *dev = r->devs[di].dev;
    if ((!r->al->f.device_binding || !r->al->f.device_status) && dev->has_binding_conditions) return 0;
    int8_t *m = &r->match[(size_t)di * r->nkeys + key];
    if (*m >= 0) return *m;
    int ok = 1;
    if (rd->cls) {
        ok = selectors_match(r, claim, rd->cls, rd->class_sel, rd->cls->nselectors, dev);
        if (ok < 0) return ok;
    }
    if (ok) {
        ok = selectors_match(r, claim, NULL, rd->req_sel, rd->req->nselectors, dev);
        if (ok < 0) return ok;
    }
    if (ok && r->devs[di].slice->per_device_node_selection) {
        if (dev->node_name != KS_ID_NONE) ok = r->node && r->node->name == dev->node_name;
        else if (dev->all_nodes) ok = 1;
        else if (dev->has_node_selector)
            ok = r->node && ks_node_selector_matches(&dev->node_selector, &r->node->labels, r->node->name);
        else ok = 0;
    }
    *m = (int8_t)ok;
    return ok;
}

/* ---- requests ------------------------------------------------------------------------------ */

/* vkey: the match cache slot the checks of "All" devices use. Upstream
 * checks subrequest k with the key of subrequest k-1 (it sets the index
 * after the check), so during validation its results land in that slot
 * and a later "All" subrequest can read them: ksched does the same. The
 * cache is cleared before allocating, as upstream remakes it then. */
static int validate(run *r, size_t claim, reqdata *rd, const ks_device_subrequest *req, const ks_device_request *parent,
                    const char *name, bool has_admin, bool admin, uint32_t vkey) {
    char buf[600];
    rd->req = req;
    rd->parent = parent;
    rd->name = name;
    rd->admin = admin;
    for (uint32_t i = 0; i < req->nselectors; i++)
        if (!req->selectors[i])
            return fail(r, "claim %s, request %s, selector #%u: CEL expression empty (unsupported selector type?)",
                        cref(r, claim, buf, sizeof buf), name, i);
    if (!r->al->f.admin_access && has_admin)
        return fail(r, "claim %s, request %s: admin access is requested, but the feature is disabled",
                    cref(r, claim, buf, sizeof buf), name);
    if (!*req->device_class)
        return fail(r, "claim %s, request %s: missing device class name (unsupported request type?)",
                    cref(r, claim, buf, sizeof buf), name);
    rd->cls = find_class(r, req->device_class);
    if (!rd->cls)
        return fail(r, "claim %s, request %s: could not retrieve device class %s: deviceclass.resource.k8s.io \"%s\" not found",
                    cref(r, claim, buf, sizeof buf), name, req->device_class, req->device_class);
    rd->class_sel = compile_all(r, rd->cls->selectors, rd->cls->nselectors);
    rd->req_sel = compile_all(r, req->selectors, req->nselectors);
    if (req->bad_mode)
        return fail(r, "claim %s, request %s: unsupported count mode %s", cref(r, claim, buf, sizeof buf), name,
                    req->mode_text);
    if (req->mode == KS_ALLOC_EXACT_COUNT) {
        rd->num_devices = req->count > 1000000000 ? 1000000000 : (int)req->count;
        return 0;
    }
    /* "All": every matching device now, from complete and valid pools only */
    rd->all = ks_arena_calloc(r->a, r->ndevs ? r->ndevs : 1, sizeof(uint32_t));
    for (uint32_t p = 0; p < r->npools; p++) {
        const pool *pl = &r->pools[p];
        if (pl->incomplete)
            return fail(r, "claim %s, request %s: asks for all devices, but resource pool %s/%s is currently being updated",
                        cref(r, claim, buf, sizeof buf), name, pl->driver, pl->name);
        if (pl->invalid)
            return fail(r, "claim %s, request %s: asks for all devices, but resource pool %s/%s is currently invalid",
                        cref(r, claim, buf, sizeof buf), name, pl->driver, pl->name);
        for (uint32_t d = pl->first_dev; d < pl->first_dev + pl->ndevs; d++) {
            int s = is_selectable(r, claim, rd, d, vkey);
            if (s < 0) return s;
            if (s && r->al->f.consumable_capacity && cmp_capacity(r, &r->devs[d], req) <= 0) continue;
            if (s) rd->all[rd->nall++] = d;
        }
    }
    rd->num_devices = (int)rd->nall;
    return 0;
}

/* ---- constraints --------------------------------------------------------------------------- */

static bool cons_applies(const constraint *c, const char *base, const char *sub) {
    if (!c->nrequests) return true;
    for (uint32_t i = 0; i < c->nrequests; i++) {
        const char *n = c->requests[i];
        if (strcmp(n, base) == 0) return true;
        if (sub) {
            size_t bl = strlen(base);
            if (strncmp(n, base, bl) == 0 && n[bl] == '/' && strcmp(n + bl + 1, sub) == 0) return true;
        }
    }
    return false;
}

static bool attr_equal(const ks_cel_attr *a, const ks_cel_attr *b) {
    switch (a->kind) {
    case KS_CEL_ATTR_STRING: return b->kind == KS_CEL_ATTR_STRING && strcmp(a->s, b->s) == 0;
    case KS_CEL_ATTR_INT: return b->kind == KS_CEL_ATTR_INT && a->i == b->i;
    case KS_CEL_ATTR_BOOL: return b->kind == KS_CEL_ATTR_BOOL && a->b == b->b;
    /* versions are minimal semver text: a string comparison */
    case KS_CEL_ATTR_VERSION: return b->kind == KS_CEL_ATTR_VERSION && strcmp(a->s, b->s) == 0;
    default: return false;
    }
}

/* distinctAttribute's map: the entry of request name req, or -1 */
static int m_find(const constraint *c, const char *req) {
    for (uint32_t i = 0; i < c->nm; i++)
        if (strcmp(c->m_req[i], req) == 0) return (int)i;
    return -1;
}

static bool cons_add(constraint *c, const char *base, const char *sub, const ks_device *dev) {
    if (!cons_applies(c, base, sub)) return true;
    const ks_cel_attr *at = ks_device_attribute(dev, c->attr);
    if (!at) return false;
    if (c->distinct) {
        /* Upstream compares the values' addresses, so only the same
         * device's value collides: with a device a request already holds
         * in the map (one entry per request name, the last added) */
        if (c->num > 0)
            for (uint32_t i = 0; i < c->nm; i++)
                if (c->m_dev[i] == dev) return false;
        int k = m_find(c, base);
        if (k < 0) {
            k = (int)c->nm++;
            c->m_req[k] = base;
        }
        c->m_dev[k] = dev;
        c->num = c->num ? c->num + 1 : 1;
        return true;
    }
    if (c->num == 0) {
        c->value = at;
        c->num = 1;
        return true;
    }
    if (!attr_equal(at, c->value)) return false;
    c->num++;
    return true;
}

static void cons_remove(constraint *c, const char *base, const char *sub) {
    if (!cons_applies(c, base, sub)) return;
    if (c->distinct) {
        int k = m_find(c, base);
        if (k >= 0) {
            c->m_req[k] = c->m_req[c->nm - 1];
            c->m_dev[k] = c->m_dev[c->nm - 1];
            c->nm--;
        }
    }
    c->num--;
}

/* ---- the search ---------------------------------------------------------------------------- */

typedef struct idx {
    uint32_t claim, request, sub, device;
} idx;

static reqdata *rd_of(run *r, uint32_t claim, uint32_t request, uint32_t sub) {
    return &r->cr[claim].rd[request][sub];
}

static const char *dev_id(run *r, uint32_t di, char *buf, size_t n) {
    const devref *d = &r->devs[di];
    snprintf(buf, n, "%s/%s/%s", d->slice->driver, d->slice->pool, d->dev->name);
    return buf;
}

/* ---- counters (DRAPartitionableDevices) ------------------------------------------------- */

/* The set of a slice's shared counters named name: the last of that name,
 * as upstream's map keeps it; -1 when none. */
static int counter_set(const ks_resource_slice *s, const char *name) {
    int k = -1;
    for (uint32_t i = 0; i < s->nshared_counters; i++)
        if (strcmp(s->shared_counters[i].name, name) == 0) k = (int)i;
    return k;
}

static int counter_in(const ks_counter_set *set, const char *name) {
    for (uint32_t i = 0; i < set->ncounters; i++)
        if (strcmp(set->counters[i].name, name) == 0) return (int)i;
    return -1;
}

/* Add (sign 1) or take back (-1) what dev consumes into v. */
static void consume(const slice_counters *c, const ks_device *dev, __int128 *v, int sign) {
    const ks_resource_slice *s = c->slice;
    for (uint32_t e = 0; e < dev->nconsumes; e++) {
        const ks_counter_set *use = &dev->consumes[e];
        int k = counter_set(s, use->name);
        if (k < 0) continue;
        for (uint32_t j = 0; j < use->ncounters; j++) {
            int i = counter_in(&s->shared_counters[k], use->counters[j].name);
            if (i >= 0) v[c->first[k] + (uint32_t)i] += sign * use->counters[j].nano;
        }
    }
}

/* The slice's counters: what its shared counters hold less what its
 * allocated devices consume (upstream caches this per slice; it only
 * depends on the slice and the allocated devices). */
static slice_counters *counters_of(run *r, const ks_resource_slice *s) {
    for (slice_counters *c = r->counters; c; c = c->next)
        if (c->slice == s) return c;
    slice_counters *c = ks_arena_calloc(r->a, 1, sizeof(*c));
    c->slice = s;
    c->first = ks_arena_calloc(r->a, s->nshared_counters + 1, sizeof(uint32_t));
    uint32_t total = 0;
    for (uint32_t k = 0; k < s->nshared_counters; k++) {
        c->first[k] = total;
        total += s->shared_counters[k].ncounters;
    }
    c->first[s->nshared_counters] = total;
    c->avail = ks_arena_calloc(r->a, total ? total : 1, sizeof(__int128));
    c->consumed = ks_arena_calloc(r->a, total ? total : 1, sizeof(__int128));
    for (uint32_t k = 0; k < s->nshared_counters; k++)
        for (uint32_t j = 0; j < s->shared_counters[k].ncounters; j++)
            c->avail[c->first[k] + j] = s->shared_counters[k].counters[j].nano;
    for (uint32_t d = 0; d < s->ndevices; d++)
        if (ks_dra_device_set_has_hash(r->al->allocated, s->devices[d].id_hash))
            consume(c, &s->devices[d], c->avail, -1);
    c->next = r->counters;
    r->counters = c;
    return c;
}

/* upstream checkAvailableCounters: the device's consumption is added to
 * what the run consumes and stays there when it fits. */
static bool check_counters(run *r, const devref *d) {
    slice_counters *c = counters_of(r, d->slice);
    consume(c, d->dev, c->consumed, 1);
    uint32_t total = c->first[d->slice->nshared_counters];
    for (uint32_t i = 0; i < total; i++)
        if (c->avail[i] < c->consumed[i]) {
            consume(c, d->dev, c->consumed, -1);
            return false;
        }
    return true;
}

/* ---- taints (DRADeviceTaints) --------------------------------------------------------- */

static bool tolerated(const ks_device_subrequest *req, const ks_device_taint *t) {
    for (uint32_t i = 0; i < req->ntolerations; i++)
        if (ks_device_toleration_tolerates(&req->tolerations[i], t)) return true;
    return false;
}

/* upstream allTaintsTolerated over the patched slice's device: its own
 * taints and those of the rules */
static bool all_taints_tolerated(const devref *d, const ks_device_subrequest *req) {
    for (uint32_t i = 0; i < d->dev->ntaints; i++)
        if (!tolerated(req, &d->dev->taints[i])) return false;
    for (uint32_t i = 0; d->rule_taints && i < d->rule_taints->n; i++)
        if (!tolerated(req, d->rule_taints->v[i])) return false;
    return true;
}

/* ---- consumable capacity (DRAConsumableCapacity) --------------------------------------- */

/* resource.Quantity.Value(): whole units, rounded up. */
static int64_t q_value(const ks_quantity *q) {
    int64_t v = 0;
    if (!ks_nano_to_value(q->nano, &v)) v = q->nano < 0 ? INT64_MIN : INT64_MAX;
    return v;
}

static ks_quantity q_units(int64_t v) {
    return (ks_quantity){.nano = (__int128)v * KS_NANO_PER_UNIT, .format = KS_QFMT_BINARY_SI};
}

/* upstream roundUpRange */
static ks_quantity round_up_range(const ks_quantity *req, const ks_capacity_policy *p) {
    if (req->nano < p->min.nano) return p->min;
    if (!p->has_step) return *req;
    int64_t step = q_value(&p->step), min = q_value(&p->min);
    if (step == 0) return *req;
    int64_t added = q_value(req) - min, n = added / step;
    if (added % step) n++;
    return q_units(min + step * n);
}

/* upstream calculateConsumedCapacity: what a request (NULL: none) takes
 * of a capacity under its policy */
static ks_quantity consumed_of(const ks_quantity *req, const ks_quantity *value, const ks_capacity_policy *p) {
    if (!req) return p && p->has_default ? p->def : *value;
    if (!p) return *req;
    if (p->has_range && p->has_min) return round_up_range(req, p);
    if (p->nvalid) {
        for (uint32_t i = 0; i < p->nvalid; i++)
            if (req->nano <= p->valid[i].nano) return p->valid[i];
        return *req;
    }
    return *req;
}

/* upstream violatesPolicy */
static bool violates(const ks_quantity *v, const ks_capacity_policy *p) {
    if (!p) return false;
    if (p->has_default && v->nano == p->def.nano) return false;
    if (p->has_range) {
        if (p->has_max && v->nano > p->max.nano) return true;
        if (p->has_step) {
            int64_t step = q_value(&p->step);
            if (step && (q_value(v) - q_value(&p->min)) % step != 0) return true;
        }
        return false;
    }
    if (p->nvalid) {
        for (uint32_t i = 0; i < p->nvalid; i++)
            if (v->nano == p->valid[i].nano) return false;
        return true;
    }
    return false;
}

static const ks_quantity *requested(const ks_device_subrequest *req, const char *name) {
    for (uint32_t i = 0; i < req->ncap_requests; i++)
        if (strcmp(req->cap_requests[i].name, name) == 0) return &req->cap_requests[i].q;
    return NULL;
}

static void cap_ready(run *r, devref *d) {
    if (d->cap_allocated) return;
    uint32_t n = d->dev->cel.ncaps;
    d->cap_allocated = ks_arena_calloc(r->a, n ? n : 1, sizeof(__int128));
    d->cap_allocating = ks_arena_calloc(r->a, n ? n : 1, sizeof(__int128));
    for (uint32_t k = 0; k < n; k++)
        d->cap_allocated[k] = ks_dra_capacities_get(r->al->caps, d->dev->id_hash, d->dev->cel.caps[k].name);
}

/* upstream CmpRequestOverCapacity: -1 the request names a capacity the
 * device lacks, 0 over capacity or against a policy, 1 fits */
static int cmp_capacity(run *r, devref *d, const ks_device_subrequest *req) {
    const ks_device *dev = d->dev;
    for (uint32_t i = 0; i < req->ncap_requests; i++) {
        bool found = false;
        for (uint32_t k = 0; k < dev->cel.ncaps && !found; k++)
            found = strcmp(dev->cel.caps[k].name, req->cap_requests[i].name) == 0;
        if (!found) return -1;
    }
    cap_ready(r, d);
    for (uint32_t k = 0; k < dev->cel.ncaps; k++) {
        const ks_capacity_policy *p = dev->cap_policies ? dev->cap_policies[k] : NULL;
        ks_quantity c = consumed_of(requested(req, dev->cel.caps[k].name), &dev->cap_values[k], p);
        if (violates(&c, p)) return 0;
        if (d->cap_allocated[k] + c.nano + d->cap_allocating[k] > dev->cap_values[k].nano) return 0;
    }
    return 1;
}

/* A share's ID: upstream makes a random (time-based) UUID; ksched
 * derives one from the claim, the request, the device and the result's
 * position, so that a simulation prints the same each time. */
static const char *share_id(run *r, uint32_t claim, const char *request, uint32_t di, uint32_t pos) {
    const ks_resource_claim *c = r->claims[claim];
    const devref *d = &r->devs[di];
    uint64_t h1 = ks_device_id_hash(ks_str(c->ns), ks_str(c->name), request);
    uint64_t h2 = ks_device_id_hash(d->slice->driver, d->slice->pool, d->dev->name) ^ ((uint64_t)pos * 0x9e3779b97f4a7c15ULL);
    return ks_arena_printf(r->a, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(h1 >> 32), (unsigned)(h1 >> 16) & 0xffff,
                           (unsigned)h1 & 0xfff, (unsigned)(0x8000 | ((h2 >> 48) & 0x3fff)),
                           (unsigned long long)(h2 & 0xffffffffffffULL));
}

/* 1 allocated, 0 not usable, R_ERROR. As upstream, counters a device took
 * stay consumed when its taints or the constraints refuse it, and a device
 * refused for its capacity stays in use and in the constraints. */
static int allocate_device(run *r, idx ix, uint32_t di, bool must) {
    reqdata *rd = rd_of(r, ix.claim, ix.request, ix.sub);
    devref *d = &r->devs[di];
    uint64_t bit = 1ull << ix.claim;
    bool multi = r->al->f.consumable_capacity && d->dev->cel.allow_multiple_allocations;
    if (!multi && rd->admin && (d->allocating & bit)) return 0;
    if (!rd->admin && (d->allocated || d->allocating)) return 0;
    if (!r->al->f.partitionable_devices && d->dev->nconsumes) return 0;
    if (d->dev->nconsumes && !check_counters(r, d)) return 0;
    const char *base = rd->parent ? rd->parent->name : rd->name;
    const char *sub = rd->parent ? rd->name : NULL;
    if (r->al->f.device_taints && !all_taints_tolerated(d, rd->req)) return 0;
    constraint *cs = r->cons[ix.claim];
    for (uint32_t i = 0; i < r->ncons[ix.claim]; i++) {
        if (!cons_add(&cs[i], base, sub, d->dev)) {
            if (must) {
                char b1[600], b2[600];
                return fail(r, "claim %s, request %s: cannot add device %s because a claim constraint would not be satisfied",
                            cref(r, ix.claim, b1, sizeof b1), rd->name, dev_id(r, di, b2, sizeof b2));
            }
            for (uint32_t e = 0; e < i; e++) cons_remove(&cs[e], base, sub);
            return 0;
        }
    }
    if (!multi) d->allocating |= bit;
    ks_quantity *consumed = NULL;
    if (r->al->f.consumable_capacity) {
        /* Upstream checks here the device of the slice at the position of
         * this device within the request (r.deviceIndex), not the device
         * itself; beyond the slice's devices it panics, ksched refuses. */
        uint32_t at = (uint32_t)(d->dev - d->slice->devices);
        if (ix.device >= d->slice->ndevices) return 0;
        devref *checked = d + ((int64_t)ix.device - (int64_t)at);
        if (cmp_capacity(r, checked, rd->req) <= 0) return 0;
        cap_ready(r, d);
        if (multi) {
            /* upstream GetConsumedCapacityFromRequest: every capacity of
             * the device, requested or filled in */
            uint32_t n = d->dev->cel.ncaps;
            consumed = ks_arena_calloc(r->a, n ? n : 1, sizeof(ks_quantity));
            for (uint32_t k = 0; k < n; k++) {
                const ks_capacity_policy *p = d->dev->cap_policies ? d->dev->cap_policies[k] : NULL;
                consumed[k] = consumed_of(requested(rd->req, d->dev->cel.caps[k].name), &d->dev->cap_values[k], p);
                d->cap_allocating[k] += consumed[k].nano;
            }
        }
    }
    claim_result *res = &r->res[ix.claim];
    res->v[res->n++] =
        (result_dev){rd->name, rd->parent ? rd->parent->name : NULL, di, rd->admin, multi, consumed};
    return 1;
}

static void deallocate(run *r, idx ix, uint32_t di) {
    reqdata *rd = rd_of(r, ix.claim, ix.request, ix.sub);
    const char *base = rd->parent ? rd->parent->name : rd->name;
    const char *sub = rd->parent ? rd->name : NULL;
    constraint *cs = r->cons[ix.claim];
    for (uint32_t i = 0; i < r->ncons[ix.claim]; i++) cons_remove(&cs[i], base, sub);
    devref *d = &r->devs[di];
    d->allocating &= ~(1ull << ix.claim);
    const result_dev *last = &r->res[ix.claim].v[r->res[ix.claim].n - 1];
    if (last->shared) {
        /* a share gives back its capacity (upstream keeps its counters) */
        for (uint32_t k = 0; last->consumed && k < d->dev->cel.ncaps; k++) d->cap_allocating[k] -= last->consumed[k].nano;
    } else if (r->al->f.partitionable_devices && d->dev->nconsumes) {
        slice_counters *c = counters_of(r, d->slice);
        consume(c, d->dev, c->consumed, -1);
    }
    r->res[ix.claim].n--;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int allocate_one(run *r, idx ix, bool sub_call) {
    if ((++r->steps & 255) == 0 && r->deadline && now_ns() > r->deadline) return R_TIMEOUT;
    if (ix.claim >= r->nclaims) return R_DONE;
    const ks_resource_claim *claim = r->claims[ix.claim];
    if (ix.request >= claim->nrequests) {
        int rc = allocate_one(r, (idx){ix.claim + 1, 0, 0, 0}, false);
        return rc == R_EXCEEDED ? R_NOT : rc;
    }
    claim_reqs *cr = &r->cr[ix.claim];
    reqdata *rd = rd_of(r, ix.claim, ix.request, ix.sub);
    if (!sub_call && rd->parent) {
        bool all_exceeded = true;
        for (uint32_t si = 0;; si++) {
            if (si >= cr->nsub[ix.request]) return all_exceeded ? R_EXCEEDED : R_NOT;
            idx s = ix;
            s.sub = si;
            int rc = allocate_one(r, s, true);
            if (rc == R_EXCEEDED) continue;
            all_exceeded = false;
            if (rc < 0) return rc;
            if (rc == R_DONE) {
                cr->selected[ix.request] = (int)si;
                return R_DONE;
            }
        }
    }
    bool all = rd->req->mode == KS_ALLOC_ALL;
    if (all && rd->nall == 0) return R_NOT;
    if ((int)ix.device >= rd->num_devices) return allocate_one(r, (idx){ix.claim, ix.request + 1, 0, 0}, false);
    if ((int)r->res[ix.claim].n + rd->num_devices - (int)ix.device > KS_DRA_ALLOCATION_RESULTS_MAX) return R_EXCEEDED;
    if (all) {
        uint32_t di = rd->all[ix.device];
        int ok = allocate_device(r, ix, di, true);
        if (ok <= 0) return ok;
        /* upstream continues with the first subrequest's data here */
        int rc = allocate_one(r, (idx){ix.claim, ix.request, 0, ix.device + 1}, sub_call);
        if (rc != R_DONE) {
            deallocate(r, ix, di);
            return rc == R_NOT ? R_NOT : rc;
        }
        return R_DONE;
    }
    for (uint32_t p = 0; p < r->npools; p++) {
        const pool *pl = &r->pools[p];
        if (pl->invalid) return fail(r, "pool %s is invalid: %s", pl->name, pl->invalid_reason);
        for (uint32_t di = pl->first_dev; di < pl->first_dev + pl->ndevs; di++) {
            devref *d = &r->devs[di];
            if (rd->admin && (d->allocating & (1ull << ix.claim))) continue;
            if (!rd->admin && (d->allocated || d->allocating)) continue;
            int s = is_selectable(r, ix.claim, rd, di, rd->key);
            if (s < 0) return s;
            if (!s) continue;
            if (r->al->f.consumable_capacity && cmp_capacity(r, d, rd->req) <= 0) continue;
            int ok = allocate_device(r, ix, di, false);
            if (ok < 0) return ok;
            if (!ok) continue;
            int rc = allocate_one(r, (idx){ix.claim, ix.request, ix.sub, ix.device + 1}, sub_call);
            if (rc == R_DONE) return R_DONE;
            deallocate(r, ix, di);
            if (rc < 0) return rc;
        }
    }
    return R_NOT;
}

/* ---- results ------------------------------------------------------------------------------- */

static bool has_str(const char *const *v, uint32_t n, const char *s) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0) return true;
    return false;
}

static void push_config(ks_arena *a, ks_allocation_result *out, uint32_t *cap, const ks_device_config *c, bool from_class) {
    if (out->nconfig == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 4;
        ks_device_config *v = ks_arena_calloc(a, nc, sizeof(*v));
        if (out->nconfig) memcpy(v, out->config, out->nconfig * sizeof(*v));
        out->config = v;
        *cap = nc;
    }
    ks_device_config *x = &out->config[out->nconfig++];
    *x = *c;
    x->from_class = from_class;
    if (from_class) {
        x->nrequests = 0; /* all of them */
        x->requests = NULL;
    }
}

static bool same_req(const ks_requirement *a, const ks_requirement *b) {
    if (a->key != b->key || a->op != b->op || a->nvalues != b->nvalues) return false;
    for (uint32_t i = 0; i < a->nvalues; i++) /* values are sorted */
        if (a->values[i] != b->values[i]) return false;
    return true;
}

static void merge_reqs(ks_arena *a, const ks_requirement *from, uint32_t n, ks_requirement **to, uint32_t *nto,
                       uint32_t *cap) {
    for (uint32_t i = 0; i < n; i++) {
        bool dup = false;
        for (uint32_t k = 0; k < *nto && !dup; k++) dup = same_req(&(*to)[k], &from[i]);
        if (dup) continue;
        if (*nto == *cap) {
            uint32_t nc = *cap ? *cap * 2 : 4;
            ks_requirement *v = ks_arena_calloc(a, nc, sizeof(*v));
            if (*nto) memcpy(v, *to, *nto * sizeof(*v));
            *to = v;
            *cap = nc;
        }
        (*to)[(*nto)++] = from[i];
    }
}

static int node_selector(run *r, size_t ci, ks_allocation_result *out) {
    const claim_result *res = &r->res[ci];
    ks_node_selector_term t;
    memset(&t, 0, sizeof(t));
    uint32_t cap_e = 0, cap_f = 0;
    for (uint32_t i = 0; i < res->n; i++) {
        const devref *d = &r->devs[res->v[i].dev];
        const ks_resource_slice *s = d->slice;
        ks_id node_name = s->per_device_node_selection ? d->dev->node_name : s->node_name;
        bool has_sel = s->per_device_node_selection ? d->dev->has_node_selector : s->has_node_selector;
        const ks_node_selector *sel = s->per_device_node_selection ? &d->dev->node_selector : &s->node_selector;
        if (node_name != KS_ID_NONE || d->dev->binds_to_node) {
            /* a node-local device, or one that binds to the node, pins
             * the claim to the node */
            ks_node_selector_term *nt = ks_arena_alloc(r->a, sizeof(*nt));
            nt->fields = ks_arena_alloc(r->a, sizeof(ks_requirement));
            nt->nfields = 1;
            nt->fields[0].key = KS_FIELD_METADATA_NAME;
            nt->fields[0].op = KS_OP_IN;
            nt->fields[0].nvalues = 1;
            nt->fields[0].values = ks_arena_alloc(r->a, sizeof(ks_id));
            nt->fields[0].values[0] = r->node->name;
            out->has_node_selector = true;
            out->node_selector.nterms = 1;
            out->node_selector.terms = nt;
            return 0;
        }
        if (has_sel) {
            if (sel->nterms == 1) {
                merge_reqs(r->a, sel->terms[0].fields, sel->terms[0].nfields, &t.fields, &t.nfields, &cap_f);
                merge_reqs(r->a, sel->terms[0].exprs, sel->terms[0].nexpr, &t.exprs, &t.nexpr, &cap_e);
            } else if (sel->nterms > 1) {
                return fail(r, "create NodeSelector for claim %s: unsupported ResourceSlice.NodeSelector with %u terms",
                            ks_str(r->claims[ci]->name), sel->nterms);
            }
        }
    }
    if (t.nfields || t.nexpr) {
        ks_node_selector_term *nt = ks_arena_alloc(r->a, sizeof(*nt));
        *nt = t;
        out->has_node_selector = true;
        out->node_selector.nterms = 1;
        out->node_selector.terms = nt;
    }
    return 0;
}

static int assemble(run *r, ks_arena *a, ks_allocation_result *out) {
    for (size_t ci = 0; ci < r->nclaims; ci++) {
        const ks_resource_claim *claim = r->claims[ci];
        const claim_result *res = &r->res[ci];
        ks_allocation_result *o = &out[ci];
        memset(o, 0, sizeof(*o));
        o->nresults = res->n;
        o->results = ks_arena_calloc(a, res->n ? res->n : 1, sizeof(ks_device_result));
        for (uint32_t i = 0; i < res->n; i++) {
            const result_dev *rd = &res->v[i];
            const devref *d = &r->devs[rd->dev];
            ks_device_result *x = &o->results[i];
            x->request = rd->parent ? ks_arena_printf(a, "%s/%s", rd->parent, rd->request) : ks_arena_strdup(a, rd->request);
            x->driver = ks_arena_strdup(a, d->slice->driver);
            x->pool = ks_arena_strdup(a, d->slice->pool);
            x->device = ks_arena_strdup(a, d->dev->name);
            x->id_hash = d->dev->id_hash;
            x->has_admin_access = rd->admin;
            x->admin_access = rd->admin;
            if (rd->shared) {
                x->share_id = ks_arena_strdup(a, share_id(r, (uint32_t)ci, x->request, rd->dev, i));
                uint32_t nc = d->dev->cel.ncaps;
                if (nc) {
                    x->consumed = ks_arena_calloc(a, nc, sizeof(ks_named_quantity));
                    for (uint32_t k = 0; k < nc; k++)
                        x->consumed[x->nconsumed++] =
                            (ks_named_quantity){ks_arena_strdup(a, d->dev->cel.caps[k].name), rd->consumed[k]};
                }
            }
        }
        uint32_t cap = 0;
        const claim_reqs *cr = &r->cr[ci];
        for (uint32_t q = 0; q < claim->nrequests; q++) {
            const reqdata *rd = &cr->rd[q][cr->nsub[q] ? cr->selected[q] : 0];
            if (!rd->cls) continue;
            for (uint32_t k = 0; k < rd->cls->nconfig; k++) push_config(a, o, &cap, &rd->cls->config[k], true);
        }
        for (uint32_t k = 0; k < claim->nconfig; k++) {
            const ks_device_config *c = &claim->config[k];
            if (!c->nrequests) {
                push_config(a, o, &cap, c, false);
                continue;
            }
            for (uint32_t q = 0; q < claim->nrequests; q++) {
                const ks_device_request *req = &claim->requests[q];
                if (has_str(c->requests, c->nrequests, req->name)) {
                    push_config(a, o, &cap, c, false);
                    continue;
                }
                if (!cr->nsub[q]) continue;
                const ks_device_subrequest *sr = &req->first[cr->selected[q]];
                char full[600];
                snprintf(full, sizeof full, "%s/%s", req->name, sr->name);
                if (has_str(c->requests, c->nrequests, full)) push_config(a, o, &cap, c, false);
            }
        }
        if (node_selector(r, ci, o) < 0) return R_ERROR;
        /* the node selector's strings live in the run's arena: copy them */
        if (o->has_node_selector) {
            ks_allocation_result tmp = *o;
            ks_allocation_result *cp = ks_allocation_copy(a, &tmp);
            o->node_selector = cp->node_selector;
        }
    }
    return 0;
}

/* ---- entry point ------------------------------------------------------------------------------ */

static void release_run(run *r) {
    if (!r->cr) return;
    for (size_t ci = 0; ci < r->nclaims; ci++) {
        claim_reqs *cr = &r->cr[ci];
        if (!cr->rd) continue;
        for (uint32_t q = 0; q < cr->nreqs; q++) {
            if (!cr->rd[q]) continue;
            uint32_t ns = cr->nsub[q] ? cr->nsub[q] : 1;
            for (uint32_t s = 0; s < ns; s++) {
                reqdata *rd = &cr->rd[q][s];
                if (rd->class_sel) release_all(rd->class_sel, rd->cls->nselectors);
                if (rd->req_sel) release_all(rd->req_sel, rd->req->nselectors);
            }
        }
    }
}

ks_dra_outcome ks_dra_allocate(ks_dra_allocator *al, const ks_node *node, const ks_resource_claim *const *claims,
                               size_t n, ks_arena *out_arena, ks_allocation_result *out, int64_t deadline_ns,
                               char **err) {
    *err = NULL;
    run rr, *r = &rr;
    memset(r, 0, sizeof(*r));
    r->al = al;
    r->node = node;
    r->claims = claims;
    r->nclaims = n;
    r->deadline = deadline_ns;
    r->a = ks_arena_new(16384);
    r->ctx = ks_dra_cel_ctx_get(al->cache);
    ks_dra_outcome outcome = KS_DRA_UNSCHEDULABLE;
    if (n > 64) {
        fail(r, "cannot allocate more than 64 claims of one pod");
        goto error;
    }
    gather_pools(r);
    r->cr = ks_arena_calloc(r->a, n ? n : 1, sizeof(claim_reqs));
    r->cons = ks_arena_calloc(r->a, n ? n : 1, sizeof(constraint *));
    r->ncons = ks_arena_calloc(r->a, n ? n : 1, sizeof(uint32_t));
    r->res = ks_arena_calloc(r->a, n ? n : 1, sizeof(claim_result));
    /* number the (sub)requests for the match cache */
    for (size_t ci = 0; ci < n; ci++)
        for (uint32_t q = 0; q < claims[ci]->nrequests; q++)
            r->nkeys += claims[ci]->requests[q].nfirst ? claims[ci]->requests[q].nfirst : 1;
    size_t match_size = (size_t)(r->ndevs ? r->ndevs : 1) * (r->nkeys ? r->nkeys : 1);
    r->match = ks_arena_alloc_uninit(r->a, match_size);
    memset(r->match, -1, match_size);
    uint32_t key = 0;
    for (size_t ci = 0; ci < n; ci++) {
        const ks_resource_claim *claim = claims[ci];
        claim_reqs *cr = &r->cr[ci];
        cr->nreqs = claim->nrequests;
        cr->nsub = ks_arena_calloc(r->a, claim->nrequests ? claim->nrequests : 1, sizeof(uint32_t));
        cr->rd = ks_arena_calloc(r->a, claim->nrequests ? claim->nrequests : 1, sizeof(reqdata *));
        cr->selected = ks_arena_calloc(r->a, claim->nrequests ? claim->nrequests : 1, sizeof(int));
        int min_total = 0;
        char buf[600];
        for (uint32_t q = 0; q < claim->nrequests; q++) {
            const ks_device_request *req = &claim->requests[q];
            bool subs = req->nfirst > 0;
            if (!al->f.prioritized_list && subs) {
                fail(r, "claim %s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled",
                     cref(r, ci, buf, sizeof buf), req->name);
                goto error;
            }
            if (!al->f.consumable_capacity) {
                bool cap = req->has_exactly && req->exactly.has_capacity;
                for (uint32_t k = 0; k < req->nfirst; k++) cap |= req->first[k].has_capacity;
                if (cap) {
                    fail(r, "claim %s, request %s: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                         cref(r, ci, buf, sizeof buf), req->name);
                    goto error;
                }
            }
            if (subs) {
                cr->nsub[q] = req->nfirst;
                cr->rd[q] = ks_arena_calloc(r->a, req->nfirst, sizeof(reqdata));
                int min = -1;
                for (uint32_t k = 0; k < req->nfirst; k++) {
                    reqdata *rd = &cr->rd[q][k];
                    rd->key = key++;
                    if (validate(r, ci, rd, &req->first[k], req, req->first[k].name, false, false,
                                 k ? rd->key - 1 : rd->key) < 0)
                        goto error;
                    if (min < 0 || rd->num_devices < min) min = rd->num_devices;
                }
                min_total += min;
            } else {
                cr->rd[q] = ks_arena_calloc(r->a, 1, sizeof(reqdata));
                reqdata *rd = &cr->rd[q][0];
                rd->key = key++;
                if (!req->has_exactly) {
                    fail(r, "claim %s, request %s: missing device class name (unsupported request type?)",
                         cref(r, ci, buf, sizeof buf), req->name);
                    goto error;
                }
                if (validate(r, ci, rd, &req->exactly, NULL, req->name, req->has_admin_access,
                             req->has_admin_access && req->admin_access, rd->key) < 0)
                    goto error;
                min_total += rd->num_devices;
            }
        }
        if (min_total > KS_DRA_ALLOCATION_RESULTS_MAX) {
            fail(r, "claim %s: number of requested devices %d exceeds the claim limit of %d", cref(r, ci, buf, sizeof buf),
                 min_total, KS_DRA_ALLOCATION_RESULTS_MAX);
            goto error;
        }
        r->ncons[ci] = claim->nconstraints;
        r->cons[ci] = ks_arena_calloc(r->a, claim->nconstraints ? claim->nconstraints : 1, sizeof(constraint));
        for (uint32_t k = 0; k < claim->nconstraints; k++) {
            const ks_device_constraint *dc = &claim->constraints[k];
            constraint *c = &r->cons[ci][k];
            c->nrequests = dc->nrequests;
            c->requests = dc->requests;
            if (dc->match_attribute) {
                c->attr = dc->match_attribute;
            } else if (dc->distinct_attribute) {
                c->distinct = true;
                c->attr = dc->distinct_attribute;
                c->m_req = ks_arena_calloc(r->a, claim->nrequests + 1, sizeof(char *));
                c->m_dev = ks_arena_calloc(r->a, claim->nrequests + 1, sizeof(ks_device *));
            } else {
                fail(r, "claim %s, constraint #%u: empty constraint (unsupported constraint type?)",
                     cref(r, ci, buf, sizeof buf), k);
                goto error;
            }
        }
    }
    /* Upstream makes its match cache anew once every claim is validated:
     * what the "All" checks wrote under a neighbour's key (see validate)
     * must not answer for that neighbour while allocating. */
    memset(r->match, -1, match_size);
    int rc = allocate_one(r, (idx){0, 0, 0, 0}, false);
    if (rc == R_EXCEEDED) fail(r, "allocation max size exceeded");
    if (rc == R_TIMEOUT) {
        outcome = KS_DRA_TIMEOUT;
    } else if (rc == R_DONE) {
        outcome = assemble(r, out_arena, out) < 0 ? KS_DRA_ERROR : KS_DRA_ALLOCATED;
    } else if (rc < 0) {
        goto error;
    }
    if (outcome == KS_DRA_ERROR) goto error;
    release_run(r);
    ks_dra_cel_ctx_put(al->cache, r->ctx);
    ks_arena_free(r->a);
    return outcome;
error:
    release_run(r);
    ks_dra_cel_ctx_put(al->cache, r->ctx);
    ks_arena_free(r->a);
    *err = r->err ? r->err : ks_xstrdup("allocation failed");
    return KS_DRA_ERROR;
}
