#include "server/ops.h"
#include "server/pprof.h"

#include "kube/leaderelection.h"
#include "metrics/sched_metrics.h"
#include "server/delegated.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- flags --------------------------------------------------------------------- */

void ks_ops_flags_init(ks_ops_flags *f) {
    memset(f, 0, sizeof(*f));
    f->bind_address = "0.0.0.0";
    f->secure_port = 10259;
    f->logging_format = "text";
}

void ks_ops_flags_free(ks_ops_flags *f) {
    for (size_t i = 0; i < f->nalways_allow_paths; i++) free(f->always_allow_paths[i]);
    free(f->always_allow_paths);
    f->always_allow_paths = NULL;
    f->nalways_allow_paths = 0;
}

const char *ks_ops_flags_usage(void) {
    return "      --bind-address IP                  address to serve on (default 0.0.0.0: all)\n"
           "      --secure-port N                    HTTPS port for /healthz /livez /readyz /metrics /configz\n"
           "                                         /debug/plugins (default 10259; 0: off)\n"
           "      --tls-cert-file FILE               serving certificate (PEM, chain allowed)\n"
           "      --tls-private-key-file FILE        its key; without both, a self-signed certificate\n"
           "      --authentication-kubeconfig FILE   kubeconfig for TokenReviews (default: in-cluster)\n"
           "      --authorization-kubeconfig FILE    kubeconfig for SubjectAccessReviews (default: in-cluster)\n"
           "      --authorization-always-allow-paths P,...  served without authorization\n"
           "                                         (default /healthz,/readyz,/livez)\n"
           "      --authentication-token-webhook-cache-ttl D       (default 10s)\n"
           "      --authorization-webhook-cache-authorized-ttl D   (default 10s)\n"
           "      --authorization-webhook-cache-unauthorized-ttl D (default 10s)\n"
           "      --logging-format text|json         log format (default text)\n";
}

enum {
    F_BIND,
    F_PORT,
    F_CERT,
    F_KEY,
    F_AUTHN,
    F_AUTHZ,
    F_PATHS,
    F_AUTHN_TTL,
    F_ALLOW_TTL,
    F_DENY_TTL,
    F_LOG_FORMAT,
    F_COUNT
};

static const char *const flag_names[F_COUNT] = {
    [F_BIND] = "bind-address",
    [F_PORT] = "secure-port",
    [F_CERT] = "tls-cert-file",
    [F_KEY] = "tls-private-key-file",
    [F_AUTHN] = "authentication-kubeconfig",
    [F_AUTHZ] = "authorization-kubeconfig",
    [F_PATHS] = "authorization-always-allow-paths",
    [F_AUTHN_TTL] = "authentication-token-webhook-cache-ttl",
    [F_ALLOW_TTL] = "authorization-webhook-cache-authorized-ttl",
    [F_DENY_TTL] = "authorization-webhook-cache-unauthorized-ttl",
    [F_LOG_FORMAT] = "logging-format",
};

int ks_ops_flag_parse(ks_ops_flags *f, int argc, char **argv, int *i, char **err) {
    const char *a = argv[*i];
    if (a[0] != '-') return 0;
    a += a[1] == '-' ? 2 : 1;
    int which = -1;
    size_t nlen = 0;
    for (int k = 0; k < F_COUNT; k++) {
        size_t n = strlen(flag_names[k]);
        if (strncmp(a, flag_names[k], n) == 0 && (a[n] == 0 || a[n] == '=')) {
            which = k;
            nlen = n;
        }
    }
    if (which < 0) return 0;
    const char *val = a[nlen] == '=' ? a + nlen + 1 : NULL;
    if (!val) {
        if (*i + 1 >= argc) {
            *err = ks_xasprintf("flag needs an argument: --%s", flag_names[which]);
            return -1;
        }
        val = argv[++*i];
    }
    switch (which) {
    case F_BIND: f->bind_address = val; break;
    case F_PORT: {
        char *end;
        errno = 0;
        long p = strtol(val, &end, 10);
        if (!*val || *end || errno) {
            *err = ks_xasprintf("invalid argument \"%s\" for \"--secure-port\" flag: strconv.ParseInt: parsing \"%s\": "
                                "invalid syntax",
                                val, val);
            return -1;
        }
        if (p < 0 || p > 65535) {
            *err = ks_xasprintf("--secure-port %ld must be between 0 and 65535, inclusive. 0 for turning off secure port",
                                p);
            return -1;
        }
        f->secure_port = (int)p;
        break;
    }
    case F_CERT: f->tls_cert_file = val; break;
    case F_KEY: f->tls_private_key_file = val; break;
    case F_AUTHN: f->authentication_kubeconfig = val; break;
    case F_AUTHZ: f->authorization_kubeconfig = val; break;
    case F_PATHS: {
        /* A string slice: the first use replaces the default, later ones
         * append; "" is the empty list. */
        if (!f->has_always_allow_paths) ks_ops_flags_free(f);
        f->has_always_allow_paths = true;
        const char *s = val;
        while (*s) {
            const char *e = strchr(s, ',');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            f->always_allow_paths = ks_xrealloc(f->always_allow_paths, (f->nalways_allow_paths + 1) * sizeof(char *));
            f->always_allow_paths[f->nalways_allow_paths++] = ks_xstrndup(s, n);
            if (!e) break;
            s = e + 1;
        }
        break;
    }
    case F_AUTHN_TTL:
    case F_ALLOW_TTL:
    case F_DENY_TTL: {
        int64_t ns;
        char *e = NULL;
        if (!ks_parse_duration(val, &ns, &e)) {
            *err = ks_xasprintf("invalid argument \"%s\" for \"--%s\" flag: %s", val, flag_names[which], e ? e : "");
            free(e);
            return -1;
        }
        if (which == F_AUTHN_TTL) f->authn_cache_ttl_ns = ns;
        else if (which == F_ALLOW_TTL) f->authz_allow_ttl_ns = ns;
        else f->authz_deny_ttl_ns = ns;
        break;
    }
    case F_LOG_FORMAT: f->logging_format = val; break;
    }
    return 1;
}

