/* Who may read the serving endpoints: authentication and authorization
 * delegated to the API server as kube-scheduler delegates them
 * (k8s.io/apiserver DelegatingAuthenticationOptions and
 * DelegatingAuthorizationOptions):
 *
 *   - a bearer token is reviewed (TokenReview); an invalid one is 401;
 *     no token (or no reviewer configured) is the anonymous user
 *     system:anonymous in group system:unauthenticated; an authenticated
 *     user also gets group system:authenticated;
 *   - a member of an always-allowed group (system:masters) or a request
 *     for an always-allowed path (--authorization-always-allow-paths,
 *     default /healthz,/readyz,/livez; a trailing "*" makes a prefix) is allowed;
 *   - anything else is asked of the API server (SubjectAccessReview, the
 *     non-resource path and the verb: the method in lower case); with no
 *     reviewer configured it is forbidden (403);
 *   - decisions are cached: token reviews 10 s, allowed and denied
 *     access reviews 10 s each (upstream's defaults); errors are not.
 *
 * The reviewers are callbacks (server/delegated.c makes them on the kube
 * client), so that all of this is tested without an API server. */
#ifndef KS_SERVER_AUTH_H
#define KS_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ks_user_info {
    char *name;
    char *uid;
    char **groups;
    size_t ngroups;
} ks_user_info;

void ks_user_info_free(ks_user_info *u);
void ks_user_info_add_group(ks_user_info *u, const char *g);

/* TokenReview: 1 authenticated (*u filled), 0 not (the token is invalid),
 * -1 the review failed (*err, malloc'd). */
typedef struct ks_token_reviewer {
    int (*review)(void *arg, const char *token, ks_user_info *u, char **err);
    void *arg;
} ks_token_reviewer;

/* SubjectAccessReview of a non-resource request: 1 allowed, 0 denied or
 * no opinion (*reason may be set), -1 the review failed (*err). Strings
 * malloc'd. */
typedef struct ks_access_reviewer {
    int (*review)(void *arg, const ks_user_info *u, const char *verb, const char *path, char **reason, char **err);
    void *arg;
} ks_access_reviewer;

typedef struct ks_auth_options {
    const ks_token_reviewer *authn;  /* NULL: every request is anonymous */
    const ks_access_reviewer *authz; /* NULL: only the always-allowed */
    const char *const *always_allow_paths; /* NULL: /healthz /readyz /livez */
    size_t nalways_allow_paths;
    bool no_always_allow_paths;       /* an empty list, as --authorization-always-allow-paths= */
    const char *const *always_allow_groups; /* NULL: system:masters */
    size_t nalways_allow_groups;
    int64_t authn_ttl_ns;  /* 0: 10 s */
    int64_t allow_ttl_ns;  /* 0: 10 s */
    int64_t deny_ttl_ns;   /* 0: 10 s */
    int64_t (*now_ns)(void); /* NULL: the monotonic clock (tests move time) */
} ks_auth_options;

typedef struct ks_auth ks_auth;

ks_auth *ks_auth_new(const ks_auth_options *o);
void ks_auth_free(ks_auth *a);

/* The decision on one request. */
typedef struct ks_auth_result {
    int status;          /* 0 allowed, 401, 403 or 500 */
    char *body;          /* the response body when not allowed (malloc'd) */
    const char *content_type;
    char *user;          /* who it was (malloc'd), for the log */
} ks_auth_result;

/* authorization: the request's Authorization header (NULL if none);
 * method: "GET", ...; path: the request path; uri: path and query (the
 * 500 message quotes it). */
void ks_auth_check(ks_auth *a, const char *authorization, const char *method, const char *path, const char *uri,
                   ks_auth_result *out);
void ks_auth_result_free(ks_auth_result *r);

/* How many reviews went to the reviewers (tests check the cache). */
void ks_auth_counts(ks_auth *a, uint64_t *token_reviews, uint64_t *access_reviews);

#endif
