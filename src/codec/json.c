/* JSON <-> tree, on jansson. jansson reports no positions for values, so
 * nodes parsed from JSON carry line 0 (errors then name the file and the
 * field path only). */
#include "codec/tree.h"
#include "codec/tree_internal.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NULL when too deep, or (with *too_long set) when a string is too long. */
static ks_tree *from_json(ks_arena *a, kt_strtab *strs, json_t *j, int depth, size_t *too_long) {
    ks_tree *t;
    char buf[64];
    if (depth >= KT_MAX_DEPTH && (json_is_object(j) || json_is_array(j))) return NULL;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        t = kt_new(a, KT_MAP, 0);
        size_t n = json_object_size(j);
        if (n) {
            t->items = ks_arena_calloc(a, kt_cap((uint32_t)n), sizeof(*t->items));
            t->keys = ks_arena_calloc(a, kt_cap((uint32_t)n), sizeof(*t->keys));
        }
        const char *key;
        size_t klen;
        json_t *v;
        json_object_keylen_foreach(j, key, klen, v) {
            if (klen > KT_MAX_STRING) {
                *too_long = klen;
                return NULL;
            }
            ks_tree *c = from_json(a, strs, v, depth + 1, too_long);
            if (!c) return NULL;
            t->keys[t->n] = kt_strtab_get(strs, a, key, klen);
            t->items[t->n++] = c;
        }
        return t;
    }
    case JSON_ARRAY: {
        t = kt_new(a, KT_SEQ, 0);
        size_t n = json_array_size(j);
        if (n) t->items = ks_arena_calloc(a, kt_cap((uint32_t)n), sizeof(*t->items));
        for (size_t i = 0; i < n; i++) {
            ks_tree *c = from_json(a, strs, json_array_get(j, i), depth + 1, too_long);
            if (!c) return NULL;
            t->items[t->n++] = c;
        }
        return t;
    }
    case JSON_STRING:
        if (json_string_length(j) > KT_MAX_STRING) {
            *too_long = json_string_length(j);
            return NULL;
        }
        t = kt_new(a, KT_STRING, 0);
        t->quoted = true;
        t->text = kt_strtab_get(strs, a, json_string_value(j), json_string_length(j));
        return t;
    case JSON_INTEGER:
        t = kt_new(a, KT_INT, 0);
        t->ival = (int64_t)json_integer_value(j);
        snprintf(buf, sizeof(buf), "%" PRId64, t->ival);
        t->text = ks_arena_strdup(a, buf);
        return t;
    case JSON_REAL:
        t = kt_new(a, KT_FLOAT, 0);
        t->fval = json_real_value(j);
        kt_format_float(t->fval, buf, sizeof(buf), false);
        t->text = ks_arena_strdup(a, buf);
        return t;
    case JSON_TRUE:
    case JSON_FALSE:
        t = kt_new(a, KT_BOOL, 0);
        t->bval = json_is_true(j);
        t->text = t->bval ? "true" : "false";
        return t;
    case JSON_NULL:
        t = kt_new(a, KT_NULL, 0);
        t->text = "null";
        return t;
    }
    return NULL;
}

/* ---- the fast path ------------------------------------------------------
 * Watch events and list pages are parsed here straight into the tree:
 * jansson's DOM first costs a second pass and about seven times the
 * text's size in memory. It accepts a strict subset of what jansson does
 * (valid UTF-8, no NUL, numbers that fit, no more than FP_MAX_KEYS keys
 * in a map) and builds exactly what from_json builds from jansson's value
 * (a key written twice keeps its first place and its last value, as
 * jansson's object does). Anything else fails here and kt_parse_json
 * parses the text again through jansson, which gives its verdict and
 * its error message. */

#define FP_MAX_KEYS 4096

typedef struct fparser {
    const char *s;
    size_t len, pos;
    ks_arena *a;
    kt_strtab *strs;
    char *buf; /* decoded strings with escapes */
    size_t bufcap;
} fparser;

