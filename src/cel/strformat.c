/* cel-go's strings extension string.format at the version DRA's
 * environment enables (ext.Strings(ext.StringsVersion(2)): the clauses
 * of ext/formatting.go with the en_US locale), and its compile-time
 * validator for a constant format string applied to a list literal.
 *
 * With that locale, %f and %e print through golang.org/x/text/message:
 * %f groups the integer digits with commas and writes infinities as ∞;
 * %e writes the mantissa with 6 digits, "×10" and a superscript exponent
 * of at least two digits, and takes the clause's precision as the width
 * (padded with spaces on the left, in characters). Negative zero loses
 * its sign in both. Inside lists and maps, doubles print as Go's "%.6f".
 * Timestamps and durations print as string() gives them, inside lists
 * and maps as timestamp("...") and duration("..."). */
#include "cel/cel_internal.h"
#include "cel/time.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- clauses ------------------------------------------------------------------------- */

typedef struct fmt_out {
    cel_eval *ev;
    ks_strbuf *b;
    ks_strbuf *err; /* the error text, without "error during formatting: " */
} fmt_out;

static bool fail(fmt_out *o, const char *what, cel_val v) {
    ks_sb_printf(o->err, "%s, was given %s", what, cel_val_type_name(v));
    return false;
}

#define STRING_CLAUSE                                                                                          \
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, " \
    "and timestamps"

static bool fmt_string(fmt_out *o, cel_val v);

/* Go's fmt "%.6f" (inside lists and maps) */
static void go_fixed6(ks_strbuf *b, double d) {
    if (isnan(d)) ks_sb_puts(b, "NaN");
    else if (isinf(d)) ks_sb_puts(b, d > 0 ? "+Inf" : "-Inf");
    else ks_sb_printf(b, "%.6f", d);
}

static bool fmt_decimal(fmt_out *o, cel_val v) {
    if (v.kind == CV_INT) ks_sb_printf(o->b, "%lld", (long long)v.i);
    else if (v.kind == CV_UINT) ks_sb_printf(o->b, "%llu", (unsigned long long)v.u);
    else return fail(o, "decimal clause can only be used on integers", v);
    return true;
}

/* A member of a list or a map value: printed as a CEL literal would be. */
static bool fmt_member(fmt_out *o, cel_val v) {
    switch (v.kind) {
    case CV_INT:
    case CV_UINT: return fmt_decimal(o, v);
    case CV_STRING:
    case CV_BYTES: {
        ks_strbuf s;
        ks_sb_init(&s);
        ks_strbuf *saved = o->b;
        o->b = &s;
        bool ok = fmt_string(o, v);
        o->b = saved;
        if (ok) {
            if (v.kind == CV_BYTES) ks_sb_putc(o->b, 'b');
            ks_sb_quote(o->b, ks_sb_str(&s), s.len);
        }
        ks_sb_free(&s);
        return ok;
    }
    case CV_BOOL:
    case CV_NULL:
    case CV_TYPE:
    case CV_LIST:
    case CV_MAP:
    case CV_DEVMAP: return fmt_string(o, v);
    case CV_TIMESTAMP:
    case CV_DURATION: {
        cel_val s = cel_f_time_string(o->ev, &v, 1);
        ks_sb_printf(o->b, "%s(\"%.*s\")", v.kind == CV_TIMESTAMP ? "timestamp" : "duration", (int)s.len, s.s);
        return true;
    }
    case CV_DOUBLE:
        if (isnan(v.d) || isinf(v.d)) {
            ks_sb_putc(o->b, '"');
            go_fixed6(o->b, v.d);
            ks_sb_putc(o->b, '"');
        } else {
            go_fixed6(o->b, v.d);
        }
        return true;
    default: ks_sb_printf(o->err, "no formatting function for %s", cel_val_type_name(v)); return false;
    }
}

static bool fmt_list(fmt_out *o, cel_val v) {
    ks_sb_putc(o->b, '[');
    for (uint32_t i = 0; i < v.list->n; i++) {
        if (i) ks_sb_puts(o->b, ", ");
        if (!fmt_member(o, v.list->v[i])) return false;
    }
    ks_sb_putc(o->b, ']');
    return true;
}

