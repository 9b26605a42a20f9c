/* NodeName: a pod with spec.nodeName set only fits that node. */
#include "framework/nodeinfo.h"
#include "framework/status.h"

#include <ksched/ksched.h>

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *ni) {
    if (pod->node_name == KS_ID_NONE || pod->node_name == ni->node->name) return NULL;
    return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match the requested node name");
}

/* Upstream (queueing hints on): Node/Add. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    if (max < 1) return 0;
    out[0] = (ks_cluster_event){KS_EV_NODE, KS_ACT_ADD};
    return 1;
}

const ks_plugin_ops ks_plugin_node_name = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeName",
    .events_to_register = events_to_register,
    .filter = filter,
};
