/* The listers: changes reach new views only, a pinned view and every
 * object in it stay valid until unpinned (ASan sees any early release),
 * and what no pin can see any more is released. */
#include "api/dra.h"
#include "backend/listers.h"
#include "util/arena.h"
#include "util/intern.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

static ks_pvc *pvc(const char *ns, const char *name, const char *cls) {
    ks_arena *a = ks_arena_new(256);
    ks_pvc *p = ks_arena_calloc(a, 1, sizeof(*p));
    p->arena = a;
    p->ns = ks_intern(ns);
    p->name = ks_intern(name);
    p->storage_class = ks_intern(cls);
    return p;
}

static ks_workload *workload(ks_workload_kind k, const char *name) {
    ks_arena *a = ks_arena_new(256);
    ks_workload *w = ks_arena_calloc(a, 1, sizeof(*w));
    w->arena = a;
    w->kind = k;
    w->ns = ks_intern("default");
    w->name = ks_intern(name);
    return w;
}

static ks_resource_claim *claim(const char *name, int version) {
    ks_arena *a = ks_arena_new(256);
    ks_resource_claim *c = ks_arena_calloc(a, 1, sizeof(*c));
    c->arena = a;
    c->ns = ks_intern("default");
    c->name = ks_intern(name);
    c->nreserved = (uint32_t)version;
    return c;
}

static ks_resource_slice *slice(const char *name) {
    ks_arena *a = ks_arena_new(256);
    ks_resource_slice *s = ks_arena_calloc(a, 1, sizeof(*s));
    s->arena = a;
    s->name = ks_intern(name);
    return s;
}

static void apply(ks_listers *l, ks_kind k, ks_watch_type t, void *old, void *nw) {
    assert_true(ks_listers_apply(l, k, t, old, nw));
}

static void test_views_and_release(void **st) {
    ks_listers *l = ks_listers_new();
    ks_pvc *v1 = pvc("default", "data", "slow");
    apply(l, KS_KIND_PVC, KS_WATCH_ADDED, NULL, v1);
    KS_OBJECT_UNREF(v1); /* the listers hold the only reference now */

    uint64_t t1;
    const ks_objects *a = ks_listers_pin(l, &t1);
    assert_int_equal(a->pvcs.n, 1);
    const ks_pvc *seen = a->pvcs.v[0];
    assert_string_equal(ks_str(seen->storage_class), "slow");

    ks_pvc *v2 = pvc("default", "data", "fast");
    apply(l, KS_KIND_PVC, KS_WATCH_MODIFIED, (void *)seen, v2);
    KS_OBJECT_UNREF(v2);
    /* the pinned view does not change */
    assert_int_equal(a->pvcs.n, 1);
    assert_ptr_equal(a->pvcs.v[0], seen);

    uint64_t t2;
    const ks_objects *b = ks_listers_pin(l, &t2);
    assert_ptr_not_equal(a, b);
    assert_string_equal(ks_str(b->pvcs.v[0]->storage_class), "fast");
    /* the old version is still readable while a is pinned */
    assert_string_equal(ks_str(seen->storage_class), "slow");
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    assert_true(stats.retired_pending >= 2); /* the old view and the old claim */

    ks_listers_unpin(l, t1);
    ks_listers_stats_get(l, &stats);
    assert_int_equal(stats.retired_pending, 0);
    assert_int_equal(stats.objects, 1);

    /* a delete reaches the next view only */
    apply(l, KS_KIND_PVC, KS_WATCH_DELETED, (void *)b->pvcs.v[0], NULL);
    assert_int_equal(b->pvcs.n, 1);
    uint64_t t3;
    const ks_objects *c = ks_listers_pin(l, &t3);
    assert_int_equal(c->pvcs.n, 0);
    ks_listers_unpin(l, t2);
    ks_listers_unpin(l, t3);
    ks_listers_free(l);
}

static void test_unchanged_view_is_shared(void **st) {
    ks_listers *l = ks_listers_new();
    uint64_t t1, t2;
    const ks_objects *a = ks_listers_pin(l, &t1);
    const ks_objects *b = ks_listers_pin(l, &t2);
    assert_ptr_equal(a, b);
    assert_int_equal(t1, t2);
    ks_listers_unpin(l, t1);
    ks_listers_unpin(l, t2);
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    assert_int_equal(stats.views, 1);
    assert_false(ks_listers_apply(l, KS_KIND_POD, KS_WATCH_ADDED, NULL, NULL));
    ks_listers_free(l);
}

