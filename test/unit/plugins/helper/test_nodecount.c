/* The per-node count cache across cycles (plugins/helper/nodecount.h):
 * a count is read back only for the same node generation and the same
 * signature; one pass holds it at a time. */
#include "plugins/helper/nodecount.h"
#include "util/intern.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void sig_of(ks_sig *s, uint64_t v) {
    ks_sig_init(s);
    ks_sig_u64(s, v);
}

static void test_hit_only_for_same_generation_and_signature(void **unused) {
    ks_node_info *a = ks_node_info_new(), *b = ks_node_info_new();
    a->name = ks_intern("nodecount-a");
    b->name = ks_intern("nodecount-b");
    const ks_node_info *nodes[] = {a, b};
    ks_nodecount c;
    ks_nodecount_init(&c);
    ks_sig s1, s2;
    sig_of(&s1, 1);
    sig_of(&s2, 2);

    uint32_t p1 = ks_nodecount_begin(&c, &s1, nodes, 2);
    assert_int_not_equal(p1, 0);
    ks_nodecount_slot *sa = ks_nodecount_at(&c, p1, a);
    assert_non_null(sa);
    assert_false(ks_nodecount_hit(sa, p1, a)); /* nothing kept yet */
    ks_nodecount_keep(sa, p1, a, 3);
    ks_nodecount_end(&c, p1);

    /* the same question next cycle: read back */
    assert_int_equal(ks_nodecount_begin(&c, &s1, nodes, 2), p1);
    assert_true(ks_nodecount_hit(ks_nodecount_at(&c, p1, a), p1, a));
    assert_int_equal(ks_nodecount_at(&c, p1, a)->val, 3);
    assert_false(ks_nodecount_hit(ks_nodecount_at(&c, p1, b), p1, b));
    ks_nodecount_end(&c, p1);

    /* the node changed: a new generation misses */
    ks_pod *p = ks_pod_new();
    ks_node_info_add_pod(a, p);
    p1 = ks_nodecount_begin(&c, &s1, nodes, 2);
    assert_false(ks_nodecount_hit(ks_nodecount_at(&c, p1, a), p1, a));
    ks_nodecount_end(&c, p1);

    /* another question misses, and takes the slot without forgetting the
     * first question's other slots */
    uint32_t p2 = ks_nodecount_begin(&c, &s2, nodes, 2);
    assert_int_not_equal(p2, p1);
    assert_false(ks_nodecount_hit(ks_nodecount_at(&c, p2, a), p2, a));
    ks_nodecount_keep(ks_nodecount_at(&c, p2, b), p2, b, 5);
    ks_nodecount_end(&c, p2);
    p1 = ks_nodecount_begin(&c, &s1, nodes, 2);
    assert_false(ks_nodecount_hit(ks_nodecount_at(&c, p1, b), p1, b));
    ks_nodecount_end(&c, p1);

    ks_sig_free(&s1);
    ks_sig_free(&s2);
    ks_nodecount_free(&c);
    ks_node_info_free(a);
    ks_node_info_free(b);
    ks_pod_unref(p);
}

static void test_one_pass_at_a_time(void **unused) {
    ks_node_info *a = ks_node_info_new();
    a->name = ks_intern("nodecount-c");
    const ks_node_info *nodes[] = {a};
    ks_nodecount c;
    ks_nodecount_init(&c);
    ks_sig s;
    sig_of(&s, 7);
    uint32_t p = ks_nodecount_begin(&c, &s, nodes, 1);
    assert_int_not_equal(p, 0);
    /* a concurrent pass gets none and no slot */
    assert_int_equal(ks_nodecount_begin(&c, &s, nodes, 1), 0);
    assert_null(ks_nodecount_at(&c, 0, a));
    ks_nodecount_end(&c, 0); /* ending a pass that got none does not release */
    assert_int_equal(ks_nodecount_begin(&c, &s, nodes, 1), 0);
    ks_nodecount_end(&c, p);
    assert_int_equal(ks_nodecount_begin(&c, &s, nodes, 1), p);
    ks_nodecount_end(&c, p);
    /* a node the pass was not begun with may lie past the slots */
    ks_node_info *far = ks_node_info_new();
    far->name = (ks_id)(c.n + 5);
    assert_null(ks_nodecount_at(&c, p, far));
    ks_sig_free(&s);
    ks_nodecount_free(&c);
    ks_node_info_free(a);
    ks_node_info_free(far);
}

static void test_signatures_replaced_oldest_first(void **unused) {
    ks_node_info *a = ks_node_info_new();
    a->name = ks_intern("nodecount-d");
    const ks_node_info *nodes[] = {a};
    ks_nodecount c;
    ks_nodecount_init(&c);
    ks_sig s[KS_NODECOUNT_SIGS + 1];
    uint32_t id[KS_NODECOUNT_SIGS + 1];
    for (int i = 0; i <= KS_NODECOUNT_SIGS; i++) {
        sig_of(&s[i], 100 + (uint64_t)i);
        id[i] = ks_nodecount_begin(&c, &s[i], nodes, 1);
        ks_nodecount_end(&c, id[i]);
    }
    /* the newest KS_NODECOUNT_SIGS keep their ids; the first got a new one */
    for (int i = 1; i <= KS_NODECOUNT_SIGS; i++) {
        assert_int_equal(ks_nodecount_begin(&c, &s[i], nodes, 1), id[i]);
        ks_nodecount_end(&c, id[i]);
    }
    uint32_t again = ks_nodecount_begin(&c, &s[0], nodes, 1);
    ks_nodecount_end(&c, again);
    for (int i = 0; i <= KS_NODECOUNT_SIGS; i++) {
        assert_int_not_equal(again, id[i]);
        ks_sig_free(&s[i]);
    }
    ks_nodecount_free(&c);
    ks_node_info_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_only_for_same_generation_and_signature),
        cmocka_unit_test(test_one_pass_at_a_time),
        cmocka_unit_test(test_signatures_replaced_oldest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
