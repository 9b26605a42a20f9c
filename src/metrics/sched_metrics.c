#include "metrics/sched_metrics.h"

#include "util/xalloc.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mep_names[KS_MEP_COUNT] = {
    [KS_MEP_PRE_FILTER] = "PreFilter",
    [KS_MEP_FILTER] = "Filter",
    [KS_MEP_PRE_FILTER_ADD_POD] = "PreFilterExtensionAddPod",
    [KS_MEP_PRE_FILTER_REMOVE_POD] = "PreFilterExtensionRemovePod",
    [KS_MEP_POST_FILTER] = "PostFilter",
    [KS_MEP_PRE_SCORE] = "PreScore",
    [KS_MEP_SCORE] = "Score",
    [KS_MEP_NORMALIZE_SCORE] = "ScoreExtensionNormalize",
    [KS_MEP_PRE_BIND] = "PreBind",
    [KS_MEP_PRE_BIND_PRE_FLIGHT] = "PreBindPreFlight",
    [KS_MEP_BIND] = "Bind",
    [KS_MEP_POST_BIND] = "PostBind",
    [KS_MEP_RESERVE] = "Reserve",
    [KS_MEP_UNRESERVE] = "Unreserve",
    [KS_MEP_PERMIT] = "Permit",
    [KS_MEP_PRE_ENQUEUE] = "PreEnqueue",
};

const char *ks_mep_name(ks_mep ep) { return (unsigned)ep < KS_MEP_COUNT ? mep_names[ep] : "Unknown"; }

static ks_sched_metrics sm;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic bool defined;

