/* Live-cluster tools: the snapshot listed page by page from a scripted
 * API server (continue tokens escaped, finished pods filtered, kinds not
 * served left out, a refused list an error naming the kind), written and
 * read back, the what-ifs (drain, remove, add nodes); and shadow mode's
 * verdicts on bindings made by someone else (same-top, feasible,
 * infeasible, incomparable; pods of other schedulers ignored; nothing
 * written). */
#include "api/cluster.h"
#include "config/feature_gates.h"
#include "codec/decode.h"
#include "kube/shadow.h"
#include "kube/cluster_dump.h"
#include "scheduler/scheduler.h"
#include "util/intern.h"

#include "kube_fake.h"
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[256];

static int setup(void **st) {
    tu_init();
    fk_reset();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ks_kube_snapshot_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    return fk_start_on(0, NULL, NULL) ? 0 : -1;
}

static int teardown(void **st) {
    fk_release();
    fk_stop();
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) != 0 ? -1 : 0;
}

static ks_kube_client *client(ks_kube_config *cfg) {
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", FK.port);
    cfg->server = strdup(server);
    ks_kube_client_options o = {.config = cfg, .max_retries = 1, .retry_base_ms = 10, .timeout_ms = 20000};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    if (!c) fail_msg("client: %s", err);
    return c;
}

#define NODE_BODY(n)                                                                                  \
    "\"metadata\":{\"name\":\"" n "\",\"managedFields\":[{\"manager\":\"x\"}]},\"status\":{\"allocatable\":" \
    "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}"
#define NODE(n) "{" NODE_BODY(n) "}"

static ks_cluster *load_json(const char *json, size_t len) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = ks_load_buffer(c, "<snapshot>", json, len, &errs);
    for (size_t i = 0; i < errs.n; i++) print_error("%s\n", errs.v[i]);
    ks_errors_free(&errs);
    assert_true(ok);
    return c;
}

static void test_list_paginated(void **st) {
    fk_reset();
    fk_add((fk_answer){.method = "GET", .path = "/api/v1/nodes",
                       .body = "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"continue\":\"tok+/=1\"},"
                               "\"items\":[" NODE("n1") "," NODE("n2") "]}"});
    fk_add((fk_answer){.method = "GET", .path = "/api/v1/nodes", .query = "continue=",
                       .body = "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[" NODE("n3") "]}"});
    fk_add((fk_answer){.method = "GET", .path = "/api/v1/pods", .query = "fieldSelector=",
                       .body = "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},"
                               "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}}]}"});
    fk_add((fk_answer){.method = "GET", .path = "/api/v1/namespaces", .body = "{\"items\":[]}"});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg);
    ks_kube_snapshot s;
    ks_kube_snapshot_init(&s);
    char *err = NULL;
    bool ok = ks_kube_snapshot_list(&s, c, 2, &err);
    if (!ok) fail_msg("%s", err);
    /* served: namespaces, nodes, pods; every other kind answered 404 */
    assert_int_equal(s.n, 3);
    assert_int_equal(ks_kube_snapshot_count(&s, "18-nodes.json"), 3);
    assert_int_equal(ks_kube_snapshot_count(&s, "19-pods.json"), 1);
    /* the continue token went back as it came, the pods without the finished */
    bool cont = false, sel = false;
    for (int i = 0; i < FK.nlog; i++) {
        fk_request q = fk_get(i);
        if (strstr(q.url, "/api/v1/nodes") && strstr(q.url, "continue=tok+/=1")) cont = true;
        if (strstr(q.url, "/api/v1/pods") && strstr(q.url, "fieldSelector=status.phase!=Succeeded,status.phase!=Failed"))
            sel = true;
        if (strstr(q.url, "/api/v1/nodes")) assert_non_null(strstr(q.url, "limit=2"));
    }
    assert_true(cont);
    assert_int_equal(fk_count("GET", "/api/v1/nodes"), 2);
    assert_true(sel);
    size_t len;
    char *json = ks_kube_snapshot_json(&s, &len);
    assert_null(strstr(json, "managedFields"));
    assert_non_null(strstr(json, "\"kind\":\"Node\""));
    ks_cluster *cl = load_json(json, len);
    assert_int_equal(cl->nodes.n, 3);
    assert_int_equal(cl->pods.n, 1);
    assert_int_equal(cl->pods.v[0]->node_name, ks_intern("n1"));
    ks_cluster_free(cl);

    /* written and read back: the same documents */
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/snap", tmpdir);
    ok = ks_kube_snapshot_write(&s, dir, &err);
    if (!ok) fail_msg("%s", err);
    ks_kube_snapshot back;
    ks_kube_snapshot_init(&back);
    assert_true(ks_kube_snapshot_read(&back, dir, &err));
    size_t len2;
    char *json2 = ks_kube_snapshot_json(&back, &len2);
    assert_string_equal(json, json2);
    free(json);
    free(json2);
    ks_kube_snapshot_free(&back);
    ks_kube_snapshot_free(&s);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_list_forbidden(void **st) {
    fk_reset();
    fk_add((fk_answer){.method = "GET", .path = "/api/v1/namespaces", .body = "{\"items\":[]}"});
    fk_add((fk_answer){.method = "GET", .path = "/apis/scheduling.k8s.io/v1/priorityclasses", .status = 403,
                       .body = "{\"kind\":\"Status\",\"message\":\"priorityclasses is forbidden\"}"});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg);
    ks_kube_snapshot s;
    ks_kube_snapshot_init(&s);
    char *err = NULL;
    assert_false(ks_kube_snapshot_list(&s, c, 0, &err));
    assert_non_null(strstr(err, "PriorityClass"));
    assert_non_null(strstr(err, "403 priorityclasses is forbidden"));
    free(err);
    ks_kube_snapshot_free(&s);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* DeviceTaintRules are listed only with DRADeviceTaints on (kube-scheduler
 * neither watches them nor is granted them without the gate) */
