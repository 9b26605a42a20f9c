/* The topology pair table shared by InterPodAffinity and PodTopologySpread:
 * serial semantics, and concurrent filling from many threads (growth while
 * others insert, buffers overflowing, existing-keys-only mode). */
#include "plugins/helper/topocount.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_serial_counts_and_nonzero(void **s) {
    ks_pairtab t;
    ks_pairtab_init(&t, 0);
    assert_int_equal(ks_pairtab_get(&t, ks_pair(1, 2)), 0);
    assert_false(ks_pairtab_find(&t, ks_pair(1, 2), NULL));
    assert_int_equal(ks_pairtab_add(&t, ks_pair(1, 2), 3), 3);
    assert_int_equal(ks_pairtab_add(&t, ks_pair(1, 3), 0), 0);
    assert_int_equal(t.nkeys, 2);
    assert_int_equal(t.nnonzero, 1);
    /* a key present with count 0 is still a key (an empty domain) */
    int64_t v = -1;
    assert_true(ks_pairtab_find(&t, ks_pair(1, 3), &v));
    assert_int_equal(v, 0);
    /* reaching zero is upstream's delete: no longer counted as an entry */
    assert_int_equal(ks_pairtab_add(&t, ks_pair(1, 2), -3), 0);
    assert_int_equal(t.nnonzero, 0);
    assert_int_equal(ks_pairtab_add(&t, ks_pair(1, 2), -1), -1);
    assert_int_equal(t.nnonzero, 1);
    /* id 0 (the empty string) is a valid value and key */
    ks_pairtab_add(&t, ks_pair(0, 0), 7);
    assert_int_equal(ks_pairtab_get(&t, ks_pair(0, 0)), 7);
    assert_int_equal(ks_pair_a(ks_pair(5, 9)), 5);
    assert_int_equal(ks_pair_b(ks_pair(5, 9)), 9);
    ks_pairtab_free(&t);
}

static void test_growth_and_copy(void **s) {
    ks_pairtab t, c;
    ks_pairtab_init(&t, 4);
    for (uint32_t i = 0; i < 10000; i++) ks_pairtab_add(&t, ks_pair(i % 7, i), (int64_t)i + 1);
    ks_pairtab_copy(&c, &t);
    ks_pairtab_add(&t, ks_pair(3, 3), 100);
    for (uint32_t i = 0; i < 10000; i++) assert_int_equal(ks_pairtab_get(&c, ks_pair(i % 7, i)), (int64_t)i + 1);
    assert_int_equal(ks_pairtab_get(&t, ks_pair(3, 3)), 104);
    assert_int_equal(c.nkeys, 10000);
    assert_int_equal(c.nnonzero, 10000);
    ks_pairtab_free(&t);
    ks_pairtab_free(&c);
}

#define THREADS 8
#define PER_THREAD 5000

typedef struct worker {
    ks_pairtab_par *par;
    int id;
} worker;

/* Each thread adds one to a few shared "zone" keys and to its own
 * "hostname" keys, flushing through a buffer that overflows often. */
static void *fill(void *arg) {
    worker *w = arg;
    ks_pairbuf b;
    ks_pairbuf_init(&b, w->par);
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        ks_pairbuf_add(&b, ks_pair(1, i % 3), 1);
        ks_pairbuf_add(&b, ks_pair(2, (uint32_t)w->id * PER_THREAD + i), 2);
        if (i % 1000 == 999) ks_pairbuf_flush(&b);
    }
    ks_pairbuf_flush(&b);
    return NULL;
}

static void test_parallel_fill_grows_under_contention(void **s) {
    ks_pairtab t;
    ks_pairtab_init(&t, 0);
    ks_pairtab_par par;
    ks_pairtab_par_begin(&par, &t, false);
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){&par, i};
        pthread_create(&th[i], NULL, fill, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    ks_pairtab_par_end(&par);
    ks_pairtab_recount(&t);
    assert_int_equal(t.nkeys, 3 + THREADS * PER_THREAD);
    assert_int_equal(t.nnonzero, t.nkeys);
    int64_t zones = 0;
    for (uint32_t z = 0; z < 3; z++) zones += ks_pairtab_get(&t, ks_pair(1, z));
    assert_int_equal(zones, THREADS * PER_THREAD);
    for (uint32_t i = 0; i < THREADS * PER_THREAD; i++) assert_int_equal(ks_pairtab_get(&t, ks_pair(2, i)), 2);
    assert_true((uint64_t)t.nkeys * 4 <= (uint64_t)t.cap * 3);
    ks_pairtab_free(&t);
}

static void test_existing_only_drops_new_keys(void **s) {
    ks_pairtab t;
    ks_pairtab_init(&t, 0);
    ks_pairtab_add(&t, ks_pair(0, 1), 0);
    ks_pairtab_par par;
    ks_pairtab_par_begin(&par, &t, true);
    ks_pairbuf b;
    ks_pairbuf_init(&b, &par);
    for (uint32_t i = 0; i < 200; i++) ks_pairbuf_add(&b, ks_pair(0, i), 1);
    ks_pairbuf_flush(&b);
    ks_pairtab_par_end(&par);
    assert_int_equal(t.nkeys, 1);
    assert_int_equal(ks_pairtab_get(&t, ks_pair(0, 1)), 1);
    ks_pairtab_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_counts_and_nonzero),
        cmocka_unit_test(test_growth_and_copy),
        cmocka_unit_test(test_parallel_fill_grows_under_contention),
        cmocka_unit_test(test_existing_only_drops_new_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
