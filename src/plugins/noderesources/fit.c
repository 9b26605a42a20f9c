/* NodeResourcesFit.
 *
 * Filter: the node must have room for the pod: one more pod than it runs,
 * and per resource the pod's request within allocatable minus what the
 * node's pods already request (cpu, memory, ephemeral-storage, extended and
 * other scalar resources; extended resources named in ignoredResources or
 * in a group of ignoredResourceGroups are not checked). A request larger
 * than the node's whole allocatable is unresolvable (preemption cannot
 * help).
 * Score: one of the strategies LeastAllocated, MostAllocated,
 * RequestedToCapacityRatio over the configured resources and weights. */
#include "framework/status.h"
#include "plugins/helper/args.h"
#include "plugins/helper/hints.h"
#include "plugins/noderesources/resource_allocation.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fit {
    uint32_t nignored;
    ks_id *ignored;        /* ignoredResources */
    uint32_t ngroups;
    char **groups;         /* ignoredResourceGroups */
    ks_resource_allocation_scorer scorer;
    ks_state_key pre_filter_key, pre_score_key;
} fit;

/* The pod's request as Filter checks it. Scalar resources exclude zero
 * requests and ignored extended resources, and are in name order so the
 * reasons come out in a stable order. */
typedef struct pre_filter_state {
    int64_t milli_cpu, memory, ephemeral_storage;
    bool empty; /* no request at all: only the pod count is checked */
    uint32_t nscalar;
    ks_scalar scalars[]; /* room for all of the pod's */
} pre_filter_state;


/* ---- args -------------------------------------------------------------- */

static bool parse_int(const ks_args *a, int64_t *v) { return a && ks_args_int(a, v); }

static void parse_shape(const ks_args *shape, fit *pl, ks_errlist *e) {
    const char *path = "scoringStrategy.shape";
    size_t n = shape ? ks_args_len(shape) : 0;
    if (n == 0) {
        ks_errlist_add(e, "%s: Required value: at least one point must be specified", path);
        return;
    }
    if (n > KS_MAX_SHAPE_POINTS) {
        ks_errlist_add(e, "%s: Too many: %zu: must have at most %d items", path, n, KS_MAX_SHAPE_POINTS);
        return;
    }
    int64_t util[KS_MAX_SHAPE_POINTS], score[KS_MAX_SHAPE_POINTS];
    for (size_t i = 0; i < n; i++) {
        const ks_args *p = ks_args_item(shape, i);
        util[i] = score[i] = 0;
        const ks_args *u = ks_args_get(p, "utilization"), *s = ks_args_get(p, "score");
        if (u && !parse_int(u, &util[i])) ks_errlist_add(e, "%s[%zu].utilization: must be an integer", path, i);
        if (s && !parse_int(s, &score[i])) ks_errlist_add(e, "%s[%zu].score: must be an integer", path, i);
    }
    for (size_t i = 1; i < n; i++) {
        if (util[i - 1] >= util[i]) {
            ks_errlist_add(e, "%s[%zu].utilization: Invalid value: %lld: values must be sorted in increasing order",
                 path, i, (long long)util[i]);
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (util[i] < 0 || util[i] > 100)
            ks_errlist_add(e, "%s[%zu].utilization: Invalid value: %lld: not in valid range [0, 100]", path, i,
                 (long long)util[i]);
        if (score[i] < 0 || score[i] > KS_MAX_CUSTOM_PRIORITY_SCORE)
            ks_errlist_add(e, "%s[%zu].score: Invalid value: %lld: not in valid range [0, %d]", path, i,
                 (long long)score[i], KS_MAX_CUSTOM_PRIORITY_SCORE);
    }
    pl->scorer.nshape = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        /* Shape scores are 0..10; the scheduler's are 0..100. */
        pl->scorer.shape[i] = (ks_shape_point){
            .utilization = util[i],
            .score = score[i] * (KS_MAX_NODE_SCORE / KS_MAX_CUSTOM_PRIORITY_SCORE),
        };
    }
}

static void parse_names(const ks_args *list, const char *path, bool group, fit *pl, ks_errlist *e) {
    size_t n = list ? ks_args_len(list) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = ks_args_string(ks_args_item(list, i));
        if (!v) v = "";
        if (group && strchr(v, '/'))
            ks_errlist_add(e, "%s[%zu]: Invalid value: \"%s\": resource group name can't contain '/'", path,
                 i, v);
        if (!ks_is_qualified_name(v))
            ks_errlist_add(e, "%s[%zu]: Invalid value: \"%s\": " KS_QUALIFIED_NAME_MSG, path, i, v);
        if (group) {
            pl->groups = ks_xrealloc(pl->groups, (pl->ngroups + 1) * sizeof(char *));
            pl->groups[pl->ngroups++] = ks_xstrdup(v);
        } else {
            pl->ignored = ks_xrealloc(pl->ignored, (pl->nignored + 1) * sizeof(ks_id));
            pl->ignored[pl->nignored++] = ks_intern(v);
        }
    }
}