static void define_all(void) {
    ks_metrics *r = ks_metrics_default();
    sm.reg = r;
    double b[24];

    sm.schedule_attempts = ks_metrics_counter(
        r, "scheduler_schedule_attempts_total",
        "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, "
        "while 'error' means an internal scheduler problem.",
        KS_STABLE, "result,profile");
    ks_buckets_exponential(0.0001, 2, 12, b);
    sm.event_handling_duration = ks_metrics_histogram(r, "scheduler_event_handling_duration_seconds",
                                                      "Event handling latency in seconds.", KS_ALPHA, "event", b, 12);
    ks_buckets_exponential(0.001, 2, 15, b);
    sm.scheduling_attempt_duration =
        ks_metrics_histogram(r, "scheduler_scheduling_attempt_duration_seconds",
                             "Scheduling attempt latency in seconds (scheduling algorithm + binding)", KS_STABLE,
                             "result,profile", b, 15);
    sm.scheduling_algorithm_duration = ks_metrics_histogram(r, "scheduler_scheduling_algorithm_duration_seconds",
                                                            "Scheduling algorithm latency in seconds", KS_ALPHA,
                                                            NULL, b, 15);
    ks_buckets_exponential(1, 2, 7, b);
    sm.preemption_victims = ks_metrics_histogram(r, "scheduler_preemption_victims",
                                                 "Number of selected preemption victims", KS_STABLE, NULL, b, 7);
    sm.preemption_attempts = ks_metrics_counter(r, "scheduler_preemption_attempts_total",
                                                "Total preemption attempts in the cluster till now", KS_STABLE, NULL);
    sm.pending_pods = ks_metrics_gauge(
        r, "scheduler_pending_pods",
        "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
        "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler "
        "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never "
        "attempted to schedule because they are gated.",
        KS_STABLE, "queue");
    sm.inflight_events = ks_metrics_gauge(r, "scheduler_inflight_events",
                                          "Number of events currently tracked in the scheduling queue.", KS_ALPHA,
                                          "event");
    sm.goroutines = ks_metrics_gauge(r, "scheduler_goroutines",
                                     "Number of running goroutines split by the work they do such as binding.",
                                     KS_ALPHA, "operation");
    ks_buckets_exponential(0.01, 2, 20, b);
    sm.pod_scheduling_sli_duration = ks_metrics_histogram(
        r, "scheduler_pod_scheduling_sli_duration_seconds",
        "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
        "involve multiple scheduling attempts.",
        KS_BETA, "attempts", b, 20);
    ks_buckets_exponential(1, 2, 5, b);
    sm.pod_scheduling_attempts = ks_metrics_histogram(r, "scheduler_pod_scheduling_attempts",
                                                      "Number of attempts to successfully schedule a pod.",
                                                      KS_STABLE, NULL, b, 5);
    ks_buckets_exponential(0.0001, 2, 12, b);
    sm.framework_extension_point_duration = ks_metrics_histogram(
        r, "scheduler_framework_extension_point_duration_seconds",
        "Latency for running all plugins of a specific extension point.", KS_STABLE,
        "extension_point,status,profile", b, 12);
    ks_buckets_exponential(0.00001, 1.5, 20, b);
    sm.plugin_execution_duration = ks_metrics_histogram(
        r, "scheduler_plugin_execution_duration_seconds",
        "Duration for running a plugin at a specific extension point.", KS_ALPHA,
        "plugin,extension_point,status", b, 20);
    sm.queueing_hint_execution_duration = ks_metrics_histogram(
        r, "scheduler_queueing_hint_execution_duration_seconds",
        "Duration for running a queueing hint function of a plugin.", KS_ALPHA, "plugin,event,hint", b, 20);
    sm.queue_incoming_pods = ks_metrics_counter(r, "scheduler_queue_incoming_pods_total",
                                                "Number of pods added to scheduling queues by event and queue type.",
                                                KS_STABLE, "queue,event");
    ks_buckets_exponential(0.001, 2, 15, b);
    sm.permit_wait_duration = ks_metrics_histogram(r, "scheduler_permit_wait_duration_seconds",
                                                   "Duration of waiting on permit.", KS_ALPHA, "result", b, 15);
    sm.cache_size = ks_metrics_gauge(r, "scheduler_cache_size",
                                     "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                                     KS_ALPHA, "type");
    sm.unschedulable_pods = ks_metrics_gauge(
        r, "scheduler_unschedulable_pods",
        "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all "
        "plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
        KS_ALPHA, "plugin,profile");
    sm.plugin_evaluation_total = ks_metrics_counter(
        r, "scheduler_plugin_evaluation_total",
        "Number of attempts to schedule pods by each plugin and the extension point (available only in "
        "PreFilter, Filter, PreScore, and Score).",
        KS_ALPHA, "plugin,extension_point,profile");
    ks_buckets_exponential(0.01, 2, 20, b);
    sm.preemption_goroutines_duration = ks_metrics_histogram(r, "scheduler_preemption_goroutines_duration_seconds",
                                                             "Duration in seconds for running goroutines for the "
                                                             "preemption.",
                                                             KS_ALPHA, "result", b, 20);
    sm.preemption_goroutines_execution = ks_metrics_counter(r, "scheduler_preemption_goroutines_execution_total",
                                                            "Number of preemption goroutines executed.", KS_ALPHA,
                                                            "result");
    sm.async_api_call_execution = ks_metrics_counter(r, "scheduler_async_api_call_execution_total",
                                                     "Total number of API calls executed by the async dispatcher.",
                                                     KS_ALPHA, "call_type,result");
    ks_buckets_exponential(0.001, 2, 15, b);
    sm.async_api_call_duration = ks_metrics_histogram(
        r, "scheduler_async_api_call_execution_duration_seconds",
        "Duration in seconds for executing API call in the async dispatcher.", KS_ALPHA, "call_type,result", b, 15);
    sm.pending_async_api_calls = ks_metrics_gauge(r, "scheduler_pending_async_api_calls",
                                                  "Number of API calls currently pending in the async queue.",
                                                  KS_ALPHA, "call_type");
    sm.volume_binder_cache_requests = ks_metrics_counter(r, "scheduler_volume_binder_cache_requests_total",
                                                         "Total number for request volume binding cache", KS_ALPHA,
                                                         "operation");
    sm.volume_scheduling_stage_error = ks_metrics_counter(r, "scheduler_volume_scheduling_stage_error_total",
                                                          "Volume scheduling stage error count", KS_ALPHA,
                                                          "operation");

    static const double rest_buckets[] = {0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0};
    sm.rest_client_request_duration =
        ks_metrics_histogram(r, "rest_client_request_duration_seconds",
                             "Request latency in seconds. Broken down by verb, and host.", KS_ALPHA, "verb,host",
                             rest_buckets, 12);
    sm.rest_client_rate_limiter_duration =
        ks_metrics_histogram(r, "rest_client_rate_limiter_duration_seconds",
                             "Client side rate limiter latency in seconds. Broken down by verb, and host.", KS_ALPHA,
                             "verb,host", rest_buckets, 12);
    sm.rest_client_requests = ks_metrics_counter(
        r, "rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host.",
        KS_ALPHA, "code,method,host");
    sm.rest_client_request_retries = ks_metrics_counter(
        r, "rest_client_request_retries_total",
        "Number of request retries, partitioned by status code, verb, and host.", KS_ALPHA, "code,verb,host");

    sm.ksched_events_dropped = ks_metrics_counter(
        r, "ksched_watch_events_dropped_total",
        "Watch events the informers could not use, by reason (the object is relisted instead).", KS_INTERNAL,
        "reason");
    sm.ksched_k8s_events_dropped = ks_metrics_counter(
        r, "ksched_events_dropped_total",
        "Events (events.k8s.io) not written to the API server, by reason: the recorder's queue was full, "
        "they were still queued at shutdown, the API server refused them, or it never answered.",
        KS_INTERNAL, "reason");
    sm.ksched_relists = ks_metrics_counter(r, "ksched_relists_total", "Full relists of a resource, by resource.",
                                           KS_INTERNAL, "resource");
    sm.ksched_watch_restarts = ks_metrics_counter(r, "ksched_watch_restarts_total",
                                                  "Watches restarted, by resource and reason.", KS_INTERNAL,
                                                  "resource,reason");
    ks_metrics_register_process(r);
    atomic_store_explicit(&defined, true, memory_order_release);
}

const ks_sched_metrics *ks_sm(void) {
    /* Called on every recording: skip pthread_once once defined. */
    if (!atomic_load_explicit(&defined, memory_order_acquire)) pthread_once(&once, define_all);
    return &sm;
}

const char *ks_sm_attempts_label(uint32_t attempts, char *buf) {
    if (attempts >= 15) return "15+";
    snprintf(buf, 8, "%u", attempts);
    return buf;
}

/* ---- client and informers ------------------------------------------------------ */

void ks_sm_rest_request(const char *method, const char *host, long code, double seconds) {
    const ks_sched_metrics *m = ks_sm();
    char c[24];
    if (code > 0) snprintf(c, sizeof(c), "%ld", code);
    else snprintf(c, sizeof(c), "<error>");
    ks_counter_inc(ks_metric_get(m->rest_client_requests, c, method, host));
    ks_histogram_observe(ks_metric_get(m->rest_client_request_duration, method, host), seconds);
}

void ks_sm_rest_retry(const char *method, const char *host, long code) {
    char c[24];
    if (code > 0) snprintf(c, sizeof(c), "%ld", code);
    else snprintf(c, sizeof(c), "<error>");
    ks_counter_inc(ks_metric_get(ks_sm()->rest_client_request_retries, c, method, host));
}

void ks_sm_rest_rate_limited(const char *method, const char *host, double seconds) {
    ks_histogram_observe(ks_metric_get(ks_sm()->rest_client_rate_limiter_duration, method, host), seconds);
}

void ks_sm_event_dropped(const char *reason) {
    ks_counter_inc(ks_metric_get(ks_sm()->ksched_events_dropped, reason));
}

void ks_sm_k8s_event_dropped(const char *reason, uint64_t n) {
    ks_counter_add(ks_metric_get(ks_sm()->ksched_k8s_events_dropped, reason), n);
}

void ks_sm_relist(const char *resource) { ks_counter_inc(ks_metric_get(ks_sm()->ksched_relists, resource)); }

void ks_sm_watch_restart(const char *resource, const char *reason) {
    ks_counter_inc(ks_metric_get(ks_sm()->ksched_watch_restarts, resource, reason));
}

/* ---- plugin timing ---------------------------------------------------------------- */

typedef struct timing_row {
    char *plugin, *point;
    uint64_t sampled;   /* observations */
    double seconds;     /* their sum */
    uint64_t calls;     /* plugin_evaluation_total over profiles, 0 when not counted */
    double estimated;   /* calls x mean, or the sampled total */
} timing_row;

typedef struct timing_rows {
    timing_row *v;
    size_t n, cap;
} timing_rows;

static timing_row *row_for(timing_rows *rs, const char *plugin, const char *point) {
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->v[i].plugin, plugin) == 0 && strcmp(rs->v[i].point, point) == 0) return &rs->v[i];
    KS_GROW(rs->v, rs->cap, rs->n + 1);
    timing_row *r = &rs->v[rs->n++];
    memset(r, 0, sizeof(*r));
    r->plugin = ks_xstrdup(plugin);
    r->point = ks_xstrdup(point);
    return r;
}

