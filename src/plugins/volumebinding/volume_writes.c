/* VolumeBinding's writes: see volume_writes.h. */
#include "plugins/volumebinding/volume_writes.h"

#include "framework/status.h"
#include "util/clock.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* ---- the REST form: edits of the object as the API server shows it ---------- */

/* upstream BindVolumeToClaim: claimRef and the bound-by-controller
 * annotation on the PV. */
static ks_status *set_claim_ref(json_t *o, const ks_object_write *w) {
    const ks_volume_binding *b = w->arg;
    const ks_pvc *pvc = b->pvc;
    json_t *spec = json_object_get(o, "spec");
    if (!spec) json_object_set_new(o, "spec", spec = json_object());
    json_object_set_new(spec, "claimRef",
                        json_pack("{s:s, s:s, s:s, s:s, s:s?}", "kind", "PersistentVolumeClaim", "apiVersion", "v1",
                                  "namespace", ks_str(pvc->ns), "name", ks_str(pvc->name), "uid", pvc->uid));
    json_t *md = json_object_get(o, "metadata");
    json_t *ann = json_object_get(md, "annotations");
    if (!ann) json_object_set_new(md, "annotations", ann = json_object());
    json_object_set_new(ann, "pv.kubernetes.io/bound-by-controller", json_string("yes"));
    return NULL;
}

static ks_status *set_selected_node(json_t *o, const ks_object_write *w) {
    const ks_volume_binding *b = w->arg;
    json_t *md = json_object_get(o, "metadata");
    json_t *ann = json_object_get(md, "annotations");
    if (!ann) json_object_set_new(md, "annotations", ann = json_object());
    json_object_set_new(ann, "volume.kubernetes.io/selected-node", json_string(ks_str(b->selected_node)));
    return NULL;
}

/* The PV controller has bound the claim. */
static bool claim_bound(const void *obj, const ks_object_write *w) {
    const ks_pvc *cur = obj;
    (void)w;
    return cur && cur->volume_name && cur->volume_name != ks_intern("");
}

/* ---- the in-memory form: new versions of the decoded objects ---------------- */

/* A copy of a label set with key set to value (kept sorted). */
static ks_labels labels_with(ks_arena *a, const ks_labels *in, const char *key, const char *value) {
    ks_id k = ks_intern(key), v = ks_intern(value);
    ks_labels out = {0, ks_arena_calloc(a, in->n + 1, sizeof(ks_label))};
    for (uint32_t i = 0; i < in->n; i++)
        if (in->kv[i].key != k) out.kv[out.n++] = in->kv[i];
    out.kv[out.n++] = (ks_label){k, v};
    ks_labels_sort(&out);
    return out;
}

static void pv_unref(void *p) {
    ks_pv *o = p;
    KS_OBJECT_UNREF(o);
}

static void pvc_unref(void *p) {
    ks_pvc *o = p;
    KS_OBJECT_UNREF(o);
}

/* New versions of a PV and a claim: the objects are immutable, the copies
 * live in arenas of their own and keep the original (whose arena their
 * fields point into) and the source document alive. */
static ks_pv *pv_copy(const ks_pv *o) {
    ks_arena *a = ks_arena_new(512);
    ks_pv *n = ks_arena_alloc(a, sizeof(*n));
    *n = *o;
    n->arena = a;
    atomic_init(&n->refs, 0);
    n->base = KS_OBJECT_REF((ks_pv *)o);
    n->base_unref = pv_unref;
    n->doc = o->doc ? ks_docref_ref(o->doc) : NULL;
    return n;
}

static ks_pvc *pvc_copy(const ks_pvc *o) {
    ks_arena *a = ks_arena_new(512);
    ks_pvc *n = ks_arena_alloc(a, sizeof(*n));
    *n = *o;
    n->arena = a;
    atomic_init(&n->refs, 0);
    n->base = KS_OBJECT_REF((ks_pvc *)o);
    n->base_unref = pvc_unref;
    n->doc = o->doc ? ks_docref_ref(o->doc) : NULL;
    return n;
}

/* The update, and the phase the PV controller then gives it (one version,
 * as the in-memory cluster has always shown it). */
