/* ksched load PATH...: decode manifests and print what was loaded. */
#include "api/quantity.h"
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "codec/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_resources(const char *label, const ks_resource *r, const ks_resource *of) {
    char a[64], b[64];
    printf("%-13s", label);
    ks_quantity_format_milli(r->milli_cpu, a, sizeof(a));
    printf(" cpu %s", a);
    if (of && of->milli_cpu) printf(" (%d%%)", (int)(r->milli_cpu * 100 / of->milli_cpu));
    ks_quantity_format_bytes(r->memory, b, sizeof(b));
    printf(", memory %s", b);
    if (of && of->memory) printf(" (%d%%)", (int)(r->memory * 100 / of->memory));
    printf(", pods %lld", (long long)r->allowed_pods);
    if (r->ephemeral_storage) {
        ks_quantity_format_bytes(r->ephemeral_storage, b, sizeof(b));
        printf(", ephemeral-storage %s", b);
    }
    for (uint32_t i = 0; i < r->nscalar; i++)
        printf(", %s %lld", ks_str(r->scalars[i].name), (long long)r->scalars[i].val);
    printf("\n");
}

static void summary(const ks_cluster *c) {
    uint32_t unsched = 0, tainted = 0;
    ks_resource alloc = {0};
    for (uint32_t i = 0; i < c->nodes.n; i++) {
        const ks_node *n = c->nodes.v[i];
        unsched += n->unschedulable;
        tainted += n->ntaints > 0;
        ks_resource_add(&alloc, NULL, &n->allocatable);
    }
    uint32_t bound = 0, pending = 0, done = 0, gated = 0;
    ks_resource req = {0};
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        bool terminal = p->phase == KS_PHASE_SUCCEEDED || p->phase == KS_PHASE_FAILED;
        if (terminal) {
            done++;
        } else if (p->node_name != KS_ID_NONE) {
            bound++;
            ks_resource_add(&req, NULL, &p->requests);
            req.allowed_pods++;
        } else {
            pending++;
            gated += p->ngates > 0;
        }
    }
    printf("nodes:        %u", c->nodes.n);
    if (unsched || tainted) printf(" (%u unschedulable, %u tainted)", unsched, tainted);
    printf("\npods:         %u (%u running, %u pending", c->pods.n, bound, pending);
    if (gated) printf(" of which %u gated", gated);
    printf(", %u finished)\n", done);
    print_resources("allocatable:", &alloc, NULL);
    print_resources("requested:", &req, &alloc);
    ks_resource_fini(&alloc);
    ks_resource_fini(&req);
    struct {
        const char *kind;
        uint32_t n;
    } kinds[] = {
        {"PriorityClass", c->priority_classes.n}, {"Namespace", c->namespaces.n},
        {"PersistentVolume", c->pvs.n},           {"PersistentVolumeClaim", c->pvcs.n},
        {"StorageClass", c->storage_classes.n},   {"CSINode", c->csinodes.n},
        {"CSIDriver", c->csi_drivers.n},         {"CSIStorageCapacity", c->csi_capacities.n},
        {"VolumeAttachment", c->volume_attachments.n},
        {"PodDisruptionBudget", c->pdbs.n},       {"PodGroup", c->pod_groups.n},
    };
    uint32_t wk[KS_WORKLOAD_NKINDS] = {0};
    for (uint32_t i = 0; i < c->workloads.n; i++) wk[c->workloads.v[i]->kind]++;
    printf("objects:     ");
    bool any = false;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (!kinds[i].n) continue;
        printf("%s %s %u", any ? "," : "", kinds[i].kind, kinds[i].n);
        any = true;
    }
    for (int i = 0; i < KS_WORKLOAD_NKINDS; i++) {
        if (!wk[i]) continue;
        printf("%s %s %u", any ? "," : "", ks_workload_kind_name((ks_workload_kind)i), wk[i]);
        any = true;
    }
    printf("%s\n", any ? "" : " none");
}

static void usage(FILE *f, const void *arg) {
    fputs("usage: ksched load PATH...\n"
          "  PATH: a YAML or JSON file, a directory (*.yaml, *.yml, *.json, recursively)\n"
          "        or - for stdin. Prints a summary of the cluster; errors go to stderr,\n"
          "        one per line, with exit status 2.\n",
          f);
}

static int load(const char *const *paths, size_t n) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = ks_load_paths(c, paths, n, &errs);
    for (size_t i = 0; i < errs.nw; i++) fprintf(stderr, "warning: %s\n", errs.w[i]);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    if (ok) summary(c);
    ks_errors_free(&errs);
    ks_cluster_free(c);
    return ok ? KS_EXIT_OK : KS_EXIT_BAD_INPUT;
}

int cmd_load(int argc, char **argv) {
    const char **paths = calloc((size_t)argc + 1, sizeof(char *));
    size_t npaths = 0;
    ks_cmd_line cl = {.cmd = "load", .usage = usage, .args = paths, .nargs = &npaths};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc < 0 && !npaths) {
        usage(stderr, NULL);
        rc = KS_EXIT_BAD_INPUT;
    }
    if (rc < 0) rc = load(paths, npaths);
    free(paths);
    return rc;
}
