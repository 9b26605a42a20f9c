#include "codec/pb.h"
#include "codec/pb_schema.h"
#include "codec/tree_internal.h"
#include "util/base64.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Protobuf wire types. */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

static const uint8_t magic[4] = {0x6b, 0x38, 0x73, 0x00};

typedef struct rd {
    const uint8_t *p, *end;
} rd;

typedef struct dec {
    ks_arena *a;
    char *err;
    char path[512]; /* where err happened: "spec.containers[0].image", built on the way out */
} dec;

/* Puts name (with [idx] when idx >= 0) in front of the error's path. */
static bool at(dec *d, const char *name, long idx) {
    char buf[2 * sizeof(d->path)];
    int k = idx >= 0 ? snprintf(buf, 256, "%s[%ld]", name, idx) : snprintf(buf, 256, "%s", name);
    if (k > 0 && k < 256 && d->path[0])
        snprintf(buf + k, sizeof(buf) - (size_t)k, "%s%s", d->path[0] == '[' ? "" : ".", d->path);
    size_t n = strnlen(buf, sizeof(d->path) - 1);
    memcpy(d->path, buf, n);
    d->path[n] = '\0';
    return false;
}

/* The error with its path, for the caller (malloc'd). */
static char *finish(dec *d) {
    if (!d->err) d->err = ks_xstrdup("malformed");
    if (!d->path[0]) return d->err;
    char *e = ks_xasprintf("%s: %s", d->path, d->err);
    free(d->err);
    d->err = NULL;
    return e;
}

static bool fail(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(dec *d, const char *fmt, ...) {
    if (d->err) return false; /* the innermost error names the field */
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&d->err, fmt, ap) < 0) d->err = NULL;
    va_end(ap);
    if (!d->err) ks_oom();
    return false;
}

/* A varint at p: 1 with *v and *n (its length), 0 when the bytes end
 * first, -1 when it is longer than 10 bytes. */
static int varint_at(const uint8_t *p, const uint8_t *end, uint64_t *v, size_t *n) {
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (p + i >= end) return 0;
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            *n = (size_t)i + 1;
            return 1;
        }
    }
    return -1;
}

static bool varint(rd *r, uint64_t *v) {
    size_t n;
    if (varint_at(r->p, r->end, v, &n) != 1) return false; /* cut short, or over 10 bytes */
    r->p += n;
    return true;
}

/* The next field's number and wire type; for WT_LEN its bytes in *sub. */
typedef struct pbval {
    uint32_t num;
    int wt;
    uint64_t u;
    rd sub;
} pbval;

/* 1: a field, 0: the end, -1: malformed. */
static int next_field(rd *r, pbval *v) {
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (!varint(r, &key)) return -1;
    v->num = (uint32_t)(key >> 3);
    v->wt = (int)(key & 7);
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return -1;
    switch (v->wt) {
    case WT_VARINT: return varint(r, &v->u) ? 1 : -1;
    case WT_I64:
        if (r->end - r->p < 8) return -1;
        memcpy(&v->u, r->p, 8);
        r->p += 8;
        return 1;
    case WT_I32: {
        if (r->end - r->p < 4) return -1;
        uint32_t x;
        memcpy(&x, r->p, 4);
        v->u = x;
        r->p += 4;
        return 1;
    }
    case WT_LEN: {
        uint64_t n;
        if (!varint(r, &n) || n > (uint64_t)(r->end - r->p)) return -1;
        v->sub.p = r->p;
        v->sub.end = r->p + n;
        r->p += n;
        return 1;
    }
    default: return -1; /* groups (3, 4) are not used by Kubernetes */
    }
}

static const ks_pb_field *find_field(const ks_pb_message *m, uint32_t num, uint16_t *hint) {
    /* fields come in order: start where the last one was */
    for (uint16_t k = 0; k < m->nfields; k++) {
        uint16_t i = (uint16_t)((*hint + k) % m->nfields);
        if (m->fields[i].num == num) {
            *hint = i;
            return &m->fields[i];
        }
    }
    return NULL;
}

/* ---- scalars ---------------------------------------------------------------- */

static ks_tree *tstr(dec *d, const char *s) {
    ks_tree *t = kt_new(d->a, KT_STRING, 0);
    t->text = s;
    t->quoted = true;
    return t;
}

/* A protobuf string as JSON would carry it: NUL refused (encoding/json
 * writes \u0000, which the JSON parser refuses too), invalid UTF-8 as
 * U+FFFD (as encoding/json writes it). */
