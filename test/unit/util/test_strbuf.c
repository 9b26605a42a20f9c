/* String buffers and Go's strconv.Quote (ks_sb_quote): the escapes Go
 * writes, bytes outside UTF-8, and valid UTF-8 kept as it is. */
#include "util/strbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static void quoted(const char *in, size_t n, const char *want) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_quote(&b, in, n);
    assert_string_equal(ks_sb_str(&b), want);
    ks_sb_free(&b);
}

static void test_quote_escapes(void **state) {
    (void)state;
    /* strconv.Quote("\a\b\f\n\r\t\v\"\\") */
    quoted("\a\b\f\n\r\t\v\"\\", 9, "\"\\a\\b\\f\\n\\r\\t\\v\\\"\\\\\"");
    /* other control bytes and DEL as \x */
    quoted("\x01\x1f\x7f", 3, "\"\\x01\\x1f\\x7f\"");
    /* a NUL inside the counted bytes */
    quoted("a\0b", 3, "\"a\\x00b\"");
    quoted("", 0, "\"\"");
}

static void test_quote_utf8(void **state) {
    (void)state;
    quoted("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* a lone continuation byte, an overlong form, a surrogate, a cut sequence */
    quoted("\x80", 1, "\"\\x80\"");
    quoted("\xc0\xaf", 2, "\"\\xc0\\xaf\"");
    quoted("\xed\xa0\x80", 3, "\"\\xed\\xa0\\x80\"");
    quoted("\xe2\x82", 2, "\"\\xe2\\x82\"");
    assert_int_equal(ks_utf8_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
    assert_int_equal(ks_utf8_len((const unsigned char *)"\xe2\x82\xac", 2), 0);
}

static void test_quote_str(void **state) {
    (void)state;
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_quote_str(&b, "say \"hi\"");
    assert_string_equal(ks_sb_str(&b), "\"say \\\"hi\\\"\"");
    ks_sb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quote_escapes),
        cmocka_unit_test(test_quote_utf8),
        cmocka_unit_test(test_quote_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
