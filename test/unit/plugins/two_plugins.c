/* One shared object, two plugins. */
#include <ksched/ksched.h>

static ks_status *deny(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    return ks_status_new(KS_UNSCHEDULABLE, "denied by TwoA");
}

static ks_status *five(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                       int64_t *score) {
    *score = 5;
    return NULL;
}

static const ks_plugin_ops a = {.abi_version = KS_ABI_VERSION, .name = "TwoA", .filter = deny};
static const ks_plugin_ops b = {.abi_version = KS_ABI_VERSION, .name = "TwoB", .score = five};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &a, NULL) && ks_registry_add(reg, &b, NULL) ? 0 : 1;
}
