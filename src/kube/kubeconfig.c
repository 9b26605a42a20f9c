#include "kube/kubeconfig.h"

#include "codec/tree.h"
#include "util/arena.h"
#include "util/base64.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One kubeconfig file of the set being merged. */
typedef struct kc_file {
    char *path;
    char *dir;           /* absolute directory its relative paths start from */
    const ks_tree *root; /* NULL for an empty file */
} kc_file;

typedef struct kc_set {
    ks_arena *a;
    kc_file *files;
    size_t n, cap;
} kc_set;

/* Whole file into a malloc'd NUL-terminated buffer; errno on failure. */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    ks_strbuf b;
    ks_sb_init(&b);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) ks_sb_putn(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        ks_sb_free(&b);
        errno = EIO;
        return NULL;
    }
    if (len) *len = b.len;
    if (!b.s) return ks_xstrdup("");
    return ks_sb_take(&b);
}

/* The absolute directory of a file path (filepath.Abs(filepath.Dir(p))). */
static char *abs_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? ks_xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : ks_xstrdup(".");
    if (dir[0] == '/') return dir;
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd))) return dir;
    char *abs = strcmp(dir, ".") == 0 ? ks_xstrdup(cwd) : ks_xasprintf("%s/%s", cwd, dir);
    free(dir);
    return abs;
}

static char *resolve(const char *dir, const char *p) {
    if (!p || !*p) return NULL;
    if (p[0] == '/' || !dir) return ks_xstrdup(p);
    return ks_xasprintf("%s/%s", dir, p);
}

/* The named-list sections of a kubeconfig and the key of each entry's body. */
static const char *const sections[][2] = {{"clusters", "cluster"}, {"users", "user"}, {"contexts", "context"}};

static bool check_file(const kc_file *f, char **err) {
    if (!f->root) return true;
    if (f->root->type != KT_MAP)
        return ks_set_error(err, "%s: not a kubeconfig (the document is a %s, not a map)", f->path,
                    kt_type_name(f->root->type));
    for (size_t s = 0; s < 3; s++) {
        const ks_tree *list = kt_get(f->root, sections[s][0]);
        if (!list || list->type == KT_NULL) continue;
        if (list->type != KT_SEQ)
            return ks_set_error(err, "%s: %s: expected a list, got %s", f->path, sections[s][0], kt_type_name(list->type));
        for (uint32_t i = 0; i < list->n; i++) {
            const ks_tree *e = list->items[i];
            const ks_tree *name = kt_get(e, "name");
            if (e->type != KT_MAP || !name || name->type == KT_NULL || name->type == KT_MAP ||
                name->type == KT_SEQ || !name->text || !*name->text)
                return ks_set_error(err, "%s: %s[%u]: an entry without a name", f->path, sections[s][0], i);
            const ks_tree *body = kt_get(e, sections[s][1]);
            if (body && body->type != KT_MAP && body->type != KT_NULL)
                return ks_set_error(err, "%s: %s[%u] (%s): %s: expected a map, got %s", f->path, sections[s][0], i,
                            name->text, sections[s][1], kt_type_name(body->type));
            for (uint32_t j = 0; j < i; j++)
                if (strcmp(kt_get(list->items[j], "name")->text, name->text) == 0)
                    return ks_set_error(err, "%s: %s: the name \"%s\" appears twice", f->path, sections[s][0], name->text);
        }
    }
    return true;
}

static bool add_file(kc_set *set, const char *path, bool required, char **err) {
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->files[i].path, path) == 0) return true; /* listed twice: once is enough */
    size_t len = 0;
    char *buf = slurp(path, &len);
    if (!buf) {
        if (!required && errno == ENOENT) return true; /* $KUBECONFIG may name files that do not exist */
        return ks_set_error(err, "kubeconfig %s: %s", path, strerror(errno));
    }
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *perr = NULL;
    bool ok = kt_parse(set->a, path, buf, len, &docs, &ndocs, &perr);
    free(buf);
    if (!ok) {
        ks_set_error(err, "kubeconfig %s", perr);
        free(perr);
        return false;
    }
    KS_GROW(set->files, set->cap, set->n + 1);
    kc_file *f = &set->files[set->n++];
    f->path = ks_xstrdup(path);
    f->dir = abs_dir(path);
    f->root = ndocs ? docs[0] : NULL;
    if (f->root && f->root->type == KT_NULL) f->root = NULL;
    return check_file(f, err);
}

