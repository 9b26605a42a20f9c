/* The reflector against a scripted API server on 127.0.0.1: pagination,
 * bookmarks, 410 and the relist's derived events, a watch cut inside an
 * event, malformed objects in a list and in a watch, a missing resource,
 * an expired continue token. */
#include "kube/client.h"
#include "kube/reflector.h"
#include "util/log.h"
#include "util/strbuf.h"

#include "kube_fake.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct rec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char ev[64][160];
    int n;
    int synced;
} rec;

static rec R;

static const char *tstr(const ks_tree *t) { return t && t->text ? t->text : ""; }

static void on_event(void *arg, ks_refl_event type, const ks_tree *obj) {
    rec *k = arg;
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED"};
    const ks_tree *md = kt_get(obj, "metadata");
    pthread_mutex_lock(&k->mu);
    if (k->n < 64) {
        if (type == KS_REFL_DELETED)
            snprintf(k->ev[k->n++], 160, "%s %s/%s uid=%s kind=%s", names[type], tstr(kt_get(md, "namespace")),
                     tstr(kt_get(md, "name")), tstr(kt_get(md, "uid")), tstr(kt_get(obj, "kind")));
        else
            snprintf(k->ev[k->n++], 160, "%s %s/%s rv=%s %s %s", names[type], tstr(kt_get(md, "namespace")),
                     tstr(kt_get(md, "name")), tstr(kt_get(md, "resourceVersion")), tstr(kt_get(obj, "apiVersion")),
                     tstr(kt_get(obj, "kind")));
    }
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

static void on_synced(void *arg) {
    rec *k = arg;
    pthread_mutex_lock(&k->mu);
    k->synced++;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

/* Wait (at most 10 s) until n events have arrived. */
static bool wait_events(int n) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    pthread_mutex_lock(&R.mu);
    while (R.n < n && pthread_cond_timedwait(&R.cv, &R.mu, &dl) == 0) {}
    bool ok = R.n >= n;
    pthread_mutex_unlock(&R.mu);
    return ok;
}

/* Wait (at most 10 s) until the fake has seen n requests starting with prefix. */
static bool wait_requests(const char *method, const char *prefix, int n) {
    for (int i = 0; i < 10000; i++) {
        if (fk_count(method, prefix) >= n) return true;
        usleep(1000);
    }
    return false;
}

static void expect_events(const char *const *want, int n) {
    if (!wait_events(n)) fail_msg("only %d events of %d", R.n, n);
    pthread_mutex_lock(&R.mu);
    for (int i = 0; i < n; i++)
        if (strcmp(R.ev[i], want[i]) != 0) fail_msg("event %d: \"%s\", want \"%s\"", i, R.ev[i], want[i]);
    pthread_mutex_unlock(&R.mu);
}

/* The i-th request whose URL starts with prefix. */
static fk_request nth_request(const char *prefix, int i) {
    pthread_mutex_lock(&FK.mu);
    fk_request r;
    memset(&r, 0, sizeof(r));
    for (int j = 0, k = 0; j < FK.nlog; j++)
        if (!strncmp(FK.log[j].url, prefix, strlen(prefix)) && k++ == i) {
            r = FK.log[j];
            break;
        }
    pthread_mutex_unlock(&FK.mu);
    return r;
}

static ks_kube_client *C;
static ks_kube_config CFG;
static FILE *logf_;
static char logpath[64];

/* The test's running reflector: a failed assertion leaves it running, and
 * teardown stops it before the client it uses is freed. */
static ks_reflector *LIVE;

static ks_reflector *refl_start(const ks_reflector_options *o, const ks_reflector_handler *h) {
    LIVE = ks_reflector_start(C, o, h);
    return LIVE;
}

static void refl_stop(ks_reflector *r) {
    if (r == LIVE) LIVE = NULL;
    ks_reflector_stop(r);
}

static int setup(void **st) {
    fk_reset();
    pthread_mutex_init(&R.mu, NULL);
    pthread_cond_init(&R.cv, NULL);
    R.n = 0;
    R.synced = 0;
    if (!fk_start_on(0, NULL, NULL)) return -1;
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", FK.port);
    memset(&CFG, 0, sizeof(CFG));
    CFG.server = strdup(server);
    ks_kube_client_options o = {.config = &CFG, .retry_base_ms = 10, .max_retries = 2};
    char *err = NULL;
    C = ks_kube_client_new(&o, &err);
    snprintf(logpath, sizeof(logpath), "/tmp/ks_refl_log_XXXXXX");
    int fd = mkstemp(logpath);
    if (fd < 0) return -1;
    logf_ = fdopen(fd, "w+");
    ks_log_set_output(logf_);
    return C ? 0 : -1;
}

static int teardown(void **st) {
    fk_release();
    if (LIVE) refl_stop(LIVE);
    ks_kube_client_free(C);
    fk_stop();
    ks_kube_config_free(&CFG);
    ks_log_set_output(stderr);
    fclose(logf_);
    unlink(logpath);
    return 0;
}

static int log_count(const char *needle) {
    fflush(logf_);
    FILE *f = fopen(logpath, "r");
    int n = 0;
    char line[1024];
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, needle)) n++;
    if (f) fclose(f);
    return n;
}

