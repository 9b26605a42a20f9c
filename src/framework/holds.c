#include "framework/holds.h"
#include "util/xalloc.h"

#include <stdlib.h>

typedef struct hold {
    void (*release)(void *);
    void *p;
} hold;

static _Thread_local struct {
    unsigned depth;
    hold *v;
    size_t n, cap;
} tls;

void ks_holds_enter(void) { tls.depth++; }

void ks_holds_exit(void) {
    if (tls.depth && --tls.depth == 0 && tls.n) ks_holds_release();
}

void ks_hold(void (*release)(void *), void *p) {
    KS_GROW(tls.v, tls.cap, tls.n + 1);
    tls.v[tls.n++] = (hold){release, p};
}

void ks_holds_release(void) {
    /* A release may run code that holds again (it should not): take the
     * list first. */
    hold *v = tls.v;
    size_t n = tls.n;
    tls.v = NULL;
    tls.n = tls.cap = 0;
    for (size_t i = 0; i < n; i++) v[i].release(v[i].p);
    free(v);
}
