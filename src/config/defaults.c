/* v1.34 defaults: SetDefaults_KubeSchedulerConfiguration, getDefaultPlugins
 * and mergePlugins (pkg/scheduler/apis/config/v1). */
#include "config/feature_gates.h"
#include "config/internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The default multiPoint set, in upstream's order. DynamicResources is
 * there while the DynamicResourceAllocation gate is on (GA, on by default
 * in v1.34; upstream's applyFeatureGates inserts it right before
 * DefaultPreemption so that a claim is deallocated before any pod is
 * evicted). */
static const ks_plugin_ref default_multi_point[] = {
    {"SchedulingGates", 0, 0},
    {"PrioritySort", 0, 0},
    {"NodeUnschedulable", 0, 0},
    {"NodeName", 0, 0},
    {"TaintToleration", 3, 0},
    {"NodeAffinity", 2, 0},
    {"NodePorts", 0, 0},
    {"NodeResourcesFit", 1, 0},
    {"VolumeRestrictions", 0, 0},
    {"NodeVolumeLimits", 0, 0},
    {"VolumeBinding", 0, 0},
    {"VolumeZone", 0, 0},
    {"PodTopologySpread", 2, 0},
    {"InterPodAffinity", 2, 0},
    {"DynamicResources", 0, 0},
    {"DefaultPreemption", 0, 0},
    {"NodeResourcesBalancedAllocation", 1, 0},
    {"ImageLocality", 1, 0},
    {"DefaultBinder", 0, 0},
};

void cfg_default_plugins(ks_arena *a, ks_plugins_config *out) {
    memset(out, 0, sizeof *out);
    size_t n = sizeof default_multi_point / sizeof default_multi_point[0];
    bool dra = ks_feature_enabled(KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION);
    out->multi_point.enabled = ks_arena_calloc(a, n, sizeof(ks_plugin_ref));
    for (size_t i = 0; i < n; i++) {
        if (!dra && strcmp(default_multi_point[i].name, "DynamicResources") == 0) continue;
        out->multi_point.enabled[out->multi_point.nenabled++] = default_multi_point[i];
    }
}

static bool refs_have(const ks_plugin_ref *r, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(r[i].name, name) == 0) return true;
    }
    return false;
}

/* mergePluginSet: defaults keep their position unless disabled; a default
 * the file also enables is replaced in place by the file's entry (its
 * weight wins); the file's other entries follow in file order (duplicates
 * included: the framework rejects them later). Disabled entries are kept
 * (without weight) so that multiPoint expansion can honour them. */
static ks_plugin_set merge_set(ks_arena *a, const ks_plugin_set *def, const ks_plugin_set *cus) {
    ks_plugin_set out = {0};
    uint32_t nd = cus->ndisabled + def->ndisabled;
    if (nd) {
        out.disabled = ks_arena_calloc(a, nd, sizeof *out.disabled);
        for (uint32_t i = 0; i < cus->ndisabled; i++) {
            out.disabled[out.ndisabled] = cus->disabled[i];
            out.disabled[out.ndisabled++].weight = 0;
        }
        for (uint32_t i = 0; i < def->ndisabled; i++) {
            out.disabled[out.ndisabled] = def->disabled[i];
            out.disabled[out.ndisabled++].weight = 0;
        }
    }
    uint32_t cap = def->nenabled + cus->nenabled;
    if (cap) out.enabled = ks_arena_calloc(a, cap, sizeof *out.enabled);
    bool *replaced = cus->nenabled ? ks_xcalloc(cus->nenabled, sizeof *replaced) : NULL;
    if (!refs_have(out.disabled, out.ndisabled, "*")) {
        for (uint32_t i = 0; i < def->nenabled; i++) {
            const ks_plugin_ref *d = &def->enabled[i];
            if (refs_have(out.disabled, out.ndisabled, d->name)) continue;
            /* the last custom entry with that name, as a Go map keeps */
            int64_t ci = -1;
            for (uint32_t j = 0; j < cus->nenabled; j++) {
                if (strcmp(cus->enabled[j].name, d->name) == 0) ci = j;
            }
            if (ci >= 0) {
                out.enabled[out.nenabled++] = cus->enabled[ci];
                replaced[ci] = true;
            } else {
                out.enabled[out.nenabled++] = *d;
            }
        }
    }
    for (uint32_t j = 0; j < cus->nenabled; j++) {
        if (!replaced[j]) out.enabled[out.nenabled++] = cus->enabled[j];
    }
    free(replaced);
    if (out.nenabled == 0) out.enabled = NULL;
    return out;
}

