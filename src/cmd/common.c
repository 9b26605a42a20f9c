#include "cmd/common.h"
#include "codec/decode.h"
#include "config/feature_gates.h"
#include "framework/framework.h"
#include "sim/simulate.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool ks_cli_value(int argc, char **argv, int *i, const char *name, const char **val, char **err) {
    const char *a = argv[*i];
    if (a[0] != '-') return false;
    a += (a[1] == '-') ? 2 : 1;
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return false;
    if (a[n] == '=') {
        *val = a + n + 1;
        return true;
    }
    if (a[n] != '\0') return false;
    if (*i + 1 >= argc) {
        *val = NULL;
        *err = ks_xasprintf("option %s needs a value", argv[*i]);
        return true;
    }
    *val = argv[++*i];
    return true;
}

bool ks_cli_u64(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

/* Out-of-tree plugins answer for themselves; in-tree names the registry
 * lacks are described by upstream's table so that resolution works and the
 * framework can report the missing implementation by name. */
static uint32_t points(void *reg, const char *name) {
    uint32_t m = ks_registry_points(reg, name);
    return m ? m : ks_config_intree_points(NULL, name);
}

ks_config *ks_cli_load_config(const char *path, ks_registry *reg) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = path ? ks_config_load(path, &errs) : ks_config_default();
    if (cfg && !ks_config_resolve(cfg, points, reg, &errs)) {
        ks_config_free(cfg);
        cfg = NULL;
    }
    if (!cfg)
        for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.msgs[i]);
    ks_config_errors_free(&errs);
    return cfg;
}

ks_cluster *ks_cli_load_cluster(const char *const *paths, size_t n) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    char *err = NULL;
    bool ok = ks_load_paths(c, paths, n, &errs);
    /* what an API server would have refused, but a simulation goes on with */
    for (size_t i = 0; i < errs.nw; i++) fprintf(stderr, "warning: %s\n", errs.w[i]);
    if (!ok || !ks_cluster_admit(c, &err)) {
        for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
        if (err) fprintf(stderr, "%s\n", err);
        free(err);
        ks_errors_free(&errs);
        ks_cluster_free(c);
        return NULL;
    }
    ks_errors_free(&errs);
    return c;
}

bool ks_cli_expand_workloads(ks_cluster *c, uint64_t seed, bool no_hold, ks_wl_generated *gen, const char *cmd) {
    if (c->skipped.n) {
        /* nothing ignored silently: a user reading the result must know
         * which of their objects it did not look at */
        ks_strbuf b;
        ks_sb_init(&b);
        for (uint32_t i = 0; i < c->skipped.n; i++)
            ks_sb_printf(&b, "%s%u %s", i ? ", " : "", c->skipped.v[i].n, ks_str(c->skipped.v[i].kind));
        fprintf(stderr, "ksched %s: skipped: %s\n", cmd, ks_sb_str(&b));
        ks_sb_free(&b);
    }
    ks_errors errs;
    ks_errors_init(&errs);
    ks_wl_options o = {.seed = seed, .now = ks_sim_start_time(c) / 1000000000, .no_hold = no_hold};
    int64_t t0 = ks_monotonic_ns();
    clock_t c0 = clock();
    bool ok = ks_workloads_expand(c, &o, gen, &errs);
    if (ok && gen->npods)
        ks_infof(1, "workloads: %u pods (%u held), %u ReplicaSets/Jobs, %u claims created in %.3f s (%.3f s of CPU)",
                 gen->npods, ks_wl_held_count(gen->held), gen->workloads.n, gen->pvcs.n,
                 (double)(ks_monotonic_ns() - t0) / 1e9, (double)(clock() - c0) / CLOCKS_PER_SEC);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    ks_errors_free(&errs);
    return ok;
}

int ks_cli_common_parse(ks_cli_common *c, int argc, char **argv, int *i, char **err) {
    const char *val = NULL;
    int r = ks_plugin_opts_parse(&c->plugins, argc, argv, i, err);
    if (r) return r;
    if (ks_cli_value(argc, argv, i, "config", &val, err)) {
        c->config_path = val;
        return val ? 1 : -1;
    }
    if (ks_cli_value(argc, argv, i, "o", &val, err) || ks_cli_value(argc, argv, i, "output", &val, err)) {
        c->output = val;
        return val ? 1 : -1;
    }
    if (ks_cli_value(argc, argv, i, "output-file", &val, err)) {
        c->output_file = val;
        return val ? 1 : -1;
    }
    if (ks_cli_value(argc, argv, i, "feature-gates", &val, err)) {
        if (!val) return -1;
        KS_GROW(c->gates, c->gates_cap, c->ngates + 1);
        c->gates[c->ngates++] = val;
        return 1;
    }
    return 0;
}

ks_config *ks_cli_common_setup(ks_cli_common *c, const char *cmd) {
    char *err = NULL;
    /* the gates first: the configuration's defaults and the plugins read
     * them (kube-scheduler sets them before anything else) */
    if (!ks_feature_gates_apply(c->gates, c->ngates, &err)) {
        fprintf(stderr, "ksched %s: %s\n", cmd, err);
        free(err);
        return NULL;
    }
    if (!ks_plugin_opts_load(&c->plugins, ks_default_registry(), &err)) {
        fprintf(stderr, "ksched %s: %s\n", cmd, err);
        free(err);
        return NULL;
    }
    ks_config *cfg = ks_cli_load_config(c->config_path, ks_default_registry());
    return cfg;
}

void ks_cli_common_free(ks_cli_common *c) {
    ks_plugin_opts_free(&c->plugins);
    free(c->gates);
    c->gates = NULL;
    c->ngates = c->gates_cap = 0;
}

FILE *ks_cli_output_open(const ks_cli_common *c, const char *cmd) {
    if (!c->output_file || !strcmp(c->output_file, "-")) return stdout;
    FILE *f = fopen(c->output_file, "w");
    if (!f) fprintf(stderr, "ksched %s: cannot write %s: %s\n", cmd, c->output_file, strerror(errno));
    return f;
}

bool ks_cli_output_close(const ks_cli_common *c, FILE *f, const char *cmd) {
    bool ok = fflush(f) == 0 && !ferror(f);
    if (f != stdout && fclose(f) != 0) ok = false;
    if (!ok)
        fprintf(stderr, "ksched %s: cannot write %s\n", cmd,
                c->output_file && strcmp(c->output_file, "-") ? c->output_file : "the output");
    return ok;
}
