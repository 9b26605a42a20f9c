/* CEL lexer and parser: source text to an AST with the macros expanded
 * into comprehensions, as cel-go's parser does. Recursive descent over
 * the grammar of cel-spec (conditional, ||, &&, relations, + -, * / %,
 * unary ! and -, member access, primaries). */
#include "cel/cel_internal.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    T_EOF = 0,
    T_IDENT,
    T_INT,
    T_UINT,
    T_DOUBLE,
    T_STRING,
    T_BYTES,
    T_PUNCT, /* text in tok.p, length tok.n */
    T_BAD,
} tok_kind;

typedef struct tok {
    tok_kind kind;
    uint32_t pos;
    const char *p;
    uint32_t n;
    /* literal values */
    int64_t i;
    uint64_t u;
    double d;
    char *s; /* decoded string/bytes (arena) */
    uint32_t slen;
    bool neg_ok; /* an int literal whose magnitude is 2^63 (only valid negated) */
} tok;

typedef struct parser {
    ks_arena *a;
    const char *src;
    size_t len;
    size_t at;
    tok cur;
    cel_errors *errs;
    int depth;
    bool failed;
} parser;

#define MAX_DEPTH 250

/* ---- errors ------------------------------------------------------------- */

/* Line and column (code points, 0-based) of a byte offset. */
static void line_col(const char *src, uint32_t pos, int *line, int *col, const char **line_start) {
    int l = 1, c = 0;
    const char *ls = src;
    for (uint32_t i = 0; i < pos && src[i]; i++) {
        if (src[i] == '\n') {
            l++;
            c = 0;
            ls = src + i + 1;
        } else if (((unsigned char)src[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
    *line_start = ls;
}

/* Bytes of the UTF-8 sequence at s (1 for an invalid one, as Go's DecodeRune). */
static size_t utf8_seq_len(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (l > n) return 1;
    for (size_t i = 1; i < l; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) return 1;
    return l;
}

void cel_error_at(cel_errors *e, uint32_t pos, const char *fmt, ...) {
    if (e->n >= 100) return;
    ks_strbuf b;
    ks_sb_init(&b);
    int line, col;
    const char *ls;
    line_col(e->src, pos, &line, &col, &ls);
    ks_sb_printf(&b, "ERROR: <input>:%d:%d: ", line, col + 1);
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ks_sb_puts(&b, buf);
    /* The snippet of the line with a caret under the column. */
    size_t ll = strcspn(ls, "\n");
    if (ll <= 16384) {
        ks_sb_puts(&b, "\n | ");
        for (size_t i = 0; i < ll; i++) ks_sb_putc(&b, ls[i] == '\t' ? ' ' : ls[i]);
        ks_sb_puts(&b, "\n | ");
        /* a character of several bytes is marked with a wide dot or caret */
        size_t k = 0;
        for (int i = 0; i < col && k < ll; i++) {
            size_t l = utf8_seq_len(ls + k, ll - k);
            ks_sb_puts(&b, l > 1 ? "\xef\xbc\x8e" : ".");
            k += l;
        }
        ks_sb_puts(&b, k < ll && utf8_seq_len(ls + k, ll - k) > 1 ? "\xef\xbc\xbe" : "^");
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 4;
        e->v = ks_xrealloc(e->v, (size_t)e->cap * sizeof(*e->v));
    }
    e->v[e->n++] = (cel_error_entry){pos, ks_sb_take(&b)};
}

char *cel_errors_string(cel_errors *e) {
    /* stable insertion sort by position */
    for (int i = 1; i < e->n; i++) {
        cel_error_entry x = e->v[i];
        int j = i;
        while (j > 0 && e->v[j - 1].pos > x.pos) {
            e->v[j] = e->v[j - 1];
            j--;
        }
        e->v[j] = x;
    }
    ks_strbuf b;
    ks_sb_init(&b);
    for (int i = 0; i < e->n; i++) {
        if (i) ks_sb_putc(&b, '\n');
        ks_sb_puts(&b, e->v[i].text);
    }
    return ks_sb_take(&b);
}

void cel_errors_free(cel_errors *e) {
    for (int i = 0; i < e->n; i++) free(e->v[i].text);
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}

/* A syntax error (one is enough); plain: without the "Syntax error: "
 * prefix, for the errors cel-go's parser reports in its own words. */
static void perr_kind(parser *p, bool plain, uint32_t pos, const char *fmt, va_list ap) {
    if (p->failed) return;
    p->failed = true;
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    cel_error_at(p->errs, pos, "%s%s", plain ? "" : "Syntax error: ", buf);
}

static void perr(parser *p, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(parser *p, uint32_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    perr_kind(p, false, pos, fmt, ap);
    va_end(ap);
}

static void perr_plain(parser *p, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr_plain(parser *p, uint32_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    perr_kind(p, true, pos, fmt, ap);
    va_end(ap);
}

/* ---- lexer ------------------------------------------------------------------ */

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int hexval(char c) { return is_digit(c) ? c - '0' : (c | 32) - 'a' + 10; }

static void put_utf8(ks_strbuf *b, uint32_t cp) {
    if (cp < 0x80) {
        ks_sb_putc(b, (char)cp);
    } else if (cp < 0x800) {
        ks_sb_putc(b, (char)(0xC0 | (cp >> 6)));
        ks_sb_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        ks_sb_putc(b, (char)(0xE0 | (cp >> 12)));
        ks_sb_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        ks_sb_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        ks_sb_putc(b, (char)(0xF0 | (cp >> 18)));
        ks_sb_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        ks_sb_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        ks_sb_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* A quoted literal starting at src[at] (after any r/b prefixes). */
static bool lex_string(parser *p, tok *t, bool raw, bool bytes) {
    const char *s = p->src;
    char q = s[p->at];
    bool triple = p->at + 2 < p->len && s[p->at + 1] == q && s[p->at + 2] == q;
    p->at += triple ? 3 : 1;
    ks_strbuf b;
    ks_sb_init(&b);
    for (;;) {
        if (p->at >= p->len) {
            ks_sb_free(&b);
            perr(p, t->pos, "token recognition error at: '%.*s'", (int)(p->len - t->pos), s + t->pos);
            return false;
        }
        char c = s[p->at];
        if (triple) {
            if (c == q && p->at + 2 < p->len + 0 && s[p->at + 1] == q && s[p->at + 2] == q) {
                p->at += 3;
                break;
            }
        } else {
            if (c == q) {
                p->at++;
                break;
            }
            if (c == '\n' || c == '\r') {
                ks_sb_free(&b);
                perr(p, t->pos, "token recognition error at: '%.*s'", (int)(p->at - t->pos), s + t->pos);
                return false;
            }
        }
        if (c != '\\' || raw) {
            ks_sb_putc(&b, c);
            p->at++;
            continue;
        }
        /* escapes */
        p->at++;
        if (p->at >= p->len) continue;
        char e = s[p->at++];
        switch (e) {
        case 'a': ks_sb_putc(&b, '\a'); break;
        case 'b': ks_sb_putc(&b, '\b'); break;
        case 'f': ks_sb_putc(&b, '\f'); break;
        case 'n': ks_sb_putc(&b, '\n'); break;
        case 'r': ks_sb_putc(&b, '\r'); break;
        case 't': ks_sb_putc(&b, '\t'); break;
        case 'v': ks_sb_putc(&b, '\v'); break;
        case '\\': case '\'': case '"': case '`': case '?': ks_sb_putc(&b, e); break;
        case 'x': case 'X': case 'u': case 'U': {
            int nd = (e == 'x' || e == 'X') ? 2 : e == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int k = 0; k < nd; k++) {
                if (p->at >= p->len || !is_hex(s[p->at])) {
                    ks_sb_free(&b);
                    perr(p, t->pos, "token recognition error at: '%.*s'", (int)(p->at - t->pos + 1), s + t->pos);
                    return false;
                }
                v = v * 16 + (uint32_t)hexval(s[p->at++]);
            }
            if (nd == 2 && bytes) ks_sb_putc(&b, (char)v);
            else if (nd != 2 && bytes) {
                ks_sb_free(&b);
                perr(p, t->pos, "unicode escape in a bytes literal");
                return false;
            } else if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
                ks_sb_free(&b);
                perr(p, t->pos, "invalid unicode code point");
                return false;
            } else {
                put_utf8(&b, v);
            }
            break;
        }
        default:
            if (e >= '0' && e <= '3' && p->at + 1 < p->len && s[p->at] >= '0' && s[p->at] <= '7' &&
                s[p->at + 1] >= '0' && s[p->at + 1] <= '7') {
                uint32_t v = (uint32_t)((e - '0') * 64 + (s[p->at] - '0') * 8 + (s[p->at + 1] - '0'));
                p->at += 2;
                if (bytes) ks_sb_putc(&b, (char)v);
                else put_utf8(&b, v);
                break;
            }
            ks_sb_free(&b);
            perr(p, t->pos, "token recognition error at: '%.*s'", (int)(p->at - t->pos), s + t->pos);
            return false;
        }
    }
    t->kind = bytes ? T_BYTES : T_STRING;
    t->slen = (uint32_t)b.len;
    t->s = ks_arena_strndup(p->a, ks_sb_str(&b), b.len);
    ks_sb_free(&b);
    return true;
}

static void lex_number(parser *p, tok *t) {
    const char *s = p->src;
    size_t st = p->at;
    if (s[st] == '0' && st + 1 < p->len && (s[st + 1] == 'x' || s[st + 1] == 'X')) {
        size_t e = st + 2;
        while (e < p->len && is_hex(s[e])) e++;
        unsigned __int128 v = 0;
        bool over = false;
        for (size_t k = st + 2; k < e; k++) {
            v = v * 16 + (unsigned)hexval(s[k]);
            if (v > UINT64_MAX) over = true;
        }
        p->at = e;
        if (p->at < p->len && (s[p->at] == 'u' || s[p->at] == 'U')) {
            p->at++;
            t->kind = T_UINT;
            t->u = (uint64_t)v;
            if (over) perr_plain(p, t->pos, "invalid uint literal");
        } else {
            t->kind = T_INT;
            if (over || v > (unsigned __int128)INT64_MAX + 1) perr_plain(p, t->pos, "invalid int literal");
            t->neg_ok = v == (unsigned __int128)INT64_MAX + 1;
            t->i = (int64_t)(uint64_t)v;
        }
        t->n = (uint32_t)(p->at - st);
        return;
    }
    size_t e = st;
    while (e < p->len && is_digit(s[e])) e++;
    bool dbl = false;
    if (e + 1 < p->len && s[e] == '.' && is_digit(s[e + 1])) {
        dbl = true;
        e++;
        while (e < p->len && is_digit(s[e])) e++;
    }
    if (e < p->len && (s[e] == 'e' || s[e] == 'E')) {
        size_t k = e + 1;
        if (k < p->len && (s[k] == '+' || s[k] == '-')) k++;
        if (k < p->len && is_digit(s[k])) {
            dbl = true;
            while (k < p->len && is_digit(s[k])) k++;
            e = k;
        }
    }
    char buf[128];
    size_t n = e - st < sizeof buf - 1 ? e - st : sizeof buf - 1;
    memcpy(buf, s + st, n);
    buf[n] = 0;
    p->at = e;
    if (dbl) {
        t->kind = T_DOUBLE;
        t->d = strtod(buf, NULL);
    } else if (p->at < p->len && (s[p->at] == 'u' || s[p->at] == 'U')) {
        p->at++;
        t->kind = T_UINT;
        errno = 0;
        t->u = strtoull(buf, NULL, 10);
        if (errno) perr_plain(p, t->pos, "invalid uint literal");
    } else {
        t->kind = T_INT;
        errno = 0;
        unsigned long long v = strtoull(buf, NULL, 10);
        if (errno || v > (unsigned long long)INT64_MAX + 1) perr_plain(p, t->pos, "invalid int literal");
        t->neg_ok = v == (unsigned long long)INT64_MAX + 1;
        t->i = (int64_t)(uint64_t)v;
    }
    t->n = (uint32_t)(p->at - st);
}

static const char *const puncts[] = {"==", "!=", "<=", ">=", "&&", "||", ".?", "[?", "<", ">", "+", "-",
                                     "*",  "/",  "%",  "!",  "?",  ":",  ".",  ",",  "(", ")", "[", "]",
                                     "{",  "}",  NULL};

static void next(parser *p) {
    const char *s = p->src;
    /* whitespace and // comments */
    for (;;) {
        while (p->at < p->len && (s[p->at] == ' ' || s[p->at] == '\t' || s[p->at] == '\n' || s[p->at] == '\r' ||
                                  s[p->at] == '\f'))
            p->at++;
        if (p->at + 1 < p->len && s[p->at] == '/' && s[p->at + 1] == '/') {
            while (p->at < p->len && s[p->at] != '\n') p->at++;
            continue;
        }
        break;
    }
    tok t = {.pos = (uint32_t)p->at, .p = s + p->at};
    if (p->at >= p->len) {
        t.kind = T_EOF;
        p->cur = t;
        return;
    }
    char c = s[p->at];
    /* string prefixes: r, R, b, B and combinations */
    if (c == 'r' || c == 'R' || c == 'b' || c == 'B') {
        size_t k = p->at;
        bool raw = false, bytes = false;
        for (int n = 0; n < 2 && k < p->len; n++) {
            if ((s[k] == 'r' || s[k] == 'R') && !raw) {
                raw = true;
                k++;
            } else if ((s[k] == 'b' || s[k] == 'B') && !bytes) {
                bytes = true;
                k++;
            } else {
                break;
            }
        }
        if (k < p->len && (s[k] == '"' || s[k] == '\'')) {
            p->at = k;
            lex_string(p, &t, raw, bytes);
            t.n = (uint32_t)(p->at - t.pos);
            p->cur = t;
            return;
        }
    }
    if (c == '"' || c == '\'') {
        lex_string(p, &t, false, false);
        t.n = (uint32_t)(p->at - t.pos);
        p->cur = t;
        return;
    }
    if (is_digit(c) || (c == '.' && p->at + 1 < p->len && is_digit(s[p->at + 1]))) {
        lex_number(p, &t);
        p->cur = t;
        return;
    }
    if (is_ident_start(c)) {
        size_t e = p->at;
        while (e < p->len && (is_ident_start(s[e]) || is_digit(s[e]))) e++;
        t.kind = T_IDENT;
        t.n = (uint32_t)(e - p->at);
        p->at = e;
        p->cur = t;
        return;
    }
    for (int i = 0; puncts[i]; i++) {
        size_t n = strlen(puncts[i]);
        if (p->at + n <= p->len && memcmp(s + p->at, puncts[i], n) == 0) {
            t.kind = T_PUNCT;
            t.n = (uint32_t)n;
            p->at += n;
            p->cur = t;
            return;
        }
    }
    t.kind = T_BAD;
    t.n = 1;
    p->cur = t;
    perr(p, t.pos, "token recognition error at: '%c'", c);
    p->at++;
}

static bool is_p(const parser *p, const char *punct) {
    return p->cur.kind == T_PUNCT && p->cur.n == strlen(punct) && memcmp(p->cur.p, punct, p->cur.n) == 0;
}

static bool is_kw(const parser *p, const char *kw) {
    return p->cur.kind == T_IDENT && p->cur.n == strlen(kw) && memcmp(p->cur.p, kw, p->cur.n) == 0;
}

static const char *tok_text(parser *p) {
    if (p->cur.kind == T_EOF) return "<EOF>";
    return ks_arena_strndup(p->a, p->cur.p, p->cur.n);
}

static bool expect(parser *p, const char *punct) {
    if (is_p(p, punct)) {
        next(p);
        return true;
    }
    perr(p, p->cur.pos, "mismatched input '%s' expecting '%s'", tok_text(p), punct);
    return false;
}

/* ---- AST construction ------------------------------------------------------- */

static cel_expr *node(parser *p, cel_ekind k, uint32_t pos) {
    cel_expr *e = ks_arena_alloc(p->a, sizeof(*e));
    e->kind = (uint8_t)k;
    e->pos = pos;
    return e;
}

static cel_expr *call(parser *p, uint32_t pos, cel_expr *target, const char *fn, cel_expr **args, uint32_t n) {
    cel_expr *e = node(p, CE_CALL, pos);
    e->call.target = target;
    e->call.fn = fn;
    e->call.nargs = n;
    e->call.args = ks_arena_calloc(p->a, n ? n : 1, sizeof(cel_expr *));
    for (uint32_t i = 0; i < n; i++) e->call.args[i] = args[i];
    return e;
}

static cel_expr *call1(parser *p, uint32_t pos, const char *fn, cel_expr *a) { return call(p, pos, NULL, fn, &a, 1); }
static cel_expr *call2(parser *p, uint32_t pos, const char *fn, cel_expr *a, cel_expr *b) {
    cel_expr *v[2] = {a, b};
    return call(p, pos, NULL, fn, v, 2);
}
static cel_expr *call3(parser *p, uint32_t pos, const char *fn, cel_expr *a, cel_expr *b, cel_expr *c) {
    cel_expr *v[3] = {a, b, c};
    return call(p, pos, NULL, fn, v, 3);
}

static cel_expr *ident(parser *p, uint32_t pos, const char *name) {
    cel_expr *e = node(p, CE_IDENT, pos);
    e->ident.name = name;
    e->ident.slot = -1;
    return e;
}

static cel_expr *lit(parser *p, uint32_t pos, cel_val v) {
    cel_expr *e = node(p, CE_LIT, pos);
    e->lit = v;
    return e;
}

static cel_expr *empty_list(parser *p, uint32_t pos) {
    cel_expr *e = node(p, CE_LIST, pos);
    e->list.elems = NULL;
    e->list.n = 0;
    return e;
}

static cel_expr *list1(parser *p, uint32_t pos, cel_expr *x) {
    cel_expr *e = node(p, CE_LIST, pos);
    e->list.elems = ks_arena_calloc(p->a, 1, sizeof(cel_expr *));
    e->list.elems[0] = x;
    e->list.optional = ks_arena_calloc(p->a, 1, sizeof(bool));
    e->list.n = 1;
    return e;
}

static cel_expr *comp(parser *p, uint32_t pos, const char *iter, const char *iter2, cel_expr *range, const char *accu,
                      cel_expr *init, cel_expr *cond, cel_expr *step, cel_expr *result) {
    cel_expr *e = node(p, CE_COMP, pos);
    e->comp.iter_var = iter;
    e->comp.iter_var2 = iter2;
    e->comp.range = range;
    e->comp.accu_var = accu;
    e->comp.init = init;
    e->comp.cond = cond;
    e->comp.step = step;
    e->comp.result = result;
    return e;
}

#define ACCU "@result"

/* ---- macros ----------------------------------------------------------------- */

/* A simple identifier argument (the variable of a comprehension). */
static const char *simple_name_msg(parser *p, cel_expr *e, const char *msg);
static const char *simple_name(parser *p, cel_expr *e) { return simple_name_msg(p, e, "argument must be a simple name"); }
static const char *simple_name_msg(parser *p, cel_expr *e, const char *msg) {
    if (e->kind == CE_IDENT) return e->ident.name;
    cel_error_at(p->errs, e->pos, "%s", msg);
    p->failed = true;
    return NULL;
}

static bool reserved_var(parser *p, cel_expr *e, const char *name) {
    if (strcmp(name, ACCU) == 0 || strcmp(name, "__result__") == 0) {
        cel_error_at(p->errs, e->pos, "iteration variable overwrites accumulator variable");
        p->failed = true;
        return true;
    }
    return false;
}

/* Expand a receiver-style macro; NULL when fn/nargs is not a macro. */
static cel_expr *expand_member_macro(parser *p, uint32_t pos, cel_expr *target, const char *fn, cel_expr **args,
                                     uint32_t n) {
    bool all = strcmp(fn, "all") == 0, exists = strcmp(fn, "exists") == 0;
    bool one = strcmp(fn, "exists_one") == 0 || strcmp(fn, "existsOne") == 0;
    if ((all || exists || one) && (n == 2 || n == 3)) {
        const char *v = simple_name(p, args[0]);
        const char *v2 = n == 3 ? simple_name(p, args[1]) : NULL;
        if (!v || (n == 3 && !v2)) return NULL;
        if (reserved_var(p, args[0], v) || (v2 && reserved_var(p, args[1], v2))) return NULL;
        cel_expr *pred = args[n - 1];
        cel_expr *acc = ident(p, pos, ACCU);
        if (all) {
            return comp(p, pos, v, v2, target, ACCU, lit(p, pos, cel_bool(true)),
                        call1(p, pos, OP_NOT_STRICTLY_FALSE, ident(p, pos, ACCU)), call2(p, pos, OP_AND, acc, pred),
                        ident(p, pos, ACCU));
        }
        if (exists) {
            return comp(p, pos, v, v2, target, ACCU, lit(p, pos, cel_bool(false)),
                        call1(p, pos, OP_NOT_STRICTLY_FALSE, call1(p, pos, OP_NOT, ident(p, pos, ACCU))),
                        call2(p, pos, OP_OR, acc, pred), ident(p, pos, ACCU));
        }
        return comp(p, pos, v, v2, target, ACCU, lit(p, pos, cel_int(0)), lit(p, pos, cel_bool(true)),
                    call3(p, pos, OP_COND, pred, call2(p, pos, "_+_", acc, lit(p, pos, cel_int(1))),
                          ident(p, pos, ACCU)),
                    call2(p, pos, "_==_", ident(p, pos, ACCU), lit(p, pos, cel_int(1))));
    }
    if ((strcmp(fn, "map") == 0 && (n == 2 || n == 3)) || (strcmp(fn, "filter") == 0 && n == 2)) {
        const char *v = simple_name_msg(p, args[0], "argument is not an identifier");
        if (!v || reserved_var(p, args[0], v)) return NULL;
        cel_expr *acc = ident(p, pos, ACCU);
        cel_expr *step;
        if (strcmp(fn, "filter") == 0) {
            step = call3(p, pos, OP_COND, args[1], call2(p, pos, "_+_", acc, list1(p, pos, ident(p, pos, v))),
                         ident(p, pos, ACCU));
        } else if (n == 2) {
            step = call2(p, pos, "_+_", acc, list1(p, pos, args[1]));
        } else {
            step = call3(p, pos, OP_COND, args[1], call2(p, pos, "_+_", acc, list1(p, pos, args[2])),
                         ident(p, pos, ACCU));
        }
        return comp(p, pos, v, NULL, target, ACCU, empty_list(p, pos), lit(p, pos, cel_bool(true)), step,
                    ident(p, pos, ACCU));
    }
    /* lists (v3) sortBy(v, key): the list bound to a variable, sorted by
     * the keys its map(v, key) gives (cel-go's sortByMacro) */
    if (strcmp(fn, "sortBy") == 0 && n == 2) {
        if (target->kind != CE_LIST && target->kind != CE_SELECT && target->kind != CE_IDENT &&
            target->kind != CE_COMP && target->kind != CE_CALL) {
            cel_error_at(p->errs, target->pos,
                         "sortBy can only be applied to a list, identifier, comprehension, call or select expression");
            p->failed = true;
            return NULL;
        }
        const char *in = "@__sortBy_input__";
        cel_expr *keys = expand_member_macro(p, pos, ident(p, pos, in), "map", args, 2);
        if (!keys) return NULL;
        cel_expr *sorted = call(p, pos, ident(p, pos, in), "@sortByAssociatedKeys", &keys, 1);
        return comp(p, pos, "#unused", NULL, empty_list(p, pos), in, target, lit(p, pos, cel_bool(false)),
                    ident(p, pos, in), sorted);
    }
    /* cel.bind(var, init, expr) */
    if (strcmp(fn, "bind") == 0 && n == 3 && target->kind == CE_IDENT && strcmp(target->ident.name, "cel") == 0) {
        const char *v = simple_name(p, args[0]);
        if (!v) return NULL;
        return comp(p, pos, "#unused", NULL, empty_list(p, pos), v, args[1], lit(p, pos, cel_bool(false)),
                    ident(p, pos, v), args[2]);
    }
    /* optional.optMap(v, expr) / optFlatMap(v, expr) */
    if ((strcmp(fn, "optMap") == 0 || strcmp(fn, "optFlatMap") == 0) && n == 2) {
        const char *v = simple_name(p, args[0]);
        if (!v) return NULL;
        cel_expr *value = call(p, pos, target, "value", NULL, 0);
        cel_expr *mapped = strcmp(fn, "optMap") == 0 ? call(p, pos, NULL, "optional.of", &args[1], 1) : args[1];
        cel_expr *bound = comp(p, pos, "#unused", NULL, empty_list(p, pos), v, value, lit(p, pos, cel_bool(false)),
                               ident(p, pos, v), mapped);
        return call3(p, pos, OP_COND, call(p, pos, target, "hasValue", NULL, 0), bound,
                     call(p, pos, NULL, "optional.none", NULL, 0));
    }
    return NULL;
}

/* ---- grammar ------------------------------------------------------------------- */

static cel_expr *parse_expr(parser *p);

static cel_expr *bad(parser *p) { return lit(p, p->cur.pos, cel_null()); }

/* expr, expr, ... up to `close` (consumed). Optional entries ("?x") when
 * allow_opt; their flags go to *opt. */
static uint32_t parse_list(parser *p, const char *close, cel_expr ***out, bool allow_opt, bool **opt) {
    uint32_t n = 0, cap = 4;
    cel_expr **v = ks_arena_calloc(p->a, cap, sizeof(*v));
    bool *o = allow_opt ? ks_arena_calloc(p->a, cap, sizeof(bool)) : NULL;
    while (!is_p(p, close) && !p->failed) {
        bool is_opt = false;
        if (allow_opt && is_p(p, "?")) {
            is_opt = true;
            next(p);
        }
        cel_expr *e = parse_expr(p);
        if (n == cap) {
            cel_expr **nv = ks_arena_calloc(p->a, cap * 2, sizeof(*nv));
            memcpy(nv, v, cap * sizeof(*v));
            v = nv;
            if (o) {
                bool *no = ks_arena_calloc(p->a, cap * 2, sizeof(bool));
                memcpy(no, o, cap * sizeof(bool));
                o = no;
            }
            cap *= 2;
        }
        if (o) o[n] = is_opt;
        v[n++] = e;
        if (is_p(p, ",")) {
            next(p);
            continue;
        }
        break;
    }
    expect(p, close);
    *out = v;
    if (opt) *opt = o;
    return n;
}

static const char *ident_text(parser *p) { return ks_arena_strndup(p->a, p->cur.p, p->cur.n); }

static const char *const reserved[] = {"as",  "break", "const",  "continue", "else",      "for",  "function",
                                       "if",  "import", "let",   "loop",     "package",   "namespace",
                                       "return", "var", "void",  "while",    NULL};

static bool is_reserved(const char *s) {
    for (int i = 0; reserved[i]; i++)
        if (strcmp(reserved[i], s) == 0) return true;
    return false;
}

static cel_expr *parse_primary(parser *p) {
    tok t = p->cur;
    switch (t.kind) {
    case T_INT:
        next(p);
        if (t.neg_ok) perr_plain(p, t.pos, "invalid int literal");
        return lit(p, t.pos, cel_int(t.i));
    case T_UINT: next(p); return lit(p, t.pos, cel_uint(t.u));
    case T_DOUBLE: next(p); return lit(p, t.pos, cel_double(t.d));
    case T_STRING: next(p); return lit(p, t.pos, cel_str(t.s, t.slen));
    case T_BYTES: {
        next(p);
        cel_val v = cel_str(t.s, t.slen);
        v.kind = CV_BYTES;
        return lit(p, t.pos, v);
    }
    case T_IDENT: {
        const char *name = ident_text(p);
        next(p);
        if (strcmp(name, "true") == 0) return lit(p, t.pos, cel_bool(true));
        if (strcmp(name, "false") == 0) return lit(p, t.pos, cel_bool(false));
        if (strcmp(name, "null") == 0) return lit(p, t.pos, cel_null());
        if (strcmp(name, "in") == 0 || is_reserved(name)) {
            perr_plain(p, t.pos, "reserved identifier: %s", name);
            return bad(p);
        }
        if (is_p(p, "(")) {
            uint32_t open = p->cur.pos;
            next(p);
            cel_expr **args;
            uint32_t n = parse_list(p, ")", &args, false, NULL);
            if (strcmp(name, "has") == 0 && n == 1) {
                cel_expr *a = args[0];
                if (a->kind != CE_SELECT) {
                    cel_error_at(p->errs, a->pos, "invalid argument to has() macro");
                    p->failed = true;
                    return bad(p);
                }
                a->test_only = true;
                a->pos = open; /* cel-go places the presence test at the macro's call */
                return a;
            }
            return call(p, open, NULL, name, args, n);
        }
        return ident(p, t.pos, name);
    }
    case T_PUNCT:
        if (is_p(p, "(")) {
            next(p);
            cel_expr *e = parse_expr(p);
            expect(p, ")");
            return e;
        }
        if (is_p(p, "[?")) {
            /* "[?x, ...]": the lexer took "[?" for an optional index */
            p->at = t.pos + 1;
            next(p);
            cel_expr *e = node(p, CE_LIST, t.pos);
            e->list.n = parse_list(p, "]", &e->list.elems, true, &e->list.optional);
            return e;
        }
        if (is_p(p, "[")) {
            next(p);
            cel_expr *e = node(p, CE_LIST, t.pos);
            e->list.n = parse_list(p, "]", &e->list.elems, true, &e->list.optional);
            return e;
        }
        if (is_p(p, "{")) {
            next(p);
            cel_expr *e = node(p, CE_MAP, t.pos);
            uint32_t n = 0, cap = 4;
            e->map.keys = ks_arena_calloc(p->a, cap, sizeof(cel_expr *));
            e->map.vals = ks_arena_calloc(p->a, cap, sizeof(cel_expr *));
            e->map.optional = ks_arena_calloc(p->a, cap, sizeof(bool));
            while (!is_p(p, "}") && !p->failed) {
                bool is_opt = false;
                if (is_p(p, "?")) {
                    is_opt = true;
                    next(p);
                }
                cel_expr *k = parse_expr(p);
                expect(p, ":");
                cel_expr *v = parse_expr(p);
                if (n == cap) {
                    cel_expr **nk = ks_arena_calloc(p->a, cap * 2, sizeof(cel_expr *));
                    cel_expr **nv = ks_arena_calloc(p->a, cap * 2, sizeof(cel_expr *));
                    bool *no = ks_arena_calloc(p->a, cap * 2, sizeof(bool));
                    memcpy(nk, e->map.keys, cap * sizeof(cel_expr *));
                    memcpy(nv, e->map.vals, cap * sizeof(cel_expr *));
                    memcpy(no, e->map.optional, cap * sizeof(bool));
                    e->map.keys = nk;
                    e->map.vals = nv;
                    e->map.optional = no;
                    cap *= 2;
                }
                e->map.keys[n] = k;
                e->map.vals[n] = v;
                e->map.optional[n] = is_opt;
                n++;
                if (is_p(p, ",")) {
                    next(p);
                    continue;
                }
                break;
            }
            expect(p, "}");
            e->map.n = n;
            return e;
        }
        if (is_p(p, ".")) {
            /* a leading dot: an absolute name (.device) */
            next(p);
            if (p->cur.kind != T_IDENT) break;
            return parse_primary(p);
        }
        break;
    default: break;
    }
    perr(p, t.pos, "mismatched input '%s' expecting <expression>", tok_text(p));
    if (t.kind != T_EOF) next(p);
    return bad(p);
}

/* The dotted name a chain of identifiers spells (a.b.c). */
static void dotted_name(const cel_expr *e, ks_strbuf *b) {
    if (e->kind == CE_SELECT) {
        dotted_name(e->sel.operand, b);
        ks_sb_putc(b, '.');
        ks_sb_puts(b, e->sel.field);
    } else {
        ks_sb_puts(b, e->ident.name);
    }
}

/* A message literal, Name{field: value, ?field: optional}: the call
 * "@msg" of the type name, then per field its name (at the ':', "?" in
 * front when optional) and its value; the checker and time.c read it. */
static cel_expr *parse_message(parser *p, const cel_expr *name) {
    uint32_t open = p->cur.pos;
    next(p);
    uint32_t n = 1, cap = 8;
    cel_expr **args = ks_arena_calloc(p->a, cap, sizeof(cel_expr *));
    ks_strbuf b;
    ks_sb_init(&b);
    dotted_name(name, &b);
    args[0] = lit(p, name->pos, cel_str(ks_arena_strdup(p->a, ks_sb_str(&b)), b.len));
    ks_sb_free(&b);
    while (!is_p(p, "}") && !p->failed) {
        if (is_p(p, ",") && n == 1) { /* Name{,} */
            next(p);
            break;
        }
        bool opt = is_p(p, "?");
        if (opt) next(p);
        if (p->cur.kind != T_IDENT) {
            perr(p, p->cur.pos, "mismatched input '%s' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}", tok_text(p));
            return bad(p);
        }
        char *field = ks_arena_alloc_uninit(p->a, p->cur.n + 2);
        size_t fl = 0;
        if (opt) field[fl++] = '?';
        memcpy(field + fl, p->cur.p, p->cur.n);
        field[fl + p->cur.n] = 0;
        next(p);
        uint32_t colon = p->cur.pos;
        if (!expect(p, ":")) return bad(p);
        cel_expr *v = parse_expr(p);
        if (n + 2 > cap) {
            cel_expr **na = ks_arena_calloc(p->a, cap * 2, sizeof(cel_expr *));
            memcpy(na, args, n * sizeof(cel_expr *));
            args = na;
            cap *= 2;
        }
        args[n++] = lit(p, colon, cel_str(field, strlen(field)));
        args[n++] = v;
        if (!is_p(p, ",")) break;
        next(p);
    }
    expect(p, "}");
    return call(p, open, NULL, "@msg", args, n);
}

static cel_expr *parse_member(parser *p) {
    /* only a name as written (a.b.c, .a.b) can be a message type */
    bool qual = p->cur.kind == T_IDENT || is_p(p, ".");
    cel_expr *e = parse_primary(p);
    qual = qual && e->kind == CE_IDENT;
    while (!p->failed) {
        if (qual && is_p(p, "{")) {
            e = parse_message(p, e);
            qual = false;
            continue;
        }
        bool was_qual = qual;
        qual = false;
        if (is_p(p, ".") || is_p(p, ".?")) {
            bool opt = is_p(p, ".?");
            uint32_t dot = p->cur.pos;
            next(p);
            if (p->cur.kind != T_IDENT) {
                perr(p, p->cur.pos, "mismatched input '%s' expecting IDENTIFIER", tok_text(p));
                return e;
            }
            const char *name = ident_text(p);
            uint32_t name_pos = p->cur.pos;
            next(p);
            if (!opt && is_p(p, "(")) {
                uint32_t open = p->cur.pos;
                next(p);
                cel_expr **args;
                uint32_t n = parse_list(p, ")", &args, false, NULL);
                cel_expr *m = expand_member_macro(p, open, e, name, args, n);
                if (p->failed) return e;
                e = m ? m : call(p, open, e, name, args, n);
                continue;
            }
            if (opt) {
                cel_val s = cel_str(name, strlen(name));
                e = call2(p, dot, OP_OPT_SELECT, e, lit(p, name_pos, s));
                continue;
            }
            cel_expr *s = node(p, CE_SELECT, dot);
            s->sel.operand = e;
            s->sel.field = name;
            e = s;
            qual = was_qual;
            continue;
        }
        if (is_p(p, "[") || is_p(p, "[?")) {
            bool opt = is_p(p, "[?");
            uint32_t open = p->cur.pos;
            next(p);
            cel_expr *idx = parse_expr(p);
            expect(p, "]");
            e = call2(p, open, opt ? OP_OPT_INDEX : OP_INDEX, e, idx);
            continue;
        }
        break;
    }
    return e;
}

static cel_expr *parse_unary(parser *p) {
    if (is_p(p, "!") || is_p(p, "-")) {
        bool neg = is_p(p, "-");
        uint32_t pos = p->cur.pos;
        int count = 0;
        while (neg ? is_p(p, "-") : is_p(p, "!")) {
            count++;
            next(p);
        }
        /* -<number> is a literal */
        if (neg && count == 1 && (p->cur.kind == T_INT || p->cur.kind == T_DOUBLE)) {
            tok t = p->cur;
            next(p);
            cel_expr *l = t.kind == T_INT ? lit(p, pos, cel_int((int64_t)(0 - (uint64_t)t.i))) : lit(p, pos, cel_double(-t.d));
            /* a literal still takes member suffixes: -1.foo() is (-1).foo() */
            (void)l;
            if (is_p(p, ".") || is_p(p, "[")) {
                /* rare: reparse as negation of a member expression */
                cel_expr *m = l;
                while (!p->failed && (is_p(p, ".") || is_p(p, "["))) {
                    if (is_p(p, "[")) {
                        uint32_t open = p->cur.pos;
                        next(p);
                        cel_expr *idx = parse_expr(p);
                        expect(p, "]");
                        m = call2(p, open, OP_INDEX, m, idx);
                    } else {
                        uint32_t dot = p->cur.pos;
                        next(p);
                        if (p->cur.kind != T_IDENT) {
                            perr(p, p->cur.pos, "mismatched input '%s' expecting IDENTIFIER", tok_text(p));
                            return m;
                        }
                        const char *name = ident_text(p);
                        next(p);
                        if (is_p(p, "(")) {
                            uint32_t open = p->cur.pos;
                            next(p);
                            cel_expr **args;
                            uint32_t n = parse_list(p, ")", &args, false, NULL);
                            cel_expr *mm = expand_member_macro(p, open, m, name, args, n);
                            m = mm ? mm : call(p, open, m, name, args, n);
                        } else {
                            cel_expr *s = node(p, CE_SELECT, dot);
                            s->sel.operand = m;
                            s->sel.field = name;
                            m = s;
                        }
                    }
                }
                return m;
            }
            return l;
        }
        cel_expr *m = parse_member(p);
        if (count % 2 == 0) return m; /* cel-go drops double negations */
        return call1(p, pos, neg ? OP_NEG : OP_NOT, m);
    }
    return parse_member(p);
}

static cel_expr *parse_mul(parser *p) {
    cel_expr *e = parse_unary(p);
    while (!p->failed && (is_p(p, "*") || is_p(p, "/") || is_p(p, "%"))) {
        const char *op = is_p(p, "*") ? "_*_" : is_p(p, "/") ? "_/_" : "_%_";
        uint32_t pos = p->cur.pos;
        next(p);
        e = call2(p, pos, op, e, parse_unary(p));
    }
    return e;
}

static cel_expr *parse_add(parser *p) {
    cel_expr *e = parse_mul(p);
    while (!p->failed && (is_p(p, "+") || is_p(p, "-"))) {
        const char *op = is_p(p, "+") ? "_+_" : "_-_";
        uint32_t pos = p->cur.pos;
        next(p);
        e = call2(p, pos, op, e, parse_mul(p));
    }
    return e;
}

static cel_expr *parse_rel(parser *p) {
    cel_expr *e = parse_add(p);
    for (;;) {
        if (p->failed) return e;
        const char *op = NULL;
        if (is_p(p, "==")) op = "_==_";
        else if (is_p(p, "!=")) op = "_!=_";
        else if (is_p(p, "<")) op = "_<_";
        else if (is_p(p, "<=")) op = "_<=_";
        else if (is_p(p, ">")) op = "_>_";
        else if (is_p(p, ">=")) op = "_>=_";
        else if (is_kw(p, "in")) op = OP_IN;
        if (!op) return e;
        uint32_t pos = p->cur.pos;
        next(p);
        e = call2(p, pos, op, e, parse_add(p));
    }
}

static cel_expr *parse_and(parser *p) {
    cel_expr *e = parse_rel(p);
    while (!p->failed && is_p(p, "&&")) {
        uint32_t pos = p->cur.pos;
        next(p);
        e = call2(p, pos, OP_AND, e, parse_rel(p));
    }
    return e;
}

static cel_expr *parse_or(parser *p) {
    cel_expr *e = parse_and(p);
    while (!p->failed && is_p(p, "||")) {
        uint32_t pos = p->cur.pos;
        next(p);
        e = call2(p, pos, OP_OR, e, parse_and(p));
    }
    return e;
}

static cel_expr *parse_expr(parser *p) {
    if (++p->depth > MAX_DEPTH) {
        perr(p, p->cur.pos, "expression recursion limit exceeded");
        p->depth--;
        return bad(p);
    }
    cel_expr *e = parse_or(p);
    if (!p->failed && is_p(p, "?")) {
        uint32_t pos = p->cur.pos;
        next(p);
        cel_expr *a = parse_or(p);
        expect(p, ":");
        cel_expr *b = parse_expr(p);
        e = call3(p, pos, OP_COND, e, a, b);
    }
    p->depth--;
    return e;
}

cel_expr *cel_parse(ks_arena *a, const char *src, cel_errors *errs) {
    parser p = {.a = a, .src = src, .len = strlen(src), .errs = errs};
    next(&p);
    cel_expr *e = parse_expr(&p);
    if (!p.failed && p.cur.kind != T_EOF)
        perr(&p, p.cur.pos, "extraneous input '%s' expecting <EOF>", tok_text(&p));
    if (errs->n) return NULL;
    return e;
}
