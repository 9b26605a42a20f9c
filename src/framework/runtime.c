/* The run functions: every extension point with upstream's semantics
 * (framework/runtime/framework.go), plus the debug check that no plugin
 * changes a NodeInfo it was handed.
 *
 * One way to call a plugin, used by every extension point:
 *   watch_begin / watch_end around the call: its duration when the cycle
 *     measures plugins (fw_metrics.h), and in debug builds the checksums
 *     of the NodeInfos the plugin can see, before and after;
 *   verdict() / plugin_error(): what its status means (a rejection named
 *     after the plugin, an Error wrapped with the point's prefix from
 *     points[]).
 * And one way to run an extension point: point_begin / point_end around
 * it release the holds the handle lent plugins during it (holds.h) and
 * record its duration. Each extension point is one function below (the
 * per-node ones, Filter and Score, a loop written once and inlined into
 * a plain and a watched copy); adding one is a row in points[] and its
 * function. */
#include "api/pod.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/holds.h"
#include "framework/fw_metrics.h"
#include "framework/status.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Upstream caps a Permit wait at 15 minutes. */
#define KS_MAX_PERMIT_TIMEOUT_NS (15LL * 60 * KS_NS_PER_SEC)

/* Per extension point: its name in the immutability message, and the
 * prefix an Error returned by one of its plugins is wrapped with ("%s":
 * the plugin), which names the plugin when error_names_plugin. */
static const struct point_text {
    const char *name;
    const char *error;
    bool error_names_plugin;
} points[KS_MEP_COUNT] = {
    [KS_MEP_PRE_FILTER] = {"PreFilter", "running PreFilter plugin \"%s\"", true},
    [KS_MEP_FILTER] = {"Filter", "running \"%s\" filter plugin", true},
    [KS_MEP_PRE_FILTER_ADD_POD] = {"PreFilter AddPod", "running AddPod on PreFilter plugin \"%s\"", false},
    [KS_MEP_PRE_FILTER_REMOVE_POD] = {"PreFilter RemovePod", "running RemovePod on PreFilter plugin \"%s\"",
                                      false},
    [KS_MEP_POST_FILTER] = {"PostFilter", "", true},
    [KS_MEP_PRE_SCORE] = {"PreScore", "running PreScore plugin \"%s\"", false},
    [KS_MEP_SCORE] = {"Score", "plugin \"%s\" failed with", false},
    [KS_MEP_NORMALIZE_SCORE] = {"NormalizeScore", "plugin \"%s\" failed with", false},
    [KS_MEP_PRE_BIND] = {"PreBind", "running PreBind plugin \"%s\"", false},
    [KS_MEP_PRE_BIND_PRE_FLIGHT] = {"PreBindPreFlight", "running PreBindPreFlight \"%s\"", false},
    [KS_MEP_BIND] = {"Bind", "running Bind plugin \"%s\"", false},
    [KS_MEP_POST_BIND] = {"PostBind", "", false},
    [KS_MEP_RESERVE] = {"Reserve", "running Reserve plugin \"%s\"", false},
    [KS_MEP_UNRESERVE] = {"Unreserve", "", false},
    [KS_MEP_PERMIT] = {"Permit", "running Permit plugin \"%s\"", true},
    [KS_MEP_PRE_ENQUEUE] = {"PreEnqueue", "", false},
};

/* ---- one plugin call: timing and the immutability check ----------------- */

/* NodeInfos come from the shared snapshot; a plugin that writes to one
 * corrupts every later decision of the cycle. Debug builds checksum each
 * NodeInfo before and after a plugin sees it and stop at the first
 * change, naming the culprit. */
static void checksum_failed(const ks_plugin_inst *pl, ks_mep mep, const ks_node_info *ni) {
    fprintf(stderr,
            "ksched: plugin %s changed the NodeInfo of node %s during %s; NodeInfo handed to "
            "plugins is read-only\n",
            pl->name, ks_str(ni->name), points[mep].name);
    abort();
}

/* One plugin call being watched: the NodeInfos it can see, its start time
 * (0: not timed) and their checksums (debug builds: one node's, or the
 * list's in cycle memory). */
typedef struct watch {
    const ks_framework *fw;
    const ks_plugin_inst *pl;
    ks_mep mep;
    const ks_node_info *const *nodes;
    size_t n;
    int64_t t;
    uint64_t one;
    uint64_t *many;
} watch;

static ALWAYS_INLINE watch watch_begin(const ks_framework *fw, ks_cycle_state *st, const ks_plugin_inst *pl,
                                       ks_mep mep, bool timed, const ks_node_info *const *nodes, size_t n) {
    watch w = {.fw = fw, .pl = pl, .mep = mep, .nodes = nodes, .n = n};
    if (fw->checksums) {
        if (n == 1 && nodes[0]) {
            w.one = ks_node_info_checksum(nodes[0]);
        } else if (n > 1) {
            w.many = ks_cycle_state_alloc(st, n * sizeof(uint64_t));
            for (size_t i = 0; i < n; i++) w.many[i] = ks_node_info_checksum(nodes[i]);
        }
    }
    w.t = timed ? ks_fwm_now() : 0;
    return w;
}

