/* DynamicResources' ResourceClaim writes (claim_writes.c, object writes
 * executed by the kube cluster client) against a
 * scripted API server: the calls kube-scheduler's plugin makes, in order,
 * with their bodies (finalizer update, status update with the allocation
 * and the reservation, the plugin's resourceVersion), the conflict retry
 * with a fresh GET and its checks, Unreserve's patch and PostFilter's
 * deallocation. */
#include "api/dra.h"
#include "api/pod.h"
#include "api/resource.h"
#include "codec/decode.h"
#include "codec/tree.h"
#include "framework/status.h"
#include "kube/kube_cluster_client.h"
#include "kube/client.h"
#include "plugins/dynamicresources/claim_writes.h"
#include "util/arena.h"

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* ---- the scripted API server ----------------------------------------------------- */

#define MAX_CALLS 64
#define MAX_SCRIPT 16

typedef struct call {
    char method[8];
    char url[256];
    char ctype[64];
    char *body;
} call;

/* The answer to the next write or GET of one object: code, and a body
 * (NULL: the request's body with resourceVersion + 1; for a GET the
 * claim as listed). */
typedef struct answer {
    unsigned code;
    const char *body;
} answer;

static ks_status *client_exec(void *ctx, const ks_api_call *ac) {
    const ks_cluster_client *b = ctx;
    return b->execute(b->ctx, ac);
}

/* One claim write through the client's execute, as the dispatcher makes it. */
static ks_status *claim_update(const ks_cluster_client *b, const ks_claim_update *u, ks_resource_claim **out) {
    return ks_dra_claim_write(u, out, client_exec, (void *)b);
}

static struct {
    pthread_mutex_t mu;
    call calls[MAX_CALLS];
    int ncalls;
    answer script[MAX_SCRIPT];
    int nscript, next;
    const char *claim; /* the claim the list holds */
    bool listed_taint_rules; /* a list of DeviceTaintRules came */
} F = {.mu = PTHREAD_MUTEX_INITIALIZER};

static struct MHD_Daemon *D;
static unsigned PORT;

