#include "server/auth.h"

#include "util/clock.h"
#include "util/hash.h"
#include "util/openssl_lazy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_TTL (10 * KS_NS_PER_SEC)
/* Entries per cache: enough for every scraper and prober of a cluster;
 * past it the expired go, and if none has, all do. */
#define CACHE_MAX 1024

/* ---- users -------------------------------------------------------------- */

void ks_user_info_free(ks_user_info *u) {
    if (!u) return;
    free(u->name);
    free(u->uid);
    for (size_t i = 0; i < u->ngroups; i++) free(u->groups[i]);
    free(u->groups);
    memset(u, 0, sizeof(*u));
}

void ks_user_info_add_group(ks_user_info *u, const char *g) {
    for (size_t i = 0; i < u->ngroups; i++)
        if (strcmp(u->groups[i], g) == 0) return;
    u->groups = ks_xrealloc(u->groups, (u->ngroups + 1) * sizeof(char *));
    u->groups[u->ngroups++] = ks_xstrdup(g);
}

static void user_copy(ks_user_info *dst, const ks_user_info *src) {
    memset(dst, 0, sizeof(*dst));
    dst->name = ks_xstrdup(src->name ? src->name : "");
    dst->uid = src->uid ? ks_xstrdup(src->uid) : NULL;
    for (size_t i = 0; i < src->ngroups; i++) ks_user_info_add_group(dst, src->groups[i]);
}

/* ---- caches -------------------------------------------------------------- */

typedef struct entry {
    char *key;      /* token digest (hex) or the access request */
    int64_t expires;
    int verdict;    /* 1 / 0 */
    ks_user_info user;
    char *reason;
} entry;

typedef struct cache {
    ks_map index; /* key hash -> entry index + 1 */
    entry *v;
    size_t n, cap;
} cache;

static void entry_free(entry *e) {
    free(e->key);
    free(e->reason);
    ks_user_info_free(&e->user);
}

static void cache_rebuild(cache *c) {
    ks_map_clear(&c->index);
    for (size_t i = 0; i < c->n; i++)
        ks_map_put(&c->index, ks_hash_bytes(c->v[i].key, strlen(c->v[i].key)) | 1, (void *)(uintptr_t)(i + 1));
}

static entry *cache_get(cache *c, const char *key, int64_t now) {
    void *p = ks_map_get(&c->index, ks_hash_bytes(key, strlen(key)) | 1);
    if (!p) return NULL;
    entry *e = &c->v[(uintptr_t)p - 1];
    if (strcmp(e->key, key) != 0 || e->expires <= now) return NULL;
    return e;
}

static void cache_put(cache *c, entry *e, int64_t now) {
    uint64_t h = ks_hash_bytes(e->key, strlen(e->key)) | 1;
    void *p = ks_map_get(&c->index, h);
    if (p) { /* replace (same key, or a colliding one: the newer wins) */
        entry *old = &c->v[(uintptr_t)p - 1];
        entry_free(old);
        *old = *e;
        return;
    }
    if (c->n == CACHE_MAX) {
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (c->v[i].expires > now) c->v[k++] = c->v[i];
            else entry_free(&c->v[i]);
        }
        if (k == CACHE_MAX) {
            for (size_t i = 0; i < k; i++) entry_free(&c->v[i]);
            k = 0;
        }
        c->n = k;
        cache_rebuild(c);
    }
    KS_GROW(c->v, c->cap, c->n + 1);
    c->v[c->n++] = *e;
    ks_map_put(&c->index, h, (void *)(uintptr_t)c->n);
}

static void cache_free(cache *c) {
    for (size_t i = 0; i < c->n; i++) entry_free(&c->v[i]);
    free(c->v);
    ks_map_free(&c->index);
}

/* ---- the authorizer ---------------------------------------------------------- */

