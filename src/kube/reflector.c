#include "kube/reflector.h"
#include "codec/pb.h"
#include "kube/jsonsplit.h"

#include "metrics/sched_metrics.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

/* What the reflector remembers of each object it delivered: enough to
 * tell, on a relist, what is new, what changed and what went away. One
 * block per object: its namespace and name after the struct, uid and
 * resourceVersion in buffers of their own while they fit (a uid is 36
 * characters, a resourceVersion an etcd revision), else allocated. It
 * was five blocks (DRA benchmark, 11,000 objects: 1.27 MB in 55,000
 * blocks, now 1.42 MB in 11,000; ~0.5 MB less with malloc's ~16 bytes a
 * block). */
#define KNOWN_UID 40
#define KNOWN_RV 24
typedef struct known {
    struct known *next; /* same hash */
    char *uid, *rv;     /* NULL, uid_buf / rv_buf, or their own block */
    uint64_t seen;      /* the relist that last saw it */
    const char *name;   /* in text, after ns */
    char uid_buf[KNOWN_UID], rv_buf[KNOWN_RV];
    char ns[];          /* ns, then name */
} known;

/* A LIST request in flight. The reflector may give up on it (stop); the
 * client's callback then frees it alone. */
typedef struct list_call {
    pthread_mutex_t mu;
    atomic_int refs;
    atomic_bool done;
    ks_kube_response resp;
    struct ks_reflector *r; /* NULL once abandoned */
} list_call;

/* One streamed answer (a watch, a list page) as the client's I/O thread
 * hands it over, for the reflector's thread to take; guarded by r->mu. A
 * list has two open at once when it asks for its next page early. */
typedef struct feed {
    struct ks_reflector *r;
    ks_kube_stream *s;
    ks_strbuf in; /* bytes not taken yet */
    bool ended, data;
    long code;
    char *error;
} feed;

struct ks_reflector {
    ks_kube_client *c;
    char *kind, *path, *fsel, *lsel;
    uint32_t page, first_page;
    int64_t min_timeout_s, backoff_init_ns;
    size_t max_event;
    bool negotiate;       /* Accept protobuf when the client is configured for it */
    ks_reflector_handler h;
    pthread_t th;

    pthread_mutex_t mu;   /* guards what the client's callbacks touch, stopping, stats */
    pthread_cond_t cv;
    bool stopping;
    ks_reflector_stats stats;

    atomic_bool synced;
    /* the first list's timeline (reflector thread), logged at -v=2 once
     * it is in: asked, first byte, last byte, every item handed over */
    int64_t t_ask_ns, t_first_ns, t_last_ns;
    size_t list_bytes;

    /* the reflector's thread only */
    ks_map objs;
    char *rv;             /* last resourceVersion seen */
    char *api_version;    /* of the items, from the list */
    bool rv_unavailable;  /* a list at rv got 410: list at "" */
    bool paginated;       /* the first list came in pages: keep the limit */
    bool listed_once;
    uint64_t gen;
    int64_t backoff_cur_ns, backoff_last_ns;
    unsigned seed;
    char last_logged[256];
};

/* ---- errors and backoff ------------------------------------------------- */

/* An error is logged when it differs from the last one logged (a missing
 * CRD does not fill the log); repeats go to -v=2. */
static void note_error(ks_reflector *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_error(ks_reflector *r, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&r->mu);
    snprintf(r->stats.last_error, sizeof(r->stats.last_error), "%s", msg);
    pthread_mutex_unlock(&r->mu);
    if (strcmp(msg, r->last_logged) != 0) {
        ks_warnf("%s", msg);
        snprintf(r->last_logged, sizeof(r->last_logged), "%s", msg);
    } else {
        ks_infof(2, "%s", msg);
    }
}

static void note_ok(ks_reflector *r) { r->last_logged[0] = '\0'; }

static void count_decode_error(ks_reflector *r) {
    pthread_mutex_lock(&r->mu);
    r->stats.decode_errors++;
    pthread_mutex_unlock(&r->mu);
    ks_sm_event_dropped("decode");
}

/* client-go's ExponentialBackoffManager(800 ms, 30 s, 2 min, 2.0, 1.0). */
static int64_t backoff_next(ks_reflector *r) {
    int64_t now = ks_monotonic_ns();
    if (!r->backoff_last_ns || now - r->backoff_last_ns > 120 * KS_NS_PER_SEC) r->backoff_cur_ns = r->backoff_init_ns;
    r->backoff_last_ns = now;
    int64_t d = r->backoff_cur_ns;
    r->backoff_cur_ns = d * 2 > 30 * KS_NS_PER_SEC ? 30 * KS_NS_PER_SEC : d * 2;
    return d + (int64_t)((double)rand_r(&r->seed) / RAND_MAX * (double)d);
}

/* Sleep for d unless stopped; false when stopping. */
static bool pause_for(ks_reflector *r, int64_t d) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t t = (int64_t)ts.tv_sec * KS_NS_PER_SEC + ts.tv_nsec + d;
    ts.tv_sec = t / KS_NS_PER_SEC;
    ts.tv_nsec = t % KS_NS_PER_SEC;
    pthread_mutex_lock(&r->mu);
    while (!r->stopping && pthread_cond_timedwait(&r->cv, &r->mu, &ts) != ETIMEDOUT) {}
    bool go = !r->stopping;
    pthread_mutex_unlock(&r->mu);
    return go;
}

static bool stopping(ks_reflector *r) {
    pthread_mutex_lock(&r->mu);
    bool s = r->stopping;
    pthread_mutex_unlock(&r->mu);
    return s;
}

/* ---- known objects ---------------------------------------------------------- */

static uint64_t key_hash(const char *ns, const char *name) {
    uint64_t h = ks_hash_bytes(ns, strlen(ns)) * 31 + ks_hash_bytes(name, strlen(name));
    return h ? h : 1;
}

static known *known_find(ks_reflector *r, const char *ns, const char *name) {
    for (known *k = ks_map_get(&r->objs, key_hash(ns, name)); k; k = k->next)
        if (strcmp(k->ns, ns) == 0 && strcmp(k->name, name) == 0) return k;
    return NULL;
}

static void known_free(known *k) {
    if (k->uid != k->uid_buf) free(k->uid);
    if (k->rv != k->rv_buf) free(k->rv);
    free(k);
}

/* *dst = s (NULL: none), in buf (cap bytes) when it fits. */
static void known_set(char **dst, char *buf, size_t cap, const char *s) {
    if (*dst && s && strcmp(*dst, s) == 0) return;
    if (*dst != buf) free(*dst);
    *dst = NULL;
    if (!s) return;
    size_t n = strlen(s);
    if (n < cap) {
        memcpy(buf, s, n + 1);
        *dst = buf;
    } else {
        *dst = ks_xstrdup(s);
    }
}

static void known_set_uid_rv(known *k, const char *uid, const char *rv) {
    known_set(&k->uid, k->uid_buf, sizeof k->uid_buf, uid);
    known_set(&k->rv, k->rv_buf, sizeof k->rv_buf, rv);
}

