/* -o html for replay: the summary per configuration and the series, thinned
 * to at most REPLAY_POINTS_MAX points, with the pending time of the pods
 * bound in each step as percentiles (docs/report.md, "replay"). */
#include "sim/report_html_page.h"
#include "sim/report.h"
#include "util/xalloc.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Samples shown per series: past this, every k-th step is kept (levels
 * as sampled, per-step counts summed over the k steps), so a week at one
 * sample a minute is 2,520 points and the page stays small. */
#define REPLAY_POINTS_MAX 4000u

static void write_series_u32(ks_strbuf *b, const ks_tl_result *r, size_t stride, size_t off, bool sum) {
    ks_sb_putc(b, '[');
    for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
        int64_t v = 0;
        size_t end = i + stride < r->nsamples ? i + stride : r->nsamples;
        if (sum) {
            for (size_t j = i; j < end; j++) v += *(const uint32_t *)((const char *)&r->samples[j] + off);
        } else {
            v = *(const uint32_t *)((const char *)&r->samples[end - 1] + off);
        }
        if (n) ks_sb_putc(b, ',');
        ks_pj_i64(b, v);
    }
    ks_sb_putc(b, ']');
}

static void write_seconds(ks_strbuf *b, const char *key, int64_t ns) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", (double)ns / 1e9);
    ks_pj_key(b, key, false);
    ks_sb_puts(b, buf);
}

void ks_report_waits_add(ks_report_waits *w, int64_t at, int64_t pending_ns) {
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 256;
        w->at = ks_xrealloc(w->at, w->cap * sizeof(int64_t));
        w->pending = ks_xrealloc(w->pending, w->cap * sizeof(int64_t));
    }
    w->at[w->n] = at;
    w->pending[w->n++] = pending_ns;
}

void ks_report_waits_free(ks_report_waits *w) {
    free(w->at);
    free(w->pending);
    memset(w, 0, sizeof(*w));
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct wait_pair {
    int64_t at, pending;
} wait_pair;

static int cmp_wait_at(const void *a, const void *b) {
    const wait_pair *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* Per drawn sample: p50, p90, p99 (nearest rank, seconds) of the pending
 * time of the pods first bound since the previous drawn sample; null when
 * none was. [[p50...], [p90...], [p99...]]. */
static void write_wait_percentiles(ks_strbuf *b, const ks_tl_result *r, size_t stride, const ks_report_waits *w) {
    wait_pair *v = ks_xcalloc(w->n ? w->n : 1, sizeof(wait_pair));
    for (size_t i = 0; i < w->n; i++) v[i] = (wait_pair){w->at[i], w->pending[i]};
    if (w->n > 1) qsort(v, w->n, sizeof(wait_pair), cmp_wait_at);
    int64_t *bucket = ks_xcalloc(w->n ? w->n : 1, sizeof(int64_t));
    static const int pcts[3] = {50, 90, 99};
    ks_strbuf out[3];
    for (int q = 0; q < 3; q++) ks_sb_init(&out[q]);
    size_t k = 0;
    for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
        size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
        int64_t edge = r->samples[last].t;
        size_t nb = 0;
        while (k < w->n && v[k].at <= edge) bucket[nb++] = v[k++].pending;
        if (nb > 1) qsort(bucket, nb, sizeof(int64_t), cmp_i64);
        for (int q = 0; q < 3; q++) {
            if (n) ks_sb_putc(&out[q], ',');
            if (!nb) {
                ks_sb_puts(&out[q], "null");
                continue;
            }
            size_t rank = (nb * (size_t)pcts[q] + 99) / 100;
            char buf[32];
            snprintf(buf, sizeof buf, "%.3f", (double)bucket[rank ? rank - 1 : 0] / 1e9);
            ks_sb_puts(&out[q], buf);
        }
    }
    ks_sb_putc(b, '[');
    for (int q = 0; q < 3; q++) {
        if (q) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_sb_puts(b, ks_sb_str(&out[q]));
        ks_sb_putc(b, ']');
        ks_sb_free(&out[q]);
    }
    ks_sb_putc(b, ']');
    free(bucket);
    free(v);
}

static void write_replay_run(html_page *pg, const ks_tl_result *r, size_t stride, const ks_report_waits *waits) {
    ks_strbuf *b = &pg->b;
    const ks_tl_summary *s = &r->summary;
    char t[48];
    ks_sb_puts(b, "{\"summary\":{\"start\":");
    ks_format_time(s->start, false, t, sizeof t);
    ks_pj_str(b, t);
    ks_pj_key(b, "end", false);
    ks_format_time(s->end, false, t, sizeof t);
    ks_pj_str(b, t);
    struct { const char *k; uint64_t v; } counts[] = {
        {"arrived", s->arrived}, {"scheduled", s->scheduled}, {"neverScheduled", s->never_scheduled},
        {"preempted", s->preempted}, {"evicted", s->evicted}, {"finished", s->finished}, {"deleted", s->deleted},
        {"attempts", s->attempts}, {"events", s->events}, {"recorded", s->recorded}, {"sameNode", s->same_node},
        {"recordedInfeasible", s->recorded_infeasible},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        ks_pj_key(b, counts[i].k, false);
        ks_pj_i64(b, (int64_t)counts[i].v);
    }
    write_seconds(b, "p50", s->pending_p50);
    write_seconds(b, "p90", s->pending_p90);
    write_seconds(b, "p99", s->pending_p99);
    write_seconds(b, "max", s->pending_max);
    ks_pj_key(b, "exact", false);
    ks_sb_puts(b, s->pending_exact ? "true" : "false");
    ks_pj_key(b, "bounded", false);
    ks_sb_puts(b, s->bounded ? "true" : "false");
    ks_pj_key(b, "res", false);
    ks_sb_putc(b, '[');
    for (uint32_t k = 0; k < s->nres; k++) {
        char buf[96];
        if (k) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"name\":");
        ks_pj_str(b, s->res_names[k]);
        snprintf(buf, sizeof buf, ",\"peak\":%.4f,\"mean\":%.4f}", s->peak_alloc[k], s->mean_alloc[k]);
        ks_sb_puts(b, buf);
    }
    ks_sb_puts(b, "]},\"series\":{\"t\":[");
    int64_t t0 = r->nsamples ? r->samples[0].t : 0;
    for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
        size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
        char buf[32];
        snprintf(buf, sizeof buf, "%s%.0f", n ? "," : "", (double)(r->samples[last].t - t0) / 1e9);
        ks_sb_puts(b, buf);
    }
    ks_sb_putc(b, ']');
