/* JSON <-> tree, on jansson. jansson reports no positions for values, so
 * nodes parsed from JSON carry line 0 (errors then name the file and the
 * field path only). */
#include "codec/tree.h"
#include "codec/tree_internal.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NULL when too deep, or (with *too_long set) when a string is too long. */
static ks_tree *from_json(ks_arena *a, kt_strtab *strs, json_t *j, int depth, size_t *too_long) {
    ks_tree *t;
    char buf[64];
    if (depth >= KT_MAX_DEPTH && (json_is_object(j) || json_is_array(j))) return NULL;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        t = kt_new(a, KT_MAP, 0);
        size_t n = json_object_size(j);
        if (n) {
            t->items = ks_arena_calloc(a, kt_cap((uint32_t)n), sizeof(*t->items));
            t->keys = ks_arena_calloc(a, kt_cap((uint32_t)n), sizeof(*t->keys));
        }
        const char *key;
        size_t klen;
        json_t *v;
        json_object_keylen_foreach(j, key, klen, v) {
            if (klen > KT_MAX_STRING) {
                *too_long = klen;
                return NULL;
            }
            ks_tree *c = from_json(a, strs, v, depth + 1, too_long);
            if (!c) return NULL;
            t->keys[t->n] = kt_strtab_get(strs, a, key, klen);
            t->items[t->n++] = c;
        }
        return t;
    }
    case JSON_ARRAY: {
        t = kt_new(a, KT_SEQ, 0);
        size_t n = json_array_size(j);
        if (n) t->items = ks_arena_calloc(a, kt_cap((uint32_t)n), sizeof(*t->items));
        for (size_t i = 0; i < n; i++) {
            ks_tree *c = from_json(a, strs, json_array_get(j, i), depth + 1, too_long);
            if (!c) return NULL;
            t->items[t->n++] = c;
        }
        return t;
    }
    case JSON_STRING:
        if (json_string_length(j) > KT_MAX_STRING) {
            *too_long = json_string_length(j);
            return NULL;
        }
        t = kt_new(a, KT_STRING, 0);
        t->quoted = true;
        t->text = kt_strtab_get(strs, a, json_string_value(j), json_string_length(j));
        return t;
    case JSON_INTEGER:
        t = kt_new(a, KT_INT, 0);
        t->ival = (int64_t)json_integer_value(j);
        snprintf(buf, sizeof(buf), "%" PRId64, t->ival);
        t->text = ks_arena_strdup(a, buf);
        return t;
    case JSON_REAL:
        t = kt_new(a, KT_FLOAT, 0);
        t->fval = json_real_value(j);
        kt_format_float(t->fval, buf, sizeof(buf), false);
        t->text = ks_arena_strdup(a, buf);
        return t;
    case JSON_TRUE:
    case JSON_FALSE:
        t = kt_new(a, KT_BOOL, 0);
        t->bval = json_is_true(j);
        t->text = t->bval ? "true" : "false";
        return t;
    case JSON_NULL:
        t = kt_new(a, KT_NULL, 0);
        t->text = "null";
        return t;
    }
    return NULL;
}

/* One value after another ("{...}{...}", or one per line) is a stream of
 * documents, as kubectl reads them. */
bool kt_parse_json(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                   uint32_t *ndocs, char **err) {
    size_t cap = 4, n = 0, off = 0;
    ks_tree **out = ks_xmalloc(cap * sizeof(*out));
    kt_strtab strs = {0};
    int line_base = 1;
    for (;;) {
        while (off < len && (buf[off] == ' ' || buf[off] == '\t' || buf[off] == '\r' ||
                             buf[off] == '\n')) {
            if (buf[off] == '\n') line_base++;
            off++;
        }
        if (off >= len) break;
        json_error_t je;
        json_t *j = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &je);
        if (!j) {
            /* jansson's own depth limit is KT_MAX_DEPTH: say it as YAML does */
            if (strstr(je.text, "maximum parsing depth"))
                *err = ks_xasprintf("%s:%d: maps and lists nested deeper than %d levels", name,
                                    line_base + je.line - 1, KT_MAX_DEPTH);
            else
                *err = ks_xasprintf("%s:%d: %s", name, line_base + je.line - 1, je.text);
            kt_strtab_free(&strs);
            free(out);
            return false;
        }
        for (size_t i = 0; i < (size_t)je.position; i++)
            if (buf[off + i] == '\n') line_base++;
        off += (size_t)je.position;
        size_t too_long = 0;
        ks_tree *t = from_json(a, &strs, j, 0, &too_long);
        json_decref(j);
        if (!t) {
            if (too_long)
                *err = ks_xasprintf("%s:%d: a string of %zu bytes (the limit is %u)", name,
                                    line_base, too_long, KT_MAX_STRING);
            else
                *err = ks_xasprintf("%s:%d: maps and lists nested deeper than %d levels", name,
                                    line_base, KT_MAX_DEPTH);
            kt_strtab_free(&strs);
            free(out);
            return false;
        }
        if (t->type == KT_NULL) continue;
        if (n == cap) out = ks_xrealloc(out, (cap *= 2) * sizeof(*out));
        out[n++] = t;
    }
    *docs = ks_arena_calloc(a, n ? n : 1, sizeof(**docs));
    memcpy(*docs, out, n * sizeof(*out));
    *ndocs = (uint32_t)n;
    kt_strtab_free(&strs);
    free(out);
    return true;
}

static json_t *to_json(const ks_tree *t, int depth) {
    if (!t) return json_null();
    if (depth > 10000) return NULL;
    switch (t->type) {
    case KT_NULL: return json_null();
    case KT_BOOL: return json_boolean(t->bval);
    case KT_INT: return json_integer((json_int_t)t->ival);
    case KT_FLOAT: return json_real(t->fval);
    case KT_STRING: {
        char *fixed;
        json_t *j = json_string(kt_utf8_clean(t->text ? t->text : "", &fixed));
        free(fixed);
        return j;
    }
    case KT_SEQ: {
        json_t *arr = json_array();
        for (uint32_t i = 0; i < t->n; i++) {
            json_t *c = to_json(t->items[i], depth + 1);
            if (!c) {
                json_decref(arr);
                return NULL;
            }
            json_array_append_new(arr, c);
        }
        return arr;
    }
    case KT_MAP: {
        json_t *obj = json_object();
        for (uint32_t i = 0; i < t->n; i++) {
            json_t *c = to_json(t->items[i], depth + 1);
            if (!c) {
                json_decref(obj);
                return NULL;
            }
            char *fixed;
            json_object_set_new(obj, kt_utf8_clean(t->keys[i], &fixed), c);
            free(fixed);
        }
        return obj;
    }
    }
    return NULL;
}

char *kt_to_json(const ks_tree *t, int indent) {
    json_t *j = to_json(t, 0);
    if (!j) return NULL;
    size_t flags = JSON_ENCODE_ANY | JSON_REAL_PRECISION(17);
    flags |= indent > 0 ? JSON_INDENT(indent > 31 ? 31 : indent) : JSON_COMPACT;
    char *s = json_dumps(j, flags);
    json_decref(j);
    if (!s) return NULL;
    /* hand back memory our callers free() */
    char *r = ks_xstrdup(s);
    free(s);
    return r;
}
