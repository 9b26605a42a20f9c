#include "util/curl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ks_curl_api api;
static const ks_curl_api *loaded;
static const char *failure = "libcurl not loaded";

static void *sym(void *lib, const char *name, bool *ok) {
    void *p = dlsym(lib, name);
    if (!p) *ok = false;
    return p;
}

static void load(void) {
    /* The runtime package's soname first; the development symlink when
     * only that is installed. */
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        failure = "cannot load libcurl (libcurl.so.4)";
        return;
    }
    bool ok = true;
    CURLcode (*global_init)(long) = (CURLcode (*)(long))sym(lib, "curl_global_init", &ok);
    api.easy_init = (CURL * (*)(void)) sym(lib, "curl_easy_init", &ok);
    api.easy_setopt = (CURLcode (*)(CURL *, CURLoption, ...))sym(lib, "curl_easy_setopt", &ok);
    api.easy_perform = (CURLcode (*)(CURL *))sym(lib, "curl_easy_perform", &ok);
    api.easy_getinfo = (CURLcode (*)(CURL *, CURLINFO, ...))sym(lib, "curl_easy_getinfo", &ok);
    api.easy_cleanup = (void (*)(CURL *))sym(lib, "curl_easy_cleanup", &ok);
    api.easy_strerror = (const char *(*)(CURLcode))sym(lib, "curl_easy_strerror", &ok);
    api.slist_append = (struct curl_slist * (*)(struct curl_slist *, const char *)) sym(lib, "curl_slist_append", &ok);
    api.slist_free_all = (void (*)(struct curl_slist *))sym(lib, "curl_slist_free_all", &ok);
    if (!ok) {
        failure = "libcurl lacks a function ksched uses";
        return;
    }
    if (global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        failure = "curl_global_init failed";
        return;
    }
    loaded = &api;
}

const ks_curl_api *ks_curl(const char **why) {
    pthread_once(&once, load);
    if (!loaded && why) *why = failure;
    return loaded;
}
