/* Uses an API function no ksched has: dlopen (RTLD_NOW) must fail. */
#include <ksched/ksched.h>

int ks_function_from_the_future(void);

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) { return ks_function_from_the_future(); }
