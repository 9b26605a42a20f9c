#include "codec/patch.h"

#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kt_pointer_escape(const char *s, char *buf, int n) {
    int o = 0;
    for (; *s && o < n - 3; s++) {
        if (*s == '~' || *s == '/') {
            buf[o++] = '~';
            buf[o++] = *s == '~' ? '0' : '1';
        } else {
            buf[o++] = *s;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* Split a pointer into unescaped tokens (allocated in a). */
static bool split_pointer(ks_arena *a, const char *p, char ***toks, uint32_t *n) {
    *n = 0;
    *toks = NULL;
    if (!*p) return true;
    if (*p != '/') return false;
    uint32_t cnt = 0;
    for (const char *s = p; *s; s++) cnt += *s == '/';
    char **v = ks_arena_calloc(a, cnt, sizeof(char *));
    const char *s = p + 1;
    for (uint32_t i = 0; i < cnt; i++) {
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char *t = ks_arena_calloc(a, len + 1, 1);
        size_t o = 0;
        for (size_t j = 0; j < len; j++) {
            if (s[j] == '~') {
                if (j + 1 >= len || (s[j + 1] != '0' && s[j + 1] != '1')) return false;
                t[o++] = s[j + 1] == '0' ? '~' : '/';
                j++;
            } else {
                t[o++] = s[j];
            }
        }
        v[i] = t;
        s = e ? e + 1 : s + len;
    }
    *toks = v;
    *n = cnt;
    return true;
}

/* A sequence index token: digits only, below limit (limit itself allowed
 * when `append_ok`, and "-" means limit then). */
static bool seq_index(const char *tok, uint32_t n, bool append_ok, uint32_t *out) {
    if (append_ok && strcmp(tok, "-") == 0) {
        *out = n;
        return true;
    }
    if (!*tok || (tok[0] == '0' && tok[1])) return false;
    unsigned long v = 0;
    for (const char *s = tok; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > n) return false;
    }
    if (v > n || (v == n && !append_ok)) return false;
    *out = (uint32_t)v;
    return true;
}

static int map_find(const ks_tree *m, const char *key) {
    for (uint32_t i = m->n; i-- > 0;)
        if (strcmp(m->keys[i], key) == 0) return (int)i;
    return -1;
}

static void remove_at(ks_tree *t, uint32_t i) {
    for (uint32_t j = i; j + 1 < t->n; j++) {
        t->items[j] = t->items[j + 1];
        if (t->type == KT_MAP) t->keys[j] = t->keys[j + 1];
    }
    t->n--;
}

static bool apply_one(ks_arena *a, ks_tree *doc, const ks_tree *op, char **err) {
    const ks_tree *o = kt_get(op, "op"), *p = kt_get(op, "path"), *v = kt_get(op, "value");
    if (!o || o->type != KT_STRING || !p || p->type != KT_STRING) {
        *err = ks_xasprintf("a patch operation needs \"op\" and \"path\" strings");
        return false;
    }
    bool add = !strcmp(o->text, "add"), rem = !strcmp(o->text, "remove"), rep = !strcmp(o->text, "replace");
    if (!add && !rem && !rep) {
        *err = ks_xasprintf("unsupported patch operation \"%s\"", o->text);
        return false;
    }
    if ((add || rep) && !v) {
        *err = ks_xasprintf("%s %s: no value", o->text, p->text);
        return false;
    }
    char **toks;
    uint32_t n;
    if (!split_pointer(a, p->text, &toks, &n) || n == 0) {
        *err = ks_xasprintf("%s: invalid path \"%s\"", o->text, p->text);
        return false;
    }
    ks_tree *parent = doc;
    for (uint32_t i = 0; i + 1 < n; i++) {
        uint32_t k;
        if (parent->type == KT_MAP) {
            int at = map_find(parent, toks[i]);
            parent = at < 0 ? NULL : parent->items[at];
        } else if (parent->type == KT_SEQ && seq_index(toks[i], parent->n, false, &k)) {
            parent = parent->items[k];
        } else {
            parent = NULL;
        }
        if (!parent) {
            *err = ks_xasprintf("%s %s: no such path", o->text, p->text);
            return false;
        }
    }
    const char *last = toks[n - 1];
    ks_tree *val = v ? kt_copy(a, v) : NULL;
    if (parent->type == KT_MAP) {
        int at = map_find(parent, last);
        if (add) {
            kt_map_set(a, parent, last, val);
            return true;
        }
        if (at < 0) {
            *err = ks_xasprintf("%s %s: no such path", o->text, p->text);
            return false;
        }
        if (rem) remove_at(parent, (uint32_t)at);
        else parent->items[at] = val;
        return true;
    }
    uint32_t k;
    if (parent->type != KT_SEQ || !seq_index(last, parent->n, add, &k)) {
        *err = ks_xasprintf("%s %s: no such path", o->text, p->text);
        return false;
    }
    if (add) {
        kt_seq_add(a, parent, val);
        for (uint32_t j = parent->n - 1; j > k; j--) parent->items[j] = parent->items[j - 1];
        parent->items[k] = val;
    } else if (rem) {
        remove_at(parent, k);
    } else {
        parent->items[k] = val;
    }
    return true;
}

bool kt_patch_apply(ks_arena *a, ks_tree *doc, const char *patch, char **err) {
    ks_tree **docs;
    uint32_t ndocs;
    if (!kt_parse(a, "patch", patch, strlen(patch), &docs, &ndocs, err)) return false;
    if (ndocs != 1 || docs[0]->type != KT_SEQ) {
        *err = ks_xasprintf("a JSON patch is one array of operations");
        return false;
    }
    for (uint32_t i = 0; i < docs[0]->n; i++)
        if (!apply_one(a, doc, docs[0]->items[i], err)) return false;
    return true;
}
