/* An entry point that refuses to load without registering anything. */
#include <ksched/ksched.h>

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) { return 7; }
