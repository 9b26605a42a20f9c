/* CEL's google.protobuf.Timestamp and Duration as cel-go has them:
 * conversions (RFC 3339 as Go's time.Parse reads it, Go duration
 * strings as time.ParseDuration reads them), arithmetic with cel-go's
 * overflow checks, and the getters with an optional time zone (UTC,
 * "+05:30" offsets read as cel-go reads them, IANA names from TZif files
 * looked up as Go's time package does). A timestamp keeps the UTC offset
 * it was written with, as a Go time.Time keeps its location: string()
 * prints it in that offset. */
#include "cel/time.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds */
#define MIN_UNIX INT64_C(-62135596800)
#define MAX_UNIX INT64_C(253402300799)
#define NS INT64_C(1000000000)

const cel_type CEL_T_TIMESTAMP = {CT_TIMESTAMP, 0, NULL, NULL};
const cel_type CEL_T_DURATION = {CT_DURATION, 0, NULL, NULL};

static const char TS_OVERFLOW[] = "timestamp overflow";

/* ---- calendar (proleptic Gregorian, any year) ---------------------------------- */

static int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = floordiv(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    int64_t era = floordiv(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

static int days_in(int m, int64_t y) {
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Local calendar fields of Unix second `local` (already offset). */
typedef struct civil {
    int64_t year;
    int month, day, yday, wday, hour, min, sec; /* month, day 1-based; yday 0-based */
} civil;

static civil civil_of(int64_t local) {
    civil c;
    /* the second of day from the remainder, not local - days * 86400:
     * that leaves int64 within a day of INT64_MIN (found by fuzz_cel) */
    int64_t days = floordiv(local, 86400), s = (local % 86400 + 86400) % 86400;
    civil_from_days(days, &c.year, &c.month, &c.day);
    c.yday = (int)(days - days_from_civil(c.year, 1, 1));
    c.wday = (int)(((days % 7) + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
    c.hour = (int)(s / 3600);
    c.min = (int)(s / 60 % 60);
    c.sec = (int)(s % 60);
    return c;
}

/* ---- RFC 3339 as time.Parse(time.RFC3339, s) accepts it ----------------------- */

static bool dig(const char *s, size_t n, size_t i) { return i < n && s[i] >= '0' && s[i] <= '9'; }

/* Go's getnum: one or two digits (fixed: exactly two). */
static bool getnum(const char *s, size_t n, size_t *i, bool fixed, int *out) {
    if (!dig(s, n, *i)) return false;
    if (!dig(s, n, *i + 1)) {
        if (fixed) return false;
        *out = s[*i] - '0';
        *i += 1;
        return true;
    }
    *out = (s[*i] - '0') * 10 + (s[*i + 1] - '0');
    *i += 2;
    return true;
}

bool cel_time_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec, int32_t *off) {
    size_t i = 0;
    int month, day, hour, min, secs, ns = 0;
    if (n < 4 || !dig(s, n, 0) || !dig(s, n, 1) || !dig(s, n, 2) || !dig(s, n, 3)) return false;
    int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    i = 4;
    if (i >= n || s[i++] != '-' || !getnum(s, n, &i, true, &month) || month < 1 || month > 12) return false;
    if (i >= n || s[i++] != '-' || !getnum(s, n, &i, true, &day)) return false;
    if (i >= n || s[i++] != 'T' || !getnum(s, n, &i, false, &hour) || hour >= 24) return false;
    if (i >= n || s[i++] != ':' || !getnum(s, n, &i, true, &min) || min >= 60) return false;
    if (i >= n || s[i++] != ':' || !getnum(s, n, &i, true, &secs) || secs >= 60) return false;
    /* a fraction the layout does not name: '.' or ',' and digits, nine used */
    if (i + 1 < n && (s[i] == '.' || s[i] == ',') && dig(s, n, i + 1)) {
        size_t j = i + 1;
        while (dig(s, n, j)) j++;
        size_t nd = j - i - 1;
        for (size_t k = 0; k < 9; k++) ns = ns * 10 + (k < nd ? s[i + 1 + k] - '0' : 0);
        i = j;
    }
    int zone = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else {
        if (n - i < 6 || s[i + 3] != ':') return false;
        int hr, mm;
        size_t h = i + 1, m = i + 4;
        if (!getnum(s, n, &h, true, &hr) || h != i + 3 || !getnum(s, n, &m, true, &mm)) return false;
        if (hr > 24 || mm > 60) return false;
        if (s[i] != '+' && s[i] != '-') return false;
        zone = (hr * 60 + mm) * 60;
        if (s[i] == '-') zone = -zone;
        i += 6;
    }
    if (i != n) return false;
    if (day < 1 || day > days_in(month, year)) return false;
    *sec = days_from_civil(year, month, day) * 86400 + hour * 3600 + min * 60 + secs - zone;
    *nsec = ns;
    *off = zone;
    return true;
}

/* time.Format(time.RFC3339Nano) in the timestamp's own offset */
void cel_time_format(ks_strbuf *b, int64_t sec, int32_t nsec, int32_t off) {
    civil c = civil_of((int64_t)((uint64_t)sec + (uint64_t)(int64_t)off)); /* wraps at the extremes */
    if (c.year < 0) ks_sb_printf(b, "-%04lld", (long long)-c.year);
    else ks_sb_printf(b, "%04lld", (long long)c.year);
    ks_sb_printf(b, "-%02d-%02dT%02d:%02d:%02d", c.month, c.day, c.hour, c.min, c.sec);
    if (nsec) {
        char f[16];
        snprintf(f, sizeof f, "%09d", (int)nsec);
        int k = 9;
        while (k > 0 && f[k - 1] == '0') k--;
        ks_sb_printf(b, ".%.*s", k, f);
    }
    if (off == 0) {
        ks_sb_putc(b, 'Z');
        return;
    }
    int z = off / 60;
    ks_sb_putc(b, z < 0 ? '-' : '+');
    if (z < 0) z = -z;
    ks_sb_printf(b, "%02d:%02d", z / 60, z % 60);
}

/* ---- durations as time.ParseDuration reads them ------------------------------------ */

#define ONE63 (UINT64_C(1) << 63)

bool cel_duration_parse(const char *s, size_t n, int64_t *out) {
    size_t i = 0;
    bool neg = false;
    uint64_t d = 0;
    if (n && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (n - i == 1 && s[i] == '0') {
        *out = 0;
        return true;
    }
    if (i == n) return false;
    while (i < n) {
        uint64_t v = 0, f = 0;
        double scale = 1;
        if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9'))) return false;
        size_t st = i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (v > ONE63 / 10) return false;
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > ONE63) return false;
        }
        bool pre = i != st, post = false;
        if (i < n && s[i] == '.') {
            i++;
            size_t fs = i;
            bool over = false;
            for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
                if (over) continue;
                if (f > (ONE63 - 1) / 10) {
                    over = true;
                    continue;
                }
                uint64_t y = f * 10 + (uint64_t)(s[i] - '0');
                if (y > ONE63) {
                    over = true;
                    continue;
                }
                f = y;
                scale *= 10;
            }
            post = i != fs;
        }
        if (!pre && !post) return false;
        size_t us = i;
        while (i < n && s[i] != '.' && !(s[i] >= '0' && s[i] <= '9')) i++;
        size_t ul = i - us;
        if (ul == 0) return false;
        const char *u = s + us;
        uint64_t unit;
#define U(str) (ul == sizeof(str) - 1 && memcmp(u, str, ul) == 0)
        if (U("ns")) unit = 1;
        else if (U("us") || U("\xc2\xb5s") || U("\xce\xbcs")) unit = 1000;
        else if (U("ms")) unit = 1000000;
        else if (U("s")) unit = 1000000000;
        else if (U("m")) unit = UINT64_C(60000000000);
        else if (U("h")) unit = UINT64_C(3600000000000);
        else return false;
#undef U
        if (v > ONE63 / unit) return false;
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > ONE63) return false;
        }
        d += v;
        if (d > ONE63) return false;
    }
    if (neg) {
        *out = (int64_t)(0 - d);
        return true;
    }
    if (d > ONE63 - 1) return false;
    *out = (int64_t)d;
    return true;
}

/* strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s" */
void cel_duration_format(ks_strbuf *b, int64_t d) {
    double x = (double)(d / NS) + (double)(d % NS) / 1e9;
    if (x == 0) {
        ks_sb_puts(b, "0s");
        return;
    }
    char e[40];
    for (int p = 0; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p, x);
        if (strtod(e, NULL) == x) break;
    }
    /* e: [-]D[.DDD]e[+-]XX -> fixed notation */
    const char *p = e;
    if (*p == '-') ks_sb_putc(b, *p++);
    char digs[24];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') digs[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digs[nd - 1] == '0') nd--;
    if (exp < 0) {
        ks_sb_puts(b, "0.");
        for (int k = 0; k < -exp - 1; k++) ks_sb_putc(b, '0');
        ks_sb_putn(b, digs, (size_t)nd);
    } else {
        for (int k = 0; k <= exp; k++) ks_sb_putc(b, k < nd ? digs[k] : '0');
        if (nd > exp + 1) {
            ks_sb_putc(b, '.');
            ks_sb_putn(b, digs + exp + 1, (size_t)(nd - exp - 1));
        }
    }
    ks_sb_putc(b, 's');
}

/* ---- time zones ---------------------------------------------------------------------- */

/* A location read from TZif data as Go's LoadLocationFromTZData keeps it. */
typedef struct tz_zone {
    int32_t off;
    bool dst;
} tz_zone;

typedef struct tz_loc {
    char name[256];
    tz_zone *zones;
    int nzones;
    int64_t *tx_when;
    uint8_t *tx_idx;
    int ntx;
    char *extend;
} tz_loc;

static void tz_free(tz_loc *l) {
    if (!l) return;
    free(l->zones);
    free(l->tx_when);
    free(l->tx_idx);
    free(l->extend);
    free(l);
}

