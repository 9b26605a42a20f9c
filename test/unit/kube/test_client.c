/* The kube-apiserver client against a scripted server on 127.0.0.1:
 * headers, retries (429 / 5xx / connection refused, idempotent or not),
 * the rate limiter, concurrency, streams, token files, exec plugins and
 * TLS verification with a CA made for the test. */
#include "kube/client.h"
#include "kube/ratelimit.h"
#include "util/clock.h"

#include "kube_fake.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[256];

static int setup(void **st) {
    fk_reset();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ks_kube_client_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    return fk_start_on(0, NULL, NULL) ? 0 : -1;
}

static int teardown(void **st) {
    fk_release();
    fk_stop();
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) return -1;
    return 0;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static ks_kube_client *client_for(ks_kube_config *cfg, double qps, int burst, int max_retries) {
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", FK.port);
    if (!cfg->server) cfg->server = strdup(server);
    ks_kube_client_options o = {.config = cfg, .qps = qps, .burst = burst, .max_retries = max_retries,
                                .retry_base_ms = 10, .timeout_ms = 20000};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    if (!c) fail_msg("client: %s", err);
    return c;
}

static ks_kube_response get(ks_kube_client *c, const char *method, const char *path, const char *body, bool idem);

/* client-go's AddUserAgent: the elector's client says what it is. */
static void test_user_agent_suffix(void **st) {
    fk_add((fk_answer){.method = "GET", .path = "/x", .body = "{}"});
    ks_kube_config cfg = {0};
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", FK.port);
    cfg.server = strdup(server);
    ks_kube_client_options o = {.config = &cfg, .user_agent_suffix = "leader-election", .timeout_ms = 20000};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    assert_non_null(c);
    ks_kube_response r = get(c, "GET", "/x", NULL, true);
    assert_int_equal(r.code, 200);
    fk_request q = fk_get(0);
    assert_true(strncmp(q.user_agent, "ksched/", 7) == 0);
    const char *tail = ")/leader-election";
    size_t n = strlen(q.user_agent), m = strlen(tail);
    assert_true(n > m && strcmp(q.user_agent + n - m, tail) == 0);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    free(cfg.server);
}

static ks_kube_response get(ks_kube_client *c, const char *method, const char *path, const char *body, bool idem) {
    ks_kube_request req = {.method = method, .path = path, .body = body, .body_len = body ? strlen(body) : 0,
                           .idempotent = idem};
    ks_kube_response r;
    ks_kube_do(c, &req, &r);
    return r;
}

