/* -o json / -o yaml: one v1 List that other tools can read back: the pods
 * that were pending as full Pods with the scheduler's result written in
 * (spec.nodeName, the PodScheduled condition, status.nominatedNodeName,
 * and with --explain the kube-scheduler-simulator annotations), the pods
 * preemption deleted, and the events.k8s.io/v1 Events. */
#include "codec/tree.h"
#include "sim/report.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define SIM_PREFIX "kube-scheduler-simulator.sigs.k8s.io/"

static ks_tree *str(ks_arena *a, const char *s) { return kt_string(a, s, 0); }

/* The map at key of m, created when missing or not a map. */
static ks_tree *map_at(ks_arena *a, ks_tree *m, const char *key) {
    const ks_tree *t = kt_get(m, key);
    if (t && t->type == KT_MAP) return (ks_tree *)t;
    ks_tree *n = kt_new(a, KT_MAP, 0);
    kt_map_set(a, m, key, n);
    return n;
}

static void put_json_annotation(ks_arena *a, ks_tree *ann, const char *key, json_t *v) {
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    kt_map_set(a, ann, key, str(a, s));
    free(s);
    json_decref(v);
}

static json_t *num_string(int64_t v) {
    char b[24];
    snprintf(b, sizeof(b), "%lld", (long long)v);
    return json_string(b);
}

/* The simulator's annotations for the pod's last attempt. */
static void explain_annotations(ks_arena *a, ks_tree *ann, const ks_sim_attempt *at) {
    json_t *pre = json_object();
    if (at->pre_filter_code != KS_SUCCESS)
        json_object_set_new(pre, at->pre_filter_plugin,
                            json_string(at->pre_filter_message ? at->pre_filter_message : ""));
    put_json_annotation(a, ann, SIM_PREFIX "prefilter-result-status", pre);

    json_t *filter = json_object();
    for (uint32_t i = 0; i < at->nverdicts; i++) {
        const ks_sim_verdict *v = &at->verdicts[i];
        json_t *per = json_object();
        /* The plugins before the rejecting one passed; later ones did not
         * run (the framework stops at the first rejection). */
        for (uint32_t j = 0; j < at->nfilter_plugins; j++) {
            if (v->code != KS_SUCCESS && strcmp(at->filter_plugins[j], v->plugin) == 0) break;
            json_object_set_new(per, at->filter_plugins[j], json_string("passed"));
        }
        if (v->code != KS_SUCCESS) {
            ks_strbuf why;
            ks_sb_init(&why);
            for (uint32_t j = 0; j < v->nreasons; j++) {
                if (j) ks_sb_puts(&why, ", ");
                ks_sb_puts(&why, v->reasons[j]);
            }
            json_object_set_new(per, v->plugin, json_string(ks_sb_str(&why)));
            ks_sb_free(&why);
        }
        json_object_set_new(filter, ks_str(v->node), per);
    }
    put_json_annotation(a, ann, SIM_PREFIX "filter-result", filter);

    json_t *score = json_object(), *final = json_object();
    for (uint32_t i = 0; i < at->nscored; i++) {
        json_t *s = json_object(), *f = json_object();
        for (uint32_t j = 0; j < at->nplugins; j++) {
            size_t k = (size_t)i * at->nplugins + j;
            json_object_set_new(s, at->score_plugins[j], num_string(at->raw[k]));
            json_object_set_new(f, at->score_plugins[j], num_string(at->weighted[k]));
        }
        json_object_set_new(score, ks_str(at->scored_nodes[i]), s);
        json_object_set_new(final, ks_str(at->scored_nodes[i]), f);
    }
    put_json_annotation(a, ann, SIM_PREFIX "score-result", score);
    put_json_annotation(a, ann, SIM_PREFIX "finalscore-result", final);

    json_t *post = json_object();
    if (at->post_filter_ran) {
        json_t *per = json_object();
        const char *what = at->nominated_node ? "success"
                                              : (at->post_filter_message ? at->post_filter_message : "");
        json_object_set_new(per, at->post_filter_plugin[0] ? at->post_filter_plugin : "DefaultPreemption",
                            json_string(what));
        json_object_set_new(post, at->nominated_node ? at->nominated_node : "", per);
    }
    put_json_annotation(a, ann, SIM_PREFIX "postfilter-result", post);
    if (at->selected_node) kt_map_set(a, ann, SIM_PREFIX "selected-node", str(a, at->selected_node));
}

