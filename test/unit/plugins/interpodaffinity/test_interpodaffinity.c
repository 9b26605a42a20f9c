/* InterPodAffinity table tests. Cases are upstream's (interpodaffinity
 * filtering_test.go / scoring_test.go), re-expressed with the fixtures of
 * testutil_topology.h, plus ksched's own for matchLabelKeys,
 * mismatchLabelKeys and namespaces missing from the object store. */
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "testutil_topology.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const ks_plugin_ops ks_plugin_inter_pod_affinity;
#define OPS ks_plugin_inter_pod_affinity

#define AFF "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules"
#define ANTI "Unschedulable: node(s) didn't match pod anti-affinity rules"
#define EXIST "Unschedulable: node(s) didn't satisfy existing pods anti-affinity rules"
#define OK "Success"

/* The namespaces upstream's tests register. */
static void std_namespaces(tt_env *e) {
    tt_env_namespace(e, "subteam1.team1 team=team1");
    tt_env_namespace(e, "subteam2.team1 team=team1");
    tt_env_namespace(e, "subteam1.team2 team=team2");
    tt_env_namespace(e, "subteam2.team2 team=team2");
    tt_env_namespace(e, "NS1");
}

static ipa *make(tt_env *e, const char *args_hard, bool ignore) {
    char *err = NULL;
    ipa *pl = OPS.create(NULL, NULL, &err);
    assert_non_null(pl);
    if (args_hard) pl->hard_weight = atoi(args_hard);
    pl->ignore_preferred = ignore;
    pl->objects = e->objects;
    pl->all_nodes = (const ks_node_info *const *)e->nodes;
    pl->nall_nodes = e->n;
    pl->have_all_nodes = true;
    return pl;
}

static int failures;

static void check(const char *name, const char *what, const char *got, const char *want) {
    if (strcmp(got, want) != 0) {
        print_error("case \"%s\": %s: got \"%s\", want \"%s\"\n", name, what, got, want);
        failures++;
    }
}

/* ---- Filter ------------------------------------------------------------ */

typedef struct fcase {
    const char *name;
    const char *pod;
    const char *pods[8];
    const char *nodes[6];
    const char *prefilter; /* NULL: Success */
    const char *want[6];   /* per node */
} fcase;

static void run_filter(const fcase *c) {
    tt_env e;
    tt_env_init(&e, c->nodes, c->pods);
    std_namespaces(&e);
    ipa *pl = make(&e, NULL, false);
    ks_pod *pod = tt_pod(c->pod);
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *res = NULL;
    const char *pf =
        tt_status(OPS.pre_filter(pl, st, pod, (const ks_node_info *const *)e.nodes, e.n, &res));
    check(c->name, "PreFilter", pf, c->prefilter ? c->prefilter : OK);
    if (strcmp(pf, OK) == 0) {
        for (size_t i = 0; i < e.n; i++) {
            char what[64];
            snprintf(what, sizeof(what), "Filter(%s)", ks_str(e.nodes[i]->name));
            check(c->name, what, tt_status(OPS.filter(pl, st, pod, e.nodes[i])), c->want[i] ? c->want[i] : OK);
        }
    }
    ks_cycle_state_free(st);
    ks_pod_unref(pod);
    OPS.destroy(pl);
    tt_env_free(&e);
}

#define SVC "labels:{service=securityscan} node:node1"
#define NODE1 "node1 region=r1,zone=z11"