/* Services and ReplicaSets of the same name are different objects. */
static void test_workload_kinds_apart(void **st) {
    ks_listers *l = ks_listers_new();
    ks_workload *s = workload(KS_WORKLOAD_SERVICE, "web"), *r = workload(KS_WORKLOAD_REPLICASET, "web");
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_ADDED, NULL, s);
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_ADDED, NULL, r);
    KS_OBJECT_UNREF(s);
    KS_OBJECT_UNREF(r);
    uint64_t t;
    const ks_objects *v = ks_listers_pin(l, &t);
    assert_int_equal(v->workloads.n, 2);
    ks_listers_unpin(l, t);
    ks_listers_free(l);
}

/* One claim updated: only the claims' vector is copied (once, however
 * many changes come before the next pin), the slices' is shared with the
 * earlier view, positions are kept, and the earlier view is unchanged. */
static void test_update_copies_its_kind_only(void **st) {
    ks_listers *l = ks_listers_new();
    char name[32];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        ks_resource_slice *s = slice(name);
        apply(l, KS_KIND_RESOURCE_SLICE, KS_WATCH_ADDED, NULL, s);
        KS_OBJECT_UNREF(s);
        snprintf(name, sizeof(name), "c%d", i);
        ks_resource_claim *c = claim(name, 0);
        apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_ADDED, NULL, c);
        KS_OBJECT_UNREF(c);
    }
    uint64_t t1, t2;
    const ks_objects *a = ks_listers_pin(l, &t1);
    assert_int_equal(a->resource_claims.n, 50);
    ks_listers_stats before, after;
    ks_listers_stats_get(l, &before);

    uint32_t at = 17;
    ks_resource_claim *old = a->resource_claims.v[at];
    for (int version = 1; version <= 3; version++) {
        ks_resource_claim *c = claim(ks_str(old->name), version);
        apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_MODIFIED, old, c);
        KS_OBJECT_UNREF(c);
    }
    ks_listers_stats_get(l, &after);
    assert_int_equal(after.copied - before.copied, 50);

    const ks_objects *b = ks_listers_pin(l, &t2);
    assert_ptr_equal(b->resource_slices.v, a->resource_slices.v);
    assert_int_equal(b->resource_slices.n, 50);
    assert_ptr_not_equal(b->resource_claims.v, a->resource_claims.v);
    assert_int_equal(b->resource_claims.n, 50);
    for (uint32_t i = 0; i < 50; i++) {
        if (i == at) continue;
        assert_ptr_equal(b->resource_claims.v[i], a->resource_claims.v[i]);
    }
    assert_int_equal(b->resource_claims.v[at]->nreserved, 3);
    assert_ptr_equal(a->resource_claims.v[at], old);
    assert_int_equal(old->nreserved, 0);
    ks_listers_unpin(l, t1);
    ks_listers_unpin(l, t2);
    ks_listers_stats_get(l, &after);
    assert_int_equal(after.retired_pending, 0);
    assert_int_equal(after.objects, 100);
    ks_listers_free(l);
}

/* A removed object's place goes to the last one, whose position is then
 * found in its own store (a ReplicaSet moving into a Service's place). */
