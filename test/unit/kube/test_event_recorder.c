/* The event recorder against a fake API server that stores Events and
 * answers creates and patches as the real one does (404 for a patch of a
 * missing Event, 404 for a group it does not serve). The recorder's wall
 * clock is the test's, so times and names in the requests are exact and
 * series age without waiting. */
#include "kube/client.h"
#include "codec/pb.h"
#include "kube/event_recorder.h"
#include "metrics/sched_metrics.h"
#include "util/log.h"

#include "apifake.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#define MS 1000000LL
#define SEC 1000000000LL
#define T0 1700000000123456789LL /* 2023-11-14T22:13:20.123456789Z */
#define V1_EVENTS "/apis/events.k8s.io/v1/namespaces/ns1/events"
#define CORE_EVENTS "/api/v1/namespaces/ns1/events"

/* ---- the fake ------------------------------------------------------------------ */

static struct {
    bool v1_absent;  /* events.k8s.io/v1 not served */
    bool ns_missing; /* the namespace does not exist */
    json_t *store;   /* path of each stored Event -> body */
} E;

static _Atomic int64_t NOW = T0;
static int64_t now_fn(void *arg) {
    (void)arg;
    return atomic_load(&NOW);
}

static char *status(int code, const char *reason, const char *kind) {
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1", "status", "Failure", "reason",
                          reason, "message", "not found", "code", code);
    if (kind) json_object_set_new(o, "details", json_pack("{s:s,s:s}", "name", "x", "kind", kind));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static int handler(const af_request *r, char **body) {
    bool v1 = !strncmp(r->path, "/apis/events.k8s.io/v1/", 23);
    bool core = !strncmp(r->path, "/api/v1/", 8);
    if (v1 && E.v1_absent) {
        *body = status(404, "NotFound", NULL);
        return 404;
    }
    if (!v1 && !core) return 404;
    if (!strcmp(r->method, "POST")) {
        if (E.ns_missing) {
            *body = status(404, "NotFound", "namespaces");
            return 404;
        }
        json_t *o = json_loads(r->body, 0, NULL);
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        char key[600];
        snprintf(key, sizeof key, "%s/%s", r->path, name ? name : "");
        if (json_object_get(E.store, key)) {
            json_decref(o);
            *body = status(409, "AlreadyExists", "events");
            return 409;
        }
        json_object_set_new(E.store, key, o);
        *body = strdup(r->body);
        return 201;
    }
    if (!strcmp(r->method, "PATCH")) {
        json_t *o = json_object_get(E.store, r->path);
        if (!o) {
            *body = status(404, "NotFound", "events");
            return 404;
        }
        json_t *p = json_loads(r->body, 0, NULL);
        json_object_update(o, p);
        json_decref(p);
        *body = json_dumps(o, JSON_COMPACT);
        return 200;
    }
    return 405;
}

/* ---- harness -------------------------------------------------------------------- */

static ks_kube_client *CLIENT;
static ks_event_recorder *REC;
static int64_t CLIENT_TIMEOUT_MS = 5000;
static const char *CONTENT_TYPE; /* clientConnection.contentType; NULL: none (JSON) */

static ks_event_recorder *rec_new(ks_event_recorder_options *o) {
    char server[64];
    snprintf(server, sizeof server, "http://127.0.0.1:%u", AF.port);
    ks_kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = server;
    cfg.source = "test";
    ks_kube_client_options co = {
        .config = &cfg, .max_retries = 1, .timeout_ms = CLIENT_TIMEOUT_MS, .content_type = CONTENT_TYPE};
    char *err = NULL;
    CLIENT = ks_kube_client_new(&co, &err);
    assert_non_null(CLIENT);
    o->hostname = "host1";
    o->now = now_fn;
    REC = ks_event_recorder_new_opts(CLIENT, o, &err);
    assert_non_null(REC);
    return REC;
}

static void rec_free(void) {
    ks_event_recorder_free(REC);
    REC = NULL;
    ks_kube_client_free(CLIENT);
    CLIENT = NULL;
}