static void fp_ws(fparser *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static bool fp_put(fparser *p, size_t *n, const char *src, size_t k) {
    if (*n + k > KT_MAX_STRING) return false;
    if (!k) return true;
    if (*n + k > p->bufcap) {
        size_t nc = p->bufcap ? p->bufcap : 256;
        while (nc < *n + k) nc *= 2;
        p->buf = ks_xrealloc(p->buf, nc);
        p->bufcap = nc;
    }
    memcpy(p->buf + *n, src, k);
    *n += k;
    return true;
}

/* Bytes of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0:
 * no overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t fp_utf8(const unsigned char *s, size_t left) {
    unsigned c = s[0];
    size_t n;
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, v = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, v = c & 0x07;
    else return 0;
    if (left < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    return n;
}

static int fp_hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    return v;
}

/* A string at p->pos (its opening quote): its bytes in *out (into the
 * text itself when it has no escape, else into p->buf). */
static bool fp_string(fparser *p, const char **out, size_t *outlen) {
    size_t i = ++p->pos, n = 0;
    bool esc = false;
    const unsigned char *u = (const unsigned char *)p->s;
    size_t run = i; /* start of the bytes not yet copied (esc) */
    for (;;) {
        if (i >= p->len) return false;
        unsigned c = u[i];
        if (c == '"') break;
        if (c < 0x20) return false;
        if (c >= 0x80) {
            size_t k = fp_utf8(u + i, p->len - i);
            if (!k) return false;
            i += k;
            continue;
        }
        if (c != '\\') {
            i++;
            continue;
        }
        if (!esc) n = 0;
        esc = true;
        if (!fp_put(p, &n, p->s + run, i - run)) return false;
        if (i + 1 >= p->len) return false;
        char e = p->s[i + 1], ch;
        i += 2;
        switch (e) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            if (i + 4 > p->len) return false;
            int v = fp_hex4(p->s + i);
            if (v <= 0) return false; /* bad digits, or NUL */
            i += 4;
            uint32_t cp = (uint32_t)v;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (i + 6 > p->len || p->s[i] != '\\' || p->s[i + 1] != 'u') return false;
                int lo = fp_hex4(p->s + i + 2);
                if (lo < 0xDC00 || lo > 0xDFFF) return false;
                i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
            }
            char enc[4];
            size_t k;
            if (cp < 0x80) enc[0] = (char)cp, k = 1;
            else if (cp < 0x800) enc[0] = (char)(0xC0 | (cp >> 6)), enc[1] = (char)(0x80 | (cp & 0x3F)), k = 2;
            else if (cp < 0x10000)
                enc[0] = (char)(0xE0 | (cp >> 12)), enc[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
                enc[2] = (char)(0x80 | (cp & 0x3F)), k = 3;
            else
                enc[0] = (char)(0xF0 | (cp >> 18)), enc[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
                enc[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), enc[3] = (char)(0x80 | (cp & 0x3F)), k = 4;
            if (!fp_put(p, &n, enc, k)) return false;
            run = i;
            continue;
        }
        default: return false;
        }
        if (!fp_put(p, &n, &ch, 1)) return false;
        run = i;
    }
    if (esc) {
        if (!fp_put(p, &n, p->s + run, i - run)) return false;
        *out = p->buf;
        *outlen = n;
    } else {
        if (i - p->pos > KT_MAX_STRING) return false;
        *out = p->s + p->pos;
        *outlen = i - p->pos;
    }
    p->pos = i + 1;
    return true;
}

static bool fp_digits(fparser *p) {
    size_t st = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    return p->pos > st;
}

