/* -o html for simulate and capacity: each pending pod's outcome with every
 * attempt's Filter verdicts (grouped by outcome, nodes as ranges) and
 * Score table (the best rows), the reasons counted as kube-scheduler's
 * FitError counts them, preemption victims and their preemptors, and the
 * fixes `why --all` found; capacity's replicas per node and why the next
 * one does not fit (docs/report.md). */
#include "sim/report_html_page.h"
#include "util/intern.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Explain detail is written while the page's data is below this size;
 * pods after that keep their outcome and reasons only (the page says how
 * many). 3.5 MB leaves room for the cluster under the 5 MB a 1,000-node /
 * 5,000-pod page is meant to stay within (docs/report.md, "Size"). */
#define EXPLAIN_BUDGET_BYTES (3500u * 1000u)
/* Score rows kept per attempt: all of them for small clusters; for large
 * ones the best nodes (and the chosen one), as many as fit 25,000 rows
 * over all pods (a row is about 60 bytes), never fewer than 3. */
#define SCORE_ROWS_TOTAL 25000u
#define SCORE_ROWS_MAX KS_REPORT_HTML_SCORE_ROWS
#define SCORE_ROWS_MIN 3u

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void write_ranges(ks_strbuf *b, uint32_t *v, size_t n) {
    if (n > 1) qsort(v, n, sizeof(uint32_t), cmp_u32);
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1) j++;
        if (i) ks_sb_putc(b, ',');
        ks_pj_i64(b, v[i]);
        ks_sb_putc(b, ',');
        ks_pj_i64(b, v[j]);
        i = j + 1;
    }
    ks_sb_putc(b, ']');
}

typedef struct vgroup {
    const ks_sim_verdict *first; /* plugin and reasons of the group */
    uint32_t *nodes;
    size_t n, cap;
} vgroup;

static bool same_verdict(const ks_sim_verdict *a, const ks_sim_verdict *b) {
    if ((a->code == KS_SUCCESS) != (b->code == KS_SUCCESS)) return false;
    if (a->code == KS_SUCCESS) return true;
    if (strcmp(a->plugin, b->plugin) || a->nreasons != b->nreasons) return false;
    for (uint32_t i = 0; i < a->nreasons; i++)
        if (strcmp(a->reasons[i], b->reasons[i])) return false;
    return true;
}

/* Filter verdicts grouped by outcome: [plugin or -1 (passed), [reasons],
 * [node ranges]]. Groups are few (one per distinct reason), so the linear
 * search is cheap. */
static void write_verdicts(html_page *pg, const ks_sim_attempt *a) {
    vgroup *g = NULL;
    size_t ng = 0, gcap = 0;
    for (uint32_t i = 0; i < a->nverdicts; i++) {
        const ks_sim_verdict *v = &a->verdicts[i];
        int64_t pos = html_node_pos(pg, v->node);
        if (pos < 0) continue;
        size_t k = 0;
        while (k < ng && !same_verdict(g[k].first, v)) k++;
        if (k == ng) {
            KS_GROW(g, gcap, ng + 1);
            memset(&g[ng], 0, sizeof(*g));
            g[ng++].first = v;
        }
        KS_GROW(g[k].nodes, g[k].cap, g[k].n + 1);
        g[k].nodes[g[k].n++] = (uint32_t)pos;
    }
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (size_t k = 0; k < ng; k++) {
        const ks_sim_verdict *v = g[k].first;
        if (k) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        if (v->code == KS_SUCCESS) ks_sb_puts(b, "-1");
        else html_put_strref(pg, v->plugin);
        ks_sb_puts(b, ",[");
        for (uint32_t r = 0; v->code != KS_SUCCESS && r < v->nreasons; r++) {
            if (r) ks_sb_putc(b, ',');
            html_put_strref(pg, v->reasons[r]);
        }
        ks_sb_putc(b, ']');
        if (v->code != KS_SUCCESS) {
            ks_sb_putc(b, ',');
            ks_pj_str(b, ks_code_name(v->code));
        } else {
            ks_sb_puts(b, ",\"\"");
        }
        ks_sb_putc(b, ',');
        write_ranges(b, g[k].nodes, g[k].n);
        ks_sb_putc(b, ']');
        free(g[k].nodes);
    }
    ks_sb_putc(b, ']');
    free(g);
}

