/* Scheduler extenders: a real HTTP extender (libmicrohttpd on 127.0.0.1,
 * an ephemeral port) answers the filter, prioritize and bind verbs the way
 * each test sets up, and the whole simulation runs against it. */
#include "api/cluster.h"
#include "codec/decode.h"
#include "config/config.h"
#include "scheduler/extender.h"
#include "sim/simulate.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- the fake extender ------------------------------------------------------ */

typedef struct fake {
    pthread_mutex_t mu;
    /* filter: node -> reason; "!" prefix = unresolvable */
    const char *reject[8][2];
    /* prioritize: node -> score */
    const char *score_node[8];
    int64_t score_val[8];
    int filter_calls, prioritize_calls, bind_calls;
    bool saw_node_names, saw_full_nodes;
    char bound_pod[128], bound_node[128];
    /* preempt: drop this node, drop this victim UID (a node left without
     * victims goes too), add an unknown UID, drop every node */
    const char *drop_node, *drop_uid;
    bool add_unknown_uid, drop_all;
    int preempt_calls, preempt_calls_ext2;
    bool saw_meta_victims, saw_full_victims;
    char first_victims[256]; /* "node:uid,uid;..." of the first preempt call */
    int slow_ms;     /* sleep before answering */
    int status;      /* HTTP status to answer (0 = 200) */
} fake;

static fake F;

typedef struct req {
    char *p;
    size_t n;
} req;

static json_t *filter_answer(json_t *args) {
    json_t *names = json_object_get(args, "NodeNames");
    json_t *nodes = json_object_get(args, "Nodes");
    json_t *in = json_array();
    if (json_is_array(names)) {
        F.saw_node_names = true;
        size_t i;
        json_t *v;
        json_array_foreach(names, i, v) json_array_append(in, v);
    } else if (json_is_object(nodes)) {
        F.saw_full_nodes = true;
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(nodes, "items"), i, v)
            json_array_append(in, json_object_get(json_object_get(v, "metadata"), "name"));
    }
    json_t *pass = json_array(), *failed = json_object(), *unres = json_object();
    size_t i;
    json_t *v;
    json_array_foreach(in, i, v) {
        const char *name = json_string_value(v);
        const char *why = NULL;
        for (int k = 0; k < 8 && F.reject[k][0]; k++)
            if (!strcmp(F.reject[k][0], name)) why = F.reject[k][1];
        if (!why) json_array_append(pass, v);
        else if (why[0] == '!') json_object_set_new(unres, name, json_string(why + 1));
        else json_object_set_new(failed, name, json_string(why));
    }
    json_decref(in);
    json_t *out = json_object();
    if (F.saw_node_names) {
        json_object_set_new(out, "NodeNames", pass);
    } else {
        json_t *items = json_array();
        json_array_foreach(pass, i, v) {
            json_t *meta = json_pack("{s:O}", "name", v);
            json_array_append_new(items, json_pack("{s:o}", "metadata", meta));
        }
        json_decref(pass);
        json_object_set_new(out, "Nodes", json_pack("{s:o}", "items", items));
    }
    json_object_set_new(out, "FailedNodes", failed);
    json_object_set_new(out, "FailedAndUnresolvableNodes", unres);
    json_object_set_new(out, "Error", json_string(""));
    return out;
}

/* The victims' UIDs of one node, from Victims (full pods) or MetaVictims. */
static json_t *victim_uids(json_t *victims, bool meta) {
    json_t *uids = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(victims, "Pods"), i, v) {
        json_t *uid = meta ? json_object_get(v, "UID") : json_object_get(json_object_get(v, "metadata"), "uid");
        if (uid) json_array_append(uids, uid);
        else json_array_append_new(uids, json_string(""));
    }
    return uids;
}

