/* A scripted HTTP/2 server over TLS for the kube client's h2 transport
 * tests: nghttp2's server API and OpenSSL on 127.0.0.1, one thread.
 * Header-only (static), like kube_fake.h.
 *
 * Paths:
 *   /ok                 200, body {"ok":N} (N: the request's number)
 *   /echo               200, the request's body back
 *   /retry              429 with Retry-After: 0 for the first H2F.fail
 *                       requests, then 200
 *   /auth               401 unless Authorization is H2F.want_auth
 *   /slow               200 after 100 ms (concurrency is counted)
 *   /big                200 with H2F.big_bytes bytes
 *   /watch              200, then H2F.watch_bytes bytes of 'x' as the
 *                       stream's window allows, then the end
 *   /hang               headers never sent
 * Control (under H2F.mu): goaway (GOAWAY, last stream 0 if goaway_all,
 * then close), goaway_keep (GOAWAY, the streams begun carry on), drop (close every connection), mute (stop reading and
 * writing existing connections: a black hole). */
#ifndef KS_TEST_H2_FAKE_H
#define KS_TEST_H2_FAKE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define H2F_MAX_CONNS 16
#define H2F_MAX_LOG 256

typedef struct h2f_req {
    char method[16], path[256], auth[256], ctype[128], accept[128], ua[128], authority[128];
    char accept_encoding[128];
    char client_cn[64];      /* the client certificate's CN, "" without one */
    char body[512];
    size_t body_len;
} h2f_req;

typedef struct h2f_stream {
    int32_t id;
    h2f_req req;
    size_t sent, total;      /* body bytes sent / to send */
    char *payload;           /* the body when not generated */
    int64_t answer_at_ms;    /* /slow: when to answer; 0 answered or not timed */
    bool answered, watch, hang;
    struct h2f_stream *next;
} h2f_stream;

typedef struct h2f_conn {
    int fd;
    SSL *ssl;
    nghttp2_session *ng;
    bool handshaken, muted, dead;
    char client_cn[64];
    h2f_stream *streams;
} h2f_conn;

static struct {
    pthread_mutex_t mu;
    pthread_t th;
    bool running, stop;
    int lfd;
    unsigned port;
    SSL_CTX *ctx;
    bool no_h2;              /* ALPN: never select h2 */
    bool refuse;             /* close each connection as it is accepted */
    uint32_t max_streams;    /* SETTINGS_MAX_CONCURRENT_STREAMS, 0: 100 */
    h2f_conn conns[H2F_MAX_CONNS];
    int nconns, accepted;
    /* scripted */
    int fail;
    char want_auth[256];
    size_t watch_bytes, big_bytes;
    /* control */
    bool goaway, goaway_all, goaway_keep, drop, mute;
    /* observed */
    h2f_req log[H2F_MAX_LOG];
    int nlog;
    int concurrent, max_concurrent;
    size_t watch_sent;       /* body bytes of /watch streams sent so far */
    int pings;
} H2F;

static int64_t h2f_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int h2f_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                    unsigned int inlen, void *arg) {
    for (unsigned i = 0; i < inlen; i += in[i] + 1u) {
        const char *want = H2F.no_h2 ? "http/1.1" : "h2";
        if (in[i] == strlen(want) && memcmp(in + i + 1, want, in[i]) == 0) {
            *out = in + i + 1;
            *outlen = in[i];
            return SSL_TLSEXT_ERR_OK;
        }
    }
    return SSL_TLSEXT_ERR_NOACK;
}

static h2f_stream *h2f_find(h2f_conn *c, int32_t id) {
    for (h2f_stream *s = c->streams; s; s = s->next)
        if (s->id == id) return s;
    return NULL;
}

