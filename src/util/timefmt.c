/* RFC 3339 formatting and parsing (see timefmt.h). */
#include "util/timefmt.h"
#include "util/clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void ks_time_format_rfc3339(int64_t ns, bool micro, char out[KS_RFC3339_LEN]) {
    time_t s = (time_t)(ns / KS_NS_PER_SEC);
    long us = (long)((ns % KS_NS_PER_SEC) / 1000);
    if (ns < 0 && ns % KS_NS_PER_SEC) {
        s--;
        us += 1000000;
    }
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(out, KS_RFC3339_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro) snprintf(out + n, KS_RFC3339_LEN - n, ".%06ldZ", us);
    else snprintf(out + n, KS_RFC3339_LEN - n, "Z");
}

void ks_time_format_now_rfc3339(bool micro, char out[KS_RFC3339_LEN]) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ks_time_format_rfc3339((int64_t)ts.tv_sec * KS_NS_PER_SEC + ts.tv_nsec, micro, out);
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* n decimal digits at s, or -1. */
static int digits(const char *s, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

bool ks_time_parse_rfc3339_sec(const char *s, int64_t *sec, int32_t *nsec) {
    size_t n = s ? strlen(s) : 0;
    if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return false;
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2), h = digits(s + 11, 2), mi = digits(s + 14, 2),
        se = digits(s + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59)
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (d > mdays[mo - 1] + (mo == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))) return false;
    size_t i = 19;
    int64_t frac = 0;
    if (s[i] == '.') {
        int nd = 0;
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            if (nd < 9) frac = frac * 10 + (s[i] - '0'), nd++;
        if (nd == 0) return false;
        while (nd++ < 9) frac *= 10;
    }
    int64_t off = 0;
    if (s[i] == 'Z' && i + 1 == n) {
        off = 0;
    } else if ((s[i] == '+' || s[i] == '-') && i + 6 == n && s[i + 3] == ':') {
        int oh = digits(s + i + 1, 2), om = digits(s + i + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
        off = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    } else {
        return false;
    }
    *sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    *nsec = (int32_t)frac;
    return true;
}

bool ks_time_parse_rfc3339(const char *s, int64_t *ns) {
    int64_t sec;
    int32_t nsec;
    if (!ks_time_parse_rfc3339_sec(s, &sec, &nsec)) return false;
    /* past 2262 nanoseconds overflow: as good as never */
    *ns = sec >= INT64_MAX / KS_NS_PER_SEC - 1 ? INT64_MAX : sec * KS_NS_PER_SEC + nsec;
    return true;
}
