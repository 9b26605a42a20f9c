/* InterPodAffinity PreScore, Score and NormalizeScore. */
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "framework/handle.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>

static void ps_free(void *v) {
    ipa_ps_state *s = v;
    ks_pairtab_free(&s->scores);
    free(s->keys);
    free(s);
}

typedef struct ps_ctx {
    const ipa *pl;
    const ks_pod *pod;
    const ks_node_info *const *nodes;
    bool all_pods; /* the pod has preferred terms: every existing pod counts */
    uint32_t npref_aff, npref_anti;
    const ipa_term *pref_aff, *pref_anti;
    ks_labels ns_labels;
    ks_pairtab_par par;
    ks_nodememo *memo;
    uint64_t pass;        /* 0: no memo */
    const uint64_t *gens; /* the nodes' generations, when the list is the snapshot's */
} ps_ctx;

/* The pairs a node adds go to the table and to its memo record. */
/* A node's weights go to the table (b) or to the node's memo record. */
typedef struct emit {
    ks_pairbuf *b;
    ks_nodememo_rec *rec;
} emit;

static void add_term(emit *b, const ks_node_info *ni, ks_id key, int64_t w) {
    ks_id v;
    if (!ks_ni_label(ni, key, &v)) return;
    if (b->rec) ks_nodememo_rec_add(b->rec, 0, ks_pair(key, v), w);
    else ks_pairbuf_add(b->b, ks_pair(key, v), w);
}

static void process_existing(const ps_ctx *c, emit *b, const ks_pod *p, const ks_node_info *ni) {
    /* the incoming pod's preferred terms against the existing pod */
    for (uint32_t k = 0; k < c->npref_aff; k++)
        if (ipa_term_matches(&c->pref_aff[k], p)) add_term(b, ni, c->pref_aff[k].key, c->pref_aff[k].weight);
    for (uint32_t k = 0; k < c->npref_anti; k++)
        if (ipa_term_matches(&c->pref_anti[k], p))
            add_term(b, ni, c->pref_anti[k].key, -(int64_t)c->pref_anti[k].weight);
    /* the existing pod's terms against the incoming pod */
    if (c->pl->hard_weight > 0)
        for (uint32_t k = 0; k < p->nreq_affinity; k++) {
            const ks_pod_affinity_term *t = &p->req_affinity[k];
            if (ipa_existing_term_matches(p, t, c->pod, &c->ns_labels))
                add_term(b, ni, t->topology_key, c->pl->hard_weight);
        }
    for (uint32_t k = 0; k < p->npref_affinity; k++) {
        const ks_pod_affinity_term *t = &p->pref_affinity[k];
        if (ipa_existing_term_matches(p, t, c->pod, &c->ns_labels)) add_term(b, ni, t->topology_key, t->weight);
    }
    for (uint32_t k = 0; k < p->npref_anti; k++) {
        const ks_pod_affinity_term *t = &p->pref_anti[k];
        if (ipa_existing_term_matches(p, t, c->pod, &c->ns_labels))
            add_term(b, ni, t->topology_key, -(int64_t)t->weight);
    }
}

static void score_node(const ps_ctx *c, emit *em, const ks_node_info *ni) {
    /* a node without labels has no topology to score */
    if (!ni->node || !ni->node->labels.n) return;
    if (c->all_pods)
        for (uint32_t j = 0; j < ni->npods; j++) process_existing(c, em, ni->pods[j], ni);
    else
        for (uint32_t j = 0; j < ni->naffinity; j++) process_existing(c, em, ni->pods_with_affinity[j], ni);
}

static void score_nodes(size_t lo, size_t hi, void *arg) {
    ps_ctx *c = arg;
    ks_pairbuf buf;
    ks_pairbuf_init(&buf, &c->par);
    emit em = {.b = &buf};
    for (size_t i = lo; i < hi; i++) score_node(c, &em, c->nodes[i]);
    ks_pairbuf_flush(&buf);
}

/* With the memo: only the nodes that changed are looked at. */
static void score_into_rec(const ks_node_info *ni, ks_nodememo_rec *rec, void *arg) {
    emit em = {.rec = rec};
    score_node(arg, &em, ni);
}

static void score_changed(size_t lo, size_t hi, void *arg) {
    ps_ctx *c = arg;
    ks_nodememo_scan(c->memo, c->pass, c->nodes, c->gens, lo, hi, score_into_rec, c);
}

static ipa_term *compile_terms(ks_cycle_state *st, const ks_objects *c, const ks_pod *pod,
                               const ks_pod_affinity_term *t, uint32_t n) {
    if (!n) return NULL;
    ipa_term *out = ks_cycle_state_alloc(st, n * sizeof(*out));
    for (uint32_t i = 0; i < n; i++) ipa_compile_term(st, c, pod, &t[i], &out[i]);
    return out;
}