static uint32_t be4(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static tz_loc *tz_parse(const uint8_t *d, size_t n) {
    size_t pos = 0;
#define NEED(k)                                                                                                        \
    do {                                                                                                               \
        if (n - pos < (size_t)(k)) return NULL;                                                                        \
    } while (0)
    NEED(20);
    if (memcmp(d, "TZif", 4) != 0) return NULL;
    int version = d[4] == 0 ? 1 : d[4] == '2' ? 2 : d[4] == '3' ? 3 : 0;
    if (!version) return NULL;
    pos = 20;
    uint32_t c[6]; /* isut, isstd, leap, time, type, char */
    NEED(24);
    for (int i = 0; i < 6; i++) c[i] = be4(d + pos + 4 * i);
    pos += 24;
    bool is64 = false;
    if (version > 1) {
        uint64_t skip = (uint64_t)c[3] * 5 + (uint64_t)c[4] * 6 + c[5] + (uint64_t)c[2] * 8 + c[1] + c[0] + 20;
        if (n - pos < skip) return NULL;
        pos += (size_t)skip;
        NEED(24);
        for (int i = 0; i < 6; i++) c[i] = be4(d + pos + 4 * i);
        pos += 24;
        is64 = true;
    }
    size_t sz = is64 ? 8 : 4;
    uint64_t need = (uint64_t)c[3] * sz + c[3] + (uint64_t)c[4] * 6 + c[5] + (uint64_t)c[2] * (sz + 4) + c[1] + c[0];
    if (n - pos < need) return NULL;
    const uint8_t *txt = d + pos, *txz = txt + c[3] * sz, *zd = txz + c[3], *ab = zd + c[4] * 6;
    const uint8_t *rest = ab + c[5] + c[2] * (sz + 4) + c[1] + c[0];
    size_t nrest = n - (size_t)(rest - d);
    if (c[4] == 0) return NULL;
    tz_loc *l = calloc(1, sizeof(*l));
    if (!l) return NULL;
    if (nrest > 2 && rest[0] == '\n' && rest[nrest - 1] == '\n') {
        l->extend = strndup((const char *)rest + 1, nrest - 2);
    }
    l->nzones = (int)c[4];
    l->zones = calloc(c[4], sizeof(tz_zone));
    for (uint32_t i = 0; i < c[4]; i++) {
        l->zones[i].off = (int32_t)be4(zd + 6 * i);
        l->zones[i].dst = zd[6 * i + 4] != 0;
        if (zd[6 * i + 5] >= c[5]) {
            tz_free(l);
            return NULL;
        }
    }
    l->ntx = c[3] ? (int)c[3] : 1;
    l->tx_when = calloc((size_t)l->ntx, sizeof(int64_t));
    l->tx_idx = calloc((size_t)l->ntx, 1);
    if (!l->zones || !l->tx_when || !l->tx_idx) {
        tz_free(l);
        return NULL;
    }
    if (c[3] == 0) {
        /* one transition at the beginning of time */
        l->tx_when[0] = INT64_MIN;
        l->tx_idx[0] = 0;
    }
    for (uint32_t i = 0; i < c[3]; i++) {
        if (is64) l->tx_when[i] = (int64_t)((uint64_t)be4(txt + 8 * i) << 32 | be4(txt + 8 * i + 4));
        else l->tx_when[i] = (int32_t)be4(txt + 4 * i);
        if (txz[i] >= c[4]) {
            tz_free(l);
            return NULL;
        }
        l->tx_idx[i] = txz[i];
    }
    return l;
#undef NEED
}

/* Go's errno texts for what reading a zone file can meet. */
static const char *errno_text(int e) {
    switch (e) {
    case EISDIR: return "is a directory";
    case EACCES: return "permission denied";
    case ENOTDIR: return "not a directory";
    case ELOOP: return "too many levels of symbolic links";
    case ENAMETOOLONG: return "file name too long";
    default: return "input/output error";
    }
}

/* Read a whole file (Go's readFile: at most 10 MB). 0, or an errno. */
static int read_file(const char *path, uint8_t **out, size_t *n) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (len == cap) {
            if (cap >= (10u << 20)) {
                free(buf);
                close(fd);
                return EFBIG;
            }
            cap *= 2;
            buf = realloc(buf, cap);
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            int e = errno;
            if (e == EINTR) continue;
            free(buf);
            close(fd);
            return e;
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    close(fd);
    *out = buf;
    *n = len;
    return 0;
}

/* Go's loadLocation over directories: the first that has the name and
 * holds TZif data wins; otherwise the first error that is not "no such
 * file" is the answer, or "unknown time zone NAME". */
static tz_loc *tz_load_dirs(const char *name, const char *const *dirs, char *err, size_t nerr) {
    err[0] = 0;
    for (int i = 0; dirs[i]; i++) {
        char path[8192];
        if (dirs[i][0]) snprintf(path, sizeof path, "%s/%s", dirs[i], name);
        else snprintf(path, sizeof path, "%s", name);
        uint8_t *data = NULL;
        size_t n = 0;
        int e = read_file(path, &data, &n);
        if (e == 0) {
            tz_loc *l = tz_parse(data, n);
            free(data);
            if (l) return l;
            if (!err[0]) snprintf(err, nerr, "malformed time zone information");
        } else if (e != ENOENT && !err[0]) {
            snprintf(err, nerr, "%s", e == EFBIG ? "file too large" : errno_text(e));
        }
    }
    if (!err[0]) snprintf(err, nerr, "unknown time zone %s", name);
    return NULL;
}

static const char *const zone_dirs[] = {"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ",
                                        "/etc/zoneinfo", NULL};

/* time.LoadLocation for names other than "", "UTC" and "Local". */
static tz_loc *tz_load(const char *name, char *err, size_t nerr) {
    if (strstr(name, "..") || name[0] == '/' || name[0] == '\\') {
        snprintf(err, nerr, "time: invalid location name");
        return NULL;
    }
    const char *zi = getenv("ZONEINFO");
    char zerr[256] = "";
    if (zi && *zi) {
        const char *dirs[] = {zi, NULL};
        tz_loc *l = tz_load_dirs(name, dirs, zerr, sizeof zerr);
        if (l) return l;
        if (strncmp(zerr, "unknown time zone", 17) == 0) zerr[0] = 0;
    }
    tz_loc *l = tz_load_dirs(name, zone_dirs, err, nerr);
    if (!l && zerr[0]) snprintf(err, nerr, "%s", zerr);
    return l;
}

/* Go's Local: $TZ (":name", a path, a zone name; "" and "UTC" are UTC),
 * else /etc/localtime, else UTC. NULL: UTC. */
static tz_loc *tz_load_local(void) {
    const char *tz = getenv("TZ");
    char err[256];
    if (!tz) {
        const char *dirs[] = {"/etc", NULL};
        return tz_load_dirs("localtime", dirs, err, sizeof err);
    }
    if (tz[0] == ':') tz++;
    if (tz[0] == '/') {
        const char *dirs[] = {"", NULL};
        return tz_load_dirs(tz, dirs, err, sizeof err);
    }
    if (tz[0] && strcmp(tz, "UTC") != 0) return tz_load_dirs(tz, zone_dirs, err, sizeof err);
    return NULL;
}

/* POSIX TZ strings (the TZif footer), as Go's tzset reads them. */
static bool tzs_name(const char **s) {
    const char *p = *s;
    if (!*p) return false;
    if (*p != '<') {
        size_t i = 0;
        for (; p[i]; i++)
            if ((p[i] >= '0' && p[i] <= '9') || p[i] == ',' || p[i] == '-' || p[i] == '+') break;
        if (i < 3) return false;
        *s = p + i;
        return true;
    }
    const char *q = strchr(p, '>');
    if (!q) return false;
    *s = q + 1;
    return true;
}

static bool tzs_num(const char **s, int min, int max, int *out) {
    const char *p = *s;
    if (!*p) return false;
    int num = 0;
    size_t i = 0;
    for (; p[i]; i++) {
        if (p[i] < '0' || p[i] > '9') {
            if (i == 0 || num < min) return false;
            break;
        }
        num = num * 10 + (p[i] - '0');
        if (num > max) return false;
    }
    if (!p[i] && num < min) return false;
    *out = num;
    *s = p + i;
    return true;
}

static bool tzs_offset(const char **s, int *out) {
    const char *p = *s;
    if (!*p) return false;
    bool neg = false;
    if (*p == '+') p++;
    else if (*p == '-') {
        p++;
        neg = true;
    }
    int h, m, sec, off;
    if (!tzs_num(&p, 0, 24 * 7, &h)) return false;
    off = h * 3600;
    if (*p == ':') {
        p++;
        if (!tzs_num(&p, 0, 59, &m)) return false;
        off += m * 60;
        if (*p == ':') {
            p++;
            if (!tzs_num(&p, 0, 59, &sec)) return false;
            off += sec;
        }
    }
    *out = neg ? -off : off;
    *s = p;
    return true;
}

typedef struct tz_rule {
    int kind; /* 0 Julian, 1 day of year, 2 month-week-day */
    int day, week, mon, time;
} tz_rule;

static bool tzs_rule(const char **s, tz_rule *r) {
    const char *p = *s;
    memset(r, 0, sizeof(*r));
    if (!*p) return false;
    if (*p == 'J') {
        p++;
        if (!tzs_num(&p, 1, 365, &r->day)) return false;
        r->kind = 0;
    } else if (*p == 'M') {
        p++;
        if (!tzs_num(&p, 1, 12, &r->mon) || *p != '.') return false;
        p++;
        if (!tzs_num(&p, 1, 5, &r->week) || *p != '.') return false;
        p++;
        if (!tzs_num(&p, 0, 6, &r->day)) return false;
        r->kind = 2;
    } else {
        if (!tzs_num(&p, 0, 365, &r->day)) return false;
        r->kind = 1;
    }
    if (*p != '/') {
        r->time = 7200;
    } else {
        p++;
        if (!tzs_offset(&p, &r->time)) return false;
    }
    *s = p;
    return true;
}

static int64_t tz_rule_time(int64_t year, const tz_rule *r, int off) {
    int64_t s = 0;
    static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    switch (r->kind) {
    case 0:
        s = (int64_t)(r->day - 1) * 86400;
        if (is_leap(year) && r->day >= 60) s += 86400;
        break;
    case 1: s = (int64_t)r->day * 86400; break;
    default: {
        int64_t m1 = (r->mon + 9) % 12 + 1, yy0 = year;
        if (r->mon <= 2) yy0--;
        int64_t yy1 = yy0 / 100, yy2 = yy0 % 100;
        int64_t dow = ((26 * m1 - 2) / 10 + 1 + yy2 + yy2 / 4 + yy1 / 4 - 2 * yy1) % 7;
        if (dow < 0) dow += 7;
        int64_t d = r->day - dow;
        if (d < 0) d += 7;
        for (int i = 1; i < r->week; i++) {
            if (d + 7 >= days_in(r->mon, year)) break;
            d += 7;
        }
        d += before[r->mon - 1];
        if (is_leap(year) && r->mon > 2) d++;
        s = d * 86400;
    }
    }
    return s + r->time - off;
}

/* The offset the extend rule gives at sec; false if it does not parse. */
static bool tzset_offset(const char *s, int64_t sec, int32_t *out) {
    int stdoff, dstoff;
    if (!tzs_name(&s) || !tzs_offset(&s, &stdoff)) return false;
    stdoff = -stdoff;
    if (!*s || *s == ',') {
        *out = stdoff;
        return true;
    }
    if (!tzs_name(&s)) return false;
    if (!*s || *s == ',') {
        dstoff = stdoff + 3600;
    } else {
        if (!tzs_offset(&s, &dstoff)) return false;
        dstoff = -dstoff;
    }
    if (!*s) s = ",M3.2.0,M11.1.0";
    if (*s != ',' && *s != ';') return false;
    s++;
    tz_rule a, b;
    if (!tzs_rule(&s, &a) || *s != ',') return false;
    s++;
    if (!tzs_rule(&s, &b) || *s) return false;
    civil c = civil_of(sec);
    int64_t ysec = (int64_t)c.yday * 86400 + sec % 86400;
    int64_t start = tz_rule_time(c.year, &a, stdoff), end = tz_rule_time(c.year, &b, dstoff);
    if (end < start) {
        int64_t t = start;
        start = end;
        end = t;
        int o = stdoff;
        stdoff = dstoff;
        dstoff = o;
    }
    *out = ysec < start || ysec >= end ? stdoff : dstoff;
    return true;
}

/* Location.lookup: the offset in effect at Unix second sec. */
static int32_t tz_offset_at(const tz_loc *l, int64_t sec) {
    if (l->ntx == 0 || sec < l->tx_when[0]) {
        /* lookupFirstZone */
        bool used = false;
        for (int i = 0; i < l->ntx; i++)
            if (l->tx_idx[i] == 0) used = true;
        if (!used) return l->zones[0].off;
        if (l->ntx > 0 && l->zones[l->tx_idx[0]].dst)
            for (int z = l->tx_idx[0] - 1; z >= 0; z--)
                if (!l->zones[z].dst) return l->zones[z].off;
        for (int z = 0; z < l->nzones; z++)
            if (!l->zones[z].dst) return l->zones[z].off;
        return l->zones[0].off;
    }
    int lo = 0, hi = l->ntx;
    while (hi - lo > 1) {
        int m = (int)((unsigned)(lo + hi) >> 1);
        if (sec < l->tx_when[m]) hi = m;
        else lo = m;
    }
    int32_t off = l->zones[l->tx_idx[lo]].off;
    if (lo == l->ntx - 1 && l->extend && *l->extend) {
        int32_t e;
        if (tzset_offset(l->extend, sec, &e)) return e;
    }
    return off;
}

/* A few locations stay loaded (bounded; replaced round robin). */
#define TZ_CACHE 16
static pthread_mutex_t tz_mu = PTHREAD_MUTEX_INITIALIZER;
static tz_loc *tz_cache[TZ_CACHE];
static int tz_next;
static tz_loc *tz_local;
static bool tz_local_loaded;

/* The UTC offset of the zone `name` at Unix second sec (Go's LoadLocation
 * then Time.In). false with err: the error text. */
static bool zone_offset(const char *name, int64_t sec, int32_t *off, char *err, size_t nerr) {
    if (!name[0] || strcmp(name, "UTC") == 0) {
        *off = 0;
        return true;
    }
    pthread_mutex_lock(&tz_mu);
    const tz_loc *l = NULL;
    if (strcmp(name, "Local") == 0) {
        if (!tz_local_loaded) {
            tz_local = tz_load_local();
            tz_local_loaded = true;
        }
        l = tz_local;
        *off = l ? tz_offset_at(l, sec) : 0;
        pthread_mutex_unlock(&tz_mu);
        return true;
    }
    for (int i = 0; i < TZ_CACHE && !l; i++)
        if (tz_cache[i] && strcmp(tz_cache[i]->name, name) == 0) l = tz_cache[i];
    if (!l) {
        tz_loc *nl = tz_load(name, err, nerr);
        if (!nl) {
            pthread_mutex_unlock(&tz_mu);
            return false;
        }
        size_t nl_len = strlen(name);
        if (nl_len >= sizeof nl->name) nl_len = sizeof nl->name - 1;
        memcpy(nl->name, name, nl_len);
        nl->name[nl_len] = 0;
        tz_free(tz_cache[tz_next]);
        tz_cache[tz_next] = nl;
        tz_next = (tz_next + 1) % TZ_CACHE;
        l = nl;
    }
    *off = tz_offset_at(l, sec);
    pthread_mutex_unlock(&tz_mu);
    return true;
}

/* ---- values ----------------------------------------------------------------------------- */

static cel_val mkts(int64_t sec, int32_t nsec, int32_t off) {
    cel_val v = {.kind = CV_TIMESTAMP};
    v.ts.sec = sec;
    v.ts.nsec = nsec;
    v.ts.off = off;
    return v;
}

static inline cel_val mkdur(int64_t d) { return (cel_val){.kind = CV_DURATION, .i = d}; }

static cel_val mkstr_sb(cel_eval *ev, ks_strbuf *b) {
    char *d = ks_arena_alloc_uninit(ev->scratch, b->len + 1);
    memcpy(d, ks_sb_str(b), b->len);
    d[b->len] = 0;
    cel_val r = cel_str(d, b->len);
    ks_sb_free(b);
    return r;
}

int cel_time_compare(cel_val a, cel_val b) {
    if (a.kind == CV_DURATION) return a.i < b.i ? -1 : a.i > b.i;
    if (a.ts.sec != b.ts.sec) return a.ts.sec < b.ts.sec ? -1 : 1;
    return a.ts.nsec < b.ts.nsec ? -1 : a.ts.nsec > b.ts.nsec;
}

void cel_time_print(ks_strbuf *b, cel_val v) {
    if (v.kind == CV_DURATION) {
        ks_sb_puts(b, "duration(\"");
        cel_duration_format(b, v.i);
    } else {
        ks_sb_puts(b, "timestamp(\"");
        cel_time_format(b, v.ts.sec, v.ts.nsec, 0);
    }
    ks_sb_puts(b, "\")");
}

/* ---- conversions ---------------------------------------------------------------------------- */

cel_val cel_f_timestamp(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    switch (a.kind) {
    case CV_TIMESTAMP: return a;
    case CV_INT:
        if (a.i < MIN_UNIX || a.i > MAX_UNIX) return cel_err_static(TS_OVERFLOW);
        return mkts(a.i, 0, 0);
    case CV_STRING: {
        int64_t sec;
        int32_t nsec, off;
        if (!cel_time_parse_rfc3339(a.s, a.len, &sec, &nsec, &off))
            return cel_err_static("type conversion error from 'string' to 'google.protobuf.Timestamp'");
        if (sec < MIN_UNIX || sec > MAX_UNIX) return cel_err_static(TS_OVERFLOW);
        return mkts(sec, nsec, off);
    }
    default: return cel_no_overload();
    }
}

cel_val cel_f_duration(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0];
    switch (a.kind) {
    case CV_DURATION: return a;
    case CV_INT: return cel_err_static("type conversion error from 'int' to 'google.protobuf.Duration'");
    case CV_STRING: {
        int64_t d;
        if (!cel_duration_parse(a.s, a.len, &d))
            return cel_err_static("type conversion error from 'string' to 'google.protobuf.Duration'");
        return mkdur(d);
    }
    default: return cel_no_overload();
    }
}

