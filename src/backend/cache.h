/* The scheduler cache (upstream backend/cache): the NodeInfo of every node
 * with the pods bound or assumed on it, image states, and the node tree
 * that gives the snapshot its order. Pods are identified by ns/name.
 *
 * Assumed pods: the scheduling cycle assumes the pod on its node before
 * binding, so the next cycle already sees it. FinishBinding starts the
 * expiry clock (ttl 0: never expire, upstream's default); Forget undoes an
 * assumption; the pod's Add event from the backend confirms it.
 *
 * Thread-safe (one mutex): the scheduling thread, binder threads and the
 * watch thread all call in. Errors come back as Error statuses. */
#ifndef KS_CACHE_H
#define KS_CACHE_H

#include "framework/snapshot.h"
#include "util/clock.h"

#include <ksched/ksched.h>

typedef struct ks_cache ks_cache;

ks_cache *ks_cache_new(ks_clock *clock, int64_t assumed_ttl_ns);
void ks_cache_free(ks_cache *c);

void ks_cache_add_node(ks_cache *c, ks_node *node);
void ks_cache_update_node(ks_cache *c, ks_node *old_node, ks_node *new_node);
ks_status *ks_cache_remove_node(ks_cache *c, const ks_node *node);

/* Pods with spec.nodeName set, as the backend reports them. */
ks_status *ks_cache_add_pod(ks_cache *c, ks_pod *pod);
ks_status *ks_cache_update_pod(ks_cache *c, ks_pod *old_pod, ks_pod *new_pod);
ks_status *ks_cache_remove_pod(ks_cache *c, const ks_pod *pod);

/* pod->node_name is the node it is assumed on. */
ks_status *ks_cache_assume_pod(ks_cache *c, ks_pod *pod);
ks_status *ks_cache_forget_pod(ks_cache *c, const ks_pod *pod);
ks_status *ks_cache_finish_binding(ks_cache *c, const ks_pod *pod);
bool ks_cache_is_assumed(ks_cache *c, const ks_pod *pod);
/* Remove assumed pods whose binding finished more than ttl ago. */
void ks_cache_cleanup_assumed(ks_cache *c, int64_t now_ns);

size_t ks_cache_node_count(ks_cache *c);
size_t ks_cache_pod_count(ks_cache *c);
size_t ks_cache_assumed_count(ks_cache *c);

/* Bring snap up to date: copy only NodeInfos changed since snap->generation,
 * rebuild the node list when nodes came or went and the affinity / PVC
 * lists when they may have changed. */
ks_status *ks_cache_update_snapshot(ks_cache *c, ks_snapshot *snap);

#endif
