/* Shared between the files of src/config; not part of the config API. */
#ifndef KS_CONFIG_INTERNAL_H
#define KS_CONFIG_INTERNAL_H

#include "config/config.h"
#include "util/strbuf.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- error context ------------------------------------------------------
 * Errors name the file and, when the field path can be found in the source
 * tree, the line: "FILE:LINE: message". */
typedef struct cfg_ctx {
    const char *file;      /* NULL: no prefix (defaults) */
    const ks_tree *root;   /* source document, NULL for defaults */
    ks_config_errors *errs;
    ks_arena *arena;
    uint32_t nerr_start;   /* errs->n when this stage began */
    const char *src;       /* the file's text, to find the line of a key */
    size_t srclen;
} cfg_ctx;

void cfg_err_line(cfg_ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The line is looked up by walking `path` ("profiles[0].plugins") in the
 * source tree; the deepest node found gives it. */
void cfg_err_path(cfg_ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cfg_path_line(const cfg_ctx *c, const char *path);
/* The node at exactly `path` in the source tree, NULL when not there. */
const ks_tree *cfg_path_node(const cfg_ctx *c, const char *path);
/* The line of `key` whose value is `value`: the tree knows where values
 * start, and a block value starts on the line after its key. */
int cfg_key_line(const cfg_ctx *c, const char *key, const ks_tree *value);
static inline bool cfg_failed(const cfg_ctx *c) { return c->errs->n > c->nerr_start; }

/* ---- upstream field.Error wording -------------------------------------- */
/* "PATH: Invalid value: VALUE: detail" etc. VALUE is pre-rendered: use
 * fe_int / fe_str to render it like Go's field.Error does. */
void fe_invalid(cfg_ctx *c, const char *path, const char *value, const char *detail);
void fe_required(cfg_ctx *c, const char *path, const char *detail);
void fe_duplicate(cfg_ctx *c, const char *path, const char *value);
void fe_forbidden(cfg_ctx *c, const char *path, const char *detail);
void fe_not_supported(cfg_ctx *c, const char *path, const char *value, const char *const *valid,
                      size_t nvalid);
const char *fe_int(cfg_ctx *c, int64_t v);
const char *fe_str(cfg_ctx *c, const char *s); /* Go %q */
/* Compact JSON of a tree with map keys sorted bytewise (Go json.Marshal). */
const char *fe_json(cfg_ctx *c, const ks_tree *t);

/* ---- Go-compatible formatting (gofmt.c) -------------------------------- */
bool go_parse_duration(const char *s, int64_t *ns, char **err);
void go_format_duration(int64_t ns, char out[40]);
/* strconv.FormatFloat(v, 'g', -1, bits) */
void go_format_float(double v, int bits, char out[40]);
/* encoding/base64 StdEncoding validity; returns -1 when valid else the
 * offending input byte offset. */
long go_base64_invalid_at(const char *s);

/* ---- schema: strict decoding of v1 types (schema.c) --------------------- */
typedef enum sk_kind {
    SK_STR,
    SK_BOOL,
    SK_I32,
    SK_I64,
    SK_F32,
    SK_DUR,    /* metav1.Duration: a string like "15s" */
    SK_B64,    /* []byte: a base64 string */
    SK_OBJ,    /* a struct (sub) */
    SK_LIST,   /* a slice of elem (sub when elem is SK_OBJ) */
    SK_STRMAP, /* map[string]string */
    SK_ANY,    /* runtime.RawExtension of an unknown type */
} sk_kind;

enum {
    SF_OMITEMPTY = 1, /* `omitempty` on a non-pointer: dropped when zero */
    SF_PTR = 2,       /* pointer (or nil-able): dropped only when absent */
};

typedef struct sk_field sk_field;
typedef struct sk_type {
    const char *name; /* Go type name */
    const sk_field *fields; /* terminated by a NULL name */
} sk_type;

struct sk_field {
    const char *name;
    sk_kind kind;
    unsigned flags;
    sk_kind elem;        /* SK_LIST element kind */
    const sk_type *sub;  /* SK_OBJ, or SK_LIST of SK_OBJ */
};

/* Check `t` against `ty`: unknown and duplicate fields, value types. `path`
 * is the path of t ("" for the root). Errors go to c. */
void sk_check(cfg_ctx *c, const ks_tree *t, const sk_type *ty, const char *path);
/* A canonical copy of t (which passed sk_check) in ty's v1 JSON shape:
 * fields in declaration order, omitempty zeros dropped, absent
 * non-omitempty fields filled with their zero value, numbers as integers,
 * durations normalised. */
ks_tree *sk_canon(ks_arena *a, const ks_tree *t, const sk_type *ty);

/* Tree helpers */
bool kt_is_null(const ks_tree *t);
const ks_tree *kt_field(const ks_tree *map, const char *key); /* NULL for absent or null */
bool kt_as_int(const ks_tree *t, int64_t *v); /* ints and integral floats */
const char *kt_as_str(const ks_tree *t);      /* NULL unless a string */
ks_tree *kt_new_map(ks_arena *a);
ks_tree *kt_new_seq(ks_arena *a);
ks_tree *kt_str(ks_arena *a, const char *s);

/* The schemas (schemas.c) */
extern const sk_type sk_config; /* KubeSchedulerConfiguration */
extern const sk_type sk_default_preemption_args, sk_inter_pod_affinity_args,
    sk_node_resources_fit_args, sk_pod_topology_spread_args, sk_balanced_allocation_args,
    sk_volume_binding_args, sk_node_affinity_args, sk_dynamic_resources_args;

/* ---- plugin args (args.c) ---------------------------------------------- */
typedef struct args_type {
    const char *plugin;
    const char *kind;
    const sk_type *schema;
    void (*set_defaults)(ks_arena *a, ks_tree *args);
    /* Validation as upstream's config validation does it; path is the
     * path of the args ("profiles[0].pluginConfig[1].args"). */
    void (*validate)(cfg_ctx *c, const char *path, const ks_tree *args);
} args_type;

const args_type *args_type_find(const char *plugin);
/* Decode the args of pluginConfig entry `path` for `plugin`: strict for
 * in-tree plugins (then defaulted), a copy for others. NULL `src` means no
 * args were given. */
ks_tree *args_decode(cfg_ctx *c, const char *plugin, const ks_tree *src, const char *path);
/* Default args of an in-tree plugin (NULL if the plugin takes none). */
ks_tree *args_default(ks_arena *a, const char *plugin);

/* ---- args validation (validate_args.c), upstream validation_pluginargs.go */
void va_default_preemption(cfg_ctx *c, const char *path, const ks_tree *args);
void va_inter_pod_affinity(cfg_ctx *c, const char *path, const ks_tree *args);
void va_node_resources_fit(cfg_ctx *c, const char *path, const ks_tree *args);
void va_pod_topology_spread(cfg_ctx *c, const char *path, const ks_tree *args);
void va_balanced_allocation(cfg_ctx *c, const char *path, const ks_tree *args);
void va_volume_binding(cfg_ctx *c, const char *path, const ks_tree *args);
void va_node_affinity(cfg_ctx *c, const char *path, const ks_tree *args);
void va_dynamic_resources(cfg_ctx *c, const char *path, const ks_tree *args);
/* Whether a plugin is enabled at any point of the profile (upstream's
 * pluginsNeeded: only those plugins are instantiated). */
bool plugin_needed(const ks_profile_config *p, const char *name);
/* apimachinery IsQualifiedName: messages appended to out (count returned) */
size_t is_qualified_name(const char *v, const char *msgs[4], ks_arena *a);
size_t is_valid_label_value(const char *v, const char *msgs[2], ks_arena *a);

/* ---- decode, defaults, validate (decode_config.c, defaults.c, validate.c) ------ */
typedef struct cfg_presence {
    bool parallelism, percentage, initial_backoff, max_backoff;
    bool enable_profiling, enable_contention, leader_elect;
    bool *scheduler_name; /* per profile */
    bool *plugins;        /* per profile: `plugins` given */
} cfg_presence;

bool cfg_decode(cfg_ctx *c, const ks_tree *doc, ks_config *cfg, cfg_presence *pres);
void cfg_set_defaults(ks_config *cfg, const cfg_presence *pres);
void cfg_validate(cfg_ctx *c, const ks_config *cfg);
/* The plugins enabled by default (v1.34 getDefaultPlugins). */
void cfg_default_plugins(ks_arena *a, ks_plugins_config *out);

/* ---- printing ---------------------------------------------------------- */
/* YAML like sigs.k8s.io/yaml (yaml.v2 over JSON): map keys sorted by
 * yaml.v2's order, strings quoted when they would read back as another type. */
char *yaml_emit(const ks_tree *t);
ks_tree *cfg_to_tree(ks_arena *a, const ks_config *cfg);

#endif
