/* The API server client's libcurl transport (client_impl.h): a curl
 * multi handle on the client's I/O thread, connections reused, HTTP/2
 * multiplexed where TLS negotiates it. Used for what the h2 transport
 * does not do: http:// servers, proxies, servers that do not offer h2,
 * and KSCHED_KUBE_TRANSPORT=curl. libcurl is loaded on first use. */
#include "kube/client_impl.h"

#include "util/clock.h"
#include "util/curl_lazy.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Easy handles kept for reuse: as many as requests are usually in flight
 * at once (the dispatcher's and binders' 16 each, the watches). */
#define KS_KUBE_SPARE_HANDLES 64

typedef struct curl_tp {
    const ks_curl_api *C;
    CURLM *multi;
    char *url;                     /* the base URL, its host the tls-server-name when set */
    struct curl_slist *connect_to; /* tls-server-name: where that name really connects */
    /* easy handles of finished transfers, reset and used again
     * (curl_easy_init + cleanup of a handle per request was a tenth of
     * the thread's time) */
    CURL *spare[KS_KUBE_SPARE_HANDLES];
    int nspare;
    /* Dead connections (client-go's HTTP/2 health check, with a request
     * for its PING): when transfers are in flight and no byte has come in
     * for read_idle_ns, a probe goes out on the same connection;
     * unanswered for ping_timeout_ns, the connection is closed and its
     * transfers end as connection errors. */
    int64_t last_rx_ns;
    CURL *probe;
    int64_t probe_ns;
} curl_tp;

/* One attempt's handle. */
typedef struct curl_x {
    CURL *easy;
    struct curl_slist *hdrs;
    ks_kube_io *io;
    char errbuf[CURL_ERROR_SIZE];
} curl_x;

/* ---- setup ------------------------------------------------------------------ */

/* Split the server URL so that a tls-server-name can stand for the host
 * (the name curl verifies and sends as SNI) while CONNECT_TO sends the
 * connection to the real host. */
static bool setup_url(ks_kube_io *io, curl_tp *t, char **err) {
    const char *s = io->cfg.server;
    const char *sep = strstr(s, "://");
    if (!sep) return ks_set_error(err, "server %s: not a URL", s);
    const char *host = sep + 3;
    const char *end = host + strcspn(host, "/");
    if (end == host) return ks_set_error(err, "server %s: no host", s);
    const char *port = NULL, *hend = end;
    if (*host == '[') {
        const char *rb = memchr(host, ']', (size_t)(end - host));
        if (!rb) return ks_set_error(err, "server %s: bad IPv6 address", s);
        hend = rb + 1;
        if (hend < end && *hend == ':') port = hend + 1;
    } else {
        const char *colon = memchr(host, ':', (size_t)(end - host));
        if (colon) hend = colon, port = colon + 1;
    }
    bool https = strncmp(s, "https", 5) == 0;
    if (io->cfg.tls_server_name && https) {
        char *portstr = port ? ks_xstrndup(port, (size_t)(end - port)) : ks_xstrdup("443");
        char *hoststr = ks_xstrndup(host, (size_t)(hend - host));
        t->url = ks_xasprintf("%.*s%s:%s%s", (int)(host - s), s, io->cfg.tls_server_name, portstr, end);
        char *ct = ks_xasprintf("%s:%s:%s:%s", io->cfg.tls_server_name, portstr, hoststr, portstr);
        t->connect_to = t->C->slist_append(NULL, ct);
        free(ct);
        free(portstr);
        free(hoststr);
    } else {
        t->url = ks_xstrdup(s);
    }
    size_t n = strlen(t->url);
    while (n && t->url[n - 1] == '/') t->url[--n] = '\0';
    return true;
}