static ks_tree *fp_number(fparser *p) {
    size_t st = p->pos;
    bool real = false;
    if (p->s[p->pos] == '-') p->pos++;
    if (p->pos >= p->len) return NULL;
    if (p->s[p->pos] == '0') p->pos++;
    else if (!fp_digits(p)) return NULL;
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        if (!fp_digits(p)) return NULL;
        real = true;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (!fp_digits(p)) return NULL;
        real = true;
    }
    char num[64], buf[64];
    size_t n = p->pos - st;
    if (n >= sizeof(num)) return NULL;
    memcpy(num, p->s + st, n);
    num[n] = '\0';
    char *end;
    errno = 0;
    ks_tree *t;
    if (!real) {
        long long v = strtoll(num, &end, 10);
        if (errno || *end) return NULL;
        t = kt_new(p->a, KT_INT, 0);
        t->ival = (int64_t)v;
        snprintf(buf, sizeof(buf), "%" PRId64, t->ival);
    } else {
        double d = strtod(num, &end);
        if (*end || ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE) || !isfinite(d)) return NULL;
        t = kt_new(p->a, KT_FLOAT, 0);
        t->fval = d;
        kt_format_float(d, buf, sizeof(buf), false);
    }
    t->text = ks_arena_strdup(p->a, buf);
    return t;
}

static bool fp_lit(fparser *p, const char *w, size_t n) {
    if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return false;
    p->pos += n;
    return true;
}

/* Room for one more entry: arrays double from 4, so they always hold
 * kt_cap(n) slots as the tree's other builders expect. */
static void fp_grow(fparser *p, ks_tree *t, bool keys) {
    if (t->n && t->n < kt_cap(t->n)) return;
    if (t->n == 0) {
        t->items = ks_arena_calloc(p->a, 4, sizeof(*t->items));
        if (keys) t->keys = ks_arena_calloc(p->a, 4, sizeof(*t->keys));
        return;
    }
    size_t nc = kt_cap(t->n + 1);
    ks_tree **items = ks_arena_calloc(p->a, nc, sizeof(*items));
    memcpy(items, t->items, t->n * sizeof(*items));
    t->items = items;
    if (keys) {
        const char **k = ks_arena_calloc(p->a, nc, sizeof(*k));
        memcpy(k, t->keys, t->n * sizeof(*k));
        t->keys = k;
    }
}

/* After a member or element: 1 at ',' (another follows), 0 at the
 * closing bracket, -1 on anything else; both consumed. */
static int fp_next(fparser *p, char close) {
    fp_ws(p);
    if (p->pos >= p->len) return -1;
    char c = p->s[p->pos++];
    if (c == ',') return 1;
    return c == close ? 0 : -1;
}

static ks_tree *fp_value(fparser *p, int depth) {
    fp_ws(p);
    if (p->pos >= p->len) return NULL;
    char c = p->s[p->pos];
    ks_tree *t;
    if (c == '{') {
        if (depth >= KT_MAX_DEPTH) return NULL;
        t = kt_new(p->a, KT_MAP, 0);
        p->pos++;
        fp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return t;
        }
        for (;;) {
            fp_ws(p);
            const char *k;
            size_t kl;
            if (p->pos >= p->len || p->s[p->pos] != '"' || !fp_string(p, &k, &kl)) return NULL;
            const char *key = kt_strtab_get(p->strs, p->a, k, kl);
            fp_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') return NULL;
            p->pos++;
            ks_tree *v = fp_value(p, depth + 1);
            if (!v) return NULL;
            uint32_t i = 0;
            while (i < t->n && t->keys[i] != key && strcmp(t->keys[i], key) != 0) i++;
            if (i < t->n) {
                t->items[i] = v;
            } else {
                if (t->n >= FP_MAX_KEYS) return NULL;
                fp_grow(p, t, true);
                t->keys[t->n] = key;
                t->items[t->n++] = v;
            }
            int more = fp_next(p, '}');
            if (more < 0) return NULL;
            if (!more) return t;
        }
    }
    if (c == '[') {
        if (depth >= KT_MAX_DEPTH) return NULL;
        t = kt_new(p->a, KT_SEQ, 0);
        p->pos++;
        fp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return t;
        }
        for (;;) {
            ks_tree *v = fp_value(p, depth + 1);
            if (!v) return NULL;
            fp_grow(p, t, false);
            t->items[t->n++] = v;
            int more = fp_next(p, ']');
            if (more < 0) return NULL;
            if (!more) return t;
        }
    }
    if (c == '"') {
        const char *v;
        size_t vl;
        if (!fp_string(p, &v, &vl)) return NULL;
        t = kt_new(p->a, KT_STRING, 0);
        t->quoted = true;
        t->text = kt_strtab_get(p->strs, p->a, v, vl);
        return t;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return fp_number(p);
    if (fp_lit(p, "true", 4) || fp_lit(p, "false", 5)) {
        t = kt_new(p->a, KT_BOOL, 0);
        t->bval = p->s[p->pos - 1] == 'e' && p->s[p->pos - 2] == 'u';
        t->text = t->bval ? "true" : "false";
        return t;
    }
    if (fp_lit(p, "null", 4)) {
        t = kt_new(p->a, KT_NULL, 0);
        t->text = "null";
        return t;
    }
    return NULL;
}