cel_val cel_f_time_int(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind == CV_DURATION) return cel_int(args[0].i);
    if (args[0].kind == CV_TIMESTAMP) return cel_int(args[0].ts.sec);
    return cel_no_overload();
}

cel_val cel_f_time_string(cel_eval *ev, const cel_val *args, uint32_t n) {
    ks_strbuf b;
    ks_sb_init(&b);
    if (args[0].kind == CV_DURATION) cel_duration_format(&b, args[0].i);
    else if (args[0].kind == CV_TIMESTAMP) cel_time_format(&b, args[0].ts.sec, args[0].ts.nsec, args[0].ts.off);
    else {
        ks_sb_free(&b);
        return cel_no_overload();
    }
    return mkstr_sb(ev, &b);
}


bool cel_time_literal_invalid(const char *fn, cel_val lit) {
    cel_val r;
    if (strcmp(fn, "timestamp") == 0) r = cel_f_timestamp(NULL, &lit, 1);
    else if (strcmp(fn, "duration") == 0) r = cel_f_duration(NULL, &lit, 1);
    else return false;
    return r.kind == CV_ERROR;
}

/* ---- arithmetic ------------------------------------------------------------------------------ */

/* cel-go's addTimeDurationChecked: seconds and nanoseconds apart, then the
 * range of a timestamp. */
