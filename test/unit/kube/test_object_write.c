/* A write added from a plugin file alone (api_calls.h ks_object_write).
 * The plugin below, PlacedBy, is all there is to its write: in PreBind it
 * labels its pod with the node it goes to, a JSON merge patch built here,
 * with its in-memory form beside it. Nothing else in ksched knows the
 * write: the in-memory cluster applies it (the stored pod carries the
 * label) and the kube-apiserver client sends it as the PATCH a client-go
 * plugin would, to the path its kind table gives. Then the other verbs
 * through the same client: an update retried on conflict from a fresh
 * read, an edit that finds nothing to change, a JSON patch. */
#include "api/labels.h"
#include "backend/api_calls.h"
#include "framework/framework_internal.h"
#include "framework/handle.h"
#include "framework/status.h"
#include "kube/client.h"
#include "kube/kube_cluster_client.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "testutil.h"
#include "util/clock.h"

#include "apifake.h"

#include <jansson.h>
#include <ksched/ksched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* ---- the plugin ------------------------------------------------------------------------------ */

typedef struct label {
    const char *key, *value;
} label;

/* the REST form */
static json_t *label_patch(const ks_object_write *w) {
    const label *l = w->arg;
    return json_pack("{s:{s:{s:s}}}", "metadata", "labels", l->key, l->value);
}

/* the in-memory form: the stored pod's next version */
static void *label_apply(const void *cur_, const ks_object_write *w, ks_status **err) {
    const ks_pod *cur = cur_;
    const label *l = w->arg;
    ks_pod *np = ks_pod_clone_room(cur, (cur->labels.n + 1) * sizeof(ks_label) + 64);
    ks_id k = ks_intern(l->key), v = ks_intern(l->value);
    ks_labels out = {0, ks_arena_calloc(np->arena, cur->labels.n + 1, sizeof(ks_label))};
    for (uint32_t i = 0; i < cur->labels.n; i++)
        if (cur->labels.kv[i].key != k) out.kv[out.n++] = cur->labels.kv[i];
    out.kv[out.n++] = (ks_label){k, v};
    ks_labels_sort(&out);
    np->labels = out;
    return np;
}

static const ks_call_rules placed_rules = {.name = "placed_by_label"};

static ks_status *placed_pre_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    label l = {"example.com/placed-by", node};
    ks_object_write w = {.kind = "Pod",
                         .ns = ks_str(pod->ns),
                         .name = ks_str(pod->name),
                         .verb = KS_WRITE_MERGE_PATCH,
                         .patch = label_patch,
                         .apply = label_apply,
                         .action = "labelling",
                         .arg = &l};
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .pod = pod, .write = &w, .rules = &placed_rules};
    return ks_handle_api_call(self, &call);
}

static void *placed_create(const ks_args *args, ks_handle *h, char **err) { return h; }
static void placed_destroy(void *self) {}

static const ks_plugin_ops placed_by = {.abi_version = KS_ABI_VERSION,
                                        .name = "PlacedBy",
                                        .create = placed_create,
                                        .destroy = placed_destroy,
                                        .pre_bind = placed_pre_bind};

/* ---- in memory: the whole scheduler --------------------------------------------------------------- */

static int modified; /* pod updates the watchers saw */
static void on_watch(void *arg, const ks_watch_event *ev) {
    if (ev->kind == KS_KIND_POD && ev->type == KS_WATCH_MODIFIED) modified++;
}

