/* `why`'s candidate changes: from the verdicts a pod's last attempt got,
 * the changes to the pod or to the cluster that would remove each reason,
 * as JSON Patches (or evictions, or a node added), and the helpers the
 * engine and the diagnosis share. Nothing here is verified: why.c runs
 * each candidate through the scheduler. */
#include "sim/why_internal.h"

#include "api/quantity.h"
#include "codec/patch.h"
#include "framework/nodeinfo.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort, which must not be given a NULL base even for no elements. */
void why_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    if (n > 1) qsort(base, n, size, cmp);
}

int why_find_pod(const ks_cluster *c, uint64_t key) {
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (c->pods.v[i]->key == key) return (int)i;
    return -1;
}

int why_find_node(const ks_cluster *c, const char *name) {
    ks_id id = ks_intern_find(name);
    for (uint32_t i = 0; id && i < c->nodes.n; i++)
        if (c->nodes.v[i]->name == id) return (int)i;
    return -1;
}

uint64_t why_pod_key(const char *ns, const char *name) { return ks_pod_key(ks_intern(ns), ks_intern(name)); }

bool why_recreated(const ks_pod *p) {
    const ks_owner_ref *o = ks_pod_controller(p);
    return o && strcmp(ks_str(o->kind), "DaemonSet") != 0;
}

/* ------------------------------------------------------------------ */
/* Quantities, as a person reads them. */

void why_format_amount(ks_id res, int64_t v, char *buf, int n) {
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

const char *why_reason_resource(const char *reason) {
    static const char pre[] = "Insufficient ";
    return strncmp(reason, pre, sizeof(pre) - 1) == 0 ? reason + sizeof(pre) - 1 : NULL;
}

/* ------------------------------------------------------------------ */
/* Candidate fixes. */


static void change_free(ks_why_change *c) {
    free(c->ns);
    free(c->name);
    free(c->like);
    free(c->summary);
    free(c->patch);
    free(c->command);
    free(c->owner);
}

void why_fix_free(ks_why_fix *f) {
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

ks_why_change why_change_copy(const ks_why_change *c) {
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

ks_why_change *why_fix_add(ks_why_fix *f) {
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
    ks_why_change *c = why_fix_add(f);
    c->kind = kind;
    c->object = "Pod";
    c->ns = ks_xstrdup(ks_str(p->ns));
    c->name = ks_xstrdup(ks_str(p->name));
    c->summary = summary;
    c->patch = dump_patch(ops); /* its command: why_set_commands */
    const ks_owner_ref *o = ks_pod_controller(p);
    if (o) c->owner = ks_xasprintf("%s/%s", ks_str(o->kind), o->name);
    f->objects++;
}

static void node_change(ks_why_fix *f, ks_why_change_kind kind, const ks_node *n, json_t *ops, char *summary,
                        char *command) {
    ks_why_change *c = why_fix_add(f);
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
    int at = why_find_node(c0, ks_str(n->name));
    return at >= 0 ? c0->nodes.v[at]->tree : NULL;
}

/* The node's taints the pod does not tolerate (NoSchedule, NoExecute). */
uint32_t why_untolerated(const ks_pod *p, const ks_node *n, const ks_taint **out, uint32_t max) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->ntaints && k < max; i++) {
        const ks_taint *t = &n->taints[i];
        if (t->effect == KS_EFFECT_PREFER_NO_SCHEDULE) continue;
        if (!ks_tolerations_tolerate(p->tolerations, p->ntolerations, t)) out[k++] = t;
    }
    return k;
}

void why_taint_text(const ks_taint *t, char *buf, size_t n) {
    const char *v = ks_str(t->value);
    snprintf(buf, n, "%s%s%s:%s", ks_str(t->key), *v ? "=" : "", v, ks_effect_name(t->effect));
}

/* Better representatives first: the pod fits what is free, then most cpu free. */
int why_cmp_rep(const why_node *a, const why_node *b, const ks_pod *p) {
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
            if (why_cmp_rep(n, out[max - 1], p) >= 0) continue;
            at = max - 1;
        }
        out[at] = n;
        while (at > 0 && why_cmp_rep(out[at], out[at - 1], p) < 0) {
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
        why_taint_text(ut[i], tt, sizeof(tt));
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

/* Per distinct set of why_untolerated taints (up to 4 sets): tolerate them
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
        uint32_t nu = why_untolerated(p, n->node, ut, 8);
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
            if (why_cmp_rep(n, best[k][per_set - 1], p) >= 0) continue;
            at = per_set - 1;
        }
        best[k][at] = n;
        while (at > 0 && why_cmp_rep(best[k][at], best[k][at - 1], p) < 0) {
            const why_node *x = best[k][at];
            best[k][at] = best[k][at - 1];
            best[k][at - 1] = x;
            at--;
        }
    }
    for (uint32_t k = 0; k < nsets; k++) {
        const ks_taint *ut[8];
        uint32_t nu = why_untolerated(p, best[k][0]->node, ut, 8);
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
            uint32_t nv = why_untolerated(p, best[k][r]->node, vt, 8);
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
    if (ks_pod_has_level_requests(p)) return;
    /* The node that needs the smallest relative cut. */
    const why_node *best = NULL;
    double best_cut = 2;
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin || strcmp(n->plugin, "NodeResourcesFit") != 0) continue;
        double cut = 0;
        bool ok = true;
        for (uint32_t j = 0; ok && j < n->nreasons; j++) {
            const char *rn = why_reason_resource(n->reasons[j]);
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
        ks_id res = ks_intern(why_reason_resource(best->reasons[j]));
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
        why_format_amount(res, nv, amount, sizeof(amount));
        why_format_amount(res, cv, from, sizeof(from));
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
    why_sort(cands, nc, sizeof(ks_pod *), cmp_victim);
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
            ks_why_change *c = why_fix_add(f);
            c->kind = KS_WHY_EVICT;
            c->object = "Pod";
            c->ns = ks_xstrdup(ks_str(q->ns));
            c->name = ks_xstrdup(ks_str(q->name));
            c->summary = ks_xasprintf("evict pod %s/%s (priority %d) from node %s%s", c->ns, c->name, ks_pod_priority(q),
                                      ks_str(bestn[s]->node->name),
                                      why_recreated(q) ? "; its controller recreates it" : "");
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
    for (int k = 1; !name || why_find_node(c0, name) >= 0; k++) {
        free(name);
        name = ks_xasprintf("%s-like-%d", ks_str(best->name), k);
    }
    char cpu[32], mem[32];
    why_format_amount(KS_RES_CPU, best->allocatable.milli_cpu, cpu, sizeof(cpu));
    why_format_amount(KS_RES_MEMORY, best->allocatable.memory, mem, sizeof(mem));
    ks_why_fix *f = cand_new(l, 1);
    ks_why_change *c = why_fix_add(f);
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
            ks_why_change *c = why_fix_add(f);
            c->kind = KS_WHY_EVICT;
            c->object = "Pod";
            c->ns = ks_xstrdup(ks_str(q->ns));
            c->name = ks_xstrdup(ks_str(q->name));
            c->summary = ks_xasprintf("evict pod %s/%s (priority %d, holds the host port) from node %s%s", c->ns,
                                      c->name, ks_pod_priority(q), ks_str(q->node_name),
                                      why_recreated(q) ? "; its controller recreates it" : "");
            c->command = ks_xasprintf("kubectl delete pod %s -n %s", c->name, c->ns);
            f->objects++;
            f->amount++;
        }
    }
}

