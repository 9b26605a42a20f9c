/* The secure serving port: health output as upstream's healthz package
 * writes it, the authentication/authorization decisions and their cache
 * (fake reviewers, a fake clock), and the HTTPS server itself on
 * 127.0.0.1 (libcurl as the client): endpoints, a certificate made in
 * memory, one from files checked against its CA, auth over the wire,
 * keep-alive, long requests beside short ones, stop with a request in
 * progress, secure port 0 and start errors. */
#include "metrics/metrics.h"
#include "server/auth.h"
#include "server/selfsigned.h"
#include "server/server.h"
#include "util/curl_lazy.h"
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- checks --------------------------------------------------------------- */

static char *ok_check(void *arg) {
    (void)arg;
    return NULL;
}

static char *fail_check(void *arg) { return strdup(arg ? (const char *)arg : "failed"); }

static void test_health_render(void **state) {
    (void)state;
    char *body;
    assert_int_equal(ks_health_render("livez", NULL, 0, false, NULL, 0, &body), 200);
    assert_string_equal(body, "ok");
    free(body);
    assert_int_equal(ks_health_render("livez", NULL, 0, true, NULL, 0, &body), 200);
    assert_string_equal(body, "[+]ping ok\nlivez check passed\n");
    free(body);

    ks_health_check checks[] = {{"leaderElection", ok_check, NULL},
                                {"shutdown", ok_check, NULL},
                                {"sched-handler-sync", fail_check, "handlers are not fully synchronized"}};
    assert_int_equal(ks_health_render("readyz", checks, 3, false, NULL, 0, &body), 500);
    assert_string_equal(body, "[+]leaderElection ok\n[+]shutdown ok\n[-]sched-handler-sync failed: reason withheld\n"
                              "readyz check failed\n");
    free(body);
    const char *ex[] = {"sched-handler-sync", "nope", "another"};
    assert_int_equal(ks_health_render("readyz", checks, 3, false, ex, 1, &body), 200);
    assert_string_equal(body, "ok");
    free(body);
    assert_int_equal(ks_health_render("readyz", checks, 3, true, ex, 3, &body), 200);
    assert_string_equal(body, "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync excluded: ok\n"
                              "warn: some health checks cannot be excluded: no matches for \"another\",\"nope\"\n"
                              "readyz check passed\n");
    free(body);
}

/* ---- auth --------------------------------------------------------------------- */

static int64_t fake_now;
static int64_t now_fn(void) { return fake_now; }

static int token_reviews, access_reviews;

/* "good" is alice (group dev), "admin" is root (system:masters), "broken"
 * fails the review, anything else is invalid. */
static int review_token(void *arg, const char *token, ks_user_info *u, char **err) {
    (void)arg;
    token_reviews++;
    if (strcmp(token, "broken") == 0) {
        *err = strdup("connection refused");
        return -1;
    }
    if (strcmp(token, "good") == 0) {
        u->name = strdup("alice");
        ks_user_info_add_group(u, "dev");
        return 1;
    }
    if (strcmp(token, "admin") == 0) {
        u->name = strdup("root");
        ks_user_info_add_group(u, "system:masters");
        return 1;
    }
    return 0;
}

/* alice may get /metrics; the error path errs; nobody else anything. */
static int review_access(void *arg, const ks_user_info *u, const char *verb, const char *path, char **reason,
                         char **err) {
    (void)arg;
    access_reviews++;
    if (strcmp(path, "/error") == 0) {
        *err = strdup("the API server is down");
        return -1;
    }
    bool authenticated = false;
    for (size_t i = 0; i < u->ngroups; i++)
        if (strcmp(u->groups[i], "system:authenticated") == 0) authenticated = true;
    if (strcmp(u->name, "alice") == 0 && authenticated && strcmp(verb, "get") == 0 && strcmp(path, "/metrics") == 0)
        return 1;
    *reason = strdup("RBAC: not allowed");
    return 0;
}

static ks_token_reviewer token_reviewer = {review_token, NULL};
static ks_access_reviewer access_reviewer = {review_access, NULL};

static ks_auth *new_auth(void) {
    ks_auth_options o = {.authn = &token_reviewer, .authz = &access_reviewer, .now_ns = now_fn};
    token_reviews = access_reviews = 0;
    fake_now = 1000;
    return ks_auth_new(&o);
}

