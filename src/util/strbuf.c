#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks_sb_init(ks_strbuf *b) { memset(b, 0, sizeof(*b)); }

void ks_sb_free(ks_strbuf *b) {
    free(b->s);
    memset(b, 0, sizeof(*b));
}

void ks_sb_reset(ks_strbuf *b) {
    b->len = 0;
    if (b->s) b->s[0] = 0;
}

void ks_sb_putn(ks_strbuf *b, const char *s, size_t n) {
    KS_GROW(b->s, b->cap, b->len + n + 1);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void ks_sb_puts(ks_strbuf *b, const char *s) { ks_sb_putn(b, s, strlen(s)); }
void ks_sb_putc(ks_strbuf *b, char c) { ks_sb_putn(b, &c, 1); }

void ks_sb_printf(ks_strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    KS_GROW(b->s, b->cap, b->len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *ks_sb_take(ks_strbuf *b) {
    char *s = b->s ? b->s : ks_xstrdup("");
    memset(b, 0, sizeof(*b));
    return s;
}
