/* YAML <-> tree, on libyaml's event API. Plain scalars are typed the way
 * sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) types them, because that is how
 * kubectl and the API server read the same manifest. */
#include "codec/tree.h"
#include "codec/tree_internal.h"
#include "util/strbuf.h"
#include "util/base64.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- plain scalar resolution ----------------------------------------- */

static int digit_val(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* strconv.ParseInt/ParseUint(s, 0, 64): optional sign (signed only), base
 * prefix 0x/0o/0b or a leading 0 for octal. Magnitude in *mag. */
static bool parse_go_int(const char *s, size_t n, bool allow_sign, bool *neg, uint64_t *mag) {
    size_t i = 0;
    *neg = false;
    if (allow_sign && i < n && (s[i] == '+' || s[i] == '-')) {
        *neg = s[i] == '-';
        i++;
    }
    int base = 10;
    if (n - i >= 2 && s[i] == '0') {
        char p = (char)(s[i + 1] | 0x20);
        if (p == 'x') base = 16, i += 2;
        else if (p == 'o') base = 8, i += 2;
        else if (p == 'b') base = 2, i += 2;
        else base = 8, i += 1;
    }
    if (i >= n) return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        int d = digit_val(s[i]);
        if (d >= base) return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *mag = v;
    return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t d0 = i;
    if (i < n && s[i] == '.') {
        i++;
        size_t f0 = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == f0) return false;
    } else {
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d0) return false;
        if (i < n && s[i] == '.') {
            i++;
            while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t e0 = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == e0) return false;
    }
    return i == n;
}

/* Go's ParseFloat on a decimal literal; false on a range error. */
static bool go_float(const char *s, size_t n, double *out) {
    char buf[128];
    char *p = n < sizeof(buf) ? buf : ks_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    errno = 0;
    double d = strtod(p, NULL);
    if (p != buf) free(p);
    if (isinf(d)) return false;
    *out = d;
    return true;
}

/* Go's rule for "_" in a number: only between digits. */
static bool underscores_ok(const char *s, size_t n) {
    char saw = '^';
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            saw = '0';
        } else if (s[i] == '_') {
            if (saw != '0') return false;
            saw = '_';
        } else {
            if (saw == '_') return false;
            saw = '!';
        }
    }
    return saw != '_';
}

static bool in_list(const char *s, size_t n, const char *const *list) {
    if (n > 6) return false; /* longer than every word of the lists */
    for (; *list; list++)
        if (strlen(*list) == n && memcmp(*list, s, n) == 0) return true;
    return false;
}

kt_type kt_resolve_plain(const char *s, size_t n, ks_tree *out) {
    static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE",
                                      "on", "On", "ON", NULL};
    static const char *const no[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE",
                                     "off", "Off", "OFF", NULL};
    static const char *const nul[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const nan[] = {".nan", ".NaN", ".NAN", NULL};
    static const char *const pinf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};
    if (n == 0) return KT_NULL;
    char c = s[0];
    bool digit = (c >= '0' && c <= '9') || c == '+' || c == '-';
    bool word = strchr("yYnNtTfFoO~", c) != NULL;
    if (!digit && !word && c != '.') return KT_STRING;
    if (in_list(s, n, yes)) {
        out->bval = true;
        return KT_BOOL;
    }
    if (in_list(s, n, no)) {
        out->bval = false;
        return KT_BOOL;
    }
    if (in_list(s, n, nul)) return KT_NULL;
    if (in_list(s, n, nan)) {
        out->fval = NAN;
        return KT_FLOAT;
    }
    if (in_list(s, n, pinf)) {
        out->fval = INFINITY;
        return KT_FLOAT;
    }
    if (in_list(s, n, ninf)) {
        out->fval = -INFINITY;
        return KT_FLOAT;
    }
    if (word) return KT_STRING;
    if (c == '.') {
        /* strconv.ParseFloat on the text as is: digit separators allowed */
        if (!underscores_ok(s, n)) return KT_STRING;
        char tmp[128] = {0};
        char *q = n < sizeof(tmp) ? tmp : ks_xmalloc(n + 1);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (s[i] != '_') q[m++] = s[i];
        bool ok = yaml_style_float(q, m) && go_float(q, m, &out->fval);
        if (q != tmp) free(q);
        return ok ? KT_FLOAT : KT_STRING;
    }
    /* numbers: underscores are dropped first */
    char buf[128];
    char *p = n < sizeof(buf) ? buf : ks_xmalloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_') p[m++] = s[i];
    kt_type t = KT_STRING;
    bool neg;
    uint64_t mag;
    if (parse_go_int(p, m, true, &neg, &mag) &&
        (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
        out->ival = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        t = KT_INT;
    } else if (parse_go_int(p, m, false, &neg, &mag)) {
        /* beyond int64: go-yaml yields a uint64; a float is the closest
         * type the tree has */
        out->fval = (double)mag;
        t = KT_FLOAT;
    } else if (yaml_style_float(p, m) && go_float(p, m, &out->fval)) {
        t = KT_FLOAT;
    } else if (m > 3 && p[0] == '-' && p[1] == '0' && p[2] == 'b') {
        /* "-0b101": ParseInt base 2 of the digits, negated */
        uint64_t v = 0;
        bool ok = true;
        for (size_t i = 3; i < m && ok; i++) {
            if (p[i] != '0' && p[i] != '1') ok = false;
            else if (v > (UINT64_MAX >> 1)) ok = false;
            else v = v * 2 + (uint64_t)(p[i] - '0');
        }
        if (ok && v <= (uint64_t)INT64_MAX + 1) {
            out->ival = (int64_t)(0 - v);
            t = KT_INT;
        }
    }
    if (p != buf) free(p);
    return t;
}

