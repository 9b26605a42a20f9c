/* ksched run: schedule a real cluster through its kube-apiserver, as
 * kube-scheduler does (cmd/kube-scheduler/app). See docs/run.md. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/run_flags.h"
#include "framework/status.h"
#include "kube/backend.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/kubeconfig.h"
#include "kube/leaderelection.h"
#include "scheduler/scheduler.h"
#include "server/ops.h"
#include "util/log.h"
#include "util/version.h"

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
          KS_RUN_FLAGS_USAGE
          "  --shadow             decide beside another scheduler, write nothing (see\n"
          "                       ksched run --shadow -h and docs/run.md)\n"
          "  --leader-elect[=BOOL], --leader-elect-lease-duration=D,\n"
          "  --leader-elect-renew-deadline=D, --leader-elect-retry-period=D,\n"
          "  --leader-elect-resource-lock=leases, --leader-elect-resource-name=NAME,\n"
          "  --leader-elect-resource-namespace=NS\n"
          "                       override leaderElection (see docs/run.md)\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_PLUGIN_OPTS_USAGE KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n"
          "\n"
          "serving (/healthz, /livez, /readyz, /metrics, /configz, /debug):\n",
          f);
    fputs(ks_ops_flags_usage(), f);
    fputs("\n"
          "Exit status: 0 after a clean shutdown, 1 on a fatal error or a lost lease,\n"
          "2 bad input or configuration.\n",
          f);
}

/* What the threads of `run` share: the control thread (signals, the
 * readiness poll), the elector's callbacks and the main thread, which
 * waits for the lease, then schedules. */
typedef struct run_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sigset_t set;
    ks_scheduler *s;
    ks_ops *ops;
    bool stopping;  /* SIGTERM/SIGINT, or the main thread is done */
    bool leading;   /* the lease is held: schedule */
    bool ended;     /* the elector's thread ended */
    bool started;   /* ks_scheduler_start returned (s may be polled) */
    bool synced_reported;
    int signo;
} run_state;

static void request_stop(run_state *rs) {
    pthread_mutex_lock(&rs->mu);
    rs->stopping = true;
    pthread_cond_broadcast(&rs->cv);
    pthread_mutex_unlock(&rs->mu);
    ks_ops_set_shutting_down(rs->ops);
    ks_scheduler_stop(rs->s);
}

/* Signals reach this one thread (ks_scheduler_stop is not
 * async-signal-safe, so no handler calls it). Between signals it tells
 * /readyz when the initial lists are in (upstream's sched-handler-sync). */
