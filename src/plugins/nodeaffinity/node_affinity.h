/* NodeAffinity internals shared with other in-tree plugins and tests. */
#ifndef KS_PLUGINS_NODE_AFFINITY_H
#define KS_PLUGINS_NODE_AFFINITY_H

#include "api/node.h"
#include "api/pod.h"
#include "util/arena.h"

#include <ksched/ksched.h>

/* Upstream RequiredNodeAffinity.Match: the pod's nodeSelector and its
 * required node affinity terms (not the plugin's addedAffinity). */
bool ks_node_affinity_required_matches(const ks_pod *pod, const ks_node *node);

/* NodeAffinityArgs: addedAffinity.{required,preferred}. */
typedef struct ks_node_affinity_args {
    bool has_required;
    ks_node_selector required;
    uint32_t npreferred;
    ks_preferred_node_term *preferred;
} ks_node_affinity_args;

/* Parse (args NULL = no addedAffinity) into memory of arena. Returns false
 * with *err (malloc'd) on invalid terms, as upstream's validation. */
bool ks_node_affinity_args_parse(const ks_args *args, ks_arena *arena, ks_node_affinity_args *out,
                                 char **err);

#endif
