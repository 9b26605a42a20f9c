/* Taints and tolerations (v1.Taint, v1.Toleration). */
#ifndef KS_TAINT_H
#define KS_TAINT_H

#include "util/intern.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    KS_EFFECT_ALL = 0, /* toleration with empty effect: tolerates every effect */
    KS_EFFECT_NO_SCHEDULE,
    KS_EFFECT_PREFER_NO_SCHEDULE,
    KS_EFFECT_NO_EXECUTE,
} ks_effect;

typedef struct ks_taint {
    ks_id key, value;
    ks_effect effect;
} ks_taint;

typedef enum { KS_TOL_EQUAL = 0, KS_TOL_EXISTS } ks_tol_op;

typedef struct ks_toleration {
    ks_id key, value;  /* key 0 with Exists: tolerates everything */
    ks_tol_op op;
    ks_effect effect;
    bool has_seconds;
    int64_t seconds;
} ks_toleration;

const char *ks_effect_name(ks_effect e); /* "NoSchedule", ... ; "" for ALL */
bool ks_toleration_tolerates(const ks_toleration *t, const ks_taint *taint);
bool ks_tolerations_tolerate(const ks_toleration *tols, uint32_t n, const ks_taint *taint);

#endif