/* ---- parser ------------------------------------------------------------ */

typedef struct frame {
    ks_tree *node;
    size_t base;       /* first entry of this frame in the scratch stack */
    bool want_value;   /* map: the next node is a value */
    bool merge_next;   /* map: the pending key was "<<" */
    const char *key;   /* map: the pending key */
    const char *anchor;
    uint64_t size;     /* nodes below, aliases expanded */
    uint32_t height;   /* levels of collections below, this one included */
} frame;

typedef struct anchor {
    const char *name;
    ks_tree *node;
    uint64_t size;
    uint32_t height;
} anchor;

typedef struct parser {
    ks_arena *a;
    const char *name;
    yaml_parser_t yp;
    frame *st;
    size_t nst, capst;
    const char **skeys; /* scratch: keys and items of open frames */
    ks_tree **sitems;
    size_t ns, caps;
    anchor *anchors;
    size_t nanchors, capanchors;
    uint64_t nodes, expanded;
    ks_tree **docs;
    size_t ndocs, capdocs;
    kt_strtab strs;
    char *err;
} parser;

static bool fail(parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, int line, const char *fmt, ...) {
    if (p->err) return false;
    ks_strbuf b;
    ks_sb_init(&b);
    if (line > 0) ks_sb_printf(&b, "%s:%d: ", p->name, line);
    else ks_sb_printf(&b, "%s: ", p->name);
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    ks_sb_puts(&b, tmp);
    p->err = ks_sb_take(&b);
    return false;
}

static void scratch_push(parser *p, const char *key, ks_tree *item) {
    if (p->ns == p->caps) {
        p->caps = p->caps ? p->caps * 2 : 256;
        p->skeys = ks_xrealloc(p->skeys, p->caps * sizeof(*p->skeys));
        p->sitems = ks_xrealloc(p->sitems, p->caps * sizeof(*p->sitems));
    }
    p->skeys[p->ns] = key;
    p->sitems[p->ns++] = item;
}

/* The key text of a scalar map key. Non-string keys become the string
 * sigs.k8s.io/yaml makes of them (true, 12, 1.5). */
static bool key_text(parser *p, ks_tree *k, const char **out) {
    char buf[64];
    switch (k->type) {
    case KT_STRING: *out = k->text; return true;
    case KT_BOOL: *out = k->bval ? "true" : "false"; return true;
    case KT_INT:
        snprintf(buf, sizeof(buf), "%" PRId64, k->ival);
        *out = ks_arena_strdup(p->a, buf);
        return true;
    case KT_FLOAT:
        kt_format_float(k->fval, buf, sizeof(buf), false);
        *out = ks_arena_strdup(p->a, buf);
        return true;
    default:
        return fail(p, k->line, "unsupported map key of type %s", kt_type_name(k->type));
    }
}

static void merge_into(parser *p, ks_tree *src) {
    for (uint32_t i = 0; i < src->n; i++) scratch_push(p, src->keys[i], src->items[i]);
}

/* Attach a finished node (`height` levels of collections deep) to the
 * open collection (or make it a document). */
