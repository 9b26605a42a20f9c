#include "framework/nodeinfo.h"
#include "util/xalloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint_fast64_t generation_counter;

uint64_t ks_generation_next(void) { return atomic_fetch_add(&generation_counter, 1) + 1; }

ks_node_info *ks_node_info_new(void) {
    ks_node_info *ni = ks_xcalloc(1, sizeof(*ni));
    ni->generation = ks_generation_next();
    return ni;
}

void ks_node_info_free(ks_node_info *ni) {
    if (!ni) return;
    for (uint32_t i = 0; i < ni->npods; i++) ks_pod_unref(ni->pods[i]);
    if (ni->node) ks_node_unref(ni->node);
    free(ni->pods);
    free(ni->pods_with_affinity);
    free(ni->pods_with_required_anti);
    free(ni->used_ports);
    free(ni->images);
    ks_map_free(&ni->pvc_refs);
    ks_resource_fini(&ni->requested);
    ks_resource_fini(&ni->nonzero_requested);
    free(ni);
}

void ks_node_info_set_node(ks_node_info *ni, ks_node *node) {
    if (node) ks_node_ref(node);
    if (ni->node) ks_node_unref(ni->node);
    ni->node = node;
    if (node) {
        ni->name = node->name;
        ni->allocatable = node->allocatable;
    } else {
        memset(&ni->allocatable, 0, sizeof(ni->allocatable));
    }
    ni->generation = ks_generation_next();
}

static bool has_affinity(const ks_pod *p) {
    return p->nreq_affinity || p->npref_affinity || p->nreq_anti || p->npref_anti;
}

static ks_id wildcard_ip(void) {
    static ks_id id;
    if (!id) id = ks_intern("0.0.0.0");
    return id;
}

static ks_id port_ip(const ks_container_port *p) { return p->host_ip ? p->host_ip : wildcard_ip(); }

static uint64_t pvc_key(ks_id ns, const char *claim) {
    return (((uint64_t)ns << 32) | ks_intern(claim)) + 1;
}

static void update_pvc_refs(ks_node_info *ni, const ks_pod *p, int delta) {
    for (uint32_t i = 0; i < p->nvolumes; i++) {
        const ks_volume *v = &p->volumes[i];
        if ((v->kind != KS_VOL_PVC && v->kind != KS_VOL_EPHEMERAL) || !v->claim_name) continue;
        uint64_t k = pvc_key(p->ns, v->claim_name);
        intptr_t n = (intptr_t)ks_map_get(&ni->pvc_refs, k) + delta;
        if (n > 0) ks_map_put(&ni->pvc_refs, k, (void *)n);
        else ks_map_del(&ni->pvc_refs, k);
    }
}

static int find_port(const ks_node_info *ni, const ks_host_port *hp) {
    for (uint32_t j = 0; j < ni->nports; j++) {
        const ks_host_port *u = &ni->used_ports[j];
        if (u->ip == hp->ip && u->protocol == hp->protocol && u->port == hp->port) return (int)j;
    }
    return -1;
}

void ks_node_info_add_pod(ks_node_info *ni, ks_pod *pod) {
    KS_GROW(ni->pods, ni->pods_cap, ni->npods + 1);
    ni->pods[ni->npods++] = ks_pod_ref(pod);
    if (has_affinity(pod)) {
        KS_GROW(ni->pods_with_affinity, ni->affinity_cap, ni->naffinity + 1);
        ni->pods_with_affinity[ni->naffinity++] = pod;
    }
    if (pod->nreq_anti) {
        KS_GROW(ni->pods_with_required_anti, ni->anti_cap, ni->nanti + 1);
        ni->pods_with_required_anti[ni->nanti++] = pod;
    }
    ks_resource_add(&ni->requested, NULL, &pod->requests);
    ni->nonzero_requested.milli_cpu += pod->nonzero_requests.milli_cpu;
    ni->nonzero_requested.memory += pod->nonzero_requests.memory;
    for (uint32_t i = 0; i < pod->nhost_ports; i++) {
        const ks_container_port *p = &pod->host_ports[i];
        if (p->host_port <= 0) continue;
        ks_host_port hp = {.ip = port_ip(p), .protocol = p->protocol, .port = p->host_port};
        /* A set, as upstream's HostPortInfo: a second pod using the same
         * port adds nothing, and removing either frees it. */
        if (find_port(ni, &hp) >= 0) continue;
        KS_GROW(ni->used_ports, ni->ports_cap, ni->nports + 1);
        ni->used_ports[ni->nports++] = hp;
    }
    update_pvc_refs(ni, pod, +1);
    ni->generation = ks_generation_next();
}

static bool same_pod(const ks_pod *a, const ks_pod *b) { return a == b || a->key == b->key; }

/* Remove the first element equal to pod from an array the way upstream's
 * removeFromSlice does: the last element takes its place. Pod order is
 * observable (preemption visits a node's pods in this order and sorts them
 * with an unstable sort), so it must evolve exactly as upstream's. */
static bool remove_from(ks_pod **arr, uint32_t *n, const ks_pod *pod) {
    for (uint32_t i = 0; i < *n; i++) {
        if (same_pod(arr[i], pod)) {
            arr[i] = arr[*n - 1];
            (*n)--;
            return true;
        }
    }
    return false;
}

