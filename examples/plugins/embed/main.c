/* A custom scheduler binary: ksched with a plugin compiled in.
 *
 * The C version of upstream's
 *
 *     command := app.NewSchedulerCommand(app.WithPlugin(Name, New))
 *
 * Link libksched, register plugins on the default registry, then hand the
 * command line to ks_main(): the result is ksched (simulate, run,
 * check-config, ...) that knows one more plugin, which configurations
 * enable like any other. --plugin still loads further .so files.
 *
 * Build against an installed ksched:
 *
 *     cc $(pkg-config --cflags ksched) main.c -o my-scheduler $(pkg-config --libs ksched)
 *
 * (add -Wl,-rpath,$(pkg-config --variable=libdir ksched) when libksched.so
 * is not on the loader's path). */
#include <ksched/ksched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* AvoidSpotNodes: keep pods off spot instances unless they say they can
 * live with them (label tolerates-spot=true). */
static ks_status *avoid_spot_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                    const ks_node_info *ni) {
    (void)self, (void)st;
    const ks_node *node = ks_node_info_node(ni);
    const char *lifecycle = node ? ks_node_label(node, "node.kubernetes.io/lifecycle") : NULL;
    if (!lifecycle || strcmp(lifecycle, "spot") != 0) return NULL;
    const char *ok = ks_pod_label(pod, "tolerates-spot");
    if (ok && strcmp(ok, "true") == 0) return NULL;
    return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were spot instances");
}

static const ks_plugin_ops avoid_spot = {
    .abi_version = KS_ABI_VERSION,
    .name = "AvoidSpotNodes",
    .filter = avoid_spot_filter,
};

int main(int argc, char **argv) {
    char *err = NULL;
    if (!ks_registry_add(ks_default_registry(), &avoid_spot, &err)) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return 2;
    }
    return ks_main(argc, argv);
}
