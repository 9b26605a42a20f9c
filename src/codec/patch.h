/* RFC 6902 JSON Patch on a document tree: the `kubectl patch --type=json`
 * a user applies, applied the same way to a simulated object. `why`
 * builds every fix it verifies as such a patch, so what it prints is
 * exactly what it tried. Operations: add, remove, replace (test, move
 * and copy are not needed by anything here and are refused). */
#ifndef KS_PATCH_H
#define KS_PATCH_H

#include "codec/tree.h"

#include <stdbool.h>

/* Apply the patch (the JSON text of an array of operations) to doc,
 * in place; new nodes are allocated in a. False with *err (malloc'd)
 * when the patch is malformed or a path does not resolve (doc may then
 * be partly changed: patch a copy). */
bool kt_patch_apply(ks_arena *a, ks_tree *doc, const char *patch, char **err);

/* A JSON Pointer token for s ("~" as "~0", "/" as "~1"), into buf. */
const char *kt_pointer_escape(const char *s, char *buf, int n);

#endif
