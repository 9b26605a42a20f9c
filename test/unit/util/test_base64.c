/* Standard base64: the values of the alphabet, decoding with padding and
 * line breaks, the first character that is not base64, encoding. */
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

/* RFC 4648's test vectors, and a round trip over every byte value. */
static void test_encode(void **st) {
    (void)st;
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    char out[16];
    for (int i = 0; i < 7; i++) {
        assert_int_equal(ks_base64_encoded_len(strlen(in[i])), strlen(want[i]));
        ks_base64_encode(in[i], strlen(in[i]), out);
        assert_string_equal(out, want[i]);
    }
    unsigned char all[256], back[256 + 3];
    char enc[345];
    for (int i = 0; i < 256; i++) all[i] = (unsigned char)i;
    ks_base64_encode(all, sizeof all, enc);
    size_t len = 0;
    assert_true(ks_base64_decode(enc, strlen(enc), back, &len));
    assert_int_equal(len, 256);
    assert_memory_equal(back, all, 256);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
