/* Flags and set-up shared by `ksched run` and its shadow mode (see
 * run_flags.h). */
#include "cmd/run_flags.h"

#include "cmd/common.h"
#include "cmd/flags.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A boolean flag: "--name" or "--name=BOOL" (pflag's rule: no separate
 * value). 1 matched, 0 not, -1 bad value. */
static int bool_flag(const char *a, const char *name, bool *out) {
    if (a[0] != '-') return 0;
    const char *p = a + (a[1] == '-' ? 2 : 1);
    size_t n = strlen(name);
    if (strncmp(p, name, n) != 0) return 0;
    if (p[n] == 0) return (*out = true), 1;
    if (p[n] != '=') return 0;
    return ks_flag_parse_bool(p + n + 1, out) ? 1 : -1;
}

static int string_flag(int argc, char **argv, int *i, const char *name, const char **dst, char **err) {
    const char *val = NULL;
    if (!ks_cli_value(argc, argv, i, name, &val, err)) return 0;
    if (!val) return -1;
    *dst = val;
    return 1;
}

int ks_run_flag_parse(ks_run_flags *f, int argc, char **argv, int *i, char **err) {
    const char *val = NULL, *a = argv[*i];
    int r;
    if ((r = bool_flag(a, "profiling", &f->profiling)) != 0 ||
        (r = bool_flag(a, "contention-profiling", &f->contention)) != 0) {
        if (strstr(a, "contention")) f->has_contention = true;
        else f->has_profiling = true;
        if (r < 0) *err = ks_xasprintf("invalid value for %s", a);
        return r;
    }
    if ((r = string_flag(argc, argv, i, "kubeconfig", &f->kubeconfig, err)) != 0) return r;
    if ((r = string_flag(argc, argv, i, "kube-api-content-type", &f->content_type, err)) != 0) return r;
    if ((r = string_flag(argc, argv, i, "master", &f->master, err)) != 0) return r;
    if ((r = string_flag(argc, argv, i, "write-config-to", &f->write_config, err)) != 0) return r;
    if (ks_cli_value(argc, argv, i, "kube-api-qps", &val, err)) {
        char *end = NULL;
        if (!val) return -1;
        f->qps = strtof(val, &end);
        if (!*val || *end) return (*err = ks_xasprintf("invalid value \"%s\" for --kube-api-qps", val)), -1;
        f->has_qps = true;
        return 1;
    }
    if (ks_cli_value(argc, argv, i, "kube-api-burst", &val, err)) {
        char *end = NULL;
        if (!val) return -1;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (!*val || *end || errno || v < INT32_MIN || v > INT32_MAX)
            return (*err = ks_xasprintf("invalid value \"%s\" for --kube-api-burst", val)), -1;
        f->burst = (int32_t)v;
        f->has_burst = true;
        return 1;
    }
    if (ks_cli_value(argc, argv, i, "pod-max-in-unschedulable-pods-duration", &val, err)) {
        char *e = NULL;
        if (!val) return -1;
        if (!ks_parse_duration(val, &f->max_unsched_ns, &e)) {
            *err = ks_xasprintf("invalid value \"%s\" for --pod-max-in-unschedulable-pods-duration: %s", val,
                                e ? e : "not a duration");
            free(e);
            return -1;
        }
        f->has_max_unsched = true;
        return 1;
    }
    return 0;
}