static void test_delete_moves_last(void **st) {
    ks_listers *l = ks_listers_new();
    ks_workload *web = workload(KS_WORKLOAD_SERVICE, "web"), *db = workload(KS_WORKLOAD_SERVICE, "db");
    ks_workload *rs = workload(KS_WORKLOAD_REPLICASET, "web");
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_ADDED, NULL, web);
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_ADDED, NULL, db);
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_ADDED, NULL, rs);
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_DELETED, web, NULL);
    ks_workload *rs2 = workload(KS_WORKLOAD_REPLICASET, "web");
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_MODIFIED, rs, rs2);
    uint64_t t;
    const ks_objects *v = ks_listers_pin(l, &t);
    assert_int_equal(v->workloads.n, 2);
    assert_ptr_equal(v->workloads.v[0], rs2);
    assert_ptr_equal(v->workloads.v[1], db);
    ks_listers_unpin(l, t);
    /* deleting what is not there changes nothing */
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_DELETED, web, NULL);
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_DELETED, rs2, NULL);
    apply(l, KS_KIND_WORKLOAD, KS_WATCH_DELETED, db, NULL);
    v = ks_listers_pin(l, &t);
    assert_int_equal(v->workloads.n, 0);
    ks_listers_unpin(l, t);
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    assert_int_equal(stats.objects, 0);
    assert_int_equal(stats.retired_pending, 0);
    KS_OBJECT_UNREF(web);
    KS_OBJECT_UNREF(db);
    KS_OBJECT_UNREF(rs);
    KS_OBJECT_UNREF(rs2);
    ks_listers_free(l);
}

/* Views pinned across several changes, released out of order: each keeps
 * what it showed until its own unpin (ASan sees an early release). */
static void test_lifetimes_across_pins(void **st) {
    ks_listers *l = ks_listers_new();
    enum { VIEWS = 6 };
    const ks_objects *v[VIEWS];
    uint64_t t[VIEWS];
    char name[32];
    for (int i = 0; i < VIEWS; i++) {
        /* one update, one add, and every other time a delete */
        ks_pvc *p = pvc("default", "data", i % 2 ? "odd" : "even");
        apply(l, KS_KIND_PVC, KS_WATCH_MODIFIED, NULL, p);
        KS_OBJECT_UNREF(p);
        snprintf(name, sizeof(name), "n%d", i);
        p = pvc("default", name, "x");
        apply(l, KS_KIND_PVC, KS_WATCH_ADDED, NULL, p);
        KS_OBJECT_UNREF(p);
        if (i % 2) {
            snprintf(name, sizeof(name), "n%d", i - 1);
            p = pvc("default", name, "x");
            apply(l, KS_KIND_PVC, KS_WATCH_DELETED, p, NULL);
            KS_OBJECT_UNREF(p);
        }
        v[i] = ks_listers_pin(l, &t[i]);
    }
    static const int order[VIEWS] = {3, 0, 5, 1, 4, 2};
    for (int k = 0; k < VIEWS; k++) {
        for (int i = k; i < VIEWS; i++) {
            int j = order[i];
            uint32_t want = (uint32_t)(j + 2) - (uint32_t)((j + 1) / 2);
            assert_int_equal(v[j]->pvcs.n, want);
            int data = 0;
            for (uint32_t x = 0; x < v[j]->pvcs.n; x++) {
                const ks_pvc *p = v[j]->pvcs.v[x];
                if (strcmp(ks_str(p->name), "data") != 0) continue;
                data++;
                assert_string_equal(ks_str(p->storage_class), j % 2 ? "odd" : "even");
            }
            assert_int_equal(data, 1);
        }
        ks_listers_unpin(l, t[order[k]]);
    }
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    assert_int_equal(stats.retired_pending, 0);
    ks_listers_free(l);
}

/* Random adds, updates and deletes against a model: every view holds
 * exactly the model's objects at its pin, also while later changes reuse
 * vectors that earlier views showed once nobody pins those. */
static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return (x > y) - (x < y);
}

enum { KEYS = 40, HELD = 3 };

typedef struct held_view {
    const ks_objects *v;
    uint64_t t;
    void *want[KEYS];
    uint32_t n;
} held_view;

static void check_view(const held_view *h) {
    void *got[KEYS];
    assert_int_equal(h->v->pvcs.n, h->n);
    memcpy(got, h->v->pvcs.v, h->n * sizeof(*got));
    qsort(got, h->n, sizeof(*got), cmp_ptr);
    assert_memory_equal(h->want, got, h->n * sizeof(*got));
}