ks_status *ipa_pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *const *nodes, size_t n) {
    ipa *pl = self;
    bool has_constraints = pod->npref_affinity || pod->npref_anti;
    if (pl->ignore_preferred && !has_constraints) return ks_status_new(KS_SKIP, NULL);

    /* Upstream scores from the whole snapshot, not only the feasible nodes:
     * every node when the pod has preferred terms, else the nodes hosting
     * pods with affinity. */
    const ks_node_info *const *list = nodes;
    size_t nlist = n;
    const ks_snapshot *snap = pl->h ? ks_handle_snapshot(pl->h) : NULL;
    if (pl->have_all_nodes) {
        list = pl->all_nodes;
        nlist = pl->nall_nodes;
    } else if (snap) {
        if (has_constraints) {
            list = (const ks_node_info *const *)snap->nodes;
            nlist = snap->nnodes;
        } else {
            list = (const ks_node_info *const *)snap->with_affinity;
            nlist = snap->nwith_affinity;
        }
    }

    const ks_objects *objs = ipa_objects(pl);
    ps_ctx c = {
        .pl = pl,
        .pod = pod,
        .nodes = list,
        .all_pods = has_constraints,
        .npref_aff = pod->npref_affinity,
        .npref_anti = pod->npref_anti,
        .pref_aff = compile_terms(st, objs, pod, pod->pref_affinity, pod->npref_affinity),
        .pref_anti = compile_terms(st, objs, pod, pod->pref_anti, pod->npref_anti),
        .ns_labels = ipa_namespace_labels(objs, pod->ns),
    };
    ipa_ps_state *s = ks_xcalloc(1, sizeof(*s));
    /* sized only when counted here (the memo's result comes as a copy) */
    uint32_t hint = has_constraints ? ipa_size_hint(c.pref_aff, c.npref_aff, nlist) +
                                          ipa_size_hint(c.pref_anti, c.npref_anti, nlist)
                                    : 16;
    if (nlist) {
        ks_sig sig;
        ks_sig_init(&sig);
        ks_sig_u64(&sig, ((uint64_t)(uint32_t)pl->hard_weight << 1) | c.all_pods);
        ipa_sig_terms(&sig, c.pref_aff, c.npref_aff);
        ipa_sig_terms(&sig, c.pref_anti, c.npref_anti);
        ipa_sig_pod(&sig, pod, &c.ns_labels);
        c.memo = &pl->score_memo;
        c.pass = ks_nodememo_begin(c.memo, nlist, &sig, 1);
        ks_sig_free(&sig);
        bool counted = false;
        if (c.pass) {
            c.gens = ks_snapshot_gens(snap, list, nlist);
            ks_parallel_chunks(pl->h, nlist, score_changed, &c);
            counted = ks_nodememo_done(c.memo, c.pass);
            if (counted) {
                ks_pairtab_free(&s->scores);
                ks_nodememo_result(c.memo, 0, &s->scores);
            }
            ks_nodememo_end(c.memo, c.pass);
        }
        if (!counted) {
            ks_pairtab_init(&s->scores, hint);
            ks_pairtab_par_begin(&c.par, &s->scores, false);
            ks_parallel_chunks(pl->h, nlist, score_nodes, &c);
            ks_pairtab_par_end(&c.par);
        }
    }
    /* No node had a matching term with its topology: nothing to score. */
    if (!s->scores.nkeys) {
        ps_free(s);
        return ks_status_new(KS_SKIP, NULL);
    }
    uint32_t cap = 0;
    for (uint32_t i = 0; i < s->scores.cap; i++) {
        if (!s->scores.keys[i]) continue;
        ks_id key = ks_pair_a(s->scores.keys[i]);
        uint32_t j = 0;
        while (j < s->nkeys && s->keys[j] != key) j++;
        if (j < s->nkeys) continue;
        KS_GROW(s->keys, cap, s->nkeys + 1);
        s->keys[s->nkeys++] = key;
    }
    /* PreScore data is only read afterwards: clones share it. */
    ks_cycle_state_write(st, ipa_ps_key, s, ps_free, NULL);
    return NULL;
}

ks_status *ipa_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                     int64_t *score) {
    const ipa_ps_state *s = ks_cycle_state_read(st, ipa_ps_key);
    if (!s)
        return ks_status_new(KS_ERROR, "failed to read \"PreScore" IPA_NAME "\" from cycleState: not found");
    int64_t sum = 0;
    for (uint32_t k = 0; k < s->nkeys; k++) {
        ks_id v;
        if (ks_ni_label(ni, s->keys[k], &v)) sum += ks_pairtab_get(&s->scores, ks_pair(s->keys[k], v));
    }
    *score = sum;
    return NULL;
}

ks_status *ipa_normalize_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                               ks_node_score *scores, size_t n) {
    const ipa_ps_state *s = ks_cycle_state_read(st, ipa_ps_key);
    if (!s)
        return ks_status_new(KS_ERROR, "failed to read \"PreScore" IPA_NAME "\" from cycleState: not found");
    if (!s->nkeys) return NULL;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (scores[i].score > hi) hi = scores[i].score;
        if (scores[i].score < lo) lo = scores[i].score;
    }
    int64_t diff = hi - lo;
    for (size_t i = 0; i < n; i++) {
        double f = 0;
        if (diff > 0) f = (double)KS_MAX_NODE_SCORE * ((double)(scores[i].score - lo) / (double)diff);
        scores[i].score = (int64_t)f;
    }
    return NULL;
}
