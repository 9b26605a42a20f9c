/* ksched run --shadow: decide every pod another scheduler binds and
 * record whether ksched agrees, writing nothing to the cluster (see
 * src/kube/shadow.h and docs/run.md). */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/run_flags.h"
#include "framework/status.h"
#include "kube/backend.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leaderelection.h"
#include "kube/shadow.h"
#include "scheduler/scheduler.h"
#include "server/ops.h"
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fputs("usage: ksched run --shadow [--report FILE] [options]\n"
          "\n"
          "Watch a cluster that another scheduler schedules; for every pending pod of a\n"
          "profile of the configuration that it binds, run ksched's scheduling cycle on\n"
          "the cluster as it was just before, and record whether ksched agrees with the\n"
          "node (same-top, feasible, infeasible, incomparable). Binds nothing, writes\n"
          "nothing, takes no lease; needs only get/list/watch. Runs until SIGTERM/SIGINT.\n"
          "\n"
          "options:\n"
          "  --report FILE        one JSON line per pod (- for stdout)\n"
          "  --config FILE        KubeSchedulerConfiguration (the real scheduler's, ideally)\n"
          KS_RUN_FLAGS_USAGE
          "  --leader-elect...    accepted and ignored (a shadow never leads)\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_PLUGIN_OPTS_USAGE KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n"
          "\n"
          "serving (/metrics has ksched_shadow_decisions_total{agreement}):\n",
          f);
    fputs(ks_ops_flags_usage(), f);
}

/* Every node gets a verdict: the agreement asks about the real node,
 * wherever it is in ksched's search order. */
static void evaluate_all_nodes(ks_config *cfg) {
    cfg->percentage_of_nodes_to_score = 100;
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        cfg->profiles[i].percentage_of_nodes_to_score = 100;
        cfg->profiles[i].has_percentage = true;
    }
}

int cmd_run_shadow(int argc, char **argv) {
    ks_cli_common co = {.output = "table"};
    ks_leader_election_flags lf = {0};
    ks_ops_flags of;
    ks_ops_flags_init(&of);
    ks_run_flags rf = {0};
    const char *report_path = NULL;
    char *err = NULL;
    int rc = KS_EXIT_BAD_INPUT;
    ks_config *cfg = NULL;
    ks_kube_config kc = {0};
    bool have_kc = false;
    ks_kube_client *client = NULL;
    ks_kube_backend *kb = NULL;
    ks_shadow *sh = NULL;
    ks_scheduler *s = NULL;
    ks_ops *ops = NULL;
    FILE *report = NULL;

    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        if (!strcmp(argv[i], "--shadow")) continue;
        int r = ks_cli_common_parse(&co, argc, argv, &i, &err);
        if (r < 0) goto usage_error;
        if (r > 0) continue;
        if ((r = ks_leader_election_flag_parse(&lf, argc, argv, &i, &err)) < 0) goto usage_error;
        if (r > 0) continue;
        if ((r = ks_ops_flag_parse(&of, argc, argv, &i, &err)) < 0) goto usage_error;
        if (r > 0) continue;
        if ((r = ks_run_flag_parse(&rf, argc, argv, &i, &err)) < 0) goto usage_error;
        if (r > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (ks_cli_value(argc, argv, &i, "report", &val, &err)) {
            if (!val) goto usage_error;
            report_path = val;
        } else {
            fprintf(stderr, "ksched run: unknown option %s\n", a);
            usage(stderr);
            goto out;
        }
    }
    if (!ks_ops_flags_apply_logging(&of, &err)) goto fail_msg;
    cfg = ks_cli_common_setup(&co, "run");
    if (!cfg) goto out;
    ks_run_flags_apply(&rf, co.config_path != NULL, cfg, "run");
    evaluate_all_nodes(cfg);
    if (rf.write_config) {
        rc = ks_run_write_config(cfg, rf.write_config, "run") ? 0 : KS_EXIT_FAIL;
        goto out;
    }
    if (report_path) {
        report = strcmp(report_path, "-") ? fopen(report_path, "a") : stdout;
        if (!report) {
            fprintf(stderr, "ksched run: %s: %s\n", report_path, strerror(errno));
            goto out;
        }
    }

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    if (!ks_run_kube_config_load(&rf, cfg, &kc, &err)) goto fail_msg;
    have_kc = true;
    rc = KS_EXIT_FAIL;
    if (!(client = ks_run_client_new(&kc, cfg, 0, NULL, "run"))) goto out;
    ks_kube_backend_options bo = {.client = client};
    ks_run_backend_watches(cfg, &bo);
    kb = ks_kube_backend_new(&bo);
    sh = ks_shadow_new(&(ks_shadow_options){.inner = ks_kube_backend_iface(kb), .report = report});
    ks_scheduler_options so = {.config = cfg, .backend = ks_shadow_backend(sh), .observer = ks_shadow_observer(sh)};
    if (!(s = ks_scheduler_new(&so, &err))) goto fail_msg;
    ks_shadow_attach(sh, s);
    if (!(ops = ks_ops_start(&(ks_ops_options){.flags = &of, .cfg = cfg, .leader_election = false}, &err)))
        goto fail_msg;
    ks_infof(1, "ksched run --shadow: API server %s, %u profile(s), serving on port %d", kc.server, cfg->nprofiles,
             ks_ops_port(ops));
    ks_status *st = ks_scheduler_start(s);
    if (st) {
        char *m = ks_status_message(st);
        fprintf(stderr, "ksched run: %s\n", m);
        free(m);
        ks_status_free(st);
        goto out;
    }
    /* Nothing else to do here: the watch threads decide. */
    bool synced = false;
    const struct timespec tick = {0, 100 * 1000 * 1000};
    for (;;) {
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig > 0) break;
        if (!synced && ks_scheduler_synced(s)) {
            ks_ops_set_synced(ops);
            synced = true;
            ks_infof(1, "shadow: caches synced");
        }
    }
    ks_shadow_stats stats;
    ks_shadow_stats_get(sh, &stats);
    ks_infof(1, "ksched run --shadow: stopped; same-top %llu, feasible %llu, infeasible %llu, incomparable %llu",
             (unsigned long long)stats.decisions[KS_SHADOW_SAME_TOP],
             (unsigned long long)stats.decisions[KS_SHADOW_FEASIBLE],
             (unsigned long long)stats.decisions[KS_SHADOW_INFEASIBLE],
             (unsigned long long)stats.decisions[KS_SHADOW_INCOMPARABLE]);
    rc = 0;
    goto out;

fail_msg:
    fprintf(stderr, "ksched run: %s\n", err ? err : "failed");
    goto out;
usage_error:
    fprintf(stderr, "ksched run: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    if (ops) ks_ops_set_shutting_down(ops);
    /* the watches stop first: they drive the scheduler */
    if (kb) ks_kube_backend_iface(kb)->stop(kb);
    ks_scheduler_free(s);
    ks_shadow_free(sh);
    ks_kube_backend_free(kb);
    if (ops) ks_ops_stop(ops);
    ks_kube_client_free(client);
    if (have_kc) ks_kube_config_free(&kc);
    if (report && report != stdout) fclose(report);
    free(err);
    ks_ops_flags_free(&of);
    ks_cli_common_free(&co);
    if (cfg) ks_config_free(cfg);
    return rc;
}