static known *known_add(ks_reflector *r, const char *ns, const char *name) {
    size_t nl = strlen(ns), ml = strlen(name);
    known *k = ks_xmalloc(sizeof(*k) + nl + ml + 2);
    k->uid = k->rv = NULL;
    k->seen = 0;
    memcpy(k->ns, ns, nl + 1);
    memcpy(k->ns + nl + 1, name, ml + 1);
    k->name = k->ns + nl + 1;
    uint64_t h = key_hash(ns, name);
    k->next = ks_map_get(&r->objs, h);
    ks_map_put(&r->objs, h, k);
    return k;
}

static void known_remove(ks_reflector *r, known *k) {
    uint64_t h = key_hash(k->ns, k->name);
    known *head = ks_map_get(&r->objs, h);
    if (head == k) {
        if (k->next) ks_map_put(&r->objs, h, k->next);
        else ks_map_del(&r->objs, h);
    } else {
        for (known *p = head; p; p = p->next)
            if (p->next == k) {
                p->next = k->next;
                break;
            }
    }
    known_free(k);
}

static void set_str(char **dst, const char *s) {
    if (*dst && s && strcmp(*dst, s) == 0) return;
    free(*dst);
    *dst = s ? ks_xstrdup(s) : NULL;
}

static const char *str_of(const ks_tree *t) {
    return t && t->type != KT_MAP && t->type != KT_SEQ && t->type != KT_NULL && t->text ? t->text : NULL;
}

/* metadata of an object: false (with why) when it is not an object with a name. */
static bool object_meta(const ks_tree *obj, const char **ns, const char **name, const char **uid, const char **rv,
                        const char **why) {
    if (!obj || obj->type != KT_MAP) {
        *why = "not an object";
        return false;
    }
    const ks_tree *md = kt_get(obj, "metadata");
    if (!md || md->type != KT_MAP) {
        *why = "no metadata";
        return false;
    }
    *name = str_of(kt_get(md, "name"));
    if (!*name || !**name) {
        *why = "no metadata.name";
        return false;
    }
    *ns = str_of(kt_get(md, "namespace"));
    if (!*ns) *ns = "";
    *uid = str_of(kt_get(md, "uid"));
    *rv = str_of(kt_get(md, "resourceVersion"));
    return true;
}

static void deliver(ks_reflector *r, ks_refl_event type, const ks_tree *obj) {
    pthread_mutex_lock(&r->mu);
    r->stats.events++;
    pthread_mutex_unlock(&r->mu);
    if (r->h.event) r->h.event(r->h.arg, type, obj);
}

/* The stand-in for an object gone while no watch saw it go. */
static void deliver_deleted_stub(ks_reflector *r, ks_arena *a, const known *k) {
    ks_tree *obj = kt_new(a, KT_MAP, 0);
    if (r->api_version) kt_map_add(a, obj, "apiVersion", kt_string(a, r->api_version, 0));
    kt_map_add(a, obj, "kind", kt_string(a, r->kind, 0));
    ks_tree *md = kt_new(a, KT_MAP, 0);
    kt_map_add(a, md, "name", kt_string(a, k->name, 0));
    if (*k->ns) kt_map_add(a, md, "namespace", kt_string(a, k->ns, 0));
    if (k->uid) kt_map_add(a, md, "uid", kt_string(a, k->uid, 0));
    kt_map_add(a, obj, "metadata", md);
    deliver(r, KS_REFL_DELETED, obj);
}

/* ---- streamed answers (a watch, a protobuf list) ----------------------------------- */

static void on_feed_data(void *arg, const char *buf, size_t n) {
    feed *f = arg;
    pthread_mutex_lock(&f->r->mu);
    ks_sb_putn(&f->in, buf, n);
    f->data = true;
    pthread_cond_broadcast(&f->r->cv);
    pthread_mutex_unlock(&f->r->mu);
}

static void on_feed_end(void *arg, long code, const char *error) {
    feed *f = arg;
    pthread_mutex_lock(&f->r->mu);
    f->ended = true;
    f->code = code;
    free(f->error);
    f->error = error ? ks_xstrdup(error) : NULL;
    pthread_cond_broadcast(&f->r->cv);
    pthread_mutex_unlock(&f->r->mu);
}

static feed *feed_open(ks_reflector *r, const char *url, bool negotiate) {
    feed *f = ks_xcalloc(1, sizeof(*f));
    f->r = r;
    ks_sb_init(&f->in);
    /* paced: the API server sends a window ahead of the decoding, no more */
    f->s = ks_kube_stream_open_paced(r->c, url, negotiate, on_feed_data, on_feed_end, f);
    return f;
}

/* Cancels the stream if it still runs (no callback runs once this returns). */
static void feed_close(feed *f) {
    if (!f) return;
    ks_kube_stream_close(f->s);
    ks_sb_free(&f->in);
    free(f->error);
    free(f);
}

/* ---- LIST ------------------------------------------------------------------------ */

static void url_escape(ks_strbuf *b, const char *s) {
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
            ch == '.' || ch == '_' || ch == '~') {
            ks_sb_putc(b, (char)ch);
        } else {
            ks_sb_putc(b, '%');
            ks_sb_putc(b, hex[ch >> 4]);
            ks_sb_putc(b, hex[ch & 15]);
        }
    }
}

/* Query parameters in Go's url.Values order (sorted by name). */
static void param(ks_strbuf *b, const char *name, const char *value) {
    ks_sb_putc(b, strchr(ks_sb_str(b), '?') ? '&' : '?');
    ks_sb_puts(b, name);
    ks_sb_putc(b, '=');
    url_escape(b, value);
}

static void list_done(void *arg, const ks_kube_response *resp) {
    list_call *lc = arg;
    pthread_mutex_lock(&lc->mu);
    lc->resp = *resp;
    lc->resp.body = ks_kube_response_take_body(resp);
    lc->resp.error = resp->error ? ks_xstrdup(resp->error) : NULL;
    atomic_store(&lc->done, true);
    if (lc->r) {
        pthread_mutex_lock(&lc->r->mu);
        pthread_cond_broadcast(&lc->r->cv);
        pthread_mutex_unlock(&lc->r->mu);
    }
    pthread_mutex_unlock(&lc->mu);
    if (atomic_fetch_sub(&lc->refs, 1) == 1) {
        ks_kube_response_free(&lc->resp);
        pthread_mutex_destroy(&lc->mu);
        free(lc);
    }
}

/* One GET, given up when the reflector stops (false then). */
static bool get(ks_reflector *r, const char *url, ks_kube_response *out) {
    list_call *lc = ks_xcalloc(1, sizeof(*lc));
    pthread_mutex_init(&lc->mu, NULL);
    atomic_init(&lc->refs, 2);
    atomic_init(&lc->done, false);
    lc->r = r;
    ks_kube_request req = {.method = "GET", .path = url, .idempotent = true, .negotiate = r->negotiate};
    ks_kube_do_async(r->c, &req, list_done, lc);
    pthread_mutex_lock(&r->mu);
    while (!atomic_load(&lc->done) && !r->stopping) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_lock(&lc->mu);
    bool done = atomic_load(&lc->done);
    lc->r = NULL;
    if (done) {
        *out = lc->resp;
        memset(&lc->resp, 0, sizeof(lc->resp));
    }
    pthread_mutex_unlock(&lc->mu);
    if (atomic_fetch_sub(&lc->refs, 1) == 1) {
        ks_kube_response_free(&lc->resp);
        pthread_mutex_destroy(&lc->mu);
        free(lc);
    }
    return done;
}

