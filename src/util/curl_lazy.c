#include "util/curl_lazy.h"

#include "util/dl.h"

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
    void *lib = ks_dl_open("libcurl.so.4", "libcurl.so");
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
    api.easy_reset = (void (*)(CURL *))sym(lib, "curl_easy_reset", &ok);
    api.easy_strerror = (const char *(*)(CURLcode))sym(lib, "curl_easy_strerror", &ok);
    api.slist_append = (struct curl_slist * (*)(struct curl_slist *, const char *)) sym(lib, "curl_slist_append", &ok);
    api.slist_free_all = (void (*)(struct curl_slist *))sym(lib, "curl_slist_free_all", &ok);
    api.multi_init = (CURLM * (*)(void)) sym(lib, "curl_multi_init", &ok);
    api.multi_setopt = (CURLMcode (*)(CURLM *, CURLMoption, ...))sym(lib, "curl_multi_setopt", &ok);
    api.multi_add_handle = (CURLMcode (*)(CURLM *, CURL *))sym(lib, "curl_multi_add_handle", &ok);
    api.multi_remove_handle = (CURLMcode (*)(CURLM *, CURL *))sym(lib, "curl_multi_remove_handle", &ok);
    api.multi_perform = (CURLMcode (*)(CURLM *, int *))sym(lib, "curl_multi_perform", &ok);
    api.multi_poll = (CURLMcode (*)(CURLM *, struct curl_waitfd *, unsigned, int, int *))sym(lib, "curl_multi_poll", &ok);
    api.multi_wakeup = (CURLMcode (*)(CURLM *))sym(lib, "curl_multi_wakeup", &ok);
    api.multi_info_read = (CURLMsg * (*)(CURLM *, int *)) sym(lib, "curl_multi_info_read", &ok);
    api.multi_cleanup = (CURLMcode (*)(CURLM *))sym(lib, "curl_multi_cleanup", &ok);
    api.multi_strerror = (const char *(*)(CURLMcode))sym(lib, "curl_multi_strerror", &ok);
    api.easy_pause = (CURLcode (*)(CURL *, int))sym(lib, "curl_easy_pause", &ok);
    if (!ok) {
        failure = "libcurl lacks a function ksched uses (7.68 or later is needed)";
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
