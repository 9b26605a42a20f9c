/* ksched run --shadow: decide every pod another scheduler binds and
 * record whether ksched agrees, writing nothing to the cluster (see
 * src/kube/shadow.h and docs/run.md). */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/run_flags.h"
#include "framework/status.h"
#include "kube/kube_cluster_client.h"
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

void ks_run_shadow_usage(FILE *f) {
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

/* What the shadow makes, freed in reverse (shadow_free). */
typedef struct shadow_ctx {
    ks_config *cfg;
    ks_kube_config kc;
    bool have_kc;
    ks_kube_client *client;
    ks_kube_cluster_client *kb;
    ks_shadow *sh;
    ks_scheduler *s;
    ks_ops *ops;
    FILE *report;
    sigset_t set;
} shadow_ctx;

/* The scheduler on a shadowed backend, and serving. false with *err, or
 * with *err NULL when the message is printed. */
static bool shadow_start(shadow_ctx *x, ks_run_cmd *c, char **err) {
    const char *path = c->report;
    if (path && !(x->report = strcmp(path, "-") ? fopen(path, "a") : stdout)) {
        fprintf(stderr, "ksched run: %s: %s\n", path, strerror(errno));
        return false;
    }
    sigemptyset(&x->set);
    sigaddset(&x->set, SIGTERM);
    sigaddset(&x->set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &x->set, NULL);
    if (!ks_run_kube_config_load(&c->rf, x->cfg, &x->kc, err)) return false;
    x->have_kc = true;
    if (!(x->client = ks_run_client_new(&x->kc, x->cfg, 0, NULL, "run"))) return false;
    /* the same watches as run: PodGroups for Coscheduling, DRA objects */
    ks_kube_cluster_client_options bo = {.client = x->client};
    ks_run_backend_watches(x->cfg, &bo);
    x->kb = ks_kube_cluster_client_new(&bo);
    x->sh = ks_shadow_new(&(ks_shadow_options){.inner = ks_kube_cluster_client_iface(x->kb), .report = x->report});
    /* Stepping on the real clock: each watch event's attempt runs at once
     * on the watch thread (ks_shadow), binding cycle and calls included. */
    ks_scheduler_options so = {.config = x->cfg, .backend = ks_shadow_backend(x->sh), .mode = KS_RUN_STEPPING,
                               .observer = ks_shadow_observer(x->sh)};
    if (!(x->s = ks_scheduler_new(&so, err))) return false;
    ks_shadow_attach(x->sh, x->s);
    if (!(x->ops = ks_ops_start(&(ks_ops_options){.flags = &c->of, .cfg = x->cfg, .leader_election = false}, err)))
        return false;
    ks_infof(1, "ksched run --shadow: API server %s, %u profile(s), serving on port %d", x->kc.server,
             x->cfg->nprofiles, ks_ops_port(x->ops));
    ks_status *st = ks_scheduler_start(x->s);
    if (!st) return true;
    char *m = ks_status_message(st);
    fprintf(stderr, "ksched run: %s\n", m);
    free(m);
    ks_status_free(st);
    return false;
}

/* Nothing to do here but wait for a signal: the watch threads decide. */
static void shadow_wait(shadow_ctx *x) {
    bool synced = false;
    const struct timespec tick = {0, 100 * 1000 * 1000};
    for (;;) {
        int sig = sigtimedwait(&x->set, NULL, &tick);
        if (sig > 0) break;
        if (!synced && ks_scheduler_synced(x->s)) {
            ks_ops_set_synced(x->ops);
            synced = true;
            ks_infof(1, "shadow: caches synced");
        }
    }
    ks_shadow_stats stats;
    ks_shadow_stats_get(x->sh, &stats);
    ks_infof(1, "ksched run --shadow: stopped; same-top %llu, feasible %llu, infeasible %llu, incomparable %llu",
             (unsigned long long)stats.decisions[KS_SHADOW_SAME_TOP],
             (unsigned long long)stats.decisions[KS_SHADOW_FEASIBLE],
             (unsigned long long)stats.decisions[KS_SHADOW_INFEASIBLE],
             (unsigned long long)stats.decisions[KS_SHADOW_INCOMPARABLE]);
}

static void shadow_free(shadow_ctx *x) {
    if (x->ops) ks_ops_set_shutting_down(x->ops);
    /* the watches stop first: they drive the scheduler */
    if (x->kb) ks_kube_cluster_client_iface(x->kb)->stop(x->kb);
    ks_scheduler_free(x->s);
    ks_shadow_free(x->sh);
    ks_kube_cluster_client_free(x->kb);
    if (x->ops) ks_ops_stop(x->ops);
    ks_kube_client_free(x->client);
    if (x->have_kc) ks_kube_config_free(&x->kc);
    if (x->report && x->report != stdout) fclose(x->report);
}

int ks_run_shadow(ks_run_cmd *c) {
    int rc;
    shadow_ctx x = {.cfg = ks_run_config(c, &rc)};
    if (!x.cfg) return rc;
    char *err = NULL;
    rc = KS_EXIT_OK;
    if (shadow_start(&x, c, &err)) {
        shadow_wait(&x);
    } else {
        if (err) fprintf(stderr, "ksched run: %s\n", err);
        /* before a client exists, the command line or kubeconfig is at fault */
        rc = x.have_kc ? KS_EXIT_FAIL : KS_EXIT_BAD_INPUT;
    }
    free(err);
    shadow_free(&x);
    ks_config_free(x.cfg);
    return rc;
}
