/* The secure serving port of `ksched run`, as kube-scheduler serves its
 * port 10259: HTTPS (libevent's HTTP server on OpenSSL, both loaded on
 * first use: server/evhttp_lazy.h, util/openssl_lazy.h),
 * authentication and authorization delegated to the API server
 * (server/auth.h), and
 *
 *   /healthz /livez /readyz   named checks; "ok", or with ?verbose one
 *                             "[+]name ok" line per check then "<endpoint>
 *                             check passed"; ?exclude=name skips a check;
 *                             a failing check gives 500 and "[-]name
 *                             failed: reason withheld"; /readyz/<name> runs
 *                             one check ("ok" or "internal server error:
 *                             <why>")
 *   /metrics                  the registry in the Prometheus text format
 *   /configz                  {"componentconfig": <the configuration>}
 *   /debug/plugins            plugin execution time, slowest first
 *                             (?format=json for JSON)
 *   extra routes              ks_server_route, for what run mode adds
 *
 * HTTP/1.1 with keep-alive (idle connections close after 60 s). One
 * thread reads and writes every connection; each request runs on a thread
 * of its own (at most 100 at once, one more is answered 503), so that a
 * long one (a CPU profile) holds up no other: health checks and routes
 * must be thread-safe. */
#ifndef KS_SERVER_H
#define KS_SERVER_H

#include "metrics/metrics.h"
#include "server/auth.h"
#include "util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>

/* A health check: NULL when healthy, else why not (malloc'd; logged, not
 * shown to unauthenticated callers). */
typedef char *(*ks_health_fn)(void *arg);
typedef struct ks_health_check {
    const char *name;
    ks_health_fn fn;
    void *arg;
} ks_health_check;

/* An extra endpoint: exact path, or a prefix when it ends with '/'.
 * Writes the body, sets *content_type (static) and returns the status. */
typedef int (*ks_route_fn)(void *arg, const char *method, const char *path, const char *query, ks_strbuf *body,
                           const char **content_type);
typedef struct ks_server_route {
    const char *path;
    ks_route_fn fn;
    void *arg;
} ks_server_route;

typedef struct ks_server_options {
    const char *bind_address; /* NULL/"": 0.0.0.0 (all addresses, IPv6 too when available) */
    int port;                 /* 0: no serving; -1: an ephemeral port (tests) */
    const char *cert_file;    /* PEM certificate (chain) and key; both NULL: */
    const char *key_file;     /* a self-signed certificate made in memory */
    /* Checks per endpoint, in order; none: the single check "ping". */
    const ks_health_check *healthz, *livez, *readyz;
    size_t nhealthz, nlivez, nreadyz;
    ks_auth *auth;            /* NULL: no authentication, everything allowed (tests) */
    ks_metrics *metrics;      /* NULL: the default registry */
    const ks_server_route *routes;
    size_t nroutes;
    int idle_timeout_s;       /* 0: 60 s; a keep-alive connection idle this long closes */
} ks_server_options;

typedef struct ks_server ks_server;

/* Start serving. NULL with *err NULL when o->port is 0 (serving off);
 * NULL with *err (malloc'd) when it cannot start (address in use, bad
 * certificate, ...). The options' arrays are copied; auth, metrics and
 * the checks' args must outlive the server. */
ks_server *ks_server_start(const ks_server_options *o, char **err);
/* Stop listening, wait for the requests in progress, free. */
void ks_server_stop(ks_server *s);
/* The port listened on (the ephemeral one with port -1). */
int ks_server_port(const ks_server *s);
/* The configuration /configz serves (JSON text, copied); NULL: none yet. */
void ks_server_set_configz(ks_server *s, const char *json);

/* The health endpoints' output for a set of checks, as the server writes
 * it (exposed for tests): status 200 or 500, body malloc'd. endpoint:
 * "healthz", "livez", "readyz". excluded: names from ?exclude. */
int ks_health_render(const char *endpoint, const ks_health_check *checks, size_t n, bool verbose,
                     const char *const *excluded, size_t nexcluded, char **body);

#endif