static ks_reflector *start(const char *path, uint32_t page) {
    ks_reflector_options o = {.kind = "Pod", .path = path, .page_size = page, .backoff_initial_ms = 10,
                              .field_selector = "status.phase!=Succeeded,status.phase!=Failed"};
    ks_reflector_handler h = {.arg = &R, .event = on_event, .synced = on_synced};
    return refl_start(&o, &h);
}

#define POD(name, rv) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\"}}"
#define LIST(rv, cont, ...) \
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv "\",\"continue\":\"" cont "\"},\"items\":[" __VA_ARGS__ "]}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define WPOD(name, rv) "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\"}}"

static void test_pagination(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("100", "c1", POD("a", "1") "," POD("b", "2"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "continue=c1", .body = LIST("100", "", POD("c", "3"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector *r = start("/api/v1/pods", 2);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=2 v1 Pod", "ADDED ns/c rv=3 v1 Pod"};
    expect_events(want, 3);
    assert_true(wait_requests("GET", "/api/v1/pods?allow", 1));
    assert_int_equal(R.synced, 1);
    assert_true(ks_reflector_synced(r));
    fk_request l1 = nth_request("/api/v1/pods", 0), l2 = nth_request("/api/v1/pods", 1), w = nth_request("/api/v1/pods", 2);
    assert_string_equal(l1.url, "/api/v1/pods?fieldSelector=status.phase!=Succeeded,status.phase!=Failed&limit=2&resourceVersion=0");
    /* continuation pages carry no resourceVersion */
    assert_string_equal(l2.url, "/api/v1/pods?continue=c1&fieldSelector=status.phase!=Succeeded,status.phase!=Failed&limit=2");
    assert_non_null(strstr(w.url, "allowWatchBookmarks=true"));
    assert_non_null(strstr(w.url, "&resourceVersion=100&"));
    assert_non_null(strstr(w.url, "&watch=true"));
    const char *to = strstr(w.url, "timeoutSeconds=");
    assert_non_null(to);
    long t = atol(to + 15);
    assert_true(t >= 300 && t < 600);
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.lists, 2);
    assert_int_equal(s.relists, 0);
    assert_int_equal(s.events, 3);
    refl_stop(r);
}

/* A handler whose synced takes its time: ks_reflector_synced turns true
 * only after it has returned, so that whoever polls it sees the handler's
 * work done. */
static atomic_int slow_synced_done;
static void on_synced_slow(void *arg) {
    usleep(100000);
    on_synced(arg);
    atomic_store(&slow_synced_done, 1);
}

static void test_synced_after_handler(void **st) {
    atomic_store(&slow_synced_done, 0);
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("10", "", POD("a", "1"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector_options o = {.kind = "Pod", .path = "/api/v1/pods", .backoff_initial_ms = 10};
    ks_reflector_handler h = {.arg = &R, .event = on_event, .synced = on_synced_slow};
    ks_reflector *r = refl_start(&o, &h);
    assert_true(wait_events(1));
    for (int i = 0; i < 100000 && !ks_reflector_synced(r); i++) usleep(100);
    assert_true(ks_reflector_synced(r));
    assert_int_equal(atomic_load(&slow_synced_done), 1);
    assert_int_equal(R.synced, 1);
    refl_stop(r);
}

/* Events split at awkward places (inside strings holding braces), a
 * bookmark, and a watch that ends: the next one starts at the bookmark. */
static void test_bookmark_and_framing(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("10", "", POD("a", "1"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=10",
                       .chunks = {"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"b\",\"namespa",
                                  "ce\":\"ns\",\"resourceVersion\":\"11\",\"annotations\":{\"x\":\"}{\\\"\\\\\"}}}}",
                                  "\n{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"20\"}}}\n"}});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=20", .hold = true, .times = -1});
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=11 v1 Pod"};
    expect_events(want, 2);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks=true", 2));
    assert_non_null(strstr(nth_request("/api/v1/pods?allow", 1).url, "resourceVersion=20"));
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.bookmarks, 1);
    assert_int_equal(s.watches, 2);
    assert_int_equal(s.decode_errors, 0);
    assert_int_equal(s.lists, 1); /* a watch that ends normally does not relist */
    /* the default page size */
    assert_non_null(strstr(nth_request("/api/v1/pods", 0).url, "limit=500"));
    refl_stop(r);
}

/* 410 as an ERROR event: backoff, relist at the last resourceVersion (410
 * again: at once a consistent list at ""), the difference as events. */
static void test_410_relist(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0",
                       .body = LIST("10", "", POD("a", "1") "," POD("b", "2") "," POD("c", "3"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true",
                       .chunks = {EV("ERROR", "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version: 10 (15)\",\"reason\":\"Expired\",\"code\":410}")}});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=10", .status = 410,
                       .body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\",\"message\":\"too old\"}"});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "limit=500", .body = LIST("20", "", POD("b", "2") "," POD("c", "5") "," POD("d", "6"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=2 v1 Pod", "ADDED ns/c rv=3 v1 Pod",
                                       "MODIFIED ns/c rv=5 v1 Pod", "ADDED ns/d rv=6 v1 Pod",
                                       "DELETED ns/a uid=u-a kind=Pod"};
    expect_events(want, 6);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks=true", 2));
    assert_non_null(strstr(nth_request("/api/v1/pods?allow", 1).url, "resourceVersion=20"));
    /* the relist at rv 10 asks the watch cache, unpaginated; the one after
     * its 410 is a paginated consistent list without a resourceVersion */
    fk_request l2 = nth_request("/api/v1/pods?field", 1), l3 = nth_request("/api/v1/pods?field", 2);
    assert_non_null(strstr(l2.url, "resourceVersion=10"));
    assert_null(strstr(l2.url, "limit="));
    assert_null(strstr(l3.url, "resourceVersion"));
    assert_non_null(strstr(l3.url, "limit=500"));
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.relists, 1);
    assert_true(s.watch_errors >= 1);
    assert_int_equal(R.synced, 1);
    /* b did not change: no event for it */
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.n, 6);
    pthread_mutex_unlock(&R.mu);
    refl_stop(r);
}

/* uids and resourceVersions longer than the known set keeps inline: a
 * relist still tells an unchanged object (no event) from one gone (its
 * uid in the DELETED stand-in). */
#define LONG1 "a-name-long-enough-that-its-uid-passes-forty-1"
#define LONG2 "a-name-long-enough-that-its-uid-passes-forty-2"
#define LONGRV "1000000000000000000000000000001"
static void test_relist_long_ids(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0",
                       .body = LIST("10", "", POD(LONG1, LONGRV) "," POD(LONG2, LONGRV) "," POD("c", "3"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true",
                       .chunks = {EV("ERROR", "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version: 10 (15)\",\"reason\":\"Expired\",\"code\":410}")}});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=10", .body = LIST("20", "", POD(LONG1, LONGRV) "," POD("c", "5"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const want[] = {"ADDED ns/" LONG1 " rv=" LONGRV " v1 Pod", "ADDED ns/" LONG2 " rv=" LONGRV " v1 Pod",
                                       "ADDED ns/c rv=3 v1 Pod", "MODIFIED ns/c rv=5 v1 Pod",
                                       "DELETED ns/" LONG2 " uid=u-" LONG2 " kind=Pod"};
    expect_events(want, 5);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks=true", 2));
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.n, 5);
    pthread_mutex_unlock(&R.mu);
    refl_stop(r);
}

