/* VolumeRestrictions: a disk that cannot be mounted twice (GCE PD and
 * ISCSI unless every mount is read-only, AWS EBS ever, Ceph RBD unless
 * read-only) must not already be used by a pod on the node, and a
 * ReadWriteOncePod claim must not be used by any scheduled pod. */
#include "framework/handle.h"
#include "framework/status.h"
#include "plugins/helper/hints.h"
#include "plugins/helper/volumes.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REASON_DISK_CONFLICT "node(s) had no available disk"
#define REASON_RWOP_CONFLICT                                                              \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode " \
    "already in-use by another pod"

typedef struct volume_restrictions {
    ks_handle *h;
} volume_restrictions;

/* The pod's ReadWriteOncePod claims (names, deduplicated) and how many
 * references scheduled pods hold to them. AddPod/RemovePod move the count
 * during preemption dry runs, so the state is cloned for them. */
typedef struct pf_state {
    uint32_t nclaims;
    const char **claims; /* point into the pod, which outlives the cycle */
    int64_t conflicts;
} pf_state;

static ks_state_key state_key = -1;
/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading it. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    state_key = ks_state_key_get("PreFilterVolumeRestrictions");
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    volume_restrictions *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    pthread_once(&keys_once, init_keys);
    return pl;
}

static void destroy(void *self) { free(self); }

static void state_free(void *p) {
    pf_state *s = p;
    if (!s) return;
    free(s->claims);
    free(s);
}

static void *state_clone(const void *p) {
    const pf_state *s = p;
    pf_state *c = ks_xcalloc(1, sizeof(*c));
    *c = *s;
    c->claims = s->nclaims ? ks_xcalloc(s->nclaims, sizeof(*c->claims)) : NULL;
    if (s->nclaims) memcpy(c->claims, s->claims, s->nclaims * sizeof(*c->claims));
    return c;
}

/* Upstream (queueing hints on): Pod/Delete, Node/Add, PVC/Add. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_DELETE},
        {KS_EV_NODE, KS_ACT_ADD},
        {KS_EV_PVC, KS_ACT_ADD},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

static bool needs_check(const ks_volume *v);
static bool volume_conflict(const ks_volume *v, const ks_pod *existing);

static bool uses_claim(const ks_pod *p, const char *name) {
    for (uint32_t i = 0; i < p->nvolumes; i++)
        if (p->volumes[i].kind == KS_VOL_PVC && p->volumes[i].claim_name && name &&
            strcmp(p->volumes[i].claim_name, name) == 0)
            return true;
    return false;
}

/* A claim added in the pod's namespace that the pod uses; a deleted pod
 * of its namespace whose disks conflicted with the pod's, or that used one
 * of its claims. Node adds have no hint. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    if (ev.resource & KS_EV_NODE) return KS_QUEUE;
    if (ev.resource & KS_EV_PVC) {
        const ks_pvc *c = new_obj && new_obj->kind == KS_KIND_PVC ? new_obj->obj : NULL;
        if (!c) return ks_hint_type_error(err, "PersistentVolumeClaim");
        if (c->ns != pod->ns) return KS_QUEUE_SKIP;
        return uses_claim(pod, ks_str(c->name)) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    const ks_pod *d = ks_hint_pod(old_obj);
    if (!d) return ks_hint_type_error(err, "Pod");
    if (d->ns != pod->ns) return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < pod->nvolumes; i++)
        if (needs_check(&pod->volumes[i]) && volume_conflict(&pod->volumes[i], d)) return KS_QUEUE;
    for (uint32_t i = 0; i < d->nvolumes; i++)
        if (d->volumes[i].kind == KS_VOL_PVC && uses_claim(pod, d->volumes[i].claim_name)) return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

static bool needs_check(const ks_volume *v) {
    return v->kind == KS_VOL_GCE_PD || v->kind == KS_VOL_AWS_EBS || v->kind == KS_VOL_RBD ||
           v->kind == KS_VOL_ISCSI;
}

static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

static bool monitors_overlap(const ks_volume *a, const ks_volume *b) {
    for (uint32_t i = 0; i < a->nmonitors; i++)
        for (uint32_t j = 0; j < b->nmonitors; j++)
            if (str_eq(a->monitors[i], b->monitors[j])) return true;
    return false;
}

/* Whether volume v of the incoming pod conflicts with one of the volumes
 * of a pod already on the node. */
