#include "kube/client.h"

#include "codec/pb.h"
#include "kube/ratelimit.h"
#include "metrics/sched_metrics.h"
#include "util/base64.h"
#include "util/clock.h"
#include "util/curl_lazy.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/version.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

extern char **environ;

#if defined(__x86_64__)
#define KS_ARCH "amd64"
#elif defined(__aarch64__)
#define KS_ARCH "arm64"
#else
#define KS_ARCH "unknown"
#endif

/* Easy handles kept for reuse: as many as requests are usually in flight
 * at once (the dispatcher's and binders' 16 each, the watches). */
#define KS_KUBE_SPARE_HANDLES 64

/* ---- credentials -------------------------------------------------------- */

/* What authenticates one attempt. Shared by the requests that use it; a
 * new one replaces it when the token file changes or the exec plugin runs. */
typedef struct creds {
    atomic_int refs;
    char *auth;              /* "Authorization: ..." header line, or NULL */
    char *cert, *key;        /* exec plugin's client certificate (PEM), or NULL */
    size_t cert_len, key_len;
} creds;

static void creds_unref(creds *cr) {
    if (!cr || atomic_fetch_sub(&cr->refs, 1) != 1) return;
    free(cr->auth);
    free(cr->cert);
    free(cr->key);
    free(cr);
}

static creds *creds_new(void) {
    creds *cr = ks_xcalloc(1, sizeof(*cr));
    atomic_init(&cr->refs, 1);
    return cr;
}

static char *b64_encode(const char *s, size_t n) {
    char *out = ks_xmalloc(ks_base64_encoded_len(n) + 1);
    ks_base64_encode(s, n, out);
    return out;
}

/* ---- transfers ---------------------------------------------------------- */

struct ks_kube_stream {
    ks_kube_client *c;
    ks_kube_data_fn data;
    ks_kube_end_fn end;
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool ended;          /* end has been called (and returned) */
    bool cancel_pending; /* queued on the client's cancels, not yet seen */
    struct xfer *x;      /* the transfer while it runs (I/O thread's) */
    struct ks_kube_stream *next_cancel;
};

typedef struct sync_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    ks_kube_response *out;
} sync_wait;

/* One request across its attempts. Owned by the I/O thread once queued. */
typedef struct xfer {
    struct xfer *next;
    char *method, *path, *content_type, *body;
    size_t body_len;
    bool idempotent, negotiate;
    ks_kube_stream *stream;  /* a watch, or NULL */
    creds *cr;
    int attempts;            /* made so far */
    int64_t due_ns;          /* start (or take a token) at */
    bool need_token;
    int64_t started_ns;
    CURL *easy;
    struct curl_slist *hdrs;
    ks_strbuf resp;
    long retry_after;        /* seconds from the last answer, -1 none */
    size_t max_resp;         /* the body's limit (not streams) */
    bool too_big;            /* the body went over it: the transfer was stopped */
    char errbuf[CURL_ERROR_SIZE];
    ks_kube_done_fn done;
    void *arg;
    sync_wait *sync;
    struct ks_kube_client *client; /* while started: for the callbacks */
    int64_t deadline_ms;     /* streams: end the transfer after this long; 0 none */
} xfer;

struct ks_kube_client {
    const ks_curl_api *C;
    ks_kube_config cfg;
    char *base_url;          /* scheme://host[:port][/prefix], host possibly the tls-server-name */
    struct curl_slist *connect_to; /* tls-server-name: where that name really connects */
    char *user_agent;
    char *accept;            /* "Accept: ..." for requests that negotiate */
    bool protobuf;           /* contentType is protobuf */
    bool no_gzip;            /* options.disable_compression */
    int max_retries;
    int64_t timeout_ms, retry_base_ns;
    size_t max_response;
    ks_ratelimit rl;

    /* credentials: cred_mu guards these */
    pthread_mutex_t cred_mu;
    creds *cur;
    bool stale;              /* exec: a 401 asked for new credentials */
    int64_t exp_ns;          /* exec: expiry (wall clock), 0 none */
    struct stat token_st;    /* the token file as last read */
    char *exec_info;         /* KUBERNETES_EXEC_INFO value */

    /* the I/O thread; mu guards incoming, cancels, stopping */
    pthread_t io;
    CURLM *multi;
    pthread_mutex_t mu;
    xfer *incoming, **incoming_tail;
    ks_kube_stream *cancels;
    bool stopping;
    xfer *waiting;           /* I/O thread only: queued, not started */
    xfer *active;            /* I/O thread only: in the multi handle */
    unsigned seed;           /* I/O thread only: jitter */
    /* I/O thread only: easy handles of finished transfers, reset and
     * used again (curl_easy_init + cleanup of a handle per request was
     * a tenth of the thread's time) */
    CURL *spare[KS_KUBE_SPARE_HANDLES];
    int nspare;
    /* a wake-up is on its way to the I/O thread: submitters do not send
     * another one (one multi_wakeup per batch, not per request) */
    atomic_bool wake_pending;

    /* Dead connections, I/O thread only (client-go's HTTP/2 health check,
     * with a request for its PING): when transfers are in flight and no
     * byte has come in for read_idle_ns, a probe goes out on the same
     * connection; unanswered for ping_timeout_ns, the connection is
     * closed and its transfers end as connection errors. */
    int64_t read_idle_ns, ping_timeout_ns; /* read_idle_ns 0: off */
    int64_t watch_grace_ms;
    int64_t last_rx_ns;
    xfer *probe;

    pthread_mutex_t stats_mu;
    ks_kube_client_stats stats;
};

static void xfer_free(xfer *x) {
    if (!x) return;
    free(x->method);
    free(x->path);
    free(x->content_type);
    free(x->body);
    creds_unref(x->cr);
    ks_sb_free(&x->resp);
    free(x);
}

/* ---- the exec credential plugin --------------------------------------- */


/* KUBERNETES_EXEC_INFO: an ExecCredential with the spec the plugin gets
 * (the cluster only with provideClusterInfo). */
