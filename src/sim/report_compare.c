/* Printing `simulate --compare`: the decision diff as text, and as one
 * JSON/YAML document (shape in docs/simulate.md). */
#include "sim/compare.h"
#include "sim/report.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void print_why(FILE *out, const char *label, const char *own, const char *other, const ks_compare_side_why *w) {
    if (!w->other_scored) {
        fprintf(out, "      under %s: %s, because %s: %s\n", label, own, other, w->other_verdict);
        return;
    }
    fprintf(out, "      under %s: %s beats %s by %lld:", label, own, other, (long long)w->total);
    if (!w->ndeltas) fputs(" equal scores (tie broken)", out);
    for (uint32_t i = 0; i < w->ndeltas; i++)
        fprintf(out, "%s %s %+lld", i ? "," : "", w->deltas[i].plugin, (long long)w->deltas[i].delta);
    fputc('\n', out);
}

/* Pods listed in the table; -o json has every one. */
#define KS_COMPARE_TABLE_PODS 50

/* Per side, how often each plugin had the largest weighted delta in
 * favour of the chosen node: which plugins made the configurations
 * decide differently. */
static void print_deciders(FILE *out, const ks_compare_result *r) {
    for (int k = 0; k < 2; k++) {
        const char *names[64];
        uint32_t counts[64], n = 0, filtered = 0;
        for (uint32_t i = 0; i < r->nmoved; i++) {
            const ks_compare_side_why *w = &r->moved[i].why[k];
            if (!w->other_scored) {
                filtered++;
                continue;
            }
            /* deltas are sorted by |delta|: the first positive one decided */
            const char *top = NULL;
            for (uint32_t j = 0; j < w->ndeltas && !top; j++)
                if (w->deltas[j].delta > 0) top = w->deltas[j].plugin;
            if (!top) top = "(tie)";
            uint32_t q = 0;
            while (q < n && strcmp(names[q], top) != 0) q++;
            if (q == n && n < 64) {
                names[n] = top;
                counts[n++] = 0;
            }
            if (q < n) counts[q]++;
        }
        fprintf(out, "  under %s, the largest delta for the chosen node came from:", k ? "B" : "A");
        for (uint32_t q = 0; q < n; q++) fprintf(out, "%s %s %u", q ? "," : "", names[q], counts[q]);
        if (filtered) fprintf(out, "%s other node filtered or not scored %u", n ? "," : "", filtered);
        fputc('\n', out);
    }
}

