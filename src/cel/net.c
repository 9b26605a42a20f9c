/* Kubernetes' IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library
 * ip.go, cidr.go; types net.IP and net.CIDR), as DRA's environment has
 * them. Addresses parse and print as Go's net/netip does (ParseAddr,
 * ParsePrefix, Addr.String, Prefix.String), with its error texts, since
 * those reach the user in CEL runtime errors. */
#include "cel/cel_internal.h"

#include <stdio.h>
#include <string.h>

const cel_type CEL_T_IP = {CT_IP, 0, NULL, NULL};
const cel_type CEL_T_CIDR = {CT_CIDR, 0, NULL, NULL};


/* ---- net/netip ------------------------------------------------------------------- */

/* parseAddrError's text into err */
static bool addr_error(ks_strbuf *err, const char *in, size_t n, const char *msg, const char *at, size_t atn) {
    ks_sb_puts(err, "ParseAddr(");
    ks_sb_quote(err, in, n);
    ks_sb_printf(err, "): %s", msg);
    if (at && atn) {
        ks_sb_puts(err, " (at ");
        ks_sb_quote(err, at, atn);
        ks_sb_putc(err, ')');
    }
    return false;
}

/* parseIPv4Fields: in[off:end] into 4 bytes */
static bool ipv4_fields(const char *in, size_t n, size_t off, size_t end, uint8_t *fields, ks_strbuf *err) {
    int val = 0, pos = 0, dig = 0;
    const char *s = in + off;
    size_t len = end - off;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            if (dig == 1 && val == 0) return addr_error(err, in, n, "IPv4 field has octet with leading zero", NULL, 0);
            val = val * 10 + (c - '0');
            dig++;
            if (val > 255) return addr_error(err, in, n, "IPv4 field has value >255", NULL, 0);
        } else if (c == '.') {
            if (i == 0 || i == len - 1 || s[i - 1] == '.')
                return addr_error(err, in, n, "IPv4 field must have at least one digit", s + i, len - i);
            if (pos == 3) return addr_error(err, in, n, "IPv4 address too long", NULL, 0);
            fields[pos++] = (uint8_t)val;
            val = 0;
            dig = 0;
        } else {
            return addr_error(err, in, n, "unexpected character", s + i, len - i);
        }
    }
    if (pos < 3) return addr_error(err, in, n, "IPv4 address too short", NULL, 0);
    fields[3] = (uint8_t)val;
    return true;
}

static void addr4(cel_net *a, const uint8_t *f) {
    memset(a, 0, sizeof(*a));
    a->is4 = true;
    a->bits = -1;
    a->b[10] = a->b[11] = 0xff;
    memcpy(a->b + 12, f, 4);
}

