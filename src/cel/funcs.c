/* CEL functions: the standard library, cel-go's strings (v2), sets and
 * lists (v3) extensions, the optional library, and Kubernetes' lists,
 * regex, quantity and semver libraries, as DRA's environment declares
 * them. One table of overloads: signatures for the checker, an
 * implementation for the interpreter. Implementations check the kinds
 * they get (dynamic values reach them unchecked) and answer "no such
 * overload" otherwise. */
#include "api/quantity.h"
#include "cel/cel_internal.h"
#include "cel/time.h"
#include "util/gosort.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------- */

static char *scratch(cel_eval *ev, size_t n) { return ks_arena_alloc_uninit(ev->scratch, n ? n : 1); }

static cel_val mkstr(cel_eval *ev, const char *s, size_t n) {
    char *d = scratch(ev, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return cel_str(d, n);
}

cel_val cel_make_list(cel_eval *ev, const cel_val *v, uint32_t n) {
    cel_list *l = ks_arena_alloc_uninit(ev->scratch, sizeof(*l));
    cel_val *c = ks_arena_alloc_uninit(ev->scratch, (n ? n : 1) * sizeof(cel_val));
    if (n) memcpy(c, v, n * sizeof(cel_val));
    l->n = n;
    l->v = c;
    return (cel_val){.kind = CV_LIST, .list = l};
}

static cel_val mkopt(cel_eval *ev, const cel_val *v) {
    cel_val o = {.kind = CV_OPTIONAL};
    if (v) {
        cel_val *c = ks_arena_alloc_uninit(ev->scratch, sizeof(cel_val));
        *c = *v;
        o.opt = c;
    }
    return o;
}

static cel_val mkquantity(__int128 q) { return (cel_val){.kind = CV_QUANTITY, .q = q}; }

/* A quantity beyond what 128 bits of nano-units hold (about 1.7e29):
 * kept as a saturated amount marked huge (sub = 1). It parses, compares
 * beyond every ordinary amount, and is never an integer. */
#define Q_HUGE_MAX ((__int128)(((unsigned __int128)1 << 127) - 1))

/* Decode one UTF-8 code point at s (length n); returns its byte length. */
static size_t utf8_len(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    return l > n ? n : l;
}

/* Byte offset of code point index i (i <= count). */
static size_t cp_offset(const char *s, size_t n, int64_t i) {
    size_t off = 0;
    while (i > 0 && off < n) {
        off += utf8_len(s + off, n - off);
        i--;
    }
    return off;
}

#define ARG_IS(k, idx) (args[idx].kind == (k))

/* ---- operators -------------------------------------------------------------------- */

static cel_val f_not(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_BOOL, 0)) return cel_no_overload();
    return cel_bool(!args[0].b);
}

static cel_val f_neg(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (ARG_IS(CV_INT, 0)) {
        if (args[0].i == INT64_MIN) return cel_err_static("integer overflow");
        return cel_int(-args[0].i);
    }
    if (ARG_IS(CV_DOUBLE, 0)) return cel_double(-args[0].d);
    return cel_no_overload();
}

static cel_val f_eq(cel_eval *ev, const cel_val *args, uint32_t n) { return cel_equal(ev, args[0], args[1]); }

static cel_val f_ne(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val r = cel_equal(ev, args[0], args[1]);
    if (r.kind == CV_BOOL) r.b = !r.b;
    return r;
}

static cel_val cmp_op(const cel_val *args, int want_lo, int want_hi) {
    int c;
    if (!cel_compare(args[0], args[1], &c)) {
        if ((args[0].kind == CV_DOUBLE && isnan(args[0].d)) || (args[1].kind == CV_DOUBLE && isnan(args[1].d)))
            return cel_bool(false);
        return cel_no_overload();
    }
    return cel_bool(c >= want_lo && c <= want_hi);
}

static cel_val f_lt(cel_eval *ev, const cel_val *args, uint32_t n) { return cmp_op(args, -1, -1); }
static cel_val f_le(cel_eval *ev, const cel_val *args, uint32_t n) { return cmp_op(args, -1, 0); }
static cel_val f_gt(cel_eval *ev, const cel_val *args, uint32_t n) { return cmp_op(args, 1, 1); }
static cel_val f_ge(cel_eval *ev, const cel_val *args, uint32_t n) { return cmp_op(args, 0, 1); }

static cel_val f_add(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind != b.kind) return cel_no_overload();
    switch (a.kind) {
    case CV_INT: {
        int64_t r;
        if (__builtin_add_overflow(a.i, b.i, &r)) return cel_err_static("integer overflow");
        return cel_int(r);
    }
    case CV_UINT: {
        uint64_t r;
        if (__builtin_add_overflow(a.u, b.u, &r)) return cel_err_static("unsigned integer overflow");
        return cel_uint(r);
    }
    case CV_DOUBLE: return cel_double(a.d + b.d);
    case CV_STRING:
    case CV_BYTES: {
        char *d = scratch(ev, (size_t)a.len + b.len + 1);
        memcpy(d, a.s, a.len);
        memcpy(d + a.len, b.s, b.len);
        d[a.len + b.len] = 0;
        cel_val r = cel_str(d, (size_t)a.len + b.len);
        r.kind = a.kind;
        return r;
    }
    case CV_LIST: {
        uint32_t na = a.list->n, nb = b.list->n;
        if (na == 0) return b;
        if (nb == 0) return a;
        cel_val *v = ks_arena_alloc_uninit(ev->scratch, (size_t)(na + nb) * sizeof(cel_val));
        memcpy(v, a.list->v, na * sizeof(cel_val));
        memcpy(v + na, b.list->v, nb * sizeof(cel_val));
        cel_list *l = ks_arena_alloc_uninit(ev->scratch, sizeof(*l));
        l->n = na + nb;
        l->v = v;
        return (cel_val){.kind = CV_LIST, .list = l};
    }
    default: return cel_no_overload();
    }
}

static cel_val f_sub(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind != b.kind) return cel_no_overload();
    if (a.kind == CV_INT) {
        int64_t r;
        if (__builtin_sub_overflow(a.i, b.i, &r)) return cel_err_static("integer overflow");
        return cel_int(r);
    }
    if (a.kind == CV_UINT) {
        uint64_t r;
        if (__builtin_sub_overflow(a.u, b.u, &r)) return cel_err_static("unsigned integer overflow");
        return cel_uint(r);
    }
    if (a.kind == CV_DOUBLE) return cel_double(a.d - b.d);
    return cel_no_overload();
}

static cel_val f_mul(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind != b.kind) return cel_no_overload();
    if (a.kind == CV_INT) {
        int64_t r;
        if (__builtin_mul_overflow(a.i, b.i, &r)) return cel_err_static("integer overflow");
        return cel_int(r);
    }
    if (a.kind == CV_UINT) {
        uint64_t r;
        if (__builtin_mul_overflow(a.u, b.u, &r)) return cel_err_static("unsigned integer overflow");
        return cel_uint(r);
    }
    if (a.kind == CV_DOUBLE) return cel_double(a.d * b.d);
    return cel_no_overload();
}

static cel_val f_div(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind != b.kind) return cel_no_overload();
    if (a.kind == CV_INT) {
        if (b.i == 0) return cel_err_static("division by zero");
        if (a.i == INT64_MIN && b.i == -1) return cel_err_static("integer overflow");
        return cel_int(a.i / b.i);
    }
    if (a.kind == CV_UINT) {
        if (b.u == 0) return cel_err_static("division by zero");
        return cel_uint(a.u / b.u);
    }
    if (a.kind == CV_DOUBLE) return cel_double(a.d / b.d);
    return cel_no_overload();
}

static cel_val f_mod(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind != b.kind) return cel_no_overload();
    if (a.kind == CV_INT) {
        if (b.i == 0) return cel_err_static("modulus by zero");
        if (a.i == INT64_MIN && b.i == -1) return cel_err_static("integer overflow");
        return cel_int(a.i % b.i);
    }
    if (a.kind == CV_UINT) {
        if (b.u == 0) return cel_err_static("modulus by zero");
        return cel_uint(a.u % b.u);
    }
    return cel_no_overload();
}

static cel_val f_index(cel_eval *ev, const cel_val *args, uint32_t n) { return cel_index(ev, args[0], args[1]); }

static cel_val f_in(cel_eval *ev, const cel_val *args, uint32_t n) { return cel_contains(ev, args[1], args[0]); }

