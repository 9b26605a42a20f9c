/* InterPodAffinity: required and preferred pod (anti-)affinity, in both
 * directions (the incoming pod's terms against existing pods, and existing
 * pods' terms against the incoming pod). */
#include "plugins/helper/hints.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "util/arena.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

ks_state_key ipa_pf_key = -1, ipa_ps_key = -1;
ks_id ipa_hostname_key;

/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading them. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    ipa_pf_key = ks_state_key_get("PreFilter" IPA_NAME);
    ipa_ps_key = ks_state_key_get("PreScore" IPA_NAME);
    /* per-topology-pair tables, ~100 KB a pod at 1000 nodes with
     * anti-affinity: not kept while the pod binds */
    ks_state_key_scheduling_only(ipa_pf_key);
    ks_state_key_scheduling_only(ipa_ps_key);
    ipa_hostname_key = ks_intern("kubernetes.io/hostname");
}

const ks_objects *ipa_objects(const ipa *pl) {
    if (pl->objects) return pl->objects;
    return pl->h ? ks_handle_objects(pl->h) : NULL;
}

ks_labels ipa_namespace_labels(const ks_objects *c, ks_id ns) {
    ks_labels none = {0, NULL};
    const ks_namespace *n = c ? ks_objects_namespace(c, ns) : NULL;
    return n ? n->labels : none;
}

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

static bool has_id(const ks_id *v, uint32_t n, ks_id id) {
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == id) return true;
    return false;
}

/* Namespaces a term applies to when it names none and has no selector:
 * the namespace of the pod that owns it. */
static bool term_default_ns(const ks_pod_affinity_term *t) {
    return t->nnamespaces == 0 && !t->has_ns_selector;
}

void ipa_compile_term(ks_cycle_state *st, const ks_objects *c, const ks_pod *pod,
                      const ks_pod_affinity_term *t, ipa_term *out) {
    memset(out, 0, sizeof(*out));
    out->key = t->topology_key;
    out->weight = t->weight;
    out->sel = &t->selector;

    /* Namespaces: the listed ones (or the pod's own), plus every known
     * namespace the namespaceSelector selects. An empty selector selects
     * every namespace, known or not. */
    uint32_t cap = t->nnamespaces + 1;
    const ks_label_selector *nss = t->has_ns_selector ? &t->ns_selector : NULL;
    bool sel_all = nss && !nss->nothing && nss->nreq == 0;
    if (nss && !sel_all && c) cap += c->namespaces.n;
    ks_id *ns = ks_cycle_state_alloc(st, cap * sizeof(*ns));
    uint32_t n = 0;
    if (term_default_ns(t)) ns[n++] = pod->ns;
    for (uint32_t i = 0; i < t->nnamespaces; i++) ns[n++] = t->namespaces[i];
    if (sel_all) {
        out->all_ns = true;
    } else if (nss && c) {
        for (uint32_t i = 0; i < c->namespaces.n; i++) {
            const ks_namespace *k = c->namespaces.v[i];
            if (ks_selector_matches(nss, &k->labels)) ns[n++] = k->name;
        }
    }
    qsort(ns, n, sizeof(*ns), cmp_id);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!m || ns[m - 1] != ns[i]) ns[m++] = ns[i];
    out->ns = ns;
    out->nns = m;

    /* matchLabelKeys / mismatchLabelKeys: the API server merges them into
     * the selector when it creates a pod. Manifests may or may not have
     * been through it (a creationTimestamp proves nothing), so apply the
     * merge here for every pod, as the reference loader does: on a selector
     * already merged it only repeats a requirement. */
    if (!t->selector.nothing && (t->nmatch_label_keys || t->nmismatch_label_keys)) {
        out->extra = ks_cycle_state_alloc(
            st, (t->nmatch_label_keys + t->nmismatch_label_keys) * sizeof(*out->extra));
        for (uint32_t i = 0; i < t->nmatch_label_keys + t->nmismatch_label_keys; i++) {
            bool mis = i >= t->nmatch_label_keys;
            ks_id key = mis ? t->mismatch_label_keys[i - t->nmatch_label_keys] : t->match_label_keys[i];
            ks_id v;
            if (ks_labels_get(&pod->labels, key, &v))
                out->extra[out->nextra++] = (ipa_extra){.key = key, .value = v, .mismatch = mis};
        }
    }
}

static bool extras_match(const ipa_extra *e, uint32_t n, const ks_labels *l) {
    for (uint32_t i = 0; i < n; i++) {
        ks_id v;
        bool eq = ks_labels_get(l, e[i].key, &v) && v == e[i].value;
        if (eq == e[i].mismatch) return false;
    }
    return true;
}