/* The connection drops inside an event: the partial event is dropped and
 * the watch resumes from the last complete one. */
static void test_watch_cut(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("5", "", POD("a", "1"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=5",
                       .chunks = {EV("ADDED", WPOD("b", "6")), "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\""},
                       .cut = true});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=6", .chunks = {EV("ADDED", WPOD("c", "7"))},
                       .hold = true, .times = -1});
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=6 v1 Pod", "ADDED ns/c rv=7 v1 Pod"};
    expect_events(want, 3);
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.lists, 1);
    assert_int_equal(s.watches, 2);
    assert_int_equal(s.decode_errors, 0);
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.n, 3);
    pthread_mutex_unlock(&R.mu);
    refl_stop(r);
}

static void test_malformed(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0",
                       .body = LIST("5", "", POD("a", "1") ",\"a string\",{\"metadata\":{\"namespace\":\"x\"}}," POD("b", "2"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true",
                       .chunks = {"not json at all\n", EV("ADDED", "{\"kind\":\"Pod\",\"metadata\":{}}"),
                                  "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}},}\n",
                                  EV("SOMETHING", WPOD("y", "9")), EV("ADDED", WPOD("c", "7"))},
                       .hold = true});
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=2 v1 Pod", "ADDED ns/c rv=7 v1 Pod"};
    expect_events(want, 3);
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.decode_errors, 6);
    assert_int_equal(s.lists, 1);
    assert_int_equal(s.watches, 1);
    assert_int_equal(log_count("item 1: not an object"), 1);
    assert_int_equal(log_count("item 2: no metadata.name"), 1);
    assert_int_equal(log_count("Pod watch event 1 (/api/v1/pods): not a JSON object"), 1);
    assert_int_equal(log_count("Pod watch event 2 (ADDED, /api/v1/pods): no metadata.name"), 1);
    assert_int_equal(log_count("Pod watch event 3 (/api/v1/pods): Pod watch event 3:1: "), 1);
    assert_int_equal(log_count("unknown event type \"SOMETHING\""), 1);
    refl_stop(r);
}

/* A list item the JSON parser cannot read: the list fails, the message
 * names the item by its place in the list. */
static void test_unreadable_list_item(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .times = -1,
                       .body = LIST("5", "", POD("a", "1") ",{\"metadata\":tru}")});
    ks_reflector *r = start("/api/v1/pods", 0);
    assert_true(wait_requests("GET", "/api/v1/pods", 2));
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    if (!strstr(s.last_error, "Pod list (/api/v1/pods): cannot read the answer: Pod list item 1:1: "))
        fail_msg("last error: %s", s.last_error);
    assert_false(ks_reflector_synced(r));
    refl_stop(r);
}

