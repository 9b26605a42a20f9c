/* One scheduling attempt (upstream schedule_one.go): the scheduling cycle
 * (snapshot, PreFilter, Filter with the nominated pods, PostFilter on
 * failure, PreScore, Score, host selection, assume, Reserve, Permit), the
 * binding cycle (WaitOnPermit, PreBind, Bind, PostBind) and the failure
 * handling shared by both. */
#include "api/pod.h"
#include "framework/cycle_state.h"
#include "framework/fw_metrics.h"
#include "framework/status.h"
#include "scheduler/extender.h"
#include "scheduler/executor.h"
#include "scheduler/scheduler_internal.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MIN_FEASIBLE_NODES_TO_FIND 100
#define MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND 5

uint32_t ks_num_feasible_nodes_to_find(int32_t percentage, uint32_t n) {
    if (n < MIN_FEASIBLE_NODES_TO_FIND) return n;
    int64_t pct = percentage;
    if (pct == 0) {
        /* Adaptive: 50% of a 100-node cluster down to 5% from 5625 nodes. */
        pct = 50 - (int64_t)n / 125;
        if (pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND) pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
    }
    int64_t num = (int64_t)n * pct / 100;
    if (num < MIN_FEASIBLE_NODES_TO_FIND) return MIN_FEASIBLE_NODES_TO_FIND;
    return (uint32_t)num;
}

/* ---- what a failed attempt carries to the failure handler --------------- */

typedef struct attempt {
    ks_scheduler *s;
    ks_framework *fw;
    ks_cycle_state *st;
    ks_queued_pod *qp;
    const ks_pod *pod;
    int64_t start_ns;           /* monotonic, for the metrics */
    ks_status *status;          /* failure (NULL on success) */
    bool no_nodes;
    ks_fit_error *fit;          /* when the failure is a FitError */
    /* The diagnosis of an attempt that did not end in a FitError: it owns
     * the Filter verdicts the observer record points to, so it lives until
     * the observer has seen them. */
    ks_fit_error *kept;
    ks_nominating_info ni;
    /* success */
    ks_id host;
    ks_pod *assumed;
    bool waiting;
    /* observer record pieces */
    ks_attempt_record rec;
    ks_status *pre_filter_status;
    ks_status *post_filter_status;
    char *nominated;
    char *excluded_reason;      /* why nodes outside a PreFilterResult were left out */
    ks_status *nominated_verdict;  /* rec.nominated_verdict's copy */
    ks_score_result scores;
    bool has_scores;
} attempt;

static ks_nominating_info failure_nominating_info(void) {
    /* NominatedNodeNameForExpectation is off in v1.34: a failure clears
     * the nomination. */
    return (ks_nominating_info){.mode = KS_NOMINATE_OVERRIDE, .node = 0};
}

static ks_fit_error *new_fit_error(size_t num_all_nodes) {
    ks_fit_error *fe = ks_xcalloc(1, sizeof(*fe));
    fe->num_all_nodes = num_all_nodes;
    ks_diagnosis_init(&fe->diagnosis);
    return fe;
}

static void free_fit_error(ks_fit_error *fe) {
    if (!fe) return;
    ks_diagnosis_free(&fe->diagnosis);
    free(fe);
}

/* A status carrying the FitError message, as upstream's
 * NewStatus(code).WithError(fitErr). */
static ks_status *fit_status(ks_code code, const ks_fit_error *fe) {
    char *msg = ks_fit_error_message(fe);
    ks_status *s = ks_status_new(code, "%s", msg);
    free(msg);
    return s;
}

/* A FitError for a pod rejected on its one chosen node (Reserve, Permit). */
static ks_fit_error *single_node_fit_error(const ks_framework *fw, ks_id node, const ks_status *s) {
    ks_fit_error *fe = new_fit_error(1);
    ks_node_status_map_put(&fe->diagnosis.statuses, node, ks_status_clone(s));
    ks_diagnosis_add_plugin_status(&fe->diagnosis, fw, s);
    return fe;
}

/* ---- extenders ------------------------------------------------------------ */

static bool has_extender_filters(const ks_scheduler *s) {
    for (size_t i = 0; i < s->nexts; i++) {
        const char *v = ks_extender_config_of(s->exts[i])->filter_verb;
        if (v && *v) return true;
    }
    return false;
}

static bool has_extender_prioritizers(const ks_scheduler *s) {
    for (size_t i = 0; i < s->nexts; i++) {
        const char *v = ks_extender_config_of(s->exts[i])->prioritize_verb;
        if (v && *v) return true;
    }
    return false;
}

/* upstream findNodesThatPassExtenders: the interested extenders filter in
 * turn, each what the previous left; the nodes they reject get their
 * reason in the diagnosis. */
static ks_status *pass_extenders(attempt *a, ks_diagnosis *diag, const ks_node_info **feasible, size_t *nf) {
    ks_scheduler *s = a->s;
    size_t n = *nf;
    for (size_t i = 0; i < s->nexts && n; i++) {
        ks_extender *e = s->exts[i];
        const ks_extender_config *c = ks_extender_config_of(e);
        if (!ks_extender_interested(c, a->pod)) continue;
        ks_extender_filter_result r;
        ks_status *st = ks_extender_filter(e, a->pod, feasible, n, &r);
        if (st) {
            if (!c->ignorable) return st;
            char *m = ks_status_message(st);
            ks_infof(0, "\"Skipping extender as it returned error and has ignorable flag set\" extender=\"%s\" err=\"%s\"",
                     c->url_prefix, m);
            free(m);
            ks_status_free(st);
            continue;
        }
        for (size_t k = 0; k < r.nfailed; k++) {
            const ks_extender_failed *f = &r.failed[k];
            ks_code code = f->unresolvable ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : KS_UNSCHEDULABLE;
            ks_node_status_map_put(&diag->statuses, f->node, ks_status_new(code, "%s", f->msg));
        }
        memcpy(feasible, r.nodes, r.nnodes * sizeof(*feasible));
        n = r.nnodes;
        ks_extender_filter_result_free(&r);
    }
    if (n != *nf) diag->extender_rejected = true;
    *nf = n;
    return NULL;
}

