/* Standard base64: the values of the alphabet, decoding with padding and
 * line breaks, and the first character that is not base64. */
#include "util/base64.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_values(void **st) {
    (void)st;
    assert_int_equal(ks_base64_value('A'), 0);
    assert_int_equal(ks_base64_value('a'), 26);
    assert_int_equal(ks_base64_value('0'), 52);
    assert_int_equal(ks_base64_value('+'), 62);
    assert_int_equal(ks_base64_value('/'), 63);
    assert_int_equal(ks_base64_value('='), -1);
    assert_int_equal(ks_base64_value('-'), -1);
}

static void check(const char *in, const char *want) {
    unsigned char out[64];
    size_t len = 99;
    assert_true(ks_base64_decode(in, strlen(in), out, &len));
    assert_int_equal(len, strlen(want));
    assert_memory_equal(out, want, len);
}

static void test_decode(void **st) {
    (void)st;
    check("", "");
    check("Zg==", "f");
    check("Zm8=", "fo");
    check("Zm9v", "foo");
    check("Zm9vYmFy", "foobar");
    check("Zm9v\nYmE=\r\n", "fooba");
    check("a3Nj aGVk", "ksched");
    unsigned char out[16];
    size_t len;
    assert_false(ks_base64_decode("Zm9v*", 5, out, &len));
    assert_false(ks_base64_decode("Zm\t9v", 5, out, &len));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
