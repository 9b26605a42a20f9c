/* The worker pool: every item once, and a stopped job ran a prefix,
 * whether the caller ran it alone or shared it with helpers. */
#include "framework/parallelize.h"
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

typedef struct counting {
    size_t n;
    atomic_int *runs;
    int64_t busy_ns;      /* per item: long jobs get shared */
    size_t stop_at;       /* raise stop after this item (n: never) */
    atomic_bool stop;
    ks_parallelizer *nested; /* run a small nested job per item */
    atomic_int nested_runs;
} counting;

static void nested_item(size_t i, void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

static void item(size_t i, void *arg) {
    counting *c = arg;
    if (c->busy_ns) {
        int64_t until = ks_monotonic_ns() + c->busy_ns;
        while (ks_monotonic_ns() < until) {
        }
    }
    atomic_fetch_add(&c->runs[i], 1);
    if (c->nested) ks_parallelize(c->nested, 10, nested_item, &c->nested_runs, NULL);
    if (i == c->stop_at) atomic_store(&c->stop, true);
}

static size_t run(ks_parallelizer *p, counting *c) {
    c->runs = calloc(c->n, sizeof(*c->runs));
    atomic_init(&c->stop, false);
    atomic_init(&c->nested_runs, 0);
    return ks_parallelize(p, c->n, item, c, &c->stop);
}

static void check_prefix(const counting *c, size_t ran) {
    for (size_t i = 0; i < c->n; i++) assert_int_equal(atomic_load(&c->runs[i]), i < ran ? 1 : 0);
}

static void test_every_item_once(void **state) {
    for (int par = 1; par <= 4; par *= 2) {
        ks_parallelizer *p = ks_parallelizer_new(par);
        size_t sizes[] = {1, 2, 7, 100, 5000};
        for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
            counting c = {.n = sizes[k], .stop_at = sizes[k]};
            assert_int_equal(run(p, &c), c.n);
            check_prefix(&c, c.n);
            free(c.runs);
        }
        /* long enough to be shared with the helpers */
        counting c = {.n = 600, .stop_at = 600, .busy_ns = 2000};
        assert_int_equal(run(p, &c), c.n);
        check_prefix(&c, c.n);
        free(c.runs);
        ks_parallelizer_free(p);
    }
}

/* Alone, the caller stops right after the item that raised stop. */
static void test_stop_short_job(void **state) {
    ks_parallelizer *p = ks_parallelizer_new(4);
    counting c = {.n = 1000, .stop_at = 123};
    size_t ran = run(p, &c);
    assert_int_equal(ran, 124);
    check_prefix(&c, ran);
    free(c.runs);
    ks_parallelizer_free(p);
}

/* Shared, every chunk handed out finishes: still a prefix. */
static void test_stop_shared_job(void **state) {
    ks_parallelizer *p = ks_parallelizer_new(4);
    counting c = {.n = 1000, .stop_at = 700, .busy_ns = 2000};
    size_t ran = run(p, &c);
    assert_true(ran > 700);
    check_prefix(&c, ran);
    free(c.runs);
    ks_parallelizer_free(p);
}

static void test_nested_runs_inline(void **state) {
    ks_parallelizer *p = ks_parallelizer_new(4);
    counting c = {.n = 300, .stop_at = 300, .busy_ns = 2000, .nested = p};
    assert_int_equal(run(p, &c), 300);
    check_prefix(&c, 300);
    assert_int_equal(atomic_load(&c.nested_runs), 3000);
    free(c.runs);
    ks_parallelizer_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_once),
        cmocka_unit_test(test_stop_short_job),
        cmocka_unit_test(test_stop_shared_job),
        cmocka_unit_test(test_nested_runs_inline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