/* upstream prioritizeNodes' extender part: each interested extender's
 * score (0..10) x its weight x MaxNodeScore/MaxExtenderPriority is added
 * to the node's total. An extender that fails gives no scores. */
static void add_extender_scores(attempt *a, const ks_node_info **nodes, size_t n, int64_t *total) {
    ks_scheduler *s = a->s;
    for (size_t i = 0; i < s->nexts; i++) {
        ks_extender *e = s->exts[i];
        const ks_extender_config *c = ks_extender_config_of(e);
        if (!ks_extender_interested(c, a->pod)) continue;
        ks_id *hosts;
        int64_t *scores;
        size_t m;
        ks_status *st = ks_extender_prioritize(e, a->pod, (const ks_node_info *const *)nodes, n, &hosts, &scores, &m);
        if (st) {
            char *msg = ks_status_message(st);
            ks_infof(5, "\"Failed to run extender's priority function. No score given by this extender.\" error=\"%s\" "
                        "pod=\"%s/%s\" extender=\"%s\"",
                     msg, ks_str(a->pod->ns), ks_str(a->pod->name), c->url_prefix);
            free(msg);
            ks_status_free(st);
            continue;
        }
        for (size_t k = 0; k < m; k++) {
            /* Extenders usually answer in the order asked. */
            size_t at = k < n && nodes[k]->name == hosts[k] ? k : n;
            for (size_t j = 0; at == n && j < n; j++)
                if (nodes[j]->name == hosts[k]) at = j;
            if (at < n) total[at] += scores[k] * c->weight * (KS_MAX_NODE_SCORE / KS_MAX_EXTENDER_PRIORITY);
        }
        free(hosts);
        free(scores);
    }
}

/* upstream extendersBinding: the first interested binder binds instead of
 * the Bind plugins; an ignorable one that fails is passed over. */
static ks_status *extenders_binding(ks_scheduler *s, const ks_pod *pod, const char *node, bool *bound) {
    *bound = false;
    for (size_t i = 0; i < s->nexts; i++) {
        const ks_extender_config *c = ks_extender_config_of(s->exts[i]);
        if (!c->bind_verb || !*c->bind_verb || !ks_extender_interested(c, pod)) continue;
        ks_status *st = ks_extender_bind(s->exts[i], pod, node);
        if (st && c->ignorable) {
            char *m = ks_status_message(st);
            ks_infof(0, "\"Skipping extender in bind as it returned error and has ignorable flag set\" extender=\"%s\" err=\"%s\"",
                     c->url_prefix, m);
            free(m);
            ks_status_free(st);
            continue;
        }
        *bound = true;
        /* A cluster learns of the binding from its API server; the
         * simulator's observer records it in the in-memory one. */
        if (!st && s->obs && s->obs->extender_bound) st = s->obs->extender_bound(s->obs->ctx, pod, node);
        return st;
    }
    return NULL;
}

/* ---- Filter across nodes ------------------------------------------------ */

typedef struct filter_job {
    ks_framework *fw;
    ks_cycle_state *st;
    const ks_pod *pod;
    const ks_node_info *const *nodes;
    size_t n;
    uint32_t start;
    ks_status **verdicts;  /* per evaluation index */
    atomic_size_t feasible;
    size_t want;
    atomic_bool stop;
} filter_job;

/* The filters read each node's NodeInfo, its ks_node and the node's
 * labels. The search rotates through the whole cluster, so at 5000 nodes
 * these are cache misses one after the other: fetch them ahead, each level
 * once the pointer to it has had time to arrive. */
/* Node at evaluation index i (start + i wrapped without a division:
 * start < n, and i + 8 < 2n but for the smallest clusters). */
static inline const ks_node_info *nth(const filter_job *j, size_t i) {
    size_t k = j->start + i;
    while (k >= j->n) k -= j->n;
    return j->nodes[k];
}

static void prefetch_ahead(const filter_job *j, size_t i) {
    const ks_node_info *a = nth(j, i + 8);
    __builtin_prefetch(a);
    __builtin_prefetch(&a->requested);
    __builtin_prefetch(&a->allocatable);
    const ks_node_info *b = nth(j, i + 4);
    if (b->node) {
        __builtin_prefetch(b->node);
        __builtin_prefetch((const char *)b->node + 64);
    }
    const ks_node_info *c = nth(j, i + 2);
    if (c->node) __builtin_prefetch(c->node->labels.kv);
}

static void filter_node(size_t i, void *arg) {
    filter_job *j = arg;
    const ks_node_info *ni = nth(j, i);
    prefetch_ahead(j, i);
    ks_status *s = ks_framework_run_filter_with_nominated_pods(j->fw, j->st, j->pod, ni);
    j->verdicts[i] = s;
    if (s && s->code == KS_ERROR) {
        atomic_store(&j->stop, true);
    } else if (!s) {
        if (atomic_fetch_add(&j->feasible, 1) + 1 >= j->want) atomic_store(&j->stop, true);
    }
}

/* upstream findNodesThatPassFilters, evaluated as if sequentially: nodes
 * are tried from the rotating start index until `want` fit. The worker
 * pool finishes every chunk it starts, so the evaluated nodes are always a
 * prefix of that order and the answer does not depend on thread timing. */
