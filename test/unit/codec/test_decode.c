/* Manifest decoding: the kind-like cluster dump (YAML and JSON), the other
 * kinds, lists, directories, and every error path with its exact message. */
#include "api/quantity.h"
#include "codec/decode.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define MI (1024LL * 1024)
#define KIND_YAML "test/fixtures/kind-cluster.yaml"
#define KIND_JSON "test/fixtures/kind-cluster.json"

static ks_cluster *load_file(const char *path) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    const char *paths[] = {path};
    bool ok = ks_load_paths(c, paths, 1, &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_true(ok);
    assert_int_equal(errs.n, 0);
    ks_errors_free(&errs);
    return c;
}

static ks_pod *find_pod(const ks_cluster *c, const char *ns, const char *name) {
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (strcmp(ks_str(c->pods.v[i]->ns), ns) == 0 && strcmp(ks_str(c->pods.v[i]->name), name) == 0)
            return c->pods.v[i];
    fail_msg("no pod %s/%s", ns, name);
    return NULL;
}

static const char *label(const ks_labels *l, const char *key) {
    ks_id v;
    return ks_labels_get(l, ks_intern(key), &v) ? ks_str(v) : NULL;
}

/* ---- the kind cluster ---------------------------------------------------- */

static void check_kind_cluster(const ks_cluster *c, bool json) {
    assert_int_equal(c->nodes.n, 3);
    assert_int_equal(c->pods.n, 15);
    /* namespaces the pods live in exist implicitly */
    assert_int_equal(c->namespaces.n, 3);
    assert_non_null(ks_cluster_namespace(c, ks_intern("local-path-storage")));
    const ks_namespace *ns = ks_cluster_namespace(c, ks_intern("kube-system"));
    assert_string_equal(label(&ns->labels, "kubernetes.io/metadata.name"), "kube-system");

    const ks_node *cp = ks_cluster_node(c, ks_intern("kind-control-plane"));
    assert_non_null(cp);
    assert_ptr_equal(cp, c->nodes.v[0]);
    assert_string_equal(label(&cp->labels, "kubernetes.io/hostname"), "kind-control-plane");
    assert_string_equal(label(&cp->labels, "node-role.kubernetes.io/control-plane"), "");
    assert_int_equal(cp->ntaints, 1);
    assert_string_equal(ks_str(cp->taints[0].key), "node-role.kubernetes.io/control-plane");
    assert_int_equal(cp->taints[0].effect, KS_EFFECT_NO_SCHEDULE);
    assert_int_equal(cp->taints[0].value, KS_ID_NONE);
    assert_false(cp->unschedulable);
    assert_int_equal(cp->allocatable.milli_cpu, 8000);
    assert_int_equal(cp->allocatable.memory, 32590136LL * 1024);
    assert_int_equal(cp->allocatable.ephemeral_storage, 102625208LL * 1024);
    assert_int_equal(cp->allocatable.allowed_pods, 110);
    assert_int_equal(cp->allocatable.nscalar, 2); /* hugepages-1Gi, hugepages-2Mi */
    assert_int_equal(cp->capacity.milli_cpu, 8000);
    assert_int_equal(cp->nimages, 10);
    assert_int_equal(ks_node_image_size(cp, ks_intern("registry.k8s.io/kube-proxy:v1.34.0")), 97868341);
    assert_string_equal(cp->uid, "5c0d9c37-1f5c-4bd4-9a4c-3a3f8d1e2b61");
    assert_int_equal(cp->creation_ts, 1760433151); /* 2025-10-14T09:12:31Z */
    const ks_node *w2 = ks_cluster_node(c, ks_intern("kind-worker2"));
    assert_null(ks_cluster_node(c, ks_intern("no-such-node")));
    assert_int_equal(w2->ntaints, 0);

    ks_pod *dns = find_pod(c, "kube-system", "coredns-66bc5c9577-7kbfq");
    assert_int_equal(dns->requests.milli_cpu, 100);
    assert_int_equal(dns->requests.memory, 70 * MI);
    assert_int_equal(dns->containers[0].limits.memory, 170 * MI);
    assert_int_equal(dns->priority, 2000000000);
    assert_true(dns->has_priority);
    assert_string_equal(ks_str(dns->priority_class), "system-cluster-critical");
    assert_int_equal(dns->preemption_policy, KS_PREEMPT_LOWER_PRIORITY);
    assert_string_equal(ks_str(dns->node_name), "kind-control-plane");
    assert_string_equal(ks_str(dns->scheduler_name), "default-scheduler");
    assert_int_equal(dns->phase, KS_PHASE_RUNNING);
    assert_int_equal(dns->ntolerations, 4);
    assert_int_equal(dns->tolerations[0].op, KS_TOL_EXISTS);
    assert_int_equal(dns->tolerations[0].effect, KS_EFFECT_ALL);
    assert_int_equal(dns->tolerations[1].op, KS_TOL_EQUAL);
    assert_true(dns->tolerations[2].has_seconds);
    assert_int_equal(dns->tolerations[2].seconds, 300);
    assert_int_equal(dns->npref_anti, 1);
    assert_int_equal(dns->pref_anti[0].weight, 100);
    assert_string_equal(ks_str(dns->pref_anti[0].topology_key), "kubernetes.io/hostname");
    assert_int_equal(dns->pref_anti[0].selector.nreq, 1);
    assert_int_equal(dns->pref_anti[0].selector.reqs[0].op, KS_OP_IN);
    assert_string_equal(label(&dns->node_selector, "kubernetes.io/os"), "linux");
    assert_int_equal(dns->containers[0].nports, 3);
    assert_string_equal(ks_str(dns->containers[0].ports[0].protocol), "UDP");
    assert_int_equal(dns->nhost_ports, 0);
    assert_int_equal(dns->nowners, 1);
    assert_string_equal(ks_str(ks_pod_controller(dns)->kind), "ReplicaSet");
    assert_string_equal(dns->containers[0].image, "registry.k8s.io/coredns/coredns:v1.12.1");
    assert_int_equal(dns->containers[0].image_id, ks_intern("registry.k8s.io/coredns/coredns:v1.12.1"));
    assert_true(dns->has_start_time);
    assert_int_equal(dns->nconditions, 5);

    /* DaemonSet pods: pinned with matchFields, tolerate everything */
    ks_pod *kp = find_pod(c, "kube-system", "kube-proxy-m9sf2");
    assert_true(kp->has_required_node_affinity);
    assert_int_equal(kp->required_node_affinity.nterms, 1);
    assert_int_equal(kp->required_node_affinity.terms[0].nfields, 1);
    assert_int_equal(kp->required_node_affinity.terms[0].fields[0].key, KS_FIELD_METADATA_NAME);
    assert_true(ks_node_selector_matches(&kp->required_node_affinity, &w2->labels,
                                         ks_intern("kind-worker")));
    assert_false(ks_node_selector_matches(&kp->required_node_affinity, &w2->labels, w2->name));
    assert_true(kp->host_network);
    assert_true(ks_tolerations_tolerate(kp->tolerations, kp->ntolerations, &cp->taints[0]));
    assert_int_equal(kp->requests.milli_cpu, 0);
    assert_int_equal(kp->nonzero_requests.milli_cpu, 100);
    assert_int_equal(kp->nonzero_requests.memory, 200 * MI);

    /* the static pods */
    ks_pod *api = find_pod(c, "kube-system", "kube-apiserver-kind-control-plane");
    assert_int_equal(api->requests.milli_cpu, 250);
    assert_int_equal(api->priority, 2000001000);
    assert_string_equal(ks_str(ks_pod_controller(api)->kind), "Node");

    /* the user workload: the pending replica and its anti-affinity */
    ks_pod *web = find_pod(c, "default", "web-5d9c7b8f6d-r8m4t");
    assert_int_equal(web->node_name, KS_ID_NONE);
    assert_int_equal(web->phase, KS_PHASE_PENDING);
    assert_int_equal(web->requests.milli_cpu, 6000);
    assert_int_equal(web->requests.memory, 128 * MI);
    assert_int_equal(web->priority, 0);
    assert_int_equal(web->nreq_anti, 1);
    assert_true(ks_selector_matches(&web->req_anti[0].selector, &web->labels));
    assert_int_equal(web->containers[0].image_id, ks_intern("nginx:1.27"));
    assert_int_equal(web->creation_ts, 1760434200);

    /* where every object came from */
    assert_string_equal(dns->source_file, json ? KIND_JSON : KIND_YAML);
    if (json) {
        assert_int_equal(dns->source_line, 0);
    } else {
        assert_true(dns->source_line > 1);
        assert_int_equal(c->nodes.v[0]->source_line, 3);
    }
    assert_non_null(dns->tree);
    assert_string_equal(kt_get(kt_get(dns->tree, "metadata"), "name")->text, "coredns-66bc5c9577-7kbfq");
    for (uint32_t i = 1; i < c->pods.n; i++)
        assert_true(c->pods.v[i]->input_index > c->pods.v[i - 1]->input_index);
    assert_true(c->pods.v[0]->input_index > c->nodes.v[2]->input_index);
}