static cel_val ts_add(cel_val t, int64_t d) {
    int64_t sec;
    if (__builtin_add_overflow(t.ts.sec, d / NS, &sec)) return cel_err_static("integer overflow");
    int64_t nsec = (int64_t)t.ts.nsec + d % NS;
    if (nsec < 0 || nsec >= NS) {
        if (__builtin_add_overflow(sec, nsec / NS, &sec)) return cel_err_static("integer overflow");
        nsec -= (nsec / NS) * NS;
        if (nsec < 0) {
            if (__builtin_add_overflow(sec, -1, &sec)) return cel_err_static("integer overflow");
            nsec += NS;
        }
    }
    if (sec < MIN_UNIX || sec > MAX_UNIX) return cel_err_static(TS_OVERFLOW);
    return mkts(sec, (int32_t)nsec, t.ts.off);
}

cel_val cel_f_time_add(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind == CV_DURATION && b.kind == CV_DURATION) {
        int64_t r;
        if (__builtin_add_overflow(a.i, b.i, &r)) return cel_err_static("integer overflow");
        return mkdur(r);
    }
    if (a.kind == CV_TIMESTAMP && b.kind == CV_DURATION) return ts_add(a, b.i);
    if (a.kind == CV_DURATION && b.kind == CV_TIMESTAMP) return ts_add(b, a.i);
    return cel_no_overload();
}

