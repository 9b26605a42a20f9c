/* PodTopologySpread: constraints of a pod (its own or the defaults, with
 * the default selector of its Services and controller), node inclusion
 * policies, and pod counting. */
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "framework/handle.h"

#include <string.h>

const ks_objects *pts_objects(const pts *pl) {
    if (pl->objects) return pl->objects;
    return pl->h ? ks_handle_objects(pl->h) : NULL;
}

bool pts_node_has_keys(const ks_node_info *ni, const pts_constraint *c, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!ks_ni_label(ni, c[i].key, NULL)) return false;
    return true;
}

bool pts_node_values(const ks_node_info *ni, const pts_constraint *c, uint32_t n, ks_id *vals) {
    for (uint32_t i = 0; i < n; i++)
        if (!ks_ni_label(ni, c[i].key, &vals[i])) return false;
    return true;
}

bool pts_selector_matches(const pts_constraint *c, const ks_labels *labels) {
    if (!ks_selector_matches(c->sel, labels)) return false;
    for (uint32_t i = 0; i < c->nextra; i++) {
        ks_id v;
        if (!ks_labels_get(labels, c->extra[i].key, &v) || v != c->extra[i].value) return false;
    }
    return true;
}

void pts_sig(ks_sig *sig, const pts_constraint *c, uint32_t n, ks_id ns) {
    ks_sig_u64(sig, ns);
    ks_sig_u64(sig, n);
    for (uint32_t k = 0; k < n; k++) {
        ks_sig_u64(sig, c[k].key);
        ks_sig_u64(sig, ((uint64_t)c[k].same_as << 3) | ((uint64_t)c[k].honor_affinity << 2) |
                            ((uint64_t)c[k].honor_taints << 1) | c[k].empty);
        ks_sig_selector(sig, c[k].sel);
        ks_sig_u64(sig, c[k].nextra);
        for (uint32_t i = 0; i < c[k].nextra; i++)
            ks_sig_u64(sig, ((uint64_t)c[k].extra[i].key << 32) | c[k].extra[i].value);
    }
}

void pts_sig_policies(ks_sig *sig, const ks_pod *pod, bool affinity, bool taints) {
    ks_sig_u64(sig, ((uint64_t)affinity << 1) | taints);
    if (affinity) {
        ks_sig_labels(sig, &pod->node_selector);
        const ks_node_selector *na = &pod->required_node_affinity;
        ks_sig_u64(sig, pod->has_required_node_affinity ? na->nterms : UINT64_MAX);
        for (uint32_t i = 0; pod->has_required_node_affinity && i < na->nterms; i++) {
            ks_sig_requirements(sig, na->terms[i].exprs, na->terms[i].nexpr);
            ks_sig_requirements(sig, na->terms[i].fields, na->terms[i].nfields);
        }
    }
    if (taints) {
        ks_sig_u64(sig, pod->ntolerations);
        for (uint32_t i = 0; i < pod->ntolerations; i++) {
            const ks_toleration *t = &pod->tolerations[i];
            ks_sig_u64(sig, ((uint64_t)t->key << 32) | t->value);
            ks_sig_u64(sig, ((uint64_t)t->op << 32) | (uint32_t)t->effect);
        }
    }
}

int64_t pts_count_matching(const pts_constraint *c, const ks_node_info *ni, ks_id ns) {
    if (c->empty) return 0;
    int64_t n = 0;
    for (uint32_t i = 0; i < ni->npods; i++) {
        const ks_pod *p = ni->pods[i];
        if (p->has_deletion_ts || p->ns != ns) continue;
        n += pts_selector_matches(c, &p->labels);
    }
    return n;
}

bool pts_node_affinity_matches(const ks_pod *pod, const ks_node_info *ni) {
    const ks_labels *l = ks_ni_labels(ni);
    for (uint32_t i = 0; i < pod->node_selector.n; i++) {
        ks_id v;
        if (!ks_labels_get(l, pod->node_selector.kv[i].key, &v) || v != pod->node_selector.kv[i].value)
            return false;
    }
    if (pod->has_required_node_affinity &&
        !ks_node_selector_matches(&pod->required_node_affinity, l, ni->name))
        return false;
    return true;
}

bool pts_node_taints_tolerated(const ks_pod *pod, const ks_node_info *ni) {
    if (!ni->node) return true;
    for (uint32_t i = 0; i < ni->node->ntaints; i++) {
        const ks_taint *t = &ni->node->taints[i];
        if (t->effect != KS_EFFECT_NO_SCHEDULE && t->effect != KS_EFFECT_NO_EXECUTE) continue;
        if (!ks_tolerations_tolerate(pod->tolerations, pod->ntolerations, t)) return false;
    }
    return true;
}

