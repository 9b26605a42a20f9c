/* Resource vectors as the scheduler sees them (upstream framework.Resource):
 * cpu in milli-cores, memory and ephemeral storage in bytes, pod count, and
 * "scalar" resources — extended (nvidia.com/gpu), hugepages-*, attachable
 * volumes, *kubernetes.io/ prefixed — kept as a small sorted id/value list.
 * Other resource names are ignored, as upstream ignores them. */
#ifndef KS_RESOURCE_H
#define KS_RESOURCE_H

#include "util/intern.h"

#include <stdbool.h>
#include <stdint.h>

#define KS_MAX_SCALAR 16

typedef struct ks_resource {
    int64_t milli_cpu;
    int64_t memory;
    int64_t ephemeral_storage;
    int64_t allowed_pods;
    uint32_t nscalar;
    ks_id scalar_name[KS_MAX_SCALAR]; /* sorted ascending */
    int64_t scalar_val[KS_MAX_SCALAR];
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
 * units, rounding up; unknown names ignored). False when a value does not
 * fit an int64 or there are more than KS_MAX_SCALAR scalar resources. */
bool ks_resource_add_qlist(ks_resource *r, const ks_qlist *l);

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
/* Set/add a scalar; false when the KS_MAX_SCALAR limit is exceeded. */
bool ks_resource_set(ks_resource *r, ks_id name, int64_t v);
bool ks_resource_add_scalar(ks_resource *r, ks_id name, int64_t v);
void ks_resource_add(ks_resource *dst, const ks_resource *src);
void ks_resource_sub(ks_resource *dst, const ks_resource *src);
/* dst = max(dst, src) per resource. */
void ks_resource_max(ks_resource *dst, const ks_resource *src);
bool ks_resource_equal(const ks_resource *a, const ks_resource *b);

#endif
