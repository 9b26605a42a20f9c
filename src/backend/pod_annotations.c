/* ks_handle_patch_pod_annotations: a plugin's pod annotations, written at
 * PreBind as one object write (KS_CALL_OBJECT_WRITE) through the
 * scheduler's write path, the way VolumeBinding and DynamicResources
 * issue theirs: a strategic-merge PATCH of the pod's metadata, as a
 * client-go plugin patching its pod sends it (a null value removes the
 * key), and the same annotations on the stored pod in memory. Lives above
 * the framework because the call type is the backend's. */
#include "api/validation.h"
#include "backend/api_calls.h"
#include "framework/handle.h"
#include "framework/status.h"

#include <jansson.h>
#include <ksched/ksched.h>
#include <string.h>

/* Bounds a plugin's request: a handful of keys is the use (open-gpu-share
 * writes two). */
#define MAX_ANNOTATIONS 64

typedef struct annotations {
    const char *const *keys;
    const char *const *values; /* NULL: remove the key */
    size_t n;
} annotations;

static json_t *patch_body(const ks_object_write *w) {
    const annotations *m = w->arg;
    json_t *ann = json_object();
    for (size_t i = 0; i < m->n; i++)
        json_object_set_new(ann, m->keys[i], m->values[i] ? json_string(m->values[i]) : json_null());
    return json_pack("{s:{s:o}}", "metadata", "annotations", ann);
}

/* The stored pod with the annotations (kept sorted by key). */
static void *apply(const void *cur_, const ks_object_write *w, ks_status **err) {
    const ks_pod *cur = cur_;
    const annotations *m = w->arg;
    (void)err;
    size_t room = (cur->annotations.n + m->n) * sizeof(ks_annotation) + 64;
    for (size_t i = 0; i < m->n; i++) room += m->values[i] ? strlen(m->values[i]) + 1 : 0;
    ks_pod *np = ks_pod_clone_room(cur, room);
    ks_annotations a = {0, ks_arena_calloc(np->arena, cur->annotations.n + m->n, sizeof(ks_annotation))};
    for (uint32_t i = 0; i < cur->annotations.n; i++) a.kv[a.n++] = cur->annotations.kv[i];
    for (size_t i = 0; i < m->n; i++) {
        ks_id key = ks_intern(m->keys[i]);
        uint32_t j = 0;
        while (j < a.n && a.kv[j].key != key) j++;
        if (!m->values[i]) {
            if (j < a.n) a.kv[j] = a.kv[--a.n];
            continue;
        }
        if (j == a.n) a.n++;
        a.kv[j] = (ks_annotation){key, ks_arena_strdup(np->arena, m->values[i])};
    }
    ks_annotations_sort(&a);
    np->annotations = a;
    return np;
}

static const ks_call_rules rules = {.name = "pod_annotations_patch"};

ks_status *ks_handle_patch_pod_annotations(ks_handle *h, const ks_pod *pod, const char *const *keys,
                                           const char *const *values, size_t n) {
    if (!h || !pod || (n && (!keys || !values)))
        return ks_status_new(KS_ERROR, "patching annotations: no handle, pod or keys");
    if (n > MAX_ANNOTATIONS)
        return ks_status_new(KS_ERROR, "patching annotations: %zu keys, at most %d", n, MAX_ANNOTATIONS);
    for (size_t i = 0; i < n; i++) {
        const char *msgs[4];
        if (!keys[i] || ks_valid_qualified_name(keys[i], msgs))
            return ks_status_new(KS_ERROR, "patching annotations: invalid key \"%s\"", keys[i] ? keys[i] : "");
    }
    if (!n) return NULL;
    annotations m = {.keys = keys, .values = values, .n = n};
    char who[300];
    ks_object_write w = {.kind = "Pod",
                         .ns = ks_str(pod->ns),
                         .name = ks_str(pod->name),
                         .verb = KS_WRITE_STRATEGIC_PATCH,
                         .patch = patch_body,
                         .apply = apply,
                         .action = "annotating",
                         .noun = ks_pod_fullname(pod, who, sizeof(who)),
                         .arg = &m};
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .pod = pod, .write = &w, .rules = &rules};
    ks_status *st = ks_handle_api_call(h, &call);
    /* not made (a shadow, an embedder): nothing to report */
    if (ks_status_code(st) == KS_SKIP) {
        ks_status_free(st);
        return NULL;
    }
    return st;
}
