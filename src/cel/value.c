/* CEL values: equality, ordering, sizes, printing, error values. */
#include "cel/cel_internal.h"
#include "cel/time.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cel_val cel_errorf(cel_eval *ev, const char *fmt, ...) {
    cel_val v = {.kind = CV_ERROR, .s = "error"};
    if (!ev) return v;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return v;
    char *s = ks_arena_alloc_uninit(ev->scratch, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    v.s = s;
    return v;
}

cel_val cel_no_overload(void) { return cel_err_static("no such overload"); }

size_t cel_utf8_count(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

uint64_t cel_val_size(cel_val v) {
    switch (v.kind) {
    case CV_STRING: return cel_utf8_count(v.s, v.len);
    case CV_BYTES: return v.len;
    case CV_LIST: return v.list->n;
    case CV_MAP: return v.map->n;
    case CV_DEVMAP: return cel_devmap_size(v);
    case CV_IP:
    case CV_CIDR: return cel_net_size(v.net);
    case CV_OPTIONAL: return v.opt ? cel_val_size(*v.opt) : 1;
    default: return 1;
    }
}

const char *cel_val_type_name(cel_val v) {
    switch (v.kind) {
    case CV_NULL: return "null_type";
    case CV_BOOL: return "bool";
    case CV_INT: return "int";
    case CV_UINT: return "uint";
    case CV_DOUBLE: return "double";
    case CV_STRING: return "string";
    case CV_BYTES: return "bytes";
    case CV_LIST: return "list";
    case CV_MAP: case CV_DEVMAP: return "map";
    case CV_TYPE: return "type";
    case CV_QUANTITY: return "kubernetes.Quantity";
    case CV_SEMVER: return "kubernetes.Semver";
    case CV_OPTIONAL: return "optional_type";
    case CV_DEVICE: return "kubernetes.DRADevice";
    case CV_IP: return "net.IP";
    case CV_CIDR: return "net.CIDR";
    case CV_URL: return "kubernetes.URL";
    case CV_FORMAT: return "kubernetes.NamedFormat";
    case CV_TIMESTAMP: return "google.protobuf.Timestamp";
    case CV_DURATION: return "google.protobuf.Duration";
    default: return "error";
    }
}

static bool is_num(cel_val v) { return v.kind == CV_INT || v.kind == CV_UINT || v.kind == CV_DOUBLE; }

/* Numeric comparison across int, uint and double; false for NaN. */
static bool num_compare(cel_val a, cel_val b, int *out) {
    if (a.kind == b.kind) {
        switch (a.kind) {
        case CV_INT: *out = a.i < b.i ? -1 : a.i > b.i; return true;
        case CV_UINT: *out = a.u < b.u ? -1 : a.u > b.u; return true;
        default:
            if (isnan(a.d) || isnan(b.d)) return false;
            *out = a.d < b.d ? -1 : a.d > b.d;
            return true;
        }
    }
    if (a.kind == CV_DOUBLE || b.kind == CV_DOUBLE) {
        /* compare a double with an integer exactly */
        bool swap = b.kind == CV_DOUBLE;
        cel_val d = swap ? b : a, n = swap ? a : b;
        if (isnan(d.d)) return false;
        int r;
        if (n.kind == CV_INT) {
            if (d.d < -9223372036854775808.0) r = -1;
            else if (d.d >= 9223372036854775808.0) r = 1;
            else {
                double t = trunc(d.d);
                int64_t di = (int64_t)t;
                if (di < n.i) r = -1;
                else if (di > n.i) r = 1;
                else r = d.d > t ? 1 : d.d < t ? -1 : 0;
            }
        } else {
            if (d.d < 0) r = -1;
            else if (d.d >= 18446744073709551616.0) r = 1;
            else {
                double t = trunc(d.d);
                uint64_t du = (uint64_t)t;
                if (du < n.u) r = -1;
                else if (du > n.u) r = 1;
                else r = d.d > t ? 1 : 0;
            }
        }
        *out = swap ? -r : r;
        return true;
    }
    /* int vs uint */
    if (a.kind == CV_INT) {
        *out = a.i < 0 ? -1 : (uint64_t)a.i < b.u ? -1 : (uint64_t)a.i > b.u;
    } else {
        *out = b.i < 0 ? 1 : a.u < (uint64_t)b.i ? -1 : a.u > (uint64_t)b.i;
    }
    return true;
}

static int bytes_cmp(const char *a, uint32_t na, const char *b, uint32_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c) return c < 0 ? -1 : 1;
    return na < nb ? -1 : na > nb;
}

