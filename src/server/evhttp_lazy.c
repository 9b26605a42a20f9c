#include "server/evhttp_lazy.h"

#include "util/dl.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ks_evhttp_api api;
static const ks_evhttp_api *loaded;
static const char *failure = "libevent not loaded";

/* The three libraries share one libevent_core (libevent-2.1.so.7 would
 * bring a second copy of it, with locks of its own). */
static const char *const libs[][2] = {
    {"libevent_extra-2.1.so.7", "libevent_extra.so"},
    {"libevent_openssl-2.1.so.7", "libevent_openssl.so"},
    {"libevent_pthreads-2.1.so.7", "libevent_pthreads.so"},
};

static void load(void) {
    void *h[3];
    for (size_t i = 0; i < 3; i++) {
        h[i] = ks_dl_open(libs[i][0], libs[i][1]);
        if (!h[i]) {
            failure = "cannot load libevent (libevent_extra-2.1.so.7, libevent_openssl-2.1.so.7, "
                      "libevent_pthreads-2.1.so.7)";
            return;
        }
    }
    bool ok = true;
    /* Each handle also finds libevent_core's functions. */
#define KS_EVHTTP_LOAD(name) ok &= ks_dl_sym(h, 3, #name, &api.name, sizeof(api.name));
    KS_EVHTTP_FUNCS(KS_EVHTTP_LOAD)
#undef KS_EVHTTP_LOAD
    if (!ok) {
        failure = "libevent lacks a function ksched uses (libevent 2.1 is needed)";
        return;
    }
    /* Workers hand their replies to the event loop (event_base_once from
     * another thread): the bases must lock. */
    if (api.evthread_use_pthreads() != 0) {
        failure = "libevent's pthreads locking failed";
        return;
    }
    loaded = &api;
}

const ks_evhttp_api *ks_evhttp(const char **why) {
    pthread_once(&once, load);
    if (!loaded && why) *why = failure;
    return loaded;
}
