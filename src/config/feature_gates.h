/* Feature gates as kube-scheduler v1.34.1 has them (component-base
 * featuregate behind the --feature-gates flag): every gate the binary
 * knows, with its v1.34 default and stage; "Name=true,Other=false",
 * AllAlpha/AllBeta, GA gates that are locked, unknown gates refused with
 * upstream's words.
 *
 * The state is process-wide, like upstream's DefaultFeatureGate: set once
 * from the command line before a configuration is defaulted, which copies
 * it into each profile (ks_feature_set); plugins read their scheduler's
 * copy (ks_handle_feature_enabled). ksched reads the gates it
 * implements (ks_feature); a gate kube-scheduler reads but ksched does
 * not implement is refused when set to anything but its default
 * (docs/configuration.md, "Feature gates"). */
#ifndef KS_FEATURE_GATES_H
#define KS_FEATURE_GATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    KS_FG_ALPHA = 0,
    KS_FG_BETA,
    KS_FG_GA,
    KS_FG_DEPRECATED,
} ks_fg_stage;

/* One known gate, as upstream's FeatureSpec at v1.34. */
typedef struct ks_fg_spec {
    const char *name;
    bool def;
    ks_fg_stage stage;
    bool locked; /* LockToDefault */
} ks_fg_spec;

/* The table (feature_gates_table.c, generated from kube-scheduler's own
 * registry by test/reference: kschedref --feature-gate-table), sorted by
 * name. */
extern const ks_fg_spec ks_fg_table[];
extern const size_t ks_fg_table_len;

/* The gates ksched reads. */
typedef enum {
    KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION = 0,
    KS_FEAT_DRA_ADMIN_ACCESS,
    KS_FEAT_DRA_PRIORITIZED_LIST,
    KS_FEAT_DRA_DEVICE_STATUS,        /* DRAResourceClaimDeviceStatus */
    KS_FEAT_DRA_FILTER_TIMEOUT,       /* DRASchedulerFilterTimeout */
    KS_FEAT_DRA_DEVICE_TAINTS,
    KS_FEAT_DRA_PARTITIONABLE_DEVICES,
    KS_FEAT_DRA_CONSUMABLE_CAPACITY,
    KS_FEAT_DRA_EXTENDED_RESOURCE,
    KS_FEAT_DRA_BINDING_CONDITIONS,   /* DRADeviceBindingConditions */
    KS_FEAT_COUNT
} ks_feature;

/* Whether a gate is on (the v1.34 default until ks_feature_gates_apply). */
bool ks_feature_enabled(ks_feature f);

/* A set of gates (bit f for ks_feature f): what a scheduler was made
 * with. The configuration's defaults take the process gates when a
 * profile is defaulted (ks_profile_config.features) and each framework
 * and its plugins read that copy (ks_handle_feature_enabled), so that
 * two schedulers of one process can run with different gates. */
typedef uint64_t ks_feature_set;
_Static_assert(KS_FEAT_COUNT <= 64, "a ks_feature_set holds every gate ksched reads");
/* The process gates now. */
ks_feature_set ks_feature_gates_current(void);
static inline bool ks_feature_set_has(ks_feature_set s, ks_feature f) {
    return f >= 0 && f < KS_FEAT_COUNT && ((s >> f) & 1);
}
const char *ks_feature_name(ks_feature f);

/* Apply --feature-gates values (every occurrence of the flag, in order:
 * later pairs win, as upstream joins them). Each value is a list of
 * "[kube:]Name=bool" pairs separated by commas. On error nothing changes
 * and *err (malloc'd) holds upstream's message ("unrecognized feature
 * gate: X", "cannot set feature gate X to false, feature is locked to
 * true", ...) or ksched's refusal of a gate it does not implement.
 * Warnings upstream logs (setting a GA or deprecated gate) go to the log. */
bool ks_feature_gates_apply(const char *const *values, size_t n, char **err);
/* Back to the v1.34 defaults (tests). */
void ks_feature_gates_reset(void);
/* "Name=bool,..." of the gates set explicitly or by AllAlpha/AllBeta,
 * sorted (upstream's String()); malloc'd, "" when none. */
char *ks_feature_gates_string(void);
/* The flag's --help text: one "Name=true|false (STAGE - default=D)" line
 * per alpha and beta gate and AllAlpha/AllBeta, sorted; malloc'd. */
char *ks_feature_gates_known(void);

#define KS_FEATURE_GATES_USAGE                                                              \
    "  --feature-gates=K=V,... kube-scheduler's feature gates (v1.34.1's; see\n"            \
    "                       docs/configuration.md for those ksched implements)\n"

#endif
