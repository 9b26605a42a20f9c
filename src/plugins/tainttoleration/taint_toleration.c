/* TaintToleration.
 *
 * Filter: the node's NoSchedule and NoExecute taints must all be tolerated;
 * the first one that is not is named in the reason.
 * Score: the number of PreferNoSchedule taints the pod does not tolerate,
 * normalized in reverse (fewer intolerable taints, higher score). */
#include "framework/nodeinfo.h"
#include "plugins/helper/hints.h"
#include "plugins/helper/normalize_score.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdlib.h>

typedef struct taint_toleration {
    ks_state_key pre_score_key;
} taint_toleration;

/* The pod's tolerations that can match a PreferNoSchedule taint: those
 * with that effect or with no effect (which matches every effect). */
typedef struct pre_score_state {
    uint32_t n;
    ks_toleration *tolerations;
} pre_score_state;

static void *create(const ks_args *args, ks_handle *h, char **err) {
    taint_toleration *pl = ks_xcalloc(1, sizeof(*pl));
    pl->pre_score_key = ks_state_key_get("PreScoreTaintToleration");
    return pl;
}

static void destroy(void *self) { free(self); }

/* Upstream (queueing hints on): Node/Add|UpdateNodeTaint and
 * Pod/UpdatePodToleration. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT},
        {KS_EV_POD, KS_ACT_UPDATE_POD_TOLERATION},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

/* Whether the node has a NoSchedule or NoExecute taint the pod does not
 * tolerate. */
static bool untolerated(const ks_pod *pod, const ks_node *node) {
    for (uint32_t i = 0; i < node->ntaints; i++) {
        const ks_taint *t = &node->taints[i];
        if (t->effect != KS_EFFECT_NO_SCHEDULE && t->effect != KS_EFFECT_NO_EXECUTE) continue;
        if (!ks_tolerations_tolerate(pod->tolerations, pod->ntolerations, t)) return true;
    }
    return false;
}

/* A node helps when its taints went from untolerated (or it is new) to
 * tolerated; a toleration added to the pod itself always may. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    if (ev.resource & KS_EV_NODE) {
        const ks_node *o = ks_hint_node(old_obj), *n = ks_hint_node(new_obj);
        if (!n) return ks_hint_type_error(err, "Node");
        bool was = o ? untolerated(pod, o) : true;
        return was && !untolerated(pod, n) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    const ks_pod *m = ks_hint_pod(new_obj);
    if (!m) return ks_hint_type_error(err, "Pod");
    return ks_hint_same_pod(pod, m) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *ni) {
    const ks_node *node = ni->node;
    for (uint32_t i = 0; i < node->ntaints; i++) {
        const ks_taint *t = &node->taints[i];
        if (t->effect != KS_EFFECT_NO_SCHEDULE && t->effect != KS_EFFECT_NO_EXECUTE) continue;
        if (ks_tolerations_tolerate(pod->tolerations, pod->ntolerations, t)) continue;
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "node(s) had untolerated taint {%s: %s}", ks_str(t->key),
                             ks_str(t->value));
    }
    return NULL;
}

static ks_status *pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes) {
    taint_toleration *pl = self;
    pre_score_state *s = ks_cycle_state_alloc(st, sizeof(*s));
    s->tolerations = ks_cycle_state_alloc(st, (pod->ntolerations + 1) * sizeof(ks_toleration));
    for (uint32_t i = 0; i < pod->ntolerations; i++) {
        const ks_toleration *t = &pod->tolerations[i];
        if (t->effect == KS_EFFECT_ALL || t->effect == KS_EFFECT_PREFER_NO_SCHEDULE)
            s->tolerations[s->n++] = *t;
    }
    /* Arena memory: no free function; a clone for a dry run shares it. */
    ks_cycle_state_write(st, pl->pre_score_key, s, NULL, NULL);
    return NULL;
}

static ks_status *score(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *ni, int64_t *out) {
    taint_toleration *pl = self;
    const pre_score_state *s = ks_cycle_state_read(st, pl->pre_score_key);
    if (!s)
        return ks_status_new(KS_ERROR,
                             "failed to read \"PreScoreTaintToleration\" from cycleState: "
                             "not found");
    const ks_node *node = ni->node;
    int64_t intolerable = 0;
    for (uint32_t i = 0; i < node->ntaints; i++) {
        const ks_taint *t = &node->taints[i];
        if (t->effect != KS_EFFECT_PREFER_NO_SCHEDULE) continue;
        if (!ks_tolerations_tolerate(s->tolerations, s->n, t)) intolerable++;
    }
    *out = intolerable;
    return NULL;
}

static ks_status *normalize_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                                  ks_node_score *scores, size_t n) {
    ks_default_normalize_score(KS_MAX_NODE_SCORE, true, scores, n);
    return NULL;
}

const ks_plugin_ops ks_plugin_taint_toleration = {
    .abi_version = KS_ABI_VERSION,
    .name = "TaintToleration",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .normalize_score = normalize_score,
};