void ks_compare_report_table(FILE *out, const ks_compare_result *r) {
    const char *la = r->side[0].label, *lb = r->side[1].label;
    fprintf(out, "A: %s\nB: %s\n%u pod(s) to place: %u placed differently, %u scheduled under one only\n", la, lb,
            r->npending, r->nmoved, r->none_side);
    if (r->nmoved) {
        fprintf(out, "\nPlaced differently (weighted score deltas: the chosen node minus the other one):\n");
        for (uint32_t i = 0; i < r->nmoved && i < KS_COMPARE_TABLE_PODS; i++) {
            const ks_compare_pod *p = &r->moved[i];
            fprintf(out, "  %s: A %s, B %s\n", p->pod, p->node[0], p->node[1]);
            print_why(out, "A", p->node[0], p->node[1], &p->why[0]);
            print_why(out, "B", p->node[1], p->node[0], &p->why[1]);
        }
        if (r->nmoved > KS_COMPARE_TABLE_PODS)
            fprintf(out, "  ... and %u more (-o json lists them all)\n", r->nmoved - KS_COMPARE_TABLE_PODS);
        print_deciders(out, r);
    }
    if (r->none_side) {
        fprintf(out, "\nScheduled under one configuration only:\n");
        for (uint32_t i = 0; i < r->none_side; i++) {
            const ks_compare_pod *p = &r->one_side[i];
            fprintf(out, "  %s: A %s, B %s\n", p->pod, p->node[0] ? p->node[0] : ks_sim_state_name(p->state[0]),
                    p->node[1] ? p->node[1] : ks_sim_state_name(p->state[1]));
            for (int k = 0; k < 2; k++)
                if (p->message[k]) fprintf(out, "      under %s: %s\n", k ? "B" : "A", p->message[k]);
        }
    }
    fprintf(out, "\n%-26s %-22s %s\n", "", "A", "B");
    fprintf(out, "%-26s %-22u %u\n", "scheduled", r->side[0].scheduled, r->side[1].scheduled);
    fprintf(out, "%-26s %-22u %u\n", "unschedulable", r->side[0].unschedulable, r->side[1].unschedulable);
    fprintf(out, "%-26s %-22u %u\n", "gated", r->side[0].gated, r->side[1].gated);
    fprintf(out, "%-26s %-22u %u\n", "preempted", r->side[0].preempted, r->side[1].preempted);
    fprintf(out, "%-26s %-22u %u\n", "nodes used", r->side[0].nodes_used, r->side[1].nodes_used);
    fprintf(out, "%-26s %-22llu %llu\n", "attempts", (unsigned long long)r->side[0].attempts,
            (unsigned long long)r->side[1].attempts);
    for (uint32_t i = 0; i < r->nresources; i++) {
        const ks_compare_resource *c = &r->resources[i];
        char name[96], a[40], b[40];
        snprintf(name, sizeof(name), "%s allocated", c->name);
        snprintf(a, sizeof(a), "mean %.1f%% sd %.1f%%", c->mean[0], c->sd[0]);
        snprintf(b, sizeof(b), "mean %.1f%% sd %.1f%%", c->mean[1], c->sd[1]);
        fprintf(out, "%-26s %-22s %s\n", name, a, b);
    }
}

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *why_json(const ks_compare_side_why *w) {
    if (!w->other_scored) return json_pack("{s:b, s:s}", "otherScored", 0, "otherVerdict", w->other_verdict);
    json_t *d = json_object();
    for (uint32_t i = 0; i < w->ndeltas; i++) json_object_set_new(d, w->deltas[i].plugin, json_integer(w->deltas[i].delta));
    return json_pack("{s:b, s:I, s:o}", "otherScored", 1, "total", (json_int_t)w->total, "deltas", d);
}

static json_t *pod_json(const ks_compare_pod *p, bool why) {
    json_t *j = json_pack("{s:s}", "pod", p->pod);
    const char *k2[2] = {"a", "b"};
    for (int k = 0; k < 2; k++) {
        json_t *s = json_pack("{s:s, s:o, s:o}", "state", ks_sim_state_name(p->state[k]), "node", jstr(p->node[k]),
                              "message", jstr(p->message[k]));
        if (why) json_object_set_new(s, "why", why_json(&p->why[k]));
        json_object_set_new(j, k2[k], s);
    }
    return j;
}

json_t *ks_compare_json(const ks_compare_result *r) {
    json_t *sides = json_array();
    for (int k = 0; k < 2; k++) {
        const ks_compare_side *s = &r->side[k];
        json_t *res = json_object();
        for (uint32_t i = 0; i < r->nresources; i++)
            json_object_set_new(res, r->resources[i].name,
                                json_pack("{s:f, s:f}", "meanPercent", r->resources[i].mean[k], "sdPercent",
                                          r->resources[i].sd[k]));
        json_array_append_new(sides, json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:I, s:o}", "config", s->label,
                                               "scheduled", (json_int_t)s->scheduled, "unschedulable",
                                               (json_int_t)s->unschedulable, "gated", (json_int_t)s->gated,
                                               "preempted", (json_int_t)s->preempted, "nodesUsed",
                                               (json_int_t)s->nodes_used, "attempts", (json_int_t)s->attempts,
                                               "allocation", res));
    }
    json_t *moved = json_array(), *one = json_array();
    for (uint32_t i = 0; i < r->nmoved; i++) json_array_append_new(moved, pod_json(&r->moved[i], true));
    for (uint32_t i = 0; i < r->none_side; i++) json_array_append_new(one, pod_json(&r->one_side[i], false));
    return json_pack("{s:s, s:s, s:i, s:o, s:o, s:o}", "apiVersion", "ksched.io/v1alpha1", "kind", "CompareResult",
                     "pending", (json_int_t)r->npending, "sides", sides, "moved", moved, "scheduledOnOneSide", one);
}

void ks_compare_report_json(FILE *out, const ks_compare_result *r, bool yaml) {
    ks_report_print_doc(out, ks_compare_json(r), "compare", yaml);
}