static cel_val f_opt_index(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val c = args[0];
    if (c.kind == CV_OPTIONAL) {
        if (!c.opt) return c;
        c = *c.opt;
    }
    if (c.kind == CV_MAP || c.kind == CV_DEVMAP) {
        cel_val has = cel_contains(ev, c, args[1]);
        if (has.kind == CV_ERROR) return has;
        if (!has.b) return mkopt(ev, NULL);
    } else if (c.kind == CV_LIST) {
        cel_val i = args[1];
        int64_t k;
        if (i.kind == CV_INT) k = i.i;
        else if (i.kind == CV_UINT) k = i.u > INT64_MAX ? -1 : (int64_t)i.u;
        else if (i.kind == CV_DOUBLE && i.d == trunc(i.d)) k = (int64_t)i.d;
        else return cel_no_overload();
        if (k < 0 || k >= (int64_t)c.list->n) return mkopt(ev, NULL);
    } else {
        return cel_no_overload();
    }
    cel_val v = cel_index(ev, c, args[1]);
    if (v.kind == CV_ERROR) return v;
    return mkopt(ev, &v);
}

static cel_val f_not_strictly_false(cel_eval *ev, const cel_val *args, uint32_t n) {
    return cel_bool(!(args[0].kind == CV_BOOL && !args[0].b));
}

/* ---- standard functions ----------------------------------------------------------- */

static cel_val f_size(cel_eval *ev, const cel_val *args, uint32_t n) {
    switch (args[0].kind) {
    case CV_STRING:
    case CV_BYTES:
    case CV_LIST:
    case CV_MAP:
    case CV_DEVMAP: return cel_int((int64_t)cel_val_size(args[0]));
    default: return cel_no_overload();
    }
}

static bool str2(const cel_val *args) { return args[0].kind == CV_STRING && args[1].kind == CV_STRING; }

static const char *memmem_s(const char *h, size_t nh, const char *nd, size_t nn) {
    if (nn == 0) return h;
    if (nn > nh) return NULL;
    for (size_t i = 0; i + nn <= nh; i++)
        if (memcmp(h + i, nd, nn) == 0) return h + i;
    return NULL;
}

static cel_val f_contains(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args)) return cel_no_overload();
    return cel_bool(memmem_s(args[0].s, args[0].len, args[1].s, args[1].len) != NULL);
}

static cel_val f_starts(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args)) return cel_no_overload();
    return cel_bool(args[1].len <= args[0].len && memcmp(args[0].s, args[1].s, args[1].len) == 0);
}

static cel_val f_ends(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args)) return cel_no_overload();
    return cel_bool(args[1].len <= args[0].len &&
                    memcmp(args[0].s + args[0].len - args[1].len, args[1].s, args[1].len) == 0);
}

/* Regular expressions: RE2 syntax and semantics (regex.c). */
bool cel_regex_valid(const char *pat, size_t n) {
    char err[256];
    cel_re *re = cel_re_compile(pat, n, err, sizeof err);
    cel_re_free(re);
    return re != NULL;
}

static cel_val re_limit_error(cel_eval *ev) { return cel_errorf(ev, "regexp match limit exceeded"); }

/* cel-go's matches: an error is Go's regexp error text as it is. Strings
 * are valid UTF-8. */
static cel_val f_matches(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args)) return cel_no_overload();
    char err[512];
    cel_re *re = cel_re_compile(args[1].s, args[1].len, err, sizeof err);
    if (!re) return cel_errorf(ev, "%s", err);
    int rc = cel_re_search(re, args[0].s, args[0].len, 0, NULL, NULL);
    cel_re_free(re);
    return rc < 0 ? re_limit_error(ev) : cel_bool(rc > 0);
}

/* Kubernetes' find: Go's FindString ("" when nothing matches). */
static cel_val f_find(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args)) return cel_no_overload();
    char err[512];
    cel_re *re = cel_re_compile(args[1].s, args[1].len, err, sizeof err);
    if (!re) return cel_errorf(ev, "Illegal regex: %s", err);
    size_t so, eo;
    int rc = cel_re_search(re, args[0].s, args[0].len, 0, &so, &eo);
    cel_re_free(re);
    if (rc < 0) return re_limit_error(ev);
    return rc ? mkstr(ev, args[0].s + so, eo - so) : cel_str("", 0);
}

/* Go's FindAllString: after an empty match the search moves on by one
 * rune, and an empty match right where the previous match ended is
 * dropped. */
static cel_val f_find_all(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args) || (n == 3 && args[2].kind != CV_INT)) return cel_no_overload();
    int64_t limit = n == 3 ? args[2].i : -1;
    char err[512];
    cel_re *re = cel_re_compile(args[1].s, args[1].len, err, sizeof err);
    if (!re) return cel_errorf(ev, "Illegal regex: %s", err);
    cel_val out[256];
    uint32_t k = 0;
    const char *s = args[0].s;
    size_t len = args[0].len, pos = 0, prev_end = (size_t)-1;
    while (limit != 0 && k < 256 && pos <= len) {
        size_t so, eo;
        int rc = cel_re_search(re, s, len, pos, &so, &eo);
        if (rc < 0) {
            cel_re_free(re);
            return re_limit_error(ev);
        }
        if (rc == 0) break;
        bool accept = true;
        if (eo == pos) {
            if (so == prev_end) accept = false;
            /* one UTF-8 rune on */
            if (pos < len) {
                unsigned char c = (unsigned char)s[pos];
                pos += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
            } else {
                pos = len + 1;
            }
        } else {
            pos = eo;
        }
        prev_end = eo;
        if (accept) {
            out[k++] = mkstr(ev, s + so, eo - so);
            if (limit > 0) limit--;
        }
    }
    cel_re_free(re);
    return cel_make_list(ev, out, k);
}

/* ---- conversions -------------------------------------------------------------------- */

static bool parse_i64(const char *s, size_t n, int64_t *out) {
    char buf[64];
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || buf[0] == '+' || buf[0] == ' ') return false;
    *out = v;
    return true;
}

static cel_val f_int(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    switch (a.kind) {
    case CV_INT: return a;
    case CV_UINT:
        if (a.u > INT64_MAX) return cel_err_static("integer overflow");
        return cel_int((int64_t)a.u);
    case CV_DOUBLE:
        if (isnan(a.d) || a.d <= -9223372036854775809.0 || a.d >= 9223372036854775807.0)
            return cel_err_static("integer overflow");
        return cel_int((int64_t)a.d);
    case CV_STRING: {
        int64_t v;
        if (!parse_i64(a.s, a.len, &v)) return cel_err_static("type conversion error from 'string' to 'int'");
        return cel_int(v);
    }
    default: return cel_no_overload();
    }
}

static cel_val f_uint(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    switch (a.kind) {
    case CV_UINT: return a;
    case CV_INT:
        if (a.i < 0) return cel_err_static("unsigned integer overflow");
        return cel_uint((uint64_t)a.i);
    case CV_DOUBLE:
        if (isnan(a.d) || a.d < 0 || a.d >= 18446744073709551615.0) return cel_err_static("unsigned integer overflow");
        return cel_uint((uint64_t)a.d);
    case CV_STRING: {
        char buf[64];
        if (a.len == 0 || a.len >= sizeof buf || a.s[0] == '-' || a.s[0] == '+' || a.s[0] == ' ')
            return cel_err_static("type conversion error from 'string' to 'uint'");
        memcpy(buf, a.s, a.len);
        buf[a.len] = 0;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(buf, &end, 10);
        if (errno || *end) return cel_err_static("type conversion error from 'string' to 'uint'");
        return cel_uint(v);
    }
    default: return cel_no_overload();
    }
}

static cel_val f_double(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    switch (a.kind) {
    case CV_DOUBLE: return a;
    case CV_INT: return cel_double((double)a.i);
    case CV_UINT: return cel_double((double)a.u);
    case CV_STRING: {
        char buf[128];
        if (a.len == 0 || a.len >= sizeof buf) return cel_err_static("type conversion error from 'string' to 'double'");
        memcpy(buf, a.s, a.len);
        buf[a.len] = 0;
        char *end;
        double d = strtod(buf, &end);
        if (*end) return cel_err_static("type conversion error from 'string' to 'double'");
        return cel_double(d);
    }
    default: return cel_no_overload();
    }
}

