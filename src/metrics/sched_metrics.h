/* The scheduler's metrics, as kube-scheduler v1.34 defines them
 * (pkg/scheduler/metrics/metrics.go: names, help, labels, buckets,
 * stability levels), plus the API client's (rest_client_*) and ksched's
 * own (ksched_*), all in the default registry.
 *
 * The families are defined on the first call of ks_sm(); recording goes
 * through the vec pointers with the helpers of metrics.h (hot paths keep
 * the series they use: see framework/fw_metrics.h). */
#ifndef KS_SCHED_METRICS_H
#define KS_SCHED_METRICS_H

#include "metrics/metrics.h"

#include <stdbool.h>

/* extension_point label values (upstream metrics.ExtentionPoints and
 * PreBindPreFlight), plus PreEnqueue for the queue's plugin timing. */
typedef enum ks_mep {
    KS_MEP_PRE_FILTER = 0,
    KS_MEP_FILTER,
    KS_MEP_PRE_FILTER_ADD_POD,
    KS_MEP_PRE_FILTER_REMOVE_POD,
    KS_MEP_POST_FILTER,
    KS_MEP_PRE_SCORE,
    KS_MEP_SCORE,
    KS_MEP_NORMALIZE_SCORE,
    KS_MEP_PRE_BIND,
    KS_MEP_PRE_BIND_PRE_FLIGHT,
    KS_MEP_BIND,
    KS_MEP_POST_BIND,
    KS_MEP_RESERVE,
    KS_MEP_UNRESERVE,
    KS_MEP_PERMIT,
    KS_MEP_PRE_ENQUEUE,
    KS_MEP_COUNT
} ks_mep;

const char *ks_mep_name(ks_mep ep); /* "PreFilter", "ScoreExtensionNormalize", ... */

/* Upstream samples plugin execution durations on this share of the
 * scheduling cycles (pluginMetricsSamplePercent). */
#define KS_PLUGIN_METRICS_SAMPLE_PERCENT 10

typedef struct ks_sched_metrics {
    ks_metrics *reg;
    /* pkg/scheduler/metrics */
    ks_metric_vec *schedule_attempts;           /* result, profile */
    ks_metric_vec *event_handling_duration;     /* event */
    ks_metric_vec *scheduling_attempt_duration; /* result, profile */
    ks_metric_vec *scheduling_algorithm_duration;
    ks_metric_vec *preemption_victims;
    ks_metric_vec *preemption_attempts;
    ks_metric_vec *pending_pods;                /* queue */
    ks_metric_vec *inflight_events;             /* event */
    ks_metric_vec *goroutines;                  /* operation */
    ks_metric_vec *pod_scheduling_sli_duration; /* attempts */
    ks_metric_vec *pod_scheduling_attempts;
    ks_metric_vec *framework_extension_point_duration; /* extension_point, status, profile */
    ks_metric_vec *plugin_execution_duration;          /* plugin, extension_point, status */
    ks_metric_vec *queueing_hint_execution_duration;   /* plugin, event, hint */
    ks_metric_vec *queue_incoming_pods;                /* queue, event */
    ks_metric_vec *permit_wait_duration;               /* result */
    ks_metric_vec *cache_size;                         /* type */
    ks_metric_vec *unschedulable_pods;                 /* plugin, profile */
    ks_metric_vec *plugin_evaluation_total;            /* plugin, extension_point, profile */
    ks_metric_vec *preemption_goroutines_duration;     /* result */
    ks_metric_vec *preemption_goroutines_execution;    /* result */
    ks_metric_vec *async_api_call_execution;           /* call_type, result */
    ks_metric_vec *async_api_call_duration;            /* call_type, result */
    ks_metric_vec *pending_async_api_calls;            /* call_type */
    ks_metric_vec *volume_binder_cache_requests;       /* operation */
    ks_metric_vec *volume_scheduling_stage_error;      /* operation */
    /* client-go's rest client metrics (component-base/metrics/prometheus/restclient) */
    ks_metric_vec *rest_client_requests;         /* code, host, method */
    ks_metric_vec *rest_client_request_duration; /* host, verb */
    ks_metric_vec *rest_client_rate_limiter_duration; /* host, verb */
    ks_metric_vec *rest_client_request_retries;       /* code, verb, host */
    /* ksched's own */
    ks_metric_vec *ksched_events_dropped;   /* reason */
    ks_metric_vec *ksched_relists;          /* resource */
    ks_metric_vec *ksched_k8s_events_dropped; /* reason */
    ks_metric_vec *ksched_watch_restarts;   /* resource, reason */
} ks_sched_metrics;

/* The families in the default registry (defined on first call). */
const ks_sched_metrics *ks_sm(void);

/* The attempts label of scheduler_pod_scheduling_sli_duration_seconds:
 * "1".."14", "15+". buf: 8 bytes. */
const char *ks_sm_attempts_label(uint32_t attempts, char *buf);

/* ---- for the API client and the informers (src/kube) ---------------------- */

/* One API request answered (code 0: no answer) after seconds; method
 * "GET", "POST", ...; host "127.0.0.1:6443". */
void ks_sm_rest_request(const char *method, const char *host, long code, double seconds);
/* A request retried after an answer with this code (0: none). */
void ks_sm_rest_retry(const char *method, const char *host, long code);
/* Time a request waited for the client's rate limiter. */
void ks_sm_rest_rate_limited(const char *method, const char *host, double seconds);
/* A watch event the informer could not take (reason: "decode", "queue_full",
 * ...). */
void ks_sm_event_dropped(const char *reason);
/* A Kubernetes Event the recorder did not write (reason: "queue_full",
 * "shutdown", "rejected", "failed"). */
void ks_sm_k8s_event_dropped(const char *reason, uint64_t n);
/* A full relist of a resource ("pods", "nodes", ...). */
void ks_sm_relist(const char *resource);
/* A watch restarted (reason: "expired" for 410, "closed", "error", "timeout"). */
void ks_sm_watch_restart(const char *resource, const char *reason);

/* ---- plugin timing report (/debug/plugins) ---------------------------------- */

/* Per plugin and extension point, from the sampled execution durations:
 * sampled calls, their total and mean time, and for the points whose
 * calls are all counted (plugin_evaluation_total) the estimated total
 * time; slowest (estimated, else sampled total) first. json: an array of
 * objects instead of a table. */
void ks_plugin_timing_report(ks_strbuf *out, bool json);

#endif
