/* NodeTypeFilter: a Filter that admits only nodes labelled
 * node-type=special. Other nodes are UnschedulableAndUnresolvable: no
 * preemption on them can make the label appear. */
#include <ksched/ksched.h>

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

static const ks_plugin_ops node_type = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeTypeFilter",
    .filter = node_type_filter,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &node_type, NULL) ? 0 : 1;
}
