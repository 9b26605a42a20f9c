/* ksched simulate PATH... : schedule every pending pod of a cluster read
 * from manifests, as kube-scheduler would, and print where each pod went and
 * why the others did not. See docs/simulate.md for the contract. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/flags.h"
#include "cmd/live.h"
#include "cmd/plugin_opts.h"
#include "framework/fw_metrics.h"
#include "metrics/sched_metrics.h"
#include "sim/compare.h"
#include "sim/report.h"
#include "sim/report_html.h"
#include "sim/simulate.h"
#include "sim/replay.h"
#include "sim/trace.h"
#include "sim/why.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -o html --fixes auto: run `why --all` when pending pods x nodes is at
 * most this (the demo: 9 x 6; each candidate change is one simulation, a
 * few ms at this size). */
#define WHY_AUTO_LIMIT 20000u

static void usage(FILE *f, const void *arg) {
    fputs("usage: ksched simulate PATH... [options]\n"
          "       ksched simulate --kubeconfig FILE [PATH...] [options]\n"
          "\n"
          "Schedule every pending pod of the cluster in PATH (manifest files or\n"
          "directories; - for stdin) with kube-scheduler's decisions, on simulated time.\n"
          "\n"
          "options:\n"
          "  --config FILE        KubeSchedulerConfiguration (default: v1.34 defaults)\n"
          "  -o, --output FORMAT  table (default), json, yaml, html (one self-contained page,\n"
          "                       with --explain's detail), or trace (differential tests)\n"
          "  --output-file FILE   write the output there instead of to stdout\n"
          "  --fixes WHEN         -o html: auto (default: small clusters), always or never\n"
          "                       run `ksched why --all` and show each pending pod's fixes\n"
          "  --explain            every plugin's verdict and score on every node\n"
          "  --seed N             seed for picking among equally scored nodes (default 1)\n"
          "  --tie-break RULE     random (default, seeded) or name: the smallest node name\n"
          "  --percentage-of-nodes-to-score N\n"
          "                       override the configuration (0-100; 0 = adaptive)\n"
          "  --fail-on-pending    exit 3 when a pod is left unscheduled\n"
          "  --metrics-file FILE  write the scheduler's metrics (Prometheus text) there at the end\n"
          "  --plugin-timing      time every plugin call; print the slowest first to stderr\n"
          "  --compare FILE       also simulate under the configuration in FILE (B; --config is A)\n"
          "                       and print the decisions that differ (docs/simulate.md)\n"
          "  --replay EVENTS      differential tests: replay these steps, print the queue's moves\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_CLI_LIVE_USAGE KS_PLUGIN_OPTS_USAGE
              KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n"
          "\n"
          "Exit status: 0 the simulation ran, 2 bad input or configuration,\n"
          "3 with --fail-on-pending when a pod stays pending.\n",
          f);
}

typedef struct sim_cmd {
    int argc;
    char **argv; /* for the page's record of the command */
    ks_cli_common co;
    ks_cli_live live;
    const char **paths;
    size_t npaths;
    ks_sim_options so;
    bool fail_on_pending, plugin_timing;
    const char *metrics_file;
    const char *fixes; /* -o html: auto, always, never */
    const char *compare_path;
    const char *replay_path; /* testing only (docs/reference-harness.md, "Event replay") */
} sim_cmd;

static bool tie_break(void *dst, const char *v) {
    if (strcmp(v, "name") && strcmp(v, "random")) return false;
    if (!strcmp(v, "name")) *(bool *)dst = true;
    return true;
}

static bool percentage(void *dst, const char *v) {
    uint64_t pct;
    if (!ks_cli_u64(v, &pct) || pct > 100) return false;
    *(int32_t *)dst = (int32_t)pct;
    return true;
}

static bool fixes_when(void *dst, const char *v) {
    if (strcmp(v, "auto") && strcmp(v, "always") && strcmp(v, "never")) return false;
    *(const char **)dst = v;
    return true;
}

