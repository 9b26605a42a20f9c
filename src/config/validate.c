/* ValidateKubeSchedulerConfiguration (pkg/scheduler/apis/config/validation)
 * on the defaulted configuration, in upstream's order and wording. */
#include "config/internal.h"

#include <string.h>

#define P(...) ks_arena_printf(c->arena, __VA_ARGS__)

static const char *dur_value(cfg_ctx *c, int64_t ns) {
    char buf[40];
    go_format_duration(ns, buf);
    return fe_str(c, buf);
}

static void validate_leader_election(cfg_ctx *c, const ks_leader_election *l) {
    if (!l->leader_elect) return;
    if (l->lease_duration_ns <= 0) {
        fe_invalid(c, "leaderElection.leaseDuration", dur_value(c, l->lease_duration_ns), "must be greater than zero");
    }
    if (l->renew_deadline_ns <= 0) {
        fe_invalid(c, "leaderElection.renewDeadline", dur_value(c, l->renew_deadline_ns), "must be greater than zero");
    }
    if (l->retry_period_ns <= 0) {
        fe_invalid(c, "leaderElection.retryPeriod", dur_value(c, l->retry_period_ns), "must be greater than zero");
    }
    if (l->lease_duration_ns <= l->renew_deadline_ns) {
        /* upstream shows the renew deadline here */
        fe_invalid(c, "leaderElection.leaseDuration", dur_value(c, l->renew_deadline_ns),
                   "must be greater than `RenewDeadline`");
    }
    if (!*l->resource_lock) fe_required(c, "leaderElection.resourceLock", "");
    if (!*l->resource_namespace) fe_required(c, "leaderElection.resourceNamespace", "");
    if (!*l->resource_name) fe_required(c, "leaderElection.resourceName", "");
}

static void validate_percentage(cfg_ctx *c, const char *path, bool set, int32_t v) {
    if (set && (v < 0 || v > 100)) fe_invalid(c, path, fe_int(c, v), "not in valid range [0-100]");
}

/* Plugins removed from v1 (the in-tree volume limit plugins). */
static bool removed_plugin(const char *name) {
    static const char *const removed[] = {"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(name, removed[i]) == 0) return true;
    }
    return false;
}

#define REMOVED_DETAIL "was invalid in version \"v1\" (KubeSchedulerConfiguration is version \"" KS_CONFIG_API_VERSION "\")"

bool plugin_needed(const ks_profile_config *p, const char *name) {
    for (uint32_t i = 0; i < p->plugins.multi_point.nenabled; i++) {
        if (strcmp(p->plugins.multi_point.enabled[i].name, name) == 0) return true;
    }
    for (int e = 0; e < KS_EP_COUNT; e++) {
        for (uint32_t i = 0; i < p->plugins.point[e].nenabled; i++) {
            if (strcmp(p->plugins.point[e].enabled[i].name, name) == 0) return true;
        }
    }
    return false;
}

static void validate_plugin_config(cfg_ctx *c, const ks_profile_config *p, uint32_t pi) {
    for (int e = 0; e < KS_EP_COUNT; e++) {
        const ks_plugin_set *s = &p->plugins.point[e];
        for (uint32_t i = 0; i < s->nenabled; i++) {
            if (removed_plugin(s->enabled[i].name)) {
                fe_invalid(c, P("profiles[%u].plugins.%s.enabled[%u]", pi, ks_ext_point_field((ks_ext_point)e), i),
                           fe_str(c, s->enabled[i].name), REMOVED_DETAIL);
            }
        }
    }
    for (uint32_t i = 0; i < p->nplugin_config; i++) {
        const ks_plugin_config *pc = &p->plugin_config[i];
        const char *path = P("profiles[%u].pluginConfig[%u]", pi, i);
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(p->plugin_config[j].name, pc->name) == 0) {
                fe_duplicate(c, path, fe_str(c, pc->name));
                break;
            }
        }
        if (removed_plugin(pc->name)) {
            fe_invalid(c, path, fe_str(c, pc->name), REMOVED_DETAIL);
            continue;
        }
        const args_type *at = args_type_find(pc->name);
        if (!at || !pc->args) continue;
        /* Upstream's config validation skips NodeResourcesFit args (its
         * table is keyed "NodeResourcesFitArgs"); the plugin checks them
         * when it is created, i.e. only when it is enabled somewhere. */
        if (strcmp(pc->name, "NodeResourcesFit") == 0 && !plugin_needed(p, pc->name)) continue;
        at->validate(c, P("%s.args", path), pc->args);
    }
}

