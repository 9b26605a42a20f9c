/* Kubernetes' URL library (k8s.io/apiserver/pkg/cel/library urls.go, type
 * kubernetes.URL) as DRA's environment declares it. url() accepts what
 * Go's url.ParseRequestURI accepts and keeps what url.Parse makes of it;
 * the accessors answer as Go's URL methods. Parsing follows net/url of
 * the Go release upstream is built with (with the go1.24 GODEBUG
 * defaults of test/reference: a host's port starts at its last colon),
 * error texts included, since they reach the user in CEL runtime errors. */
#include "cel/cel_internal.h"

#include <stdlib.h>
#include <string.h>

const cel_type CEL_T_URL = {CT_URL, 0, NULL, NULL};

/* net/url's encoding modes */
enum {
    ENC_PATH = 1,
    ENC_PATH_SEGMENT,
    ENC_HOST,
    ENC_ZONE,
    ENC_USER_PASSWORD,
    ENC_QUERY_COMPONENT,
    ENC_FRAGMENT,
};

/* Whether byte c must be %-escaped in a URL part of the given mode
 * (RFC 3986 as net/url reads it). */
static bool should_escape(unsigned char c, int mode) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return false;
    if ((mode == ENC_HOST || mode == ENC_ZONE) && c && strchr("!$&'()*+,;=:[]<>\"", c)) return false;
    if (c == '-' || c == '_' || c == '.' || c == '~') return false;
    if (c && strchr("$&+,/:;=?@", c)) {
        switch (mode) {
        case ENC_PATH: return c == '?';
        case ENC_PATH_SEGMENT: return c == '/' || c == ';' || c == ',' || c == '?';
        case ENC_USER_PASSWORD: return c == '@' || c == '/' || c == '?' || c == ':';
        case ENC_QUERY_COMPONENT: return true;
        case ENC_FRAGMENT: return false;
        default: break;
        }
    }
    if (mode == ENC_FRAGMENT && (c == '!' || c == '(' || c == ')' || c == '*')) return false;
    return true;
}

static bool ishex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static unsigned char unhex(char c) {
    return (unsigned char)(c <= '9' ? c - '0' : c <= 'F' ? c - 'A' + 10 : c - 'a' + 10);
}

static bool escape_error(ks_strbuf *err, const char *s, size_t n) {
    ks_sb_puts(err, "invalid URL escape ");
    ks_sb_quote(err, s, n);
    return false;
}

/* net/url's unescape: s into out, or false with the error text in err. */
static bool unescape(const char *s, size_t n, int mode, ks_strbuf *out, ks_strbuf *err) {
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n || !ishex(s[i + 1]) || !ishex(s[i + 2])) return escape_error(err, s + i, n - i > 3 ? 3 : n - i);
            /* in a host, %-encoding is for non-ASCII bytes (and %25 in a zone) */
            if (mode == ENC_HOST && unhex(s[i + 1]) < 8 && memcmp(s + i, "%25", 3) != 0)
                return escape_error(err, s + i, 3);
            if (mode == ENC_ZONE) {
                unsigned char v = (unsigned char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
                if (memcmp(s + i, "%25", 3) != 0 && v != ' ' && should_escape(v, ENC_HOST))
                    return escape_error(err, s + i, 3);
            }
            i += 3;
        } else {
            if ((mode == ENC_HOST || mode == ENC_ZONE) && c < 0x80 && should_escape(c, mode)) {
                ks_sb_puts(err, "invalid character ");
                ks_sb_quote(err, s + i, 1);
                ks_sb_puts(err, " in host name");
                return false;
            }
            i++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            ks_sb_putc(out, (char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2])));
            i += 2;
        } else if (s[i] == '+' && mode == ENC_QUERY_COMPONENT) {
            ks_sb_putc(out, ' ');
        } else {
            ks_sb_putc(out, s[i]);
        }
    }
    return true;
}

static void escape(ks_strbuf *b, const char *s, size_t n, int mode) {
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' && mode == ENC_QUERY_COMPONENT) {
            ks_sb_putc(b, '+');
        } else if (should_escape(c, mode)) {
            ks_sb_putc(b, '%');
            ks_sb_putc(b, hex[c >> 4]);
            ks_sb_putc(b, hex[c & 15]);
        } else {
            ks_sb_putc(b, (char)c);
        }
    }
}