static ks_status *pass_filters(attempt *a, ks_diagnosis *diag, const ks_node_info *const *nodes, size_t n,
                               const ks_node_info ***feasible_out, size_t *nfeasible) {
    ks_scheduler *s = a->s;
    ks_framework *fw = a->fw;
    int32_t pct = s->cfg->percentage_of_nodes_to_score;
    ks_framework_percentage_of_nodes_to_score(fw, &pct);
    size_t want = ks_num_feasible_nodes_to_find(pct, (uint32_t)n);
    if (!ks_framework_has_score_plugins(fw) && !has_extender_filters(s) && !has_extender_prioritizers(s)) want = 1;
    /* the node arrays below are read up to their counts only */
    const ks_node_info **feasible = ks_cycle_state_alloc_uninit(a->st, (want ? want : 1) * sizeof(*feasible));
    *feasible_out = feasible;
    *nfeasible = 0;
    a->rec.nevaluated = 0;
    if (n == 0) return NULL;
    if (!ks_framework_has_filter_plugins(fw)) {
        for (size_t i = 0; i < want; i++) feasible[i] = nodes[(s->next_start_node_index + i) % n];
        *nfeasible = want;
        a->rec.nevaluated = want;
        a->rec.evaluated = feasible;
        a->rec.verdicts = ks_cycle_state_alloc(a->st, (want ? want : 1) * sizeof(ks_status *));
        return NULL;
    }
    filter_job j = {.fw = fw, .st = a->st, .pod = a->pod, .nodes = nodes, .n = n,
                    .start = s->next_start_node_index % (uint32_t)n, .want = want};
    /* Every node run gets its verdict written, and only the run prefix is
     * read: no need to clear an entry per node of the cluster. */
    j.verdicts = ks_xmalloc(n * sizeof(ks_status *));
    atomic_init(&j.feasible, 0);
    atomic_init(&j.stop, false);
    int64_t t0 = ks_fwm_now();
    size_t ran = ks_parallelize(ks_framework_parallelizer(fw), n, filter_node, &j, &j.stop);
    ks_framework_record_filter_evals(fw, a->st, j.verdicts, ran, atomic_load(&j.feasible));

    /* Walk the evaluation order: keep the first `want` feasible nodes and
     * stop there, like a sequential search would. */
    const ks_node_info **evaluated = ks_cycle_state_alloc_uninit(a->st, (ran ? ran : 1) * sizeof(*evaluated));
    const ks_status **verdicts = ks_cycle_state_alloc_uninit(a->st, (ran ? ran : 1) * sizeof(*verdicts));
    size_t nev = 0, nf = 0, nrejected = 0;
    ks_status *err = NULL;
    const char *last_plugin = NULL;
    ks_code last_code = KS_SUCCESS;
    size_t i = 0;
    for (; i < ran && nf < want && !err; i++) {
        const ks_node_info *ni = nth(&j, i);
        ks_status *v = j.verdicts[i];
        j.verdicts[i] = NULL;
        if (!v) {
            /* Passed. (The pool ran a prefix of the order holding `want`
             * passes or the error, or every node.) */
            feasible[nf++] = ni;
            evaluated[nev] = ni;
            verdicts[nev++] = NULL;
            continue;
        }
        evaluated[nev] = ni;
        verdicts[nev++] = v;
        if (v->code == KS_ERROR) {
            err = v; /* the attempt's status from now on */
            continue;
        }
        j.verdicts[nrejected++] = v; /* read below, at or before its own index */
        /* a run of nodes turned down alike adds the plugin once */
        if (v->plugin != last_plugin || v->code != last_code) ks_diagnosis_add_plugin_status(diag, fw, v);
        last_plugin = v->plugin;
        last_code = v->code;
    }
    /* Verdicts past the cut belong to nodes a sequential search would not
     * have reached. */
    for (; i < ran; i++) ks_status_free(j.verdicts[i]);
    /* The rejections into the diagnosis, in order, sized once. */
    ks_node_status_map_reserve(&diag->statuses, nrejected);
    for (size_t k = 0, r = 0; k < nev && r < nrejected; k++)
        if (verdicts[k] == j.verdicts[r]) ks_node_status_map_put(&diag->statuses, evaluated[k]->name, j.verdicts[r++]);
    free(j.verdicts);
    ks_fwm_point(fw, KS_MEP_FILTER, err ? KS_ERROR : KS_SUCCESS, t0);
    a->rec.nevaluated = nev;
    a->rec.evaluated = evaluated;
    a->rec.verdicts = verdicts;
    *nfeasible = nf;
    return err;
}

/* The snapshot's nodes that are in a PreFilter result, in snapshot order,
 * into sub. The result's ids are sorted: a bitmap over their range
 * answers for each node at once (a binary search per node of the cluster
 * was 3 % of an openb study's CPU), unless the range is much wider than
 * the cluster. */
static size_t pre_filter_nodes(ks_cycle_state *st, const ks_pre_filter_result *r, const ks_node_info *const *all,
                               size_t nall, const ks_node_info **sub) {
    size_t n = 0;
    if (!r->n) return 0;
    ks_id lo = r->nodes[0], span = r->nodes[r->n - 1] - lo;
    size_t words = (size_t)span / 64 + 1;
    if (words > nall + 64) {
        for (size_t i = 0; i < nall; i++)
            if (ks_pre_filter_result_has_id(r, all[i]->name)) sub[n++] = all[i];
        return n;
    }
    uint64_t *bits = ks_cycle_state_alloc(st, words * sizeof(uint64_t));
    for (uint32_t i = 0; i < r->n; i++) {
        ks_id d = r->nodes[i] - lo;
        bits[d / 64] |= 1ULL << (d % 64);
    }
    for (size_t i = 0; i < nall; i++) {
        ks_id d = all[i]->name - lo; /* wraps for ids below lo: out of range */
        if (d <= span && (bits[d / 64] >> (d % 64) & 1)) sub[n++] = all[i];
    }
    return n;
}