static int check(ks_auth *a, const char *header, const char *method, const char *path, char **body) {
    ks_auth_result r;
    ks_auth_check(a, header, method, path, path, &r);
    int st = r.status;
    if (body) *body = r.body ? strdup(r.body) : NULL;
    ks_auth_result_free(&r);
    return st;
}

static void test_auth_decisions(void **state) {
    (void)state;
    ks_auth *a = new_auth();
    char *body;
    /* Anonymous: the always-allowed paths, nothing else. */
    assert_int_equal(check(a, NULL, "GET", "/healthz", NULL), 0);
    assert_int_equal(check(a, NULL, "GET", "/readyz", NULL), 0);
    assert_int_equal(check(a, NULL, "GET", "/livez", NULL), 0);
    assert_int_equal(check(a, NULL, "GET", "/readyz/shutdown", &body), 403); /* exact paths */
    free(body);
    assert_int_equal(check(a, NULL, "GET", "/metrics", &body), 403);
    assert_string_equal(body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                              "\"message\":\"forbidden: User \\\"system:anonymous\\\" cannot get path "
                              "\\\"/metrics\\\": RBAC: not allowed\",\"reason\":\"Forbidden\",\"details\":{},"
                              "\"code\":403}\n");
    free(body);
    /* A good token: allowed where the review allows. */
    assert_int_equal(check(a, "Bearer good", "GET", "/metrics", NULL), 0);
    assert_int_equal(check(a, "bearer  good ", "GET", "/metrics", NULL), 0);
    assert_int_equal(check(a, "Bearer good", "POST", "/metrics", NULL), 403);
    /* A bad token is 401, even for an always-allowed path. */
    assert_int_equal(check(a, "Bearer bad", "GET", "/healthz", &body), 401);
    assert_string_equal(body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                              "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n");
    free(body);
    assert_int_equal(check(a, "Bearer broken", "GET", "/healthz", NULL), 401);
    /* system:masters needs no review. */
    int before = access_reviews;
    assert_int_equal(check(a, "Bearer admin", "GET", "/configz", NULL), 0);
    assert_int_equal(access_reviews, before);
    /* A failed access review is a 500 naming the request. */
    assert_int_equal(check(a, "Bearer good", "GET", "/error", &body), 500);
    assert_string_equal(body, "Internal Server Error: \"/error\": the API server is down\n");
    free(body);
    ks_auth_free(a);
}

static void test_auth_cache(void **state) {
    (void)state;
    ks_auth *a = new_auth();
    assert_int_equal(check(a, "Bearer good", "GET", "/metrics", NULL), 0);
    assert_int_equal(token_reviews, 1);
    assert_int_equal(access_reviews, 1);
    fake_now += 9000000000LL; /* 9 s: both cached */
    assert_int_equal(check(a, "Bearer good", "GET", "/metrics", NULL), 0);
    assert_int_equal(check(a, "Bearer bad", "GET", "/metrics", NULL), 401);
    assert_int_equal(check(a, "Bearer bad", "GET", "/metrics", NULL), 401); /* rejections are cached too */
    assert_int_equal(token_reviews, 2);
    assert_int_equal(access_reviews, 1);
    assert_int_equal(check(a, NULL, "GET", "/configz", NULL), 403);
    assert_int_equal(check(a, NULL, "GET", "/configz", NULL), 403); /* denials too */
    assert_int_equal(access_reviews, 2);
    fake_now += 2000000000LL; /* 11 s: the first ones expired */
    assert_int_equal(check(a, "Bearer good", "GET", "/metrics", NULL), 0);
    assert_int_equal(token_reviews, 3);
    assert_int_equal(access_reviews, 3);
    /* Failed reviews are not cached. */
    assert_int_equal(check(a, "Bearer broken", "GET", "/healthz", NULL), 401);
    assert_int_equal(check(a, "Bearer broken", "GET", "/healthz", NULL), 401);
    assert_int_equal(token_reviews, 5);
    uint64_t t, ac;
    ks_auth_counts(a, &t, &ac);
    assert_int_equal(t, 5);
    ks_auth_free(a);
}

