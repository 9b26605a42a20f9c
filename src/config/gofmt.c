/* Formatting and parsing that must match Go's standard library byte for
 * byte, because upstream prints configurations and errors with it:
 * time.ParseDuration / Duration.String, strconv.FormatFloat('g', -1),
 * strconv.Quote and base64.StdEncoding. */
#include "config/internal.h"
#include "util/base64.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- durations ---------------------------------------------------------- */

static const struct {
    const char *name;
    int64_t ns;
} go_units[] = {
    {"ns", 1LL},
    {"us", 1000LL},
    {"\xc2\xb5s", 1000LL}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000LL}, /* U+03BC Greek mu */
    {"ms", 1000000LL},
    {"s", 1000000000LL},
    {"m", 60LL * 1000000000LL},
    {"h", 3600LL * 1000000000LL},
};

static char *dur_err(const char *what, const char *s) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "time: ");
    ks_sb_puts(&b, what);
    ks_sb_puts(&b, " ");
    ks_sb_quote_str(&b, s);
    return ks_sb_take(&b);
}

bool ks_parse_duration(const char *s, int64_t *ns, char **err) { return go_parse_duration(s, ns, err); }

/* time.ParseDuration: [-+]? ( decimal unit )+, or "0". Values are summed
 * in nanoseconds; overflow past int64 is an error, as in Go. */
bool go_parse_duration(const char *orig, int64_t *out, char **err) {
    const char *s = orig;
    bool neg = false;
    uint64_t total = 0;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    if (*s == '\0') {
        *err = dur_err("invalid duration", orig);
        return false;
    }
    while (*s) {
        uint64_t v = 0, frac = 0;
        double scale = 1;
        bool pre = false, post = false, overflow = false;
        if (!(*s == '.' || (*s >= '0' && *s <= '9'))) {
            *err = dur_err("invalid duration", orig);
            return false;
        }
        while (*s >= '0' && *s <= '9') {
            if (v > (UINT64_MAX - 9) / 10) overflow = true;
            v = v * 10 + (uint64_t)(*s - '0');
            s++;
            pre = true;
        }
        if (overflow || v > (1ULL << 63)) {
            *err = dur_err("invalid duration", orig);
            return false;
        }
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                /* keep digits while they still fit, like Go's leadingFraction */
                if (!overflow) {
                    if (frac > (UINT64_MAX / 10) / 2) {
                        overflow = true;
                    } else {
                        frac = frac * 10 + (uint64_t)(*s - '0');
                        scale *= 10;
                    }
                }
                s++;
                post = true;
            }
        }
        if (!pre && !post) {
            *err = dur_err("invalid duration", orig);
            return false;
        }
        const char *u = s;
        while (*s && *s != '.' && !(*s >= '0' && *s <= '9')) s++;
        if (u == s) {
            *err = dur_err("missing unit in duration", orig);
            return false;
        }
        size_t ul = (size_t)(s - u);
        int64_t unit = 0;
        for (size_t i = 0; i < sizeof(go_units) / sizeof(go_units[0]); i++) {
            if (strlen(go_units[i].name) == ul && memcmp(go_units[i].name, u, ul) == 0) {
                unit = go_units[i].ns;
            }
        }
        if (!unit) {
            char *us = ks_xstrndup(u, ul);
            ks_strbuf b;
            ks_sb_init(&b);
            ks_sb_puts(&b, "time: unknown unit ");
            ks_sb_quote_str(&b, us);
            ks_sb_puts(&b, " in duration ");
            ks_sb_quote_str(&b, orig);
            free(us);
            *err = ks_sb_take(&b);
            return false;
        }
        if (v > (1ULL << 63) / (uint64_t)unit) {
            *err = dur_err("invalid duration", orig);
            return false;
        }
        v *= (uint64_t)unit;
        if (frac > 0) {
            v += (uint64_t)((double)frac * ((double)unit / scale));
            if (v > (1ULL << 63)) {
                *err = dur_err("invalid duration", orig);
                return false;
            }
        }
        total += v;
        if (total > (1ULL << 63)) {
            *err = dur_err("invalid duration", orig);
            return false;
        }
    }
    if (neg) {
        *out = total == (1ULL << 63) ? INT64_MIN : -(int64_t)total;
        return true;
    }
    if (total > (uint64_t)INT64_MAX) {
        *err = dur_err("invalid duration", orig);
        return false;
    }
    *out = (int64_t)total;
    return true;
}

/* Append v / 10^prec with the fraction's trailing zeros removed. */
static void put_frac(ks_strbuf *b, uint64_t v, int prec) {
    char frac[24];
    int n = 0;
    bool print = false;
    for (int i = 0; i < prec; i++) {
        int digit = (int)(v % 10);
        print = print || digit != 0;
        if (print) frac[n++] = (char)('0' + digit);
        v /= 10;
    }
    ks_sb_printf(b, "%llu", (unsigned long long)v);
    if (n) {
        ks_sb_putc(b, '.');
        while (n) ks_sb_putc(b, frac[--n]);
    }
}