static int parse(sim_cmd *c, int argc, char **argv) {
    const ks_flag flags[] = {
        KS_BOOL_FLAG("explain", &c->so.explain),
        KS_BOOL_FLAG("fail-on-pending", &c->fail_on_pending),
        KS_BOOL_FLAG("plugin-timing", &c->plugin_timing),
        KS_STRING_FLAG("metrics-file", &c->metrics_file),
        KS_FN_FLAG("fixes", &c->fixes, fixes_when),
        KS_U64_FLAG("seed", &c->so.seed, 0),
        KS_STRING_FLAG("compare", &c->compare_path),
        KS_STRING_FLAG("replay", &c->replay_path),
        KS_FN_FLAG("tie-break", &c->so.deterministic, tie_break),
        KS_FN_FLAG("percentage-of-nodes-to-score", &c->so.percentage_of_nodes_to_score, percentage),
    };
    const ks_flag_group groups[] = {ks_flags_common(&c->co), ks_flags_live(&c->live)};
    ks_cmd_line cl = {.cmd = "simulate", .usage = usage, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups), .args = c->paths, .nargs = &c->npaths};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc >= 0) return rc;
    if (!c->npaths && !ks_cli_live_is_live(&c->live)) {
        fprintf(stderr, "ksched simulate: no PATH given\n");
        usage(stderr, NULL);
        return KS_EXIT_BAD_INPUT;
    }
    const char *o = c->co.output;
    if (strcmp(o, "trace") && strcmp(o, "html") && strcmp(o, "table") && strcmp(o, "json") && strcmp(o, "yaml")) {
        fprintf(stderr, "ksched simulate: unknown output format \"%s\" (table, json, yaml, html, trace)\n", o);
        return KS_EXIT_BAD_INPUT;
    }
    /* the page shows every pod's Filter and Score tables */
    /* the page shows every attempt's Filter and (the best) Score rows */
    if (!strcmp(o, "html")) {
        c->so.explain = true;
        c->so.explain_score_rows = KS_REPORT_HTML_SCORE_ROWS;
    }
    if (c->compare_path && (!strcmp(o, "trace") || c->replay_path)) {
        fprintf(stderr, "ksched simulate: --compare does not go with -o trace or --replay\n");
        return KS_EXIT_BAD_INPUT;
    }
    return -1;
}

static bool write_metrics(const char *path) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_metrics_write(ks_sm()->reg, &b);
    FILE *f = fopen(path, "w");
    bool ok = f && fwrite(ks_sb_str(&b), 1, b.len, f) == b.len;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "ksched simulate: cannot write %s\n", path);
    ks_sb_free(&b);
    return ok;
}

static ks_report_inputs report_inputs(const sim_cmd *c) {
    return (ks_report_inputs){.command = "simulate", .argc = c->argc, .argv = c->argv, .paths = c->paths,
                              .npaths = c->npaths, .config_path = c->co.config_path, .seed = c->so.seed,
                              .deterministic = c->so.deterministic};
}

/* The page's fixes: `why --all` on the cluster as given (before the
 * simulation changes it). It simulates the cluster once per candidate
 * change, so "auto" runs it only where that is quick. true when *why is
 * filled; else *skipped may say why not (malloc'd). */
