/* The API server client's HTTP/2 transport (client_impl.h): nghttp2 over
 * one OpenSSL connection, all requests multiplexed on it, driven from the
 * client's I/O thread with poll(2).
 *
 * Why not libcurl: per request it parsed the URL, matched its connection
 * cache, wrote HTTP/1 text that its nghttp2 glue parsed back into HTTP/2,
 * and polled with a zero timeout once per transfer per pass: ~100 µs of
 * CPU per binding, Event or watch event (docs/performance.md, "fourth
 * pass"). Here a request is one nghttp2_submit_request, and all frames
 * made in one pass go out in one TLS write.
 *
 * Flow control: the connection's window is given back as bytes arrive;
 * a stream's when its consumer has taken them (at once for requests and
 * unpaced streams; ks_kube_stream_consumed for paced ones), so a list
 * read slower than it arrives holds the API server back instead of
 * growing a buffer here.
 *
 * Connections: one current connection; a GOAWAY, or a request with other
 * client credentials (an exec plugin's new certificate), retires it: its
 * streams finish there, new ones go to a new connection. Streams the
 * server refused unprocessed (REFUSED_STREAM, or above a GOAWAY's last
 * stream) are sent again on the next connection. Requests beyond the
 * server's SETTINGS_MAX_CONCURRENT_STREAMS wait in a queue. A connection
 * that fails ends its requests with a transport error (the policy retries
 * or ends them; watches end, the reflector watches again).
 *
 * Dead connections as client-go's HTTP/2 health check: no frame for
 * read_idle_ns: a PING; no answer within ping_timeout_ns: closed.
 *
 * Host names are resolved on a thread of their own (resolve_*), so that a
 * slow DNS holds up only the connection that waits for it. */
#include "kube/client_impl.h"

#include "kube/tls_client.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/nghttp2_lazy.h"
#include "util/openssl_lazy.h"
#include "util/xalloc.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The connection's receive window: its bytes are given back as they come,
 * so it only needs to cover a round trip of every stream at once. */
#define H2_CONN_WINDOW (16 << 20)
/* A request refused unprocessed is sent again at most this many times. */
#define H2_MAX_RESEND 5
#define H2_CONNECT_TIMEOUT_NS (30 * KS_NS_PER_SEC)

enum { C_CONNECTING, C_HANDSHAKE, C_OPEN, C_DEAD, C_RESOLVING };

typedef struct h2_tp h2_tp;
typedef struct h2_resolve h2_resolve;

typedef struct h2conn {
    struct h2conn *next;
    h2_tp *t;
    int state;
    bool opened;             /* it was open once */
    int fd;
    SSL *ssl;
    nghttp2_session *ng;
    char *cert;              /* the exec plugin's certificate it presents, or NULL */
    bool retiring;           /* no new streams */
    int nstreams;            /* submitted, not closed */
    struct addrinfo *ai;     /* the server's address when it is one (no lookup) */
    h2_resolve *res;         /* the lookup of its name (a reference), until open */
    struct addrinfo *ai_next; /* the next address to try (in ai or res's) */
    int64_t deadline_ns;     /* to be open by */
    bool want_write;         /* SSL needs POLLOUT */
    ks_strbuf out;           /* frames not written yet */
    size_t out_off, out_try; /* out_try: the length an SSL_write must be retried with */
    int64_t last_rx_ns, ping_ns;
    char *error;             /* why it is dead */
} h2conn;

/* An attempt (x->t). */
typedef struct h2s {
    struct h2s *next_pending;
    ks_kube_xfer *x;
    h2conn *cn;              /* NULL while pending */
    int32_t id;
    size_t body_off;
    int resends;
    bool pending;
} h2s;

struct h2_tp {
    ks_kube_io *io;
    const ks_nghttp2_api *N;
    const ks_openssl_api *O;
    ks_tls_client tls;
    char *host, *port;       /* where to connect (host without brackets) */
    char *authority;         /* the URL's host[:port] */
    char *prefix;            /* the URL's path, "" or "/prefix" */
    h2conn *conns;           /* the first one not retiring is the current one */
    h2s *pending, **pending_tail;
    h2_resolve *res;         /* the last lookup started (a reference) */
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
};

/* ---- name resolution, off the I/O thread ---------------------------------------- */

/* getaddrinfo blocks for as long as the system's resolver waits (seconds
 * per name server and attempt) and cannot be cancelled: it runs on a
 * detached thread, which wakes the I/O thread when it is done. Connections
 * wait for it in C_RESOLVING, within their 30 s to be open. One lookup
 * runs at a time per client: a connection made while one runs (say, after
 * the last one timed out) waits for the same one, so a DNS that never
 * answers costs one thread, not one per attempt. A client freed meanwhile
 * lets go of it; the thread frees it when getaddrinfo returns. */