cel_val cel_f_time_sub(cel_eval *ev, const cel_val *args, uint32_t n) {
    cel_val a = args[0], b = args[1];
    if (a.kind == CV_DURATION && b.kind == CV_DURATION) {
        int64_t r;
        if (__builtin_sub_overflow(a.i, b.i, &r)) return cel_err_static("integer overflow");
        return mkdur(r);
    }
    if (a.kind == CV_TIMESTAMP && b.kind == CV_DURATION) {
        if (b.i == INT64_MIN) return cel_err_static("integer overflow");
        return ts_add(a, -b.i);
    }
    if (a.kind == CV_TIMESTAMP && b.kind == CV_TIMESTAMP) {
        int64_t sec, t, r;
        if (__builtin_sub_overflow(a.ts.sec, b.ts.sec, &sec)) return cel_err_static("integer overflow");
        if (__builtin_mul_overflow(sec, NS, &t)) return cel_err_static("integer overflow");
        if (__builtin_add_overflow(t, (int64_t)a.ts.nsec - b.ts.nsec, &r)) return cel_err_static("integer overflow");
        return mkdur(r);
    }
    return cel_no_overload();
}

cel_val cel_f_duration_neg(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_DURATION) return cel_no_overload();
    if (args[0].i == INT64_MIN) return cel_err_static("integer overflow");
    return mkdur(-args[0].i);
}

/* ---- getters ---------------------------------------------------------------------------------- */

/* strconv.Atoi's error for s */
static void atoi_error(char *err, size_t nerr, const char *s, size_t n, bool range) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "strconv.Atoi: parsing \"");
    /* strconv.Quote: printable runes as they are, the rest escaped (Go's
     * unicode.IsPrint approximated for the spaces and format characters) */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
        if (i + l > n) l = n - i;
        uint32_t r = l == 1 ? c : l == 2 ? (c & 0x1fu) : l == 3 ? (c & 0x0fu) : (c & 0x07u);
        for (size_t k = 1; k < l; k++) r = r << 6 | ((unsigned char)s[i + k] & 0x3fu);
        if (r == '"' || r == '\\') ks_sb_printf(&b, "\\%c", (char)r);
        else if (r == '\a') ks_sb_puts(&b, "\\a");
        else if (r == '\b') ks_sb_puts(&b, "\\b");
        else if (r == '\f') ks_sb_puts(&b, "\\f");
        else if (r == '\n') ks_sb_puts(&b, "\\n");
        else if (r == '\r') ks_sb_puts(&b, "\\r");
        else if (r == '\t') ks_sb_puts(&b, "\\t");
        else if (r == '\v') ks_sb_puts(&b, "\\v");
        else if (r < 0x20 || r == 0x7f) ks_sb_printf(&b, "\\x%02x", (unsigned)r);
        else if ((r >= 0x80 && r <= 0xa0) || r == 0xad || (r >= 0x2000 && r <= 0x200f) ||
                 (r >= 0x2028 && r <= 0x202f) || (r >= 0x205f && r <= 0x206f) || r == 0x3000 || r == 0xfeff ||
                 (r >= 0xe000 && r <= 0xf8ff) || (r >= 0xfff9 && r <= 0xfffb))
            ks_sb_printf(&b, "\\u%04x", (unsigned)r);
        else ks_sb_putn(&b, s + i, l);
        i += l;
    }
    ks_sb_printf(&b, "\": %s", range ? "value out of range" : "invalid syntax");
    snprintf(err, nerr, "%s", ks_sb_str(&b));
    ks_sb_free(&b);
}