/* Existing pods whose required anti-affinity keeps p off a node: evict
 * the ones in the node's domain. */
bool why_anti_matches(const ks_pod_affinity_term *t, const ks_pod *owner, const ks_pod *p) {
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
                blocks = why_anti_matches(t, q, p) && ks_labels_get(&qn->labels, t->topology_key, &a) &&
                         ks_labels_get(&n->labels, t->topology_key, &b) && a == b;
            }
            if (!blocks) continue;
            if (!f) f = cand_new(l, 0);
            ks_why_change *c = why_fix_add(f);
            c->kind = KS_WHY_EVICT;
            c->object = "Pod";
            c->ns = ks_xstrdup(ks_str(q->ns));
            c->name = ks_xstrdup(ks_str(q->name));
            c->summary = ks_xasprintf("evict pod %s/%s (priority %d, its anti-affinity keeps the pod off %s) from node %s%s",
                                      c->ns, c->name, ks_pod_priority(q), ks_str(n->name), ks_str(q->node_name),
                                      why_recreated(q) ? "; its controller recreates it" : "");
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
    why_sort(v, n, sizeof(*v), cmp_class_value);
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
void why_candidates(const ks_cluster *c0, const ks_pod *p, const ks_tree *t, const why_capture *cap, const ks_cluster *final,
                           const char *only, bool pod_side, bool gated, cand_list *l) {
    if (gated) {
        if (pod_side) gen_gates(p, t, l);
        return;
    }
    gen_taints(c0, p, t, cap, only, pod_side, l);
    gen_uncordon(c0, p, cap, only, l);
    gen_affinity(c0, p, t, cap, only, pod_side, l);
    if (any_reason(cap, "NodeResourcesFit", NULL)) {
        if (pod_side) gen_lower_request(p, t, cap, l);
        gen_evict(p, cap, final, only, l);
        if (!only) gen_add_node(p, cap, c0, l);
    }
    gen_host_ports(p, t, cap, final, only, pod_side, l);
    gen_existing_anti(p, cap, final, only, l);
    if (pod_side) {
        gen_spread(p, t, cap, l);
        gen_pod_affinity(p, t, cap, l);
        if (cap->postfilter_msg) gen_priority(p, t, c0, l);
    }
}
