/* What `ksched run` and `ksched run --shadow` share: kube-scheduler's
 * deprecated flags and their precedence against --config, --master,
 * --write-config-to, the API clients and which kinds the backend watches.
 * One place, so that the two modes cannot drift apart. */
#ifndef KS_CMD_RUN_FLAGS_H
#define KS_CMD_RUN_FLAGS_H

#include "config/config.h"
#include "kube/kube_cluster_client.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leaderelection.h"
#include "server/ops.h"
#include "cmd/common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* kube-scheduler's deprecated flags (cmd/kube-scheduler/app/options/
 * deprecated.go), --master and --write-config-to. */
typedef struct ks_run_flags {
    const char *kubeconfig, *content_type, *master, *write_config;
    bool has_qps, has_burst, has_profiling, has_contention, has_max_unsched;
    float qps;
    int32_t burst;
    bool profiling, contention;
    int64_t max_unsched_ns;
} ks_run_flags;

#define KS_RUN_FLAGS_USAGE                                                                  \
    "  --kubeconfig FILE    kubeconfig, without --config (with it, clientConnection.\n"     \
    "                       kubeconfig; neither: $KUBECONFIG, else in-cluster)\n"           \
    "  --master URL         the API server's address (overrides the kubeconfig)\n"          \
    "  --write-config-to FILE\n"                                                            \
    "                       write the configuration, defaulted, to FILE and exit\n"         \
    "  --kube-api-qps=F, --kube-api-burst=N, --kube-api-content-type=T,\n"                  \
    "  --profiling[=BOOL], --contention-profiling[=BOOL]\n"                                 \
    "                       kube-scheduler's deprecated flags: used without --config,\n"    \
    "                       ignored (with a warning) with it\n"                             \
    "  --pod-max-in-unschedulable-pods-duration=D\n"                                        \
    "                       how long a pod may stay unschedulable before a retry (5m)\n"

/* The flags of `ksched run`, with or without --shadow (one parse in
 * run_cmd.c). */
typedef struct ks_run_cmd {
    ks_cli_common co;
    ks_leader_election_flags lf;
    ks_ops_flags of;
    ks_run_flags rf;
    bool shadow;
    const char *report; /* --shadow --report FILE */
} ks_run_cmd;

/* The configuration both modes run with: logging format, feature gates,
 * plugins, the file, leader-election flags (run only), the deprecated
 * flags, every node evaluated (shadow). NULL with *rc the exit status when
 * the command ends here (an error printed, or --write-config-to done). */
ks_config *ks_run_config(ks_run_cmd *c, int *rc);
/* ksched run --shadow (shadow_cmd.c). */
int ks_run_shadow(ks_run_cmd *c);
void ks_run_shadow_usage(FILE *f);

/* 1 when argv[*i] was one of them (consumed), 0 when not, -1 with *err
 * (malloc'd) on a missing or bad value. */
int ks_run_flag_parse(ks_run_flags *f, int argc, char **argv, int *i, char **err);
/* upstream's ApplyDeprecated: without --config the deprecated flags are
 * the configuration; with it they are ignored, each named in a warning on
 * stderr ("ksched <cmd>: warning: ..."). The unschedulable-pods duration,
 * which the file cannot set, applies either way. */
void ks_run_flags_apply(const ks_run_flags *f, bool have_config, ks_config *cfg, const char *cmd);
/* --write-config-to: the configuration as YAML; errors printed. */
bool ks_run_write_config(const ks_config *cfg, const char *path, const char *cmd);
/* The kubeconfig the configuration names (else $KUBECONFIG, else
 * in-cluster), its server replaced by --master when given. */
bool ks_run_kube_config_load(const ks_run_flags *f, const ks_config *cfg, ks_kube_config *kc, char **err);
/* A client with the configuration's rate limits; errors printed. */
ks_kube_client *ks_run_client_new(const ks_kube_config *kc, const ks_config *cfg, int64_t timeout_ms,
                                  const char *ua_suffix, const char *cmd);
/* A client with the same limits and a budget of its own, on base's
 * connection and I/O thread (ks_kube_client_new_sibling). */
ks_kube_client *ks_run_client_new_sibling(ks_kube_client *base, const ks_config *cfg, int64_t timeout_ms,
                                          const char *ua_suffix);
/* The kinds beyond the core set: those the profiles need (PodGroups) and
 * those the feature gates ask for (DRA objects, DeviceTaintRules). */
void ks_run_backend_watches(const ks_config *cfg, ks_kube_cluster_client_options *o);

#endif
