#include "api/quantity.h"
#include "codec/decode_internal.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct derror {
    int line;
    char *msg;
};

void dec_init(dec *d, ks_decode_ctx *ctx, ks_arena *a, const char *kind, const ks_tree *obj) {
    ks_api_init();
    memset(d, 0, sizeof(*d));
    d->ctx = ctx;
    d->a = a;
    d->kind = kind;
    d->line = obj ? obj->line : 0;
}

const char *dkeep(dec *d, const char *s) {
    if (!s || d->ctx->doc) return s;
    return ks_arena_strdup(d->a, s);
}

static void put_path(ks_strbuf *b, const kpath *p) {
    if (!p) return;
    put_path(b, p->up);
    if (p->key) {
        if (b->len) ks_sb_putc(b, '.');
        ks_sb_puts(b, p->key);
    } else {
        ks_sb_printf(b, "[%u]", p->idx);
    }
}

void derr(dec *d, const ks_tree *at, const kpath *p, const char *fmt, ...) {
    d->failed = true;
    if (!d->ctx->errs) return;
    ks_strbuf b;
    ks_sb_init(&b);
    int line = at && at->line ? at->line : d->line;
    const char *file = d->ctx->file ? d->ctx->file : "<input>";
    if (line > 0) ks_sb_printf(&b, "%s:%d: ", file, line);
    else ks_sb_printf(&b, "%s: ", file);
    ks_sb_puts(&b, d->kind);
    if (d->name) {
        if (d->ns) ks_sb_printf(&b, " %s/%s", d->ns, d->name);
        else ks_sb_printf(&b, " %s", d->name);
    }
    ks_sb_puts(&b, ": ");
    ks_strbuf path;
    ks_sb_init(&path);
    put_path(&path, p);
    if (path.len) {
        ks_sb_puts(&b, ks_sb_str(&path));
        ks_sb_puts(&b, ": ");
    }
    ks_sb_free(&path);
    va_list ap;
    va_start(ap, fmt);
    char *msg = ks_xvasprintf(fmt, ap);
    va_end(ap);
    ks_sb_puts(&b, msg);
    free(msg);
    KS_GROW(d->errs, d->caperrs, d->nerrs + 1);
    d->errs[d->nerrs++] = (struct derror){line, ks_sb_take(&b)};
}

/* Fields are read in the decoder's order; messages read best in the
 * document's. Insertion sort: stable, and objects have few errors. */
bool dec_done(dec *d) {
    for (size_t i = 1; i < d->nerrs; i++) {
        struct derror x = d->errs[i];
        size_t j = i;
        for (; j > 0 && d->errs[j - 1].line > x.line; j--) d->errs[j] = d->errs[j - 1];
        d->errs[j] = x;
    }
    for (size_t i = 0; i < d->nerrs; i++) {
        if (d->ctx->errs) ks_errors_take(d->ctx->errs, d->errs[i].msg);
        else free(d->errs[i].msg);
    }
    free(d->errs);
    d->errs = NULL;
    d->nerrs = d->caperrs = 0;
    return !d->failed;
}

static void wrong_type(dec *d, const ks_tree *v, const kpath *p, const char *want) {
    if (v->type == KT_MAP || v->type == KT_SEQ)
        derr(d, v, p, "expected %s, got %s", want, kt_type_name(v->type));
    else
        derr(d, v, p, "expected %s, got %s %s", want, kt_type_name(v->type), v->text ? v->text : "");
}

bool d_str(dec *d, const ks_tree *v, const kpath *p, const char **out) {
    if (d_absent(v)) return false;
    if (v->type != KT_STRING) {
        wrong_type(d, v, p, "string");
        return false;
    }
    *out = v->text;
    return true;
}

bool d_bool(dec *d, const ks_tree *v, const kpath *p, bool *out) {
    if (d_absent(v)) return false;
    if (v->type != KT_BOOL) {
        wrong_type(d, v, p, "bool");
        return false;
    }
    *out = v->bval;
    return true;
}

/* A JSON number reads into an integer field when it is integral (2.0 from
 * YAML becomes 2 on its way through JSON). */
