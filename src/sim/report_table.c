/* -o table: what happened to each pending pod, then how full each node is;
 * with --explain, each attempt's Filter verdicts and Score breakdown. */
#include "api/dra.h"
#include "api/quantity.h"
#include "sim/report.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void ks_format_time(int64_t ns, bool micro, char *buf, size_t n) {
    time_t secs = (time_t)(ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro) snprintf(buf, n, "%s.%06lldZ", base, (long long)((ns % 1000000000LL) / 1000));
    else snprintf(buf, n, "%sZ", base);
}

/* A table: rows of cells, printed with each column padded to its widest
 * cell and two spaces between columns; the last column is not padded. */
typedef struct table {
    size_t ncols;
    size_t nrows, cap;
    char **cells; /* nrows * ncols, malloc'd */
} table;

static void table_row(table *t, const char *const *cols) {
    KS_GROW(t->cells, t->cap, (t->nrows + 1) * t->ncols);
    for (size_t c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] = ks_xstrdup(cols[c] ? cols[c] : "");
    t->nrows++;
}

static void table_print(FILE *out, table *t, const char *indent) {
    size_t *w = ks_xcalloc(t->ncols, sizeof(size_t));
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c]) w[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        ks_strbuf line;
        ks_sb_init(&line);
        ks_sb_puts(&line, indent);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            if (c + 1 < t->ncols) ks_sb_printf(&line, "%-*s  ", (int)w[c], s);
            else ks_sb_puts(&line, s);
        }
        /* Trailing blanks come from empty last cells; drop them. */
        while (line.len && line.s[line.len - 1] == ' ') line.s[--line.len] = 0;
        fprintf(out, "%s\n", ks_sb_str(&line));
        ks_sb_free(&line);
    }
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    free(w);
    memset(t, 0, sizeof(*t));
}

static void pod_rows(table *t, const ks_sim_pod *p) {
    const char *cols[5] = {ks_str(p->input->ns), ks_str(p->input->name),
                           p->node ? p->node : "<none>", ks_sim_state_name(p->state), ""};
    char *msg = NULL;
    if (p->state == KS_SIM_PREEMPTED) cols[4] = p->message ? p->message : "";
    else if (p->state != KS_SIM_SCHEDULED && p->message) cols[4] = p->message;
    if (p->state == KS_SIM_UNSCHEDULABLE && p->nominated) {
        msg = ks_xasprintf("(nominated to %s) %s", p->nominated, cols[4]);
        cols[4] = msg;
    }
    table_row(t, cols);
    free(msg);
}

/* Resource names shown in the node summary: cpu, memory, then every
 * scalar resource some node offers (a non-zero amount), by name. */
