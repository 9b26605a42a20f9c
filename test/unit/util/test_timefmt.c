/* RFC 3339 as the API server writes it and as Go's time.Parse reads it. */
#include "util/timefmt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void test_format(void **state) {
    (void)state;
    char b[KS_RFC3339_LEN];
    ks_time_format_rfc3339(1136214245LL * 1000000000LL + 123456789, false, b);
    assert_string_equal(b, "2006-01-02T15:04:05Z");
    ks_time_format_rfc3339(1136214245LL * 1000000000LL + 123456789, true, b);
    assert_string_equal(b, "2006-01-02T15:04:05.123456Z");
    /* before the epoch: the second below, the fraction counted up from it */
    ks_time_format_rfc3339(-1500000000LL, true, b);
    assert_string_equal(b, "1969-12-31T23:59:58.500000Z");
}

static void test_parse(void **state) {
    (void)state;
    int64_t ns;
    assert_true(ks_time_parse_rfc3339("2006-01-02T15:04:05Z", &ns));
    assert_int_equal(ns, 1136214245LL * 1000000000LL);
    assert_true(ks_time_parse_rfc3339("2006-01-02T15:04:05.5+01:30", &ns));
    assert_int_equal(ns, (1136214245LL - 5400) * 1000000000LL + 500000000);
    /* fraction beyond nine digits: the first nine kept */
    assert_true(ks_time_parse_rfc3339("1970-01-01T00:00:00.1234567891Z", &ns));
    assert_int_equal(ns, 123456789);
    int64_t sec;
    int32_t nsec;
    assert_true(ks_time_parse_rfc3339_sec("1969-12-31T23:59:59.25Z", &sec, &nsec));
    assert_int_equal(sec, -1);
    assert_int_equal(nsec, 250000000);
    /* what time.Parse refuses */
    assert_false(ks_time_parse_rfc3339("2006-02-30T00:00:00Z", &ns));
    assert_false(ks_time_parse_rfc3339("2006-01-02T15:04:60Z", &ns));
    assert_false(ks_time_parse_rfc3339("2006-01-02t15:04:05Z", &ns));
    assert_false(ks_time_parse_rfc3339("2006-01-02T15:04:05", &ns));
    assert_false(ks_time_parse_rfc3339("2006-01-02T15:04:05.Z", &ns));
    assert_false(ks_time_parse_rfc3339("2006-01-02T15:04:05+0100", &ns));
    assert_false(ks_time_parse_rfc3339(NULL, &ns));
    /* past 2262: as good as never */
    assert_true(ks_time_parse_rfc3339("3000-01-01T00:00:00Z", &ns));
    assert_int_equal(ns, INT64_MAX);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_format), cmocka_unit_test(test_parse)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
