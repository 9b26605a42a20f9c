#include "server/selfsigned.h"

#include "util/openssl_lazy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(char **err, const ks_openssl_api *o, const char *what) {
    if (err) {
        char why[512], buf[640];
        snprintf(buf, sizeof(buf), "making a self-signed certificate: %s: %s", what,
                 o ? ks_openssl_errors(o, why, sizeof(why)) : "");
        *err = ks_xstrdup(buf);
    }
    return -1;
}

#define TRY(ok, what)                                \
    do {                                             \
        if (!(ok)) {                                 \
            ret = fail(err, o, what);                \
            goto out;                                \
        }                                            \
    } while (0)

/* A positive, non-zero 63-bit serial, as client-go draws one. */
static bool set_serial(const ks_openssl_api *o, X509 *x) {
    uint64_t v = 0;
    while (v == 0) {
        unsigned char b[8];
        if (o->RAND_bytes(b, sizeof(b)) != 1) return false;
        for (int i = 0; i < 8; i++) v = v << 8 | b[i];
        v &= INT64_MAX;
    }
    return o->ASN1_INTEGER_set_uint64(o->X509_get_serialNumber(x), v) == 1;
}

/* One X.509v3 extension in OpenSSL's configuration syntax
 * ("critical,CA:TRUE"). */
static bool add_ext(const ks_openssl_api *o, X509 *issuer, X509 *x, int nid, const char *value) {
    X509V3_CTX ctx;
    o->X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *e = o->X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!e) return false;
    bool ok = o->X509_add_ext(x, e, -1) == 1;
    o->X509_EXTENSION_free(e);
    return ok;
}

/* A version 3 certificate for key, named cn, valid from..to, its
 * extensions from issuer's view (issuer NULL: itself). */
static X509 *new_cert(const ks_openssl_api *o, EVP_PKEY *key, const char *cn, time_t from, time_t to) {
    X509 *x = o->X509_new();
    if (!x) return NULL;
    if (o->X509_set_version(x, X509_VERSION_3) != 1 || !set_serial(o, x) ||
        !o->X509_time_adj_ex(o->X509_getm_notBefore(x), 0, 0, &from) ||
        !o->X509_time_adj_ex(o->X509_getm_notAfter(x), 0, 0, &to) ||
        o->X509_NAME_add_entry_by_txt(o->X509_get_subject_name(x), "CN", MBSTRING_UTF8, (const unsigned char *)cn,
                                      -1, -1, 0) != 1 ||
        o->X509_set_pubkey(x, key) != 1) {
        o->X509_free(x);
        return NULL;
    }
    return x;
}

/* PEM text of what write wrote to a memory BIO, appended to out. */
static bool take_bio(const ks_openssl_api *o, BIO *b, ks_strbuf *out) {
    char *p = NULL;
    long n = o->BIO_ctrl(b, BIO_CTRL_INFO, 0, (char *)&p);
    if (n <= 0 || !p) return false;
    ks_sb_putn(out, p, (size_t)n);
    return true;
}

