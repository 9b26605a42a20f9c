/* Shadow mode: decide what another scheduler binds, write nothing (see
 * shadow.h). */
#include "kube/shadow.h"

#include "framework/status.h"
#include "metrics/metrics.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const agreement_names[KS_SHADOW_NAGREEMENT] = {"same-top", "feasible", "infeasible",
                                                                  "incomparable"};

const char *ks_shadow_agreement_name(ks_shadow_agreement a) {
    return a < KS_SHADOW_NAGREEMENT ? agreement_names[a] : "?";
}

/* What one attempt said about the pod being judged. */
typedef struct verdict {
    uint64_t key;
    ks_id real;             /* the node the real scheduler chose */
    bool attempted;
    ks_attempt_result result;
    bool real_evaluated, real_feasible, scored;
    char *real_message;     /* why ksched rejects the real node */
    char *message;          /* FitError or error message */
    char *chosen;           /* ksched's node */
    char *nominated;        /* ksched would preempt for this node */
    int64_t real_score, chosen_score, top_score;
    uint32_t evaluated, feasible, ntop;
} verdict;

struct ks_shadow {
    ks_cluster_client iface;
    const ks_cluster_client *inner;
    FILE *report;
    ks_scheduler *s;
    ks_observer obs;
    ks_watch_fn fn;
    void *arg;
    verdict cur; /* the pod being judged (under the inner backend's delivery) */
    /* Pending pods the real scheduler has nominated (key + 1): while one
     * waits for its victims to go, what either scheduler counts on the
     * nominated node differs. Under the inner backend's delivery. */
    ks_map nominated;
    pthread_mutex_t mu; /* stats, report */
    ks_shadow_stats stats;
    ks_metric *metric[KS_SHADOW_NAGREEMENT];
};

/* ---- the writes: none ------------------------------------------------------ */

/* Writes nothing: every binding, patch, deletion and event succeeds
 * unwritten. */
static ks_status *sh_execute(void *ctx, const ks_api_call *call) { return NULL; }

static bool sh_synced(void *ctx) {
    ks_shadow *sh = ctx;
    return !sh->inner->synced || sh->inner->synced(sh->inner->ctx);
}

static void sh_stop(void *ctx) {
    ks_shadow *sh = ctx;
    if (sh->inner->stop) sh->inner->stop(sh->inner->ctx);
}

/* ---- the observer -------------------------------------------------------- */

static void on_attempt(void *ctx, const ks_attempt_record *r) {
    ks_shadow *sh = ctx;
    verdict *v = &sh->cur;
    if (!v->key || r->pod->key != v->key) return;
    v->attempted = true;
    v->result = r->result;
    const char *real = ks_str(v->real);
    for (size_t i = 0; i < r->nevaluated; i++) {
        bool ok = !r->verdicts[i];
        v->evaluated++;
        v->feasible += ok;
        if (strcmp(ks_node_info_name(r->evaluated[i]), real) != 0) continue;
        v->real_evaluated = true;
        v->real_feasible = ok;
        if (!ok) v->real_message = ks_status_message(r->verdicts[i]);
    }
    if (!v->real_evaluated) {
        /* Not reached by Filter: PreFilter rejected the pod or left the
         * node out of its result. */
        if (r->pre_filter_status) v->real_message = ks_status_message(r->pre_filter_status);
        else if (r->pre_filter_excluded_reason) v->real_message = ks_xstrdup(r->pre_filter_excluded_reason);
    }
    if (r->chosen_node) v->chosen = ks_xstrdup(r->chosen_node);
    if (r->message) v->message = ks_xstrdup(r->message);
    else if (r->status && r->result != KS_ATTEMPT_SCHEDULED) v->message = ks_status_message(r->status);
    if (r->nominated_node && *r->nominated_node) v->nominated = ks_xstrdup(r->nominated_node);
    if (r->scores && r->scores->nnodes) {
        v->scored = true;
        v->top_score = INT64_MIN;
        for (size_t i = 0; i < r->scores->nnodes; i++)
            if (r->scores->total[i] > v->top_score) v->top_score = r->scores->total[i];
        for (size_t i = 0; i < r->scores->nnodes; i++) {
            const char *n = ks_node_info_name(r->scores->nodes[i]);
            int64_t t = r->scores->total[i];
            v->ntop += t == v->top_score;
            if (!strcmp(n, real)) v->real_score = t;
            if (v->chosen && !strcmp(n, v->chosen)) v->chosen_score = t;
        }
    }
}

/* ---- judging ------------------------------------------------------------- */

static ks_shadow_agreement verdict_of(const verdict *v, const ks_pod *old, const char **why);