static cel_val f_string(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    char buf[64];
    switch (a.kind) {
    case CV_STRING: return a;
    case CV_BYTES: {
        /* must be valid UTF-8 */
        for (uint32_t i = 0; i < a.len;) {
            unsigned char c = (unsigned char)a.s[i];
            size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
            if (!l || i + l > a.len) return cel_err_static("invalid UTF-8 in bytes, cannot convert to string");
            for (size_t k = 1; k < l; k++)
                if (((unsigned char)a.s[i + k] & 0xC0) != 0x80)
                    return cel_err_static("invalid UTF-8 in bytes, cannot convert to string");
            i += (uint32_t)l;
        }
        return cel_str(a.s, a.len);
    }
    case CV_INT: snprintf(buf, sizeof buf, "%lld", (long long)a.i); break;
    case CV_UINT: snprintf(buf, sizeof buf, "%llu", (unsigned long long)a.u); break;
    case CV_BOOL: snprintf(buf, sizeof buf, "%s", a.b ? "true" : "false"); break;
    case CV_DOUBLE: {
        /* Go's strconv.FormatFloat(d, 'g', -1, 64) */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, a.d);
            if (strtod(buf, NULL) == a.d) break;
        }
        if (isinf(a.d)) snprintf(buf, sizeof buf, "%s", a.d > 0 ? "+Inf" : "-Inf");
        if (isnan(a.d)) snprintf(buf, sizeof buf, "NaN");
        /* Go writes exponents with at least two digits: 1e+21 */
        break;
    }
    default: return cel_no_overload();
    }
    return mkstr(ev, buf, strlen(buf));
}

static cel_val f_bytes(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind == CV_BYTES) return args[0];
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_val r = args[0];
    r.kind = CV_BYTES;
    return r;
}

static cel_val f_bool(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    if (a.kind == CV_BOOL) return a;
    if (a.kind != CV_STRING) return cel_no_overload();
    static const char *const t[] = {"1", "t", "true", "TRUE", "True", NULL};
    static const char *const f[] = {"0", "f", "false", "FALSE", "False", NULL};
    for (int i = 0; t[i]; i++)
        if (a.len == strlen(t[i]) && memcmp(a.s, t[i], a.len) == 0) return cel_bool(true);
    for (int i = 0; f[i]; i++)
        if (a.len == strlen(f[i]) && memcmp(a.s, f[i], a.len) == 0) return cel_bool(false);
    return cel_err_static("type conversion error from 'string' to 'bool'");
}

cel_val cel_f_string(cel_eval *ev, const cel_val *args, uint32_t n) { return f_string(ev, args, n); }

static cel_val f_dyn(cel_eval *ev, const cel_val *args, uint32_t n) { return args[0]; }

static cel_val f_unusable(cel_eval *ev, const cel_val *args, uint32_t n) { return cel_no_overload(); }

static cel_val f_type(cel_eval *ev, const cel_val *args, uint32_t n) {
    static const uint8_t map[] = {
        [CV_NULL] = CT_NULL,       [CV_BOOL] = CT_BOOL,         [CV_INT] = CT_INT,
        [CV_UINT] = CT_UINT,       [CV_DOUBLE] = CT_DOUBLE,     [CV_STRING] = CT_STRING,
        [CV_BYTES] = CT_BYTES,     [CV_LIST] = CT_LIST,         [CV_MAP] = CT_MAP,
        [CV_TYPE] = CT_TYPE,       [CV_QUANTITY] = CT_QUANTITY, [CV_SEMVER] = CT_SEMVER,
        [CV_OPTIONAL] = CT_OPTIONAL, [CV_DEVICE] = CT_DEVICE,   [CV_DEVMAP] = CT_MAP,
        [CV_IP] = CT_IP,           [CV_CIDR] = CT_CIDR,         [CV_URL] = CT_URL,
        [CV_FORMAT] = CT_FORMAT,
        [CV_TIMESTAMP] = CT_TIMESTAMP, [CV_DURATION] = CT_DURATION,
    };
    return (cel_val){.kind = CV_TYPE, .sub = map[args[0].kind]};
}

/* ---- strings extension (v2) ---------------------------------------------------------- */

static cel_val f_char_at(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0) || !ARG_IS(CV_INT, 1)) return cel_no_overload();
    int64_t i = args[1].i, cnt = (int64_t)cel_utf8_count(args[0].s, args[0].len);
    if (i < 0 || i > cnt) return cel_errorf(ev, "index out of range: %lld", (long long)i);
    if (i == cnt) return cel_str("", 0);
    size_t off = cp_offset(args[0].s, args[0].len, i);
    return mkstr(ev, args[0].s + off, utf8_len(args[0].s + off, args[0].len - off));
}

/* Code points of s decoded into out (at most max); returns the count. */
static size_t decode(const char *s, size_t n, const char **starts, size_t max) {
    size_t k = 0;
    for (size_t off = 0; off < n && k < max; k++) {
        starts[k] = s + off;
        off += utf8_len(s + off, n - off);
    }
    return k;
}

static cel_val index_of(cel_eval *ev, const cel_val *args, uint32_t n, bool last) {
    if (!str2(args) || (n == 3 && !ARG_IS(CV_INT, 2))) return cel_no_overload();
    const char *s = args[0].s, *sub = args[1].s;
    size_t ns = args[0].len, nsub = args[1].len;
    int64_t cnt = (int64_t)cel_utf8_count(s, ns), csub = (int64_t)cel_utf8_count(sub, nsub);
    int64_t off;
    if (n == 3) off = args[2].i;
    else if (last) {
        if (nsub == 0) return cel_int(cnt);
        if (ns < nsub) return cel_int(-1);
        off = cnt - 1;
    } else {
        off = 0;
    }
    if (nsub == 0) return cel_int(off);
    if (off < 0) return cel_errorf(ev, "index out of range: %lld", (long long)off);
    if (off >= cnt) return cel_int(-1);
    if (last) {
        if (off > cnt - csub) off = cnt - csub;
        for (int64_t i = off; i >= 0; i--) {
            size_t b = cp_offset(s, ns, i);
            if (b + nsub <= ns && memcmp(s + b, sub, nsub) == 0) return cel_int(i);
        }
        return cel_int(-1);
    }
    for (int64_t i = off; i < cnt - (csub - 1); i++) {
        size_t b = cp_offset(s, ns, i);
        if (b + nsub <= ns && memcmp(s + b, sub, nsub) == 0) return cel_int(i);
    }
    return cel_int(-1);
}

static cel_val f_index_of_str(cel_eval *ev, const cel_val *args, uint32_t n) { return index_of(ev, args, n, false); }
static cel_val f_last_index_of_str(cel_eval *ev, const cel_val *args, uint32_t n) {
    return index_of(ev, args, n, true);
}

static cel_val change_case(cel_eval *ev, const cel_val *args, bool upper) {
    if (!ARG_IS(CV_STRING, 0)) return cel_no_overload();
    char *d = scratch(ev, args[0].len + 1);
    for (uint32_t i = 0; i < args[0].len; i++) {
        char c = args[0].s[i];
        if (upper && c >= 'a' && c <= 'z') c = (char)(c - 32);
        if (!upper && c >= 'A' && c <= 'Z') c = (char)(c + 32);
        d[i] = c;
    }
    d[args[0].len] = 0;
    return cel_str(d, args[0].len);
}

static cel_val f_lower(cel_eval *ev, const cel_val *args, uint32_t n) { return change_case(ev, args, false); }
static cel_val f_upper(cel_eval *ev, const cel_val *args, uint32_t n) { return change_case(ev, args, true); }

static cel_val f_replace(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0) || !ARG_IS(CV_STRING, 1) || !ARG_IS(CV_STRING, 2) || (n == 4 && !ARG_IS(CV_INT, 3)))
        return cel_no_overload();
    int64_t limit = n == 4 ? args[3].i : -1;
    const char *s = args[0].s, *old = args[1].s, *nw = args[2].s;
    size_t ns = args[0].len, no = args[1].len, nn = args[2].len;
    ks_strbuf b;
    ks_sb_init(&b);
    size_t off = 0;
    int64_t done = 0;
    /* Go's strings.Replace: an empty old matches at every code point boundary */
    while (off <= ns && (limit < 0 || done < limit)) {
        const char *hit;
        if (no == 0) {
            hit = s + off;
        } else {
            hit = memmem_s(s + off, ns - off, old, no);
            if (!hit) break;
        }
        ks_sb_putn(&b, s + off, (size_t)(hit - (s + off)));
        ks_sb_putn(&b, nw, nn);
        done++;
        if (no == 0) {
            if (off == ns) {
                off = ns + 1;
                break;
            }
            size_t l = utf8_len(s + off, ns - off);
            ks_sb_putn(&b, s + off, l);
            off += l;
        } else {
            off = (size_t)(hit - s) + no;
        }
    }
    if (off <= ns) ks_sb_putn(&b, s + off, ns - off);
    cel_val r = mkstr(ev, ks_sb_str(&b), b.len);
    ks_sb_free(&b);
    return r;
}