static void set_free(kc_set *set) {
    for (size_t i = 0; i < set->n; i++) {
        free(set->files[i].path);
        free(set->files[i].dir);
    }
    free(set->files);
    ks_arena_free(set->a);
}

/* The body of the first entry called `name` in a section, and its file:
 * in a merged set the first file that defines a name wins. */
static bool find(const kc_set *set, size_t section, const char *name, const ks_tree **body, const kc_file **file) {
    for (size_t i = 0; i < set->n; i++) {
        const ks_tree *list = kt_get(set->files[i].root, sections[section][0]);
        if (!list || list->type != KT_SEQ) continue;
        for (uint32_t j = 0; j < list->n; j++) {
            if (strcmp(kt_get(list->items[j], "name")->text, name) != 0) continue;
            *body = kt_get(list->items[j], sections[section][1]);
            if (*body && (*body)->type != KT_MAP) *body = NULL;
            *file = &set->files[i];
            return true;
        }
    }
    return false;
}

/* Field readers. `where` names the entry ("user \"admin\""), for messages. */
typedef struct kc_ctx {
    const kc_file *f;
    const char *where;
    char **err;
} kc_ctx;

static bool get_str(const kc_ctx *x, const ks_tree *m, const char *key, const char **out) {
    *out = NULL;
    const ks_tree *v = kt_get(m, key);
    if (!v || v->type == KT_NULL) return true;
    if (v->type == KT_MAP || v->type == KT_SEQ)
        return ks_set_error(x->err, "%s: %s: %s: expected a string, got %s", x->f->path, x->where, key, kt_type_name(v->type));
    *out = v->text && *v->text ? v->text : NULL;
    return true;
}

static bool get_bool(const kc_ctx *x, const ks_tree *m, const char *key, bool *out) {
    *out = false;
    const ks_tree *v = kt_get(m, key);
    if (!v || v->type == KT_NULL) return true;
    if (v->type != KT_BOOL)
        return ks_set_error(x->err, "%s: %s: %s: expected true or false, got %s", x->f->path, x->where, key,
                    v->text ? v->text : kt_type_name(v->type));
    *out = v->bval;
    return true;
}

/* A *-data field: base64 in the file, the decoded bytes (NUL-terminated) out. */
static bool get_data(const kc_ctx *x, const ks_tree *m, const char *key, char **out, size_t *len) {
    const char *s;
    if (!get_str(x, m, key, &s)) return false;
    if (!s) return true;
    size_t n = strlen(s);
    char *buf = ks_xmalloc(n / 4 * 3 + 4);
    if (!ks_base64_decode(s, n, (unsigned char *)buf, len)) {
        free(buf);
        return ks_set_error(x->err, "%s: %s: %s: not valid base64", x->f->path, x->where, key);
    }
    buf[*len] = '\0';
    *out = buf;
    return true;
}

/* A file field: resolved against the kubeconfig's directory; it must be
 * readable now (clientcmd's validation opens it too). */
static bool get_path(const kc_ctx *x, const ks_tree *m, const char *key, char **out) {
    const char *s;
    if (!get_str(x, m, key, &s)) return false;
    if (!s) return true;
    *out = resolve(x->f->dir, s);
    if (access(*out, R_OK) != 0)
        return ks_set_error(x->err, "%s: %s: %s: cannot read %s: %s", x->f->path, x->where, key, *out, strerror(errno));
    return true;
}