static const char *pstring(dec *d, const rd *s) {
    size_t n = (size_t)(s->end - s->p);
    if (n > KT_MAX_STRING) return fail(d, "a string of %zu bytes", n), NULL;
    if (memchr(s->p, 0, n)) return fail(d, "a string holding a NUL byte"), NULL;
    char *c = ks_arena_strndup(d->a, (const char *)s->p, n);
    char *tofree = NULL;
    const char *clean = kt_utf8_clean(c, &tofree);
    if (tofree) {
        c = ks_arena_strdup(d->a, clean);
        free(tofree);
    }
    return c;
}

static ks_tree *tint(dec *d, int64_t v) { return kt_int(d->a, v); }

static ks_tree *tnull(dec *d) {
    ks_tree *t = kt_new(d->a, KT_NULL, 0);
    t->text = "null";
    return t;
}

static const char *base64(dec *d, const rd *s) {
    size_t n = (size_t)(s->end - s->p);
    char *o = ks_arena_alloc_uninit(d->a, ks_base64_encoded_len(n) + 1);
    ks_base64_encode(s->p, n, o);
    return o;
}

/* RFC 3339 in UTC, as metav1.Time (seconds) and MicroTime (.000000) write it. */
static const char *rfc3339(dec *d, int64_t sec, int64_t nanos, bool micro) {
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) return NULL;
    long long year = (long long)tm.tm_year + 1900;
    if (year < 0 || year > 9999) {
        /* not a year metav1.Time writes in four digits: as printf does */
        char buf[64];
        size_t k = (size_t)snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d", year, tm.tm_mon + 1,
                                    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (micro && k < sizeof(buf))
            snprintf(buf + k, sizeof(buf) - k, ".%06dZ", (int)((nanos % 1000000000 + 1000000000) % 1000000000 / 1000));
        else if (k < sizeof(buf))
            snprintf(buf + k, sizeof(buf) - k, "Z");
        return ks_arena_strdup(d->a, buf);
    }
    /* "YYYY-MM-DDTHH:MM:SS[.uuuuuu]Z" by hand: snprintf was most of
     * decoding a pod's timestamps (every watch event has several) */
    char *b = ks_arena_alloc_uninit(d->a, 28);
    const int f[6] = {(int)year, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
    static const char sep[6] = {'-', '-', 'T', ':', ':', 0};
    size_t k = 0;
    for (int i = 0; i < 6; i++) {
        int v = f[i];
        if (i == 0) {
            b[k++] = (char)('0' + v / 1000);
            b[k++] = (char)('0' + v / 100 % 10);
        }
        b[k++] = (char)('0' + v / 10 % 10);
        b[k++] = (char)('0' + v % 10);
        if (sep[i]) b[k++] = sep[i];
    }
    if (micro) {
        int us = (int)((nanos % 1000000000 + 1000000000) % 1000000000 / 1000);
        b[k++] = '.';
        for (int p = 100000; p; p /= 10) b[k++] = (char)('0' + us / p % 10);
    }
    b[k++] = 'Z';
    b[k] = '\0';
    return b;
}

/* v's fraction digits below 10^prec, trailing zeros dropped, at the end of buf[..*w) going left. */
static void go_frac(char *buf, size_t *w, uint64_t *v, int prec) {
    bool print = false;
    for (int i = 0; i < prec; i++) {
        uint64_t digit = *v % 10;
        print = print || digit != 0;
        if (print) buf[--*w] = (char)('0' + digit);
        *v /= 10;
    }
    if (print) buf[--*w] = '.';
}

static void go_int(char *buf, size_t *w, uint64_t v) {
    if (v == 0) buf[--*w] = '0';
    while (v > 0) {
        buf[--*w] = (char)('0' + v % 10);
        v /= 10;
    }
}

/* Go's time.Duration.String: "1h2m3.5s", "1.5ms", "0s". */
static const char *go_duration(dec *d, int64_t ns) {
    char buf[40];
    size_t w = sizeof(buf);
    buf[--w] = '\0';
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (u < 1000000000ull) {
        if (u == 0) return "0s";
        int prec;
        buf[--w] = 's';
        if (u < 1000) {
            prec = 0;
            buf[--w] = 'n';
        } else if (u < 1000000) {
            prec = 3;
            /* U+00B5 micro sign */
            buf[--w] = (char)0xb5;
            buf[--w] = (char)0xc2;
        } else {
            prec = 6;
            buf[--w] = 'm';
        }
        go_frac(buf, &w, &u, prec);
        go_int(buf, &w, u);
    } else {
        buf[--w] = 's';
        go_frac(buf, &w, &u, 9);
        go_int(buf, &w, u % 60);
        u /= 60;
        if (u > 0) {
            buf[--w] = 'm';
            go_int(buf, &w, u % 60);
            u /= 60;
            if (u > 0) {
                buf[--w] = 'h';
                go_int(buf, &w, u);
            }
        }
    }
    if (ns < 0) buf[--w] = '-';
    return ks_arena_strdup(d->a, buf + w);
}