/* parseIPv6 */
static bool parse6(const char *in, size_t n, cel_net *out, bool *zone, ks_strbuf *err) {
    const char *s = in;
    size_t len = n, zlen = 0;
    const char *pct = memchr(in, '%', n);
    if (pct) {
        len = (size_t)(pct - in);
        zlen = n - len - 1;
        if (!zlen) return addr_error(err, in, n, "zone must be a non-empty string", NULL, 0);
        *zone = true;
    }
    uint8_t ip[16] = {0};
    int ellipsis = -1;
    if (len >= 2 && s[0] == ':' && s[1] == ':') {
        ellipsis = 0;
        s += 2;
        len -= 2;
        if (!len) {
            memset(out, 0, sizeof(*out));
            out->bits = -1;
            return true;
        }
    }
    int i = 0;
    while (i < 16) {
        size_t off = 0;
        uint32_t acc = 0;
        for (; off < len; off++) {
            char c = s[off];
            if (c >= '0' && c <= '9') acc = (acc << 4) + (uint32_t)(c - '0');
            else if (c >= 'a' && c <= 'f') acc = (acc << 4) + (uint32_t)(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') acc = (acc << 4) + (uint32_t)(c - 'A' + 10);
            else break;
            if (off > 3) return addr_error(err, in, n, "each group must have 4 or less digits", s, len);
            if (acc > 0xffff) return addr_error(err, in, n, "IPv6 field has value >=2^16", s, len);
        }
        if (off == 0) return addr_error(err, in, n, "each colon-separated field must have at least one digit", s, len);
        if (off < len && s[off] == '.') {
            if (ellipsis < 0 && i != 12)
                return addr_error(err, in, n, "embedded IPv4 address must replace the final 2 fields of the address",
                                  s, len);
            if (i + 4 > 16)
                return addr_error(err, in, n, "too many hex fields to fit an embedded IPv4 at the end of the address",
                                  s, len);
            size_t end = n - (zlen ? zlen + 1 : 0);
            if (!ipv4_fields(in, n, end - len, end, ip + i, err)) return false;
            len = 0;
            i += 4;
            break;
        }
        ip[i] = (uint8_t)(acc >> 8);
        ip[i + 1] = (uint8_t)acc;
        i += 2;
        s += off;
        len -= off;
        if (!len) break;
        if (s[0] != ':') return addr_error(err, in, n, "unexpected character, want colon", s, len);
        if (len == 1) return addr_error(err, in, n, "colon must be followed by more characters", s, len);
        s++;
        len--;
        if (s[0] == ':') {
            if (ellipsis >= 0) return addr_error(err, in, n, "multiple :: in address", s, len);
            ellipsis = i;
            s++;
            len--;
            if (!len) break;
        }
    }
    if (len) return addr_error(err, in, n, "trailing garbage after address", s, len);
    if (i < 16) {
        if (ellipsis < 0) return addr_error(err, in, n, "address string too short", NULL, 0);
        int k = 16 - i;
        for (int j = i - 1; j >= ellipsis; j--) ip[j + k] = ip[j];
        memset(ip + ellipsis, 0, (size_t)k);
    } else if (ellipsis >= 0) {
        return addr_error(err, in, n, "the :: must expand to at least one field of zeros", NULL, 0);
    }
    memset(out, 0, sizeof(*out));
    memcpy(out->b, ip, 16);
    out->bits = -1;
    return true;
}

/* netip.ParseAddr; *zone when the address had one */
static bool parse_addr(const char *s, size_t n, cel_net *out, bool *zone, ks_strbuf *err) {
    *zone = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            uint8_t f[4];
            if (!ipv4_fields(s, n, 0, n, f, err)) return false;
            addr4(out, f);
            return true;
        }
        if (s[i] == ':') return parse6(s, n, out, zone, err);
        if (s[i] == '%') return addr_error(err, s, n, "missing IPv6 address", NULL, 0);
    }
    return addr_error(err, s, n, "unable to parse IP", NULL, 0);
}

static bool is4in6(const cel_net *a) {
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !a->is4 && memcmp(a->b, pre, 12) == 0;
}

static uint16_t u16(const cel_net *a, int i) { return (uint16_t)(a->b[2 * i] << 8 | a->b[2 * i + 1]); }

/* Addr.String */
static void format_addr(ks_strbuf *b, const cel_net *a) {
    if (a->is4) {
        ks_sb_printf(b, "%u.%u.%u.%u", a->b[12], a->b[13], a->b[14], a->b[15]);
        return;
    }
    if (is4in6(a)) {
        ks_sb_printf(b, "::ffff:%u.%u.%u.%u", a->b[12], a->b[13], a->b[14], a->b[15]);
        return;
    }
    int zs = 255, ze = 255;
    for (int i = 0; i < 8; i++) {
        int j = i;
        while (j < 8 && u16(a, j) == 0) j++;
        if (j - i >= 2 && j - i > ze - zs) zs = i, ze = j;
    }
    for (int i = 0; i < 8; i++) {
        if (i == zs) {
            ks_sb_puts(b, "::");
            i = ze;
            if (i >= 8) break;
        } else if (i > 0) {
            ks_sb_putc(b, ':');
        }
        ks_sb_printf(b, "%x", u16(a, i));
    }
}

/* upstream's parseIPAddr: ParseAddr, no zone, no IPv4-mapped IPv6 */
static bool parse_ip(const char *s, size_t n, cel_net *out, ks_strbuf *err) {
    bool zone;
    ks_strbuf e;
    ks_sb_init(&e);
    if (!parse_addr(s, n, out, &zone, &e)) {
        ks_sb_puts(err, "IP Address ");
        ks_sb_quote(err, s, n);
        ks_sb_printf(err, " parse error during conversion from string: %s", ks_sb_str(&e));
        ks_sb_free(&e);
        return false;
    }
    ks_sb_free(&e);
    if (zone) {
        ks_sb_puts(err, "IP address ");
        ks_sb_quote(err, s, n);
        ks_sb_puts(err, " with zone value is not allowed");
        return false;
    }
    if (is4in6(out)) {
        ks_sb_puts(err, "IPv4-mapped IPv6 address ");
        ks_sb_quote(err, s, n);
        ks_sb_puts(err, " is not allowed");
        return false;
    }
    return true;
}