static char *exec_info_json(const ks_kube_config *cfg) {
    json_t *spec = json_object();
    json_object_set_new(spec, "interactive", json_false());
    if (cfg->exec->provide_cluster_info) {
        json_t *cl = json_object();
        json_object_set_new(cl, "server", json_string(cfg->server));
        if (cfg->tls_server_name) json_object_set_new(cl, "tls-server-name", json_string(cfg->tls_server_name));
        if (cfg->insecure) json_object_set_new(cl, "insecure-skip-tls-verify", json_true());
        char *ca = NULL;
        size_t ca_len = 0;
        if (cfg->ca_data) {
            ca = b64_encode(cfg->ca_data, cfg->ca_len);
        } else if (cfg->ca_file) {
            FILE *f = fopen(cfg->ca_file, "rb");
            if (f) {
                ks_strbuf b;
                ks_sb_init(&b);
                char buf[4096];
                size_t n;
                while ((n = fread(buf, 1, sizeof(buf), f)) > 0) ks_sb_putn(&b, buf, n);
                fclose(f);
                ca_len = b.len;
                ca = b64_encode(ks_sb_str(&b), ca_len);
                ks_sb_free(&b);
            }
        }
        if (ca) json_object_set_new(cl, "certificate-authority-data", json_string(ca));
        free(ca);
        if (cfg->proxy_url) json_object_set_new(cl, "proxy-url", json_string(cfg->proxy_url));
        if (cfg->disable_compression) json_object_set_new(cl, "disable-compression", json_true());
        json_object_set_new(spec, "cluster", cl);
    }
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string("ExecCredential"));
    json_object_set_new(o, "apiVersion", json_string(cfg->exec->api_version));
    json_object_set_new(o, "spec", spec);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* Run the plugin (stdin /dev/null, stderr inherited), read its
 * ExecCredential from stdout. Called with cred_mu held: one run at a time. */
static creds *run_exec(ks_kube_client *c, int64_t *exp_ns, char **err) {
    const ks_kube_exec *ex = c->cfg.exec;
    size_t na = 0, ne = 0, nenv = 0;
    while (ex->args && ex->args[na]) na++;
    while (ex->env && ex->env[ne]) ne++;
    while (environ && environ[nenv]) nenv++;
    char **argv = ks_xcalloc(na + 2, sizeof(char *));
    argv[0] = ex->command;
    for (size_t i = 0; i < na; i++) argv[i + 1] = ex->args[i];
    char **envp = ks_xcalloc(nenv + ne + 2, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) != 0) envp[k++] = environ[i];
    for (size_t i = 0; i < ne; i++) envp[k++] = ex->env[i];
    char *info = ks_xasprintf("KUBERNETES_EXEC_INFO=%s", c->exec_info);
    envp[k++] = info;

    creds *cr = NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        ks_set_error(err, "exec plugin %s: pipe: %s", ex->command, strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    pid_t pid;
    int rc = posix_spawnp(&pid, ex->command, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        if (rc == ENOENT)
            ks_set_error(err, "exec plugin: executable %s not found%s%s", ex->command, ex->install_hint ? "\n\n" : "",
                 ex->install_hint ? ex->install_hint : "");
        else
            ks_set_error(err, "exec plugin %s: %s", ex->command, strerror(rc));
        goto out;
    }
    ks_strbuf out;
    ks_sb_init(&out);
    char buf[4096];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof(buf));
        if (n > 0) ks_sb_putn(&out, buf, (size_t)n);
        else if (n == 0 || errno != EINTR) break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status))
            ks_set_error(err, "exec plugin: executable %s failed with exit code %d", ex->command, WEXITSTATUS(status));
        else
            ks_set_error(err, "exec plugin: executable %s was killed by signal %d", ex->command, WTERMSIG(status));
        ks_sb_free(&out);
        goto out;
    }
    json_error_t je;
    json_t *o = json_loadb(ks_sb_str(&out), out.len, 0, &je);
    ks_sb_free(&out);
    if (!json_is_object(o)) {
        ks_set_error(err, "exec plugin %s: decoding stdout: %s", ex->command, o ? "not a JSON object" : je.text);
        json_decref(o);
        goto out;
    }
    const char *api = json_string_value(json_object_get(o, "apiVersion"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    json_t *st = json_object_get(o, "status");
    const char *token = json_string_value(json_object_get(st, "token"));
    const char *cert = json_string_value(json_object_get(st, "clientCertificateData"));
    const char *key = json_string_value(json_object_get(st, "clientKeyData"));
    const char *exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    if (token && !*token) token = NULL;
    if (cert && !*cert) cert = NULL;
    if (key && !*key) key = NULL;
    int64_t e = 0;
    if (!kind || strcmp(kind, "ExecCredential") != 0)
        ks_set_error(err, "exec plugin %s: decoding stdout: kind is \"%s\", not ExecCredential", ex->command, kind ? kind : "");
    else if (!api || strcmp(api, ex->api_version) != 0)
        ks_set_error(err, "exec plugin %s is configured to use API version %s, plugin returned version %s", ex->command,
             ex->api_version, api ? api : "\"\"");
    else if (!json_is_object(st))
        ks_set_error(err, "exec plugin %s didn't return a status field", ex->command);
    else if (!token && !cert && !key)
        ks_set_error(err, "exec plugin %s didn't return a token or cert/key pair", ex->command);
    else if (!cert != !key)
        ks_set_error(err, "exec plugin %s returned only certificate or key, not both", ex->command);
    else if (exp && !ks_time_parse_rfc3339(exp, &e))
        ks_set_error(err, "exec plugin %s: status.expirationTimestamp: cannot parse \"%s\"", ex->command, exp);
    else {
        cr = creds_new();
        if (token) cr->auth = ks_xasprintf("Authorization: Bearer %s", token);
        if (cert) {
            cr->cert = ks_xstrdup(cert);
            cr->cert_len = strlen(cert);
            cr->key = ks_xstrdup(key);
            cr->key_len = strlen(key);
        }
        *exp_ns = e;
    }
    json_decref(o);
out:
    free(info);
    free(argv);
    free(envp);
    return cr;
}

/* Read the token file when it is new or changed; keep the last good
 * token when a read fails (client-go's cached file token source). */
static bool refresh_token_file(ks_kube_client *c, char **err) {
    struct stat st;
    if (stat(c->cfg.token_file, &st) != 0) {
        if (c->cur) return true;
        return ks_set_error(err, "cannot read the token file %s: %s", c->cfg.token_file, strerror(errno));
    }
    if (c->cur && st.st_mtim.tv_sec == c->token_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == c->token_st.st_mtim.tv_nsec && st.st_ino == c->token_st.st_ino &&
        st.st_size == c->token_st.st_size)
        return true;
    FILE *f = fopen(c->cfg.token_file, "rb");
    ks_strbuf b;
    ks_sb_init(&b);
    if (f) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0) ks_sb_putn(&b, buf, n);
        fclose(f);
    }
    /* the token is the file's text without surrounding blanks */
    const char *s = ks_sb_str(&b);
    size_t n = b.len;
    while (n && strchr(" \t\r\n", s[n - 1])) n--;
    while (n && strchr(" \t\r\n", *s)) s++, n--;
    if (!f || n == 0) {
        ks_sb_free(&b);
        if (c->cur) return true;
        return ks_set_error(err, "token file %s: %s", c->cfg.token_file, f ? "empty" : strerror(errno));
    }
    creds *cr = creds_new();
    cr->auth = ks_xasprintf("Authorization: Bearer %.*s", (int)n, s);
    ks_sb_free(&b);
    creds_unref(c->cur);
    c->cur = cr;
    c->token_st = st;
    return true;
}

