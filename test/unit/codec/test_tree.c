/* The document tree: YAML typed as sigs.k8s.io/yaml types it, anchors and
 * merge keys, several documents, JSON streams, and emitters whose output
 * parses back to the same tree. */
#include "codec/tree.h"

#include <ksched/ksched.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static ks_arena *arena;

static ks_tree *parse1(const char *text) {
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (!kt_parse(arena, "t.yaml", text, strlen(text), &docs, &n, &err)) fail_msg("%s", err);
    assert_int_equal(n, 1);
    return docs[0];
}

/* The value of "v: <text>". */
static const ks_tree *scalar(const char *text) {
    char buf[256];
    snprintf(buf, sizeof(buf), "v: %s\n", text);
    return kt_get(parse1(buf), "v");
}

static int setup(void **st) {
    (void)st;
    arena = ks_arena_new(0);
    return 0;
}

static int teardown(void **st) {
    (void)st;
    ks_arena_free(arena);
    return 0;
}

static void test_yaml_typing(void **st) {
    (void)st;
    struct {
        const char *in;
        kt_type type;
        int64_t ival;
        double fval;
    } cases[] = {
        {"1", KT_INT, 1, 0},          {"-12", KT_INT, -12, 0},       {"0x1F", KT_INT, 31, 0},
        {"0o17", KT_INT, 15, 0},      {"010", KT_INT, 8, 0},         {"0b101", KT_INT, 5, 0},
        {"1_000", KT_INT, 1000, 0},   {"08", KT_FLOAT, 0, 8},        {"1e3", KT_FLOAT, 0, 1000},
        {"1.5", KT_FLOAT, 0, 1.5},    {".5", KT_FLOAT, 0, 0.5},      {"-.5", KT_FLOAT, 0, -0.5},
        {"5.", KT_FLOAT, 0, 5},       {"1e400", KT_STRING, 0, 0},    {"500m", KT_STRING, 0, 0},
        {"1Gi", KT_STRING, 0, 0},     {"yes", KT_BOOL, 1, 0},        {"On", KT_BOOL, 1, 0},
        {"n", KT_BOOL, 0, 0},         {"FALSE", KT_BOOL, 0, 0},      {"tRue", KT_STRING, 0, 0},
        {"~", KT_NULL, 0, 0},         {"null", KT_NULL, 0, 0},       {"", KT_NULL, 0, 0},
        {"\"1\"", KT_STRING, 0, 0},   {"'true'", KT_STRING, 0, 0},   {"2025-01-01", KT_STRING, 0, 0},
        {"!!str 12", KT_STRING, 0, 0}, {"!!float 3", KT_FLOAT, 0, 3}, {"9223372036854775807", KT_INT, INT64_MAX, 0},
        {"NaN", KT_STRING, 0, 0},     {"abc", KT_STRING, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const ks_tree *t = scalar(cases[i].in);
        kt_type want = cases[i].type;
        if (want == KT_NULL ? (t && t->type != KT_NULL) : (!t || t->type != want))
            fail_msg("%s: type %s, want %s", cases[i].in, t ? kt_type_name(t->type) : "absent",
                     kt_type_name(want));
        if (want == KT_INT && t->ival != cases[i].ival) fail_msg("%s: %lld", cases[i].in, (long long)t->ival);
        if (want == KT_BOOL && t->bval != (cases[i].ival != 0)) fail_msg("%s: bool", cases[i].in);
        if (want == KT_FLOAT && t->fval != cases[i].fval) fail_msg("%s: %g", cases[i].in, t->fval);
    }
    /* plain scalars keep their text; quoted ones are marked */
    assert_string_equal(scalar("0x1F")->text, "0x1F");
    assert_false(scalar("abc")->quoted);
    assert_true(scalar("'abc'")->quoted);
    /* non-string keys become the strings kubectl makes of them */
    ks_tree *t = parse1("on: 1\n12: 2\n1.5: 3\n");
    assert_string_equal(t->keys[0], "true");
    assert_string_equal(t->keys[1], "12");
    assert_string_equal(t->keys[2], "1.5");
}

static void test_number_text(void **st) {
    (void)st;
    char buf[64];
    assert_string_equal(kt_number_text(scalar("0x10"), buf, sizeof(buf)), "16");
    assert_string_equal(kt_number_text(scalar("1e3"), buf, sizeof(buf)), "1000");
    assert_string_equal(kt_number_text(scalar("0.1"), buf, sizeof(buf)), "0.1");
    assert_string_equal(kt_number_text(scalar("1e21"), buf, sizeof(buf)), "1e+21");
    assert_string_equal(kt_number_text(scalar("0.0000001"), buf, sizeof(buf)), "1e-7");
    assert_string_equal(kt_number_text(scalar("123456.789"), buf, sizeof(buf)), "123456.789");
    assert_null(kt_number_text(scalar("abc"), buf, sizeof(buf)));
}

static void test_structure(void **st) {
    (void)st;
    ks_tree *t = parse1("# a comment\na:\n  b: [1, 2]\n  c: {d: e}\nlist:\n- x\n- y: z\nblock: |\n  line1\n  line2\n");
    assert_int_equal(t->type, KT_MAP);
    assert_int_equal(t->line, 2);
    const ks_tree *a = kt_get(t, "a");
    assert_int_equal(a->line, 3);
    assert_int_equal(kt_get(a, "b")->n, 2);
    assert_int_equal(kt_get(a, "b")->items[1]->ival, 2);
    assert_string_equal(kt_get(kt_get(a, "c"), "d")->text, "e");
    const ks_tree *l = kt_get(t, "list");
    assert_int_equal(l->type, KT_SEQ);
    assert_int_equal(l->items[1]->line, 7);
    assert_string_equal(kt_get(t, "block")->text, "line1\nline2\n");
    assert_null(kt_get(t, "missing"));
    assert_null(kt_get(l, "x"));
    /* a key written twice: the last one counts */
    assert_int_equal(kt_get(parse1("k: 1\nk: 2\n"), "k")->ival, 2);
}

static void test_anchors_and_merge(void **st) {
    (void)st;
    ks_tree *t = parse1("base: &b {cpu: 1, memory: 2Gi}\nother: &o {cpu: 9, disk: 3}\n"
                        "x: *b\nyy:\n  <<: *b\n  memory: 4Gi\nzz:\n  <<: [*b, *o]\n");
    assert_ptr_equal(kt_get(t, "x"), kt_get(t, "base"));
    const ks_tree *y = kt_get(t, "yy");
    assert_int_equal(kt_get(y, "cpu")->ival, 1);
    assert_string_equal(kt_get(y, "memory")->text, "4Gi");
    const ks_tree *z = kt_get(t, "zz");
    assert_int_equal(kt_get(z, "cpu")->ival, 1); /* earlier maps of a merge list win */
    assert_int_equal(kt_get(z, "disk")->ival, 3);
    /* excessive aliasing is refused */
    char bomb[2048] = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    const char *prev = "a";
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "l%d", i);
        snprintf(bomb + strlen(bomb), sizeof(bomb) - strlen(bomb), "%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n",
                 name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev);
        prev = i == 0 ? "l0" : i == 1 ? "l1" : i == 2 ? "l2" : i == 3 ? "l3" : i == 4 ? "l4" : i == 5 ? "l5" : "l6";
    }
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    assert_false(kt_parse(arena, "bomb.yaml", bomb, strlen(bomb), &docs, &n, &err));
    assert_non_null(strstr(err, "excessive aliasing"));
    free(err);
}

