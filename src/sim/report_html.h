/* -o html: one self-contained page (docs/report.md). The page is a fixed
 * shell, inline CSS and one inline renderer (src/sim/html/page.{css,js},
 * compiled in), and the answer as JSON in a <script type="application/json">
 * block; every kind of page (simulate, capacity, ...) is the same renderer
 * reading a different "kind". Nothing is fetched when the page is opened. */
#ifndef KS_REPORT_HTML_H
#define KS_REPORT_HTML_H

#include "sim/capacity.h"
#include "sim/compare.h"
#include "sim/simulate.h"
#include "sim/timeline.h"
#include "sim/why.h"

#include <stdio.h>

/* What the page says about how it was made, so it can be reproduced. */
typedef struct ks_report_inputs {
    const char *command;            /* "simulate", "capacity" */
    int argc;                       /* the command line as given */
    char **argv;
    const char *const *paths;       /* manifest paths */
    size_t npaths;
    const char *config_path;        /* NULL: the v1.34 defaults */
    uint64_t seed;
    bool deterministic;             /* --tie-break name */
} ks_report_inputs;

/* Score rows a simulate page shows per attempt at most: the simulation
 * behind it need keep no more (ks_sim_options.explain_score_rows). */
#define KS_REPORT_HTML_SCORE_ROWS 20u

/* The assets compiled in (build/<mode>/gen/report_assets.c). */
extern const char ks_report_page_css[];
extern const char ks_report_page_js[];

/* false when writing failed (errno as fwrite left it). why: the fixes
 * `ksched why --all` found on the cluster as given (NULL: not computed;
 * why_skipped: the page says why not). */
bool ks_report_html_simulate(FILE *out, const ks_sim_result *r, const ks_why_result *why, const char *why_skipped,
                             const ks_report_inputs *in);
/* cluster: as given (why does not change it). */
bool ks_report_html_why(FILE *out, const ks_cluster *cluster, const ks_why_result *r, const ks_report_inputs *in);
/* cluster: as given; compare_path: configuration B. */
bool ks_report_html_compare(FILE *out, const ks_cluster *cluster, const ks_compare_result *r,
                            const char *compare_path, const ks_report_inputs *in);
/* cluster: the state after the replicas were placed. */
bool ks_report_html_capacity(FILE *out, const ks_cluster *cluster, const ks_pod *tmpl,
                             const ks_capacity_result *r, const ks_report_inputs *in);
/* How long each bound pod waited, by when it was bound: the replay page's
 * pending-time percentiles over time (the series carry only counts). */
typedef struct ks_report_waits {
    int64_t *at;      /* first bound (unix ns) */
    int64_t *pending; /* arrival to first bound (ns) */
    size_t n, cap;
} ks_report_waits;
void ks_report_waits_add(ks_report_waits *w, int64_t at, int64_t pending_ns);
void ks_report_waits_free(ks_report_waits *w);

/* The replay's summary and series, one run per configuration, overlaid;
 * pending_long_ns: the "pending longer than" threshold of the series;
 * waits: per run (NULL: no percentiles over time); diff: replay
 * --compare's decisions that differ (NULL: none). */
bool ks_report_html_replay(FILE *out, size_t n, const char *const *names, const ks_tl_result *const *results,
                           const ks_report_waits *waits, int64_t pending_long_ns, const ks_compare_result *diff,
                           const ks_report_inputs *in);

#endif
