#include "api/pod.h"
#include "api/quantity.h"
#include "util/xalloc.h"

#include <stddef.h>

#include <stdio.h>
#include <string.h>

static ks_arena_hint pod_arena_hint;

ks_pod *ks_pod_new(void) {
    ks_api_init();
    ks_arena *a = ks_arena_new(ks_arena_hint_get(&pod_arena_hint, 4096));
    ks_pod *p = ks_arena_alloc(a, sizeof(*p));
    atomic_init(&p->refs, 1);
    p->arena = a;
    return p;
}

void ks_pod_note_arena(const ks_pod *p) { ks_arena_hint_note(&pod_arena_hint, p->arena); }

ks_pod *ks_pod_clone(const ks_pod *p) { return ks_pod_clone_room(p, 64); }

/* A clone owns a fresh arena holding only the struct; every array and
 * string still points into the original, which the clone keeps alive. */
ks_pod *ks_pod_clone_room(const ks_pod *p, size_t room) {
    ks_arena *a = ks_arena_new(sizeof(ks_pod) + room);
    ks_pod *c = ks_arena_alloc(a, sizeof(*c));
    _Static_assert(offsetof(ks_pod, refs) == 0, "refs comes first");
    /* Everything but the reference count, which other threads may be
     * changing: a plain copy of it would be a data race. */
    memcpy((char *)c + sizeof(c->refs), (const char *)p + sizeof(p->refs), sizeof(*c) - sizeof(c->refs));
    atomic_init(&c->refs, 1);
    c->arena = a;
    c->doc = ks_docref_ref(p->doc);
    c->clone_of = ks_pod_ref((ks_pod *)p);
    return c;
}

void ks_pod_unref(ks_pod *p) {
    if (!p) return;
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
    ks_pod *orig = p->clone_of;
    /* The original holds the name's reference; a clone, its original. */
    if (!orig && p->name_counted) ks_intern_unref(p->name);
    ks_docref_unref(p->doc);
    ks_arena_free(p->arena);
    ks_pod_unref(orig);
}

const char *ks_pod_fullname(const ks_pod *p, char *buf, int n) {
    snprintf(buf, (size_t)n, "%s/%s", ks_str(p->ns), ks_str(p->name));
    return buf;
}

bool ks_pod_is_terminating(const ks_pod *p) { return p->has_deletion_ts; }

/* corev1helpers.PodPriority: spec.priority, 0 when unset. */
int32_t ks_pod_priority(const ks_pod *p) { return p->has_priority ? p->priority : 0; }

const ks_owner_ref *ks_pod_controller(const ks_pod *p) {
    for (uint32_t i = 0; i < p->nowners; i++)
        if (p->owners[i].controller) return &p->owners[i];
    return NULL;
}

/* ---- requests (component-helpers resource.PodRequests) ------------------ */

/* A ResourceList under construction: names with exact amounts. */
#define ACC_MAX 64
typedef struct {
    uint32_t n;
    bool overflow;
    ks_qentry e[ACC_MAX];
} acc;

static ks_qentry *acc_slot(acc *a, ks_id name, bool create) {
    for (uint32_t i = 0; i < a->n; i++)
        if (a->e[i].name == name) return &a->e[i];
    if (!create) return NULL;
    if (a->n == ACC_MAX) {
        a->overflow = true;
        return NULL;
    }
    a->e[a->n] = (ks_qentry){.name = name, .nano = 0};
    return &a->e[a->n++];
}

static void acc_add(acc *a, const ks_qentry *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        ks_qentry *s = acc_slot(a, v[i].name, true);
        if (s) s->nano += v[i].nano;
    }
}

static void acc_max(acc *a, const ks_qentry *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        ks_qentry *s = acc_slot(a, v[i].name, false);
        if (!s) {
            s = acc_slot(a, v[i].name, true);
            if (s) s->nano = v[i].nano;
        } else if (v[i].nano > s->nano) {
            s->nano = v[i].nano;
        }
    }
}

/* The exact list of a resource vector built in code: cpu and memory when
 * flagged present or non-zero, the others when non-zero. */