static cel_val f_split(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!str2(args) || (n == 3 && !ARG_IS(CV_INT, 2))) return cel_no_overload();
    int64_t limit = n == 3 ? args[2].i : -1;
    if (limit == 0) return cel_make_list(ev, NULL, 0);
    const char *s = args[0].s, *sep = args[1].s;
    size_t ns = args[0].len, nsep = args[1].len;
    cel_val parts[512];
    uint32_t k = 0;
    if (nsep == 0) {
        /* explode into code points (the last part takes the rest) */
        size_t off = 0;
        while (off < ns && k < 511) {
            if (limit > 0 && (int64_t)k == limit - 1) break;
            size_t l = utf8_len(s + off, ns - off);
            parts[k++] = mkstr(ev, s + off, l);
            off += l;
        }
        if (off < ns) parts[k++] = mkstr(ev, s + off, ns - off);
        return cel_make_list(ev, parts, k);
    }
    size_t off = 0;
    while (k < 511) {
        if (limit > 0 && (int64_t)k == limit - 1) break;
        const char *hit = memmem_s(s + off, ns - off, sep, nsep);
        if (!hit) break;
        parts[k++] = mkstr(ev, s + off, (size_t)(hit - (s + off)));
        off = (size_t)(hit - s) + nsep;
    }
    parts[k++] = mkstr(ev, s + off, ns - off);
    return cel_make_list(ev, parts, k);
}

static cel_val f_substring(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0) || !ARG_IS(CV_INT, 1) || (n == 3 && !ARG_IS(CV_INT, 2))) return cel_no_overload();
    int64_t cnt = (int64_t)cel_utf8_count(args[0].s, args[0].len);
    int64_t start = args[1].i, end = n == 3 ? args[2].i : cnt;
    if (n == 3 && start > end)
        return cel_errorf(ev, "invalid substring range. start: %lld, end: %lld", (long long)start, (long long)end);
    if (start < 0 || start > cnt) return cel_errorf(ev, "index out of range: %lld", (long long)start);
    if (end < 0 || end > cnt) return cel_errorf(ev, "index out of range: %lld", (long long)end);
    size_t b = cp_offset(args[0].s, args[0].len, start), e = cp_offset(args[0].s, args[0].len, end);
    return mkstr(ev, args[0].s + b, e - b);
}

static bool go_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static cel_val f_trim(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0)) return cel_no_overload();
    const char *s = args[0].s;
    size_t b = 0, e = args[0].len;
    while (b < e && go_space((unsigned char)s[b])) b++;
    while (e > b && go_space((unsigned char)s[e - 1])) e--;
    return mkstr(ev, s + b, e - b);
}

static cel_val f_join(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0) || (n == 2 && !ARG_IS(CV_STRING, 1))) return cel_no_overload();
    ks_strbuf b;
    ks_sb_init(&b);
    const cel_list *l = args[0].list;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != CV_STRING) {
            ks_sb_free(&b);
            ks_strbuf t;
            ks_sb_init(&t);
            cel_val_print(&t, l->v[i]);
            cel_val r = cel_errorf(ev, "join: invalid input: %s", ks_sb_str(&t));
            ks_sb_free(&t);
            return r;
        }
        if (i && n == 2) ks_sb_putn(&b, args[1].s, args[1].len);
        ks_sb_putn(&b, l->v[i].s, l->v[i].len);
    }
    cel_val r = mkstr(ev, ks_sb_str(&b), b.len);
    ks_sb_free(&b);
    return r;
}

static cel_val f_quote(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0)) return cel_no_overload();
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_putc(&b, '"');
    for (uint32_t i = 0; i < args[0].len; i++) {
        char c = args[0].s[i];
        switch (c) {
        case '\a': ks_sb_puts(&b, "\\a"); break;
        case '\b': ks_sb_puts(&b, "\\b"); break;
        case '\f': ks_sb_puts(&b, "\\f"); break;
        case '\n': ks_sb_puts(&b, "\\n"); break;
        case '\r': ks_sb_puts(&b, "\\r"); break;
        case '\t': ks_sb_puts(&b, "\\t"); break;
        case '\v': ks_sb_puts(&b, "\\v"); break;
        case '\\': ks_sb_puts(&b, "\\\\"); break;
        case '"': ks_sb_puts(&b, "\\\""); break;
        default: ks_sb_putc(&b, c);
        }
    }
    ks_sb_putc(&b, '"');
    cel_val r = mkstr(ev, ks_sb_str(&b), b.len);
    ks_sb_free(&b);
    return r;
}

static cel_val f_reverse_str(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0)) return cel_no_overload();
    const char *starts[1024];
    size_t k = decode(args[0].s, args[0].len, starts, 1024);
    char *d = scratch(ev, args[0].len + 1);
    size_t o = 0;
    for (size_t i = k; i-- > 0;) {
        size_t l = utf8_len(starts[i], (size_t)(args[0].s + args[0].len - starts[i]));
        memcpy(d + o, starts[i], l);
        o += l;
    }
    d[o] = 0;
    return cel_str(d, o);
}

/* ---- lists ---------------------------------------------------------------------------- */

static cel_val list_index_of(cel_eval *ev, const cel_val *args, bool last) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    for (uint32_t k = 0; k < l->n; k++) {
        uint32_t i = last ? l->n - 1 - k : k;
        cel_val r = cel_equal(ev, l->v[i], args[1]);
        if (r.kind == CV_ERROR) return r;
        if (r.b) return cel_int(i);
    }
    return cel_int(-1);
}

static cel_val f_index_of(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (ARG_IS(CV_STRING, 0)) return index_of(ev, args, n, false);
    return list_index_of(ev, args, false);
}

static cel_val f_last_index_of(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (ARG_IS(CV_STRING, 0)) return index_of(ev, args, n, true);
    return list_index_of(ev, args, true);
}

static cel_val f_is_sorted(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    for (uint32_t i = 1; i < l->n; i++) {
        int c;
        if (!cel_compare(l->v[i - 1], l->v[i], &c)) return cel_no_overload();
        if (c > 0) return cel_bool(false);
    }
    return cel_bool(true);
}

static cel_val f_sum(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    if (l->n == 0) return cel_int(0);
    cel_val acc = l->v[0];
    for (uint32_t i = 1; i < l->n; i++) {
        cel_val pair[2] = {acc, l->v[i]};
        acc = acc.kind == CV_DURATION ? cel_f_time_add(ev, pair, 2) : f_add(ev, pair, 2);
        if (acc.kind == CV_ERROR) return acc;
    }
    if (acc.kind != CV_INT && acc.kind != CV_UINT && acc.kind != CV_DOUBLE && acc.kind != CV_DURATION)
        return cel_no_overload();
    return acc;
}

static cel_val min_max(cel_eval *ev, const cel_val *args, bool max) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    if (l->n == 0) return cel_errorf(ev, "%s called on empty list", max ? "max" : "min");
    cel_val best = l->v[0];
    for (uint32_t i = 1; i < l->n; i++) {
        int c;
        if (!cel_compare(l->v[i], best, &c)) return cel_no_overload();
        if (max ? c > 0 : c < 0) best = l->v[i];
    }
    return best;
}

static cel_val f_min(cel_eval *ev, const cel_val *args, uint32_t n) { return min_max(ev, args, false); }
static cel_val f_max(cel_eval *ev, const cel_val *args, uint32_t n) { return min_max(ev, args, true); }

static cel_val f_lists_range(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_INT, 0)) return cel_no_overload();
    int64_t k = args[0].i < 0 ? 0 : args[0].i;
    if (k > 100000) return cel_err_static("lists.range: too large");
    cel_val *v = ks_arena_alloc_uninit(ev->scratch, (size_t)(k ? k : 1) * sizeof(cel_val));
    for (int64_t i = 0; i < k; i++) v[i] = cel_int(i);
    cel_list *l = ks_arena_alloc_uninit(ev->scratch, sizeof(*l));
    l->n = (uint32_t)k;
    l->v = v;
    return (cel_val){.kind = CV_LIST, .list = l};
}