/* ---- messages ------------------------------------------------------------------ */

static bool decode_msg(dec *d, uint16_t mi, rd body, ks_tree *map, int depth);

/* Reads a small well-known message's varint/length fields 1..3. */
typedef struct small {
    bool has[4];
    uint64_t u[4];
    rd s[4];
} small;

static bool read_small(dec *d, rd body, small *sm, const char *what) {
    memset(sm, 0, sizeof(*sm));
    pbval v;
    int k;
    while ((k = next_field(&body, &v)) == 1) {
        if (v.num > 3) continue;
        sm->has[v.num] = true;
        if (v.wt == WT_LEN) sm->s[v.num] = v.sub;
        else sm->u[v.num] = v.u;
    }
    if (k < 0) return fail(d, "%s: malformed", what);
    return true;
}

static bool is_len(const pbval *v) { return v->wt == WT_LEN; }

/* One value of field f (a list's item, a map's value, or the field). NULL
 * with d->err on error; *skip when the value is not written (PBK_SKIP). */
static ks_tree *value(dec *d, const ks_pb_field *f, const pbval *v, int depth) {
    switch ((ks_pb_kind)f->kind) {
    case PBK_STRING: {
        if (!is_len(v)) break;
        const char *s = pstring(d, &v->sub);
        return s ? tstr(d, s) : NULL;
    }
    case PBK_BYTES:
        if (!is_len(v)) break;
        return tstr(d, base64(d, &v->sub));
    case PBK_BOOL:
        if (v->wt != WT_VARINT) break;
        return kt_bool(d->a, v->u != 0);
    case PBK_INT32:
        if (v->wt != WT_VARINT) break;
        return tint(d, (int32_t)(uint32_t)v->u);
    case PBK_INT64:
        if (v->wt != WT_VARINT) break;
        return tint(d, (int64_t)v->u);
    case PBK_MSG: {
        if (!is_len(v)) break;
        ks_tree *m = kt_new(d->a, KT_MAP, 0);
        return decode_msg(d, f->msg, v->sub, m, depth + 1) ? m : NULL;
    }
    case PBK_QUANTITY: {
        if (!is_len(v)) break;
        small sm;
        if (!read_small(d, v->sub, &sm, "resource.Quantity")) return NULL;
        if (!sm.has[1]) return tstr(d, "0");
        const char *s = pstring(d, &sm.s[1]);
        return s ? tstr(d, s) : NULL;
    }
    case PBK_TIME:
    case PBK_MICROTIME: {
        if (!is_len(v)) break;
        if (v->sub.p == v->sub.end) return tnull(d); /* the zero time */
        small sm;
        if (!read_small(d, v->sub, &sm, "metav1.Time")) return NULL;
        const char *s = rfc3339(d, (int64_t)sm.u[1], (int32_t)(uint32_t)sm.u[2], f->kind == PBK_MICROTIME);
        if (!s) return fail(d, "a time out of range"), NULL;
        return tstr(d, s);
    }
    case PBK_DURATION: {
        if (!is_len(v)) break;
        small sm;
        if (!read_small(d, v->sub, &sm, "metav1.Duration")) return NULL;
        return tstr(d, go_duration(d, (int64_t)sm.u[1]));
    }
    case PBK_INTORSTR: {
        if (!is_len(v)) break;
        small sm;
        if (!read_small(d, v->sub, &sm, "intstr.IntOrString")) return NULL;
        if (sm.u[1] == 1) {
            const char *s = sm.has[3] ? pstring(d, &sm.s[3]) : "";
            return s ? tstr(d, s) : NULL;
        }
        return tint(d, (int32_t)(uint32_t)sm.u[2]);
    }
    case PBK_RAWJSON: {
        if (!is_len(v)) break;
        small sm;
        if (!read_small(d, v->sub, &sm, "runtime.RawExtension")) return NULL;
        size_t n = sm.has[1] ? (size_t)(sm.s[1].end - sm.s[1].p) : 0;
        if (!n) return tnull(d);
        ks_tree **docs = NULL;
        uint32_t ndocs = 0;
        char *perr = NULL;
        bool ok = kt_parse_json(d->a, "raw", (const char *)sm.s[1].p, n, &docs, &ndocs, &perr);
        ks_tree *t = ok && ndocs == 1 ? docs[0] : NULL;
        if (!t) {
            fail(d, "embedded JSON: %s", perr ? perr : "not one document");
            free(perr);
            return NULL;
        }
        free(perr);
        return t;
    }
    case PBK_STRLIST: {
        if (!is_len(v)) break;
        ks_tree *seq = kt_new(d->a, KT_SEQ, 0);
        rd r = v->sub;
        pbval e;
        int k;
        while ((k = next_field(&r, &e)) == 1) {
            if (e.num != 1) continue;
            if (!is_len(&e)) return fail(d, "a string list: wire type %d", e.wt), NULL;
            const char *s = pstring(d, &e.sub);
            if (!s) return NULL;
            kt_seq_add(d->a, seq, tstr(d, s));
        }
        if (k < 0) return fail(d, "a string list: malformed"), NULL;
        return seq;
    }
    case PBK_SKIP: return NULL;
    }
    return NULL; /* the caller names the wire type */
}

