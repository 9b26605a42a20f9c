/* The kube client's own HTTP/2 transport against a real TLS HTTP/2 server
 * (test/unit/h2_fake.h: nghttp2's server API and OpenSSL): the request's
 * headers and body, concurrency within the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS on one connection, Retry-After, a 401
 * that re-runs the exec plugin (also for async requests: off the I/O
 * thread, once for many), a paced watch whose slow consumer holds
 * the server back (bounded memory), GOAWAY and a dropped connection mid
 * stream, the PING health check, timeouts, certificate errors, host
 * names looked up off the I/O thread, and sibling clients sharing one
 * connection (ks_kube_client_new_sibling). */
#include "kube/client.h"
#include "kube/client_impl.h"

#include "h2_fake.h"
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <netdb.h>
#include <sys/stat.h>

#include <cmocka.h>

static char tmpdir[256];
static char cafile[512];
static char *ca_pem, *other_pem;

static char *slurp(const char *name) { return tu_slurp(tmpdir, name); }

/* A CA, a server certificate for apiserver.test and 127.0.0.1, a second
 * CA that signed nothing. */
static int setup_group(void **st) {
    if (system("openssl version >/dev/null 2>&1") != 0) {
        printf("skipped: the openssl command is not installed\n");
        return -1;
    }
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ks_h2_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && ( "
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca && "
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt -days 2 -subj /CN=other-ca && "
             "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=apiserver && "
             "printf 'subjectAltName=DNS:apiserver.test,IP:127.0.0.1\\n' > ext.cnf && "
             "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
             "-extfile ext.cnf && "
             "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=ksched-client && "
             "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2 && "
             "openssl req -newkey rsa:2048 -nodes -keyout exec.key -out exec.csr -subj /CN=exec-client && "
             "openssl x509 -req -in exec.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out exec.crt -days 2 "
             ") >/dev/null 2>&1",
             tmpdir);
    if (system(cmd) != 0) return -1;
    snprintf(cafile, sizeof(cafile), "%s/ca.crt", tmpdir);
    ca_pem = slurp("ca.crt");
    other_pem = slurp("other.crt");
    return ca_pem && other_pem ? 0 : -1;
}

static int teardown_group(void **st) {
    free(ca_pem);
    free(other_pem);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static int setup(void **st) {
    char cert[512], key[512];
    snprintf(cert, sizeof(cert), "%s/server.crt", tmpdir);
    snprintf(key, sizeof(key), "%s/server.key", tmpdir);
    return h2f_start(cert, key) ? 0 : -1;
}

static int teardown(void **st) {
    h2f_stop();
    return 0;
}

typedef struct copts {
    int64_t timeout_ms, read_idle_ms, ping_timeout_ms;
    size_t max_response;
} copts;

static ks_kube_client *client(ks_kube_config *cfg, copts o) {
    char server[64];
    snprintf(server, sizeof(server), "https://127.0.0.1:%u", H2F.port);
    if (!cfg->server) cfg->server = strdup(server);
    if (!cfg->ca_data && !cfg->ca_file && !cfg->insecure) cfg->ca_file = strdup(cafile);
    ks_kube_client_options opt = {.config = cfg, .max_retries = 3, .retry_base_ms = 10,
                                  .timeout_ms = o.timeout_ms ? o.timeout_ms : 20000,
                                  .read_idle_ms = o.read_idle_ms ? o.read_idle_ms : -1,
                                  .ping_timeout_ms = o.ping_timeout_ms, .max_response_bytes = o.max_response};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&opt, &err);
    if (!c) fail_msg("client: %s", err);
    return c;
}

static ks_kube_response req(ks_kube_client *c, const char *method, const char *path, const char *body) {
    ks_kube_request r = {.method = method, .path = path, .body = body, .body_len = body ? strlen(body) : 0,
                         .idempotent = true};
    ks_kube_response out;
    ks_kube_do(c, &r, &out);
    return out;
}

static h2f_req logged(int i) {
    pthread_mutex_lock(&H2F.mu);
    h2f_req r = H2F.log[i < 0 ? H2F.nlog + i : i];
    pthread_mutex_unlock(&H2F.mu);
    return r;
}

/* The server's script, written under its lock. */
#define H2F_SET(stmt)                   \
    do {                                \
        pthread_mutex_lock(&H2F.mu);    \
        stmt;                           \
        pthread_mutex_unlock(&H2F.mu);  \
    } while (0)

static int locked_int(const int *p) {
    pthread_mutex_lock(&H2F.mu);
    int v = *p;
    pthread_mutex_unlock(&H2F.mu);
    return v;
}

static void wait_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* ---- requests ---- */

static void test_request_headers_and_body(void **st) {
    ks_kube_config cfg = {.token = strdup("tok")};
    ks_kube_client *c = client(&cfg, (copts){0});
    ks_kube_response r = req(c, "GET", "/ok?x=1", NULL);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "{\"ok\":0}");
    h2f_req q = logged(0);
    assert_string_equal(q.method, "GET");
    assert_string_equal(q.path, "/ok?x=1");
    assert_string_equal(q.auth, "Bearer tok");
    assert_string_equal(q.accept, "application/json");
    assert_true(strncmp(q.ua, "ksched/", 7) == 0);
    char auth[64];
    snprintf(auth, sizeof(auth), "127.0.0.1:%u", H2F.port);
    assert_string_equal(q.authority, auth);
    ks_kube_response_free(&r);
    r = req(c, "PATCH", "/echo", "{\"a\":1}");
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "{\"a\":1}");
    q = logged(1);
    assert_string_equal(q.method, "PATCH");
    assert_string_equal(q.ctype, "application/json");
    ks_kube_response_free(&r);
    /* an unknown path: the answer's code, no retry */
    r = req(c, "GET", "/nothere", NULL);
    assert_int_equal(r.code, 404);
    assert_int_equal(r.retries, 0);
    ks_kube_response_free(&r);
    assert_int_equal(locked_int(&H2F.accepted), 1); /* one connection for all */
    ks_kube_client_stats s;
    ks_kube_client_stats_get(c, &s);
    assert_int_equal(s.requests, 3);
    assert_int_equal(s.errors_4xx, 1);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

