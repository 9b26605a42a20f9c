/* The default plugins' QueueingHints, case by case as upstream's table
 * tests of v1.34.1 (each: the pod the plugin rejected, the event, the old
 * and the new object, the expected Queue / QueueSkip). Objects are written
 * as YAML flow mappings and decoded by the manifest decoders. A wrong kind
 * of object stands for upstream's "not-a-node" cases: an error, which
 * counts as Queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/dra.h"
#include "codec/decode.h"
#include "framework/events.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const ks_plugin_ops ks_plugin_node_unschedulable, ks_plugin_taint_toleration, ks_plugin_node_affinity,
    ks_plugin_node_ports, ks_plugin_node_resources_fit, ks_plugin_scheduling_gates, ks_plugin_inter_pod_affinity,
    ks_plugin_pod_topology_spread, ks_plugin_volume_restrictions, ks_plugin_volume_zone, ks_plugin_volume_binding,
    ks_plugin_node_volume_limits, ks_plugin_dynamic_resources, ks_plugin_default_preemption;

/* ---- objects ------------------------------------------------------------------ */

typedef struct obj {
    ks_kind kind;
    void *p;
} obj;

static obj decode(const char *kind, const char *yaml) {
    char doc[4096];
    /* a pod needs a spec; the cases leave out an empty one */
    bool bare = !strcmp(kind, "Pod") && !strstr(yaml, "spec:");
    snprintf(doc, sizeof(doc), "{kind: %s, %s%s}", kind, yaml, bare ? ", spec: {}" : "");
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (!kt_parse(a, "case.yaml", doc, strlen(doc), &docs, &n, &err)) fail_msg("%s: %s", doc, err);
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = "case.yaml", .errs = &errs};
    obj o = {0};
    if (!strcmp(kind, "Pod")) o = (obj){KS_KIND_POD, ks_decode_pod(docs[0], &ctx)};
    else if (!strcmp(kind, "Node")) o = (obj){KS_KIND_NODE, ks_decode_node(docs[0], &ctx)};
    else if (!strcmp(kind, "PersistentVolumeClaim")) o = (obj){KS_KIND_PVC, ks_decode_pvc(docs[0], &ctx)};
    else if (!strcmp(kind, "PersistentVolume")) o = (obj){KS_KIND_PV, ks_decode_pv(docs[0], &ctx)};
    else if (!strcmp(kind, "StorageClass")) o = (obj){KS_KIND_STORAGE_CLASS, ks_decode_storage_class(docs[0], &ctx)};
    else if (!strcmp(kind, "CSINode")) o = (obj){KS_KIND_CSINODE, ks_decode_csinode(docs[0], &ctx)};
    else if (!strcmp(kind, "CSIStorageCapacity"))
        o = (obj){KS_KIND_CSI_CAPACITY, ks_decode_csi_capacity(docs[0], &ctx)};
    else if (!strcmp(kind, "CSIDriver")) o = (obj){KS_KIND_CSI_DRIVER, ks_decode_csi_driver(docs[0], &ctx)};
    else if (!strcmp(kind, "VolumeAttachment"))
        o = (obj){KS_KIND_VOLUME_ATTACHMENT, ks_decode_volume_attachment(docs[0], &ctx)};
    else if (!strcmp(kind, "ResourceClaim"))
        o = (obj){KS_KIND_RESOURCE_CLAIM, ks_decode_resource_claim(docs[0], &ctx)};
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    if (!o.p) fail_msg("cannot decode %s", doc);
    ks_errors_free(&errs);
    ks_arena_free(a);
    return o;
}

static void release(obj o) { ks_kind_object_unref(o.kind, o.p); }

/* ---- the harness ------------------------------------------------------------------ */

typedef struct hint_case {
    const char *name;
    const char *pod;               /* YAML of the rejected pod (kind Pod) */
    ks_cluster_event ev;
    const char *old_kind, *old_obj; /* NULL: none */
    const char *new_kind, *new_obj;
    ks_queueing_hint want;
    bool want_err;
} hint_case;

static void run(const ks_plugin_ops *ops, const hint_case *cases, size_t n) {
    char *err = NULL;
    void *self = ops->create ? ops->create(NULL, NULL, &err) : NULL;
    assert_null(err);
    assert_non_null(ops->queueing_hint);
    for (size_t i = 0; i < n; i++) {
        const hint_case *c = &cases[i];
        obj pod = decode("Pod", c->pod);
        obj o = {0}, m = {0};
        if (c->old_obj) o = decode(c->old_kind, c->old_obj);
        if (c->new_obj) m = decode(c->new_kind, c->new_obj);
        ks_event_object eo, em;
        char *herr = NULL;
        ks_queueing_hint h = ops->queueing_hint(self, c->ev, pod.p, ks_event_object_of(&eo, o.kind, o.p),
                                                ks_event_object_of(&em, m.kind, m.p), &herr);
        if (herr) h = KS_QUEUE; /* as the framework reads an error */
        if (h != c->want || (herr != NULL) != c->want_err)
            fail_msg("%s / %s: hint %s (error %s), want %s%s", ops->name, c->name, h == KS_QUEUE ? "Queue" : "QueueSkip",
                     herr ? herr : "none", c->want == KS_QUEUE ? "Queue" : "QueueSkip", c->want_err ? " with an error" : "");
        free(herr);
        release(pod);
        if (o.p) release(o);
        if (m.p) release(m);
    }
    if (ops->destroy) ops->destroy(self);
}

#define RUN(ops, cases) run(&(ops), cases, sizeof(cases) / sizeof(cases[0]))

#define EV(r, a) ((ks_cluster_event){(r), (a)})
#define NODE_ADD EV(KS_EV_NODE, KS_ACT_ADD)
#define NODE_UPD(a) EV(KS_EV_NODE, (a))
#define POD_DEL EV(KS_EV_ASSIGNED_POD, KS_ACT_DELETE)
#define POD_ADD EV(KS_EV_ASSIGNED_POD, KS_ACT_ADD)
#define Q KS_QUEUE
#define SKIP KS_QUEUE_SKIP

#define EMPTY_POD "metadata: {name: p, uid: p}, spec: {containers: [{name: c, image: i}]}"

/* ---- NodeUnschedulable ------------------------------------------------------------ */