static bool is_zero(const ks_tree *t) {
    switch (t->type) {
    case KT_STRING: return !*t->text;
    case KT_INT: return t->ival == 0;
    case KT_BOOL: return !t->bval;
    default: return false;
    }
}

/* A map entry {key = 1, value = 2} into m. */
static bool map_entry(dec *d, const ks_pb_field *f, rd body, ks_tree *m, int depth) {
    const char *key = "";
    pbval v, val = {0};
    bool has_val = false;
    int k;
    while ((k = next_field(&body, &v)) == 1) {
        if (v.num == 1) {
            if (!is_len(&v)) return fail(d, "map key: wire type %d", v.wt);
            if (!(key = pstring(d, &v.sub))) return false;
        } else if (v.num == 2) {
            val = v;
            has_val = true;
        }
    }
    if (k < 0) return fail(d, "map entry: malformed");
    ks_tree *t;
    if (has_val) {
        if (!(t = value(d, f, &val, depth))) return fail(d, "map value: wire type %d", val.wt);
    } else {
        /* a missing value is the type's zero */
        switch ((ks_pb_kind)f->kind) {
        case PBK_STRING: t = tstr(d, ""); break;
        case PBK_QUANTITY: t = tstr(d, "0"); break;
        case PBK_MSG: t = kt_new(d->a, KT_MAP, 0); break;
        case PBK_STRLIST: t = tnull(d); break;
        default: t = tint(d, 0); break;
        }
    }
    kt_map_add(d->a, m, key, t);
    return true;
}

/* Adds key -> val to map without copying key (the schema's names live
 * as long as the program). */
static void add_static(dec *d, ks_tree *map, const char *key, ks_tree *val) {
    size_t cap = map->n ? kt_cap(map->n) : 0;
    if (map->n >= cap) {
        size_t nc = kt_cap(map->n + 1);
        ks_tree **items = ks_arena_alloc_uninit(d->a, nc * sizeof(*items));
        const char **keys = ks_arena_alloc_uninit(d->a, nc * sizeof(*keys));
        if (map->n) {
            memcpy(items, map->items, map->n * sizeof(*items));
            memcpy(keys, map->keys, map->n * sizeof(*keys));
        }
        map->items = items;
        map->keys = keys;
    }
    map->keys[map->n] = key;
    map->items[map->n++] = val;
}

#define MAX_FIELDS 64

