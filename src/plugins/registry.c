/* The in-tree plugins, one line each. Plugin files live next to this one
 * (one file per plugin, upstream names) and define `ks_plugin_<name>`. */
#include "framework/framework.h"

#include <stddef.h>

/* extern const ks_plugin_ops ks_plugin_NodeResourcesFit; */

const ks_plugin_ops *const ks_intree_plugins[] = {
    /* &ks_plugin_NodeResourcesFit, */
    NULL,
};

const size_t ks_intree_plugins_count = sizeof(ks_intree_plugins) / sizeof(ks_intree_plugins[0]) - 1;
