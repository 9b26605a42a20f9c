/* The event recorder: see event_recorder.h for what it writes and when. One
 * thread (rec_loop) owns all the correlation state; emit only queues,
 * and the client's I/O thread only hands answers back (job_done). */
#include "kube/event_recorder.h"
#include "codec/pb.h"
#include "codec/tree.h"
#include "metrics/sched_metrics.h"

#include "util/arena.h"
#include "util/clock.h"
#include "util/hash.h"
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
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000LL
#define MAX_TRIES 12
/* client-go's finishTime: a series quiet this long ends; a single event
 * this old is forgotten. */
#define FINISH_AGE_NS (6LL * 60 * NS_PER_SEC)
/* tools/record's EventCorrelator. */
#define LEGACY_CACHE 4096
#define AGG_MAX_EVENTS 10
#define AGG_INTERVAL_NS (600LL * NS_PER_SEC)
/* How long a new event waits for others before the thread writes them
 * (ks_event_recorder_options.batch_ns): at SchedulingBasic's 450 bindings
 * a second through kube-apiserver, each event woke this thread and the
 * client's I/O thread on its own, about 30 us of CPU per event in
 * wake-ups; 10 ms gathers about five. eventTime is taken at emit, so
 * the wait shows nowhere but in when the Event appears. */
#define BATCH_WAIT_NS (10LL * 1000 * 1000)
#define SPAM_BURST 25.0
#define SPAM_QPS (1.0 / 300.0)

/* ---- small helpers ----------------------------------------------------- */

static int64_t real_now(void *arg) {
    (void)arg;
    return ks_wall_ns();
}

static double rand01(void) {
    uint32_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v) v = (uint32_t)ks_monotonic_ns();
    return (double)v / 4294967296.0;
}

/* The length of the UTF-8 sequence at u[i] (of n bytes), 0 when it is
 * not a valid one (overlong, a surrogate, above U+10FFFF, cut short). */
static size_t utf8_seq(const unsigned char *u, size_t i, size_t n) {
    unsigned char c = u[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || i + len > n) return 0;
    for (size_t k = 1; k < len; k++)
        if ((u[i + k] >> 6) != 2) return 0;
    if (len == 2 && c < 0xc2) return 0;
    if (len == 3 && ((c == 0xe0 && u[i + 1] < 0xa0) || (c == 0xed && u[i + 1] >= 0xa0))) return 0;
    if (len == 4 && (c > 0xf4 || (c == 0xf0 && u[i + 1] < 0x90) || (c == 0xf4 && u[i + 1] >= 0x90))) return 0;
    return len;
}

/* Go's json.Marshal writes each invalid UTF-8 byte as U+FFFD; jansson
 * refuses invalid strings, so make them valid the same way first. A
 * valid string (every one, nearly) is checked in one pass and copied:
 * this runs for each field of every Event. */
static char *utf8_clean(const char *s) {
    if (!s) return ks_xstrdup("");
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, len;
    while (i < n && (len = u[i] < 0x80 ? 1 : utf8_seq(u, i, n)) > 0) i += len;
    if (i == n) return ks_xstrndup(s, n);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_putn(&b, s, i);
    while (i < n) {
        len = utf8_seq(u, i, n);
        if (len) {
            ks_sb_putn(&b, s + i, len);
            i += len;
        } else {
            ks_sb_puts(&b, "\xef\xbf\xbd");
            i++;
        }
    }
    return ks_sb_take(&b);
}

char *ks_event_truncate_note(const char *note) {
    char *s = utf8_clean(note);
    size_t len = strlen(s);
    if (len <= KS_EVENT_NOTE_LIMIT) return s;
    const char *suffix = " ...";
    size_t keep = KS_EVENT_NOTE_LIMIT - strlen(suffix);
    /* back off to the start of a character */
    while (keep > 0 && ((unsigned char)s[keep] >> 6) == 2) keep--;
    memcpy(s + keep, suffix, strlen(suffix) + 1);
    return s;
}

/* apimachinery's IsDNS1123Subdomain. */
static bool dns_subdomain(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 253) return false;
    bool start = true;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.') {
            if (start || s[i - 1] == '-') return false;
            start = true;
            continue;
        }
        if (!alnum && c != '-') return false;
        if (start && !alnum) return false;
        start = false;
    }
    return s[n - 1] != '-' && s[n - 1] != '.';
}

static char *uuid_v4(void) {
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != sizeof b) {
        uint64_t a = ks_hash_u64((uint64_t)ks_monotonic_ns()), c = ks_hash_u64((uint64_t)real_now(NULL) ^ (uint64_t)getpid());
        memcpy(b, &a, 8);
        memcpy(b + 8, &c, 8);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    return ks_xasprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                        b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]);
}

/* record/util.GenerateEventName: "<name>.<unix nanos in hex>", a UUID when
 * that is not a valid object name. */
static char *event_name(const char *ref_name, int64_t t) {
    char *name = ks_xasprintf("%s.%llx", ref_name, (unsigned long long)t);
    if (dns_subdomain(name)) return name;
    free(name);
    return uuid_v4();
}

/* ---- a bounded LRU keyed by 64-bit hashes -------------------------------- */

typedef struct lru_node {
    uint64_t key;
    struct lru_node *prev, *next;
} lru_node;

typedef struct lru {
    ks_map map;
    lru_node head; /* sentinel: head.next is the most recent */
    size_t n, cap;
} lru;

static uint64_t lru_key(uint64_t h) { return h ? h : 1; }

static void lru_init(lru *l, size_t cap) {
    ks_map_init(&l->map);
    l->head.prev = l->head.next = &l->head;
    l->n = 0;
    l->cap = cap;
}

static void lru_unlink(lru_node *x) {
    x->prev->next = x->next;
    x->next->prev = x->prev;
}

static void lru_front(lru *l, lru_node *x) {
    x->next = l->head.next;
    x->prev = &l->head;
    l->head.next->prev = x;
    l->head.next = x;
}

static lru_node *lru_get(lru *l, uint64_t key) {
    lru_node *x = ks_map_get(&l->map, lru_key(key));
    if (x) {
        lru_unlink(x);
        lru_front(l, x);
    }
    return x;
}

/* Insert x (its key not present); returns the evicted node, if any. */
static lru_node *lru_put(lru *l, lru_node *x) {
    x->key = lru_key(x->key);
    ks_map_put(&l->map, x->key, x);
    lru_front(l, x);
    l->n++;
    if (l->n <= l->cap) return NULL;
    lru_node *old = l->head.prev;
    lru_unlink(old);
    ks_map_del(&l->map, old->key);
    l->n--;
    return old;
}

