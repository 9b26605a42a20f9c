/* The run functions: every extension point with upstream's semantics
 * (framework/runtime/framework.go), plus the debug check that no plugin
 * changes a NodeInfo it was handed. */
#include "api/pod.h"
#include "framework/cycle_state.h"
#include "framework/framework.h"
#include "framework/holds.h"
#include "framework/fw_metrics.h"
#include "framework/status.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream caps a Permit wait at 15 minutes. */
#define KS_MAX_PERMIT_TIMEOUT_NS (15LL * 60 * KS_NS_PER_SEC)

/* ---- immutability check -------------------------------------------------- */

/* NodeInfos come from the shared snapshot; a plugin that writes to one
 * corrupts every later decision of the cycle. Debug builds checksum each
 * NodeInfo before and after a plugin sees it and stop at the first
 * change, naming the culprit. */
static void checksum_failed(const ks_plugin_inst *pl, const char *point, const ks_node_info *ni) {
    fprintf(stderr,
            "ksched: plugin %s changed the NodeInfo of node %s during %s; NodeInfo handed to "
            "plugins is read-only\n",
            pl->name, ks_str(ni->name), point);
    abort();
}

static inline uint64_t sum1(const ks_framework *fw, const ks_node_info *ni) {
    return fw->checksums && ni ? ks_node_info_checksum(ni) : 0;
}

static inline void check1(const ks_framework *fw, const ks_plugin_inst *pl, const char *point,
                          const ks_node_info *ni, uint64_t before) {
    if (fw->checksums && ni && ks_node_info_checksum(ni) != before) checksum_failed(pl, point, ni);
}

/* For the points that get the whole node list. */
static uint64_t *sums(const ks_framework *fw, ks_cycle_state *st, const ks_node_info *const *nodes,
                      size_t n) {
    if (!fw->checksums) return NULL;
    uint64_t *v = ks_cycle_state_alloc(st, (n ? n : 1) * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) v[i] = ks_node_info_checksum(nodes[i]);
    return v;
}

static void check_all(const ks_framework *fw, const ks_plugin_inst *pl, const char *point,
                      const ks_node_info *const *nodes, size_t n, const uint64_t *before) {
    if (!before) return;
    for (size_t i = 0; i < n; i++)
        if (ks_node_info_checksum(nodes[i]) != before[i]) checksum_failed(pl, point, nodes[i]);
}

/* ---- helpers ---------------------------------------------------------------- */

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

static ks_status *run_pre_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                 ks_pre_filter_result **result, ks_plugin_mask *rejectors) {
    size_t n;
    const ks_node_info *const *nodes = snapshot_nodes(fw, &n);
    memset(st->skip_filter, 0, sizeof(st->skip_filter));
    ks_pre_filter_result *merged = NULL;
    ks_plugin_mask with_nodes = {{0}};
    ks_status *ret = NULL;
    *result = NULL;
    if (rejectors) memset(rejectors, 0, sizeof(*rejectors));
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        ks_pre_filter_result *r = NULL;
        uint64_t *before = sums(fw, st, nodes, n);
        int64_t t = ks_fwm_start(st);
        ks_status *s = pl->ops->pre_filter(pl->self, st, pod, nodes, n, &r);
        ks_fwm_done(fw, t, pl->index, KS_MEP_PRE_FILTER, s);
        check_all(fw, pl, "PreFilter", nodes, n, before);
        ks_code c = ks_status_code(s);
        if (c == KS_SKIP) {
            ks_bit_set(st->skip_filter, pl->index);
            ks_status_free(s);
            continue;
        }
        ks_fwm_evals(fw, pl->index, KS_MEP_PRE_FILTER, 1);
        if (c != KS_SUCCESS) {
            ks_status_set_plugin(s, pl->name);
            if (c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
                ks_status_free(ret);
                return s;
            }
            if (c == KS_UNSCHEDULABLE) {
                /* Keep going: a later plugin may reject harder. */
                ks_status_free(ret);
                ret = s;
                continue;
            }
            ks_status_free(ret);
            s = wrap_error(s, "running PreFilter plugin \"%s\"", pl->name);
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        ks_status_free(s);
        if (r) ks_plugin_mask_add(&with_nodes, pl->index);
        merged = merge(st, merged, r);
        if (merged && merged->n == 0) {
            /* No node is left: name the plugins whose sets did it. */
            ks_strbuf names;
            ks_sb_init(&names);
            size_t nn = ks_framework_mask_names(fw, &with_nodes, &names);
            ks_strbuf b;
            ks_sb_init(&b);
            if (nn == 1) ks_sb_printf(&b, "node(s) didn't satisfy plugin %s", ks_sb_str(&names));
            else ks_sb_printf(&b, "node(s) didn't satisfy plugin(s) [%s] simultaneously", ks_sb_str(&names));
            ks_sb_free(&names);
            ks_status_free(ret);
            ks_status *e = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", ks_sb_str(&b));
            ks_sb_free(&b);
            *result = merged;
            if (rejectors) *rejectors = with_nodes;
            return e;
        }
    }
    *result = merged;
    if (rejectors) *rejectors = with_nodes;
    return ret;
}