static const ks_sim_attempt *sort_attempt;

static int cmp_score_row(const void *x, const void *y) {
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const ks_sim_attempt *a = sort_attempt;
    if (a->total[i] != a->total[j]) return a->total[i] > a->total[j] ? -1 : 1;
    return strcmp(ks_str(a->scored_nodes[i]), ks_str(a->scored_nodes[j]));
}

/* The score table: the best rows by total (and the chosen node), each
 * [node, total, raw per plugin..., normalized per plugin...]; weighted is
 * normalized x weight (the page multiplies). */
static void write_scores(html_page *pg, const ks_sim_attempt *a) {
    ks_strbuf *b = &pg->b;
    uint32_t *rows = ks_xcalloc(a->nscored ? a->nscored : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < a->nscored; i++) rows[i] = i;
    sort_attempt = a;
    if (a->nscored) qsort(rows, a->nscored, sizeof(uint32_t), cmp_score_row);
    uint32_t keep = a->nscored < pg->score_rows ? a->nscored : pg->score_rows;
    ks_id sel = a->selected_node ? ks_intern_find(a->selected_node) : 0;
    bool has_sel = false;
    for (uint32_t i = 0; i < keep; i++) has_sel |= a->scored_nodes[rows[i]] == sel;
    if (!has_sel && sel) {
        for (uint32_t i = keep; i < a->nscored; i++)
            if (a->scored_nodes[rows[i]] == sel) {
                rows[keep++] = rows[i];
                break;
            }
    }
    ks_sb_putc(b, '[');
    for (uint32_t r = 0; r < keep; r++) {
        uint32_t i = rows[r];
        if (r) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_pj_i64(b, html_node_pos(pg, a->scored_nodes[i]));
        ks_sb_putc(b, ',');
        ks_pj_i64(b, a->total[i]);
        for (uint32_t j = 0; j < a->nplugins; j++) {
            ks_sb_putc(b, ',');
            ks_pj_i64(b, a->raw[(size_t)i * a->nplugins + j]);
        }
        for (uint32_t j = 0; j < a->nplugins; j++) {
            ks_sb_putc(b, ',');
            ks_pj_i64(b, a->normalized[(size_t)i * a->nplugins + j]);
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, ']');
    free(rows);
}

static void write_attempt(html_page *pg, const ks_sim_attempt *a) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"no\":");
    ks_pj_i64(b, a->number);
    html_write_time(pg, "t", a->time_ns);
    if (a->requeue_event) {
        ks_pj_key(b, "rq", false);
        ks_pj_str(b, a->requeue_event);
        ks_pj_key(b, "rqp", false);
        ks_pj_str(b, a->requeue_plugin);
    }
    if (a->pre_filter_code != KS_SUCCESS) {
        ks_pj_key(b, "pre", false);
        ks_sb_putc(b, '[');
        html_put_strref(pg, a->pre_filter_plugin ? a->pre_filter_plugin : "");
        ks_sb_putc(b, ',');
        ks_pj_str(b, ks_code_name(a->pre_filter_code));
        ks_sb_putc(b, ',');
        ks_pj_str(b, a->pre_filter_message ? a->pre_filter_message : "");
        ks_sb_putc(b, ']');
    }
    if (a->pre_filter_narrowed) ks_sb_puts(b, ",\"narrowed\":1");
    ks_pj_key(b, "fp", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < a->nfilter_plugins; i++) {
        if (i) ks_sb_putc(b, ',');
        html_put_strref(pg, a->filter_plugins[i]);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "nv", false);
    ks_pj_i64(b, a->nverdicts);
    ks_pj_key(b, "vg", false);
    write_verdicts(pg, a);
    ks_pj_key(b, "sp", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < a->nplugins; i++) {
        if (i) ks_sb_putc(b, ',');
        html_put_strref(pg, a->score_plugins[i]);
    }
    ks_sb_puts(b, "],\"w\":[");
    for (uint32_t i = 0; i < a->nplugins; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_i64(b, a->weights[i]);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "nsc", false);
    ks_pj_i64(b, a->nscored_all);
    ks_pj_key(b, "sc", false);
    write_scores(pg, a);
    ks_pj_key(b, "sel", false);
    ks_pj_i64(b, html_node_pos_name(pg, a->selected_node));
    if (a->message) {
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, a->message);
    }
    if (a->post_filter_ran) {
        ks_pj_key(b, "pf", false);
        ks_sb_putc(b, '[');
        html_put_strref(pg, a->post_filter_plugin && a->post_filter_plugin[0] ? a->post_filter_plugin : "DefaultPreemption");
        ks_sb_putc(b, ',');
        ks_pj_str(b, ks_code_name(a->post_filter_code));
        ks_sb_putc(b, ',');
        ks_pj_str(b, a->post_filter_message ? a->post_filter_message : "");
        ks_sb_putc(b, ',');
        ks_pj_i64(b, html_node_pos_name(pg, a->nominated_node));
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, '}');
}