static void test_get_headers(void **st) {
    fk_add((fk_answer){.method = "GET", .path = "/api/v1/nodes", .body = "{\"kind\":\"NodeList\"}"});
    fk_add((fk_answer){.method = "POST", .path = "/api/v1/namespaces/a/pods/p/binding", .status = 201, .body = "{}"});
    ks_kube_config cfg = {.token = strdup("s3cret")};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "GET", "/api/v1/nodes?limit=500&resourceVersion=0", NULL, true);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "{\"kind\":\"NodeList\"}");
    assert_int_equal(r.retries, 0);
    fk_request q = fk_get(0);
    assert_string_equal(q.method, "GET");
    assert_string_equal(q.url, "/api/v1/nodes?limit=500&resourceVersion=0");
    assert_string_equal(q.auth, "Bearer s3cret");
    assert_string_equal(q.accept, "application/json");
    assert_true(strncmp(q.user_agent, "ksched/", 7) == 0);
    assert_non_null(strstr(q.user_agent, "(linux/"));
    ks_kube_response_free(&r);
    const char *b = "{\"metadata\":{\"name\":\"p\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}";
    r = get(c, "POST", "/api/v1/namespaces/a/pods/p/binding", b, false);
    assert_int_equal(r.code, 201);
    q = fk_get(1);
    assert_string_equal(q.method, "POST");
    assert_string_equal(q.content_type, "application/json");
    assert_string_equal(q.body, b);
    ks_kube_response_free(&r);
    /* no script: the fake answers 404 with a Status */
    r = get(c, "GET", "/apis/x/v1/things", NULL, true);
    assert_int_equal(r.code, 404);
    char *m = ks_kube_status_message(r.body, r.body_len);
    assert_string_equal(m, "the server could not find the requested resource");
    free(m);
    ks_kube_response_free(&r);
    ks_kube_client_stats s;
    ks_kube_client_stats_get(c, &s);
    assert_int_equal(s.requests, 3);
    assert_int_equal(s.errors_2xx, 2);
    assert_int_equal(s.errors_4xx, 1);
    assert_int_equal(s.retries, 0);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_basic_auth(void **st) {
    fk_add((fk_answer){.path = "/api", .body = "{}"});
    ks_kube_config cfg = {.username = strdup("admin"), .password = strdup("pw")};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "GET", "/api", NULL, true);
    assert_int_equal(r.code, 200);
    assert_string_equal(fk_get(0).auth, "Basic YWRtaW46cHc=");
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* 429 with Retry-After is retried whatever the method (client-go). */
static void test_429_retry_after(void **st) {
    fk_add((fk_answer){.method = "POST", .path = "/x", .status = 429, .retry_after = "0", .body = "{}"});
    fk_add((fk_answer){.method = "POST", .path = "/x", .status = 201, .body = "{\"ok\":1}"});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "POST", "/x", "{}", false);
    assert_int_equal(r.code, 201);
    assert_int_equal(r.retries, 1);
    assert_int_equal(fk_count("POST", "/x"), 2);
    ks_kube_response_free(&r);
    ks_kube_client_stats s;
    ks_kube_client_stats_get(c, &s);
    assert_int_equal(s.requests, 2);
    assert_int_equal(s.retries, 1);
    assert_int_equal(s.errors_4xx, 1);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_500_then_200_idempotent(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .status = 500, .body = "{}"});
    fk_add((fk_answer){.path = "/api/v1/pods", .status = 503, .body = "{}"});
    fk_add((fk_answer){.path = "/api/v1/pods", .body = "{\"items\":[]}"});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "GET", "/api/v1/pods", NULL, true);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.retries, 2);
    assert_string_equal(r.body, "{\"items\":[]}");
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_5xx_not_idempotent(void **st) {
    fk_add((fk_answer){.method = "POST", .path = "/b", .status = 500, .body = "{\"message\":\"boom\"}", .times = -1});
    fk_add((fk_answer){.method = "POST", .path = "/c", .status = 503, .retry_after = "0", .body = "{}"});
    fk_add((fk_answer){.method = "POST", .path = "/c", .status = 201, .body = "{}"});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "POST", "/b", "{}", false);
    assert_int_equal(r.code, 500);
    assert_int_equal(r.retries, 0);
    assert_int_equal(fk_count("POST", "/b"), 1);
    ks_kube_response_free(&r);
    /* a 5xx with Retry-After: the server asks for a retry, client-go retries any method */
    r = get(c, "POST", "/c", "{}", false);
    assert_int_equal(r.code, 201);
    assert_int_equal(r.retries, 1);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_max_retries(void **st) {
    fk_add((fk_answer){.path = "/down", .status = 500, .body = "{}", .times = -1});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 3);
    ks_kube_response r = get(c, "GET", "/down", NULL, true);
    assert_int_equal(r.code, 500);
    assert_int_equal(r.retries, 3);
    assert_int_equal(fk_count("GET", "/down"), 4);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* An answer over the client's limit stops the transfer with a message, not
 * retried; one at the limit is whole. */
static void test_response_limit(void **st) {
    char big[4097];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    fk_add((fk_answer){.path = "/big", .body = big, .times = -1});
    fk_add((fk_answer){.path = "/fits", .body = big + 1});
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", FK.port);
    ks_kube_config cfg = {.server = strdup(server)};
    ks_kube_client_options o = {.config = &cfg, .retry_base_ms = 10, .timeout_ms = 20000,
                                .max_response_bytes = 4095};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    assert_non_null(c);
    ks_kube_response r = get(c, "GET", "/big", NULL, true);
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    assert_string_equal(r.error, "an answer larger than the limit of 4095 bytes");
    assert_int_equal(r.retries, 0);
    assert_int_equal(fk_count("GET", "/big"), 1);
    ks_kube_response_free(&r);
    r = get(c, "GET", "/fits", NULL, true);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.body_len, 4095);
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* The server comes up while the client retries an idempotent request. */
typedef struct job {
    ks_kube_client *c;
    ks_kube_response r;
} job;

