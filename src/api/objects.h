/* The other kinds the scheduler reads: PriorityClass, Namespace, storage
 * (PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode,
 * CSIDriver, CSIStorageCapacity, VolumeAttachment),
 * PodDisruptionBudget, PodGroup (gang scheduling), and the workload objects
 * whose selectors default topology spreading uses (Service, ReplicaSet,
 * StatefulSet, ReplicationController). Each is owned by its arena. */
#ifndef KS_OBJECTS_H
#define KS_OBJECTS_H

#include "api/pod.h"
#include "api/selector.h"

#include <stdatomic.h>

/* Where every object came from: its tree (the document subtree, kept alive
 * by doc), the file and line, and its place in the input order. */
#define KS_OBJ_META                                                          \
    atomic_int refs; /* references beyond the first: 0 when decoded */     \
    /* a shallow copy keeps its original (whose arena its fields point     \
     * into) referenced: base, released with base_unref */                \
    void *base;                                                              \
    void (*base_unref)(void *);                                              \
    struct ks_tree *tree;                                                    \
    const char *source_file;                                                 \
    int source_line;                                                         \
    uint32_t input_index;                                                    \
    ks_docref *doc

typedef struct ks_priority_class {
    ks_arena *arena;
    ks_id name;
    int32_t value;
    bool global_default;
    ks_preemption_policy preemption_policy;
    KS_OBJ_META;
} ks_priority_class;

typedef struct ks_namespace {
    ks_arena *arena;
    ks_id name;
    ks_labels labels;
    KS_OBJ_META;
} ks_namespace;

typedef enum {
    KS_ACCESS_RWO = 1,
    KS_ACCESS_ROX = 2,
    KS_ACCESS_RWX = 4,
    KS_ACCESS_RWOP = 8,
} ks_access_mode;

typedef struct ks_pv {
    ks_arena *arena;
    ks_id name;
    int64_t capacity;          /* bytes of capacity.storage */
    uint32_t access_modes;     /* KS_ACCESS_* bits */
    ks_id storage_class;
    bool has_claim_ref;
    ks_id claim_ns, claim_name; /* claimRef */
    const char *claim_uid;     /* claimRef.uid, NULL when unset */
    bool has_node_affinity;
    ks_node_selector node_affinity;
    const char *csi_driver, *volume_handle;
    /* The volume source: KS_VOL_CSI, an in-tree kind (disk_id/extra as in
     * ks_volume) or KS_VOL_OTHER (local, hostPath, nfs, ...). */
    ks_volume_kind source;
    const char *source_id, *source_extra;
    ks_id volume_mode;         /* "Filesystem" when unset (API default) */
    ks_id vac;                 /* volumeAttributesClassName, "" when unset */
    bool deleting;             /* metadata.deletionTimestamp set */
    ks_id phase;               /* "Pending" when unset (API default) */
    ks_labels labels;
    ks_labels annotations;
    KS_OBJ_META;
} ks_pv;

typedef struct ks_pvc {
    ks_arena *arena;
    ks_id ns, name;
    const char *uid;           /* metadata.uid, NULL when unset */
    bool has_storage_class;
    ks_id storage_class;
    uint32_t access_modes;
    bool has_request;
    int64_t request;           /* bytes of resources.requests.storage */
    ks_id volume_name;
    ks_id volume_mode;         /* "Filesystem" when unset (API default) */
    ks_id vac;                 /* volumeAttributesClassName, "" when unset */
    bool has_selector;
    ks_label_selector selector; /* spec.selector (PVs' labels) */
    const char *controller_uid; /* uid of the controller owner, NULL if none */
    bool deleting;             /* metadata.deletionTimestamp set */
    ks_id phase;               /* "Pending" when unset (API default) */
    ks_labels annotations;     /* volume.kubernetes.io/selected-node etc. */
    KS_OBJ_META;
} ks_pvc;

typedef enum { KS_BIND_IMMEDIATE = 0, KS_BIND_WAIT_FOR_FIRST_CONSUMER } ks_binding_mode;

typedef struct ks_storage_class {
    ks_arena *arena;
    ks_id name;
    const char *provisioner;
    ks_binding_mode binding_mode;
    uint32_t nallowed_topologies;
    ks_node_selector_term *allowed_topologies;
    bool is_default;
    KS_OBJ_META;
} ks_storage_class;

