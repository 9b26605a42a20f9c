/* ksched why NAMESPACE/NAME PATH... : why a pod is pending, grouped as
 * kube-scheduler groups it and per class of nodes, and the smallest
 * changes that would let it schedule, each verified by simulating the
 * changed cluster. See docs/why.md. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/flags.h"
#include "cmd/live.h"
#include "cmd/plugin_opts.h"
#include "sim/report_html.h"
#include "sim/why.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f, const void *arg) {
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

typedef struct why_cmd {
    int argc;
    char **argv; /* for the page's record of the command */
    ks_cli_common co;
    ks_cli_live live;
    const char **args, **paths;
    size_t nargs, npaths;
    ks_why_options wo;
} why_cmd;

static bool count_in(const char *v, uint64_t max, uint32_t *dst) {
    uint64_t n;
    if (!ks_cli_u64(v, &n) || n < 1 || n > max) return false;
    *dst = (uint32_t)n;
    return true;
}
static bool max_fixes(void *dst, const char *v) { return count_in(v, 1000, dst); }
static bool max_runs(void *dst, const char *v) { return count_in(v, 100000, dst); }
static bool tie_break(void *dst, const char *v) {
    if (strcmp(v, "random") && strcmp(v, "name")) return false;
    *(bool *)dst = !strcmp(v, "name");
    return true;
}

/* NAMESPACE/NAME: one slash, not a path that exists. */
static bool pod_name(const char *a) {
    const char *sl = strchr(a, '/');
    if (!sl || strchr(sl + 1, '/') || a[0] == '/' || a[0] == '.') return false;
    FILE *f = fopen(a, "r");
    if (f) fclose(f);
    return !f;
}

static int parse(why_cmd *c, int argc, char **argv) {
    const ks_flag flags[] = {
        KS_BOOL_FLAG("all", &c->wo.all),
        KS_FN_FLAG("max-fixes", &c->wo.max_fixes, max_fixes),
        KS_FN_FLAG("max-runs", &c->wo.max_runs, max_runs),
        KS_U64_FLAG("seed", &c->wo.sim.seed, 0),
        KS_FN_FLAG("tie-break", &c->wo.sim.deterministic, tie_break),
    };
    const ks_flag_group groups[] = {ks_flags_common(&c->co), ks_flags_live(&c->live)};
    ks_cmd_line cl = {.cmd = "why", .usage = usage, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups), .args = c->args, .nargs = &c->nargs};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc >= 0) return rc;
    for (size_t i = 0; i < c->nargs; i++) {
        if (!c->wo.all && !c->wo.pod && pod_name(c->args[i])) c->wo.pod = c->args[i];
        else c->paths[c->npaths++] = c->args[i];
    }
    const char *msg = NULL;
    if (!c->wo.all && !c->wo.pod) msg = "name a pod as NAMESPACE/NAME, or give --all";
    else if (!c->npaths && !ks_cli_live_is_live(&c->live)) msg = "no PATH given";
    if (msg) {
        fprintf(stderr, "ksched why: %s\n", msg);
        usage(stderr, NULL);
        return KS_EXIT_BAD_INPUT;
    }
    const char *o = c->co.output;
    if (strcmp(o, "table") && strcmp(o, "json") && strcmp(o, "yaml") && strcmp(o, "html")) {
        fprintf(stderr, "ksched why: unknown output format \"%s\" (table, json, yaml, html)\n", o);
        return KS_EXIT_BAD_INPUT;
    }
    return -1;
}

static bool write_result(why_cmd *c, const ks_cluster *cluster, const ks_why_result *res) {
    FILE *out = ks_cli_output_open(&c->co, "why");
    if (!out) return false;
    if (!strcmp(c->co.output, "html")) {
        ks_report_inputs in = {.command = "why", .argc = c->argc, .argv = c->argv, .paths = c->paths,
                               .npaths = c->npaths, .config_path = c->co.config_path, .seed = c->wo.sim.seed,
                               .deterministic = c->wo.sim.deterministic};
        ks_report_html_why(out, cluster, res, &in);
    } else if (!strcmp(c->co.output, "table")) {
        ks_why_report_table(out, res);
    } else {
        ks_why_report_list(out, res, !strcmp(c->co.output, "yaml"));
    }
    return ks_cli_output_close(&c->co, out, "why");
}

static int run(why_cmd *c) {
    int rc = KS_EXIT_BAD_INPUT;
    char *err = NULL;
    ks_cluster *cluster = NULL;
    ks_config *cfg = ks_cli_common_setup(&c->co, "why");
    if (cfg) cluster = ks_cli_live_cluster(&c->live, c->paths, c->npaths, "why");
    /* the workloads' pods as their controllers make them; why simulates
     * the cluster many times, so OrderedReady ordinals are created at once */
    ks_wl_generated gen = {0};
    if (cluster && !ks_cli_expand_workloads(cluster, c->wo.sim.seed, true, &gen, "why")) {
        ks_cluster_free(cluster);
        cluster = NULL;
    }
    ks_why_result res;
    if (!cluster) {
        /* errors printed */
    } else if (!ks_why(cluster, cfg, ks_default_registry(), &c->wo, &res, &err)) {
        fprintf(stderr, "ksched why: %s\n", err);
    } else {
        if (write_result(c, cluster, &res)) rc = KS_EXIT_OK;
        ks_infof(1, "why: %u simulations, %.3f s wall", res.runs, res.wall_seconds);
        ks_why_result_free(&res);
    }
    free(err);
    ks_wl_generated_free(&gen);
    if (cluster) ks_cluster_free(cluster);
    if (cfg) ks_config_free(cfg);
    return rc;
}

int cmd_why(int argc, char **argv) {
    why_cmd c = {.argc = argc,
                 .argv = argv,
                 .co = {.output = "table"},
                 .args = calloc((size_t)argc, sizeof(char *)),
                 .paths = calloc((size_t)argc, sizeof(char *)),
                 .wo = {.sim = {.seed = 1, .deterministic = true, .percentage_of_nodes_to_score = -1}}};
    int rc = parse(&c, argc, argv);
    if (rc < 0) rc = run(&c);
    free(c.args);
    free(c.paths);
    ks_cli_common_free(&c.co);
    ks_cli_live_free(&c.live);
    return rc;
}