#define LEVEL(key, field)                                                                \
    ks_pj_key(b, key, false);                                                            \
    write_series_u32(b, r, stride, offsetof(ks_tl_sample, field), false)
#define PER_STEP(key, field)                                                             \
    ks_pj_key(b, key, false);                                                            \
    write_series_u32(b, r, stride, offsetof(ks_tl_sample, field), true)
    LEVEL("nodes", nodes);
    LEVEL("schedulable", schedulable_nodes);
    LEVEL("pending", pending);
    LEVEL("pendingLong", pending_long);
    LEVEL("running", running);
    PER_STEP("arrived", arrived);
    PER_STEP("scheduled", scheduled);
    PER_STEP("evictions", evictions);
    PER_STEP("preemptions", preemptions);
#undef LEVEL
#undef PER_STEP
    /* allocation per resource in tenths of a percent */
    ks_pj_key(b, "alloc", false);
    ks_sb_putc(b, '[');
    for (uint32_t k = 0; k < s->nres; k++) {
        if (k) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
            size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
            const ks_tl_sample *x = &r->samples[last];
            if (n) ks_sb_putc(b, ',');
            ks_pj_i64(b, x->allocatable[k] > 0 ? (int64_t)((double)x->allocated[k] * 1000.0 / (double)x->allocatable[k]) : 0);
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, ']');
    if (waits) {
        ks_pj_key(b, "wait", false);
        write_wait_percentiles(b, r, stride, waits);
    }
    ks_pj_key(b, "extra", false);
    ks_sb_putc(b, '[');
    for (uint32_t e = 0; e < r->nextra; e++) {
        if (e) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
            size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
            char buf[32];
            snprintf(buf, sizeof buf, "%s%.4g", n ? "," : "", r->samples[last].extra ? r->samples[last].extra[e] : 0.0);
            ks_sb_puts(b, buf);
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_puts(b, "]}}");
}

bool ks_report_html_replay(FILE *out, size_t n, const char *const *names, const ks_tl_result *const *results,
                           const ks_report_waits *waits, int64_t pending_long_ns, const ks_compare_result *diff,
                           const ks_report_inputs *in) {
    ks_cluster *empty = ks_cluster_new();
    html_page pg;
    html_page_init(&pg, empty);
    ks_strbuf *b = &pg.b;
    size_t most = 0;
    for (size_t i = 0; i < n; i++)
        if (results[i]->nsamples > most) most = results[i]->nsamples;
    size_t stride = most > REPLAY_POINTS_MAX ? (most + REPLAY_POINTS_MAX - 1) / REPLAY_POINTS_MAX : 1;
    ks_sb_puts(b, "{\"kind\":\"replay\",\"inputs\":");
    html_write_inputs(&pg, in);
    ks_pj_key(b, "replay", false);
    ks_sb_puts(b, "{\"configs\":");
    html_write_str_list(b, (char *const *)names, (uint32_t)n);
    ks_pj_key(b, "stride", false);
    ks_pj_i64(b, (int64_t)stride);
    write_seconds(b, "pendingLong", pending_long_ns);
    ks_pj_key(b, "extra", false);
    html_write_str_list(b, n && results[0]->nextra ? (char *const *)results[0]->extra_names : NULL,
                   n ? results[0]->nextra : 0);
    ks_pj_key(b, "runs", false);
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) ks_sb_putc(b, ',');
        write_replay_run(&pg, results[i], stride, waits ? &waits[i] : NULL);
    }
    ks_sb_puts(b, "]}");
    if (diff) {
        ks_pj_key(b, "compare", false);
        html_write_compare(&pg, diff);
    }
    html_finish_data(&pg);
    bool ok = html_write_page(out, &pg, "ksched replay");
    html_page_free(&pg);
    ks_cluster_free(empty);
    return ok;
}

