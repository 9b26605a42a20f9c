#include "plugins/noderesources/resource_allocation.h"
#include "api/quantity.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pod's requests ------------------------------------------------ */

static int64_t resource_value(const ks_resource *r, const ks_resource_spec *s) {
    switch (s->cls) {
    case KS_RCLASS_CPU: return r->milli_cpu;
    case KS_RCLASS_MEMORY: return r->memory;
    case KS_RCLASS_EPHEMERAL: return r->ephemeral_storage;
    case KS_RCLASS_SCALAR: return ks_resource_get(r, s->id);
    default: return 0;
    }
}

/* Nano-units (10^-9 of the resource's unit) of an integer amount as the
 * scorer reads it: millicores for cpu, whole units for the rest. */
static __int128 to_nano(const ks_resource_spec *s, int64_t v) {
    return (__int128)v * (s->cls == KS_RCLASS_CPU ? 1000000 : KS_NANO_PER_UNIT);
}

static __int128 qlist_nano(const ks_qlist *l, const ks_resource_spec *s) {
    const ks_qentry *e = ks_qlist_find(l, s->id);
    return e ? e->nano : 0;
}

/* One container's request in nano-units; a container that does not state
 * a cpu or memory request counts as asking for the scheduler's defaults.
 * Decoded pods carry their quantities exactly (req_q); pods built in code
 * only the integer vector. */
static __int128 container_request(const ks_container *c, const ks_resource_spec *s) {
    if (s->cls == KS_RCLASS_CPU && !c->has_cpu_request) return to_nano(s, KS_DEFAULT_MILLI_CPU_REQUEST);
    if (s->cls == KS_RCLASS_MEMORY && !c->has_memory_request) return to_nano(s, KS_DEFAULT_MEMORY_REQUEST);
    if (c->req_q.v) return qlist_nano(&c->req_q, s);
    return to_nano(s, resource_value(&c->requests, s));
}

/* Upstream PodRequests with NonMissingContainerRequests = {100m, 200Mi}
 * and pod-level requests skipped: regular and sidecar containers add up,
 * each init container needs its own request plus the sidecars started
 * before it, and the pod needs the larger of the two; then overhead. The
 * sum is exact and rounded up once, as Quantity.MilliValue()/Value() do. */
static int64_t non_zero_request(const ks_pod *pod, const ks_resource_spec *s) {
    __int128 sum = 0, sidecars = 0, init_max = 0, need;
    for (uint32_t i = 0; i < pod->ncontainers; i++) sum += container_request(&pod->containers[i], s);
    for (uint32_t i = 0; i < pod->ninit; i++) {
        const ks_container *c = &pod->init_containers[i];
        __int128 v = container_request(c, s);
        if (c->sidecar) {
            sum += v;
            sidecars += v;
            need = sidecars;
        } else {
            need = v + sidecars;
        }
        if (need > init_max) init_max = need;
    }
    if (init_max > sum) sum = init_max;
    const ks_pod_level *lv = pod->level;
    if (lv && lv->overhead_q.v) sum += qlist_nano(&lv->overhead_q, s);
    else if (lv && lv->has_overhead) sum += to_nano(s, resource_value(&lv->overhead, s));
    int64_t out = 0;
    bool ok = s->cls == KS_RCLASS_CPU ? ks_nano_to_milli(sum, &out) : ks_nano_to_value(sum, &out);
    return ok ? out : INT64_MAX;
}

void ks_pod_resource_request_list(const ks_resource_allocation_scorer *r, const ks_pod *pod,
                                  int64_t *out) {
    for (uint32_t i = 0; i < r->nresources; i++) {
        const ks_resource_spec *s = &r->resources[i];
        out[i] = r->use_requested ? resource_value(&pod->requests, s) : non_zero_request(pod, s);
    }
}

bool ks_is_best_effort_request(const int64_t *requests, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (requests[i] != 0) return false;
    return true;
}

/* ---- per node ---------------------------------------------------------- */

/* (allocatable, requested including the pod) of one resource on a node;
 * (0, 0) leaves the resource out of the score: a scalar resource the pod
 * does not ask for, or one the node does not have. */
static void allocatable_request(const ks_resource_allocation_scorer *r, const ks_node_info *ni,
                                const ks_resource_spec *s, int64_t pod_request, int64_t *alloc,
                                int64_t *req) {
    const ks_resource *requested = r->use_requested ? &ni->requested : &ni->nonzero_requested;
    *alloc = *req = 0;
    if (pod_request == 0 && s->cls == KS_RCLASS_SCALAR) return;
    switch (s->cls) {
    case KS_RCLASS_CPU:
        *alloc = ni->allocatable.milli_cpu;
        *req = requested->milli_cpu + pod_request;
        break;
    case KS_RCLASS_MEMORY:
        *alloc = ni->allocatable.memory;
        *req = requested->memory + pod_request;
        break;
    case KS_RCLASS_EPHEMERAL:
        *alloc = ni->allocatable.ephemeral_storage;
        *req = ni->requested.ephemeral_storage + pod_request;
        break;
    case KS_RCLASS_SCALAR:
        *alloc = ks_resource_get(&ni->allocatable, s->id);
        *req = ks_resource_get(&ni->requested, s->id) + pod_request;
        break;
    default:
        break;
    }
}

int64_t ks_resource_allocation_score(const ks_resource_allocation_scorer *r,
                                     const ks_node_info *ni, const int64_t *pod_requests) {
    /* Only the first nresources entries are written and read. */
    int64_t requested[KS_MAX_SCORED_RESOURCES], allocatable[KS_MAX_SCORED_RESOURCES];
    for (uint32_t i = 0; i < r->nresources; i++) {
        int64_t a, q;
        allocatable_request(r, ni, &r->resources[i], pod_requests[i], &a, &q);
        /* A resource the node does not have is left out of the score. */
        allocatable[i] = a;
        requested[i] = a == 0 ? 0 : q;
    }
    return r->scorer(r, requested, allocatable);
}

/* ---- args -------------------------------------------------------------- */

static void set_spec(ks_resource_spec *s, const char *name, int64_t weight) {
    s->name = ks_str(ks_intern(name));
    s->id = ks_intern(name);
    s->cls = ks_resource_class(name);
    s->weight = weight;
}

void ks_resource_specs_default(ks_resource_allocation_scorer *r) {
    r->nresources = 2;
    set_spec(&r->resources[0], "cpu", 1);
    set_spec(&r->resources[1], "memory", 1);
}

bool ks_resource_specs_parse(const ks_args *list, const char *path,
                             ks_resource_allocation_scorer *r, char **err) {
    size_t n = list ? ks_args_len(list) : 0;
    if (n == 0) {
        ks_resource_specs_default(r);
        return true;
    }
    if (n > KS_MAX_SCORED_RESOURCES) {
        *err = ks_xasprintf("%s: Too many: %zu: must have at most %d items", path, n,
                            KS_MAX_SCORED_RESOURCES);
        return false;
    }
    r->nresources = 0;
    for (size_t i = 0; i < n; i++) {
        const ks_args *item = ks_args_item(list, i);
        const char *name = ks_args_string(ks_args_get(item, "name"));
        int64_t weight = 0;
        const ks_args *w = ks_args_get(item, "weight");
        if (w && !ks_args_int(w, &weight)) {
            *err = ks_xasprintf("%s[%zu].weight: Invalid value: must be an integer", path, i);
            return false;
        }
        if (weight == 0) weight = 1;
        set_spec(&r->resources[r->nresources++], name ? name : "", weight);
    }
    return true;
}
