/* Tolerations against taints, as v1.Toleration.ToleratesTaint. */
#include "api/taint.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static ks_taint taint(const char *k, const char *v, ks_effect e) {
    return (ks_taint){ks_intern(k), ks_intern(v), e};
}

static ks_toleration tol(const char *k, ks_tol_op op, const char *v, ks_effect e) {
    return (ks_toleration){.key = ks_intern(k), .value = ks_intern(v), .op = op, .effect = e};
}

static void test_tolerates(void **st) {
    (void)st;
    ks_taint gpu = taint("gpu", "true", KS_EFFECT_NO_SCHEDULE);
    struct {
        ks_toleration t;
        bool want;
    } cases[] = {
        {tol("gpu", KS_TOL_EQUAL, "true", KS_EFFECT_NO_SCHEDULE), true},
        {tol("gpu", KS_TOL_EQUAL, "false", KS_EFFECT_NO_SCHEDULE), false},
        {tol("gpu", KS_TOL_EQUAL, "true", KS_EFFECT_NO_EXECUTE), false},
        {tol("gpu", KS_TOL_EQUAL, "true", KS_EFFECT_ALL), true},     /* empty effect: every effect */
        {tol("gpu", KS_TOL_EXISTS, "", KS_EFFECT_NO_SCHEDULE), true}, /* Exists ignores the value */
        {tol("gpu", KS_TOL_EXISTS, "", KS_EFFECT_PREFER_NO_SCHEDULE), false},
        {tol("", KS_TOL_EXISTS, "", KS_EFFECT_ALL), true},           /* tolerates everything */
        {tol("", KS_TOL_EXISTS, "", KS_EFFECT_NO_EXECUTE), false},   /* every key, one effect */
        {tol("", KS_TOL_EQUAL, "true", KS_EFFECT_ALL), true},        /* empty key matches any key */
        {tol("other", KS_TOL_EXISTS, "", KS_EFFECT_ALL), false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (ks_toleration_tolerates(&cases[i].t, &gpu) != cases[i].want) fail_msg("case %zu", i);

    /* an empty-valued taint is matched by Equal with an empty value */
    ks_taint cp = taint("node-role.kubernetes.io/control-plane", "", KS_EFFECT_NO_SCHEDULE);
    ks_toleration t = tol("node-role.kubernetes.io/control-plane", KS_TOL_EQUAL, "", KS_EFFECT_ALL);
    assert_true(ks_toleration_tolerates(&t, &cp));
}

static void test_list(void **st) {
    (void)st;
    ks_taint x = taint("x", "1", KS_EFFECT_NO_EXECUTE);
    ks_toleration tols[2] = {tol("y", KS_TOL_EXISTS, "", KS_EFFECT_ALL),
                             tol("x", KS_TOL_EQUAL, "1", KS_EFFECT_NO_EXECUTE)};
    assert_true(ks_tolerations_tolerate(tols, 2, &x));
    assert_false(ks_tolerations_tolerate(tols, 1, &x));
    assert_false(ks_tolerations_tolerate(NULL, 0, &x));
}

static void test_effect_names(void **st) {
    (void)st;
    assert_string_equal(ks_effect_name(KS_EFFECT_NO_SCHEDULE), "NoSchedule");
    assert_string_equal(ks_effect_name(KS_EFFECT_PREFER_NO_SCHEDULE), "PreferNoSchedule");
    assert_string_equal(ks_effect_name(KS_EFFECT_NO_EXECUTE), "NoExecute");
    assert_string_equal(ks_effect_name(KS_EFFECT_ALL), "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerates),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_effect_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