struct ks_auth {
    ks_token_reviewer authn;
    bool has_authn;
    ks_access_reviewer authz;
    bool has_authz;
    char **paths;
    size_t npaths;
    char **groups;
    size_t ngroups;
    int64_t authn_ttl, allow_ttl, deny_ttl;
    int64_t (*now)(void);
    pthread_mutex_t mu;
    cache tokens, access;
    uint64_t token_reviews, access_reviews;
};

static char **copy_list(const char *const *v, size_t n) {
    char **out = ks_xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) out[i] = ks_xstrdup(v[i]);
    return out;
}

ks_auth *ks_auth_new(const ks_auth_options *o) {
    ks_auth *a = ks_xcalloc(1, sizeof(*a));
    static const ks_auth_options none = {0};
    if (!o) o = &none;
    if (o->authn) {
        a->authn = *o->authn;
        a->has_authn = true;
    }
    if (o->authz) {
        a->authz = *o->authz;
        a->has_authz = true;
    }
    static const char *const default_paths[] = {"/healthz", "/readyz", "/livez"};
    static const char *const default_groups[] = {"system:masters"};
    if (o->no_always_allow_paths) {
        a->paths = copy_list(NULL, 0);
    } else if (o->always_allow_paths) {
        a->paths = copy_list(o->always_allow_paths, o->nalways_allow_paths);
        a->npaths = o->nalways_allow_paths;
    } else {
        a->paths = copy_list(default_paths, 3);
        a->npaths = 3;
    }
    if (o->always_allow_groups) {
        a->groups = copy_list(o->always_allow_groups, o->nalways_allow_groups);
        a->ngroups = o->nalways_allow_groups;
    } else {
        a->groups = copy_list(default_groups, 1);
        a->ngroups = 1;
    }
    a->authn_ttl = o->authn_ttl_ns > 0 ? o->authn_ttl_ns : DEFAULT_TTL;
    a->allow_ttl = o->allow_ttl_ns > 0 ? o->allow_ttl_ns : DEFAULT_TTL;
    a->deny_ttl = o->deny_ttl_ns > 0 ? o->deny_ttl_ns : DEFAULT_TTL;
    a->now = o->now_ns ? o->now_ns : ks_monotonic_ns;
    pthread_mutex_init(&a->mu, NULL);
    ks_map_init(&a->tokens.index);
    ks_map_init(&a->access.index);
    return a;
}

void ks_auth_free(ks_auth *a) {
    if (!a) return;
    for (size_t i = 0; i < a->npaths; i++) free(a->paths[i]);
    free(a->paths);
    for (size_t i = 0; i < a->ngroups; i++) free(a->groups[i]);
    free(a->groups);
    cache_free(&a->tokens);
    cache_free(&a->access);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

void ks_auth_counts(ks_auth *a, uint64_t *token_reviews, uint64_t *access_reviews) {
    pthread_mutex_lock(&a->mu);
    *token_reviews = a->token_reviews;
    *access_reviews = a->access_reviews;
    pthread_mutex_unlock(&a->mu);
}

/* ---- responses ------------------------------------------------------------- */

/* A JSON string as Go's encoding/json writes it (<, >, & escaped too). */
static void json_str(ks_strbuf *b, const char *s) {
    ks_sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': ks_sb_puts(b, "\\\""); break;
        case '\\': ks_sb_puts(b, "\\\\"); break;
        case '\n': ks_sb_puts(b, "\\n"); break;
        case '\r': ks_sb_puts(b, "\\r"); break;
        case '\t': ks_sb_puts(b, "\\t"); break;
        case '<': ks_sb_puts(b, "\\u003c"); break;
        case '>': ks_sb_puts(b, "\\u003e"); break;
        case '&': ks_sb_puts(b, "\\u0026"); break;
        default:
            if (*p < 0x20) ks_sb_printf(b, "\\u%04x", *p);
            else ks_sb_putc(b, (char)*p);
        }
    }
    ks_sb_putc(b, '"');
}

static void set_unauthorized(ks_auth_result *out) {
    out->status = 401;
    out->content_type = "application/json";
    out->body = ks_xstrdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                           "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n");
}