static void lru_del(lru *l, lru_node *x) {
    lru_unlink(x);
    ks_map_del(&l->map, x->key);
    l->n--;
}

/* ---- events as queued ---------------------------------------------------- */

typedef struct ev_ref {
    char *kind, *ns, *name, *uid, *api_version, *rv, *field_path;
} ev_ref;

typedef struct ev_item {
    struct ev_item *next;
    bool legacy;       /* core/v1 as tools/record writes it */
    char *controller;  /* reportingController / source.component */
    char *instance;    /* reportingInstance ("" for legacy) */
    ev_ref regarding, related;
    bool has_related;
    char *type, *reason, *action, *note;
    char *name;        /* the Event's name */
    char *ns;          /* the Event's namespace */
    int64_t time;      /* wall clock at emit */
    int64_t queued_ns; /* monotonic, at emit */
} ev_item;

static void ref_copy(ev_ref *d, const ks_event_ref *s) {
    d->kind = utf8_clean(s ? s->kind : NULL);
    d->ns = utf8_clean(s ? s->ns : NULL);
    d->name = utf8_clean(s ? s->name : NULL);
    d->uid = utf8_clean(s ? s->uid : NULL);
    d->api_version = utf8_clean(s ? s->api_version : NULL);
    d->rv = utf8_clean(s ? s->resource_version : NULL);
    d->field_path = utf8_clean(s ? s->field_path : NULL);
}

static void ref_dup(ev_ref *d, const ev_ref *s) {
    d->kind = ks_xstrdup(s->kind);
    d->ns = ks_xstrdup(s->ns);
    d->name = ks_xstrdup(s->name);
    d->uid = ks_xstrdup(s->uid);
    d->api_version = ks_xstrdup(s->api_version);
    d->rv = ks_xstrdup(s->rv);
    d->field_path = ks_xstrdup(s->field_path);
}

static void ref_free(ev_ref *r) {
    free(r->kind);
    free(r->ns);
    free(r->name);
    free(r->uid);
    free(r->api_version);
    free(r->rv);
    free(r->field_path);
}

static void item_free(ev_item *it) {
    if (!it) return;
    free(it->controller);
    free(it->instance);
    ref_free(&it->regarding);
    if (it->has_related) ref_free(&it->related);
    free(it->type);
    free(it->reason);
    free(it->action);
    free(it->note);
    free(it->name);
    free(it->ns);
    free(it);
}

static ev_item *item_dup(const ev_item *s) {
    ev_item *d = ks_xcalloc(1, sizeof *d);
    d->legacy = s->legacy;
    d->controller = ks_xstrdup(s->controller);
    d->instance = ks_xstrdup(s->instance);
    ref_dup(&d->regarding, &s->regarding);
    d->has_related = s->has_related;
    if (s->has_related) ref_dup(&d->related, &s->related);
    d->type = ks_xstrdup(s->type);
    d->reason = ks_xstrdup(s->reason);
    d->action = ks_xstrdup(s->action);
    d->note = ks_xstrdup(s->note);
    d->name = ks_xstrdup(s->name);
    d->ns = ks_xstrdup(s->ns);
    d->time = s->time;
    return d;
}

/* ---- JSON bodies ------------------------------------------------------- */

static void put_str(json_t *o, const char *k, const char *v, bool omit_empty) {
    if (omit_empty && (!v || !*v)) return;
    json_t *s = json_string(v ? v : "");
    json_object_set_new(o, k, s ? s : json_string(""));
}

static json_t *ref_json(const ev_ref *r) {
    json_t *o = json_object();
    put_str(o, "kind", r->kind, true);
    put_str(o, "namespace", r->ns, true);
    put_str(o, "name", r->name, true);
    put_str(o, "uid", r->uid, true);
    put_str(o, "apiVersion", r->api_version, true);
    put_str(o, "resourceVersion", r->rv, true);
    put_str(o, "fieldPath", r->field_path, true);
    return o;
}

static char *dump(json_t *o) {
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s) ks_oom();
    return s;
}

static json_t *series_json(int32_t count, int64_t last) {
    char t[40];
    ks_time_format_rfc3339(last, true, t);
    return json_pack("{s:i,s:s}", "count", (json_int_t)count, "lastObservedTime", t);
}

static void tree_str(ks_arena *a, ks_tree *o, const char *k, const char *v, bool omit_empty) {
    if (omit_empty && (!v || !*v)) return;
    kt_map_add(a, o, k, kt_string(a, v ? v : "", 0));
}

static ks_tree *ref_tree(ks_arena *a, const ev_ref *r) {
    ks_tree *o = kt_new(a, KT_MAP, 0);
    tree_str(a, o, "kind", r->kind, true);
    tree_str(a, o, "namespace", r->ns, true);
    tree_str(a, o, "name", r->name, true);
    tree_str(a, o, "uid", r->uid, true);
    tree_str(a, o, "apiVersion", r->api_version, true);
    tree_str(a, o, "resourceVersion", r->rv, true);
    tree_str(a, o, "fieldPath", r->field_path, true);
    return o;
}

/* An events.k8s.io/v1 Event (series when count >= 2), as protobuf when
 * the client writes it (*pb set; what client-go sends with
 * clientConnection's protobuf contentType), else JSON; *len its length.
 * Built as a tree and written once (it went JSON text, parsed back to a
 * tree, then protobuf: three encodings per event). */