static void destroy(void *self) {
    fit *pl = self;
    if (!pl) return;
    for (uint32_t i = 0; i < pl->ngroups; i++) free(pl->groups[i]);
    free(pl->groups);
    free(pl->ignored);
    free(pl);
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    fit *pl = ks_xcalloc(1, sizeof(*pl));
    pl->pre_filter_key = ks_state_key_get("PreFilterNodeResourcesFit");
    pl->pre_score_key = ks_state_key_get("PreScoreNodeResourcesFit");
    ks_errlist e;
    ks_errlist_init(&e);

    parse_names(ks_args_get(args, "ignoredResources"), "ignoredResources", false, pl, &e);
    parse_names(ks_args_get(args, "ignoredResourceGroups"), "ignoredResourceGroups", true, pl, &e);

    /* v1 defaults: no scoringStrategy means LeastAllocated on cpu and
     * memory; a strategy without resources gets cpu and memory. */
    const ks_args *strategy = ks_args_get(args, "scoringStrategy");
    const char *type = "LeastAllocated";
    if (strategy) {
        const char *t = ks_args_string(ks_args_get(strategy, "type"));
        type = t ? t : "";
    }
    ks_resource_allocation_scorer *r = &pl->scorer;
    r->use_requested = false;
    if (strcmp(type, "LeastAllocated") == 0) {
        r->name = "LeastAllocated";
        r->scorer = ks_least_resource_scorer;
    } else if (strcmp(type, "MostAllocated") == 0) {
        r->name = "MostAllocated";
        r->scorer = ks_most_resource_scorer;
    } else if (strcmp(type, "RequestedToCapacityRatio") == 0) {
        r->name = "RequestedToCapacityRatio";
        r->scorer = ks_requested_to_capacity_ratio_scorer;
    } else {
        ks_errlist_add(&e,
             "scoringStrategy.type: Unsupported value: \"%s\": supported values: "
             "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
             type);
    }

    char *rerr = NULL;
    if (!ks_resource_specs_parse(strategy ? ks_args_get(strategy, "resources") : NULL,
                                 "scoringStrategy.resources", r, &rerr)) {
        ks_errlist_add(&e, "%s", rerr);
        free(rerr);
    }
    for (uint32_t i = 0; i < r->nresources; i++) {
        const ks_resource_spec *s = &r->resources[i];
        if (s->weight <= 0 || s->weight > 100)
            ks_errlist_add(&e,
                 "scoringStrategy.resources[%u].weight: Invalid value: %lld: resource weight of "
                 "%s not in valid range (0, 100]",
                 i, (long long)s->weight, s->name);
    }

    const ks_args *rtcr = strategy ? ks_args_get(strategy, "requestedToCapacityRatio") : NULL;
    if (rtcr) {
        parse_shape(ks_args_get(rtcr, "shape"), pl, &e);
    } else if (r->scorer == ks_requested_to_capacity_ratio_scorer) {
        /* Upstream would dereference the missing shape; refuse instead. */
        ks_errlist_add(&e, "scoringStrategy.requestedToCapacityRatio: Required value: "
                 "required for the RequestedToCapacityRatio strategy");
    }

    char *msg = ks_errlist_take(&e);
    if (msg) {
        *err = msg;
        destroy(pl);
        return NULL;
    }
    return pl;
}

/* Upstream (queueing hints and in-place resize on): Pod/Delete and
 * Pod/UpdatePodScaleDown; Node/Add and Node/UpdateNodeAllocatable. */
/* Upstream (queueing hints and in-place pod resize on):
 * Pod/Delete|UpdatePodScaleDown, Node/Add|UpdateNodeAllocatable. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_DELETE | KS_ACT_UPDATE_POD_SCALE_DOWN},
        {KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

static bool is_ignored(const fit *pl, ks_id id);

/* ---- QueueingHint ---------------------------------------------------------- */

/* A bound pod scaled down frees what the pod asks for: some resource the
 * pod requests went down (the pod's own scale down always may help). */
