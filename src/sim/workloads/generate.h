/* Shared by the controllers (controllers.c): building and decoding the
 * objects one workload creates. Everything built lives in the context's
 * arena, which the decoded objects keep (their document). */
#ifndef KS_WL_GENERATE_H
#define KS_WL_GENERATE_H

#include "codec/tree.h"
#include "sim/workloads/workloads.h"
#include "util/hash.h"

typedef struct wl_ctx {
    const ks_workload *w;
    const ks_cluster *c;
    const ks_wl_options *o;
    ks_wl_objects *out;
    ks_errors *errs;
    ks_arena *a;
    ks_docref *doc;
    const char *ns, *name, *uid; /* the workload's */
    const char *file;
    int line;
    uint64_t rng;   /* generated names: seeded by --seed and the workload */
    ks_map taken;   /* hashes of "ns/name" of every pod, existing or made */
} wl_ctx;

void wl_ctx_init(wl_ctx *x, const ks_workload *w, const ks_cluster *c, const ks_wl_options *o,
                 ks_wl_objects *out, ks_errors *errs);
void wl_ctx_fini(wl_ctx *x);

/* An error about the workload: "FILE:LINE: KIND NS/NAME: message". */
void wl_error(wl_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A uid for an object the controllers create (deterministic). */
const char *wl_uid(wl_ctx *x, const char *kind, const char *name);
/* The API server's generateName: prefix (cut to 58) + 5 random characters
 * no pod of the namespace has. */
const char *wl_generate_name(wl_ctx *x, const char *prefix);
bool wl_name_taken(wl_ctx *x, const char *name);
/* controller.getPodsPrefix */
const char *wl_prefix(wl_ctx *x, const char *controller_name);
/* [ {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true} ] */
ks_tree *wl_owner_ref(wl_ctx *x, const char *api_version, const char *kind, const char *name, const char *uid);
const char *wl_now_text(wl_ctx *x);
/* {apiVersion, kind, metadata: {name, generateName, namespace, uid, creationTimestamp}} */
ks_tree *wl_object(wl_ctx *x, const char *api_version, const char *kind, const char *name,
                   const char *generate_name, const char *uid);
/* controller.GetPodFromTemplate: labels, annotations, finalizers and spec
 * of the (defaulted) template, the owner references given. */
ks_tree *wl_pod_tree(wl_ctx *x, const ks_tree *tmpl, const char *name, const char *generate_name,
                     ks_tree *owner_refs);
ks_tree *wl_labels(wl_ctx *x, ks_tree *tmpl);
int32_t wl_int(const ks_tree *t, const char *key, int32_t dflt);

/* Decode (and, for pods, admit) what was built; NULL with errors. */
ks_pod *wl_decode_pod(wl_ctx *x, const ks_tree *t);
ks_workload *wl_decode_workload(wl_ctx *x, const ks_tree *t, ks_workload_kind kind);
ks_pvc *wl_decode_pvc(wl_ctx *x, const ks_tree *t);

/* NodeShouldRunDaemonPod: whether the DaemonSet controller puts a pod of
 * probe (its template with the DaemonSet tolerations) on n. */
bool wl_daemon_targets(const ks_pod *probe, const ks_node *n);

#endif
