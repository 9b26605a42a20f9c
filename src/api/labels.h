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

/* Annotations of pods and nodes: the key interned, the value a plain
 * string the object keeps. Values are hashes, JSON, timestamps: interned,
 * a long-running scheduler would keep every one it ever saw. */
typedef struct ks_annotation {
    ks_id key;
    const char *value;
} ks_annotation;

typedef struct ks_annotations {
    uint32_t n;
    ks_annotation *kv; /* sorted by key */
} ks_annotations;

/* The value, NULL when key is absent. */
const char *ks_annotations_get(const ks_annotations *a, ks_id key);
bool ks_annotations_equal(const ks_annotations *a, const ks_annotations *b);
void ks_annotations_sort(ks_annotations *a);

#endif
