/* Leader election on a Lease: see leaderelection.h. The shape follows
 * client-go's LeaderElector (acquire, renew, release, tryAcquireOrRenew)
 * so that the two can be read side by side. */
#include "kube/leaderelection.h"

#include "util/clock.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000LL
#define JITTER_FACTOR 1.2
#define NO_DEADLINE INT64_MAX

static double rand01(void) {
    uint32_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v) v = (uint32_t)ks_monotonic_ns();
    return (double)v / 4294967296.0;
}

static void abs_timespec(int64_t mono_deadline, struct timespec *ts) {
    ts->tv_sec = (time_t)(mono_deadline / NS_PER_SEC);
    ts->tv_nsec = (long)(mono_deadline % NS_PER_SEC);
}

static void cond_init_mono(pthread_cond_t *cv) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

/* ---- times on the wire ----------------------------------------------------- */

/* A lease's time; 0 when absent or unreadable. */
static int64_t lease_time(const char *s) {
    int64_t ns;
    return ks_time_parse_rfc3339(s, &ns) ? ns : 0;
}



/* ---- the record ------------------------------------------------------------- */

/* resourcelock.LeaderElectionRecord. Times are wall-clock ns (0: none). */
typedef struct le_record {
    char *holder;
    int64_t lease_seconds;
    int64_t acquire, renew;
    int64_t transitions;
    char *strategy, *preferred;
} le_record;

static void rec_free(le_record *r) {
    free(r->holder);
    free(r->strategy);
    free(r->preferred);
    memset(r, 0, sizeof *r);
}

static void rec_copy(le_record *d, const le_record *s) {
    *d = *s;
    d->holder = ks_xstrdup(s->holder ? s->holder : "");
    d->strategy = ks_xstrdup(s->strategy ? s->strategy : "");
    d->preferred = ks_xstrdup(s->preferred ? s->preferred : "");
}

/* The record as client-go compares it (json.Marshal of the record, whose
 * times are metav1.Time: whole seconds). A renewal within the same second
 * is therefore not seen as a change, as upstream. */
static char *rec_raw(const le_record *r) {
    char a[40] = "null", b[40] = "null";
    if (r->acquire) ks_time_format_rfc3339(r->acquire, false, a);
    if (r->renew) ks_time_format_rfc3339(r->renew, false, b);
    return ks_xasprintf("%s\x1f%lld\x1f%s\x1f%s\x1f%lld\x1f%s\x1f%s", r->holder ? r->holder : "",
                        (long long)r->lease_seconds, a, b, (long long)r->transitions,
                        r->strategy ? r->strategy : "", r->preferred ? r->preferred : "");
}

/* LeaseSpecToLeaderElectionRecord. */
static void rec_from_spec(le_record *r, json_t *spec) {
    memset(r, 0, sizeof *r);
    const char *h = json_string_value(json_object_get(spec, "holderIdentity"));
    r->holder = ks_xstrdup(h ? h : "");
    r->lease_seconds = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    r->transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    r->acquire = lease_time(json_string_value(json_object_get(spec, "acquireTime")));
    r->renew = lease_time(json_string_value(json_object_get(spec, "renewTime")));
    const char *st = json_string_value(json_object_get(spec, "strategy"));
    const char *ph = json_string_value(json_object_get(spec, "preferredHolder"));
    r->strategy = ks_xstrdup(st ? st : "");
    r->preferred = ks_xstrdup(ph ? ph : "");
}

static json_t *micro_json(int64_t ns) {
    if (!ns) return json_null();
    char t[40];
    ks_time_format_rfc3339(ns, true, t);
    return json_string(t);
}

/* LeaderElectionRecordToLeaseSpec. */
static json_t *rec_to_spec(const le_record *r) {
    json_t *s = json_object();
    json_object_set_new(s, "holderIdentity", json_string(r->holder ? r->holder : ""));
    json_object_set_new(s, "leaseDurationSeconds", json_integer(r->lease_seconds));
    json_object_set_new(s, "acquireTime", micro_json(r->acquire));
    json_object_set_new(s, "renewTime", micro_json(r->renew));
    json_object_set_new(s, "leaseTransitions", json_integer(r->transitions));
    if (r->preferred && *r->preferred) json_object_set_new(s, "preferredHolder", json_string(r->preferred));
    if (r->strategy && *r->strategy) json_object_set_new(s, "strategy", json_string(r->strategy));
    return s;
}