static void test_list_device_taint_rules_gated(void **st) {
    static const char *path = "/apis/resource.k8s.io/v1alpha3/devicetaintrules";
    for (int on = 0; on < 2; on++) {
        fk_reset();
        fk_add((fk_answer){.method = "GET", .path = path,
                           .body = "{\"items\":[{\"metadata\":{\"name\":\"r\"},\"spec\":{\"deviceSelector\":"
                                   "{\"driver\":\"d\"},\"taint\":{\"key\":\"k\",\"effect\":\"NoSchedule\"}}}]}"});
        const char *gate = on ? "DRADeviceTaints=true" : "DRADeviceTaints=false";
        char *err = NULL;
        assert_true(ks_feature_gates_apply(&gate, 1, &err));
        ks_kube_config cfg = {0};
        ks_kube_client *c = client(&cfg);
        ks_kube_snapshot s;
        ks_kube_snapshot_init(&s);
        bool ok = ks_kube_snapshot_list(&s, c, 0, &err);
        if (!ok) fail_msg("%s", err);
        assert_int_equal(fk_count("GET", path), on);
        assert_int_equal(ks_kube_snapshot_count(&s, "15a-devicetaintrules.json"), on);
        ks_kube_snapshot_free(&s);
        ks_kube_client_free(c);
        ks_kube_config_free(&cfg);
        ks_feature_gates_reset();
    }
}

#define POD(name, node, owner)                                                                        \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"d\"," \
    "\"uid\":\"u-" name "\"" owner "},\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\"}]}," \
    "\"status\":{\"phase\":\"Running\"}}"
#define RS ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\",\"uid\":\"x\",\"controller\":true}]"
#define DS ",\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"d\",\"uid\":\"y\",\"controller\":true}]"
#define MIRROR ",\"annotations\":{\"kubernetes.io/config.mirror\":\"h\"}"

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const ks_pod *find_pod(const ks_cluster *c, const char *name) {
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (!strcmp(ks_str(c->pods.v[i]->name), name)) return c->pods.v[i];
    return NULL;
}

