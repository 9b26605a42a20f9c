/* ksched replay [CLUSTER...] TRACE... : drive the scheduler with a
 * time-ordered stream of cluster changes on simulated time and report
 * what happened to every pod, a summary and time series, under one or
 * several configurations. See docs/replay.md. */
#include "cmd/common.h"
#include "cmd/live.h"
#include "sim/replay_input.h"
#include "sim/compare.h"
#include "sim/gpu_frag.h"
#include "sim/replay_report.h"
#include "sim/report_html.h"
#include "sim/simulate.h"
#include "sim/timeline.h"
#include "util/clock.h"
#include "util/intern.h"
#include "util/log.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_replay(int argc, char **argv);

/* --gpu-frag: the measure once per sample, against the workload of the
 * pods in the cluster at that moment (both columns read it). */
typedef struct frag_sample {
    int64_t at;
    ks_gpu_frag f;
} frag_sample;

static const ks_gpu_frag *frag_at(frag_sample *fs, ks_timeline *tl) {
    if (fs->at != ks_timeline_now(tl)) {
        const ks_cluster *c = ks_timeline_cluster(tl);
        ks_gpu_workload w;
        ks_gpu_workload_of(&w, c);
        fs->f = ks_gpu_frag_cluster(&w, c, NULL);
        ks_gpu_workload_free(&w);
        fs->at = ks_timeline_now(tl);
    }
    return &fs->f;
}

/* --gpu-frag-nodes: each node's measure in the cluster as the run left it */
static bool write_frag_nodes(FILE **f, const char *path, const char *config, ks_timeline *tl) {
    if (!*f) {
        *f = fopen(path, "w");
        if (!*f) {
            fprintf(stderr, "ksched replay: %s: cannot write\n", path);
            return false;
        }
        fputs("config,node,gpu_frag_milli,idle_gpu_milli\n", *f);
    }
    const ks_cluster *c = ks_timeline_cluster(tl);
    ks_gpu_workload w;
    ks_gpu_workload_of(&w, c);
    ks_gpu_frag *per = ks_xcalloc(c->nodes.n + 1, sizeof(*per));
    ks_gpu_frag_cluster(&w, c, per);
    for (uint32_t i = 0; i < c->nodes.n; i++)
        fprintf(*f, "%s,%s,%.1f,%.0f\n", config, ks_str(c->nodes.v[i]->name), per[i].frag_milli, per[i].idle_milli);
    free(per);
    ks_gpu_workload_free(&w);
    return true;
}

static double frag_milli(void *ctx, ks_timeline *tl) { return frag_at(ctx, tl)->frag_milli; }

static double frag_pct(void *ctx, ks_timeline *tl) {
    const ks_gpu_frag *f = frag_at(ctx, tl);
    return f->idle_milli > 0 ? 100 * f->frag_milli / f->idle_milli : 0;
}

static void usage(FILE *f) {
    fputs("usage: ksched replay [CLUSTER...] TRACE... [options]\n"
          "\n"
          "Replay a trace of pods arriving and leaving and nodes changing on simulated\n"
          "time, scheduled as kube-scheduler would, from an initial cluster. Each input's\n"
          "format is recognised from its content: manifests and openb node CSVs make the\n"
          "cluster; the native event format (YAML or JSON lines), audit logs\n"
          "(audit.k8s.io/v1 Event lines) and openb pod CSVs are traces (docs/replay.md).\n"
          "\n"
          "options:\n"
          "  --config FILE        KubeSchedulerConfiguration; repeat to compare several\n"
          "  --compare FILE       also replay under FILE (B; --config is A) and print the\n"
          "                       decisions that differ, with per-plugin score deltas\n"
          "                       side by side (default: v1.34 defaults)\n"
          "  -o, --output FORMAT  table (default), json or html (one self-contained page: the\n"
          "                       summary and charts of the series, configurations overlaid)\n"
          "  --output-file FILE   write the output there instead of to stdout\n"
          "  --pods FILE          per-pod records there (CSV, or JSON lines for .json/.jsonl;\n"
          "                       - for CSV on stdout) instead of the table\n"
          "  --series FILE        time series there (CSV, or JSON for .json; - for CSV on\n"
          "                       stdout, after the summary)\n"
          "  --step DURATION      series step (default 5m)\n"
          "  --pending-threshold DURATION\n"
          "                       series column: pods pending longer than this (default 5m)\n"
          "  --from DURATION      start this far into the trace (earlier events skipped)\n"
          "  --until DURATION     stop this far into the trace\n"
          "  --speed X            replay X times faster: trace times and durations / X\n"
          "  --start TIME         the trace's time zero (RFC 3339; default: the first\n"
          "                       event's absolute time, else the cluster's newest object)\n"
          "  --max-time DURATION  hard bound on simulated time (default 17520h)\n"
          "  --seed N             seed for picking among equally scored nodes (default 1)\n"
          "  --tie-break RULE     random (default, seeded) or name\n"
          "  --gpu-frag           series columns gpu_frag_milli and gpu_frag_pct: the FGD\n"
          "                       paper's GPU fragmentation (docs/gpu-sharing.md)\n"
          "  --gpu-frag-nodes FILE\n"
          "                       each node's GPU fragmentation where the replay ends (pick\n"
          "                       the moment with --until; CSV: config,node,gpu_frag_milli,\n"
          "                       idle_gpu_milli)\n"
          "  -v=N                 log verbosity (klog levels, to stderr)\n" KS_CLI_LIVE_USAGE KS_PLUGIN_OPTS_USAGE
              KS_FEATURE_GATES_USAGE
          "  -h, --help           this text\n"
          "\n"
          "Exit status: 0 the replay ran, 2 bad input or configuration.\n",
          f);
}

