/* The CEL type checker: infers a type for every expression, resolves
 * variables (the `device` variable, comprehension variables) and the
 * overloads a call may use, and reports what cel-go's checker reports
 * for the same mistakes (undeclared references, undefined fields, calls
 * with no matching overload, non-homogeneous literals) in its words.
 * Dynamic values (attribute values are `dyn`) are accepted wherever a
 * typed value could be; the interpreter then checks kinds at run time. */
#include "cel/cel_internal.h"
#include "cel/time.h"

#include <string.h>

const cel_type CEL_T_DYN = {CT_DYN, 0, NULL, NULL};
const cel_type CEL_T_ERROR = {CT_ERROR, 0, NULL, NULL};
const cel_type CEL_T_NULL = {CT_NULL, 0, NULL, NULL};
const cel_type CEL_T_BOOL = {CT_BOOL, 0, NULL, NULL};
const cel_type CEL_T_INT = {CT_INT, 0, NULL, NULL};
const cel_type CEL_T_UINT = {CT_UINT, 0, NULL, NULL};
const cel_type CEL_T_DOUBLE = {CT_DOUBLE, 0, NULL, NULL};
const cel_type CEL_T_STRING = {CT_STRING, 0, NULL, NULL};
const cel_type CEL_T_BYTES = {CT_BYTES, 0, NULL, NULL};
const cel_type CEL_T_QUANTITY = {CT_QUANTITY, 0, NULL, NULL};
const cel_type CEL_T_SEMVER = {CT_SEMVER, 0, NULL, NULL};
const cel_type CEL_T_DEVICE = {CT_DEVICE, 0, NULL, NULL};
const cel_type CEL_T_LIST_DYN = {CT_LIST, 0, &CEL_T_DYN, NULL};
const cel_type CEL_T_MAP_DYN = {CT_MAP, 0, &CEL_T_DYN, &CEL_T_DYN};
const cel_type CEL_T_TYPE_ANY = {CT_TYPE, 0, NULL, NULL};

/* device.attributes and device.capacity */
static const cel_type T_ANY = {CT_ANY, 0, NULL, NULL};
static const cel_type T_ATTR_INNER = {CT_MAP, 0, &CEL_T_STRING, &T_ANY};
static const cel_type T_ATTRS = {CT_MAP, 0, &CEL_T_STRING, &T_ATTR_INNER};
static const cel_type T_CAP_INNER = {CT_MAP, 0, &CEL_T_STRING, &CEL_T_QUANTITY};
static const cel_type T_CAPS = {CT_MAP, 0, &CEL_T_STRING, &T_CAP_INNER};

typedef struct scope_var {
    const char *name;
    const cel_type *type;
    int slot;
} scope_var;

typedef struct checker {
    ks_cel_program *p;
    cel_errors *errs;
    int in_format; /* inside a call of a function named format */
    scope_var vars[64];
    int nvars;
    int depth;
} checker;

static const cel_type *mk(checker *c, int kind, const cel_type *p1, const cel_type *p2) {
    cel_type *t = ks_arena_alloc(c->p->arena, sizeof(*t));
    t->kind = (uint8_t)kind;
    t->p1 = p1;
    t->p2 = p2;
    return t;
}

static bool is_dyn(const cel_type *t) { return !t || t->kind == CT_DYN || t->kind == CT_ERROR || t->kind == CT_ANY; }

static char *type_str(checker *c, const cel_type *t) {
    ks_strbuf b;
    ks_sb_init(&b);
    cel_type_print(&b, t);
    char *s = ks_arena_strdup(c->p->arena, ks_sb_str(&b));
    ks_sb_free(&b);
    return s;
}

/* ---- unification ------------------------------------------------------------ */

typedef struct binding {
    const cel_type *t[4];
} binding;

static bool unify(const cel_type *param, const cel_type *arg, binding *b);