int ks_selfsigned_make(const char *host, const char *const *ips, size_t nips, const char *const *dns,
                       size_t ndns, char **cert_pem, char **key_pem, char **err) {
    *cert_pem = *key_pem = NULL;
    if (err) *err = NULL;
    const char *why = NULL;
    const ks_openssl_api *o = ks_openssl(&why);
    if (!o) {
        if (err) *err = ks_xstrdup(why);
        return -1;
    }
    int ret = 0;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    X509 *ca = NULL, *crt = NULL;
    BIO *cb = NULL, *kb = NULL;
    ks_strbuf san, certs, keys;
    ks_sb_init(&san);
    ks_sb_init(&certs);
    ks_sb_init(&keys);
    time_t now = time(NULL);
    time_t from = now - 3600; /* an hour early: clock skew */
    time_t to = from + 365 * 24 * 3600;
    char cn[512];

    /* ECDSA P-256 where kube-scheduler makes RSA-2048 keys: two RSA
     * keys took 0.5-1.0 s of a cold start here (load 20), P-256 keys a
     * millisecond, and every TLS client of the secure port takes either. */
    TRY(ca_key = o->EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), "generating the CA key");
    snprintf(cn, sizeof(cn), "%s-ca@%lld", host, (long long)now);
    TRY(ca = new_cert(o, ca_key, cn, from, to), "the CA certificate");
    TRY(o->X509_set_issuer_name(ca, o->X509_get_subject_name(ca)) == 1, "issuer");
    TRY(add_ext(o, ca, ca, NID_basic_constraints, "critical,CA:TRUE"), "basic constraints");
    TRY(add_ext(o, ca, ca, NID_key_usage, "critical,digitalSignature,keyCertSign"), "key usage");
    TRY(add_ext(o, ca, ca, NID_subject_key_identifier, "hash"), "subject key identifier");
    TRY(o->X509_sign(ca, ca_key, o->EVP_sha256()) > 0, "signing the CA");

    TRY(key = o->EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), "generating the serving key");
    snprintf(cn, sizeof(cn), "%s@%lld", host, (long long)now);
    TRY(crt = new_cert(o, key, cn, from, to), "the serving certificate");
    TRY(o->X509_set_issuer_name(crt, o->X509_get_subject_name(ca)) == 1, "issuer");
    TRY(add_ext(o, ca, crt, NID_basic_constraints, "critical,CA:FALSE"), "basic constraints");
    TRY(add_ext(o, ca, crt, NID_key_usage, "critical,digitalSignature"), "key usage");
    TRY(add_ext(o, ca, crt, NID_ext_key_usage, "serverAuth"), "extended key usage");
    TRY(add_ext(o, ca, crt, NID_authority_key_identifier, "keyid:always"), "authority key identifier");
    /* The host itself (an IP or a name), then the alternates. */
    {
        unsigned char a[16];
        bool host_ip = inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
        ks_sb_printf(&san, "%s:%s", host_ip ? "IP" : "DNS", host);
        for (size_t i = 0; i < nips; i++)
            if (inet_pton(AF_INET, ips[i], a) == 1 || inet_pton(AF_INET6, ips[i], a) == 1)
                ks_sb_printf(&san, ",IP:%s", ips[i]);
        for (size_t i = 0; i < ndns; i++) ks_sb_printf(&san, ",DNS:%s", dns[i]);
    }
    TRY(add_ext(o, ca, crt, NID_subject_alt_name, ks_sb_str(&san)), "subject alternative name");
    TRY(o->X509_sign(crt, ca_key, o->EVP_sha256()) > 0, "signing the serving certificate");

    /* The serving certificate then the CA; the key as client-go writes
     * an ECDSA one ("EC PRIVATE KEY"). */
    TRY(cb = o->BIO_new(o->BIO_s_mem()), "export");
    TRY(o->PEM_write_bio_X509(cb, crt) == 1 && o->PEM_write_bio_X509(cb, ca) == 1, "export");
    TRY(take_bio(o, cb, &certs), "export");
    TRY(kb = o->BIO_new(o->BIO_s_mem()), "export");
    TRY(o->PEM_write_bio_PrivateKey_traditional(kb, key, NULL, NULL, 0, NULL, NULL) == 1, "export");
    TRY(take_bio(o, kb, &keys), "export");
    *cert_pem = ks_sb_take(&certs);
    *key_pem = ks_sb_take(&keys);
out:
    ks_sb_free(&san);
    ks_sb_free(&certs);
    ks_sb_free(&keys);
    if (cb) o->BIO_free(cb);
    if (kb) o->BIO_free(kb);
    if (crt) o->X509_free(crt);
    if (ca) o->X509_free(ca);
    o->EVP_PKEY_free(key);
    o->EVP_PKEY_free(ca_key);
    return ret;
}