static ssize_t h2f_read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                             nghttp2_data_source *src, void *user) {
    h2f_stream *s = src->ptr;
    size_t n = s->total - s->sent;
    if (n > len) n = len;
    if (s->payload) memcpy(buf, s->payload + s->sent, n);
    else memset(buf, 'x', n);
    s->sent += n;
    if (s->watch) H2F.watch_sent += n;
    if (s->sent == s->total) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void h2f_respond(h2f_conn *c, h2f_stream *s, int code, const char *retry_after, const char *body, size_t len,
                        bool generated) {
    char status[8];
    snprintf(status, sizeof(status), "%d", code);
    nghttp2_nv nv[3] = {{(uint8_t *)":status", (uint8_t *)status, 7, strlen(status), 0},
                        {(uint8_t *)"content-type", (uint8_t *)"application/json", 12, 16, 0}};
    size_t n = 2;
    if (retry_after) nv[n++] = (nghttp2_nv){(uint8_t *)"retry-after", (uint8_t *)retry_after, 11, strlen(retry_after), 0};
    s->total = len;
    s->sent = 0;
    if (!generated) {
        s->payload = malloc(len + 1);
        memcpy(s->payload, body, len);
    }
    nghttp2_data_provider dp = {.source.ptr = s, .read_callback = h2f_read_body};
    nghttp2_submit_response(c->ng, s->id, nv, n, &dp);
    s->answered = true;
}

/* The request is whole: answer it (H2F.mu held). */
static void h2f_handle(h2f_conn *c, h2f_stream *s) {
    int num = H2F.nlog;
    if (H2F.nlog < H2F_MAX_LOG) H2F.log[H2F.nlog++] = s->req;
    const char *p = s->req.path;
    char buf[64];
    if (strcmp(p, "/ok") == 0 || strncmp(p, "/ok?", 4) == 0) {
        int n = snprintf(buf, sizeof(buf), "{\"ok\":%d}", num);
        h2f_respond(c, s, 200, NULL, buf, (size_t)n, false);
    } else if (strcmp(p, "/echo") == 0) {
        h2f_respond(c, s, 200, NULL, s->req.body, s->req.body_len, false);
    } else if (strcmp(p, "/retry") == 0) {
        if (H2F.fail > 0) {
            H2F.fail--;
            h2f_respond(c, s, 429, "0", "{}", 2, false);
        } else {
            h2f_respond(c, s, 200, NULL, "{\"after\":1}", 11, false);
        }
    } else if (strcmp(p, "/auth") == 0) {
        if (strcmp(s->req.auth, H2F.want_auth) == 0) h2f_respond(c, s, 200, NULL, "{\"auth\":1}", 10, false);
        else h2f_respond(c, s, 401, NULL, "{\"message\":\"Unauthorized\"}", 26, false);
    } else if (strcmp(p, "/slow") == 0) {
        s->answer_at_ms = h2f_now_ms() + 100;
        H2F.concurrent++;
        if (H2F.concurrent > H2F.max_concurrent) H2F.max_concurrent = H2F.concurrent;
    } else if (strcmp(p, "/big") == 0) {
        h2f_respond(c, s, 200, NULL, NULL, H2F.big_bytes, true);
    } else if (strncmp(p, "/watch", 6) == 0) {
        s->watch = true;
        h2f_respond(c, s, 200, NULL, NULL, H2F.watch_bytes, true);
    } else if (strcmp(p, "/hang") == 0) {
        s->hang = true;
    } else {
        h2f_respond(c, s, 404, NULL, "{\"message\":\"not found\"}", 23, false);
    }
}

static int h2f_on_begin(nghttp2_session *ng, const nghttp2_frame *f, void *user) {
    h2f_conn *c = user;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    h2f_stream *s = calloc(1, sizeof(*s));
    s->id = f->hd.stream_id;
    snprintf(s->req.client_cn, sizeof(s->req.client_cn), "%s", c->client_cn);
    s->next = c->streams;
    c->streams = s;
    return 0;
}

static void h2f_copy(char *dst, size_t cap, const uint8_t *v, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static int h2f_on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                         const uint8_t *value, size_t vlen, uint8_t flags, void *user) {
    h2f_stream *s = h2f_find(user, f->hd.stream_id);
    if (!s) return 0;
#define H2F_IS(lit) (nlen == sizeof(lit) - 1 && memcmp(name, lit, nlen) == 0)
    if (H2F_IS(":method")) h2f_copy(s->req.method, sizeof(s->req.method), value, vlen);
    else if (H2F_IS(":path")) h2f_copy(s->req.path, sizeof(s->req.path), value, vlen);
    else if (H2F_IS(":authority")) h2f_copy(s->req.authority, sizeof(s->req.authority), value, vlen);
    else if (H2F_IS("authorization")) h2f_copy(s->req.auth, sizeof(s->req.auth), value, vlen);
    else if (H2F_IS("content-type")) h2f_copy(s->req.ctype, sizeof(s->req.ctype), value, vlen);
    else if (H2F_IS("accept")) h2f_copy(s->req.accept, sizeof(s->req.accept), value, vlen);
    else if (H2F_IS("user-agent")) h2f_copy(s->req.ua, sizeof(s->req.ua), value, vlen);
    else if (H2F_IS("accept-encoding")) h2f_copy(s->req.accept_encoding, sizeof(s->req.accept_encoding), value, vlen);
#undef H2F_IS
    return 0;
}

static int h2f_on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user) {
    h2f_stream *s = h2f_find(user, id);
    if (s && s->req.body_len + len < sizeof(s->req.body)) {
        memcpy(s->req.body + s->req.body_len, data, len);
        s->req.body_len += len;
    }
    return 0;
}