static void add_duration(void *arg, const char *const *values, ks_metric *m) {
    /* plugin, extension_point, status */
    uint64_t c;
    double s;
    ks_histogram_totals(m, &c, &s);
    if (!c) return;
    timing_row *r = row_for(arg, values[0], values[1]);
    r->sampled += c;
    r->seconds += s;
}

static void add_evaluations(void *arg, const char *const *values, ks_metric *m) {
    /* plugin, extension_point, profile: only rows that have samples */
    timing_rows *rs = arg;
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->v[i].plugin, values[0]) == 0 && strcmp(rs->v[i].point, values[1]) == 0)
            rs->v[i].calls += ks_counter_value(m);
}

static int cmp_rows(const void *x, const void *y) {
    const timing_row *a = x, *b = y;
    if (a->estimated != b->estimated) return a->estimated < b->estimated ? 1 : -1;
    int c = strcmp(a->plugin, b->plugin);
    return c ? c : strcmp(a->point, b->point);
}

static void json_str(ks_strbuf *b, const char *s) {
    ks_sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') ks_sb_putc(b, '\\');
        if ((unsigned char)*s < 0x20) ks_sb_printf(b, "\\u%04x", *s);
        else ks_sb_putc(b, *s);
    }
    ks_sb_putc(b, '"');
}