static ks_status *run_pre_filter_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                    ks_pre_filter_result **result, ks_plugin_mask *rejectors) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_pre_filter(fw, st, pod, result, rejectors);
    ks_fwm_point(fw, KS_MEP_PRE_FILTER, ks_status_code(s), t0);
    /* Filter runs per node, often hundreds of times a cycle: list the
     * plugins it runs once instead of testing every skip bit per node. */
    const ks_ep_list *l = &fw->ep[KS_EP_FILTER];
    const ks_plugin_inst **v = ks_cycle_state_alloc(st, (l->n ? l->n : 1) * sizeof(*v));
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->n; i++)
        if (!ks_bit_get(st->skip_filter, l->v[i]->index)) v[n++] = l->v[i];
    st->filters = v;
    st->nfilters = n;
    st->filters_for = fw;
    st->plain_filters = !fw->checksums && !st->record_plugin_metrics;
    return s;
}

static ks_status *run_extension(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const ks_pod *other, const ks_node_info *ni, bool add) {
    bool timed = st->record_plugin_metrics && ks_fwm_node_sampled();
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (ks_bit_get(st->skip_filter, pl->index)) continue;
        ks_status *(*fn)(void *, ks_cycle_state *, const ks_pod *, const ks_pod *,
                         const ks_node_info *) = add ? pl->ops->add_pod : pl->ops->remove_pod;
        if (!fn) continue;
        uint64_t before = sum1(fw, ni);
        int64_t t = timed ? ks_fwm_now() : 0;
        ks_status *s = fn(pl->self, st, pod, other, ni);
        ks_fwm_done(fw, t, pl->index, add ? KS_MEP_PRE_FILTER_ADD_POD : KS_MEP_PRE_FILTER_REMOVE_POD, s);
        check1(fw, pl, add ? "PreFilter AddPod" : "PreFilter RemovePod", ni, before);
        if (!ks_status_is_success(s))
            return wrap_error(s, "running %s on PreFilter plugin \"%s\"", add ? "AddPod" : "RemovePod",
                              pl->name);
        ks_status_free(s);
    }
    return NULL;
}

static ks_status *run_pre_filter_add_pod_in(ks_framework *fw, ks_cycle_state *st,
                                            const ks_pod *pod, const ks_pod *to_add,
                                            const ks_node_info *ni) {
    return run_extension(fw, st, pod, to_add, ni, true);
}

static ks_status *run_pre_filter_remove_pod_in(ks_framework *fw, ks_cycle_state *st,
                                               const ks_pod *pod, const ks_pod *to_remove,
                                               const ks_node_info *ni) {
    return run_extension(fw, st, pod, to_remove, ni, false);
}

/* ---- Filter ---------------------------------------------------------------- */

/* What a Filter returned (non-NULL): NULL for a Success status, else the
 * status ready for the diagnosis. */
