#include "server/server.h"

#include "metrics/sched_metrics.h"
#include "server/httpd_lazy.h"
#include "server/selfsigned.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_CONNECTIONS 100
#define CONNECTION_TIMEOUT_S 60

struct ks_server {
    const ks_mhd_api *mhd;
    struct MHD_Daemon *d;
    int port;
    ks_health_check *checks[3]; /* healthz, livez, readyz */
    size_t nchecks[3];
    ks_auth *auth;
    ks_metrics *metrics;
    ks_server_route *routes;
    size_t nroutes;
    pthread_mutex_t mu;
    char *configz;
    char last_error[512]; /* libmicrohttpd's last complaint, for start errors */
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
    ks_strbuf raw;        /* "a=b&c" as received (decoded), for messages */
    const char **exclude; /* values of exclude= */
    size_t nexclude, cap;
    bool verbose;
    const char *format;
} query;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    query *q = cls;
    if (q->raw.len) ks_sb_putc(&q->raw, '&');
    ks_sb_puts(&q->raw, key);
    if (value) ks_sb_printf(&q->raw, "=%s", value);
    if (strcmp(key, "verbose") == 0) q->verbose = true;
    else if (strcmp(key, "format") == 0) q->format = value;
    else if (strcmp(key, "exclude") == 0 && value) {
        KS_GROW(q->exclude, q->cap, q->nexclude + 1);
        q->exclude[q->nexclude++] = value;
    }
    return MHD_YES;
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

static int marker;

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)version;
    (void)upload;
    ks_server *s = cls;
    /* First call: headers only. Bodies are read and dropped. */
    if (!*state) {
        *state = &marker;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    int64_t t0 = ks_monotonic_ns();
    const ks_mhd_api *m = s->mhd;
    query q = {0};
    ks_sb_init(&q.raw);
    m->get_connection_values(c, MHD_GET_ARGUMENT_KIND, on_arg, &q);
    reply r = {0};
    ks_sb_init(&r.body);
    char *user = NULL;
    bool allowed = true;
    if (s->auth) {
        ks_strbuf uri;
        ks_sb_init(&uri);
        ks_sb_puts(&uri, url);
        if (q.raw.len) ks_sb_printf(&uri, "?%s", ks_sb_str(&q.raw));
        ks_auth_result ar;
        ks_auth_check(s->auth, m->lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"), method, url,
                      ks_sb_str(&uri), &ar);
        ks_sb_free(&uri);
        if (ar.status) {
            allowed = false;
            r.status = ar.status;
            ks_sb_puts(&r.body, ar.body);
            r.content_type = ar.content_type;
            r.nosniff = true;
        }
        user = ar.user;
        ar.user = NULL;
        ks_auth_result_free(&ar);
    }
    if (allowed) route(s, method, url, &q, &r);

    struct MHD_Response *resp = m->create_response_from_buffer(r.body.len, r.body.s ? r.body.s : (char *)"",
                                                               MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret = MHD_NO;
    if (resp) {
        if (r.content_type) m->add_response_header(resp, "Content-Type", r.content_type);
        if (r.nosniff) m->add_response_header(resp, "X-Content-Type-Options", "nosniff");
        m->add_response_header(resp, "Cache-Control", "no-cache, private");
        ret = m->queue_response(c, (unsigned)r.status, resp);
        m->destroy_response(resp);
    }
    if (KS_V(3)) {
        const char *ua = m->lookup_connection_value(c, MHD_HEADER_KIND, "User-Agent");
        ks_infof(3, "\"HTTP\" verb=\"%s\" URI=\"%s%s%s\" latency=\"%.6fs\" userAgent=\"%s\" user=\"%s\" resp=%d",
                 method, url, q.raw.len ? "?" : "", ks_sb_str(&q.raw), (double)(ks_monotonic_ns() - t0) / 1e9,
                 ua ? ua : "", user ? user : "", r.status);
    }
    free(user);
    ks_sb_free(&r.body);
    ks_sb_free(&q.raw);
    free(q.exclude);
    return ret;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    ks_server *s = cls;
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
    pthread_mutex_lock(&s->mu);
    snprintf(s->last_error, sizeof(s->last_error), "%s", buf);
    pthread_mutex_unlock(&s->mu);
    ks_infof(2, "\"secure serving\" msg=\"%s\"", buf);
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

static void free_server(ks_server *s) {
    for (int i = 0; i < 3; i++) free(s->checks[i]);
    free(s->routes);
    free(s->configz);
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
    const ks_mhd_api *m = ks_mhd(&why);
    if (!m) {
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

    ks_server *s = ks_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    s->mhd = m;
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

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS | MHD_USE_ERROR_LOG;
    const char *priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
#define START(extra_flags, sa)                                                                                       \
    m->start_daemon(flags | (extra_flags), port, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,  \
                    MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_HTTPS_PRIORITIES,     \
                    priorities, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,                            \
                    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_SOCK_ADDR, (sa),      \
                    MHD_OPTION_END)
    if (v6) {
        s->d = START(MHD_USE_IPv6, (struct sockaddr *)&a6);
    } else if (any4) {
        /* All addresses, IPv6 included when the host has it (as Go listens
         * for 0.0.0.0); IPv4 alone otherwise. */
        struct sockaddr_in6 any6 = {0};
        any6.sin6_family = AF_INET6;
        any6.sin6_addr = in6addr_any;
        any6.sin6_port = htons(port);
        s->d = START(MHD_USE_DUAL_STACK, (struct sockaddr *)&any6);
        if (s->d) {
            addr = "::";
            v6 = true;
        } else {
            s->d = START(0, (struct sockaddr *)&a4);
        }
    } else {
        s->d = START(0, (struct sockaddr *)&a4);
    }
#undef START
    free(cert);
    free(key);
    if (!s->d) {
        set_err(err, "failed to listen on %s%s%s:%u: %s", v6 ? "[" : "", addr, v6 ? "]" : "", port,
                s->last_error[0] ? s->last_error : "cannot start the HTTPS server");
        free_server(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = m->get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : port;
    ks_infof(0, "Serving securely on %s%s%s:%d", v6 ? "[" : "", addr, v6 ? "]" : "", s->port);
    return s;
}

void ks_server_stop(ks_server *s) {
    if (!s) return;
    s->mhd->stop_daemon(s->d);
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