static ALWAYS_INLINE ks_status *watch_end(const watch *w, ks_status *s) {
    ks_fwm_done(w->fw, w->t, w->pl->index, w->mep, s);
    if (w->fw->checksums) {
        if (w->n == 1 && w->nodes[0] && ks_node_info_checksum(w->nodes[0]) != w->one)
            checksum_failed(w->pl, w->mep, w->nodes[0]);
        for (size_t i = 0; w->many && i < w->n; i++)
            if (ks_node_info_checksum(w->nodes[i]) != w->many[i]) checksum_failed(w->pl, w->mep, w->nodes[i]);
    }
    return s;
}

/* Whether the cycle times the calls of its per-cycle points. */
static inline bool sampled(const ks_cycle_state *st) { return st && st->record_plugin_metrics; }

/* ---- one plugin call: its status ------------------------------------- */

/* An Error status "<prefix>: <message of s>" (upstream wraps with %w). */
static ks_status *wrap_error(ks_status *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ks_status *wrap_error(ks_status *s, const char *fmt, ...) {
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    char *msg = ks_status_message(s);
    ks_status *e = ks_status_new(KS_ERROR, "%s: %s", prefix, msg);
    free(msg);
    ks_status_free(s);
    return e;
}

/* s (not Success) as an Error of plugin pl at point mep. */
static ks_status *plugin_error(const ks_plugin_inst *pl, ks_mep mep, ks_status *s) {
    char prefix[384];
    snprintf(prefix, sizeof(prefix), points[mep].error, pl->name);
    s = wrap_error(s, "%s", prefix);
    if (points[mep].error_names_plugin) ks_status_set_plugin(s, pl->name);
    return s;
}

/* What a plugin's status means at most points: NULL for Success (freed),
 * a rejection named after the plugin, anything else an Error. */
static ks_status *verdict(const ks_plugin_inst *pl, ks_mep mep, ks_status *s) {
    if (ks_status_is_success(s)) {
        ks_status_free(s);
        return NULL;
    }
    if (ks_code_is_rejected(s->code)) {
        ks_status_set_plugin(s, pl->name);
        return s;
    }
    return plugin_error(pl, mep, s);
}

/* ---- one extension point ------------------------------------------------ */

/* Around every extension point its callers see. The per-node ones
 * (Filter, PreFilter AddPod/RemovePod) only mark the holds: their
 * duration is not a metric. */
typedef struct point {
    size_t held;
    int64_t t0;
} point;

static inline point point_begin(void) { return (point){ks_holds_mark(), ks_fwm_now()}; }

static inline ks_status *point_end(ks_framework *fw, ks_mep mep, point p, ks_status *s) {
    ks_fwm_point(fw, mep, ks_status_code(s), p.t0);
    ks_holds_release_to(p.held);
    return s;
}

static const ks_node_info *const *snapshot_nodes(const ks_framework *fw, size_t *n) {
    if (!fw->snapshot) {
        *n = 0;
        return NULL;
    }
    *n = fw->snapshot->nnodes;
    return (const ks_node_info *const *)fw->snapshot->nodes;
}

/* ---- PreFilter ---------------------------------------------------------- */

static ks_pre_filter_result *merge(ks_cycle_state *st, ks_pre_filter_result *a,
                                   ks_pre_filter_result *b) {
    if (!a) return b;
    if (!b) return a;
    ks_pre_filter_result *r = ks_pre_filter_result_new(st);
    uint32_t cap = a->n < b->n ? a->n : b->n;
    r->nodes = ks_cycle_state_alloc(st, (cap ? cap : 1) * sizeof(ks_id));
    r->cap = cap ? cap : 1;
    for (uint32_t i = 0, j = 0; i < a->n && j < b->n;) {
        if (a->nodes[i] < b->nodes[j]) i++;
        else if (a->nodes[i] > b->nodes[j]) j++;
        else {
            r->nodes[r->n++] = a->nodes[i];
            i++;
            j++;
        }
    }
    return r;
}

/* The Filter plugins a cycle runs, listed once PreFilter is done: Filter
 * runs per node, often hundreds of times a cycle, and a list is cheaper
 * than testing every skip bit per node. */
static void list_filters(ks_framework *fw, ks_cycle_state *st) {
    const ks_ep_list *l = &fw->ep[KS_EP_FILTER];
    const ks_plugin_inst **v = ks_cycle_state_alloc(st, (l->n ? l->n : 1) * sizeof(*v));
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->n; i++)
        if (!ks_bit_get(st->skip_filter, l->v[i]->index)) v[n++] = l->v[i];
    st->filters = v;
    st->nfilters = n;
    st->filters_for = fw;
    st->plain_filters = !fw->checksums && !st->record_plugin_metrics;
}

/* PreFilter results named nobody: "node(s) didn't satisfy plugin(s) ...". */
static ks_status *no_node_left(const ks_framework *fw, const ks_plugin_mask *with_nodes) {
    ks_strbuf names;
    ks_sb_init(&names);
    size_t nn = ks_framework_mask_names(fw, with_nodes, &names);
    ks_strbuf b;
    ks_sb_init(&b);
    if (nn == 1) ks_sb_printf(&b, "node(s) didn't satisfy plugin %s", ks_sb_str(&names));
    else ks_sb_printf(&b, "node(s) didn't satisfy plugin(s) [%s] simultaneously", ks_sb_str(&names));
    ks_sb_free(&names);
    ks_status *e = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", ks_sb_str(&b));
    ks_sb_free(&b);
    return e;
}

/* *result and *rejectors are set when every plugin ran or the results
 * left no node; an early rejection leaves them empty. */
