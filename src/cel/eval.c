/* The CEL interpreter: walks the checked AST with CEL's evaluation rules
 * (strict calls propagate the first error; && and || are commutative
 * over errors; comprehensions stop when their condition is false), the
 * DRA `device` variable as upstream exposes it (attributes and capacity
 * as maps of maps keyed by domain, a missing domain reading as an empty
 * map), and cel-go's runtime cost accounting against a limit. Values
 * built during an evaluation live in the context's scratch arena. */
#include "cel/cel_internal.h"
#include "cel/time.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COST_LIMIT_MSG "operation cancelled: actual cost limit exceeded"

struct ks_cel_ctx {
    ks_arena *scratch;
    cel_eval ev;
    ks_strbuf msg;
};

static void add_cost(cel_eval *ev, uint64_t c) {
    ev->cost += c;
    if (ev->limit && ev->cost > ev->limit) ev->cancelled = true;
}

/* ---- the device ------------------------------------------------------------------ */

static bool dm_is_attrs(const cel_val *m) { return m->sub == DM_ATTRS || m->sub == DM_ATTRS_DOMAIN; }

static bool str_eq(const char *a, const char *b, size_t nb) { return strlen(a) == nb && memcmp(a, b, nb) == 0; }

static cel_val attr_value(cel_eval *ev, const ks_cel_attr *a) {
    switch (a->kind) {
    case KS_CEL_ATTR_INT: return cel_int(a->i);
    case KS_CEL_ATTR_BOOL: return cel_bool(a->b);
    case KS_CEL_ATTR_STRING: return cel_str(a->s, strlen(a->s));
    case KS_CEL_ATTR_VERSION: {
        ks_semver *v = ks_arena_alloc(ev->scratch, sizeof(*v));
        char err[256];
        if (!ks_semver_parse(a->s, strlen(a->s), v, err, sizeof err))
            return cel_errorf(ev, "attribute %s: parse semantic version: %s", a->name, err);
        return (cel_val){.kind = CV_SEMVER, .sv = v};
    }
    default: return cel_errorf(ev, "attribute %s: unsupported attribute value", a->name);
    }
}

uint32_t cel_devmap_size(cel_val m) {
    const ks_cel_device *d = m.dm.dev;
    bool attrs = dm_is_attrs(&m);
    uint32_t n = attrs ? d->nattrs : d->ncaps;
    if (m.sub == DM_ATTRS_DOMAIN || m.sub == DM_CAPS_DOMAIN) {
        uint32_t c = 0;
        for (uint32_t i = 0; i < n; i++) {
            const char *dom = attrs ? d->attrs[i].domain : d->caps[i].domain;
            if (str_eq(dom, m.dm.domain, m.len)) c++;
        }
        return c;
    }
    /* distinct domains */
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *dom = attrs ? d->attrs[i].domain : d->caps[i].domain;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = strcmp(attrs ? d->attrs[j].domain : d->caps[j].domain, dom) == 0;
        if (!seen) c++;
    }
    return c;
}

static int cmp_str_val(const void *a, const void *b) {
    const cel_val *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    return c ? c : (int)x->len - (int)y->len;
}

/* The keys of a device map, sorted (upstream iterates a Go map). */
cel_val cel_devmap_keys(cel_eval *ev, cel_val m) {
    const ks_cel_device *d = m.dm.dev;
    bool attrs = dm_is_attrs(&m), inner = m.sub == DM_ATTRS_DOMAIN || m.sub == DM_CAPS_DOMAIN;
    uint32_t n = attrs ? d->nattrs : d->ncaps;
    cel_val *keys = ks_arena_alloc_uninit(ev->scratch, (n ? n : 1) * sizeof(cel_val));
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *dom = attrs ? d->attrs[i].domain : d->caps[i].domain;
        const char *id = attrs ? d->attrs[i].id : d->caps[i].id;
        if (inner) {
            if (str_eq(dom, m.dm.domain, m.len)) keys[k++] = cel_str(id, strlen(id));
            continue;
        }
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++) seen = str_eq(dom, keys[j].s, keys[j].len);
        if (!seen) keys[k++] = cel_str(dom, strlen(dom));
    }
    qsort(keys, k, sizeof(cel_val), cmp_str_val);
    cel_list *l = ks_arena_alloc_uninit(ev->scratch, sizeof(*l));
    l->n = k;
    l->v = keys;
    return (cel_val){.kind = CV_LIST, .list = l};
}

