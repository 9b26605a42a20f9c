/* Kubeconfig resolution: contexts, data and file fields, paths relative to
 * the file, $KUBECONFIG merging, in-cluster configuration, --master, exec
 * plugins, and errors that name the file and the field. */
#include "kube/kubeconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[256];

static void clear_env(void) {
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv(KS_KUBE_SA_DIR_ENV);
}

static int setup(void **st) {
    clear_env();
    snprintf(dir, sizeof(dir), "/tmp/ks_kube_config_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st) {
    clear_env();
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Write dir/name (creating subdirectories); returns the path (static). */
static const char *put(const char *name, const char *text) {
    static char path[8][512];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void load_ok(const char *path, const char *ctx, const char *master, ks_kube_config *c) {
    char *err = NULL;
    if (!ks_kube_config_load(path, ctx, master, c, &err)) fail_msg("load: %s", err);
    assert_null(err);
}

/* Load must fail with an error containing each of the strings given. */
static void load_err(const char *path, const char *ctx, const char *master, ...) {
    ks_kube_config c;
    char *err = NULL;
    assert_false(ks_kube_config_load(path, ctx, master, &c, &err));
    assert_non_null(err);
    va_list ap;
    va_start(ap, master);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(err, s)) fail_msg("error \"%s\" lacks \"%s\"", err, s);
    va_end(ap);
    assert_null(c.server);
    free(err);
}

static const char two_contexts[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: b\n"
    "clusters:\n"
    "- name: ca\n"
    "  cluster:\n"
    "    server: https://a.example:6443/\n"
    "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==\n"
    "    tls-server-name: kubernetes\n"
    "- name: cb\n"
    "  cluster:\n"
    "    server: https://b.example:6443\n"
    "    insecure-skip-tls-verify: true\n"
    "    certificate-authority: certs/ca.crt\n"
    "users:\n"
    "- name: ua\n"
    "  user:\n"
    "    token: token-a\n"
    "- name: ub\n"
    "  user:\n"
    "    client-certificate: certs/client.crt\n"
    "    client-key: /ABS/client.key\n"
    "contexts:\n"
    "- name: a\n"
    "  context: {cluster: ca, user: ua, namespace: x}\n"
    "- name: b\n"
    "  context: {cluster: cb, user: ub}\n";

static char *with_abs(const char *text) {
    /* replace /ABS with the temp directory */
    const char *p = strstr(text, "/ABS");
    char *r = malloc(strlen(text) + strlen(dir) + 1);
    sprintf(r, "%.*s%s%s", (int)(p - text), text, dir, p + 4);
    return r;
}

static void test_contexts_and_paths(void **st) {
    put("kube/certs/ca.crt", "CA\n");
    put("kube/certs/client.crt", "CERT\n");
    put("client.key", "KEY\n");
    char *text = with_abs(two_contexts);
    const char *path = put("kube/config", text);
    free(text);
    ks_kube_config c;
    /* current-context b: files resolved against the file's directory */
    load_ok(path, NULL, NULL, &c);
    assert_string_equal(c.server, "https://b.example:6443");
    assert_true(c.insecure);
    char want[512];
    snprintf(want, sizeof(want), "%s/kube/certs/ca.crt", dir);
    assert_string_equal(c.ca_file, want);
    snprintf(want, sizeof(want), "%s/kube/certs/client.crt", dir);
    assert_string_equal(c.cert_file, want);
    snprintf(want, sizeof(want), "%s/client.key", dir);
    assert_string_equal(c.key_file, want);
    assert_null(c.token);
    assert_null(c.ca_data);
    assert_string_equal(c.source, path);
    ks_kube_config_free(&c);
    /* context a: data decoded, trailing slash gone */
    load_ok(path, "a", NULL, &c);
    assert_string_equal(c.server, "https://a.example:6443");
    assert_string_equal(c.tls_server_name, "kubernetes");
    assert_non_null(c.ca_data);
    assert_int_equal(c.ca_len, strlen(c.ca_data));
    assert_true(strncmp(c.ca_data, "-----BEGIN CERTIFICATE-----\nAAA\n", 32) == 0);
    assert_string_equal(c.token, "token-a");
    assert_false(c.insecure);
    /* a copy is deep */
    ks_kube_config d;
    ks_kube_config_copy(&d, &c);
    ks_kube_config_free(&c);
    assert_string_equal(d.token, "token-a");
    assert_true(strncmp(d.ca_data, "-----BEGIN", 10) == 0);
    ks_kube_config_free(&d);
    /* --master overrides the server, keeps the rest */
    load_ok(path, "a", "https://override:443", &c);
    assert_string_equal(c.server, "https://override:443");
    assert_string_equal(c.token, "token-a");
    ks_kube_config_free(&c);
    load_err(path, "nope", NULL, "context \"nope\" not found", path, NULL);
}

static void test_json_and_token_file(void **st) {
    put("tok", "abc\n");
    const char *path = put("k.json",
                           "{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"current-context\":\"c\","
                           "\"clusters\":[{\"name\":\"k\",\"cluster\":{\"server\":\"http://127.0.0.1:8080\"}}],"
                           "\"users\":[{\"name\":\"u\",\"user\":{\"tokenFile\":\"tok\"}}],"
                           "\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":\"k\",\"user\":\"u\"}}]}");
    ks_kube_config c;
    load_ok(path, NULL, NULL, &c);
    char want[512];
    snprintf(want, sizeof(want), "%s/tok", dir);
    assert_string_equal(c.token_file, want);
    assert_null(c.token);
    assert_string_equal(c.server, "http://127.0.0.1:8080");
    ks_kube_config_free(&c);
}

/* $KUBECONFIG: the first file that sets a value wins; each file's
 * relative paths are its own; missing files are skipped. */
static void test_kubeconfig_merge(void **st) {
    put("one/ca.crt", "ONE\n");
    put("two/ca.crt", "TWO\n");
    const char *f1 = put("one/config",
                         "current-context: x\n"
                         "users:\n- name: u\n  user: {token: from-one}\n");
    const char *f2 = put("two/config",
                         "current-context: y\n"
                         "clusters:\n- name: c\n  cluster: {server: 'https://two:6443', certificate-authority: ca.crt}\n"
                         "users:\n- name: u\n  user: {token: from-two}\n"
                         "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                         "- name: y\n  context: {cluster: c}\n");
    char env[2048];
    snprintf(env, sizeof(env), "%s/missing:%s::%s", dir, f1, f2);
    setenv("KUBECONFIG", env, 1);
    ks_kube_config c;
    load_ok(NULL, NULL, NULL, &c);
    assert_string_equal(c.server, "https://two:6443");
    assert_string_equal(c.token, "from-one");
    char want[512];
    snprintf(want, sizeof(want), "%s/two/ca.crt", dir);
    assert_string_equal(c.ca_file, want);
    assert_non_null(strstr(c.source, f1));
    assert_non_null(strstr(c.source, f2));
    ks_kube_config_free(&c);
    /* context y has no user: anonymous */
    load_ok("", "y", NULL, &c);
    assert_null(c.token);
    ks_kube_config_free(&c);
    /* an explicit path is used alone */
    load_err(f1, NULL, NULL, "context \"x\" not found", f1, NULL);
    /* none of the listed files exists */
    snprintf(env, sizeof(env), "%s/missing", dir);
    setenv("KUBECONFIG", env, 1);
    load_err(NULL, NULL, NULL, "none of its files exists", NULL);
}

static void test_in_cluster(void **st) {
    put("sa/token", "sa-token\n");
    put("sa/ca.crt", "CA\n");
    char sa[512];
    snprintf(sa, sizeof(sa), "%s/sa", dir);
    setenv(KS_KUBE_SA_DIR_ENV, sa, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ks_kube_config c;
    load_ok(NULL, NULL, NULL, &c);
    assert_string_equal(c.server, "https://10.96.0.1:443");
    char want[600];
    snprintf(want, sizeof(want), "%s/token", sa);
    assert_string_equal(c.token_file, want);
    snprintf(want, sizeof(want), "%s/ca.crt", sa);
    assert_string_equal(c.ca_file, want);
    assert_non_null(strstr(c.source, "in-cluster"));
    ks_kube_config_free(&c);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    load_ok(NULL, NULL, NULL, &c);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    ks_kube_config_free(&c);
    /* --master wins over in-cluster (client-go's BuildConfigFromFlags) */
    load_ok(NULL, NULL, "127.0.0.1:8080", &c);
    assert_string_equal(c.server, "http://127.0.0.1:8080");
    assert_null(c.token_file);
    ks_kube_config_free(&c);
    /* no token: the error says which file */
    snprintf(want, sizeof(want), "%s/token", sa);
    unlink(want);
    load_err(NULL, NULL, NULL, "service account token", want, NULL);
    clear_env();
    load_err(NULL, NULL, NULL, "no API server configuration", NULL);
}

static void test_exec(void **st) {
    const char *path = put("exec/config",
                           "current-context: c\n"
                           "clusters:\n- name: k\n  cluster: {server: 'https://k:6443'}\n"
                           "contexts:\n- name: c\n  context: {cluster: k, user: e}\n"
                           "users:\n- name: e\n  user:\n    exec:\n"
                           "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                           "      command: ./bin/get-token\n"
                           "      args: [--region, eu, 42]\n"
                           "      env:\n      - {name: A, value: b}\n      - {name: EMPTY}\n"
                           "      provideClusterInfo: true\n"
                           "      interactiveMode: Never\n"
                           "      installHint: get it from example.com\n");
    ks_kube_config c;
    load_ok(path, NULL, NULL, &c);
    assert_non_null(c.exec);
    assert_string_equal(c.exec->api_version, "client.authentication.k8s.io/v1beta1");
    char want[512];
    snprintf(want, sizeof(want), "%s/exec/./bin/get-token", dir);
    assert_string_equal(c.exec->command, want);
    assert_string_equal(c.exec->args[0], "--region");
    assert_string_equal(c.exec->args[2], "42");
    assert_null(c.exec->args[3]);
    assert_string_equal(c.exec->env[0], "A=b");
    assert_string_equal(c.exec->env[1], "EMPTY=");
    assert_null(c.exec->env[2]);
    assert_true(c.exec->provide_cluster_info);
    assert_string_equal(c.exec->install_hint, "get it from example.com");
    ks_kube_config_free(&c);
    /* a bare command is looked up in $PATH, not resolved */
    path = put("exec/config2",
               "current-context: c\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://k:6443'}\n"
               "contexts:\n- name: c\n  context: {cluster: k, user: e}\n"
               "users:\n- name: e\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}\n");
    load_ok(path, NULL, NULL, &c);
    assert_string_equal(c.exec->command, "aws");
    ks_kube_config_free(&c);
    path = put("exec/config3",
               "current-context: c\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://k:6443'}\n"
               "contexts:\n- name: c\n  context: {cluster: k, user: e}\n"
               "users:\n- name: e\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}\n");
    load_err(path, NULL, NULL, path, "user \"e\": exec: apiVersion", "v1alpha1", NULL);
}

/* Each error names the file and the field. */
static void test_errors(void **st) {
    static const char head[] = "current-context: c\n"
                               "clusters:\n- name: k\n  cluster: {server: 'https://k:6443'}\n"
                               "contexts:\n- name: c\n  context: {cluster: k, user: u}\n";
    struct {
        const char *user, *want1, *want2;
    } cases[] = {
        {"users:\n- name: u\n  user: {client-certificate-data: '!!!'}\n", "user \"u\": client-certificate-data", "base64"},
        {"users:\n- name: u\n  user: {token: t, username: a, password: b}\n", "user \"u\"", "more than one authentication method"},
        {"users:\n- name: u\n  user: {client-certificate: nothere.crt, client-key: k}\n", "client-certificate", "nothere.crt"},
        {"users:\n- name: u\n  user: {client-certificate-data: QQ==}\n", "user \"u\"", "client-key"},
        {"users:\n- name: u\n  user: {auth-provider: {name: gcp}}\n", "auth-provider", "exec"},
        {"users:\n- name: u\n  user: {as: admin, token: t}\n", "user \"u\": as", "impersonation"},
        {"users:\n- name: u\n  user: {tokenFile: missing-token}\n", "tokenFile", "missing-token"},
        {"users:\n- name: u\n  user: {token: [a]}\n", "user \"u\": token", "expected a string"},
        {"users: []\n", "user \"u\"", "not found"},
        {"users:\n- name: u\n  user: {}\n- name: u\n  user: {}\n", "users", "twice"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char text[2048];
        snprintf(text, sizeof(text), "%s%s", head, cases[i].user);
        const char *path = put("bad/config", text);
        load_err(path, NULL, NULL, path, cases[i].want1, cases[i].want2, NULL);
    }
    const char *path = put("bad/cluster",
                           "current-context: c\n"
                           "clusters:\n- name: k\n  cluster: {insecure-skip-tls-verify: maybe, server: 'https://k'}\n"
                           "contexts:\n- name: c\n  context: {cluster: k}\n");
    load_err(path, NULL, NULL, path, "cluster \"k\": insecure-skip-tls-verify", "maybe", NULL);
    path = put("bad/noserver", "current-context: c\nclusters:\n- name: k\n  cluster: {}\n"
                               "contexts:\n- name: c\n  context: {cluster: k}\n");
    load_err(path, NULL, NULL, path, "cluster \"k\": server", NULL);
    path = put("bad/yaml", "clusters:\n  - name: [\n");
    load_err(path, NULL, NULL, path, NULL);
    path = put("bad/nocontext", "clusters: []\n");
    load_err(path, NULL, NULL, path, "no current-context", NULL);
    char missing[512];
    snprintf(missing, sizeof(missing), "%s/does-not-exist", dir);
    load_err(missing, NULL, NULL, missing, "No such file", NULL);
    /* an empty file with --master is enough */
    path = put("bad/empty", "");
    ks_kube_config c;
    load_ok(path, NULL, "https://m:6443/", &c);
    assert_string_equal(c.server, "https://m:6443");
    ks_kube_config_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_contexts_and_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_and_token_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
