/* DefaultPreemption (PostFilter): when no node fits, find one where
 * evicting lower-priority pods would let the pod fit, evict them and
 * nominate the pod to that node. The policy lives here (who may preempt,
 * who may be a victim, how victims are chosen); the mechanics are the
 * Evaluator's (framework/preemption.c).
 *
 * SchedulerAsyncPreemption is on by default in v1.34, so evictions run off
 * the scheduling thread and PreEnqueue holds the preemptor back until the
 * last one has been issued. */
#include "plugins/defaultpreemption/default_preemption.h"
#include "framework/handle.h"
#include "framework/nodeinfo.h"
#include "framework/preemption.h"
#include "framework/status.h"
#include "metrics/sched_metrics.h"
#include "util/gosort.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ksched/framework.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NAME "DefaultPreemption"

typedef struct default_preemption {
    int32_t min_pct, min_abs;
    ks_handle *h;
    ks_evaluator ev;
    _Atomic uint64_t rng;
    atomic_bool zero_offset; /* tests: always start at the first node */
} default_preemption;

/* ---- the random offset ---------------------------------------------------- */

/* The instance's generator, seeded from the profile's seed (the handle):
 * the same seed gives the same offsets. */
void ks_default_preemption_set_zero_offset(void *self, bool on) {
    default_preemption *pl = self;
    atomic_store(&pl->zero_offset, on);
}

