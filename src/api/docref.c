#include "api/docref.h"
#include "util/xalloc.h"

#include <stdlib.h>

ks_docref *ks_docref_new(ks_arena *a) {
    ks_docref *d = ks_xmalloc(sizeof(*d));
    atomic_init(&d->refs, 1);
    d->arena = a;
    return d;
}

void ks_docref_unref(ks_docref *d) {
    if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    ks_arena_free(d->arena);
    free(d);
}
