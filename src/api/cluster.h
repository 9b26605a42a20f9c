/* Everything loaded from manifests (or listed from an API server): the set
 * of objects of every kind the scheduler reads, in input order. The cluster
 * owns the objects it holds (one reference each). */
#ifndef KS_CLUSTER_H
#define KS_CLUSTER_H

#include "api/dra.h"
#include "api/node.h"
#include "api/objects.h"
#include "api/pod.h"
#include "util/hash.h"
#include "util/xalloc.h"

typedef struct ks_kind_count {
    ks_id kind; /* "ConfigMap", or "Widget.example.com" for another group's kind */
    uint32_t n;
} ks_kind_count;

typedef struct ks_cluster {
    KS_VEC(ks_node *) nodes;
    KS_VEC(ks_pod *) pods;
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
    KS_VEC(ks_resource_claim *) resource_claims;
    KS_VEC(ks_claim_template *) claim_templates;
    KS_VEC(ks_resource_slice *) resource_slices;
    KS_VEC(ks_device_class *) device_classes;
    KS_VEC(ks_device_taint_rule *) device_taint_rules;
    /* Objects of kinds the simulator does not use, counted by kind (in
     * the order first seen), for the "skipped:" line. */
    KS_VEC(ks_kind_count) skipped;
    uint32_t next_input_index;
    ks_arena *arena; /* documents' trees and shared strings */
    ks_map node_index; /* name id + 1 -> position + 1 in nodes (ks_cluster_node) */
    uint32_t node_index_n;
} ks_cluster;

#define KS_VEC_PUSH(vec, x)                                       \
    do {                                                          \
        KS_GROW((vec).v, (vec).cap, (size_t)(vec).n + 1);         \
        (vec).v[(vec).n++] = (x);                                 \
    } while (0)

ks_cluster *ks_cluster_new(void);
void ks_cluster_free(ks_cluster *c);

/* Lookups by name. PriorityClass and Namespace lookups are linear.
 * ks_cluster_priority_class knows the
 * two built-in classes (system-node-critical, system-cluster-critical)
 * even when no manifest defines them, as every API server does.
 * ks_cluster_node uses an index it keeps up to date itself (a lookup may
 * rebuild it, so lookups must not run concurrently with each other). */
const ks_priority_class *ks_cluster_priority_class(const ks_cluster *c, ks_id name);
const ks_priority_class *ks_cluster_default_priority_class(const ks_cluster *c);
const ks_namespace *ks_cluster_namespace(const ks_cluster *c, ks_id name);
ks_node *ks_cluster_node(const ks_cluster *c, ks_id name);

/* Fill in what admission would have: priority from priorityClassName (or the
 * global default class, else 0) when spec.priority is unset, and
 * preemptionPolicy from the class. Returns false (with *err malloc'd) when a
 * pod names a PriorityClass that does not exist. */
bool ks_cluster_admit(ks_cluster *c, char **err);
/* The resourceclaim controller's work (api/claim_controller.c): a claim
 * for every pod entry that names a ResourceClaimTemplate and has none
 * yet, recorded in the pod's status.resourceClaimStatuses; claims
 * without a uid get one derived from their name. ks_cluster_admit calls
 * it. */
void ks_cluster_generate_claims(ks_cluster *c);
/* The same for one pod against the classes of c. */
bool ks_pod_admit(ks_pod *p, const ks_cluster *c, char **err);

/* What the Priority admission plugin says of a pod on creation, with its
 * messages. `refused`: the API server would refuse the pod (a class that
 * does not exist; a preemptionPolicy that contradicts the class's); it is
 * not admitted. Otherwise a message is a warning about a pod that carries
 * spec.priority without ever having been through an API server (no uid,
 * no creationTimestamp): the plugin would have refused it (a priority
 * that differs from its class's, an unknown class, a contradicting
 * preemptionPolicy), but it is admitted with its own priority, as a
 * simulation of hand-written pods wants. Pods from a live cluster (uid or
 * creationTimestamp set) are taken as they are. */
typedef struct ks_admit_result {
    bool refused;
    const char *field; /* "spec.priorityClassName", "spec.priority", "spec.preemptionPolicy" */
    char *msg;         /* malloc'd; NULL when nothing to say */
} ks_admit_result;
bool ks_pod_admit_report(ks_pod *p, const ks_cluster *c, ks_admit_result *r);

/* Namespaces every pod lives in exist in an API server; add the ones no
 * manifest defined, labelled kubernetes.io/metadata.name=<name> as the
 * API server labels every namespace. */
void ks_cluster_add_implicit_namespaces(ks_cluster *c);

/* The cluster's objects of the listers' kinds as a view sharing its
 * arrays: valid while the cluster is not changed (tests, embedders that
 * build a framework on a cluster). */
ks_objects ks_cluster_view(const ks_cluster *c);

/* Count one object of a kind the simulator skips. */
void ks_cluster_count_skipped(ks_cluster *c, ks_id kind, uint32_t n);

/* Move every object of src to the end of dst (src is left empty). */
void ks_cluster_move(ks_cluster *dst, ks_cluster *src);

#endif