static bool page_fixes(sim_cmd *c, ks_cluster *cluster, const ks_config *cfg, ks_why_result *why, char **skipped) {
    if (strcmp(c->co.output, "html") || !strcmp(c->fixes, "never")) return false;
    size_t pending = 0;
    for (uint32_t i = 0; i < cluster->pods.n; i++) pending += ks_sim_is_pending(cfg, cluster->pods.v[i]);
    if (strcmp(c->fixes, "always") && pending * cluster->nodes.n > WHY_AUTO_LIMIT) {
        *skipped = ks_xasprintf("%zu pending pods on %u nodes is above the automatic limit of %u pod-nodes "
                                "(--fixes always computes them; ksched why NAMESPACE/NAME asks for one pod)",
                                pending, cluster->nodes.n, WHY_AUTO_LIMIT);
        return false;
    }
    ks_why_options wo = {.all = true, .sim = c->so};
    wo.sim.explain = false;
    wo.sim.workloads = NULL; /* its many runs cannot share the held ordinals */
    char *werr = NULL;
    bool ok = ks_why(cluster, cfg, ks_default_registry(), &wo, why, &werr);
    if (!ok) *skipped = ks_xasprintf("ksched why failed: %s", werr ? werr : "");
    free(werr);
    return ok;
}

/* --compare: the same cluster under the configuration in that file (B). */
static int compare(sim_cmd *c, ks_cluster *cluster, const ks_config *cfg) {
    ks_config *cfg_b = ks_cli_load_config(c->compare_path, ks_default_registry());
    if (!cfg_b) return KS_EXIT_BAD_INPUT;
    ks_compare_result cr;
    char *err = NULL;
    int rc = KS_EXIT_BAD_INPUT;
    if (!ks_compare(cluster, cfg, c->co.config_path ? c->co.config_path : "defaults", cfg_b, c->compare_path,
                    ks_default_registry(), &c->so, &cr, &err)) {
        fprintf(stderr, "ksched simulate: %s\n", err);
        free(err);
    } else {
        FILE *out = ks_cli_output_open(&c->co, "simulate");
        if (out) {
            if (!strcmp(c->co.output, "html")) {
                ks_report_inputs in = report_inputs(c);
                ks_report_html_compare(out, cluster, &cr, c->compare_path, &in);
            } else if (!strcmp(c->co.output, "table")) {
                ks_compare_report_table(out, &cr);
            } else {
                ks_compare_report_json(out, &cr, !strcmp(c->co.output, "yaml"));
            }
            rc = ks_cli_output_close(&c->co, out, "simulate") ? KS_EXIT_OK : KS_EXIT_BAD_INPUT;
            if (c->fail_on_pending && (cr.side[0].unschedulable || cr.side[1].unschedulable)) rc = 3;
        }
        ks_compare_result_free(&cr);
    }
    ks_config_free(cfg_b);
    return rc;
}

/* The answer in the format asked for; false when it could not be written. */
static bool write_result(sim_cmd *c, const ks_sim_result *res, const ks_why_result *why, const char *why_skipped) {
    FILE *out = ks_cli_output_open(&c->co, "simulate");
    if (!out) return false;
    if (!strcmp(c->co.output, "html")) {
        ks_report_inputs in = report_inputs(c);
        int64_t t0 = ks_monotonic_ns();
        clock_t c0 = clock();
        ks_report_html_simulate(out, res, why, why_skipped, &in);
        ks_infof(1, "wrote the page (%ld bytes) in %.3f s (%.3f s of CPU)", out == stdout ? -1L : ftell(out),
                 (double)(ks_monotonic_ns() - t0) / 1e9, (double)(clock() - c0) / CLOCKS_PER_SEC);
    } else if (!strcmp(c->co.output, "table")) {
        ks_report_table(out, res, c->so.explain);
    } else {
        ks_report_list(out, res, c->so.explain, !strcmp(c->co.output, "yaml"));
    }
    return ks_cli_output_close(&c->co, out, "simulate");
}

