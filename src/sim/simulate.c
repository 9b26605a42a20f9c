#include "sim/simulate.h"
#include "framework/framework.h"
#include "framework/status.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/intern.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [KS_SIM_PENDING] = "Pending",
    [KS_SIM_SCHEDULED] = "Scheduled",
    [KS_SIM_UNSCHEDULABLE] = "Unschedulable",
    [KS_SIM_GATED] = "SchedulingGated",
    [KS_SIM_PREEMPTED] = "Preempted",
};

const char *ks_sim_state_name(ks_sim_state s) { return state_names[s]; }

bool ks_sim_is_pending(const ks_config *cfg, const ks_pod *p) {
    if (p->node_name || ks_pod_is_terminating(p)) return false;
    if (p->phase == KS_PHASE_SUCCEEDED || p->phase == KS_PHASE_FAILED) return false;
    return ks_config_profile(cfg, ks_str(p->scheduler_name)) != NULL;
}

ks_scheduler *ks_sim_start(const ks_scheduler_options *o, char **err) {
    ks_scheduler *s = ks_scheduler_new(o, err);
    if (!s) return NULL;
    ks_status *st = ks_scheduler_start(s);
    if (st) {
        *err = ks_status_message(st);
        ks_status_free(st);
        ks_scheduler_free(s);
        return NULL;
    }
    return s;
}

ks_status *ks_sim_extender_bound(ks_scheduler *s, const ks_pod *pod, const char *node) {
    return ks_api_dispatcher_bind_drain(ks_scheduler_dispatcher(s), pod, node);
}

#define REF_VEC(d, s)                                                          \
    do {                                                                       \
        for (uint32_t i_ = 0; i_ < (s).n; i_++) KS_VEC_PUSH(d, KS_OBJECT_REF((s).v[i_])); \
    } while (0)

ks_cluster *ks_sim_clone_cluster(const ks_cluster *c) {
    ks_cluster *d = ks_cluster_new();
    for (uint32_t i = 0; i < c->nodes.n; i++) KS_VEC_PUSH(d->nodes, ks_node_ref(c->nodes.v[i]));
    for (uint32_t i = 0; i < c->pods.n; i++) KS_VEC_PUSH(d->pods, ks_pod_ref(c->pods.v[i]));
    REF_VEC(d->priority_classes, c->priority_classes);
    REF_VEC(d->namespaces, c->namespaces);
    REF_VEC(d->pvs, c->pvs);
    REF_VEC(d->pvcs, c->pvcs);
    REF_VEC(d->storage_classes, c->storage_classes);
    REF_VEC(d->csinodes, c->csinodes);
    REF_VEC(d->csi_drivers, c->csi_drivers);
    REF_VEC(d->csi_capacities, c->csi_capacities);
    REF_VEC(d->volume_attachments, c->volume_attachments);
    REF_VEC(d->pdbs, c->pdbs);
    REF_VEC(d->pod_groups, c->pod_groups);
    REF_VEC(d->workloads, c->workloads);
    REF_VEC(d->resource_claims, c->resource_claims);
    REF_VEC(d->claim_templates, c->claim_templates);
    REF_VEC(d->resource_slices, c->resource_slices);
    REF_VEC(d->device_classes, c->device_classes);
    REF_VEC(d->device_taint_rules, c->device_taint_rules);
    d->next_input_index = c->next_input_index;
    return d;
}

int64_t ks_sim_start_time(const ks_cluster *c) {
    int64_t t = 0;
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (c->pods.v[i]->creation_ts > t) t = c->pods.v[i]->creation_ts;
    for (uint32_t i = 0; i < c->nodes.n; i++)
        if (c->nodes.v[i]->creation_ts > t) t = c->nodes.v[i]->creation_ts;
    return t * KS_NS_PER_SEC;
}

/* The run's bookkeeping, shared by the observer and the backend wrapper. */
typedef struct sim_run {
    const ks_sim_options *opts;
    ks_memory_client *mb;
    const ks_cluster_client *inner;
    ks_cluster_client wrapped;
    ks_clock *clock;
    ks_scheduler *s;
    ks_map index;            /* pod key -> pending pod index + 1 */
    ks_sim_pod *pods;
    uint32_t npods;
    uint32_t next_order;
    ks_sim_pod *victims;
    uint32_t nvictims, victims_cap;
    uint64_t attempts;
} sim_run;