static void test_node_unschedulable(void **s) {
    static const hint_case cases[] = {
        {"error-wrong-new-object", EMPTY_POD, NODE_ADD, NULL, NULL, "Pod", EMPTY_POD, Q, true},
        {"skip-queue-on-unschedulable-node-added", EMPTY_POD, NODE_ADD, NULL, NULL, "Node",
         "metadata: {name: node1}, spec: {unschedulable: true}", SKIP, false},
        {"queue-on-schedulable-node-added", EMPTY_POD, NODE_ADD, NULL, NULL, "Node", "metadata: {name: node1}", Q, false},
        {"skip-unrelated-change-unschedulable-true", EMPTY_POD, NODE_UPD(KS_ACT_UPDATE_NODE_TAINT), "Node",
         "metadata: {name: node1}, spec: {unschedulable: true}", "Node",
         "metadata: {name: node1}, spec: {unschedulable: true, taints: [{key: node.kubernetes.io/not-ready, effect: "
         "NoExecute}]}",
         SKIP, false},
        {"skip-unrelated-change-unschedulable-false", EMPTY_POD, NODE_UPD(KS_ACT_UPDATE_NODE_TAINT), "Node",
         "metadata: {name: node1}", "Node",
         "metadata: {name: node1}, spec: {taints: [{key: node.kubernetes.io/not-ready, effect: NoExecute}]}", SKIP, false},
        {"queue-on-unschedulable-field-change", EMPTY_POD, NODE_UPD(KS_ACT_UPDATE_NODE_TAINT), "Node",
         "metadata: {name: node1}, spec: {unschedulable: true}", "Node", "metadata: {name: node1}", Q, false},
        {"skip-different-pod-update", "metadata: {name: p, uid: uid}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_TOLERATION), "Pod", "metadata: {name: q, uid: different-uid}",
         "Pod",
         "metadata: {name: q, uid: different-uid}, spec: {tolerations: [{key: node.kubernetes.io/unschedulable, "
         "operator: Exists}]}",
         SKIP, false},
        {"queue-when-the-unsched-pod-gets-toleration", "metadata: {name: p, uid: uid}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_TOLERATION), "Pod", "metadata: {name: p, uid: uid}", "Pod",
         "metadata: {name: p, uid: uid}, spec: {tolerations: [{key: node.kubernetes.io/unschedulable, operator: "
         "Exists}]}",
         Q, false},
        {"skip-when-the-unsched-pod-gets-unrelated-toleration", "metadata: {name: p, uid: uid}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_TOLERATION), "Pod", "metadata: {name: p, uid: uid}", "Pod",
         "metadata: {name: p, uid: uid}, spec: {tolerations: [{key: foo, operator: Exists}]}", SKIP, false},
    };
    RUN(ks_plugin_node_unschedulable, cases);
}

/* ---- TaintToleration --------------------------------------------------------------- */

#define TOL_USER2 \
    "metadata: {name: pod1, uid: pod1}, spec: {tolerations: [{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}]}"
#define TAINTED(v) "metadata: {name: nodeA}, spec: {taints: [{key: dedicated, value: " v ", effect: NoSchedule}]}"

static void test_taint_toleration(void **s) {
    static const hint_case cases[] = {
        {"backoff-wrong-new-object", TOL_USER2, NODE_ADD, NULL, NULL, "Pod", EMPTY_POD, Q, true},
        {"skip-queue-on-untoleratedtaint-node-added", TOL_USER2, NODE_ADD, NULL, NULL, "Node", TAINTED("user1"), SKIP,
         false},
        {"queue-on-toleratedtaint-node-added", TOL_USER2, NODE_ADD, NULL, NULL, "Node", TAINTED("user2"), Q, false},
        {"skip-unrelated-change", TOL_USER2, NODE_UPD(KS_ACT_UPDATE_NODE_TAINT), "Node", TAINTED("user1"), "Node",
         "metadata: {name: nodeA}, spec: {taints: [{key: dedicated, value: user1, effect: NoSchedule}, {key: "
         "dedicated, value: user3, effect: NoSchedule}]}",
         SKIP, false},
        {"queue-on-taint-change", TOL_USER2, NODE_UPD(KS_ACT_UPDATE_NODE_TAINT), "Node", TAINTED("user1"), "Node",
         TAINTED("user2"), Q, false},
        {"skip-another-pod-toleration-change", TOL_USER2, EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_TOLERATION),
         "Pod", "metadata: {name: pod2, uid: pod2}", "Pod",
         "metadata: {name: pod2, uid: pod2}, spec: {tolerations: [{key: dedicated, operator: Exists}]}", SKIP, false},
        {"queue-own-toleration-change", "metadata: {name: pod1, uid: pod1}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_TOLERATION), "Pod", "metadata: {name: pod1, uid: pod1}", "Pod",
         TOL_USER2, Q, false},
    };
    RUN(ks_plugin_taint_toleration, cases);
}

/* ---- NodeAffinity ------------------------------------------------------------------- */

#define AFF_FOO_BAR                                                                                           \
    "metadata: {name: p}, spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " \
    "{nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}}}"

static void test_node_affinity(void **s) {
    static const hint_case cases[] = {
        {"backoff-wrong-new-object", AFF_FOO_BAR, NODE_ADD, NULL, NULL, "Pod", EMPTY_POD, Q, true},
        {"skip-queue-on-add", AFF_FOO_BAR, NODE_ADD, NULL, NULL, "Node", "metadata: {name: node1}", SKIP, false},
        {"queue-on-add", AFF_FOO_BAR, NODE_ADD, NULL, NULL, "Node", "metadata: {name: node1, labels: {foo: bar}}", Q, false},
        {"skip-unrelated-changes", AFF_FOO_BAR, NODE_UPD(KS_ACT_UPDATE_NODE_ALLOCATABLE), "Node", "metadata: {name: node1}",
         "Node", "metadata: {name: node1}, status: {allocatable: {cpu: '1'}}", SKIP, false},
        {"skip-unrelated-changes-on-labels", AFF_FOO_BAR, NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node",
         "metadata: {name: node1}", "Node", "metadata: {name: node1, labels: {k: v}}", SKIP, false},
        {"skip-labels-changes-on-node-from-suitable-to-unsuitable", AFF_FOO_BAR, NODE_UPD(KS_ACT_UPDATE_NODE_LABEL),
         "Node", "metadata: {name: node1, labels: {foo: bar}}", "Node", "metadata: {name: node1, labels: {k: v}}", SKIP,
         false},
        {"queue-on-labels-change-makes-pod-schedulable", AFF_FOO_BAR, NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node",
         "metadata: {name: node1}", "Node", "metadata: {name: node1, labels: {foo: bar}}", Q, false},
        {"skip-queue-on-unrelated-change-while-suitable", AFF_FOO_BAR, NODE_UPD(KS_ACT_UPDATE_NODE_ALLOCATABLE), "Node",
         "metadata: {name: node1, labels: {foo: bar}}", "Node",
         "metadata: {name: node1, labels: {foo: bar}}, status: {allocatable: {cpu: '1'}}", SKIP, false},
    };
    RUN(ks_plugin_node_affinity, cases);
}