/* Upstream's responsewriters sanitizer on the message. */
static void put_sanitized(ks_strbuf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '&') ks_sb_puts(b, "&amp;");
        else if (*s == '<') ks_sb_puts(b, "&lt;");
        else if (*s == '>') ks_sb_puts(b, "&gt;");
        else ks_sb_putc(b, *s);
    }
}

static void set_forbidden(ks_auth_result *out, const char *user, const char *verb, const char *path,
                          const char *reason) {
    ks_strbuf m;
    ks_sb_init(&m);
    ks_strbuf raw;
    ks_sb_init(&raw);
    ks_sb_puts(&raw, "User ");
    json_str(&raw, user); /* Go's %q: close enough for user names and paths */
    ks_sb_printf(&raw, " cannot %s path ", verb);
    json_str(&raw, path);
    ks_sb_puts(&m, "forbidden: ");
    put_sanitized(&m, ks_sb_str(&raw));
    if (reason && *reason) {
        ks_sb_puts(&m, ": ");
        ks_sb_puts(&m, reason);
    }
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":");
    json_str(&b, ks_sb_str(&m));
    ks_sb_puts(&b, ",\"reason\":\"Forbidden\",\"details\":{},\"code\":403}\n");
    out->status = 403;
    out->content_type = "application/json";
    out->body = ks_sb_take(&b);
    ks_sb_free(&m);
    ks_sb_free(&raw);
}

static void set_internal_error(ks_auth_result *out, const char *uri, const char *err) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "Internal Server Error: ");
    json_str(&b, uri);
    ks_sb_printf(&b, ": %s\n", err ? err : "");
    out->status = 500;
    out->content_type = "text/plain; charset=utf-8";
    out->body = ks_sb_take(&b);
}

void ks_auth_result_free(ks_auth_result *r) {
    free(r->body);
    free(r->user);
    memset(r, 0, sizeof(*r));
}

/* ---- the decision ------------------------------------------------------------- */