bool d_int64(dec *d, const ks_tree *v, const kpath *p, int64_t *out) {
    if (d_absent(v)) return false;
    if (v->type == KT_INT) {
        *out = v->ival;
        return true;
    }
    /* the range first: converting a double beyond int64 is undefined */
    if (v->type == KT_FLOAT && v->fval >= -9.2e18 && v->fval <= 9.2e18 &&
        v->fval == (double)(int64_t)v->fval) {
        *out = (int64_t)v->fval;
        return true;
    }
    wrong_type(d, v, p, "integer");
    return false;
}

bool d_int32(dec *d, const ks_tree *v, const kpath *p, int32_t *out) {
    int64_t x;
    if (!d_int64(d, v, p, &x)) return false;
    if (x < INT32_MIN || x > INT32_MAX) {
        derr(d, v, p, "value %lld out of range for int32", (long long)x);
        return false;
    }
    *out = (int32_t)x;
    return true;
}

bool d_time(dec *d, const ks_tree *v, const kpath *p, int64_t *out) {
    const char *s;
    if (!d_str(d, v, p, &s)) return false;
    int32_t nsec;
    if (!ks_time_parse_rfc3339_sec(s, out, &nsec)) {
        derr(d, v, p, "invalid time \"%s\" (want RFC 3339, e.g. 2006-01-02T15:04:05Z)", s);
        return false;
    }
    return true;
}

bool d_map(dec *d, const ks_tree *v, const kpath *p) {
    if (d_absent(v)) return false;
    if (v->type != KT_MAP) {
        wrong_type(d, v, p, "map");
        return false;
    }
    return true;
}

bool d_seq(dec *d, const ks_tree *v, const kpath *p) {
    if (d_absent(v)) return false;
    if (v->type != KT_SEQ) {
        wrong_type(d, v, p, "list");
        return false;
    }
    return true;
}

int d_enum(dec *d, const ks_tree *v, const kpath *p, const char *const *allowed) {
    const char *s;
    if (!d_str(d, v, p, &s)) return d_absent(v) ? -1 : -2;
    for (int i = 0; allowed[i]; i++)
        if (strcmp(allowed[i], s) == 0) return i;
    ks_strbuf b;
    ks_sb_init(&b);
    for (int i = 0; allowed[i]; i++) {
        if (!allowed[i][0]) continue;
        ks_sb_printf(&b, "%s\"%s\"", b.len ? ", " : "", allowed[i]);
    }
    derr(d, v, p, "unsupported value \"%s\": supported values: %s", s, ks_sb_str(&b));
    ks_sb_free(&b);
    return -2;
}

ks_id d_id(dec *d, const ks_tree *v, const kpath *p) {
    const char *s;
    return d_str(d, v, p, &s) ? ks_intern(s) : KS_ID_NONE;
}

bool d_ids(dec *d, const ks_tree *v, const kpath *p, uint32_t *n, ks_id **out) {
    *n = 0;
    *out = NULL;
    if (!d_seq(d, v, p)) return false;
    *out = ks_arena_calloc(d->a, v->n ? v->n : 1, sizeof(ks_id));
    for (uint32_t i = 0; i < v->n; i++) {
        const char *s;
        if (d_str(d, v->items[i], KI(p, i), &s)) (*out)[(*n)++] = ks_intern(s);
        else if (!d_absent(v->items[i])) return false;
        else (*out)[(*n)++] = KS_ID_NONE; /* null in a []string is "" */
    }
    return true;
}

/* The entry of a map that a decoder overwriting keys would keep: the last
 * of duplicates. */
static bool is_last_key(const ks_tree *m, uint32_t i) {
    for (uint32_t j = i + 1; j < m->n; j++)
        if (strcmp(m->keys[j], m->keys[i]) == 0) return false;
    return true;
}

bool d_labels(dec *d, const ks_tree *v, const kpath *p, ks_labels *out) {
    out->n = 0;
    out->kv = NULL;
    if (!d_map(d, v, p)) return false;
    if (!v->n) return true;
    out->kv = ks_arena_calloc(d->a, v->n, sizeof(ks_label));
    bool ok = true;
    for (uint32_t i = 0; i < v->n; i++) {
        if (!is_last_key(v, i)) continue;
        const char *s = "";
        const ks_tree *x = v->items[i];
        if (!d_absent(x) && !d_str(d, x, KP(p, v->keys[i]), &s)) {
            ok = false;
            continue;
        }
        out->kv[out->n++] = (ks_label){ks_intern(v->keys[i]), ks_intern(s)};
    }
    ks_labels_sort(out);
    return ok;
}