static char *v1_body(const ev_item *ev, int32_t count, int64_t last, bool protobuf, bool *pb, size_t *len) {
    char t[40];
    ks_time_format_rfc3339(ev->time, true, t);
    ks_arena *a = ks_arena_new(0);
    ks_tree *o = kt_new(a, KT_MAP, 0);
    tree_str(a, o, "apiVersion", "events.k8s.io/v1", false);
    tree_str(a, o, "kind", "Event", false);
    ks_tree *meta = kt_new(a, KT_MAP, 0);
    tree_str(a, meta, "name", ev->name, false);
    tree_str(a, meta, "namespace", ev->ns, false);
    kt_map_add(a, o, "metadata", meta);
    tree_str(a, o, "eventTime", t, false);
    if (count >= 2) {
        char l[40];
        ks_time_format_rfc3339(last, true, l);
        ks_tree *series = kt_new(a, KT_MAP, 0);
        kt_map_add(a, series, "count", kt_int(a, count));
        tree_str(a, series, "lastObservedTime", l, false);
        kt_map_add(a, o, "series", series);
    }
    tree_str(a, o, "reportingController", ev->controller, true);
    tree_str(a, o, "reportingInstance", ev->instance, true);
    tree_str(a, o, "action", ev->action, true);
    tree_str(a, o, "reason", ev->reason, true);
    kt_map_add(a, o, "regarding", ref_tree(a, &ev->regarding));
    if (ev->has_related) kt_map_add(a, o, "related", ref_tree(a, &ev->related));
    tree_str(a, o, "note", ev->note, true);
    tree_str(a, o, "type", ev->type, true);
    char *out = NULL, *err = NULL;
    *pb = protobuf && ks_pb_encode_object(o, "events.k8s.io/v1", "Event", &out, len, &err);
    if (!*pb) {
        if (protobuf) ks_infof(4, "event sent as JSON: %s", err ? err : "cannot be encoded");
        free(out);
        out = kt_to_json(o, 0);
        if (!out) ks_oom();
        *len = strlen(out);
    }
    free(err);
    ks_arena_free(a);
    return out;
}

/* The two-way strategic merge patch from the Event without series to the
 * Event with it: only the series. */
static char *v1_series_patch(int32_t count, int64_t last) {
    return dump(json_pack("{s:o}", "series", series_json(count, last)));
}

/* A core/v1 Event as tools/record makes it. The combined event of the
 * aggregator keeps the source but has no reporting fields. */
static char *core_body(const ev_item *ev, int32_t count, int64_t first, int64_t last, bool combined) {
    char f[40], l[40];
    ks_time_format_rfc3339(first, false, f);
    ks_time_format_rfc3339(last, false, l);
    json_t *o = json_object();
    json_object_set_new(o, "apiVersion", json_string("v1"));
    json_object_set_new(o, "kind", json_string("Event"));
    json_t *meta = json_object();
    put_str(meta, "name", ev->name, false);
    put_str(meta, "namespace", ev->ns, false);
    json_object_set_new(o, "metadata", meta);
    json_object_set_new(o, "involvedObject", ref_json(&ev->regarding));
    put_str(o, "reason", ev->reason, true);
    put_str(o, "message", ev->note, true);
    json_t *src = json_object();
    put_str(src, "component", ev->controller, true);
    json_object_set_new(o, "source", src);
    json_object_set_new(o, "firstTimestamp", json_string(f));
    json_object_set_new(o, "lastTimestamp", json_string(l));
    json_object_set_new(o, "count", json_integer(count));
    put_str(o, "type", ev->type, true);
    json_object_set_new(o, "eventTime", json_null());
    put_str(o, "reportingComponent", combined ? "" : ev->controller, false);
    put_str(o, "reportingInstance", ev->instance, false);
    return dump(o);
}

/* record's eventLogger patch: count, lastTimestamp and message. */
static char *core_patch(int32_t count, int64_t last, const char *message) {
    char l[40];
    ks_time_format_rfc3339(last, false, l);
    json_t *o = json_pack("{s:i,s:s}", "count", (json_int_t)count, "lastTimestamp", l);
    put_str(o, "message", message, true);
    return dump(o);
}

/* ---- state --------------------------------------------------------------- */

/* One events.k8s.io/v1 key (client-go's eventCache entry). */
typedef struct ev_entry {
    lru_node n; /* first */
    char *key;
    ev_item *ev;
    bool series;
    int32_t count, sent_count;
    int64_t last_observed;
    /* Its create is unanswered (busy); the second occurrence's series
     * patch waits for that answer (held: count and time to write).
     * client-go's sink writes one event at a time, so its patch never
     * reaches the API server before the create; with writes side by side
     * here it could, and the Event then stayed a count-1 pair (e2e
     * events_series). */
    bool busy, held;
    int32_t held_count;
    int64_t held_last;
} ev_entry;

typedef struct spam_rec {
    lru_node n;
    double tokens;
    int64_t last;
} spam_rec;

typedef struct agg_rec {
    lru_node n;
    uint64_t local[AGG_MAX_EVENTS];
    int nlocal;
    int64_t last;
} agg_rec;

typedef struct log_rec {
    lru_node n;
    int32_t count;
    int64_t first;
    char *name;
} log_rec;

enum { API_UNKNOWN = 0, API_V1, API_CORE };
enum { J_V1_CREATE = 0, J_V1_PATCH, J_CORE_CREATE, J_CORE_PATCH };

typedef struct rec_core rec_core;

typedef struct ev_job {
    struct ev_job *next;
    rec_core *core;
    int kind;
    char *path, *body;               /* the request */
    char *create_path, *create_body; /* a patch answered 404 becomes this */
    bool body_pb, create_pb;         /* a v1 Event's body in protobuf */
    size_t body_len, create_len;     /* a v1 Event's body's length */
    bool creating;                   /* the patch turned into its create */
    bool series;                     /* v1 series: AlreadyExists is retried */
    bool legacy_delay;               /* record's retry: first delay random */
    uint64_t entry;                  /* v1 create: its cache entry's hash (0: none) */
    ev_item *probe;                  /* v1 create while the API is unknown */
    int tries, max_tries;
    int64_t due;
    /* the answer */
    long code;
    bool ns_missing, already_exists;
    char *error;
} ev_job;

struct rec_core {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;       /* the recorder + one per request in flight */
    bool closed;    /* the recorder is gone: answers are discarded */
    bool stopping;
    int64_t stop_deadline;

    ks_kube_client *client;
    char *hostname;
    ks_event_recorder_options o;
    int api;

    ev_item *q_head, *q_tail;
    uint32_t q_len;
    ev_job *done;          /* answered, for the thread */
    ev_job *retry;         /* waiting for their time */
    uint32_t outstanding;  /* in flight + waiting to retry */

    lru cache;             /* ev_entry, events.k8s.io/v1 */
    lru spam, agg, logs;   /* core/v1 correlator */
    int64_t next_finish, next_refresh;

    atomic_uint_fast64_t dropped;
    uint64_t emitted, created, patched, rejected, failed, retries, correlated;
};

struct ks_event_recorder {
    rec_core *core;
    pthread_t thread;
};

static int64_t wall(const rec_core *c) { return c->o.now(c->o.now_arg); }

