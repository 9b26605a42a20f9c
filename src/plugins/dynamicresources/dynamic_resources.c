/* DynamicResources (DRA): ResourceClaims allocated at scheduling time, as
 * kube-scheduler v1.34.1's plugin, under the feature gates of
 * config/feature_gates.h (read when the plugin is created, as upstream's
 * registry reads them). With DynamicResourceAllocation off the plugin
 * does nothing, as upstream's: PreFilter skips, PostFilter answers
 * "plugin disabled".
 *
 * - PreEnqueue: every claim of the pod exists (a template's claim has
 *   been created), is not being deleted and, when generated, belongs to
 *   the pod.
 * - PreFilter: resolves the claims; an allocated claim that is reserved
 *   for other pods may still be shared; an unallocated one needs its
 *   device classes and no allocation in flight; sets up the allocator.
 * - Filter: an allocated claim's node selector must match; the allocator
 *   must find devices for all unallocated claims on the node (the result
 *   is kept per node for Reserve).
 * - PostFilter: deallocates an allocated claim that kept the pod off
 *   every node, when no other pod uses it.
 * - Reserve: the node's allocation becomes in flight (no other pod can
 *   get those devices); Unreserve undoes it and any reservation.
 * - PreBind: writes each claim's allocation and the pod's reservation
 *   as object writes claim_writes.c builds (claim_write), executed
 *   through the scheduler's API dispatcher.
 *
 * Statuses and messages are upstream's; its statusUnschedulable means
 * UnschedulableAndUnresolvable. */
#include "api/dra.h"
#include "api/pod.h"
#include "backend/api_calls.h"
#include "config/config.h"
#include "config/feature_gates.h"
#include "framework/handle.h"
#include "plugins/dynamicresources/allocator.h"
#include "plugins/dynamicresources/claim_writes.h"
#include "plugins/dynamicresources/dra_manager.h"
#include "plugins/helper/hints.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct plugin {
    ks_handle *h;
    bool enabled;              /* DynamicResourceAllocation */
    ks_dra_features f;
    int64_t filter_timeout_ns; /* DRASchedulerFilterTimeout; 0: none */
    pthread_mutex_t mu;
    ks_dra_manager *mgr;       /* acquired on first use (the scheduler's env comes later) */
} plugin;

/* One node's allocation (results parallel to the claims to allocate). */
typedef struct node_alloc {
    ks_id node;
    ks_allocation_result *results;
    struct node_alloc *next;
} node_alloc;

/* What PreFilter stores; shared by the clones of the cycle state, as
 * upstream's stateData.Clone returns itself. */
typedef struct dra_state {
    atomic_int refs;
    uint32_t n;
    ks_resource_claim **claims;            /* referenced */
    const ks_allocation_result **allocation; /* per claim: set by Reserve */
    ks_dra_allocator *allocator;
    ks_dra_device_set allocated;
    bool has_caps;
    ks_dra_capacities caps;                /* DRAConsumableCapacity */
    struct ks_device_class **classes;      /* the allocator's view (copied) */
    ks_dra_slices *slices; /* indexed, referenced */
    size_t nclasses;
    pthread_mutex_t mu;
    bool *unavailable;                     /* per claim */
    node_alloc *nodes;                     /* after Reserve: the chosen one, in arena */
    bool searched;                         /* Reserve chose a node (keep_only) */
    ks_arena *arena;                       /* allocation results */
} dra_state;

static ks_state_key state_key = -1;
/* The same for every instance, set by the first: written once, as
 * another scheduler's cycles may be reading it. */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void init_keys(void) {
    state_key = ks_state_key_get("DynamicResources");
}

/* The error upstream's CycleState.Read returns for a missing key. */
#define NOT_FOUND "not found"

static ks_dra_manager *mgr(plugin *pl) {
    pthread_mutex_lock(&pl->mu);
    if (!pl->mgr) pl->mgr = ks_dra_manager_acquire(pl->h ? ks_handle_scheduler_key(pl->h) : (const void *)pl,
                                                 pl->f.consumable_capacity);
    ks_dra_manager *m = pl->mgr;
    pthread_mutex_unlock(&pl->mu);
    return m;
}