static json_t *preempt_answer(json_t *args) {
    json_t *full = json_object_get(args, "NodeNameToVictims");
    json_t *meta = json_object_get(args, "NodeNameToMetaVictims");
    bool is_meta = json_is_object(meta);
    if (is_meta) F.saw_meta_victims = true;
    if (json_is_object(full)) F.saw_full_victims = true;
    json_t *in = is_meta ? meta : full;
    bool first = F.preempt_calls == 1;
    json_t *out = json_object();
    const char *node;
    json_t *victims;
    json_object_foreach(in, node, victims) {
        json_t *uids = victim_uids(victims, is_meta);
        if (first) {
            size_t len = strlen(F.first_victims);
            snprintf(F.first_victims + len, sizeof(F.first_victims) - len, "%s:", node);
            size_t i;
            json_t *u;
            json_array_foreach(uids, i, u) {
                len = strlen(F.first_victims);
                snprintf(F.first_victims + len, sizeof(F.first_victims) - len, "%s%s", i ? "," : "",
                         json_string_value(u));
            }
            len = strlen(F.first_victims);
            snprintf(F.first_victims + len, sizeof(F.first_victims) - len, ";");
        }
        json_t *pods = json_array();
        size_t i;
        json_t *u;
        json_array_foreach(uids, i, u) {
            if (F.drop_uid && !strcmp(json_string_value(u), F.drop_uid)) continue;
            json_array_append_new(pods, json_pack("{s:O}", "UID", u));
        }
        json_decref(uids);
        if (F.add_unknown_uid) json_array_append_new(pods, json_pack("{s:s}", "UID", "no-such-uid"));
        bool drop = F.drop_all || (F.drop_node && !strcmp(node, F.drop_node)) || json_array_size(pods) == 0;
        if (drop) {
            json_decref(pods);
            continue;
        }
        json_object_set_new(out, node, json_pack("{s:o,s:O}", "Pods", pods, "NumPDBViolations",
                                                 json_object_get(victims, "NumPDBViolations")));
    }
    return json_pack("{s:o}", "NodeNameToMetaVictims", out);
}

static json_t *prioritize_answer(void) {
    json_t *out = json_array();
    for (int k = 0; k < 8 && F.score_node[k]; k++)
        json_array_append_new(out, json_pack("{s:s,s:I}", "Host", F.score_node[k], "Score", (json_int_t)F.score_val[k]));
    return out;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *size, void **state) {
    (void)cls, (void)method, (void)version;
    req *r = *state;
    if (!r) {
        *state = ks_xcalloc(1, sizeof(req));
        return MHD_YES;
    }
    if (*size) {
        r->p = ks_xrealloc(r->p, r->n + *size + 1);
        memcpy(r->p + r->n, data, *size);
        r->n += *size;
        r->p[r->n] = '\0';
        *size = 0;
        return MHD_YES;
    }
    json_t *args = json_loadb(r->p ? r->p : "", r->n, 0, NULL);
    pthread_mutex_lock(&F.mu);
    int slow = F.slow_ms, status = F.status ? F.status : 200;
    json_t *out = NULL;
    if (strstr(url, "/filter")) {
        F.filter_calls++;
        out = filter_answer(args);
    } else if (strstr(url, "/prioritize")) {
        F.prioritize_calls++;
        out = prioritize_answer();
    } else if (strstr(url, "/preempt")) {
        F.preempt_calls++;
        if (strstr(url, "/ext2/")) F.preempt_calls_ext2++;
        out = preempt_answer(args);
    } else if (strstr(url, "/bind")) {
        F.bind_calls++;
        snprintf(F.bound_pod, sizeof(F.bound_pod), "%s/%s",
                 json_string_value(json_object_get(args, "PodNamespace")),
                 json_string_value(json_object_get(args, "PodName")));
        snprintf(F.bound_node, sizeof(F.bound_node), "%s", json_string_value(json_object_get(args, "Node")));
        out = json_pack("{s:s}", "Error", "");
    } else {
        out = json_object();
    }
    pthread_mutex_unlock(&F.mu);
    json_decref(args);
    if (slow) usleep((useconds_t)slow * 1000);
    char *body = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(out);
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode tc) {
    (void)cls, (void)c, (void)tc;
    req *r = *state;
    if (r) free(r->p);
    free(r);
    *state = NULL;
}

static struct MHD_Daemon *D;
static unsigned PORT;

static int setup(void **st) {
    (void)st;
    memset(&F, 0, sizeof(F));
    pthread_mutex_init(&F.mu, NULL);
    D = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, handle,
                         NULL, MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    if (!D) return -1;
    PORT = MHD_get_daemon_info(D, MHD_DAEMON_INFO_BIND_PORT)->port;
    return PORT ? 0 : -1;
}

static int teardown(void **st) {
    (void)st;
    MHD_stop_daemon(D);
    pthread_mutex_destroy(&F.mu);
    return 0;
}

/* ---- running a simulation ---------------------------------------------------- */