/* Look key up in a device map; *found false when absent (the outer maps
 * always find: an unknown domain is an empty map). */
cel_val cel_devmap_get(cel_eval *ev, cel_val m, cel_val key, bool *found) {
    const ks_cel_device *d = m.dm.dev;
    bool attrs = dm_is_attrs(&m);
    if (m.sub == DM_ATTRS || m.sub == DM_CAPS) {
        *found = true;
        cel_val r = {.kind = CV_DEVMAP, .sub = attrs ? DM_ATTRS_DOMAIN : DM_CAPS_DOMAIN};
        r.dm.dev = d;
        if (key.kind == CV_STRING) {
            r.dm.domain = key.s;
            r.len = key.len;
        } else {
            r.dm.domain = "\x01"; /* matches no domain */
            r.len = 1;
        }
        return r;
    }
    *found = false;
    if (key.kind != CV_STRING) return cel_null();
    uint32_t n = attrs ? d->nattrs : d->ncaps;
    for (uint32_t i = 0; i < n; i++) {
        if (attrs) {
            const ks_cel_attr *a = &d->attrs[i];
            if (str_eq(a->domain, m.dm.domain, m.len) && str_eq(a->id, key.s, key.len)) {
                *found = true;
                return attr_value(ev, a);
            }
        } else {
            const ks_cel_capacity *c = &d->caps[i];
            if (str_eq(c->domain, m.dm.domain, m.len) && str_eq(c->id, key.s, key.len)) {
                *found = true;
                return (cel_val){.kind = CV_QUANTITY, .q = c->nano};
            }
        }
    }
    return cel_null();
}

/* ---- containers ------------------------------------------------------------------ */

/* Go's %v of a key, as cel-go's "no such key" prints it. */
static cel_val no_such_key(cel_eval *ev, cel_val k) {
    if (k.kind == CV_STRING) return cel_errorf(ev, "no such key: %.*s", (int)k.len, k.s);
    ks_strbuf b;
    ks_sb_init(&b);
    if (k.kind == CV_UINT) ks_sb_printf(&b, "%llu", (unsigned long long)k.u);
    else cel_val_print(&b, k);
    cel_val r = cel_errorf(ev, "no such key: %s", ks_sb_str(&b));
    ks_sb_free(&b);
    return r;
}

static bool key_eq(cel_eval *ev, cel_val a, cel_val b) {
    cel_val r = cel_equal(ev, a, b);
    return r.kind == CV_BOOL && r.b;
}

cel_val cel_index(cel_eval *ev, cel_val c, cel_val key) {
    if (c.kind == CV_ERROR) return c;
    if (key.kind == CV_ERROR) return key;
    switch (c.kind) {
    case CV_LIST: {
        int64_t i;
        if (key.kind == CV_INT) {
            i = key.i;
        } else if (key.kind == CV_UINT && key.u <= INT64_MAX) {
            i = (int64_t)key.u;
        } else if (key.kind == CV_DOUBLE && key.d == trunc(key.d) && fabs(key.d) < 9e18) {
            i = (int64_t)key.d;
        } else if (key.kind == CV_UINT || key.kind == CV_DOUBLE) {
            ks_strbuf b;
            ks_sb_init(&b);
            if (key.kind == CV_UINT) ks_sb_printf(&b, "%llu", (unsigned long long)key.u);
            else cel_val_print(&b, key);
            cel_val r = cel_errorf(ev, "unsupported index value %s in list", ks_sb_str(&b));
            ks_sb_free(&b);
            return r;
        } else {
            return cel_errorf(ev, "unsupported index type '%s' in list", cel_val_type_name(key));
        }
        if (i < 0 || i >= (int64_t)c.list->n) return cel_errorf(ev, "index out of bounds: %lld", (long long)i);
        return c.list->v[i];
    }
    case CV_MAP:
        for (uint32_t i = 0; i < c.map->n; i++)
            if (key_eq(ev, c.map->k[i], key)) return c.map->v[i];
        return no_such_key(ev, key);
    case CV_DEVMAP: {
        bool found;
        cel_val v = cel_devmap_get(ev, c, key, &found);
        return found ? v : no_such_key(ev, key);
    }
    default: return cel_no_overload();
    }
}

