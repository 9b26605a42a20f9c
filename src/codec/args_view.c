/* The plugin-facing view of a pluginConfig args tree (ksched.h). */
#include "codec/tree.h"

#include <ksched/ksched.h>

#include <math.h>

const ks_args *ks_args_get(const ks_args *a, const char *key) { return kt_get(a, key); }

bool ks_args_is_map(const ks_args *a) { return a && a->type == KT_MAP; }

size_t ks_args_len(const ks_args *a) {
    return a && (a->type == KT_MAP || a->type == KT_SEQ) ? a->n : 0;
}

const ks_args *ks_args_item(const ks_args *a, size_t i) {
    if (!a || (a->type != KT_MAP && a->type != KT_SEQ) || i >= a->n) return NULL;
    return a->items[i];
}

const char *ks_args_key(const ks_args *a, size_t i) {
    if (!a || a->type != KT_MAP || i >= a->n) return NULL;
    return a->keys[i];
}

const char *ks_args_string(const ks_args *a) {
    if (!a || a->type == KT_MAP || a->type == KT_SEQ) return NULL;
    return a->text;
}

bool ks_args_int(const ks_args *a, int64_t *out) {
    if (!a) return false;
    if (a->type == KT_INT) {
        *out = a->ival;
        return true;
    }
    /* 3.0 is an integer to a JSON decoder; 3.5 is not */
    if (a->type == KT_FLOAT && a->fval == floor(a->fval) && fabs(a->fval) < 9.2e18) {
        *out = (int64_t)a->fval;
        return true;
    }
    return false;
}

bool ks_args_bool(const ks_args *a, bool *out) {
    if (!a || a->type != KT_BOOL) return false;
    *out = a->bval;
    return true;
}
