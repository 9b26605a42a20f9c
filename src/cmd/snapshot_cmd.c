/* ksched snapshot --kubeconfig FILE -o DIR: list everything the scheduler
 * reads from a live cluster and write it as manifests that simulate and
 * capacity read back (see docs/simulate.md). */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/live.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fputs("usage: ksched snapshot --kubeconfig FILE -o DIR [options]\n"
          "       ksched snapshot PATH... -o DIR [what-ifs]\n"
          "\n"
          "Write every object the scheduler reads (nodes, pods that are not finished,\n"
          "namespaces, storage, workloads, PDBs, priority classes, DRA objects) as one\n"
          "JSON List per kind into DIR; `ksched simulate DIR` reads it back. The\n"
          "what-ifs change the snapshot before it is written. Needs only get/list.\n"
          "\n"
          "options:\n"
          "  -o, --output DIR     where to write (created when missing)\n" KS_CLI_LIVE_USAGE
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n",
          f);
}

int cmd_snapshot(int argc, char **argv) {
    ks_cli_live live = {0};
    const char **paths = calloc((size_t)argc, sizeof(char *));
    size_t npaths = 0;
    const char **gates = calloc((size_t)argc, sizeof(char *));
    size_t ngates = 0;
    const char *dir = NULL;
    char *err = NULL;
    int rc = KS_EXIT_BAD_INPUT;
    ks_kube_snapshot s;
    ks_kube_snapshot_init(&s);
    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        int r = ks_cli_live_parse(&live, argc, argv, &i, &err);
        if (r < 0) goto usage_error;
        if (r > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (ks_cli_value(argc, argv, &i, "o", &val, &err) || ks_cli_value(argc, argv, &i, "output", &val, &err)) {
            if (!val) goto usage_error;
            dir = val;
        } else if (ks_cli_value(argc, argv, &i, "feature-gates", &val, &err)) {
            /* DRADeviceTaints lists the DeviceTaintRules */
            if (!val) goto usage_error;
            gates[ngates++] = val;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ksched snapshot: unknown option %s\n", a);
            usage(stderr);
            goto out;
        } else {
            paths[npaths++] = a;
        }
    }
    if (!dir || (!npaths && !ks_cli_live_is_live(&live)) || (npaths && ks_cli_live_is_live(&live))) {
        fprintf(stderr, "ksched snapshot: need -o DIR and either --kubeconfig or PATHs\n");
        usage(stderr);
        goto out;
    }
    if (!ks_feature_gates_apply(gates, ngates, &err)) {
        fprintf(stderr, "ksched snapshot: %s\n", err);
        goto out;
    }
    if (!ks_cli_live_snapshot(&live, paths, npaths, &s, "snapshot")) {
        rc = KS_EXIT_FAIL;
        goto out;
    }
    if (!ks_kube_snapshot_write(&s, dir, &err)) {
        fprintf(stderr, "ksched snapshot: %s\n", err);
        rc = KS_EXIT_FAIL;
        goto out;
    }
    fprintf(stderr, "ksched snapshot: wrote %zu nodes and %zu pods to %s\n", ks_kube_snapshot_count(&s, "18-nodes.json"),
            ks_kube_snapshot_count(&s, "19-pods.json"), dir);
    rc = 0;
    goto out;
usage_error:
    fprintf(stderr, "ksched snapshot: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    free(err);
    free(paths);
    free(gates);
    ks_kube_snapshot_free(&s);
    ks_cli_live_free(&live);
    return rc;
}
