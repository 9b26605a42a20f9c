/* The replay engine as a library (sim/timeline.h), the way the GPU study
 * and the report use it: a cluster, events fed in time order, records
 * handed out as pods leave, extra series columns, the summary. Worked by
 * hand: n1 has 4 CPUs. a (3 CPUs, runs 10m) arrives at 0s; b (2 CPUs) at
 * 1m waits until a leaves at 10m; n1 is cordoned at 20m and c (1 CPU)
 * stays pending to the end at 30m. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "config/config.h"
#include "sim/timeline.h"
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN (60LL * KS_NS_PER_SEC)

static const char *cluster_yaml =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\n"
    "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '110'}}\n";

typedef struct seen {
    char names[8][64];
    ks_tl_record recs[8];
    int n;
    int metric_calls;
} seen;

static void on_record(void *ctx, const ks_tl_record *r) {
    seen *s = ctx;
    assert_true(s->n < 8);
    snprintf(s->names[s->n], sizeof(s->names[0]), "%s", r->name);
    s->recs[s->n] = *r;
    s->recs[s->n].name = s->names[s->n];
    s->recs[s->n].node = NULL;
    s->n++;
}

static double running_pods(void *ctx, ks_timeline *tl) {
    seen *s = ctx;
    s->metric_calls++;
    double n = 0;
    const ks_cluster *c = ks_timeline_cluster(tl);
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (c->pods.v[i]->node_name) n++;
    return n;
}

static ks_tl_event *pod_event(int64_t at, const char *name, const char *cpu, int64_t run_ns) {
    char buf[512];
    snprintf(buf, sizeof(buf),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\n"
             "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '%s'}}}]}\n",
             name, cpu);
    ks_cluster *c = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    assert_true(ks_load_buffer(c, "pod.yaml", buf, strlen(buf), &e));
    ks_errors_free(&e);
    ks_tl_event *ev = ks_tl_event_new(KS_TL_POD_CREATE, at);
    ev->pod = ks_pod_ref(c->pods.v[0]);
    ev->run_ns = run_ns;
    ks_cluster_free(c);
    return ev;
}

static void test_timeline_hand_worked(void **state) {
    (void)state;
    ks_config *cfg = ks_config_default();
    ks_config_errors cerrs;
    ks_config_errors_init(&cerrs);
    assert_true(ks_config_resolve(cfg, NULL, NULL, &cerrs));
    ks_config_errors_free(&cerrs);
    ks_cluster *cl = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    assert_true(ks_load_buffer(cl, "cluster.yaml", cluster_yaml, strlen(cluster_yaml), &e));
    ks_errors_free(&e);

    seen s = {0};
    const int64_t t0 = 1000 * KS_NS_PER_SEC;
    ks_timeline_options o = {.config = cfg, .seed = 1, .start_ns = t0, .step_ns = 10 * MIN,
                             .pending_long_ns = 5 * MIN, .on_record = on_record, .ctx = &s};
    char *err = NULL;
    ks_timeline *tl = ks_timeline_new(cl, &o, &err);
    assert_non_null(tl);
    ks_timeline_add_metric(tl, "running", running_pods, &s);

    assert_true(ks_timeline_feed(tl, pod_event(t0, "a", "3", 10 * MIN), &err));
    assert_true(ks_timeline_feed(tl, pod_event(t0 + MIN, "b", "2", 0), &err));
    /* after a's arrival only a is bound; b waits */
    assert_true(ks_timeline_advance(tl, t0 + 5 * MIN));
    assert_int_equal(ks_timeline_now(tl), t0 + 5 * MIN);
    assert_int_equal(s.n, 0);
    ks_tl_event *cordon = ks_tl_event_new(KS_TL_NODE_CORDON, t0 + 20 * MIN);
    cordon->name = strdup("n1");
    assert_true(ks_timeline_feed(tl, cordon, &err));
    /* a left at 10m: its record is out */
    assert_int_equal(s.n, 1);
    assert_string_equal(s.recs[0].name, "default/a");
    assert_int_equal(s.recs[0].state, KS_TL_FINISHED);
    assert_int_equal(s.recs[0].departure, t0 + 10 * MIN);
    assert_true(ks_timeline_feed(tl, pod_event(t0 + 25 * MIN, "c", "1", 0), &err));
    /* a node that does not exist: an error naming it */
    ks_tl_event *bad = ks_tl_event_new(KS_TL_NODE_DRAIN, t0 + 26 * MIN);
    bad->name = strdup("nowhere");
    assert_false(ks_timeline_feed(tl, bad, &err));
    assert_non_null(strstr(err, "node nowhere does not exist"));
    free(err);
    err = NULL;
    assert_true(ks_timeline_advance(tl, t0 + 30 * MIN));
    ks_timeline_finish(tl);

    assert_int_equal(s.n, 3);
    /* b: pending 9m (1m to 10m), still running; c pending 5m at the end */
    assert_string_equal(s.recs[1].name, "default/b");
    assert_int_equal(s.recs[1].state, KS_TL_RUNNING);
    assert_int_equal(s.recs[1].scheduled, t0 + 10 * MIN);
    assert_int_equal(s.recs[1].pending_ns, 9 * MIN);
    assert_string_equal(s.recs[2].name, "default/c");
    assert_int_equal(s.recs[2].state, KS_TL_PENDING);
    assert_int_equal(s.recs[2].scheduled, -1);
    assert_int_equal(s.recs[2].pending_ns, 5 * MIN);

    const ks_tl_result *r = ks_timeline_result(tl);
    assert_int_equal(r->summary.arrived, 3);
    assert_int_equal(r->summary.scheduled, 2);
    assert_int_equal(r->summary.never_scheduled, 1);
    assert_int_equal(r->summary.finished, 1);
    assert_int_equal(r->summary.pending_max, 9 * MIN);
    assert_int_equal(r->summary.end, t0 + 30 * MIN);
    /* cpu: peak 3/4 (a alone; a and b never together), mean
     * (3 * 10m + 2 * 20m) / (4 * 30m) */
    assert_string_equal(r->summary.res_names[0], "cpu");
    assert_true(r->summary.peak_alloc[0] > 0.749 && r->summary.peak_alloc[0] < 0.751);
    assert_true(r->summary.mean_alloc[0] > 70.0 / 120 - 1e-9 && r->summary.mean_alloc[0] < 70.0 / 120 + 1e-9);
    /* samples at 0, 10m, 20m, 30m: the extra column computed at each */
    assert_int_equal(r->nsamples, 4);
    assert_int_equal(r->nextra, 1);
    assert_string_equal(r->extra_names[0], "running");
    assert_int_equal(s.metric_calls, 4);
    assert_true(r->samples[0].extra[0] == 1.0);  /* a */
    assert_int_equal(r->samples[1].pending, 0);   /* b bound at 10m */
    assert_int_equal(r->samples[2].schedulable_nodes, 0); /* cordoned at 20m */
    assert_int_equal(r->samples[3].pending, 1);
    assert_int_equal(r->samples[3].pending_long, 0); /* c waited 5m, not longer */
    ks_timeline_free(tl);
    ks_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline_hand_worked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
