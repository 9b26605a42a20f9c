#include "framework/holds.h"
#include "util/xalloc.h"

#include <stdlib.h>

typedef struct hold {
    void (*release)(void *);
    void *p;
} hold;

_Thread_local size_t ks_holds_n __attribute__((tls_model("initial-exec")));

/* The thread's holds (ks_holds_n of them), in registration order. */
static _Thread_local struct {
    hold *v;
    size_t cap;
} list;

void ks_hold(void (*release)(void *), void *p) {
    KS_GROW(list.v, list.cap, ks_holds_n + 1);
    list.v[ks_holds_n++] = (hold){release, p};
}

void ks_holds_release_from(size_t mark) {
    /* Newest first; a release that holds again (it should not) is
     * released too. */
    while (ks_holds_n > mark) {
        hold h = list.v[--ks_holds_n];
        h.release(h.p);
    }
    if (ks_holds_n == 0) {
        free(list.v);
        list.v = NULL;
        list.cap = 0;
    }
}

void ks_holds_release(void) { ks_holds_release_from(0); }