/* The whole stream, or false (then nothing in *docs). */
static bool fast_parse(ks_arena *a, const char *buf, size_t len, ks_tree ***docs, uint32_t *ndocs) {
    kt_strtab strs = {0};
    fparser p = {.s = buf, .len = len, .a = a, .strs = &strs};
    size_t cap = 4, n = 0;
    ks_tree **out = ks_xmalloc(cap * sizeof(*out));
    bool ok = true;
    for (;;) {
        fp_ws(&p);
        if (p.pos >= len) break;
        ks_tree *t = fp_value(&p, 0);
        if (!t) {
            ok = false;
            break;
        }
        if (t->type != KT_MAP && t->type != KT_SEQ) {
            /* a scalar document: only alone at the end (where jansson
             * stops reading a number or a word is its business) */
            fp_ws(&p);
            if (p.pos < len) {
                ok = false;
                break;
            }
        }
        if (t->type == KT_NULL) continue;
        if (n == cap) out = ks_xrealloc(out, (cap *= 2) * sizeof(*out));
        out[n++] = t;
    }
    if (ok) {
        *docs = ks_arena_calloc(a, n ? n : 1, sizeof(**docs));
        memcpy(*docs, out, n * sizeof(*out));
        *ndocs = (uint32_t)n;
    }
    free(out);
    free(p.buf);
    kt_strtab_free(&strs);
    return ok;
}

/* One value after another ("{...}{...}", or one per line) is a stream of
 * documents, as kubectl reads them. */
bool kt_parse_json(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                   uint32_t *ndocs, char **err) {
    if (fast_parse(a, buf, len, docs, ndocs)) return true;
    return kt_parse_json_jansson(a, name, buf, len, docs, ndocs, err);
}

bool kt_parse_json_fast(ks_arena *a, const char *buf, size_t len, ks_tree ***docs, uint32_t *ndocs) {
    return fast_parse(a, buf, len, docs, ndocs);
}

