/* libmicrohttpd and GnuTLS, loaded on first use (as util/curl_lazy.h
 * loads libcurl): only `ksched run` serves HTTPS, and a simulation should
 * not map a TLS stack it never uses. */
#ifndef KS_HTTPD_LAZY_H
#define KS_HTTPD_LAZY_H

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

typedef struct ks_mhd_api {
    struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, ...);
    void (*stop_daemon)(struct MHD_Daemon *d);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d, enum MHD_DaemonInfoType t, ...);
    struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode);
    enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header, const char *content);
    enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status, struct MHD_Response *r);
    void (*destroy_response)(struct MHD_Response *r);
    const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key);
    int (*get_connection_values)(struct MHD_Connection *c, enum MHD_ValueKind kind, MHD_KeyValueIterator it,
                                 void *cls);
} ks_mhd_api;

typedef struct ks_gnutls_api {
    int (*privkey_init)(gnutls_x509_privkey_t *key);
    int (*privkey_generate)(gnutls_x509_privkey_t key, gnutls_pk_algorithm_t algo, unsigned int bits,
                            unsigned int flags);
    int (*privkey_export2)(gnutls_x509_privkey_t key, gnutls_x509_crt_fmt_t format, gnutls_datum_t *out);
    void (*privkey_deinit)(gnutls_x509_privkey_t key);
    int (*crt_init)(gnutls_x509_crt_t *crt);
    int (*crt_set_version)(gnutls_x509_crt_t crt, unsigned int version);
    int (*crt_set_serial)(gnutls_x509_crt_t crt, const void *serial, size_t size);
    int (*crt_set_activation_time)(gnutls_x509_crt_t crt, time_t t);
    int (*crt_set_expiration_time)(gnutls_x509_crt_t crt, time_t t);
    int (*crt_set_dn_by_oid)(gnutls_x509_crt_t crt, const char *oid, unsigned int raw_flag, const void *name,
                             unsigned int size);
    int (*crt_set_issuer_dn_by_oid)(gnutls_x509_crt_t crt, const char *oid, unsigned int raw_flag, const void *name,
                                    unsigned int size);
    int (*crt_set_key)(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key);
    int (*crt_set_basic_constraints)(gnutls_x509_crt_t crt, unsigned int ca, int path_len);
    int (*crt_set_key_usage)(gnutls_x509_crt_t crt, unsigned int usage);
    int (*crt_set_key_purpose_oid)(gnutls_x509_crt_t crt, const void *oid, unsigned int critical);
    int (*crt_set_subject_alt_name)(gnutls_x509_crt_t crt, gnutls_x509_subject_alt_name_t type, const void *data,
                                    unsigned int size, unsigned int flags);
    int (*crt_sign2)(gnutls_x509_crt_t crt, gnutls_x509_crt_t issuer, gnutls_x509_privkey_t key,
                     gnutls_digest_algorithm_t dig, unsigned int flags);
    int (*crt_export2)(gnutls_x509_crt_t crt, gnutls_x509_crt_fmt_t format, gnutls_datum_t *out);
    void (*crt_deinit)(gnutls_x509_crt_t crt);
    int (*rnd)(gnutls_rnd_level_t level, void *data, size_t len);
    int (*hash_fast)(gnutls_digest_algorithm_t algo, const void *text, size_t len, void *digest);
    const char *(*strerror)(int error);
    gnutls_free_function *free; /* the library's gnutls_free variable */
} ks_gnutls_api;

/* The loaded APIs, or NULL when the library cannot be loaded (*why, static
 * text, says why). Thread-safe. */
const ks_mhd_api *ks_mhd(const char **why);
const ks_gnutls_api *ks_gnutls(const char **why);

#endif
