/* go-spew and Go JSON renderings of a pod template, and the two hashes
 * kube-controller-manager computes over them (template_hash.h). The walk is
 * driven by the Go types (go_types.h), so every field is rendered in the
 * struct's order with its zero value when the manifest leaves it out, as
 * the Go struct would hold it. */
#include "sim/workloads/template_hash.h"
#include "api/quantity.h"
#include "sim/workloads/go_types.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool absent(const ks_tree *v) { return !v || v->type == KT_NULL; }

/* The API server stores objects as protobuf, where an empty list or map
 * is not distinguishable from none: the controller sees nil. */
static bool empty_coll(const ks_tree *v) {
    return absent(v) || ((v->type == KT_MAP || v->type == KT_SEQ) && v->n == 0);
}

static const char *scalar_text(const ks_tree *v, char *buf, int n) {
    if (absent(v)) return NULL;
    if (v->type == KT_INT || v->type == KT_FLOAT) return kt_number_text(v, buf, n);
    if (v->type == KT_BOOL) return v->bval ? "true" : "false";
    return v->text ? v->text : "";
}

/* A quantity as the controller holds it: parsed back from the canonical
 * text the API server serves (Quantity.String()). */
typedef struct {
    char canon[64];
    int64_t value;
    int32_t scale;
    bool cached;        /* ParseQuantity kept the text (canonical forms) */
    const char *format; /* DecimalSI, BinarySI, DecimalExponent */
} goquantity;

static void go_quantity(const ks_tree *v, goquantity *q) {
    memset(q, 0, sizeof(*q));
    q->format = "DecimalSI";
    char buf[64];
    const char *text = scalar_text(v, buf, sizeof(buf));
    ks_quantity kq;
    const char *err;
    if (!text || !ks_quantity_parse(text, &kq, &err)) {
        snprintf(q->canon, sizeof(q->canon), "%s", text ? text : "0");
        return;
    }
    ks_quantity_format(&kq, q->canon, sizeof(q->canon));
    const char *s = q->canon;
    if (strcmp(s, "0") == 0) {
        q->cached = true;
        return;
    }
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    size_t nd = strspn(s, "0123456789");
    char digits[32];
    if (nd == 0 || nd >= sizeof(digits)) return;
    memcpy(digits, s, nd);
    digits[nd] = 0;
    const char *suf = s + nd;
    int64_t num = strtoll(digits, NULL, 10);
    static const struct {
        const char *suf;
        int exp;
    } dec[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3}, {"M", 6},
               {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
    static const char *const bin[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
        if (strcmp(suf, bin[i]) != 0) continue;
        int exp = 10 * (int)(i + 1);
        q->format = "BinarySI";
        int precision = 15 - (int)nd - (int)((float)exp * 3 / 10) - 1;
        if (precision < 0) return; /* upstream keeps an inf.Dec: not rendered */
        __int128 r = (__int128)num << exp;
        if (r > INT64_MAX) return;
        q->value = (int64_t)(neg ? -r : r);
        q->cached = (num & 7) != 0;
        return;
    }
    int exp = 0;
    bool found = false;
    for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]) && !found; i++)
        if (strcmp(suf, dec[i].suf) == 0) exp = dec[i].exp, found = true;
    if (!found && (*suf == 'e' || *suf == 'E')) {
        exp = atoi(suf + 1);
        q->format = "DecimalExponent";
        found = true;
    }
    if (!found || 18 - (int)nd < 0) return;
    q->value = neg ? -num : num;
    q->scale = exp;
    q->cached = exp % 3 == 0 && !(nd >= 3 && strcmp(digits + nd - 3, "000") == 0) && digits[0] != '0';
}

static void spew(ks_strbuf *b, int ti, const ks_tree *v, bool show_type);

static void spew_quantity(ks_strbuf *b, const ks_tree *v) {
    goquantity q;
    go_quantity(v, &q);
    ks_sb_printf(b,
                 "{i:(resource.int64Amount){value:(int64)%" PRId64 " scale:(resource.Scale)%d} "
                 "d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)%s Format:(resource.Format)%s}",
                 q.value, q.scale, q.cached ? q.canon : "", q.format);
}