typedef struct counter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, ok;
} counter;

static void on_done(void *arg, const ks_kube_response *r) {
    counter *k = arg;
    pthread_mutex_lock(&k->mu);
    k->done++;
    if (r->code == 200) k->ok++;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

static void test_concurrency_within_max_streams(void **st) {
    H2F_SET(H2F.max_streams = 3);
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    /* the server's SETTINGS first: until then nghttp2 assumes 100 */
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    ks_kube_response_free(&r);
    enum { N = 15 };
    ks_kube_request q = {.method = "GET", .path = "/slow"};
    for (int i = 0; i < N; i++) ks_kube_do_async(c, &q, on_done, &k);
    pthread_mutex_lock(&k.mu);
    while (k.done < N) pthread_cond_wait(&k.cv, &k.mu);
    pthread_mutex_unlock(&k.mu);
    assert_int_equal(k.ok, N);
    int maxc = locked_int(&H2F.max_concurrent);
    assert_true(maxc >= 2 && maxc <= 3);
    assert_int_equal(locked_int(&H2F.accepted), 1);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_retry_after(void **st) {
    H2F_SET(H2F.fail = 2);
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    ks_kube_request q = {.method = "POST", .path = "/retry", .body = "{}", .body_len = 2}; /* not idempotent */
    ks_kube_response r;
    ks_kube_do(c, &q, &r);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.retries, 2);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_401_runs_the_exec_plugin_again(void **st) {
    char script[512], counterf[512];
    snprintf(script, sizeof(script), "%s/plugin.sh", tmpdir);
    snprintf(counterf, sizeof(counterf), "%s/runs", tmpdir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\nn=$(cat '%s' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '%s'\n"
            "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
            "\"status\":{\"token\":\"t'$n'\"}}'\n",
            counterf, counterf);
    fclose(f);
    chmod(script, 0755);
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    cfg.exec = calloc(1, sizeof(*cfg.exec));
    cfg.exec->api_version = strdup("client.authentication.k8s.io/v1");
    cfg.exec->command = strdup(script);
    ks_kube_client *c = client(&cfg, (copts){0});
    ks_kube_response r = req(c, "GET", "/auth", NULL);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.retries, 1);
    ks_kube_response_free(&r);
    assert_string_equal(logged(0).auth, "Bearer t1");
    assert_string_equal(logged(1).auth, "Bearer t2");
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_limits_and_timeouts(void **st) {
    H2F_SET(H2F.big_bytes = 3 << 20);
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){.max_response = 1 << 20, .timeout_ms = 300});
    ks_kube_response r = req(c, "GET", "/big", NULL);
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.error, "larger than the limit"));
    ks_kube_response_free(&r);
    ks_kube_request q = {.method = "POST", .path = "/hang", .body = "{}", .body_len = 2};
    ks_kube_do(c, &q, &r);
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.error, "timed out"));
    ks_kube_response_free(&r);
    /* the connection still serves */
    r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_int_equal(locked_int(&H2F.accepted), 1);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* ---- streams ---- */

typedef struct sink {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t got;
    bool ended;
    long code;
    char error[256];
} sink;

static void on_data(void *arg, const char *buf, size_t len) {
    sink *s = arg;
    pthread_mutex_lock(&s->mu);
    s->got += len;
    pthread_mutex_unlock(&s->mu);
}