static void test_random_against_model(void **st) {
    enum { OPS = 4000 };
    ks_listers *l = ks_listers_new();
    ks_pvc *model[KEYS] = {0};
    held_view held[HELD] = {{0}};
    char ns[16], name[16];
    unsigned seed = 7;
    for (int op = 0; op < OPS; op++) {
        int k = rand_r(&seed) % KEYS;
        snprintf(ns, sizeof(ns), "ns%d", k % 3);
        snprintf(name, sizeof(name), "p%d", k);
        if (model[k] && rand_r(&seed) % 3 == 0) {
            apply(l, KS_KIND_PVC, KS_WATCH_DELETED, model[k], NULL);
            KS_OBJECT_UNREF(model[k]);
            model[k] = NULL;
        } else {
            ks_pvc *p = pvc(ns, name, "c");
            apply(l, KS_KIND_PVC, model[k] ? KS_WATCH_MODIFIED : KS_WATCH_ADDED, model[k], p);
            if (model[k]) KS_OBJECT_UNREF(model[k]);
            model[k] = p;
        }
        if (rand_r(&seed) % 3) continue;
        /* a pin in a random slot, replacing (unpinning) what it held */
        held_view *h = &held[rand_r(&seed) % HELD];
        if (h->v) ks_listers_unpin(l, h->t);
        h->v = ks_listers_pin(l, &h->t);
        h->n = 0;
        for (int i = 0; i < KEYS; i++)
            if (model[i]) h->want[h->n++] = model[i];
        qsort(h->want, h->n, sizeof(*h->want), cmp_ptr);
        for (int i = 0; i < HELD; i++)
            if (held[i].v) check_view(&held[i]);
    }
    for (int i = 0; i < HELD; i++)
        if (held[i].v) ks_listers_unpin(l, held[i].t);
    for (int i = 0; i < KEYS; i++)
        if (model[i]) KS_OBJECT_UNREF(model[i]);
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    assert_int_equal(stats.retired_pending, 0);
    ks_listers_free(l);
}

/* Claims c0..c<n-1>, added as a watch would. */
static void add_claims(ks_listers *l, int n) {
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        ks_resource_claim *c = claim(name, 0);
        apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_ADDED, NULL, c);
        KS_OBJECT_UNREF(c);
    }
}

/* One update between views, as a watch event between cycles: once
 * earlier views are unpinned, a change copies the positions written
 * since, not the whole vector. */
static void test_update_costs_its_changes(void **st) {
    enum { N = 1000 };
    ks_listers *l = ks_listers_new();
    add_claims(l, N);
    char name[32];
    uint64_t t;
    ks_listers_unpin(l, (ks_listers_pin(l, &t), t));
    ks_listers_stats before, after;
    for (int round = 1; round <= 20; round++) {
        ks_listers_stats_get(l, &before);
        snprintf(name, sizeof(name), "c%d", round * 37 % N);
        ks_resource_claim *c = claim(name, round);
        apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_MODIFIED, NULL, c);
        KS_OBJECT_UNREF(c);
        const ks_objects *v = ks_listers_pin(l, &t);
        ks_listers_stats_get(l, &after);
        /* the first copy is whole; later ones replay a write or two */
        if (round > 2) assert_true(after.copied - before.copied <= 2);
        assert_int_equal(v->resource_claims.n, N);
        int found = 0;
        for (uint32_t i = 0; i < N; i++) {
            const ks_resource_claim *x = v->resource_claims.v[i];
            if (!strcmp(ks_str(x->name), name)) {
                assert_int_equal(x->nreserved, round);
                found++;
            }
        }
        assert_int_equal(found, 1);
        ks_listers_unpin(l, t);
    }
    ks_listers_free(l);
}

/* Pins end in batches (binding cycles hold theirs across API calls): the
 * vectors they free at once serve the next updates, each under a pin that
 * is still held, without copying the whole vector again. */
static void test_spares_after_batch_release(void **st) {
    enum { N = 1000, HOLD = 6, NEXT = 4 };
    ks_listers *l = ks_listers_new();
    add_claims(l, N);
    char name[32];
    uint64_t t[HOLD + NEXT + 1];
    ks_listers_pin(l, &t[0]);
    for (int k = 1; k <= HOLD + NEXT; k++) {
        if (k == HOLD + 1)
            for (int j = 0; j <= HOLD - 1; j++) ks_listers_unpin(l, t[j]); /* the batch */
        ks_listers_stats before, after;
        ks_listers_stats_get(l, &before);
        snprintf(name, sizeof(name), "c%d", k * 13);
        ks_resource_claim *c = claim(name, k);
        apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_MODIFIED, NULL, c);
        KS_OBJECT_UNREF(c);
        ks_listers_stats_get(l, &after);
        /* while all are held every copy is whole; after the batch, none */
        if (k <= HOLD) assert_int_equal(after.copied - before.copied, N);
        else assert_true(after.copied - before.copied <= HOLD + NEXT);
        const ks_objects *v = ks_listers_pin(l, &t[k]);
        assert_int_equal(v->resource_claims.n, N);
    }
    for (int k = HOLD; k <= HOLD + NEXT; k++) ks_listers_unpin(l, t[k]);
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    assert_int_equal(stats.retired_pending, 0);
    ks_listers_free(l);
}

