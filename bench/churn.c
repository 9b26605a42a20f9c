/* ksched_churn: memory of a long-running scheduler (a benchmark, not a
 * test). Pods are created, scheduled and deleted through the in-memory
 * backend, batch after batch, over a fixed set of nodes: what a scheduler
 * that runs for a month sees. Each pod is decoded from JSON the way the
 * API server client decodes it (its own strings, no document kept), with
 * a unique name, uid, resourceVersion and annotation values, and labels
 * from a small set.
 *
 *   ksched_churn [--pods N] [--nodes K] [--batch B] [--parallelism P]
 *
 * Prints the RSS after the first tenth of the pods and after all of them,
 * and their ratio: with nothing kept per pod that has gone, the two are
 * within noise of each other. Defaults: 1,000,000 pods, 1000 nodes,
 * batches of 1000. */
#include "api/cluster.h"
#include "api/node.h"
#include "api/pod.h"
#include "codec/decode.h"
#include "codec/tree.h"
#include "config/config.h"
#include "framework/status.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "util/clock.h"
#include "util/intern.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* One object decoded from JSON text, keeping no document (as from the
 * API server). */
static const ks_tree *parse(ks_arena *a, const char *json) {
    ks_tree **docs = NULL;
    uint32_t n = 0;
    char *err = NULL;
    if (!kt_parse(a, "churn", json, strlen(json), &docs, &n, &err) || n != 1) {
        fprintf(stderr, "ksched_churn: %s\n", err ? err : "not one document");
        exit(2);
    }
    return docs[0];
}

static ks_node *make_node(int i) {
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\",\"labels\":"
             "{\"kubernetes.io/hostname\":\"node-%d\",\"topology.kubernetes.io/zone\":\"zone-%d\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
             "\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}",
             i, i, i % 3);
    ks_arena *a = ks_arena_new(4096);
    ks_errors errs = {0};
    ks_decode_ctx ctx = {.file = "churn", .errs = &errs};
    ks_node *n = ks_decode_node(parse(a, json), &ctx);
    ks_arena_free(a);
    if (!n) exit(2);
    return n;
}

static ks_pod *make_pod(uint64_t i) {
    char json[2048];
    /* Everything unbounded differs from pod to pod: name, uid,
     * resourceVersion, annotation values. Labels come from a small set. */
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"churn-%llu\","
             "\"namespace\":\"ns-%llu\",\"uid\":\"6b1f0a3e-%08llx-4c2d-9e1f-%012llx\","
             "\"resourceVersion\":\"%llu\",\"labels\":{\"app\":\"web-%llu\",\"tier\":\"front\"},"
             "\"annotations\":{\"churn.example/seq\":\"%llu\",\"kubectl.kubernetes.io/last-applied-"
             "configuration\":\"{\\\"metadata\\\":{\\\"name\\\":\\\"churn-%llu\\\",\\\"generation\\\":%llu}}\"}},"
             "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"registry.example/web:1.%llu\","
             "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}}",
             (unsigned long long)i, (unsigned long long)(i % 10), (unsigned long long)(i >> 16),
             (unsigned long long)i, (unsigned long long)(1000000 + i), (unsigned long long)(i % 50),
             (unsigned long long)i, (unsigned long long)i, (unsigned long long)i,
             (unsigned long long)(i % 20));
    ks_arena *a = ks_arena_new(8192);
    ks_errors errs = {0};
    ks_decode_ctx ctx = {.file = "churn", .errs = &errs};
    ks_pod *p = ks_decode_pod(parse(a, json), &ctx);
    ks_arena_free(a);
    if (!p) {
        for (size_t k = 0; k < errs.n; k++) fprintf(stderr, "%s\n", errs.v[k]);
        exit(2);
    }
    return p;
}