/* ---- the parsed URL ----------------------------------------------------------------- */

typedef struct ustr {
    const char *s;
    size_t n;
} ustr;

struct cel_url {
    ustr scheme, opaque, user, pass, host, path, raw_path, raw_query, fragment, raw_fragment;
    bool has_user, has_pass, force_query, omit_host;
};

static ustr take(ks_arena *a, const char *s, size_t n) {
    return (ustr){ks_arena_strndup(a, s ? s : "", n), n};
}

static ustr take_sb(ks_arena *a, ks_strbuf *b) {
    ustr u = take(a, ks_sb_str(b), b->len);
    ks_sb_free(b);
    return u;
}

static bool ueq(ustr a, const char *s, size_t n) { return a.n == n && memcmp(a.s, s, n) == 0; }

static const char *mem_rchr(const char *s, size_t n, char c) {
    while (n--)
        if (s[n] == c) return s + n;
    return NULL;
}

/* ":" followed by digits, or nothing */
static bool valid_optional_port(const char *s, size_t n) {
    if (n == 0) return true;
    if (s[0] != ':') return false;
    for (size_t i = 1; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static bool port_error(ks_strbuf *err, const char *s, size_t n) {
    ks_sb_puts(err, "invalid port ");
    ks_sb_quote(err, s, n);
    ks_sb_puts(err, " after host");
    return false;
}

/* parseHost: host[:port] of an authority, unescaped */
static bool parse_host(const char *h, size_t n, ks_strbuf *out, ks_strbuf *err) {
    const char *ob = mem_rchr(h, n, '[');
    if (ob && ob > h) {
        ks_sb_puts(err, "invalid IP-literal");
        return false;
    }
    if (ob) {
        const char *cb = mem_rchr(h, n, ']');
        if (!cb) {
            ks_sb_puts(err, "missing ']' in host");
            return false;
        }
        const char *cp = cb + 1;
        size_t cpn = n - (size_t)(cp - h);
        if (!valid_optional_port(cp, cpn)) return port_error(err, cp, cpn);
        ks_strbuf port;
        ks_sb_init(&port);
        bool ok = unescape(cp, cpn, ENC_HOST, &port, err);
        const char *hn = h + 1;
        size_t hnn = (size_t)(cb - hn);
        ks_strbuf name;
        ks_sb_init(&name);
        const char *zone = NULL;
        for (size_t i = 0; ok && i + 3 <= hnn; i++)
            if (memcmp(hn + i, "%25", 3) == 0) {
                zone = hn + i;
                break;
            }
        if (ok && zone) {
            ok = unescape(hn, (size_t)(zone - hn), ENC_HOST, &name, err) &&
                 unescape(zone, hnn - (size_t)(zone - hn), ENC_ZONE, &name, err);
        } else if (ok) {
            ok = unescape(hn, hnn, ENC_HOST, &name, err);
        }
        if (ok) {
            /* only an IPv6 address goes in brackets */
            cel_net a;
            bool z;
            ks_strbuf e;
            ks_sb_init(&e);
            if (!cel_netip_parse_addr(ks_sb_str(&name), name.len, &a, &z, &e)) {
                ks_sb_printf(err, "invalid host: %s", ks_sb_str(&e));
                ok = false;
            } else if (a.is4) {
                ks_sb_puts(err, "invalid IP-literal");
                ok = false;
            }
            ks_sb_free(&e);
        }
        if (ok) {
            ks_sb_putc(out, '[');
            ks_sb_putn(out, ks_sb_str(&name), name.len);
            ks_sb_putc(out, ']');
            ks_sb_putn(out, ks_sb_str(&port), port.len);
        }
        ks_sb_free(&name);
        ks_sb_free(&port);
        return ok;
    }
    const char *colon = mem_rchr(h, n, ':');
    if (colon) {
        size_t cn = n - (size_t)(colon - h);
        if (!valid_optional_port(colon, cn)) return port_error(err, colon, cn);
    }
    return unescape(h, n, ENC_HOST, out, err);
}

static bool valid_userinfo(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) continue;
        if (c && strchr("-._:~!$&'()*+,;=%@", c)) continue;
        return false;
    }
    return true;
}