typedef struct pair {
    char *k, *v;
    size_t kn, vn;
} pair;

static int pair_cmp(const void *a, const void *b) {
    const pair *x = a, *y = b;
    size_t n = x->kn < y->kn ? x->kn : y->kn;
    int c = memcmp(x->k, y->k, n);
    return c ? c : x->kn < y->kn ? -1 : x->kn > y->kn;
}

/* Entries sorted by their printed keys ("{k:v, k:v}"). */
static bool fmt_map(fmt_out *o, cel_val m) {
    cel_val keys = {0};
    uint32_t n;
    if (m.kind == CV_DEVMAP) {
        keys = cel_devmap_keys(o->ev, m);
        n = keys.list->n;
    } else {
        n = m.map->n;
    }
    pair *p = ks_arena_calloc(o->ev->scratch, n ? n : 1, sizeof(*p));
    bool ok = true;
    ks_strbuf *saved = o->b;
    for (uint32_t i = 0; i < n && ok; i++) {
        cel_val k = m.kind == CV_DEVMAP ? keys.list->v[i] : m.map->k[i];
        cel_val v;
        if (m.kind == CV_DEVMAP) {
            bool found;
            v = cel_devmap_get(o->ev, m, k, &found);
        } else {
            v = m.map->v[i];
        }
        ks_strbuf kb, vb;
        ks_sb_init(&kb);
        ks_sb_init(&vb);
        o->b = &kb;
        if (k.kind == CV_STRING || k.kind == CV_BOOL) ok = fmt_member(o, k);
        else if (k.kind == CV_INT || k.kind == CV_UINT) ok = fmt_decimal(o, k);
        else {
            ks_sb_printf(o->err, "no formatting function for map key of type %s", cel_val_type_name(k));
            ok = false;
        }
        o->b = &vb;
        if (ok && v.kind == CV_ERROR) {
            ks_sb_puts(o->err, v.s);
            ok = false;
        }
        if (ok) ok = fmt_member(o, v);
        p[i] = (pair){ks_arena_strndup(o->ev->scratch, ks_sb_str(&kb), kb.len),
                      ks_arena_strndup(o->ev->scratch, ks_sb_str(&vb), vb.len), kb.len, vb.len};
        ks_sb_free(&kb);
        ks_sb_free(&vb);
    }
    o->b = saved;
    if (!ok) return false;
    /* stable: keys print differently, except for equal ones (none in a map) */
    qsort(p, n, sizeof(*p), pair_cmp);
    ks_sb_putc(o->b, '{');
    for (uint32_t i = 0; i < n; i++) {
        if (i) ks_sb_puts(o->b, ", ");
        ks_sb_putn(o->b, p[i].k, p[i].kn);
        ks_sb_putc(o->b, ':');
        ks_sb_putn(o->b, p[i].v, p[i].vn);
    }
    ks_sb_putc(o->b, '}');
    return true;
}

static bool fmt_string(fmt_out *o, cel_val v) {
    switch (v.kind) {
    case CV_LIST: return fmt_list(o, v);
    case CV_MAP:
    case CV_DEVMAP: return fmt_map(o, v);
    case CV_NULL: ks_sb_puts(o->b, "null"); return true;
    case CV_TYPE: cel_val_print(o->b, v); return true;
    case CV_TIMESTAMP:
    case CV_DURATION: {
        cel_val s = cel_f_time_string(o->ev, &v, 1);
        ks_sb_putn(o->b, s.s, s.len);
        return true;
    }
    case CV_INT:
    case CV_UINT:
    case CV_DOUBLE:
    case CV_BOOL:
    case CV_STRING:
    case CV_BYTES: {
        cel_val s = cel_f_string(o->ev, &v, 1);
        if (s.kind == CV_ERROR) {
            /* Go's %q of the conversion's error value */
            ks_sb_puts(o->err, "could not convert argument ");
            ks_sb_quote(o->err, s.s, strlen(s.s));
            ks_sb_puts(o->err, " to string");
            return false;
        }
        ks_sb_putn(o->b, s.s, s.len);
        return true;
    }
    default: return fail(o, STRING_CLAUSE, v);
    }
}

