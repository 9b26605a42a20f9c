/* Loading out-of-tree plugins from shared objects.
 *
 * A plugin .so exports `int ks_plugin_init(ks_registry *)`, which registers
 * its plugins with ks_registry_add. Loading fails, with a message naming
 * the file, when the file cannot be opened (dlerror's text), the entry
 * symbol is missing, the init function fails, or a plugin is refused by
 * the registry (ABI version mismatch, duplicate name). Loaded objects are
 * never unloaded: the registry keeps pointers into them. */
#ifndef KS_LOADER_H
#define KS_LOADER_H

#include <ksched/ksched.h>

#include <stdbool.h>

/* Load one .so into reg. On failure returns false with *err (malloc'd). */
bool ks_plugin_load(ks_registry *reg, const char *path, char **err);
/* Load every *.so in dir, in name order (stops at the first failure). */
bool ks_plugin_load_dir(ks_registry *reg, const char *dir, char **err);

#endif
