#include "util/openssl_lazy.h"

#include "util/dl.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ks_openssl_api api;
static const ks_openssl_api *loaded;
static const char *failure = "OpenSSL not loaded";

static void load(void) {
    /* libssl's handle also finds libcrypto's functions (its dependency).
     * The runtime package's soname first; the development symlink when
     * only that is installed. */
    void *lib = ks_dl_open("libssl.so.3", "libssl.so");
    if (!lib) {
        failure = "cannot load OpenSSL (libssl.so.3)";
        return;
    }
    bool ok = true;
#define KS_OPENSSL_LOAD(name) ok &= ks_dl_sym(&lib, 1, #name, &api.name, sizeof(api.name));
    KS_OPENSSL_FUNCS(KS_OPENSSL_LOAD)
    KS_OPENSSL_CLIENT_FUNCS(KS_OPENSSL_LOAD)
#undef KS_OPENSSL_LOAD
    if (!ok) {
        failure = "OpenSSL lacks a function ksched uses (OpenSSL 3 is needed)";
        return;
    }
    /* Error strings are loaded (messages name the failure); the
     * configuration file is read, as any OpenSSL program reads it. */
    if (!api.OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL)) {
        failure = "OpenSSL failed to initialise";
        return;
    }
    loaded = &api;
}

const ks_openssl_api *ks_openssl(const char **why) {
    pthread_once(&once, load);
    if (!loaded && why) *why = failure;
    return loaded;
}

const char *ks_openssl_errors(const ks_openssl_api *o, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    unsigned long e;
    while ((e = o->ERR_get_error()) != 0 && len + 8 < n) {
        char one[256];
        o->ERR_error_string_n(e, one, sizeof(one));
        int w = snprintf(buf + len, n - len, "%s%s", len ? "; " : "", one);
        if (w < 0) break;
        len += (size_t)w < n - len ? (size_t)w : n - len - 1;
    }
    o->ERR_clear_error();
    if (!buf[0]) snprintf(buf, n, "unknown error");
    return buf;
}