/* An event that does not end within the limit: the stream is given up
 * with a message and the reflector lists again. */
static void test_event_limit(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("5", "", POD("a", "1"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=5",
                       .chunks = {EV("ADDED", WPOD("b", "6")),
                                  "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\",",
                                  "\"annotations\":{\"x\":\"" "0123456789012345678901234567890123456789"
                                  "0123456789012345678901234567890123456789012345678901234567890123456789\"}"},
                       .hold = true});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=6", .body = LIST("7", "", POD("a", "1") "," POD("b", "6"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector_options o = {.kind = "Pod", .path = "/api/v1/pods", .backoff_initial_ms = 10, .max_event_bytes = 100};
    ks_reflector_handler h = {.arg = &R, .event = on_event, .synced = on_synced};
    ks_reflector *r = refl_start(&o, &h);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=6 v1 Pod"};
    expect_events(want, 2);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks=true", 2));
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.relists, 1);
    assert_int_equal(log_count("Pod watch (/api/v1/pods): an event of over 100 bytes, the stream is broken"), 1);
    refl_stop(r);
}

/* A resource the server does not have (a CRD not installed): logged once,
 * retried with backoff, picked up when it appears. */
static void test_404(void **st) {
    ks_reflector_options o = {.kind = "PodGroup", .path = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
                              .backoff_initial_ms = 5};
    ks_reflector_handler h = {.arg = &R, .event = on_event, .synced = on_synced};
    ks_reflector *r = refl_start(&o, &h);
    assert_true(wait_requests("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 4));
    assert_false(ks_reflector_synced(r));
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_non_null(strstr(s.last_error, "PodGroup list (/apis/scheduling.x-k8s.io/v1alpha1/podgroups) failed: "
                                          "the server could not find the requested resource (HTTP 404)"));
    assert_int_equal(log_count("the server could not find the requested resource"), 1);
    fk_add((fk_answer){.path = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
                       .body = "{\"kind\":\"PodGroupList\",\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[{\"metadata\":{\"name\":\"g\",\"namespace\":\"ns\",\"resourceVersion\":\"3\"}}]}"});
    fk_add((fk_answer){.path = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", .query = "watch=true", .hold = true});
    static const char *const want[] = {"ADDED ns/g rv=3 scheduling.x-k8s.io/v1alpha1 PodGroup"};
    expect_events(want, 1);
    for (int i = 0; i < 10000 && !ks_reflector_synced(r); i++) usleep(1000);
    assert_true(ks_reflector_synced(r));
    refl_stop(r);
}

/* A continue token that expired between pages: one full list (no limit,
 * the first page's resourceVersion request). */
static void test_continue_expired(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("100", "c1", POD("a", "1"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "continue=c1", .status = 410,
                       .body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\",\"message\":\"The provided continue parameter is too old\"}"});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("120", "", POD("a", "1") "," POD("b", "2"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector *r = start("/api/v1/pods", 1);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=2 v1 Pod"};
    expect_events(want, 2);
    assert_true(wait_requests("GET", "/api/v1/pods?allow", 1));
    /* the lists without a continue token: the first page and the full list */
    fk_request l3 = nth_request("/api/v1/pods?field", 1), w = nth_request("/api/v1/pods?allow", 0);
    assert_null(strstr(l3.url, "limit"));
    assert_null(strstr(l3.url, "continue"));
    assert_non_null(strstr(l3.url, "resourceVersion=0"));
    assert_non_null(strstr(w.url, "resourceVersion=120"));
    refl_stop(r);
}

/* ---- Protocol Buffers ---------------------------------------------------------------- */

static void put_varint(ks_strbuf *b, uint64_t v) {
    while (v >= 0x80) {
        ks_sb_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    ks_sb_putc(b, (char)v);
}

static void put_len(ks_strbuf *b, unsigned num, const char *p, size_t n) {
    put_varint(b, (uint64_t)num << 3 | 2);
    put_varint(b, n);
    ks_sb_putn(b, p, n);
}

/* "k8s\0" + Unknown{typeMeta{av, kind}, raw} */
static void wrap(ks_strbuf *out, const char *kind, const char *raw, size_t n) {
    ks_strbuf tm;
    ks_sb_init(&tm);
    put_len(&tm, 1, "v1", 2);
    put_len(&tm, 2, kind, strlen(kind));
    ks_sb_putn(out, "k8s\0", 4);
    put_len(out, 1, tm.s, tm.len);
    put_len(out, 2, raw, n);
    ks_sb_free(&tm);
}

/* A Pod's message: metadata{name = 1, namespace = 3, uid = 5, resourceVersion = 6}. */
static void pod_raw(ks_strbuf *out, const char *name, const char *rv) {
    ks_strbuf md;
    ks_sb_init(&md);
    put_len(&md, 1, name, strlen(name));
    put_len(&md, 3, "ns", 2);
    char uid[32];
    snprintf(uid, sizeof(uid), "u-%s", name);
    put_len(&md, 5, uid, strlen(uid));
    put_len(&md, 6, rv, strlen(rv));
    put_len(out, 1, md.s, md.len);
    ks_sb_free(&md);
}

/* A watch frame: length, WatchEvent{type = 1, object = 2 {raw = 1}}. */
static void frame(ks_strbuf *out, const char *type, const char *name, const char *rv) {
    ks_strbuf raw, obj, inner, ev;
    ks_sb_init(&raw);
    ks_sb_init(&obj);
    ks_sb_init(&inner);
    ks_sb_init(&ev);
    if (name) {
        pod_raw(&raw, name, rv);
        wrap(&obj, "Pod", raw.s, raw.len);
    } else {
        /* a Pod whose spec's containers is a varint: malformed */
        ks_sb_putn(&raw, "\x12\x02\x12\x00\x12\x02\x10\x01", 8);
        wrap(&obj, "Pod", raw.s, raw.len);
    }
    put_len(&inner, 1, obj.s, obj.len);
    put_len(&ev, 1, type, strlen(type));
    put_len(&ev, 2, inner.s, inner.len);
    unsigned char hdr[4] = {(unsigned char)(ev.len >> 24), (unsigned char)(ev.len >> 16),
                            (unsigned char)(ev.len >> 8), (unsigned char)ev.len};
    ks_sb_putn(out, (const char *)hdr, 4);
    ks_sb_putn(out, ev.s, ev.len);
    ks_sb_free(&raw);
    ks_sb_free(&obj);
    ks_sb_free(&inner);
    ks_sb_free(&ev);
}

/* With clientConnection's protobuf contentType: the Accept client-go
 * sends, a protobuf list read item by item (a malformed item named and
 * skipped), a protobuf watch split anywhere across chunks (a malformed
 * frame named and skipped). */
static void test_protobuf(void **st) {
    ks_kube_client_free(C);
    ks_kube_client_options o = {.config = &CFG, .retry_base_ms = 10, .max_retries = 2,
                                .content_type = KS_KUBE_PROTOBUF};
    char *err = NULL;
    C = ks_kube_client_new(&o, &err);
    assert_non_null(C);
    ks_strbuf list, items, lm, watch;
    ks_sb_init(&list);
    ks_sb_init(&items);
    ks_sb_init(&lm);
    ks_sb_init(&watch);
    put_len(&lm, 2, "5", 1); /* ListMeta.resourceVersion */
    put_len(&items, 1, lm.s, lm.len);
    ks_strbuf one;
    ks_sb_init(&one);
    pod_raw(&one, "a", "1");
    put_len(&items, 2, one.s, one.len);
    put_len(&items, 2, "\x0a\x03\x0a\x01\x00", 5); /* metadata.name holds a NUL */
    ks_sb_reset(&one);
    pod_raw(&one, "b", "2");
    put_len(&items, 2, one.s, one.len);
    wrap(&list, "PodList", items.s, items.len);
    frame(&watch, "ADDED", "c", "7");
    frame(&watch, "ADDED", NULL, NULL);
    frame(&watch, "MODIFIED", "a", "8");
    /* three chunks: the cuts fall inside a length and inside an event */
    size_t c1 = 2, c2 = watch.len / 2;
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = list.s, .body_len = list.len});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true",
                       .chunks = {watch.s, watch.s + c1, watch.s + c2},
                       .chunk_len = {c1, c2 - c1, watch.len - c2},
                       .hold = true});
    int saved_v = ks_log_verbosity;
    ks_log_set_verbosity(2);
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=2 v1 Pod", "ADDED ns/c rv=7 v1 Pod",
                                       "MODIFIED ns/a rv=8 v1 Pod"};
    expect_events(want, 4);
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.decode_errors, 2);
    assert_int_equal(log_count("Pod list (/api/v1/pods): item 1: metadata.name: a string holding a NUL byte, skipped"),
                     1);
    assert_int_equal(log_count("Pod watch event 2 (/api/v1/pods): spec.containers[0]: wire type 0"), 1);
    assert_int_equal(log_count("Pod list (/api/v1/pods): the API server answers in Protocol Buffers"), 1);
    fk_request lr = nth_request("/api/v1/pods?", 0);
    assert_string_equal(lr.accept, "application/vnd.kubernetes.protobuf, */*");
    fk_request wr = nth_request("/api/v1/pods?allowWatchBookmarks", 0);
    assert_string_equal(wr.accept, "application/vnd.kubernetes.protobuf, */*");
    refl_stop(r);
    ks_log_set_verbosity(saved_v);
    ks_sb_free(&list);
    ks_sb_free(&items);
    ks_sb_free(&lm);
    ks_sb_free(&watch);
    ks_sb_free(&one);
}

/* A protobuf list is read while it arrives: its first items are handed
 * over before the answer ends (the list of every pod decodes while it is
 * sent), whatever the cuts between the chunks (inside the prefix, the
 * type, the raw length, the list's metadata, an item); a list cut short
 * is an error and listed again; stopping while the answer is held open
 * does not wait for it. */
static void test_protobuf_streamed(void **st) {
    ks_kube_client_free(C);
    ks_kube_client_options o = {.config = &CFG, .retry_base_ms = 10, .max_retries = 2,
                                .content_type = KS_KUBE_PROTOBUF};
    char *err = NULL;
    C = ks_kube_client_new(&o, &err);
    assert_non_null(C);
    ks_strbuf list, items, lm, one;
    ks_sb_init(&list);
    ks_sb_init(&items);
    ks_sb_init(&lm);
    ks_sb_init(&one);
    put_len(&lm, 2, "9", 1); /* ListMeta.resourceVersion */
    put_len(&items, 1, lm.s, lm.len);
    const char *names[] = {"a", "b", "c"}, *rvs[] = {"1", "2", "3"};
    size_t item_end[3];
    for (int i = 0; i < 3; i++) {
        ks_sb_reset(&one);
        pod_raw(&one, names[i], rvs[i]);
        put_len(&items, 2, one.s, one.len);
        item_end[i] = items.len;
    }
    wrap(&list, "PodList", items.s, items.len);
    size_t head = list.len - items.len; /* where the list's own bytes start */
    /* 1. the first item whole, the second half there, and the answer held open */
    size_t cut = head + item_end[0] + (item_end[1] - item_end[0]) / 2;
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .chunks = {list.s, list.s + 2},
                       .chunk_len = {2, cut - 2}, .hold = true});
    ks_reflector *r = start("/api/v1/pods", 0);
    static const char *const first[] = {"ADDED ns/a rv=1 v1 Pod"};
    expect_events(first, 1);
    assert_false(ks_reflector_synced(r));
    usleep(20000);
    assert_int_equal(R.n, 1); /* b is not whole yet */
    refl_stop(r);
    /* 2. cut short after b: an error, then the whole list in pieces of every size */
    fk_reset();
    R.n = 0;
    size_t c1 = 7, c2 = head - 1, c3 = head + 3, c4 = head + item_end[0] + 5, c5 = head + item_end[1];
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .chunks = {list.s, list.s + c1},
                       .chunk_len = {c1, c5 - c1}, .cut = true});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0",
                       .chunks = {list.s, list.s + c1, list.s + c2, list.s + c3, list.s + c4, list.s + c5},
                       .chunk_len = {c1, c2 - c1, c3 - c2, c4 - c3, c5 - c4, list.len - c5}});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    r = start("/api/v1/pods", 0);
    static const char *const all[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=2 v1 Pod", "ADDED ns/c rv=3 v1 Pod"};
    expect_events(all, 3);
    for (int i = 0; i < 10000 && !ks_reflector_synced(r); i++) usleep(1000);
    assert_true(ks_reflector_synced(r));
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks", 1));
    assert_non_null(strstr(nth_request("/api/v1/pods?allowWatchBookmarks", 0).url, "resourceVersion=9"));
    ks_reflector_stats s;
    ks_reflector_stats_get(r, &s);
    assert_int_equal(s.lists, 2);
    assert_int_equal(log_count("Pod list (/api/v1/pods) failed: "), 1);
    refl_stop(r);
    ks_sb_free(&list);
    ks_sb_free(&items);
    ks_sb_free(&lm);
    ks_sb_free(&one);
}