/* A disagreement while another pod's preemption is under way is counted
 * apart: its nomination and its victims reach the two schedulers at
 * different moments. */
static ks_shadow_agreement classify(ks_shadow *sh, const verdict *v, const ks_pod *old, const char **why) {
    ks_shadow_agreement a = verdict_of(v, old, why);
    if (a == KS_SHADOW_FEASIBLE || a == KS_SHADOW_INFEASIBLE) {
        size_t others = sh->nominated.len - (ks_map_get(&sh->nominated, old->key + 1) != NULL);
        if (others) {
            *why = "another pod's preemption was under way";
            return KS_SHADOW_INCOMPARABLE;
        }
    }
    return a;
}

static ks_shadow_agreement verdict_of(const verdict *v, const ks_pod *old, const char **why) {
    *why = NULL;
    if (old->nominated_node) {
        *why = "the real scheduler nominated the pod (preemption)";
        return KS_SHADOW_INCOMPARABLE;
    }
    if (!v->attempted) {
        *why = "ksched had the pod in no queue it could pop it from";
        return KS_SHADOW_INCOMPARABLE;
    }
    switch (v->result) {
    case KS_ATTEMPT_SCHEDULED:
        if (v->real_evaluated && v->real_feasible) {
            /* one feasible node: no scores, it is the top */
            if (!v->scored) return KS_SHADOW_SAME_TOP;
            return v->real_score == v->top_score ? KS_SHADOW_SAME_TOP : KS_SHADOW_FEASIBLE;
        }
        if (v->real_evaluated || v->real_message) return KS_SHADOW_INFEASIBLE;
        *why = "ksched did not evaluate the real node";
        return KS_SHADOW_INCOMPARABLE;
    case KS_ATTEMPT_UNSCHEDULABLE:
        if (v->nominated) {
            *why = "ksched would preempt";
            return KS_SHADOW_INCOMPARABLE;
        }
        return KS_SHADOW_INFEASIBLE;
    case KS_ATTEMPT_ERROR: *why = "ksched's attempt ended in an error"; return KS_SHADOW_INCOMPARABLE;
    case KS_ATTEMPT_SKIPPED: *why = "ksched skipped the pod (deleting)"; return KS_SHADOW_INCOMPARABLE;
    }
    return KS_SHADOW_INCOMPARABLE;
}

static void report_line(ks_shadow *sh, const ks_pod *pod, const verdict *v, ks_shadow_agreement a,
                        const char *why) {
    json_t *o = json_object();
    char ts[KS_RFC3339_LEN];
    ks_time_format_now_rfc3339(true, ts);
    json_object_set_new(o, "time", json_string(ts));
    json_object_set_new(o, "namespace", json_string(ks_str(pod->ns)));
    json_object_set_new(o, "name", json_string(ks_str(pod->name)));
    json_object_set_new(o, "schedulerName", json_string(ks_str(pod->scheduler_name)));
    json_object_set_new(o, "node", json_string(ks_str(v->real)));
    json_object_set_new(o, "kschedNode", v->chosen ? json_string(v->chosen) : json_null());
    json_object_set_new(o, "agreement", json_string(ks_shadow_agreement_name(a)));
    if (why) json_object_set_new(o, "reason", json_string(why));
    json_t *rn = json_object();
    json_object_set_new(rn, "feasible", json_boolean(v->real_evaluated && v->real_feasible));
    if (v->real_message) json_object_set_new(rn, "message", json_string(v->real_message));
    if (v->scored && v->real_evaluated && v->real_feasible) json_object_set_new(rn, "score", json_integer(v->real_score));
    json_object_set_new(o, "nodeVerdict", rn);
    if (v->chosen) {
        json_t *cn = json_object();
        if (v->scored) json_object_set_new(cn, "score", json_integer(v->chosen_score));
        json_object_set_new(o, "kschedVerdict", cn);
    }
    if (v->scored) {
        json_object_set_new(o, "topScore", json_integer(v->top_score));
        json_object_set_new(o, "topNodes", json_integer(v->ntop));
    }
    json_object_set_new(o, "evaluatedNodes", json_integer(v->evaluated));
    json_object_set_new(o, "feasibleNodes", json_integer(v->feasible));
    if (v->message) json_object_set_new(o, "message", json_string(v->message));
    if (v->nominated) json_object_set_new(o, "kschedNominated", json_string(v->nominated));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s) {
        fputs(s, sh->report);
        fputc('\n', sh->report);
        fflush(sh->report);
    }
    free(s);
    json_decref(o);
}

/* A pending pod of ours was bound by someone else: decide it now, on the
 * cache as it stands (the binding not yet in it). */
