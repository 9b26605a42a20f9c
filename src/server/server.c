#include "server/server.h"

#include "metrics/sched_metrics.h"
#include "server/evhttp_lazy.h"
#include "server/selfsigned.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/openssl_lazy.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Requests served at once (libmicrohttpd's connection limit before):
 * each runs on a thread of its own, so that a 30 s CPU profile does not
 * hold up a kubelet probe. One more is answered 503 at once. */
#define MAX_REQUESTS 100
/* A connection idle this long is closed (keep-alive), as before. */
#define IDLE_TIMEOUT_S 60
/* Go's http.DefaultMaxHeaderBytes; these endpoints take no bodies. */
#define MAX_HEADER_BYTES (1 << 20)
#define MAX_BODY_BYTES (1 << 20)

struct ks_server {
    const ks_evhttp_api *ev;
    const ks_openssl_api *ossl;
    SSL_CTX *ctx;
    struct event_base *base;
    struct evhttp *http;
    pthread_t loop;
    bool looping;
    int port;
    ks_health_check *checks[3]; /* healthz, livez, readyz */
    size_t nchecks[3];
    ks_auth *auth;
    ks_metrics *metrics;
    ks_server_route *routes;
    size_t nroutes;
    pthread_mutex_t mu;
    pthread_cond_t idle; /* inflight reached 0 */
    int inflight;        /* requests handed to workers, not yet replied */
    bool stopping;
    char *configz;
};

static const char *const endpoints[3] = {"healthz", "livez", "readyz"};

/* ---- health --------------------------------------------------------------- */

static bool listed(const char *name, const char *const *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], name) == 0) return true;
    return false;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int ks_health_render(const char *endpoint, const ks_health_check *checks, size_t n, bool verbose,
                     const char *const *excluded, size_t nexcluded, char **body) {
    static const ks_health_check ping = {"ping", NULL, NULL};
    if (n == 0) {
        checks = &ping;
        n = 1;
    }
    ks_strbuf out, why;
    ks_sb_init(&out);
    ks_sb_init(&why);
    size_t failed = 0;
    ks_strbuf failed_names;
    ks_sb_init(&failed_names);
    for (size_t i = 0; i < n; i++) {
        const ks_health_check *c = &checks[i];
        if (listed(c->name, excluded, nexcluded)) {
            ks_sb_printf(&out, "[+]%s excluded: ok\n", c->name);
            continue;
        }
        char *err = c->fn ? c->fn(c->arg) : NULL;
        if (err) {
            /* The reason is for the log: this endpoint is public. */
            ks_sb_printf(&out, "[-]%s failed: reason withheld\n", c->name);
            ks_sb_printf(&why, "[-]%s failed: %s\n", c->name, err);
            ks_sb_printf(&failed_names, "%s%s", failed ? "," : "", c->name);
            failed++;
            free(err);
        } else {
            ks_sb_printf(&out, "[+]%s ok\n", c->name);
        }
    }
    /* Excluded names that match no check, sorted and quoted. */
    const char **unknown = ks_xcalloc(nexcluded ? nexcluded : 1, sizeof(char *));
    size_t nu = 0;
    for (size_t i = 0; i < nexcluded; i++) {
        bool known = false;
        for (size_t k = 0; k < n && !known; k++) known = strcmp(checks[k].name, excluded[i]) == 0;
        if (!known && !listed(excluded[i], unknown, nu)) unknown[nu++] = excluded[i];
    }
    if (nu) {
        qsort(unknown, nu, sizeof(*unknown), cmp_str);
        ks_sb_puts(&out, "warn: some health checks cannot be excluded: no matches for ");
        for (size_t i = 0; i < nu; i++) ks_sb_printf(&out, "%s\"%s\"", i ? "," : "", unknown[i]);
        ks_sb_putc(&out, '\n');
    }
    free(unknown);
    int status = 200;
    if (failed) {
        ks_infof(2, "%s check failed: %s\n%s", ks_sb_str(&failed_names), endpoint, ks_sb_str(&why));
        ks_sb_printf(&out, "%s check failed\n", endpoint);
        status = 500;
    } else if (!verbose) {
        ks_sb_reset(&out);
        ks_sb_puts(&out, "ok");
    } else {
        ks_sb_printf(&out, "%s check passed\n", endpoint);
    }
    ks_sb_free(&why);
    ks_sb_free(&failed_names);
    *body = ks_sb_take(&out);
    return status;
}