static int h2f_on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *user) {
    if (f->hd.type == NGHTTP2_PING && !(f->hd.flags & NGHTTP2_FLAG_ACK)) H2F.pings++;
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        h2f_stream *s = h2f_find(user, f->hd.stream_id);
        if (s && !s->answered && !s->hang && !s->answer_at_ms) h2f_handle(user, s);
    }
    return 0;
}

static int h2f_on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user) {
    h2f_conn *c = user;
    for (h2f_stream **p = &c->streams; *p; p = &(*p)->next)
        if ((*p)->id == id) {
            h2f_stream *s = *p;
            *p = s->next;
            if (s->answer_at_ms && !s->answered) H2F.concurrent--;
            free(s->payload);
            free(s);
            break;
        }
    return 0;
}

static void h2f_conn_close(h2f_conn *c) {
    if (c->ng) nghttp2_session_del(c->ng);
    while (c->streams) {
        h2f_stream *s = c->streams;
        c->streams = s->next;
        if (s->answer_at_ms && !s->answered) H2F.concurrent--;
        free(s->payload);
        free(s);
    }
    if (c->ssl) SSL_free(c->ssl);
    close(c->fd);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

static void h2f_session(h2f_conn *c) {
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, h2f_on_begin);
    nghttp2_session_callbacks_set_on_header_callback(cb, h2f_on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2f_on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2f_on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2f_on_close);
    nghttp2_session_server_new(&c->ng, cb, c);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2F.max_streams ? H2F.max_streams : 100}};
    nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 1);
}

/* One pass over a connection: handshake, read, write. */
static void h2f_serve(h2f_conn *c) {
    if (!c->handshaken) {
        int r = SSL_accept(c->ssl);
        if (r == 1) {
            c->handshaken = true;
            X509 *peer = SSL_get1_peer_certificate(c->ssl);
            if (peer) {
                X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, c->client_cn,
                                          sizeof(c->client_cn));
                X509_free(peer);
            }
            const unsigned char *p;
            unsigned n;
            SSL_get0_alpn_selected(c->ssl, &p, &n);
            if (n != 2 || memcmp(p, "h2", 2) != 0) {
                c->dead = true; /* no HTTP/1 here */
                return;
            }
            h2f_session(c);
        } else {
            int e = SSL_get_error(c->ssl, r);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) c->dead = true;
            return;
        }
    }
    uint8_t buf[16384];
    for (;;) {
        int r = SSL_read(c->ssl, buf, sizeof(buf));
        if (r > 0) {
            if (nghttp2_session_mem_recv(c->ng, buf, (size_t)r) < 0) c->dead = true;
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) c->dead = true;
        break;
    }
    int64_t now = h2f_now_ms();
    for (h2f_stream *s = c->streams; s; s = s->next)
        if (s->answer_at_ms && !s->answered && now >= s->answer_at_ms) {
            H2F.concurrent--;
            h2f_respond(c, s, 200, NULL, "{\"slow\":1}", 10, false);
        }
    for (;;) {
        const uint8_t *d;
        ssize_t n = nghttp2_session_mem_send(c->ng, &d);
        if (n <= 0) break;
        /* blocking enough for a test: retry until written */
        size_t off = 0;
        while (off < (size_t)n) {
            int w = SSL_write(c->ssl, d + off, (int)((size_t)n - off));
            if (w > 0) {
                off += (size_t)w;
                continue;
            }
            int e = SSL_get_error(c->ssl, w);
            if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ) {
                c->dead = true;
                return;
            }
            struct pollfd p = {.fd = c->fd, .events = POLLOUT};
            poll(&p, 1, 10);
        }
    }
}

