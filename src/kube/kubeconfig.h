/* Where the API server is and how to authenticate to it, as client-go's
 * clientcmd resolves it for kube-scheduler: an explicit kubeconfig file
 * (--kubeconfig or clientConnection.kubeconfig), else $KUBECONFIG (a
 * colon-separated list, merged first-wins), else the in-cluster service
 * account (KUBERNETES_SERVICE_HOST/PORT, the token and CA under
 * /var/run/secrets/kubernetes.io/serviceaccount). --master overrides the
 * server. The current context (or the one named) picks cluster and user. */
#ifndef KS_KUBECONFIG_H
#define KS_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ks_kube_exec {
    char *api_version;  /* client.authentication.k8s.io/v1 or v1beta1 */
    char *command;
    char **args;        /* NULL-terminated */
    char **env;         /* NULL-terminated "NAME=value" */
    bool provide_cluster_info;
} ks_kube_exec;

typedef struct ks_kube_config {
    char *server;                 /* "https://host:port" (no trailing /) */
    char *tls_server_name;        /* NULL: the server's host */
    bool insecure;                /* insecure-skip-tls-verify */
    char *ca_file;                /* PEM file, or NULL */
    char *ca_data;                /* PEM bytes (decoded), or NULL */
    size_t ca_len;
    char *cert_file, *key_file;   /* client certificate files, or NULL */
    char *cert_data, *key_data;   /* PEM bytes (decoded), or NULL */
    size_t cert_len, key_len;
    char *token;                  /* bearer token, or NULL */
    char *token_file;             /* re-read when it changes, or NULL */
    char *username, *password;    /* basic auth, or NULL */
    ks_kube_exec *exec;           /* exec credential plugin, or NULL */
    char *source;                 /* where this came from, for messages */
} ks_kube_config;

/* Resolve as described above. path NULL/"" = $KUBECONFIG or in-cluster;
 * context NULL = current-context; master NULL = from the file. Returns
 * false with *err (malloc'd; names the file and field) on failure. */
bool ks_kube_config_load(const char *path, const char *context, const char *master,
                         ks_kube_config *out, char **err);
void ks_kube_config_free(ks_kube_config *c);

#endif
