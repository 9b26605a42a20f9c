#include "api/labels.h"

#include <stdlib.h>
#include <string.h>

bool ks_labels_get(const ks_labels *l, ks_id key, ks_id *value) {
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (l->kv[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    if (lo < l->n && l->kv[lo].key == key) {
        if (value) *value = l->kv[lo].value;
        return true;
    }
    return false;
}

static int cmp_label(const void *a, const void *b) {
    ks_id x = ((const ks_label *)a)->key, y = ((const ks_label *)b)->key;
    return x < y ? -1 : x > y;
}

bool ks_labels_sort(ks_labels *l) {
    if (l->n > 1) qsort(l->kv, l->n, sizeof(*l->kv), cmp_label);
    for (uint32_t i = 1; i < l->n; i++)
        if (l->kv[i].key == l->kv[i - 1].key) return false;
    return true;
}

const char *ks_annotations_get(const ks_annotations *a, ks_id key) {
    uint32_t lo = 0, hi = a->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (a->kv[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < a->n && a->kv[lo].key == key ? a->kv[lo].value : NULL;
}

bool ks_annotations_equal(const ks_annotations *a, const ks_annotations *b) {
    if (a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->kv[i].key != b->kv[i].key || strcmp(a->kv[i].value, b->kv[i].value) != 0) return false;
    return true;
}

static int cmp_annotation(const void *a, const void *b) {
    ks_id x = ((const ks_annotation *)a)->key, y = ((const ks_annotation *)b)->key;
    return x < y ? -1 : x > y;
}

void ks_annotations_sort(ks_annotations *a) {
    if (a->n > 1) qsort(a->kv, a->n, sizeof(*a->kv), cmp_annotation);
}
