/* Internal helpers behind the public plugin API (src/framework/plugin_api.c). */
#ifndef KS_PLUGIN_API_H
#define KS_PLUGIN_API_H

#include "api/objects.h"
#include "codec/tree.h"

/* A PodGroup as the tree plugins read through ks_handle_get_object:
 * {apiVersion, kind, metadata: {name, namespace, creationTimestamp},
 *  spec: {minMember, minResources, scheduleTimeoutSeconds}}. The decoded
 * source is used when the decoder kept it; otherwise the tree is built
 * once from the typed fields (in the object's arena). */
const ks_tree *ks_pod_group_tree(const ks_pod_group *pg);

/* True when pod is in namespace ns and has label key=value (KS_ID_INVALID
 * ns or key: any), as ks_handle_list_pods selects. */
bool ks_pod_matches(const ks_pod *p, ks_id ns, ks_id key, ks_id value);

#endif
