/* PodTopologySpread PreFilter (+AddPod/RemovePod) and Filter: the
 * DoNotSchedule constraints. */
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "framework/status.h"
#include "framework/handle.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_INT32 2147483647

static void pf_free(void *v) {
    pts_pf_state *s = v;
    ks_pairtab_free(&s->counts);
    free(s->ndomains);
    free(s->paths);
    free(s);
}

static void *pf_clone(const void *v) {
    const pts_pf_state *s = v;
    pts_pf_state *c = ks_xmalloc(sizeof(*c));
    *c = *s; /* constraints are cycle data, shared */
    ks_pairtab_copy(&c->counts, &s->counts);
    c->ndomains = ks_xmalloc(s->n * sizeof(*c->ndomains));
    memcpy(c->ndomains, s->ndomains, s->n * sizeof(*c->ndomains));
    c->paths = ks_xmalloc(s->n * sizeof(*c->paths));
    memcpy(c->paths, s->paths, s->n * sizeof(*c->paths));
    return c;
}

/* ---- PreFilter --------------------------------------------------------- */

typedef struct pf_ctx {
    const pts_pf_state *s;
    const ks_node_info *const *nodes;
    bool need_affinity, need_taints;
    ks_pairtab_par par;
    ks_nodememo *memo;
    uint64_t pass;        /* 0: no memo */
    const uint64_t *gens; /* the nodes' generations, when the list is the snapshot's */
} pf_ctx;

#define MAX_CACHED 16

/* Counts without the memo, as upstream counts: every node. */
static void count_nodes(size_t lo, size_t hi, void *arg) {
    pf_ctx *c = arg;
    const pts_pf_state *s = c->s;
    ks_pairbuf buf;
    ks_pairbuf_init(&buf, &c->par);
    int64_t cnt[MAX_CACHED];
    ks_id vals[MAX_CACHED];
    for (size_t i = lo; i < hi; i++) {
        const ks_node_info *ni = c->nodes[i];
        if (!ni->node) continue;
        /* every key must be on the node; values read once */
        if (s->n <= MAX_CACHED ? !pts_node_values(ni, s->c, s->n, vals) : !pts_node_has_keys(ni, s->c, s->n))
            continue;
        bool aff_ok = !c->need_affinity || pts_node_affinity_matches(s->pod, ni);
        bool taints_ok = !c->need_taints || pts_node_taints_tolerated(s->pod, ni);
        for (uint32_t k = 0; k < s->n; k++) {
            const pts_constraint *pc = &s->c[k];
            if ((pc->honor_affinity && !aff_ok) || (pc->honor_taints && !taints_ok)) {
                if (k < MAX_CACHED) cnt[k] = -1;
                continue;
            }
            ks_id v = 0;
            if (k < MAX_CACHED) v = vals[k];
            else ks_ni_label(ni, pc->key, &v);
            /* constraints sharing a selector share the count */
            int64_t n;
            if (pc->same_as != k && pc->same_as < MAX_CACHED && cnt[pc->same_as] >= 0) n = cnt[pc->same_as];
            else n = pts_count_matching(pc, ni, s->pod->ns);
            if (k < MAX_CACHED) cnt[k] = n;
            ks_pairbuf_add(&buf, ks_pair(k, v), n);
        }
    }
    ks_pairbuf_flush(&buf);
}

/* The same with the memo: the nodes that did not change are already in
 * the memo's sums. */
static void count_node(const ks_node_info *ni, ks_nodememo_rec *rec, void *arg) {
    const pf_ctx *c = arg;
    const pts_pf_state *s = c->s;
    int64_t cnt[KS_NODEMEMO_MAX];
    ks_id vals[KS_NODEMEMO_MAX];
    if (!ni->node || !pts_node_values(ni, s->c, s->n, vals)) return;
    bool aff_ok = !c->need_affinity || pts_node_affinity_matches(s->pod, ni);
    bool taints_ok = !c->need_taints || pts_node_taints_tolerated(s->pod, ni);
    for (uint32_t k = 0; k < s->n; k++) {
        const pts_constraint *pc = &s->c[k];
        if ((pc->honor_affinity && !aff_ok) || (pc->honor_taints && !taints_ok)) {
            cnt[k] = -1;
            continue;
        }
        int64_t n = pc->same_as != k && cnt[pc->same_as] >= 0 ? cnt[pc->same_as]
                                                              : pts_count_matching(pc, ni, s->pod->ns);
        cnt[k] = n;
        ks_nodememo_rec_add(rec, 0, ks_pair(k, vals[k]), n);
    }
}

static void count_changed(size_t lo, size_t hi, void *arg) {
    pf_ctx *c = arg;
    ks_nodememo_scan(c->memo, c->pass, c->nodes, c->gens, lo, hi, count_node, c);
}

/* Critical paths from scratch: the two smallest counts per constraint.
 * Upstream feeds them in Go map order (random); we break ties by value id,
 * which is one of the orders upstream may take. */
static void build_paths(pts_pf_state *s) {
    for (uint32_t k = 0; k < s->n; k++)
        s->paths[k] = (pts_paths){.value = {0, 0}, .num = {MAX_INT32, MAX_INT32}};
    const ks_pairtab *t = &s->counts;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->keys[i]) continue;
        uint32_t k = ks_pair_a(t->keys[i]);
        ks_id v = ks_pair_b(t->keys[i]);
        int64_t n = t->vals[i];
        pts_paths *p = &s->paths[k];
        uint32_t filled = s->ndomains[k] < 2 ? s->ndomains[k] : 2;
        s->ndomains[k]++;
        if (filled == 0 || n < p->num[0] || (n == p->num[0] && v < p->value[0])) {
            p->value[1] = p->value[0], p->num[1] = p->num[0];
            p->value[0] = v, p->num[0] = n;
        } else if (filled == 1 || n < p->num[1] || (n == p->num[1] && v < p->value[1])) {
            p->value[1] = v, p->num[1] = n;
        }
    }
}

