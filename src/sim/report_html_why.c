/* -o html for why and for simulate --compare: a pod's reasons, node
 * classes and verified fixes (also on simulate pages); two configurations'
 * aggregates, the pods they place differently with the per-plugin score
 * deltas, and the pods one of them leaves pending (also on replay pages). */
#include "sim/report_html_page.h"

#include <stdio.h>
#include <stdlib.h>

static void write_fix(html_page *pg, const ks_why_fix *f) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"changes\":[");
    for (uint32_t i = 0; i < f->nchanges; i++) {
        const ks_why_change *c = &f->changes[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"kind\":");
        ks_pj_str(b, ks_why_change_kind_name(c->kind));
        ks_pj_key(b, "object", false);
        ks_pj_str(b, c->object);
        ks_pj_key(b, "ns", false);
        ks_pj_str(b, c->ns);
        ks_pj_key(b, "name", false);
        ks_pj_str(b, c->name);
        ks_pj_key(b, "like", false);
        ks_pj_str(b, c->like);
        ks_pj_key(b, "summary", false);
        ks_pj_str(b, c->summary);
        ks_pj_key(b, "patch", false);
        ks_pj_str(b, c->patch);
        ks_pj_key(b, "command", false);
        ks_pj_str(b, c->command);
        ks_sb_putc(b, '}');
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "node", false);
    ks_pj_str(b, f->node);
    ks_pj_key(b, "harm", false);
    ks_pj_i64(b, f->harm);
    ks_pj_key(b, "unblocks", false);
    ks_pj_i64(b, f->unblocks);
    ks_pj_key(b, "effects", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < f->neffects; i++) {
        const ks_why_effect *e = &f->effects[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"kind\":");
        ks_pj_str(b, ks_why_effect_kind_name(e->kind));
        ks_pj_key(b, "pod", false);
        ks_pj_str(b, e->pod);
        ks_pj_key(b, "before", false);
        ks_pj_str(b, e->before);
        ks_pj_key(b, "after", false);
        ks_pj_str(b, e->after);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "]}");
}

/* "why": per pod its reasons, node classes and verified fixes; with
 * --all the root-cause groups and the cluster-side fixes. */
void html_write_why(html_page *pg, const ks_why_result *r) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"pods\":[");
    for (uint32_t i = 0; i < r->npods; i++) {
        const ks_why_pod *p = &r->pods[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"pod\":");
        ks_pj_str(b, p->pod);
        ks_pj_key(b, "s", false);
        ks_pj_str(b, ks_sim_state_name(p->state));
        ks_pj_key(b, "node", false);
        ks_pj_str(b, p->node);
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, p->message);
        ks_pj_key(b, "preemption", false);
        ks_pj_str(b, p->preemption);
        ks_pj_key(b, "h", false);
        ks_sb_putc(b, '[');
        for (uint32_t k = 0; k < p->nreasons; k++) {
            if (k) ks_sb_putc(b, ',');
            ks_sb_putc(b, '[');
            ks_pj_i64(b, p->reasons[k].nodes);
            ks_sb_putc(b, ',');
            html_put_strref(pg, p->reasons[k].text);
            ks_sb_putc(b, ']');
        }
        ks_sb_puts(b, "],\"classes\":[");
        for (uint32_t k = 0; k < p->nclasses; k++) {
            const ks_why_class *c = &p->classes[k];
            if (k) ks_sb_putc(b, ',');
            ks_sb_puts(b, "{\"plugin\":");
            ks_pj_str(b, c->plugin);
            ks_pj_key(b, "reasons", false);
            html_write_str_list(b, c->reasons, c->nreasons);
            ks_pj_key(b, "nodes", false);
            html_write_str_list(b, c->nodes, c->nnodes);
            ks_pj_key(b, "details", false);
            html_write_str_list(b, c->details, c->ndetails);
            ks_sb_putc(b, '}');
        }
        ks_sb_puts(b, "],\"fixes\":[");
        for (uint32_t k = 0; k < p->nfixes; k++) {
            if (k) ks_sb_putc(b, ',');
            write_fix(pg, &p->fixes[k]);
        }
        ks_sb_putc(b, ']');
        ks_pj_key(b, "pairs", false);
        ks_sb_puts(b, p->pairs ? "true" : "false");
        ks_pj_key(b, "tried", false);
        ks_pj_i64(b, p->tried);
        ks_pj_key(b, "cause", false);
        ks_pj_str(b, p->cause);
        ks_pj_key(b, "group", false);
        ks_pj_i64(b, p->group);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "],\"groups\":[");
    for (uint32_t i = 0; i < r->ngroups; i++) {
        const ks_why_group *g = &r->groups[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"cause\":");
        ks_pj_str(b, g->cause);
        ks_pj_key(b, "pods", false);
        html_write_str_list(b, g->pods, g->npods);
        ks_pj_key(b, "rep", false);
        ks_pj_i64(b, g->representative);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "],\"clusterFixes\":[");
    for (uint32_t i = 0; i < r->ncluster_fixes; i++) {
        if (i) ks_sb_putc(b, ',');
        write_fix(pg, &r->cluster_fixes[i]);
    }
    ks_sb_puts(b, "],\"runs\":");
    ks_pj_i64(b, r->runs);
    ks_sb_putc(b, '}');
}

