/* PodTopologySpread PreScore, Score and NormalizeScore: the ScheduleAnyway
 * constraints (and the system defaults). */
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "framework/handle.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>

static void release_host(pts_ps_state *s) {
    ks_nodecount_end(s->host, s->host_pass);
    s->host_pass = 0;
}

static void ps_free(void *v) {
    pts_ps_state *s = v;
    release_host(s); /* a cycle that ended before NormalizeScore */
    ks_pairtab_free(&s->counts);
    ks_map_free(&s->ignored);
    free(s);
}

typedef struct ps_ctx {
    const pts_ps_state *s;
    const ks_pod *pod;
    const ks_node_info *const *nodes;
    bool require_all, need_affinity, need_taints;
    ks_pairtab_par par;
    ks_nodememo *memo;
    uint64_t pass;        /* 0: no memo */
    const uint64_t *gens; /* the nodes' generations, when the list is the snapshot's */
} ps_ctx;

/* Whether node ni counts for constraint pc under its node inclusion
 * policies; *aff_ok and *taints_ok (-1: not asked yet) keep the node's
 * answers across the pod's constraints. */
static bool node_included(const pts_constraint *pc, const ks_pod *pod, const ks_node_info *ni, int *aff_ok,
                          int *taints_ok) {
    if (pc->honor_affinity) {
        if (*aff_ok < 0) *aff_ok = pts_node_affinity_matches(pod, ni);
        if (!*aff_ok) return false;
    }
    if (pc->honor_taints) {
        if (*taints_ok < 0) *taints_ok = pts_node_taints_tolerated(pod, ni);
        if (!*taints_ok) return false;
    }
    return true;
}

/* Count matching pods on every node of the cluster into the domains the
 * feasible nodes span (hostname domains are counted in Score). */
static void count_nodes(size_t lo, size_t hi, void *arg) {
    ps_ctx *c = arg;
    const pts_ps_state *s = c->s;
    ks_pairbuf buf;
    ks_pairbuf_init(&buf, &c->par);
    for (size_t i = lo; i < hi; i++) {
        const ks_node_info *ni = c->nodes[i];
        if (!ni->node) continue;
        if (c->require_all && !pts_node_has_keys(ni, s->c, s->n)) continue;
        int aff_ok = -1, taints_ok = -1;
        for (uint32_t k = 0; k < s->n; k++) {
            const pts_constraint *pc = &s->c[k];
            if (pc->hostname || !node_included(pc, c->pod, ni, &aff_ok, &taints_ok)) continue;
            ks_id v = 0; /* a missing label reads as "" */
            ks_ni_label(ni, pc->key, &v);
            uint64_t key = ks_pair(k, v);
            /* keys are fixed during this phase: reading them is safe */
            if (!ks_pairtab_find(&s->counts, key, NULL)) continue;
            ks_pairbuf_add(&buf, key, pts_count_matching(pc, ni, c->pod->ns));
        }
    }
    ks_pairbuf_flush(&buf);
}

/* The same with the memo: every domain of every node, summed; the
 * feasible ones are read out of the sums afterwards. */
static void count_node(const ks_node_info *ni, ks_nodememo_rec *rec, void *arg) {
    ps_ctx *c = arg;
    const pts_ps_state *s = c->s;
    if (!ni->node || (c->require_all && !pts_node_has_keys(ni, s->c, s->n))) return;
    int aff_ok = -1, taints_ok = -1;
    for (uint32_t k = 0; k < s->n; k++) {
        const pts_constraint *pc = &s->c[k];
        if (pc->hostname || !node_included(pc, c->pod, ni, &aff_ok, &taints_ok)) continue;
        ks_id v = 0; /* a missing label reads as "" */
        ks_ni_label(ni, pc->key, &v);
        ks_nodememo_rec_add(rec, 0, ks_pair(k, v), pts_count_matching(pc, ni, c->pod->ns));
    }
}

static void count_changed(size_t lo, size_t hi, void *arg) {
    ps_ctx *c = arg;
    ks_nodememo_scan(c->memo, c->pass, c->nodes, c->gens, lo, hi, count_node, c);
}

