/* Label selectors (metav1.LabelSelector) and node selectors
 * (v1.NodeSelector), compiled at decode time into requirement lists over
 * interned ids. */
#ifndef KS_SELECTOR_H
#define KS_SELECTOR_H

#include "api/labels.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    KS_OP_IN = 0,
    KS_OP_NOT_IN,
    KS_OP_EXISTS,
    KS_OP_DOES_NOT_EXIST,
    KS_OP_GT,
    KS_OP_LT,
} ks_op;

typedef struct ks_requirement {
    ks_id key;
    ks_op op;
    uint32_t nvalues;
    ks_id *values;   /* sorted; for Gt/Lt one value */
    int64_t num;     /* Gt/Lt operand */
} ks_requirement;

/* A label selector. `nothing` marks a nil selector, which matches no
 * object (affinity terms, spread constraints); an empty, non-nil selector
 * matches everything. matchLabels become In requirements. */
typedef struct ks_label_selector {
    bool nothing;
    uint32_t nreq;
    ks_requirement *reqs;
} ks_label_selector;

bool ks_selector_matches(const ks_label_selector *sel, const ks_labels *labels);
bool ks_requirement_matches(const ks_requirement *r, const ks_labels *labels);
/* strconv.ParseInt(s, 10, 64), as Gt/Lt read label values. */
bool ks_parse_int64(const char *s, int64_t *out);

/* A node selector term: requirements on labels and on fields; the only
 * field is metadata.name. A term with neither matches nothing. */
typedef struct ks_node_selector_term {
    uint32_t nexpr;
    ks_requirement *exprs;
    uint32_t nfields;
    ks_requirement *fields; /* key = interned "metadata.name" */
} ks_node_selector_term;

typedef struct ks_node_selector {
    uint32_t nterms;
    ks_node_selector_term *terms; /* ORed */
} ks_node_selector;

extern ks_id KS_FIELD_METADATA_NAME; /* valid after ks_api_init() */

bool ks_node_selector_term_matches(const ks_node_selector_term *t, const ks_labels *labels,
                                   ks_id node_name);
bool ks_node_selector_matches(const ks_node_selector *s, const ks_labels *labels,
                              ks_id node_name);

#endif