bool d_annotations(dec *d, const ks_tree *v, const kpath *p, ks_annotations *out) {
    out->n = 0;
    out->kv = NULL;
    if (!d_map(d, v, p)) return false;
    if (!v->n) return true;
    out->kv = ks_arena_calloc(d->a, v->n, sizeof(ks_annotation));
    bool ok = true;
    for (uint32_t i = 0; i < v->n; i++) {
        if (!is_last_key(v, i)) continue;
        const char *s = "";
        const ks_tree *x = v->items[i];
        if (!d_absent(x) && !d_str(d, x, KP(p, v->keys[i]), &s)) {
            ok = false;
            continue;
        }
        out->kv[out->n++] = (ks_annotation){ks_intern(v->keys[i]), dkeep(d, s)};
    }
    ks_annotations_sort(out);
    return ok;
}

bool d_quantity(dec *d, const ks_tree *v, const kpath *p, __int128 *nano) {
    ks_quantity q;
    bool ok = d_quantity_q(d, v, p, &q);
    *nano = ok ? q.nano : 0;
    return ok;
}

bool d_quantity_q(dec *d, const ks_tree *v, const kpath *p, ks_quantity *out) {
    memset(out, 0, sizeof(*out));
    if (!v || v->type == KT_NULL) return true; /* a null Quantity is zero */
    char buf[64];
    const char *text;
    if (v->type == KT_STRING) text = v->text;
    else if (!(text = kt_number_text(v, buf, sizeof(buf)))) {
        wrong_type(d, v, p, "quantity");
        return false;
    }
    ks_quantity q;
    const char *why;
    if (!ks_quantity_parse(text, &q, &why)) {
        derr(d, v, p, "invalid quantity \"%s\"", text);
        return false;
    }
    if (q.huge) {
        derr(d, v, p, "quantity \"%s\" is too large", text);
        return false;
    }
    *out = q;
    return true;
}

bool d_qlist(dec *d, const ks_tree *v, const kpath *p, ks_qlist *out) {
    out->n = 0;
    out->v = NULL;
    if (!d_map(d, v, p)) return !(v && v->type != KT_NULL);
    out->v = ks_arena_calloc(d->a, v->n ? v->n : 1, sizeof(ks_qentry));
    bool ok = true;
    for (uint32_t i = 0; i < v->n; i++) {
        if (!is_last_key(v, i)) continue;
        const kpath *kp = KP(p, v->keys[i]);
        __int128 nano;
        if (!d_quantity(d, v->items[i], kp, &nano)) {
            ok = false;
            continue;
        }
        const char *text = v->items[i] && v->items[i]->text ? v->items[i]->text : "";
        if (nano < 0) {
            derr(d, v->items[i], kp, "quantity \"%s\" must not be negative", text);
            ok = false;
            continue;
        }
        /* what the scheduler will make of it must be an int64 */
        int64_t x;
        bool cpu = strcmp(v->keys[i], "cpu") == 0;
        if (!(cpu ? ks_nano_to_milli(nano, &x) : ks_nano_to_value(nano, &x))) {
            derr(d, v->items[i], kp, "quantity \"%s\" is too large", text);
            ok = false;
            continue;
        }
        out->v[out->n++] = (ks_qentry){ks_intern(v->keys[i]), nano};
    }
    return ok;
}

bool d_resource(dec *d, const ks_tree *v, const kpath *p, ks_qlist *q, ks_resource *out) {
    ks_qlist tmp;
    if (!q) q = &tmp;
    memset(out, 0, sizeof(*out));
    if (!d_qlist(d, v, p, q)) return false;
    if (!ks_resource_add_qlist(out, d->a, q)) {
        derr(d, v, p, "resource quantities do not fit an int64");
        return false;
    }
    return true;
}

/* ---- selectors ---------------------------------------------------------- */

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

/* Sorted, without duplicates, as a set of values. */
static void sort_values(ks_requirement *r) {
    if (r->nvalues < 2) return;
    qsort(r->values, r->nvalues, sizeof(ks_id), cmp_id);
    uint32_t o = 1;
    for (uint32_t i = 1; i < r->nvalues; i++)
        if (r->values[i] != r->values[o - 1]) r->values[o++] = r->values[i];
    r->nvalues = o;
}

/* One {key, operator, values} requirement. `ops` lists the operator
 * names allowed, in ks_op order for the first six. */
