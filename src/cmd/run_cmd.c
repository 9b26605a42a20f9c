/* ksched run: schedule a real cluster through its kube-apiserver, as
 * kube-scheduler does (cmd/kube-scheduler/app). See docs/run.md. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/flags.h"
#include "cmd/run_flags.h"
#include "framework/status.h"
#include "kube/kube_cluster_client.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/kubeconfig.h"
#include "kube/leaderelection.h"
#include "scheduler/scheduler.h"
#include "server/ops.h"
#include "util/log.h"
#include "util/version.h"
#include "util/xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void run_usage(FILE *f) {
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

static void usage(FILE *f, const void *arg) {
    const ks_run_cmd *c = arg;
    if (c->shadow) ks_run_shadow_usage(f);
    else run_usage(f);
}

/* Every flag of run and run --shadow, one parse. */
static int parse(ks_run_cmd *c, int argc, char **argv) {
    const ks_flag flags[] = {KS_BOOL_FLAG("shadow", &c->shadow), KS_STRING_FLAG("report", &c->report)};
    const ks_flag_group groups[] = {ks_flags_common(&c->co), ks_flags_leader_election(&c->lf), ks_flags_ops(&c->of),
                                    ks_flags_run(&c->rf)};
    ks_cmd_line cl = {.cmd = "run", .usage = usage, .usage_arg = c, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups)};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc < 0 && c->report && !c->shadow) {
        fprintf(stderr, "ksched run: --report needs --shadow\n");
        rc = KS_EXIT_BAD_INPUT;
    }
    return rc;
}

/* Every node gets a verdict: the shadow's agreement asks about the real
 * node, wherever it is in ksched's search order. */
static void evaluate_all_nodes(ks_config *cfg) {
    cfg->percentage_of_nodes_to_score = 100;
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        cfg->profiles[i].percentage_of_nodes_to_score = 100;
        cfg->profiles[i].has_percentage = true;
    }
}

ks_config *ks_run_config(ks_run_cmd *c, int *rc) {
    char *err = NULL;
    ks_config *cfg = NULL;
    *rc = KS_EXIT_BAD_INPUT;
    if (!ks_ops_flags_apply_logging(&c->of, &err)) goto fail;
    if (!(cfg = ks_cli_common_setup(&c->co, "run"))) return NULL;
    /* a shadow never leads: its leader-election flags are ignored */
    if (!c->shadow && !ks_leader_election_flags_apply(&c->lf, &cfg->leader_election, &err)) goto fail;
    ks_run_flags_apply(&c->rf, c->co.config_path != NULL, cfg, "run");
    if (c->shadow) evaluate_all_nodes(cfg);
    if (c->rf.write_config) {
        *rc = ks_run_write_config(cfg, c->rf.write_config, "run") ? KS_EXIT_OK : KS_EXIT_FAIL;
        ks_config_free(cfg);
        return NULL;
    }
    return cfg;
fail:
    fprintf(stderr, "ksched run: %s\n", err ? err : "failed");
    free(err);
    if (cfg) ks_config_free(cfg);
    return NULL;
}

/* Everything `run` makes, freed in reverse (run_free). */
typedef struct run_ctx {
    ks_run_cmd *c;
    ks_config *cfg;
    ks_kube_config kc;
    bool have_kc, have_control;
    ks_kube_client *client, *events_client, *lease_client;
    ks_event_recorder *recorder;
    ks_leader_elector *le;
    ks_kube_cluster_client *kb;
    char *identity;
    pthread_t control;
    run_state rs;
} run_ctx;

/* Clients, recorder, backend, scheduler, serving and the control thread.
 * false with *err, or with *err NULL when the message is printed. */