static void test_whatifs(void **st) {
    char path[300], nodefile[300];
    snprintf(path, sizeof(path), "%s/cluster.json", tmpdir);
    snprintf(nodefile, sizeof(nodefile), "%s/node.yaml", tmpdir);
    write_file(path, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
                     "{\"apiVersion\":\"v1\",\"kind\":\"Node\"," NODE_BODY("n1") "},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"Node\"," NODE_BODY("n2") "},"
                     "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{\"name\":\"n2\"},"
                     "\"spec\":{\"drivers\":[]}},"
                     POD("rs1", "n1", RS) "," POD("ds1", "n1", DS) "," POD("mirror1", "n1", MIRROR) ","
                     POD("bare1", "n1", "") "," POD("rs2", "n2", RS) "," POD("ds2", "n2", DS) "]}");
    write_file(nodefile, "apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  uid: abc\n  labels:\n"
                         "    kubernetes.io/hostname: big\n    zone: z\nstatus:\n  allocatable:\n    cpu: \"8\"\n"
                         "    memory: 16Gi\n    pods: \"110\"\n");
    ks_kube_snapshot s;
    ks_kube_snapshot_init(&s);
    char *err = NULL;
    assert_true(ks_kube_snapshot_read(&s, path, &err));
    assert_true(ks_kube_snapshot_add_nodes(&s, nodefile, 2, &err));
    assert_true(ks_kube_snapshot_drain(&s, "n1", &err));
    assert_true(ks_kube_snapshot_remove_node(&s, "n2", &err));
    assert_false(ks_kube_snapshot_drain(&s, "nope", &err));
    assert_non_null(strstr(err, "\"nope\""));
    free(err);
    err = NULL;
    assert_false(ks_kube_snapshot_add_nodes(&s, nodefile, 2, &err)); /* big-1 exists now */
    assert_non_null(strstr(err, "big-1"));
    free(err);
    err = NULL;

    size_t len;
    char *json = ks_kube_snapshot_json(&s, &len);
    ks_cluster *c = load_json(json, len);
    free(json);
    /* n1 cordoned, n2 gone, big-1 and big-2 added with their own hostnames */
    assert_int_equal(c->nodes.n, 3);
    const ks_node *n1 = ks_cluster_node(c, ks_intern("n1"));
    assert_non_null(n1);
    assert_true(n1->unschedulable);
    assert_null(ks_cluster_node(c, ks_intern("n2")));
    const ks_node *b2 = ks_cluster_node(c, ks_intern("big-2"));
    assert_non_null(b2);
    assert_int_equal(b2->allocatable.milli_cpu, 8000);
    assert_int_equal(c->csinodes.n, 0);
    /* controller pods pending again, DaemonSet and mirror pods stay,
     * bare pods and those left on a removed node are gone */
    assert_int_equal(c->pods.n, 4);
    assert_int_equal(find_pod(c, "rs1")->node_name, KS_ID_NONE);
    assert_int_equal(find_pod(c, "rs2")->node_name, KS_ID_NONE);
    assert_int_equal(find_pod(c, "ds1")->node_name, ks_intern("n1"));
    assert_int_equal(find_pod(c, "mirror1")->node_name, ks_intern("n1"));
    assert_null(find_pod(c, "bare1"));
    assert_null(find_pod(c, "ds2"));
    ks_cluster_free(c);
    ks_kube_snapshot_free(&s);
}

/* ---- shadow mode --------------------------------------------------------- */

typedef struct fake_backend {
    ks_watch_fn fn;
    void *arg;
} fake_backend;

static ks_status *fb_start(void *ctx, ks_watch_fn fn, void *arg) {
    fake_backend *f = ctx;
    f->fn = fn;
    f->arg = arg;
    return NULL;
}

static void deliver_pod(fake_backend *f, ks_pod *old, ks_pod *now) {
    ks_watch_event ev = {.kind = KS_KIND_POD,
                         .type = !old ? KS_WATCH_ADDED : KS_WATCH_MODIFIED,
                         .old_pod = old,
                         .new_pod = now};
    f->fn(f->arg, &ev);
}

