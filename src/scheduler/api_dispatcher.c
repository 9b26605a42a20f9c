#include "scheduler/api_dispatcher.h"
#include "api/pod.h"
#include "framework/status.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Events never merge: each gets a key of its own, above any pod key. */
#define EVENT_KEY_BASE (1ULL << 63)

typedef struct call {
    ks_call_type type;
    uint64_t key;
    uint64_t id;
    ks_pod *pod;
    char *node;
    /* status patch (owned strings) */
    ks_status_patch patch;
    /* event */
    char *etype, *reason, *action, *note;
    int64_t time_ns;
    ks_call_done_fn done;
    void *arg;
    bool done_called;
    bool executing;
    /* A deletion runs the status patch it displaced first: upstream's
     * preemption patches a victim's DisruptionTarget condition and then
     * deletes it, outside the dispatcher, so neither call is dropped. */
    struct call *before;
} call;

struct ks_api_dispatcher {
    pthread_mutex_t mu;
    pthread_cond_t work_cv, idle_cv;
    const ks_backend *backend;
    ks_clock *clock;
    bool threaded, quit;
    pthread_t thread;
    ks_map calls;      /* key + 1 -> pending call (the newest for the key) */
    uint64_t *fifo;    /* keys in arrival order, each at most once */
    uint32_t head, n, cap;
    uint32_t executing;
    uint64_t next_id, next_event;
    uint64_t executed[KS_CALL_TYPES], skipped[KS_CALL_TYPES];
};

static const int relevance[KS_CALL_TYPES] = {
    [KS_CALL_EVENT] = 0, [KS_CALL_STATUS_PATCH] = 1, [KS_CALL_BINDING] = 2, [KS_CALL_DELETE] = 3};

const char *ks_call_type_name(ks_call_type t) {
    switch (t) {
    case KS_CALL_EVENT: return "event";
    case KS_CALL_STATUS_PATCH: return "pod_status_patch";
    case KS_CALL_BINDING: return "pod_binding";
    case KS_CALL_DELETE: return "pod_deletion";
    default: return "unknown";
    }
}

static char *dup_or_null(const char *s) { return s ? ks_xstrdup(s) : NULL; }

static void free_call(call *c) {
    if (!c) return;
    free_call(c->before);
    if (c->pod) ks_pod_unref(c->pod);
    free(c->node);
    free((char *)c->patch.cond_type);
    free((char *)c->patch.cond_status);
    free((char *)c->patch.cond_reason);
    free((char *)c->patch.cond_message);
    free((char *)c->patch.nominated);
    free(c->etype);
    free(c->reason);
    free(c->action);
    free(c->note);
    free(c);
}

static void finish(call *c, const ks_status *result) {
    if (c->before) finish(c->before, result);
    if (c->done_called) return;
    c->done_called = true;
    if (c->done) c->done(c->arg, result);
}

/* ---- fifo --------------------------------------------------------------- */

static void fifo_push(ks_api_dispatcher *d, uint64_t key) {
    if (d->n == d->cap) {
        uint32_t nc = d->cap ? d->cap * 2 : 64;
        uint64_t *nv = ks_xmalloc(nc * sizeof(uint64_t));
        for (uint32_t i = 0; i < d->n; i++) nv[i] = d->fifo[(d->head + i) % d->cap];
        free(d->fifo);
        d->fifo = nv;
        d->cap = nc;
        d->head = 0;
    }
    d->fifo[(d->head + d->n) % d->cap] = key;
    d->n++;
}

static uint64_t fifo_pop(ks_api_dispatcher *d) {
    uint64_t k = d->fifo[d->head];
    d->head = (d->head + 1) % d->cap;
    d->n--;
    return k;
}

static void fifo_remove(ks_api_dispatcher *d, uint64_t key) {
    uint32_t w = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        uint64_t k = d->fifo[(d->head + i) % d->cap];
        if (k != key) d->fifo[(d->head + w++) % d->cap] = k;
    }
    d->n = w;
}

/* ---- status patches --------------------------------------------------- */