static cel_val f_slice(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0) || !ARG_IS(CV_INT, 1) || !ARG_IS(CV_INT, 2)) return cel_no_overload();
    int64_t s = args[1].i, e = args[2].i, sz = args[0].list->n;
    if (s < 0 || e < 0) return cel_errorf(ev, "cannot slice(%lld, %lld), negative indexes not supported", (long long)s, (long long)e);
    if (s > e) return cel_errorf(ev, "cannot slice(%lld, %lld), start index must be less than or equal to end index", (long long)s, (long long)e);
    if (e > sz) return cel_errorf(ev, "cannot slice(%lld, %lld), list is length %lld", (long long)s, (long long)e, (long long)sz);
    return cel_make_list(ev, args[0].list->v + s, (uint32_t)(e - s));
}

static void flatten_into(cel_eval *ev, const cel_list *l, int64_t depth, cel_val *out, uint32_t *k, uint32_t max) {
    for (uint32_t i = 0; i < l->n && *k < max; i++) {
        if (l->v[i].kind == CV_LIST && depth != 0) flatten_into(ev, l->v[i].list, depth - 1, out, k, max);
        else out[(*k)++] = l->v[i];
    }
}

static cel_val f_flatten(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0) || (n == 2 && !ARG_IS(CV_INT, 1))) return cel_no_overload();
    int64_t depth = n == 2 ? args[1].i : 1;
    if (depth < 0) return cel_err_static("level must be non-negative");
    cel_val out[1024];
    uint32_t k = 0;
    flatten_into(ev, args[0].list, depth, out, &k, 1024);
    return cel_make_list(ev, out, k);
}

static cel_val f_distinct(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    cel_val *out = ks_arena_alloc_uninit(ev->scratch, (l->n ? l->n : 1) * sizeof(cel_val));
    uint32_t k = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++) {
            cel_val r = cel_equal(ev, out[j], l->v[i]);
            seen = r.kind == CV_BOOL && r.b;
        }
        if (!seen) out[k++] = l->v[i];
    }
    return cel_make_list(ev, out, k);
}

static cel_val f_reverse(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (ARG_IS(CV_STRING, 0)) return f_reverse_str(ev, args, n);
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    cel_val *out = ks_arena_alloc_uninit(ev->scratch, (l->n ? l->n : 1) * sizeof(cel_val));
    for (uint32_t i = 0; i < l->n; i++) out[i] = l->v[l->n - 1 - i];
    return cel_make_list(ev, out, l->n);
}

static cel_val f_sort(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    const cel_list *l = args[0].list;
    cel_val *out = ks_arena_alloc_uninit(ev->scratch, (l->n ? l->n : 1) * sizeof(cel_val));
    memcpy(out, l->v, l->n * sizeof(cel_val));
    /* insertion sort: stable, lists here are short */
    for (uint32_t i = 1; i < l->n; i++) {
        cel_val x = out[i];
        uint32_t j = i;
        while (j > 0) {
            int c;
            if (!cel_compare(out[j - 1], x, &c)) return cel_no_overload();
            if (c <= 0) break;
            out[j] = out[j - 1];
            j--;
        }
        out[j] = x;
    }
    return cel_make_list(ev, out, l->n);
}

/* @sortByAssociatedKeys (sortBy): the list in the order of its keys, as
 * Go's sort.Slice orders them (not stable: ties as upstream's). */
typedef struct sort_keys {
    const cel_val *keys;
    uint32_t *idx;
    uint8_t kind;
    bool mixed;
} sort_keys;

static bool keys_less(size_t i, size_t j, void *arg) {
    sort_keys *s = arg;
    cel_val a = s->keys[s->idx[i]], b = s->keys[s->idx[j]];
    if (a.kind != s->kind || b.kind != s->kind) {
        s->mixed = true;
        return false;
    }
    int c;
    return cel_compare(a, b, &c) && c < 0;
}

static void keys_swap(size_t i, size_t j, void *arg) {
    sort_keys *s = arg;
    uint32_t t = s->idx[i];
    s->idx[i] = s->idx[j];
    s->idx[j] = t;
}

static cel_val f_sort_by_keys(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0) || !ARG_IS(CV_LIST, 1)) return cel_no_overload();
    const cel_list *l = args[0].list, *k = args[1].list;
    if (l->n != k->n)
        return cel_errorf(ev,
                          "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but "
                          "got %u and %u elements respectively",
                          l->n, k->n);
    if (!l->n) return args[0];
    uint8_t kind = k->v[0].kind;
    if (kind != CV_INT && kind != CV_UINT && kind != CV_DOUBLE && kind != CV_BOOL && kind != CV_STRING &&
        kind != CV_BYTES && kind != CV_TIMESTAMP && kind != CV_DURATION)
        return cel_errorf(ev, "list elements must be comparable");
    sort_keys s = {k->v, ks_arena_alloc_uninit(ev->scratch, l->n * sizeof(uint32_t)), kind, false};
    for (uint32_t i = 0; i < l->n; i++) s.idx[i] = i;
    ks_go_sort(l->n, keys_less, keys_swap, &s);
    if (s.mixed) return cel_errorf(ev, "list elements must have the same type");
    cel_val *out = ks_arena_alloc_uninit(ev->scratch, l->n * sizeof(cel_val));
    for (uint32_t i = 0; i < l->n; i++) out[i] = l->v[s.idx[i]];
    return cel_make_list(ev, out, l->n);
}

static cel_val f_first(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    return mkopt(ev, args[0].list->n ? &args[0].list->v[0] : NULL);
}

static cel_val f_last(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0)) return cel_no_overload();
    return mkopt(ev, args[0].list->n ? &args[0].list->v[args[0].list->n - 1] : NULL);
}

/* sets.contains(a, b): every element of b is in a. */
static bool list_has(cel_eval *ev, const cel_list *l, cel_val x) {
    for (uint32_t i = 0; i < l->n; i++) {
        cel_val r = cel_equal(ev, l->v[i], x);
        if (r.kind == CV_BOOL && r.b) return true;
    }
    return false;
}

static cel_val f_sets_contains(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0) || !ARG_IS(CV_LIST, 1)) return cel_no_overload();
    for (uint32_t i = 0; i < args[1].list->n; i++)
        if (!list_has(ev, args[0].list, args[1].list->v[i])) return cel_bool(false);
    return cel_bool(true);
}

static cel_val f_sets_equivalent(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val r = f_sets_contains(ev, args, n);
    if (r.kind != CV_BOOL || !r.b) return r;
    cel_val sw[2] = {args[1], args[0]};
    return f_sets_contains(ev, sw, n);
}

static cel_val f_sets_intersects(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_LIST, 0) || !ARG_IS(CV_LIST, 1)) return cel_no_overload();
    for (uint32_t i = 0; i < args[1].list->n; i++)
        if (list_has(ev, args[0].list, args[1].list->v[i])) return cel_bool(true);
    return cel_bool(false);
}

/* ---- optionals ------------------------------------------------------------------------- */

static cel_val f_opt_of(cel_eval *ev, const cel_val *args, uint32_t n) { return mkopt(ev, &args[0]); }

static bool zero_value(cel_val v) {
    switch (v.kind) {
    case CV_NULL: return true;
    case CV_BOOL: return !v.b;
    case CV_INT: return v.i == 0;
    case CV_UINT: return v.u == 0;
    case CV_DOUBLE: return v.d == 0;
    case CV_STRING:
    case CV_BYTES: return v.len == 0;
    case CV_LIST: return v.list->n == 0;
    case CV_MAP: return v.map->n == 0;
    case CV_DEVMAP: return cel_devmap_size(v) == 0;
    case CV_QUANTITY: return v.q == 0;
    case CV_DURATION: return v.i == 0;
    case CV_TIMESTAMP: return v.ts.sec == INT64_C(-62135596800) && v.ts.nsec == 0; /* Go's zero time.Time */
    default: return false;
    }
}

static cel_val f_opt_of_nonzero(cel_eval *ev, const cel_val *args, uint32_t n) {
    return mkopt(ev, zero_value(args[0]) ? NULL : &args[0]);
}

static cel_val f_opt_none(cel_eval *ev, const cel_val *args, uint32_t n) { return mkopt(ev, NULL); }

static cel_val f_has_value(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_OPTIONAL, 0)) return cel_no_overload();
    return cel_bool(args[0].opt != NULL);
}

static cel_val f_value(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_OPTIONAL, 0)) return cel_no_overload();
    if (!args[0].opt) return cel_err_static("optional.none() dereference");
    return *args[0].opt;
}

