#include "api/cluster.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

ks_cluster *ks_cluster_new(void) {
    ks_api_init();
    ks_cluster *c = ks_xcalloc(1, sizeof(*c));
    c->arena = ks_arena_new(4096);
    ks_map_init(&c->node_index);
    return c;
}

#define FREE_OBJECTS(vec)                                                    \
    do {                                                                     \
        for (uint32_t i_ = 0; i_ < (vec).n; i_++) KS_OBJECT_UNREF((vec).v[i_]); \
        free((vec).v);                                                       \
    } while (0)

void ks_cluster_free(ks_cluster *c) {
    if (!c) return;
    for (uint32_t i = 0; i < c->nodes.n; i++) ks_node_unref(c->nodes.v[i]);
    free(c->nodes.v);
    for (uint32_t i = 0; i < c->pods.n; i++) ks_pod_unref(c->pods.v[i]);
    free(c->pods.v);
    FREE_OBJECTS(c->priority_classes);
    FREE_OBJECTS(c->namespaces);
    FREE_OBJECTS(c->pvs);
    FREE_OBJECTS(c->pvcs);
    FREE_OBJECTS(c->storage_classes);
    FREE_OBJECTS(c->csinodes);
    FREE_OBJECTS(c->csi_drivers);
    FREE_OBJECTS(c->csi_capacities);
    FREE_OBJECTS(c->volume_attachments);
    FREE_OBJECTS(c->pdbs);
    FREE_OBJECTS(c->pod_groups);
    FREE_OBJECTS(c->workloads);
    FREE_OBJECTS(c->resource_claims);
    FREE_OBJECTS(c->claim_templates);
    FREE_OBJECTS(c->resource_slices);
    FREE_OBJECTS(c->device_classes);
    FREE_OBJECTS(c->device_taint_rules);
    free(c->skipped.v);
    ks_map_free(&c->node_index);
    ks_arena_free(c->arena);
    free(c);
}

#define MOVE_VEC(d, s)                                                       \
    do {                                                                     \
        for (uint32_t i_ = 0; i_ < (s).n; i_++) KS_VEC_PUSH(d, (s).v[i_]);  \
        free((s).v);                                                         \
        (s).v = NULL;                                                        \
        (s).n = (s).cap = 0;                                                 \
    } while (0)

void ks_cluster_move(ks_cluster *dst, ks_cluster *src) {
    MOVE_VEC(dst->nodes, src->nodes);
    MOVE_VEC(dst->pods, src->pods);
    MOVE_VEC(dst->priority_classes, src->priority_classes);
    MOVE_VEC(dst->namespaces, src->namespaces);
    MOVE_VEC(dst->pvs, src->pvs);
    MOVE_VEC(dst->pvcs, src->pvcs);
    MOVE_VEC(dst->storage_classes, src->storage_classes);
    MOVE_VEC(dst->csinodes, src->csinodes);
    MOVE_VEC(dst->csi_drivers, src->csi_drivers);
    MOVE_VEC(dst->csi_capacities, src->csi_capacities);
    MOVE_VEC(dst->volume_attachments, src->volume_attachments);
    MOVE_VEC(dst->pdbs, src->pdbs);
    MOVE_VEC(dst->pod_groups, src->pod_groups);
    MOVE_VEC(dst->workloads, src->workloads);
    MOVE_VEC(dst->resource_claims, src->resource_claims);
    MOVE_VEC(dst->claim_templates, src->claim_templates);
    MOVE_VEC(dst->resource_slices, src->resource_slices);
    MOVE_VEC(dst->device_classes, src->device_classes);
    MOVE_VEC(dst->device_taint_rules, src->device_taint_rules);
    for (uint32_t i = 0; i < src->skipped.n; i++)
        ks_cluster_count_skipped(dst, src->skipped.v[i].kind, src->skipped.v[i].n);
    free(src->skipped.v);
    memset(&src->skipped, 0, sizeof(src->skipped));
    if (src->next_input_index > dst->next_input_index) dst->next_input_index = src->next_input_index;
}

void ks_cluster_count_skipped(ks_cluster *c, ks_id kind, uint32_t n) {
    for (uint32_t i = 0; i < c->skipped.n; i++)
        if (c->skipped.v[i].kind == kind) {
            c->skipped.v[i].n += n;
            return;
        }
    KS_VEC_PUSH(c->skipped, ((ks_kind_count){kind, n}));
}