static bool curl_init(ks_kube_io *io, char **err) {
    const char *why = NULL;
    const ks_curl_api *C = ks_curl(&why);
    if (!C) return ks_set_error(err, "API server client: %s", why);
    curl_tp *t = ks_xcalloc(1, sizeof(*t));
    t->C = C;
    if (!setup_url(io, t, err)) {
        free(t);
        return false;
    }
    t->multi = C->multi_init();
    if (!t->multi) {
        C->slist_free_all(t->connect_to);
        free(t->url);
        free(t);
        return ks_set_error(err, "API server client: curl_multi_init failed");
    }
    C->multi_setopt(t->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    t->last_rx_ns = ks_monotonic_ns();
    io->tp = t;
    return true;
}

static void release(curl_tp *t, curl_x *cx) {
    t->C->multi_remove_handle(t->multi, cx->easy);
    if (t->nspare < KS_KUBE_SPARE_HANDLES) t->spare[t->nspare++] = cx->easy;
    else t->C->easy_cleanup(cx->easy);
    t->C->slist_free_all(cx->hdrs);
    free(cx);
}

static void curl_destroy(ks_kube_io *io) {
    curl_tp *t = io->tp;
    if (!t) return;
    if (t->probe) {
        t->C->multi_remove_handle(t->multi, t->probe);
        t->C->easy_cleanup(t->probe);
    }
    while (t->nspare) t->C->easy_cleanup(t->spare[--t->nspare]);
    t->C->multi_cleanup(t->multi);
    t->C->slist_free_all(t->connect_to);
    free(t->url);
    free(t);
    io->tp = NULL;
}

/* ---- callbacks ---------------------------------------------------------------- */

static size_t on_header(char *buf, size_t size, size_t n, void *arg) {
    ks_kube_xfer *x = arg;
    curl_x *cx = x->t;
    size_t len = size * n;
    ((curl_tp *)cx->io->tp)->last_rx_ns = ks_monotonic_ns();
    if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
        /* a new answer (after 100 Continue, ...) */
        x->retry_after = -1;
        const char *sp = memchr(buf, ' ', len);
        x->code = sp ? strtol(sp + 1, NULL, 10) : 0;
        return len;
    }
    const char *colon = memchr(buf, ':', len);
    if (colon) ks_kube_xfer_header(x, buf, (size_t)(colon - buf), colon + 1, len - (size_t)(colon + 1 - buf));
    return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg) {
    ks_kube_xfer *x = arg;
    curl_x *cx = x->t;
    ((curl_tp *)cx->io->tp)->last_rx_ns = ks_monotonic_ns();
    return ks_kube_xfer_body(x, buf, size * n) ? size * n : 0;
}

static size_t discard(char *buf, size_t size, size_t n, void *arg) {
    curl_tp *t = arg;
    t->last_rx_ns = ks_monotonic_ns();
    return size * n;
}

/* Not copied: the configuration's PEM lives as long as the client, an exec
 * plugin's as long as the transfer's credentials reference. */
static void set_blob(const ks_curl_api *C, CURL *h, CURLoption opt, const char *data, size_t len) {
    struct curl_blob b = {.data = (void *)data, .len = len, .flags = CURL_BLOB_NOCOPY};
    C->easy_setopt(h, opt, &b);
}

/* The options every handle gets: connection, TLS; the User-Agent and
 * compression of the client that asks (cl). */
static void common_opts(ks_kube_io *io, const ks_kube_client *cl, curl_tp *t, CURL *h, const ks_kube_creds *cr) {
    const ks_curl_api *C = t->C;
    C->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    C->easy_setopt(h, CURLOPT_USERAGENT, cl->user_agent);
    /* libcurl's upload buffer is 64 KB by default, allocated per handle
     * that sends a body and kept with a spare handle; our bodies are a
     * few KB: the minimum, 16 KB (peak heap -4.4 MB on SchedulingBasic
     * through the API server, heaptrack) */
    C->easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
    /* HTTP/2 where TLS negotiates it; wait for a connection that can
     * multiplex rather than open another one */
    C->easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    C->easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    C->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
    /* dead peers on idle watches: TCP keepalive as Go's dialer (30 s) */
    C->easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    C->easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    C->easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 30L);
    if (!io->cfg.disable_compression && !cl->no_gzip) C->easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    if (t->connect_to) C->easy_setopt(h, CURLOPT_CONNECT_TO, t->connect_to);
    if (io->cfg.proxy_url) C->easy_setopt(h, CURLOPT_PROXY, io->cfg.proxy_url);
    C->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, io->cfg.insecure ? 0L : 1L);
    C->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, io->cfg.insecure ? 0L : 2L);
    if (io->cfg.ca_data) set_blob(C, h, CURLOPT_CAINFO_BLOB, io->cfg.ca_data, io->cfg.ca_len);
    else if (io->cfg.ca_file) C->easy_setopt(h, CURLOPT_CAINFO, io->cfg.ca_file);
    const char *cert = io->cfg.cert_data, *key = io->cfg.key_data;
    size_t cert_len = io->cfg.cert_len, key_len = io->cfg.key_len;
    if (cr && cr->cert) {
        cert = cr->cert, cert_len = cr->cert_len;
        key = cr->key, key_len = cr->key_len;
    }
    if (cert) {
        set_blob(C, h, CURLOPT_SSLCERT_BLOB, cert, cert_len);
        C->easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        set_blob(C, h, CURLOPT_SSLKEY_BLOB, key, key_len);
        C->easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (io->cfg.cert_file) {
        /* files are read at each handshake: rotated certificates are picked up */
        C->easy_setopt(h, CURLOPT_SSLCERT, io->cfg.cert_file);
        C->easy_setopt(h, CURLOPT_SSLKEY, io->cfg.key_file);
    }
}

