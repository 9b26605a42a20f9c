/* A reference-counted arena holding parsed documents (their trees and the
 * strings decoded objects point into). Every object decoded from a document
 * holds one reference, so a pod can outlive the cluster it was loaded with
 * and still print its source back. */
#ifndef KS_DOCREF_H
#define KS_DOCREF_H

#include "util/arena.h"

#include <stdatomic.h>

typedef struct ks_docref {
    atomic_int refs;
    ks_arena *arena;
} ks_docref;

/* Takes ownership of `a`; refs starts at 1. */
ks_docref *ks_docref_new(ks_arena *a);
static inline ks_docref *ks_docref_ref(ks_docref *d) {
    if (d) atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
    return d;
}
void ks_docref_unref(ks_docref *d); /* NULL is fine */

#endif