static ks_status *pre_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                             ks_pre_filter_result **result, ks_plugin_mask *rejectors) {
    size_t n;
    const ks_node_info *const *nodes = snapshot_nodes(fw, &n);
    ks_pre_filter_result *merged = NULL;
    ks_plugin_mask with_nodes = {{0}};
    ks_status *ret = NULL;
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        ks_pre_filter_result *r = NULL;
        watch w = watch_begin(fw, st, pl, KS_MEP_PRE_FILTER, sampled(st), nodes, n);
        ks_status *s = watch_end(&w, pl->ops->pre_filter(pl->self, st, pod, nodes, n, &r));
        ks_code c = ks_status_code(s);
        if (c == KS_SKIP) {
            ks_bit_set(st->skip_filter, pl->index);
            ks_status_free(s);
            continue;
        }
        ks_fwm_evals(fw, pl->index, KS_MEP_PRE_FILTER, 1);
        if (c == KS_UNSCHEDULABLE) {
            /* Keep going: a later plugin may reject harder. */
            ks_status_set_plugin(s, pl->name);
            ks_status_free(ret);
            ret = s;
            continue;
        }
        if (c != KS_SUCCESS) {
            ks_status_free(ret);
            if (c != KS_UNSCHEDULABLE_AND_UNRESOLVABLE) return plugin_error(pl, KS_MEP_PRE_FILTER, s);
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        ks_status_free(s);
        if (r) ks_plugin_mask_add(&with_nodes, pl->index);
        merged = merge(st, merged, r);
        if (merged && merged->n == 0) {
            ks_status_free(ret);
            ret = no_node_left(fw, &with_nodes);
            break;
        }
    }
    *result = merged;
    if (rejectors) *rejectors = with_nodes;
    return ret;
}

ks_status *ks_framework_run_pre_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                       ks_pre_filter_result **result, ks_plugin_mask *rejectors) {
    point p = point_begin();
    memset(st->skip_filter, 0, sizeof(st->skip_filter));
    *result = NULL;
    if (rejectors) memset(rejectors, 0, sizeof(*rejectors));
    ks_status *s = pre_filter(fw, st, pod, result, rejectors);
    list_filters(fw, st);
    return point_end(fw, KS_MEP_PRE_FILTER, p, s);
}

/* AddPod / RemovePod of the PreFilter plugins not skipped (per node). */
static ks_status *pre_filter_extension(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                       const ks_pod *other, const ks_node_info *ni, ks_mep mep) {
    bool timed = st->record_plugin_metrics && ks_fwm_node_sampled(fw->node_mask);
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (ks_bit_get(st->skip_filter, pl->index)) continue;
        ks_status *(*fn)(void *, ks_cycle_state *, const ks_pod *, const ks_pod *, const ks_node_info *) =
            mep == KS_MEP_PRE_FILTER_ADD_POD ? pl->ops->add_pod : pl->ops->remove_pod;
        if (!fn) continue;
        watch w = watch_begin(fw, st, pl, mep, timed, &ni, 1);
        ks_status *s = watch_end(&w, fn(pl->self, st, pod, other, ni));
        if (!ks_status_is_success(s)) return plugin_error(pl, mep, s);
        ks_status_free(s);
    }
    return NULL;
}

ks_status *ks_framework_run_pre_filter_add_pod(ks_framework *fw, ks_cycle_state *st,
                                               const ks_pod *pod, const ks_pod *to_add,
                                               const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *s = pre_filter_extension(fw, st, pod, to_add, ni, KS_MEP_PRE_FILTER_ADD_POD);
    ks_holds_release_to(held);
    return s;
}

ks_status *ks_framework_run_pre_filter_remove_pod(ks_framework *fw, ks_cycle_state *st,
                                                  const ks_pod *pod, const ks_pod *to_remove,
                                                  const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *s = pre_filter_extension(fw, st, pod, to_remove, ni, KS_MEP_PRE_FILTER_REMOVE_POD);
    ks_holds_release_to(held);
    return s;
}

/* ---- Filter ---------------------------------------------------------------- */

/* The Filter plugins v[0..n) on one node, stopping at the first that
 * fails. Inlined with watched a constant: the plain copy, which most
 * nodes of most cycles take, is a bare call per plugin. */
static ALWAYS_INLINE ks_status *filter_plugins(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                               const ks_node_info *ni, const ks_plugin_inst *const *v,
                                               uint32_t n, const bool watched, bool timed) {
    for (uint32_t i = 0; i < n; i++) {
        const ks_plugin_inst *pl = v[i];
        watch w = {0};
        if (watched) w = watch_begin(fw, st, pl, KS_MEP_FILTER, timed, &ni, 1);
        ks_status *s = pl->ops->filter(pl->self, st, pod, ni);
        if (watched) watch_end(&w, s);
        if (s && (s = verdict(pl, KS_MEP_FILTER, s))) return s;
    }
    return NULL;
}

/* Filter with a state no PreFilter of this framework prepared (an
 * embedder calling Filter alone): the list made here, every call watched. */
static __attribute__((noinline)) ks_status *filter_unlisted(ks_framework *fw, ks_cycle_state *st,
                                                            const ks_pod *pod, const ks_node_info *ni) {
    const ks_plugin_inst *v[KS_MAX_PLUGINS];
    uint32_t n = 0;
    const ks_ep_list *l = &fw->ep[KS_EP_FILTER];
    for (uint32_t i = 0; i < l->n; i++)
        if (!ks_bit_get(st->skip_filter, l->v[i]->index)) v[n++] = l->v[i];
    bool timed = st->record_plugin_metrics && ks_fwm_node_sampled(fw->node_mask);
    return filter_plugins(fw, st, pod, ni, v, n, true, timed);
}

