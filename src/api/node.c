#include "api/node.h"

#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static ks_arena_hint node_arena_hint;

ks_node *ks_node_new(void) {
    ks_api_init();
    ks_arena *a = ks_arena_new(ks_arena_hint_get(&node_arena_hint, 2048));
    ks_node *n = ks_arena_alloc(a, sizeof(*n));
    atomic_init(&n->refs, 1);
    n->arena = a;
    return n;
}

void ks_node_note_arena(const ks_node *n) { ks_arena_hint_note(&node_arena_hint, n->arena); }

void ks_node_unref(ks_node *n) {
    if (!n || atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1) return;
    ks_docref_unref(n->doc);
    ks_arena_free(n->arena);
}

/* ImageLocality's normalizedImageName: a name whose last ':' does not come
 * after its last '/' has no tag, and gets ":latest". Nothing else (no
 * registry or library/ prefix) is added. */
ks_id ks_normalize_image(const char *image) {
    const char *colon = strrchr(image, ':');
    const char *slash = strrchr(image, '/');
    if (colon && (!slash || colon > slash)) return ks_intern(image);
    size_t n = strlen(image);
    char buf[512];
    char *p = n + 8 <= sizeof(buf) ? buf : ks_xmalloc(n + 8);
    memcpy(p, image, n);
    memcpy(p + n, ":latest", 8);
    ks_id id = ks_intern(p);
    if (p != buf) free(p);
    return id;
}

/* A name listed under two images takes the size of the later one, as
 * upstream's map of image states does. */
int64_t ks_node_image_size(const ks_node *n, ks_id name) {
    for (uint32_t i = n->nimages; i-- > 0;)
        for (uint32_t j = 0; j < n->images[i].nnames; j++)
            if (n->images[i].names[j] == name) return n->images[i].size_bytes;
    return 0;
}
