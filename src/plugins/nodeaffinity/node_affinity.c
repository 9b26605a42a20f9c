/* NodeAffinity.
 *
 * Filter: the node must match the pod's spec.nodeSelector, its required
 * node affinity and the scheduler-enforced `addedAffinity.required` of the
 * plugin args. PreFilter narrows the candidate nodes when every required
 * term names nodes with a metadata.name In field requirement.
 * Score: the sum of the weights of the preferred terms (the pod's and the
 * args' addedAffinity.preferred) the node matches, normalized to 0..100. */
#include "framework/nodeinfo.h"
#include "framework/status.h"
#include "plugins/helper/args.h"
#include "plugins/helper/hints.h"
#include "plugins/helper/normalize_score.h"
#include "plugins/nodeaffinity/node_affinity.h"
#include "util/arena.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node_affinity {
    ks_arena *arena; /* the parsed addedAffinity */
    bool has_added_required;
    ks_node_selector added_required;
    uint32_t nadded_preferred;
    ks_preferred_node_term *added_preferred;
} node_affinity;

#define ERR_REASON_POD "node(s) didn't match Pod's node affinity/selector"
#define ERR_REASON_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define ERR_REASON_CONFLICT "pod affinity terms conflict"

static void destroy(void *self) {
    node_affinity *pl = self;
    if (!pl) return;
    ks_arena_free(pl->arena);
    free(pl);
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    node_affinity *pl = ks_xcalloc(1, sizeof(*pl));
    pl->arena = ks_arena_new(1024);
    ks_node_affinity_args a;
    if (!ks_node_affinity_args_parse(args, pl->arena, &a, err)) {
        destroy(pl);
        return NULL;
    }
    pl->has_added_required = a.has_required;
    pl->added_required = a.required;
    /* Upstream keeps the added preferred terms only when there is at least
     * one; an empty list behaves as no list (PreScore may then Skip). */
    pl->nadded_preferred = a.npreferred;
    pl->added_preferred = a.preferred;
    return pl;
}

/* Upstream (queueing hints on): Node/Add|UpdateNodeLabel. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    if (max < 1) return 0;
    out[0] = (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL};
    return 1;
}

/* A node helps when it matches the enforced affinity and the pod's
 * required affinity (with its nodeSelector) and did not before (or is
 * new). */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    node_affinity *pl = self;
    const ks_node *o = ks_hint_node(old_obj), *n = ks_hint_node(new_obj);
    if (!n) return ks_hint_type_error(err, "Node");
    if (pl->has_added_required && !ks_node_selector_matches(&pl->added_required, &n->labels, n->name))
        return KS_QUEUE_SKIP;
    if (!ks_node_affinity_required_matches(pod, n)) return KS_QUEUE_SKIP;
    if (!o) return KS_QUEUE;
    return ks_node_affinity_required_matches(pod, o) ? KS_QUEUE_SKIP : KS_QUEUE;
}

/* ---- PreFilter: node-name narrowing ------------------------------------- */

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

/* dst (sorted, unique, n entries) ∩ src values; returns the new count. */
static uint32_t intersect(ks_id *dst, uint32_t n, const ks_id *src, uint32_t m) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < m; j++) {
            if (src[j] == dst[i]) {
                dst[k++] = dst[i];
                break;
            }
        }
    }
    return k;
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    node_affinity *pl = self;
    bool no_node_affinity = !pod->has_required_node_affinity;
    /* Nothing to check: no required affinity of the pod's, no enforced
     * affinity and no nodeSelector. (A written but empty nodeSelector is
     * decoded as none; it matches every node either way.) */
    if (no_node_affinity && !pl->has_added_required && pod->node_selector.n == 0)
        return ks_status_new(KS_SKIP, NULL);
    if (no_node_affinity || pod->required_node_affinity.nterms == 0) return NULL;

    /* Terms are ORed, the requirements of a term ANDed: a term restricts
     * the node names only if it has a metadata.name In requirement, and a
     * single unrestricted term leaves every node eligible. */
    const ks_node_selector *sel = &pod->required_node_affinity;
    uint32_t cap = 0;
    for (uint32_t t = 0; t < sel->nterms; t++)
        for (uint32_t f = 0; f < sel->terms[t].nfields; f++) cap += sel->terms[t].fields[f].nvalues;
    ks_id *names = ks_cycle_state_alloc(st, (cap + 1) * sizeof(ks_id));
    ks_id *term_names = ks_cycle_state_alloc(st, (cap + 1) * sizeof(ks_id));
    uint32_t nnames = 0;
    for (uint32_t t = 0; t < sel->nterms; t++) {
        const ks_node_selector_term *term = &sel->terms[t];
        bool restricted = false;
        uint32_t nterm = 0;
        for (uint32_t f = 0; f < term->nfields; f++) {
            const ks_requirement *r = &term->fields[f];
            if (r->key != KS_FIELD_METADATA_NAME || r->op != KS_OP_IN) continue;
            if (!restricted) {
                memcpy(term_names, r->values, r->nvalues * sizeof(ks_id));
                nterm = r->nvalues;
                restricted = true;
            } else {
                nterm = intersect(term_names, nterm, r->values, r->nvalues);
            }
        }
        if (!restricted) return NULL;
        for (uint32_t i = 0; i < nterm; i++) names[nnames++] = term_names[i];
    }
    if (nnames == 0) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT);
    qsort(names, nnames, sizeof(ks_id), cmp_id);
    ks_pre_filter_result *r = ks_pre_filter_result_new(st);
    for (uint32_t i = 0; i < nnames; i++)
        if (i == 0 || names[i] != names[i - 1]) ks_pre_filter_result_add(r, ks_str(names[i]));
    *result = r;
    return NULL;
}