static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* upstream PodStatusPatchCall.IsNoOp against the pod the call was made for. */
static bool patch_is_noop(const call *c) {
    const ks_status_patch *p = &c->patch;
    if (p->set_nominated && c->pod->nominated_node != ks_intern(p->nominated ? p->nominated : ""))
        return false;
    if (!p->has_condition) return true;
    ks_id type = ks_intern(p->cond_type);
    for (uint32_t i = 0; i < c->pod->nconditions; i++) {
        const ks_pod_condition *pc = &c->pod->conditions[i];
        if (pc->type != type) continue;
        return pc->status == ks_intern(p->cond_status) && str_eq(pc->reason, p->cond_reason) &&
               str_eq(pc->message, p->cond_message);
    }
    return false;
}

/* upstream PodStatusPatchCall.Merge: the newer call keeps what it sets and
 * takes from the older one what it leaves alone. */
static void merge_patch(call *newer, const call *older) {
    ks_status_patch *n = &newer->patch;
    const ks_status_patch *o = &older->patch;
    if (!n->set_nominated && o->set_nominated) {
        n->set_nominated = true;
        n->nominated = dup_or_null(o->nominated);
    }
    if (!n->has_condition && o->has_condition) {
        n->has_condition = true;
        n->cond_type = dup_or_null(o->cond_type);
        n->cond_status = dup_or_null(o->cond_status);
        n->cond_reason = dup_or_null(o->cond_reason);
        n->cond_message = dup_or_null(o->cond_message);
    }
}

/* ---- adding ------------------------------------------------------------- */

typedef struct deferred {
    call *c;
    ks_status *result; /* owned */
    bool free_it;
} deferred;

/* Returns the Skip status of the new call when it is skipped at once. */
static ks_status *add_call(ks_api_dispatcher *d, call *c) {
    deferred later[2];
    int nlater = 0;
    ks_status *ret = NULL;
    pthread_mutex_lock(&d->mu);
    c->id = d->next_id++;
    call *old = ks_map_get(&d->calls, c->key + 1);
    if (old) {
        if (relevance[c->type] < relevance[old->type]) {
            d->skipped[c->type]++;
            pthread_mutex_unlock(&d->mu);
            ret = ks_status_new(KS_SKIP, "a more relevant call is already enqueued for this object: call skipped");
            finish(c, ret);
            free_call(c);
            return ret;
        }
        if (old->type == c->type && c->type == KS_CALL_STATUS_PATCH) merge_patch(c, old);
        if (c->type == KS_CALL_DELETE && !old->executing &&
            (old->type == KS_CALL_STATUS_PATCH || old->before)) {
            /* Keep the displaced patch (or the one a displaced deletion
             * kept) to run before the deletion. */
            if (old->type == KS_CALL_STATUS_PATCH) {
                c->before = old;
                old = NULL;
            } else {
                c->before = old->before;
                old->before = NULL;
            }
        }
    }
    if (old) {
        const char *why = old->type != c->type
                              ? "a more relevant call was enqueued for this object: call overwritten"
                              : "a call of the same type was enqueued for this object: call overwritten";
        /* A call being executed reports its own result when it ends. */
        if (!old->executing) later[nlater++] = (deferred){old, ks_status_new(KS_SKIP, "%s", why), true};
        d->skipped[old->type]++;
    }
    bool executing_key = old && old->executing;
    if (c->type == KS_CALL_STATUS_PATCH && patch_is_noop(c) && !executing_key) {
        if (old) {
            ks_map_del(&d->calls, c->key + 1);
            fifo_remove(d, c->key);
        }
        d->skipped[c->type]++;
        ret = ks_status_new(KS_SKIP, "call does not need to be executed because it has no effect: call skipped");
        later[nlater++] = (deferred){c, ks_status_clone(ret), true};
    } else {
        ks_map_put(&d->calls, c->key + 1, c);
        /* A key already queued (or being executed, which re-queues it when
         * done) keeps its place. */
        if (!old && !c->before) fifo_push(d, c->key);
        pthread_cond_broadcast(&d->work_cv);
    }
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < nlater; i++) {
        finish(later[i].c, later[i].result);
        ks_status_free(later[i].result);
        if (later[i].free_it) free_call(later[i].c);
    }
    return ret;
}

static call *new_call(ks_call_type t, const ks_pod *pod, ks_call_done_fn done, void *arg) {
    call *c = ks_xcalloc(1, sizeof(*c));
    c->type = t;
    c->pod = pod ? ks_pod_ref((ks_pod *)pod) : NULL;
    c->key = pod ? pod->key : 0;
    c->done = done;
    c->arg = arg;
    return c;
}