/* Two types that could describe the same value (dyn matches anything). */
static bool compatible(const cel_type *a, const cel_type *b) {
    if (is_dyn(a) || is_dyn(b)) return true;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case CT_LIST:
    case CT_OPTIONAL: return compatible(a->p1, b->p1);
    case CT_MAP: return compatible(a->p1, b->p1) && compatible(a->p2, b->p2);
    case CT_TYPE: return true;
    default: return true;
    }
}

static bool unify(const cel_type *param, const cel_type *arg, binding *b) {
    if (!param) return true;
    if (param->kind == CT_PARAM) {
        const cel_type *cur = b->t[param->param];
        if (!cur || is_dyn(cur)) {
            if (!cur || !is_dyn(arg)) b->t[param->param] = arg ? arg : &CEL_T_DYN;
            return true;
        }
        return compatible(cur, arg);
    }
    if (param->kind == CT_DYN) return true;
    if (is_dyn(arg)) {
        /* bind the parameters inside to dyn */
        if (param->p1) unify(param->p1, &CEL_T_DYN, b);
        if (param->p2) unify(param->p2, &CEL_T_DYN, b);
        return true;
    }
    if (param->kind != arg->kind) return false;
    switch (param->kind) {
    case CT_AUTHZ: return param->param == arg->param;
    case CT_LIST:
    case CT_OPTIONAL: return unify(param->p1, arg->p1, b);
    case CT_MAP: return unify(param->p1, arg->p1, b) && unify(param->p2, arg->p2, b);
    case CT_TYPE: return unify(param->p1, arg->p1 ? arg->p1 : &CEL_T_DYN, b);
    default: return true;
    }
}

static const cel_type *subst(checker *c, const cel_type *t, const binding *b) {
    if (!t) return &CEL_T_DYN;
    switch (t->kind) {
    case CT_PARAM: return b->t[t->param] ? b->t[t->param] : &CEL_T_DYN;
    case CT_LIST:
    case CT_OPTIONAL:
    case CT_TYPE: return mk(c, t->kind, subst(c, t->p1, b), NULL);
    case CT_MAP: return mk(c, CT_MAP, subst(c, t->p1, b), subst(c, t->p2, b));
    default: return t;
    }
}

static bool same_type(const cel_type *a, const cel_type *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case CT_LIST:
    case CT_OPTIONAL:
    case CT_TYPE: return same_type(a->p1, b->p1);
    case CT_MAP: return same_type(a->p1, b->p1) && same_type(a->p2, b->p2);
    case CT_AUTHZ: return a->param == b->param;
    default: return true;
    }
}

/* ---- expressions ------------------------------------------------------------------ */

static const cel_type *check(checker *c, cel_expr *e);

static const scope_var *lookup_var(checker *c, const char *name) {
    for (int i = c->nvars - 1; i >= 0; i--)
        if (strcmp(c->vars[i].name, name) == 0) return &c->vars[i];
    return NULL;
}

/* The type denoted by a type name used as a value (int, list, ...). */
static int type_ident(const char *name) {
    static const struct {
        const char *n;
        int k;
    } names[] = {{"int", CT_INT},       {"uint", CT_UINT},     {"double", CT_DOUBLE}, {"string", CT_STRING},
                 {"bytes", CT_BYTES},   {"bool", CT_BOOL},     {"null_type", CT_NULL}, {"list", CT_LIST},
                 {"map", CT_MAP},       {"type", CT_TYPE},     {"dyn", CT_DYN},
                 {"optional_type", CT_OPTIONAL}, {NULL, 0}};
    for (int i = 0; names[i].n; i++)
        if (strcmp(names[i].n, name) == 0) return names[i].k;
    return -1;
}

