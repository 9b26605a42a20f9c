#include "plugins/helper/topocount.h"
#include "framework/handle.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- serial table ------------------------------------------------------ */

static uint32_t cap_for(uint32_t n) {
    uint32_t cap = 16;
    /* keep the load at or below 3/4 */
    while ((uint64_t)cap * 3 < (uint64_t)n * 4) cap <<= 1;
    return cap;
}

void ks_pairtab_init(ks_pairtab *t, uint32_t expected) {
    memset(t, 0, sizeof(*t));
    if (expected) {
        t->cap = cap_for(expected);
        t->keys = ks_xcalloc(t->cap, sizeof(*t->keys));
        t->vals = ks_xcalloc(t->cap, sizeof(*t->vals));
    }
}

void ks_pairtab_free(ks_pairtab *t) {
    free(t->keys);
    free(t->vals);
    memset(t, 0, sizeof(*t));
}

void ks_pairtab_copy(ks_pairtab *dst, const ks_pairtab *src) {
    *dst = *src;
    if (!src->cap) return;
    dst->keys = ks_xmalloc((size_t)src->cap * sizeof(*dst->keys));
    dst->vals = ks_xmalloc((size_t)src->cap * sizeof(*dst->vals));
    memcpy(dst->keys, src->keys, (size_t)src->cap * sizeof(*dst->keys));
    memcpy(dst->vals, src->vals, (size_t)src->cap * sizeof(*dst->vals));
}

static void rehash(ks_pairtab *t, uint32_t ncap) {
    uint64_t *ok = t->keys;
    int64_t *ov = t->vals;
    uint32_t ocap = t->cap;
    t->cap = ncap;
    t->keys = ks_xcalloc(ncap, sizeof(*t->keys));
    t->vals = ks_xcalloc(ncap, sizeof(*t->vals));
    uint32_t mask = ncap - 1;
    for (uint32_t i = 0; i < ocap; i++) {
        if (!ok[i]) continue;
        uint32_t j = (uint32_t)ks_hash_u64(ok[i]) & mask;
        while (t->keys[j]) j = (j + 1) & mask;
        t->keys[j] = ok[i];
        t->vals[j] = ov[i];
    }
    free(ok);
    free(ov);
}

static uint32_t slot_of(const ks_pairtab *t, uint64_t key, bool *found) {
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)ks_hash_u64(key) & mask;
    for (;;) {
        uint64_t k = t->keys[i];
        if (k == key) {
            *found = true;
            return i;
        }
        if (!k) {
            *found = false;
            return i;
        }
        i = (i + 1) & mask;
    }
}

int64_t ks_pairtab_add(ks_pairtab *t, uint64_t key, int64_t delta) {
    if ((uint64_t)(t->nkeys + 1) * 4 > (uint64_t)t->cap * 3) rehash(t, t->cap ? t->cap * 2 : 16);
    bool found;
    uint32_t i = slot_of(t, key, &found);
    if (!found) {
        t->keys[i] = key;
        t->vals[i] = 0;
        t->nkeys++;
    }
    int64_t old = t->vals[i], now = old + delta;
    t->vals[i] = now;
    if (old == 0 && now != 0) t->nnonzero++;
    else if (old != 0 && now == 0) t->nnonzero--;
    return now;
}

bool ks_pairtab_find(const ks_pairtab *t, uint64_t key, int64_t *val) {
    if (!t->cap) return false;
    bool found;
    uint32_t i = slot_of(t, key, &found);
    if (found && val) *val = t->vals[i];
    return found;
}

int64_t ks_pairtab_get(const ks_pairtab *t, uint64_t key) {
    int64_t v = 0;
    ks_pairtab_find(t, key, &v);
    return v;
}

void ks_pairtab_recount(ks_pairtab *t) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->keys[i] && t->vals[i]) n++;
    t->nnonzero = n;
}

/* ---- parallel fill ----------------------------------------------------- */

void ks_pairtab_par_begin(ks_pairtab_par *p, ks_pairtab *t, bool existing_only) {
    if (!t->cap) ks_pairtab_init(t, 16);
    p->t = t;
    pthread_rwlock_init(&p->lock, NULL);
    p->reserved = t->nkeys;
    p->existing_only = existing_only;
}

void ks_pairtab_par_end(ks_pairtab_par *p) { pthread_rwlock_destroy(&p->lock); }

/* Add under the read lock; the caller has reserved room for a new key.
 * Returns true when the key was inserted. */
static bool atomic_add(ks_pairtab *t, uint64_t key, int64_t delta, bool existing_only) {
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)ks_hash_u64(key) & mask;
    for (;;) {
        uint64_t k = __atomic_load_n(&t->keys[i], __ATOMIC_ACQUIRE);
        if (k == key) {
            __atomic_fetch_add(&t->vals[i], delta, __ATOMIC_RELAXED);
            return false;
        }
        if (!k) {
            if (existing_only) return false;
            /* Values of empty slots are always 0 (calloc), so the
             * winner of the race for the slot only adds. */
            uint64_t want = 0;
            if (__atomic_compare_exchange_n(&t->keys[i], &want, key, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                __atomic_fetch_add(&t->vals[i], delta, __ATOMIC_RELAXED);
                __atomic_fetch_add(&t->nkeys, 1, __ATOMIC_RELAXED);
                return true;
            }
            if (want == key) {
                __atomic_fetch_add(&t->vals[i], delta, __ATOMIC_RELAXED);
                return false;
            }
        }
        i = (i + 1) & mask;
    }
}

