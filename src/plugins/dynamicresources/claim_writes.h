/* DynamicResources' ResourceClaim writes, as kube-scheduler v1.34.1's
 * plugin makes them, built here as object writes (backend/api_calls.h
 * ks_object_write: the REST form and the in-memory form side by side):
 * - RESERVE (PreBind, upstream bindClaim): add the pod to
 *   status.reservedFor; with an allocation, first add the finalizer
 *   resource.kubernetes.io/delete-protection (an update of the object),
 *   then store status.allocation with the reservation (one status update);
 *   each update retried on conflict from a fresh read, upstream's checks
 *   (deleted, allocated elsewhere) made on every version.
 * - UNRESERVE (Unreserve): remove the pod's entry from reservedFor (a
 *   strategic merge patch of the status).
 * - DEALLOCATE (PostFilter): clear reservedFor, allocation and devices (a
 *   status update of the plugin's version). */
#ifndef KS_DRA_CLAIM_WRITES_H
#define KS_DRA_CLAIM_WRITES_H

#include "api/dra.h"
#include "api/pod.h"
#include "backend/api_calls.h"

typedef enum ks_claim_op { KS_CLAIM_RESERVE = 0, KS_CLAIM_UNRESERVE, KS_CLAIM_DEALLOCATE } ks_claim_op;

typedef struct ks_claim_update {
    ks_claim_op op;
    const ks_resource_claim *claim;          /* the version the plugin holds */
    const ks_pod *pod;                       /* RESERVE, UNRESERVE: the consumer */
    const ks_allocation_result *allocation;  /* RESERVE: to store; NULL: allocated already */
} ks_claim_update;

/* Who executes a call: the handle's API dispatcher in the plugin, a
 * cluster client's execute in tests. */
typedef ks_status *(*ks_call_exec)(void *ctx, const ks_api_call *call);

/* Make the write; *written (may be NULL): the claim as written (a
 * reference), NULL when nothing was written. A KS_SKIP status: nothing
 * makes claim writes (the plugin assumes them). */
ks_status *ks_dra_claim_write(const ks_claim_update *u, ks_resource_claim **written, ks_call_exec exec, void *ctx);

#endif
