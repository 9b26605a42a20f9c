/* What the framework and the scheduling cycle record into the scheduler
 * metrics (metrics/sched_metrics.h), with the series each profile uses
 * looked up once and kept here: recording is an atomic add, never a lock.
 *
 * Plugin execution durations are measured only in the cycles picked by
 * ks_fwm_sample() (10%, upstream's pluginMetricsSamplePercent), which the
 * scheduling cycle stores in the cycle state's record_plugin_metrics. */
#ifndef KS_FW_METRICS_H
#define KS_FW_METRICS_H

#include "metrics/sched_metrics.h"
#include "util/clock.h"

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stdint.h>

struct ks_framework;
struct ks_cycle_state;
typedef struct ks_fw_metrics ks_fw_metrics;

#define KS_FWM_CODES 8 /* ks_code values */

ks_fw_metrics *ks_fw_metrics_new(const struct ks_framework *fw);
void ks_fw_metrics_free(ks_fw_metrics *m);

/* Whether this cycle of fw measures its plugins (true 10% of the time). */
bool ks_fwm_sample(const struct ks_framework *fw);

static inline int64_t ks_fwm_now(void) { return ks_monotonic_ns(); }

/* scheduler_framework_extension_point_duration_seconds: now - start_ns. */
void ks_fwm_point(const struct ks_framework *fw, ks_mep ep, ks_code code, int64_t start_ns);
/* scheduler_plugin_execution_duration_seconds of plugin (its index in the
 * profile). */
void ks_fwm_plugin(const struct ks_framework *fw, unsigned plugin, ks_mep ep, ks_code code, int64_t ns);
/* scheduler_plugin_evaluation_total += n (PreFilter, Filter, PreScore,
 * Score). */
void ks_fwm_evals(const struct ks_framework *fw, unsigned plugin, ks_mep ep, uint64_t n);

/* A plugin call timed when the cycle is sampled: t = ks_fwm_start(st)
 * before, ks_fwm_done(fw, t, ...) after (t is 0 when not sampled). */
int64_t ks_fwm_start(const struct ks_cycle_state *st);
static inline void ks_fwm_done(const struct ks_framework *fw, int64_t t, unsigned plugin, ks_mep ep,
                               const ks_status *s) {
    if (t) ks_fwm_plugin(fw, plugin, ep, ks_status_code(s), ks_monotonic_ns() - t);
}

/* The per-node points (Filter, Score, PreFilter AddPod/RemovePod) run
 * hundreds of times a cycle, a few tens of nanoseconds each: timing every
 * call of a sampled cycle would cost more than the calls. In a sampled
 * cycle one call in KS_FWM_NODE_SAMPLE of them is timed (per thread),
 * which keeps the distribution at a fraction of the cost. */
#define KS_FWM_NODE_SAMPLE 32
/* node_mask: the framework's (ks_fwm_node_mask), one less than a power of
 * two. */
static inline bool ks_fwm_node_sampled(unsigned node_mask) {
    static _Thread_local unsigned tick __attribute__((tls_model("initial-exec")));
    return (++tick & node_mask) == 0;
}
unsigned ks_fwm_node_mask(const struct ks_framework *fw);

/* The sampling of the frameworks made from now on (each keeps what it
 * was made with): percent of the cycles, and one per-node call in
 * node_every (a power of two). `ksched simulate --plugin-timing` times
 * every call with (100, 1). */
void ks_fwm_set_sampling(unsigned percent, unsigned node_every);

/* The attempt results of scheduler_schedule_attempts_total. */
typedef enum ks_fwm_result { KS_FWM_SCHEDULED = 0, KS_FWM_UNSCHEDULABLE, KS_FWM_ERROR } ks_fwm_result;

/* An attempt over (counted, and its duration since start_ns observed). */
void ks_fwm_attempt(const struct ks_framework *fw, ks_fwm_result r, int64_t start_ns);
/* A pod bound: scheduler_pod_scheduling_attempts and the SLI duration
 * (sli_seconds since it first entered the queue; < 0: unknown). */
void ks_fwm_pod_scheduled(uint32_t attempts, double sli_seconds);
/* scheduler_scheduling_algorithm_duration_seconds since start_ns. */
void ks_fwm_algorithm(int64_t start_ns);

#endif