static char *list_url(ks_reflector *r, const char *cont, uint32_t limit, const char *rv) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, r->path);
    if (cont) param(&b, "continue", cont);
    if (r->fsel) param(&b, "fieldSelector", r->fsel);
    if (r->lsel) param(&b, "labelSelector", r->lsel);
    if (limit) {
        char n[16];
        snprintf(n, sizeof(n), "%u", limit);
        param(&b, "limit", n);
    }
    if (!cont && rv && *rv) param(&b, "resourceVersion", rv);
    return ks_sb_take(&b);
}

typedef enum { L_OK, L_ERR, L_STOP } list_result;

/* The list's items replace the known set: new keys are ADDED, changed
 * resourceVersions MODIFIED (replace_items, page by page, so that only
 * one page is held in memory), keys no longer listed DELETED
 * (replace_end, once the whole list is in). A list that fails half way
 * has delivered its first pages: the next list compares with them, and
 * only a complete list removes anything. */
static void replace_begin(ks_reflector *r) { r->gen++; }

/* base: the index in the whole list of items[0], for messages. */
static void replace_items(ks_reflector *r, ks_arena *a, ks_tree **items, size_t n, size_t base) {
    for (size_t i = 0; i < n; i++) {
        ks_tree *obj = items[i];
        const char *ns, *name, *uid, *rv, *why;
        if (!object_meta(obj, &ns, &name, &uid, &rv, &why)) {
            const char *nm = obj && obj->type == KT_MAP ? str_of(kt_get(kt_get(obj, "metadata"), "name")) : NULL;
            ks_warnf("%s list (%s): item %zu%s%s%s: %s, skipped", r->kind, r->path, base + i, nm ? " (" : "",
                     nm ? nm : "", nm ? ")" : "", why);
            count_decode_error(r);
            continue;
        }
        /* list items come without apiVersion and kind: the handler gets them */
        if (!kt_get(obj, "kind")) kt_map_set(a, obj, "kind", kt_string(a, r->kind, 0));
        if (!kt_get(obj, "apiVersion") && r->api_version)
            kt_map_set(a, obj, "apiVersion", kt_string(a, r->api_version, 0));
        known *k = known_find(r, ns, name);
        ks_refl_event ev;
        if (!k) {
            k = known_add(r, ns, name);
            ev = KS_REFL_ADDED;
        } else if (k->seen == r->gen || !k->rv || !rv || strcmp(k->rv, rv) != 0) {
            ev = KS_REFL_MODIFIED;
        } else {
            k->seen = r->gen; /* unchanged */
            continue;
        }
        known_set_uid_rv(k, uid, rv);
        k->seen = r->gen;
        deliver(r, ev, obj);
    }
}

static void replace_end(ks_reflector *r, ks_arena *a) {
    /* what is left unseen is gone */
    known **gone = NULL;
    size_t ngone = 0, cap = 0;
    uint64_t key;
    void *val;
    for (size_t it = 0; ks_map_next(&r->objs, &it, &key, &val);)
        for (known *k = val; k; k = k->next)
            if (k->seen != r->gen) {
                KS_GROW(gone, cap, ngone + 1);
                gone[ngone++] = k;
            }
    for (size_t i = 0; i < ngone; i++) {
        deliver_deleted_stub(r, a, gone[i]);
        known_remove(r, gone[i]);
    }
    free(gone);
}

/* ---- a list answer, item by item ---------------------------------------------- */

/* The end of the JSON value at b[i] (not validated: the parser that reads
 * each piece does that), or 0 when the text ends first. */
static size_t skip_value(const char *b, size_t len, size_t i) {
    int depth = 0;
    bool in_str = false, esc = false;
    for (; i < len; i++) {
        char c = b[i];
        if (in_str) {
            if (esc) esc = false;
            else if (c == '\\') esc = true;
            else if (c == '"') {
                in_str = false;
                if (depth == 0) return i + 1;
            }
            continue;
        }
        if (c == '"') in_str = true;
        else if (c == '{' || c == '[') depth++;
        else if (c == '}' || c == ']') {
            if (depth == 0) return i; /* a scalar ended by its container */
            if (--depth == 0) return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
            return i;
        }
    }
    return 0;
}

static size_t skip_ws(const char *b, size_t len, size_t i) {
    while (i < len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) i++;
    return i;
}

/* Where the top-level "items" array of a JSON list is: [*from, *to) of
 * the array itself. false when the answer is not laid out so (then it is
 * parsed whole). */
static bool find_items(const char *b, size_t len, size_t *from, size_t *to) {
    size_t i = skip_ws(b, len, 0);
    if (i >= len || b[i] != '{') return false;
    i++;
    for (;;) {
        i = skip_ws(b, len, i);
        if (i >= len || b[i] != '"') return false;
        size_t ke = skip_value(b, len, i);
        if (!ke) return false;
        bool items = ke - i == 7 && memcmp(b + i, "\"items\"", 7) == 0;
        i = skip_ws(b, len, ke);
        if (i >= len || b[i] != ':') return false;
        i = skip_ws(b, len, i + 1);
        size_t ve = skip_value(b, len, i);
        if (!ve) return false;
        if (items) {
            if (b[i] != '[') return false;
            *from = i;
            *to = ve;
            return true;
        }
        i = skip_ws(b, len, ve);
        if (i >= len || b[i] != ',') return false;
        i++;
    }
}

/* The source name the JSON parser's messages begin with for a list item
 * or a watch event: the piece's own ("<kind> list item <n>") replaces it
 * in the one message that needs it, rather than being formatted for every
 * piece (as the protobuf path does). */
#define PIECE_SOURCE "piece"

/* A parser's message about a piece: what follows PIECE_SOURCE
 * (":LINE: why"), or NULL when it is not such a message. */
static const char *piece_error_tail(const char *perr) {
    const size_t n = sizeof(PIECE_SOURCE) - 1;
    return perr && strncmp(perr, PIECE_SOURCE ":", n + 1) == 0 ? perr + n : NULL;
}

/* Each element of the array b[from, to) parsed on its own into `ia`
 * (reset between them) and handed to replace_items: a list of 30,000
 * pods is never one tree. false (after note_error) when one cannot be
 * read. */
static bool replace_each(ks_reflector *r, ks_arena *ia, const char *b, size_t from, size_t to, size_t *n) {
    size_t i = skip_ws(b, to, from + 1);
    if (i < to && b[i] == ']') return true;
    for (;;) {
        size_t e = skip_value(b, to, i);
        ks_tree **docs = NULL;
        uint32_t ndocs = 0;
        char *perr = NULL;
        if (!e || !kt_parse(ia, PIECE_SOURCE, b + i, e - i, &docs, &ndocs, &perr) || ndocs != 1) {
            const char *tail = piece_error_tail(perr);
            if (tail)
                note_error(r, "%s list (%s): cannot read the answer: %s list item %zu%s", r->kind, r->path, r->kind,
                           *n, tail);
            else
                note_error(r, "%s list (%s): cannot read the answer: %s", r->kind, r->path, perr ? perr : "not a list");
            free(perr);
            return false;
        }
        replace_items(r, ia, docs, 1, *n);
        ks_arena_reset(ia);
        (*n)++;
        i = skip_ws(b, to, e);
        if (i < to && b[i] == ',') {
            i = skip_ws(b, to, i + 1);
            continue;
        }
        if (i < to && b[i] == ']') return true;
        note_error(r, "%s list (%s): cannot read the answer: not a list", r->kind, r->path);
        return false;
    }
}

