/* NodeInfo: a node plus the aggregate of the pods on it (upstream
 * framework.NodeInfo). The cache keeps one per node and bumps `generation`
 * on every change; the snapshot holds copies that plugins see as const. */
#ifndef KS_NODEINFO_H
#define KS_NODEINFO_H

#include "api/node.h"
#include "api/pod.h"
#include "util/hash.h"

#include <ksched/ksched.h>

typedef struct ks_host_port {
    ks_id ip;       /* interned; "0.0.0.0" for the wildcard */
    ks_id protocol; /* "TCP", "UDP", "SCTP" */
    int32_t port;
} ks_host_port;

/* Upstream ImageStateSummary: size and how many nodes have the image. */
typedef struct ks_image_state {
    ks_id name;
    int64_t size;
    uint32_t num_nodes;
} ks_image_state;

struct ks_node_info {
    ks_node *node;             /* NULL while only pods reference the node */
    /* next to the name: plugins that cache per node read both for every
     * node of every cycle (one cache line instead of two) */
    uint64_t generation;
    ks_id name;
    uint32_t npods, pods_cap;
    ks_pod **pods;             /* referenced */
    uint32_t naffinity, affinity_cap;
    ks_pod **pods_with_affinity;           /* pods with any pod (anti)affinity */
    uint32_t nanti, anti_cap;
    ks_pod **pods_with_required_anti;      /* pods with required anti-affinity */
    ks_resource requested;
    ks_resource nonzero_requested;
    ks_resource allocatable;
    uint32_t nports, ports_cap;
    ks_host_port *used_ports;
    uint32_t nimages;
    ks_image_state *images;    /* sorted by name; filled by the snapshot */
    ks_map pvc_refs;           /* key: (ns<<32|claim)+1 -> count as (void*)(uintptr_t) */
};

ks_node_info *ks_node_info_new(void);
void ks_node_info_free(ks_node_info *ni);
void ks_node_info_set_node(ks_node_info *ni, ks_node *node);
void ks_node_info_add_pod(ks_node_info *ni, ks_pod *pod);
/* false when the pod was not on the node. */
bool ks_node_info_remove_pod(ks_node_info *ni, const ks_pod *pod);
/* Deep copy for the snapshot (pods and node referenced, arrays copied). */
ks_node_info *ks_node_info_clone(const ks_node_info *ni);
/* Copy src into an existing dst, reusing dst's arrays. */
void ks_node_info_copy_into(ks_node_info *dst, const ks_node_info *src);
/* Checksum over everything a plugin can see (debug immutability check). */
uint64_t ks_node_info_checksum(const ks_node_info *ni);

/* Host port conflict check, with 0.0.0.0 matching every IP. */
bool ks_node_info_port_conflict(const ks_node_info *ni, const ks_container_port *p);

uint64_t ks_generation_next(void);

#endif