/* "Bearer <token>" (scheme case-insensitive, spaces trimmed), else NULL. */
static char *bearer_token(const char *h) {
    if (!h) return NULL;
    while (*h == ' ') h++;
    if (strncasecmp(h, "bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t')) return NULL;
    h += 6;
    while (*h == ' ' || *h == '\t') h++;
    size_t n = strlen(h);
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\t')) n--;
    /* A token has no spaces inside. */
    if (n == 0 || memchr(h, ' ', n)) return NULL;
    return ks_xstrndup(h, n);
}

/* The cache key of a token: its SHA-256, so that tokens are not kept in
 * memory (as upstream's cached token authenticator does). NULL when
 * OpenSSL is missing: nothing is cached then. */
static char *token_key(const char *token) {
    const ks_openssl_api *o = ks_openssl(NULL);
    if (!o) return NULL;
    unsigned char d[32];
    unsigned int n = 0;
    if (o->EVP_Digest(token, strlen(token), d, &n, o->EVP_sha256(), NULL) != 1 || n != 32) return NULL;
    char *hex = ks_xmalloc(65);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return hex;
}

/* 1 authenticated, 0 anonymous, -1 rejected (401). */
static int authenticate(ks_auth *a, const char *authorization, ks_user_info *u) {
    char *token = a->has_authn ? bearer_token(authorization) : NULL;
    if (!token) {
        u->name = ks_xstrdup("system:anonymous");
        ks_user_info_add_group(u, "system:unauthenticated");
        return 0;
    }
    char *key = token_key(token);
    int64_t now = a->now();
    pthread_mutex_lock(&a->mu);
    entry *e = key ? cache_get(&a->tokens, key, now) : NULL;
    int verdict = e ? e->verdict : -1;
    if (e && verdict == 1) user_copy(u, &e->user);
    if (!e) a->token_reviews++;
    pthread_mutex_unlock(&a->mu);
    if (!e) {
        char *err = NULL;
        ks_user_info got = {0};
        int r = a->authn.review(a->authn.arg, token, &got, &err);
        free(err);
        if (r >= 0) {
            verdict = r;
            if (r == 1) user_copy(u, &got);
            if (key) {
                entry ne = {.key = key, .expires = now + a->authn_ttl, .verdict = r};
                if (r == 1) user_copy(&ne.user, &got);
                key = NULL;
                pthread_mutex_lock(&a->mu);
                cache_put(&a->tokens, &ne, now);
                pthread_mutex_unlock(&a->mu);
            }
        } else {
            verdict = 0; /* a failed review rejects, uncached */
        }
        ks_user_info_free(&got);
    }
    free(key);
    free(token);
    if (verdict != 1) {
        ks_user_info_free(u);
        return -1;
    }
    ks_user_info_add_group(u, "system:authenticated");
    return 1;
}

static bool path_allowed(const ks_auth *a, const char *path) {
    for (size_t i = 0; i < a->npaths; i++) {
        const char *p = a->paths[i];
        size_t n = strlen(p);
        if (n && p[n - 1] == '*') {
            if (strncmp(path, p, n - 1) == 0) return true;
        } else if (strcmp(path, p) == 0) {
            return true;
        }
    }
    return false;
}

static bool group_allowed(const ks_auth *a, const ks_user_info *u) {
    for (size_t i = 0; i < a->ngroups; i++)
        for (size_t k = 0; k < u->ngroups; k++)
            if (strcmp(a->groups[i], u->groups[k]) == 0) return true;
    return false;
}

static char *access_key(const ks_user_info *u, const char *verb, const char *path) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_printf(&b, "%s\x1f%s", u->name, u->uid ? u->uid : "");
    for (size_t i = 0; i < u->ngroups; i++) ks_sb_printf(&b, "\x1fg:%s", u->groups[i]);
    ks_sb_printf(&b, "\x1e%s\x1e%s", verb, path);
    return ks_sb_take(&b);
}

void ks_auth_check(ks_auth *a, const char *authorization, const char *method, const char *path, const char *uri,
                   ks_auth_result *out) {
    memset(out, 0, sizeof(*out));
    ks_user_info u = {0};
    if (authenticate(a, authorization, &u) < 0) {
        out->user = ks_xstrdup("");
        set_unauthorized(out);
        return;
    }
    out->user = ks_xstrdup(u.name);
    if (group_allowed(a, &u) || path_allowed(a, path)) {
        ks_user_info_free(&u);
        return;
    }
    char verb[16];
    size_t i = 0;
    for (; method[i] && i + 1 < sizeof(verb); i++) verb[i] = (char)tolower((unsigned char)method[i]);
    verb[i] = 0;
    if (!a->has_authz) {
        set_forbidden(out, u.name, verb, path, NULL);
        ks_user_info_free(&u);
        return;
    }
    char *key = access_key(&u, verb, path);
    int64_t now = a->now();
    pthread_mutex_lock(&a->mu);
    entry *e = cache_get(&a->access, key, now);
    int verdict = e ? e->verdict : -1;
    char *reason = e && e->reason ? ks_xstrdup(e->reason) : NULL;
    if (!e) a->access_reviews++;
    pthread_mutex_unlock(&a->mu);
    if (!e) {
        char *err = NULL;
        verdict = a->authz.review(a->authz.arg, &u, verb, path, &reason, &err);
        if (verdict < 0) {
            set_internal_error(out, uri ? uri : path, err);
            free(err);
            free(reason);
            free(key);
            ks_user_info_free(&u);
            return;
        }
        free(err);
        entry ne = {.key = key, .expires = now + (verdict == 1 ? a->allow_ttl : a->deny_ttl), .verdict = verdict,
                    .reason = reason ? ks_xstrdup(reason) : NULL};
        key = NULL;
        pthread_mutex_lock(&a->mu);
        cache_put(&a->access, &ne, now);
        pthread_mutex_unlock(&a->mu);
    }
    if (verdict != 1) set_forbidden(out, u.name, verb, path, reason);
    free(reason);
    free(key);
    ks_user_info_free(&u);
}