/* The credentials for a request about to be made, with a reference for it. */
static creds *creds_acquire(ks_kube_client *c, char **err) {
    pthread_mutex_lock(&c->cred_mu);
    bool ok = true;
    if (c->cfg.token_file && !c->cfg.token) {
        ok = refresh_token_file(c, err);
    } else if (c->cfg.exec && !c->cfg.token && !c->cfg.username && !c->cfg.cert_file && !c->cfg.cert_data) {
        /* the plugin runs when there are no credentials yet, after a 401,
         * and once they expire; static credentials win over it (client-go) */
        if (!c->cur || c->stale || (c->exp_ns && ks_wall_ns() >= c->exp_ns)) {
            int64_t exp = 0;
            creds *cr = run_exec(c, &exp, err);
            if (cr) {
                creds_unref(c->cur);
                c->cur = cr;
                c->exp_ns = exp;
                c->stale = false;
            } else {
                ok = false;
            }
        }
    }
    creds *cr = NULL;
    if (ok) {
        cr = c->cur;
        if (!cr) c->cur = cr = creds_new(); /* anonymous */
        atomic_fetch_add(&cr->refs, 1);
    }
    pthread_mutex_unlock(&c->cred_mu);
    return cr;
}

/* A 401 with these credentials: the exec plugin runs again next time. */
static void creds_rejected(ks_kube_client *c, creds *cr) {
    if (!c->cfg.exec) return;
    pthread_mutex_lock(&c->cred_mu);
    if (c->cur == cr) c->stale = true;
    pthread_mutex_unlock(&c->cred_mu);
}

/* ---- the I/O thread ------------------------------------------------------- */

long ks_kube_parse_retry_after(const char *v, size_t n) {
    while (n && (*v == ' ' || *v == '\t')) v++, n--;
    while (n && strchr(" \t\r\n", v[n - 1])) n--;
    if (n == 0 || n > 9) return -1;
    long s = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        s = s * 10 + (v[i] - '0');
    }
    return s;
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg) {
    xfer *x = arg;
    size_t len = size * n;
    x->client->last_rx_ns = ks_monotonic_ns();
    if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0) x->retry_after = -1; /* a new answer (after 100 Continue, ...) */
    else if (len > 12 && strncasecmp(buf, "Retry-After:", 12) == 0)
        x->retry_after = ks_kube_parse_retry_after(buf + 12, len - 12);
    return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg) {
    xfer *x = arg;
    size_t len = size * n;
    x->client->last_rx_ns = ks_monotonic_ns();
    if (x->stream) {
        long code = 0;
        ks_curl(NULL)->easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200 && code < 300) {
            x->stream->data(x->stream->arg, buf, len);
            return len;
        }
        /* an error answer's Status, for the end callback's message */
        if (x->resp.len < 65536) ks_sb_putn(&x->resp, buf, len);
        return len;
    }
    /* a hostile or broken server cannot make the client buffer without
     * bound: stop the transfer (finished() gives the message) */
    if (len > x->max_resp - x->resp.len) {
        x->too_big = true;
        return 0;
    }
    ks_sb_putn(&x->resp, buf, len);
    return len;
}

/* Not copied: the configuration's PEM lives as long as the client, an exec
 * plugin's as long as the transfer's credentials reference. */
static void set_blob(const ks_curl_api *C, CURL *h, CURLoption opt, const char *data, size_t len) {
    struct curl_blob b = {.data = (void *)data, .len = len, .flags = CURL_BLOB_NOCOPY};
    C->easy_setopt(h, opt, &b);
}