ks_status *ks_api_dispatcher_patch_status(ks_api_dispatcher *d, const ks_pod *pod,
                                          const ks_status_patch *patch, ks_call_done_fn done,
                                          void *arg) {
    call *c = new_call(KS_CALL_STATUS_PATCH, pod, done, arg);
    c->patch.has_condition = patch->has_condition;
    if (patch->has_condition) {
        c->patch.cond_type = dup_or_null(patch->cond_type);
        c->patch.cond_status = dup_or_null(patch->cond_status);
        c->patch.cond_reason = dup_or_null(patch->cond_reason);
        c->patch.cond_message = dup_or_null(patch->cond_message);
    }
    c->patch.set_nominated = patch->set_nominated;
    if (patch->set_nominated) c->patch.nominated = ks_xstrdup(patch->nominated ? patch->nominated : "");
    return add_call(d, c);
}

ks_status *ks_api_dispatcher_bind(ks_api_dispatcher *d, const ks_pod *pod, const char *node,
                                  ks_call_done_fn done, void *arg) {
    call *c = new_call(KS_CALL_BINDING, pod, done, arg);
    c->node = ks_xstrdup(node);
    return add_call(d, c);
}

ks_status *ks_api_dispatcher_delete(ks_api_dispatcher *d, const ks_pod *pod,
                                    ks_call_done_fn done, void *arg) {
    return add_call(d, new_call(KS_CALL_DELETE, pod, done, arg));
}

void ks_api_dispatcher_event(ks_api_dispatcher *d, const ks_pod *regarding, const char *type,
                             const char *reason, const char *action, const char *note) {
    call *c = new_call(KS_CALL_EVENT, regarding, NULL, NULL);
    c->etype = dup_or_null(type);
    c->reason = dup_or_null(reason);
    c->action = dup_or_null(action);
    c->note = dup_or_null(note);
    c->time_ns = ks_clock_now(d->clock);
    pthread_mutex_lock(&d->mu);
    c->key = EVENT_KEY_BASE | d->next_event++;
    pthread_mutex_unlock(&d->mu);
    ks_status_free(add_call(d, c));
}

/* ---- executing ---------------------------------------------------------- */

static ks_status *execute(ks_api_dispatcher *d, call *c) {
    const ks_backend *b = d->backend;
    switch (c->type) {
    case KS_CALL_STATUS_PATCH:
        return b->patch_pod_status ? b->patch_pod_status(b->ctx, c->pod, &c->patch) : NULL;
    case KS_CALL_BINDING:
        return b->bind ? b->bind(b->ctx, c->pod, c->node)
                       : ks_status_new(KS_ERROR, "the backend cannot bind pods");
    case KS_CALL_DELETE:
        return b->delete_pod ? b->delete_pod(b->ctx, c->pod)
                             : ks_status_new(KS_ERROR, "the backend cannot delete pods");
    case KS_CALL_EVENT:
        if (b->emit_event) {
            ks_event_record ev = {.regarding = c->pod, .type = c->etype, .reason = c->reason,
                                  .action = c->action, .note = c->note, .time_ns = c->time_ns};
            b->emit_event(b->ctx, &ev);
        }
        return NULL;
    default: return NULL;
    }
}

/* Pop one call and run it; false when nothing is pending. */
static bool run_one(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    call *c = NULL;
    while (d->n && !c) {
        uint64_t key = fifo_pop(d);
        c = ks_map_get(&d->calls, key + 1);
    }
    if (!c) {
        pthread_mutex_unlock(&d->mu);
        return false;
    }
    c->executing = true;
    d->executing++;
    pthread_mutex_unlock(&d->mu);

    if (c->before) {
        ks_status *r = execute(d, c->before);
        pthread_mutex_lock(&d->mu);
        d->executed[c->before->type]++;
        pthread_mutex_unlock(&d->mu);
        finish(c->before, r);
        ks_status_free(r);
        free_call(c->before);
        c->before = NULL;
    }
    ks_status *result = execute(d, c);

    pthread_mutex_lock(&d->mu);
    d->executed[c->type]++;
    d->executing--;
    c->executing = false;
    call *cur = ks_map_get(&d->calls, c->key + 1);
    bool replaced = cur && cur != c;
    if (cur == c) ks_map_del(&d->calls, c->key + 1);
    /* A newer call for the same pod came in while this one ran: it goes
     * to the back of the queue now. */
    if (replaced) fifo_push(d, c->key);
    pthread_cond_broadcast(&d->idle_cv);
    pthread_mutex_unlock(&d->mu);
    finish(c, result);
    ks_status_free(result);
    free_call(c);
    return true;
}

