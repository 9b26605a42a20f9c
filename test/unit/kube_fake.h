/* A scripted kube-apiserver for the kube client and reflector tests:
 * libmicrohttpd on 127.0.0.1 (an ephemeral port, HTTP or HTTPS), answering
 * each request with the first scripted answer that matches its method,
 * path and query, and recording what it was asked. Streams (watches) send
 * their chunks one by one and then end, are cut (the connection dropped
 * mid-stream) or are held open until released. Included by one test file
 * each (static functions). */
#ifndef KS_TEST_KUBE_FAKE_H
#define KS_TEST_KUBE_FAKE_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FK_MAX_SCRIPT 64
#define FK_MAX_LOG 256
#define FK_MAX_CHUNKS 16

typedef struct fk_answer {
    const char *method;     /* NULL: any */
    const char *path;       /* exact path (no query) */
    const char *query;      /* NULL, or a substring the query must contain */
    int status;             /* 0: 200 */
    const char *retry_after;
    const char *body;       /* a plain answer */
    size_t body_len;        /* 0: strlen(body) (binary bodies set it) */
    const char *chunks[FK_MAX_CHUNKS]; /* a streamed answer */
    size_t chunk_len[FK_MAX_CHUNKS];   /* 0: strlen */
    bool cut;               /* after the chunks: drop the connection */
    bool hold;              /* after the chunks: stay open until fk_release */
    int times;              /* answers this many requests (0: 1; -1: all) */
    int used;
} fk_answer;

typedef struct fk_request {
    char method[16];
    char url[1024];         /* path?query as received (decoded) */
    char auth[512];
    char user_agent[256];
    char accept[128];
    char content_type[128];
    char body[1024];
} fk_request;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct MHD_Daemon *d;
    unsigned port;
    fk_answer script[FK_MAX_SCRIPT];
    int nscript;
    fk_request log[FK_MAX_LOG];
    int nlog;
    bool released, stopping;
    int streams_open;
} FK = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void fk_add(fk_answer a) {
    pthread_mutex_lock(&FK.mu);
    if (FK.nscript < FK_MAX_SCRIPT) FK.script[FK.nscript++] = a;
    pthread_mutex_unlock(&FK.mu);
}

static int fk_count(const char *method, const char *url_prefix) {
    pthread_mutex_lock(&FK.mu);
    int n = 0;
    for (int i = 0; i < FK.nlog; i++)
        if ((!method || !strcmp(FK.log[i].method, method)) &&
            (!url_prefix || !strncmp(FK.log[i].url, url_prefix, strlen(url_prefix))))
            n++;
    pthread_mutex_unlock(&FK.mu);
    return n;
}

/* A copy of the i-th logged request (negative: from the end). */
static __attribute__((unused)) fk_request fk_get(int i) {
    pthread_mutex_lock(&FK.mu);
    if (i < 0) i += FK.nlog;
    fk_request r;
    memset(&r, 0, sizeof(r));
    if (i >= 0 && i < FK.nlog) r = FK.log[i];
    pthread_mutex_unlock(&FK.mu);
    return r;
}

static void fk_release(void) {
    pthread_mutex_lock(&FK.mu);
    FK.released = true;
    pthread_cond_broadcast(&FK.cv);
    pthread_mutex_unlock(&FK.mu);
}

typedef struct fk_conn {
    char body[1024];
    size_t n;
} fk_conn;

typedef struct fk_stream {
    fk_answer a;
    int next;
    size_t off; /* of chunks[next] already sent (a chunk larger than MHD's buffer goes in parts) */
} fk_stream;

static ssize_t fk_read(void *cls, uint64_t pos, char *buf, size_t max) {
    fk_stream *s = cls;
    (void)pos;
    if (s->next < FK_MAX_CHUNKS && s->a.chunks[s->next]) {
        size_t len = s->a.chunk_len[s->next] ? s->a.chunk_len[s->next] : strlen(s->a.chunks[s->next]);
        const char *c = s->a.chunks[s->next] + s->off;
        size_t n = len - s->off;
        if (n > max) n = max;
        s->off += n;
        if (s->off == len) {
            s->next++;
            s->off = 0;
        }
        memcpy(buf, c, n);
        /* give the client a chance to see chunks apart */
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
        return (ssize_t)n;
    }
    if (s->a.cut) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (s->a.hold) {
        pthread_mutex_lock(&FK.mu);
        while (!FK.released && !FK.stopping) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_sec += 1;
            pthread_cond_timedwait(&FK.cv, &FK.mu, &t);
        }
        pthread_mutex_unlock(&FK.mu);
    }
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static void fk_stream_free(void *cls) {
    pthread_mutex_lock(&FK.mu);
    FK.streams_open--;
    pthread_mutex_unlock(&FK.mu);
    free(cls);
}

static enum MHD_Result fk_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    char *url = cls;
    size_t n = strlen(url);
    snprintf(url + n, 1024 - n, "%s%s%s%s", strchr(url, '?') ? "&" : "?", key, value ? "=" : "", value ? value : "");
    return MHD_YES;
}

