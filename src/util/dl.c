#include "util/dl.h"

#include <dlfcn.h>
#include <string.h>

void *ks_dl_open(const char *soname, const char *devname) {
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib && devname) lib = dlopen(devname, RTLD_NOW | RTLD_LOCAL);
    return lib;
}

bool ks_dl_sym(void *const *libs, size_t n, const char *name, void *fn, size_t size) {
    void *p = NULL;
    for (size_t i = 0; i < n && !p; i++) p = dlsym(libs[i], name);
    memset(fn, 0, size);
    if (p) memcpy(fn, &p, size < sizeof(p) ? size : sizeof(p));
    return p != NULL;
}
