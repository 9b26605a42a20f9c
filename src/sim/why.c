#include "sim/why.h"

#include "api/quantity.h"
#include "codec/decode.h"
#include "codec/patch.h"
#include "framework/nodeinfo.h"
#include "framework/status.h"
#include "sim/report.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort, which must not be given a NULL base even for no elements. */
static void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    if (n > 1) qsort(base, n, size, cmp);
}

static const char *const change_names[] = {
    [KS_WHY_REMOVE_GATES] = "RemoveSchedulingGates",
    [KS_WHY_TOLERATE] = "AddToleration",
    [KS_WHY_DROP_SELECTOR] = "DropNodeSelector",
    [KS_WHY_DROP_TERM] = "DropAffinityTerm",
    [KS_WHY_DROP_HOST_PORT] = "DropHostPort",
    [KS_WHY_RELAX_SPREAD] = "RelaxTopologySpread",
    [KS_WHY_LOWER_REQUEST] = "LowerRequest",
    [KS_WHY_PRIORITY] = "ChangePriorityClass",
    [KS_WHY_REMOVE_TAINT] = "RemoveTaint",
    [KS_WHY_ADD_LABEL] = "AddNodeLabel",
    [KS_WHY_UNCORDON] = "Uncordon",
    [KS_WHY_EVICT] = "Evict",
    [KS_WHY_ADD_NODE] = "AddNode",
};
const char *ks_why_change_kind_name(ks_why_change_kind k) { return change_names[k]; }

static const char *const effect_names[] = {
    [KS_WHY_MOVED] = "Moved",
    [KS_WHY_NOW_PENDING] = "NowPending",
    [KS_WHY_ALSO_SCHEDULED] = "AlsoScheduled",
    [KS_WHY_PREEMPTED] = "Preempted",
    [KS_WHY_REPLACED] = "Replaced",
};
const char *ks_why_effect_kind_name(ks_why_effect_kind k) { return effect_names[k]; }

/* ------------------------------------------------------------------ */
/* What a pod's last attempt saw, taken from the attempt record while the
 * snapshot is alive: each node's verdict, free resources and pod count,
 * and per spread constraint the matching pods per topology domain. */

typedef struct why_node {
    ks_node *node;          /* referenced */
    const char *plugin;     /* NULL: passed */
    uint32_t nreasons;
    char **reasons;
    ks_resource free;       /* heap-owned */
    uint32_t npods;
} why_node;

typedef struct why_domain {
    ks_id value;
    uint32_t count;
} why_domain;

typedef struct why_capture {
    bool have;
    uint32_t nnodes;
    why_node *nodes;
    char *prefilter_plugin;  /* PreFilter rejected the pod */
    char *prefilter_msg;
    char *postfilter_msg;    /* PostFilter's status message */
    uint32_t nspread;
    why_domain **dom;        /* per constraint */
    uint32_t *ndom;
} why_capture;

static void capture_clear(why_capture *c) {
    for (uint32_t i = 0; i < c->nnodes; i++) {
        why_node *n = &c->nodes[i];
        ks_node_unref(n->node);
        for (uint32_t j = 0; j < n->nreasons; j++) free(n->reasons[j]);
        free(n->reasons);
        ks_resource_fini(&n->free);
    }
    free(c->nodes);
    free(c->prefilter_plugin);
    free(c->prefilter_msg);
    free(c->postfilter_msg);
    for (uint32_t i = 0; i < c->nspread; i++) free(c->dom[i]);
    free(c->dom);
    free(c->ndom);
    memset(c, 0, sizeof(*c));
}

static void count_domain(why_capture *c, uint32_t k, ks_id value, uint32_t n) {
    for (uint32_t i = 0; i < c->ndom[k]; i++) {
        if (c->dom[k][i].value == value) {
            c->dom[k][i].count += n;
            return;
        }
    }
    c->dom[k] = ks_xrealloc(c->dom[k], (c->ndom[k] + 1) * sizeof(why_domain));
    c->dom[k][c->ndom[k]++] = (why_domain){value, n};
}

static void capture_record(why_capture *c, const ks_attempt_record *rec) {
    capture_clear(c);
    c->have = true;
    const ks_pod *p = rec->pod;
    if (!ks_status_is_success(rec->pre_filter_status) && ks_status_code(rec->pre_filter_status) != KS_SKIP) {
        c->prefilter_plugin = ks_xstrdup(ks_status_plugin(rec->pre_filter_status));
        c->prefilter_msg = ks_status_message(rec->pre_filter_status);
    }
    if (rec->post_filter_ran && rec->post_filter_status) c->postfilter_msg = ks_status_message(rec->post_filter_status);
    c->nnodes = (uint32_t)rec->nevaluated;
    c->nodes = ks_xcalloc(c->nnodes ? c->nnodes : 1, sizeof(why_node));
    c->nspread = p->nspread;
    c->dom = ks_xcalloc(p->nspread ? p->nspread : 1, sizeof(why_domain *));
    c->ndom = ks_xcalloc(p->nspread ? p->nspread : 1, sizeof(uint32_t));
    for (size_t i = 0; i < rec->nevaluated; i++) {
        const ks_node_info *ni = rec->evaluated[i];
        const ks_status *st = rec->verdicts[i];
        why_node *n = &c->nodes[i];
        n->node = ks_node_ref(ni->node);
        if (!ks_status_is_success(st)) {
            n->plugin = ks_status_plugin(st);
            n->nreasons = st->nreasons;
            n->reasons = ks_xcalloc(st->nreasons ? st->nreasons : 1, sizeof(char *));
            for (uint32_t j = 0; j < st->nreasons; j++) n->reasons[j] = ks_xstrdup(st->reasons[j]);
        }
        ks_resource_copy(&n->free, &ni->allocatable);
        ks_resource_sub(&n->free, NULL, &ni->requested);
        n->npods = ni->npods;
        for (uint32_t k = 0; k < p->nspread; k++) {
            ks_id v;
            if (!ks_labels_get(&ni->node->labels, p->spread[k].topology_key, &v)) continue;
            uint32_t m = 0;
            for (uint32_t j = 0; j < ni->npods; j++) {
                const ks_pod *q = ni->pods[j];
                if (q->ns == p->ns && !ks_pod_is_terminating(q) && ks_selector_matches(&p->spread[k].selector, &q->labels))
                    m++;
            }
            count_domain(c, k, v, m);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Runs: the cluster as given, or changed, simulated with the real loop. */

typedef struct why_ctx {
    const ks_cluster *c0;
    const ks_config *cfg;
    ks_registry *reg;
    const ks_why_options *o;
    ks_sim_options so;
    ks_map caps;             /* pod key -> why_capture * (the pods watched) */
    ks_sim_result base;
    ks_cluster *base_cluster;
    ks_map base_index;       /* pod key -> index + 1 in base.pods */
    ks_map base_victims;     /* pod key -> 1 */
    int64_t later_ts;        /* creationTimestamp for replacement pods */
    uint32_t runs;
    uint32_t budget;         /* runs left for the current pod */
} why_ctx;

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    why_ctx *w = ctx;
    if (rec->result == KS_ATTEMPT_SKIPPED) return;
    why_capture *c = ks_map_get(&w->caps, rec->pod->key);
    if (c) capture_record(c, rec);
}

static int find_pod(const ks_cluster *c, uint64_t key) {
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (c->pods.v[i]->key == key) return (int)i;
    return -1;
}

static int find_node(const ks_cluster *c, const char *name) {
    ks_id id = ks_intern_find(name);
    for (uint32_t i = 0; id && i < c->nodes.n; i++)
        if (c->nodes.v[i]->name == id) return (int)i;
    return -1;
}

/* The objects a fix patches, each patched as a tree once all of the
 * fix's patches on it are applied, then decoded. */
typedef struct patched {
    bool node;
    uint64_t key;            /* pod key, or node name id */
    ks_tree *tree;
    const char *file;
    uint32_t input_index;
} patched;

static ks_tree *tree_of(ks_arena *a, patched *v, uint32_t *n, bool node, uint64_t key, const ks_tree *orig,
                        const char *file, uint32_t input_index) {
    for (uint32_t i = 0; i < *n; i++)
        if (v[i].node == node && v[i].key == key) return v[i].tree;
    v[*n] = (patched){node, key, kt_copy(a, orig), file, input_index};
    return v[(*n)++].tree;
}

static ks_pod *decode_pod(const ks_tree *t, const char *file, uint32_t input_index, const ks_cluster *c, char **err) {
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = file, .doc = NULL, .next_input_index = input_index, .errs = &errs};
    ks_pod *p = ks_decode_pod(t, &ctx);
    if (!p) *err = ks_xasprintf("%s", errs.n ? errs.v[0] : "cannot decode the changed pod");
    ks_errors_free(&errs);
    if (p) {
        p->input_index = input_index;
        char *e = NULL;
        if (!ks_pod_admit(p, c, &e)) {
            *err = e;
            ks_pod_unref(p);
            return NULL;
        }
    }
    return p;
}

static ks_node *decode_node(const ks_tree *t, const char *file, uint32_t input_index, char **err) {
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = file, .doc = NULL, .next_input_index = input_index, .errs = &errs};
    ks_node *n = ks_decode_node(t, &ctx);
    if (!n) *err = ks_xasprintf("%s", errs.n ? errs.v[0] : "cannot decode the changed node");
    else n->input_index = input_index;
    ks_errors_free(&errs);
    return n;
}

static void tree_remove_key(ks_tree *m, const char *key) {
    if (!m || m->type != KT_MAP) return;
    for (uint32_t i = 0; i < m->n; i++) {
        if (strcmp(m->keys[i], key) == 0) {
            for (uint32_t j = i; j + 1 < m->n; j++) {
                m->keys[j] = m->keys[j + 1];
                m->items[j] = m->items[j + 1];
            }
            m->n--;
            return;
        }
    }
}

static uint64_t pod_key_of(const char *ns, const char *name) { return ks_pod_key(ks_intern(ns), ks_intern(name)); }

static bool controller_recreates(const ks_pod *p) {
    const ks_owner_ref *o = ks_pod_controller(p);
    return o && strcmp(ks_str(o->kind), "DaemonSet") != 0;
}

/* Apply a fix to c (a clone). */
static bool apply_fix(why_ctx *w, ks_cluster *c, const ks_why_fix *f, char **err) {
    ks_arena *a = ks_arena_new(8192);
    patched *pv = ks_xcalloc(f->nchanges + 1, sizeof(patched));
    uint32_t npv = 0;
    bool ok = true;
    for (uint32_t i = 0; ok && i < f->nchanges; i++) {
        const ks_why_change *ch = &f->changes[i];
        if (ch->kind == KS_WHY_ADD_NODE) {
            int at = find_node(c, ch->like);
            if (at < 0 || !c->nodes.v[at]->tree) {
                *err = ks_xasprintf("node %s: no manifest to copy", ch->like);
                ok = false;
                break;
            }
            ks_tree *t = kt_copy(a, c->nodes.v[at]->tree);
            ks_tree *md = (ks_tree *)kt_get(t, "metadata");
            kt_map_set(a, md, "name", kt_string(a, ch->name, 0));
            tree_remove_key(md, "uid");
            tree_remove_key(md, "resourceVersion");
            tree_remove_key(md, "creationTimestamp");
            ks_tree *labels = (ks_tree *)kt_get(md, "labels");
            if (labels && kt_get(labels, "kubernetes.io/hostname"))
                kt_map_set(a, labels, "kubernetes.io/hostname", kt_string(a, ch->name, 0));
            tree_remove_key((ks_tree *)kt_get(t, "spec"), "unschedulable");
            ks_node *n = decode_node(t, "why", c->next_input_index++, err);
            if (!n) ok = false;
            else KS_VEC_PUSH(c->nodes, n);
        } else if (ch->kind == KS_WHY_EVICT) {
            int at = find_pod(c, pod_key_of(ch->ns, ch->name));
            if (at < 0) continue;
            ks_pod *old = c->pods.v[at];
            c->pods.v[at] = c->pods.v[--c->pods.n];
            /* The controller makes a replacement, pending, created now. */
            if (controller_recreates(old) && old->tree) {
                ks_tree *t = kt_copy(a, old->tree);
                tree_remove_key((ks_tree *)kt_get(t, "spec"), "nodeName");
                tree_remove_key(t, "status");
                char when[40];
                ks_format_time(w->later_ts * KS_NS_PER_SEC, false, when, sizeof(when));
                ks_tree *md = (ks_tree *)kt_get(t, "metadata");
                if (md) kt_map_set(a, md, "creationTimestamp", kt_string(a, when, 0));
                ks_pod *np = decode_pod(t, old->source_file, c->next_input_index++, c, err);
                if (!np) ok = false;
                else KS_VEC_PUSH(c->pods, np);
            }
            ks_pod_unref(old);
        } else if (!strcmp(ch->object, "Pod")) {
            int at = find_pod(c, pod_key_of(ch->ns, ch->name));
            if (at < 0 || !c->pods.v[at]->tree) {
                *err = ks_xasprintf("pod %s/%s: no manifest to patch", ch->ns, ch->name);
                ok = false;
                break;
            }
            const ks_pod *p = c->pods.v[at];
            ks_tree *t = tree_of(a, pv, &npv, false, p->key, p->tree, p->source_file, p->input_index);
            ok = kt_patch_apply(a, t, ch->patch, err);
        } else {
            int at = find_node(c, ch->name);
            if (at < 0 || !c->nodes.v[at]->tree) {
                *err = ks_xasprintf("node %s: no manifest to patch", ch->name);
                ok = false;
                break;
            }
            const ks_node *n = c->nodes.v[at];
            ks_tree *t = tree_of(a, pv, &npv, true, n->name, n->tree, n->source_file, n->input_index);
            ok = kt_patch_apply(a, t, ch->patch, err);
        }
    }
    for (uint32_t i = 0; ok && i < npv; i++) {
        if (pv[i].node) {
            int at = find_node(c, ks_str((ks_id)pv[i].key));
            ks_node *n = decode_node(pv[i].tree, pv[i].file, pv[i].input_index, err);
            if (!n) {
                ok = false;
                break;
            }
            ks_node_unref(c->nodes.v[at]);
            c->nodes.v[at] = n;
        } else {
            int at = find_pod(c, pv[i].key);
            ks_pod *p = decode_pod(pv[i].tree, pv[i].file, pv[i].input_index, c, err);
            if (!p) {
                ok = false;
                break;
            }
            ks_pod_unref(c->pods.v[at]);
            c->pods.v[at] = p;
        }
    }
    free(pv);
    ks_arena_free(a);
    return ok;
}

