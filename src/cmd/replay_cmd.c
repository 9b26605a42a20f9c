/* ksched replay [CLUSTER...] TRACE... : drive the scheduler with a
 * time-ordered stream of cluster changes on simulated time and report
 * what happened to every pod, a summary and time series, under one or
 * several configurations. See docs/replay.md. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/flags.h"
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

static void usage(FILE *f, const void *arg) {
    (void)arg;
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

/* ---- the command line ------------------------------------------------------ */

typedef struct replay_cmd {
    int argc;
    char **argv; /* for the page's record of the command */
    ks_cli_common co;
    ks_cli_live live;
    const char **paths, **configs; /* argv's strings; configs: --config, then --compare */
    size_t npaths, nconfigs;
    const char *pods_path, *series_path, *compare_path, *frag_nodes_path;
    opts op;
    uint64_t seed;
    bool deterministic, gpu_frag, json, html;
    /* the inputs, by what they are */
    source *src;
    const char **manifests, **openb_nodes;
    size_t nsrc, nman, nobn;
    /* one run per configuration; --compare: A, B, then A again, silent */
    ks_config **cfgs;
    char **names;
    size_t nruns;
    int64_t t0; /* INT64_MIN: each run's cluster says */
    ks_compare_collector *diff;
    ks_tl_result *results;
    const ks_tl_result **rptr;
    ks_report_waits *waits;
    FILE *out, *pods_f, *series_f, *frag_nodes_f;
    ks_tl_out pods_how;
} replay_cmd;

static bool duration_in(const char *v, int64_t *dst, bool positive) {
    int64_t d;
    char *perr = NULL;
    bool ok = ks_parse_duration(v, &d, &perr) && (positive ? d > 0 : d >= 0);
    free(perr);
    if (ok) *dst = d;
    return ok;
}
static bool flag_positive(void *dst, const char *v) { return duration_in(v, dst, true); }
static bool flag_duration(void *dst, const char *v) { return duration_in(v, dst, false); }
static bool flag_until(void *dst, const char *v) {
    opts *op = dst;
    return op->has_until = duration_in(v, &op->until, false);
}
static bool flag_start(void *dst, const char *v) {
    opts *op = dst;
    return op->has_start = ks_time_parse_rfc3339(v, &op->start);
}
static bool flag_speed(void *dst, const char *v) {
    char *end;
    double x = strtod(v, &end);
    if (*end || !(x > 0) || !isfinite(x)) return false;
    *(double *)dst = x;
    return true;
}
static bool flag_tie_break(void *dst, const char *v) {
    if (strcmp(v, "random") && strcmp(v, "name")) return false;
    *(bool *)dst = !strcmp(v, "name");
    return true;
}

/* --config repeats (one run each): a group ahead of the common one. */
static int group_configs(void *ctx, int argc, char **argv, int *i, char **err) {
    replay_cmd *c = ctx;
    const char *val = NULL;
    if (!ks_cli_value(argc, argv, i, "config", &val, err)) return 0;
    if (!val) return -1;
    c->configs[c->nconfigs++] = val;
    return 1;
}

