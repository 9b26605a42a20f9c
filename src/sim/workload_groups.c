/* A simulation's pods grouped by the workload that owns them
 * (ks_sim_group_workloads): what the table's workload lines, -o json and
 * the other reports read. */
#include "sim/simulate.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static uint64_t wkey(ks_id kind, ks_id ns, ks_id name) {
    return ((uint64_t)kind * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ns << 32 | name) ^ 1;
}

/* Workloads by (kind, namespace, name), the way owner references name them. */
typedef struct {
    ks_map by_ref;
    ks_map group; /* workload pointer -> group index + 1 */
} index_t;

static const ks_workload *lookup(index_t *x, ks_id kind, ks_id ns, ks_id name) {
    return ks_map_get(&x->by_ref, wkey(kind, ns, name));
}

/* The top-level workload of a pod: its controller, and that one's
 * controller when the cluster has it (ReplicaSet → Deployment, Job →
 * CronJob). */
static const ks_workload *owner_of(index_t *x, const ks_pod *p) {
    const ks_owner_ref *r = ks_pod_controller(p);
    if (!r || !r->name) return NULL;
    const ks_workload *w = lookup(x, r->kind, p->ns, ks_intern(r->name));
    if (!w || w->kind == KS_WORKLOAD_SERVICE) return NULL;
    if (w->owner_kind) {
        const ks_workload *up = lookup(x, w->owner_kind, w->ns, w->owner_name);
        if (up) return up;
    }
    return w;
}

static ks_sim_workload *group_of(ks_sim_result *r, index_t *x, const ks_workload *w, uint32_t *cap) {
    uintptr_t g = (uintptr_t)ks_map_get(&x->group, (uint64_t)(uintptr_t)w);
    if (g) return &r->workloads[g - 1];
    KS_GROW(r->workloads, *cap, r->nworkloads + 1);
    ks_sim_workload *sw = &r->workloads[r->nworkloads++];
    memset(sw, 0, sizeof(*sw));
    sw->workload = w;
    sw->desired = w->desired;
    sw->first_pending = -1;
    ks_map_put(&x->group, (uint64_t)(uintptr_t)w, (void *)(uintptr_t)r->nworkloads);
    return sw;
}

static int cmp_input(const void *a, const void *b) {
    const ks_sim_workload *x = a, *y = b;
    return (x->workload->input_index > y->workload->input_index) -
           (x->workload->input_index < y->workload->input_index);
}

void ks_sim_group_workloads(ks_sim_result *r, const ks_wl_held *held) {
    const ks_cluster *c = r->cluster;
    index_t x;
    ks_map_init(&x.by_ref);
    ks_map_init(&x.group);
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *w = c->workloads.v[i];
        ks_map_put(&x.by_ref, wkey(ks_intern(ks_workload_kind_name(w->kind)), w->ns, w->name), (void *)w);
    }
    uint32_t cap = 0;
    /* the expanded workloads first, so that one with nothing to place
     * still shows */
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *w = c->workloads.v[i];
        if (w->desired < 0) continue;
        if (w->owner_kind && lookup(&x, w->owner_kind, w->ns, w->owner_name)) continue;
        group_of(r, &x, w, &cap);
    }
    ks_map pending;
    ks_map_init(&pending);
    for (uint32_t i = 0; i < r->npods; i++) {
        ks_sim_pod *sp = &r->pods[i];
        sp->workload = -1;
        ks_map_put(&pending, sp->input->key, (void *)1);
        const ks_workload *w = owner_of(&x, sp->input);
        if (!w) continue;
        ks_sim_workload *g = group_of(r, &x, w, &cap);
        sp->workload = (int32_t)(g - r->workloads);
        if (sp->state == KS_SIM_SCHEDULED) {
            g->scheduled++;
        } else {
            g->pending++;
            if (g->first_pending < 0) g->first_pending = (int32_t)i;
        }
    }
    for (uint32_t i = 0; i < r->nvictims; i++) r->victims[i].workload = -1;
    if (r->nworkloads) {
        for (uint32_t i = 0; i < c->pods.n; i++) {
            const ks_pod *p = c->pods.v[i];
            if (!p->node_name || ks_map_get(&pending, p->key)) continue;
            const ks_workload *w = owner_of(&x, p);
            uintptr_t g = w ? (uintptr_t)ks_map_get(&x.group, (uint64_t)(uintptr_t)w) : 0;
            if (g) r->workloads[g - 1].running++;
        }
    }
    uint32_t nh = ks_wl_held_count(held);
    if (nh) {
        const ks_pod **hp = ks_xcalloc(nh, sizeof(*hp));
        ks_wl_held_list(held, hp, nh);
        for (uint32_t i = 0; i < nh; i++) {
            const ks_workload *w = owner_of(&x, hp[i]);
            if (!w) continue;
            ks_sim_workload *g = group_of(r, &x, w, &cap);
            if (!g->not_created++) g->first_not_created = hp[i];
        }
        free(hp);
    }
    /* input order (the groups of pods' own workloads came in pod order);
     * the pods' indexes follow their groups */
    if (r->nworkloads > 1) {
        uint32_t *perm = ks_xcalloc(r->nworkloads, sizeof(*perm));
        for (uint32_t i = 0; i < r->nworkloads; i++) perm[i] = i;
        ks_sim_workload *sorted = ks_xcalloc(r->nworkloads, sizeof(*sorted));
        memcpy(sorted, r->workloads, r->nworkloads * sizeof(*sorted));
        qsort(sorted, r->nworkloads, sizeof(*sorted), cmp_input);
        for (uint32_t i = 0; i < r->nworkloads; i++) {
            uintptr_t old = (uintptr_t)ks_map_get(&x.group, (uint64_t)(uintptr_t)sorted[i].workload) - 1;
            perm[old] = i;
        }
        for (uint32_t i = 0; i < r->npods; i++)
            if (r->pods[i].workload >= 0) r->pods[i].workload = (int32_t)perm[r->pods[i].workload];
        free(r->workloads);
        r->workloads = sorted;
        free(perm);
    }
    ks_map_free(&pending);
    ks_map_free(&x.by_ref);
    ks_map_free(&x.group);
}
