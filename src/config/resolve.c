/* From a profile's merged plugin sets to the ordered plugin list of every
 * extension point, by the rules of upstream's framework (NewFramework,
 * updatePluginList, expandMultiPointPlugins, getScoreWeights in
 * pkg/scheduler/framework/runtime/framework.go). */
#include "config/internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const ep_fields[KS_EP_COUNT] = {
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
    "score",      "reserve",   "permit",    "preBind", "bind",      "postBind",
};

static const char *const ep_types[KS_EP_COUNT] = {
    "PreEnqueuePlugin", "QueueSortPlugin", "PreFilterPlugin", "FilterPlugin", "PostFilterPlugin", "PreScorePlugin",
    "ScorePlugin",      "ReservePlugin",   "PermitPlugin",    "PreBindPlugin", "BindPlugin",      "PostBindPlugin",
};

const char *ks_ext_point_field(ks_ext_point p) { return p < KS_EP_COUNT ? ep_fields[p] : "multiPoint"; }
const char *ks_ext_point_type(ks_ext_point p) { return p < KS_EP_COUNT ? ep_types[p] : "?"; }

/* The order in which upstream walks the extension points; it decides
 * which error is reported first. */
static const ks_ext_point walk_order[KS_EP_COUNT] = {
    KS_EP_PRE_FILTER, KS_EP_FILTER,    KS_EP_POST_FILTER, KS_EP_RESERVE, KS_EP_PRE_SCORE,   KS_EP_SCORE,
    KS_EP_PRE_BIND,   KS_EP_BIND,      KS_EP_POST_BIND,   KS_EP_PERMIT,  KS_EP_PRE_ENQUEUE, KS_EP_QUEUE_SORT,
};

#define B(p) KS_EP_BIT(KS_EP_##p)

/* What each v1.34 in-tree plugin implements (Go interface checks). */
static const struct {
    const char *name;
    uint32_t points;
} intree[] = {
    {"SchedulingGates", B(PRE_ENQUEUE)},
    {"PrioritySort", B(QUEUE_SORT)},
    {"NodeUnschedulable", B(FILTER)},
    {"NodeName", B(FILTER)},
    {"TaintToleration", B(FILTER) | B(PRE_SCORE) | B(SCORE)},
    {"NodeAffinity", B(PRE_FILTER) | B(FILTER) | B(PRE_SCORE) | B(SCORE)},
    {"NodePorts", B(PRE_FILTER) | B(FILTER)},
    {"NodeResourcesFit", B(PRE_FILTER) | B(FILTER) | B(PRE_SCORE) | B(SCORE)},
    {"VolumeRestrictions", B(PRE_FILTER) | B(FILTER)},
    {"NodeVolumeLimits", B(PRE_FILTER) | B(FILTER)},
    {"VolumeBinding", B(PRE_FILTER) | B(FILTER) | B(PRE_SCORE) | B(SCORE) | B(RESERVE) | B(PRE_BIND)},
    {"VolumeZone", B(PRE_FILTER) | B(FILTER)},
    {"PodTopologySpread", B(PRE_FILTER) | B(FILTER) | B(PRE_SCORE) | B(SCORE)},
    {"InterPodAffinity", B(PRE_FILTER) | B(FILTER) | B(PRE_SCORE) | B(SCORE)},
    {"DynamicResources", B(PRE_ENQUEUE) | B(PRE_FILTER) | B(FILTER) | B(POST_FILTER) | B(RESERVE) | B(PRE_BIND)},
    {"DefaultPreemption", B(PRE_ENQUEUE) | B(POST_FILTER)},
    {"NodeResourcesBalancedAllocation", B(PRE_SCORE) | B(SCORE)},
    {"ImageLocality", B(SCORE)},
    {"DefaultBinder", B(BIND)},
};

uint32_t ks_config_intree_points(void *ctx, const char *plugin) {
    (void)ctx;
    for (size_t i = 0; i < sizeof intree / sizeof intree[0]; i++) {
        if (strcmp(intree[i].name, plugin) == 0) return intree[i].points;
    }
    return 0;
}

typedef struct names {
    const char **v;
    uint32_t n, cap;
} names;

static bool names_has(const names *s, const char *name) {
    for (uint32_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i], name) == 0) return true;
    }
    return false;
}

static void names_add(names *s, const char *name) {
    KS_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = name;
}

static bool set_disables(const ks_plugin_set *s, const char *name) {
    for (uint32_t i = 0; i < s->ndisabled; i++) {
        if (strcmp(s->disabled[i].name, name) == 0) return true;
    }
    return false;
}

#define MAX_NODE_SCORE 100LL

/* Build one profile's lists. Returns NULL on success, else the framework's
 * error message (malloc'd). */