static bool freed_by_scale_down(const ks_pod *pod, const ks_pod *o, const ks_pod *m) {
    if (ks_hint_same_pod(pod, m)) return true;
    if (m->node_name == 0) return false;
    const ks_resource *want = &pod->requests, *a = &o->requests, *b = &m->requests;
    if (want->milli_cpu > 0 && a->milli_cpu > b->milli_cpu) return true;
    if (want->memory > 0 && a->memory > b->memory) return true;
    if (want->ephemeral_storage > 0 && a->ephemeral_storage > b->ephemeral_storage) return true;
    for (uint32_t i = 0; i < want->nscalar; i++) {
        ks_id r = want->scalars[i].name;
        if (want->scalars[i].val == 0) continue;
        if (ks_resource_get(a, r) > ks_resource_get(b, r)) return true;
    }
    return false;
}

/* Whether the pod fits the empty node at all (upstream isFit: Filter
 * against a NodeInfo holding only the node). */
static bool fits_empty(const fit *pl, const ks_pod *pod, const ks_node *n) {
    const ks_resource *req = &pod->requests, *alloc = &n->allocatable;
    if (1 > alloc->allowed_pods) return false;
    if (req->milli_cpu > alloc->milli_cpu || req->memory > alloc->memory ||
        req->ephemeral_storage > alloc->ephemeral_storage)
        return false;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        ks_id id = req->scalars[i].name;
        if (req->scalars[i].val == 0) continue;
        if (ks_resource_is_extended(ks_str(id)) && is_ignored(pl, id)) continue;
        if (req->scalars[i].val > ks_resource_get(alloc, id)) return false;
    }
    return true;
}

/* upstream haveAnyRequestedResourcesIncreased. */
static bool requested_increased(const ks_pod *pod, const ks_node *o, const ks_node *n) {
    const ks_resource *req = &pod->requests, *a = &o->allocatable, *b = &n->allocatable;
    if (b->allowed_pods > a->allowed_pods) return true;
    if (req->milli_cpu == 0 && req->memory == 0 && req->ephemeral_storage == 0 && req->nscalar == 0) return false;
    if ((req->milli_cpu > 0 && b->milli_cpu > a->milli_cpu) || (req->memory > 0 && b->memory > a->memory) ||
        (req->ephemeral_storage > 0 && b->ephemeral_storage > a->ephemeral_storage))
        return true;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        ks_id id = req->scalars[i].name;
        if (req->scalars[i].val == 0) continue;
        if (ks_resource_get(b, id) > ks_resource_get(a, id)) return true;
    }
    return false;
}

static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    fit *pl = self;
    if (ev.resource & KS_EV_NODE) {
        const ks_node *o = ks_hint_node(old_obj), *n = ks_hint_node(new_obj);
        if (!n) return ks_hint_type_error(err, "Node");
        if (!fits_empty(pl, pod, n)) return KS_QUEUE_SKIP;
        if (!o) return KS_QUEUE;
        return requested_increased(pod, o, n) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    const ks_pod *o = ks_hint_pod(old_obj), *m = ks_hint_pod(new_obj);
    if (!o && !m) return ks_hint_type_error(err, "Pod");
    if (!m) /* deleted: only a pod that held room (bound or nominated) frees any */
        return o->node_name == 0 && o->nominated_node == 0 ? KS_QUEUE_SKIP : KS_QUEUE;
    if (!o) return ks_hint_type_error(err, "Pod");
    return freed_by_scale_down(pod, o, m) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* ---- PreFilter / Filter -------------------------------------------------- */

static bool is_ignored(const fit *pl, ks_id id) {
    for (uint32_t i = 0; i < pl->nignored; i++)
        if (pl->ignored[i] == id) return true;
    if (pl->ngroups == 0) return false;
    /* The group is the part before the first '/'. */
    const char *name = ks_str(id);
    const char *slash = strchr(name, '/');
    size_t glen = slash ? (size_t)(slash - name) : strlen(name);
    for (uint32_t i = 0; i < pl->ngroups; i++)
        if (strlen(pl->groups[i]) == glen && memcmp(pl->groups[i], name, glen) == 0) return true;
    return false;
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    fit *pl = self;
    const ks_resource *req = &pod->requests;
    pre_filter_state *s = ks_cycle_state_alloc(st, sizeof(*s) + req->nscalar * sizeof(ks_scalar));
    s->milli_cpu = req->milli_cpu;
    s->memory = req->memory;
    s->ephemeral_storage = req->ephemeral_storage;
    s->empty = req->milli_cpu == 0 && req->memory == 0 && req->ephemeral_storage == 0 &&
               req->nscalar == 0;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        ks_id id = req->scalars[i].name;
        int64_t v = req->scalars[i].val;
        if (v == 0) continue;
        if (ks_resource_is_extended(ks_str(id)) && is_ignored(pl, id)) continue;
        /* insertion by name */
        uint32_t j = s->nscalar;
        while (j > 0 && strcmp(ks_str(s->scalars[j - 1].name), ks_str(id)) > 0) {
            s->scalars[j] = s->scalars[j - 1];
            j--;
        }
        s->scalars[j] = (ks_scalar){id, v};
        s->nscalar++;
    }
    ks_cycle_state_write(st, pl->pre_filter_key, s, NULL, NULL);
    return NULL;
}

