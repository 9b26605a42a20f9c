#include "sim/replay_report.h"
#include "util/clock.h"
#include "util/xalloc.h"

#include <string.h>

static double secs(int64_t ns) { return (double)ns / 1e9; }

/* an offset as a Go duration, "-" when it never happened */
static const char *dur(char *buf, int n, int64_t start, int64_t t) {
    if (t < 0) return "-";
    ks_format_duration(t - start, buf, n);
    return buf;
}

void ks_tl_record_header(FILE *f, ks_tl_out how, bool config) {
    if (how == KS_TL_OUT_TABLE)
        fprintf(f, "%s%-32s %-10s %-10s %-20s %-10s %8s %-10s %s\n", config ? "CONFIG       " : "", "POD", "ARRIVAL",
                "SCHEDULED", "NODE", "DEPARTURE", "ATTEMPTS", "PENDING", "STATE");
    else if (how == KS_TL_OUT_CSV)
        fprintf(f, "%spod,arrival_s,scheduled_s,node,departure_s,attempts,pending_s,state,recorded_node,recorded_feasible\n",
                config ? "config," : "");
}

json_t *ks_tl_record_json(int64_t start, const ks_tl_record *r) {
    json_t *o = json_object();
    json_object_set_new(o, "pod", json_string(r->name));
    json_object_set_new(o, "arrival", json_real(secs(r->arrival - start)));
    json_object_set_new(o, "scheduled", r->scheduled >= 0 ? json_real(secs(r->scheduled - start)) : json_null());
    json_object_set_new(o, "node", r->node ? json_string(r->node) : json_null());
    json_object_set_new(o, "departure", r->departure >= 0 ? json_real(secs(r->departure - start)) : json_null());
    json_object_set_new(o, "attempts", json_integer(r->attempts));
    json_object_set_new(o, "pending", json_real(secs(r->pending_ns)));
    json_object_set_new(o, "state", json_string(ks_tl_pod_state_name(r->state)));
    if (r->recorded_node) {
        json_object_set_new(o, "recordedNode", json_string(r->recorded_node));
        if (r->recorded_feasible >= 0) json_object_set_new(o, "recordedFeasible", json_boolean(r->recorded_feasible));
        if (r->recorded_reason) json_object_set_new(o, "recordedRejection", json_string(r->recorded_reason));
    }
    return o;
}

void ks_tl_record_print(FILE *f, ks_tl_out how, const char *config, int64_t start, const ks_tl_record *r) {
    char a[32], s[32], d[32], p[32];
    if (how == KS_TL_OUT_TABLE) {
        ks_format_duration(r->pending_ns, p, sizeof(p));
        if (config) fprintf(f, "%-12s ", config);
        fprintf(f, "%-32s %-10s %-10s %-20s %-10s %8u %-10s %s", r->name, dur(a, sizeof(a), start, r->arrival),
                dur(s, sizeof(s), start, r->scheduled), r->node ? r->node : "-", dur(d, sizeof(d), start, r->departure),
                r->attempts, p, ks_tl_pod_state_name(r->state));
        /* audit logs: the recorded scheduler's node, and ksched's verdict on it */
        if (r->recorded_node)
            fprintf(f, "%*srecorded %s%s", 10 - (int)strlen(ks_tl_pod_state_name(r->state)), "", r->recorded_node,
                    r->recorded_feasible == 0 ? " (infeasible)" : "");
        fputc('\n', f);
    } else if (how == KS_TL_OUT_CSV) {
        if (config) fprintf(f, "%s,", config);
        fprintf(f, "%s,%.3f,", r->name, secs(r->arrival - start));
        if (r->scheduled >= 0) fprintf(f, "%.3f", secs(r->scheduled - start));
        fprintf(f, ",%s,", r->node ? r->node : "");
        if (r->departure >= 0) fprintf(f, "%.3f", secs(r->departure - start));
        fprintf(f, ",%u,%.3f,%s,%s,%s\n", r->attempts, secs(r->pending_ns), ks_tl_pod_state_name(r->state),
                r->recorded_node ? r->recorded_node : "",
                r->recorded_feasible < 0 ? "" : r->recorded_feasible ? "true" : "false");
    } else {
        json_t *o = ks_tl_record_json(start, r);
        if (config) json_object_set_new(o, "config", json_string(config));
        char *txt = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fprintf(f, "%s\n", txt);
        free(txt);
        json_decref(o);
    }
}