/* ---- the elector ------------------------------------------------------------ */

typedef struct le_call le_call;

struct ks_leader_elector {
    ks_kube_client *client;
    char *ns, *name, *identity, *desc, *metric_name, *event_component;
    int64_t lease_ns, renew_ns, retry_ns;
    bool release_on_cancel;
    ks_event_recorder *events;
    ks_leader_callbacks cb;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started, joined;
    atomic_bool stopping;
    le_call *cur; /* the request being waited for, for stop to wake */

    /* observed state (mu) */
    le_record observed;
    int64_t observed_time; /* monotonic */
    char *observed_raw;
    char *reported_leader;
    bool leading;
    uint64_t slowpath, transitions_seen;

    /* the Lease as last read or written (elector's thread only) */
    json_t *lease;
};

/* ---- requests that a stop can abandon ----------------------------------- */

struct le_call {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, abandoned;
    long code;
    char *body, *error;
};

static void call_free(le_call *k) {
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k->body);
    free(k->error);
    free(k);
}

static void call_done(void *arg, const ks_kube_response *r) {
    le_call *k = arg;
    pthread_mutex_lock(&k->mu);
    if (k->abandoned) {
        pthread_mutex_unlock(&k->mu);
        call_free(k);
        return;
    }
    k->code = r->code;
    k->body = r->body ? ks_xstrndup(r->body, r->body_len) : NULL;
    k->error = r->error ? ks_xstrdup(r->error) : NULL;
    k->done = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

typedef struct le_resp {
    long code;    /* 0: no answer (error says why) */
    char *body;
    char *error;
} le_resp;

static void resp_free(le_resp *r) {
    free(r->body);
    free(r->error);
    memset(r, 0, sizeof *r);
}

/* One request, waited for until the answer, the deadline, or (when
 * cancellable) a stop: then abandoned like a cancelled context. */
static void le_request(ks_leader_elector *le, const char *method, const char *path, json_t *body,
                       int64_t deadline, bool cancellable, le_resp *out) {
    memset(out, 0, sizeof *out);
    if (cancellable && atomic_load(&le->stopping)) {
        out->error = ks_xstrdup("context canceled");
        return;
    }
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    le_call *k = ks_xcalloc(1, sizeof *k);
    pthread_mutex_init(&k->mu, NULL);
    cond_init_mono(&k->cv);
    pthread_mutex_lock(&le->mu);
    le->cur = k;
    pthread_mutex_unlock(&le->mu);
    ks_kube_request req = {
        .method = method,
        .path = path,
        .body = text,
        .body_len = text ? strlen(text) : 0,
        .idempotent = false,
    };
    ks_kube_do_async(le->client, &req, call_done, k);
    free(text);
    bool timed_out = false;
    pthread_mutex_lock(&k->mu);
    while (!k->done) {
        if (cancellable && atomic_load(&le->stopping)) break;
        if (deadline != NO_DEADLINE && ks_monotonic_ns() >= deadline) {
            timed_out = true;
            break;
        }
        if (deadline == NO_DEADLINE) {
            pthread_cond_wait(&k->cv, &k->mu);
        } else {
            struct timespec ts;
            abs_timespec(deadline, &ts);
            pthread_cond_timedwait(&k->cv, &k->mu, &ts);
        }
    }
    pthread_mutex_unlock(&k->mu);
    /* after this, only the client's callback can reach k */
    pthread_mutex_lock(&le->mu);
    le->cur = NULL;
    pthread_mutex_unlock(&le->mu);
    pthread_mutex_lock(&k->mu);
    bool done = k->done;
    if (!done) k->abandoned = true;
    pthread_mutex_unlock(&k->mu);
    if (!done) {
        out->error = ks_xstrdup(timed_out ? "context deadline exceeded" : "context canceled");
        return;
    }
    out->code = k->code;
    out->body = k->body;
    out->error = k->error;
    k->body = k->error = NULL;
    call_free(k);
}

/* The text of a failed request for the log. */
static char *resp_error(const le_resp *r) {
    if (r->code == 0) return ks_xstrdup(r->error ? r->error : "no answer");
    char *m = r->body ? ks_kube_status_message(r->body, strlen(r->body)) : NULL;
    char *e = ks_xasprintf("%s (HTTP %ld)", m ? m : "unexpected answer", r->code);
    free(m);
    return e;
}

/* ---- the LeaseLock ---------------------------------------------------------- */

static char *lease_path(const ks_leader_elector *le, bool item) {
    return item ? ks_xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", le->ns, le->name)
                : ks_xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", le->ns);
}

/* 1: found (rec, raw set), 0: not found, -1: error (*err). */
static int lock_get(ks_leader_elector *le, int64_t deadline, bool cancellable, le_record *rec, char **raw,
                    char **err) {
    char *path = lease_path(le, true);
    le_resp r;
    le_request(le, "GET", path, NULL, deadline, cancellable, &r);
    free(path);
    if (r.code == 404) {
        resp_free(&r);
        return 0;
    }
    json_t *obj = r.code == 200 && r.body ? json_loads(r.body, 0, NULL) : NULL;
    if (!json_is_object(obj)) {
        *err = r.code == 200 ? ks_xstrdup("the Lease is not a JSON object") : resp_error(&r);
        json_decref(obj);
        resp_free(&r);
        return -1;
    }
    resp_free(&r);
    json_decref(le->lease);
    le->lease = obj;
    rec_from_spec(rec, json_object_get(obj, "spec"));
    *raw = rec_raw(rec);
    return 1;
}

/* A create's or update's answer (r freed): the Lease it returns becomes
 * the one last seen; false with *err on an error or a body that is not
 * an object. */
static bool keep_answer(ks_leader_elector *le, le_resp *r, const char *what, char **err) {
    bool ok = r->code >= 200 && r->code < 300;
    json_t *got = ok && r->body ? json_loads(r->body, 0, NULL) : NULL;
    if (!json_is_object(got)) {
        *err = ok ? ks_xasprintf("the %s Lease is not a JSON object", what) : resp_error(r);
        json_decref(got);
        resp_free(r);
        return false;
    }
    resp_free(r);
    json_decref(le->lease);
    le->lease = got;
    return true;
}

static bool lock_create(ks_leader_elector *le, const le_record *rec, int64_t deadline, bool cancellable,
                        char **err) {
    json_t *obj = json_object();
    json_object_set_new(obj, "apiVersion", json_string("coordination.k8s.io/v1"));
    json_object_set_new(obj, "kind", json_string("Lease"));
    json_object_set_new(obj, "metadata", json_pack("{s:s,s:s}", "name", le->name, "namespace", le->ns));
    json_object_set_new(obj, "spec", rec_to_spec(rec));
    char *path = lease_path(le, false);
    le_resp r;
    le_request(le, "POST", path, obj, deadline, cancellable, &r);
    free(path);
    json_decref(obj);
    return keep_answer(le, &r, "created", err);
}

/* PUT the Lease last seen (its resourceVersion makes the update
 * conditional) with the new spec. */
static bool lock_update(ks_leader_elector *le, const le_record *rec, int64_t deadline, bool cancellable,
                        char **err) {
    if (!le->lease) {
        *err = ks_xstrdup("lease not initialized, call get or create first");
        return false;
    }
    json_t *obj = json_deep_copy(le->lease);
    json_object_set_new(obj, "spec", rec_to_spec(rec));
    char *path = lease_path(le, true);
    le_resp r;
    le_request(le, "PUT", path, obj, deadline, cancellable, &r);
    free(path);
    json_decref(obj);
    return keep_answer(le, &r, "updated", err);
}

static const char *lease_meta(const ks_leader_elector *le, const char *field) {
    return json_string_value(json_object_get(json_object_get(le->lease, "metadata"), field));
}

/* LeaseLock.RecordEvent: "<identity> <what>" about the Lease. */
static void record_event(ks_leader_elector *le, const char *what) {
    if (!le->events || !le->lease) return;
    ks_event_ref ref = {
        .kind = "Lease",
        .ns = lease_meta(le, "namespace") ? lease_meta(le, "namespace") : le->ns,
        .name = lease_meta(le, "name") ? lease_meta(le, "name") : le->name,
        .uid = lease_meta(le, "uid"),
        .api_version = "coordination.k8s.io/v1",
        .resource_version = lease_meta(le, "resourceVersion"),
    };
    char *msg = ks_xasprintf("%s %s", le->identity, what);
    ks_event_recorder_emit_legacy(le->events, le->event_component, &ref, "Normal", "LeaderElection", msg);
    free(msg);
}

/* ---- observed state ----------------------------------------------------------- */

static void set_observed(ks_leader_elector *le, const le_record *rec) {
    pthread_mutex_lock(&le->mu);
    rec_free(&le->observed);
    rec_copy(&le->observed, rec);
    le->observed_time = ks_monotonic_ns();
    pthread_mutex_unlock(&le->mu);
}

static bool is_leader_locked(const ks_leader_elector *le) {
    return le->observed.holder && strcmp(le->observed.holder, le->identity) == 0;
}

bool ks_leader_elector_is_leader(ks_leader_elector *le) {
    pthread_mutex_lock(&le->mu);
    bool r = is_leader_locked(le);
    pthread_mutex_unlock(&le->mu);
    return r;
}

char *ks_leader_elector_leader(ks_leader_elector *le) {
    pthread_mutex_lock(&le->mu);
    char *r = ks_xstrdup(le->observed.holder ? le->observed.holder : "");
    pthread_mutex_unlock(&le->mu);
    return r;
}

/* observedTime + the observed record's lease duration (whole seconds, as
 * written in the Lease) is still ahead of now. */
static bool lease_valid(ks_leader_elector *le, int64_t now) {
    pthread_mutex_lock(&le->mu);
    bool r = le->observed_time + le->observed.lease_seconds * NS_PER_SEC > now;
    pthread_mutex_unlock(&le->mu);
    return r;
}

static void maybe_report_transition(ks_leader_elector *le) {
    pthread_mutex_lock(&le->mu);
    const char *h = le->observed.holder ? le->observed.holder : "";
    if (le->reported_leader && strcmp(h, le->reported_leader) == 0) {
        pthread_mutex_unlock(&le->mu);
        return;
    }
    /* the first observation counts when someone holds the lease */
    if (le->reported_leader || *h) le->transitions_seen++;
    free(le->reported_leader);
    le->reported_leader = ks_xstrdup(h);
    char *id = ks_xstrdup(h);
    pthread_mutex_unlock(&le->mu);
    if (le->cb.on_new_leader) le->cb.on_new_leader(le->cb.arg, id);
    free(id);
}

/* ---- tryAcquireOrRenew ------------------------------------------------------ */

static bool try_acquire_or_renew(ks_leader_elector *le, int64_t deadline) {
    int64_t now = ks_monotonic_ns();
    int64_t wnow = ks_wall_ns();
    le_record rec = {
        .holder = le->identity,
        .lease_seconds = le->lease_ns / NS_PER_SEC,
        .acquire = wnow,
        .renew = wnow,
    };
    char *err = NULL;

    /* 1. the leader updates optimistically with the record it last saw */
    pthread_mutex_lock(&le->mu);
    bool leader = is_leader_locked(le);
    int64_t old_acquire = le->observed.acquire, old_transitions = le->observed.transitions;
    pthread_mutex_unlock(&le->mu);
    if (leader && lease_valid(le, now)) {
        rec.acquire = old_acquire;
        rec.transitions = old_transitions;
        if (lock_update(le, &rec, deadline, true, &err)) {
            set_observed(le, &rec);
            return true;
        }
        ks_errorf("Failed to update lock optimistically: %s, falling back to slow path", err);
        free(err);
        err = NULL;
    }

    /* 2. read the record, or create it */
    le_record old;
    char *raw = NULL;
    int got = lock_get(le, deadline, true, &old, &raw, &err);
    if (got < 0) {
        ks_errorf("error retrieving resource lock %s: %s", le->desc, err);
        free(err);
        return false;
    }
    if (got == 0) {
        rec.acquire = rec.renew = ks_wall_ns();
        if (!lock_create(le, &rec, deadline, true, &err)) {
            ks_errorf("error initially creating leader election record: %s", err);
            free(err);
            return false;
        }
        set_observed(le, &rec);
        return true;
    }

    /* 3. a changed record restarts the expiry clock */
    pthread_mutex_lock(&le->mu);
    bool changed = !le->observed_raw || strcmp(le->observed_raw, raw) != 0;
    pthread_mutex_unlock(&le->mu);
    if (changed) {
        set_observed(le, &old);
        pthread_mutex_lock(&le->mu);
        free(le->observed_raw);
        le->observed_raw = raw;
        raw = NULL;
        pthread_mutex_unlock(&le->mu);
    }
    free(raw);
    if (*old.holder && lease_valid(le, now) && !ks_leader_elector_is_leader(le)) {
        ks_infof(4, "lock is held by %s and has not yet expired", old.holder);
        rec_free(&old);
        return false;
    }

    /* 4. take or keep it */
    if (ks_leader_elector_is_leader(le)) {
        rec.acquire = old.acquire;
        rec.transitions = old.transitions;
        pthread_mutex_lock(&le->mu);
        le->slowpath++;
        pthread_mutex_unlock(&le->mu);
    } else {
        rec.transitions = old.transitions + 1;
    }
    rec_free(&old);
    if (!lock_update(le, &rec, deadline, true, &err)) {
        ks_errorf("Failed to update lock: %s", err);
        free(err);
        return false;
    }
    set_observed(le, &rec);
    return true;
}

/* Sleep until mono deadline or a stop; false when stopped. */
static bool sleep_until(ks_leader_elector *le, int64_t until) {
    pthread_mutex_lock(&le->mu);
    while (!atomic_load(&le->stopping) && ks_monotonic_ns() < until) {
        struct timespec ts;
        abs_timespec(until, &ts);
        pthread_cond_timedwait(&le->cv, &le->mu, &ts);
    }
    bool stopped = atomic_load(&le->stopping);
    pthread_mutex_unlock(&le->mu);
    return !stopped;
}

static void set_leading(ks_leader_elector *le, bool on) {
    pthread_mutex_lock(&le->mu);
    le->leading = on;
    pthread_mutex_unlock(&le->mu);
}

/* acquire: try every retry period (jittered) until it works or a stop. */
static bool acquire(ks_leader_elector *le) {
    ks_infof(0, "attempting to acquire leader lease %s...", le->desc);
    for (;;) {
        if (atomic_load(&le->stopping)) return false;
        bool ok = try_acquire_or_renew(le, NO_DEADLINE);
        maybe_report_transition(le);
        if (ok) {
            record_event(le, "became leader");
            set_leading(le, true);
            ks_infof(0, "successfully acquired lease %s", le->desc);
            return true;
        }
        ks_infof(4, "failed to acquire lease %s", le->desc);
        int64_t wait = le->retry_ns + (int64_t)(rand01() * JITTER_FACTOR * (double)le->retry_ns);
        if (!sleep_until(le, ks_monotonic_ns() + wait)) return false;
    }
}

/* One renewal: tries every retry period until one succeeds or the renew
 * deadline passes (PollUntilContextTimeout). NULL on success, else why. */
static const char *renew_once(ks_leader_elector *le) {
    int64_t start = ks_monotonic_ns();
    int64_t deadline = start + le->renew_ns;
    for (int64_t tick = start;;) {
        if (atomic_load(&le->stopping)) return "context canceled";
        if (try_acquire_or_renew(le, deadline)) return NULL;
        tick += le->retry_ns;
        if (tick >= deadline) {
            if (!sleep_until(le, deadline)) return "context canceled";
            return "context deadline exceeded";
        }
        if (!sleep_until(le, tick)) return "context canceled";
    }
}

/* release: give the lease up if this elector still holds it. */
static bool release(ks_leader_elector *le) {
    int64_t deadline = ks_monotonic_ns() + le->renew_ns;
    le_record old;
    char *raw = NULL, *err = NULL;
    int got = lock_get(le, deadline, false, &old, &raw, &err);
    free(raw);
    if (got < 0) {
        ks_errorf("error retrieving resource lock %s: %s", le->desc, err);
        free(err);
        return false;
    }
    if (got == 0) {
        ks_infof(0, "lease lock not found: %s", le->desc);
        return false;
    }
    if (!ks_leader_elector_is_leader(le)) {
        rec_free(&old);
        return true;
    }
    int64_t now = ks_wall_ns();
    le_record rec = {
        .holder = "",
        .lease_seconds = 1,
        .acquire = now,
        .renew = now,
        .transitions = old.transitions,
    };
    rec_free(&old);
    if (!lock_update(le, &rec, deadline, false, &err)) {
        ks_errorf("Failed to release lock: %s", err);
        free(err);
        return false;
    }
    set_observed(le, &rec);
    return true;
}

static void renew(ks_leader_elector *le) {
    for (;;) {
        if (atomic_load(&le->stopping)) break;
        const char *why = renew_once(le);
        maybe_report_transition(le);
        if (!why) {
            ks_infof(5, "successfully renewed lease %s", le->desc);
            if (!sleep_until(le, ks_monotonic_ns() + le->retry_ns)) break;
            continue;
        }
        set_leading(le, false);
        ks_infof(0, "failed to renew lease %s: %s", le->desc, why);
        break;
    }
    set_leading(le, false);
    if (le->release_on_cancel) release(le);
    record_event(le, "stopped leading");
}

static void *le_run(void *arg) {
    pthread_setname_np(pthread_self(), "leader-elect"); /* top -H, pprof's thread label */
    ks_leader_elector *le = arg;
    if (acquire(le)) {
        if (le->cb.on_started_leading) le->cb.on_started_leading(le->cb.arg);
        renew(le);
    }
    bool lost = !atomic_load(&le->stopping);
    if (le->cb.on_stopped_leading) le->cb.on_stopped_leading(le->cb.arg, lost);
    return NULL;
}

/* ---- life cycle -------------------------------------------------------------- */

char *ks_leader_identity_new(char **err) {
    char host[256];
    if (gethostname(host, sizeof host) != 0) {
        if (err) *err = ks_xasprintf("unable to get hostname: %s", strerror(errno));
        return NULL;
    }
    host[sizeof host - 1] = 0;
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != sizeof b) {
        if (err) *err = ks_xasprintf("unable to make a UUID: %s", strerror(errno));
        return NULL;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    return ks_xasprintf("%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", host, b[0],
                        b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]);
}