static void test_memory_applies_it(void **state) {
    ks_cluster *c = ks_cluster_new();
    KS_VEC_PUSH(c->nodes, tu_node("node-a", 4000, 1LL << 33, NULL));
    ks_pod *p = tu_pod("default", "web", 500, 0, 0);
    KS_VEC_PUSH(c->pods, p);
    tu_profile tp;
    tu_profile_init(&tp, NULL);
    tu_profile_add_plugin(&tp, &tu_fit_plugin, 1);
    tu_profile_add_plugin(&tp, &placed_by, 0);
    const ks_plugin_ops *extra[] = {&placed_by};
    ks_registry *reg = tu_registry(extra, 1);
    tu_profile *ps[1] = {&tp};
    ks_config *cfg = tu_config(ps, 1);
    ks_clock *clock = ks_clock_sim_new(1700000000LL * KS_NS_PER_SEC);
    ks_memory_client *mb = ks_memory_client_new(c);
    ks_scheduler_options o = {.config = cfg, .registry = reg, .backend = ks_memory_client_iface(mb),
                              .clock = clock, .seed = 1, .ties = KS_TIES_BY_NAME};
    char *err = NULL;
    ks_scheduler *s = ks_scheduler_new(&o, &err);
    assert_non_null(s);
    assert_null(ks_scheduler_start(s));
    ks_scheduler_run_until_idle(s);
    const ks_pod *now = ks_memory_client_pod(mb, ks_pod_key(ks_intern("default"), ks_intern("web")));
    assert_non_null(now);
    assert_string_equal(ks_str(now->node_name), "node-a");
    ks_id v = KS_ID_NONE;
    assert_true(ks_labels_get(&now->labels, ks_intern("example.com/placed-by"), &v));
    assert_string_equal(ks_str(v), "node-a");
    ks_memory_client_stats ms;
    ks_memory_client_stats_get(mb, &ms);
    assert_int_equal(ms.object_writes, 1);
    assert_int_equal(ms.binds, 1);
    ks_scheduler_free(s);

    /* the watchers see the write as an update */
    modified = 0;
    ks_memory_client *mb2 = ks_memory_client_new(c);
    const ks_cluster_client *b = ks_memory_client_iface(mb2);
    assert_null(b->start(b->ctx, on_watch, NULL));
    label l = {"example.com/placed-by", "node-b"};
    ks_object_write w = {.kind = "Pod", .ns = "default", .name = "web", .verb = KS_WRITE_MERGE_PATCH,
                         .patch = label_patch, .apply = label_apply, .action = "labelling", .arg = &l};
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .write = &w, .rules = &placed_rules};
    assert_null(b->execute(b->ctx, &call));
    assert_int_equal(modified, 1);
    /* an object it does not have, a kind it does not store */
    w.name = "gone";
    ks_status *st = b->execute(b->ctx, &call);
    assert_non_null(st);
    assert_string_equal(ks_status_reason(st, 0), "labelling Pod default/gone: pods \"gone\" not found");
    ks_status_free(st);
    w.action = NULL;
    w.kind = "Lease";
    st = b->execute(b->ctx, &call);
    assert_non_null(st);
    ks_status_free(st);
    b->stop(b->ctx);
    ks_memory_client_free(mb2);

    ks_memory_client_free(mb);
    ks_clock_free(clock);
    tu_config_free(cfg);
    ks_registry_free(reg);
    ks_cluster_free(c);
}

/* ---- through the kube-apiserver client ------------------------------------------------------------ */

#define PVC_PATH "/api/v1/namespaces/default/persistentvolumeclaims/data"

static int conflicts; /* PUTs to answer with 409 first */

static int handler(const af_request *r, char **body) {
    if (!strcmp(r->method, "GET") && !strcmp(r->path, PVC_PATH)) {
        *body = strdup("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"data\","
                       "\"namespace\":\"default\",\"resourceVersion\":\"7\",\"annotations\":{\"a\":\"b\"}},"
                       "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},"
                       "\"volumeMode\":\"Filesystem\"},\"status\":{\"phase\":\"Pending\"}}");
        return 200;
    }
    if (!strcmp(r->method, "PUT") && conflicts > 0) {
        conflicts--;
        *body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"the object has "
                       "been modified\",\"reason\":\"Conflict\",\"code\":409}");
        return 409;
    }
    if (!strcmp(r->method, "PUT") || !strcmp(r->method, "PATCH")) {
        *body = strndup(r->body, r->body_len);
        return 200;
    }
    return 404;
}

typedef struct kube_env {
    ks_kube_client *client;
    ks_kube_cluster_client *kb;
    const ks_cluster_client *b;
} kube_env;

static void kube_start(kube_env *e) {
    assert_true(af_start(handler));
    char server[64];
    snprintf(server, sizeof server, "http://127.0.0.1:%u", AF.port);
    ks_kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = server;
    cfg.source = "test";
    ks_kube_client_options co = {.config = &cfg, .max_retries = 1, .timeout_ms = 5000};
    char *err = NULL;
    e->client = ks_kube_client_new(&co, &err);
    assert_non_null(e->client);
    ks_kube_cluster_client_options o = {.client = e->client};
    e->kb = ks_kube_cluster_client_new(&o);
    e->b = ks_kube_cluster_client_iface(e->kb);
}

static void kube_stop(kube_env *e) {
    ks_kube_cluster_client_free(e->kb);
    ks_kube_client_free(e->client);
    af_stop();
}

static ks_status *client_exec(void *ctx, const ks_api_call *ac) {
    const ks_cluster_client *b = ctx;
    return b->execute(b->ctx, ac);
}

