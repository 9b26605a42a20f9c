/* The structured parameters allocator of k8s.io/dynamic-resource-allocation
 * v0.34.1 (package structured; with v1.34's default gates upstream runs its
 * "experimental" implementation, whose choices this follows): for one node,
 * find devices for every request of every claim to allocate, as the first
 * solution of an exhaustive search in upstream's order, or report that
 * there is none, or that the input is broken (an error).
 *
 * An allocator is made per pod (PreFilter) from the cluster state and the
 * claims; ks_dra_allocate is then called per node, concurrently. */
#ifndef KS_DRA_ALLOCATOR_H
#define KS_DRA_ALLOCATOR_H

#include "api/dra.h"
#include "api/node.h"
#include "cel/cel.h"
#include "util/hash.h"

#include <ksched/ksched.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ks_dra_features {
    bool admin_access;          /* DRAAdminAccess (beta, on) */
    bool prioritized_list;      /* DRAPrioritizedList (beta, on) */
    bool device_status;         /* DRAResourceClaimDeviceStatus (beta, on) */
    bool partitionable_devices; /* DRAPartitionableDevices (alpha) */
    bool device_taints;         /* DRADeviceTaints (alpha) */
    bool device_binding;        /* DRADeviceBindingConditions (alpha) */
    bool consumable_capacity;   /* DRAConsumableCapacity (alpha) */
} ks_dra_features;

/* v1.34's defaults. */
extern const ks_dra_features KS_DRA_DEFAULT_FEATURES;
/* As the feature gates are set (config/feature_gates.h). */
ks_dra_features ks_dra_features_of(const ks_handle *h); /* its scheduler's gates */

/* ---- device sets ------------------------------------------------------------ */

/* A set of device ids (driver, pool, device), by a 64-bit hash of the id,
 * counting how often each was added (a device two claims allocate stays
 * until both are removed). */
typedef struct ks_dra_device_set {
    uint64_t *key; /* open addressing; 0: empty, 1: removed */
    uint32_t *count;
    size_t cap, used, n; /* used: slots not empty; n: ids present */
    /* DRAConsumableCapacity: a share of a device (share_id) does not
     * allocate the device (set by the owner after init; copied). */
    bool shares;
} ks_dra_device_set;

uint64_t ks_dra_device_hash(const char *driver, const char *pool, const char *device);
bool ks_dra_device_set_has_hash(const ks_dra_device_set *s, uint64_t h);

void ks_dra_device_set_init(ks_dra_device_set *s);
void ks_dra_device_set_free(ks_dra_device_set *s);
/* dst (initialized) becomes a copy of src. */
void ks_dra_device_set_copy(ks_dra_device_set *dst, const ks_dra_device_set *src);
void ks_dra_device_set_add(ks_dra_device_set *s, const char *driver, const char *pool, const char *device);
bool ks_dra_device_set_has(const ks_dra_device_set *s, const char *driver, const char *pool, const char *device);
/* Every non-admin-access device of an allocation (upstream
 * foreachAllocatedDevice) added, or removed once; with
 * DRAConsumableCapacity, shares of a device (results with a shareID) are
 * not the device's allocation. */
void ks_dra_device_set_add_allocation(ks_dra_device_set *s, const ks_allocation_result *a);
void ks_dra_device_set_remove_allocation(ks_dra_device_set *s, const ks_allocation_result *a);

/* DRAConsumableCapacity: what shares of devices consume of their
 * capacities (upstream's aggregated capacity): one entry per (device,
 * capacity) of every shared allocation result, summed on lookup. */
typedef struct ks_dra_cap_use {
    uint64_t dev; /* device id hash */
    const char *name;
    __int128 nano;
} ks_dra_cap_use;

typedef struct ks_dra_capacities {
    ks_dra_cap_use *v;
    size_t n, cap;
    ks_arena *arena; /* the names */
    bool sorted;
} ks_dra_capacities;

void ks_dra_capacities_init(ks_dra_capacities *c);
void ks_dra_capacities_free(ks_dra_capacities *c);
/* Add what the shared results of an allocation consume. */
void ks_dra_capacities_add_allocation(ks_dra_capacities *c, const ks_allocation_result *a);
/* The sum consumed of capacity `name` of device dev. */
__int128 ks_dra_capacities_get(ks_dra_capacities *c, uint64_t dev, const char *name);

/* ---- compiled selectors --------------------------------------------------------- */

