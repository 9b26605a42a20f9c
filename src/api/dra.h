/* Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass,
 * ResourceClaim, ResourceClaimTemplate, ResourceSlice, reduced to what
 * the scheduler reads and writes. Decoded once (src/codec/decode_dra.c);
 * devices carry their attributes and capacities ready for CEL (names
 * split into domain and id). Immutable and reference counted like the
 * other kinds of objects.h; a claim whose status changes is a new object
 * (ks_claim_with_status). */
#ifndef KS_DRA_H
#define KS_DRA_H

#include "api/objects.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "cel/cel.h"

#include <stdbool.h>
#include <stdint.h>

struct ks_tree;

/* resource.k8s.io/v1 limits the allocator checks. */
#define KS_DRA_ALLOCATION_RESULTS_MAX 32
/* The finalizer the scheduler puts on claims it allocates. */
#define KS_DRA_FINALIZER "resource.kubernetes.io/delete-protection"

typedef enum { KS_ALLOC_EXACT_COUNT = 0, KS_ALLOC_ALL } ks_alloc_mode;

/* DRADeviceTaints: a device's taint (from its slice or a DeviceTaintRule)
 * and a request's toleration. */
typedef struct ks_device_taint {
    const char *key, *value, *effect; /* "" when unset */
} ks_device_taint;

typedef struct ks_device_toleration {
    const char *key, *op, *value, *effect; /* "" when unset */
} ks_device_toleration;

/* Whether a toleration tolerates a taint (upstream's
 * resourceclaim.ToleratesTaint). */
bool ks_device_toleration_tolerates(const ks_device_toleration *t, const ks_device_taint *taint);

/* DRAPartitionableDevices: counters (exact quantities, in nano-units). */
typedef struct ks_device_counter {
    const char *name;
    __int128 nano;
} ks_device_counter;

/* A slice's shared counter set, or what a device consumes of one. */
typedef struct ks_counter_set {
    const char *name; /* the set's name (counterSet for a consumption) */
    uint32_t ncounters;
    ks_device_counter *counters;
} ks_counter_set;

/* DRAConsumableCapacity: an amount of a named capacity (as written, for
 * printing back), and a capacity's request policy. */
typedef struct ks_named_quantity {
    const char *name;
    ks_quantity q;
} ks_named_quantity;

typedef struct ks_capacity_policy {
    bool has_default;
    ks_quantity def;
    uint32_t nvalid;          /* validValues (ascending) */
    ks_quantity *valid;
    bool has_range, has_min, has_max, has_step;
    ks_quantity min, max, step;
} ks_capacity_policy;

/* A request's or subrequest's device choice. */
typedef struct ks_device_subrequest {
    const char *name;
    const char *device_class; /* "" when unset */
    ks_alloc_mode mode;
    bool bad_mode;            /* allocationMode other than ExactCount/All */
    const char *mode_text;    /* as written, for messages */
    int64_t count;            /* ExactCount (defaulted to 1) */
    uint32_t nselectors;
    const char **selectors;   /* CEL expressions; NULL entry: a selector without cel */
    bool has_capacity;        /* capacity set (DRAConsumableCapacity) */
    uint32_t ncap_requests;   /* capacity.requests */
    ks_named_quantity *cap_requests;
    uint32_t ntolerations;    /* DRADeviceTaints */
    ks_device_toleration *tolerations;
} ks_device_subrequest;

typedef struct ks_device_request {
    const char *name;
    bool has_exactly;
    ks_device_subrequest exactly;
    bool has_admin_access;    /* exactly.adminAccess set */
    bool admin_access;
    uint32_t nfirst;          /* firstAvailable */
    ks_device_subrequest *first;
} ks_device_request;

typedef struct ks_device_constraint {
    uint32_t nrequests;
    const char **requests;
    const char *match_attribute;    /* NULL when unset */
    const char *distinct_attribute; /* DRAConsumableCapacity; NULL when unset */
} ks_device_constraint;

/* An opaque device configuration (class or claim). parameters is the
 * document subtree, kept for printing back. */
typedef struct ks_device_config {
    uint32_t nrequests;
    const char **requests;
    const char *driver;
    const struct ks_tree *parameters;
    bool from_class;          /* allocation result: source FromClass */
} ks_device_config;

typedef struct ks_device_result {
    const char *request, *driver, *pool, *device;
    uint64_t id_hash; /* ks_device_id_hash(driver, pool, device) */
    bool has_admin_access, admin_access;
    /* DRAConsumableCapacity: a share of a device that allows multiple
     * allocations (NULL: the device is the claim's alone) and what it
     * consumes of the device's capacities */
    const char *share_id;
    uint32_t nconsumed;
    ks_named_quantity *consumed;
} ks_device_result;

typedef struct ks_allocation_result {
    uint32_t nresults;
    ks_device_result *results;
    uint32_t nconfig;
    ks_device_config *config;
    bool has_node_selector;
    ks_node_selector node_selector;
} ks_allocation_result;

typedef struct ks_claim_consumer {
    const char *api_group, *resource, *name, *uid;
} ks_claim_consumer;

