/* Decoding a KubeSchedulerConfiguration document into ks_config, strictly:
 * wrong apiVersion/kind stop at once; otherwise every unknown field,
 * duplicate field, wrongly typed value and bad plugin args is reported
 * before we give up, like upstream's strict decoder collects them. */
#include "config/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *str_field(const ks_tree *m, const char *key) { return kt_as_str(kt_field(m, key)); }

static bool int_field(const ks_tree *m, const char *key, int64_t *v) {
    const ks_tree *t = kt_field(m, key);
    return t && kt_as_int(t, v);
}

static bool bool_field(const ks_tree *m, const char *key, bool *v) {
    const ks_tree *t = kt_field(m, key);
    if (!t || t->type != KT_BOOL) return false;
    *v = t->bval;
    return true;
}

static int64_t dur_field(const ks_tree *m, const char *key) {
    const char *s = str_field(m, key);
    int64_t ns = 0;
    char *err = NULL;
    if (s && !go_parse_duration(s, &ns, &err)) {
        free(err);
        ns = 0;
    }
    return ns;
}

static const ks_tree *list_field(const ks_tree *m, const char *key) {
    const ks_tree *t = kt_field(m, key);
    return t && t->type == KT_SEQ ? t : NULL;
}

static const ks_tree *map_field(const ks_tree *m, const char *key) {
    const ks_tree *t = kt_field(m, key);
    return t && t->type == KT_MAP ? t : NULL;
}

static void decode_refs(ks_arena *a, const ks_tree *list, ks_plugin_ref **out, uint32_t *n) {
    *out = NULL;
    *n = 0;
    if (!list || list->n == 0) return;
    *out = ks_arena_calloc(a, list->n, sizeof **out);
    for (uint32_t i = 0; i < list->n; i++) {
        const ks_tree *it = list->items[i];
        ks_plugin_ref *r = &(*out)[(*n)++];
        const char *name = it && it->type == KT_MAP ? str_field(it, "name") : NULL;
        r->name = name ? name : "";
        int64_t w;
        if (it && it->type == KT_MAP && int_field(it, "weight", &w)) r->weight = (int32_t)w;
        r->line = it ? it->line : 0;
    }
}

static void decode_set(ks_arena *a, const ks_tree *set, ks_plugin_set *out) {
    memset(out, 0, sizeof *out);
    if (!set || set->type != KT_MAP) return;
    decode_refs(a, list_field(set, "enabled"), &out->enabled, &out->nenabled);
    decode_refs(a, list_field(set, "disabled"), &out->disabled, &out->ndisabled);
}

static void decode_plugins(ks_arena *a, const ks_tree *pl, ks_plugins_config *out) {
    memset(out, 0, sizeof *out);
    if (!pl) return;
    for (int p = 0; p < KS_EP_COUNT; p++) decode_set(a, kt_field(pl, ks_ext_point_field((ks_ext_point)p)), &out->point[p]);
    decode_set(a, kt_field(pl, "multiPoint"), &out->multi_point);
}

static void decode_profile(cfg_ctx *c, const ks_tree *t, uint32_t i, ks_profile_config *p, cfg_presence *pres) {
    ks_arena *a = c->arena;
    p->line = t ? t->line : 0;
    if (!t || t->type != KT_MAP) return;
    const char *name = str_field(t, "schedulerName");
    pres->scheduler_name[i] = name != NULL;
    p->scheduler_name = name ? name : "";
    int64_t v;
    if (int_field(t, "percentageOfNodesToScore", &v)) {
        p->has_percentage = true;
        p->percentage_of_nodes_to_score = (int32_t)v;
    }
    const ks_tree *pl = map_field(t, "plugins");
    pres->plugins[i] = pl != NULL;
    decode_plugins(a, pl, &p->plugins);
    const ks_tree *pcs = list_field(t, "pluginConfig");
    if (pcs && pcs->n) {
        p->plugin_config = ks_arena_calloc(a, pcs->n, sizeof *p->plugin_config);
        for (uint32_t j = 0; j < pcs->n; j++) {
            const ks_tree *pc = pcs->items[j];
            ks_plugin_config *out = &p->plugin_config[p->nplugin_config++];
            const char *pname = pc && pc->type == KT_MAP ? str_field(pc, "name") : NULL;
            out->name = pname ? pname : "";
            const char *path = ks_arena_printf(a, "profiles[%u].pluginConfig[%u].args", i, j);
            out->args = args_decode(c, out->name, pc && pc->type == KT_MAP ? kt_get(pc, "args") : NULL, path);
        }
    }
}