/* Compiled CEL selectors shared across pods: at most `cap` kept (least
 * recently used dropped); a program in use stays alive by reference. */
typedef struct ks_dra_cel_cache ks_dra_cel_cache;
typedef struct ks_dra_expr ks_dra_expr; /* a compiled program or its compile error */

ks_dra_cel_cache *ks_dra_cel_cache_new(size_t cap);
void ks_dra_cel_cache_free(ks_dra_cel_cache *c);
const ks_dra_expr *ks_dra_cel_get(ks_dra_cel_cache *c, const char *expression);
void ks_dra_expr_unref(const ks_dra_expr *e);
/* Evaluation contexts, one per concurrent evaluator. */
ks_cel_ctx *ks_dra_cel_ctx_get(ks_dra_cel_cache *c);
void ks_dra_cel_ctx_put(ks_dra_cel_cache *c, ks_cel_ctx *ctx);

/* ---- the allocator ----------------------------------------------------------------- */

typedef struct ks_dra_allocator ks_dra_allocator;

/* DRADeviceTaints: the DeviceTaintRules to apply to the slices, as
 * upstream's slice tracker applies them (a rule's taint is added to each
 * device its selector picks: driver, pool, device name, the class's and
 * its own CEL selectors; a CEL runtime error leaves the device alone; a
 * compile error leaves the slice out, as the tracker never publishes a
 * slice it failed to patch). */
typedef struct ks_dra_taint_rules {
    struct ks_device_taint_rule *const *rules;
    size_t nrules;
    struct ks_device_class *const *classes;
    size_t nclasses;
    ks_dra_cel_cache *cache;
} ks_dra_taint_rules;

/* The slices of a view indexed by node (each node looks at its own
 * slices and those not tied to one node), with the rules' taints when
 * rules is not NULL: immutable, shared by reference, holding a reference
 * to every slice and rule. */
typedef struct ks_dra_slices ks_dra_slices;
ks_dra_slices *ks_dra_slices_new(struct ks_resource_slice *const *slices, size_t n, const ks_dra_taint_rules *rules);
ks_dra_slices *ks_dra_slices_ref(ks_dra_slices *s);
void ks_dra_slices_unref(ks_dra_slices *s);
/* Whether s indexes exactly these slices (the same objects, in order),
 * patched by the same rules and classes (rules NULL: none). */
bool ks_dra_slices_same(const ks_dra_slices *s, struct ks_resource_slice *const *slices, size_t n,
                        const ks_dra_taint_rules *rules);
/* The taints rules add to device d of slice s (NULL and *n 0: none). */
const ks_device_taint *const *ks_dra_slices_rule_taints(const ks_dra_slices *x, const struct ks_resource_slice *s,
                                                        uint32_t d, uint32_t *n);

/* classes: the current objects; slices: their index; allocated: devices
 * in use (all borrowed for the allocator's life). */
ks_dra_allocator *ks_dra_allocator_new(const ks_dra_features *f, const ks_dra_device_set *allocated,
                                       struct ks_device_class *const *classes, size_t nclasses,
                                       const ks_dra_slices *slices, ks_dra_cel_cache *cache);
void ks_dra_allocator_free(ks_dra_allocator *a);
/* DRAConsumableCapacity: what shares already consume (borrowed). */
void ks_dra_allocator_set_capacities(ks_dra_allocator *a, ks_dra_capacities *caps);

typedef enum {
    KS_DRA_ALLOCATED = 0,  /* out holds one result per claim */
    KS_DRA_UNSCHEDULABLE,  /* no solution on this node */
    KS_DRA_ERROR,          /* broken input: *err */
    KS_DRA_TIMEOUT,        /* the deadline passed */
} ks_dra_outcome;

/* Allocate claims[0..n) on node. Results go to `out` (n entries) in arena
 * `a`; *err is malloc'd. deadline_ns: CLOCK_MONOTONIC time after which the
 * search gives up (0: none). Thread-safe. */
ks_dra_outcome ks_dra_allocate(ks_dra_allocator *al, const ks_node *node, const ks_resource_claim *const *claims,
                               size_t n, ks_arena *a, ks_allocation_result *out, int64_t deadline_ns, char **err);

/* "namespace/name" of a claim, as klog.KObj prints it. */
const char *ks_dra_claim_ref(const ks_resource_claim *c, char *buf, size_t n);

#endif
