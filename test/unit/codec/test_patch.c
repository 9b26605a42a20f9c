/* RFC 6902 JSON Patch on document trees (codec/patch.c): the operations
 * `ksched why` prints and applies, RFC 6901 pointer escapes, and the
 * errors for paths that do not resolve. Expected documents are written
 * out by hand from RFC 6902's semantics. */
#include "codec/patch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Patch the JSON document `doc` and return it compact (malloc'd), or NULL
 * with *err when the patch fails. */
static char *patched(const char *doc, const char *patch, char **err) {
    ks_arena *a = ks_arena_new(4096);
    ks_tree **docs;
    uint32_t n;
    char *res = NULL;
    assert_true(kt_parse(a, "doc", doc, strlen(doc), &docs, &n, err));
    assert_int_equal(n, 1);
    if (kt_patch_apply(a, docs[0], patch, err)) res = kt_to_json(docs[0], 0);
    ks_arena_free(a);
    return res;
}

static void expect(const char *doc, const char *patch, const char *want) {
    char *err = NULL;
    char *got = patched(doc, patch, &err);
    if (!got) fail_msg("patch failed: %s", err);
    assert_string_equal(got, want);
    free(got);
}

static void expect_error(const char *doc, const char *patch, const char *fragment) {
    char *err = NULL;
    char *got = patched(doc, patch, &err);
    assert_null(got);
    assert_non_null(err);
    if (!strstr(err, fragment)) fail_msg("error \"%s\" lacks \"%s\"", err, fragment);
    free(err);
}

static void test_add(void **state) {
    (void)state;
    /* a new key; an existing key is replaced (RFC 6902 4.1) */
    expect("{\"spec\":{}}", "[{\"op\":\"add\",\"path\":\"/spec/tolerations\",\"value\":[{\"key\":\"a\"}]}]",
           "{\"spec\":{\"tolerations\":[{\"key\":\"a\"}]}}");
    expect("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":2}]", "{\"a\":2}");
    /* "-" appends; an index inserts before */
    expect("{\"l\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/l/-\",\"value\":3}]", "{\"l\":[1,2,3]}");
    expect("{\"l\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/l/0\",\"value\":0}]", "{\"l\":[0,1,2]}");
    expect("{\"l\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/l/2\",\"value\":3}]", "{\"l\":[1,2,3]}");
}

static void test_remove_replace(void **state) {
    (void)state;
    expect("{\"spec\":{\"unschedulable\":true,\"x\":1}}", "[{\"op\":\"remove\",\"path\":\"/spec/unschedulable\"}]",
           "{\"spec\":{\"x\":1}}");
    /* removing indices from the back keeps the earlier ones valid */
    expect("{\"t\":[\"a\",\"b\",\"c\"]}", "[{\"op\":\"remove\",\"path\":\"/t/2\"},{\"op\":\"remove\",\"path\":\"/t/0\"}]",
           "{\"t\":[\"b\"]}");
    expect("{\"c\":[{\"maxSkew\":1}]}", "[{\"op\":\"replace\",\"path\":\"/c/0/maxSkew\",\"value\":4}]",
           "{\"c\":[{\"maxSkew\":4}]}");
}

static void test_escapes(void **state) {
    (void)state;
    /* label keys hold "/" (~1) and may hold "~" (~0) */
    expect("{\"labels\":{\"kubernetes.io/hostname\":\"n1\"}}",
           "[{\"op\":\"add\",\"path\":\"/labels/topology.kubernetes.io~1zone\",\"value\":\"a\"}]",
           "{\"labels\":{\"kubernetes.io/hostname\":\"n1\",\"topology.kubernetes.io/zone\":\"a\"}}");
    expect("{\"a~b\":1}", "[{\"op\":\"remove\",\"path\":\"/a~0b\"}]", "{}");
    char buf[64];
    assert_string_equal(kt_pointer_escape("a/b~c", buf, sizeof(buf)), "a~1b~0c");
}

static void test_errors(void **state) {
    (void)state;
    expect_error("{\"a\":{}}", "[{\"op\":\"remove\",\"path\":\"/a/b\"}]", "no such path");
    expect_error("{\"a\":{}}", "[{\"op\":\"add\",\"path\":\"/x/y\",\"value\":1}]", "no such path");
    expect_error("{\"l\":[1]}", "[{\"op\":\"replace\",\"path\":\"/l/1\",\"value\":1}]", "no such path");
    expect_error("{\"l\":[1]}", "[{\"op\":\"remove\",\"path\":\"/l/01\"}]", "no such path");
    expect_error("{}", "[{\"op\":\"move\",\"path\":\"/a\",\"from\":\"/b\"}]", "unsupported");
    expect_error("{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", "no value");
    expect_error("{}", "{\"op\":\"add\"}", "array");
    expect_error("{}", "[{\"op\":\"remove\",\"path\":\"a\"}]", "invalid path");
    expect_error("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/a~2\"}]", "invalid path");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_remove_replace),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
