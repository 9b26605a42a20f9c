/* A client for the kube-apiserver: one I/O thread carries any number of
 * requests in flight; callers block on a request, get a callback, or
 * stream a watch. An https server is spoken to in HTTP/2 on nghttp2 over
 * one OpenSSL connection (h2_transport.c); http://, a proxy, a server that
 * does not offer h2, or KSCHED_KUBE_TRANSPORT=curl use libcurl (loaded on
 * first use, see util/curl_lazy.h; curl_transport.c).
 *
 * Rate limiting is client-go's token bucket (qps, burst); a client made
 * for events or leader election has a budget of its own (a sibling on the
 * same connection, ks_kube_client_new_sibling). Retries, up to max_retries, each one rate limited
 * again: a 429 or 5xx with Retry-After waits that long and retries, for
 * any method (as client-go: the server asked for it); a 429 without it
 * backs off and retries; a 5xx without it and connection errors back off
 * (doubling from retry_base_ms, at most 8 s, with jitter) and retry only
 * requests the caller marks idempotent; other codes are returned to the
 * caller, who decides (409 on a binding is final). docs/run.md says where
 * this differs from client-go.
 *
 * Thread-safe. Streams must be closed before the client is freed; no
 * function here may be called from the client's own callbacks except
 * ks_kube_do_async and ks_kube_client_stats_get.
 *
 * Authentication per request: bearer token (a token file is
 * re-read when its modification time changes), client certificate, or an
 * exec plugin's credential (cached until its expirationTimestamp, re-run
 * on 401). */
#ifndef KS_KUBE_CLIENT_H
#define KS_KUBE_CLIENT_H

#include "kube/kubeconfig.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ks_kube_client ks_kube_client;

typedef struct ks_kube_client_options {
    const ks_kube_config *config; /* copied */
    double qps;                   /* <= 0: no limit */
    int burst;
    const char *user_agent;       /* NULL: "ksched/<version> (linux/<arch>)" */
    /* Appended to the User-Agent after a "/" (client-go's AddUserAgent:
     * the elector's client is ".../leader-election"); NULL: nothing. */
    const char *user_agent_suffix;
    int max_retries;              /* 0: client-go's 10 */
    int64_t timeout_ms;           /* per attempt (not watches); 0: none */
    int64_t retry_base_ms;        /* first backoff without Retry-After; 0: 500 ms */
    size_t max_response_bytes;    /* one answer's body (not watches); 0: KS_KUBE_MAX_RESPONSE */
    /* Dead connections, as client-go's HTTP/2 health check: with no frame
     * received for read_idle_ms, a PING is sent on the connection (on
     * libcurl, with requests in flight, a probe request); unanswered after
     * ping_timeout_ms, the connection is closed and its requests end as
     * connection errors.
     * 0: client-go's environment variables HTTP2_READ_IDLE_TIMEOUT_SECONDS
     * and HTTP2_PING_TIMEOUT_SECONDS, else 30 s and 15 s; read_idle_ms < 0
     * (or the variable 0): no check. */
    int64_t read_idle_ms, ping_timeout_ms;
    int64_t watch_grace_ms;       /* see ks_kube_stream_open; 0: KS_KUBE_WATCH_GRACE_S */
    /* clientConnection.contentType and acceptContentTypes. Requests that
     * negotiate (ks_kube_request.negotiate) send Accept as client-go
     * does: acceptContentTypes when set, else contentType + ", * / *";
     * the others, and all when both are empty, application/json. */
    const char *content_type;
    const char *accept_content_types;
    /* No Accept-Encoding: gzip, whatever the kubeconfig says (kube-scheduler
     * sets rest.Config.DisableCompression for its clients: on the API
     * server's side gzip costs more CPU than the bytes it saves near it). */
    bool disable_compression;
} ks_kube_client_options;

/* A LIST page is 500 objects of at most about 1 MiB each (etcd's request
 * limit is 1.5 MiB): a bigger answer is refused rather than buffered. */
#define KS_KUBE_MAX_RESPONSE ((size_t)512 << 20)

ks_kube_client *ks_kube_client_new(const ks_kube_client_options *o, char **err);
/* A client of its own (rate limiter, User-Agent, negotiation, retries,
 * timeouts, counters: every option but config, read_idle_ms and
 * ping_timeout_ms, which are base's) on base's I/O thread, transport and
 * credentials: its requests are streams on base's HTTP/2 connection (or
 * handles on its libcurl multi), as client-go's clientsets made from one
 * rest.Config share one cached transport. kube-scheduler's event and
 * leader-election clients are made so. Either may be freed first; the
 * last one freed stops the thread. On h2, while clients share it, a
 * sibling holds at most half of the connection's
 * SETTINGS_MAX_CONCURRENT_STREAMS, base three quarters: one client's
 * endpoint that stops answering cannot take every stream from the
 * others. */