static ks_status *extender_bound(void *ctx, const ks_pod *pod, const char *node) {
    return ks_sim_extender_bound(((sim_run *)ctx)->s, pod, node);
}

static ks_sim_pod *pending_of(sim_run *r, const ks_pod *p) {
    uintptr_t i = (uintptr_t)ks_map_get(&r->index, p->key);
    return i ? &r->pods[i - 1] : NULL;
}

static char *dup_or_null(const char *s) { return s ? ks_xstrdup(s) : NULL; }

static void copy_verdict(ks_sim_verdict *v, const ks_node_info *ni, const ks_status *s) {
    v->node = ni->name;
    v->code = ks_status_code(s);
    v->plugin = s ? ks_status_plugin(s) : "";
    v->nreasons = s ? s->nreasons : 0;
    if (v->nreasons) {
        v->reasons = ks_xcalloc(v->nreasons, sizeof(char *));
        for (uint32_t i = 0; i < v->nreasons; i++) v->reasons[i] = ks_xstrdup(s->reasons[i]);
    }
}

static int cmp_score_rows(const void *x, const void *y, void *arg) {
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    const ks_score_result *sr = arg;
    if (sr->total[i] != sr->total[j]) return sr->total[i] > sr->total[j] ? -1 : 1;
    return strcmp(ks_str(sr->nodes[i]->name), ks_str(sr->nodes[j]->name));
}

/* The score table; with keep > 0 only the best keep rows by total and the
 * chosen node's (in that order), else every row as scored. */
static void copy_scores(ks_sim_attempt *a, const ks_score_result *sr, uint32_t keep, const char *chosen) {
    size_t *rows = ks_xcalloc(sr->nnodes ? sr->nnodes : 1, sizeof(size_t));
    size_t n = sr->nnodes;
    for (size_t i = 0; i < n; i++) rows[i] = i;
    if (keep && n > keep) {
        qsort_r(rows, n, sizeof(size_t), cmp_score_rows, (void *)sr);
        ks_id sel = chosen ? ks_intern_find(chosen) : 0;
        bool has = false;
        for (size_t i = 0; i < keep; i++) has |= sr->nodes[rows[i]]->name == sel;
        size_t k = keep;
        for (size_t i = keep; !has && sel && i < n; i++)
            if (sr->nodes[rows[i]]->name == sel) {
                rows[k++] = rows[i];
                break;
            }
        n = k;
    }
    size_t np = sr->nplugins, cells = n * np;
    a->nscored = (uint32_t)n;
    a->nscored_all = (uint32_t)sr->nnodes;
    a->nplugins = (uint32_t)np;
    a->scored_nodes = ks_xcalloc(n ? n : 1, sizeof(ks_id));
    a->score_plugins = ks_xcalloc(np ? np : 1, sizeof(char *));
    a->weights = ks_xcalloc(np ? np : 1, sizeof(int64_t));
    for (size_t j = 0; j < np; j++) {
        a->score_plugins[j] = sr->plugins[j]; /* registered names are static */
        a->weights[j] = sr->weights[j];
    }
    a->raw = ks_xcalloc(cells ? cells : 1, sizeof(int64_t));
    a->normalized = ks_xcalloc(cells ? cells : 1, sizeof(int64_t));
    a->weighted = ks_xcalloc(cells ? cells : 1, sizeof(int64_t));
    a->total = ks_xcalloc(n ? n : 1, sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        size_t r = rows[i];
        a->scored_nodes[i] = sr->nodes[r]->name;
        a->total[i] = sr->total[r];
        if (np) {
            memcpy(a->raw + i * np, sr->raw + r * np, np * sizeof(int64_t));
            memcpy(a->normalized + i * np, sr->normalized + r * np, np * sizeof(int64_t));
            memcpy(a->weighted + i * np, sr->weighted + r * np, np * sizeof(int64_t));
        }
    }
    free(rows);
}