static void test_documents(void **st) {
    (void)st;
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    const char *y = "---\na: 1\n---\n---\n# only a comment\n---\nb: 2\n...\n";
    assert_true(kt_parse(arena, "m.yaml", y, strlen(y), &docs, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(kt_get(docs[1], "b")->line, 7);
    const char *j = "{\"a\": 1}\n{\"b\": [true, null, 1.5, \"s\"]}  {\"c\": {}}\n";
    assert_true(kt_parse(arena, "m.json", j, strlen(j), &docs, &n, &err));
    assert_int_equal(n, 3);
    const ks_tree *b = kt_get(docs[1], "b");
    assert_int_equal(b->items[0]->type, KT_BOOL);
    assert_int_equal(b->items[1]->type, KT_NULL);
    assert_true(b->items[2]->fval == 1.5);
    assert_true(b->items[3]->quoted);
    assert_int_equal(docs[2]->line, 0);
    /* a YAML flow mapping is not JSON */
    const char *f = "{kind: Pod, metadata: {name: p}}";
    assert_true(kt_parse(arena, "f.yaml", f, strlen(f), &docs, &n, &err));
    assert_string_equal(kt_get(docs[0], "kind")->text, "Pod");
    assert_true(kt_parse(arena, "e.yaml", "", 0, &docs, &n, &err));
    assert_int_equal(n, 0);
    const char *bad = "{\"a\": 1}\n{\"b\": }\n";
    assert_false(kt_parse(arena, "bad.json", bad, strlen(bad), &docs, &n, &err));
    assert_string_equal(err, "bad.json:2: unexpected token near '}'");
    free(err);
}

/* Emitted YAML and JSON parse back to an equal tree. */
static bool equal(const ks_tree *a, const ks_tree *b) {
    if (a->type != b->type || a->n != b->n) return false;
    switch (a->type) {
    case KT_NULL: return true;
    case KT_BOOL: return a->bval == b->bval;
    case KT_INT: return a->ival == b->ival;
    case KT_FLOAT: return a->fval == b->fval;
    case KT_STRING: return strcmp(a->text, b->text) == 0;
    case KT_SEQ:
    case KT_MAP:
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->type == KT_MAP && strcmp(a->keys[i], b->keys[i]) != 0) return false;
            if (!equal(a->items[i], b->items[i])) return false;
        }
        return true;
    }
    return false;
}