/* "NaN", "Infinity" and "-Infinity" pass for doubles in %f and %e */
static bool as_double(cel_val v, double *d) {
    if (v.kind == CV_DOUBLE) {
        *d = v.d;
        return true;
    }
    if (v.kind != CV_STRING) return false;
    if (v.len == 3 && memcmp(v.s, "NaN", 3) == 0) *d = NAN;
    else if (v.len == 8 && memcmp(v.s, "Infinity", 8) == 0) *d = INFINITY;
    else if (v.len == 9 && memcmp(v.s, "-Infinity", 9) == 0) *d = -INFINITY;
    else return false;
    return true;
}

/* printf into a strbuf without a size limit */
static void put_double(ks_strbuf *b, const char *fmt, int prec, double d) {
    int n = snprintf(NULL, 0, fmt, prec, d);
    char *t = malloc((size_t)n + 1);
    if (!t) return;
    snprintf(t, (size_t)n + 1, fmt, prec, d);
    ks_sb_putn(b, t, (size_t)n);
    free(t);
}

static bool fmt_fixed(fmt_out *o, cel_val v, long long prec) {
    double d;
    if (!as_double(v, &d)) return fail(o, "fixed-point clause can only be used on doubles", v);
    if (isnan(d)) {
        ks_sb_puts(o->b, "NaN");
        return true;
    }
    if (isinf(d)) {
        ks_sb_puts(o->b, d > 0 ? "∞" : "-∞");
        return true;
    }
    if (d == 0) d = 0; /* no sign on negative zero */
    ks_strbuf t;
    ks_sb_init(&t);
    put_double(&t, "%.*f", (int)prec, d);
    const char *s = ks_sb_str(&t);
    size_t i = 0;
    if (s[0] == '-') ks_sb_putc(o->b, s[i++]);
    size_t digits = i;
    while (s[digits] >= '0' && s[digits] <= '9') digits++;
    for (size_t k = i; k < digits; k++) {
        if (k > i && (digits - k) % 3 == 0) ks_sb_putc(o->b, ',');
        ks_sb_putc(o->b, s[k]);
    }
    ks_sb_puts(o->b, s + digits);
    ks_sb_free(&t);
    return true;
}

static void pad_to(ks_strbuf *b, const char *s, size_t n, long long width) {
    long long runes = (long long)cel_utf8_count(s, n);
    for (long long k = runes; k < width; k++) ks_sb_putc(b, ' ');
    ks_sb_putn(b, s, n);
}

static bool fmt_scientific(fmt_out *o, cel_val v, long long width) {
    static const char *const sup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    double d;
    if (!as_double(v, &d)) return fail(o, "scientific clause can only be used on doubles", v);
    ks_strbuf t;
    ks_sb_init(&t);
    if (isnan(d)) {
        ks_sb_puts(&t, "NaN");
    } else if (isinf(d)) {
        ks_sb_puts(&t, d > 0 ? "∞" : "-∞");
    } else {
        if (d == 0) d = 0;
        char m[64];
        snprintf(m, sizeof m, "%.6e", d);
        char *e = strchr(m, 'e');
        int exp = atoi(e + 1);
        ks_sb_putn(&t, m, (size_t)(e - m));
        ks_sb_puts(&t, "×10");
        if (exp < 0) ks_sb_puts(&t, "⁻");
        char ds[16];
        snprintf(ds, sizeof ds, "%02d", exp < 0 ? -exp : exp);
        for (char *c = ds; *c; c++) ks_sb_puts(&t, sup[*c - '0']);
    }
    pad_to(o->b, ks_sb_str(&t), t.len, width);
    ks_sb_free(&t);
    return true;
}

/* Go's %b / %o / %x of an integer: sign, then the magnitude */
static void put_radix(ks_strbuf *b, bool neg, uint64_t m, unsigned base, bool upper) {
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char buf[72];
    size_t k = sizeof buf;
    do {
        buf[--k] = dig[m % base];
        m /= base;
    } while (m);
    if (neg) ks_sb_putc(b, '-');
    ks_sb_putn(b, buf + k, sizeof buf - k);
}

static bool int_radix(fmt_out *o, cel_val v, unsigned base, bool upper) {
    if (v.kind == CV_INT) put_radix(o->b, v.i < 0, v.i < 0 ? 0 - (uint64_t)v.i : (uint64_t)v.i, base, upper);
    else if (v.kind == CV_UINT) put_radix(o->b, false, v.u, base, upper);
    else return false;
    return true;
}