static void write_compare_pods(html_page *pg, const ks_compare_pod *v, uint32_t n) {
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        const ks_compare_pod *p = &v[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"pod\":");
        ks_pj_str(b, p->pod);
        ks_pj_key(b, "s", false);
        ks_sb_putc(b, '[');
        ks_pj_str(b, ks_sim_state_name(p->state[0]));
        ks_sb_putc(b, ',');
        ks_pj_str(b, ks_sim_state_name(p->state[1]));
        ks_sb_puts(b, "],\"node\":[");
        html_write_node_ref(pg, p->node[0]);
        ks_sb_putc(b, ',');
        html_write_node_ref(pg, p->node[1]);
        ks_sb_puts(b, "],\"msg\":[");
        ks_pj_str(b, p->message[0]);
        ks_sb_putc(b, ',');
        ks_pj_str(b, p->message[1]);
        ks_sb_puts(b, "],\"why\":[");
        for (int s = 0; s < 2; s++) {
            const ks_compare_side_why *w = &p->why[s];
            if (s) ks_sb_putc(b, ',');
            ks_sb_puts(b, "{\"otherScored\":");
            ks_sb_puts(b, w->other_scored ? "true" : "false");
            ks_pj_key(b, "otherVerdict", false);
            ks_pj_str(b, w->other_verdict);
            ks_pj_key(b, "total", false);
            ks_pj_i64(b, w->total);
            ks_pj_key(b, "deltas", false);
            ks_sb_putc(b, '[');
            for (uint32_t k = 0; k < w->ndeltas; k++) {
                if (k) ks_sb_putc(b, ',');
                ks_sb_putc(b, '[');
                html_put_strref(pg, w->deltas[k].plugin);
                ks_sb_putc(b, ',');
                ks_pj_i64(b, w->deltas[k].delta);
                ks_sb_putc(b, ']');
            }
            ks_sb_puts(b, "]}");
        }
        ks_sb_puts(b, "]}");
    }
    ks_sb_putc(b, ']');
}

void html_write_compare(html_page *pg, const ks_compare_result *r) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"sides\":[");
    for (int s = 0; s < 2; s++) {
        const ks_compare_side *d = &r->side[s];
        if (s) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"label\":");
        ks_pj_str(b, d->label);
        ks_pj_key(b, "scheduled", false);
        ks_pj_i64(b, d->scheduled);
        ks_pj_key(b, "unschedulable", false);
        ks_pj_i64(b, d->unschedulable);
        ks_pj_key(b, "gated", false);
        ks_pj_i64(b, d->gated);
        ks_pj_key(b, "preempted", false);
        ks_pj_i64(b, d->preempted);
        ks_pj_key(b, "nodesUsed", false);
        ks_pj_i64(b, d->nodes_used);
        ks_pj_key(b, "attempts", false);
        ks_pj_i64(b, (int64_t)d->attempts);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "],\"pending\":");
    ks_pj_i64(b, r->npending);
    ks_pj_key(b, "moved", false);
    write_compare_pods(pg, r->moved, r->nmoved);
    ks_pj_key(b, "oneSide", false);
    write_compare_pods(pg, r->one_side, r->none_side);
    ks_pj_key(b, "resources", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nresources; i++) {
        const ks_compare_resource *x = &r->resources[i];
        char buf[160];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"name\":");
        ks_pj_str(b, x->name);
        snprintf(buf, sizeof buf, ",\"mean\":[%.2f,%.2f],\"sd\":[%.2f,%.2f]}", x->mean[0], x->mean[1], x->sd[0],
                 x->sd[1]);
        ks_sb_puts(b, buf);
    }
    ks_sb_putc(b, ']');
    ks_sb_putc(b, '}');
}

bool ks_report_html_why(FILE *out, const ks_cluster *cluster, const ks_why_result *r, const ks_report_inputs *in) {
    html_page pg;
    html_page_init(&pg, cluster);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"why\",\"inputs\":");
    html_write_inputs(&pg, in);
    html_write_cluster(&pg);
    ks_pj_key(b, "why", false);
    html_write_why(&pg, r);
    html_finish_data(&pg);
    bool ok = html_write_page(out, &pg, "ksched why");
    html_page_free(&pg);
    return ok;
}

bool ks_report_html_compare(FILE *out, const ks_cluster *cluster, const ks_compare_result *r,
                            const char *compare_path, const ks_report_inputs *in) {
    html_page pg;
    html_page_init(&pg, cluster);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"compare\",\"inputs\":");
    html_write_inputs(&pg, in);
    ks_pj_key(b, "compareConfig", false);
    ks_pj_str(b, compare_path);
    if (compare_path) {
        char *text = html_read_small_file(compare_path);
        ks_pj_key(b, "compareConfigText", false);
        ks_pj_str(b, text);
        free(text);
    }
    html_write_cluster(&pg);
    ks_pj_key(b, "compare", false);
    html_write_compare(&pg, r);
    html_finish_data(&pg);
    bool ok = html_write_page(out, &pg, "ksched compare");
    html_page_free(&pg);
    return ok;
}