static void test_kind_yaml(void **st) {
    (void)st;
    ks_cluster *c = load_file(KIND_YAML);
    check_kind_cluster(c, false);
    ks_cluster_free(c);
}

static void test_kind_json(void **st) {
    (void)st;
    ks_cluster *c = load_file(KIND_JSON);
    check_kind_cluster(c, true);
    ks_cluster_free(c);
}

/* Both encodings of the same dump give the same objects. */
static void test_kind_yaml_equals_json(void **st) {
    (void)st;
    ks_cluster *y = load_file(KIND_YAML), *j = load_file(KIND_JSON);
    assert_int_equal(y->pods.n, j->pods.n);
    for (uint32_t i = 0; i < y->pods.n; i++) {
        const ks_pod *a = y->pods.v[i], *b = j->pods.v[i];
        assert_int_equal(a->key, b->key);
        assert_true(ks_resource_equal(&a->requests, &b->requests));
        assert_true(ks_resource_equal(&a->nonzero_requests, &b->nonzero_requests));
        assert_int_equal(a->labels.n, b->labels.n);
        assert_memory_equal(a->labels.kv, b->labels.kv, a->labels.n * sizeof(ks_label));
        assert_int_equal(a->ntolerations, b->ntolerations);
        assert_int_equal(a->priority, b->priority);
        assert_int_equal(a->node_name, b->node_name);
        assert_int_equal(a->creation_ts, b->creation_ts);
    }
    for (uint32_t i = 0; i < y->nodes.n; i++) {
        assert_true(ks_resource_equal(&y->nodes.v[i]->allocatable, &j->nodes.v[i]->allocatable));
        assert_int_equal(y->nodes.v[i]->nimages, j->nodes.v[i]->nimages);
    }
    ks_cluster_free(y);
    ks_cluster_free(j);
}

/* A pod keeps its document alive after the cluster is gone. */
/* The node index follows changes made to the vector directly. */
static void test_node_index(void **st) {
    (void)st;
    ks_cluster *c = load_file(KIND_YAML);
    ks_node *w = ks_cluster_node(c, ks_intern("kind-worker"));
    assert_non_null(w);
    /* swap two nodes and replace one, keeping the count */
    ks_node *t = c->nodes.v[0];
    c->nodes.v[0] = c->nodes.v[2];
    c->nodes.v[2] = t;
    assert_ptr_equal(ks_cluster_node(c, ks_intern("kind-control-plane")), c->nodes.v[2]);
    ks_node *n = ks_node_new();
    n->name = ks_intern("replacement");
    ks_node_unref(c->nodes.v[1]);
    c->nodes.v[1] = n;
    assert_null(ks_cluster_node(c, ks_intern("kind-worker")));
    assert_ptr_equal(ks_cluster_node(c, ks_intern("replacement")), n);
    ks_cluster_free(c);
}

static void test_pod_outlives_cluster(void **st) {
    (void)st;
    ks_cluster *c = load_file(KIND_YAML);
    ks_pod *p = ks_pod_ref(c->pods.v[3]);
    ks_pod *clone = ks_pod_clone(p);
    ks_cluster_free(c);
    assert_non_null(kt_get(p->tree, "spec"));
    assert_string_equal(p->source_file, KIND_YAML);
    clone->node_name = ks_intern("elsewhere");
    assert_int_equal(clone->ncontainers, p->ncontainers);
    assert_string_equal(clone->containers[0].name, p->containers[0].name);
    ks_pod_unref(p);
    assert_non_null(clone->tree);
    ks_pod_unref(clone);
}

/* ---- loading from strings ------------------------------------------------ */

static ks_errors errs;

/* Load text as if from a file called name; returns the cluster (or NULL
 * with the messages in errs). */
static ks_cluster *load_text(const char *name, const char *text) {
    ks_errors_free(&errs);
    ks_cluster *c = ks_cluster_new();
    if (ks_load_buffer(c, name, text, strlen(text), &errs)) return c;
    ks_cluster_free(c);
    return NULL;
}

static ks_cluster *load_ok(const char *text) {
    ks_cluster *c = load_text("ok.yaml", text);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_non_null(c);
    return c;
}

/* The load fails with exactly these messages (NULL-terminated). */
static void expect_errors(const char *name, const char *text, ...) {
    ks_cluster *c = load_text(name, text);
    if (c) fail_msg("%s loaded without error", name);
    va_list ap;
    va_start(ap, text);
    size_t i = 0;
    for (const char *want; (want = va_arg(ap, const char *)); i++) {
        if (i >= errs.n) fail_msg("missing error: %s", want);
        if (strcmp(errs.v[i], want) != 0) fail_msg("error %zu:\n  got  %s\n  want %s", i, errs.v[i], want);
    }
    va_end(ap);
    if (i != errs.n) fail_msg("unexpected extra error: %s", errs.v[i]);
}

