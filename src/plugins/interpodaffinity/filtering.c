/* InterPodAffinity PreFilter (+AddPod/RemovePod) and Filter. */
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "framework/status.h"
#include "framework/handle.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void pf_free(void *v) {
    ipa_pf_state *s = v;
    ks_pairtab_free(&s->existing_anti);
    ks_pairtab_free(&s->aff_counts);
    ks_pairtab_free(&s->anti_counts);
    free(s->existing_keys);
    free(s);
}

static void *pf_clone(const void *v) {
    const ipa_pf_state *s = v;
    ipa_pf_state *c = ks_xmalloc(sizeof(*c));
    *c = *s; /* terms and labels are cycle data, shared */
    ks_pairtab_copy(&c->existing_anti, &s->existing_anti);
    ks_pairtab_copy(&c->aff_counts, &s->aff_counts);
    ks_pairtab_copy(&c->anti_counts, &s->anti_counts);
    c->existing_keys = NULL;
    c->existing_keys_cap = 0;
    if (s->nexisting_keys) {
        c->existing_keys_cap = s->nexisting_keys;
        c->existing_keys = ks_xmalloc(s->nexisting_keys * sizeof(ks_id));
        memcpy(c->existing_keys, s->existing_keys, s->nexisting_keys * sizeof(ks_id));
    }
    return c;
}

static void note_existing_key(ipa_pf_state *s, ks_id key) {
    for (uint32_t i = 0; i < s->nexisting_keys; i++)
        if (s->existing_keys[i] == key) return;
    KS_GROW(s->existing_keys, s->existing_keys_cap, s->nexisting_keys + 1);
    s->existing_keys[s->nexisting_keys++] = key;
}

/* ---- PreFilter --------------------------------------------------------- */

typedef struct pf_ctx {
    ipa_pf_state *s;
    const ks_node_info *const *nodes;
    ks_pairtab_par existing, aff, anti;
    ks_nodememo *memo;
    uint64_t pass;        /* 0: no memo */
    const uint64_t *gens; /* the nodes' generations, when the list is the snapshot's */
    bool existing_pass;   /* count_changed: existing pods' anti-affinity, else the incoming pod's terms */
} pf_ctx;

/* One node's existing pods whose required anti-affinity terms match the
 * incoming pod, per topology pair of the node: into the table (buf) or the
 * node's memo record (rec). */
static void existing_anti_of(const ipa_pf_state *s, const ks_node_info *ni, ks_pairbuf *buf,
                             ks_nodememo_rec *rec) {
    for (uint32_t j = 0; ni->node && j < ni->nanti; j++) {
        const ks_pod *p = ni->pods_with_required_anti[j];
        for (uint32_t k = 0; k < p->nreq_anti; k++) {
            const ks_pod_affinity_term *t = &p->req_anti[k];
            ks_id v;
            if (!ipa_existing_term_matches(p, t, s->pod, &s->ns_labels) || !ks_ni_label(ni, t->topology_key, &v))
                continue;
            if (rec) ks_nodememo_rec_add(rec, 0, ks_pair(t->topology_key, v), 1);
            else ks_pairbuf_add(buf, ks_pair(t->topology_key, v), 1);
        }
    }
}

/* Existing pods whose required anti-affinity terms match the incoming pod,
 * counted per topology pair of their node. */
static void count_existing_anti(size_t lo, size_t hi, void *arg) {
    pf_ctx *c = arg;
    ks_pairbuf buf;
    ks_pairbuf_init(&buf, &c->existing);
    for (size_t i = lo; i < hi; i++) existing_anti_of(c->s, c->nodes[i], &buf, NULL);
    ks_pairbuf_flush(&buf);
}

/* The incoming pod's terms against one node's pods: the pods matching all
 * affinity terms (table 0) and each anti-affinity term (table 1). */
