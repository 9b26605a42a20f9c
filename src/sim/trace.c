#include "sim/trace.h"
#include "framework/framework.h"
#include "framework/status.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler.h"
#include "util/clock.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct trace_run {
    FILE *out;
    bool printed_any;
    ks_memory_client *mb;
    const ks_cluster_client *inner;
    ks_cluster_client wrapped;
    ks_scheduler *s;
    int pass;
    json_t *cur;            /* the attempt being built */
    char **victims;         /* deleted during the current attempt */
    size_t nvictims, victims_cap;
    uint64_t changes;       /* binds and deletions so far */
} trace_run;

/* ---- the backend wrapper: count changes, collect victims ---------------- */

static ks_status *w_start(void *ctx, ks_watch_fn fn, void *arg) {
    trace_run *t = ctx;
    return t->inner->start(t->inner->ctx, fn, arg);
}
static void w_stop(void *ctx) {
    trace_run *t = ctx;
    t->inner->stop(t->inner->ctx);
}
/* No volume bindings (PV and PVC writes): they stay assumed, as in the
 * reference loop; claims are written (its DynamicResources PreBind). */
static bool volume_write(const ks_api_call *call) {
    return call->type == KS_CALL_OBJECT_WRITE && (!strcmp(call->write->kind, "PersistentVolume") ||
                                                  !strcmp(call->write->kind, "PersistentVolumeClaim"));
}

static ks_status *w_execute(void *ctx, const ks_api_call *call) {
    trace_run *t = ctx;
    if (volume_write(call)) return ks_status_new(KS_SKIP, "the trace makes no volume bindings");
    ks_status *s = t->inner->execute(t->inner->ctx, call);
    if (s) return s;
    if (call->type == KS_CALL_BINDING) t->changes++;
    if (call->type == KS_CALL_DELETE) {
        t->changes++;
        KS_GROW(t->victims, t->victims_cap, t->nvictims + 1);
        t->victims[t->nvictims++] = ks_xasprintf("%s/%s", ks_str(call->pod->ns), ks_str(call->pod->name));
    }
    return NULL;
}

/* ---- JSON pieces ---------------------------------------------------------- */

static json_t *reasons_json(const ks_status *s) {
    json_t *a = json_array();
    for (uint32_t i = 0; s && i < s->nreasons; i++) json_array_append_new(a, json_string(s->reasons[i]));
    return a;
}

static json_t *status_json(const ks_status *s) {
    json_t *o = json_object();
    json_object_set_new(o, "plugin", json_string(ks_status_plugin(s)));
    json_object_set_new(o, "code", json_string(ks_code_name(ks_status_code(s))));
    json_object_set_new(o, "reasons", reasons_json(s));
    return o;
}

typedef struct verdict_ref {
    const char *node;
    const ks_status *status;
    bool excluded;
} verdict_ref;

static int cmp_verdict(const void *a, const void *b) {
    return strcmp(((const verdict_ref *)a)->node, ((const verdict_ref *)b)->node);
}

static json_t *filter_json(const ks_attempt_record *rec) {
    json_t *arr = json_array();
    if (!ks_status_is_success(rec->pre_filter_status) || !rec->snapshot) return arr;
    const ks_snapshot *snap = rec->snapshot;
    size_t cap = rec->nevaluated + snap->nnodes + 1;
    verdict_ref *v = ks_xcalloc(cap ? cap : 1, sizeof(*v));
    size_t n = 0;
    /* A nominated node that was tried alone and failed keeps that verdict
     * unless the evaluation that followed looked at it again. */
    const ks_node_info *tried = rec->nominated_tried;
    for (size_t i = 0; i < rec->nevaluated; i++) {
        if (rec->evaluated[i] == tried) tried = NULL;
        v[n++] = (verdict_ref){ks_str(rec->evaluated[i]->name), rec->verdicts[i], false};
    }
    if (tried) v[n++] = (verdict_ref){ks_str(tried->name), rec->nominated_verdict, false};
    /* Nodes a PreFilterResult left out have a known verdict too (except on
     * the nominated-node fast path, where only that node counts). */
    if (!rec->nominated_node_fast_path && !ks_pre_filter_result_all_nodes(rec->pre_filter_result)) {
        for (uint32_t i = 0; i < snap->nnodes; i++) {
            const ks_node_info *ni = snap->nodes[i];
            if (ks_pre_filter_result_has_id(rec->pre_filter_result, ni->name) || ni == tried) continue;
            v[n++] = (verdict_ref){ks_str(ni->name), NULL, true};
        }
    }
    qsort(v, n, sizeof(*v), cmp_verdict);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "node", json_string(v[i].node));
        if (v[i].excluded) {
            json_object_set_new(o, "code", json_string("UnschedulableAndUnresolvable"));
            json_t *r = json_array();
            json_array_append_new(r, json_string(rec->pre_filter_excluded_reason ? rec->pre_filter_excluded_reason : ""));
            json_object_set_new(o, "reasons", r);
        } else if (ks_status_is_success(v[i].status)) {
            json_object_set_new(o, "code", json_string("Success"));
        } else {
            json_object_set_new(o, "plugin", json_string(ks_status_plugin(v[i].status)));
            json_object_set_new(o, "code", json_string(ks_code_name(v[i].status->code)));
            json_object_set_new(o, "reasons", reasons_json(v[i].status));
        }
        json_array_append_new(arr, o);
    }
    free(v);
    return arr;
}

