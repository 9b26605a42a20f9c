/* Standard base64 (RFC 4648 alphabet with '+' and '/'). */
#ifndef KS_BASE64_H
#define KS_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* The length of n bytes encoded, with padding, without the NUL. */
static inline size_t ks_base64_encoded_len(size_t n) { return (n + 2) / 3 * 4; }
/* Encode s[0..n) with padding into out (room for
 * ks_base64_encoded_len(n) + 1 bytes), NUL-terminated. */
void ks_base64_encode(const void *s, size_t n, char *out);

/* The 6-bit value of an alphabet symbol, -1 for anything else. */
int ks_base64_value(unsigned char c);

/* Decode s[0..n) into out (room for n / 4 * 3 + 3 bytes), skipping '='
 * and line breaks and spaces; *len gets the byte count. False at the
 * first other character that is not in the alphabet. */
bool ks_base64_decode(const char *s, size_t n, unsigned char *out, size_t *len);

#endif
