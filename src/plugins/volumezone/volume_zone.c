/* VolumeZone: a pod using a bound PV labelled with zones or regions
 * (topology.kubernetes.io/zone|region and the beta failure-domain keys)
 * only fits nodes in one of them. Nodes without any of these labels fit. */
#include "framework/cycle_state.h"
#include "framework/status.h"
#include "framework/handle.h"
#include "plugins/helper/hints.h"
#include "plugins/helper/volumes.h"
#include "util/arena.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REASON_CONFLICT "node(s) had no available volume zone"

#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define GA_ZONE "topology.kubernetes.io/zone"
#define GA_REGION "topology.kubernetes.io/region"

/* Upstream's order; it decides which PV label is checked first. */
static const char *const topology_labels[4] = {BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION};

typedef struct volume_zone {
    ks_handle *h;
    ks_id label_ids[4];
    ks_id ga_of[4]; /* the GA key a beta key translates to (itself for GA) */
} volume_zone;

/* One topology constraint of a PV: label key and the allowed values (a
 * value "a__b" means either zone). */
typedef struct pv_topology {
    ks_id key, ga_key;
    uint32_t nvalues;
    const char **values; /* cycle arena */
    size_t *lens;
} pv_topology;

typedef struct vz_state {
    uint32_t n;
    pv_topology *t;
} vz_state;

static ks_state_key state_key = -1;
/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading it. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    state_key = ks_state_key_get("PreFilterVolumeZone");
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    volume_zone *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    for (int i = 0; i < 4; i++) pl->label_ids[i] = ks_intern(topology_labels[i]);
    pl->ga_of[0] = pl->label_ids[2];
    pl->ga_of[1] = pl->label_ids[3];
    pl->ga_of[2] = pl->label_ids[2];
    pl->ga_of[3] = pl->label_ids[3];
    pthread_once(&keys_once, init_keys);
    return pl;
}

static void destroy(void *self) { free(self); }

/* Upstream (queueing hints on): StorageClass/Add, Node Add|UpdateNodeLabel,
 * PVC Add|Update, PV Add|Update. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_STORAGE_CLASS, KS_ACT_ADD},
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL},
        {KS_EV_PVC, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_PV, KS_ACT_ADD | KS_ACT_UPDATE},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

static bool split_zones(ks_arena *a, const char *v, pv_topology *t);

static bool zone_in(const pv_topology *t, const char *v, size_t len) {
    for (uint32_t i = 0; i < t->nvalues; i++)
        if (t->lens[i] == len && memcmp(t->values[i], v, len) == 0) return true;
    return false;
}

/* Whether two versions of a PV have the same topology constraints: per
 * topology label, both without it (or with an unparsable value, which is
 * ignored) or both with the same set of zones. */
static bool same_topologies(volume_zone *pl, const ks_pv *a, const ks_pv *b) {
    ks_arena *ar = ks_arena_new(256);
    bool same = true;
    for (int i = 0; i < 4 && same; i++) {
        ks_id va, vb;
        pv_topology ta = {0}, tb = {0};
        bool ha = ks_labels_get(&a->labels, pl->label_ids[i], &va) && split_zones(ar, ks_str(va), &ta);
        bool hb = ks_labels_get(&b->labels, pl->label_ids[i], &vb) && split_zones(ar, ks_str(vb), &tb);
        if (ha != hb) same = false;
        if (!ha || !hb) continue;
        for (uint32_t k = 0; k < ta.nvalues && same; k++) same = zone_in(&tb, ta.values[k], ta.lens[k]);
        for (uint32_t k = 0; k < tb.nvalues && same; k++) same = zone_in(&ta, tb.values[k], tb.lens[k]);
    }
    ks_arena_free(ar);
    return same;
}

/* A storage class added with WaitForFirstConsumer; a claim of the pod's
 * added or updated; a PV added, or whose topology labels changed. Nodes
 * have no hint. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    volume_zone *pl = self;
    if (ev.resource & KS_EV_NODE) return KS_QUEUE;
    if (ev.resource & KS_EV_STORAGE_CLASS) {
        const ks_storage_class *sc = new_obj && new_obj->kind == KS_KIND_STORAGE_CLASS ? new_obj->obj : NULL;
        if (!sc) return ks_hint_type_error(err, "StorageClass");
        return sc->binding_mode == KS_BIND_WAIT_FOR_FIRST_CONSUMER ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (ev.resource & KS_EV_PVC) {
        const ks_pvc *c = new_obj && new_obj->kind == KS_KIND_PVC ? new_obj->obj : NULL;
        if (!c) return ks_hint_type_error(err, "PersistentVolumeClaim");
        if (c->ns != pod->ns) return KS_QUEUE_SKIP;
        for (uint32_t i = 0; i < pod->nvolumes; i++)
            if (pod->volumes[i].kind == KS_VOL_PVC && pod->volumes[i].claim_name &&
                strcmp(pod->volumes[i].claim_name, ks_str(c->name)) == 0)
                return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    const ks_pv *o = old_obj && old_obj->kind == KS_KIND_PV ? old_obj->obj : NULL;
    const ks_pv *m = new_obj && new_obj->kind == KS_KIND_PV ? new_obj->obj : NULL;
    if (!m) return ks_hint_type_error(err, "PersistentVolume");
    if (!o) return KS_QUEUE;
    return same_topologies(pl, o, m) ? KS_QUEUE_SKIP : KS_QUEUE;
}

/* LabelZonesToSet: "__"-separated, each part trimmed; an empty part makes
 * the whole label invalid (false), and upstream then ignores the label. */
