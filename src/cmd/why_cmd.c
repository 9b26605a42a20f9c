/* ksched why NAMESPACE/NAME PATH... : why a pod is pending, grouped as
 * kube-scheduler groups it and per class of nodes, and the smallest
 * changes that would let it schedule, each verified by simulating the
 * changed cluster. See docs/why.md. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/live.h"
#include "cmd/plugin_opts.h"
#include "sim/report_html.h"
#include "sim/why.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fputs("usage: ksched why NAMESPACE/NAME PATH... [options]\n"
          "       ksched why --all PATH... [options]\n"
          "       ksched why NAMESPACE/NAME --kubeconfig FILE [PATH...] [options]\n"
          "\n"
          "Why the pod is pending (its last attempt's verdicts, per class of nodes, with\n"
          "the numbers behind each), and the smallest changes that would let it schedule,\n"
          "each verified by running the scheduler on the changed cluster. Read-only.\n"
          "\n"
          "options:\n"
          "  --all                every pending pod, grouped by root cause\n"
          "  --config FILE        KubeSchedulerConfiguration (default: v1.34 defaults)\n"
          "  -o, --output FORMAT  table (default), json, yaml or html (one self-contained page)\n"
          "  --output-file FILE   write the output there instead of to stdout\n"
          "  --max-fixes N        fixes printed per pod (default 10)\n"
          "  --max-runs N         simulations per pod when looking for fixes (default 200)\n"
          "  --seed N             seed for --tie-break random (default 1)\n"
          "  --tie-break RULE     name (default: the smallest node name) or random\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_CLI_LIVE_USAGE KS_PLUGIN_OPTS_USAGE
              KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n"
          "\n"
          "Exit status: 0 answered, 2 bad input, configuration or pod name.\n",
          f);
}

int cmd_why(int argc, char **argv) {
    ks_cli_common co = {.output = "table"};
    ks_cli_live live = {0};
    const char **paths = calloc((size_t)argc, sizeof(char *));
    size_t npaths = 0;
    ks_why_options wo = {.sim = {.seed = 1, .deterministic = true, .percentage_of_nodes_to_score = -1}};
    char *err = NULL;
    int rc = KS_EXIT_BAD_INPUT;
    ks_cluster *cluster = NULL;
    ks_config *cfg = NULL;

    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        int r = ks_cli_common_parse(&co, argc, argv, &i, &err);
        if (r < 0) goto usage_error;
        if (r > 0) continue;
        if ((r = ks_cli_live_parse(&live, argc, argv, &i, &err)) < 0) goto usage_error;
        if (r > 0) continue;
        const char *a = argv[i];
        uint64_t n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = KS_EXIT_OK;
            goto out;
        } else if (!strcmp(a, "--all")) {
            wo.all = true;
        } else if (ks_cli_value(argc, argv, &i, "max-fixes", &val, &err)) {
            if (!val || !ks_cli_u64(val, &n) || n < 1 || n > 1000) goto bad_value;
            wo.max_fixes = (uint32_t)n;
        } else if (ks_cli_value(argc, argv, &i, "max-runs", &val, &err)) {
            if (!val || !ks_cli_u64(val, &n) || n < 1 || n > 100000) goto bad_value;
            wo.max_runs = (uint32_t)n;
        } else if (ks_cli_value(argc, argv, &i, "seed", &val, &err)) {
            if (!val || !ks_cli_u64(val, &wo.sim.seed)) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "tie-break", &val, &err)) {
            if (!val) goto usage_error;
            if (!strcmp(val, "random")) wo.sim.deterministic = false;
            else if (strcmp(val, "name") != 0) goto bad_value;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ksched why: unknown option %s\n", a);
            usage(stderr);
            goto out;
        } else if (!wo.all && !wo.pod && strchr(a, '/') && !strchr(strchr(a, '/') + 1, '/') && a[0] != '/' &&
                   a[0] != '.') {
            /* NAMESPACE/NAME: one slash, not a path that exists */
            FILE *f = fopen(a, "r");
            if (f) {
                fclose(f);
                paths[npaths++] = a;
            } else {
                wo.pod = a;
            }
        } else {
            paths[npaths++] = a;
        }
        continue;
    bad_value:
        fprintf(stderr, "ksched why: invalid value for %s\n", a);
        goto out;
    }
    if (!wo.all && !wo.pod) {
        fprintf(stderr, "ksched why: name a pod as NAMESPACE/NAME, or give --all\n");
        usage(stderr);
        goto out;
    }
    if (!npaths && !ks_cli_live_is_live(&live)) {
        fprintf(stderr, "ksched why: no PATH given\n");
        usage(stderr);
        goto out;
    }
    if (strcmp(co.output, "table") && strcmp(co.output, "json") && strcmp(co.output, "yaml") &&
        strcmp(co.output, "html")) {
        fprintf(stderr, "ksched why: unknown output format \"%s\" (table, json, yaml, html)\n", co.output);
        goto out;
    }
    cfg = ks_cli_common_setup(&co, "why");
    if (!cfg) goto out;
    cluster = ks_cli_live_cluster(&live, paths, npaths, "why");
    if (!cluster) goto out;

    ks_why_result res;
    if (!ks_why(cluster, cfg, ks_default_registry(), &wo, &res, &err)) {
        fprintf(stderr, "ksched why: %s\n", err);
        goto out;
    }
    FILE *out = ks_cli_output_open(&co, "why");
    if (out) {
        if (!strcmp(co.output, "html")) {
            ks_report_inputs in = {.command = "why", .argc = argc, .argv = argv, .paths = paths, .npaths = npaths,
                                   .config_path = co.config_path, .seed = wo.sim.seed,
                                   .deterministic = wo.sim.deterministic};
            ks_report_html_why(out, cluster, &res, &in);
        } else if (!strcmp(co.output, "table")) {
            ks_why_report_table(out, &res);
        } else {
            ks_why_report_list(out, &res, !strcmp(co.output, "yaml"));
        }
        if (ks_cli_output_close(&co, out, "why")) rc = KS_EXIT_OK;
    }
    ks_infof(1, "why: %u simulations, %.3f s wall", res.runs, res.wall_seconds);
    ks_why_result_free(&res);
    goto out;

usage_error:
    fprintf(stderr, "ksched why: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    free(err);
    free(paths);
    ks_cli_common_free(&co);
    ks_cli_live_free(&live);
    if (cluster) ks_cluster_free(cluster);
    if (cfg) ks_config_free(cfg);
    return rc;
}
