#include "api/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

#define U128_MAX (~(u128)0)
/* 2^127-1: the largest magnitude `nano` may hold. */
#define NANO_MAX ((u128)(U128_MAX >> 1))

static const char *const ERR_FORMAT = "quantities must match the regular expression "
                                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char *const ERR_NUMERIC = "unable to parse numeric part of quantity";
static const char *const ERR_SUFFIX = "unable to parse quantity's suffix";

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* The pieces upstream's scanner splits a quantity into. */
typedef struct {
    bool negative;
    const char *num; /* integer digits, leading zeros stripped */
    size_t nnum;
    const char *den; /* fraction digits */
    size_t nden;
    bool value_has_digit; /* the numeric part holds at least one digit */
    const char *suf;
    size_t nsuf;
} scan;

/* Split s the way upstream's fast scanner does: sign, integer digits,
 * optional '.' and fraction digits, then a suffix made of the letters that
 * can start one, an optional sign and digits. Anything else is a format
 * error. */
static bool scan_quantity(const char *s, size_t end, scan *o) {
    memset(o, 0, sizeof(*o));
    size_t pos = 0;
    if (pos < end && (s[0] == '-' || s[0] == '+')) {
        o->negative = s[0] == '-';
        pos++;
    }
    size_t start = pos;
    while (pos < end && s[pos] == '0') pos++;
    if (pos >= end) {
        /* only a sign and zeros: zero, whatever the sign */
        o->value_has_digit = true;
        o->suf = s + end;
        return true;
    }
    o->value_has_digit = pos > start;
    o->num = s + pos;
    while (pos < end && is_digit(s[pos])) pos++;
    o->nnum = (size_t)(s + pos - o->num);
    if (o->nnum) o->value_has_digit = true;
    if (pos < end && s[pos] == '.') {
        pos++;
        o->den = s + pos;
        while (pos < end && is_digit(s[pos])) pos++;
        o->nden = (size_t)(s + pos - o->den);
        if (o->nden) o->value_has_digit = true;
    }
    o->suf = s + pos;
    while (pos < end && s[pos] && strchr("eEinumkKMGTP", s[pos])) pos++;
    if (pos < end && (s[pos] == '-' || s[pos] == '+')) pos++;
    while (pos < end && is_digit(s[pos])) pos++;
    if (pos < end) return false;
    o->nsuf = (size_t)(s + end - o->suf);
    return true;
}

/* Interpret a suffix: base 10 or 2, the exponent, and the format. */
static bool interpret_suffix(const char *s, size_t n, int *base, int32_t *exp, uint8_t *fmt) {
    static const struct {
        const char *s;
        int base;
        int32_t exp;
    } table[] = {
        {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6},  {"m", 10, -3},  {"k", 10, 3},
        {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},  {"P", 10, 15},  {"E", 10, 18},
        {"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30},  {"Ti", 2, 40},  {"Pi", 2, 50},
        {"Ei", 2, 60},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strlen(table[i].s) == n && memcmp(table[i].s, s, n) == 0) {
            *base = table[i].base;
            *exp = table[i].exp;
            *fmt = table[i].base == 2 ? KS_QFMT_BINARY_SI : KS_QFMT_DECIMAL_SI;
            return true;
        }
    }
    if (n < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
    /* e<int64>: strconv.ParseInt rules (optional sign, digits, range),
     * then truncated to 32 bits as upstream does. */
    size_t i = 1;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') {
        neg = s[i] == '-';
        i++;
    }
    if (i >= n) return false;
    u128 v = 0;
    for (; i < n; i++) {
        if (!is_digit(s[i])) return false;
        v = v * 10 + (u128)(s[i] - '0');
        if (v > (u128)INT64_MAX + 1) return false;
    }
    if (!neg && v > (u128)INT64_MAX) return false;
    int64_t e = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
    *base = 10;
    *exp = (int32_t)(uint32_t)(uint64_t)e;
    *fmt = KS_QFMT_DECIMAL_EXP;
    return true;
}

/* Digits in a growable buffer, most significant first. */
typedef struct {
    char *d;
    size_t n;
    char small[96];
} digits;

static void digits_free(digits *g) {
    if (g->d != g->small) free(g->d);
}