typedef struct source {
    const char *path;
    ks_tl_format fmt;
    ks_tl_reader *r;
    ks_tl_event *head; /* the next event, times placed on the clock */
    bool done;
} source;

typedef struct opts {
    int64_t from, until, start, max, step, pending_long;
    bool has_start, has_until;
    double speed;
} opts;

typedef struct run_out {
    FILE *out;               /* stdout or --output-file */
    FILE *pods;
    ks_tl_out pods_how;
    const char *config_name; /* for the pods column (several configs) */
    int64_t start;
    bool json_pods;          /* into the JSON document */
    bool first_pod;
    bool table_header;       /* the table's header is yet to print */
    ks_compare_collector *diff; /* --compare: each record, and the binding attempts */
    int side;
    ks_report_waits *waits;  /* -o html: each bound pod's wait */
} run_out;

static void on_record(void *ctx, const ks_tl_record *r) {
    run_out *o = ctx;
    if (o->diff) ks_compare_collect_record(o->diff, o->side, r->name, r->node, r->state == KS_TL_PREEMPTED, r->attempts);
    if (o->waits && r->scheduled >= 0) ks_report_waits_add(o->waits, r->scheduled, r->pending_ns);
    if (o->json_pods) {
        json_t *j = ks_tl_record_json(o->start, r);
        char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fprintf(o->out, "%s\n      %s", o->first_pod ? "" : ",", s);
        free(s);
        json_decref(j);
        o->first_pod = false;
        return;
    }
    if (o->table_header) {
        ks_tl_record_header(o->pods, KS_TL_OUT_TABLE, false);
        o->table_header = false;
    }
    if (o->pods) ks_tl_record_print(o->pods, o->pods_how, o->config_name, o->start, r);
}

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    run_out *o = ctx;
    if (o->diff) ks_compare_collect_attempt(o->diff, rec);
}

/* Place a raw event time on the clock: false when it is before --from. */
static bool place(const opts *op, int64_t t0, int64_t raw, bool abs, int64_t *out, bool *past) {
    int64_t off = abs ? raw - t0 : raw;
    *past = op->has_until && off > op->until;
    if (off < op->from) return false;
    *out = t0 + op->from + (int64_t)((double)(off - op->from) / op->speed);
    return true;
}

/* The next event of a source, placed; false at its end or on error. */
static int pull(source *s, const opts *op, int64_t t0, char **err) {
    for (;;) {
        ks_tl_event *ev = NULL;
        bool abs = false;
        int rc = ks_tl_reader_next(s->r, &ev, &abs, err);
        if (rc <= 0) {
            s->done = true;
            return rc;
        }
        bool past = false;
        int64_t at;
        if (!place(op, t0, ev->at_ns, abs, &at, &past)) {
            ks_tl_event_free(ev);
            continue;
        }
        if (past) {
            ks_tl_event_free(ev);
            s->done = true;
            return 0;
        }
        ev->at_ns = at;
        if (ev->delete_at_ns > 0) {
            int64_t d;
            bool p2;
            if (place(op, t0, ev->delete_at_ns, abs, &d, &p2)) ev->delete_at_ns = d;
            else ev->delete_at_ns = at;
        }
        if (ev->run_ns > 0) ev->run_ns = (int64_t)((double)ev->run_ns / op->speed);
        s->head = ev;
        return 1;
    }
}