struct h2_resolve {
    pthread_mutex_t mu;      /* guards all but host and port */
    int refs;                /* the thread, the transport, each connection waiting */
    bool done;
    int wake_fd;             /* the client's; -1 once the transport let go */
    char *host, *port;
    int rc;                  /* getaddrinfo's */
    struct addrinfo *ai;
};

int (*ks_kube_getaddrinfo)(const char *host, const char *port, const struct addrinfo *hints,
                           struct addrinfo **res) = getaddrinfo;

static atomic_int resolving;

int ks_kube_h2_resolving(void) { return atomic_load(&resolving); }

static void resolve_unref(h2_resolve *r) {
    pthread_mutex_lock(&r->mu);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (!last) return;
    if (r->ai) freeaddrinfo(r->ai);
    pthread_mutex_destroy(&r->mu);
    free(r->host);
    free(r->port);
    free(r);
}

static void resolve_run(h2_resolve *r) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    int rc = ks_kube_getaddrinfo(r->host, r->port, &hints, &ai);
    pthread_mutex_lock(&r->mu);
    r->rc = rc;
    r->ai = rc == 0 ? ai : NULL;
    r->done = true;
    uint64_t one = 1;
    if (r->wake_fd >= 0 && write(r->wake_fd, &one, sizeof(one)) < 0) {} /* EAGAIN: awake anyway */
    pthread_mutex_unlock(&r->mu);
}

static void *resolve_main(void *arg) {
    pthread_setname_np(pthread_self(), "kube-resolve");
    resolve_run(arg);
    resolve_unref(arg);
    atomic_fetch_sub(&resolving, 1);
    return NULL;
}

/* cn waits for its host's addresses: the lookup running, or a new one. */
static void resolve_start(h2_tp *t, h2conn *cn) {
    h2_resolve *r = t->res;
    if (r) {
        pthread_mutex_lock(&r->mu);
        bool running = !r->done;
        pthread_mutex_unlock(&r->mu);
        if (!running) {
            /* a new connection looks the name up again, as Go's dialer */
            resolve_unref(r);
            t->res = r = NULL;
        }
    }
    if (!r) {
        r = ks_xcalloc(1, sizeof(*r));
        pthread_mutex_init(&r->mu, NULL);
        r->refs = 2; /* the transport's and the thread's */
        r->wake_fd = t->io->wake_fd;
        r->host = ks_xstrdup(t->host);
        r->port = ks_xstrdup(t->port);
        t->res = r;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&resolving, 1);
        pthread_t th;
        if (pthread_create(&th, &at, resolve_main, r) != 0) {
            /* no thread: here, as before */
            atomic_fetch_sub(&resolving, 1);
            r->refs--;
            resolve_run(r);
        }
        pthread_attr_destroy(&at);
    }
    pthread_mutex_lock(&r->mu);
    r->refs++;
    pthread_mutex_unlock(&r->mu);
    cn->res = r;
    cn->state = C_RESOLVING;
}

/* The lookup cn waits for, if it is done: cn connects, or fails. */
static bool conn_dial(h2_tp *t, h2conn *cn);
static void resolve_check(h2_tp *t, h2conn *cn) {
    h2_resolve *r = cn->res;
    pthread_mutex_lock(&r->mu);
    bool done = r->done;
    int rc = r->rc;
    pthread_mutex_unlock(&r->mu);
    if (!done) return;
    if (rc != 0) {
        cn->state = C_DEAD;
        free(cn->error);
        cn->error = ks_xasprintf("Could not resolve host: %s (%s)", t->host, gai_strerror(rc));
        return;
    }
    cn->ai_next = r->ai; /* r's, read only; cn keeps its reference until open */
    if (!conn_dial(t, cn)) cn->state = C_DEAD;
}

/* The transport goes: the lookup running wakes nobody any more. */
static void resolve_release(h2_tp *t) {
    h2_resolve *r = t->res;
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->wake_fd = -1;
    pthread_mutex_unlock(&r->mu);
    resolve_unref(r);
    t->res = NULL;
}

/* ---- connections ------------------------------------------------------------ */

static void conn_free(h2conn *cn) {
    const ks_nghttp2_api *N = cn->t->N;
    const ks_openssl_api *O = cn->t->O;
    if (cn->ng) N->nghttp2_session_del(cn->ng);
    if (cn->ssl) O->SSL_free(cn->ssl);
    if (cn->fd >= 0) close(cn->fd);
    if (cn->ai) freeaddrinfo(cn->ai);
    if (cn->res) resolve_unref(cn->res);
    ks_sb_free(&cn->out);
    free(cn->cert);
    free(cn->error);
    free(cn);
}

/* Begin a TCP connection to the next address; false when none is left. */
static bool conn_dial(h2_tp *t, h2conn *cn) {
    while (cn->ai_next) {
        struct addrinfo *a = cn->ai_next;
        cn->ai_next = a->ai_next;
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            free(cn->error);
            cn->error = ks_xasprintf("Failed to connect to %s port %s: %s", t->host, t->port, strerror(errno));
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
            if (cn->fd >= 0) close(cn->fd);
            cn->fd = fd;
            cn->state = C_CONNECTING;
            return true;
        }
        free(cn->error);
        cn->error = ks_xasprintf("Failed to connect to %s port %s: %s", t->host, t->port, strerror(errno));
        close(fd);
    }
    return false;
}