bool kt_parse_json_jansson(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                           uint32_t *ndocs, char **err) {
    size_t cap = 4, n = 0, off = 0;
    ks_tree **out = ks_xmalloc(cap * sizeof(*out));
    kt_strtab strs = {0};
    int line_base = 1;
    for (;;) {
        while (off < len && (buf[off] == ' ' || buf[off] == '\t' || buf[off] == '\r' ||
                             buf[off] == '\n')) {
            if (buf[off] == '\n') line_base++;
            off++;
        }
        if (off >= len) break;
        json_error_t je;
        json_t *j = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &je);
        if (!j) {
            /* jansson's own depth limit is KT_MAX_DEPTH: say it as YAML does */
            if (strstr(je.text, "maximum parsing depth"))
                *err = ks_xasprintf("%s:%d: maps and lists nested deeper than %d levels", name,
                                    line_base + je.line - 1, KT_MAX_DEPTH);
            else
                *err = ks_xasprintf("%s:%d: %s", name, line_base + je.line - 1, je.text);
            kt_strtab_free(&strs);
            free(out);
            return false;
        }
        for (size_t i = 0; i < (size_t)je.position; i++)
            if (buf[off + i] == '\n') line_base++;
        off += (size_t)je.position;
        size_t too_long = 0;
        ks_tree *t = from_json(a, &strs, j, 0, &too_long);
        json_decref(j);
        if (!t) {
            if (too_long)
                *err = ks_xasprintf("%s:%d: a string of %zu bytes (the limit is %u)", name,
                                    line_base, too_long, KT_MAX_STRING);
            else
                *err = ks_xasprintf("%s:%d: maps and lists nested deeper than %d levels", name,
                                    line_base, KT_MAX_DEPTH);
            kt_strtab_free(&strs);
            free(out);
            return false;
        }
        if (t->type == KT_NULL) continue;
        if (n == cap) out = ks_xrealloc(out, (cap *= 2) * sizeof(*out));
        out[n++] = t;
    }
    *docs = ks_arena_calloc(a, n ? n : 1, sizeof(**docs));
    memcpy(*docs, out, n * sizeof(*out));
    *ndocs = (uint32_t)n;
    kt_strtab_free(&strs);
    free(out);
    return true;
}

static json_t *to_json(const ks_tree *t, int depth) {
    if (!t) return json_null();
    if (depth > 10000) return NULL;
    switch (t->type) {
    case KT_NULL: return json_null();
    case KT_BOOL: return json_boolean(t->bval);
    case KT_INT: return json_integer((json_int_t)t->ival);
    case KT_FLOAT: return json_real(t->fval);
    case KT_STRING: {
        char *fixed;
        json_t *j = json_string(kt_utf8_clean(t->text ? t->text : "", &fixed));
        free(fixed);
        return j;
    }
    case KT_SEQ: {
        json_t *arr = json_array();
        for (uint32_t i = 0; i < t->n; i++) {
            json_t *c = to_json(t->items[i], depth + 1);
            if (!c) {
                json_decref(arr);
                return NULL;
            }
            json_array_append_new(arr, c);
        }
        return arr;
    }
    case KT_MAP: {
        json_t *obj = json_object();
        for (uint32_t i = 0; i < t->n; i++) {
            json_t *c = to_json(t->items[i], depth + 1);
            if (!c) {
                json_decref(obj);
                return NULL;
            }
            char *fixed;
            json_object_set_new(obj, kt_utf8_clean(t->keys[i], &fixed), c);
            free(fixed);
        }
        return obj;
    }
    }
    return NULL;
}

/* ---- the writer ------------------------------------------------------------
 *
 * kt_to_json writes the tree itself, formatted as json_dumps formats it
 * (keys in order; JSON_INDENT(n) or JSON_COMPACT; reals through jansson):
 * building a jansson tree of simulate's -o json output and freeing it
 * again took as long as the scheduling (10,000 pods). A map with a key
 * twice or a key needing UTF-8 repair (jansson keeps the first place and
 * the last value) goes through jansson instead. */

typedef struct writer {
    ks_strbuf b;
    int indent;
} writer;

static void put_newline(writer *w, int depth) {
    ks_sb_putc(&w->b, '\n');
    for (int i = 0; i < depth * w->indent; i++) ks_sb_putc(&w->b, ' ');
}