static bool read_cluster(const kc_ctx *x, const ks_tree *c, const char *master, ks_kube_config *out) {
    const char *server, *tls_name, *proxy;
    if (!get_str(x, c, "server", &server) || !get_str(x, c, "tls-server-name", &tls_name) ||
        !get_str(x, c, "proxy-url", &proxy) || !get_bool(x, c, "insecure-skip-tls-verify", &out->insecure) ||
        !get_bool(x, c, "disable-compression", &out->disable_compression))
        return false;
    if (!get_data(x, c, "certificate-authority-data", &out->ca_data, &out->ca_len)) return false;
    /* clientcmd: the data wins over the file when both are given */
    if (!out->ca_data && !get_path(x, c, "certificate-authority", &out->ca_file)) return false;
    if (!master && !server) return ks_set_error(x->err, "%s: %s: server: no server defined", x->f->path, x->where);
    if (!master) out->server = ks_xstrdup(server);
    if (tls_name) out->tls_server_name = ks_xstrdup(tls_name);
    if (proxy) out->proxy_url = ks_xstrdup(proxy);
    return true;
}

static bool read_exec(const kc_ctx *x, const ks_tree *e, ks_kube_exec *ex) {
    char where[512];
    snprintf(where, sizeof(where), "%s: exec", x->where);
    kc_ctx ec = {x->f, where, x->err};
    const char *api, *cmd, *hint, *mode;
    if (!get_str(&ec, e, "apiVersion", &api) || !get_str(&ec, e, "command", &cmd) ||
        !get_str(&ec, e, "installHint", &hint) || !get_str(&ec, e, "interactiveMode", &mode) ||
        !get_bool(&ec, e, "provideClusterInfo", &ex->provide_cluster_info))
        return false;
    if (!cmd) return ks_set_error(x->err, "%s: %s: command: must be specified to use an exec plugin", x->f->path, where);
    if (!api) return ks_set_error(x->err, "%s: %s: apiVersion: must be specified to use an exec plugin", x->f->path, where);
    if (strcmp(api, "client.authentication.k8s.io/v1") != 0 && strcmp(api, "client.authentication.k8s.io/v1beta1") != 0)
        return ks_set_error(x->err,
                    "%s: %s: apiVersion: %s is not supported (client.authentication.k8s.io/v1 or v1beta1)",
                    x->f->path, where, api);
    /* ksched never has a terminal to hand to the plugin */
    if (mode && strcmp(mode, "Always") == 0)
        return ks_set_error(x->err, "%s: %s: interactiveMode: Always needs a terminal, which ksched does not have",
                    x->f->path, where);
    if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0)
        return ks_set_error(x->err, "%s: %s: interactiveMode: invalid value \"%s\"", x->f->path, where, mode);
    ex->api_version = ks_xstrdup(api);
    /* a command with a slash is a path relative to the file; a bare name is looked up in $PATH */
    ex->command = strchr(cmd, '/') ? resolve(x->f->dir, cmd) : ks_xstrdup(cmd);
    if (hint) ex->install_hint = ks_xstrdup(hint);
    const ks_tree *args = kt_get(e, "args");
    uint32_t na = args && args->type == KT_SEQ ? args->n : 0;
    if (args && args->type != KT_SEQ && args->type != KT_NULL)
        return ks_set_error(x->err, "%s: %s: args: expected a list, got %s", x->f->path, where, kt_type_name(args->type));
    ex->args = ks_xcalloc(na + 1, sizeof(char *));
    for (uint32_t i = 0; i < na; i++) {
        const ks_tree *a = args->items[i];
        if (a->type == KT_MAP || a->type == KT_SEQ)
            return ks_set_error(x->err, "%s: %s: args[%u]: expected a string, got %s", x->f->path, where, i,
                        kt_type_name(a->type));
        ex->args[i] = ks_xstrdup(a->text ? a->text : "");
    }
    const ks_tree *env = kt_get(e, "env");
    uint32_t ne = env && env->type == KT_SEQ ? env->n : 0;
    if (env && env->type != KT_SEQ && env->type != KT_NULL)
        return ks_set_error(x->err, "%s: %s: env: expected a list, got %s", x->f->path, where, kt_type_name(env->type));
    ex->env = ks_xcalloc(ne + 1, sizeof(char *));
    for (uint32_t i = 0; i < ne; i++) {
        char w2[600];
        snprintf(w2, sizeof(w2), "%s: env[%u]", where, i);
        kc_ctx vc = {x->f, w2, x->err};
        const char *name, *value;
        if (env->items[i]->type != KT_MAP)
            return ks_set_error(x->err, "%s: %s: expected a map with name and value", x->f->path, w2);
        if (!get_str(&vc, env->items[i], "name", &name) || !get_str(&vc, env->items[i], "value", &value)) return false;
        if (!name) return ks_set_error(x->err, "%s: %s: name: env variable name must be specified", x->f->path, w2);
        ex->env[i] = ks_xasprintf("%s=%s", name, value ? value : "");
    }
    return true;
}

