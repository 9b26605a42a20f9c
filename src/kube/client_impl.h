/* Inside the API server client: what its policy (client.c: credentials,
 * rate limit, retries, streams) shares with the transport that carries
 * its requests. Two transports: h2_transport.c (HTTP/2 on nghttp2 over
 * one OpenSSL connection, the default for https) and curl_transport.c
 * (libcurl, loaded only when used: http://, proxies, a server without h2,
 * KSCHED_KUBE_TRANSPORT=curl). Everything here runs on the client's I/O
 * thread unless it says otherwise. */
#ifndef KS_KUBE_CLIENT_IMPL_H
#define KS_KUBE_CLIENT_IMPL_H

#include "kube/client.h"
#include "kube/ratelimit.h"
#include "util/strbuf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

/* What authenticates one attempt. Shared by the requests that use it; a
 * new one replaces it when the token file changes or the exec plugin runs. */
typedef struct ks_kube_creds {
    atomic_int refs;
    uint64_t gen;            /* exec: which run of the plugin made them (1, 2, ...); 0 others */
    char *auth;              /* "Authorization: ..." header line, or NULL */
    char *cert, *key;        /* exec plugin's client certificate (PEM), or NULL */
    size_t cert_len, key_len;
} ks_kube_creds;

typedef struct ks_kube_io ks_kube_io;

struct ks_kube_stream {
    ks_kube_client *c;
    ks_kube_io *io;
    ks_kube_data_fn data;
    ks_kube_end_fn end;
    void *arg;
    bool paced;          /* the consumer reports what it took (ks_kube_stream_consumed) */
    atomic_size_t consumed; /* taken, not yet told to the transport */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool ended;          /* end has been called (and returned) */
    bool cancel_pending; /* queued on the client's cancels, not yet seen */
    struct ks_kube_xfer *x; /* the transfer while it runs (I/O thread's) */
    struct ks_kube_stream *next_cancel;
};

typedef struct ks_kube_sync_wait ks_kube_sync_wait;

/* One request across its attempts. Owned by the I/O thread once queued. */
typedef struct ks_kube_xfer {
    struct ks_kube_xfer *next;
    ks_kube_client *c;       /* whose request (its budget, headers, options) */
    char *method, *path, *content_type, *body;
    size_t body_len;
    bool idempotent, negotiate;
    ks_kube_stream *stream;  /* a watch, or NULL */
    ks_kube_creds *cr;
    bool reauthed;           /* a 401 has run the exec plugin again for it */
    char *cred_error;        /* that run failed: why (the request ends with it) */
    int attempts;            /* made so far */
    int64_t due_ns;          /* start (or take a token) at */
    bool need_token;
    int64_t started_ns;
    /* this attempt's answer, written by the transport's callbacks */
    long code;               /* the status line's, 0 before it */
    ks_strbuf resp;
    long retry_after;        /* seconds from the last answer, -1 none */
    size_t max_resp;         /* the body's limit (not streams) */
    bool too_big;            /* the body went over it: the transfer was stopped */
    ks_kube_done_fn done;
    void *arg;
    ks_kube_sync_wait *sync;
    int64_t deadline_ms;     /* streams: end the transfer after this long; 0 none */
    void *t;                 /* the transport's state for this attempt */
} ks_kube_xfer;

typedef struct ks_kube_transport ks_kube_transport;

/* What a client shares with its siblings (ks_kube_client_new_sibling):
 * one I/O thread, one transport (one HTTP/2 connection, or one libcurl
 * multi handle), the credentials. Each client holds a reference; the last
 * one to go stops the thread. */
struct ks_kube_io {
    const ks_kube_transport *tr;
    void *tp;                /* the transport's state */
    ks_kube_config cfg;
    char *base_url;          /* scheme://host[:port][/prefix] */
    char *host;              /* host[:port] for metrics' labels */

    /* credentials: cred_mu guards these */
    pthread_mutex_t cred_mu;
    ks_kube_creds *cur;
    uint64_t cred_gen;       /* exec: the plugin's runs that gave credentials */
    /* exec: the newest credentials a 401 refused (their gen); set without
     * cred_mu, which an exec plugin's run holds, by the I/O thread */
    atomic_uint_least64_t rejected_gen;
    int64_t exp_ns;          /* exec: expiry (wall clock), 0 none */
    struct stat token_st;    /* the token file as last read */
    char *exec_info;         /* KUBERNETES_EXEC_INFO value */
    /* exec: the plugin's process group while it runs (exec_mu; 0: none),
     * killed when the last client is freed (exec_stopped) */
    pthread_mutex_t exec_mu;
    pid_t exec_pid;
    bool exec_stopped;

