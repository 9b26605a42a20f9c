/* The API dispatcher: merging and ordering of calls per pod, skipping of
 * no-op patches, synchronous binding, and the threaded mode. Calls land on
 * the in-memory backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "framework/status.h"
#include "scheduler/api_dispatcher.h"
#include "sim/memory_backend.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx {
    ks_cluster *c;
    ks_memory_backend *mb;
    ks_api_dispatcher *d;
    ks_pod *pod;
} fx;
static fx F;

static int setup_mode(bool threaded) {
    memset(&F, 0, sizeof(F));
    F.c = ks_cluster_new();
    KS_VEC_PUSH(F.c->nodes, tu_node("n1", 1000, 1 << 30, NULL));
    F.pod = tu_pod("default", "p", 100, 0, 0);
    KS_VEC_PUSH(F.c->pods, ks_pod_ref(F.pod));
    F.mb = ks_memory_backend_new(F.c);
    F.d = ks_api_dispatcher_new(ks_memory_backend_iface(F.mb), NULL, threaded);
    return 0;
}
static int setup(void **state) { return setup_mode(false); }
static int setup_threaded(void **state) { return setup_mode(true); }

static int teardown(void **state) {
    ks_api_dispatcher_free(F.d);
    ks_memory_backend_free(F.mb);
    ks_cluster_free(F.c);
    ks_pod_unref(F.pod);
    return 0;
}

static ks_status_patch cond(const char *reason, const char *msg) {
    return (ks_status_patch){.has_condition = true, .cond_type = "PodScheduled", .cond_status = "False",
                             .cond_reason = reason, .cond_message = msg};
}

static const ks_pod_condition *scheduled_cond(const ks_pod *p) {
    for (uint32_t i = 0; i < p->nconditions; i++)
        if (p->conditions[i].type == ks_intern("PodScheduled")) return &p->conditions[i];
    return NULL;
}

static int nskips;
static void count_skip(void *arg, const ks_status *r) {
    if (ks_status_code(r) == KS_SKIP) nskips++;
}

static void test_patches_merge(void **state) {
    ks_status_patch a = cond("Unschedulable", "first");
    a.set_nominated = true;
    a.nominated = "n1";
    ks_status_patch b = cond("Unschedulable", "second");
    nskips = 0;
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, count_skip, NULL));
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &b, count_skip, NULL));
    assert_int_equal(ks_api_dispatcher_pending(F.d), 1);
    assert_int_equal(nskips, 1); /* the first was overwritten */
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    ks_memory_backend_stats st;
    ks_memory_backend_stats_get(F.mb, &st);
    assert_int_equal(st.status_patches, 1);
    const ks_pod *now = ks_memory_backend_pod(F.mb, F.pod->key);
    assert_string_equal(scheduled_cond(now)->message, "second");
    assert_int_equal(now->nominated_node, ks_intern("n1"));
}

static void test_relevance(void **state) {
    /* Binding replaces a pending patch; a patch behind a pending binding
     * is skipped. */
    ks_status_patch a = cond("Unschedulable", "x");
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, NULL, NULL));
    assert_null(ks_api_dispatcher_bind(F.d, F.pod, "n1", NULL, NULL));
    ks_status *s = ks_api_dispatcher_patch_status(F.d, F.pod, &a, NULL, NULL);
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_BINDING), 1);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_STATUS_PATCH), 0);
    assert_int_equal(ks_memory_backend_pod(F.mb, F.pod->key)->node_name, ks_intern("n1"));
}