ks_status *pts_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                          const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **res) {
    pts *pl = self;
    pts_constraint *c;
    uint32_t nc = pts_constraints(pl, st, pod, KS_DO_NOT_SCHEDULE, &c);
    if (!nc) return ks_status_new(KS_SKIP, NULL);

    pts_pf_state *s = ks_xcalloc(1, sizeof(*s));
    s->pod = pod;
    s->n = nc;
    s->c = c;
    s->ndomains = ks_xcalloc(nc, sizeof(*s->ndomains));
    s->paths = ks_xcalloc(nc, sizeof(*s->paths));
    /* hostname domains are about one per node (upstream's sizeHeuristic) */
    uint32_t hint = 16;
    for (uint32_t k = 0; k < nc; k++) hint += c[k].hostname ? (uint32_t)n : 0;
    ks_pairtab_init(&s->counts, hint);

    pf_ctx ctx = {.s = s, .nodes = nodes};
    for (uint32_t k = 0; k < nc; k++) {
        ctx.need_affinity |= c[k].honor_affinity;
        ctx.need_taints |= c[k].honor_taints;
    }
    /* A node's counts depend on the pod through the constraints and, when
     * inclusion policies are honoured, what they read of the pod: both
     * are in the memo's signature. */
    bool counted = false;
    if (n && nc <= KS_NODEMEMO_MAX) {
        ks_sig sig;
        ks_sig_init(&sig);
        pts_sig(&sig, c, nc, pod->ns);
        pts_sig_policies(&sig, pod, ctx.need_affinity, ctx.need_taints);
        ctx.memo = &pl->pf_memo;
        ctx.pass = ks_nodememo_begin(ctx.memo, n, &sig, 1);
        ctx.gens = ks_snapshot_gens(pl->h ? ks_handle_snapshot(pl->h) : NULL, nodes, n);
        ks_sig_free(&sig);
        if (ctx.pass) {
            ks_parallel_chunks(pl->h, n, count_changed, &ctx);
            counted = ks_nodememo_done(ctx.memo, ctx.pass);
            if (counted) {
                ks_pairtab_free(&s->counts);
                ks_nodememo_result(ctx.memo, 0, &s->counts);
            }
            ks_nodememo_end(ctx.memo, ctx.pass);
        }
    }
    if (n && !counted) {
        ks_pairtab_par_begin(&ctx.par, &s->counts, false);
        ks_parallel_chunks(pl->h, n, count_nodes, &ctx);
        ks_pairtab_par_end(&ctx.par);
    }
    build_paths(s);
    ks_cycle_state_write(st, pts_pf_key, s, pf_free, pf_clone);
    return NULL;
}

/* ---- AddPod / RemovePod ------------------------------------------------ */

static void update_with_pod(pts_pf_state *s, const ks_pod *p, const ks_node_info *ni, int64_t delta) {
    if (p->ns != s->pod->ns || !ni->node) return;
    if (!pts_node_has_keys(ni, s->c, s->n)) return;
    for (uint32_t k = 0; k < s->n; k++) {
        const pts_constraint *c = &s->c[k];
        /* no terminating or empty-selector shortcut here, as upstream */
        if (!pts_selector_matches(c, &p->labels)) continue;
        if (c->honor_affinity && !pts_node_affinity_matches(s->pod, ni)) continue;
        if (c->honor_taints && !pts_node_taints_tolerated(s->pod, ni)) continue;
        ks_id v = 0;
        ks_ni_label(ni, c->key, &v);
        uint64_t key = ks_pair(k, v);
        if (!ks_pairtab_find(&s->counts, key, NULL)) s->ndomains[k]++;
        int64_t now = ks_pairtab_add(&s->counts, key, delta);
        pts_paths_update(&s->paths[k], v, now);
    }
}

static ks_status *no_state(void) {
    return ks_status_new(KS_ERROR, "reading \"PreFilter" PTS_NAME "\" from cycleState: not found");
}

ks_status *pts_add_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *add,
                       const ks_node_info *ni) {
    pts_pf_state *s = ks_cycle_state_read(st, pts_pf_key);
    if (!s) return no_state();
    update_with_pod(s, add, ni, 1);
    return NULL;
}

ks_status *pts_remove_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *rm,
                          const ks_node_info *ni) {
    pts_pf_state *s = ks_cycle_state_read(st, pts_pf_key);
    if (!s) return no_state();
    update_with_pod(s, rm, ni, -1);
    return NULL;
}

/* ---- Filter ------------------------------------------------------------ */

ks_status *pts_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    const pts_pf_state *s = ks_cycle_state_read(st, pts_pf_key);
    if (!s) return no_state();
    for (uint32_t k = 0; k < s->n; k++) {
        const pts_constraint *c = &s->c[k];
        ks_id v;
        if (!ks_ni_label(ni, c->key, &v))
            return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, PTS_ERR_MISSING_LABEL);
        /* fewer domains than minDomains: the global minimum is taken as 0 */
        int64_t min = s->ndomains[k] < (uint32_t)c->min_domains ? 0 : s->paths[k].num[0];
        int64_t skew = ks_pairtab_get(&s->counts, ks_pair(k, v)) + c->self_match - min;
        if (skew > c->max_skew) return ks_status_new_const(KS_UNSCHEDULABLE, PTS_ERR_CONSTRAINTS);
    }
    return NULL;
}