static void *control_thread(void *arg) {
    run_state *rs = arg;
    const struct timespec tick = {0, 100 * 1000 * 1000};
    for (;;) {
        int sig = sigtimedwait(&rs->set, NULL, &tick);
        if (sig > 0) {
            if (sig == SIGUSR2) return NULL; /* the main thread is done */
            pthread_mutex_lock(&rs->mu);
            rs->signo = sig;
            pthread_mutex_unlock(&rs->mu);
            ks_infof(1, "received %s, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            request_stop(rs);
            return NULL;
        }
        pthread_mutex_lock(&rs->mu);
        bool poll = rs->started && !rs->synced_reported;
        pthread_mutex_unlock(&rs->mu);
        if (poll && ks_scheduler_synced(rs->s)) {
            ks_infof(3, "\"Handlers synced\"");
            ks_ops_set_synced(rs->ops);
            pthread_mutex_lock(&rs->mu);
            rs->synced_reported = true;
            pthread_mutex_unlock(&rs->mu);
        }
    }
}

static void on_started_leading(void *arg) {
    run_state *rs = arg;
    ks_infof(1, "started leading");
    pthread_mutex_lock(&rs->mu);
    rs->leading = true;
    pthread_cond_broadcast(&rs->cv);
    pthread_mutex_unlock(&rs->mu);
}

/* upstream: a lost lease ends the process at once with status 1 (another
 * replica may be scheduling already: nothing in flight is finished); a
 * requested stop ends it with 0 once the lease is released. */
static void on_stopped_leading(void *arg, bool lost) {
    run_state *rs = arg;
    pthread_mutex_lock(&rs->mu);
    rs->ended = true;
    bool fatal = lost && !rs->stopping;
    pthread_cond_broadcast(&rs->cv);
    pthread_mutex_unlock(&rs->mu);
    if (fatal) {
        ks_errorf("leaderelection lost");
        fflush(stderr);
        _exit(KS_EXIT_FAIL);
    }
}

static void on_new_leader(void *arg, const char *identity) {
    (void)arg;
    ks_infof(2, "new leader elected: %s", identity);
}

int cmd_run(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--shadow")) return cmd_run_shadow(argc, argv);
    ks_cli_common co = {.output = "table"};
    ks_leader_election_flags lf = {0};
    ks_ops_flags of;
    ks_ops_flags_init(&of);
    ks_run_flags rf = {0};
    char *err = NULL, *identity = NULL;
    int rc = KS_EXIT_BAD_INPUT;
    ks_config *cfg = NULL;
    ks_kube_config kc = {0};
    bool have_kc = false, have_control = false;
    ks_kube_client *client = NULL, *events_client = NULL, *lease_client = NULL;
    ks_event_recorder *recorder = NULL;
    ks_leader_elector *le = NULL;
    ks_kube_backend *kb = NULL;
    ks_scheduler *s = NULL;
    run_state rs = {.signo = 0};
    pthread_mutex_init(&rs.mu, NULL);
    pthread_cond_init(&rs.cv, NULL);
    pthread_t control;

    for (int i = 1; i < argc; i++) {
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
        } else {
            fprintf(stderr, "ksched run: unknown option %s\n", a);
            usage(stderr);
            goto out;
        }
    }
    if (!ks_ops_flags_apply_logging(&of, &err)) goto fail_msg;

    cfg = ks_cli_common_setup(&co, "run");
    if (!cfg) goto out;
    if (!ks_leader_election_flags_apply(&lf, &cfg->leader_election, &err)) goto fail_msg;
    ks_run_flags_apply(&rf, co.config_path != NULL, cfg, "run");
    if (rf.write_config) {
        rc = ks_run_write_config(cfg, rf.write_config, "run") ? 0 : KS_EXIT_FAIL;
        goto out;
    }

    /* Block the signals before any thread starts (the clients' I/O
     * threads, the recorder's...), so that every thread inherits the mask
     * and only the control thread takes them. */
    sigemptyset(&rs.set);
    sigaddset(&rs.set, SIGTERM);
    sigaddset(&rs.set, SIGINT);
    sigaddset(&rs.set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &rs.set, NULL);

    /* --master overrides the kubeconfig's server, with or without --config. */
    if (!ks_run_kube_config_load(&rf, cfg, &kc, &err)) goto fail_msg;
    have_kc = true;
    rc = KS_EXIT_FAIL;
    const ks_leader_election *lec = &cfg->leader_election;
    /* Three clients, each with its own rate budget, as kube-scheduler
     * makes them: scheduling, events (a storm of failures cannot hold up
     * bindings), and the lease (nothing can starve a renewal). */
    if (!(client = ks_run_client_new(&kc, cfg, 0, NULL, "run")) ||
        !(events_client = ks_run_client_new(&kc, cfg, 0, NULL, "run")))
        goto out;
    recorder = ks_event_recorder_new(events_client, NULL, &err);
    if (!recorder) goto fail_msg;

    ks_kube_backend_options bo = {.client = client, .events = recorder};
    ks_run_backend_watches(cfg, &bo);
    kb = ks_kube_backend_new(&bo);

    ks_scheduler_options so = {.config = cfg, .backend = ks_kube_backend_iface(kb)};
    s = ks_scheduler_new(&so, &err);
    if (!s) goto fail_msg;
    rs.s = s;
    /* Serving first, as kube-scheduler: probes answer while a standby
     * waits for the lease. */
    rs.ops = ks_ops_start(&(ks_ops_options){.flags = &of, .cfg = cfg, .leader_election = lec->leader_elect},
                          &err);
    if (!rs.ops) goto fail_msg;
    if (pthread_create(&control, NULL, control_thread, &rs) != 0) {
        fprintf(stderr, "ksched run: cannot start the control thread\n");
        goto out;
    }
    have_control = true;
    ks_infof(0, "\"Starting ksched\" version=\"%s\" decidesAs=\"%s\"", KS_VERSION, KS_COMPAT);
    ks_infof(1, "\"Using the API server\" server=\"%s\" profiles=%u securePort=%d", kc.server, cfg->nprofiles,
             ks_ops_port(rs.ops));

    if (lec->leader_elect) {
        if (!(lease_client = ks_run_client_new(&kc, cfg, ks_leader_election_client_timeout_ms(lec), "leader-election",
                                              "run")))
            goto out;
        if (!(identity = ks_leader_identity_new(&err))) goto fail_msg;
        ks_leader_elector_options lo = {
            .client = lease_client,
            .lease_namespace = lec->resource_namespace,
            .lease_name = lec->resource_name,
            .identity = identity,
            .lease_duration_ns = lec->lease_duration_ns,
            .renew_deadline_ns = lec->renew_deadline_ns,
            .retry_period_ns = lec->retry_period_ns,
            .release_on_cancel = true,
            .events = recorder,
            .event_component = cfg->nprofiles ? cfg->profiles[0].scheduler_name : KS_DEFAULT_SCHEDULER_NAME,
            .cb = {.arg = &rs,
                   .on_started_leading = on_started_leading,
                   .on_stopped_leading = on_stopped_leading,
                   .on_new_leader = on_new_leader}};
        if (!(le = ks_leader_elector_new(&lo, &err))) goto fail_msg;
        ks_ops_set_leader_elector(rs.ops, le);
        ks_infof(1, "attempting to acquire leader lease %s/%s as %s", lec->resource_namespace,
                 lec->resource_name, identity);
        if (!ks_leader_elector_start(le, &err)) goto fail_msg;
        /* A standby holds no cache (docs/run.md): nothing starts until
         * the lease is ours. */
        pthread_mutex_lock(&rs.mu);
        while (!rs.leading && !rs.stopping && !rs.ended) pthread_cond_wait(&rs.cv, &rs.mu);
        bool go = rs.leading && !rs.stopping && !rs.ended;
        pthread_mutex_unlock(&rs.mu);
        if (!go) goto stopped;
    }

    ks_status *st = ks_scheduler_start(s);
    if (st) {
        char *m = ks_status_message(st);
        fprintf(stderr, "ksched run: %s\n", m);
        free(m);
        ks_status_free(st);
        goto out;
    }
    pthread_mutex_lock(&rs.mu);
    rs.started = true;
    pthread_mutex_unlock(&rs.mu);
    ks_scheduler_run(s);
    {
        ks_scheduler_stats stats;
        ks_scheduler_stats_get(s, &stats);
        ks_infof(1, "ksched run: stopped after %llu attempts, %llu bound", (unsigned long long)stats.attempts,
                 (unsigned long long)stats.bound);
    }

stopped:
    rc = 0;
    goto out;

fail_msg:
    fprintf(stderr, "ksched run: %s\n", err ? err : "failed");
    goto out;
usage_error:
    fprintf(stderr, "ksched run: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    /* Order: stop scheduling (in-flight bindings finish, bounded), then
     * release the lease (a standby takes over at its next retry), then
     * the event recorder flushes, then serving and the clients go. */
    if (rs.ops) ks_ops_set_shutting_down(rs.ops);
    if (s) ks_scheduler_stop(s);
    /* The control thread may be inside ks_scheduler_stop: it ends first. */
    if (have_control) {
        pthread_mutex_lock(&rs.mu);
        bool signalled = rs.signo != 0;
        pthread_mutex_unlock(&rs.mu);
        if (!signalled) pthread_kill(control, SIGUSR2);
        pthread_join(control, NULL);
    }
    ks_scheduler_free(s);
    ks_kube_backend_free(kb);
    if (le) ks_leader_elector_stop(le);
    ks_event_recorder_free(recorder);
    /* The server may be asking the elector: it goes first. */
    if (rs.ops) ks_ops_stop(rs.ops);
    ks_leader_elector_free(le);
    ks_kube_client_free(lease_client);
    ks_kube_client_free(events_client);
    ks_kube_client_free(client);
    if (have_kc) ks_kube_config_free(&kc);
    free(identity);
    free(err);
    ks_ops_flags_free(&of);
    ks_cli_common_free(&co);
    if (cfg) ks_config_free(cfg);
    pthread_cond_destroy(&rs.cv);
    pthread_mutex_destroy(&rs.mu);
    return rc;
}