ks_leader_elector *ks_leader_elector_new(const ks_leader_elector_options *o, char **err) {
    const char *why = NULL;
    if (o->lease_duration_ns <= o->renew_deadline_ns) why = "leaseDuration must be greater than renewDeadline";
    else if ((double)o->renew_deadline_ns <= JITTER_FACTOR * (double)o->retry_period_ns)
        why = "renewDeadline must be greater than retryPeriod*JitterFactor";
    else if (o->lease_duration_ns < 1) why = "leaseDuration must be greater than zero";
    else if (o->renew_deadline_ns < 1) why = "renewDeadline must be greater than zero";
    else if (o->retry_period_ns < 1) why = "retryPeriod must be greater than zero";
    else if (!o->cb.on_started_leading) why = "OnStartedLeading callback must not be nil";
    else if (!o->cb.on_stopped_leading) why = "OnStoppedLeading callback must not be nil";
    else if (!o->client) why = "Lock must not be nil.";
    else if (!o->lease_namespace || !*o->lease_namespace || !o->lease_name || !*o->lease_name)
        why = "the Lease's namespace and name must be set";
    else if (o->identity && !*o->identity) why = "Lock identity is empty";
    if (why) {
        if (err) *err = ks_xstrdup(why);
        return NULL;
    }
    char *id = o->identity ? ks_xstrdup(o->identity) : ks_leader_identity_new(err);
    if (!id) return NULL;
    ks_leader_elector *le = ks_xcalloc(1, sizeof *le);
    le->client = o->client;
    le->ns = ks_xstrdup(o->lease_namespace);
    le->name = ks_xstrdup(o->lease_name);
    le->identity = id;
    le->desc = ks_xasprintf("%s/%s", le->ns, le->name);
    le->metric_name = ks_xstrdup(o->name ? o->name : "kube-scheduler");
    le->event_component = ks_xstrdup(o->event_component ? o->event_component : "default-scheduler");
    le->lease_ns = o->lease_duration_ns;
    le->renew_ns = o->renew_deadline_ns;
    le->retry_ns = o->retry_period_ns;
    le->release_on_cancel = o->release_on_cancel;
    le->events = o->events;
    le->cb = o->cb;
    pthread_mutex_init(&le->mu, NULL);
    cond_init_mono(&le->cv);
    atomic_init(&le->stopping, false);
    return le;
}

