/* CEL internals shared by the parser, the checker and the interpreter. */
#ifndef KS_CEL_INTERNAL_H
#define KS_CEL_INTERNAL_H

#include "cel/cel.h"
#include "util/arena.h"
#include "util/strbuf.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- types (checker) ---------------------------------------------------- */

typedef enum {
    CT_DYN = 0,
    CT_ERROR,
    CT_NULL,
    CT_BOOL,
    CT_INT,
    CT_UINT,
    CT_DOUBLE,
    CT_STRING,
    CT_BYTES,
    CT_LIST,     /* p1: element */
    CT_MAP,      /* p1: key, p2: value */
    CT_TYPE,     /* p1: the type denoted (NULL: any) */
    CT_OPTIONAL, /* p1: value */
    CT_QUANTITY,
    CT_SEMVER,
    CT_DEVICE,
    CT_PARAM, /* a type parameter in an overload signature; p_index */
    CT_ANY,   /* upstream's AnyType: attribute values of unknown kind */
    CT_IP,    /* Kubernetes' net.IP */
    CT_CIDR,  /* Kubernetes' net.CIDR */
    CT_AUTHZ, /* Kubernetes' authorization types: no value has them */
    CT_URL,   /* Kubernetes' kubernetes.URL */
    CT_FORMAT, /* Kubernetes' kubernetes.NamedFormat */
    CT_TIMESTAMP, /* google.protobuf.Timestamp (time.c) */
    CT_DURATION,  /* google.protobuf.Duration (time.c) */
} cel_tkind;

typedef struct cel_type {
    uint8_t kind;
    uint8_t param; /* CT_PARAM: index */
    const struct cel_type *p1, *p2;
} cel_type;

/* Shared instances of the simple types. */
extern const cel_type CEL_T_DYN, CEL_T_ERROR, CEL_T_NULL, CEL_T_BOOL, CEL_T_INT, CEL_T_UINT,
    CEL_T_DOUBLE, CEL_T_STRING, CEL_T_BYTES, CEL_T_QUANTITY, CEL_T_SEMVER, CEL_T_DEVICE,
    CEL_T_LIST_DYN, CEL_T_MAP_DYN, CEL_T_TYPE_ANY, CEL_T_IP, CEL_T_CIDR, CEL_T_TIMESTAMP, CEL_T_DURATION;
extern const cel_type CEL_T_URL, CEL_T_FORMAT;

/* cel-go's FormatCELType text ("list(int)", "map(string, dyn)"); with
 * as_string, cel.Type's String() (AnyType is then google.protobuf.Any). */
void cel_type_print(ks_strbuf *b, const cel_type *t);
void cel_type_print_str(ks_strbuf *b, const cel_type *t);

/* ---- values --------------------------------------------------------------- */

typedef enum {
    CV_ERROR = 0,
    CV_NULL,
    CV_BOOL,
    CV_INT,
    CV_UINT,
    CV_DOUBLE,
    CV_STRING,
    CV_BYTES,
    CV_LIST,
    CV_MAP,
    CV_TYPE,     /* sub: the cel_tkind denoted */
    CV_QUANTITY,
    CV_SEMVER,
    CV_OPTIONAL, /* opt: NULL for none */
    CV_DEVICE,   /* dev */
    CV_DEVMAP,   /* device.attributes / device.capacity and their domains */
    CV_IP,       /* net */
    CV_CIDR,     /* net */
    CV_URL,      /* url */
    CV_FORMAT,   /* sub: which named format (k8sformat.c) */
    CV_TIMESTAMP, /* ts */
    CV_DURATION,  /* i: nanoseconds */
} cel_vkind;

/* CV_DEVMAP sub values. */
enum { DM_ATTRS = 0, DM_CAPS = 1, DM_ATTRS_DOMAIN = 2, DM_CAPS_DOMAIN = 3 };

struct cel_list;
struct cel_map;
typedef struct cel_url cel_url; /* url.c */

/* An IP address (bits -1) or a CIDR prefix (bits: its length); IPv4 in
 * b[12..15] with is4. */
typedef struct cel_net {
    uint8_t b[16];
    bool is4;
    int bits;
} cel_net;

typedef struct cel_val {
    uint8_t kind;
    uint8_t sub;
    uint32_t len; /* string, bytes, error message; DEVMAP domain length */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        const char *s; /* string / bytes / error message */
        const struct cel_list *list;
        const struct cel_map *map;
        const ks_semver *sv;
        const cel_net *net;
        const cel_url *url;
        const struct cel_val *opt;
        const ks_cel_device *dev;
        __int128 q; /* quantity, nano-units */
        struct {
            int64_t sec;  /* Unix seconds */
            int32_t nsec; /* 0..999999999 */
            int32_t off;  /* the offset it was written with, for string() */
        } ts;
        struct {
            const ks_cel_device *dev;
            const char *domain;
        } dm;
    };
} cel_val;

