/* Strict decoding against a declarative description of the v1 types.
 *
 * Upstream decodes YAML -> JSON -> Go structs with unknown and duplicate
 * fields rejected; a JSON null leaves a field unset. We check the document
 * tree against the same field lists (schemas.c) and, for plugin args,
 * rebuild the tree in the exact shape Go would serialise it back to. */
#include "config/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- tree helpers -------------------------------------------------------- */

bool kt_is_null(const ks_tree *t) { return t == NULL || t->type == KT_NULL; }

const ks_tree *kt_field(const ks_tree *map, const char *key) {
    if (!map) return NULL;
    const ks_tree *v = kt_get(map, key);
    return kt_is_null(v) ? NULL : v;
}

bool kt_as_int(const ks_tree *t, int64_t *v) {
    if (!t) return false;
    if (t->type == KT_INT) {
        *v = t->ival;
        return true;
    }
    /* 2.0 is accepted for an integer field, as sigs.k8s.io/yaml turns it
     * into the JSON number 2 */
    if (t->type == KT_FLOAT && isfinite(t->fval) && t->fval == floor(t->fval) &&
        t->fval >= -9223372036854775808.0 && t->fval < 9223372036854775808.0) {
        *v = (int64_t)t->fval;
        return true;
    }
    return false;
}

const char *kt_as_str(const ks_tree *t) { return t && t->type == KT_STRING ? (t->text ? t->text : "") : NULL; }

ks_tree *kt_new_map(ks_arena *a) { return kt_new(a, KT_MAP, 0); }
ks_tree *kt_new_seq(ks_arena *a) { return kt_new(a, KT_SEQ, 0); }
ks_tree *kt_str(ks_arena *a, const char *s) { return kt_string(a, s, 0); }

/* ---- checking ------------------------------------------------------------ */

static const char *json_type(const ks_tree *t) {
    switch (t->type) {
    case KT_STRING: return "string";
    case KT_INT:
    case KT_FLOAT: return "number";
    case KT_BOOL: return "bool";
    case KT_MAP: return "object";
    case KT_SEQ: return "array";
    default: return "null";
    }
}

static const char *go_type(ks_arena *a, sk_kind k, sk_kind elem, const sk_type *sub) {
    switch (k) {
    case SK_STR:
    case SK_DUR: return "string";
    case SK_BOOL: return "bool";
    case SK_I32: return "int32";
    case SK_I64: return "int64";
    case SK_F32: return "float32";
    case SK_B64: return "[]uint8";
    case SK_OBJ: return sub->name;
    case SK_LIST: return ks_arena_printf(a, "[]%s", go_type(a, elem, SK_ANY, sub));
    case SK_STRMAP: return "map[string]string";
    case SK_ANY: return "interface {}";
    }
    return "?";
}

static void type_error(cfg_ctx *c, const ks_tree *v, const char *path, sk_kind k, sk_kind elem,
                       const sk_type *sub) {
    const char *shown = "";
    if (v->type == KT_STRING) {
        shown = ks_arena_printf(c->arena, " %s", fe_str(c, v->text ? v->text : ""));
    } else if (v->type == KT_INT || v->type == KT_FLOAT || v->type == KT_BOOL) {
        shown = ks_arena_printf(c->arena, " %s", fe_json(c, v));
    }
    cfg_err_line(c, v->line, "%s: cannot unmarshal %s%s into Go value of type %s", path, json_type(v),
                 shown, go_type(c->arena, k, elem, sub));
}

static void check_value(cfg_ctx *c, const ks_tree *v, const char *path, sk_kind k, sk_kind elem,
                        const sk_type *sub) {
    if (kt_is_null(v)) return;
    int64_t iv;
    switch (k) {
    case SK_STR:
        if (v->type != KT_STRING) type_error(c, v, path, k, elem, sub);
        break;
    case SK_BOOL:
        if (v->type != KT_BOOL) type_error(c, v, path, k, elem, sub);
        break;
    case SK_I32:
        if (!kt_as_int(v, &iv) || iv < INT32_MIN || iv > INT32_MAX) type_error(c, v, path, k, elem, sub);
        break;
    case SK_I64:
        if (!kt_as_int(v, &iv)) type_error(c, v, path, k, elem, sub);
        break;
    case SK_F32:
        if (v->type != KT_INT && v->type != KT_FLOAT) type_error(c, v, path, k, elem, sub);
        break;
    case SK_DUR: {
        if (v->type != KT_STRING) {
            type_error(c, v, path, k, elem, sub);
            break;
        }
        int64_t ns;
        char *err = NULL;
        if (!go_parse_duration(v->text ? v->text : "", &ns, &err)) {
            cfg_err_line(c, v->line, "%s: %s", path, err);
            free(err);
        }
        break;
    }
    case SK_B64: {
        if (v->type != KT_STRING) {
            type_error(c, v, path, k, elem, sub);
            break;
        }
        long at = go_base64_invalid_at(v->text ? v->text : "");
        if (at >= 0) cfg_err_line(c, v->line, "%s: illegal base64 data at input byte %ld", path, at);
        break;
    }
    case SK_OBJ:
        if (v->type != KT_MAP) {
            type_error(c, v, path, k, elem, sub);
        } else {
            sk_check(c, v, sub, path);
        }
        break;
    case SK_LIST:
        if (v->type != KT_SEQ) {
            type_error(c, v, path, k, elem, sub);
            break;
        }
        for (uint32_t i = 0; i < v->n; i++) {
            const char *ip = ks_arena_printf(c->arena, "%s[%u]", path, i);
            check_value(c, v->items[i], ip, elem, SK_ANY, sub);
        }
        break;
    case SK_STRMAP:
        if (v->type != KT_MAP) {
            type_error(c, v, path, k, elem, sub);
            break;
        }
        for (uint32_t i = 0; i < v->n; i++) {
            const char *ip = ks_arena_printf(c->arena, "%s.%s", path, v->keys[i]);
            for (uint32_t j = 0; j < i; j++) {
                if (strcmp(v->keys[i], v->keys[j]) == 0) {
                    cfg_err_line(c, cfg_key_line(c, v->keys[i], v->items[i]), "duplicate field \"%s\"", ip);
                }
            }
            check_value(c, v->items[i], ip, SK_STR, SK_ANY, NULL);
        }
        break;
    case SK_ANY:
        break;
    }
}