static ks_status *filter_verdict(const ks_plugin_inst *pl, ks_status *s) {
    if (ks_status_is_success(s)) {
        ks_status_free(s);
        return NULL;
    }
    if (!ks_code_is_rejected(s->code)) s = wrap_error(s, "running \"%s\" filter plugin", pl->name);
    ks_status_set_plugin(s, pl->name);
    return s;
}

static ks_status *run_one_filter(ks_framework *fw, const ks_plugin_inst *pl, ks_cycle_state *st,
                                 const ks_pod *pod, const ks_node_info *ni, bool timed) {
    uint64_t before = sum1(fw, ni);
    int64_t t = timed ? ks_fwm_now() : 0;
    ks_status *s = pl->ops->filter(pl->self, st, pod, ni);
    ks_fwm_done(fw, t, pl->index, KS_MEP_FILTER, s);
    check1(fw, pl, "Filter", ni, before);
    return s ? filter_verdict(pl, s) : NULL;
}

/* the per-node hot path: a plain call per plugin */
static inline ks_status *run_filters_plain(ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    for (uint32_t i = 0; i < st->nfilters; i++) {
        const ks_plugin_inst *pl = st->filters[i];
        ks_status *s = pl->ops->filter(pl->self, st, pod, ni);
        if (s && (s = filter_verdict(pl, s))) return s;
    }
    return NULL;
}

static ks_status *run_filter_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const ks_node_info *ni) {
    if (st->plain_filters && st->filters_for == fw) return run_filters_plain(st, pod, ni);
    /* A sampled cycle times the plugins of one node in KS_FWM_NODE_SAMPLE. */
    bool timed = st->record_plugin_metrics && ks_fwm_node_sampled();
    if (st->filters_for == fw && !timed && !fw->checksums) return run_filters_plain(st, pod, ni);
    if (st->filters_for == fw) {
        for (uint32_t i = 0; i < st->nfilters; i++) {
            ks_status *s = run_one_filter(fw, st->filters[i], st, pod, ni, timed);
            if (s) return s;
        }
        return NULL;
    }
    const ks_ep_list *l = &fw->ep[KS_EP_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (ks_bit_get(st->skip_filter, pl->index)) continue;
        ks_status *s = run_one_filter(fw, pl, st, pod, ni, timed);
        if (s) return s;
    }
    return NULL;
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

static ks_status *run_filter_plugin_in(ks_framework *fw, ks_cycle_state *st,
                                       const ks_pod *pod, const ks_node_info *ni,
                                       size_t plugin_index) {
    if (plugin_index >= fw->nplugins) return NULL;
    const ks_plugin_inst *pl = &fw->plugins[plugin_index];
    if (!pl->ops->filter || ks_bit_get(st->skip_filter, pl->index)) return NULL;
    return run_one_filter(fw, pl, st, pod, ni, false);
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
        ks_status *s = run_pre_filter_add_pod_in(fw, sto, pod, p, nio);
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

/* Per node, in the hot path: inlined into its bracket. */
static inline __attribute__((always_inline)) ks_status *
run_filter_with_nominated_pods_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                  const ks_node_info *ni) {
    /* Pass 1 with the nominated pods (they will take their place on the
     * node once their victims are gone); pass 2 without them, because the
     * nominated pods may not end up there and some filters (pod
     * anti-affinity) can only pass when they are absent. */
    ks_cycle_state *st2 = NULL;
    ks_node_info *ni2 = NULL;
    ks_status *err = NULL;
    bool added = add_nominated(fw, pod, st, ni, &st2, &ni2, &err);
    if (err) return err;
    ks_status *s = run_filter_in(fw, added ? st2 : st, pod, added ? ni2 : ni);
    if (added) {
        ks_node_info_free(ni2);
        ks_cycle_state_free(st2);
        if (ks_status_is_success(s)) s = run_filter_in(fw, st, pod, ni);
    }
    return s;
}

/* ---- PostFilter ------------------------------------------------------------ */

static ks_status *run_post_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                  const ks_node_status_map *statuses, char **nominated_node) {
    *nominated_node = NULL;
    char *result = NULL;
    ks_status *out = ks_status_new(KS_UNSCHEDULABLE, NULL);
    const char *rejector = NULL;
    const ks_ep_list *l = &fw->ep[KS_EP_POST_FILTER];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        ks_post_filter_result r = {0};
        /* PostFilter gets no NodeInfo but can reach the snapshot through
         * the handle (preemption does): check all of it. */
        size_t nn;
        const ks_node_info *const *all = snapshot_nodes(fw, &nn);
        uint64_t *before = sums(fw, st, all, nn);
        int64_t t = ks_fwm_start(st);
        ks_status *s = pl->ops->post_filter(pl->self, st, pod, statuses, &r);
        ks_fwm_done(fw, t, pl->index, KS_MEP_POST_FILTER, s);
        check_all(fw, pl, "PostFilter", all, nn, before);
        ks_code c = ks_status_code(s);
        if (c == KS_SUCCESS) {
            ks_status_free(s);
            ks_status_free(out);
            free(result);
            *nominated_node = r.nominated_node ? ks_xstrdup(r.nominated_node) : NULL;
            return NULL;
        }
        if (c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            ks_status_free(out);
            free(result);
            *nominated_node = r.nominated_node ? ks_xstrdup(r.nominated_node) : NULL;
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

static ks_status *run_post_filter_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                     const ks_node_status_map *statuses, char **nominated_node) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_post_filter(fw, st, pod, statuses, nominated_node);
    ks_fwm_point(fw, KS_MEP_POST_FILTER, ks_status_code(s), t0);
    return s;
}

