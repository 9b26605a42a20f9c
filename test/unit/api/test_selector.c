/* Label selectors and node selector terms over interned labels, with
 * upstream's rules: a nil selector matches nothing, an empty one
 * everything; NotIn and DoesNotExist match an absent key; Gt/Lt compare
 * integers and never match a non-integer value; a node selector term
 * without requirements matches nothing; matchFields reads metadata.name. */
#include "api/selector.h"
#include "api/resource.h"
#include "util/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static ks_arena *arena;

/* labels("k1", "v1", "k2", "v2", NULL) */
static ks_labels labels(const char *k, ...) {
    ks_labels l = {0};
    l.kv = ks_arena_calloc(arena, 16, sizeof(ks_label));
    va_list ap;
    va_start(ap, k);
    for (; k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        l.kv[l.n++] = (ks_label){ks_intern(k), ks_intern(v)};
    }
    va_end(ap);
    assert_true(ks_labels_sort(&l));
    return l;
}

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

/* req("key", op, "v1", "v2", NULL) */
static ks_requirement req(const char *key, ks_op op, ...) {
    ks_requirement r = {.key = ks_intern(key), .op = op};
    r.values = ks_arena_calloc(arena, 8, sizeof(ks_id));
    va_list ap;
    va_start(ap, op);
    for (const char *v; (v = va_arg(ap, const char *));) r.values[r.nvalues++] = ks_intern(v);
    va_end(ap);
    qsort(r.values, r.nvalues, sizeof(ks_id), cmp_id);
    if ((op == KS_OP_GT || op == KS_OP_LT) && r.nvalues == 1)
        assert_true(ks_parse_int64(ks_str(r.values[0]), &r.num));
    return r;
}

static ks_label_selector sel(int n, ...) {
    ks_label_selector s = {0};
    s.reqs = ks_arena_calloc(arena, (size_t)n + 1, sizeof(ks_requirement));
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) s.reqs[s.nreq++] = va_arg(ap, ks_requirement);
    va_end(ap);
    return s;
}

static int setup(void **st) {
    (void)st;
    ks_api_init();
    arena = ks_arena_new(0);
    return 0;
}

static int teardown(void **st) {
    (void)st;
    ks_arena_free(arena);
    return 0;
}

static void test_nil_and_empty(void **st) {
    (void)st;
    ks_labels l = labels("app", "web", NULL);
    ks_labels none = {0};
    ks_label_selector nil = {.nothing = true};
    ks_label_selector empty = {0};
    assert_false(ks_selector_matches(&nil, &l));
    assert_false(ks_selector_matches(&nil, &none));
    assert_true(ks_selector_matches(&empty, &l));
    assert_true(ks_selector_matches(&empty, &none));
}

static void test_operators(void **st) {
    (void)st;
    ks_labels l = labels("app", "web", "tier", "front", "gen", "7", NULL);
    ks_labels none = {0};
    struct {
        ks_requirement r;
        bool on_l, on_none;
    } t[] = {
        {req("app", KS_OP_IN, "web", "db", NULL), true, false},
        {req("app", KS_OP_IN, "db", NULL), false, false},
        {req("app", KS_OP_NOT_IN, "db", NULL), true, true},
        {req("app", KS_OP_NOT_IN, "web", NULL), false, true},
        {req("app", KS_OP_EXISTS, NULL), true, false},
        {req("app", KS_OP_DOES_NOT_EXIST, NULL), false, true},
        {req("gen", KS_OP_GT, "6", NULL), true, false},
        {req("gen", KS_OP_GT, "7", NULL), false, false},
        {req("gen", KS_OP_LT, "8", NULL), true, false},
        {req("gen", KS_OP_LT, "-1", NULL), false, false},
        {req("app", KS_OP_GT, "1", NULL), false, false}, /* "web" is no integer */
        {req("gen", KS_OP_GT, "+6", NULL), true, false}, /* ParseInt takes a sign */
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (ks_requirement_matches(&t[i].r, &l) != t[i].on_l) fail_msg("case %zu on labels", i);
        if (ks_requirement_matches(&t[i].r, &none) != t[i].on_none) fail_msg("case %zu on none", i);
    }
    /* all requirements must hold */
    ks_label_selector s = sel(2, req("app", KS_OP_IN, "web", NULL), req("tier", KS_OP_IN, "back", NULL));
    assert_false(ks_selector_matches(&s, &l));
    s = sel(2, req("app", KS_OP_IN, "web", NULL), req("tier", KS_OP_NOT_IN, "back", NULL));
    assert_true(ks_selector_matches(&s, &l));
}

