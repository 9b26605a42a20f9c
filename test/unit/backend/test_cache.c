/* Cache and snapshot: incremental updates by generation, node order,
 * assumed pods, image states, affinity and PVC bookkeeping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/cache.h"
#include "framework/snapshot.h"
#include "framework/status.h"
#include "testutil.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZONE "topology.kubernetes.io/zone"
#define GI (1LL << 30)

static void add_nodes(ks_cache *c, ks_node **v, size_t n) {
    for (size_t i = 0; i < n; i++) ks_cache_add_node(c, v[i]);
}

static void test_snapshot_copies_only_changed(void **state) {
    ks_cache *c = ks_cache_new(NULL, 0);
    ks_node *nodes[100];
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "n%03d", i);
        nodes[i] = tu_node(name, 4000, 8 * GI, NULL);
    }
    add_nodes(c, nodes, 100);
    ks_snapshot *s = ks_snapshot_new();
    assert_null(ks_cache_update_snapshot(c, s));
    assert_int_equal(s->nnodes, 100);
    assert_int_equal(s->copied_last, 100);

    /* Nothing changed: nothing copied, same NodeInfo objects. */
    const ks_node_info *before = ks_snapshot_get(s, ks_intern("n007"));
    assert_null(ks_cache_update_snapshot(c, s));
    assert_int_equal(s->copied_last, 0);

    /* Two pods on two nodes: exactly those two are copied, in place. */
    ks_pod *p1 = tu_pod_on("default", "a", 100, 0, "n007");
    ks_pod *p2 = tu_pod_on("default", "b", 100, 0, "n042");
    assert_null(ks_cache_add_pod(c, p1));
    assert_null(ks_cache_add_pod(c, p2));
    assert_null(ks_cache_update_snapshot(c, s));
    assert_int_equal(s->copied_last, 2);
    assert_int_equal(s->copied_total, 102);
    const ks_node_info *after = ks_snapshot_get(s, ks_intern("n007"));
    assert_ptr_equal(before, after);
    assert_int_equal(after->npods, 1);
    assert_int_equal(after->requested.milli_cpu, 100);

    /* The same pod assumed and confirmed: one copy per change. */
    ks_pod *p3 = tu_pod_on("default", "c", 200, 0, "n099");
    assert_null(ks_cache_assume_pod(c, p3));
    assert_null(ks_cache_update_snapshot(c, s));
    assert_int_equal(s->copied_last, 1);
    assert_int_equal(ks_snapshot_get(s, ks_intern("n099"))->requested.milli_cpu, 200);

    /* A removed node leaves the snapshot. */
    assert_null(ks_cache_remove_node(c, nodes[50]));
    assert_null(ks_cache_update_snapshot(c, s));
    assert_int_equal(s->nnodes, 99);
    assert_null(ks_snapshot_get(s, nodes[50]->name));

    ks_pod_unref(p1);
    ks_pod_unref(p2);
    ks_pod_unref(p3);
    ks_snapshot_free(s);
    ks_cache_free(c);
    for (int i = 0; i < 100; i++) ks_node_unref(nodes[i]);
}

static void test_node_order_interleaves_zones(void **state) {
    ks_node *v[6] = {
        tu_node("a1", 1000, GI, ZONE, "a", NULL), tu_node("a2", 1000, GI, ZONE, "a", NULL),
        tu_node("a3", 1000, GI, ZONE, "a", NULL), tu_node("b1", 1000, GI, ZONE, "b", NULL),
        tu_node("c1", 1000, GI, ZONE, "c", NULL), tu_node("b2", 1000, GI, ZONE, "b", NULL),
    };
    ks_snapshot *s = ks_snapshot_from(v, 6, NULL, 0);
    const char *want[] = {"a1", "b1", "c1", "a2", "b2", "a3"};
    assert_int_equal(s->nnodes, 6);
    for (int i = 0; i < 6; i++) assert_string_equal(ks_str(s->nodes[i]->name), want[i]);
    ks_snapshot_free(s);
    for (int i = 0; i < 6; i++) ks_node_unref(v[i]);
}

static void test_assume_forget_finish_expire(void **state) {
    ks_clock *clock = ks_clock_sim_new(0);
    ks_cache *c = ks_cache_new(clock, 30 * KS_NS_PER_SEC);
    ks_node *n = tu_node("n1", 1000, GI, NULL);
    ks_cache_add_node(c, n);
    ks_pod *p = tu_pod_on("default", "p", 300, 0, "n1");

    assert_null(ks_cache_assume_pod(c, p));
    assert_true(ks_cache_is_assumed(c, p));
    ks_status *e = ks_cache_assume_pod(c, p);
    assert_non_null(e); /* twice: refused */
    ks_status_free(e);
    assert_null(ks_cache_forget_pod(c, p));
    assert_false(ks_cache_is_assumed(c, p));
    e = ks_cache_forget_pod(c, p);
    char *m = ks_status_message(e);
    assert_string_equal(m, "pod default/p wasn't assumed so cannot be forgotten");
    free(m);
    ks_status_free(e);

    /* Binding never finished: never expires. */
    assert_null(ks_cache_assume_pod(c, p));
    ks_clock_sim_set(clock, 3600 * KS_NS_PER_SEC);
    ks_cache_cleanup_assumed(c, ks_clock_now(clock));
    assert_true(ks_cache_is_assumed(c, p));
    /* Finished binding: expires after the ttl. */
    ks_cache_finish_binding(c, p);
    ks_cache_cleanup_assumed(c, ks_clock_now(clock) + 30 * KS_NS_PER_SEC);
    assert_true(ks_cache_is_assumed(c, p));
    ks_cache_cleanup_assumed(c, ks_clock_now(clock) + 31 * KS_NS_PER_SEC);
    assert_false(ks_cache_is_assumed(c, p));
    assert_int_equal(ks_cache_pod_count(c), 0);

    /* The Add event confirms an assumed pod. */
    assert_null(ks_cache_assume_pod(c, p));
    assert_null(ks_cache_add_pod(c, p));
    assert_false(ks_cache_is_assumed(c, p));
    assert_int_equal(ks_cache_pod_count(c), 1);
    assert_int_equal(ks_cache_assumed_count(c), 0);

    ks_pod_unref(p);
    ks_node_unref(n);
    ks_cache_free(c);
    ks_clock_free(clock);
}