typedef struct why_run {
    ks_cluster *c;
    ks_sim_result res;
    why_capture cap;     /* the target's last attempt */
    const ks_sim_pod *target;
} why_run;

static void run_free(why_run *r) {
    if (r->c) {
        ks_sim_result_free(&r->res);
        ks_cluster_free(r->c);
    }
    capture_clear(&r->cap);
    memset(r, 0, sizeof(*r));
}

static bool simulate_fix(why_ctx *w, const ks_why_fix *f, uint64_t target, why_run *r, char **err) {
    memset(r, 0, sizeof(*r));
    ks_cluster *c = ks_sim_clone_cluster(w->c0);
    if (f && !apply_fix(w, c, f, err)) {
        ks_cluster_free(c);
        return false;
    }
    ks_map saved = w->caps;
    ks_map_init(&w->caps);
    if (target) ks_map_put(&w->caps, target, &r->cap);
    ks_sim_options so = w->so;
    so.on_attempt = on_attempt;
    so.on_attempt_ctx = w;
    bool ok = ks_simulate(c, w->cfg, w->reg, &so, &r->res, err);
    ks_map_free(&w->caps);
    w->caps = saved;
    w->runs++;
    if (!ok) {
        ks_cluster_free(c);
        capture_clear(&r->cap);
        return false;
    }
    r->c = c;
    for (uint32_t i = 0; i < r->res.npods; i++)
        if (r->res.pods[i].input->key == target) r->target = &r->res.pods[i];
    return true;
}

/* ------------------------------------------------------------------ */
/* Quantities, as a person reads them. */

static void format_amount(ks_id res, int64_t v, char *buf, int n) {
    if (res == KS_RES_CPU) ks_quantity_format_milli(v, buf, n);
    else if (res == KS_RES_MEMORY || res == KS_RES_EPHEMERAL || ks_resource_is_hugepages(ks_str(res)))
        ks_quantity_format_bytes(v, buf, n);
    else snprintf(buf, (size_t)n, "%lld", (long long)v);
}

/* Every resource the pod requests fits the node's free amount. */
static bool fits_free(const ks_pod *p, const why_node *n) {
    const ks_resource *r = &p->requests;
    if (r->milli_cpu > n->free.milli_cpu || r->memory > n->free.memory ||
        r->ephemeral_storage > n->free.ephemeral_storage)
        return false;
    if ((int64_t)n->npods + 1 > n->node->allocatable.allowed_pods) return false;
    for (uint32_t i = 0; i < r->nscalar; i++)
        if (r->scalars[i].val > ks_resource_get(&n->free, r->scalars[i].name)) return false;
    return true;
}

static const char *reason_resource(const char *reason) {
    static const char pre[] = "Insufficient ";
    return strncmp(reason, pre, sizeof(pre) - 1) == 0 ? reason + sizeof(pre) - 1 : NULL;
}

/* ------------------------------------------------------------------ */
/* Candidate fixes. */

typedef struct cand_list {
    ks_why_fix *v;
    uint32_t n, cap;
    uint32_t max_reps;   /* nodes tried per kind of node change (1 or 2) */
} cand_list;

static void change_free(ks_why_change *c) {
    free(c->ns);
    free(c->name);
    free(c->like);
    free(c->summary);
    free(c->patch);
    free(c->command);
    free(c->owner);
}

static void fix_free(ks_why_fix *f) {
    for (uint32_t i = 0; i < f->nchanges; i++) change_free(&f->changes[i]);
    free(f->changes);
    free(f->node);
    for (uint32_t i = 0; i < f->neffects; i++) {
        free(f->effects[i].pod);
        free(f->effects[i].before);
        free(f->effects[i].after);
    }
    free(f->effects);
    memset(f, 0, sizeof(*f));
}

static ks_why_change change_copy(const ks_why_change *c) {
    ks_why_change d = *c;
    d.ns = ks_xstrdup(c->ns);
    d.name = ks_xstrdup(c->name);
    d.like = c->like ? ks_xstrdup(c->like) : NULL;
    d.summary = ks_xstrdup(c->summary);
    d.patch = c->patch ? ks_xstrdup(c->patch) : NULL;
    d.command = c->command ? ks_xstrdup(c->command) : NULL;
    d.owner = c->owner ? ks_xstrdup(c->owner) : NULL;
    return d;
}

static ks_why_fix *cand_new(cand_list *l, double amount) {
    KS_GROW(l->v, l->cap, (size_t)l->n + 1);
    ks_why_fix *f = &l->v[l->n++];
    memset(f, 0, sizeof(*f));
    f->amount = amount;
    return f;
}

static ks_why_change *fix_add(ks_why_fix *f) {
    f->changes = ks_xrealloc(f->changes, (f->nchanges + 1) * sizeof(ks_why_change));
    ks_why_change *c = &f->changes[f->nchanges++];
    memset(c, 0, sizeof(*c));
    return c;
}

static char *dump_patch(json_t *ops) {
    char *s = json_dumps(ops, JSON_COMPACT);
    json_decref(ops);
    return s;
}

static json_t *op(const char *o, const char *path, json_t *value) {
    json_t *j = json_pack("{s:s, s:s}", "op", o, "path", path);
    if (value) json_object_set_new(j, "value", value);
    return j;
}

static void pod_change(ks_why_fix *f, ks_why_change_kind kind, const ks_pod *p, json_t *ops, char *summary) {
    ks_why_change *c = fix_add(f);
    c->kind = kind;
    c->object = "Pod";
    c->ns = ks_xstrdup(ks_str(p->ns));
    c->name = ks_xstrdup(ks_str(p->name));
    c->summary = summary;
    c->patch = dump_patch(ops);
    c->command = ks_xasprintf("kubectl patch pod %s -n %s --type=json -p '%s'", c->name, c->ns, c->patch);
    const ks_owner_ref *o = ks_pod_controller(p);
    if (o) c->owner = ks_xasprintf("%s/%s", ks_str(o->kind), o->name);
    f->objects++;
}

static void node_change(ks_why_fix *f, ks_why_change_kind kind, const ks_node *n, json_t *ops, char *summary,
                        char *command) {
    ks_why_change *c = fix_add(f);
    c->kind = kind;
    c->object = "Node";
    c->ns = ks_xstrdup("");
    c->name = ks_xstrdup(ks_str(n->name));
    c->summary = summary;
    c->patch = dump_patch(ops);
    c->command = command ? command : ks_xasprintf("kubectl patch node %s --type=json -p '%s'", c->name, c->patch);
    f->objects++;
}

static const ks_tree *tpath(const ks_tree *t, const char *a, const char *b, const char *c) {
    t = kt_get(t, a);
    if (t && b) t = kt_get(t, b);
    if (t && c) t = kt_get(t, c);
    return t;
}

static char *esc(const char *s) {
    char buf[1024];
    return ks_xstrdup(kt_pointer_escape(s, buf, sizeof(buf)));
}

/* The manifest of node n as given (a node changed by the first change of
 * a pair was decoded without one). */
static const ks_tree *node_tree(const ks_cluster *c0, const ks_node *n) {
    if (n->tree) return n->tree;
    int at = find_node(c0, ks_str(n->name));
    return at >= 0 ? c0->nodes.v[at]->tree : NULL;
}

/* The node's taints the pod does not tolerate (NoSchedule, NoExecute). */
static uint32_t untolerated(const ks_pod *p, const ks_node *n, const ks_taint **out, uint32_t max) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->ntaints && k < max; i++) {
        const ks_taint *t = &n->taints[i];
        if (t->effect == KS_EFFECT_PREFER_NO_SCHEDULE) continue;
        if (!ks_tolerations_tolerate(p->tolerations, p->ntolerations, t)) out[k++] = t;
    }
    return k;
}

static void taint_text(const ks_taint *t, char *buf, size_t n) {
    const char *v = ks_str(t->value);
    snprintf(buf, n, "%s%s%s:%s", ks_str(t->key), *v ? "=" : "", v, ks_effect_name(t->effect));
}

/* Better representatives first: the pod fits what is free, then most cpu free. */
static int cmp_rep(const why_node *a, const why_node *b, const ks_pod *p) {
    bool fa = fits_free(p, a), fb = fits_free(p, b);
    if (fa != fb) return fa ? -1 : 1;
    if (a->free.milli_cpu != b->free.milli_cpu) return a->free.milli_cpu > b->free.milli_cpu ? -1 : 1;
    return strcmp(ks_str(a->node->name), ks_str(b->node->name));
}

/* Up to max nodes rejected by plugin (and matching `only` when set), best first. */
static uint32_t reps(const why_capture *cap, const ks_pod *p, const char *plugin, const char *only,
                     const why_node **out, uint32_t max) {
    uint32_t k = 0;
    if (max == 0) return 0;
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin || strcmp(n->plugin, plugin) != 0) continue;
        if (only && strcmp(ks_str(n->node->name), only) != 0) continue;
        uint32_t at = k < max ? k++ : max;
        if (at == max) {
            if (cmp_rep(n, out[max - 1], p) >= 0) continue;
            at = max - 1;
        }
        out[at] = n;
        while (at > 0 && cmp_rep(out[at], out[at - 1], p) < 0) {
            const why_node *t = out[at];
            out[at] = out[at - 1];
            out[at - 1] = t;
            at--;
        }
    }
    return k;
}

static bool any_reason(const why_capture *cap, const char *plugin, const char *prefix) {
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin || (plugin && strcmp(n->plugin, plugin) != 0)) continue;
        if (!prefix) return true;
        for (uint32_t j = 0; j < n->nreasons; j++)
            if (strstr(n->reasons[j], prefix)) return true;
    }
    return false;
}

static const char *gate_names(const ks_pod *p) {
    static _Thread_local char buf[512];
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < p->ngates && o < sizeof(buf); i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? ", " : "", ks_str(p->scheduling_gates[i]));
    return buf;
}

static void gen_gates(const ks_pod *p, const ks_tree *t, cand_list *l) {
    if (!p->ngates || !tpath(t, "spec", "schedulingGates", NULL)) return;
    ks_why_fix *f = cand_new(l, 0);
    pod_change(f, KS_WHY_REMOVE_GATES, p, json_pack("[o]", op("remove", "/spec/schedulingGates", NULL)),
               ks_xasprintf("remove the scheduling gate%s %s of pod %s/%s", p->ngates > 1 ? "s" : "",
                            gate_names(p), ks_str(p->ns), ks_str(p->name)));
}

static json_t *toleration_json(const ks_taint *t) {
    const char *v = ks_str(t->value);
    json_t *j = *v ? json_pack("{s:s, s:s, s:s, s:s}", "key", ks_str(t->key), "operator", "Equal", "value", v,
                               "effect", ks_effect_name(t->effect))
                   : json_pack("{s:s, s:s, s:s}", "key", ks_str(t->key), "operator", "Exists", "effect",
                               ks_effect_name(t->effect));
    return j;
}

