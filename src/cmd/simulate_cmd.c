/* ksched simulate PATH... : schedule every pending pod of a cluster read
 * from manifests, as kube-scheduler would, and print where each pod went and
 * why the others did not. See docs/simulate.md for the contract. */
#include "cmd/common.h"
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

int cmd_simulate(int argc, char **argv);

/* -o html --fixes auto: run `why --all` when pending pods x nodes is at
 * most this (the demo: 9 x 6; each candidate change is one simulation, a
 * few ms at this size). */
#define WHY_AUTO_LIMIT 20000u

static void usage(FILE *f) {
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

int cmd_simulate(int argc, char **argv) {
    ks_cli_common co = {.output = "table"};
    ks_cli_live live = {0};
    const char **paths = calloc((size_t)argc, sizeof(char *));
    size_t npaths = 0;
    ks_sim_options so = {.seed = 1, .percentage_of_nodes_to_score = -1};
    bool fail_on_pending = false, plugin_timing = false;
    const char *metrics_file = NULL;
    const char *replay_path = NULL;
    const char *fixes = "auto";
    ks_why_result why;
    bool have_why = false;
    char *why_skipped = NULL;
    const char *compare_path = NULL;
    ks_config *cfg_b = NULL;
    char *err = NULL;
    int rc = 2;
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
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "--explain")) {
            so.explain = true;
        } else if (!strcmp(a, "--fail-on-pending")) {
            fail_on_pending = true;
        } else if (!strcmp(a, "--plugin-timing")) {
            plugin_timing = true;
        } else if (ks_cli_value(argc, argv, &i, "metrics-file", &val, &err)) {
            if (!val) goto usage_error;
            metrics_file = val;
        } else if (ks_cli_value(argc, argv, &i, "fixes", &val, &err)) {
            if (!val) goto usage_error;
            if (strcmp(val, "auto") && strcmp(val, "always") && strcmp(val, "never")) goto bad_value;
            fixes = val;
        } else if (ks_cli_value(argc, argv, &i, "seed", &val, &err)) {
            if (!val || !ks_cli_u64(val, &so.seed)) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "compare", &val, &err)) {
            if (!val) goto usage_error;
            compare_path = val;
        } else if (ks_cli_value(argc, argv, &i, "replay", &val, &err)) {
            /* testing only (docs/reference-harness.md, "Event replay") */
            if (!val) goto usage_error;
            replay_path = val;
        } else if (ks_cli_value(argc, argv, &i, "tie-break", &val, &err)) {
            if (!val) goto usage_error;
            if (!strcmp(val, "name")) so.deterministic = true;
            else if (strcmp(val, "random") != 0) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "percentage-of-nodes-to-score", &val, &err)) {
            uint64_t pct;
            if (!val || !ks_cli_u64(val, &pct) || pct > 100) goto bad_value;
            so.percentage_of_nodes_to_score = (int32_t)pct;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ksched simulate: unknown option %s\n", a);
            usage(stderr);
            goto out;
        } else {
            paths[npaths++] = a;
        }
        continue;
    bad_value:
        fprintf(stderr, "ksched simulate: invalid value for %s\n", a);
        goto out;
    }
    if (!npaths && !ks_cli_live_is_live(&live)) {
        fprintf(stderr, "ksched simulate: no PATH given\n");
        usage(stderr);
        goto out;
    }
    bool trace = !strcmp(co.output, "trace"), html = !strcmp(co.output, "html");
    if (!trace && !html && strcmp(co.output, "table") && strcmp(co.output, "json") && strcmp(co.output, "yaml")) {
        fprintf(stderr, "ksched simulate: unknown output format \"%s\" (table, json, yaml, html, trace)\n",
                co.output);
        goto out;
    }
    /* the page shows every pod's Filter and Score tables */
    if (html) so.explain = true;

    cfg = ks_cli_common_setup(&co, "simulate");
    if (!cfg) goto out;
    cluster = ks_cli_live_cluster(&live, paths, npaths, "simulate");
    if (!cluster) goto out;

    if (compare_path) {
        if (trace || replay_path) {
            fprintf(stderr, "ksched simulate: --compare does not go with -o trace or --replay\n");
            goto out;
        }
        cfg_b = ks_cli_load_config(compare_path, ks_default_registry());
        if (!cfg_b) goto out;
        ks_compare_result cr;
        if (!ks_compare(cluster, cfg, co.config_path ? co.config_path : "defaults", cfg_b, compare_path,
                        ks_default_registry(), &so, &cr, &err)) {
            fprintf(stderr, "ksched simulate: %s\n", err);
            goto out;
        }
        FILE *cout = ks_cli_output_open(&co, "simulate");
        if (!cout) {
            ks_compare_result_free(&cr);
            goto out;
        }
        if (html) {
            ks_report_inputs in = {.command = "simulate", .argc = argc, .argv = argv, .paths = paths,
                                   .npaths = npaths, .config_path = co.config_path, .seed = so.seed,
                                   .deterministic = so.deterministic};
            ks_report_html_compare(cout, cluster, &cr, compare_path, &in);
        } else if (!strcmp(co.output, "table")) {
            ks_compare_report_table(cout, &cr);
        } else {
            ks_compare_report_json(cout, &cr, !strcmp(co.output, "yaml"));
        }
        rc = ks_cli_output_close(&co, cout, "simulate") ? 0 : 2;
        if (fail_on_pending && (cr.side[0].unschedulable || cr.side[1].unschedulable)) rc = 3;
        ks_compare_result_free(&cr);
        goto out;
    }
    if (replay_path) {
        rc = ks_replay_run(stdout, cluster, cfg, ks_default_registry(), replay_path, &err) ? 0 : 2;
        if (rc) fprintf(stderr, "ksched simulate: %s\n", err);
        goto out;
    }
    if (trace) {
        so.deterministic = true;
        rc = ks_trace_run(stdout, cluster, cfg, ks_default_registry(), &so, &err) ? 0 : 2;
        if (rc) fprintf(stderr, "ksched simulate: %s\n", err);
        goto out;
    }

    /* The page's fixes: `why --all` on the cluster as given (before the
     * simulation below changes it). It simulates the cluster once per
     * candidate change, so "auto" runs it only where that is quick. */
    if (html && strcmp(fixes, "never") != 0) {
        size_t pending = 0;
        for (uint32_t i = 0; i < cluster->pods.n; i++) pending += ks_sim_is_pending(cfg, cluster->pods.v[i]);
        if (!strcmp(fixes, "always") || pending * cluster->nodes.n <= WHY_AUTO_LIMIT) {
            ks_why_options wo = {.all = true, .sim = so};
            wo.sim.explain = false;
            char *werr = NULL;
            have_why = ks_why(cluster, cfg, ks_default_registry(), &wo, &why, &werr);
            if (!have_why) why_skipped = ks_xasprintf("ksched why failed: %s", werr ? werr : "");
            free(werr);
        } else {
            why_skipped = ks_xasprintf("%zu pending pods on %u nodes is above the automatic limit of %u pod-nodes "
                                       "(--fixes always computes them; ksched why NAMESPACE/NAME asks for one pod)",
                                       pending, cluster->nodes.n, WHY_AUTO_LIMIT);
        }
    }

    if (plugin_timing) ks_fwm_set_sampling(100, 1);
    ks_sim_result res;
    if (!ks_simulate(cluster, cfg, ks_default_registry(), &so, &res, &err)) {
        fprintf(stderr, "ksched simulate: %s\n", err);
        goto out;
    }
    FILE *out = ks_cli_output_open(&co, "simulate");
    if (!out) {
        ks_sim_result_free(&res);
        goto out;
    }
    if (html) {
        ks_report_inputs in = {.command = "simulate", .argc = argc, .argv = argv, .paths = paths,
                               .npaths = npaths, .config_path = co.config_path, .seed = so.seed,
                               .deterministic = so.deterministic};
        int64_t t0 = ks_monotonic_ns();
        clock_t c0 = clock();
        ks_report_html_simulate(out, &res, have_why ? &why : NULL, why_skipped, &in);
        ks_infof(1, "wrote the page (%ld bytes) in %.3f s (%.3f s of CPU)", out == stdout ? -1L : ftell(out),
                 (double)(ks_monotonic_ns() - t0) / 1e9, (double)(clock() - c0) / CLOCKS_PER_SEC);
    } else if (!strcmp(co.output, "table")) {
        ks_report_table(out, &res, so.explain);
    } else {
        ks_report_list(out, &res, so.explain, !strcmp(co.output, "yaml"));
    }
    if (!ks_cli_output_close(&co, out, "simulate")) {
        ks_sim_result_free(&res);
        goto out;
    }
    ks_infof(1, "simulated %u pending pods, %llu attempts, %.3f s of simulated time, %.3f s wall",
             res.npods, (unsigned long long)res.attempts, (double)(res.end_ns - res.start_ns) / 1e9,
             res.wall_seconds);
    rc = 0;
    if (plugin_timing) {
        ks_strbuf b;
        ks_sb_init(&b);
        ks_plugin_timing_report(&b, false);
        fputs(ks_sb_str(&b), stderr);
        ks_sb_free(&b);
    }
    if (metrics_file) {
        ks_strbuf b;
        ks_sb_init(&b);
        ks_metrics_write(ks_sm()->reg, &b);
        FILE *f = fopen(metrics_file, "w");
        if (!f || fwrite(ks_sb_str(&b), 1, b.len, f) != b.len) {
            fprintf(stderr, "ksched simulate: cannot write %s\n", metrics_file);
            rc = 2;
        }
        if (f && fclose(f) != 0) rc = 2;
        ks_sb_free(&b);
    }
    if (fail_on_pending) {
        for (uint32_t i = 0; i < res.npods; i++)
            if (res.pods[i].state != KS_SIM_SCHEDULED) rc = 3;
    }
    ks_sim_result_free(&res);
    goto out;

usage_error:
    fprintf(stderr, "ksched simulate: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    free(err);
    free(paths);
    ks_cli_common_free(&co);
    ks_cli_live_free(&live);
    if (cluster) ks_cluster_free(cluster);
    if (cfg) ks_config_free(cfg);
    if (cfg_b) ks_config_free(cfg_b);
    if (have_why) ks_why_result_free(&why);
    free(why_skipped);
    return rc;
}