static void test_auth_without_reviewers(void **state) {
    (void)state;
    /* No authentication-kubeconfig and no authorization-kubeconfig: every
     * request is anonymous (a token is not even looked at) and only the
     * always-allowed paths are served. */
    ks_auth_options o = {0};
    ks_auth *a = ks_auth_new(&o);
    assert_int_equal(check(a, "Bearer whatever", "GET", "/healthz", NULL), 0);
    assert_int_equal(check(a, "Bearer whatever", "GET", "/metrics", NULL), 403);
    ks_auth_free(a);
    /* Custom always-allowed paths with a prefix. */
    const char *paths[] = {"/metrics", "/debug/*"};
    ks_auth_options o2 = {.always_allow_paths = paths, .nalways_allow_paths = 2};
    a = ks_auth_new(&o2);
    assert_int_equal(check(a, NULL, "GET", "/metrics", NULL), 0);
    assert_int_equal(check(a, NULL, "GET", "/debug/plugins", NULL), 0);
    assert_int_equal(check(a, NULL, "GET", "/healthz", NULL), 403);
    ks_auth_free(a);
}

/* ---- the server over HTTPS ------------------------------------------------------ */

typedef struct resp {
    long code;
    char *body;
    size_t len;
    char ctype[128];
    char err[256];
    long connects; /* connections this transfer opened (0: one kept alive) */
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *arg) {
    resp *r = arg;
    r->body = realloc(r->body, r->len + sz * n + 1);
    memcpy(r->body + r->len, p, sz * n);
    r->len += sz * n;
    r->body[r->len] = 0;
    return sz * n;
}

/* GET (or HEAD) https://host:port/path on handle h, which keeps its
 * connection between calls; cainfo NULL: no verification. */