static bool start(ks_kube_client *c, xfer *x) {
    const ks_curl_api *C = c->C;
    CURL *h;
    if (c->nspare) {
        h = c->spare[--c->nspare];
        C->easy_reset(h);
    } else if (!(h = C->easy_init())) {
        return false;
    }
    x->easy = h;
    x->client = c;
    x->retry_after = -1;
    x->max_resp = c->max_response;
    x->too_big = false;
    x->errbuf[0] = '\0';
    ks_sb_reset(&x->resp);
    char *url = ks_xasprintf("%s%s", c->base_url, x->path);
    C->easy_setopt(h, CURLOPT_URL, url);
    free(url);
    C->easy_setopt(h, CURLOPT_PRIVATE, x);
    C->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    C->easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
    C->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    C->easy_setopt(h, CURLOPT_HEADERDATA, x);
    C->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    C->easy_setopt(h, CURLOPT_WRITEDATA, x);
    C->easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
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
    if (!c->cfg.disable_compression && !c->no_gzip) C->easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    if (c->connect_to) C->easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
    if (c->cfg.proxy_url) C->easy_setopt(h, CURLOPT_PROXY, c->cfg.proxy_url);
    if (c->timeout_ms > 0 && !x->stream) C->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
    if (x->deadline_ms > 0) C->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)x->deadline_ms);
    /* TLS */
    C->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->cfg.insecure ? 0L : 1L);
    C->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->cfg.insecure ? 0L : 2L);
    if (c->cfg.ca_data) set_blob(C, h, CURLOPT_CAINFO_BLOB, c->cfg.ca_data, c->cfg.ca_len);
    else if (c->cfg.ca_file) C->easy_setopt(h, CURLOPT_CAINFO, c->cfg.ca_file);
    const char *cert = c->cfg.cert_data, *key = c->cfg.key_data;
    size_t cert_len = c->cfg.cert_len, key_len = c->cfg.key_len;
    if (x->cr && x->cr->cert) {
        cert = x->cr->cert, cert_len = x->cr->cert_len;
        key = x->cr->key, key_len = x->cr->key_len;
    }
    if (cert) {
        set_blob(C, h, CURLOPT_SSLCERT_BLOB, cert, cert_len);
        C->easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        set_blob(C, h, CURLOPT_SSLKEY_BLOB, key, key_len);
        C->easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (c->cfg.cert_file) {
        /* files are read at each handshake: rotated certificates are picked up */
        C->easy_setopt(h, CURLOPT_SSLCERT, c->cfg.cert_file);
        C->easy_setopt(h, CURLOPT_SSLKEY, c->cfg.key_file);
    }
    /* headers */
    struct curl_slist *hd = NULL;
    hd = C->slist_append(hd, x->negotiate ? c->accept : "Accept: application/json");
    hd = C->slist_append(hd, "Expect:"); /* no 100-continue round trip for bodies */
    if (x->cr && x->cr->auth) hd = C->slist_append(hd, x->cr->auth);
    if (x->body) {
        char ct[256];
        snprintf(ct, sizeof(ct), "Content-Type: %s", x->content_type ? x->content_type : "application/json");
        hd = C->slist_append(hd, ct);
    }
    x->hdrs = hd;
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
    x->started_ns = ks_monotonic_ns();
    x->attempts++;
    if (C->multi_add_handle(c->multi, h) != CURLM_OK) {
        C->easy_cleanup(h);
        C->slist_free_all(x->hdrs);
        x->easy = NULL;
        x->hdrs = NULL;
        return false;
    }
    x->next = c->active;
    c->active = x;
    return true;
}

static void detach(ks_kube_client *c, xfer *x) {
    for (xfer **p = &c->active; *p; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            break;
        }
    c->C->multi_remove_handle(c->multi, x->easy);
    if (c->nspare < KS_KUBE_SPARE_HANDLES) c->spare[c->nspare++] = x->easy;
    else c->C->easy_cleanup(x->easy);
    c->C->slist_free_all(x->hdrs);
    x->easy = NULL;
    x->hdrs = NULL;
    x->next = NULL;
}

