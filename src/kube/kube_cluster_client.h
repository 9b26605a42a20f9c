/* The kube-apiserver cluster client: reflectors for every kind the
 * scheduler reads (decoded by the same decoders as manifests, delivered as
 * watch events), and the API calls the scheduler makes (binding, status
 * patch, deletion, events) as kube-scheduler v1.34.1 makes them, plus the
 * plugins' object writes (api_calls.h ks_object_write: PATCH or
 * get-edit-PUT of any kind in its kind table, by name). See docs/run.md. */
#ifndef KS_KUBE_CLUSTER_CLIENT_H
#define KS_KUBE_CLUSTER_CLIENT_H

#include "kube/client.h"
#include "kube/event_recorder.h"
#include "backend/cluster_client.h"

typedef struct ks_kube_cluster_client ks_kube_cluster_client;

typedef struct ks_kube_cluster_client_options {
    ks_kube_client *client;        /* borrowed: reflectors and writes */
    ks_event_recorder *events;     /* borrowed (NULL: no events written) */
    bool watch_pod_groups;         /* Coscheduling is enabled */
    bool watch_dra;                /* DynamicResourceAllocation gate: claims, slices, classes */
    bool watch_device_taint_rules; /* with watch_dra, the DRADeviceTaints gate */
} ks_kube_cluster_client_options;

ks_kube_cluster_client *ks_kube_cluster_client_new(const ks_kube_cluster_client_options *o);
void ks_kube_cluster_client_free(ks_kube_cluster_client *kb);
const ks_cluster_client *ks_kube_cluster_client_iface(ks_kube_cluster_client *kb);

typedef struct ks_kube_cluster_client_stats {
    uint64_t decode_errors, binds, bind_conflicts, patches, deletes, object_writes;
    /* the objects kept as JSON for updates (claims), and their bytes as
     * kept (deflated) and as text */
    uint64_t kept_json, kept_json_bytes, kept_json_text_bytes;
} ks_kube_cluster_client_stats;
void ks_kube_cluster_client_stats_get(ks_kube_cluster_client *kb, ks_kube_cluster_client_stats *out);

#endif