/* strconv.Atoi (base 10, optional sign, 64-bit). */
static bool go_atoi(const char *s, size_t n, int64_t *out, char *err, size_t nerr) {
    size_t i = 0;
    bool neg = false;
    if (n && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n) {
        atoi_error(err, nerr, s, n, false);
        return false;
    }
    uint64_t v = 0;
    bool range = false;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            atoi_error(err, nerr, s, n, false);
            return false;
        }
        if (range) continue;
        if (v > UINT64_MAX / 10 || v * 10 > UINT64_MAX - (uint64_t)(s[i] - '0')) {
            /* ParseUint stops at the overflow: a range error */
            atoi_error(err, nerr, s, n, true);
            return false;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if ((!neg && v > (uint64_t)INT64_MAX) || (neg && v > ONE63)) {
        atoi_error(err, nerr, s, n, true);
        return false;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* The offset of zone tz (cel-go's timeZone) at the instant t. */
static bool tz_offset(cel_eval *ev, cel_val t, cel_val tz, int32_t *off, cel_val *errv) {
    char err[512];
    const char *colon = memchr(tz.s, ':', tz.len);
    if (!colon) {
        /* a NUL cannot reach a file name: open fails with EINVAL */
        bool dotdot = false;
        for (size_t i = 0; i + 1 < tz.len; i++)
            if (tz.s[i] == '.' && tz.s[i + 1] == '.') dotdot = true;
        if (dotdot || (tz.len && (tz.s[0] == '/' || tz.s[0] == '\\'))) {
            *errv = cel_err_static("time: invalid location name");
            return false;
        }
        if (memchr(tz.s, 0, tz.len)) {
            *errv = cel_errorf(ev, "invalid argument");
            return false;
        }
        char *name = ks_arena_alloc_uninit(ev->scratch, tz.len + 1);
        memcpy(name, tz.s, tz.len);
        name[tz.len] = 0;
        if (!zone_offset(name, t.ts.sec, off, err, sizeof err)) {
            *errv = cel_errorf(ev, "%s", err);
            return false;
        }
        return true;
    }
    size_t ind = (size_t)(colon - tz.s);
    int64_t hr, mn;
    if (!go_atoi(tz.s, ind, &hr, err, sizeof err) || !go_atoi(colon + 1, tz.len - ind - 1, &mn, err, sizeof err)) {
        *errv = cel_errorf(ev, "%s", err);
        return false;
    }
    /* Go's int arithmetic wraps; Duration.Seconds() then truncated */
    uint64_t o = (uint64_t)hr * 60;
    o = tz.s[0] == '-' ? o - (uint64_t)mn : o + (uint64_t)mn;
    int64_t d = (int64_t)(o * UINT64_C(60000000000));
    double secs = (double)(d / NS) + (double)(d % NS) / 1e9;
    *off = (int32_t)(int64_t)secs;
    return true;
}

typedef enum { G_YEAR, G_MONTH, G_DOY, G_DOM0, G_DOM1, G_DOW, G_HOURS, G_MINUTES, G_SECONDS, G_MILLIS } getter;

static cel_val get(cel_eval *ev, const cel_val *args, uint32_t n, getter g) {
    cel_val a = args[0];
    if (a.kind == CV_DURATION && n == 1) {
        int64_t d = a.i;
        switch (g) {
        case G_HOURS: {
            int64_t h = d / INT64_C(3600000000000), r = d % INT64_C(3600000000000);
            return cel_int((int64_t)((double)h + (double)r / 3.6e12));
        }
        case G_MINUTES: {
            int64_t m = d / INT64_C(60000000000), r = d % INT64_C(60000000000);
            return cel_int((int64_t)((double)m + (double)r / 6e10));
        }
        case G_SECONDS: return cel_int((int64_t)((double)(d / NS) + (double)(d % NS) / 1e9));
        case G_MILLIS: return cel_int(d / 1000000);
        default: return cel_no_overload();
        }
    }
    if (a.kind != CV_TIMESTAMP) return cel_no_overload();
    int32_t off = 0;
    if (n == 2) {
        if (args[1].kind != CV_STRING) return cel_no_overload();
        cel_val e;
        if (!tz_offset(ev, a, args[1], &off, &e)) return e;
    }
    civil c = civil_of((int64_t)((uint64_t)a.ts.sec + (uint64_t)(int64_t)off));
    switch (g) {
    case G_YEAR: return cel_int(c.year);
    case G_MONTH: return cel_int(c.month - 1);
    case G_DOY: return cel_int(c.yday);
    case G_DOM0: return cel_int(c.day - 1);
    case G_DOM1: return cel_int(c.day);
    case G_DOW: return cel_int(c.wday);
    case G_HOURS: return cel_int(c.hour);
    case G_MINUTES: return cel_int(c.min);
    case G_SECONDS: return cel_int(c.sec);
    default: return cel_int(a.ts.nsec / 1000000);
    }
}

cel_val cel_f_get_full_year(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_YEAR); }
cel_val cel_f_get_month(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_MONTH); }
cel_val cel_f_get_day_of_year(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_DOY); }
cel_val cel_f_get_day_of_month(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_DOM0); }
cel_val cel_f_get_date(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_DOM1); }
cel_val cel_f_get_day_of_week(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_DOW); }
cel_val cel_f_get_hours(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_HOURS); }
cel_val cel_f_get_minutes(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_MINUTES); }
cel_val cel_f_get_seconds(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_SECONDS); }
cel_val cel_f_get_milliseconds(cel_eval *ev, const cel_val *a, uint32_t n) { return get(ev, a, n, G_MILLIS); }