/* g = num||den with leading zeros removed, times 2^bexp. */
static bool digits_build(digits *g, const scan *sc, int32_t bexp) {
    size_t cap = sc->nnum + sc->nden + 20;
    g->d = cap <= sizeof(g->small) ? g->small : malloc(cap);
    if (!g->d) return false;
    g->n = 0;
    for (size_t i = 0; i < sc->nnum; i++) g->d[g->n++] = sc->num[i];
    for (size_t i = 0; i < sc->nden; i++) {
        if (g->n == 0 && sc->den[i] == '0') continue;
        g->d[g->n++] = sc->den[i];
    }
    if (bexp > 0 && g->n) {
        /* Multiply by 2^bexp from the least significant digit; the carry
         * stays below 2^64 * 10, well inside 128 bits. */
        u128 carry = 0;
        for (size_t i = g->n; i-- > 0;) {
            u128 v = ((u128)(g->d[i] - '0') << bexp) + carry;
            g->d[i] = (char)('0' + (int)(v % 10));
            carry = v / 10;
        }
        char extra[24];
        size_t ne = 0;
        while (carry) {
            extra[ne++] = (char)('0' + (int)(carry % 10));
            carry /= 10;
        }
        memmove(g->d + ne, g->d, g->n);
        for (size_t i = 0; i < ne; i++) g->d[i] = extra[ne - 1 - i];
        g->n += ne;
    }
    return true;
}

/* ceil(D * 10^k) for the digit string D, as an unsigned 128-bit value;
 * false when it does not fit below NANO_MAX. */
static bool scale_up(const digits *g, int64_t k, u128 *out) {
    if (g->n == 0) {
        *out = 0;
        return true;
    }
    int64_t intlen = (int64_t)g->n + k; /* digits left of the decimal point */
    if (intlen > 39) return false;
    u128 v = 0;
    bool frac = false;
    for (int64_t i = 0; i < (int64_t)g->n; i++) {
        if (i < intlen) {
            if (v > (NANO_MAX - 9) / 10) return false;
            v = v * 10 + (u128)(g->d[i] - '0');
        } else if (g->d[i] != '0') {
            frac = true;
            break;
        }
    }
    for (int64_t i = (int64_t)g->n; i < intlen; i++) {
        if (v > NANO_MAX / 10) return false;
        v *= 10;
    }
    if (frac) {
        if (v == NANO_MAX) return false;
        v++;
    }
    *out = v;
    return true;
}

bool ks_quantity_parse(const char *s, ks_quantity *q, const char **err) {
    const char *dummy;
    if (!err) err = &dummy;
    memset(q, 0, sizeof(*q));
    size_t len = strlen(s);
    if (len == 0) {
        *err = ERR_FORMAT;
        return false;
    }
    scan sc;
    if (!scan_quantity(s, len, &sc)) {
        *err = ERR_FORMAT;
        return false;
    }
    int base;
    int32_t exp;
    uint8_t fmt;
    if (!interpret_suffix(sc.suf, sc.nsuf, &base, &exp, &fmt)) {
        *err = ERR_SUFFIX;
        return false;
    }
    /* Upstream takes an int64 fast path for most inputs and otherwise
     * hands the numeric text to an arbitrary-precision decimal, which
     * insists on at least one digit. The slow path is taken for decimal
     * exponents below -9 and for Pi/Ei (fewer digits of precision left
     * than the suffix needs); only then is a digitless number an error. */
    if (!sc.value_has_digit) {
        bool slow = base == 10 ? exp < -9 : exp >= 50;
        if (slow) {
            *err = ERR_NUMERIC;
            return false;
        }
    }
    q->format = fmt;
    digits g;
    if (!digits_build(&g, &sc, base == 2 ? exp : 0)) {
        *err = "out of memory";
        return false;
    }
    int64_t k = 9 - (int64_t)sc.nden + (base == 10 ? exp : 0);
    u128 mag;
    if (!scale_up(&g, k, &mag)) {
        q->huge = true;
        mag = NANO_MAX;
    }
    digits_free(&g);
    if (base == 2) {
        /* upstream caps binary amounts at the int64 maximum of base units */
        u128 cap = (u128)INT64_MAX * KS_NANO_PER_UNIT;
        if (q->huge || mag > cap) {
            q->huge = false;
            mag = cap;
        }
        /* and prints a fraction below 1 as decimal */
        if (mag > 0 && mag < KS_NANO_PER_UNIT) q->format = KS_QFMT_DECIMAL_SI;
    }
    q->nano = sc.negative ? -(__int128)mag : (__int128)mag;
    return true;
}