static void test_shadow(void **st) {
    fake_backend fb = {0};
    ks_cluster_client inner = {.ctx = &fb, .start = fb_start};
    char *text = NULL;
    size_t textlen = 0;
    FILE *report = open_memstream(&text, &textlen);
    ks_shadow *sh = ks_shadow_new(&(ks_shadow_options){.inner = &inner, .report = report});
    ks_registry *reg = tu_registry(NULL, 0);
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile *ps[1] = {&tp};
    ks_config *cfg = tu_config(ps, 1);
    cfg->percentage_of_nodes_to_score = 100;
    ks_scheduler_options so = {.config = cfg, .registry = reg, .backend = ks_shadow_backend(sh),
                               .observer = ks_shadow_observer(sh), .seed = 1};
    char *err = NULL;
    ks_scheduler *s = ks_scheduler_new(&so, &err);
    if (!s) fail_msg("%s", err);
    ks_shadow_attach(sh, s);
    assert_null(ks_scheduler_start(s));

    ks_node *nodes[3] = {tu_node("big", 4000, (8LL << 30), NULL), tu_node("mid", 2000, (8LL << 30), NULL),
                         tu_node("small", 1000, (8LL << 30), NULL)};
    for (int i = 0; i < 3; i++) {
        ks_watch_event ev = {.kind = KS_KIND_NODE, .type = KS_WATCH_ADDED, .new_node = nodes[i]};
        fb.fn(fb.arg, &ev);
    }
    /* name, cpu, where the real scheduler put it */
    struct {
        const char *name;
        int64_t cpu;
        const char *node;
        const char *want;
    } cases[] = {
        {"top", 500, "big", "same-top"},        /* the least allocated */
        {"lower", 500, "small", "feasible"},    /* fits, a lower score */
        {"toobig", 1500, "small", "infeasible"}, /* small has 1 cpu */
    };
    for (size_t i = 0; i < 3; i++) {
        ks_pod *p = tu_pod("default", cases[i].name, cases[i].cpu, 0, 0);
        ks_pod *b = tu_pod_on("default", cases[i].name, cases[i].cpu, 0, cases[i].node);
        deliver_pod(&fb, NULL, p);
        deliver_pod(&fb, p, b);
        ks_pod_unref(p);
        ks_pod_unref(b);
    }
    /* preemption by the real scheduler: it nominated the pod first */
    ks_pod *p = tu_pod("default", "nominated", 100, 0, 0);
    ks_pod *pn = ks_pod_clone(p);
    pn->nominated_node = ks_intern("small");
    ks_pod *b = tu_pod_on("default", "nominated", 100, 0, "small");
    deliver_pod(&fb, NULL, p);
    deliver_pod(&fb, p, pn);
    deliver_pod(&fb, pn, b);
    ks_pod_unref(p);
    ks_pod_unref(pn);
    ks_pod_unref(b);
    /* another scheduler's pod: none of ksched's business */
    p = tu_pod("default", "other", 100, 0, 0);
    p->scheduler_name = ks_intern("someone-else");
    b = ks_pod_clone(p);
    b->node_name = ks_intern("big");
    deliver_pod(&fb, NULL, p);
    deliver_pod(&fb, p, b);
    ks_pod_unref(p);
    ks_pod_unref(b);

    /* while another pod waits on its nomination, a disagreement is
     * counted apart; an agreement stays one */
    p = tu_pod("default", "waiting", 100, 0, 0);
    pn = ks_pod_clone(p);
    pn->nominated_node = ks_intern("mid");
    deliver_pod(&fb, NULL, p);
    deliver_pod(&fb, p, pn);
    ks_pod_unref(p);
    ks_pod_unref(pn);
    p = tu_pod("default", "meanwhile", 100, 0, 0);
    b = tu_pod_on("default", "meanwhile", 100, 0, "small");
    deliver_pod(&fb, NULL, p);
    deliver_pod(&fb, p, b);
    ks_pod_unref(p);
    ks_pod_unref(b);

    ks_shadow_stats stats;
    ks_shadow_stats_get(sh, &stats);
    fflush(report);
    if (getenv("KS_TEST_VERBOSE")) fputs(text, stderr);
    assert_int_equal(stats.decisions[KS_SHADOW_SAME_TOP], 1);
    assert_int_equal(stats.decisions[KS_SHADOW_FEASIBLE], 1);
    assert_int_equal(stats.decisions[KS_SHADOW_INFEASIBLE], 1);
    assert_int_equal(stats.decisions[KS_SHADOW_INCOMPARABLE], 2);
    fflush(report);
    int lines = 0;
    for (char *q = text; q && *q; q++) lines += *q == '\n';
    assert_int_equal(lines, 5);
    assert_non_null(strstr(text, "\"name\":\"meanwhile\""));
    assert_non_null(strstr(text, "\"reason\":\"another pod's preemption was under way\""));
    assert_non_null(strstr(text, "\"name\":\"top\",\"schedulerName\":\"default-scheduler\",\"node\":\"big\","
                                 "\"kschedNode\":\"big\",\"agreement\":\"same-top\""));
    assert_non_null(strstr(text, "\"name\":\"lower\""));
    assert_non_null(strstr(text, "\"agreement\":\"infeasible\""));
    assert_non_null(strstr(text, "\"reason\":\"the real scheduler nominated the pod (preemption)\""));
    /* the real nodes, not ksched's choices, are in its cache */
    ks_cache *cache = ks_scheduler_cache(s);
    assert_int_equal(ks_cache_assumed_count(cache), 0);

    ks_scheduler_free(s);
    ks_shadow_free(sh);
    for (int i = 0; i < 3; i++) ks_node_unref(nodes[i]);
    tu_config_free(cfg);
    ks_registry_free(reg);
    fclose(report);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_paginated),
        cmocka_unit_test(test_list_forbidden),
        cmocka_unit_test(test_list_device_taint_rules_gated),
        cmocka_unit_test(test_whatifs),
        cmocka_unit_test(test_shadow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