/* ---- requests ----------------------------------------------------------------- */

typedef struct query {
    ks_strbuf raw;        /* "a=b&c" decoded, for messages and routes */
    const char **exclude; /* values of exclude= */
    size_t nexclude, cap;
    bool verbose;
    const char *format;
} query;

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decoding in place (and '+' as a space in a query), as Go's
 * url package: false on a malformed escape. */
static bool unescape(char *s, bool plus) {
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r == '%') {
            int hi = hexval((unsigned char)r[1]), lo = hi < 0 ? -1 : hexval((unsigned char)r[2]);
            if (hi < 0 || lo < 0) return false;
            *w++ = (char)(hi << 4 | lo);
            r += 2;
        } else {
            *w++ = plus && *r == '+' ? ' ' : *r;
        }
    }
    *w = 0;
    return true;
}

/* The query's pairs, decoded in place in qs (which the pointers keep);
 * a malformed pair is skipped, as Go's url.ParseQuery skips it. */
static void parse_query(char *qs, query *q) {
    for (char *pair = qs; pair && *pair;) {
        char *amp = strchr(pair, '&');
        if (amp) *amp = 0;
        char *eq = strchr(pair, '=');
        if (eq) *eq = 0;
        const char *key = pair, *value = eq ? eq + 1 : NULL;
        if (*key && unescape(pair, true) && (!eq || unescape(eq + 1, true))) {
            if (q->raw.len) ks_sb_putc(&q->raw, '&');
            ks_sb_puts(&q->raw, key);
            if (value) ks_sb_printf(&q->raw, "=%s", value);
            if (strcmp(key, "verbose") == 0) q->verbose = true;
            else if (strcmp(key, "format") == 0) q->format = value;
            else if (strcmp(key, "exclude") == 0 && value) {
                KS_GROW(q->exclude, q->cap, q->nexclude + 1);
                q->exclude[q->nexclude++] = value;
            }
        }
        pair = amp ? amp + 1 : NULL;
    }
}

typedef struct reply {
    int status;
    ks_strbuf body;
    const char *content_type;
    bool nosniff;
} reply;

static void reply_text(reply *r, int status, const char *text) {
    r->status = status;
    ks_sb_puts(&r->body, text);
    r->content_type = "text/plain; charset=utf-8";
    r->nosniff = true;
}

static void serve_health(ks_server *s, int which, const char *rest, const query *q, reply *r) {
    const ks_health_check *checks = s->checks[which];
    size_t n = s->nchecks[which];
    static const ks_health_check ping = {"ping", NULL, NULL};
    if (n == 0) {
        checks = &ping;
        n = 1;
    }
    if (*rest) {
        /* /readyz/<name>: that one check */
        for (size_t i = 0; i < n; i++) {
            if (strcmp(checks[i].name, rest) != 0) continue;
            char *err = checks[i].fn ? checks[i].fn(checks[i].arg) : NULL;
            if (err) {
                r->status = 500;
                ks_sb_printf(&r->body, "internal server error: %s\n", err);
                r->content_type = "text/plain; charset=utf-8";
                r->nosniff = true;
                free(err);
            } else {
                r->status = 200;
                ks_sb_puts(&r->body, "ok");
                r->content_type = "text/plain; charset=utf-8";
            }
            return;
        }
        reply_text(r, 404, "404 page not found\n");
        return;
    }
    char *body = NULL;
    r->status = ks_health_render(endpoints[which], checks, n, q->verbose, q->exclude, q->nexclude, &body);
    ks_sb_puts(&r->body, body);
    free(body);
    r->content_type = "text/plain; charset=utf-8";
    r->nosniff = true;
}