static bool d_requirement(dec *d, const ks_tree *v, const kpath *p, bool node, bool field,
                          ks_requirement *r) {
    static const char *const label_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};
    static const char *const node_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL};
    static const char *const field_ops[] = {"In", "NotIn", NULL};
    memset(r, 0, sizeof(*r));
    if (!d_map(d, v, p)) {
        if (!d_absent(v)) return false;
        derr(d, v, p, "requirement must not be null");
        return false;
    }
    const char *key = "";
    const ks_tree *kv = kt_get(v, "key");
    if (!d_absent(kv) && !d_str(d, kv, KP(p, "key"), &key)) return false;
    r->key = ks_intern(key);
    const ks_tree *opv = kt_get(v, "operator");
    const char *ops = NULL;
    if (d_absent(opv)) {
        derr(d, v, KP(p, "operator"), "required");
        return false;
    }
    if (!d_str(d, opv, KP(p, "operator"), &ops)) return false;
    const char *const *allowed = field ? field_ops : node ? node_ops : label_ops;
    int op = -1;
    for (int i = 0; allowed[i]; i++)
        if (strcmp(allowed[i], ops) == 0) op = i;
    if (op < 0) {
        if (!node && !field)
            derr(d, opv, KP(p, "operator"), "\"%s\" is not a valid label selector operator", ops);
        else
            d_enum(d, opv, KP(p, "operator"), allowed);
        return false;
    }
    r->op = (ks_op)op;
    const kpath *vp = KP(p, "values");
    const ks_tree *vals = kt_get(v, "values");
    if (!d_absent(vals) && !d_ids(d, vals, vp, &r->nvalues, &r->values)) return false;
    const ks_tree *at = vals ? vals : v;
    if (field) {
        if (r->nvalues != 1) {
            derr(d, at, vp, "must have one element");
            return false;
        }
        return true;
    }
    switch (r->op) {
    case KS_OP_IN:
    case KS_OP_NOT_IN:
        if (r->nvalues == 0) {
            derr(d, at, vp, "values set can't be empty for In and NotIn");
            return false;
        }
        break;
    case KS_OP_EXISTS:
    case KS_OP_DOES_NOT_EXIST:
        if (r->nvalues != 0) {
            derr(d, at, vp, "values set must be empty for Exists and DoesNotExist");
            return false;
        }
        break;
    case KS_OP_GT:
    case KS_OP_LT:
        if (r->nvalues != 1) {
            derr(d, at, vp, "exactly one value is required for Gt and Lt");
            return false;
        }
        if (!ks_parse_int64(ks_str(r->values[0]), &r->num)) {
            derr(d, at, KI(vp, 0), "value \"%s\" must be an integer for Gt and Lt",
                 ks_str(r->values[0]));
            return false;
        }
        break;
    }
    sort_values(r);
    return true;
}

static bool d_requirements(dec *d, const ks_tree *v, const kpath *p, bool node, bool field,
                           uint32_t *n, ks_requirement **out, uint32_t extra) {
    *n = 0;
    *out = NULL;
    bool has = d_seq(d, v, p);
    if (!has && !d_absent(v)) return false;
    uint32_t cnt = has ? v->n : 0;
    if (cnt + extra == 0) return true;
    *out = ks_arena_calloc(d->a, cnt + extra, sizeof(ks_requirement));
    bool ok = true;
    for (uint32_t i = 0; i < cnt; i++) {
        if (d_requirement(d, v->items[i], KI(p, i), node, field, &(*out)[*n])) (*n)++;
        else ok = false;
    }
    return ok;
}

bool d_label_selector(dec *d, const ks_tree *v, const kpath *p, ks_label_selector *out) {
    memset(out, 0, sizeof(*out));
    if (!d_map(d, v, p)) {
        out->nothing = true;
        return d_absent(v);
    }
    const ks_tree *ml = kt_get(v, "matchLabels");
    ks_labels l;
    bool ok = d_labels(d, ml, KP(p, "matchLabels"), &l) || d_absent(ml);
    if (!ok) return false;
    if (!d_requirements(d, kt_get(v, "matchExpressions"), KP(p, "matchExpressions"), false, false,
                        &out->nreq, &out->reqs, l.n))
        return false;
    for (uint32_t i = 0; i < l.n; i++) {
        ks_requirement *r = &out->reqs[out->nreq++];
        memset(r, 0, sizeof(*r));
        r->key = l.kv[i].key;
        r->op = KS_OP_IN;
        r->nvalues = 1;
        r->values = ks_arena_alloc(d->a, sizeof(ks_id));
        r->values[0] = l.kv[i].value;
    }
    return true;
}

