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
static inline const char *ks_sb_str(const ks_strbuf *b) { return b->s ? b->s : ""; }

#endif