static const cel_type *check_ident(checker *c, cel_expr *e) {
    const scope_var *v = lookup_var(c, e->ident.name);
    if (v) {
        e->ident.slot = v->slot;
        return v->type;
    }
    if (!c->p->opts.no_device && strcmp(e->ident.name, "device") == 0) return &CEL_T_DEVICE;
    int tk = type_ident(e->ident.name);
    if (tk >= 0) {
        /* a type value: evaluate as a literal */
        e->kind = CE_LIT;
        e->lit = (cel_val){.kind = CV_TYPE, .sub = (uint8_t)tk};
        return mk(c, CT_TYPE, tk == CT_DYN ? &CEL_T_DYN : mk(c, tk, NULL, NULL), NULL);
    }
    /* DRA's environment declares the names timestamp and duration as
     * types its runtime does not know: a program naming them fails to
     * instantiate (len marks the literal for eval.c's fold) */
    tk = cel_time_message_type(e->ident.name);
    if (tk >= 0) {
        e->kind = CE_LIT;
        e->lit = (cel_val){.kind = CV_TYPE, .sub = (uint8_t)tk, .len = 1};
        return mk(c, CT_TYPE, mk(c, tk, NULL, NULL), NULL);
    }
    cel_error_at(c->errs, e->pos, "undeclared reference to '%s' (in container '')", e->ident.name);
    return &CEL_T_ERROR;
}

/* The type of operand.field (or NULL after reporting an error). */
static const cel_type *field_type(checker *c, cel_expr *e, const cel_type *t, const char *field) {
    if (is_dyn(t)) return &CEL_T_DYN;
    if (t->kind == CT_DEVICE) {
        if (strcmp(field, "driver") == 0) return &CEL_T_STRING;
        if (strcmp(field, "attributes") == 0) return &T_ATTRS;
        if (strcmp(field, "capacity") == 0) return &T_CAPS;
        /* Stored expressions see the newest device type whatever the
         * gates say (upstream's StoredExpressions environment). */
        if (strcmp(field, "allowMultipleAllocations") == 0) return &CEL_T_BOOL;
        cel_error_at(c->errs, e->pos, "undefined field '%s'", field);
        return NULL;
    }
    if (t->kind == CT_MAP) return t->p2 ? t->p2 : &CEL_T_DYN;
    cel_error_at(c->errs, e->pos, "type '%s' does not support field selection", type_str(c, t));
    return NULL;
}

static bool qualified_name(const cel_expr *e, ks_strbuf *b);

static const cel_type *check_select(checker *c, cel_expr *e) {
    /* google.protobuf.Timestamp / Duration: type values (time.c) */
    ks_strbuf q;
    ks_sb_init(&q);
    int tk = !e->test_only && qualified_name(e, &q) && !lookup_var(c, "google")
                 ? (strcmp(ks_sb_str(&q), "google.protobuf.Timestamp") == 0  ? CT_TIMESTAMP
                    : strcmp(ks_sb_str(&q), "google.protobuf.Duration") == 0 ? CT_DURATION
                                                                              : -1)
                 : -1;
    ks_sb_free(&q);
    if (tk >= 0) {
        e->kind = CE_LIT;
        e->lit = (cel_val){.kind = CV_TYPE, .sub = (uint8_t)tk};
        return mk(c, CT_TYPE, mk(c, tk, NULL, NULL), NULL);
    }
    const cel_type *ot = check(c, e->sel.operand);
    const cel_type *ft = field_type(c, e, ot, e->sel.field);
    if (!ft) return &CEL_T_ERROR;
    return e->test_only ? &CEL_T_BOOL : ft;
}

/* a.b.c as a dotted name when it is made of identifiers only. */
static bool qualified_name(const cel_expr *e, ks_strbuf *b) {
    if (e->kind == CE_IDENT) {
        ks_sb_puts(b, e->ident.name);
        return true;
    }
    if (e->kind == CE_SELECT && !e->test_only) {
        if (!qualified_name(e->sel.operand, b)) return false;
        ks_sb_putc(b, '.');
        ks_sb_puts(b, e->sel.field);
        return true;
    }
    return false;
}

static bool function_exists(const char *name) {
    size_t n;
    const cel_overload *t = cel_functions(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].fn, name) == 0) return true;
    return false;
}

