/* What in-tree plugins may reach through the framework handle beyond the
 * public API: the snapshot, the object store (namespaces, PDBs, workloads,
 * storage objects) and the framework itself (for preemption). */
#ifndef KS_HANDLE_H
#define KS_HANDLE_H

#include "api/objects.h"
#include "framework/snapshot.h"
#include "framework/framework.h"

#include <ksched/ksched.h>

struct ks_framework;

/* The snapshot of the current cycle. */
const ks_snapshot *ks_handle_snapshot(const ks_handle *h);
/* Objects other than nodes and pods, as last seen by the backend. Read-only
 * for plugins; only changed between cycles. */
const ks_objects *ks_handle_objects(const ks_handle *h);
struct ks_framework *ks_handle_framework(ks_handle *h);

/* A write the plugin built (struct ks_api_call, backend/api_calls.h:
 * VolumeBinding's volume bindings, DynamicResources' claim updates),
 * executed through the scheduler's API dispatcher. A KS_SKIP status when
 * nothing makes it (embedders, tests, a shadow, the trace's volume
 * bindings): the plugin then keeps what it wrote assumed. */
struct ks_api_call;
ks_status *ks_handle_api_call(ks_handle *h, const struct ks_api_call *call);
/* What the profiles of one scheduler share (upstream's SharedDRAManager
 * is one per scheduler): a key equal for all of them. */
const void *ks_handle_scheduler_key(const ks_handle *h);
/* Number of workers for ks_handle_parallelize (profile's parallelism). */
int ks_handle_parallelism(const ks_handle *h);
/* The profile's seed (ks_framework_options.seed): a plugin that makes a
 * random choice draws it from a generator seeded with this. */
uint64_t ks_handle_seed(const ks_handle *h);
/* Which ties go by name instead of a random choice (ks_framework_options.ties). */
ks_tie_rules ks_handle_tie_rules(const ks_handle *h);
/* A feature gate as the scheduler was made with it (the profile's
 * features; the process gates for a NULL handle): what plugins read
 * instead of ks_feature_enabled. */
bool ks_handle_feature_enabled(const ks_handle *h, ks_feature f);
/* Run fn(i, arg) for i in [0, n) on the worker pool; returns when all done. */
void ks_handle_parallelize(ks_handle *h, size_t n, void (*fn)(size_t i, void *arg), void *arg);

#endif