/* Keep the two smallest counts. Value 0 ("") doubles as the placeholder's
 * value, exactly as upstream's zero-valued criticalPaths entries do. */
void pts_paths_update(pts_paths *p, ks_id value, int64_t num) {
    int i = value == p->value[0] ? 0 : value == p->value[1] ? 1 : -1;
    if (i >= 0) {
        p->num[i] = num;
        if (p->num[0] > p->num[1]) {
            ks_id v = p->value[0];
            int64_t m = p->num[0];
            p->value[0] = p->value[1], p->num[0] = p->num[1];
            p->value[1] = v, p->num[1] = m;
        }
    } else if (num < p->num[0]) {
        p->value[1] = p->value[0], p->num[1] = p->num[0];
        p->value[0] = value, p->num[0] = num;
    } else if (num < p->num[1]) {
        p->value[1] = value, p->num[1] = num;
    }
}

/* ---- the default selector (upstream helper.DefaultSelector) ----------- */

typedef struct label_set {
    uint32_t n, cap;
    ks_label *kv;
} label_set;

static void set_put(ks_cycle_state *st, label_set *s, ks_id key, ks_id value) {
    for (uint32_t i = 0; i < s->n; i++)
        if (s->kv[i].key == key) {
            s->kv[i].value = value; /* later maps win, as labels.Merge */
            return;
        }
    if (s->n == s->cap) {
        uint32_t ncap = s->cap ? s->cap * 2 : 8;
        ks_label *kv = ks_cycle_state_alloc(st, ncap * sizeof(*kv));
        if (s->n) memcpy(kv, s->kv, s->n * sizeof(*kv));
        s->kv = kv;
        s->cap = ncap;
    }
    s->kv[s->n++] = (ks_label){key, value};
}

/* A Service or ReplicationController selector is a plain map; the decoder
 * stores it as single-value In requirements. */
static void set_merge_map(ks_cycle_state *st, label_set *s, const ks_label_selector *sel) {
    if (sel->nothing) return;
    for (uint32_t i = 0; i < sel->nreq; i++) {
        const ks_requirement *r = &sel->reqs[i];
        if (r->op == KS_OP_IN && r->nvalues == 1) set_put(st, s, r->key, r->values[0]);
    }
}

static const ks_workload *find_workload(const ks_objects *c, ks_workload_kind kind, ks_id ns,
                                        const char *name) {
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *w = c->workloads.v[i];
        if (w->kind == kind && w->ns == ns && strcmp(ks_str(w->name), name) == 0) return w;
    }
    return NULL;
}

static ks_id rc_kind, rs_kind, ss_kind;
ks_id pts_hostname_key;

void pts_init_ids(void) {
    pts_hostname_key = ks_intern("kubernetes.io/hostname");
    rc_kind = ks_intern("ReplicationController");
    rs_kind = ks_intern("ReplicaSet");
    ss_kind = ks_intern("StatefulSet");
}

/* Build the selector into *out; false when it is empty (no spreading). */
static bool default_selector(const pts *pl, ks_cycle_state *st, const ks_pod *pod, ks_label_selector *out) {
    const ks_objects *c = pts_objects(pl);
    memset(out, 0, sizeof(*out));
    if (!c) return false;
    label_set set = {0};
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *w = c->workloads.v[i];
        if (w->kind != KS_WORKLOAD_SERVICE || w->ns != pod->ns || w->selector.nothing) continue;
        if (ks_selector_matches(&w->selector, &pod->labels)) set_merge_map(st, &set, &w->selector);
    }
    const ks_label_selector *extra = NULL;
    const ks_owner_ref *o = ks_pod_controller(pod);
    if (o && o->api_version) {
        const char *name = o->name ? o->name : "";
        if (o->kind == rc_kind && strcmp(o->api_version, "v1") == 0) {
            const ks_workload *w = find_workload(c, KS_WORKLOAD_RC, pod->ns, name);
            if (w) set_merge_map(st, &set, &w->selector);
        } else if (strcmp(o->api_version, "apps/v1") == 0 && (o->kind == rs_kind || o->kind == ss_kind)) {
            const ks_workload *w = find_workload(
                c, o->kind == rs_kind ? KS_WORKLOAD_REPLICASET : KS_WORKLOAD_STATEFULSET, pod->ns, name);
            /* a nil selector has no requirements to add */
            if (w && !w->selector.nothing) extra = &w->selector;
        }
    }
    uint32_t n = set.n + (extra ? extra->nreq : 0);
    if (!n) return false;
    out->reqs = ks_cycle_state_alloc(st, n * sizeof(*out->reqs));
    for (uint32_t i = 0; i < set.n; i++) {
        ks_id *v = ks_cycle_state_alloc(st, sizeof(*v));
        *v = set.kv[i].value;
        out->reqs[out->nreq++] = (ks_requirement){.key = set.kv[i].key, .op = KS_OP_IN, .nvalues = 1, .values = v};
    }
    for (uint32_t i = 0; extra && i < extra->nreq; i++) out->reqs[out->nreq++] = extra->reqs[i];
    return true;
}