#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: default\nspec:\n"
#define CONTAINER "  containers:\n  - name: app\n    image: nginx\n"

static void test_error_format_example(void **st) {
    (void)st;
    expect_errors("cluster.yaml",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: default\nspec:\n"
                  "  containers:\n  - name: app\n    image: nginx\n    resources:\n      requests:\n"
                  "        memory: 1Gi\n        cpu: 12XY\n",
                  "cluster.yaml:13: pod default/web-1: spec.containers[0].resources.requests.cpu: "
                  "invalid quantity \"12XY\"",
                  NULL);
}

static void test_errors_syntax(void **st) {
    (void)st;
    expect_errors("bad.yaml", "kind: Pod\nmetadata:\n  name: a: b\n",
                  "bad.yaml:3: mapping values are not allowed in this context", NULL);
    expect_errors("bad.yaml", "kind: [Pod\n", "bad.yaml:2: did not find expected ',' or ']' (while parsing a flow sequence)", NULL);
    expect_errors("bad.json", "{\"kind\": \"Pod\",\n \"metadata\": {\"name\": }}\n",
                  "bad.json:2: unexpected token near '}'", NULL);
    expect_errors("bad.yaml", "a: &x 1\nb: *y\n", "bad.yaml:2: unknown anchor 'y' referenced", NULL);
    expect_errors("bad.yaml", "kind: Pod\nmetadata: {name: p}\nspec:\n  priority: .inf\n",
                  "bad.yaml:4: unsupported value: .inf (JSON has no such number)", NULL);
    expect_errors("bad.yaml", "{1: 2}: x\n", "bad.yaml:1: unsupported map key of type map", NULL);
    expect_errors("bad.yaml", "v: !!int abc\n", "bad.yaml:1: cannot decode !!str `abc` as a !!int", NULL);
}

static void test_errors_document(void **st) {
    (void)st;
    expect_errors("d.yaml", "- a\n- b\n", "d.yaml:1: expected an object, got list", NULL);
    expect_errors("d.yaml", "apiVersion: v1\nmetadata: {name: x}\n", "d.yaml:1: object has no kind", NULL);
    expect_errors("d.yaml", "kind: 3\n", "d.yaml:1: object has no kind", NULL);
    expect_errors("d.yaml", "kind: List\nitems: {a: 1}\n", "d.yaml:2: List: items: expected list", NULL);
    expect_errors("d.yaml", "kind: List\nitems:\n- 1\n", "d.yaml:3: List: items: expected a list of objects", NULL);
    expect_errors("d.yaml", "kind: List\nitems:\n- metadata: {name: x}\n", "d.yaml:3: object has no kind", NULL);
    expect_errors("d.json", "[1]", "d.json: expected an object, got list", NULL);
}

static void test_errors_metadata(void **st) {
    (void)st;
    expect_errors("m.yaml", "kind: Pod\nspec: {}\n", "m.yaml:1: pod: metadata.name: required", NULL);
    expect_errors("m.yaml", "kind: Node\nmetadata:\n  labels: {}\n", "m.yaml:3: node: metadata.name: required", NULL);
    expect_errors("m.yaml", "kind: Pod\nmetadata:\n  name: 5\n",
                  "m.yaml:3: pod: metadata.name: expected string, got int 5", NULL);
    expect_errors("m.yaml", "kind: Pod\nmetadata: [x]\n", "m.yaml:2: pod: metadata: expected map, got list", NULL);
    expect_errors("m.yaml", "kind: Pod\nmetadata:\n  name: p\n  labels: [a]\n",
                  "m.yaml:4: pod default/p: metadata.labels: expected map, got list", NULL);
    expect_errors("m.yaml", "kind: Pod\nmetadata:\n  name: p\n  labels:\n    version: 1\n",
                  "m.yaml:5: pod default/p: metadata.labels.version: expected string, got int 1", NULL);
    expect_errors("m.yaml", "kind: Pod\nmetadata:\n  name: p\n  creationTimestamp: yesterday\n",
                  "m.yaml:4: pod default/p: metadata.creationTimestamp: invalid time \"yesterday\" "
                  "(want RFC 3339, e.g. 2006-01-02T15:04:05Z)",
                  NULL);
    expect_errors("m.yaml", "kind: Pod\nmetadata:\n  name: p\n",
                  "m.yaml:1: pod default/p: spec: required", NULL);
}