bool cel_compare(cel_val a, cel_val b, int *out) {
    if (is_num(a) && is_num(b)) return num_compare(a, b, out);
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case CV_STRING:
    case CV_BYTES: *out = bytes_cmp(a.s, a.len, b.s, b.len); return true;
    case CV_BOOL: *out = a.b == b.b ? 0 : a.b ? 1 : -1; return true;
    case CV_TIMESTAMP:
    case CV_DURATION: *out = cel_time_compare(a, b); return true;
    default: return false;
    }
}

cel_val cel_equal(cel_eval *ev, cel_val a, cel_val b) {
    if (a.kind == CV_ERROR) return a;
    if (b.kind == CV_ERROR) return b;
    if (a.kind == CV_NULL || b.kind == CV_NULL) return cel_bool(a.kind == b.kind);
    if (is_num(a) && is_num(b)) {
        int c;
        return cel_bool(num_compare(a, b, &c) && c == 0);
    }
    /* Quantity, Semver, IP and CIDR compare only with their own kind;
     * anything else is "no such overload", as their Equal methods answer. */
    if (a.kind == CV_QUANTITY || a.kind == CV_SEMVER || a.kind == CV_IP || a.kind == CV_CIDR || a.kind == CV_URL ||
        a.kind == CV_FORMAT) {
        if (b.kind != a.kind) return cel_no_overload();
        if (a.kind == CV_FORMAT) return cel_bool(a.sub == b.sub);
        if (a.kind == CV_URL) return cel_bool(cel_url_equal(a.url, b.url));
        if (a.kind == CV_QUANTITY) return cel_bool(a.q == b.q);
        if (a.kind == CV_IP || a.kind == CV_CIDR) return cel_bool(cel_net_equal(a.net, b.net));
        return cel_bool(ks_semver_compare(a.sv, b.sv) == 0);
    }
    if (b.kind == CV_QUANTITY || b.kind == CV_SEMVER || b.kind == CV_IP || b.kind == CV_CIDR || b.kind == CV_URL ||
        b.kind == CV_FORMAT)
        return cel_bool(false);
    bool amap = a.kind == CV_MAP || a.kind == CV_DEVMAP, bmap = b.kind == CV_MAP || b.kind == CV_DEVMAP;
    if (amap && bmap) {
        cel_val ka = a.kind == CV_MAP ? (cel_val){.kind = CV_LIST} : cel_devmap_keys(ev, a);
        uint32_t na = a.kind == CV_MAP ? a.map->n : ka.list->n;
        uint32_t nb = b.kind == CV_MAP ? b.map->n : cel_devmap_size(b);
        if (na != nb) return cel_bool(false);
        for (uint32_t i = 0; i < na; i++) {
            cel_val k = a.kind == CV_MAP ? a.map->k[i] : ka.list->v[i];
            cel_val va = a.kind == CV_MAP ? a.map->v[i] : cel_index(ev, a, k);
            cel_val has = cel_contains(ev, b, k);
            if (has.kind != CV_BOOL || !has.b) return cel_bool(false);
            cel_val vb = cel_index(ev, b, k);
            cel_val r = cel_equal(ev, va, vb);
            if (r.kind != CV_BOOL || !r.b) return r;
        }
        return cel_bool(true);
    }
    if (a.kind != b.kind) return cel_bool(false);
    switch (a.kind) {
    case CV_BOOL: return cel_bool(a.b == b.b);
    case CV_STRING:
    case CV_BYTES: return cel_bool(a.len == b.len && memcmp(a.s, b.s, a.len) == 0);
    case CV_TYPE: return cel_bool(a.sub == b.sub);
    case CV_LIST: {
        if (a.list->n != b.list->n) return cel_bool(false);
        for (uint32_t i = 0; i < a.list->n; i++) {
            cel_val r = cel_equal(ev, a.list->v[i], b.list->v[i]);
            if (r.kind != CV_BOOL || !r.b) return r;
        }
        return cel_bool(true);
    }
    case CV_OPTIONAL:
        if (!a.opt || !b.opt) return cel_bool(!a.opt && !b.opt);
        return cel_equal(ev, *a.opt, *b.opt);
    case CV_DEVICE: return cel_bool(a.dev == b.dev);
    case CV_TIMESTAMP:
    case CV_DURATION: return cel_bool(cel_time_compare(a, b) == 0);
    default: return cel_bool(false);
    }
}

