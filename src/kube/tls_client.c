#include "kube/tls_client.h"

#include "util/openssl_lazy.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ALPN: h2 first; http/1.1 so that a server without h2 still completes
 * the handshake (the client then falls back to libcurl). */
static const unsigned char alpn[] = "\x02h2\x08http/1.1";

static char *ssl_errors(const ks_openssl_api *o, const char *what) {
    unsigned long e = o->ERR_get_error();
    char buf[256];
    if (!e) return ks_xstrdup(what);
    o->ERR_error_string_n(e, buf, sizeof(buf));
    o->ERR_clear_error();
    return ks_xasprintf("%s: %s", what, buf);
}

/* Every certificate of a PEM bundle into the store; false when none. */
static bool load_ca_pem(const ks_openssl_api *o, X509_STORE *st, const char *pem, size_t len) {
    BIO *b = o->BIO_new_mem_buf(pem, (int)len);
    if (!b) return false;
    STACK_OF(X509_INFO) *infos = o->PEM_X509_INFO_read_bio(b, NULL, NULL, NULL);
    o->BIO_free(b);
    if (!infos) return false;
    int n = 0;
    for (int i = 0; i < o->OPENSSL_sk_num((const OPENSSL_STACK *)infos); i++) {
        X509_INFO *in = o->OPENSSL_sk_value((const OPENSSL_STACK *)infos, i);
        if (in->x509 && o->X509_STORE_add_cert(st, in->x509) == 1) n++;
        o->X509_INFO_free(in);
    }
    o->OPENSSL_sk_free((OPENSSL_STACK *)infos);
    return n > 0;
}

void ks_tls_client_init(ks_tls_client *t, const ks_kube_config *cfg, const char *host) {
    memset(t, 0, sizeof(*t));
    t->cfg = cfg;
    t->name = ks_xstrdup(cfg->tls_server_name && *cfg->tls_server_name ? cfg->tls_server_name : host);
    unsigned char addr[16];
    t->name_is_ip = inet_pton(AF_INET, t->name, addr) == 1 || inet_pton(AF_INET6, t->name, addr) == 1;
    const char *why = NULL;
    const ks_openssl_api *o = t->o = ks_openssl(&why);
    if (!o) {
        t->error = ks_xstrdup(why);
        return;
    }
    o->ERR_clear_error();
    SSL_CTX *ctx = o->SSL_CTX_new(o->TLS_client_method());
    if (!ctx) {
        t->error = ssl_errors(o, "cannot make a TLS context");
        return;
    }
    o->SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    o->SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
    /* Read ahead into a 64 KiB buffer: one read(2) takes every record
     * that has arrived. Without it OpenSSL reads each record's header and
     * body apart, and SchedulingBasic's I/O thread made 6.6 reads per
     * pod (perf record -e raw_syscalls:sys_enter). */
    o->SSL_CTX_ctrl(ctx, SSL_CTRL_SET_READ_AHEAD, 1, NULL);
    o->SSL_CTX_set_default_read_buffer_len(ctx, 65536);
    o->SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1);
    if (!cfg->insecure) {
        o->SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        bool ok;
        if (cfg->ca_data) {
            ok = load_ca_pem(o, o->SSL_CTX_get_cert_store(ctx), cfg->ca_data, cfg->ca_len);
            if (!ok) t->error = ssl_errors(o, "error setting certificate verify locations: certificate-authority-data has no certificate");
        } else if (cfg->ca_file) {
            ok = o->SSL_CTX_load_verify_locations(ctx, cfg->ca_file, NULL) == 1;
            if (!ok) {
                char *what = ks_xasprintf("error setting certificate verify locations: CAfile: %s", cfg->ca_file);
                t->error = ssl_errors(o, what);
                free(what);
            }
        } else {
            ok = o->SSL_CTX_set_default_verify_paths(ctx) == 1;
            if (!ok) t->error = ssl_errors(o, "error setting the system's certificate verify locations");
        }
        if (!ok) {
            o->SSL_CTX_free(ctx);
            return;
        }
    }
    t->ctx = ctx;
}

void ks_tls_client_destroy(ks_tls_client *t) {
    if (t->ctx) t->o->SSL_CTX_free(t->ctx);
    free(t->error);
    free(t->name);
    memset(t, 0, sizeof(*t));
}