bool ks_leader_elector_start(ks_leader_elector *le, char **err) {
    if (le->started) {
        if (err) *err = ks_xstrdup("leader elector already started");
        return false;
    }
    int rc = pthread_create(&le->thread, NULL, le_run, le);
    if (rc != 0) {
        if (err) *err = ks_xasprintf("cannot start the leader election thread: %s", strerror(rc));
        return false;
    }
    le->started = true;
    return true;
}

void ks_leader_elector_stop(ks_leader_elector *le) {
    if (!le) return;
    pthread_mutex_lock(&le->mu);
    atomic_store(&le->stopping, true);
    pthread_cond_broadcast(&le->cv);
    if (le->cur) {
        pthread_mutex_lock(&le->cur->mu);
        pthread_cond_broadcast(&le->cur->cv);
        pthread_mutex_unlock(&le->cur->mu);
    }
    pthread_mutex_unlock(&le->mu);
    if (le->started && !le->joined) {
        /* stop from a callback on the elector's own thread cannot join it */
        if (pthread_equal(pthread_self(), le->thread)) return;
        pthread_join(le->thread, NULL);
        le->joined = true;
    }
}

void ks_leader_elector_free(ks_leader_elector *le) {
    if (!le) return;
    ks_leader_elector_stop(le);
    if (le->started && !le->joined) pthread_detach(le->thread);
    rec_free(&le->observed);
    free(le->observed_raw);
    free(le->reported_leader);
    json_decref(le->lease);
    free(le->ns);
    free(le->name);
    free(le->identity);
    free(le->desc);
    free(le->metric_name);
    free(le->event_component);
    pthread_mutex_destroy(&le->mu);
    pthread_cond_destroy(&le->cv);
    free(le);
}