/* A protobuf PodList page: resourceVersion rv, continue token cont, pods
 * named names[0..n). */
static void pb_page(ks_strbuf *out, const char *rv, const char *cont, const char *const *names, int n) {
    ks_strbuf items, lm, one;
    ks_sb_init(&items);
    ks_sb_init(&lm);
    ks_sb_init(&one);
    put_len(&lm, 2, rv, strlen(rv));
    if (*cont) put_len(&lm, 3, cont, strlen(cont));
    put_len(&items, 1, lm.s, lm.len);
    for (int i = 0; i < n; i++) {
        ks_sb_reset(&one);
        pod_raw(&one, names[i], "1");
        put_len(&items, 2, one.s, one.len);
    }
    wrap(out, "PodList", items.s, items.len);
    ks_sb_free(&items);
    ks_sb_free(&lm);
    ks_sb_free(&one);
}

static ks_reflector *start_first_pages(uint32_t first_page) {
    ks_kube_client_free(C);
    ks_kube_client_options o = {.config = &CFG, .retry_base_ms = 10, .max_retries = 2,
                                .content_type = KS_KUBE_PROTOBUF};
    char *err = NULL;
    C = ks_kube_client_new(&o, &err);
    assert_non_null(C);
    ks_reflector_options ro = {.kind = "Pod", .path = "/api/v1/pods", .backoff_initial_ms = 10,
                               .first_page_size = first_page,
                               .field_selector = "status.phase!=Succeeded,status.phase!=Failed"};
    ks_reflector_handler h = {.arg = &R, .event = on_event, .synced = on_synced};
    return refl_start(&ro, &h);
}