static ks_status *find_nodes_that_fit(attempt *a, ks_diagnosis *diag, const ks_node_info ***feasible,
                                       size_t *nfeasible) {
    ks_scheduler *s = a->s;
    ks_framework *fw = a->fw;
    const ks_snapshot *snap = s->snap;
    const ks_node_info *const *all = (const ks_node_info *const *)snap->nodes;
    size_t nall = snap->nnodes;
    *nfeasible = 0;
    *feasible = NULL;

    ks_pre_filter_result *pfr = NULL;
    ks_status *pst = ks_framework_run_pre_filter(fw, a->st, a->pod, &pfr, &diag->unschedulable_plugins);
    a->rec.pre_filter_result = pfr;
    if (pst) {
        a->pre_filter_status = ks_status_clone(pst);
        a->rec.pre_filter_status = a->pre_filter_status;
    }
    if (!ks_status_is_success(pst)) {
        if (!ks_code_is_rejected(pst->code)) return pst;
        /* Every node gets the PreFilter status (preemption reads it). */
        diag->pre_filter_msg = ks_status_message(pst);
        ks_diagnosis_add_plugin_status(diag, fw, pst);
        ks_node_status_map_set_absent(&diag->statuses, pst);
        return NULL;
    }
    ks_status_free(pst);

    /* A nominated node (set by an earlier preemption) is likely the only
     * one that fits: try it alone first. */
    if (a->pod->nominated_node) {
        const ks_node_info *ni = ks_snapshot_get(snap, a->pod->nominated_node);
        if (ni) {
            const ks_node_info *one[1] = {ni};
            ks_status *e = pass_filters(a, diag, one, 1, feasible, nfeasible);
            if (*nfeasible && !e) e = pass_extenders(a, diag, *feasible, nfeasible);
            if (*nfeasible && !e) {
                a->rec.nominated_node_fast_path = true;
                return NULL;
            }
            if (a->rec.nevaluated) {
                a->nominated_verdict = ks_status_clone(a->rec.verdicts[0]);
                a->rec.nominated_tried = ni;
                a->rec.nominated_verdict = a->nominated_verdict;
            }
            if (e) ks_status_log_free("evaluation failed on the nominated node", e);
            *nfeasible = 0;
        }
    }

    const ks_node_info *const *nodes = all;
    size_t n = nall;
    if (pfr) {
        const ks_node_info **sub = ks_cycle_state_alloc_uninit(a->st, (nall ? nall : 1) * sizeof(*sub));
        n = pre_filter_nodes(a->st, pfr, all, nall, sub);
        nodes = sub;
        /* The nodes the PreFilter set left out. */
        ks_strbuf b;
        ks_sb_init(&b);
        ks_sb_puts(&b, "node(s) didn't satisfy plugin(s) [");
        ks_framework_mask_names(fw, &diag->unschedulable_plugins, &b);
        ks_sb_putc(&b, ']');
        a->excluded_reason = ks_xstrdup(ks_sb_str(&b));
        a->rec.pre_filter_excluded_reason = a->excluded_reason;
        ks_node_status_map_set_absent(&diag->statuses,
                                      ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", ks_sb_str(&b)));
        ks_sb_free(&b);
    }
    ks_status *err = pass_filters(a, diag, nodes, n, feasible, nfeasible);
    /* Move the start on by the nodes looked at, whatever happened, so
     * that every node gets its turn across pods. */
    size_t processed = *nfeasible + diag->statuses.n;
    if (nall) s->next_start_node_index = (uint32_t)((s->next_start_node_index + processed) % nall);
    if (err) return err;
    err = pass_extenders(a, diag, *feasible, nfeasible);
    if (err) *nfeasible = 0;
    return err;
}

/* ---- scoring and host selection ------------------------------------------ */

/* Random among the top scores, from the profile's seeded generator; or,
 * with the tie rule host_by_name, the smallest node name among them. */
static const ks_node_info *select_host(ks_framework *fw, const ks_score_result *r) {
    size_t best = 0;
    if (ks_framework_tie_rules(fw).host_by_name) {
        const char *best_name = NULL; /* looked up at the first tie */
        for (size_t i = 1; i < r->nnodes; i++) {
            if (r->total[i] > r->total[best]) {
                best = i;
                best_name = NULL;
            } else if (r->total[i] == r->total[best]) {
                const char *name = ks_str(r->nodes[i]->name);
                if (!best_name) best_name = ks_str(r->nodes[best]->name);
                if (strcmp(name, best_name) < 0) {
                    best = i;
                    best_name = name;
                }
            }
        }
        return r->nodes[best];
    }
    /* Reservoir sampling among the top scores: each of the k nodes sharing
     * the top score is picked with probability 1/k. */
    size_t count = 1;
    for (size_t i = 1; i < r->nnodes; i++) {
        if (r->total[i] > r->total[best]) {
            best = i;
            count = 1;
        } else if (r->total[i] == r->total[best]) {
            count++;
            if (ks_framework_rand(fw) % count == 0) best = i;
        }
    }
    return r->nodes[best];
}

static ks_status *prioritize(attempt *a, const ks_node_info **nodes, size_t n, ks_score_result *out) {
    ks_framework *fw = a->fw;
    if (!ks_framework_has_score_plugins(fw) && a->s->nexts == 0) {
        /* Without Score plugins or extenders every node scores 1. */
        memset(out, 0, sizeof(*out));
        out->nnodes = n;
        out->nodes = nodes;
        out->total = ks_cycle_state_alloc(a->st, n * sizeof(int64_t));
        for (size_t i = 0; i < n; i++) out->total[i] = 1;
        return NULL;
    }
    ks_status *st = ks_framework_run_pre_score(fw, a->st, a->pod, nodes, n);
    if (st) return st;
    st = ks_framework_run_score(fw, a->st, a->pod, nodes, n, out);
    if (st) return st;
    if (a->s->nexts) add_extender_scores(a, nodes, n, out->total);
    return NULL;
}

/* upstream schedulePod: the host, or a FitError / error. */
static ks_status *schedule_pod(attempt *a) {
    ks_scheduler *s = a->s;
    ks_status *st = ks_cache_update_snapshot(s->cache, s->snap);
    if (st) return st;
    a->rec.snapshot = s->snap;
    if (s->snap->nnodes == 0) {
        a->no_nodes = true;
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, KS_ERR_NO_NODES_AVAILABLE);
    }
    ks_fit_error *fe = new_fit_error(s->snap->nnodes);
    const ks_node_info **feasible = NULL;
    size_t nf = 0;
    st = find_nodes_that_fit(a, &fe->diagnosis, &feasible, &nf);
    if (st) {
        a->kept = fe;
        return st;
    }
    if (nf == 0) {
        a->fit = fe;
        return fit_status(KS_UNSCHEDULABLE, fe);
    }
    a->kept = fe;
    if (nf == 1) {
        a->host = feasible[0]->name;
        return NULL;
    }
    st = prioritize(a, feasible, nf, &a->scores);
    if (st) return st;
    a->has_scores = true;
    a->rec.scores = &a->scores;
    a->host = select_host(a->fw, &a->scores)->name;
    return NULL;
}