static void route(ks_server *s, const char *method, const char *url, const query *q, reply *r) {
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(endpoints[i]);
        if (url[0] == '/' && strncmp(url + 1, endpoints[i], n) == 0 && (url[1 + n] == 0 || url[1 + n] == '/')) {
            serve_health(s, i, url[1 + n] ? url + 2 + n : "", q, r);
            return;
        }
    }
    if (strcmp(url, "/metrics") == 0) {
        ks_metrics_write(s->metrics, &r->body);
        r->status = 200;
        r->content_type = KS_METRICS_CONTENT_TYPE;
        return;
    }
    if (strcmp(url, "/configz") == 0) {
        pthread_mutex_lock(&s->mu);
        ks_sb_printf(&r->body, "{\"componentconfig\":%s}", s->configz ? s->configz : "{}");
        pthread_mutex_unlock(&s->mu);
        r->status = 200;
        r->content_type = "application/json";
        r->nosniff = true;
        return;
    }
    if (strcmp(url, "/debug/plugins") == 0) {
        bool json = q->format && strcmp(q->format, "json") == 0;
        ks_plugin_timing_report(&r->body, json);
        r->status = 200;
        r->content_type = json ? "application/json" : "text/plain; charset=utf-8";
        return;
    }
    for (size_t i = 0; i < s->nroutes; i++) {
        const char *p = s->routes[i].path;
        size_t n = strlen(p);
        bool match = n && p[n - 1] == '/' ? strncmp(url, p, n) == 0 : strcmp(url, p) == 0;
        if (!match) continue;
        r->content_type = "text/plain; charset=utf-8";
        r->status = s->routes[i].fn(s->routes[i].arg, method, url, ks_sb_str(&q->raw), &r->body, &r->content_type);
        return;
    }
    reply_text(r, 404, "404 page not found\n");
}

/* One request, from the event loop to its worker and back. The worker
 * never touches req: libevent's objects belong to the loop's thread. */
typedef struct job {
    ks_server *s;
    struct evhttp_request *req;
    const char *method;
    char *target; /* the request target as sent: path[?query] */
    char *authorization, *user_agent;
    reply r;
} job;

static void free_body(const void *data, size_t len, void *arg) {
    (void)len;
    (void)arg;
    free((void *)data);
}

/* Sends r; its body's buffer goes to libevent (freed once written, not
 * copied: /metrics is 250 KB). */
static void send_reply(ks_server *s, struct evhttp_request *req, reply *r) {
    const ks_evhttp_api *ev = s->ev;
    struct evkeyvalq *h = ev->evhttp_request_get_output_headers(req);
    if (r->content_type) ev->evhttp_add_header(h, "Content-Type", r->content_type);
    if (r->nosniff) ev->evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
    ev->evhttp_add_header(h, "Cache-Control", "no-cache, private");
    /* HEAD: the length a GET would get, and no body (libevent 2.1 would
     * send one) */
    bool head = ev->evhttp_request_get_command(req) == EVHTTP_REQ_HEAD;
    if (head) {
        char len[32];
        snprintf(len, sizeof(len), "%zu", r->body.len);
        ev->evhttp_add_header(h, "Content-Length", len);
    }
    struct evbuffer *b = ev->evbuffer_new();
    if (b && r->body.len && !head) {
        size_t len = r->body.len;
        char *data = ks_sb_take(&r->body);
        if (ev->evbuffer_add_reference(b, data, len, free_body, NULL) != 0) free(data);
    }
    /* NULL reason: the status code's standard phrase. A request whose
     * connection closed meanwhile is freed here (libevent kept it). */
    ev->evhttp_send_reply(req, r->status, NULL, b);
    if (b) ev->evbuffer_free(b);
}

static void job_free(job *j) {
    free(j->target);
    free(j->authorization);
    free(j->user_agent);
    ks_sb_free(&j->r.body);
    free(j);
}