static bool decode_msg(dec *d, uint16_t mi, rd body, ks_tree *map, int depth) {
    if (depth > KT_MAX_DEPTH) return fail(d, "nested deeper than %d", KT_MAX_DEPTH);
    const ks_pb_message *m = &ks_pb_messages[mi];
    ks_tree *slot[MAX_FIELDS] = {0}; /* a repeated field's list, a map field's map */
    uint64_t seen = 0;
    uint16_t hint = 0;
    pbval v;
    int k;
    while ((k = next_field(&body, &v)) == 1) {
        const ks_pb_field *f = m->nfields ? find_field(m, v.num, &hint) : NULL;
        if (!f || f->kind == PBK_SKIP) continue; /* unknown: skipped */
        unsigned fi = (unsigned)(f - m->fields);
        seen |= 1ull << fi;
        if (f->flags & PBF_MAP) {
            if (!is_len(&v)) return fail(d, "wire type %d (%s field %u)", v.wt, m->name, v.num), at(d, f->name, -1);
            if (!slot[fi]) {
                slot[fi] = kt_new(d->a, KT_MAP, 0);
                add_static(d, map, f->name, slot[fi]);
            }
            if (!map_entry(d, f, v.sub, slot[fi], depth)) return at(d, f->name, -1);
            continue;
        }
        if (f->flags & PBF_INLINE) {
            if (!is_len(&v)) return fail(d, "wire type %d (%s field %u)", v.wt, m->name, v.num), at(d, f->name, -1);
            if (!decode_msg(d, f->msg, v.sub, map, depth + 1)) return false;
            continue;
        }
        if (f->flags & PBF_REPEATED) {
            if (!slot[fi]) {
                slot[fi] = kt_new(d->a, KT_SEQ, 0);
                add_static(d, map, f->name, slot[fi]);
            }
            if (is_len(&v) && (f->kind == PBK_INT32 || f->kind == PBK_INT64 || f->kind == PBK_BOOL)) {
                /* packed */
                rd r = v.sub;
                while (r.p < r.end) {
                    pbval e = {.num = v.num, .wt = WT_VARINT};
                    if (!varint(&r, &e.u)) return fail(d, "a malformed packed list"), at(d, f->name, -1);
                    kt_seq_add(d->a, slot[fi], value(d, f, &e, depth));
                }
                continue;
            }
            ks_tree *t = value(d, f, &v, depth);
            if (!t) return fail(d, "wire type %d (%s field %u)", v.wt, m->name, v.num), at(d, f->name, slot[fi]->n);
            kt_seq_add(d->a, slot[fi], t);
            continue;
        }
        ks_tree *t = value(d, f, &v, depth);
        if (!t) return fail(d, "wire type %d (%s field %u)", v.wt, m->name, v.num), at(d, f->name, -1);
        if (!(f->flags & PBF_PTR) && (f->flags & PBF_OMITEMPTY) && is_zero(t)) continue;
        add_static(d, map, f->name, t);
    }
    if (k < 0) return fail(d, "%s: malformed after field %u", m->name, v.num);
    /* a list or map field that JSON writes even when empty: null there */
    for (unsigned i = 0; i < m->nfields; i++) {
        const ks_pb_field *f = &m->fields[i];
        if (!(seen >> i & 1) && (f->flags & (PBF_REPEATED | PBF_MAP)) && !(f->flags & PBF_OMITEMPTY) &&
            f->kind != PBK_SKIP)
            add_static(d, map, f->name, tnull(d));
    }
    return true;
}

/* ---- objects --------------------------------------------------------------------- */

bool ks_pb_is_protobuf(const void *buf, size_t len) { return len >= 4 && memcmp(buf, magic, 4) == 0; }

static int root_msg(const char *av, const char *kind) {
    for (unsigned i = 0; i < ks_pb_nroots; i++)
        if (strcmp(ks_pb_roots[i].kind, kind) == 0 &&
            (strcmp(ks_pb_roots[i].api_version, av) == 0 || strcmp(kind, "Status") == 0))
            return ks_pb_roots[i].msg;
    return -1;
}

/* The prefix and runtime.Unknown: apiVersion, kind and the raw message. */
static bool unwrap(dec *d, const void *buf, size_t len, const char **av, const char **kind, rd *raw) {
    if (!ks_pb_is_protobuf(buf, len)) return fail(d, "not a protobuf object (no \"k8s\\0\" prefix)");
    rd r = {(const uint8_t *)buf + 4, (const uint8_t *)buf + len};
    *av = *kind = "";
    raw->p = raw->end = r.p;
    pbval v;
    int k;
    while ((k = next_field(&r, &v)) == 1) {
        if (v.num == 1 && is_len(&v)) {
            rd tm = v.sub;
            pbval t;
            int j;
            while ((j = next_field(&tm, &t)) == 1) {
                if (!is_len(&t)) continue;
                if (t.num == 1 && !(*av = pstring(d, &t.sub))) return false;
                if (t.num == 2 && !(*kind = pstring(d, &t.sub))) return false;
            }
            if (j < 0) return fail(d, "runtime.Unknown typeMeta: malformed");
        } else if (v.num == 2 && is_len(&v)) {
            *raw = v.sub;
        } else if (v.num == 3 && is_len(&v) && v.sub.p != v.sub.end) {
            return fail(d, "content encoding \"%.*s\" is not supported", (int)(v.sub.end - v.sub.p), v.sub.p);
        }
    }
    if (k < 0) return fail(d, "runtime.Unknown: malformed");
    return true;
}

static void set_type(dec *d, ks_tree *t, const char *av, const char *kind) {
    /* JSON has them first; decoders look them up by name */
    add_static(d, t, "apiVersion", tstr(d, av));
    add_static(d, t, "kind", tstr(d, kind));
}

static bool object_at(dec *d, const void *buf, size_t len, ks_tree **out) {
    const char *av = "", *kind = "";
    rd raw;
    if (!unwrap(d, buf, len, &av, &kind, &raw)) return false;
    int mi = root_msg(av, kind);
    if (mi < 0) return fail(d, "%s %s: not a kind ksched reads as protobuf", av, kind);
    ks_tree *t = kt_new(d->a, KT_MAP, 0);
    set_type(d, t, av, kind);
    if (!decode_msg(d, (uint16_t)mi, raw, t, 1)) return false;
    *out = t;
    return true;
}