static void on_end(void *arg, long code, const char *error) {
    sink *s = arg;
    pthread_mutex_lock(&s->mu);
    s->ended = true;
    s->code = code;
    snprintf(s->error, sizeof(s->error), "%s", error ? error : "");
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static size_t sink_got(sink *s) {
    pthread_mutex_lock(&s->mu);
    size_t n = s->got;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static bool sink_wait_end(sink *s, int ms) {
    pthread_mutex_lock(&s->mu);
    for (int i = 0; !s->ended && i < ms / 10; i++) {
        pthread_mutex_unlock(&s->mu);
        wait_ms(10);
        pthread_mutex_lock(&s->mu);
    }
    bool e = s->ended;
    pthread_mutex_unlock(&s->mu);
    return e;
}

#define SINK {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER}

/* A consumer that takes nothing holds the server back at one window; as
 * it takes the bytes, the rest comes. */
static void test_paced_watch_bounds_memory(void **st) {
    const size_t total = 16 << 20;
    H2F_SET(H2F.watch_bytes = total);
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    sink s = SINK;
    ks_kube_stream *w = ks_kube_stream_open_paced(c, "/watch?watch=true", false, on_data, on_end, &s);
    for (int i = 0; i < 500 && sink_got(&s) == 0; i++) wait_ms(10);
    size_t prev = (size_t)-1;
    for (int i = 0; i < 100 && sink_got(&s) != prev; i++) { /* until it stops growing */
        prev = sink_got(&s);
        wait_ms(100);
    }
    size_t held = sink_got(&s);
    pthread_mutex_lock(&H2F.mu);
    size_t sent = H2F.watch_sent;
    pthread_mutex_unlock(&H2F.mu);
    printf("# paced: %zu bytes delivered, %zu sent by the server, before the consumer took any\n", held, sent);
    assert_true(held > 0);
    assert_true(held <= KS_KUBE_STREAM_WINDOW);
    assert_true(sent <= KS_KUBE_STREAM_WINDOW + 65536);
    /* the consumer takes what it has, and then all that comes */
    size_t taken = 0;
    for (int i = 0; i < 3000 && !sink_wait_end(&s, 0); i++) {
        size_t g = sink_got(&s);
        if (g > taken) {
            ks_kube_stream_consumed(w, g - taken);
            taken = g;
        }
        wait_ms(2);
    }
    assert_true(sink_wait_end(&s, 5000));
    assert_int_equal(s.code, 200);
    assert_int_equal(sink_got(&s), total);
    ks_kube_stream_close(w);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* An unpaced stream takes all at once. */
static void test_unpaced_watch(void **st) {
    H2F_SET(H2F.watch_bytes = 4 << 20);
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    sink s = SINK;
    ks_kube_stream *w = ks_kube_stream_open(c, "/watch", false, on_data, on_end, &s);
    assert_true(sink_wait_end(&s, 10000));
    assert_int_equal(s.code, 200);
    assert_int_equal(sink_got(&s), 4 << 20);
    ks_kube_stream_close(w);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void held_watch(ks_kube_client *c, sink *s, ks_kube_stream **w) {
    H2F_SET(H2F.watch_bytes = 8 << 20);
    *w = ks_kube_stream_open_paced(c, "/watch", false, on_data, on_end, s);
    for (int i = 0; i < 500 && sink_got(s) == 0; i++) wait_ms(10);
    assert_true(sink_got(s) > 0);
}

static void test_goaway_and_drop_end_streams(void **st) {
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    /* GOAWAY after the watch's stream: the watch ends as the connection closes */
    sink s = SINK;
    ks_kube_stream *w;
    held_watch(c, &s, &w);
    pthread_mutex_lock(&H2F.mu);
    H2F.goaway = true;
    pthread_mutex_unlock(&H2F.mu);
    assert_true(sink_wait_end(&s, 5000));
    assert_int_equal(s.code, 0);
    assert_true(s.error[0] != '\0');
    ks_kube_stream_close(w);
    /* the next request connects again */
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_int_equal(locked_int(&H2F.accepted), 2);
    /* a dropped connection mid stream */
    sink s2 = SINK;
    held_watch(c, &s2, &w);
    pthread_mutex_lock(&H2F.mu);
    H2F.drop = true;
    pthread_mutex_unlock(&H2F.mu);
    assert_true(sink_wait_end(&s2, 5000));
    assert_int_equal(s2.code, 0);
    ks_kube_stream_close(w);
    r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_int_equal(locked_int(&H2F.accepted), 3);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* A GOAWAY that refuses a request the server had not processed: sent
 * again on a new connection, even a POST. */
static void test_goaway_refused_request_is_sent_again(void **st) {
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    ks_kube_response_free(&r);
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "POST", .path = "/slow", .body = "{}", .body_len = 2};
    ks_kube_do_async(c, &q, on_done, &k);
    for (int i = 0; i < 500 && locked_int(&H2F.nlog) < 2; i++) wait_ms(5);
    pthread_mutex_lock(&H2F.mu);
    H2F.goaway = true;
    H2F.goaway_all = true;
    pthread_mutex_unlock(&H2F.mu);
    pthread_mutex_lock(&k.mu);
    while (k.done < 1) pthread_cond_wait(&k.cv, &k.mu);
    pthread_mutex_unlock(&k.mu);
    assert_int_equal(k.ok, 1);
    assert_int_equal(locked_int(&H2F.accepted), 2);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_ping_health_check(void **st) {
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){.read_idle_ms = 200, .ping_timeout_ms = 300});
    sink s = SINK;
    ks_kube_stream *w;
    held_watch(c, &s, &w);
    /* quiet but answering PINGs: the watch stays */
    wait_ms(900);
    assert_true(locked_int(&H2F.pings) >= 2);
    assert_false(sink_wait_end(&s, 0));
    /* a black hole: the PING goes unanswered, the connection is closed */
    pthread_mutex_lock(&H2F.mu);
    H2F.mute = true;
    pthread_mutex_unlock(&H2F.mu);
    assert_true(sink_wait_end(&s, 5000));
    assert_int_equal(s.code, 0);
    assert_non_null(strstr(s.error, "no answer from the server"));
    ks_kube_client_stats cs;
    ks_kube_client_stats_get(c, &cs);
    assert_int_equal(cs.dead_connections, 1);
    ks_kube_stream_close(w);
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* A server that closes every connection at once (a proxy held closed):
 * errors, retried, and the process lives (a write to the closed socket
 * must not raise a fatal SIGPIPE). */
static void test_closed_at_once(void **st) {
    H2F_SET(H2F.refuse = true);
    ks_kube_config cfg = {0};
    ks_kube_client *c = client(&cfg, (copts){0});
    for (int i = 0; i < 5; i++) {
        ks_kube_response r = req(c, "POST", "/echo", "{\"x\":1}");
        assert_int_equal(r.code, 0);
        assert_non_null(r.error);
        ks_kube_response_free(&r);
    }
    assert_true(locked_int(&H2F.accepted) >= 5 * 4); /* idempotent: 3 retries each */
    H2F_SET(H2F.refuse = false);
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* ---- siblings: one connection and I/O thread, budgets of their own ---- */

static ks_kube_client *sibling(ks_kube_client *base, double qps, int burst, const char *ua_suffix) {
    ks_kube_client_options opt = {.qps = qps, .burst = burst, .user_agent_suffix = ua_suffix, .max_retries = 3,
                                  .retry_base_ms = 10, .timeout_ms = 20000};
    return ks_kube_client_new_sibling(base, &opt);
}

/* Both clients' requests on one connection (on h2 and on libcurl), each
 * with its own User-Agent and counters. */
static void shares_one_connection(const char *transport) {
    setenv("KSCHED_KUBE_TRANSPORT", transport, 1);
    ks_kube_config cfg = {.token = strdup("tok")};
    ks_kube_client *base = client(&cfg, (copts){0});
    ks_kube_client *ev = sibling(base, 0, 0, "events");
    unsetenv("KSCHED_KUBE_TRANSPORT");
    for (int i = 0; i < 3; i++) {
        ks_kube_response r = req(i == 1 ? base : ev, "GET", "/ok", NULL);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
    }
    assert_int_equal(locked_int(&H2F.accepted), 1);
    h2f_req b = logged(1), e = logged(2);
    assert_string_equal(e.auth, "Bearer tok"); /* the base's credentials */
    size_t bl = strlen(b.ua);
    assert_true(bl > 0 && strncmp(b.ua, "ksched/", 7) == 0);
    assert_true(strncmp(e.ua, b.ua, bl) == 0);
    assert_string_equal(e.ua + bl, "/events");
    ks_kube_client_stats s;
    ks_kube_client_stats_get(base, &s);
    assert_int_equal(s.requests, 1);
    ks_kube_client_stats_get(ev, &s);
    assert_int_equal(s.requests, 2);
    ks_kube_client_free(ev);
    ks_kube_client_free(base);
    ks_kube_config_free(&cfg);
}

static void test_sibling_shares_the_connection(void **st) { shares_one_connection("h2"); }
static void test_sibling_shares_the_connection_curl(void **st) { shares_one_connection("curl"); }

/* A sibling's budget is its own: a tight one throttles it, and not base. */
static void test_sibling_rate_limit_is_its_own(void **st) {
    ks_kube_config cfg = {0};
    ks_kube_client *base = client(&cfg, (copts){0}); /* no limit */
    ks_kube_client *ev = sibling(base, 5, 1, NULL);
    for (int i = 0; i < 4; i++) {
        ks_kube_response r = req(ev, "GET", "/ok", NULL);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
        r = req(base, "GET", "/ok", NULL);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
    }
    ks_kube_client_stats s;
    ks_kube_client_stats_get(ev, &s);
    assert_int_equal(s.requests, 4);
    assert_true(s.throttled_ns > 0); /* 3 of 4 waited for a token */
    ks_kube_client_stats_get(base, &s);
    assert_int_equal(s.requests, 4);
    assert_int_equal(s.throttled_ns, 0);
    ks_kube_client_free(base);
    ks_kube_client_free(ev);
    ks_kube_config_free(&cfg);
}

/* Either may go first: the one freed has its requests cancelled, the
 * other's go on, on the same connection. */
static void test_sibling_free_order(void **st) {
    ks_kube_config cfg = {0};
    for (int round = 0; round < 2; round++) {
        ks_kube_client *base = client(&cfg, (copts){0});
        ks_kube_client *ev = sibling(base, 0, 0, NULL);
        ks_kube_client *gone = round == 0 ? base : ev, *stays = round == 0 ? ev : base;
        int n0 = locked_int(&H2F.nlog);
        ks_kube_response r = req(gone, "GET", "/ok", NULL);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
        counter kg = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
        counter ks = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
        ks_kube_request hang = {.method = "GET", .path = "/hang"}, slow = {.method = "GET", .path = "/slow"};
        ks_kube_do_async(gone, &hang, on_done, &kg);
        ks_kube_do_async(stays, &slow, on_done, &ks);
        for (int i = 0; i < 500 && locked_int(&H2F.nlog) < n0 + 3; i++) wait_ms(5);
        ks_kube_client_free(gone);
        /* its request ended as cancelled before free returned */
        pthread_mutex_lock(&kg.mu);
        assert_int_equal(kg.done, 1);
        assert_int_equal(kg.ok, 0);
        pthread_mutex_unlock(&kg.mu);
        pthread_mutex_lock(&ks.mu);
        while (ks.done < 1) pthread_cond_wait(&ks.cv, &ks.mu);
        assert_int_equal(ks.ok, 1);
        pthread_mutex_unlock(&ks.mu);
        r = req(stays, "GET", "/ok", NULL);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
        ks_kube_client_free(stays);
        assert_int_equal(locked_int(&H2F.accepted), round + 1); /* one connection each round */
    }
    ks_kube_config_free(&cfg);
}

/* A GOAWAY retires the shared connection for both: each one's next
 * request goes to one new connection. */
static void test_sibling_goaway_seen_by_both(void **st) {
    ks_kube_config cfg = {0};
    ks_kube_client *base = client(&cfg, (copts){0});
    ks_kube_client *ev = sibling(base, 0, 0, NULL);
    sink s = SINK;
    ks_kube_stream *w;
    held_watch(base, &s, &w);
    ks_kube_response r = req(ev, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    H2F_SET(H2F.goaway = true);
    assert_true(sink_wait_end(&s, 5000));
    assert_int_equal(s.code, 0);
    ks_kube_stream_close(w);
    r = req(ev, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    r = req(base, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_int_equal(locked_int(&H2F.accepted), 2);
    ks_kube_client_free(ev);
    ks_kube_client_free(base);
    ks_kube_config_free(&cfg);
}

static int count_logged(const char *path) {
    pthread_mutex_lock(&H2F.mu);
    int n = 0;
    for (int i = 0; i < H2F.nlog; i++) n += strcmp(H2F.log[i].path, path) == 0;
    pthread_mutex_unlock(&H2F.mu);
    return n;
}

/* While clients share the connection, one whose requests never end holds
 * at most its share of the server's SETTINGS_MAX_CONCURRENT_STREAMS (4
 * here): a sibling half, the base three quarters; the other's requests
 * still go out. Without the shares they would wait until the stuck ones
 * time out. */
static void test_shared_connection_streams_are_shared(void **st) {
    H2F_SET(H2F.max_streams = 4);
    ks_kube_config cfg = {0};
    for (int round = 0; round < 2; round++) {
        ks_kube_client *base = client(&cfg, (copts){.timeout_ms = 5000});
        ks_kube_client *ev = sibling(base, 0, 0, NULL);
        ks_kube_client *stuck = round == 0 ? ev : base, *other = round == 0 ? base : ev;
        int want = round == 0 ? 2 : 3;
        ks_kube_response r = req(other, "GET", "/ok", NULL); /* the server's SETTINGS first */
        ks_kube_response_free(&r);
        int h0 = count_logged("/hang");
        counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
        ks_kube_request hang = {.method = "POST", .path = "/hang", .body = "{}", .body_len = 2};
        for (int i = 0; i < 6; i++) ks_kube_do_async(stuck, &hang, on_done, &k);
        for (int i = 0; i < 500 && count_logged("/hang") < h0 + want; i++) wait_ms(5);
        for (int i = 0; i < 3; i++) {
            r = req(other, "GET", "/ok", NULL);
            assert_int_equal(r.code, 200);
            assert_int_equal(r.retries, 0);
            ks_kube_response_free(&r);
        }
        assert_int_equal(count_logged("/hang"), h0 + want);
        ks_kube_client_free(stuck);
        pthread_mutex_lock(&k.mu);
        assert_int_equal(k.done, 6);
        assert_int_equal(k.ok, 0);
        pthread_mutex_unlock(&k.mu);
        r = req(other, "GET", "/ok", NULL);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
        ks_kube_client_free(other);
        assert_int_equal(locked_int(&H2F.accepted), round + 1);
    }
    ks_kube_config_free(&cfg);
}

/* ---- which transport ---- */

/* A proxy for the server's host sends the client to libcurl (which then
 * fails on the proxy that is not there); NO_PROXY exempting the host, or
 * no proxy, keeps it on its own HTTP/2; KSCHED_KUBE_TRANSPORT=curl forces
 * libcurl, which asks for gzip where the own HTTP/2 never does. */
static void test_transport_choice(void **st) {
    ks_kube_config cfg = {0};
    setenv("HTTPS_PROXY", "http://127.0.0.1:9", 1);
    ks_kube_client *c = client(&cfg, (copts){0});
    ks_kube_request q = {.method = "GET", .path = "/ok"};
    ks_kube_response r;
    ks_kube_do(c, &q, &r);
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    assert_int_equal(locked_int(&H2F.nlog), 0);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    setenv("NO_PROXY", "localhost,.example.com,127.0.0.1", 1);
    c = client(&cfg, (copts){0});
    ks_kube_do(c, &q, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(logged(-1).accept_encoding, "");
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    unsetenv("HTTPS_PROXY");
    unsetenv("NO_PROXY");
    setenv("KSCHED_KUBE_TRANSPORT", "curl", 1);
    c = client(&cfg, (copts){0});
    ks_kube_do(c, &q, &r);
    unsetenv("KSCHED_KUBE_TRANSPORT");
    assert_int_equal(r.code, 200);
    assert_true(logged(-1).accept_encoding[0] != '\0');
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* ---- TLS ---- */

static int setup_client_ca(void **st) {
    char cert[512], key[512];
    snprintf(cert, sizeof(cert), "%s/server.crt", tmpdir);
    snprintf(key, sizeof(key), "%s/server.key", tmpdir);
    return h2f_start_ca(cert, key, cafile) ? 0 : -1;
}

static char *path_in(const char *name) {
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    return strdup(p);
}

/* The client certificate from files, from data, from the exec plugin;
 * none: the server refuses the handshake. */
static void test_client_certificates(void **st) {
    char *cert = slurp("client.crt"), *key = slurp("client.key");
    assert_non_null(cert);
    for (int i = 0; i < 4; i++) {
        ks_kube_config cfg = {0};
        const char *want = "ksched-client";
        if (i == 0) {
            cfg.cert_file = path_in("client.crt");
            cfg.key_file = path_in("client.key");
        } else if (i == 1) {
            cfg.cert_data = strdup(cert);
            cfg.cert_len = strlen(cert);
            cfg.key_data = strdup(key);
            cfg.key_len = strlen(key);
        } else if (i == 2) {
            /* the plugin prints an ExecCredential written here */
            char *ec = slurp("exec.crt"), *ek = slurp("exec.key");
            assert_non_null(ec);
            char json[512], script[512];
            snprintf(json, sizeof(json), "%s/exec.json", tmpdir);
            snprintf(script, sizeof(script), "%s/certplugin.sh", tmpdir);
            FILE *f = fopen(json, "w");
            assert_non_null(f);
            fputs("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                  "\"status\":{\"clientCertificateData\":\"", f);
            for (const char *p = ec; *p; p++) *p == '\n' ? fputs("\\n", f) : fputc(*p, f);
            fputs("\",\"clientKeyData\":\"", f);
            for (const char *p = ek; *p; p++) *p == '\n' ? fputs("\\n", f) : fputc(*p, f);
            fputs("\"}}\n", f);
            fclose(f);
            free(ec);
            free(ek);
            f = fopen(script, "w");
            assert_non_null(f);
            fprintf(f, "#!/bin/sh\ncat '%s'\n", json);
            fclose(f);
            chmod(script, 0755);
            cfg.exec = calloc(1, sizeof(*cfg.exec));
            cfg.exec->api_version = strdup("client.authentication.k8s.io/v1");
            cfg.exec->command = strdup(script);
            want = "exec-client";
        } else {
            want = NULL;
        }
        ks_kube_client *c = client(&cfg, (copts){0});
        ks_kube_request q = {.method = "GET", .path = "/ok"};
        ks_kube_response r;
        ks_kube_do(c, &q, &r);
        if (want) {
            if (r.code != 200) fail_msg("case %d: code %ld (%s)", i, r.code, r.error ? r.error : "");
            assert_string_equal(logged(-1).client_cn, want);
        } else {
            assert_int_equal(r.code, 0);
            assert_non_null(r.error);
        }
        ks_kube_response_free(&r);
        ks_kube_client_free(c);
        ks_kube_config_free(&cfg);
    }
    free(cert);
    free(key);
}

static void test_certificates(void **st) {
    struct {
        const char *ca_data, *tls_name;
        bool insecure;
        long want;
        const char *error;
    } cases[] = {
        {NULL, NULL, false, 200, NULL},              /* CA file, the IP address in the certificate */
        {"ca", "apiserver.test", false, 200, NULL},  /* CA data, tls-server-name */
        {"other", NULL, false, 0, "SSL certificate problem: "},
        {"ca", "wrong.test", false, 0, "no alternative certificate subject name matches target host name 'wrong.test'"},
        {"other", "wrong.test", true, 200, NULL},    /* insecure-skip-tls-verify */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        ks_kube_config cfg = {.insecure = cases[i].insecure};
        if (cases[i].ca_data) {
            const char *pem = strcmp(cases[i].ca_data, "ca") == 0 ? ca_pem : other_pem;
            cfg.ca_data = strdup(pem);
            cfg.ca_len = strlen(pem);
        }
        if (cases[i].tls_name) cfg.tls_server_name = strdup(cases[i].tls_name);
        ks_kube_client *c = client(&cfg, (copts){0});
        ks_kube_request q = {.method = "GET", .path = "/ok"};
        ks_kube_response r;
        ks_kube_do(c, &q, &r);
        if (r.code != cases[i].want) fail_msg("case %zu: code %ld (%s)", i, r.code, r.error ? r.error : "");
        if (cases[i].error) {
            if (!r.error || !strstr(r.error, cases[i].error)) fail_msg("case %zu: error %s", i, r.error);
        }
        ks_kube_response_free(&r);
        ks_kube_client_free(c);
        ks_kube_config_free(&cfg);
    }
}

/* ---- async requests refused with an exec plugin's credentials ---- */

/* An exec plugin whose first run gives token t1; later runs run `then`
 * (shell) and, unless it exits, give t<run>. Its runs are counted in
 * tmpdir/<name>.runs. */
static void exec_plugin(ks_kube_config *cfg, const char *name, const char *then) {
    char script[512], runs[512];
    snprintf(script, sizeof(script), "%s/%s.sh", tmpdir, name);
    snprintf(runs, sizeof(runs), "%s/%s.runs", tmpdir, name);
    unlink(runs);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\nn=$(cat '%s' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '%s'\n"
            "if [ $n -gt 1 ]; then\n%s\nfi\n"
            "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
            "\"status\":{\"token\":\"t'$n'\"}}'\n",
            runs, runs, then);
    fclose(f);
    chmod(script, 0755);
    cfg->exec = calloc(1, sizeof(*cfg->exec));
    cfg->exec->api_version = strdup("client.authentication.k8s.io/v1");
    cfg->exec->command = strdup(script);
}

static int exec_runs(const char *name) {
    char *t = tu_slurp(tmpdir, name);
    int n = t ? atoi(t) : 0;
    free(t);
    return n;
}

typedef struct answer {
    pthread_mutex_t mu;
    bool done;
    ks_kube_response r;
} answer;

static void on_answer(void *arg, const ks_kube_response *r) {
    answer *a = arg;
    pthread_mutex_lock(&a->mu);
    a->r = *r;
    a->r.body = r->body ? strdup(r->body) : NULL;
    a->r.error = r->error ? strdup(r->error) : NULL;
    a->done = true;
    pthread_mutex_unlock(&a->mu);
}

static bool answer_wait(answer *a, int ms) {
    for (int i = 0; i <= ms / 10; i++) {
        pthread_mutex_lock(&a->mu);
        bool d = a->done;
        pthread_mutex_unlock(&a->mu);
        if (d) return true;
        wait_ms(10);
    }
    return false;
}

static bool file_exists(const char *name) {
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    return access(p, F_OK) == 0;
}

/* As ks_kube_do: a 401 runs the plugin again and sends the request once
 * more with its token. The plugin runs off the I/O thread: while it waits,
 * a watch already open keeps receiving. */
static void test_async_401_runs_the_exec_plugin_again(void **st) {
    char then[1024];
    snprintf(then, sizeof(then),
             "touch '%s/reauth.started'; i=0; while [ ! -e '%s/reauth.go' ] && [ $i -lt 1000 ]; do sleep 0.01; "
             "i=$((i+1)); done",
             tmpdir, tmpdir);
    char p[512];
    snprintf(p, sizeof(p), "%s/reauth.started", tmpdir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/reauth.go", tmpdir);
    unlink(p);
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    exec_plugin(&cfg, "reauth", then);
    ks_kube_client *c = client(&cfg, (copts){0});
    sink s = SINK;
    ks_kube_stream *w;
    held_watch(c, &s, &w);
    size_t prev = 0;
    for (int i = 0; i < 100 && sink_got(&s) != prev; i++) { /* until the window is full */
        prev = sink_got(&s);
        wait_ms(50);
    }
    answer a = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ks_kube_request q = {.method = "POST", .path = "/auth", .body = "{}", .body_len = 2};
    ks_kube_do_async(c, &q, on_answer, &a);
    for (int i = 0; i < 1000 && !file_exists("reauth.started"); i++) wait_ms(10);
    assert_true(file_exists("reauth.started"));
    /* the plugin is running: the I/O thread still moves the watch on */
    size_t held = sink_got(&s);
    ks_kube_stream_consumed(w, held);
    for (int i = 0; i < 500 && sink_got(&s) == held; i++) wait_ms(10);
    printf("# while the plugin ran: the watch had %zu bytes, then %zu\n", held, sink_got(&s));
    assert_true(sink_got(&s) > held);
    assert_false(answer_wait(&a, 0));
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_true(answer_wait(&a, 10000));
    assert_int_equal(a.r.code, 200);
    assert_int_equal(a.r.retries, 1);
    assert_null(a.r.error);
    assert_string_equal(logged(-2).auth, "Bearer t1");
    assert_string_equal(logged(-1).auth, "Bearer t2");
    assert_string_equal(logged(-1).path, "/auth");
    assert_int_equal(exec_runs("reauth.runs"), 2);
    ks_kube_response_free(&a.r);
    ks_kube_stream_close(w);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* The plugin fails when run again: the request ends with its message. */
static void test_async_401_plugin_fails(void **st) {
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    exec_plugin(&cfg, "reauthfail", "echo 'no more tokens' >&2; exit 3");
    ks_kube_client *c = client(&cfg, (copts){0});
    answer a = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/auth"};
    ks_kube_do_async(c, &q, on_answer, &a);
    assert_true(answer_wait(&a, 10000));
    assert_int_equal(a.r.code, 0);
    assert_non_null(a.r.error);
    if (!strstr(a.r.error, "reauthfail.sh failed with exit code 3")) fail_msg("error: %s", a.r.error);
    assert_int_equal(exec_runs("reauthfail.runs"), 2);
    assert_int_equal(locked_int(&H2F.nlog), 1); /* not sent again */
    ks_kube_response_free(&a.r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* Many requests refused at once: the plugin runs once for all of them. */
static void test_async_401_many_run_the_plugin_once(void **st) {
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    exec_plugin(&cfg, "reauthmany", "sleep 0.3");
    ks_kube_client *c = client(&cfg, (copts){0});
    enum { N = 12 };
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/auth"};
    for (int i = 0; i < N; i++) ks_kube_do_async(c, &q, on_done, &k);
    pthread_mutex_lock(&k.mu);
    while (k.done < N) pthread_cond_wait(&k.cv, &k.mu);
    pthread_mutex_unlock(&k.mu);
    assert_int_equal(k.ok, N);
    int refused = 0;
    pthread_mutex_lock(&H2F.mu);
    for (int i = 0; i < H2F.nlog; i++) refused += strcmp(H2F.log[i].auth, "Bearer t1") == 0;
    pthread_mutex_unlock(&H2F.mu);
    printf("# %d of %d requests refused, the plugin ran %d times\n", refused, N, exec_runs("reauthmany.runs"));
    assert_true(refused >= 2);
    assert_int_equal(exec_runs("reauthmany.runs"), 2);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* Freed while the plugin runs again: the request ends, nothing leaks. */
static void test_async_401_free_while_the_plugin_runs(void **st) {
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    exec_plugin(&cfg, "reauthfree", "sleep 0.3");
    ks_kube_client *c = client(&cfg, (copts){0});
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/auth"};
    ks_kube_do_async(c, &q, on_done, &k);
    for (int i = 0; i < 500 && exec_runs("reauthfree.runs") < 2; i++) wait_ms(10);
    ks_kube_client_free(c);
    assert_int_equal(k.done, 1);
    ks_kube_config_free(&cfg);
}

/* A plugin that hangs (here a script whose child keeps its stdout open)
 * does not hold up the last client's free: its process group is killed,
 * the request ends. */
static void *free_client(void *c) {
    ks_kube_client_free(c);
    return NULL;
}

static void test_async_401_free_kills_a_hung_plugin(void **st) {
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    exec_plugin(&cfg, "reauthhang", "sleep 600");
    ks_kube_client *c = client(&cfg, (copts){0});
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/auth"};
    ks_kube_do_async(c, &q, on_done, &k);
    for (int i = 0; i < 500 && exec_runs("reauthhang.runs") < 2; i++) wait_ms(10);
    assert_int_equal(exec_runs("reauthhang.runs"), 2);
    wait_ms(100); /* the script is in its sleep */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_client, c), 0);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20;
    if (pthread_timedjoin_np(t, NULL, &dl) != 0) fail_msg("the free still waits for the plugin after 20 s");
    pthread_mutex_lock(&k.mu);
    assert_int_equal(k.done, 1);
    assert_int_equal(k.ok, 0);
    pthread_mutex_unlock(&k.mu);
    ks_kube_config_free(&cfg);
}

/* A sibling freed while the plugin runs again for its request: free waits
 * for the plugin's thread to give the request back, which then ends as
 * cancelled; the base goes on with the new credentials. */
static void test_async_401_sibling_freed_while_the_plugin_runs(void **st) {
    H2F_SET(snprintf(H2F.want_auth, sizeof(H2F.want_auth), "Bearer t2"));
    ks_kube_config cfg = {0};
    exec_plugin(&cfg, "reauthsib", "sleep 0.3");
    ks_kube_client *base = client(&cfg, (copts){0});
    ks_kube_client *ev = sibling(base, 0, 0, NULL);
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/auth"};
    ks_kube_do_async(ev, &q, on_done, &k);
    for (int i = 0; i < 500 && exec_runs("reauthsib.runs") < 2; i++) wait_ms(10);
    assert_int_equal(exec_runs("reauthsib.runs"), 2);
    ks_kube_client_free(ev);
    pthread_mutex_lock(&k.mu);
    assert_int_equal(k.done, 1);
    assert_int_equal(k.ok, 0);
    pthread_mutex_unlock(&k.mu);
    ks_kube_response r = req(base, "GET", "/auth", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_string_equal(logged(-1).auth, "Bearer t2");
    assert_int_equal(exec_runs("reauthsib.runs"), 2);
    ks_kube_client_free(base);
    ks_kube_config_free(&cfg);
}

/* ---- name resolution off the I/O thread ---- */

/* A resolver the test holds: apiserver.test is 127.0.0.1, other names are
 * unknown; while dns.block, lookups wait. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool block;
    int calls;
} dns = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int held_resolver(const char *host, const char *port, const struct addrinfo *hints, struct addrinfo **res) {
    pthread_mutex_lock(&dns.mu);
    dns.calls++;
    pthread_cond_broadcast(&dns.cv);
    while (dns.block) pthread_cond_wait(&dns.cv, &dns.mu);
    pthread_mutex_unlock(&dns.mu);
    if (strcmp(host, "apiserver.test") != 0) return EAI_NONAME;
    struct addrinfo h = *hints;
    h.ai_flags |= AI_NUMERICHOST;
    return getaddrinfo("127.0.0.1", port, &h, res);
}

static void dns_hold(bool block) {
    pthread_mutex_lock(&dns.mu);
    dns.block = block;
    pthread_cond_broadcast(&dns.cv);
    pthread_mutex_unlock(&dns.mu);
}

/* Until n lookups have begun; false after ms. */
static bool dns_wait_calls(int n, int ms) {
    for (int i = 0; i <= ms / 10; i++) {
        pthread_mutex_lock(&dns.mu);
        bool ok = dns.calls >= n;
        pthread_mutex_unlock(&dns.mu);
        if (ok) return true;
        wait_ms(10);
    }
    return false;
}

static void dns_setup(ks_kube_config *cfg, const char *host) {
    char server[128];
    snprintf(server, sizeof(server), "https://%s:%u", host, H2F.port);
    cfg->server = strdup(server);
    dns_hold(false);
    pthread_mutex_lock(&dns.mu);
    dns.calls = 0;
    pthread_mutex_unlock(&dns.mu);
    ks_kube_getaddrinfo = held_resolver;
}

/* The resolver's threads have ended (they free what they hold). */
static void dns_teardown(void) {
    dns_hold(false);
    for (int i = 0; i < 500 && ks_kube_h2_resolving() > 0; i++) wait_ms(10);
    assert_int_equal(ks_kube_h2_resolving(), 0);
    ks_kube_getaddrinfo = getaddrinfo;
}

/* A new connection waiting for a slow lookup holds up nothing that runs on
 * the connection already open: a watch there keeps receiving. */
static void test_slow_lookup_stalls_no_open_connection(void **st) {
    ks_kube_config cfg = {0};
    dns_setup(&cfg, "apiserver.test");
    ks_kube_client *c = client(&cfg, (copts){0});
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    sink s = SINK;
    ks_kube_stream *w;
    held_watch(c, &s, &w);
    size_t prev = 0;
    for (int i = 0; i < 100 && sink_got(&s) != prev; i++) {
        prev = sink_got(&s);
        wait_ms(50);
    }
    /* the server retires the connection (its watch carries on); the next
     * request needs a new one, whose lookup hangs */
    dns_hold(true);
    H2F_SET(H2F.goaway_keep = true);
    wait_ms(100);
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/ok"};
    ks_kube_do_async(c, &q, on_done, &k);
    assert_true(dns_wait_calls(2, 5000));
    size_t held = sink_got(&s);
    ks_kube_stream_consumed(w, held);
    for (int i = 0; i < 500 && sink_got(&s) == held; i++) wait_ms(10);
    printf("# while the lookup hung: the watch had %zu bytes, then %zu\n", held, sink_got(&s));
    assert_true(sink_got(&s) > held);
    pthread_mutex_lock(&k.mu);
    assert_int_equal(k.done, 0);
    pthread_mutex_unlock(&k.mu);
    dns_hold(false);
    pthread_mutex_lock(&k.mu);
    while (k.done < 1) pthread_cond_wait(&k.cv, &k.mu);
    pthread_mutex_unlock(&k.mu);
    assert_int_equal(k.ok, 1);
    assert_int_equal(locked_int(&H2F.accepted), 2);
    ks_kube_stream_close(w);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
    dns_teardown();
}

/* Freed while a lookup hangs: the request ends, the client goes at once,
 * the lookup's thread frees what it holds when it returns. An unknown
 * name ends requests with curl's words. */
static void test_lookup_free_and_failure(void **st) {
    ks_kube_config cfg = {0};
    dns_setup(&cfg, "apiserver.test");
    dns_hold(true);
    ks_kube_client *c = client(&cfg, (copts){0});
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_request q = {.method = "GET", .path = "/ok"};
    ks_kube_do_async(c, &q, on_done, &k);
    ks_kube_do_async(c, &q, on_done, &k);
    assert_true(dns_wait_calls(1, 5000));
    assert_int_equal(ks_kube_h2_resolving(), 1);
    ks_kube_client_free(c);
    assert_int_equal(k.done, 2);
    assert_int_equal(k.ok, 0);
    assert_int_equal(ks_kube_h2_resolving(), 1); /* still in the lookup */
    ks_kube_config_free(&cfg);
    dns_teardown();

    ks_kube_config cfg2 = {0};
    dns_setup(&cfg2, "nosuch.test");
    c = client(&cfg2, (copts){0});
    ks_kube_response r = req(c, "GET", "/ok", NULL);
    assert_int_equal(r.code, 0);
    if (!r.error || !strstr(r.error, "Could not resolve host: nosuch.test")) fail_msg("error: %s", r.error);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg2);
    dns_teardown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_request_headers_and_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrency_within_max_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_401_runs_the_exec_plugin_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_401_runs_the_exec_plugin_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_401_plugin_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_401_many_run_the_plugin_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_401_free_while_the_plugin_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_401_free_kills_a_hung_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_401_sibling_freed_while_the_plugin_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_lookup_stalls_no_open_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_free_and_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits_and_timeouts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paced_watch_bounds_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpaced_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_goaway_and_drop_end_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_goaway_refused_request_is_sent_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ping_health_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sibling_shares_the_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sibling_shares_the_connection_curl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sibling_rate_limit_is_its_own, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sibling_free_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sibling_goaway_seen_by_both, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_connection_streams_are_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_certificates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transport_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_certificates, setup_client_ca, teardown),
    };
    return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