typedef struct cel_list {
    uint32_t n;
    const cel_val *v;
} cel_list;

typedef struct cel_map {
    uint32_t n;
    const cel_val *k, *v;
} cel_map;

static inline cel_val cel_bool(bool b) { return (cel_val){.kind = CV_BOOL, .b = b}; }
static inline cel_val cel_int(int64_t i) { return (cel_val){.kind = CV_INT, .i = i}; }
static inline cel_val cel_uint(uint64_t u) { return (cel_val){.kind = CV_UINT, .u = u}; }
static inline cel_val cel_double(double d) { return (cel_val){.kind = CV_DOUBLE, .d = d}; }
static inline cel_val cel_null(void) { return (cel_val){.kind = CV_NULL}; }
static inline cel_val cel_str(const char *s, size_t n) {
    return (cel_val){.kind = CV_STRING, .len = (uint32_t)n, .s = s};
}
static inline cel_val cel_err_static(const char *msg) { return (cel_val){.kind = CV_ERROR, .s = msg}; }

/* ---- AST -------------------------------------------------------------------- */

typedef enum {
    CE_LIT = 0,
    CE_IDENT,
    CE_SELECT,
    CE_CALL,
    CE_LIST,
    CE_MAP,
    CE_COMP,
} cel_ekind;

struct cel_overload;

typedef struct cel_expr {
    uint8_t kind;
    bool test_only;   /* CE_SELECT: has() */
    uint32_t pos;     /* byte offset in the source, for messages */
    const cel_type *type;
    union {
        cel_val lit;
        struct {
            const char *name;
            int slot;     /* comprehension variable slot, -1: global */
        } ident;
        struct {
            struct cel_expr *operand;
            const char *field;
        } sel;
        struct {
            struct cel_expr *target; /* NULL for global calls */
            const char *fn;
            struct cel_expr **args;
            uint32_t nargs;
            /* set by the checker: the overloads that may apply */
            const struct cel_overload **ovl;
            uint32_t novl;
        } call;
        struct {
            struct cel_expr **elems;
            bool *optional;
            uint32_t n;
        } list;
        struct {
            struct cel_expr **keys, **vals;
            bool *optional;
            uint32_t n;
        } map;
        struct {
            const char *iter_var, *iter_var2, *accu_var;
            int iter_slot, iter2_slot, accu_slot;
            struct cel_expr *range, *init, *cond, *step, *result;
        } comp;
    };
} cel_expr;

/* Names of operators (cel-go's). */
#define OP_COND "_?_:_"
#define OP_AND "_&&_"
#define OP_OR "_||_"
#define OP_NOT "!_"
#define OP_NEG "-_"
#define OP_INDEX "_[_]"
#define OP_OPT_INDEX "_[?_]"
#define OP_OPT_SELECT "_?._"
#define OP_IN "@in"
#define OP_NOT_STRICTLY_FALSE "@not_strictly_false"

/* ---- functions ----------------------------------------------------------------- */

typedef struct cel_eval cel_eval;
typedef cel_val (*cel_impl)(cel_eval *ev, const cel_val *args, uint32_t nargs);

typedef struct cel_overload {
    const char *fn;
    bool member;
    const char *sig; /* "string string -> bool"; parsed on first use */
    cel_impl impl;
    /* filled in by cel_functions_init */
    uint8_t nargs;
    const cel_type *params[4];
    const cel_type *result;
    /* only for dyn arguments (cel-go's trait-based bindings reach values
     * no declared overload names, e.g. -dyn(duration)) */
    bool dyn_only;
} cel_overload;

