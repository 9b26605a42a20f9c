/* Logging in klog's text format and component-base's JSON format: the
 * header of a text line, structured messages (ks_infos, and klog-style
 * format strings) as JSON fields, "v" on info lines only, verbosity. */
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *tmp;

static int setup(void **state) {
    (void)state;
    tmp = tmpfile();
    ks_log_set_output(tmp);
    ks_log_set_verbosity(0);
    ks_log_set_format(KS_LOG_TEXT);
    return tmp ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ks_log_set_output(NULL);
    ks_log_set_format(KS_LOG_TEXT);
    ks_log_set_verbosity(0);
    fclose(tmp);
    return 0;
}

/* Everything logged so far (malloc'd); the file starts over. */
static char *taken(void) {
    fflush(tmp);
    long n = ftell(tmp);
    char *s = calloc(1, (size_t)n + 1);
    rewind(tmp);
    assert_int_equal(fread(s, 1, (size_t)n, tmp), (size_t)n);
    rewind(tmp);
    assert_int_equal(ftruncate(fileno(tmp), 0), 0);
    return s;
}

static void test_text(void **state) {
    (void)state;
    ks_infof(0, "Serving securely on %s", "[::]:10259");
    ks_infos(0, "Successfully bound pod to node", "pod", "default/p\"1", "node", "n1");
    ks_infof(2, "not shown at -v=0");
    ks_errorf("broken: %d", 7);
    char *s = taken();
    regex_t re;
    assert_int_equal(regcomp(&re,
                             "^I[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} +[0-9]+ test_log\\.c:[0-9]+\\] "
                             "Serving securely on \\[::\\]:10259\n"
                             "I[^\n]*test_log\\.c:[0-9]+\\] \"Successfully bound pod to node\" "
                             "pod=\"default/p\\\\\"1\" node=\"n1\"\n"
                             "E[^\n]*\\] broken: 7\n$",
                             REG_EXTENDED),
                     0);
    if (regexec(&re, s, 0, NULL, 0) != 0) fail_msg("unexpected text log:\n%s", s);
    regfree(&re);
    free(s);
}

/* One JSON object per line. */
static json_t *line_json(const char *s, int k) {
    const char *p = s;
    for (int i = 0; i < k; i++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    const char *e = strchr(p, '\n');
    assert_non_null(e);
    json_error_t je;
    json_t *o = json_loadb(p, (size_t)(e - p), 0, &je);
    if (!o) fail_msg("not JSON: %.*s (%s)", (int)(e - p), p, je.text);
    return o;
}

static void test_json(void **state) {
    (void)state;
    ks_log_set_format(KS_LOG_JSON);
    ks_log_set_verbosity(2);
    ks_infos(2, "Successfully bound pod to node", "pod", "default/p\"1", "node", "n1");
    ks_infof(0, "Serving securely on %s", "[::]:10259");
    ks_infof(3, "not shown at -v=2");
    ks_errorf("Error scheduling pod; retrying pod=\"%s\" err=\"%s\"", "ns/p", "0/3 nodes are available");
    ks_warnf("\"half structured\" key=value n=12 other=\"x y\"");
    ks_infof(1, "\"broken\" key=\"unterminated");
    char *s = taken();
    /* 1: structured */
    json_t *o = line_json(s, 0);
    assert_true(json_is_real(json_object_get(o, "ts")) || json_is_integer(json_object_get(o, "ts")));
    assert_true(json_number_value(json_object_get(o, "ts")) > 1.6e12); /* milliseconds since the epoch */
    const char *caller = json_string_value(json_object_get(o, "caller"));
    assert_non_null(caller);
    assert_true(strncmp(caller, "util/test_log.c:", 16) == 0);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "Successfully bound pod to node");
    assert_int_equal(json_integer_value(json_object_get(o, "v")), 2);
    assert_string_equal(json_string_value(json_object_get(o, "pod")), "default/p\"1");
    assert_string_equal(json_string_value(json_object_get(o, "node")), "n1");
    /* key order as component-base writes it */
    assert_non_null(strstr(s, "{\"ts\":"));
    assert_non_null(strstr(s, ",\"caller\":\"util/test_log.c:"));
    json_decref(o);
    /* 2: plain text is the message */
    o = line_json(s, 1);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "Serving securely on [::]:10259");
    assert_int_equal(json_integer_value(json_object_get(o, "v")), 0);
    json_decref(o);
    /* 3: an error: klog-style text after the message is not a message in
     * quotes, so it stays whole; no "v" */
    o = line_json(s, 2);
    assert_string_equal(json_string_value(json_object_get(o, "msg")),
                        "Error scheduling pod; retrying pod=\"ns/p\" err=\"0/3 nodes are available\"");
    assert_null(json_object_get(o, "v"));
    json_decref(o);
    /* 4: quoted message and pairs: numbers stay numbers */
    o = line_json(s, 3);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "half structured");
    assert_string_equal(json_string_value(json_object_get(o, "key")), "value");
    assert_int_equal(json_integer_value(json_object_get(o, "n")), 12);
    assert_string_equal(json_string_value(json_object_get(o, "other")), "x y");
    json_decref(o);
    /* 5: a broken one is kept as text */
    o = line_json(s, 4);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "\"broken\" key=\"unterminated");
    assert_int_equal(json_integer_value(json_object_get(o, "v")), 1);
    json_decref(o);
    assert_null(strchr(strchr(strchr(strchr(strchr(strchr(s, '\n') + 1, '\n') + 1, '\n') + 1, '\n') + 1, '\n') + 1,
                       '\n'));
    free(s);
}

static void test_long_and_parse(void **state) {
    (void)state;
    char big[3000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    ks_infof(0, "%s", big);
    char *s = taken();
    assert_non_null(strstr(s, big));
    free(s);
    ks_log_format f;
    assert_true(ks_log_format_parse("json", &f));
    assert_int_equal(f, KS_LOG_JSON);
    assert_true(ks_log_format_parse("text", &f));
    assert_int_equal(f, KS_LOG_TEXT);
    assert_false(ks_log_format_parse("JSON", &f));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_and_parse, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
