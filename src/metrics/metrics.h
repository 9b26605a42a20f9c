/* A Prometheus metrics registry: counters, gauges and histograms with
 * labels, written in the text exposition format (0.0.4) the way
 * component-base's registry writes it (families sorted by name, label
 * pairs by label name, HELP prefixed with the stability level, numbers
 * as Go's strconv 'g' shortest format).
 *
 * Recording never takes a lock: a series (one label-value combination)
 * is found once with ks_metric_get (which locks the family) and then
 * updated with atomics. Histograms keep their buckets in per-thread
 * shards so that threads recording at once do not share cache lines.
 * Series are never removed; their memory lives as long as the registry.
 *
 * Writers may run at any time; a series updated while it is written is
 * seen before or after the update (a histogram's count, sum and buckets
 * are each read once, so they may disagree by in-flight observations;
 * the +Inf bucket always equals _count). */
#ifndef KS_METRICS_H
#define KS_METRICS_H

#include "util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ks_stability {
    KS_ALPHA = 0,
    KS_BETA,
    KS_STABLE,
    KS_INTERNAL, /* HELP without a stability prefix (ksched's own, process_*) */
} ks_stability;

typedef enum ks_metric_type { KS_COUNTER = 0, KS_GAUGE, KS_HISTOGRAM } ks_metric_type;

typedef struct ks_metrics ks_metrics;       /* a registry */
typedef struct ks_metric_vec ks_metric_vec; /* a family: name, help, label names */
typedef struct ks_metric ks_metric;         /* one series of a family */

ks_metrics *ks_metrics_new(void);
void ks_metrics_free(ks_metrics *r);
/* The process-wide registry the scheduler records into (made on first use,
 * never freed). */
ks_metrics *ks_metrics_default(void);

/* Define a family. labels: comma-separated label names ("result,profile"),
 * NULL or "" for none. Defining a name twice returns the first definition
 * (the type, help and labels must agree; NULL when they do not). */
ks_metric_vec *ks_metrics_counter(ks_metrics *r, const char *name, const char *help, ks_stability st,
                                  const char *labels);
ks_metric_vec *ks_metrics_gauge(ks_metrics *r, const char *name, const char *help, ks_stability st,
                                const char *labels);
/* buckets: upper bounds, strictly increasing (+Inf is implicit). */
ks_metric_vec *ks_metrics_histogram(ks_metrics *r, const char *name, const char *help, ks_stability st,
                                    const char *labels, const double *buckets, size_t nbuckets);

/* Bucket helpers as component-base's (count values, written to out). */
void ks_buckets_exponential(double start, double factor, size_t count, double *out);
void ks_buckets_linear(double start, double width, size_t count, double *out);

/* The series for these label values (as many as the family has label
 * names, in the order they were given), made on first use. Locks the
 * family: callers on hot paths keep the pointer. NULL values read as "". */
ks_metric *ks_metric_get(ks_metric_vec *v, ...);
ks_metric *ks_metric_getv(ks_metric_vec *v, const char *const *values);
/* ks_metric_get through a cache slot (a zero-initialised pointer): the
 * lookup happens once per slot. */
ks_metric *ks_metric_cached(ks_metric *_Atomic *slot, ks_metric_vec *v, const char *const *values);

void ks_counter_add(ks_metric *m, uint64_t n);
static inline void ks_counter_inc(ks_metric *m) { ks_counter_add(m, 1); }
void ks_gauge_set(ks_metric *m, double v);
void ks_gauge_add(ks_metric *m, double d);
void ks_histogram_observe(ks_metric *m, double v);
/* Several observations of the same value at once (count of them). */
void ks_histogram_observe_n(ks_metric *m, double v, uint64_t count);

/* Reading back (tests, /debug pages). */
uint64_t ks_counter_value(const ks_metric *m);
double ks_gauge_value(const ks_metric *m);
void ks_histogram_totals(const ks_metric *m, uint64_t *count, double *sum);
ks_metric_type ks_metric_vec_type(const ks_metric_vec *v);
/* Visit every series of a family: the label values (in definition
 * order) and the series. Under the family lock: fn must not record
 * into a new series of the same family. */
void ks_metric_vec_foreach(ks_metric_vec *v, void (*fn)(void *arg, const char *const *values, ks_metric *m),
                           void *arg);
/* Set every series of a gauge family to 0 (a collector about to set the
 * current ones). */
void ks_gauge_vec_zero(ks_metric_vec *v);

/* Collectors run before each write (to set gauges from state kept
 * elsewhere: queue lengths, cache sizes). They run one at a time, in the
 * order added. */
typedef void (*ks_metrics_collect_fn)(void *arg);
void ks_metrics_add_collector(ks_metrics *r, ks_metrics_collect_fn fn, void *arg);
void ks_metrics_remove_collector(ks_metrics *r, ks_metrics_collect_fn fn, void *arg);

/* Append the whole registry in the text format. */
void ks_metrics_write(ks_metrics *r, ks_strbuf *out);
#define KS_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A number as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it
 * ("0.001", "1e-05", "2.5e+06", "+Inf", "NaN"). buf: at least 32 bytes. */
void ks_format_go_float(double v, char *buf, size_t n);

/* Process metrics (process_start_time_seconds, process_cpu_seconds_total,
 * process_resident_memory_bytes, process_open_fds, ...) as the Go client's
 * process collector names them. */
void ks_metrics_register_process(ks_metrics *r);

#endif
