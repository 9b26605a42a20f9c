/* What `ksched run` serves beside scheduling (server/ops.h): its flags,
 * the TokenReview and SubjectAccessReview bodies and answers, and the
 * whole thing against a fake API server (apifake.h, plain HTTP on
 * 127.0.0.1): kube-scheduler's health checks, delegated authentication
 * and authorization over the wire, /configz; then with no kubeconfig
 * (everything anonymous) and with serving off. */
#include "apifake.h"

#include "config/config.h"
#include "metrics/sched_metrics.h"
#include "server/delegated.h"
#include "server/ops.h"
#include "util/curl_lazy.h"
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <unistd.h>

/* ---- flags --------------------------------------------------------------------- */

static int parse_all(ks_ops_flags *f, int argc, char **argv, char **err) {
    for (int i = 0; i < argc; i++) {
        int r = ks_ops_flag_parse(f, argc, argv, &i, err);
        if (r <= 0) return r < 0 ? -1 : i;
    }
    return argc;
}

static void test_flags(void **state) {
    (void)state;
    ks_ops_flags f;
    ks_ops_flags_init(&f);
    assert_string_equal(f.bind_address, "0.0.0.0");
    assert_int_equal(f.secure_port, 10259);
    assert_int_equal(f.has_always_allow_paths, false);
    char *argv[] = {"--secure-port=8443", "--bind-address", "127.0.0.1", "--tls-cert-file=/c.pem",
                    "--tls-private-key-file", "/k.pem", "--authentication-kubeconfig=/a", "-authorization-kubeconfig=/z",
                    "--authorization-always-allow-paths=/healthz,/metrics", "--authorization-always-allow-paths",
                    "/debug/*", "--authentication-token-webhook-cache-ttl=1m",
                    "--authorization-webhook-cache-authorized-ttl", "5s",
                    "--authorization-webhook-cache-unauthorized-ttl=250ms", "--logging-format=json"};
    char *err = NULL;
    assert_int_equal(parse_all(&f, 16, argv, &err), 16);
    assert_int_equal(f.secure_port, 8443);
    assert_string_equal(f.bind_address, "127.0.0.1");
    assert_string_equal(f.tls_cert_file, "/c.pem");
    assert_string_equal(f.tls_private_key_file, "/k.pem");
    assert_string_equal(f.authentication_kubeconfig, "/a");
    assert_string_equal(f.authorization_kubeconfig, "/z");
    assert_int_equal(f.nalways_allow_paths, 3);
    assert_string_equal(f.always_allow_paths[0], "/healthz");
    assert_string_equal(f.always_allow_paths[1], "/metrics");
    assert_string_equal(f.always_allow_paths[2], "/debug/*");
    assert_true(f.authn_cache_ttl_ns == 60000000000LL);
    assert_true(f.authz_allow_ttl_ns == 5000000000LL);
    assert_true(f.authz_deny_ttl_ns == 250000000LL);
    assert_string_equal(f.logging_format, "json");
    ks_ops_flags_free(&f);

    /* Not ours; errors. */
    ks_ops_flags_init(&f);
    char *other[] = {"--kubeconfig=x"};
    assert_int_equal(parse_all(&f, 1, other, &err), 0);
    char *bad_port[] = {"--secure-port=http"};
    assert_int_equal(parse_all(&f, 1, bad_port, &err), -1);
    assert_string_equal(err, "invalid argument \"http\" for \"--secure-port\" flag: strconv.ParseInt: parsing "
                             "\"http\": invalid syntax");
    free(err);
    char *big_port[] = {"--secure-port=70000"};
    assert_int_equal(parse_all(&f, 1, big_port, &err), -1);
    assert_non_null(strstr(err, "must be between 0 and 65535"));
    free(err);
    char *missing[] = {"--tls-cert-file"};
    assert_int_equal(parse_all(&f, 1, missing, &err), -1);
    assert_string_equal(err, "flag needs an argument: --tls-cert-file");
    free(err);
    char *bad_ttl[] = {"--authorization-webhook-cache-authorized-ttl=soon"};
    assert_int_equal(parse_all(&f, 1, bad_ttl, &err), -1);
    free(err);
    char *empty_paths[] = {"--authorization-always-allow-paths="};
    assert_int_equal(parse_all(&f, 1, empty_paths, &err), 1);
    assert_true(f.has_always_allow_paths);
    assert_int_equal(f.nalways_allow_paths, 0);
    /* the log format */
    f.logging_format = "xml";
    assert_false(ks_ops_flags_apply_logging(&f, &err));
    assert_string_equal(err, "logging.format: Invalid value: \"xml\": Unsupported log format");
    free(err);
    f.logging_format = "json";
    assert_true(ks_ops_flags_apply_logging(&f, &err));
    assert_int_equal(ks_log_get_format(), KS_LOG_JSON);
    f.logging_format = "text";
    assert_true(ks_ops_flags_apply_logging(&f, &err));
    assert_int_equal(ks_log_get_format(), KS_LOG_TEXT);
    assert_non_null(strstr(ks_ops_flags_usage(), "--secure-port"));
    ks_ops_flags_free(&f);
}

