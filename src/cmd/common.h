/* Pieces every ksched command shares: option values, loading the
 * configuration and the cluster with errors printed the same way. */
#ifndef KS_CMD_COMMON_H
#define KS_CMD_COMMON_H

#include "api/cluster.h"
#include "sim/workloads/workloads.h"
#include "cmd/plugin_opts.h"
#include "config/config.h"
#include "config/feature_gates.h"

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

/* Match option `name` in argv[*i] as "--name V", "--name=V", "-name V" or
 * "-name=V" (klog accepts one dash). On a match returns true with *val set
 * (NULL and *err set when the value is missing) and *i on the last argument
 * used; false when argv[*i] is another option. */
bool ks_cli_value(int argc, char **argv, int *i, const char *name, const char **val, char **err);
bool ks_cli_u64(const char *s, uint64_t *out);

/* The options every scheduling command takes: --config FILE,
 * -o/--output FORMAT, --plugin FILE.so, --plugin-dir DIR,
 * --feature-gates K=V,... (repeatable). */
typedef struct ks_cli_common {
    ks_plugin_opts plugins;
    const char *config_path; /* NULL: the defaults */
    const char *output;      /* preset to the command's default */
    const char *output_file; /* --output-file: NULL for stdout */
    const char **gates;      /* --feature-gates values (argv's strings) */
    size_t ngates, gates_cap;
} ks_cli_common;

/* 1 when argv[*i] was one of them (consumed), 0 when not, -1 with *err
 * (malloc'd) when its value is missing. */
int ks_cli_common_parse(ks_cli_common *c, int argc, char **argv, int *i, char **err);
/* Apply the feature gates (config/feature_gates.h), load the plugins, then
 * the configuration (which may name them; its defaults follow the gates);
 * errors are printed prefixed with "ksched <cmd>: "; NULL then. */
ks_config *ks_cli_common_setup(ks_cli_common *c, const char *cmd);
void ks_cli_common_free(ks_cli_common *c);
/* Where the answer goes: --output-file (created or truncated) or stdout;
 * NULL with the error printed. Close it with ks_cli_output_close, which
 * reports a failed write (false). */
FILE *ks_cli_output_open(const ks_cli_common *c, const char *cmd);
bool ks_cli_output_close(const ks_cli_common *c, FILE *f, const char *cmd);

/* The configuration in path (NULL: the v1.34 defaults), resolved against
 * the registry. Errors are printed to stderr; NULL then. */
ks_config *ks_cli_load_config(const char *path, ks_registry *reg);
/* The objects in the manifest paths, admitted (priorities filled in).
 * Errors are printed to stderr, one per line; NULL then. */
ks_cluster *ks_cli_load_cluster(const char *const *paths, size_t n);
/* The workloads' controllers run on c (src/sim/workloads): their pods,
 * claims, ReplicaSets and Jobs added; errors printed, false. Prints the
 * "skipped:" line of kinds not used on stderr. no_hold: OrderedReady
 * ordinals created at once (for runs that do not pass gen->held on). */
bool ks_cli_expand_workloads(ks_cluster *c, uint64_t seed, bool no_hold, ks_wl_generated *gen, const char *cmd);

#endif
