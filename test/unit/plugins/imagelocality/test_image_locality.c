/* ImageLocality (cases from upstream image_locality_test.go). Image
 * summaries (size, number of nodes having the image) come from a snapshot. */
#include "testutil_plugins.h"
#include "plugins/imagelocality/image_locality.h"

#include <ksched/framework.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define MB (1024LL * 1024)

enum { N403002000, N25010, N60040900, N300600900, N400030, N203040, NNONE };

static ks_node *image_node(const char *name, int kind) {
    ks_node *n = tp_node(name);
    switch (kind) {
    case N403002000:
        tp_node_image(n, 40 * MB, "gcr.io/40:latest");
        n->images[n->nimages - 1].names = ks_arena_calloc(n->arena, 3, sizeof(ks_id));
        n->images[n->nimages - 1].nnames = 3;
        n->images[n->nimages - 1].names[0] = ks_intern("gcr.io/40:latest");
        n->images[n->nimages - 1].names[1] = ks_intern("gcr.io/40:v1");
        n->images[n->nimages - 1].names[2] = ks_intern("gcr.io/40:v1");
        tp_node_image(n, 300 * MB, "gcr.io/300:latest");
        tp_node_image(n, 2000 * MB, "gcr.io/2000:latest");
        break;
    case N25010:
        tp_node_image(n, 250 * MB, "gcr.io/250:latest");
        tp_node_image(n, 10 * MB, "gcr.io/10:latest");
        break;
    case N60040900:
        tp_node_image(n, 600 * MB, "gcr.io/600:latest");
        tp_node_image(n, 40 * MB, "gcr.io/40:latest");
        tp_node_image(n, 900 * MB, "gcr.io/900:latest");
        break;
    case N300600900:
        tp_node_image(n, 300 * MB, "gcr.io/300:latest");
        tp_node_image(n, 600 * MB, "gcr.io/600:latest");
        tp_node_image(n, 900 * MB, "gcr.io/900:latest");
        break;
    case N400030:
        tp_node_image(n, 4000 * MB, "gcr.io/4000:latest");
        tp_node_image(n, 30 * MB, "gcr.io/30:latest");
        break;
    case N203040:
        tp_node_image(n, 20 * MB, "gcr.io/20:latest");
        tp_node_image(n, 30 * MB, "gcr.io/30:latest");
        tp_node_image(n, 40 * MB, "gcr.io/40:latest");
        break;
    default:
        break;
    }
    return n;
}

/* A pod whose containers use the images (init images prefixed "init:"). */
static ks_pod *image_pod(const char *const *images) {
    ks_pod *p = tp_pod("p");
    for (; *images; images++) {
        if (strncmp(*images, "init:", 5) == 0)
            tp_container_image(tp_init_container(p, TP_NONE, TP_NONE, false), *images + 5);
        else
            tp_container_image(tp_container(p, TP_NONE, TP_NONE), *images);
    }
    return tp_pod_done(p);
}

static void run(const char *const *images, const int *kinds, size_t n, const int64_t *want) {
    ks_pod *pod = image_pod(images);
    ks_node *nodes[4];
    for (size_t i = 0; i < n; i++) {
        char name[32]; /* room for any size_t: -O1 checks the bound */
        snprintf(name, sizeof(name), "node%zu", i + 1);
        nodes[i] = image_node(name, kinds[i]);
    }
    ks_snapshot *snap = ks_snapshot_from(nodes, n, NULL, 0);
    for (size_t i = 0; i < n; i++) {
        const ks_node_info *ni = ks_snapshot_node_by_name(snap, ks_str(nodes[i]->name));
        assert_non_null(ni);
        assert_int_equal(ks_image_locality_score(ni, pod, (int64_t)n), want[i]);
    }
    ks_snapshot_free(snap);
    for (size_t i = 0; i < n; i++) ks_node_unref(nodes[i]);
    ks_pod_unref(pod);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define K(...) ((const int[]){__VA_ARGS__})
#define W(...) ((const int64_t[]){__VA_ARGS__})

static void two_images_spread_prefers_larger(void **st) {
    run(L("gcr.io/40", "gcr.io/250"), K(N403002000, N25010), 2, W(0, 5));
}
static void two_images_on_one_node(void **st) {
    run(L("gcr.io/40", "gcr.io/300"), K(N403002000, N25010), 2, W(7, 0));
}
static void sum_above_max_threshold_is_capped(void **st) {
    run(L("gcr.io/10", "gcr.io/4000"), K(N400030, N25010), 2, W(100, 0));
}
static void spread_scaling_uses_all_nodes(void **st) {
    run(L("gcr.io/10", "gcr.io/4000"), K(N400030, N25010, NNONE), 3, W(66, 0, 0));
}
static void multiple_large_images(void **st) {
    run(L("gcr.io/300", "gcr.io/600", "gcr.io/900"), K(N60040900, N300600900, NNONE), 3, W(32, 36, 0));
}
static void multiple_small_images(void **st) {
    run(L("gcr.io/30", "gcr.io/40"), K(N203040, N400030), 2, W(1, 0));
}
static void init_container_images_count(void **st) {
    run(L("gcr.io/30", "init:gcr.io/300"), K(N403002000, N203040), 2, W(6, 0));
}
static void tag_is_matched_exactly(void **st) {
    /* gcr.io/40:v1 is on node1 under that name; gcr.io/40:v2 is nowhere. */
    run(L("gcr.io/40:v1", "gcr.io/2000"), K(N403002000, NNONE), 2, W(50, 0));
    run(L("gcr.io/40:v2"), K(N403002000, NNONE), 2, W(0, 0));
}

static void priority_thresholds(void **st) {
    /* Exactly the minimum threshold scores 0; max threshold scores 100. */
    ks_node *n = tp_node("node1");
    tp_node_image(n, 23 * MB, "a:latest");
    tp_node_image(n, 1000 * MB, "b:latest");
    ks_snapshot *snap = ks_snapshot_from(&n, 1, NULL, 0);
    const ks_node_info *ni = ks_snapshot_node(snap, 0);
    ks_pod *p = image_pod(L("a"));
    assert_int_equal(ks_image_locality_score(ni, p, 1), 0);
    ks_pod_unref(p);
    p = image_pod(L("b"));
    assert_int_equal(ks_image_locality_score(ni, p, 1), 100);
    ks_pod_unref(p);
    ks_snapshot_free(snap);
    ks_node_unref(n);
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_images_spread_prefers_larger),
        cmocka_unit_test(two_images_on_one_node),
        cmocka_unit_test(sum_above_max_threshold_is_capped),
        cmocka_unit_test(spread_scaling_uses_all_nodes),
        cmocka_unit_test(multiple_large_images),
        cmocka_unit_test(multiple_small_images),
        cmocka_unit_test(init_container_images_count),
        cmocka_unit_test(tag_is_matched_exactly),
        cmocka_unit_test(priority_thresholds),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
