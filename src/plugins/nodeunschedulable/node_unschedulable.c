/* NodeUnschedulable: reject nodes with spec.unschedulable unless the pod
 * tolerates the node.kubernetes.io/unschedulable:NoSchedule taint. */
#include "framework/nodeinfo.h"
#include "framework/status.h"
#include "plugins/helper/hints.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdlib.h>

typedef struct node_unschedulable {
    ks_taint unschedulable_taint;
} node_unschedulable;

static void *create(const ks_args *args, ks_handle *h, char **err) {
    node_unschedulable *pl = ks_xcalloc(1, sizeof(*pl));
    pl->unschedulable_taint = (ks_taint){
        .key = ks_intern("node.kubernetes.io/unschedulable"),
        .value = KS_ID_NONE,
        .effect = KS_EFFECT_NO_SCHEDULE,
    };
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

/* A node event helps when the node is new and schedulable, or stopped
 * being unschedulable; a toleration added to the pod itself helps when it
 * tolerates the unschedulable taint. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    node_unschedulable *pl = self;
    if (ev.resource & KS_EV_NODE) {
        const ks_node *o = ks_hint_node(old_obj), *n = ks_hint_node(new_obj);
        if (!n) return ks_hint_type_error(err, "Node");
        if ((o && o->unschedulable && !n->unschedulable) || (!o && !n->unschedulable)) return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    const ks_pod *m = ks_hint_pod(new_obj);
    if (!m) return ks_hint_type_error(err, "Pod");
    if (!ks_hint_same_pod(pod, m)) return KS_QUEUE_SKIP;
    return ks_tolerations_tolerate(m->tolerations, m->ntolerations, &pl->unschedulable_taint) ? KS_QUEUE
                                                                                              : KS_QUEUE_SKIP;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *ni) {
    node_unschedulable *pl = self;
    if (!ni->node->unschedulable) return NULL;
    if (ks_tolerations_tolerate(pod->tolerations, pod->ntolerations, &pl->unschedulable_taint))
        return NULL;
    return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were unschedulable");
}

const ks_plugin_ops ks_plugin_node_unschedulable = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeUnschedulable",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .filter = filter,
};
