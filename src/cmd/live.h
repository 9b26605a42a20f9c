/* Options of the commands that answer on a live cluster's snapshot
 * (simulate, capacity, snapshot): --kubeconfig/--master to list the
 * cluster, and the what-ifs --drain NODE, --remove-node NODE,
 * --add-node FILE [--count N]. See docs/simulate.md. */
#ifndef KS_CMD_LIVE_H
#define KS_CMD_LIVE_H

#include "api/cluster.h"
#include "kube/cluster_dump.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ks_cli_live {
    const char *kubeconfig, *master;
    const char **drain, **remove, **add;
    uint32_t *count; /* per --add-node */
    size_t ndrain, nremove, nadd, cap;
} ks_cli_live;

#define KS_CLI_LIVE_USAGE                                                                   \
    "  --kubeconfig FILE    list a live cluster (read-only) instead of reading PATHs\n"     \
    "  --master URL         the API server's address (overrides the kubeconfig)\n"          \
    "  --drain NODE         what if NODE were drained (repeatable; docs/simulate.md)\n"     \
    "  --remove-node NODE   what if NODE were gone, with its pods (repeatable)\n"           \
    "  --add-node FILE      what if the Node in FILE were added (repeatable),\n"            \
    "  --count N              N copies of it named NAME-1..NAME-N\n"

/* 1 when argv[*i] was one of these (consumed), 0 when not, -1 with *err. */
int ks_cli_live_parse(ks_cli_live *l, int argc, char **argv, int *i, char **err);
bool ks_cli_live_is_live(const ks_cli_live *l);
bool ks_cli_live_has_whatifs(const ks_cli_live *l);
/* The snapshot: listed from the cluster (live) or read from paths, with
 * the what-ifs applied. Errors printed as "ksched <cmd>: ..."; false then. */
bool ks_cli_live_snapshot(const ks_cli_live *l, const char *const *paths, size_t n, ks_kube_snapshot *s,
                          const char *cmd);
/* The cluster to answer on: live, the snapshot then the extra paths;
 * otherwise the paths with the what-ifs. Errors printed; NULL then. */
ks_cluster *ks_cli_live_cluster(const ks_cli_live *l, const char *const *paths, size_t n, const char *cmd);
void ks_cli_live_free(ks_cli_live *l);

#endif