const ks_priority_class *ks_cluster_priority_class(const ks_cluster *c, ks_id name) {
    for (uint32_t i = 0; i < c->priority_classes.n; i++)
        if (c->priority_classes.v[i]->name == name) return c->priority_classes.v[i];
    return ks_builtin_priority_class(name);
}

/* Among several global defaults, the one with the lowest value wins. */
const ks_priority_class *ks_cluster_default_priority_class(const ks_cluster *c) {
    const ks_priority_class *best = NULL;
    for (uint32_t i = 0; i < c->priority_classes.n; i++) {
        const ks_priority_class *pc = c->priority_classes.v[i];
        if (pc->global_default && (!best || pc->value < best->value)) best = pc;
    }
    return best;
}

const ks_namespace *ks_cluster_namespace(const ks_cluster *c, ks_id name) {
    for (uint32_t i = 0; i < c->namespaces.n; i++)
        if (c->namespaces.v[i]->name == name) return c->namespaces.v[i];
    return NULL;
}

/* The index maps a name to a position in c->nodes. Callers may change the
 * vector behind its back, so a hit is checked against the vector and a
 * miss falls back to a scan; either mismatch rebuilds the index. */
static void index_nodes(ks_cluster *m) {
    ks_map_clear(&m->node_index);
    for (uint32_t i = 0; i < m->nodes.n; i++)
        ks_map_put(&m->node_index, (uint64_t)m->nodes.v[i]->name + 1, (void *)(uintptr_t)(i + 1));
    m->node_index_n = m->nodes.n;
}

ks_node *ks_cluster_node(const ks_cluster *c, ks_id name) {
    ks_cluster *m = (ks_cluster *)c;
    if (m->node_index_n != c->nodes.n) index_nodes(m);
    uintptr_t at = (uintptr_t)ks_map_get(&c->node_index, (uint64_t)name + 1);
    if (at && at <= c->nodes.n && c->nodes.v[at - 1]->name == name) return c->nodes.v[at - 1];
    for (uint32_t i = 0; i < c->nodes.n; i++) {
        if (c->nodes.v[i]->name == name) {
            index_nodes(m);
            return c->nodes.v[i];
        }
    }
    if (at) index_nodes(m);
    return NULL;
}

static const char *policy_name(ks_preemption_policy p) {
    return p == KS_PREEMPT_NEVER ? "Never" : "PreemptLowerPriority";
}

/* The Priority admission plugin on pod creation: a named class must exist
 * and gives the priority; no name means the global default class (whose
 * name is then recorded), else priority 0 and PreemptLowerPriority. A
 * priority or preemptionPolicy the pod states must agree with what the
 * class gives. Pods that already carry a priority were admitted before
 * (a dump of a live cluster) and keep it; see ks_admit_result for the
 * warnings about hand-written ones. */
bool ks_pod_admit_report(ks_pod *p, const ks_cluster *c, ks_admit_result *r) {
    memset(r, 0, sizeof(*r));
    /* never through an API server: what it would have said matters */
    bool fresh = (!p->uid || !*p->uid) && p->creation_ts == 0;
    /* The API server gives every object a uid; events and the Preempted
     * note name pods by it. A derived one keeps output reproducible (the
     * reference harness derives it the same way). */
    if (!p->uid || !*p->uid)
        p->uid = ks_arena_printf(p->arena, "uid-pod-%s/%s", ks_str(p->ns), ks_str(p->name));
    const ks_priority_class *pc = NULL;
    bool named = p->priority_class != KS_ID_NONE;
    if (named) {
        pc = ks_cluster_priority_class(c, p->priority_class);
        if (!pc) {
            if (p->has_priority && !fresh) goto defaults;
            r->refused = !p->has_priority;
            r->field = "spec.priorityClassName";
            r->msg = ks_xasprintf("no PriorityClass with name %s was found", ks_str(p->priority_class));
            if (r->refused) return false;
            goto defaults;
        }
    } else if (!p->has_priority) {
        pc = ks_cluster_default_priority_class(c);
        if (pc) p->priority_class = pc->name;
    } else if (fresh) {
        /* what the plugin would have computed, for the warnings below */
        pc = ks_cluster_default_priority_class(c);
    }
    int32_t want_prio = pc ? pc->value : 0;
    ks_preemption_policy want_policy = pc ? pc->preemption_policy : KS_PREEMPT_LOWER_PRIORITY;
    if (p->has_priority && fresh && p->priority != want_prio) {
        r->field = "spec.priority";
        r->msg = ks_xasprintf("the integer value of priority (%d) must not be provided in pod spec; "
                              "priority admission controller computed %d from the given "
                              "PriorityClass name",
                              p->priority, want_prio);
    } else if ((!p->has_priority || fresh) && p->has_preemption_policy &&
               p->preemption_policy != want_policy) {
        r->refused = !p->has_priority;
        r->field = "spec.preemptionPolicy";
        r->msg = ks_xasprintf("the string value of PreemptionPolicy (%s) must not be provided in "
                              "pod spec; priority admission controller computed %s from the given "
                              "PriorityClass name",
                              policy_name(p->preemption_policy), policy_name(want_policy));
        if (r->refused) return false;
    }
    if (p->has_priority && !named) pc = NULL; /* the class does not speak for such a pod */
defaults:
    if (!p->has_priority) {
        p->priority = pc ? pc->value : 0;
        p->has_priority = true;
    }
    if (!p->has_preemption_policy) {
        p->preemption_policy = pc ? pc->preemption_policy : KS_PREEMPT_LOWER_PRIORITY;
        p->has_preemption_policy = true;
    }
    return true;
}

