/* Admission parity of the manifest loader (docs/manifests.md,
 * "Admission"): what an API server refuses on creation is an error with
 * its message (file, line, object, field); what it would refuse of a
 * hand-written pod that sets spec.priority is a warning; objects dumped
 * from a cluster pass silently. Plus the name and label checks. */
#include "api/validation.h"
#include "codec/decode.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct {
    bool ok;
    ks_errors errs;
    ks_cluster *c;
} loaded;

static loaded load(const char *yaml) {
    loaded l;
    l.c = ks_cluster_new();
    ks_errors_init(&l.errs);
    l.ok = ks_load_buffer(l.c, "m.yaml", yaml, strlen(yaml), &l.errs);
    return l;
}

static void done(loaded *l) {
    ks_errors_free(&l->errs);
    ks_cluster_free(l->c);
}

static bool has(char **v, size_t n, const char *want) {
    for (size_t i = 0; i < n; i++)
        if (strstr(v[i], want)) return true;
    for (size_t i = 0; i < n; i++) fprintf(stderr, "  have: %s\n", v[i]);
    fprintf(stderr, "  want: %s\n", want);
    return false;
}

#define PC_HIGH                                                                          \
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n" \
    "value: 1000\npreemptionPolicy: PreemptLowerPriority\n---\n"

static void test_preemption_policy_conflict(void **st) {
    (void)st;
    loaded l = load(PC_HIGH "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                            "  priorityClassName: high\n  preemptionPolicy: Never\n"
                            "  containers: [{name: c, image: i}]\n");
    assert_false(l.ok);
    assert_true(has(l.errs.v, l.errs.n,
                    "m.yaml:12: pod default/p: spec.preemptionPolicy: the string value of "
                    "PreemptionPolicy (Never) must not be provided in pod spec; priority admission "
                    "controller computed PreemptLowerPriority from the given PriorityClass name"));
    assert_int_equal(l.c->pods.n, 0); /* nothing of a failed load is kept */
    done(&l);
    /* without a class and without a global default the plugin computes
     * PreemptLowerPriority too */
    l = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  preemptionPolicy: Never\n"
             "  containers: [{name: c, image: i}]\n");
    assert_false(l.ok);
    assert_true(has(l.errs.v, l.errs.n, "spec.preemptionPolicy: the string value of PreemptionPolicy (Never)"));
    done(&l);
    /* a dumped pod (uid, priority filled in) is what the API server stored */
    l = load(PC_HIGH "apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: u1}\nspec:\n"
                     "  priorityClassName: high\n  priority: 7\n  preemptionPolicy: Never\n"
                     "  containers: [{name: c, image: i}]\n");
    assert_true(l.ok);
    assert_int_equal(l.errs.nw, 0);
    assert_int_equal(l.c->pods.v[0]->priority, 7);
    done(&l);
    /* agreeing with the class is fine */
    l = load(PC_HIGH "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                     "  priorityClassName: high\n  preemptionPolicy: PreemptLowerPriority\n"
                     "  containers: [{name: c, image: i}]\n");
    assert_true(l.ok);
    assert_int_equal(l.errs.nw, 0);
    assert_int_equal(l.c->pods.v[0]->priority, 1000);
    done(&l);
}

static void test_priority_warnings(void **st) {
    (void)st;
    /* hand-written pod with a priority of its own: warned, kept */
    loaded l = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: 10\n"
                    "  containers: [{name: c, image: i}]\n");
    assert_true(l.ok);
    assert_int_equal(l.errs.n, 0);
    assert_int_equal(l.errs.nw, 1);
    assert_true(has(l.errs.w, l.errs.nw,
                    "m.yaml:5: pod default/p: spec.priority: the integer value of priority (10) "
                    "must not be provided in pod spec; priority admission controller computed 0 "
                    "from the given PriorityClass name (an API server would refuse this pod; "
                    "ksched keeps its spec.priority)"));
    assert_int_equal(l.c->pods.v[0]->priority, 10);
    done(&l);
    /* an unknown class with a priority: warned */
    l = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: 10\n"
             "  priorityClassName: gold\n  containers: [{name: c, image: i}]\n");
    assert_true(l.ok);
    assert_true(has(l.errs.w, l.errs.nw, "spec.priorityClassName: no PriorityClass with name gold was found"));
    done(&l);
    /* ... without one: refused, as before */
    l = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
             "  priorityClassName: gold\n  containers: [{name: c, image: i}]\n");
    assert_false(l.ok);
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:5: pod default/p: spec.priorityClassName: no PriorityClass with name gold was found"));
    done(&l);
    /* the same pods from a live cluster (creationTimestamp): silent */
    l = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: \"2024-01-01T00:00:00Z\"}\n"
             "spec:\n  priority: 10\n  priorityClassName: gold\n  containers: [{name: c, image: i}]\n");
    assert_true(l.ok);
    assert_int_equal(l.errs.nw, 0);
    done(&l);
    /* two global defaults */
    l = load("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 5\n"
             "globalDefault: true\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
             "metadata: {name: b}\nvalue: 3\nglobalDefault: true\n");
    assert_true(l.ok);
    assert_true(has(l.errs.w, l.errs.nw, "priorityclass b: globalDefault: PriorityClass a is already marked as default. Only one default can exist"));
    done(&l);
}