static const ks_objects *objects(plugin *pl) { return pl->h ? ks_handle_objects(pl->h) : NULL; }

static ks_status *handle_exec(void *h, const ks_api_call *call) { return ks_handle_api_call(h, call); }

/* One ResourceClaim write (claim_writes.h), executed through the
 * scheduler's API dispatcher; *written: the claim as written. *made
 * false when nothing writes claims: the plugin then assumes the write. */
static ks_status *claim_write(plugin *pl, const ks_claim_update *u, ks_resource_claim **written, bool *made) {
    *written = NULL;
    *made = false;
    if (!pl->h) return NULL;
    ks_status *st = ks_dra_claim_write(u, written, handle_exec, pl->h);
    if (ks_status_code(st) != KS_SKIP) {
        *made = true;
        return st;
    }
    ks_status_free(st);
    return NULL;
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    plugin *pl = ks_xcalloc(1, sizeof(*pl));
    pl->h = h;
    pthread_mutex_init(&pl->mu, NULL);
    pthread_once(&keys_once, init_keys);
    pl->enabled = ks_handle_feature_enabled(h, KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION);
    if (!pl->enabled) return pl;
    pl->f = ks_dra_features_of(h);
    /* the timeout applies only with its gate; without args (an embedder's
     * framework) the configuration's default */
    pl->filter_timeout_ns = ks_handle_feature_enabled(h, KS_FEAT_DRA_FILTER_TIMEOUT) ? 10LL * 1000000000LL : 0;
    const char *ft = ks_args_string(ks_args_get(args, "filterTimeout"));
    if (ft && pl->filter_timeout_ns) {
        char *e = NULL;
        int64_t ns;
        if (ks_parse_duration(ft, &ns, &e)) pl->filter_timeout_ns = ns;
        free(e);
    }
    return pl;
}

static void destroy(void *self) {
    plugin *pl = self;
    ks_dra_manager_release(pl->mgr);
    pthread_mutex_destroy(&pl->mu);
    free(pl);
}

/* Upstream with queueing hints: Node Add|UpdateNodeLabel|
 * UpdateNodeAllocatable, ResourceClaim Add|Update, Pod
 * UpdatePodGeneratedResourceClaim, DeviceClass and ResourceSlice
 * Add|Update. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    plugin *pl = self;
    /* disabled: it never rejects a pod */
    if (!pl->enabled) return 0;
    static const ks_cluster_event ev[] = {
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_ALLOCATABLE},
        {KS_EV_RESOURCE_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM},
        {KS_EV_DEVICE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_EV_RESOURCE_SLICE, KS_ACT_ADD | KS_ACT_UPDATE},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

static char *pod_claims(plugin *pl, const ks_pod *pod, ks_resource_claim **out, uint32_t *nout);

static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

static bool same_claim(const ks_resource_claim *a, const ks_resource_claim *b) {
    if (a->uid && b->uid && a->uid[0] && b->uid[0]) return strcmp(a->uid, b->uid) == 0;
    return a->ns == b->ns && a->name == b->name;
}

/* The claims' status as far as scheduling reads it: the allocation (its
 * devices and whether it has a node selector), the consumers and whether
 * device status is reported. */