/* ---- PreScore / Score ------------------------------------------------------ */

static ks_status *run_pre_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const ks_node_info *const *nodes, size_t nnodes) {
    memset(st->skip_score, 0, sizeof(st->skip_score));
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_SCORE];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        uint64_t *before = sums(fw, st, nodes, nnodes);
        int64_t t = ks_fwm_start(st);
        ks_status *s = pl->ops->pre_score(pl->self, st, pod, nodes, nnodes);
        ks_fwm_done(fw, t, pl->index, KS_MEP_PRE_SCORE, s);
        check_all(fw, pl, "PreScore", nodes, nnodes, before);
        ks_code c = ks_status_code(s);
        if (c == KS_SKIP) {
            ks_bit_set(st->skip_score, pl->index);
            ks_status_free(s);
            continue;
        }
        ks_fwm_evals(fw, pl->index, KS_MEP_PRE_SCORE, 1);
        if (c != KS_SUCCESS) return wrap_error(s, "running PreScore plugin \"%s\"", pl->name);
        ks_status_free(s);
    }
    return NULL;
}

static ks_status *run_pre_score_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *const *nodes, size_t nnodes) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_pre_score(fw, st, pod, nodes, nnodes);
    ks_fwm_point(fw, KS_MEP_PRE_SCORE, ks_status_code(s), t0);
    return s;
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

/* score_node's loop with each plugin timed (one node in
 * KS_FWM_NODE_SAMPLE of a sampled cycle): kept apart so that the plain
 * loop has nothing more to do. */
static void score_node_timed(size_t i, score_job *j) {
    const ks_node_info *ni = j->nodes[i];
    bool checks = j->fw->checksums;
    int64_t *raw = j->raw + i * j->np;
    for (size_t p = 0; p < j->np; p++) {
        const ks_plugin_inst *pl = j->plugins[p];
        int64_t v = 0;
        uint64_t before = checks ? sum1(j->fw, ni) : 0;
        int64_t t = ks_fwm_now();
        ks_status *s = pl->ops->score(pl->self, j->st, j->pod, ni, &v);
        ks_fwm_done(j->fw, t, pl->index, KS_MEP_SCORE, s);
        if (checks) check1(j->fw, pl, "Score", ni, before);
        if (s) {
            if (!ks_status_is_success(s)) {
                j->errs[i] = wrap_error(s, "plugin \"%s\" failed with", pl->name);
                atomic_store(&j->stop, true);
                return;
            }
            ks_status_free(s);
        }
        raw[p] = v;
    }
}