static const cel_type *check_call(checker *c, cel_expr *e) {
    /* namespaced global functions: optional.of(x), sets.contains(a, b) */
    if (e->call.target) {
        ks_strbuf q;
        ks_sb_init(&q);
        if (qualified_name(e->call.target, &q)) {
            const char *root = e->call.target->kind == CE_IDENT ? e->call.target->ident.name : NULL;
            ks_sb_putc(&q, '.');
            ks_sb_puts(&q, e->call.fn);
            bool shadowed = root && lookup_var(c, root);
            if (!shadowed && function_exists(ks_sb_str(&q))) {
                e->call.fn = ks_arena_strdup(c->p->arena, ks_sb_str(&q));
                e->call.target = NULL;
            }
        }
        ks_sb_free(&q);
    }
    /* && and || want booleans, and say so about the operand */
    if (!e->call.target && (strcmp(e->call.fn, OP_AND) == 0 || strcmp(e->call.fn, OP_OR) == 0)) {
        for (uint32_t i = 0; i < 2; i++) {
            const cel_type *t = check(c, e->call.args[i]);
            if (!is_dyn(t) && t->kind != CT_BOOL)
                cel_error_at(c->errs, e->call.args[i]->pos, "expected type 'bool' but found '%s'", type_str(c, t));
        }
        return &CEL_T_BOOL;
    }
    bool member = e->call.target != NULL;
    uint32_t n = e->call.nargs + (member ? 1 : 0);
    const cel_type *at[8];
    cel_expr *ax[8];
    if (n > 8) {
        cel_error_at(c->errs, e->pos, "too many arguments");
        return &CEL_T_ERROR;
    }
    uint32_t k = 0;
    if (member) ax[k++] = e->call.target;
    for (uint32_t i = 0; i < e->call.nargs; i++) ax[k++] = e->call.args[i];
    bool arg_error = false;
    /* string.format's validator exempts literals under a format call
     * from the homogeneous literal check */
    bool fmt = strcmp(e->call.fn, "format") == 0;
    c->in_format += fmt;
    for (uint32_t i = 0; i < n; i++) {
        at[i] = check(c, ax[i]);
        if (at[i]->kind == CT_ERROR) arg_error = true;
    }
    c->in_format -= fmt;
    size_t nt;
    const cel_overload *tab = cel_functions(&nt);
    bool known = false;
    const cel_overload *match[32];
    uint32_t nm = 0;
    const cel_type *result = NULL;
    bool result_mixed = false;
    for (size_t i = 0; i < nt; i++) {
        const cel_overload *o = &tab[i];
        if (strcmp(o->fn, e->call.fn) != 0) continue;
        known = true;
        if (o->member != member || o->nargs != n) continue;
        binding b;
        memset(&b, 0, sizeof(b));
        bool ok = true;
        for (uint32_t j = 0; j < n && ok; j++) ok = unify(o->params[j], at[j], &b) && (!o->dyn_only || is_dyn(at[j]));
        if (!ok) continue;
        if (nm < 32) match[nm++] = o;
        const cel_type *r = subst(c, o->result, &b);
        if (!result) result = r;
        else if (!same_type(result, r)) result_mixed = true;
    }
    if (!known) {
        cel_error_at(c->errs, e->pos, "undeclared reference to '%s' (in container '')", e->call.fn);
        return &CEL_T_ERROR;
    }
    if (nm == 0) {
        if (arg_error) return &CEL_T_ERROR;
        ks_strbuf b;
        ks_sb_init(&b);
        uint32_t first = 0;
        if (member) {
            cel_type_print(&b, at[0]);
            ks_sb_putc(&b, '.');
            first = 1;
        }
        ks_sb_putc(&b, '(');
        for (uint32_t j = first; j < n; j++) {
            if (j > first) ks_sb_puts(&b, ", ");
            cel_type_print(&b, at[j]);
        }
        ks_sb_putc(&b, ')');
        cel_error_at(c->errs, e->pos, "found no matching overload for '%s' applied to '%s'", e->call.fn, ks_sb_str(&b));
        ks_sb_free(&b);
        return &CEL_T_ERROR;
    }
    /* ValidateRegexLiterals: a constant pattern must compile */
    if (strcmp(e->call.fn, "matches") == 0 && n == 2 && ax[1]->kind == CE_LIT && ax[1]->lit.kind == CV_STRING &&
        !cel_regex_valid(ax[1]->lit.s, ax[1]->lit.len)) {
        cel_error_at(c->errs, ax[1]->pos, "invalid matches argument");
        return &CEL_T_ERROR;
    }
    /* ValidateTimestampLiterals, ValidateDurationLiterals */
    if (!member && n == 1 && ax[0]->kind == CE_LIT && cel_time_literal_invalid(e->call.fn, ax[0]->lit)) {
        cel_error_at(c->errs, ax[0]->pos, "invalid %s argument", e->call.fn);
        return &CEL_T_ERROR;
    }
    e->call.ovl = ks_arena_calloc(c->p->arena, nm, sizeof(*e->call.ovl));
    memcpy(e->call.ovl, match, nm * sizeof(*match));
    e->call.novl = nm;
    return result_mixed ? &CEL_T_DYN : result;
}

