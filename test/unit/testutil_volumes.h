/* Fixtures for the volume plugins' table tests: a cluster written as YAML
 * manifests (nodes, pods, PVs, PVCs, StorageClasses, CSINodes, CSIDrivers)
 * decoded by the real codec, a snapshot of its nodes and bound pods, and a
 * framework whose profile runs only the named plugins and whose object
 * store is that cluster. Upstream's test tables port case by case: each
 * case is a few YAML documents. */
#ifndef KS_TESTUTIL_VOLUMES_H
#define KS_TESTUTIL_VOLUMES_H

#include "api/cluster.h"
#include "framework/snapshot.h"
#include "config/config.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/status.h"

#include <ksched/framework.h>
#include <ksched/ksched.h>

typedef struct tv_env {
    ks_cluster *c;
    ks_objects view; /* of c, for the framework's env */
    ks_snapshot *snap;
    ks_config *cfg;
    ks_framework *fw;
    ks_cycle_state *st; /* of the last tv_filter */
    /* bindings handed to the backend by PreBind (tv_bind_volumes): PV
     * and claim writes recorded, not applied */
    int nbind_calls;
    char bound[512];
    /* DynamicResources' claim writes (tv_claim_writes on), applied to the
     * cluster as the memory backend does: "RESERVE ns/claim pod
     * [devices]; ..." */
    bool claim_writes;
    char claims[1024];
} tv_env;

/* plugins: comma-separated plugin names, in profile order. */
void tv_init(tv_env *e, const char *plugins, const char *yaml);
void tv_free(tv_env *e);
/* Admission as simulate runs it (pod uids, claims from templates). */
void tv_admit(tv_env *e);
/* Hand DynamicResources' claim writes to the test's backend (recorded in
 * e->claims and applied to the cluster). */
void tv_claim_writes(tv_env *e);
/* Replace the cluster's objects (not nodes or bound pods) by those of yaml
 * appended to the original manifests (a new version of the store). */
void tv_reload(tv_env *e, const char *yaml);
ks_pod *tv_pod(tv_env *e, const char *name);

/* PreFilter then Filter of the named pod on every node (a fresh cycle
 * state, kept in e->st): "<Code>: reasons" when PreFilter rejects, else
 * "n1 Success; n2 <Code>: reasons; ..." by node name, with "(skip)"
 * appended when every plugin's PreFilter skipped. Static buffer. */
const char *tv_filter(tv_env *e, const char *pod);
/* Reserve / Unreserve / PreBind of the pod of the last tv_filter. */
const char *tv_reserve(tv_env *e, const char *pod, const char *node);
void tv_unreserve(tv_env *e, const char *pod, const char *node);
const char *tv_pre_bind(tv_env *e, const char *pod, const char *node);
/* PostFilter with every node Unschedulable "x" (status string). */
const char *tv_post_filter(tv_env *e, const char *pod);

/* "Success", "Skip" or "<Code>: r1, r2"; frees s. Static buffer. */
const char *tv_status(ks_status *s);

#endif