static bool sets_equal(const ks_plugin_set *a, const ks_plugin_set *b) {
    if (a->nenabled != b->nenabled || a->ndisabled != b->ndisabled) return false;
    for (uint32_t i = 0; i < a->nenabled; i++) {
        if (strcmp(a->enabled[i].name, b->enabled[i].name) || a->enabled[i].weight != b->enabled[i].weight) return false;
    }
    for (uint32_t i = 0; i < a->ndisabled; i++) {
        if (strcmp(a->disabled[i].name, b->disabled[i].name) || a->disabled[i].weight != b->disabled[i].weight) {
            return false;
        }
    }
    return true;
}

/* The internal PluginSet as Go prints it in an error (no json tags). */
static const char *set_json(cfg_ctx *c, const ks_plugin_set *s) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (int part = 0; part < 2; part++) {
        const ks_plugin_ref *r = part ? s->disabled : s->enabled;
        uint32_t n = part ? s->ndisabled : s->nenabled;
        ks_sb_puts(&b, part ? ",\"Disabled\":" : "{\"Enabled\":");
        if (!n) {
            ks_sb_puts(&b, "null");
            continue;
        }
        ks_sb_putc(&b, '[');
        for (uint32_t i = 0; i < n; i++) {
            if (i) ks_sb_putc(&b, ',');
            ks_sb_puts(&b, "{\"Name\":");
            ks_sb_quote_str(&b, r[i].name);
            ks_sb_printf(&b, ",\"Weight\":%d}", r[i].weight);
        }
        ks_sb_putc(&b, ']');
    }
    ks_sb_putc(&b, '}');
    const char *out = ks_arena_strdup(c->arena, ks_sb_str(&b));
    ks_sb_free(&b);
    return out;
}

static bool trees_equal(const ks_tree *a, const ks_tree *b) {
    if (kt_is_null(a) || kt_is_null(b)) return kt_is_null(a) && kt_is_null(b);
    int64_t ia, ib;
    if (kt_as_int(a, &ia) && kt_as_int(b, &ib)) return ia == ib;
    if ((a->type == KT_INT || a->type == KT_FLOAT) && (b->type == KT_INT || b->type == KT_FLOAT)) {
        double x = a->type == KT_INT ? (double)a->ival : a->fval;
        double y = b->type == KT_INT ? (double)b->ival : b->fval;
        return x == y;
    }
    if (a->type != b->type) return false;
    switch (a->type) {
    case KT_BOOL: return a->bval == b->bval;
    case KT_STRING: return strcmp(a->text ? a->text : "", b->text ? b->text : "") == 0;
    case KT_SEQ:
        if (a->n != b->n) return false;
        for (uint32_t i = 0; i < a->n; i++) {
            if (!trees_equal(a->items[i], b->items[i])) return false;
        }
        return true;
    case KT_MAP:
        if (a->n != b->n) return false;
        for (uint32_t i = 0; i < a->n; i++) {
            const ks_tree *o = kt_get(b, a->keys[i]);
            if (!o || !trees_equal(a->items[i], o)) return false;
        }
        return true;
    default: return true;
    }
}

/* Every profile must sort the queue the same way: one shared queue. */
static void validate_common_queue_sort(cfg_ctx *c, const ks_config *cfg) {
    const ks_profile_config *p0 = &cfg->profiles[0];
    const ks_plugin_set *canon = &p0->plugins.queue_sort;
    const char *qs_name = canon->nenabled ? canon->enabled[0].name : "";
    if (canon->nenabled > 1) {
        fe_invalid(c, "profiles[0].plugins.queueSort.Enabled", fe_int(c, canon->nenabled),
                   "only one queue sort plugin can be enabled");
    }
    const ks_tree *qs_args = NULL;
    for (uint32_t j = 0; j < p0->nplugin_config; j++) {
        if (*qs_name && strcmp(p0->plugin_config[j].name, qs_name) == 0) qs_args = p0->plugin_config[j].args;
    }
    for (uint32_t i = 1; i < cfg->nprofiles; i++) {
        const ks_profile_config *p = &cfg->profiles[i];
        if (!sets_equal(canon, &p->plugins.queue_sort)) {
            fe_invalid(c, P("profiles[%u].plugins.queueSort", i), set_json(c, &p->plugins.queue_sort),
                       "must be the same for all profiles");
        }
        for (uint32_t j = 0; j < p->nplugin_config; j++) {
            const ks_plugin_config *pc = &p->plugin_config[j];
            if (strcmp(pc->name, qs_name) == 0 && !trees_equal(qs_args, pc->args)) {
                fe_invalid(c, P("profiles[%u].pluginConfig.args", i), pc->args ? fe_json(c, pc->args) : "null",
                           "queueSort must be the same for all profiles");
            }
        }
    }
}