const char *ks_leader_elector_identity(const ks_leader_elector *le) { return le->identity; }

bool ks_leader_elector_healthy(ks_leader_elector *le, int64_t timeout_ns, char **err) {
    if (!le) return true;
    pthread_mutex_lock(&le->mu);
    bool bad = is_leader_locked(le) && ks_monotonic_ns() - le->observed_time > le->lease_ns + timeout_ns;
    pthread_mutex_unlock(&le->mu);
    if (bad && err) *err = ks_xasprintf("failed election to renew leadership on lease %s", le->metric_name);
    return !bad;
}

void ks_leader_elector_stats_get(ks_leader_elector *le, ks_leader_elector_stats *out) {
    memset(out, 0, sizeof *out);
    if (!le) return;
    pthread_mutex_lock(&le->mu);
    out->leading = le->leading;
    out->slowpath = le->slowpath;
    out->transitions_observed = le->transitions_seen;
    pthread_mutex_unlock(&le->mu);
}

int64_t ks_leader_election_client_timeout_ms(const ks_leader_election *cfg) {
    int64_t t = cfg->renew_deadline_ns / 2 / 1000000;
    return t < 1000 ? 1000 : t;
}

/* ---- flags ------------------------------------------------------------------ */

/* Go's strconv.ParseBool. */
static bool parse_bool(const char *s, bool *out) {
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (!strcmp(s, yes[i])) return *out = true, true;
        if (!strcmp(s, no[i])) return *out = false, true;
    }
    return false;
}

