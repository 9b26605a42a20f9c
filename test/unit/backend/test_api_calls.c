/* The rules of each API call type (api_calls.c): upstream's names and
 * relevances, the status patch's merge and no-op rules, a call's own
 * rules, and owned copies that outlive the caller's data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/api_calls.h"
#include "testutil.h"
#include "util/intern.h"

#include <stdlib.h>
#include <string.h>

static void test_names_and_relevance(void **state) {
    assert_string_equal(ks_call_type_name(KS_CALL_STATUS_PATCH), "pod_status_patch");
    assert_string_equal(ks_call_type_name(KS_CALL_BINDING), "pod_binding");
    assert_string_equal(ks_call_type_name(KS_CALL_TYPES), "unknown");
    /* upstream's APICallRelevances: patch < binding; deletions above */
    assert_true(ks_call_rules_of(KS_CALL_STATUS_PATCH)->relevance < ks_call_rules_of(KS_CALL_BINDING)->relevance);
    assert_true(ks_call_rules_of(KS_CALL_BINDING)->relevance < ks_call_rules_of(KS_CALL_DELETE)->relevance);
    assert_int_equal(ks_call_rules_of(KS_CALL_EVENT)->relevance, 0);
    /* what pods wait on goes ahead: bindings, then evictions; PreBind
     * writes are not queued */
    assert_int_equal(ks_call_rules_of(KS_CALL_BINDING)->lane, KS_LANE_BINDING);
    assert_int_equal(ks_call_rules_of(KS_CALL_DELETE)->lane, KS_LANE_EVICTION);
    assert_int_equal(ks_call_rules_of(KS_CALL_STATUS_PATCH)->lane, KS_LANE_OTHER);
    assert_int_equal(ks_call_rules_of(KS_CALL_EVENT)->lane, KS_LANE_OTHER);
    assert_false(ks_call_rules_of(KS_CALL_OBJECT_WRITE)->queued);
    assert_non_null(ks_call_rules_of(KS_CALL_DELETE)->unmade);
    assert_null(ks_call_rules_of(KS_CALL_EVENT)->unmade);
}

static void test_patch_merge_and_noop(void **state) {
    ks_pod *pod = tu_pod("default", "p", 100, 0, 0);
    ks_status_patch older = {.has_condition = true, .cond_type = "PodScheduled", .cond_status = "False",
                             .cond_reason = "Unschedulable", .cond_message = "0/1 nodes"};
    ks_status_patch newer = {.set_nominated = true, .nominated = "n1"};
    ks_api_call o = {.type = KS_CALL_STATUS_PATCH, .pod = pod, .patch = &older};
    ks_api_call n = {.type = KS_CALL_STATUS_PATCH, .pod = pod, .patch = &newer};
    const ks_call_rules *r = ks_call_rules_of(KS_CALL_STATUS_PATCH);
    ks_api_call *m = ks_api_call_clone(&n);
    r->merge(m, &o);
    assert_true(m->patch->has_condition && m->patch->set_nominated);
    assert_string_equal(m->patch->cond_reason, "Unschedulable");
    assert_string_equal(m->patch->nominated, "n1");
    /* the pod has no such condition and no nomination: not a no-op */
    assert_false(r->is_noop(m));
    ks_api_call_free(m);
    /* clearing a nomination the pod does not have changes nothing */
    ks_status_patch clear = {.set_nominated = true, .nominated = NULL};
    ks_api_call c = {.type = KS_CALL_STATUS_PATCH, .pod = pod, .patch = &clear};
    assert_true(r->is_noop(&c));
    ks_pod_unref(pod);
}

static bool never(const ks_api_call *c) { return false; }

/* A plugin's write carries its own rules; without, its type's row. */
static void test_call_rules(void **state) {
    static const ks_call_rules mine = {.name = "my_write", .is_noop = never};
    ks_api_call own = {.type = KS_CALL_OBJECT_WRITE, .rules = &mine};
    ks_api_call plain = {.type = KS_CALL_OBJECT_WRITE};
    assert_ptr_equal(ks_api_call_rules(&own), &mine);
    assert_string_equal(ks_api_call_rules(&plain)->name, "object_write");
    assert_ptr_equal(ks_api_call_rules(&plain), ks_call_rules_of(KS_CALL_OBJECT_WRITE));
}

static void test_clone_owns(void **state) {
    ks_pod *pod = tu_pod("default", "p", 100, 0, 0);
    char reason[] = "Scheduled", node[] = "n1";
    ks_event_record ev = {.regarding = pod, .type = "Normal", .reason = reason, .note = "bound", .time_ns = 7};
    ks_api_call e = {.type = KS_CALL_EVENT, .pod = pod, .event = &ev, .node = node};
    ks_api_call *c = ks_api_call_clone(&e);
    strcpy(reason, "Changed");
    strcpy(node, "n2");
    assert_string_equal(c->event->reason, "Scheduled");
    assert_string_equal(c->node, "n1");
    assert_ptr_equal(c->event->regarding, pod);
    assert_int_equal(c->event->time_ns, 7);
    ks_pod_unref(pod); /* the copy holds its own references */
    assert_string_equal(ks_str(c->pod->name), "p");
    ks_api_call_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_relevance),
        cmocka_unit_test(test_patch_merge_and_noop),
        cmocka_unit_test(test_call_rules),
        cmocka_unit_test(test_clone_owns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
