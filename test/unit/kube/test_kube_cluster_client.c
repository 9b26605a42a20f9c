/* The kube backend against a scripted API server (libmicrohttpd on
 * 127.0.0.1): lists and watches decoded into watch events (an update
 * carries the version it replaces; CSIStorageCapacities and
 * VolumeAttachments listed too), a malformed object skipped, and the whole
 * scheduler in real time binding one pod, failing another with upstream's
 * status patch and events. */
#include "api/cluster.h"
#include "backend/api_calls.h"
#include "config/config.h"
#include "framework/framework_internal.h"
#include "kube/kube_cluster_client.h"
#include "kube/client.h"
#include "scheduler/scheduler.h"
#include "util/intern.h"

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ksched/ksched.h>

/* ---- the fake API server ------------------------------------------------------ */

#define MAX_CALLS 256

typedef struct call {
    char method[8];
    char url[256];
    char *body;
} call;

typedef struct fake {
    pthread_mutex_t mu;
    call calls[MAX_CALLS];
    int ncalls;
    /* the PVC's version the next watch of PVCs announces (0: none) */
    int pvc_version;
    bool pvc_sent;
} fake;

static fake F = {.mu = PTHREAD_MUTEX_INITIALIZER};
static struct MHD_Daemon *D;
static unsigned PORT;

static const char node_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\",\"resourceVersion\":\"5\","
    "\"labels\":{\"kubernetes.io/hostname\":\"node-a\"}},"
    "\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"},"
    "\"capacity\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}";

static const char *pod_json(char *buf, size_t n, const char *name, const char *cpu) {
    snprintf(buf, n,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
             "\"uid\":\"uid-%s\",\"resourceVersion\":\"7\"},\"spec\":{\"schedulerName\":\"default-scheduler\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]},"
             "\"status\":{\"phase\":\"Pending\"}}",
             name, name, cpu);
    return buf;
}

static const char *pvc_json(char *buf, size_t n, int version) {
    snprintf(buf, n,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"claim\","
             "\"namespace\":\"default\",\"uid\":\"pvc-uid\",\"resourceVersion\":\"%d\"},"
             "\"spec\":{\"storageClassName\":\"class-%d\",\"accessModes\":[\"ReadWriteOnce\"],"
             "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}",
             100 + version, version);
    return buf;
}

static char *list_body(const char *url) {
    char a[1024], b[1024], c[1024];
    const char *items = "";
    char buf[4096];
    if (strstr(url, "/api/v1/nodes")) {
        items = node_json;
    } else if (strstr(url, "/api/v1/pods")) {
        /* one that fits, one too big, one that cannot be decoded */
        snprintf(buf, sizeof(buf), "%s,%s,%s", pod_json(a, sizeof(a), "fits", "500m"),
                 pod_json(b, sizeof(b), "huge", "64"), pod_json(c, sizeof(c), "broken", "lots"));
        items = buf;
    } else if (strstr(url, "/persistentvolumeclaims")) {
        items = pvc_json(a, sizeof(a), 1);
    } else if (strstr(url, "/apis/storage.k8s.io/v1/csistoragecapacities")) {
        items = "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":"
                "\"csisc-1\",\"namespace\":\"kube-system\",\"resourceVersion\":\"9\"},\"storageClassName\":\"fast\","
                "\"nodeTopology\":{\"matchLabels\":{\"kubernetes.io/hostname\":\"node-a\"}},\"capacity\":\"10Gi\","
                "\"maximumVolumeSize\":\"2Gi\"}";
    } else if (strstr(url, "/apis/storage.k8s.io/v1/volumeattachments")) {
        items = "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":"
                "\"va-1\",\"resourceVersion\":\"11\"},\"spec\":{\"attacher\":\"ebs.csi.aws.com\",\"nodeName\":"
                "\"node-a\",\"source\":{\"persistentVolumeName\":\"pv-1\"}},\"status\":{\"attached\":true}}";
    }
    char *out = NULL;
    if (asprintf(&out, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\"},"
                       "\"items\":[%s]}",
                 items) < 0)
        return NULL;
    return out;
}

/* A watch: for PVCs, the scripted change once; then idle until the
 * stream's time is up (the reflector watches again). */
typedef struct watch_state {
    bool pvc;
    int ticks;
} watch_state;

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max) {
    watch_state *w = cls;
    if (w->pvc) {
        pthread_mutex_lock(&F.mu);
        int v = F.pvc_version;
        bool send = v && !F.pvc_sent;
        if (send) F.pvc_sent = true;
        pthread_mutex_unlock(&F.mu);
        if (send) {
            char obj[1024];
            int n = snprintf(buf, max, "{\"type\":\"MODIFIED\",\"object\":%s}\n", pvc_json(obj, sizeof(obj), v));
            return n;
        }
    }
    if (w->ticks++ > 40) return MHD_CONTENT_READER_END_OF_STREAM;
    usleep(50000);
    return 0;
}