/* A PEM certificate chain and key from memory onto ssl. */
static bool use_pem(const ks_openssl_api *o, SSL *ssl, const char *cert, size_t cert_len, const char *key, size_t key_len, char **err) {
    BIO *b = o->BIO_new_mem_buf(cert, (int)cert_len);
    X509 *x = b ? o->PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    bool ok = x && o->SSL_use_certificate(ssl, x) == 1;
    o->X509_free(x);
    /* the rest of the chain */
    X509 *ca;
    while (ok && (ca = o->PEM_read_bio_X509(b, NULL, NULL, NULL)))
        if (o->SSL_ctrl(ssl, SSL_CTRL_CHAIN_CERT, 0, ca) != 1) o->X509_free(ca);
    o->ERR_clear_error(); /* the end of the bundle */
    o->BIO_free(b);
    if (!ok) {
        *err = ssl_errors(o, "could not load PEM client certificate from memory");
        return false;
    }
    b = o->BIO_new_mem_buf(key, (int)key_len);
    EVP_PKEY *k = b ? o->PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    o->BIO_free(b);
    ok = k && o->SSL_use_PrivateKey(ssl, k) == 1 && o->SSL_check_private_key(ssl) == 1;
    o->EVP_PKEY_free(k);
    if (!ok) *err = ssl_errors(o, "unable to set private key from memory");
    return ok;
}

SSL *ks_tls_client_new_ssl(ks_tls_client *t, int fd, const char *cert, size_t cert_len, const char *key,
                           size_t key_len, char **err) {
    if (!t->ctx) {
        *err = ks_xstrdup(t->error ? t->error : "no TLS context");
        return NULL;
    }
    const ks_openssl_api *o = t->o;
    o->ERR_clear_error();
    SSL *ssl = o->SSL_new(t->ctx);
    if (!ssl) {
        *err = ssl_errors(o, "SSL_new failed");
        return NULL;
    }
    o->SSL_set_fd(ssl, fd);
    /* SNI as libcurl: a name, never an IP address */
    if (!t->name_is_ip) o->SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, t->name);
    if (!t->cfg->insecure) {
        if (t->name_is_ip) o->X509_VERIFY_PARAM_set1_ip_asc(o->SSL_get0_param(ssl), t->name);
        else o->SSL_set1_host(ssl, t->name);
    }
    const ks_kube_config *cfg = t->cfg;
    bool ok = true;
    if (cert) {
        ok = use_pem(o, ssl, cert, cert_len, key, key_len, err);
    } else if (cfg->cert_data) {
        ok = use_pem(o, ssl, cfg->cert_data, cfg->cert_len, cfg->key_data, cfg->key_len, err);
    } else if (cfg->cert_file) {
        /* files are read at each handshake: rotated certificates are picked up */
        if (o->SSL_use_certificate_chain_file(ssl, cfg->cert_file) != 1) {
            char *what = ks_xasprintf("could not load PEM client certificate from %s", cfg->cert_file);
            *err = ssl_errors(o, what);
            free(what);
            ok = false;
        } else if (o->SSL_use_PrivateKey_file(ssl, cfg->key_file ? cfg->key_file : cfg->cert_file, SSL_FILETYPE_PEM) != 1 ||
                   o->SSL_check_private_key(ssl) != 1) {
            char *what = ks_xasprintf("unable to set private key file: '%s' type PEM",
                                      cfg->key_file ? cfg->key_file : cfg->cert_file);
            *err = ssl_errors(o, what);
            free(what);
            ok = false;
        }
    }
    if (!ok) {
        o->SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

char *ks_tls_client_handshake_error(ks_tls_client *t, SSL *ssl, int ssl_error) {
    const ks_openssl_api *o = t->o;
    long v = o->SSL_get_verify_result(ssl);
    if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        o->ERR_clear_error();
        return ks_xasprintf("SSL: no alternative certificate subject name matches target host name '%s'", t->name);
    }
    if (v != X509_V_OK) {
        o->ERR_clear_error();
        return ks_xasprintf("SSL certificate problem: %s", o->X509_verify_cert_error_string(v));
    }
    if (ssl_error == SSL_ERROR_SYSCALL && !o->ERR_peek_error())
        return ks_xasprintf("TLS connect error: %s", errno ? strerror(errno) : "the connection was closed");
    return ssl_errors(o, "TLS connect error");
}
