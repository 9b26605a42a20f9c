/* The gauges read from the scheduler's state when /metrics is written
 * (queue lengths, cache sizes, pods per rejecting plugin) rather than
 * kept up to date on every queue operation: the same values at scrape
 * time, and nothing to do between scrapes. */
#include "backend/cache.h"
#include "backend/queue.h"
#include "metrics/sched_metrics.h"
#include "scheduler/scheduler_internal.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct plugin_counts {
    ks_scheduler *s;
    uint64_t *n; /* [framework][plugin] */
} plugin_counts;

static size_t fw_slot(const ks_scheduler *s, const ks_framework *fw) {
    for (size_t i = 0; i < s->nfws; i++)
        if (s->fws[i] == fw) return i;
    return s->nfws;
}

static void count_rejectors(void *arg, const ks_queued_pod *qp) {
    plugin_counts *pc = arg;
    size_t f = fw_slot(pc->s, ks_queued_pod_framework(qp));
    if (f == pc->s->nfws) return;
    const ks_framework *fw = pc->s->fws[f];
    for (uint32_t i = 0, n = (uint32_t)ks_framework_nplugins(fw); i < n; i++)
        if (ks_plugin_mask_has(ks_queued_pod_unschedulable_plugins(qp), i) ||
            ks_plugin_mask_has(ks_queued_pod_pending_plugins(qp), i))
            pc->n[f * KS_MAX_PLUGINS + i]++;
}

/* The schedulers of this process (one in `ksched run`; tests make many):
 * their gauges are summed. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static ks_scheduler **attached;
static size_t nattached, cap;

static void collect_locked(void) {
    const ks_sched_metrics *sm = ks_sm();
    /* A plugin that rejects nobody now reads 0 (its series stays, as
     * upstream's gauge does). */
    ks_gauge_vec_zero(sm->unschedulable_pods);
    double active = 0, backoff = 0, unsched = 0, gated = 0, nodes = 0, pods = 0, assumed = 0;
    for (size_t k = 0; k < nattached; k++) {
        ks_scheduler *s = attached[k];
        ks_queue_stats q;
        ks_queue_stats_get(s->queue, &q);
        active += (double)q.active;
        backoff += (double)(q.backoff + q.error_backoff);
        unsched += (double)(q.unschedulable - q.gated);
        gated += (double)q.gated;
        nodes += (double)ks_cache_node_count(s->cache);
        pods += (double)ks_cache_pod_count(s->cache);
        assumed += (double)ks_cache_assumed_count(s->cache);

        /* Upstream counts a pod for each plugin that rejected it from the
         * time it is requeued until it is popped again. */
        plugin_counts pc = {s, ks_xcalloc((s->nfws ? s->nfws : 1) * KS_MAX_PLUGINS, sizeof(uint64_t))};
        ks_queue_foreach(s->queue, count_rejectors, &pc);
        for (size_t f = 0; f < s->nfws; f++) {
            const ks_framework *fw = s->fws[f];
            for (uint32_t i = 0, np = (uint32_t)ks_framework_nplugins(fw); i < np; i++) {
                uint64_t n = pc.n[f * KS_MAX_PLUGINS + i];
                if (n)
                    ks_gauge_add(ks_metric_get(sm->unschedulable_pods, ks_framework_plugin_name(fw, i),
                                               ks_framework_profile_name(fw)),
                                 (double)n);
            }
        }
        free(pc.n);
    }
    ks_gauge_set(ks_metric_get(sm->pending_pods, "active"), active);
    ks_gauge_set(ks_metric_get(sm->pending_pods, "backoff"), backoff);
    ks_gauge_set(ks_metric_get(sm->pending_pods, "unschedulable"), unsched);
    ks_gauge_set(ks_metric_get(sm->pending_pods, "gated"), gated);
    ks_gauge_set(ks_metric_get(sm->cache_size, "nodes"), nodes);
    ks_gauge_set(ks_metric_get(sm->cache_size, "pods"), pods);
    ks_gauge_set(ks_metric_get(sm->cache_size, "assumed_pods"), assumed);
}

static void collect(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mu);
    /* With no scheduler left the gauges keep their last values (what a
     * simulation ended with). */
    if (nattached) collect_locked();
    pthread_mutex_unlock(&mu);
}

static void add_collector(void) { ks_metrics_add_collector(ks_sm()->reg, collect, NULL); }

void ks_sched_metrics_attach(ks_scheduler *s) {
    pthread_once(&once, add_collector);
    pthread_mutex_lock(&mu);
    KS_GROW(attached, cap, nattached + 1);
    attached[nattached++] = s;
    pthread_mutex_unlock(&mu);
}

void ks_sched_metrics_detach(ks_scheduler *s) {
    pthread_mutex_lock(&mu);
    /* The gauges as this scheduler leaves them. */
    if (nattached == 1 && attached[0] == s) collect_locked();
    for (size_t i = 0; i < nattached; i++) {
        if (attached[i] != s) continue;
        memmove(&attached[i], &attached[i + 1], (nattached - i - 1) * sizeof(*attached));
        nattached--;
        break;
    }
    if (nattached == 0) {
        free(attached);
        attached = NULL;
        cap = 0;
    }
    pthread_mutex_unlock(&mu);
}