bool ks_pod_admit(ks_pod *p, const ks_cluster *c, char **err) {
    ks_admit_result r;
    bool ok = ks_pod_admit_report(p, c, &r);
    if (!ok) *err = r.msg;
    else free(r.msg);
    return ok;
}

bool ks_cluster_admit(ks_cluster *c, char **err) {
    for (uint32_t i = 0; i < c->pods.n; i++) {
        ks_pod *p = c->pods.v[i];
        char *e = NULL;
        if (!ks_pod_admit(p, c, &e)) {
            char buf[512];
            *err = ks_xasprintf("pod %s: %s", ks_pod_fullname(p, buf, sizeof(buf)), e);
            free(e);
            return false;
        }
    }
    /* the API server gives claims a uid (reservedFor and owners name them) */
    for (uint32_t i = 0; i < c->resource_claims.n; i++) {
        ks_resource_claim *rc = c->resource_claims.v[i];
        if (!rc->uid || !*rc->uid)
            rc->uid = ks_arena_printf(rc->arena, "uid-resourceclaim-%s/%s", ks_str(rc->ns), ks_str(rc->name));
    }
    ks_cluster_generate_claims(c);
    return true;
}

void ks_cluster_add_implicit_namespaces(ks_cluster *c) {
    ks_map seen;
    ks_map_init(&seen);
    for (uint32_t i = 0; i < c->namespaces.n; i++)
        ks_map_put(&seen, (uint64_t)c->namespaces.v[i]->name + 1, c->namespaces.v[i]);
    ks_id key = ks_intern("kubernetes.io/metadata.name");
    for (uint32_t i = 0; i < c->pods.n; i++) {
        ks_id ns = c->pods.v[i]->ns;
        if (ks_map_get(&seen, (uint64_t)ns + 1)) continue;
        ks_arena *a = ks_arena_new(256);
        ks_namespace *n = ks_arena_alloc(a, sizeof(*n));
        n->arena = a;
        n->name = ns;
        n->labels.n = 1;
        n->labels.kv = ks_arena_alloc(a, sizeof(ks_label));
        n->labels.kv[0] = (ks_label){key, ns};
        n->input_index = c->next_input_index++;
        KS_VEC_PUSH(c->namespaces, n);
        ks_map_put(&seen, (uint64_t)ns + 1, n);
    }
    ks_map_free(&seen);
}

#define VIEW(f) memcpy(&v.f, &c->f, sizeof(v.f))
ks_objects ks_cluster_view(const ks_cluster *c) {
    ks_objects v;
    memset(&v, 0, sizeof(v));
    if (!c) return v;
    VIEW(priority_classes);
    VIEW(namespaces);
    VIEW(pvs);
    VIEW(pvcs);
    VIEW(storage_classes);
    VIEW(csinodes);
    VIEW(csi_drivers);
    VIEW(csi_capacities);
    VIEW(volume_attachments);
    VIEW(pdbs);
    VIEW(pod_groups);
    VIEW(workloads);
    memcpy(&v.resource_claims, &c->resource_claims, sizeof(v.resource_claims));
    memcpy(&v.resource_slices, &c->resource_slices, sizeof(v.resource_slices));
    memcpy(&v.device_classes, &c->device_classes, sizeof(v.device_classes));
    memcpy(&v.device_taint_rules, &c->device_taint_rules, sizeof(v.device_taint_rules));
    return v;
}