bool ipa_term_matches(const ipa_term *t, const ks_pod *p) {
    if (!t->all_ns) {
        /* binary search: terms usually name one namespace */
        uint32_t lo = 0, hi = t->nns;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (t->ns[mid] < p->ns) lo = mid + 1;
            else hi = mid;
        }
        if (lo == t->nns || t->ns[lo] != p->ns) return false;
    }
    return ks_selector_matches(t->sel, &p->labels) && extras_match(t->extra, t->nextra, &p->labels);
}

bool ipa_matches_all(const ipa_term *terms, uint32_t n, const ks_pod *p) {
    if (!n) return false;
    for (uint32_t i = 0; i < n; i++)
        if (!ipa_term_matches(&terms[i], p)) return false;
    return true;
}

void ipa_sig_terms(ks_sig *sig, const ipa_term *t, uint32_t n) {
    ks_sig_u64(sig, n);
    for (uint32_t i = 0; i < n; i++) {
        ks_sig_u64(sig, ((uint64_t)t[i].key << 32) | (uint32_t)t[i].weight);
        ks_sig_selector(sig, t[i].sel);
        ks_sig_u64(sig, ((uint64_t)t[i].nns << 1) | t[i].all_ns);
        for (uint32_t j = 0; j < t[i].nns; j++) ks_sig_u64(sig, t[i].ns[j]);
        ks_sig_u64(sig, t[i].nextra);
        for (uint32_t j = 0; j < t[i].nextra; j++)
            ks_sig_u64(sig, ((uint64_t)t[i].extra[j].key << 33) | ((uint64_t)t[i].extra[j].value << 1) |
                                t[i].extra[j].mismatch);
    }
}

void ipa_sig_pod(ks_sig *sig, const ks_pod *pod, const ks_labels *ns_labels) {
    ks_sig_u64(sig, pod->ns);
    ks_sig_labels(sig, &pod->labels);
    ks_sig_labels(sig, ns_labels);
}

uint32_t ipa_size_hint(const ipa_term *terms, uint32_t n, size_t nnodes) {
    for (uint32_t i = 0; i < n; i++)
        if (terms[i].key == ipa_hostname_key) return (uint32_t)nnodes + 16;
    return 16;
}

bool ipa_existing_term_matches(const ks_pod *owner, const ks_pod_affinity_term *t,
                               const ks_pod *p, const ks_labels *ns_labels) {
    bool ns_ok;
    if (term_default_ns(t)) ns_ok = owner->ns == p->ns;
    else ns_ok = has_id(t->namespaces, t->nnamespaces, p->ns) ||
                 (t->has_ns_selector && ks_selector_matches(&t->ns_selector, ns_labels));
    if (!ns_ok || !ks_selector_matches(&t->selector, &p->labels)) return false;
    for (uint32_t i = 0; i < t->nmatch_label_keys + t->nmismatch_label_keys; i++) {
        bool mis = i >= t->nmatch_label_keys;
        ks_id key = mis ? t->mismatch_label_keys[i - t->nmatch_label_keys] : t->match_label_keys[i];
        ks_id want, got;
        if (!ks_labels_get(&owner->labels, key, &want)) continue;
        bool eq = ks_labels_get(&p->labels, key, &got) && got == want;
        if (eq == mis) return false;
    }
    return true;
}

/* ---- plugin ---------------------------------------------------------- */

static void *ipa_create(const ks_args *args, ks_handle *h, char **err) {
    int64_t w = 1;
    bool ignore = false;
    if (args) {
        const ks_args *a = ks_args_get(args, "hardPodAffinityWeight");
        if (a && !ks_args_int(a, &w)) {
            *err = ks_xasprintf("hardPodAffinityWeight: must be an integer");
            return NULL;
        }
        a = ks_args_get(args, "ignorePreferredTermsOfExistingPods");
        if (a && !ks_args_bool(a, &ignore)) {
            *err = ks_xasprintf("ignorePreferredTermsOfExistingPods: must be a boolean");
            return NULL;
        }
    }
    if (w < 0 || w > 100) {
        *err = ks_xasprintf("hardPodAffinityWeight: Invalid value: %lld: not in valid range [0, 100]",
                            (long long)w);
        return NULL;
    }
    pthread_once(&keys_once, init_keys);
    ipa *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    pl->hard_weight = (int32_t)w;
    pl->ignore_preferred = ignore;
    ks_nodememo_init(&pl->incoming_memo);
    ks_nodememo_init(&pl->existing_memo);
    ks_nodememo_init(&pl->score_memo);
    return pl;
}