cel_val cel_contains(cel_eval *ev, cel_val c, cel_val key) {
    if (c.kind == CV_ERROR) return c;
    if (key.kind == CV_ERROR) return key;
    switch (c.kind) {
    case CV_LIST:
        add_cost(ev, c.list->n);
        for (uint32_t i = 0; i < c.list->n; i++) {
            cel_val r = cel_equal(ev, c.list->v[i], key);
            if (r.kind == CV_BOOL && r.b) return r;
        }
        return cel_bool(false);
    case CV_MAP:
        for (uint32_t i = 0; i < c.map->n; i++)
            if (key_eq(ev, c.map->k[i], key)) return cel_bool(true);
        return cel_bool(false);
    case CV_DEVMAP: {
        if (key.kind != CV_STRING) return cel_bool(false);
        if (c.sub == DM_ATTRS || c.sub == DM_CAPS) {
            const ks_cel_device *d = c.dm.dev;
            bool attrs = c.sub == DM_ATTRS;
            uint32_t n = attrs ? d->nattrs : d->ncaps;
            for (uint32_t i = 0; i < n; i++)
                if (str_eq(attrs ? d->attrs[i].domain : d->caps[i].domain, key.s, key.len)) return cel_bool(true);
            return cel_bool(false);
        }
        bool found;
        cel_devmap_get(ev, c, key, &found);
        return cel_bool(found);
    }
    default: return cel_no_overload();
    }
}

/* ---- evaluation -------------------------------------------------------------------- */

static cel_val select_field(cel_eval *ev, cel_val v, const char *field, bool test_only) {
    if (v.kind == CV_ERROR) return v;
    cel_val key = cel_str(field, strlen(field));
    switch (v.kind) {
    case CV_DEVICE:
        if (strcmp(field, "driver") == 0)
            return test_only ? cel_bool(true) : cel_str(v.dev->driver, strlen(v.dev->driver));
        if (strcmp(field, "attributes") == 0 || strcmp(field, "capacity") == 0) {
            if (test_only) return cel_bool(true);
            cel_val m = {.kind = CV_DEVMAP, .sub = field[0] == 'a' ? DM_ATTRS : DM_CAPS};
            m.dm.dev = v.dev;
            return m;
        }
        if (strcmp(field, "allowMultipleAllocations") == 0)
            return test_only ? cel_bool(true) : cel_bool(v.dev->allow_multiple_allocations);
        return cel_errorf(ev, "no such key: %s", field);
    case CV_MAP:
    case CV_DEVMAP:
        if (test_only) {
            if (v.kind == CV_DEVMAP && (v.sub == DM_ATTRS || v.sub == DM_CAPS)) return cel_bool(true);
            return cel_contains(ev, v, key);
        }
        return cel_index(ev, v, key);
    default:
        if (test_only) return cel_errorf(ev, "invalid type for field selection.");
        return cel_no_overload();
    }
}

static cel_val opt_select(cel_eval *ev, cel_val v, const cel_val *field) {
    if (v.kind == CV_ERROR) return v;
    if (v.kind == CV_OPTIONAL) {
        if (!v.opt) return v;
        v = *v.opt;
    }
    cel_val has = select_field(ev, v, field->s, true);
    if (has.kind == CV_ERROR) return has;
    cel_val o = {.kind = CV_OPTIONAL};
    if (!has.b) return o;
    cel_val x = select_field(ev, v, field->s, false);
    if (x.kind == CV_ERROR) return x;
    cel_val *c = ks_arena_alloc_uninit(ev->scratch, sizeof(cel_val));
    *c = x;
    o.opt = c;
    return o;
}

static bool kind_matches(const cel_type *t, cel_val v) {
    if (!t) return true;
    switch (t->kind) {
    case CT_DYN:
    case CT_PARAM: return true;
    case CT_NULL: return v.kind == CV_NULL;
    case CT_BOOL: return v.kind == CV_BOOL;
    case CT_INT: return v.kind == CV_INT;
    case CT_UINT: return v.kind == CV_UINT;
    case CT_DOUBLE: return v.kind == CV_DOUBLE;
    case CT_STRING: return v.kind == CV_STRING;
    case CT_BYTES: return v.kind == CV_BYTES;
    case CT_LIST: return v.kind == CV_LIST;
    case CT_MAP: return v.kind == CV_MAP || v.kind == CV_DEVMAP;
    case CT_TYPE: return v.kind == CV_TYPE;
    case CT_OPTIONAL: return v.kind == CV_OPTIONAL;
    case CT_QUANTITY: return v.kind == CV_QUANTITY;
    case CT_SEMVER: return v.kind == CV_SEMVER;
    case CT_DEVICE: return v.kind == CV_DEVICE;
    case CT_IP: return v.kind == CV_IP;
    case CT_CIDR: return v.kind == CV_CIDR;
    case CT_URL: return v.kind == CV_URL;
    case CT_FORMAT: return v.kind == CV_FORMAT;
    case CT_TIMESTAMP: return v.kind == CV_TIMESTAMP;
    case CT_DURATION: return v.kind == CV_DURATION;
    default: return false;
    }
}

