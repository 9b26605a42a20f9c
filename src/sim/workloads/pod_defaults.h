/* API server defaulting of a pod template (pkg/apis/core/v1 defaults, as
 * the generated defaulters apply them to a workload's spec.template), on a
 * document tree. The pod-level defaults (SetDefaults_Pod: requests from
 * limits, enableServiceLinks, host ports) are the pod decoder's. */
#ifndef KS_WL_DEFAULTS_H
#define KS_WL_DEFAULTS_H

#include "codec/tree.h"
#include "util/arena.h"

/* A defaulted deep copy of tmpl (a PodTemplateSpec) in a. */
ks_tree *wl_default_template(ks_arena *a, const ks_tree *tmpl);

/* Helpers for building objects (tree.h's, with the key's line kept). */
ks_tree *wl_map_child(ks_arena *a, ks_tree *m, const char *key); /* get or add an empty map */
void wl_set_str(ks_arena *a, ks_tree *m, const char *key, const char *val);

#endif
