/* The node as the scheduler sees it: interned labels and taints, the
 * allocatable vector, images. Immutable and reference counted like ks_pod. */
#ifndef KS_NODE_H
#define KS_NODE_H

#include "api/docref.h"
#include "api/resource.h"
#include "api/labels.h"
#include "api/taint.h"
#include "util/arena.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ks_tree;

typedef struct ks_node_image {
    uint32_t nnames;
    ks_id *names; /* every name the image is known by, as the node reports it */
    int64_t size_bytes;
} ks_node_image;

typedef struct ks_node {
    atomic_int refs;
    ks_id name;
    ks_arena *arena;
    const char *uid;
    ks_labels labels;
    ks_annotations annotations;
    uint32_t ntaints;
    bool unschedulable;
    ks_taint *taints;
    ks_resource allocatable;
    ks_resource capacity;
    ks_qlist allocatable_q; /* status.allocatable exactly as written */
    uint32_t nimages;
    uint32_t input_index;
    ks_node_image *images;
    int64_t creation_ts;
    struct ks_tree *tree;
    const char *source_file;
    int source_line;
    ks_docref *doc;       /* keeps tree and strings alive */
} ks_node;

ks_node *ks_node_new(void);
/* A decoder's finished node: later nodes' arenas start at about its size. */
void ks_node_note_arena(const ks_node *n);
static inline ks_node *ks_node_ref(ks_node *n) {
    atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
    return n;
}
void ks_node_unref(ks_node *n);

/* Image name as upstream ImageLocality normalizes it (adds ":latest" when
 * the name has no tag). */
ks_id ks_normalize_image(const char *image);

/* Node conditions are not kept: the scheduler reads none (taints stand for
 * them). Lookup of an image size by (already normalized) name, 0 when the
 * node does not report it. */
int64_t ks_node_image_size(const ks_node *n, ks_id name);

#endif
