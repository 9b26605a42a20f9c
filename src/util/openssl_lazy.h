/* OpenSSL (libssl.so.3 and libcrypto.so.3), loaded on first use as
 * util/curl_lazy.h loads libcurl: only `ksched run` speaks TLS, and a
 * simulation should not map a TLS stack (libcrypto alone is 1.4 MiB of
 * resident memory once mapped, 3.4 MiB once initialised).
 *
 * One field per function, named and typed as OpenSSL declares it, so
 * that a call reads `o->SSL_CTX_new(o->TLS_server_method())`. Macros of
 * OpenSSL's headers (SSL_CTX_set_min_proto_version, BIO_get_mem_data,
 * ...) are not functions: call what they expand to (SSL_CTX_ctrl,
 * BIO_ctrl). To use another function, add its name to KS_OPENSSL_FUNCS. */
#ifndef KS_OPENSSL_LAZY_H
#define KS_OPENSSL_LAZY_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define KS_OPENSSL_FUNCS(X)                                                                                           \
    X(OPENSSL_init_ssl)                                                                                              \
    X(ERR_get_error)                                                                                                 \
    X(ERR_error_string_n)                                                                                            \
    X(ERR_clear_error)                                                                                               \
    X(BIO_new_mem_buf)                                                                                               \
    X(BIO_new)                                                                                                       \
    X(BIO_s_mem)                                                                                                     \
    X(BIO_ctrl)                                                                                                      \
    X(BIO_free)                                                                                                      \
    X(PEM_read_bio_X509)                                                                                             \
    X(PEM_read_bio_PrivateKey)                                                                                       \
    X(PEM_write_bio_X509)                                                                                            \
    X(PEM_write_bio_PrivateKey_traditional)                                                                          \
    X(EVP_PKEY_Q_keygen)                                                                                             \
    X(EVP_PKEY_free)                                                                                                 \
    X(EVP_Digest)                                                                                                    \
    X(EVP_sha256)                                                                                                    \
    X(RAND_bytes)                                                                                                    \
    X(X509_new)                                                                                                      \
    X(X509_free)                                                                                                     \
    X(X509_set_version)                                                                                              \
    X(X509_get_serialNumber)                                                                                         \
    X(ASN1_INTEGER_set_uint64)                                                                                       \
    X(X509_getm_notBefore)                                                                                           \
    X(X509_getm_notAfter)                                                                                            \
    X(X509_time_adj_ex)                                                                                              \
    X(X509_get_subject_name)                                                                                         \
    X(X509_NAME_add_entry_by_txt)                                                                                    \
    X(X509_set_issuer_name)                                                                                          \
    X(X509_set_pubkey)                                                                                               \
    X(X509V3_set_ctx)                                                                                                \
    X(X509V3_EXT_conf_nid)                                                                                           \
    X(X509_add_ext)                                                                                                  \
    X(X509_EXTENSION_free)                                                                                           \
    X(X509_sign)                                                                                                     \
    X(TLS_server_method)                                                                                             \
    X(SSL_CTX_new)                                                                                                   \
    X(SSL_CTX_free)                                                                                                  \
    X(SSL_CTX_ctrl)                                                                                                  \
    X(SSL_CTX_set_options)                                                                                           \
    X(SSL_CTX_use_certificate)                                                                                       \
    X(SSL_CTX_use_PrivateKey)                                                                                        \
    X(SSL_CTX_check_private_key)                                                                                     \
    X(SSL_CTX_set_alpn_select_cb)                                                                                    \
    X(SSL_new)                                                                                                       \
    X(SSL_free)

/* The API server client's (kube/tls_client.c, kube/h2_transport.c). */
#define KS_OPENSSL_CLIENT_FUNCS(X) \
    X(ERR_peek_error) \
    X(SSL_ctrl) \
    X(OPENSSL_sk_num) \
    X(OPENSSL_sk_value) \
    X(OPENSSL_sk_free) \
    X(X509_INFO_free) \
    X(PEM_X509_INFO_read_bio) \
    X(X509_STORE_add_cert) \
    X(TLS_client_method) \
    X(SSL_CTX_set_alpn_protos) \
    X(SSL_CTX_set_verify) \
    X(SSL_CTX_get_cert_store) \
    X(SSL_CTX_load_verify_locations) \
    X(SSL_CTX_set_default_verify_paths) \
    X(SSL_use_certificate) \
    X(SSL_use_PrivateKey) \
    X(SSL_check_private_key) \
    X(SSL_set_fd) \
    X(X509_VERIFY_PARAM_set1_ip_asc) \
    X(SSL_get0_param) \
    X(SSL_set1_host) \
    X(SSL_use_certificate_chain_file) \
    X(SSL_use_PrivateKey_file) \
    X(SSL_get_verify_result) \
    X(X509_verify_cert_error_string) \
    X(SSL_connect) \
    X(SSL_get_error) \
    X(SSL_read) \
    X(SSL_write) \
    X(SSL_get0_alpn_selected) \
    X(SSL_has_pending) \
    X(SSL_CTX_set_default_read_buffer_len)

typedef struct ks_openssl_api {
#define KS_OPENSSL_FIELD(name) __typeof__(&name) name;
    KS_OPENSSL_FUNCS(KS_OPENSSL_FIELD)
    KS_OPENSSL_CLIENT_FUNCS(KS_OPENSSL_FIELD)
#undef KS_OPENSSL_FIELD
} ks_openssl_api;

/* The loaded API (OpenSSL initialised), or NULL when it cannot be loaded;
 * *why (static text) says why. Thread-safe. */
const ks_openssl_api *ks_openssl(const char **why);

/* OpenSSL's queued errors as one line ("error:...; error:..."), the queue
 * emptied; "unknown error" when it is empty. buf of n bytes. */
const char *ks_openssl_errors(const ks_openssl_api *o, char *buf, size_t n);

#endif