/* Valid UTF-8 as it is, but for the escapes jansson writes. */
static void put_string(writer *w, const char *s) {
    ks_sb_putc(&w->b, '"');
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p != '"' && *p != '\\') continue;
        ks_sb_putn(&w->b, run, (size_t)((const char *)p - run));
        run = (const char *)p + 1;
        switch (*p) {
        case '"': ks_sb_puts(&w->b, "\\\""); break;
        case '\\': ks_sb_puts(&w->b, "\\\\"); break;
        case '\b': ks_sb_puts(&w->b, "\\b"); break;
        case '\f': ks_sb_puts(&w->b, "\\f"); break;
        case '\n': ks_sb_puts(&w->b, "\\n"); break;
        case '\r': ks_sb_puts(&w->b, "\\r"); break;
        case '\t': ks_sb_puts(&w->b, "\\t"); break;
        default: ks_sb_printf(&w->b, "\\u%04X", (unsigned)*p); break;
        }
    }
    ks_sb_puts(&w->b, run);
    ks_sb_putc(&w->b, '"');
}

static bool keys_plain(const ks_tree *t) {
    if (t->n > 64) return false; /* not worth a set: jansson checks */
    for (uint32_t i = 0; i < t->n; i++) {
        char *fixed;
        kt_utf8_clean(t->keys[i], &fixed);
        if (fixed) {
            free(fixed);
            return false;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(t->keys[i], t->keys[j]) == 0) return false;
    }
    return true;
}

/* 0: written; 1: needs jansson; -1: jansson would fail too. */
static int write_value(writer *w, const ks_tree *t, int depth) {
    if (depth > 10000) return -1;
    if (!t) {
        ks_sb_puts(&w->b, "null");
        return 0;
    }
    switch (t->type) {
    case KT_NULL: ks_sb_puts(&w->b, "null"); return 0;
    case KT_BOOL: ks_sb_puts(&w->b, t->bval ? "true" : "false"); return 0;
    case KT_INT: ks_sb_printf(&w->b, "%" PRId64, t->ival); return 0;
    case KT_FLOAT: {
        json_t *j = json_real(t->fval);
        char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : NULL;
        json_decref(j);
        if (!s) return -1;
        ks_sb_puts(&w->b, s);
        free(s);
        return 0;
    }
    case KT_STRING: {
        char *fixed;
        put_string(w, kt_utf8_clean(t->text ? t->text : "", &fixed));
        free(fixed);
        return 0;
    }
    case KT_SEQ:
    case KT_MAP: {
        bool map = t->type == KT_MAP;
        if (map && !keys_plain(t)) return 1;
        ks_sb_putc(&w->b, map ? '{' : '[');
        for (uint32_t i = 0; i < t->n; i++) {
            if (i) ks_sb_putc(&w->b, ',');
            if (w->indent) put_newline(w, depth + 1);
            if (map) {
                put_string(w, t->keys[i]);
                ks_sb_puts(&w->b, w->indent ? ": " : ":");
            }
            int r = write_value(w, t->items[i], depth + 1);
            if (r) return r;
        }
        if (t->n && w->indent) put_newline(w, depth);
        ks_sb_putc(&w->b, map ? '}' : ']');
        return 0;
    }
    }
    return -1;
}

char *kt_to_json(const ks_tree *t, int indent) {
    writer w = {.indent = indent > 31 ? 31 : indent < 0 ? 0 : indent};
    ks_sb_init(&w.b);
    int r = write_value(&w, t, 0);
    if (r == 0) return ks_sb_take(&w.b);
    ks_sb_free(&w.b);
    return r > 0 ? kt_to_json_jansson(t, indent) : NULL;
}

char *kt_to_json_jansson(const ks_tree *t, int indent) {
    json_t *j = to_json(t, 0);
    if (!j) return NULL;
    size_t flags = JSON_ENCODE_ANY | JSON_REAL_PRECISION(17);
    flags |= indent > 0 ? JSON_INDENT(indent > 31 ? 31 : indent) : JSON_COMPACT;
    char *s = json_dumps(j, flags);
    json_decref(j);
    if (!s) return NULL;
    /* hand back memory our callers free() */
    char *r = ks_xstrdup(s);
    free(s);
    return r;
}