/* ---- summaries -------------------------------------------------------------------- */

/* A resource amount as people read it: cores, GiB, counts. */
static void amount(char *buf, size_t n, const char *res, int64_t v) {
    if (!strcmp(res, "cpu")) snprintf(buf, n, "%.1f cores", (double)v / 1000);
    else if (!strcmp(res, "memory")) snprintf(buf, n, "%.1f GiB", (double)v / (1024.0 * 1024 * 1024));
    else snprintf(buf, n, "%lld", (long long)v);
}

typedef struct row {
    char label[64];
    char cell[8][48];
} row;

void ks_tl_summary_table(FILE *f, size_t n, const char *const *names, const ks_tl_result *const *results) {
    if (n > 8) n = 8;
    row rows[64];
    size_t nr = 0;
#define ROW(lbl, ...)                                                                  \
    do {                                                                               \
        snprintf(rows[nr].label, sizeof(rows[nr].label), "%s", lbl);                   \
        for (size_t i = 0; i < n; i++) {                                               \
            const ks_tl_summary *s = &results[i]->summary;                             \
            (void)s;                                                                   \
            snprintf(rows[nr].cell[i], sizeof(rows[nr].cell[i]), __VA_ARGS__);         \
        }                                                                              \
        nr++;                                                                          \
    } while (0)
    char b1[32], b2[32];
    ROW("simulated time", "%s", (ks_format_duration(s->end - s->start, b1, sizeof(b1)), b1));
    ROW("pods arrived", "%llu", (unsigned long long)s->arrived);
    ROW("pods scheduled", "%llu", (unsigned long long)s->scheduled);
    ROW("never scheduled", "%llu", (unsigned long long)s->never_scheduled);
    ROW("preempted", "%llu", (unsigned long long)s->preempted);
    ROW("evicted", "%llu", (unsigned long long)s->evicted);
    ROW("finished", "%llu", (unsigned long long)s->finished);
    ROW("deleted", "%llu", (unsigned long long)s->deleted);
    ROW("scheduling attempts", "%llu", (unsigned long long)s->attempts);
    ROW("pending p50", "%s", (ks_format_duration(s->pending_p50, b1, sizeof(b1)), b1));
    ROW("pending p90", "%s", (ks_format_duration(s->pending_p90, b1, sizeof(b1)), b1));
    ROW("pending p99", "%s", (ks_format_duration(s->pending_p99, b1, sizeof(b1)), b1));
    ROW("pending max", "%s", (ks_format_duration(s->pending_max, b1, sizeof(b1)), b1));
    /* resources: those of the first run (the same nodes in every run) */
    const ks_tl_summary *s0 = &results[0]->summary;
    for (uint32_t k = 0; k < s0->nres && nr < 60; k++) {
        char lbl[64];
        snprintf(lbl, sizeof(lbl), "%s peak", s0->res_names[k]);
        ROW(lbl, "%.1f%% (%s)", 100 * s->peak_alloc[k],
            (amount(b2, sizeof(b2), s0->res_names[k], k < s->nres ? s->peak_allocated[k] : 0), b2));
        snprintf(lbl, sizeof(lbl), "%s mean", s0->res_names[k]);
        ROW(lbl, "%.1f%%", 100 * (k < s->nres ? s->mean_alloc[k] : 0));
    }
    bool audit = false;
    for (size_t i = 0; i < n; i++)
        if (results[i]->summary.recorded) audit = true;
    if (audit) {
        ROW("recorded bindings", "%llu", (unsigned long long)s->recorded);
        ROW("same node as recorded", "%llu (%.1f%%)", (unsigned long long)s->same_node,
            s->recorded ? 100.0 * (double)s->same_node / (double)s->recorded : 0);
        ROW("recorded node infeasible", "%llu", (unsigned long long)s->recorded_infeasible);
    }
#undef ROW
    size_t w[8] = {0};
    for (size_t i = 0; i < n; i++) {
        w[i] = strlen(names[i]);
        for (size_t r = 0; r < nr; r++)
            if (strlen(rows[r].cell[i]) > w[i]) w[i] = strlen(rows[r].cell[i]);
    }
    /* the last column unpadded: no trailing blanks */
    fprintf(f, "%-26s", "SUMMARY");
    for (size_t i = 0; i < n; i++) fprintf(f, "  %-*s", i + 1 < n ? (int)w[i] : 0, names[i]);
    fputc('\n', f);
    for (size_t r = 0; r < nr; r++) {
        fprintf(f, "%-26s", rows[r].label);
        for (size_t i = 0; i < n; i++) fprintf(f, "  %-*s", i + 1 < n ? (int)w[i] : 0, rows[r].cell[i]);
        fputc('\n', f);
    }
}