static void test_errors_pod_fields(void **st) {
    (void)st;
    expect_errors("p.yaml", POD_HEAD "  nodeName: 5\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.nodeName: expected string, got int 5", NULL);
    expect_errors("p.yaml", POD_HEAD "  priority: 3000000000\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.priority: value 3000000000 out of range for int32", NULL);
    expect_errors("p.yaml", POD_HEAD "  priority: high\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.priority: expected integer, got string high", NULL);
    /* found by fuzz_api: a float beyond int64 was converted before its
     * range was checked (undefined behaviour; UBSan stops the asan build) */
    expect_errors("p.yaml", POD_HEAD "  priority: 3.081e+34\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.priority: expected integer, got float 3.081e+34", NULL);
    expect_errors("p.yaml", POD_HEAD "  priority: -1e300\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.priority: expected integer, got float -1e300", NULL);
    expect_errors("p.yaml", POD_HEAD "  hostNetwork: \"yes\"\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.hostNetwork: expected bool, got string yes", NULL);
    expect_errors("p.yaml", POD_HEAD "  preemptionPolicy: Sometimes\n" CONTAINER,
                  "p.yaml:7: pod default/web-1: spec.preemptionPolicy: unsupported value \"Sometimes\": "
                  "supported values: \"PreemptLowerPriority\", \"Never\"",
                  NULL);
    expect_errors("p.yaml", POD_HEAD "  containers: {name: app}\n",
                  "p.yaml:7: pod default/web-1: spec.containers: expected list, got map", NULL);
    expect_errors("p.yaml", POD_HEAD "  containers:\n  - null\n",
                  "p.yaml:8: pod default/web-1: spec.containers[0]: container must not be null", NULL);
    expect_errors("p.yaml", POD_HEAD CONTAINER "    ports:\n    - containerPort: 80\n      protocol: HTTP\n",
                  "p.yaml:12: pod default/web-1: spec.containers[0].ports[0].protocol: unsupported value "
                  "\"HTTP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                  NULL);
    expect_errors("p.yaml", POD_HEAD "  initContainers:\n  - name: i\n    restartPolicy: Sometimes\n" CONTAINER,
                  "p.yaml:9: pod default/web-1: spec.initContainers[0].restartPolicy: unsupported value "
                  "\"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                  NULL);
    expect_errors("p.yaml", POD_HEAD CONTAINER "status:\n  phase: Sleeping\n",
                  "p.yaml:11: pod default/web-1: status.phase: unsupported value \"Sleeping\": supported "
                  "values: \"Unknown\", \"Pending\", \"Running\", \"Succeeded\", \"Failed\"",
                  NULL);
    expect_errors("p.yaml", POD_HEAD CONTAINER "  tolerations:\n  - key: a\n    operator: Like\n    effect: Never\n",
                  "p.yaml:12: pod default/web-1: spec.tolerations[0].operator: unsupported value \"Like\": "
                  "supported values: \"Equal\", \"Exists\"",
                  "p.yaml:13: pod default/web-1: spec.tolerations[0].effect: unsupported value \"Never\": "
                  "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                  NULL);
    expect_errors("p.yaml", POD_HEAD CONTAINER "  topologySpreadConstraints:\n  - maxSkew: one\n"
                  "    topologyKey: zone\n    whenUnsatisfiable: Maybe\n    nodeTaintsPolicy: Always\n",
                  "p.yaml:11: pod default/web-1: spec.topologySpreadConstraints[0].maxSkew: expected integer, got string one",
                  "p.yaml:13: pod default/web-1: spec.topologySpreadConstraints[0].whenUnsatisfiable: "
                  "unsupported value \"Maybe\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                  "p.yaml:14: pod default/web-1: spec.topologySpreadConstraints[0].nodeTaintsPolicy: "
                  "unsupported value \"Always\": supported values: \"Honor\", \"Ignore\"",
                  NULL);
    /* an object's errors come in the order of their lines */
    expect_errors("p.yaml", POD_HEAD "  containers:\n  - name: app\n    resources:\n      requests: {cpu: x}\n"
                  "  nodeName: [a]\n  priority: z\n",
                  "p.yaml:10: pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity \"x\"",
                  "p.yaml:11: pod default/web-1: spec.nodeName: expected string, got list",
                  "p.yaml:12: pod default/web-1: spec.priority: expected integer, got string z", NULL);
    expect_errors("p.yaml", POD_HEAD CONTAINER "  affinity:\n    podAffinity:\n"
                  "      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 5\n",
                  "p.yaml:13: pod default/web-1: spec.affinity.podAffinity."
                  "preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm: required",
                  NULL);
}

static void test_errors_quantities(void **st) {
    (void)st;
    expect_errors("q.yaml", POD_HEAD CONTAINER "    resources:\n      limits:\n        memory: -1Gi\n",
                  "q.yaml:12: pod default/web-1: spec.containers[0].resources.limits.memory: quantity "
                  "\"-1Gi\" must not be negative",
                  NULL);
    expect_errors("q.yaml", POD_HEAD CONTAINER "    resources:\n      requests:\n        cpu: 10E\n",
                  "q.yaml:12: pod default/web-1: spec.containers[0].resources.requests.cpu: quantity \"10E\" "
                  "is too large",
                  NULL);
    /* cpu converts to milli-units, so its limit is a thousand times lower */
    expect_errors("q.yaml", POD_HEAD CONTAINER "    resources:\n      requests:\n        cpu: 9223372036854776\n"
                  "        memory: 9223372036854776\n",
                  "q.yaml:12: pod default/web-1: spec.containers[0].resources.requests.cpu: quantity "
                  "\"9223372036854776\" is too large",
                  NULL);
    expect_errors("q.yaml", POD_HEAD CONTAINER "    resources:\n      requests:\n        cpu: [1]\n",
                  "q.yaml:12: pod default/web-1: spec.containers[0].resources.requests.cpu: expected "
                  "quantity, got list",
                  NULL);
    expect_errors("q.yaml", POD_HEAD CONTAINER "    resources:\n      requests:\n        cpu: true\n",
                  "q.yaml:12: pod default/web-1: spec.containers[0].resources.requests.cpu: expected "
                  "quantity, got bool true",
                  NULL);
    expect_errors("q.yaml", POD_HEAD CONTAINER "  overhead:\n    cpu: 1x\n",
                  "q.yaml:11: pod default/web-1: spec.overhead.cpu: invalid quantity \"1x\"", NULL);
    expect_errors("q.yaml", "kind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable:\n    memory: 1..5Gi\n",
                  "q.yaml:5: node n1: status.allocatable.memory: invalid quantity \"1..5Gi\"", NULL);
    /* any number of scalar resources: a node with 40, a pod whose three
     * containers ask for 30 different ones */
    char text[8192] = "kind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable:\n";
    for (int i = 0; i < 40; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "    example.com/r%02d: %d\n", i, i + 1);
    strcat(text, "---\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers:\n");
    for (int c = 0; c < 3; c++) {
        snprintf(text + strlen(text), sizeof(text) - strlen(text),
                 "  - name: c%d\n    image: x\n    resources:\n      requests:\n", c);
        for (int i = 0; i < 10; i++)
            snprintf(text + strlen(text), sizeof(text) - strlen(text), "        example.com/r%02d: 1\n",
                     c * 10 + i);
    }
    ks_cluster *c = load_ok(text);
    const ks_resource *alloc = &c->nodes.v[0]->allocatable;
    assert_int_equal(alloc->nscalar, 40);
    assert_int_equal(ks_resource_get(alloc, ks_intern("example.com/r00")), 1);
    assert_int_equal(ks_resource_get(alloc, ks_intern("example.com/r39")), 40);
    const ks_pod *p = find_pod(c, "default", "p");
    assert_int_equal(p->requests.nscalar, 30);
    assert_int_equal(ks_resource_get(&p->requests, ks_intern("example.com/r29")), 1);
    ks_cluster_free(c);
}

static void test_errors_selectors(void **st) {
    (void)st;
#define TERM_HEAD POD_HEAD CONTAINER "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
#define TERM_PATH "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    expect_errors("s.yaml", TERM_HEAD "        - matchExpressions:\n          - key: zone\n            operator: Near\n",
                  "s.yaml:16: pod default/web-1: " TERM_PATH ".matchExpressions[0].operator: unsupported value "
                  "\"Near\": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"",
                  NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchExpressions:\n          - key: zone\n            operator: In\n",
                  "s.yaml:15: pod default/web-1: " TERM_PATH ".matchExpressions[0].values: values set can't be "
                  "empty for In and NotIn",
                  NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchExpressions:\n          - key: zone\n            operator: Exists\n"
                  "            values: [a]\n",
                  "s.yaml:17: pod default/web-1: " TERM_PATH ".matchExpressions[0].values: values set must be "
                  "empty for Exists and DoesNotExist",
                  NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchExpressions:\n          - key: gen\n            operator: Gt\n"
                  "            values: [\"1\", \"2\"]\n",
                  "s.yaml:17: pod default/web-1: " TERM_PATH ".matchExpressions[0].values: exactly one value is "
                  "required for Gt and Lt",
                  NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchExpressions:\n          - key: gen\n            operator: Lt\n"
                  "            values: [ten]\n",
                  "s.yaml:17: pod default/web-1: " TERM_PATH ".matchExpressions[0].values[0]: value \"ten\" must "
                  "be an integer for Gt and Lt",
                  NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchExpressions:\n          - key: zone\n",
                  "s.yaml:15: pod default/web-1: " TERM_PATH ".matchExpressions[0].operator: required", NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchFields:\n          - key: metadata.name\n            operator: Exists\n",
                  "s.yaml:16: pod default/web-1: " TERM_PATH ".matchFields[0].operator: unsupported value "
                  "\"Exists\": supported values: \"In\", \"NotIn\"",
                  NULL);
    expect_errors("s.yaml", TERM_HEAD "        - matchFields:\n          - key: metadata.name\n            operator: In\n"
                  "            values: [a, b]\n",
                  "s.yaml:17: pod default/web-1: " TERM_PATH ".matchFields[0].values: must have one element", NULL);
    /* label selectors know no Gt */
    expect_errors("s.yaml", POD_HEAD CONTAINER "  affinity:\n    podAntiAffinity:\n"
                  "      requiredDuringSchedulingIgnoredDuringExecution:\n      - topologyKey: zone\n"
                  "        labelSelector:\n          matchExpressions:\n          - key: a\n            operator: Gt\n"
                  "            values: [\"1\"]\n",
                  "s.yaml:17: pod default/web-1: spec.affinity.podAntiAffinity."
                  "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: "
                  "\"Gt\" is not a valid label selector operator",
                  NULL);
    expect_errors("s.yaml", "kind: PodDisruptionBudget\napiVersion: policy/v1\nmetadata: {name: b, namespace: x}\n"
                  "spec:\n  minAvailable: half\n  selector:\n    matchLabels: {app: 1}\n",
                  "s.yaml:5: poddisruptionbudget x/b: spec.minAvailable: invalid value \"half\": must be an "
                  "integer or a percentage",
                  "s.yaml:7: poddisruptionbudget x/b: spec.selector.matchLabels.app: expected string, got int 1",
                  NULL);
}

static void test_errors_other_kinds(void **st) {
    (void)st;
    expect_errors("o.yaml", "kind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n  - key: a\n",
                  "o.yaml:5: node n1: spec.taints[0].effect: required", NULL);
    expect_errors("o.yaml", "kind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n  - key: a\n    effect: Sometimes\n",
                  "o.yaml:6: node n1: spec.taints[0].effect: unsupported value \"Sometimes\": supported values: "
                  "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                  NULL);
    expect_errors("o.yaml", "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\n",
                  "o.yaml:1: priorityclass high: value: required", NULL);
    expect_errors("o.yaml", "kind: PersistentVolumeClaim\nmetadata: {name: c}\nspec:\n  accessModes: [ReadWriteSome]\n",
                  "o.yaml:4: persistentvolumeclaim default/c: spec.accessModes[0]: unsupported value "
                  "\"ReadWriteSome\": supported values: \"ReadWriteOnce\", \"ReadOnlyMany\", \"ReadWriteMany\", "
                  "\"ReadWriteOncePod\"",
                  NULL);
    expect_errors("o.yaml", "kind: StorageClass\nmetadata: {name: s}\nvolumeBindingMode: Later\n",
                  "o.yaml:3: storageclass s: volumeBindingMode: unsupported value \"Later\": supported values: "
                  "\"Immediate\", \"WaitForFirstConsumer\"",
                  NULL);
    expect_errors("o.yaml", "kind: PodGroup\napiVersion: scheduling.x-k8s.io/v1alpha1\nmetadata: {name: g}\n"
                  "spec:\n  minMember: lots\n",
                  "o.yaml:5: podgroup default/g: spec.minMember: expected integer, got string lots", NULL);
    expect_errors("o.yaml", "kind: Service\nmetadata: {name: s}\nspec:\n  selector: [app]\n",
                  "o.yaml:4: service default/s: spec.selector: expected map, got list", NULL);
    /* a kind the simulator uses, in a version it does not read */
    expect_errors("o.yaml", "kind: Deployment\napiVersion: extensions/v1beta1\nmetadata: {name: web}\n",
                  "o.yaml:2: Deployment web: apiVersion: extensions/v1beta1 is not read by ksched (it reads "
                  "Deployment apps/v1)",
                  NULL);
    expect_errors("o.yaml", "kind: List\napiVersion: v1\nitems:\n- kind: CronJob\n  apiVersion: batch/v1beta1\n"
                  "  metadata: {name: nightly, namespace: ops}\n",
                  "o.yaml:5: CronJob ops/nightly: apiVersion: batch/v1beta1 is not read by ksched (it reads "
                  "CronJob batch/v1)",
                  NULL);
    expect_errors("o.yaml", "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: web}\nspec: {replicas: -1}\n",
                  "o.yaml:4: deployment default/web: spec.replicas: must be greater than or equal to 0", NULL);
}

/* Admission: a named PriorityClass must exist (here or loaded before). */
static void test_errors_admission(void **st) {
    (void)st;
    expect_errors("a.yaml", POD_HEAD "  priorityClassName: gold\n" CONTAINER,
                  "a.yaml:7: pod default/web-1: spec.priorityClassName: no PriorityClass with name gold was found",
                  NULL);
}

static void test_errors_duplicates(void **st) {
    (void)st;
    expect_errors("dup.yaml", "kind: Node\nmetadata: {name: n1}\n---\nkind: Node\nmetadata: {name: n1}\n",
                  "dup.yaml:4: node n1: already defined at dup.yaml:1", NULL);
    expect_errors("dup.yaml", POD_HEAD CONTAINER "---\n" POD_HEAD CONTAINER,
                  "dup.yaml:11: pod default/web-1: already defined at dup.yaml:1", NULL);
    /* JSON has no lines to name */
    expect_errors("dup.json", "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}\n"
                  "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}\n",
                  "dup.json: node n1: already defined at dup.json", NULL);
    /* same name, different namespaces or kinds: fine */
    ks_cluster *c = load_ok("kind: Service\nmetadata: {name: web}\n---\nkind: ReplicaSet\nmetadata: {name: web}\n"
                            "---\nkind: Service\nmetadata: {name: web, namespace: other}\n");
    assert_int_equal(c->workloads.n, 3);
    ks_cluster_free(c);
}

/* Every problem is reported, and nothing of a failed load is kept. */
static void test_all_or_nothing(void **st) {
    (void)st;
    ks_cluster *c = load_ok("kind: Node\nmetadata: {name: n1}\n");
    const char *text = "kind: Node\nmetadata: {name: n2}\n---\nkind: Pod\nmetadata: {name: 7}\n---\n"
                       "kind: Node\nmetadata: {name: n1}\n---\nkind: Node\nmetadata: {name: n3}\nspec: {unschedulable: 1}\n";
    ks_errors_free(&errs);
    assert_false(ks_load_buffer(c, "more.yaml", text, strlen(text), &errs));
    assert_int_equal(errs.n, 3);
    assert_string_equal(errs.v[0], "more.yaml:5: pod: metadata.name: expected string, got int 7");
    assert_string_equal(errs.v[1], "more.yaml:12: node n3: spec.unschedulable: expected bool, got int 1");
    assert_string_equal(errs.v[2], "more.yaml:7: node n1: already defined at ok.yaml:1");
    assert_int_equal(c->nodes.n, 1);
    assert_int_equal(c->next_input_index, 1);
    /* then a good load continues the input order */
    ks_errors_free(&errs);
    text = "kind: Node\nmetadata: {name: n2}\n";
    assert_true(ks_load_buffer(c, "more.yaml", text, strlen(text), &errs));
    assert_int_equal(c->nodes.n, 2);
    assert_int_equal(c->nodes.v[1]->input_index, 1);
    /* a duplicate of an earlier load is an error too */
    ks_errors_free(&errs);
    assert_false(ks_load_buffer(c, "again.yaml", text, strlen(text), &errs));
    assert_string_equal(errs.v[0], "again.yaml:1: node n2: already defined at more.yaml:1");
    ks_cluster_free(c);
}

/* ---- the other kinds, lists, defaults ------------------------------------ */

static void test_kinds(void **st) {
    (void)st;
    ks_cluster *c = load_ok(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n"
        "globalDefault: true\npreemptionPolicy: Never\n---\n"
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  labels: {env: prod}\n---\n"
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1, labels: {topology.kubernetes.io/zone: a}}\n"
        "spec:\n  capacity: {storage: 10Gi}\n  accessModes: [ReadWriteOnce, ReadOnlyMany]\n"
        "  storageClassName: fast\n  claimRef: {namespace: team, name: data}\n"
        "  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}\n"
        "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
        "        - {key: zone, operator: In, values: [a]}\nstatus: {phase: Bound}\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: team\n"
        "  annotations: {volume.kubernetes.io/selected-node: n1}\n"
        "spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 5Gi}}\n  volumeName: pv1\n"
        "  storageClassName: \"\"\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: old\n  annotations: {volume.beta.kubernetes.io/storage-class: slow}\n---\n"
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\n"
        "  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}\nprovisioner: ebs.csi.aws.com\n"
        "volumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n- matchLabelExpressions:\n"
        "  - {key: topology.kubernetes.io/zone, values: [a, b]}\n---\n"
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec:\n  drivers:\n"
        "  - name: ebs.csi.aws.com\n    nodeID: i-1\n    topologyKeys: [topology.ebs.csi.aws.com/zone]\n"
        "    allocatable: {count: 25}\n---\n"
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb, namespace: team}\n"
        "spec:\n  maxUnavailable: 25%\n  selector: {matchLabels: {app: web}}\n"
        "status:\n  disruptionsAllowed: 1\n  disruptedPods: {web-1: \"2025-10-14T09:00:00Z\"}\n---\n"
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: gang, namespace: team}\n"
        "spec:\n  minMember: 4\n  scheduleTimeoutSeconds: 60\n  minResources: {cpu: \"8\", nvidia.com/gpu: 4}\n---\n"
        "apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: other-group-kind}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: team}\nspec: {selector: {app: web}}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: headless, namespace: team}\nspec: {clusterIP: None}\n---\n"
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: team}\n"
        "spec:\n  selector:\n    matchExpressions: [{key: app, operator: In, values: [db]}]\n---\n"
        "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {selector: {app: rc}}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n---\n"
        "apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: other-group}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped}\ndata: {a: b}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped2}\n");
    assert_int_equal(c->priority_classes.n, 1);
    const ks_priority_class *pc = c->priority_classes.v[0];
    assert_int_equal(pc->value, 10);
    assert_true(pc->global_default);
    assert_int_equal(pc->preemption_policy, KS_PREEMPT_NEVER);
    assert_ptr_equal(ks_cluster_default_priority_class(c), pc);
    const ks_namespace *ns = ks_cluster_namespace(c, ks_intern("team"));
    assert_string_equal(label(&ns->labels, "env"), "prod");
    assert_string_equal(label(&ns->labels, "kubernetes.io/metadata.name"), "team");

    const ks_pv *pv = c->pvs.v[0];
    assert_int_equal(pv->capacity, 10LL << 30);
    assert_int_equal(pv->access_modes, KS_ACCESS_RWO | KS_ACCESS_ROX);
    assert_string_equal(ks_str(pv->storage_class), "fast");
    assert_string_equal(ks_str(pv->claim_name), "data");
    assert_string_equal(pv->csi_driver, "ebs.csi.aws.com");
    assert_true(pv->has_node_affinity);
    assert_int_equal(pv->node_affinity.nterms, 1);
    assert_string_equal(ks_str(pv->phase), "Bound");
    assert_string_equal(label(&pv->labels, "topology.kubernetes.io/zone"), "a");

    assert_int_equal(c->pvcs.n, 2);
    const ks_pvc *pvc = c->pvcs.v[0];
    assert_true(pvc->has_storage_class);
    assert_int_equal(pvc->storage_class, KS_ID_NONE);
    assert_int_equal(pvc->request, 5LL << 30);
    assert_string_equal(ks_str(pvc->volume_name), "pv1");
    assert_string_equal(label(&pvc->annotations, "volume.kubernetes.io/selected-node"), "n1");
    assert_true(c->pvcs.v[1]->has_storage_class);
    assert_string_equal(ks_str(c->pvcs.v[1]->storage_class), "slow");
    assert_string_equal(ks_str(c->pvcs.v[1]->ns), "default");

    const ks_storage_class *sc = c->storage_classes.v[0];
    assert_true(sc->is_default);
    assert_int_equal(sc->binding_mode, KS_BIND_WAIT_FOR_FIRST_CONSUMER);
    assert_string_equal(sc->provisioner, "ebs.csi.aws.com");
    assert_int_equal(sc->nallowed_topologies, 1);
    assert_int_equal(sc->allowed_topologies[0].exprs[0].nvalues, 2);

    const ks_csinode *cn = c->csinodes.v[0];
    assert_int_equal(cn->ndrivers, 1);
    assert_true(cn->drivers[0].has_allocatable);
    assert_int_equal(cn->drivers[0].allocatable_count, 25);
    assert_int_equal(cn->drivers[0].ntopology_keys, 1);

    const ks_pdb *pdb = c->pdbs.v[0];
    assert_true(pdb->max_unavailable.set && pdb->max_unavailable.is_percent);
    assert_int_equal(pdb->max_unavailable.value, 25);
    assert_false(pdb->min_available.set);
    assert_int_equal(pdb->disruptions_allowed, 1);
    assert_int_equal(pdb->ndisrupted, 1);

    assert_int_equal(c->pod_groups.n, 1);
    const ks_pod_group *pg = c->pod_groups.v[0];
    assert_int_equal(pg->min_member, 4);
    assert_int_equal(pg->schedule_timeout_seconds, 60);
    assert_true(pg->has_min_resources);
    assert_int_equal(pg->min_resources.milli_cpu, 8000);
    assert_int_equal(ks_resource_get(&pg->min_resources, ks_intern("nvidia.com/gpu")), 4);
    assert_non_null(pg->tree);

    assert_int_equal(c->workloads.n, 5);
    ks_labels web = {0};
    ks_label kv = {ks_intern("app"), ks_intern("web")};
    web.n = 1;
    web.kv = &kv;
    assert_true(ks_selector_matches(&c->workloads.v[0]->selector, &web));
    assert_true(c->workloads.v[1]->selector.nothing); /* a Service without selector */
    assert_int_equal(c->workloads.v[2]->kind, KS_WORKLOAD_STATEFULSET);
    assert_false(ks_selector_matches(&c->workloads.v[2]->selector, &web));
    assert_int_equal(c->workloads.v[3]->kind, KS_WORKLOAD_RC);
    /* workloads the simulator makes pods of keep their document */
    assert_int_equal(c->workloads.v[4]->kind, KS_WORKLOAD_DEPLOYMENT);
    assert_int_equal(c->workloads.v[4]->replicas, 2);
    assert_non_null(c->workloads.v[4]->tree);
    /* kinds not used are counted: another group's Deployment by its group */
    assert_int_equal(c->skipped.n, 3);
    assert_string_equal(ks_str(c->skipped.v[0].kind), "PodGroup");
    assert_string_equal(ks_str(c->skipped.v[1].kind), "Deployment.example.com");
    assert_string_equal(ks_str(c->skipped.v[2].kind), "ConfigMap");
    assert_int_equal(c->skipped.v[2].n, 2);
    ks_cluster_free(c);
}