typedef struct score_ref {
    const char *node;
    size_t index;
} score_ref;

static int cmp_score(const void *a, const void *b) {
    return strcmp(((const score_ref *)a)->node, ((const score_ref *)b)->node);
}

static json_t *scores_json(const ks_score_result *sr) {
    json_t *arr = json_array();
    score_ref *v = ks_xcalloc(sr->nnodes ? sr->nnodes : 1, sizeof(*v));
    for (size_t i = 0; i < sr->nnodes; i++) v[i] = (score_ref){ks_str(sr->nodes[i]->name), i};
    qsort(v, sr->nnodes, sizeof(*v), cmp_score);
    for (size_t i = 0; i < sr->nnodes; i++) {
        size_t ni = v[i].index;
        json_t *o = json_object(), *pl = json_array();
        json_object_set_new(o, "node", json_string(v[i].node));
        for (size_t j = 0; j < sr->nplugins; j++) {
            size_t k = ni * sr->nplugins + j;
            json_t *p = json_object();
            json_object_set_new(p, "plugin", json_string(sr->plugins[j]));
            json_object_set_new(p, "raw", json_integer(sr->raw[k]));
            json_object_set_new(p, "normalized", json_integer(sr->normalized[k]));
            json_object_set_new(p, "weighted", json_integer(sr->weighted[k]));
            json_array_append_new(pl, p);
        }
        json_object_set_new(o, "plugins", pl);
        json_object_set_new(o, "total", json_integer(sr->total[ni]));
        json_array_append_new(arr, o);
    }
    free(v);
    return arr;
}

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    trace_run *t = ctx;
    if (rec->result == KS_ATTEMPT_SKIPPED) return;
    json_t *o = t->cur;
    if (!ks_status_is_success(rec->pre_filter_status))
        json_object_set_new(o, "prefilter", status_json(rec->pre_filter_status));
    json_object_set_new(o, "filter", filter_json(rec));
    if (rec->scores && rec->scores->nnodes >= 2) json_object_set_new(o, "scores", scores_json(rec->scores));
    const char *result = rec->result == KS_ATTEMPT_SCHEDULED        ? "Scheduled"
                         : rec->result == KS_ATTEMPT_UNSCHEDULABLE ? "Unschedulable"
                                                                   : "Error";
    json_object_set_new(o, "result", json_string(result));
    if (rec->requeue_event) {
        /* not compared with the reference (docs/reference-harness.md) */
        json_t *q = json_object();
        json_object_set_new(q, "event", json_string(rec->requeue_event));
        if (rec->requeue_plugin) json_object_set_new(q, "plugin", json_string(rec->requeue_plugin));
        json_object_set_new(o, "requeuedBy", q);
    }
    if (rec->chosen_node) json_object_set_new(o, "node", json_string(rec->chosen_node));
    if (rec->message) json_object_set_new(o, "message", json_string(rec->message));
    if (rec->post_filter_ran) {
        json_t *p = json_object();
        const ks_status *ps = rec->post_filter_status;
        json_object_set_new(p, "plugin", json_string(ks_status_is_success(ps) ? "" : ks_status_plugin(ps)));
        json_object_set_new(p, "code", json_string(ks_code_name(ks_status_code(ps))));
        if (rec->nominated_node) json_object_set_new(p, "nominatedNode", json_string(rec->nominated_node));
        char *msg = ks_status_message(ps);
        json_object_set_new(p, "message", json_string(msg));
        free(msg);
        json_object_set_new(o, "postfilter", p);
    }
}

