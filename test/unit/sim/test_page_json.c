/* The HTML report's JSON text: what may appear inside a <script> element
 * (no '<', '>' or '&' anywhere), escapes JSON needs, UTF-8 kept and bytes
 * that are not UTF-8 replaced; the string table's positions. */
#include "sim/page_json.h"
#include "util/intern.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *quoted(const char *s) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_pj_str(&b, s);
    return ks_sb_take(&b);
}

static void expect(const char *in, const char *want) {
    char *got = quoted(in);
    assert_string_equal(got, want);
    free(got);
}

/* The text parses back (jansson) to the input. */
static void round_trip(const char *in) {
    char *got = quoted(in);
    json_error_t err;
    json_t *v = json_loads(got, JSON_DECODE_ANY, &err);
    assert_non_null(v);
    assert_string_equal(json_string_value(v), in);
    assert_null(strpbrk(got, "<>&"));
    json_decref(v);
    free(got);
}

static void test_script_safe(void **st) {
    (void)st;
    expect("</script><!--", "\"\\u003c/script\\u003e\\u003c!--\"");
    expect("a & b", "\"a \\u0026 b\"");
    expect("it's \"q\" \\", "\"it's \\\"q\\\" \\\\\"");
    expect("l1\nl2\t\x01", "\"l1\\nl2\\t\\u0001\"");
    expect(NULL, "null");
    round_trip("</script><script>alert(1)</script> it's \"quoted\" & more");
}

static void test_utf8(void **st) {
    (void)st;
    expect("\xc3\xbc \xe6\x97\xa5 \xf0\x9f\x98\x80", "\"\xc3\xbc \xe6\x97\xa5 \xf0\x9f\x98\x80\"");
    round_trip("zone-\xc3\xbc \xe6\x97\xa5\xe6\x9c\xac");
    /* a lone continuation byte, a truncated sequence, an overlong '/', a surrogate */
    expect("a\x80z", "\"a\\ufffdz\"");
    expect("a\xe6\x97", "\"a\\ufffd\\ufffd\"");
    expect("\xc0\xaf", "\"\\ufffd\\ufffd\"");
    expect("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
}

static void test_strings(void **st) {
    (void)st;
    ks_pj_strings t;
    ks_pj_strings_init(&t);
    assert_int_equal(ks_pj_string(&t, "b"), 0);
    assert_int_equal(ks_pj_string(&t, "a<"), 1);
    assert_int_equal(ks_pj_string(&t, "b"), 0);
    assert_int_equal(ks_pj_string(&t, NULL), 2);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_pj_strings_write(&b, &t);
    assert_string_equal(ks_sb_str(&b), "[\"b\",\"a\\u003c\",\"\"]");
    ks_sb_free(&b);
    ks_pj_strings_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_safe),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