static void test_emit_round_trip(void **st) {
    (void)st;
    const char *src = "s: plain\nq: \"true\"\nn: \"12\"\ne: \"\"\nnl: \"two\\nlines\"\nnothing: ~\nb: false\n"
                      "i: -7\nf: 1.0\ng: 0.1\nh: 1e-7\nlist: [a, {k: v}, [1, 2], []]\nempty: {}\n"
                      "\"key with: colon\": x\n\"1\": numeric key\nu: \"h\\u00e9llo\"\nstar: \"*x\"\ntilde: \"~\"\n";
    ks_tree *t = parse1(src);
    char *y = kt_to_yaml(t);
    assert_non_null(y);
    ks_tree *back = parse1(y);
    if (!equal(t, back)) fail_msg("YAML round trip differs:\n%s", y);
    char *j = kt_to_json(t, 2);
    assert_non_null(j);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    assert_true(kt_parse(arena, "j.json", j, strlen(j), &docs, &n, &err));
    if (!equal(t, docs[0])) fail_msg("JSON round trip differs:\n%s", j);
    char *compact = kt_to_json(kt_get(t, "list"), 0);
    assert_string_equal(compact, "[\"a\",{\"k\":\"v\"},[1,2],[]]");
    free(compact);
    free(y);
    free(j);
}

/* Strings that YAML 1.1 readers take for timestamps are quoted, as
 * kubectl prints them; other strings stay plain. */
