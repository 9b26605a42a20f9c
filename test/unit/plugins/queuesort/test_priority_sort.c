/* PrioritySort (cases from upstream priority_sort_test.go). */
#include "testutil_plugins.h"
#include "backend/queue_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_priority_sort;

static bool less(int32_t *p1, int64_t t1, int32_t *p2, int64_t t2) {
    ks_pod *a = tp_pod("a"), *b = tp_pod("b");
    if (p1) tp_pod_priority(a, *p1);
    if (p2) tp_pod_priority(b, *p2);
    tp_pod_done(a);
    tp_pod_done(b);
    ks_queued_pod qa = {.pod = a, .timestamp_ns = t1}, qb = {.pod = b, .timestamp_ns = t2};
    bool r = ks_plugin_priority_sort.less(NULL, &qa, &qb);
    ks_pod_unref(a);
    ks_pod_unref(b);
    return r;
}

static int32_t lo = 100, hi = 200, zero = 0;

static void higher_priority_first(void **st) {
    assert_false(less(&lo, 1, &hi, 2));
    assert_true(less(&hi, 2, &lo, 1));
}

static void equal_priority_earlier_timestamp_first(void **st) {
    assert_true(less(&hi, 1, &hi, 2));
    assert_false(less(&hi, 2, &hi, 1));
}

static void equal_priority_and_timestamp_is_not_less(void **st) {
    assert_false(less(&hi, 1, &hi, 1));
}

static void unset_priority_counts_as_zero(void **st) {
    assert_true(less(NULL, 1, &zero, 2));
    assert_false(less(NULL, 2, &zero, 1));
    assert_true(less(&lo, 5, NULL, 1));
}

static int setup(void **st) {
    ks_api_init();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(higher_priority_first),
        cmocka_unit_test(equal_priority_earlier_timestamp_first),
        cmocka_unit_test(equal_priority_and_timestamp_is_not_less),
        cmocka_unit_test(unset_priority_counts_as_zero),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