static inline __attribute__((always_inline)) void score_node_in(size_t i, score_job *j) {
    const ks_node_info *ni = j->nodes[i];
    if (i + 3 < j->nnodes) {
        const ks_node_info *nx = j->nodes[i + 3];
        __builtin_prefetch(&nx->nonzero_requested);
        __builtin_prefetch(&nx->allocatable);
        __builtin_prefetch(&nx->requested);
    }
    if (j->sampled && ks_fwm_node_sampled()) {
        score_node_timed(i, j);
        return;
    }
    bool checks = j->fw->checksums;
    int64_t *raw = j->raw + i * j->np;
    for (size_t p = 0; p < j->np; p++) {
        const ks_plugin_inst *pl = j->plugins[p];
        int64_t v = 0;
        uint64_t before = checks ? sum1(j->fw, ni) : 0;
        ks_status *s = pl->ops->score(pl->self, j->st, j->pod, ni, &v);
        if (checks) check1(j->fw, pl, "Score", ni, before);
        if (s) {
            if (!ks_status_is_success(s)) {
                j->errs[i] = wrap_error(s, "plugin \"%s\" failed with", pl->name);
                atomic_store(&j->stop, true);
                return;
            }
            ks_status_free(s);
        }
        raw[p] = v;
    }
}

/* On a worker of the pool: an extension point of its own. */
static void score_node(size_t i, void *arg) {
    size_t held = ks_holds_mark();
    score_node_in(i, arg);
    ks_holds_release_to(held);
}

static void clear_scores(ks_score_result *out, size_t cells) {
    memset(out->raw, 0, cells * sizeof(int64_t));
    memset(out->normalized, 0, cells * sizeof(int64_t));
    memset(out->weighted, 0, cells * sizeof(int64_t));
    memset(out->total, 0, (out->nnodes ? out->nnodes : 1) * sizeof(int64_t));
}

static ks_status *run_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
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
    j.errs = ks_cycle_state_alloc(st, nnodes * sizeof(ks_status *));
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
        int64_t t = ks_fwm_start(st);
        ks_status *s = pl->ops->normalize_score(pl->self, st, pod, buf, nnodes);
        ks_fwm_done(fw, t, pl->index, KS_MEP_NORMALIZE_SCORE, s);
        if (!ks_status_is_success(s)) {
            clear_scores(out, cells);
            s = wrap_error(s, "plugin \"%s\" failed with", pl->name);
            return wrap_error(s, "running Normalize on Score plugins");
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

static ks_status *run_score_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                               const ks_node_info *const *nodes, size_t nnodes,
                               ks_score_result *out) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_score(fw, st, pod, nodes, nnodes, out);
    ks_fwm_point(fw, KS_MEP_SCORE, ks_status_code(s), t0);
    return s;
}

/* ---- Reserve / Permit --------------------------------------------------- */

static ks_status *run_reserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_RESERVE];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (!pl->ops->reserve) continue;
        int64_t t = ks_fwm_start(st);
        ks_status *s = pl->ops->reserve(pl->self, st, pod, node);
        ks_fwm_done(fw, t, pl->index, KS_MEP_RESERVE, s);
        if (ks_status_is_success(s)) {
            ks_status_free(s);
            continue;
        }
        if (ks_code_is_rejected(s->code)) {
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        return wrap_error(s, "running Reserve plugin \"%s\"", pl->name);
    }
    return NULL;
}

static ks_status *run_reserve_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                 const char *node) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_reserve(fw, st, pod, node);
    ks_fwm_point(fw, KS_MEP_RESERVE, ks_status_code(s), t0);
    return s;
}