static cel_val f_or(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_OPTIONAL, 0) || !ARG_IS(CV_OPTIONAL, 1)) return cel_no_overload();
    return args[0].opt ? args[0] : args[1];
}

static cel_val f_or_value(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_OPTIONAL, 0)) return cel_no_overload();
    return args[0].opt ? *args[0].opt : args[1];
}

/* ---- quantity --------------------------------------------------------------------------- */

static cel_val f_quantity(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0)) return cel_no_overload();
    ks_quantity q;
    const char *err = NULL;
    if (!ks_quantity_parse(args[0].s, &q, &err)) {
        /* resource.ParseQuantity's error */
        return cel_err_static("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    }
    if (q.huge) {
        cel_val v = mkquantity(args[0].s[0] == '-' ? -Q_HUGE_MAX : Q_HUGE_MAX);
        v.sub = 1;
        return v;
    }
    return mkquantity(q.nano);
}

static cel_val f_is_quantity(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_STRING, 0)) return cel_no_overload();
    ks_quantity q;
    const char *err = NULL;
    return cel_bool(ks_quantity_parse(args[0].s, &q, &err));
}

static cel_val f_sign(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_QUANTITY, 0)) return cel_no_overload();
    return cel_int(args[0].q < 0 ? -1 : args[0].q > 0);
}

static int qcmp(const cel_val *args) { return args[0].q < args[1].q ? -1 : args[0].q > args[1].q; }

static bool q2(const cel_val *args) { return args[0].kind == CV_QUANTITY && args[1].kind == CV_QUANTITY; }
static bool s2(const cel_val *args) { return args[0].kind == CV_SEMVER && args[1].kind == CV_SEMVER; }

static cel_val f_is_greater(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (q2(args)) return cel_bool(qcmp(args) == 1);
    if (s2(args)) return cel_bool(ks_semver_compare(args[0].sv, args[1].sv) == 1);
    return cel_no_overload();
}

static cel_val f_is_less(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (q2(args)) return cel_bool(qcmp(args) == -1);
    if (s2(args)) return cel_bool(ks_semver_compare(args[0].sv, args[1].sv) == -1);
    return cel_no_overload();
}

static cel_val f_compare_to(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (q2(args)) return cel_int(qcmp(args));
    if (s2(args)) return cel_int(ks_semver_compare(args[0].sv, args[1].sv));
    return cel_no_overload();
}

static cel_val f_as_float(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_QUANTITY, 0)) return cel_no_overload();
    return cel_double((double)args[0].q / 1e9);
}

static bool q_as_int(__int128 q, int64_t *out) {
    if (q % KS_NANO_PER_UNIT) return false;
    __int128 v = q / KS_NANO_PER_UNIT;
    if (v > INT64_MAX || v < INT64_MIN) return false;
    *out = (int64_t)v;
    return true;
}

static cel_val f_as_integer(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_QUANTITY, 0)) return cel_no_overload();
    int64_t v;
    if (args[0].sub || !q_as_int(args[0].q, &v)) return cel_err_static("cannot convert value to integer");
    return cel_int(v);
}

static cel_val f_is_integer(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_QUANTITY, 0)) return cel_no_overload();
    int64_t v;
    return cel_bool(!args[0].sub && q_as_int(args[0].q, &v));
}

static cel_val q_addsub(const cel_val *args, int sign) {
    if (!ARG_IS(CV_QUANTITY, 0)) return cel_no_overload();
    __int128 b;
    if (ARG_IS(CV_QUANTITY, 1)) b = args[1].q;
    else if (ARG_IS(CV_INT, 1)) b = (__int128)args[1].i * KS_NANO_PER_UNIT;
    else return cel_no_overload();
    return mkquantity(args[0].q + sign * b);
}

static cel_val f_add_q(cel_eval *ev, const cel_val *args, uint32_t n) { return q_addsub(args, 1); }
static cel_val f_sub_q(cel_eval *ev, const cel_val *args, uint32_t n) { return q_addsub(args, -1); }

/* ---- semver -------------------------------------------------------------------------------- */

/* The normalisation semver(s, true) applies: a leading v is dropped,
 * leading zeros removed, missing minor/patch filled with 0. */
static bool semver_normalize(const char *s, size_t n, ks_strbuf *out, char *err, size_t nerr) {
    if (n && s[0] == 'v') {
        s++;
        n--;
    }
    const char *parts[3];
    size_t lens[3];
    int np = 0;
    size_t off = 0;
    while (np < 3) {
        const char *dot = np < 2 ? memchr(s + off, '.', n - off) : NULL;
        size_t e = dot ? (size_t)(dot - s) : n;
        parts[np] = s + off;
        lens[np] = e - off;
        np++;
        if (!dot) break;
        off = e + 1;
    }
    for (int i = 0; i < np; i++) {
        const char *p = parts[i];
        size_t l = lens[i];
        if (i) ks_sb_putc(out, '.');
        if (l > 1) {
            while (l && *p == '0') {
                p++;
                l--;
            }
            if (l == 0 || !(*p >= '0' && *p <= '9')) ks_sb_putc(out, '0');
        }
        ks_sb_putn(out, p, l);
    }
    if (np < 3) {
        const char *last = parts[np - 1];
        if (memchr(last, '+', lens[np - 1]) || memchr(last, '-', lens[np - 1])) {
            snprintf(err, nerr, "short version cannot contain PreRelease/Build meta data");
            return false;
        }
        for (int i = np; i < 3; i++) ks_sb_puts(out, ".0");
    }
    return true;
}

static cel_val to_semver(cel_eval *ev, const cel_val *args, uint32_t n, bool check_only) {
    if (!ARG_IS(CV_STRING, 0) || (n == 2 && !ARG_IS(CV_BOOL, 1))) return cel_no_overload();
    char err[256];
    const char *s = args[0].s;
    size_t len = args[0].len;
    ks_strbuf nb;
    ks_sb_init(&nb);
    if (n == 2 && args[1].b) {
        if (!semver_normalize(s, len, &nb, err, sizeof err)) {
            ks_sb_free(&nb);
            return check_only ? cel_bool(false) : cel_errorf(ev, "%s", err);
        }
        char *d = scratch(ev, nb.len + 1);
        memcpy(d, ks_sb_str(&nb), nb.len + 1);
        s = d;
        len = nb.len;
    }
    ks_sb_free(&nb);
    ks_semver *v = ks_arena_alloc(ev->scratch, sizeof(*v));
    if (!ks_semver_parse(s, len, v, err, sizeof err)) return check_only ? cel_bool(false) : cel_errorf(ev, "%s", err);
    if (check_only) return cel_bool(true);
    return (cel_val){.kind = CV_SEMVER, .sv = v};
}

static cel_val f_semver(cel_eval *ev, const cel_val *args, uint32_t n) { return to_semver(ev, args, n, false); }
static cel_val f_is_semver(cel_eval *ev, const cel_val *args, uint32_t n) { return to_semver(ev, args, n, true); }

static cel_val f_major(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_SEMVER, 0)) return cel_no_overload();
    return cel_int((int64_t)args[0].sv->major);
}
static cel_val f_minor(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_SEMVER, 0)) return cel_no_overload();
    return cel_int((int64_t)args[0].sv->minor);
}
static cel_val f_patch(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (!ARG_IS(CV_SEMVER, 0)) return cel_no_overload();
    return cel_int((int64_t)args[0].sv->patch);
}

/* ---- the table -------------------------------------------------------------------------------- */

#define G(name, sig, impl) {name, false, sig, impl, 0, {0}, 0, false}
#define M(name, sig, impl) {name, true, sig, impl, 0, {0}, 0, false}