static void request_on(CURL *h, bool head, const char *host, int port, const char *path, const char *auth,
                       const char *cainfo, resp *r) {
    memset(r, 0, sizeof(*r));
    const ks_curl_api *c = ks_curl(NULL);
    assert_non_null(c);
    c->easy_setopt(h, CURLOPT_NOBODY, head ? 1L : 0L);
    if (getenv("TEST_VERBOSE")) c->easy_setopt(h, CURLOPT_VERBOSE, 1L);
    char url[512];
    snprintf(url, sizeof(url), "https://%s:%d%s", host, port, path);
    c->easy_setopt(h, CURLOPT_URL, url);
    c->easy_setopt(h, CURLOPT_NOPROXY, "*");
    c->easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    c->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    c->easy_setopt(h, CURLOPT_WRITEDATA, r);
    struct curl_slist *hdrs = NULL, *resolve = NULL;
    char line[256];
    if (auth) {
        snprintf(line, sizeof(line), "Authorization: %s", auth);
        hdrs = c->slist_append(hdrs, line);
        c->easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    }
    if (cainfo) {
        c->easy_setopt(h, CURLOPT_CAINFO, cainfo);
        snprintf(line, sizeof(line), "localhost:%d:127.0.0.1", port);
        resolve = c->slist_append(resolve, line);
        c->easy_setopt(h, CURLOPT_RESOLVE, resolve);
    } else {
        c->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        c->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode rc = c->easy_perform(h);
    if (rc != CURLE_OK) snprintf(r->err, sizeof(r->err), "%s", c->easy_strerror(rc));
    c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
    char *ct = NULL;
    c->easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
    if (ct) snprintf(r->ctype, sizeof(r->ctype), "%s", ct);
    c->easy_getinfo(h, CURLINFO_NUM_CONNECTS, &r->connects);
    if (!r->body) r->body = calloc(1, 1);
    c->easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    c->easy_setopt(h, CURLOPT_RESOLVE, NULL);
    c->slist_free_all(hdrs);
    c->slist_free_all(resolve);
}

static void get(const char *host, int port, const char *path, const char *auth, const char *cainfo, resp *r) {
    const char *why = NULL;
    const ks_curl_api *c = ks_curl(&why);
    assert_non_null(c);
    CURL *h = c->easy_init();
    request_on(h, false, host, port, path, auth, cainfo, r);
    c->easy_cleanup(h);
}

static int route_echo(void *arg, const char *method, const char *path, const char *query, ks_strbuf *body,
                      const char **content_type) {
    (void)arg;
    ks_sb_printf(body, "%s %s %s", method, path, query);
    *content_type = "text/x-echo";
    return 202;
}

static bool synced;
static char *sync_check(void *arg) {
    (void)arg;
    return synced ? NULL : strdup("handlers are not fully synchronized");
}

static void test_server_endpoints(void **state) {
    (void)state;
    ks_metrics *m = ks_metrics_new();
    ks_counter_inc(ks_metric_get(ks_metrics_counter(m, "test_requests_total", "Test.", KS_ALPHA, NULL)));
    ks_health_check ready[] = {{"shutdown", ok_check, NULL}, {"sched-handler-sync", sync_check, NULL}};
    ks_server_route routes[] = {{"/debug/echo/", route_echo, NULL}};
    ks_server_options o = {.bind_address = "127.0.0.1", .port = -1, .readyz = ready, .nreadyz = 2, .metrics = m,
                           .routes = routes, .nroutes = 1};
    char *err = NULL;
    ks_server *s = ks_server_start(&o, &err);
    if (!s) fail_msg("start: %s", err);
    int port = ks_server_port(s);
    assert_true(port > 0);
    resp r;

    get("127.0.0.1", port, "/healthz", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "ok");
    assert_string_equal(r.ctype, "text/plain; charset=utf-8");
    free(r.body);
    get("127.0.0.1", port, "/livez?verbose", NULL, NULL, &r);
    assert_string_equal(r.body, "[+]ping ok\nlivez check passed\n");
    free(r.body);
    synced = false;
    get("127.0.0.1", port, "/readyz", NULL, NULL, &r);
    assert_int_equal(r.code, 500);
    assert_string_equal(r.body, "[+]shutdown ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n");
    free(r.body);
    get("127.0.0.1", port, "/readyz/sched-handler-sync", NULL, NULL, &r);
    assert_int_equal(r.code, 500);
    assert_string_equal(r.body, "internal server error: handlers are not fully synchronized\n");
    free(r.body);
    get("127.0.0.1", port, "/readyz?verbose&exclude=sched-handler-sync", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "[+]shutdown ok\n[+]sched-handler-sync excluded: ok\nreadyz check passed\n");
    free(r.body);
    synced = true;
    get("127.0.0.1", port, "/readyz", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "ok");
    free(r.body);
    get("127.0.0.1", port, "/readyz/shutdown", NULL, NULL, &r);
    assert_string_equal(r.body, "ok");
    free(r.body);

    get("127.0.0.1", port, "/metrics", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.ctype, KS_METRICS_CONTENT_TYPE);
    assert_string_equal(r.body, "# HELP test_requests_total [ALPHA] Test.\n# TYPE test_requests_total counter\n"
                                "test_requests_total 1\n");
    free(r.body);

    get("127.0.0.1", port, "/configz", NULL, NULL, &r);
    assert_string_equal(r.body, "{\"componentconfig\":{}}");
    free(r.body);
    ks_server_set_configz(s, "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"}");
    get("127.0.0.1", port, "/configz", NULL, NULL, &r);
    assert_string_equal(r.ctype, "application/json");
    assert_string_equal(r.body, "{\"componentconfig\":{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"}}");
    free(r.body);

    get("127.0.0.1", port, "/debug/plugins", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_non_null(strstr(r.body, "PLUGIN"));
    free(r.body);
    get("127.0.0.1", port, "/debug/plugins?format=json", NULL, NULL, &r);
    assert_string_equal(r.ctype, "application/json");
    assert_true(r.body[0] == '[');
    free(r.body);

    get("127.0.0.1", port, "/debug/echo/x?a=1", NULL, NULL, &r);
    assert_int_equal(r.code, 202);
    assert_string_equal(r.body, "GET /debug/echo/x a=1");
    assert_string_equal(r.ctype, "text/x-echo");
    free(r.body);

    get("127.0.0.1", port, "/nothing", NULL, NULL, &r);
    assert_int_equal(r.code, 404);
    assert_string_equal(r.body, "404 page not found\n");
    free(r.body);
    ks_server_stop(s);
    ks_metrics_free(m);
}

static char *write_temp(const char *text) {
    char *path = strdup("/tmp/ksched-test-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_server_cert_files(void **state) {
    (void)state;
    /* The certificate the server would make, written to files: the client
     * checks it against its CA and the name "localhost". */
    char *cert, *key, *err = NULL;
    const char *ips[] = {"127.0.0.1"};
    const char *dns[] = {"localhost"};
    assert_int_equal(ks_selfsigned_make("localhost", ips, 1, dns, 1, &cert, &key, &err), 0);
    assert_non_null(strstr(cert, "-----BEGIN CERTIFICATE-----"));
    /* the serving certificate, then the CA */
    assert_non_null(strstr(strstr(cert, "-----END CERTIFICATE-----"), "-----BEGIN CERTIFICATE-----"));
    assert_non_null(strstr(key, "PRIVATE KEY-----"));
    /* an ECDSA key (made in a millisecond; RSA-2048 took up to a second of a cold start) */
    assert_non_null(strstr(key, "-----BEGIN EC PRIVATE KEY-----"));
    char *cert_file = write_temp(cert), *key_file = write_temp(key);
    ks_server_options o = {.bind_address = "127.0.0.1", .port = -1, .cert_file = cert_file, .key_file = key_file};
    ks_server *s = ks_server_start(&o, &err);
    if (!s) fail_msg("start: %s", err);
    resp r;
    get("localhost", ks_server_port(s), "/healthz", NULL, cert_file, &r);
    if (r.code != 200) fail_msg("verified GET: %s", r.err);
    assert_string_equal(r.body, "ok");
    free(r.body);
    ks_server_stop(s);

    /* Errors: one file only, a missing file, a file that is no certificate. */
    o.key_file = NULL;
    assert_null(ks_server_start(&o, &err));
    assert_non_null(err);
    assert_non_null(strstr(err, "must be given together"));
    free(err);
    o.key_file = "/nonexistent/key.pem";
    assert_null(ks_server_start(&o, &err));
    assert_non_null(strstr(err, "/nonexistent/key.pem"));
    free(err);
    o.key_file = cert_file; /* a certificate where the key should be */
    assert_null(ks_server_start(&o, &err));
    assert_non_null(err);
    free(err);
    unlink(cert_file);
    unlink(key_file);
    free(cert_file);
    free(key_file);
    free(cert);
    free(key);
}

static void test_server_auth(void **state) {
    (void)state;
    ks_auth *a = new_auth();
    ks_server_options o = {.bind_address = "127.0.0.1", .port = -1, .auth = a};
    char *err = NULL;
    ks_server *s = ks_server_start(&o, &err);
    if (!s) fail_msg("start: %s", err);
    int port = ks_server_port(s);
    resp r;
    get("127.0.0.1", port, "/healthz", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    free(r.body);
    get("127.0.0.1", port, "/metrics", NULL, NULL, &r);
    assert_int_equal(r.code, 403);
    assert_string_equal(r.ctype, "application/json");
    assert_non_null(strstr(r.body, "cannot get path \\\"/metrics\\\""));
    free(r.body);
    get("127.0.0.1", port, "/metrics", "Bearer good", NULL, &r);
    assert_int_equal(r.code, 200);
    assert_non_null(strstr(r.body, "# TYPE "));
    free(r.body);
    get("127.0.0.1", port, "/healthz", "Bearer nope", NULL, &r);
    assert_int_equal(r.code, 401);
    free(r.body);
    ks_server_stop(s);
    ks_auth_free(a);
}

/* A route that answers once released (or after 10 s): a long request,
 * as a CPU profile is. */
static atomic_int slow_started, slow_release;
static int route_slow(void *arg, const char *method, const char *path, const char *query, ks_strbuf *body,
                      const char **content_type) {
    (void)arg;
    (void)method;
    (void)path;
    (void)query;
    atomic_fetch_add(&slow_started, 1);
    int64_t until = ks_monotonic_ns() + 10 * 1000000000LL;
    while (!atomic_load(&slow_release) && ks_monotonic_ns() < until) usleep(10000);
    ks_sb_puts(body, "slow done");
    *content_type = "text/plain; charset=utf-8";
    return 200;
}

typedef struct slow_call {
    int port;
    resp r;
} slow_call;

static void *call_slow(void *arg) {
    slow_call *sc = arg;
    get("127.0.0.1", sc->port, "/debug/slow", NULL, NULL, &sc->r);
    return NULL;
}

static void wait_started(int n) {
    for (int i = 0; i < 1000 && atomic_load(&slow_started) < n; i++) usleep(10000);
    assert_int_equal(atomic_load(&slow_started), n);
}

static void *stop_server(void *s) {
    ks_server_stop(s);
    return NULL;
}

static void test_server_keepalive_and_long_requests(void **state) {
    (void)state;
    ks_server_route routes[] = {{"/debug/slow", route_slow, NULL}, {"/debug/echo/", route_echo, NULL}};
    /* Connections idle for 1 s close; a request in progress for longer
     * must still be answered. */
    ks_server_options o = {.bind_address = "127.0.0.1", .port = -1, .routes = routes, .nroutes = 2,
                           .idle_timeout_s = 1};
    char *err = NULL;
    ks_server *s = ks_server_start(&o, &err);
    if (!s) fail_msg("start: %s", err);
    int port = ks_server_port(s);
    const ks_curl_api *c = ks_curl(NULL);
    CURL *h = c->easy_init();
    resp r;

    /* keep-alive: the second request rides the first one's connection */
    request_on(h, false, "127.0.0.1", port, "/healthz", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.connects, 1);
    free(r.body);
    request_on(h, false, "127.0.0.1", port, "/livez", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "ok");
    assert_int_equal(r.connects, 0);
    free(r.body);
    /* HEAD: the headers, no body */
    request_on(h, true, "127.0.0.1", port, "/healthz", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.len, 0);
    free(r.body);
    /* the path and the query decoded as Go's url package decodes them */
    request_on(h, false, "127.0.0.1", port, "/debug/echo/a%20b?x=%41+B&bad=%zz&y", NULL, NULL, &r);
    assert_int_equal(r.code, 202);
    assert_int_equal(r.connects, 0); /* the HEAD reply left the connection clean */
    assert_string_equal(r.body, "GET /debug/echo/a b x=A B&y");
    free(r.body);
    request_on(h, false, "127.0.0.1", port, "/debug/echo/%zz", NULL, NULL, &r);
    assert_int_equal(r.code, 400);
    free(r.body);
    /* idle past the timeout: the server closed it, curl opens another */
    usleep(2500000);
    request_on(h, false, "127.0.0.1", port, "/healthz", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.connects, 1);
    free(r.body);

    /* Two long requests in progress (past the idle timeout); others are
     * served meanwhile. */
    atomic_store(&slow_started, 0);
    atomic_store(&slow_release, 0);
    slow_call sc[2] = {{.port = port}, {.port = port}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, call_slow, &sc[i]), 0);
    wait_started(2);
    for (int i = 0; i < 5; i++) {
        request_on(h, false, "127.0.0.1", port, "/readyz", NULL, NULL, &r);
        assert_int_equal(r.code, 200);
        free(r.body);
    }
    usleep(1500000);
    atomic_store(&slow_release, 1);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        if (sc[i].r.code != 200) fail_msg("long request: %ld %s", sc[i].r.code, sc[i].r.err);
        assert_string_equal(sc[i].r.body, "slow done");
        free(sc[i].r.body);
    }

    /* Stop with a request in progress: it is answered, then the server
     * stops. */
    atomic_store(&slow_started, 0);
    atomic_store(&slow_release, 0);
    assert_int_equal(pthread_create(&t[0], NULL, call_slow, &sc[0]), 0);
    wait_started(1);
    pthread_t stopper;
    assert_int_equal(pthread_create(&stopper, NULL, stop_server, s), 0);
    usleep(200000);
    atomic_store(&slow_release, 1);
    pthread_join(t[0], NULL);
    pthread_join(stopper, NULL);
    assert_int_equal(sc[0].r.code, 200);
    assert_string_equal(sc[0].r.body, "slow done");
    free(sc[0].r.body);
    c->easy_cleanup(h);
}

static void test_server_off_and_errors(void **state) {
    (void)state;
    char *err = (char *)"untouched";
    ks_server_options o = {.port = 0};
    assert_null(ks_server_start(&o, &err));
    assert_null(err);
    /* A port in use. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 1), 0);
    socklen_t len = sizeof(a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    ks_server_options busy = {.bind_address = "127.0.0.1", .port = ntohs(a.sin_port)};
    assert_null(ks_server_start(&busy, &err));
    assert_non_null(err);
    assert_non_null(strstr(err, "failed to listen on 127.0.0.1:"));
    free(err);
    close(fd);
    ks_server_options bad = {.bind_address = "not-an-ip", .port = -1};
    assert_null(ks_server_start(&bad, &err));
    assert_non_null(strstr(err, "not an IP address"));
    free(err);
    ks_server_options range = {.port = 70000};
    assert_null(ks_server_start(&range, &err));
    assert_non_null(err);
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_render),
        cmocka_unit_test(test_auth_decisions),
        cmocka_unit_test(test_auth_cache),
        cmocka_unit_test(test_auth_without_reviewers),
        cmocka_unit_test(test_server_endpoints),
        cmocka_unit_test(test_server_cert_files),
        cmocka_unit_test(test_server_auth),
        cmocka_unit_test(test_server_keepalive_and_long_requests),
        cmocka_unit_test(test_server_off_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