static void test_lists(void **st) {
    (void)st;
    /* typed lists may leave out the items' kind; List may nest */
    ks_cluster *c = load_ok("apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: []}\n"
                            "- metadata: {name: b}\n  spec: {}\n---\n"
                            "apiVersion: v1\nkind: List\nitems:\n- kind: NodeList\n  items:\n  - metadata: {name: n1}\n"
                            "- kind: Node\n  metadata: {name: m}\n---\n---\nkind: List\nitems: []\n");
    assert_int_equal(c->pods.n, 2);
    assert_int_equal(c->nodes.n, 2);
    assert_string_equal(ks_str(c->nodes.v[1]->name), "m");
    ks_cluster_free(c);
}

/* What the API server fills in on creation. */
static void test_defaults(void **st) {
    (void)st;
    ks_cluster *c = load_ok(
        "kind: PriorityClass\nmetadata: {name: def}\nvalue: 5\nglobalDefault: true\npreemptionPolicy: Never\n---\n"
        "kind: PriorityClass\nmetadata: {name: def2}\nvalue: 3\nglobalDefault: true\n---\n"
        "kind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
        "kind: Pod\nmetadata: {name: plain, labels: {app: a}}\nspec:\n  hostNetwork: true\n  containers:\n"
        "  - name: c\n    image: registry/app\n    ports:\n    - containerPort: 8080\n"
        "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - topologyKey: zone\n        labelSelector: {matchLabels: {tier: x}}\n        matchLabelKeys: [app]\n"
        "        mismatchLabelKeys: [missing]\n---\n"
        "kind: Pod\nmetadata: {name: named}\nspec:\n  priorityClassName: high\n  containers: []\n---\n"
        "kind: Pod\nmetadata: {name: critical}\nspec:\n  priorityClassName: system-node-critical\n---\n"
        "kind: Pod\nmetadata: {name: dumped, uid: u1, creationTimestamp: \"2025-01-01T00:00:00Z\", labels: {app: a}}\n"
        "spec:\n  priority: 7\n  priorityClassName: gone\n  schedulerName: other\n  affinity:\n    podAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n      - topologyKey: zone\n"
        "        labelSelector: {matchLabels: {tier: x}}\n        matchLabelKeys: [app]\n");
    ks_pod *plain = find_pod(c, "default", "plain");
    assert_string_equal(ks_str(plain->scheduler_name), "default-scheduler");
    /* the lowest-valued global default class wins */
    assert_int_equal(plain->priority, 3);
    assert_string_equal(ks_str(plain->priority_class), "def2");
    assert_int_equal(plain->preemption_policy, KS_PREEMPT_LOWER_PRIORITY);
    assert_int_equal(plain->phase, KS_PHASE_PENDING);
    /* host-network pods get hostPort = containerPort */
    assert_int_equal(plain->nhost_ports, 1);
    assert_int_equal(plain->host_ports[0].host_port, 8080);
    assert_string_equal(ks_str(plain->host_ports[0].protocol), "TCP");
    assert_int_equal(plain->containers[0].image_id, ks_intern("registry/app:latest"));
    /* matchLabelKeys merged into the selector of a pod the API server
     * never saw (app In (a)); a missing key adds nothing */
    assert_int_equal(plain->req_affinity[0].selector.nreq, 2);
    ks_pod *named = find_pod(c, "default", "named");
    assert_int_equal(named->priority, 1000);
    assert_int_equal(find_pod(c, "default", "critical")->priority, 2000001000);
    /* a dumped pod keeps what the API server gave it */
    ks_pod *dumped = find_pod(c, "default", "dumped");
    assert_int_equal(dumped->priority, 7);
    assert_string_equal(ks_str(dumped->scheduler_name), "other");
    assert_int_equal(dumped->req_affinity[0].selector.nreq, 1);
    ks_cluster_free(c);
}

