/* DynamicResources (DRA): ResourceClaims allocated at scheduling time.
 *
 * ksched does not model ResourceClaims, ResourceSlices or DeviceClasses
 * yet, so only pods without claims are handled, and they are handled
 * exactly as upstream handles them: PreFilter records "no claims" in the
 * cycle state and skips, Filter/Reserve/PreBind do nothing, and PostFilter
 * (which runs before DefaultPreemption) answers Unschedulable "no new
 * claims to deallocate" — text that appears in every FailedScheduling
 * message of the default profile. When PreFilter never ran (an earlier
 * PreFilter plugin rejected the pod), reading the state fails and every
 * point reports upstream's "not found" error.
 *
 * A pod with spec.resourceClaims is rejected at PreFilter with an
 * UnschedulableAndUnresolvable status that names the limitation
 * (docs/differences.md). */
#include "api/pod.h"

#include <ksched/ksched.h>

#include <stdlib.h>

/* What PreFilter stores. Upstream stores an empty stateData (no claims)
 * before looking at the claims, so the state exists even when PreFilter
 * rejects; claims are never recorded here since none are supported. */
typedef struct dra_state {
    int unused;
} dra_state;

static ks_state_key state_key = -1;

/* The error upstream's CycleState.Read returns for a missing key. */
#define NOT_FOUND "not found"

#define UNSUPPORTED                                                                        \
    "pod has resourceClaims: dynamic resource allocation is not supported by ksched yet " \
    "(DynamicResources)"

static void *create(const ks_args *args, ks_handle *h, char **err) {
    (void)args;
    (void)h;
    (void)err;
    state_key = ks_state_key_get("DynamicResources");
    /* A plugin without state: any non-NULL self will do. */
    return &state_key;
}

static void destroy(void *self) { (void)self; }

/* Upstream (queueing hints on): Node Add|UpdateNodeLabel|
 * UpdateNodeAllocatable, ResourceClaim Add|Update, Pod
 * UpdatePodGeneratedResourceClaim, DeviceClass and ResourceSlice
 * Add|Update. The DRA kinds do not exist here. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_POD, KS_ACT_UPDATE},
    };
    size_t n = 0;
    for (; n < max && n < sizeof(ev) / sizeof(ev[0]); n++) out[n] = ev[n];
    return n;
}

/* Upstream checks here that the pod's claims exist; without claims there
 * is nothing to check. */
static ks_status *pre_enqueue(void *self, const ks_pod *pod) {
    (void)self;
    (void)pod;
    return NULL;
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    dra_state *s = ks_cycle_state_alloc(st, sizeof(*s));
    ks_cycle_state_write(st, state_key, s, NULL, NULL);
    if (pod->nresource_claims == 0) return ks_status_new(KS_SKIP, NULL);
    /* The state stays empty, as upstream's does when claim lookup fails:
     * PostFilter then answers as for a pod without claims. */
    return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, UNSUPPORTED);
}

static const dra_state *get_state(ks_cycle_state *st) { return ks_cycle_state_read(st, state_key); }

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    if (!get_state(st)) return ks_status_new(KS_ERROR, NOT_FOUND);
    return NULL;
}

static ks_status *post_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                              const ks_node_status_map *statuses, ks_post_filter_result *result) {
    if (!get_state(st)) return ks_status_new(KS_ERROR, NOT_FOUND);
    return ks_status_new(KS_UNSCHEDULABLE, "no new claims to deallocate");
}

static ks_status *reserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    if (!get_state(st)) return ks_status_new(KS_ERROR, NOT_FOUND);
    return NULL;
}

static void unreserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {}

static ks_status *pre_bind_pre_flight(void *self, ks_cycle_state *st, const ks_pod *pod,
                                      const char *node) {
    if (!get_state(st)) return ks_status_new(KS_ERROR, NOT_FOUND);
    return ks_status_new(KS_SKIP, NULL);
}

static ks_status *pre_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    if (!get_state(st)) return ks_status_new(KS_ERROR, NOT_FOUND);
    return NULL;
}

const ks_plugin_ops ks_plugin_dynamic_resources = {
    .abi_version = KS_ABI_VERSION,
    .name = "DynamicResources",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .pre_enqueue = pre_enqueue,
    .pre_filter = pre_filter,
    .filter = filter,
    .post_filter = post_filter,
    .reserve = reserve,
    .unreserve = unreserve,
    .pre_bind_pre_flight = pre_bind_pre_flight,
    .pre_bind = pre_bind,
};