static bool parse_authority(ks_arena *a, cel_url *u, const char *s, size_t n, ks_strbuf *err) {
    const char *at = mem_rchr(s, n, '@');
    const char *h = at ? at + 1 : s;
    ks_strbuf host;
    ks_sb_init(&host);
    if (!parse_host(h, n - (size_t)(h - s), &host, err)) {
        ks_sb_free(&host);
        return false;
    }
    u->host = take_sb(a, &host);
    if (!at) return true;
    size_t un = (size_t)(at - s);
    if (!valid_userinfo(s, un)) {
        ks_sb_puts(err, "net/url: invalid userinfo");
        return false;
    }
    const char *c = memchr(s, ':', un);
    size_t namen = c ? (size_t)(c - s) : un;
    ks_strbuf b;
    ks_sb_init(&b);
    if (!unescape(s, namen, ENC_USER_PASSWORD, &b, err)) {
        ks_sb_free(&b);
        return false;
    }
    u->user = take_sb(a, &b);
    u->has_user = true;
    if (c) {
        ks_sb_init(&b);
        if (!unescape(c + 1, un - namen - 1, ENC_USER_PASSWORD, &b, err)) {
            ks_sb_free(&b);
            return false;
        }
        u->pass = take_sb(a, &b);
        u->has_pass = true;
    }
    return true;
}

/* setPath / setFragment: the decoded form, and the raw form when it is
 * not the default escaping of the decoded one */
static bool set_part(ks_arena *a, const char *p, size_t n, int mode, ustr *dec, ustr *raw, ks_strbuf *err) {
    ks_strbuf d, e;
    ks_sb_init(&d);
    if (!unescape(p, n, mode, &d, err)) {
        ks_sb_free(&d);
        return false;
    }
    ks_sb_init(&e);
    escape(&e, ks_sb_str(&d), d.len, mode);
    *raw = e.len == n && memcmp(ks_sb_str(&e), p, n) == 0 ? take(a, "", 0) : take(a, p, n);
    ks_sb_free(&e);
    *dec = take_sb(a, &d);
    return true;
}

static bool err_text(ks_strbuf *err, const char *msg) {
    ks_sb_puts(err, msg);
    return false;
}

/* net/url's parse (no fragment handling); err gets the bare error text */
static bool parse(ks_arena *a, const char *raw, size_t n, bool via_request, cel_url *u, ks_strbuf *err) {
    memset(u, 0, sizeof(*u));
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)raw[i] < ' ' || raw[i] == 0x7f) return err_text(err, "net/url: invalid control character in URL");
    if (n == 0 && via_request) return err_text(err, "empty url");
    if (n == 1 && raw[0] == '*') {
        u->path = take(a, "*", 1);
        return true;
    }
    /* the scheme: [a-zA-Z][a-zA-Z0-9+.-]* before a colon */
    const char *rest = raw;
    size_t rn = n;
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
            if (i == 0) break;
            continue;
        }
        if (c == ':') {
            if (i == 0) return err_text(err, "missing protocol scheme");
            char *sch = ks_arena_strndup(a, raw, i);
            for (size_t k = 0; k < i; k++)
                if (sch[k] >= 'A' && sch[k] <= 'Z') sch[k] = (char)(sch[k] - 'A' + 'a');
            u->scheme = (ustr){sch, i};
            rest = raw + i + 1;
            rn = n - i - 1;
        }
        break;
    }
    size_t nq = 0;
    for (size_t i = 0; i < rn; i++) nq += rest[i] == '?';
    if (rn && rest[rn - 1] == '?' && nq == 1) {
        u->force_query = true;
        rn--;
    } else {
        const char *q = memchr(rest, '?', rn);
        if (q) {
            u->raw_query = take(a, q + 1, rn - (size_t)(q - rest) - 1);
            rn = (size_t)(q - rest);
        }
    }
    if (!u->raw_query.s) u->raw_query = take(a, "", 0);
    if (!(rn && rest[0] == '/')) {
        if (u->scheme.n) {
            u->opaque = take(a, rest, rn);
            return true;
        }
        if (via_request) return err_text(err, "invalid URI for request");
        const char *sl = memchr(rest, '/', rn);
        size_t segn = sl ? (size_t)(sl - rest) : rn;
        if (memchr(rest, ':', segn)) return err_text(err, "first path segment in URL cannot contain colon");
    }
    bool two = rn >= 2 && rest[0] == '/' && rest[1] == '/';
    bool three = two && rn >= 3 && rest[2] == '/';
    if ((u->scheme.n || (!via_request && !three)) && two) {
        const char *auth = rest + 2;
        size_t an = rn - 2;
        const char *sl = memchr(auth, '/', an);
        size_t authn = sl ? (size_t)(sl - auth) : an;
        if (!parse_authority(a, u, auth, authn, err)) return false;
        rest = auth + authn;
        rn = an - authn;
    } else if (u->scheme.n && rn && rest[0] == '/') {
        u->omit_host = true;
    }
    return set_part(a, rest, rn, ENC_PATH, &u->path, &u->raw_path, err);
}