/* "key=value:Effect, ..." of the taints into buf. */
static void taints_text(const ks_taint *const *ut, uint32_t nu, char *buf, size_t n) {
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < nu && o < n; i++) {
        char tt[256];
        taint_text(ut[i], tt, sizeof(tt));
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", tt);
    }
}

static void remove_taints_fix(const ks_cluster *c0, const ks_node *n, const ks_taint *const *ut, uint32_t nu,
                              const char *desc, cand_list *l) {
    const ks_tree *tl = tpath(node_tree(c0, n), "spec", "taints", NULL);
    if (!tl || tl->type != KT_SEQ) return;
    json_t *ops = json_array();
    ks_strbuf cmd;
    ks_sb_init(&cmd);
    ks_sb_printf(&cmd, "kubectl taint node %s", ks_str(n->name));
    /* from the last index down, so that earlier indices stay valid */
    for (uint32_t i = tl->n; i-- > 0;) {
        const ks_tree *k = kt_get(tl->items[i], "key"), *e = kt_get(tl->items[i], "effect");
        const ks_tree *v = kt_get(tl->items[i], "value");
        for (uint32_t j = 0; j < nu; j++) {
            if (!k || !e || strcmp(k->text, ks_str(ut[j]->key)) || strcmp(e->text, ks_effect_name(ut[j]->effect)))
                continue;
            if (strcmp(v && v->text ? v->text : "", ks_str(ut[j]->value))) continue;
            char path[64];
            snprintf(path, sizeof(path), "/spec/taints/%u", i);
            json_array_append_new(ops, op("remove", path, NULL));
            ks_sb_printf(&cmd, " %s:%s-", k->text, e->text);
            break;
        }
    }
    ks_why_fix *f = cand_new(l, 0);
    node_change(f, KS_WHY_REMOVE_TAINT, n, ops, ks_xasprintf("remove the taint %s from node %s", desc, ks_str(n->name)),
                ks_xstrdup(ks_sb_str(&cmd)));
    ks_sb_free(&cmd);
}

/* Per distinct set of untolerated taints (up to 4 sets): tolerate them
 * on the pod, or remove them from the nodes of that set closest to
 * fitting. */
static void gen_taints(const ks_cluster *c0, const ks_pod *p, const ks_tree *t, const why_capture *cap, const char *only,
                       bool pod_side, cand_list *l) {
    enum { MAX_SETS = 4, MAX_REPS = 2 };
    char sets[MAX_SETS][512];
    const why_node *best[MAX_SETS][MAX_REPS];
    uint32_t nbest[MAX_SETS] = {0}, nsets = 0;
    uint32_t per_set = l->max_reps < MAX_REPS ? l->max_reps : MAX_REPS;
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin || strcmp(n->plugin, "TaintToleration") != 0) continue;
        if (only && strcmp(ks_str(n->node->name), only) != 0) continue;
        const ks_taint *ut[8];
        uint32_t nu = untolerated(p, n->node, ut, 8);
        if (!nu) continue;
        char desc[512];
        taints_text(ut, nu, desc, sizeof(desc));
        uint32_t k = 0;
        while (k < nsets && strcmp(sets[k], desc) != 0) k++;
        if (k == nsets) {
            if (nsets == MAX_SETS) continue;
            snprintf(sets[nsets++], sizeof(sets[0]), "%s", desc);
        }
        /* keep the set's best nodes, best first */
        uint32_t at = nbest[k] < per_set ? nbest[k]++ : per_set;
        if (at == per_set) {
            if (cmp_rep(n, best[k][per_set - 1], p) >= 0) continue;
            at = per_set - 1;
        }
        best[k][at] = n;
        while (at > 0 && cmp_rep(best[k][at], best[k][at - 1], p) < 0) {
            const why_node *x = best[k][at];
            best[k][at] = best[k][at - 1];
            best[k][at - 1] = x;
            at--;
        }
    }
    for (uint32_t k = 0; k < nsets; k++) {
        const ks_taint *ut[8];
        uint32_t nu = untolerated(p, best[k][0]->node, ut, 8);
        if (pod_side) {
            json_t *ops = json_array();
            if (tpath(t, "spec", "tolerations", NULL)) {
                for (uint32_t i = 0; i < nu; i++)
                    json_array_append_new(ops, op("add", "/spec/tolerations/-", toleration_json(ut[i])));
            } else {
                json_t *tl = json_array();
                for (uint32_t i = 0; i < nu; i++) json_array_append_new(tl, toleration_json(ut[i]));
                json_array_append_new(ops, op("add", "/spec/tolerations", tl));
            }
            ks_why_fix *f = cand_new(l, 0);
            pod_change(f, KS_WHY_TOLERATE, p, ops,
                       ks_xasprintf("add a toleration for %s to pod %s/%s", sets[k], ks_str(p->ns), ks_str(p->name)));
        }
        for (uint32_t r = 0; r < nbest[k]; r++) {
            const ks_taint *vt[8];
            uint32_t nv = untolerated(p, best[k][r]->node, vt, 8);
            remove_taints_fix(c0, best[k][r]->node, vt, nv, sets[k], l);
        }
    }
}

static void gen_uncordon(const ks_cluster *c0, const ks_pod *p, const why_capture *cap, const char *only, cand_list *l) {
    const why_node *best[2];
    uint32_t nb = reps(cap, p, "NodeUnschedulable", only, best, l->max_reps);
    for (uint32_t r = 0; r < nb; r++) {
        const ks_node *n = best[r]->node;
        if (!tpath(node_tree(c0, n), "spec", "unschedulable", NULL)) continue;
        ks_why_fix *f = cand_new(l, 0);
        node_change(f, KS_WHY_UNCORDON, n, json_pack("[o]", op("remove", "/spec/unschedulable", NULL)),
                    ks_xasprintf("uncordon node %s", ks_str(n->name)), ks_xasprintf("kubectl uncordon %s", ks_str(n->name)));
    }
}

/* Labels node n needs to match the pod's nodeSelector and its first
 * satisfiable required term; false when a term cannot be met by adding. */
static bool needed_labels(const ks_pod *p, const ks_node *n, json_t *labels) {
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        const ks_label *kv = &p->node_selector.kv[i];
        ks_id v;
        if (!ks_labels_get(&n->labels, kv->key, &v) || v != kv->value)
            json_object_set_new(labels, ks_str(kv->key), json_string(ks_str(kv->value)));
    }
    if (!p->has_required_node_affinity || !p->required_node_affinity.nterms) return true;
    for (uint32_t ti = 0; ti < p->required_node_affinity.nterms; ti++) {
        const ks_node_selector_term *term = &p->required_node_affinity.terms[ti];
        if (term->nfields) continue;
        json_t *add = json_object();
        bool ok = term->nexpr > 0;
        for (uint32_t j = 0; ok && j < term->nexpr; j++) {
            const ks_requirement *r = &term->exprs[j];
            if (ks_requirement_matches(r, &n->labels)) continue;
            char num[32];
            switch (r->op) {
            case KS_OP_IN: json_object_set_new(add, ks_str(r->key), json_string(ks_str(r->values[0]))); break;
            case KS_OP_EXISTS: json_object_set_new(add, ks_str(r->key), json_string("true")); break;
            case KS_OP_GT:
                snprintf(num, sizeof(num), "%lld", (long long)r->num + 1);
                json_object_set_new(add, ks_str(r->key), json_string(num));
                break;
            case KS_OP_LT:
                snprintf(num, sizeof(num), "%lld", (long long)r->num - 1);
                json_object_set_new(add, ks_str(r->key), json_string(num));
                break;
            default: ok = false;
            }
        }
        if (ok) {
            json_object_update(labels, add);
            json_decref(add);
            return true;
        }
        json_decref(add);
    }
    return false;
}

static void gen_affinity(const ks_cluster *c0, const ks_pod *p, const ks_tree *t, const why_capture *cap, const char *only, bool pod_side,
                         cand_list *l) {
    if (!any_reason(cap, "NodeAffinity", NULL) && !(cap->prefilter_plugin && !strcmp(cap->prefilter_plugin, "NodeAffinity")))
        return;
    const char *ns = ks_str(p->ns), *nm = ks_str(p->name);
    if (pod_side) {
        const ks_tree *sel = tpath(t, "spec", "nodeSelector", NULL);
        for (uint32_t i = 0; sel && sel->type == KT_MAP && i < sel->n; i++) {
            char *e = esc(sel->keys[i]);
            char *path = ks_xasprintf("/spec/nodeSelector/%s", e);
            ks_why_fix *f = cand_new(l, 0);
            pod_change(f, KS_WHY_DROP_SELECTOR, p, json_pack("[o]", op("remove", path, NULL)),
                       ks_xasprintf("drop nodeSelector %s=%s from pod %s/%s", sel->keys[i],
                                    sel->items[i]->text ? sel->items[i]->text : "", ns, nm));
            free(path);
            free(e);
        }
        const char *req = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";
        const ks_tree *terms = tpath(tpath(t, "spec", "affinity", "nodeAffinity"),
                                     "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", NULL);
        if (terms && terms->type == KT_SEQ) {
            ks_why_fix *f = cand_new(l, 1);
            pod_change(f, KS_WHY_DROP_TERM, p, json_pack("[o]", op("remove", req, NULL)),
                       ks_xasprintf("drop the required node affinity of pod %s/%s", ns, nm));
            for (uint32_t i = 0; i < terms->n; i++) {
                const ks_tree *ex = kt_get(terms->items[i], "matchExpressions");
                for (uint32_t j = 0; ex && ex->type == KT_SEQ && ex->n > 1 && j < ex->n; j++) {
                    const ks_tree *k = kt_get(ex->items[j], "key"), *o = kt_get(ex->items[j], "operator");
                    char *path = ks_xasprintf("%s/nodeSelectorTerms/%u/matchExpressions/%u", req, i, j);
                    ks_why_fix *g = cand_new(l, 0.5);
                    pod_change(g, KS_WHY_DROP_TERM, p, json_pack("[o]", op("remove", path, NULL)),
                               ks_xasprintf("drop the node affinity expression %s %s (term %u) from pod %s/%s",
                                            k && k->text ? k->text : "?", o && o->text ? o->text : "?", i, ns, nm));
                    free(path);
                }
            }
        }
    }
    const why_node *best[2];
    uint32_t nb = reps(cap, p, "NodeAffinity", only, best, l->max_reps);
    for (uint32_t r = 0; r < nb; r++) {
        const ks_node *n = best[r]->node;
        json_t *labels = json_object();
        if (!needed_labels(p, n, labels) || !json_object_size(labels)) {
            json_decref(labels);
            continue;
        }
        json_t *ops = json_array();
        ks_strbuf desc, cmd;
        ks_sb_init(&desc);
        ks_sb_init(&cmd);
        ks_sb_printf(&cmd, "kubectl label node %s", ks_str(n->name));
        bool has_labels = tpath(node_tree(c0, n), "metadata", "labels", NULL) != NULL;
        const char *k;
        json_t *v;
        json_object_foreach(labels, k, v) {
            ks_sb_printf(&desc, "%s%s=%s", desc.len ? ", " : "", k, json_string_value(v));
            ks_sb_printf(&cmd, " %s=%s", k, json_string_value(v));
            if (has_labels) {
                char *e = esc(k);
                char *path = ks_xasprintf("/metadata/labels/%s", e);
                json_array_append_new(ops, op("add", path, json_incref(v)));
                free(path);
                free(e);
            }
        }
        if (!has_labels) json_array_append_new(ops, op("add", "/metadata/labels", json_incref(labels)));
        ks_sb_printf(&cmd, " --overwrite");
        ks_why_fix *f = cand_new(l, 0);
        node_change(f, KS_WHY_ADD_LABEL, n, ops, ks_xasprintf("label node %s %s", ks_str(n->name), ks_sb_str(&desc)),
                    ks_xstrdup(ks_sb_str(&cmd)));
        ks_sb_free(&desc);
        ks_sb_free(&cmd);
        json_decref(labels);
    }
}

/* The container index with the largest request of res, -1 when none. */
static int largest_container(const ks_pod *p, ks_id res, int64_t *val) {
    int best = -1;
    *val = 0;
    for (uint32_t i = 0; i < p->ncontainers; i++) {
        int64_t v = ks_resource_get(&p->containers[i].requests, res);
        if (v > *val) {
            *val = v;
            best = (int)i;
        }
    }
    return best;
}