static void entry_free(ev_entry *e) {
    free(e->key);
    item_free(e->ev);
    free(e);
}

static void log_rec_free(log_rec *l) {
    free(l->name);
    free(l);
}

static void lru_free_all(lru *l, void (*fn)(void *)) {
    lru_node *x = l->head.next;
    while (x != &l->head) {
        lru_node *nx = x->next;
        fn(x);
        x = nx;
    }
    ks_map_free(&l->map);
    lru_init(l, l->cap);
}

static void entry_free_v(void *p) { entry_free(p); }
static void log_rec_free_v(void *p) { log_rec_free(p); }

static void job_free(ev_job *j) {
    if (!j) return;
    free(j->path);
    free(j->body);
    free(j->create_path);
    free(j->create_body);
    item_free(j->probe);
    free(j->error);
    free(j);
}

static void core_free(rec_core *c) {
    ev_item *it = c->q_head;
    while (it) {
        ev_item *n = it->next;
        item_free(it);
        it = n;
    }
    for (ev_job *j = c->done, *n; j; j = n) {
        n = j->next;
        job_free(j);
    }
    for (ev_job *j = c->retry, *n; j; j = n) {
        n = j->next;
        job_free(j);
    }
    lru_free_all(&c->cache, entry_free_v);
    lru_free_all(&c->spam, free);
    lru_free_all(&c->agg, free);
    lru_free_all(&c->logs, log_rec_free_v);
    free(c->hostname);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* ---- emitting -------------------------------------------------------------- */

static bool valid_type(const char *t) { return t && (!strcmp(t, "Normal") || !strcmp(t, "Warning")); }

#define BATCH 64

static void enqueue(rec_core *c, ev_item *it) {
    it->queued_ns = ks_monotonic_ns();
    pthread_mutex_lock(&c->mu);
    if (c->stopping || c->q_len >= c->o.queue_size) {
        pthread_mutex_unlock(&c->mu);
        atomic_fetch_add(&c->dropped, 1);
        ks_sm_k8s_event_dropped(c->stopping ? "shutdown" : "queue_full", 1);
        ks_infof(2, "\"Dropping event: too many queued events\" reason=\"%s\" object=\"%s/%s\"", it->reason,
                 it->regarding.ns, it->regarding.name);
        item_free(it);
        return;
    }
    it->next = NULL;
    if (c->q_tail) c->q_tail->next = it;
    else c->q_head = it;
    c->q_tail = it;
    c->q_len++;
    c->emitted++;
    /* The thread waits batch_ns for the events after the first one of a
     * batch (rec_loop): it needs waking for the first and for a full
     * batch only. */
    if (c->q_len == 1 || c->q_len == BATCH || c->o.batch_ns <= 0) pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void ks_event_recorder_emit(ks_event_recorder *r, const char *reporting_controller,
                            const ks_event_ref *regarding, const ks_event_ref *related,
                            const char *type, const char *reason, const char *action,
                            const char *note) {
    if (!r || !regarding) return;
    if (!valid_type(type)) {
        ks_errorf("Unsupported event type eventType=\"%s\"", type ? type : "");
        return;
    }
    rec_core *c = r->core;
    ev_item *it = ks_xcalloc(1, sizeof *it);
    it->time = wall(c);
    it->controller = utf8_clean(reporting_controller);
    it->instance = ks_xasprintf("%s-%s", it->controller, c->hostname);
    ref_copy(&it->regarding, regarding);
    if (related) {
        it->has_related = true;
        ref_copy(&it->related, related);
    }
    it->type = ks_xstrdup(type);
    it->reason = utf8_clean(reason);
    it->action = utf8_clean(action);
    it->note = ks_event_truncate_note(note);
    it->name = event_name(it->regarding.name, it->time);
    it->ns = ks_xstrdup(*it->regarding.ns ? it->regarding.ns : "default");
    enqueue(c, it);
}

void ks_event_recorder_emit_legacy(ks_event_recorder *r, const char *component,
                                   const ks_event_ref *regarding, const char *type,
                                   const char *reason, const char *message) {
    if (!r || !regarding) return;
    if (!valid_type(type)) {
        ks_errorf("Unsupported event type eventType=\"%s\"", type ? type : "");
        return;
    }
    rec_core *c = r->core;
    ev_item *it = ks_xcalloc(1, sizeof *it);
    it->legacy = true;
    it->time = wall(c);
    it->controller = utf8_clean(component);
    it->instance = ks_xstrdup("");
    ref_copy(&it->regarding, regarding);
    it->type = ks_xstrdup(type);
    it->reason = utf8_clean(reason);
    it->action = ks_xstrdup("");
    it->note = utf8_clean(message);
    it->name = event_name(it->regarding.name, it->time);
    it->ns = ks_xstrdup(*it->regarding.ns ? it->regarding.ns : "default");
    enqueue(c, it);
}

/* ---- jobs -------------------------------------------------------------- */

static char *coll_path(bool v1, const char *ns) {
    return v1 ? ks_xasprintf("/apis/events.k8s.io/v1/namespaces/%s/events", ns)
              : ks_xasprintf("/api/v1/namespaces/%s/events", ns);
}

static char *obj_path(bool v1, const char *ns, const char *name) {
    return v1 ? ks_xasprintf("/apis/events.k8s.io/v1/namespaces/%s/events/%s", ns, name)
              : ks_xasprintf("/api/v1/namespaces/%s/events/%s", ns, name);
}

static ev_job *job_new(rec_core *c, int kind) {
    ev_job *j = ks_xcalloc(1, sizeof *j);
    j->core = c;
    j->kind = kind;
    j->max_tries = MAX_TRIES;
    c->outstanding++;
    return j;
}

static ev_job *v1_create_job(rec_core *c, const ev_item *ev) {
    ev_job *j = job_new(c, J_V1_CREATE);
    j->path = coll_path(true, ev->ns);
    j->body = v1_body(ev, 1, 0, ks_kube_client_writes_protobuf(c->client), &j->body_pb, &j->body_len);
    return j;
}

static ev_job *v1_patch_job_at(rec_core *c, ev_entry *e, int32_t count, int64_t last) {
    ev_job *j = job_new(c, J_V1_PATCH);
    j->series = true;
    j->path = obj_path(true, e->ev->ns, e->ev->name);
    j->body = v1_series_patch(count, last);
    j->create_path = coll_path(true, e->ev->ns);
    j->create_body = v1_body(e->ev, count, last, ks_kube_client_writes_protobuf(c->client), &j->create_pb,
                             &j->create_len);
    e->sent_count = count;
    return j;
}

static ev_job *v1_patch_job(rec_core *c, ev_entry *e) { return v1_patch_job_at(c, e, e->count, e->last_observed); }

/* The entry a create was for, if still cached (not moved in the LRU). */
static ev_entry *entry_of(rec_core *c, const ev_job *j) {
    return j->entry ? ks_map_get(&c->cache.map, lru_key(j->entry)) : NULL;
}

/* A create is over (written, refused or given up on): the series patch
 * held for it goes now (out NULL: the caller made sure none is held). */
static void job_retire(rec_core *c, ev_job *j, ev_job **out, int *nout) {
    ev_entry *e = entry_of(c, j);
    if (e) {
        e->busy = false;
        if (e->held && out) {
            e->held = false;
            out[(*nout)++] = v1_patch_job_at(c, e, e->held_count, e->held_last);
        }
    }
    job_free(j);
}

static void job_send(rec_core *c, ev_job *j);

/* The key of client-go's eventCache: everything but the note. */
static char *v1_key(const ev_item *ev) {
    const ev_ref *a = &ev->regarding, *b = &ev->related;
    const char *empty = "";
    bool r = ev->has_related;
    return ks_xasprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s"
                        "\x1f%s\x1f%s\x1f%s\x1f%s",
                        ev->type, ev->action, ev->reason, ev->controller, ev->instance, a->kind, a->ns, a->name,
                        a->uid, a->api_version, a->rv, a->field_path, r ? b->kind : empty, r ? b->ns : empty,
                        r ? b->name : empty, r ? b->uid : empty, r ? b->api_version : empty,
                        r ? b->rv : empty, r ? b->field_path : empty);
}

/* Evicting a series whose latest count was never written writes it. */
static ev_job *evict_entry(rec_core *c, ev_entry *e) {
    ev_job *j = NULL;
    if (e->series && e->count != e->sent_count) j = v1_patch_job(c, e);
    entry_free(e);
    return j;
}

/* recordToSink: returns the write to make, if any. Takes the item. */
static void process_v1(rec_core *c, ev_item *ev, ev_job **out, int *nout) {
    char *key = v1_key(ev);
    uint64_t h = ks_hash_bytes(key, strlen(key));
    ev_entry *e = (ev_entry *)lru_get(&c->cache, h);
    if (e && strcmp(e->key, key) != 0) {
        /* a 64-bit collision: the newer key wins the slot */
        lru_del(&c->cache, &e->n);
        ev_job *j = evict_entry(c, e);
        if (j) out[(*nout)++] = j;
        e = NULL;
    }
    if (e) {
        free(key);
        e->last_observed = wall(c);
        if (e->series) {
            e->count++;
            c->correlated++;
            item_free(ev);
            return;
        }
        e->series = true;
        e->count = 2;
        if (e->busy) {
            e->held = true;
            e->held_count = e->count;
            e->held_last = e->last_observed;
        } else {
            out[(*nout)++] = v1_patch_job(c, e);
        }
        item_free(ev);
        return;
    }
    e = ks_xcalloc(1, sizeof *e);
    e->n.key = h;
    e->key = key;
    e->ev = ev;
    e->busy = true;
    ev_job *j = v1_create_job(c, ev);
    j->entry = h;
    if (c->api == API_UNKNOWN) j->probe = item_dup(ev);
    out[(*nout)++] = j;
    ev_entry *old = (ev_entry *)lru_put(&c->cache, &e->n);
    if (old) {
        ev_job *oj = evict_entry(c, old);
        if (oj) out[(*nout)++] = oj;
    }
}

/* Strings joined as record's keys are, hashed. */
static uint64_t hash_strs(const char *const *s, size_t n) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (size_t i = 0; i < n; i++) ks_sb_puts(&b, s[i]);
    uint64_t h = ks_hash_bytes(ks_sb_str(&b), b.len);
    ks_sb_free(&b);
    return h;
}