/* The simulation proper and its report. */
static int simulate(sim_cmd *c, ks_cluster *cluster, const ks_config *cfg) {
    char *err = NULL, *why_skipped = NULL;
    ks_why_result why;
    bool have_why = page_fixes(c, cluster, cfg, &why, &why_skipped);
    if (c->plugin_timing) ks_fwm_set_sampling(100, 1);
    ks_sim_result res;
    bool ok = ks_simulate(cluster, cfg, ks_default_registry(), &c->so, &res, &err);
    if (!ok) fprintf(stderr, "ksched simulate: %s\n", err);
    free(err);
    if (ok && !write_result(c, &res, have_why ? &why : NULL, why_skipped)) {
        ks_sim_result_free(&res);
        ok = false;
    }
    if (have_why) ks_why_result_free(&why);
    free(why_skipped);
    if (!ok) return KS_EXIT_BAD_INPUT;
    ks_infof(1, "simulated %u pending pods, %llu attempts, %.3f s of simulated time, %.3f s wall", res.npods,
             (unsigned long long)res.attempts, (double)(res.end_ns - res.start_ns) / 1e9, res.wall_seconds);
    int rc = KS_EXIT_OK;
    if (c->plugin_timing) {
        ks_strbuf b;
        ks_sb_init(&b);
        ks_plugin_timing_report(&b, false);
        fputs(ks_sb_str(&b), stderr);
        ks_sb_free(&b);
    }
    if (c->metrics_file && !write_metrics(c->metrics_file)) rc = KS_EXIT_BAD_INPUT;
    if (c->fail_on_pending) {
        for (uint32_t i = 0; i < res.npods; i++)
            if (res.pods[i].state != KS_SIM_SCHEDULED) rc = 3;
        /* an OrderedReady ordinal never created is a pod left pending too */
        for (uint32_t i = 0; i < res.nworkloads; i++)
            if (res.workloads[i].not_created) rc = 3;
    }
    ks_sim_result_free(&res);
    return rc;
}

static int run(sim_cmd *c) {
    ks_config *cfg = ks_cli_common_setup(&c->co, "simulate");
    if (!cfg) return KS_EXIT_BAD_INPUT;
    ks_cluster *cluster = ks_cli_live_cluster(&c->live, c->paths, c->npaths, "simulate");
    int rc = KS_EXIT_BAD_INPUT;
    char *err = NULL;
    bool trace = !strcmp(c->co.output, "trace");
    ks_wl_generated gen = {0};
    /* the workloads' controllers run first (not for the differential
     * harness's formats, -o trace and --replay, whose reference runs no
     * controllers); the two runs of --compare cannot share the
     * OrderedReady ordinals, so they are created at once there */
    if (cluster && !c->replay_path && !trace &&
        !ks_cli_expand_workloads(cluster, c->so.seed, c->compare_path != NULL, &gen, "simulate")) {
        ks_cluster_free(cluster);
        cluster = NULL;
    }
    c->so.workloads = &gen;
    if (!cluster) {
        /* errors printed */
    } else if (c->compare_path) {
        rc = compare(c, cluster, cfg);
    } else if (c->replay_path) {
        rc = ks_replay_run(stdout, cluster, cfg, ks_default_registry(), c->replay_path, &err) ? 0 : 2;
    } else if (!strcmp(c->co.output, "trace")) {
        c->so.deterministic = true;
        rc = ks_trace_run(stdout, cluster, cfg, ks_default_registry(), &c->so, &err) ? 0 : 2;
    } else {
        rc = simulate(c, cluster, cfg);
    }
    if (err) fprintf(stderr, "ksched simulate: %s\n", err);
    free(err);
    c->so.workloads = NULL;
    ks_wl_generated_free(&gen);
    if (cluster) ks_cluster_free(cluster);
    ks_config_free(cfg);
    return rc;
}

int cmd_simulate(int argc, char **argv) {
    sim_cmd c = {.argc = argc,
                 .argv = argv,
                 .co = {.output = "table"},
                 .fixes = "auto",
                 .paths = calloc((size_t)argc, sizeof(char *)),
                 .so = {.seed = 1, .percentage_of_nodes_to_score = -1}};
    int rc = parse(&c, argc, argv);
    if (rc < 0) rc = run(&c);
    free(c.paths);
    ks_cli_common_free(&c.co);
    ks_cli_live_free(&c.live);
    return rc;
}