/* The reasons of an attempt's rejected nodes counted as kube-scheduler's
 * FitError counts them: one per reason per node, each printed as
 * "<count> <reason>" and the strings sorted. [[count, reason], ...]. */
static void write_histogram(html_page *pg, const ks_sim_attempt *a) {
    ks_map counts;
    ks_map_init(&counts);
    ks_id *order = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < a->nverdicts; i++) {
        const ks_sim_verdict *v = &a->verdicts[i];
        if (v->code == KS_SUCCESS) continue;
        for (uint32_t r = 0; r < v->nreasons; r++) {
            ks_id id = ks_intern(v->reasons[r]);
            uintptr_t c = (uintptr_t)ks_map_get(&counts, (uint64_t)id + 1);
            if (!c) {
                KS_GROW(order, cap, n + 1);
                order[n++] = id;
            }
            ks_map_put(&counts, (uint64_t)id + 1, (void *)(c + 1));
        }
    }
    char **lines = ks_xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        lines[i] = ks_xasprintf("%zu %s", (size_t)(uintptr_t)ks_map_get(&counts, (uint64_t)order[i] + 1),
                                ks_str(order[i]));
    if (n) qsort(lines, n, sizeof(char *), html_cmp_str);
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        char *sp = strchr(lines[i], ' ');
        *sp = 0;
        if (i) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_sb_puts(b, lines[i]);
        ks_sb_putc(b, ',');
        html_put_strref(pg, sp + 1);
        ks_sb_putc(b, ']');
        free(lines[i]);
    }
    ks_sb_putc(b, ']');
    free(lines);
    free(order);
    ks_map_free(&counts);
}

/* The pending pod that preempted victim v: the one whose UID the
 * Preempted event names, else the last one nominated to v's node before
 * v was deleted. -1 when none is found. */
static int64_t preemptor_of(const ks_sim_result *r, const ks_sim_pod *v) {
    const char *m = v->message;
    const char *pre = "Preempted by pod ";
    if (m && !strncmp(m, pre, strlen(pre))) {
        const char *uid = m + strlen(pre);
        const char *end = strstr(uid, " on node ");
        size_t n = end ? (size_t)(end - uid) : strlen(uid);
        for (uint32_t i = 0; n && i < r->npods; i++) {
            const char *u = r->pods[i].input->uid;
            if (u && strlen(u) == n && !strncmp(u, uid, n)) return i;
        }
    }
    int64_t best = -1, best_t = 0;
    for (uint32_t i = 0; v->node && i < r->npods; i++)
        for (uint32_t k = 0; k < r->pods[i].nexplain; k++) {
            const ks_sim_attempt *a = &r->pods[i].explain[k];
            if (a->nominated_node && !strcmp(a->nominated_node, v->node) && a->time_ns <= v->deleted_ns &&
                (best < 0 || a->time_ns >= best_t))
                best = i, best_t = a->time_ns;
        }
    return best;
}