static int setup(void **state) {
    (void)state;
    af_lock();
    json_decref(E.store);
    memset(&E, 0, sizeof E);
    E.store = json_object();
    af_unlock();
    atomic_store(&NOW, T0);
    ks_log_set_output(fopen("/dev/null", "w"));
    return af_start(handler) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    if (REC || CLIENT) rec_free();
    af_stop();
    af_lock();
    json_decref(E.store);
    E.store = NULL;
    af_unlock();
    return 0;
}

/* Everything emitted has been written (or folded). Bounded. */
static void wait_idle(ks_event_recorder *r) {
    for (int i = 0; i < 1000; i++) {
        ks_event_recorder_stats st;
        ks_event_recorder_stats_get(r, &st);
        if (st.queued == 0 && st.outstanding == 0) return;
        struct timespec ts = {0, 10 * MS};
        nanosleep(&ts, NULL);
    }
    fail_msg("the recorder did not become idle");
}

static bool p_nlog(void *a) { return AF.nlog >= *(int *)a; }

static void wait_requests(int n) { assert_true(af_wait(p_nlog, &n, 10)); }

static const ks_event_ref POD1 = {.kind = "Pod", .ns = "ns1", .name = "pod1", .uid = "uid-1", .api_version = "v1",
                                  .resource_version = "5"};

static void emit(const char *note) {
    ks_event_recorder_emit(REC, "sched-a", &POD1, NULL, "Warning", "FailedScheduling", "Scheduling", note);
}

static json_t *body_of(int i) {
    af_request r = af_get(i);
    json_t *o = json_loads(r.body, 0, NULL);
    assert_non_null(o);
    return o;
}

static const char *js(json_t *o, const char *path) {
    /* "a.b" */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = o;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, ".")) cur = json_object_get(cur, tok);
    return json_string_value(cur);
}

static long long ji(json_t *o, const char *a, const char *b) {
    json_t *cur = json_object_get(o, a);
    if (b) cur = json_object_get(cur, b);
    return json_integer_value(cur);
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_create(void **state) {
    (void)state;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    emit("0/3 nodes are available: 3 Insufficient cpu.");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 1);
    af_request r = af_get(0);
    assert_string_equal(r.method, "POST");
    assert_string_equal(r.path, V1_EVENTS);
    assert_string_equal(r.content_type, "application/json");
    json_t *b = body_of(0);
    char name[64];
    snprintf(name, sizeof name, "pod1.%llx", (unsigned long long)T0);
    assert_string_equal(js(b, "metadata.name"), name);
    assert_string_equal(js(b, "metadata.namespace"), "ns1");
    assert_string_equal(js(b, "eventTime"), "2023-11-14T22:13:20.123456Z");
    assert_string_equal(js(b, "reportingController"), "sched-a");
    assert_string_equal(js(b, "reportingInstance"), "sched-a-host1");
    assert_string_equal(js(b, "action"), "Scheduling");
    assert_string_equal(js(b, "reason"), "FailedScheduling");
    assert_string_equal(js(b, "type"), "Warning");
    assert_string_equal(js(b, "note"), "0/3 nodes are available: 3 Insufficient cpu.");
    assert_string_equal(js(b, "regarding.kind"), "Pod");
    assert_string_equal(js(b, "regarding.namespace"), "ns1");
    assert_string_equal(js(b, "regarding.name"), "pod1");
    assert_string_equal(js(b, "regarding.uid"), "uid-1");
    assert_string_equal(js(b, "regarding.apiVersion"), "v1");
    assert_string_equal(js(b, "regarding.resourceVersion"), "5");
    assert_null(json_object_get(b, "series"));
    assert_null(json_object_get(b, "related"));
    json_decref(b);

    /* a related object goes into related; another type is refused */
    ks_event_ref node = {.kind = "Node", .name = "n1", .api_version = "v1"};
    atomic_fetch_add(&NOW, 1); /* names carry the time: a new one */
    ks_event_recorder_emit(REC, "sched-a", &POD1, &node, "Normal", "Scheduled", "Binding", "ok");
    ks_event_recorder_emit(REC, "sched-a", &POD1, NULL, "Bogus", "Scheduled", "Binding", "no");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 2);
    b = body_of(1);
    assert_string_equal(js(b, "related.kind"), "Node");
    assert_string_equal(js(b, "related.name"), "n1");
    assert_null(json_object_get(json_object_get(b, "related"), "namespace"));
    json_decref(b);
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.emitted, 2);
    assert_int_equal(st.created, 2);
    assert_string_equal(st.api, "events.k8s.io/v1");
    rec_free();
}