static void cancel_seen(ks_kube_stream *s) {
    pthread_mutex_lock(&s->mu);
    s->cancel_pending = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The request is over: hand the result over and free it. */
static void complete(ks_kube_client *c, xfer *x, long code, const char *error) {
    if (x->stream) {
        ks_kube_stream *s = x->stream;
        char *msg = NULL;
        if (!error && (code < 200 || code >= 300)) {
            msg = ks_kube_status_message(ks_sb_str(&x->resp), x->resp.len);
            if (!msg) msg = ks_xasprintf("HTTP %ld", code);
        }
        s->end(s->arg, code, error ? error : msg);
        free(msg);
        pthread_mutex_lock(&s->mu);
        s->x = NULL;
        s->ended = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        xfer_free(x);
        return;
    }
    ks_kube_response r = {.code = code, .retries = x->attempts > 0 ? x->attempts - 1 : 0};
    if (error) r.error = ks_xstrdup(error);
    if (code) {
        r.body_len = x->resp.len;
        r.body = x->resp.s ? ks_sb_take(&x->resp) : ks_xstrdup("");
    }
    if (x->sync) {
        sync_wait *w = x->sync;
        pthread_mutex_lock(&w->mu);
        *w->out = r;
        w->done = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
    } else {
        if (x->done) x->done(x->arg, &r);
        ks_kube_response_free(&r);
    }
    xfer_free(x);
}

/* Queue for a later attempt (I/O thread). */
static void requeue(ks_kube_client *c, xfer *x, int64_t delay_ns) {
    x->due_ns = ks_monotonic_ns() + delay_ns;
    x->need_token = true;
    x->next = c->waiting;
    c->waiting = x;
}

static int64_t backoff_ns(ks_kube_client *c, int attempt) {
    int64_t d = c->retry_base_ns;
    for (int i = 1; i < attempt && d < 8 * KS_NS_PER_SEC; i++) d *= 2;
    if (d > 8 * KS_NS_PER_SEC) d = 8 * KS_NS_PER_SEC;
    /* up to a quarter more, so that many clients do not come back together */
    return d + (int64_t)((double)rand_r(&c->seed) / RAND_MAX * (double)d / 4);
}

static void count(ks_kube_client *c, long code, bool retry) {
    pthread_mutex_lock(&c->stats_mu);
    c->stats.requests++;
    if (retry) c->stats.retries++;
    if (code == 0) c->stats.errors_conn++;
    else if (code >= 200 && code < 300) c->stats.errors_2xx++;
    else if (code >= 400 && code < 500) c->stats.errors_4xx++;
    else if (code >= 500) c->stats.errors_5xx++;
    pthread_mutex_unlock(&c->stats_mu);
}

/* host[:port] of a URL, for the rest_client_* metrics' host label. */
static void url_host(const char *url, char *buf, size_t n) {
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    size_t len = strcspn(h, "/");
    snprintf(buf, n, "%.*s", (int)len, h);
}

static void finished(ks_kube_client *c, xfer *x, CURLcode rc) {
    long code = 0;
    if (rc == CURLE_OK) c->C->easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
    detach(c, x);
    char *error = NULL;
    if (x->too_big)
        error = ks_xasprintf("an answer larger than the limit of %zu bytes", x->max_resp);
    else if (rc != CURLE_OK) error = ks_xstrdup(x->errbuf[0] ? x->errbuf : c->C->easy_strerror(rc));
    ks_infof(6, "%s %s%s %ld %s in %lld ms", x->method, c->base_url, x->path, code, error ? error : "",
             (long long)((ks_monotonic_ns() - x->started_ns) / KS_NS_PER_MS));
    if (code == 401) creds_rejected(c, x->cr);
    int64_t delay = -1;
    if (!x->stream && !x->too_big && x->attempts <= c->max_retries) {
        if (rc != CURLE_OK) {
            if (x->idempotent) delay = backoff_ns(c, x->attempts);
        } else if (code == 429 || code >= 500) {
            if (x->retry_after >= 0) delay = x->retry_after * KS_NS_PER_SEC;
            else if (code == 429 || x->idempotent) delay = backoff_ns(c, x->attempts);
        }
    }
    count(c, code, x->attempts > 1);
    char host[256];
    url_host(c->base_url, host, sizeof(host));
    ks_sm_rest_request(x->method, host, code, (double)(ks_monotonic_ns() - x->started_ns) / 1e9);
    if (delay >= 0) ks_sm_rest_retry(x->method, host, code);
    if (delay >= 0) {
        ks_infof(4, "%s %s: %s, retry %d in %lld ms", x->method, x->path,
                 error ? error : (code == 429 ? "429 Too Many Requests" : "server error"), x->attempts,
                 (long long)(delay / KS_NS_PER_MS));
        free(error);
        requeue(c, x, delay);
        return;
    }
    complete(c, x, code, error);
    free(error);
}

/* Start what is due; take tokens for what needs one. Returns the next due time. */
static int64_t run_waiting(ks_kube_client *c) {
    int64_t now = ks_monotonic_ns(), next = INT64_MAX;
    xfer *keep = NULL, *x = c->waiting;
    c->waiting = NULL;
    while (x) {
        xfer *nx = x->next;
        if (x->due_ns <= now && x->need_token) {
            /* a retry is rate limited again (client-go's tryThrottle) */
            x->need_token = false;
            int64_t w = ks_ratelimit_reserve(&c->rl, now);
            char host[256];
            url_host(c->base_url, host, sizeof(host));
            ks_sm_rest_rate_limited(x->method, host, w > 0 ? (double)w / 1e9 : 0);
            if (w > 0) {
                pthread_mutex_lock(&c->stats_mu);
                c->stats.throttled_ns += w;
                pthread_mutex_unlock(&c->stats_mu);
                x->due_ns = now + w;
            }
        }
        if (x->due_ns <= now) {
            if (!start(c, x)) complete(c, x, 0, "cannot start a transfer");
        } else {
            if (x->due_ns < next) next = x->due_ns;
            x->next = keep;
            keep = x;
        }
        x = nx;
    }
    /* complete() may not add to waiting, but finished() may have while we ran: merge */
    while (keep) {
        xfer *nx = keep->next;
        keep->next = c->waiting;
        c->waiting = keep;
        keep = nx;
    }
    return next;
}

/* ---- dead connections ------------------------------------------------------ */

static xfer *xfer_new(const ks_kube_request *req);

/* The probe ended: any answer means the connection is alive. */
static void probe_finished(ks_kube_client *c, CURLcode rc) {
    xfer *x = c->probe;
    c->probe = NULL;
    detach(c, x);
    if (rc != CURLE_OK && rc != CURLE_OPERATION_TIMEDOUT)
        ks_infof(2, "probe of the API server connection failed: %s", x->errbuf[0] ? x->errbuf : c->C->easy_strerror(rc));
    xfer_free(x);
}

/* The connection stopped answering: every transfer on it ends as a
 * connection error (retried when idempotent; watches are opened again),
 * and none may leave it in the pool for the retries to find: the last
 * one removed closes it. */
static void connection_dead(ks_kube_client *c, int64_t silent_ns) {
    const ks_curl_api *C = c->C;
    int n = 0;
    for (xfer *x = c->active; x; x = x->next) n++;
    ks_errorf("\"No answer from the API server; closing the connection\" silentSeconds=%.1f probeTimeoutSeconds=%.1f requests=%d",
              (double)silent_ns / 1e9, (double)c->ping_timeout_ns / 1e9, n - (c->probe != NULL));
    /* counted before the requests end: their callers may read it then */
    pthread_mutex_lock(&c->stats_mu);
    c->stats.dead_connections++;
    pthread_mutex_unlock(&c->stats_mu);
    for (xfer *x = c->active; x; x = x->next) C->easy_setopt(x->easy, CURLOPT_FORBID_REUSE, 1L);
    if (c->probe) {
        xfer *p = c->probe;
        c->probe = NULL;
        detach(c, p);
        xfer_free(p);
    }
    while (c->active) {
        xfer *x = c->active;
        snprintf(x->errbuf, sizeof(x->errbuf), "connection closed: no answer from the server for %lld s",
                 (long long)(silent_ns / KS_NS_PER_SEC));
        finished(c, x, CURLE_OPERATION_TIMEDOUT); /* detaches it */
    }
    c->last_rx_ns = ks_monotonic_ns();
}

static void check_alive(ks_kube_client *c) {
    if (c->read_idle_ns <= 0) return;
    int64_t now = ks_monotonic_ns();
    bool busy = false;
    for (xfer *x = c->active; x && !busy; x = x->next) busy = x != c->probe;
    if (!busy) {
        /* nothing to lose: the silence counts from the next request */
        c->last_rx_ns = now;
        return;
    }
    if (c->probe) {
        if (now - c->probe->started_ns >= c->ping_timeout_ns) connection_dead(c, now - c->last_rx_ns);
        return;
    }
    if (now - c->last_rx_ns < c->read_idle_ns) return;
    /* The PING: a small GET multiplexed on the same HTTP/2 connection,
     * without credentials or a rate-limit token (any answer will do). */
    ks_kube_request req = {.method = "GET", .path = "/version"};
    xfer *p = xfer_new(&req);
    p->deadline_ms = c->ping_timeout_ns / KS_NS_PER_MS + 1000;
    if (!start(c, p)) {
        xfer_free(p);
        return;
    }
    c->probe = p;
    ks_infof(4, "no byte from the API server for %lld ms: probing the connection",
             (long long)((now - c->last_rx_ns) / KS_NS_PER_MS));
}

/* s->x is only ever changed on the I/O thread, which this is; the stream
 * may have ended on its own since close queued the cancel. */
static void cancel_stream(ks_kube_client *c, ks_kube_stream *s) {
    xfer *x = s->x;
    if (x) {
        if (x->easy) {
            detach(c, x);
        } else {
            for (xfer **p = &c->waiting; *p; p = &(*p)->next)
                if (*p == x) {
                    *p = x->next;
                    break;
                }
        }
        complete(c, x, 0, "cancelled");
    }
    cancel_seen(s);
}

static void *io_main(void *arg) {
    pthread_setname_np(pthread_self(), "kube-io"); /* top -H, pprof's thread label */
    ks_kube_client *c = arg;
    const ks_curl_api *C = c->C;
    for (;;) {
        /* cleared before the queue is taken: a request queued after this
         * sends a wake-up of its own */
        atomic_store(&c->wake_pending, false);
        pthread_mutex_lock(&c->mu);
        xfer *in = c->incoming;
        c->incoming = NULL;
        c->incoming_tail = &c->incoming;
        ks_kube_stream *cancels = c->cancels;
        c->cancels = NULL;
        bool stop = c->stopping;
        pthread_mutex_unlock(&c->mu);
        while (in) {
            xfer *nx = in->next;
            in->next = c->waiting;
            c->waiting = in;
            in = nx;
        }
        while (cancels) {
            ks_kube_stream *nx = cancels->next_cancel;
            cancel_stream(c, cancels);
            cancels = nx;
        }
        if (stop) break;
        int64_t next = run_waiting(c);
        int running = 0;
        C->multi_perform(c->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = C->multi_info_read(c->multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            xfer *x = NULL;
            C->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            if (x == c->probe) probe_finished(c, m->data.result);
            else finished(c, x, m->data.result);
        }
        check_alive(c);
        /* a retry queued just now may be due before `next` */
        for (xfer *x = c->waiting; x; x = x->next)
            if (x->due_ns < next) next = x->due_ns;
        /* the health check's next moment */
        if (c->read_idle_ns > 0 && c->active) {
            int64_t h = c->probe ? c->probe->started_ns + c->ping_timeout_ns : c->last_rx_ns + c->read_idle_ns;
            if (h < next) next = h;
        }
        int timeout = 1000;
        if (next != INT64_MAX) {
            int64_t d = (next - ks_monotonic_ns()) / KS_NS_PER_MS + 1;
            timeout = d < 0 ? 0 : d < timeout ? (int)d : timeout;
        }
        C->multi_poll(c->multi, NULL, 0, timeout, NULL);
    }
    /* stopping: everything still here ends as cancelled */
    if (c->probe) {
        xfer *p = c->probe;
        c->probe = NULL;
        detach(c, p);
        xfer_free(p);
    }
    while (c->active) {
        xfer *x = c->active;
        detach(c, x);
        complete(c, x, 0, "cancelled");
    }
    while (c->waiting) {
        xfer *x = c->waiting;
        c->waiting = x->next;
        complete(c, x, 0, "cancelled");
    }
    while (c->nspare) C->easy_cleanup(c->spare[--c->nspare]);
    return NULL;
}

/* ---- public API ----------------------------------------------------------- */

/* Split the server URL so that a tls-server-name can stand for the host
 * (the name curl verifies and sends as SNI) while CONNECT_TO sends the
 * connection to the real host. */
static bool setup_url(ks_kube_client *c, char **err) {
    const char *s = c->cfg.server;
    const char *sep = strstr(s, "://");
    if (!sep) return ks_set_error(err, "server %s: not a URL", s);
    const char *host = sep + 3;
    const char *end = host + strcspn(host, "/");
    if (end == host) return ks_set_error(err, "server %s: no host", s);
    const char *hp_end = end;
    /* host[:port], host may be [v6] */
    const char *port = NULL;
    const char *hend = hp_end;
    if (*host == '[') {
        const char *rb = memchr(host, ']', (size_t)(hp_end - host));
        if (!rb) return ks_set_error(err, "server %s: bad IPv6 address", s);
        hend = rb + 1;
        if (hend < hp_end && *hend == ':') port = hend + 1;
    } else {
        const char *colon = memchr(host, ':', (size_t)(hp_end - host));
        if (colon) hend = colon, port = colon + 1;
    }
    bool https = strncmp(s, "https", 5) == 0;
    char *portstr = port ? ks_xstrndup(port, (size_t)(hp_end - port)) : ks_xstrdup(https ? "443" : "80");
    char *hoststr = ks_xstrndup(host, (size_t)(hend - host));
    if (c->cfg.tls_server_name && https) {
        c->base_url = ks_xasprintf("%.*s%s:%s%s", (int)(host - s), s, c->cfg.tls_server_name, portstr, end);
        char *ct = ks_xasprintf("%s:%s:%s:%s", c->cfg.tls_server_name, portstr, hoststr, portstr);
        c->connect_to = c->C->slist_append(NULL, ct);
        free(ct);
    } else {
        c->base_url = ks_xstrdup(s);
    }
    free(portstr);
    free(hoststr);
    size_t n = strlen(c->base_url);
    while (n && c->base_url[n - 1] == '/') c->base_url[--n] = '\0';
    return true;
}

/* A whole number of seconds from the environment (client-go's
 * readIdleTimeoutSeconds / pingTimeoutSeconds), def when unset or bad. */
static int64_t env_seconds(const char *name, int64_t def) {
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end || n < 0 || n > 86400) {
        ks_warnf("Illegal %s(\"%s\"). Default value %lld is used", name, v, (long long)def);
        return def;
    }
    return n;
}

ks_kube_client *ks_kube_client_new(const ks_kube_client_options *o, char **err) {
    *err = NULL;
    const char *why = NULL;
    const ks_curl_api *C = ks_curl(&why);
    if (!C) {
        ks_set_error(err, "API server client: %s", why);
        return NULL;
    }
    if (!o->config || !o->config->server) {
        ks_set_error(err, "API server client: no server configured");
        return NULL;
    }
    ks_kube_client *c = ks_xcalloc(1, sizeof(*c));
    c->C = C;
    ks_kube_config_copy(&c->cfg, o->config);
    if (!setup_url(c, err)) {
        ks_kube_config_free(&c->cfg);
        free(c);
        return NULL;
    }
    const char *ua = o->user_agent ? o->user_agent : "ksched/" KS_VERSION " (linux/" KS_ARCH ")";
    c->user_agent = o->user_agent_suffix ? ks_xasprintf("%s/%s", ua, o->user_agent_suffix) : ks_xstrdup(ua);
    if (o->accept_content_types && *o->accept_content_types)
        c->accept = ks_xasprintf("Accept: %s", o->accept_content_types);
    else if (o->content_type && *o->content_type)
        c->accept = ks_xasprintf("Accept: %s, */*", o->content_type);
    else
        c->accept = ks_xstrdup("Accept: application/json");
    c->protobuf = o->content_type && strcmp(o->content_type, KS_KUBE_PROTOBUF) == 0;
    c->no_gzip = o->disable_compression;
    c->max_retries = o->max_retries > 0 ? o->max_retries : 10;
    c->timeout_ms = o->timeout_ms;
    c->max_response = o->max_response_bytes ? o->max_response_bytes : KS_KUBE_MAX_RESPONSE;
    c->retry_base_ns = (o->retry_base_ms > 0 ? o->retry_base_ms : 500) * KS_NS_PER_MS;
    int64_t idle_ms = o->read_idle_ms ? o->read_idle_ms : env_seconds("HTTP2_READ_IDLE_TIMEOUT_SECONDS", 30) * 1000;
    int64_t ping_ms = o->ping_timeout_ms > 0 ? o->ping_timeout_ms
                                             : env_seconds("HTTP2_PING_TIMEOUT_SECONDS", 15) * 1000;
    c->read_idle_ns = idle_ms > 0 ? idle_ms * KS_NS_PER_MS : 0;
    c->ping_timeout_ns = (ping_ms > 0 ? ping_ms : 15000) * KS_NS_PER_MS;
    c->last_rx_ns = ks_monotonic_ns();
    c->watch_grace_ms = o->watch_grace_ms > 0 ? o->watch_grace_ms : KS_KUBE_WATCH_GRACE_S * 1000;
    ks_ratelimit_init(&c->rl, o->qps, o->burst, ks_monotonic_ns());
    c->seed = (unsigned)ks_monotonic_ns();
    pthread_mutex_init(&c->cred_mu, NULL);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->stats_mu, NULL);
    c->incoming_tail = &c->incoming;
    if (c->cfg.exec) c->exec_info = exec_info_json(&c->cfg);
    if (!c->cfg.token_file && !c->cfg.exec) {
        /* static credentials: built once */
        creds *cr = creds_new();
        if (c->cfg.token) {
            cr->auth = ks_xasprintf("Authorization: Bearer %s", c->cfg.token);
        } else if (c->cfg.username || c->cfg.password) {
            char *up = ks_xasprintf("%s:%s", c->cfg.username ? c->cfg.username : "",
                                    c->cfg.password ? c->cfg.password : "");
            char *b = b64_encode(up, strlen(up));
            cr->auth = ks_xasprintf("Authorization: Basic %s", b);
            free(b);
            free(up);
        }
        c->cur = cr;
    }
    c->multi = C->multi_init();
    if (!c->multi) {
        ks_set_error(err, "API server client: curl_multi_init failed");
        goto bad;
    }
    C->multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    if (pthread_create(&c->io, NULL, io_main, c) != 0) {
        ks_set_error(err, "API server client: cannot start its thread");
        C->multi_cleanup(c->multi);
        goto bad;
    }
    return c;
bad:
    creds_unref(c->cur);
    free(c->exec_info);
    free(c->user_agent);
    free(c->accept);
    free(c->base_url);
    C->slist_free_all(c->connect_to);
    ks_ratelimit_destroy(&c->rl);
    ks_kube_config_free(&c->cfg);
    free(c);
    return NULL;
}