static ALWAYS_INLINE ks_status *filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                       const ks_node_info *ni) {
    if (st->filters_for != fw) return filter_unlisted(fw, st, pod, ni);
    if (st->plain_filters) return filter_plugins(fw, st, pod, ni, st->filters, st->nfilters, false, false);
    /* A sampled cycle times the plugins of one node in KS_FWM_NODE_SAMPLE. */
    bool timed = st->record_plugin_metrics && ks_fwm_node_sampled(fw->node_mask);
    if (!timed && !fw->checksums)
        return filter_plugins(fw, st, pod, ni, st->filters, st->nfilters, false, false);
    return filter_plugins(fw, st, pod, ni, st->filters, st->nfilters, true, timed);
}

ks_status *ks_framework_run_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *s = filter(fw, st, pod, ni);
    ks_holds_release_to(held);
    return s;
}

ks_status *ks_framework_run_filter_plugin(ks_framework *fw, ks_cycle_state *st,
                                          const ks_pod *pod, const ks_node_info *ni,
                                          size_t plugin_index) {
    if (plugin_index >= fw->nplugins) return NULL;
    const ks_plugin_inst *pl = &fw->plugins[plugin_index];
    if (!pl->ops->filter || ks_bit_get(st->skip_filter, pl->index)) return NULL;
    size_t held = ks_holds_mark();
    ks_status *s = filter_plugins(fw, st, pod, ni, &pl, 1, true, false);
    ks_holds_release_to(held);
    return s;
}

void ks_framework_record_filter_evals(ks_framework *fw, const ks_cycle_state *st, ks_status *const *verdicts,
                                      size_t n, size_t passed_all) {
    /* Count the Filter calls a node cost from its verdict: every listed
     * plugin up to the one that rejected it (all when it passed). Done
     * once per cycle so that the per-node path counts nothing. */
    if (!fw->metrics || st->filters_for != fw || st->nfilters == 0) return;
    uint32_t nf = st->nfilters;
    uint64_t ended_at[KS_MAX_PLUGINS] = {0};
    uint64_t passed = 0;
    const char *last_name = NULL;
    uint32_t last_pos = nf - 1;
    /* Every node passed: no verdict to look at. */
    for (size_t i = 0; passed_all < n && i < n; i++) {
        const ks_status *v = verdicts[i];
        if (!v) {
            passed++;
            continue;
        }
        /* The rejecting plugin: statuses carry its static name, so the
         * address finds it (most often the same as the last node's); a
         * copied name is compared as text. */
        if (v->plugin != last_name) {
            uint32_t pos = nf;
            for (uint32_t k = 0; k < nf && pos == nf; k++)
                if (st->filters[k]->name == v->plugin) pos = k;
            for (uint32_t k = 0; k < nf && pos == nf && v->plugin; k++)
                if (strcmp(st->filters[k]->name, v->plugin) == 0) pos = k;
            last_name = v->plugin;
            last_pos = pos == nf ? nf - 1 : pos;
        }
        ended_at[last_pos]++;
    }
    ended_at[nf - 1] += passed_all < n ? passed : n;
    uint64_t calls = 0;
    for (uint32_t k = nf; k-- > 0;) {
        calls += ended_at[k];
        ks_fwm_evals(fw, st->filters[k]->index, KS_MEP_FILTER, calls);
    }
}

/* Upstream addGENominatedPods: a copy of the node with the nominated pods
 * of equal or higher priority on it, and a copy of the state told about
 * them through AddPod. Returns false when no pod was added. */
static bool add_nominated(ks_framework *fw, const ks_pod *pod, ks_cycle_state *st,
                          const ks_node_info *ni, ks_cycle_state **st_out, ks_node_info **ni_out,
                          ks_status **err) {
    *err = NULL;
    if (!fw->env.nominated_count || fw->env.nominated_count(fw->env.ctx, ni->name) == 0) return false;
    ks_pod *buf[16];
    ks_pod **v = buf;
    size_t n = fw->env.nominated_pods(fw->env.ctx, ni->name, buf, 16);
    if (n > 16) {
        for (size_t i = 0; i < 16; i++) ks_pod_unref(buf[i]);
        v = ks_xmalloc(n * sizeof(*v));
        n = fw->env.nominated_pods(fw->env.ctx, ni->name, v, n);
    }
    bool added = false;
    int32_t prio = ks_pod_priority(pod);
    ks_node_info *nio = NULL;
    ks_cycle_state *sto = NULL;
    for (size_t i = 0; i < n; i++) {
        ks_pod *p = v[i];
        if (ks_pod_priority(p) < prio || p->key == pod->key) continue;
        if (!nio) {
            nio = ks_node_info_clone(ni);
            sto = ks_cycle_state_clone(st);
        }
        ks_node_info_add_pod(nio, p);
        ks_status *s = pre_filter_extension(fw, sto, pod, p, nio, KS_MEP_PRE_FILTER_ADD_POD);
        if (s) {
            *err = s;
            added = false;
            break;
        }
        added = true;
    }
    for (size_t i = 0; i < n; i++) ks_pod_unref(v[i]);
    if (v != buf) free(v);
    if (!added) {
        ks_node_info_free(nio);
        ks_cycle_state_free(sto);
        return false;
    }
    *ni_out = nio;
    *st_out = sto;
    return true;
}

