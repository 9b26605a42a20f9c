/* Printing `ksched why`: the text a person reads, and one JSON/YAML
 * document for tools (shape in docs/why.md). */
#include "sim/report.h"
#include "sim/why.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void print_effects(FILE *out, const ks_why_fix *f, const char *indent) {
    if (!f->neffects) {
        fprintf(out, "%sno other pod affected\n", indent);
        return;
    }
    /* Other pods the change schedules too: one line. */
    uint32_t also = 0;
    for (uint32_t i = 0; i < f->neffects; i++) {
        const ks_why_effect *e = &f->effects[i];
        if (e->kind != KS_WHY_ALSO_SCHEDULED) continue;
        if (also == 0) fprintf(out, "%sschedules other pending pods too: %s (%s)", indent, e->pod, e->after);
        else if (also < 5) fprintf(out, ", %s (%s)", e->pod, e->after);
        also++;
    }
    if (also > 5) fprintf(out, " and %u more", also - 5);
    if (also) fputc('\n', out);
    for (uint32_t i = 0; i < f->neffects; i++) {
        const ks_why_effect *e = &f->effects[i];
        switch (e->kind) {
        case KS_WHY_MOVED: fprintf(out, "%s%s lands on %s instead of %s\n", indent, e->pod, e->after, e->before); break;
        case KS_WHY_NOW_PENDING: fprintf(out, "%s%s stays pending (was placed on %s)\n", indent, e->pod, e->before); break;
        case KS_WHY_ALSO_SCHEDULED: break;
        case KS_WHY_PREEMPTED: fprintf(out, "%s%s is preempted on %s\n", indent, e->pod, e->before); break;
        case KS_WHY_REPLACED:
            if (e->after) fprintf(out, "%s%s (recreated) lands on %s\n", indent, e->pod, e->after);
            else fprintf(out, "%s%s (recreated) stays pending\n", indent, e->pod);
            break;
        }
    }
}

/* A fix made of the same change on many pods (a template change). */
static bool same_kind_on_pods(const ks_why_fix *f) {
    if (f->nchanges < 3) return false;
    for (uint32_t j = 1; j < f->nchanges; j++)
        if (f->changes[j].kind != f->changes[0].kind || strcmp(f->changes[j].object, "Pod")) return false;
    return true;
}

/* A change's command was already given by an earlier change of the fix
 * (pods of one workload: one template patch makes all of them). */
static bool command_before(const ks_why_fix *f, uint32_t j) {
    for (uint32_t k = 0; k < j; k++)
        if (f->changes[k].command && !strcmp(f->changes[k].command, f->changes[j].command)) return true;
    return false;
}

static void print_fixes(FILE *out, const ks_why_fix *v, uint32_t n, bool unblocks) {
    for (uint32_t i = 0; i < n; i++) {
        const ks_why_fix *f = &v[i];
        bool many = same_kind_on_pods(f);
        uint32_t shown = many ? 1 : f->nchanges;
        for (uint32_t j = 0; j < shown; j++) {
            if (j) fprintf(out, "      + %s\n", f->changes[j].summary);
            else fprintf(out, "  %2u. %s\n", i + 1, f->changes[j].summary);
        }
        if (many) {
            fprintf(out, "      + the same on %u other pods:", f->nchanges - 1);
            for (uint32_t j = 1; j < f->nchanges && j <= 5; j++) fprintf(out, " %s/%s", f->changes[j].ns, f->changes[j].name);
            if (f->nchanges > 6) fprintf(out, " and %u more", f->nchanges - 6);
            fputc('\n', out);
        }
        if (unblocks) fprintf(out, "      unblocks %u pending pod(s)\n", f->unblocks);
        else fprintf(out, "      -> the pod lands on %s\n", f->node);
        print_effects(out, f, "      side effect: ");
        for (uint32_t j = 0; j < shown; j++) {
            const ks_why_change *c = &f->changes[j];
            if (!c->command && c->owner)
                fprintf(out, "      (the pod belongs to %s: make the change in its pod template; docs/why.md)\n", c->owner);
            if (c->command && !command_before(f, j)) fprintf(out, "      $ %s\n", c->command);
        }
        bool others = false;
        for (uint32_t j = shown; j < f->nchanges && !others; j++) others = f->changes[j].command && !command_before(f, j);
        if (others) fprintf(out, "      (and the same command for each of the other pods; -o json lists them)\n");
    }
}

