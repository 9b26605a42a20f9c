#include "codec/errors.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks_errors_init(ks_errors *e) { memset(e, 0, sizeof(*e)); }

void ks_errors_free(ks_errors *e) {
    for (size_t i = 0; i < e->n; i++) free(e->v[i]);
    free(e->v);
    for (size_t i = 0; i < e->nw; i++) free(e->w[i]);
    free(e->w);
    memset(e, 0, sizeof(*e));
}

void ks_errors_take(ks_errors *e, char *msg) {
    KS_GROW(e->v, e->cap, e->n + 1);
    e->v[e->n++] = msg;
}

void ks_errors_add(ks_errors *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = ks_xvasprintf(fmt, ap);
    va_end(ap);
    ks_errors_take(e, s);
}

void ks_errors_warn(ks_errors *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = ks_xvasprintf(fmt, ap);
    va_end(ap);
    KS_GROW(e->w, e->capw, e->nw + 1);
    e->w[e->nw++] = s;
}

void ks_errors_move(ks_errors *dst, ks_errors *src) {
    for (size_t i = 0; i < src->n; i++) ks_errors_take(dst, src->v[i]);
    for (size_t i = 0; i < src->nw; i++) {
        KS_GROW(dst->w, dst->capw, dst->nw + 1);
        dst->w[dst->nw++] = src->w[i];
    }
    free(src->w);
    free(src->v);
    memset(src, 0, sizeof(*src));
}