static bool run_start(run_ctx *x, char **err) {
    /* Block the signals before any thread starts (the clients' I/O
     * threads, the recorder's...), so that every thread inherits the mask
     * and only the control thread takes them. */
    sigemptyset(&x->rs.set);
    sigaddset(&x->rs.set, SIGTERM);
    sigaddset(&x->rs.set, SIGINT);
    sigaddset(&x->rs.set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &x->rs.set, NULL);
    /* --master overrides the kubeconfig's server, with or without --config. */
    if (!ks_run_kube_config_load(&x->c->rf, x->cfg, &x->kc, err)) return false;
    x->have_kc = true;
    /* Three clients, each with its own rate budget, as kube-scheduler
     * makes them: scheduling ("/scheduler" in its User-Agent), events (a
     * storm of failures cannot hold up bindings), and the lease (nothing
     * can starve a renewal). As client-go's clientsets made from one
     * rest.Config share its cached transport, they share one connection
     * and I/O thread (ks_kube_client_new_sibling). */
    if (!(x->client = ks_run_client_new(&x->kc, x->cfg, 0, "scheduler", "run"))) return false;
    x->events_client = ks_run_client_new_sibling(x->client, x->cfg, 0, NULL);
    if (!(x->recorder = ks_event_recorder_new(x->events_client, NULL, err))) return false;
    ks_kube_cluster_client_options bo = {.client = x->client, .events = x->recorder};
    ks_run_backend_watches(x->cfg, &bo);
    x->kb = ks_kube_cluster_client_new(&bo);
    ks_scheduler_options so = {.config = x->cfg, .backend = ks_kube_cluster_client_iface(x->kb), .mode = KS_RUN_THREADED};
    if (!(x->rs.s = ks_scheduler_new(&so, err))) return false;
    /* Serving first, as kube-scheduler: probes answer while a standby
     * waits for the lease. */
    ks_ops_options oo = {.flags = &x->c->of, .cfg = x->cfg, .leader_election = x->cfg->leader_election.leader_elect};
    if (!(x->rs.ops = ks_ops_start(&oo, err))) return false;
    if (pthread_create(&x->control, NULL, control_thread, &x->rs) != 0) {
        fprintf(stderr, "ksched run: cannot start the control thread\n");
        return false;
    }
    x->have_control = true;
    ks_infof(0, "\"Starting ksched\" version=\"%s\" decidesAs=\"%s\"", KS_VERSION, KS_COMPAT);
    ks_infof(1, "\"Using the API server\" server=\"%s\" profiles=%u securePort=%d", x->kc.server, x->cfg->nprofiles,
             ks_ops_port(x->rs.ops));
    return true;
}

/* Leader election: true once the lease is ours (or not asked for),
 * false with *go false when stopped first, or with *err. */
static bool run_lead(run_ctx *x, bool *go, char **err) {
    const ks_leader_election *lec = &x->cfg->leader_election;
    *go = true;
    if (!lec->leader_elect) return true;
    x->lease_client =
        ks_run_client_new_sibling(x->client, x->cfg, ks_leader_election_client_timeout_ms(lec), "leader-election");
    if (!(x->identity = ks_leader_identity_new(err))) return false;
    ks_leader_elector_options lo = {
        .client = x->lease_client,
        .lease_namespace = lec->resource_namespace,
        .lease_name = lec->resource_name,
        .identity = x->identity,
        .lease_duration_ns = lec->lease_duration_ns,
        .renew_deadline_ns = lec->renew_deadline_ns,
        .retry_period_ns = lec->retry_period_ns,
        .release_on_cancel = true,
        .events = x->recorder,
        .event_component = x->cfg->nprofiles ? x->cfg->profiles[0].scheduler_name : KS_DEFAULT_SCHEDULER_NAME,
        .cb = {.arg = &x->rs,
               .on_started_leading = on_started_leading,
               .on_stopped_leading = on_stopped_leading,
               .on_new_leader = on_new_leader}};
    if (!(x->le = ks_leader_elector_new(&lo, err))) return false;
    ks_ops_set_leader_elector(x->rs.ops, x->le);
    ks_infof(1, "attempting to acquire leader lease %s/%s as %s", lec->resource_namespace, lec->resource_name,
             x->identity);
    if (!ks_leader_elector_start(x->le, err)) return false;
    /* A standby holds no cache (docs/run.md): nothing starts until the
     * lease is ours. */
    run_state *rs = &x->rs;
    pthread_mutex_lock(&rs->mu);
    while (!rs->leading && !rs->stopping && !rs->ended) pthread_cond_wait(&rs->cv, &rs->mu);
    *go = rs->leading && !rs->stopping && !rs->ended;
    pthread_mutex_unlock(&rs->mu);
    return true;
}