static const char cluster_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110', example.com/gpu: '2'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110', example.com/gpu: '2'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n3}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110', example.com/gpu: '2'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: u-1}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'%s}}}]}\n";

typedef struct run {
    ks_cluster *cluster;
    ks_config *cfg;
    ks_sim_result res;
} run;

/* extenders: the YAML list items, with %1$u for the port. */
static void simulate_cluster(run *r, const char *extenders, const char *cl) {
    char cfg[4096];
    int n = snprintf(cfg, sizeof(cfg), "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n");
    if (extenders) {
        n += snprintf(cfg + n, sizeof(cfg) - (size_t)n, "extenders:\n");
        n += snprintf(cfg + n, sizeof(cfg) - (size_t)n, extenders, PORT, PORT);
    }
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    r->cfg = ks_config_load_buffer("cfg.yaml", cfg, strlen(cfg), &errs);
    for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.msgs[i]);
    ks_config_errors_free(&errs);
    assert_non_null(r->cfg);
    assert_true(ks_config_resolve(r->cfg, NULL, NULL, &errs));

    r->cluster = ks_cluster_new();
    ks_errors e;
    ks_errors_init(&e);
    char *err = NULL;
    assert_true(ks_load_buffer(r->cluster, "cluster.yaml", cl, strlen(cl), &e));
    assert_true(ks_cluster_admit(r->cluster, &err));
    ks_errors_free(&e);
    ks_sim_options so = {.seed = 1, .explain = true, .deterministic = true, .percentage_of_nodes_to_score = -1};
    assert_true(ks_simulate(r->cluster, r->cfg, ks_default_registry(), &so, &r->res, &err));
}

static void simulate(run *r, const char *extenders, const char *extra_request) {
    char cl[4096];
    snprintf(cl, sizeof(cl), cluster_yaml, extra_request ? extra_request : "");
    simulate_cluster(r, extenders, cl);
    assert_int_equal(r->res.npods, 1);
}

static void run_free(run *r) {
    ks_sim_result_free(&r->res);
    ks_cluster_free(r->cluster);
    ks_config_free(r->cfg);
}

static const ks_sim_pod *the_pod(const run *r) { return &r->res.pods[0]; }

/* The total of node `name` in the pod's first scored attempt. */
static int64_t total_of(const run *r, const char *name) {
    const ks_sim_pod *p = the_pod(r);
    assert_true(p->nexplain > 0);
    const ks_sim_attempt *a = &p->explain[0];
    for (uint32_t i = 0; i < a->nscored; i++)
        if (!strcmp(ks_str(a->scored_nodes[i]), name)) return a->total[i];
    fail_msg("node %s not scored", name);
    return 0;
}

/* ---- tests --------------------------------------------------------------------- */

static bool libcurl_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) found = strstr(line, "libcurl") != NULL;
    fclose(f);
    return found;
}

/* libcurl (and what it pulls in) is mapped only once an extender is
 * called; runs first, before any other test has called one. */
static void test_libcurl_loaded_on_first_call(void **st) {
    (void)st;
    assert_false(libcurl_mapped());
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n", NULL);
    assert_non_null(the_pod(&r)->node);
    assert_true(libcurl_mapped());
    run_free(&r);
}

static void test_filter_failed_nodes_in_fit_error(void **st) {
    (void)st;
    F.reject[0][0] = "n1", F.reject[0][1] = "no gpu here";
    F.reject[1][0] = "n2", F.reject[1][1] = "!rack full";
    F.reject[2][0] = "n3", F.reject[2][1] = "no gpu here";
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n", NULL);
    const ks_sim_pod *p = the_pod(&r);
    assert_null(p->node);
    assert_non_null(p->message);
    const char *want = "0/3 nodes are available: 1 rack full, 2 no gpu here.";
    if (strncmp(p->message, want, strlen(want)) != 0) fail_msg("message: %s", p->message);
    assert_true(F.saw_full_nodes);
    assert_false(F.saw_node_names);
    run_free(&r);
}

static void test_filter_node_cache_capable(void **st) {
    (void)st;
    F.reject[0][0] = "n1", F.reject[0][1] = "busy";
    F.reject[1][0] = "n3", F.reject[1][1] = "busy";
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext/\n  filterVerb: filter\n  nodeCacheCapable: true\n", NULL);
    assert_string_equal(the_pod(&r)->node, "n2");
    assert_true(F.saw_node_names);
    assert_false(F.saw_full_nodes);
    assert_int_equal(F.filter_calls, 1);
    run_free(&r);
}