static void gen_lower_request(const ks_pod *p, const ks_tree *t, const why_capture *cap, cand_list *l) {
    if (p->has_pod_level_requests) return;
    /* The node that needs the smallest relative cut. */
    const why_node *best = NULL;
    double best_cut = 2;
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin || strcmp(n->plugin, "NodeResourcesFit") != 0) continue;
        double cut = 0;
        bool ok = true;
        for (uint32_t j = 0; ok && j < n->nreasons; j++) {
            const char *rn = reason_resource(n->reasons[j]);
            if (!rn) {
                ok = false;
                break;
            }
            ks_id res = ks_intern(rn);
            int64_t req = ks_resource_get(&p->requests, res), fr = ks_resource_get(&n->free, res);
            if (fr <= 0 || req <= 0) ok = false;
            else if ((double)(req - fr) / (double)req > cut) cut = (double)(req - fr) / (double)req;
        }
        if (ok && cut < best_cut) {
            best_cut = cut;
            best = n;
        }
    }
    if (!best) return;
    const ks_tree *cs = tpath(t, "spec", "containers", NULL);
    if (!cs || cs->type != KT_SEQ) return;
    json_t *ops = json_array();
    ks_strbuf desc;
    ks_sb_init(&desc);
    bool ok = true;
    for (uint32_t j = 0; ok && j < best->nreasons; j++) {
        ks_id res = ks_intern(reason_resource(best->reasons[j]));
        int64_t req = ks_resource_get(&p->requests, res), fr = ks_resource_get(&best->free, res);
        /* Round down to whole Mi for memory-like amounts, as people write them. */
        if (res != KS_RES_CPU && fr > (1 << 20)) fr -= fr % (1 << 20);
        int64_t cv;
        int ci = largest_container(p, res, &cv);
        int64_t nv = cv - (req - fr);
        if (ci < 0 || nv < 0 || (uint32_t)ci >= cs->n) {
            ok = false;
            break;
        }
        char amount[64], from[64];
        format_amount(res, nv, amount, sizeof(amount));
        format_amount(res, cv, from, sizeof(from));
        const ks_tree *c = cs->items[ci];
        const ks_tree *rs = kt_get(c, "resources");
        const ks_tree *rq = rs ? kt_get(rs, "requests") : NULL;
        char *e = esc(ks_str(res));
        char *path;
        json_t *val;
        if (rq) {
            path = ks_xasprintf("/spec/containers/%d/resources/requests/%s", ci, e);
            val = json_string(amount);
        } else if (rs) {
            path = ks_xasprintf("/spec/containers/%d/resources/requests", ci);
            val = json_pack("{s:s}", ks_str(res), amount);
        } else {
            path = ks_xasprintf("/spec/containers/%d/resources", ci);
            val = json_pack("{s:{s:s}}", "requests", ks_str(res), amount);
        }
        json_array_append_new(ops, op("add", path, val));
        ks_sb_printf(&desc, "%s%s from %s to %s", desc.len ? ", " : "", ks_str(res), from, amount);
        if (p->ncontainers > 1) ks_sb_printf(&desc, " (container %s)", p->containers[ci].name);
        free(path);
        free(e);
    }
    if (ok && json_array_size(ops)) {
        ks_why_fix *f = cand_new(l, best_cut);
        pod_change(f, KS_WHY_LOWER_REQUEST, p, json_incref(ops),
                   ks_xasprintf("lower the request of pod %s/%s: %s (fits %s)", ks_str(p->ns), ks_str(p->name),
                                ks_sb_str(&desc), ks_str(best->node->name)));
    }
    json_decref(ops);
    ks_sb_free(&desc);
}

static bool is_mirror(const ks_pod *p) {
    return ks_annotations_get(&p->annotations, ks_intern("kubernetes.io/config.mirror")) != NULL;
}

static int cmp_victim(const void *a, const void *b) {
    const ks_pod *x = *(ks_pod *const *)a, *y = *(ks_pod *const *)b;
    int32_t px = ks_pod_priority(x), py = ks_pod_priority(y);
    if (px != py) return px < py ? -1 : 1;
    if (x->requests.milli_cpu != y->requests.milli_cpu) return x->requests.milli_cpu > y->requests.milli_cpu ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* Pods to evict from node n, lowest priority first, until p fits; 0 when
 * no set of evictable pods (below max_prio) makes room. */
static uint32_t plan_evictions(const ks_pod *p, const why_node *n, ks_pod **onnode, uint32_t non, int32_t max_prio,
                               ks_pod **out) {
    ks_pod **cands = ks_xcalloc(non ? non : 1, sizeof(ks_pod *));
    uint32_t nc = 0;
    for (uint32_t i = 0; i < non; i++) {
        const ks_pod *q = onnode[i];
        const ks_owner_ref *o = ks_pod_controller(q);
        if (is_mirror(q) || (o && !strcmp(ks_str(o->kind), "DaemonSet"))) continue;
        if (ks_pod_priority(q) >= max_prio) continue;
        cands[nc++] = onnode[i];
    }
    sort_n(cands, nc, sizeof(ks_pod *), cmp_victim);
    why_node t = *n;
    memset(&t.free, 0, sizeof(t.free));
    ks_resource_copy(&t.free, &n->free);
    uint32_t k = 0;
    bool fits = fits_free(p, &t);
    while (!fits && k < nc) {
        ks_resource_add(&t.free, NULL, &cands[k]->requests);
        t.npods--;
        out[k] = cands[k];
        k++;
        fits = fits_free(p, &t);
    }
    ks_resource_fini(&t.free);
    free(cands);
    return fits ? k : 0;
}

static void gen_evict(const ks_pod *p, const why_capture *cap, const ks_cluster *final, const char *only, cand_list *l) {
    /* Pods on each rejected node, from the cluster as the run left it. */
    int32_t prio = ks_pod_priority(p);
    const why_node *bestn[2] = {0};
    ks_pod **bestv[2] = {0};
    uint32_t bestk[2] = {0};
    for (int pass = 0; pass < 2 && !bestk[0]; pass++) {
        for (uint32_t i = 0; i < cap->nnodes; i++) {
            const why_node *n = &cap->nodes[i];
            if (!n->plugin || strcmp(n->plugin, "NodeResourcesFit") != 0) continue;
            if (only && strcmp(ks_str(n->node->name), only) != 0) continue;
            uint32_t non = 0;
            ks_pod **onnode = ks_xcalloc(final->pods.n + 1, sizeof(ks_pod *));
            for (uint32_t j = 0; j < final->pods.n; j++)
                if (final->pods.v[j]->node_name == n->node->name) onnode[non++] = final->pods.v[j];
            ks_pod **v = ks_xcalloc(non + 1, sizeof(ks_pod *));
            uint32_t k = plan_evictions(p, n, onnode, non, pass ? INT32_MAX : prio, v);
            free(onnode);
            int slot = -1;
            if (k && (!bestk[0] || k < bestk[0])) slot = 0;
            else if (k && (!bestk[1] || k < bestk[1])) slot = 1;
            if (slot == 0) {
                free(bestv[1]);
                bestn[1] = bestn[0], bestv[1] = bestv[0], bestk[1] = bestk[0];
            } else if (slot == 1) {
                free(bestv[1]);
            }
            if (slot >= 0) {
                bestn[slot] = n, bestv[slot] = v, bestk[slot] = k;
            } else {
                free(v);
            }
        }
    }
    for (uint32_t s = 0; s < 2; s++) {
        if (!bestk[s]) continue;
        if (s >= l->max_reps) {
            free(bestv[s]);
            continue;
        }
        ks_why_fix *f = cand_new(l, bestk[s]);
        for (uint32_t j = 0; j < bestk[s]; j++) {
            const ks_pod *q = bestv[s][j];
            ks_why_change *c = fix_add(f);
            c->kind = KS_WHY_EVICT;
            c->object = "Pod";
            c->ns = ks_xstrdup(ks_str(q->ns));
            c->name = ks_xstrdup(ks_str(q->name));
            c->summary = ks_xasprintf("evict pod %s/%s (priority %d) from node %s%s", c->ns, c->name, ks_pod_priority(q),
                                      ks_str(bestn[s]->node->name),
                                      controller_recreates(q) ? "; its controller recreates it" : "");
            c->command = ks_xasprintf("kubectl delete pod %s -n %s", c->name, c->ns);
            f->objects++;
        }
        free(bestv[s]);
    }
}

static bool alloc_fits(const ks_pod *p, const ks_node *n) {
    const ks_resource *r = &p->requests, *a = &n->allocatable;
    if (r->milli_cpu > a->milli_cpu || r->memory > a->memory || r->ephemeral_storage > a->ephemeral_storage) return false;
    if (a->allowed_pods < 1) return false;
    for (uint32_t i = 0; i < r->nscalar; i++)
        if (r->scalars[i].val > ks_resource_get(a, r->scalars[i].name)) return false;
    return true;
}

static void gen_add_node(const ks_pod *p, const why_capture *cap, const ks_cluster *c0, cand_list *l) {
    const ks_node *best = NULL;
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin || strcmp(n->plugin, "NodeResourcesFit") != 0 || !node_tree(c0, n->node)) continue;
        if (!alloc_fits(p, n->node)) continue;
        if (!best || n->node->allocatable.milli_cpu < best->allocatable.milli_cpu ||
            (n->node->allocatable.milli_cpu == best->allocatable.milli_cpu &&
             strcmp(ks_str(n->node->name), ks_str(best->name)) < 0))
            best = n->node;
    }
    if (!best) return;
    char *name = NULL;
    for (int k = 1; !name || find_node(c0, name) >= 0; k++) {
        free(name);
        name = ks_xasprintf("%s-like-%d", ks_str(best->name), k);
    }
    char cpu[32], mem[32];
    format_amount(KS_RES_CPU, best->allocatable.milli_cpu, cpu, sizeof(cpu));
    format_amount(KS_RES_MEMORY, best->allocatable.memory, mem, sizeof(mem));
    ks_why_fix *f = cand_new(l, 1);
    ks_why_change *c = fix_add(f);
    c->kind = KS_WHY_ADD_NODE;
    c->object = "Node";
    c->ns = ks_xstrdup("");
    c->name = name;
    c->like = ks_xstrdup(ks_str(best->name));
    c->summary = ks_xasprintf("add a node like %s (%s cpu, %s memory allocatable, same labels and taints) as %s",
                              c->like, cpu, mem, name);
    c->command = ks_xasprintf("# scale up the node group of %s by one node", c->like);
    f->objects++;
}

static void gen_spread(const ks_pod *p, const ks_tree *t, const why_capture *cap, cand_list *l) {
    if (!any_reason(cap, "PodTopologySpread", NULL)) return;
    const ks_tree *sc = tpath(t, "spec", "topologySpreadConstraints", NULL);
    if (!sc || sc->type != KT_SEQ) return;
    for (uint32_t k = 0; k < p->nspread && k < sc->n; k++) {
        const ks_spread_constraint *s = &p->spread[k];
        if (s->when_unsatisfiable != KS_DO_NOT_SCHEDULE) continue;
        /* The skew placing the pod would make on the best rejected node. */
        uint32_t minc = UINT32_MAX;
        for (uint32_t i = 0; i < cap->ndom[k]; i++)
            if (cap->dom[k][i].count < minc) minc = cap->dom[k][i].count;
        if (minc == UINT32_MAX) minc = 0;
        uint32_t self = ks_selector_matches(&s->selector, &p->labels) ? 1 : 0;
        uint32_t need = UINT32_MAX;
        for (uint32_t i = 0; i < cap->nnodes; i++) {
            const why_node *n = &cap->nodes[i];
            if (!n->plugin || strcmp(n->plugin, "PodTopologySpread") != 0) continue;
            ks_id v;
            if (!ks_labels_get(&n->node->labels, s->topology_key, &v)) continue;
            for (uint32_t d = 0; d < cap->ndom[k]; d++)
                if (cap->dom[k][d].value == v && cap->dom[k][d].count + self - minc < need)
                    need = cap->dom[k][d].count + self - minc;
        }
        char path[96];
        if (need != UINT32_MAX && (int32_t)need > s->max_skew) {
            snprintf(path, sizeof(path), "/spec/topologySpreadConstraints/%u/maxSkew", k);
            ks_why_fix *f = cand_new(l, (double)need - s->max_skew);
            pod_change(f, KS_WHY_RELAX_SPREAD, p, json_pack("[o]", op("replace", path, json_integer(need))),
                       ks_xasprintf("raise maxSkew of the %s spread constraint of pod %s/%s from %d to %u",
                                    ks_str(s->topology_key), ks_str(p->ns), ks_str(p->name), s->max_skew, need));
        }
        snprintf(path, sizeof(path), "/spec/topologySpreadConstraints/%u/whenUnsatisfiable", k);
        ks_why_fix *f = cand_new(l, 1);
        pod_change(f, KS_WHY_RELAX_SPREAD, p, json_pack("[o]", op("replace", path, json_string("ScheduleAnyway"))),
                   ks_xasprintf("make the %s spread constraint of pod %s/%s ScheduleAnyway", ks_str(s->topology_key),
                                ks_str(p->ns), ks_str(p->name)));
    }
}

