/* Where the API server is and how to authenticate to it, as client-go's
 * clientcmd resolves it for kube-scheduler (BuildConfigFromFlags): an
 * explicit kubeconfig file (--kubeconfig or clientConnection.kubeconfig);
 * else, with no --master either, the in-cluster service account
 * (KUBERNETES_SERVICE_HOST/PORT, the token and CA under
 * /var/run/secrets/kubernetes.io/serviceaccount, or $KSCHED_SERVICE_ACCOUNT_DIR);
 * else $KUBECONFIG (a colon-separated list, merged first-wins; a ksched
 * addition: kube-scheduler does not read it); else --master alone.
 * --master overrides the server. The current context (or the one named)
 * picks cluster and user. Relative paths in a file are relative to the
 * file's directory. */
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
    char *install_hint;  /* shown when the command is not found, or NULL */
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
    char *proxy_url;              /* proxy-url, or NULL */
    bool disable_compression;     /* disable-compression */
} ks_kube_config;

/* Resolve as described above. path NULL/"" = $KUBECONFIG or in-cluster;
 * context NULL = current-context; master NULL = from the file. Returns
 * false with *err (malloc'd; names the file and field) on failure. */
bool ks_kube_config_load(const char *path, const char *context, const char *master,
                         ks_kube_config *out, char **err);
void ks_kube_config_free(ks_kube_config *c);
/* Deep copy (dst is overwritten, free it with ks_kube_config_free). */
void ks_kube_config_copy(ks_kube_config *dst, const ks_kube_config *src);

/* The environment variable naming the service account directory (tests). */
#define KS_KUBE_SA_DIR_ENV "KSCHED_SERVICE_ACCOUNT_DIR"
#define KS_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

#endif
