/* --feature-gates (see feature_gates.h). The flag's grammar and messages
 * are component-base's v0.34.1: the compatibility registry splits
 * "component:pairs" (only "kube" is registered in kube-scheduler), then
 * featuregate.Set parses "Name=bool" pairs and SetFromMap checks them
 * against the known gates. */
#include "config/feature_gates.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* What ksched does with a gate kube-scheduler v1.34.1 knows:
 * - IMPLEMENTED: both values behave as upstream's;
 * - DEFAULT_ONLY: kube-scheduler reads it (it changes what it decides,
 *   writes or serves) and ksched implements only the default: any other
 *   value is refused;
 * - everything else is accepted and changes nothing, as in kube-scheduler,
 *   which never reads it (kubelet, API server, controller gates), or reads
 *   it for something that is not scheduling (client-go's list/watch
 *   transport, logging options ksched does not offer). */
static const struct {
    const char *name;
    int feature; /* ks_feature, -1: DEFAULT_ONLY */
} handled[] = {
    {"DynamicResourceAllocation", KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION},
    {"DRAAdminAccess", KS_FEAT_DRA_ADMIN_ACCESS},
    {"DRAPrioritizedList", KS_FEAT_DRA_PRIORITIZED_LIST},
    {"DRAResourceClaimDeviceStatus", KS_FEAT_DRA_DEVICE_STATUS},
    {"DRASchedulerFilterTimeout", KS_FEAT_DRA_FILTER_TIMEOUT},
    {"DRADeviceTaints", KS_FEAT_DRA_DEVICE_TAINTS},
    {"DRAPartitionableDevices", KS_FEAT_DRA_PARTITIONABLE_DEVICES},
    {"DRAConsumableCapacity", KS_FEAT_DRA_CONSUMABLE_CAPACITY},
    {"DRAExtendedResource", -1},
    {"DRADeviceBindingConditions", -1},
    {"StorageCapacityScoring", -1},
    {"SchedulerPopFromBackoffQ", -1},
    {"SchedulerAsyncPreemption", -1},
    {"SchedulerAsyncAPICalls", -1},
    {"NominatedNodeNameForExpectation", -1},
    {"PodLevelResources", -1},
    {"InPlacePodVerticalScaling", -1},
    {"MatchLabelKeysInPodTopologySpread", -1},
    {"VolumeAttributesClass", -1},
    {"CoordinatedLeaderElection", -1},
    {"ComponentFlagz", -1},
    {"ComponentStatusz", -1},
};

static const char *const feature_names[KS_FEAT_COUNT] = {
    [KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION] = "DynamicResourceAllocation",
    [KS_FEAT_DRA_ADMIN_ACCESS] = "DRAAdminAccess",
    [KS_FEAT_DRA_PRIORITIZED_LIST] = "DRAPrioritizedList",
    [KS_FEAT_DRA_DEVICE_STATUS] = "DRAResourceClaimDeviceStatus",
    [KS_FEAT_DRA_FILTER_TIMEOUT] = "DRASchedulerFilterTimeout",
    [KS_FEAT_DRA_DEVICE_TAINTS] = "DRADeviceTaints",
    [KS_FEAT_DRA_PARTITIONABLE_DEVICES] = "DRAPartitionableDevices",
    [KS_FEAT_DRA_CONSUMABLE_CAPACITY] = "DRAConsumableCapacity",
    [KS_FEAT_DRA_EXTENDED_RESOURCE] = "DRAExtendedResource",
    [KS_FEAT_DRA_BINDING_CONDITIONS] = "DRADeviceBindingConditions",
};

/* The state: per table entry, -1 not set (default), 0/1 set (explicitly
 * or through AllAlpha/AllBeta, as upstream's enabled map). */
static signed char *g_set;
static bool g_cache[KS_FEAT_COUNT];
static bool g_cache_ok;