/* ---- the scheduling cycle ------------------------------------------------ */

static ks_status *scheduling_cycle(attempt *a) {
    ks_scheduler *s = a->s;
    ks_framework *fw = a->fw;
    ks_status *st = schedule_pod(a);
    ks_fwm_algorithm(a->start_ns);
    if (st) {
        a->ni = failure_nominating_info();
        if (a->no_nodes || !a->fit) return st;
        /* No node fits: PostFilter (preemption) may make room for a later
         * attempt. Its nomination goes to the failure handler, which is the
         * only place a pod's nominatedNodeName changes on failure. */
        if (!ks_framework_has_post_filter_plugins(fw)) {
            a->ni = (ks_nominating_info){.mode = KS_NOMINATE_NOOP};
            return st;
        }
        ks_status_free(st);
        char *nominated = NULL;
        ks_status *pf = ks_framework_run_post_filter(fw, a->st, a->pod, &a->fit->diagnosis.statuses, &nominated);
        a->rec.post_filter_ran = true;
        a->post_filter_status = pf;
        a->rec.post_filter_status = pf;
        a->fit->diagnosis.post_filter_msg = ks_status_message(pf);
        if (pf && pf->code == KS_ERROR)
            ks_errorf("\"Status after running PostFilter plugins for pod\" pod=\"%s/%s\" status=\"%s\"", ks_str(a->pod->ns),
                      ks_str(a->pod->name), a->fit->diagnosis.post_filter_msg);
        if (nominated) {
            a->ni = (ks_nominating_info){.mode = KS_NOMINATE_OVERRIDE, .node = ks_intern(nominated)};
            a->nominated = nominated;
            a->rec.nominated_node = *nominated ? nominated : NULL;
        } else {
            a->ni = (ks_nominating_info){.mode = KS_NOMINATE_NOOP};
        }
        return fit_status(KS_UNSCHEDULABLE, a->fit);
    }

    /* Assume: the next cycle sees the pod on its node before the binding
     * is done. */
    const char *host = ks_str(a->host);
    /* only node_name changes: no room in its arena (one per pod in flight) */
    ks_pod *assumed = ks_pod_clone_room(a->pod, 0);
    assumed->node_name = a->host;
    st = ks_cache_assume_pod(s->cache, assumed);
    if (st) {
        ks_pod_unref(assumed);
        a->ni = failure_nominating_info();
        return st;
    }
    ks_queue_delete_nominated(s->queue, assumed);
    a->assumed = assumed;

    st = ks_framework_run_reserve(fw, a->st, assumed, host);
    if (!st) {
        st = ks_framework_run_permit(fw, a->st, assumed, host);
        if (st && st->code == KS_WAIT) {
            ks_status_free(st);
            a->waiting = true;
            a->rec.waiting_on_permit = true;
            st = NULL;
        }
    }
    if (st) {
        /* Reserve or Permit said no: undo everything this cycle did. */
        ks_framework_run_unreserve(fw, a->st, assumed, host);
        ks_status_log_free("scheduler cache ForgetPod failed", ks_cache_forget_pod(s->cache, assumed));
        a->ni = failure_nominating_info();
        if (ks_code_is_rejected(st->code)) {
            a->fit = single_node_fit_error(fw, a->host, st);
            ks_status *f = fit_status(st->code, a->fit);
            ks_status_free(st);
            st = f;
        }
        return st;
    }
    return NULL;
}

/* ---- failure handling ------------------------------------------------------ */

typedef struct failure {
    ks_framework *fw;
    int64_t start_ns;        /* the attempt's start (metrics) */
    ks_queued_pod *qp;       /* ownership passes to the handler */
    const ks_status *status;
    const ks_fit_error *fit;
    bool no_nodes;
    ks_nominating_info ni;
} failure;