static CURL *handle(curl_tp *t) {
    if (t->nspare) {
        CURL *h = t->spare[--t->nspare];
        t->C->easy_reset(h);
        return h;
    }
    return t->C->easy_init();
}

static bool curl_start(ks_kube_io *io, ks_kube_xfer *x) {
    curl_tp *t = io->tp;
    const ks_kube_client *c = x->c;
    const ks_curl_api *C = t->C;
    CURL *h = handle(t);
    if (!h) return false;
    curl_x *cx = ks_xcalloc(1, sizeof(*cx));
    cx->easy = h;
    cx->io = io;
    x->t = cx;
    char *url = ks_xasprintf("%s%s", t->url, x->path);
    C->easy_setopt(h, CURLOPT_URL, url);
    free(url);
    C->easy_setopt(h, CURLOPT_PRIVATE, x);
    C->easy_setopt(h, CURLOPT_ERRORBUFFER, cx->errbuf);
    C->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    C->easy_setopt(h, CURLOPT_HEADERDATA, x);
    C->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    C->easy_setopt(h, CURLOPT_WRITEDATA, x);
    common_opts(io, c, t, h, x->cr);
    if (c->timeout_ms > 0 && !x->stream) C->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
    if (x->deadline_ms > 0) C->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)x->deadline_ms);
    struct curl_slist *hd = NULL;
    hd = C->slist_append(hd, x->negotiate ? c->accept : "Accept: application/json");
    hd = C->slist_append(hd, "Expect:"); /* no 100-continue round trip for bodies */
    if (x->cr && x->cr->auth) hd = C->slist_append(hd, x->cr->auth);
    if (x->body) {
        char ct[256];
        snprintf(ct, sizeof(ct), "Content-Type: %s", x->content_type ? x->content_type : "application/json");
        hd = C->slist_append(hd, ct);
    }
    cx->hdrs = hd;
    C->easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    if (strcmp(x->method, "GET") == 0) {
        C->easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        if (strcmp(x->method, "POST") != 0) C->easy_setopt(h, CURLOPT_CUSTOMREQUEST, x->method);
        if (x->body || strcmp(x->method, "POST") == 0) {
            C->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
            C->easy_setopt(h, CURLOPT_POSTFIELDS, x->body ? x->body : "");
        }
    }
    if (C->multi_add_handle(t->multi, h) != CURLM_OK) {
        C->easy_cleanup(h);
        C->slist_free_all(cx->hdrs);
        free(cx);
        x->t = NULL;
        return false;
    }
    return true;
}

static void curl_stop(ks_kube_io *io, ks_kube_xfer *x) {
    if (!x->t) return;
    release(io->tp, x->t);
    x->t = NULL;
}

static void finished(ks_kube_io *io, ks_kube_xfer *x, CURLcode rc) {
    curl_tp *t = io->tp;
    curl_x *cx = x->t;
    if (rc == CURLE_OK) t->C->easy_getinfo(cx->easy, CURLINFO_RESPONSE_CODE, &x->code);
    char *error = rc == CURLE_OK ? NULL : ks_xstrdup(cx->errbuf[0] ? cx->errbuf : t->C->easy_strerror(rc));
    release(t, cx);
    x->t = NULL;
    ks_kube_xfer_ended(io, x, error);
    free(error);
}

/* ---- dead connections ------------------------------------------------------ */

static void probe_end(curl_tp *t, CURLcode rc) {
    if (rc != CURLE_OK && rc != CURLE_OPERATION_TIMEDOUT)
        ks_infof(2, "probe of the API server connection failed: %s", t->C->easy_strerror(rc));
    t->C->multi_remove_handle(t->multi, t->probe);
    if (t->nspare < KS_KUBE_SPARE_HANDLES) t->spare[t->nspare++] = t->probe;
    else t->C->easy_cleanup(t->probe);
    t->probe = NULL;
}

/* The connection stopped answering: every transfer on it ends as a
 * connection error (retried when idempotent; watches are opened again),
 * and none may leave it in the pool for the retries to find: the last
 * one removed closes it. */
