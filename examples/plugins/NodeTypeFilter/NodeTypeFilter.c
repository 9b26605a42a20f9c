/* NodeTypeFilter: a Filter that admits only nodes labelled
 * node-type=special. Other nodes are UnschedulableAndUnresolvable: no
 * preemption on them can make the label appear. A pod it rejected is
 * retried only when a node with the label appears or gets it (its
 * EventsToRegister and QueueingHint). */
#include <ksched/ksched.h>

#include <stdbool.h>
#include <string.h>

static ks_status *node_type_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *ni) {
    (void)self, (void)st, (void)pod;
    const ks_node *node = ks_node_info_node(ni);
    if (!node) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node not found");
    const char *type = ks_node_label(node, "node-type");
    if (type && strcmp(type, "special") == 0) return NULL;
    return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                         "node(s) didn't have label node-type=special");
}

static bool special(const ks_node *node) {
    const char *type = node ? ks_node_label(node, "node-type") : NULL;
    return type && strcmp(type, "special") == 0;
}

static size_t node_type_events(void *self, ks_cluster_event *out, size_t max) {
    (void)self;
    if (max < 1) return 0;
    out[0] = (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL};
    return 1;
}

/* Worth a retry only when the node is special now and was not before. */
static ks_queueing_hint node_type_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                       const ks_event_object *old_obj, const ks_event_object *new_obj,
                                       char **err) {
    (void)self, (void)ev, (void)pod, (void)err;
    if (!special(ks_event_object_node(new_obj))) return KS_QUEUE_SKIP;
    return old_obj && special(ks_event_object_node(old_obj)) ? KS_QUEUE_SKIP : KS_QUEUE;
}

static const ks_plugin_ops node_type = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeTypeFilter",
    .events_to_register = node_type_events,
    .filter = node_type_filter,
    .queueing_hint = node_type_hint,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &node_type, NULL) ? 0 : 1;
}