/* ---- printing ------------------------------------------------------------------ */

static void print_quoted(ks_strbuf *b, const char *s, uint32_t n, bool bytes) {
    if (bytes) ks_sb_putc(b, 'b');
    ks_sb_putc(b, '"');
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            ks_sb_putc(b, '\\');
            ks_sb_putc(b, (char)c);
        } else if (c == '\n') {
            ks_sb_puts(b, "\\n");
        } else if (c == '\t') {
            ks_sb_puts(b, "\\t");
        } else if (c < 0x20 || (bytes && c >= 0x7f)) {
            ks_sb_printf(b, "\\x%02x", c);
        } else {
            ks_sb_putc(b, (char)c);
        }
    }
    ks_sb_putc(b, '"');
}

static const char *tkind_name(int k) {
    switch (k) {
    case CT_NULL: return "null_type";
    case CT_BOOL: return "bool";
    case CT_INT: return "int";
    case CT_UINT: return "uint";
    case CT_DOUBLE: return "double";
    case CT_STRING: return "string";
    case CT_BYTES: return "bytes";
    case CT_LIST: return "list";
    case CT_MAP: return "map";
    case CT_TYPE: return "type";
    case CT_OPTIONAL: return "optional_type";
    case CT_QUANTITY: return "kubernetes.Quantity";
    case CT_SEMVER: return "kubernetes.Semver";
    case CT_DEVICE: return "kubernetes.DRADevice";
    case CT_IP: return "net.IP";
    case CT_CIDR: return "net.CIDR";
    case CT_URL: return "kubernetes.URL";
    case CT_FORMAT: return "kubernetes.NamedFormat";
    case CT_TIMESTAMP: return "google.protobuf.Timestamp";
    case CT_DURATION: return "google.protobuf.Duration";
    case CT_AUTHZ: return "kubernetes.authorization.Authorizer";
    case CT_ERROR: return "*error*";
    case CT_ANY: return "any";
    default: return "dyn";
    }
}

static bool print_any_as_proto;

void cel_type_print_str(ks_strbuf *b, const cel_type *t) {
    print_any_as_proto = true;
    cel_type_print(b, t);
    print_any_as_proto = false;
}

void cel_type_print(ks_strbuf *b, const cel_type *t) {
    if (t && t->kind == CT_ANY && print_any_as_proto) {
        ks_sb_puts(b, "google.protobuf.Any");
        return;
    }
    if (!t) {
        ks_sb_puts(b, "dyn");
        return;
    }
    switch (t->kind) {
    case CT_AUTHZ: {
        static const char *const names[] = {"Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision"};
        ks_sb_printf(b, "kubernetes.authorization.%s", names[t->param < 5 ? t->param : 0]);
        return;
    }
    case CT_LIST:
        ks_sb_puts(b, "list(");
        cel_type_print(b, t->p1);
        ks_sb_putc(b, ')');
        return;
    case CT_MAP:
        ks_sb_puts(b, "map(");
        cel_type_print(b, t->p1);
        ks_sb_puts(b, ", ");
        cel_type_print(b, t->p2);
        ks_sb_putc(b, ')');
        return;
    case CT_OPTIONAL:
        ks_sb_puts(b, "optional_type(");
        cel_type_print(b, t->p1);
        ks_sb_putc(b, ')');
        return;
    case CT_TYPE:
        ks_sb_puts(b, "type");
        if (t->p1) {
            ks_sb_putc(b, '(');
            cel_type_print(b, t->p1);
            ks_sb_putc(b, ')');
        }
        return;
    case CT_PARAM: ks_sb_putc(b, (char)('A' + t->param)); return;
    case CT_NULL: ks_sb_puts(b, print_any_as_proto ? "null_type" : "null"); return; /* FormatCELType */
    case CT_TIMESTAMP: ks_sb_puts(b, print_any_as_proto ? "google.protobuf.Timestamp" : "timestamp"); return;
    case CT_DURATION: ks_sb_puts(b, print_any_as_proto ? "google.protobuf.Duration" : "duration"); return;
    default: ks_sb_puts(b, tkind_name(t->kind)); return;
    }
}