/* ---- constraints -------------------------------------------------------- */

static bool same_requirements(const ks_label_selector *a, const ks_label_selector *b) {
    if (a == b) return true;
    if (a->nothing != b->nothing || a->nreq != b->nreq) return false;
    for (uint32_t i = 0; i < a->nreq; i++) {
        const ks_requirement *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->key != y->key || x->op != y->op || x->nvalues != y->nvalues || x->num != y->num) return false;
        if (x->nvalues && memcmp(x->values, y->values, x->nvalues * sizeof(*x->values))) return false;
    }
    return true;
}

static bool same_selector(const pts_constraint *a, const pts_constraint *b) {
    return a->empty == b->empty && a->nextra == b->nextra && same_requirements(a->sel, b->sel) &&
           (!a->nextra || !memcmp(a->extra, b->extra, a->nextra * sizeof(*a->extra)));
}

static void finish(pts_constraint *c, uint32_t n, const ks_pod *pod) {
    for (uint32_t i = 0; i < n; i++) {
        c[i].self_match = pts_selector_matches(&c[i], &pod->labels);
        c[i].hostname = c[i].key == pts_hostname_key;
        c[i].empty = !c[i].sel->nothing && c[i].sel->nreq == 0 && c[i].nextra == 0;
        c[i].same_as = i;
        for (uint32_t j = 0; j < i; j++)
            if (same_selector(&c[i], &c[j])) {
                c[i].same_as = j;
                break;
            }
    }
}

uint32_t pts_constraints(const pts *pl, ks_cycle_state *st, const ks_pod *pod, ks_unsatisfiable action,
                         pts_constraint **out) {
    *out = NULL;
    uint32_t n = 0;
    if (pod->nspread) {
        for (uint32_t i = 0; i < pod->nspread; i++) n += pod->spread[i].when_unsatisfiable == action;
        if (!n) return 0;
        pts_constraint *c = ks_cycle_state_alloc(st, n * sizeof(*c));
        uint32_t k = 0;
        for (uint32_t i = 0; i < pod->nspread; i++) {
            const ks_spread_constraint *s = &pod->spread[i];
            if (s->when_unsatisfiable != action) continue;
            pts_constraint *d = &c[k++];
            d->max_skew = s->max_skew;
            d->key = s->topology_key;
            d->min_domains = s->has_min_domains ? s->min_domains : 1;
            d->honor_affinity = !s->has_node_affinity_policy || s->node_affinity_policy == KS_POLICY_HONOR;
            d->honor_taints = s->has_node_taints_policy && s->node_taints_policy == KS_POLICY_HONOR;
            d->sel = &s->selector;
            /* matchLabelKeys: the pod's values for those keys join the
             * selector (a nil selector stays nil). */
            if (s->nmatch_label_keys && !s->selector.nothing) {
                d->extra = ks_cycle_state_alloc(st, s->nmatch_label_keys * sizeof(*d->extra));
                for (uint32_t j = 0; j < s->nmatch_label_keys; j++) {
                    ks_id v;
                    if (ks_labels_get(&pod->labels, s->match_label_keys[j], &v))
                        d->extra[d->nextra++] = (ks_label){s->match_label_keys[j], v};
                }
            }
        }
        finish(c, n, pod);
        *out = c;
        return n;
    }

    for (uint32_t i = 0; i < pl->ndefaults; i++) n += pl->defaults[i].when == action;
    if (!n) return 0;
    ks_label_selector *sel = ks_cycle_state_alloc(st, sizeof(*sel));
    if (!default_selector(pl, st, pod, sel)) return 0;
    pts_constraint *c = ks_cycle_state_alloc(st, n * sizeof(*c));
    uint32_t k = 0;
    for (uint32_t i = 0; i < pl->ndefaults; i++) {
        const pts_default *s = &pl->defaults[i];
        if (s->when != action) continue;
        pts_constraint *d = &c[k++];
        d->max_skew = s->max_skew;
        d->key = s->key;
        d->min_domains = s->min_domains;
        d->honor_affinity = s->affinity_policy == KS_POLICY_HONOR;
        d->honor_taints = s->taints_policy == KS_POLICY_HONOR;
        d->sel = sel;
    }
    finish(c, n, pod);
    *out = c;
    return n;
}