/* netip.ParsePrefix's error text */
static bool prefix_error(ks_strbuf *err, const char *in, size_t n, const char *msg) {
    ks_sb_puts(err, "netip.ParsePrefix(");
    ks_sb_quote(err, in, n);
    ks_sb_printf(err, "): %s", msg);
    return false;
}

/* netip.ParsePrefix */
static bool parse_prefix(const char *s, size_t n, cel_net *out, ks_strbuf *err) {
    size_t i = n;
    while (i > 0 && s[i - 1] != '/') i--;
    if (i == 0) return prefix_error(err, s, n, "no '/'");
    i--; /* the slash */
    bool zone;
    ks_strbuf e;
    ks_sb_init(&e);
    if (!parse_addr(s, i, out, &zone, &e)) {
        prefix_error(err, s, n, ks_sb_str(&e));
        ks_sb_free(&e);
        return false;
    }
    ks_sb_free(&e);
    if (!out->is4 && zone) return prefix_error(err, s, n, "IPv6 zones cannot be present in a prefix");
    const char *bs = s + i + 1;
    size_t bl = n - i - 1;
    bool ok = bl > 0 && !(bl > 1 && (bs[0] < '1' || bs[0] > '9'));
    long bits = 0;
    /* strconv.Atoi: an optional sign, digits, within int */
    size_t k = 0;
    bool neg = false;
    if (ok && (bs[0] == '+' || bs[0] == '-')) neg = bs[k++] == '-';
    if (ok && k == bl) ok = false;
    for (; ok && k < bl; k++) {
        if (bs[k] < '0' || bs[k] > '9') ok = false;
        else if (bits < 1000000) bits = bits * 10 + (bs[k] - '0');
    }
    if (!ok) {
        ks_strbuf q;
        ks_sb_init(&q);
        ks_sb_puts(&q, "bad bits after slash: ");
        ks_sb_quote(&q, bs, bl);
        prefix_error(err, s, n, ks_sb_str(&q));
        ks_sb_free(&q);
        return false;
    }
    if (neg) bits = -bits;
    if (bits < 0 || bits > (out->is4 ? 32 : 128)) return prefix_error(err, s, n, "prefix length out of range");
    out->bits = (int)bits;
    return true;
}

/* upstream's parseCIDR */
static bool parse_cidr(const char *s, size_t n, cel_net *out, ks_strbuf *err) {
    ks_strbuf e;
    ks_sb_init(&e);
    if (!parse_prefix(s, n, out, &e)) {
        ks_sb_printf(err, "network address parse error during conversion from string: %s", ks_sb_str(&e));
        ks_sb_free(&e);
        return false;
    }
    ks_sb_free(&e);
    if (is4in6(out)) {
        ks_sb_puts(err, "IPv4-mapped IPv6 address ");
        ks_sb_quote(err, s, n);
        ks_sb_puts(err, " is not allowed");
        return false;
    }
    return true;
}

void cel_net_print(ks_strbuf *b, const cel_net *a) {
    format_addr(b, a);
    if (a->bits >= 0) ks_sb_printf(b, "/%d", a->bits);
}

bool cel_net_equal(const cel_net *a, const cel_net *b) {
    return a->is4 == b->is4 && a->bits == b->bits && memcmp(a->b, b->b, 16) == 0;
}

uint64_t cel_net_size(const cel_net *a) {
    if (a->bits >= 0) return (uint64_t)(a->bits + 7) / 8;
    return a->is4 ? 4 : 16;
}

/* ---- the functions ------------------------------------------------------------------ */

static cel_val mknet(cel_eval *ev, const cel_net *a, int kind) {
    cel_net *c = ks_arena_alloc_uninit(ev->scratch, sizeof(*c));
    *c = *a;
    return (cel_val){.kind = (uint8_t)kind, .net = c};
}

static cel_val net_error(cel_eval *ev, ks_strbuf *e) {
    cel_val r = cel_errorf(ev, "%s", ks_sb_str(e));
    ks_sb_free(e);
    return r;
}

