/* The cycle state's slots: as many as keys were registered when the state
 * was made, grown by a later key's write; clones carry every value;
 * scheduling-only values go at the end of the scheduling cycle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "framework/cycle_state.h"

#include <stdio.h>
#include <stdlib.h>

static int freed;
static void count_free(void *p) {
    freed++;
    free(p);
}
static void *dup_int(const void *p) {
    int *c = malloc(sizeof(int));
    *c = *(const int *)p;
    return c;
}
static int *new_int(int v) {
    int *p = malloc(sizeof(int));
    *p = v;
    return p;
}

static void keys_registered_later(void **unused) {
    (void)unused;
    ks_state_key a = ks_state_key_get("test/a");
    assert_true(a >= 0);
    assert_int_equal(ks_state_key_get("test/a"), a);
    ks_cycle_state *st = ks_cycle_state_new();
    assert_true(st->nslots >= (uint32_t)a + 1);
    ks_cycle_state_write(st, a, new_int(1), count_free, dup_int);
    /* keys registered after the state was made: unset, then written */
    char name[32];
    ks_state_key late[40];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "test/late-%d", i);
        late[i] = ks_state_key_get(name);
        assert_true(late[i] > a);
        assert_null(ks_cycle_state_read(st, late[i]));
    }
    for (int i = 0; i < 40; i += 3) ks_cycle_state_write(st, late[i], new_int(100 + i), count_free, dup_int);
    assert_int_equal(*(int *)ks_cycle_state_read(st, a), 1);
    for (int i = 0; i < 40; i++) {
        int *v = ks_cycle_state_read(st, late[i]);
        if (i % 3) assert_null(v);
        else assert_int_equal(*v, 100 + i);
    }
    /* a clone copies every value, a new state has room for every key */
    ks_cycle_state *c = ks_cycle_state_clone(st);
    for (int i = 0; i < 40; i += 3) assert_int_equal(*(int *)ks_cycle_state_read(c, late[i]), 100 + i);
    ks_cycle_state *fresh = ks_cycle_state_new();
    assert_true(fresh->nslots >= (uint32_t)late[39] + 1);
    assert_null(ks_cycle_state_read(fresh, late[39]));
    /* replacing a value frees the old one; out-of-range keys are ignored */
    freed = 0;
    ks_cycle_state_write(c, a, new_int(2), count_free, dup_int);
    assert_int_equal(freed, 1);
    assert_int_equal(*(int *)ks_cycle_state_read(st, a), 1);
    assert_null(ks_cycle_state_read(st, -1));
    assert_null(ks_cycle_state_read(st, KS_MAX_STATE_KEYS));
    freed = 0;
    ks_cycle_state_free(c);
    assert_int_equal(freed, 1 + 14);
    freed = 0;
    ks_cycle_state_free(st);
    assert_int_equal(freed, 1 + 14);
    ks_cycle_state_free(fresh);
}

/* Arena memory lives until the state is freed; scratch until it is
 * dropped. */
static void arena_and_scratch(void **unused) {
    (void)unused;
    ks_cycle_state *st = ks_cycle_state_new();
    char *p = ks_cycle_state_alloc(st, 3000);
    for (int i = 0; i < 3000; i++) assert_int_equal(p[i], 0);
    char *q = ks_cycle_state_alloc_uninit(st, 100000);
    q[99999] = 1;
    ks_cycle_state_drop_scratch(st);
    assert_null(st->scratch);
    p[2999] = 1;
    /* the next state's arena starts at what cycles used */
    ks_cycle_state *next = ks_cycle_state_new();
    assert_non_null(ks_cycle_state_alloc(next, 3000));
    ks_cycle_state_free(next);
    ks_cycle_state_free(st);
}

/* A scheduling-only key's value goes when the scheduling cycle ends;
 * the others stay for the binding cycle. */
static void scheduling_only_values(void **unused) {
    (void)unused;
    ks_state_key keep = ks_state_key_get("test/binding");
    ks_state_key drop = ks_state_key_get("test/scheduling");
    ks_state_key_scheduling_only(drop);
    ks_cycle_state *st = ks_cycle_state_new();
    ks_cycle_state_write(st, keep, new_int(1), count_free, NULL);
    ks_cycle_state_write(st, drop, new_int(2), count_free, NULL);
    freed = 0;
    ks_cycle_state_drop_scratch(st);
    assert_int_equal(freed, 1);
    assert_null(ks_cycle_state_read(st, drop));
    assert_int_equal(*(int *)ks_cycle_state_read(st, keep), 1);
    ks_cycle_state_free(st);
    assert_int_equal(freed, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_registered_later),
        cmocka_unit_test(arena_and_scratch),
        cmocka_unit_test(scheduling_only_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
