/* Shared machinery of the typed decoders: the field path kept on the stack
 * while descending (formatted only when an error is reported), and readers
 * for the value types that report wrong types with the path. */
#ifndef KS_DECODE_INTERNAL_H
#define KS_DECODE_INTERNAL_H

#include "api/quantity.h"
#include "codec/decode.h"

/* One step of a field path: a map key or a list index. */
typedef struct kpath {
    const struct kpath *up;
    const char *key; /* NULL: idx */
    uint32_t idx;
} kpath;

#define KP(up, k) (&(kpath){(up), (k), 0})
#define KI(up, i) (&(kpath){(up), NULL, (uint32_t)(i)})

/* The decoding of one object. */
typedef struct dec {
    ks_decode_ctx *ctx;
    ks_arena *a;        /* the object's arena */
    const char *kind;   /* lowercase, for messages */
    const char *ns;     /* NULL for cluster-scoped kinds */
    const char *name;   /* NULL until known */
    int line;           /* the object's line */
    bool failed;
    /* Strings of unbounded cardinality, for d_meta: the name interned
     * with a reference (ks_intern_ref: pods), the annotations kept as
     * plain strings in meta.plain_annotations (pods, nodes). */
    bool counted_name;
    bool plain_annotations;
    /* this object's errors, handed to ctx->errs in line order by dec_done */
    struct derror *errs;
    size_t nerrs, caperrs;
} dec;

void dec_init(dec *d, ks_decode_ctx *ctx, ks_arena *a, const char *kind, const ks_tree *obj);
void derr(dec *d, const ks_tree *at, const kpath *p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* End of an object: its errors, sorted by line, go to ctx->errs. Returns
 * true when there were none. */
bool dec_done(dec *d);
/* A string the object keeps: the tree's own text when the document stays
 * alive, else a copy in the object's arena. */
const char *dkeep(dec *d, const char *s);

/* Absent and null read the same (a null field is a zero value). */
static inline bool d_absent(const ks_tree *v) { return !v || v->type == KT_NULL; }

/* Scalar readers: false when absent or null (no error) or of the wrong
 * type (error reported). */
bool d_str(dec *d, const ks_tree *v, const kpath *p, const char **out);
bool d_bool(dec *d, const ks_tree *v, const kpath *p, bool *out);
bool d_int64(dec *d, const ks_tree *v, const kpath *p, int64_t *out);
bool d_int32(dec *d, const ks_tree *v, const kpath *p, int32_t *out);
/* RFC 3339 time into unix seconds. */
bool d_time(dec *d, const ks_tree *v, const kpath *p, int64_t *out);
/* Container checks: true for a map / list, false for absent or null, an
 * error for anything else. */
bool d_map(dec *d, const ks_tree *v, const kpath *p);
bool d_seq(dec *d, const ks_tree *v, const kpath *p);
/* A string that must be one of `allowed` (NULL-terminated); returns its
 * index, or -1 when absent (and -2 after reporting a bad value). */
int d_enum(dec *d, const ks_tree *v, const kpath *p, const char *const *allowed);
/* An interned string, KS_ID_NONE when absent. */
ks_id d_id(dec *d, const ks_tree *v, const kpath *p);
/* A list of strings, interned. */
bool d_ids(dec *d, const ks_tree *v, const kpath *p, uint32_t *n, ks_id **out);

/* map[string]string, interned and sorted by key. */
bool d_labels(dec *d, const ks_tree *v, const kpath *p, ks_labels *out);
/* Annotations: keys interned, values kept as strings. */
bool d_annotations(dec *d, const ks_tree *v, const kpath *p, ks_annotations *out);
/* A quantity, exactly, in nano-units. */
bool d_quantity(dec *d, const ks_tree *v, const kpath *p, __int128 *nano);
/* The same, keeping how it was written (for printing back). */
bool d_quantity_q(dec *d, const ks_tree *v, const kpath *p, ks_quantity *out);
/* A ResourceList. Quantities must not be negative and must fit an int64
 * once converted as the scheduler converts them. */
bool d_qlist(dec *d, const ks_tree *v, const kpath *p, ks_qlist *out);
/* A ResourceList into a resource vector (Resource.Add semantics). */
bool d_resource(dec *d, const ks_tree *v, const kpath *p, ks_qlist *q, ks_resource *out);

/* metav1.LabelSelector; absent or null is the nil selector (nothing). */
bool d_label_selector(dec *d, const ks_tree *v, const kpath *p, ks_label_selector *out);
/* map[string]string used as a selector (Service, ReplicationController). */
bool d_map_selector(dec *d, const ks_tree *v, const kpath *p, ks_label_selector *out);
bool d_node_selector_term(dec *d, const ks_tree *v, const kpath *p, ks_node_selector_term *out);
bool d_node_selector(dec *d, const ks_tree *v, const kpath *p, ks_node_selector *out);

/* Common metadata: name (required), namespace (defaulted to "default" for
 * namespaced kinds), labels. */
typedef struct meta {
    ks_id name, ns;
    const char *uid;
    const char *resource_version; /* NULL when unset */
    ks_labels labels, annotations;
    ks_annotations plain_annotations; /* instead of annotations (d->plain_annotations) */
    bool has_creation;
    int64_t creation_ts;
    bool has_deletion;
    int64_t deletion_ts;
} meta;
bool d_meta(dec *d, const ks_tree *obj, bool namespaced, meta *m);
/* Fill in an object's source information. */
#define D_SET_SOURCE(d, obj, t)                                              \
    do {                                                                     \
        (obj)->doc = ks_docref_ref((d)->ctx->doc);                           \
        (obj)->tree = (d)->ctx->doc ? (struct ks_tree *)(t) : NULL;          \
        /* interned: one copy per file, not per object */                    \
        (obj)->source_file = (d)->ctx->file ? ks_str(ks_intern((d)->ctx->file)) : NULL; \
        (obj)->source_line = (t)->line;                                      \
        (obj)->input_index = (d)->ctx->next_input_index++;                   \
    } while (0)

/* A decoder's object of type T in an arena of its own, with the dec d for
 * kind kindname over the tree t (both in the caller's scope). The arena's
 * first chunk is what this decoder's last objects used (arena_size bytes
 * before the first): a chunk too small doubles into a second one, which
 * held three times what a DRA claim uses (1 KB + 2 KB for ~1.1 KB;
 * 13.5 MB of 5,000 claims). */
#define DEC_NEW_OBJECT(T, o, kindname, arena_size)                           \
    static ks_arena_hint arena_hint_;                                        \
    ks_arena *a_ = ks_arena_new(ks_arena_hint_get(&arena_hint_, arena_size)); \
    T *o = ks_arena_alloc(a_, sizeof(T));                                    \
    o->arena = a_;                                                           \
    dec dd_, *d = &dd_;                                                      \
    dec_init(d, ctx, a_, kindname, t);                                       \
    meta m;                                                                  \
    (void)m

/* Return o, or NULL (o released) when d collected errors. */
#define DEC_FINISH(o)                                                        \
    do {                                                                     \
        if (!dec_done(d)) {                                                  \
            KS_OBJECT_UNREF(o);                                              \
            return NULL;                                                     \
        }                                                                    \
        D_SET_SOURCE(d, o, t);                                               \
        ks_arena_hint_note(&arena_hint_, a_);                                \
        return o;                                                            \
    } while (0)

#endif