static void watch_free(void *cls) { free(cls); }

typedef struct req_body {
    char *data;
    size_t len;
} req_body;

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    if (!*state) {
        *state = calloc(1, sizeof(req_body));
        return MHD_YES;
    }
    req_body *rb = *state;
    if (*upload_size) {
        rb->data = realloc(rb->data, rb->len + *upload_size + 1);
        memcpy(rb->data + rb->len, upload, *upload_size);
        rb->len += *upload_size;
        rb->data[rb->len] = 0;
        *upload_size = 0;
        return MHD_YES;
    }
    const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
    struct MHD_Response *resp;
    unsigned status = 200;
    if (!strcmp(method, "GET") && watch && (!strcmp(watch, "true") || !strcmp(watch, "1"))) {
        watch_state *w = calloc(1, sizeof(*w));
        w->pvc = strstr(url, "/persistentvolumeclaims") != NULL;
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, watch_read, w, watch_free);
    } else if (!strcmp(method, "GET")) {
        char *body = list_body(url);
        resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    } else {
        pthread_mutex_lock(&F.mu);
        if (F.ncalls < MAX_CALLS) {
            call *k = &F.calls[F.ncalls++];
            snprintf(k->method, sizeof(k->method), "%s", method);
            snprintf(k->url, sizeof(k->url), "%s", url);
            k->body = rb->data ? strdup(rb->data) : NULL;
        }
        pthread_mutex_unlock(&F.mu);
        status = !strcmp(method, "POST") ? 201 : 200;
        char *body = strdup(rb->data ? rb->data : "{}");
        resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode tc) {
    req_body *rb = *state;
    if (rb) free(rb->data);
    free(rb);
    *state = NULL;
}

static int setup(void **st) {
    D = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, handle,
                         NULL, MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    if (!D) return -1;
    PORT = MHD_get_daemon_info(D, MHD_DAEMON_INFO_BIND_PORT)->port;
    return 0;
}

static int teardown(void **st) {
    MHD_stop_daemon(D);
    for (int i = 0; i < F.ncalls; i++) free(F.calls[i].body);
    return 0;
}

static void reset_fake(void) {
    pthread_mutex_lock(&F.mu);
    for (int i = 0; i < F.ncalls; i++) free(F.calls[i].body);
    F.ncalls = 0;
    F.pvc_version = 0;
    F.pvc_sent = false;
    pthread_mutex_unlock(&F.mu);
}

/* The calls made so far whose url contains `part` (method matched). */
static int count_calls(const char *method, const char *part, char **first_body) {
    int n = 0;
    pthread_mutex_lock(&F.mu);
    for (int i = 0; i < F.ncalls; i++) {
        if (strcmp(F.calls[i].method, method) || !strstr(F.calls[i].url, part)) continue;
        if (!n && first_body) *first_body = F.calls[i].body ? strdup(F.calls[i].body) : NULL;
        n++;
    }
    pthread_mutex_unlock(&F.mu);
    return n;
}

