/* Growable string buffer for building messages and output. */
#ifndef KS_STRBUF_H
#define KS_STRBUF_H

#include <stddef.h>

typedef struct ks_strbuf {
    char *s;
    size_t len, cap;
} ks_strbuf;

void ks_sb_init(ks_strbuf *b);
void ks_sb_free(ks_strbuf *b);
void ks_sb_reset(ks_strbuf *b);
void ks_sb_putn(ks_strbuf *b, const char *s, size_t n);
void ks_sb_puts(ks_strbuf *b, const char *s);
void ks_sb_putc(ks_strbuf *b, char c);
void ks_sb_printf(ks_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Give the string to the caller (malloc'd); the buffer becomes empty. */
char *ks_sb_take(ks_strbuf *b);
/* Go's strconv.Quote of n bytes: \a \b \f \n \r \t \v \" \\, \xNN for the
 * other control bytes, DEL and bytes outside valid UTF-8; valid UTF-8 as
 * it is. */
void ks_sb_quote(ks_strbuf *b, const char *s, size_t n);
/* The same for a C string. */
void ks_sb_quote_str(ks_strbuf *b, const char *s);
/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 when invalid
 * (overlong forms and surrogates included); s holds at most n bytes. */
size_t ks_utf8_len(const unsigned char *s, size_t n);
static inline const char *ks_sb_str(const ks_strbuf *b) { return b->s ? b->s : ""; }

#endif