/* cel-go's per-call cost (interpreter/runtimecost.go costCall). */
static uint64_t call_cost(const char *fn, const cel_val *a, uint32_t n) {
    if (n >= 1 && (strcmp(fn, "startsWith") == 0 || strcmp(fn, "endsWith") == 0 || strcmp(fn, "bytes") == 0))
        return (uint64_t)ceil((double)cel_val_size(a[0]) * 0.1);
    if (n == 2 && (strcmp(fn, "_==_") == 0 || strcmp(fn, "_!=_") == 0 ||
                   ((a[0].kind == CV_STRING || a[0].kind == CV_BYTES) &&
                    (strcmp(fn, "_<_") == 0 || strcmp(fn, "_<=_") == 0 || strcmp(fn, "_>_") == 0 ||
                     strcmp(fn, "_>=_") == 0)))) {
        uint64_t x = cel_val_size(a[0]), y = cel_val_size(a[1]);
        return (uint64_t)ceil((double)(x < y ? x : y) * 0.1);
    }
    if (n == 2 && strcmp(fn, "_+_") == 0 && (a[0].kind == CV_STRING || a[0].kind == CV_BYTES))
        return (uint64_t)ceil((double)(cel_val_size(a[0]) + cel_val_size(a[1])) * 0.1);
    if (n == 2 && strcmp(fn, "matches") == 0)
        return (uint64_t)ceil((1.0 + (double)cel_val_size(a[0])) * 0.1) *
               (uint64_t)ceil((double)cel_val_size(a[1]) * 0.25);
    if (n == 2 && strcmp(fn, "contains") == 0)
        return (uint64_t)ceil((double)cel_val_size(a[0]) * 0.1) * (uint64_t)ceil((double)cel_val_size(a[1]) * 0.1);
    /* Kubernetes' CostEstimator for its IP and CIDR libraries */
    if (n >= 1 && (strcmp(fn, "cidr") == 0 || strcmp(fn, "isIP") == 0 || strcmp(fn, "isCIDR") == 0 ||
                   (strcmp(fn, "ip") == 0 && a[0].kind == CV_STRING)))
        return (uint64_t)ceil((double)cel_val_size(a[0]) * 0.1);
    /* validate: the string against the longest regex the format may use */
    if (n == 2 && a[0].kind == CV_FORMAT && strcmp(fn, "validate") == 0)
        return (uint64_t)ceil((1.0 + (double)cel_val_size(a[1])) * 0.1) *
               (uint64_t)ceil((double)cel_format_regex_size(a[0].sub) * 0.25);
    if (n >= 1 && strcmp(fn, "url") == 0) return (uint64_t)ceil((double)cel_val_size(a[0]) * 0.1);
    if (n >= 1 && strcmp(fn, "ip.isCanonical") == 0) return (uint64_t)ceil((double)cel_val_size(a[0]) * 2 * 0.1);
    if (n == 2 && a[0].kind == CV_CIDR && (strcmp(fn, "containsIP") == 0 || strcmp(fn, "containsCIDR") == 0)) {
        uint64_t cs = cel_val_size(a[0]);
        uint64_t c = (uint64_t)ceil((double)(cs + cs) * 0.1);
        if (strcmp(fn, "containsCIDR") == 0) c += (uint64_t)ceil((double)cs * 0.1) + 1;
        if (a[1].kind == CV_STRING) c += (uint64_t)ceil((double)cel_val_size(a[1]) * 0.1);
        return c;
    }
    if (n >= 1 && a[0].kind == CV_LIST &&
        (strcmp(fn, "sum") == 0 || strcmp(fn, "min") == 0 || strcmp(fn, "max") == 0 || strcmp(fn, "isSorted") == 0 ||
         strcmp(fn, "indexOf") == 0 || strcmp(fn, "lastIndexOf") == 0 || strcmp(fn, "join") == 0 ||
         strcmp(fn, "sort") == 0 || strcmp(fn, "distinct") == 0))
        return cel_val_size(a[0]) + 1;
    return 1;
}