static bool attach(parser *p, ks_tree *node, uint64_t size, uint32_t height, const char *anchor_name) {
    if (anchor_name) {
        if (p->nanchors == p->capanchors) {
            p->capanchors = p->capanchors ? p->capanchors * 2 : 16;
            p->anchors = ks_xrealloc(p->anchors, p->capanchors * sizeof(*p->anchors));
        }
        p->anchors[p->nanchors++] = (anchor){anchor_name, node, size, height};
    }
    if (p->nst == 0) {
        if (p->ndocs == p->capdocs) {
            p->capdocs = p->capdocs ? p->capdocs * 2 : 16;
            p->docs = ks_xrealloc(p->docs, p->capdocs * sizeof(*p->docs));
        }
        p->docs[p->ndocs++] = node;
        return true;
    }
    frame *f = &p->st[p->nst - 1];
    f->size += size;
    if (height + 1 > f->height) f->height = height + 1;
    if (f->node->type == KT_SEQ) {
        scratch_push(p, NULL, node);
        return true;
    }
    if (!f->want_value) {
        if (node->type == KT_MAP || node->type == KT_SEQ)
            return fail(p, node->line, "unsupported map key of type %s", kt_type_name(node->type));
        f->merge_next = node->type == KT_STRING && !node->quoted && strcmp(node->text, "<<") == 0;
        if (!key_text(p, node, &f->key)) return false;
        f->want_value = true;
        return true;
    }
    f->want_value = false;
    if (f->merge_next) {
        /* "<<: *base" merges a map, "<<: [*a, *b]" several, earlier ones
         * winning; entries written after it override them */
        if (node->type == KT_MAP) {
            merge_into(p, node);
        } else if (node->type == KT_SEQ) {
            for (uint32_t i = node->n; i-- > 0;) {
                if (node->items[i]->type != KT_MAP)
                    return fail(p, node->line, "map merge requires map or sequence of maps as the value");
                merge_into(p, node->items[i]);
            }
        } else {
            return fail(p, node->line, "map merge requires map or sequence of maps as the value");
        }
        return true;
    }
    scratch_push(p, f->key, node);
    return true;
}

static bool open_collection(parser *p, kt_type type, int line, const char *anchor_name) {
    /* Checked here, as the parser reaches the level: libyaml's scanner
     * spends time proportional to the depth on every token, so a deep
     * document must be stopped before it is read to its end. */
    if (p->nst >= KT_MAX_DEPTH)
        return fail(p, line, "maps and lists nested deeper than %d levels", KT_MAX_DEPTH);
    if (p->nst == p->capst) {
        p->capst = p->capst ? p->capst * 2 : 32;
        p->st = ks_xrealloc(p->st, p->capst * sizeof(*p->st));
    }
    frame *f = &p->st[p->nst++];
    memset(f, 0, sizeof(*f));
    f->node = kt_new(p->a, type, line);
    f->base = p->ns;
    f->anchor = anchor_name;
    f->size = 1;
    f->height = 1;
    p->nodes++;
    return true;
}

static bool close_collection(parser *p) {
    frame f = p->st[--p->nst];
    ks_tree *t = f.node;
    size_t n = p->ns - f.base;
    if (n > UINT32_MAX) return fail(p, t->line, "collection too large");
    t->n = (uint32_t)n;
    if (n) {
        size_t cap = kt_cap(t->n);
        t->items = ks_arena_calloc(p->a, cap, sizeof(*t->items));
        memcpy(t->items, p->sitems + f.base, n * sizeof(*t->items));
        if (t->type == KT_MAP) {
            t->keys = ks_arena_calloc(p->a, cap, sizeof(*t->keys));
            memcpy(t->keys, p->skeys + f.base, n * sizeof(*t->keys));
        }
    }
    p->ns = f.base;
    return attach(p, t, f.size, f.height, f.anchor);
}

static bool decode_base64(parser *p, ks_tree *t) {
    size_t n = strlen(t->text), len;
    unsigned char *out = ks_arena_alloc(p->a, n / 4 * 3 + 4);
    if (!ks_base64_decode(t->text, n, out, &len))
        return fail(p, t->line, "!!binary value contains invalid base64 data");
    out[len] = 0;
    t->text = (char *)out;
    return true;
}

#define TAG(x) "tag:yaml.org,2002:" x