static void fill_empty(ks_arena *a, cel_url *u) {
    ustr *f[] = {&u->scheme, &u->opaque, &u->user, &u->pass, &u->host, &u->path,
                 &u->raw_path, &u->raw_query, &u->fragment, &u->raw_fragment};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!f[i]->s) *f[i] = take(a, "", 0);
}

/* url.Error's text: parse "<url>": <err> */
static void url_error(ks_strbuf *out, const char *s, size_t n, ks_strbuf *err) {
    ks_sb_puts(out, "parse ");
    ks_sb_quote(out, s, n);
    ks_sb_printf(out, ": %s", ks_sb_str(err));
}

/* url.ParseRequestURI (as a check), then url.Parse into *u */
static bool url_parse(ks_arena *a, const char *s, size_t n, cel_url *u, ks_strbuf *out) {
    ks_strbuf err;
    ks_sb_init(&err);
    bool ok = parse(a, s, n, true, u, &err);
    if (!ok) {
        url_error(out, s, n, &err);
        ks_sb_free(&err);
        return false;
    }
    const char *hash = memchr(s, '#', n);
    size_t un = hash ? (size_t)(hash - s) : n;
    ok = parse(a, s, un, false, u, &err);
    if (!ok) {
        url_error(out, s, un, &err);
    } else if (hash && un + 1 < n) {
        ok = set_part(a, hash + 1, n - un - 1, ENC_FRAGMENT, &u->fragment, &u->raw_fragment, &err);
        if (!ok) url_error(out, s, n, &err);
    }
    ks_sb_free(&err);
    fill_empty(a, u);
    return ok;
}

bool cel_url_request_error(ks_arena *a, const char *s, size_t n, ks_strbuf *out) {
    cel_url u;
    ks_strbuf err;
    ks_sb_init(&err);
    bool bad = !parse(a, s, n, true, &u, &err);
    if (bad) url_error(out, s, n, &err);
    ks_sb_free(&err);
    return bad;
}

/* validEncoded: nothing that escaping would change but %-escapes and sub-delims */
static bool valid_encoded(ustr s, int mode) {
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.s[i];
        if (strchr("!$&'()*+,;=:@[]%", c) && c) continue;
        if (should_escape(c, mode)) return false;
    }
    return true;
}

/* EscapedPath / EscapedFragment */
static void escaped(ks_strbuf *b, ustr dec, ustr raw, int mode) {
    if (raw.n && valid_encoded(raw, mode)) {
        ks_strbuf d, e;
        ks_sb_init(&d);
        ks_sb_init(&e);
        bool ok = unescape(raw.s, raw.n, mode, &d, &e) && ueq(dec, ks_sb_str(&d), d.len);
        ks_sb_free(&d);
        ks_sb_free(&e);
        if (ok) {
            ks_sb_putn(b, raw.s, raw.n);
            return;
        }
    }
    if (mode == ENC_PATH && ueq(dec, "*", 1)) {
        ks_sb_putc(b, '*');
        return;
    }
    escape(b, dec.s, dec.n, mode);
}