/* The devices the pod's claims hold once it is bound: one entry per
 * allocated device, "ns/claim: request driver/pool/device", claims in the
 * pod's order. */
static void add_devices(json_t *o, const ks_cluster *c, const ks_pod *p) {
    json_t *arr = json_array();
    for (uint32_t i = 0; i < p->nresource_claims; i++) {
        bool check = false, skip = false;
        const char *name = ks_pod_claim_name(p, i, &check, &skip);
        if (!name) continue;
        for (uint32_t k = 0; k < c->resource_claims.n; k++) {
            const ks_resource_claim *rc = c->resource_claims.v[k];
            if (rc->ns != p->ns || strcmp(ks_str(rc->name), name) != 0 || !rc->allocation) continue;
            for (uint32_t d = 0; d < rc->allocation->nresults; d++) {
                const ks_device_result *r = &rc->allocation->results[d];
                char *s = ks_xasprintf("%s/%s: %s %s/%s/%s", ks_str(rc->ns), name, r->request, r->driver, r->pool,
                                       r->device);
                json_array_append_new(arr, json_string(s));
                free(s);
            }
        }
    }
    if (json_array_size(arr)) json_object_set_new(o, "devices", arr);
    else json_decref(arr);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void emit(trace_run *t, json_t *o) {
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fprintf(t->out, "%s\n %s", t->printed_any ? "," : "", s);
    t->printed_any = true;
    free(s);
}

/* ---- the loop --------------------------------------------------------------- */

typedef struct pending {
    uint64_t key;
    int32_t priority;
    int64_t created;
    uint32_t input;
    bool gated, done;
} pending;

static int cmp_pending(const void *a, const void *b) {
    const pending *x = a, *y = b;
    if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
    if (x->created != y->created) return x->created < y->created ? -1 : 1;
    return (x->input > y->input) - (x->input < y->input);
}

static json_t *attempt_head(int pass, const ks_pod *p) {
    json_t *o = json_object();
    json_object_set_new(o, "pass", json_integer(pass));
    char *name = ks_xasprintf("%s/%s", ks_str(p->ns), ks_str(p->name));
    json_object_set_new(o, "pod", json_string(name));
    free(name);
    if (p->nominated_node) json_object_set_new(o, "nominated", json_string(ks_str(p->nominated_node)));
    return o;
}

/* A gated pod is reported once, in pass 1, with its PreEnqueue status. */
static void report_gated(trace_run *t, const ks_pod *p, ks_framework *fw) {
    int plugin = -1;
    ks_scheduler_view_enter(t->s);
    ks_status *st = ks_framework_run_pre_enqueue(fw, p, 0, &plugin);
    ks_scheduler_view_exit(t->s);
    json_t *o = attempt_head(1, p);
    json_object_set_new(o, "preenqueue", status_json(st));
    json_object_set_new(o, "result", json_string("SchedulingGated"));
    char *msg = ks_status_message(st);
    json_object_set_new(o, "message", json_string(msg));
    free(msg);
    emit(t, o);
    json_decref(o);
    ks_status_free(st);
}

static ks_status *extender_bound(void *ctx, const ks_pod *pod, const char *node) {
    return ks_sim_extender_bound(((trace_run *)ctx)->s, pod, node);
}

bool ks_trace_run(FILE *out, ks_cluster *cluster, const ks_config *cfg, ks_registry *reg,
                  const ks_sim_options *opts, char **err) {
    trace_run t;
    memset(&t, 0, sizeof(t));
    t.out = out;

    /* Every node is evaluated: percentageOfNodesToScore 100 everywhere. */
    ks_config tuned = *cfg;
    tuned.percentage_of_nodes_to_score = 100;
    ks_profile_config *profiles = ks_xcalloc(cfg->nprofiles ? cfg->nprofiles : 1, sizeof(*profiles));
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        profiles[i] = cfg->profiles[i];
        profiles[i].has_percentage = false;
    }
    tuned.profiles = profiles;

    pending *pend = ks_xcalloc(cluster->pods.n ? cluster->pods.n : 1, sizeof(*pend));
    size_t npend = 0;
    for (uint32_t i = 0; i < cluster->pods.n; i++) {
        const ks_pod *p = cluster->pods.v[i];
        if (!ks_sim_is_pending(&tuned, p)) continue;
        pend[npend++] = (pending){.key = p->key, .priority = ks_pod_priority(p), .created = p->creation_ts,
                                  .input = p->input_index};
    }
    qsort(pend, npend, sizeof(*pend), cmp_pending);

    ks_clock *clock = ks_clock_sim_new(ks_sim_start_time(cluster));
    t.mb = ks_memory_client_new(cluster);
    t.inner = ks_memory_client_iface(t.mb);
    t.wrapped = (ks_cluster_client){.ctx = &t,
                                    .start = w_start,
                                    .stop = w_stop,
                                    .execute = w_execute,
                                    .executes = KS_CALLS_ALL};
    ks_observer obs = {.ctx = &t, .on_attempt = on_attempt, .extender_bound = extender_bound};
    ks_scheduler_options so = {
        .config = &tuned,
        .registry = reg,
        .backend = &t.wrapped,
        .clock = clock,
        .seed = opts->seed,
        .ties = KS_TIES_BY_NAME,
        .parallelism = 1,
        .observer = &obs,
    };
    bool ok = false;
    t.s = ks_sim_start(&so, err);
    if (!t.s) goto done;
    fputs("{\"format\":\"ksched-trace/v1\",\"attempts\":[", out);
    for (t.pass = 1; t.pass <= 20; t.pass++) {
        uint64_t before = t.changes;
        size_t attempted = 0;
        for (size_t i = 0; i < npend; i++) {
            pending *pp = &pend[i];
            if (pp->done) continue;
            ks_pod *p = ks_memory_client_pod(t.mb, pp->key);
            if (!p || p->node_name) {
                pp->done = true;
                continue;
            }
            ks_framework *fw = ks_scheduler_framework(t.s, ks_str(p->scheduler_name));
            if (t.pass == 1 && (p->ngates || p->nresource_claims)) {
                int plugin = -1;
                /* PreEnqueue plugins read objects (DynamicResources' claims) */
                ks_scheduler_view_enter(t.s);
                ks_status *gs = ks_framework_run_pre_enqueue(fw, p, 0, &plugin);
                ks_scheduler_view_exit(t.s);
                pp->gated = gs != NULL;
                ks_status_free(gs);
            }
            if (pp->gated) {
                if (t.pass == 1) report_gated(&t, p, fw);
                continue;
            }
            attempted++;
            t.cur = attempt_head(t.pass, p);
            t.nvictims = 0;
            ks_scheduler_attempt(t.s, pp->key);
            ks_api_dispatcher_drain(ks_scheduler_dispatcher(t.s));
            if (t.nvictims) {
                qsort(t.victims, t.nvictims, sizeof(char *), cmp_str);
                json_t *post = json_object_get(t.cur, "postfilter");
                if (post) {
                    json_t *v = json_array();
                    for (size_t k = 0; k < t.nvictims; k++) json_array_append_new(v, json_string(t.victims[k]));
                    json_object_set_new(post, "victims", v);
                }
                for (size_t k = 0; k < t.nvictims; k++) free(t.victims[k]);
            }
            ks_pod *bound = ks_memory_client_pod(t.mb, pp->key);
            if (bound && bound->node_name && bound->nresource_claims) add_devices(t.cur, cluster, bound);
            if (json_object_get(t.cur, "result")) emit(&t, t.cur);
            json_decref(t.cur);
            t.cur = NULL;
            ks_pod *now = ks_memory_client_pod(t.mb, pp->key);
            if (!now || now->node_name) pp->done = true;
        }
        if (t.changes == before || attempted == 0) break;
        /* The next pass takes the pods in the order recomputed from their
         * current priorities (unchanged: admission ran once). */
    }
    fputs("\n]}\n", out);
    ok = true;
done:
    if (t.s) ks_scheduler_free(t.s);
    ks_memory_client_free(t.mb);
    ks_clock_free(clock);
    free(t.victims);
    free(pend);
    free(profiles);
    return ok;
}