ks_status *ks_framework_run_filter_with_nominated_pods(ks_framework *fw, ks_cycle_state *st,
                                                       const ks_pod *pod, const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    /* Pass 1 with the nominated pods (they will take their place on the
     * node once their victims are gone); pass 2 without them, because the
     * nominated pods may not end up there and some filters (pod
     * anti-affinity) can only pass when they are absent. */
    ks_cycle_state *st2 = NULL;
    ks_node_info *ni2 = NULL;
    ks_status *s = NULL;
    bool added = add_nominated(fw, pod, st, ni, &st2, &ni2, &s);
    if (!s) s = filter(fw, added ? st2 : st, pod, added ? ni2 : ni);
    if (added) {
        ks_node_info_free(ni2);
        ks_cycle_state_free(st2);
        if (ks_status_is_success(s)) s = filter(fw, st, pod, ni);
    }
    ks_holds_release_to(held);
    return s;
}

/* ---- PostFilter ------------------------------------------------------------ */

static ks_status *post_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                              const ks_node_status_map *statuses, char **nominated_node) {
    char *result = NULL;
    ks_status *out = ks_status_new(KS_UNSCHEDULABLE, NULL);
    const char *rejector = NULL;
    /* PostFilter gets no NodeInfo but can reach the snapshot through the
     * handle (preemption does): all of it is watched. */
    size_t nn;
    const ks_node_info *const *all = snapshot_nodes(fw, &nn);
    const ks_ep_list *l = &fw->ep[KS_EP_POST_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        ks_post_filter_result r = {0};
        watch w = watch_begin(fw, st, pl, KS_MEP_POST_FILTER, sampled(st), all, nn);
        ks_status *s = watch_end(&w, pl->ops->post_filter(pl->self, st, pod, statuses, &r));
        ks_code c = ks_status_code(s);
        if (c == KS_SUCCESS || c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            ks_status_free(out);
            free(result);
            *nominated_node = r.nominated_node ? ks_xstrdup(r.nominated_node) : NULL;
            if (c == KS_SUCCESS) {
                ks_status_free(s);
                return NULL;
            }
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        if (!ks_code_is_rejected(c)) {
            ks_status_free(out);
            free(result);
            s->code = KS_ERROR;
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        if (r.nominated_node) {
            free(result);
            result = ks_xstrdup(r.nominated_node);
        }
        for (size_t k = 0; k < s->nreasons; k++) ks_status_add_reason(out, "%s", s->reasons[k]);
        if (!rejector) rejector = pl->name;
        ks_status_free(s);
    }
    ks_status_set_plugin(out, rejector);
    *nominated_node = result;
    return out;
}

ks_status *ks_framework_run_post_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                        const ks_node_status_map *statuses, char **nominated_node) {
    point p = point_begin();
    *nominated_node = NULL;
    return point_end(fw, KS_MEP_POST_FILTER, p, post_filter(fw, st, pod, statuses, nominated_node));
}

/* ---- PreScore / Score ------------------------------------------------------ */

ks_status *ks_framework_run_pre_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                      const ks_node_info *const *nodes, size_t nnodes) {
    point p = point_begin();
    memset(st->skip_score, 0, sizeof(st->skip_score));
    ks_status *err = NULL;
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_SCORE];
    for (uint32_t i = 0; i < l->n && !err; i++) {
        const ks_plugin_inst *pl = l->v[i];
        watch w = watch_begin(fw, st, pl, KS_MEP_PRE_SCORE, sampled(st), nodes, nnodes);
        ks_status *s = watch_end(&w, pl->ops->pre_score(pl->self, st, pod, nodes, nnodes));
        ks_code c = ks_status_code(s);
        if (c == KS_SKIP) {
            ks_bit_set(st->skip_score, pl->index);
            ks_status_free(s);
            continue;
        }
        ks_fwm_evals(fw, pl->index, KS_MEP_PRE_SCORE, 1);
        if (c != KS_SUCCESS) err = plugin_error(pl, KS_MEP_PRE_SCORE, s);
        else ks_status_free(s);
    }
    return point_end(fw, KS_MEP_PRE_SCORE, p, err);
}

typedef struct score_job {
    ks_framework *fw;
    ks_cycle_state *st;
    const ks_pod *pod;
    const ks_node_info *const *nodes;
    size_t nnodes;
    const ks_plugin_inst **plugins;
    size_t np;
    int64_t *raw;
    ks_status **errs; /* per node, first failure */
    atomic_bool stop;
    bool sampled;     /* the cycle times its plugins (fw_metrics.h) */
} score_job;

/* The Score plugins on node i. Inlined with watched a constant, as
 * filter_plugins. */
static ALWAYS_INLINE void score_plugins(size_t i, score_job *j, const bool watched, bool timed) {
    const ks_node_info *ni = j->nodes[i];
    int64_t *raw = j->raw + i * j->np;
    for (size_t p = 0; p < j->np; p++) {
        const ks_plugin_inst *pl = j->plugins[p];
        int64_t v = 0;
        watch w = {0};
        if (watched) w = watch_begin(j->fw, j->st, pl, KS_MEP_SCORE, timed, &ni, 1);
        ks_status *s = pl->ops->score(pl->self, j->st, j->pod, ni, &v);
        if (watched) watch_end(&w, s);
        if (s) {
            if (!ks_status_is_success(s)) {
                j->errs[i] = plugin_error(pl, KS_MEP_SCORE, s);
                atomic_store(&j->stop, true);
                return;
            }
            ks_status_free(s);
        }
        raw[p] = v;
    }
}

