/* A plugin built for a future ABI: must be refused, never called. */
#include <ksched/ksched.h>

#include <stdlib.h>

static ks_status *never(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    abort();
}

static const ks_plugin_ops ops = {
    .abi_version = KS_ABI_VERSION + 1,
    .name = "FutureFilter",
    .filter = never,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    char *err = NULL;
    bool ok = ks_registry_add(reg, &ops, &err);
    free(err);
    return ok ? 0 : 1;
}
