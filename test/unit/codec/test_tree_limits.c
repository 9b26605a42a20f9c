/* Resource limits of the document parsers (docs/manifests.md, "Limits"):
 * nesting depth in YAML (flow, block, through aliases) and JSON, refused
 * early with one message; string length; alias expansion (billion
 * laughs). Each limit is
 * tested at the limit (accepted) and one past it (refused). */
#include "codec/tree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *DEEP = "maps and lists nested deeper than 2048 levels";

/* Parse text; NULL when it parses, else the message (malloc'd). */
static char *parse_err(const char *name, const char *text, size_t len) {
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    bool ok = kt_parse(a, name, text, len, &docs, &n, &err);
    ks_arena_free(a);
    if (ok) assert_null(err);
    return ok ? NULL : err;
}

/* prefix + depth x open + depth x close + suffix */
static char *nest(const char *prefix, const char *open, const char *close, int depth, const char *suffix) {
    size_t lo = strlen(open), lc = strlen(close);
    size_t n = strlen(prefix) + (size_t)depth * (lo + lc) + strlen(suffix) + 1;
    char *s = malloc(n), *p = s;
    p = stpcpy(p, prefix);
    for (int i = 0; i < depth; i++) p = stpcpy(p, open);
    for (int i = 0; i < depth; i++) p = stpcpy(p, close);
    strcpy(p, suffix);
    return s;
}

static void test_yaml_flow_depth(void **st) {
    (void)st;
    /* a: [[...]]: the map is one level, so 2047 lists reach the limit */
    char *ok = nest("a: ", "[", "]", KT_MAX_DEPTH - 1, "\n");
    char *err = parse_err("deep.yaml", ok, strlen(ok));
    assert_null(err);
    free(ok);
    char *bad = nest("a: ", "[", "]", KT_MAX_DEPTH, "\n");
    err = parse_err("deep.yaml", bad, strlen(bad));
    assert_non_null(err);
    char want[128];
    snprintf(want, sizeof(want), "deep.yaml:1: %s", DEEP);
    assert_string_equal(err, want);
    free(err);
    free(bad);
    /* the case: 1 MB of nesting (refused at the limit, quickly,
     * instead of after parsing all of it) */
    bad = nest("a: ", "[", "]", 500000, "\n");
    err = parse_err("deep.yaml", bad, strlen(bad));
    assert_non_null(err);
    assert_non_null(strstr(err, DEEP));
    free(err);
    free(bad);
    /* flow maps count the same */
    bad = nest("", "{a: ", "}", KT_MAX_DEPTH + 1, "\n");
    err = parse_err("deep.yaml", bad, strlen(bad));
    assert_non_null(err);
    assert_non_null(strstr(err, DEEP));
    free(err);
    free(bad);
}

static void test_yaml_block_depth(void **st) {
    (void)st;
    /* block maps: indentation nests; the error names the line */
    size_t cap = (size_t)(KT_MAX_DEPTH + 2) * (KT_MAX_DEPTH + 2) + 100000;
    char *s = malloc(cap), *p = s;
    for (int i = 0; i <= KT_MAX_DEPTH; i++) {
        memset(p, ' ', (size_t)i);
        p += i;
        p = stpcpy(p, "k:\n");
    }
    memset(p, ' ', KT_MAX_DEPTH + 1);
    p += KT_MAX_DEPTH + 1;
    strcpy(p, "v\n");
    char *err = parse_err("block.yaml", s, strlen(s));
    assert_non_null(err);
    char want[128];
    snprintf(want, sizeof(want), "block.yaml:%d: %s", KT_MAX_DEPTH + 1, DEEP);
    assert_string_equal(err, want);
    free(err);
    free(s);
}

static void test_yaml_alias_depth(void **st) {
    (void)st;
    /* an alias nests its anchor's levels: 1100 + 1100 > 2048 */
    char *deep = nest("a: &x ", "[", "]", 1100, "\n");
    char *inner = nest("b: ", "[", "", 1100, "");
    size_t n = strlen(deep) + strlen(inner) + 2000;
    char *doc = malloc(n);
    snprintf(doc, n, "%s%s*x", deep, inner);
    for (int i = 0; i < 1100; i++) strcat(doc, "]");
    strcat(doc, "\n");
    char *err = parse_err("alias.yaml", doc, strlen(doc));
    assert_non_null(err);
    assert_non_null(strstr(err, DEEP));
    free(err);
    /* the same alias one level up from the limit is fine */
    snprintf(doc, n, "%sb: *x\n", deep);
    err = parse_err("alias.yaml", doc, strlen(doc));
    assert_null(err);
    free(doc);
    free(inner);
    free(deep);
}

static void test_json_depth(void **st) {
    (void)st;
    char *ok = nest("", "[", "]", KT_MAX_DEPTH, "");
    char *err = parse_err("deep.json", ok, strlen(ok));
    assert_null(err);
    free(ok);
    char *bad = nest("{\"a\": ", "[", "]", KT_MAX_DEPTH, "}");
    err = parse_err("deep.json", bad, strlen(bad));
    assert_non_null(err);
    char want[128];
    snprintf(want, sizeof(want), "deep.json:1: %s", DEEP);
    assert_string_equal(err, want);
    free(err);
    free(bad);
}

/* A document with a string of n bytes on line 2, as a value or a key. */
static char *long_string(bool json, bool as_key, size_t n) {
    static const char *const pre[2][2] = {{"a: 1\nk: ", "a: 1\n? "}, {"\n{\"k\": \"", "\n{\""}};
    static const char *const post[2][2] = {{"\n", "\n: 1\n"}, {"\"}", "\": 1}"}};
    char *s = malloc(n + 32), *p = s;
    p = stpcpy(p, pre[json][as_key]);
    memset(p, 'x', n);
    strcpy(p + n, post[json][as_key]);
    return s;
}

static void test_string_size(void **st) {
    (void)st;
    char want[128];
    for (int json = 0; json < 2; json++) {
        for (int key = 0; key < 2; key++) {
            char *ok = long_string(json, key, KT_MAX_STRING);
            char *err = parse_err(json ? "s.json" : "s.yaml", ok, strlen(ok));
            if (err) fail_msg("json %d key %d: %s", json, key, err);
            free(ok);
            char *bad = long_string(json, key, KT_MAX_STRING + 1);
            err = parse_err(json ? "s.json" : "s.yaml", bad, strlen(bad));
            assert_non_null(err);
            snprintf(want, sizeof(want), "%s:2: a string of %u bytes (the limit is %u)",
                     json ? "s.json" : "s.yaml", KT_MAX_STRING + 1, KT_MAX_STRING);
            assert_string_equal(err, want);
            free(err);
            free(bad);
        }
    }
}

static void test_aliasing_bomb(void **st) {
    (void)st;
    /* ten aliases of ten aliases of ...: a billion nodes expanded */
    char doc[4096] = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 9; i++) {
        char line[256];
        snprintf(line, sizeof(line), "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
                 i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        strcat(doc, line);
    }
    char *err = parse_err("bomb.yaml", doc, strlen(doc));
    assert_non_null(err);
    assert_non_null(strstr(err, "document contains excessive aliasing"));
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_flow_depth), cmocka_unit_test(test_yaml_block_depth),
        cmocka_unit_test(test_yaml_alias_depth), cmocka_unit_test(test_json_depth),
        cmocka_unit_test(test_string_size), cmocka_unit_test(test_aliasing_bomb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