static void connection_dead(ks_kube_io *io, int64_t silent_ns) {
    curl_tp *t = io->tp;
    int n = 0;
    for (ks_kube_xfer *x = io->active; x; x = x->next) n++;
    ks_errorf("\"No answer from the API server; closing the connection\" silentSeconds=%.1f probeTimeoutSeconds=%.1f requests=%d",
              (double)silent_ns / 1e9, (double)io->ping_timeout_ns / 1e9, n);
    /* counted before the requests end: their callers may read it then */
    atomic_fetch_add(&io->dead_connections, 1);
    for (ks_kube_xfer *x = io->active; x; x = x->next) t->C->easy_setopt(((curl_x *)x->t)->easy, CURLOPT_FORBID_REUSE, 1L);
    if (t->probe) {
        t->C->easy_setopt(t->probe, CURLOPT_FORBID_REUSE, 1L);
        probe_end(t, CURLE_OK);
    }
    char msg[128];
    snprintf(msg, sizeof(msg), "connection closed: no answer from the server for %lld s",
             (long long)(silent_ns / KS_NS_PER_SEC));
    while (io->active) {
        ks_kube_xfer *x = io->active;
        release(t, x->t);
        x->t = NULL;
        ks_kube_xfer_ended(io, x, msg); /* takes it off io->active */
    }
    t->last_rx_ns = ks_monotonic_ns();
}

static void check_alive(ks_kube_io *io) {
    curl_tp *t = io->tp;
    if (io->read_idle_ns <= 0) return;
    int64_t now = ks_monotonic_ns();
    if (!io->active) {
        /* nothing to lose: the silence counts from the next request */
        t->last_rx_ns = now;
        return;
    }
    if (t->probe) {
        if (now - t->probe_ns >= io->ping_timeout_ns) connection_dead(io, now - t->last_rx_ns);
        return;
    }
    if (now - t->last_rx_ns < io->read_idle_ns) return;
    /* The PING: a small GET multiplexed on the same HTTP/2 connection,
     * without credentials or a rate-limit token (any answer will do). */
    CURL *h = handle(t);
    if (!h) return;
    char *url = ks_xasprintf("%s/version", t->url);
    t->C->easy_setopt(h, CURLOPT_URL, url);
    free(url);
    t->C->easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    t->C->easy_setopt(h, CURLOPT_WRITEDATA, t);
    common_opts(io, io->active->c, t, h, NULL); /* as the oldest request's client */
    t->C->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(io->ping_timeout_ns / KS_NS_PER_MS + 1000));
    if (t->C->multi_add_handle(t->multi, h) != CURLM_OK) {
        t->C->easy_cleanup(h);
        return;
    }
    t->probe = h;
    t->probe_ns = now;
    ks_infof(4, "no byte from the API server for %lld ms: probing the connection",
             (long long)((now - t->last_rx_ns) / KS_NS_PER_MS));
}

/* ---- the loop's step ---------------------------------------------------------- */

static void curl_step(ks_kube_io *io, int64_t until_ns) {
    curl_tp *t = io->tp;
    const ks_curl_api *C = t->C;
    int running = 0;
    C->multi_perform(t->multi, &running);
    CURLMsg *m;
    int left;
    while ((m = C->multi_info_read(t->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        if (m->easy_handle == t->probe) {
            probe_end(t, m->data.result);
            continue;
        }
        ks_kube_xfer *x = NULL;
        C->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        finished(io, x, m->data.result);
    }
    check_alive(io);
    if (io->read_idle_ns > 0 && io->active) {
        int64_t h = t->probe ? t->probe_ns + io->ping_timeout_ns : t->last_rx_ns + io->read_idle_ns;
        if (h < until_ns) until_ns = h;
    }
    /* a retry queued just now may be due before until_ns */
    for (ks_kube_xfer *x = io->waiting; x; x = x->next)
        if (x->due_ns < until_ns) until_ns = x->due_ns;
    int timeout = 1000;
    if (until_ns != INT64_MAX) {
        int64_t d = (until_ns - ks_monotonic_ns()) / KS_NS_PER_MS + 1;
        timeout = d < 0 ? 0 : d < timeout ? (int)d : timeout;
    }
    struct curl_waitfd w = {.fd = io->wake_fd, .events = CURL_WAIT_POLLIN};
    C->multi_poll(t->multi, &w, 1, timeout, NULL);
    if (w.revents) ks_kube_io_woken(io);
}

static void curl_flow(ks_kube_io *io) {
    /* libcurl 7.88 cannot hold one HTTP/2 stream back without stalling
     * its connection: paced streams are not paced here */
    for (ks_kube_xfer *x = io->active; x; x = x->next)
        if (x->stream) atomic_store(&x->stream->consumed, 0);
}

const ks_kube_transport ks_kube_curl_transport = {
    .name = "libcurl",
    .init = curl_init,
    .destroy = curl_destroy,
    .start = curl_start,
    .stop = curl_stop,
    .step = curl_step,
    .flow = curl_flow,
};
