/* The in-tree plugins, one line each. Plugin files live in subdirectories
 * of this one (one file per plugin, upstream names) and each defines a
 * `const ks_plugin_ops ks_plugin_<name>`. */
#include "framework/framework.h"

#include <stddef.h>

extern const ks_plugin_ops ks_plugin_priority_sort;
extern const ks_plugin_ops ks_plugin_scheduling_gates;
extern const ks_plugin_ops ks_plugin_node_unschedulable;
extern const ks_plugin_ops ks_plugin_node_name;
extern const ks_plugin_ops ks_plugin_taint_toleration;
extern const ks_plugin_ops ks_plugin_node_affinity;
extern const ks_plugin_ops ks_plugin_node_ports;
extern const ks_plugin_ops ks_plugin_node_resources_fit;
extern const ks_plugin_ops ks_plugin_volume_restrictions;
extern const ks_plugin_ops ks_plugin_node_volume_limits;
extern const ks_plugin_ops ks_plugin_volume_binding;
extern const ks_plugin_ops ks_plugin_volume_zone;
extern const ks_plugin_ops ks_plugin_dynamic_resources;
extern const ks_plugin_ops ks_plugin_node_resources_balanced_allocation;
extern const ks_plugin_ops ks_plugin_image_locality;
extern const ks_plugin_ops ks_plugin_inter_pod_affinity;
extern const ks_plugin_ops ks_plugin_pod_topology_spread;
extern const ks_plugin_ops ks_plugin_default_preemption;
extern const ks_plugin_ops ks_plugin_default_binder;

const ks_plugin_ops *const ks_intree_plugins[] = {
    &ks_plugin_priority_sort,
    &ks_plugin_scheduling_gates,
    &ks_plugin_node_unschedulable,
    &ks_plugin_node_name,
    &ks_plugin_taint_toleration,
    &ks_plugin_node_affinity,
    &ks_plugin_node_ports,
    &ks_plugin_node_resources_fit,
    &ks_plugin_volume_restrictions,
    &ks_plugin_node_volume_limits,
    &ks_plugin_volume_binding,
    &ks_plugin_volume_zone,
    &ks_plugin_dynamic_resources,
    &ks_plugin_node_resources_balanced_allocation,
    &ks_plugin_image_locality,
    &ks_plugin_inter_pod_affinity,
    &ks_plugin_pod_topology_spread,
    &ks_plugin_default_preemption,
    &ks_plugin_default_binder,
    NULL,
};

const size_t ks_intree_plugins_count = sizeof(ks_intree_plugins) / sizeof(ks_intree_plugins[0]) - 1;
