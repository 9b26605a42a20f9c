/* The lazy loaders' shared pieces: a library opened by its soname or its
 * development name, a symbol taken from the first handle that has it,
 * and a missing one reported (and its pointer cleared). */
#include "util/dl.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_open(void **st) {
    (void)st;
    assert_non_null(ks_dl_open("libm.so.6", NULL));
    /* the second name when the first does not load */
    assert_non_null(ks_dl_open("libksched-no-such-library.so.1", "libm.so.6"));
    assert_null(ks_dl_open("libksched-no-such-library.so.1", "libksched-no-such-library.so"));
    assert_null(ks_dl_open("libksched-no-such-library.so.1", NULL));
}

static void test_sym(void **st) {
    (void)st;
    void *libs[2] = {ks_dl_open("libm.so.6", NULL), ks_dl_open("libc.so.6", NULL)};
    assert_non_null(libs[0]);
    assert_non_null(libs[1]);
    double (*cosine)(double) = NULL;
    assert_true(ks_dl_sym(libs, 2, "cos", &cosine, sizeof(cosine)));
    assert_true(cosine(0.0) == 1.0);
    /* found in the second handle only */
    size_t (*len)(const char *) = NULL;
    assert_true(ks_dl_sym(libs, 2, "strlen", &len, sizeof(len)));
    assert_int_equal(len("four"), 4);
    /* missing everywhere: false, and the pointer cleared */
    void (*none)(void) = (void (*)(void))test_sym;
    assert_false(ks_dl_sym(libs, 2, "ks_no_such_function", &none, sizeof(none)));
    assert_null(none);
    assert_false(ks_dl_sym(libs, 1, "strlen_not_there", &len, sizeof(len)));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_sym),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