static bool status_equal(const ks_resource_claim *a, const ks_resource_claim *b) {
    if (a->has_device_status != b->has_device_status || a->nreserved != b->nreserved) return false;
    for (uint32_t i = 0; i < a->nreserved; i++)
        if (!str_eq(a->reserved[i].uid, b->reserved[i].uid) || !str_eq(a->reserved[i].name, b->reserved[i].name))
            return false;
    const ks_allocation_result *x = a->allocation, *y = b->allocation;
    if (!x || !y) return x == y;
    if (x == y) return true;
    if (x->nresults != y->nresults || x->nconfig != y->nconfig || x->has_node_selector != y->has_node_selector)
        return false;
    for (uint32_t i = 0; i < x->nresults; i++) {
        const ks_device_result *p = &x->results[i], *q = &y->results[i];
        if (!str_eq(p->request, q->request) || !str_eq(p->driver, q->driver) || !str_eq(p->pool, q->pool) ||
            !str_eq(p->device, q->device) || p->admin_access != q->admin_access || !str_eq(p->share_id, q->share_id) ||
            p->nconsumed != q->nconsumed)
            return false;
        for (uint32_t k = 0; k < p->nconsumed; k++)
            if (!str_eq(p->consumed[k].name, q->consumed[k].name) || p->consumed[k].q.nano != q->consumed[k].q.nano)
                return false;
    }
    return true;
}

/* Claims: a deallocated claim may free devices for anyone; else only a
 * claim the pod uses (all its claims resolvable), when it is new or its
 * status changed. The pod's own generated claims recorded in its status
 * (all of them resolvable now). Nodes, classes and slices have no hint. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    plugin *pl = self;
    if (ev.resource & KS_EV_RESOURCE_CLAIM) {
        const ks_resource_claim *o = old_obj && old_obj->kind == KS_KIND_RESOURCE_CLAIM ? old_obj->obj : NULL;
        const ks_resource_claim *m = new_obj && new_obj->kind == KS_KIND_RESOURCE_CLAIM ? new_obj->obj : NULL;
        if (!m) return ks_hint_type_error(err, "ResourceClaim");
        ks_resource_claim *claims[pod->nresource_claims + 1];
        uint32_t n = 0;
        char *problem = pod_claims(pl, pod, claims, &n);
        bool uses = false;
        for (uint32_t i = 0; i < n; i++) {
            if (same_claim(claims[i], m)) uses = true;
            KS_OBJECT_UNREF(claims[i]);
        }
        if (problem) {
            free(problem);
            return KS_QUEUE_SKIP;
        }
        if (o && o->allocation && !m->allocation) return KS_QUEUE;
        if (!uses) return KS_QUEUE_SKIP;
        if (!o) return KS_QUEUE;
        return status_equal(o, m) ? KS_QUEUE_SKIP : KS_QUEUE;
    }
    if (ev.resource & (KS_EV_POD | KS_EV_ASSIGNED_POD | KS_EV_UNSCHEDULED_POD)) {
        const ks_pod *m = ks_hint_pod(new_obj);
        if (!m) return ks_hint_type_error(err, "Pod");
        if (!ks_hint_same_pod(pod, m)) return KS_QUEUE_SKIP;
        char *problem = pod_claims(pl, m, NULL, NULL);
        if (problem) {
            free(problem);
            return KS_QUEUE_SKIP;
        }
        return KS_QUEUE;
    }
    return KS_QUEUE;
}

/* ---- the pod's claims ---------------------------------------------------------- */

/* upstream foreachPodResourceClaim: every claim the pod names exists and
 * may be used by it. Returns the message of the first problem (malloc'd)
 * or NULL; with out, the claims found (referenced) go there. */
static char *pod_claims(plugin *pl, const ks_pod *pod, ks_resource_claim **out, uint32_t *nout) {
    char buf[600];
    if (nout) *nout = 0;
    const ks_objects *o = objects(pl);
    for (uint32_t i = 0; i < pod->nresource_claims; i++) {
        const ks_pod_claim *pc = &pod->resource_claims[i];
        bool check_owner = false, skip = false;
        const char *name = ks_pod_claim_name(pod, i, &check_owner, &skip);
        if (!pc->claim_name && !pc->template_name)
            return ks_xasprintf("pod \"%s\", spec.resourceClaim \"%s\": none of the supported fields are set",
                                ks_pod_fullname(pod, buf, sizeof buf), pc->name);
        if (skip) continue;
        if (!name) return ks_xasprintf("pod \"%s\": ResourceClaim not created yet", ks_pod_fullname(pod, buf, sizeof buf));
        ks_id nid = ks_intern_find(name);
        ks_resource_claim *c = nid == KS_ID_INVALID ? NULL : ks_dra_manager_claim(mgr(pl), o, pod->ns, nid);
        /* the assume cache's words */
        if (!c) return ks_xasprintf("could not find ResourceClaim \"%s/%s\"", ks_str(pod->ns), name);
        char *err = NULL;
        if (c->deleting) err = ks_xasprintf("resourceclaim \"%s\" is being deleted", name);
        else if (check_owner && !ks_claim_owned_by(c, pod->uid))
            err = ks_xasprintf("ResourceClaim %s/%s was not created for pod %s (pod is not owner)", ks_str(c->ns),
                               name, ks_pod_fullname(pod, buf, sizeof buf));
        if (err || !out) {
            KS_OBJECT_UNREF(c);
            if (err) return err;
            continue;
        }
        out[(*nout)++] = c;
    }
    return NULL;
}

