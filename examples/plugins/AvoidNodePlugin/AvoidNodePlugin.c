/* AvoidNodePlugin: a Filter that keeps pods off nodes labelled avoid=true.
 *
 * The smallest useful plugin, walked through line by line in
 * docs/plugin-guide.md. Build it outside the tree with
 *
 *     cc -shared -fPIC $(pkg-config --cflags ksched) AvoidNodePlugin.c -o AvoidNodePlugin.so
 *
 * and enable it in a KubeSchedulerConfiguration profile:
 *
 *     plugins:
 *       filter:
 *         enabled:
 *         - name: AvoidNodePlugin
 */
#include <ksched/ksched.h>

#include <string.h>

static ks_status *avoid_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                               const ks_node_info *ni) {
    (void)self, (void)st, (void)pod;
    const ks_node *node = ks_node_info_node(ni);
    if (!node) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node not found");
    const char *avoid = ks_node_label(node, "avoid");
    if (avoid && strcmp(avoid, "true") == 0)
        return ks_status_new(KS_UNSCHEDULABLE, "node %s is labeled avoid=true", ks_node_name(node));
    return NULL; /* Success */
}

static const ks_plugin_ops avoid_node = {
    .abi_version = KS_ABI_VERSION,
    .name = "AvoidNodePlugin",
    .filter = avoid_filter,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &avoid_node, NULL) ? 0 : 1;
}
