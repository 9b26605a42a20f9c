/* What `ksched run` serves beside scheduling, put together as
 * kube-scheduler's Run() does: the command-line flags of its secure
 * serving, delegated authentication/authorization and logging, and the
 * server with kube-scheduler's health checks:
 *
 *   /healthz  leaderElection (with leader election), else ping
 *   /livez    ping
 *   /readyz   leaderElection (with leader election), shutdown,
 *             sched-handler-sync
 *
 * Typical use in run_cmd.c:
 *
 *   ks_ops_flags of;  ks_ops_flags_init(&of);
 *   for (i = ...) { r = ks_ops_flag_parse(&of, argc, argv, &i, &err); ... }
 *   if (!ks_ops_flags_apply_logging(&of, &err)) fail;      (right after parsing)
 *   ks_ops *ops = ks_ops_start(&(ks_ops_options){.flags = &of, .cfg = cfg,
 *                              .leader_election = cfg->leader_election.leader_elect}, &err);
 *   ks_ops_set_leader_elector(ops, le);     (once made; before or after start)
 *   ... informers synced, handlers delivered ...  ks_ops_set_synced(ops);
 *   ... SIGTERM ...  ks_ops_set_shutting_down(ops); ...; ks_ops_stop(ops);
 *
 * ks_ops_start with --secure-port=0 returns an ops object that serves
 * nothing (every other call still works). */
#ifndef KS_OPS_H
#define KS_OPS_H

#include "config/config.h"
#include "server/server.h"

#include <stdbool.h>
#include <stdint.h>

struct ks_leader_elector;

typedef struct ks_ops_flags {
    const char *bind_address;        /* --bind-address, default 0.0.0.0 */
    int secure_port;                 /* --secure-port, default 10259; 0: off */
    const char *tls_cert_file;       /* --tls-cert-file */
    const char *tls_private_key_file;/* --tls-private-key-file */
    const char *authentication_kubeconfig; /* --authentication-kubeconfig */
    const char *authorization_kubeconfig;  /* --authorization-kubeconfig */
    /* --authorization-always-allow-paths (comma-separated, repeatable);
     * default /healthz,/readyz,/livez */
    char **always_allow_paths;
    size_t nalways_allow_paths;
    bool has_always_allow_paths;
    /* --authentication-token-webhook-cache-ttl,
     * --authorization-webhook-cache-authorized-ttl,
     * --authorization-webhook-cache-unauthorized-ttl; default 10 s each */
    int64_t authn_cache_ttl_ns, authz_allow_ttl_ns, authz_deny_ttl_ns;
    const char *logging_format;      /* --logging-format: "text" (default) or "json" */
} ks_ops_flags;

void ks_ops_flags_init(ks_ops_flags *f);
void ks_ops_flags_free(ks_ops_flags *f);
/* 1 when argv[*i] is one of these flags (consumed; *i on the last
 * argument used), 0 when it is not, -1 with *err (malloc'd) on a bad or
 * missing value. "--flag=V" or "--flag V"; values point into argv. */
int ks_ops_flag_parse(ks_ops_flags *f, int argc, char **argv, int *i, char **err);
/* One line per flag, for --help. */
const char *ks_ops_flags_usage(void);
/* Switch the log format now (util/log.h); false with *err for an
 * unknown format ("text" and "json" are known). */
bool ks_ops_flags_apply_logging(const ks_ops_flags *f, char **err);

typedef struct ks_ops_options {
    const ks_ops_flags *flags;
    const ks_config *cfg;        /* /configz; NULL: none */
    bool leader_election;        /* the leaderElection check is installed */
} ks_ops_options;

typedef struct ks_ops ks_ops;

/* Delegated auth clients made, then the server started. NULL with *err on
 * failure (bad kubeconfig, port in use, bad certificate). */
ks_ops *ks_ops_start(const ks_ops_options *o, char **err);
/* The elector the leaderElection check asks (NULL: healthy). */
void ks_ops_set_leader_elector(ks_ops *ops, struct ks_leader_elector *le);
/* sched-handler-sync passes from now on (it also passes while a leader
 * elector is set and this replica does not lead: a standby has no
 * informers to wait for). */
void ks_ops_set_synced(ks_ops *ops);
/* shutdown fails from now on ("process is shutting down"). */
void ks_ops_set_shutting_down(ks_ops *ops);
/* The port served (0: serving is off). */
int ks_ops_port(const ks_ops *ops);
void ks_ops_stop(ks_ops *ops);

#endif