/* On a worker of the pool: an extension point of its own (holds). */
static void score_node(size_t i, void *arg) {
    score_job *j = arg;
    size_t held = ks_holds_mark();
    if (i + 3 < j->nnodes) {
        const ks_node_info *nx = j->nodes[i + 3];
        __builtin_prefetch(&nx->nonzero_requested);
        __builtin_prefetch(&nx->allocatable);
        __builtin_prefetch(&nx->requested);
    }
    /* A sampled cycle times the plugins of one node in KS_FWM_NODE_SAMPLE. */
    bool timed = j->sampled && ks_fwm_node_sampled(j->fw->node_mask);
    if (timed || j->fw->checksums) score_plugins(i, j, true, timed);
    else score_plugins(i, j, false, false);
    ks_holds_release_to(held);
}

static void clear_scores(ks_score_result *out, size_t cells) {
    memset(out->raw, 0, cells * sizeof(int64_t));
    memset(out->normalized, 0, cells * sizeof(int64_t));
    memset(out->weighted, 0, cells * sizeof(int64_t));
    memset(out->total, 0, (out->nnodes ? out->nnodes : 1) * sizeof(int64_t));
}

static ks_status *score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                        const ks_node_info *const *nodes, size_t nnodes, ks_score_result *out) {
    const ks_ep_list *l = &fw->ep[KS_EP_SCORE];
    const ks_plugin_inst **plugins = ks_cycle_state_alloc(st, (l->n ? l->n : 1) * sizeof(*plugins));
    const char **names = ks_cycle_state_alloc(st, (l->n ? l->n : 1) * sizeof(*names));
    int64_t *weights = ks_cycle_state_alloc(st, (l->n ? l->n : 1) * sizeof(*weights));
    size_t np = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (ks_bit_get(st->skip_score, l->v[i]->index)) continue;
        plugins[np] = l->v[i];
        names[np] = l->v[i]->name;
        weights[np] = fw->score_weights[i];
        np++;
    }
    size_t cells = nnodes * np;
    if (cells == 0) cells = 1;
    memset(out, 0, sizeof(*out));
    out->nnodes = nnodes;
    out->nplugins = np;
    out->nodes = nodes;
    out->plugins = names;
    out->weights = weights;
    /* Written whole below; zeroed when a failure leaves them part done. */
    out->raw = ks_cycle_state_alloc_uninit(st, cells * sizeof(int64_t));
    out->normalized = ks_cycle_state_alloc_uninit(st, cells * sizeof(int64_t));
    out->weighted = ks_cycle_state_alloc_uninit(st, cells * sizeof(int64_t));
    out->total = ks_cycle_state_alloc_uninit(st, (nnodes ? nnodes : 1) * sizeof(int64_t));
    if (np == 0 || nnodes == 0) {
        clear_scores(out, cells);
        return NULL;
    }

    score_job j = {.fw = fw, .st = st, .pod = pod, .nodes = nodes, .nnodes = nnodes, .plugins = plugins, .np = np,
                   .raw = out->raw, .sampled = st->record_plugin_metrics};
    /* scratch: the cycle state outlives Score by the binding cycle */
    j.errs = ks_cycle_state_alloc_uninit(st, nnodes * sizeof(ks_status *));
    memset(j.errs, 0, nnodes * sizeof(ks_status *));
    atomic_init(&j.stop, false);
    ks_parallelize(fw->par, nnodes, score_node, &j, &j.stop);
    for (size_t p = 0; p < np; p++) ks_fwm_evals(fw, plugins[p]->index, KS_MEP_SCORE, nnodes);
    if (atomic_load(&j.stop)) {
        /* Report the failure of the first node in order, whichever thread
         * hit one first. */
        ks_status *first = NULL;
        for (size_t i = 0; i < nnodes; i++) {
            if (!j.errs[i]) continue;
            if (!first) first = j.errs[i];
            else ks_status_free(j.errs[i]);
        }
        clear_scores(out, cells);
        return wrap_error(first, "running Score plugins");
    }

    memcpy(out->normalized, out->raw, nnodes * np * sizeof(int64_t));
    ks_node_score *buf = ks_cycle_state_alloc_uninit(st, nnodes * sizeof(*buf));
    for (size_t p = 0; p < np; p++) {
        const ks_plugin_inst *pl = plugins[p];
        if (!pl->ops->normalize_score) continue;
        for (size_t i = 0; i < nnodes; i++) buf[i] = (ks_node_score){nodes[i], out->raw[i * np + p]};
        watch w = watch_begin(fw, st, pl, KS_MEP_NORMALIZE_SCORE, sampled(st), NULL, 0);
        ks_status *s = watch_end(&w, pl->ops->normalize_score(pl->self, st, pod, buf, nnodes));
        if (!ks_status_is_success(s)) {
            clear_scores(out, cells);
            return wrap_error(plugin_error(pl, KS_MEP_NORMALIZE_SCORE, s), "running Normalize on Score plugins");
        }
        ks_status_free(s);
        for (size_t i = 0; i < nnodes; i++) out->normalized[i * np + p] = buf[i].score;
    }
    for (size_t i = 0; i < nnodes; i++) {
        int64_t total = 0;
        for (size_t p = 0; p < np; p++) {
            int64_t v = out->normalized[i * np + p];
            if (v > KS_MAX_NODE_SCORE || v < KS_MIN_NODE_SCORE) {
                ks_status *s = ks_status_new(
                    KS_ERROR,
                    "plugin \"%s\" returns an invalid score %lld, it should in the range of [%d, %d] "
                    "after normalizing",
                    names[p], (long long)v, KS_MIN_NODE_SCORE, KS_MAX_NODE_SCORE);
                clear_scores(out, cells);
                return wrap_error(s, "applying score defaultWeights on Score plugins");
            }
            out->weighted[i * np + p] = v * weights[p];
            total += v * weights[p];
        }
        out->total[i] = total;
    }
    return NULL;
}

