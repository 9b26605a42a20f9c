/* The hashes kube-controller-manager names workloads' objects with,
 * computed over a pod template tree already defaulted as the API server
 * defaults it (wl_default_template):
 *
 * - pod-template-hash (Deployment → ReplicaSet name and label):
 *   controller.ComputeHash, FNV-32a over go-spew's rendering of the Go
 *   v1.PodTemplateSpec, then collisionCount, rendered with
 *   rand.SafeEncodeString;
 * - the StatefulSet's revision (its pods' controller-revision-hash is
 *   <set>-<this>): history.HashControllerRevision, FNV-32 over the
 *   revision's patch {"spec":{"template":{"$patch":"replace",...}}} (Go
 *   JSON, keys sorted), then the collision count in decimal (the
 *   controller passes 0 when status.collisionCount is unset). A
 *   DaemonSet's controller-revision-hash is the pod-template-hash.
 *
 * The controller reads the template back from the API server (protobuf),
 * so quantities are as Quantity.String() prints them and empty lists and
 * maps are absent; both renderings follow that. */
#ifndef KS_WL_TEMPLATE_HASH_H
#define KS_WL_TEMPLATE_HASH_H

#include "codec/tree.h"
#include "util/strbuf.h"

#include <stdint.h>

/* go-spew "%#v" of the template (for tests). */
void wl_spew_template(ks_strbuf *out, const ks_tree *tmpl);
/* The Go JSON of the template with sorted keys (the revision patch body). */
void wl_json_template(ks_strbuf *out, const ks_tree *tmpl);

/* collision_count < 0: none. buf at least 11 bytes. */
void wl_pod_template_hash(const ks_tree *tmpl, int64_t collision_count, char *buf);
/* collision_count < 0: no probe (history's own tests); the StatefulSet
 * controller always passes one. */
void wl_revision_hash(const ks_tree *tmpl, int64_t collision_count, char *buf);

/* rand.SafeEncodeString: each byte mapped into consonants and digits. */
void wl_safe_encode(const char *s, char *out);

#endif