static void test_prioritize_score_arithmetic(void **st) {
    (void)st;
    run base;
    simulate(&base, NULL, NULL);
    F.score_node[0] = "n1", F.score_val[0] = 2;
    F.score_node[1] = "n2", F.score_val[1] = 7;
    F.score_node[2] = "n3", F.score_val[2] = 0;
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  prioritizeVerb: prioritize\n  weight: 3\n", NULL);
    assert_int_equal(F.prioritize_calls, 1);
    /* score x weight x (100 / 10) on top of the plugins' total */
    assert_int_equal(total_of(&r, "n1"), total_of(&base, "n1") + 2 * 3 * 10);
    assert_int_equal(total_of(&r, "n2"), total_of(&base, "n2") + 7 * 3 * 10);
    assert_int_equal(total_of(&r, "n3"), total_of(&base, "n3"));
    assert_string_equal(the_pod(&r)->node, "n2");
    run_free(&r);
    run_free(&base);
}

static void test_prioritize_error_ignored(void **st) {
    (void)st;
    F.status = 500;
    F.score_node[0] = "n3", F.score_val[0] = 10;
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  prioritizeVerb: prioritize\n  weight: 5\n", NULL);
    assert_int_equal(F.prioritize_calls, 1);
    /* no scores: the tie goes to the smallest name */
    assert_string_equal(the_pod(&r)->node, "n1");
    run_free(&r);
}

static void test_bind_delegated(void **st) {
    (void)st;
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  bindVerb: bind\n", NULL);
    assert_int_equal(F.bind_calls, 1);
    assert_string_equal(F.bound_pod, "default/p");
    assert_string_equal(F.bound_node, the_pod(&r)->node);
    run_free(&r);
}

static void test_managed_resources_interest(void **st) {
    (void)st;
    F.reject[0][0] = "n1", F.reject[0][1] = "no gpu";
    F.reject[1][0] = "n2", F.reject[1][1] = "no gpu";
    const char *ext = "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n  bindVerb: bind\n"
                      "  managedResources: [{name: example.com/gpu}]\n";
    run r;
    simulate(&r, ext, NULL); /* the pod asks no gpu: not called */
    assert_int_equal(F.filter_calls, 0);
    assert_int_equal(F.bind_calls, 0);
    assert_non_null(the_pod(&r)->node);
    run_free(&r);

    /* limits count too (requests default from them) */
    run r2;
    simulate(&r2, ext, "}, limits: {example.com/gpu: '1'");
    assert_int_equal(F.filter_calls, 1);
    assert_int_equal(F.bind_calls, 1);
    run_free(&r2);
}

static void test_ignorable_transport_error_skipped(void **st) {
    (void)st;
    /* port 1: nothing listens there */
    run r;
    simulate(&r,
             "- urlPrefix: http://127.0.0.1:1/ext\n  filterVerb: filter\n  ignorable: true\n"
             "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n",
             NULL);
    /* the second extender still filters */
    assert_int_equal(F.filter_calls, 1);
    assert_non_null(the_pod(&r)->node);
    run_free(&r);
}

static void test_non_ignorable_error_fails_attempt(void **st) {
    (void)st;
    F.status = 503;
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n", NULL);
    const ks_sim_pod *p = the_pod(&r);
    assert_null(p->node);
    char want[256];
    snprintf(want, sizeof(want), "failed filter with extender at URL http://127.0.0.1:%u/ext/filter, code 503", PORT);
    if (!p->message || !strstr(p->message, want)) fail_msg("message: %s", p->message ? p->message : "(none)");
    run_free(&r);
}

/* An answer over the limit is an error of the call, with a message. */
static void test_answer_limit(void **st) {
    (void)st;
    size_t keep = ks_extender_max_answer;
    ks_extender_max_answer = 16;
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n", NULL);
    ks_extender_max_answer = keep;
    assert_int_equal(F.filter_calls, 1);
    const ks_sim_pod *p = the_pod(&r);
    assert_null(p->node);
    char want[256];
    snprintf(want, sizeof(want), "Post \"http://127.0.0.1:%u/ext/filter\": the answer is larger than the limit of 16 bytes",
             PORT);
    if (!p->message || !strstr(p->message, want)) fail_msg("message: %s", p->message ? p->message : "(none)");
    run_free(&r);
}

