/* PodTopologySpread: spread pods across topology domains, as required
 * (DoNotSchedule, a filter) or preferred (ScheduleAnyway, a score), with
 * cluster-level default constraints for pods that declare none. */
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

ks_state_key pts_pf_key = -1, pts_ps_key = -1;

/* defaultingType: System. */
static const struct {
    const char *key;
    int32_t max_skew;
} system_defaults[] = {
    {"kubernetes.io/hostname", 3},
    {"topology.kubernetes.io/zone", 5},
};

static bool parse_policy(const ks_args *a, ks_inclusion_policy *out) {
    const char *s = ks_args_string(a);
    if (s && strcmp(s, "Honor") == 0) *out = KS_POLICY_HONOR;
    else if (s && strcmp(s, "Ignore") == 0) *out = KS_POLICY_IGNORE;
    else return false;
    return true;
}

/* One defaultConstraints item; NULL or an error message (malloc'd). */
static char *parse_default(const ks_args *a, size_t i, pts_default *d) {
    d->min_domains = 1;
    d->affinity_policy = KS_POLICY_HONOR;
    d->taints_policy = KS_POLICY_IGNORE;
    int64_t v;
    const ks_args *f = ks_args_get(a, "maxSkew");
    if (!f || !ks_args_int(f, &v) || v <= 0 || v > INT32_MAX)
        return ks_xasprintf("defaultConstraints[%zu].maxSkew: Invalid value: %s: not in valid range (0, inf)", i,
                            f && ks_args_string(f) ? ks_args_string(f) : "0");
    d->max_skew = (int32_t)v;
    f = ks_args_get(a, "topologyKey");
    const char *key = f ? ks_args_string(f) : NULL;
    if (!key || !*key) return ks_xasprintf("defaultConstraints[%zu].topologyKey: Required value: can not be empty", i);
    d->key = ks_intern(key);
    f = ks_args_get(a, "whenUnsatisfiable");
    const char *w = f ? ks_args_string(f) : NULL;
    if (!w || !*w) return ks_xasprintf("defaultConstraints[%zu].whenUnsatisfiable: Required value: can not be empty", i);
    if (strcmp(w, "DoNotSchedule") == 0) d->when = KS_DO_NOT_SCHEDULE;
    else if (strcmp(w, "ScheduleAnyway") == 0) d->when = KS_SCHEDULE_ANYWAY;
    else
        return ks_xasprintf("defaultConstraints[%zu].whenUnsatisfiable: Unsupported value: \"%s\": supported values: "
                            "\"DoNotSchedule\", \"ScheduleAnyway\"", i, w);
    if ((f = ks_args_get(a, "minDomains")) && ks_args_int(f, &v)) d->min_domains = (int32_t)v;
    if ((f = ks_args_get(a, "nodeAffinityPolicy")) && !parse_policy(f, &d->affinity_policy))
        return ks_xasprintf("defaultConstraints[%zu].nodeAffinityPolicy: Unsupported value", i);
    if ((f = ks_args_get(a, "nodeTaintsPolicy")) && !parse_policy(f, &d->taints_policy))
        return ks_xasprintf("defaultConstraints[%zu].nodeTaintsPolicy: Unsupported value", i);
    if (ks_args_get(a, "labelSelector"))
        return ks_xasprintf("defaultConstraints[%zu].labelSelector: Forbidden: constraint must not define a "
                            "selector, as they deduced for each pod", i);
    return NULL;
}

static void *pts_create(const ks_args *args, ks_handle *h, char **err) {
    if (pts_pf_key < 0) {
        pts_pf_key = ks_state_key_get("PreFilter" PTS_NAME);
        pts_ps_key = ks_state_key_get("PreScore" PTS_NAME);
        pts_init_ids();
    }
    pts *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    const char *type = "System";
    const ks_args *list = NULL;
    if (args) {
        const ks_args *t = ks_args_get(args, "defaultingType");
        if (t && ks_args_string(t) && *ks_args_string(t)) type = ks_args_string(t);
        list = ks_args_get(args, "defaultConstraints");
    }
    size_t nlist = list ? ks_args_len(list) : 0;
    if (strcmp(type, "System") != 0 && strcmp(type, "List") != 0) {
        *err = ks_xasprintf("defaultingType: Unsupported value: \"%s\": supported values: \"System\", \"List\"", type);
        goto fail;
    }
    if (strcmp(type, "System") == 0) {
        if (nlist) {
            *err = ks_xasprintf("defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty");
            goto fail;
        }
        pl->system_defaulted = true;
        ks_nodememo_init(&pl->pf_memo);
        ks_nodememo_init(&pl->ps_memo);
        pl->ndefaults = 2;
        pl->defaults = ks_xcalloc(2, sizeof(*pl->defaults));
        for (int i = 0; i < 2; i++)
            pl->defaults[i] = (pts_default){
                .max_skew = system_defaults[i].max_skew,
                .key = ks_intern(system_defaults[i].key),
                .when = KS_SCHEDULE_ANYWAY,
                .min_domains = 1,
                .affinity_policy = KS_POLICY_HONOR,
                .taints_policy = KS_POLICY_IGNORE,
            };
        return pl;
    }
    pl->defaults = ks_xcalloc(nlist ? nlist : 1, sizeof(*pl->defaults));
    for (size_t i = 0; i < nlist; i++) {
        if ((*err = parse_default(ks_args_item(list, i), i, &pl->defaults[i]))) goto fail;
        for (size_t j = 0; j < i; j++)
            if (pl->defaults[j].key == pl->defaults[i].key && pl->defaults[j].when == pl->defaults[i].when) {
                *err = ks_xasprintf("defaultConstraints[%zu]: Duplicate value: \"{%s, %s}\"", i,
                                    ks_str(pl->defaults[i].key),
                                    pl->defaults[i].when == KS_DO_NOT_SCHEDULE ? "DoNotSchedule" : "ScheduleAnyway");
                goto fail;
            }
        pl->ndefaults++;
    }
    ks_nodememo_init(&pl->pf_memo);
    ks_nodememo_init(&pl->ps_memo);
    return pl;
fail:
    free(pl->defaults);
    free(pl);
    return NULL;
}

static void pts_destroy(void *self) {
    pts *pl = self;
    if (!pl) return;
    ks_nodememo_free(&pl->pf_memo);
    ks_nodememo_free(&pl->ps_memo);
    free(pl->defaults);
    free(pl);
}

static size_t pts_events(void *self, ks_cluster_event *out, size_t max) {
    /* Pods appearing, relabelled or deleted change the counts (the pod's own
     * toleration update matters with nodeTaintsPolicy: Honor); nodes added,
     * deleted, relabelled or retainted change the domains. */
    const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_ALL},
        {KS_EV_NODE, KS_ACT_ALL},
    };
    size_t n = 0;
    for (; n < sizeof(ev) / sizeof(ev[0]) && n < max; n++) out[n] = ev[n];
    return n;
}

const ks_plugin_ops ks_plugin_pod_topology_spread = {
    .abi_version = KS_ABI_VERSION,
    .name = PTS_NAME,
    .create = pts_create,
    .destroy = pts_destroy,
    .events_to_register = pts_events,
    .pre_filter = pts_pre_filter,
    .add_pod = pts_add_pod,
    .remove_pod = pts_remove_pod,
    .filter = pts_filter,
    .pre_score = pts_pre_score,
    .score = pts_score,
    .normalize_score = pts_normalize_score,
};