static void test_review_bodies(void **state) {
    (void)state;
    char *b = ks_token_review_body("tok\"en");
    assert_string_equal(b, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":"
                           "\"tok\\\"en\"}}");
    free(b);
    ks_user_info u = {0};
    char *err = NULL;
    const char *ans = "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"bob\",\"uid\":\"42\","
                      "\"groups\":[\"a\",\"b\"]}}}";
    assert_int_equal(ks_token_review_decode(ans, strlen(ans), &u, &err), 1);
    assert_string_equal(u.name, "bob");
    assert_string_equal(u.uid, "42");
    assert_int_equal(u.ngroups, 2);
    b = ks_access_review_body(&u, "get", "/metrics");
    assert_string_equal(b, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":"
                           "{\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"},\"user\":\"bob\","
                           "\"groups\":[\"a\",\"b\"],\"uid\":\"42\"}}");
    free(b);
    ks_user_info_free(&u);
    const char *no = "{\"status\":{\"authenticated\":false,\"error\":\"expired\"}}";
    assert_int_equal(ks_token_review_decode(no, strlen(no), &u, &err), 0);
    assert_int_equal(ks_token_review_decode("{", 1, &u, &err), -1);
    free(err);
    char *reason = NULL;
    const char *deny = "{\"status\":{\"allowed\":false,\"reason\":\"nope\"}}";
    assert_int_equal(ks_access_review_decode(deny, strlen(deny), &reason, &err), 0);
    assert_string_equal(reason, "nope");
    free(reason);
    reason = NULL;
    const char *allow = "{\"status\":{\"allowed\":true}}";
    assert_int_equal(ks_access_review_decode(allow, strlen(allow), &reason, &err), 1);
    assert_null(reason);
}

/* ---- against a fake API server ---------------------------------------------------- */

static struct {
    int token_reviews, access_reviews;
    bool saw_authenticated_group;
    char auth_header_seen[128];
} F;

static int handler(const af_request *r, char **body) {
    json_error_t je;
    json_t *o = json_loads(r->body, 0, &je);
    json_t *spec = json_object_get(o, "spec");
    int status = 404;
    if (strcmp(r->path, "/apis/authentication.k8s.io/v1/tokenreviews") == 0) {
        F.token_reviews++;
        const char *tok = json_string_value(json_object_get(spec, "token"));
        if (tok && strcmp(tok, "good") == 0)
            *body = strdup("{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{\"username\":"
                           "\"alice\",\"groups\":[\"dev\"]}}}");
        else
            *body = strdup("{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":false}}");
        status = 201;
    } else if (strcmp(r->path, "/apis/authorization.k8s.io/v1/subjectaccessreviews") == 0) {
        F.access_reviews++;
        const char *user = json_string_value(json_object_get(spec, "user"));
        json_t *nr = json_object_get(spec, "nonResourceAttributes");
        const char *path = json_string_value(json_object_get(nr, "path"));
        const char *verb = json_string_value(json_object_get(nr, "verb"));
        size_t i;
        json_t *g;
        json_array_foreach(json_object_get(spec, "groups"), i, g) {
            if (strcmp(json_string_value(g), "system:authenticated") == 0) F.saw_authenticated_group = true;
        }
        bool ok = user && path && verb && strcmp(user, "alice") == 0 && strcmp(path, "/metrics") == 0 &&
                  strcmp(verb, "get") == 0;
        *body = strdup(ok ? "{\"status\":{\"allowed\":true}}"
                          : "{\"status\":{\"allowed\":false,\"reason\":\"no RBAC policy matched\"}}");
        status = 201;
    }
    json_decref(o);
    return status;
}