static void decode_extender(ks_arena *a, const ks_tree *t, ks_extender_config *e) {
    if (!t || t->type != KT_MAP) return;
    const char *s;
    e->url_prefix = (s = str_field(t, "urlPrefix")) ? s : "";
    e->filter_verb = (s = str_field(t, "filterVerb")) ? s : "";
    e->preempt_verb = (s = str_field(t, "preemptVerb")) ? s : "";
    e->prioritize_verb = (s = str_field(t, "prioritizeVerb")) ? s : "";
    e->bind_verb = (s = str_field(t, "bindVerb")) ? s : "";
    int_field(t, "weight", &e->weight);
    bool_field(t, "enableHTTPS", &e->enable_https);
    bool_field(t, "nodeCacheCapable", &e->node_cache_capable);
    bool_field(t, "ignorable", &e->ignorable);
    e->http_timeout_ns = dur_field(t, "httpTimeout");
    const ks_tree *tls = map_field(t, "tlsConfig");
    if (tls) {
        e->has_tls = true;
        bool_field(tls, "insecure", &e->tls.insecure);
        e->tls.server_name = (s = str_field(tls, "serverName")) ? s : "";
        e->tls.cert_file = (s = str_field(tls, "certFile")) ? s : "";
        e->tls.key_file = (s = str_field(tls, "keyFile")) ? s : "";
        e->tls.ca_file = (s = str_field(tls, "caFile")) ? s : "";
        e->tls.cert_data = (s = str_field(tls, "certData")) ? s : "";
        e->tls.key_data = (s = str_field(tls, "keyData")) ? s : "";
        e->tls.ca_data = (s = str_field(tls, "caData")) ? s : "";
    }
    const ks_tree *mr = list_field(t, "managedResources");
    if (mr && mr->n) {
        e->managed_resources = ks_arena_calloc(a, mr->n, sizeof *e->managed_resources);
        for (uint32_t i = 0; i < mr->n; i++) {
            ks_extender_resource *r = &e->managed_resources[e->nmanaged_resources++];
            const ks_tree *it = mr->items[i];
            r->name = "";
            if (it && it->type == KT_MAP) {
                r->name = (s = str_field(it, "name")) ? s : "";
                bool_field(it, "ignoredByScheduler", &r->ignored_by_scheduler);
            }
        }
    }
}

/* apiVersion and kind decide which schema applies at all, so they are
 * checked first and a mismatch ends decoding. */
static bool check_type_meta(cfg_ctx *c, const ks_tree *doc) {
    const ks_tree *avt = kt_field(doc, "apiVersion");
    const ks_tree *kt = kt_field(doc, "kind");
    const char *av = kt_as_str(avt);
    const char *kind = kt_as_str(kt);
    bool ok = true;
    if (!av) {
        cfg_err_line(c, doc->line, "apiVersion is missing: want apiVersion: " KS_CONFIG_API_VERSION);
        ok = false;
    } else if (strcmp(av, KS_CONFIG_API_VERSION) != 0) {
        if (strncmp(av, "kubescheduler.config.k8s.io/", 28) == 0) {
            cfg_err_line(c, avt->line,
                         "apiVersion \"%s\" is not supported: only " KS_CONFIG_API_VERSION
                         " is (v1beta2 and v1beta3 were removed from kube-scheduler; convert the file to v1)",
                         av);
        } else {
            cfg_err_line(c, avt->line, "apiVersion \"%s\" is not supported: want " KS_CONFIG_API_VERSION, av);
        }
        ok = false;
    }
    if (!kind) {
        cfg_err_line(c, doc->line, "kind is missing: want kind: " KS_CONFIG_KIND);
        ok = false;
    } else if (strcmp(kind, KS_CONFIG_KIND) != 0) {
        cfg_err_line(c, kt->line, "kind \"%s\" is not supported: want " KS_CONFIG_KIND, kind);
        ok = false;
    }
    return ok;
}