typedef struct ks_resource_claim {
    ks_arena *arena;
    ks_id ns, name;
    const char *uid;
    const char *resource_version;
    ks_owner_ref *owners;
    uint32_t nowners;
    bool deleting;
    uint32_t nfinalizers;
    const char **finalizers;
    ks_labels annotations;
    /* spec.devices */
    uint32_t nrequests, nconstraints, nconfig;
    ks_device_request *requests;
    ks_device_constraint *constraints;
    ks_device_config *config;
    /* status */
    const ks_allocation_result *allocation; /* NULL: not allocated */
    uint32_t nreserved;
    ks_claim_consumer *reserved;
    bool has_device_status;   /* status.devices set */
    /* the spec as written (for printing back): the object's own, or the
     * template's for a generated claim; NULL when not kept */
    const struct ks_tree *spec_tree;
    KS_OBJ_META;
} ks_resource_claim;

/* The template only matters to the claim controller (simulate creates
 * claims from templates as kube-controller-manager would). */
typedef struct ks_claim_template {
    ks_arena *arena;
    ks_id ns, name;
    ks_labels labels, annotations; /* spec.metadata */
    const struct ks_tree *spec;    /* spec.spec, decoded per generated claim */
    /* the claim spec, decoded (nothing allocated, no status) */
    const ks_resource_claim *claim;
    KS_OBJ_META;
} ks_claim_template;

typedef struct ks_device {
    const char *name;
    uint64_t id_hash;         /* ks_dra_device_hash(driver, pool, name) */
    ks_cel_device cel;        /* driver, attributes, capacity */
    /* DRAPartitionableDevices: the counters it consumes */
    uint32_t nconsumes;
    ks_counter_set *consumes;
    bool has_binding_conditions; /* DRADeviceBindingConditions */
    bool binds_to_node;       /* bindsToNode: the allocation is pinned to the node */
    /* DRADeviceTaints: the slice's own taints */
    uint32_t ntaints;
    ks_device_taint *taints;
    /* DRAConsumableCapacity: per capacity (parallel to cel.caps) its value
     * as written and its request policy (NULL: none) */
    ks_quantity *cap_values;
    const ks_capacity_policy **cap_policies;
    /* per-device node selection (DRAPartitionableDevices) */
    ks_id node_name;
    bool all_nodes;
    bool has_node_selector;
    ks_node_selector node_selector;
} ks_device;

typedef struct ks_resource_slice {
    ks_arena *arena;
    ks_id name;
    const char *driver;
    const char *pool;
    int64_t generation;
    int64_t slice_count;
    ks_id node_name;          /* KS_ID_NONE when unset */
    bool all_nodes;
    bool has_node_selector;
    ks_node_selector node_selector;
    bool has_per_device_node_selection; /* the field is set (even to false) */
    bool per_device_node_selection;
    uint32_t nshared_counters;           /* DRAPartitionableDevices */
    ks_counter_set *shared_counters;
    uint32_t ndevices;
    ks_device *devices;
    /* the first device whose name an earlier device of the slice has
     * (NULL: none), for the allocator's check of a pool's names */
    const char *duplicate_device;
    KS_OBJ_META;
} ks_resource_slice;

typedef struct ks_device_class {
    ks_arena *arena;
    ks_id name;
    uint32_t nselectors;
    const char **selectors;
    uint32_t nconfig;
    ks_device_config *config;
    KS_OBJ_META;
} ks_device_class;

/* DeviceTaintRule (resource.k8s.io/v1alpha3, DRADeviceTaints): a taint
 * added to the devices its selector picks. */
typedef struct ks_device_taint_rule {
    ks_arena *arena;
    ks_id name;
    bool has_selector;                     /* spec.deviceSelector set */
    const char *device_class, *driver, *pool, *device; /* NULL when unset */
    uint32_t nselectors;
    const char **selectors;                /* CEL; NULL entry: not a CEL selector */
    ks_device_taint taint;
    KS_OBJ_META;
} ks_device_taint_rule;

/* A 64-bit hash of a device id (driver, pool, device), for sets of
 * devices in use. */
uint64_t ks_device_id_hash(const char *driver, const char *pool, const char *device);

/* A device's attribute by fully qualified name ("domain/id"; an id alone
 * or the driver's domain also finds the driver's unqualified ones), as
 * upstream's lookupAttribute. NULL when the device has none. */
const ks_cel_attr *ks_device_attribute(const ks_device *d, const char *qualified);

/* Whether the claim is reserved for the pod (status.reservedFor has its
 * uid). */
bool ks_claim_reserved_for(const ks_resource_claim *c, const char *pod_uid);
/* Whether the claim's controller owner is the pod (uid). */
bool ks_claim_owned_by(const ks_resource_claim *c, const char *pod_uid);

/* A new version of claim c (a shallow copy referencing c) with a new
 * status: allocation (NULL: none; copied), reservedFor replaced by
 * reserved[0..n) (copied), the finalizer added when add_finalizer. The
 * copy keeps no source tree. */
ks_resource_claim *ks_claim_with_status(const ks_resource_claim *c, const ks_allocation_result *allocation,
                                        const ks_claim_consumer *reserved, uint32_t nreserved, bool add_finalizer);
/* Copy an allocation result into arena a. */
ks_allocation_result *ks_allocation_copy(ks_arena *a, const ks_allocation_result *r);

/* The claim name the pod's entry uses (spec.resourceClaims[i]): its
 * resourceClaimName, or the name the claim controller recorded in
 * status.resourceClaimStatuses for a template. NULL with *must_check_owner
 * unchanged when neither exists (the claim is not created yet); *skip
 * when the status entry exists without a name (no claim needed). */
const char *ks_pod_claim_name(const ks_pod *p, uint32_t i, bool *must_check_owner, bool *skip);

#endif