static bool fmt_binary(fmt_out *o, cel_val v) {
    if (v.kind == CV_BOOL) {
        ks_sb_putc(o->b, v.b ? '1' : '0');
        return true;
    }
    return int_radix(o, v, 2, false) || fail(o, "only integers and bools can be formatted as binary", v);
}

static bool fmt_hex(fmt_out *o, cel_val v, bool upper) {
    if (v.kind == CV_STRING || v.kind == CV_BYTES) {
        const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
        for (uint32_t i = 0; i < v.len; i++) {
            unsigned char c = (unsigned char)v.s[i];
            ks_sb_putc(o->b, dig[c >> 4]);
            ks_sb_putc(o->b, dig[c & 15]);
        }
        return true;
    }
    return int_radix(o, v, 16, upper) ||
           fail(o, "only integers, byte buffers, and strings can be formatted as hex", v);
}

static bool fmt_octal(fmt_out *o, cel_val v) {
    return int_radix(o, v, 8, false) || fail(o, "octal clause can only be used on integers", v);
}

/* ---- the format string ---------------------------------------------------------------------- */

/* One clause after its '%': precision and verb. Returns the bytes read,
 * or 0 with err set (the text after "could not parse formatting clause: "). */
static size_t parse_clause(const char *s, size_t n, bool *has_prec, long long *prec, char *verb, ks_strbuf *err) {
    size_t i = 0;
    *has_prec = false;
    if (s[0] == '.') {
        i = 1;
        for (;;) {
            if (i >= n) {
                ks_sb_puts(err, "error while parsing precision: could not find end of precision specifier");
                return 0;
            }
            if (s[i] < '0' || s[i] > '9') break;
            i++;
        }
        char buf[32];
        size_t dn = i - 1;
        errno = 0;
        long long p = 0;
        if (dn > 0 && dn < sizeof buf) {
            memcpy(buf, s + 1, dn);
            buf[dn] = 0;
            p = strtoll(buf, NULL, 10);
        }
        if (dn == 0 || dn >= sizeof buf || errno == ERANGE) {
            ks_sb_printf(err, "error while parsing precision: error while converting precision to integer: "
                              "strconv.Atoi: parsing \"%.*s\": %s",
                         (int)dn, s + 1, dn == 0 ? "invalid syntax" : "value out of range");
            return 0;
        }
        *has_prec = true;
        *prec = p;
    }
    char r = s[i];
    if (!strchr("sdfebxXo", r) || !r) {
        /* the byte as a rune (Go's %c of rune(byte)) */
        unsigned char c = (unsigned char)r;
        ks_sb_puts(err, "unrecognized formatting clause \"");
        if (c < 0x80) ks_sb_putc(err, (char)c);
        else {
            ks_sb_putc(err, (char)(0xC0 | c >> 6));
            ks_sb_putc(err, (char)(0x80 | (c & 0x3F)));
        }
        ks_sb_putc(err, '"');
        return 0;
    }
    *verb = r;
    return i + 1;
}

static bool apply(fmt_out *o, char verb, bool has_prec, long long prec, cel_val v) {
    /* the precision of %f and %e defaults to 6; Go's fmt takes what fits an int */
    if (!has_prec) prec = 6;
    switch (verb) {
    case 's': return fmt_string(o, v);
    case 'd': return fmt_decimal(o, v);
    case 'f': return fmt_fixed(o, v, prec);
    case 'e': return fmt_scientific(o, v, prec);
    case 'b': return fmt_binary(o, v);
    case 'x': return fmt_hex(o, v, false);
    case 'X': return fmt_hex(o, v, true);
    default: return fmt_octal(o, v);
    }
}

