/* Fixtures for the topology plugins' table tests (InterPodAffinity,
 * PodTopologySpread): pods and nodes described by short strings, so that
 * upstream's test tables port case by case.
 *
 * Pod spec, space-separated clauses (braces group text with spaces):
 *   ns:NS name:N node:NODE labels:{k=v,k2=v2} terminating
 *   aff:{TOPO|SEL[|opt...]}  anti:{...}           required (anti-)affinity term
 *   paff:{W|TOPO|SEL[|opt...]}  panti:{...}      preferred term with weight W
 *     opts: ns=a,b  nssel=SEL  mlk=k1,k2  mmlk=k1,k2
 *   spread:{SKEW|TOPO|DoNotSchedule|SEL[|opt...]}
 *     opts: min=N  ap=Honor|Ignore  tp=Honor|Ignore  mlk=k1,k2
 *   tol:{key|Equal|value|NoSchedule}   nodesel:{k=v,...}   nodeaff:{SEL}
 *   owner:{Kind|apiVersion|name}
 * SEL is a label selector in kubectl syntax ("a=b,c in (x,y),!d,e"),
 * "nil" for a nil selector and "" for the empty one ({}).
 *
 * Node spec: "NAME k=v,k2=v2 [taint:{key|value|NoSchedule}]". */
#ifndef KS_TESTUTIL_TOPOLOGY_H
#define KS_TESTUTIL_TOPOLOGY_H

#include "api/cluster.h"
#include "api/node.h"
#include "api/pod.h"
#include "framework/cycle_state.h"
#include "framework/nodeinfo.h"
#include "framework/status.h"

#include <ksched/ksched.h>

ks_pod *tt_pod(const char *spec);
ks_node *tt_node(const char *spec);
ks_label_selector tt_selector(ks_arena *a, const char *spec);

/* A small cluster: node infos in the order given, with pods placed by
 * their node name; namespaces and workloads for the object store. */
typedef struct tt_env {
    size_t n;
    ks_node_info *nodes[32];
    ks_objects *objects;
} tt_env;

void tt_env_init(tt_env *e, const char *const *nodes, const char *const *pods);
/* "name k=v,..." */
void tt_env_namespace(tt_env *e, const char *spec);
/* kind: KS_WORKLOAD_*, selector in SEL syntax */
void tt_env_workload(tt_env *e, ks_workload_kind kind, const char *ns, const char *name, const char *sel);
ks_node_info *tt_env_node(tt_env *e, const char *name);
void tt_env_free(tt_env *e);

/* "Success", "Skip" or "<Code>: reason"; frees the status. Static buffer. */
const char *tt_status(ks_status *s);

#endif
