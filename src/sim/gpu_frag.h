/* GPU fragmentation as the FGD paper measures it (Weng et al., USENIX
 * ATC '23; docs/gpu-sharing.md): the idle GPU capacity of a node that a
 * task drawn from the workload could not use, for a cluster at one
 * moment. The replay reports it as a series (ksched replay --gpu-frag).
 * The GpuShare plugin computes the same measure for its FGDScore on its
 * own (plugins see only the public API).
 *
 * GPUs are read as open-gpu-share writes them (node capacity and pod
 * annotations alibabacloud.com/gpu-count, gpu-milli, gpu-card-model,
 * gpu-index) or, failing that, as whole nvidia.com/gpu devices (the
 * replay's openb pods, whose share is openb/gpu-milli). */
#ifndef KS_GPU_FRAG_H
#define KS_GPU_FRAG_H

#include "api/cluster.h"

#include <stddef.h>

typedef struct ks_gpu_task_type {
    int64_t cpu, milli; /* millicores; thousandths of each GPU (0: no GPU) */
    int count;          /* GPUs */
    const char *model;  /* accepted models "A|B" ("" any); the pod's */
    double freq;        /* share of the workload, the types sum to 1 */
} ks_gpu_task_type;

typedef struct ks_gpu_workload {
    ks_gpu_task_type *v;
    size_t n;
} ks_gpu_workload;

/* The workload of the pods of c (bound or not): their shapes by
 * frequency, the most frequent covering 95 % of the pods. */
void ks_gpu_workload_of(ks_gpu_workload *w, const ks_cluster *c);
void ks_gpu_workload_free(ks_gpu_workload *w);

typedef struct ks_gpu_frag {
    double frag_milli; /* unusable idle GPU capacity, thousandths of a GPU */
    double idle_milli; /* idle GPU capacity */
} ks_gpu_frag;

/* The measure of c's nodes against w: the cluster's sum, and each node's
 * in per_node (c->nodes order) when not NULL. */
ks_gpu_frag ks_gpu_frag_cluster(const ks_gpu_workload *w, const ks_cluster *c, ks_gpu_frag *per_node);

#endif
