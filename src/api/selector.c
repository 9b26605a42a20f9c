#include "api/selector.h"

#include <string.h>

ks_id KS_FIELD_METADATA_NAME;

static bool has_value(const ks_requirement *r, ks_id v) {
    uint32_t lo = 0, hi = r->nvalues;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (r->values[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->nvalues && r->values[lo] == v;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, in range. */
bool ks_parse_int64(const char *s, int64_t *out) {
    size_t i = 0;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i++;
    }
    if (!s[i]) return false;
    uint64_t v = 0;
    for (; s[i]; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* labels.Requirement.Matches over a label set. */
bool ks_requirement_matches(const ks_requirement *r, const ks_labels *labels) {
    ks_id v;
    bool present = ks_labels_get(labels, r->key, &v);
    switch (r->op) {
    case KS_OP_IN: return present && has_value(r, v);
    case KS_OP_NOT_IN: return !present || !has_value(r, v);
    case KS_OP_EXISTS: return present;
    case KS_OP_DOES_NOT_EXIST: return !present;
    case KS_OP_GT:
    case KS_OP_LT: {
        int64_t n;
        if (!present || !ks_parse_int64(ks_str(v), &n)) return false;
        return r->op == KS_OP_GT ? n > r->num : n < r->num;
    }
    }
    return false;
}

bool ks_selector_matches(const ks_label_selector *sel, const ks_labels *labels) {
    if (sel->nothing) return false;
    for (uint32_t i = 0; i < sel->nreq; i++)
        if (!ks_requirement_matches(&sel->reqs[i], labels)) return false;
    return true;
}

/* A field requirement (In/NotIn with one value) against the node's fields;
 * metadata.name is the only field a node has, others read as "". */
static bool field_matches(const ks_requirement *r, ks_id node_name) {
    ks_id v = r->key == KS_FIELD_METADATA_NAME ? node_name : KS_ID_NONE;
    bool eq = r->nvalues == 1 && r->values[0] == v;
    return r->op == KS_OP_IN ? eq : r->op == KS_OP_NOT_IN ? !eq : false;
}

bool ks_node_selector_term_matches(const ks_node_selector_term *t, const ks_labels *labels,
                                   ks_id node_name) {
    if (t->nexpr == 0 && t->nfields == 0) return false;
    for (uint32_t i = 0; i < t->nexpr; i++)
        if (!ks_requirement_matches(&t->exprs[i], labels)) return false;
    /* upstream skips field requirements for a node without a name */
    if (node_name != KS_ID_NONE)
        for (uint32_t i = 0; i < t->nfields; i++)
            if (!field_matches(&t->fields[i], node_name)) return false;
    return true;
}

bool ks_node_selector_matches(const ks_node_selector *s, const ks_labels *labels, ks_id node_name) {
    for (uint32_t i = 0; i < s->nterms; i++)
        if (ks_node_selector_term_matches(&s->terms[i], labels, node_name)) return true;
    return false;
}
