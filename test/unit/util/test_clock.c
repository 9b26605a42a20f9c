/* The two clocks behind ks_clock: the simulated one moves only when told
 * and never waits; the real one reads and waits on real time. */
#include "util/clock.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void test_simulated_moves_when_told(void **state) {
    (void)state;
    ks_clock *c = ks_clock_sim_new(1000);
    assert_int_equal(ks_clock_now(c), 1000);
    ks_clock_sim_set(c, 5000);
    assert_int_equal(ks_clock_now(c), 5000);
    /* never backwards */
    ks_clock_sim_set(c, 4000);
    assert_int_equal(ks_clock_now(c), 5000);
    /* waiting until t is being at t */
    ks_clock_wait_until(c, 7 * KS_NS_PER_SEC);
    assert_int_equal(ks_clock_now(c), 7 * KS_NS_PER_SEC);
    ks_clock_free(c);
}

/* A simulated clock cannot pass time by waiting: the wait comes back at
 * once, unsignalled, its time unchanged, even with no deadline. */
static void test_simulated_never_waits(void **state) {
    (void)state;
    ks_clock *c = ks_clock_sim_new(1000);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&mu);
    assert_false(ks_clock_cond_wait(c, &cv, &mu, 2000));
    assert_false(ks_clock_cond_wait(c, &cv, &mu, INT64_MAX));
    pthread_mutex_unlock(&mu);
    assert_int_equal(ks_clock_now(c), 1000);
    ks_clock_free(c);
}

static void test_real_clock(void **state) {
    (void)state;
    ks_clock *c = ks_clock_real();
    int64_t before = ks_wall_ns();
    int64_t now = ks_clock_now(c);
    assert_true(now >= before && now <= ks_wall_ns());
    /* NULL reads the real clock too */
    assert_true(ks_clock_now(NULL) >= now);
    /* setting it is ignored */
    ks_clock_sim_set(c, 0);
    assert_true(ks_clock_now(c) >= now);
    /* a deadline already past: a timeout at once */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&mu);
    assert_false(ks_clock_cond_wait(c, &cv, &mu, now - KS_NS_PER_SEC));
    pthread_mutex_unlock(&mu);
    /* waiting until a time past returns */
    ks_clock_wait_until(c, now - KS_NS_PER_SEC);
    ks_clock_free(c); /* no-op */
    assert_true(ks_clock_now(ks_clock_real()) >= now);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simulated_moves_when_told),
        cmocka_unit_test(test_simulated_never_waits),
        cmocka_unit_test(test_real_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
