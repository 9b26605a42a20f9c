/* Pieces every ksched command shares: option values, loading the
 * configuration and the cluster with errors printed the same way. */
#ifndef KS_CMD_COMMON_H
#define KS_CMD_COMMON_H

#include "api/cluster.h"
#include "config/config.h"

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stdint.h>

/* Match option `name` in argv[*i] as "--name V", "--name=V", "-name V" or
 * "-name=V" (klog accepts one dash). On a match returns true with *val set
 * (NULL and *err set when the value is missing) and *i on the last argument
 * used; false when argv[*i] is another option. */
bool ks_cli_value(int argc, char **argv, int *i, const char *name, const char **val, char **err);
bool ks_cli_u64(const char *s, uint64_t *out);

/* The configuration in path (NULL: the v1.34 defaults), resolved against
 * the registry. Errors are printed to stderr; NULL then. */
ks_config *ks_cli_load_config(const char *path, ks_registry *reg);
/* The objects in the manifest paths, admitted (priorities filled in).
 * Errors are printed to stderr, one per line; NULL then. */
ks_cluster *ks_cli_load_cluster(const char *const *paths, size_t n);

#endif