static int parse(replay_cmd *c, int argc, char **argv) {
    opts *op = &c->op;
    const ks_flag flags[] = {
        KS_STRING_FLAG("compare", &c->compare_path),
        KS_STRING_FLAG("pods", &c->pods_path),
        KS_STRING_FLAG("series", &c->series_path),
        KS_FN_FLAG("step", &op->step, flag_positive),
        KS_FN_FLAG("pending-threshold", &op->pending_long, flag_duration),
        KS_FN_FLAG("from", &op->from, flag_duration),
        KS_FN_FLAG("until", op, flag_until),
        KS_FN_FLAG("max-time", &op->max, flag_positive),
        KS_FN_FLAG("start", op, flag_start),
        KS_FN_FLAG("speed", &op->speed, flag_speed),
        KS_U64_FLAG("seed", &c->seed, 0),
        KS_FN_FLAG("tie-break", &c->deterministic, flag_tie_break),
        KS_BOOL_FLAG("gpu-frag", &c->gpu_frag),
        KS_STRING_FLAG("gpu-frag-nodes", &c->frag_nodes_path),
    };
    const ks_flag_group groups[] = {{group_configs, c}, ks_flags_common(&c->co), ks_flags_live(&c->live)};
    ks_cmd_line cl = {.cmd = "replay", .usage = usage, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups), .args = c->paths, .nargs = &c->npaths};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc >= 0) return rc;
    c->json = !strcmp(c->co.output, "json");
    c->html = !strcmp(c->co.output, "html");
    if (!c->json && !c->html && strcmp(c->co.output, "table") != 0) {
        fprintf(stderr, "ksched replay: unknown output format \"%s\" (table, json, html)\n", c->co.output);
        return KS_EXIT_BAD_INPUT;
    }
    bool dash_pods = c->pods_path && !strcmp(c->pods_path, "-");
    if (c->html && (dash_pods || (c->series_path && !strcmp(c->series_path, "-")))) {
        fprintf(stderr, "ksched replay: -o html is one page: --pods and --series go to files with it\n");
        return KS_EXIT_BAD_INPUT;
    }
    return -1;
}

/* ---- setting up ------------------------------------------------------------ */

/* What each input is: the cluster (manifests, openb nodes) or a trace. */
static bool classify_inputs(replay_cmd *c) {
    c->manifests = ks_xcalloc(c->npaths + 1, sizeof(char *));
    c->openb_nodes = ks_xcalloc(c->npaths + 1, sizeof(char *));
    c->src = ks_xcalloc(c->npaths + 1, sizeof(*c->src));
    for (size_t i = 0; i < c->npaths; i++) {
        ks_tl_format f;
        char *err = NULL;
        if (!ks_tl_detect(c->paths[i], &f, &err)) {
            fprintf(stderr, "ksched replay: %s\n", err);
            free(err);
            return false;
        }
        ks_infof(2, "%s: %s", c->paths[i], ks_tl_format_name(f));
        if (f == KS_TLF_MANIFESTS) c->manifests[c->nman++] = c->paths[i];
        else if (f == KS_TLF_OPENB_NODES) c->openb_nodes[c->nobn++] = c->paths[i];
        else c->src[c->nsrc++] = (source){.path = c->paths[i], .fmt = f};
    }
    if (c->nsrc) return true;
    fprintf(stderr, "ksched replay: no trace given (events, audit log or openb pod CSV)\n");
    usage(stderr, NULL);
    return false;
}

/* The configurations (the first through the common setup: gates,
 * plugins) and their names; --compare B runs A (--config, or the
 * defaults) then B. */
static bool setup_configs(replay_cmd *c) {
    if (c->compare_path) {
        if (c->nconfigs > 1) {
            fprintf(stderr, "ksched replay: --compare goes with at most one --config (A)\n");
            return false;
        }
        if (!c->nconfigs) c->configs[c->nconfigs++] = NULL;
        c->configs[c->nconfigs++] = c->compare_path;
        c->diff = ks_compare_collector_new();
    }
    c->nruns = c->nconfigs ? c->nconfigs : 1;
    c->cfgs = ks_xcalloc(c->nruns + 1, sizeof(*c->cfgs));
    c->co.config_path = c->nconfigs ? c->configs[0] : NULL;
    if (!(c->cfgs[0] = ks_cli_common_setup(&c->co, "replay"))) return false;
    for (size_t i = 1; i < c->nconfigs; i++)
        if (!(c->cfgs[i] = ks_cli_load_config(c->configs[i], ks_default_registry()))) return false;
    c->names = ks_xcalloc(c->nruns, sizeof(char *));
    for (size_t i = 0; i < c->nruns; i++) {
        const char *p = c->nconfigs && c->configs[i] ? c->configs[i] : "default";
        const char *slash = strrchr(p, '/');
        c->names[i] = ks_xstrdup(slash ? slash + 1 : p);
        char *dot = strrchr(c->names[i], '.');
        if (dot && dot != c->names[i]) *dot = '\0';
    }
    return true;
}

