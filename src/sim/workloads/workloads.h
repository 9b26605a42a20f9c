/* The controllers of kube-controller-manager v1.34 that make pods, beside
 * the simulator: Deployment (→ ReplicaSet), ReplicaSet,
 * ReplicationController, StatefulSet (with its PersistentVolumeClaims),
 * DaemonSet, Job and CronJob (→ Job). Given the workloads of a cluster
 * (as loaded from manifests, api/objects.h ks_workload with its
 * document), they produce the objects the controllers would create now,
 * named, labelled, owned and defaulted as the controllers and the API
 * server make them; the scheduler then places them like any pod.
 *
 * A workload that already has pods in the cluster (found through their
 * controller owner reference) is scaled to the manifest's count rather
 * than created again. See docs/workloads.md. */
#ifndef KS_WORKLOADS_H
#define KS_WORKLOADS_H

#include "api/cluster.h"
#include "codec/errors.h"

typedef struct ks_wl_options {
    uint64_t seed;    /* random name suffixes (the API server's generateName) */
    int64_t now;      /* unix seconds: creationTimestamp of what is created,
                       * and the time a CronJob fires */
    bool no_hold;     /* create OrderedReady ordinals at once (runs that
                       * cannot release them one by one) */
} ks_wl_options;

/* What one workload's controllers create. Pods in `held` are created one
 * at a time (a StatefulSet's OrderedReady policy: the next ordinal once
 * the previous one is running, which in simulation is once it is bound);
 * ks_wl_controller releases them. */
typedef struct ks_wl_objects {
    KS_VEC(ks_pod *) pods;
    KS_VEC(ks_pod *) held;
    KS_VEC(ks_pvc *) pvcs;
    KS_VEC(ks_workload *) workloads; /* ReplicaSets of Deployments, Jobs of CronJobs */
    /* A workload whose template changed while pods of the old one run:
     * the new pods are created and the old ones deleted step by step
     * (ks_wl_step) under the update strategy, not at once.
     * Deployment: `old` and `fresh` are two lists (`pods` is then empty).
     * DaemonSet, StatefulSet: slots, one per node / ordinal: old.v[i] and
     * fresh.v[i] (either NULL) are that node's or ordinal's pods, with
     * flags.v[i] (KS_WL_SLOT_*); pods already created are in `pods`. */
    struct {
        bool active, recreate;
        ks_workload_kind kind;
        const char *strategy;  /* "RollingUpdate", "Recreate", "OnDelete" (static) */
        int32_t replicas, max_surge, max_unavailable;
        int32_t partition;     /* StatefulSet: the first index updated */
        int32_t desired;       /* DaemonSet: the nodes it targets */
        bool parallel;         /* StatefulSet podManagementPolicy Parallel */
        KS_VEC(ks_pod *) old;   /* running pods of the old template (referenced) */
        KS_VEC(ks_pod *) fresh; /* the new template's pods (referenced), in order */
        KS_VEC(uint8_t) flags;
    } rollout;
    int32_t desired;                  /* the pods the workload wants; -1 unknown */
    uint32_t next_input_index;        /* c's next_input_index after these objects */
} ks_wl_objects;

/* Slot flags of a DaemonSet's or StatefulSet's rollout. */
enum {
    KS_WL_SLOT_CREATED = 1,  /* fresh exists in the cluster */
    KS_WL_SLOT_GONE = 2,     /* old was deleted */
    KS_WL_SLOT_REPLACE = 4,  /* old is to go (outdated, or on a node the set left) */
    KS_WL_SLOT_RUN = 8,      /* DaemonSet: the node should run the pod */
    KS_WL_SLOT_CONTINUE = 16 /* DaemonSet: a pod there may continue running */
};

void ks_wl_objects_free(ks_wl_objects *o);

/* The objects the controllers would create for w (a workload of any kind
 * but Service) in cluster c, which is read, not changed. false with
 * errors in errs (w's file:line) when the template is invalid. This is the
 * entry point for anything that creates workloads over time (replay). */
bool ks_workload_expand(const ks_workload *w, const ks_cluster *c, const ks_wl_options *o,
                        ks_wl_objects *out, ks_errors *errs);

/* A StatefulSet's pod of ordinal start+ordinal (and its claims that c
 * does not hold), as if the set were scaled to include it. */
bool ks_statefulset_ordinal(const ks_workload *w, const ks_cluster *c, const ks_wl_options *o, int32_t ordinal,
                            ks_wl_objects *out, ks_errors *errs);

/* Every top-level workload of c expanded, and what it creates added to
 * c (pods, PVCs, ReplicaSets, Jobs). A ReplicaSet or Job whose controller
 * is also in c is left to it; a CronJob that has a Job in c has fired.
 * All or nothing: false with errs, c unchanged. What was created is
 * listed in *gen (borrowed from c), with the pods held back for
 * OrderedReady StatefulSets (not in c; ks_wl_held_release). */
typedef struct ks_wl_held ks_wl_held;
typedef struct ks_wl_generated {
    KS_VEC(ks_workload *) workloads;
    KS_VEC(ks_pvc *) pvcs;
    uint32_t npods;
    ks_wl_held *held;
} ks_wl_generated;
bool ks_workloads_expand(ks_cluster *c, const ks_wl_options *o, ks_wl_generated *gen, ks_errors *errs);
void ks_wl_generated_free(ks_wl_generated *g);

/* What the controllers do when the scheduler is idle: create held
 * ordinals whose predecessor is bound, and advance rollouts (create new
 * pods up to maxSurge, delete old ones while maxUnavailable allows; for
 * Recreate, delete every old pod first). Returns how many pods were
 * created or deleted; 0 when nothing can move. */
typedef struct ks_wl_step_ops {
    void *ctx;
    bool (*is_bound)(void *ctx, const ks_pod *p);  /* its current version has a node */
    void (*create)(void *ctx, ks_pod *p);           /* the reference is handed over */
    void (*remove)(void *ctx, const ks_pod *p);
} ks_wl_step_ops;
uint32_t ks_wl_step(ks_wl_held *h, const ks_wl_step_ops *ops);

/* A rollout's state, for reports: the Deployment, new pods created and
 * bound, old pods left; false when w has none. */
typedef struct ks_wl_rollout_state {
    bool recreate;
    const char *strategy; /* "RollingUpdate", "Recreate", "OnDelete" */
    uint32_t created, bound, total, old_left, old_total;
} ks_wl_rollout_state;
bool ks_wl_rollout_state_of(const ks_wl_held *h, const ks_workload *w, const ks_cluster *c,
                            bool (*is_bound)(void *ctx, const ks_pod *p), void *ctx, ks_wl_rollout_state *out);

/* Held pods whose predecessor is now bound (is_bound tells), taken out
 * of h in order; returns how many were written to out (at most max), each
 * with its reference handed over. */
uint32_t ks_wl_held_release(ks_wl_held *h, bool (*is_bound)(void *ctx, const ks_pod *p), void *ctx,
                            ks_pod **out, uint32_t max);
/* The pods still held, in order (borrowed). */
uint32_t ks_wl_held_list(const ks_wl_held *h, const ks_pod **out, uint32_t max);
uint32_t ks_wl_held_count(const ks_wl_held *h);

/* The workload a pod belongs to, following controller owner references
 * through c's workloads (a ReplicaSet to its Deployment, a Job to its
 * CronJob); NULL for a pod no workload in c owns. */
const ks_workload *ks_workload_of_pod(const ks_cluster *c, const ks_pod *p);

#endif