static ks_status *pre_enqueue(void *self, const ks_pod *pod) {
    plugin *pl = self;
    if (!pl->enabled || !pod->nresource_claims) return NULL;
    char *err = pod_claims(pl, pod, NULL, NULL);
    if (!err) return NULL;
    ks_status *s = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", err);
    free(err);
    return s;
}

/* ---- the cycle state ------------------------------------------------------------- */

static void state_free(void *p) {
    dra_state *s = p;
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
    for (uint32_t i = 0; i < s->n; i++) KS_OBJECT_UNREF(s->claims[i]);
    ks_dra_allocator_free(s->allocator);
    ks_dra_device_set_free(&s->allocated);
    if (s->has_caps) ks_dra_capacities_free(&s->caps);
    for (size_t i = 0; i < s->nclasses; i++) KS_OBJECT_UNREF(s->classes[i]);
    ks_dra_slices_unref(s->slices);
    free(s->classes);
    free(s->claims);
    free(s->allocation);
    free(s->unavailable);
    for (node_alloc *na = s->searched ? NULL : s->nodes, *nx; na; na = nx) {
        nx = na->next;
        free(na);
    }
    ks_arena_free(s->arena);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void *state_clone(const void *p) {
    dra_state *s = (dra_state *)p;
    atomic_fetch_add(&s->refs, 1);
    return s;
}

static dra_state *get_state(ks_cycle_state *st) { return ks_cycle_state_read(st, state_key); }

static ks_status *unschedulable(const char *fmt, ...) KS_PRINTF(1, 2);
static ks_status *unschedulable(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ks_status *s = ks_status_newv(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, fmt, ap);
    va_end(ap);
    return s;
}

/* upstream validateDeviceClass */
static ks_status *check_class(const ks_objects *o, const char *cls, const char *request) {
    if (!cls || !*cls) return ks_status_new(KS_ERROR, "request %s: unsupported request type", request);
    ks_id id = ks_intern_find(cls);
    for (uint32_t i = 0; o && id != KS_ID_INVALID && i < o->device_classes.n; i++)
        if (o->device_classes.v[i]->name == id) return NULL;
    return unschedulable("request %s: device class %s does not exist", request, cls);
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *const *nodes,
                             size_t nnodes, ks_pre_filter_result **result) {
    plugin *pl = self;
    if (!pl->enabled) return ks_status_new(KS_SKIP, NULL);
    dra_state *s = ks_xcalloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->mu, NULL);
    ks_dra_device_set_init(&s->allocated);
    /* small for the pods without claims: the state lives as long as the
     * binding cycle, which may wait long on the API server */
    s->arena = ks_arena_new(pod->nresource_claims ? 4096 : 256);
    ks_cycle_state_write(st, state_key, s, state_free, state_clone);
    if (!pod->nresource_claims) return ks_status_new(KS_SKIP, NULL);

    ks_resource_claim **claims = ks_xcalloc(pod->nresource_claims, sizeof(*claims));
    uint32_t n = 0;
    char *err = pod_claims(pl, pod, claims, &n);
    if (err) {
        for (uint32_t i = 0; i < n; i++) KS_OBJECT_UNREF(claims[i]);
        free(claims);
        ks_status *r = unschedulable("%s", err);
        free(err);
        return r;
    }
    if (n == 0) {
        free(claims);
        return ks_status_new(KS_SKIP, NULL);
    }
    /* the state keeps the claims only once they all pass, as upstream's
     * (its PostFilter then sees none) */
    const ks_objects *o = objects(pl);
    uint32_t to_allocate = 0;
    char buf[600];
    ks_status *bad = NULL;
    for (uint32_t i = 0; i < n && !bad; i++) {
        const ks_resource_claim *c = claims[i];
        /* an allocated claim can always be reserved (CanBeReserved) */
        if (c->allocation) continue;
        to_allocate++;
        /* an allocation in flight: wait for it to finish */
        if (c->uid && ks_dra_manager_pending(mgr(pl), c->uid)) {
            bad = unschedulable("resource claim %s is in the process of being allocated",
                                ks_dra_claim_ref(c, buf, sizeof buf));
            break;
        }
        for (uint32_t q = 0; q < c->nrequests && !bad; q++) {
            const ks_device_request *r = &c->requests[q];
            if (r->has_exactly) {
                bad = check_class(o, r->exactly.device_class, r->name);
            } else if (r->nfirst) {
                if (!pl->f.prioritized_list) {
                    bad = unschedulable("resource claim %s, request %s: has subrequests, but the DRAPrioritizedList "
                                        "feature is disabled",
                                        ks_dra_claim_ref(c, buf, sizeof buf), r->name);
                    break;
                }
                for (uint32_t k = 0; k < r->nfirst && !bad; k++) {
                    char qual[600];
                    snprintf(qual, sizeof qual, "%s/%s", r->name, r->first[k].name);
                    bad = check_class(o, r->first[k].device_class, qual);
                }
            } else {
                bad = unschedulable("resource claim %s, request %s: unknown request type",
                                    ks_dra_claim_ref(c, buf, sizeof buf), r->name);
            }
        }
    }
    if (bad) {
        for (uint32_t i = 0; i < n; i++) KS_OBJECT_UNREF(claims[i]);
        free(claims);
        return bad;
    }
    s->claims = claims;
    s->n = n;
    s->allocation = ks_xcalloc(n, sizeof(*s->allocation));
    s->unavailable = ks_xcalloc(n, sizeof(bool));
    if (to_allocate) {
        /* devices in use: allocated claims (as the plugin knows them) and
         * allocations in flight; the classes and slices are referenced
         * for the cycle, which may outlive the objects' view */
        if (pl->f.consumable_capacity) {
            ks_dra_capacities_init(&s->caps);
            s->has_caps = true;
        }
        ks_dra_manager_allocated(mgr(pl), o, &s->allocated, s->has_caps ? &s->caps : NULL);
        if (o) {
            s->nclasses = o->device_classes.n;
            s->classes = ks_xcalloc(s->nclasses ? s->nclasses : 1, sizeof(*s->classes));
            for (size_t i = 0; i < s->nclasses; i++) s->classes[i] = KS_OBJECT_REF(o->device_classes.v[i]);
        }
        s->slices = ks_dra_manager_slices(mgr(pl), o, pl->f.device_taints);
        s->allocator = ks_dra_allocator_new(&pl->f, &s->allocated, s->classes, s->nclasses, s->slices,
                                            ks_dra_manager_cel(mgr(pl)));
        if (s->has_caps) ks_dra_allocator_set_capacities(s->allocator, &s->caps);
    }
    return NULL;
}