/* Time zero: --start, else the earliest absolute time of the traces. */
static bool find_time_zero(replay_cmd *c) {
    c->t0 = c->op.has_start ? c->op.start : INT64_MIN;
    if (c->op.has_start) return true;
    for (size_t i = 0; i < c->nsrc; i++) {
        int64_t t;
        char *err = NULL;
        if (!peek_abs(c->src[i].path, c->src[i].fmt, &t, &err)) {
            fprintf(stderr, "ksched replay: %s\n", err);
            free(err);
            return false;
        }
        if (t != INT64_MIN && (c->t0 == INT64_MIN || t < c->t0)) c->t0 = t;
    }
    /* offsets read better from a whole second */
    if (c->t0 != INT64_MIN) c->t0 -= ((c->t0 % KS_NS_PER_SEC) + KS_NS_PER_SEC) % KS_NS_PER_SEC;
    return true;
}

static bool open_pods(replay_cmd *c) {
    const char *p = c->pods_path;
    if (p && !strcmp(p, "-")) {
        c->pods_f = c->out;
    } else if (p && !(c->pods_f = fopen(p, "w"))) {
        fprintf(stderr, "ksched replay: cannot write %s\n", p);
        return false;
    }
    c->pods_how = !p ? KS_TL_OUT_TABLE
                  : (ends_with(p, ".json") || ends_with(p, ".jsonl")) ? KS_TL_OUT_JSON
                                                                       : KS_TL_OUT_CSV;
    if (c->pods_f) ks_tl_record_header(c->pods_f, c->pods_how, c->nruns > 1);
    return true;
}

/* ---- one run ------------------------------------------------------------- */

static ks_cluster *start_cluster(replay_cmd *c) {
    ks_cluster *cluster = (c->nman || ks_cli_live_is_live(&c->live))
                              ? ks_cli_live_cluster(&c->live, c->manifests, c->nman, "replay")
                              : ks_cluster_new();
    if (!cluster) return NULL;
    for (size_t i = 0; i < c->nobn; i++) {
        char *err = NULL;
        if (!ks_tl_openb_nodes(c->openb_nodes[i], cluster, &err)) {
            fprintf(stderr, "ksched replay: %s\n", err);
            free(err);
            ks_cluster_free(cluster);
            return NULL;
        }
    }
    return cluster;
}