static const ks_fg_spec *spec_of(const char *name, size_t *idx) {
    size_t lo = 0, hi = ks_fg_table_len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(ks_fg_table[mid].name, name);
        if (c == 0) {
            if (idx) *idx = mid;
            return &ks_fg_table[mid];
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static bool value_at(const signed char *set, size_t i) { return set && set[i] >= 0 ? set[i] : ks_fg_table[i].def; }

static void refresh_cache(void) {
    for (int f = 0; f < KS_FEAT_COUNT; f++) {
        size_t i;
        const ks_fg_spec *s = spec_of(feature_names[f], &i);
        g_cache[f] = s ? value_at(g_set, i) : false;
    }
    g_cache_ok = true;
}

bool ks_feature_enabled(ks_feature f) {
    if (f < 0 || f >= KS_FEAT_COUNT) return false;
    if (!g_cache_ok) refresh_cache();
    return g_cache[f];
}

ks_feature_set ks_feature_gates_current(void) {
    ks_feature_set s = 0;
    for (int f = 0; f < KS_FEAT_COUNT; f++)
        if (ks_feature_enabled((ks_feature)f)) s |= (ks_feature_set)1 << f;
    return s;
}

const char *ks_feature_name(ks_feature f) { return f >= 0 && f < KS_FEAT_COUNT ? feature_names[f] : "?"; }

void ks_feature_gates_reset(void) {
    free(g_set);
    g_set = NULL;
    refresh_cache();
}

/* ---- parsing ---------------------------------------------------------------------------- */

static char *trim(char *s) {
    while (*s && isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* strconv.ParseBool */
static bool parse_bool(const char *v, bool *out) {
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (!strcmp(v, t[i])) return (*out = true), true;
        if (!strcmp(v, f[i])) return (*out = false), true;
    }
    return false;
}


typedef struct pair {
    const char *name;
    bool value;
} pair;

static const char *stage_name(ks_fg_stage s) {
    switch (s) {
    case KS_FG_ALPHA: return "ALPHA";
    case KS_FG_BETA: return "BETA";
    case KS_FG_DEPRECATED: return "DEPRECATED";
    default: return "";
    }
}

/* utilerrors.NewAggregate(errs).Error(): one message as is, several
 * deduplicated in brackets. */
static char *aggregate(char **msgs, size_t n) {
    if (n == 1) return ks_xstrdup(msgs[0]);
    ks_strbuf b;
    ks_sb_init(&b);
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) seen = strcmp(msgs[k], msgs[i]) == 0;
        if (seen) continue;
        if (shown++) ks_sb_puts(&b, ", ");
        ks_sb_puts(&b, msgs[i]);
    }
    if (shown == 1) return ks_sb_take(&b);
    char *r = ks_xasprintf("[%s]", ks_sb_str(&b));
    ks_sb_free(&b);
    return r;
}

static int handled_feature(const char *name, bool *known) {
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        if (!strcmp(handled[i].name, name)) {
            *known = true;
            return handled[i].feature;
        }
    *known = false;
    return -1;
}

bool ks_feature_gates_apply(const char *const *values, size_t nvalues, char **err) {
    *err = NULL;
    ks_strbuf all;
    ks_sb_init(&all);
    for (size_t i = 0; i < nvalues; i++) {
        if (i) ks_sb_putc(&all, ',');
        ks_sb_puts(&all, values[i]);
    }
    char *buf = ks_sb_take(&all);
    if (!buf) buf = ks_xstrdup("");
    /* split "component:pairs" (ColonSeparatedMultimapStringString with
     * an empty default key); only "kube" is registered */
    size_t cap = strlen(buf) + 1;
    char **kv = ks_xcalloc(cap, sizeof(char *));
    size_t nkv = 0;
    bool empty_key = false, kube_key = false;
    const char *bad_comp = NULL;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(p, ':');
        char *v;
        if (!colon) {
            v = trim(p);
            empty_key = true;
        } else {
            *colon = '\0';
            char *comp = trim(p);
            v = trim(colon + 1);
            if (!strcmp(comp, "kube")) kube_key = true;
            else if (!strcmp(comp, "")) empty_key = true;
            else if (!bad_comp) bad_comp = comp;
        }
        kv[nkv++] = v;
    }
    pair *pairs = NULL;
    size_t np = 0;
    signed char *set = NULL;
    char **msgs = NULL;
    size_t nmsgs = 0;
    if (empty_key && kube_key) {
        *err = ks_xstrdup("set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use");
        goto out;
    }
    if (bad_comp) {
        *err = ks_xasprintf("component not registered: %s", bad_comp);
        goto out;
    }
    /* featuregate.Set: "Name=bool" pairs, the last of a name wins, kept
     * in the order names first appear */
    pairs = ks_xcalloc(nkv ? nkv : 1, sizeof(*pairs));
    for (size_t i = 0; i < nkv; i++) {
        char *s = kv[i];
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            *err = ks_xasprintf("missing bool value for %s", trim(s));
            goto out;
        }
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        bool b;
        if (!parse_bool(v, &b)) {
            ks_strbuf e;
            ks_sb_init(&e);
            ks_sb_printf(&e, "invalid value of %s=%s, err: strconv.ParseBool: parsing ", k, v);
            ks_sb_quote_str(&e, v);
            ks_sb_puts(&e, ": invalid syntax");
            *err = ks_sb_take(&e);
            goto out;
        }
        size_t j = 0;
        while (j < np && strcmp(pairs[j].name, k) != 0) j++;
        if (j == np) pairs[np++].name = k;
        pairs[j].value = b;
    }
    /* SetFromMap: unknown gates stop at once, locked ones are collected */
    set = ks_xmalloc(ks_fg_table_len);
    memset(set, -1, ks_fg_table_len);
    msgs = ks_xcalloc(np ? np : 1, sizeof(char *));
    for (size_t i = 0; i < np; i++) {
        size_t idx;
        const ks_fg_spec *s = spec_of(pairs[i].name, &idx);
        if (!s) {
            msgs[nmsgs++] = ks_xasprintf("unrecognized feature gate: %s", pairs[i].name);
            break;
        }
        if (s->locked && s->def != pairs[i].value) {
            msgs[nmsgs++] = ks_xasprintf("cannot set feature gate %s to %s, feature is locked to %s", pairs[i].name,
                                         pairs[i].value ? "true" : "false", s->def ? "true" : "false");
            continue;
        }
        bool all_alpha = !strcmp(s->name, "AllAlpha"), all_beta = !strcmp(s->name, "AllBeta");
        if (all_alpha || all_beta) {
            /* every gate of that stage not set yet (an explicit pair
             * later overrides it, as upstream's map order allows) */
            ks_fg_stage st = all_alpha ? KS_FG_ALPHA : KS_FG_BETA;
            for (size_t k = 0; k < ks_fg_table_len; k++) {
                const char *n = ks_fg_table[k].name;
                if (!strcmp(n, "AllAlpha") || !strcmp(n, "AllBeta")) continue;
                if (ks_fg_table[k].stage == st && set[k] < 0) set[k] = pairs[i].value;
            }
        }
        set[idx] = pairs[i].value;
    }
    /* explicit pairs win over AllAlpha/AllBeta whatever their order */
    for (size_t i = 0; i < np && !nmsgs; i++) {
        size_t idx;
        if (spec_of(pairs[i].name, &idx)) set[idx] = pairs[i].value;
    }
    if (nmsgs) {
        *err = aggregate(msgs, nmsgs);
        goto out;
    }
    /* ksched's own refusal: a gate kube-scheduler reads whose value is not
     * the default and that ksched does not implement */
    for (size_t k = 0; k < ks_fg_table_len; k++) {
        if (set[k] < 0 || (bool)set[k] == ks_fg_table[k].def) continue;
        bool known;
        int f = handled_feature(ks_fg_table[k].name, &known);
        if (!known || f >= 0) continue;
        const char *via = "";
        bool explicit_pair = false;
        for (size_t i = 0; i < np; i++) explicit_pair |= !strcmp(pairs[i].name, ks_fg_table[k].name);
        if (!explicit_pair) via = ks_fg_table[k].stage == KS_FG_ALPHA ? " (through AllAlpha)" : " (through AllBeta)";
        *err = ks_xasprintf("feature gate %s=%s%s is not supported by ksched: it implements only the default, %s=%s "
                            "(docs/configuration.md)",
                            ks_fg_table[k].name, set[k] ? "true" : "false", via, ks_fg_table[k].name,
                            ks_fg_table[k].def ? "true" : "false");
        goto out;
    }
    /* upstream's warnings */
    for (size_t i = 0; i < np; i++) {
        const ks_fg_spec *s = spec_of(pairs[i].name, NULL);
        if (s->stage == KS_FG_DEPRECATED)
            ks_warnf("Setting deprecated feature gate %s=%s. It will be removed in a future release.", s->name,
                     pairs[i].value ? "true" : "false");
        else if (s->stage == KS_FG_GA)
            ks_warnf("Setting GA feature gate %s=%s. It will be removed in a future release.", s->name,
                     pairs[i].value ? "true" : "false");
    }
    free(g_set);
    g_set = set;
    set = NULL;
    refresh_cache();