static void record_explain(ks_sim_pod *sp, const ks_attempt_record *rec, uint32_t score_rows) {
    sp->explain = ks_xrealloc(sp->explain, (sp->nexplain + 1) * sizeof(*sp->explain));
    ks_sim_attempt *a = &sp->explain[sp->nexplain++];
    memset(a, 0, sizeof(*a));
    a->number = rec->attempt;
    a->requeue_event = dup_or_null(rec->requeue_event);
    a->requeue_plugin = rec->requeue_plugin;
    a->time_ns = rec->time_ns;
    a->pre_filter_code = ks_status_code(rec->pre_filter_status);
    a->pre_filter_plugin = ks_status_plugin(rec->pre_filter_status);
    if (rec->pre_filter_status) a->pre_filter_message = ks_status_message(rec->pre_filter_status);
    a->pre_filter_narrowed = !ks_pre_filter_result_all_nodes(rec->pre_filter_result);
    size_t nf = ks_framework_point_nplugins(rec->fw, KS_EP_FILTER);
    a->nfilter_plugins = (uint32_t)nf;
    a->filter_plugins = ks_xcalloc(nf ? nf : 1, sizeof(char *));
    for (size_t i = 0; i < nf; i++) a->filter_plugins[i] = ks_framework_point_plugin(rec->fw, KS_EP_FILTER, i);
    a->nverdicts = (uint32_t)rec->nevaluated;
    a->verdicts = ks_xcalloc(rec->nevaluated ? rec->nevaluated : 1, sizeof(ks_sim_verdict));
    for (size_t i = 0; i < rec->nevaluated; i++)
        copy_verdict(&a->verdicts[i], rec->evaluated[i], rec->verdicts[i]);
    if (rec->scores) copy_scores(a, rec->scores, score_rows, rec->chosen_node);
    a->selected_node = dup_or_null(rec->chosen_node);
    a->message = dup_or_null(rec->message);
    a->post_filter_ran = rec->post_filter_ran;
    if (rec->post_filter_ran) {
        a->post_filter_code = ks_status_code(rec->post_filter_status);
        a->post_filter_plugin = ks_status_plugin(rec->post_filter_status);
        if (rec->post_filter_status) a->post_filter_message = ks_status_message(rec->post_filter_status);
        a->nominated_node = dup_or_null(rec->nominated_node);
    }
}

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    sim_run *r = ctx;
    if (rec->result == KS_ATTEMPT_SKIPPED) return;
    r->attempts++;
    ks_sim_pod *sp = pending_of(r, rec->pod);
    if (!sp) return;
    if (!sp->attempts) sp->order = r->next_order++;
    sp->attempts++;
    if (r->opts->explain || (r->opts->explain_pod && r->opts->explain_pod == rec->pod->key))
        record_explain(sp, rec, r->opts->explain_score_rows);
    if (r->opts->on_attempt) r->opts->on_attempt(r->opts->on_attempt_ctx, rec);
}

/* The client wrapper sees every deletion: the only pods the scheduler
 * deletes are preemption victims. */
static ks_status *w_start(void *ctx, ks_watch_fn fn, void *arg) {
    sim_run *r = ctx;
    return r->inner->start(r->inner->ctx, fn, arg);
}
static void w_stop(void *ctx) {
    sim_run *r = ctx;
    r->inner->stop(r->inner->ctx);
}
/* A victim's record, before its deletion. */
static void record_victim(sim_run *r, ks_pod *cur) {
    KS_GROW(r->victims, r->victims_cap, r->nvictims + 1);
    ks_sim_pod *v = &r->victims[r->nvictims++];
    memset(v, 0, sizeof(*v));
    v->pod = cur;
    v->input = ks_pod_ref(cur);
    v->state = KS_SIM_PREEMPTED;
    v->node = cur->node_name ? ks_xstrdup(ks_str(cur->node_name)) : NULL;
    v->deleted_ns = ks_clock_now(r->clock);
    v->order = r->nvictims - 1;
}

static ks_status *w_execute(void *ctx, const ks_api_call *call) {
    sim_run *r = ctx;
    if (call->type != KS_CALL_DELETE) return r->inner->execute(r->inner->ctx, call);
    ks_pod *cur = ks_memory_client_pod(r->mb, call->pod->key);
    if (cur) ks_pod_ref(cur);
    ks_status *s = r->inner->execute(r->inner->ctx, call);
    if (!s && cur) record_victim(r, cur);
    else if (cur) ks_pod_unref(cur);
    return s;
}

