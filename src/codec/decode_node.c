/* v1.Node into ks_node: labels, taints, allocatable/capacity, images. */
#include "codec/decode_internal.h"

#include <string.h>

ks_node *ks_decode_node(const ks_tree *t, ks_decode_ctx *ctx) {
    static const char *const effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
    ks_node *n = ks_node_new();
    dec dd, *d = &dd;
    dec_init(d, ctx, n->arena, "node", t);
    d->plain_annotations = true; /* values change with every update */
    meta m;
    if (!d_map(d, t, NULL) || !d_meta(d, t, false, &m)) goto fail;
    n->name = m.name;
    n->uid = m.uid;
    n->labels = m.labels;
    n->annotations = m.plain_annotations;
    n->creation_ts = m.has_creation ? m.creation_ts : 0;

    const ks_tree *spec = kt_get(t, "spec");
    const kpath *sp = KP(NULL, "spec");
    if (d_map(d, spec, sp)) {
        d_bool(d, kt_get(spec, "unschedulable"), KP(sp, "unschedulable"), &n->unschedulable);
        const ks_tree *taints = kt_get(spec, "taints");
        const kpath *tp = KP(sp, "taints");
        if (d_seq(d, taints, tp) && taints->n) {
            n->taints = ks_arena_calloc(d->a, taints->n, sizeof(*n->taints));
            for (uint32_t i = 0; i < taints->n; i++) {
                const ks_tree *x = taints->items[i];
                const kpath *ip = KI(tp, i);
                if (!d_map(d, x, ip)) continue;
                ks_taint *tt = &n->taints[n->ntaints];
                tt->key = d_id(d, kt_get(x, "key"), KP(ip, "key"));
                tt->value = d_id(d, kt_get(x, "value"), KP(ip, "value"));
                const ks_tree *ev = kt_get(x, "effect");
                int e = d_enum(d, ev, KP(ip, "effect"), effects);
                if (e == 0 || e == -1) {
                    derr(d, d_absent(ev) ? x : ev, KP(ip, "effect"), "required");
                    continue;
                }
                if (e < 0) continue;
                tt->effect = (ks_effect)e;
                n->ntaints++;
            }
        }
    }

    const ks_tree *st = kt_get(t, "status");
    const kpath *stp = KP(NULL, "status");
    if (d_map(d, st, stp)) {
        const ks_tree *alloc = kt_get(st, "allocatable"), *cap = kt_get(st, "capacity");
        ks_qlist cap_q = {0};
        d_resource(d, alloc, KP(stp, "allocatable"), &n->allocatable_q, &n->allocatable);
        d_resource(d, cap, KP(stp, "capacity"), &cap_q, &n->capacity);
        /* The API server stores a node without status.allocatable with
         * allocatable = capacity (SetDefaults_NodeStatus); an empty map
         * stays empty. */
        if ((!alloc || alloc->type == KT_NULL) && cap && cap->type != KT_NULL) {
            n->allocatable_q = cap_q;
            n->allocatable = n->capacity;
        }
        const ks_tree *imgs = kt_get(st, "images");
        const kpath *ip = KP(stp, "images");
        if (d_seq(d, imgs, ip) && imgs->n) {
            n->images = ks_arena_calloc(d->a, imgs->n, sizeof(*n->images));
            for (uint32_t i = 0; i < imgs->n; i++) {
                const ks_tree *img = imgs->items[i];
                const kpath *p = KI(ip, i);
                if (!d_map(d, img, p)) continue;
                ks_node_image *ni = &n->images[n->nimages++];
                d_ids(d, kt_get(img, "names"), KP(p, "names"), &ni->nnames, &ni->names);
                d_int64(d, kt_get(img, "sizeBytes"), KP(p, "sizeBytes"), &ni->size_bytes);
            }
        }
    }
    if (!dec_done(d)) goto fail;
    D_SET_SOURCE(d, n, t);
    ks_node_note_arena(n);
    return n;
fail:
    dec_done(d);
    ks_node_unref(n);
    return NULL;
}