static void *h2f_main(void *arg) {
    sigset_t pipe; /* a client gone: EPIPE, not the test killed */
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    for (;;) {
        struct pollfd p[H2F_MAX_CONNS + 1];
        p[0] = (struct pollfd){.fd = H2F.lfd, .events = POLLIN};
        pthread_mutex_lock(&H2F.mu);
        if (H2F.stop) {
            pthread_mutex_unlock(&H2F.mu);
            break;
        }
        for (int i = 0; i < H2F_MAX_CONNS; i++)
            p[i + 1] = (struct pollfd){.fd = H2F.conns[i].fd >= 0 && !H2F.conns[i].muted ? H2F.conns[i].fd : -1,
                                       .events = POLLIN};
        pthread_mutex_unlock(&H2F.mu);
        poll(p, H2F_MAX_CONNS + 1, 10);
        pthread_mutex_lock(&H2F.mu);
        if (p[0].revents) {
            int fd = accept4(H2F.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0 && H2F.refuse) {
                H2F.accepted++;
                close(fd);
                fd = -1;
            }
            for (int i = 0; fd >= 0 && i < H2F_MAX_CONNS; i++)
                if (H2F.conns[i].fd < 0) {
                    H2F.conns[i].fd = fd;
                    H2F.conns[i].ssl = SSL_new(H2F.ctx);
                    SSL_set_fd(H2F.conns[i].ssl, fd);
                    H2F.accepted++;
                    fd = -1;
                }
            if (fd >= 0) close(fd);
        }
        for (int i = 0; i < H2F_MAX_CONNS; i++) {
            h2f_conn *c = &H2F.conns[i];
            if (c->fd < 0) continue;
            if (H2F.mute) c->muted = true;
            if (c->muted) continue;
            if (H2F.drop) {
                h2f_conn_close(c);
                continue;
            }
            if (H2F.goaway && c->ng) {
                int32_t last = H2F.goaway_all ? 0 : nghttp2_session_get_last_proc_stream_id(c->ng);
                nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE, last, NGHTTP2_NO_ERROR, NULL, 0);
                h2f_serve(c);
                h2f_conn_close(c);
                continue;
            }
            if (H2F.goaway_keep && c->ng)
                nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(c->ng),
                                      NGHTTP2_NO_ERROR, NULL, 0);
            h2f_serve(c);
            if (c->dead) h2f_conn_close(c);
        }
        H2F.drop = H2F.goaway = H2F.goaway_keep = H2F.mute = false;
        pthread_mutex_unlock(&H2F.mu);
    }
    return NULL;
}

/* Start on 127.0.0.1 with cert/key files, asking clients for a
 * certificate signed by client_ca when it is not NULL; false when it
 * cannot. */
static bool h2f_start_ca(const char *cert_file, const char *key_file, const char *client_ca) {
    pthread_mutex_init(&H2F.mu, NULL);
    for (int i = 0; i < H2F_MAX_CONNS; i++) H2F.conns[i].fd = -1;
    H2F.ctx = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_chain_file(H2F.ctx, cert_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(H2F.ctx, key_file, SSL_FILETYPE_PEM) != 1)
        return false;
    SSL_CTX_set_alpn_select_cb(H2F.ctx, h2f_alpn, NULL);
    if (client_ca) {
        if (SSL_CTX_load_verify_locations(H2F.ctx, client_ca, NULL) != 1) return false;
        SSL_CTX_set_verify(H2F.ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    H2F.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (bind(H2F.lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(H2F.lfd, 16) != 0) return false;
    getsockname(H2F.lfd, (struct sockaddr *)&a, &al);
    H2F.port = ntohs(a.sin_port);
    H2F.stop = false;
    H2F.running = pthread_create(&H2F.th, NULL, h2f_main, NULL) == 0;
    return H2F.running;
}

static bool h2f_start(const char *cert_file, const char *key_file) {
    return h2f_start_ca(cert_file, key_file, NULL);
}

static void h2f_stop(void) {
    if (!H2F.running) return;
    pthread_mutex_lock(&H2F.mu);
    H2F.stop = true;
    pthread_mutex_unlock(&H2F.mu);
    pthread_join(H2F.th, NULL);
    for (int i = 0; i < H2F_MAX_CONNS; i++)
        if (H2F.conns[i].fd >= 0) h2f_conn_close(&H2F.conns[i]);
    close(H2F.lfd);
    SSL_CTX_free(H2F.ctx);
    pthread_mutex_destroy(&H2F.mu);
    memset(&H2F, 0, sizeof(H2F));
}

#endif
