/* Alibaba's openb GPU cluster trace (cluster-trace-gpu-v2023, the traces
 * of "Beware of Fragmentation", Weng et al., USENIX ATC '23): its node and
 * task CSV files, and the Kubernetes objects the FGD simulator makes of
 * them (hkust-adsl/kubernetes-scheduler-simulator data/pod_csv_to_yaml.py):
 * GPUs as open-gpu-share's alibabacloud.com/gpu-count capacity and
 * gpu-card-model label on nodes, and gpu-count / gpu-milli / gpu-card-model
 * annotations on pods (docs/gpu-sharing.md). Used by bench/gpu-study; a
 * replay of the trace can read it the same way. */
#ifndef KS_OPENB_H
#define KS_OPENB_H

#include "api/cluster.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ks_openb_node {
    char *name;
    int64_t cpu_milli, memory_mib;
    int gpus;
    char *model; /* "" for CPU nodes */
    int line;    /* in the file */
} ks_openb_node;

typedef struct ks_openb_task {
    char *name;
    int64_t cpu_milli, memory_mib;
    int num_gpu;
    int gpu_milli;  /* per GPU, 0..1000 (clamped as the simulator does) */
    char *gpu_spec; /* accepted models, "A|B"; "" any */
    /* seconds; -1 when the column is absent or empty */
    int64_t creation, deletion, scheduled;
    int line; /* in the file */
} ks_openb_task;

typedef struct ks_openb_nodes {
    ks_openb_node *v;
    size_t n;
} ks_openb_nodes;

typedef struct ks_openb_tasks {
    ks_openb_task *v;
    size_t n;
} ks_openb_tasks;

/* Read a node list (sn,cpu_milli,memory_mib,gpu,model) or a task list
 * (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]); columns
 * are found by their header names. false with *err (malloc'd, naming
 * file:line) on a missing column or a malformed number. */
bool ks_openb_read_nodes(const char *path, ks_openb_nodes *out, char **err);
bool ks_openb_read_tasks(const char *path, ks_openb_tasks *out, char **err);
void ks_openb_nodes_free(ks_openb_nodes *n);
void ks_openb_tasks_free(ks_openb_tasks *t);

/* GPU milli a task asks for in all (num_gpu * gpu_milli). */
static inline int64_t ks_openb_task_gpu_milli(const ks_openb_task *t) {
    return (int64_t)t->num_gpu * t->gpu_milli;
}

/* Decode nodes into c (admitted), named names[i] (names NULL: their own
 * names): false with *err on failure. */
bool ks_openb_add_nodes(ks_cluster *c, const ks_openb_nodes *nodes, const char *const *names, char **err);
/* How the GPUs are written as DRA objects (docs/gpu-sharing.md, "DRA"). */
typedef enum ks_openb_dra {
    KS_OPENB_NO_DRA = 0,
    /* one ResourceSlice per node; N whole GPUs: one request of count N */
    KS_OPENB_DRA_NODE_SLICE,
    /* one ResourceSlice per GPU (a pool of N slices per node); N whole
     * GPUs: N requests of count 1 (v1.34.1's capacity check reads the
     * slice's device at the result's index within its request) */
    KS_OPENB_DRA_GPU_SLICE,
} ks_openb_dra;

/* Decode tasks[idx[i]] as pods named names[i] (NULL: the task's name) in
 * namespace ns into c, in this order, admitted. With dra, a GPU task asks
 * through a ResourceClaim of its own name instead of the annotations: the
 * claims follow the pods in c. */
bool ks_openb_add_pods(ks_cluster *c, const ks_openb_tasks *tasks, const uint32_t *idx, const char *const *names,
                       size_t n, const char *ns, ks_openb_dra dra, char **err);
/* The DRA form of the nodes' GPUs: DeviceClass gpu.openb and the
 * ResourceSlices of form (names as for ks_openb_add_nodes), each GPU a
 * shareable device (allowMultipleAllocations, capacity milli 1000, the
 * model as attribute `model`). Needs DRAConsumableCapacity. */
bool ks_openb_add_dra(ks_cluster *c, const ks_openb_nodes *nodes, const char *const *names, ks_openb_dra form,
                      char **err);

#endif
