/* PodTopologySpread: spread pods across topology domains, as required
 * (DoNotSchedule, a filter) or preferred (ScheduleAnyway, a score), with
 * cluster-level default constraints for pods that declare none. */
#include "framework/cycle_state.h"
#include "plugins/helper/hints.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "util/xalloc.h"

#include <pthread.h>
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

/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading them. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    pts_pf_key = ks_state_key_get("PreFilter" PTS_NAME);
    pts_ps_key = ks_state_key_get("PreScore" PTS_NAME);
    /* per-domain counts: not kept while the pod binds */
    ks_state_key_scheduling_only(pts_pf_key);
    ks_state_key_scheduling_only(pts_ps_key);
    pts_init_ids();
}

static void *pts_create(const ks_args *args, ks_handle *h, char **err) {
    pthread_once(&keys_once, init_keys);
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
        ks_nodecount_init(&pl->host);
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
    ks_nodecount_init(&pl->host);
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
    ks_nodecount_free(&pl->host);
    free(pl->defaults);
    free(pl);
}

static size_t pts_events(void *self, ks_cluster_event *out, size_t max) {
    /* Pods appearing, relabelled or deleted change the counts (the pod's own
     * toleration update matters with nodeTaintsPolicy: Honor); nodes added,
     * deleted, relabelled or retainted change the domains. */
    const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_UPDATE_POD_TOLERATION | KS_ACT_DELETE},
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

/* upstream involvedInTopologySpreading: the pod itself, or a bound pod of
 * its namespace. */
static bool involved(const ks_pod *changed, const ks_pod *pod) {
    return ks_hint_same_pod(changed, pod) || (changed->node_name != 0 && changed->ns == pod->ns);
}

static bool tolerations_equal(const ks_pod *a, const ks_pod *b) {
    if (a->ntolerations != b->ntolerations) return false;
    for (uint32_t i = 0; i < a->ntolerations; i++) {
        const ks_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->key != y->key || x->value != y->value || x->op != y->op || x->effect != y->effect ||
            x->has_seconds != y->has_seconds || (x->has_seconds && x->seconds != y->seconds))
            return false;
    }
    return true;
}

static bool labels_equal(const ks_labels *a, const ks_labels *b) {
    if (a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->kv[i].key != b->kv[i].key || a->kv[i].value != b->kv[i].value) return false;
    return true;
}

static bool any_selects(const pts_constraint *c, uint32_t n, const ks_labels *l) {
    for (uint32_t i = 0; i < n; i++)
        if (pts_selector_matches(&c[i], l)) return true;
    return false;
}

static bool node_has_keys(const ks_node *node, const pts_constraint *c, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!ks_labels_get(&node->labels, c[i].key, NULL)) return false;
    return true;
}

static bool taints_equal(const ks_node *a, const ks_node *b) {
    if (a->ntaints != b->ntaints) return false;
    for (uint32_t i = 0; i < a->ntaints; i++)
        if (a->taints[i].key != b->taints[i].key || a->taints[i].value != b->taints[i].value ||
            a->taints[i].effect != b->taints[i].effect)
            return false;
    return true;
}

static ks_queueing_hint node_hint(const pts_constraint *c, uint32_t n, const ks_node *o, const ks_node *m) {
    bool om = o && node_has_keys(o, c, n), mm = m && node_has_keys(m, c, n);
    if (o && m) {
        if (om != mm) return KS_QUEUE;
        if (!mm) return KS_QUEUE_SKIP;
        if (!taints_equal(o, m)) return KS_QUEUE;
        for (uint32_t i = 0; i < n; i++) {
            ks_id ov = 0, mv = 0;
            ks_labels_get(&o->labels, c[i].key, &ov);
            ks_labels_get(&m->labels, c[i].key, &mv);
            if (ov != mv) return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    return (m ? mm : om) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static ks_queueing_hint pod_hint(const ks_pod *pod, const pts_constraint *c, uint32_t n, const ks_pod *o,
                                 const ks_pod *m) {
    if (o && m) {
        if (ks_hint_same_pod(pod, m) && !tolerations_equal(o, m))
            for (uint32_t i = 0; i < n; i++)
                if (c[i].honor_taints) return KS_QUEUE;
        if (labels_equal(&o->labels, &m->labels)) return KS_QUEUE_SKIP;
        for (uint32_t i = 0; i < n; i++)
            if (pts_selector_matches(&c[i], &o->labels) != pts_selector_matches(&c[i], &m->labels)) return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    return any_selects(c, n, m ? &m->labels : &o->labels) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* Pods: an added or deleted pod involved in the spreading (the pod, or a
 * bound pod of its namespace) that a constraint selects; a relabelled one
 * whose selection changes; the pod's own tolerations with
 * nodeTaintsPolicy: Honor. Nodes: one that gains or loses the topology
 * keys, or that has them and changes a key's value or its taints. */
static ks_queueing_hint pts_hint(void *self, ks_cluster_event ev, const ks_pod *pod, const ks_event_object *old_obj,
                                 const ks_event_object *new_obj, char **err) {
    pts *pl = self;
    bool node = (ev.resource & KS_EV_NODE) != 0;
    const ks_node *on = NULL, *mn = NULL;
    const ks_pod *op = NULL, *mp = NULL;
    if (node) {
        on = ks_hint_node(old_obj);
        mn = ks_hint_node(new_obj);
        if (!on && !mn) return ks_hint_type_error(err, "Node");
    } else {
        op = ks_hint_pod(old_obj);
        mp = ks_hint_pod(new_obj);
        if (!op && !mp) return ks_hint_type_error(err, "Pod");
        if ((mp && !involved(mp, pod)) || (op && !involved(op, pod))) return KS_QUEUE_SKIP;
    }
    /* The constraints as a cycle would build them, in a scratch state. */
    ks_cycle_state *st = ks_cycle_state_new();
    pts_constraint *c = NULL;
    uint32_t n = pts_constraints(pl, st, pod, KS_DO_NOT_SCHEDULE, &c);
    ks_queueing_hint h = node ? node_hint(c, n, on, mn) : pod_hint(pod, c, n, op, mp);
    ks_cycle_state_free(st);
    return h;
}

const ks_plugin_ops ks_plugin_pod_topology_spread = {
    .abi_version = KS_ABI_VERSION,
    .name = PTS_NAME,
    .create = pts_create,
    .destroy = pts_destroy,
    .events_to_register = pts_events,
    .queueing_hint = pts_hint,
    .pre_filter = pts_pre_filter,
    .add_pod = pts_add_pod,
    .remove_pod = pts_remove_pod,
    .filter = pts_filter,
    .pre_score = pts_pre_score,
    .score = pts_score,
    .normalize_score = pts_normalize_score,
};
