/* What a configuration change would do: the same cluster simulated under
 * two configurations (A and B), decision by decision. Pods placed on
 * different nodes come with the per-plugin weighted score deltas between
 * the two nodes under each configuration; pods scheduled under one and
 * pending under the other come with the reason; aggregates are side by
 * side. The structures are what every printer reads (report_compare.c,
 * the HTML report). See docs/simulate.md, "--compare". */
#ifndef KS_COMPARE_H
#define KS_COMPARE_H

#include "api/cluster.h"
#include "config/config.h"
#include "sim/simulate.h"

#include <ksched/ksched.h>
#include <stdio.h>

/* One plugin's weighted score difference between the node a side chose
 * and the node the other side chose, under that side's configuration. */
typedef struct ks_compare_delta {
    const char *plugin;
    int64_t delta;       /* weighted(own node) - weighted(other node) */
} ks_compare_delta;

typedef struct ks_compare_side_why {
    bool other_scored;   /* the other side's node was scored in this side's attempt */
    char *other_verdict; /* else why not: its Filter rejection, or "not evaluated" */
    int64_t total;       /* total(own) - total(other) when scored */
    ks_compare_delta *deltas; /* plugins with a non-zero delta, largest |delta| first */
    uint32_t ndeltas;
} ks_compare_side_why;

typedef struct ks_compare_pod {
    char *pod;           /* "ns/name" */
    ks_sim_state state[2];
    char *node[2];       /* NULL when not scheduled */
    char *message[2];    /* FailedScheduling message when not scheduled */
    ks_compare_side_why why[2]; /* for pods placed on two different nodes */
} ks_compare_pod;

typedef struct ks_compare_resource {
    char *name;          /* "cpu", "memory", "nvidia.com/gpu" */
    double mean[2], sd[2]; /* allocation (requested / allocatable) over nodes, percent */
} ks_compare_resource;

typedef struct ks_compare_side {
    char *label;         /* the configuration's file, or "defaults" */
    uint32_t scheduled, unschedulable, gated, preempted, nodes_used;
    uint64_t attempts;
} ks_compare_side;

typedef struct ks_compare_result {
    ks_compare_side side[2];
    uint32_t npending;   /* pods pending in the input */
    ks_compare_pod *moved;      /* scheduled on both, on different nodes */
    uint32_t nmoved;
    ks_compare_pod *one_side;   /* scheduled on one side only */
    uint32_t none_side;
    ks_compare_resource *resources;
    uint32_t nresources;
} ks_compare_result;

/* Simulate cluster (not changed) under a and b. */
bool ks_compare(const ks_cluster *cluster, const ks_config *a, const char *label_a, const ks_config *b,
                const char *label_b, ks_registry *reg, const ks_sim_options *opts, ks_compare_result *out,
                char **err);
void ks_compare_result_free(ks_compare_result *r);

/* The same diff for runs the caller drives (replays): per side, each pod's
 * final outcome; and for the pods placed differently, the score deltas
 * read off the binding attempt of a run made knowing the other side's
 * node (capture phase). Pods are named "ns/name" (the last record of a
 * name wins). */
typedef struct ks_compare_collector ks_compare_collector;
ks_compare_collector *ks_compare_collector_new(void);
void ks_compare_collector_free(ks_compare_collector *c);
void ks_compare_collect_record(ks_compare_collector *c, int side, const char *pod, const char *node, bool preempted,
                               uint64_t attempts);
/* Runs from now on capture side `side`'s deltas against the other side's
 * recorded nodes (-1: none), and take records or not (a repeated run). */
void ks_compare_collector_capture(ks_compare_collector *c, int side, bool records);
void ks_compare_collect_attempt(ks_compare_collector *c, const ks_attempt_record *rec);
/* The result (labels copied); the collector stays valid. */
void ks_compare_collector_result(const ks_compare_collector *c, const char *label_a, const char *label_b,
                                 ks_compare_result *out);

void ks_compare_report_table(FILE *out, const ks_compare_result *r);
void ks_compare_report_json(FILE *out, const ks_compare_result *r, bool yaml);
/* The CompareResult document (-o json's) as a jansson value. */
#include <jansson.h>
json_t *ks_compare_json(const ks_compare_result *r);

#endif
