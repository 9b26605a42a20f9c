/* Loading a configuration: parse, decode strictly, default, validate,
 * resolve. Each stage reports every problem it finds; a stage with errors
 * ends the load, as upstream stops after decoding errors before it
 * validates. */
#include "config/internal.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ks_config *config_new(const char *source) {
    ks_arena *a = ks_arena_new(65536);
    ks_config *cfg = ks_arena_alloc(a, sizeof *cfg);
    cfg->arena = a;
    cfg->source = ks_arena_strdup(a, source);
    return cfg;
}

void ks_config_free(ks_config *cfg) {
    if (cfg) ks_arena_free(cfg->arena);
}

/* Decode (doc may be NULL for "no file"), default, validate. */
static ks_config *build(const char *name, ks_config *cfg, const ks_tree *doc, const char *src, size_t srclen,
                        ks_config_errors *errs) {
    cfg_ctx c = {0};
    c.src = src;
    c.srclen = srclen;
    c.file = doc ? name : NULL;
    c.root = doc;
    c.errs = errs;
    c.arena = cfg->arena;
    c.nerr_start = errs->n;
    cfg_presence pres = {0};
    if (doc) {
        if (!cfg_decode(&c, doc, cfg, &pres)) goto fail;
    } else {
        cfg->profiles = ks_arena_calloc(cfg->arena, 1, sizeof *cfg->profiles);
        pres.scheduler_name = ks_arena_calloc(cfg->arena, 1, sizeof(bool));
        pres.plugins = ks_arena_calloc(cfg->arena, 1, sizeof(bool));
        cfg->leader_election.resource_lock = cfg->leader_election.resource_name =
            cfg->leader_election.resource_namespace = "";
        cfg->client_connection.kubeconfig = cfg->client_connection.accept_content_types =
            cfg->client_connection.content_type = "";
    }
    cfg_set_defaults(cfg, &pres);
    cfg_validate(&c, cfg);
    if (cfg_failed(&c)) goto fail;
    /* Resolution against the in-tree table; the framework resolves again
     * with its registry (out-of-tree plugins), so failures here only mark
     * the profile. */
    ks_config_errors scratch;
    ks_config_errors_init(&scratch);
    ks_config_resolve(cfg, NULL, NULL, &scratch);
    ks_config_errors_free(&scratch);
    return cfg;
fail:
    ks_config_free(cfg);
    return NULL;
}

ks_config *ks_config_default(void) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = build("<defaults>", config_new("<defaults>"), NULL, NULL, 0, &errs);
    ks_config_errors_free(&errs);
    return cfg;
}

ks_config *ks_config_load_buffer(const char *name, const char *buf, size_t len, ks_config_errors *errs) {
    ks_config *cfg = config_new(name);
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *err = NULL;
    if (!kt_parse(cfg->arena, name, buf, len, &docs, &ndocs, &err)) {
        ks_config_errors_add(errs, "%s", err ? err : "cannot parse");
        free(err);
        ks_config_free(cfg);
        return NULL;
    }
    const ks_tree *doc = NULL;
    for (uint32_t i = 0; i < ndocs && !doc; i++) {
        if (!kt_is_null(docs[i])) doc = docs[i];
    }
    if (!doc) {
        ks_config_errors_add(errs, "%s: the file is empty: want a " KS_CONFIG_KIND " (apiVersion: " KS_CONFIG_API_VERSION ")", name);
        ks_config_free(cfg);
        return NULL;
    }
    /* Like kube-scheduler, only the first document counts. */
    return build(name, cfg, doc, buf, len, errs);
}

ks_config *ks_config_load(const char *path, ks_config_errors *errs) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        ks_config_errors_add(errs, "%s: %s", path, strerror(errno));
        return NULL;
    }
    ks_strbuf b;
    ks_sb_init(&b);
    char chunk[8192];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) ks_sb_putn(&b, chunk, r);
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        ks_config_errors_add(errs, "%s: read error", path);
        ks_sb_free(&b);
        return NULL;
    }
    ks_config *cfg = ks_config_load_buffer(path, ks_sb_str(&b), b.len, errs);
    ks_sb_free(&b);
    return cfg;
}

const ks_profile_config *ks_config_profile(const ks_config *cfg, const char *scheduler_name) {
    if (!cfg || !scheduler_name) return NULL;
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        if (strcmp(cfg->profiles[i].scheduler_name, scheduler_name) == 0) return &cfg->profiles[i];
    }
    return NULL;
}

const ks_tree *ks_profile_plugin_args(const ks_profile_config *p, const char *plugin) {
    if (!p) return NULL;
    for (uint32_t i = 0; i < p->nplugin_config; i++) {
        if (strcmp(p->plugin_config[i].name, plugin) == 0) return p->plugin_config[i].args;
    }
    return NULL;
}