json_t *ks_tl_summary_json(const ks_tl_summary *s) {
    json_t *o = json_object();
    json_object_set_new(o, "simulatedSeconds", json_real(secs(s->end - s->start)));
    json_object_set_new(o, "arrived", json_integer((json_int_t)s->arrived));
    json_object_set_new(o, "scheduled", json_integer((json_int_t)s->scheduled));
    json_object_set_new(o, "neverScheduled", json_integer((json_int_t)s->never_scheduled));
    json_object_set_new(o, "preempted", json_integer((json_int_t)s->preempted));
    json_object_set_new(o, "evicted", json_integer((json_int_t)s->evicted));
    json_object_set_new(o, "finished", json_integer((json_int_t)s->finished));
    json_object_set_new(o, "deleted", json_integer((json_int_t)s->deleted));
    json_object_set_new(o, "attempts", json_integer((json_int_t)s->attempts));
    json_object_set_new(o, "events", json_integer((json_int_t)s->events));
    json_t *p = json_object();
    json_object_set_new(p, "p50", json_real(secs(s->pending_p50)));
    json_object_set_new(p, "p90", json_real(secs(s->pending_p90)));
    json_object_set_new(p, "p99", json_real(secs(s->pending_p99)));
    json_object_set_new(p, "max", json_real(secs(s->pending_max)));
    json_object_set_new(p, "exact", json_boolean(s->pending_exact));
    json_object_set_new(o, "pendingSeconds", p);
    json_t *res = json_object();
    for (uint32_t i = 0; i < s->nres; i++) {
        json_t *r = json_object();
        json_object_set_new(r, "peak", json_real(s->peak_alloc[i]));
        json_object_set_new(r, "peakAllocated", json_integer(s->peak_allocated[i]));
        json_object_set_new(r, "mean", json_real(s->mean_alloc[i]));
        json_object_set_new(res, s->res_names[i], r);
    }
    json_object_set_new(o, "allocation", res);
    if (s->recorded) {
        json_t *a = json_object();
        json_object_set_new(a, "recorded", json_integer((json_int_t)s->recorded));
        json_object_set_new(a, "sameNode", json_integer((json_int_t)s->same_node));
        json_object_set_new(a, "recordedInfeasible", json_integer((json_int_t)s->recorded_infeasible));
        json_object_set_new(o, "audit", a);
    }
    json_object_set_new(o, "bounded", json_boolean(s->bounded));
    return o;
}

void ks_tl_disagreements_table(FILE *f, const char *config, const ks_tl_result *r) {
    if (!r->summary.recorded_infeasible) return;
    fprintf(f, "\nRecorded nodes ksched finds infeasible%s%s (a bug or an event missing from the log):\n",
            config ? " under " : "", config ? config : "");
    for (size_t i = 0; i < r->ndisagreements; i++) {
        const ks_tl_disagreement *d = &r->disagreements[i];
        fprintf(f, "  %s on %s: %s\n", d->pod, d->node, d->reason);
    }
    if (r->summary.recorded_infeasible > r->ndisagreements)
        fprintf(f, "  ... and %llu more\n", (unsigned long long)(r->summary.recorded_infeasible - r->ndisagreements));
}