/* first_page_size: the first list is a consistent one (no
 * resourceVersion) in pages of that size; page 2 is asked for as soon as
 * page 1's continue token is in, while page 1 is still arriving, and its
 * items are handed over only after page 1's: in the list's order. The
 * watch starts at the list's resourceVersion. */
static void test_first_list_pipelined(void **st) {
    ks_strbuf p1, p2;
    ks_sb_init(&p1);
    ks_sb_init(&p2);
    static const char *const n1[] = {"a", "b"}, *const n2[] = {"c"};
    pb_page(&p1, "9", "c1", n1, 2);
    pb_page(&p2, "9", "", n2, 1);
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "continue=c1", .body = p2.s, .body_len = p2.len});
    /* page 1 whole but held open: the reflector cannot know it ended */
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "limit=2", .chunks = {p1.s}, .chunk_len = {p1.len},
                       .hold = true});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    ks_reflector *r = start_first_pages(2);
    static const char *const first[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=1 v1 Pod"};
    expect_events(first, 2);
    assert_true(wait_requests("GET", "/api/v1/pods?continue=c1", 1));
    usleep(50000);
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.n, 2); /* page 2 is in, but waits for page 1's end */
    pthread_mutex_unlock(&R.mu);
    assert_false(ks_reflector_synced(r));
    fk_request l1 = nth_request("/api/v1/pods", 0), l2 = nth_request("/api/v1/pods", 1);
    assert_string_equal(l1.url, "/api/v1/pods?fieldSelector=status.phase!=Succeeded,status.phase!=Failed&limit=2");
    assert_string_equal(l2.url, "/api/v1/pods?continue=c1&fieldSelector=status.phase!=Succeeded,status.phase!=Failed&limit=2");
    fk_release();
    static const char *const all[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=1 v1 Pod", "ADDED ns/c rv=1 v1 Pod"};
    expect_events(all, 3);
    for (int i = 0; i < 10000 && !ks_reflector_synced(r); i++) usleep(1000);
    assert_true(ks_reflector_synced(r));
    assert_int_equal(R.synced, 1);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks", 1));
    assert_non_null(strstr(nth_request("/api/v1/pods?allowWatchBookmarks", 0).url, "resourceVersion=9"));
    refl_stop(r);
    ks_sb_free(&p1);
    ks_sb_free(&p2);
}