/* A message literal (parse.c's "@msg"): google.protobuf.Timestamp and
 * Duration, the messages of this environment, with their int fields
 * seconds and nanos (time.c builds the value). */
static const cel_type *check_message(checker *c, cel_expr *e) {
    const char *name = e->call.args[0]->lit.s;
    e->call.args[0]->type = &CEL_T_STRING;
    int tk = cel_time_message_type(name);
    if (tk < 0) {
        /* cel-go looks the name up: a variable is not a type, a type
         * that is no message is not a message type */
        const char *nm = name[0] == '.' ? name + 1 : name;
        const scope_var *v = lookup_var(c, nm);
        const cel_type *vt = v                                                          ? v->type
                             : !c->p->opts.no_device && strcmp(nm, "device") == 0 ? &CEL_T_DEVICE
                                                                                     : NULL;
        int ti = type_ident(nm);
        if (vt || (ti >= 0 && ti != CT_DYN)) {
            if (vt)
                cel_error_at(c->errs, e->pos, "'%s' is not a type",
                             vt->kind == CT_LIST ? "list" : vt->kind == CT_MAP ? "map" : type_str(c, vt));
            else cel_error_at(c->errs, e->pos, "'%s' is not a message type", nm);
            for (uint32_t i = 1; i + 1 < e->call.nargs; i += 2) {
                cel_expr *f = e->call.args[i];
                f->type = &CEL_T_STRING;
                check(c, e->call.args[i + 1]);
                if (vt) cel_error_at(c->errs, f->pos, "unexpected failed resolution of '%s'", nm);
                else cel_error_at(c->errs, f->pos, "undefined field '%s'", f->lit.s + (f->lit.s[0] == '?'));
            }
        } else {
            cel_error_at(c->errs, e->pos, "undeclared reference to '%s' (in container '')", nm);
        }
        return &CEL_T_ERROR;
    }
    for (uint32_t i = 1; i + 1 < e->call.nargs; i += 2) {
        cel_expr *f = e->call.args[i];
        f->type = &CEL_T_STRING;
        bool opt = f->lit.s[0] == '?';
        const char *field = f->lit.s + opt;
        const cel_type *t = check(c, e->call.args[i + 1]);
        if (strcmp(field, "seconds") != 0 && strcmp(field, "nanos") != 0) {
            cel_error_at(c->errs, f->pos, "undefined field '%s'", field);
            continue;
        }
        if (t->kind == CT_ERROR) continue;
        if (opt && t->kind != CT_OPTIONAL && !is_dyn(t)) {
            cel_error_at(c->errs, e->call.args[i + 1]->pos, "expected type '%s' but found '%s'",
                         type_str(c, mk(c, CT_OPTIONAL, &CEL_T_INT, NULL)), type_str(c, t));
            continue;
        }
        if (opt && t->kind == CT_OPTIONAL) t = t->p1 ? t->p1 : &CEL_T_DYN;
        if (!is_dyn(t) && t->kind != CT_INT)
            cel_error_at(c->errs, f->pos, "expected type of field '%s' is 'int' but provided type is '%s'", field,
                         type_str(c, t));
    }
    return tk == CT_TIMESTAMP ? &CEL_T_TIMESTAMP : &CEL_T_DURATION;
}