/* The message of an error answer: its Status's (a streamed answer's is
 * in error already), or NULL. */
static char *answer_message(const ks_kube_response *resp) {
    char *m = resp->body_len ? ks_kube_status_message(resp->body, resp->body_len) : NULL;
    return m ? m : resp->error ? ks_xstrdup(resp->error) : NULL;
}

static bool too_large_rv(const ks_kube_response *resp) {
    if (resp->code != 504) return false;
    char *m = answer_message(resp);
    bool y = m && strstr(m, "Too large resource version");
    free(m);
    return y;
}

/* A JSON list answer: the list without its items as a tree; the items
 * are parsed one by one later (replace_each, [*ifrom, *ito) of the body)
 * when the answer is laid out as the API server writes it (*split), else
 * they are in the tree. false (after note_error) when it is not a list. */
static bool json_list_page(ks_reflector *r, ks_arena *a, const ks_kube_response *resp, const ks_tree **root,
                           bool *split, size_t *ifrom, size_t *ito) {
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *perr = NULL;
    char name[300];
    snprintf(name, sizeof(name), "%s list", r->kind);
    *split = resp->body && find_items(resp->body, resp->body_len, ifrom, ito);
    char *body = resp->body;
    size_t body_len = resp->body_len;
    if (*split) {
        ks_strbuf rb;
        ks_sb_init(&rb);
        ks_sb_putn(&rb, body, *ifrom);
        ks_sb_puts(&rb, "[]");
        ks_sb_putn(&rb, body + *ito, body_len - *ito);
        body = ks_sb_take(&rb);
        body_len = strlen(body);
    }
    bool ok = kt_parse(a, name, body, body_len, &docs, &ndocs, &perr);
    if (*split) free(body);
    const ks_tree *t = ok && ndocs ? docs[0] : NULL;
    const ks_tree *its = kt_get(t, "items");
    if (!t || t->type != KT_MAP || (its && its->type != KT_SEQ && its->type != KT_NULL)) {
        note_error(r, "%s list (%s): cannot read the answer: %s", r->kind, r->path, perr ? perr : "not a list");
        free(perr);
        return false;
    }
    free(perr);
    *root = t;
    return true;
}

/* One page of a list. */
typedef struct page {
    ks_kube_response resp;     /* code and error; the body when it was not read as it came */
    bool streamed;             /* a protobuf list: its items went to replace_items as they came */
    bool failed;               /* streamed, and broken (already reported) */
    char *rv, *cont;           /* streamed: its metadata */
} page;

static void page_free(page *pg) {
    ks_kube_response_free(&pg->resp);
    free(pg->rv);
    free(pg->cont);
}

/* ---- a big list's items delivered on a second thread ---------------------------- */

/* Decoding a protobuf pod and delivering it (the known set, the handler:
 * the scheduler's cache) cost about the same, so a list of 150,000 pods,
 * decoded on the reflector's thread, is delivered by a second one (a
 * deliverer, started once a list has passed SPLIT_AFTER items): on two
 * cores the items are in the cache about twice as fast, and on a busy
 * machine the list gets two threads' share of it. The items keep their
 * order (one deliverer, batches in order); the deliverer is drained at
 * the end of each page, so that the reflector's thread alone touches its
 * state between pages. */
#define BATCH_ITEMS 256
#define BATCHES_IN_FLIGHT 8
#define SPLIT_AFTER 2048

typedef struct batch {
    struct batch *next;
    ks_arena *a;
    size_t n, base; /* base: the index in the whole list of items[0] */
    ks_tree *items[BATCH_ITEMS];
} batch;

typedef struct deliverer {
    ks_reflector *r;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    batch *head, *tail; /* to deliver, in order */
    batch *spare;       /* delivered, their arenas reset */
    int queued;         /* to deliver or being delivered */
    bool closing;
} deliverer;

static void *deliver_main(void *arg) {
    deliverer *d = arg;
    pthread_setname_np(pthread_self(), "reflector-dlv");
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->head && !d->closing) pthread_cond_wait(&d->cv, &d->mu);
        batch *b = d->head;
        if (!b) break;
        d->head = b->next;
        if (!d->head) d->tail = NULL;
        pthread_mutex_unlock(&d->mu);
        replace_items(d->r, b->a, b->items, b->n, b->base);
        ks_arena_reset(b->a);
        b->n = 0;
        pthread_mutex_lock(&d->mu);
        b->next = d->spare;
        d->spare = b;
        d->queued--;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* NULL when no thread can be started (the items are then delivered inline). */
static deliverer *deliverer_start(ks_reflector *r) {
    deliverer *d = ks_xcalloc(1, sizeof(*d));
    d->r = r;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    if (pthread_create(&d->th, NULL, deliver_main, d) != 0) {
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
        free(d);
        return NULL;
    }
    return d;
}

/* An empty batch for the reflector's thread to decode into. */
static batch *batch_get(deliverer *d) {
    pthread_mutex_lock(&d->mu);
    batch *b = d->spare;
    if (b) d->spare = b->next;
    pthread_mutex_unlock(&d->mu);
    if (!b) {
        b = ks_xcalloc(1, sizeof(*b));
        b->a = ks_arena_new(0);
    }
    b->next = NULL;
    return b;
}

/* Queues b (at most BATCHES_IN_FLIGHT wait: the decoding waits for the
 * delivery beyond that); an empty one goes back to the spares. */