static void acc_from_resource(acc *a, const ks_resource *r, bool has_cpu, bool has_mem) {
    a->n = 0;
    a->overflow = false;
    if (has_cpu || r->milli_cpu)
        acc_add(a, &(ks_qentry){KS_RES_CPU, (__int128)r->milli_cpu * 1000000}, 1);
    if (has_mem || r->memory)
        acc_add(a, &(ks_qentry){KS_RES_MEMORY, (__int128)r->memory * KS_NANO_PER_UNIT}, 1);
    if (r->ephemeral_storage)
        acc_add(a, &(ks_qentry){KS_RES_EPHEMERAL, (__int128)r->ephemeral_storage * KS_NANO_PER_UNIT}, 1);
    if (r->allowed_pods)
        acc_add(a, &(ks_qentry){KS_RES_PODS, (__int128)r->allowed_pods * KS_NANO_PER_UNIT}, 1);
    for (uint32_t i = 0; i < r->nscalar; i++)
        acc_add(a, &(ks_qentry){r->scalars[i].name, (__int128)r->scalars[i].val * KS_NANO_PER_UNIT}, 1);
}

static void acc_from_qlist(acc *a, const ks_qlist *l) {
    a->n = 0;
    a->overflow = false;
    acc_add(a, l->v, l->n);
}

/* The request (or limit) of one container as the aggregation sees it: the
 * spec, or while a resize is in flight the larger of spec and status;
 * then the non-zero defaults for cpu/memory it does not name. */
static void container_list(const ks_pod *p, const ks_container *c, bool limits, bool use_status,
                           const acc *nonmissing, acc *out) {
    if (limits) {
        if (c->lim_q.v) acc_from_qlist(out, &c->lim_q);
        else acc_from_resource(out, &c->limits, false, false);
        return;
    }
    if (c->req_q.v) acc_from_qlist(out, &c->req_q);
    else acc_from_resource(out, &c->requests, c->has_cpu_request, c->has_memory_request);
    if (use_status && c->has_status_resources) {
        if (p->resize_infeasible) {
            out->n = 0;
            acc_add(out, c->status_req_q.v, c->status_req_q.n);
        } else {
            acc_max(out, c->status_req_q.v, c->status_req_q.n);
        }
        acc_max(out, c->allocated_q.v, c->allocated_q.n);
    }
    if (nonmissing) {
        for (uint32_t i = 0; i < nonmissing->n; i++)
            if (!acc_slot(out, nonmissing->e[i].name, false)) acc_add(out, &nonmissing->e[i], 1);
    }
}

/* AggregateContainerRequests (or Limits): regular containers summed,
 * then the max with each init container at the moment it runs. */
static void aggregate(const ks_pod *p, bool limits, bool use_status, const acc *nonmissing, acc *reqs) {
    acc cr, restartable, init, tmp;
    reqs->n = 0;
    reqs->overflow = false;
    restartable.n = 0;
    restartable.overflow = false;
    init.n = 0;
    init.overflow = false;
    for (uint32_t i = 0; i < p->ncontainers; i++) {
        container_list(p, &p->containers[i], limits, use_status, nonmissing, &cr);
        acc_add(reqs, cr.e, cr.n);
        reqs->overflow |= cr.overflow;
    }
    /* Init containers run one at a time, each alongside the sidecars
     * started before it; a sidecar keeps running with the regular
     * containers, so it counts in both places. */
    for (uint32_t i = 0; i < p->ninit; i++) {
        const ks_container *c = &p->init_containers[i];
        container_list(p, c, limits, use_status && c->sidecar, nonmissing, &cr);
        if (c->sidecar) {
            acc_add(reqs, cr.e, cr.n);
            acc_add(&restartable, cr.e, cr.n);
            acc_max(&init, restartable.e, restartable.n);
        } else {
            tmp.n = 0;
            tmp.overflow = false;
            acc_add(&tmp, cr.e, cr.n);
            acc_add(&tmp, restartable.e, restartable.n);
            acc_max(&init, tmp.e, tmp.n);
        }
    }
    acc_max(reqs, init.e, init.n);
    reqs->overflow |= init.overflow | restartable.overflow;
}