/* Append one reason; the status is created on the first. */
static void insufficient(ks_status **s, bool unresolvable, const char *fmt, const char *arg) {
    if (!*s) *s = ks_status_new(KS_UNSCHEDULABLE, fmt, arg);
    else ks_status_add_reason(*s, fmt, arg);
    if (unresolvable) (*s)->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* The same with a constant reason (a literal), kept by pointer when it is
 * the first: most rejected nodes have one reason, made for every node
 * (an openb study cycle rejects hundreds of nodes for CPU). */
static void insufficient_const(ks_status **s, bool unresolvable, const char *reason) {
    if (!*s) *s = ks_status_new_const(KS_UNSCHEDULABLE, reason);
    else ks_status_add_reason(*s, "%s", reason);
    if (unresolvable) (*s)->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *ni) {
    fit *pl = self;
    const pre_filter_state *s = ks_cycle_state_read(st, pl->pre_filter_key);
    if (!s)
        return ks_status_new(KS_ERROR,
                             "error reading \"PreFilterNodeResourcesFit\" from cycleState: "
                             "not found");
    /* NodeInfo's fields, not ks_node_info_allocatable(ni, "cpu"): the
     * in-tree fast path (docs/architecture.md, "Layers": +24 % of all
     * instructions of a SchedulingBasic simulation through the
     * accessors). */
    const ks_resource *alloc = &ni->allocatable, *used = &ni->requested;
    ks_status *out = NULL;

    if ((int64_t)ni->npods + 1 > alloc->allowed_pods) insufficient_const(&out, false, "Too many pods");
    if (s->empty) return out;

    if (s->milli_cpu > 0 && s->milli_cpu > alloc->milli_cpu - used->milli_cpu)
        insufficient_const(&out, s->milli_cpu > alloc->milli_cpu, "Insufficient cpu");
    if (s->memory > 0 && s->memory > alloc->memory - used->memory)
        insufficient_const(&out, s->memory > alloc->memory, "Insufficient memory");
    if (s->ephemeral_storage > 0 &&
        s->ephemeral_storage > alloc->ephemeral_storage - used->ephemeral_storage)
        insufficient_const(&out, s->ephemeral_storage > alloc->ephemeral_storage,
                           "Insufficient ephemeral-storage");
    for (uint32_t i = 0; i < s->nscalar; i++) {
        int64_t a = ks_resource_get(alloc, s->scalars[i].name);
        int64_t u = ks_resource_get(used, s->scalars[i].name);
        if (s->scalars[i].val > a - u)
            insufficient(&out, s->scalars[i].val > a, "Insufficient %s", ks_str(s->scalars[i].name));
    }
    return out;
}

/* ---- PreScore / Score ---------------------------------------------------- */

static ks_status *pre_score(void *self, ks_cycle_state *st, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes) {
    fit *pl = self;
    /* the scored resources' requests only (not KS_MAX_SCORED_RESOURCES):
     * the state waits with the binding cycle */
    int64_t *req = ks_cycle_state_alloc(st, (pl->scorer.nresources ? pl->scorer.nresources : 1) * sizeof(int64_t));
    ks_pod_resource_request_list(&pl->scorer, pod, req);
    ks_cycle_state_write(st, pl->pre_score_key, req, NULL, NULL);
    return NULL;
}

static ks_status *score(void *self, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *ni, int64_t *out) {
    fit *pl = self;
    const int64_t *req = ks_cycle_state_read(st, pl->pre_score_key);
    int64_t local[KS_MAX_SCORED_RESOURCES];
    if (!req) {
        /* PreScore disabled: compute here, as upstream falls back. */
        ks_pod_resource_request_list(&pl->scorer, pod, local);
        req = local;
    }
    if (pl->scorer.nresources == 0) return ks_status_new(KS_ERROR, "resources not found");
    *out = ks_resource_allocation_score(&pl->scorer, ni, req);
    return NULL;
}

const ks_plugin_ops ks_plugin_node_resources_fit = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodeResourcesFit",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
};
