/* Plugin args: strict decoding, v1.34 defaults (SetDefaults_*Args) and the
 * canonical v1 tree handed to plugins and printed back. Args of plugins we
 * do not know are passed through untouched, as upstream keeps them as
 * runtime.Unknown for out-of-tree plugins. */
#include "config/feature_gates.h"
#include "config/internal.h"

#include <string.h>

static void put_int(ks_arena *a, ks_tree *m, const char *key, int64_t v) { kt_map_set(a, m, key, kt_int(a, v)); }

static ks_tree *default_resources(ks_arena *a) {
    ks_tree *list = kt_new_seq(a);
    static const char *const names[] = {"cpu", "memory"};
    for (int i = 0; i < 2; i++) {
        ks_tree *r = kt_new_map(a);
        kt_map_add(a, r, "name", kt_str(a, names[i]));
        kt_map_add(a, r, "weight", kt_int(a, 1));
        kt_seq_add(a, list, r);
    }
    return list;
}

/* A resource weight of 0 (dropped by omitempty) means 1. */
static void default_resource_weights(ks_arena *a, ks_tree *list) {
    for (uint32_t i = 0; list && i < list->n; i++) {
        if (!kt_field(list->items[i], "weight")) put_int(a, list->items[i], "weight", 1);
    }
}

static void def_default_preemption(ks_arena *a, ks_tree *args) {
    if (!kt_field(args, "minCandidateNodesPercentage")) put_int(a, args, "minCandidateNodesPercentage", 10);
    if (!kt_field(args, "minCandidateNodesAbsolute")) put_int(a, args, "minCandidateNodesAbsolute", 100);
}

static void def_inter_pod_affinity(ks_arena *a, ks_tree *args) {
    if (!kt_field(args, "hardPodAffinityWeight")) put_int(a, args, "hardPodAffinityWeight", 1);
}

static void def_volume_binding(ks_arena *a, ks_tree *args) {
    /* shape is only defaulted with the StorageCapacityScoring gate (alpha,
     * off in v1.34) */
    if (!kt_field(args, "bindTimeoutSeconds")) put_int(a, args, "bindTimeoutSeconds", 600);
}

static void def_balanced_allocation(ks_arena *a, ks_tree *args) {
    ks_tree *res = (ks_tree *)kt_field(args, "resources");
    if (!res) {
        kt_map_set(a, args, "resources", default_resources(a));
        return;
    }
    default_resource_weights(a, res);
}

static void def_pod_topology_spread(ks_arena *a, ks_tree *args) {
    if (!kt_field(args, "defaultingType")) kt_map_set(a, args, "defaultingType", kt_str(a, "System"));
}

static void def_node_resources_fit(ks_arena *a, ks_tree *args) {
    ks_tree *ss = (ks_tree *)kt_field(args, "scoringStrategy");
    if (!ss) {
        ss = kt_new_map(a);
        kt_map_add(a, ss, "type", kt_str(a, "LeastAllocated"));
        kt_map_add(a, ss, "resources", default_resources(a));
        kt_map_set(a, args, "scoringStrategy", ss);
        return;
    }
    ks_tree *res = (ks_tree *)kt_field(ss, "resources");
    if (!res) {
        kt_map_set(a, ss, "resources", default_resources(a));
    } else {
        default_resource_weights(a, res);
    }
}

static void def_dynamic_resources(ks_arena *a, ks_tree *args) {
    /* only with DRASchedulerFilterTimeout (beta, on in v1.34) */
    if (!kt_field(args, "filterTimeout") && ks_feature_enabled(KS_FEAT_DRA_FILTER_TIMEOUT))
        kt_map_set(a, args, "filterTimeout", kt_str(a, "10s"));
}

static void def_none(ks_arena *a, ks_tree *args) {
    (void)a;
    (void)args;
}

static const args_type args_types[] = {
    {"DefaultPreemption", "DefaultPreemptionArgs", &sk_default_preemption_args, def_default_preemption,
     va_default_preemption},
    {"InterPodAffinity", "InterPodAffinityArgs", &sk_inter_pod_affinity_args, def_inter_pod_affinity,
     va_inter_pod_affinity},
    {"NodeResourcesBalancedAllocation", "NodeResourcesBalancedAllocationArgs", &sk_balanced_allocation_args,
     def_balanced_allocation, va_balanced_allocation},
    {"NodeResourcesFit", "NodeResourcesFitArgs", &sk_node_resources_fit_args, def_node_resources_fit,
     va_node_resources_fit},
    {"PodTopologySpread", "PodTopologySpreadArgs", &sk_pod_topology_spread_args, def_pod_topology_spread,
     va_pod_topology_spread},
    {"VolumeBinding", "VolumeBindingArgs", &sk_volume_binding_args, def_volume_binding, va_volume_binding},
    {"NodeAffinity", "NodeAffinityArgs", &sk_node_affinity_args, def_none, va_node_affinity},
    {"DynamicResources", "DynamicResourcesArgs", &sk_dynamic_resources_args, def_dynamic_resources,
     va_dynamic_resources},
};

const args_type *args_type_find(const char *plugin) {
    for (size_t i = 0; i < sizeof args_types / sizeof args_types[0]; i++) {
        if (strcmp(args_types[i].plugin, plugin) == 0) return &args_types[i];
    }
    return NULL;
}

static ks_tree *finish(ks_arena *a, const args_type *at, ks_tree *canon) {
    kt_map_set(a, canon, "apiVersion", kt_str(a, KS_CONFIG_API_VERSION));
    kt_map_set(a, canon, "kind", kt_str(a, at->kind));
    at->set_defaults(a, canon);
    return canon;
}

ks_tree *args_default(ks_arena *a, const char *plugin) {
    const args_type *at = args_type_find(plugin);
    if (!at) return NULL;
    return finish(a, at, sk_canon(a, NULL, at->schema));
}

ks_tree *args_decode(cfg_ctx *c, const char *plugin, const ks_tree *src, const char *path) {
    const args_type *at = args_type_find(plugin);
    if (!at) return kt_is_null(src) ? NULL : (ks_tree *)src;
    if (kt_is_null(src)) return finish(c->arena, at, sk_canon(c->arena, NULL, at->schema));
    if (src->type != KT_MAP) {
        cfg_err_line(c, src->line, "%s: decoding args for plugin %s: cannot unmarshal %s into Go value of type %s",
                     path, plugin, src->type == KT_SEQ ? "array" : "a scalar", at->kind);
        return NULL;
    }
    /* apiVersion/kind inside args are optional but must name this type */
    const char *av = kt_as_str(kt_field(src, "apiVersion"));
    const char *kind = kt_as_str(kt_field(src, "kind"));
    if (av && strcmp(av, KS_CONFIG_API_VERSION) != 0) {
        cfg_err_line(c, kt_get(src, "apiVersion")->line,
                     "%s: decoding args for plugin %s: no kind \"%s\" is registered for version \"%s\"", path,
                     plugin, kind ? kind : at->kind, av);
        return NULL;
    }
    if (kind && strcmp(kind, at->kind) != 0) {
        cfg_err_line(c, kt_get(src, "kind")->line,
                     "%s: args for plugin %s were not of type %s.kubescheduler.config.k8s.io, got %s.kubescheduler.config.k8s.io",
                     path, plugin, at->kind, kind);
        return NULL;
    }
    uint32_t before = c->errs->n;
    sk_check(c, src, at->schema, path);
    if (c->errs->n != before) return NULL;
    return finish(c->arena, at, sk_canon(c->arena, src, at->schema));
}