static void *run_get_api(void *arg) {
    job *j = arg;
    j->r = get(j->c, "GET", "/api", NULL, true);
    return NULL;
}

static void test_connection_refused_then_success(void **st) {
    unsigned port = FK.port;
    fk_stop();
    fk_add((fk_answer){.path = "/api", .body = "{\"up\":true}"});
    ks_kube_config cfg = {0};
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", port);
    cfg.server = strdup(server);
    ks_kube_client *c = client_for(&cfg, 0, 0, 10);
    /* a non-idempotent request is not retried on a connection error */
    ks_kube_response r = get(c, "POST", "/api", "{}", false);
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    assert_int_equal(r.retries, 0);
    ks_kube_response_free(&r);

    job j = {.c = c};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_get_api, &j), 0);
    /* wait (bounded) for the first refused attempt of the GET, then start */
    ks_kube_client_stats s;
    for (int i = 0; i < 2000; i++) {
        ks_kube_client_stats_get(c, &s);
        if (s.errors_conn >= 2) break;
        usleep(1000);
    }
    assert_true(s.errors_conn >= 2);
    assert_true(fk_start_on(port, NULL, NULL));
    pthread_join(t, NULL);
    assert_int_equal(j.r.code, 200);
    assert_true(j.r.retries >= 1);
    assert_string_equal(j.r.body, "{\"up\":true}");
    ks_kube_response_free(&j.r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* The bucket on a clock of the test's own: counts, not timings. */
static void test_ratelimit_tokens(void **st) {
    ks_ratelimit rl;
    ks_ratelimit_init(&rl, 10, 3, 0);
    for (int i = 0; i < 3; i++) assert_int_equal(ks_ratelimit_reserve(&rl, 0), 0);
    /* the fourth waits for one token at 10 qps: 100 ms; the fifth 200 ms */
    assert_int_equal(ks_ratelimit_reserve(&rl, 0), 100 * KS_NS_PER_MS);
    assert_int_equal(ks_ratelimit_reserve(&rl, 0), 200 * KS_NS_PER_MS);
    assert_false(ks_ratelimit_try(&rl, 0));
    /* refills to the burst and no further */
    assert_true(ks_ratelimit_tokens(&rl, 10 * KS_NS_PER_SEC) == 3.0);
    assert_true(ks_ratelimit_try(&rl, 10 * KS_NS_PER_SEC));
    assert_true(ks_ratelimit_tokens(&rl, 10 * KS_NS_PER_SEC) == 2.0);
    /* half a token later: 2.5, one taken */
    assert_int_equal(ks_ratelimit_reserve(&rl, 10 * KS_NS_PER_SEC + 50 * KS_NS_PER_MS), 0);
    ks_ratelimit_destroy(&rl);
    /* qps <= 0: no limit */
    ks_ratelimit_init(&rl, 0, 1, 0);
    for (int i = 0; i < 1000; i++) assert_int_equal(ks_ratelimit_reserve(&rl, 0), 0);
    ks_ratelimit_destroy(&rl);
    /* burst 0 takes client-go's default of 10 */
    ks_ratelimit_init(&rl, 1, 0, 0);
    for (int i = 0; i < 10; i++) assert_int_equal(ks_ratelimit_reserve(&rl, 0), 0);
    assert_true(ks_ratelimit_reserve(&rl, 0) > 0);
    ks_ratelimit_destroy(&rl);
}

/* Through the client: the burst passes without waiting, the next request
 * waits (the throttle counter moves; how long is not asserted). */
static void test_client_rate_limited(void **st) {
    fk_add((fk_answer){.path = "/api", .body = "{}", .times = -1});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 50, 3, 0);
    ks_kube_client_stats s;
    for (int i = 0; i < 3; i++) {
        ks_kube_response r = get(c, "GET", "/api", NULL, true);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
    }
    ks_kube_client_stats_get(c, &s);
    /* three requests take far less than the 20 ms one token needs at 50 qps
     * only if the machine is fast: count tokens instead of time */
    int64_t before = s.throttled_ns;
    for (int i = 0; i < 4; i++) {
        ks_kube_response r = get(c, "GET", "/api", NULL, true);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
    }
    ks_kube_client_stats_get(c, &s);
    assert_true(s.throttled_ns > before);
    assert_int_equal(s.requests, 7);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* Many threads and async requests at once; every one answered once. */
typedef struct counter {
    pthread_mutex_t mu;
    int done, ok;
} counter;

static void on_done(void *arg, const ks_kube_response *r) {
    counter *k = arg;
    pthread_mutex_lock(&k->mu);
    k->done++;
    if (r->code == 200 && r->body && strcmp(r->body, "{\"n\":1}") == 0) k->ok++;
    pthread_mutex_unlock(&k->mu);
}

static void *hammer(void *arg) {
    ks_kube_client *c = arg;
    for (int i = 0; i < 10; i++) {
        ks_kube_response r = get(c, "GET", "/many", NULL, true);
        if (r.code != 200) fprintf(stderr, "hammer: %ld %s\n", r.code, r.error ? r.error : "");
        ks_kube_response_free(&r);
    }
    return NULL;
}

static void test_concurrent(void **st) {
    fk_add((fk_answer){.path = "/many", .body = "{\"n\":1}", .times = -1});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    counter k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ks_kube_request req = {.method = "GET", .path = "/many", .idempotent = true};
    for (int i = 0; i < 40; i++) ks_kube_do_async(c, &req, on_done, &k);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, hammer, c);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 5000; i++) {
        pthread_mutex_lock(&k.mu);
        int d = k.done;
        pthread_mutex_unlock(&k.mu);
        if (d == 40) break;
        usleep(1000);
    }
    pthread_mutex_lock(&k.mu);
    assert_int_equal(k.done, 40);
    assert_int_equal(k.ok, 40);
    pthread_mutex_unlock(&k.mu);
    assert_int_equal(fk_count("GET", "/many"), 80);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* ---- streams ---- */