#define CLAIM_SPEC                                                                                                      \
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\"}}]}}"
static const char claim_plain[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"10\"}," CLAIM_SPEC
    ",\"status\":{\"devices\":[{\"driver\":\"gpu.example.com\",\"pool\":\"n0\",\"device\":\"gpu-0\"}]}}";
static const char claim_finalized[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"12\","
    "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]}," CLAIM_SPEC "}";
static const char claim_allocated[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"13\","
    "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]}," CLAIM_SPEC
    ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
    "\"pool\":\"n1\",\"device\":\"gpu-3\"}],\"config\":[{\"source\":\"FromClass\",\"requests\":[\"gpu\"],"
    "\"opaque\":{\"driver\":\"gpu.example.com\",\"parameters\":{\"mode\":\"fast\",\"n\":[1,2]}}}]},"
    "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
    "\"values\":[\"n1\"]}]}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"other\",\"uid\":\"other-uid\"}]}}";
static const char claim_deleting[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"14\","
    "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}," CLAIM_SPEC "}";
static const char conflict[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"Operation cannot be fulfilled "
    "on resourceclaims.resource.k8s.io \\\"c1\\\": the object has been modified; please apply your changes to the "
    "latest version and try again\",\"reason\":\"Conflict\",\"code\":409}";

static char *bumped(const char *body) {
    json_t *o = json_loads(body ? body : "{}", 0, NULL);
    json_t *md = json_object_get(o, "metadata");
    const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", (rv ? atoi(rv) : 0) + 1);
    if (md) json_object_set_new(md, "resourceVersion", json_string(buf));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

typedef struct req_body {
    char *data;
    size_t len;
} req_body;

static ssize_t idle_watch(void *cls, uint64_t pos, char *buf, size_t max) {
    int *ticks = cls;
    if ((*ticks)++ > 20) return MHD_CONTENT_READER_END_OF_STREAM;
    usleep(50000);
    return 0;
}

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
    unsigned code = 200;
    bool one = strstr(url, "/namespaces/default/resourceclaims/c1") != NULL;
    if (!strcmp(method, "GET") && watch) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, idle_watch, calloc(1, sizeof(int)), free);
    } else if (!strcmp(method, "GET") && !one) {
        char *body = NULL;
        pthread_mutex_lock(&F.mu);
        const char *items = strstr(url, "/resourceclaims") && F.claim ? F.claim : "";
        if (!strcmp(url, "/apis/resource.k8s.io/v1alpha3/devicetaintrules")) F.listed_taint_rules = true;
        pthread_mutex_unlock(&F.mu);
        if (asprintf(&body, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"11\"},"
                            "\"items\":[%s]}",
                     items) < 0)
            return MHD_NO;
        resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    } else {
        pthread_mutex_lock(&F.mu);
        if (F.ncalls < MAX_CALLS) {
            call *k = &F.calls[F.ncalls++];
            snprintf(k->method, sizeof(k->method), "%s", method);
            snprintf(k->url, sizeof(k->url), "%s", url);
            const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
            snprintf(k->ctype, sizeof(k->ctype), "%s", ct ? ct : "");
            k->body = rb->data ? strdup(rb->data) : NULL;
        }
        answer a = F.next < F.nscript ? F.script[F.next++] : (answer){500, "{}"};
        pthread_mutex_unlock(&F.mu);
        code = a.code;
        char *body = a.body ? strdup(a.body) : bumped(rb->data);
        resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode tc) {
    req_body *rb = *state;
    if (rb) free(rb->data);
    free(rb);
    *state = NULL;
}

static void reset(const char *listed, const answer *script, int n) {
    pthread_mutex_lock(&F.mu);
    for (int i = 0; i < F.ncalls; i++) free(F.calls[i].body);
    F.ncalls = 0;
    F.claim = listed;
    if (n) memcpy(F.script, script, (size_t)n * sizeof(*script));
    F.nscript = n;
    F.next = 0;
    pthread_mutex_unlock(&F.mu);
}

static int setup(void **st) {
    ks_api_init();
    D = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, handle,
                         NULL, MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    if (!D) return -1;
    PORT = MHD_get_daemon_info(D, MHD_DAEMON_INFO_BIND_PORT)->port;
    return 0;
}

static int teardown(void **st) {
    MHD_stop_daemon(D);
    reset(NULL, NULL, 0);
    return 0;
}

/* ---- objects ------------------------------------------------------------------------ */

static ks_tree *parse(ks_arena *a, const char *json) {
    ks_tree **docs = NULL;
    uint32_t n = 0;
    char *err = NULL;
    assert_true(kt_parse(a, "test", json, strlen(json), &docs, &n, &err));
    assert_int_equal(n, 1);
    return docs[0];
}

static ks_resource_claim *claim_of(const char *json) {
    ks_arena *a = ks_arena_new(4096);
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx dc = {.errs = &errs};
    ks_resource_claim *c = ks_decode_resource_claim(parse(a, json), &dc);
    assert_non_null(c);
    ks_errors_free(&errs);
    ks_arena_free(a);
    return c;
}

static ks_pod *pod_of(void) {
    static const char js[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"namespace\":"
                             "\"default\",\"uid\":\"pod-uid\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}";
    ks_arena *a = ks_arena_new(4096);
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx dc = {.errs = &errs};
    ks_pod *p = ks_decode_pod(parse(a, js), &dc);
    assert_non_null(p);
    ks_errors_free(&errs);
    ks_arena_free(a);
    return p;
}

/* ---- a backend with the claim in its cache --------------------------------------------- */

typedef struct env {
    ks_kube_config kc;
    ks_kube_client *client;
    ks_kube_cluster_client *kb;
    const ks_cluster_client *b;
} env;

static void ignore(void *arg, const ks_watch_event *ev) {}

static bool with_taint_rules;

static void env_start(env *e, const char *listed, const answer *script, int n) {
    reset(listed, script, n);
    F.listed_taint_rules = false;
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", PORT);
    memset(&e->kc, 0, sizeof(e->kc));
    e->kc.server = strdup(server);
    ks_kube_client_options o = {.config = &e->kc};
    char *err = NULL;
    e->client = ks_kube_client_new(&o, &err);
    assert_non_null(e->client);
    ks_kube_cluster_client_options bo = {.client = e->client, .watch_dra = true, .watch_device_taint_rules = with_taint_rules};
    e->kb = ks_kube_cluster_client_new(&bo);
    e->b = ks_kube_cluster_client_iface(e->kb);
    assert_null(e->b->start(e->b->ctx, ignore, NULL));
    for (int i = 0; i < 500 && !e->b->synced(e->b->ctx); i++) usleep(10000);
    assert_true(e->b->synced(e->b->ctx));
}

static void env_stop(env *e) {
    ks_kube_cluster_client_free(e->kb);
    ks_kube_client_free(e->client);
    free(e->kc.server);
}

static json_t *call_body(int i) {
    pthread_mutex_lock(&F.mu);
    json_t *o = i < F.ncalls && F.calls[i].body ? json_loads(F.calls[i].body, 0, NULL) : NULL;
    pthread_mutex_unlock(&F.mu);
    return o;
}

static void assert_call(int i, const char *method, const char *url) {
    pthread_mutex_lock(&F.mu);
    assert_true(i < F.ncalls);
    assert_string_equal(F.calls[i].method, method);
    assert_string_equal(F.calls[i].url, url);
    pthread_mutex_unlock(&F.mu);
}

static int ncalls(void) {
    pthread_mutex_lock(&F.mu);
    int n = F.ncalls;
    pthread_mutex_unlock(&F.mu);
    return n;
}

#define PATH "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1"

static const char *get_str(json_t *o, const char *a, const char *b) {
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* ---- tests -------------------------------------------------------------------------------- */

/* A new allocation: the finalizer in a metadata update, then the
 * allocation and the reservation in one status update, both from the
 * object as listed (status.devices kept); the claim returned is the
 * answer. */
static void test_reserve_with_allocation(void **st) {
    env e;
    env_start(&e, claim_plain, (answer[]){{200, NULL}, {200, NULL}}, 2);
    ks_resource_claim *c = claim_of(claim_plain), *donor = claim_of(claim_allocated), *out = NULL;
    ks_pod *p = pod_of();
    ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = p, .allocation = donor->allocation};
    ks_status *s = claim_update(e.b, &u, &out);
    assert_null(s);
    assert_int_equal(ncalls(), 2);
    assert_call(0, "PUT", PATH);
    assert_call(1, "PUT", PATH "/status");
    json_t *b0 = call_body(0), *b1 = call_body(1);
    assert_string_equal(get_str(b0, "metadata", "resourceVersion"), "10");
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(b0, "metadata"), "finalizers"), 0)),
                        "resource.kubernetes.io/delete-protection");
    assert_null(json_object_get(json_object_get(b0, "status"), "allocation"));
    assert_string_equal(get_str(b1, "metadata", "resourceVersion"), "11");
    json_t *status = json_object_get(b1, "status");
    json_t *want = json_loads("{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
                              "\"pool\":\"n1\",\"device\":\"gpu-3\"}],\"config\":[{\"source\":\"FromClass\","
                              "\"requests\":[\"gpu\"],\"opaque\":{\"driver\":\"gpu.example.com\",\"parameters\":"
                              "{\"mode\":\"fast\",\"n\":[1,2]}}}]},\"nodeSelector\":{\"nodeSelectorTerms\":"
                              "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}",
                              0, NULL);
    assert_true(json_equal(json_object_get(status, "allocation"), want));
    json_decref(want);
    want = json_loads("[{\"resource\":\"pods\",\"name\":\"p1\",\"uid\":\"pod-uid\"}]", 0, NULL);
    assert_true(json_equal(json_object_get(status, "reservedFor"), want));
    json_decref(want);
    assert_non_null(json_object_get(status, "devices")); /* the drivers' status kept */
    json_decref(b0);
    json_decref(b1);
    assert_non_null(out);
    assert_string_equal(out->resource_version, "12");
    assert_non_null(out->allocation);
    assert_int_equal(out->nreserved, 1);
    assert_string_equal(out->reserved[0].uid, "pod-uid");
    assert_int_equal(out->nfinalizers, 1);
    KS_OBJECT_UNREF(out);
    KS_OBJECT_UNREF(c);
    KS_OBJECT_UNREF(donor);
    ks_pod_unref(p);
    env_stop(&e);
}

/* The client keeps its copies without metadata.managedFields (the API
 * server keeps the live object's when an update carries none): neither
 * the PUT from the listed copy nor the status PUT from the first answer's
 * copy sends them; the rest of the metadata is kept. */
#define MANAGED "\"managedFields\":[{\"manager\":\"apitool\",\"operation\":\"Update\",\"apiVersion\":" \
                "\"resource.k8s.io/v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{}}}]"
static const char claim_managed[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"10\"," MANAGED
    ",\"labels\":{\"a\":\"b\"}}," CLAIM_SPEC "}";
static const char claim_managed_finalized[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"11\"," MANAGED
    ",\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]}," CLAIM_SPEC "}";

static void test_kept_without_managed_fields(void **st) {
    env e;
    env_start(&e, claim_managed, (answer[]){{200, claim_managed_finalized}, {200, NULL}}, 2);
    ks_resource_claim *c = claim_of(claim_managed), *donor = claim_of(claim_allocated), *out = NULL;
    ks_pod *p = pod_of();
    ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = p, .allocation = donor->allocation};
    ks_status *s = claim_update(e.b, &u, &out);
    assert_null(s);
    assert_int_equal(ncalls(), 2);
    assert_call(0, "PUT", PATH);
    assert_call(1, "PUT", PATH "/status");
    json_t *b0 = call_body(0), *b1 = call_body(1);
    json_t *m0 = json_object_get(b0, "metadata"), *m1 = json_object_get(b1, "metadata");
    assert_null(json_object_get(m0, "managedFields"));
    assert_null(json_object_get(m1, "managedFields"));
    assert_string_equal(get_str(b0, "metadata", "uid"), "claim-uid");
    assert_string_equal(get_str(b0, "metadata", "resourceVersion"), "10");
    assert_string_equal(json_string_value(json_object_get(json_object_get(m0, "labels"), "a")), "b");
    assert_string_equal(get_str(b1, "metadata", "resourceVersion"), "11");
    assert_non_null(json_object_get(m1, "finalizers"));
    assert_non_null(json_object_get(json_object_get(b1, "status"), "allocation"));
    assert_non_null(json_object_get(b0, "spec"));
    json_decref(b0);
    json_decref(b1);
    KS_OBJECT_UNREF(out);
    KS_OBJECT_UNREF(c);
    KS_OBJECT_UNREF(donor);
    ks_pod_unref(p);
    env_stop(&e);
}

/* The plugin holds another version than the backend's: the update is
 * sent under the plugin's resourceVersion; a conflict gets the claim
 * again and retries; an allocation found then is upstream's error. */
static void test_conflict_then_allocated_elsewhere(void **st) {
    env e;
    env_start(&e, claim_finalized,
              (answer[]){{409, conflict}, {200, claim_finalized}, {409, conflict}, {200, claim_allocated}}, 4);
    ks_resource_claim *c = claim_of(claim_plain), *donor = claim_of(claim_allocated), *out = NULL;
    ks_pod *p = pod_of();
    ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = p, .allocation = donor->allocation};
    ks_status *s = claim_update(e.b, &u, &out);
    assert_non_null(s);
    assert_string_equal(ks_status_reason(s, 0), "claim default/c1 got allocated elsewhere in the meantime");
    ks_status_free(s);
    assert_null(out);
    assert_int_equal(ncalls(), 4);
    /* the finalizer is there in the kept version: straight to the status */
    assert_call(0, "PUT", PATH "/status");
    json_t *b0 = call_body(0);
    assert_string_equal(get_str(b0, "metadata", "resourceVersion"), "10");
    json_decref(b0);
    assert_call(1, "GET", PATH);
    assert_call(2, "PUT", PATH "/status");
    json_t *b2 = call_body(2);
    assert_string_equal(get_str(b2, "metadata", "resourceVersion"), "12");
    json_decref(b2);
    assert_call(3, "GET", PATH);
    KS_OBJECT_UNREF(c);
    KS_OBJECT_UNREF(donor);
    ks_pod_unref(p);
    env_stop(&e);
}

/* Five conflicts: the last error, with the step; a claim being deleted. */
static void test_conflicts_exhausted_and_deleted(void **st) {
    env e;
    answer five[9];
    for (int i = 0; i < 9; i++) five[i] = i % 2 ? (answer){200, claim_allocated} : (answer){409, conflict};
    env_start(&e, claim_allocated, five, 9);
    ks_resource_claim *c = claim_of(claim_allocated);
    ks_pod *p = pod_of();
    ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = p};
    ks_status *s = claim_update(e.b, &u, NULL);
    assert_non_null(s);
    assert_string_equal(ks_status_reason(s, 0),
                        "add reservation to claim default/c1: Operation cannot be fulfilled on "
                        "resourceclaims.resource.k8s.io \"c1\": the object has been modified; please apply your "
                        "changes to the latest version and try again");
    ks_status_free(s);
    assert_int_equal(ncalls(), 9); /* 5 updates, 4 GETs */
    json_t *b = call_body(0);
    json_t *rf = json_object_get(json_object_get(b, "status"), "reservedFor");
    assert_int_equal(json_array_size(rf), 2); /* the other pod's, then this one's */
    assert_string_equal(json_string_value(json_object_get(json_array_get(rf, 1), "uid")), "pod-uid");
    json_decref(b);
    env_stop(&e);

    env_start(&e, claim_allocated, (answer[]){{409, conflict}, {200, claim_deleting}}, 2);
    s = claim_update(e.b, &u, NULL);
    assert_non_null(s);
    assert_string_equal(ks_status_reason(s, 0), "claim default/c1 got deleted in the meantime");
    ks_status_free(s);
    assert_int_equal(ncalls(), 2);
    KS_OBJECT_UNREF(c);
    ks_pod_unref(p);
    env_stop(&e);
}

