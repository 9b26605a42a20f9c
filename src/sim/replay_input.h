/* What `ksched replay` reads (docs/replay.md): each input's format is
 * recognised from its content, then read as a stream of timeline events
 * (sim/timeline.h) or, for the cluster inputs, as objects.
 *
 * - manifests (YAML/JSON Kubernetes objects, directories): the cluster at
 *   the start;
 * - the native event format: YAML documents or JSON lines, each an event
 *   with `at:` (a duration from the start or an RFC 3339 time) and one of
 *   `create:`, `delete:`, `node:`;
 * - Kubernetes audit logs (audit.k8s.io/v1 Event JSON lines);
 * - the Alibaba openb GPU trace: the pod CSV (events) and the node CSV
 *   (cluster).
 *
 * Times come out as read: `abs` events carry unix ns; the others an
 * offset from the trace's start, which the command places on the clock.
 * Errors name FILE:LINE. */
#ifndef KS_REPLAY_INPUT_H
#define KS_REPLAY_INPUT_H

#include "api/cluster.h"
#include "sim/timeline.h"

typedef enum ks_tl_format {
    KS_TLF_MANIFESTS = 0,
    KS_TLF_NATIVE,
    KS_TLF_AUDIT,
    KS_TLF_OPENB_PODS,
    KS_TLF_OPENB_NODES,
} ks_tl_format;

const char *ks_tl_format_name(ks_tl_format f);

/* The format of the file (or directory) at path; false with *err when it
 * cannot be read. */
bool ks_tl_detect(const char *path, ks_tl_format *out, char **err);

/* The label openb nodes carry their GPU model in, and that a task's
 * gpu_spec selects (as the FGD simulator's node label does). */
#define KS_OPENB_GPU_MODEL_LABEL "alibabacloud.com/gpu-card-model"

/* The nodes of an openb node CSV, added to c. false with *err. */
bool ks_tl_openb_nodes(const char *path, ks_cluster *c, char **err);

typedef struct ks_tl_reader ks_tl_reader;

/* A reader of an event format (NATIVE, AUDIT, OPENB_PODS). */
ks_tl_reader *ks_tl_reader_open(const char *path, ks_tl_format f, char **err);
/* The next event (1), end of input (0), or an error (-1, *err
 * "FILE:LINE: ..."). *abs: the event's times (at, delete_at) are unix ns;
 * else offsets from the trace's start. */
int ks_tl_reader_next(ks_tl_reader *r, ks_tl_event **ev, bool *abs, char **err);
void ks_tl_reader_free(ks_tl_reader *r);

#endif