static bool split_zones(ks_arena *a, const char *v, pv_topology *t) {
    uint32_t cap = 1;
    for (const char *p = v; (p = strstr(p, "__")); p += 2) cap++;
    t->values = ks_arena_calloc(a, cap, sizeof(*t->values));
    t->lens = ks_arena_calloc(a, cap, sizeof(*t->lens));
    t->nvalues = 0;
    for (const char *p = v;;) {
        const char *e = strstr(p, "__");
        const char *end = e ? e : p + strlen(p);
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f')) p++;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r' ||
                           end[-1] == '\v' || end[-1] == '\f'))
            end--;
        if (end == p) return false;
        t->values[t->nvalues] = p;
        t->lens[t->nvalues++] = (size_t)(end - p);
        if (!e) return true;
        p = e + 2;
    }
}

/* The PV topologies of the pod's claims, or a rejection. *out NULL with a
 * NULL status: nothing to check. */
static ks_status *pv_topologies(volume_zone *pl, ks_arena *a, const ks_pod *pod, vz_state **out) {
    const ks_objects *c = pl->h ? ks_handle_objects(pl->h) : NULL;
    *out = NULL;
    vz_state *s = NULL;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOL_PVC) continue;
        const char *claim = v->claim_name ? v->claim_name : "";
        if (!*claim) return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name");
        const ks_pvc *pvc = ks_vol_pvc(c, pod->ns, claim);
        if (!pvc)
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"%s\" not found", claim);
        if (pvc->volume_name == KS_ID_NONE) {
            ks_id cls = ks_vol_pvc_class(pvc);
            if (cls == KS_ID_NONE)
                return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     "PersistentVolumeClaim had no pv name and storageClass name");
            const ks_storage_class *sc = ks_vol_class(c, cls);
            if (!sc)
                return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     "storageclass.storage.k8s.io \"%s\" not found", ks_str(cls));
            /* not bound yet: VolumeBinding checks the PV it will get */
            if (sc->binding_mode == KS_BIND_WAIT_FOR_FIRST_CONSUMER) continue;
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name");
        }
        const ks_pv *pv = ks_vol_pv(c, pvc->volume_name);
        if (!pv)
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolume \"%s\" not found",
                                 ks_str(pvc->volume_name));
        for (int k = 0; k < 4; k++) {
            ks_id val;
            if (!ks_labels_get(&pv->labels, pl->label_ids[k], &val)) continue;
            if (!s) {
                s = ks_arena_alloc(a, sizeof(*s));
                s->t = ks_arena_calloc(a, 4 * (size_t)pod->nvolumes, sizeof(*s->t));
            }
            pv_topology *t = &s->t[s->n];
            t->key = pl->label_ids[k];
            t->ga_key = pl->ga_of[k];
            if (split_zones(a, ks_str(val), t)) s->n++;
        }
    }
    if (s && s->n) *out = s;
    return NULL;
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    vz_state *s;
    ks_status *err = pv_topologies(self, st->arena, pod, &s);
    if (err) return err;
    if (!s) return ks_status_new(KS_SKIP, NULL);
    ks_cycle_state_write(st, state_key, s, NULL, NULL);
    return NULL;
}

static bool value_in(const pv_topology *t, const char *v) {
    size_t n = strlen(v);
    for (uint32_t i = 0; i < t->nvalues; i++)
        if (t->lens[i] == n && memcmp(t->values[i], v, n) == 0) return true;
    return false;
}

static ks_status *check_node(volume_zone *pl, const vz_state *s, const ks_node *node) {
    bool constrained = false;
    for (int k = 0; k < 4; k++)
        if (ks_labels_has(&node->labels, pl->label_ids[k])) constrained = true;
    if (!constrained || !s) return NULL;
    for (uint32_t i = 0; i < s->n; i++) {
        const pv_topology *t = &s->t[i];
        ks_id v;
        bool ok = ks_labels_get(&node->labels, t->key, &v);
        if (!ok) ok = ks_labels_get(&node->labels, t->ga_key, &v);
        if (!ok || !value_in(t, ks_str(v))) return ks_status_new_const(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT);
    }
    return NULL;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    volume_zone *pl = self;
    if (pod->nvolumes == 0) return NULL;
    const vz_state *s = ks_cycle_state_read(st, state_key);
    if (s) return check_node(pl, s, ni->node);
    /* No PreFilter state (Filter called on its own): compute it here, in
     * memory of our own since Filter runs in parallel. */
    ks_arena *a = ks_arena_new(1024);
    vz_state *fresh;
    ks_status *r = pv_topologies(pl, a, pod, &fresh);
    if (!r) r = check_node(pl, fresh, ni->node);
    ks_arena_free(a);
    return r;
}

const ks_plugin_ops ks_plugin_volume_zone = {
    .abi_version = KS_ABI_VERSION,
    .name = "VolumeZone",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .filter = filter,
};
