/* Statuses (src/framework/status.c): reasons formatted, kept as constants,
 * added, joined, cloned and freed (ASan checks that a constant reason is
 * never freed and an added one always is). */
#include "framework/status.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void formatted(void **st) {
    (void)st;
    ks_status *s = ks_status_new(KS_UNSCHEDULABLE, "Insufficient %s", "cpu");
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE);
    assert_string_equal(ks_status_reason(s, 0), "Insufficient cpu");
    ks_status_add_reason(s, "Insufficient %s", "memory");
    char *m = ks_status_message(s);
    assert_string_equal(m, "Insufficient cpu, Insufficient memory");
    free(m);
    ks_status_free(s);
}

static void constant(void **st) {
    (void)st;
    static const char reason[] = "node(s) didn't match Pod's node affinity/selector";
    ks_status *s = ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, reason);
    assert_int_equal(ks_status_code(s), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_int_equal(ks_status_nreasons(s), 1);
    assert_ptr_equal(ks_status_reason(s, 0), reason); /* kept, not copied */
    /* more reasons after a constant one are owned as usual */
    ks_status_add_reason(s, "and %s", "more");
    ks_status_add_reason(s, "a third");
    char *m = ks_status_message(s);
    assert_string_equal(m, "node(s) didn't match Pod's node affinity/selector, and more, a third");
    free(m);
    /* a clone owns copies */
    ks_status *c = ks_status_clone(s);
    assert_ptr_not_equal(ks_status_reason(c, 0), reason);
    assert_string_equal(ks_status_reason(c, 0), reason);
    assert_string_equal(ks_status_reason(c, 2), "a third");
    ks_status_free(s);
    ks_status_free(c);
    ks_status_free(ks_status_new_const(KS_UNSCHEDULABLE, "alone"));
}

/* Statuses made and freed in turns, thousands at a time (as Filter's
 * verdicts, whose constant ones are reused per thread), constant,
 * formatted (short and long) and empty ones mixed: each intact until
 * freed. */
static void pooled_blocks(void **st) {
    (void)st;
    char longer[300];
    memset(longer, 'x', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    for (int round = 0; round < 3; round++) {
        ks_status *v[2000];
        for (int i = 0; i < 2000; i++) {
            if (i % 3 == 0) v[i] = ks_status_new_const(KS_UNSCHEDULABLE, "Insufficient cpu");
            else if (i % 3 == 1) v[i] = ks_status_new(KS_UNSCHEDULABLE, "node %d: %s", i, i % 7 ? "short" : longer);
            else v[i] = ks_status_new(KS_ERROR, NULL);
        }
        for (int i = 0; i < 2000; i++) {
            if (i % 3 == 0) assert_string_equal(ks_status_reason(v[i], 0), "Insufficient cpu");
            if (i % 3 == 1) {
                char want[400];
                snprintf(want, sizeof(want), "node %d: %s", i, i % 7 ? "short" : longer);
                assert_string_equal(ks_status_reason(v[i], 0), want);
            }
            if (i % 3 == 2) assert_int_equal(ks_status_nreasons(v[i]), 0);
        }
        for (int i = 0; i < 2000; i++) ks_status_free(v[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(formatted), cmocka_unit_test(constant),
                                       cmocka_unit_test(pooled_blocks)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
