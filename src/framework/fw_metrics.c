#include "framework/fw_metrics.h"

#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "util/xalloc.h"

#include <stdatomic.h>
#include <stdlib.h>

/* The evaluation counter exists for these four points only. */
static int eval_slot(ks_mep ep) {
    switch (ep) {
    case KS_MEP_PRE_FILTER: return 0;
    case KS_MEP_FILTER: return 1;
    case KS_MEP_PRE_SCORE: return 2;
    case KS_MEP_SCORE: return 3;
    default: return -1;
    }
}

struct ks_fw_metrics {
    char *profile;
    uint32_t nplugins;
    const char **plugin_names;
    ks_metric *_Atomic point[KS_MEP_COUNT][KS_FWM_CODES];
    ks_metric *_Atomic *plugin; /* [nplugins][KS_MEP_COUNT][KS_FWM_CODES] */
    ks_metric *_Atomic *evals;  /* [nplugins][4] */
    ks_metric *_Atomic attempts[3], *_Atomic durations[3];
    unsigned sample_percent, node_mask; /* the sampling when it was made */
};

/* ks_fwm_set_sampling's, for the frameworks made next. */
static _Atomic unsigned default_percent = KS_PLUGIN_METRICS_SAMPLE_PERCENT;
static _Atomic unsigned default_node_mask = KS_FWM_NODE_SAMPLE - 1;

ks_fw_metrics *ks_fw_metrics_new(const ks_framework *fw) {
    ks_sm(); /* the families exist before any recording */
    ks_fw_metrics *m = ks_xcalloc(1, sizeof(*m));
    m->profile = ks_xstrdup(fw->profile_name);
    m->nplugins = fw->nplugins;
    m->plugin_names = ks_xcalloc(fw->nplugins ? fw->nplugins : 1, sizeof(char *));
    for (uint32_t i = 0; i < fw->nplugins; i++) m->plugin_names[i] = fw->plugins[i].name;
    size_t n = (size_t)(fw->nplugins ? fw->nplugins : 1);
    m->plugin = ks_xcalloc(n * KS_MEP_COUNT * KS_FWM_CODES, sizeof(*m->plugin));
    m->evals = ks_xcalloc(n * 4, sizeof(*m->evals));
    m->sample_percent = atomic_load(&default_percent);
    m->node_mask = atomic_load(&default_node_mask);
    return m;
}

void ks_fw_metrics_free(ks_fw_metrics *m) {
    if (!m) return;
    /* The series stay in the registry: only the cache goes. */
    free(m->profile);
    free(m->plugin_names);
    free(m->plugin);
    free(m->evals);
    free(m);
}

void ks_fwm_set_sampling(unsigned percent, unsigned node_every) {
    atomic_store(&default_percent, percent > 100 ? 100 : percent);
    unsigned m = 1;
    while (m < node_every && m < (1u << 30)) m <<= 1;
    atomic_store(&default_node_mask, m - 1);
}

unsigned ks_fwm_node_mask(const ks_framework *fw) {
    return fw->metrics ? fw->metrics->node_mask : KS_FWM_NODE_SAMPLE - 1;
}

bool ks_fwm_sample(const ks_framework *fw) {
    /* xorshift per thread: which cycles are sampled needs no quality and
     * must not touch the scheduler's seeded tie-breaking generator. */
    static _Thread_local uint32_t x __attribute__((tls_model("initial-exec")));
    if (!x) x = (uint32_t)(uintptr_t)&x ^ (uint32_t)ks_monotonic_ns() ^ 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x % 100 < (fw->metrics ? fw->metrics->sample_percent : KS_PLUGIN_METRICS_SAMPLE_PERCENT);
}

int64_t ks_fwm_start(const ks_cycle_state *st) {
    return st && st->record_plugin_metrics ? ks_monotonic_ns() : 0;
}

static inline unsigned code_slot(ks_code c) { return (unsigned)c < KS_FWM_CODES ? (unsigned)c : KS_ERROR; }

