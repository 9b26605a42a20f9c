/* ks_why and ks_compare through their result structures (what the text,
 * JSON and HTML printers read): clusters small enough to work out by
 * hand, the fixes, their patches, side effects and rankings checked
 * field by field. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "config/config.h"
#include "sim/compare.h"
#include "sim/why.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static ks_config *config(const char *extra) {
    char buf[1024];
    snprintf(buf, sizeof(buf), "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n%s",
             extra ? extra : "");
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("cfg.yaml", buf, strlen(buf), &errs);
    assert_non_null(cfg);
    assert_true(ks_config_resolve(cfg, NULL, NULL, &errs));
    ks_config_errors_free(&errs);
    return cfg;
}

static ks_cluster *cluster(const char *yaml) {
    ks_cluster *c = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    char *err = NULL;
    assert_true(ks_load_buffer(c, "cluster.yaml", yaml, strlen(yaml), &e));
    assert_true(ks_cluster_admit(c, &err));
    ks_errors_free(&e);
    return c;
}

#define NODE(name, cpu, spec)                                                                           \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {kubernetes.io/hostname: " name "}}\n" \
    "spec: " spec "\nstatus: {allocatable: {cpu: '" cpu "', memory: 8Gi, pods: '110'}}\n---\n"

static void why(const char *yaml, const char *pod, bool all, ks_why_result *r) {
    ks_config *cfg = config(NULL);
    ks_cluster *c = cluster(yaml);
    ks_why_options o = {.pod = pod, .all = all, .sim = {.seed = 1, .deterministic = true,
                                                        .percentage_of_nodes_to_score = -1}};
    char *err = NULL;
    assert_true(ks_why(c, cfg, ks_default_registry(), &o, r, &err));
    ks_cluster_free(c);
    ks_config_free(cfg);
}

static const ks_why_fix *fix_of(const ks_why_pod *wp, ks_why_change_kind k) {
    for (uint32_t i = 0; i < wp->nfixes; i++)
        if (wp->fixes[i].nchanges == 1 && wp->fixes[i].changes[0].kind == k) return &wp->fixes[i];
    return NULL;
}

/* A cordoned node that is also tainted: only pairs, both on n1. */
static void test_pair_only(void **state) {
    (void)state;
    ks_why_result r;
    why(NODE("n1", "4", "{unschedulable: true, taints: [{key: d, value: db, effect: NoSchedule}]}")
        "apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: default}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n",
        "default/app", false, &r);
    assert_int_equal(r.npods, 1);
    const ks_why_pod *wp = &r.pods[0];
    assert_int_equal(wp->state, KS_SIM_UNSCHEDULABLE);
    assert_true(wp->pairs);
    assert_int_equal(wp->nfixes, 2);
    for (uint32_t i = 0; i < wp->nfixes; i++) {
        const ks_why_fix *f = &wp->fixes[i];
        assert_int_equal(f->nchanges, 2);
        assert_int_equal(f->objects, 2);
        assert_string_equal(f->node, "n1");
        assert_int_equal(f->changes[0].kind, KS_WHY_UNCORDON);
        assert_true(f->changes[1].kind == KS_WHY_TOLERATE || f->changes[1].kind == KS_WHY_REMOVE_TAINT);
        for (uint32_t j = 0; j < f->nchanges; j++) {
            json_t *p = json_loads(f->changes[j].patch, 0, NULL);
            assert_non_null(p);
            assert_true(json_is_array(p));
            json_decref(p);
            assert_memory_equal(f->changes[j].command, "kubectl ", 8);
        }
    }
    ks_why_result_free(&r);
}

/* 100m too much: the request cut to exactly what is free, with the
 * numbers behind the verdict. */
static void test_request(void **state) {
    (void)state;
    ks_why_result r;
    why(NODE("n1", "4", "{}")
        "apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: default}\n"
        "spec: {nodeName: n1, priority: 1000, containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: default}\n"
        "spec: {priority: 100, containers: [{name: c, image: x, resources: {requests: {cpu: 3100m}}}]}\n",
        "default/app", false, &r);
    const ks_why_pod *wp = &r.pods[0];
    assert_int_equal(wp->nreasons, 1);
    assert_string_equal(wp->reasons[0].text, "Insufficient cpu");
    assert_int_equal(wp->reasons[0].nodes, 1);
    assert_int_equal(wp->nclasses, 1);
    assert_string_equal(wp->classes[0].plugin, "NodeResourcesFit");
    assert_string_equal(wp->classes[0].details[0], "cpu: needs 3100m, has 3 free");
    assert_false(wp->pairs);
    const ks_why_fix *f = fix_of(wp, KS_WHY_LOWER_REQUEST);
    assert_non_null(f);
    assert_ptr_equal(f, &wp->fixes[0]); /* the smallest */
    assert_string_equal(f->changes[0].patch,
                        "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/requests/cpu\",\"value\":\"3\"}]");
    assert_int_equal(f->harm, 0);
    assert_int_equal(f->unblocks, 1);
    ks_why_result_free(&r);
}

/* Evicting a ReplicaSet's pod: its replacement has nowhere to go, which
 * is a side effect that ranks the eviction after the cleaner changes. */
