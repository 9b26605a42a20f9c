#include "sim/page_json.h"
#include "util/intern.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1-4), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80) return 1;
    if ((c & 0xe0) == 0xc0) n = 2, min = 0x80;
    else if ((c & 0xf0) == 0xe0) n = 3, min = 0x800;
    else if ((c & 0xf8) == 0xf0) n = 4, min = 0x10000;
    else return 0;
    unsigned cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void ks_pj_str(ks_strbuf *b, const char *s) {
    if (!s) {
        ks_sb_puts(b, "null");
        return;
    }
    ks_sb_putc(b, '"');
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* copy the run that needs no escaping in one go */
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\' && *p != '<' && *p != '>' && *p != '&') p++;
        if (p > run) ks_sb_putn(b, (const char *)run, (size_t)(p - run));
        if (!*p) break;
        unsigned c = *p;
        if (c >= 0x80) {
            size_t n = utf8_len(p);
            if (n) ks_sb_putn(b, (const char *)p, n);
            else ks_sb_puts(b, "\\ufffd");
            p += n ? n : 1;
            continue;
        }
        switch (c) {
        case '"': ks_sb_puts(b, "\\\""); break;
        case '\\': ks_sb_puts(b, "\\\\"); break;
        case '\n': ks_sb_puts(b, "\\n"); break;
        case '\t': ks_sb_puts(b, "\\t"); break;
        case '\r': ks_sb_puts(b, "\\r"); break;
        default: ks_sb_printf(b, "\\u%04x", c); break;
        }
        p++;
    }
    ks_sb_putc(b, '"');
}

void ks_pj_key(ks_strbuf *b, const char *key, bool first) {
    if (!first) ks_sb_putc(b, ',');
    ks_pj_str(b, key);
    ks_sb_putc(b, ':');
}

void ks_pj_i64(ks_strbuf *b, int64_t v) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    ks_sb_putn(b, tmp, (size_t)n);
}

void ks_pj_strings_init(ks_pj_strings *t) {
    memset(t, 0, sizeof(*t));
    ks_map_init(&t->index);
}

void ks_pj_strings_free(ks_pj_strings *t) {
    ks_map_free(&t->index);
    free(t->ids);
    memset(t, 0, sizeof(*t));
}

uint32_t ks_pj_string(ks_pj_strings *t, const char *s) {
    ks_id id = ks_intern(s ? s : "");
    uintptr_t pos = (uintptr_t)ks_map_get(&t->index, (uint64_t)id + 1);
    if (pos) return (uint32_t)(pos - 1);
    KS_GROW(t->ids, t->cap, t->n + 1);
    t->ids[t->n] = id;
    ks_map_put(&t->index, (uint64_t)id + 1, (void *)(uintptr_t)(t->n + 1));
    return t->n++;
}

void ks_pj_strings_write(ks_strbuf *b, const ks_pj_strings *t) {
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < t->n; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_str(b, ks_str(t->ids[i]));
    }
    ks_sb_putc(b, ']');
}