static void par_flush(ks_pairtab_par *p, const uint64_t *keys, const int64_t *vals, uint32_t nslots,
                      uint32_t m) {
    ks_pairtab *t = p->t;
    pthread_rwlock_rdlock(&p->lock);
    if (!p->existing_only) {
        for (;;) {
            uint32_t r = __atomic_add_fetch(&p->reserved, m, __ATOMIC_ACQ_REL);
            if ((uint64_t)r * 4 <= (uint64_t)t->cap * 3) break;
            __atomic_sub_fetch(&p->reserved, m, __ATOMIC_ACQ_REL);
            pthread_rwlock_unlock(&p->lock);
            pthread_rwlock_wrlock(&p->lock);
            /* Alone now: grow if nobody did it meanwhile. */
            if ((uint64_t)(t->nkeys + m) * 4 > (uint64_t)t->cap * 3) {
                uint32_t ncap = t->cap * 2;
                while ((uint64_t)(t->nkeys + m) * 4 > (uint64_t)ncap * 3) ncap *= 2;
                rehash(t, ncap);
            }
            p->reserved = t->nkeys;
            pthread_rwlock_unlock(&p->lock);
            pthread_rwlock_rdlock(&p->lock);
        }
    }
    uint32_t inserted = 0;
    for (uint32_t i = 0; i < nslots; i++)
        if (keys[i]) inserted += atomic_add(t, keys[i], vals[i], p->existing_only);
    if (!p->existing_only) __atomic_sub_fetch(&p->reserved, m - inserted, __ATOMIC_ACQ_REL);
    pthread_rwlock_unlock(&p->lock);
}

void ks_pairbuf_init(ks_pairbuf *b, ks_pairtab_par *dst) {
    b->dst = dst;
    b->n = 0;
    memset(b->keys, 0, sizeof(b->keys));
}

void ks_pairbuf_flush(ks_pairbuf *b) {
    if (!b->n) return;
    par_flush(b->dst, b->keys, b->vals, KS_PAIRBUF_SLOTS, b->n);
    memset(b->keys, 0, sizeof(b->keys));
    b->n = 0;
}

void ks_pairbuf_add(ks_pairbuf *b, uint64_t key, int64_t delta) {
    uint32_t mask = KS_PAIRBUF_SLOTS - 1;
    uint32_t i = (uint32_t)ks_hash_u64(key) & mask;
    for (;;) {
        if (b->keys[i] == key) {
            b->vals[i] += delta;
            return;
        }
        if (!b->keys[i]) break;
        i = (i + 1) & mask;
    }
    if (b->n == KS_PAIRBUF_MAX) {
        ks_pairbuf_flush(b);
        i = (uint32_t)ks_hash_u64(key) & mask;
    }
    b->keys[i] = key;
    b->vals[i] = delta;
    b->n++;
}

/* ---- chunked parallelism ----------------------------------------------- */

typedef struct chunk_ctx {
    size_t n, chunk;
    ks_chunk_fn fn;
    void *arg;
} chunk_ctx;

static void run_chunk(size_t i, void *arg) {
    chunk_ctx *c = arg;
    size_t lo = i * c->chunk, hi = lo + c->chunk;
    if (hi > c->n) hi = c->n;
    c->fn(lo, hi, c->arg);
}

void ks_parallel_chunks(struct ks_handle *h, size_t n, ks_chunk_fn fn, void *arg) {
    if (!n) return;
    int par = h ? ks_handle_parallelism(h) : 1;
    if (!h || par <= 1 || n < 2) {
        fn(0, n, arg);
        return;
    }
    /* Upstream's chunkSizeFor: sqrt(n), at most n/parallelism + 1. */
    size_t chunk = (size_t)sqrt((double)n);
    size_t r = n / (size_t)par + 1;
    if (chunk > r) chunk = r;
    if (chunk < 1) chunk = 1;
    chunk_ctx c = {.n = n, .chunk = chunk, .fn = fn, .arg = arg};
    ks_handle_parallelize(h, (n + chunk - 1) / chunk, run_chunk, &c);
}

/* ---- Go's math.Log ------------------------------------------------------ */

double ks_go_log(double x) {
    static const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10,
                        l1 = 6.666666666666735130e-01, l2 = 3.999999999940941908e-01,
                        l3 = 2.857142874366239149e-01, l4 = 2.222219843214978396e-01,
                        l5 = 1.818357216161805012e-01, l6 = 1.531383769920937332e-01,
                        l7 = 1.479819860511658591e-01, half_sqrt2 = 7.07106781186547524401e-01;
    if (isnan(x) || x == INFINITY) return x;
    if (x < 0) return NAN;
    if (x == 0) return -INFINITY;
    /* x = f1 * 2^k with f1 in [0.5, 1) */
    int ki;
    double f1 = frexp(x, &ki);
    double k = ki;
    if (f1 < half_sqrt2) {
        k -= 1;
        f1 *= 2;
    }
    double f = f1 - 1;
    double s = f / (2 + f);
    double s2 = s * s, s4 = s2 * s2;
    double t1 = s2 * (l1 + s4 * (l3 + s4 * (l5 + s4 * l7)));
    double t2 = s4 * (l2 + s4 * (l4 + s4 * l6));
    double r = t1 + t2;
    double hfsq = 0.5 * f * f;
    return k * ln2_hi - ((hfsq - (s * (hfsq + r) + k * ln2_lo)) - f);
}