static void test_emit_quotes_timestamps(void **st) {
    (void)st;
    ks_tree *m = kt_new(arena, KT_MAP, 0);
    kt_map_add(arena, m, "a", kt_string(arena, "2026-01-01T00:05:00Z", 0));
    kt_map_add(arena, m, "b", kt_string(arena, "2026-1-2", 0));
    kt_map_add(arena, m, "c", kt_string(arena, "2026-01-01 10:00:00", 0));
    kt_map_add(arena, m, "d", kt_string(arena, "2026-01-01x", 0));
    kt_map_add(arena, m, "e", kt_string(arena, "20261-01-01", 0));
    char *y = kt_to_yaml(m);
    assert_string_equal(y, "a: \"2026-01-01T00:05:00Z\"\nb: \"2026-1-2\"\nc: \"2026-01-01 10:00:00\"\n"
                           "d: 2026-01-01x\ne: 20261-01-01\n");
    free(y);
}

static void test_build(void **st) {
    (void)st;
    ks_tree *m = kt_new(arena, KT_MAP, 0);
    for (int i = 0; i < 20; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        kt_map_add(arena, m, k, kt_int(arena, i));
    }
    kt_map_set(arena, m, "k3", kt_string(arena, "three", 0));
    kt_map_set(arena, m, "new", kt_bool(arena, true));
    assert_int_equal(m->n, 21);
    assert_string_equal(kt_get(m, "k3")->text, "three");
    assert_int_equal(kt_get(m, "k19")->ival, 19);
    ks_tree *s = kt_new(arena, KT_SEQ, 0);
    for (int i = 0; i < 9; i++) kt_seq_add(arena, s, kt_int(arena, i));
    kt_map_add(arena, m, "seq", s);
    ks_arena *other = ks_arena_new(0);
    ks_tree *c = kt_copy(other, m);
    assert_true(equal(m, c));
    ks_arena_free(other);
}

/* The plugin-facing accessors over the same trees. */
static void test_args(void **st) {
    (void)st;
    const ks_args *a = parse1("name: x\nweight: 3\nratio: 2.0\nhalf: 2.5\non: true\nitems: [a, b]\n");
    assert_true(ks_args_is_map(a));
    assert_int_equal(ks_args_len(a), 6);
    assert_string_equal(ks_args_key(a, 0), "name");
    assert_string_equal(ks_args_string(ks_args_get(a, "name")), "x");
    int64_t v;
    assert_true(ks_args_int(ks_args_get(a, "weight"), &v));
    assert_int_equal(v, 3);
    assert_true(ks_args_int(ks_args_get(a, "ratio"), &v));
    assert_int_equal(v, 2);
    assert_false(ks_args_int(ks_args_get(a, "half"), &v));
    bool b = false;
    assert_true(ks_args_bool(ks_args_get(a, "true"), &b));
    assert_true(b);
    const ks_args *items = ks_args_get(a, "items");
    assert_false(ks_args_is_map(items));
    assert_int_equal(ks_args_len(items), 2);
    assert_string_equal(ks_args_string(ks_args_item(items, 1)), "b");
    assert_null(ks_args_item(items, 2));
    assert_null(ks_args_string(items));
    assert_null(ks_args_get(NULL, "x"));
    assert_int_equal(ks_args_len(NULL), 0);
}

/* An int made in code carries its decimal text (the protobuf decoder's
 * ints): both ends of int64 and zero. */
static void test_int_text(void **state) {
    (void)state;
    ks_arena *a = ks_arena_new(0);
    const int64_t v[] = {0, 7, -7, 1234567890123LL, INT64_MAX, INT64_MIN};
    const char *want[] = {"0", "7", "-7", "1234567890123", "9223372036854775807", "-9223372036854775808"};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        ks_tree *t = kt_int(a, v[i]);
        assert_int_equal(t->ival, v[i]);
        assert_string_equal(t->text, want[i]);
    }
    ks_arena_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_typing), cmocka_unit_test(test_number_text), cmocka_unit_test(test_int_text),
        cmocka_unit_test(test_structure),   cmocka_unit_test(test_anchors_and_merge),
        cmocka_unit_test(test_documents),   cmocka_unit_test(test_emit_round_trip),
        cmocka_unit_test(test_emit_quotes_timestamps),
        cmocka_unit_test(test_build),       cmocka_unit_test(test_args),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
