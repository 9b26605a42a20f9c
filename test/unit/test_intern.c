/* String interning: one id per string, through the table's growth. */
#include "util/intern.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_id_across_growth),
        cmocka_unit_test(test_empty_string_is_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
