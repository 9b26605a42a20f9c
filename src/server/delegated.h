/* The reviewers of server/auth.h on the API server: TokenReview
 * (authentication.k8s.io/v1) and SubjectAccessReview
 * (authorization.k8s.io/v1) through a kube client of their own (qps 200,
 * burst 400, 10 s per request, as kube-scheduler's delegated clients).
 *
 * The kubeconfig is --authentication-kubeconfig / --authorization-
 * kubeconfig; without one, the in-cluster service account when running in
 * a pod, else nothing: upstream then serves every request as anonymous
 * (authentication) or forbids all but the always-allowed (authorization),
 * and says so in the log. */
#ifndef KS_DELEGATED_H
#define KS_DELEGATED_H

#include "kube/client.h"
#include "server/auth.h"

typedef struct ks_delegated ks_delegated;

/* what: "authentication" or "authorization" (for messages). NULL with
 * *err NULL when there is no kubeconfig and no in-cluster service account
 * (no reviewer); NULL with *err when the kubeconfig is bad. */
ks_delegated *ks_delegated_new(const char *kubeconfig, const char *what, char **err);
/* On an existing client (tests; not owned). */
ks_delegated *ks_delegated_new_with_client(ks_kube_client *c);
void ks_delegated_free(ks_delegated *d);

/* The reviewers (valid while d lives). */
const ks_token_reviewer *ks_delegated_token_reviewer(ks_delegated *d);
const ks_access_reviewer *ks_delegated_access_reviewer(ks_delegated *d);

/* The request bodies and the answers' decoding, exposed for tests. */
char *ks_token_review_body(const char *token);
int ks_token_review_decode(const char *body, size_t len, ks_user_info *u, char **err);
char *ks_access_review_body(const ks_user_info *u, const char *verb, const char *path);
int ks_access_review_decode(const char *body, size_t len, char **reason, char **err);

#endif