ks_kube_client *ks_kube_client_new_sibling(ks_kube_client *base, const ks_kube_client_options *o);
/* Cancels what is in flight (callbacks get code 0, error "cancelled"):
 * this client's requests only, when siblings remain. */
void ks_kube_client_free(ks_kube_client *c);

typedef struct ks_kube_request {
    const char *method;       /* "GET", "POST", "PATCH", "PUT", "DELETE" */
    const char *path;         /* "/api/v1/namespaces/ns/pods/p/binding?x=y" */
    const char *content_type; /* NULL: application/json when body is set */
    const char *body;
    size_t body_len;
    bool idempotent;          /* retry 5xx and connection errors */
    bool negotiate;           /* Accept the configured types (the caller reads protobuf too) */
} ks_kube_request;

typedef struct ks_kube_response {
    long code;                /* HTTP status; 0 when there was no answer */
    char *body;               /* malloc'd, NUL-terminated (may be NULL) */
    size_t body_len;
    char *error;              /* transport error text (code 0), malloc'd */
    int retries;              /* how many times it was retried */
} ks_kube_response;

void ks_kube_response_free(ks_kube_response *r);

/* Blocking request (rate limited, retried as above). Returns the final
 * response; code 0 means no answer after the retries. */
void ks_kube_do(ks_kube_client *c, const ks_kube_request *req, ks_kube_response *out);

/* Asynchronous: done is called once from the client's I/O thread with the
 * final response (which done must not keep: it is freed after). The
 * request is copied. */
typedef void (*ks_kube_done_fn)(void *arg, const ks_kube_response *r);
void ks_kube_do_async(ks_kube_client *c, const ks_kube_request *req, ks_kube_done_fn done, void *arg);
/* From inside done: keep the body (the caller frees it; NULL when there
 * is none) instead of copying it: a list of every pod can be tens of MB. */
char *ks_kube_response_take_body(const ks_kube_response *r);

/* Streaming GET (watch): data is called from the I/O thread with each
 * chunk as it arrives; end is called once when the stream ends (code is
 * the HTTP status, or 0 with error on a transport failure or cancel).
 * Not rate limited beyond the initial request. A path with
 * timeoutSeconds=T is ended here (a transport error) when the server has
 * not ended it watch_grace_ms (default KS_KUBE_WATCH_GRACE_S) after T:
 * a watch that delivers nothing, not even its end, is not waited on for
 * ever. */
#define KS_KUBE_WATCH_GRACE_S 30
typedef struct ks_kube_stream ks_kube_stream;
typedef void (*ks_kube_data_fn)(void *arg, const char *buf, size_t len);
typedef void (*ks_kube_end_fn)(void *arg, long code, const char *error);
ks_kube_stream *ks_kube_stream_open(ks_kube_client *c, const char *path, bool negotiate, ks_kube_data_fn data,
                                    ks_kube_end_fn end, void *arg);

/* As ks_kube_stream_open, but paced: the server sends only so much ahead
 * of what the consumer has taken (HTTP/2 flow control: the stream's
 * window is opened again only by ks_kube_stream_consumed), so a reader
 * slower than the network bounds what waits in memory to about
 * KS_KUBE_STREAM_WINDOW bytes. The consumer (any thread, until close)
 * reports each byte data gave it once it has taken it. On libcurl the
 * stream is not paced. */
#define KS_KUBE_STREAM_WINDOW ((size_t)1 << 20)
ks_kube_stream *ks_kube_stream_open_paced(ks_kube_client *c, const char *path, bool negotiate, ks_kube_data_fn data,
                                          ks_kube_end_fn end, void *arg);
void ks_kube_stream_consumed(ks_kube_stream *s, size_t n);

/* Whether the configured contentType is protobuf: what callers write
 * objects in when the kind has a protobuf form (codec/pb.h). */
bool ks_kube_client_writes_protobuf(const ks_kube_client *c);
#define KS_KUBE_PROTOBUF "application/vnd.kubernetes.protobuf"
/* Cancel (end is called with code 0, "cancelled", unless it already was)
 * and free. Waits until no callback of the stream is running. */
void ks_kube_stream_close(ks_kube_stream *s);

/* Counters for metrics: requests by code class, retries, throttle wait. */
typedef struct ks_kube_client_stats {
    uint64_t requests, retries, errors_2xx, errors_4xx, errors_5xx, errors_conn;
    uint64_t dead_connections; /* closed because they stopped answering (the shared connection's) */
    int64_t throttled_ns;
} ks_kube_client_stats;
void ks_kube_client_stats_get(ks_kube_client *c, ks_kube_client_stats *out);

/* The "message" of a metav1.Status body, JSON or protobuf, or NULL (malloc'd). */
char *ks_kube_status_message(const char *body, size_t len);

/* The value of a Retry-After header as client-go reads it (whole seconds,
 * digits only), or -1 when it is not one. */
long ks_kube_parse_retry_after(const char *v, size_t n);

#endif