/* ---- message literals ------------------------------------------------------------------------- */

int cel_time_message_type(const char *name) {
    if (name[0] == '.') name++;
    if (strcmp(name, "google.protobuf.Timestamp") == 0 || strcmp(name, "timestamp") == 0) return CT_TIMESTAMP;
    if (strcmp(name, "google.protobuf.Duration") == 0 || strcmp(name, "duration") == 0) return CT_DURATION;
    return -1;
}

/* cel-go's native conversion of a field value to int64 / int32, with its
 * texts; an optional with a value converts as that value. */
static bool field_int(cel_eval *ev, const char *msg, const char *field, cel_val v, bool i32, int64_t *out,
                      cel_val *err) {
    const char *to = i32 ? "int32" : "int64";
    char why[160];
    if (v.kind == CV_OPTIONAL) {
        if (!v.opt) {
            snprintf(why, sizeof why, "optional.none() dereference");
            goto fail;
        }
        v = *v.opt;
    }
    switch (v.kind) {
    case CV_INT:
        if (i32 && (v.i < INT32_MIN || v.i > INT32_MAX)) {
            snprintf(why, sizeof why, "integer overflow");
            goto fail;
        }
        *out = v.i;
        return true;
    case CV_STRING: snprintf(why, sizeof why, "unsupported native conversion from string to '%s'", to); break;
    case CV_UINT: snprintf(why, sizeof why, "unsupported type conversion from 'uint' to %s", to); break;
    case CV_TYPE: snprintf(why, sizeof why, "type conversion not supported for 'type'"); break;
    default: {
        const char *from;
        switch (v.kind) {
        case CV_BOOL: from = "bool"; break;
        case CV_BYTES: from = "Bytes"; break;
        case CV_DOUBLE: from = "Double"; break;
        case CV_LIST: from = "list"; break;
        case CV_MAP:
        case CV_DEVMAP: from = "map"; break;
        case CV_NULL: from = "'null_type'"; break;
        case CV_TIMESTAMP: from = "'Timestamp'"; break;
        case CV_DURATION: from = "'Duration'"; break;
        case CV_QUANTITY: from = "'Quantity'"; break;
        case CV_SEMVER: from = "'Semver'"; break;
        case CV_IP: from = "'IP'"; break;
        case CV_CIDR: from = "'CIDR'"; break;
        default: from = cel_val_type_name(v); break;
        }
        snprintf(why, sizeof why, "type conversion error from %s to '%s'", from, to);
    }
    }
fail:
    *err = cel_errorf(ev, "field type conversion error for %s.%s value type: %s", msg, field, why);
    return false;
}

cel_val cel_time_make_message(cel_eval *ev, const cel_expr *e) {
    const char *name = e->call.args[0]->lit.s;
    int tk = cel_time_message_type(name);
    if (name[0] == '.') name++;
    ev->cost += 40; /* cel-go's StructCreateBaseCost */
    if (ev->limit && ev->cost > ev->limit) ev->cancelled = true;
    /* the fields as set in order: a later one replaces, an empty optional
     * clears */
    cel_val vals[2];
    bool set[2] = {false, false};
    for (uint32_t i = 1; i + 1 < e->call.nargs; i += 2) {
        const char *f = e->call.args[i]->lit.s;
        bool opt = f[0] == '?';
        int k = strcmp(f + opt, "nanos") == 0;
        cel_val v = cel_eval_expr(ev, e->call.args[i + 1]);
        if (v.kind == CV_ERROR) return v;
        if (opt) {
            if (v.kind != CV_OPTIONAL) {
                ks_strbuf b;
                ks_sb_init(&b);
                if (v.kind == CV_STRING) ks_sb_putn(&b, v.s, v.len);
                else cel_val_print(&b, v);
                cel_val r = cel_errorf(ev, "cannot initialize optional entry '%s' from non-optional value %s", f + 1,
                                       ks_sb_str(&b));
                ks_sb_free(&b);
                return r;
            }
            if (!v.opt) {
                set[k] = false;
                continue;
            }
            v = *v.opt;
        }
        vals[k] = v;
        set[k] = true;
    }
    /* timestamp{} and duration{} type-check, but no message has the name */
    if (strcmp(name, "timestamp") == 0 || strcmp(name, "duration") == 0)
        return cel_errorf(ev, "unknown type '%s'", name);
    int64_t secs = 0, nanos = 0;
    cel_val err;
    if (set[0] && !field_int(ev, name, "seconds", vals[0], false, &secs, &err)) return err;
    if (set[1] && !field_int(ev, name, "nanos", vals[1], true, &nanos, &err)) return err;
    if (tk == CT_TIMESTAMP) {
        /* time.Unix(seconds, nanos).UTC(): no range check */
        uint64_t s = (uint64_t)secs + (uint64_t)(nanos / NS);
        int64_t ns = nanos % NS;
        if (ns < 0) {
            ns += NS;
            s--;
        }
        return mkts((int64_t)s, (int32_t)ns, 0);
    }
    /* durationpb's AsDuration: saturated on overflow */
    int64_t d;
    bool over = __builtin_mul_overflow(secs, NS, &d);
    if (!over) {
        int64_t r;
        over = __builtin_add_overflow(d, nanos, &r);
        d = r;
    }
    if (over) d = secs < 0 ? INT64_MIN : INT64_MAX;
    return mkdur(d);
}
