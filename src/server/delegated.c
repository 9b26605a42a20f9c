#include "server/delegated.h"

#include "util/log.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ks_delegated {
    ks_kube_client *client;
    bool owns_client;
    ks_token_reviewer tokens;
    ks_access_reviewer access;
};

/* ---- bodies ------------------------------------------------------------------ */

char *ks_token_review_body(const char *token) {
    json_t *o = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind", "TokenReview",
                          "spec", "token", token);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static char *xstr(json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? ks_xstrdup(s) : NULL;
}

int ks_token_review_decode(const char *body, size_t len, ks_user_info *u, char **err) {
    json_error_t je;
    json_t *o = json_loadb(body ? body : "", len, 0, &je);
    if (!o) {
        *err = ks_xasprintf("decoding the TokenReview: %s", je.text);
        return -1;
    }
    json_t *st = json_object_get(o, "status");
    int r = 0;
    if (json_is_true(json_object_get(st, "authenticated"))) {
        json_t *user = json_object_get(st, "user");
        u->name = xstr(user, "username");
        if (!u->name) u->name = ks_xstrdup("");
        u->uid = xstr(user, "uid");
        json_t *gs = json_object_get(user, "groups");
        size_t i;
        json_t *g;
        json_array_foreach(gs, i, g) {
            if (json_is_string(g)) ks_user_info_add_group(u, json_string_value(g));
        }
        r = 1;
    } else {
        /* not authenticated; upstream logs the review's error, if any */
        char *e = xstr(st, "error");
        if (e) ks_infof(4, "\"Token review rejected the token\" err=\"%s\"", e);
        free(e);
    }
    json_decref(o);
    return r;
}

char *ks_access_review_body(const ks_user_info *u, const char *verb, const char *path) {
    json_t *groups = json_array();
    for (size_t i = 0; i < u->ngroups; i++) json_array_append_new(groups, json_string(u->groups[i]));
    json_t *spec = json_pack("{s:{s:s, s:s}, s:s, s:o}", "nonResourceAttributes", "path", path, "verb", verb, "user",
                             u->name ? u->name : "", "groups", groups);
    if (u->uid && *u->uid) json_object_set_new(spec, "uid", json_string(u->uid));
    json_t *o = json_pack("{s:s, s:s, s:o}", "apiVersion", "authorization.k8s.io/v1", "kind", "SubjectAccessReview",
                          "spec", spec);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

int ks_access_review_decode(const char *body, size_t len, char **reason, char **err) {
    json_error_t je;
    json_t *o = json_loadb(body ? body : "", len, 0, &je);
    if (!o) {
        *err = ks_xasprintf("decoding the SubjectAccessReview: %s", je.text);
        return -1;
    }
    json_t *st = json_object_get(o, "status");
    int r = json_is_true(json_object_get(st, "allowed")) ? 1 : 0;
    char *why = xstr(st, "reason");
    if (why && *why) *reason = why;
    else free(why);
    json_decref(o);
    return r;
}

/* ---- requests ------------------------------------------------------------------ */

/* POST a review; the answer body on 200/201, else -1 with *err. */
static int post(ks_delegated *d, const char *path, char *body, ks_kube_response *resp, char **err) {
    ks_kube_request req = {.method = "POST", .path = path, .body = body, .body_len = strlen(body),
                           .idempotent = true};
    ks_kube_do(d->client, &req, resp);
    free(body);
    if (resp->code == 200 || resp->code == 201) return 0;
    if (resp->code == 0) {
        *err = ks_xasprintf("%s: %s", path, resp->error ? resp->error : "no answer");
    } else {
        char *m = ks_kube_status_message(resp->body, resp->body_len);
        *err = ks_xasprintf("%s: %ld %s", path, resp->code, m ? m : "");
        free(m);
    }
    ks_kube_response_free(resp);
    return -1;
}

static int review_token(void *arg, const char *token, ks_user_info *u, char **err) {
    ks_delegated *d = arg;
    ks_kube_response resp = {0};
    if (post(d, "/apis/authentication.k8s.io/v1/tokenreviews", ks_token_review_body(token), &resp, err) < 0)
        return -1;
    int r = ks_token_review_decode(resp.body, resp.body_len, u, err);
    ks_kube_response_free(&resp);
    return r;
}

static int review_access(void *arg, const ks_user_info *u, const char *verb, const char *path, char **reason,
                         char **err) {
    ks_delegated *d = arg;
    ks_kube_response resp = {0};
    if (post(d, "/apis/authorization.k8s.io/v1/subjectaccessreviews", ks_access_review_body(u, verb, path), &resp,
             err) < 0)
        return -1;
    int r = ks_access_review_decode(resp.body, resp.body_len, reason, err);
    ks_kube_response_free(&resp);
    return r;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

ks_delegated *ks_delegated_new_with_client(ks_kube_client *c) {
    ks_delegated *d = ks_xcalloc(1, sizeof(*d));
    d->client = c;
    d->tokens = (ks_token_reviewer){review_token, d};
    d->access = (ks_access_reviewer){review_access, d};
    return d;
}

ks_delegated *ks_delegated_new(const char *kubeconfig, const char *what, char **err) {
    *err = NULL;
    bool explicit_file = kubeconfig && *kubeconfig;
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!explicit_file && !(host && *host && port && *port)) return NULL;
    ks_kube_config cfg;
    char *e = NULL;
    /* No file: ks_kube_config_load takes the in-cluster account first
     * (the variables are set). */
    if (!ks_kube_config_load(explicit_file ? kubeconfig : NULL, NULL, NULL, &cfg, &e)) {
        if (explicit_file) {
            *err = ks_xasprintf("failed to get delegated %s kubeconfig: %s", what, e);
            free(e);
            return NULL;
        }
        /* optional, as kube-scheduler's: warn and go on without */
        ks_warnf("failed to read in-cluster kubeconfig for delegated %s: %s", what, e);
        free(e);
        return NULL;
    }
    ks_kube_client_options o = {.config = &cfg, .qps = 200, .burst = 400, .max_retries = 5, .timeout_ms = 10000};
    ks_kube_client *c = ks_kube_client_new(&o, &e);
    ks_kube_config_free(&cfg);
    if (!c) {
        *err = ks_xasprintf("delegated %s client: %s", what, e);
        free(e);
        return NULL;
    }
    ks_delegated *d = ks_delegated_new_with_client(c);
    d->owns_client = true;
    return d;
}

void ks_delegated_free(ks_delegated *d) {
    if (!d) return;
    if (d->owns_client) ks_kube_client_free(d->client);
    free(d);
}

const ks_token_reviewer *ks_delegated_token_reviewer(ks_delegated *d) { return d ? &d->tokens : NULL; }
const ks_access_reviewer *ks_delegated_access_reviewer(ks_delegated *d) { return d ? &d->access : NULL; }
