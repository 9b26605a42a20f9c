#include "util/nghttp2_lazy.h"

#include "util/dl.h"

#include <pthread.h>
#include <stdbool.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ks_nghttp2_api api;
static const ks_nghttp2_api *loaded;
static const char *failure = "nghttp2 not loaded";

static void load(void) {
    /* the runtime package's soname first; the development symlink when
     * only that is installed */
    void *lib = ks_dl_open("libnghttp2.so.14", "libnghttp2.so");
    if (!lib) {
        failure = "cannot load nghttp2 (libnghttp2.so.14)";
        return;
    }
    bool ok = true;
#define KS_NGHTTP2_LOAD(name) ok &= ks_dl_sym(&lib, 1, #name, &api.name, sizeof(api.name));
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