/* The page asked for early answers 410 (its continue token expired): the
 * list starts over in one consistent, unpaginated list, whose items
 * replace what the first page delivered (an object gone since is
 * DELETED). */
static void test_first_list_pipelined_expired(void **st) {
    ks_strbuf p1, full;
    ks_sb_init(&p1);
    ks_sb_init(&full);
    static const char *const n1[] = {"a", "b"}, *const nf[] = {"b", "c", "d"};
    pb_page(&p1, "9", "c1", n1, 2);
    pb_page(&full, "12", "", nf, 3);
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "continue=c1", .status = 410,
                       .body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\",\"message\":\"continue expired\"}"});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "limit=2", .body = p1.s, .body_len = p1.len});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "fieldSelector", .body = full.s, .body_len = full.len});
    ks_reflector *r = start_first_pages(2);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod", "ADDED ns/b rv=1 v1 Pod", "ADDED ns/c rv=1 v1 Pod",
                                       "ADDED ns/d rv=1 v1 Pod", "DELETED ns/a uid=u-a kind=Pod"};
    expect_events(want, 5);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks", 1));
    assert_non_null(strstr(nth_request("/api/v1/pods?allowWatchBookmarks", 0).url, "resourceVersion=12"));
    fk_request l3 = nth_request("/api/v1/pods?field", 1);
    assert_null(strstr(l3.url, "limit="));
    assert_null(strstr(l3.url, "resourceVersion"));
    assert_int_equal(R.synced, 1);
    refl_stop(r);
    ks_sb_free(&p1);
    ks_sb_free(&full);
}

/* A big list's items in order, counted, and on which thread they came. */
static struct {
    pthread_mutex_t mu;
    int n, out_of_order, on_deliverer;
    bool synced;
} BIG;

static void big_event(void *arg, ks_refl_event type, const ks_tree *obj) {
    const char *name = tstr(kt_get(kt_get(obj, "metadata"), "name"));
    char tn[32] = "";
    pthread_getname_np(pthread_self(), tn, sizeof(tn));
    pthread_mutex_lock(&BIG.mu);
    if (type != KS_REFL_ADDED || atoi(name + 1) != BIG.n || strcmp(tstr(kt_get(obj, "kind")), "Pod") != 0)
        BIG.out_of_order++;
    if (!strcmp(tn, "reflector-dlv")) BIG.on_deliverer++;
    BIG.n++;
    pthread_mutex_unlock(&BIG.mu);
}

static void big_synced(void *arg) {
    pthread_mutex_lock(&BIG.mu);
    BIG.synced = true;
    pthread_mutex_unlock(&BIG.mu);
}

/* pages of a list of npods pods named p0, p1, ... (per pages items each,
 * continue tokens "k<first item of the next page>") */