/* ---- Filter ------------------------------------------------------------ */

static bool node_selector_matches(const ks_labels *want, const ks_labels *have) {
    for (uint32_t i = 0; i < want->n; i++) {
        ks_id v;
        if (!ks_labels_get(have, want->kv[i].key, &v) || v != want->kv[i].value) return false;
    }
    return true;
}

bool ks_node_affinity_required_matches(const ks_pod *pod, const ks_node *node) {
    if (!node_selector_matches(&pod->node_selector, &node->labels)) return false;
    if (pod->has_required_node_affinity &&
        !ks_node_selector_matches(&pod->required_node_affinity, &node->labels, node->name))
        return false;
    return true;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *ni) {
    node_affinity *pl = self;
    const ks_node *node = ni->node;
    if (pl->has_added_required &&
        !ks_node_selector_matches(&pl->added_required, &node->labels, node->name))
        return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED);
    if (!ks_node_affinity_required_matches(pod, node))
        return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD);
    return NULL;
}

/* ---- Score ------------------------------------------------------------- */

static int64_t preferred_score(const ks_preferred_node_term *terms, uint32_t n,
                               const ks_node *node) {
    int64_t score = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ks_preferred_node_term *t = &terms[i];
        /* Upstream drops zero-weight and empty terms when parsing. */
        if (t->weight == 0 || (t->term.nexpr == 0 && t->term.nfields == 0)) continue;
        if (ks_node_selector_term_matches(&t->term, &node->labels, node->name))
            score += t->weight;
    }
    return score;
}

static ks_status *pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes) {
    node_affinity *pl = self;
    /* The pod's preferred terms are already parsed on the pod, so there is
     * nothing to precompute; only decide whether Score has work. An absent
     * or empty list counts as none. */
    if (pod->npreferred_node == 0 && pl->nadded_preferred == 0) return ks_status_new(KS_SKIP, NULL);
    return NULL;
}

static ks_status *score(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *ni, int64_t *out) {
    node_affinity *pl = self;
    const ks_node *node = ni->node;
    int64_t count = preferred_score(pl->added_preferred, pl->nadded_preferred, node);
    count += preferred_score(pod->preferred_node, pod->npreferred_node, node);
    *out = count;
    return NULL;
}

static ks_status *normalize_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                                  ks_node_score *scores, size_t n) {
    ks_default_normalize_score(KS_MAX_NODE_SCORE, false, scores, n);
    return NULL;
}

const ks_plugin_ops ks_plugin_node_affinity = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeAffinity",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .normalize_score = normalize_score,
};

/* ---- args ---------------------------------------------------------------- */

static int cmp_id_qsort(const void *a, const void *b) { return cmp_id(a, b); }

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

/* One NodeSelectorRequirement: label expressions accept every operator,
 * field requirements (metadata.name only) In and NotIn with one value.
 * Errors follow upstream's labels.NewRequirement / field selector texts. */