typedef struct sink {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char buf[4096];
    size_t n;
    int chunks, ends;
    long code;
    char error[256];
} sink;

static void sink_data(void *arg, const char *b, size_t n) {
    sink *k = arg;
    pthread_mutex_lock(&k->mu);
    if (k->n + n < sizeof(k->buf)) {
        memcpy(k->buf + k->n, b, n);
        k->n += n;
    }
    k->chunks++;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

static void sink_end(void *arg, long code, const char *error) {
    sink *k = arg;
    pthread_mutex_lock(&k->mu);
    k->ends++;
    k->code = code;
    snprintf(k->error, sizeof(k->error), "%s", error ? error : "");
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

/* Wait (at most 10 s) until cond holds; returns it. */
#define SINK_WAIT(k, cond)                                                        \
    ({                                                                            \
        struct timespec dl_;                                                      \
        clock_gettime(CLOCK_REALTIME, &dl_);                                      \
        dl_.tv_sec += 10;                                                         \
        pthread_mutex_lock(&(k)->mu);                                             \
        while (!(cond) && pthread_cond_timedwait(&(k)->cv, &(k)->mu, &dl_) == 0) {} \
        bool ok_ = (cond);                                                        \
        pthread_mutex_unlock(&(k)->mu);                                           \
        ok_;                                                                      \
    })

static void test_stream(void **st) {
    fk_add((fk_answer){.path = "/api/v1/pods", .query = "watch=true",
                       .chunks = {"{\"type\":\"ADDED\",", "\"object\":{}}\n", "{\"type\":\"BOOKMARK\"}\n"}});
    fk_add((fk_answer){.path = "/api/v1/nodes", .query = "watch=true", .chunks = {"{\"a\":1}\n"}, .hold = true});
    fk_add((fk_answer){.path = "/api/v1/gone", .status = 410,
                       .body = "{\"kind\":\"Status\",\"message\":\"too old resource version: 1 (5)\",\"code\":410}"});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    sink k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_stream *s = ks_kube_stream_open(c, "/api/v1/pods?watch=true", false, sink_data, sink_end, &k);
    assert_true(SINK_WAIT(&k, k.ends == 1));
    assert_int_equal(k.code, 200);
    assert_string_equal(k.error, "");
    k.buf[k.n] = '\0';
    assert_string_equal(k.buf, "{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"BOOKMARK\"}\n");
    ks_kube_stream_close(s);

    /* a held stream is cancelled by close: end gets 0, "cancelled" */
    sink h = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    s = ks_kube_stream_open(c, "/api/v1/nodes?watch=true", false, sink_data, sink_end, &h);
    assert_true(SINK_WAIT(&h, h.n >= 8));
    ks_kube_stream_close(s);
    assert_int_equal(h.ends, 1);
    assert_int_equal(h.code, 0);
    assert_string_equal(h.error, "cancelled");

    /* an error answer: its Status message goes to end, no data */
    sink g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    s = ks_kube_stream_open(c, "/api/v1/gone", false, sink_data, sink_end, &g);
    assert_true(SINK_WAIT(&g, g.ends == 1));
    assert_int_equal(g.code, 410);
    assert_string_equal(g.error, "too old resource version: 1 (5)");
    assert_int_equal(g.n, 0);
    ks_kube_stream_close(s);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* A stream still open when the client is freed ends as cancelled; closing
 * it afterwards only frees it. */
static void test_stream_outlived(void **st) {
    fk_add((fk_answer){.path = "/w", .hold = true});
    ks_kube_config cfg = {0};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    sink k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_stream *s = ks_kube_stream_open(c, "/w", false, sink_data, sink_end, &k);
    for (int i = 0; i < 5000 && fk_count("GET", "/w") == 0; i++) usleep(1000);
    ks_kube_client_free(c);
    assert_int_equal(k.ends, 1);
    assert_string_equal(k.error, "cancelled");
    ks_kube_stream_close(s);
    ks_kube_config_free(&cfg);
}

/* ---- dead connections ---- */

/* A peer that completes TCP handshakes and then says nothing: a listening
 * socket nobody accepts on (the kernel queues the connections). */
static int black_hole(unsigned *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 64), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static ks_kube_client *health_client(ks_kube_config *cfg, unsigned port, int64_t idle_ms, int64_t ping_ms) {
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", port);
    cfg->server = strdup(server);
    ks_kube_client_options o = {.config = cfg, .max_retries = 1, .retry_base_ms = 10,
                                .read_idle_ms = idle_ms, .ping_timeout_ms = ping_ms, .watch_grace_ms = 300};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    if (!c) fail_msg("client: %s", err);
    return c;
}

/* client-go's HTTP/2 health check, with a probe request for its PING: a
 * request to a peer that never answers ends as a connection error once
 * the probe has gone unanswered, and a watch on it ends so that it can
 * be opened again. Without the check both would wait for ever. */
static void test_black_hole_is_found(void **st) {
    unsigned port;
    int fd = black_hole(&port);
    ks_kube_config cfg = {0};
    ks_kube_client *c = health_client(&cfg, port, 200, 200);
    sink k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_stream *s = ks_kube_stream_open(c, "/api/v1/pods?watch=true", false, sink_data, sink_end, &k);
    ks_kube_response r = get(c, "POST", "/api/v1/namespaces/ns/pods/p/binding", "{}", false);
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    assert_non_null(strstr(r.error, "no answer from the server"));
    ks_kube_response_free(&r);
    assert_true(SINK_WAIT(&k, k.ends == 1));
    assert_int_equal(k.code, 0);
    assert_non_null(strstr(k.error, "no answer from the server"));
    ks_kube_stream_close(s);
    ks_kube_client_stats stats;
    ks_kube_client_stats_get(c, &stats);
    assert_true(stats.dead_connections >= 1);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
    close(fd);
}

/* A connection that answers the probe is alive: a watch that is quiet
 * for many probe periods stays open. */
static void test_quiet_watch_on_a_live_server_stays(void **st) {
    fk_add((fk_answer){.path = "/api/v1/nodes", .query = "watch=true", .chunks = {"{\"a\":1}\n"}, .hold = true});
    fk_add((fk_answer){.path = "/version", .body = "{}", .times = -1});
    ks_kube_config cfg = {0};
    /* a generous probe timeout: a loaded machine (sanitizers) must not
     * make a live server look dead */
    ks_kube_client *c = health_client(&cfg, FK.port, 100, 5000);
    sink k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_stream *s = ks_kube_stream_open(c, "/api/v1/nodes?watch=true", false, sink_data, sink_end, &k);
    assert_true(SINK_WAIT(&k, k.n >= 8));
    /* at least three answered probes (100 ms of silence each) */
    for (int i = 0; i < 1000 && fk_count("GET", "/version") < 3; i++) usleep(20000);
    assert_true(fk_count("GET", "/version") >= 3);
    pthread_mutex_lock(&k.mu);
    assert_int_equal(k.ends, 0);
    pthread_mutex_unlock(&k.mu);
    ks_kube_client_stats stats;
    ks_kube_client_stats_get(c, &stats);
    assert_int_equal(stats.dead_connections, 0);
    ks_kube_stream_close(s);
    assert_string_equal(k.error, "cancelled");
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* A watch that asked the server to end it after timeoutSeconds and is
 * still open (quiet) after the grace ends here, with the probe off. */
static void test_watch_outliving_its_timeout_ends(void **st) {
    fk_add((fk_answer){.path = "/api/v1/nodes", .query = "watch=true", .hold = true});
    ks_kube_config cfg = {0};
    ks_kube_client *c = health_client(&cfg, FK.port, -1, 0);
    sink k = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    ks_kube_stream *s =
        ks_kube_stream_open(c, "/api/v1/nodes?watch=true&timeoutSeconds=1", false, sink_data, sink_end, &k);
    assert_true(SINK_WAIT(&k, k.ends == 1));
    assert_int_equal(k.code, 0);
    assert_string_not_equal(k.error, "cancelled");
    ks_kube_stream_close(s);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* ---- credentials ---- */

static void test_token_file_rotation(void **st) {
    fk_add((fk_answer){.path = "/api", .body = "{}", .times = -1});
    char tf[512], tmp[512];
    snprintf(tf, sizeof(tf), "%s/token", tmpdir);
    snprintf(tmp, sizeof(tmp), "%s/token.new", tmpdir);
    write_file(tf, "first-token\n");
    ks_kube_config cfg = {.token_file = strdup(tf)};
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "GET", "/api", NULL, true);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_string_equal(fk_get(-1).auth, "Bearer first-token");
    /* projected tokens are replaced by a rename */
    write_file(tmp, "second-token");
    assert_int_equal(rename(tmp, tf), 0);
    r = get(c, "GET", "/api", NULL, true);
    ks_kube_response_free(&r);
    assert_string_equal(fk_get(-1).auth, "Bearer second-token");
    /* gone: the last good token goes on being used */
    unlink(tf);
    r = get(c, "GET", "/api", NULL, true);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_string_equal(fk_get(-1).auth, "Bearer second-token");
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* An exec plugin: a shell script counting its runs. */
static void write_plugin(const char *body) {
    char path[512];
    snprintf(path, sizeof(path), "%s/plugin.sh", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho run >> '%s/runs'\nprintf '%%s' \"$KUBERNETES_EXEC_INFO\" > '%s/info'\n%s\n", tmpdir,
            tmpdir, body);
    fclose(f);
    chmod(path, 0755);
}

static int plugin_runs(void) {
    char path[512];
    snprintf(path, sizeof(path), "%s/runs", tmpdir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    char line[64];
    while (fgets(line, sizeof(line), f)) n++;
    fclose(f);
    return n;
}

static ks_kube_config exec_config(bool cluster_info) {
    ks_kube_config cfg = {0};
    cfg.exec = calloc(1, sizeof(*cfg.exec));
    cfg.exec->api_version = strdup("client.authentication.k8s.io/v1");
    char path[512];
    snprintf(path, sizeof(path), "%s/plugin.sh", tmpdir);
    cfg.exec->command = strdup(path);
    cfg.exec->args = calloc(2, sizeof(char *));
    cfg.exec->args[0] = strdup("--flag");
    cfg.exec->env = calloc(2, sizeof(char *));
    cfg.exec->env[0] = strdup("PLUGIN_VAR=x");
    cfg.exec->provide_cluster_info = cluster_info;
    return cfg;
}

static void test_exec_plugin(void **st) {
    fk_add((fk_answer){.path = "/api", .body = "{}", .times = 2});
    fk_add((fk_answer){.path = "/api", .status = 401, .body = "{}"});
    fk_add((fk_answer){.path = "/api", .body = "{}", .times = -1});
    write_plugin("echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                 "\"status\":{\"token\":\"tok-'\"$PLUGIN_VAR$1\"'\",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"}}'");
    ks_kube_config cfg = exec_config(true);
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "GET", "/api", NULL, true);
    assert_int_equal(r.code, 200);
    ks_kube_response_free(&r);
    assert_string_equal(fk_get(-1).auth, "Bearer tok-x--flag");
    assert_int_equal(plugin_runs(), 1);
    /* cached until it expires */
    r = get(c, "GET", "/api", NULL, true);
    ks_kube_response_free(&r);
    assert_int_equal(plugin_runs(), 1);
    /* a 401: the plugin runs again and the request is made once more */
    r = get(c, "GET", "/api", NULL, true);
    assert_int_equal(r.code, 200);
    assert_int_equal(r.retries, 1);
    ks_kube_response_free(&r);
    assert_int_equal(plugin_runs(), 2);
    /* the cluster went to the plugin in KUBERNETES_EXEC_INFO */
    char path[512], info[2048] = {0};
    snprintf(path, sizeof(path), "%s/info", tmpdir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_true(fread(info, 1, sizeof(info) - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(info, "\"kind\":\"ExecCredential\""));
    assert_non_null(strstr(info, "\"interactive\":false"));
    char server[64];
    snprintf(server, sizeof(server), "\"server\":\"http://127.0.0.1:%u\"", FK.port);
    assert_non_null(strstr(info, server));
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

static void test_exec_plugin_expiry_and_errors(void **st) {
    fk_add((fk_answer){.path = "/api", .body = "{}", .times = -1});
    /* expired at once: every request runs the plugin */
    write_plugin("echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                 "\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"2000-01-01T00:00:00Z\"}}'");
    ks_kube_config cfg = exec_config(false);
    ks_kube_client *c = client_for(&cfg, 0, 0, 0);
    for (int i = 0; i < 3; i++) {
        ks_kube_response r = get(c, "GET", "/api", NULL, true);
        assert_int_equal(r.code, 200);
        ks_kube_response_free(&r);
    }
    assert_int_equal(plugin_runs(), 3);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);

    /* a wrong apiVersion, a missing status, a failing command: no request
     * is made, the error says why */
    static const char *const bad[][2] = {
        {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'",
         "plugin returned version client.authentication.k8s.io/v1beta1"},
        {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}'",
         "didn't return a status field"},
        {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"clientKeyData\":\"k\"}}'",
         "only certificate or key"},
        {"exit 3", "failed with exit code 3"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        write_plugin(bad[i][0]);
        cfg = exec_config(false);
        c = client_for(&cfg, 0, 0, 0);
        int before = fk_count(NULL, NULL);
        ks_kube_response r = get(c, "GET", "/api", NULL, true);
        assert_int_equal(r.code, 0);
        assert_non_null(r.error);
        if (!strstr(r.error, bad[i][1])) fail_msg("error \"%s\" lacks \"%s\"", r.error, bad[i][1]);
        assert_int_equal(fk_count(NULL, NULL), before);
        ks_kube_response_free(&r);
        ks_kube_client_free(c);
        ks_kube_config_free(&cfg);
    }
    cfg = exec_config(false);
    free(cfg.exec->command);
    cfg.exec->command = strdup("ksched-no-such-plugin");
    cfg.exec->install_hint = strdup("install it");
    c = client_for(&cfg, 0, 0, 0);
    ks_kube_response r = get(c, "GET", "/api", NULL, true);
    assert_non_null(strstr(r.error, "executable ksched-no-such-plugin not found"));
    assert_non_null(strstr(r.error, "install it"));
    ks_kube_response_free(&r);
    ks_kube_client_free(c);
    ks_kube_config_free(&cfg);
}

/* ---- TLS with a CA made here ---- */

static bool have_openssl(void) { return system("openssl version >/dev/null 2>&1") == 0; }


/* A CA, a server certificate for apiserver.test (not for 127.0.0.1) and a
 * second CA that signed nothing. */
static bool make_certs(void) {
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && ( "
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca && "
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt -days 2 -subj /CN=other-ca && "
             "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=apiserver && "
             "printf 'subjectAltName=DNS:apiserver.test\\n' > ext.cnf && "
             "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
             "-extfile ext.cnf ) >/dev/null 2>&1",
             tmpdir);
    return system(cmd) == 0;
}

static void test_tls(void **st) {
    if (!have_openssl()) {
        printf("skipped: the openssl command is not installed\n");
        skip();
    }
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        printf("skipped: libmicrohttpd was built without TLS\n");
        skip();
    }
    assert_true(make_certs());
    char *cert = tu_slurp(tmpdir, "server.crt"), *key = tu_slurp(tmpdir, "server.key");
    char *ca = tu_slurp(tmpdir, "ca.crt"), *other = tu_slurp(tmpdir, "other.crt");
    assert_non_null(cert);
    fk_stop();
    assert_true(fk_start_on(0, cert, key));
    fk_add((fk_answer){.path = "/api", .body = "{\"tls\":1}", .times = -1});
    char server[64];
    snprintf(server, sizeof(server), "https://127.0.0.1:%u", FK.port);
    char cafile[512];
    snprintf(cafile, sizeof(cafile), "%s/ca.crt", tmpdir);

    struct {
        const char *ca_data, *ca_file, *tls_name;
        bool insecure;
        long want;
    } cases[] = {
        {ca, NULL, "apiserver.test", false, 200},     /* CA data, the name the certificate has */
        {NULL, cafile, "apiserver.test", false, 200}, /* CA file */
        {other, NULL, "apiserver.test", false, 0},    /* the wrong CA */
        {ca, NULL, NULL, false, 0},                   /* 127.0.0.1 is not in the certificate */
        {other, NULL, NULL, true, 200},               /* insecure-skip-tls-verify */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        ks_kube_config cfg = {.server = strdup(server), .insecure = cases[i].insecure};
        if (cases[i].ca_data) {
            cfg.ca_data = strdup(cases[i].ca_data);
            cfg.ca_len = strlen(cases[i].ca_data);
        }
        if (cases[i].ca_file) cfg.ca_file = strdup(cases[i].ca_file);
        if (cases[i].tls_name) cfg.tls_server_name = strdup(cases[i].tls_name);
        ks_kube_client *c = client_for(&cfg, 0, 0, 0);
        ks_kube_response r = get(c, "GET", "/api", NULL, false);
        if (r.code != cases[i].want) fail_msg("case %zu: code %ld (%s)", i, r.code, r.error ? r.error : "");
        if (cases[i].want == 200) assert_string_equal(r.body, "{\"tls\":1}");
        else assert_non_null(r.error);
        ks_kube_response_free(&r);
        ks_kube_client_free(c);
        ks_kube_config_free(&cfg);
    }
    free(cert);
    free(key);
    free(ca);
    free(other);
}

static void test_retry_after_parse(void **st) {
    assert_int_equal(ks_kube_parse_retry_after(" 3\r\n", 4), 3);
    assert_int_equal(ks_kube_parse_retry_after("0", 1), 0);
    assert_int_equal(ks_kube_parse_retry_after("1.5", 3), -1);
    assert_int_equal(ks_kube_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 29), -1);
    assert_int_equal(ks_kube_parse_retry_after("", 0), -1);
    assert_null(ks_kube_status_message("not json", 8));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_agent_suffix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_basic_auth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_429_retry_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_500_then_200_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_5xx_not_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_response_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_refused_then_success, setup, teardown),
        cmocka_unit_test(test_ratelimit_tokens),
        cmocka_unit_test_setup_teardown(test_client_rate_limited, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_outlived, setup, teardown),
        cmocka_unit_test_setup_teardown(test_black_hole_is_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiet_watch_on_a_live_server_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_outliving_its_timeout_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_plugin_expiry_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tls, setup, teardown),
        cmocka_unit_test(test_retry_after_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