    /* the I/O thread; mu guards incoming, cancels, detach, nclients, stopping */
    atomic_int refs;         /* the clients not yet gone: the last one frees this */
    pthread_t io;
    pthread_mutex_t mu;
    ks_kube_xfer *incoming, **incoming_tail;
    ks_kube_stream *cancels;
    struct ks_kube_client *detach; /* clients being freed: their requests end */
    struct ks_kube_client *detaching; /* I/O thread only: those not done yet */
    atomic_int nclients;     /* the clients not being freed; changed under mu */
    bool stopping;
    ks_kube_xfer *waiting;   /* I/O thread only: queued, not started */
    ks_kube_xfer *active;    /* I/O thread only: started, in the transport */
    unsigned seed;           /* I/O thread only: jitter */
    /* a wake-up is on its way to the I/O thread: submitters do not send
     * another one (one per batch, not per request) */
    atomic_bool wake_pending;
    int wake_fd;             /* an eventfd: the I/O thread polls it */
    atomic_bool flow_pending; /* a paced stream's consumer took bytes */

    /* dead connections (client-go's HTTP/2 health check), see client.h */
    int64_t read_idle_ns, ping_timeout_ns; /* read_idle_ns 0: off */
    atomic_uint_least64_t dead_connections;

    /* set by the h2 transport when the server does not speak h2: the I/O
     * thread moves these clients to libcurl (malloc'd reason) */
    char *fall_back;
    char *broken;            /* libcurl cannot be loaded after a fall-back: why */

    /* async requests refused (401) with an exec plugin's credentials wait
     * here while a thread of their own runs the plugin again (a subprocess:
     * not on the I/O thread), then go back on incoming. mu guards the
     * queue; the thread starts at the first such 401. */
    ks_kube_xfer *reauth_q;
    pthread_cond_t reauth_cv;
    pthread_t reauth_th;
    bool reauth_started;
};

/* One client: its own rate budget, User-Agent, options and counters, on
 * an ks_kube_io it may share. */
struct ks_kube_client {
    ks_kube_io *io;
    bool sibling;            /* made by ks_kube_client_new_sibling */
    char *user_agent;
    char *accept;            /* "Accept: ..." for requests that negotiate */
    bool protobuf;           /* contentType is protobuf */
    bool no_gzip;            /* options.disable_compression */
    int max_retries;
    int64_t timeout_ms, retry_base_ns;
    size_t max_response;
    int64_t watch_grace_ms;
    ks_ratelimit rl;
    int nstreams;            /* I/O thread only: its requests in the transport (h2's share) */

    /* being freed: io->mu guards these */
    bool closing;
    bool detached;           /* the I/O thread ended its requests */
    int reauth_out;          /* its requests with the exec plugin's thread */
    pthread_cond_t detached_cv;
    struct ks_kube_client *next_detach;

    pthread_mutex_t stats_mu;
    ks_kube_client_stats stats;
};

/* A transport. start begins an attempt of x (x->attempts, started_ns and
 * the answer's fields are set by the caller); the transport reports its
 * end once with ks_kube_xfer_ended, or forgets it when stop is called.
 * step does the I/O that is ready and waits at most until until_ns, or
 * until c->wake_fd is readable (then calls ks_kube_client_woken), for
 * more. flow tells it that paced streams' consumers took bytes. */
struct ks_kube_transport {
    const char *name;
    bool (*init)(ks_kube_io *io, char **err); /* on the caller's thread */
    void (*destroy)(ks_kube_io *io);
    bool (*start)(ks_kube_io *io, ks_kube_xfer *x);
    void (*stop)(ks_kube_io *io, ks_kube_xfer *x);
    void (*step)(ks_kube_io *io, int64_t until_ns);
    void (*flow)(ks_kube_io *io);
};

extern const ks_kube_transport ks_kube_curl_transport;
extern const ks_kube_transport ks_kube_h2_transport;

struct addrinfo;
/* The h2 transport's name resolution: getaddrinfo, run on a thread of its
 * own. Tests put a resolver they control here (its results are freed with
 * freeaddrinfo). */
extern int (*ks_kube_getaddrinfo)(const char *host, const char *port, const struct addrinfo *hints,
                                  struct addrinfo **res);
/* Those threads still running, in the whole process (tests). */
int ks_kube_h2_resolving(void);

/* Called by the transport with an answer's parts. */
void ks_kube_xfer_header(ks_kube_xfer *x, const char *name, size_t nlen, const char *value, size_t vlen);
/* false: stop the transfer (a body over its limit; too_big is set) */
bool ks_kube_xfer_body(ks_kube_xfer *x, const char *buf, size_t len);
/* The attempt is over: error NULL when an answer (x->code) came whole.
 * The transport has let go of x; the policy retries or completes it. */
void ks_kube_xfer_ended(ks_kube_io *io, ks_kube_xfer *x, const char *error);
/* The I/O thread saw wake_fd readable: reads it. */
void ks_kube_io_woken(ks_kube_io *io);

#endif