static h2conn *conn_new(h2_tp *t, const char *cert) {
    h2conn *cn = ks_xcalloc(1, sizeof(*cn));
    cn->t = t;
    cn->fd = -1;
    cn->cert = cert ? ks_xstrdup(cert) : NULL;
    ks_sb_init(&cn->out);
    cn->deadline_ns = ks_monotonic_ns() + H2_CONNECT_TIMEOUT_NS;
    cn->last_rx_ns = ks_monotonic_ns();
    /* an address needs no lookup: connect now; a name is looked up on
     * the resolver's thread */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
    if (getaddrinfo(t->host, t->port, &hints, &cn->ai) == 0) {
        cn->ai_next = cn->ai;
        if (!conn_dial(t, cn)) cn->state = C_DEAD;
    } else {
        cn->ai = NULL;
        resolve_start(t, cn);
    }
    cn->next = t->conns;
    t->conns = cn;
    return cn;
}

/* ---- nghttp2 callbacks ---------------------------------------------------------- */

static ssize_t read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *user) {
    h2s *st = src->ptr;
    ks_kube_xfer *x = st->x;
    size_t n = x->body_len - st->body_off;
    if (n > len) n = len;
    if (n) memcpy(buf, x->body + st->body_off, n);
    st->body_off += n;
    if (st->body_off == x->body_len) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *user) {
    const ks_nghttp2_api *N = ((h2conn *)user)->t->N;
    h2s *st = N->nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
    if (st && f->headers.cat == NGHTTP2_HCAT_RESPONSE) st->x->retry_after = -1;
    return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *user) {
    const ks_nghttp2_api *N = ((h2conn *)user)->t->N;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat == NGHTTP2_HCAT_HEADERS) return 0; /* trailers */
    h2s *st = N->nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
    if (!st) return 0;
    if (nlen == 7 && memcmp(name, ":status", 7) == 0) {
        long code = 0;
        for (size_t i = 0; i < vlen && value[i] >= '0' && value[i] <= '9'; i++) code = code * 10 + (value[i] - '0');
        /* an interim answer (1xx) is not the answer */
        st->x->code = code >= 200 ? code : 0;
        return 0;
    }
    ks_kube_xfer_header(st->x, (const char *)name, nlen, (const char *)value, vlen);
    return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user) {
    const ks_nghttp2_api *N = ((h2conn *)user)->t->N;
    h2s *st = N->nghttp2_session_get_stream_user_data(ng, id);
    ks_kube_xfer *x = st ? st->x : NULL;
    /* a paced stream's window opens when its consumer says so; the
     * connection's at once, so that one slow reader stalls nobody else */
    if (x && x->stream && x->stream->paced && x->code >= 200 && x->code < 300) N->nghttp2_session_consume_connection(ng, len);
    else N->nghttp2_session_consume(ng, id, len);
    if (!x) return 0;
    if (!ks_kube_xfer_body(x, (const char *)data, len)) N->nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    return 0;
}

static int on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *user) {
    h2conn *cn = user;
    if (f->hd.type == NGHTTP2_PING && (f->hd.flags & NGHTTP2_FLAG_ACK)) cn->ping_ns = 0;
    else if (f->hd.type == NGHTTP2_GOAWAY) cn->retiring = true;
    return 0;
}

static void pend(h2_tp *t, h2s *st) {
    st->pending = true;
    st->cn = NULL;
    st->id = 0;
    st->body_off = 0;
    st->next_pending = NULL;
    *t->pending_tail = st;
    t->pending_tail = &st->next_pending;
}

static int on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user) {
    const ks_nghttp2_api *N = ((h2conn *)user)->t->N;
    h2conn *cn = user;
    cn->nstreams--;
    h2s *st = N->nghttp2_session_get_stream_user_data(ng, id);
    if (!st) return 0;
    N->nghttp2_session_set_stream_user_data(ng, id, NULL);
    ks_kube_xfer *x = st->x;
    x->c->nstreams--;
    h2_tp *t = cn->t;
    if (code == NGHTTP2_REFUSED_STREAM && x->code == 0 && st->resends < H2_MAX_RESEND) {
        /* not processed (a GOAWAY's later streams, or refused): again on
         * a new connection, whatever the method */
        st->resends++;
        cn->retiring = true;
        pend(t, st);
        return 0;
    }
    char err[160];
    const char *e = NULL;
    if (x->too_big) {
        e = NULL; /* the policy says why */
    } else if (code != NGHTTP2_NO_ERROR) {
        snprintf(err, sizeof(err), "HTTP/2 stream %d was not closed cleanly: %s (err %u)", id,
                 N->nghttp2_http2_strerror(code), code);
        e = err;
    } else if (x->code == 0) {
        e = "HTTP/2 stream closed without an answer";
    }
    free(st);
    x->t = NULL;
    ks_kube_xfer_ended(t->io, x, e);
    return 0;
}