static void test_kube_sends_it(void **state) {
    kube_env e;
    kube_start(&e);
    ks_framework fw = {.env = {.ctx = (void *)e.b, .api_call = client_exec}};
    fw.handle.fw = &fw;
    ks_pod *p = tu_pod("default", "web", 500, 0, 0);
    assert_null(placed_by.pre_bind(&fw.handle, NULL, p, "node-a"));
    assert_int_equal(af_nlog(), 1);
    af_request r = af_get(0);
    assert_string_equal(r.method, "PATCH");
    assert_string_equal(r.path, "/api/v1/namespaces/default/pods/web");
    assert_string_equal(r.content_type, "application/merge-patch+json");
    json_t *j = json_loadb(r.body, r.body_len, 0, NULL);
    json_t *want = json_loads("{\"metadata\":{\"labels\":{\"example.com/placed-by\":\"node-a\"}}}", 0, NULL);
    assert_true(json_equal(j, want));
    json_decref(j);
    json_decref(want);
    ks_kube_cluster_client_stats ks;
    ks_kube_cluster_client_stats_get(e.kb, &ks);
    assert_int_equal(ks.object_writes, 1);
    ks_pod_unref(p);
    kube_stop(&e);
}

/* an update: the selected-node annotation on a claim */
static ks_status *annotate(json_t *o, const ks_object_write *w) {
    json_t *ann = json_object_get(json_object_get(o, "metadata"), "annotations");
    if (json_object_get(ann, "example.com/node")) return ks_status_new(KS_SKIP, NULL);
    json_object_set_new(ann, "example.com/node", json_string(w->arg));
    return NULL;
}

static ks_status *already(json_t *o, const ks_object_write *w) { return ks_status_new(KS_SKIP, NULL); }

static json_t *remove_annotation(const ks_object_write *w) {
    return json_loads("[{\"op\":\"remove\",\"path\":\"/metadata/annotations/a\"}]", 0, NULL);
}

static void test_kube_update_and_patches(void **state) {
    kube_env e;
    kube_start(&e);
    conflicts = 1;
    ks_pvc *written = NULL;
    ks_object_write w = {.kind = "PersistentVolumeClaim", .ns = "default", .name = "data", .verb = KS_WRITE_UPDATE,
                         .edit = annotate, .arg = "node-a", .written = (void **)&written};
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .write = &w};
    assert_null(e.b->execute(e.b->ctx, &call));
    /* read, PUT (409), read again, PUT: upstream's RetryOnConflict */
    assert_int_equal(af_nlog(), 4);
    assert_string_equal(af_get(0).method, "GET");
    assert_string_equal(af_get(1).method, "PUT");
    assert_string_equal(af_get(2).method, "GET");
    af_request put = af_get(3);
    assert_string_equal(put.method, "PUT");
    assert_string_equal(put.path, PVC_PATH);
    json_t *j = json_loadb(put.body, put.body_len, 0, NULL);
    json_t *md = json_object_get(j, "metadata");
    assert_string_equal(json_string_value(json_object_get(md, "resourceVersion")), "7");
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "annotations"), "example.com/node")),
                        "node-a");
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "annotations"), "a")), "b");
    json_decref(j);
    /* the answer, decoded */
    assert_non_null(written);
    assert_string_equal(ks_str(written->name), "data");
    KS_OBJECT_UNREF(written);

    /* an edit that finds nothing to change: a read, no PUT */
    w.edit = already;
    w.written = NULL;
    assert_null(e.b->execute(e.b->ctx, &call));
    assert_int_equal(af_nlog(), 5);
    assert_string_equal(af_get(4).method, "GET");

    /* a JSON patch of the status subresource */
    w.verb = KS_WRITE_JSON_PATCH;
    w.patch = remove_annotation;
    w.subresource = "status";
    assert_null(e.b->execute(e.b->ctx, &call));
    af_request r = af_get(5);
    assert_string_equal(r.method, "PATCH");
    assert_string_equal(r.path, PVC_PATH "/status");
    assert_string_equal(r.content_type, "application/json-patch+json");

    /* a controller's write is the cluster's own: nothing sent */
    w.controller = true;
    assert_null(e.b->execute(e.b->ctx, &call));
    assert_int_equal(af_nlog(), 6);

    /* five conflicts: upstream's last error, with the action */
    w.controller = false;
    w.verb = KS_WRITE_UPDATE;
    w.subresource = NULL;
    w.edit = annotate;
    w.arg = "node-b";
    w.action = "update";
    conflicts = 5;
    ks_status *st = e.b->execute(e.b->ctx, &call);
    assert_non_null(st);
    assert_string_equal(ks_status_reason(st, 0), "update PersistentVolumeClaim default/data: the object has been modified");
    ks_status_free(st);
    assert_int_equal(af_count("PUT", PVC_PATH), 2 + 5);
    kube_stop(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_applies_it),
        cmocka_unit_test(test_kube_sends_it),
        cmocka_unit_test(test_kube_update_and_patches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