ks_status *ks_framework_run_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                  const ks_node_info *const *nodes, size_t nnodes,
                                  ks_score_result *out) {
    point p = point_begin();
    return point_end(fw, KS_MEP_SCORE, p, score(fw, st, pod, nodes, nnodes, out));
}

/* ---- Reserve / Permit --------------------------------------------------- */

ks_status *ks_framework_run_reserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                    const char *node) {
    point p = point_begin();
    ks_status *s = NULL;
    const ks_ep_list *l = &fw->ep[KS_EP_RESERVE];
    for (uint32_t i = 0; i < l->n && !s; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (!pl->ops->reserve) continue;
        watch w = watch_begin(fw, st, pl, KS_MEP_RESERVE, sampled(st), NULL, 0);
        s = verdict(pl, KS_MEP_RESERVE, watch_end(&w, pl->ops->reserve(pl->self, st, pod, node)));
    }
    return point_end(fw, KS_MEP_RESERVE, p, s);
}

void ks_framework_run_unreserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node) {
    point p = point_begin();
    const ks_ep_list *l = &fw->ep[KS_EP_RESERVE];
    for (uint32_t i = l->n; i-- > 0;) {
        const ks_plugin_inst *pl = l->v[i];
        if (!pl->ops->unreserve) continue;
        watch w = watch_begin(fw, st, pl, KS_MEP_UNRESERVE, sampled(st), NULL, 0);
        pl->ops->unreserve(pl->self, st, pod, node);
        watch_end(&w, NULL);
    }
    point_end(fw, KS_MEP_UNRESERVE, p, NULL);
}

static ks_status *permit(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_PERMIT];
    ks_waiting_plugin waits[KS_MAX_PLUGINS];
    uint32_t nwaits = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        int64_t timeout_ms = 0;
        watch w = watch_begin(fw, st, pl, KS_MEP_PERMIT, sampled(st), NULL, 0);
        ks_status *s = watch_end(&w, pl->ops->permit(pl->self, st, pod, node, &timeout_ms));
        if (ks_status_code(s) == KS_WAIT) {
            int64_t t = timeout_ms * KS_NS_PER_MS;
            if (timeout_ms > KS_MAX_PERMIT_TIMEOUT_NS / KS_NS_PER_MS || t > KS_MAX_PERMIT_TIMEOUT_NS)
                t = KS_MAX_PERMIT_TIMEOUT_NS;
            if (t < 0) t = 0;
            waits[nwaits++] = (ks_waiting_plugin){.plugin = pl->name, .timeout_ns = t};
            ks_status_free(s);
            continue;
        }
        if ((s = verdict(pl, KS_MEP_PERMIT, s))) return s;
    }
    if (nwaits) {
        ks_waiting_pods_add(ks_framework_waiting(fw), (ks_pod *)pod, waits, nwaits);
        char name[256];
        snprintf(name, sizeof(name), "%s", ks_str(pod->name));
        return ks_status_new(KS_WAIT, "one or more plugins asked to wait and no plugin rejected pod \"%s\"",
                             name);
    }
    return NULL;
}

ks_status *ks_framework_run_permit(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const char *node) {
    point p = point_begin();
    return point_end(fw, KS_MEP_PERMIT, p, permit(fw, st, pod, node));
}

bool ks_framework_try_wait_on_permit(ks_framework *fw, const ks_pod *pod, bool block,
                                     ks_status **out) {
    *out = NULL;
    ks_waiting_pods *wp = ks_framework_waiting(fw);
    ks_waiting_pod *w = ks_waiting_pods_get(wp, pod->key);
    if (!w) return true;
    ks_status *v = NULL;
    int64_t t0 = ks_fwm_now();
    if (!ks_waiting_pod_wait(w, block, &v)) return false;
    /* Only a real wait has a duration (the simulated loop polls). */
    if (block) {
        const char *res[1] = {ks_code_name(ks_status_code(v))};
        ks_histogram_observe(ks_metric_getv(ks_sm()->permit_wait_duration, res),
                             (double)(ks_fwm_now() - t0) / 1e9);
    }
    ks_waiting_pods_remove(wp, pod->key);
    if (!ks_status_is_success(v) && !ks_code_is_rejected(v->code)) {
        const char *plugin = v->plugin;
        v = wrap_error(v, "waiting on permit for pod");
        ks_status_set_plugin(v, plugin);
    }
    *out = v;
    return true;
}

ks_status *ks_framework_wait_on_permit(ks_framework *fw, const ks_pod *pod) {
    ks_status *s = NULL;
    if (!ks_framework_try_wait_on_permit(fw, pod, true, &s))
        return ks_status_new(KS_ERROR, "waiting on permit for pod: still waiting on a simulated clock");
    return s;
}


