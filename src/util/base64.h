/* Standard base64 (RFC 4648 alphabet with '+' and '/'). */
#ifndef KS_BASE64_H
#define KS_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* The 6-bit value of an alphabet symbol, -1 for anything else. */
int ks_base64_value(unsigned char c);

/* Decode s[0..n) into out (room for n / 4 * 3 + 3 bytes), skipping '='
 * and line breaks and spaces; *len gets the byte count. False at the
 * first other character that is not in the alphabet. */
bool ks_base64_decode(const char *s, size_t n, unsigned char *out, size_t *len);

#endif
