/* Collected configuration errors, and upstream's field.Error wording
 * ("PATH: Invalid value: VALUE: detail") so messages read like
 * kube-scheduler's. */
#include "config/internal.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks_config_errors_init(ks_config_errors *e) { memset(e, 0, sizeof *e); }

void ks_config_errors_free(ks_config_errors *e) {
    for (uint32_t i = 0; i < e->n; i++) free(e->msgs[i]);
    free(e->msgs);
    memset(e, 0, sizeof *e);
}

static void errors_addv(ks_config_errors *e, const char *fmt, va_list ap) {
    char *s = ks_xvasprintf(fmt, ap);
    KS_GROW(e->msgs, e->cap, e->n + 1);
    e->msgs[e->n++] = s;
}

void ks_config_errors_add(ks_config_errors *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    errors_addv(e, fmt, ap);
    va_end(ap);
}

static void err_prefixed(cfg_ctx *c, int line, const char *fmt, va_list ap) {
    ks_strbuf b;
    ks_sb_init(&b);
    if (c->file) {
        if (line > 0) {
            ks_sb_printf(&b, "%s:%d: ", c->file, line);
        } else {
            ks_sb_printf(&b, "%s: ", c->file);
        }
    }
    char *msg = ks_xvasprintf(fmt, ap);
    ks_sb_puts(&b, msg);
    free(msg);
    KS_GROW(c->errs->msgs, c->errs->cap, c->errs->n + 1);
    c->errs->msgs[c->errs->n++] = ks_sb_take(&b);
}

void cfg_err_line(cfg_ctx *c, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_prefixed(c, line, fmt, ap);
    va_end(ap);
}

void cfg_err_path(cfg_ctx *c, const char *path, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_prefixed(c, cfg_path_line(c, path), fmt, ap);
    va_end(ap);
}

/* Walk "a.b[2].c" through the source tree. Segments that are not found
 * (defaults, merged lists, "[key]" subscripts) end the walk: the deepest
 * node reached is the best place to point at. */
/* Line n (1-based) of the source: start and length. */
static bool source_line(const cfg_ctx *c, int n, const char **start, size_t *len) {
    if (!c->src || n <= 0) return false;
    const char *p = c->src, *end = c->src + c->srclen;
    for (int i = 1; i < n; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *start = p;
    *len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    return true;
}

/* Whether the line holds `key` followed (after an optional closing quote
 * and blanks) by ':'. */
static bool line_has_key(const char *l, size_t n, const char *key) {
    size_t k = strlen(key);
    for (size_t i = 0; k && i + k <= n; i++) {
        if (memcmp(l + i, key, k) != 0) continue;
        size_t j = i + k;
        if (j < n && (l[j] == '"' || l[j] == '\'')) j++;
        while (j < n && l[j] == ' ') j++;
        if (j < n && l[j] == ':') return true;
    }
    return false;
}

int cfg_key_line(const cfg_ctx *c, const char *key, const ks_tree *value) {
    int vl = value ? value->line : 0;
    const char *l;
    size_t n;
    if (vl <= 0 || !source_line(c, vl, &l, &n) || line_has_key(l, n, key)) return vl;
    /* walk up over blank and comment lines to the key */
    for (int up = vl - 1; up > 0 && up >= vl - 50; up--) {
        if (!source_line(c, up, &l, &n)) break;
        if (line_has_key(l, n, key)) return up;
        size_t i = 0;
        while (i < n && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) i++;
        if (i < n && l[i] != '#') break;
    }
    return vl;
}

static const ks_tree *path_walk(const cfg_ctx *c, const char *path, int *line_out, bool *complete) {
    const ks_tree *root = c->root;
    const ks_tree *t = root;
    int line = t ? t->line : 0;
    const char *p = path;
    while (t && *p) {
        if (*p == '.') p++;
        if (*p == '[') {
            char *end;
            long idx = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || t->type != KT_SEQ || idx < 0 || (uint32_t)idx >= t->n) {
                break;
            }
            t = t->items[idx];
            p = end + 1;
        } else {
            size_t n = strcspn(p, ".[");
            const ks_tree *next = NULL;
            const char *key = NULL;
            if (t->type == KT_MAP) {
                for (uint32_t i = 0; i < t->n; i++) {
                    if (strlen(t->keys[i]) == n && memcmp(t->keys[i], p, n) == 0) {
                        next = t->items[i];
                        key = t->keys[i];
                    }
                }
            }
            if (!next) break;
            t = next;
            p += n;
            int kl = cfg_key_line(c, key, t);
            if (kl > 0) line = kl;
            continue;
        }
        if (t->line > 0) line = t->line;
    }
    *line_out = line;
    *complete = *p == '\0';
    return t;
}

