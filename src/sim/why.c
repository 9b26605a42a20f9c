/* `why`'s engine: the cluster as given simulated with the pods' last
 * attempts captured, every candidate change (why_fixes.c) applied to a
 * copy of the cluster and simulated again, kept when the pod schedules,
 * with its side effects; pairs when no single change works; --all by
 * root cause. The diagnosis is why_diagnose.c's. */
#include "sim/why.h"
#include "sim/why_internal.h"

#include "codec/decode.h"
#include "codec/patch.h"
#include "framework/nodeinfo.h"
#include "framework/status.h"
#include "sim/report.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    /* Runs made in this answer, by the fix's changes: --all tries the
     * same cluster change for several groups' pods, and one run answers
     * for every pod (each run simulates all of them). */
    struct cached_run *cache;
    uint32_t ncache, cache_cap;
} why_ctx;

typedef struct cached_run {
    char *sig;
    ks_sim_result res;
} cached_run;

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    why_ctx *w = ctx;
    if (rec->result == KS_ATTEMPT_SKIPPED) return;
    why_capture *c = ks_map_get(&w->caps, rec->pod->key);
    if (c) capture_record(c, rec);
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

/* Apply a fix to c (a clone). */
static bool apply_fix(why_ctx *w, ks_cluster *c, const ks_why_fix *f, char **err) {
    ks_arena *a = ks_arena_new(8192);
    patched *pv = ks_xcalloc(f->nchanges + 1, sizeof(patched));
    uint32_t npv = 0;
    bool ok = true;
    for (uint32_t i = 0; ok && i < f->nchanges; i++) {
        const ks_why_change *ch = &f->changes[i];
        if (ch->kind == KS_WHY_ADD_NODE) {
            int at = why_find_node(c, ch->like);
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
            int at = why_find_pod(c, why_pod_key(ch->ns, ch->name));
            if (at < 0) continue;
            ks_pod *old = c->pods.v[at];
            c->pods.v[at] = c->pods.v[--c->pods.n];
            /* The controller makes a replacement, pending, created now. */
            if (why_recreated(old) && old->tree) {
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
            int at = why_find_pod(c, why_pod_key(ch->ns, ch->name));
            if (at < 0 || !c->pods.v[at]->tree) {
                *err = ks_xasprintf("pod %s/%s: no manifest to patch", ch->ns, ch->name);
                ok = false;
                break;
            }
            const ks_pod *p = c->pods.v[at];
            ks_tree *t = tree_of(a, pv, &npv, false, p->key, p->tree, p->source_file, p->input_index);
            ok = kt_patch_apply(a, t, ch->patch, err);
        } else {
            int at = why_find_node(c, ch->name);
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
            int at = why_find_node(c, ks_str((ks_id)pv[i].key));
            ks_node *n = decode_node(pv[i].tree, pv[i].file, pv[i].input_index, err);
            if (!n) {
                ok = false;
                break;
            }
            ks_node_unref(c->nodes.v[at]);
            c->nodes.v[at] = n;
        } else {
            int at = why_find_pod(c, pv[i].key);
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
    int at = why_find_pod(c, key);
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
                if (f->changes[j].kind == KS_WHY_EVICT && why_pod_key(f->changes[j].ns, f->changes[j].name) == sp->input->key)
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
            why_fix_free(f);
            return;
        }
    }
    wp->fixes = ks_xrealloc(wp->fixes, (wp->nfixes + 1) * sizeof(ks_why_fix));
    fix_take(&wp->fixes[wp->nfixes++], f);
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The fix's changes as one key, in a fixed order. */
static char *fix_sig(const ks_why_fix *f) {
    const char **v = ks_xcalloc(f->nchanges + 1, sizeof(char *));
    size_t len = 1;
    for (uint32_t i = 0; i < f->nchanges; i++) {
        v[i] = f->changes[i].summary;
        len += strlen(v[i]) + 1;
    }
    why_sort(v, f->nchanges, sizeof(char *), cmp_cstr);
    char *s = ks_xcalloc(len, 1);
    for (uint32_t i = 0; i < f->nchanges; i++) {
        strcat(s, v[i]);
        strcat(s, "\n");
    }
    free(v);
    return s;
}

static const cached_run *cache_find(const why_ctx *w, const char *sig) {
    for (uint32_t i = 0; i < w->ncache; i++)
        if (!strcmp(w->cache[i].sig, sig)) return &w->cache[i];
    return NULL;
}

static void cache_put(why_ctx *w, char *sig, ks_sim_result *res) {
    KS_GROW(w->cache, w->cache_cap, (size_t)w->ncache + 1);
    w->cache[w->ncache++] = (cached_run){sig, *res};
    memset(res, 0, sizeof(*res));
}

static const ks_sim_pod *result_pod(const ks_sim_result *res, uint64_t key) {
    for (uint32_t i = 0; i < res->npods; i++)
        if (res->pods[i].input->key == key) return &res->pods[i];
    return NULL;
}

static void verify(why_ctx *w, uint64_t target, cand_list *l, ks_why_pod *wp, failed_cand **failed, uint32_t *nfailed) {
    for (uint32_t i = 0; i < l->n; i++) {
        ks_why_fix *f = &l->v[i];
        bool dup = false;
        for (uint32_t j = 0; j < wp->nfixes && !dup; j++) dup = same_fix(&wp->fixes[j], f);
        for (uint32_t j = 0; failed && j < *nfailed && !dup; j++) dup = same_fix(&(*failed)[j].fix, f);
        for (uint32_t j = 0; j < i && !dup; j++) dup = same_fix(&l->v[j], f);
        if (dup || !w->budget) {
            why_fix_free(f);
            continue;
        }
        wp->tried++;
        char *sig = fix_sig(f);
        const cached_run *cr = cache_find(w, sig);
        const ks_sim_pod *ct = cr ? result_pod(&cr->res, target) : NULL;
        bool ct_ok = ct && ct->state == KS_SIM_SCHEDULED;
        /* a run made for another pod answers, unless this one fails and
         * the pair search needs what it saw */
        if (cr && (ct_ok || !failed)) {
            if (ct_ok) {
                why_run view = {.res = cr->res, .target = ct};
                f->node = ks_xstrdup(ct->node);
                side_effects(w, f, &view, target);
                keep_fix(wp, f);
            } else {
                why_fix_free(f);
            }
            free(sig);
            continue;
        }
        w->budget--;
        why_run r;
        char *err = NULL;
        if (!simulate_fix(w, f, target, &r, &err)) {
            ks_infof(2, "why: %s: %s", f->changes[0].summary, err);
            free(err);
            free(sig);
            why_fix_free(f);
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
            r.c = NULL;
        } else {
            why_fix_free(f);
        }
        if (!cr) cache_put(w, sig, &r.res);
        else free(sig);
        if (r.c) ks_cluster_free(r.c);
        ks_sim_result_free(&r.res);
        capture_clear(&r.cap);
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
        if (strcmp(c->object, "Pod") || c->kind == KS_WHY_EVICT || why_pod_key(c->ns, c->name) != p->key) continue;
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
        why_diagnose(p, cap, w->base_cluster, wp);
        wp->preemption = why_preemption_words(p, cap);
    }
    if (!p->tree) return;
    w->budget = w->o->max_runs ? w->o->max_runs : 200;
    cand_list l = {.max_reps = w->o->all ? 1 : 2};
    why_candidates(w->c0, p, p->tree, cap, w->base_cluster, NULL, true, gated, &l);
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
            int at = why_find_pod(fc->final, p->key);
            const ks_pod *cur = at >= 0 ? fc->final->pods.v[at] : p;
            const char *only = node_of_fix(&fc->fix);
            cand_list second = {.max_reps = w->o->all ? 1 : 2};
            why_candidates(w->c0, cur, t, &fc->cap, fc->final, only, true, false, &second);
            for (uint32_t j = 0; j < second.n; j++) {
                ks_why_fix *s = &second.v[j];
                /* first + second, as one fix */
                ks_why_fix pair = {0};
                for (uint32_t k = 0; k < fc->fix.nchanges; k++) *why_fix_add(&pair) = why_change_copy(&fc->fix.changes[k]);
                for (uint32_t k = 0; k < s->nchanges; k++) *why_fix_add(&pair) = why_change_copy(&s->changes[k]);
                pair.objects = fc->fix.objects + s->objects;
                pair.amount = fc->fix.amount + s->amount;
                why_fix_free(s);
                *s = pair;
            }
            verify(w, p->key, &second, wp, NULL, NULL);
            ks_arena_free(a);
        }
        wp->pairs = wp->nfixes > 0;
    }
    for (uint32_t i = 0; i < nfailed; i++) {
        why_fix_free(&failed[i].fix);
        capture_clear(&failed[i].cap);
        ks_cluster_free(failed[i].final);
    }
    free(failed);
    why_sort(wp->fixes, wp->nfixes, sizeof(ks_why_fix), cmp_fix);
    uint32_t max = w->o->max_fixes ? w->o->max_fixes : 10;
    while (wp->nfixes > max) why_fix_free(&wp->fixes[--wp->nfixes]);
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
    for (uint32_t i = 0; i < wp->nfixes; i++) why_fix_free(&wp->fixes[i]);
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
    for (uint32_t i = 0; i < r->ncluster_fixes; i++) why_fix_free(&r->cluster_fixes[i]);
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
        target = why_pod_key(ns, slash + 1);
        free(ns);
        if (why_find_pod(cluster, target) < 0) {
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

    /* --all: why_diagnose every pod left pending, group by root cause, and
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
            why_diagnose(p, &caps[i], w.base_cluster, wp);
            wp->preemption = why_preemption_words(p, &caps[i]);
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
            for (uint32_t k = 0; k < rep->fixes[i].nchanges; k++) *why_fix_add(cf) = why_change_copy(&rep->fixes[i].changes[k]);
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
                ks_why_change *c = why_fix_add(&gf);
                *c = why_change_copy(&f->changes[0]);
                free(c->ns);
                free(c->name);
                free(c->command);
                c->ns = ks_xstrdup(ks_str(q->ns));
                c->name = ks_xstrdup(ks_str(q->name));
                c->command = NULL;
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
                why_fix_free(&gf);
                continue;
            }
            side_effects(&w, &gf, &r, 0);
            run_free(&r);
            gf.amount = f->amount;
            if (gf.unblocks) {
                out->cluster_fixes = ks_xrealloc(out->cluster_fixes, (out->ncluster_fixes + 1) * sizeof(ks_why_fix));
                out->cluster_fixes[out->ncluster_fixes++] = gf;
            } else {
                why_fix_free(&gf);
            }
        }
    }
    why_sort(out->cluster_fixes, out->ncluster_fixes, sizeof(ks_why_fix), cmp_unblocks);
    /* Groups largest first; pods keep their group index through a remap. */
    uint32_t *order = ks_xcalloc(out->ngroups + 1, sizeof(uint32_t));
    ks_why_group *sorted = ks_xcalloc(out->ngroups + 1, sizeof(ks_why_group));
    memcpy(sorted, out->groups, out->ngroups * sizeof(ks_why_group));
    why_sort(sorted, out->ngroups, sizeof(ks_why_group), cmp_group);
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
    if (ok) why_set_commands(cluster, out);
    for (uint32_t i = 0; i < nwatch; i++) capture_clear(&caps[i]);
    free(caps);
    free(watched);
    if (w.base_cluster) {
        ks_sim_result_free(&w.base);
        ks_cluster_free(w.base_cluster);
    }
    for (uint32_t i = 0; i < w.ncache; i++) {
        free(w.cache[i].sig);
        ks_sim_result_free(&w.cache[i].res);
    }
    free(w.cache);
    ks_map_free(&w.caps);
    ks_map_free(&w.base_index);
    ks_map_free(&w.base_victims);
    out->runs = w.runs;
    out->wall_seconds = (double)(ks_monotonic_ns() - wall0) / 1e9;
    if (!ok) ks_why_result_free(out);
    return ok;
}
