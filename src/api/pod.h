/* The pod as the scheduler sees it. Decoded once from a manifest or an API
 * object; everything the plugins compare is interned and everything they
 * compute per pod (requests, parsed affinity terms) is precomputed here, like
 * upstream's PodInfo. A ks_pod is immutable after decoding and reference
 * counted: caches and snapshots share it. Its memory lives in its arena. */
#ifndef KS_POD_H
#define KS_POD_H

#include "api/docref.h"
#include "api/resource.h"
#include "api/selector.h"
#include "api/taint.h"
#include "util/arena.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ks_tree;

typedef enum {
    KS_PHASE_UNKNOWN = 0, /* unset */
    KS_PHASE_PENDING,
    KS_PHASE_RUNNING,
    KS_PHASE_SUCCEEDED,
    KS_PHASE_FAILED,
} ks_pod_phase;

typedef enum { KS_PREEMPT_LOWER_PRIORITY = 0, KS_PREEMPT_NEVER } ks_preemption_policy;

typedef struct ks_owner_ref {
    ks_id kind;
    const char *api_version;
    const char *name;
    const char *uid;
    bool controller;
} ks_owner_ref;

typedef struct ks_container_port {
    int32_t container_port;
    int32_t host_port; /* 0 when not a host port */
    ks_id protocol;    /* "TCP" when unset */
    ks_id host_ip;     /* "" when unset: treated as 0.0.0.0 */
} ks_container_port;

typedef struct ks_container {
    const char *name;
    const char *image;        /* as written */
    ks_id image_id;           /* normalized as ImageLocality does (x -> x:latest) */
    bool has_cpu_request, has_memory_request;
    bool sidecar;             /* init container with restartPolicy: Always */
    /* status.(init)containerStatuses[].resources.requests and
     * .allocatedResources, which upstream folds into the request while an
     * in-place resize is in progress. */
    bool has_status_resources;
    ks_resource requests;     /* after defaulting requests from limits */
    ks_resource limits;
    uint32_t nports;
    ks_container_port *ports;
    /* Exact lists as written (requests after defaulting from limits). When
     * req_q.v is NULL (a pod built in code) `requests` and the has_*
     * flags stand in for them. */
    ks_qlist req_q, lim_q;
    ks_qlist status_req_q, allocated_q; /* see has_status_resources */
} ks_container;

typedef struct ks_pod_affinity_term {
    ks_label_selector selector;
    bool has_ns_selector;
    ks_label_selector ns_selector;
    uint32_t nnamespaces;
    ks_id *namespaces;
    ks_id topology_key;
    uint32_t nmatch_label_keys, nmismatch_label_keys;
    ks_id *match_label_keys, *mismatch_label_keys;
    int32_t weight; /* preferred terms only */
} ks_pod_affinity_term;

typedef struct ks_preferred_node_term {
    int32_t weight;
    ks_node_selector_term term;
} ks_preferred_node_term;

typedef enum { KS_DO_NOT_SCHEDULE = 0, KS_SCHEDULE_ANYWAY } ks_unsatisfiable;
typedef enum { KS_POLICY_HONOR = 0, KS_POLICY_IGNORE } ks_inclusion_policy;

typedef struct ks_spread_constraint {
    int32_t max_skew;
    ks_id topology_key;
    ks_unsatisfiable when_unsatisfiable;
    ks_label_selector selector;
    bool has_min_domains;
    int32_t min_domains;
    bool has_node_affinity_policy, has_node_taints_policy;
    ks_inclusion_policy node_affinity_policy; /* default Honor */
    ks_inclusion_policy node_taints_policy;   /* default Ignore */
    uint32_t nmatch_label_keys;
    ks_id *match_label_keys;
} ks_spread_constraint;