/* On the loop's thread: the worker's reply goes out. */
static void on_job_done(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    job *j = arg;
    ks_server *s = j->s;
    send_reply(s, j->req, &j->r);
    job_free(j);
    pthread_mutex_lock(&s->mu);
    if (--s->inflight == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

static void handle(ks_server *s, job *j) {
    int64_t t0 = ks_monotonic_ns();
    reply *r = &j->r;
    query q = {0};
    ks_sb_init(&q.raw);
    char *path = j->target, *qs = strchr(path, '?');
    if (qs) *qs++ = 0;
    char *hash = qs ? strchr(qs, '#') : strchr(path, '#');
    if (hash) *hash = 0;
    char *user = NULL;
    if (!unescape(path, false)) {
        reply_text(r, 400, "400 Bad Request");
        goto done;
    }
    if (qs) parse_query(qs, &q);
    bool allowed = true;
    if (s->auth) {
        ks_strbuf uri;
        ks_sb_init(&uri);
        ks_sb_puts(&uri, path);
        if (q.raw.len) ks_sb_printf(&uri, "?%s", ks_sb_str(&q.raw));
        ks_auth_result ar;
        ks_auth_check(s->auth, j->authorization, j->method, path, ks_sb_str(&uri), &ar);
        ks_sb_free(&uri);
        if (ar.status) {
            allowed = false;
            r->status = ar.status;
            ks_sb_puts(&r->body, ar.body);
            r->content_type = ar.content_type;
            r->nosniff = true;
        }
        user = ar.user;
        ar.user = NULL;
        ks_auth_result_free(&ar);
    }
    if (allowed) route(s, j->method, path, &q, r);
done:
    ks_infof(3, "\"HTTP\" verb=\"%s\" URI=\"%s%s%s\" latency=\"%.6fs\" userAgent=\"%s\" user=\"%s\" resp=%d",
             j->method, path, q.raw.len ? "?" : "", ks_sb_str(&q.raw), (double)(ks_monotonic_ns() - t0) / 1e9,
             j->user_agent ? j->user_agent : "", user ? user : "", r->status);
    free(user);
    ks_sb_free(&q.raw);
    free(q.exclude);
}

static void *worker(void *arg) {
    pthread_setname_np(pthread_self(), "secure-serve"); /* top -H, pprof's thread label */
    job *j = arg;
    handle(j->s, j);
    /* event_base_once with no timeout: run on the loop's next turn (the
     * base locks; libevent wakes the loop). */
    if (j->s->ev->event_base_once(j->s->base, -1, EV_TIMEOUT, on_job_done, j, NULL) != 0)
        ks_errorf("secure serving: cannot hand a reply to the event loop");
    return NULL;
}

static const char *method_name(enum evhttp_cmd_type c) {
    switch (c) {
    case EVHTTP_REQ_GET: return "GET";
    case EVHTTP_REQ_POST: return "POST";
    case EVHTTP_REQ_HEAD: return "HEAD";
    case EVHTTP_REQ_PUT: return "PUT";
    case EVHTTP_REQ_DELETE: return "DELETE";
    case EVHTTP_REQ_OPTIONS: return "OPTIONS";
    case EVHTTP_REQ_PATCH: return "PATCH";
    default: return "GET";
    }
}

static char *dup_or_null(const char *v) { return v ? ks_xstrdup(v) : NULL; }

/* On the loop's thread: a request, headers and body read. */
static void on_request(struct evhttp_request *req, void *arg) {
    ks_server *s = arg;
    const ks_evhttp_api *ev = s->ev;
    pthread_mutex_lock(&s->mu);
    bool busy = s->stopping || s->inflight >= MAX_REQUESTS;
    if (!busy) s->inflight++;
    pthread_mutex_unlock(&s->mu);
    if (busy) {
        reply r = {0};
        ks_sb_init(&r.body);
        reply_text(&r, 503, "too many requests in progress\n");
        send_reply(s, req, &r);
        ks_sb_free(&r.body);
        return;
    }
    job *j = ks_xcalloc(1, sizeof(*j));
    j->s = s;
    j->req = req;
    j->method = method_name(ev->evhttp_request_get_command(req));
    j->target = ks_xstrdup(ev->evhttp_request_get_uri(req));
    struct evkeyvalq *in = ev->evhttp_request_get_input_headers(req);
    j->authorization = dup_or_null(ev->evhttp_find_header(in, "Authorization"));
    j->user_agent = dup_or_null(ev->evhttp_find_header(in, "User-Agent"));
    ks_sb_init(&j->r.body);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, worker, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        reply_text(&j->r, 503, "cannot start a thread for the request\n");
        send_reply(s, req, &j->r);
        job_free(j);
        pthread_mutex_lock(&s->mu);
        if (--s->inflight == 0) pthread_cond_broadcast(&s->idle);
        pthread_mutex_unlock(&s->mu);
    }
}

/* A new connection: TLS on the accepted socket. */
static struct bufferevent *new_connection(struct event_base *base, void *arg) {
    ks_server *s = arg;
    SSL *ssl = s->ossl->SSL_new(s->ctx);
    /* NULL here would make libevent serve the connection in plain text */
    if (!ssl) ks_oom();
    struct bufferevent *b =
        s->ev->bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (!b) ks_oom();
    /* clients that close without close_notify are not errors */
    s->ev->bufferevent_openssl_set_allow_dirty_shutdown(b, 1);
    return b;
}

static void on_event_log(int severity, const char *msg) {
    if (severity >= EVENT_LOG_WARN) ks_infof(2, "\"secure serving\" msg=\"%s\"", msg);
}

/* ALPN: HTTP/1.1 when the client offers it (Go's clients offer h2 too
 * and fall back). */
static int on_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                   unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    for (unsigned i = 0; i < inlen; i += 1u + in[i]) {
        if (in[i] == 8 && i + 9 <= inlen && memcmp(in + i + 1, "http/1.1", 8) == 0) {
            *out = in + i + 1;
            *outlen = 8;
            return SSL_TLSEXT_ERR_OK;
        }
    }
    return SSL_TLSEXT_ERR_NOACK;
}