bool ks_pb_decode_object(ks_arena *a, const void *buf, size_t len, ks_tree **out, char **err) {
    dec d = {.a = a};
    if (object_at(&d, buf, len, out)) return true;
    *err = finish(&d);
    return false;
}

/* ---- a list read while it arrives ------------------------------------------------ */

/* The field at p when all of it is in [p, end): 1 with its number, wire
 * type, payload (LEN) and whole length *n; 0 when more bytes are needed;
 * -1 when malformed. */
static int field_at(const uint8_t *p, const uint8_t *end, pbval *v, size_t *n) {
    uint64_t key, x;
    size_t kn, ln;
    int k = varint_at(p, end, &key, &kn);
    if (k <= 0) return k;
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return -1;
    v->num = (uint32_t)(key >> 3);
    v->wt = (int)(key & 7);
    const uint8_t *q = p + kn;
    switch (v->wt) {
    case WT_VARINT:
        if ((k = varint_at(q, end, &x, &ln)) <= 0) return k;
        *n = kn + ln;
        return 1;
    case WT_I64:
    case WT_I32: {
        size_t w = v->wt == WT_I64 ? 8 : 4;
        if ((size_t)(end - q) < w) return 0;
        *n = kn + w;
        return 1;
    }
    case WT_LEN:
        if ((k = varint_at(q, end, &x, &ln)) <= 0) return k;
        if (x > ((uint64_t)1 << 40)) return -1;
        *n = kn + ln + (size_t)x;
        if ((size_t)(end - q - ln) < x) return 0;
        v->sub.p = q + ln;
        v->sub.end = q + ln + x;
        return 1;
    default: return -1;
    }
}

/* The prefix and runtime.Unknown up to where its raw bytes start. */
static int reader_envelope(ks_pb_list_reader *lr, dec *d, const uint8_t *p, const uint8_t *end, size_t *used) {
    if (end - p < 4) return KS_PB_MORE;
    if (memcmp(p, magic, 4) != 0) return KS_PB_NOT_LIST;
    const uint8_t *q = p + 4;
    for (;;) {
        pbval v;
        size_t n;
        uint64_t key, len;
        size_t kn, ln;
        int k = varint_at(q, end, &key, &kn);
        if (k == 0) return KS_PB_MORE;
        if (k < 0 || (key & 7) != WT_LEN) return KS_PB_NOT_LIST;
        if (key >> 3 == 2) {
            /* raw: the list message, read field by field from here */
            if ((k = varint_at(q + kn, end, &len, &ln)) == 0) return KS_PB_MORE;
            if (k < 0 || !lr->kind[0]) return KS_PB_NOT_LIST;
            int mi = root_msg(lr->api_version, lr->kind);
            const ks_pb_message *m = mi >= 0 ? &ks_pb_messages[mi] : NULL;
            /* a list: metadata = 1, items = 2 */
            if (!m || m->nfields != 2 || strcmp(m->fields[1].name, "items") != 0) return KS_PB_NOT_LIST;
            lr->list_msg = (uint16_t)mi;
            lr->item_msg = m->fields[1].msg;
            lr->left = len;
            lr->state = 1;
            *used = (size_t)(q + kn + ln - p);
            return KS_PB_MORE;
        }
        if ((k = field_at(q, end, &v, &n)) == 0) return KS_PB_MORE;
        if (k < 0) return KS_PB_NOT_LIST;
        if (v.num == 1) {
            /* typeMeta: apiVersion = 1, kind = 2 */
            rd tm = v.sub;
            pbval t;
            int j;
            while ((j = next_field(&tm, &t)) == 1) {
                if (!is_len(&t) || (t.num != 1 && t.num != 2)) continue;
                char *dst = t.num == 1 ? lr->api_version : lr->kind;
                size_t sl = (size_t)(t.sub.end - t.sub.p);
                if (sl >= sizeof(lr->kind) || memchr(t.sub.p, 0, sl)) return KS_PB_NOT_LIST;
                memcpy(dst, t.sub.p, sl);
                dst[sl] = '\0';
            }
            if (j < 0) return KS_PB_NOT_LIST;
        } else if (v.num == 3 && v.sub.p != v.sub.end) {
            return fail(d, "content encoding \"%.*s\" is not supported", (int)(v.sub.end - v.sub.p), v.sub.p),
                   KS_PB_ERROR;
        }
        q += n;
    }
}

static ks_tree *reader_root(ks_pb_list_reader *lr, dec *d, ks_tree *md) {
    ks_tree *t = kt_new(d->a, KT_MAP, 0);
    set_type(d, t, ks_arena_strdup(d->a, lr->api_version), ks_arena_strdup(d->a, lr->kind));
    if (md) add_static(d, t, "metadata", md);
    lr->root_sent = true;
    return t;
}