static void gen_pod_affinity(const ks_pod *p, const ks_tree *t, const why_capture *cap, cand_list *l) {
    static const struct {
        const char *reason, *field, *what;
    } kinds[] = {
        {"didn't match pod affinity rules", "podAffinity", "pod affinity"},
        {"didn't match pod anti-affinity rules", "podAntiAffinity", "pod anti-affinity"},
    };
    for (int k = 0; k < 2; k++) {
        if (!any_reason(cap, "InterPodAffinity", kinds[k].reason)) continue;
        const ks_tree *req = tpath(tpath(t, "spec", "affinity", kinds[k].field),
                                   "requiredDuringSchedulingIgnoredDuringExecution", NULL, NULL);
        if (!req || req->type != KT_SEQ) continue;
        for (uint32_t i = 0; i < req->n; i++) {
            char *path = req->n == 1
                             ? ks_xasprintf("/spec/affinity/%s/requiredDuringSchedulingIgnoredDuringExecution", kinds[k].field)
                             : ks_xasprintf("/spec/affinity/%s/requiredDuringSchedulingIgnoredDuringExecution/%u",
                                            kinds[k].field, i);
            const ks_tree *tk = kt_get(req->items[i], "topologyKey");
            char *sel = kt_get(req->items[i], "labelSelector") ? kt_to_json(kt_get(req->items[i], "labelSelector"), 0)
                                                               : ks_xstrdup("{}");
            ks_why_fix *f = cand_new(l, 1);
            pod_change(f, KS_WHY_DROP_TERM, p, json_pack("[o]", op("remove", path, NULL)),
                       ks_xasprintf("drop the required %s term %u (topologyKey %s, labelSelector %s) from pod %s/%s",
                                    kinds[k].what, i, tk && tk->text ? tk->text : "?", sel, ks_str(p->ns),
                                    ks_str(p->name)));
            free(sel);
            free(path);
        }
    }
}

/* The container port entries (container, port index) of p whose host
 * port conflicts with node n's used ports. */
static void gen_host_ports(const ks_pod *p, const ks_tree *t, const why_capture *cap, const ks_cluster *final,
                           const char *only, bool pod_side, cand_list *l) {
    if (!any_reason(cap, "NodePorts", NULL)) return;
    const ks_tree *cs = tpath(t, "spec", "containers", NULL);
    for (uint32_t ci = 0; pod_side && cs && cs->type == KT_SEQ && ci < cs->n && ci < p->ncontainers; ci++) {
        const ks_tree *ports = kt_get(cs->items[ci], "ports");
        for (uint32_t j = 0; ports && ports->type == KT_SEQ && j < ports->n; j++) {
            const ks_tree *hp = kt_get(ports->items[j], "hostPort");
            if (!hp || hp->type != KT_INT || hp->ival == 0) continue;
            char *path = ks_xasprintf("/spec/containers/%u/ports/%u/hostPort", ci, j);
            ks_why_fix *f = cand_new(l, 1);
            pod_change(f, KS_WHY_DROP_HOST_PORT, p, json_pack("[o]", op("remove", path, NULL)),
                       ks_xasprintf("drop hostPort %lld of container %s from pod %s/%s", (long long)hp->ival,
                                    p->containers[ci].name, ks_str(p->ns), ks_str(p->name)));
            free(path);
        }
    }
    /* Cluster side: evict the pods holding the ports on a node. */
    const why_node *best[2];
    uint32_t nb = reps(cap, p, "NodePorts", only, best, l->max_reps);
    for (uint32_t r = 0; r < nb; r++) {
        ks_why_fix *f = NULL;
        for (uint32_t i = 0; i < final->pods.n; i++) {
            const ks_pod *q = final->pods.v[i];
            if (q->node_name != best[r]->node->name) continue;
            bool clash = false;
            for (uint32_t a = 0; a < p->nhost_ports && !clash; a++)
                for (uint32_t b = 0; b < q->nhost_ports && !clash; b++) {
                    const ks_container_port *x = &p->host_ports[a], *y = &q->host_ports[b];
                    ks_id any = ks_intern("0.0.0.0");
                    clash = x->host_port == y->host_port && x->protocol == y->protocol &&
                            (x->host_ip == y->host_ip || !x->host_ip || !y->host_ip || x->host_ip == any ||
                             y->host_ip == any);
                }
            if (!clash) continue;
            if (!f) f = cand_new(l, 0);
            ks_why_change *c = fix_add(f);
            c->kind = KS_WHY_EVICT;
            c->object = "Pod";
            c->ns = ks_xstrdup(ks_str(q->ns));
            c->name = ks_xstrdup(ks_str(q->name));
            c->summary = ks_xasprintf("evict pod %s/%s (priority %d, holds the host port) from node %s%s", c->ns,
                                      c->name, ks_pod_priority(q), ks_str(q->node_name),
                                      controller_recreates(q) ? "; its controller recreates it" : "");
            c->command = ks_xasprintf("kubectl delete pod %s -n %s", c->name, c->ns);
            f->objects++;
            f->amount++;
        }
    }
}

/* Existing pods whose required anti-affinity keeps p off a node: evict
 * the ones in the node's domain. */
static bool anti_term_matches(const ks_pod_affinity_term *t, const ks_pod *owner, const ks_pod *p) {
    bool ns_ok;
    if (t->nnamespaces == 0 && !t->has_ns_selector) ns_ok = p->ns == owner->ns;
    else {
        ns_ok = t->has_ns_selector && t->ns_selector.nreq == 0 && !t->ns_selector.nothing;
        for (uint32_t i = 0; i < t->nnamespaces && !ns_ok; i++) ns_ok = t->namespaces[i] == p->ns;
    }
    return ns_ok && ks_selector_matches(&t->selector, &p->labels);
}

static void gen_existing_anti(const ks_pod *p, const why_capture *cap, const ks_cluster *final, const char *only,
                              cand_list *l) {
    if (!any_reason(cap, "InterPodAffinity", "existing pods anti-affinity")) return;
    const why_node *best[2];
    uint32_t nb = reps(cap, p, "InterPodAffinity", only, best, l->max_reps);
    for (uint32_t r = 0; r < nb; r++) {
        const ks_node *n = best[r]->node;
        ks_why_fix *f = NULL;
        for (uint32_t i = 0; i < final->pods.n; i++) {
            const ks_pod *q = final->pods.v[i];
            if (!q->node_name || !q->nreq_anti) continue;
            const ks_node *qn = ks_cluster_node(final, q->node_name);
            bool blocks = false;
            for (uint32_t k = 0; qn && k < q->nreq_anti && !blocks; k++) {
                const ks_pod_affinity_term *t = &q->req_anti[k];
                ks_id a, b;
                blocks = anti_term_matches(t, q, p) && ks_labels_get(&qn->labels, t->topology_key, &a) &&
                         ks_labels_get(&n->labels, t->topology_key, &b) && a == b;
            }
            if (!blocks) continue;
            if (!f) f = cand_new(l, 0);
            ks_why_change *c = fix_add(f);
            c->kind = KS_WHY_EVICT;
            c->object = "Pod";
            c->ns = ks_xstrdup(ks_str(q->ns));
            c->name = ks_xstrdup(ks_str(q->name));
            c->summary = ks_xasprintf("evict pod %s/%s (priority %d, its anti-affinity keeps the pod off %s) from node %s%s",
                                      c->ns, c->name, ks_pod_priority(q), ks_str(n->name), ks_str(q->node_name),
                                      controller_recreates(q) ? "; its controller recreates it" : "");
            c->command = ks_xasprintf("kubectl delete pod %s -n %s", c->name, c->ns);
            f->objects++;
            f->amount++;
        }
    }
}

static int cmp_class_value(const void *a, const void *b) {
    const ks_priority_class *x = *(ks_priority_class *const *)a, *y = *(ks_priority_class *const *)b;
    return (x->value > y->value) - (x->value < y->value);
}

static void gen_priority(const ks_pod *p, const ks_tree *t, const ks_cluster *c0, cand_list *l) {
    ks_priority_class **v = ks_xcalloc(c0->priority_classes.n + 1, sizeof(*v));
    uint32_t n = 0;
    for (uint32_t i = 0; i < c0->priority_classes.n; i++) {
        ks_priority_class *pc = c0->priority_classes.v[i];
        if (pc->value > ks_pod_priority(p) && pc->preemption_policy != KS_PREEMPT_NEVER) v[n++] = pc;
    }
    sort_n(v, n, sizeof(*v), cmp_class_value);
    for (uint32_t i = 0; i < n && i < 2; i++) {
        json_t *ops = json_array();
        const ks_tree *spec = kt_get(t, "spec");
        json_array_append_new(ops, op(kt_get(spec, "priorityClassName") ? "replace" : "add", "/spec/priorityClassName",
                                      json_string(ks_str(v[i]->name))));
        if (kt_get(spec, "priority")) json_array_append_new(ops, op("remove", "/spec/priority", NULL));
        if (kt_get(spec, "preemptionPolicy")) json_array_append_new(ops, op("remove", "/spec/preemptionPolicy", NULL));
        ks_why_fix *f = cand_new(l, 1 + i);
        pod_change(f, KS_WHY_PRIORITY, p, ops,
                   ks_xasprintf("give pod %s/%s priorityClassName %s (priority %d, preempts lower priorities; "
                                "priority is set at creation: recreate the pod)",
                                ks_str(p->ns), ks_str(p->name), ks_str(v[i]->name), v[i]->value));
    }
    free(v);
}

/* Every candidate for pod p from what its last attempt saw. `only`: node
 * changes on this node only; pod_side false: no pod changes. */
static void gen_candidates(why_ctx *w, const ks_pod *p, const ks_tree *t, const why_capture *cap, const ks_cluster *final,
                           const char *only, bool pod_side, bool gated, cand_list *l) {
    if (gated) {
        if (pod_side) gen_gates(p, t, l);
        return;
    }
    gen_taints(w->c0, p, t, cap, only, pod_side, l);
    gen_uncordon(w->c0, p, cap, only, l);
    gen_affinity(w->c0, p, t, cap, only, pod_side, l);
    if (any_reason(cap, "NodeResourcesFit", NULL)) {
        if (pod_side) gen_lower_request(p, t, cap, l);
        gen_evict(p, cap, final, only, l);
        if (!only) gen_add_node(p, cap, w->c0, l);
    }
    gen_host_ports(p, t, cap, final, only, pod_side, l);
    gen_existing_anti(p, cap, final, only, l);
    if (pod_side) {
        gen_spread(p, t, cap, l);
        gen_pod_affinity(p, t, cap, l);
        if (cap->postfilter_msg) gen_priority(p, t, w->c0, l);
    }
}

/* ------------------------------------------------------------------ */
/* Verification and side effects. */

static const ks_sim_pod *base_pod(const why_ctx *w, uint64_t key) {
    uintptr_t i = (uintptr_t)ks_map_get(&w->base_index, key);
    return i ? &w->base.pods[i - 1] : NULL;
}

static void add_effect(ks_why_fix *f, ks_why_effect_kind k, const ks_pod *p, const char *before, const char *after) {
    f->effects = ks_xrealloc(f->effects, (f->neffects + 1) * sizeof(ks_why_effect));
    char buf[512];
    f->effects[f->neffects++] = (ks_why_effect){k, ks_xstrdup(ks_pod_fullname(p, buf, sizeof(buf))),
                                                before ? ks_xstrdup(before) : NULL, after ? ks_xstrdup(after) : NULL};
    if (k != KS_WHY_ALSO_SCHEDULED && !(k == KS_WHY_REPLACED && after)) f->harm++;
}

static const char *evicted_from(const ks_cluster *c, uint64_t key) {
    int at = find_pod(c, key);
    return at >= 0 && c->pods.v[at]->node_name ? ks_str(c->pods.v[at]->node_name) : NULL;
}

