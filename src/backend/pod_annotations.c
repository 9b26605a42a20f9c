/* ks_handle_patch_pod_annotations: a plugin's pod annotations, written at
 * PreBind as one typed call (KS_CALL_POD_ANNOTATIONS) through the
 * scheduler's write path, the way VolumeBinding and DynamicResources
 * issue their PreBind writes. Lives above the framework because the call
 * type is the backend's. */
#include "api/validation.h"
#include "backend/api_calls.h"
#include "framework/handle.h"
#include "framework/status.h"

#include <ksched/ksched.h>

/* Bounds a plugin's request: a handful of keys is the use (open-gpu-share
 * writes two). */
#define MAX_ANNOTATIONS 64

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
    ks_annotation_patch m = {.keys = keys, .values = values, .n = n};
    ks_api_call call = {.type = KS_CALL_POD_ANNOTATIONS, .pod = pod, .annotations = &m};
    return ks_handle_api_call(h, &call);
}