static void spew_int_or_string(ks_strbuf *b, const ks_tree *v) {
    if (!absent(v) && v->type == KT_INT)
        ks_sb_printf(b, "{Type:(intstr.Type)0 IntVal:(int32)%" PRId64 " StrVal:(string)}", v->ival);
    else if (!absent(v))
        ks_sb_printf(b, "{Type:(intstr.Type)1 IntVal:(int32)0 StrVal:(string)%s}", v->text ? v->text : "");
    else
        ks_sb_puts(b, "{Type:(intstr.Type)0 IntVal:(int32)0 StrVal:(string)}");
}

static int cmp_keys(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A map's keys, sorted (go-spew's SortKeys, encoding/json's order). */
static const char **sorted_keys(const ks_tree *m) {
    const char **k = malloc((m->n ? m->n : 1) * sizeof(char *));
    for (uint32_t i = 0; i < m->n; i++) k[i] = m->keys[i];
    if (m->n) qsort(k, m->n, sizeof(char *), cmp_keys);
    return k;
}

static void spew(ks_strbuf *b, int ti, const ks_tree *v, bool show_type) {
    const ks_gotype *t = &ks_gotypes[ti];
    if (t->kind == KS_GT_PTR) {
        bool nil = absent(v);
        if (nil && !show_type) {
            ks_sb_puts(b, "<nil>");
            return;
        }
        if (show_type) ks_sb_printf(b, "(%s)", t->name);
        else ks_sb_puts(b, "<*>");
        if (nil) ks_sb_puts(b, "<nil>");
        else spew(b, t->elem, v, false);
        return;
    }
    if (show_type) ks_sb_printf(b, "(%s)", t->name);
    if (strcmp(t->name, "resource.Quantity") == 0) {
        spew_quantity(b, v);
        return;
    }
    if (strcmp(t->name, "intstr.IntOrString") == 0) {
        spew_int_or_string(b, v);
        return;
    }
    char buf[64];
    const char *text = scalar_text(v, buf, sizeof(buf));
    switch (t->kind) {
    case KS_GT_BOOL:
        ks_sb_puts(b, text && strcmp(text, "true") == 0 ? "true" : "false");
        break;
    case KS_GT_INT:
    case KS_GT_UINT:
    case KS_GT_FLOAT:
        ks_sb_puts(b, text ? text : "0");
        break;
    case KS_GT_STRING:
        if (text) ks_sb_puts(b, text);
        break;
    case KS_GT_SLICE:
    case KS_GT_ARRAY:
        if (empty_coll(v) || v->type != KT_SEQ) {
            ks_sb_puts(b, "<nil>");
            break;
        }
        ks_sb_putc(b, '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ks_sb_putc(b, ' ');
            spew(b, t->elem, v->items[i], false);
        }
        ks_sb_putc(b, ']');
        break;
    case KS_GT_MAP: {
        if (empty_coll(v) || v->type != KT_MAP) {
            ks_sb_puts(b, "<nil>");
            break;
        }
        const char **keys = sorted_keys(v);
        ks_sb_puts(b, "map[");
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ks_sb_putc(b, ' ');
            ks_sb_printf(b, "%s:", keys[i]);
            spew(b, t->elem, kt_get(v, keys[i]), false);
        }
        ks_sb_putc(b, ']');
        free(keys);
        break;
    }
    case KS_GT_STRUCT:
        ks_sb_putc(b, '{');
        for (int i = 0; i < t->nfields; i++) {
            const ks_gofield *f = &ks_gofields[t->first_field + i];
            if (i) ks_sb_putc(b, ' ');
            ks_sb_printf(b, "%s:", f->go_name);
            const ks_tree *child = NULL;
            if (f->inline_) child = v;
            else if (strcmp(f->json_name, "-") != 0 && !absent(v) && v->type == KT_MAP)
                child = kt_get(v, f->json_name);
            spew(b, f->type, child, true);
        }
        ks_sb_putc(b, '}');
        break;
    case KS_GT_PTR: /* handled above */
    case KS_GT_INTERFACE:
        ks_sb_puts(b, "<nil>");
        break;
    }
}

