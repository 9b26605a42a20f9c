/* ksched snapshot --kubeconfig FILE -o DIR: list everything the scheduler
 * reads from a live cluster and write it as manifests that simulate and
 * capacity read back (see docs/simulate.md). */
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/common.h"
#include "cmd/live.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f, const void *arg) {
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

typedef struct snapshot_cmd {
    ks_cli_live live;
    const char **paths;
    size_t npaths;
    const char **gates; /* --feature-gates: DRADeviceTaints lists the DeviceTaintRules */
    size_t ngates;
    const char *dir;
} snapshot_cmd;

static bool add_gate(void *dst, const char *v) {
    snapshot_cmd *c = dst;
    c->gates[c->ngates++] = v;
    return true;
}

static int parse(snapshot_cmd *c, int argc, char **argv) {
    const ks_flag flags[] = {KS_STRING_FLAG("o", &c->dir), KS_STRING_FLAG("output", &c->dir),
                             KS_FN_FLAG("feature-gates", c, add_gate)};
    const ks_flag_group groups[] = {ks_flags_live(&c->live)};
    ks_cmd_line cl = {.cmd = "snapshot", .usage = usage, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups), .args = c->paths, .nargs = &c->npaths};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc >= 0) return rc;
    bool live = ks_cli_live_is_live(&c->live);
    if (!c->dir || (!c->npaths && !live) || (c->npaths && live)) {
        fprintf(stderr, "ksched snapshot: need -o DIR and either --kubeconfig or PATHs\n");
        usage(stderr, NULL);
        return KS_EXIT_BAD_INPUT;
    }
    return -1;
}

static int run(snapshot_cmd *c) {
    char *err = NULL;
    int rc = KS_EXIT_FAIL;
    ks_kube_snapshot s;
    ks_kube_snapshot_init(&s);
    if (!ks_feature_gates_apply(c->gates, c->ngates, &err)) {
        fprintf(stderr, "ksched snapshot: %s\n", err);
        rc = KS_EXIT_BAD_INPUT;
    } else if (!ks_cli_live_snapshot(&c->live, c->paths, c->npaths, &s, "snapshot")) {
        /* printed */
    } else if (!ks_kube_snapshot_write(&s, c->dir, &err)) {
        fprintf(stderr, "ksched snapshot: %s\n", err);
    } else {
        fprintf(stderr, "ksched snapshot: wrote %zu nodes and %zu pods to %s\n",
                ks_kube_snapshot_count(&s, "18-nodes.json"), ks_kube_snapshot_count(&s, "19-pods.json"), c->dir);
        rc = KS_EXIT_OK;
    }
    free(err);
    ks_kube_snapshot_free(&s);
    return rc;
}

int cmd_snapshot(int argc, char **argv) {
    snapshot_cmd c = {.paths = calloc((size_t)argc, sizeof(char *)), .gates = calloc((size_t)argc, sizeof(char *))};
    int rc = parse(&c, argc, argv);
    if (rc < 0) rc = run(&c);
    free(c.paths);
    free(c.gates);
    ks_cli_live_free(&c.live);
    return rc;
}