static void fk_copy_header(struct MHD_Connection *c, const char *name, char *dst, size_t n) {
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    snprintf(dst, n, "%s", v ? v : "");
}

static enum MHD_Result fk_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **state) {
    fk_conn *st = *state;
    if (!st) {
        *state = calloc(1, sizeof(fk_conn));
        return MHD_YES;
    }
    if (*upload_size) {
        size_t room = sizeof(st->body) - 1 - st->n;
        size_t n = *upload_size < room ? *upload_size : room;
        memcpy(st->body + st->n, upload, n);
        st->n += n;
        *upload_size = 0;
        return MHD_YES;
    }
    fk_request r;
    memset(&r, 0, sizeof(r));
    snprintf(r.method, sizeof(r.method), "%s", method);
    snprintf(r.url, sizeof(r.url), "%s", url);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, fk_arg, r.url);
    fk_copy_header(c, "Authorization", r.auth, sizeof(r.auth));
    fk_copy_header(c, "User-Agent", r.user_agent, sizeof(r.user_agent));
    fk_copy_header(c, "Accept", r.accept, sizeof(r.accept));
    fk_copy_header(c, "Content-Type", r.content_type, sizeof(r.content_type));
    memcpy(r.body, st->body, st->n);

    pthread_mutex_lock(&FK.mu);
    if (FK.nlog < FK_MAX_LOG) FK.log[FK.nlog++] = r;
    fk_answer *a = NULL;
    const char *q = strchr(r.url, '?');
    for (int i = 0; i < FK.nscript && !a; i++) {
        fk_answer *s = &FK.script[i];
        int times = s->times ? s->times : 1;
        if (times > 0 && s->used >= times) continue;
        if (s->method && strcmp(s->method, method) != 0) continue;
        if (strcmp(s->path, url) != 0) continue;
        if (s->query && (!q || !strstr(q, s->query))) continue;
        s->used++;
        a = s;
    }
    fk_answer ans;
    if (a) ans = *a;
    pthread_mutex_unlock(&FK.mu);

    struct MHD_Response *resp;
    int status;
    if (!a) {
        static const char nf[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                                 "\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\","
                                 "\"code\":404}";
        resp = MHD_create_response_from_buffer(strlen(nf), (void *)nf, MHD_RESPMEM_PERSISTENT);
        status = 404;
    } else if (ans.chunks[0] || ans.hold || ans.cut) {
        fk_stream *s = calloc(1, sizeof(*s));
        s->a = ans;
        pthread_mutex_lock(&FK.mu);
        FK.streams_open++;
        pthread_mutex_unlock(&FK.mu);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, fk_read, s, fk_stream_free);
        status = ans.status ? ans.status : 200;
    } else {
        const char *b = ans.body ? ans.body : "";
        resp = MHD_create_response_from_buffer(ans.body_len ? ans.body_len : strlen(b), (void *)b,
                                               MHD_RESPMEM_MUST_COPY);
        status = ans.status ? ans.status : 200;
    }
    bool pb = a && ((ans.body && ans.body_len >= 4 && memcmp(ans.body, "k8s", 4) == 0) || ans.chunk_len[0]);
    MHD_add_response_header(resp, "Content-Type", pb ? "application/vnd.kubernetes.protobuf" : "application/json");
    if (a && ans.retry_after) MHD_add_response_header(resp, "Retry-After", ans.retry_after);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void fk_done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode tc) {
    free(*state);
    *state = NULL;
}

static void fk_reset(void) {
    pthread_mutex_lock(&FK.mu);
    FK.nscript = 0;
    FK.nlog = 0;
    FK.released = false;
    FK.stopping = false;
    memset(FK.script, 0, sizeof(FK.script));
    pthread_mutex_unlock(&FK.mu);
}

/* Start on port (0: any); with cert/key PEM for HTTPS. */
static bool fk_start_on(unsigned port, const char *cert, const char *key) {
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(0x7f000001);
    if (cert) {
        FK.d = MHD_start_daemon(flags | MHD_USE_TLS, (uint16_t)port, NULL, NULL, fk_handle, NULL,
                                MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, fk_done, NULL,
                                MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
                                MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    } else {
        FK.d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, fk_handle, NULL, MHD_OPTION_SOCK_ADDR, &sa,
                                MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u, MHD_OPTION_NOTIFY_COMPLETED, fk_done, NULL,
                                MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    }
    if (!FK.d) return false;
    FK.port = MHD_get_daemon_info(FK.d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return true;
}

static void fk_stop(void) {
    if (!FK.d) return;
    pthread_mutex_lock(&FK.mu);
    FK.stopping = true;
    pthread_cond_broadcast(&FK.cv);
    pthread_mutex_unlock(&FK.mu);
    MHD_stop_daemon(FK.d);
    FK.d = NULL;
}

#endif