/* ---- Filter --------------------------------------------------------------------------- */

static int64_t mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    plugin *pl = self;
    if (!pl->enabled) return NULL;
    dra_state *s = get_state(st);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND);
    if (!s->n) return NULL;
    const ks_node *node = ks_node_info_node(ni);
    uint32_t unavailable[64];
    uint32_t nun = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        const ks_allocation_result *a = s->claims[i]->allocation;
        if (a && a->has_node_selector &&
            !ks_node_selector_matches(&a->node_selector, &node->labels, node->name)) {
            if (nun < 64) unavailable[nun++] = i;
        }
    }
    ks_allocation_result *results = NULL;
    if (s->allocator) {
        const ks_resource_claim *todo[64];
        size_t nt = 0;
        for (uint32_t i = 0; i < s->n && nt < 64; i++)
            if (!s->claims[i]->allocation) todo[nt++] = s->claims[i];
        ks_arena *a = ks_arena_new(1024);
        results = ks_arena_calloc(a, nt ? nt : 1, sizeof(*results));
        char *err = NULL;
        int64_t deadline = pl->filter_timeout_ns > 0 ? mono_now() + pl->filter_timeout_ns : 0;
        ks_dra_outcome out = ks_dra_allocate(s->allocator, node, todo, nt, a, results, deadline, &err);
        if (out != KS_DRA_ALLOCATED) {
            ks_arena_free(a);
            if (out == KS_DRA_TIMEOUT) return unschedulable("timed out trying to allocate devices");
            if (out == KS_DRA_ERROR) {
                ks_status *r = ks_status_new(KS_ERROR, "%s", err);
                free(err);
                return r;
            }
            return unschedulable("cannot allocate all claims");
        }
        /* keep the results with the state, for Reserve */
        pthread_mutex_lock(&s->mu);
        ks_allocation_result *kept = ks_arena_calloc(s->arena, nt ? nt : 1, sizeof(*kept));
        for (size_t i = 0; i < nt; i++) kept[i] = *ks_allocation_copy(s->arena, &results[i]);
        pthread_mutex_unlock(&s->mu);
        ks_arena_free(a);
        results = kept;
    }
    if (nun) {
        pthread_mutex_lock(&s->mu);
        for (uint32_t i = 0; i < nun; i++) s->unavailable[unavailable[i]] = true;
        pthread_mutex_unlock(&s->mu);
        return unschedulable("resourceclaim not available on the node");
    }
    if (s->allocator) {
        node_alloc *na = ks_xcalloc(1, sizeof(*na));
        na->node = node->name;
        na->results = results;
        pthread_mutex_lock(&s->mu);
        na->next = s->nodes;
        s->nodes = na;
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

/* ---- PostFilter ------------------------------------------------------------------------- */

static ks_status *post_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_status_map *statuses,
                              ks_post_filter_result *result) {
    plugin *pl = self;
    if (!pl->enabled) return ks_status_new(KS_UNSCHEDULABLE, "plugin disabled");
    dra_state *s = get_state(st);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND);
    if (!s->n) return ks_status_new(KS_UNSCHEDULABLE, "no new claims to deallocate");
    /* upstream picks one at random (a map); ksched the first */
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->unavailable[i]) continue;
        const ks_resource_claim *c = s->claims[i];
        bool only_pod = c->nreserved == 1 && c->reserved[0].uid && pod->uid && strcmp(c->reserved[0].uid, pod->uid) == 0;
        if (c->nreserved != 0 && !only_pod) continue;
        ks_claim_update u = {.op = KS_CLAIM_DEALLOCATE, .claim = c, .pod = pod};
        ks_resource_claim *written = NULL;
        bool made;
        ks_status *e = claim_write(pl, &u, &written, &made);
        if (e) return e;
        if (!made) written = ks_claim_with_status(c, NULL, NULL, 0, false);
        if (written) {
            ks_dra_manager_assume(mgr(pl), c, written);
            KS_OBJECT_UNREF(written);
        }
        return ks_status_new(KS_UNSCHEDULABLE, "deallocation of ResourceClaim completed");
    }
    return ks_status_new(KS_UNSCHEDULABLE, "still not schedulable");
}