static void big_pages(int npods, int per, ks_strbuf *pages, int *npages) {
    char names[per][16];
    const char *ptrs[per];
    *npages = 0;
    for (int first = 0; first < npods; first += per) {
        int n = npods - first < per ? npods - first : per;
        for (int i = 0; i < n; i++) {
            snprintf(names[i], sizeof(names[i]), "p%d", first + i);
            ptrs[i] = names[i];
        }
        char cont[32] = "";
        if (first + per < npods) snprintf(cont, sizeof(cont), "k%d", first + per);
        ks_sb_init(&pages[*npages]);
        pb_page(&pages[(*npages)++], "77", cont, ptrs, n);
    }
}

/* A list past SPLIT_AFTER items is delivered by a second thread: every
 * item once, in the list's order, whole pages (pipelined, in the cuts the
 * fake makes) or one; then the watch from its resourceVersion. */
static void test_big_list_two_threads(void **st) {
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        fk_reset();
        memset(&BIG, 0, sizeof(BIG));
        pthread_mutex_init(&BIG.mu, NULL);
        ks_strbuf pages[8];
        int np = 0;
        big_pages(9000, pipelined ? 4000 : 9000, pages, &np);
        char q[8][32];
        for (int i = np - 1; i >= 1; i--) {
            snprintf(q[i], sizeof(q[i]), "continue=k%d", i * 4000);
            fk_add((fk_answer){.path = "/api/v1/pods", .query = q[i], .chunks = {pages[i].s, pages[i].s + 100},
                               .chunk_len = {100, pages[i].len - 100}});
        }
        fk_add((fk_answer){.path = "/api/v1/pods", .query = pipelined ? "limit=4000" : "resourceVersion=0",
                           .chunks = {pages[0].s, pages[0].s + 7, pages[0].s + pages[0].len / 3},
                           .chunk_len = {7, pages[0].len / 3 - 7, pages[0].len - pages[0].len / 3}});
        fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true, .times = -1});
        ks_kube_client_free(C);
        ks_kube_client_options o = {.config = &CFG, .retry_base_ms = 10, .max_retries = 2,
                                    .content_type = KS_KUBE_PROTOBUF};
        char *err = NULL;
        C = ks_kube_client_new(&o, &err);
        ks_reflector_options ro = {.kind = "Pod", .path = "/api/v1/pods", .backoff_initial_ms = 10,
                                   .first_page_size = pipelined ? 4000 : 0};
        ks_reflector_handler h = {.arg = NULL, .event = big_event, .synced = big_synced};
        ks_reflector *r = refl_start(&ro, &h);
        assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks", 1));
        assert_non_null(strstr(nth_request("/api/v1/pods?allowWatchBookmarks", 0).url, "resourceVersion=77"));
        refl_stop(r);
        pthread_mutex_lock(&BIG.mu);
        assert_int_equal(BIG.n, 9000);
        assert_int_equal(BIG.out_of_order, 0);
        assert_true(BIG.synced);
        /* the first SPLIT_AFTER inline, most of the rest on the deliverer */
        assert_true(BIG.on_deliverer > 5000);
        assert_true(BIG.on_deliverer <= 9000 - 2048);
        pthread_mutex_unlock(&BIG.mu);
        assert_int_equal(fk_count("GET", "/api/v1/pods?"), np + 1);
        for (int i = 0; i < np; i++) ks_sb_free(&pages[i]);
        fk_release();
    }
}

/* A CRD's reflector asks for JSON whatever the contentType. */
static void test_json_only(void **st) {
    ks_kube_client_free(C);
    ks_kube_client_options o = {.config = &CFG, .retry_base_ms = 10, .max_retries = 2,
                                .content_type = KS_KUBE_PROTOBUF};
    char *err = NULL;
    C = ks_kube_client_new(&o, &err);
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "resourceVersion=0", .body = LIST("5", "", POD("a", "1"))});
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true", .hold = true});
    ks_reflector_options ro = {.kind = "Pod", .path = "/api/v1/pods", .backoff_initial_ms = 10, .json_only = true};
    ks_reflector_handler h = {.arg = &R, .event = on_event, .synced = on_synced};
    int saved_v = ks_log_verbosity;
    ks_log_set_verbosity(2);
    ks_reflector *r = refl_start(&ro, &h);
    static const char *const want[] = {"ADDED ns/a rv=1 v1 Pod"};
    expect_events(want, 1);
    assert_true(wait_requests("GET", "/api/v1/pods?allowWatchBookmarks", 1));
    assert_string_equal(nth_request("/api/v1/pods?", 0).accept, "application/json");
    assert_string_equal(nth_request("/api/v1/pods?allowWatchBookmarks", 0).accept, "application/json");
    assert_int_equal(log_count("the API server answers in JSON"), 1);
    refl_stop(r);
    ks_log_set_verbosity(saved_v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pagination, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bookmark_and_framing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_410_relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_long_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_list_item, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_404, setup, teardown),
        cmocka_unit_test_setup_teardown(test_continue_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protobuf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protobuf_streamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_synced_after_handler, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_list_pipelined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_list_pipelined_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_list_two_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