static void run_unreserve_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                             const char *node) {
    int64_t t0 = ks_fwm_now();
    const ks_ep_list *l = &fw->ep[KS_EP_RESERVE];
    for (uint32_t i = l->n; i-- > 0;) {
        const ks_plugin_inst *pl = l->v[i];
        if (!pl->ops->unreserve) continue;
        int64_t t = ks_fwm_start(st);
        pl->ops->unreserve(pl->self, st, pod, node);
        ks_fwm_done(fw, t, pl->index, KS_MEP_UNRESERVE, NULL);
    }
    ks_fwm_point(fw, KS_MEP_UNRESERVE, KS_SUCCESS, t0);
}

static ks_status *run_permit(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_PERMIT];
    ks_waiting_plugin waits[KS_MAX_PLUGINS];
    uint32_t nwaits = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        int64_t timeout_ms = 0;
        int64_t t0 = ks_fwm_start(st);
        ks_status *s = pl->ops->permit(pl->self, st, pod, node, &timeout_ms);
        ks_fwm_done(fw, t0, pl->index, KS_MEP_PERMIT, s);
        ks_code c = ks_status_code(s);
        if (c == KS_SUCCESS) {
            ks_status_free(s);
            continue;
        }
        if (ks_code_is_rejected(c)) {
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        if (c == KS_WAIT) {
            int64_t t = timeout_ms * KS_NS_PER_MS;
            if (timeout_ms > KS_MAX_PERMIT_TIMEOUT_NS / KS_NS_PER_MS || t > KS_MAX_PERMIT_TIMEOUT_NS)
                t = KS_MAX_PERMIT_TIMEOUT_NS;
            if (t < 0) t = 0;
            waits[nwaits++] = (ks_waiting_plugin){.plugin = pl->name, .timeout_ns = t};
            ks_status_free(s);
            continue;
        }
        s = wrap_error(s, "running Permit plugin \"%s\"", pl->name);
        ks_status_set_plugin(s, pl->name);
        return s;
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

static ks_status *run_permit_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_permit(fw, st, pod, node);
    ks_fwm_point(fw, KS_MEP_PERMIT, ks_status_code(s), t0);
    return s;
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

static ks_status *run_pre_bind_pre_flight(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                          const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_BIND];
    bool any = false;
    uint64_t skip[KS_PLUGIN_MASK_WORDS] = {0};
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        /* A PreBind plugin without a pre-flight always has work to do. */
        int64_t t = pl->ops->pre_bind_pre_flight ? ks_fwm_start(st) : 0;
        ks_status *s = pl->ops->pre_bind_pre_flight
                           ? pl->ops->pre_bind_pre_flight(pl->self, st, pod, node)
                           : NULL;
        ks_fwm_done(fw, t, pl->index, KS_MEP_PRE_BIND_PRE_FLIGHT, s);
        ks_code c = ks_status_code(s);
        if (c == KS_ERROR) return wrap_error(s, "running PreBindPreFlight \"%s\"", pl->name);
        if (c == KS_SUCCESS) {
            any = true;
        } else if (c == KS_SKIP) {
            ks_bit_set(skip, pl->index);
        } else {
            ks_status_free(s);
            return ks_status_new(KS_ERROR,
                                 "PreBindPreFlight %s returned \"%s\", which is unsupported. It is "
                                 "supposed to return Success, Skip, or Error status",
                                 pl->name, ks_code_name(c));
        }
        ks_status_free(s);
    }
    memcpy(st->skip_pre_bind, skip, sizeof(skip));
    return any ? NULL : ks_status_new(KS_SKIP, NULL);
}

static ks_status *run_pre_bind_pre_flight_in(ks_framework *fw, ks_cycle_state *st,
                                             const ks_pod *pod, const char *node) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_pre_bind_pre_flight(fw, st, pod, node);
    ks_fwm_point(fw, KS_MEP_PRE_BIND_PRE_FLIGHT, ks_status_code(s), t0);
    return s;
}