/* The optional field selection a.?b, parsed as _?._(a, "b"). */
static const cel_type *check_opt_select(checker *c, cel_expr *e) {
    const cel_type *ot = check(c, e->call.args[0]);
    cel_expr *f = e->call.args[1];
    if (f->kind != CE_LIT || f->lit.kind != CV_STRING) {
        cel_error_at(c->errs, e->pos, "unsupported optional field selection");
        return &CEL_T_ERROR;
    }
    f->type = &CEL_T_STRING;
    if (ot->kind == CT_ERROR) return ot;
    if (ot->kind == CT_OPTIONAL) ot = ot->p1;
    const cel_type *ft = field_type(c, e, ot, f->lit.s);
    if (!ft) return &CEL_T_ERROR;
    return mk(c, CT_OPTIONAL, ft, NULL);
}

/* Literals must be homogeneous (HomogeneousAggregateLiterals): every
 * element of exactly the first one's type; a literal that is not has
 * type list(dyn) (map(dyn, dyn)). */
static bool homogeneous(checker *c, const cel_type **first, const cel_type *t, uint32_t pos) {
    if (t->kind == CT_ERROR) return true;
    if (!*first) {
        *first = t;
        return true;
    }
    if (same_type(*first, t)) return true;
    if (c->in_format) {
        *first = &CEL_T_DYN;
        return true;
    }
    cel_error_at(c->errs, pos, "expected type '%s' but found '%s'", type_str(c, *first), type_str(c, t));
    return false;
}

static const cel_type *check_list(checker *c, cel_expr *e) {
    const cel_type *elem = NULL;
    bool ok = true;
    for (uint32_t i = 0; i < e->list.n; i++) {
        const cel_type *t = check(c, e->list.elems[i]);
        if (e->list.optional && e->list.optional[i]) {
            /* optional.none() is optional of any type */
            if (t->kind == CT_OPTIONAL && t->p1 && t->p1->kind == CT_DYN) continue;
            if (t->kind == CT_OPTIONAL) t = t->p1;
            else if (!is_dyn(t)) {
                cel_error_at(c->errs, e->list.elems[i]->pos, "expected type '%s' but found '%s'",
                             type_str(c, mk(c, CT_OPTIONAL, t, NULL)), type_str(c, t));
                ok = false;
                continue;
            }
        }
        if (!homogeneous(c, &elem, t, e->list.elems[i]->pos)) ok = false;
    }
    return mk(c, CT_LIST, elem && ok ? elem : &CEL_T_DYN, NULL);
}

static const cel_type *check_map(checker *c, cel_expr *e) {
    const cel_type *kt = NULL, *vt = NULL;
    bool ok = true;
    for (uint32_t i = 0; i < e->map.n; i++) {
        const cel_type *k = check(c, e->map.keys[i]);
        const cel_type *v = check(c, e->map.vals[i]);
        if (e->map.optional[i] && v->kind == CT_OPTIONAL) v = v->p1;
        /* cel-go's checker takes keys of any type */
        if (!homogeneous(c, &kt, k, e->map.keys[i]->pos)) ok = false;
        if (!homogeneous(c, &vt, v, e->map.vals[i]->pos)) ok = false;
    }
    if (!ok) return &CEL_T_MAP_DYN;
    return mk(c, CT_MAP, kt ? kt : &CEL_T_DYN, vt ? vt : &CEL_T_DYN);
}

static int push_var(checker *c, const char *name, const cel_type *t) {
    if (c->nvars >= 64) return -1;
    int slot = c->p->nslots++;
    c->vars[c->nvars++] = (scope_var){name, t, slot};
    return slot;
}