cel_val cel_f_format(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING || args[1].kind != CV_LIST) return cel_no_overload();
    const char *s = args[0].s;
    size_t len = args[0].len;
    const cel_list *l = args[1].list;
    ks_strbuf b, err;
    ks_sb_init(&b);
    ks_sb_init(&err);
    fmt_out o = {ev, &b, &err};
    uint32_t argi = 0;
    bool ok = true;
    for (size_t i = 0; i < len && ok;) {
        if (s[i] != '%') {
            ks_sb_putc(&b, s[i++]);
            continue;
        }
        if (i + 1 < len && s[i + 1] == '%') {
            ks_sb_putc(&b, '%');
            i += 2;
            continue;
        }
        if (argi >= l->n) {
            ks_sb_printf(&err, "index %u out of range", argi);
            ok = false;
            break;
        }
        if (i + 1 >= len) {
            ks_sb_puts(&err, "unexpected end of string");
            ok = false;
            break;
        }
        bool has_prec;
        long long prec = 0;
        char verb = 0;
        ks_strbuf perr;
        ks_sb_init(&perr);
        size_t r = parse_clause(s + i + 1, len - i - 1, &has_prec, &prec, &verb, &perr);
        if (!r) {
            ks_sb_printf(&err, "could not parse formatting clause: %s", ks_sb_str(&perr));
            ks_sb_free(&perr);
            ok = false;
            break;
        }
        ks_sb_free(&perr);
        ks_strbuf ferr;
        ks_sb_init(&ferr);
        o.err = &ferr;
        if (!apply(&o, verb, has_prec, prec, l->v[argi])) {
            ks_sb_printf(&err, "error during formatting: %s", ks_sb_str(&ferr));
            ok = false;
        }
        ks_sb_free(&ferr);
        i += 1 + r;
        argi++;
    }
    cel_val res;
    if (ok) {
        char *d = ks_arena_alloc_uninit(ev->scratch, b.len + 1);
        memcpy(d, ks_sb_str(&b), b.len);
        d[b.len] = 0;
        res = cel_str(d, b.len);
    } else {
        res = cel_errorf(ev, "%s", ks_sb_str(&err));
    }
    ks_sb_free(&b);
    ks_sb_free(&err);
    return res;
}

/* ---- compile-time validation (cel-go's stringFormatValidator) --------------------------------- */

/* cel.Type's TypeName for a checked type */
static void type_name(ks_strbuf *b, const cel_type *t) {
    switch (t ? t->kind : CT_DYN) {
    case CT_LIST: ks_sb_puts(b, "list"); return;
    case CT_MAP: ks_sb_puts(b, "map"); return;
    case CT_TYPE: ks_sb_puts(b, "type"); return;
    case CT_OPTIONAL: ks_sb_puts(b, "optional_type"); return;
    default: cel_type_print_str(b, t); return;
    }
}

static bool is_dyn_type(const cel_type *t) { return !t || t->kind == CT_DYN; }

static bool kind_in(const cel_type *t, const char *kinds) {
    if (is_dyn_type(t)) return true;
    for (const char *k = kinds; *k; k++)
        if ((unsigned char)*k == t->kind) return true;
    return false;
}

/* verifyString: the expression whose type %s refuses, or NULL */
static const cel_expr *verify_string(const cel_expr *e) {
    static const char kinds[] = {CT_LIST, CT_MAP, CT_INT, CT_UINT, CT_DOUBLE, CT_BOOL, CT_STRING,
                                 CT_BYTES, CT_TYPE, CT_NULL, CT_TIMESTAMP, CT_DURATION, 0};
    if (!kind_in(e->type, kinds)) return e;
    if (e->kind == CE_LIST) {
        for (uint32_t i = 0; i < e->list.n; i++) {
            const cel_expr *bad = verify_string(e->list.elems[i]);
            if (bad) return bad;
        }
    } else if (e->kind == CE_MAP) {
        for (uint32_t i = 0; i < e->map.n; i++) {
            const cel_expr *bad = verify_string(e->map.keys[i]);
            if (!bad) bad = verify_string(e->map.vals[i]);
            if (bad) return bad;
        }
    }
    return NULL;
}

static void report(cel_errors *errs, const cel_expr *at, const char *what, const cel_type *t) {
    ks_strbuf b;
    ks_sb_init(&b);
    type_name(&b, t);
    cel_error_at(errs, at->pos, "error during formatting: %s, was given %s", what, ks_sb_str(&b));
    ks_sb_free(&b);
}