/* The second occurrence turns the Event into a series (one patch), later
 * ones are only counted until the series has been quiet for 6 minutes. */
static void test_series(void **state) {
    (void)state;
    ks_event_recorder_options o = {.finish_period_ns = 50 * MS};
    rec_new(&o);
    emit("first note");
    wait_requests(1);
    json_t *b0 = body_of(0);
    char *name = strdup(js(b0, "metadata.name"));
    json_decref(b0);
    atomic_fetch_add(&NOW, 1 * SEC);
    emit("second note, same key");
    wait_requests(2);
    af_request p = af_get(1);
    assert_string_equal(p.method, "PATCH");
    char path[256];
    snprintf(path, sizeof path, "%s/%s", V1_EVENTS, name);
    assert_string_equal(p.path, path);
    assert_string_equal(p.content_type, "application/strategic-merge-patch+json");
    assert_string_equal(p.body, "{\"series\":{\"count\":2,\"lastObservedTime\":\"2023-11-14T22:13:21.123456Z\"}}");
    assert_int_equal(p.status, 200);

    atomic_fetch_add(&NOW, 1 * SEC);
    emit("third");
    /* another resourceVersion is another key */
    ks_event_ref pod_rv6 = POD1;
    pod_rv6.resource_version = "6";
    ks_event_recorder_emit(REC, "sched-a", &pod_rv6, NULL, "Warning", "FailedScheduling", "Scheduling", "x");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 3);
    assert_string_equal(af_get(2).method, "POST");
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.correlated, 1);
    assert_int_equal(st.cached, 2);

    /* 7 minutes later: the series gets its final count, both keys go */
    atomic_fetch_add(&NOW, 7 * 60 * SEC);
    wait_requests(4);
    p = af_get(3);
    assert_string_equal(p.method, "PATCH");
    assert_string_equal(p.path, path);
    assert_string_equal(p.body, "{\"series\":{\"count\":3,\"lastObservedTime\":\"2023-11-14T22:13:22.123456Z\"}}");
    wait_idle(REC);
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.cached, 0);
    /* the same event now starts afresh */
    emit("again");
    wait_requests(5);
    assert_string_equal(af_get(4).method, "POST");
    json_t *b4 = body_of(4);
    assert_string_not_equal(js(b4, "metadata.name"), name);
    json_decref(b4);
    free(name);
    rec_free();
}

/* The series patch finds the Event gone (it expired): create it again,
 * whole, with its series. */
static void test_series_recreate(void **state) {
    (void)state;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    emit("first");
    wait_requests(1);
    af_lock();
    json_object_clear(E.store);
    af_unlock();
    emit("second");
    wait_requests(3);
    assert_string_equal(af_get(1).method, "PATCH");
    assert_int_equal(af_get(1).status, 404);
    af_request c = af_get(2);
    assert_string_equal(c.method, "POST");
    assert_string_equal(c.path, V1_EVENTS);
    assert_int_equal(c.status, 201);
    json_t *b = body_of(2);
    assert_int_equal(ji(b, "series", "count"), 2);
    assert_string_equal(js(b, "note"), "first"); /* the stored event's */
    json_decref(b);
    rec_free();
}

/* Every 30 minutes (here: often) open series are written again. */
static bool p_patch3(void *a) {
    (void)a;
    for (int i = 0; i < AF.nlog; i++)
        if (!strcmp(AF.log[i].method, "PATCH") && strstr(AF.log[i].body, "\"count\":3")) return true;
    return false;
}

