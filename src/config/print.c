/* The configuration as upstream's v1 serialisation has it (what
 * `kube-scheduler --write-config-to` writes): every field Go would emit,
 * with its omitempty rules, and per profile the pluginConfig of the
 * plugins the profile actually uses, sorted by name (the "completed"
 * profiles the framework captures). */
#include "config/internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define S(v) kt_str(a, (v))
#define I(v) kt_int(a, (v))
#define BOOL(v) kt_bool(a, (v))

static ks_tree *dur(ks_arena *a, int64_t ns) {
    char buf[40];
    go_format_duration(ns, buf);
    return S(buf);
}

static ks_tree *refs_tree(ks_arena *a, const ks_plugin_ref *r, uint32_t n) {
    ks_tree *seq = kt_new_seq(a);
    for (uint32_t i = 0; i < n; i++) {
        ks_tree *m = kt_new_map(a);
        kt_map_add(a, m, "name", S(r[i].name));
        kt_map_add(a, m, "weight", I(r[i].weight));
        kt_seq_add(a, seq, m);
    }
    return seq;
}

static ks_tree *set_tree(ks_arena *a, const ks_plugin_set *s) {
    ks_tree *m = kt_new_map(a);
    if (s->nenabled) kt_map_add(a, m, "enabled", refs_tree(a, s->enabled, s->nenabled));
    if (s->ndisabled) kt_map_add(a, m, "disabled", refs_tree(a, s->disabled, s->ndisabled));
    return m;
}

static int cmp_pc(const void *x, const void *y) {
    const ks_plugin_config *a = *(const ks_plugin_config *const *)x;
    const ks_plugin_config *b = *(const ks_plugin_config *const *)y;
    return strcmp(a->name, b->name);
}

static ks_tree *profile_tree(ks_arena *a, const ks_profile_config *p) {
    ks_tree *m = kt_new_map(a);
    kt_map_add(a, m, "schedulerName", S(p->scheduler_name));
    if (p->has_percentage) kt_map_add(a, m, "percentageOfNodesToScore", I(p->percentage_of_nodes_to_score));
    ks_tree *pl = kt_new_map(a);
    for (int e = 0; e < KS_EP_COUNT; e++) {
        kt_map_add(a, pl, ks_ext_point_field((ks_ext_point)e), set_tree(a, &p->plugins.point[e]));
    }
    kt_map_add(a, pl, "multiPoint", set_tree(a, &p->plugins.multi_point));
    kt_map_add(a, m, "plugins", pl);

    const ks_plugin_config **pcs = ks_xcalloc(p->nplugin_config ? p->nplugin_config : 1, sizeof *pcs);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nplugin_config; i++) {
        if (p->plugin_config[i].args && plugin_needed(p, p->plugin_config[i].name)) pcs[n++] = &p->plugin_config[i];
    }
    qsort(pcs, n, sizeof *pcs, cmp_pc);
    if (n) {
        ks_tree *seq = kt_new_seq(a);
        for (uint32_t i = 0; i < n; i++) {
            ks_tree *pc = kt_new_map(a);
            kt_map_add(a, pc, "name", S(pcs[i]->name));
            kt_map_add(a, pc, "args", pcs[i]->args);
            kt_seq_add(a, seq, pc);
        }
        kt_map_add(a, m, "pluginConfig", seq);
    }
    free(pcs);
    return m;
}

/* []byte fields print as StdEncoding base64 of the decoded bytes: the same
 * text minus any line breaks. */
static ks_tree *b64(ks_arena *a, const char *s) {
    char *out = ks_arena_alloc(a, strlen(s) + 1);
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        if (*p != '\n' && *p != '\r') out[n++] = *p;
    }
    out[n] = '\0';
    return S(out);
}

static ks_tree *extender_tree(ks_arena *a, const ks_extender_config *e) {
    ks_tree *m = kt_new_map(a);
    kt_map_add(a, m, "urlPrefix", S(e->url_prefix));
    if (*e->filter_verb) kt_map_add(a, m, "filterVerb", S(e->filter_verb));
    if (*e->preempt_verb) kt_map_add(a, m, "preemptVerb", S(e->preempt_verb));
    if (*e->prioritize_verb) kt_map_add(a, m, "prioritizeVerb", S(e->prioritize_verb));
    if (e->weight) kt_map_add(a, m, "weight", I(e->weight));
    if (*e->bind_verb) kt_map_add(a, m, "bindVerb", S(e->bind_verb));
    if (e->enable_https) kt_map_add(a, m, "enableHTTPS", BOOL(true));
    if (e->has_tls) {
        const ks_extender_tls *t = &e->tls;
        ks_tree *tm = kt_new_map(a);
        if (t->insecure) kt_map_add(a, tm, "insecure", BOOL(true));
        if (*t->server_name) kt_map_add(a, tm, "serverName", S(t->server_name));
        if (*t->cert_file) kt_map_add(a, tm, "certFile", S(t->cert_file));
        if (*t->key_file) kt_map_add(a, tm, "keyFile", S(t->key_file));
        if (*t->ca_file) kt_map_add(a, tm, "caFile", S(t->ca_file));
        if (*t->cert_data) kt_map_add(a, tm, "certData", b64(a, t->cert_data));
        if (*t->key_data) kt_map_add(a, tm, "keyData", b64(a, t->key_data));
        if (*t->ca_data) kt_map_add(a, tm, "caData", b64(a, t->ca_data));
        kt_map_add(a, m, "tlsConfig", tm);
    }
    kt_map_add(a, m, "httpTimeout", dur(a, e->http_timeout_ns));
    if (e->node_cache_capable) kt_map_add(a, m, "nodeCacheCapable", BOOL(true));
    if (e->nmanaged_resources) {
        ks_tree *seq = kt_new_seq(a);
        for (uint32_t i = 0; i < e->nmanaged_resources; i++) {
            ks_tree *r = kt_new_map(a);
            kt_map_add(a, r, "name", S(e->managed_resources[i].name));
            if (e->managed_resources[i].ignored_by_scheduler) kt_map_add(a, r, "ignoredByScheduler", BOOL(true));
            kt_seq_add(a, seq, r);
        }
        kt_map_add(a, m, "managedResources", seq);
    }
    if (e->ignorable) kt_map_add(a, m, "ignorable", BOOL(true));
    return m;
}