/* ---- Reserve / Unreserve --------------------------------------------------------------------- */

/* Once a node is chosen the search is over: only that node's results
 * are read again (PreBind, Unreserve). The state lives until the binding
 * cycle ends, which waits on the API server, so what served the search
 * goes now: the allocator, the copy of the allocated-device set (the
 * cluster's allocated devices: ~100 KB with 5,000 of them), the slices
 * it referenced, and every other feasible node's results (~200 B each).
 * Kept, all of it made ~200 KB per pod in flight in a DRA run through
 * the API server (docs/performance.md). The classes stay referenced: a
 * result's configs point into them. No Filter runs on this state after
 * Reserve (clones are made before it, in the cycle). */
static void keep_only(dra_state *s, const node_alloc *chosen) {
    uint32_t nt = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (!s->claims[i]->allocation) nt++;
    ks_arena *arena = ks_arena_new(512);
    node_alloc *na = ks_arena_calloc(arena, 1, sizeof(*na));
    na->node = chosen->node;
    na->results = ks_arena_calloc(arena, nt ? nt : 1, sizeof(*na->results));
    for (uint32_t i = 0; i < nt; i++) na->results[i] = *ks_allocation_copy(arena, &chosen->results[i]);
    pthread_mutex_lock(&s->mu);
    for (node_alloc *x = s->nodes, *nx; x; x = nx) {
        nx = x->next;
        free(x);
    }
    ks_arena_free(s->arena);
    s->arena = arena;
    s->nodes = na;
    ks_dra_allocator_free(s->allocator);
    s->allocator = NULL;
    s->searched = true;
    ks_dra_device_set_free(&s->allocated);
    ks_dra_device_set_init(&s->allocated);
    if (s->has_caps) ks_dra_capacities_free(&s->caps);
    s->has_caps = false;
    ks_dra_slices_unref(s->slices);
    s->slices = NULL;
    pthread_mutex_unlock(&s->mu);
}