uint32_t ks_pod_aggregate_containers(const ks_pod *p, bool limits, ks_qentry *out, uint32_t max) {
    ks_api_init();
    acc a;
    aggregate(p, limits, false, NULL, &a);
    uint32_t n = a.n < max ? a.n : max;
    memcpy(out, a.e, n * sizeof(*out));
    return a.overflow || a.n > max ? max + 1 : n;
}

bool ks_pod_level_supported(ks_id name) {
    return name == KS_RES_CPU || name == KS_RES_MEMORY || ks_resource_is_hugepages(ks_str(name));
}

ks_pod_level *ks_pod_level_make(ks_pod *p) {
    if (!p->level) p->level = ks_arena_alloc(p->arena, sizeof(*p->level));
    return p->level;
}

static void pod_level_reqs(const ks_pod *p, acc *out) {
    out->n = 0;
    out->overflow = false;
    const ks_pod_level *lv = p->level;
    if (!lv) return;
    if (lv->req_q.v) acc_from_qlist(out, &lv->req_q);
    else if (lv->has_requests) acc_from_resource(out, &lv->requests, false, false);
}

static bool pod_level_set(const acc *pl) {
    for (uint32_t i = 0; i < pl->n; i++)
        if (ks_pod_level_supported(pl->e[i].name)) return true;
    return false;
}

static void pod_requests(const ks_pod *p, const acc *nonmissing, acc *reqs) {
    acc tmp;
    aggregate(p, false, true, nonmissing, reqs);
    acc pl;
    pod_level_reqs(p, &pl);
    if (pod_level_set(&pl)) {
        for (uint32_t i = 0; i < pl.n; i++) {
            if (!ks_pod_level_supported(pl.e[i].name)) continue;
            ks_qentry *s = acc_slot(reqs, pl.e[i].name, true);
            if (s) s->nano = pl.e[i].nano;
        }
    }
    const ks_pod_level *lv = p->level;
    if (lv && lv->overhead_q.v) {
        acc_add(reqs, lv->overhead_q.v, lv->overhead_q.n);
    } else if (lv && lv->has_overhead) {
        acc_from_resource(&tmp, &lv->overhead, false, false);
        acc_add(reqs, tmp.e, tmp.n);
    }
}

bool ks_pod_compute_requests(ks_pod *p) {
    ks_api_init();
    acc reqs, pl, nonmissing, non0;
    pod_requests(p, NULL, &reqs);
    memset(&p->requests, 0, sizeof(p->requests));
    if (reqs.overflow || !ks_resource_add_qlist(&p->requests, p->arena, &(ks_qlist){reqs.n, reqs.e}))
        return false;

    /* Scoring counts a container without a cpu or memory request as
     * 100m / 200Mi; with pod-level requests only the resources neither
     * level names get the default. */
    pod_level_reqs(p, &pl);
    bool level = pod_level_set(&pl);
    nonmissing.n = 0;
    nonmissing.overflow = false;
    if (!level || !acc_slot(&reqs, KS_RES_CPU, false))
        acc_add(&nonmissing, &(ks_qentry){KS_RES_CPU, (__int128)KS_DEFAULT_MILLI_CPU_REQUEST * 1000000}, 1);
    if (!level || !acc_slot(&reqs, KS_RES_MEMORY, false))
        acc_add(&nonmissing, &(ks_qentry){KS_RES_MEMORY, (__int128)KS_DEFAULT_MEMORY_REQUEST * KS_NANO_PER_UNIT}, 1);
    const acc *src = &reqs;
    if (nonmissing.n) {
        pod_requests(p, &nonmissing, &non0);
        src = &non0;
    }
    memset(&p->nonzero_requests, 0, sizeof(p->nonzero_requests));
    const ks_qentry *cpu = NULL, *mem = NULL;
    for (uint32_t i = 0; i < src->n; i++) {
        if (src->e[i].name == KS_RES_CPU) cpu = &src->e[i];
        if (src->e[i].name == KS_RES_MEMORY) mem = &src->e[i];
    }
    if (cpu && !ks_nano_to_milli(cpu->nano, &p->nonzero_requests.milli_cpu)) return false;
    if (mem && !ks_nano_to_value(mem->nano, &p->nonzero_requests.memory)) return false;
    return true;
}