/* A vector copied for a change has room for a few adds, not the spare
 * half the vector's doubling left: 1100 claims in a vector of 2048, the
 * copy ~1200 pointers. */
static void test_copies_sized_to_use(void **st) {
    enum { N = 1100 };
    ks_listers *l = ks_listers_new();
    add_claims(l, N);
    uint64_t t1, t2;
    ks_listers_pin(l, &t1);
    ks_resource_claim *c = claim("c7", 1);
    apply(l, KS_KIND_RESOURCE_CLAIM, KS_WATCH_MODIFIED, NULL, c);
    KS_OBJECT_UNREF(c);
    const ks_objects *v = ks_listers_pin(l, &t2);
    assert_int_equal(v->resource_claims.n, N);
    ks_listers_unpin(l, t1);
    ks_listers_stats stats;
    ks_listers_stats_get(l, &stats);
    /* the old vector (2048) as a spare, the copy current */
    assert_true(stats.vector_bytes >= (2048 + N) * sizeof(void *));
    assert_true(stats.vector_bytes <= (2048 + N + N / 8) * sizeof(void *));
    ks_listers_unpin(l, t2);
    ks_listers_free(l);
}

/* A watch thread applying changes while readers pin, read and unpin. */
typedef struct race {
    ks_listers *l;
    int rounds;
} race;

static void *writer(void *arg) {
    race *r = arg;
    for (int i = 0; i < r->rounds; i++) {
        ks_pvc *p = pvc("default", "churn", i % 2 ? "a" : "b");
        ks_listers_apply(r->l, KS_KIND_PVC, KS_WATCH_MODIFIED, NULL, p);
        KS_OBJECT_UNREF(p);
        /* others come and go, so the vector grows, shrinks and moves */
        char name[16];
        snprintf(name, sizeof(name), "tmp%d", i % 8);
        p = pvc("default", name, i % 3 ? "a" : "b");
        ks_listers_apply(r->l, KS_KIND_PVC, i % 16 < 8 ? KS_WATCH_MODIFIED : KS_WATCH_DELETED, NULL, p);
        KS_OBJECT_UNREF(p);
    }
    return NULL;
}

static void test_concurrent_changes(void **st) {
    race r = {ks_listers_new(), 2000};
    pthread_t w;
    pthread_create(&w, NULL, writer, &r);
    size_t reads = 0;
    for (int i = 0; i < 2000; i++) {
        uint64_t t;
        const ks_objects *v = ks_listers_pin(r.l, &t);
        for (uint32_t j = 0; j < v->pvcs.n; j++) {
            const char *c = ks_str(v->pvcs.v[j]->storage_class);
            assert_true(!strcmp(c, "a") || !strcmp(c, "b"));
            reads++;
        }
        ks_listers_unpin(r.l, t);
    }
    pthread_join(w, NULL);
    ks_listers_stats stats;
    ks_listers_stats_get(r.l, &stats);
    assert_int_equal(stats.retired_pending, 0);
    assert_int_equal(stats.objects, 1);
    ks_listers_free(r.l);
    (void)reads;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_and_release),
        cmocka_unit_test(test_unchanged_view_is_shared),
        cmocka_unit_test(test_workload_kinds_apart),
        cmocka_unit_test(test_update_copies_its_kind_only),
        cmocka_unit_test(test_delete_moves_last),
        cmocka_unit_test(test_lifetimes_across_pins),
        cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_update_costs_its_changes),
        cmocka_unit_test(test_spares_after_batch_release),
        cmocka_unit_test(test_copies_sized_to_use),
        cmocka_unit_test(test_concurrent_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
