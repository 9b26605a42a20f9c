/* Registers a name AvoidNodePlugin.so already registered. */
#include <ksched/ksched.h>

static const ks_plugin_ops ops = {
    .abi_version = KS_ABI_VERSION,
    .name = "AvoidNodePlugin",
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &ops, NULL) ? 0 : 1;
}
