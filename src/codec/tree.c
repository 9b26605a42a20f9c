#include "codec/tree.h"
#include "codec/tree_internal.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ks_tree *kt_get(const ks_tree *t, const char *key) {
    if (!t || t->type != KT_MAP) return NULL;
    /* the first byte first: most keys differ there, and the decoders ask
     * for many a key that is absent (a pod's watch event: 2 % of ksched
     * run's samples were strcmp from here) */
    char k0 = key[0];
    for (uint32_t i = t->n; i-- > 0;)
        if (t->keys[i][0] == k0 && strcmp(t->keys[i], key) == 0) return t->items[i];
    return NULL;
}

const char *kt_type_name(kt_type t) {
    switch (t) {
    case KT_NULL: return "null";
    case KT_BOOL: return "bool";
    case KT_INT: return "int";
    case KT_FLOAT: return "float";
    case KT_STRING: return "string";
    case KT_MAP: return "map";
    case KT_SEQ: return "list";
    }
    return "?";
}

ks_tree *kt_new(ks_arena *a, kt_type type, int line) {
    ks_tree *t = ks_arena_alloc(a, sizeof(*t));
    t->type = type;
    t->line = line;
    return t;
}

/* Map and sequence arrays have room for kt_cap(n) entries (the parsers
 * allocate them that way too), so adding doubles only at powers of two. */
size_t kt_cap(uint32_t n) {
    size_t c = 4;
    while (c < n) c *= 2;
    return c;
}

static void grow_items(ks_arena *a, ks_tree *t, bool keys) {
    size_t cap = t->n ? kt_cap(t->n) : 0;
    if (t->n < cap) return;
    size_t nc = kt_cap(t->n + 1);
    ks_tree **items = ks_arena_calloc(a, nc, sizeof(*items));
    if (t->n) memcpy(items, t->items, t->n * sizeof(*items));
    t->items = items;
    if (keys) {
        const char **k = ks_arena_calloc(a, nc, sizeof(*k));
        if (t->n) memcpy(k, t->keys, t->n * sizeof(*k));
        t->keys = k;
    }
}

void kt_map_add(ks_arena *a, ks_tree *map, const char *key, ks_tree *val) {
    grow_items(a, map, true);
    map->keys[map->n] = ks_arena_strdup(a, key);
    map->items[map->n++] = val;
}

void kt_seq_add(ks_arena *a, ks_tree *seq, ks_tree *item) {
    grow_items(a, seq, false);
    seq->items[seq->n++] = item;
}

void kt_map_set(ks_arena *a, ks_tree *map, const char *key, ks_tree *val) {
    for (uint32_t i = map->n; i-- > 0;) {
        if (strcmp(map->keys[i], key) == 0) {
            map->items[i] = val;
            return;
        }
    }
    kt_map_add(a, map, key, val);
}

ks_tree *kt_string(ks_arena *a, const char *s, int line) {
    ks_tree *t = kt_new(a, KT_STRING, line);
    t->text = ks_arena_strdup(a, s);
    return t;
}

ks_tree *kt_int(ks_arena *a, int64_t v) {
    ks_tree *t = kt_new(a, KT_INT, 0);
    t->ival = v;
    /* the digits by hand: printf was a tenth of decoding a protobuf
     * watch event (every int of a pod has its text) */
    char buf[24];
    size_t w = sizeof(buf);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    buf[--w] = '\0';
    do {
        buf[--w] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) buf[--w] = '-';
    char *text = ks_arena_alloc_uninit(a, sizeof(buf) - w);
    memcpy(text, buf + w, sizeof(buf) - w);
    t->text = text;
    return t;
}

ks_tree *kt_bool(ks_arena *a, bool v) {
    ks_tree *t = kt_new(a, KT_BOOL, 0);
    t->bval = v;
    t->text = v ? "true" : "false";
    return t;
}

ks_tree *kt_copy(ks_arena *a, const ks_tree *t) {
    if (!t) return NULL;
    ks_tree *c = kt_new(a, t->type, t->line);
    *c = *t;
    if (t->text) c->text = ks_arena_strdup(a, t->text);
    if (t->type == KT_MAP || t->type == KT_SEQ) {
        c->items = t->n ? ks_arena_calloc(a, kt_cap(t->n), sizeof(*c->items)) : NULL;
        if (t->type == KT_MAP)
            c->keys = t->n ? ks_arena_calloc(a, kt_cap(t->n), sizeof(*c->keys)) : NULL;
        for (uint32_t i = 0; i < t->n; i++) {
            c->items[i] = kt_copy(a, t->items[i]);
            if (t->type == KT_MAP) c->keys[i] = ks_arena_strdup(a, t->keys[i]);
        }
    }
    return c;
}

/* Shortest decimal that reads back as d: its digits and the exponent of
 * the first digit (d = 0.DIGITS * 10^(exp+1)). */