static ks_status *run_pre_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_BIND];
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        if (!pl->ops->pre_bind || ks_bit_get(st->skip_pre_bind, pl->index)) continue;
        int64_t t = ks_fwm_start(st);
        ks_status *s = pl->ops->pre_bind(pl->self, st, pod, node);
        ks_fwm_done(fw, t, pl->index, KS_MEP_PRE_BIND, s);
        if (ks_status_is_success(s)) {
            ks_status_free(s);
            continue;
        }
        if (ks_code_is_rejected(s->code)) {
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        return wrap_error(s, "running PreBind plugin \"%s\"", pl->name);
    }
    return NULL;
}

static ks_status *run_pre_bind_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                  const char *node) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_pre_bind(fw, st, pod, node);
    ks_fwm_point(fw, KS_MEP_PRE_BIND, ks_status_code(s), t0);
    return s;
}

static ks_status *run_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    const ks_ep_list *l = &fw->ep[KS_EP_BIND];
    if (l->n == 0) return ks_status_new(KS_SKIP, NULL);
    ks_status *s = NULL;
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_plugin_inst *pl = l->v[i];
        ks_status_free(s);
        int64_t t = ks_fwm_start(st);
        s = pl->ops->bind(pl->self, st, pod, node);
        ks_fwm_done(fw, t, pl->index, KS_MEP_BIND, s);
        ks_code c = ks_status_code(s);
        if (c == KS_SKIP) continue;
        if (c == KS_SUCCESS) {
            ks_status_free(s);
            return NULL;
        }
        if (ks_code_is_rejected(c)) {
            ks_status_set_plugin(s, pl->name);
            return s;
        }
        return wrap_error(s, "running Bind plugin \"%s\"", pl->name);
    }
    return s; /* every plugin skipped */
}

static ks_status *run_bind_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                              const char *node) {
    int64_t t0 = ks_fwm_now();
    ks_status *s = run_bind(fw, st, pod, node);
    ks_fwm_point(fw, KS_MEP_BIND, ks_status_code(s), t0);
    return s;
}

static void run_post_bind_in(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                             const char *node) {
    int64_t t0 = ks_fwm_now();
    const ks_ep_list *l = &fw->ep[KS_EP_POST_BIND];
    for (uint32_t i = 0; i < l->n; i++) {
        int64_t t = ks_fwm_start(st);
        l->v[i]->ops->post_bind(l->v[i]->self, st, pod, node);
        ks_fwm_done(fw, t, l->v[i]->index, KS_MEP_POST_BIND, NULL);
    }
    ks_fwm_point(fw, KS_MEP_POST_BIND, KS_SUCCESS, t0);
}

/* ---- queue-side points ------------------------------------------------- */

static bool less_in(const ks_framework *fw, const ks_queued_pod *a, const ks_queued_pod *b) {
    const ks_plugin_inst *pl = fw->ep[KS_EP_QUEUE_SORT].v[0];
    return pl->ops->less(pl->self, a, b);
}

static ks_status *run_pre_enqueue_one(const ks_plugin_inst *pl, const ks_pod *pod) {
    ks_status *s = pl->ops->pre_enqueue(pl->self, pod);
    if (ks_status_is_success(s)) {
        ks_status_free(s);
        return NULL;
    }
    ks_status_set_plugin(s, pl->name);
    return s;
}

static ks_status *run_pre_enqueue_in(ks_framework *fw, const ks_pod *pod, int first,
                                     int *gating_plugin) {
    *gating_plugin = -1;
    /* The plugin that gated the pod last time goes first: it is the most
     * likely to gate it again. */
    if (first >= 0 && (uint32_t)first < fw->nplugins && fw->plugins[first].ops->pre_enqueue) {
        ks_status *s = run_pre_enqueue_one(&fw->plugins[first], pod);
        if (s) {
            *gating_plugin = first;
            return s;
        }
    }
    const ks_ep_list *l = &fw->ep[KS_EP_PRE_ENQUEUE];
    for (uint32_t i = 0; i < l->n; i++) {
        if ((int)l->v[i]->index == first) continue;
        ks_status *s = run_pre_enqueue_one(l->v[i], pod);
        if (s) {
            *gating_plugin = (int)l->v[i]->index;
            return s;
        }
    }
    return NULL;
}