static void ipa_destroy(void *self) {
    ipa *pl = self;
    if (!pl) return;
    ks_nodememo_free(&pl->incoming_memo);
    ks_nodememo_free(&pl->existing_memo);
    ks_nodememo_free(&pl->score_memo);
    free(pl);
}

static size_t ipa_events(void *self, ks_cluster_event *out, size_t max) {
    /* Assigned pods appearing, relabelled or deleted can satisfy affinity or
     * lift anti-affinity; nodes added or relabelled can add a topology. */
    const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE},
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

/* upstream podMatchesAllAffinityTerms: false for no terms. The namespace
 * selector is matched against no labels, as upstream's hint does. */
static bool matches_all_terms(const ks_pod *owner, const ks_pod_affinity_term *t, uint32_t n, const ks_pod *p) {
    if (n == 0) return false;
    ks_labels none = {0, NULL};
    for (uint32_t i = 0; i < n; i++)
        if (!ipa_existing_term_matches(owner, &t[i], p, &none)) return false;
    return true;
}

/* Pods: only bound pods count; a pod that starts matching all affinity
 * terms, or stops matching all anti-affinity terms, may help; an added pod
 * helps when it matches the affinity terms, a deleted one when it matched
 * the anti-affinity terms. Nodes: a topology key of an affinity term that
 * appears or changes value, of an anti-affinity term that disappears or
 * changes value; a new node when the pod has anti-affinity terms or the
 * node has an affinity term's key. */
static ks_queueing_hint ipa_hint(void *self, ks_cluster_event ev, const ks_pod *pod, const ks_event_object *old_obj,
                                 const ks_event_object *new_obj, char **err) {
    if (ev.resource & KS_EV_NODE) {
        const ks_node *o = ks_hint_node(old_obj), *n = ks_hint_node(new_obj);
        if (!n) return ks_hint_type_error(err, "Node");
        for (uint32_t i = 0; i < pod->nreq_affinity; i++) {
            ks_id key = pod->req_affinity[i].topology_key, ov, nv;
            bool nh = ks_labels_get(&n->labels, key, &nv);
            if (!o) {
                if (nh) return KS_QUEUE;
                continue;
            }
            bool oh = ks_labels_get(&o->labels, key, &ov);
            if ((!oh && nh) || (oh && nh && ov != nv)) return KS_QUEUE;
        }
        for (uint32_t i = 0; i < pod->nreq_anti; i++) {
            if (!o) return KS_QUEUE;
            ks_id key = pod->req_anti[i].topology_key, ov, nv;
            bool oh = ks_labels_get(&o->labels, key, &ov), nh = ks_labels_get(&n->labels, key, &nv);
            if ((oh && !nh) || (oh && nh && ov != nv)) return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    const ks_pod *o = ks_hint_pod(old_obj), *m = ks_hint_pod(new_obj);
    if (!o && !m) return ks_hint_type_error(err, "Pod");
    if ((m && m->node_name == 0) || (o && o->node_name == 0)) return KS_QUEUE_SKIP;
    const ks_pod_affinity_term *aff = pod->req_affinity, *anti = pod->req_anti;
    uint32_t naff = pod->nreq_affinity, nanti = pod->nreq_anti;
    if (o && m) {
        if (!matches_all_terms(pod, aff, naff, o) && matches_all_terms(pod, aff, naff, m)) return KS_QUEUE;
        if (matches_all_terms(pod, anti, nanti, o) && !matches_all_terms(pod, anti, nanti, m)) return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (m) return matches_all_terms(pod, aff, naff, m) ? KS_QUEUE : KS_QUEUE_SKIP;
    return matches_all_terms(pod, anti, nanti, o) ? KS_QUEUE : KS_QUEUE_SKIP;
}

const ks_plugin_ops ks_plugin_inter_pod_affinity = {
    .abi_version = KS_ABI_VERSION,
    .name = IPA_NAME,
    .create = ipa_create,
    .destroy = ipa_destroy,
    .events_to_register = ipa_events,
    .queueing_hint = ipa_hint,
    .pre_filter = ipa_pre_filter,
    .add_pod = ipa_add_pod,
    .remove_pod = ipa_remove_pod,
    .filter = ipa_filter,
    .pre_score = ipa_pre_score,
    .score = ipa_score,
    .normalize_score = ipa_normalize_score,
};