static void test_volumes_and_gates(void **st) {
    (void)st;
    ks_cluster *c = load_ok(
        "kind: Pod\nmetadata: {name: v}\nspec:\n  schedulingGates: [{name: wait}, {name: more}]\n"
        "  initContainers:\n  - name: side\n    restartPolicy: Always\n    ports: [{containerPort: 9, hostPort: 90, "
        "protocol: UDP, hostIP: 10.0.0.1}]\n"
        "  containers:\n  - name: c\n    ports: [{containerPort: 1}, {containerPort: 2, hostPort: 80}]\n"
        "  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: claim, readOnly: true}\n"
        "  - name: scratch\n    ephemeral: {volumeClaimTemplate: {spec: {}}}\n"
        "  - name: disk\n    gcePersistentDisk: {pdName: pd-1}\n"
        "  - name: ebs\n    awsElasticBlockStore: {volumeID: vol-1}\n"
        "  - name: rbd\n    rbd: {image: img, monitors: [m1, m2]}\n"
        "  - name: iscsi\n    iscsi: {iqn: iqn.x, targetPortal: 1.2.3.4, readOnly: true}\n"
        "  - name: inline\n    csi: {driver: d.example.com}\n  - name: cm\n    configMap: {name: x}\n");
    ks_pod *p = c->pods.v[0];
    assert_int_equal(p->ngates, 2);
    assert_string_equal(ks_str(p->scheduling_gates[1]), "more");
    assert_true(p->init_containers[0].sidecar);
    /* sidecars' host ports first, then the regular containers' */
    assert_int_equal(p->nhost_ports, 2);
    assert_int_equal(p->host_ports[0].host_port, 90);
    assert_string_equal(ks_str(p->host_ports[0].host_ip), "10.0.0.1");
    assert_int_equal(p->host_ports[1].host_port, 80);
    assert_int_equal(p->nvolumes, 8);
    assert_int_equal(p->volumes[0].kind, KS_VOL_PVC);
    assert_string_equal(p->volumes[0].claim_name, "claim");
    assert_true(p->volumes[0].read_only);
    assert_int_equal(p->volumes[1].kind, KS_VOL_EPHEMERAL);
    assert_string_equal(p->volumes[1].claim_name, "v-scratch");
    assert_int_equal(p->volumes[2].kind, KS_VOL_GCE_PD);
    assert_string_equal(p->volumes[2].disk_id, "pd-1");
    assert_int_equal(p->volumes[3].kind, KS_VOL_AWS_EBS);
    assert_int_equal(p->volumes[4].kind, KS_VOL_RBD);
    assert_string_equal(p->volumes[4].extra, "rbd");
    assert_int_equal(p->volumes[4].nmonitors, 2);
    assert_int_equal(p->volumes[5].kind, KS_VOL_ISCSI);
    assert_string_equal(p->volumes[5].disk_id, "iqn.x");
    assert_string_equal(p->volumes[6].csi_driver, "d.example.com");
    assert_int_equal(p->volumes[7].kind, KS_VOL_OTHER);
    assert_non_null(p->volumes[7].tree);
    ks_cluster_free(c);
}