typedef enum {
    KS_VOL_OTHER = 0,
    KS_VOL_PVC,
    KS_VOL_EPHEMERAL,      /* generic ephemeral: claim <pod>-<volume> */
    KS_VOL_GCE_PD,
    KS_VOL_AWS_EBS,
    KS_VOL_RBD,
    KS_VOL_ISCSI,
    /* in-tree sources csi-translation-lib can migrate to CSI */
    KS_VOL_AZURE_DISK,
    KS_VOL_AZURE_FILE,
    KS_VOL_CINDER,
    KS_VOL_VSPHERE,
    KS_VOL_PORTWORX,
    KS_VOL_CSI,            /* a PV's csi source (PVs only) */
} ks_volume_kind;

typedef struct ks_volume {
    const char *name;
    ks_volume_kind kind;
    const char *claim_name; /* PVC (or the generated name for ephemeral) */
    bool read_only;
    const char *disk_id;    /* GCE pdName / EBS volumeID / RBD image / ISCSI iqn /
                             * Azure diskURI / Azure shareName / Cinder, Portworx
                             * volumeID / vSphere volumePath */
    const char *extra;      /* RBD pool; ISCSI targetPortal; Azure disk kind */
    uint32_t nmonitors;     /* RBD monitors */
    const char **monitors;
    const char *csi_driver; /* inline CSI volume's driver, else NULL */
    const struct ks_tree *tree; /* the volume as written */
} ks_volume;

/* spec.resourceClaims[] (DRA): a claim by name or from a template. */
typedef struct ks_pod_claim {
    const char *name;
    const char *claim_name;    /* resourceClaimName, NULL when unset */
    const char *template_name; /* resourceClaimTemplateName, NULL when unset */
} ks_pod_claim;

/* status.resourceClaimStatuses[]: the claim the controller generated
 * for a template entry (claim_name NULL: none was needed). */
typedef struct ks_pod_claim_status {
    const char *name;
    const char *claim_name;
} ks_pod_claim_status;

typedef struct ks_pod_condition {
    ks_id type, status;
    const char *reason, *message;
} ks_pod_condition;

/* spec.overhead and spec.resources (PodLevelResources), which few pods
 * set: kept outside the pod, so that the others (and every assumed copy)
 * do not carry their 144 bytes. */
typedef struct ks_pod_level {
    ks_resource overhead;
    ks_resource requests;    /* spec.resources.requests */
    /* Exact lists behind the two above (v NULL: use the ks_resource). */
    ks_qlist overhead_q, req_q, lim_q;
    bool has_overhead;
    bool has_requests;       /* upstream IsPodLevelRequestsSet */
} ks_pod_level;

typedef struct ks_pod {
    /* Fields are ordered to leave no padding: there is one ks_pod per pod
     * and per clone. */
    atomic_int refs;
    uint32_t input_index;      /* order of appearance in the input */
    ks_arena *arena;

    /* metadata */
    ks_id ns, name;            /* interned */
    const char *uid;
    const char *resource_version; /* metadata.resourceVersion, NULL when unset */
    uint64_t key;              /* ns/name identity for maps: (ns << 32) | name */
    ks_labels labels;
    ks_annotations annotations; /* values not interned; read rarely */
    ks_owner_ref *owners;
    uint32_t nowners;
    bool has_deletion_ts;
    bool name_counted;         /* name holds a reference (ks_intern_ref) */
    int64_t creation_ts;       /* unix seconds; 0 when unset */
    int64_t deletion_ts;

    /* spec */
    ks_id scheduler_name;      /* defaulted to default-scheduler */
    ks_id node_name;           /* spec.nodeName, 0 when unset */
    int32_t priority;          /* spec.priority (resolved by admission) */
    ks_id priority_class;
    ks_preemption_policy preemption_policy;
    bool has_priority;
    bool has_preemption_policy;
    bool host_network;
    bool has_node_affinity;
    ks_labels node_selector;
    ks_node_selector required_node_affinity; /* nterms 0 = none */
    bool has_required_node_affinity;
    uint32_t npreferred_node;
    ks_preferred_node_term *preferred_node;
    uint32_t nreq_affinity, nreq_anti, npref_affinity, npref_anti;
    ks_pod_affinity_term *req_affinity, *req_anti, *pref_affinity, *pref_anti;
    uint32_t ntolerations;
    uint32_t nspread;
    ks_toleration *tolerations;
    ks_spread_constraint *spread;
    uint32_t ncontainers, ninit;
    ks_container *containers, *init_containers;
    ks_pod_level *level;       /* NULL: neither overhead nor pod-level resources */
    uint32_t nvolumes;
    ks_volume *volumes;
    uint32_t ngates;
    uint32_t nresource_claims; /* spec.resourceClaims entries (DRA) */
    ks_id *scheduling_gates;
    ks_pod_claim *resource_claims;
    ks_pod_claim_status *claim_statuses; /* status.resourceClaimStatuses */
    uint32_t nclaim_statuses;
    ks_container_port *host_ports;
    uint32_t nhost_ports;      /* all containers' host ports, flattened */

    /* status */
    ks_pod_phase phase;
    bool has_start_time;
    bool resize_infeasible;    /* condition PodResizePending reason Infeasible */
    ks_id nominated_node;
    int64_t start_time;        /* status.startTime, unix seconds (preemption order) */
    uint32_t nconditions;
    int source_line;           /* of the decoded source, below */
    ks_pod_condition *conditions;

    /* precomputed (upstream PodInfo) */
    ks_resource requests;          /* the effective request, with overhead */
    ks_resource nonzero_requests;  /* cpu/memory with 100m/200Mi defaults */

    /* the decoded source, for printing back (may be NULL). Strings of the
     * pod may point into the document, which `doc` keeps alive. */
    struct ks_tree *tree;
    const char *source_file;
    ks_docref *doc;
    struct ks_pod *clone_of;   /* a clone keeps its original alive */
} ks_pod;