void ks_kube_client_free(ks_kube_client *c) {
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    pthread_mutex_unlock(&c->mu);
    c->C->multi_wakeup(c->multi);
    pthread_join(c->io, NULL);
    /* requests queued after the thread looked for the last time */
    pthread_mutex_lock(&c->mu);
    xfer *in = c->incoming;
    c->incoming = NULL;
    pthread_mutex_unlock(&c->mu);
    while (in) {
        xfer *x = in;
        in = x->next;
        complete(c, x, 0, "cancelled");
    }
    /* every stream has ended now; closes that queued a cancel the thread
     * did not see are told here */
    pthread_mutex_lock(&c->mu);
    ks_kube_stream *cl = c->cancels;
    c->cancels = NULL;
    pthread_mutex_unlock(&c->mu);
    while (cl) {
        ks_kube_stream *s = cl;
        cl = s->next_cancel;
        cancel_seen(s);
    }
    c->C->multi_cleanup(c->multi);
    c->C->slist_free_all(c->connect_to);
    creds_unref(c->cur);
    free(c->exec_info);
    free(c->user_agent);
    free(c->accept);
    free(c->base_url);
    ks_ratelimit_destroy(&c->rl);
    pthread_mutex_destroy(&c->cred_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->stats_mu);
    ks_kube_config_free(&c->cfg);
    free(c);
}