static void *pv_bound(const void *cur, const ks_object_write *w, ks_status **err) {
    const ks_pvc *claim = ((const ks_volume_binding *)w->arg)->pvc;
    (void)err;
    ks_pv *pv = pv_copy(cur);
    char uid[512];
    if (claim->uid && *claim->uid) snprintf(uid, sizeof uid, "%s", claim->uid);
    else snprintf(uid, sizeof uid, "uid-persistentvolumeclaim-%s/%s", ks_str(claim->ns), ks_str(claim->name));
    pv->has_claim_ref = true;
    pv->claim_ns = claim->ns;
    pv->claim_name = claim->name;
    pv->claim_uid = ks_arena_strdup(pv->arena, uid);
    pv->phase = ks_intern("Bound");
    pv->annotations = labels_with(pv->arena, &pv->annotations, "pv.kubernetes.io/bound-by-controller", "yes");
    return pv;
}

/* The PV controller's answer: the claim bound to the PV (bind-completed). */
static void *claim_bound_to_pv(const void *cur, const ks_object_write *w, ks_status **err) {
    const ks_volume_binding *b = w->arg;
    (void)err;
    ks_pvc *claim = pvc_copy(cur);
    claim->volume_name = b->pv->name;
    claim->phase = ks_intern("Bound");
    claim->annotations = labels_with(claim->arena, &claim->annotations, "pv.kubernetes.io/bind-completed", "yes");
    claim->annotations = labels_with(claim->arena, &claim->annotations, "pv.kubernetes.io/bound-by-controller", "yes");
    return claim;
}

/* A claim to provision gets the selected node, and stays so: no
 * provisioner runs in memory. */
static void *claim_selected(const void *cur, const ks_object_write *w, ks_status **err) {
    const ks_volume_binding *b = w->arg;
    (void)err;
    ks_pvc *claim = pvc_copy(cur);
    claim->annotations = labels_with(claim->arena, &claim->annotations, "volume.kubernetes.io/selected-node",
                                     ks_str(b->selected_node));
    return claim;
}

/* ---- the calls --------------------------------------------------------------- */

static const ks_call_rules rules = {.name = "volume_binding"};

static ks_status *make(ks_object_write *w, const ks_pod *pod, ks_volume_exec exec, void *ctx) {
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .pod = pod, .write = w, .rules = &rules};
    return exec(ctx, &call);
}

ks_status *ks_volume_bindings_write(const ks_pod *pod, const ks_volume_binding *b, size_t n, int64_t timeout_ms,
                                    ks_volume_exec exec, void *ctx) {
    int64_t deadline = ks_monotonic_ns() + timeout_ms * 1000000;
    for (size_t i = 0; i < n; i++) {
        char ns[256];
        snprintf(ns, sizeof ns, "%s", ks_str(b[i].pvc->ns));
        ks_object_write claim = {.kind = "PersistentVolumeClaim",
                                 .ns = ns,
                                 .name = ks_str(b[i].pvc->name),
                                 .verb = KS_WRITE_UPDATE,
                                 .action = "update",
                                 .arg = &b[i]};
        ks_status *st;
        if (b[i].pv) {
            ks_object_write pv = {.kind = "PersistentVolume",
                                  .name = ks_str(b[i].pv->name),
                                  .verb = KS_WRITE_UPDATE,
                                  .edit = set_claim_ref,
                                  .apply = pv_bound,
                                  .action = "update",
                                  .arg = &b[i]};
            st = make(&pv, pod, exec, ctx);
            claim.controller = true;
            claim.apply = claim_bound_to_pv;
            if (!st) st = make(&claim, pod, exec, ctx);
        } else {
            claim.edit = set_selected_node;
            claim.apply = claim_selected;
            st = make(&claim, pod, exec, ctx);
        }
        if (st) return st;
    }
    /* upstream polls every second; the client wakes on the claim's watch
     * event, so the answer is the same, up to a second sooner */
    for (size_t i = 0; i < n; i++) {
        int64_t left = (deadline - ks_monotonic_ns()) / 1000000;
        ks_object_write wait = {.kind = "PersistentVolumeClaim",
                                .ns = ks_str(b[i].pvc->ns),
                                .name = ks_str(b[i].pvc->name),
                                .verb = KS_WRITE_AWAIT,
                                .until = claim_bound,
                                .timeout_ms = left > 0 ? left : 0,
                                .arg = &b[i]};
        ks_status *st = make(&wait, pod, exec, ctx);
        if (!st) continue;
        ks_status_free(st);
        char buf[300];
        return ks_status_new(KS_ERROR, "binding volumes: timed out waiting for the condition (pod %s)",
                             ks_pod_fullname(pod, buf, sizeof(buf)));
    }
    return NULL;
}