static void incoming_of(const ipa_pf_state *s, const ks_node_info *ni, ks_pairbuf *aff, ks_pairbuf *anti,
                        ks_nodememo_rec *rec) {
    if (!ni->node) return;
    int64_t naff = 0;
    for (uint32_t j = 0; j < ni->npods; j++) {
        const ks_pod *p = ni->pods[j];
        if (s->naff && ipa_matches_all(s->aff, s->naff, p)) naff++;
        for (uint32_t k = 0; k < s->nanti; k++) {
            ks_id v;
            if (!ipa_term_matches(&s->anti[k], p) || !ks_ni_label(ni, s->anti[k].key, &v)) continue;
            if (rec) ks_nodememo_rec_add(rec, 1, ks_pair(s->anti[k].key, v), 1);
            else ks_pairbuf_add(anti, ks_pair(s->anti[k].key, v), 1);
        }
    }
    for (uint32_t k = 0; naff && k < s->naff; k++) {
        ks_id v;
        if (!ks_ni_label(ni, s->aff[k].key, &v)) continue;
        if (rec) ks_nodememo_rec_add(rec, 0, ks_pair(s->aff[k].key, v), naff);
        else ks_pairbuf_add(aff, ks_pair(s->aff[k].key, v), naff);
    }
}

static void count_incoming(size_t lo, size_t hi, void *arg) {
    pf_ctx *c = arg;
    ks_pairbuf aff, anti;
    ks_pairbuf_init(&aff, &c->aff);
    ks_pairbuf_init(&anti, &c->anti);
    for (size_t i = lo; i < hi; i++) incoming_of(c->s, c->nodes[i], &aff, &anti, NULL);
    ks_pairbuf_flush(&aff);
    ks_pairbuf_flush(&anti);
}

/* Either pass with the memo: only the nodes that changed are looked at. */
static void count_node(const ks_node_info *ni, ks_nodememo_rec *rec, void *arg) {
    pf_ctx *c = arg;
    if (c->existing_pass) existing_anti_of(c->s, ni, NULL, rec);
    else incoming_of(c->s, ni, NULL, NULL, rec);
}

static void count_changed(size_t lo, size_t hi, void *arg) {
    pf_ctx *c = arg;
    ks_nodememo_scan(c->memo, c->pass, c->nodes, c->gens, lo, hi, count_node, c);
}

/* Run a pass over nodes with the memo; false when it could not (memo
 * busy, or a node with too many pairs): count without it then. */
static bool with_memo(ipa *pl, pf_ctx *c, ks_nodememo *m, const ks_sig *sig, uint32_t ntabs,
                      const ks_node_info *const *nodes, size_t n, ks_pairtab *t0, ks_pairtab *t1) {
    c->memo = m;
    c->pass = ks_nodememo_begin(m, n, sig, ntabs);
    if (!c->pass) return false;
    c->nodes = nodes;
    c->gens = ks_snapshot_gens(pl->h ? ks_handle_snapshot(pl->h) : NULL, nodes, n);
    ks_parallel_chunks(pl->h, n, count_changed, c);
    bool ok = ks_nodememo_done(m, c->pass);
    if (ok) {
        ks_pairtab_free(t0);
        ks_nodememo_result(m, 0, t0);
        if (t1) {
            ks_pairtab_free(t1);
            ks_nodememo_result(m, 1, t1);
        }
    }
    ks_nodememo_end(m, c->pass);
    return ok;
}

static ipa_term *compile_terms(ks_cycle_state *st, const ks_objects *c, const ks_pod *pod,
                               const ks_pod_affinity_term *t, uint32_t n) {
    if (!n) return NULL;
    ipa_term *out = ks_cycle_state_alloc(st, n * sizeof(*out));
    for (uint32_t i = 0; i < n; i++) ipa_compile_term(st, c, pod, &t[i], &out[i]);
    return out;
}