static void *dispatcher_thread(void *arg) {
    ks_api_dispatcher *d = arg;
    for (;;) {
        pthread_mutex_lock(&d->mu);
        while (!d->quit && d->n == 0) pthread_cond_wait(&d->work_cv, &d->mu);
        bool quit = d->quit;
        pthread_mutex_unlock(&d->mu);
        if (quit) break;
        run_one(d);
    }
    return NULL;
}

ks_api_dispatcher *ks_api_dispatcher_new(const ks_backend *b, ks_clock *clock, bool threaded) {
    ks_api_dispatcher *d = ks_xcalloc(1, sizeof(*d));
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    pthread_cond_init(&d->idle_cv, NULL);
    d->backend = b;
    d->clock = clock ? clock : ks_clock_real();
    d->threaded = threaded;
    if (threaded && pthread_create(&d->thread, NULL, dispatcher_thread, d) != 0) d->threaded = false;
    return d;
}

void ks_api_dispatcher_free(ks_api_dispatcher *d) {
    if (!d) return;
    if (d->threaded) {
        pthread_mutex_lock(&d->mu);
        d->quit = true;
        pthread_cond_broadcast(&d->work_cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
    }
    ks_status *closed = ks_status_new(KS_ERROR, "API dispatcher closed");
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&d->calls, &it, &k, &v);) {
        finish(v, closed);
        free_call(v);
    }
    ks_status_free(closed);
    ks_map_free(&d->calls);
    free(d->fifo);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work_cv);
    pthread_cond_destroy(&d->idle_cv);
    free(d);
}

size_t ks_api_dispatcher_drain(ks_api_dispatcher *d) {
    size_t n = 0;
    while (run_one(d)) n++;
    return n;
}

size_t ks_api_dispatcher_pending(ks_api_dispatcher *d) {
    pthread_mutex_lock(&d->mu);
    size_t n = d->calls.len;
    pthread_mutex_unlock(&d->mu);
    return n;
}

void ks_api_dispatcher_flush(ks_api_dispatcher *d) {
    if (!d->threaded) {
        ks_api_dispatcher_drain(d);
        return;
    }
    pthread_mutex_lock(&d->mu);
    while (d->calls.len || d->executing) pthread_cond_wait(&d->idle_cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

typedef struct sync_wait {
    ks_api_dispatcher *d;
    bool done;
    ks_status *result;
} sync_wait;

static void sync_done(void *arg, const ks_status *result) {
    sync_wait *w = arg;
    pthread_mutex_lock(&w->d->mu);
    w->result = ks_status_clone(result);
    w->done = true;
    pthread_cond_broadcast(&w->d->idle_cv);
    pthread_mutex_unlock(&w->d->mu);
}

ks_status *ks_api_dispatcher_bind_sync(ks_api_dispatcher *d, const ks_pod *pod, const char *node) {
    sync_wait w = {.d = d};
    ks_status_free(ks_api_dispatcher_bind(d, pod, node, sync_done, &w));
    if (d->threaded) {
        pthread_mutex_lock(&d->mu);
        while (!w.done) pthread_cond_wait(&d->idle_cv, &d->mu);
        pthread_mutex_unlock(&d->mu);
    } else {
        while (!w.done && run_one(d)) {
        }
    }
    if (!w.done) return ks_status_new(KS_ERROR, "binding was dropped by the API dispatcher");
    /* A binding overwritten by a deletion did not happen. */
    if (ks_status_code(w.result) == KS_SKIP) w.result->code = KS_ERROR;
    return w.result;
}

uint64_t ks_api_dispatcher_executed(ks_api_dispatcher *d, ks_call_type t) {
    pthread_mutex_lock(&d->mu);
    uint64_t v = t < KS_CALL_TYPES ? d->executed[t] : 0;
    pthread_mutex_unlock(&d->mu);
    return v;
}

uint64_t ks_api_dispatcher_skipped(ks_api_dispatcher *d, ks_call_type t) {
    pthread_mutex_lock(&d->mu);
    uint64_t v = t < KS_CALL_TYPES ? d->skipped[t] : 0;
    pthread_mutex_unlock(&d->mu);
    return v;
}