static bool read_user(const kc_ctx *x, const ks_tree *u, ks_kube_config *out) {
    static const char *const unsupported[] = {"as", "as-uid", "as-groups", "as-user-extra"};
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(*unsupported); i++) {
        const ks_tree *v = kt_get(u, unsupported[i]);
        if (v && v->type != KT_NULL)
            return ks_set_error(x->err, "%s: %s: %s: impersonation is not supported by ksched", x->f->path, x->where,
                        unsupported[i]);
    }
    const ks_tree *ap = kt_get(u, "auth-provider");
    if (ap && ap->type != KT_NULL)
        return ks_set_error(x->err,
                    "%s: %s: auth-provider: not supported (client-go removed its in-tree providers; use an exec "
                    "credential plugin)",
                    x->f->path, x->where);
    const char *token, *user, *pass;
    if (!get_str(x, u, "token", &token) || !get_str(x, u, "username", &user) || !get_str(x, u, "password", &pass))
        return false;
    if (!get_data(x, u, "client-certificate-data", &out->cert_data, &out->cert_len) ||
        !get_data(x, u, "client-key-data", &out->key_data, &out->key_len))
        return false;
    if (!out->cert_data && !get_path(x, u, "client-certificate", &out->cert_file)) return false;
    if (!out->key_data && !get_path(x, u, "client-key", &out->key_file)) return false;
    bool has_cert = out->cert_data || out->cert_file, has_key = out->key_data || out->key_file;
    if (has_cert && !has_key)
        return ks_set_error(x->err, "%s: %s: client-key-data or client-key must be given with a client certificate",
                    x->f->path, x->where);
    if (has_key && !has_cert)
        return ks_set_error(x->err,
                    "%s: %s: client-certificate-data or client-certificate must be given with a client key",
                    x->f->path, x->where);
    if (token && (user || pass))
        return ks_set_error(x->err, "%s: %s: more than one authentication method found (token and basicAuth), only one is allowed",
                    x->f->path, x->where);
    if (token) {
        out->token = ks_xstrdup(token);
    } else {
        /* clientcmd: a token wins over tokenFile; a tokenFile is read now
         * (an unreadable one is an error) and again whenever it changes */
        char *tf = NULL;
        if (!get_path(x, u, "tokenFile", &tf)) {
            free(tf);
            return false;
        }
        out->token_file = tf;
    }
    if (user) out->username = ks_xstrdup(user);
    if (pass) out->password = ks_xstrdup(pass);
    const ks_tree *ex = kt_get(u, "exec");
    if (ex && ex->type != KT_NULL) {
        if (ex->type != KT_MAP)
            return ks_set_error(x->err, "%s: %s: exec: expected a map, got %s", x->f->path, x->where, kt_type_name(ex->type));
        out->exec = ks_xcalloc(1, sizeof(*out->exec));
        if (!read_exec(x, ex, out->exec)) return false;
    }
    return true;
}

/* A --master without a scheme: https when TLS settings exist, else http
 * (client-go's DefaultServerURL). No trailing slash. */
static char *normalise_server(const char *s, bool tls) {
    char *r = strstr(s, "://") ? ks_xstrdup(s) : ks_xasprintf("%s://%s", tls ? "https" : "http", s);
    size_t n = strlen(r);
    while (n > 0 && r[n - 1] == '/' && !(n >= 3 && r[n - 2] == '/' && r[n - 3] == ':')) r[--n] = '\0';
    return r;
}

