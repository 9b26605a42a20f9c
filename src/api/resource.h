/* Resource vectors as the scheduler sees them (upstream framework.Resource):
 * cpu in milli-cores, memory and ephemeral storage in bytes, pod count, and
 * "scalar" resources — extended (nvidia.com/gpu), hugepages-*, attachable
 * volumes, *kubernetes.io/ prefixed — kept as a sorted id/value list.
 * Other resource names are ignored, as upstream ignores them. */
#ifndef KS_RESOURCE_H
#define KS_RESOURCE_H

#include "util/arena.h"
#include "util/intern.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ks_scalar {
    ks_id name;
    int64_t val;
} ks_scalar;

/* Scalars are kept out of line (a pod carries several vectors and most
 * have no scalars). Who owns them:
 * - scalar_cap == 0: the array lives in an arena (a pod's, a node's) or
 *   is empty; it is never written through, so struct copies share it and
 *   stay valid while the arena lives.
 * - scalar_cap > 0: a heap block this vector owns (NodeInfo sums, local
 *   totals). Copy such a vector with ks_resource_copy, never by struct
 *   assignment, and release it with ks_resource_fini.
 * The functions that change scalars take an arena: with one they write a
 * new array there (copy on write, the vector stays arena-backed); with
 * NULL they make the vector own a heap block. */
typedef struct ks_resource {
    int64_t milli_cpu;
    int64_t memory;
    int64_t ephemeral_storage;
    int64_t allowed_pods;
    uint32_t nscalar;
    uint32_t scalar_cap;
    ks_scalar *scalars; /* sorted by name */
} ks_resource;

/* Well-known resource name ids, valid after ks_api_init(). */
extern ks_id KS_RES_CPU, KS_RES_MEMORY, KS_RES_EPHEMERAL, KS_RES_PODS;

/* Intern the well-known ids (resources, field keys, defaults). Idempotent
 * and thread-safe; the api constructors call it, so explicit calls are
 * only needed before using the ids directly. */
void ks_api_init(void);

/* A resource list exactly as written (v1.ResourceList): every name, with
 * the amount in nano-units. Request aggregation works on these, as
 * upstream sums Quantities before converting them to integers. */
typedef struct ks_qentry {
    ks_id name;
    __int128 nano;
} ks_qentry;

typedef struct ks_qlist {
    uint32_t n;
    ks_qentry *v; /* no duplicate names; order as written */
} ks_qlist;

/* The entry for name, or NULL. */
const ks_qentry *ks_qlist_find(const ks_qlist *l, ks_id name);
/* Resource.Add: convert a list into r (cpu to milli-units, others to
 * units, rounding up; unknown names ignored). False when a value or a sum
 * does not fit an int64. */
bool ks_resource_add_qlist(ks_resource *r, ks_arena *a, const ks_qlist *l);

typedef enum {
    KS_RCLASS_IGNORED = 0,
    KS_RCLASS_CPU,
    KS_RCLASS_MEMORY,
    KS_RCLASS_EPHEMERAL,
    KS_RCLASS_PODS,
    KS_RCLASS_SCALAR,
} ks_rclass;

/* How upstream treats a resource name (IsScalarResourceName and friends). */
ks_rclass ks_resource_class(const char *name);
bool ks_resource_is_extended(const char *name);   /* not native, not hugepages */
bool ks_resource_is_hugepages(const char *name);

int64_t ks_resource_get(const ks_resource *r, ks_id name);
/* By name, as upstream's plugins ask (0 for a NULL, unknown or non-scalar name). */
int64_t ks_resource_get_named(const ks_resource *r, const char *name);
/* `a` as above: an arena, or NULL for a heap-owned vector. */
void ks_resource_set(ks_resource *r, ks_arena *a, ks_id name, int64_t v);
void ks_resource_add(ks_resource *dst, ks_arena *a, const ks_resource *src);
void ks_resource_sub(ks_resource *dst, ks_arena *a, const ks_resource *src);
/* dst = src, dst owning its scalars (its old heap block is reused). */
void ks_resource_copy(ks_resource *dst, const ks_resource *src);
/* Release a heap-owned vector's scalars (no-op for arena-backed ones). */
void ks_resource_fini(ks_resource *r);
bool ks_resource_equal(const ks_resource *a, const ks_resource *b);

#endif