/* ---- NodePorts ------------------------------------------------------------------------ */

#define PORTS_POD(name, node, port) \
    "metadata: {name: " name ", uid: " name "}, spec: {" node "containers: [{name: c, image: i, ports: [{containerPort: " port ", hostPort: " port "}]}]}"

static void test_node_ports(void **s) {
    static const hint_case cases[] = {
        {"backoff-wrong-old-object", PORTS_POD("p", "", "8080"), POD_DEL, "Node", "metadata: {name: node1}", NULL, NULL, Q,
         true},
        {"skip-queue-on-unscheduled", PORTS_POD("p", "", "8080"), POD_DEL, "Pod", PORTS_POD("q", "", "8080"), NULL, NULL,
         SKIP, false},
        {"skip-queue-on-non-existent-host-port", PORTS_POD("p", "", "8080"), POD_DEL, "Pod",
         "metadata: {name: q}, spec: {nodeName: fake-node, containers: [{name: c, image: i}]}", NULL, NULL, SKIP, false},
        {"queue-on-released-host-port", PORTS_POD("p", "", "8080"), POD_DEL, "Pod",
         PORTS_POD("q", "nodeName: fake-node, ", "8080"), NULL, NULL, Q, false},
        {"skip-queue-on-unrelated-host-port", PORTS_POD("p", "", "8080"), POD_DEL, "Pod",
         PORTS_POD("q", "nodeName: fake-node, ", "8081"), NULL, NULL, SKIP, false},
    };
    RUN(ks_plugin_node_ports, cases);
}

/* ---- NodeResourcesFit --------------------------------------------------------------- */

#define REQ_POD(name, uid, node, res) \
    "metadata: {name: " name ", uid: " uid "}, spec: {" node "containers: [{name: c, image: i, resources: {requests: " res "}}]}"
#define NODE_ALLOC(res) "metadata: {name: node1}, status: {allocatable: " res "}"

static void test_node_resources_fit(void **s) {
    static const hint_case cases[] = {
        {"backoff-wrong-old-object", EMPTY_POD, POD_DEL, "Node", "metadata: {name: node1}", NULL, NULL, Q, true},
        {"queue-on-deleted", REQ_POD("pod1", "pod1", "", "{cpu: '1'}"), POD_DEL, "Pod",
         REQ_POD("pod2", "pod2", "nodeName: fake, ", "{cpu: '1'}"), NULL, NULL, Q, false},
        {"skip-queue-on-unscheduled-pod-deletion", EMPTY_POD, EV(KS_EV_UNSCHEDULED_POD, KS_ACT_DELETE), "Pod",
         "metadata: {name: q, uid: q}", NULL, NULL, SKIP, false},
        {"skip-queue-on-disable-inplace-pod-vertical-scaling is not modelled: skip-unscheduled-pod-scaled-down",
         REQ_POD("pod1", "uid0", "", "{cpu: '1'}"), EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN), "Pod",
         REQ_POD("pod2", "uid1", "", "{cpu: '2'}"), "Pod", REQ_POD("pod2", "uid1", "", "{cpu: '1'}"), SKIP, false},
        {"skip-queue-on-other-resource-scale-down", REQ_POD("pod1", "pod1", "", "{cpu: '1'}"),
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN), "Pod",
         REQ_POD("pod2", "pod2", "nodeName: fake, ", "{memory: '2'}"), "Pod",
         REQ_POD("pod2", "pod2", "nodeName: fake, ", "{memory: '1'}"), SKIP, false},
        {"queue-on-other-pod-scaled-down", REQ_POD("pod1", "pod1", "", "{cpu: '1'}"),
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN), "Pod",
         REQ_POD("pod2", "pod2", "nodeName: fake, ", "{cpu: '2'}"), "Pod",
         REQ_POD("pod2", "pod2", "nodeName: fake, ", "{cpu: '1'}"), Q, false},
        {"queue-on-target-pod-scaled-down", REQ_POD("pod1", "pod1", "", "{cpu: '1'}"),
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN), "Pod", REQ_POD("pod1", "pod1", "", "{cpu: '2'}"),
         "Pod", REQ_POD("pod1", "pod1", "", "{cpu: '1'}"), Q, false},
        {"backoff-wrong-new-object", EMPTY_POD, NODE_ADD, NULL, NULL, "Pod", EMPTY_POD, Q, true},
        {"skip-queue-on-node-add-without-sufficient-resources", REQ_POD("p", "p", "", "{memory: '2'}"), NODE_ADD, NULL,
         NULL, "Node", NODE_ALLOC("{memory: '1', pods: '10'}"), SKIP, false},
        {"skip-queue-on-node-add-without-required-resource-type",
         REQ_POD("p", "p", "", "{cpu: '1', example.com/foo: '1'}"), NODE_ADD, NULL, NULL, "Node",
         NODE_ALLOC("{cpu: '1', pods: '10'}"), SKIP, false},
        {"queue-on-node-add-with-sufficient-resources", REQ_POD("p", "p", "", "{cpu: '2', example.com/foo: '1'}"),
         NODE_ADD, NULL, NULL, "Node", NODE_ALLOC("{cpu: '4', example.com/foo: '2', pods: '10'}"), Q, false},
        {"skip-queue-on-node-unrelated-changes", REQ_POD("p", "p", "", "{cpu: '2', example.com/foo: '1'}"),
         NODE_UPD(KS_ACT_UPDATE_NODE_ALLOCATABLE), "Node",
         NODE_ALLOC("{cpu: '4', example.com/foo: '2', pods: '10'}"), "Node",
         NODE_ALLOC("{cpu: '4', example.com/foo: '2', example.com/bar: '1', pods: '10'}"), SKIP, false},
        {"queue-on-pod-requested-resources-increase", REQ_POD("p", "p", "", "{cpu: '2', example.com/foo: '2'}"),
         NODE_UPD(KS_ACT_UPDATE_NODE_ALLOCATABLE), "Node",
         NODE_ALLOC("{cpu: '4', example.com/foo: '1', pods: '10'}"), "Node",
         NODE_ALLOC("{cpu: '4', example.com/foo: '2', pods: '10'}"), Q, false},
        {"skip-queue-on-node-changes-from-suitable-to-unsuitable",
         REQ_POD("p", "p", "", "{cpu: '2', example.com/foo: '2'}"), NODE_UPD(KS_ACT_UPDATE_NODE_ALLOCATABLE), "Node",
         NODE_ALLOC("{cpu: '4', example.com/foo: '2', pods: '10'}"), "Node",
         NODE_ALLOC("{cpu: '4', example.com/foo: '1', pods: '10'}"), SKIP, false},
        {"queue-on-pod-count-increase", REQ_POD("p", "p", "", "{cpu: '2'}"), NODE_UPD(KS_ACT_UPDATE_NODE_ALLOCATABLE),
         "Node", NODE_ALLOC("{cpu: '4', pods: '10'}"), "Node", NODE_ALLOC("{cpu: '4', pods: '11'}"), Q, false},
    };
    RUN(ks_plugin_node_resources_fit, cases);
}