/* Unreserve: upstream's strategic merge patch; PostFilter: the status
 * without reservation, allocation and devices. Each gives back the claim
 * the API server answered. */
static void test_unreserve_and_deallocate(void **st) {
    env e;
    env_start(&e, claim_allocated, (answer[]){{200, claim_allocated}, {200, NULL}}, 2);
    ks_resource_claim *c = claim_of(claim_allocated);
    ks_pod *p = pod_of();
    ks_claim_update u = {.op = KS_CLAIM_UNRESERVE, .claim = c, .pod = p};
    ks_resource_claim *out = NULL;
    assert_null(claim_update(e.b, &u, &out));
    assert_non_null(out);
    assert_string_equal(out->resource_version, "13");
    KS_OBJECT_UNREF(out);
    assert_call(0, "PATCH", PATH "/status");
    pthread_mutex_lock(&F.mu);
    assert_string_equal(F.calls[0].ctype, "application/strategic-merge-patch+json");
    pthread_mutex_unlock(&F.mu);
    json_t *b = call_body(0);
    json_t *want = json_loads("{\"metadata\":{\"uid\":\"claim-uid\"},\"status\":{\"reservedFor\":[{\"$patch\":"
                              "\"delete\",\"uid\":\"pod-uid\"}]}}",
                              0, NULL);
    assert_true(json_equal(b, want));
    json_decref(b);
    json_decref(want);

    u.op = KS_CLAIM_DEALLOCATE;
    assert_null(claim_update(e.b, &u, &out));
    assert_non_null(out);
    assert_null(out->allocation);
    KS_OBJECT_UNREF(out);
    assert_call(1, "PUT", PATH "/status");
    b = call_body(1);
    assert_string_equal(get_str(b, "metadata", "resourceVersion"), "13");
    assert_int_equal(json_object_size(json_object_get(b, "status")), 0);
    /* kept from the patch's answer, allocated: what a status update needs */
    assert_null(json_object_get(b, "spec"));
    assert_string_equal(get_str(b, "metadata", "uid"), "claim-uid");
    json_decref(b);
    KS_OBJECT_UNREF(c);
    ks_pod_unref(p);
    env_stop(&e);
}