static void test_eviction_side_effect(void **state) {
    (void)state;
    ks_why_result r;
    why(NODE("n1", "4", "{}")
        "apiVersion: v1\nkind: Pod\nmetadata: {name: worker, namespace: default, ownerReferences: "
        "[{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, controller: true}]}\n"
        "spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: '3'}}}]}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: default}\n"
        "spec: {priority: 100, preemptionPolicy: Never, containers: [{name: c, image: x, resources: {requests: "
        "{cpu: '2'}}}]}\n",
        "default/app", false, &r);
    const ks_why_pod *wp = &r.pods[0];
    assert_non_null(wp->preemption);
    assert_non_null(strstr(wp->preemption, "preemptionPolicy is Never"));
    const ks_why_fix *f = fix_of(wp, KS_WHY_EVICT);
    assert_non_null(f);
    assert_string_equal(f->changes[0].name, "worker");
    assert_null(f->changes[0].patch);
    assert_int_equal(f->neffects, 1);
    assert_int_equal(f->effects[0].kind, KS_WHY_REPLACED);
    assert_string_equal(f->effects[0].pod, "default/worker");
    assert_string_equal(f->effects[0].before, "n1");
    assert_null(f->effects[0].after);
    assert_int_equal(f->harm, 1);
    /* every fix without harm ranks before it */
    assert_ptr_equal(f, &wp->fixes[wp->nfixes - 1]);
    const ks_why_fix *add = NULL;
    for (uint32_t i = 0; i < wp->nfixes; i++)
        if (wp->fixes[i].changes[0].kind == KS_WHY_ADD_NODE) add = &wp->fixes[i];
    assert_non_null(add);
    assert_string_equal(add->changes[0].like, "n1");
    assert_string_equal(add->node, add->changes[0].name);
    ks_why_result_free(&r);
}

/* --all: three replicas, one root cause; the toleration made on all three
 * and the taint removed each unblock the three. */
static void test_all_group(void **state) {
    (void)state;
    char yaml[4096];
    int n = snprintf(yaml, sizeof(yaml), "%s", NODE("n1", "8", "{taints: [{key: d, value: t, effect: NoSchedule}]}"));
    for (int i = 0; i < 3; i++)
        n += snprintf(yaml + n, sizeof(yaml) - (size_t)n,
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: t-%d, namespace: ml, creationTimestamp: "
                      "'2026-11-21T09:00:0%dZ'}\nspec: {containers: [{name: c, image: x, resources: {requests: "
                      "{cpu: '1'}}}]}\n---\n",
                      i, i);
    ks_why_result r;
    why(yaml, NULL, true, &r);
    assert_int_equal(r.npods, 3);
    assert_int_equal(r.ngroups, 1);
    assert_int_equal(r.groups[0].npods, 3);
    bool tolerate = false, untaint = false;
    for (uint32_t i = 0; i < r.ncluster_fixes; i++) {
        const ks_why_fix *f = &r.cluster_fixes[i];
        if (f->changes[0].kind == KS_WHY_TOLERATE) {
            tolerate = true;
            assert_int_equal(f->nchanges, 3);
            assert_int_equal(f->unblocks, 3);
        }
        if (f->changes[0].kind == KS_WHY_REMOVE_TAINT) {
            untaint = true;
            assert_int_equal(f->nchanges, 1);
            assert_int_equal(f->unblocks, 3);
        }
    }
    assert_true(tolerate && untaint);
    ks_why_result_free(&r);
}

/* LeastAllocated against MostAllocated (test/scenarios/compare-most-allocated). */
static void test_compare(void **state) {
    (void)state;
    ks_config *a = config(NULL);
    ks_config *b = config("profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
                          "    args:\n      scoringStrategy:\n        type: MostAllocated\n");
    ks_cluster *c = cluster(NODE("n1", "4", "{}") NODE("n2", "4", "{}")
        "apiVersion: v1\nkind: Pod\nmetadata: {name: running, namespace: default}\n"
        "spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: '2', memory: 4Gi}}}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default, creationTimestamp: '2026-11-21T09:00:00Z'}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1', memory: 2Gi}}}]}\n");
    ks_sim_options so = {.seed = 1, .deterministic = true, .percentage_of_nodes_to_score = -1};
    ks_compare_result r;
    char *err = NULL;
    assert_true(ks_compare(c, a, "A", b, "B", ks_default_registry(), &so, &r, &err));
    assert_int_equal(r.nmoved, 1);
    assert_string_equal(r.moved[0].node[0], "n2");
    assert_string_equal(r.moved[0].node[1], "n1");
    for (int k = 0; k < 2; k++) {
        assert_true(r.moved[0].why[k].other_scored);
        assert_int_equal(r.moved[0].why[k].total, 50);
        assert_int_equal(r.moved[0].why[k].ndeltas, 1);
        assert_string_equal(r.moved[0].why[k].deltas[0].plugin, "NodeResourcesFit");
        assert_int_equal(r.moved[0].why[k].deltas[0].delta, 50);
    }
    assert_int_equal(r.side[0].nodes_used, 2);
    assert_int_equal(r.side[1].nodes_used, 1);
    ks_compare_result_free(&r);
    ks_cluster_free(c);
    ks_config_free(a);
    ks_config_free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_only),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_eviction_side_effect),
        cmocka_unit_test(test_all_group),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