int ks_leader_election_flag_parse(ks_leader_election_flags *f, int argc, char **argv, int *i, char **err) {
    const char *a = argv[*i];
    if (a[0] != '-') return 0;
    a += a[1] == '-' ? 2 : 1;
    static const char *const names[] = {
        "leader-elect",
        "leader-elect-lease-duration",
        "leader-elect-renew-deadline",
        "leader-elect-retry-period",
        "leader-elect-resource-lock",
        "leader-elect-resource-name",
        "leader-elect-resource-namespace",
    };
    int which = -1;
    size_t nlen = 0;
    for (int k = 0; k < 7; k++) {
        size_t n = strlen(names[k]);
        if (strncmp(a, names[k], n) == 0 && (a[n] == 0 || a[n] == '=')) {
            which = k;
            nlen = n;
        }
    }
    if (which < 0) return 0;
    const char *val = a[nlen] == '=' ? a + nlen + 1 : NULL;
    if (which == 0) {
        bool b = true;
        if (val && !parse_bool(val, &b)) {
            *err = ks_xasprintf("invalid argument \"%s\" for \"--leader-elect\" flag: strconv.ParseBool: parsing \"%s\": invalid syntax",
                                val, val);
            return -1;
        }
        f->has_leader_elect = true;
        f->leader_elect = b;
        return 1;
    }
    if (!val) {
        if (*i + 1 >= argc) {
            *err = ks_xasprintf("flag needs an argument: --%s", names[which]);
            return -1;
        }
        val = argv[++*i];
    }
    if (which <= 3) {
        int64_t ns = 0;
        char *perr = NULL;
        if (!ks_parse_duration(val, &ns, &perr)) {
            *err = ks_xasprintf("invalid argument \"%s\" for \"--%s\" flag: %s", val, names[which], perr);
            free(perr);
            return -1;
        }
        if (which == 1) f->has_lease_duration = true, f->lease_duration_ns = ns;
        if (which == 2) f->has_renew_deadline = true, f->renew_deadline_ns = ns;
        if (which == 3) f->has_retry_period = true, f->retry_period_ns = ns;
        return 1;
    }
    if (which == 4) f->resource_lock = val;
    if (which == 5) f->resource_name = val;
    if (which == 6) f->resource_namespace = val;
    return 1;
}

