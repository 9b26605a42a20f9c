#include "api/taint.h"

const char *ks_effect_name(ks_effect e) {
    switch (e) {
    case KS_EFFECT_NO_SCHEDULE: return "NoSchedule";
    case KS_EFFECT_PREFER_NO_SCHEDULE: return "PreferNoSchedule";
    case KS_EFFECT_NO_EXECUTE: return "NoExecute";
    case KS_EFFECT_ALL: break;
    }
    return "";
}

/* v1.Toleration.ToleratesTaint: an empty effect matches every effect, an
 * empty key (only valid with Exists) every key; Exists ignores the value. */
bool ks_toleration_tolerates(const ks_toleration *t, const ks_taint *taint) {
    if (t->effect != KS_EFFECT_ALL && t->effect != taint->effect) return false;
    if (t->key != KS_ID_NONE && t->key != taint->key) return false;
    if (t->op == KS_TOL_EXISTS) return true;
    return t->value == taint->value;
}

bool ks_tolerations_tolerate(const ks_toleration *tols, uint32_t n, const ks_taint *taint) {
    for (uint32_t i = 0; i < n; i++)
        if (ks_toleration_tolerates(&tols[i], taint)) return true;
    return false;
}