int cfg_path_line(const cfg_ctx *c, const char *path) {
    int line;
    bool complete;
    path_walk(c, path, &line, &complete);
    return line;
}

const ks_tree *cfg_path_node(const cfg_ctx *c, const char *path) {
    int line;
    bool complete;
    const ks_tree *t = path_walk(c, path, &line, &complete);
    return complete ? t : NULL;
}

/* ---- field.Error ------------------------------------------------------- */

void fe_invalid(cfg_ctx *c, const char *path, const char *value, const char *detail) {
    if (detail && *detail) {
        cfg_err_path(c, path, "%s: Invalid value: %s: %s", path, value, detail);
    } else {
        cfg_err_path(c, path, "%s: Invalid value: %s", path, value);
    }
}

void fe_required(cfg_ctx *c, const char *path, const char *detail) {
    if (detail && *detail) {
        cfg_err_path(c, path, "%s: Required value: %s", path, detail);
    } else {
        cfg_err_path(c, path, "%s: Required value", path);
    }
}

void fe_duplicate(cfg_ctx *c, const char *path, const char *value) {
    cfg_err_path(c, path, "%s: Duplicate value: %s", path, value);
}

void fe_forbidden(cfg_ctx *c, const char *path, const char *detail) {
    cfg_err_path(c, path, "%s: Forbidden: %s", path, detail);
}

void fe_not_supported(cfg_ctx *c, const char *path, const char *value, const char *const *valid,
                      size_t nvalid) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (size_t i = 0; i < nvalid; i++) {
        if (i) ks_sb_puts(&b, ", ");
        ks_sb_quote_str(&b, valid[i]);
    }
    if (nvalid) {
        cfg_err_path(c, path, "%s: Unsupported value: %s: supported values: %s", path, value,
                     ks_sb_str(&b));
    } else {
        cfg_err_path(c, path, "%s: Unsupported value: %s", path, value);
    }
    ks_sb_free(&b);
}

const char *fe_int(cfg_ctx *c, int64_t v) { return ks_arena_printf(c->arena, "%lld", (long long)v); }

const char *fe_str(cfg_ctx *c, const char *s) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_quote_str(&b, s ? s : "");
    const char *r = ks_arena_strdup(c->arena, ks_sb_str(&b));
    ks_sb_free(&b);
    return r;
}

static int cmp_keys(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void json_put(ks_strbuf *b, const ks_tree *t) {
    if (!t) {
        ks_sb_puts(b, "null");
        return;
    }
    switch (t->type) {
    case KT_NULL: ks_sb_puts(b, "null"); break;
    case KT_BOOL: ks_sb_puts(b, t->bval ? "true" : "false"); break;
    case KT_INT: ks_sb_printf(b, "%lld", (long long)t->ival); break;
    case KT_FLOAT: {
        char f[40];
        go_format_float(t->fval, 64, f);
        ks_sb_puts(b, f);
        break;
    }
    case KT_STRING: ks_sb_quote_str(b, t->text ? t->text : ""); break;
    case KT_SEQ:
        ks_sb_putc(b, '[');
        for (uint32_t i = 0; i < t->n; i++) {
            if (i) ks_sb_putc(b, ',');
            json_put(b, t->items[i]);
        }
        ks_sb_putc(b, ']');
        break;
    case KT_MAP: {
        /* Go's json.Marshal of a map sorts keys bytewise */
        const char **keys = ks_xcalloc(t->n ? t->n : 1, sizeof *keys);
        for (uint32_t i = 0; i < t->n; i++) keys[i] = t->keys[i];
        qsort(keys, t->n, sizeof *keys, cmp_keys);
        ks_sb_putc(b, '{');
        for (uint32_t i = 0; i < t->n; i++) {
            if (i) ks_sb_putc(b, ',');
            ks_sb_quote_str(b, keys[i]);
            ks_sb_putc(b, ':');
            json_put(b, kt_get(t, keys[i]));
        }
        ks_sb_putc(b, '}');
        free(keys);
        break;
    }
    }
}

const char *fe_json(cfg_ctx *c, const ks_tree *t) {
    ks_strbuf b;
    ks_sb_init(&b);
    json_put(&b, t);
    const char *r = ks_arena_strdup(c->arena, ks_sb_str(&b));
    ks_sb_free(&b);
    return r;
}