static ks_tree *condition(ks_arena *a, const char *status, const char *reason, const char *msg,
                          const char *when) {
    ks_tree *c = kt_new(a, KT_MAP, 0);
    kt_map_set(a, c, "type", str(a, "PodScheduled"));
    kt_map_set(a, c, "status", str(a, status));
    kt_map_set(a, c, "lastProbeTime", kt_new(a, KT_NULL, 0));
    kt_map_set(a, c, "lastTransitionTime", str(a, when));
    if (reason) kt_map_set(a, c, "reason", str(a, reason));
    if (msg) kt_map_set(a, c, "message", str(a, msg));
    return c;
}

/* Replace (or add) the PodScheduled condition, keeping the others. */
static void set_condition(ks_arena *a, ks_tree *status, ks_tree *cond) {
    ks_tree *list = kt_new(a, KT_SEQ, 0);
    const ks_tree *old = kt_get(status, "conditions");
    for (uint32_t i = 0; old && old->type == KT_SEQ && i < old->n; i++) {
        const ks_tree *t = kt_get(old->items[i], "type");
        if (t && t->text && strcmp(t->text, "PodScheduled") == 0) continue;
        kt_seq_add(a, list, old->items[i]);
    }
    kt_seq_add(a, list, cond);
    kt_map_set(a, status, "conditions", list);
}

static ks_tree *pod_tree(ks_arena *a, const ks_sim_pod *sp, const ks_sim_result *r, bool explain) {
    const ks_pod *p = sp->input;
    ks_tree *t = p->tree ? kt_copy(a, p->tree) : kt_new(a, KT_MAP, 0);
    if (!kt_get(t, "apiVersion")) kt_map_set(a, t, "apiVersion", str(a, "v1"));
    if (!kt_get(t, "kind")) kt_map_set(a, t, "kind", str(a, "Pod"));
    ks_tree *meta = map_at(a, t, "metadata");
    kt_map_set(a, meta, "name", str(a, ks_str(p->name)));
    kt_map_set(a, meta, "namespace", str(a, ks_str(p->ns)));
    if (p->uid && !kt_get(meta, "uid")) kt_map_set(a, meta, "uid", str(a, p->uid));
    ks_tree *spec = map_at(a, t, "spec");
    ks_tree *status = map_at(a, t, "status");
    char when[40];

    /* What admission filled in. */
    kt_map_set(a, spec, "schedulerName", str(a, ks_str(p->scheduler_name)));
    if (p->has_priority) kt_map_set(a, spec, "priority", kt_int(a, p->priority));

    if (sp->state == KS_SIM_PREEMPTED) {
        ks_format_time(sp->deleted_ns, false, when, sizeof(when));
        kt_map_set(a, meta, "deletionTimestamp", str(a, when));
        /* The DisruptionTarget condition preemption wrote before deleting. */
        ks_id dt = ks_intern("DisruptionTarget");
        for (uint32_t i = 0; i < sp->pod->nconditions; i++) {
            const ks_pod_condition *c = &sp->pod->conditions[i];
            if (c->type != dt) continue;
            ks_tree *cond = kt_new(a, KT_MAP, 0);
            kt_map_set(a, cond, "type", str(a, "DisruptionTarget"));
            kt_map_set(a, cond, "status", str(a, ks_str(c->status)));
            kt_map_set(a, cond, "lastProbeTime", kt_new(a, KT_NULL, 0));
            kt_map_set(a, cond, "lastTransitionTime", str(a, when));
            if (c->reason) kt_map_set(a, cond, "reason", str(a, c->reason));
            if (c->message) kt_map_set(a, cond, "message", str(a, c->message));
            ks_tree *list = kt_new(a, KT_SEQ, 0);
            const ks_tree *old = kt_get(status, "conditions");
            for (uint32_t k = 0; old && old->type == KT_SEQ && k < old->n; k++) kt_seq_add(a, list, old->items[k]);
            kt_seq_add(a, list, cond);
            kt_map_set(a, status, "conditions", list);
        }
        return t;
    }
    int64_t last = r->start_ns;
    if (sp->nexplain) last = sp->explain[sp->nexplain - 1].time_ns;
    ks_format_time(last, false, when, sizeof(when));
    switch (sp->state) {
    case KS_SIM_SCHEDULED:
        kt_map_set(a, spec, "nodeName", str(a, sp->node));
        set_condition(a, status, condition(a, "True", NULL, NULL, when));
        break;
    case KS_SIM_GATED:
        set_condition(a, status, condition(a, "False", "SchedulingGated", sp->message, when));
        break;
    default:
        set_condition(a, status,
                      condition(a, "False", sp->reason ? sp->reason : "Unschedulable", sp->message, when));
        break;
    }
    if (sp->nominated) kt_map_set(a, status, "nominatedNodeName", str(a, sp->nominated));
    if (!kt_get(status, "phase")) kt_map_set(a, status, "phase", str(a, "Pending"));
    if (explain && sp->nexplain) {
        ks_tree *ann = map_at(a, meta, "annotations");
        explain_annotations(a, ann, &sp->explain[sp->nexplain - 1]);
    }
    return t;
}

