/* Kubernetes' format library (k8s.io/apiserver/pkg/cel/library format.go,
 * type kubernetes.NamedFormat) as DRA's environment declares it:
 * format.named(name), the constant formats format.dns1123Label() etc.,
 * and <format>.validate(s), an optional list of the messages upstream's
 * validation functions give (none when s is valid). The DNS and label
 * checks are src/api/validation.c's; the OpenAPI formats (uuid, byte,
 * date, datetime) follow kube-openapi's strfmt. */
#include "api/validation.h"
#include "cel/cel_internal.h"

#include <string.h>

const cel_type CEL_T_FORMAT = {CT_FORMAT, 0, NULL, NULL};

enum {
    F_DNS1123_LABEL,
    F_DNS1123_SUBDOMAIN,
    F_DNS1035_LABEL,
    F_QUALIFIED_NAME,
    F_DNS1123_LABEL_PREFIX,
    F_DNS1123_SUBDOMAIN_PREFIX,
    F_DNS1035_LABEL_PREFIX,
    F_LABEL_VALUE,
    F_URI,
    F_UUID,
    F_BYTE,
    F_DATE,
    F_DATETIME,
    F_COUNT
};

/* name in format.named() and format.<name>(); the regex size upstream's
 * cost model charges validate() for */
static const struct {
    const char *key;
    unsigned max_regex;
} formats[F_COUNT] = {
    {"dns1123Label", 30},  {"dns1123Subdomain", 60},       {"dns1035Label", 30},
    {"qualifiedName", 60}, {"dns1123LabelPrefix", 30},     {"dns1123SubdomainPrefix", 60},
    {"dns1035LabelPrefix", 30}, {"labelValue", 40},        {"uri", 1103},
    {"uuid", 70},          {"byte", 84},                   {"date", 71},
    {"datetime", 71},
};

const char *cel_format_key(int f) { return f >= 0 && f < F_COUNT ? formats[f].key : "?"; }

unsigned cel_format_regex_size(int f) { return f >= 0 && f < F_COUNT ? formats[f].max_regex : 0; }

static bool hexdig(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool digit(char c) { return c >= '0' && c <= '9'; }

/* (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$ */
static bool is_uuid(const char *s, size_t n) {
    static const int groups[] = {8, 4, 4, 4, 12};
    size_t i = 0;
    for (int g = 0; g < 5; g++) {
        if (g && i < n && s[i] == '-') i++;
        for (int k = 0; k < groups[g]; k++, i++)
            if (i >= n || !hexdig(s[i])) return false;
    }
    return i == n;
}

/* govalidator's ^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$ */
static bool is_base64(const char *s, size_t n) {
    if (n == 0 || n % 4) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool b64 = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || digit(c) || c == '+' || c == '/';
        if (b64) continue;
        /* '=' only as the padding of the last group */
        if (c == '=' && i >= n - 2 && (i == n - 1 || s[n - 1] == '=')) continue;
        return false;
    }
    return true;
}

static int num(const char *s, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
    return v;
}

/* Go's time.Parse("2006-01-02", s) succeeding */
static bool is_date(const char *s, size_t n) {
    if (n != 10 || s[4] != '-' || s[7] != '-') return false;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && !digit(s[i])) return false;
    int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) return false;
    int dim = days[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
    return d <= dim;
}

/* Bytes of the UTF-8 character at s (Go's regexp reads one rune; an
 * invalid byte is one rune) */
static size_t rune_len(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (l > n) return 1;
    for (size_t i = 1; i < l; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) return 1;
    return l;
}

/* the zone of the date-time pattern: z|[+-][0-9]{2}:[0-9]{2}, to the end */
static bool dt_zone(const char *s, size_t n) {
    if (n == 1 && s[0] == 'z') return true;
    return n == 6 && (s[0] == '+' || s[0] == '-') && digit(s[1]) && digit(s[2]) && s[3] == ':' && digit(s[4]) &&
           digit(s[5]);
}

/* ^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$ with
 * hours <= 23, minutes and seconds <= 59 */
static bool dt_time(const char *s, size_t n) {
    if (n < 8 || !digit(s[0]) || !digit(s[1]) || s[2] != ':' || !digit(s[3]) || !digit(s[4]) || s[5] != ':' ||
        !digit(s[6]) || !digit(s[7]))
        return false;
    if (num(s, 2) > 23 || num(s + 3, 2) > 59 || num(s + 6, 2) > 59) return false;
    const char *r = s + 8;
    size_t rn = n - 8;
    if (dt_zone(r, rn)) return true;
    /* the fraction: any character but a newline, then digits */
    if (rn == 0 || r[0] == '\n') return false;
    size_t k = rune_len(r, rn), d = k;
    while (d < rn && digit(r[d])) d++;
    return d > k && dt_zone(r + d, rn - d);
}

/* strfmt.IsDateTime: lower-cased, split at 't', the first piece a date
 * and the second a time (further pieces are not looked at) */