static const cel_type *check_comp(checker *c, cel_expr *e) {
    const cel_type *rt = check(c, e->comp.range);
    const cel_type *it = &CEL_T_DYN, *it2 = &CEL_T_DYN;
    if (rt->kind == CT_LIST) {
        if (e->comp.iter_var2) {
            it = &CEL_T_INT;
            it2 = rt->p1;
        } else {
            it = rt->p1;
        }
    } else if (rt->kind == CT_MAP) {
        it = rt->p1;
        it2 = rt->p2;
    } else if (!is_dyn(rt) || rt->kind == CT_ANY) {
        /* cel-go ranges over lists, maps and dyn; an attribute's `any`
         * is none of them */
        cel_error_at(c->errs, e->comp.range->pos,
                     "expression of type '%s' cannot be range of a comprehension (must be list, map, or dynamic)",
                     type_str(c, rt));
    }
    const cel_type *accu = check(c, e->comp.init);
    int saved = c->nvars;
    e->comp.accu_slot = push_var(c, e->comp.accu_var, accu);
    e->comp.iter_slot = push_var(c, e->comp.iter_var, it);
    e->comp.iter2_slot = e->comp.iter_var2 ? push_var(c, e->comp.iter_var2, it2) : -1;
    if (e->comp.accu_slot < 0 || e->comp.iter_slot < 0) {
        cel_error_at(c->errs, e->pos, "comprehensions nested too deeply");
        c->nvars = saved;
        return &CEL_T_ERROR;
    }
    check(c, e->comp.cond);
    const cel_type *st = check(c, e->comp.step);
    /* an accumulator started as [] takes the type the step gives it */
    if (accu->kind == CT_LIST && is_dyn(accu->p1) && st->kind == CT_LIST && !is_dyn(st->p1)) {
        for (int i = saved; i < c->nvars; i++)
            if (c->vars[i].slot == e->comp.accu_slot) c->vars[i].type = st;
    }
    /* the result sees the accumulator, not the iteration variables */
    int keep = c->nvars;
    for (int i = saved; i < keep; i++)
        if (c->vars[i].slot != e->comp.accu_slot) c->vars[i].name = "#hidden";
    const cel_type *r = check(c, e->comp.result);
    c->nvars = saved;
    return r;
}

static const cel_type *check(checker *c, cel_expr *e) {
    if (++c->depth > 500) {
        cel_error_at(c->errs, e->pos, "expression nested too deeply");
        c->depth--;
        return &CEL_T_ERROR;
    }
    const cel_type *t;
    switch (e->kind) {
    case CE_LIT:
        switch (e->lit.kind) {
        case CV_NULL: t = &CEL_T_NULL; break;
        case CV_BOOL: t = &CEL_T_BOOL; break;
        case CV_INT: t = &CEL_T_INT; break;
        case CV_UINT: t = &CEL_T_UINT; break;
        case CV_DOUBLE: t = &CEL_T_DOUBLE; break;
        case CV_STRING: t = &CEL_T_STRING; break;
        case CV_BYTES: t = &CEL_T_BYTES; break;
        default: t = &CEL_T_DYN;
        }
        break;
    case CE_IDENT: t = check_ident(c, e); break;
    case CE_SELECT: t = check_select(c, e); break;
    case CE_CALL:
        t = e->call.target                              ? check_call(c, e)
            : strcmp(e->call.fn, OP_OPT_SELECT) == 0 ? check_opt_select(c, e)
            : strcmp(e->call.fn, "@msg") == 0        ? check_message(c, e)
                                                     : check_call(c, e);
        break;
    case CE_LIST: t = check_list(c, e); break;
    case CE_MAP: t = check_map(c, e); break;
    case CE_COMP: t = check_comp(c, e); break;
    default: t = &CEL_T_ERROR;
    }
    c->depth--;
    e->type = t;
    return t;
}

bool cel_check(ks_cel_program *p, cel_errors *errs) {
    checker c = {.p = p, .errs = errs};
    cel_functions_init();
    check(&c, p->root);
    if (errs->n == 0) cel_format_validate(p->root, errs);
    return errs->n == 0;
}