void ks_kube_response_free(ks_kube_response *r) {
    if (!r) return;
    free(r->body);
    free(r->error);
    memset(r, 0, sizeof(*r));
}

static xfer *xfer_new(const ks_kube_request *req) {
    xfer *x = ks_xcalloc(1, sizeof(*x));
    x->method = ks_xstrdup(req->method ? req->method : "GET");
    x->path = ks_xstrdup(req->path);
    x->content_type = req->content_type ? ks_xstrdup(req->content_type) : NULL;
    x->negotiate = req->negotiate;
    if (req->body) {
        x->body = ks_xmalloc(req->body_len + 1);
        memcpy(x->body, req->body, req->body_len);
        x->body[req->body_len] = '\0';
        x->body_len = req->body_len;
    }
    x->idempotent = req->idempotent;
    ks_sb_init(&x->resp);
    return x;
}

/* Hand a new request to the I/O thread: credentials now (on the caller's
 * thread: an exec plugin runs here, not on the I/O thread), a token from
 * the rate limiter, then the queue. False (x freed, *err set) when there
 * are no credentials or the client is stopping. */
static bool submit(ks_kube_client *c, xfer *x, char **err) {
    x->cr = creds_acquire(c, err);
    if (!x->cr) return false;
    int64_t now = ks_monotonic_ns();
    int64_t w = ks_ratelimit_reserve(&c->rl, now);
    char host[256];
    url_host(c->base_url, host, sizeof(host));
    ks_sm_rest_rate_limited(x->method, host, w > 0 ? (double)w / 1e9 : 0);
    if (w > 0) {
        pthread_mutex_lock(&c->stats_mu);
        c->stats.throttled_ns += w;
        pthread_mutex_unlock(&c->stats_mu);
        if (w > 50 * KS_NS_PER_MS)
            ks_infof(w > KS_NS_PER_SEC ? 1 : 3, "Waited for %lld ms due to client-side throttling: %s %s",
                     (long long)(w / KS_NS_PER_MS), x->method, x->path);
    }
    x->due_ns = now + w;
    x->need_token = false;
    pthread_mutex_lock(&c->mu);
    bool ok = !c->stopping;
    if (ok) {
        x->next = NULL;
        *c->incoming_tail = x;
        c->incoming_tail = &x->next;
    }
    pthread_mutex_unlock(&c->mu);
    if (!ok) return ks_set_error(err, "cancelled");
    if (!atomic_exchange(&c->wake_pending, true)) c->C->multi_wakeup(c->multi);
    return true;
}