static void judge(ks_shadow *sh, const ks_pod *old, const ks_pod *now) {
    if (!ks_scheduler_framework(sh->s, ks_str(old->scheduler_name))) return; /* not one of our profiles */
    verdict *v = &sh->cur;
    *v = (verdict){.key = old->key, .real = now->node_name};
    ks_scheduler_attempt(sh->s, old->key);
    /* the binding cycle's (no-op) API calls, so the attempt is over */
    ks_api_dispatcher_drain(ks_scheduler_dispatcher(sh->s));
    const char *why;
    ks_shadow_agreement a = classify(sh, v, old, &why);
    ks_counter_inc(sh->metric[a]);
    pthread_mutex_lock(&sh->mu);
    sh->stats.decisions[a]++;
    if (sh->report) report_line(sh, now, v, a, why);
    pthread_mutex_unlock(&sh->mu);
    if (a == KS_SHADOW_INFEASIBLE)
        ks_infof(1, "shadow: %s/%s bound to %s, which ksched finds infeasible: %s", ks_str(old->ns),
                 ks_str(old->name), ks_str(v->real), v->real_message ? v->real_message : v->message ? v->message : "");
    free(v->real_message);
    free(v->message);
    free(v->chosen);
    free(v->nominated);
    *v = (verdict){0};
}

static void track_nominated(ks_shadow *sh, const ks_watch_event *ev) {
    const ks_pod *p = ev->new_pod ? ev->new_pod : ev->old_pod;
    if (!p) return;
    if (ev->new_pod && !ev->new_pod->node_name && ev->new_pod->nominated_node)
        ks_map_put(&sh->nominated, p->key + 1, (void *)1);
    else
        ks_map_del(&sh->nominated, p->key + 1);
}

static void sh_watch(void *arg, const ks_watch_event *ev) {
    ks_shadow *sh = arg;
    if (sh->s && ev->kind == KS_KIND_POD && ev->type == KS_WATCH_MODIFIED && ev->old_pod && ev->new_pod &&
        !ev->old_pod->node_name && ev->new_pod->node_name)
        judge(sh, ev->old_pod, ev->new_pod);
    if (ev->kind == KS_KIND_POD) track_nominated(sh, ev);
    sh->fn(sh->arg, ev);
}

static ks_status *sh_start(void *ctx, ks_watch_fn fn, void *arg) {
    ks_shadow *sh = ctx;
    sh->fn = fn;
    sh->arg = arg;
    return sh->inner->start(sh->inner->ctx, sh_watch, sh);
}

/* ---- lifetime ------------------------------------------------------------ */

ks_shadow *ks_shadow_new(const ks_shadow_options *o) {
    ks_shadow *sh = ks_xcalloc(1, sizeof(*sh));
    sh->inner = o->inner;
    sh->report = o->report;
    pthread_mutex_init(&sh->mu, NULL);
    ks_map_init(&sh->nominated);
    /* No plugins' object writes (volume bindings, claim updates, pod
     * annotations): the plugins keep their assumptions, which the real
     * objects then replace. */
    sh->iface = (ks_cluster_client){.ctx = sh,
                             .start = sh_start,
                             .stop = sh_stop,
                             .synced = sh_synced,
                             .execute = sh_execute,
                             .executes = KS_CALLS_ALL & ~KS_CALL_BIT(KS_CALL_OBJECT_WRITE)};
    sh->obs = (ks_observer){.ctx = sh, .on_attempt = on_attempt};
    ks_metric_vec *v = ks_metrics_counter(ks_metrics_default(), "ksched_shadow_decisions_total",
                                          "Pods another scheduler bound while ksched ran in shadow mode, by "
                                          "whether ksched agreed with the node",
                                          KS_INTERNAL, "agreement");
    for (int i = 0; i < KS_SHADOW_NAGREEMENT; i++) sh->metric[i] = ks_metric_get(v, agreement_names[i]);
    return sh;
}

void ks_shadow_free(ks_shadow *sh) {
    if (!sh) return;
    pthread_mutex_destroy(&sh->mu);
    ks_map_free(&sh->nominated);
    free(sh);
}

const ks_cluster_client *ks_shadow_backend(ks_shadow *sh) { return &sh->iface; }
const ks_observer *ks_shadow_observer(ks_shadow *sh) { return &sh->obs; }
void ks_shadow_attach(ks_shadow *sh, ks_scheduler *s) { sh->s = s; }

void ks_shadow_stats_get(ks_shadow *sh, ks_shadow_stats *out) {
    pthread_mutex_lock(&sh->mu);
    *out = sh->stats;
    pthread_mutex_unlock(&sh->mu);
}
