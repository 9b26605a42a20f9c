/* Leader election against a fake API server that keeps one Lease with
 * resourceVersion checks (409 on a stale update, as etcd-backed storage
 * answers). Durations are short (lease 1 s, renew deadline 0.6 s, retry
 * 0.2 s); the tests check the order of API calls and callbacks, never how
 * long anything took. */
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/leaderelection.h"
#include "util/log.h"

#include "apifake.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
#define EVENTS_PATH "/api/v1/namespaces/kube-system/events"
#define MS 1000000LL

/* ---- the fake's state (under AF.mu) ------------------------------------------ */

static struct {
    json_t *spec;          /* NULL: no Lease */
    long rv;
    bool fail_all;         /* 500 to everything */
    int conflict_puts;     /* the next N updates lose a race: 409 */
    bool other_renews;     /* each read shows "other" renewed */
    int synth;             /* synthetic seconds for other's renewTime */
    /* callbacks */
    int started, stopped, lost;
    char order[256];       /* "S" started, "L"/"T" stopped lost/told */
    char events[8][256];   /* LeaderElection messages, in order */
    int nevents;
} L;

static char *lease_json(void) {
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s},s:O}", "apiVersion", "coordination.k8s.io/v1", "kind",
                          "Lease", "metadata", "name", "kube-scheduler", "namespace", "kube-system", "uid", "lease-uid-1",
                          "resourceVersion", "0", "spec", L.spec);
    char rv[32];
    snprintf(rv, sizeof rv, "%ld", L.rv);
    json_object_set_new(json_object_get(o, "metadata"), "resourceVersion", json_string(rv));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static char *status_json(int code, const char *reason, const char *msg) {
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1", "status", "Failure",
                          "message", msg, "reason", reason, "code", code);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static int handler(const af_request *r, char **body) {
    if (L.fail_all) {
        *body = status_json(500, "InternalError", "etcd is gone");
        return 500;
    }
    if (!strcmp(r->path, LEASE_PATH) && !strcmp(r->method, "GET")) {
        if (!L.spec) {
            *body = status_json(404, "NotFound", "leases.coordination.k8s.io \"kube-scheduler\" not found");
            return 404;
        }
        if (L.other_renews && !strcmp(json_string_value(json_object_get(L.spec, "holderIdentity")), "other")) {
            char t[64];
            snprintf(t, sizeof t, "2024-01-01T00:%02d:%02d.000000Z", (L.synth / 60) % 60, L.synth % 60);
            L.synth++;
            json_object_set_new(L.spec, "renewTime", json_string(t));
            L.rv++;
        }
        *body = lease_json();
        return 200;
    }
    if (!strcmp(r->path, LEASE_PATH) && !strcmp(r->method, "PUT")) {
        json_t *o = json_loads(r->body, 0, NULL);
        const char *rv = json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
        if (L.conflict_puts > 0 || !rv || atol(rv) != L.rv) {
            if (L.conflict_puts > 0) {
                L.conflict_puts--;
                L.rv++; /* someone else wrote in between */
            }
            json_decref(o);
            *body = status_json(409, "Conflict",
                                "Operation cannot be fulfilled on leases.coordination.k8s.io \"kube-scheduler\": "
                                "the object has been modified; please apply your changes to the latest version and try again");
            return 409;
        }
        json_decref(L.spec);
        L.spec = json_incref(json_object_get(o, "spec"));
        json_decref(o);
        L.rv++;
        *body = lease_json();
        return 200;
    }
    if (!strcmp(r->path, LEASES_PATH) && !strcmp(r->method, "POST")) {
        if (L.spec) {
            *body = status_json(409, "AlreadyExists", "leases.coordination.k8s.io \"kube-scheduler\" already exists");
            return 409;
        }
        json_t *o = json_loads(r->body, 0, NULL);
        L.spec = json_incref(json_object_get(o, "spec"));
        json_decref(o);
        L.rv = 1;
        *body = lease_json();
        return 201;
    }
    if (!strcmp(r->path, EVENTS_PATH) && !strcmp(r->method, "POST")) {
        json_t *o = json_loads(r->body, 0, NULL);
        if (L.nevents < 8)
            snprintf(L.events[L.nevents++], 256, "%s|%s|%s|%s|%s",
                     json_string_value(json_object_get(o, "reason")), json_string_value(json_object_get(o, "message")),
                     json_string_value(json_object_get(json_object_get(o, "involvedObject"), "kind")),
                     json_string_value(json_object_get(json_object_get(o, "involvedObject"), "uid")),
                     json_string_value(json_object_get(json_object_get(o, "source"), "component")));
        json_decref(o);
        *body = strdup(r->body);
        return 201;
    }
    *body = status_json(404, "NotFound", "the server could not find the requested resource");
    return 404;
}