static bool is_datetime(ks_arena *a, const char *s, size_t n) {
    if (n < 4) return false;
    char *l = ks_arena_strndup(a, s, n);
    for (size_t i = 0; i < n; i++)
        if (l[i] >= 'A' && l[i] <= 'Z') l[i] = (char)(l[i] - 'A' + 'a');
    const char *t = memchr(l, 't', n);
    if (!t || !is_date(l, (size_t)(t - l))) return false;
    const char *p2 = t + 1;
    const char *t2 = memchr(p2, 't', n - (size_t)(p2 - l));
    size_t n2 = t2 ? (size_t)(t2 - p2) : n - (size_t)(p2 - l);
    return dt_time(p2, n2);
}

/* upstream's maskTrailingDash (which drops two characters for one) */
static char *mask_trailing_dash(char *s) {
    size_t n = strlen(s);
    if (n > 1 && s[n - 1] == '-') {
        s[n - 2] = 'a';
        s[n - 1] = 0;
    }
    return s;
}

#define MSG_DNS1035                                                                                      \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "       \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', " \
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

/* IsDNS1035Label */
static int dns1035_label(const char *s, const char **msgs) {
    int n = 0;
    size_t len = strlen(s);
    if (len > 63) msgs[n++] = "must be no more than 63 characters";
    bool ok = len > 0 && s[0] >= 'a' && s[0] <= 'z';
    char last = len ? s[len - 1] : 0;
    ok = ok && ((last >= 'a' && last <= 'z') || digit(last));
    for (size_t i = 1; ok && i + 1 < len; i++) ok = (s[i] >= 'a' && s[i] <= 'z') || digit(s[i]) || s[i] == '-';
    if (!ok) msgs[n++] = MSG_DNS1035;
    return n;
}

/* ---- the library's functions ------------------------------------------------------------------ */

cel_val cel_f_format_named(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_val o = {.kind = CV_OPTIONAL};
    for (int f = 0; f < F_COUNT; f++)
        if (strlen(formats[f].key) == args[0].len && memcmp(formats[f].key, args[0].s, args[0].len) == 0) {
            cel_val *v = ks_arena_alloc_uninit(ev->scratch, sizeof(*v));
            *v = (cel_val){.kind = CV_FORMAT, .sub = (uint8_t)f};
            o.opt = v;
        }
    return o;
}

static cel_val named(const char *key) {
    int f = 0;
    while (f < F_COUNT - 1 && strcmp(formats[f].key, key) != 0) f++;
    return (cel_val){.kind = CV_FORMAT, .sub = (uint8_t)f};
}

/* format.dns1123Label() and the others */
#define X(name) \
    cel_val cel_f_format_##name(cel_eval *ev, const cel_val *args, uint32_t n) { return named(#name); }
CEL_FORMAT_CONSTS(X)
#undef X

cel_val cel_f_validate(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_FORMAT || args[1].kind != CV_STRING) return cel_no_overload();
    const char *s = args[1].s;
    size_t len = args[1].len;
    /* the checks read C strings: a NUL becomes a byte that no rule accepts */
    char *c = ks_arena_strndup(ev->scratch, s, len);
    for (size_t i = 0; i < len; i++)
        if (!c[i]) c[i] = '\x01';
    const char *msgs[KS_VALID_MAX_MSGS];
    int nm = 0;
    ks_strbuf uerr;
    ks_sb_init(&uerr);
    switch (args[0].sub) {
    case F_DNS1123_LABEL: nm = ks_valid_dns1123_label(c, msgs); break;
    case F_DNS1123_SUBDOMAIN: nm = ks_valid_dns1123_subdomain(c, msgs); break;
    case F_DNS1035_LABEL: nm = dns1035_label(c, msgs); break;
    case F_QUALIFIED_NAME: nm = ks_valid_qualified_name(c, msgs); break;
    case F_DNS1123_LABEL_PREFIX: nm = ks_valid_dns1123_label(mask_trailing_dash(c), msgs); break;
    case F_DNS1123_SUBDOMAIN_PREFIX: nm = ks_valid_dns1123_subdomain(mask_trailing_dash(c), msgs); break;
    case F_DNS1035_LABEL_PREFIX: nm = dns1035_label(mask_trailing_dash(c), msgs); break;
    case F_LABEL_VALUE: nm = ks_valid_label_value(c, msgs); break;
    case F_URI:
        if (cel_url_request_error(ev->scratch, s, len, &uerr)) {
            msgs[0] = ks_arena_strndup(ev->scratch, ks_sb_str(&uerr), uerr.len);
            nm = 1;
        }
        break;
    case F_UUID:
        if (!is_uuid(s, len)) msgs[nm++] = "does not match the UUID format";
        break;
    case F_BYTE:
        if (!is_base64(s, len)) msgs[nm++] = "invalid base64";
        break;
    case F_DATE:
        if (!is_date(s, len)) msgs[nm++] = "invalid date";
        break;
    default:
        if (!is_datetime(ev->scratch, s, len)) msgs[nm++] = "invalid datetime";
        break;
    }
    ks_sb_free(&uerr);
    cel_val o = {.kind = CV_OPTIONAL};
    if (nm == 0) return o;
    cel_val l[KS_VALID_MAX_MSGS];
    for (int i = 0; i < nm; i++) l[i] = cel_str(msgs[i], strlen(msgs[i]));
    cel_val *v = ks_arena_alloc_uninit(ev->scratch, sizeof(*v));
    *v = cel_make_list(ev, l, (uint32_t)nm);
    o.opt = v;
    return o;
}