static void validate_call(const cel_expr *call, cel_errors *errs) {
    const cel_expr *target = call->call.target;
    const char *s = target->lit.s;
    size_t len = target->lit.len;
    const cel_expr *list = call->call.args[0];
    uint32_t requested = 0, argi = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] != '%') {
            i++;
            continue;
        }
        if (i + 1 < len && s[i + 1] == '%') {
            i += 2;
            continue;
        }
        requested++;
        if (i + 1 >= len) {
            cel_error_at(errs, call->pos, "unexpected end of string");
            return;
        }
        if (argi >= list->list.n) {
            cel_error_at(errs, call->pos, "index %u out of range", argi);
            return;
        }
        bool has_prec;
        long long prec;
        char verb = 0;
        ks_strbuf perr;
        ks_sb_init(&perr);
        size_t r = parse_clause(s + i + 1, len - i - 1, &has_prec, &prec, &verb, &perr);
        if (!r) {
            cel_error_at(errs, call->pos, "could not parse formatting clause: %s", ks_sb_str(&perr));
            ks_sb_free(&perr);
            return;
        }
        ks_sb_free(&perr);
        const cel_expr *arg = list->list.elems[argi];
        const cel_type *t = arg->type;
        static const char k_d[] = {CT_INT, CT_UINT, 0}, k_f[] = {CT_DOUBLE, CT_STRING, 0},
                          k_b[] = {CT_INT, CT_UINT, CT_BOOL, 0}, k_x[] = {CT_INT, CT_UINT, CT_STRING, CT_BYTES, 0};
        switch (verb) {
        case 's': {
            const cel_expr *bad = verify_string(arg);
            if (bad) {
                report(errs, bad, STRING_CLAUSE, bad->type);
                return;
            }
            break;
        }
        case 'd':
            if (!kind_in(t, k_d)) {
                report(errs, arg, "decimal clause can only be used on integers", t);
                return;
            }
            break;
        case 'f':
            if (!kind_in(t, k_f)) {
                report(errs, arg, "fixed-point clause can only be used on doubles", t);
                return;
            }
            break;
        case 'e':
            if (!kind_in(t, k_f)) {
                report(errs, arg, "scientific clause can only be used on doubles", t);
                return;
            }
            break;
        case 'b':
            if (!kind_in(t, k_b)) {
                report(errs, arg, "only integers and bools can be formatted as binary", t);
                return;
            }
            break;
        case 'x':
        case 'X':
            if (!kind_in(t, k_x)) {
                report(errs, arg, "only integers, byte buffers, and strings can be formatted as hex", t);
                return;
            }
            break;
        default:
            if (!kind_in(t, k_d)) {
                report(errs, arg, "octal clause can only be used on integers", t);
                return;
            }
            break;
        }
        i += 1 + r;
        argi++;
    }
    if (list->list.n > requested)
        cel_error_at(errs, call->pos, "too many arguments supplied to string.format (expected %u, got %u)", requested,
                     list->list.n);
}

void cel_format_validate(const cel_expr *e, cel_errors *errs) {
    if (!e) return;
    switch (e->kind) {
    case CE_SELECT: cel_format_validate(e->sel.operand, errs); return;
    case CE_LIST:
        for (uint32_t i = 0; i < e->list.n; i++) cel_format_validate(e->list.elems[i], errs);
        return;
    case CE_MAP:
        for (uint32_t i = 0; i < e->map.n; i++) {
            cel_format_validate(e->map.keys[i], errs);
            cel_format_validate(e->map.vals[i], errs);
        }
        return;
    case CE_COMP:
        cel_format_validate(e->comp.range, errs);
        cel_format_validate(e->comp.init, errs);
        cel_format_validate(e->comp.cond, errs);
        cel_format_validate(e->comp.step, errs);
        cel_format_validate(e->comp.result, errs);
        return;
    case CE_CALL:
        cel_format_validate(e->call.target, errs);
        for (uint32_t i = 0; i < e->call.nargs; i++) cel_format_validate(e->call.args[i], errs);
        if (e->call.target && strcmp(e->call.fn, "format") == 0 && e->call.nargs == 1 &&
            e->call.target->kind == CE_LIT && e->call.target->lit.kind == CV_STRING &&
            e->call.args[0]->kind == CE_LIST)
            validate_call(e, errs);
        return;
    default: return;
    }
}
