/* Semantic versions with the rules and messages of blang/semver v4, which
 * upstream uses for DRA version attributes and CEL's semver(). */
#include "cel/cel.h"

#include <stdio.h>
#include <string.h>

static bool only(const char *s, size_t n, bool alnum) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= '0' && c <= '9') ||
                  (alnum && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'));
        if (!ok) return false;
    }
    return true;
}

static bool leading_zero(const char *s, size_t n) { return n > 1 && s[0] == '0'; }

/* strconv.ParseUint(s, 10, 64) on a string of digits. */
static bool parse_u64(const char *s, size_t n, uint64_t *out, char *err, size_t nerr) {
    if (n == 0) {
        snprintf(err, nerr, "strconv.ParseUint: parsing \"\": invalid syntax");
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            snprintf(err, nerr, "strconv.ParseUint: parsing \"%.*s\": value out of range", (int)n, s);
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool number(const char *what, const char *s, size_t n, uint64_t *out, char *err, size_t nerr) {
    if (!only(s, n, false)) {
        snprintf(err, nerr, "Invalid character(s) found in %s number \"%.*s\"", what, (int)n, s);
        return false;
    }
    if (leading_zero(s, n)) {
        char cap[16];
        snprintf(cap, sizeof cap, "%s", what);
        cap[0] = (char)(cap[0] - 'a' + 'A');
        snprintf(err, nerr, "%s number must not contain leading zeroes \"%.*s\"", cap, (int)n, s);
        return false;
    }
    return parse_u64(s, n, out, err, nerr);
}

bool ks_semver_parse(const char *s, size_t n, ks_semver *v, char *err, size_t nerr) {
    memset(v, 0, sizeof(*v));
    v->pre = v->build = "";
    if (n == 0) {
        snprintf(err, nerr, "Version string empty");
        return false;
    }
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - s)) : NULL;
    if (!d1 || !d2) {
        snprintf(err, nerr, "No Major.Minor.Patch elements found");
        return false;
    }
    if (!number("major", s, (size_t)(d1 - s), &v->major, err, nerr)) return false;
    if (!number("minor", d1 + 1, (size_t)(d2 - d1 - 1), &v->minor, err, nerr)) return false;
    const char *p = d2 + 1, *end = s + n;
    const char *plus = memchr(p, '+', (size_t)(end - p));
    const char *pend = plus ? plus : end;
    const char *dash = memchr(p, '-', (size_t)(pend - p));
    const char *patch_end = dash ? dash : pend;
    if (!number("patch", p, (size_t)(patch_end - p), &v->patch, err, nerr)) return false;
    if (dash) {
        v->pre = dash + 1;
        v->npre = (uint32_t)(pend - dash - 1);
        const char *q = v->pre, *qe = v->pre + v->npre;
        for (;;) {
            const char *dot = memchr(q, '.', (size_t)(qe - q));
            const char *ie = dot ? dot : qe;
            size_t len = (size_t)(ie - q);
            if (len == 0) {
                snprintf(err, nerr, "Prerelease is empty");
                return false;
            }
            if (only(q, len, false)) {
                uint64_t u;
                if (leading_zero(q, len)) {
                    snprintf(err, nerr, "Numeric PreRelease version must not contain leading zeroes \"%.*s\"", (int)len, q);
                    return false;
                }
                if (!parse_u64(q, len, &u, err, nerr)) return false;
            } else if (!only(q, len, true)) {
                snprintf(err, nerr, "Invalid character(s) found in prerelease \"%.*s\"", (int)len, q);
                return false;
            }
            if (!dot) break;
            q = dot + 1;
        }
    }
    if (plus) {
        v->build = plus + 1;
        v->nbuild = (uint32_t)(end - plus - 1);
        const char *q = v->build, *qe = end;
        for (;;) {
            const char *dot = memchr(q, '.', (size_t)(qe - q));
            const char *ie = dot ? dot : qe;
            size_t len = (size_t)(ie - q);
            if (len == 0) {
                snprintf(err, nerr, "Build meta data is empty");
                return false;
            }
            if (!only(q, len, true)) {
                snprintf(err, nerr, "Invalid character(s) found in build meta data \"%.*s\"", (int)len, q);
                return false;
            }
            if (!dot) break;
            q = dot + 1;
        }
    }
    return true;
}

/* One pre-release identifier against another (numeric < alphanumeric). */
static int pre_cmp(const char *a, size_t na, const char *b, size_t nb) {
    bool an = only(a, na, false), bn = only(b, nb, false);
    if (an && !bn) return -1;
    if (!an && bn) return 1;
    if (an) {
        if (na != nb) return na < nb ? -1 : 1; /* no leading zeros: longer is larger */
        int c = memcmp(a, b, na);
        return c < 0 ? -1 : c > 0;
    }
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c) return c < 0 ? -1 : 1;
    return na < nb ? -1 : na > nb;
}

int ks_semver_compare(const ks_semver *a, const ks_semver *b) {
    if (a->major != b->major) return a->major > b->major ? 1 : -1;
    if (a->minor != b->minor) return a->minor > b->minor ? 1 : -1;
    if (a->patch != b->patch) return a->patch > b->patch ? 1 : -1;
    if (!a->npre && !b->npre) return 0;
    if (!a->npre) return 1;
    if (!b->npre) return -1;
    const char *p = a->pre, *pe = a->pre + a->npre, *q = b->pre, *qe = b->pre + b->npre;
    for (;;) {
        const char *pd = memchr(p, '.', (size_t)(pe - p)), *qd = memchr(q, '.', (size_t)(qe - q));
        const char *pi = pd ? pd : pe, *qi = qd ? qd : qe;
        int c = pre_cmp(p, (size_t)(pi - p), q, (size_t)(qi - q));
        if (c) return c;
        if (!pd && !qd) return 0;
        if (!pd) return -1; /* fewer identifiers: smaller */
        if (!qd) return 1;
        p = pd + 1;
        q = qd + 1;
    }
}