/* ---- the extension points as the framework's callers see them ----------
 *
 * Each marks the thread's holds (framework/holds.h): what the handle lent
 * a plugin during it is released when it returns. */

ks_status *ks_framework_run_pre_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                       ks_pre_filter_result **result, ks_plugin_mask *rejectors) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_filter_in(fw, st, pod, result, rejectors);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_pre_filter_add_pod(ks_framework *fw, ks_cycle_state *st,
                                               const ks_pod *pod, const ks_pod *to_add,
                                               const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_filter_add_pod_in(fw, st, pod, to_add, ni);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_pre_filter_remove_pod(ks_framework *fw, ks_cycle_state *st,
                                                  const ks_pod *pod, const ks_pod *to_remove,
                                                  const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_filter_remove_pod_in(fw, st, pod, to_remove, ni);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *r = run_filter_in(fw, st, pod, ni);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_filter_plugin(ks_framework *fw, ks_cycle_state *st,
                                          const ks_pod *pod, const ks_node_info *ni,
                                          size_t plugin_index) {
    size_t held = ks_holds_mark();
    ks_status *r = run_filter_plugin_in(fw, st, pod, ni, plugin_index);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_filter_with_nominated_pods(ks_framework *fw, ks_cycle_state *st,
                                                       const ks_pod *pod,
                                                       const ks_node_info *ni) {
    size_t held = ks_holds_mark();
    ks_status *r = run_filter_with_nominated_pods_in(fw, st, pod, ni);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_post_filter(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                        const ks_node_status_map *statuses, char **nominated_node) {
    size_t held = ks_holds_mark();
    ks_status *r = run_post_filter_in(fw, st, pod, statuses, nominated_node);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_pre_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                      const ks_node_info *const *nodes, size_t nnodes) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_score_in(fw, st, pod, nodes, nnodes);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_score(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                  const ks_node_info *const *nodes, size_t nnodes,
                                  ks_score_result *out) {
    size_t held = ks_holds_mark();
    ks_status *r = run_score_in(fw, st, pod, nodes, nnodes, out);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_reserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                    const char *node) {
    size_t held = ks_holds_mark();
    ks_status *r = run_reserve_in(fw, st, pod, node);
    ks_holds_release_to(held);
    return r;
}

void ks_framework_run_unreserve(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node) {
    size_t held = ks_holds_mark();
    run_unreserve_in(fw, st, pod, node);
    ks_holds_release_to(held);
}

ks_status *ks_framework_run_permit(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                   const char *node) {
    size_t held = ks_holds_mark();
    ks_status *r = run_permit_in(fw, st, pod, node);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_pre_bind_pre_flight(ks_framework *fw, ks_cycle_state *st,
                                                const ks_pod *pod, const char *node) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_bind_pre_flight_in(fw, st, pod, node);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_pre_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                     const char *node) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_bind_in(fw, st, pod, node);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                 const char *node) {
    size_t held = ks_holds_mark();
    ks_status *r = run_bind_in(fw, st, pod, node);
    ks_holds_release_to(held);
    return r;
}

void ks_framework_run_post_bind(ks_framework *fw, ks_cycle_state *st, const ks_pod *pod,
                                const char *node) {
    size_t held = ks_holds_mark();
    run_post_bind_in(fw, st, pod, node);
    ks_holds_release_to(held);
}

bool ks_framework_less(const ks_framework *fw, const ks_queued_pod *a, const ks_queued_pod *b) {
    size_t held = ks_holds_mark();
    bool r = less_in(fw, a, b);
    ks_holds_release_to(held);
    return r;
}

ks_status *ks_framework_run_pre_enqueue(ks_framework *fw, const ks_pod *pod, int first,
                                        int *gating_plugin) {
    size_t held = ks_holds_mark();
    ks_status *r = run_pre_enqueue_in(fw, pod, first, gating_plugin);
    ks_holds_release_to(held);
    return r;
}