static char *resolve_profile(ks_arena *a, ks_profile_config *p, ks_plugin_points_fn fn, void *ctx) {
    names lists[KS_EP_COUNT];
    memset(lists, 0, sizeof lists);
    char *err = NULL;
    const ks_plugin_set *mp = &p->plugins.multi_point;

    for (int w = 0; w < KS_EP_COUNT && !err; w++) {
        ks_ext_point e = walk_order[w];
        const ks_plugin_set *s = &p->plugins.point[e];
        for (uint32_t i = 0; i < s->nenabled && !err; i++) {
            const char *name = s->enabled[i].name;
            uint32_t mask = fn(ctx, name);
            if (!mask) {
                err = ks_xasprintf("%s \"%s\" does not exist", ep_types[e], name);
            } else if (!(mask & KS_EP_BIT(e))) {
                err = ks_xasprintf("plugin \"%s\" does not extend %s plugin", name, ep_types[e]);
            } else if (names_has(&lists[e], name)) {
                err = ks_xasprintf("plugin \"%s\" already registered as \"%s\"", name, ep_types[e]);
            } else {
                names_add(&lists[e], name);
            }
        }
    }

    /* multiPoint: plugins named at a point explicitly come first (the
     * point's setting overrides), then the multiPoint ones, then the rest
     * of the point's own list; a point disabling "*" takes none. */
    for (int w = 0; w < KS_EP_COUNT && !err && mp->nenabled; w++) {
        ks_ext_point e = walk_order[w];
        const ks_plugin_set *s = &p->plugins.point[e];
        if (set_disables(s, "*")) continue;
        names multi = {0}, overrides = {0};
        for (uint32_t i = 0; i < mp->nenabled && !err; i++) {
            const char *name = mp->enabled[i].name;
            uint32_t mask = fn(ctx, name);
            if (!mask) {
                err = ks_xasprintf("%s \"%s\" does not exist", ep_types[e], name);
                break;
            }
            if (!(mask & KS_EP_BIT(e))) continue;
            if (set_disables(s, name)) continue;
            if (names_has(&lists[e], name)) {
                if (!names_has(&overrides, name)) names_add(&overrides, name);
                continue;
            }
            if (names_has(&multi, name)) {
                err = ks_xasprintf("plugin \"%s\" already registered as \"%s\"", name, ep_types[e]);
                break;
            }
            names_add(&multi, name);
        }
        if (!err) {
            names out = {0};
            for (uint32_t i = 0; i < lists[e].n; i++) {
                if (names_has(&overrides, lists[e].v[i])) names_add(&out, lists[e].v[i]);
            }
            for (uint32_t i = 0; i < multi.n; i++) names_add(&out, multi.v[i]);
            for (uint32_t i = 0; i < lists[e].n; i++) {
                if (!names_has(&overrides, lists[e].v[i])) names_add(&out, lists[e].v[i]);
            }
            free(lists[e].v);
            lists[e] = out;
        }
        free(multi.v);
        free(overrides.v);
    }

    if (!err && lists[KS_EP_QUEUE_SORT].n != 1) {
        err = ks_xasprintf("only one queue sort plugin required for profile with scheduler name \"%s\", but got %u",
                           p->scheduler_name, lists[KS_EP_QUEUE_SORT].n);
    }
    if (!err && lists[KS_EP_BIND].n == 0) {
        err = ks_xasprintf("at least one bind plugin is needed for profile with scheduler name \"%s\"",
                           p->scheduler_name);
    }

    /* Score weights: the score point's own entry wins over multiPoint's;
     * 0 means 1. Every score-capable plugin named counts toward the
     * overflow check, whether or not it ends up scoring. */
    names wn = {0};
    int32_t *wv = NULL;
    size_t wcap = 0;
    int64_t total = 0;
    for (int part = 0; part < 2 && !err; part++) {
        const ks_plugin_set *s = part ? mp : &p->plugins.score;
        for (uint32_t i = 0; i < s->nenabled && !err; i++) {
            const char *name = s->enabled[i].name;
            if (!(fn(ctx, name) & KS_EP_BIT(KS_EP_SCORE))) continue;
            if (names_has(&wn, name)) continue;
            int32_t weight = s->enabled[i].weight ? s->enabled[i].weight : 1;
            KS_GROW(wv, wcap, wn.n + 1);
            wv[wn.n] = weight;
            names_add(&wn, name);
            if ((int64_t)weight * MAX_NODE_SCORE > INT64_MAX - total) {
                err = ks_xasprintf("total score of Score plugins could overflow");
            }
            total += (int64_t)weight * MAX_NODE_SCORE;
        }
    }

    if (!err) {
        for (int e = 0; e < KS_EP_COUNT; e++) {
            ks_resolved_list *r = &p->resolved[e];
            r->n = lists[e].n;
            r->plugins = r->n ? ks_arena_calloc(a, r->n, sizeof *r->plugins) : NULL;
            for (uint32_t i = 0; i < r->n; i++) {
                r->plugins[i].name = lists[e].v[i];
                if (e == KS_EP_SCORE) {
                    for (uint32_t k = 0; k < wn.n; k++) {
                        if (strcmp(wn.v[k], lists[e].v[i]) == 0) r->plugins[i].weight = wv[k];
                    }
                }
            }
        }
    }
    for (int e = 0; e < KS_EP_COUNT; e++) free(lists[e].v);
    free(wn.v);
    free(wv);
    return err;
}

bool ks_config_resolve(ks_config *cfg, ks_plugin_points_fn fn, void *ctx, ks_config_errors *errs) {
    if (!fn) fn = ks_config_intree_points;
    bool ok = true;
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        ks_profile_config *p = &cfg->profiles[i];
        memset(p->resolved, 0, sizeof p->resolved);
        char *err = resolve_profile(cfg->arena, p, fn, ctx);
        p->resolved_ok = err == NULL;
        if (err) {
            ok = false;
            const char *src = cfg->source && strcmp(cfg->source, "<defaults>") != 0 ? cfg->source : NULL;
            if (src && p->line > 0) {
                ks_config_errors_add(errs, "%s:%d: creating profile for scheduler name %s: %s", src, p->line,
                                     p->scheduler_name, err);
            } else if (src) {
                ks_config_errors_add(errs, "%s: creating profile for scheduler name %s: %s", src, p->scheduler_name,
                                     err);
            } else {
                ks_config_errors_add(errs, "creating profile for scheduler name %s: %s", p->scheduler_name, err);
            }
            free(err);
        }
    }
    return ok;
}