static void test_series_refresh(void **state) {
    (void)state;
    ks_event_recorder_options o = {.refresh_period_ns = 50 * MS};
    rec_new(&o);
    emit("a");
    emit("b");
    emit("c");
    assert_true(af_wait(p_patch3, NULL, 10));
    rec_free();
}

static void test_truncate(void **state) {
    (void)state;
    char *s = ks_event_truncate_note("short");
    assert_string_equal(s, "short");
    free(s);
    char big[2001];
    memset(big, 'x', 2000);
    big[2000] = 0;
    s = ks_event_truncate_note(big);
    assert_int_equal(strlen(s), 1024);
    assert_string_equal(s + 1020, " ...");
    free(s);
    memset(big, 'x', 1024);
    big[1024] = 0;
    s = ks_event_truncate_note(big);
    assert_int_equal(strlen(s), 1024); /* exactly the limit: kept */
    assert_int_equal(s[1023], 'x');
    free(s);
    /* never half a character: "é" at bytes 1019-1020 goes whole */
    char utf[1200];
    memset(utf, 'a', 1019);
    strcpy(utf + 1019, "\xc3\xa9");
    memset(utf + 1021, 'b', 100);
    utf[1121] = 0;
    s = ks_event_truncate_note(utf);
    assert_int_equal(strlen(s), 1023);
    assert_string_equal(s + 1019, " ...");
    free(s);
    /* invalid UTF-8 becomes U+FFFD, as Go's JSON encoder writes it */
    s = ks_event_truncate_note("ab\xff" "c");
    assert_string_equal(s, "ab\xef\xbf\xbd" "c");
    free(s);
    /* each invalid byte, once one was seen: overlong, cut short; valid kept */
    s = ks_event_truncate_note("\xc3\xa9" "x\xc0\x80" "y\xe2\x82");
    assert_string_equal(s, "\xc3\xa9" "x\xef\xbf\xbd\xef\xbf\xbd" "y\xef\xbf\xbd\xef\xbf\xbd");
    free(s);
    s = ks_event_truncate_note("\xe2\x82\xac" "\xf0\x9f\x98\x80");
    assert_string_equal(s, "\xe2\x82\xac" "\xf0\x9f\x98\x80");
    free(s);

    /* through the recorder */
    ks_event_recorder_options o = {0};
    rec_new(&o);
    memset(big, 'y', 2000);
    big[2000] = 0;
    emit(big);
    wait_requests(1);
    json_t *b = body_of(0);
    assert_int_equal(strlen(js(b, "note")), 1024);
    assert_string_equal(js(b, "note") + 1020, " ...");
    json_decref(b);
    rec_free();
}

/* events.k8s.io/v1 not served: the first POST's 404 switches to core/v1
 * Events (tools/record's form and de-duplication). */
