#include "server/httpd_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static void *sym(void *lib, const char *name, bool *ok) {
    void *p = dlsym(lib, name);
    if (!p) *ok = false;
    return p;
}

/* Function pointers from dlsym: through a union, not a cast from void *. */
#define LOAD(api, field, lib, name, ok)                  \
    do {                                                 \
        void *p_ = sym(lib, name, ok);                   \
        memcpy(&(api).field, &p_, sizeof(p_));           \
    } while (0)

static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static ks_mhd_api mhd;
static const ks_mhd_api *mhd_loaded;
static const char *mhd_failure = "libmicrohttpd not loaded";

static void load_mhd(void) {
    /* The runtime package's soname first; the development symlink when
     * only that is installed. */
    void *lib = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libmicrohttpd.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        mhd_failure = "cannot load libmicrohttpd (libmicrohttpd.so.12)";
        return;
    }
    bool ok = true;
    LOAD(mhd, start_daemon, lib, "MHD_start_daemon", &ok);
    LOAD(mhd, stop_daemon, lib, "MHD_stop_daemon", &ok);
    LOAD(mhd, get_daemon_info, lib, "MHD_get_daemon_info", &ok);
    LOAD(mhd, create_response_from_buffer, lib, "MHD_create_response_from_buffer", &ok);
    LOAD(mhd, add_response_header, lib, "MHD_add_response_header", &ok);
    LOAD(mhd, queue_response, lib, "MHD_queue_response", &ok);
    LOAD(mhd, destroy_response, lib, "MHD_destroy_response", &ok);
    LOAD(mhd, lookup_connection_value, lib, "MHD_lookup_connection_value", &ok);
    LOAD(mhd, get_connection_values, lib, "MHD_get_connection_values", &ok);
    if (!ok) {
        mhd_failure = "libmicrohttpd lacks a function ksched uses";
        return;
    }
    mhd_loaded = &mhd;
}

const ks_mhd_api *ks_mhd(const char **why) {
    pthread_once(&mhd_once, load_mhd);
    if (!mhd_loaded && why) *why = mhd_failure;
    return mhd_loaded;
}

static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static ks_gnutls_api tls;
static const ks_gnutls_api *tls_loaded;
static const char *tls_failure = "GnuTLS not loaded";

static void load_tls(void) {
    void *lib = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libgnutls.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        tls_failure = "cannot load GnuTLS (libgnutls.so.30)";
        return;
    }
    bool ok = true;
    LOAD(tls, privkey_init, lib, "gnutls_x509_privkey_init", &ok);
    LOAD(tls, privkey_generate, lib, "gnutls_x509_privkey_generate", &ok);
    LOAD(tls, privkey_export2, lib, "gnutls_x509_privkey_export2", &ok);
    LOAD(tls, privkey_deinit, lib, "gnutls_x509_privkey_deinit", &ok);
    LOAD(tls, crt_init, lib, "gnutls_x509_crt_init", &ok);
    LOAD(tls, crt_set_version, lib, "gnutls_x509_crt_set_version", &ok);
    LOAD(tls, crt_set_serial, lib, "gnutls_x509_crt_set_serial", &ok);
    LOAD(tls, crt_set_activation_time, lib, "gnutls_x509_crt_set_activation_time", &ok);
    LOAD(tls, crt_set_expiration_time, lib, "gnutls_x509_crt_set_expiration_time", &ok);
    LOAD(tls, crt_set_dn_by_oid, lib, "gnutls_x509_crt_set_dn_by_oid", &ok);
    LOAD(tls, crt_set_issuer_dn_by_oid, lib, "gnutls_x509_crt_set_issuer_dn_by_oid", &ok);
    LOAD(tls, crt_set_key, lib, "gnutls_x509_crt_set_key", &ok);
    LOAD(tls, crt_set_basic_constraints, lib, "gnutls_x509_crt_set_basic_constraints", &ok);
    LOAD(tls, crt_set_key_usage, lib, "gnutls_x509_crt_set_key_usage", &ok);
    LOAD(tls, crt_set_key_purpose_oid, lib, "gnutls_x509_crt_set_key_purpose_oid", &ok);
    LOAD(tls, crt_set_subject_alt_name, lib, "gnutls_x509_crt_set_subject_alt_name", &ok);
    LOAD(tls, crt_sign2, lib, "gnutls_x509_crt_sign2", &ok);
    LOAD(tls, crt_export2, lib, "gnutls_x509_crt_export2", &ok);
    LOAD(tls, crt_deinit, lib, "gnutls_x509_crt_deinit", &ok);
    LOAD(tls, rnd, lib, "gnutls_rnd", &ok);
    LOAD(tls, hash_fast, lib, "gnutls_hash_fast", &ok);
    LOAD(tls, strerror, lib, "gnutls_strerror", &ok);
    tls.free = (gnutls_free_function *)sym(lib, "gnutls_free", &ok);
    if (!ok) {
        tls_failure = "GnuTLS lacks a function ksched uses";
        return;
    }
    tls_loaded = &tls;
}

const ks_gnutls_api *ks_gnutls(const char **why) {
    pthread_once(&tls_once, load_tls);
    if (!tls_loaded && why) *why = tls_failure;
    return tls_loaded;
}