static void test_names_and_labels(void **st) {
    (void)st;
    loaded l = load("apiVersion: v1\nkind: Pod\nmetadata:\n  name: My_Pod\n  namespace: team.a\n"
                    "  labels: {\"bad key!\": v, ok: \"bad value!\"}\nspec:\n"
                    "  nodeSelector: {\"a/b/c\": x}\n  containers: [{name: c, image: i}]\n---\n"
                    "apiVersion: v1\nkind: Node\nmetadata: {name: node_1}\n---\n"
                    "apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n");
    assert_false(l.ok);
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:4: pod team.a/My_Pod: metadata.name: Invalid value: \"My_Pod\": a lowercase RFC 1123 subdomain must consist of"));
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:5: pod team.a/My_Pod: metadata.namespace: Invalid value: \"team.a\": must not contain dots"));
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:6: pod team.a/My_Pod: metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters"));
    assert_true(has(l.errs.v, l.errs.n, "metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of"));
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:8: pod team.a/My_Pod: spec.nodeSelector: Invalid value: \"a/b/c\": a qualified name must consist of"));
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:13: node node_1: metadata.name: Invalid value: \"node_1\""));
    assert_true(has(l.errs.v, l.errs.n, "namespace a.b: metadata.name: Invalid value: \"a.b\": must not contain dots"));
    done(&l);
    l = load("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-x}\nvalue: 5\n"
             "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: big}\n"
             "value: 1000000001\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
             "metadata: {name: system-node-critical}\nvalue: 2000001000\n");
    assert_false(l.ok);
    assert_int_equal(l.errs.n, 2);
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:3: priorityclass system-x: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-x is not a known system priority class"));
    assert_true(has(l.errs.v, l.errs.n, "m.yaml:9: priorityclass big: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"));
    done(&l);
}

static void test_dump_is_clean(void **st) {
    (void)st;
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    const char *paths[] = {"test/fixtures/kind-cluster.yaml", "examples/clusters/demo"};
    assert_true(ks_load_paths(c, paths, 2, &errs));
    assert_int_equal(errs.n, 0);
    assert_int_equal(errs.nw, 0);
    ks_errors_free(&errs);
    ks_cluster_free(c);
}

static void test_checks(void **st) {
    (void)st;
    const char *m[KS_VALID_MAX_MSGS];
    char s63[64], s64[65];
    memset(s63, 'a', 63), s63[63] = 0;
    memset(s64, 'a', 64), s64[64] = 0;
    assert_int_equal(ks_valid_label_value("", m), 0);
    assert_int_equal(ks_valid_label_value(s63, m), 0);
    assert_int_equal(ks_valid_label_value(s64, m), 1);
    assert_string_equal(m[0], "must be no more than 63 characters");
    assert_int_equal(ks_valid_label_value("-a", m), 1);
    assert_int_equal(ks_valid_label_value("A.b_c-D", m), 0);
    assert_int_equal(ks_valid_qualified_name("example.com/Name_1", m), 0);
    assert_int_equal(ks_valid_qualified_name("/a", m), 1);
    assert_string_equal(m[0], "prefix part must be non-empty");
    assert_int_equal(ks_valid_qualified_name("Example.com/a", m), 1);
    assert_int_equal(ks_valid_qualified_name("a/", m), 2); /* empty, and not matching */
    assert_string_equal(m[0], "name part must be non-empty");
    assert_int_equal(ks_valid_qualified_name("", m), 2);
    assert_int_equal(ks_valid_dns1123_subdomain("a.b-c.d", m), 0);
    assert_int_equal(ks_valid_dns1123_subdomain("a..b", m), 1);
    assert_int_equal(ks_valid_dns1123_subdomain("", m), 1);
    assert_int_equal(ks_valid_dns1123_label("a-b", m), 0);
    assert_int_equal(ks_valid_dns1123_label("-ab", m), 1);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_quote_str(&b, "a\"b\\c\n\x01\xc3\xa9\xff");
    assert_string_equal(ks_sb_str(&b), "\"a\\\"b\\\\c\\n\\x01\xc3\xa9\\xff\"");
    ks_sb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preemption_policy_conflict), cmocka_unit_test(test_priority_warnings),
        cmocka_unit_test(test_names_and_labels), cmocka_unit_test(test_dump_is_clean),
        cmocka_unit_test(test_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