static void test_fallback_core(void **state) {
    (void)state;
    E.v1_absent = true;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    emit("n1");
    wait_requests(2);
    assert_string_equal(af_get(0).path, V1_EVENTS);
    assert_int_equal(af_get(0).status, 404);
    af_request c = af_get(1);
    assert_string_equal(c.method, "POST");
    assert_string_equal(c.path, CORE_EVENTS);
    json_t *b = body_of(1);
    char name[64];
    snprintf(name, sizeof name, "pod1.%llx", (unsigned long long)T0);
    assert_string_equal(js(b, "metadata.name"), name);
    assert_string_equal(js(b, "metadata.namespace"), "ns1");
    assert_string_equal(js(b, "involvedObject.kind"), "Pod");
    assert_string_equal(js(b, "involvedObject.name"), "pod1");
    assert_string_equal(js(b, "involvedObject.uid"), "uid-1");
    assert_string_equal(js(b, "involvedObject.resourceVersion"), "5");
    assert_string_equal(js(b, "reason"), "FailedScheduling");
    assert_string_equal(js(b, "message"), "n1");
    assert_string_equal(js(b, "source.component"), "sched-a");
    assert_string_equal(js(b, "reportingComponent"), "sched-a");
    assert_string_equal(js(b, "reportingInstance"), "");
    assert_string_equal(js(b, "firstTimestamp"), "2023-11-14T22:13:20Z");
    assert_string_equal(js(b, "lastTimestamp"), "2023-11-14T22:13:20Z");
    assert_int_equal(ji(b, "count", NULL), 1);
    assert_true(json_is_null(json_object_get(b, "eventTime")));
    assert_null(json_object_get(b, "action"));
    json_decref(b);

    /* the same event again: a count patch of the same Event */
    atomic_fetch_add(&NOW, 1 * SEC);
    emit("n1");
    wait_requests(3);
    af_request p = af_get(2);
    assert_string_equal(p.method, "PATCH");
    char path[256];
    snprintf(path, sizeof path, "%s/%s", CORE_EVENTS, name);
    assert_string_equal(p.path, path);
    assert_string_equal(p.body, "{\"count\":2,\"lastTimestamp\":\"2023-11-14T22:13:21Z\",\"message\":\"n1\"}");
    /* another message is another Event; events.k8s.io/v1 is not asked again */
    emit("n2");
    wait_requests(4);
    assert_string_equal(af_get(3).method, "POST");
    assert_string_equal(af_get(3).path, CORE_EVENTS);
    wait_idle(REC);
    assert_int_equal(af_count("POST", "/apis/"), 1);
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_string_equal(st.api, "v1");
    rec_free();
}

/* A 404 about the namespace is no reason to change API. */
static void test_namespace_missing(void **state) {
    (void)state;
    E.ns_missing = true;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    emit("n1");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 1);
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.rejected, 1);
    assert_string_equal(st.api, "events.k8s.io/v1");
    rec_free();
}

/* A slow API server: the queue fills, the rest is dropped and counted;
 * what was queued is written. */
static void test_queue_bound(void **state) {
    (void)state;
    af_lock();
    AF.delay_ms = 100;
    af_unlock();
    ks_event_recorder_options o = {.queue_size = 5, .max_outstanding = 1};
    rec_new(&o);
    ks_metric *full = ks_metric_get(ks_sm()->ksched_k8s_events_dropped, "queue_full");
    uint64_t before = ks_counter_value(full);
    for (int i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof name, "pod%d", i);
        ks_event_ref ref = POD1;
        ref.name = name;
        ks_event_recorder_emit(REC, "sched-a", &ref, NULL, "Warning", "FailedScheduling", "Scheduling", "n");
    }
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_true(st.dropped > 0);
    assert_int_equal(st.emitted + st.dropped, 40);
    assert_true(st.queued <= 5);
    assert_int_equal(ks_event_recorder_dropped(REC), st.dropped);
    assert_int_equal(ks_counter_value(full) - before, st.dropped); /* ksched_events_dropped_total */
    wait_idle(REC);
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.created, st.emitted);
    assert_int_equal(af_nlog(), (int)st.emitted);
    rec_free();
}

/* tools/record: the 10th distinct message about one object and reason
 * within 10 minutes becomes a combined event, itself then counted. */