/* ---- SchedulingGates ------------------------------------------------------------------ */

static void test_scheduling_gates(void **s) {
    static const hint_case cases[] = {
        {"backoff-wrong-new-object", EMPTY_POD,
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED), NULL, NULL, "Node",
         "metadata: {name: node1}", Q, true},
        {"skip-queue-on-other-pod-updated", "metadata: {name: p, uid: p}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED), "Pod",
         "metadata: {name: q, uid: q}, spec: {schedulingGates: [{name: foo}]}", "Pod", "metadata: {name: q, uid: q}",
         SKIP, false},
        {"queue-on-the-unsched-pod-updated", "metadata: {name: p, uid: p}, spec: {schedulingGates: [{name: foo}]}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED), "Pod",
         "metadata: {name: p, uid: p}, spec: {schedulingGates: [{name: foo}]}", "Pod", "metadata: {name: p, uid: p}", Q,
         false},
    };
    RUN(ks_plugin_scheduling_gates, cases);
}

/* ---- InterPodAffinity ----------------------------------------------------------------- */

#define IPA_POD(kind)                                                                                           \
    "metadata: {name: p, uid: p}, spec: {affinity: {" kind ": {requiredDuringSchedulingIgnoredDuringExecution: " \
    "[{labelSelector: {matchLabels: {service: securityscan}}, topologyKey: zone}]}}}"
#define LABELLED(name, node, labels) "metadata: {name: " name ", uid: " name ", labels: " labels "}, spec: {" node "}"