typedef struct ks_csi_driver_info {
    const char *name;
    bool has_allocatable;
    int32_t allocatable_count;
    uint32_t ntopology_keys;
    ks_id *topology_keys;
} ks_csi_driver_info;

typedef struct ks_csinode {
    ks_arena *arena;
    ks_id name;
    ks_labels annotations;     /* storage.alpha.kubernetes.io/migrated-plugins */
    uint32_t ndrivers;
    ks_csi_driver_info *drivers;
    KS_OBJ_META;
} ks_csinode;

/* A CSIDriver reduced to what VolumeBinding reads: whether the driver
 * publishes storage capacity (spec.storageCapacity). */
typedef struct ks_csi_driver {
    ks_arena *arena;
    ks_id name;
    bool storage_capacity;
    KS_OBJ_META;
} ks_csi_driver;

/* A CSIStorageCapacity (namespaced): how much a driver can still
 * provision for a storage class on the nodes its nodeTopology selects.
 * No nodeTopology (nothing set in the selector) means no node has access.
 * Sizes are bytes (Quantity.Value()); has_* says whether the field is
 * set. */
typedef struct ks_csi_capacity {
    ks_arena *arena;
    ks_id ns, name;
    ks_id storage_class;
    ks_label_selector node_topology; /* .nothing when nodeTopology is unset */
    bool has_capacity, has_max_size;
    int64_t capacity, max_size;      /* capacity, maximumVolumeSize */
    KS_OBJ_META;
} ks_csi_capacity;

/* A VolumeAttachment (cluster-scoped) reduced to what NodeVolumeLimits
 * counts: the attacher (a CSI driver name, "" when unset), the node and
 * the PersistentVolume attached (has_pv false when
 * spec.source.persistentVolumeName is unset). */
typedef struct ks_volume_attachment {
    ks_arena *arena;
    ks_id name;
    const char *attacher;
    ks_id node_name;
    bool has_pv;
    ks_id pv_name;
    KS_OBJ_META;
} ks_volume_attachment;

typedef struct ks_int_or_percent {
    bool set;
    bool is_percent;
    int32_t value;
} ks_int_or_percent;

typedef struct ks_pdb {
    ks_arena *arena;
    ks_id ns, name;
    ks_label_selector selector;
    ks_int_or_percent min_available, max_unavailable;
    int32_t disruptions_allowed; /* status.disruptionsAllowed */
    uint32_t ndisrupted;
    ks_id *disrupted_pods;       /* status.disruptedPods names */
    KS_OBJ_META;
} ks_pdb;

typedef struct ks_pod_group {
    ks_arena *arena;
    ks_id ns, name;
    int32_t min_member;
    ks_resource min_resources;
    bool has_min_resources;
    int32_t schedule_timeout_seconds; /* 0 = unset */
    int64_t creation_ts;
    KS_OBJ_META;
} ks_pod_group;

typedef enum {
    KS_WORKLOAD_SERVICE = 0,
    KS_WORKLOAD_REPLICASET,
    KS_WORKLOAD_STATEFULSET,
    KS_WORKLOAD_RC,
    /* read only to generate pods (src/sim/workloads), not by spreading */
    KS_WORKLOAD_DEPLOYMENT,
    KS_WORKLOAD_DAEMONSET,
    KS_WORKLOAD_JOB,
    KS_WORKLOAD_CRONJOB,
    KS_WORKLOAD_NKINDS,
} ks_workload_kind;

/* "Service", "ReplicaSet", ... (the API kind); "service", ... (messages). */
const char *ks_workload_kind_name(ks_workload_kind k);
const char *ks_workload_kind_lower(ks_workload_kind k);

/* A Service, ReplicaSet, StatefulSet or ReplicationController reduced to
 * what default spreading needs: its namespace and pod selector; and the
 * workloads the simulator makes pods of (every kind but Service), whose
 * document (tree) the pod generator reads. */
typedef struct ks_workload {
    ks_arena *arena;
    ks_workload_kind kind;
    ks_id ns, name;
    ks_label_selector selector;
    const char *uid;              /* NULL when the manifest has none */
    ks_id owner_kind, owner_name; /* the controller owner reference; KS_ID_NONE */
    int32_t replicas;             /* spec.replicas as written; -1 when unset */
    int32_t desired;              /* pods its controller wants (set by the
                                   * simulator's controllers); -1 unknown */
    KS_OBJ_META;
} ks_workload;