bool cfg_decode(cfg_ctx *c, const ks_tree *doc, ks_config *cfg, cfg_presence *pres) {
    ks_arena *a = c->arena;
    uint32_t before = c->errs->n;
    if (!doc || doc->type != KT_MAP) {
        cfg_err_line(c, doc ? doc->line : 0, "the document is not a mapping: want a " KS_CONFIG_KIND);
        return false;
    }
    if (!check_type_meta(c, doc)) return false;
    sk_check(c, doc, &sk_config, "");

    int64_t v;
    if (int_field(doc, "parallelism", &v)) {
        pres->parallelism = true;
        cfg->parallelism = (int32_t)v;
    }
    if (int_field(doc, "percentageOfNodesToScore", &v)) {
        pres->percentage = true;
        cfg->percentage_of_nodes_to_score = (int32_t)v;
    }
    if (int_field(doc, "podInitialBackoffSeconds", &v)) {
        pres->initial_backoff = true;
        cfg->pod_initial_backoff_seconds = v;
    }
    if (int_field(doc, "podMaxBackoffSeconds", &v)) {
        pres->max_backoff = true;
        cfg->pod_max_backoff_seconds = v;
    }
    pres->enable_profiling = bool_field(doc, "enableProfiling", &cfg->enable_profiling);
    pres->enable_contention = bool_field(doc, "enableContentionProfiling", &cfg->enable_contention_profiling);
    bool_field(doc, "delayCacheUntilActive", &cfg->delay_cache_until_active);

    const ks_tree *le = map_field(doc, "leaderElection");
    ks_leader_election *l = &cfg->leader_election;
    const char *s;
    l->resource_lock = l->resource_name = l->resource_namespace = "";
    if (le) {
        pres->leader_elect = bool_field(le, "leaderElect", &l->leader_elect);
        l->lease_duration_ns = dur_field(le, "leaseDuration");
        l->renew_deadline_ns = dur_field(le, "renewDeadline");
        l->retry_period_ns = dur_field(le, "retryPeriod");
        if ((s = str_field(le, "resourceLock"))) l->resource_lock = s;
        if ((s = str_field(le, "resourceName"))) l->resource_name = s;
        if ((s = str_field(le, "resourceNamespace"))) l->resource_namespace = s;
    }

    const ks_tree *cc = map_field(doc, "clientConnection");
    ks_client_connection *k = &cfg->client_connection;
    k->kubeconfig = k->accept_content_types = k->content_type = "";
    if (cc) {
        if ((s = str_field(cc, "kubeconfig"))) k->kubeconfig = s;
        if ((s = str_field(cc, "acceptContentTypes"))) k->accept_content_types = s;
        if ((s = str_field(cc, "contentType"))) k->content_type = s;
        const ks_tree *q = kt_field(cc, "qps");
        if (q && q->type == KT_INT) k->qps = (float)q->ival;
        if (q && q->type == KT_FLOAT) k->qps = (float)q->fval;
        if (int_field(cc, "burst", &v)) k->burst = (int32_t)v;
    }

    const ks_tree *profiles = list_field(doc, "profiles");
    uint32_t np = profiles ? profiles->n : 0;
    /* one spare slot: defaulting adds a profile when there is none */
    cfg->profiles = ks_arena_calloc(a, np + 1, sizeof *cfg->profiles);
    pres->scheduler_name = ks_arena_calloc(a, np + 1, sizeof *pres->scheduler_name);
    pres->plugins = ks_arena_calloc(a, np + 1, sizeof *pres->plugins);
    for (uint32_t i = 0; i < np; i++) {
        cfg->profiles[i].scheduler_name = "";
        decode_profile(c, profiles->items[i], i, &cfg->profiles[i], pres);
    }
    cfg->nprofiles = np;

    const ks_tree *ext = list_field(doc, "extenders");
    if (ext && ext->n) {
        cfg->extenders = ks_arena_calloc(a, ext->n, sizeof *cfg->extenders);
        for (uint32_t i = 0; i < ext->n; i++) {
            ks_extender_config *e = &cfg->extenders[i];
            e->url_prefix = e->filter_verb = e->preempt_verb = e->prioritize_verb = e->bind_verb = "";
            decode_extender(a, ext->items[i], e);
        }
        cfg->nextenders = ext->n;
    }
    return c->errs->n == before;
}