/* Kubernetes' IP and CIDR libraries (net.c). */
void cel_net_print(ks_strbuf *b, const cel_net *a);
bool cel_net_equal(const cel_net *a, const cel_net *b);
uint64_t cel_net_size(const cel_net *a);
cel_val cel_f_ip(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_ip(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_ip_is_canonical(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_net_string(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_family(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_unspecified(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_loopback(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_ll_multicast(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_ll_unicast(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_global_unicast(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_cidr(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_cidr(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_contains_ip(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_contains_cidr(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_prefix_length(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_masked(cel_eval *ev, const cel_val *args, uint32_t n);

/* Go's strconv.Quote and netip.ParseAddr (net.c), for other libraries. */
bool cel_netip_parse_addr(const char *s, size_t n, cel_net *out, bool *zone, ks_strbuf *err);

/* Kubernetes' URL library (url.c). */
void cel_url_print(ks_strbuf *b, const cel_url *u);
bool cel_url_equal(const cel_url *a, const cel_url *b);
cel_val cel_f_url(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_is_url(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_scheme(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_host(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_hostname(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_port(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_escaped_path(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_query(cel_eval *ev, const cel_val *args, uint32_t n);

/* URL parse check as url.ParseRequestURI: false when valid, else true
 * with its error text (url.c) */
bool cel_url_request_error(ks_arena *a, const char *s, size_t n, ks_strbuf *err);

/* Kubernetes' format library (k8sformat.c) */
#define CEL_FORMAT_CONSTS(X)                                                                            \
    X(dns1123Label) X(dns1123Subdomain) X(dns1035Label) X(qualifiedName) X(dns1123LabelPrefix)          \
        X(dns1123SubdomainPrefix) X(dns1035LabelPrefix) X(labelValue) X(uri) X(uuid) X(byte) X(date) \
            X(datetime)
#define X(name) cel_val cel_f_format_##name(cel_eval *ev, const cel_val *args, uint32_t n);
CEL_FORMAT_CONSTS(X)
#undef X
const char *cel_format_key(int f);
unsigned cel_format_regex_size(int f);
cel_val cel_f_format_named(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_validate(cel_eval *ev, const cel_val *args, uint32_t n);

/* cel-go's string.format (strformat.c); the validator of constant
 * format strings runs on a checked AST without errors. */
cel_val cel_f_format(cel_eval *ev, const cel_val *args, uint32_t n);
struct cel_errors;
void cel_format_validate(const cel_expr *e, struct cel_errors *errs);
/* string(x) (funcs.c) */
cel_val cel_f_string(cel_eval *ev, const cel_val *args, uint32_t n);

/* Regular expressions with RE2 (Go regexp) syntax and semantics on PCRE2
 * (regex.c). Compile: NULL and err set to Go's error text. Search from
 * byte offset start: 1 found ([*so, *eo)), 0 not, -1 match limit. so NULL:
 * only whether it matches. */
typedef struct cel_re cel_re;
cel_re *cel_re_compile(const char *pat, size_t n, char *err, size_t nerr);
int cel_re_search(cel_re *re, const char *s, size_t n, size_t start, size_t *so, size_t *eo);
void cel_re_free(cel_re *re);

/* Whether a pattern compiles (funcs.c). */
bool cel_regex_valid(const char *pat, size_t n);

/* Every overload, grouped by name (consecutive). */
const cel_overload *cel_functions(size_t *n);
/* Initialise signatures (idempotent, thread-safe). */
void cel_functions_init(void);

/* ---- the compiled program --------------------------------------------------- */

struct ks_cel_program {
    ks_arena *arena;
    const char *src;
    cel_expr *root;
    int nslots; /* comprehension variable slots */
    ks_cel_options opts;
};

/* Errors collected while compiling; printed sorted by position, as
 * cel-go's Errors.ToDisplayString does. */
typedef struct cel_error_entry {
    uint32_t pos;
    char *text;
} cel_error_entry;

typedef struct cel_errors {
    cel_error_entry *v;
    int n, cap;
    const char *src;
} cel_errors;

void cel_error_at(cel_errors *e, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* All errors, one per line (malloc'd). */
char *cel_errors_string(cel_errors *e);
void cel_errors_free(cel_errors *e);

/* parse.c: build the AST (macros expanded). Returns NULL with errors. */
cel_expr *cel_parse(ks_arena *a, const char *src, cel_errors *errs);
/* check.c: annotate types and overloads, resolve variables to slots. */
bool cel_check(ks_cel_program *p, cel_errors *errs);

/* ---- evaluation ---------------------------------------------------------------- */

struct cel_eval {
    ks_arena *scratch;
    uint64_t cost, limit;
    bool cancelled;
    const ks_cel_device *dev;
    cel_val *slots;
    int nslots;
    const ks_cel_program *prog;
};

cel_val cel_eval_expr(cel_eval *ev, const cel_expr *e);

/* value.c */
cel_val cel_errorf(cel_eval *ev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cel_val cel_no_overload(void);
/* Heterogeneous equality: true/false, or an error value. */
cel_val cel_equal(cel_eval *ev, cel_val a, cel_val b);
/* Ordering: -1/0/1 in *out, false when a and b cannot be ordered. */
bool cel_compare(cel_val a, cel_val b, int *out);
void cel_val_print(ks_strbuf *b, cel_val v);
/* The type name cel-go prints for a runtime value ("int", "list"). */
const char *cel_val_type_name(cel_val v);
/* Size as upstream's cost model counts it (strings in code points). */
uint64_t cel_val_size(cel_val v);
size_t cel_utf8_count(const char *s, size_t n);

/* device access (eval.c) */
cel_val cel_devmap_get(cel_eval *ev, cel_val m, cel_val key, bool *found);
cel_val cel_devmap_keys(cel_eval *ev, cel_val m);
uint32_t cel_devmap_size(cel_val m);

/* container access for macros and functions */
cel_val cel_index(cel_eval *ev, cel_val c, cel_val key);
/* Membership test (in); error value for unsupported containers. */
cel_val cel_contains(cel_eval *ev, cel_val c, cel_val key);
cel_val cel_make_list(cel_eval *ev, const cel_val *v, uint32_t n);

#endif
