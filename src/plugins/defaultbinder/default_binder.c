/* DefaultBinder: bind the pod to the chosen node through the backend
 * (a Binding subresource against a kube-apiserver, an in-memory update in
 * the simulator). */
#include "api/pod.h"

#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdlib.h>

typedef struct default_binder {
    ks_handle *handle;
} default_binder;

static void *create(const ks_args *args, ks_handle *h, char **err) {
    default_binder *pl = ks_xcalloc(1, sizeof(*pl));
    pl->handle = h;
    return pl;
}

static void destroy(void *self) { free(self); }

static ks_status *bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    ks_handle *h = ((default_binder *)self)->handle;
    if (ks_log_enabled(3))
        ks_logf(3, "\"Attempting to bind pod to node\" pod=\"%s/%s\" node=\"%s\"",
                ks_str(pod->ns), ks_str(pod->name), node);
    return ks_handle_bind(h, pod, node);
}

const ks_plugin_ops ks_plugin_default_binder = {
    .abi_version = KS_ABI_VERSION,
    .name = "DefaultBinder",
    .create = create,
    .destroy = destroy,
    .bind = bind,
};