/* ---- the transport --------------------------------------------------------------- */

static bool h2_init(ks_kube_io *io, char **err) {
    const char *why = NULL;
    const ks_nghttp2_api *N = ks_nghttp2(&why);
    const ks_openssl_api *O = N ? ks_openssl(&why) : NULL;
    if (!O) return ks_set_error(err, "API server client: %s", why);
    h2_tp *t = ks_xcalloc(1, sizeof(*t));
    t->io = io;
    t->N = N;
    t->O = O;
    const char *s = strstr(io->cfg.server, "://") + 3;
    const char *end = s + strcspn(s, "/");
    t->authority = ks_xstrndup(s, (size_t)(end - s));
    t->prefix = ks_xstrdup(end);
    size_t pl = strlen(t->prefix);
    while (pl && t->prefix[pl - 1] == '/') t->prefix[--pl] = '\0';
    const char *a = t->authority, *colon;
    if (*a == '[') {
        const char *rb = strchr(a, ']');
        if (!rb) {
            free(t->authority);
            free(t->prefix);
            free(t);
            return ks_set_error(err, "server %s: bad IPv6 address", io->cfg.server);
        }
        t->host = ks_xstrndup(a + 1, (size_t)(rb - a - 1));
        colon = rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = strchr(a, ':');
        t->host = colon ? ks_xstrndup(a, (size_t)(colon - a)) : ks_xstrdup(a);
    }
    t->port = ks_xstrdup(colon && colon[1] ? colon + 1 : "443");
    ks_tls_client_init(&t->tls, &io->cfg, t->host);
    t->pending_tail = &t->pending;
    N->nghttp2_session_callbacks_new(&t->cbs);
    N->nghttp2_session_callbacks_set_on_begin_headers_callback(t->cbs, on_begin_headers);
    N->nghttp2_session_callbacks_set_on_header_callback(t->cbs, on_header);
    N->nghttp2_session_callbacks_set_on_data_chunk_recv_callback(t->cbs, on_data);
    N->nghttp2_session_callbacks_set_on_frame_recv_callback(t->cbs, on_frame);
    N->nghttp2_session_callbacks_set_on_stream_close_callback(t->cbs, on_close);
    N->nghttp2_option_new(&t->opt);
    N->nghttp2_option_set_no_auto_window_update(t->opt, 1);
    io->tp = t;
    return true;
}

/* Every stream of cn ends with its error; cn is freed. */
static void conn_close(h2_tp *t, h2conn *cn) {
    const ks_nghttp2_api *N = t->N;
    for (h2conn **p = &t->conns; *p; p = &(*p)->next)
        if (*p == cn) {
            *p = cn->next;
            break;
        }
    const char *e = cn->error ? cn->error : "connection closed";
    ks_kube_xfer *x = t->io->active;
    while (x) {
        ks_kube_xfer *nx = x->next;
        h2s *st = x->t;
        if (st && st->cn == cn) {
            x->c->nstreams--;
            if (cn->ng) N->nghttp2_session_set_stream_user_data(cn->ng, st->id, NULL);
            free(st);
            x->t = NULL;
            ks_kube_xfer_ended(t->io, x, e); /* unlinks x; nx stays valid */
        }
        x = nx;
    }
    /* a connection that never opened: the requests waiting for it end
     * with its error (unless they are moving to libcurl) */
    if (!cn->opened && !t->io->fall_back) {
        bool other = false;
        for (h2conn *o = t->conns; o; o = o->next) other |= !o->retiring;
        if (!other) {
            h2s *p = t->pending;
            t->pending = NULL;
            t->pending_tail = &t->pending;
            while (p) {
                h2s *np = p->next_pending;
                ks_kube_xfer *px = p->x;
                free(p);
                px->t = NULL;
                ks_kube_xfer_ended(t->io, px, e);
                p = np;
            }
        }
    }
    conn_free(cn);
}

static void h2_destroy(ks_kube_io *io) {
    h2_tp *t = io->tp;
    if (!t) return;
    const ks_nghttp2_api *N = t->N;
    resolve_release(t);
    while (t->conns) {
        h2conn *cn = t->conns;
        t->conns = cn->next;
        conn_free(cn);
    }
    while (t->pending) {
        h2s *p = t->pending;
        t->pending = p->next_pending;
        free(p);
    }
    N->nghttp2_session_callbacks_del(t->cbs);
    N->nghttp2_option_del(t->opt);
    ks_tls_client_destroy(&t->tls);
    free(t->host);
    free(t->port);
    free(t->authority);
    free(t->prefix);
    free(t);
    io->tp = NULL;
}

