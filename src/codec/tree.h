/* A generic document tree, what YAML and JSON both decode into before the
 * typed decoders read it. Every node remembers its source line (YAML; 0 for
 * JSON, where jansson does not report positions of values) so that errors
 * can name file:line and the field path. Scalars keep their text and
 * whether they were quoted, so "true" the string and true the bool differ. */
#ifndef KS_TREE_H
#define KS_TREE_H

#include "util/arena.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    KT_NULL = 0,
    KT_BOOL,
    KT_INT,
    KT_FLOAT,
    KT_STRING,
    KT_MAP,
    KT_SEQ,
} kt_type;

typedef struct ks_tree ks_tree;

struct ks_tree {
    kt_type type;
    int line;
    const char *text;  /* scalar text (as written; for KT_STRING the value) */
    union {
        int64_t ival;  /* KT_INT */
        double fval;   /* KT_FLOAT */
        bool bval;     /* KT_BOOL */
    };
    uint32_t n;        /* entries in a map or a sequence */
    bool quoted;       /* a YAML scalar written in quotes (always a string) */
    const char **keys; /* map keys, in document order */
    ks_tree **items;   /* map values / sequence items */
};

/* Lookup of a map key; NULL when absent or when t is not a map. A key
 * written twice resolves to its last occurrence, as the upstream decoders
 * (which overwrite) see it. */
const ks_tree *kt_get(const ks_tree *t, const char *key);
const char *kt_type_name(kt_type t);
/* Build trees (arena-owned). */
ks_tree *kt_new(ks_arena *a, kt_type type, int line);
void kt_map_add(ks_arena *a, ks_tree *map, const char *key, ks_tree *val);
void kt_seq_add(ks_arena *a, ks_tree *seq, ks_tree *item);
ks_tree *kt_string(ks_arena *a, const char *s, int line);
ks_tree *kt_int(ks_arena *a, int64_t v);
ks_tree *kt_bool(ks_arena *a, bool v);
/* Deep copy into another arena. */
ks_tree *kt_copy(ks_arena *a, const ks_tree *t);
/* Set (replace or append) a key of a map. */
void kt_map_set(ks_arena *a, ks_tree *map, const char *key, ks_tree *val);

/* The text a JSON encoder would write for a number (KT_INT or KT_FLOAT):
 * what resource.Quantity parses when a quantity is written as a number.
 * Returns NULL for other types. */
const char *kt_number_text(const ks_tree *t, char *buf, int n);

/* Maps and lists nest at most this deep in a document, YAML or JSON
 * (jansson's own limit, which cannot be raised; sigs.k8s.io/yaml and
 * encoding/json allow 10000, far beyond any Kubernetes object). Deeper
 * documents are refused as soon as the parser gets there, before the
 * cost of parsing them (quadratic in libyaml) is paid. YAML aliases count
 * with the depth of what they stand for. */
#define KT_MAX_DEPTH 2048

/* A string (a scalar or a map key) is at most this long. The API server
 * refuses requests over 3 MiB, so no stored object holds a longer one;
 * longer ones are refused with their line instead of being copied. */
#define KT_MAX_STRING (4u << 20)

/* Parse a buffer holding one or more documents. `name` is used in error
 * messages. JSON is recognised by its first non-blank character: [, or { followed by a quoted key (a YAML flow mapping starts {key: ...).
 * YAML plain scalars are typed as sigs.k8s.io/yaml types them (YAML 1.1:
 * yes/no/on/off are bools, 0x1F and 0o17 ints, 1e3 a float, ~ null).
 * Null documents (an empty "---" section) are dropped.
 * On error returns false and writes "name:line: message" to *err (malloc'd).
 * The documents are allocated in `a`. */
bool kt_parse(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
              uint32_t *ndocs, char **err);

/* Emit as JSON (indent > 0 pretty) or as YAML into a malloc'd string. */
char *kt_to_json(const ks_tree *t, int indent);
/* The same through a jansson tree (kt_to_json's fallback; tests compare). */
char *kt_to_json_jansson(const ks_tree *t, int indent);
char *kt_to_yaml(const ks_tree *t);

/* s when it is valid UTF-8, else a malloc'd copy (in *tofree) with each
 * invalid byte replaced by U+FFFD, as Go's encoders write such strings.
 * Emitters must not be handed invalid UTF-8 (a !!binary scalar can hold
 * any bytes). */
const char *kt_utf8_clean(const char *s, char **tofree);

#endif