static void parse_requirement(const ks_args *r, bool is_field, const char *path, ks_arena *a,
                              ks_requirement *out, ks_errlist *e) {
    const char *key = ks_args_string(ks_args_get(r, "key"));
    const char *op = ks_args_string(ks_args_get(r, "operator"));
    const ks_args *vals = ks_args_get(r, "values");
    size_t nvals = vals ? ks_args_len(vals) : 0;
    if (!key) key = "";
    if (!op) op = "";
    memset(out, 0, sizeof(*out));
    out->key = ks_intern(key);
    int opi = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(op, op_names[i]) == 0) opi = i;
    if (is_field) {
        if (opi != KS_OP_IN && opi != KS_OP_NOT_IN) {
            ks_errlist_add(e, "%s.operator: Unsupported value: \"%s\": supported values: \"In\", \"NotIn\"",
                           path, op);
            return;
        }
        if (nvals != 1) {
            ks_errlist_add(e, "%s.values: Invalid value: %zu values: must have one element", path, nvals);
            return;
        }
    } else {
        if (!ks_is_qualified_name(key))
            ks_errlist_add(e, "%s.key: Invalid value: \"%s\": " KS_QUALIFIED_NAME_MSG, path, key);
        switch (opi) {
        case KS_OP_IN:
        case KS_OP_NOT_IN:
            if (nvals == 0)
                ks_errlist_add(e, "%s.values: Invalid value: []: for 'in', 'notin' operators, "
                                  "values set can't be empty", path);
            break;
        case KS_OP_EXISTS:
        case KS_OP_DOES_NOT_EXIST:
            if (nvals != 0)
                ks_errlist_add(e, "%s.values: Invalid value: %zu values: values set must be empty "
                                  "for exists and does not exist", path, nvals);
            break;
        case KS_OP_GT:
        case KS_OP_LT:
            if (nvals != 1)
                ks_errlist_add(e, "%s.values: Invalid value: %zu values: for 'Gt', 'Lt' operators, "
                                  "exactly one value is required", path, nvals);
            break;
        default:
            ks_errlist_add(e, "%s.operator: Unsupported value: \"%s\": supported values: \"In\", "
                              "\"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"", path, op);
            return;
        }
    }
    out->op = (ks_op)opi;
    out->values = ks_arena_calloc(a, nvals + 1, sizeof(ks_id));
    for (size_t i = 0; i < nvals; i++) {
        const char *v = ks_args_string(ks_args_item(vals, i));
        if (!v) v = "";
        if (!is_field && !ks_is_label_value(v))
            ks_errlist_add(e, "%s.values[%zu][%s]: Invalid value: \"%s\": " KS_LABEL_VALUE_MSG, path,
                           i, key, v);
        if (opi == KS_OP_GT || opi == KS_OP_LT) {
            char *end;
            errno = 0;
            long long num = strtoll(v, &end, 10);
            if (!*v || *end || errno)
                ks_errlist_add(e, "%s.values[%zu]: Invalid value: \"%s\": for 'Gt', 'Lt' operators, "
                                  "the value must be an integer", path, i, v);
            out->num = num;
        }
        out->values[out->nvalues++] = ks_intern(v);
    }
    qsort(out->values, out->nvalues, sizeof(ks_id), cmp_id_qsort);
}

static void parse_term(const ks_args *t, const char *path, ks_arena *a, ks_node_selector_term *out,
                       ks_errlist *e) {
    memset(out, 0, sizeof(*out));
    const ks_args *exprs = ks_args_get(t, "matchExpressions");
    const ks_args *fields = ks_args_get(t, "matchFields");
    size_t ne = exprs ? ks_args_len(exprs) : 0, nf = fields ? ks_args_len(fields) : 0;
    out->exprs = ks_arena_calloc(a, ne + 1, sizeof(ks_requirement));
    out->fields = ks_arena_calloc(a, nf + 1, sizeof(ks_requirement));
    char p[512];
    for (size_t i = 0; i < ne; i++) {
        snprintf(p, sizeof(p), "%s.matchExpressions[%zu]", path, i);
        parse_requirement(ks_args_item(exprs, i), false, p, a, &out->exprs[out->nexpr++], e);
    }
    for (size_t i = 0; i < nf; i++) {
        snprintf(p, sizeof(p), "%s.matchFields[%zu]", path, i);
        parse_requirement(ks_args_item(fields, i), true, p, a, &out->fields[out->nfields++], e);
    }
}

bool ks_node_affinity_args_parse(const ks_args *args, ks_arena *arena, ks_node_affinity_args *out,
                                 char **err) {
    memset(out, 0, sizeof(*out));
    const ks_args *added = args ? ks_args_get(args, "addedAffinity") : NULL;
    if (!added) return true;
    ks_errlist e;
    ks_errlist_init(&e);
    char p[256];

    const ks_args *req = ks_args_get(added, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req) {
        out->has_required = true;
        const ks_args *terms = ks_args_get(req, "nodeSelectorTerms");
        size_t n = terms ? ks_args_len(terms) : 0;
        out->required.terms = ks_arena_calloc(arena, n + 1, sizeof(ks_node_selector_term));
        for (size_t i = 0; i < n; i++) {
            snprintf(p, sizeof(p),
                     "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%zu]", i);
            parse_term(ks_args_item(terms, i), p, arena, &out->required.terms[out->required.nterms++], &e);
        }
    }

    const ks_args *pref = ks_args_get(added, "preferredDuringSchedulingIgnoredDuringExecution");
    size_t n = pref ? ks_args_len(pref) : 0;
    out->preferred = ks_arena_calloc(arena, n + 1, sizeof(ks_preferred_node_term));
    for (size_t i = 0; i < n; i++) {
        const ks_args *t = ks_args_item(pref, i);
        int64_t w = 0;
        const ks_args *wa = ks_args_get(t, "weight");
        if (wa && !ks_args_int(wa, &w))
            ks_errlist_add(&e, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[%zu]"
                               ".weight: must be an integer", i);
        snprintf(p, sizeof(p), "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[%zu]",
                 i);
        ks_preferred_node_term *pt = &out->preferred[out->npreferred++];
        pt->weight = (int32_t)w;
        /* Upstream neither parses nor validates a zero-weight term. */
        if (w != 0) parse_term(ks_args_get(t, "preference"), p, arena, &pt->term, &e);
    }

    *err = ks_errlist_take(&e);
    return *err == NULL;
}