static void write_pod(html_page *pg, const ks_sim_result *r, const ks_sim_pod *sp, bool victim, uint32_t idx) {
    ks_strbuf *b = &pg->b;
    const ks_pod *p = sp->input;
    ks_sb_puts(b, "{\"ns\":");
    html_put_strref(pg, ks_str(p->ns));
    ks_pj_key(b, "n", false);
    ks_pj_str(b, ks_str(p->name));
    ks_pj_key(b, "s", false);
    ks_pj_str(b, ks_sim_state_name(sp->state));
    ks_pj_key(b, "node", false);
    ks_pj_i64(b, html_node_pos_name(pg, sp->node));
    if (sp->nominated) {
        ks_pj_key(b, "nom", false);
        ks_pj_i64(b, html_node_pos_name(pg, sp->nominated));
    }
    if (sp->message) {
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, sp->message);
    }
    if (sp->reason) {
        ks_pj_key(b, "why", false);
        ks_pj_str(b, sp->reason);
    }
    if (p->uid) {
        ks_pj_key(b, "uid", false);
        ks_pj_str(b, p->uid);
    }
    ks_pj_key(b, "prio", false);
    ks_pj_i64(b, ks_pod_priority(p));
    ks_pj_key(b, "req", false);
    ks_sb_putc(b, '[');
    for (size_t k = 0; k < pg->ncols; k++) {
        if (k) ks_sb_putc(b, ',');
        ks_pj_i64(b, html_col_value(&pg->cols[k], &p->requests, 1));
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "att", false);
    ks_pj_i64(b, sp->attempts);
    if (sp->workload >= 0) {
        ks_pj_key(b, "wl", false);
        ks_pj_i64(b, sp->workload);
    }
    if (victim) {
        ks_pj_key(b, "by", false);
        ks_pj_i64(b, pg->preemptor[idx]);
        html_write_time(pg, "deleted", sp->deleted_ns);
    } else {
        ks_pj_key(b, "vic", false);
        ks_sb_putc(b, '[');
        bool first = true;
        for (uint32_t v = 0; v < r->nvictims; v++) {
            if (pg->preemptor[v] != (int64_t)idx) continue;
            if (!first) ks_sb_putc(b, ',');
            first = false;
            ks_pj_i64(b, v);
        }
        ks_sb_putc(b, ']');
    }
    if (sp->nexplain) {
        const ks_sim_attempt *last = &sp->explain[sp->nexplain - 1];
        ks_pj_key(b, "h", false);
        write_histogram(pg, last);
        ks_pj_key(b, "ex", false);
        ks_sb_putc(b, '[');
        /* within the budget every attempt; past it, none */
        if (b->len < EXPLAIN_BUDGET_BYTES) {
            for (uint32_t k = 0; k < sp->nexplain; k++) {
                if (k) ks_sb_putc(b, ',');
                write_attempt(pg, &sp->explain[k]);
            }
        } else {
            pg->explain_omitted++;
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, '}');
}


/* Pods grouped by workload (src/sim/workload_groups.c): what the table's
 * workload lines say, as [{kind, ns, name, desired, running, scheduled,
 * pending, notCreated, firstPending, rollout}]. */
static void write_workloads(html_page *pg, const ks_sim_result *r) {
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nworkloads; i++) {
        const ks_sim_workload *w = &r->workloads[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"kind\":");
        ks_pj_str(b, ks_workload_kind_name(w->workload->kind));
        ks_pj_key(b, "ns", false);
        html_put_strref(pg, ks_str(w->workload->ns));
        ks_pj_key(b, "name", false);
        ks_pj_str(b, ks_str(w->workload->name));
        ks_pj_key(b, "desired", false);
        ks_pj_i64(b, w->desired);
        ks_pj_key(b, "running", false);
        ks_pj_i64(b, w->running);
        ks_pj_key(b, "scheduled", false);
        ks_pj_i64(b, w->scheduled);
        ks_pj_key(b, "pending", false);
        ks_pj_i64(b, w->pending);
        ks_pj_key(b, "notCreated", false);
        ks_pj_i64(b, w->not_created);
        ks_pj_key(b, "firstPending", false);
        ks_pj_i64(b, w->first_pending);
        if (w->rollout) {
            char buf[96];
            snprintf(buf, sizeof buf, ",\"rollout\":{\"new\":%u,\"total\":%u,\"oldLeft\":%u,\"recreate\":%s}",
                     w->rollout_new, w->rollout_total, w->rollout_old_left, w->rollout_recreate ? "true" : "false");
            ks_sb_puts(b, buf);
        }
        ks_sb_putc(b, '}');
    }
    ks_sb_putc(b, ']');
}

