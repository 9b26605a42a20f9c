/* A snapshot of a live cluster: every object the scheduler reads, listed
 * (paginated) from the kube-apiserver as document trees, one List per
 * kind, in the order `ksched snapshot` writes them to files and the
 * manifest loader reads them back. What-if changes (drain, remove or
 * add nodes) edit the trees before they are decoded, so a changed
 * snapshot can be written or simulated alike. See docs/simulate.md. */
#ifndef KS_KUBE_CLUSTER_DUMP_H
#define KS_KUBE_CLUSTER_DUMP_H

#include "codec/tree.h"
#include "kube/client.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ks_kube_snapshot_doc {
    const char *file; /* the name it is written under ("02-nodes.json") */
    ks_tree *list;    /* {apiVersion: v1, kind: List, items: [...]} */
} ks_kube_snapshot_doc;

typedef struct ks_kube_snapshot {
    ks_arena *arena;      /* every tree */
    ks_kube_snapshot_doc *docs;
    size_t n, cap;
} ks_kube_snapshot;

void ks_kube_snapshot_init(ks_kube_snapshot *s);
void ks_kube_snapshot_free(ks_kube_snapshot *s);

/* List every kind of the table in snapshot.c from the API server (pods
 * without the finished ones, as the scheduler's informer). A kind the
 * server does not serve (404: no DRA, no PodGroup CRD) is left out; any
 * other error (403 from RBAC, no answer) fails with *err naming the kind
 * and the path. page_size 0: 500. */
bool ks_kube_snapshot_list(ks_kube_snapshot *s, ks_kube_client *c, uint32_t page_size, char **err);

/* Read manifest files (or directories of them, non-recursive, sorted;
 * *.json, *.yaml, *.yml) as documents of the snapshot, so what-ifs can
 * apply to a snapshot written earlier. */
bool ks_kube_snapshot_read(ks_kube_snapshot *s, const char *path, char **err);

/* What-ifs. Drain: the node becomes unschedulable (as `kubectl cordon`);
 * its pods that a controller other than a DaemonSet owns become pending
 * (nodeName, nominatedNodeName and status cleared: the replacement a
 * controller creates after the eviction); DaemonSet and mirror pods stay;
 * pods without a controller are gone (`kubectl drain --force` deletes
 * them and nothing recreates them). Remove: the same, then the node and
 * the pods left on it are gone. Add: `count` copies of the Node in the
 * manifest file, named NAME-1..NAME-count (NAME alone when count is 1),
 * with kubernetes.io/hostname set to the new name. */
bool ks_kube_snapshot_drain(ks_kube_snapshot *s, const char *node, char **err);
bool ks_kube_snapshot_remove_node(ks_kube_snapshot *s, const char *node, char **err);
bool ks_kube_snapshot_add_nodes(ks_kube_snapshot *s, const char *file, uint32_t count, char **err);

/* Write each document as DIR/<file> (JSON, one List per file); DIR is
 * created when missing. */
bool ks_kube_snapshot_write(const ks_kube_snapshot *s, const char *dir, char **err);
/* All documents as one JSON text of concatenated Lists (malloc'd), in
 * the order the files would be read back. */
char *ks_kube_snapshot_json(const ks_kube_snapshot *s, size_t *len);

/* Objects per document: "nodes 300, pods 4000, ..." for logs. */
size_t ks_kube_snapshot_count(const ks_kube_snapshot *s, const char *file);

#endif