static void test_timeout(void **st) {
    (void)st;
    F.slow_ms = 1500;
    run r;
    simulate(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n  httpTimeout: 200ms\n", NULL);
    const ks_sim_pod *p = the_pod(&r);
    assert_null(p->node);
    if (!p->message || !strstr(p->message, "Client.Timeout exceeded"))
        fail_msg("message: %s", p->message ? p->message : "(none)");
    run_free(&r);
}

/* ---- preemption ------------------------------------------------------------------ */

/* urgent (2 cpu) fits nowhere. Alone, DefaultPreemption takes n1 (one
 * victim, v1) over n2 (two: v2b, then v2a, most important first). With
 * one victim each, n2 wins (its victim started later). */
static const char preempt_cluster[] =
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 100\n"
    "---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: v1, namespace: default, uid: u-v1}\n"
    "spec: {priorityClassName: low, nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]}\n"
    "status: {phase: Running, startTime: '2024-01-01T01:00:00Z'}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: v2a, namespace: default, uid: u-v2a}\n"
    "spec: {priorityClassName: low, nodeName: n2, containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    "status: {phase: Running, startTime: '2024-01-01T03:00:00Z'}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: v2b, namespace: default, uid: u-v2b}\n"
    "spec: {priorityClassName: low, nodeName: n2, containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    "status: {phase: Running, startTime: '2024-01-01T02:00:00Z'}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: urgent, namespace: default, uid: u-urgent, creationTimestamp: '2024-02-01T00:00:00Z'}\n"
    "spec: {priorityClassName: high, containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]}\n";

static const ks_sim_pod *pod_named(const run *r, const char *name) {
    for (uint32_t i = 0; i < r->res.npods; i++)
        if (!strcmp(ks_str(r->res.pods[i].pod->name), name)) return &r->res.pods[i];
    return NULL;
}

static bool preempted(const run *r, const char *name) {
    for (uint32_t i = 0; i < r->res.nvictims; i++)
        if (!strcmp(ks_str(r->res.victims[i].pod->name), name)) return true;
    return false;
}

/* Both nodes were sent, in either order (the dry runs' order). */
static void victims_sent(const char *a, const char *b) {
    if (strlen(F.first_victims) != strlen(a) + strlen(b) || !strstr(F.first_victims, a) || !strstr(F.first_victims, b))
        fail_msg("victims sent: %s", F.first_victims);
}

static const char *urgent_node(const run *r) {
    const ks_sim_pod *p = pod_named(r, "urgent");
    assert_non_null(p);
    return p->node ? p->node : "(none)";
}

static const char *urgent_message(const run *r) {
    const ks_sim_pod *p = pod_named(r, "urgent");
    assert_non_null(p);
    return p->message ? p->message : "(none)";
}