static cel_val eval_call(cel_eval *ev, const cel_expr *e) {
    const char *fn = e->call.fn;
    /* the non-strict operators */
    if (!e->call.target && (fn[0] == '_' || fn[0] == '@')) {
        if (strcmp(fn, OP_AND) == 0 || strcmp(fn, OP_OR) == 0) {
            bool is_and = fn[2] == '&';
            cel_val l = cel_eval_expr(ev, e->call.args[0]);
            if (l.kind == CV_BOOL && l.b != is_and) return l;
            cel_val r = cel_eval_expr(ev, e->call.args[1]);
            if (r.kind == CV_BOOL && r.b != is_and) return r;
            if (l.kind == CV_BOOL && r.kind == CV_BOOL) return l;
            if (l.kind == CV_ERROR) return l;
            if (r.kind == CV_ERROR) return r;
            return cel_no_overload();
        }
        if (strcmp(fn, OP_COND) == 0) {
            cel_val c = cel_eval_expr(ev, e->call.args[0]);
            if (c.kind == CV_ERROR) return c;
            if (c.kind != CV_BOOL) return cel_no_overload();
            return cel_eval_expr(ev, e->call.args[c.b ? 1 : 2]);
        }
        if (strcmp(fn, OP_NOT_STRICTLY_FALSE) == 0) {
            cel_val v = cel_eval_expr(ev, e->call.args[0]);
            add_cost(ev, 1);
            return cel_bool(!(v.kind == CV_BOOL && !v.b));
        }
        if (strcmp(fn, "@msg") == 0) return cel_time_make_message(ev, e);
        if (strcmp(fn, OP_OPT_SELECT) == 0) {
            cel_val v = cel_eval_expr(ev, e->call.args[0]);
            add_cost(ev, 1);
            return opt_select(ev, v, &e->call.args[1]->lit);
        }
    }
    cel_val args[8];
    uint32_t n = 0;
    if (e->call.target) args[n++] = cel_eval_expr(ev, e->call.target);
    for (uint32_t i = 0; i < e->call.nargs && n < 8; i++) args[n++] = cel_eval_expr(ev, e->call.args[i]);
    for (uint32_t i = 0; i < n; i++)
        if (args[i].kind == CV_ERROR) return args[i];
    if (ev->cancelled) return cel_err_static(COST_LIMIT_MSG);
    add_cost(ev, call_cost(fn, args, n));
    for (uint32_t k = 0; k < e->call.novl; k++) {
        const cel_overload *o = e->call.ovl[k];
        bool ok = true;
        for (uint32_t i = 0; i < n && ok; i++) ok = kind_matches(o->params[i], args[i]);
        if (ok) return o->impl(ev, args, n);
    }
    /* Library functions check their arguments' runtime types (cel-go's
     * type guards) and name them; operators answer through the values'
     * traits, without details. */
    if (fn[0] != '_' && fn[0] != '@' && fn[1] != '_') {
        ks_strbuf b;
        ks_sb_init(&b);
        for (uint32_t i = 0; i < n; i++) {
            if (i) ks_sb_puts(&b, ", ");
            ks_sb_puts(&b, cel_val_type_name(args[i]));
        }
        cel_val r = cel_errorf(ev, "no such overload: %s(%s)", fn, ks_sb_str(&b));
        ks_sb_free(&b);
        return r;
    }
    return cel_no_overload();
}

