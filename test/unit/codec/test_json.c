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

/* ---- the writer: kt_to_json against jansson's json_dumps ---- */

static void emit_same(const ks_tree *t) {
    static const int indents[] = {0, 1, 4, 40, -1};
    for (size_t i = 0; i < sizeof(indents) / sizeof(*indents); i++) {
        char *w = kt_to_json(t, indents[i]), *j = kt_to_json_jansson(t, indents[i]);
        if ((w == NULL) != (j == NULL) || (w && strcmp(w, j) != 0))
            fail_msg("indent %d: writer %s, jansson %s", indents[i], w ? w : "(null)", j ? j : "(null)");
        free(w);
        free(j);
    }
}

static void emit_text(const char *text) {
    ks_arena *a = ks_arena_new(0);
    ks_tree **d = NULL;
    uint32_t n = 0;
    char *err = NULL;
    if (kt_parse_json_jansson(a, "t.json", text, strlen(text), &d, &n, &err))
        for (uint32_t i = 0; i < n; i++) emit_same(d[i]);
    free(err);
    ks_arena_free(a);
}

static void test_emit_cases(void **st) {
    (void)st;
    static const char *docs[] = {
        "{}", "[]", "{\"a\":[]}", "{\"a\":{}}", "{\"a\":[1,[2,[3,{}]]],\"b\":{\"c\":null}}",
        "{\"k\":\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0001 \\u001f \\u007f\"}",
        "{\"u\":\"\\u00e9\\u4e2d\\ud83d\\ude00\"}",
        "{\"n\":[0, -0, 9223372036854775807, -9223372036854775808, 1e3, 1E-3, 1.5e+10, -0.0, 0.1, 1e300, 5e-324]}",
        "null", "42", "\"s\"", "true", "[1.0, 100.0, 123456789012345678, 0.30000000000000004]",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(*docs); i++) emit_text(docs[i]);

    ks_arena *a = ks_arena_new(0);
    emit_same(NULL);
    /* a key twice, and keys and strings needing UTF-8 repair: jansson's */
    ks_tree *m = kt_new(a, KT_MAP, 1);
    kt_map_add(a, m, "dup", kt_int(a, 1));
    kt_map_add(a, m, "x", kt_string(a, "bad \xff byte \x01", 1));
    kt_map_add(a, m, "dup", kt_int(a, 3));
    emit_same(m);
    ks_tree *k = kt_new(a, KT_MAP, 1);
    kt_map_add(a, k, "k\xc3", kt_bool(a, true));
    emit_same(k);
    /* a big map, and a non-finite real (both sides fail) */
    ks_tree *big = kt_new(a, KT_MAP, 1);
    for (int i = 0; i < 100; i++) {
        char key[16];
        snprintf(key, sizeof(key), "k%d", i);
        kt_map_add(a, big, ks_arena_strdup(a, key), kt_int(a, i));
    }
    emit_same(big);
    ks_tree *inf = kt_new(a, KT_FLOAT, 1);
    inf->fval = 1.0 / 0.0;
    ks_tree *seq = kt_new(a, KT_SEQ, 1);
    kt_seq_add(a, seq, inf);
    emit_same(seq);
    assert_null(kt_to_json(seq, 0));
    /* nested past the depth limit: both fail */
    ks_tree *deep = kt_new(a, KT_SEQ, 1);
    for (int i = 0; i < 10005; i++) {
        ks_tree *outer = kt_new(a, KT_SEQ, 1);
        kt_seq_add(a, outer, deep);
        deep = outer;
    }
    assert_null(kt_to_json(deep, 0));
    assert_null(kt_to_json_jansson(deep, 0));
    ks_arena_free(a);
}

static void test_emit_random(void **st) {
    (void)st;
    char *b = NULL;
    size_t cap = 0;
    for (int i = 0; i < 2000; i++) {
        size_t n = 0;
        put(&b, &n, &cap, "");
        gen(&b, &n, &cap, 0);
        emit_text(b);
    }
    free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cases), cmocka_unit_test(test_random),
                                       cmocka_unit_test(test_emit_cases), cmocka_unit_test(test_emit_random)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