static ks_kube_client *new_client(ks_kube_config *kc) {
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", PORT);
    memset(kc, 0, sizeof(*kc));
    kc->server = strdup(server);
    ks_kube_client_options o = {.config = kc, .qps = 0};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    if (!c) fail_msg("client: %s", err);
    return c;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the backend alone ------------------------------------------------------------ */

typedef struct seen {
    pthread_mutex_t mu;
    int nodes, pods, pvc_events;
    char pvc_old[32], pvc_new[32]; /* storage classes of the last PVC event */
    char capacity[128], attachment[128]; /* what the last of each read */
} seen;

static void record(void *arg, const ks_watch_event *ev) {
    seen *s = arg;
    pthread_mutex_lock(&s->mu);
    if (ev->kind == KS_KIND_NODE) s->nodes++;
    if (ev->kind == KS_KIND_POD) s->pods++;
    if (ev->kind == KS_KIND_CSI_CAPACITY && ev->new_obj) {
        const ks_csi_capacity *c = ev->new_obj;
        snprintf(s->capacity, sizeof(s->capacity), "%s/%s %s %lld %lld %u", ks_str(c->ns), ks_str(c->name),
                 ks_str(c->storage_class), (long long)c->capacity, (long long)c->max_size, c->node_topology.nreq);
    }
    if (ev->kind == KS_KIND_VOLUME_ATTACHMENT && ev->new_obj) {
        const ks_volume_attachment *v = ev->new_obj;
        snprintf(s->attachment, sizeof(s->attachment), "%s %s %s %s", ks_str(v->name), v->attacher,
                 ks_str(v->node_name), v->has_pv ? ks_str(v->pv_name) : "-");
    }
    if (ev->kind == KS_KIND_PVC) {
        s->pvc_events++;
        const ks_pvc *o = ev->old_obj, *n = ev->new_obj;
        snprintf(s->pvc_old, sizeof(s->pvc_old), "%s", o ? ks_str(o->storage_class) : "-");
        snprintf(s->pvc_new, sizeof(s->pvc_new), "%s", n ? ks_str(n->storage_class) : "-");
    }
    pthread_mutex_unlock(&s->mu);
}

static int pvc_events(seen *s) {
    pthread_mutex_lock(&s->mu);
    int n = s->pvc_events;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static bool class_is(const void *obj, const ks_object_write *w) {
    const ks_pvc *pvc = obj;
    return pvc && !strcmp(ks_str(pvc->storage_class), w->arg);
}

static void test_lists_and_watches_decoded(void **st) {
    reset_fake();
    ks_kube_config kc;
    ks_kube_client *c = new_client(&kc);
    ks_kube_cluster_client_options o = {.client = c};
    ks_kube_cluster_client *kb = ks_kube_cluster_client_new(&o);
    const ks_cluster_client *b = ks_kube_cluster_client_iface(kb);
    seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    assert_null(b->start(b->ctx, record, &s));
    for (int i = 0; i < 200 && !b->synced(b->ctx); i++) sleep_ms(25);
    assert_true(b->synced(b->ctx));
    pthread_mutex_lock(&s.mu);
    assert_int_equal(s.nodes, 1);
    assert_int_equal(s.pods, 2); /* "broken" was skipped */
    assert_int_equal(s.pvc_events, 1);
    assert_string_equal(s.pvc_old, "-");
    assert_string_equal(s.pvc_new, "class-1");
    /* the storage kinds VolumeBinding and NodeVolumeLimits read, listed
     * from their own paths */
    assert_string_equal(s.capacity, "kube-system/csisc-1 fast 10737418240 2147483648 1");
    assert_string_equal(s.attachment, "va-1 ebs.csi.aws.com node-a pv-1");
    pthread_mutex_unlock(&s.mu);
    ks_kube_cluster_client_stats stats;
    ks_kube_cluster_client_stats_get(kb, &stats);
    assert_int_equal(stats.decode_errors, 1);

    /* An object write's await: a condition the watch never shows times
     * out; one it shows (the change below) ends the wait. */
    ks_object_write w = {.kind = "PersistentVolumeClaim", .ns = "default", .name = "claim", .verb = KS_WRITE_AWAIT,
                         .until = class_is, .timeout_ms = 50, .arg = "class-9"};
    ks_api_call ac = {.type = KS_CALL_OBJECT_WRITE, .write = &w};
    ks_status *ws = b->execute(b->ctx, &ac);
    assert_non_null(ws);
    assert_string_equal(ks_status_reason(ws, 0), "timed out waiting for the condition");
    ks_status_free(ws);

    /* A change arrives with the version it replaces. */
    pthread_mutex_lock(&F.mu);
    F.pvc_version = 2;
    pthread_mutex_unlock(&F.mu);
    w.arg = "class-2";
    w.timeout_ms = 10000;
    assert_null(b->execute(b->ctx, &ac));
    for (int i = 0; i < 200 && pvc_events(&s) == 1; i++) sleep_ms(25);
    pthread_mutex_lock(&s.mu);
    assert_int_equal(s.pvc_events, 2);
    assert_string_equal(s.pvc_old, "class-1");
    assert_string_equal(s.pvc_new, "class-2");
    pthread_mutex_unlock(&s.mu);

    b->stop(b->ctx);
    ks_kube_cluster_client_free(kb);
    ks_kube_client_free(c);
    free(kc.server);
}

/* ---- the whole scheduler in real time --------------------------------------------- */

static void *run_sched(void *arg) {
    ks_scheduler_run(arg);
    return NULL;
}

static void test_scheduler_binds_and_reports(void **st) {
    reset_fake();
    ks_kube_config kc;
    ks_kube_client *c = new_client(&kc);
    char *err = NULL;
    ks_event_recorder *rec = ks_event_recorder_new(c, "test-host", &err);
    assert_non_null(rec);
    ks_kube_cluster_client_options o = {.client = c, .events = rec};
    ks_kube_cluster_client *kb = ks_kube_cluster_client_new(&o);
    ks_config *cfg = ks_config_default();
    assert_true(ks_config_resolve(cfg, ks_config_intree_points, NULL, NULL));
    ks_scheduler_options so = {.config = cfg, .backend = ks_kube_cluster_client_iface(kb), .mode = KS_RUN_THREADED};
    ks_scheduler *s = ks_scheduler_new(&so, &err);
    assert_non_null(s);
    assert_null(ks_scheduler_start(s));
    pthread_t t;
    pthread_create(&t, NULL, run_sched, s);
    for (int i = 0; i < 400 && (count_calls("POST", "/pods/fits/binding", NULL) == 0 ||
                                count_calls("PATCH", "/pods/huge/status", NULL) == 0 ||
                                count_calls("POST", "/events", NULL) < 2);
         i++)
        sleep_ms(25);

    char *bind = NULL, *patch = NULL, *ev = NULL;
    assert_int_equal(count_calls("POST", "/api/v1/namespaces/default/pods/fits/binding", &bind), 1);
    json_t *j = json_loads(bind, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "metadata"), "uid")), "uid-fits");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "target"), "name")), "node-a");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "target"), "kind")), "Node");
    json_decref(j);

    assert_int_equal(count_calls("PATCH", "/api/v1/namespaces/default/pods/huge/status", &patch), 1);
    j = json_loads(patch, 0, NULL);
    json_t *cond = json_array_get(json_object_get(json_object_get(j, "status"), "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(cond, "type")), "PodScheduled");
    assert_string_equal(json_string_value(json_object_get(cond, "status")), "False");
    assert_string_equal(json_string_value(json_object_get(cond, "reason")), "Unschedulable");
    assert_string_equal(json_string_value(json_object_get(cond, "message")),
                        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
                        "0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    json_decref(j);

    assert_true(count_calls("POST", "/apis/events.k8s.io/v1/namespaces/default/events", &ev) >= 1);
    j = json_loads(ev, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "reportingController")), "default-scheduler");
    assert_string_equal(json_string_value(json_object_get(j, "reportingInstance")), "default-scheduler-test-host");
    json_decref(j);

    ks_scheduler_stop(s);
    pthread_join(t, NULL);
    ks_scheduler_free(s);
    ks_kube_cluster_client_free(kb);
    ks_event_recorder_free(rec);
    ks_kube_client_free(c);
    ks_config_free(cfg);
    free(kc.server);
    free(bind);
    free(patch);
    free(ev);
}