ks_status *ipa_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                          const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **res) {
    ipa *pl = self;
    const ks_objects *objs = ipa_objects(pl);
    ipa_pf_state *s = ks_xcalloc(1, sizeof(*s));
    s->pod = pod;
    s->ns_labels = ipa_namespace_labels(objs, pod->ns);
    s->naff = pod->nreq_affinity;
    s->nanti = pod->nreq_anti;
    s->aff = compile_terms(st, objs, pod, pod->req_affinity, pod->nreq_affinity);
    s->anti = compile_terms(st, objs, pod, pod->req_anti, pod->nreq_anti);

    pf_ctx c = {.s = s};
    /* Existing anti-affinity: only nodes hosting pods with required
     * anti-affinity (the snapshot keeps that list). */
    const ks_snapshot *snap = pl->h ? ks_handle_snapshot(pl->h) : NULL;
    const ks_node_info *const *anti_nodes = nodes;
    size_t nanti_nodes = n;
    if (snap) {
        anti_nodes = (const ks_node_info *const *)snap->with_required_anti;
        nanti_nodes = snap->nwith_required_anti;
    }
    /* The tables are sized only when counted here: the memo's result
     * comes as a copy (sized for a node each, an unused table cost a
     * 128 KB calloc per cycle at 5000 nodes). */
    if (nanti_nodes) {
        ks_sig sig;
        ks_sig_init(&sig);
        ipa_sig_pod(&sig, pod, &s->ns_labels);
        c.existing_pass = true;
        if (!with_memo(pl, &c, &pl->existing_memo, &sig, 1, anti_nodes, nanti_nodes, &s->existing_anti, NULL)) {
            /* anti-affinity is mostly per host: about one pair per such node */
            ks_pairtab_init(&s->existing_anti, (uint32_t)nanti_nodes + 16);
            ks_pairtab_par_begin(&c.existing, &s->existing_anti, false);
            c.nodes = anti_nodes;
            ks_parallel_chunks(pl->h, nanti_nodes, count_existing_anti, &c);
            ks_pairtab_par_end(&c.existing);
            ks_pairtab_recount(&s->existing_anti);
        }
        ks_sig_free(&sig);
        for (uint32_t i = 0; i < s->existing_anti.cap; i++)
            if (s->existing_anti.keys[i]) note_existing_key(s, ks_pair_a(s->existing_anti.keys[i]));
    }

    if ((s->naff || s->nanti) && n) {
        ks_sig sig;
        ks_sig_init(&sig);
        ipa_sig_terms(&sig, s->aff, s->naff);
        ipa_sig_terms(&sig, s->anti, s->nanti);
        c.existing_pass = false;
        if (!with_memo(pl, &c, &pl->incoming_memo, &sig, 2, nodes, n, &s->aff_counts, &s->anti_counts)) {
            ks_pairtab_init(&s->aff_counts, ipa_size_hint(s->aff, s->naff, n));
            ks_pairtab_init(&s->anti_counts, ipa_size_hint(s->anti, s->nanti, n));
            ks_pairtab_par_begin(&c.aff, &s->aff_counts, false);
            ks_pairtab_par_begin(&c.anti, &s->anti_counts, false);
            c.nodes = nodes;
            ks_parallel_chunks(pl->h, n, count_incoming, &c);
            ks_pairtab_par_end(&c.aff);
            ks_pairtab_par_end(&c.anti);
            ks_pairtab_recount(&s->aff_counts);
            ks_pairtab_recount(&s->anti_counts);
        }
        ks_sig_free(&sig);
    }

    if (s->existing_anti.nnonzero == 0 && !s->naff && !s->nanti) {
        pf_free(s);
        return ks_status_new(KS_SKIP, NULL);
    }
    ks_cycle_state_write(st, ipa_pf_key, s, pf_free, pf_clone);
    return NULL;
}

/* ---- AddPod / RemovePod ------------------------------------------------ */

static void update_pair(ks_pairtab *t, const ks_node_info *ni, ks_id key, int64_t delta) {
    ks_id v;
    if (ks_ni_label(ni, key, &v)) ks_pairtab_add(t, ks_pair(key, v), delta);
}