/* upstream handleSchedulingFailure. The one place where a pod that failed
 * gets its nominatedNodeName changed, and it sends at most one pod status
 * write per failed attempt (condition and nomination in one patch). */
static void handle_failure(ks_scheduler *s, failure *f) {
    ks_queued_pod *qp = f->qp;
    ks_pod *pod = ks_pod_ref((ks_pod *)ks_queued_pod_pod(qp));
    uint64_t key = pod->key;
    bool rejected = ks_code_is_rejected(ks_status_code(f->status));
    const char *reason = rejected ? "Unschedulable" : "SchedulerError";
    char *msg = ks_status_message(f->status);
    char name[512];
    ks_pod_fullname(pod, name, sizeof(name));
    ks_fwm_attempt(f->fw, rejected ? KS_FWM_UNSCHEDULABLE : KS_FWM_ERROR, f->start_ns);

    if (f->no_nodes) {
        ks_infof(2, "\"Unable to schedule pod; no nodes are registered to the cluster; waiting\" pod=\"%s\"", name);
    } else if (f->fit) {
        const ks_diagnosis *d = &f->fit->diagnosis;
        ks_queued_pod_set_rejectors(qp, &d->unschedulable_plugins, &d->pending_plugins, d->extender_rejected);
        ks_infof(2, "\"Unable to schedule pod; no fit; waiting\" pod=\"%s\" err=\"%s\"", name, msg);
    } else {
        ks_errorf("\"Error scheduling pod; retrying\" pod=\"%s\" err=\"%s\"", name, msg);
    }

    /* Requeue the version the backend has now, unless it is gone or was
     * bound in the meantime. */
    ks_pod *cached = ks_sched_lookup_pod(s, key);
    ks_pod *nominate = pod;
    if (!cached) {
        ks_infof(1, "\"Pod doesn't exist in informer cache\" pod=\"%s\"", name);
        ks_queue_done(s->queue, key);
        ks_queued_pod_free(qp);
    } else if (cached->node_name) {
        ks_infof(1, "\"Pod has been assigned to node. Abort adding it back to queue.\" pod=\"%s\" node=\"%s\"", name,
                 ks_str(cached->node_name));
        ks_queue_done(s->queue, key);
        ks_queued_pod_free(qp);
    } else {
        ks_queued_pod_set_pod(qp, cached);
        nominate = cached;
        /* takes qp, calls done */
        ks_status_log_free("requeueing the pod failed", ks_queue_add_unschedulable(s->queue, qp));
    }
    /* The nominator learns the outcome now rather than when the status
     * patch comes back as an update. A failure that leaves the nomination
     * alone keeps the one the nominator holds while the patch that writes
     * it is on its way (upstream takes the pod's status then, and so
     * forgets it: the pod then preempts again elsewhere). */
    ks_nominating_info keep = f->ni;
    if (keep.mode == KS_NOMINATE_NOOP && !nominate->nominated_node) {
        ks_id held = ks_queue_nominated_node(s->queue, key);
        if (held) keep = (ks_nominating_info){.mode = KS_NOMINATE_OVERRIDE, .node = held};
    }
    ks_queue_add_nominated(s->queue, nominate, &keep);

    char *note = ks_truncate_message(msg);
    ks_api_dispatcher_event(s->disp, pod, NULL, "Warning", "FailedScheduling", "Scheduling", note);
    free(note);
    ks_status_patch patch = {.has_condition = true,
                             .cond_type = "PodScheduled",
                             .cond_status = "False",
                             .cond_reason = reason,
                             .cond_message = msg,
                             .set_nominated = f->ni.mode == KS_NOMINATE_OVERRIDE,
                             .nominated = f->ni.node ? ks_str(f->ni.node) : ""};
    ks_status_free(ks_api_dispatcher_patch_status(s->disp, pod, &patch, NULL, NULL));
    free(msg);
    if (cached) ks_pod_unref(cached);
    ks_pod_unref(pod);
}

/* ---- the binding cycle ----------------------------------------------------- */

static bool not_this_pod(const ks_pod *pod, void *arg) { return pod->key != *(uint64_t *)arg; }

static void binding_failed(binding_cycle *bc, ks_status *st, ks_fit_error *fit) {
    ks_scheduler *s = bc->s;
    ks_framework_run_unreserve(bc->fw, bc->st, bc->assumed, bc->node);
    ks_status *fs = ks_cache_forget_pod(s->cache, bc->assumed);
    bool forgot = fs == NULL;
    ks_status_log_free("scheduler cache ForgetPod failed", fs);
    uint64_t key = bc->assumed->key;
    bool rejected = ks_code_is_rejected(ks_status_code(st));
    /* Forgetting the assumed pod frees its resources: the same as an
     * assigned pod going away, for the pods waiting on them (not for this
     * pod itself when it was rejected: it goes back as unschedulable). */
    ks_cluster_event ev = {KS_EV_ASSIGNED_POD, KS_ACT_DELETE};
    if (forgot && !rejected) ks_queue_move_all(s->queue, ev, KS_KIND_POD, bc->assumed, NULL, NULL, NULL);

    char *msg = ks_status_message(st);
    if (s->obs && s->obs->on_bind_failed) s->obs->on_bind_failed(s->obs->ctx, bc->assumed, bc->node, st, msg);
    free(msg);
    ks_sched_stat(s, &s->stats.bind_failures);

    failure f = {.fw = bc->fw, .start_ns = bc->start_ns, .qp = bc->qp, .status = st, .fit = fit,
                 .ni = failure_nominating_info()};
    bc->qp = NULL;
    ks_pod *gone = ks_pod_ref(bc->assumed);
    handle_failure(s, &f);
    if (forgot && rejected) ks_queue_move_all(s->queue, ev, KS_KIND_POD, gone, NULL, not_this_pod, &key);
    ks_pod_unref(gone);
}