void wl_spew_template(ks_strbuf *out, const ks_tree *tmpl) { spew(out, 0, tmpl, true); }

/* encoding/json's string: HTML-safe escaping. */
static void json_string(ks_strbuf *b, const char *s) {
    ks_sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            ks_sb_putc(b, '\\');
            ks_sb_putc(b, (char)c);
        } else if (c == '\n') {
            ks_sb_puts(b, "\\n");
        } else if (c == '\r') {
            ks_sb_puts(b, "\\r");
        } else if (c == '\t') {
            ks_sb_puts(b, "\\t");
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            ks_sb_printf(b, "\\u%04x", c);
        } else if (c == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            ks_sb_printf(b, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
            p += 2;
        } else {
            ks_sb_putc(b, (char)c);
        }
    }
    ks_sb_putc(b, '"');
}

/* encoding/json's omitempty test. */
static bool json_empty(int ti, const ks_tree *v) {
    const ks_gotype *t = &ks_gotypes[ti];
    char buf[64];
    const char *text;
    switch (t->kind) {
    case KS_GT_PTR:
    case KS_GT_INTERFACE:
        return absent(v);
    case KS_GT_SLICE:
    case KS_GT_ARRAY:
    case KS_GT_MAP:
        return empty_coll(v);
    case KS_GT_STRING:
        text = scalar_text(v, buf, sizeof(buf));
        return !text || !*text;
    case KS_GT_BOOL:
        text = scalar_text(v, buf, sizeof(buf));
        return !text || strcmp(text, "true") != 0;
    case KS_GT_INT:
    case KS_GT_UINT:
    case KS_GT_FLOAT:
        text = scalar_text(v, buf, sizeof(buf));
        return !text || strtod(text, NULL) == 0;
    case KS_GT_STRUCT:
        return false;
    }
    return false;
}

typedef struct {
    const char *key;
    const ks_gofield *f;
    const ks_tree *v;
} json_member;

static void json_value(ks_strbuf *b, int ti, const ks_tree *v);

static void gather(const ks_gotype *t, const ks_tree *v, json_member **m, size_t *n, size_t *cap) {
    for (int i = 0; i < t->nfields; i++) {
        const ks_gofield *f = &ks_gofields[t->first_field + i];
        if (f->inline_) {
            gather(&ks_gotypes[f->type], v, m, n, cap);
            continue;
        }
        if (strcmp(f->json_name, "-") == 0 || (f->go_name[0] >= 'a' && f->go_name[0] <= 'z')) continue;
        const ks_tree *child = !absent(v) && v->type == KT_MAP ? kt_get(v, f->json_name) : NULL;
        if (f->omitempty && json_empty(f->type, child)) continue;
        if (f->omitzero && absent(child)) continue;
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            *m = realloc(*m, *cap * sizeof(**m));
        }
        (*m)[(*n)++] = (json_member){f->json_name, f, child};
    }
}

static int cmp_member(const void *a, const void *b) {
    return strcmp(((const json_member *)a)->key, ((const json_member *)b)->key);
}

