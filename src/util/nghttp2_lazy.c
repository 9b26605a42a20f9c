#include "util/nghttp2_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ks_nghttp2_api api;
static const ks_nghttp2_api *loaded;
static const char *failure = "nghttp2 not loaded";

static void load(void) {
    /* the runtime package's soname first; the development symlink when
     * only that is installed */
    void *lib = dlopen("libnghttp2.so.14", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libnghttp2.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        failure = "cannot load nghttp2 (libnghttp2.so.14)";
        return;
    }
    bool ok = true;
    /* function pointers from dlsym: copied, not cast from void * */
#define KS_NGHTTP2_LOAD(name)                                                                                         \
    do {                                                                                                             \
        void *p_ = dlsym(lib, #name);                                                                                \
        if (!p_) ok = false;                                                                                         \
        memcpy(&api.name, &p_, sizeof(p_));                                                                          \
    } while (0);
    KS_NGHTTP2_FUNCS(KS_NGHTTP2_LOAD)
#undef KS_NGHTTP2_LOAD
    if (!ok) {
        failure = "nghttp2 lacks a function ksched uses (1.52 or later is needed)";
        return;
    }
    loaded = &api;
}

const ks_nghttp2_api *ks_nghttp2(const char **why) {
    pthread_once(&once, load);
    if (!loaded && why) *why = failure;
    return loaded;
}