static void test_inter_pod_affinity(void **s) {
    static const hint_case cases[] = {
        {"add a pod which matches the pod affinity", IPA_POD("podAffinity"), POD_ADD, NULL, NULL, "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan}"), Q, false},
        {"add an un-scheduled pod", IPA_POD("podAffinity"), EV(KS_EV_UNSCHEDULED_POD, KS_ACT_ADD), NULL, NULL, "Pod",
         LABELLED("q", "", "{service: securityscan}"), SKIP, false},
        {"add a pod which doesn't match the pod affinity", IPA_POD("podAffinity"), POD_ADD, NULL, NULL, "Pod",
         LABELLED("q", "nodeName: node1", "{aaa: a}"), SKIP, false},
        {"update a pod from non-match to match pod affinity", IPA_POD("podAffinity"),
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod", LABELLED("q", "nodeName: node1", "{aaa: a}"), "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan}"), Q, false},
        {"the updating pod matches target pod's affinity both before and after label changes", IPA_POD("podAffinity"),
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan, aaa: a}"), "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan, aaa: b}"), SKIP, false},
        {"update a pod from match to non-match the pod affinity", IPA_POD("podAffinity"),
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod", LABELLED("q", "nodeName: node1", "{service: securityscan}"),
         "Pod", LABELLED("q", "nodeName: node1", "{aaa: a}"), SKIP, false},
        {"update a pod from match to non-match pod's affinity - multiple terms case",
         "metadata: {name: p, uid: p}, spec: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "[{labelSelector: {matchLabels: {service: securityscan}}, topologyKey: zone}, {labelSelector: {matchLabels: "
         "{aaa: a}}, topologyKey: zone}]}}}",
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod", LABELLED("q", "nodeName: node1", "{service: securityscan}"),
         "Pod", LABELLED("q", "nodeName: node1", "{aaa: a}"), SKIP, false},
        {"update a pod from non-match to match pod's affinity - multiple terms case",
         "metadata: {name: p, uid: p}, spec: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "[{labelSelector: {matchLabels: {service: securityscan}}, topologyKey: zone}, {labelSelector: {matchLabels: "
         "{aaa: a}}, topologyKey: zone}]}}}",
         EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod", LABELLED("q", "nodeName: node1", "{aaa: a}"), "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan, aaa: a}"), Q, false},
        {"modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
         IPA_POD("podAntiAffinity"), EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan}"), "Pod", LABELLED("q", "nodeName: node1", "{aaa: a}"), Q,
         false},
        {"modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
         IPA_POD("podAntiAffinity"), EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod",
         LABELLED("q", "nodeName: node1", "{aaa: b}"), "Pod", LABELLED("q", "nodeName: node1", "{service: securityscan}"), SKIP,
         false},
        {"delete a pod which doesn't match pod's anti-affinity", IPA_POD("podAntiAffinity"), POD_DEL, "Pod",
         LABELLED("q", "nodeName: node1", "{aaa: a}"), NULL, NULL, SKIP, false},
        {"delete a pod which matches pod's anti-affinity", IPA_POD("podAntiAffinity"), POD_DEL, "Pod",
         LABELLED("q", "nodeName: node1", "{service: securityscan}"), NULL, NULL, Q, false},
        {"add a new node with matched pod affinity topologyKey", IPA_POD("podAffinity"), NODE_ADD, NULL, NULL, "Node",
         "metadata: {name: node1, labels: {zone: zone1}}", Q, false},
        {"add a new node with matched pod anti-affinity topologyKey", IPA_POD("podAntiAffinity"), NODE_ADD, NULL, NULL,
         "Node", "metadata: {name: node1, labels: {zone: zone1}}", Q, false},
        {"add a new node without matched topologyKey", IPA_POD("podAffinity"), NODE_ADD, NULL, NULL, "Node",
         "metadata: {name: node1, labels: {region: r1}}", SKIP, false},
        {"update node topologyKey", IPA_POD("podAffinity"), NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node",
         "metadata: {name: node1, labels: {zone: zone1}}", "Node", "metadata: {name: node1, labels: {zone: zone2}}", Q, false},
        {"update node lable but not topologyKey", IPA_POD("podAffinity"), NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node",
         "metadata: {name: node1, labels: {aaa: a}}", "Node", "metadata: {name: node1, labels: {aaa: b}}", SKIP, false},
        {"update node label that isn't related to the pod anti-affinity", IPA_POD("podAntiAffinity"),
         NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node", "metadata: {name: node1, labels: {zone: zone1, aaa: a}}", "Node",
         "metadata: {name: node1, labels: {zone: zone1, aaa: b}}", SKIP, false},
        {"update node with different affinity topologyKey", IPA_POD("podAffinity"), NODE_UPD(KS_ACT_UPDATE_NODE_LABEL),
         "Node", "metadata: {name: node1, labels: {region: r1}}", "Node", "metadata: {name: node1, labels: {region: r2}}", SKIP,
         false},
        {"update node to remove the anti-affinity topologyKey", IPA_POD("podAntiAffinity"),
         NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node", "metadata: {name: node1, labels: {zone: zone1}}", "Node",
         "metadata: {name: node1, labels: {aaa: a}}", Q, false},
    };
    RUN(ks_plugin_inter_pod_affinity, cases);
}

/* ---- PodTopologySpread ---------------------------------------------------------------- */

#define PTS_POD(extra)                                                                                           \
    "metadata: {name: p, uid: p, labels: {foo: ''}}, spec: {" extra "topologySpreadConstraints: [{maxSkew: 1, " \
    "topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchExpressions: [{key: foo, "        \
    "operator: Exists}]}}, {maxSkew: 1, topologyKey: node, whenUnsatisfiable: DoNotSchedule, labelSelector: "    \
    "{matchExpressions: [{key: foo, operator: Exists}]}}]}"

static void test_pod_topology_spread(void **s) {
    static const hint_case cases[] = {
        {"node updates label which matches topologyKey", PTS_POD(""), NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node",
         "metadata: {name: node1, labels: {zone: zone1, node: node1}}", "Node",
         "metadata: {name: node1, labels: {zone: zone2, node: node1}}", Q, false},
        {"node that doesn't match topologySpreadConstraints updates non-related label", PTS_POD(""),
         NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node", "metadata: {name: node1, labels: {foo: bar}}", "Node",
         "metadata: {name: node1, labels: {foo: bar2}}", SKIP, false},
        {"node that match topologySpreadConstraints adds non-related label", PTS_POD(""),
         NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node", "metadata: {name: node1, labels: {zone: zone1, node: node1}}", "Node",
         "metadata: {name: node1, labels: {zone: zone1, node: node1, foo: bar}}", SKIP, false},
        {"create node with non-related labels", PTS_POD(""), NODE_ADD, NULL, NULL, "Node",
         "metadata: {name: node1, labels: {foo: bar}}", SKIP, false},
        {"create node with related labels", PTS_POD(""), NODE_ADD, NULL, NULL, "Node",
         "metadata: {name: node1, labels: {zone: zone1, node: node1}}", Q, false},
        {"delete node with non-related labels", PTS_POD(""), NODE_UPD(KS_ACT_DELETE), "Node",
         "metadata: {name: node1, labels: {foo: bar}}", NULL, NULL, SKIP, false},
        {"delete node with related labels", PTS_POD(""), NODE_UPD(KS_ACT_DELETE), "Node",
         "metadata: {name: node1, labels: {zone: zone1, node: node1}}", NULL, NULL, Q, false},
        {"add node with related labels that only match one of topologySpreadConstraints", PTS_POD(""), NODE_ADD, NULL,
         NULL, "Node", "metadata: {name: node1, labels: {zone: zone1}}", SKIP, false},
        {"update node with related labels that only match one of topologySpreadConstraints", PTS_POD(""),
         NODE_UPD(KS_ACT_UPDATE_NODE_LABEL), "Node", "metadata: {name: node1, labels: {zone: zone1}}", "Node",
         "metadata: {name: node1, labels: {zone: zone2}}", SKIP, false},
        {"change node's taints", PTS_POD(""), NODE_UPD(KS_ACT_UPDATE_NODE_TAINT), "Node",
         "metadata: {name: node1, labels: {zone: zone1, node: node1}}", "Node",
         "metadata: {name: node1, labels: {zone: zone1, node: node1}}, spec: {taints: [{key: k, value: v, effect: "
         "NoSchedule}]}",
         Q, false},
        {"add pod with a matching label", PTS_POD(""), POD_ADD, NULL, NULL, "Pod",
         "metadata: {name: q, uid: q, namespace: default, labels: {foo: ''}}, spec: {nodeName: node1}", Q, false},
        {"add un-scheduled pod", PTS_POD(""), EV(KS_EV_UNSCHEDULED_POD, KS_ACT_ADD), NULL, NULL, "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}", SKIP, false},
        {"update un-scheduled pod", PTS_POD(""), EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}", "Pod", "metadata: {name: q, uid: q, labels: {bar: ''}}",
         SKIP, false},
        {"delete un-scheduled pod", PTS_POD(""), EV(KS_EV_UNSCHEDULED_POD, KS_ACT_DELETE), "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}", NULL, NULL, SKIP, false},
        {"add pod with different namespace", PTS_POD(""), POD_ADD, NULL, NULL, "Pod",
         "metadata: {name: q, uid: q, namespace: ns1, labels: {foo: ''}}, spec: {nodeName: node1}", SKIP, false},
        {"add pod with label that doesn't match", PTS_POD(""), POD_ADD, NULL, NULL, "Pod",
         "metadata: {name: q, uid: q, labels: {bar: ''}}, spec: {nodeName: node1}", SKIP, false},
        {"update pod: label changes to match", PTS_POD(""), EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL), "Pod",
         "metadata: {name: q, uid: q, labels: {bar: ''}}, spec: {nodeName: node1}", "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}, spec: {nodeName: node1}", Q, false},
        {"update pod: label unchanged", PTS_POD(""), EV(KS_EV_ASSIGNED_POD, KS_ACT_UPDATE), "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}, spec: {nodeName: node1}", "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}, spec: {nodeName: node1}", SKIP, false},
        {"delete pod with matching label", PTS_POD(""), POD_DEL, "Pod",
         "metadata: {name: q, uid: q, labels: {foo: ''}}, spec: {nodeName: node1}", NULL, NULL, Q, false},
        {"the pod's own toleration change without nodeTaintsPolicy: Honor", PTS_POD(""),
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_TOLERATION), "Pod", PTS_POD(""), "Pod",
         PTS_POD("tolerations: [{key: foo, operator: Exists}], "), SKIP, false},
    };
    RUN(ks_plugin_pod_topology_spread, cases);
}

/* ---- volumes ---------------------------------------------------------------------------- */

#define PVC_POD(ns, claim) \
    "metadata: {name: p, uid: p, namespace: " ns "}, spec: {volumes: [{name: v, persistentVolumeClaim: {claimName: " claim "}}]}"
#define PVC(ns, name) "metadata: {name: " name ", namespace: " ns "}"