ks_status *pts_pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *const *nodes, size_t n) {
    pts *pl = self;
    const ks_node_info *const *all = nodes;
    size_t nall = n;
    const ks_snapshot *snap = pl->h ? ks_handle_snapshot(pl->h) : NULL;
    if (pl->have_all_nodes) {
        all = pl->all_nodes;
        nall = pl->nall_nodes;
    } else if (snap) {
        all = (const ks_node_info *const *)snap->nodes;
        nall = snap->nnodes;
    }
    if (!nall) return ks_status_new(KS_SKIP, NULL);

    pts_constraint *c;
    uint32_t nc = pts_constraints(pl, st, pod, KS_SCHEDULE_ANYWAY, &c);
    if (!nc) return ks_status_new(KS_SKIP, NULL);

    /* System defaults tolerate nodes missing a topology key. */
    bool require_all = pod->nspread > 0 || !pl->system_defaulted;
    pts_ps_state *s = ks_xcalloc(1, sizeof(*s));
    s->n = nc;
    s->c = c;
    s->weight = ks_cycle_state_alloc(st, nc * sizeof(*s->weight));
    ks_map_init(&s->ignored);
    ks_pairtab_init(&s->counts, 0);

    /* Domains of the feasible nodes. */
    uint32_t *size = ks_cycle_state_alloc(st, nc * sizeof(*size));
    size_t nignored = 0;
    for (size_t i = 0; i < n; i++) {
        const ks_node_info *ni = nodes[i];
        if (require_all && !pts_node_has_keys(ni, c, nc)) {
            if (!ks_map_put(&s->ignored, (uint64_t)ni->name + 1, (void *)1)) nignored++;
            continue;
        }
        for (uint32_t k = 0; k < nc; k++) {
            if (c[k].hostname) continue;
            ks_id v = 0;
            ks_ni_label(ni, c[k].key, &v);
            uint64_t key = ks_pair(k, v);
            if (!ks_pairtab_find(&s->counts, key, NULL)) {
                ks_pairtab_add(&s->counts, key, 0);
                size[k]++;
            }
        }
    }
    for (uint32_t k = 0; k < nc; k++) {
        size_t sz = c[k].hostname ? n - nignored : size[k];
        s->weight[k] = ks_go_log((double)(sz + 2));
    }

    ps_ctx ctx = {.s = s, .pod = pod, .nodes = all, .require_all = require_all, .memo = &pl->ps_memo};
    bool affinity = false, taints = false, counted = false;
    for (uint32_t k = 0; k < nc; k++) {
        affinity |= !c[k].hostname && c[k].honor_affinity;
        taints |= !c[k].hostname && c[k].honor_taints;
    }
    if (nc <= KS_NODEMEMO_MAX) {
        ks_sig sig;
        ks_sig_init(&sig);
        pts_sig(&sig, c, nc, pod->ns);
        pts_sig_policies(&sig, pod, affinity, taints);
        ks_sig_u64(&sig, require_all);
        ctx.pass = ks_nodememo_begin(ctx.memo, nall, &sig, 1);
        ctx.gens = ks_snapshot_gens(snap, all, nall);
        ks_sig_free(&sig);
        if (ctx.pass) {
            ks_parallel_chunks(pl->h, nall, count_changed, &ctx);
            counted = ks_nodememo_done(ctx.memo, ctx.pass);
            /* the feasible domains, out of the sums */
            for (uint32_t i = 0; counted && i < s->counts.cap; i++) {
                int64_t v;
                if (s->counts.keys[i] && ks_nodememo_sum_of(ctx.memo, 0, s->counts.keys[i], &v))
                    s->counts.vals[i] = v;
            }
            ks_nodememo_end(ctx.memo, ctx.pass);
        }
    }
    if (!counted) {
        ks_pairtab_par_begin(&ctx.par, &s->counts, true);
        ks_parallel_chunks(pl->h, nall, count_nodes, &ctx);
        ks_pairtab_par_end(&ctx.par);
    }

    /* Score counts the first hostname constraint through the cache. */
    s->host = &pl->host;
    s->host_k = nc;
    for (uint32_t k = 0; k < nc && s->host_k == nc; k++)
        if (c[k].hostname && !c[k].empty) s->host_k = k;
    if (s->host_k < nc) {
        ks_sig sig;
        ks_sig_init(&sig);
        pts_sig(&sig, &c[s->host_k], 1, pod->ns);
        s->host_pass = ks_nodecount_begin(s->host, &sig, nodes, n);
        ks_sig_free(&sig);
    }

    /* read-only from here on (but for the cache's release): clones share it */
    ks_cycle_state_write(st, pts_ps_key, s, ps_free, NULL);
    return NULL;
}

static ks_status *no_state(void) {
    return ks_status_new(KS_ERROR, "error reading \"PreScore" PTS_NAME "\" from cycleState: not found");
}

ks_status *pts_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                     int64_t *score) {
    const pts_ps_state *s = ks_cycle_state_read(st, pts_ps_key);
    if (!s) return no_state();
    *score = 0;
    if (s->ignored.len && ks_map_get(&s->ignored, (uint64_t)ni->name + 1)) return NULL;
    double sum = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        const pts_constraint *c = &s->c[k];
        ks_id v;
        if (!ks_ni_label(ni, c->key, &v)) continue;
        int64_t cnt;
        if (!c->hostname) {
            cnt = ks_pairtab_get(&s->counts, ks_pair(k, v));
        } else {
            /* Score's calls write distinct slots: one per node */
            ks_nodecount_slot *slot = k == s->host_k ? ks_nodecount_at(s->host, s->host_pass, ni) : NULL;
            if (slot && ks_nodecount_hit(slot, s->host_pass, ni)) {
                cnt = slot->val;
            } else {
                cnt = pts_count_matching(c, ni, pod->ns);
                if (slot) ks_nodecount_keep(slot, s->host_pass, ni, cnt);
            }
        }
        sum += (double)cnt * s->weight[k] + (double)(c->max_skew - 1);
    }
    *score = (int64_t)round(sum);
    return NULL;
}

ks_status *pts_normalize_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                               ks_node_score *scores, size_t n) {
    pts_ps_state *s = ks_cycle_state_read(st, pts_ps_key);
    if (!s) return no_state();
    release_host(s); /* every Score call is done */
    /* Fewer matching pods is better: invert, scaled by the maximum.
     * Ignored nodes score 0. */
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (s->ignored.len && ks_map_get(&s->ignored, (uint64_t)scores[i].node->name + 1)) {
            scores[i].score = -1;
            continue;
        }
        if (scores[i].score < lo) lo = scores[i].score;
        if (scores[i].score > hi) hi = scores[i].score;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v = scores[i].score;
        if (v == -1) scores[i].score = 0;
        else if (hi == 0) scores[i].score = KS_MAX_NODE_SCORE;
        else scores[i].score = KS_MAX_NODE_SCORE * (hi + lo - v) / hi;
    }
    return NULL;
}
