/* Lifetimes under churn: a thread changes the cluster at full speed
 * through the memory backend (the watch events the scheduler's handlers
 * get from a real watch thread: pods created, updated and deleted, nodes
 * relabelled, removed and added back) while the real-clock loop schedules
 * and binds, with a plugin that reads everything the handle lends it
 * (ks_handle_list_pods in PreFilter, Filter and Score, the waiting pods in
 * Permit). Meant to run under ASan and ThreadSanitizer (make tsan): a pod
 * freed under a plugin, or a race, fails it there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "framework/status.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "testutil.h"
#include "util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GI (1LL << 30)
#define NODES 24
#define OPS 3000

static ks_handle *reader_handle;
static atomic_ulong pods_read, bad_reads, waiting_read;
static atomic_int bound;

/* Read a pod as a plugin would: its strings and labels. A freed pod would
 * show up here (ASan), or as garbage in the name (release build). */
static void touch(const ks_pod *p) {
    const char *name = ks_pod_name(p);
    const char *ns = ks_pod_namespace(p);
    if (!name || !ns || strcmp(ns, "default") != 0 ||
        (strncmp(name, "c-", 2) != 0 && strncmp(name, "bg-", 3) != 0))
        atomic_fetch_add(&bad_reads, 1);
    const char *app = ks_pod_label(p, "app");
    if (app && strcmp(app, "a") != 0 && strcmp(app, "b") != 0) atomic_fetch_add(&bad_reads, 1);
    atomic_fetch_add(&pods_read, 1);
}

static void read_pods(const char *key, const char *value) {
    const ks_pod *buf[64];
    size_t n = ks_handle_list_pods(reader_handle, "default", key, value, buf, 64);
    for (size_t i = 0; i < n && i < 64; i++) touch(buf[i]);
}

static void *reader_create(const ks_args *a, ks_handle *h, char **err) {
    reader_handle = h;
    return h;
}
static ks_status *reader_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                    const ks_node_info *const *nodes, size_t n, ks_pre_filter_result **r) {
    read_pods(NULL, NULL);
    return NULL;
}
static ks_status *reader_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    read_pods("app", "a");
    return NULL;
}
static ks_status *reader_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                               int64_t *score) {
    read_pods("app", "b");
    *score = 0;
    return NULL;
}
static ks_status *reader_permit(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                                int64_t *timeout_ms) {
    ks_waiting_pod *w[16];
    size_t n = ks_handle_waiting_pods(reader_handle, w, 16);
    for (size_t i = 0; i < n && i < 16; i++) touch(ks_waiting_pod_pod(w[i]));
    atomic_fetch_add(&waiting_read, n);
    return NULL;
}
static const ks_plugin_ops p_reader = {.abi_version = KS_ABI_VERSION, .name = "Reader", .create = reader_create,
                                       .pre_filter = reader_pre_filter, .filter = reader_filter,
                                       .score = reader_score, .permit = reader_permit};

static void on_bound(void *ctx, const ks_pod *pod, const char *node) { atomic_fetch_add(&bound, 1); }
static const ks_observer observer = {.on_bound = on_bound};

typedef struct churn {
    ks_memory_client *mb;
    uint64_t rng;
} churn;

static uint32_t next_rand(churn *c) {
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return (uint32_t)(c->rng >> 11);
}

static ks_node *node_named(int i, int version) {
    char name[32], zone[16];
    snprintf(name, sizeof(name), "node-%02d", i);
    snprintf(zone, sizeof(zone), "z%d", version % 3);
    return tu_node(name, 1000000, 1024 * GI, "topology.kubernetes.io/zone", zone, NULL);
}