static void side_effects(why_ctx *w, ks_why_fix *f, const why_run *r, uint64_t target) {
    f->unblocks = 0;
    for (uint32_t i = 0; i < r->res.npods; i++) {
        const ks_sim_pod *sp = &r->res.pods[i];
        bool now = sp->state == KS_SIM_SCHEDULED;
        const ks_sim_pod *b = base_pod(w, sp->input->key);
        bool was = b && b->state == KS_SIM_SCHEDULED;
        if (now && !was && b) f->unblocks++;
        if (sp->input->key == target) continue;
        if (!b) {
            const char *from = NULL;
            for (uint32_t j = 0; j < f->nchanges; j++)
                if (f->changes[j].kind == KS_WHY_EVICT && pod_key_of(f->changes[j].ns, f->changes[j].name) == sp->input->key)
                    from = evicted_from(w->c0, sp->input->key);
            add_effect(f, KS_WHY_REPLACED, sp->input, from, now ? sp->node : NULL);
        } else if (was && !now) {
            add_effect(f, KS_WHY_NOW_PENDING, sp->input, b->node, NULL);
        } else if (was && now && strcmp(b->node, sp->node) != 0) {
            add_effect(f, KS_WHY_MOVED, sp->input, b->node, sp->node);
        } else if (!was && now) {
            add_effect(f, KS_WHY_ALSO_SCHEDULED, sp->input, NULL, sp->node);
        }
    }
    for (uint32_t i = 0; i < r->res.nvictims; i++) {
        const ks_sim_pod *v = &r->res.victims[i];
        if (!ks_map_get(&w->base_victims, v->pod->key)) add_effect(f, KS_WHY_PREEMPTED, v->pod, v->node, NULL);
    }
}

static int cmp_fix(const void *a, const void *b) {
    const ks_why_fix *x = a, *y = b;
    if (x->objects != y->objects) return x->objects < y->objects ? -1 : 1;
    if (x->harm != y->harm) return x->harm < y->harm ? -1 : 1;
    if (x->amount != y->amount) return x->amount < y->amount ? -1 : 1;
    return strcmp(x->changes[0].summary, y->changes[0].summary);
}

