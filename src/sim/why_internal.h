/* Internals of `why` shared by its files: why.c (the engine: runs,
 * verification, side effects, --all), why_fixes.c (candidate changes and
 * shared helpers), why_diagnose.c (reasons and node classes). */
#ifndef KS_WHY_INTERNAL_H
#define KS_WHY_INTERNAL_H

#include "scheduler/observer.h"
#include "sim/why.h"

#include <jansson.h>

/* What a pod's last attempt saw, taken from the attempt record while the
 * snapshot is alive: each node's verdict, free resources and pod count,
 * and per spread constraint the matching pods per topology domain. */
typedef struct why_node {
    ks_node *node;          /* referenced */
    const char *plugin;     /* NULL: passed */
    uint32_t nreasons;
    char **reasons;
    ks_resource free;       /* heap-owned */
    uint32_t npods;
} why_node;

typedef struct why_domain {
    ks_id value;
    uint32_t count;
} why_domain;

typedef struct why_capture {
    bool have;
    uint32_t nnodes;
    why_node *nodes;
    char *prefilter_plugin;  /* PreFilter rejected the pod */
    char *prefilter_msg;
    char *postfilter_msg;    /* PostFilter's status message */
    uint32_t nspread;
    why_domain **dom;        /* per constraint */
    uint32_t *ndom;
} why_capture;

/* Candidate fixes being built. */
typedef struct cand_list {
    ks_why_fix *v;
    uint32_t n, cap;
    uint32_t max_reps;   /* nodes tried per kind of node change (1 or 2) */
} cand_list;

/* qsort, which must not be given a NULL base even for no elements. */
void why_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
int why_find_pod(const ks_cluster *c, uint64_t key);
int why_find_node(const ks_cluster *c, const char *name);
uint64_t why_pod_key(const char *ns, const char *name);
/* Its controller (not a DaemonSet) recreates the pod when it is evicted. */
bool why_recreated(const ks_pod *p);
void why_format_amount(ks_id res, int64_t v, char *buf, int n);
/* "cpu" of "Insufficient cpu", NULL for other reasons. */
const char *why_reason_resource(const char *reason);
/* The node's NoSchedule/NoExecute taints the pod does not tolerate. */
uint32_t why_untolerated(const ks_pod *p, const ks_node *n, const ks_taint **out, uint32_t max);
void why_taint_text(const ks_taint *t, char *buf, size_t n);
/* Better representative first: the pod fits what is free, then most cpu free. */
int why_cmp_rep(const why_node *a, const why_node *b, const ks_pod *p);
/* A required anti-affinity term of `owner` selects pod p. */
bool why_anti_matches(const ks_pod_affinity_term *t, const ks_pod *owner, const ks_pod *p);

void why_fix_free(ks_why_fix *f);
ks_why_change why_change_copy(const ks_why_change *c);
ks_why_change *why_fix_add(ks_why_fix *f);
/* Every candidate for pod p (manifest t) from what its last attempt saw
 * (cap), the cluster as that run left it (final). `only`: node changes on
 * this node only; pod_side false: no pod changes; gated: only the gates. */
void why_candidates(const ks_cluster *c0, const ks_pod *p, const ks_tree *t, const why_capture *cap,
                    const ks_cluster *final, const char *only, bool pod_side, bool gated, cand_list *l);

/* The kubectl command that makes pod change c on a live cluster (malloc'd;
 * NULL when none can: a Job's pod, a workload not in the cluster). */
char *why_pod_command(const ks_cluster *cl, const ks_why_change *c);
/* Every pod change's command in r (why_commands.c). */
void why_set_commands(const ks_cluster *cl, ks_why_result *r);

void why_diagnose(const ks_pod *p, const why_capture *cap, const ks_cluster *final, ks_why_pod *wp);
/* Why preemption did not make room, in words (malloc'd), or NULL. */
char *why_preemption_words(const ks_pod *p, const why_capture *cap);

#endif