static void test_legacy_aggregation(void **state) {
    (void)state;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    for (int i = 0; i < 10; i++) {
        char m[16];
        snprintf(m, sizeof m, "m%d", i);
        atomic_fetch_add(&NOW, 1 * SEC);
        ks_event_recorder_emit_legacy(REC, "sched-a", &POD1, "Warning", "FailedScheduling", m);
    }
    wait_requests(10);
    wait_idle(REC);
    for (int i = 0; i < 9; i++) {
        json_t *b = body_of(i);
        char m[16];
        snprintf(m, sizeof m, "m%d", i);
        assert_string_equal(af_get(i).path, CORE_EVENTS);
        assert_string_equal(js(b, "message"), m);
        json_decref(b);
    }
    json_t *b = body_of(9);
    assert_string_equal(js(b, "message"), "(combined from similar events): m9");
    assert_string_equal(js(b, "source.component"), "sched-a");
    assert_string_equal(js(b, "reportingComponent"), "");
    assert_int_equal(ji(b, "count", NULL), 1);
    char *name = strdup(js(b, "metadata.name"));
    json_decref(b);
    atomic_fetch_add(&NOW, 1 * SEC);
    ks_event_recorder_emit_legacy(REC, "sched-a", &POD1, "Warning", "FailedScheduling", "m10");
    wait_requests(11);
    af_request p = af_get(10);
    assert_string_equal(p.method, "PATCH");
    char path[256];
    snprintf(path, sizeof path, "%s/%s", CORE_EVENTS, name);
    assert_string_equal(p.path, path);
    assert_string_equal(p.body, "{\"count\":2,\"lastTimestamp\":\"2023-11-14T22:13:31Z\","
                                "\"message\":\"(combined from similar events): m10\"}");
    free(name);
    rec_free();
}

/* tools/record's spam filter: 25 events per object at once, then one per
 * 5 minutes. */
static void test_legacy_spam(void **state) {
    (void)state;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    for (int i = 0; i < 30; i++)
        ks_event_recorder_emit_legacy(REC, "sched-a", &POD1, "Normal", "LeaderElection", "x became leader");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 25);
    assert_int_equal(af_count("POST", CORE_EVENTS), 1);
    assert_int_equal(af_count("PATCH", CORE_EVENTS), 24);
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.correlated, 5);
    /* 5 minutes later one more goes through */
    atomic_fetch_add(&NOW, 300 * SEC);
    ks_event_recorder_emit_legacy(REC, "sched-a", &POD1, "Normal", "LeaderElection", "x became leader");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 26);
    rec_free();
}

/* Shutdown writes the count of an open series before returning. */
static void test_shutdown_flush(void **state) {
    (void)state;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    emit("a");
    emit("b");
    emit("c");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 2);
    ks_event_recorder_free(REC);
    REC = NULL;
    assert_int_equal(af_nlog(), 3);
    af_request p = af_get(2);
    assert_string_equal(p.method, "PATCH");
    assert_non_null(strstr(p.body, "\"count\":3"));
    rec_free();
}

/* The second occurrence's series patch waits for the create's answer
 * (client-go writes one event at a time): sent beside a slow create, it
 * reached the API server first, got a 404, and the pair stayed two
 * count-1 writes. */
static void test_series_waits_for_its_create(void **state) {
    (void)state;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    ks_event_ref other = POD1;
    other.name = "pod0";
    ks_event_recorder_emit(REC, "sched-a", &other, NULL, "Warning", "FailedScheduling", "Scheduling", "x");
    wait_idle(REC); /* the API is known: writes go side by side */
    af_lock();
    AF.delay_ms = 300;
    af_unlock();
    emit("first");
    emit("second, same key");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 3);
    af_request c = af_get(1), p = af_get(2);
    assert_string_equal(c.method, "POST");
    assert_int_equal(c.status, 201);
    assert_string_equal(p.method, "PATCH");
    assert_int_equal(p.status, 200);
    assert_non_null(strstr(p.body, "\"count\":2"));
    rec_free();
}

/* New events wait batch_ns for more and are written together: a batch
 * that fills (64 events) goes at once; the rest waits for its time or,
 * at a stop, goes then. (No timing asserted: the wait is 10 minutes.) */
static void test_batch(void **state) {
    (void)state;
    ks_event_recorder_options o = {.batch_ns = 600LL * 1000 * MS};
    rec_new(&o);
    for (int i = 0; i < 70; i++) {
        char name[32];
        snprintf(name, sizeof name, "pod%d", i);
        ks_event_ref ref = POD1;
        ref.name = name;
        ks_event_recorder_emit(REC, "sched-a", &ref, NULL, "Normal", "Scheduled", "Binding", "n");
    }
    /* the first alone (the API is not known before its answer), then a
     * full batch */
    wait_requests(65);
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.queued, 5);
    assert_int_equal(af_nlog(), 65);
    ks_event_recorder_free(REC);
    REC = NULL;
    assert_int_equal(af_nlog(), 70);
    rec_free();
}