static cel_overload table[] = {
    G(OP_NOT, "bool -> bool", f_not),
    G(OP_NEG, "int -> int", f_neg),
    G(OP_NEG, "double -> double", f_neg),
    G("_==_", "A A -> bool", f_eq),
    G("_!=_", "A A -> bool", f_ne),
#define CMP(op, impl)                                                                                        \
    G(op, "bool bool -> bool", impl), G(op, "int int -> bool", impl), G(op, "uint uint -> bool", impl),      \
        G(op, "double double -> bool", impl), G(op, "string string -> bool", impl),                          \
        G(op, "bytes bytes -> bool", impl), G(op, "int uint -> bool", impl), G(op, "int double -> bool", impl), \
        G(op, "uint int -> bool", impl), G(op, "uint double -> bool", impl), G(op, "double int -> bool", impl), \
        G(op, "double uint -> bool", impl)
    CMP("_<_", f_lt),
    CMP("_<=_", f_le),
    CMP("_>_", f_gt),
    CMP("_>=_", f_ge),
    G("_+_", "int int -> int", f_add),
    G("_+_", "uint uint -> uint", f_add),
    G("_+_", "double double -> double", f_add),
    G("_+_", "string string -> string", f_add),
    G("_+_", "bytes bytes -> bytes", f_add),
    G("_+_", "list(A) list(A) -> list(A)", f_add),
    G("_-_", "int int -> int", f_sub),
    G("_-_", "uint uint -> uint", f_sub),
    G("_-_", "double double -> double", f_sub),
    G("_*_", "int int -> int", f_mul),
    G("_*_", "uint uint -> uint", f_mul),
    G("_*_", "double double -> double", f_mul),
    G("_/_", "int int -> int", f_div),
    G("_/_", "uint uint -> uint", f_div),
    G("_/_", "double double -> double", f_div),
    G("_%_", "int int -> int", f_mod),
    G("_%_", "uint uint -> uint", f_mod),
    G(OP_INDEX, "list(A) int -> A", f_index),
    G(OP_INDEX, "map(K,V) K -> V", f_index),
    G(OP_OPT_INDEX, "list(A) int -> optional(A)", f_opt_index),
    G(OP_OPT_INDEX, "map(K,V) K -> optional(V)", f_opt_index),
    G(OP_OPT_INDEX, "optional(list(A)) int -> optional(A)", f_opt_index),
    G(OP_OPT_INDEX, "optional(map(K,V)) K -> optional(V)", f_opt_index),
    G(OP_IN, "A list(A) -> bool", f_in),
    G(OP_IN, "K map(K,V) -> bool", f_in),
    G(OP_NOT_STRICTLY_FALSE, "bool -> bool", f_not_strictly_false),
    /* evaluated by the interpreter itself (not strict) */
    G(OP_AND, "bool bool -> bool", f_not_strictly_false),
    G(OP_OR, "bool bool -> bool", f_not_strictly_false),
    G(OP_COND, "bool A A -> A", f_not_strictly_false),
    G("size", "string -> int", f_size),
    G("size", "bytes -> int", f_size),
    G("size", "list(A) -> int", f_size),
    G("size", "map(K,V) -> int", f_size),
    M("size", "string -> int", f_size),
    M("size", "bytes -> int", f_size),
    M("size", "list(A) -> int", f_size),
    M("size", "map(K,V) -> int", f_size),
    M("contains", "string string -> bool", f_contains),
    M("startsWith", "string string -> bool", f_starts),
    M("endsWith", "string string -> bool", f_ends),
    M("matches", "string string -> bool", f_matches),
    G("matches", "string string -> bool", f_matches),
    G("int", "int -> int", f_int),
    G("int", "uint -> int", f_int),
    G("int", "double -> int", f_int),
    G("int", "string -> int", f_int),
    G("uint", "uint -> uint", f_uint),
    G("uint", "int -> uint", f_uint),
    G("uint", "double -> uint", f_uint),
    G("uint", "string -> uint", f_uint),
    G("double", "double -> double", f_double),
    G("double", "int -> double", f_double),
    G("double", "uint -> double", f_double),
    G("double", "string -> double", f_double),
    G("string", "string -> string", f_string),
    G("string", "int -> string", f_string),
    G("string", "uint -> string", f_string),
    G("string", "double -> string", f_string),
    G("string", "bool -> string", f_string),
    G("string", "bytes -> string", f_string),
    G("bytes", "bytes -> bytes", f_bytes),
    G("bytes", "string -> bytes", f_bytes),
    G("bool", "bool -> bool", f_bool),
    G("bool", "string -> bool", f_bool),
    G("dyn", "A -> dyn", f_dyn),
    G("type", "A -> type(A)", f_type),
    /* strings extension */
    M("charAt", "string int -> string", f_char_at),
    M("indexOf", "string string -> int", f_index_of_str),
    M("indexOf", "string string int -> int", f_index_of_str),
    M("lastIndexOf", "string string -> int", f_last_index_of_str),
    M("lastIndexOf", "string string int -> int", f_last_index_of_str),
    M("lowerAscii", "string -> string", f_lower),
    M("upperAscii", "string -> string", f_upper),
    M("replace", "string string string -> string", f_replace),
    M("replace", "string string string int -> string", f_replace),
    M("split", "string string -> list(string)", f_split),
    M("split", "string string int -> list(string)", f_split),
    M("substring", "string int -> string", f_substring),
    M("substring", "string int int -> string", f_substring),
    M("trim", "string -> string", f_trim),
    M("join", "list(string) -> string", f_join),
    M("join", "list(string) string -> string", f_join),
    G("strings.quote", "string -> string", f_quote),
    M("format", "string list(dyn) -> string", cel_f_format),
    /* Kubernetes lists and cel-go lists (v3) */
    M("isSorted", "list(A) -> bool", f_is_sorted),
    M("sum", "list(A) -> A", f_sum),
    M("min", "list(A) -> A", f_min),
    M("max", "list(A) -> A", f_max),
    M("indexOf", "list(A) A -> int", f_index_of),
    M("lastIndexOf", "list(A) A -> int", f_last_index_of),
    G("lists.range", "int -> list(int)", f_lists_range),
    M("slice", "list(A) int int -> list(A)", f_slice),
    M("flatten", "list(dyn) -> list(dyn)", f_flatten),
    M("flatten", "list(dyn) int -> list(dyn)", f_flatten),
    M("distinct", "list(A) -> list(A)", f_distinct),
    M("reverse", "list(A) -> list(A)", f_reverse),
    M("sort", "list(A) -> list(A)", f_sort),
    M("@sortByAssociatedKeys", "list(A) list(int) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(uint) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(double) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(bool) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(string) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(bytes) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(duration) -> list(A)", f_sort_by_keys),
    M("@sortByAssociatedKeys", "list(A) list(timestamp) -> list(A)", f_sort_by_keys),
    M("first", "list(A) -> optional(A)", f_first),
    M("last", "list(A) -> optional(A)", f_last),
    /* sets */
    G("sets.contains", "list(A) list(A) -> bool", f_sets_contains),
    G("sets.equivalent", "list(A) list(A) -> bool", f_sets_equivalent),
    G("sets.intersects", "list(A) list(A) -> bool", f_sets_intersects),
    /* Kubernetes regex */
    M("find", "string string -> string", f_find),
    M("findAll", "string string -> list(string)", f_find_all),
    M("findAll", "string string int -> list(string)", f_find_all),
    /* optionals */
    G("optional.of", "A -> optional(A)", f_opt_of),
    G("optional.ofNonZeroValue", "A -> optional(A)", f_opt_of_nonzero),
    G("optional.none", "-> optional(dyn)", f_opt_none),
    M("hasValue", "optional(A) -> bool", f_has_value),
    M("value", "optional(A) -> A", f_value),
    M("or", "optional(A) optional(A) -> optional(A)", f_or),
    M("orValue", "optional(A) A -> A", f_or_value),
    /* Kubernetes quantity */
    G("quantity", "string -> quantity", f_quantity),
    G("isQuantity", "string -> bool", f_is_quantity),
    G("sign", "quantity -> int", f_sign),
    M("isGreaterThan", "quantity quantity -> bool", f_is_greater),
    M("isLessThan", "quantity quantity -> bool", f_is_less),
    M("compareTo", "quantity quantity -> int", f_compare_to),
    M("asApproximateFloat", "quantity -> double", f_as_float),
    M("asInteger", "quantity -> int", f_as_integer),
    M("isInteger", "quantity -> bool", f_is_integer),
    M("add", "quantity quantity -> quantity", f_add_q),
    M("add", "quantity int -> quantity", f_add_q),
    M("sub", "quantity quantity -> quantity", f_sub_q),
    M("sub", "quantity int -> quantity", f_sub_q),
    /* Kubernetes semver */
    G("semver", "string -> semver", f_semver),
    G("semver", "string bool -> semver", f_semver),
    G("isSemver", "string -> bool", f_is_semver),
    G("isSemver", "string bool -> bool", f_is_semver),
    M("isGreaterThan", "semver semver -> bool", f_is_greater),
    M("isLessThan", "semver semver -> bool", f_is_less),
    M("compareTo", "semver semver -> int", f_compare_to),
    M("major", "semver -> int", f_major),
    M("minor", "semver -> int", f_minor),
    M("patch", "semver -> int", f_patch),
    /* Kubernetes' authorization library: declared, but DRA's environment
     * has no authorizer to call it on */
    M("path", "authorizer string -> pathcheck", f_unusable),
    M("group", "authorizer string -> groupcheck", f_unusable),
    M("serviceAccount", "authorizer string string -> resourcecheck", f_unusable),
    M("resource", "groupcheck string -> resourcecheck", f_unusable),
    M("subresource", "resourcecheck string -> resourcecheck", f_unusable),
    M("namespace", "resourcecheck string -> resourcecheck", f_unusable),
    M("name", "resourcecheck string -> resourcecheck", f_unusable),
    M("fieldSelector", "resourcecheck string -> resourcecheck", f_unusable),
    M("labelSelector", "resourcecheck string -> resourcecheck", f_unusable),
    M("check", "pathcheck string -> decision", f_unusable),
    M("check", "resourcecheck string -> decision", f_unusable),
    M("allowed", "decision -> bool", f_unusable),
    M("reason", "decision -> string", f_unusable),
    M("error", "decision -> string", f_unusable),
    M("errored", "decision -> bool", f_unusable),
    /* Kubernetes IP and CIDR (net.c) */
    G("ip", "string -> ip", cel_f_ip),
    M("ip", "cidr -> ip", cel_f_ip),
    G("isIP", "string -> bool", cel_f_is_ip),
    G("ip.isCanonical", "string -> bool", cel_f_ip_is_canonical),
    G("string", "ip -> string", cel_f_net_string),
    G("string", "cidr -> string", cel_f_net_string),
    M("family", "ip -> int", cel_f_family),
    M("isUnspecified", "ip -> bool", cel_f_is_unspecified),
    M("isLoopback", "ip -> bool", cel_f_is_loopback),
    M("isLinkLocalMulticast", "ip -> bool", cel_f_is_ll_multicast),
    M("isLinkLocalUnicast", "ip -> bool", cel_f_is_ll_unicast),
    M("isGlobalUnicast", "ip -> bool", cel_f_is_global_unicast),
    G("cidr", "string -> cidr", cel_f_cidr),
    G("isCIDR", "string -> bool", cel_f_is_cidr),
    M("containsIP", "cidr string -> bool", cel_f_contains_ip),
    M("containsIP", "cidr ip -> bool", cel_f_contains_ip),
    M("containsCIDR", "cidr string -> bool", cel_f_contains_cidr),
    M("containsCIDR", "cidr cidr -> bool", cel_f_contains_cidr),
    M("prefixLength", "cidr -> int", cel_f_prefix_length),
    M("masked", "cidr -> cidr", cel_f_masked),
    /* Kubernetes URLs (url.c) */
    G("url", "string -> url", cel_f_url),
    G("isURL", "string -> bool", cel_f_is_url),
    M("getScheme", "url -> string", cel_f_get_scheme),
    M("getHost", "url -> string", cel_f_get_host),
    M("getHostname", "url -> string", cel_f_get_hostname),
    M("getPort", "url -> string", cel_f_get_port),
    M("getEscapedPath", "url -> string", cel_f_get_escaped_path),
    M("getQuery", "url -> map(string, list(string))", cel_f_get_query),
    /* Kubernetes named formats (k8sformat.c) */
    G("format.named", "string -> optional(namedformat)", cel_f_format_named),
    M("validate", "namedformat string -> optional(list(string))", cel_f_validate),
#define X(name) G("format." #name, "-> namedformat", cel_f_format_##name),
    CEL_FORMAT_CONSTS(X)
#undef X
    /* timestamps and durations (time.c) */
#define CMP_T(t)                                                                                              \
    G("_<_", t " " t " -> bool", f_lt), G("_<=_", t " " t " -> bool", f_le), G("_>_", t " " t " -> bool", f_gt), \
        G("_>=_", t " " t " -> bool", f_ge)
    CEL_TIME_OVERLOADS(G, M, CMP_T),
    {OP_NEG, false, "duration -> duration", cel_f_duration_neg, 0, {0}, 0, true},
#undef CMP_T
};

