/* kt_parse_json's direct parser against jansson's: on every input it
 * accepts, the same trees as jansson's path; inputs it refuses are
 * jansson's to judge (some valid, some not). Hand-written cases and
 * random documents from a seeded generator. */
#include "codec/tree.h"
#include "codec/tree_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static bool same(const ks_tree *x, const ks_tree *y) {
    if (x->type != y->type || x->n != y->n || x->quoted != y->quoted || x->line != y->line) return false;
    if ((x->text == NULL) != (y->text == NULL) || (x->text && strcmp(x->text, y->text) != 0)) return false;
    switch (x->type) {
    case KT_INT:
        if (x->ival != y->ival) return false;
        break;
    case KT_FLOAT:
        if (memcmp(&x->fval, &y->fval, sizeof(double)) != 0) return false;
        break;
    case KT_BOOL:
        if (x->bval != y->bval) return false;
        break;
    default: break;
    }
    for (uint32_t i = 0; i < x->n; i++) {
        if (x->type == KT_MAP && strcmp(x->keys[i], y->keys[i]) != 0) return false;
        if (!same(x->items[i], y->items[i])) return false;
    }
    return true;
}

/* 1: the fast path took it (and agrees), 0: left to jansson. */
static int check(const char *text, size_t len) {
    ks_arena *a = ks_arena_new(0);
    ks_tree **fd = NULL, **jd = NULL;
    uint32_t fn = 0, jn = 0;
    char *err = NULL;
    bool f = kt_parse_json_fast(a, text, len, &fd, &fn);
    bool j = kt_parse_json_jansson(a, "t.json", text, len, &jd, &jn, &err);
    if (f) {
        if (!j) fail_msg("fast path accepted what jansson refuses (%s): %.*s", err, (int)len, text);
        assert_int_equal(fn, jn);
        for (uint32_t i = 0; i < fn; i++)
            if (!same(fd[i], jd[i])) fail_msg("trees differ for: %.*s", (int)len, text);
    }
    free(err);
    ks_arena_free(a);
    return f;
}

static int checks(const char *text) { return check(text, strlen(text)); }

static void test_cases(void **st) {
    (void)st;
    static const char *taken[] = {
        "{}", "[]", "{\"a\":1}", " {\"a\" : [1, 2.5, -3, true, false, null, \"x\"]} ",
        "{\"a\":{\"b\":{\"c\":[[],[{}]]}}}", "{\"k\":\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"}",
        "{\"u\":\"\\u00e9\\u4e2d\\ud83d\\ude00\"}", "{\"utf8\":\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\"}",
        "{\"n\":[0, -0, 9223372036854775807, -9223372036854775808, 1e3, 1E-3, 1.5e+10, -0.0, 0.1]}",
        "{\"dup\":1,\"x\":2,\"dup\":3}", "{\"a\":1}{\"b\":2}", "{\"a\":1}\n{\"b\":2}\n", "[1]\n[2]",
        "{\"a\":null}", "{\"\":\"\"}", "{\"long\":\"" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\"}", "null", "42", "\"s\"",
    };
    for (size_t i = 0; i < sizeof(taken) / sizeof(*taken); i++)
        if (!checks(taken[i])) fail_msg("left to jansson: %s", taken[i]);
    /* jansson's to judge: invalid, or what the fast path does not take */
    static const char *left[] = {
        "{", "{\"a\":}", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "01", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
        "{\"a\":-}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\\udc00\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}", "{\"a\":\"\xc0\xaf\"}",
        "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xff\"}", "{\"a\":99999999999999999999}", "{\"a\":1e999}",
        "{\"a\":\"unterminated}", "1 2", "{} x", "[1] ]",
    };
    for (size_t i = 0; i < sizeof(left) / sizeof(*left); i++)
        if (checks(left[i])) fail_msg("fast path took: %s", left[i]);
    /* a NUL byte inside the text */
    assert_int_equal(check("{\"a\":\"x\0y\"}", 11), 0);
}

/* ---- random documents ---- */

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void put(char **b, size_t *n, size_t *cap, const char *s) {
    size_t k = strlen(s);
    if (*n + k + 1 > *cap) {
        while (*n + k + 1 > *cap) *cap = *cap ? *cap * 2 : 256;
        *b = realloc(*b, *cap);
    }
    memcpy(*b + *n, s, k + 1);
    *n += k;
}

static void gen_string(char **b, size_t *n, size_t *cap) {
    static const char *pieces[] = {"a", "key", "metadata", "\\n", "\\\"", "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9",
                                   " ", "/", "\\/", "\\t", "Z", "0"};
    put(b, n, cap, "\"");
    for (uint32_t i = rnd(6); i > 0; i--) put(b, n, cap, pieces[rnd(sizeof(pieces) / sizeof(*pieces))]);
    put(b, n, cap, "\"");
}

static void gen(char **b, size_t *n, size_t *cap, int depth) {
    static const char *scalars[] = {"0", "-1", "17", "3.25", "-2e5", "1E-7", "true", "false", "null", "100000000000"};
    uint32_t k = depth > 5 ? 2 + rnd(2) : rnd(4);
    if (k == 0) {
        put(b, n, cap, "{");
        for (uint32_t i = rnd(5); i > 0; i--) {
            gen_string(b, n, cap);
            put(b, n, cap, rnd(2) ? ":" : " : ");
            gen(b, n, cap, depth + 1);
            if (i > 1) put(b, n, cap, rnd(2) ? "," : ",\n ");
        }
        put(b, n, cap, "}");
    } else if (k == 1) {
        put(b, n, cap, "[");
        for (uint32_t i = rnd(5); i > 0; i--) {
            gen(b, n, cap, depth + 1);
            if (i > 1) put(b, n, cap, ", ");
        }
        put(b, n, cap, "]");
    } else if (k == 2) {
        gen_string(b, n, cap);
    } else {
        put(b, n, cap, scalars[rnd(sizeof(scalars) / sizeof(*scalars))]);
    }
}

static void test_random(void **st) {
    (void)st;
    char *b = NULL;
    size_t cap = 0;
    int taken = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = 0;
        put(&b, &n, &cap, "");
        for (uint32_t d = 1 + rnd(2); d > 0; d--) {
            put(&b, &n, &cap, "{\"v\":");
            gen(&b, &n, &cap, 0);
            put(&b, &n, &cap, "}\n");
        }
        /* now and then one byte broken */
        if (rnd(4) == 0 && n > 2) b[rnd((uint32_t)n)] = "x{}[],:\"\\\x80"[rnd(10)];
        taken += check(b, n);
    }
    free(b);
    assert_true(taken > 1500);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cases), cmocka_unit_test(test_random)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