/* time.Duration.String: "1h2m3.5s", "1.5s", "500ms", "0s". */
void go_format_duration(int64_t d, char out[40]) {
    ks_strbuf b;
    ks_sb_init(&b);
    uint64_t u = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
    if (d < 0) ks_sb_putc(&b, '-');
    if (u == 0) {
        ks_sb_puts(&b, "0s");
    } else if (u < 1000000000ULL) {
        if (u < 1000ULL) {
            ks_sb_printf(&b, "%lluns", (unsigned long long)u);
        } else if (u < 1000000ULL) {
            put_frac(&b, u, 3);
            ks_sb_puts(&b, "\xc2\xb5s");
        } else {
            put_frac(&b, u, 6);
            ks_sb_puts(&b, "ms");
        }
    } else {
        uint64_t h = u / 3600000000000ULL;
        uint64_t rem = u % 3600000000000ULL;
        uint64_t m = rem / 60000000000ULL;
        uint64_t sns = rem % 60000000000ULL;
        if (h) ks_sb_printf(&b, "%lluh", (unsigned long long)h);
        if (h || m) ks_sb_printf(&b, "%llum", (unsigned long long)m);
        put_frac(&b, sns, 9);
        ks_sb_putc(&b, 's');
    }
    snprintf(out, 40, "%s", ks_sb_str(&b));
    ks_sb_free(&b);
}

/* ---- floats -------------------------------------------------------------- */

/* Shortest decimal digits that read back as the same value at `bits`
 * precision: digits in dig (no point), decimal exponent so that the value
 * is 0.DIGITS x 10^dp. */
static void shortest_digits(double v, int bits, char dig[32], int *nd, int *dp) {
    char tmp[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        double back = strtod(tmp, NULL);
        if (bits == 32 ? (float)back == (float)v : back == v) break;
    }
    /* tmp is "d.ddde[+-]xx" */
    int n = 0;
    const char *q = tmp;
    for (; *q && *q != 'e'; q++) {
        if (*q >= '0' && *q <= '9') dig[n++] = *q;
    }
    int e = atoi(q + 1);
    while (n > 1 && dig[n - 1] == '0') n--;
    dig[n] = '\0';
    *nd = n;
    *dp = e + 1;
}

void go_format_float(double v, int bits, char out[40]) {
    if (isnan(v)) {
        snprintf(out, 40, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, 40, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    ks_strbuf b;
    ks_sb_init(&b);
    if (signbit(v)) {
        ks_sb_putc(&b, '-');
        v = -v;
    }
    if (v == 0) {
        ks_sb_putc(&b, '0');
    } else {
        char dig[32];
        int nd, dp;
        shortest_digits(v, bits, dig, &nd, &dp);
        int exp = dp - 1;
        if (exp < -4 || exp >= 6) { /* shortest 'g' decides with precision 6 */
            /* %e: d.ddde±XX (at least two exponent digits) */
            ks_sb_putc(&b, dig[0]);
            if (nd > 1) {
                ks_sb_putc(&b, '.');
                ks_sb_puts(&b, dig + 1);
            }
            ks_sb_printf(&b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        } else {
            /* %f with just the digits needed */
            if (dp <= 0) {
                ks_sb_puts(&b, "0.");
                for (int i = 0; i < -dp; i++) ks_sb_putc(&b, '0');
                ks_sb_puts(&b, dig);
            } else {
                for (int i = 0; i < dp; i++) ks_sb_putc(&b, i < nd ? dig[i] : '0');
                if (nd > dp) {
                    ks_sb_putc(&b, '.');
                    ks_sb_puts(&b, dig + dp);
                }
            }
        }
    }
    snprintf(out, 40, "%s", ks_sb_str(&b));
    ks_sb_free(&b);
}


/* StdEncoding with padding; \r and \n are skipped as Go does. */
long go_base64_invalid_at(const char *s) {
    size_t n = strlen(s);
    size_t q = 0; /* symbols in the current quantum */
    size_t pad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\r' || c == '\n') continue;
        if (pad) {
            if (c == '=' && q + pad < 4) {
                pad++;
                continue;
            }
            return (long)i;
        }
        if (c == '=') {
            if (q < 2) return (long)i;
            pad = 1;
            continue;
        }
        if (ks_base64_value(c) < 0) return (long)i;
        q = (q + 1) % 4;
    }
    if (pad) {
        if (q + pad != 4) return (long)n;
    } else if (q != 0) {
        return (long)n;
    }
    return -1;
}