void ks_plugin_timing_report(ks_strbuf *out, bool json) {
    const ks_sched_metrics *m = ks_sm();
    timing_rows rs = {0};
    ks_metric_vec_foreach(m->plugin_execution_duration, add_duration, &rs);
    ks_metric_vec_foreach(m->plugin_evaluation_total, add_evaluations, &rs);
    for (size_t i = 0; i < rs.n; i++) {
        timing_row *r = &rs.v[i];
        double mean = r->sampled ? r->seconds / (double)r->sampled : 0;
        r->estimated = r->calls > r->sampled ? mean * (double)r->calls : r->seconds;
    }
    if (rs.n) qsort(rs.v, rs.n, sizeof(*rs.v), cmp_rows);
    if (json) {
        ks_sb_putc(out, '[');
        for (size_t i = 0; i < rs.n; i++) {
            timing_row *r = &rs.v[i];
            char a[48], b2[48], c[48];
            ks_format_go_float(r->seconds, a, sizeof(a));
            ks_format_go_float(r->sampled ? r->seconds / (double)r->sampled : 0, b2, sizeof(b2));
            ks_format_go_float(r->estimated, c, sizeof(c));
            if (i) ks_sb_putc(out, ',');
            ks_sb_puts(out, "{\"plugin\":");
            json_str(out, r->plugin);
            ks_sb_puts(out, ",\"extensionPoint\":");
            json_str(out, r->point);
            ks_sb_printf(out,
                         ",\"sampledCalls\":%llu,\"sampledSeconds\":%s,\"meanSeconds\":%s,\"calls\":%llu,"
                         "\"estimatedSeconds\":%s}",
                         (unsigned long long)r->sampled, a, b2, (unsigned long long)r->calls, c);
        }
        ks_sb_puts(out, "]\n");
    } else {
        ks_sb_puts(out,
                   "# Plugin execution time, slowest first, from scheduler_plugin_execution_duration_seconds:\n"
                   "# SAMPLED calls were timed (by default 10% of the scheduling cycles, as kube-scheduler,\n"
                   "# and of those one call in 32 at the per-node points Filter, Score, AddPod, RemovePod;\n"
                   "# `ksched simulate --plugin-timing` times every call). CALLS counts every call where\n"
                   "# scheduler_plugin_evaluation_total does (non-skipped PreFilter, Filter, PreScore, Score);\n"
                   "# ESTIMATED = CALLS x MEAN there, the sampled total elsewhere.\n");
        ks_sb_printf(out, "%-32s %-28s %10s %12s %10s %12s %14s\n", "PLUGIN", "EXTENSION POINT", "SAMPLED",
                     "SAMPLED(ms)", "MEAN(us)", "CALLS", "ESTIMATED(ms)");
        for (size_t i = 0; i < rs.n; i++) {
            timing_row *r = &rs.v[i];
            double mean_us = r->sampled ? r->seconds / (double)r->sampled * 1e6 : 0;
            ks_sb_printf(out, "%-32s %-28s %10llu %12.3f %10.3f %12llu %14.3f\n", r->plugin, r->point,
                         (unsigned long long)r->sampled, r->seconds * 1e3, mean_us, (unsigned long long)r->calls,
                         r->estimated * 1e3);
        }
    }
    for (size_t i = 0; i < rs.n; i++) {
        free(rs.v[i].plugin);
        free(rs.v[i].point);
    }
    free(rs.v);
}