static ks_status *reserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    plugin *pl = self;
    if (!pl->enabled) return NULL;
    dra_state *s = get_state(st);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND);
    if (!s->n) return NULL;
    uint32_t with_allocator = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (!s->claims[i]->allocation) with_allocator++;
    if (!with_allocator) return NULL;
    if (!s->allocator) return NULL;
    ks_id nid = ks_intern(node);
    const node_alloc *na = NULL;
    pthread_mutex_lock(&s->mu);
    for (const node_alloc *x = s->nodes; x; x = x->next)
        if (x->node == nid) {
            na = x;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    if (!na) return ks_status_new(KS_ERROR, "claim allocation not found for node");
    keep_only(s, na);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        ks_resource_claim *c = s->claims[i];
        if (c->allocation) continue;
        const ks_allocation_result *a = &s->nodes->results[k++];
        s->allocation[i] = a;
        /* in flight until PreBind has written it: no other pod gets these
         * devices meanwhile */
        ks_resource_claim *pending = ks_claim_with_status(c, a, c->reserved, c->nreserved, true);
        ks_dra_manager_signal_pending(mgr(pl), c->uid ? c->uid : "", pending);
        KS_OBJECT_UNREF(pending);
        if (KS_V(5)) {
            char buf[600];
            ks_infof(5, "Reserved resource in allocation result claim=%s devices=%u", ks_dra_claim_ref(c, buf, sizeof buf),
                     a->nresults);
        }
    }
    return NULL;
}

static void unreserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    plugin *pl = self;
    if (!pl->enabled) return;
    dra_state *s = get_state(st);
    if (!s || !s->n) return;
    for (uint32_t i = 0; i < s->n; i++) {
        const ks_resource_claim *c = s->claims[i];
        if (c->uid && ks_dra_manager_remove_pending(mgr(pl), c->uid)) ks_dra_manager_restore(mgr(pl), c->ns, c->name);
        if (c->allocation && ks_claim_reserved_for(c, pod->uid)) {
            /* remove the pod from reservedFor (a patch upstream) */
            ks_claim_update u = {.op = KS_CLAIM_UNRESERVE, .claim = c, .pod = pod};
            ks_resource_claim *written = NULL;
            bool made;
            ks_status *e = claim_write(pl, &u, &written, &made);
            if (e) {
                char buf[600];
                ks_errorf("unreserve resourceclaim=%s: %s", ks_dra_claim_ref(c, buf, sizeof buf),
                          ks_status_reason(e, 0));
                ks_status_free(e);
            }
            if (written) KS_OBJECT_UNREF(written);
        }
    }
}