/* Decoders called directly, as the API client does: no document arena, so
 * the objects copy their strings and keep no tree. */
static void test_direct_decode(void **st) {
    (void)st;
    const char *json = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"abc\"},"
                       "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":"
                       "{\"cpu\":0.5,\"memory\":1e3}}}]}}";
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    assert_true(kt_parse(a, "api", json, strlen(json), &docs, &n, &err));
    ks_errors e;
    ks_errors_init(&e);
    ks_decode_ctx ctx = {.file = "api", .errs = &e};
    ks_pod *p = ks_decode_pod(docs[0], &ctx);
    ks_arena_free(a);
    assert_non_null(p);
    assert_null(p->tree);
    assert_string_equal(p->uid, "abc");
    assert_string_equal(p->containers[0].name, "c");
    assert_string_equal(p->source_file, "api");
    /* numbers are quantities too: 0.5 cpu, 1e3 bytes */
    assert_int_equal(p->requests.milli_cpu, 500);
    assert_int_equal(p->requests.memory, 1000);
    ks_pod_unref(p);
    /* an error without line numbers */
    const char *bad = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":[]}}";
    a = ks_arena_new(0);
    assert_true(kt_parse(a, "api", bad, strlen(bad), &docs, &n, &err));
    assert_null(ks_decode_pod(docs[0], &ctx));
    assert_int_equal(e.n, 1);
    assert_string_equal(e.v[0], "api: pod default/p: spec.nodeName: expected string, got list");
    ks_arena_free(a);
    ks_errors_free(&e);
}

