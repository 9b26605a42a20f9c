#include "server/selfsigned.h"

#include "server/httpd_lazy.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(char **err, const ks_gnutls_api *g, int rc, const char *what) {
    if (err) {
        char buf[256];
        snprintf(buf, sizeof(buf), "making a self-signed certificate: %s: %s", what, g ? g->strerror(rc) : "");
        *err = ks_xstrdup(buf);
    }
    return -1;
}

#define TRY(call, what)                              \
    do {                                             \
        int rc_ = (call);                            \
        if (rc_ < 0) {                               \
            ret = fail(err, g, rc_, what);           \
            goto out;                                \
        }                                            \
    } while (0)

#define KEY_BITS GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1)

/* A positive, non-zero 63-bit serial, as client-go draws one. */
static void serial(const ks_gnutls_api *g, unsigned char out[8]) {
    do {
        g->rnd(GNUTLS_RND_NONCE, out, 8);
        out[0] &= 0x7f;
    } while (!(out[0] | out[1] | out[2] | out[3] | out[4] | out[5] | out[6] | out[7]));
}

static char *datum_str(const ks_gnutls_api *g, gnutls_datum_t *d) {
    char *s = ks_xstrndup((const char *)d->data, d->size);
    (*g->free)(d->data);
    d->data = NULL;
    return s;
}

int ks_selfsigned_make(const char *host, const char *const *ips, size_t nips, const char *const *dns,
                       size_t ndns, char **cert_pem, char **key_pem, char **err) {
    *cert_pem = *key_pem = NULL;
    if (err) *err = NULL;
    const char *why = NULL;
    const ks_gnutls_api *g = ks_gnutls(&why);
    if (!g) {
        if (err) *err = ks_xstrdup(why);
        return -1;
    }
    int ret = 0;
    gnutls_x509_privkey_t ca_key = NULL, key = NULL;
    gnutls_x509_crt_t ca = NULL, crt = NULL;
    gnutls_datum_t ca_pem = {0}, crt_pem = {0}, k_pem = {0};
    time_t now = time(NULL);
    time_t from = now - 3600; /* an hour early: clock skew */
    time_t to = from + 365 * 24 * 3600;
    unsigned char sn[8];
    char cn[512];

    /* ECDSA P-256 where kube-scheduler makes RSA-2048 keys: two RSA
     * keys took 0.5-1.0 s of a cold start here (load 20), P-256 keys a
     * millisecond, and every TLS client of the secure port takes either. */
    TRY(g->privkey_init(&ca_key), "key");
    TRY(g->privkey_generate(ca_key, GNUTLS_PK_ECDSA, KEY_BITS, 0), "generating the CA key");
    TRY(g->crt_init(&ca), "certificate");
    TRY(g->crt_set_version(ca, 3), "version");
    serial(g, sn);
    TRY(g->crt_set_serial(ca, sn, sizeof(sn)), "serial");
    TRY(g->crt_set_activation_time(ca, from), "validity");
    TRY(g->crt_set_expiration_time(ca, to), "validity");
    snprintf(cn, sizeof(cn), "%s-ca@%lld", host, (long long)now);
    TRY(g->crt_set_dn_by_oid(ca, GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn)), "subject");
    TRY(g->crt_set_key(ca, ca_key), "key");
    TRY(g->crt_set_basic_constraints(ca, 1, -1), "basic constraints");
    TRY(g->crt_set_key_usage(ca, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_CERT_SIGN), "key usage");
    TRY(g->crt_sign2(ca, ca, ca_key, GNUTLS_DIG_SHA256, 0), "signing the CA");

    TRY(g->privkey_init(&key), "key");
    TRY(g->privkey_generate(key, GNUTLS_PK_ECDSA, KEY_BITS, 0), "generating the serving key");
    TRY(g->crt_init(&crt), "certificate");
    TRY(g->crt_set_version(crt, 3), "version");
    serial(g, sn);
    TRY(g->crt_set_serial(crt, sn, sizeof(sn)), "serial");
    TRY(g->crt_set_activation_time(crt, from), "validity");
    TRY(g->crt_set_expiration_time(crt, to), "validity");
    snprintf(cn, sizeof(cn), "%s@%lld", host, (long long)now);
    TRY(g->crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn)), "subject");
    TRY(g->crt_set_key(crt, key), "key");
    TRY(g->crt_set_basic_constraints(crt, 0, -1), "basic constraints");
    TRY(g->crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE), "key usage");
    TRY(g->crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0), "extended key usage");
    /* The host itself (an IP or a name), then the alternates. */
    {
        unsigned char a[16];
        bool host_ip = inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
        if (!host_ip)
            TRY(g->crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, host, (unsigned)strlen(host), GNUTLS_FSAN_APPEND),
                "subject alternative name");
        const char *const *all[2] = {host_ip ? &host : NULL, ips};
        size_t counts[2] = {host_ip ? 1 : 0, nips};
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < counts[k]; i++) {
                const char *ip = all[k][i];
                unsigned size = 0;
                if (inet_pton(AF_INET, ip, a) == 1) size = 4;
                else if (inet_pton(AF_INET6, ip, a) == 1) size = 16;
                if (!size) continue;
                TRY(g->crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, a, size, GNUTLS_FSAN_APPEND),
                    "subject alternative name");
            }
        for (size_t i = 0; i < ndns; i++)
            TRY(g->crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, dns[i], (unsigned)strlen(dns[i]),
                                            GNUTLS_FSAN_APPEND),
                "subject alternative name");
    }
    TRY(g->crt_sign2(crt, ca, ca_key, GNUTLS_DIG_SHA256, 0), "signing the serving certificate");

    TRY(g->crt_export2(crt, GNUTLS_X509_FMT_PEM, &crt_pem), "export");
    TRY(g->crt_export2(ca, GNUTLS_X509_FMT_PEM, &ca_pem), "export");
    TRY(g->privkey_export2(key, GNUTLS_X509_FMT_PEM, &k_pem), "export");
    {
        char *a = datum_str(g, &crt_pem), *b = datum_str(g, &ca_pem);
        size_t la = strlen(a), lb = strlen(b);
        *cert_pem = ks_xmalloc(la + lb + 1);
        memcpy(*cert_pem, a, la);
        memcpy(*cert_pem + la, b, lb + 1);
        free(a);
        free(b);
        *key_pem = datum_str(g, &k_pem);
    }
out:
    if (crt_pem.data) (*g->free)(crt_pem.data);
    if (ca_pem.data) (*g->free)(ca_pem.data);
    if (k_pem.data) (*g->free)(k_pem.data);
    if (crt) g->crt_deinit(crt);
    if (ca) g->crt_deinit(ca);
    if (key) g->privkey_deinit(key);
    if (ca_key) g->privkey_deinit(ca_key);
    return ret;
}