/* Uniform in [0, n) (splitmix64, rejection sampling). */
static int32_t rand_int31n(default_preemption *pl, int32_t n) {
    if (atomic_load(&pl->zero_offset) || n <= 1) return 0;
    uint64_t lim = UINT64_MAX - UINT64_MAX % (uint64_t)n, x;
    do {
        uint64_t z = atomic_fetch_add(&pl->rng, 0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        x = z ^ (z >> 31);
    } while (x >= lim);
    return (int32_t)(x % (uint64_t)n);
}

int32_t ks_default_preemption_num_candidates(int32_t n, int32_t pct, int32_t abs) {
    int32_t k = (int32_t)(((int64_t)n * pct) / 100);
    if (k < abs) k = abs;
    if (k > n) k = n;
    return k;
}

static void offset_and_num_candidates(void *self, int32_t n, int32_t *offset, int32_t *num) {
    default_preemption *pl = self;
    *offset = ks_handle_tie_rules(pl->h).preemption_nodes_by_name ? 0 : rand_int31n(pl, n);
    *num = ks_default_preemption_num_candidates(n, pl->min_pct, pl->min_abs);
}

/* ---- eligibility ---------------------------------------------------------- */

/* The default IsEligiblePod adds nothing: any lower-priority pod may go. */
static bool preemption_allowed(const ks_pod *victim, const ks_pod *preemptor) {
    return ks_pod_priority(victim) < ks_pod_priority(preemptor);
}

/* Deleted by the scheduler's preemption and still terminating: its
 * DisruptionTarget condition says so. */
static bool terminating_by_preemption(const ks_pod *p) {
    static ks_id disruption_target, status_true;
    if (!p->has_deletion_ts) return false;
    if (!disruption_target) {
        disruption_target = ks_intern("DisruptionTarget");
        status_true = ks_intern("True");
    }
    for (uint32_t i = 0; i < p->nconditions; i++) {
        const ks_pod_condition *c = &p->conditions[i];
        if (c->type != disruption_target) continue;
        return c->status == status_true && c->reason &&
               strcmp(c->reason, "PreemptionByScheduler") == 0;
    }
    return false;
}

static bool pod_eligible(void *self, const ks_pod *pod, const ks_status *nominated_status,
                         const char **why) {
    default_preemption *pl = self;
    if (pod->preemption_policy == KS_PREEMPT_NEVER) {
        *why = "not eligible due to preemptionPolicy=Never.";
        return false;
    }
    if (!pod->nominated_node) return true;
    /* Filters ruled the nominated node out for good: look elsewhere. */
    if (ks_status_code(nominated_status) == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) return true;
    const ks_snapshot *snap = ks_handle_snapshot(pl->h);
    const ks_node_info *ni = snap ? ks_snapshot_get(snap, pod->nominated_node) : NULL;
    for (uint32_t i = 0; ni && i < ni->npods; i++) {
        const ks_pod *p = ni->pods[i];
        /* An earlier preemption of ours is still making room there. */
        if (preemption_allowed(p, pod) && terminating_by_preemption(p)) {
            *why = "not eligible due to a terminating pod on the nominated node.";
            return false;
        }
    }
    return true;
}

/* ---- victims -------------------------------------------------------------- */

/* The Filter-visible side effects of removing / adding a pod on the node
 * copy: NodeInfo and the PreFilter states (upstream removePod / addPod). */
static ks_status *remove_victim(default_preemption *pl, ks_cycle_state *st, const ks_pod *pod,
                                ks_pod *victim, ks_node_info *ni) {
    if (!ks_node_info_remove_pod(ni, victim))
        return ks_status_new(KS_ERROR, "no corresponding pod %s in pods of node %s",
                             ks_str(victim->name), ks_str(ni->name));
    return ks_framework_run_pre_filter_remove_pod(ks_handle_framework(pl->h), st, pod, victim, ni);
}

static ks_status *add_victim(default_preemption *pl, ks_cycle_state *st, const ks_pod *pod,
                             ks_pod *victim, ks_node_info *ni) {
    ks_node_info_add_pod(ni, victim);
    return ks_framework_run_pre_filter_add_pod(ks_handle_framework(pl->h), st, pod, victim, ni);
}

static ks_status *fits(default_preemption *pl, ks_cycle_state *st, const ks_pod *pod,
                       const ks_node_info *ni) {
    return ks_framework_run_filter_with_nominated_pods(ks_handle_framework(pl->h), st, pod, ni);
}

/* Any status other than Success from a PreFilter extension is an error. */
static ks_status *extension_error(ks_status *s) {
    if (!s || s->code == KS_ERROR) return s;
    char *msg = ks_status_message(s);
    ks_status *e = ks_status_new(KS_ERROR, "%s", msg);
    free(msg);
    ks_status_free(s);
    return e;
}

/* Upstream SelectVictimsOnNode: remove every lower-priority pod; if the pod
 * then fits, add them back one by one, most important first (PDB-violating
 * ones before the others), keeping each that still lets the pod fit. */
static ks_status *select_victims(void *self, ks_cycle_state *st, const ks_pod *pod,
                                 ks_node_info *ni, const ks_pdb_list *pdbs, ks_victims *out) {
    default_preemption *pl = self;
    memset(out, 0, sizeof(*out));
    ks_status *s = NULL;

    /* Upstream ranges over the node's pod slice while removing from it;
     * removals only ever write at or before the current index, so that
     * visits the pods in their original order, as this copy does. */
    uint32_t total = ni->npods;
    ks_pod **pods = ks_xcalloc(total ? total : 1, sizeof(*pods));
    ks_pod **potential = ks_xcalloc(total ? total : 1, sizeof(*potential));
    size_t npotential = 0;
    for (uint32_t i = 0; i < total; i++) pods[i] = ks_pod_ref(ni->pods[i]);
    for (uint32_t i = 0; i < total; i++) {
        ks_pod *p = pods[i];
        if (!preemption_allowed(p, pod)) continue;
        potential[npotential++] = ks_pod_ref(p);
        if ((s = extension_error(remove_victim(pl, st, pod, p, ni)))) goto done;
    }
    if (npotential == 0) {
        s = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                          "No preemption victims found for incoming pod");
        goto done;
    }
    /* Not even with all of them gone: this node cannot help. (Affinity of
     * the pod to a victim is deliberately not considered, as upstream.) */
    if ((s = fits(pl, st, pod, ni))) goto done;

    bool by_name = ks_handle_tie_rules(pl->h).victims_by_name;
    ks_sort_by_importance(potential, npotential, by_name);
    ks_pod **violating = ks_xcalloc(npotential, sizeof(*violating));
    ks_pod **ok = ks_xcalloc(npotential, sizeof(*ok));
    size_t nviolating, nok;
    ks_filter_pods_with_pdb_violation(potential, npotential, pdbs, violating, &nviolating, ok,
                                      &nok);
    out->pods = ks_xcalloc(npotential, sizeof(*out->pods));
    for (int group = 0; group < 2 && !s; group++) {
        ks_pod **v = group == 0 ? violating : ok;
        size_t nv = group == 0 ? nviolating : nok;
        for (size_t k = 0; k < nv; k++) {
            ks_pod *p = v[k];
            if ((s = extension_error(add_victim(pl, st, pod, p, ni)))) break;
            ks_status *fit = fits(pl, st, pod, ni);
            if (ks_status_is_success(fit)) continue; /* reprieved */
            ks_status_free(fit);
            if ((s = extension_error(remove_victim(pl, st, pod, p, ni)))) break;
            out->pods[out->npods++] = ks_pod_ref(p);
            if (group == 0) out->num_pdb_violations++;
            ks_infof(5, "\"Pod is a potential preemption victim on node\" pod=\"%s/%s\" node=\"%s\"",
                     ks_str(p->ns), ks_str(p->name), ks_str(ni->name));
        }
    }
    /* Two groups appended one after the other: restore importance order. */
    if (!s && nviolating && nok) ks_sort_by_importance(out->pods, out->npods, by_name);
    free(violating);
    free(ok);
    if (s) ks_victims_free(out);

done:
    for (size_t i = 0; i < npotential; i++) ks_pod_unref(potential[i]);
    for (uint32_t i = 0; i < total; i++) ks_pod_unref(pods[i]);
    free(potential);
    free(pods);
    return s;
}

static const ks_preemption_ops preemption_ops = {
    .offset_and_num_candidates = offset_and_num_candidates,
    .pod_eligible = pod_eligible,
    .select_victims = select_victims,
};

/* ---- the plugin -------------------------------------------------------- */

