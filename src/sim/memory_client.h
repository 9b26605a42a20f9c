/* The in-memory backend: a ks_cluster standing in for the API server.
 * Binding sets the pod's node (a new ks_pod, since pods are immutable),
 * status patches set conditions and nominatedNodeName, deletions remove
 * pods; each produces the watch event an informer would see, delivered
 * synchronously to the scheduler. Events are recorded in order.
 * Deterministic and single-threaded (one mutex guards it anyway). */
#ifndef KS_MEMORY_CLIENT_H
#define KS_MEMORY_CLIENT_H

#include "api/cluster.h"
#include "backend/cluster_client.h"

typedef struct ks_memory_client ks_memory_client;

typedef struct ks_recorded_event {
    uint64_t pod_key;
    char *pod_name;  /* "ns/name" */
    char *type, *reason, *action, *note;
    int64_t time_ns;
} ks_recorded_event;

/* The backend works on `cluster` in place (borrowed; must outlive it). */
ks_memory_client *ks_memory_client_new(ks_cluster *cluster);
void ks_memory_client_free(ks_memory_client *mb);
const ks_cluster_client *ks_memory_client_iface(ks_memory_client *mb);
/* The order of the cluster's pods stops mattering (a replay: pods come
 * and go by the thousand, listed only at the start): a pod removed is
 * replaced by the last one, in constant time. */
void ks_memory_client_set_unordered(ks_memory_client *mb);

size_t ks_memory_client_nevents(const ks_memory_client *mb);
const ks_recorded_event *ks_memory_client_event(const ks_memory_client *mb, size_t i);

/* Counters of the calls received, for tests. */
typedef struct ks_memory_client_stats {
    uint64_t binds, status_patches, deletes, events, bind_failures;
    uint64_t object_writes; /* plugins' writes (api_calls.h ks_object_write) */
} ks_memory_client_stats;
void ks_memory_client_stats_get(const ks_memory_client *mb, ks_memory_client_stats *out);
/* Make the next n binds fail with an Error (tests). */
void ks_memory_client_fail_binds(ks_memory_client *mb, int n);

/* Simulate cluster changes from outside (tests, simulator scenarios):
 * each delivers the watch event. The cluster takes the references given. */
void ks_memory_client_add_node(ks_memory_client *mb, ks_node *node);
void ks_memory_client_update_node(ks_memory_client *mb, ks_node *node);
void ks_memory_client_remove_node(ks_memory_client *mb, ks_id name);
void ks_memory_client_add_pod(ks_memory_client *mb, ks_pod *pod);
void ks_memory_client_remove_pod(ks_memory_client *mb, uint64_t pod_key);
/* Add or remove an object of another kind (a ks_workload * for
 * KS_KIND_WORKLOAD, a ks_pvc * for KS_KIND_PVC, ...): the cluster takes,
 * or drops, a reference and the watch event is delivered. */
void ks_memory_client_add_object(ks_memory_client *mb, ks_kind kind, void *obj);
void ks_memory_client_remove_object(ks_memory_client *mb, ks_kind kind, void *obj);
/* Replace old (in the cluster) by obj, of the same kind: the cluster takes
 * a reference to obj and drops its own to old; MODIFIED is delivered. */
void ks_memory_client_update_object(ks_memory_client *mb, ks_kind kind, void *old, void *obj);
/* The current version of a pod (borrowed), NULL when absent. */
ks_pod *ks_memory_client_pod(const ks_memory_client *mb, uint64_t pod_key);

#endif