static bool on_scalar(parser *p, yaml_event_t *ev) {
    int line = (int)ev->start_mark.line + 1;
    /* Built on the stack: a map key needs only its text, not a node. */
    ks_tree local;
    memset(&local, 0, sizeof(local));
    ks_tree *t = &local;
    t->type = KT_STRING;
    t->line = line;
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (n > KT_MAX_STRING)
        return fail(p, line, "a string of %zu bytes (the limit is %u)", n, KT_MAX_STRING);
    t->text = kt_strtab_get(&p->strs, p->a, v, n);
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    t->quoted = !plain;
    p->nodes++;
    if (!tag || strcmp(tag, "!") == 0) {
        /* an untagged quoted scalar is a string; "!" forces one too */
        if (plain && !tag) t->type = kt_resolve_plain(v, n, t);
    } else if (strcmp(tag, TAG("str")) == 0) {
        t->type = KT_STRING;
    } else if (strcmp(tag, TAG("binary")) == 0) {
        if (!decode_base64(p, t)) return false;
    } else if (strcmp(tag, TAG("int")) == 0 || strcmp(tag, TAG("float")) == 0 ||
               strcmp(tag, TAG("bool")) == 0 || strcmp(tag, TAG("null")) == 0) {
        const char *want = tag + strlen(TAG(""));
        kt_type rt = kt_resolve_plain(v, n, t);
        if (rt == KT_INT && strcmp(want, "float") == 0) {
            t->fval = (double)t->ival;
            rt = KT_FLOAT;
        }
        const char *got = rt == KT_INT ? "int" : rt == KT_FLOAT ? "float" : rt == KT_BOOL ? "bool"
                        : rt == KT_NULL ? "null" : "str";
        if (strcmp(got, want) != 0)
            return fail(p, line, "cannot decode !!%s `%s` as a !!%s", got, t->text, want);
        t->type = rt;
    }
    /* other tags (!foo, !!timestamp) leave the text a string */
    const char *anchor_name =
        ev->data.scalar.anchor ? ks_arena_strdup(p->a, (const char *)ev->data.scalar.anchor) : NULL;
    frame *f = p->nst ? &p->st[p->nst - 1] : NULL;
    if (f && f->node->type == KT_MAP && !f->want_value && !anchor_name) return attach(p, t, 1, 0, NULL);
    if (t->type == KT_FLOAT && (isnan(t->fval) || isinf(t->fval)))
        return fail(p, line, "unsupported value: %s (JSON has no such number)", t->text);
    t = kt_new(p->a, KT_STRING, line);
    *t = local;
    return attach(p, t, 1, 0, anchor_name);
}

static bool on_alias(parser *p, yaml_event_t *ev) {
    const char *name = (const char *)ev->data.alias.anchor;
    int line = (int)ev->start_mark.line + 1;
    for (size_t i = p->nanchors; i-- > 0;) {
        if (strcmp(p->anchors[i].name, name) == 0) {
            /* An alias shares the anchored node. Expanded, aliases can
             * describe exponentially large documents ("billion laughs");
             * refuse those as go-yaml does. */
            p->expanded += p->anchors[i].size;
            if (p->expanded > 1000000 && p->expanded > 10 * p->nodes)
                return fail(p, line, "document contains excessive aliasing");
            /* the alias nests its anchor's levels where it stands */
            if (p->nst + p->anchors[i].height > KT_MAX_DEPTH)
                return fail(p, line, "maps and lists nested deeper than %d levels", KT_MAX_DEPTH);
            return attach(p, p->anchors[i].node, p->anchors[i].size, p->anchors[i].height, NULL);
        }
    }
    return fail(p, line, "unknown anchor '%s' referenced", name);
}

bool kt_parse_yaml(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                   uint32_t *ndocs, char **err) {
    parser p;
    memset(&p, 0, sizeof(p));
    p.a = a;
    p.name = name;
    if (!yaml_parser_initialize(&p.yp)) {
        *err = ks_xasprintf("%s: cannot initialize the YAML parser", name);
        return false;
    }
    yaml_parser_set_input_string(&p.yp, (const unsigned char *)buf, len);
    bool done = false, ok = true;
    while (!done && ok) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p.yp, &ev)) {
            int line = (int)p.yp.problem_mark.line + 1;
            if (p.yp.context)
                fail(&p, line, "%s (%s)", p.yp.problem ? p.yp.problem : "syntax error", p.yp.context);
            else
                fail(&p, line, "%s", p.yp.problem ? p.yp.problem : "syntax error");
            ok = false;
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            /* anchors do not cross documents */
            p.nanchors = 0;
            break;
        case YAML_SCALAR_EVENT: ok = on_scalar(&p, &ev); break;
        case YAML_ALIAS_EVENT: ok = on_alias(&p, &ev); break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            yaml_char_t *an = ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                                   : ev.data.mapping_start.anchor;
            ok = open_collection(&p, ev.type == YAML_SEQUENCE_START_EVENT ? KT_SEQ : KT_MAP, line,
                                 an ? ks_arena_strdup(a, (const char *)an) : NULL);
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: ok = close_collection(&p); break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p.yp);
    if (ok) {
        /* null documents (an empty section between ---) carry nothing */
        uint32_t n = 0;
        ks_tree **out = ks_arena_calloc(a, p.ndocs ? p.ndocs : 1, sizeof(*out));
        for (size_t i = 0; i < p.ndocs; i++)
            if (p.docs[i]->type != KT_NULL) out[n++] = p.docs[i];
        *docs = out;
        *ndocs = n;
    } else {
        *err = p.err ? p.err : ks_xasprintf("%s: invalid YAML", name);
        p.err = NULL;
    }
    free(p.err);
    kt_strtab_free(&p.strs);
    free(p.st);
    free(p.skeys);
    free(p.sitems);
    free(p.anchors);
    free(p.docs);
    return ok;
}