/* ---- callbacks --------------------------------------------------------------- */

static void on_started(void *arg) {
    (void)arg;
    af_lock();
    L.started++;
    strcat(L.order, "S");
    af_unlock();
    af_poke();
}

static void on_stopped(void *arg, bool lost) {
    (void)arg;
    af_lock();
    L.stopped++;
    L.lost += lost;
    strcat(L.order, lost ? "L" : "T");
    af_unlock();
    af_poke();
}

/* ---- harness ------------------------------------------------------------------ */

typedef struct rig {
    ks_kube_client *client, *ev_client;
    ks_event_recorder *events;
    ks_leader_elector *le;
} rig;

static ks_kube_client *client_new(void) {
    char server[64];
    snprintf(server, sizeof server, "http://127.0.0.1:%u", AF.port);
    ks_kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = server;
    cfg.source = "test";
    ks_kube_client_options o = {.config = &cfg, .qps = 0, .burst = 0, .max_retries = 1, .timeout_ms = 1000};
    char *err = NULL;
    ks_kube_client *c = ks_kube_client_new(&o, &err);
    if (!c) fprintf(stderr, "client: %s\n", err ? err : "?");
    free(err);
    return c;
}

/* The rig in use, freed by teardown when a failed assertion left it. */
static rig *CUR;

static void rig_start(rig *g, bool release) {
    memset(g, 0, sizeof *g);
    CUR = g;
    g->client = client_new();
    g->ev_client = client_new();
    assert_non_null(g->client);
    assert_non_null(g->ev_client);
    char *err = NULL;
    g->events = ks_event_recorder_new(g->ev_client, "host1", &err);
    assert_non_null(g->events);
    ks_leader_elector_options o = {
        .client = g->client,
        .lease_namespace = "kube-system",
        .lease_name = "kube-scheduler",
        .identity = "me",
        .lease_duration_ns = 1000 * MS,
        .renew_deadline_ns = 600 * MS,
        .retry_period_ns = 200 * MS,
        .release_on_cancel = release,
        .events = g->events,
        .event_component = "ksched-test",
        .cb = {.on_started_leading = on_started, .on_stopped_leading = on_stopped},
    };
    g->le = ks_leader_elector_new(&o, &err);
    if (!g->le) fprintf(stderr, "%s\n", err);
    assert_non_null(g->le);
    assert_true(ks_leader_elector_start(g->le, &err));
}

static void rig_free(rig *g) {
    CUR = NULL;
    ks_leader_elector_free(g->le);
    ks_event_recorder_free(g->events);
    ks_kube_client_free(g->client);
    ks_kube_client_free(g->ev_client);
}

static int setup(void **state) {
    (void)state;
    af_lock();
    json_decref(L.spec);
    memset(&L, 0, sizeof L);
    af_unlock();
    ks_log_set_output(fopen("/dev/null", "w"));
    return af_start(handler) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    if (CUR) rig_free(CUR);
    af_stop();
    af_lock();
    json_decref(L.spec);
    L.spec = NULL;
    af_unlock();
    return 0;
}

static bool p_started(void *a) { (void)a; return L.started > 0; }
static bool p_stopped(void *a) { (void)a; return L.stopped > 0; }

typedef struct count_arg {
    const char *method, *path;
    int n;
} count_arg;

/* called with AF.mu held */
static bool p_count(void *a) {
    count_arg *c = a;
    int n = 0;
    for (int i = 0; i < AF.nlog; i++)
        if (!strcmp(AF.log[i].method, c->method) && !strcmp(AF.log[i].path, c->path)) n++;
    return n >= c->n;
}

static json_t *spec_of(const af_request *r) {
    json_t *o = json_loads(r->body, 0, NULL);
    json_t *s = json_incref(json_object_get(o, "spec"));
    json_decref(o);
    return s;
}