static const ks_pod_condition *pod_scheduled_condition(const ks_pod *p) {
    ks_id type = ks_intern("PodScheduled");
    for (uint32_t i = 0; i < p->nconditions; i++)
        if (p->conditions[i].type == type) return &p->conditions[i];
    return NULL;
}

/* Why a pod never attempted is waiting: what its PreEnqueue plugins say
 * (DynamicResources: a claim that does not exist yet). */
static char *pre_enqueue_message(ks_scheduler *s, const ks_pod *p) {
    ks_framework *fw = ks_scheduler_framework(s, ks_str(p->scheduler_name));
    if (!fw) return NULL;
    int plugin = -1;
    ks_scheduler_view_enter(s);
    ks_status *st = ks_framework_run_pre_enqueue(fw, p, 0, &plugin);
    ks_scheduler_view_exit(s);
    char *msg = st ? ks_status_message(st) : NULL;
    ks_status_free(st);
    return msg;
}

/* Read each pending pod's fate off the in-memory cluster. */
static void settle(sim_run *r, ks_scheduler *s) {
    for (uint32_t i = 0; i < r->npods; i++) {
        ks_sim_pod *sp = &r->pods[i];
        ks_pod *cur = ks_memory_client_pod(r->mb, sp->input->key);
        sp->pod = ks_pod_ref(cur ? cur : sp->input);
        const ks_pod *p = sp->pod;
        if (p->node_name) {
            sp->state = KS_SIM_SCHEDULED;
            sp->node = ks_xstrdup(ks_str(p->node_name));
        } else if (p->ngates && !sp->attempts) {
            sp->state = KS_SIM_GATED;
            sp->reason = ks_xstrdup("SchedulingGated");
            sp->message = ks_xstrdup("Scheduling is blocked due to non-empty scheduling gates");
        } else {
            sp->state = sp->attempts ? KS_SIM_UNSCHEDULABLE : KS_SIM_PENDING;
            const ks_pod_condition *c = pod_scheduled_condition(p);
            if (c && c->reason) sp->reason = ks_xstrdup(c->reason);
            if (c && c->message) sp->message = ks_xstrdup(c->message);
            if (!sp->attempts && !sp->message && p->nresource_claims) sp->message = pre_enqueue_message(s, p);
        }
        if (p->nominated_node) sp->nominated = ks_xstrdup(ks_str(p->nominated_node));
        if (!sp->attempts) sp->order = r->next_order++;
    }
}

static bool bound_now(void *ctx, const ks_pod *p) {
    const ks_pod *cur = ks_memory_client_pod(((sim_run *)ctx)->mb, p->key);
    return cur && cur->node_name;
}

/* A pod the workloads' controllers create during the run: pending, so
 * the result follows it. */
static void create_now(void *ctx, ks_pod *p) {
    sim_run *r = ctx;
    r->pods = ks_xrealloc(r->pods, (r->npods + 1) * sizeof(ks_sim_pod));
    ks_sim_pod *sp = &r->pods[r->npods];
    memset(sp, 0, sizeof(*sp));
    sp->input = ks_pod_ref(p);
    ks_map_put(&r->index, p->key, (void *)(uintptr_t)(r->npods + 1));
    r->npods++;
    ks_memory_client_add_pod(r->mb, p); /* the cluster takes the reference */
}

static void remove_now(void *ctx, const ks_pod *p) {
    ks_memory_client_remove_pod(((sim_run *)ctx)->mb, p->key);
}

/* The controllers' turn when the scheduler is idle: OrderedReady
 * ordinals, rollouts. Returns how many pods they created or deleted. */
static uint32_t controllers_step(sim_run *r, ks_wl_held *h) {
    ks_wl_step_ops ops = {.ctx = r, .is_bound = bound_now, .create = create_now, .remove = remove_now};
    return ks_wl_step(h, &ops);
}