static void batch_put(deliverer *d, batch *b) {
    pthread_mutex_lock(&d->mu);
    if (!b->n) {
        ks_arena_reset(b->a);
        b->next = d->spare;
        d->spare = b;
    } else {
        while (d->queued >= BATCHES_IN_FLIGHT) pthread_cond_wait(&d->cv, &d->mu);
        if (d->tail) d->tail->next = b;
        else d->head = b;
        d->tail = b;
        d->queued++;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
}

/* Waits until every queued item is delivered. */
static void deliverer_drain(deliverer *d) {
    pthread_mutex_lock(&d->mu);
    while (d->queued) pthread_cond_wait(&d->cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

/* Delivers what is queued, then stops the thread and frees. */
static void deliverer_stop(deliverer *d) {
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->closing = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->th, NULL);
    for (batch *b = d->spare, *nx; b; b = nx) {
        nx = b->next;
        ks_arena_free(b->a);
        free(b);
    }
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    free(d);
}

/* What a streamed list's reader found; false when the list is broken. An
 * item goes into the batch *cur when a deliverer runs (decoded in that
 * batch's arena), else straight to replace_items. */
static bool take_pb(ks_reflector *r, ks_arena *ia, page *pg, int k, ks_tree *out, const char *perr, size_t *n,
                    deliverer *d, batch **cur) {
    switch (k) {
    case KS_PB_ROOT: {
        const ks_tree *md = kt_get(out, "metadata");
        set_str(&pg->rv, str_of(kt_get(md, "resourceVersion")));
        set_str(&pg->cont, str_of(kt_get(md, "continue")));
        const char *av = str_of(kt_get(out, "apiVersion"));
        if (av) set_str(&r->api_version, av);
        return true;
    }
    case KS_PB_ITEM:
        if (d) {
            batch *b = *cur;
            if (!b->n) b->base = *n;
            b->items[b->n++] = out;
            if (b->n == BATCH_ITEMS) {
                batch_put(d, b);
                *cur = batch_get(d);
            }
        } else {
            replace_items(r, ia, &out, 1, *n);
        }
        break;
    case KS_PB_BAD_ITEM:
        ks_warnf("%s list (%s): %s, skipped", r->kind, r->path, perr);
        count_decode_error(r);
        break;
    case KS_PB_ERROR:
        note_error(r, "%s list (%s): cannot read the answer: %s", r->kind, r->path, perr);
        return false;
    default: return true;
    }
    (*n)++;
    return true;
}

/* What the next page of a list is asked with, when it is asked for as
 * soon as the current page's continue token is in (fetch_page). */
typedef struct next_ask {
    uint32_t limit;
    const char *rv;
    feed **next; /* the next page's stream, opened by fetch_page */
} next_ask;

/* The list's GET, on a stream: an answer in protobuf is read while it
 * arrives (its items handed to replace_items one by one, *n counting
 * them, and only the bytes of an unfinished item held), so that the
 * decoding of 150,000 pods overlaps their transfer instead of following
 * it, and the answer is never one buffer. Anything else (JSON, a Status)
 * is kept whole in pg->resp; one that failed as the client retries (no
 * answer, 429, 5xx) is asked again through get(), which retries it.
 * f: the page's stream when it was opened already (taken), else NULL.
 * ask: when not NULL, the next page is asked for (*ask->next) as soon as
 * this page's metadata gives its continue token, so that the API server
 * prepares it while it sends this one. false when the reflector stops. */
static bool fetch_page(ks_reflector *r, const char *url, page *pg, size_t *n, feed *f, const next_ask *ask,
                       deliverer **dp) {
    memset(pg, 0, sizeof(*pg));
    if (!r->negotiate) {
        feed_close(f);
        return get(r, url, &pg->resp);
    }
    if (!r->listed_once && !r->t_ask_ns) r->t_ask_ns = ks_monotonic_ns();
    if (!f) f = feed_open(r, url, true);
    ks_strbuf pend;
    ks_sb_init(&pend);
    size_t off = 0;
    ks_pb_list_reader lr = {0};
    ks_arena *ia = ks_arena_new(0);
    batch *cur = *dp ? batch_get(*dp) : NULL;
    int mode = 0; /* 0: not known yet, 1: a protobuf list, 2: kept whole */
    bool stop = false, ended = false, complete = false;
    long code = 0;
    char *error = NULL;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (!f->in.len && !f->ended && !r->stopping) pthread_cond_wait(&r->cv, &r->mu);
        size_t took = f->in.len;
        if (f->in.len) {
            if (!r->t_first_ns) r->t_first_ns = ks_monotonic_ns();
            r->list_bytes += f->in.len;
            if (off == pend.len) {
                /* all read: take the client's buffer as it is */
                ks_strbuf t = pend;
                pend = f->in;
                f->in = t;
                off = 0;
            } else {
                ks_sb_putn(&pend, f->in.s, f->in.len);
            }
            ks_sb_reset(&f->in);
        }
        stop = r->stopping;
        ended = f->ended;
        code = f->code;
        if (ended && f->error) set_str(&error, f->error);
        pthread_mutex_unlock(&r->mu);
        ks_kube_stream_consumed(f->s, took);
        if (stop) break;
        if (ended && !r->listed_once) r->t_last_ns = ks_monotonic_ns();
        if (mode == 0 && pend.len >= 4) mode = ks_pb_is_protobuf(pend.s, pend.len) ? 1 : 2;
        while (mode == 1 && !complete && !pg->failed) {
            size_t used;
            ks_tree *out;
            char *perr;
            if (!*dp && *n >= SPLIT_AFTER && (*dp = deliverer_start(r)) != NULL) cur = batch_get(*dp);
            int k = ks_pb_list_read(&lr, cur ? cur->a : ia, pend.s + off, pend.len - off, &used, &out, &perr);
            off += used;
            if (k == KS_PB_MORE) break;
            if (k == KS_PB_NOT_LIST) mode = 2;
            else if (k == KS_PB_END) complete = true;
            else if (!take_pb(r, ia, pg, k, out, perr, n, *dp, &cur)) pg->failed = true;
            else if (k == KS_PB_ROOT && ask && !*ask->next && pg->cont && *pg->cont) {
                char *nu = list_url(r, pg->cont, ask->limit, ask->rv);
                *ask->next = feed_open(r, nu, true);
                free(nu);
            }
            free(perr);
            ks_arena_reset(ia);
        }
        if (mode == 1 && off > 0 && (off == pend.len || off > pend.len / 2)) {
            memmove(pend.s, pend.s + off, pend.len - off);
            pend.len -= off;
            pend.s[pend.len] = '\0';
            off = 0;
        }
        if (mode == 1 && !complete && !pg->failed && pend.len - off > r->max_event) {
            note_error(r, "%s list (%s): an item of over %zu bytes, the answer is broken", r->kind, r->path,
                       r->max_event);
            pg->failed = true;
        }
        if (mode == 2 && pend.len > KS_KUBE_MAX_RESPONSE) {
            free(error);
            error = ks_xasprintf("an answer larger than the limit of %zu bytes", KS_KUBE_MAX_RESPONSE);
            code = 0;
            break;
        }
        if (ended || pg->failed) break;
    }
    feed_close(f);
    ks_arena_free(ia);
    if (cur) {
        /* the page's items are all delivered before it returns */
        batch_put(*dp, cur);
        deliverer_drain(*dp);
    }
    if (!stop && mode == 1) {
        pg->streamed = true;
        pg->resp.code = 200;
        if (!complete && !pg->failed) {
            note_error(r, "%s list (%s) failed: %s", r->kind, r->path,
                       error ? error : code && code != 200 ? "an error after the answer began" : "the answer ended early");
            pg->failed = true;
        }
    } else if (!stop) {
        pg->resp.code = code;
        pg->resp.body_len = pend.len;
        pg->resp.body = ks_sb_take(&pend);
        pg->resp.error = error;
        error = NULL;
    }
    ks_sb_free(&pend);
    free(error);
    if (stop) {
        page_free(pg);
        return false;
    }
    if (!pg->streamed && (pg->resp.code == 0 || pg->resp.code == 429 || pg->resp.code >= 500)) {
        ks_kube_response_free(&pg->resp);
        return get(r, url, &pg->resp);
    }
    return true;
}

/* client-go's list(): paginated (the pager's 500) for resourceVersion 0
 * and "", unpaginated at a given resourceVersion (the watch cache serves
 * it) unless the first list came in pages; an expired continue token
 * turns into one full list; a list at an unavailable resourceVersion is
 * retried at once at "". With first_page set, the first list is a
 * consistent one (resourceVersion "") in pages of first_page, as are the
 * lists at "" after it. A paginated list asks for page k+1 as soon as
 * page k's continue token is in (fetch_page), and reads it once page k is
 * read: the items reach the handler in the list's order. */
static list_result do_list(ks_reflector *r) {
    const char *rv = r->rv_unavailable ? "" : r->rv ? r->rv : r->first_page ? "" : "0";
    char *want_rv = ks_xstrdup(rv);
    uint32_t limit = !*want_rv && r->first_page ? r->first_page
                     : (!*want_rv || strcmp(want_rv, "0") == 0 || r->paginated) ? r->page
                                                                                 : 0;
    ks_arena *a = ks_arena_new(0);
    size_t n = 0;
    char *cont = NULL, *list_rv = NULL, *early_cont = NULL;
    feed *early = NULL; /* the next page's stream, asked for early; early_cont: its continue token */
    deliverer *dlv = NULL;
    replace_begin(r);
    list_result res = L_ERR;
    int pages = 0;
    bool full_fallback = false;
    for (;;) {
        char *url = full_fallback ? list_url(r, NULL, 0, want_rv) : list_url(r, cont, limit, want_rv);
        feed *f = NULL;
        if (early && !full_fallback && cont && strcmp(early_cont, cont) == 0) f = early;
        else feed_close(early);
        early = NULL;
        next_ask ask = {.limit = limit, .rv = want_rv, .next = &early};
        page pg;
        if (!fetch_page(r, url, &pg, &n, f, full_fallback || !limit ? NULL : &ask, &dlv)) {
            free(url);
            res = L_STOP;
            break;
        }
        if (early) set_str(&early_cont, pg.cont);
        ks_kube_response *resp = &pg.resp;
        pthread_mutex_lock(&r->mu);
        r->stats.lists++;
        pthread_mutex_unlock(&r->mu);
        if (resp->code == 410 && cont && !full_fallback) {
            /* the continue token expired: the whole list in one go */
            ks_infof(2, "%s list (%s): continue token expired, listing again in full", r->kind, r->path);
            page_free(&pg);
            free(url);
            full_fallback = true;
            n = 0;
            pages = 0;
            ks_arena_reset(a);
            replace_begin(r);
            continue;
        }
        if ((resp->code == 410 || too_large_rv(resp)) && !r->rv_unavailable && !cont) {
            /* the resourceVersion is gone: a consistent list, at once */
            ks_infof(2, "%s list (%s): resourceVersion %s unavailable, listing at the latest", r->kind, r->path,
                     want_rv);
            r->rv_unavailable = true;
            page_free(&pg);
            free(url);
            free(want_rv);
            want_rv = ks_xstrdup("");
            limit = r->page;
            n = 0;
            pages = 0;
            ks_arena_reset(a);
            replace_begin(r);
            continue;
        }
        if (resp->code != 200) {
            char *m = resp->code ? answer_message(resp) : NULL;
            if (resp->code == 0)
                note_error(r, "%s list (%s) failed: %s", r->kind, r->path, resp->error ? resp->error : "no answer");
            else
                note_error(r, "%s list (%s) failed: %s (HTTP %ld)", r->kind, r->path, m ? m : "", resp->code);
            free(m);
            page_free(&pg);
            free(url);
            break;
        }
        free(url);
        if (pg.failed) {
            page_free(&pg);
            break;
        }
        if (!r->listed_once && pages == 0)
            ks_infof(2, "%s list (%s): the API server answers in %s", r->kind, r->path,
                     pg.streamed ? "Protocol Buffers" : "JSON");
        const ks_tree *root = NULL;
        size_t ifrom = 0, ito = 0;
        bool split = false;
        if (!pg.streamed) {
            if (!json_list_page(r, a, resp, &root, &split, &ifrom, &ito)) {
                page_free(&pg);
                break;
            }
            const ks_tree *md = kt_get(root, "metadata");
            set_str(&pg.rv, str_of(kt_get(md, "resourceVersion")));
            set_str(&pg.cont, str_of(kt_get(md, "continue")));
            const char *av = str_of(kt_get(root, "apiVersion"));
            if (av) set_str(&r->api_version, av);
        }
        if (pages == 0 || full_fallback) set_str(&list_rv, pg.rv);
        const char *next = full_fallback ? NULL : pg.cont;
        bool more = next && *next;
        if (more) {
            if (strcmp(want_rv, "0") == 0) r->paginated = true; /* no watch cache: keep paging */
            set_str(&cont, next);
        }
        const ks_tree *its = kt_get(root, "items");
        if (split) {
            ks_arena *ia = ks_arena_new(0);
            bool all = replace_each(r, ia, resp->body, ifrom, ito, &n);
            ks_arena_free(ia);
            if (!all) {
                page_free(&pg);
                break;
            }
        } else if (its && its->type == KT_SEQ) {
            replace_items(r, a, its->items, its->n, n);
            n += its->n;
        }
        page_free(&pg);
        pages++;
        ks_arena_reset(a);
        if (more) continue;
        res = L_OK;
        break;
    }
    feed_close(early);
    free(early_cont);
    deliverer_stop(dlv);
    if (res == L_OK) {
        pthread_mutex_lock(&r->mu);
        bool relist = r->listed_once;
        if (relist) r->stats.relists++;
        pthread_mutex_unlock(&r->mu);
        if (relist) ks_sm_relist(r->kind);
        replace_end(r, a);
        r->rv_unavailable = false;
        set_str(&r->rv, list_rv);
        note_ok(r);
        ks_infof(3, "%s list (%s): %zu items in %d page(s) at resourceVersion %s", r->kind, r->path, n, pages,
                 list_rv ? list_rv : "");
        if (!r->listed_once) {
            /* where a cold start's time goes: the API server before its
             * first byte, the transfer, the decoding behind it */
            int64_t now = ks_monotonic_ns();
            if (r->t_ask_ns && r->t_first_ns)
                ks_infof(2, "\"List read\" type=\"%s\" items=%zu bytes=%zu firstByteMs=%.1f lastByteMs=%.1f handedOverMs=%.1f",
                         r->kind, n, r->list_bytes, (double)(r->t_first_ns - r->t_ask_ns) / 1e6,
                         (double)((r->t_last_ns ? r->t_last_ns : now) - r->t_ask_ns) / 1e6, (double)(now - r->t_ask_ns) / 1e6);
            r->listed_once = true;
            /* published after the handler has taken it in: whoever sees
             * ks_reflector_synced sees what the handler did with it */
            if (r->h.synced) r->h.synced(r->h.arg);
            atomic_store(&r->synced, true);
        }
    }
    free(cont);
    free(list_rv);
    free(want_rv);
    ks_arena_free(a);
    return res;
}

/* ---- WATCH ----------------------------------------------------------------------- */

typedef enum { W_AGAIN, W_BACKOFF_REWATCH, W_RELIST, W_STOP } watch_result;

/* A protobuf watch frame's first byte (its length's highest) rather than
 * JSON's '{' or blank. */
static bool frame_start(char c) { return (unsigned char)c < 0x20 && c != '\n' && c != '\r' && c != '\t'; }

/* "<kind> watch event <idx>", formatted into name the first time it is needed. */
static const char *event_name(const ks_reflector *r, uint64_t idx, char *name, size_t n) {
    if (!name[0]) snprintf(name, n, "%s watch event %llu", r->kind, (unsigned long long)idx);
    return name;
}

/* One watch event. Returns W_AGAIN to go on, W_RELIST for an ERROR event. */
static watch_result handle_event(ks_reflector *r, ks_arena *a, const char *text, size_t len, uint64_t idx, bool pb) {
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *perr = NULL;
    /* named for the JSON parser and for a warning only: formatting it
     * for every event showed in the watch's profile */
    char name[300];
    name[0] = '\0';
    ks_tree *ev = NULL;
    if (pb) {
        if (!ks_pb_decode_watch_event(a, text, len, &ev, &perr)) ev = NULL;
    } else if (kt_parse(a, PIECE_SOURCE, text, len, &docs, &ndocs, &perr) && ndocs == 1 && docs[0]->type == KT_MAP) {
        ev = docs[0];
    }
    if (!ev) {
        const char *tail = piece_error_tail(perr);
        event_name(r, idx, name, sizeof(name));
        ks_warnf("%s (%s): %s%s, skipped", name, r->path, tail ? name : "",
                 tail ? tail : perr ? perr : "not an object");
        free(perr);
        count_decode_error(r);
        return W_AGAIN;
    }
    const char *type = str_of(kt_get(ev, "type"));
    const ks_tree *obj = kt_get(ev, "object");
    if (!type) type = "";
    if (strcmp(type, "ERROR") == 0) {
        const ks_tree *code = kt_get(obj, "code");
        const char *msg = str_of(kt_get(obj, "message"));
        int64_t c = code && code->type == KT_INT ? code->ival : 0;
        pthread_mutex_lock(&r->mu);
        r->stats.watch_errors++;
        pthread_mutex_unlock(&r->mu);
        if (c == 410) {
            ks_infof(2, "%s watch (%s): %s: relisting", r->kind, r->path, msg ? msg : "410 Gone");
        } else {
            note_error(r, "%s watch (%s) ended with an error: %s (%lld)", r->kind, r->path, msg ? msg : "", (long long)c);
        }
        return W_RELIST;
    }
    if (strcmp(type, "BOOKMARK") == 0) {
        const char *rv = str_of(kt_get(kt_get(obj, "metadata"), "resourceVersion"));
        if (rv && *rv) set_str(&r->rv, rv);
        pthread_mutex_lock(&r->mu);
        r->stats.bookmarks++;
        pthread_mutex_unlock(&r->mu);
        return W_AGAIN;
    }
    bool add = strcmp(type, "ADDED") == 0, mod = strcmp(type, "MODIFIED") == 0, del = strcmp(type, "DELETED") == 0;
    const char *ns, *nm, *uid, *rv, *why;
    if (!add && !mod && !del) {
        ks_warnf("%s (%s): unknown event type \"%s\", skipped", event_name(r, idx, name, sizeof(name)), r->path,
                 type);
        count_decode_error(r);
        return W_AGAIN;
    }
    if (!object_meta(obj, &ns, &nm, &uid, &rv, &why)) {
        ks_warnf("%s (%s, %s): %s, skipped", event_name(r, idx, name, sizeof(name)), type, r->path, why);
        count_decode_error(r);
        return W_AGAIN;
    }
    known *k = known_find(r, ns, nm);
    if (del) {
        if (k) known_remove(r, k);
        deliver(r, KS_REFL_DELETED, obj);
    } else {
        /* as an informer: an object it has is updated, one it has not is added */
        ks_refl_event t = k ? KS_REFL_MODIFIED : KS_REFL_ADDED;
        if (!k) k = known_add(r, ns, nm);
        known_set_uid_rv(k, uid, rv);
        k->seen = r->gen;
        deliver(r, t, obj);
    }
    if (rv && *rv) set_str(&r->rv, rv);
    return W_AGAIN;
}

static watch_result watch_once(ks_reflector *r) {
    char timeout[32];
    int64_t t = (int64_t)((double)r->min_timeout_s * ((double)rand_r(&r->seed) / ((double)RAND_MAX + 1) + 1.0));
    snprintf(timeout, sizeof(timeout), "%lld", (long long)t);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, r->path);
    param(&b, "allowWatchBookmarks", "true");
    if (r->fsel) param(&b, "fieldSelector", r->fsel);
    if (r->lsel) param(&b, "labelSelector", r->lsel);
    if (r->rv && *r->rv) param(&b, "resourceVersion", r->rv);
    param(&b, "timeoutSeconds", timeout);
    param(&b, "watch", "true");
    pthread_mutex_lock(&r->mu);
    r->stats.watches++;
    pthread_mutex_unlock(&r->mu);
    int64_t start = ks_monotonic_ns();
    feed *f = feed_open(r, ks_sb_str(&b), r->negotiate);
    ks_infof(4, "%s watch: %s", r->kind, ks_sb_str(&b));
    ks_sb_free(&b);

    ks_strbuf pend;
    ks_sb_init(&pend);
    ks_json_splitter sp = {0};
    ks_arena *a = ks_arena_new(0);
    uint64_t events = 0, idx = 0;
    int fmt = 0; /* 0: not known yet, 1: JSON, 2: protobuf frames */
    watch_result res = W_AGAIN;
    bool ended = false, had_data = false;
    long code = 0;
    char *error = NULL;
    while (res == W_AGAIN) {
        pthread_mutex_lock(&r->mu);
        while (!f->in.len && !f->ended && !r->stopping) pthread_cond_wait(&r->cv, &r->mu);
        size_t took = f->in.len;
        if (f->in.len) {
            ks_sb_putn(&pend, f->in.s, f->in.len);
            ks_sb_reset(&f->in);
        }
        bool stop = r->stopping;
        ended = f->ended;
        had_data = f->data;
        code = f->code;
        if (ended && f->error) set_str(&error, f->error);
        pthread_mutex_unlock(&r->mu);
        ks_kube_stream_consumed(f->s, took);
        /* the first byte tells: a JSON event starts with '{', a protobuf
         * frame with the high byte of its length (0 below 16 MiB) */
        if (fmt == 0 && pend.len) fmt = frame_start(pend.s[0]) ? 2 : 1;
        if (fmt == 2) {
            size_t off = 0;
            int64_t fl;
            while (res == W_AGAIN && (fl = ks_pb_frame_len(pend.s + off, pend.len - off)) >= 0) {
                if ((uint64_t)fl > r->max_event) break; /* reported below */
                if (pend.len - off - 4 < (size_t)fl) break;
                idx++;
                res = handle_event(r, a, pend.s + off + 4, (size_t)fl, idx, true);
                ks_arena_reset(a);
                events++;
                off += 4 + (size_t)fl;
            }
            if (off > 0) {
                memmove(pend.s, pend.s + off, pend.len - off);
                pend.len -= off;
                pend.s[pend.len] = '\0';
            }
            fl = ks_pb_frame_len(pend.s, pend.len);
            if (res == W_AGAIN && fl >= 0 && (uint64_t)fl > r->max_event) {
                note_error(r, "%s watch (%s): a frame of %lld bytes, over the %zu allowed: the stream is broken",
                           r->kind, r->path, (long long)fl, r->max_event);
                res = W_RELIST;
            }
            if (res != W_AGAIN) break;
            if (stop) {
                res = W_STOP;
                break;
            }
            if (ended) break;
            continue;
        }
        size_t os, oe;
        ks_split_result sr;
        while (res == W_AGAIN &&
               (sr = ks_json_split_next(ks_sb_str(&pend), pend.len, &sp, &os, &oe)) != KS_SPLIT_NONE) {
            idx++;
            if (sr == KS_SPLIT_GARBAGE) {
                ks_warnf("%s watch event %llu (%s): not a JSON object, skipped", r->kind, (unsigned long long)idx,
                         r->path);
                count_decode_error(r);
            } else {
                res = handle_event(r, a, pend.s + os, oe - os, idx, false);
                ks_arena_reset(a);
                events++;
            }
        }
        /* keep only the unfinished tail */
        size_t keep_from = ks_json_split_consumed(&sp);
        if (keep_from > 0) {
            memmove(pend.s, pend.s + keep_from, pend.len - keep_from);
            pend.len -= keep_from;
            pend.s[pend.len] = '\0';
        }
        if (res != W_AGAIN) break;
        if (pend.len > r->max_event) {
            /* one event cannot be this big (etcd's limit is 1.5 MB): the framing is lost */
            if (r->max_event % (1u << 20) == 0)
                note_error(r, "%s watch (%s): an event of over %zu MB, the stream is broken", r->kind, r->path,
                           r->max_event >> 20);
            else
                note_error(r, "%s watch (%s): an event of over %zu bytes, the stream is broken", r->kind, r->path,
                           r->max_event);
            res = W_RELIST;
            break;
        }
        if (stop) {
            res = W_STOP;
            break;
        }
        if (ended) break;
    }
    feed_close(f);
    if (res == W_AGAIN) {
        if (pend.len && (sp.depth > 0 || fmt == 2))
            ks_infof(1, "%s watch (%s): the stream ended inside an event (%zu bytes dropped); watching again from %s",
                     r->kind, r->path, pend.len, r->rv ? r->rv : "");
        if ((code >= 200 && code < 300) || (code == 0 && had_data)) {
            /* ended or cut after it worked: watch again at once, unless it
             * was too short to be anything but a broken server */
            if (ks_monotonic_ns() - start < KS_NS_PER_SEC && events == 0) {
                note_error(r, "%s watch (%s): very short watch: unexpected watch close - watch lasted less than a "
                              "second and no items received",
                           r->kind, r->path);
                res = W_RELIST;
            }
        } else if (code == 0 || code == 429) {
            note_error(r, "%s watch (%s) failed: %s", r->kind, r->path, error ? error : "HTTP 429");
            res = W_BACKOFF_REWATCH;
        } else {
            pthread_mutex_lock(&r->mu);
            r->stats.watch_errors++;
            pthread_mutex_unlock(&r->mu);
            if (code == 410) ks_infof(2, "%s watch (%s): %s: relisting", r->kind, r->path, error ? error : "410 Gone");
            else note_error(r, "%s watch (%s) failed: %s (HTTP %ld)", r->kind, r->path, error ? error : "", code);
            res = W_RELIST;
        }
    }
    free(error);
    ks_sb_free(&pend);
    ks_arena_free(a);
    return res;
}

