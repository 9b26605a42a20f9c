/* Formatting allocators: ks_xasprintf/ks_xvasprintf at any length, and
 * ks_set_error replacing the message before it. */
#include "util/xalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *fmt_v(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = ks_xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}

static void test_asprintf(void **st) {
    (void)st;
    char *s = ks_xasprintf("%s-%d", "pod", 7);
    assert_string_equal(s, "pod-7");
    free(s);
    s = fmt_v("%s", "");
    assert_string_equal(s, "");
    free(s);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    s = fmt_v("<%s>", big);
    assert_int_equal(strlen(s), sizeof big + 1);
    assert_int_equal(s[0], '<');
    assert_int_equal(s[sizeof big], '>');
    free(s);
}

static void test_set_error(void **st) {
    (void)st;
    char *err = NULL;
    assert_false(ks_set_error(&err, "first %d", 1));
    assert_string_equal(err, "first 1");
    assert_false(ks_set_error(&err, "second %s", "try")); /* the first is freed (ASan) */
    assert_string_equal(err, "second try");
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asprintf),
        cmocka_unit_test(test_set_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