int main(int argc, char **argv) {
    uint64_t npods = 1000000, batch = 1000;
    int nnodes = 1000, parallelism = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--pods") && v) npods = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--nodes") && v) nnodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && v) batch = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--parallelism") && v) parallelism = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: ksched_churn [--pods N] [--nodes K] [--batch B] [--parallelism P]\n");
            return 2;
        }
    }
    if (!batch || !nnodes) return 2;
    ks_log_set_verbosity(0);
    ks_config_errors cerrs;
    ks_config_errors_init(&cerrs);
    ks_config *cfg = ks_config_default();
    if (!cfg || !ks_config_resolve(cfg, ks_registry_points, ks_default_registry(), &cerrs)) {
        fprintf(stderr, "ksched_churn: %s\n", cerrs.n ? cerrs.msgs[0] : "no configuration");
        return 2;
    }
    ks_config_errors_free(&cerrs);

    ks_cluster *c = ks_cluster_new();
    for (int i = 0; i < nnodes; i++) KS_VEC_PUSH(c->nodes, make_node(i));
    ks_clock *clock = ks_clock_sim_new(1700000000LL * KS_NS_PER_SEC);
    ks_memory_client *mb = ks_memory_client_new(c);
    /* Events are counted by the backend's stats, not kept. */
    ks_cluster_client backend = *ks_memory_client_iface(mb);
    backend.executes &= ~KS_CALL_BIT(KS_CALL_EVENT);
    ks_scheduler_options so = {.config = cfg, .backend = &backend, .clock = clock, .seed = 1,
                               .parallelism = parallelism};
    char *err = NULL;
    ks_scheduler *s = ks_scheduler_new(&so, &err);
    if (!s) {
        fprintf(stderr, "ksched_churn: %s\n", err);
        return 2;
    }
    ks_status *st = ks_scheduler_start(s);
    if (st) {
        fprintf(stderr, "ksched_churn: cannot start\n");
        return 2;
    }

    uint64_t *keys = ks_xmalloc(batch * sizeof(*keys));
    uint64_t done = 0, tenth = npods / 10;
    long rss_tenth = -1;
    size_t strings_tenth = 0;
    int64_t t0 = ks_monotonic_ns();
    ks_scheduler_stats stats;
    while (done < npods) {
        uint64_t n = npods - done < batch ? npods - done : batch;
        for (uint64_t k = 0; k < n; k++) {
            ks_pod *p = make_pod(done + k);
            keys[k] = p->key;
            ks_memory_client_add_pod(mb, p); /* the cluster takes the reference */
        }
        ks_scheduler_run_until_idle(s);
        for (uint64_t k = 0; k < n; k++) ks_memory_client_remove_pod(mb, keys[k]);
        ks_scheduler_run_until_idle(s);
        done += n;
        if (rss_tenth < 0 && done >= tenth) {
            rss_tenth = rss_kib();
            strings_tenth = ks_intern_count();
        }
    }
    double secs = (double)(ks_monotonic_ns() - t0) / 1e9;
    long rss_end = rss_kib();
    ks_scheduler_stats_get(s, &stats);
    printf("pods %llu, nodes %d, batch %llu: %llu bound, %.1f s (%.0f pods/s)\n", (unsigned long long)npods,
           nnodes, (unsigned long long)batch, (unsigned long long)stats.bound, secs, (double)npods / secs);
    printf("RSS after %llu pods: %.1f MiB; after %llu pods: %.1f MiB (%+.1f %%)\n", (unsigned long long)tenth,
           rss_tenth / 1024.0, (unsigned long long)npods, rss_end / 1024.0,
           rss_tenth > 0 ? 100.0 * (double)(rss_end - rss_tenth) / (double)rss_tenth : 0.0);
    printf("interned strings after %llu pods: %zu; after %llu pods: %zu\n", (unsigned long long)tenth,
           strings_tenth, (unsigned long long)npods, ks_intern_count());
    free(keys);
    ks_scheduler_free(s);
    ks_memory_client_free(mb);
    ks_cluster_free(c);
    ks_clock_free(clock);
    ks_config_free(cfg);
    return stats.bound == npods ? 0 : 1;
}