/* Objects of these kinds are immutable once decoded and shared by
 * reference counting: the decoder's reference is the first (refs counts
 * the others), KS_OBJECT_REF adds one, KS_OBJECT_UNREF drops one and frees
 * the object with the last: its document reference and its arena (the
 * object itself lives in that arena). */
#define KS_OBJECT_REF(o) (atomic_fetch_add_explicit(&(o)->refs, 1, memory_order_relaxed), (o))
#define KS_OBJECT_UNREF(o)                                                   \
    do {                                                                     \
        if ((o) && atomic_fetch_sub_explicit(&(o)->refs, 1, memory_order_acq_rel) == 0) { \
            void *base_ = (o)->base;                                         \
            void (*base_unref_)(void *) = (o)->base_unref;                   \
            ks_docref_unref((o)->doc);                                       \
            ks_arena_free((o)->arena);                                       \
            if (base_) base_unref_(base_);                                   \
        }                                                                    \
    } while (0)

/* What changed, and in which kind of object (watch events, listers). */
typedef enum ks_watch_type { KS_WATCH_ADDED = 0, KS_WATCH_MODIFIED, KS_WATCH_DELETED } ks_watch_type;

typedef enum ks_kind {
    KS_KIND_NODE = 0,
    KS_KIND_POD,
    KS_KIND_PVC,
    KS_KIND_PV,
    KS_KIND_STORAGE_CLASS,
    KS_KIND_CSINODE,
    KS_KIND_POD_GROUP,
    KS_KIND_NAMESPACE,
    KS_KIND_PDB,
    KS_KIND_PRIORITY_CLASS,
    KS_KIND_WORKLOAD,
    KS_KIND_CSI_DRIVER,
    KS_KIND_RESOURCE_CLAIM, /* api/dra.h */
    KS_KIND_RESOURCE_SLICE,
    KS_KIND_DEVICE_CLASS,
    KS_KIND_CSI_CAPACITY,
    KS_KIND_VOLUME_ATTACHMENT,
    KS_KIND_DEVICE_TAINT_RULE, /* api/dra.h (DRADeviceTaints) */
} ks_kind;

struct ks_resource_claim;
struct ks_resource_slice;
struct ks_device_class;
struct ks_device_taint_rule;

#define KS_VEC(T) struct { T *v; uint32_t n, cap; }

/* The objects of the kinds above that plugins read, as one immutable view:
 * what the scheduler's listers hand a cycle (ks_handle_objects). Order
 * within a kind is unspecified, as with informer listers. */
typedef struct ks_objects {
    KS_VEC(ks_priority_class *) priority_classes;
    KS_VEC(ks_namespace *) namespaces;
    KS_VEC(ks_pv *) pvs;
    KS_VEC(ks_pvc *) pvcs;
    KS_VEC(ks_storage_class *) storage_classes;
    KS_VEC(ks_csinode *) csinodes;
    KS_VEC(ks_csi_driver *) csi_drivers;
    KS_VEC(ks_csi_capacity *) csi_capacities;
    KS_VEC(ks_volume_attachment *) volume_attachments;
    KS_VEC(ks_pdb *) pdbs;
    KS_VEC(ks_pod_group *) pod_groups;
    KS_VEC(ks_workload *) workloads;
    KS_VEC(struct ks_resource_claim *) resource_claims;
    KS_VEC(struct ks_resource_slice *) resource_slices;
    KS_VEC(struct ks_device_class *) device_classes;
    KS_VEC(struct ks_device_taint_rule *) device_taint_rules;
} ks_objects;

/* Lookups by name (linear). ks_objects_priority_class knows the two
 * built-in classes (system-node-critical, system-cluster-critical) that
 * every API server creates. */
const ks_namespace *ks_objects_namespace(const ks_objects *o, ks_id name);
const ks_priority_class *ks_objects_priority_class(const ks_objects *o, ks_id name);
/* One of the two built-in classes, or NULL. */
const ks_priority_class *ks_builtin_priority_class(ks_id name);

#endif