static void test_volume_restrictions(void **s) {
    static const hint_case cases[] = {
        {"queue new pvc belong pod", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("default", "pvc1"), Q, false},
        {"skip new pvc not belong pod", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("default", "pvc2"), SKIP, false},
        {"skip pvc in another namespace", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("other", "pvc1"), SKIP, false},
        {"queue on deleted pod sharing a claim", PVC_POD("default", "pvc1"), POD_DEL, "Pod",
         "metadata: {name: q, uid: q, namespace: default}, spec: {nodeName: node1, volumes: [{name: v, "
         "persistentVolumeClaim: {claimName: pvc1}}]}",
         NULL, NULL, Q, false},
        {"skip deleted pod in another namespace", PVC_POD("default", "pvc1"), POD_DEL, "Pod",
         "metadata: {name: q, uid: q, namespace: other}, spec: {nodeName: node1, volumes: [{name: v, "
         "persistentVolumeClaim: {claimName: pvc1}}]}",
         NULL, NULL, SKIP, false},
        {"queue on deleted pod with a conflicting disk",
         "metadata: {name: p, uid: p}, spec: {volumes: [{name: v, gcePersistentDisk: {pdName: disk1}}]}", POD_DEL, "Pod",
         "metadata: {name: q, uid: q}, spec: {nodeName: node1, volumes: [{name: v, gcePersistentDisk: {pdName: disk1}}]}",
         NULL, NULL, Q, false},
        {"skip deleted pod with another disk",
         "metadata: {name: p, uid: p}, spec: {volumes: [{name: v, gcePersistentDisk: {pdName: disk1}}]}", POD_DEL, "Pod",
         "metadata: {name: q, uid: q}, spec: {nodeName: node1, volumes: [{name: v, gcePersistentDisk: {pdName: disk2}}]}",
         NULL, NULL, SKIP, false},
    };
    RUN(ks_plugin_volume_restrictions, cases);
}

#define PV_ZONE(zone) "metadata: {name: pv1, labels: {topology.kubernetes.io/zone: " zone "}}"

static void test_volume_zone(void **s) {
    static const hint_case cases[] = {
        {"error wrong new object", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL, "Node",
         "metadata: {name: node1}", Q, true},
        {"pvc was created in another namespace", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("other", "pvc1"), SKIP, false},
        {"pvc was created, and it is requested by the pod", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL,
         NULL, "PersistentVolumeClaim", PVC("default", "pvc1"), Q, false},
        {"pvc was updated and it isn't requested by the pod", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_UPDATE),
         "PersistentVolumeClaim", PVC("default", "pvc2"), "PersistentVolumeClaim", PVC("default", "pvc2"), SKIP, false},
        {"sc with WaitForFirstConsumer is added", PVC_POD("default", "pvc1"), EV(KS_EV_STORAGE_CLASS, KS_ACT_ADD), NULL,
         NULL, "StorageClass", "metadata: {name: sc}, provisioner: p, volumeBindingMode: WaitForFirstConsumer", Q,
         false},
        {"sc with Immediate is added", PVC_POD("default", "pvc1"), EV(KS_EV_STORAGE_CLASS, KS_ACT_ADD), NULL, NULL,
         "StorageClass", "metadata: {name: sc}, provisioner: p, volumeBindingMode: Immediate", SKIP, false},
        {"a new pv is added", PVC_POD("default", "pvc1"), EV(KS_EV_PV, KS_ACT_ADD), NULL, NULL, "PersistentVolume",
         PV_ZONE("us-west1-a"), Q, false},
        {"the zone label of pv is changed", PVC_POD("default", "pvc1"), EV(KS_EV_PV, KS_ACT_UPDATE), "PersistentVolume",
         PV_ZONE("us-west1-a"), "PersistentVolume", PV_ZONE("us-west1-b"), Q, false},
        {"the zone label is unchanged", PVC_POD("default", "pvc1"), EV(KS_EV_PV, KS_ACT_UPDATE), "PersistentVolume",
         PV_ZONE("us-west1-a"), "PersistentVolume", PV_ZONE("us-west1-a"), SKIP, false},
        {"the zones are the same set", PVC_POD("default", "pvc1"), EV(KS_EV_PV, KS_ACT_UPDATE), "PersistentVolume",
         PV_ZONE("us-west1-a__us-west1-b"), "PersistentVolume", PV_ZONE("us-west1-b__us-west1-a"), SKIP, false},
    };
    RUN(ks_plugin_volume_zone, cases);
}

#define CSINODE(ann, drivers) "metadata: {name: node1" ann "}, spec: {drivers: " drivers "}"
#define MIGRATED(v) ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: " v "}"

#define CAP_EV(a) EV(KS_EV_CSI_STORAGE_CAPACITY, (a))
#define CAP(sizes) "metadata: {name: cap-a, namespace: default}, storageClassName: sc" sizes
#define DRIVER_EV EV(KS_EV_CSI_DRIVER, KS_ACT_UPDATE)
#define DRIVER(name, on) "metadata: {name: " name "}, spec: {storageCapacity: " on "}"
#define CSI_POD(driver) \
    "metadata: {name: p, namespace: default, uid: p}, spec: {volumes: [{name: v, csi: {driver: " driver "}}]}"