static bool same_fix(const ks_why_fix *a, const ks_why_fix *b) {
    if (a->nchanges != b->nchanges) return false;
    for (uint32_t i = 0; i < a->nchanges; i++) {
        bool found = false;
        for (uint32_t j = 0; j < b->nchanges && !found; j++)
            found = strcmp(a->changes[i].summary, b->changes[j].summary) == 0;
        if (!found) return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* The diagnosis: reasons as kube-scheduler counts them, node classes. */

static void add_reason(ks_why_pod *wp, const char *text) {
    for (uint32_t i = 0; i < wp->nreasons; i++) {
        if (strcmp(wp->reasons[i].text, text) == 0) {
            wp->reasons[i].nodes++;
            return;
        }
    }
    wp->reasons = ks_xrealloc(wp->reasons, (wp->nreasons + 1) * sizeof(ks_why_reason));
    wp->reasons[wp->nreasons++] = (ks_why_reason){ks_xstrdup(text), 1};
}

static int cmp_reason(const void *a, const void *b) {
    const ks_why_reason *x = a, *y = b;
    if (x->nodes != y->nodes) return x->nodes > y->nodes ? -1 : 1;
    return strcmp(x->text, y->text);
}

static void class_detail(ks_why_class *c, char *s) {
    c->details = ks_xrealloc(c->details, (c->ndetails + 1) * sizeof(char *));
    c->details[c->ndetails++] = s;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The numbers behind a class's verdict, over its nodes. */
static void explain_class(const ks_pod *p, const why_capture *cap, const ks_cluster *final, ks_why_class *c,
                          const why_node **members,
                          uint32_t nm) {
    const why_node *rep = members[0];
    for (uint32_t j = 0; j < c->nreasons; j++) {
        const char *rn = reason_resource(c->reasons[j]);
        if (rn) {
            ks_id res = ks_intern(rn);
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (uint32_t i = 0; i < nm; i++) {
                int64_t v = ks_resource_get(&members[i]->free, res);
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
            char need[32], a[32], b[32];
            format_amount(res, ks_resource_get(&p->requests, res), need, sizeof(need));
            if (lo < 0) lo = 0;
            if (hi < 0) hi = 0;
            format_amount(res, lo, a, sizeof(a));
            format_amount(res, hi, b, sizeof(b));
            if (lo == hi) class_detail(c, ks_xasprintf("%s: needs %s, has %s free", rn, need, a));
            else class_detail(c, ks_xasprintf("%s: needs %s, has %s to %s free", rn, need, a, b));
        } else if (strcmp(c->reasons[j], "Too many pods") == 0) {
            class_detail(c, ks_xasprintf("pods: %u running, %lld allowed", rep->npods,
                                         (long long)rep->node->allocatable.allowed_pods));
        }
    }
    if (!strcmp(c->plugin, "TaintToleration")) {
        const ks_taint *ut[8];
        uint32_t nu = untolerated(p, rep->node, ut, 8);
        for (uint32_t i = 0; i < nu; i++) {
            char tt[256];
            taint_text(ut[i], tt, sizeof(tt));
            class_detail(c, ks_xasprintf("taint %s is not tolerated by the pod", tt));
        }
    } else if (!strcmp(c->plugin, "NodeAffinity")) {
        for (uint32_t i = 0; i < p->node_selector.n; i++) {
            const ks_label *kv = &p->node_selector.kv[i];
            ks_id v;
            if (!ks_labels_get(&rep->node->labels, kv->key, &v))
                class_detail(c, ks_xasprintf("nodeSelector %s=%s: %s has no %s label", ks_str(kv->key), ks_str(kv->value),
                                             ks_str(rep->node->name), ks_str(kv->key)));
            else if (v != kv->value)
                class_detail(c, ks_xasprintf("nodeSelector %s=%s: %s has %s=%s", ks_str(kv->key), ks_str(kv->value),
                                             ks_str(rep->node->name), ks_str(kv->key), ks_str(v)));
        }
        if (p->has_required_node_affinity && p->required_node_affinity.nterms &&
            !ks_node_selector_matches(&p->required_node_affinity, &rep->node->labels, rep->node->name)) {
            /* each term's first requirement the node fails */
            for (uint32_t ti = 0; ti < p->required_node_affinity.nterms; ti++) {
                const ks_node_selector_term *term = &p->required_node_affinity.terms[ti];
                for (uint32_t j = 0; j < term->nexpr; j++) {
                    const ks_requirement *r = &term->exprs[j];
                    if (ks_requirement_matches(r, &rep->node->labels)) continue;
                    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
                    char vals[256];
                    size_t o = 0;
                    vals[0] = '\0';
                    for (uint32_t k = 0; k < r->nvalues && o < sizeof(vals); k++)
                        o += (size_t)snprintf(vals + o, sizeof(vals) - o, "%s%s", k ? "," : "", ks_str(r->values[k]));
                    if (r->op == KS_OP_GT || r->op == KS_OP_LT) snprintf(vals, sizeof(vals), "%lld", (long long)r->num);
                    ks_id v;
                    bool has = ks_labels_get(&rep->node->labels, r->key, &v);
                    class_detail(c, ks_xasprintf("required node affinity term %u: %s %s%s%s%s: %s %s%s%s", ti,
                                                 ks_str(r->key), ops[r->op], r->nvalues || r->op >= KS_OP_GT ? " [" : "",
                                                 vals, r->nvalues || r->op >= KS_OP_GT ? "]" : "",
                                                 ks_str(rep->node->name), has ? "has " : "has no ",
                                                 has ? ks_str(r->key) : ks_str(r->key), has ? "=" : " label"));
                    if (has) {
                        char *d = c->details[c->ndetails - 1];
                        c->details[c->ndetails - 1] = ks_xasprintf("%s%s", d, ks_str(v));
                        free(d);
                    }
                    break;
                }
            }
        }
    } else if (!strcmp(c->plugin, "NodeUnschedulable")) {
        class_detail(c, ks_xstrdup("spec.unschedulable is true (cordoned)"));
    } else if (!strcmp(c->plugin, "PodTopologySpread")) {
        for (uint32_t k = 0; k < p->nspread; k++) {
            const ks_spread_constraint *s = &p->spread[k];
            if (s->when_unsatisfiable != KS_DO_NOT_SCHEDULE) continue;
            ks_id v;
            if (!ks_labels_get(&rep->node->labels, s->topology_key, &v)) {
                class_detail(c, ks_xasprintf("%s: %s has no such label", ks_str(s->topology_key), ks_str(rep->node->name)));
                continue;
            }
            uint32_t here = 0, minc = UINT32_MAX;
            ks_id minv = 0;
            for (uint32_t d = 0; d < cap->ndom[k]; d++) {
                if (cap->dom[k][d].value == v) here = cap->dom[k][d].count;
                if (cap->dom[k][d].count < minc) minc = cap->dom[k][d].count, minv = cap->dom[k][d].value;
            }
            uint32_t self = ks_selector_matches(&s->selector, &p->labels) ? 1 : 0;
            class_detail(c, ks_xasprintf("%s: %s=%s has %u matching pod(s), the fewest (%s=%s) %u: skew would be "
                                         "%u, maxSkew %d",
                                         ks_str(s->topology_key), ks_str(s->topology_key), ks_str(v), here,
                                         ks_str(s->topology_key), ks_str(minv), minc == UINT32_MAX ? 0 : minc,
                                         here + self - (minc == UINT32_MAX ? 0 : minc), s->max_skew));
        }
    } else if (!strcmp(c->plugin, "NodePorts")) {
        for (uint32_t i = 0; i < final->pods.n; i++) {
            const ks_pod *q = final->pods.v[i];
            if (q->node_name != rep->node->name) continue;
            for (uint32_t a = 0; a < p->nhost_ports; a++)
                for (uint32_t b = 0; b < q->nhost_ports; b++)
                    if (p->host_ports[a].host_port == q->host_ports[b].host_port &&
                        p->host_ports[a].protocol == q->host_ports[b].protocol)
                        class_detail(c, ks_xasprintf("host port %d/%s is taken on %s by %s/%s", p->host_ports[a].host_port,
                                                     ks_str(p->host_ports[a].protocol), ks_str(rep->node->name),
                                                     ks_str(q->ns), ks_str(q->name)));
        }
    } else if (!strcmp(c->plugin, "InterPodAffinity")) {
        for (uint32_t i = 0; i < final->pods.n; i++) {
            const ks_pod *q = final->pods.v[i];
            if (!q->node_name || !q->nreq_anti) continue;
            const ks_node *qn = ks_cluster_node(final, q->node_name);
            for (uint32_t k = 0; qn && k < q->nreq_anti; k++) {
                const ks_pod_affinity_term *t = &q->req_anti[k];
                ks_id a, b;
                if (anti_term_matches(t, q, p) && ks_labels_get(&qn->labels, t->topology_key, &a) &&
                    ks_labels_get(&rep->node->labels, t->topology_key, &b) && a == b)
                    class_detail(c, ks_xasprintf("%s/%s on %s has a required anti-affinity term (topologyKey %s) "
                                                 "matching the pod",
                                                 ks_str(q->ns), ks_str(q->name), ks_str(q->node_name),
                                                 ks_str(t->topology_key)));
            }
        }
        for (uint32_t i = 0; i < p->nreq_affinity; i++)
            class_detail(c, ks_xasprintf("required pod affinity term %u: topologyKey %s", i,
                                         ks_str(p->req_affinity[i].topology_key)));
        for (uint32_t i = 0; i < p->nreq_anti; i++)
            class_detail(c, ks_xasprintf("required pod anti-affinity term %u: topologyKey %s", i,
                                         ks_str(p->req_anti[i].topology_key)));
    }
}

static int cmp_class(const void *a, const void *b) {
    const ks_why_class *x = a, *y = b;
    if (x->nnodes != y->nnodes) return x->nnodes > y->nnodes ? -1 : 1;
    return strcmp(x->nodes[0], y->nodes[0]);
}

static void diagnose(const ks_pod *p, const why_capture *cap, const ks_cluster *final, ks_why_pod *wp) {
    if (cap->prefilter_plugin) {
        add_reason(wp, cap->prefilter_msg ? cap->prefilter_msg : cap->prefilter_plugin);
        wp->classes = ks_xcalloc(1, sizeof(ks_why_class));
        ks_why_class *c = &wp->classes[wp->nclasses++];
        c->plugin = ks_xstrdup(cap->prefilter_plugin);
        c->reasons = ks_xcalloc(1, sizeof(char *));
        c->reasons[c->nreasons++] = ks_xstrdup(cap->prefilter_msg ? cap->prefilter_msg : "");
        c->nodes = ks_xcalloc(1, sizeof(char *));
        c->nodes[c->nnodes++] = ks_xstrdup("(all nodes, at PreFilter)");
    }
    const why_node **members = ks_xcalloc(cap->nnodes + 1, sizeof(*members));
    bool *done = ks_xcalloc(cap->nnodes + 1, sizeof(bool));
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin) continue;
        for (uint32_t j = 0; j < n->nreasons; j++) add_reason(wp, n->reasons[j]);
    }
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (done[i] || !n->plugin) continue;
        uint32_t nm = 0;
        for (uint32_t k = i; k < cap->nnodes; k++) {
            const why_node *m = &cap->nodes[k];
            if (done[k] || !m->plugin || strcmp(m->plugin, n->plugin) || m->nreasons != n->nreasons) continue;
            bool same = true;
            for (uint32_t j = 0; same && j < n->nreasons; j++) same = !strcmp(m->reasons[j], n->reasons[j]);
            if (!same) continue;
            done[k] = true;
            members[nm++] = m;
        }
        wp->classes = ks_xrealloc(wp->classes, (wp->nclasses + 1) * sizeof(ks_why_class));
        ks_why_class *c = &wp->classes[wp->nclasses++];
        memset(c, 0, sizeof(*c));
        c->plugin = ks_xstrdup(n->plugin);
        c->nreasons = n->nreasons;
        c->reasons = ks_xcalloc(n->nreasons + 1, sizeof(char *));
        for (uint32_t j = 0; j < n->nreasons; j++) c->reasons[j] = ks_xstrdup(n->reasons[j]);
        c->nodes = ks_xcalloc(nm, sizeof(char *));
        for (uint32_t k = 0; k < nm; k++) c->nodes[c->nnodes++] = ks_xstrdup(ks_str(members[k]->node->name));
        sort_n(c->nodes, c->nnodes, sizeof(char *), cmp_str);
        /* The representative is the node closest to fitting. */
        for (uint32_t k = 1; k < nm; k++)
            if (cmp_rep(members[k], members[0], p) < 0) {
                const why_node *t = members[0];
                members[0] = members[k];
                members[k] = t;
            }
        /* Named after that node: it goes first, the others by name. */
        for (uint32_t k = 0; k < c->nnodes; k++) {
            if (strcmp(c->nodes[k], ks_str(members[0]->node->name)) == 0) {
                char *t = c->nodes[k];
                memmove(c->nodes + 1, c->nodes, k * sizeof(char *));
                c->nodes[0] = t;
                break;
            }
        }
        explain_class(p, cap, final, c, members, nm);
    }
    free(members);
    free(done);
    if (wp->nclasses > 1)
        sort_n(wp->classes + (cap->prefilter_plugin ? 1 : 0), wp->nclasses - (cap->prefilter_plugin ? 1 : 0),
               sizeof(ks_why_class), cmp_class);
    sort_n(wp->reasons, wp->nreasons, sizeof(ks_why_reason), cmp_reason);
    /* The root cause: the distinct reasons, sorted. */
    ks_strbuf b;
    ks_sb_init(&b);
    char **texts = ks_xcalloc(wp->nreasons + 1, sizeof(char *));
    for (uint32_t i = 0; i < wp->nreasons; i++) texts[i] = wp->reasons[i].text;
    sort_n(texts, wp->nreasons, sizeof(char *), cmp_str);
    for (uint32_t i = 0; i < wp->nreasons; i++) ks_sb_printf(&b, "%s%s", i ? "; " : "", texts[i]);
    free(texts);
    wp->cause = ks_xstrdup(b.len ? ks_sb_str(&b) : "unknown");
    ks_sb_free(&b);
}

/* Why preemption did not make room, in words. */
static char *preemption_words(const ks_pod *p, const why_capture *cap) {
    if (p->preemption_policy == KS_PREEMPT_NEVER)
        return ks_xasprintf("the pod's preemptionPolicy is Never%s%s%s: it may not evict anything",
                            p->priority_class ? " (priorityClassName " : "",
                            p->priority_class ? ks_str(p->priority_class) : "", p->priority_class ? ")" : "");
    if (cap->postfilter_msg)
        return ks_xasprintf("it cannot help (it may only evict pods of priority below %d, on a node where that makes "
                            "room): %s", ks_pod_priority(p), cap->postfilter_msg);
    return NULL;
}

/* ------------------------------------------------------------------ */

/* Verify candidates; keep those whose run schedules the pod. Failed
 * single candidates are kept in `failed` (with their run's capture) for
 * the pair search. */
typedef struct failed_cand {
    ks_why_fix fix;
    why_capture cap;
    ks_cluster *final;
} failed_cand;

static void fix_take(ks_why_fix *dst, ks_why_fix *src) {
    *dst = *src;
    memset(src, 0, sizeof(*src));
}

static void keep_fix(ks_why_pod *wp, ks_why_fix *f) {
    for (uint32_t i = 0; i < wp->nfixes; i++) {
        if (same_fix(&wp->fixes[i], f)) {
            fix_free(f);
            return;
        }
    }
    wp->fixes = ks_xrealloc(wp->fixes, (wp->nfixes + 1) * sizeof(ks_why_fix));
    fix_take(&wp->fixes[wp->nfixes++], f);
}

static void verify(why_ctx *w, uint64_t target, cand_list *l, ks_why_pod *wp, failed_cand **failed, uint32_t *nfailed) {
    for (uint32_t i = 0; i < l->n; i++) {
        ks_why_fix *f = &l->v[i];
        bool dup = false;
        for (uint32_t j = 0; j < wp->nfixes && !dup; j++) dup = same_fix(&wp->fixes[j], f);
        for (uint32_t j = 0; failed && j < *nfailed && !dup; j++) dup = same_fix(&(*failed)[j].fix, f);
        for (uint32_t j = 0; j < i && !dup; j++) dup = same_fix(&l->v[j], f);
        if (dup || !w->budget) {
            fix_free(f);
            continue;
        }
        w->budget--;
        wp->tried++;
        why_run r;
        char *err = NULL;
        if (!simulate_fix(w, f, target, &r, &err)) {
            ks_infof(2, "why: %s: %s", f->changes[0].summary, err);
            free(err);
            fix_free(f);
            continue;
        }
        if (r.target && r.target->state == KS_SIM_SCHEDULED) {
            f->node = ks_xstrdup(r.target->node);
            side_effects(w, f, &r, target);
            keep_fix(wp, f);
        } else if (failed && r.cap.have) {
            *failed = ks_xrealloc(*failed, (*nfailed + 1) * sizeof(failed_cand));
            failed_cand *fc = &(*failed)[(*nfailed)++];
            fix_take(&fc->fix, f);
            fc->cap = r.cap;
            memset(&r.cap, 0, sizeof(r.cap));
            fc->final = r.c;
            ks_sim_result_free(&r.res);
            r.c = NULL;
        } else {
            fix_free(f);
        }
        run_free(&r);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* The pod's tree with the fix's own patches applied (for generating the
 * second change of a pair). */
static ks_tree *patched_pod_tree(ks_arena *a, const ks_pod *p, const ks_why_fix *f) {
    ks_tree *t = kt_copy(a, p->tree);
    for (uint32_t i = 0; i < f->nchanges; i++) {
        const ks_why_change *c = &f->changes[i];
        if (strcmp(c->object, "Pod") || c->kind == KS_WHY_EVICT || pod_key_of(c->ns, c->name) != p->key) continue;
        char *err = NULL;
        if (!kt_patch_apply(a, t, c->patch, &err)) free(err);
    }
    return t;
}

static const char *node_of_fix(const ks_why_fix *f) {
    for (uint32_t i = 0; i < f->nchanges; i++) {
        if (!strcmp(f->changes[i].object, "Node") && f->changes[i].kind != KS_WHY_ADD_NODE) return f->changes[i].name;
        if (f->changes[i].kind == KS_WHY_ADD_NODE) return f->changes[i].name;
    }
    return NULL;
}

static void why_pod(why_ctx *w, const ks_pod *p, const why_capture *cap, ks_why_pod *wp) {
    const ks_sim_pod *b = base_pod(w, p->key);
    wp->state = b ? b->state : KS_SIM_SCHEDULED;
    if (b && b->node) wp->node = ks_xstrdup(b->node);
    if (b && b->message) wp->message = ks_xstrdup(b->message);
    wp->group = -1;
    if (wp->state == KS_SIM_SCHEDULED) return;
    bool gated = wp->state == KS_SIM_GATED;
    if (gated) {
        wp->cause = ks_xstrdup("scheduling gates");
    } else {
        diagnose(p, cap, w->base_cluster, wp);
        wp->preemption = preemption_words(p, cap);
    }
    if (!p->tree) return;
    w->budget = w->o->max_runs ? w->o->max_runs : 200;
    cand_list l = {.max_reps = w->o->all ? 1 : 2};
    gen_candidates(w, p, p->tree, cap, w->base_cluster, NULL, true, gated, &l);
    failed_cand *failed = NULL;
    uint32_t nfailed = 0;
    verify(w, p->key, &l, wp, &failed, &nfailed);
    if (!wp->nfixes) {
        /* No single change: a second change on top of each that failed,
         * from what the pod saw in that run. */
        for (uint32_t i = 0; i < nfailed && w->budget; i++) {
            failed_cand *fc = &failed[i];
            ks_arena *a = ks_arena_new(4096);
            ks_tree *t = patched_pod_tree(a, p, &fc->fix);
            int at = find_pod(fc->final, p->key);
            const ks_pod *cur = at >= 0 ? fc->final->pods.v[at] : p;
            const char *only = node_of_fix(&fc->fix);
            cand_list second = {.max_reps = w->o->all ? 1 : 2};
            gen_candidates(w, cur, t, &fc->cap, fc->final, only, true, false, &second);
            for (uint32_t j = 0; j < second.n; j++) {
                ks_why_fix *s = &second.v[j];
                /* first + second, as one fix */
                ks_why_fix pair = {0};
                for (uint32_t k = 0; k < fc->fix.nchanges; k++) *fix_add(&pair) = change_copy(&fc->fix.changes[k]);
                for (uint32_t k = 0; k < s->nchanges; k++) *fix_add(&pair) = change_copy(&s->changes[k]);
                pair.objects = fc->fix.objects + s->objects;
                pair.amount = fc->fix.amount + s->amount;
                fix_free(s);
                *s = pair;
            }
            verify(w, p->key, &second, wp, NULL, NULL);
            ks_arena_free(a);
        }
        wp->pairs = wp->nfixes > 0;
    }
    for (uint32_t i = 0; i < nfailed; i++) {
        fix_free(&failed[i].fix);
        capture_clear(&failed[i].cap);
        ks_cluster_free(failed[i].final);
    }
    free(failed);
    sort_n(wp->fixes, wp->nfixes, sizeof(ks_why_fix), cmp_fix);
    uint32_t max = w->o->max_fixes ? w->o->max_fixes : 10;
    while (wp->nfixes > max) fix_free(&wp->fixes[--wp->nfixes]);
}

static void why_pod_free(ks_why_pod *wp) {
    free(wp->pod);
    free(wp->node);
    free(wp->message);
    free(wp->preemption);
    free(wp->cause);
    for (uint32_t i = 0; i < wp->nreasons; i++) free(wp->reasons[i].text);
    free(wp->reasons);
    for (uint32_t i = 0; i < wp->nclasses; i++) {
        ks_why_class *c = &wp->classes[i];
        free(c->plugin);
        for (uint32_t j = 0; j < c->nreasons; j++) free(c->reasons[j]);
        free(c->reasons);
        for (uint32_t j = 0; j < c->nnodes; j++) free(c->nodes[j]);
        free(c->nodes);
        for (uint32_t j = 0; j < c->ndetails; j++) free(c->details[j]);
        free(c->details);
    }
    free(wp->classes);
    for (uint32_t i = 0; i < wp->nfixes; i++) fix_free(&wp->fixes[i]);
    free(wp->fixes);
}

void ks_why_result_free(ks_why_result *r) {
    for (uint32_t i = 0; i < r->npods; i++) why_pod_free(&r->pods[i]);
    free(r->pods);
    for (uint32_t i = 0; i < r->ngroups; i++) {
        free(r->groups[i].cause);
        for (uint32_t j = 0; j < r->groups[i].npods; j++) free(r->groups[i].pods[j]);
        free(r->groups[i].pods);
    }
    free(r->groups);
    for (uint32_t i = 0; i < r->ncluster_fixes; i++) fix_free(&r->cluster_fixes[i]);
    free(r->cluster_fixes);
    memset(r, 0, sizeof(*r));
}

static int cmp_group(const void *a, const void *b) {
    const ks_why_group *x = a, *y = b;
    if (x->npods != y->npods) return x->npods > y->npods ? -1 : 1;
    return strcmp(x->cause, y->cause);
}

static int cmp_unblocks(const void *a, const void *b) {
    const ks_why_fix *x = a, *y = b;
    if (x->unblocks != y->unblocks) return x->unblocks > y->unblocks ? -1 : 1;
    return cmp_fix(a, b);
}

static bool cluster_side(const ks_why_fix *f) {
    for (uint32_t i = 0; i < f->nchanges; i++)
        if (!strcmp(f->changes[i].object, "Pod") && f->changes[i].kind != KS_WHY_EVICT) return false;
    return true;
}

/* Pod changes that mean the same on every replica of a template. */
static bool group_change(ks_why_change_kind k) {
    return k == KS_WHY_REMOVE_GATES || k == KS_WHY_TOLERATE || k == KS_WHY_DROP_SELECTOR || k == KS_WHY_DROP_TERM ||
           k == KS_WHY_RELAX_SPREAD || k == KS_WHY_DROP_HOST_PORT || k == KS_WHY_PRIORITY;
}

static const ks_pod *pod_named(const ks_pod **v, uint32_t n, const char *name) {
    char buf[512];
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(ks_pod_fullname(v[i], buf, sizeof(buf)), name)) return v[i];
    return NULL;
}

bool ks_why(const ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_why_options *o,
            ks_why_result *out, char **err) {
    memset(out, 0, sizeof(*out));
    int64_t wall0 = ks_monotonic_ns();
    why_ctx w = {.c0 = cluster, .cfg = cfg, .reg = reg, .o = o, .so = o->sim};
    ks_map_init(&w.caps);
    ks_map_init(&w.base_index);
    ks_map_init(&w.base_victims);
    w.later_ts = ks_sim_start_time(cluster) / KS_NS_PER_SEC + 1;

    /* The pods to explain. */
    uint64_t target = 0;
    if (!o->all) {
        const char *slash = strchr(o->pod, '/');
        if (!slash) {
            *err = ks_xasprintf("name the pod as NAMESPACE/NAME, not \"%s\"", o->pod);
            return false;
        }
        char *ns = ks_xstrdup(o->pod);
        ns[slash - o->pod] = '\0';
        target = pod_key_of(ns, slash + 1);
        free(ns);
        if (find_pod(cluster, target) < 0) {
            *err = ks_xasprintf("pod %s is not in the cluster", o->pod);
            return false;
        }
    }
    uint32_t nwatch = 0;
    why_capture *caps = ks_xcalloc(cluster->pods.n + 1, sizeof(why_capture));
    const ks_pod **watched = ks_xcalloc(cluster->pods.n + 1, sizeof(ks_pod *));
    for (uint32_t i = 0; i < cluster->pods.n; i++) {
        const ks_pod *p = cluster->pods.v[i];
        if (o->all ? !ks_sim_is_pending(cfg, p) : p->key != target) continue;
        ks_map_put(&w.caps, p->key, &caps[nwatch]);
        watched[nwatch++] = p;
    }

    /* The cluster as given. */
    bool ok = false;
    w.base_cluster = ks_sim_clone_cluster(cluster);
    ks_sim_options so = w.so;
    so.on_attempt = on_attempt;
    so.on_attempt_ctx = &w;
    if (!ks_simulate(w.base_cluster, cfg, reg, &so, &w.base, err)) goto out;
    w.runs++;
    for (uint32_t i = 0; i < w.base.npods; i++) ks_map_put(&w.base_index, w.base.pods[i].input->key, (void *)(uintptr_t)(i + 1));
    for (uint32_t i = 0; i < w.base.nvictims; i++) ks_map_put(&w.base_victims, w.base.victims[i].pod->key, (void *)1);

    out->pods = ks_xcalloc(nwatch + 1, sizeof(ks_why_pod));
    if (!o->all) {
        ks_why_pod *wp = &out->pods[out->npods++];
        wp->pod = ks_xstrdup(o->pod);
        const ks_pod *p = watched[0];
        if (p->node_name) {
            wp->state = KS_SIM_SCHEDULED;
            wp->node = ks_xstrdup(ks_str(p->node_name));
            wp->message = ks_xstrdup("already bound");
            wp->group = -1;
        } else if (!ks_sim_is_pending(cfg, p)) {
            wp->state = KS_SIM_PENDING;
            wp->message = ks_xasprintf("not scheduled by this configuration (schedulerName %s, or finished or terminating)",
                                       ks_str(p->scheduler_name));
            wp->group = -1;
        } else {
            why_pod(&w, p, &caps[0], wp);
        }
        ok = true;
        goto out;
    }

    /* --all: diagnose every pod left pending, group by root cause, and
     * look for fixes for one pod of each group. */
    for (uint32_t i = 0; i < nwatch; i++) {
        const ks_pod *p = watched[i];
        const ks_sim_pod *b = base_pod(&w, p->key);
        if (!b || b->state == KS_SIM_SCHEDULED) continue;
        ks_why_pod *wp = &out->pods[out->npods++];
        char buf[512];
        wp->pod = ks_xstrdup(ks_pod_fullname(p, buf, sizeof(buf)));
        wp->state = b->state;
        wp->group = -1;
        if (b->message) wp->message = ks_xstrdup(b->message);
        if (b->state == KS_SIM_GATED) {
            wp->cause = ks_xstrdup("scheduling gates");
        } else {
            diagnose(p, &caps[i], w.base_cluster, wp);
            wp->preemption = preemption_words(p, &caps[i]);
        }
        int g = -1;
        for (uint32_t k = 0; k < out->ngroups && g < 0; k++)
            if (!strcmp(out->groups[k].cause, wp->cause)) g = (int)k;
        if (g < 0) {
            out->groups = ks_xrealloc(out->groups, (out->ngroups + 1) * sizeof(ks_why_group));
            g = (int)out->ngroups++;
            memset(&out->groups[g], 0, sizeof(ks_why_group));
            out->groups[g].cause = ks_xstrdup(wp->cause);
            out->groups[g].representative = out->npods - 1;
        }
        ks_why_group *gr = &out->groups[g];
        gr->pods = ks_xrealloc(gr->pods, (gr->npods + 1) * sizeof(char *));
        gr->pods[gr->npods++] = ks_xstrdup(wp->pod);
        wp->group = g;
    }
    for (uint32_t g = 0; g < out->ngroups; g++) {
        ks_why_pod *rep = &out->pods[out->groups[g].representative];
        const ks_pod *p = NULL;
        uint32_t ci = 0;
        for (uint32_t i = 0; i < nwatch && !p; i++) {
            char buf[512];
            if (!strcmp(ks_pod_fullname(watched[i], buf, sizeof(buf)), rep->pod)) p = watched[i], ci = i;
        }
        /* why_pod fills the diagnosis again: keep the one made above. */
        ks_why_pod tmp = {0};
        why_pod(&w, p, &caps[ci], &tmp);
        rep->fixes = tmp.fixes;
        rep->nfixes = tmp.nfixes;
        rep->pairs = tmp.pairs;
        rep->tried = tmp.tried;
        tmp.fixes = NULL;
        tmp.nfixes = 0;
        why_pod_free(&tmp);
        /* Cluster-side fixes help every pod they unblock. */
        for (uint32_t i = 0; i < rep->nfixes; i++) {
            if (!cluster_side(&rep->fixes[i])) continue;
            bool dup = false;
            for (uint32_t k = 0; k < out->ncluster_fixes && !dup; k++) dup = same_fix(&out->cluster_fixes[k], &rep->fixes[i]);
            if (dup) continue;
            out->cluster_fixes = ks_xrealloc(out->cluster_fixes, (out->ncluster_fixes + 1) * sizeof(ks_why_fix));
            ks_why_fix *cf = &out->cluster_fixes[out->ncluster_fixes++];
            memset(cf, 0, sizeof(*cf));
            for (uint32_t k = 0; k < rep->fixes[i].nchanges; k++) *fix_add(cf) = change_copy(&rep->fixes[i].changes[k]);
            cf->objects = rep->fixes[i].objects;
            cf->harm = rep->fixes[i].harm;
            cf->amount = rep->fixes[i].amount;
            cf->unblocks = rep->fixes[i].unblocks;
            cf->node = rep->fixes[i].node ? ks_xstrdup(rep->fixes[i].node) : NULL;
            for (uint32_t k = 0; k < rep->fixes[i].neffects; k++) {
                const ks_why_effect *e = &rep->fixes[i].effects[k];
                cf->effects = ks_xrealloc(cf->effects, (cf->neffects + 1) * sizeof(ks_why_effect));
                cf->effects[cf->neffects++] = (ks_why_effect){e->kind, ks_xstrdup(e->pod),
                                                              e->before ? ks_xstrdup(e->before) : NULL,
                                                              e->after ? ks_xstrdup(e->after) : NULL};
            }
        }
    }
    /* A pod change that worked for the group's first pod, made on every
     * pod of the group (what changing their controller's template does),
     * verified once for all of them. */
    for (uint32_t g = 0; g < out->ngroups; g++) {
        const ks_why_group *gr = &out->groups[g];
        const ks_why_pod *rep = &out->pods[gr->representative];
        if (gr->npods < 2) continue;
        for (uint32_t i = 0; i < rep->nfixes; i++) {
            const ks_why_fix *f = &rep->fixes[i];
            if (f->nchanges != 1 || !group_change(f->changes[0].kind)) continue;
            ks_why_fix gf = {0};
            for (uint32_t k = 0; k < gr->npods; k++) {
                const ks_pod *q = pod_named(watched, nwatch, gr->pods[k]);
                if (!q || !q->tree) continue;
                /* only where the same patch applies to the pod's manifest */
                ks_arena *a = ks_arena_new(4096);
                ks_tree *t = kt_copy(a, q->tree);
                char *perr = NULL;
                bool applies = kt_patch_apply(a, t, f->changes[0].patch, &perr);
                free(perr);
                ks_arena_free(a);
                if (!applies) continue;
                ks_why_change *c = fix_add(&gf);
                *c = change_copy(&f->changes[0]);
                free(c->ns);
                free(c->name);
                free(c->command);
                c->ns = ks_xstrdup(ks_str(q->ns));
                c->name = ks_xstrdup(ks_str(q->name));
                c->command = ks_xasprintf("kubectl patch pod %s -n %s --type=json -p '%s'", c->name, c->ns, c->patch);
                free(c->summary);
                char *s0 = f->changes[0].summary;
                const char *at = strstr(s0, rep->pod);
                c->summary = at ? ks_xasprintf("%.*s%s/%s%s", (int)(at - s0), s0, c->ns, c->name, at + strlen(rep->pod))
                                : ks_xstrdup(s0);
                gf.objects++;
            }
            why_run r;
            char *rerr = NULL;
            if (gf.nchanges < 2 || !simulate_fix(&w, &gf, 0, &r, &rerr)) {
                free(rerr);
                fix_free(&gf);
                continue;
            }
            side_effects(&w, &gf, &r, 0);
            run_free(&r);
            gf.amount = f->amount;
            if (gf.unblocks) {
                out->cluster_fixes = ks_xrealloc(out->cluster_fixes, (out->ncluster_fixes + 1) * sizeof(ks_why_fix));
                out->cluster_fixes[out->ncluster_fixes++] = gf;
            } else {
                fix_free(&gf);
            }
        }
    }
    sort_n(out->cluster_fixes, out->ncluster_fixes, sizeof(ks_why_fix), cmp_unblocks);
    /* Groups largest first; pods keep their group index through a remap. */
    uint32_t *order = ks_xcalloc(out->ngroups + 1, sizeof(uint32_t));
    ks_why_group *sorted = ks_xcalloc(out->ngroups + 1, sizeof(ks_why_group));
    memcpy(sorted, out->groups, out->ngroups * sizeof(ks_why_group));
    sort_n(sorted, out->ngroups, sizeof(ks_why_group), cmp_group);
    for (uint32_t i = 0; i < out->ngroups; i++)
        for (uint32_t k = 0; k < out->ngroups; k++)
            if (out->groups[k].cause == sorted[i].cause) order[k] = i;
    for (uint32_t i = 0; i < out->npods; i++)
        if (out->pods[i].group >= 0) out->pods[i].group = (int32_t)order[out->pods[i].group];
    free(out->groups);
    out->groups = sorted;
    free(order);
    ok = true;
out:
    for (uint32_t i = 0; i < nwatch; i++) capture_clear(&caps[i]);
    free(caps);
    free(watched);
    if (w.base_cluster) {
        ks_sim_result_free(&w.base);
        ks_cluster_free(w.base_cluster);
    }
    ks_map_free(&w.caps);
    ks_map_free(&w.base_index);
    ks_map_free(&w.base_victims);
    out->runs = w.runs;
    out->wall_seconds = (double)(ks_monotonic_ns() - wall0) / 1e9;
    if (!ok) ks_why_result_free(out);
    return ok;
}