static void update_with_pod(ipa_pf_state *s, const ks_pod *p, const ks_node_info *ni, int64_t delta) {
    for (uint32_t k = 0; k < p->nreq_anti; k++) {
        const ks_pod_affinity_term *t = &p->req_anti[k];
        if (!ipa_existing_term_matches(p, t, s->pod, &s->ns_labels)) continue;
        ks_id v;
        if (!ks_ni_label(ni, t->topology_key, &v)) continue;
        ks_pairtab_add(&s->existing_anti, ks_pair(t->topology_key, v), delta);
        note_existing_key(s, t->topology_key);
    }
    if (ipa_matches_all(s->aff, s->naff, p))
        for (uint32_t k = 0; k < s->naff; k++) update_pair(&s->aff_counts, ni, s->aff[k].key, delta);
    for (uint32_t k = 0; k < s->nanti; k++)
        if (ipa_term_matches(&s->anti[k], p)) update_pair(&s->anti_counts, ni, s->anti[k].key, delta);
}

static ks_status *no_state(void) {
    return ks_status_new(KS_ERROR, "error reading \"PreFilter" IPA_NAME "\" from cycleState: not found");
}

ks_status *ipa_add_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *add,
                       const ks_node_info *ni) {
    ipa_pf_state *s = ks_cycle_state_read(st, ipa_pf_key);
    if (!s) return no_state();
    update_with_pod(s, add, ni, 1);
    return NULL;
}

ks_status *ipa_remove_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *rm,
                          const ks_node_info *ni) {
    ipa_pf_state *s = ks_cycle_state_read(st, ipa_pf_key);
    if (!s) return no_state();
    update_with_pod(s, rm, ni, -1);
    return NULL;
}

/* ---- Filter ------------------------------------------------------------ */

static bool satisfies_affinity(const ipa_pf_state *s, const ks_node_info *ni) {
    bool pods_exist = true;
    for (uint32_t k = 0; k < s->naff; k++) {
        ks_id v;
        /* every topology key must be on the node */
        if (!ks_ni_label(ni, s->aff[k].key, &v)) return false;
        if (ks_pairtab_get(&s->aff_counts, ks_pair(s->aff[k].key, v)) <= 0) pods_exist = false;
    }
    if (pods_exist) return true;
    /* The first pod of a group with affinity to itself: no pod matches
     * anywhere, but the pod matches its own terms. */
    return s->aff_counts.nnonzero == 0 && ipa_matches_all(s->aff, s->naff, s->pod);
}

static bool satisfies_anti(const ipa_pf_state *s, const ks_node_info *ni) {
    if (!s->anti_counts.nnonzero) return true;
    for (uint32_t k = 0; k < s->nanti; k++) {
        ks_id v;
        if (ks_ni_label(ni, s->anti[k].key, &v) &&
            ks_pairtab_get(&s->anti_counts, ks_pair(s->anti[k].key, v)) > 0)
            return false;
    }
    return true;
}

static bool satisfies_existing_anti(const ipa_pf_state *s, const ks_node_info *ni) {
    if (!s->existing_anti.nnonzero) return true;
    /* Upstream walks the node's labels; walking the (few) keys that have
     * counts and looking each up on the node is the same test. */
    for (uint32_t k = 0; k < s->nexisting_keys; k++) {
        ks_id v;
        if (ks_ni_label(ni, s->existing_keys[k], &v) &&
            ks_pairtab_get(&s->existing_anti, ks_pair(s->existing_keys[k], v)) > 0)
            return false;
    }
    return true;
}

ks_status *ipa_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    const ipa_pf_state *s = ks_cycle_state_read(st, ipa_pf_key);
    if (!s) return no_state();
    if (!satisfies_affinity(s, ni)) return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, IPA_ERR_AFFINITY);
    if (!satisfies_anti(s, ni)) return ks_status_new_const(KS_UNSCHEDULABLE, IPA_ERR_ANTI);
    if (!satisfies_existing_anti(s, ni)) return ks_status_new_const(KS_UNSCHEDULABLE, IPA_ERR_EXISTING_ANTI);
    return NULL;
}