/* ---- binding -------------------------------------------------------------- */

static ks_status *pre_bind_pre_flight(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                      const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_BIND];
    bool any = false;
    uint64_t skip[KS_PLUGIN_MASK_WORDS] = {0};
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        /* A PreBind plugin without a pre-flight always has work to do. */
        if (!pl->ops->pre_bind_pre_flight) {
            any = true;
            continue;
        }
        watch w = watch_begin(fw, st, pl, KS_MEP_PRE_BIND_PRE_FLIGHT, sampled(st), NULL, 0);
        ks_status *s = watch_end(&w, pl->ops->pre_bind_pre_flight(pl->self, st, pod, node));
        ks_code c = ks_status_code(s);
        if (c == KS_ERROR) return plugin_error(pl, KS_MEP_PRE_BIND_PRE_FLIGHT, s);
        ks_status_free(s);
        if (c == KS_SUCCESS) {
            any = true;
        } else if (c == KS_SKIP) {
            ks_bit_set(skip, pl->index);
        } else {
            return ks_status_new(KS_ERROR,
                                 "PreBindPreFlight %s returned \"%s\", which is unsupported. It is "
                                 "supposed to return Success, Skip, or Error status",
                                 pl->name, ks_code_name(c));
        }
    }
    memcpy(st->skip_pre_bind, skip, sizeof(skip));
    return any ? NULL : ks_status_new(KS_SKIP, NULL);
}

ks_status *ks_framework_run_pre_bind_pre_flight(ks_framework *fw, ks_cycle_state *st,
                                                const ks_pod *pod, const char *node) {
    point p = point_begin();
    return point_end(fw, KS_MEP_PRE_BIND_PRE_FLIGHT, p, pre_bind_pre_flight(fw, st, pod, node));
}

ks_status *ks_framework_run_pre_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                     const char *node) {
    point p = point_begin();
    ks_status *s = NULL;
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_BIND];
    for (uint32_t i = 0; i < l->n && !s; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (!pl->ops->pre_bind || ks_bit_get(st->skip_pre_bind, pl->index)) continue;
        watch w = watch_begin(fw, st, pl, KS_MEP_PRE_BIND, sampled(st), NULL, 0);
        s = verdict(pl, KS_MEP_PRE_BIND, watch_end(&w, pl->ops->pre_bind(pl->self, st, pod, node)));
    }
    return point_end(fw, KS_MEP_PRE_BIND, p, s);
}

/* The first Bind plugin that does not Skip binds; Skip when all do. */
ks_status *ks_framework_run_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                 const char *node) {
    point p = point_begin();
    ks_status *s = ks_status_new(KS_SKIP, NULL);
    const ks_ep_list *l = &fw->ep[KS_EP_BIND];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        ks_status_free(s);
        watch w = watch_begin(fw, st, pl, KS_MEP_BIND, sampled(st), NULL, 0);
        s = watch_end(&w, pl->ops->bind(pl->self, st, pod, node));
        if (ks_status_code(s) == KS_SKIP) continue;
        s = verdict(pl, KS_MEP_BIND, s);
        break;
    }
    return point_end(fw, KS_MEP_BIND, p, s);
}

void ks_framework_run_post_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node) {
    point p = point_begin();
    const ks_ep_list *l = &fw->ep[KS_EP_POST_BIND];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        watch w = watch_begin(fw, st, pl, KS_MEP_POST_BIND, sampled(st), NULL, 0);
        pl->ops->post_bind(pl->self, st, pod, node);
        watch_end(&w, NULL);
    }
    point_end(fw, KS_MEP_POST_BIND, p, NULL);
}

/* ---- queue-side points ------------------------------------------------- */

/* Not timed or watched (upstream neither): QueueSort runs under the
 * queue's lock at every heap comparison. */
bool ks_framework_less(const ks_framework *fw, const ks_queued_pod *a, const ks_queued_pod *b) {
    size_t held = ks_holds_mark();
    const ks_plugin_inst *pl = fw->ep[KS_EP_QUEUE_SORT].v[0];
    bool r = pl->ops->less(pl->self, a, b);
    ks_holds_release_to(held);
    return r;
}

static ks_status *pre_enqueue_one(const ks_plugin_inst *pl, const ks_pod *pod) {
    ks_status *s = pl->ops->pre_enqueue(pl->self, pod);
    if (ks_status_is_success(s)) {
        ks_status_free(s);
        return NULL;
    }
    ks_status_set_plugin(s, pl->name);
    return s;
}

ks_status *ks_framework_run_pre_enqueue(ks_framework *fw, const ks_pod *pod, int first,
                                        int *gating_plugin) {
    size_t held = ks_holds_mark();
    ks_status *s = NULL;
    *gating_plugin = -1;
    /* The plugin that gated the pod last time goes first: it is the most
     * likely to gate it again. */
    if (first >= 0 && (uint32_t)first < fw->nplugins && fw->plugins[first].ops->pre_enqueue &&
        (s = pre_enqueue_one(&fw->plugins[first], pod)))
        *gating_plugin = first;
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_ENQUEUE];
    for (uint32_t i = 0; i < l->n && !s; i++) {
        if ((int)l->v[i]->index == first) continue;
        if ((s = pre_enqueue_one(l->v[i], pod))) *gating_plugin = (int)l->v[i]->index;
    }
    ks_holds_release_to(held);
    return s;
}