/* ---- PreBind ---------------------------------------------------------------------------------- */

static ks_status *pre_bind_pre_flight(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    plugin *pl = self;
    if (!pl->enabled) return ks_status_new(KS_SKIP, NULL);
    dra_state *s = get_state(st);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND);
    if (!s->n) return ks_status_new(KS_SKIP, NULL);
    return NULL;
}

/* upstream bindClaim: store the allocation made in Reserve (if any) and
 * the pod's reservation. */
static ks_status *bind_claim(plugin *pl, dra_state *s, uint32_t i, const ks_pod *pod) {
    ks_resource_claim *c = s->claims[i];
    const ks_allocation_result *a = s->allocation[i];
    char buf[600];
    ks_status *err = NULL;
    ks_resource_claim *written = NULL;
    if (c->deleting) {
        err = ks_status_new(KS_ERROR, "claim %s got deleted in the meantime", ks_dra_claim_ref(c, buf, sizeof buf));
    } else if (a && c->allocation) {
        err = ks_status_new(KS_ERROR, "claim %s got allocated elsewhere in the meantime",
                            ks_dra_claim_ref(c, buf, sizeof buf));
    } else {
        ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = pod, .allocation = a};
        bool made;
        ks_status *e = claim_write(pl, &u, &written, &made);
        if (e) {
            /* the backend's error is upstream's whole message (its retry
             * loop names the step that failed) */
            err = e;
        } else if (!written) {
            /* no backend to write to: the claim as it would have been written */
            ks_claim_consumer *r = ks_xcalloc(c->nreserved + 1, sizeof(*r));
            if (c->nreserved) memcpy(r, c->reserved, c->nreserved * sizeof(*r));
            r[c->nreserved] = (ks_claim_consumer){NULL, "pods", ks_str(pod->name), pod->uid};
            written = ks_claim_with_status(c, a ? a : c->allocation, r, c->nreserved + 1, a != NULL);
            free(r);
        }
    }
    if (a) {
        /* the allocation is no longer in flight: written (and assumed until
         * the backend reports it) or failed */
        if (!err && written) ks_dra_manager_assume(mgr(pl), c, written);
        if (c->uid) ks_dra_manager_remove_pending(mgr(pl), c->uid);
    } else if (!err && written) {
        ks_dra_manager_assume(mgr(pl), c, written);
    }
    if (err) {
        if (written) KS_OBJECT_UNREF(written);
        return err;
    }
    /* Unreserve works with the claim as written */
    KS_OBJECT_UNREF(s->claims[i]);
    s->claims[i] = written;
    return NULL;
}

static ks_status *pre_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    plugin *pl = self;
    if (!pl->enabled) return NULL;
    dra_state *s = get_state(st);
    if (!s) return ks_status_new(KS_ERROR, NOT_FOUND);
    if (!s->n) return NULL;
    /* earlier pods' writes the objects now show: their assumptions go
     * (scheduling cycles may have ended long before the last binding) */
    ks_dra_manager_sweep(mgr(pl), objects(pl));
    for (uint32_t i = 0; i < s->n; i++) {
        if (ks_claim_reserved_for(s->claims[i], pod->uid)) continue;
        ks_status *e = bind_claim(pl, s, i, pod);
        if (e) return e;
    }
    return NULL;
}

const ks_plugin_ops ks_plugin_dynamic_resources = {
    .abi_version = KS_ABI_VERSION,
    .name = "DynamicResources",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_enqueue = pre_enqueue,
    .pre_filter = pre_filter,
    .filter = filter,
    .post_filter = post_filter,
    .reserve = reserve,
    .unreserve = unreserve,
    .pre_bind_pre_flight = pre_bind_pre_flight,
    .pre_bind = pre_bind,
};