static bool from_files(const kc_set *set, const char *context, const char *master, ks_kube_config *out, char **err) {
    ks_strbuf names;
    ks_sb_init(&names);
    for (size_t i = 0; i < set->n; i++) ks_sb_printf(&names, "%s%s", i ? ":" : "", set->files[i].path);
    const char *ctx = context && *context ? context : NULL;
    for (size_t i = 0; !ctx && i < set->n; i++) {
        const ks_tree *cc = kt_get(set->files[i].root, "current-context");
        if (cc && cc->type != KT_NULL && cc->type != KT_MAP && cc->type != KT_SEQ && cc->text && *cc->text)
            ctx = cc->text;
    }
    out->source = ks_xstrdup(ks_sb_str(&names));
    bool ok = false;
    const char *cluster = NULL, *user = NULL;
    if (!ctx) {
        if (!master) {
            ks_set_error(err, "kubeconfig %s: no current-context set and no context or --master given", ks_sb_str(&names));
            goto done;
        }
    } else {
        const ks_tree *body;
        const kc_file *f;
        if (!find(set, 2, ctx, &body, &f)) {
            ks_set_error(err, "kubeconfig %s: context \"%s\" not found", ks_sb_str(&names), ctx);
            goto done;
        }
        char where[300];
        snprintf(where, sizeof(where), "context \"%s\"", ctx);
        kc_ctx x = {f, where, err};
        if (!get_str(&x, body, "cluster", &cluster) || !get_str(&x, body, "user", &user)) goto done;
        if (!cluster && !master) {
            ks_set_error(err, "%s: %s: cluster: cluster was not specified", f->path, where);
            goto done;
        }
    }
    if (cluster) {
        const ks_tree *body;
        const kc_file *f;
        if (!find(set, 0, cluster, &body, &f)) {
            ks_set_error(err, "kubeconfig %s: cluster \"%s\" (of context \"%s\") not found", ks_sb_str(&names), cluster, ctx);
            goto done;
        }
        char where[300];
        snprintf(where, sizeof(where), "cluster \"%s\"", cluster);
        kc_ctx x = {f, where, err};
        if (!read_cluster(&x, body, master, out)) goto done;
    }
    if (user) {
        const ks_tree *body;
        const kc_file *f;
        if (!find(set, 1, user, &body, &f)) {
            ks_set_error(err, "kubeconfig %s: user \"%s\" (of context \"%s\") not found", ks_sb_str(&names), user, ctx);
            goto done;
        }
        char where[300];
        snprintf(where, sizeof(where), "user \"%s\"", user);
        kc_ctx x = {f, where, err};
        if (!read_user(&x, body, out)) goto done;
    }
    if (master) out->server = ks_xstrdup(master);
    ok = true;
done:
    ks_sb_free(&names);
    return ok;
}

static bool in_cluster(ks_kube_config *out, char **err) {
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = getenv(KS_KUBE_SA_DIR_ENV);
    if (!dir || !*dir) dir = KS_KUBE_SA_DIR;
    char *tf = ks_xasprintf("%s/token", dir);
    char *tok = slurp(tf, NULL);
    if (!tok) {
        ks_set_error(err, "in-cluster configuration: cannot read the service account token %s: %s", tf, strerror(errno));
        free(tf);
        return false;
    }
    free(tok);
    out->token_file = tf;
    char *ca = ks_xasprintf("%s/ca.crt", dir);
    if (access(ca, R_OK) == 0) {
        out->ca_file = ca;
    } else {
        /* client-go logs this and goes on with the system's roots */
        ks_infof(1, "in-cluster configuration: cannot read the root CA %s: %s", ca, strerror(errno));
        free(ca);
    }
    /* an IPv6 address goes in brackets (net.JoinHostPort) */
    out->server = strchr(host, ':') ? ks_xasprintf("https://[%s]:%s", host, port) : ks_xasprintf("https://%s:%s", host, port);
    out->source = ks_xasprintf("in-cluster service account (%s)", dir);
    return true;
}