static void test_preempt_without_preempt_verb(void **st) {
    (void)st;
    run r;
    simulate_cluster(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  filterVerb: filter\n", preempt_cluster);
    assert_string_equal(urgent_node(&r), "n1");
    assert_true(preempted(&r, "v1"));
    assert_false(preempted(&r, "v2a"));
    assert_false(preempted(&r, "v2b"));
    assert_int_equal(F.preempt_calls, 0);
    run_free(&r);
}

static void test_preempt_drops_candidate_node(void **st) {
    (void)st;
    F.drop_node = "n1";
    run r;
    simulate_cluster(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  preemptVerb: preempt\n", preempt_cluster);
    assert_string_equal(urgent_node(&r), "n2");
    assert_false(preempted(&r, "v1"));
    assert_true(preempted(&r, "v2a"));
    assert_true(preempted(&r, "v2b"));
    assert_int_equal(F.preempt_calls, 1);
    /* full pods; victims most important first */
    assert_true(F.saw_full_victims);
    assert_false(F.saw_meta_victims);
    victims_sent("n1:u-v1;", "n2:u-v2b,u-v2a;");
    run_free(&r);
}

/* The extender spares v2b: n2 then needs only v2a and wins; once v2a is
 * gone urgent still does not fit there, and the second preemption (n2
 * has no victim left for the extender) takes n1. */
static void test_preempt_removes_victim(void **st) {
    (void)st;
    F.drop_uid = "u-v2b";
    run r;
    simulate_cluster(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  preemptVerb: preempt\n", preempt_cluster);
    assert_true(preempted(&r, "v2a"));
    assert_false(preempted(&r, "v2b"));
    assert_true(preempted(&r, "v1"));
    assert_string_equal(urgent_node(&r), "n1");
    assert_int_equal(F.preempt_calls, 2);
    run_free(&r);
}

static void test_preempt_ignorable_error_skipped(void **st) {
    (void)st;
    F.drop_node = "n1";
    run r;
    simulate_cluster(&r,
                     "- urlPrefix: http://127.0.0.1:1/ext\n  preemptVerb: preempt\n  ignorable: true\n"
                     "- urlPrefix: http://127.0.0.1:%u/ext\n  preemptVerb: preempt\n",
                     preempt_cluster);
    assert_int_equal(F.preempt_calls, 1);
    assert_string_equal(urgent_node(&r), "n2");
    assert_false(preempted(&r, "v1"));
    run_free(&r);
}

static void test_preempt_non_ignorable_error_fails(void **st) {
    (void)st;
    F.status = 500;
    run r;
    simulate_cluster(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  preemptVerb: preempt\n", preempt_cluster);
    assert_true(F.preempt_calls >= 1);
    assert_string_equal(urgent_node(&r), "(none)");
    assert_false(preempted(&r, "v1"));
    assert_false(preempted(&r, "v2a"));
    assert_false(preempted(&r, "v2b"));
    char want[256];
    snprintf(want, sizeof(want), "preemption: failed preempt with extender at URL http://127.0.0.1:%u/ext/preempt, code 500",
             PORT);
    if (!strstr(urgent_message(&r), want)) fail_msg("message: %s", urgent_message(&r));
    run_free(&r);
}

static void test_preempt_node_cache_capable(void **st) {
    (void)st;
    F.drop_node = "n1";
    run r;
    simulate_cluster(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  preemptVerb: preempt\n  nodeCacheCapable: true\n",
                     preempt_cluster);
    assert_true(F.saw_meta_victims);
    assert_false(F.saw_full_victims);
    victims_sent("n1:u-v1;", "n2:u-v2b,u-v2a;");
    assert_string_equal(urgent_node(&r), "n2");
    assert_true(preempted(&r, "v2a"));
    assert_true(preempted(&r, "v2b"));
    assert_false(preempted(&r, "v1"));
    run_free(&r);
}

static void test_preempt_unknown_uid_fails(void **st) {
    (void)st;
    F.add_unknown_uid = true;
    run r;
    simulate_cluster(&r, "- urlPrefix: http://127.0.0.1:%u/ext\n  preemptVerb: preempt\n", preempt_cluster);
    assert_string_equal(urgent_node(&r), "(none)");
    assert_false(preempted(&r, "v1"));
    char want[256];
    snprintf(want, sizeof(want), "preemption: extender: http://127.0.0.1:%u/ext claims to preempt pod (UID: &{no-such-uid}) on node: n",
             PORT);
    const char *msg = urgent_message(&r);
    if (!strstr(msg, want) || !strstr(msg, ", but the pod is not found on that node")) fail_msg("message: %s", msg);
    run_free(&r);
}

static void test_preempt_stops_when_no_candidate_left(void **st) {
    (void)st;
    F.drop_all = true;
    run r;
    simulate_cluster(&r,
                     "- urlPrefix: http://127.0.0.1:%u/ext1\n  preemptVerb: preempt\n"
                     "- urlPrefix: http://127.0.0.1:%u/ext2\n  preemptVerb: preempt\n",
                     preempt_cluster);
    assert_true(F.preempt_calls >= 1);
    assert_int_equal(F.preempt_calls_ext2, 0);
    assert_string_equal(urgent_node(&r), "(none)");
    assert_false(preempted(&r, "v1"));
    if (!strstr(urgent_message(&r), "preemption: no candidate node for preemption"))
        fail_msg("message: %s", urgent_message(&r));
    run_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_libcurl_loaded_on_first_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_failed_nodes_in_fit_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_node_cache_capable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prioritize_score_arithmetic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prioritize_error_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_delegated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_managed_resources_interest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ignorable_transport_error_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_ignorable_error_fails_attempt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_without_preempt_verb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_drops_candidate_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_removes_victim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_ignorable_error_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_non_ignorable_error_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_node_cache_capable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_unknown_uid_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_stops_when_no_candidate_left, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