static inline ks_pod *ks_pod_ref(ks_pod *p) {
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return p;
}
void ks_pod_unref(ks_pod *p);

/* A fresh, empty pod with refs=1 and its own arena. */
ks_pod *ks_pod_new(void);
/* A copy sharing nothing mutable: used to change node_name/nominated_node/
 * priority (for example when binding in the simulator). Pointers into the
 * original's arena are kept alive by referencing the original. */
ks_pod *ks_pod_clone(const ks_pod *p);
/* The same with room in the clone's arena for `room` bytes of changes
 * (a condition, a message) without a second block. */
ks_pod *ks_pod_clone_room(const ks_pod *p, size_t room);
/* A decoder's finished pod: later pods' arenas start at about its size. */
void ks_pod_note_arena(const ks_pod *p);

/* Compute requests and nonzero_requests from containers, init containers,
 * sidecars, overhead and pod-level requests (upstream PodRequests, and the
 * non-zero variant scoring uses). False when a total does not fit an
 * int64. */
bool ks_pod_compute_requests(ks_pod *p);
/* p's pod-level block, made (zeroed, in p's arena) when it has none: for
 * code that builds a pod. */
ks_pod_level *ks_pod_level_make(ks_pod *p);
static inline bool ks_pod_has_overhead(const ks_pod *p) { return p->level && p->level->has_overhead; }
static inline bool ks_pod_has_level_requests(const ks_pod *p) { return p->level && p->level->has_requests; }

/* AggregateContainerRequests (limits false) or AggregateContainerLimits
 * without in-place resize status, as API defaulting computes them: up to
 * max entries into out; returns their number, or max + 1 when they did not
 * fit. */
uint32_t ks_pod_aggregate_containers(const ks_pod *p, bool limits, ks_qentry *out, uint32_t max);
/* PodLevelResources supports cpu, memory and hugepages-* at the pod level. */
bool ks_pod_level_supported(ks_id name);

static inline uint64_t ks_pod_key(ks_id ns, ks_id name) { return ((uint64_t)ns << 32) | name; }
/* "namespace/name" into buf. */
const char *ks_pod_fullname(const ks_pod *p, char *buf, int n);

bool ks_pod_is_terminating(const ks_pod *p);
int32_t ks_pod_priority(const ks_pod *p);
const ks_owner_ref *ks_pod_controller(const ks_pod *p);

#define KS_DEFAULT_MILLI_CPU_REQUEST 100
#define KS_DEFAULT_MEMORY_REQUEST (200LL * 1024 * 1024)

#endif