bool ks_report_html_simulate(FILE *out, const ks_sim_result *r, const ks_why_result *why, const char *why_skipped,
                             const ks_report_inputs *in) {
    html_page pg;
    html_page_init(&pg, r->cluster);
    uint32_t rows = r->npods ? SCORE_ROWS_TOTAL / r->npods : SCORE_ROWS_MAX;
    pg.score_rows = rows > SCORE_ROWS_MAX ? SCORE_ROWS_MAX : rows < SCORE_ROWS_MIN ? SCORE_ROWS_MIN : rows;
    pg.preemptor = ks_xcalloc(r->nvictims ? r->nvictims : 1, sizeof(int64_t));
    for (uint32_t i = 0; i < r->nvictims; i++) pg.preemptor[i] = preemptor_of(r, &r->victims[i]);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"simulate\",\"inputs\":");
    html_write_inputs(&pg, in);
    html_write_time(&pg, "simStart", r->start_ns);
    html_write_time(&pg, "simEnd", r->end_ns);
    ks_pj_key(b, "attempts", false);
    ks_pj_i64(b, (int64_t)r->attempts);
    ks_pj_key(b, "scoreRows", false);
    ks_pj_i64(b, pg.score_rows);
    html_write_cluster(&pg);
    ks_pj_key(b, "pods", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->npods; i++) {
        if (i) ks_sb_putc(b, ',');
        write_pod(&pg, r, &r->pods[i], false, i);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "victims", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nvictims; i++) {
        if (i) ks_sb_putc(b, ',');
        write_pod(&pg, r, &r->victims[i], true, i);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "workloads", false);
    write_workloads(&pg, r);
    ks_pj_key(b, "explainOmitted", false);
    ks_pj_i64(b, (int64_t)pg.explain_omitted);
    if (why) {
        ks_pj_key(b, "why", false);
        html_write_why(&pg, why);
    } else if (why_skipped) {
        ks_pj_key(b, "whySkipped", false);
        ks_pj_str(b, why_skipped);
    }
    html_finish_data(&pg);
    bool ok = html_write_page(out, &pg, "ksched simulate");
    html_page_free(&pg);
    return ok;
}

bool ks_report_html_capacity(FILE *out, const ks_cluster *cluster, const ks_pod *tmpl,
                             const ks_capacity_result *r, const ks_report_inputs *in) {
    html_page pg;
    html_page_init(&pg, cluster);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"capacity\",\"inputs\":");
    html_write_inputs(&pg, in);
    html_write_cluster(&pg);
    ks_pj_key(b, "capacity", false);
    ks_sb_puts(b, "{\"pod\":");
    char *name = ks_xasprintf("%s/%s", ks_str(tmpl->ns), ks_str(tmpl->name));
    ks_pj_str(b, name);
    free(name);
    ks_pj_key(b, "req", false);
    ks_sb_putc(b, '[');
    for (size_t k = 0; k < pg.ncols; k++) {
        if (k) ks_sb_putc(b, ',');
        ks_pj_i64(b, html_col_value(&pg.cols[k], &tmpl->requests, 1));
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "replicas", false);
    ks_pj_i64(b, r->replicas);
    ks_pj_key(b, "stoppedAtMax", false);
    ks_sb_puts(b, r->hit_max ? "true" : "false");
    ks_pj_key(b, "perNode", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nper_node; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_pj_i64(b, html_node_pos(&pg, r->per_node[i].node));
        ks_sb_putc(b, ',');
        ks_pj_i64(b, r->per_node[i].replicas);
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, ']');
    if (r->message) {
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, r->message);
    }
    ks_pj_key(b, "h", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nreasons; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_pj_i64(b, r->reasons[i].nodes);
        ks_sb_putc(b, ',');
        html_put_strref(&pg, r->reasons[i].reason);
        ks_sb_putc(b, ']');
    }
    ks_sb_puts(b, "]}");
    html_finish_data(&pg);
    bool ok = html_write_page(out, &pg, "ksched capacity");
    html_page_free(&pg);
    return ok;
}

