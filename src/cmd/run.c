/* ksched run: schedule a real cluster through its kube-apiserver, as
 * kube-scheduler does (cmd/kube-scheduler/app). See docs/run.md. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "framework/status.h"
#include "kube/backend.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "scheduler/scheduler.h"
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_run(int argc, char **argv);

static void usage(FILE *f) {
    fputs("usage: ksched run [options]\n"
          "\n"
          "Be a scheduler for a real cluster: list and watch its kube-apiserver, schedule\n"
          "the pending pods whose spec.schedulerName names a profile of the configuration,\n"
          "bind them, and write their conditions and events as kube-scheduler v1.34 does.\n"
          "Runs until SIGTERM or SIGINT.\n"
          "\n"
          "options:\n"
          "  --config FILE        KubeSchedulerConfiguration (default: v1.34 defaults)\n"
          "  --kubeconfig FILE    kubeconfig (overrides clientConnection.kubeconfig; default:\n"
          "                       $KUBECONFIG, else the in-cluster service account)\n"
          "  --master URL         the API server's address (overrides the kubeconfig)\n"
          "  --write-config-to FILE\n"
          "                       write the configuration, defaulted, to FILE and exit\n"
          "  --leader-elect BOOL  override leaderElection.leaderElect\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_PLUGIN_OPTS_USAGE
          "  -h, --help           this text\n"
          "\n"
          "Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 bad input or\n"
          "configuration.\n",
          f);
}

/* Signals reach one thread, which stops the scheduler (ks_scheduler_stop
 * is not async-signal-safe, so no handler calls it). */
typedef struct sig_waiter {
    sigset_t set;
    ks_scheduler *s;
    int signo;
} sig_waiter;

static void *signal_thread(void *arg) {
    sig_waiter *w = arg;
    int sig = 0;
    if (sigwait(&w->set, &sig) == 0) {
        w->signo = sig;
        if (sig != SIGUSR2) ks_infof(1, "received %s, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        ks_scheduler_stop(w->s);
    }
    return NULL;
}

static bool parse_bool(const char *v, bool *out) {
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "True")) *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "f") || !strcmp(v, "False")) *out = false;
    else return false;
    return true;
}

static bool profiles_enable(const ks_config *cfg, const char *plugin) {
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        const ks_profile_config *p = &cfg->profiles[i];
        for (int ep = 0; ep < KS_EP_COUNT; ep++)
            for (uint32_t j = 0; j < p->resolved[ep].n; j++)
                if (!strcmp(p->resolved[ep].plugins[j].name, plugin)) return true;
    }
    return false;
}