static cel_val eval_comp(cel_eval *ev, const cel_expr *e) {
    cel_val range = cel_eval_expr(ev, e->comp.range);
    if (range.kind == CV_ERROR) return range;
    const cel_list *items;
    cel_list map_keys;
    bool is_map = false;
    cel_val mapv = range;
    if (range.kind == CV_LIST) {
        items = range.list;
    } else if (range.kind == CV_MAP) {
        map_keys = (cel_list){range.map->n, range.map->k};
        items = &map_keys;
        is_map = true;
    } else if (range.kind == CV_DEVMAP) {
        cel_val keys = cel_devmap_keys(ev, range);
        items = keys.list;
        is_map = true;
    } else {
        return cel_errorf(ev, "cannot range over %s", cel_val_type_name(range));
    }
    cel_val accu = cel_eval_expr(ev, e->comp.init);
    ev->slots[e->comp.accu_slot] = accu;
    for (uint32_t i = 0; i < items->n; i++) {
        if (ev->cancelled) return cel_err_static(COST_LIMIT_MSG);
        if (e->comp.iter2_slot >= 0) {
            if (is_map) {
                ev->slots[e->comp.iter_slot] = items->v[i];
                ev->slots[e->comp.iter2_slot] = cel_index(ev, mapv, items->v[i]);
            } else {
                ev->slots[e->comp.iter_slot] = cel_int(i);
                ev->slots[e->comp.iter2_slot] = items->v[i];
            }
        } else {
            ev->slots[e->comp.iter_slot] = items->v[i];
        }
        cel_val c = cel_eval_expr(ev, e->comp.cond);
        if (c.kind == CV_BOOL && !c.b) break;
        ev->slots[e->comp.accu_slot] = cel_eval_expr(ev, e->comp.step);
    }
    return cel_eval_expr(ev, e->comp.result);
}

cel_val cel_eval_expr(cel_eval *ev, const cel_expr *e) {
    if (ev->cancelled) return cel_err_static(COST_LIMIT_MSG);
    switch (e->kind) {
    case CE_LIT: return e->lit;
    case CE_IDENT:
        add_cost(ev, 1);
        if (e->ident.slot >= 0) return ev->slots[e->ident.slot];
        if (ev->dev) return (cel_val){.kind = CV_DEVICE, .dev = ev->dev};
        return cel_errorf(ev, "no such attribute(s): %s", e->ident.name);
    case CE_SELECT: {
        cel_val v = cel_eval_expr(ev, e->sel.operand);
        add_cost(ev, e->test_only ? 0 : 1);
        return select_field(ev, v, e->sel.field, e->test_only);
    }
    case CE_CALL: return eval_call(ev, e);
    case CE_LIST: {
        add_cost(ev, 10);
        cel_val *v = ks_arena_alloc_uninit(ev->scratch, (e->list.n ? e->list.n : 1) * sizeof(cel_val));
        uint32_t k = 0;
        for (uint32_t i = 0; i < e->list.n; i++) {
            cel_val x = cel_eval_expr(ev, e->list.elems[i]);
            if (x.kind == CV_ERROR) return x;
            if (e->list.optional && e->list.optional[i]) {
                if (x.kind != CV_OPTIONAL)
                    return cel_errorf(ev, "cannot initialize optional list element from non-optional value");
                if (!x.opt) continue;
                x = *x.opt;
            }
            v[k++] = x;
        }
        cel_list *l = ks_arena_alloc_uninit(ev->scratch, sizeof(*l));
        l->n = k;
        l->v = v;
        return (cel_val){.kind = CV_LIST, .list = l};
    }
    case CE_MAP: {
        add_cost(ev, 30);
        uint32_t n = e->map.n;
        cel_val *ks = ks_arena_alloc_uninit(ev->scratch, (n ? n : 1) * sizeof(cel_val));
        cel_val *vs = ks_arena_alloc_uninit(ev->scratch, (n ? n : 1) * sizeof(cel_val));
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
            cel_val key = cel_eval_expr(ev, e->map.keys[i]);
            if (key.kind == CV_ERROR) return key;
            cel_val val = cel_eval_expr(ev, e->map.vals[i]);
            if (val.kind == CV_ERROR) return val;
            if (e->map.optional[i]) {
                if (val.kind != CV_OPTIONAL) return cel_errorf(ev, "cannot initialize optional entry from non-optional value");
                if (!val.opt) continue;
                val = *val.opt;
            }
            /* a repeated key keeps the last value, as a Go map does */
            uint32_t at = k;
            for (uint32_t j = 0; j < k; j++)
                if (key_eq(ev, ks[j], key)) at = j;
            ks[at] = key;
            vs[at] = val;
            if (at == k) k++;
        }
        cel_map *m = ks_arena_alloc_uninit(ev->scratch, sizeof(*m));
        m->n = k;
        m->k = ks;
        m->v = vs;
        return (cel_val){.kind = CV_MAP, .map = m};
    }
    case CE_COMP: return eval_comp(ev, e);
    default: return cel_no_overload();
    }
}

/* ---- compile ------------------------------------------------------------------------ */

/* What cel-go's OptOptimize does when it plans a program: a type
 * conversion of a constant is computed once, and one that fails makes
 * the program fail to instantiate. */