static void print_pod(FILE *out, const ks_why_pod *wp, bool brief) {
    fprintf(out, "Pod %s: %s", wp->pod, ks_sim_state_name(wp->state));
    if (wp->node) fprintf(out, " on %s", wp->node);
    fputc('\n', out);
    if (wp->message) fprintf(out, "  %s\n", wp->message);
    if (wp->state == KS_SIM_SCHEDULED || wp->state == KS_SIM_PENDING) return;
    if (wp->nreasons) {
        fprintf(out, "\nReasons (nodes):\n");
        for (uint32_t i = 0; i < wp->nreasons; i++) fprintf(out, "  %5u  %s\n", wp->reasons[i].nodes, wp->reasons[i].text);
    }
    if (wp->nclasses) {
        fprintf(out, "\nNodes with the same verdict:\n");
        for (uint32_t i = 0; i < wp->nclasses; i++) {
            const ks_why_class *c = &wp->classes[i];
            if (c->nnodes == 1) fprintf(out, "  %s", c->nodes[0]);
            else fprintf(out, "  %u nodes like %s", c->nnodes, c->nodes[0]);
            fprintf(out, ": %s:", c->plugin);
            for (uint32_t j = 0; j < c->nreasons; j++) fprintf(out, "%s %s", j ? "," : "", c->reasons[j]);
            fputc('\n', out);
            for (uint32_t j = 0; j < c->ndetails; j++) fprintf(out, "      %s\n", c->details[j]);
        }
    }
    if (wp->preemption) fprintf(out, "\nPreemption: %s\n", wp->preemption);
    if (brief) return;
    if (!wp->nfixes) {
        fprintf(out, "\nNo change of one or two objects that was tried schedules the pod (%u tried).\n", wp->tried);
        return;
    }
    if (wp->pairs)
        fprintf(out, "\nNo single change schedules the pod; these pairs do (verified, smallest first; %u tried):\n",
                wp->tried);
    else fprintf(out, "\nChanges that schedule the pod (verified, smallest first; %u tried):\n", wp->tried);
    print_fixes(out, wp->fixes, wp->nfixes, false);
}

void ks_why_report_table(FILE *out, const ks_why_result *r) {
    if (r->ngroups == 0 && r->npods == 1) {
        print_pod(out, &r->pods[0], false);
        return;
    }
    fprintf(out, "%u pending pod(s), %u root cause(s)\n", r->npods, r->ngroups);
    for (uint32_t g = 0; g < r->ngroups; g++) {
        const ks_why_group *gr = &r->groups[g];
        fprintf(out, "\n== %u pod(s): %s\n", gr->npods, gr->cause);
        fprintf(out, "  pods:");
        for (uint32_t i = 0; i < gr->npods && i < 8; i++) fprintf(out, " %s", gr->pods[i]);
        if (gr->npods > 8) fprintf(out, " and %u more", gr->npods - 8);
        fputs("\n\n", out);
        print_pod(out, &r->pods[gr->representative], false);
    }
    if (r->ncluster_fixes) {
        fprintf(out, "\n== Changes across pods (cluster changes, and a pod change made on every pod of its group), "
                     "most pending pods unblocked first:\n");
        print_fixes(out, r->cluster_fixes, r->ncluster_fixes, true);
    }
}

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *fix_json(const ks_why_fix *f) {
    json_t *changes = json_array();
    for (uint32_t i = 0; i < f->nchanges; i++) {
        const ks_why_change *c = &f->changes[i];
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", ks_why_change_kind_name(c->kind), "object", c->object,
                              "namespace", c->ns, "name", c->name, "summary", c->summary);
        if (c->like) json_object_set_new(j, "like", json_string(c->like));
        if (c->owner) json_object_set_new(j, "owner", json_string(c->owner));
        if (c->patch) {
            json_object_set_new(j, "patchType", json_string("json"));
            json_object_set_new(j, "patch", json_loads(c->patch, 0, NULL));
        }
        if (c->command) json_object_set_new(j, "command", json_string(c->command));
        json_array_append_new(changes, j);
    }
    json_t *effects = json_array();
    for (uint32_t i = 0; i < f->neffects; i++) {
        const ks_why_effect *e = &f->effects[i];
        json_array_append_new(effects, json_pack("{s:s, s:s, s:o, s:o}", "kind", ks_why_effect_kind_name(e->kind), "pod",
                                                 e->pod, "before", jstr(e->before), "after", jstr(e->after)));
    }
    return json_pack("{s:o, s:o, s:i, s:i, s:f, s:i, s:o}", "changes", changes, "node", jstr(f->node), "objects",
                     (json_int_t)f->objects, "harm", (json_int_t)f->harm, "amount", f->amount, "unblocks",
                     (json_int_t)f->unblocks, "sideEffects", effects);
}