static void test_parse_int64(void **st) {
    (void)st;
    int64_t v;
    assert_true(ks_parse_int64("9223372036854775807", &v));
    assert_int_equal(v, INT64_MAX);
    assert_true(ks_parse_int64("-9223372036854775808", &v));
    assert_true(v == INT64_MIN);
    assert_false(ks_parse_int64("9223372036854775808", &v));
    assert_false(ks_parse_int64("", &v));
    assert_false(ks_parse_int64("-", &v));
    assert_false(ks_parse_int64("1.0", &v));
    assert_false(ks_parse_int64(" 1", &v));
    assert_false(ks_parse_int64("0x10", &v));
}

static void test_node_selector_terms(void **st) {
    (void)st;
    ks_labels l = labels("zone", "a", "disk", "ssd", NULL);
    ks_id n1 = ks_intern("node-1");
    ks_node_selector_term empty = {0};
    assert_false(ks_node_selector_term_matches(&empty, &l, n1));

    ks_requirement zone_a = req("zone", KS_OP_IN, "a", NULL);
    ks_requirement zone_b = req("zone", KS_OP_IN, "b", NULL);
    ks_requirement name_in = req("metadata.name", KS_OP_IN, "node-1", NULL);
    ks_requirement name_not = req("metadata.name", KS_OP_NOT_IN, "node-1", NULL);
    ks_requirement other_field = req("metadata.uid", KS_OP_IN, "x", NULL);

    ks_node_selector_term t1 = {.nexpr = 1, .exprs = &zone_a};
    assert_true(ks_node_selector_term_matches(&t1, &l, n1));
    ks_node_selector_term t2 = {.nfields = 1, .fields = &name_in};
    assert_true(ks_node_selector_term_matches(&t2, &l, n1));
    assert_false(ks_node_selector_term_matches(&t2, &l, ks_intern("node-2")));
    ks_node_selector_term t3 = {.nfields = 1, .fields = &name_not};
    assert_false(ks_node_selector_term_matches(&t3, &l, n1));
    assert_true(ks_node_selector_term_matches(&t3, &l, ks_intern("node-2")));
    /* a field a node does not have reads as "" */
    ks_node_selector_term t4 = {.nfields = 1, .fields = &other_field};
    assert_false(ks_node_selector_term_matches(&t4, &l, n1));
    /* expressions and fields are ANDed */
    ks_node_selector_term t5 = {.nexpr = 1, .exprs = &zone_b, .nfields = 1, .fields = &name_in};
    assert_false(ks_node_selector_term_matches(&t5, &l, n1));

    /* terms are ORed; no terms match nothing */
    ks_node_selector_term terms[2] = {t5, t1};
    ks_node_selector ns = {.nterms = 2, .terms = terms};
    assert_true(ks_node_selector_matches(&ns, &l, n1));
    ks_node_selector none = {0};
    assert_false(ks_node_selector_matches(&none, &l, n1));
    ks_node_selector only_empty = {.nterms = 1, .terms = &empty};
    assert_false(ks_node_selector_matches(&only_empty, &l, n1));
}

static void test_labels(void **st) {
    (void)st;
    ks_labels l = labels("b", "2", "a", "1", "c", "3", NULL);
    ks_id v;
    assert_true(ks_labels_get(&l, ks_intern("a"), &v));
    assert_string_equal(ks_str(v), "1");
    assert_true(ks_labels_has(&l, ks_intern("c")));
    assert_false(ks_labels_has(&l, ks_intern("d")));
    ks_label dup[2] = {{ks_intern("x"), ks_intern("1")}, {ks_intern("x"), ks_intern("2")}};
    ks_labels d = {2, dup};
    assert_false(ks_labels_sort(&d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nil_and_empty), cmocka_unit_test(test_operators),
        cmocka_unit_test(test_parse_int64),   cmocka_unit_test(test_node_selector_terms),
        cmocka_unit_test(test_labels),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