static bool is_conversion(const char *fn) {
    static const char *const names[] = {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(fn, names[i]) == 0) return true;
    return false;
}

static bool fold(ks_cel_program *p, cel_expr *e, char **err) {
    switch (e->kind) {
    case CE_LIT:
        /* the type names timestamp and duration (check.c) */
        if (e->lit.kind == CV_TYPE && e->lit.len) {
            *err = ks_xasprintf("reference to undefined type: %s", e->lit.sub == CT_TIMESTAMP ? "timestamp" : "duration");
            return false;
        }
        return true;
    case CE_SELECT: return fold(p, e->sel.operand, err);
    case CE_LIST:
        for (uint32_t i = 0; i < e->list.n; i++)
            if (!fold(p, e->list.elems[i], err)) return false;
        return true;
    case CE_MAP:
        for (uint32_t i = 0; i < e->map.n; i++)
            if (!fold(p, e->map.keys[i], err) || !fold(p, e->map.vals[i], err)) return false;
        return true;
    case CE_COMP:
        return fold(p, e->comp.range, err) && fold(p, e->comp.init, err) && fold(p, e->comp.cond, err) &&
               fold(p, e->comp.step, err) && fold(p, e->comp.result, err);
    case CE_CALL:
        if (e->call.target && !fold(p, e->call.target, err)) return false;
        for (uint32_t i = 0; i < e->call.nargs; i++)
            if (!fold(p, e->call.args[i], err)) return false;
        /* Kubernetes' find/findAll compile a constant pattern when the
         * program is planned (their RegexOptimization) */
        if (e->call.target && e->call.nargs >= 1 && e->call.args[0]->kind == CE_LIT &&
            e->call.args[0]->lit.kind == CV_STRING &&
            (strcmp(e->call.fn, "find") == 0 || strcmp(e->call.fn, "findAll") == 0)) {
            char rerr[512];
            cel_re *re = cel_re_compile(e->call.args[0]->lit.s, e->call.args[0]->lit.len, rerr, sizeof rerr);
            if (!re) {
                *err = ks_xstrdup(rerr);
                return false;
            }
            cel_re_free(re);
        }
        if (!e->call.target && e->call.nargs == 1 && e->call.args[0]->kind == CE_LIT && is_conversion(e->call.fn)) {
            cel_eval ev = {.scratch = p->arena, .prog = p};
            cel_val v = eval_call(&ev, e);
            if (v.kind == CV_ERROR) {
                *err = ks_xstrdup(v.s);
                return false;
            }
            e->kind = CE_LIT;
            e->lit = v;
        }
        return true;
    default: return true;
    }
}

static ks_cel_program *compile(const char *expr, const ks_cel_options *opts, bool want_bool, char **err) {
    ks_cel_program *p = ks_xcalloc(1, sizeof(*p));
    p->arena = ks_arena_new(4096);
    p->src = ks_arena_strdup(p->arena, expr);
    if (opts) p->opts = *opts;
    cel_errors errs = {.src = p->src};
    p->root = cel_parse(p->arena, p->src, &errs);
    if (p->root) cel_check(p, &errs);
    if (errs.n) {
        char *msg = cel_errors_string(&errs);
        if (err) *err = ks_xasprintf("compilation failed: %s", msg);
        free(msg);
        cel_errors_free(&errs);
        ks_cel_program_free(p);
        return NULL;
    }
    cel_errors_free(&errs);
    /* the result type first, then the program (upstream compiles, checks
     * the type, then plans) */
    const cel_type *t = p->root->type;
    if (want_bool && t && t->kind != CT_BOOL && t->kind != CT_ANY) {
        ks_strbuf b;
        ks_sb_init(&b);
        cel_type_print_str(&b, t);
        if (err) *err = ks_xasprintf("must evaluate to bool or the unknown type, not %s", ks_sb_str(&b));
        ks_sb_free(&b);
        ks_cel_program_free(p);
        return NULL;
    }
    char *ferr = NULL;
    if (!fold(p, p->root, &ferr)) {
        if (err) *err = ks_xasprintf("program instantiation failed: %s", ferr);
        free(ferr);
        ks_cel_program_free(p);
        return NULL;
    }
    return p;
}

ks_cel_program *ks_cel_compile(const char *expr, const ks_cel_options *opts, char **err) {
    return compile(expr, opts, true, err);
}