static bool is_extended_resource_name(cfg_ctx *c, const char *name) {
    /* native: unprefixed or in *kubernetes.io/ */
    if (!strchr(name, '/') || strstr(name, "kubernetes.io/")) return false;
    if (strncmp(name, "requests.", 9) == 0) return false;
    const char *msgs[4];
    return is_qualified_name(P("requests.%s", name), msgs, c->arena) == 0;
}

static void validate_extenders(cfg_ctx *c, const ks_config *cfg) {
    uint32_t binders = 0;
    for (uint32_t i = 0; i < cfg->nextenders; i++) {
        const ks_extender_config *e = &cfg->extenders[i];
        if (*e->prioritize_verb && e->weight <= 0) {
            fe_invalid(c, P("extenders[%u].weight", i), fe_int(c, e->weight), "must have a positive weight applied to it");
        }
        if (*e->bind_verb) binders++;
        for (uint32_t j = 0; j < e->nmanaged_resources; j++) {
            const char *name = e->managed_resources[j].name;
            const char *path = P("extenders[%u].managedResources[%u].name", i, j);
            const char *msgs[4];
            size_t n = is_qualified_name(name, msgs, c->arena);
            for (size_t k = 0; k < n; k++) fe_invalid(c, path, fe_str(c, name), msgs[k]);
            if (n == 0 && !is_extended_resource_name(c, name)) {
                fe_invalid(c, path, fe_str(c, name), "is an invalid extended resource name");
            }
            /* duplicates across all extenders */
            bool dup = false;
            for (uint32_t pi = 0; pi <= i && !dup; pi++) {
                const ks_extender_config *pe = &cfg->extenders[pi];
                uint32_t lim = pi == i ? j : pe->nmanaged_resources;
                for (uint32_t pj = 0; pj < lim && !dup; pj++) dup = strcmp(pe->managed_resources[pj].name, name) == 0;
            }
            if (dup) fe_invalid(c, path, fe_str(c, name), "duplicate extender managed resource name");
        }
    }
    if (binders > 1) {
        fe_invalid(c, "extenders", fe_str(c, P("found %u extenders implementing bind", binders)),
                   "only one extender can implement bind");
    }
}

void cfg_validate(cfg_ctx *c, const ks_config *cfg) {
    if (cfg->client_connection.burst < 0) {
        fe_invalid(c, "clientConnection.burst", fe_int(c, cfg->client_connection.burst), "must be non-negative");
    }
    validate_leader_election(c, &cfg->leader_election);
    if (cfg->leader_election.leader_elect && strcmp(cfg->leader_election.resource_lock, "leases") != 0) {
        fe_invalid(c, "leaderElection.resourceLock", fe_str(c, cfg->leader_election.resource_lock),
                   "resourceLock value must be \"leases\"");
    }
    if (cfg->parallelism <= 0) {
        fe_invalid(c, "parallelism", fe_int(c, cfg->parallelism), "should be an integer value greater than zero");
    }
    if (cfg->nprofiles == 0) {
        fe_required(c, "profiles", "");
    } else {
        for (uint32_t i = 0; i < cfg->nprofiles; i++) {
            const ks_profile_config *p = &cfg->profiles[i];
            if (!*p->scheduler_name) fe_required(c, P("profiles[%u].schedulerName", i), "");
            validate_percentage(c, P("profiles[%u].percentageOfNodesToScore", i), p->has_percentage,
                                p->percentage_of_nodes_to_score);
            validate_plugin_config(c, p, i);
            /* upstream renders the other field.Path, which marshals to {} */
            for (uint32_t j = 0; j < i; j++) {
                if (strcmp(cfg->profiles[j].scheduler_name, p->scheduler_name) == 0) {
                    fe_duplicate(c, P("profiles[%u].schedulerName", i), "{}");
                    break;
                }
            }
        }
        validate_common_queue_sort(c, cfg);
    }
    validate_percentage(c, "percentageOfNodesToScore", true, cfg->percentage_of_nodes_to_score);
    if (cfg->pod_initial_backoff_seconds <= 0) {
        fe_invalid(c, "podInitialBackoffSeconds", fe_int(c, cfg->pod_initial_backoff_seconds), "must be greater than 0");
    }
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds) {
        fe_invalid(c, "podMaxBackoffSeconds", fe_int(c, cfg->pod_max_backoff_seconds),
                   "must be greater than or equal to PodInitialBackoffSeconds");
    }
    validate_extenders(c, cfg);
}