int ks_pb_list_read(ks_pb_list_reader *lr, ks_arena *a, const void *buf, size_t len, size_t *used, ks_tree **out,
                    char **err) {
    dec d = {.a = a};
    const uint8_t *p = buf, *end = p + len;
    *used = 0;
    *out = NULL;
    *err = NULL;
    if (lr->state == 0) {
        int k = reader_envelope(lr, &d, p, end, used);
        if (k == KS_PB_ERROR) *err = finish(&d);
        if (lr->state == 0) return k;
        p += *used;
    }
    pbval v;
    for (;;) {
        if (lr->state == 2) return KS_PB_END;
        if (lr->left == 0) {
            /* a list without metadata still has its type */
            if (!lr->root_sent) return *out = reader_root(lr, &d, NULL), KS_PB_ROOT;
            lr->state = 2;
            return KS_PB_END;
        }
        /* nothing past the list's own bytes is part of it */
        const uint8_t *lend = (uint64_t)(end - p) > lr->left ? p + lr->left : end;
        size_t n;
        int k = field_at(p, lend, &v, &n);
        if (k == 0 && (uint64_t)(lend - p) == lr->left) k = -1; /* cut inside the list's own length */
        if (k == 0) return KS_PB_MORE;
        if (k < 0) {
            *err = ks_xstrdup(lr->index ? "the list is malformed after its last whole item" : "the list is malformed");
            lr->state = 2;
            return KS_PB_ERROR;
        }
        *used += n;
        p += n;
        lr->left -= n;
        if (v.num == 1 || v.num == 2) break;
        /* a field lists do not have: skipped */
    }
    const ks_pb_message *m = &ks_pb_messages[lr->list_msg];
    if (v.num == 1) {
        ks_tree *md = kt_new(a, KT_MAP, 0);
        if (!is_len(&v) || !decode_msg(&d, m->fields[0].msg, v.sub, md, 2)) {
            fail(&d, "%s metadata: malformed", lr->kind);
            *err = finish(&d);
            lr->state = 2;
            return KS_PB_ERROR;
        }
        *out = reader_root(lr, &d, md);
        return KS_PB_ROOT;
    }
    uint32_t idx = lr->index++;
    if (!is_len(&v)) {
        *err = ks_xasprintf("item %u: wire type %d", idx, v.wt);
        return KS_PB_BAD_ITEM;
    }
    ks_tree *t = kt_new(a, KT_MAP, 0);
    if (!decode_msg(&d, lr->item_msg, v.sub, t, 2)) {
        char *e = finish(&d);
        *err = ks_xasprintf("item %u: %s", idx, e);
        free(e);
        return KS_PB_BAD_ITEM;
    }
    *out = t;
    return KS_PB_ITEM;
}