/* URL.String */
static void url_string(ks_strbuf *b, const cel_url *u) {
    size_t start = b->len;
    if (u->scheme.n) {
        ks_sb_putn(b, u->scheme.s, u->scheme.n);
        ks_sb_putc(b, ':');
    }
    if (u->opaque.n) {
        ks_sb_putn(b, u->opaque.s, u->opaque.n);
    } else {
        if (u->scheme.n || u->host.n || u->has_user) {
            if (!(u->omit_host && !u->host.n && !u->has_user)) {
                if (u->host.n || u->path.n || u->has_user) ks_sb_puts(b, "//");
                if (u->has_user) {
                    escape(b, u->user.s, u->user.n, ENC_USER_PASSWORD);
                    if (u->has_pass) {
                        ks_sb_putc(b, ':');
                        escape(b, u->pass.s, u->pass.n, ENC_USER_PASSWORD);
                    }
                    ks_sb_putc(b, '@');
                }
                if (u->host.n) escape(b, u->host.s, u->host.n, ENC_HOST);
            }
        }
        ks_strbuf p;
        ks_sb_init(&p);
        escaped(&p, u->path, u->raw_path, ENC_PATH);
        const char *ps = ks_sb_str(&p);
        if (p.len && ps[0] != '/' && u->host.n) ks_sb_putc(b, '/');
        if (b->len == start) {
            const char *sl = memchr(ps, '/', p.len);
            size_t segn = sl ? (size_t)(sl - ps) : p.len;
            if (memchr(ps, ':', segn)) ks_sb_puts(b, "./");
        }
        ks_sb_putn(b, ps, p.len);
        ks_sb_free(&p);
    }
    if (u->force_query || u->raw_query.n) {
        ks_sb_putc(b, '?');
        ks_sb_putn(b, u->raw_query.s, u->raw_query.n);
    }
    if (u->fragment.n) {
        ks_sb_putc(b, '#');
        escaped(b, u->fragment, u->raw_fragment, ENC_FRAGMENT);
    }
}

void cel_url_print(ks_strbuf *b, const cel_url *u) { url_string(b, u); }

bool cel_url_equal(const cel_url *a, const cel_url *b) {
    ks_strbuf x, y;
    ks_sb_init(&x);
    ks_sb_init(&y);
    url_string(&x, a);
    url_string(&y, b);
    bool eq = x.len == y.len && memcmp(ks_sb_str(&x), ks_sb_str(&y), x.len) == 0;
    ks_sb_free(&x);
    ks_sb_free(&y);
    return eq;
}

/* ---- the library's functions -------------------------------------------------------- */