static void test_volume_binding(void **s) {
    static const hint_case cases[] = {
        {"new CSINode", PVC_POD("default", "pvc1"), EV(KS_EV_CSINODE, KS_ACT_ADD), NULL, NULL, "CSINode",
         CSINODE("", "[]"), Q, false},
        {"CSINode migrated plugins changed", PVC_POD("default", "pvc1"), EV(KS_EV_CSINODE, KS_ACT_UPDATE), "CSINode",
         CSINODE(MIGRATED("a"), "[]"), "CSINode", CSINODE(MIGRATED("'a,b'"), "[]"), Q, false},
        {"CSINode migrated plugins unchanged", PVC_POD("default", "pvc1"), EV(KS_EV_CSINODE, KS_ACT_UPDATE), "CSINode",
         CSINODE(MIGRATED("a"), "[]"), "CSINode", CSINODE(MIGRATED("a"), "[{name: d, nodeID: node1}]"), SKIP, false},
        {"pvc the pod uses", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_UPDATE), "PersistentVolumeClaim",
         PVC("default", "pvc1"), "PersistentVolumeClaim", PVC("default", "pvc1"), Q, false},
        {"pvc another pod uses", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("default", "pvc2"), SKIP, false},
        {"pvc of an ephemeral volume",
         "metadata: {name: p, uid: p}, spec: {volumes: [{name: v, ephemeral: {volumeClaimTemplate: {spec: "
         "{accessModes: [ReadWriteOnce]}}}}]}",
         EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL, "PersistentVolumeClaim", PVC("default", "p-v"), Q, false},
        {"new storage class", PVC_POD("default", "pvc1"), EV(KS_EV_STORAGE_CLASS, KS_ACT_ADD), NULL, NULL,
         "StorageClass", "metadata: {name: sc}, provisioner: p", Q, false},
        {"storage class allowed topologies changed", PVC_POD("default", "pvc1"), EV(KS_EV_STORAGE_CLASS, KS_ACT_UPDATE),
         "StorageClass", "metadata: {name: sc}, provisioner: p", "StorageClass",
         "metadata: {name: sc}, provisioner: p, allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [a]}]}]",
         Q, false},
        {"storage class unchanged topologies", PVC_POD("default", "pvc1"), EV(KS_EV_STORAGE_CLASS, KS_ACT_UPDATE),
         "StorageClass", "metadata: {name: sc}, provisioner: p", "StorageClass",
         "metadata: {name: sc, labels: {a: b}}, provisioner: p", SKIP, false},
        /* upstream's TestIsSchedulableAfterCSIStorageCapacityChange */
        {"new capacity", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_ADD), NULL, NULL, "CSIStorageCapacity", CAP(""), Q,
         false},
        {"limit set (capacity)", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity", CAP(""),
         "CSIStorageCapacity", CAP(", capacity: 100"), Q, false},
        {"limit set (maximumVolumeSize)", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(""), "CSIStorageCapacity", CAP(", maximumVolumeSize: 100"), Q, false},
        {"capacity increased", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", capacity: 50"), "CSIStorageCapacity", CAP(", capacity: 100"), Q, false},
        {"maximumVolumeSize unset", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", capacity: 100, maximumVolumeSize: 50"), "CSIStorageCapacity", CAP(", capacity: 100"), Q, false},
        {"maximumVolumeSize increased", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", capacity: 100, maximumVolumeSize: 50"), "CSIStorageCapacity",
         CAP(", capacity: 100, maximumVolumeSize: 60"), Q, false},
        {"capacity unchanged", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", capacity: 100, maximumVolumeSize: 50"), "CSIStorageCapacity",
         CAP(", capacity: 100, maximumVolumeSize: 50"), SKIP, false},
        {"limit equal (capacity)", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", capacity: 100"), "CSIStorageCapacity", CAP(", capacity: 100"), SKIP, false},
        {"limit equal (maximumVolumeSize unset)", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE),
         "CSIStorageCapacity", CAP(", capacity: 100, maximumVolumeSize: 50"), "CSIStorageCapacity",
         CAP(", capacity: 50"), SKIP, false},
        {"capacity decreased", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", capacity: 100"), "CSIStorageCapacity", CAP(", capacity: 90"), SKIP, false},
        {"maximumVolumeSize decreased", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSIStorageCapacity",
         CAP(", maximumVolumeSize: 100"), "CSIStorageCapacity", CAP(", maximumVolumeSize: 90"), SKIP, false},
        {"capacity: not a capacity", PVC_POD("default", "pvc1"), CAP_EV(KS_ACT_UPDATE), "CSINode", CSINODE("", "[]"),
         "CSINode", CSINODE("", "[]"), Q, true},
        /* upstream's TestIsSchedulableAfterCSIDriverChange */
        {"driver: capacity turned off for the pod's inline volume", CSI_POD("test-driver"), DRIVER_EV,
         "CSIDriver", DRIVER("test-driver", "true"), "CSIDriver", DRIVER("test-driver", "false"), Q, false},
        {"driver: capacity unset (nil) counts as off", CSI_POD("test-driver"), DRIVER_EV, "CSIDriver",
         DRIVER("test-driver", "true"), "CSIDriver", "metadata: {name: test-driver}, spec: {}", Q, false},
        {"driver: capacity turned on", CSI_POD("test-driver"), DRIVER_EV, "CSIDriver", DRIVER("test-driver", "false"),
         "CSIDriver", DRIVER("test-driver", "true"), SKIP, false},
        {"driver: capacity unchanged", CSI_POD("test-driver"), DRIVER_EV, "CSIDriver", DRIVER("test-driver", "true"),
         "CSIDriver", DRIVER("test-driver", "true"), SKIP, false},
        {"driver: another driver", CSI_POD("test-driver"), DRIVER_EV, "CSIDriver", DRIVER("test-driver2", "true"),
         "CSIDriver", DRIVER("test-driver2", "false"), SKIP, false},
        {"driver: a pod without inline CSI volumes", PVC_POD("default", "pvc1"), DRIVER_EV, "CSIDriver",
         DRIVER("test-driver", "true"), "CSIDriver", DRIVER("test-driver", "false"), SKIP, false},
        {"driver: not a driver", CSI_POD("test-driver"), DRIVER_EV, "CSINode", CSINODE("", "[]"), "CSINode",
         CSINODE("", "[]"), Q, true},
    };
    RUN(ks_plugin_volume_binding, cases);
}

#define VA_DEL EV(KS_EV_VOLUME_ATTACHMENT, KS_ACT_DELETE)
#define VA(attacher) \
    "metadata: {name: va1}, spec: {attacher: " attacher ", nodeName: node1, source: {persistentVolumeName: pv1}}"
#define EBS_POD "metadata: {name: p, uid: p}, spec: {volumes: [{name: v, awsElasticBlockStore: {volumeID: v1}}]}"