typedef struct resp {
    long code;
    char *body;
    size_t len;
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *arg) {
    resp *r = arg;
    r->body = realloc(r->body, r->len + sz * n + 1);
    memcpy(r->body + r->len, p, sz * n);
    r->len += sz * n;
    r->body[r->len] = 0;
    return sz * n;
}

static void get(int port, const char *path, const char *token, resp *r) {
    memset(r, 0, sizeof(*r));
    const ks_curl_api *c = ks_curl(NULL);
    assert_non_null(c);
    CURL *h = c->easy_init();
    char url[512];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", port, path);
    c->easy_setopt(h, CURLOPT_URL, url);
    c->easy_setopt(h, CURLOPT_NOPROXY, "*");
    c->easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    c->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    c->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    c->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    c->easy_setopt(h, CURLOPT_WRITEDATA, r);
    struct curl_slist *hdrs = NULL;
    if (token) {
        char line[256];
        snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
        hdrs = c->slist_append(hdrs, line);
        c->easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    }
    c->easy_perform(h);
    c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
    if (!r->body) r->body = calloc(1, 1);
    c->slist_free_all(hdrs);
    c->easy_cleanup(h);
}

static char kubeconfig[64];

static int setup(void **state) {
    (void)state;
    memset(&F, 0, sizeof(F));
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    ks_log_set_output(fopen("/dev/null", "w"));
    if (!af_start(handler)) return -1;
    snprintf(kubeconfig, sizeof(kubeconfig), "/tmp/ksched-test-kc-XXXXXX");
    int fd = mkstemp(kubeconfig);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:%u\n"
            "users:\n- name: u\n  user:\n    token: scheduler-token\n"
            "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
            "current-context: x\n",
            AF.port);
    fclose(f);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    af_stop();
    unlink(kubeconfig);
    return 0;
}

static void test_ops_delegated(void **state) {
    (void)state;
    ks_ops_flags f;
    ks_ops_flags_init(&f);
    f.bind_address = "127.0.0.1";
    f.secure_port = -1; /* ephemeral (tests only; the flag takes 0..65535) */
    f.authentication_kubeconfig = kubeconfig;
    f.authorization_kubeconfig = kubeconfig;
    ks_config *cfg = ks_config_default();
    ks_ops_options o = {.flags = &f, .cfg = cfg, .leader_election = true};
    char *err = NULL;
    ks_ops *ops = ks_ops_start(&o, &err);
    if (!ops) fail_msg("ks_ops_start: %s", err);
    int port = ks_ops_port(ops);
    assert_true(port > 0);
    resp r;

    /* kube-scheduler's checks, before the handlers synced ... */
    get(port, "/readyz?verbose", NULL, &r);
    assert_int_equal(r.code, 500);
    assert_string_equal(r.body, "[+]leaderElection ok\n[+]shutdown ok\n[-]sched-handler-sync failed: reason "
                                "withheld\nreadyz check failed\n");
    free(r.body);
    get(port, "/healthz?verbose", NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "[+]leaderElection ok\nhealthz check passed\n");
    free(r.body);
    get(port, "/livez?verbose", NULL, &r);
    assert_string_equal(r.body, "[+]ping ok\nlivez check passed\n");
    free(r.body);
    /* ... after ... */
    ks_ops_set_synced(ops);
    get(port, "/readyz", NULL, &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "ok");
    free(r.body);
    /* No review was needed for those. */
    af_lock();
    assert_int_equal(F.token_reviews, 0);
    assert_int_equal(F.access_reviews, 0);
    af_unlock();

    /* /metrics: anonymous is asked about and refused with the review's reason. */
    get(port, "/metrics", NULL, &r);
    assert_int_equal(r.code, 403);
    assert_non_null(strstr(r.body, "forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/metrics\\\": no RBAC "
                                   "policy matched"));
    free(r.body);
    /* alice may. */
    get(port, "/metrics", "good", &r);
    assert_int_equal(r.code, 200);
    assert_non_null(strstr(r.body, "leader_election_master_status{name=\"kube-scheduler\"} 0\n"));
    assert_non_null(strstr(r.body, "# TYPE scheduler_preemption_attempts_total counter"));
    /* the reviews, as the API client counts its requests */
    char want[128];
    snprintf(want, sizeof(want), "rest_client_requests_total{code=\"201\",host=\"127.0.0.1:%u\",method=\"POST\"} ",
             AF.port);
    assert_non_null(strstr(r.body, want));
    free(r.body);
    get(port, "/configz", "good", &r);
    assert_int_equal(r.code, 403); /* the review allows /metrics only */
    free(r.body);
    /* A bad token: 401 even on /healthz. */
    get(port, "/healthz", "bad", &r);
    assert_int_equal(r.code, 401);
    free(r.body);
    af_lock();
    assert_true(F.saw_authenticated_group);
    int tr = F.token_reviews, ar = F.access_reviews;
    af_unlock();
    /* Cached: the same requests again ask nothing. */
    get(port, "/metrics", "good", &r);
    assert_int_equal(r.code, 200);
    free(r.body);
    get(port, "/healthz", "bad", &r);
    assert_int_equal(r.code, 401);
    free(r.body);
    af_lock();
    assert_int_equal(F.token_reviews, tr);
    assert_int_equal(F.access_reviews, ar);
    af_unlock();

    ks_ops_set_shutting_down(ops);
    get(port, "/readyz?verbose", NULL, &r);
    assert_int_equal(r.code, 500);
    assert_non_null(strstr(r.body, "[-]shutdown failed: reason withheld\n"));
    free(r.body);
    ks_ops_stop(ops);
    ks_config_free(cfg);
    ks_ops_flags_free(&f);
}