/* The run's header: its JSON object up to the pods, or the table's title. */
static void begin_run(replay_cmd *c, size_t ri, int64_t zero, run_out *ro) {
    if (ri >= c->nruns) return;
    if (c->json) {
        fprintf(c->out, "%s\n  {\"config\":\"%s\",\"start\":\"", ri ? "," : "", c->names[ri]);
        char ts[64];
        time_t sec = (time_t)((zero + c->op.from) / KS_NS_PER_SEC);
        struct tm tm;
        gmtime_r(&sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(c->out, "%s\"", ts);
        if (ro->json_pods) fputs(",\"pods\":[", c->out);
    } else if (!c->pods_f && !c->html) {
        if (c->nruns > 1) fprintf(c->out, "%s== %s ==\n", ri ? "\n" : "", c->names[ri]);
        ro->table_header = true;
    }
}

/* Open the traces and feed their events, merged by time (ties: the order
 * given), to the engine. */
static bool feed_traces(replay_cmd *c, ks_timeline *tl, int64_t zero, char **err) {
    bool ok = true;
    for (size_t i = 0; i < c->nsrc && ok; i++) {
        source *s = &c->src[i];
        s->done = false;
        s->head = NULL;
        s->r = ks_tl_reader_open(s->path, s->fmt, err);
        if (!s->r || pull(s, &c->op, zero, err) < 0) ok = false;
    }
    while (ok) {
        source *best = NULL;
        for (size_t i = 0; i < c->nsrc; i++)
            if (!c->src[i].done && c->src[i].head && (!best || c->src[i].head->at_ns < best->head->at_ns))
                best = &c->src[i];
        if (!best) break;
        ks_tl_event *ev = best->head;
        best->head = NULL;
        if (!ks_timeline_feed(tl, ev, err)) ok = false;
        else if (pull(best, &c->op, zero, err) < 0) ok = false;
    }
    for (size_t i = 0; i < c->nsrc; i++) {
        ks_tl_event_free(c->src[i].head);
        c->src[i].head = NULL;
        ks_tl_reader_free(c->src[i].r);
        c->src[i].r = NULL;
    }
    return ok;
}

/* Keep the result past the engine: the summary, the samples and their
 * extra columns (--gpu-frag), copied out. Resource names are interned
 * strings: they outlive the engine. */
static void keep_result(replay_cmd *c, size_t ri, const ks_tl_result *res, int64_t wall0) {
    ks_tl_result *k = &c->results[ri];
    *k = *res;
    k->summary.wall_seconds = (double)(ks_monotonic_ns() - wall0) / 1e9;
    k->samples = ks_xcalloc(res->nsamples + 1, sizeof(ks_tl_sample));
    if (res->nsamples) memcpy(k->samples, res->samples, res->nsamples * sizeof(ks_tl_sample));
    for (size_t s = 0; s < res->nsamples; s++) {
        const double *x = res->samples[s].extra;
        k->samples[s].extra = NULL;
        if (x && res->nextra) {
            k->samples[s].extra = ks_xmalloc(res->nextra * sizeof(double));
            memcpy(k->samples[s].extra, x, res->nextra * sizeof(double));
        }
    }
    k->extra_names = res->nextra ? ks_xcalloc(res->nextra, sizeof(char *)) : NULL;
    for (uint32_t e = 0; e < res->nextra; e++) ((char **)k->extra_names)[e] = ks_xstrdup(res->extra_names[e]);
    k->disagreements = NULL; /* printed by print_run, before the engine goes */
    k->ndisagreements = 0;
    c->rptr[ri] = k;
}

static void print_json_member(FILE *out, const char *sep_name, json_t *j) {
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fprintf(out, "%s%s", sep_name, s);
    free(s);
    json_decref(j);
}

/* The rest of the run's JSON object, or its disagreements table. */
static void print_run(replay_cmd *c, size_t ri, const ks_tl_result *res, const run_out *ro) {
    if (!c->json) {
        ks_tl_disagreements_table(c->out, c->nruns > 1 ? c->names[ri] : NULL, res);
        return;
    }
    if (ro->json_pods) fputs("\n    ]", c->out);
    print_json_member(c->out, ",\"summary\":", ks_tl_summary_json(&c->results[ri].summary));
    if (res->summary.recorded)
        print_json_member(c->out, ",\n   \"recordedInfeasible\":", ks_tl_disagreements_json(res));
    print_json_member(c->out, ",\n   \"series\":", ks_tl_series_json(&c->results[ri]));
    fputc('}', c->out);
}

static int64_t run_bound(const opts *op) {
    int64_t bound = op->max;
    if (op->has_until) {
        int64_t u = (int64_t)((double)(op->until - op->from) / op->speed);
        if (u < bound) bound = u > 0 ? u : 1;
    }
    return bound;
}

/* Replay under configuration ri (ri == nruns: --compare's silent rerun
 * of A, which reads A's score deltas against the nodes B chose). */
static bool run_config(replay_cmd *c, size_t ri) {
    bool silent = ri >= c->nruns;
    int64_t wall0 = ks_monotonic_ns();
    ks_cluster *cluster = start_cluster(c);
    if (!cluster) return false;
    int64_t zero = c->t0 != INT64_MIN ? c->t0 : ks_sim_start_time(cluster);
    run_out ro = {.out = c->out,
                  .pods = silent ? NULL : c->pods_f ? c->pods_f : (c->json || c->html ? NULL : c->out),
                  .pods_how = c->pods_how,
                  .config_name = !silent && c->nruns > 1 && c->pods_f ? c->names[ri] : NULL,
                  .start = zero + c->op.from,
                  .json_pods = c->json && !c->pods_f && !silent,
                  .first_pod = true,
                  .diff = c->diff,
                  .waits = c->html && !silent ? &c->waits[ri] : NULL,
                  .side = silent ? 0 : (int)ri};
    if (c->diff) ks_compare_collector_capture(c->diff, silent ? 0 : ri == 1 ? 1 : -1, !silent);
    begin_run(c, ri, zero, &ro);
    int64_t bound = run_bound(&c->op);
    ks_timeline_options to = {.config = c->cfgs[silent ? 0 : ri],
                              .registry = ks_default_registry(),
                              .seed = c->seed,
                              .deterministic = c->deterministic,
                              .start_ns = zero + c->op.from,
                              .max_ns = bound,
                              .step_ns = (c->json || c->html || c->series_path) ? c->op.step : 0,
                              .pending_long_ns = c->op.pending_long,
                              .on_record = on_record,
                              .on_attempt = c->diff ? on_attempt : NULL,
                              .ctx = &ro};
    char *err = NULL;
    ks_timeline *tl = ks_timeline_new(cluster, &to, &err);
    frag_sample fs = {.at = -1};
    if (tl && c->gpu_frag) {
        ks_timeline_add_metric(tl, "gpu_frag_milli", frag_milli, &fs);
        ks_timeline_add_metric(tl, "gpu_frag_pct", frag_pct, &fs);
    }
    if (!tl || !feed_traces(c, tl, zero, &err)) {
        if (tl && c->json) fputs("]}]}\n", c->out);
        fprintf(stderr, "ksched replay: %s\n", err);
        free(err);
        ks_timeline_free(tl);
        return false;
    }
    /* --until: the replay ends there, whatever comes after */
    if (c->op.has_until) ks_timeline_advance(tl, zero + c->op.from + bound);
    ks_timeline_finish(tl);
    bool ok = !c->frag_nodes_path || silent || write_frag_nodes(&c->frag_nodes_f, c->frag_nodes_path, c->names[ri], tl);
    if (ok && ro.table_header) ks_tl_record_header(c->out, KS_TL_OUT_TABLE, false);
    if (ok && !silent) {
        keep_result(c, ri, ks_timeline_result(tl), wall0);
        print_run(c, ri, ks_timeline_result(tl), &ro);
        ks_infof(1, "replay %s: %.3f s wall", c->names[ri], c->results[ri].summary.wall_seconds);
    }
    ks_timeline_free(tl);
    return ok;
}

/* ---- the answer ------------------------------------------------------------- */

static bool run_all(replay_cmd *c) {
    c->results = ks_xcalloc(c->nruns, sizeof(*c->results));
    c->waits = ks_xcalloc(c->nruns, sizeof(*c->waits));
    c->rptr = ks_xcalloc(c->nruns, sizeof(*c->rptr));
    if (c->json) fputs("{\"apiVersion\":\"ksched/v1alpha1\",\"kind\":\"ReplayReport\",\"runs\":[", c->out);
    size_t nloop = c->nruns + (c->diff ? 1 : 0);
    for (size_t ri = 0; ri < nloop; ri++)
        if (!run_config(c, ri)) return false;
    return true;
}

/* After the runs: the JSON document's end, the page, or the summary table
 * (with --compare's decisions that differ). */
static void print_answer(replay_cmd *c) {
    ks_compare_result cr = {0};
    if (c->diff) ks_compare_collector_result(c->diff, c->names[0], c->names[1], &cr);
    const char *const *names = (const char *const *)c->names;
    if (c->json) {
        fputs("\n]", c->out);
        if (c->diff) print_json_member(c->out, ",\"decisionDiff\":", ks_compare_json(&cr));
        fputs("}\n", c->out);
    } else if (c->html) {
        ks_report_inputs in = {.command = "replay", .argc = c->argc, .argv = c->argv, .paths = c->paths,
                               .npaths = c->npaths, .config_path = c->co.config_path, .seed = c->seed,
                               .deterministic = c->deterministic};
        ks_report_html_replay(c->out, c->nruns, names, c->rptr, c->waits, c->op.pending_long, c->diff ? &cr : NULL,
                              &in);
    } else {
        fputc('\n', c->out);
        ks_tl_summary_table(c->out, c->nruns, names, c->rptr);
        if (c->diff) {
            fputs("\nDecisions that differ:\n", c->out);
            ks_compare_report_table(c->out, &cr);
        }
    }
    ks_compare_result_free(&cr);
}

/* --series: CSV, or JSON (one object per configuration when several). */
static bool write_series(replay_cmd *c) {
    const char *p = c->series_path;
    if (!p) return true;
    if (!strcmp(p, "-")) {
        fputc('\n', c->out);
        c->series_f = c->out;
    } else {
        c->series_f = fopen(p, "w");
    }
    if (!c->series_f) {
        fprintf(stderr, "ksched replay: cannot write %s\n", p);
        return false;
    }
    if (!ends_with(p, ".json")) {
        for (size_t i = 0; i < c->nruns; i++)
            ks_tl_series_csv(c->series_f, c->nruns > 1 ? c->names[i] : NULL, i == 0, &c->results[i]);
        return true;
    }
    json_t *all = c->nruns > 1 ? json_object() : NULL, *one = NULL;
    for (size_t i = 0; i < c->nruns; i++) {
        json_t *se = ks_tl_series_json(&c->results[i]);
        if (all) json_object_set_new(all, c->names[i], se);
        else one = se;
    }
    json_t *doc = all ? all : one;
    json_dumpf(doc, c->series_f, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fputc('\n', c->series_f);
    json_decref(doc);
    return true;
}

static int run(replay_cmd *c) {
    c->out = ks_cli_output_open(&c->co, "replay");
    if (!c->out || !classify_inputs(c) || !setup_configs(c) || !find_time_zero(c) || !open_pods(c) || !run_all(c))
        return KS_EXIT_BAD_INPUT;
    print_answer(c);
    return write_series(c) ? KS_EXIT_OK : KS_EXIT_BAD_INPUT;
}

static void free_results(replay_cmd *c) {
    for (size_t i = 0; c->results && i < c->nruns; i++) {
        for (size_t k = 0; k < c->results[i].nsamples; k++) free(c->results[i].samples[k].extra);
        for (uint32_t k = 0; k < c->results[i].nextra; k++) free((char *)c->results[i].extra_names[k]);
        free(c->results[i].extra_names);
        free(c->results[i].samples);
    }
    free(c->results);
    for (size_t i = 0; c->waits && i < c->nruns; i++) ks_report_waits_free(&c->waits[i]);
    free(c->waits);
    free(c->rptr);
    for (size_t i = 0; c->cfgs && i < c->nruns; i++)
        if (c->cfgs[i]) ks_config_free(c->cfgs[i]);
    free(c->cfgs);
    for (size_t i = 0; c->names && i < c->nruns; i++) free(c->names[i]);
    free(c->names);
}

/* Close the files (a failed close fails the command) and free. */
static int finish(replay_cmd *c, int rc) {
    ks_compare_collector_free(c->diff);
    if (c->pods_f && c->pods_f != c->out && fclose(c->pods_f) != 0) rc = KS_EXIT_BAD_INPUT;
    if (c->series_f && c->series_f != c->out && fclose(c->series_f) != 0) rc = KS_EXIT_BAD_INPUT;
    if (c->frag_nodes_f && fclose(c->frag_nodes_f) != 0) rc = KS_EXIT_BAD_INPUT;
    if (c->out && !ks_cli_output_close(&c->co, c->out, "replay")) rc = KS_EXIT_BAD_INPUT;
    free_results(c);
    free(c->paths);
    free(c->configs);
    free(c->manifests);
    free(c->openb_nodes);
    free(c->src);
    ks_cli_common_free(&c->co);
    ks_cli_live_free(&c->live);
    return rc;
}

int cmd_replay(int argc, char **argv) {
    replay_cmd c = {.argc = argc,
                    .argv = argv,
                    .co = {.output = "table"},
                    .paths = ks_xcalloc((size_t)argc + 1, sizeof(char *)),
                    .configs = ks_xcalloc((size_t)argc + 2, sizeof(char *)),
                    .op = {.speed = 1.0,
                           .step = 300LL * KS_NS_PER_SEC,
                           .max = 17520LL * 3600 * KS_NS_PER_SEC,
                           .pending_long = 300LL * KS_NS_PER_SEC},
                    .seed = 1};
    int rc = parse(&c, argc, argv);
    if (rc < 0) rc = run(&c);
    return finish(&c, rc);
}