bool ks_node_info_remove_pod(ks_node_info *ni, const ks_pod *pod) {
    ks_pod *found = NULL;
    for (uint32_t i = 0; i < ni->npods; i++) {
        if (same_pod(ni->pods[i], pod)) {
            found = ni->pods[i];
            break;
        }
    }
    if (!found) return false;
    remove_from(ni->pods_with_affinity, &ni->naffinity, found);
    remove_from(ni->pods_with_required_anti, &ni->nanti, found);
    ks_resource_sub(&ni->requested, NULL, &found->requests);
    ni->nonzero_requested.milli_cpu -= found->nonzero_requests.milli_cpu;
    ni->nonzero_requested.memory -= found->nonzero_requests.memory;
    for (uint32_t i = 0; i < found->nhost_ports; i++) {
        const ks_container_port *p = &found->host_ports[i];
        if (p->host_port <= 0) continue;
        ks_host_port hp = {.ip = port_ip(p), .protocol = p->protocol, .port = p->host_port};
        int j = find_port(ni, &hp);
        if (j >= 0) ni->used_ports[j] = ni->used_ports[--ni->nports];
    }
    update_pvc_refs(ni, found, -1);
    remove_from(ni->pods, &ni->npods, found);
    ks_pod_unref(found);
    ni->generation = ks_generation_next();
    return true;
}

bool ks_node_info_port_conflict(const ks_node_info *ni, const ks_container_port *p) {
    if (p->host_port <= 0) return false;
    ks_id ip = port_ip(p), any = wildcard_ip();
    for (uint32_t i = 0; i < ni->nports; i++) {
        const ks_host_port *u = &ni->used_ports[i];
        if (u->port != p->host_port || u->protocol != p->protocol) continue;
        if (ip == any || u->ip == any || u->ip == ip) return true;
    }
    return false;
}

#define COPY_ARR(dst, dcap, src, n)                                  \
    do {                                                             \
        KS_GROW(dst, dcap, (n) ? (n) : 1);                           \
        if (n) memcpy(dst, src, (size_t)(n) * sizeof(*(dst)));       \
    } while (0)

void ks_node_info_copy_into(ks_node_info *dst, const ks_node_info *src) {
    /* Take the new references before dropping the old ones: src and dst
     * usually share most pods. */
    for (uint32_t i = 0; i < src->npods; i++) ks_pod_ref(src->pods[i]);
    for (uint32_t i = 0; i < dst->npods; i++) ks_pod_unref(dst->pods[i]);
    if (src->node) ks_node_ref(src->node);
    if (dst->node) ks_node_unref(dst->node);
    dst->node = src->node;
    dst->name = src->name;
    COPY_ARR(dst->pods, dst->pods_cap, src->pods, src->npods);
    dst->npods = src->npods;
    COPY_ARR(dst->pods_with_affinity, dst->affinity_cap, src->pods_with_affinity, src->naffinity);
    dst->naffinity = src->naffinity;
    COPY_ARR(dst->pods_with_required_anti, dst->anti_cap, src->pods_with_required_anti, src->nanti);
    dst->nanti = src->nanti;
    COPY_ARR(dst->used_ports, dst->ports_cap, src->used_ports, src->nports);
    dst->nports = src->nports;
    ks_resource_copy(&dst->requested, &src->requested);
    ks_resource_copy(&dst->nonzero_requested, &src->nonzero_requested);
    dst->allocatable = src->allocatable; /* the node's, which dst references too */
    /* Image summaries are rebuilt by the snapshot; keep none from src. */
    ks_map_clear(&dst->pvc_refs);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&src->pvc_refs, &it, &k, &v);) ks_map_put(&dst->pvc_refs, k, v);
    dst->generation = src->generation;
}

ks_node_info *ks_node_info_clone(const ks_node_info *ni) {
    ks_node_info *c = ks_xcalloc(1, sizeof(*c));
    ks_node_info_copy_into(c, ni);
    if (ni->nimages) {
        c->images = ks_xmalloc(ni->nimages * sizeof(*c->images));
        memcpy(c->images, ni->images, ni->nimages * sizeof(*c->images));
        c->nimages = ni->nimages;
    }
    return c;
}

uint64_t ks_node_info_checksum(const ks_node_info *ni) {
    uint64_t h = ks_hash_u64(ni->generation) ^ ks_hash_u64((uintptr_t)ni->node);
    h = ks_hash_bytes(&ni->requested, sizeof(ni->requested)) ^ (h * 31);
    h = ks_hash_bytes(&ni->nonzero_requested, sizeof(ni->nonzero_requested)) ^ (h * 31);
    h = ks_hash_bytes(&ni->allocatable, sizeof(ni->allocatable)) ^ (h * 31);
    h = ks_hash_bytes(ni->requested.scalars, ni->requested.nscalar * sizeof(ks_scalar)) ^ (h * 31);
    h ^= ks_hash_bytes(ni->pods, ni->npods * sizeof(*ni->pods)) * 7;
    h ^= ks_hash_bytes(ni->used_ports, ni->nports * sizeof(*ni->used_ports)) * 13;
    h ^= ks_hash_bytes(ni->images, ni->nimages * sizeof(*ni->images)) * 17;
    h ^= ks_hash_u64(ni->npods + ((uint64_t)ni->naffinity << 20) + ((uint64_t)ni->nanti << 40));
    return h;
}