static void test_node_volume_limits(void **s) {
    static const hint_case cases[] = {
        {"deleted pod with a claim", PVC_POD("default", "pvc1"), POD_DEL, "Pod",
         "metadata: {name: q, uid: q}, spec: {nodeName: node1, volumes: [{name: v, persistentVolumeClaim: {claimName: x}}]}",
         NULL, NULL, Q, false},
        {"deleted pod without volumes", PVC_POD("default", "pvc1"), POD_DEL, "Pod",
         "metadata: {name: q, uid: q}, spec: {nodeName: node1}", NULL, NULL, SKIP, false},
        {"deleted unscheduled pod", PVC_POD("default", "pvc1"), EV(KS_EV_UNSCHEDULED_POD, KS_ACT_DELETE), "Pod",
         "metadata: {name: q, uid: q}, spec: {volumes: [{name: v, persistentVolumeClaim: {claimName: x}}]}", NULL, NULL,
         SKIP, false},
        {"added pvc the pod uses", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("default", "pvc1"), Q, false},
        {"added pvc in another namespace", PVC_POD("default", "pvc1"), EV(KS_EV_PVC, KS_ACT_ADD), NULL, NULL,
         "PersistentVolumeClaim", PVC("other", "pvc1"), SKIP, false},
        {"CSINode limit raised", PVC_POD("default", "pvc1"), EV(KS_EV_CSINODE, KS_ACT_UPDATE), "CSINode",
         CSINODE("", "[{name: d, nodeID: node1, allocatable: {count: 1}}]"), "CSINode",
         CSINODE("", "[{name: d, nodeID: node1, allocatable: {count: 2}}]"), Q, false},
        {"CSINode limit lowered", PVC_POD("default", "pvc1"), EV(KS_EV_CSINODE, KS_ACT_UPDATE), "CSINode",
         CSINODE("", "[{name: d, nodeID: node1, allocatable: {count: 2}}]"), "CSINode",
         CSINODE("", "[{name: d, nodeID: node1, allocatable: {count: 1}}]"), SKIP, false},
        {"CSINode new driver", PVC_POD("default", "pvc1"), EV(KS_EV_CSINODE, KS_ACT_UPDATE), "CSINode", CSINODE("", "[]"),
         "CSINode", CSINODE("", "[{name: d, nodeID: node1, allocatable: {count: 1}}]"), Q, false},
        /* upstream's TestCSILimitsDeletedVolumeAttachmentQHint */
        {"attachment deleted, pod with a claim", PVC_POD("default", "pvc1"), VA_DEL, "VolumeAttachment",
         VA("ebs.csi.aws.com"), NULL, NULL, Q, false},
        {"attachment deleted, inline EBS volume of its driver", EBS_POD, VA_DEL, "VolumeAttachment",
         VA("ebs.csi.aws.com"), NULL, NULL, Q, false},
        {"attachment deleted, inline GCE PD volume of another driver",
         "metadata: {name: p, uid: p}, spec: {volumes: [{name: v, gcePersistentDisk: {pdName: d}}]}", VA_DEL,
         "VolumeAttachment", VA("ebs.csi.aws.com"), NULL, NULL, SKIP, false},
        {"attachment deleted, inline EBS and a claim",
         "metadata: {name: p, uid: p}, spec: {volumes: [{name: a, awsElasticBlockStore: {volumeID: v}}, "
         "{name: b, persistentVolumeClaim: {claimName: c}}]}",
         VA_DEL, "VolumeAttachment", VA("pd.csi.storage.gke.io"), NULL, NULL, Q, false},
        {"attachment deleted, pod without claims", EMPTY_POD, VA_DEL, "VolumeAttachment", VA("ebs.csi.aws.com"), NULL,
         NULL, SKIP, false},
        {"attachment deleted, ephemeral volume only",
         "metadata: {name: p, uid: p}, spec: {volumes: [{name: v, ephemeral: {volumeClaimTemplate: {spec: "
         "{accessModes: [ReadWriteOnce]}}}}]}",
         VA_DEL, "VolumeAttachment", VA("ebs.csi.aws.com"), NULL, NULL, SKIP, false},
        {"attachment deleted: not an attachment", PVC_POD("default", "pvc1"), VA_DEL, "CSINode", CSINODE("", "[]"), NULL,
         NULL, Q, true},
    };
    RUN(ks_plugin_node_volume_limits, cases);
}

/* ---- DynamicResources -------------------------------------------------------------------- */

#define CLAIM_POD                                                                                   \
    "metadata: {name: my-pod, namespace: default, uid: pod-uid}, spec: {resourceClaims: [{name: a, " \
    "resourceClaimName: my-claim}]}"
#define DRA_CLAIM(name, status)                                                                   \
    "apiVersion: resource.k8s.io/v1, metadata: {name: " name ", namespace: default, uid: " name    \
    "}, spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}" status
#define ALLOCATED                                                                                          \
    ", status: {allocation: {devices: {results: [{request: r, driver: d, pool: p, device: dev}]}}}"

static void test_dynamic_resources(void **s) {
    /* Without the scheduler's objects, the pod's claims cannot be found:
     * upstream's "pod's claims are not in the lister" cases. */
    static const hint_case cases[] = {
        {"claim-deallocated", EMPTY_POD, EV(KS_EV_RESOURCE_CLAIM, KS_ACT_UPDATE), "ResourceClaim",
         DRA_CLAIM("other", ALLOCATED), "ResourceClaim", DRA_CLAIM("other", ""), Q, false},
        {"skip-unrelated-claim", EMPTY_POD, EV(KS_EV_RESOURCE_CLAIM, KS_ACT_ADD), NULL, NULL, "ResourceClaim",
         DRA_CLAIM("other", ""), SKIP, false},
        {"skip-claims-not-found", CLAIM_POD, EV(KS_EV_RESOURCE_CLAIM, KS_ACT_ADD), NULL, NULL, "ResourceClaim",
         DRA_CLAIM("my-claim", ""), SKIP, false},
        {"backoff-wrong-new-object", CLAIM_POD, EV(KS_EV_RESOURCE_CLAIM, KS_ACT_ADD), NULL, NULL, "Node",
         "metadata: {name: node1}", Q, true},
        {"skip-other-pod", CLAIM_POD, EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM), "Pod",
         "metadata: {name: q, uid: q}", "Pod", "metadata: {name: q, uid: q}", SKIP, false},
        {"queue-own-pod-without-claims", "metadata: {name: p, uid: p}",
         EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM), "Pod", "metadata: {name: p, uid: p}",
         "Pod", "metadata: {name: p, uid: p}", Q, false},
        {"skip-own-pod-claims-missing", CLAIM_POD, EV(KS_EV_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM),
         "Pod", CLAIM_POD, "Pod", CLAIM_POD, SKIP, false},
    };
    RUN(ks_plugin_dynamic_resources, cases);
}

static void test_default_preemption(void **s) {
    static const hint_case cases[] = {
        {"a deletion never lets a preempting pod in", EMPTY_POD, POD_DEL, "Pod",
         "metadata: {name: q, uid: q}, spec: {nodeName: node1}", NULL, NULL, SKIP, false},
    };
    RUN(ks_plugin_default_preemption, cases);
}

int main(void) {
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_unschedulable), cmocka_unit_test(test_taint_toleration),
        cmocka_unit_test(test_node_affinity),      cmocka_unit_test(test_node_ports),
        cmocka_unit_test(test_node_resources_fit), cmocka_unit_test(test_scheduling_gates),
        cmocka_unit_test(test_inter_pod_affinity), cmocka_unit_test(test_pod_topology_spread),
        cmocka_unit_test(test_volume_restrictions), cmocka_unit_test(test_volume_zone),
        cmocka_unit_test(test_volume_binding),     cmocka_unit_test(test_node_volume_limits),
        cmocka_unit_test(test_dynamic_resources),  cmocka_unit_test(test_default_preemption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
