/* -o json / -o yaml: one v1 List that other tools can read back: the pods
 * that were pending as full Pods with the scheduler's result written in
 * (spec.nodeName, the PodScheduled condition, status.nominatedNodeName,
 * and with --explain the kube-scheduler-simulator annotations), the pods
 * preemption deleted, and the events.k8s.io/v1 Events. */
#include "api/dra.h"
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

/* The annotations the run wrote (plugins' PreBind patches) onto the
 * input's metadata: keys kept in their order with their final values,
 * removed keys dropped, new keys after them. */
static void final_annotations(ks_arena *a, ks_tree *meta, const ks_pod *in, const ks_pod *now) {
    if (!now || now == in || ks_annotations_equal(&in->annotations, &now->annotations)) return;
    const ks_tree *old = kt_get(meta, "annotations");
    ks_tree *ann = kt_new(a, KT_MAP, 0);
    for (uint32_t i = 0; old && old->type == KT_MAP && i < old->n; i++) {
        const char *v = ks_annotations_get(&now->annotations, ks_intern(old->keys[i]));
        if (v) kt_map_set(a, ann, old->keys[i], str(a, v));
    }
    for (uint32_t i = 0; i < now->annotations.n; i++)
        if (!kt_get(ann, ks_str(now->annotations.kv[i].key)))
            kt_map_set(a, ann, ks_str(now->annotations.kv[i].key), str(a, now->annotations.kv[i].value));
    kt_map_set(a, meta, "annotations", ann);
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
    final_annotations(a, meta, p, sp->pod);
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

static const char *op_name(ks_op op) {
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    return names[op];
}

static ks_tree *requirements(ks_arena *a, const ks_requirement *v, uint32_t n) {
    ks_tree *list = kt_new(a, KT_SEQ, 0);
    for (uint32_t i = 0; i < n; i++) {
        ks_tree *r = kt_new(a, KT_MAP, 0);
        kt_map_set(a, r, "key", str(a, ks_str(v[i].key)));
        kt_map_set(a, r, "operator", str(a, op_name(v[i].op)));
        if (v[i].nvalues) {
            ks_tree *vals = kt_new(a, KT_SEQ, 0);
            for (uint32_t k = 0; k < v[i].nvalues; k++) kt_seq_add(a, vals, str(a, ks_str(v[i].values[k])));
            kt_map_set(a, r, "values", vals);
        }
        kt_seq_add(a, list, r);
    }
    return list;
}

/* A ResourceClaim as the API server would hold it after the simulation:
 * its spec as written (or its template's) and the status the scheduler
 * wrote: the allocation and the pods it is reserved for. */
static ks_tree *claim_tree(ks_arena *a, const ks_resource_claim *c) {
    ks_tree *t = kt_new(a, KT_MAP, 0);
    kt_map_set(a, t, "apiVersion", str(a, "resource.k8s.io/v1"));
    kt_map_set(a, t, "kind", str(a, "ResourceClaim"));
    ks_tree *meta = kt_new(a, KT_MAP, 0);
    kt_map_set(a, meta, "name", str(a, ks_str(c->name)));
    kt_map_set(a, meta, "namespace", str(a, ks_str(c->ns)));
    if (c->uid) kt_map_set(a, meta, "uid", str(a, c->uid));
    if (c->annotations.n) {
        ks_tree *ann = kt_new(a, KT_MAP, 0);
        for (uint32_t i = 0; i < c->annotations.n; i++)
            kt_map_set(a, ann, ks_str(c->annotations.kv[i].key), str(a, ks_str(c->annotations.kv[i].value)));
        kt_map_set(a, meta, "annotations", ann);
    }
    if (c->nfinalizers) {
        ks_tree *f = kt_new(a, KT_SEQ, 0);
        for (uint32_t i = 0; i < c->nfinalizers; i++) kt_seq_add(a, f, str(a, c->finalizers[i]));
        kt_map_set(a, meta, "finalizers", f);
    }
    if (c->nowners) {
        ks_tree *owners = kt_new(a, KT_SEQ, 0);
        for (uint32_t i = 0; i < c->nowners; i++) {
            ks_tree *o = kt_new(a, KT_MAP, 0);
            kt_map_set(a, o, "apiVersion", str(a, c->owners[i].api_version ? c->owners[i].api_version : "v1"));
            kt_map_set(a, o, "kind", str(a, ks_str(c->owners[i].kind)));
            kt_map_set(a, o, "name", str(a, c->owners[i].name ? c->owners[i].name : ""));
            kt_map_set(a, o, "uid", str(a, c->owners[i].uid ? c->owners[i].uid : ""));
            if (c->owners[i].controller) kt_map_set(a, o, "controller", kt_bool(a, true));
            kt_seq_add(a, owners, o);
        }
        kt_map_set(a, meta, "ownerReferences", owners);
    }
    kt_map_set(a, t, "metadata", meta);
    kt_map_set(a, t, "spec", c->spec_tree ? kt_copy(a, c->spec_tree) : kt_new(a, KT_MAP, 0));
    ks_tree *status = kt_new(a, KT_MAP, 0);
    if (c->allocation) {
        const ks_allocation_result *al = c->allocation;
        ks_tree *alloc = kt_new(a, KT_MAP, 0), *devs = kt_new(a, KT_MAP, 0), *res = kt_new(a, KT_SEQ, 0);
        for (uint32_t i = 0; i < al->nresults; i++) {
            const ks_device_result *d = &al->results[i];
            ks_tree *x = kt_new(a, KT_MAP, 0);
            kt_map_set(a, x, "request", str(a, d->request));
            kt_map_set(a, x, "driver", str(a, d->driver));
            kt_map_set(a, x, "pool", str(a, d->pool));
            kt_map_set(a, x, "device", str(a, d->device));
            if (d->has_admin_access) kt_map_set(a, x, "adminAccess", kt_bool(a, d->admin_access));
            if (d->share_id) kt_map_set(a, x, "shareID", str(a, d->share_id));
            if (d->nconsumed) {
                ks_tree *cc = kt_new(a, KT_MAP, 0);
                for (uint32_t k = 0; k < d->nconsumed; k++) {
                    char q[64];
                    ks_quantity_format(&d->consumed[k].q, q, sizeof q);
                    kt_map_set(a, cc, d->consumed[k].name, str(a, q));
                }
                kt_map_set(a, x, "consumedCapacity", cc);
            }
            kt_seq_add(a, res, x);
        }
        kt_map_set(a, devs, "results", res);
        if (al->nconfig) {
            ks_tree *cfg = kt_new(a, KT_SEQ, 0);
            for (uint32_t i = 0; i < al->nconfig; i++) {
                const ks_device_config *dc = &al->config[i];
                ks_tree *x = kt_new(a, KT_MAP, 0);
                kt_map_set(a, x, "source", str(a, dc->from_class ? "FromClass" : "FromClaim"));
                if (dc->nrequests) {
                    ks_tree *rq = kt_new(a, KT_SEQ, 0);
                    for (uint32_t k = 0; k < dc->nrequests; k++) kt_seq_add(a, rq, str(a, dc->requests[k]));
                    kt_map_set(a, x, "requests", rq);
                }
                ks_tree *op = kt_new(a, KT_MAP, 0);
                kt_map_set(a, op, "driver", str(a, dc->driver ? dc->driver : ""));
                if (dc->parameters) kt_map_set(a, op, "parameters", kt_copy(a, dc->parameters));
                kt_map_set(a, x, "opaque", op);
                kt_seq_add(a, cfg, x);
            }
            kt_map_set(a, devs, "config", cfg);
        }
        kt_map_set(a, alloc, "devices", devs);
        if (al->has_node_selector) {
            ks_tree *ns = kt_new(a, KT_MAP, 0), *terms = kt_new(a, KT_SEQ, 0);
            for (uint32_t i = 0; i < al->node_selector.nterms; i++) {
                const ks_node_selector_term *nt = &al->node_selector.terms[i];
                ks_tree *term = kt_new(a, KT_MAP, 0);
                if (nt->nexpr) kt_map_set(a, term, "matchExpressions", requirements(a, nt->exprs, nt->nexpr));
                if (nt->nfields) kt_map_set(a, term, "matchFields", requirements(a, nt->fields, nt->nfields));
                kt_seq_add(a, terms, term);
            }
            kt_map_set(a, ns, "nodeSelectorTerms", terms);
            kt_map_set(a, alloc, "nodeSelector", ns);
        }
        kt_map_set(a, status, "allocation", alloc);
    }
    if (c->nreserved) {
        ks_tree *rf = kt_new(a, KT_SEQ, 0);
        for (uint32_t i = 0; i < c->nreserved; i++) {
            ks_tree *x = kt_new(a, KT_MAP, 0);
            kt_map_set(a, x, "resource", str(a, c->reserved[i].resource ? c->reserved[i].resource : "pods"));
            kt_map_set(a, x, "name", str(a, c->reserved[i].name ? c->reserved[i].name : ""));
            kt_map_set(a, x, "uid", str(a, c->reserved[i].uid ? c->reserved[i].uid : ""));
            kt_seq_add(a, rf, x);
        }
        kt_map_set(a, status, "reservedFor", rf);
    }
    kt_map_set(a, t, "status", status);
    return t;
}

/* The claims the pending pods use, in the order the pods name them. */
static void add_claims(ks_arena *a, ks_tree *items, const ks_sim_result *r) {
    const ks_cluster *c = r->cluster;
    if (!c || !c->resource_claims.n) return;
    bool *seen = ks_xcalloc(c->resource_claims.n, sizeof(bool));
    for (uint32_t i = 0; i < r->npods; i++) {
        const ks_pod *p = r->pods[i].pod ? r->pods[i].pod : r->pods[i].input;
        for (uint32_t k = 0; k < p->nresource_claims; k++) {
            bool check, skip;
            const char *name = ks_pod_claim_name(p, k, &check, &skip);
            if (!name) continue;
            for (uint32_t j = 0; j < c->resource_claims.n; j++) {
                const ks_resource_claim *rc = c->resource_claims.v[j];
                if (seen[j] || rc->ns != p->ns || strcmp(ks_str(rc->name), name) != 0) continue;
                seen[j] = true;
                kt_seq_add(a, items, claim_tree(a, rc));
            }
        }
    }
    free(seen);
}

/* What the workloads' controllers created besides pods: ReplicaSets and
 * Jobs, and the StatefulSets' claims as they ended (bound to a volume,
 * or given a node to provision on). */
static void add_generated(ks_arena *a, ks_tree *items, const ks_sim_result *r) {
    const ks_wl_generated *g = r->generated;
    if (!g) return;
    for (uint32_t i = 0; i < g->workloads.n; i++)
        if (g->workloads.v[i]->tree) kt_seq_add(a, items, kt_copy(a, g->workloads.v[i]->tree));
    for (uint32_t i = 0; i < g->pvcs.n; i++) {
        const ks_pvc *made = g->pvcs.v[i], *now = made;
        for (uint32_t j = 0; r->cluster && j < r->cluster->pvcs.n; j++)
            if (r->cluster->pvcs.v[j]->ns == made->ns && r->cluster->pvcs.v[j]->name == made->name)
                now = r->cluster->pvcs.v[j];
        if (!made->tree) continue;
        ks_tree *t = kt_copy(a, made->tree);
        if (now->volume_name) kt_map_set(a, map_at(a, t, "spec"), "volumeName", str(a, ks_str(now->volume_name)));
        for (uint32_t k = 0; k < now->annotations.n; k++)
            kt_map_set(a, map_at(a, map_at(a, t, "metadata"), "annotations"), ks_str(now->annotations.kv[k].key),
                       str(a, ks_str(now->annotations.kv[k].value)));
        if (now->phase) kt_map_set(a, map_at(a, t, "status"), "phase", str(a, ks_str(now->phase)));
        kt_seq_add(a, items, t);
    }
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
    add_claims(a, items, r);
    add_generated(a, items, r);
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

void ks_report_print_doc(FILE *out, json_t *doc, const char *source, bool yaml) {
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (!yaml) {
        fprintf(out, "%s\n", s);
        free(s);
        return;
    }
    ks_arena *a = ks_arena_new(4096);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (kt_parse(a, source, s, strlen(s), &docs, &n, &err) && n == 1) {
        char *y = kt_to_yaml(docs[0]);
        fputs(y, out);
        free(y);
    }
    free(err);
    ks_arena_free(a);
    free(s);
}