/* record's EventCorrelate (aggregate, observe, spam filter), then the
 * write. Takes the item. */
static void process_legacy(rec_core *c, ev_item *ev, ev_job **out, int *nout) {
    int64_t now = wall(c);
    const ev_ref *o = &ev->regarding;
    const char *host = "";
    const char *ek[] = {ev->controller, host, o->kind, o->ns, o->name, o->field_path, o->uid, o->api_version,
                        ev->type, ev->reason, ev->note};
    const char *ak[] = {ev->controller, host,    o->kind,   o->ns,          o->name,
                        o->uid,         o->api_version, ev->type, ev->reason, ev->controller,
                        ev->instance};
    uint64_t event_key = hash_strs(ek, sizeof ek / sizeof *ek);
    uint64_t agg_key = hash_strs(ak, sizeof ak / sizeof *ak);
    uint64_t local_key = ks_hash_bytes(ev->note, strlen(ev->note));

    /* EventAggregator */
    agg_rec *a = (agg_rec *)lru_get(&c->agg, agg_key);
    if (!a) {
        a = ks_xcalloc(1, sizeof *a);
        a->n.key = agg_key;
        free(lru_put(&c->agg, &a->n));
    }
    if (now - a->last > AGG_INTERVAL_NS) a->nlocal = 0;
    bool have = false;
    for (int i = 0; i < a->nlocal; i++) have = have || a->local[i] == local_key;
    if (!have) a->local[a->nlocal++] = local_key;
    a->last = now;
    uint64_t ckey = event_key;
    int64_t first = ev->time, last = ev->time;
    if (a->nlocal >= AGG_MAX_EVENTS) {
        /* PopAny: the oldest goes */
        memmove(a->local, a->local + 1, sizeof a->local[0] * (size_t)(a->nlocal - 1));
        a->nlocal--;
        char *msg = ks_xasprintf("(combined from similar events): %s", ev->note);
        free(ev->note);
        ev->note = msg;
        free(ev->name);
        ev->name = ks_xasprintf("%s.%llx", o->name, (unsigned long long)now);
        first = last = now;
        ckey = agg_key;
    }

    /* eventLogger */
    int32_t count = 1;
    log_rec *l = (log_rec *)lru_get(&c->logs, ckey);
    if (l && l->count > 0) {
        count = l->count + 1;
        first = l->first;
        free(ev->name);
        ev->name = ks_xstrdup(l->name);
    }
    if (!l) {
        l = ks_xcalloc(1, sizeof *l);
        l->n.key = ckey;
        lru_node *old = lru_put(&c->logs, &l->n);
        if (old) log_rec_free((log_rec *)old);
    }
    l->count = count;
    l->first = first;
    free(l->name);
    l->name = ks_xstrdup(ev->name);

    /* EventSourceObjectSpamFilter */
    const char *sk[] = {ev->controller, host, o->kind, o->ns, o->name, o->uid, o->api_version, ev->type};
    uint64_t spam_key = hash_strs(sk, sizeof sk / sizeof *sk);
    spam_rec *s = (spam_rec *)lru_get(&c->spam, spam_key);
    if (!s) {
        s = ks_xcalloc(1, sizeof *s);
        s->n.key = spam_key;
        s->tokens = SPAM_BURST;
        s->last = now;
        free(lru_put(&c->spam, &s->n));
    }
    if (now > s->last) {
        s->tokens += (double)(now - s->last) / NS_PER_SEC * SPAM_QPS;
        if (s->tokens > SPAM_BURST) s->tokens = SPAM_BURST;
        s->last = now;
    }
    if (s->tokens < 1.0) {
        c->correlated++;
        item_free(ev);
        return;
    }
    s->tokens -= 1.0;

    bool combined = ckey != event_key;
    ev_job *j;
    char *body = core_body(ev, count, first, last, combined);
    if (count > 1) {
        j = job_new(c, J_CORE_PATCH);
        j->path = obj_path(false, ev->ns, ev->name);
        j->body = core_patch(count, last, ev->note);
        j->create_path = coll_path(false, ev->ns);
        j->create_body = body;
    } else {
        j = job_new(c, J_CORE_CREATE);
        j->path = coll_path(false, ev->ns);
        j->body = body;
    }
    j->legacy_delay = true;
    out[(*nout)++] = j;
    item_free(ev);
}