ks_cel_program *ks_cel_compile_any(const char *expr, const ks_cel_options *opts, char **err) {
    return compile(expr, opts, false, err);
}

void ks_cel_program_free(ks_cel_program *p) {
    if (!p) return;
    ks_arena_free(p->arena);
    free(p);
}

const char *ks_cel_program_source(const ks_cel_program *p) { return p->src; }

/* ---- evaluation entry points -------------------------------------------------------- */

ks_cel_ctx *ks_cel_ctx_new(void) {
    ks_cel_ctx *c = ks_xcalloc(1, sizeof(*c));
    c->scratch = ks_arena_new(16384);
    ks_sb_init(&c->msg);
    return c;
}

void ks_cel_ctx_free(ks_cel_ctx *c) {
    if (!c) return;
    ks_arena_free(c->scratch);
    ks_sb_free(&c->msg);
    free(c);
}

uint64_t ks_cel_ctx_cost(const ks_cel_ctx *ctx) { return ctx->ev.cost; }

static cel_val run(const ks_cel_program *p, const ks_cel_device *dev, uint64_t limit, ks_cel_ctx *ctx) {
    ks_arena_reset(ctx->scratch);
    cel_eval *ev = &ctx->ev;
    memset(ev, 0, sizeof(*ev));
    ev->scratch = ctx->scratch;
    ev->limit = limit;
    ev->dev = dev;
    ev->prog = p;
    ev->nslots = p->nslots;
    ev->slots = ks_arena_calloc(ctx->scratch, p->nslots ? (size_t)p->nslots : 1, sizeof(cel_val));
    cel_val r = cel_eval_expr(ev, p->root);
    if (ev->cancelled) r = cel_err_static(COST_LIMIT_MSG);
    return r;
}

int ks_cel_device_matches(const ks_cel_program *p, const ks_cel_device *dev, uint64_t cost_limit, ks_cel_ctx *ctx,
                          const char **err) {
    /* Upstream converts every attribute before evaluating: a version that
     * does not parse fails the device whatever the expression reads. */
    ks_sb_reset(&ctx->msg);
    for (uint32_t i = 0; i < dev->nattrs; i++) {
        const ks_cel_attr *a = &dev->attrs[i];
        if (a->kind == KS_CEL_ATTR_NONE) {
            ks_sb_printf(&ctx->msg, "attribute %s: unsupported attribute value", a->name);
            *err = ks_sb_str(&ctx->msg);
            return -1;
        }
        if (a->kind == KS_CEL_ATTR_VERSION) {
            ks_semver v;
            char e[256];
            if (!ks_semver_parse(a->s, strlen(a->s), &v, e, sizeof e)) {
                ks_sb_printf(&ctx->msg, "attribute %s: parse semantic version: %s", a->name, e);
                *err = ks_sb_str(&ctx->msg);
                return -1;
            }
        }
    }
    cel_val r = run(p, dev, cost_limit, ctx);
    if (r.kind == CV_BOOL) return r.b ? 1 : 0;
    if (r.kind == CV_ERROR) {
        ks_sb_puts(&ctx->msg, r.s);
    } else {
        /* the texts of cel-go's ConvertToNative for each kind */
        const char *why;
        switch (r.kind) {
        case CV_STRING: why = "unsupported native conversion from string to 'bool'"; break;
        case CV_INT: why = "unsupported type conversion from 'int' to bool"; break;
        case CV_UINT: why = "unsupported type conversion from 'uint' to bool"; break;
        case CV_SEMVER: why = "type conversion error from 'Semver' to 'bool'"; break;
        case CV_QUANTITY: why = "type conversion error from 'Quantity' to 'bool'"; break;
        default: why = "type conversion error"; break;
        }
        ks_sb_printf(&ctx->msg, "CEL result of type %s could not be converted to bool: %s", cel_val_type_name(r), why);
    }
    *err = ks_sb_str(&ctx->msg);
    return -1;
}

char *ks_cel_eval_print(const ks_cel_program *p, const ks_cel_device *dev, uint64_t cost_limit, ks_cel_ctx *ctx,
                        char **err) {
    cel_val r = run(p, dev, cost_limit, ctx);
    if (r.kind == CV_ERROR) {
        if (err) *err = ks_xstrdup(r.s);
        return NULL;
    }
    ks_strbuf b;
    ks_sb_init(&b);
    cel_val_print(&b, r);
    return ks_sb_take(&b);
}
