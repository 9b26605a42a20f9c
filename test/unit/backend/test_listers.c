/* The listers: changes reach new views only, a pinned view and every
 * object in it stay valid until unpinned (ASan sees any early release),
 * and what no pin can see any more is released. */
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
        cmocka_unit_test(test_concurrent_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