static const fcase single_node[] = {
    {"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     "", {NULL}, {NODE1}, "Skip", {0}},
    {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
     "labels:{security=S1} aff:{region|service in (securityscan,value2)}", {SVC}, {NODE1}, NULL, {OK}},
    {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
     "labels:{security=S1} aff:{region|service notin (securityscan3,value3)}", {SVC}, {NODE1}, NULL, {OK}},
    {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     "labels:{security=S1} aff:{|service in (securityscan,value2)|ns=DiffNameSpace}",
     {"ns:ns labels:{service=securityscan} node:node1"}, {NODE1}, NULL, {AFF}},
    {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     "labels:{service=securityscan} aff:{|service in (antivirusscan,value2)}", {SVC}, {NODE1}, NULL, {AFF}},
    {"satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
     "labels:{security=S1} aff:{region|service,!wrongkey} aff:{region|service in (securityscan),service notin (WrongValue)}",
     {SVC}, {NODE1}, NULL, {OK}},
    {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
     "labels:{security=S1} aff:{region|service,!wrongkey} aff:{region|service in (securityscan2),service notin (WrongValue)}",
     {SVC}, {NODE1}, NULL, {AFF}},
    {"satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     "labels:{security=S1} aff:{region|service in (securityscan,value2)} anti:{node|service in (antivirusscan,value2)}",
     {SVC}, {NODE1}, NULL, {OK}},
    {"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     "labels:{security=S1} aff:{region|service in (securityscan,value2)} anti:{node|service in (antivirusscan,value2)}",
     {SVC " anti:{node|service in (antivirusscan,value2)}"}, {NODE1}, NULL, {OK}},
    {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     "labels:{security=S1} aff:{region|service in (securityscan,value2)} anti:{zone|service in (securityscan,value2)}",
     {SVC}, {NODE1}, NULL, {ANTI}},
    {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     "labels:{service=securityscan} aff:{region|service in (securityscan,value2)} anti:{node|service in (antivirusscan,value2)}",
     {SVC " anti:{zone|service in (securityscan,value2)}"}, {NODE1}, NULL, {EXIST}},
    {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     "labels:{service=securityscan} aff:{region|service notin (securityscan,value2)}",
     {"labels:{service=securityscan} node:node2"}, {NODE1}, NULL, {AFF}},
    {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     "labels:{service=securityscan}", {SVC " anti:{zone|service in (securityscan,value2)}"}, {NODE1}, NULL, {EXIST}},
    {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
     "labels:{service=securityscan}", {SVC " anti:{zone|service notin (securityscan,value2)}"}, {NODE1}, "Skip", {0}},
    {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     "labels:{service=securityscan} anti:{region|service} anti:{region|security}",
     {"labels:{security=S1} node:node1 anti:{zone|security}"}, {NODE1}, NULL, {ANTI}},
    {"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     "labels:{service=securityscan} anti:{zone|service} anti:{zone|security}",
     {"labels:{security=S1} node:node1 anti:{zone|security}"}, {NODE1}, NULL, {ANTI}},
    {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     "labels:{security=S1} anti:{zone|security}",
     {"labels:{service=securityscan} node:node1 anti:{zone|service} anti:{zone|security}"}, {NODE1}, NULL, {EXIST}},
    {"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     "labels:{abc=,xyz=} anti:{zone|abc} anti:{zone|def}",
     {"labels:{def=,xyz=} node:node1 anti:{zone|abc} anti:{zone|def}"}, {NODE1}, NULL, {ANTI}},
    {"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
     "labels:{def=,xyz=} anti:{zone|abc} anti:{zone|def}",
     {"labels:{abc=,xyz=} node:node1 anti:{zone|abc} anti:{zone|def}"}, {NODE1}, NULL, {ANTI}},
    {"affinity with NamespaceSelector",
     "labels:{security=S1} aff:{region|service in (securityscan,value2)|nssel=team in (team1)}",
     {"ns:subteam1.team1 labels:{service=securityscan} node:node1"}, {NODE1}, NULL, {OK}},
    {"affinity with non-matching NamespaceSelector",
     "labels:{security=S1} aff:{region|service in (securityscan,value2)|nssel=team in (team1)}",
     {"ns:subteam1.team2 labels:{service=securityscan} node:node1"}, {NODE1}, NULL, {AFF}},
    {"anti-affinity with matching NamespaceSelector",
     "ns:subteam1.team1 labels:{security=S1} anti:{zone|service in (securityscan,value2)|nssel=team in (team1)}",
     {"ns:subteam2.team1 labels:{service=securityscan} node:node1"}, {NODE1}, NULL, {ANTI}},
    {"anti-affinity with matching all NamespaceSelector",
     "ns:subteam1.team1 labels:{security=S1} anti:{zone|service in (securityscan,value2)|nssel=}",
     {"ns:subteam2.team1 labels:{service=securityscan} node:node1"}, {NODE1}, NULL, {ANTI}},
    {"anti-affinity with non-matching NamespaceSelector",
     "ns:subteam1.team1 labels:{security=S1} anti:{zone|service in (securityscan,value2)|nssel=team in (team1)}",
     {"ns:subteam1.team2 labels:{service=securityscan} node:node1"}, {NODE1}, NULL, {OK}},
};

#define CHINA "region=China"
#define CHINA_AZ1 "region=China,az=az1"
#define INDIA "region=India"
#define RZ(n, r, z) n " region=" r ",zone=" z ",hostname=" n

static const fcase multiple_nodes[] = {
    {"A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
     "aff:{region|foo in (bar)}", {"name:p1 node:node1 labels:{foo=bar}"},
     {"node1 " CHINA, "node2 " CHINA_AZ1, "node3 " INDIA}, NULL, {OK, OK, AFF}},
    {"The first pod of a collection with affinity to itself is not blocked when no pod matches anywhere",
     "labels:{foo=bar,service=securityscan} aff:{zone|foo in (bar)} aff:{zone|service in (securityscan)}",
     {"name:p1 node:nodeA labels:{foo=bar}"}, {"nodeA zone=az1,hostname=h1", "nodeB zone=az2,hostname=h2"}, NULL, {OK, OK}},
    {"The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     "labels:{foo=bar,service=securityscan} aff:{zone|foo in (bar)} aff:{zone|service in (securityscan)}",
     {"name:p1 node:nodeA labels:{foo=bar}"}, {"nodeA zoneLabel=az1,hostname=h1", "nodeB zoneLabel=az2,hostname=h2"},
     NULL, {AFF, AFF}},
    {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     "anti:{region|foo in (abc)}", {"node:nodeA labels:{foo=abc}"},
     {"nodeA region=r1,hostname=nodeA", "nodeB region=r1,hostname=nodeB"}, NULL, {ANTI, ANTI}},
    {"This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     "anti:{region|foo in (abc)} anti:{zone|service in (securityscan)}", {"node:nodeA labels:{foo=abc,service=securityscan}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {ANTI, ANTI}},
    {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
     "anti:{region|foo in (abc)}", {"node:nodeA labels:{foo=abc}"},
     {"nodeA " CHINA, "nodeB " CHINA_AZ1, "nodeC " INDIA}, NULL, {ANTI, ANTI, OK}},
    {"NodeC has an existing pod that matches the inter pod affinity rule but in a different namespace",
     "ns:NS1 labels:{foo=123} anti:{region|foo in (bar)}",
     {"node:nodeA ns:NS1 labels:{foo=bar}", "node:nodeC ns:NS2 anti:{region|foo in (123)}"},
     {"nodeA " CHINA, "nodeB " CHINA_AZ1, "nodeC " INDIA}, NULL, {ANTI, ANTI, OK}},
    {"Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
     "labels:{foo=}", {"node:nodeA anti:{invalid-node-label|foo}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z1")}, "Skip", {0}},
    {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     "node:nodeA anti:{invalid-node-label|foo}", {"node:nodeA labels:{foo=}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z1")}, NULL, {OK, OK}},
    {"Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
     "labels:{foo=,bar=}", {"node:nodeA anti:{zone|foo}", "node:nodeA anti:{region|bar}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {EXIST, EXIST}},
    {"Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
     "anti:{zone|foo} anti:{region|bar}", {"node:nodeA labels:{foo=}", "node:nodeB labels:{bar=}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {ANTI, ANTI}},
    {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
     "labels:{foo=,bar=}", {"node:nodeA anti:{invalid-node-label|foo} anti:{zone|bar}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {EXIST, OK}},
    {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
     "anti:{invalid-node-label|foo} anti:{zone|bar}", {"name:podA node:nodeA labels:{foo=,bar=}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {ANTI, OK}},
    {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
     "labels:{foo=,bar=}", {"node:nodeA anti:{region|foo} anti:{zone|bar}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {EXIST, EXIST}},
    {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
     "anti:{region|foo} anti:{zone|bar}", {"node:nodeA labels:{foo=,bar=}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {ANTI, ANTI}},
    {"Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
     "labels:{foo=,bar=}", {"node:nodeA anti:{zone|foo} anti:{zone|labelA}", "node:nodeB anti:{zone|bar} anti:{zone|labelB}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2"), RZ("nodeC", "r1", "z3")}, NULL, {EXIST, EXIST, OK}},
    {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
     "aff:{region|foo} aff:{zone|bar}", {"name:pod1 labels:{foo=,bar=} node:nodeA"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z1")}, NULL, {OK, OK}},
    {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
     "aff:{region|foo} aff:{zone|bar}", {"name:pod1 node:nodeA labels:{foo=}", "name:pod2 node:nodeB labels:{bar=}"},
     {RZ("nodeA", "r1", "z1"), RZ("nodeB", "r1", "z2")}, NULL, {AFF, AFF}},
};

/* ksched's own cases: label-key merging and namespaces the object store
 * does not know. */
static const fcase own_cases[] = {
    {"matchLabelKeys narrows the incoming pod's anti-affinity to pods with the same value",
     "labels:{app=web,ver=1} anti:{hostname|app=web|mlk=ver}",
     {"node:nodeA labels:{app=web,ver=1}", "node:nodeB labels:{app=web,ver=2}"},
     {"nodeA hostname=nodeA", "nodeB hostname=nodeB"}, NULL, {ANTI, OK}},
    {"mismatchLabelKeys narrows the incoming pod's anti-affinity to pods with another value",
     "labels:{app=web,tenant=a} anti:{hostname|app=web|mmlk=tenant}",
     {"node:nodeA labels:{app=web,tenant=a}", "node:nodeB labels:{app=web,tenant=b}"},
     {"nodeA hostname=nodeA", "nodeB hostname=nodeB"}, NULL, {OK, ANTI}},
    {"matchLabelKeys of an existing pod's anti-affinity takes the value from the existing pod (same value)",
     "labels:{app=web,ver=1}", {"node:nodeA labels:{app=web,ver=1} anti:{hostname|app=web|mlk=ver}"},
     {"nodeA hostname=nodeA", "nodeB hostname=nodeB"}, NULL, {EXIST, OK}},
    {"matchLabelKeys of an existing pod's anti-affinity takes the value from the existing pod (other value)",
     "labels:{app=web,ver=2}", {"node:nodeA labels:{app=web,ver=1} anti:{hostname|app=web|mlk=ver}"},
     {"nodeA hostname=nodeA", "nodeB hostname=nodeB"}, "Skip", {0}},
    {"matchLabelKeys naming a label the pod lacks adds nothing",
     "labels:{app=web} aff:{zone|app=web|mlk=ver}", {"node:nodeA labels:{app=web,ver=1}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {OK, AFF}},
    {"an existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
     "ns:subteam1.team1 labels:{app=web}", {"ns:other node:nodeA anti:{zone|app=web|nssel=team in (team1)}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {EXIST, OK}},
    {"an existing pod's namespaceSelector does not select a namespace with other labels",
     "ns:subteam1.team2 labels:{app=web}", {"ns:other node:nodeA anti:{zone|app=web|nssel=team in (team1)}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, "Skip", {0}},
    {"an existing pod's namespaceSelector sees an unknown namespace as having no labels",
     "ns:ghost labels:{app=web}", {"ns:other node:nodeA anti:{zone|app=web|nssel=!team}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {EXIST, OK}},
    {"the incoming pod's namespaceSelector only selects namespaces that exist",
     "ns:other labels:{app=db} aff:{zone|app=web|nssel=!team}", {"ns:ghost node:nodeA labels:{app=web}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {AFF, AFF}},
    {"the incoming pod's empty namespaceSelector selects every namespace, known or not",
     "ns:other labels:{app=db} aff:{zone|app=web|nssel=}", {"ns:ghost node:nodeA labels:{app=web}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {OK, AFF}},
    {"namespaces and namespaceSelector are ORed",
     "labels:{app=db} aff:{zone|app=web|ns=NS1|nssel=team in (team2)}",
     {"ns:NS1 node:nodeA labels:{app=web}", "ns:subteam1.team2 node:nodeB labels:{app=web}",
      "ns:subteam1.team1 node:nodeC labels:{app=web}"},
     {"nodeA zone=z1", "nodeB zone=z2", "nodeC zone=z3", "nodeD zone=z4"}, NULL, {OK, OK, AFF, AFF}},
    {"a nil label selector matches no pod",
     "labels:{app=web} aff:{zone|nil}", {"node:nodeA labels:{app=web}"},
     {"nodeA zone=z1"}, NULL, {AFF}},
    {"an empty label selector matches every pod of the namespace",
     "labels:{app=db} anti:{zone|}", {"node:nodeA labels:{x=y}", "ns:other node:nodeB labels:{x=y}"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {ANTI, OK}},
    {"a node without labels fails affinity but passes anti-affinity",
     "labels:{app=web} aff:{zone|app=web} anti:{zone|app=db}", {"node:nodeA labels:{app=web}"},
     {"nodeA zone=z1", "nodeB"}, NULL, {OK, AFF}},
    {"terminating pods still count",
     "anti:{zone|app=web}", {"node:nodeA labels:{app=web} terminating"},
     {"nodeA zone=z1", "nodeB zone=z2"}, NULL, {ANTI, OK}},
};

static void run_table(const fcase *t, size_t n) {
    failures = 0;
    for (size_t i = 0; i < n; i++) run_filter(&t[i]);
    assert_int_equal(failures, 0);
}

static void test_required_affinity_single_node(void **s) {
    run_table(single_node, sizeof(single_node) / sizeof(single_node[0]));
}
static void test_required_affinity_multiple_nodes(void **s) {
    run_table(multiple_nodes, sizeof(multiple_nodes) / sizeof(multiple_nodes[0]));
}
static void test_label_keys_and_namespaces(void **s) {
    run_table(own_cases, sizeof(own_cases) / sizeof(own_cases[0]));
}

static void test_filter_without_prefilter_state_is_an_error(void **s) {
    tt_env e;
    const char *nodes[] = {"node1", NULL};
    tt_env_init(&e, nodes, NULL);
    ipa *pl = make(&e, NULL, false);
    ks_pod *pod = tt_pod("");
    ks_cycle_state *st = ks_cycle_state_new();
    ks_status *status = OPS.filter(pl, st, pod, e.nodes[0]);
    assert_int_equal(ks_status_code(status), KS_ERROR);
    ks_status_free(status);
    ks_cycle_state_free(st);
    ks_pod_unref(pod);
    OPS.destroy(pl);
    tt_env_free(&e);
}

/* ---- PreFilter state, AddPod / RemovePod --------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "key/value=count ..." of the non-zero entries, sorted. */
static const char *dump(const ks_pairtab *t, char *buf, size_t n) {
    char *items[64];
    size_t k = 0;
    for (uint32_t i = 0; i < t->cap && k < 64; i++) {
        if (!t->keys[i] || !t->vals[i]) continue;
        items[k] = malloc(128);
        snprintf(items[k], 128, "%s/%s=%lld", ks_str(ks_pair_a(t->keys[i])), ks_str(ks_pair_b(t->keys[i])),
                 (long long)t->vals[i]);
        k++;
    }
    qsort(items, k, sizeof(*items), cmp_str);
    size_t l = 0;
    buf[0] = 0;
    for (size_t i = 0; i < k; i++) {
        l += (size_t)snprintf(buf + l, n - l, "%s%s", i ? " " : "", items[i]);
        free(items[i]);
    }
    return buf;
}

typedef struct dumps {
    char existing[512], aff[512], anti[512];
} dumps;

static void dump_state(const ipa_pf_state *s, dumps *d) {
    dump(&s->existing_anti, d->existing, sizeof(d->existing));
    dump(&s->aff_counts, d->aff, sizeof(d->aff));
    dump(&s->anti_counts, d->anti, sizeof(d->anti));
}

static void compare(const char *name, const char *what, const dumps *got, const dumps *want) {
    char w[64];
    snprintf(w, sizeof(w), "%s existing", what);
    check(name, w, got->existing, want->existing);
    snprintf(w, sizeof(w), "%s affinity", what);
    check(name, w, got->aff, want->aff);
    snprintf(w, sizeof(w), "%s anti-affinity", what);
    check(name, w, got->anti, want->anti);
}

typedef struct arcase {
    const char *name;
    const char *pending;
    const char *existing[4];
    const char *added;
    const char *want_anti, *want_aff; /* after AddPod */
} arcase;

#define AR_NODES {"nodeA region=r1,zone=z11", "nodeB region=r1,zone=z12", "nodeC region=r2,zone=z21", NULL}
#define FOOBAR "anti:{region|foo in (bar)}"
#define ANTI_COMPLEX "anti:{region|foo in (bar,buzz)} anti:{zone|service notin (bar,security,test)}"
#define AFF_COMPLEX "aff:{region|foo in (bar,buzz)} aff:{zone|service notin (bar,security,test)}"

static const arcase add_remove[] = {
    {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
     "name:pending labels:{foo=bar} " FOOBAR,
     {"name:p1 labels:{foo=bar} node:nodeA", "name:p2 node:nodeC " FOOBAR},
     "name:addedPod labels:{foo=bar} node:nodeB " FOOBAR, "region/r1=2", ""},
    {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex terms)",
     "name:pending labels:{foo=bar} " ANTI_COMPLEX,
     {"name:p1 labels:{foo=bar} node:nodeA", "name:p2 node:nodeC " FOOBAR},
     "name:addedPod labels:{foo=bar} node:nodeA " ANTI_COMPLEX, "region/r1=2 zone/z11=2 zone/z21=1", ""},
    {"preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
     "name:pending labels:{foo=bar} " AFF_COMPLEX,
     {"name:p1 labels:{foo=bar} node:nodeA", "name:p2 node:nodeC " FOOBAR " " AFF_COMPLEX},
     "name:addedPod labels:{foo=bar} node:nodeA " ANTI_COMPLEX, "", "region/r1=2 zone/z11=2"},
};

static ks_cycle_state *prefilter(ipa *pl, tt_env *e, const ks_pod *pod) {
    ks_cycle_state *st = ks_cycle_state_new();
    ks_pre_filter_result *res = NULL;
    assert_null(OPS.pre_filter(pl, st, pod, (const ks_node_info *const *)e->nodes, e->n, &res));
    return st;
}

static void test_prefilter_state_add_remove_pod(void **s) {
    failures = 0;
    const char *nodes[] = AR_NODES;
    for (size_t i = 0; i < sizeof(add_remove) / sizeof(add_remove[0]); i++) {
        const arcase *c = &add_remove[i];
        const char *all[6] = {0}, *existing[6] = {0};
        size_t k = 0;
        for (; c->existing[k]; k++) all[k] = existing[k] = c->existing[k];
        all[k] = c->added;
        tt_env with, without;
        tt_env_init(&with, nodes, all);
        tt_env_init(&without, nodes, existing);
        ipa *pl = make(&without, NULL, false);
        ks_pod *pending = tt_pod(c->pending);
        ks_pod *added = tt_pod(c->added);

        ks_cycle_state *st_all = prefilter(pl, &with, pending);
        ks_cycle_state *st = prefilter(pl, &without, pending);
        dumps d_all, d_orig, d;
        dump_state(ks_cycle_state_read(st_all, ipa_pf_key), &d_all);
        dump_state(ks_cycle_state_read(st, ipa_pf_key), &d_orig);

        /* The preemption dry run: a clone gets the pod added, the original
         * must not change. */
        ks_cycle_state *clone = ks_cycle_state_clone(st);
        ks_node_info *ni = tt_env_node(&without, ks_str(added->node_name));
        assert_null(OPS.add_pod(pl, clone, pending, added, ni));
        dump_state(ks_cycle_state_read(clone, ipa_pf_key), &d);
        check(c->name, "anti-affinity after AddPod", d.anti, c->want_anti);
        check(c->name, "affinity after AddPod", d.aff, c->want_aff);
        compare(c->name, "AddPod vs PreFilter with the pod", &d, &d_all);
        dumps d_st;
        dump_state(ks_cycle_state_read(st, ipa_pf_key), &d_st);
        compare(c->name, "original after AddPod on the clone", &d_st, &d_orig);

        assert_null(OPS.remove_pod(pl, clone, pending, added, ni));
        dump_state(ks_cycle_state_read(clone, ipa_pf_key), &d);
        compare(c->name, "RemovePod back to the original", &d, &d_orig);

        ks_cycle_state_free(clone);
        ks_cycle_state_free(st);
        ks_cycle_state_free(st_all);
        ks_pod_unref(pending);
        ks_pod_unref(added);
        OPS.destroy(pl);
        tt_env_free(&with);
        tt_env_free(&without);
    }
    assert_int_equal(failures, 0);
}

/* Upstream TestGetTPMapMatchingIncomingAffinityAntiAffinity. */
typedef struct tpcase {
    const char *name;
    const char *existing;
    const char *pod;
    const char *want_aff, *want_anti;
} tpcase;

static const tpcase tp_cases[] = {
    {"nil test", NULL, "name:aaa-normal", "", ""},
    {"incoming pod without affinity/anti-affinity causes a no-op", "name:normal node:nodeA labels:{aaa=}",
     "name:aaa-normal", "", ""},
    {"no pod has label that violates incoming pod's affinity and anti-affinity", "name:normal node:nodeA labels:{bbb=}",
     "name:aaa-anti aff:{hostname|aaa} anti:{hostname|aaa}", "", ""},
    {"existing pod matches incoming pod's affinity and anti-affinity - single term case",
     "name:normal node:nodeA labels:{aaa=}", "name:affi-antiaffi aff:{hostname|aaa} anti:{hostname|aaa}",
     "hostname/nodeA=1", "hostname/nodeA=1"},
    {"existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
     "name:normal node:nodeA labels:{aaa=,bbb=}",
     "name:affi-antiaffi aff:{hostname|aaa} aff:{hostname|bbb} anti:{hostname|aaa}", "hostname/nodeA=2",
     "hostname/nodeA=1"},
    {"existing pod not match incoming pod's affinity but matches anti-affinity", "name:normal node:nodeA labels:{aaa=}",
     "name:affi-antiaffi aff:{hostname|aaa} aff:{hostname|bbb} anti:{hostname|aaa} anti:{hostname|bbb}", "",
     "hostname/nodeA=1"},
    {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
     "name:normal node:nodeA labels:{aaa=,bbb=}",
     "name:anaffi-antiaffiti aff:{hostname|aaa} aff:{hostname|ccc} anti:{hostname|aaa} anti:{hostname|ccc}", "",
     "hostname/nodeA=1"},
    {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
     "name:normal node:nodeA labels:{bbb=}",
     "name:affi-antiaffi aff:{hostname|aaa} aff:{hostname|bbb} anti:{hostname|aaa} anti:{hostname|bbb}", "",
     "hostname/nodeA=1"},
};

static void test_incoming_affinity_anti_affinity_counts(void **s) {
    failures = 0;
    for (size_t i = 0; i < sizeof(tp_cases) / sizeof(tp_cases[0]); i++) {
        const tpcase *c = &tp_cases[i];
        const char *nodes[] = {"nodeA hostname=nodeA", NULL};
        const char *pods[] = {c->existing, NULL};
        tt_env e;
        tt_env_init(&e, nodes, pods);
        ipa *pl = make(&e, NULL, false);
        ks_pod *pod = tt_pod(c->pod);
        ks_cycle_state *st = ks_cycle_state_new();
        ks_pre_filter_result *res = NULL;
        ks_status *status = OPS.pre_filter(pl, st, pod, (const ks_node_info *const *)e.nodes, e.n, &res);
        const ipa_pf_state *ps = ks_cycle_state_read(st, ipa_pf_key);
        dumps d = {{0}, {0}, {0}};
        if (ps) dump_state(ps, &d);
        else check(c->name, "PreFilter", tt_status(status), "Skip"), status = NULL;
        ks_status_free(status);
        check(c->name, "affinity counts", d.aff, c->want_aff);
        check(c->name, "anti-affinity counts", d.anti, c->want_anti);
        ks_cycle_state_free(st);
        ks_pod_unref(pod);
        OPS.destroy(pl);
        tt_env_free(&e);
    }
    assert_int_equal(failures, 0);
}

/* ---- Score --------------------------------------------------------------- */

typedef struct scase {
    const char *name;
    const char *pod;
    const char *pods[8];
    const char *nodes[6];
    const char *hard;       /* hardPodAffinityWeight, NULL: default 1 */
    bool ignore;            /* ignorePreferredTermsOfExistingPods */
    const char *prescore;   /* NULL: Success */
    int64_t want[6];
} scase;

static void run_score(const scase *c) {
    tt_env e;
    tt_env_init(&e, c->nodes, c->pods);
    std_namespaces(&e);
    ipa *pl = make(&e, c->hard, c->ignore);
    ks_pod *pod = tt_pod(c->pod);
    ks_cycle_state *st = ks_cycle_state_new();
    const char *ps = tt_status(OPS.pre_score(pl, st, pod, (const ks_node_info *const *)e.nodes, e.n));
    check(c->name, "PreScore", ps, c->prescore ? c->prescore : OK);
    if (strcmp(ps, OK) == 0) {
        ks_node_score scores[32];
        for (size_t i = 0; i < e.n; i++) {
            scores[i].node = e.nodes[i];
            assert_null(OPS.score(pl, st, pod, e.nodes[i], &scores[i].score));
        }
        assert_null(OPS.normalize_score(pl, st, pod, scores, e.n));
        for (size_t i = 0; i < e.n; i++) {
            char what[64], got[32], want[32];
            snprintf(what, sizeof(what), "score(%s)", ks_str(e.nodes[i]->name));
            snprintf(got, sizeof(got), "%lld", (long long)scores[i].score);
            snprintf(want, sizeof(want), "%lld", (long long)c->want[i]);
            check(c->name, what, got, want);
        }
    }
    ks_cycle_state_free(st);
    ks_pod_unref(pod);
    OPS.destroy(pl);
    tt_env_free(&e);
}

#define S1 "labels:{security=S1}"
#define S2 "labels:{security=S2}"
#define AZ1 "az=az1"
#define AZ2 "az=az2"
#define STAY_S1_REGION "paff:{5|region|security in (S1)}"
#define STAY_S2_REGION "paff:{6|region|security in (S2)}"
#define AFFINITY3 "paff:{8|region|security notin (S1),security in (S2)} paff:{2|region|security,!wrongkey}"
#define HARD_AFFINITY "aff:{region|security in (S1,value2)} aff:{region|security,!wrongkey}"
#define AWAY_S1_AZ "panti:{5|az|security in (S1)}"
#define AWAY_S2_AZ "panti:{5|az|security in (S2)}"
#define STAY_S1_AWAY_S2 "paff:{8|region|security in (S1)} panti:{5|az|security in (S2)}"
#define AFF_NSSEL "paff:{5|region|security in (S1)|ns=subteam2.team2|nssel=team in (team1)}"
#define ANTI_NSSEL "panti:{5|region|security in (S1)|ns=subteam2.team2|nssel=team in (team1)}"
#define N3 {"node1 " CHINA, "node2 " INDIA, "node3 " AZ1}

static const scase preferred[] = {
    {"all nodes are same priority as Affinity is nil", S1, {NULL}, N3, NULL, false, "Skip", {0}},
    {"Affinity: pod that matches topology key & pods in nodes will get high score comparing to others which doesn't match either pods in nodes or in topology key",
     S1 " " STAY_S1_REGION, {"node:node1 " S1, "node:node2 " S2, "node:node3 " S1}, N3, NULL, false, NULL, {100, 0, 0}},
    {"All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
     STAY_S1_REGION, {"node:node1 " S1}, {"node1 " CHINA, "node2 " CHINA_AZ1, "node3 " INDIA}, NULL, false, NULL,
     {100, 100, 0}},
    {"Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
     S1 " " STAY_S2_REGION,
     {"node:node1 " S2, "node:node1 " S2, "node:node2 " S2, "node:node3 " S2, "node:node4 " S2, "node:node5 " S2},
     {"node1 " CHINA, "node2 " INDIA, "node3 " CHINA, "node4 " CHINA, "node5 " INDIA}, NULL, false, NULL,
     {100, 0, 100, 100, 0}},
    {"Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures",
     S1 " " AFFINITY3, {"node:node1 " S1, "node:node2 " S2, "node:node3 " S1}, N3, NULL, false, NULL, {20, 100, 0}},
    {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     S2, {"node:node1 " S1 " " STAY_S1_REGION, "node:node2 " S2 " " STAY_S2_REGION}, N3, NULL, false, NULL,
     {0, 100, 0}},
    {"Affinity symmetry with namespace selector", "ns:subteam1.team1 " S1,
     {"node:node1 " S1 " " AFF_NSSEL, "node:node2 " S2 " " STAY_S2_REGION}, N3, NULL, false, NULL, {100, 0, 0}},
    {"AntiAffinity symmetry with namespace selector", "ns:subteam1.team1 " S1,
     {"node:node1 " S1 " " ANTI_NSSEL, "node:node2 " S2 " " STAY_S2_REGION}, N3, NULL, false, NULL, {0, 100, 100}},
    {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry", S1,
     {"node:node1 " S1 " " HARD_AFFINITY, "node:node2 " S2 " " HARD_AFFINITY}, N3, NULL, false, NULL, {100, 100, 0}},
    {"Anti Affinity: pod that does not match existing pods in node will get high score", S1 " " AWAY_S1_AZ,
     {"node:node1 " S1, "node:node2 " S2}, {"node1 " AZ1, "node2 " CHINA}, NULL, false, NULL, {0, 100}},
    {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others",
     S1 " " AWAY_S1_AZ, {"node:node1 " S1, "node:node2 " S1}, {"node1 " AZ1, "node2 " CHINA}, NULL, false, NULL,
     {0, 100}},
    {"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
     S1 " " AWAY_S1_AZ, {"node:node1 " S1, "node:node1 " S1, "node:node2 " S2}, {"node1 " AZ1, "node2 " INDIA}, NULL,
     false, NULL, {0, 100}},
    {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score", S2,
     {"node:node1 " S1 " " AWAY_S2_AZ, "node:node2 " S2 " " AWAY_S1_AZ}, {"node1 " AZ1, "node2 " AZ2}, NULL, false,
     NULL, {0, 100}},
    {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
     S1 " " STAY_S1_AWAY_S2, {"node:node1 " S1, "node:node2 " S1}, {"node1 " CHINA, "node2 " AZ1}, NULL, false, NULL,
     {100, 0}},
    {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
     S1 " " STAY_S1_AWAY_S2,
     {"node:node1 " S1, "node:node1 " S1, "node:node2 " S1, "node:node3 " S1, "node:node3 " S1, "node:node4 " S1,
      "node:node5 " S1},
     {"node1 " CHINA_AZ1, "node2 " INDIA, "node3 " CHINA, "node4 " CHINA, "node5 " INDIA}, NULL, false, NULL,
     {100, 0, 100, 100, 0}},
    {"Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
     S1 " " STAY_S1_AWAY_S2,
     {"node:node1 " S1, "node:node2 " S2, "node:node3 " STAY_S1_AWAY_S2, "node:node4 " AWAY_S1_AZ},
     {"node1 " CHINA, "node2 " AZ1, "node3 " INDIA, "node4 " AZ2}, NULL, false, NULL, {100, 0, 100, 0}},
    {"Avoid panic when partial nodes in a topology don't have pods with affinity", S1,
     {"node:node1 " S1, "node:node2 " STAY_S1_AWAY_S2}, {"node1 " CHINA, "node2 " CHINA}, NULL, false, NULL, {0, 0}},
    {"Affinity with pods matching NamespaceSelector", "ns:subteam1.team1 " S1 " " AFF_NSSEL,
     {"node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam1.team2 " S1,
      "node:node2 ns:subteam2.team1 " S1},
     {"node1 " CHINA, "node2 " INDIA}, NULL, false, NULL, {100, 0}},
    {"Affinity with pods matching both NamespaceSelector and Namespaces fields", "ns:subteam1.team1 " S1 " " AFF_NSSEL,
     {"node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam2.team2 " S1,
      "node:node2 ns:subteam2.team1 " S1},
     {"node1 " CHINA, "node2 " INDIA}, NULL, false, NULL, {100, 0}},
    {"Anti-affinity with pods matching NamespaceSelector", "ns:subteam1.team1 " S1 " " ANTI_NSSEL,
     {"node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam1.team2 " S1,
      "node:node2 ns:subteam2.team1 " S1},
     {"node1 " CHINA, "node2 " INDIA}, NULL, false, NULL, {0, 100}},
    {"Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
     "ns:subteam1.team1 " S1 " " ANTI_NSSEL,
     {"node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam1.team1 " S1, "node:node1 ns:subteam2.team2 " S1,
      "node:node2 ns:subteam2.team1 " S1},
     {"node1 " CHINA, "node2 " INDIA}, NULL, false, NULL, {0, 100}},
    {"Ignore preferred terms of existing pods", S2,
     {"node:node1 " S1 " " STAY_S1_AWAY_S2, "node:node2 " S2 " " STAY_S2_REGION}, {"node1 " CHINA, "node2 " INDIA},
     NULL, true, "Skip", {0}},
    {"Do not ignore preferred terms of existing pods", S2,
     {"node:node1 " S1 " " STAY_S1_AWAY_S2, "node:node2 " S2 " " STAY_S2_REGION}, {"node1 " CHINA, "node2 " INDIA},
     NULL, false, NULL, {0, 100}},
    {"No nodes to score", S2, {NULL}, {NULL}, NULL, false, "Skip", {0}},
};

#define HARD_POD_AFFINITY "aff:{region|service in (S1)|ns=,subteam2.team2|nssel=team in (team1)}"

static const scase hard_weight[] = {
    {"with default weight", "labels:{service=S1}", {"node:node1 " HARD_POD_AFFINITY, "node:node2 " HARD_POD_AFFINITY},
     N3, "1", false, NULL, {100, 100, 0}},
    {"with zero weight", "labels:{service=S1}", {"node:node1 " HARD_POD_AFFINITY, "node:node2 " HARD_POD_AFFINITY},
     N3, "0", false, "Skip", {0}},
    {"with no matching namespace", "ns:subteam1.team2 labels:{service=S1}",
     {"node:node1 " HARD_POD_AFFINITY, "node:node2 " HARD_POD_AFFINITY}, N3, "1", false, "Skip", {0}},
    {"with matching NamespaceSelector", "ns:subteam1.team1 labels:{service=S1}",
     {"node:node1 " HARD_POD_AFFINITY, "node:node2 " HARD_POD_AFFINITY}, N3, "1", false, NULL, {100, 100, 0}},
    {"with matching Namespaces", "ns:subteam2.team2 labels:{service=S1}",
     {"node:node1 " HARD_POD_AFFINITY, "node:node2 " HARD_POD_AFFINITY}, N3, "1", false, NULL, {100, 100, 0}},
    /* ksched's own: the weight scales with the argument, min-max normalizes */
    {"hardPodAffinityWeight adds to preferred weights before normalization", "labels:{service=S1} " STAY_S1_REGION,
     {"node:node1 " HARD_POD_AFFINITY, "node:node2 labels:{security=S1}", "node:node2 labels:{security=S1}"},
     {"node1 " CHINA, "node2 " INDIA, "node3 " AZ1}, "3", false, NULL, {30, 100, 0}},
    {"scores may be negative before normalization", "labels:{service=S1} panti:{7|region|security in (S1)}",
     {"node:node1 labels:{security=S1}", "node:node2 " HARD_POD_AFFINITY},
     {"node1 " CHINA, "node2 " INDIA, "node3 " AZ1}, "2", false, NULL, {0, 100, 77}},
};

static void test_preferred_affinity(void **s) {
    failures = 0;
    for (size_t i = 0; i < sizeof(preferred) / sizeof(preferred[0]); i++) run_score(&preferred[i]);
    assert_int_equal(failures, 0);
}

static void test_preferred_affinity_with_hard_pod_affinity_weight(void **s) {
    failures = 0;
    for (size_t i = 0; i < sizeof(hard_weight) / sizeof(hard_weight[0]); i++) run_score(&hard_weight[i]);
    assert_int_equal(failures, 0);
}

/* ---- args, events ---------------------------------------------------------- */

static void test_args_validation(void **s) {
    char *err = NULL;
    ipa *pl = OPS.create(NULL, NULL, &err);
    assert_non_null(pl);
    assert_int_equal(pl->hard_weight, 1);
    assert_false(pl->ignore_preferred);
    OPS.destroy(pl);
}

static void test_events_to_register(void **s) {
    ks_cluster_event ev[8];
    size_t n = OPS.events_to_register(NULL, ev, 8);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].resource, KS_EV_POD);
    assert_int_equal(ev[0].actions, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE);
    assert_int_equal(ev[1].resource, KS_EV_NODE);
    assert_int_equal(ev[1].actions, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_affinity_single_node),
        cmocka_unit_test(test_required_affinity_multiple_nodes),
        cmocka_unit_test(test_label_keys_and_namespaces),
        cmocka_unit_test(test_filter_without_prefilter_state_is_an_error),
        cmocka_unit_test(test_prefilter_state_add_remove_pod),
        cmocka_unit_test(test_incoming_affinity_anti_affinity_counts),
        cmocka_unit_test(test_preferred_affinity),
        cmocka_unit_test(test_preferred_affinity_with_hard_pod_affinity_weight),
        cmocka_unit_test(test_args_validation),
        cmocka_unit_test(test_events_to_register),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
