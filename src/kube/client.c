#include "kube/client.h"

#include "codec/pb.h"
#include "kube/client_impl.h"
#include "kube/ratelimit.h"
#include "metrics/sched_metrics.h"
#include "util/base64.h"
#include "util/clock.h"
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
#include <strings.h>
#include "util/version.h"

#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
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

typedef ks_kube_creds creds;
typedef ks_kube_xfer xfer;

/* ---- credentials -------------------------------------------------------- */
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

struct ks_kube_sync_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    ks_kube_response *out;
};
typedef ks_kube_sync_wait sync_wait;

static void xfer_free(xfer *x) {
    if (!x) return;
    free(x->method);
    free(x->path);
    free(x->content_type);
    free(x->body);
    creds_unref(x->cr);
    free(x->cred_error);
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

/* The plugin's run is known to exec_stop from its start until it has
 * exited; it is reaped only after that (exec_ended), so that the group id
 * exec_stop kills cannot be another process's. */
static void exec_started(ks_kube_io *io, pid_t pid) {
    pthread_mutex_lock(&io->exec_mu);
    io->exec_pid = pid;
    if (io->exec_stopped) kill(-pid, SIGKILL);
    pthread_mutex_unlock(&io->exec_mu);
}

static void exec_ended(ks_kube_io *io, pid_t pid) {
    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    pthread_mutex_lock(&io->exec_mu);
    io->exec_pid = 0;
    pthread_mutex_unlock(&io->exec_mu);
}

/* The last client is going: a plugin that runs now (and what it started)
 * is killed, and none starts after, so that a plugin that hangs cannot
 * hold up the free (client-go's process would simply exit). */
static void exec_stop(ks_kube_io *io) {
    pthread_mutex_lock(&io->exec_mu);
    io->exec_stopped = true;
    if (io->exec_pid > 0) kill(-io->exec_pid, SIGKILL);
    pthread_mutex_unlock(&io->exec_mu);
}

/* Run the plugin (stdin /dev/null, stderr inherited), read its
 * ExecCredential from stdout. Called with cred_mu held: one run at a time. */
static creds *run_exec(ks_kube_io *io, int64_t *exp_ns, char **err) {
    const ks_kube_exec *ex = io->cfg.exec;
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
    char *info = ks_xasprintf("KUBERNETES_EXEC_INFO=%s", io->exec_info);
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
    /* a group of its own: stopping kills what the plugin started too (a
     * script's child holding stdout would keep the read below waiting) */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, ex->command, &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    if (rc == 0) exec_started(io, pid);
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
    exec_ended(io, pid);
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
static bool refresh_token_file(ks_kube_io *io, char **err) {
    struct stat st;
    if (stat(io->cfg.token_file, &st) != 0) {
        if (io->cur) return true;
        return ks_set_error(err, "cannot read the token file %s: %s", io->cfg.token_file, strerror(errno));
    }
    if (io->cur && st.st_mtim.tv_sec == io->token_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == io->token_st.st_mtim.tv_nsec && st.st_ino == io->token_st.st_ino &&
        st.st_size == io->token_st.st_size)
        return true;
    FILE *f = fopen(io->cfg.token_file, "rb");
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
        if (io->cur) return true;
        return ks_set_error(err, "token file %s: %s", io->cfg.token_file, f ? "empty" : strerror(errno));
    }
    creds *cr = creds_new();
    cr->auth = ks_xasprintf("Authorization: Bearer %.*s", (int)n, s);
    ks_sb_free(&b);
    creds_unref(io->cur);
    io->cur = cr;
    io->token_st = st;
    return true;
}

/* Whether the exec plugin gives the credentials: static ones win over
 * it (client-go), a token file too. */
static bool exec_creds(const ks_kube_io *io) {
    const ks_kube_config *k = &io->cfg;
    return k->exec && !k->token && !k->token_file && !k->username && !k->cert_file && !k->cert_data;
}

/* The credentials for a request about to be made, with a reference for it. */
static creds *creds_acquire(ks_kube_io *io, char **err) {
    pthread_mutex_lock(&io->cred_mu);
    bool ok = true;
    if (io->cfg.token_file && !io->cfg.token) {
        ok = refresh_token_file(io, err);
    } else if (exec_creds(io)) {
        /* the plugin runs when there are no credentials yet, after a 401
         * refused the current ones, and once they expire */
        if (!io->cur || atomic_load(&io->rejected_gen) == io->cur->gen || (io->exp_ns && ks_wall_ns() >= io->exp_ns)) {
            int64_t exp = 0;
            creds *cr = run_exec(io, &exp, err);
            if (cr) {
                creds_unref(io->cur);
                cr->gen = ++io->cred_gen;
                io->cur = cr;
                io->exp_ns = exp;
            } else {
                ok = false;
            }
        }
    }
    creds *cr = NULL;
    if (ok) {
        cr = io->cur;
        if (!cr) io->cur = cr = creds_new(); /* anonymous */
        atomic_fetch_add(&cr->refs, 1);
    }
    pthread_mutex_unlock(&io->cred_mu);
    return cr;
}

/* A 401 with these credentials: if they are still the current ones, the
 * exec plugin runs again next time. Without cred_mu: a plugin's run holds
 * it, and this is called on the I/O thread. */
static void creds_rejected(ks_kube_io *io, const creds *cr) {
    if (!cr->gen) return;
    uint_least64_t seen = atomic_load(&io->rejected_gen);
    while (seen < cr->gen && !atomic_compare_exchange_weak(&io->rejected_gen, &seen, cr->gen)) {}
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


void ks_kube_xfer_header(xfer *x, const char *name, size_t nlen, const char *value, size_t vlen) {
    if (nlen == 11 && strncasecmp(name, "Retry-After", 11) == 0) x->retry_after = ks_kube_parse_retry_after(value, vlen);
}

bool ks_kube_xfer_body(xfer *x, const char *buf, size_t len) {
    if (x->stream) {
        if (x->code >= 200 && x->code < 300) {
            x->stream->data(x->stream->arg, buf, len);
            return true;
        }
        /* an error answer's Status, for the end callback's message */
        if (x->resp.len < 65536) ks_sb_putn(&x->resp, buf, len);
        return true;
    }
    /* a hostile or broken server cannot make the client buffer without
     * bound: stop the transfer (ks_kube_xfer_ended gives the message) */
    if (len > x->max_resp - x->resp.len) {
        x->too_big = true;
        return false;
    }
    ks_sb_putn(&x->resp, buf, len);
    return true;
}

/* Begin an attempt on the transport. */
static bool start(ks_kube_io *io, xfer *x) {
    x->code = 0;
    x->retry_after = -1;
    x->max_resp = x->c->max_response;
    x->too_big = false;
    ks_sb_reset(&x->resp);
    x->started_ns = ks_monotonic_ns();
    x->attempts++;
    x->t = NULL;
    if (!io->tr->start(io, x)) {
        x->attempts--;
        return false;
    }
    x->next = io->active;
    io->active = x;
    return true;
}

static void unlink_active(ks_kube_io *io, xfer *x) {
    for (xfer **p = &io->active; *p; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            break;
        }
    x->next = NULL;
}

void ks_kube_io_woken(ks_kube_io *io) {
    uint64_t v;
    if (read(io->wake_fd, &v, sizeof(v)) < 0) {} /* EAGAIN: another read took it */
}

static void wake(ks_kube_io *io) {
    uint64_t one = 1;
    if (write(io->wake_fd, &one, sizeof(one)) < 0) {} /* EAGAIN: the counter is full, it is awake anyway */
}

static void cancel_seen(ks_kube_stream *s) {
    pthread_mutex_lock(&s->mu);
    s->cancel_pending = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The request is over: hand the result over and free it. */
static void complete(xfer *x, long code, const char *error) {
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
static void requeue(ks_kube_io *io, xfer *x, int64_t delay_ns) {
    x->due_ns = ks_monotonic_ns() + delay_ns;
    x->need_token = true;
    x->next = io->waiting;
    io->waiting = x;
}

/* ---- exec credentials refused: the plugin again, off the I/O thread --------- */

/* The thread that runs the exec plugin for async requests a 401 refused:
 * each batch waits for one creds_acquire (which runs the plugin only if
 * the refused credentials are still the current ones: many requests
 * refused at once run it once), then goes back to the I/O thread with the
 * new credentials or with why there are none. A client that stops gives
 * its queued requests back untouched (they end as cancelled). */
static void *reauth_main(void *arg) {
    pthread_setname_np(pthread_self(), "kube-reauth");
    ks_kube_io *io = arg;
    pthread_mutex_lock(&io->mu);
    for (;;) {
        while (!io->reauth_q && !io->stopping) pthread_cond_wait(&io->reauth_cv, &io->mu);
        xfer *q = io->reauth_q;
        io->reauth_q = NULL;
        if (!q) break;
        bool stop = io->stopping;
        pthread_mutex_unlock(&io->mu);
        char *err = NULL;
        creds *cr = stop ? NULL : creds_acquire(io, &err);
        xfer *last = q;
        for (xfer *x = q; x; x = x->next) {
            if (cr) {
                creds_unref(x->cr);
                atomic_fetch_add(&cr->refs, 1);
                x->cr = cr;
            } else if (!stop) {
                x->cred_error = ks_xstrdup(err ? err : "exec plugin: no credentials");
            }
            x->due_ns = 0;
            x->need_token = cr != NULL; /* sent again: rate limited again */
            last = x;
        }
        creds_unref(cr);
        free(err);
        pthread_mutex_lock(&io->mu);
        for (xfer *x = q; x; x = x->next) x->c->reauth_out--;
        *io->incoming_tail = q;
        io->incoming_tail = &last->next;
        /* wake_fd stays open until this thread is joined */
        if (!atomic_exchange(&io->wake_pending, true)) wake(io);
    }
    pthread_mutex_unlock(&io->mu);
    return NULL;
}

/* A 401 refused x's exec credentials (I/O thread): x waits for the plugin
 * to run again, then is sent once more; false when no thread can run it. */
static bool reauth_later(ks_kube_io *io, xfer *x) {
    pthread_mutex_lock(&io->mu);
    bool ok = io->reauth_started || pthread_create(&io->reauth_th, NULL, reauth_main, io) == 0;
    if (ok) {
        io->reauth_started = true;
        x->reauthed = true;
        x->c->reauth_out++;
        x->next = io->reauth_q;
        io->reauth_q = x;
        pthread_cond_signal(&io->reauth_cv);
    }
    pthread_mutex_unlock(&io->mu);
    return ok;
}

static int64_t backoff_ns(ks_kube_io *io, const ks_kube_client *c, int attempt) {
    int64_t d = c->retry_base_ns;
    for (int i = 1; i < attempt && d < 8 * KS_NS_PER_SEC; i++) d *= 2;
    if (d > 8 * KS_NS_PER_SEC) d = 8 * KS_NS_PER_SEC;
    /* up to a quarter more, so that many clients do not come back together */
    return d + (int64_t)((double)rand_r(&io->seed) / RAND_MAX * (double)d / 4);
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

/* The transport's report of an attempt's end (client_impl.h): retry or complete. */
void ks_kube_xfer_ended(ks_kube_io *io, xfer *x, const char *transport_error) {
    unlink_active(io, x);
    x->t = NULL;
    ks_kube_client *c = x->c;
    long code = transport_error ? 0 : x->code;
    char *error = NULL;
    if (x->too_big) {
        code = 0;
        error = ks_xasprintf("an answer larger than the limit of %zu bytes", x->max_resp);
    } else if (transport_error) {
        error = ks_xstrdup(transport_error);
    }
    ks_infof(6, "%s %s%s %ld %s in %lld ms", x->method, io->base_url, x->path, code, error ? error : "",
             (long long)((ks_monotonic_ns() - x->started_ns) / KS_NS_PER_MS));
    if (code == 401) creds_rejected(io, x->cr);
    int64_t delay = -1;
    if (!x->stream && !x->too_big && x->attempts <= c->max_retries) {
        if (code == 0) {
            if (x->idempotent) delay = backoff_ns(io, c, x->attempts);
        } else if (code == 429 || code >= 500) {
            if (x->retry_after >= 0) delay = x->retry_after * KS_NS_PER_SEC;
            else if (code == 429 || x->idempotent) delay = backoff_ns(io, c, x->attempts);
        }
    }
    count(c, code, x->attempts > 1);
    ks_sm_rest_request(x->method, io->host, code, (double)(ks_monotonic_ns() - x->started_ns) / 1e9);
    /* as ks_kube_do: once more with the exec plugin's new credentials
     * (streams end: their owner opens them again, which runs the plugin) */
    if (code == 401 && !x->sync && !x->stream && !x->reauthed && exec_creds(io) && reauth_later(io, x)) {
        ks_infof(4, "%s %s: 401, running the exec plugin again", x->method, x->path);
        free(error);
        return;
    }
    if (delay >= 0) ks_sm_rest_retry(x->method, io->host, code);
    if (delay >= 0) {
        ks_infof(4, "%s %s: %s, retry %d in %lld ms", x->method, x->path,
                 error ? error : (code == 429 ? "429 Too Many Requests" : "server error"), x->attempts,
                 (long long)(delay / KS_NS_PER_MS));
        free(error);
        requeue(io, x, delay);
        return;
    }
    complete(x, code, error);
    free(error);
}

/* Start what is due; take tokens for what needs one. Returns the next due time. */
static int64_t run_waiting(ks_kube_io *io) {
    int64_t now = ks_monotonic_ns(), next = INT64_MAX;
    xfer *keep = NULL, *x = io->waiting;
    io->waiting = NULL;
    while (x) {
        xfer *nx = x->next;
        if (x->due_ns <= now && x->need_token) {
            /* a retry is rate limited again (client-go's tryThrottle), by
             * its own client's budget */
            ks_kube_client *c = x->c;
            x->need_token = false;
            int64_t w = ks_ratelimit_reserve(&c->rl, now);
            ks_sm_rest_rate_limited(x->method, io->host, w > 0 ? (double)w / 1e9 : 0);
            if (w > 0) {
                pthread_mutex_lock(&c->stats_mu);
                c->stats.throttled_ns += w;
                pthread_mutex_unlock(&c->stats_mu);
                x->due_ns = now + w;
            }
        }
        if (x->due_ns <= now) {
            if (x->cred_error) complete(x, 0, x->cred_error); /* the exec plugin failed after a 401 */
            else if (!start(io, x)) complete(x, 0, "cannot start a transfer");
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
        keep->next = io->waiting;
        io->waiting = keep;
        keep = nx;
    }
    return next;
}

/* x is over before its end: out of the transport or the queue, cancelled. */
static void cancel_xfer(ks_kube_io *io, xfer *x) {
    if (x->t) {
        io->tr->stop(io, x);
        unlink_active(io, x);
    } else {
        for (xfer **p = &io->waiting; *p; p = &(*p)->next)
            if (*p == x) {
                *p = x->next;
                break;
            }
    }
    complete(x, 0, "cancelled");
}

static void cancel_stream(ks_kube_io *io, ks_kube_stream *s) {
    if (s->x) cancel_xfer(io, s->x);
    cancel_seen(s);
}

/* A client is being freed while others share the thread: its requests
 * end as cancelled, wherever they are. True when none is left; false while
 * the exec plugin's thread still holds some (they come back on incoming,
 * and are ended at a later pass). */
static bool detach_client(ks_kube_io *io, ks_kube_client *c) {
    xfer *mine = NULL;
    pthread_mutex_lock(&io->mu);
    for (int q = 0; q < 2; q++) {
        xfer **p = q == 0 ? &io->incoming : &io->reauth_q;
        while (*p) {
            xfer *x = *p;
            if (x->c != c) {
                p = &x->next;
                continue;
            }
            *p = x->next;
            if (q == 1) c->reauth_out--;
            x->next = mine;
            mine = x;
        }
    }
    io->incoming_tail = &io->incoming;
    while (*io->incoming_tail) io->incoming_tail = &(*io->incoming_tail)->next;
    bool done = c->reauth_out == 0;
    pthread_mutex_unlock(&io->mu);
    while (mine) {
        xfer *x = mine;
        mine = x->next;
        complete(x, 0, "cancelled");
    }
    for (xfer **lists[] = {&io->active, &io->waiting}, ***l = lists; l < lists + 2; l++)
        for (xfer *x = **l, *nx; x; x = nx) {
            nx = x->next;
            if (x->c != c) continue;
            cancel_xfer(io, x);
            nx = **l; /* completing may have changed the list */
        }
    return done;
}

/* The freeing thread may go on (and free c). */
static void detached(ks_kube_io *io, ks_kube_client *c) {
    pthread_mutex_lock(&io->mu);
    c->detached = true;
    pthread_cond_broadcast(&c->detached_cv);
    pthread_mutex_unlock(&io->mu);
}

/* Clients being freed: those whose requests have all ended are let go. */
static void run_detaching(ks_kube_io *io) {
    for (ks_kube_client **p = &io->detaching; *p;) {
        ks_kube_client *c = *p;
        if (!detach_client(io, c)) {
            p = &c->next_detach;
            continue;
        }
        *p = c->next_detach;
        detached(io, c);
    }
}

/* The server does not speak h2: what the h2 transport held goes to
 * libcurl, which then carries these clients' requests. */
static void fall_back(ks_kube_io *io) {
    ks_infof(2, "API server client: %s; using libcurl", io->fall_back);
    free(io->fall_back);
    io->fall_back = NULL;
    while (io->active) {
        xfer *x = io->active;
        io->tr->stop(io, x);
        unlink_active(io, x);
        x->attempts--; /* not sent: not an attempt */
        x->due_ns = 0;
        x->need_token = false;
        x->next = io->waiting;
        io->waiting = x;
    }
    io->tr->destroy(io);
    io->tr = &ks_kube_curl_transport;
    char *err = NULL;
    if (!io->tr->init(io, &err)) {
        io->tr = NULL;
        while (io->waiting) {
            xfer *x = io->waiting;
            io->waiting = x->next;
            complete(x, 0, err);
        }
    }
    io->broken = err;
}

static void *io_main(void *arg) {
    pthread_setname_np(pthread_self(), "kube-io"); /* top -H, pprof's thread label */
    /* A write to a connection the peer closed raises SIGPIPE in the
     * writing thread, which kills the process unless handled: OpenSSL
     * writes with write(2), not send(MSG_NOSIGNAL). Blocked here, the
     * write fails with EPIPE instead (the signal stays pending on this
     * thread only, blocked). */
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    ks_kube_io *io = arg;
    for (;;) {
        /* cleared before the queue is taken: a request queued after this
         * sends a wake-up of its own */
        atomic_store(&io->wake_pending, false);
        pthread_mutex_lock(&io->mu);
        xfer *in = io->incoming;
        io->incoming = NULL;
        io->incoming_tail = &io->incoming;
        ks_kube_stream *cancels = io->cancels;
        io->cancels = NULL;
        ks_kube_client *detach = io->detach;
        io->detach = NULL;
        bool stop = io->stopping;
        pthread_mutex_unlock(&io->mu);
        while (in) {
            xfer *nx = in->next;
            in->next = io->waiting;
            io->waiting = in;
            in = nx;
        }
        while (cancels) {
            ks_kube_stream *nx = cancels->next_cancel;
            cancel_stream(io, cancels);
            cancels = nx;
        }
        /* a client marked closing queues nothing more: all its requests
         * are in waiting or active now */
        while (detach) {
            ks_kube_client *nx = detach->next_detach;
            detach->next_detach = io->detaching;
            io->detaching = detach;
            detach = nx;
        }
        if (io->detaching) run_detaching(io);
        if (stop) break;
        if (io->broken) {
            /* no transport: every request ends with why */
            while (io->waiting) {
                xfer *x = io->waiting;
                io->waiting = x->next;
                complete(x, 0, io->broken);
            }
            struct pollfd p = {.fd = io->wake_fd, .events = POLLIN};
            if (poll(&p, 1, 1000) > 0) ks_kube_io_woken(io);
            continue;
        }
        if (atomic_exchange(&io->flow_pending, false)) io->tr->flow(io);
        int64_t next = run_waiting(io);
        io->tr->step(io, next);
        if (io->fall_back) fall_back(io);
    }
    /* stopping: everything still here ends as cancelled */
    while (io->active) {
        xfer *x = io->active;
        if (io->tr) io->tr->stop(io, x);
        unlink_active(io, x);
        complete(x, 0, "cancelled");
    }
    while (io->waiting) {
        xfer *x = io->waiting;
        io->waiting = x->next;
        complete(x, 0, "cancelled");
    }
    return NULL;
}

/* ---- public API ----------------------------------------------------------- */

/* The server URL without trailing slashes, and its host[:port] for the
 * rest_client_* metrics' host label. */
static bool setup_url(ks_kube_io *io, char **err) {
    const char *s = io->cfg.server;
    const char *sep = strstr(s, "://");
    if (!sep) return ks_set_error(err, "server %s: not a URL", s);
    const char *host = sep + 3;
    size_t hl = strcspn(host, "/");
    if (hl == 0) return ks_set_error(err, "server %s: no host", s);
    io->host = ks_xstrndup(host, hl);
    io->base_url = ks_xstrdup(s);
    size_t n = strlen(io->base_url);
    while (n && io->base_url[n - 1] == '/') io->base_url[--n] = '\0';
    return true;
}

/* Whether NO_PROXY (or no_proxy) exempts host (without port) from the
 * proxy, as Go's httpproxy reads it: "*", an exact name or IP, or a
 * domain suffix (".example.com" or "example.com" both match
 * a.example.com); an entry's port, when given, must be the port too. */
static bool no_proxy_matches(const char *host, const char *port) {
    const char *np = getenv("NO_PROXY");
    if (!np || !*np) np = getenv("no_proxy");
    if (!np) return false;
    size_t hl = strlen(host);
    while (*np) {
        size_t n = strcspn(np, ",");
        const char *e = np;
        size_t el = n;
        while (el && (*e == ' ')) e++, el--;
        while (el && e[el - 1] == ' ') el--;
        if (el == 1 && *e == '*') return true;
        const char *colon = el && *e != '[' ? memchr(e, ':', el) : NULL;
        size_t nl = colon ? (size_t)(colon - e) : el;
        bool port_ok = !colon || (strlen(port) == el - nl - 1 && strncmp(colon + 1, port, el - nl - 1) == 0);
        if (nl && *e == '.') e++, nl--;
        if (nl && port_ok) {
            if (hl == nl && strncasecmp(host, e, nl) == 0) return true;
            if (hl > nl && host[hl - nl - 1] == '.' && strncasecmp(host + hl - nl, e, nl) == 0) return true;
        }
        np += n;
        if (*np == ',') np++;
    }
    return false;
}

/* Which transport carries this client's requests: HTTP/2 on nghttp2 for
 * https unless a proxy is in the way or KSCHED_KUBE_TRANSPORT=curl; libcurl
 * otherwise (and when the server turns out not to offer h2). */
static const ks_kube_transport *choose_transport(const ks_kube_io *io) {
    const char *force = getenv("KSCHED_KUBE_TRANSPORT");
    if (force && strcmp(force, "curl") == 0) return &ks_kube_curl_transport;
    if (force && *force && strcmp(force, "h2") != 0 && strcmp(force, "auto") != 0)
        ks_warnf("KSCHED_KUBE_TRANSPORT=%s: neither h2, curl nor auto; auto is used", force);
    if (strncmp(io->cfg.server, "https://", 8) != 0 || io->cfg.proxy_url) return &ks_kube_curl_transport;
    const char *proxy = getenv("HTTPS_PROXY");
    if (!proxy || !*proxy) proxy = getenv("https_proxy");
    if (proxy && *proxy) {
        char host[256], port[16] = "443";
        const char *h = io->host;
        size_t hl;
        if (*h == '[') {
            const char *rb = strchr(h, ']');
            hl = rb ? (size_t)(rb - h - 1) : strlen(h);
            h++;
            if (rb && rb[1] == ':') snprintf(port, sizeof(port), "%s", rb + 2);
        } else {
            const char *colon = strchr(h, ':');
            hl = colon ? (size_t)(colon - h) : strlen(h);
            if (colon) snprintf(port, sizeof(port), "%s", colon + 1);
        }
        snprintf(host, sizeof(host), "%.*s", (int)hl, h);
        if (!no_proxy_matches(host, port)) return &ks_kube_curl_transport;
    }
    return &ks_kube_h2_transport;
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

static void io_free(ks_kube_io *io) {
    if (io->tr) io->tr->destroy(io);
    if (io->wake_fd >= 0) close(io->wake_fd);
    free(io->broken);
    free(io->fall_back);
    free(io->host);
    creds_unref(io->cur);
    free(io->exec_info);
    free(io->base_url);
    pthread_mutex_destroy(&io->cred_mu);
    pthread_mutex_destroy(&io->exec_mu);
    pthread_mutex_destroy(&io->mu);
    pthread_cond_destroy(&io->reauth_cv);
    ks_kube_config_free(&io->cfg);
    free(io);
}

/* The shared part: configuration, credentials, transport, I/O thread. */
static ks_kube_io *io_new(const ks_kube_client_options *o, char **err) {
    ks_kube_io *io = ks_xcalloc(1, sizeof(*io));
    io->wake_fd = -1;
    pthread_mutex_init(&io->cred_mu, NULL);
    pthread_mutex_init(&io->exec_mu, NULL);
    pthread_mutex_init(&io->mu, NULL);
    pthread_cond_init(&io->reauth_cv, NULL);
    ks_kube_config_copy(&io->cfg, o->config);
    if (!setup_url(io, err)) {
        io_free(io);
        return NULL;
    }
    int64_t idle_ms = o->read_idle_ms ? o->read_idle_ms : env_seconds("HTTP2_READ_IDLE_TIMEOUT_SECONDS", 30) * 1000;
    int64_t ping_ms = o->ping_timeout_ms > 0 ? o->ping_timeout_ms
                                             : env_seconds("HTTP2_PING_TIMEOUT_SECONDS", 15) * 1000;
    io->read_idle_ns = idle_ms > 0 ? idle_ms * KS_NS_PER_MS : 0;
    io->ping_timeout_ns = (ping_ms > 0 ? ping_ms : 15000) * KS_NS_PER_MS;
    io->seed = (unsigned)ks_monotonic_ns();
    io->incoming_tail = &io->incoming;
    atomic_init(&io->nclients, 1);
    atomic_init(&io->refs, 1);
    if (io->cfg.exec) io->exec_info = exec_info_json(&io->cfg);
    if (!io->cfg.token_file && !io->cfg.exec) {
        /* static credentials: built once */
        creds *cr = creds_new();
        if (io->cfg.token) {
            cr->auth = ks_xasprintf("Authorization: Bearer %s", io->cfg.token);
        } else if (io->cfg.username || io->cfg.password) {
            char *up = ks_xasprintf("%s:%s", io->cfg.username ? io->cfg.username : "",
                                    io->cfg.password ? io->cfg.password : "");
            char *b = b64_encode(up, strlen(up));
            cr->auth = ks_xasprintf("Authorization: Basic %s", b);
            free(b);
            free(up);
        }
        io->cur = cr;
    }
    io->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (io->wake_fd < 0) {
        ks_set_error(err, "API server client: eventfd: %s", strerror(errno));
        io_free(io);
        return NULL;
    }
    const ks_kube_transport *tr = choose_transport(io);
    if (!tr->init(io, err)) {
        if (tr == &ks_kube_curl_transport) {
            io_free(io);
            return NULL;
        }
        /* nghttp2 or OpenSSL missing: libcurl may still do */
        ks_warnf("%s; using libcurl", *err);
        free(*err);
        *err = NULL;
        tr = &ks_kube_curl_transport;
        if (!tr->init(io, err)) {
            io_free(io);
            return NULL;
        }
    }
    io->tr = tr;
    ks_infof(4, "API server client for %s: %s", io->base_url, io->tr->name);
    return io;
}

/* The per-client part of o: budget, User-Agent, negotiation, limits. */
static ks_kube_client *client_new(ks_kube_io *io, const ks_kube_client_options *o) {
    ks_kube_client *c = ks_xcalloc(1, sizeof(*c));
    c->io = io;
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
    c->watch_grace_ms = o->watch_grace_ms > 0 ? o->watch_grace_ms : KS_KUBE_WATCH_GRACE_S * 1000;
    ks_ratelimit_init(&c->rl, o->qps, o->burst, ks_monotonic_ns());
    pthread_mutex_init(&c->stats_mu, NULL);
    pthread_cond_init(&c->detached_cv, NULL);
    return c;
}

static void client_destroy(ks_kube_client *c) {
    free(c->user_agent);
    free(c->accept);
    ks_ratelimit_destroy(&c->rl);
    pthread_mutex_destroy(&c->stats_mu);
    pthread_cond_destroy(&c->detached_cv);
    free(c);
}

ks_kube_client *ks_kube_client_new(const ks_kube_client_options *o, char **err) {
    *err = NULL;
    if (!o->config || !o->config->server) {
        ks_set_error(err, "API server client: no server configured");
        return NULL;
    }
    ks_kube_io *io = io_new(o, err);
    if (!io) return NULL;
    if (pthread_create(&io->io, NULL, io_main, io) != 0) {
        ks_set_error(err, "API server client: cannot start its thread");
        io_free(io);
        return NULL;
    }
    return client_new(io, o);
}

ks_kube_client *ks_kube_client_new_sibling(ks_kube_client *base, const ks_kube_client_options *o) {
    ks_kube_io *io = base->io;
    pthread_mutex_lock(&io->mu);
    atomic_fetch_add(&io->nclients, 1);
    atomic_fetch_add(&io->refs, 1);
    pthread_mutex_unlock(&io->mu);
    ks_kube_client *c = client_new(io, o);
    c->sibling = true;
    return c;
}

void ks_kube_client_free(ks_kube_client *c) {
    if (!c) return;
    ks_kube_io *io = c->io;
    pthread_mutex_lock(&io->mu);
    /* from here, submit refuses this client's requests */
    c->closing = true;
    bool last = atomic_fetch_sub(&io->nclients, 1) == 1;
    if (last) {
        io->stopping = true;
    } else {
        c->next_detach = io->detach;
        io->detach = c;
    }
    pthread_mutex_unlock(&io->mu);
    wake(io);
    if (!last) {
        /* the others go on: the I/O thread ends this one's requests (or
         * the last client's free, if it stops the thread first) */
        pthread_mutex_lock(&io->mu);
        while (!c->detached) pthread_cond_wait(&c->detached_cv, &io->mu);
        pthread_mutex_unlock(&io->mu);
        client_destroy(c);
        if (atomic_fetch_sub(&io->refs, 1) == 1) io_free(io);
        return;
    }
    pthread_join(io->io, NULL);
    /* the exec plugin's thread: its run is cut short, then it gives back
     * what it held */
    exec_stop(io);
    pthread_mutex_lock(&io->mu);
    pthread_cond_signal(&io->reauth_cv);
    pthread_mutex_unlock(&io->mu);
    if (io->reauth_started) pthread_join(io->reauth_th, NULL);
    /* requests queued after the thread looked for the last time */
    pthread_mutex_lock(&io->mu);
    xfer *in = io->incoming;
    io->incoming = NULL;
    pthread_mutex_unlock(&io->mu);
    while (in) {
        xfer *x = in;
        in = x->next;
        complete(x, 0, "cancelled");
    }
    /* every stream has ended now; closes that queued a cancel the thread
     * did not see are told here */
    pthread_mutex_lock(&io->mu);
    ks_kube_stream *cl = io->cancels;
    io->cancels = NULL;
    pthread_mutex_unlock(&io->mu);
    while (cl) {
        ks_kube_stream *s = cl;
        cl = s->next_cancel;
        cancel_seen(s);
    }
    /* siblings being freed whose requests the exec plugin's thread held:
     * all ended now */
    while (io->detaching) {
        ks_kube_client *d = io->detaching;
        io->detaching = d->next_detach;
        detached(io, d);
    }
    client_destroy(c);
    if (atomic_fetch_sub(&io->refs, 1) == 1) io_free(io);
}

void ks_kube_response_free(ks_kube_response *r) {
    if (!r) return;
    free(r->body);
    free(r->error);
    memset(r, 0, sizeof(*r));
}

static xfer *xfer_new(ks_kube_client *c, const ks_kube_request *req) {
    xfer *x = ks_xcalloc(1, sizeof(*x));
    x->c = c;
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
    ks_kube_io *io = c->io;
    x->cr = creds_acquire(io, err);
    if (!x->cr) return false;
    int64_t now = ks_monotonic_ns();
    int64_t w = ks_ratelimit_reserve(&c->rl, now);
    ks_sm_rest_rate_limited(x->method, io->host, w > 0 ? (double)w / 1e9 : 0);
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
    pthread_mutex_lock(&io->mu);
    bool ok = !c->closing;
    if (ok) {
        x->next = NULL;
        *io->incoming_tail = x;
        io->incoming_tail = &x->next;
    }
    pthread_mutex_unlock(&io->mu);
    if (!ok) return ks_set_error(err, "cancelled");
    if (!atomic_exchange(&io->wake_pending, true)) wake(io);
    return true;
}

static void do_once(ks_kube_client *c, const ks_kube_request *req, ks_kube_response *out) {
    memset(out, 0, sizeof(*out));
    xfer *x = xfer_new(c, req);
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
    if (out->code == 401 && exec_creds(c->io)) {
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
    xfer *x = xfer_new(c, req);
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

static ks_kube_stream *stream_open(ks_kube_client *c, const char *path, bool negotiate, bool paced,
                                   ks_kube_data_fn data, ks_kube_end_fn end, void *arg) {
    ks_kube_stream *s = ks_xcalloc(1, sizeof(*s));
    s->paced = paced;
    atomic_init(&s->consumed, 0);
    s->c = c;
    s->io = c->io;
    s->data = data;
    s->end = end;
    s->arg = arg;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    ks_kube_request req = {.method = "GET", .path = path, .negotiate = negotiate};
    xfer *x = xfer_new(c, &req);
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

ks_kube_stream *ks_kube_stream_open(ks_kube_client *c, const char *path, bool negotiate, ks_kube_data_fn data,
                                    ks_kube_end_fn end, void *arg) {
    return stream_open(c, path, negotiate, false, data, end, arg);
}

ks_kube_stream *ks_kube_stream_open_paced(ks_kube_client *c, const char *path, bool negotiate, ks_kube_data_fn data,
                                          ks_kube_end_fn end, void *arg) {
    return stream_open(c, path, negotiate, true, data, end, arg);
}

void ks_kube_stream_consumed(ks_kube_stream *s, size_t n) {
    if (!s || !s->paced || n == 0) return;
    /* The I/O thread gives the bytes back to the server at its next pass
     * (flow_pending, set by the first report since it last looked). It
     * is woken for them only once half the window waits: until then the
     * server still has half a window to send, and what it sends wakes the
     * I/O thread anyway (nghttp2's own rule for WINDOW_UPDATE). A wake
     * per report was one I/O thread wake-up for every three pods bound
     * on SchedulingBasic (the reflector takes each watch event). */
    size_t before = atomic_fetch_add(&s->consumed, n);
    if (before == 0) atomic_store(&s->io->flow_pending, true);
    if (before < KS_KUBE_STREAM_WINDOW / 2 && before + n >= KS_KUBE_STREAM_WINDOW / 2) wake(s->io);
}

void ks_kube_stream_close(ks_kube_stream *s) {
    if (!s) return;
    ks_kube_io *io = s->io;
    pthread_mutex_lock(&s->mu);
    if (!s->ended) {
        /* s->mu held: the I/O thread cannot end the stream (nor the client
         * finish stopping) before the cancel is queued */
        pthread_mutex_lock(&io->mu);
        s->next_cancel = io->cancels;
        io->cancels = s;
        s->cancel_pending = true;
        pthread_mutex_unlock(&io->mu);
        wake(io);
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
    /* the connection's, shared with the siblings */
    out->dead_connections = atomic_load(&c->io->dead_connections);
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