/* The cluster changing under the scheduler, as fast as it can. */
static void *churn_main(void *arg) {
    churn *c = arg;
    char name[32];
    int made = 0;
    for (int op = 0; op < OPS; op++) {
        uint32_t r = next_rand(c) % 100;
        if (r < 40) {
            /* a new pending pod */
            snprintf(name, sizeof(name), "c-%d", made++);
            ks_pod *p = tu_pod("default", name, 10, 0, (int32_t)(next_rand(c) % 3));
            tu_pod_labels(p, "app", next_rand(c) % 2 ? "a" : "b", NULL);
            ks_memory_client_add_pod(c->mb, p);
        } else if (r < 60) {
            /* a bound pod replaced by a new version (labels changed) */
            snprintf(name, sizeof(name), "bg-%u", next_rand(c) % 40);
            char node[32];
            snprintf(node, sizeof(node), "node-%02u", next_rand(c) % NODES);
            ks_pod *p = tu_pod_on("default", name, 10, 0, node);
            tu_pod_labels(p, "app", next_rand(c) % 2 ? "a" : "b", NULL);
            ks_memory_client_add_pod(c->mb, p);
        } else if (r < 75) {
            /* a pod deleted, pending, bound by the scheduler or not */
            if (next_rand(c) % 2 && made) snprintf(name, sizeof(name), "c-%u", next_rand(c) % (uint32_t)made);
            else snprintf(name, sizeof(name), "bg-%u", next_rand(c) % 40);
            ks_memory_client_remove_pod(c->mb, ks_pod_key(ks_intern("default"), ks_intern(name)));
        } else if (r < 90) {
            ks_memory_client_update_node(c->mb, node_named((int)(next_rand(c) % NODES), op));
        } else {
            int i = (int)(next_rand(c) % NODES);
            snprintf(name, sizeof(name), "node-%02d", i);
            ks_memory_client_remove_node(c->mb, ks_intern(name));
            ks_memory_client_add_node(c->mb, node_named(i, op));
        }
    }
    return NULL;
}

static void *run_main(void *arg) {
    ks_scheduler_run(arg);
    return NULL;
}

static size_t queue_active(ks_scheduler *s) {
    ks_queue_stats q;
    ks_queue_stats_get(ks_scheduler_queue(s), &q);
    return q.active + q.in_flight;
}

static void test_churn_while_scheduling(void **state) {
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&tp, &p_reader, 1);
    const ks_plugin_ops *extra[] = {&p_reader};
    ks_registry *reg = tu_registry(extra, 1);
    tu_profile *ps[1] = {&tp};
    ks_config *cfg = tu_config(ps, 1);
    ks_cluster *cl = ks_cluster_new();
    for (int i = 0; i < NODES; i++) KS_VEC_PUSH(cl->nodes, node_named(i, 0));
    ks_memory_client *mb = ks_memory_client_new(cl);
    ks_scheduler_options o = {.config = cfg, .registry = reg, .backend = ks_memory_client_iface(mb), .mode = KS_RUN_THREADED,
                              .seed = 7, .observer = &observer};
    char *err = NULL;
    ks_scheduler *s = ks_scheduler_new(&o, &err);
    if (!s) fail_msg("scheduler: %s", err);
    assert_null(ks_scheduler_start(s));

    pthread_t run, ch;
    churn c = {.mb = mb, .rng = 0x9e3779b97f4a7c15ULL};
    assert_int_equal(pthread_create(&run, NULL, run_main, s), 0);
    assert_int_equal(pthread_create(&ch, NULL, churn_main, &c), 0);
    pthread_join(ch, NULL);
    /* Let the loop catch up with the last changes (bounded, no timing
     * asserted), then stop it with cycles possibly under way. */
    for (int i = 0; i < 2000 && queue_active(s) > 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    ks_scheduler_stop(s);
    pthread_join(run, NULL);
    ks_scheduler_free(s);

    assert_true(atomic_load(&bound) > 0);
    assert_true(atomic_load(&pods_read) > 0);
    assert_int_equal(atomic_load(&bad_reads), 0);
    ks_memory_client_free(mb);
    ks_cluster_free(cl);
    tu_config_free(cfg);
    ks_registry_free(reg);
}

int main(void) {
    tu_init();
    /* Churn makes the scheduler log what it recovers from (a pod deleted
     * under its binding); keep it out of the report. */
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull) ks_log_set_output(devnull);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_churn_while_scheduling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
