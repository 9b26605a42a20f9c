/* Typed decoders: a document tree (codec/tree.h) of a Kubernetes object
 * into the object model (src/api), with upstream's defaulting, interning
 * and per-object precomputation. The manifest loader and the API server
 * client both decode through these.
 *
 * Decoding is lenient about fields the scheduler does not read (status,
 * managedFields and the rest of a `kubectl get -o yaml` dump pass through)
 * and strict about the values of the fields it does read: a wrong type,
 * an invalid quantity or selector operator is an error. Errors are
 * appended to ctx->errs as
 *
 *     FILE:LINE: KIND NAMESPACE/NAME: FIELD.PATH[i]: message
 *
 * (":LINE" left out when the tree has no lines, as for JSON) and the
 * object is not returned. See docs/manifests.md. */
#ifndef KS_DECODE_H
#define KS_DECODE_H

#include "api/cluster.h"
#include "codec/errors.h"
#include "codec/tree.h"

typedef struct ks_decode_ctx {
    const char *file;     /* name used in messages (may be NULL) */
    /* The arena the tree lives in. When set, decoded objects reference it
     * (keep the tree and point their strings into it); when NULL they copy
     * what they keep and have no tree. */
    ks_docref *doc;
    uint32_t next_input_index; /* given to each decoded object, then bumped */
    ks_errors *errs;
} ks_decode_ctx;

/* One object of the given kind; NULL (errors appended) when invalid. */
ks_pod *ks_decode_pod(const ks_tree *t, ks_decode_ctx *ctx);
ks_node *ks_decode_node(const ks_tree *t, ks_decode_ctx *ctx);
ks_priority_class *ks_decode_priority_class(const ks_tree *t, ks_decode_ctx *ctx);
ks_namespace *ks_decode_namespace(const ks_tree *t, ks_decode_ctx *ctx);
ks_pv *ks_decode_pv(const ks_tree *t, ks_decode_ctx *ctx);
ks_pvc *ks_decode_pvc(const ks_tree *t, ks_decode_ctx *ctx);
ks_storage_class *ks_decode_storage_class(const ks_tree *t, ks_decode_ctx *ctx);
ks_csinode *ks_decode_csinode(const ks_tree *t, ks_decode_ctx *ctx);
ks_csi_driver *ks_decode_csi_driver(const ks_tree *t, ks_decode_ctx *ctx);
ks_csi_capacity *ks_decode_csi_capacity(const ks_tree *t, ks_decode_ctx *ctx);
ks_volume_attachment *ks_decode_volume_attachment(const ks_tree *t, ks_decode_ctx *ctx);
ks_pdb *ks_decode_pdb(const ks_tree *t, ks_decode_ctx *ctx);
ks_pod_group *ks_decode_pod_group(const ks_tree *t, ks_decode_ctx *ctx);
/* resource.k8s.io (v1, v1beta2, v1beta1) */
ks_resource_claim *ks_decode_resource_claim(const ks_tree *t, ks_decode_ctx *ctx);
ks_claim_template *ks_decode_claim_template(const ks_tree *t, ks_decode_ctx *ctx);
ks_resource_slice *ks_decode_resource_slice(const ks_tree *t, ks_decode_ctx *ctx);
ks_device_class *ks_decode_device_class(const ks_tree *t, ks_decode_ctx *ctx);
ks_device_taint_rule *ks_decode_device_taint_rule(const ks_tree *t, ks_decode_ctx *ctx);
/* Service, ReplicaSet, StatefulSet, ReplicationController. */
ks_workload *ks_decode_workload(const ks_tree *t, ks_workload_kind kind, ks_decode_ctx *ctx);

/* Any document: dispatch on `kind` (List and *List kinds recurse into
 * their items), append what it holds to c. Unknown kinds are skipped with
 * a note at -v=2. Returns false when anything was invalid (errors
 * appended; valid objects of the document are still added). */
bool ks_decode_document(ks_cluster *c, const ks_tree *t, ks_decode_ctx *ctx);

/* Load manifests: each path is a file, a directory (searched recursively
 * for *.yaml, *.yml and *.json, in sorted order) or "-" for stdin. All
 * objects are decoded and admitted (priority from PriorityClasses) into a
 * scratch cluster first; only when no error at all was found are they
 * moved into c, so c is never half-loaded. Returns false with every
 * problem in errs. */
bool ks_load_paths(ks_cluster *c, const char *const *paths, size_t n, ks_errors *errs);
/* The same for a buffer already in memory (name used in messages). */
bool ks_load_buffer(ks_cluster *c, const char *name, const char *buf, size_t len, ks_errors *errs);

#endif
