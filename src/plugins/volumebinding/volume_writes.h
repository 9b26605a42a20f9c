/* VolumeBinding's PreBind writes (upstream BindPodVolumes), built here as
 * object writes (backend/api_calls.h ks_object_write: the REST form and
 * the in-memory form side by side): for a static binding an update of the
 * PV (claimRef and the bound-by-controller annotation), for a claim to
 * provision an update of the claim (the selected-node annotation); then a
 * wait, up to bindTimeoutSeconds, until the PV controller has bound every
 * claim. The in-memory cluster runs no PV controller: what that
 * controller does in answer (the claim bound to the PV) is a write of its
 * own, marked `controller`, which only the in-memory cluster makes. */
#ifndef KS_VOLUME_WRITES_H
#define KS_VOLUME_WRITES_H

#include "api/objects.h"
#include "backend/api_calls.h"

/* One binding: pv bound to pvc (static binding), or, pv NULL, pvc to be
 * provisioned on node selected_node. The objects are the ones the plugin
 * saw. */
typedef struct ks_volume_binding {
    const ks_pvc *pvc;
    const ks_pv *pv;
    ks_id selected_node;
} ks_volume_binding;

typedef ks_status *(*ks_volume_exec)(void *ctx, const ks_api_call *call);

/* Make the writes and wait; a KS_SKIP status when nothing makes them (the
 * bindings then stay assumed). */
ks_status *ks_volume_bindings_write(const ks_pod *pod, const ks_volume_binding *b, size_t n, int64_t timeout_ms,
                                    ks_volume_exec exec, void *ctx);

#endif