static size_t scalar_columns(const ks_cluster *c, ks_id **outp) {
    size_t n = 0, cap = 0;
    ks_id *out = NULL;
    for (uint32_t i = 0; i < c->nodes.n; i++) {
        const ks_resource *a = &c->nodes.v[i]->allocatable;
        for (uint32_t j = 0; j < a->nscalar; j++) {
            if (a->scalars[j].val <= 0) continue; /* kind reports hugepages: "0" */
            bool seen = false;
            for (size_t k = 0; k < n; k++) seen |= out[k] == a->scalars[j].name;
            if (seen) continue;
            KS_GROW(out, cap, n + 1);
            out[n++] = a->scalars[j].name;
        }
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(ks_str(out[j - 1]), ks_str(out[j])) > 0; j--) {
            ks_id x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    *outp = out;
    return n;
}

static void usage_cell(char *buf, size_t n, const char *req, const char *alloc, int64_t r,
                       int64_t a) {
    if (a <= 0) snprintf(buf, n, "%s/%s", req, alloc);
    else snprintf(buf, n, "%s/%s (%lld%%)", req, alloc, (long long)(r * 100 / a));
}

static void node_summary(FILE *out, const ks_cluster *c) {
    ks_id *scalars = NULL;
    size_t ns = scalar_columns(c, &scalars);
    table t = {.ncols = 4 + ns};
    const char **hdr = ks_xcalloc(4 + ns, sizeof(*hdr));
    char (*cells)[128] = ks_xcalloc(4 + ns, sizeof(*cells));
    const char **row = ks_xcalloc(4 + ns, sizeof(*row));
    hdr[0] = "NODE";
    hdr[1] = "PODS";
    hdr[2] = "CPU";
    hdr[3] = "MEMORY";
    for (size_t i = 0; i < ns; i++) hdr[4 + i] = ks_str(scalars[i]);
    table_row(&t, hdr);
    for (uint32_t i = 0; i < c->nodes.n; i++) {
        const ks_node *nd = c->nodes.v[i];
        ks_resource req;
        memset(&req, 0, sizeof(req));
        int64_t pods = 0;
        for (uint32_t j = 0; j < c->pods.n; j++) {
            const ks_pod *p = c->pods.v[j];
            if (p->node_name != nd->name || ks_pod_is_terminating(p)) continue;
            if (p->phase == KS_PHASE_SUCCEEDED || p->phase == KS_PHASE_FAILED) continue;
            ks_resource_add(&req, NULL, &p->requests);
            pods++;
        }
        char a[32], b[32];
        snprintf(cells[0], 128, "%s", ks_str(nd->name));
        snprintf(cells[1], 128, "%lld/%lld", (long long)pods, (long long)nd->allocatable.allowed_pods);
        ks_quantity_format_milli(req.milli_cpu, a, sizeof(a));
        ks_quantity_format_milli(nd->allocatable.milli_cpu, b, sizeof(b));
        usage_cell(cells[2], 128, a, b, req.milli_cpu, nd->allocatable.milli_cpu);
        ks_quantity_format_bytes(req.memory, a, sizeof(a));
        ks_quantity_format_bytes(nd->allocatable.memory, b, sizeof(b));
        usage_cell(cells[3], 128, a, b, req.memory, nd->allocatable.memory);
        for (size_t k = 0; k < ns; k++) {
            int64_t r = ks_resource_get(&req, scalars[k]);
            int64_t al = ks_resource_get(&nd->allocatable, scalars[k]);
            if (!al && !r) snprintf(cells[4 + k], 128, "-");
            else {
                snprintf(a, sizeof(a), "%lld", (long long)r);
                snprintf(b, sizeof(b), "%lld", (long long)al);
                usage_cell(cells[4 + k], 128, a, b, r, al);
            }
        }
        ks_resource_fini(&req);
        for (size_t k = 0; k < 4 + ns; k++) row[k] = cells[k];
        table_row(&t, row);
    }
    table_print(out, &t, "");
    free(scalars);
    free(hdr);
    free(cells);
    free(row);
}

/* The devices a scheduled pod's claims hold at the end. */
static void devices_table(FILE *out, const ks_cluster *c, const ks_pod *p) {
    table t = {.ncols = 3};
    table_row(&t, (const char *const[]){"CLAIM", "REQUEST", "DEVICE"});
    size_t rows = 0;
    for (uint32_t k = 0; c && k < p->nresource_claims; k++) {
        bool check, skip;
        const char *name = ks_pod_claim_name(p, k, &check, &skip);
        if (!name) continue;
        for (uint32_t j = 0; j < c->resource_claims.n; j++) {
            const ks_resource_claim *rc = c->resource_claims.v[j];
            if (rc->ns != p->ns || strcmp(ks_str(rc->name), name) != 0 || !rc->allocation) continue;
            for (uint32_t d = 0; d < rc->allocation->nresults; d++) {
                const ks_device_result *r = &rc->allocation->results[d];
                char dev[600];
                snprintf(dev, sizeof dev, "%s/%s/%s%s", r->driver, r->pool, r->device,
                         r->admin_access ? " (admin access)" : "");
                table_row(&t, (const char *const[]){d == 0 ? name : "", r->request, dev});
                rows++;
            }
        }
    }
    if (rows) {
        table_print(out, &t, "  ");
        return;
    }
    for (size_t i = 0; i < t.nrows * t.ncols; i++) free(t.cells[i]);
    free(t.cells);
}

static void explain_attempt(FILE *out, const ks_sim_pod *p, const ks_sim_attempt *a, const ks_cluster *c) {
    fprintf(out, "\n%s/%s, attempt %u: ", ks_str(p->input->ns), ks_str(p->input->name), a->number);
    if (a->selected_node) fprintf(out, "scheduled to %s\n", a->selected_node);
    else fprintf(out, "%s\n", a->message ? a->message : "not scheduled");
    if (a->requeue_event) {
        if (a->requeue_plugin)
            fprintf(out, "  Requeued by %s (%s's QueueingHint)\n", a->requeue_event, a->requeue_plugin);
        else fprintf(out, "  Requeued by %s\n", a->requeue_event);
    }
    if (a->pre_filter_code != KS_SUCCESS) {
        fprintf(out, "  PreFilter: %s %s: %s\n", a->pre_filter_plugin, ks_code_name(a->pre_filter_code),
                a->pre_filter_message ? a->pre_filter_message : "");
    }
    if (a->nverdicts) {
        table t = {.ncols = 3};
        table_row(&t, (const char *const[]){"NODE", "FILTER", "REASON"});
        for (uint32_t i = 0; i < a->nverdicts; i++) {
            const ks_sim_verdict *v = &a->verdicts[i];
            ks_strbuf why;
            ks_sb_init(&why);
            for (uint32_t j = 0; j < v->nreasons; j++) {
                if (j) ks_sb_puts(&why, ", ");
                ks_sb_puts(&why, v->reasons[j]);
            }
            const char *verdict = v->code == KS_SUCCESS ? "passed" : v->plugin;
            table_row(&t, (const char *const[]){ks_str(v->node), verdict, ks_sb_str(&why)});
            ks_sb_free(&why);
        }
        table_print(out, &t, "  ");
    }
    if (a->nscored && a->nplugins) {
        table t = {.ncols = 6};
        table_row(&t, (const char *const[]){"NODE", "SCORE PLUGIN", "RAW", "NORMALIZED", "WEIGHT",
                                            "WEIGHTED"});
        for (uint32_t i = 0; i < a->nscored; i++) {
            for (uint32_t j = 0; j < a->nplugins; j++) {
                size_t k = (size_t)i * a->nplugins + j;
                char raw[24], norm[24], w[24], wt[24];
                snprintf(raw, sizeof(raw), "%lld", (long long)a->raw[k]);
                snprintf(norm, sizeof(norm), "%lld", (long long)a->normalized[k]);
                snprintf(w, sizeof(w), "%lld", (long long)a->weights[j]);
                snprintf(wt, sizeof(wt), "%lld", (long long)a->weighted[k]);
                table_row(&t, (const char *const[]){j == 0 ? ks_str(a->scored_nodes[i]) : "",
                                                    a->score_plugins[j], raw, norm, w, wt});
            }
            char tot[24];
            snprintf(tot, sizeof(tot), "%lld", (long long)a->total[i]);
            table_row(&t, (const char *const[]){"", "total", "", "", "", tot});
        }
        table_print(out, &t, "  ");
    }
    if (a->post_filter_ran) {
        fprintf(out, "  PostFilter: %s", a->post_filter_plugin[0] ? a->post_filter_plugin : "");
        if (a->nominated_node) fprintf(out, " nominated %s", a->nominated_node);
        if (a->post_filter_message && a->post_filter_message[0])
            fprintf(out, " (%s)", a->post_filter_message);
        fputc('\n', out);
    }
    if (a->selected_node && p->pod && p->pod->node_name && p->pod->nresource_claims) devices_table(out, c, p->pod);
}

/* One line per workload: NAMESPACE/NAME KIND placed/desired and why the
 * first pod that did not get a node did not. */
static void workload_rows(FILE *out, const ks_sim_result *r) {
    table t = {.ncols = 4};
    table_row(&t, (const char *const[]){"WORKLOAD", "KIND", "PODS", "FIRST PENDING"});
    for (uint32_t i = 0; i < r->nworkloads; i++) {
        const ks_sim_workload *w = &r->workloads[i];
        char *name = ks_xasprintf("%s/%s", ks_str(w->workload->ns), ks_str(w->workload->name));
        uint32_t placed = w->running + w->scheduled;
        uint32_t want = w->desired >= 0 ? (uint32_t)w->desired : placed + w->pending + w->not_created;
        char *pods = ks_xasprintf("%u/%u", placed, want);
        char *why = NULL;
        if (w->first_pending >= 0) {
            const ks_sim_pod *p = &r->pods[w->first_pending];
            why = ks_xasprintf("%s: %s", ks_str(p->input->name), p->message ? p->message : ks_sim_state_name(p->state));
        } else if (w->first_not_created) {
            why = ks_xasprintf("%s: not created (OrderedReady: waits for the previous ordinal to run)",
                               ks_str(w->first_not_created->name));
        }
        if (w->rollout && (w->rollout_old_left || w->rollout_new < w->rollout_total)) {
            /* a rollout that could not finish: say where it stopped */
            char *stuck = ks_xasprintf("%s rollout stuck: %u/%u new pods running, %u old left%s%s",
                                       w->rollout_strategy ? w->rollout_strategy : "RollingUpdate", w->rollout_new,
                                       w->rollout_total, w->rollout_old_left, why ? "; " : "", why ? why : "");
            free(why);
            why = stuck;
        }
        table_row(&t, (const char *const[]){name, ks_workload_kind_name(w->workload->kind), pods, why ? why : ""});
        free(name);
        free(pods);
        free(why);
    }
    table_print(out, &t, "");
    fputc('\n', out);
}

void ks_report_table(FILE *out, const ks_sim_result *r, bool explain) {
    if (r->nworkloads) workload_rows(out, r);
    table t = {.ncols = 5};
    table_row(&t, (const char *const[]){"NAMESPACE", "NAME", "NODE", "STATUS", "MESSAGE"});
    for (uint32_t i = 0; i < r->npods; i++) pod_rows(&t, &r->pods[i]);
    for (uint32_t i = 0; i < r->nvictims; i++) pod_rows(&t, &r->victims[i]);
    table_print(out, &t, "");

    uint32_t counts[5] = {0};
    for (uint32_t i = 0; i < r->npods; i++) counts[r->pods[i].state]++;
    fprintf(out, "\n%u pending pods: %u scheduled, %u unschedulable, %u gated; %u preempted.\n\n",
            r->npods, counts[KS_SIM_SCHEDULED], counts[KS_SIM_UNSCHEDULABLE] + counts[KS_SIM_PENDING],
            counts[KS_SIM_GATED], r->nvictims);
    node_summary(out, r->cluster);

    if (!explain) return;
    for (uint32_t i = 0; i < r->npods; i++)
        for (uint32_t j = 0; j < r->pods[i].nexplain; j++)
            explain_attempt(out, &r->pods[i], &r->pods[i].explain[j], r->cluster);
}