cel_val cel_f_ip(cel_eval *ev, const cel_val *args, uint32_t n) {
    /* cidr.ip(): the prefix's address */
    if (args[0].kind == CV_CIDR) {
        cel_net a = *args[0].net;
        a.bits = -1;
        return mknet(ev, &a, CV_IP);
    }
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_net a;
    ks_strbuf e;
    ks_sb_init(&e);
    if (!parse_ip(args[0].s, args[0].len, &a, &e)) return net_error(ev, &e);
    ks_sb_free(&e);
    return mknet(ev, &a, CV_IP);
}

cel_val cel_f_is_ip(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_net a;
    ks_strbuf e;
    ks_sb_init(&e);
    bool ok = parse_ip(args[0].s, args[0].len, &a, &e);
    ks_sb_free(&e);
    return cel_bool(ok);
}

cel_val cel_f_ip_is_canonical(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_net a;
    ks_strbuf e;
    ks_sb_init(&e);
    if (!parse_ip(args[0].s, args[0].len, &a, &e)) return net_error(ev, &e);
    format_addr(&e, &a);
    bool same = e.len == args[0].len && memcmp(ks_sb_str(&e), args[0].s, e.len) == 0;
    ks_sb_free(&e);
    return cel_bool(same);
}

cel_val cel_f_net_string(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_IP && args[0].kind != CV_CIDR) return cel_no_overload();
    ks_strbuf b;
    ks_sb_init(&b);
    cel_net_print(&b, args[0].net);
    char *d = ks_arena_alloc_uninit(ev->scratch, b.len + 1);
    memcpy(d, ks_sb_str(&b), b.len + 1);
    cel_val r = cel_str(d, b.len);
    ks_sb_free(&b);
    return r;
}

cel_val cel_f_family(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_IP) return cel_no_overload();
    return cel_int(args[0].net->is4 ? 4 : 6);
}

/* the address as Go sees it after Unmap (IPv4-mapped addresses are
 * refused at parse time, so only real IPv4 ones are 4-byte) */
static bool v4(const cel_net *a) { return a->is4; }

static cel_val cel_f_ip_pred(cel_eval *ev, const cel_val *args, uint32_t n, int which) {
    if (args[0].kind != CV_IP) return cel_no_overload();
    const cel_net *a = args[0].net;
    const uint8_t *b4 = a->b + 12;
    bool r = false;
    static const uint8_t zero[16];
    switch (which) {
    case 0: /* isUnspecified */
        r = v4(a) ? memcmp(b4, zero, 4) == 0 : memcmp(a->b, zero, 16) == 0;
        break;
    case 1: /* isLoopback */
        r = v4(a) ? b4[0] == 127 : (memcmp(a->b, zero, 15) == 0 && a->b[15] == 1);
        break;
    case 2: /* isLinkLocalMulticast */
        r = v4(a) ? (b4[0] == 224 && b4[1] == 0 && b4[2] == 0) : ((u16(a, 0) & 0xff0f) == 0xff02);
        break;
    case 3: /* isLinkLocalUnicast */
        r = v4(a) ? (b4[0] == 169 && b4[1] == 254) : ((u16(a, 0) & 0xffc0) == 0xfe80);
        break;
    default: { /* isGlobalUnicast */
        if (v4(a) && (memcmp(b4, zero, 4) == 0 || (b4[0] == 255 && b4[1] == 255 && b4[2] == 255 && b4[3] == 255)))
            break;
        bool unspec = !v4(a) && memcmp(a->b, zero, 16) == 0;
        bool loop = v4(a) ? b4[0] == 127 : (memcmp(a->b, zero, 15) == 0 && a->b[15] == 1);
        bool multi = v4(a) ? (b4[0] & 0xf0) == 0xe0 : a->b[0] == 0xff;
        bool llu = v4(a) ? (b4[0] == 169 && b4[1] == 254) : ((u16(a, 0) & 0xffc0) == 0xfe80);
        r = !unspec && !loop && !multi && !llu;
    }
    }
    return cel_bool(r);
}