static void binding_cycle_run(binding_cycle *bc);

/* A binding cycle reads the objects as they are when it starts, and, when
 * its plugins are all in-tree, after each of its API calls
 * (ks_sched_binding_view_enter). */
void ks_sched_run_binding_cycle(binding_cycle *bc) {
    ks_scheduler *s = bc->s;
    ks_sched_binding_view_enter(s, ks_framework_binding_plugins_own(bc->fw));
    binding_cycle_run(bc);
    ks_sched_view_exit(s);
}

static void binding_cycle_run(binding_cycle *bc) {
    ks_scheduler *s = bc->s;
    ks_framework *fw = bc->fw;
    ks_status *st = NULL;
    ks_framework_try_wait_on_permit(fw, bc->assumed, true, &st);
    if (st) {
        ks_fit_error *fit = NULL;
        if (ks_code_is_rejected(st->code)) {
            fit = new_fit_error(1);
            ks_node_status_map_put(&fit->diagnosis.statuses, ks_intern(bc->node), ks_status_clone(st));
            int i = ks_framework_plugin_index(fw, st->plugin);
            if (i >= 0) ks_plugin_mask_add(&fit->diagnosis.unschedulable_plugins, (unsigned)i);
            ks_status *f = fit_status(st->code, fit);
            ks_status_free(st);
            st = f;
        }
        binding_failed(bc, st, fit);
        ks_status_free(st);
        free_fit_error(fit);
        ks_sched_free_binding_cycle(bc);
        return;
    }
    /* From here on a failure is not "unschedulable": the pod goes to
     * backoff, so the events of this attempt are no longer needed. */
    ks_queue_done(s->queue, bc->assumed->key);
    st = ks_framework_run_pre_bind(fw, bc->st, bc->assumed, bc->node);
    if (!st) {
        bool bound;
        st = extenders_binding(s, bc->assumed, bc->node, &bound);
        if (!bound) st = ks_framework_run_bind(fw, bc->st, bc->assumed, bc->node);
        ks_status_free(ks_cache_finish_binding(s->cache, bc->assumed));
        if (!st) {
            char note[1024];
            snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", ks_str(bc->assumed->ns),
                     ks_str(bc->assumed->name), bc->node);
            ks_api_dispatcher_event(s->disp, bc->assumed, NULL, "Normal", "Scheduled", "Binding", note);
        }
    }
    if (st) {
        binding_failed(bc, st, NULL);
        ks_status_free(st);
        ks_sched_free_binding_cycle(bc);
        return;
    }
    ks_infof(2, "\"Successfully bound pod to node\" pod=\"%s/%s\" node=\"%s\"", ks_str(bc->assumed->ns),
             ks_str(bc->assumed->name), bc->node);
    ks_sched_stat(s, &s->stats.bound);
    ks_fwm_attempt(fw, KS_FWM_SCHEDULED, bc->start_ns);
    const ks_queued_pod *qp = bc->qp;
    ks_fwm_pod_scheduled(ks_queued_pod_attempts(qp),
                         ks_queued_pod_has_initial_attempt(qp)
                             ? (double)(ks_clock_now(s->clock) - ks_queued_pod_initial_attempt_ns(qp)) / 1e9
                             : -1);
    s->last_progress = ks_clock_now(s->clock);
    ks_framework_run_post_bind(fw, bc->st, bc->assumed, bc->node);
    if (s->obs && s->obs->on_bound) s->obs->on_bound(s->obs->ctx, bc->assumed, bc->node);
    ks_sched_free_binding_cycle(bc);
}

void ks_sched_free_binding_cycle(binding_cycle *bc) {
    if (!bc) return;
    ks_cycle_state_free(bc->st);
    ks_queued_pod_free(bc->qp);
    ks_pod_unref(bc->assumed);
    free(bc->node);
    free(bc);
}

static bool permit_decided(ks_scheduler *s, const binding_cycle *bc) {
    ks_waiting_pod *w = ks_waiting_pods_get(s->waiting, bc->assumed->key);
    return !w || ks_waiting_pod_decided(w);
}

binding_cycle *ks_sched_unpark_ready(ks_scheduler *s) {
    binding_cycle *bc = NULL;
    pthread_mutex_lock(&s->bind_mu);
    for (binding_cycle **pp = &s->parked; *pp; pp = &(*pp)->next) {
        if (!permit_decided(s, *pp)) continue;
        bc = *pp;
        *pp = bc->next;
        if (s->parked_tail == &bc->next) s->parked_tail = pp;
        bc->next = NULL;
        break;
    }
    pthread_mutex_unlock(&s->bind_mu);
    return bc;
}

/* Hand a binding cycle to the run mode (executor.h: now on this thread, or
 * to a binder), or, while its pod waits on Permit, park it without a
 * thread until the verdict. */
static void start_binding_cycle(ks_scheduler *s, binding_cycle *bc, bool waiting) {
    if (!waiting) {
        s->exec->run_binding(s, bc);
        return;
    }
    pthread_mutex_lock(&s->bind_mu);
    *s->parked_tail = bc;
    s->parked_tail = &bc->next;
    pthread_mutex_unlock(&s->bind_mu);
    s->exec->parked(s);
}

/* ---- one attempt ------------------------------------------------------------ */