static int cmp_order(const void *a, const void *b) {
    const ks_sim_pod *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* Queue entry order: creationTimestamp, then input order. The in-memory
 * backend lists pods in the cluster's order, so sort the cluster. */
static int cmp_pod_entry(const void *a, const void *b) {
    const ks_pod *x = *(ks_pod *const *)a, *y = *(ks_pod *const *)b;
    if (x->creation_ts != y->creation_ts) return x->creation_ts < y->creation_ts ? -1 : 1;
    return (x->input_index > y->input_index) - (x->input_index < y->input_index);
}

static void collect_events(sim_run *r, ks_sim_result *out) {
    size_t n = ks_memory_client_nevents(r->mb);
    out->events = ks_xcalloc(n ? n : 1, sizeof(ks_sim_event));
    for (size_t i = 0; i < n; i++) {
        const ks_recorded_event *e = ks_memory_client_event(r->mb, i);
        ks_sim_event *se = &out->events[out->nevents++];
        ks_pod *p = ks_memory_client_pod(r->mb, e->pod_key);
        if (!p) {
            for (uint32_t v = 0; v < r->nvictims && !p; v++)
                if (r->victims[v].pod->key == e->pod_key) p = r->victims[v].pod;
        }
        if (!p) {
            uintptr_t idx = (uintptr_t)ks_map_get(&r->index, e->pod_key);
            if (idx) p = r->pods[idx - 1].input;
        }
        se->regarding = p ? ks_pod_ref(p) : NULL;
        se->type = ks_xstrdup(e->type);
        se->reason = ks_xstrdup(e->reason);
        se->action = ks_xstrdup(e->action ? e->action : "");
        se->note = ks_xstrdup(e->note ? e->note : "");
        se->controller = ks_xstrdup(p ? ks_str(p->scheduler_name) : "default-scheduler");
        se->time_ns = e->time_ns;
    }
    /* A victim's message is the note of the event that preempted it. */
    for (uint32_t v = 0; v < r->nvictims; v++) {
        for (uint32_t i = 0; i < out->nevents; i++) {
            const ks_sim_event *se = &out->events[i];
            if (se->regarding && se->regarding->key == r->victims[v].pod->key &&
                strcmp(se->reason, "Preempted") == 0) {
                r->victims[v].message = ks_xstrdup(se->note);
                break;
            }
        }
    }
}

bool ks_simulate(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg,
                 const ks_sim_options *opts, ks_sim_result *out, char **err) {
    memset(out, 0, sizeof(*out));
    out->cluster = cluster;
    int64_t wall0 = ks_monotonic_ns();

    if (cluster->pods.n) qsort(cluster->pods.v, cluster->pods.n, sizeof(ks_pod *), cmp_pod_entry);

    sim_run r;
    memset(&r, 0, sizeof(r));
    r.opts = opts;
    ks_map_init(&r.index);
    r.pods = ks_xcalloc(cluster->pods.n ? cluster->pods.n : 1, sizeof(ks_sim_pod));
    for (uint32_t i = 0; i < cluster->pods.n; i++) {
        ks_pod *p = cluster->pods.v[i];
        if (!ks_sim_is_pending(cfg, p)) continue;
        r.pods[r.npods].input = ks_pod_ref(p);
        ks_map_put(&r.index, p->key, (void *)(uintptr_t)(r.npods + 1));
        r.npods++;
    }

    out->start_ns = ks_sim_start_time(cluster);
    r.clock = ks_clock_sim_new(out->start_ns);
    r.mb = ks_memory_client_new(cluster);
    r.inner = ks_memory_client_iface(r.mb);
    r.wrapped = (ks_cluster_client){
        .ctx = &r,
        .start = w_start,
        .stop = w_stop,
        .execute = w_execute,
        .executes = r.inner->executes,
    };
    ks_observer obs = {.ctx = &r, .on_attempt = on_attempt, .extender_bound = extender_bound};

    /* A percentage given on the command line overrides the configuration
     * (the differential tests score every node). */
    ks_config *tuned = NULL;
    const ks_config *use = cfg;
    if (opts->percentage_of_nodes_to_score >= 0) {
        tuned = ks_xmalloc(sizeof(*tuned));
        *tuned = *cfg;
        tuned->percentage_of_nodes_to_score = opts->percentage_of_nodes_to_score;
        use = tuned;
    }
    ks_scheduler_options so = {
        .config = use,
        .registry = reg,
        .backend = &r.wrapped,
        .mode = KS_RUN_STEPPING,
        .clock = r.clock,
        .seed = opts->seed,
        .ties = opts->deterministic ? KS_TIES_BY_NAME : KS_TIES_RANDOM,
        .parallelism = opts->parallelism,
        .observer = &obs,
    };
    bool ok = false;
    ks_scheduler *s = ks_sim_start(&so, err);
    if (!s) goto done;
    r.s = s;
    ks_scheduler_run_until_idle(s);
    while (opts->workloads && controllers_step(&r, opts->workloads->held)) ks_scheduler_run_until_idle(s);
    out->end_ns = ks_clock_now(r.clock);
    out->attempts = r.attempts;

    settle(&r, s);
    collect_events(&r, out);
    qsort(r.pods, r.npods, sizeof(ks_sim_pod), cmp_order);
    out->pods = r.pods;
    out->npods = r.npods;
    out->victims = r.victims;
    out->nvictims = r.nvictims;
    r.pods = NULL;
    r.victims = NULL;
    out->generated = opts->workloads;
    ks_sim_group_workloads(out, opts->workloads ? opts->workloads->held : NULL);
    /* rollouts: how far each got */
    for (uint32_t i = 0; opts->workloads && i < out->nworkloads; i++) {
        ks_wl_rollout_state st;
        ks_sim_workload *g = &out->workloads[i];
        if (ks_wl_rollout_state_of(opts->workloads->held, g->workload, cluster, bound_now, &r, &st)) {
            g->rollout = true;
            g->rollout_recreate = st.recreate;
            g->rollout_strategy = st.strategy;
            g->rollout_new = st.bound;
            g->rollout_total = st.total;
            g->rollout_old_left = st.old_left;
        }
    }
    ok = true;
done:
    if (s) ks_scheduler_free(s);
    if (!ok) {
        for (uint32_t i = 0; i < r.npods; i++) ks_pod_unref(r.pods[i].input);
        free(r.pods);
    }
    ks_memory_client_free(r.mb);
    ks_clock_free(r.clock);
    ks_map_free(&r.index);
    free(tuned);
    out->wall_seconds = (double)(ks_monotonic_ns() - wall0) / 1e9;
    return ok;
}

static void free_attempt(ks_sim_attempt *a) {
    free(a->pre_filter_message);
    for (uint32_t i = 0; i < a->nverdicts; i++) {
        for (uint32_t j = 0; j < a->verdicts[i].nreasons; j++) free(a->verdicts[i].reasons[j]);
        free(a->verdicts[i].reasons);
    }
    free(a->verdicts);
    free(a->filter_plugins);
    free(a->scored_nodes);
    free(a->score_plugins);
    free(a->weights);
    free(a->raw);
    free(a->normalized);
    free(a->weighted);
    free(a->total);
    free(a->selected_node);
    free(a->message);
    free(a->post_filter_message);
    free(a->nominated_node);
    free(a->requeue_event);
}

static void free_sim_pod(ks_sim_pod *p) {
    if (p->pod) ks_pod_unref(p->pod);
    if (p->input) ks_pod_unref(p->input);
    free(p->node);
    free(p->nominated);
    free(p->message);
    free(p->reason);
    for (uint32_t i = 0; i < p->nexplain; i++) free_attempt(&p->explain[i]);
    free(p->explain);
}

void ks_sim_result_free(ks_sim_result *r) {
    for (uint32_t i = 0; i < r->npods; i++) free_sim_pod(&r->pods[i]);
    for (uint32_t i = 0; i < r->nvictims; i++) free_sim_pod(&r->victims[i]);
    for (uint32_t i = 0; i < r->nevents; i++) {
        ks_sim_event *e = &r->events[i];
        if (e->regarding) ks_pod_unref(e->regarding);
        free(e->type);
        free(e->reason);
        free(e->action);
        free(e->note);
        free(e->controller);
    }
    free(r->pods);
    free(r->victims);
    free(r->events);
    free(r->workloads);
    memset(r, 0, sizeof(*r));
}