/* An allocated claim is only written through /status, where the API
 * server takes the spec and the metadata from the stored object: the
 * client keeps of it the identity, resourceVersion, finalizers and the
 * whole status, and a shared claim's next reservation is one status PUT
 * of that, as upstream's (same verb, same resulting object). */
static const char claim_allocated_labeled[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
    "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"13\",\"generation\":1,"
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{\"a\":\"b\"},\"annotations\":{\"x\":\"y\"},"
    "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]}," CLAIM_SPEC
    ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
    "\"pool\":\"n1\",\"device\":\"gpu-3\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":"
    "[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}},\"reservedFor\":[{\"resource\":"
    "\"pods\",\"name\":\"other\",\"uid\":\"other-uid\"}],\"devices\":[{\"driver\":\"gpu.example.com\","
    "\"pool\":\"n1\",\"device\":\"gpu-3\",\"data\":{\"k\":1}}]}}";

static void test_allocated_kept_for_status_updates(void **st) {
    env e;
    env_start(&e, claim_allocated_labeled, (answer[]){{200, NULL}}, 1);
    /* kept deflated: the text comes back whole for the write below */
    ks_kube_cluster_client_stats stats;
    ks_kube_cluster_client_stats_get(e.kb, &stats);
    assert_int_equal(stats.kept_json, 1);
    assert_true(stats.kept_json_text_bytes > 400);
    assert_true(stats.kept_json_bytes * 2 < stats.kept_json_text_bytes);
    ks_resource_claim *c = claim_of(claim_allocated_labeled), *out = NULL;
    ks_pod *p = pod_of();
    ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = p};
    assert_null(claim_update(e.b, &u, &out));
    assert_int_equal(ncalls(), 1);
    assert_call(0, "PUT", PATH "/status");
    json_t *b = call_body(0);
    json_t *want = json_loads(
        "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
        "\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"13\","
        "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]},"
        "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
        "\"pool\":\"n1\",\"device\":\"gpu-3\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":"
        "[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}},\"reservedFor\":[{\"resource\":"
        "\"pods\",\"name\":\"other\",\"uid\":\"other-uid\"},{\"resource\":\"pods\",\"name\":\"p1\",\"uid\":\"pod-uid\"}],"
        "\"devices\":[{\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-3\",\"data\":{\"k\":1}}]}}",
        0, NULL);
    assert_non_null(want);
    if (!json_equal(b, want)) {
        char *t = json_dumps(b, JSON_COMPACT);
        fail_msg("status PUT body %s", t);
    }
    json_decref(b);
    json_decref(want);
    /* the answer is decoded for the plugin */
    assert_non_null(out);
    assert_int_equal(out->nreserved, 2);
    KS_OBJECT_UNREF(out);
    KS_OBJECT_UNREF(c);
    ks_pod_unref(p);
    env_stop(&e);
}

/* DRADeviceTaints: DeviceTaintRules are listed and watched only with the
 * gate (the backend's option); a share of a device (DRAConsumableCapacity)
 * is written with its shareID and consumedCapacity. */
static void test_taint_rules_and_shares(void **st) {
    env e;
    env_start(&e, claim_plain, (answer[]){{200, NULL}, {200, NULL}}, 2);
    assert_false(F.listed_taint_rules);
    ks_resource_claim *c = claim_of(claim_plain), *out = NULL;
    ks_pod *p = pod_of();
    ks_named_quantity used[] = {{"bandwidth", {.nano = (__int128)10 * 1000000000 * 1000000000, .format = 0}}};
    ks_device_result r = {.request = "gpu", .driver = "gpu.example.com", .pool = "n1", .device = "nic-0",
                          .share_id = "0b6c5ab1-0000-4000-8000-000000000001", .nconsumed = 1, .consumed = used};
    ks_allocation_result a = {.nresults = 1, .results = &r};
    ks_claim_update u = {.op = KS_CLAIM_RESERVE, .claim = c, .pod = p, .allocation = &a};
    assert_null(claim_update(e.b, &u, &out));
    json_t *b1 = call_body(1);
    json_t *res = json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(b1, "status"), "allocation"),
                                                         "devices"),
                                         "results"),
                         0);
    assert_string_equal(json_string_value(json_object_get(res, "shareID")), "0b6c5ab1-0000-4000-8000-000000000001");
    assert_string_equal(json_string_value(json_object_get(json_object_get(res, "consumedCapacity"), "bandwidth")), "10G");
    json_decref(b1);
    KS_OBJECT_UNREF(out);
    KS_OBJECT_UNREF(c);
    ks_pod_unref(p);
    env_stop(&e);
    with_taint_rules = true;
    env_start(&e, claim_plain, NULL, 0);
    assert_true(F.listed_taint_rules);
    env_stop(&e);
    with_taint_rules = false;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve_with_allocation),
        cmocka_unit_test(test_kept_without_managed_fields),
        cmocka_unit_test(test_allocated_kept_for_status_updates),
        cmocka_unit_test(test_conflict_then_allocated_elsewhere),
        cmocka_unit_test(test_conflicts_exhausted_and_deleted),
        cmocka_unit_test(test_unreserve_and_deallocate),
        cmocka_unit_test(test_taint_rules_and_shares),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