static void *loop_main(void *arg) {
    pthread_setname_np(pthread_self(), "secure-serve"); /* top -H, pprof's thread label */
    ks_server *s = arg;
    s->ev->event_base_dispatch(s->base);
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------ */

static char *read_file(const char *path, char **err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        char buf[600];
        snprintf(buf, sizeof(buf), "open %s: %s", path, strerror(errno));
        *err = ks_xstrdup(buf);
        return NULL;
    }
    ks_strbuf b;
    ks_sb_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) ks_sb_putn(&b, chunk, n);
    fclose(f);
    return ks_sb_take(&b);
}

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...) {
    if (!err) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    *err = ks_xstrdup(buf);
}

/* The TLS context: TLS 1.2 and 1.3 (kube-scheduler's default minimum),
 * the certificate chain and key from PEM text. */
static SSL_CTX *tls_context(const ks_openssl_api *o, const char *cert, const char *key, char **err) {
    char why[512];
    SSL_CTX *ctx = o->SSL_CTX_new(o->TLS_server_method());
    if (!ctx) {
        set_err(err, "secure serving: %s", ks_openssl_errors(o, why, sizeof(why)));
        return NULL;
    }
    o->SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    o->SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    o->SSL_CTX_set_alpn_select_cb(ctx, on_alpn, NULL);
    BIO *cb = o->BIO_new_mem_buf(cert, -1), *kb = o->BIO_new_mem_buf(key, -1);
    X509 *x = cb ? o->PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    bool ok = x && o->SSL_CTX_use_certificate(ctx, x) == 1;
    if (x) o->X509_free(x);
    /* the rest of the file: the chain, sent after the certificate */
    while (ok && (x = o->PEM_read_bio_X509(cb, NULL, NULL, NULL)) != NULL)
        if (o->SSL_CTX_ctrl(ctx, SSL_CTRL_EXTRA_CHAIN_CERT, 0, x) != 1) {
            o->X509_free(x);
            ok = false;
        }
    if (ok) o->ERR_clear_error(); /* the end of the chain is an error to PEM_read */
    EVP_PKEY *k = ok && kb ? o->PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    ok = k && o->SSL_CTX_use_PrivateKey(ctx, k) == 1 && o->SSL_CTX_check_private_key(ctx) == 1;
    o->EVP_PKEY_free(k);
    if (cb) o->BIO_free(cb);
    if (kb) o->BIO_free(kb);
    if (!ok) {
        set_err(err, "failed to load the serving certificate and key: %s", ks_openssl_errors(o, why, sizeof(why)));
        o->SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* A listening socket on sa (dual stack for "::"), or -1 with errno. */
static int listen_on(const struct sockaddr *sa, socklen_t len, bool dual) {
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (dual) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (bind(fd, sa, len) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void free_server(ks_server *s) {
    if (s->http) s->ev->evhttp_free(s->http);
    if (s->base) s->ev->event_base_free(s->base);
    if (s->ctx) s->ossl->SSL_CTX_free(s->ctx);
    for (int i = 0; i < 3; i++) free(s->checks[i]);
    free(s->routes);
    free(s->configz);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

ks_server *ks_server_start(const ks_server_options *o, char **err) {
    if (err) *err = NULL;
    if (o->port == 0) return NULL;
    if (o->port < -1 || o->port > 65535) {
        set_err(err, "--secure-port %d must be between 1 and 65535, inclusive. It cannot be turned off with 0", o->port);
        return NULL;
    }
    const char *why = NULL;
    const ks_openssl_api *ossl = ks_openssl(&why);
    const ks_evhttp_api *ev = ossl ? ks_evhttp(&why) : NULL;
    if (!ev) {
        set_err(err, "secure serving: %s", why);
        return NULL;
    }
    const char *addr = o->bind_address && *o->bind_address ? o->bind_address : "0.0.0.0";
    struct sockaddr_in a4 = {0};
    struct sockaddr_in6 a6 = {0};
    bool v6 = false, any4 = false;
    uint16_t port = o->port > 0 ? (uint16_t)o->port : 0;
    if (inet_pton(AF_INET, addr, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons(port);
        any4 = a4.sin_addr.s_addr == htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET6, addr, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons(port);
        v6 = true;
    } else {
        set_err(err, "--bind-address %s: not an IP address", addr);
        return NULL;
    }

    char *cert = NULL, *key = NULL;
    if (o->cert_file || o->key_file) {
        if (!o->cert_file || !o->key_file) {
            set_err(err, "--tls-cert-file and --tls-private-key-file must be given together");
            return NULL;
        }
        cert = read_file(o->cert_file, err);
        if (cert) key = read_file(o->key_file, err);
        if (!cert || !key) {
            free(cert);
            return NULL;
        }
    } else {
        /* kube-scheduler's: host "localhost", IP 127.0.0.1, and the bind
         * address (or DNS "localhost" when it is unspecified). */
        bool unspecified = any4 || (v6 && IN6_IS_ADDR_UNSPECIFIED(&a6.sin6_addr));
        const char *ips[2] = {"127.0.0.1", addr};
        const char *dns[1] = {"localhost"};
        if (ks_selfsigned_make("localhost", ips, unspecified ? 1 : 2, dns, unspecified ? 1 : 0, &cert, &key, err) != 0)
            return NULL;
        ks_infof(2, "Generated self-signed cert in-memory");
    }
    SSL_CTX *ctx = tls_context(ossl, cert, key, err);
    if (key) memset(key, 0, strlen(key));
    free(cert);
    free(key);
    if (!ctx) return NULL;

    ks_server *s = ks_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    s->ev = ev;
    s->ossl = ossl;
    s->ctx = ctx;
    const ks_health_check *cs[3] = {o->healthz, o->livez, o->readyz};
    size_t ns[3] = {o->nhealthz, o->nlivez, o->nreadyz};
    for (int i = 0; i < 3; i++) {
        s->checks[i] = ks_xcalloc(ns[i] ? ns[i] : 1, sizeof(ks_health_check));
        if (ns[i]) memcpy(s->checks[i], cs[i], ns[i] * sizeof(ks_health_check));
        s->nchecks[i] = ns[i];
    }
    s->auth = o->auth;
    s->metrics = o->metrics ? o->metrics : ks_sm()->reg;
    s->routes = ks_xcalloc(o->nroutes ? o->nroutes : 1, sizeof(ks_server_route));
    if (o->nroutes) memcpy(s->routes, o->routes, o->nroutes * sizeof(ks_server_route));
    s->nroutes = o->nroutes;

    int fd;
    if (v6) {
        fd = listen_on((struct sockaddr *)&a6, sizeof(a6), false);
    } else if (any4) {
        /* All addresses, IPv6 included when the host has it (as Go listens
         * for 0.0.0.0); IPv4 alone otherwise. */
        struct sockaddr_in6 any6 = {0};
        any6.sin6_family = AF_INET6;
        any6.sin6_addr = in6addr_any;
        any6.sin6_port = htons(port);
        fd = listen_on((struct sockaddr *)&any6, sizeof(any6), true);
        if (fd >= 0) {
            addr = "::";
            v6 = true;
        } else if (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL) {
            fd = listen_on((struct sockaddr *)&a4, sizeof(a4), false);
        }
    } else {
        fd = listen_on((struct sockaddr *)&a4, sizeof(a4), false);
    }
    if (fd < 0) {
        char e[128];
        snprintf(e, sizeof(e), "%s", strerror(errno));
        e[0] = (char)tolower((unsigned char)e[0]); /* as Go words it */
        set_err(err, "failed to listen on %s%s%s:%u: listen tcp %s%s%s:%u: bind: %s", v6 ? "[" : "", addr,
                v6 ? "]" : "", port, v6 ? "[" : "", addr, v6 ? "]" : "", port, e);
        free_server(s);
        return NULL;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(fd, (struct sockaddr *)&bound, &blen);
    s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);

    ev->event_set_log_callback(on_event_log);
    s->base = ev->event_base_new();
    s->http = s->base ? ev->evhttp_new(s->base) : NULL;
    if (!s->http || !ev->evhttp_accept_socket_with_handle(s->http, fd)) {
        close(fd);
        set_err(err, "secure serving: cannot start libevent's HTTP server");
        free_server(s);
        return NULL;
    }
    ev->evhttp_set_bevcb(s->http, new_connection, s);
    ev->evhttp_set_gencb(s->http, on_request, s);
    ev->evhttp_set_timeout(s->http, o->idle_timeout_s > 0 ? o->idle_timeout_s : IDLE_TIMEOUT_S);
    ev->evhttp_set_max_headers_size(s->http, MAX_HEADER_BYTES);
    ev->evhttp_set_max_body_size(s->http, MAX_BODY_BYTES);
    ev->evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                                                EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
    if (pthread_create(&s->loop, NULL, loop_main, s) != 0) {
        set_err(err, "secure serving: cannot start its thread");
        free_server(s);
        return NULL;
    }
    s->looping = true;
    ks_infof(0, "Serving securely on %s%s%s:%d", v6 ? "[" : "", addr, v6 ? "]" : "", s->port);
    return s;
}

void ks_server_stop(ks_server *s) {
    if (!s) return;
    /* Requests in progress finish and are answered; new ones get 503. */
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    bool busy = s->inflight > 0;
    while (s->inflight > 0) pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
    /* A reply just handed over gets a moment to leave. */
    struct timeval drain = {0, busy ? 100000 : 0};
    s->ev->event_base_loopexit(s->base, &drain);
    if (s->looping) pthread_join(s->loop, NULL);
    free_server(s);
}

int ks_server_port(const ks_server *s) { return s ? s->port : 0; }

void ks_server_set_configz(ks_server *s, const char *json) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    free(s->configz);
    s->configz = json ? ks_xstrdup(json) : NULL;
    pthread_mutex_unlock(&s->mu);
}