bool ks_ops_flags_apply_logging(const ks_ops_flags *f, char **err) {
    ks_log_format lf;
    const char *name = f->logging_format ? f->logging_format : "text";
    if (!ks_log_format_parse(name, &lf)) {
        *err = ks_xasprintf("logging.format: Invalid value: \"%s\": Unsupported log format", name);
        return false;
    }
    ks_log_set_format(lf);
    return true;
}

/* ---- the running part ---------------------------------------------------------------- */

struct ks_ops {
    ks_server *server;
    ks_auth *auth;
    ks_delegated *authn, *authz;
    ks_leader_elector *_Atomic le;
    bool leader_election;
    atomic_bool synced, shutting_down;
    /* leader election metrics, fed at scrape time */
    ks_metric *master_status, *slowpath;
    uint64_t slowpath_seen;
    bool collecting;
};

static char *check_leader(void *arg) {
    ks_ops *ops = arg;
    ks_leader_elector *le = atomic_load(&ops->le);
    char *err = NULL;
    if (!le || ks_leader_elector_healthy(le, KS_LEADER_HEALTHZ_TIMEOUT_NS, &err)) {
        free(err);
        return NULL;
    }
    return err ? err : ks_xstrdup("failed election to renew leadership");
}

static char *check_shutdown(void *arg) {
    ks_ops *ops = arg;
    return atomic_load(&ops->shutting_down) ? ks_xstrdup("process is shutting down") : NULL;
}

static char *check_sync(void *arg) {
    ks_ops *ops = arg;
    if (atomic_load(&ops->synced)) return NULL;
    /* A standby starts no informers (docs/run.md): it has nothing to
     * sync, and is ready as a kube-scheduler standby is once its informers
     * synced. Otherwise a rolling update would wait for ever on a new
     * replica that cannot lead while the old one holds the lease. */
    ks_leader_elector *le = atomic_load(&ops->le);
    if (ops->leader_election && le && !ks_leader_elector_is_leader(le)) return NULL;
    return ks_xstrdup("handlers are not fully synchronized");
}

static char *check_ping(void *arg) {
    (void)arg;
    return NULL;
}

static void collect_leader(void *arg) {
    ks_ops *ops = arg;
    ks_leader_elector *le = atomic_load(&ops->le);
    if (!le) return;
    ks_leader_elector_stats st;
    ks_leader_elector_stats_get(le, &st);
    ks_gauge_set(ops->master_status, st.leading ? 1 : 0);
    if (st.slowpath > ops->slowpath_seen) {
        ks_counter_add(ops->slowpath, st.slowpath - ops->slowpath_seen);
        ops->slowpath_seen = st.slowpath;
    }
}