/* The adapter's fallback: an events.k8s.io/v1 event written by the
 * legacy recorder (action and related are lost, no reporting instance). */
static ev_item *to_legacy(ev_item *ev) {
    ev->legacy = true;
    free(ev->instance);
    ev->instance = ks_xstrdup("");
    if (ev->has_related) {
        ref_free(&ev->related);
        ev->has_related = false;
    }
    return ev;
}

static void process_item(rec_core *c, ev_item *ev, ev_job **out, int *nout) {
    if (ev->legacy) process_legacy(c, ev, out, nout);
    else if (c->api == API_CORE) process_legacy(c, to_legacy(ev), out, nout);
    else process_v1(c, ev, out, nout);
}

/* ---- answers --------------------------------------------------------------- */

static void handle_answer(rec_core *c, ev_job *j, ev_job **out, int *nout);

static void job_done(void *arg, const ks_kube_response *r) {
    ev_job *j = arg;
    rec_core *c = j->core;
    j->code = r->code;
    free(j->error);
    j->error = r->error ? ks_xstrdup(r->error) : NULL;
    j->ns_missing = j->already_exists = false;
    if (r->body && r->code >= 400) {
        /* the Status, JSON or protobuf */
        ks_arena *a = ks_arena_new(0);
        ks_tree **docs = NULL, *st = NULL;
        uint32_t nd = 0;
        char *err = NULL;
        if (ks_pb_is_protobuf(r->body, r->body_len)) {
            if (!ks_pb_decode_object(a, r->body, r->body_len, &st, &err)) st = NULL;
        } else if (kt_parse(a, "status", r->body, r->body_len, &docs, &nd, &err) && nd == 1) {
            st = docs[0];
        }
        free(err);
        const ks_tree *reason = kt_get(st, "reason"), *kind = kt_get(kt_get(st, "details"), "kind");
        j->already_exists = reason && reason->type == KT_STRING && !strcmp(reason->text, "AlreadyExists");
        j->ns_missing = kind && kind->type == KT_STRING && !strcmp(kind->text, "namespaces");
        const ks_tree *m = kt_get(st, "message");
        if (!j->error && m && m->type == KT_STRING) j->error = ks_xstrdup(m->text);
        ks_arena_free(a);
    }
    pthread_mutex_lock(&c->mu);
    bool last = false;
    if (c->closed) {
        job_free(j);
    } else if (r->code >= 200 && r->code < 300 && !(entry_of(c, j) && entry_of(c, j)->held)) {
        /* Written (and no series patch waits for it): only counted
         * (handle_answer), here on the client's thread; the recorder's
         * thread is woken only when it waits for this answer to send more
         * (or to stop). One wake-up less per event. */
        bool held = c->api == API_UNKNOWN || c->outstanding >= c->o.max_outstanding;
        handle_answer(c, j, NULL, NULL);
        if (c->stopping || (held && c->q_head)) pthread_cond_signal(&c->cv);
    } else {
        j->next = c->done;
        c->done = j;
        pthread_cond_signal(&c->cv);
    }
    last = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (last) core_free(c);
}

static void retry_later(rec_core *c, ev_job *j, ev_job **out, int *nout) {
    j->tries++;
    if (j->tries >= j->max_tries) {
        if (j->max_tries > 1) ks_errorf("Unable to write event (retry limit exceeded!) path=\"%s\"", j->path);
        c->failed++;
        ks_sm_k8s_event_dropped("failed", 1);
        c->outstanding--;
        job_retire(c, j, out, nout);
        return;
    }
    double d = (double)c->o.retry_sleep_ns;
    if (j->legacy_delay) d = j->tries == 1 ? d * rand01() : d;
    else d = d * (1.0 + 0.25 * rand01());
    j->due = ks_monotonic_ns() + (int64_t)d;
    c->retries++;
    /* sorted by due time */
    ev_job **pp = &c->retry;
    while (*pp && (*pp)->due <= j->due) pp = &(*pp)->next;
    j->next = *pp;
    *pp = j;
}