/* ---- files and directories ----------------------------------------------- */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_directories(void **st) {
    (void)st;
    char dir[] = "/tmp/ksched-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[512];
    snprintf(p, sizeof(p), "%s/b", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/z.yaml", dir);
    write_file(p, "kind: Node\nmetadata: {name: z}\n");
    snprintf(p, sizeof(p), "%s/b/y.yml", dir);
    write_file(p, "kind: Node\nmetadata: {name: yy}\n");
    snprintf(p, sizeof(p), "%s/a.json", dir);
    write_file(p, "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}\n{\"kind\": \"Node\", \"metadata\": {\"name\": \"a2\"}}");
    snprintf(p, sizeof(p), "%s/notes.txt", dir);
    write_file(p, "not a manifest");
    snprintf(p, sizeof(p), "%s/c.yaml", dir);
    write_file(p, "");

    ks_cluster *c = load_file(dir);
    /* sorted by full path: a.json, b/y.yml, c.yaml, z.yaml */
    assert_int_equal(c->nodes.n, 4);
    assert_string_equal(ks_str(c->nodes.v[0]->name), "a");
    assert_string_equal(ks_str(c->nodes.v[1]->name), "a2");
    assert_string_equal(ks_str(c->nodes.v[2]->name), "yy");
    assert_string_equal(ks_str(c->nodes.v[3]->name), "z");
    snprintf(p, sizeof(p), "%s/b/y.yml", dir);
    assert_string_equal(c->nodes.v[2]->source_file, p);
    ks_cluster_free(c);

    /* a bad file among good ones names itself */
    snprintf(p, sizeof(p), "%s/b/bad.yaml", dir);
    write_file(p, "kind: Node\nmetadata:\n  name: [x]\n");
    c = ks_cluster_new();
    ks_errors_free(&errs);
    const char *paths[] = {dir, "/nonexistent/ksched.yaml"};
    assert_false(ks_load_paths(c, paths, 2, &errs));
    assert_int_equal(errs.n, 2);
    char want[600];
    snprintf(want, sizeof(want), "%s:3: node: metadata.name: expected string, got list", p);
    assert_string_equal(errs.v[0], want);
    assert_string_equal(errs.v[1], "/nonexistent/ksched.yaml: No such file or directory");
    assert_int_equal(c->nodes.n, 0);
    ks_cluster_free(c);

    const char *files[] = {"b/bad.yaml", "b/y.yml", "z.yaml", "a.json", "notes.txt", "c.yaml", "b", ""};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
        remove(p);
    }
}

static int teardown(void **st) {
    (void)st;
    ks_errors_free(&errs);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_yaml),
        cmocka_unit_test(test_kind_json),
        cmocka_unit_test(test_kind_yaml_equals_json),
        cmocka_unit_test(test_pod_outlives_cluster),
        cmocka_unit_test(test_node_index),
        cmocka_unit_test(test_error_format_example),
        cmocka_unit_test(test_errors_syntax),
        cmocka_unit_test(test_errors_document),
        cmocka_unit_test(test_errors_metadata),
        cmocka_unit_test(test_errors_pod_fields),
        cmocka_unit_test(test_errors_quantities),
        cmocka_unit_test(test_errors_selectors),
        cmocka_unit_test(test_errors_other_kinds),
        cmocka_unit_test(test_errors_admission),
        cmocka_unit_test(test_errors_duplicates),
        cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_volumes_and_gates),
        cmocka_unit_test(test_direct_decode),
        cmocka_unit_test(test_directories),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
