/* The cluster of a simulation from a live API server or with what-ifs
 * (see live.h). */
#include "cmd/live.h"

#include "cmd/common.h"
#include "codec/decode.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(ks_cli_live *l) {
    size_t need = l->ndrain + l->nremove + l->nadd + 1;
    if (need <= l->cap) return;
    size_t cap = l->cap ? l->cap * 2 : 8;
    while (cap < need) cap *= 2;
    l->drain = ks_xrealloc(l->drain, cap * sizeof(*l->drain));
    l->remove = ks_xrealloc(l->remove, cap * sizeof(*l->remove));
    l->add = ks_xrealloc(l->add, cap * sizeof(*l->add));
    l->count = ks_xrealloc(l->count, cap * sizeof(*l->count));
    l->cap = cap;
}

int ks_cli_live_parse(ks_cli_live *l, int argc, char **argv, int *i, char **err) {
    const char *val = NULL;
    if (ks_cli_value(argc, argv, i, "kubeconfig", &val, err)) {
        l->kubeconfig = val;
    } else if (ks_cli_value(argc, argv, i, "master", &val, err)) {
        l->master = val;
    } else if (ks_cli_value(argc, argv, i, "drain", &val, err)) {
        grow(l);
        if (val) l->drain[l->ndrain++] = val;
    } else if (ks_cli_value(argc, argv, i, "remove-node", &val, err)) {
        grow(l);
        if (val) l->remove[l->nremove++] = val;
    } else if (ks_cli_value(argc, argv, i, "add-node", &val, err)) {
        grow(l);
        if (val) {
            l->add[l->nadd] = val;
            l->count[l->nadd++] = 1;
        }
    } else if (ks_cli_value(argc, argv, i, "count", &val, err)) {
        uint64_t n;
        if (!val) return -1;
        if (!l->nadd) {
            *err = ks_xasprintf("--count goes after the --add-node it counts");
            return -1;
        }
        if (!ks_cli_u64(val, &n) || n < 1 || n > 100000) {
            *err = ks_xasprintf("invalid value for --count: %s (1 to 100000)", val);
            return -1;
        }
        l->count[l->nadd - 1] = (uint32_t)n;
    } else {
        return 0;
    }
    return val ? 1 : -1;
}

bool ks_cli_live_is_live(const ks_cli_live *l) { return l->kubeconfig || l->master; }
bool ks_cli_live_has_whatifs(const ks_cli_live *l) { return l->ndrain || l->nremove || l->nadd; }

static bool list_live(const ks_cli_live *l, ks_kube_snapshot *s, char **err) {
    ks_kube_config kc = {0};
    if (!ks_kube_config_load(l->kubeconfig, NULL, l->master, &kc, err)) return false;
    /* kube-scheduler's default client budget: a snapshot is a few lists */
    ks_kube_client_options o = {.config = &kc, .qps = 50, .burst = 100, .timeout_ms = 60000};
    ks_kube_client *c = ks_kube_client_new(&o, err);
    bool ok = c && ks_kube_snapshot_list(s, c, 0, err);
    ks_kube_client_free(c);
    ks_kube_config_free(&kc);
    return ok;
}

bool ks_cli_live_snapshot(const ks_cli_live *l, const char *const *paths, size_t n, ks_kube_snapshot *s,
                          const char *cmd) {
    char *err = NULL;
    bool ok = true;
    if (ks_cli_live_is_live(l)) {
        ok = list_live(l, s, &err);
    } else {
        for (size_t i = 0; ok && i < n; i++) ok = ks_kube_snapshot_read(s, paths[i], &err);
    }
    /* Order: nodes added first, so a drain may name one; removals last. */
    for (size_t i = 0; ok && i < l->nadd; i++) ok = ks_kube_snapshot_add_nodes(s, l->add[i], l->count[i], &err);
    for (size_t i = 0; ok && i < l->ndrain; i++) ok = ks_kube_snapshot_drain(s, l->drain[i], &err);
    for (size_t i = 0; ok && i < l->nremove; i++) ok = ks_kube_snapshot_remove_node(s, l->remove[i], &err);
    if (!ok) fprintf(stderr, "ksched %s: %s\n", cmd, err ? err : "failed");
    free(err);
    return ok;
}

ks_cluster *ks_cli_live_cluster(const ks_cli_live *l, const char *const *paths, size_t n, const char *cmd) {
    bool live = ks_cli_live_is_live(l);
    if (!live && !ks_cli_live_has_whatifs(l)) return ks_cli_load_cluster(paths, n);
    ks_kube_snapshot s;
    ks_kube_snapshot_init(&s);
    ks_cluster *c = NULL;
    if (!ks_cli_live_snapshot(l, paths, n, &s, cmd)) goto out;
    size_t len = 0;
    char *json = ks_kube_snapshot_json(&s, &len);
    c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    char *err = NULL;
    bool ok = ks_load_buffer(c, live ? "<cluster>" : "<snapshot>", json, len, &errs);
    free(json);
    /* live: the paths are more objects (pods to place) on top */
    if (ok && live && n) ok = ks_load_paths(c, paths, n, &errs);
    for (size_t i = 0; i < errs.nw; i++) fprintf(stderr, "warning: %s\n", errs.w[i]);
    if (!ok || !ks_cluster_admit(c, &err)) {
        for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
        if (err) fprintf(stderr, "%s\n", err);
        ks_cluster_free(c);
        c = NULL;
    }
    free(err);
    ks_errors_free(&errs);
out:
    ks_kube_snapshot_free(&s);
    return c;
}

void ks_cli_live_free(ks_cli_live *l) {
    free(l->drain);
    free(l->remove);
    free(l->add);
    free(l->count);
    memset(l, 0, sizeof(*l));
}
