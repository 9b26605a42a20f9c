// The plugin API used from C++17: the header must compile as C++ (extern
// "C", no C-only constructs) and a C++ plugin must load like a C one.
#include <ksched/ksched.h>

#include <string>

namespace {

ks_status *zone_filter(void *, ks_cycle_state *, const ks_pod *pod, const ks_node_info *ni) {
    const ks_node *n = ks_node_info_node(ni);
    const char *want = ks_pod_label(pod, "want-zone");
    const char *zone = n ? ks_node_label(n, "zone") : nullptr;
    if (want && (!zone || std::string(zone) != want))
        return ks_status_new(KS_UNSCHEDULABLE, "node(s) not in zone %s", want);
    if (ks_log_enabled(5)) KS_LOG_INFO(5, "CxxZoneFilter: %s fits", ks_node_info_name(ni));
    return nullptr;
}

ks_plugin_ops make_ops() {
    ks_plugin_ops o{};
    o.abi_version = KS_ABI_VERSION;
    o.name = "CxxZoneFilter";
    o.filter = zone_filter;
    return o;
}

const ks_plugin_ops ops = make_ops();

} // namespace

extern "C" KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &ops, nullptr) ? 0 : 1;
}