/* ---- the thread ------------------------------------------------------------------ */

static void list_and_watch(ks_reflector *r) {
    ks_infof(3, "\"Listing and watching\" type=\"%s\" reflector=\"%s\"", r->kind, r->path);
    if (do_list(r) != L_OK) return;
    for (;;) {
        watch_result w = watch_once(r);
        if (w != W_STOP)
            ks_sm_watch_restart(r->kind, w == W_AGAIN ? "closed" : w == W_RELIST ? "relist" : "error");
        if (w == W_AGAIN) {
            note_ok(r);
            continue;
        }
        if (w == W_BACKOFF_REWATCH && pause_for(r, backoff_next(r))) continue;
        return;
    }
}

static void *reflector_main(void *arg) {
    pthread_setname_np(pthread_self(), "reflector"); /* top -H, pprof's thread label */
    ks_reflector *r = arg;
    ks_infof(3, "\"Starting reflector\" type=\"%s\" reflector=\"%s\"", r->kind, r->path);
    /* wait.BackoffUntil: after every round, whatever ended it, a backoff */
    while (!stopping(r)) {
        list_and_watch(r);
        if (!pause_for(r, backoff_next(r))) break;
    }
    ks_infof(3, "\"Stopping reflector\" type=\"%s\" reflector=\"%s\"", r->kind, r->path);
    return NULL;
}

