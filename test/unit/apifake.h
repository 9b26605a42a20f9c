/* A kube-apiserver stand-in whose answers are computed by the test: a
 * libmicrohttpd server on 127.0.0.1 (ephemeral port, plain HTTP) calls the
 * test's handler with each request and records every request it got, in
 * order. Tests wait for what they expect with af_wait (bounded; a timeout
 * fails the test, it is not a timing assertion). Included by one test file
 * each (static functions). */
#ifndef KS_TEST_APIFAKE_H
#define KS_TEST_APIFAKE_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AF_MAX_LOG 512
#define AF_BODY 8192

typedef struct af_request {
    char method[16];
    char path[512];
    char content_type[128];
    char body[AF_BODY];
    size_t body_len;
    int status; /* what was answered */
    bool watch; /* a GET with ?watch= */
} af_request;

/* Computes the answer: returns the status; *body (malloc'd) or NULL. Called
 * with the fake's lock held (tests keep their state under it). */
typedef int (*af_handler)(const af_request *req, char **body);

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct MHD_Daemon *d;
    unsigned port;
    af_handler handler;
    af_request log[AF_MAX_LOG];
    int nlog;
    int delay_ms; /* before answering (a slow API server) */
    int watch_delay_ms; /* before answering a watch (its stream then ends) */
} AF = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

typedef struct af_conn {
    char body[AF_BODY];
    size_t n;
} af_conn;

static enum MHD_Result af_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)cls;
    (void)version;
    af_conn *st = *state;
    if (!st) {
        *state = calloc(1, sizeof(af_conn));
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
    af_request r;
    memset(&r, 0, sizeof(r));
    snprintf(r.method, sizeof(r.method), "%s", method);
    snprintf(r.path, sizeof(r.path), "%s", url);
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    snprintf(r.content_type, sizeof(r.content_type), "%s", ct ? ct : "");
    memcpy(r.body, st->body, st->n);
    r.body_len = st->n;
    r.watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch") != NULL;

    pthread_mutex_lock(&AF.mu);
    int delay = AF.delay_ms + (r.watch ? AF.watch_delay_ms : 0);
    pthread_mutex_unlock(&AF.mu);
    if (delay > 0) {
        struct timespec ts = {delay / 1000, (long)(delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    char *body = NULL;
    pthread_mutex_lock(&AF.mu);
    int status = AF.handler ? AF.handler(&r, &body) : 404;
    r.status = status;
    if (AF.nlog < AF_MAX_LOG) AF.log[AF.nlog++] = r;
    pthread_cond_broadcast(&AF.cv);
    pthread_mutex_unlock(&AF.mu);
    if (!body) {
        body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\"}");
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void af_done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode tc) {
    (void)cls;
    (void)c;
    (void)tc;
    free(*state);
    *state = NULL;
}

static bool af_start(af_handler h) {
    pthread_mutex_lock(&AF.mu);
    AF.handler = h;
    AF.nlog = 0;
    AF.delay_ms = 0;
    AF.watch_delay_ms = 0;
    pthread_mutex_unlock(&AF.mu);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    sa.sin_addr.s_addr = htonl(0x7f000001);
    AF.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                            af_handle, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, af_done, NULL,
                            MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!AF.d) return false;
    AF.port = MHD_get_daemon_info(AF.d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return true;
}

static inline void af_stop(void) {
    if (AF.d) MHD_stop_daemon(AF.d);
    AF.d = NULL;
}

static inline void af_lock(void) { pthread_mutex_lock(&AF.mu); }
static inline void af_unlock(void) { pthread_mutex_unlock(&AF.mu); }

static inline int af_count(const char *method, const char *path_prefix) {
    pthread_mutex_lock(&AF.mu);
    int n = 0;
    for (int i = 0; i < AF.nlog; i++)
        if ((!method || !strcmp(AF.log[i].method, method)) &&
            (!path_prefix || !strncmp(AF.log[i].path, path_prefix, strlen(path_prefix))))
            n++;
    pthread_mutex_unlock(&AF.mu);
    return n;
}

static inline int af_nlog(void) {
    pthread_mutex_lock(&AF.mu);
    int n = AF.nlog;
    pthread_mutex_unlock(&AF.mu);
    return n;
}

/* A copy of the i-th request (negative: from the end). */
static inline af_request af_get(int i) {
    af_request r;
    memset(&r, 0, sizeof(r));
    pthread_mutex_lock(&AF.mu);
    if (i < 0) i += AF.nlog;
    if (i >= 0 && i < AF.nlog) r = AF.log[i];
    pthread_mutex_unlock(&AF.mu);
    return r;
}

/* Wait until pred() holds (checked under the lock), at most limit_s
 * seconds; returns whether it held. */
static inline bool af_wait(bool (*pred)(void *), void *arg, int limit_s) {
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += limit_s;
    pthread_mutex_lock(&AF.mu);
    bool ok;
    /* woken by each request, and every 20 ms for state that changes
     * without one */
    while (!(ok = pred(arg))) {
        struct timespec now, t;
        clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) break;
        t = now;
        t.tv_nsec += 20 * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&AF.cv, &AF.mu, &t);
    }
    pthread_mutex_unlock(&AF.mu);
    return ok;
}

/* Wake af_wait from state changes made outside a request. */
static inline void af_poke(void) {
    pthread_mutex_lock(&AF.mu);
    pthread_cond_broadcast(&AF.cv);
    pthread_mutex_unlock(&AF.mu);
}

#endif