static void dur_text(int64_t ns, char out[48]) {
    char b[40];
    ks_format_duration(ns, b, sizeof b);
    snprintf(out, 48, "\"%s\"", b);
}

bool ks_leader_election_flags_apply(const ks_leader_election_flags *f, ks_leader_election *l, char **err) {
    if (f->has_leader_elect) l->leader_elect = f->leader_elect;
    if (f->has_lease_duration) l->lease_duration_ns = f->lease_duration_ns;
    if (f->has_renew_deadline) l->renew_deadline_ns = f->renew_deadline_ns;
    if (f->has_retry_period) l->retry_period_ns = f->retry_period_ns;
    if (f->resource_lock) l->resource_lock = f->resource_lock;
    if (f->resource_name) l->resource_name = f->resource_name;
    if (f->resource_namespace) l->resource_namespace = f->resource_namespace;
    if (!l->leader_elect) return true;
    /* ValidateLeaderElectionConfiguration, then the scheduler's lock check */
    ks_strbuf b;
    ks_sb_init(&b);
    char v[48];
    if (l->lease_duration_ns <= 0) {
        dur_text(l->lease_duration_ns, v);
        ks_sb_printf(&b, "leaderElection.leaseDuration: Invalid value: %s: must be greater than zero\n", v);
    }
    if (l->renew_deadline_ns <= 0) {
        dur_text(l->renew_deadline_ns, v);
        ks_sb_printf(&b, "leaderElection.renewDeadline: Invalid value: %s: must be greater than zero\n", v);
    }
    if (l->retry_period_ns <= 0) {
        dur_text(l->retry_period_ns, v);
        ks_sb_printf(&b, "leaderElection.retryPeriod: Invalid value: %s: must be greater than zero\n", v);
    }
    if (l->lease_duration_ns <= l->renew_deadline_ns) {
        dur_text(l->renew_deadline_ns, v);
        ks_sb_printf(&b, "leaderElection.leaseDuration: Invalid value: %s: must be greater than `RenewDeadline`\n", v);
    }
    if (!l->resource_lock || !*l->resource_lock) ks_sb_puts(&b, "leaderElection.resourceLock: Required value\n");
    if (!l->resource_namespace || !*l->resource_namespace)
        ks_sb_puts(&b, "leaderElection.resourceNamespace: Required value\n");
    if (!l->resource_name || !*l->resource_name) ks_sb_puts(&b, "leaderElection.resourceName: Required value\n");
    if (l->resource_lock && strcmp(l->resource_lock, "leases") != 0)
        ks_sb_printf(&b, "leaderElection.resourceLock: Invalid value: \"%s\": resourceLock value must be \"leases\"\n",
                     l->resource_lock);
    if (b.len == 0) {
        ks_sb_free(&b);
        return true;
    }
    b.s[--b.len] = 0; /* the last newline */
    *err = ks_sb_take(&b);
    return false;
}