static int cmp_str(const void *x, const void *y) {
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void default_profile(ks_arena *a, ks_profile_config *p, bool plugins_given) {
    p->features = ks_feature_gates_current();
    p->features_set = true;
    ks_plugins_config def;
    cfg_default_plugins(a, &def);
    if (plugins_given) {
        ks_plugins_config merged;
        memset(&merged, 0, sizeof merged);
        merged.multi_point = merge_set(a, &def.multi_point, &p->plugins.multi_point);
        for (int i = 0; i < KS_EP_COUNT; i++) merged.point[i] = merge_set(a, &def.point[i], &p->plugins.point[i]);
        p->plugins = merged;
    } else {
        p->plugins = def;
    }

    /* Default args for every in-tree plugin enabled somewhere that has no
     * pluginConfig entry, appended in sorted name order (sets.List). */
    size_t cap = p->plugins.multi_point.nenabled;
    for (int i = 0; i < KS_EP_COUNT; i++) cap += p->plugins.point[i].nenabled;
    const char **names = ks_xcalloc(cap ? cap : 1, sizeof *names);
    size_t nn = 0;
    const ks_plugin_set *sets[KS_EP_COUNT + 1];
    sets[0] = &p->plugins.multi_point;
    for (int i = 0; i < KS_EP_COUNT; i++) sets[i + 1] = &p->plugins.point[i];
    for (int s = 0; s <= KS_EP_COUNT; s++) {
        for (uint32_t i = 0; i < sets[s]->nenabled; i++) {
            const char *name = sets[s]->enabled[i].name;
            bool seen = false;
            for (size_t k = 0; k < nn && !seen; k++) seen = strcmp(names[k], name) == 0;
            if (!seen) names[nn++] = name;
        }
    }
    qsort(names, nn, sizeof *names, cmp_str);
    size_t extra = 0;
    for (size_t k = 0; k < nn; k++) extra += args_type_find(names[k]) != NULL;
    if (extra) {
        ks_plugin_config *pc = ks_arena_calloc(a, p->nplugin_config + extra, sizeof *pc);
        if (p->nplugin_config) memcpy(pc, p->plugin_config, p->nplugin_config * sizeof *pc);
        uint32_t n = p->nplugin_config;
        for (size_t k = 0; k < nn; k++) {
            if (!args_type_find(names[k])) continue;
            bool have = false;
            for (uint32_t j = 0; j < p->nplugin_config && !have; j++) {
                have = strcmp(p->plugin_config[j].name, names[k]) == 0;
            }
            if (have) continue;
            pc[n].name = names[k];
            pc[n].args = args_default(a, names[k]);
            n++;
        }
        p->plugin_config = pc;
        p->nplugin_config = n;
    }
    free(names);
}

#define SECOND 1000000000LL

void cfg_set_defaults(ks_config *cfg, const cfg_presence *pres) {
    ks_arena *a = cfg->arena;
    if (!pres->parallelism) cfg->parallelism = 16;
    if (cfg->nprofiles == 0) {
        /* decode leaves a spare slot for exactly this */
        memset(&cfg->profiles[0], 0, sizeof cfg->profiles[0]);
        cfg->profiles[0].scheduler_name = "";
        cfg->nprofiles = 1;
    }
    /* only a lone profile gets the default name; validation insists on
     * explicit unique names otherwise */
    if (cfg->nprofiles == 1 && !pres->scheduler_name[0]) cfg->profiles[0].scheduler_name = KS_DEFAULT_SCHEDULER_NAME;
    for (uint32_t i = 0; i < cfg->nprofiles; i++) default_profile(a, &cfg->profiles[i], pres->plugins[i]);

    if (!pres->percentage) cfg->percentage_of_nodes_to_score = 0;

    ks_leader_election *l = &cfg->leader_election;
    if (!*l->resource_lock) l->resource_lock = "leases";
    if (!*l->resource_namespace) l->resource_namespace = "kube-system";
    if (!*l->resource_name) l->resource_name = "kube-scheduler";
    if (l->lease_duration_ns == 0) l->lease_duration_ns = 15 * SECOND;
    if (l->renew_deadline_ns == 0) l->renew_deadline_ns = 10 * SECOND;
    if (l->retry_period_ns == 0) l->retry_period_ns = 2 * SECOND;
    if (!pres->leader_elect) l->leader_elect = true;

    ks_client_connection *k = &cfg->client_connection;
    if (!*k->content_type) k->content_type = "application/vnd.kubernetes.protobuf";
    if (k->qps == 0.0f) k->qps = 50.0f;
    if (k->burst == 0) k->burst = 100;

    if (!pres->initial_backoff) cfg->pod_initial_backoff_seconds = 1;
    if (!pres->max_backoff) cfg->pod_max_backoff_seconds = 10;
    if (!pres->enable_profiling) cfg->enable_profiling = true;
    if (cfg->enable_profiling && !pres->enable_contention) cfg->enable_contention_profiling = true;
}
