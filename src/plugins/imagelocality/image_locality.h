#ifndef KS_PLUGINS_IMAGE_LOCALITY_H
#define KS_PLUGINS_IMAGE_LOCALITY_H

#include "framework/nodeinfo.h"

/* The raw ImageLocality score of a node among total_nodes nodes. */
int64_t ks_image_locality_score(const ks_node_info *ni, const ks_pod *pod, int64_t total_nodes);

#endif