static void add_image(ks_node *n, const char *img, int64_t size) {
    ks_node_image *v = ks_arena_calloc(n->arena, n->nimages + 1, sizeof(*v));
    if (n->nimages) memcpy(v, n->images, n->nimages * sizeof(*v));
    v[n->nimages].nnames = 1;
    v[n->nimages].names = ks_arena_calloc(n->arena, 1, sizeof(ks_id));
    v[n->nimages].names[0] = ks_intern(img);
    v[n->nimages].size_bytes = size;
    n->images = v;
    n->nimages++;
}

static void test_image_states(void **state) {
    ks_node *a = tu_node("a", 1000, GI, NULL), *b = tu_node("b", 1000, GI, NULL), *c = tu_node("c", 1000, GI, NULL);
    add_image(a, "nginx:1", 100);
    add_image(b, "nginx:1", 100);
    add_image(b, "redis:7", 50);
    ks_node *v[3] = {a, b, c};
    ks_snapshot *s = ks_snapshot_from(v, 3, NULL, 0);
    const ks_node_info *nb = ks_snapshot_get(s, b->name);
    assert_int_equal(nb->nimages, 2);
    for (uint32_t i = 0; i < nb->nimages; i++) {
        if (nb->images[i].name == ks_intern("nginx:1")) {
            assert_int_equal(nb->images[i].num_nodes, 2);
            assert_int_equal(nb->images[i].size, 100);
        } else {
            assert_int_equal(nb->images[i].num_nodes, 1);
            assert_int_equal(nb->images[i].size, 50);
        }
    }
    assert_int_equal(ks_node_info_image_size(nb, "redis:7"), 50);
    assert_int_equal(ks_node_info_image_size(ks_snapshot_get(s, c->name), "redis:7"), 0);
    ks_snapshot_free(s);
    ks_node_unref(a);
    ks_node_unref(b);
    ks_node_unref(c);
}

static void test_affinity_lists_and_pvcs(void **state) {
    ks_node *v[2] = {tu_node("n1", 1000, GI, NULL), tu_node("n2", 1000, GI, NULL)};
    ks_pod *anti = tu_pod_on("default", "anti", 0, 0, "n2");
    static ks_pod_affinity_term term;
    anti->nreq_anti = 1;
    anti->req_anti = &term;
    ks_pod *claim = tu_pod_on("default", "db", 0, 0, "n1");
    static ks_volume vol = {.name = "data", .kind = KS_VOL_PVC, .claim_name = "data-db"};
    claim->nvolumes = 1;
    claim->volumes = &vol;
    ks_pod *pods[2] = {anti, claim};
    ks_snapshot *s = ks_snapshot_from(v, 2, pods, 2);
    assert_int_equal(s->nwith_affinity, 1);
    assert_int_equal(s->nwith_required_anti, 1);
    assert_ptr_equal(s->with_required_anti[0], ks_snapshot_get(s, ks_intern("n2")));
    assert_true(ks_snapshot_pvc_used(s, ks_intern("default"), ks_intern("data-db")));
    assert_false(ks_snapshot_pvc_used(s, ks_intern("default"), ks_intern("other")));
    ks_snapshot_free(s);
    ks_pod_unref(anti);
    ks_pod_unref(claim);
    ks_node_unref(v[0]);
    ks_node_unref(v[1]);
}

static void test_pod_lifecycle_errors(void **state) {
    ks_cache *c = ks_cache_new(NULL, 0);
    ks_node *n = tu_node("n1", 1000, GI, NULL);
    ks_cache_add_node(c, n);
    ks_pod *p = tu_pod_on("default", "p", 100, 0, "n1");
    assert_null(ks_cache_add_pod(c, p));
    ks_status *e = ks_cache_add_pod(c, p);
    char *m = ks_status_message(e);
    assert_string_equal(m, "pod default/p was already in added state");
    free(m);
    ks_status_free(e);
    assert_null(ks_cache_remove_pod(c, p));
    e = ks_cache_remove_pod(c, p);
    assert_non_null(e);
    ks_status_free(e);
    /* A pod on a node the cache does not know: kept (the node may come),
     * but not in the snapshot. */
    ks_pod *ghost = tu_pod_on("default", "g", 100, 0, "nowhere");
    assert_null(ks_cache_add_pod(c, ghost));
    ks_snapshot *s = ks_snapshot_new();
    assert_null(ks_cache_update_snapshot(c, s));
    assert_int_equal(s->nnodes, 1);
    assert_null(ks_cache_remove_pod(c, ghost));
    ks_snapshot_free(s);
    ks_pod_unref(p);
    ks_pod_unref(ghost);
    ks_node_unref(n);
    ks_cache_free(c);
}

int main(void) {
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_copies_only_changed),
        cmocka_unit_test(test_node_order_interleaves_zones),
        cmocka_unit_test(test_assume_forget_finish_expire),
        cmocka_unit_test(test_image_states),
        cmocka_unit_test(test_affinity_lists_and_pvcs),
        cmocka_unit_test(test_pod_lifecycle_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