static cel_val str_val(cel_eval *ev, const char *s, size_t n) {
    char *d = ks_arena_alloc_uninit(ev->scratch, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return cel_str(d, n);
}

static cel_val sb_val(cel_eval *ev, ks_strbuf *b) {
    cel_val v = str_val(ev, ks_sb_str(b), b->len);
    ks_sb_free(b);
    return v;
}

cel_val cel_f_url(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_url *u = ks_arena_alloc_uninit(ev->scratch, sizeof(*u));
    ks_strbuf e;
    ks_sb_init(&e);
    if (!url_parse(ev->scratch, args[0].s, args[0].len, u, &e)) {
        cel_val r = cel_errorf(ev, "URL parse error during conversion from string: %s", ks_sb_str(&e));
        ks_sb_free(&e);
        return r;
    }
    ks_sb_free(&e);
    return (cel_val){.kind = CV_URL, .url = u};
}

cel_val cel_f_is_url(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_url u;
    ks_strbuf e;
    ks_sb_init(&e);
    bool ok = parse(ev->scratch, args[0].s, args[0].len, true, &u, &e);
    ks_sb_free(&e);
    return cel_bool(ok);
}

/* Go's URL.Hostname / URL.Port */
static void split_host_port(ustr h, ustr *host, ustr *port) {
    *host = h;
    *port = (ustr){"", 0};
    const char *c = mem_rchr(h.s, h.n, ':');
    if (c && valid_optional_port(c, h.n - (size_t)(c - h.s))) {
        host->n = (size_t)(c - h.s);
        *port = (ustr){c + 1, h.n - host->n - 1};
    }
    if (host->n >= 2 && host->s[0] == '[' && host->s[host->n - 1] == ']') {
        host->s++;
        host->n -= 2;
    }
}

static cel_val url_part(cel_eval *ev, const cel_val *args, int which) {
    if (args[0].kind != CV_URL) return cel_no_overload();
    const cel_url *u = args[0].url;
    ustr h, p;
    switch (which) {
    case 0: return str_val(ev, u->scheme.s, u->scheme.n);
    case 1: return str_val(ev, u->host.s, u->host.n);
    case 2: split_host_port(u->host, &h, &p); return str_val(ev, h.s, h.n);
    case 3: split_host_port(u->host, &h, &p); return str_val(ev, p.s, p.n);
    default: {
        ks_strbuf b;
        ks_sb_init(&b);
        escaped(&b, u->path, u->raw_path, ENC_PATH);
        return sb_val(ev, &b);
    }
    }
}

cel_val cel_f_get_scheme(cel_eval *ev, const cel_val *a, uint32_t n) { return url_part(ev, a, 0); }
cel_val cel_f_get_host(cel_eval *ev, const cel_val *a, uint32_t n) { return url_part(ev, a, 1); }
cel_val cel_f_get_hostname(cel_eval *ev, const cel_val *a, uint32_t n) { return url_part(ev, a, 2); }
cel_val cel_f_get_port(cel_eval *ev, const cel_val *a, uint32_t n) { return url_part(ev, a, 3); }
cel_val cel_f_get_escaped_path(cel_eval *ev, const cel_val *a, uint32_t n) { return url_part(ev, a, 4); }

/* URL.Query: ParseQuery with its errors dropped (a malformed pair is
 * skipped; over 10000 parameters gives no parameters at all), as a map
 * from each key to its values in order of appearance. */
cel_val cel_f_get_query(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_URL) return cel_no_overload();
    ustr q = args[0].url->raw_query;
    size_t amps = 1;
    for (size_t i = 0; i < q.n; i++) amps += q.s[i] == '&';
    uint32_t nk = 0;
    cel_val *keys = ks_arena_alloc_uninit(ev->scratch, (amps + 1) * sizeof(cel_val));
    cel_val *vals = ks_arena_alloc_uninit(ev->scratch, (amps + 1) * sizeof(cel_val));
    /* values of key i, collected as (key index, value) pairs first */
    uint32_t *owner = ks_arena_alloc_uninit(ev->scratch, (amps + 1) * sizeof(uint32_t));
    cel_val *pv = ks_arena_alloc_uninit(ev->scratch, (amps + 1) * sizeof(cel_val));
    uint32_t np = 0;
    const char *s = q.s, *end = q.s + q.n;
    while (amps <= 10000 && s < end) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        const char *ke = amp ? amp : end;
        const char *next = amp ? amp + 1 : end;
        size_t kn = (size_t)(ke - s);
        if (kn == 0 || memchr(s, ';', kn)) {
            s = next;
            continue;
        }
        const char *eq = memchr(s, '=', kn);
        ks_strbuf k, v, e;
        ks_sb_init(&k);
        ks_sb_init(&v);
        ks_sb_init(&e);
        bool ok = unescape(s, eq ? (size_t)(eq - s) : kn, ENC_QUERY_COMPONENT, &k, &e) &&
                  (!eq || unescape(eq + 1, (size_t)(ke - eq - 1), ENC_QUERY_COMPONENT, &v, &e));
        if (ok) {
            uint32_t i = 0;
            while (i < nk && !(keys[i].len == k.len && memcmp(keys[i].s, ks_sb_str(&k), k.len) == 0)) i++;
            if (i == nk) keys[nk++] = str_val(ev, ks_sb_str(&k), k.len);
            owner[np] = i;
            pv[np++] = str_val(ev, ks_sb_str(&v), v.len);
        }
        ks_sb_free(&k);
        ks_sb_free(&v);
        ks_sb_free(&e);
        s = next;
    }
    cel_val *tmp = ks_arena_alloc_uninit(ev->scratch, (np + 1) * sizeof(cel_val));
    for (uint32_t i = 0; i < nk; i++) {
        uint32_t m = 0;
        for (uint32_t j = 0; j < np; j++)
            if (owner[j] == i) tmp[m++] = pv[j];
        vals[i] = cel_make_list(ev, tmp, m);
    }
    cel_map *map = ks_arena_alloc_uninit(ev->scratch, sizeof(*map));
    map->n = nk;
    map->k = keys;
    map->v = vals;
    return (cel_val){.kind = CV_MAP, .map = map};
}