void ks_fwm_point(const ks_framework *fw, ks_mep ep, ks_code code, int64_t start_ns) {
    ks_fw_metrics *m = fw->metrics;
    if (!m || (unsigned)ep >= KS_MEP_COUNT) return;
    double s = (double)(ks_monotonic_ns() - start_ns) / 1e9;
    unsigned c = code_slot(code);
    ks_metric *h = atomic_load_explicit(&m->point[ep][c], memory_order_acquire);
    if (!h) {
        const char *v[3] = {ks_mep_name(ep), ks_code_name((ks_code)c), m->profile};
        h = ks_metric_cached(&m->point[ep][c], ks_sm()->framework_extension_point_duration, v);
    }
    ks_histogram_observe(h, s);
}

void ks_fwm_plugin(const ks_framework *fw, unsigned plugin, ks_mep ep, ks_code code, int64_t ns) {
    ks_fw_metrics *m = fw->metrics;
    if (!m || plugin >= m->nplugins || (unsigned)ep >= KS_MEP_COUNT) return;
    unsigned c = code_slot(code);
    ks_metric *_Atomic *slot = &m->plugin[((size_t)plugin * KS_MEP_COUNT + ep) * KS_FWM_CODES + c];
    ks_metric *h = atomic_load_explicit(slot, memory_order_acquire);
    if (!h) {
        const char *v[3] = {m->plugin_names[plugin], ks_mep_name(ep), ks_code_name((ks_code)c)};
        h = ks_metric_cached(slot, ks_sm()->plugin_execution_duration, v);
    }
    ks_histogram_observe(h, (double)ns / 1e9);
}

void ks_fwm_evals(const ks_framework *fw, unsigned plugin, ks_mep ep, uint64_t n) {
    ks_fw_metrics *m = fw->metrics;
    int k = eval_slot(ep);
    if (!m || plugin >= m->nplugins || k < 0 || n == 0) return;
    ks_metric *_Atomic *slot = &m->evals[(size_t)plugin * 4 + (size_t)k];
    ks_metric *c = atomic_load_explicit(slot, memory_order_acquire);
    if (!c) {
        const char *v[3] = {m->plugin_names[plugin], ks_mep_name(ep), m->profile};
        c = ks_metric_cached(slot, ks_sm()->plugin_evaluation_total, v);
    }
    ks_counter_add(c, n);
}

void ks_fwm_attempt(const ks_framework *fw, ks_fwm_result r, int64_t start_ns) {
    ks_fw_metrics *m = fw ? fw->metrics : NULL;
    if (!m || (unsigned)r > KS_FWM_ERROR) return;
    static const char *const names[] = {"scheduled", "unschedulable", "error"};
    const char *v[2] = {names[r], m->profile};
    const ks_sched_metrics *sm = ks_sm();
    ks_counter_inc(ks_metric_cached(&m->attempts[r], sm->schedule_attempts, v));
    ks_histogram_observe(ks_metric_cached(&m->durations[r], sm->scheduling_attempt_duration, v),
                         (double)(ks_monotonic_ns() - start_ns) / 1e9);
}

void ks_fwm_pod_scheduled(uint32_t attempts, double sli_seconds) {
    const ks_sched_metrics *sm = ks_sm();
    static ks_metric *_Atomic att;
    static const char *const none[1] = {NULL};
    ks_histogram_observe(ks_metric_cached(&att, sm->pod_scheduling_attempts, none), (double)attempts);
    if (sli_seconds < 0) return;
    static ks_metric *_Atomic sli[16];
    unsigned k = attempts >= 15 ? 15 : attempts;
    ks_metric *h = atomic_load_explicit(&sli[k], memory_order_acquire);
    if (!h) {
        char buf[8];
        const char *v[1] = {ks_sm_attempts_label(attempts, buf)};
        h = ks_metric_cached(&sli[k], sm->pod_scheduling_sli_duration, v);
    }
    ks_histogram_observe(h, sli_seconds);
}

void ks_fwm_algorithm(int64_t start_ns) {
    static ks_metric *_Atomic alg;
    static const char *const none[1] = {NULL};
    ks_histogram_observe(ks_metric_cached(&alg, ks_sm()->scheduling_algorithm_duration, none),
                         (double)(ks_monotonic_ns() - start_ns) / 1e9);
}