static bool h2_start(ks_kube_io *io, ks_kube_xfer *x) {
    h2_tp *t = io->tp;
    h2s *st = ks_xcalloc(1, sizeof(*st));
    st->x = x;
    x->t = st;
    pend(t, st);
    return true;
}

static void h2_stop(ks_kube_io *io, ks_kube_xfer *x) {
    const ks_nghttp2_api *N = ((h2_tp *)io->tp)->N;
    h2_tp *t = io->tp;
    h2s *st = x->t;
    if (!st) return;
    if (st->pending) {
        for (h2s **p = &t->pending; *p; p = &(*p)->next_pending)
            if (*p == st) {
                *p = st->next_pending;
                break;
            }
        t->pending_tail = &t->pending;
        while (*t->pending_tail) t->pending_tail = &(*t->pending_tail)->next_pending;
    } else if (st->cn) {
        x->c->nstreams--;
    }
    if (!st->pending && st->cn && st->cn->ng) {
        N->nghttp2_session_set_stream_user_data(st->cn->ng, st->id, NULL);
        N->nghttp2_submit_rst_stream(st->cn->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
    }
    free(st);
    x->t = NULL;
}

/* The HEADERS of x, submitted on cn. */
static bool submit(h2_tp *t, h2conn *cn, h2s *st) {
    const ks_nghttp2_api *N = t->N;
    ks_kube_xfer *x = st->x;
    ks_kube_client *c = x->c;
#define NV(n, v, vl) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), NGHTTP2_NV_FLAG_NO_COPY_NAME}
    char *path = *t->prefix ? ks_xasprintf("%s%s", t->prefix, x->path) : NULL;
    const char *p = path ? path : x->path;
    const char *accept = x->negotiate ? c->accept + 8 : "application/json";
    nghttp2_nv nv[10] = {
        NV(":method", x->method, strlen(x->method)),
        NV(":scheme", "https", 5),
        NV(":authority", t->authority, strlen(t->authority)),
        NV(":path", p, strlen(p)),
        NV("accept", accept, strlen(accept)),
        NV("user-agent", c->user_agent, strlen(c->user_agent)),
    };
    size_t n = 6;
    if (x->cr && x->cr->auth) {
        const char *v = x->cr->auth + 15; /* after "Authorization: " */
        nghttp2_nv a = NV("authorization", v, strlen(v));
        a.flags |= NGHTTP2_NV_FLAG_NO_INDEX; /* not kept in the HPACK table */
        nv[n++] = a;
    }
    char len[24];
    bool body = x->body || strcmp(x->method, "POST") == 0 || strcmp(x->method, "PUT") == 0 ||
                strcmp(x->method, "PATCH") == 0;
    if (x->body) {
        const char *ct = x->content_type ? x->content_type : "application/json";
        nv[n++] = (nghttp2_nv)NV("content-type", ct, strlen(ct));
    }
    if (body) {
        snprintf(len, sizeof(len), "%zu", x->body_len);
        nv[n++] = (nghttp2_nv)NV("content-length", len, strlen(len));
    }
#undef NV
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    int32_t id = N->nghttp2_submit_request(cn->ng, NULL, nv, n, body ? &dp : NULL, st);
    free(path);
    if (id < 0) return false;
    st->id = id;
    st->cn = cn;
    st->pending = false;
    cn->nstreams++;
    c->nstreams++;
    return true;
}

static bool is_ready(h2conn *cn) { return cn->state == C_OPEN && !cn->retiring; }

/* The most streams one client holds on a connection that allows max
 * while others share it (ks_kube_client_new_sibling): a sibling half, the
 * base three quarters. kube-apiserver allows 100: when one client's
 * endpoint stops answering, its requests (events: up to 64 writes
 * outstanding; bindings behind a stuck webhook) leave the others 25 to 50
 * streams, where one queue without bounds would let them take every
 * stream until they time out (the events client has no timeout). Go's
 * transport opens another connection instead; one connection is what
 * saves the I/O here. Alone, a client has them all. */
static uint32_t share(const ks_kube_client *c, uint32_t max) {
    if (atomic_load(&c->io->nclients) <= 1) return max;
    uint32_t n = c->sibling ? max / 2 : max - max / 4;
    return n ? n : 1;
}

/* Pending attempts onto the current connection, as many as it takes, in
 * order, but past those of a client that holds its share. */
static void place(h2_tp *t) {
    const ks_nghttp2_api *N = t->N;
    if (t->io->fall_back) return; /* they are moving to libcurl */
    h2s **pp = &t->pending;
    while (*pp) {
        h2s *st = *pp;
        const char *cert = st->x->cr ? st->x->cr->cert : NULL;
        h2conn *cn = t->conns;
        while (cn && cn->retiring) cn = cn->next;
        if (cn && (cert ? !cn->cert || strcmp(cert, cn->cert) != 0 : cn->cert != NULL)) {
            /* other client credentials: a connection of their own */
            cn->retiring = true;
            cn = NULL;
        }
        if (!cn) cn = conn_new(t, cert);
        if (cn->state == C_DEAD) {
            conn_close(t, cn); /* may end pending attempts */
            pp = &t->pending;
            continue;
        }
        if (!is_ready(cn)) return;
        uint32_t max = N->nghttp2_session_get_remote_settings(cn->ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
        if ((uint32_t)cn->nstreams >= max) return;
        ks_kube_client *c = st->x->c;
        if ((uint32_t)c->nstreams >= share(c, max)) {
            pp = &st->next_pending;
            continue;
        }
        *pp = st->next_pending;
        if (t->pending_tail == &st->next_pending) t->pending_tail = pp;
        st->next_pending = NULL;
        if (!submit(t, cn, st)) {
            /* out of stream ids or the session failing: a new connection */
            cn->retiring = true;
            pend(t, st);
        }
    }
}

static void conn_fail(h2conn *cn, char *error) {
    cn->state = C_DEAD;
    free(cn->error);
    cn->error = error;
}

/* The TLS handshake is done: HTTP/2, or back to libcurl. */
static void conn_opened(h2_tp *t, h2conn *cn) {
    const ks_nghttp2_api *N = t->N;
    const ks_openssl_api *O = t->O;
    const unsigned char *proto = NULL;
    unsigned plen = 0;
    O->SSL_get0_alpn_selected(cn->ssl, &proto, &plen);
    if (plen != 2 || memcmp(proto, "h2", 2) != 0) {
        if (!t->io->fall_back)
            t->io->fall_back = ks_xasprintf("%s does not offer HTTP/2 (ALPN %.*s)", t->authority, (int)plen,
                                           plen ? (const char *)proto : "none");
        conn_fail(cn, ks_xstrdup("the server does not offer HTTP/2"));
        return;
    }
    N->nghttp2_session_client_new2(&cn->ng, t->cbs, cn, t->opt);
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)KS_KUBE_STREAM_WINDOW},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 1 << 20},
    };
    N->nghttp2_submit_settings(cn->ng, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(*iv));
    N->nghttp2_session_set_local_window_size(cn->ng, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW);
    cn->state = C_OPEN;
    cn->opened = true;
    cn->last_rx_ns = ks_monotonic_ns();
    if (cn->ai) freeaddrinfo(cn->ai);
    if (cn->res) resolve_unref(cn->res);
    cn->ai = cn->ai_next = NULL;
    cn->res = NULL;
}

