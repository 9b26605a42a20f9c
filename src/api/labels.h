/* Label sets: key/value id pairs sorted by key id. */
#ifndef KS_LABELS_H
#define KS_LABELS_H

#include "util/intern.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ks_label {
    ks_id key, value;
} ks_label;

typedef struct ks_labels {
    uint32_t n;
    ks_label *kv; /* sorted by key */
} ks_labels;

/* True and *value set when key is present. */
bool ks_labels_get(const ks_labels *l, ks_id key, ks_id *value);
static inline bool ks_labels_has(const ks_labels *l, ks_id key) {
    return ks_labels_get(l, key, 0);
}
/* Sort and check for duplicates (false on a duplicate key). */
bool ks_labels_sort(ks_labels *l);

#endif
