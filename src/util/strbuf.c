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

size_t ks_utf8_len(const unsigned char *s, size_t n) {
    if (n == 0) return 0;
    if (s[0] < 0x80) return 1;
    size_t l = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    if (!l || l > n) return 0;
    for (size_t i = 1; i < l; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (l == 3 && s[0] == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
    if (l == 3 && s[0] == 0xED && s[1] >= 0xA0) return 0; /* surrogates */
    if (l == 4 && s[0] == 0xF0 && s[1] < 0x90) return 0;
    if (l == 4 && s[0] == 0xF4 && s[1] >= 0x90) return 0;
    return l;
}

void ks_sb_quote(ks_strbuf *b, const char *s, size_t n) {
    static const char esc[] = "\\a\\b\\t\\n\\v\\f\\r"; /* 7..13, two bytes each */
    const unsigned char *p = (const unsigned char *)s;
    ks_sb_putc(b, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t l;
        if (c == '"' || c == '\\') {
            ks_sb_putc(b, '\\');
            ks_sb_putc(b, (char)c);
            i++;
        } else if (c >= 7 && c <= 13) {
            ks_sb_putn(b, esc + 2 * (c - 7), 2);
            i++;
        } else if (c >= 0x20 && c < 0x7f) {
            ks_sb_putc(b, (char)c);
            i++;
        } else if (c >= 0x80 && (l = ks_utf8_len(p + i, n - i)) > 0) {
            ks_sb_putn(b, s + i, l);
            i += l;
        } else {
            ks_sb_printf(b, "\\x%02x", c);
            i++;
        }
    }
    ks_sb_putc(b, '"');
}

void ks_sb_quote_str(ks_strbuf *b, const char *s) { ks_sb_quote(b, s, strlen(s)); }