ks_ops *ks_ops_start(const ks_ops_options *o, char **err) {
    *err = NULL;
    ks_ops *ops = ks_xcalloc(1, sizeof(*ops));
    const ks_ops_flags *f = o->flags;
    ks_ops_flags defaults;
    if (!f) {
        ks_ops_flags_init(&defaults);
        f = &defaults;
    }
    ops->leader_election = o->leader_election;
    if (f->secure_port == 0) return ops; /* serving off, as upstream's --secure-port=0 */

    ops->authn = ks_delegated_new(f->authentication_kubeconfig, "authentication", err);
    if (*err) goto fail;
    if (!ops->authn)
        ks_warnf("No authentication-kubeconfig provided in order to lookup client-ca-file in "
                 "configmap/extension-apiserver-authentication in kube-system, so client certificate "
                 "authentication won't work.");
    ops->authz = ks_delegated_new(f->authorization_kubeconfig, "authorization", err);
    if (*err) goto fail;
    if (!ops->authz)
        ks_warnf("No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work.");
    ks_auth_options ao = {
        .authn = ks_delegated_token_reviewer(ops->authn),
        .authz = ks_delegated_access_reviewer(ops->authz),
        .always_allow_paths = f->has_always_allow_paths ? (const char *const *)f->always_allow_paths : NULL,
        .nalways_allow_paths = f->nalways_allow_paths,
        .no_always_allow_paths = f->has_always_allow_paths && f->nalways_allow_paths == 0,
        .authn_ttl_ns = f->authn_cache_ttl_ns,
        .allow_ttl_ns = f->authz_allow_ttl_ns,
        .deny_ttl_ns = f->authz_deny_ttl_ns,
    };
    ops->auth = ks_auth_new(&ao);

    /* kube-scheduler's checks (cmd/kube-scheduler/app/server.go Run). */
    ks_health_check healthz[1], livez[1] = {{"ping", check_ping, NULL}}, readyz[3];
    size_t nh = 0, nr = 0;
    if (o->leader_election) {
        healthz[nh++] = (ks_health_check){"leaderElection", check_leader, ops};
        readyz[nr++] = (ks_health_check){"leaderElection", check_leader, ops};
    }
    readyz[nr++] = (ks_health_check){"shutdown", check_shutdown, ops};
    readyz[nr++] = (ks_health_check){"sched-handler-sync", check_sync, ops};
    ks_server_options so = {.bind_address = f->bind_address,
                            .port = f->secure_port,
                            .cert_file = f->tls_cert_file,
                            .key_file = f->tls_private_key_file,
                            .healthz = healthz,
                            .nhealthz = nh,
                            .livez = livez,
                            .nlivez = 1,
                            .readyz = readyz,
                            .nreadyz = nr,
                            .auth = ops->auth};
    /* enableProfiling (default true): /debug/pprof/, as upstream's */
    static const ks_server_route pprof = {"/debug/pprof/", ks_pprof_route, NULL};
    if (o->cfg && o->cfg->enable_profiling) {
        so.routes = &pprof;
        so.nroutes = 1;
    }
    ops->server = ks_server_start(&so, err);
    if (!ops->server) goto fail;
    if (o->cfg) {
        char *json = ks_config_to_json(o->cfg);
        ks_server_set_configz(ops->server, json);
        free(json);
    }
    if (o->leader_election) {
        const ks_sched_metrics *sm = ks_sm();
        ks_metric_vec *g = ks_metrics_gauge(
            sm->reg, "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
            "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            KS_ALPHA, "name");
        ks_metric_vec *c = ks_metrics_counter(
            sm->reg, "leader_election_slowpath_total",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify "
            "the lease. Please make sure to group by name.",
            KS_ALPHA, "name");
        ops->master_status = ks_metric_get(g, "kube-scheduler");
        ops->slowpath = ks_metric_get(c, "kube-scheduler");
        ks_metrics_add_collector(sm->reg, collect_leader, ops);
        ops->collecting = true;
    }
    return ops;
fail:
    ks_ops_stop(ops);
    return NULL;
}

void ks_ops_set_leader_elector(ks_ops *ops, ks_leader_elector *le) {
    if (ops) atomic_store(&ops->le, le);
}

void ks_ops_set_synced(ks_ops *ops) {
    if (ops) atomic_store(&ops->synced, true);
}

void ks_ops_set_shutting_down(ks_ops *ops) {
    if (ops) atomic_store(&ops->shutting_down, true);
}

int ks_ops_port(const ks_ops *ops) { return ops ? ks_server_port(ops->server) : 0; }

void ks_ops_stop(ks_ops *ops) {
    if (!ops) return;
    if (ops->collecting) ks_metrics_remove_collector(ks_sm()->reg, collect_leader, ops);
    ks_server_stop(ops->server);
    ks_auth_free(ops->auth);
    ks_delegated_free(ops->authn);
    ks_delegated_free(ops->authz);
    free(ops);
}