/* ---- emitter ----------------------------------------------------------- */

typedef struct {
    ks_strbuf out;
} sink;

static int write_cb(void *data, unsigned char *buffer, size_t size) {
    ks_sb_putn(&((sink *)data)->out, (const char *)buffer, size);
    return 1;
}

/* YYYY-M-D, alone or followed by a time: a YAML 1.1 timestamp, which
 * some readers (PyYAML, go-yaml) turn into a date when it is plain. */
static bool looks_like_timestamp(const char *s) {
    size_t i = 0;
    for (; i < 4; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    for (int part = 0; part < 2; part++) {
        if (s[i++] != '-') return false;
        size_t d = 0;
        while (s[i] >= '0' && s[i] <= '9' && d < 3) i++, d++;
        if (d == 0 || d > 2) return false;
    }
    return s[i] == '\0' || s[i] == 'T' || s[i] == 't' || s[i] == ' ';
}

/* Would this text read back as a string when written plain (by any
 * common reader)? Timestamps are quoted, as kubectl prints them. */
static bool plain_is_string(const char *s) {
    ks_tree tmp;
    memset(&tmp, 0, sizeof(tmp));
    return kt_resolve_plain(s, strlen(s), &tmp) == KT_STRING && strcmp(s, "<<") != 0 &&
           !looks_like_timestamp(s);
}

static bool emit_scalar(yaml_emitter_t *em, const char *text, bool is_string) {
    yaml_event_t ev;
    char *fixed;
    text = kt_utf8_clean(text, &fixed);
    int plain_ok = is_string ? plain_is_string(text) : 1;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), plain_ok,
                                 1, is_string && !plain_ok ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                           : YAML_ANY_SCALAR_STYLE);
    free(fixed);
    return yaml_emitter_emit(em, &ev);
}

static bool emit_node(yaml_emitter_t *em, const ks_tree *t, int depth) {
    yaml_event_t ev;
    char buf[64];
    if (depth > 10000) return false;
    if (!t) return emit_scalar(em, "null", false);
    switch (t->type) {
    case KT_NULL: return emit_scalar(em, "null", false);
    case KT_BOOL: return emit_scalar(em, t->bval ? "true" : "false", false);
    case KT_INT:
        snprintf(buf, sizeof(buf), "%" PRId64, t->ival);
        return emit_scalar(em, buf, false);
    case KT_FLOAT:
        kt_format_float(t->fval, buf, sizeof(buf), true);
        return emit_scalar(em, buf, false);
    case KT_STRING: return emit_scalar(em, t->text ? t->text : "", true);
    case KT_SEQ:
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if (!yaml_emitter_emit(em, &ev)) return false;
        for (uint32_t i = 0; i < t->n; i++)
            if (!emit_node(em, t->items[i], depth + 1)) return false;
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev);
    case KT_MAP:
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (!yaml_emitter_emit(em, &ev)) return false;
        for (uint32_t i = 0; i < t->n; i++) {
            if (!emit_scalar(em, t->keys[i], true)) return false;
            if (!emit_node(em, t->items[i], depth + 1)) return false;
        }
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev);
    }
    return false;
}

char *kt_to_yaml(const ks_tree *t) {
    yaml_emitter_t em;
    yaml_event_t ev;
    sink s;
    ks_sb_init(&s.out);
    if (!yaml_emitter_initialize(&em)) return NULL;
    yaml_emitter_set_output(&em, write_cb, &s);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    bool ok = true;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    ok = ok && yaml_emitter_emit(&em, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    ok = ok && yaml_emitter_emit(&em, &ev);
    ok = ok && emit_node(&em, t, 0);
    if (ok) {
        yaml_document_end_event_initialize(&ev, 1);
        ok = yaml_emitter_emit(&em, &ev);
    }
    if (ok) {
        yaml_stream_end_event_initialize(&ev);
        ok = yaml_emitter_emit(&em, &ev);
    }
    yaml_emitter_delete(&em);
    if (!ok) {
        ks_sb_free(&s.out);
        return NULL;
    }
    if (!s.out.s) ks_sb_puts(&s.out, "");
    return ks_sb_take(&s.out);
}
