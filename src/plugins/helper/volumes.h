/* Storage lookups shared by the volume plugins: PVCs, PVs, StorageClasses
 * and CSINodes of the object store by name, and the small upstream helpers
 * around them (the claim's class, ephemeral claim ownership, the
 * "not found" texts of the API server). Everything here only reads. */
#ifndef KS_PLUGINS_HELPER_VOLUMES_H
#define KS_PLUGINS_HELPER_VOLUMES_H

#include "api/objects.h"
#include "api/pod.h"
#include "util/arena.h"
#include "util/hash.h"

#include <stdbool.h>

/* NULL when c is NULL or the object does not exist (the loader refuses
 * duplicate names). */
const ks_pvc *ks_vol_pvc(const ks_objects *c, ks_id ns, const char *name);
const ks_pv *ks_vol_pv(const ks_objects *c, ks_id name);
const ks_storage_class *ks_vol_class(const ks_objects *c, ks_id name);
const ks_csinode *ks_vol_csinode(const ks_objects *c, ks_id name);
const ks_csi_driver *ks_vol_csi_driver(const ks_objects *c, const char *name);

/* Maps from names to PVCs and PVs for plugins that look many up per cycle
 * (built from the store in PreFilter, read-only, so Filter may use it from
 * any thread). */
typedef struct ks_vol_index {
    const ks_objects *c;
    ks_map pvcs; /* ((ns << 32) | name) + 1 -> ks_pvc* */
    ks_map pvs;  /* name + 1 -> ks_pv* */
    ks_map csinodes; /* name + 1 -> ks_csinode* */
} ks_vol_index;

ks_vol_index *ks_vol_index_new(const ks_objects *c);
void ks_vol_index_free(void *idx);
const ks_pvc *ks_vol_index_pvc(const ks_vol_index *x, ks_id ns, const char *name);
const ks_pv *ks_vol_index_pv(const ks_vol_index *x, ks_id name);
const ks_csinode *ks_vol_index_csinode(const ks_vol_index *x, ks_id name);

/* The claim's class (GetPersistentVolumeClaimClass): the beta annotation
 * first, then spec.storageClassName; "" (KS_ID_NONE) when neither. */
ks_id ks_vol_pvc_class(const ks_pvc *pvc);
/* The PV's class (GetPersistentVolumeClass): beta annotation first. */
ks_id ks_vol_pv_class(const ks_pv *pv);
/* Annotations, NULL when absent. */
const char *ks_vol_pvc_annotation(const ks_pvc *pvc, const char *key);
const char *ks_vol_csinode_annotation(const ks_csinode *cn, const char *key);
/* metadata.uid, or what the API server (and the reference harness) gives
 * an object without one: "uid-<kind>-<ns>/<name>". */
const char *ks_vol_pvc_uid(const ks_pvc *pvc, char *buf, int n);
const char *ks_vol_pod_uid(const ks_pod *pod, char *buf, int n);
/* ephemeral.VolumeIsForPod: the claim is in the pod's namespace and its
 * controller owner reference has the pod's uid. */
bool ks_vol_pvc_is_for_pod(const ks_pvc *pvc, const ks_pod *pod);

/* CSI migration (csi-translation-lib): the in-tree plugin of a volume
 * source kind ("kubernetes.io/gce-pd", ...), NULL when csi-translation-lib
 * does not know it; the CSI driver an in-tree plugin name migrates to,
 * NULL when the name is not one of them. */
const char *ks_vol_kind_plugin(ks_volume_kind kind);
const char *ks_vol_intree_csi_driver(const char *plugin);
/* A PV's node affinity (has false: none). */
typedef struct ks_vol_affinity {
    bool has;
    ks_node_selector sel;
} ks_vol_affinity;
/* TranslateInTreePVToCSI for a PV with an in-tree source: the CSI volume
 * handle and (aff non-NULL) the translated node affinity, in arena a.
 * False with *err (malloc'd) when translation fails. */
bool ks_vol_pv_to_csi(ks_arena *a, const ks_pv *pv, const char **handle, ks_vol_affinity *aff, char **err);
/* TranslateInTreeInlineVolumeToCSI's volume handle for an inline in-tree
 * volume; NULL with *err (malloc'd) when translation fails. */
const char *ks_vol_inline_csi_handle(ks_arena *a, const ks_volume *v, char **err);
/* isCSIMigrationOn: migration of the plugin is on in v1.34 and the node's
 * CSINode lists it in storage.alpha.kubernetes.io/migrated-plugins. */
bool ks_vol_migration_on(const ks_csinode *cn, const char *plugin);

#endif