bool ks_kube_config_load(const char *path, const char *context, const char *master, ks_kube_config *out, char **err) {
    memset(out, 0, sizeof(*out));
    *err = NULL;
    if (master && !*master) master = NULL;
    kc_set set = {.a = ks_arena_new(0)};
    bool ok = false;
    char *incluster_err = NULL;
    if (path && *path) {
        ok = add_file(&set, path, true, err) && from_files(&set, context, master, out, err);
        goto done;
    }
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!master && host && *host && port && *port) {
        if (in_cluster(out, &incluster_err)) {
            ok = true;
            goto done;
        }
        ks_kube_config_free(out);
        memset(out, 0, sizeof(*out));
    }
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        char *list = ks_xstrdup(env), *save = NULL;
        ok = true;
        for (char *p = strtok_r(list, ":", &save); ok && p; p = strtok_r(NULL, ":", &save))
            ok = add_file(&set, p, false, err);
        free(list);
        if (ok && set.n == 0) {
            ok = ks_set_error(err, "$KUBECONFIG (%s): none of its files exists", env);
            goto done;
        }
        if (ok) ok = from_files(&set, context, master, out, err);
        goto done;
    }
    if (master) {
        out->source = ks_xstrdup("--master");
        out->server = ks_xstrdup(master);
        ok = true;
        goto done;
    }
    if (incluster_err) {
        *err = incluster_err;
        incluster_err = NULL;
    } else {
        ks_set_error(err, "no API server configuration: give --kubeconfig or --master, set $KUBECONFIG, or run in a pod "
                  "(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)");
    }
done:
    free(incluster_err);
    set_free(&set);
    if (ok) {
        bool tls = out->ca_file || out->ca_data || out->insecure || out->cert_file || out->cert_data;
        char *s = normalise_server(out->server, tls);
        free(out->server);
        out->server = s;
    } else {
        ks_kube_config_free(out);
        memset(out, 0, sizeof(*out));
    }
    return ok;
}

static char **strv_dup(char *const *v) {
    if (!v) return NULL;
    size_t n = 0;
    while (v[n]) n++;
    char **r = ks_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) r[i] = ks_xstrdup(v[i]);
    return r;
}

static void strv_free(char **v) {
    for (size_t i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

static char *dup_or_null(const char *s) { return s ? ks_xstrdup(s) : NULL; }

static char *mem_dup(const char *s, size_t n) {
    if (!s) return NULL;
    char *r = ks_xmalloc(n + 1);
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

void ks_kube_config_copy(ks_kube_config *dst, const ks_kube_config *src) {
    memset(dst, 0, sizeof(*dst));
    dst->server = dup_or_null(src->server);
    dst->tls_server_name = dup_or_null(src->tls_server_name);
    dst->insecure = src->insecure;
    dst->ca_file = dup_or_null(src->ca_file);
    dst->ca_data = mem_dup(src->ca_data, src->ca_len);
    dst->ca_len = src->ca_len;
    dst->cert_file = dup_or_null(src->cert_file);
    dst->key_file = dup_or_null(src->key_file);
    dst->cert_data = mem_dup(src->cert_data, src->cert_len);
    dst->key_data = mem_dup(src->key_data, src->key_len);
    dst->cert_len = src->cert_len;
    dst->key_len = src->key_len;
    dst->token = dup_or_null(src->token);
    dst->token_file = dup_or_null(src->token_file);
    dst->username = dup_or_null(src->username);
    dst->password = dup_or_null(src->password);
    dst->source = dup_or_null(src->source);
    dst->proxy_url = dup_or_null(src->proxy_url);
    dst->disable_compression = src->disable_compression;
    if (src->exec) {
        ks_kube_exec *e = ks_xcalloc(1, sizeof(*e));
        e->api_version = dup_or_null(src->exec->api_version);
        e->command = dup_or_null(src->exec->command);
        e->args = strv_dup(src->exec->args);
        e->env = strv_dup(src->exec->env);
        e->provide_cluster_info = src->exec->provide_cluster_info;
        e->install_hint = dup_or_null(src->exec->install_hint);
        dst->exec = e;
    }
}

void ks_kube_config_free(ks_kube_config *c) {
    if (!c) return;
    free(c->server);
    free(c->tls_server_name);
    free(c->ca_file);
    free(c->ca_data);
    free(c->cert_file);
    free(c->key_file);
    free(c->cert_data);
    free(c->key_data);
    free(c->token);
    free(c->token_file);
    free(c->username);
    free(c->password);
    free(c->source);
    free(c->proxy_url);
    if (c->exec) {
        free(c->exec->api_version);
        free(c->exec->command);
        strv_free(c->exec->args);
        strv_free(c->exec->env);
        free(c->exec->install_hint);
        free(c->exec);
    }
    memset(c, 0, sizeof(*c));
}