static void shortest_digits(double d, char *digits, int *exp10) {
    char buf[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    /* buf is "D.DDDDe±XX" (d > 0) */
    int n = 0;
    char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = 0;
    *exp10 = atoi(p + 1);
}

void kt_format_float(double d, char *buf, int n, bool yaml) {
    if (isnan(d)) {
        snprintf(buf, (size_t)n, yaml ? ".nan" : "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, (size_t)n, "%s", d > 0 ? (yaml ? ".inf" : "+Inf") : (yaml ? "-.inf" : "-Inf"));
        return;
    }
    if (d == 0) {
        snprintf(buf, (size_t)n, "%s%s", signbit(d) ? "-" : "", yaml ? "0.0" : "0");
        return;
    }
    /* As Go's encoding/json writes a float64: shortest digits, plain
     * notation between 1e-6 and 1e21, else exponent notation. */
    char dig[24];
    int e;
    shortest_digits(fabs(d), dig, &e);
    int nd = (int)strlen(dig);
    char out[64];
    int o = 0;
    if (d < 0) out[o++] = '-';
    double ad = fabs(d);
    if (ad < 1e-6 || ad >= 1e21) {
        out[o++] = dig[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++) out[o++] = dig[i];
        }
        o += snprintf(out + o, sizeof(out) - (size_t)o, "e%c%d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (e < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -e - 1; i++) out[o++] = '0';
        for (int i = 0; i < nd; i++) out[o++] = dig[i];
    } else {
        for (int i = 0; i <= e || i < nd; i++) {
            if (i == e + 1) out[o++] = '.';
            out[o++] = i < nd ? dig[i] : '0';
        }
        /* YAML needs a mark of floatness to read the value back as one */
        if (yaml && nd <= e + 1) {
            out[o++] = '.';
            out[o++] = '0';
        }
    }
    out[o] = 0;
    snprintf(buf, (size_t)n, "%s", out);
}

/* Strings up to this length are shared; longer ones rarely repeat. */
#define DEDUP_MAX 48

const char *kt_strtab_get(kt_strtab *t, ks_arena *a, const char *s, size_t n) {
    if (n > DEDUP_MAX) return ks_arena_strndup(a, s, n);
    if ((t->n + 1) * 2 > t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        const char **slots = ks_xcalloc(ncap, sizeof(*slots));
        uint32_t *lens = ks_xcalloc(ncap, sizeof(*lens));
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i]) continue;
            size_t j = ks_hash_bytes(t->slots[i], t->lens[i]) & (ncap - 1);
            while (slots[j]) j = (j + 1) & (ncap - 1);
            slots[j] = t->slots[i];
            lens[j] = t->lens[i];
        }
        free(t->slots);
        free(t->lens);
        t->slots = slots;
        t->lens = lens;
        t->cap = ncap;
    }
    size_t j = ks_hash_bytes(s, n) & (t->cap - 1);
    for (; t->slots[j]; j = (j + 1) & (t->cap - 1))
        if (t->lens[j] == n && memcmp(t->slots[j], s, n) == 0) return t->slots[j];
    const char *copy = ks_arena_strndup(a, s, n);
    t->slots[j] = copy;
    t->lens[j] = (uint32_t)n;
    t->n++;
    return copy;
}

void kt_strtab_free(kt_strtab *t) {
    free(t->slots);
    free(t->lens);
    memset(t, 0, sizeof(*t));
}

/* Length of the valid UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
    else return 0;
    unsigned cp = c & (0xFF >> (n + 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

const char *kt_utf8_clean(const char *s, char **tofree) {
    *tofree = NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, bad = 0;
    while (u[i]) {
        size_t l = utf8_len(u + i);
        if (!l) {
            bad++;
            l = 1;
        }
        i += l;
    }
    if (!bad) return s;
    char *out = ks_xmalloc(i + bad * 2 + 1);
    size_t o = 0;
    for (size_t j = 0; u[j];) {
        size_t l = utf8_len(u + j);
        if (l) {
            memcpy(out + o, u + j, l);
            o += l;
            j += l;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            j++;
        }
    }
    out[o] = 0;
    *tofree = out;
    return out;
}

const char *kt_number_text(const ks_tree *t, char *buf, int n) {
    if (!t) return NULL;
    if (t->type == KT_INT) {
        snprintf(buf, (size_t)n, "%" PRId64, t->ival);
        return buf;
    }
    if (t->type == KT_FLOAT) {
        kt_format_float(t->fval, buf, n, false);
        return buf;
    }
    return NULL;
}

bool kt_parse(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
              uint32_t *ndocs, char **err) {
    *docs = NULL;
    *ndocs = 0;
    *err = NULL;
    size_t i = 0;
    /* skip a UTF-8 byte order mark and blanks */
    if (len >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
        (unsigned char)buf[2] == 0xBF)
        i = 3;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) i++;
    /* JSON starts with [ or with { and a quoted key; a YAML flow mapping
     * ({kind: Pod}) starts with a bare word. */
    if (i < len && (buf[i] == '{' || buf[i] == '[')) {
        size_t j = i + 1;
        while (j < len && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r' || buf[j] == '\n')) j++;
        if (buf[i] == '[' || j >= len || buf[j] == '"' || buf[j] == '}')
            return kt_parse_json(a, name, buf, len, docs, ndocs, err);
    }
    return kt_parse_yaml(a, name, buf, len, docs, ndocs, err);
}
