/* Why is a pod pending, and what is the smallest change that would let it
 * schedule? Every answer comes from the real scheduler: the reasons are
 * the verdicts of the pod's last attempt in a simulation of the cluster,
 * and a fix is printed only when a simulation of the changed cluster
 * schedules the pod. Fixes are JSON Patches (codec/patch.h) on the pod or
 * on nodes, evictions of named pods, or a node added like an existing
 * one. The result structures are what every printer reads (report_why.c,
 * the HTML report). See docs/why.md. */
#ifndef KS_WHY_H
#define KS_WHY_H

#include "api/cluster.h"
#include "config/config.h"
#include "sim/simulate.h"

#include <ksched/ksched.h>

typedef enum ks_why_change_kind {
    KS_WHY_REMOVE_GATES = 0, /* pod: spec.schedulingGates removed */
    KS_WHY_TOLERATE,         /* pod: tolerations added */
    KS_WHY_DROP_SELECTOR,    /* pod: a nodeSelector entry removed */
    KS_WHY_DROP_TERM,        /* pod: a required (anti-)affinity term or expression removed */
    KS_WHY_DROP_HOST_PORT,   /* pod: a container port's hostPort removed */
    KS_WHY_RELAX_SPREAD,     /* pod: maxSkew raised or whenUnsatisfiable ScheduleAnyway */
    KS_WHY_LOWER_REQUEST,    /* pod: container requests lowered */
    KS_WHY_PRIORITY,         /* pod: another priorityClassName */
    KS_WHY_REMOVE_TAINT,     /* node: taints removed */
    KS_WHY_ADD_LABEL,        /* node: labels added */
    KS_WHY_UNCORDON,         /* node: spec.unschedulable cleared */
    KS_WHY_EVICT,            /* a running pod deleted (its controller recreates it) */
    KS_WHY_ADD_NODE,         /* a node like an existing one added */
} ks_why_change_kind;

const char *ks_why_change_kind_name(ks_why_change_kind k);

/* One change to one object. */
typedef struct ks_why_change {
    ks_why_change_kind kind;
    const char *object;  /* "Pod" or "Node" */
    char *ns;            /* "" for nodes */
    char *name;          /* the object changed (ADD_NODE: the new node) */
    char *like;          /* ADD_NODE: the node copied */
    char *summary;       /* one line a person reads */
    char *patch;         /* RFC 6902 JSON Patch text; NULL for EVICT, ADD_NODE */
    char *command;       /* the kubectl command that makes the change */
    char *owner;         /* pod changes: "Kind/name" of its controller, whose
                          * pod template is where the change belongs; NULL */
} ks_why_change;

typedef enum ks_why_effect_kind {
    KS_WHY_MOVED = 0,    /* another pending pod lands on another node */
    KS_WHY_NOW_PENDING,  /* another pending pod no longer schedules */
    KS_WHY_ALSO_SCHEDULED, /* another pending pod now schedules too */
    KS_WHY_PREEMPTED,    /* a running pod is preempted */
    KS_WHY_REPLACED,     /* an evicted pod's replacement: where it goes */
} ks_why_effect_kind;

const char *ks_why_effect_kind_name(ks_why_effect_kind k);

typedef struct ks_why_effect {
    ks_why_effect_kind kind;
    char *pod;           /* "ns/name" */
    char *before, *after; /* node names; NULL: pending */
} ks_why_effect;

typedef struct ks_why_fix {
    ks_why_change *changes;
    uint32_t nchanges;
    char *node;          /* where the pod lands in the re-run */
    uint32_t objects;    /* objects touched (ranking, first key) */
    uint32_t harm;       /* other pods moved, left pending or preempted */
    double amount;       /* how much is changed (ranking, third key) */
    ks_why_effect *effects;
    uint32_t neffects;
    uint32_t unblocks;   /* pending pods (this one included) the change schedules */
} ks_why_fix;

/* A reason as kube-scheduler counts it: text and number of nodes. */
typedef struct ks_why_reason {
    char *text;
    uint32_t nodes;
} ks_why_reason;

/* Nodes with the same verdict (plugin and reasons), collapsed. */
typedef struct ks_why_class {
    char *plugin;        /* the rejecting Filter plugin ("" for PreFilter) */
    char **reasons;
    uint32_t nreasons;
    char **nodes;        /* sorted by name */
    uint32_t nnodes;
    char **details;      /* the numbers behind the verdict, one line each */
    uint32_t ndetails;
} ks_why_class;

typedef struct ks_why_pod {
    char *pod;           /* "ns/name" */
    ks_sim_state state;  /* in the simulation of the cluster as given */
    char *node;          /* SCHEDULED: where */
    char *message;       /* the FailedScheduling message (or gate message) */
    char *preemption;    /* why preemption does not make room, NULL when it does */
    ks_why_reason *reasons;
    uint32_t nreasons;
    ks_why_class *classes;
    uint32_t nclasses;
    ks_why_fix *fixes;   /* verified, smallest first */
    uint32_t nfixes;
    bool pairs;          /* no single change works: the fixes are pairs */
    uint32_t tried;      /* candidate changes simulated */
    char *cause;         /* the root cause key (--all groups by it) */
    int32_t group;       /* --all: index of its group, -1 otherwise */
} ks_why_pod;

/* --all: pending pods with one root cause. */
typedef struct ks_why_group {
    char *cause;         /* "Insufficient cpu; node(s) had untolerated taint {...}" */
    char **pods;
    uint32_t npods;
    uint32_t representative; /* index into result pods whose fixes stand for the group */
} ks_why_group;

typedef struct ks_why_result {
    ks_why_pod *pods;
    uint32_t npods;
    ks_why_group *groups; /* --all, largest first */
    uint32_t ngroups;
    ks_why_fix *cluster_fixes; /* --all: cluster-side fixes, most pods unblocked first */
    uint32_t ncluster_fixes;
    uint32_t runs;       /* simulations run */
    double wall_seconds;
} ks_why_result;

typedef struct ks_why_options {
    const char *pod;     /* "ns/name"; NULL with all */
    bool all;
    uint32_t max_fixes;  /* printed per pod; 0: 10 */
    uint32_t max_runs;   /* simulations per pod; 0: 200 */
    ks_sim_options sim;  /* seed, tie-break, parallelism */
} ks_why_options;

/* Answer on cluster (admitted; not changed). False with *err (malloc'd)
 * when the scheduler cannot be built or the pod is not in the cluster. */
bool ks_why(const ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_why_options *o,
            ks_why_result *out, char **err);
void ks_why_result_free(ks_why_result *r);

/* Printers (report_why.c). */
#include <stdio.h>
void ks_why_report_table(FILE *out, const ks_why_result *r);
void ks_why_report_list(FILE *out, const ks_why_result *r, bool yaml);

#endif