static void notify_attempt(attempt *a) {
    ks_scheduler *s = a->s;
    if (!s->obs || !s->obs->on_attempt) return;
    a->rec.pod = a->pod;
    a->rec.fw = a->fw;
    a->rec.state = a->st;
    a->rec.time_ns = ks_clock_now(s->clock);
    s->obs->on_attempt(s->obs->ctx, &a->rec);
}

static void schedule_queued(ks_scheduler *s, ks_queued_pod *qp);

/* The scheduling cycle reads one view of the objects, shared with the
 * workers that run its Filter and Score. */
static void schedule_in_view(ks_scheduler *s, ks_queued_pod *qp) {
    ks_sched_view_enter(s);
    ks_sched_cycle_view_set(s, true);
    schedule_queued(s, qp);
    ks_sched_cycle_view_set(s, false);
    ks_sched_view_exit(s);
}

bool ks_sched_schedule_one(ks_scheduler *s, bool block) {
    /* Waiting happens unpinned, so that the cycle reads the objects as
     * they are when its pod comes; the pop itself runs QueueSort. */
    if (block && !ks_queue_wait(s->queue)) return false;
    ks_sched_view_enter(s);
    ks_queued_pod *qp = ks_queue_pop(s->queue);
    if (qp) schedule_in_view(s, qp);
    ks_sched_view_exit(s);
    return qp != NULL;
}

bool ks_scheduler_attempt(ks_scheduler *s, uint64_t pod_key) {
    ks_sched_view_enter(s);
    ks_queued_pod *qp = ks_queue_pop_pod(s->queue, pod_key);
    if (qp) schedule_in_view(s, qp);
    ks_sched_view_exit(s);
    return qp != NULL;
}

/* One attempt of a popped pod: the scheduling cycle, then the binding
 * cycle (see start_binding_cycle). */
static void schedule_queued(ks_scheduler *s, ks_queued_pod *qp) {
    ks_framework *fw = ks_queued_pod_framework(qp);
    const ks_pod *pod = ks_queued_pod_pod(qp);
    attempt a = {.s = s, .fw = fw, .qp = qp, .pod = pod};
    a.rec.attempt = ks_queued_pod_attempts(qp);
    a.rec.requeue_event = ks_queued_pod_requeue_event(qp);
    a.rec.requeue_plugin = ks_queued_pod_requeue_plugin(qp);
    ks_infof(4, "\"About to try and schedule pod\" pod=\"%s/%s\"", ks_str(pod->ns), ks_str(pod->name));
    if (!fw) {
        ks_errorf("profile not found for scheduler name \"%s\"", ks_str(pod->scheduler_name));
        ks_queue_done(s->queue, pod->key);
        ks_queued_pod_free(qp);
        return;
    }
    ks_sched_stat(s, &s->stats.attempts);
    if (pod->has_deletion_ts || ks_cache_is_assumed(s->cache, pod)) {
        if (pod->has_deletion_ts) {
            char note[1024];
            snprintf(note, sizeof(note), "skip schedule deleting pod: %s/%s", ks_str(pod->ns), ks_str(pod->name));
            ks_api_dispatcher_event(s->disp, pod, NULL, "Warning", "FailedScheduling", "Scheduling", note);
        }
        a.rec.result = KS_ATTEMPT_SKIPPED;
        notify_attempt(&a);
        ks_queue_done(s->queue, pod->key);
        ks_queued_pod_free(qp);
        return;
    }
    ks_infof(3, "\"Attempting to schedule pod\" pod=\"%s/%s\"", ks_str(pod->ns), ks_str(pod->name));
    a.start_ns = ks_fwm_now();
    a.st = ks_cycle_state_new();
    a.st->record_plugin_metrics = ks_fwm_sample(fw);
    ks_status *st = scheduling_cycle(&a);

    if (st) {
        a.status = st;
        a.rec.status = st;
        a.rec.result = ks_code_is_rejected(st->code) ? KS_ATTEMPT_UNSCHEDULABLE : KS_ATTEMPT_ERROR;
        char *msg = ks_status_message(st);
        a.rec.message = msg;
        a.rec.diagnosis = a.fit ? &a.fit->diagnosis : NULL;
        notify_attempt(&a);
        ks_sched_stat(s, a.rec.result == KS_ATTEMPT_UNSCHEDULABLE ? &s->stats.unschedulable : &s->stats.errors);
        failure f = {.fw = fw, .start_ns = a.start_ns, .qp = qp, .status = st, .fit = a.fit,
                     .no_nodes = a.no_nodes, .ni = a.ni};
        handle_failure(s, &f);
        free(msg);
        ks_status_free(st);
        free_fit_error(a.fit);
        if (a.assumed) ks_pod_unref(a.assumed);
    } else {
        a.rec.result = KS_ATTEMPT_SCHEDULED;
        a.rec.chosen_node = ks_str(a.host);
        notify_attempt(&a);
        ks_sched_stat(s, &s->stats.scheduled);
        /* The cycle's tables are seen: the binding cycle, which may wait
         * long on the API server, keeps only the plugins' state. */
        ks_cycle_state_drop_scratch(a.st);
        binding_cycle *bc = ks_xcalloc(1, sizeof(*bc));
        bc->s = s;
        bc->fw = fw;
        bc->st = a.st;
        bc->qp = qp;
        bc->assumed = a.assumed;
        bc->node = ks_xstrdup(ks_str(a.host));
        bc->start_ns = a.start_ns;
        a.st = NULL;
        start_binding_cycle(s, bc, a.waiting);
    }
    ks_status_free(a.pre_filter_status);
    ks_status_free(a.post_filter_status);
    free(a.nominated);
    free(a.excluded_reason);
    ks_status_free(a.nominated_verdict);
    free_fit_error(a.kept);
    ks_cycle_state_free(a.st);
}