static const char *sget(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static long long iget(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* ---- tests ------------------------------------------------------------------- */

/* No Lease: GET 404, create it holding it, lead, renew. */
static void test_acquire_when_free(void **state) {
    (void)state;
    static rig g; /* static: teardown may free it */
    rig_start(&g, true);
    assert_true(af_wait(p_started, NULL, 10));
    af_request a = af_get(0), b = af_get(1);
    assert_string_equal(a.method, "GET");
    assert_string_equal(a.path, LEASE_PATH);
    assert_int_equal(a.status, 404);
    assert_string_equal(b.method, "POST");
    assert_string_equal(b.path, LEASES_PATH);
    assert_int_equal(b.status, 201);
    json_t *s = spec_of(&b);
    assert_string_equal(sget(s, "holderIdentity"), "me");
    assert_int_equal(iget(s, "leaseDurationSeconds"), 1);
    assert_int_equal(iget(s, "leaseTransitions"), 0);
    char acquired[64];
    snprintf(acquired, sizeof acquired, "%s", sget(s, "acquireTime"));
    /* MicroTime: six fraction digits, UTC */
    assert_int_equal(strlen(acquired), 27);
    assert_int_equal(acquired[26], 'Z');
    json_decref(s);
    assert_true(ks_leader_elector_is_leader(g.le));
    char *who = ks_leader_elector_leader(g.le);
    assert_string_equal(who, "me");
    free(who);

    /* renewals: optimistic updates keeping acquireTime */
    count_arg c = {"PUT", LEASE_PATH, 3};
    assert_true(af_wait(p_count, &c, 10));
    af_request put = af_get(-1);
    for (int i = af_nlog() - 1; i >= 0; i--) {
        af_request x = af_get(i);
        if (!strcmp(x.method, "PUT")) {
            put = x;
            break;
        }
    }
    assert_int_equal(put.status, 200);
    s = spec_of(&put);
    assert_string_equal(sget(s, "holderIdentity"), "me");
    assert_string_equal(sget(s, "acquireTime"), acquired);
    assert_int_equal(iget(s, "leaseTransitions"), 0);
    json_decref(s);
    /* the leader's renewals need no GET (fast path) */
    assert_int_equal(af_count("GET", LEASE_PATH), 1);
    assert_true(ks_leader_elector_healthy(g.le, KS_LEADER_HEALTHZ_TIMEOUT_NS, NULL));
    ks_leader_elector_stats st;
    ks_leader_elector_stats_get(g.le, &st);
    assert_true(st.leading);
    assert_int_equal(st.slowpath, 0);
    rig_free(&g);
    assert_string_equal(L.order, "ST");
}

static bool p_gets6(void *a) {
    (void)a;
    int n = 0;
    for (int i = 0; i < AF.nlog; i++) n += !strcmp(AF.log[i].method, "GET");
    return n >= 6;
}

/* Another holder keeps renewing: wait. It stops: take over once its lease
 * has not changed for its duration, counting a transition. */
static void test_wait_then_take_over(void **state) {
    (void)state;
    af_lock();
    L.spec = json_pack("{s:s,s:i,s:s,s:s,s:i}", "holderIdentity", "other", "leaseDurationSeconds", 1, "acquireTime",
                       "2024-01-01T00:00:00.000000Z", "renewTime", "2024-01-01T00:00:00.000000Z", "leaseTransitions", 3);
    L.rv = 7;
    L.other_renews = true;
    af_unlock();
    static rig g; /* static: teardown may free it */
    rig_start(&g, true);
    assert_true(af_wait(p_gets6, NULL, 20));
    af_lock();
    L.other_renews = false;
    int switched = AF.nlog;
    assert_int_equal(L.started, 0);
    af_unlock();
    assert_false(ks_leader_elector_is_leader(g.le));
    char *who = ks_leader_elector_leader(g.le);
    assert_string_equal(who, "other");
    free(who);
    /* while the other renewed: reads only */
    for (int i = 0; i < switched; i++) assert_string_equal(af_get(i).method, "GET");
    /* a standby is healthy */
    assert_true(ks_leader_elector_healthy(g.le, 0, NULL));

    assert_true(af_wait(p_started, NULL, 20));
    int put_at = -1;
    for (int i = switched; i < af_nlog() && put_at < 0; i++)
        if (!strcmp(af_get(i).method, "PUT")) put_at = i;
    assert_true(put_at >= switched);
    /* the take-over is an update of the Lease read just before */
    assert_string_equal(af_get(put_at - 1).method, "GET");
    af_request put = af_get(put_at);
    assert_int_equal(put.status, 200);
    json_t *s = spec_of(&put);
    assert_string_equal(sget(s, "holderIdentity"), "me");
    assert_int_equal(iget(s, "leaseTransitions"), 4);
    assert_int_equal(iget(s, "leaseDurationSeconds"), 1);
    json_decref(s);
    ks_leader_elector_stats st;
    ks_leader_elector_stats_get(g.le, &st);
    assert_true(st.transitions_observed >= 2); /* other, then me */
    rig_free(&g);
    assert_string_equal(L.order, "ST");
}

/* A renewal loses a race (409): read again, update with the new
 * resourceVersion, stay leader. */
static void test_conflict(void **state) {
    (void)state;
    static rig g; /* static: teardown may free it */
    rig_start(&g, true);
    assert_true(af_wait(p_started, NULL, 10));
    count_arg c1 = {"PUT", LEASE_PATH, 1};
    assert_true(af_wait(p_count, &c1, 10));
    af_lock();
    L.conflict_puts = 1;
    int from = AF.nlog;
    af_unlock();
    count_arg c2 = {"PUT", LEASE_PATH, 4};
    assert_true(af_wait(p_count, &c2, 10));
    /* find the 409 and what followed it */
    int at = -1;
    for (int i = from; i < af_nlog() && at < 0; i++)
        if (af_get(i).status == 409) at = i;
    assert_true(at >= 0);
    assert_string_equal(af_get(at).method, "PUT");
    assert_string_equal(af_get(at + 1).method, "GET");
    assert_int_equal(af_get(at + 1).status, 200);
    assert_string_equal(af_get(at + 2).method, "PUT");
    assert_int_equal(af_get(at + 2).status, 200);
    af_request upd = af_get(at + 2);
    json_t *s = spec_of(&upd);
    assert_string_equal(sget(s, "holderIdentity"), "me");
    assert_int_equal(iget(s, "leaseTransitions"), 0); /* still the same term */
    json_decref(s);
    ks_leader_elector_stats st;
    ks_leader_elector_stats_get(g.le, &st);
    assert_true(st.slowpath >= 1);
    assert_true(st.leading);
    assert_int_equal(L.stopped, 0);
    rig_free(&g);
    assert_string_equal(L.order, "ST");
}

static bool p_unhealthy(void *a) {
    ks_leader_elector *le = a;
    return !ks_leader_elector_healthy(le, 0, NULL);
}

/* The API server fails: renewals fail for the renew deadline, the elector
 * gives up and reports the loss; the release cannot happen. */
static void test_renew_failure(void **state) {
    (void)state;
    static rig g; /* static: teardown may free it */
    rig_start(&g, true);
    assert_true(af_wait(p_started, NULL, 10));
    count_arg c1 = {"PUT", LEASE_PATH, 1};
    assert_true(af_wait(p_count, &c1, 10));
    af_lock();
    L.fail_all = true;
    int from = AF.nlog;
    af_unlock();
    assert_true(af_wait(p_stopped, NULL, 10));
    af_lock();
    assert_int_equal(L.lost, 1);
    assert_string_equal(L.order, "SL");
    af_unlock();
    /* every request after the failure began was answered 500; no release
     * (an update emptying the holder) got through */
    for (int i = from; i < af_nlog(); i++) assert_int_equal(af_get(i).status, 500);
    ks_leader_elector_stats st;
    ks_leader_elector_stats_get(g.le, &st);
    assert_false(st.leading);
    /* the watchdog: the last good renewal is more than a lease ago */
    assert_true(af_wait(p_unhealthy, g.le, 10));
    char *err = NULL;
    assert_false(ks_leader_elector_healthy(g.le, 0, &err));
    assert_string_equal(err, "failed election to renew leadership on lease kube-scheduler");
    free(err);
    assert_true(ks_leader_elector_healthy(g.le, KS_LEADER_HEALTHZ_TIMEOUT_NS, NULL));
    rig_free(&g);
}

/* A clean stop releases the lease (holder emptied, 1 s), records both
 * LeaderElection events, and calls on_stopped_leading(lost=false). */
static void test_release_on_stop(void **state) {
    (void)state;
    static rig g; /* static: teardown may free it */
    rig_start(&g, true);
    assert_true(af_wait(p_started, NULL, 10));
    count_arg c1 = {"PUT", LEASE_PATH, 1};
    assert_true(af_wait(p_count, &c1, 10));
    ks_leader_elector_stop(g.le);
    af_lock();
    assert_string_equal(L.order, "ST");
    af_unlock();
    /* the last Lease request is the release, after a read */
    int last = -1;
    for (int i = 0; i < af_nlog(); i++)
        if (!strncmp(af_get(i).path, LEASES_PATH, strlen(LEASES_PATH))) last = i;
    af_request rel = af_get(last);
    assert_string_equal(rel.method, "PUT");
    assert_int_equal(rel.status, 200);
    json_t *s = spec_of(&rel);
    assert_string_equal(sget(s, "holderIdentity"), "");
    assert_int_equal(iget(s, "leaseDurationSeconds"), 1);
    assert_int_equal(iget(s, "leaseTransitions"), 0);
    json_decref(s);
    int prev = last - 1;
    while (prev >= 0 && strncmp(af_get(prev).path, LEASES_PATH, strlen(LEASES_PATH))) prev--;
    assert_string_equal(af_get(prev).method, "GET");
    assert_false(ks_leader_elector_is_leader(g.le));
    /* the events are written by the time the recorder is freed */
    ks_event_recorder_free(g.events);
    g.events = NULL;
    af_lock();
    assert_int_equal(L.nevents, 2);
    assert_string_equal(L.events[0], "LeaderElection|me became leader|Lease|lease-uid-1|ksched-test");
    assert_string_equal(L.events[1], "LeaderElection|me stopped leading|Lease|lease-uid-1|ksched-test");
    af_unlock();
    rig_free(&g);
    /* a second stop does nothing more */
    assert_int_equal(L.stopped, 1);
}

/* A new holder after a release takes the emptied lease at once. */
static void test_acquire_released(void **state) {
    (void)state;
    af_lock();
    L.spec = json_pack("{s:s,s:i,s:s,s:s,s:i}", "holderIdentity", "", "leaseDurationSeconds", 1, "acquireTime",
                       "2024-01-01T00:00:00.000000Z", "renewTime", "2024-01-01T00:00:00.000000Z", "leaseTransitions", 5);
    L.rv = 3;
    af_unlock();
    static rig g; /* static: teardown may free it */
    rig_start(&g, false);
    assert_true(af_wait(p_started, NULL, 10));
    assert_string_equal(af_get(0).method, "GET");
    assert_string_equal(af_get(1).method, "PUT");
    af_request upd = af_get(1);
    json_t *s = spec_of(&upd);
    assert_string_equal(sget(s, "holderIdentity"), "me");
    assert_int_equal(iget(s, "leaseTransitions"), 6);
    json_decref(s);
    /* without ReleaseOnCancel a stop leaves the lease held */
    ks_leader_elector_stop(g.le);
    af_lock();
    assert_string_equal(json_string_value(json_object_get(L.spec, "holderIdentity")), "me");
    af_unlock();
    rig_free(&g);
}

static void test_new_checks(void **state) {
    (void)state;
    ks_leader_elector_options o = {
        .client = (ks_kube_client *)1,
        .lease_namespace = "kube-system",
        .lease_name = "kube-scheduler",
        .identity = "me",
        .lease_duration_ns = 10 * 1000 * MS,
        .renew_deadline_ns = 10 * 1000 * MS,
        .retry_period_ns = 2 * 1000 * MS,
        .cb = {.on_started_leading = on_started, .on_stopped_leading = on_stopped},
    };
    char *err = NULL;
    assert_null(ks_leader_elector_new(&o, &err));
    assert_string_equal(err, "leaseDuration must be greater than renewDeadline");
    free(err);
    o.lease_duration_ns = 15 * 1000 * MS;
    o.retry_period_ns = 9 * 1000 * MS;
    assert_null(ks_leader_elector_new(&o, &err));
    assert_string_equal(err, "renewDeadline must be greater than retryPeriod*JitterFactor");
    free(err);
    o.retry_period_ns = 2 * 1000 * MS;
    o.identity = "";
    assert_null(ks_leader_elector_new(&o, &err));
    assert_string_equal(err, "Lock identity is empty");
    free(err);
    o.identity = NULL;
    ks_leader_elector *le = ks_leader_elector_new(&o, &err);
    assert_non_null(le);
    /* <hostname>_<uuid v4> */
    const char *id = ks_leader_elector_identity(le);
    char host[256];
    gethostname(host, sizeof host);
    assert_int_equal(strncmp(id, host, strlen(host)), 0);
    const char *u = id + strlen(host);
    assert_int_equal(u[0], '_');
    assert_int_equal(strlen(u + 1), 36);
    assert_int_equal(u[1 + 14], '4');
    assert_int_equal(u[1 + 8], '-');
    /* not started: healthy, not leading; free without start is fine */
    assert_true(ks_leader_elector_healthy(le, 0, NULL));
    assert_true(ks_leader_elector_healthy(NULL, 0, NULL));
    ks_leader_elector_free(le);
    char *a = ks_leader_identity_new(NULL), *b = ks_leader_identity_new(NULL);
    assert_string_not_equal(a, b);
    free(a);
    free(b);
}

static int parse_all(ks_leader_election_flags *f, int argc, char **argv, char **err) {
    for (int i = 0; i < argc; i++) {
        int r = ks_leader_election_flag_parse(f, argc, argv, &i, err);
        if (r < 0) return -1;
        if (r == 0) return i; /* index of an argument not ours */
    }
    return argc;
}

static void test_flags(void **state) {
    (void)state;
    ks_leader_election le = {true, 15000 * MS, 10000 * MS, 2000 * MS, "leases", "kube-scheduler", "kube-system"};
    ks_leader_election_flags f;
    memset(&f, 0, sizeof f);
    char *argv[] = {"--leader-elect=false", "--leader-elect-lease-duration", "30s", "-leader-elect-renew-deadline=20s",
                    "--leader-elect-retry-period=1500ms", "--leader-elect-resource-name=ksched",
                    "--leader-elect-resource-namespace", "sched", "--leader-elect-resource-lock=leases", "--v=3"};
    char *err = NULL;
    assert_int_equal(parse_all(&f, 10, argv, &err), 9);
    assert_true(f.has_leader_elect);
    assert_false(f.leader_elect);
    assert_int_equal(f.lease_duration_ns, 30000 * MS);
    assert_int_equal(f.renew_deadline_ns, 20000 * MS);
    assert_int_equal(f.retry_period_ns, 1500 * MS);
    assert_true(ks_leader_election_flags_apply(&f, &le, &err));
    assert_false(le.leader_elect);
    assert_string_equal(le.resource_name, "ksched");
    assert_string_equal(le.resource_namespace, "sched");
    assert_int_equal(le.lease_duration_ns, 30000 * MS);

    /* a bare --leader-elect turns it on; the file's values stay where no
     * flag is given; the result is validated */
    ks_leader_election_flags g;
    memset(&g, 0, sizeof g);
    char *argv2[] = {"--leader-elect", "--leader-elect-renew-deadline", "40s", "--leader-elect-resource-lock=endpoints"};
    assert_int_equal(parse_all(&g, 4, argv2, &err), 4);
    assert_false(ks_leader_election_flags_apply(&g, &le, &err));
    assert_string_equal(err, "leaderElection.leaseDuration: Invalid value: \"40s\": must be greater than `RenewDeadline`\n"
                             "leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value must be \"leases\"");
    free(err);
    assert_string_equal(le.resource_name, "ksched");

    /* bad values */
    ks_leader_election_flags h;
    memset(&h, 0, sizeof h);
    char *bad1[] = {"--leader-elect-retry-period=2"};
    assert_int_equal(parse_all(&h, 1, bad1, &err), -1);
    assert_string_equal(err, "invalid argument \"2\" for \"--leader-elect-retry-period\" flag: time: missing unit in duration \"2\"");
    free(err);
    char *bad2[] = {"--leader-elect=maybe"};
    assert_int_equal(parse_all(&h, 1, bad2, &err), -1);
    assert_string_equal(err, "invalid argument \"maybe\" for \"--leader-elect\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax");
    free(err);
    char *bad3[] = {"--leader-elect-resource-name"};
    assert_int_equal(parse_all(&h, 1, bad3, &err), -1);
    assert_string_equal(err, "flag needs an argument: --leader-elect-resource-name");
    free(err);
    /* not ours */
    char *other[] = {"--leader-electx=1"};
    assert_int_equal(parse_all(&h, 1, other, &err), 0);

    /* the client timeout: renewDeadline/2, at least 1 s */
    ks_leader_election d = {true, 15000 * MS, 10000 * MS, 2000 * MS, "leases", "a", "b"};
    assert_int_equal(ks_leader_election_client_timeout_ms(&d), 5000);
    d.renew_deadline_ns = 1500 * MS;
    assert_int_equal(ks_leader_election_client_timeout_ms(&d), 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_acquire_when_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_then_take_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renew_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_on_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquire_released, setup, teardown),
        cmocka_unit_test(test_new_checks),
        cmocka_unit_test(test_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