json_t *ks_tl_disagreements_json(const ks_tl_result *r) {
    json_t *a = json_array();
    for (size_t i = 0; i < r->ndisagreements; i++) {
        const ks_tl_disagreement *d = &r->disagreements[i];
        json_t *o = json_object();
        json_object_set_new(o, "pod", json_string(d->pod));
        json_object_set_new(o, "recordedNode", json_string(d->node));
        json_object_set_new(o, "rejection", json_string(d->reason));
        json_array_append_new(a, o);
    }
    return a;
}

/* ---- series ---------------------------------------------------------------------------- */

void ks_tl_series_csv(FILE *f, const char *config, bool header, const ks_tl_result *r) {
    const ks_tl_summary *s = &r->summary;
    if (header) {
        fprintf(f, "%st_s,nodes,schedulable_nodes,pending,pending_long,running,arrived,scheduled,evictions,preemptions,"
                   "devices_allocated,devices",
                config ? "config," : "");
        for (uint32_t i = 0; i < s->nres; i++) fprintf(f, ",allocated_%s,allocatable_%s", s->res_names[i], s->res_names[i]);
        for (uint32_t i = 0; i < r->nextra; i++) fprintf(f, ",%s", r->extra_names[i]);
        fputc('\n', f);
    }
    for (size_t k = 0; k < r->nsamples; k++) {
        const ks_tl_sample *sp = &r->samples[k];
        if (config) fprintf(f, "%s,", config);
        fprintf(f, "%.3f,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u", secs(sp->t - s->start), sp->nodes, sp->schedulable_nodes,
                sp->pending, sp->pending_long, sp->running, sp->arrived, sp->scheduled, sp->evictions, sp->preemptions,
                sp->devices_allocated, sp->devices);
        for (uint32_t i = 0; i < s->nres; i++)
            fprintf(f, ",%lld,%lld", (long long)sp->allocated[i], (long long)sp->allocatable[i]);
        for (uint32_t i = 0; i < r->nextra; i++) fprintf(f, ",%g", sp->extra ? sp->extra[i] : 0.0);
        fputc('\n', f);
    }
}

json_t *ks_tl_series_json(const ks_tl_result *r) {
    const ks_tl_summary *s = &r->summary;
    json_t *arr = json_array();
    for (size_t k = 0; k < r->nsamples; k++) {
        const ks_tl_sample *sp = &r->samples[k];
        json_t *o = json_object();
        json_object_set_new(o, "t", json_real(secs(sp->t - s->start)));
        json_object_set_new(o, "nodes", json_integer(sp->nodes));
        json_object_set_new(o, "schedulableNodes", json_integer(sp->schedulable_nodes));
        json_object_set_new(o, "pending", json_integer(sp->pending));
        json_object_set_new(o, "pendingLong", json_integer(sp->pending_long));
        json_object_set_new(o, "running", json_integer(sp->running));
        json_object_set_new(o, "arrived", json_integer(sp->arrived));
        json_object_set_new(o, "scheduled", json_integer(sp->scheduled));
        json_object_set_new(o, "evictions", json_integer(sp->evictions));
        json_object_set_new(o, "preemptions", json_integer(sp->preemptions));
        json_object_set_new(o, "devicesAllocated", json_integer(sp->devices_allocated));
        json_object_set_new(o, "devices", json_integer(sp->devices));
        json_t *al = json_object(), *ac = json_object();
        for (uint32_t i = 0; i < s->nres; i++) {
            json_object_set_new(al, s->res_names[i], json_integer(sp->allocated[i]));
            json_object_set_new(ac, s->res_names[i], json_integer(sp->allocatable[i]));
        }
        json_object_set_new(o, "allocated", al);
        json_object_set_new(o, "allocatable", ac);
        for (uint32_t i = 0; i < r->nextra; i++)
            json_object_set_new(o, r->extra_names[i], json_real(sp->extra ? sp->extra[i] : 0.0));
        json_array_append_new(arr, o);
    }
    return arr;
}