/* The raw time of a source's first event, to find time zero. */
static bool peek_abs(const char *path, ks_tl_format f, int64_t *t, char **err) {
    ks_tl_reader *r = ks_tl_reader_open(path, f, err);
    if (!r) return false;
    ks_tl_event *ev = NULL;
    bool abs = false;
    int rc = ks_tl_reader_next(r, &ev, &abs, err);
    bool found = rc == 1 && abs;
    if (found) *t = ev->at_ns;
    ks_tl_event_free(ev);
    ks_tl_reader_free(r);
    if (rc < 0) return false;
    if (!found) *t = INT64_MIN;
    return true;
}

static bool ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

int cmd_replay(int argc, char **argv) {
    ks_cli_common co = {.output = "table"};
    ks_cli_live live = {0};
    const char **paths = ks_xcalloc((size_t)argc + 1, sizeof(char *));
    const char **configs = ks_xcalloc((size_t)argc + 1, sizeof(char *));
    size_t npaths = 0, nconfigs = 0;
    const char *pods_path = NULL, *series_path = NULL, *compare_path = NULL, *frag_nodes_path = NULL;
    FILE *frag_nodes_f = NULL;
    ks_compare_collector *diff = NULL;
    opts op = {.speed = 1.0, .max = 17520LL * 3600 * KS_NS_PER_SEC, .pending_long = 300LL * KS_NS_PER_SEC};
    bool has_step = false;
    uint64_t seed = 1;
    bool deterministic = false, gpu_frag = false;
    char *err = NULL;
    int rc = 2;
    ks_config **cfgs = NULL;
    source *src = NULL;
    size_t nsrc = 0;
    const char **manifests = NULL, **openb_nodes = NULL;
    size_t nman = 0, nobn = 0;
    ks_tl_result *results = NULL;
    ks_report_waits *waits = NULL;
    size_t nwaits = 0;
    const ks_tl_result **rptr = NULL;
    char **names = NULL;
    FILE *pods_f = NULL, *series_f = NULL, *out = NULL;

    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        const char *a = argv[i];
        if (ks_cli_value(argc, argv, &i, "config", &val, &err)) {
            if (!val) goto usage_error;
            configs[nconfigs++] = val;
            continue;
        }
        int r = ks_cli_common_parse(&co, argc, argv, &i, &err);
        if (r < 0) goto usage_error;
        if (r > 0) continue;
        if ((r = ks_cli_live_parse(&live, argc, argv, &i, &err)) < 0) goto usage_error;
        if (r > 0) continue;
        char *perr = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (ks_cli_value(argc, argv, &i, "compare", &val, &err)) {
            if (!val) goto usage_error;
            compare_path = val;
        } else if (ks_cli_value(argc, argv, &i, "pods", &val, &err)) {
            if (!val) goto usage_error;
            pods_path = val;
        } else if (ks_cli_value(argc, argv, &i, "series", &val, &err)) {
            if (!val) goto usage_error;
            series_path = val;
        } else if (ks_cli_value(argc, argv, &i, "step", &val, &err)) {
            if (!val) goto usage_error;
            if (!ks_parse_duration(val, &op.step, &perr) || op.step <= 0) goto bad_value;
            has_step = true;
        } else if (ks_cli_value(argc, argv, &i, "pending-threshold", &val, &err)) {
            if (!val) goto usage_error;
            if (!ks_parse_duration(val, &op.pending_long, &perr) || op.pending_long < 0) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "from", &val, &err)) {
            if (!val) goto usage_error;
            if (!ks_parse_duration(val, &op.from, &perr) || op.from < 0) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "until", &val, &err)) {
            if (!val) goto usage_error;
            if (!ks_parse_duration(val, &op.until, &perr) || op.until < 0) goto bad_value;
            op.has_until = true;
        } else if (ks_cli_value(argc, argv, &i, "max-time", &val, &err)) {
            if (!val) goto usage_error;
            if (!ks_parse_duration(val, &op.max, &perr) || op.max <= 0) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "start", &val, &err)) {
            if (!val) goto usage_error;
            if (!ks_time_parse_rfc3339(val, &op.start)) goto bad_value;
            op.has_start = true;
        } else if (ks_cli_value(argc, argv, &i, "speed", &val, &err)) {
            if (!val) goto usage_error;
            char *end;
            op.speed = strtod(val, &end);
            if (*end || !(op.speed > 0) || !isfinite(op.speed)) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "seed", &val, &err)) {
            if (!val || !ks_cli_u64(val, &seed)) goto bad_value;
        } else if (ks_cli_value(argc, argv, &i, "tie-break", &val, &err)) {
            if (!val) goto usage_error;
            if (!strcmp(val, "name")) deterministic = true;
            else if (strcmp(val, "random") != 0) goto bad_value;
        } else if (!strcmp(a, "--gpu-frag")) {
            gpu_frag = true;
        } else if (ks_cli_value(argc, argv, &i, "gpu-frag-nodes", &val, &err)) {
            if (!val) goto usage_error;
            frag_nodes_path = val;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ksched replay: unknown option %s\n", a);
            usage(stderr);
            goto out;
        } else {
            paths[npaths++] = a;
        }
        continue;
    bad_value:
        fprintf(stderr, "ksched replay: invalid value for %s\n", a);
        free(perr);
        goto out;
    }
    bool json = !strcmp(co.output, "json"), html = !strcmp(co.output, "html");
    if (!json && !html && strcmp(co.output, "table") != 0) {
        fprintf(stderr, "ksched replay: unknown output format \"%s\" (table, json, html)\n", co.output);
        goto out;
    }
    if (html && ((pods_path && !strcmp(pods_path, "-")) || (series_path && !strcmp(series_path, "-")))) {
        fprintf(stderr, "ksched replay: -o html is one page: --pods and --series go to files with it\n");
        goto out;
    }
    if (!has_step) op.step = 300LL * KS_NS_PER_SEC;

    out = ks_cli_output_open(&co, "replay");
    if (!out) goto out;

    /* what each input is */
    manifests = ks_xcalloc(npaths + 1, sizeof(char *));
    openb_nodes = ks_xcalloc(npaths + 1, sizeof(char *));
    src = ks_xcalloc(npaths + 1, sizeof(*src));
    for (size_t i = 0; i < npaths; i++) {
        ks_tl_format f;
        if (!ks_tl_detect(paths[i], &f, &err)) {
            fprintf(stderr, "ksched replay: %s\n", err);
            goto out;
        }
        ks_infof(2, "%s: %s", paths[i], ks_tl_format_name(f));
        if (f == KS_TLF_MANIFESTS) manifests[nman++] = paths[i];
        else if (f == KS_TLF_OPENB_NODES) openb_nodes[nobn++] = paths[i];
        else src[nsrc++] = (source){.path = paths[i], .fmt = f};
    }
    if (!nsrc) {
        fprintf(stderr, "ksched replay: no trace given (events, audit log or openb pod CSV)\n");
        usage(stderr);
        goto out;
    }

    /* --compare B: runs A (--config, or the defaults) then B */
    if (compare_path) {
        if (nconfigs > 1) {
            fprintf(stderr, "ksched replay: --compare goes with at most one --config (A)\n");
            goto out;
        }
        if (!nconfigs) configs[nconfigs++] = NULL;
        configs[nconfigs++] = compare_path;
        diff = ks_compare_collector_new();
    }
    /* configurations: the first through the common setup (gates, plugins) */
    cfgs = ks_xcalloc(nconfigs + 1, sizeof(*cfgs));
    co.config_path = nconfigs ? configs[0] : NULL;
    cfgs[0] = ks_cli_common_setup(&co, "replay");
    if (!cfgs[0]) goto out;
    for (size_t i = 1; i < nconfigs; i++) {
        cfgs[i] = ks_cli_load_config(configs[i], ks_default_registry());
        if (!cfgs[i]) goto out;
    }
    size_t nruns = nconfigs ? nconfigs : 1;
    names = ks_xcalloc(nruns, sizeof(char *));
    for (size_t i = 0; i < nruns; i++) {
        const char *p = nconfigs && configs[i] ? configs[i] : "default";
        const char *slash = strrchr(p, '/');
        names[i] = ks_xstrdup(slash ? slash + 1 : p);
        char *dot = strrchr(names[i], '.');
        if (dot && dot != names[i]) *dot = '\0';
    }

    /* time zero */
    int64_t t0 = INT64_MIN;
    if (op.has_start) t0 = op.start;
    else {
        for (size_t i = 0; i < nsrc; i++) {
            int64_t t;
            if (!peek_abs(src[i].path, src[i].fmt, &t, &err)) {
                fprintf(stderr, "ksched replay: %s\n", err);
                goto out;
            }
            if (t != INT64_MIN && (t0 == INT64_MIN || t < t0)) t0 = t;
        }
        /* offsets read better from a whole second */
        if (t0 != INT64_MIN) t0 -= ((t0 % KS_NS_PER_SEC) + KS_NS_PER_SEC) % KS_NS_PER_SEC;
    }

    if (pods_path && !strcmp(pods_path, "-")) {
        pods_f = out;
    } else if (pods_path) {
        pods_f = fopen(pods_path, "w");
        if (!pods_f) {
            fprintf(stderr, "ksched replay: cannot write %s\n", pods_path);
            goto out;
        }
    }
    ks_tl_out pods_how = !pods_path ? KS_TL_OUT_TABLE
                         : (ends_with(pods_path, ".json") || ends_with(pods_path, ".jsonl")) ? KS_TL_OUT_JSON
                                                                                            : KS_TL_OUT_CSV;
    if (pods_f) ks_tl_record_header(pods_f, pods_how, nruns > 1);

    results = ks_xcalloc(nruns, sizeof(*results));
    nwaits = nruns;
    waits = ks_xcalloc(nwaits, sizeof(*waits));
    rptr = ks_xcalloc(nruns, sizeof(*rptr));
    if (json) fputs("{\"apiVersion\":\"ksched/v1alpha1\",\"kind\":\"ReplayReport\",\"runs\":[", out);
    /* --compare: one more run of A, silent, reads A's score deltas
     * against the nodes B chose (B's were read in its own run) */
    size_t nloop = nruns + (diff ? 1 : 0);
    for (size_t ri = 0; ri < nloop; ri++) {
        bool silent = ri >= nruns;
        int64_t wall0 = ks_monotonic_ns();
        ks_cluster *cluster = (nman || ks_cli_live_is_live(&live)) ? ks_cli_live_cluster(&live, manifests, nman, "replay")
                                                                   : ks_cluster_new();
        if (!cluster) goto out;
        for (size_t i = 0; i < nobn; i++) {
            if (!ks_tl_openb_nodes(openb_nodes[i], cluster, &err)) {
                fprintf(stderr, "ksched replay: %s\n", err);
                ks_cluster_free(cluster);
                goto out;
            }
        }
        int64_t zero = t0 != INT64_MIN ? t0 : ks_sim_start_time(cluster);
        run_out ro = {.out = out,
                      .pods = silent ? NULL : pods_f ? pods_f : (json || html ? NULL : out),
                      .pods_how = pods_how,
                      .config_name = nruns > 1 && pods_f ? names[ri] : NULL,
                      .start = zero + op.from,
                      .json_pods = json && !pods_f && !silent,
                      .first_pod = true,
                      .diff = diff,
                      .waits = html && !silent ? &waits[ri] : NULL,
                      .side = silent ? 0 : (int)ri};
        if (diff) ks_compare_collector_capture(diff, silent ? 0 : ri == 1 ? 1 : -1, !silent);
        if (silent) {
        } else if (json) {
            fprintf(out, "%s\n  {\"config\":\"%s\",\"start\":\"", ri ? "," : "", names[ri]);
            char ts[64];
            time_t sec = (time_t)((zero + op.from) / KS_NS_PER_SEC);
            struct tm tm;
            gmtime_r(&sec, &tm);
            strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
            fprintf(out, "%s\"", ts);
            if (ro.json_pods) fputs(",\"pods\":[", out);
        } else if (!pods_f && !html) {
            if (nruns > 1) fprintf(out, "%s== %s ==\n", ri ? "\n" : "", names[ri]);
            ro.table_header = true;
        }
        int64_t bound = op.max;
        if (op.has_until) {
            int64_t u = (int64_t)((double)(op.until - op.from) / op.speed);
            if (u < bound) bound = u > 0 ? u : 1;
        }
        ks_timeline_options to = {
            .config = cfgs[silent ? 0 : ri],
            .registry = ks_default_registry(),
            .seed = seed,
            .deterministic = deterministic,
            .start_ns = zero + op.from,
            .max_ns = bound,
            .step_ns = (json || html || series_path) ? op.step : 0,
            .pending_long_ns = op.pending_long,
            .on_record = on_record,
            .on_attempt = diff ? on_attempt : NULL,
            .ctx = &ro,
        };
        ks_timeline *tl = ks_timeline_new(cluster, &to, &err);
        if (!tl) {
            fprintf(stderr, "ksched replay: %s\n", err);
            goto out;
        }
        frag_sample fs = {.at = -1};
        if (gpu_frag) {
            ks_timeline_add_metric(tl, "gpu_frag_milli", frag_milli, &fs);
            ks_timeline_add_metric(tl, "gpu_frag_pct", frag_pct, &fs);
        }
        bool ok = true;
        for (size_t i = 0; i < nsrc && ok; i++) {
            src[i].done = false;
            src[i].head = NULL;
            src[i].r = ks_tl_reader_open(src[i].path, src[i].fmt, &err);
            if (!src[i].r || pull(&src[i], &op, zero, &err) < 0) ok = false;
        }
        /* merge the traces by time (ties: the order given) */
        while (ok) {
            source *best = NULL;
            for (size_t i = 0; i < nsrc; i++)
                if (!src[i].done && src[i].head && (!best || src[i].head->at_ns < best->head->at_ns)) best = &src[i];
            if (!best) break;
            ks_tl_event *ev = best->head;
            best->head = NULL;
            if (!ks_timeline_feed(tl, ev, &err)) ok = false;
            else if (pull(best, &op, zero, &err) < 0) ok = false;
        }
        for (size_t i = 0; i < nsrc; i++) {
            ks_tl_event_free(src[i].head);
            src[i].head = NULL;
            ks_tl_reader_free(src[i].r);
            src[i].r = NULL;
        }
        if (!ok) {
            if (json) fputs("]}]}\n", out);
            fprintf(stderr, "ksched replay: %s\n", err);
            ks_timeline_free(tl);
            goto out;
        }
        /* --until: the replay ends there, whatever comes after */
        if (ok && op.has_until) ks_timeline_advance(tl, zero + op.from + bound);
        ks_timeline_finish(tl);
        if (frag_nodes_path && !silent && !write_frag_nodes(&frag_nodes_f, frag_nodes_path, names[ri], tl)) goto out;
        if (ro.table_header) ks_tl_record_header(out, KS_TL_OUT_TABLE, false);
        if (silent) {
            ks_timeline_free(tl);
            continue;
        }
        const ks_tl_result *res = ks_timeline_result(tl);
        /* keep the result past the engine: the summary and the samples */
        results[ri] = *res;
        results[ri].summary.wall_seconds = (double)(ks_monotonic_ns() - wall0) / 1e9;
        results[ri].samples = ks_xcalloc(res->nsamples + 1, sizeof(ks_tl_sample));
        if (res->nsamples) memcpy(results[ri].samples, res->samples, res->nsamples * sizeof(ks_tl_sample));
        /* and the extra columns (--gpu-frag), copied out of the engine */
        for (size_t k = 0; k < res->nsamples; k++) {
            const double *x = res->samples[k].extra;
            results[ri].samples[k].extra = NULL;
            if (x && res->nextra) {
                results[ri].samples[k].extra = ks_xmalloc(res->nextra * sizeof(double));
                memcpy(results[ri].samples[k].extra, x, res->nextra * sizeof(double));
            }
        }
        results[ri].extra_names = res->nextra ? ks_xcalloc(res->nextra, sizeof(char *)) : NULL;
        for (uint32_t k = 0; k < res->nextra; k++)
            ((char **)results[ri].extra_names)[k] = ks_xstrdup(res->extra_names[k]);
        results[ri].disagreements = NULL; /* printed below, before the engine goes */
        results[ri].ndisagreements = 0;
        /* resource names are interned strings: they outlive the engine */
        rptr[ri] = &results[ri];
        if (json) {
            if (ro.json_pods) fputs("\n    ]", out);
            json_t *sj = ks_tl_summary_json(&results[ri].summary);
            char *s = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fprintf(out, ",\"summary\":%s", s);
            free(s);
            json_decref(sj);
            if (res->summary.recorded) {
                json_t *dj = ks_tl_disagreements_json(res);
                s = json_dumps(dj, JSON_COMPACT | JSON_PRESERVE_ORDER);
                fprintf(out, ",\n   \"recordedInfeasible\":%s", s);
                free(s);
                json_decref(dj);
            }
            json_t *se = ks_tl_series_json(&results[ri]);
            s = json_dumps(se, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fprintf(out, ",\n   \"series\":%s}", s);
            free(s);
            json_decref(se);
        }
        if (!json) ks_tl_disagreements_table(out, nruns > 1 ? names[ri] : NULL, res);
        ks_timeline_free(tl);
        ks_infof(1, "replay %s: %.3f s wall", names[ri], results[ri].summary.wall_seconds);
    }
    ks_compare_result cr = {0};
    if (diff) ks_compare_collector_result(diff, names[0], names[1], &cr);
    if (json) {
        fputs("\n]", out);
        if (diff) {
            json_t *dj = ks_compare_json(&cr);
            char *ds = json_dumps(dj, JSON_COMPACT | JSON_PRESERVE_ORDER);
            json_decref(dj);
            fprintf(out, ",\"decisionDiff\":%s", ds);
            free(ds);
        }
        fputs("}\n", out);
    } else if (html) {
        ks_report_inputs in = {.command = "replay", .argc = argc, .argv = argv, .paths = paths, .npaths = npaths,
                               .config_path = co.config_path, .seed = seed, .deterministic = deterministic};
        ks_report_html_replay(out, nruns, (const char *const *)names, rptr, waits, op.pending_long,
                              diff ? &cr : NULL, &in);
    } else {
        fputc('\n', out);
        ks_tl_summary_table(out, nruns, (const char *const *)names, rptr);
        if (diff) {
            fputs("\nDecisions that differ:\n", out);
            ks_compare_report_table(out, &cr);
        }
    }
    ks_compare_result_free(&cr);
    if (series_path) {
        if (!strcmp(series_path, "-")) {
            fputc('\n', out);
            series_f = out;
        } else {
            series_f = fopen(series_path, "w");
        }
        if (!series_f) {
            fprintf(stderr, "ksched replay: cannot write %s\n", series_path);
            goto out;
        }
        if (ends_with(series_path, ".json")) {
            json_t *all = nruns > 1 ? json_object() : NULL;
            json_t *one = NULL;
            for (size_t i = 0; i < nruns; i++) {
                json_t *se = ks_tl_series_json(&results[i]);
                if (all) json_object_set_new(all, names[i], se);
                else one = se;
            }
            json_t *doc = all ? all : one;
            json_dumpf(doc, series_f, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fputc('\n', series_f);
            json_decref(doc);
        } else {
            for (size_t i = 0; i < nruns; i++) ks_tl_series_csv(series_f, nruns > 1 ? names[i] : NULL, i == 0, &results[i]);
        }
    }
    rc = 0;
    goto out;

usage_error:
    fprintf(stderr, "ksched replay: %s\n", err ? err : "missing value");
    usage(stderr);
out:
    ks_compare_collector_free(diff);
    if (pods_f && pods_f != out && fclose(pods_f) != 0) rc = 2;
    if (series_f && series_f != out && fclose(series_f) != 0) rc = 2;
    if (frag_nodes_f && fclose(frag_nodes_f) != 0) rc = 2;
    if (out && !ks_cli_output_close(&co, out, "replay")) rc = 2;
    free(err);
    free(paths);
    free(manifests);
    free(openb_nodes);
    free(src);
    if (cfgs)
        for (size_t i = 0; i < (nconfigs ? nconfigs : 1); i++)
            if (cfgs[i]) ks_config_free(cfgs[i]);
    free(cfgs);
    free(configs);
    if (results)
        for (size_t i = 0; i < (nconfigs ? nconfigs : 1); i++) {
            for (size_t k = 0; k < results[i].nsamples; k++) free(results[i].samples[k].extra);
            for (uint32_t k = 0; k < results[i].nextra; k++) free((char *)results[i].extra_names[k]);
            free(results[i].extra_names);
            free(results[i].samples);
        }
    free(results);
    for (size_t i = 0; i < nwaits; i++) ks_report_waits_free(&waits[i]);
    free(waits);
    free(rptr);
    if (names)
        for (size_t i = 0; i < (nconfigs ? nconfigs : 1); i++) free(names[i]);
    free(names);
    ks_cli_common_free(&co);
    ks_cli_live_free(&live);
    return rc;
}