/* An event waiting to be retried (its write got no answer) is written at
 * a stop, not dropped because its 10 s sleep outlasts the flush. */
static void test_shutdown_retries_now(void **state) {
    (void)state;
    CLIENT_TIMEOUT_MS = 200;
    af_lock();
    AF.delay_ms = 600;
    af_unlock();
    ks_event_recorder_options o = {.flush_timeout_ns = 3000 * MS};
    rec_new(&o);
    ks_metric *shut = ks_metric_get(ks_sm()->ksched_k8s_events_dropped, "shutdown");
    uint64_t before = ks_counter_value(shut);
    emit("a");
    /* the write times out; the fake logs it when it answers, late */
    wait_requests(1);
    af_lock();
    AF.delay_ms = 0;
    af_unlock();
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(REC, &st);
    assert_int_equal(st.created, 0);
    ks_event_recorder_free(REC);
    REC = NULL;
    CLIENT_TIMEOUT_MS = 5000;
    assert_int_equal(af_nlog(), 2);
    af_request r = af_get(1);
    assert_string_equal(r.method, "POST");
    /* the late first write went through: 409, already there, done */
    assert_true(r.status == 201 || r.status == 409);
    assert_int_equal(ks_counter_value(shut), before);
    rec_free();
}

/* A server that never answers in time: free returns after the flush
 * timeout, counting what it could not write. */
static void test_shutdown_bounded(void **state) {
    (void)state;
    af_lock();
    AF.delay_ms = 3000;
    af_unlock();
    ks_event_recorder_options o = {.flush_timeout_ns = 200 * MS, .max_outstanding = 1};
    rec_new(&o);
    emit("a");
    ks_event_ref other = POD1;
    other.name = "pod2";
    ks_event_recorder_emit(REC, "sched-a", &other, NULL, "Warning", "FailedScheduling", "Scheduling", "b");
    ks_event_recorder *r = REC;
    ks_event_recorder_stats st;
    ks_event_recorder_stats_get(r, &st);
    assert_int_equal(st.emitted, 2);
    REC = NULL;
    ks_event_recorder_free(r);
    /* the client is freed after: the request in flight is cancelled */
    rec_free();
}

/* With a protobuf contentType the Event is created as protobuf (what
 * client-go sends), carrying the same fields. */
static void test_create_protobuf(void **state) {
    (void)state;
    CONTENT_TYPE = KS_KUBE_PROTOBUF;
    ks_event_recorder_options o = {0};
    rec_new(&o);
    CONTENT_TYPE = NULL;
    emit("0/3 nodes are available: 3 Insufficient cpu.");
    wait_idle(REC);
    assert_int_equal(af_nlog(), 1);
    af_request r = af_get(0);
    assert_string_equal(r.method, "POST");
    assert_string_equal(r.content_type, KS_KUBE_PROTOBUF);
    ks_arena *a = ks_arena_new(0);
    ks_tree *t = NULL;
    char *err = NULL;
    if (!ks_pb_decode_object(a, r.body, r.body_len, &t, &err)) fail_msg("%s", err);
    assert_string_equal(kt_get(t, "kind")->text, "Event");
    assert_string_equal(kt_get(t, "eventTime")->text, "2023-11-14T22:13:20.123456Z");
    assert_string_equal(kt_get(t, "reason")->text, "FailedScheduling");
    assert_string_equal(kt_get(t, "note")->text, "0/3 nodes are available: 3 Insufficient cpu.");
    assert_string_equal(kt_get(kt_get(t, "regarding"), "uid")->text, "uid-1");
    ks_arena_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_protobuf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_recreate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_refresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_core, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_legacy_aggregation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_legacy_spam, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_waits_for_its_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_retries_now, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