static void json_value(ks_strbuf *b, int ti, const ks_tree *v) {
    const ks_gotype *t = &ks_gotypes[ti];
    if (t->kind == KS_GT_PTR) {
        if (absent(v)) ks_sb_puts(b, "null");
        else json_value(b, t->elem, v);
        return;
    }
    if (strcmp(t->name, "resource.Quantity") == 0) {
        goquantity q;
        go_quantity(v, &q);
        json_string(b, q.canon);
        return;
    }
    if (strcmp(t->name, "intstr.IntOrString") == 0) {
        if (!absent(v) && v->type == KT_INT) ks_sb_printf(b, "%" PRId64, v->ival);
        else json_string(b, !absent(v) && v->text ? v->text : "");
        return;
    }
    if (strcmp(t->name, "v1.Time") == 0) {
        if (absent(v)) ks_sb_puts(b, "null");
        else json_string(b, v->text ? v->text : "");
        return;
    }
    char buf[64];
    const char *text = scalar_text(v, buf, sizeof(buf));
    switch (t->kind) {
    case KS_GT_BOOL:
        ks_sb_puts(b, text && strcmp(text, "true") == 0 ? "true" : "false");
        break;
    case KS_GT_INT:
    case KS_GT_UINT:
    case KS_GT_FLOAT:
        ks_sb_puts(b, text ? text : "0");
        break;
    case KS_GT_STRING:
        json_string(b, text ? text : "");
        break;
    case KS_GT_SLICE:
    case KS_GT_ARRAY:
        if (empty_coll(v) || v->type != KT_SEQ) {
            ks_sb_puts(b, "null");
            break;
        }
        ks_sb_putc(b, '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ks_sb_putc(b, ',');
            json_value(b, t->elem, v->items[i]);
        }
        ks_sb_putc(b, ']');
        break;
    case KS_GT_MAP: {
        if (empty_coll(v) || v->type != KT_MAP) {
            ks_sb_puts(b, "null");
            break;
        }
        const char **keys = sorted_keys(v);
        ks_sb_putc(b, '{');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ks_sb_putc(b, ',');
            json_string(b, keys[i]);
            ks_sb_putc(b, ':');
            json_value(b, t->elem, kt_get(v, keys[i]));
        }
        ks_sb_putc(b, '}');
        free(keys);
        break;
    }
    case KS_GT_STRUCT: {
        json_member *m = NULL;
        size_t n = 0, cap = 0;
        gather(t, v, &m, &n, &cap);
        if (n) qsort(m, n, sizeof(*m), cmp_member);
        ks_sb_putc(b, '{');
        for (size_t i = 0; i < n; i++) {
            if (i) ks_sb_putc(b, ',');
            json_string(b, m[i].key);
            ks_sb_putc(b, ':');
            json_value(b, m[i].f->type, m[i].v);
        }
        ks_sb_putc(b, '}');
        free(m);
        break;
    }
    case KS_GT_PTR: /* handled above */
    case KS_GT_INTERFACE:
        ks_sb_puts(b, "null");
        break;
    }
}

void wl_json_template(ks_strbuf *out, const ks_tree *tmpl) { json_value(out, 0, tmpl); }

void wl_safe_encode(const char *s, char *out) {
    static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
    size_t i = 0;
    for (; s[i]; i++) out[i] = alnum[(unsigned char)s[i] % (sizeof(alnum) - 1)];
    out[i] = 0;
}

void wl_pod_template_hash(const ks_tree *tmpl, int64_t collision_count, char *buf) {
    ks_strbuf b;
    ks_sb_init(&b);
    wl_spew_template(&b, tmpl);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < b.len; i++) h = (h ^ (uint8_t)b.s[i]) * 16777619u;
    if (collision_count >= 0) {
        uint32_t c = (uint32_t)collision_count;
        uint8_t le[8] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24), 0, 0, 0, 0};
        for (int i = 0; i < 8; i++) h = (h ^ le[i]) * 16777619u;
    }
    ks_sb_free(&b);
    char dec[16];
    snprintf(dec, sizeof(dec), "%" PRIu32, h);
    wl_safe_encode(dec, buf);
}

void wl_revision_hash(const ks_tree *tmpl, int64_t collision_count, char *buf) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "{\"spec\":{\"template\":{\"$patch\":\"replace\"");
    ks_strbuf t;
    ks_sb_init(&t);
    wl_json_template(&t, tmpl);
    if (t.len > 2) {
        ks_sb_putc(&b, ',');
        ks_sb_putn(&b, t.s + 1, t.len - 1); /* the template's members and its '}' */
    } else {
        ks_sb_putc(&b, '}');
    }
    ks_sb_puts(&b, "}}");
    if (collision_count >= 0) ks_sb_printf(&b, "%" PRId64, collision_count);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < b.len; i++) h = (h * 16777619u) ^ (uint8_t)b.s[i];
    ks_sb_free(&t);
    ks_sb_free(&b);
    char dec[16];
    snprintf(dec, sizeof(dec), "%" PRIu32, h);
    wl_safe_encode(dec, buf);
}
