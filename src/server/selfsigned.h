/* A serving certificate made in memory, as kube-scheduler makes one when
 * given no --tls-cert-file (client-go's GenerateSelfSignedCertKey): a CA
 * "<host>-ca@<unix time>" that signs a serving certificate "<host>@<unix
 * time>" for host plus the alternate IPs and DNS names, ECDSA P-256 keys
 * (made with OpenSSL; upstream's are RSA 2048), valid from an hour ago for
 * a year. */
#ifndef KS_SELFSIGNED_H
#define KS_SELFSIGNED_H

#include <stddef.h>

/* cert_pem: the serving certificate then the CA; key_pem: the serving key
 * ("EC PRIVATE KEY"). Both malloc'd. Returns 0, or -1 with *err (malloc'd). */
int ks_selfsigned_make(const char *host, const char *const *ips, size_t nips, const char *const *dns,
                       size_t ndns, char **cert_pem, char **key_pem, char **err);

#endif