static ks_status *client_exec(void *ctx, const ks_api_call *ac) {
    const ks_cluster_client *b = ctx;
    return b->execute(b->ctx, ac);
}

/* A plugin's PreBind annotations (ks_handle_patch_pod_annotations, an
 * object write): one strategic-merge PATCH of the pod, a null removing a
 * key. */
static void test_pod_annotations_patch(void **st) {
    reset_fake();
    ks_kube_config kc;
    ks_kube_client *c = new_client(&kc);
    ks_kube_cluster_client_options o = {.client = c};
    ks_kube_cluster_client *kb = ks_kube_cluster_client_new(&o);
    const ks_cluster_client *b = ks_kube_cluster_client_iface(kb);
    assert_true(b->executes & KS_CALL_BIT(KS_CALL_OBJECT_WRITE));
    ks_pod *p = ks_pod_new();
    p->ns = ks_intern("default");
    p->name = ks_intern("gpu-task");
    const char *keys[] = {"alibabacloud.com/gpu-index", "alibabacloud.com/assume-time"};
    const char *vals[] = {"2-3", NULL};
    ks_framework fw = {.env = {.ctx = (void *)b, .api_call = client_exec}};
    fw.handle.fw = &fw;
    assert_null(ks_handle_patch_pod_annotations(&fw.handle, p, keys, vals, 2));
    char *body = NULL;
    assert_int_equal(count_calls("PATCH", "/api/v1/namespaces/default/pods/gpu-task", &body), 1);
    json_t *j = json_loads(body, 0, NULL);
    json_t *ann = json_object_get(json_object_get(j, "metadata"), "annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "alibabacloud.com/gpu-index")), "2-3");
    assert_true(json_is_null(json_object_get(ann, "alibabacloud.com/assume-time")));
    assert_int_equal(json_object_size(j), 1);
    json_decref(j);
    free(body);
    ks_pod_unref(p);
    ks_kube_cluster_client_free(kb);
    ks_kube_client_free(c);
    free(kc.server);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_and_watches_decoded),
        cmocka_unit_test(test_scheduler_binds_and_reports),
        cmocka_unit_test(test_pod_annotations_patch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