void sk_check(cfg_ctx *c, const ks_tree *t, const sk_type *ty, const char *path) {
    if (kt_is_null(t)) return;
    if (t->type != KT_MAP) {
        type_error(c, t, *path ? path : "(root)", SK_OBJ, SK_ANY, ty);
        return;
    }
    for (uint32_t i = 0; i < t->n; i++) {
        const char *key = t->keys[i];
        const char *fp = *path ? ks_arena_printf(c->arena, "%s.%s", path, key) : key;
        bool dup = false;
        for (uint32_t j = 0; j < i; j++) dup = dup || strcmp(t->keys[j], key) == 0;
        if (dup) {
            cfg_err_line(c, cfg_key_line(c, key, t->items[i]), "duplicate field \"%s\"", fp);
            continue;
        }
        const sk_field *f = ty->fields;
        while (f->name && strcmp(f->name, key) != 0) f++;
        if (!f->name) {
            int line = cfg_key_line(c, key, t->items[i]);
            cfg_err_line(c, line ? line : t->line, "unknown field \"%s\"", fp);
            continue;
        }
        check_value(c, t->items[i], fp, f->kind, f->elem, f->sub);
    }
}

/* ---- canonical form ------------------------------------------------------ */

static ks_tree *zero_value(ks_arena *a, sk_kind k, const sk_type *sub) {
    switch (k) {
    case SK_STR: return kt_str(a, "");
    case SK_BOOL: return kt_bool(a, false);
    case SK_I32:
    case SK_I64: return kt_int(a, 0);
    case SK_F32: return kt_int(a, 0);
    case SK_DUR: return kt_str(a, "0s");
    case SK_OBJ: return sk_canon(a, NULL, sub);
    default: return kt_new(a, KT_NULL, 0);
    }
}

static bool is_zero(const ks_tree *v, sk_kind k) {
    switch (k) {
    case SK_STR:
    case SK_B64: return v->type == KT_STRING && (!v->text || !*v->text);
    case SK_BOOL: return v->type == KT_BOOL && !v->bval;
    case SK_I32:
    case SK_I64:
    case SK_F32: return (v->type == KT_INT && v->ival == 0) || (v->type == KT_FLOAT && v->fval == 0);
    case SK_DUR: return v->type == KT_STRING && v->text && strcmp(v->text, "0s") == 0;
    case SK_LIST:
    case SK_STRMAP: return v->n == 0;
    default: return false;
    }
}

static ks_tree *canon_value(ks_arena *a, const ks_tree *v, sk_kind k, sk_kind elem, const sk_type *sub) {
    int64_t iv;
    ks_tree *out;
    switch (k) {
    case SK_I32:
    case SK_I64:
        kt_as_int(v, &iv);
        out = kt_int(a, iv);
        break;
    case SK_DUR: {
        int64_t ns = 0;
        char *err = NULL, buf[40];
        if (!go_parse_duration(v->text ? v->text : "", &ns, &err)) free(err);
        go_format_duration(ns, buf);
        out = kt_str(a, buf);
        break;
    }
    case SK_OBJ: out = sk_canon(a, v, sub); break;
    case SK_LIST:
        out = kt_new_seq(a);
        for (uint32_t i = 0; i < v->n; i++) {
            const ks_tree *it = v->items[i];
            kt_seq_add(a, out, kt_is_null(it) ? zero_value(a, elem, sub) : canon_value(a, it, elem, SK_ANY, sub));
        }
        break;
    default: out = kt_copy(a, v); break;
    }
    out->line = v->line;
    return out;
}

ks_tree *sk_canon(ks_arena *a, const ks_tree *t, const sk_type *ty) {
    ks_tree *out = kt_new_map(a);
    if (t) out->line = t->line;
    for (const sk_field *f = ty->fields; f->name; f++) {
        const ks_tree *v = t ? kt_field(t, f->name) : NULL;
        if (!v) {
            if (f->flags & (SF_OMITEMPTY | SF_PTR)) {
                if (f->flags & SF_OMITEMPTY) continue;
                kt_map_add(a, out, f->name, kt_new(a, KT_NULL, 0));
            } else {
                kt_map_add(a, out, f->name, zero_value(a, f->kind, f->sub));
            }
            continue;
        }
        ks_tree *cv = canon_value(a, v, f->kind, f->elem, f->sub);
        if ((f->flags & SF_OMITEMPTY) && !(f->flags & SF_PTR) && is_zero(cv, f->kind)) continue;
        /* an empty slice behind omitempty is dropped even when written */
        if ((f->flags & SF_OMITEMPTY) && (f->kind == SK_LIST || f->kind == SK_STRMAP) && cv->n == 0) continue;
        kt_map_add(a, out, f->name, cv);
    }
    return out;
}