static void test_delete_runs_the_patch_it_displaces(void **state) {
    /* Preemption marks a victim (DisruptionTarget) and deletes it: both
     * reach the backend, in that order. */
    ks_status_patch a = {.has_condition = true, .cond_type = "DisruptionTarget", .cond_status = "True",
                         .cond_reason = "PreemptionByScheduler", .cond_message = "preempted"};
    nskips = 0;
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, count_skip, NULL));
    assert_null(ks_api_dispatcher_delete(F.d, F.pod, count_skip, NULL));
    assert_int_equal(ks_api_dispatcher_pending(F.d), 1);
    assert_int_equal(ks_api_dispatcher_drain(F.d), 1);
    assert_int_equal(nskips, 0);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_STATUS_PATCH), 1);
    assert_int_equal(ks_api_dispatcher_executed(F.d, KS_CALL_DELETE), 1);
    ks_memory_backend_stats st;
    ks_memory_backend_stats_get(F.mb, &st);
    assert_int_equal(st.status_patches, 1);
    assert_int_equal(st.deletes, 1);
}

static void test_noop_patch_skipped(void **state) {
    ks_status_patch a = cond("Unschedulable", "same");
    assert_null(ks_api_dispatcher_patch_status(F.d, F.pod, &a, NULL, NULL));
    ks_api_dispatcher_drain(F.d);
    /* Sent for the updated pod, the same condition changes nothing. */
    const ks_pod *now = ks_memory_backend_pod(F.mb, F.pod->key);
    ks_status *s = ks_api_dispatcher_patch_status(F.d, now, &a, NULL, NULL);
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    /* Clearing a nomination the pod does not have: nothing either. */
    ks_status_patch c = {.set_nominated = true, .nominated = ""};
    s = ks_api_dispatcher_patch_status(F.d, now, &c, NULL, NULL);
    assert_int_equal(ks_status_code(s), KS_SKIP);
    ks_status_free(s);
    assert_int_equal(ks_api_dispatcher_pending(F.d), 0);
}

static void test_events_in_order_never_merged(void **state) {
    ks_api_dispatcher_event(F.d, F.pod, "Warning", "FailedScheduling", "Scheduling", "one");
    ks_api_dispatcher_event(F.d, F.pod, "Warning", "FailedScheduling", "Scheduling", "two");
    ks_api_dispatcher_event(F.d, F.pod, "Normal", "Scheduled", "Binding", "three");
    assert_int_equal(ks_api_dispatcher_drain(F.d), 3);
    assert_int_equal(ks_memory_backend_nevents(F.mb), 3);
    assert_string_equal(ks_memory_backend_event(F.mb, 0)->note, "one");
    assert_string_equal(ks_memory_backend_event(F.mb, 2)->reason, "Scheduled");
    assert_string_equal(ks_memory_backend_event(F.mb, 2)->pod_name, "default/p");
}

static void test_bind_sync_and_errors(void **state) {
    ks_memory_backend_fail_binds(F.mb, 1);
    ks_status *s = ks_api_dispatcher_bind_sync(F.d, F.pod, "n1");
    assert_int_equal(ks_status_code(s), KS_ERROR);
    ks_status_free(s);
    assert_null(ks_api_dispatcher_bind_sync(F.d, F.pod, "n1"));
    s = ks_api_dispatcher_bind_sync(F.d, F.pod, "n1");
    char *m = ks_status_message(s);
    assert_string_equal(m, "pod p is already assigned to node \"n1\"");
    free(m);
    ks_status_free(s);
}

static void test_threaded(void **state) {
    for (int i = 0; i < 50; i++) {
        char note[32];
        snprintf(note, sizeof(note), "e%d", i);
        ks_api_dispatcher_event(F.d, F.pod, "Normal", "X", "Y", note);
    }
    assert_null(ks_api_dispatcher_bind_sync(F.d, F.pod, "n1"));
    ks_api_dispatcher_flush(F.d);
    assert_int_equal(ks_memory_backend_nevents(F.mb), 50);
    assert_string_equal(ks_memory_backend_event(F.mb, 49)->note, "e49");
}

int main(void) {
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_patches_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relevance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_runs_the_patch_it_displaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noop_patch_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_in_order_never_merged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_sync_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threaded, setup_threaded, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