/* Under the lock: decide what an answered write means. */
static void handle_answer(rec_core *c, ev_job *j, ev_job **out, int *nout) {
    long code = j->code;
    bool v1 = j->kind == J_V1_CREATE || j->kind == J_V1_PATCH;
    bool create = j->kind == J_V1_CREATE || j->kind == J_CORE_CREATE || j->creating;
    if (v1 && code != 0 && create && !(code == 404 && !j->ns_missing) && c->api == API_UNKNOWN) c->api = API_V1;
    if (code >= 200 && code < 300) {
        if (create) c->created++;
        else c->patched++;
        c->outstanding--;
        job_retire(c, j, out, nout);
        return;
    }
    if (code == 0) {
        ks_errorf("Unable to write event (may retry after sleeping) path=\"%s\" err=\"%s\"", j->path,
                  j->error ? j->error : "");
        retry_later(c, j, out, nout);
        return;
    }
    if (code == 404 && !create) {
        /* the Event is gone (expired): create it again */
        j->creating = true;
        free(j->path);
        free(j->body);
        j->path = j->create_path;
        j->body = j->create_body;
        j->body_pb = j->create_pb;
        j->body_len = j->create_len;
        j->create_path = j->create_body = NULL;
        out[(*nout)++] = j;
        return;
    }
    if (code == 404 && j->kind == J_V1_CREATE && !j->ns_missing && c->api != API_V1) {
        /* events.k8s.io/v1 is not served: core/v1 from now on */
        if (c->api != API_CORE) ks_infof(1, "events.k8s.io/v1 is not served; writing core/v1 Events");
        c->api = API_CORE;
        lru_free_all(&c->cache, entry_free_v);
        ev_item *ev = j->probe;
        j->probe = NULL;
        c->outstanding--;
        job_free(j);
        if (ev) process_legacy(c, to_legacy(ev), out, nout);
        return;
    }
    if (code == 409 && j->already_exists && v1 && j->series) {
        retry_later(c, j, out, nout);
        return;
    }
    if (code == 409 && j->already_exists) {
        ks_infof(5, "\"Server rejected event (will not retry!)\" path=\"%s\" err=\"%s\"", j->path,
                 j->error ? j->error : "");
    } else {
        ks_errorf("Server rejected event (will not retry!) path=\"%s\" code=%ld err=\"%s\"", j->path, code,
                  j->error ? j->error : "");
    }
    c->rejected++;
    ks_sm_k8s_event_dropped("rejected", 1);
    c->outstanding--;
    job_retire(c, j, out, nout);
}

static void job_send(rec_core *c, ev_job *j) {
    bool patch = !j->creating && (j->kind == J_V1_PATCH || j->kind == J_CORE_PATCH);
    bool pb = !patch && j->body_pb;
    ks_kube_request req = {
        .method = patch ? "PATCH" : "POST",
        .path = j->path,
        .content_type = patch ? "application/strategic-merge-patch+json" : pb ? KS_KUBE_PROTOBUF : "application/json",
        .body = j->body,
        .body_len = j->body_len ? j->body_len : strlen(j->body),
        .idempotent = false,
        .negotiate = true, /* job_done reads a Status in either form */
    };
    ks_kube_do_async(c->client, &req, job_done, j);
}

/* ---- maintenance ------------------------------------------------------------ */

/* finishSeries: a series quiet for 6 minutes gets its final count and is
 * forgotten; so is a single event 6 minutes old. */
static void finish_series(rec_core *c, ev_job **out, int *nout, int max) {
    int64_t now = wall(c);
    lru_node *x = c->cache.head.next;
    while (x != &c->cache.head && *nout < max) {
        lru_node *nx = x->next;
        ev_entry *e = (ev_entry *)x;
        if (e->series ? e->last_observed < now - FINISH_AGE_NS : e->ev->time < now - FINISH_AGE_NS) {
            lru_del(&c->cache, x);
            if (e->series) out[(*nout)++] = v1_patch_job(c, e);
            entry_free(e);
        }
        x = nx;
    }
}

/* refreshExistingEventSeries: every open series written again, once. */
static void refresh_series(rec_core *c, ev_job **out, int *nout, int max) {
    for (lru_node *x = c->cache.head.next; x != &c->cache.head && *nout < max; x = x->next) {
        ev_entry *e = (ev_entry *)x;
        if (!e->series) continue;
        ev_job *j = v1_patch_job(c, e);
        j->max_tries = 1;
        out[(*nout)++] = j;
    }
}

/* At shutdown: the counts of open series not written yet. */
static void flush_series(rec_core *c, ev_job **out, int *nout, int max) {
    for (lru_node *x = c->cache.head.next; x != &c->cache.head && *nout < max; x = x->next) {
        ev_entry *e = (ev_entry *)x;
        if (e->series && e->count != e->sent_count) {
            ev_job *j = v1_patch_job(c, e);
            j->max_tries = 1;
            out[(*nout)++] = j;
        }
    }
}

/* ---- the thread ---------------------------------------------------------- */

/* Whether the queue's events may be written now (the API known: up to
 * max_outstanding at once; not yet: one at a time). */
static bool can_send(const rec_core *c) {
    return c->api == API_UNKNOWN ? c->outstanding == 0 : c->outstanding < c->o.max_outstanding;
}

