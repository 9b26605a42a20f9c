/* A shared object without the entry point. */
#include <ksched/ksched.h>

KS_PLUGIN_EXPORT int ks_plugin_initialize(ks_registry *reg) { return 0; }
