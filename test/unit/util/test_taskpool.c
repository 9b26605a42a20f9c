/* util/taskpool: threads start as tasks need them, never more than the
 * pool's size, and every task runs, also those queued while it is freed. */
#include "util/taskpool.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ran, running, peak;
    bool open; /* blocking tasks may finish */
} G = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, false};

static void quick(void *arg) {
    (void)arg;
    pthread_mutex_lock(&G.mu);
    G.ran++;
    pthread_mutex_unlock(&G.mu);
}

static void blocking(void *arg) {
    (void)arg;
    pthread_mutex_lock(&G.mu);
    G.running++;
    if (G.running > G.peak) G.peak = G.running;
    pthread_cond_broadcast(&G.cv);
    while (!G.open) pthread_cond_wait(&G.cv, &G.mu);
    G.running--;
    G.ran++;
    pthread_mutex_unlock(&G.mu);
}

static void reset(void) {
    G.ran = G.running = G.peak = 0;
    G.open = false;
}

/* Tasks one after the other: one thread does them all. */
static void test_one_at_a_time(void **st) {
    (void)st;
    reset();
    ks_taskpool *p = ks_taskpool_new(16);
    assert_int_equal(ks_taskpool_threads(p), 0);
    for (int i = 0; i < 50; i++) {
        ks_taskpool_submit(p, quick, NULL);
        assert_true(ks_taskpool_wait_idle(p, INT64_MAX));
    }
    assert_int_equal(G.ran, 50);
    assert_int_equal(ks_taskpool_threads(p), 1);
    ks_taskpool_free(p);
}

/* Six tasks that hold their thread, in a pool of four: four threads,
 * four at once, the other two after them. */
static void test_bounded(void **st) {
    (void)st;
    reset();
    ks_taskpool *p = ks_taskpool_new(4);
    for (int i = 0; i < 6; i++) ks_taskpool_submit(p, blocking, NULL);
    pthread_mutex_lock(&G.mu);
    while (G.running < 4) pthread_cond_wait(&G.cv, &G.mu);
    pthread_mutex_unlock(&G.mu);
    usleep(20000);
    assert_int_equal(ks_taskpool_threads(p), 4);
    assert_int_equal(ks_taskpool_busy(p), 6);
    pthread_mutex_lock(&G.mu);
    assert_int_equal(G.peak, 4);
    G.open = true;
    pthread_cond_broadcast(&G.cv);
    pthread_mutex_unlock(&G.mu);
    assert_true(ks_taskpool_wait_idle(p, INT64_MAX));
    assert_int_equal(G.ran, 6);
    assert_int_equal(ks_taskpool_threads(p), 4);
    ks_taskpool_free(p);
}

static ks_taskpool *P;

static void chain(void *arg) {
    intptr_t n = (intptr_t)arg;
    quick(NULL);
    if (n > 0) ks_taskpool_submit(P, chain, (void *)(n - 1));
}

/* Tasks queued by tasks while the pool is freed still run. */
static void test_free_drains(void **st) {
    (void)st;
    reset();
    P = ks_taskpool_new(2);
    ks_taskpool_submit(P, chain, (void *)(intptr_t)20);
    ks_taskpool_free(P);
    assert_int_equal(G.ran, 21);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_at_a_time),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_free_drains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