static void test_ops_anonymous_and_configz(void **state) {
    (void)state;
    /* No kubeconfigs and not in a pod: every request anonymous, only the
     * always-allowed paths served; here /configz is made one of them. */
    ks_ops_flags f;
    ks_ops_flags_init(&f);
    f.bind_address = "127.0.0.1";
    f.secure_port = -1;
    char *argv[] = {"--authorization-always-allow-paths=/healthz,/configz"};
    int i = 0;
    char *err = NULL;
    assert_int_equal(ks_ops_flag_parse(&f, 1, argv, &i, &err), 1);
    ks_config *cfg = ks_config_default();
    ks_ops_options o = {.flags = &f, .cfg = cfg};
    ks_ops *ops = ks_ops_start(&o, &err);
    if (!ops) fail_msg("ks_ops_start: %s", err);
    int port = ks_ops_port(ops);
    resp r;
    get(port, "/healthz?verbose", "anything", &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body, "[+]ping ok\nhealthz check passed\n"); /* no leader election */
    free(r.body);
    get(port, "/readyz", NULL, &r); /* not always-allowed any more */
    assert_int_equal(r.code, 403);
    assert_non_null(strstr(r.body, "forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/readyz\\\"\""));
    free(r.body);
    get(port, "/configz", NULL, &r);
    assert_int_equal(r.code, 200);
    json_error_t je;
    json_t *j = json_loads(r.body, 0, &je);
    assert_non_null(j);
    json_t *cc = json_object_get(j, "componentconfig");
    assert_string_equal(json_string_value(json_object_get(cc, "apiVersion")), "kubescheduler.config.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(cc, "kind")), "KubeSchedulerConfiguration");
    assert_true(json_is_array(json_object_get(cc, "profiles")));
    json_decref(j);
    free(r.body);
    af_lock();
    assert_int_equal(F.token_reviews + F.access_reviews, 0);
    af_unlock();
    ks_ops_stop(ops);
    ks_config_free(cfg);
    ks_ops_flags_free(&f);
}

static void test_ops_off(void **state) {
    (void)state;
    ks_ops_flags f;
    ks_ops_flags_init(&f);
    f.secure_port = 0;
    char *err = NULL;
    ks_ops_options o = {.flags = &f, .leader_election = true};
    ks_ops *ops = ks_ops_start(&o, &err);
    assert_non_null(ops);
    assert_null(err);
    assert_int_equal(ks_ops_port(ops), 0);
    ks_ops_set_synced(ops);
    ks_ops_set_shutting_down(ops);
    ks_ops_stop(ops);
    /* A bad kubeconfig is an error at start. */
    ks_ops_flags_init(&f);
    f.secure_port = -1;
    f.bind_address = "127.0.0.1";
    f.authentication_kubeconfig = "/nonexistent/kubeconfig";
    ops = ks_ops_start(&o, &err);
    assert_null(ops);
    assert_non_null(strstr(err, "failed to get delegated authentication kubeconfig"));
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_review_bodies),
        cmocka_unit_test_setup_teardown(test_ops_delegated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_anonymous_and_configz, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_off, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
