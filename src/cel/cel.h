/* CEL (Common Expression Language) as Kubernetes evaluates DRA device
 * selectors (k8s.io/dynamic-resource-allocation/cel v0.34.1 on cel-go
 * v0.26.0): parse, type-check once, evaluate many times against devices.
 *
 * The language: literals, operators with CEL's commutative &&/|| error
 * rules, heterogeneous equality, cross-type numeric ordering, list and
 * map literals, field selection and indexing, optional selection (.?f,
 * [?k]) and the optional library, the macros has, all, exists,
 * exists_one, map, filter and cel.bind, the standard functions (size,
 * conversions, contains/startsWith/endsWith/matches, type), cel-go's
 * strings extension (version 2), sets, Kubernetes' lists, quantity,
 * semver and regex libraries, and upstream's runtime cost limit. Not
 * provided: timestamps, durations, protobuf messages, the URL/IP/CIDR/
 * authz/format libraries (an expression using them fails to compile with
 * an "undeclared reference" error).
 *
 * Compiling allocates; evaluation uses a caller-owned context whose
 * scratch arena is reset per evaluation, so evaluating a program against
 * many devices does not allocate once the context has warmed up. */
#ifndef KS_CEL_H
#define KS_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ks_cel_program ks_cel_program;
typedef struct ks_cel_ctx ks_cel_ctx;

/* One attribute of a device, its name split into domain and id (an
 * unqualified name takes the driver as domain, as upstream's
 * parseQualifiedName). `name` is the name as written, for messages. */
typedef enum {
    KS_CEL_ATTR_INT = 0,
    KS_CEL_ATTR_BOOL,
    KS_CEL_ATTR_STRING,
    KS_CEL_ATTR_VERSION,
    KS_CEL_ATTR_NONE, /* no supported value set */
} ks_cel_attr_kind;

typedef struct ks_cel_attr {
    const char *name;
    const char *domain, *id;
    ks_cel_attr_kind kind;
    bool b;
    int64_t i;
    const char *s; /* string value, or the version text */
} ks_cel_attr;

/* One capacity: amount in nano-units (ks_quantity). */
typedef struct ks_cel_capacity {
    const char *name;
    const char *domain, *id;
    __int128 nano;
} ks_cel_capacity;

typedef struct ks_cel_device {
    const char *driver;
    bool allow_multiple_allocations;
    uint32_t nattrs, ncaps;
    const ks_cel_attr *attrs;
    const ks_cel_capacity *caps;
} ks_cel_device;

typedef struct ks_cel_options {
    /* DRAConsumableCapacity: device.allowMultipleAllocations exists. */
    bool consumable_capacity;
    /* Declare the `device` variable (false: expressions without it, for
     * tests and tools). */
    bool no_device;
} ks_cel_options;

/* resource.k8s.io/v1 CELSelectorExpressionMaxCost. */
#define KS_CEL_SELECTOR_MAX_COST 1000000u

/* Parse and check expr. On failure returns NULL and sets *err (malloc'd)
 * to upstream's text: "compilation failed: ERROR: <input>:L:C: ...", or
 * "must evaluate to bool or the unknown type, not T" when the result type
 * is not bool (unless allow_any_result). */
ks_cel_program *ks_cel_compile(const char *expr, const ks_cel_options *opts, char **err);
/* The same without the bool result check (tests, tools). */
ks_cel_program *ks_cel_compile_any(const char *expr, const ks_cel_options *opts, char **err);
void ks_cel_program_free(ks_cel_program *p);
const char *ks_cel_program_source(const ks_cel_program *p);

/* An evaluation context: scratch memory and cost accounting. Not shared
 * between threads. */
ks_cel_ctx *ks_cel_ctx_new(void);
void ks_cel_ctx_free(ks_cel_ctx *c);

/* Evaluate a selector against a device, as upstream's DeviceMatches:
 * 1 matches, 0 does not, -1 error with *err set to a message valid until
 * the next evaluation on ctx (a version attribute that does not parse,
 * a runtime error such as "no such key: model", the cost limit). */
int ks_cel_device_matches(const ks_cel_program *p, const ks_cel_device *dev, uint64_t cost_limit,
                          ks_cel_ctx *ctx, const char **err);
/* Cost of the last evaluation on ctx. */
uint64_t ks_cel_ctx_cost(const ks_cel_ctx *ctx);

/* Evaluate and print the result in a CEL-like notation (tests, tools):
 * 1, 2u, 1.5, "s", b"x", true, null, [1, 2], {"a": 1}, int, quantity("1Gi"),
 * semver("1.2.3"), optional.of(1), optional.none(). On an evaluation
 * error returns NULL and sets *err. Result and *err are malloc'd. */
char *ks_cel_eval_print(const ks_cel_program *p, const ks_cel_device *dev, uint64_t cost_limit,
                        ks_cel_ctx *ctx, char **err);

/* Semantic versions (blang/semver v4 as upstream uses it). */
typedef struct ks_semver {
    uint64_t major, minor, patch;
    const char *pre; /* dot-separated pre-release identifiers, "" when none */
    uint32_t npre;   /* length of pre */
    const char *build;
    uint32_t nbuild;
} ks_semver;
/* Parse s (strict semver 2.0.0); on error *err is a static message
 * formatted into errbuf when it names the input. The strings of v point
 * into s. */
bool ks_semver_parse(const char *s, size_t n, ks_semver *v, char *errbuf, size_t nerr);
/* -1, 0, 1 (build metadata ignored). */
int ks_semver_compare(const ks_semver *a, const ks_semver *b);

#endif
