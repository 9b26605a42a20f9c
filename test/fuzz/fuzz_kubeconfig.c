/* kubeconfig files: the input is the file --kubeconfig names (clusters,
 * users, contexts, current-context, exec plugins, base64 data, relative
 * paths). Loading resolves it or refuses it with a message; a resolved
 * config is copied and freed. Nothing is executed or connected to at
 * load time. The environment that would change the resolution
 * ($KUBECONFIG, the in-cluster variables) is cleared first. */
#include "fuzz.h"

#include "kube/kubeconfig.h"
#include "util/log.h"

#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        unsetenv("KUBECONFIG");
        unsetenv("KUBERNETES_SERVICE_HOST");
        unsetenv("KUBERNETES_SERVICE_PORT");
        ks_log_set_verbosity(0);
        /* one in-memory file, rewritten for each input */
        fd = memfd_create("kubeconfig", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    static const char *const contexts[] = {NULL, "fuzz"};
    for (int i = 0; i < 2; i++) {
        ks_kube_config kc;
        memset(&kc, 0, sizeof(kc));
        char *err = NULL;
        if (ks_kube_config_load(path, contexts[i], i ? "https://127.0.0.1:1" : NULL, &kc, &err)) {
            FZ_CHECK(kc.server && *kc.server, "resolved without a server");
            ks_kube_config copy;
            ks_kube_config_copy(&copy, &kc);
            ks_kube_config_free(&copy);
            ks_kube_config_free(&kc);
        } else {
            FZ_CHECK(err != NULL, "refused without a message");
        }
        free(err);
    }
    return 0;
}