int64_t ks_pb_frame_len(const void *buf, size_t len) {
    if (len < 4) return -1;
    const uint8_t *b = buf;
    return (int64_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
}

bool ks_pb_decode_watch_event(ks_arena *a, const void *buf, size_t len, ks_tree **out, char **err) {
    dec d = {.a = a};
    rd r = {buf, (const uint8_t *)buf + len};
    const char *type = NULL;
    ks_tree *obj = NULL;
    pbval v;
    int k;
    while ((k = next_field(&r, &v)) == 1) {
        if (!is_len(&v)) continue;
        if (v.num == 1) {
            if (!(type = pstring(&d, &v.sub))) goto bad;
        } else if (v.num == 2) {
            small sm;
            if (!read_small(&d, v.sub, &sm, "WatchEvent object")) goto bad;
            if (!sm.has[1]) continue;
            if (!object_at(&d, sm.s[1].p, (size_t)(sm.s[1].end - sm.s[1].p), &obj)) goto bad;
        }
    }
    if (k < 0) {
        fail(&d, "WatchEvent: malformed");
        goto bad;
    }
    ks_tree *ev = kt_new(a, KT_MAP, 0);
    if (type) add_static(&d, ev, "type", tstr(&d, type));
    if (obj) add_static(&d, ev, "object", obj);
    *out = ev;
    return true;
bad:
    *err = finish(&d);
    return false;
}

/* ---- encoding ---------------------------------------------------------------------- */

static void put_varint(ks_strbuf *b, uint64_t v) {
    while (v >= 0x80) {
        ks_sb_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    ks_sb_putc(b, (char)v);
}

static void put_len(ks_strbuf *b, uint32_t num, const void *p, size_t n) {
    put_varint(b, (uint64_t)num << 3 | WT_LEN);
    put_varint(b, n);
    ks_sb_putn(b, p, n);
}

static bool encode_msg(dec *d, uint16_t mi, const ks_tree *t, ks_strbuf *b, int depth);

static bool encode_value(dec *d, const ks_pb_field *f, const ks_tree *v, ks_strbuf *b, int depth) {
    switch ((ks_pb_kind)f->kind) {
    case PBK_STRING:
        if (v->type != KT_STRING) break;
        put_len(b, f->num, v->text, strlen(v->text));
        return true;
    case PBK_BOOL:
        if (v->type != KT_BOOL) break;
        put_varint(b, (uint64_t)f->num << 3 | WT_VARINT);
        put_varint(b, v->bval);
        return true;
    case PBK_INT32:
    case PBK_INT64:
        if (v->type != KT_INT) break;
        put_varint(b, (uint64_t)f->num << 3 | WT_VARINT);
        put_varint(b, (uint64_t)v->ival);
        return true;
    case PBK_MSG: {
        if (v->type != KT_MAP) break;
        ks_strbuf sub;
        ks_sb_init(&sub);
        bool ok = encode_msg(d, f->msg, v, &sub, depth + 1);
        if (ok) put_len(b, f->num, sub.s ? sub.s : "", sub.len);
        ks_sb_free(&sub);
        return ok;
    }
    case PBK_TIME:
    case PBK_MICROTIME: {
        if (v->type != KT_STRING) break;
        int64_t sec;
        int32_t nanos;
        if (!ks_time_parse_rfc3339_sec(v->text, &sec, &nanos))
            return fail(d, "field %s: not an RFC 3339 time", f->name);
        ks_strbuf sub;
        ks_sb_init(&sub);
        put_varint(&sub, 1 << 3 | WT_VARINT);
        put_varint(&sub, (uint64_t)sec);
        if (f->kind == PBK_MICROTIME && nanos) {
            put_varint(&sub, 2 << 3 | WT_VARINT);
            put_varint(&sub, (uint64_t)nanos);
        }
        put_len(b, f->num, sub.s, sub.len);
        ks_sb_free(&sub);
        return true;
    }
    default: break; /* what ksched writes has none of the others */
    }
    return fail(d, "field %s: cannot encode a %s as it", f->name, kt_type_name(v->type));
}

static bool encode_msg(dec *d, uint16_t mi, const ks_tree *t, ks_strbuf *b, int depth) {
    const ks_pb_message *m = &ks_pb_messages[mi];
    if (depth > 64) return fail(d, "nested too deep");
    for (uint32_t i = 0; i < t->n; i++) {
        const ks_pb_field *f = NULL;
        for (unsigned j = 0; j < m->nfields && !f; j++)
            if (strcmp(m->fields[j].name, t->keys[i]) == 0) f = &m->fields[j];
        if (!f) {
            if (depth == 0 && (strcmp(t->keys[i], "apiVersion") == 0 || strcmp(t->keys[i], "kind") == 0)) continue;
            return fail(d, "%s has no field %s", m->name, t->keys[i]);
        }
        const ks_tree *v = t->items[i];
        if (v->type == KT_NULL) continue;
        if (f->flags & (PBF_MAP | PBF_INLINE)) return fail(d, "field %s: not supported when encoding", f->name);
        if (f->flags & PBF_REPEATED) {
            if (v->type != KT_SEQ) return fail(d, "field %s: not a list", f->name);
            for (uint32_t j = 0; j < v->n; j++)
                if (!encode_value(d, f, v->items[j], b, depth)) return false;
        } else if (!encode_value(d, f, v, b, depth)) {
            return false;
        }
    }
    return true;
}

bool ks_pb_encode_object(const ks_tree *obj, const char *api_version, const char *kind, char **out, size_t *out_len,
                         char **err) {
    dec d = {0};
    int mi = root_msg(api_version, kind);
    if (mi < 0 || !obj || obj->type != KT_MAP) {
        *err = ks_xasprintf("%s %s: not a kind ksched writes as protobuf", api_version, kind);
        return false;
    }
    ks_strbuf raw, tm, b;
    ks_sb_init(&raw);
    ks_sb_init(&tm);
    ks_sb_init(&b);
    if (!encode_msg(&d, (uint16_t)mi, obj, &raw, 0)) {
        ks_sb_free(&raw);
        *err = d.err;
        return false;
    }
    put_len(&tm, 1, api_version, strlen(api_version));
    put_len(&tm, 2, kind, strlen(kind));
    ks_sb_putn(&b, (const char *)magic, 4);
    put_len(&b, 1, tm.s, tm.len);
    put_len(&b, 2, raw.s ? raw.s : "", raw.len);
    ks_sb_free(&raw);
    ks_sb_free(&tm);
    *out_len = b.len;
    *out = ks_sb_take(&b);
    return true;
}