bool d_map_selector(dec *d, const ks_tree *v, const kpath *p, ks_label_selector *out) {
    memset(out, 0, sizeof(*out));
    ks_labels l;
    if (!d_labels(d, v, p, &l)) {
        out->nothing = true;
        return d_absent(v);
    }
    out->reqs = ks_arena_calloc(d->a, l.n ? l.n : 1, sizeof(ks_requirement));
    for (uint32_t i = 0; i < l.n; i++) {
        ks_requirement *r = &out->reqs[out->nreq++];
        r->key = l.kv[i].key;
        r->op = KS_OP_IN;
        r->nvalues = 1;
        r->values = ks_arena_alloc(d->a, sizeof(ks_id));
        r->values[0] = l.kv[i].value;
    }
    return true;
}

bool d_node_selector_term(dec *d, const ks_tree *v, const kpath *p, ks_node_selector_term *out) {
    memset(out, 0, sizeof(*out));
    if (!d_map(d, v, p)) return d_absent(v);
    bool ok = d_requirements(d, kt_get(v, "matchExpressions"), KP(p, "matchExpressions"), true,
                             false, &out->nexpr, &out->exprs, 0);
    ok &= d_requirements(d, kt_get(v, "matchFields"), KP(p, "matchFields"), true, true,
                         &out->nfields, &out->fields, 0);
    return ok;
}

bool d_node_selector(dec *d, const ks_tree *v, const kpath *p, ks_node_selector *out) {
    memset(out, 0, sizeof(*out));
    if (!d_map(d, v, p)) return d_absent(v);
    const ks_tree *terms = kt_get(v, "nodeSelectorTerms");
    const kpath *tp = KP(p, "nodeSelectorTerms");
    if (!d_seq(d, terms, tp)) return d_absent(terms);
    out->terms = ks_arena_calloc(d->a, terms->n ? terms->n : 1, sizeof(ks_node_selector_term));
    bool ok = true;
    for (uint32_t i = 0; i < terms->n; i++)
        ok &= d_node_selector_term(d, terms->items[i], KI(tp, i), &out->terms[out->nterms++]);
    return ok;
}

/* ---- metadata ----------------------------------------------------------- */

bool d_meta(dec *d, const ks_tree *obj, bool namespaced, meta *m) {
    memset(m, 0, sizeof(*m));
    const ks_tree *md = kt_get(obj, "metadata");
    const kpath *mp = KP(NULL, "metadata");
    bool has = d_map(d, md, mp);
    if (!has && !d_absent(md)) return false;
    const char *name = NULL, *ns = NULL;
    if (has) {
        d_str(d, kt_get(md, "name"), KP(mp, "name"), &name);
        if (namespaced) d_str(d, kt_get(md, "namespace"), KP(mp, "namespace"), &ns);
    }
    if (namespaced) {
        if (!ns || !*ns) ns = "default";
        d->ns = ns;
        m->ns = ks_intern(ns);
    }
    if (!name || !*name) {
        if (!d->failed) derr(d, has ? md : obj, KP(mp, "name"), "required");
        return false;
    }
    d->name = name;
    m->name = d->counted_name ? ks_intern_ref(name) : ks_intern(name);
    if (!has) return true;
    d_str(d, kt_get(md, "uid"), KP(mp, "uid"), &m->uid);
    m->uid = dkeep(d, m->uid);
    d_str(d, kt_get(md, "resourceVersion"), KP(mp, "resourceVersion"), &m->resource_version);
    m->resource_version = dkeep(d, m->resource_version);
    d_labels(d, kt_get(md, "labels"), KP(mp, "labels"), &m->labels);
    if (d->plain_annotations) d_annotations(d, kt_get(md, "annotations"), KP(mp, "annotations"), &m->plain_annotations);
    else d_labels(d, kt_get(md, "annotations"), KP(mp, "annotations"), &m->annotations);
    m->has_creation = d_time(d, kt_get(md, "creationTimestamp"), KP(mp, "creationTimestamp"),
                             &m->creation_ts);
    m->has_deletion = d_time(d, kt_get(md, "deletionTimestamp"), KP(mp, "deletionTimestamp"),
                             &m->deletion_ts);
    return !d->failed;
}