int cmd_run(int argc, char **argv) {
    ks_cli_common co = {.output = "table"};
    const char *kubeconfig = NULL, *master = NULL, *write_config = NULL;
    int leader_elect = -1;
    char *err = NULL;
    int rc = KS_EXIT_BAD_INPUT;
    ks_config *cfg = NULL;
    ks_kube_config kc = {0};
    bool have_kc = false;
    ks_kube_client *client = NULL, *events = NULL;
    ks_kube_backend *kb = NULL;
    ks_scheduler *s = NULL;

    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        int r = ks_cli_common_parse(&co, argc, argv, &i, &err);
        if (r < 0) goto usage_error;
        if (r > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (ks_cli_value(argc, argv, &i, "kubeconfig", &val, &err)) {
            if (!val) goto usage_error;
            kubeconfig = val;
        } else if (ks_cli_value(argc, argv, &i, "master", &val, &err)) {
            if (!val) goto usage_error;
            master = val;
        } else if (ks_cli_value(argc, argv, &i, "write-config-to", &val, &err)) {
            if (!val) goto usage_error;
            write_config = val;
        } else if (!strcmp(a, "--leader-elect")) {
            leader_elect = 1;
        } else if (ks_cli_value(argc, argv, &i, "leader-elect", &val, &err)) {
            bool b;
            if (!val || !parse_bool(val, &b)) goto bad_value;
            leader_elect = b;
        } else {
            fprintf(stderr, "ksched run: unknown option %s\n", a);
            usage(stderr);
            goto out;
        }
        continue;
    bad_value:
        fprintf(stderr, "ksched run: invalid value for %s\n", a);
        goto out;
    }

    cfg = ks_cli_common_setup(&co, "run");
    if (!cfg) goto out;
    if (leader_elect >= 0) cfg->leader_election.leader_elect = leader_elect;
    if (write_config) {
        char *y = ks_config_to_yaml(cfg);
        FILE *f = fopen(write_config, "w");
        if (!f || fputs(y, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "ksched run: cannot write %s: %s\n", write_config, strerror(errno));
            free(y);
            rc = KS_EXIT_FAIL;
            goto out;
        }
        free(y);
        fprintf(stderr, "ksched run: wrote configuration to %s\n", write_config);
        rc = 0;
        goto out;
    }
    if (cfg->leader_election.leader_elect) {
        fprintf(stderr, "ksched run: leader election is not available in this build; "
                        "set leaderElection.leaderElect: false (or --leader-elect=false) and run one replica\n");
        goto out;
    }

    /* upstream: --kubeconfig wins over clientConnection.kubeconfig. */
    const char *kpath = kubeconfig ? kubeconfig : cfg->client_connection.kubeconfig;
    if (!ks_kube_config_load(kpath && *kpath ? kpath : NULL, NULL, master, &kc, &err)) {
        fprintf(stderr, "ksched run: %s\n", err);
        goto out;
    }
    have_kc = true;
    rc = KS_EXIT_FAIL;
    ks_kube_client_options copt = {.config = &kc,
                                   .qps = cfg->client_connection.qps,
                                   .burst = cfg->client_connection.burst};
    client = ks_kube_client_new(&copt, &err);
    if (!client) {
        fprintf(stderr, "ksched run: %s\n", err);
        goto out;
    }
    /* Events on a budget of their own, so that a storm of failures cannot
     * hold up bindings (upstream's event client). */
    events = ks_kube_client_new(&copt, &err);
    if (!events) {
        fprintf(stderr, "ksched run: %s\n", err);
        goto out;
    }
    ks_kube_backend_options bo = {.client = client,
                                  .event_client = events,
                                  .watch_pod_groups = profiles_enable(cfg, "Coscheduling")};
    kb = ks_kube_backend_new(&bo);

    /* Block the signals before any thread starts, so that every thread
     * inherits the mask and only the signal thread takes them. */
    sig_waiter w = {.signo = 0};
    sigemptyset(&w.set);
    sigaddset(&w.set, SIGTERM);
    sigaddset(&w.set, SIGINT);
    sigaddset(&w.set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &w.set, NULL);

    ks_scheduler_options so = {.config = cfg, .backend = ks_kube_backend_iface(kb)};
    s = ks_scheduler_new(&so, &err);
    if (!s) {
        fprintf(stderr, "ksched run: %s\n", err);
        goto out;
    }
    w.s = s;
    pthread_t sig_thread;
    if (pthread_create(&sig_thread, NULL, signal_thread, &w) != 0) {
        fprintf(stderr, "ksched run: cannot start the signal thread\n");
        goto out;
    }
    ks_infof(1, "ksched run: API server %s, %u profile(s)", kc.server, cfg->nprofiles);
    ks_status *st = ks_scheduler_start(s);
    if (st) {
        char *m = ks_status_message(st);
        fprintf(stderr, "ksched run: %s\n", m);
        free(m);
        ks_status_free(st);
        ks_scheduler_stop(s);
    } else {
        ks_scheduler_run(s);
        rc = 0;
    }
    /* Wake the signal thread if the loop ended on its own. */
    if (!w.signo) pthread_kill(sig_thread, SIGUSR2);
    pthread_join(sig_thread, NULL);
    ks_scheduler_stats stats;
    ks_scheduler_stats_get(s, &stats);
    ks_infof(1, "ksched run: stopped after %llu attempts, %llu bound", (unsigned long long)stats.attempts,
             (unsigned long long)stats.bound);
    goto out;

usage_error:
    fprintf(stderr, "ksched run: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    /* The scheduler first (it finishes the bindings in flight through the
     * backend), then the backend, then the clients under it. */
    ks_scheduler_free(s);
    ks_kube_backend_free(kb);
    ks_kube_client_free(events);
    ks_kube_client_free(client);
    if (have_kc) ks_kube_config_free(&kc);
    free(err);
    ks_cli_common_free(&co);
    if (cfg) ks_config_free(cfg);
    return rc;
}