static void print_semver(ks_strbuf *b, const ks_semver *v) {
    ks_sb_printf(b, "%llu.%llu.%llu", (unsigned long long)v->major, (unsigned long long)v->minor,
                 (unsigned long long)v->patch);
    if (v->npre) ks_sb_printf(b, "-%.*s", (int)v->npre, v->pre);
    if (v->nbuild) ks_sb_printf(b, "+%.*s", (int)v->nbuild, v->build);
}

void cel_val_print(ks_strbuf *b, cel_val v) {
    switch (v.kind) {
    case CV_ERROR: ks_sb_printf(b, "error(%s)", v.s); return;
    case CV_NULL: ks_sb_puts(b, "null"); return;
    case CV_BOOL: ks_sb_puts(b, v.b ? "true" : "false"); return;
    case CV_INT: ks_sb_printf(b, "%lld", (long long)v.i); return;
    case CV_UINT: ks_sb_printf(b, "%lluu", (unsigned long long)v.u); return;
    case CV_DOUBLE: {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", v.d);
        /* shortest text that reads back the same */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v.d);
            if (strtod(buf, NULL) == v.d) break;
        }
        ks_sb_puts(b, buf);
        if (!strpbrk(buf, ".eEni")) ks_sb_puts(b, ".0");
        return;
    }
    case CV_STRING: print_quoted(b, v.s, v.len, false); return;
    case CV_BYTES: print_quoted(b, v.s, v.len, true); return;
    case CV_LIST:
        ks_sb_putc(b, '[');
        for (uint32_t i = 0; i < v.list->n; i++) {
            if (i) ks_sb_puts(b, ", ");
            cel_val_print(b, v.list->v[i]);
        }
        ks_sb_putc(b, ']');
        return;
    case CV_MAP:
        ks_sb_putc(b, '{');
        for (uint32_t i = 0; i < v.map->n; i++) {
            if (i) ks_sb_puts(b, ", ");
            cel_val_print(b, v.map->k[i]);
            ks_sb_puts(b, ": ");
            cel_val_print(b, v.map->v[i]);
        }
        ks_sb_putc(b, '}');
        return;
    case CV_DEVMAP: ks_sb_puts(b, "<device map>"); return;
    case CV_TYPE: ks_sb_puts(b, tkind_name(v.sub)); return;
    case CV_QUANTITY: {
        /* the exact amount in the shortest decimal form */
        __int128 q = v.q;
        bool neg = q < 0;
        unsigned __int128 m = neg ? (unsigned __int128)(-q) : (unsigned __int128)q;
        char digits[64];
        int n = 0;
        do {
            digits[n++] = (char)('0' + (int)(m % 10));
            m /= 10;
        } while (m);
        /* nano-units: insert a decimal point 9 digits from the right */
        while (n < 10) digits[n++] = '0';
        int frac = 9;
        int lo = 0;
        while (frac > 0 && digits[lo] == '0') {
            lo++;
            frac--;
        }
        ks_sb_puts(b, "quantity(\"");
        if (neg) ks_sb_putc(b, '-');
        for (int i = n - 1; i >= lo; i--) {
            ks_sb_putc(b, digits[i]);
            if (i == lo + frac && frac > 0) ks_sb_putc(b, '.');
        }
        ks_sb_puts(b, "\")");
        return;
    }
    case CV_SEMVER:
        ks_sb_puts(b, "semver(\"");
        print_semver(b, v.sv);
        ks_sb_puts(b, "\")");
        return;
    case CV_OPTIONAL:
        if (!v.opt) {
            ks_sb_puts(b, "optional.none()");
            return;
        }
        ks_sb_puts(b, "optional.of(");
        cel_val_print(b, *v.opt);
        ks_sb_putc(b, ')');
        return;
    case CV_DEVICE: ks_sb_puts(b, "<device>"); return;
    case CV_IP:
    case CV_CIDR:
        ks_sb_puts(b, v.kind == CV_IP ? "ip(\"" : "cidr(\"");
        cel_net_print(b, v.net);
        ks_sb_puts(b, "\")");
        return;
    case CV_FORMAT: ks_sb_printf(b, "format.%s()", cel_format_key(v.sub)); return;
    case CV_URL:
        ks_sb_puts(b, "url(\"");
        cel_url_print(b, v.url);
        ks_sb_puts(b, "\")");
        return;
    case CV_TIMESTAMP:
    case CV_DURATION: cel_time_print(b, v); return;
    default: ks_sb_puts(b, "?"); return;
    }
}
