/* TLS for the API server client's own HTTP/2 transport, on OpenSSL, as the
 * kubeconfig says: the CA (file or data; the system's when neither), the
 * client certificate (files, read again at each handshake, or PEM data;
 * an exec plugin's PEM wins), insecure-skip-tls-verify, tls-server-name
 * (the name verified and sent as SNI), a host name or an IP address
 * verified against the certificate, TLS 1.2 or later, ALPN h2. Error
 * texts say what libcurl's said. OpenSSL is loaded on first use
 * (util/openssl_lazy.h). */
#ifndef KS_KUBE_TLS_CLIENT_H
#define KS_KUBE_TLS_CLIENT_H

#include "kube/kubeconfig.h"

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ks_tls_client {
    SSL_CTX *ctx;        /* NULL when the CA could not be loaded: error says why */
    char *error;
    char *name;          /* what is verified (tls-server-name or the URL's host) */
    bool name_is_ip;
    const ks_kube_config *cfg;
    const struct ks_openssl_api *o; /* OpenSSL, loaded on first use */
} ks_tls_client;

/* host: the URL's host, without brackets. */
void ks_tls_client_init(ks_tls_client *t, const ks_kube_config *cfg, const char *host);
void ks_tls_client_destroy(ks_tls_client *t);

/* A new connection's SSL on fd, client side, its client certificate
 * cert/key PEM when given (an exec plugin's), else the kubeconfig's.
 * NULL with *err when the certificate or key cannot be loaded. */
SSL *ks_tls_client_new_ssl(ks_tls_client *t, int fd, const char *cert, size_t cert_len, const char *key,
                           size_t key_len, char **err);

/* Why the handshake on ssl failed (malloc'd), from its verify result and
 * the thread's OpenSSL error queue; ret and the SSL_get_error code are
 * SSL_connect's. */
char *ks_tls_client_handshake_error(ks_tls_client *t, SSL *ssl, int ssl_error);

#endif
