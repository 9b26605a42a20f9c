/* String interning: one id per string, through the table's growth. */
#include "util/intern.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* Every string keeps its id when interned again, whichever one was being
 * added when the table grew (a node name interned at a growth point once
 * got a second id the next time, and its pods landed on a NodeInfo
 * without the node). */
static void test_same_id_across_growth(void **state) {
    enum { N = 70000 };
    ks_id *ids = malloc(N * sizeof(*ids));
    char buf[64];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "test-intern-%05d", i);
        ids[i] = ks_intern(buf);
    }
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "test-intern-%05d", i);
        assert_int_equal(ks_intern(buf), ids[i]);
        assert_int_equal(ks_intern_find(buf), ids[i]);
        assert_string_equal(ks_str(ids[i]), buf);
    }
    free(ids);
}

static void test_empty_string_is_zero(void **state) {
    assert_int_equal(ks_intern(""), 0);
    assert_string_equal(ks_str(0), "");
}

/* Counted strings go with their last reference, their ids are reused,
 * and the strings left behind are all still found (the table closes the
 * holes its deletions leave). */
static void test_counted_strings_freed(void **state) {
    enum { N = 20000 };
    ks_id *ids = malloc(N * sizeof(*ids));
    char buf[64];
    size_t base = ks_intern_count();
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "counted-%05d", i);
        ids[i] = ks_intern_ref(buf);
        if (i % 3 == 0) assert_int_equal(ks_intern_ref(buf), ids[i]); /* a second reference */
    }
    assert_int_equal(ks_intern_count(), base + N);
    /* Drop every other string (the ones with two references keep one). */
    for (int i = 0; i < N; i += 2) ks_intern_unref(ids[i]);
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "counted-%05d", i);
        bool alive = i % 2 == 1 || i % 3 == 0;
        if (alive) {
            assert_int_equal(ks_intern_find(buf), ids[i]);
            assert_string_equal(ks_str(ids[i]), buf);
        } else {
            assert_int_equal(ks_intern_find(buf), KS_ID_INVALID);
        }
    }
    /* New strings take the freed ids: the table does not grow. */
    ks_id fresh = ks_intern_ref("counted-fresh");
    bool reused = false;
    for (int i = 0; i < N; i += 2)
        if (ids[i] == fresh) reused = true;
    assert_true(reused);
    ks_intern_unref(fresh);
    for (int i = 0; i < N; i++) {
        bool alive = i % 2 == 1 || i % 3 == 0;
        if (alive) ks_intern_unref(ids[i]);
        if (i % 2 == 1 && i % 3 == 0) ks_intern_unref(ids[i]); /* its second */
    }
    assert_int_equal(ks_intern_count(), base);
    free(ids);
}

/* A counted string interned with ks_intern stays for good. */
static void test_permanent_wins(void **state) {
    ks_id a = ks_intern_ref("counted-then-permanent");
    assert_int_equal(ks_intern("counted-then-permanent"), a);
    ks_intern_unref(a);
    ks_intern_unref(a);
    assert_int_equal(ks_intern_find("counted-then-permanent"), a);
    ks_id b = ks_intern("permanent-then-counted");
    assert_int_equal(ks_intern_ref("permanent-then-counted"), b);
    ks_intern_unref(b);
    assert_string_equal(ks_str(b), "permanent-then-counted");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_id_across_growth),
        cmocka_unit_test(test_empty_string_is_zero),
        cmocka_unit_test(test_counted_strings_freed),
        cmocka_unit_test(test_permanent_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