ks_reflector *ks_reflector_start(ks_kube_client *c, const ks_reflector_options *o, const ks_reflector_handler *h) {
    ks_reflector *r = ks_xcalloc(1, sizeof(*r));
    r->c = c;
    r->kind = ks_xstrdup(o->kind ? o->kind : "object");
    r->path = ks_xstrdup(o->path);
    r->fsel = o->field_selector && *o->field_selector ? ks_xstrdup(o->field_selector) : NULL;
    r->lsel = o->label_selector && *o->label_selector ? ks_xstrdup(o->label_selector) : NULL;
    r->page = o->page_size ? o->page_size : 500;
    r->first_page = o->first_page_size;
    r->min_timeout_s = o->min_watch_timeout_s > 0 ? o->min_watch_timeout_s : 300;
    r->backoff_init_ns = (o->backoff_initial_ms > 0 ? o->backoff_initial_ms : 800) * KS_NS_PER_MS;
    r->max_event = o->max_event_bytes ? o->max_event_bytes : (size_t)64 << 20;
    r->negotiate = !o->json_only;
    r->h = *h;
    r->seed = (unsigned)ks_monotonic_ns() ^ (unsigned)(uintptr_t)r;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    ks_map_init(&r->objs);
    atomic_init(&r->synced, false);
    if (pthread_create(&r->th, NULL, reflector_main, r) != 0) ks_oom();
    return r;
}

void ks_reflector_stop(ks_reflector *r) {
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stopping = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->th, NULL);
    uint64_t key;
    void *val;
    for (size_t it = 0; ks_map_next(&r->objs, &it, &key, &val);)
        for (known *k = val, *nx; k; k = nx) {
            nx = k->next;
            known_free(k);
        }
    ks_map_free(&r->objs);
    free(r->rv);
    free(r->api_version);
    free(r->kind);
    free(r->path);
    free(r->fsel);
    free(r->lsel);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

bool ks_reflector_synced(const ks_reflector *r) { return atomic_load(&r->synced); }

void ks_reflector_stats_get(ks_reflector *r, ks_reflector_stats *out) {
    pthread_mutex_lock(&r->mu);
    *out = r->stats;
    pthread_mutex_unlock(&r->mu);
}