cel_val cel_f_is_unspecified(cel_eval *ev, const cel_val *a, uint32_t n) { return cel_f_ip_pred(ev, a, n, 0); }
cel_val cel_f_is_loopback(cel_eval *ev, const cel_val *a, uint32_t n) { return cel_f_ip_pred(ev, a, n, 1); }
cel_val cel_f_is_ll_multicast(cel_eval *ev, const cel_val *a, uint32_t n) { return cel_f_ip_pred(ev, a, n, 2); }
cel_val cel_f_is_ll_unicast(cel_eval *ev, const cel_val *a, uint32_t n) { return cel_f_ip_pred(ev, a, n, 3); }
cel_val cel_f_is_global_unicast(cel_eval *ev, const cel_val *a, uint32_t n) { return cel_f_ip_pred(ev, a, n, 4); }

cel_val cel_f_cidr(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_net a;
    ks_strbuf e;
    ks_sb_init(&e);
    if (!parse_cidr(args[0].s, args[0].len, &a, &e)) {
        /* upstream wraps parseCIDR's message once more */
        ks_strbuf w;
        ks_sb_init(&w);
        ks_sb_printf(&w, "network address parse error during conversion from string: %s", ks_sb_str(&e));
        ks_sb_free(&e);
        return net_error(ev, &w);
    }
    ks_sb_free(&e);
    return mknet(ev, &a, CV_CIDR);
}

cel_val cel_f_is_cidr(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_STRING) return cel_no_overload();
    cel_net a;
    ks_strbuf e;
    ks_sb_init(&e);
    bool ok = parse_cidr(args[0].s, args[0].len, &a, &e);
    ks_sb_free(&e);
    return cel_bool(ok);
}

/* Whether the first `bits` bits of a and b agree. */
static bool same_bits(const uint8_t *a, const uint8_t *b, int bits) {
    int full = bits / 8, rest = bits % 8;
    if (memcmp(a, b, (size_t)full) != 0) return false;
    if (!rest) return true;
    uint8_t m = (uint8_t)(0xff << (8 - rest));
    return (a[full] & m) == (b[full] & m);
}

/* the bytes of an address in its own width (4 or 16) */
static const uint8_t *raw(const cel_net *a) { return a->is4 ? a->b + 12 : a->b; }

cel_val cel_f_contains_ip(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_CIDR) return cel_no_overload();
    cel_val other = args[1];
    if (other.kind == CV_STRING) other = cel_f_ip(ev, &args[1], 1);
    /* upstream answers for the CIDR, not the string that did not parse */
    if (other.kind != CV_IP) return cel_no_overload();
    const cel_net *p = args[0].net, *ip = other.net;
    if (p->is4 != ip->is4) return cel_bool(false);
    return cel_bool(same_bits(raw(ip), raw(p), p->bits));
}

cel_val cel_f_contains_cidr(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_CIDR) return cel_no_overload();
    cel_val other = args[1];
    if (other.kind == CV_STRING) other = cel_f_cidr(ev, &args[1], 1);
    /* here upstream passes the string's parse error on */
    if (other.kind == CV_ERROR) return other;
    if (other.kind != CV_CIDR) return cel_no_overload();
    const cel_net *p = args[0].net, *o = other.net;
    /* Prefix.Overlaps and p's bits at most o's */
    if (p->is4 != o->is4) return cel_bool(false);
    int minb = p->bits < o->bits ? p->bits : o->bits;
    bool overlaps = cel_net_equal(p, o) || same_bits(raw(p), raw(o), minb);
    return cel_bool(overlaps && p->bits <= o->bits);
}

cel_val cel_f_prefix_length(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_CIDR) return cel_no_overload();
    return cel_int(args[0].net->bits);
}

cel_val cel_f_masked(cel_eval *ev, const cel_val *args, uint32_t n) {
    if (args[0].kind != CV_CIDR) return cel_no_overload();
    cel_net a = *args[0].net;
    uint8_t *r = a.is4 ? a.b + 12 : a.b;
    int width = a.is4 ? 4 : 16;
    for (int i = 0; i < width; i++) {
        int keep = a.bits - 8 * i;
        if (keep >= 8) continue;
        r[i] = keep <= 0 ? 0 : (uint8_t)(r[i] & (0xff << (8 - keep)));
    }
    return mknet(ev, &a, CV_CIDR);
}


bool cel_netip_parse_addr(const char *s, size_t n, cel_net *out, bool *zone, ks_strbuf *err) {
    return parse_addr(s, n, out, zone, err);
}