/* Schedule until stopped. */
static bool run_schedule(run_ctx *x) {
    ks_scheduler *s = x->rs.s;
    ks_status *st = ks_scheduler_start(s);
    if (st) {
        char *m = ks_status_message(st);
        fprintf(stderr, "ksched run: %s\n", m);
        free(m);
        ks_status_free(st);
        return false;
    }
    pthread_mutex_lock(&x->rs.mu);
    x->rs.started = true;
    pthread_mutex_unlock(&x->rs.mu);
    ks_scheduler_run(s);
    ks_scheduler_stats stats;
    ks_scheduler_stats_get(s, &stats);
    ks_infof(1, "ksched run: stopped after %llu attempts, %llu bound", (unsigned long long)stats.attempts,
             (unsigned long long)stats.bound);
    return true;
}

/* Order: stop scheduling (in-flight bindings finish, bounded), then
 * release the lease (a standby takes over at its next retry), then the
 * event recorder flushes, then serving and the clients go. */
static void run_free(run_ctx *x) {
    run_state *rs = &x->rs;
    if (rs->ops) ks_ops_set_shutting_down(rs->ops);
    if (rs->s) ks_scheduler_stop(rs->s);
    /* The control thread may be inside ks_scheduler_stop: it ends first. */
    if (x->have_control) {
        pthread_mutex_lock(&rs->mu);
        bool signalled = rs->signo != 0;
        pthread_mutex_unlock(&rs->mu);
        if (!signalled) pthread_kill(x->control, SIGUSR2);
        pthread_join(x->control, NULL);
    }
    ks_scheduler_free(rs->s);
    ks_kube_cluster_client_free(x->kb);
    if (x->le) ks_leader_elector_stop(x->le);
    ks_event_recorder_free(x->recorder);
    /* The server may be asking the elector: it goes first. */
    if (rs->ops) ks_ops_stop(rs->ops);
    ks_leader_elector_free(x->le);
    ks_kube_client_free(x->lease_client);
    ks_kube_client_free(x->events_client);
    ks_kube_client_free(x->client);
    if (x->have_kc) ks_kube_config_free(&x->kc);
    free(x->identity);
    pthread_cond_destroy(&rs->cv);
    pthread_mutex_destroy(&rs->mu);
}

static int run(ks_run_cmd *c) {
    int rc;
    run_ctx x = {.c = c, .cfg = ks_run_config(c, &rc)};
    if (!x.cfg) return rc;
    pthread_mutex_init(&x.rs.mu, NULL);
    pthread_cond_init(&x.rs.cv, NULL);
    char *err = NULL;
    bool go = false;
    rc = KS_EXIT_FAIL;
    if (run_start(&x, &err) && run_lead(&x, &go, &err) && (!go || run_schedule(&x))) rc = KS_EXIT_OK;
    else if (err) fprintf(stderr, "ksched run: %s\n", err);
    /* a bad kubeconfig is bad input, as before any client exists */
    if (rc && !x.have_kc) rc = KS_EXIT_BAD_INPUT;
    free(err);
    run_free(&x);
    ks_config_free(x.cfg);
    return rc;
}

int cmd_run(int argc, char **argv) {
    ks_run_cmd c = {.co = {.output = "table"}};
    ks_ops_flags_init(&c.of);
    int rc = parse(&c, argc, argv);
    if (rc < 0) ks_malloc_cap_arenas();
    if (rc < 0) rc = c.shadow ? ks_run_shadow(&c) : run(&c);
    ks_ops_flags_free(&c.of);
    ks_cli_common_free(&c.co);
    return rc;
}