static json_t *pod_json(const ks_why_pod *wp) {
    json_t *reasons = json_array();
    for (uint32_t i = 0; i < wp->nreasons; i++)
        json_array_append_new(reasons, json_pack("{s:s, s:i}", "reason", wp->reasons[i].text, "nodes",
                                                 (json_int_t)wp->reasons[i].nodes));
    json_t *classes = json_array();
    for (uint32_t i = 0; i < wp->nclasses; i++) {
        const ks_why_class *c = &wp->classes[i];
        json_t *rs = json_array(), *ns = json_array(), *ds = json_array();
        for (uint32_t j = 0; j < c->nreasons; j++) json_array_append_new(rs, json_string(c->reasons[j]));
        for (uint32_t j = 0; j < c->nnodes; j++) json_array_append_new(ns, json_string(c->nodes[j]));
        for (uint32_t j = 0; j < c->ndetails; j++) json_array_append_new(ds, json_string(c->details[j]));
        json_array_append_new(classes, json_pack("{s:s, s:o, s:o, s:o}", "plugin", c->plugin, "reasons", rs, "nodes", ns,
                                                 "details", ds));
    }
    json_t *fixes = json_array();
    for (uint32_t i = 0; i < wp->nfixes; i++) json_array_append_new(fixes, fix_json(&wp->fixes[i]));
    json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:i}", "pod", wp->pod, "state",
                          ks_sim_state_name(wp->state), "node", jstr(wp->node), "message", jstr(wp->message),
                          "preemption", jstr(wp->preemption), "reasons", reasons, "nodeClasses", classes, "fixes", fixes,
                          "pairs", wp->pairs, "tried", (json_int_t)wp->tried);
    if (wp->cause) json_object_set_new(j, "cause", json_string(wp->cause));
    return j;
}

void ks_why_report_list(FILE *out, const ks_why_result *r, bool yaml) {
    json_t *pods = json_array();
    for (uint32_t i = 0; i < r->npods; i++) json_array_append_new(pods, pod_json(&r->pods[i]));
    json_t *doc = json_pack("{s:s, s:s, s:o}", "apiVersion", "ksched.io/v1alpha1", "kind", "WhyResult", "pods", pods);
    if (r->ngroups) {
        json_t *groups = json_array();
        for (uint32_t g = 0; g < r->ngroups; g++) {
            json_t *ps = json_array();
            for (uint32_t i = 0; i < r->groups[g].npods; i++) json_array_append_new(ps, json_string(r->groups[g].pods[i]));
            json_array_append_new(groups, json_pack("{s:s, s:o, s:s}", "cause", r->groups[g].cause, "pods", ps,
                                                    "representative", r->pods[r->groups[g].representative].pod));
        }
        json_object_set_new(doc, "groups", groups);
        json_t *cf = json_array();
        for (uint32_t i = 0; i < r->ncluster_fixes; i++) json_array_append_new(cf, fix_json(&r->cluster_fixes[i]));
        json_object_set_new(doc, "clusterFixes", cf);
    }
    ks_report_print_doc(out, doc, "why", yaml);
}