out:
    for (size_t i = 0; i < nmsgs; i++) free(msgs[i]);
    free(msgs);
    free(set);
    free(pairs);
    free(kv);
    free(buf);
    return *err == NULL;
}

char *ks_feature_gates_string(void) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (size_t k = 0; g_set && k < ks_fg_table_len; k++) {
        if (g_set[k] < 0) continue;
        if (b.len) ks_sb_putc(&b, ',');
        ks_sb_printf(&b, "%s=%s", ks_fg_table[k].name, g_set[k] ? "true" : "false");
    }
    char *r = ks_sb_take(&b);
    return r ? r : ks_xstrdup("");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *ks_feature_gates_known(void) {
    /* upstream sorts the lines, not the names */
    char **lines = ks_xcalloc(ks_fg_table_len ? ks_fg_table_len : 1, sizeof(char *));
    size_t n = 0;
    for (size_t k = 0; k < ks_fg_table_len; k++) {
        const ks_fg_spec *s = &ks_fg_table[k];
        if (s->stage != KS_FG_ALPHA && s->stage != KS_FG_BETA) continue;
        lines[n++] = ks_xasprintf("%s=true|false (%s - default=%s)", s->name, stage_name(s->stage),
                                  s->def ? "true" : "false");
    }
    qsort(lines, n, sizeof(char *), cmp_str);
    ks_strbuf b;
    ks_sb_init(&b);
    for (size_t i = 0; i < n; i++) {
        ks_sb_printf(&b, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    char *r = ks_sb_take(&b);
    return r ? r : ks_xstrdup("");
}