static void *rec_loop(void *arg) {
    pthread_setname_np(pthread_self(), "events"); /* top -H, pprof's thread label */
    rec_core *c = arg;
    ev_job **out = ks_xmalloc(sizeof *out * (BATCH + 4));
    bool flushed = false;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        int nout = 0;
        int64_t now = ks_monotonic_ns();
        /* answers */
        while (c->done && nout < BATCH) {
            ev_job *j = c->done;
            c->done = j->next;
            handle_answer(c, j, out, &nout);
        }
        /* retries due; at a stop, all of them now (the stop deadline
         * bounds them, not their sleep) */
        while (c->retry && (c->retry->due <= now || c->stopping) && nout < BATCH) {
            ev_job *j = c->retry;
            c->retry = j->next;
            out[nout++] = j;
        }
        /* periodic series work */
        if (now >= c->next_finish) {
            finish_series(c, out, &nout, BATCH);
            c->next_finish = now + c->o.finish_period_ns;
        }
        if (now >= c->next_refresh) {
            refresh_series(c, out, &nout, BATCH);
            c->next_refresh = now + c->o.refresh_period_ns;
        }
        /* new events, once the first has waited batch_ns (or a batch is
         * full, or other writes go now); one at a time while the API is
         * not known */
        bool due = c->q_head && (c->stopping || nout > 0 || c->q_len >= BATCH ||
                                 now - c->q_head->queued_ns >= c->o.batch_ns);
        while (due && c->q_head && nout < BATCH && can_send(c)) {
            ev_item *ev = c->q_head;
            c->q_head = ev->next;
            if (!c->q_head) c->q_tail = NULL;
            c->q_len--;
            process_item(c, ev, out, &nout);
        }
        if (c->stopping && !c->q_head && !flushed) {
            if (c->api != API_CORE) flush_series(c, out, &nout, BATCH);
            flushed = nout < BATCH;
        }
        if (nout > 0) {
            c->refs += nout;
            pthread_mutex_unlock(&c->mu);
            for (int i = 0; i < nout; i++) job_send(c, out[i]);
            pthread_mutex_lock(&c->mu);
            continue;
        }
        if (c->stopping) {
            if (!c->q_head && !c->retry && c->outstanding == 0 && flushed) break;
            if (ks_monotonic_ns() >= c->stop_deadline) break;
        }
        if (c->done) continue;
        int64_t until = c->stopping ? c->stop_deadline : INT64_MAX;
        if (c->retry && c->retry->due < until) until = c->retry->due;
        if (c->next_finish < until) until = c->next_finish;
        if (c->next_refresh < until) until = c->next_refresh;
        if (c->q_head && can_send(c) && c->q_head->queued_ns + c->o.batch_ns < until)
            until = c->q_head->queued_ns + c->o.batch_ns;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t wait = until - ks_monotonic_ns();
        if (wait <= 0) continue;
        if (wait > 3600 * NS_PER_SEC) wait = 3600 * NS_PER_SEC;
        int64_t abs = (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec + wait;
        ts.tv_sec = (time_t)(abs / NS_PER_SEC);
        ts.tv_nsec = (long)(abs % NS_PER_SEC);
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    /* what could not be written in time */
    uint64_t left = c->q_len;
    for (ev_item *it = c->q_head, *n; it; it = n) {
        n = it->next;
        item_free(it);
    }
    c->q_head = c->q_tail = NULL;
    c->q_len = 0;
    for (ev_job *j = c->retry, *n; j; j = n) {
        n = j->next;
        left++;
        job_free(j);
    }
    c->retry = NULL;
    if (left) {
        atomic_fetch_add(&c->dropped, left);
        ks_sm_k8s_event_dropped("shutdown", left);
    }
    if (left || c->outstanding)
        ks_warnf("Events not written at shutdown: %llu dropped, %u in flight", (unsigned long long)left,
                 c->outstanding);
    pthread_mutex_unlock(&c->mu);
    free(out);
    return NULL;
}

/* ---- life cycle ------------------------------------------------------------ */

ks_event_recorder *ks_event_recorder_new_opts(ks_kube_client *client, const ks_event_recorder_options *opts,
                                              char **err) {
    if (!client) {
        if (err) *err = ks_xstrdup("event recorder: no client");
        return NULL;
    }
    rec_core *c = ks_xcalloc(1, sizeof *c);
    if (opts) c->o = *opts;
    if (!c->o.queue_size) c->o.queue_size = 1000;
    if (!c->o.max_outstanding) c->o.max_outstanding = 64;
    if (!c->o.cache_size) c->o.cache_size = 4096;
    if (c->o.retry_sleep_ns <= 0) c->o.retry_sleep_ns = 10 * NS_PER_SEC;
    if (c->o.finish_period_ns <= 0) c->o.finish_period_ns = FINISH_AGE_NS;
    if (c->o.refresh_period_ns <= 0) c->o.refresh_period_ns = 30LL * 60 * NS_PER_SEC;
    if (c->o.flush_timeout_ns <= 0) c->o.flush_timeout_ns = 5 * NS_PER_SEC;
    if (!c->o.batch_ns) c->o.batch_ns = BATCH_WAIT_NS;
    if (!c->o.now) c->o.now = real_now;
    if (c->o.hostname) {
        c->hostname = utf8_clean(c->o.hostname);
    } else {
        char h[256];
        if (gethostname(h, sizeof h) != 0) {
            if (err) *err = ks_xasprintf("unable to get hostname: %s", strerror(errno));
            free(c);
            return NULL;
        }
        h[sizeof h - 1] = 0;
        c->hostname = utf8_clean(h);
    }
    c->o.hostname = NULL;
    c->client = client;
    c->refs = 1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    lru_init(&c->cache, c->o.cache_size);
    lru_init(&c->spam, LEGACY_CACHE);
    lru_init(&c->agg, LEGACY_CACHE);
    lru_init(&c->logs, LEGACY_CACHE);
    atomic_init(&c->dropped, 0);
    int64_t now = ks_monotonic_ns();
    c->next_finish = now + c->o.finish_period_ns;
    c->next_refresh = now + c->o.refresh_period_ns;
    ks_event_recorder *r = ks_xcalloc(1, sizeof *r);
    r->core = c;
    int rc = pthread_create(&r->thread, NULL, rec_loop, c);
    if (rc != 0) {
        if (err) *err = ks_xasprintf("event recorder: cannot start its thread: %s", strerror(rc));
        core_free(c);
        free(r);
        return NULL;
    }
    return r;
}

ks_event_recorder *ks_event_recorder_new(ks_kube_client *c, const char *hostname, char **err) {
    ks_event_recorder_options o = {0};
    o.hostname = hostname;
    return ks_event_recorder_new_opts(c, &o, err);
}

void ks_event_recorder_free(ks_event_recorder *r) {
    if (!r) return;
    rec_core *c = r->core;
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    c->stop_deadline = ks_monotonic_ns() + c->o.flush_timeout_ns;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(r->thread, NULL);
    pthread_mutex_lock(&c->mu);
    c->closed = true;
    for (ev_job *j = c->done, *n; j; j = n) {
        n = j->next;
        job_free(j);
    }
    c->done = NULL;
    bool last = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (last) core_free(c);
    free(r);
}

void ks_event_recorder_stats_get(ks_event_recorder *r, ks_event_recorder_stats *out) {
    memset(out, 0, sizeof *out);
    if (!r) return;
    rec_core *c = r->core;
    pthread_mutex_lock(&c->mu);
    out->emitted = c->emitted;
    out->dropped = atomic_load(&c->dropped);
    out->created = c->created;
    out->patched = c->patched;
    out->rejected = c->rejected;
    out->failed = c->failed;
    out->retries = c->retries;
    out->correlated = c->correlated;
    out->queued = c->q_len;
    out->outstanding = c->outstanding;
    out->cached = (uint32_t)c->cache.n;
    out->api = c->api == API_V1 ? "events.k8s.io/v1" : c->api == API_CORE ? "v1" : "";
    pthread_mutex_unlock(&c->mu);
}

uint64_t ks_event_recorder_dropped(ks_event_recorder *r) {
    return r ? atomic_load(&r->core->dropped) : 0;
}