void ks_run_flags_apply(const ks_run_flags *f, bool have_config, ks_config *cfg, const char *cmd) {
    const char *given[6];
    int n = 0;
    if (f->kubeconfig) given[n++] = "--kubeconfig";
    if (f->content_type) given[n++] = "--kube-api-content-type";
    if (f->has_qps) given[n++] = "--kube-api-qps";
    if (f->has_burst) given[n++] = "--kube-api-burst";
    if (f->has_profiling) given[n++] = "--profiling";
    if (f->has_contention) given[n++] = "--contention-profiling";
    if (have_config) {
        /* kube-scheduler ignores them silently; ksched says so */
        for (int k = 0; k < n; k++)
            fprintf(stderr,
                    "ksched %s: warning: %s is ignored because --config is given (as kube-scheduler "
                    "ignores it); set it in the configuration file\n",
                    cmd, given[k]);
    } else {
        if (f->kubeconfig) cfg->client_connection.kubeconfig = f->kubeconfig;
        if (f->content_type) cfg->client_connection.content_type = f->content_type;
        if (f->has_qps) cfg->client_connection.qps = f->qps;
        if (f->has_burst) cfg->client_connection.burst = f->burst;
        if (f->has_profiling) cfg->enable_profiling = f->profiling;
        if (f->has_contention) cfg->enable_contention_profiling = f->contention;
    }
    if (f->has_max_unsched) cfg->pod_max_in_unschedulable_ns = f->max_unsched_ns;
}

bool ks_run_write_config(const ks_config *cfg, const char *path, const char *cmd) {
    char *y = ks_config_to_yaml(cfg);
    FILE *fp = fopen(path, "w");
    bool ok = fp && fputs(y, fp) >= 0;
    int saved = errno;
    if (fp && fclose(fp) != 0) ok = false, saved = errno;
    free(y);
    if (!ok) fprintf(stderr, "ksched %s: cannot write %s: %s\n", cmd, path, strerror(saved));
    else fprintf(stderr, "ksched %s: wrote configuration to %s\n", cmd, path);
    return ok;
}

bool ks_run_kube_config_load(const ks_run_flags *f, const ks_config *cfg, ks_kube_config *kc, char **err) {
    const char *path = cfg->client_connection.kubeconfig;
    return ks_kube_config_load(path && *path ? path : NULL, NULL, f->master, kc, err);
}

static ks_kube_client_options client_options(const ks_kube_config *kc, const ks_config *cfg, int64_t timeout_ms,
                                             const char *ua_suffix) {
    return (ks_kube_client_options){.config = kc,
                                    .qps = cfg->client_connection.qps,
                                    .burst = cfg->client_connection.burst,
                                    .timeout_ms = timeout_ms,
                                    .user_agent_suffix = ua_suffix,
                                    .content_type = cfg->client_connection.content_type,
                                    .accept_content_types = cfg->client_connection.accept_content_types,
                                    /* as kube-scheduler's createKubeConfig */
                                    .disable_compression = true};
}

ks_kube_client *ks_run_client_new(const ks_kube_config *kc, const ks_config *cfg, int64_t timeout_ms,
                                  const char *ua_suffix, const char *cmd) {
    char *err = NULL;
    ks_kube_client_options o = client_options(kc, cfg, timeout_ms, ua_suffix);
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    if (!c) {
        fprintf(stderr, "ksched %s: %s\n", cmd, err);
        free(err);
    }
    return c;
}

ks_kube_client *ks_run_client_new_sibling(ks_kube_client *base, const ks_config *cfg, int64_t timeout_ms,
                                          const char *ua_suffix) {
    ks_kube_client_options o = client_options(NULL, cfg, timeout_ms, ua_suffix);
    return ks_kube_client_new_sibling(base, &o);
}

static bool profiles_enable(const ks_config *cfg, const char *plugin) {
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        const ks_profile_config *p = &cfg->profiles[i];
        for (int ep = 0; ep < KS_EP_COUNT; ep++)
            for (uint32_t j = 0; j < p->resolved[ep].n; j++)
                if (!strcmp(p->resolved[ep].plugins[j].name, plugin)) return true;
    }
    return false;
}

void ks_run_backend_watches(const ks_config *cfg, ks_kube_cluster_client_options *o) {
    o->watch_pod_groups = profiles_enable(cfg, "Coscheduling");
    /* as kube-scheduler: the DRA kinds whenever its gate is on, even with
     * DynamicResources disabled in every profile */
    o->watch_dra = ks_feature_enabled(KS_FEAT_DYNAMIC_RESOURCE_ALLOCATION);
    o->watch_device_taint_rules = ks_feature_enabled(KS_FEAT_DRA_DEVICE_TAINTS);
}