ks_tree *cfg_to_tree(ks_arena *a, const ks_config *cfg) {
    ks_tree *m = kt_new_map(a);
    kt_map_add(a, m, "apiVersion", S(KS_CONFIG_API_VERSION));
    kt_map_add(a, m, "kind", S(KS_CONFIG_KIND));
    kt_map_add(a, m, "parallelism", I(cfg->parallelism));

    const ks_leader_election *l = &cfg->leader_election;
    ks_tree *le = kt_new_map(a);
    kt_map_add(a, le, "leaderElect", BOOL(l->leader_elect));
    kt_map_add(a, le, "leaseDuration", dur(a, l->lease_duration_ns));
    kt_map_add(a, le, "renewDeadline", dur(a, l->renew_deadline_ns));
    kt_map_add(a, le, "retryPeriod", dur(a, l->retry_period_ns));
    kt_map_add(a, le, "resourceLock", S(l->resource_lock));
    kt_map_add(a, le, "resourceName", S(l->resource_name));
    kt_map_add(a, le, "resourceNamespace", S(l->resource_namespace));
    kt_map_add(a, m, "leaderElection", le);

    const ks_client_connection *k = &cfg->client_connection;
    ks_tree *cc = kt_new_map(a);
    kt_map_add(a, cc, "kubeconfig", S(k->kubeconfig));
    kt_map_add(a, cc, "acceptContentTypes", S(k->accept_content_types));
    kt_map_add(a, cc, "contentType", S(k->content_type));
    /* a float32 goes out through JSON with its shortest digits */
    char qbuf[40];
    go_format_float((double)k->qps, 32, qbuf);
    ks_tree *q = kt_new(a, KT_FLOAT, 0);
    q->fval = strtod(qbuf, NULL);
    kt_map_add(a, cc, "qps", q);
    kt_map_add(a, cc, "burst", I(k->burst));
    kt_map_add(a, m, "clientConnection", cc);

    kt_map_add(a, m, "enableProfiling", BOOL(cfg->enable_profiling));
    kt_map_add(a, m, "enableContentionProfiling", BOOL(cfg->enable_contention_profiling));
    kt_map_add(a, m, "percentageOfNodesToScore", I(cfg->percentage_of_nodes_to_score));
    kt_map_add(a, m, "podInitialBackoffSeconds", I(cfg->pod_initial_backoff_seconds));
    kt_map_add(a, m, "podMaxBackoffSeconds", I(cfg->pod_max_backoff_seconds));
    if (cfg->nprofiles) {
        ks_tree *seq = kt_new_seq(a);
        for (uint32_t i = 0; i < cfg->nprofiles; i++) kt_seq_add(a, seq, profile_tree(a, &cfg->profiles[i]));
        kt_map_add(a, m, "profiles", seq);
    }
    if (cfg->nextenders) {
        ks_tree *seq = kt_new_seq(a);
        for (uint32_t i = 0; i < cfg->nextenders; i++) kt_seq_add(a, seq, extender_tree(a, &cfg->extenders[i]));
        kt_map_add(a, m, "extenders", seq);
    }
    if (cfg->delay_cache_until_active) kt_map_add(a, m, "delayCacheUntilActive", BOOL(true));
    return m;
}

char *ks_config_to_yaml(const ks_config *cfg) {
    /* the output tree is scratch: build it in its own arena */
    ks_arena *a = ks_arena_new(16384);
    char *out = yaml_emit(cfg_to_tree(a, cfg));
    ks_arena_free(a);
    return out;
}

char *ks_config_to_json(const ks_config *cfg) {
    ks_arena *a = ks_arena_new(16384);
    char *out = kt_to_json(cfg_to_tree(a, cfg), 0);
    ks_arena_free(a);
    return out;
}