/* Reads an int32 arg; false with *err set when present but not one. */
static bool arg_int32(const ks_args *args, const char *key, int32_t def, int32_t *out,
                      char **err) {
    *out = def;
    const ks_args *a = args ? ks_args_get(args, key) : NULL;
    if (!a) return true;
    int64_t v;
    if (!ks_args_int(a, &v) || v < INT32_MIN || v > INT32_MAX) {
        const char *t = ks_args_string(a);
        *err = ks_xasprintf("%s: Invalid value: \"%s\": must be an int32", key, t ? t : "");
        return false;
    }
    *out = (int32_t)v;
    return true;
}

/* Upstream ValidateDefaultPreemptionArgs, messages included. */
static char *validate(int32_t pct, int32_t abs) {
    char *errs[4];
    int n = 0;
    if (pct < 0 || pct > 100)
        errs[n++] = ks_xasprintf("minCandidateNodesPercentage: Invalid value: %d: not in valid "
                                 "range [0, 100]",
                                 pct);
    if (abs < 0)
        errs[n++] = ks_xasprintf("minCandidateNodesAbsolute: Invalid value: %d: not in valid "
                                 "range [0, inf)",
                                 abs);
    if (pct == 0 && abs == 0) {
        errs[n++] = ks_xasprintf("minCandidateNodesPercentage: Invalid value: 0: cannot be zero "
                                 "at the same time as minCandidateNodesAbsolute");
        errs[n++] = ks_xasprintf("minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at "
                                 "the same time as minCandidateNodesPercentage");
    }
    if (n == 0) return NULL;
    if (n == 1) return errs[0];
    /* An aggregate of several: "[a, b]". */
    size_t len = 3;
    for (int i = 0; i < n; i++) len += strlen(errs[i]) + 2;
    char *r = ks_xmalloc(len), *w = r;
    *w++ = '[';
    for (int i = 0; i < n; i++) {
        if (i) {
            memcpy(w, ", ", 2);
            w += 2;
        }
        size_t l = strlen(errs[i]);
        memcpy(w, errs[i], l);
        w += l;
        free(errs[i]);
    }
    *w++ = ']';
    *w = 0;
    return r;
}

static void *create(const ks_args *args, ks_handle *h, char **err) {
    int32_t pct, abs;
    if (!arg_int32(args, "minCandidateNodesPercentage", 10, &pct, err) ||
        !arg_int32(args, "minCandidateNodesAbsolute", 100, &abs, err))
        return NULL;
    if ((*err = validate(pct, abs))) return NULL;
    default_preemption *pl = ks_xcalloc(1, sizeof(*pl));
    pl->min_pct = pct;
    pl->min_abs = abs;
    pl->h = h;
    atomic_init(&pl->rng, ks_handle_seed(h) ^ 0x9e3779b97f4a7c15ULL);
    atomic_init(&pl->zero_offset, false);
    ks_evaluator_init(&pl->ev, NAME, h, &preemption_ops, pl, true);
    return pl;
}

ks_evaluator *ks_default_preemption_evaluator(void *self) {
    return &((default_preemption *)self)->ev;
}

static void destroy(void *self) {
    default_preemption *pl = self;
    if (!pl) return;
    ks_evaluator_destroy(&pl->ev);
    free(pl);
}

/* A pod held back by PreEnqueue waits for a victim's deletion (upstream's
 * hint for it is Skip: the plugins that rejected the pod decide). */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    if (max < 1) return 0;
    out[0] = (ks_cluster_event){KS_EV_POD, KS_ACT_DELETE};
    return 1;
}

/* Upstream's hint for a pod its PreEnqueue holds back while its victims
 * are being deleted: no single deletion lets it in (the preemption's end
 * activates it). */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    return KS_QUEUE_SKIP;
}

static ks_status *pre_enqueue(void *self, const ks_pod *pod) {
    default_preemption *pl = self;
    /* Upstream lets the pod go once the last victim's deletion is issued,
     * so that its deletion event is not lost on a gated pod; ksched holds
     * it until the scheduler has seen every victim deleted (that same
     * event ungates it), so that no attempt finds a deleted victim still
     * in the cache and preempts for nothing. */
    if (!pl->ev.async ||
        (!ks_evaluator_is_preempting(&pl->ev, pod) && !ks_evaluator_awaits_victims(&pl->ev, pod)))
        return NULL;
    return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                         "waiting for the preemption for this pod to be finished");
}

static ks_status *post_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                              const ks_node_status_map *statuses, ks_post_filter_result *result) {
    default_preemption *pl = self;
    const char *nominated = NULL;
    ks_counter_inc(ks_metric_get(ks_sm()->preemption_attempts));
    ks_status *s = ks_evaluator_preempt(&pl->ev, st, pod, statuses, &nominated);
    result->nominated_node = nominated;
    if (!s) return NULL;
    /* Upstream prefixes the message (all reasons joined) with "preemption: ". */
    char *msg = ks_status_message(s);
    if (*msg) {
        ks_status *p = ks_status_new(s->code, "preemption: %s", msg);
        ks_status_free(s);
        s = p;
    }
    free(msg);
    return s;
}

const ks_plugin_ops ks_plugin_default_preemption = {
    .abi_version = KS_ABI_VERSION,
    .name = NAME,
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_enqueue = pre_enqueue,
    .post_filter = post_filter,
};