static bool volume_conflict(const ks_volume *v, const ks_pod *existing) {
    for (uint32_t i = 0; i < existing->nvolumes; i++) {
        const ks_volume *e = &existing->volumes[i];
        if (e->kind != v->kind) continue;
        bool both_ro = v->read_only && e->read_only;
        switch (v->kind) {
        case KS_VOL_GCE_PD:
        case KS_VOL_ISCSI:
            if (str_eq(v->disk_id, e->disk_id) && !both_ro) return true;
            break;
        case KS_VOL_AWS_EBS:
            if (str_eq(v->disk_id, e->disk_id)) return true;
            break;
        case KS_VOL_RBD:
            if (monitors_overlap(v, e) && str_eq(v->extra, e->extra) && str_eq(v->disk_id, e->disk_id) &&
                !both_ro)
                return true;
            break;
        default:
            break;
        }
    }
    return false;
}

static bool has_claim(const pf_state *s, const char *name) {
    for (uint32_t i = 0; i < s->nclaims; i++)
        if (str_eq(s->claims[i], name)) return true;
    return false;
}

/* References of pod p to the state's claims (one per volume). */
static int64_t claim_refs(const pf_state *s, const ks_pod *p) {
    int64_t n = 0;
    for (uint32_t i = 0; i < p->nvolumes; i++)
        if (p->volumes[i].kind == KS_VOL_PVC && has_claim(s, p->volumes[i].claim_name)) n++;
    return n;
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    volume_restrictions *pl = self;
    bool check = false;
    for (uint32_t i = 0; i < pod->nvolumes; i++)
        if (needs_check(&pod->volumes[i])) check = true;

    const ks_objects *c = pl->h ? ks_handle_objects(pl->h) : NULL;
    pf_state *s = ks_xcalloc(1, sizeof(*s));
    s->claims = pod->nvolumes ? ks_xcalloc(pod->nvolumes, sizeof(*s->claims)) : NULL;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC) continue;
        const ks_pvc *pvc = ks_vol_pvc(c, pod->ns, v->claim_name);
        if (!pvc) {
            state_free(s);
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" not found", v->claim_name ? v->claim_name : "");
        }
        if ((pvc->access_modes & KS_ACCESS_RWOP) && !has_claim(s, v->claim_name))
            s->claims[s->nclaims++] = v->claim_name;
    }
    /* A claim in use by some scheduled pod: at most one pod can hold it. */
    const ks_snapshot *snap = pl->h ? ks_handle_snapshot(pl->h) : NULL;
    for (uint32_t i = 0; i < s->nclaims && snap; i++) {
        ks_id id = ks_intern_find(s->claims[i]);
        if (id != KS_ID_INVALID && ks_snapshot_pvc_used(snap, pod->ns, id)) s->conflicts++;
    }
    if (!check && s->conflicts == 0) {
        state_free(s);
        return ks_status_new(KS_SKIP, NULL);
    }
    ks_cycle_state_write(st, state_key, s, state_free, state_clone);
    return NULL;
}

static ks_status *add_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *add,
                          const ks_node_info *ni) {
    pf_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    s->conflicts += claim_refs(s, add);
    return NULL;
}

static ks_status *remove_pod(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_pod *rm,
                             const ks_node_info *ni) {
    pf_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    s->conflicts -= claim_refs(s, rm);
    return NULL;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (!needs_check(v)) continue;
        for (uint32_t j = 0; j < ni->npods; j++)
            if (volume_conflict(v, ni->pods[j])) return ks_status_new_const(KS_UNSCHEDULABLE, REASON_DISK_CONFLICT);
    }
    const pf_state *s = ks_cycle_state_read(st, state_key);
    if (!s) return ks_status_new(KS_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    if (s->conflicts > 0) return ks_status_new_const(KS_UNSCHEDULABLE, REASON_RWOP_CONFLICT);
    return NULL;
}

const ks_plugin_ops ks_plugin_volume_restrictions = {
    .abi_version = KS_ABI_VERSION,
    .name = "VolumeRestrictions",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .add_pod = add_pod,
    .remove_pod = remove_pod,
    .filter = filter,
};