static void handshake(h2_tp *t, h2conn *cn) {
    const ks_openssl_api *O = t->O;
    O->ERR_clear_error();
    errno = 0;
    int r = O->SSL_connect(cn->ssl);
    if (r == 1) {
        conn_opened(t, cn);
        return;
    }
    int e = O->SSL_get_error(cn->ssl, r);
    if (e == SSL_ERROR_WANT_READ) cn->want_write = false;
    else if (e == SSL_ERROR_WANT_WRITE) cn->want_write = true;
    else conn_fail(cn, ks_tls_client_handshake_error(&t->tls, cn->ssl, e));
}

static void connected(h2_tp *t, h2conn *cn) {
    int soerr = 0;
    socklen_t sl = sizeof(soerr);
    getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (soerr) {
        free(cn->error);
        cn->error = ks_xasprintf("Failed to connect to %s port %s: %s", t->host, t->port, strerror(soerr));
        if (!conn_dial(t, cn)) cn->state = C_DEAD;
        return;
    }
    int one = 1, idle = 30;
    setsockopt(cn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* dead peers on idle watches: TCP keepalive as Go's dialer (30 s) */
    setsockopt(cn->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(cn->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(cn->fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
    char *err = NULL;
    const char *ck = NULL, *kk = NULL;
    size_t cl = 0, kl = 0;
    if (cn->cert) {
        /* the exec plugin's credentials: the pending request that asked
         * for this connection has them */
        for (h2s *p = t->pending; p; p = p->next_pending)
            if (p->x->cr && p->x->cr->cert && strcmp(p->x->cr->cert, cn->cert) == 0) {
                ck = p->x->cr->cert, cl = p->x->cr->cert_len;
                kk = p->x->cr->key, kl = p->x->cr->key_len;
                break;
            }
        if (!ck) {
            conn_fail(cn, ks_xstrdup("no request needs this connection any more"));
            return;
        }
    }
    cn->ssl = ks_tls_client_new_ssl(&t->tls, cn->fd, ck, cl, kk, kl, &err);
    if (!cn->ssl) {
        conn_fail(cn, err);
        return;
    }
    cn->state = C_HANDSHAKE;
    handshake(t, cn);
}

/* Read what TLS has; false when the connection is gone. */
static bool conn_read(h2_tp *t, h2conn *cn) {
    const ks_nghttp2_api *N = t->N;
    const ks_openssl_api *O = t->O;
    uint8_t buf[16384];
    for (;;) {
        O->ERR_clear_error();
        errno = 0;
        int r = O->SSL_read(cn->ssl, buf, sizeof(buf));
        if (r > 0) {
            cn->last_rx_ns = ks_monotonic_ns();
            ssize_t used = N->nghttp2_session_mem_recv(cn->ng, buf, (size_t)r);
            if (used < 0) {
                conn_fail(cn, ks_xasprintf("HTTP/2 error: %s", N->nghttp2_strerror((int)used)));
                return false;
            }
            /* nothing buffered: poll(2) says when more comes, rather than
             * a read(2) that fails with EAGAIN on every pass */
            if (!O->SSL_has_pending(cn->ssl)) return true;
            continue;
        }
        int e = O->SSL_get_error(cn->ssl, r);
        if (e == SSL_ERROR_WANT_READ) return true;
        if (e == SSL_ERROR_WANT_WRITE) {
            cn->want_write = true;
            return true;
        }
        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0 && !O->ERR_peek_error()))
            conn_fail(cn, ks_xstrdup("the server closed the connection"));
        else if (e == SSL_ERROR_SYSCALL && errno)
            conn_fail(cn, ks_xasprintf("Recv failure: %s", strerror(errno)));
        else {
            unsigned long le = O->ERR_get_error();
            char eb[256] = "";
            if (le) O->ERR_error_string_n(le, eb, sizeof(eb));
            conn_fail(cn, ks_xasprintf("TLS read error: %s", eb));
        }
        return false;
    }
}

/* Write what nghttp2 has made, all frames of a pass in as few TLS
 * records as fit; false when the connection is gone. */
static bool conn_write(h2conn *cn) {
    const ks_nghttp2_api *N = cn->t->N;
    const ks_openssl_api *O = cn->t->O;
    cn->want_write = false;
    for (;;) {
        if (cn->out_off == cn->out.len) {
            cn->out_off = 0;
            ks_sb_reset(&cn->out);
            for (;;) {
                const uint8_t *d;
                ssize_t n = N->nghttp2_session_mem_send(cn->ng, &d);
                if (n < 0) {
                    conn_fail(cn, ks_xasprintf("HTTP/2 error: %s", N->nghttp2_strerror((int)n)));
                    return false;
                }
                if (n == 0) break;
                ks_sb_putn(&cn->out, (const char *)d, (size_t)n);
                if (cn->out.len >= 65536) break;
            }
            if (!cn->out.len) return true;
        }
        size_t n = cn->out_try ? cn->out_try : cn->out.len - cn->out_off;
        O->ERR_clear_error();
        errno = 0;
        int r = O->SSL_write(cn->ssl, cn->out.s + cn->out_off, (int)n);
        if (r > 0) {
            cn->out_off += (size_t)r;
            cn->out_try = 0;
            continue;
        }
        int e = O->SSL_get_error(cn->ssl, r);
        if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
            cn->out_try = n;
            cn->want_write = e == SSL_ERROR_WANT_WRITE;
            return true;
        }
        conn_fail(cn, ks_xasprintf("Send failure: %s", errno ? strerror(errno) : "TLS error"));
        return false;
    }
}

/* The health check and the time it wants to be called again at. */
static int64_t check_alive(h2_tp *t, h2conn *cn, int64_t now) {
    const ks_nghttp2_api *N = t->N;
    ks_kube_io *io = t->io;
    if (io->read_idle_ns <= 0 || cn->state != C_OPEN) return INT64_MAX;
    if (cn->ping_ns) {
        if (now - cn->ping_ns < io->ping_timeout_ns) return cn->ping_ns + io->ping_timeout_ns;
        int64_t silent = now - cn->last_rx_ns;
        ks_errorf("\"No answer from the API server; closing the connection\" silentSeconds=%.1f probeTimeoutSeconds=%.1f requests=%d",
                  (double)silent / 1e9, (double)io->ping_timeout_ns / 1e9, cn->nstreams);
        atomic_fetch_add(&io->dead_connections, 1);
        conn_fail(cn, ks_xasprintf("connection closed: no answer from the server for %lld s",
                                   (long long)(silent / KS_NS_PER_SEC)));
        return INT64_MAX;
    }
    if (now - cn->last_rx_ns < io->read_idle_ns) return cn->last_rx_ns + io->read_idle_ns;
    ks_infof(4, "no frame from the API server for %lld ms: PING", (long long)((now - cn->last_rx_ns) / KS_NS_PER_MS));
    N->nghttp2_submit_ping(cn->ng, NGHTTP2_FLAG_NONE, NULL);
    cn->ping_ns = now;
    return now + io->ping_timeout_ns;
}

/* Requests past their timeout, watches past their deadline. */
static int64_t check_timeouts(h2_tp *t, int64_t now) {
    ks_kube_io *io = t->io;
    int64_t next = INT64_MAX;
    ks_kube_xfer *x = io->active;
    while (x) {
        ks_kube_xfer *nx = x->next;
        int64_t tmo = x->c->timeout_ms;
        int64_t lim = x->deadline_ms > 0 ? x->deadline_ms : !x->stream && tmo > 0 ? tmo : 0;
        if (lim > 0) {
            int64_t at = x->started_ns + lim * KS_NS_PER_MS;
            if (at <= now) {
                char e[128];
                snprintf(e, sizeof(e), "Operation timed out after %lld milliseconds with %zu bytes received",
                         (long long)((now - x->started_ns) / KS_NS_PER_MS), x->resp.len);
                h2_stop(io, x);
                ks_kube_xfer_ended(io, x, e);
            } else if (at < next) {
                next = at;
            }
        }
        x = nx;
    }
    return next;
}

static void h2_flow(ks_kube_io *io) {
    const ks_nghttp2_api *N = ((h2_tp *)io->tp)->N;
    for (ks_kube_xfer *x = io->active; x; x = x->next) {
        if (!x->stream || !x->stream->paced) continue;
        size_t n = atomic_exchange(&x->stream->consumed, 0);
        h2s *st = x->t;
        if (n && st && st->cn && st->cn->ng && st->id > 0) N->nghttp2_session_consume_stream(st->cn->ng, st->id, n);
    }
}

static void h2_step(ks_kube_io *io, int64_t until_ns) {
    const ks_nghttp2_api *N = ((h2_tp *)io->tp)->N;
    h2_tp *t = io->tp;
    place(t);
    int64_t now = ks_monotonic_ns();
    int64_t tn = check_timeouts(t, now);
    if (tn < until_ns) until_ns = tn;
    struct pollfd pfd[9];
    h2conn *pc[9];
    int n = 0;
    pfd[n++] = (struct pollfd){.fd = io->wake_fd, .events = POLLIN};
    for (h2conn *cn = t->conns; cn; cn = cn->next) {
        if (cn->state == C_RESOLVING) resolve_check(t, cn);
        if (cn->state == C_OPEN) {
            int64_t h = check_alive(t, cn, now);
            if (h < until_ns) until_ns = h;
            if (cn->state == C_OPEN && !conn_write(cn)) {}
        }
        if (cn->state != C_DEAD && cn->deadline_ns && cn->state != C_OPEN) {
            if (cn->deadline_ns <= now)
                conn_fail(cn, ks_xasprintf("%s timed out after %lld milliseconds",
                                           cn->state == C_RESOLVING ? "Resolving" : "Connection",
                                           (long long)(H2_CONNECT_TIMEOUT_NS / KS_NS_PER_MS)));
            else if (cn->deadline_ns < until_ns)
                until_ns = cn->deadline_ns;
        }
        if (cn->state == C_DEAD || cn->state == C_RESOLVING || n == 9) continue;
        short ev = POLLIN;
        if (cn->state == C_CONNECTING) ev = POLLOUT;
        else if (cn->want_write || (cn->state == C_OPEN && (cn->out_off < cn->out.len || N->nghttp2_session_want_write(cn->ng))))
            ev |= POLLOUT;
        pc[n] = cn;
        pfd[n++] = (struct pollfd){.fd = cn->fd, .events = ev};
    }
    bool dead = false;
    for (h2conn *cn = t->conns; cn; cn = cn->next) dead |= cn->state == C_DEAD;
    int timeout = 1000;
    if (dead) timeout = 0;
    else if (until_ns != INT64_MAX) {
        int64_t d = (until_ns - ks_monotonic_ns()) / KS_NS_PER_MS + 1;
        timeout = d < 0 ? 0 : d < timeout ? (int)d : timeout;
    }
    int r = poll(pfd, (nfds_t)n, timeout);
    if (r > 0) {
        if (pfd[0].revents) ks_kube_io_woken(io);
        for (int i = 1; i < n; i++) {
            h2conn *cn = pc[i];
            if (!pfd[i].revents || cn->state == C_DEAD) continue;
            if (cn->state == C_CONNECTING) connected(t, cn);
            else if (cn->state == C_HANDSHAKE) handshake(t, cn);
            else if (cn->state == C_OPEN && conn_read(t, cn)) conn_write(cn);
        }
    }
    /* connections that died, and retired ones with no stream left */
    for (h2conn *cn = t->conns, *nx; cn; cn = nx) {
        nx = cn->next;
        if (cn->state == C_OPEN && !conn_write(cn)) {}
        bool idle_retired = cn->retiring && cn->state == C_OPEN && cn->nstreams == 0 && cn->out_off == cn->out.len;
        if (cn->state == C_DEAD || idle_retired) {
            conn_close(t, cn);
            nx = t->conns; /* the list may have changed */
        }
    }
    place(t);
    for (h2conn *cn = t->conns; cn; cn = cn->next)
        if (cn->state == C_OPEN) conn_write(cn);
}

const ks_kube_transport ks_kube_h2_transport = {
    .name = "HTTP/2 (nghttp2, OpenSSL)",
    .init = h2_init,
    .destroy = h2_destroy,
    .start = h2_start,
    .stop = h2_stop,
    .step = h2_step,
    .flow = h2_flow,
};