/* ---- signatures --------------------------------------------------------------------------------- */

/* Types built from signatures live as long as the process. */
static ks_arena *sig_arena;

static const cel_type *simple(int kind) {
    switch (kind) {
    case CT_BOOL: return &CEL_T_BOOL;
    case CT_INT: return &CEL_T_INT;
    case CT_UINT: return &CEL_T_UINT;
    case CT_DOUBLE: return &CEL_T_DOUBLE;
    case CT_STRING: return &CEL_T_STRING;
    case CT_BYTES: return &CEL_T_BYTES;
    case CT_NULL: return &CEL_T_NULL;
    case CT_QUANTITY: return &CEL_T_QUANTITY;
    case CT_SEMVER: return &CEL_T_SEMVER;
    case CT_IP: return &CEL_T_IP;
    case CT_CIDR: return &CEL_T_CIDR;
    case CT_URL: return &CEL_T_URL;
    case CT_FORMAT: return &CEL_T_FORMAT;
    case CT_TIMESTAMP: return &CEL_T_TIMESTAMP;
    case CT_DURATION: return &CEL_T_DURATION;
    default: return &CEL_T_DYN;
    }
}

static const cel_type *sig_type(const char **pp) {
    const char *p = *pp;
    while (*p == ' ') p++;
    size_t n = 0;
    while (p[n] && p[n] != ' ' && p[n] != '(' && p[n] != ')' && p[n] != ',') n++;
    cel_type *t = NULL;
#define IS(s) (n == strlen(s) && memcmp(p, s, n) == 0)
    if (n == 1 && p[0] >= 'A' && p[0] <= 'Z') {
        t = ks_arena_alloc(sig_arena, sizeof(*t));
        t->kind = CT_PARAM;
        t->param = p[0] == 'A' ? 0 : p[0] == 'K' ? 1 : p[0] == 'V' ? 2 : 3;
        p += n;
    } else if (IS("authorizer") || IS("pathcheck") || IS("groupcheck") || IS("resourcecheck") || IS("decision")) {
        /* the authorization library's types, told apart by param */
        t = ks_arena_alloc(sig_arena, sizeof(*t));
        t->kind = CT_AUTHZ;
        t->param = IS("authorizer") ? 0 : IS("pathcheck") ? 1 : IS("groupcheck") ? 2 : IS("resourcecheck") ? 3 : 4;
        p += n;
    } else if (IS("list") || IS("optional") || IS("type")) {
        t = ks_arena_alloc(sig_arena, sizeof(*t));
        t->kind = IS("list") ? CT_LIST : IS("optional") ? CT_OPTIONAL : CT_TYPE;
        p += n + 1; /* ( */
        t->p1 = sig_type(&p);
        p++; /* ) */
    } else if (IS("map")) {
        t = ks_arena_alloc(sig_arena, sizeof(*t));
        t->kind = CT_MAP;
        p += n + 1;
        t->p1 = sig_type(&p);
        p++; /* , */
        t->p2 = sig_type(&p);
        p++;
    } else {
        int k = IS("bool")       ? CT_BOOL
                : IS("int")      ? CT_INT
                : IS("uint")     ? CT_UINT
                : IS("double")   ? CT_DOUBLE
                : IS("string")   ? CT_STRING
                : IS("bytes")    ? CT_BYTES
                : IS("null")     ? CT_NULL
                : IS("quantity") ? CT_QUANTITY
                : IS("semver")   ? CT_SEMVER
                : IS("ip")       ? CT_IP
                : IS("cidr")     ? CT_CIDR
                : IS("url")      ? CT_URL
                : IS("namedformat") ? CT_FORMAT
                : IS("timestamp") ? CT_TIMESTAMP
                : IS("duration") ? CT_DURATION
                                 : CT_DYN;
        p += n;
        *pp = p;
        return simple(k);
    }
#undef IS
    *pp = p;
    return t;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_table(void) {
    sig_arena = ks_arena_new(16384);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        cel_overload *o = &table[i];
        const char *p = o->sig;
        uint8_t n = 0;
        for (;;) {
            while (*p == ' ') p++;
            if (p[0] == '-' && p[1] == '>') {
                p += 2;
                break;
            }
            o->params[n++] = sig_type(&p);
        }
        o->nargs = n;
        o->result = sig_type(&p);
    }
}

void cel_functions_init(void) { pthread_once(&init_once, init_table); }

const cel_overload *cel_functions(size_t *n) {
    cel_functions_init();
    *n = sizeof(table) / sizeof(table[0]);
    return table;
}
