/* The state DynamicResources shares between a scheduler's profiles
 * (upstream's SharedDRAManager, one per scheduler): the claims whose
 * allocation is in flight (between Reserve and the end of PreBind), the
 * claims as last written by the plugin until the backend reports them
 * (upstream's assume cache), and the compiled CEL selectors. */
#ifndef KS_DRA_MANAGER_H
#define KS_DRA_MANAGER_H

#include "api/dra.h"
#include "plugins/dynamicresources/allocator.h"

typedef struct ks_dra_manager ks_dra_manager;

/* One manager per key (ks_handle_scheduler_key), shared by reference;
 * shares: DRAConsumableCapacity of that scheduler (its device set). */
ks_dra_manager *ks_dra_manager_acquire(const void *key, bool shares);
void ks_dra_manager_release(ks_dra_manager *m);

ks_dra_cel_cache *ks_dra_manager_cel(ks_dra_manager *m);

/* The claim ns/name as the plugin should see it: the assumed version
 * while the objects still show the version it was assumed over, else the
 * objects' (NULL when neither has it). A reference for the caller. */
ks_resource_claim *ks_dra_manager_claim(ks_dra_manager *m, const ks_objects *o, ks_id ns, ks_id name);

/* In-flight allocations (keyed by claim uid). signal takes a reference
 * to claim (the claim with its allocation). */
bool ks_dra_manager_pending(ks_dra_manager *m, const char *uid);
void ks_dra_manager_signal_pending(ks_dra_manager *m, const char *uid, ks_resource_claim *claim);
bool ks_dra_manager_remove_pending(ks_dra_manager *m, const char *uid);

/* Assume `written` (a reference is taken) over `base`, the version the
 * objects show now; restore drops the assumption of ns/name. */
void ks_dra_manager_assume(ks_dra_manager *m, const ks_resource_claim *base, ks_resource_claim *written);
void ks_dra_manager_restore(ks_dra_manager *m, ks_id ns, ks_id name);
/* Bring the manager to the objects o (it holds the claims of the view
 * it last saw) and drop the assumptions whose write o already shows (by
 * resourceVersion), as upstream's assume cache does when its informer
 * reports the object: a binding cycle's PreBind calls it, so that the
 * claims the last scheduling cycle saw and the assumptions (each holding
 * the written claim and the version it was written over) do not wait for
 * a next scheduling cycle, which may come long after the last binding.
 * The number of assumptions left, for tests. */
size_t ks_dra_manager_sweep(ks_dra_manager *m, const ks_objects *o);

/* The objects' slices indexed, with the objects' DeviceTaintRules applied
 * when device_taints (DRADeviceTaints), kept while the objects show the
 * same slices (rules, classes): a reference for the caller. */
ks_dra_slices *ks_dra_manager_slices(ks_dra_manager *m, const ks_objects *o, bool device_taints);

/* Every device allocated by a claim of the objects (as the plugin sees
 * them) or in flight; with caps (DRAConsumableCapacity), what their
 * shares of devices consume. */
void ks_dra_manager_allocated(ks_dra_manager *m, const ks_objects *o, ks_dra_device_set *out, ks_dra_capacities *caps);

#endif