static ks_tree *event_tree(ks_arena *a, const ks_sim_event *e, size_t seq) {
    ks_tree *t = kt_new(a, KT_MAP, 0);
    const ks_pod *p = e->regarding;
    char when[40], name[300];
    ks_format_time(e->time_ns, true, when, sizeof(when));
    /* Deterministic names: the pod's name and the event's sequence, in the
     * <name>.<hex> shape the API server's generated names have. */
    snprintf(name, sizeof(name), "%s.%016zx", p ? ks_str(p->name) : "unknown", seq + 1);
    kt_map_set(a, t, "apiVersion", str(a, "events.k8s.io/v1"));
    kt_map_set(a, t, "kind", str(a, "Event"));
    ks_tree *meta = kt_new(a, KT_MAP, 0);
    kt_map_set(a, meta, "name", str(a, name));
    kt_map_set(a, meta, "namespace", str(a, p ? ks_str(p->ns) : "default"));
    kt_map_set(a, t, "metadata", meta);
    kt_map_set(a, t, "eventTime", str(a, when));
    kt_map_set(a, t, "reportingController", str(a, e->controller));
    kt_map_set(a, t, "reportingInstance", str(a, e->controller));
    kt_map_set(a, t, "action", str(a, e->action));
    kt_map_set(a, t, "reason", str(a, e->reason));
    ks_tree *reg = kt_new(a, KT_MAP, 0);
    kt_map_set(a, reg, "apiVersion", str(a, "v1"));
    kt_map_set(a, reg, "kind", str(a, "Pod"));
    if (p) {
        kt_map_set(a, reg, "namespace", str(a, ks_str(p->ns)));
        kt_map_set(a, reg, "name", str(a, ks_str(p->name)));
        if (p->uid) kt_map_set(a, reg, "uid", str(a, p->uid));
    }
    kt_map_set(a, t, "regarding", reg);
    kt_map_set(a, t, "note", str(a, e->note));
    kt_map_set(a, t, "type", str(a, e->type));
    return t;
}

void ks_report_list(FILE *out, const ks_sim_result *r, bool explain, bool yaml) {
    ks_arena *a = ks_arena_new(1 << 16);
    ks_tree *list = kt_new(a, KT_MAP, 0);
    kt_map_set(a, list, "apiVersion", str(a, "v1"));
    kt_map_set(a, list, "kind", str(a, "List"));
    ks_tree *items = kt_new(a, KT_SEQ, 0);
    for (uint32_t i = 0; i < r->npods; i++) kt_seq_add(a, items, pod_tree(a, &r->pods[i], r, explain));
    for (uint32_t i = 0; i < r->nvictims; i++)
        kt_seq_add(a, items, pod_tree(a, &r->victims[i], r, explain));
    for (uint32_t i = 0; i < r->nevents; i++) kt_seq_add(a, items, event_tree(a, &r->events[i], i));
    kt_map_set(a, list, "items", items);
    ks_tree *meta = kt_new(a, KT_MAP, 0);
    kt_map_set(a, meta, "resourceVersion", str(a, ""));
    kt_map_set(a, list, "metadata", meta);
    char *s = yaml ? kt_to_yaml(list) : kt_to_json(list, 4);
    fputs(s, out);
    if (s[0] && s[strlen(s) - 1] != '\n') fputc('\n', out);
    free(s);
    ks_arena_free(a);
}