static void do_once(ks_kube_client *c, const ks_kube_request *req, ks_kube_response *out) {
    memset(out, 0, sizeof(*out));
    xfer *x = xfer_new(req);
    sync_wait w = {.out = out};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    x->sync = &w;
    char *err = NULL;
    if (!submit(c, x, &err)) {
        xfer_free(x);
        out->error = err;
    } else {
        pthread_mutex_lock(&w.mu);
        while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
    }
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
}

void ks_kube_do(ks_kube_client *c, const ks_kube_request *req, ks_kube_response *out) {
    do_once(c, req, out);
    /* An exec plugin's credential refused: run the plugin again and retry
     * once (client-go only refreshes, and the next request benefits). */
    if (out->code == 401 && c->cfg.exec) {
        int retries = out->retries;
        ks_kube_response_free(out);
        do_once(c, req, out);
        out->retries += retries + 1;
    }
}

char *ks_kube_response_take_body(const ks_kube_response *r) {
    /* done gets the client's own response, which it frees after done
     * returns: what is taken here is no longer its to free */
    ks_kube_response *own = (ks_kube_response *)r;
    char *b = own->body;
    own->body = NULL;
    return b;
}

void ks_kube_do_async(ks_kube_client *c, const ks_kube_request *req, ks_kube_done_fn done, void *arg) {
    xfer *x = xfer_new(req);
    x->done = done;
    x->arg = arg;
    char *err = NULL;
    if (!submit(c, x, &err)) {
        /* no credentials or stopping: answered at once, on this thread */
        ks_kube_response r = {.error = err};
        x->done = NULL;
        xfer_free(x);
        if (done) done(arg, &r);
        ks_kube_response_free(&r);
    }
}

ks_kube_stream *ks_kube_stream_open(ks_kube_client *c, const char *path, bool negotiate, ks_kube_data_fn data,
                                    ks_kube_end_fn end, void *arg) {
    ks_kube_stream *s = ks_xcalloc(1, sizeof(*s));
    s->c = c;
    s->data = data;
    s->end = end;
    s->arg = arg;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    ks_kube_request req = {.method = "GET", .path = path, .negotiate = negotiate};
    xfer *x = xfer_new(&req);
    x->stream = s;
    s->x = x;
    const char *t = strstr(path, "timeoutSeconds=");
    if (t) {
        long long secs = strtoll(t + 15, NULL, 10);
        if (secs > 0) x->deadline_ms = secs * 1000 + c->watch_grace_ms;
    }
    char *err = NULL;
    if (!submit(c, x, &err)) {
        s->x = NULL;
        xfer_free(x);
        end(arg, 0, err);
        s->ended = true;
        free(err);
    }
    return s;
}

void ks_kube_stream_close(ks_kube_stream *s) {
    if (!s) return;
    ks_kube_client *c = s->c;
    pthread_mutex_lock(&s->mu);
    if (!s->ended) {
        /* s->mu held: the I/O thread cannot end the stream (nor the client
         * finish stopping) before the cancel is queued */
        pthread_mutex_lock(&c->mu);
        s->next_cancel = c->cancels;
        c->cancels = s;
        s->cancel_pending = true;
        pthread_mutex_unlock(&c->mu);
        c->C->multi_wakeup(c->multi);
        while (!s->ended || s->cancel_pending) pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

void ks_kube_client_stats_get(ks_kube_client *c, ks_kube_client_stats *out) {
    pthread_mutex_lock(&c->stats_mu);
    *out = c->stats;
    pthread_mutex_unlock(&c->stats_mu);
}

bool ks_kube_client_writes_protobuf(const ks_kube_client *c) { return c->protobuf; }

char *ks_kube_status_message(const char *body, size_t len) {
    if (!body || !len) return NULL;
    if (ks_pb_is_protobuf(body, len)) {
        ks_arena *a = ks_arena_new(0);
        ks_tree *t = NULL;
        char *err = NULL, *r = NULL;
        if (ks_pb_decode_object(a, body, len, &t, &err)) {
            const ks_tree *m = kt_get(t, "message");
            if (m && m->type == KT_STRING && *m->text) r = ks_xstrdup(m->text);
        }
        free(err);
        ks_arena_free(a);
        return r;
    }
    json_t *o = json_loadb(body, len, 0, NULL);
    const char *m = json_string_value(json_object_get(o, "message"));
    char *r = m && *m ? ks_xstrdup(m) : NULL;
    json_decref(o);
    return r;
}