static bool nano_div_up(__int128 nano, int64_t div, int64_t *out) {
    bool neg = nano < 0;
    u128 m = neg ? (u128)(-nano) : (u128)nano;
    u128 r = m / (u128)div + (m % (u128)div ? 1 : 0);
    /* a negative amount reaches one further: INT64_MIN itself */
    if (r > (u128)INT64_MAX + (neg ? 1 : 0)) return false;
    *out = !neg ? (int64_t)r : r > (u128)INT64_MAX ? INT64_MIN : -(int64_t)r;
    return true;
}

bool ks_nano_to_value(__int128 nano, int64_t *out) { return nano_div_up(nano, KS_NANO_PER_UNIT, out); }
bool ks_nano_to_milli(__int128 nano, int64_t *out) { return nano_div_up(nano, 1000000, out); }

bool ks_quantity_value(const ks_quantity *q, int64_t *out) {
    return !q->huge && ks_nano_to_value(q->nano, out);
}

bool ks_quantity_milli(const ks_quantity *q, int64_t *out) {
    return !q->huge && ks_nano_to_milli(q->nano, out);
}

bool ks_quantity_parse_int(const char *s, bool milli, int64_t *out, const char **err) {
    ks_quantity q;
    if (!ks_quantity_parse(s, &q, err)) return false;
    if (milli ? ks_quantity_milli(&q, out) : ks_quantity_value(&q, out)) return true;
    if (err) *err = "quantity too large";
    return false;
}

static int u128_to_str(u128 v, char *buf) {
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

/* Canonical printing as upstream does it: the largest exponent (a multiple
 * of 3, or a power of 1024 for binary amounts that are whole numbers of at
 * least 1024) that keeps the mantissa an integer. */
void ks_quantity_format(const ks_quantity *q, char *buf, int n) {
    if (n <= 0) return;
    if (q->huge) {
        snprintf(buf, (size_t)n, "%s", q->nano < 0 ? "-huge" : "huge");
        return;
    }
    if (q->nano == 0) {
        snprintf(buf, (size_t)n, "0");
        return;
    }
    bool neg = q->nano < 0;
    u128 m = neg ? (u128)(-q->nano) : (u128)q->nano;
    char num[48];
    const char *suffix = "";
    char sufbuf[24];
    int fmt = q->format;
    if (fmt == KS_QFMT_BINARY_SI) {
        /* Upstream prints binary amounts as decimal when below 1024 in
         * magnitude or when they are not whole units. */
        if (m < (u128)1024 * KS_NANO_PER_UNIT || m % KS_NANO_PER_UNIT) fmt = KS_QFMT_DECIMAL_SI;
    }
    if (fmt == KS_QFMT_BINARY_SI) {
        static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        u128 v = m / KS_NANO_PER_UNIT;
        int e = 0;
        while (v % 1024 == 0 && v) {
            v /= 1024;
            e++;
        }
        u128_to_str(v, num);
        suffix = e <= 6 ? bin[e] : "";
    } else {
        int e = -9;
        while (m % 10 == 0) {
            m /= 10;
            e++;
        }
        while (((e % 3) + 3) % 3) {
            m *= 10;
            e--;
        }
        u128_to_str(m, num);
        if (fmt == KS_QFMT_DECIMAL_EXP) {
            if (e) {
                snprintf(sufbuf, sizeof(sufbuf), "e%d", e);
                suffix = sufbuf;
            }
        } else {
            static const char *const dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
            int i = (e + 9) / 3;
            /* upstream has no suffix beyond E and prints the bare mantissa */
            suffix = i >= 0 && i < 10 ? dec[i] : "";
        }
    }
    snprintf(buf, (size_t)n, "%s%s%s", neg ? "-" : "", num, suffix);
}

void ks_quantity_format_milli(int64_t milli, char *buf, int n) {
    ks_quantity q = {.nano = (__int128)milli * 1000000, .format = KS_QFMT_DECIMAL_SI};
    ks_quantity_format(&q, buf, n);
}

void ks_quantity_format_bytes(int64_t v, char *buf, int n) {
    ks_quantity q = {.nano = (__int128)v * KS_NANO_PER_UNIT, .format = KS_QFMT_BINARY_SI};
    ks_quantity_format(&q, buf, n);
}
