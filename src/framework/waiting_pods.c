#include "framework/waiting_pods.h"
#include "api/pod.h"
#include "framework/holds.h"
#include "framework/status.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct ks_waiting_pods {
    ks_clock *clock;
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* broadcast on every verdict */
    ks_waiting_pod **v;        /* insertion order */
    uint32_t n, cap;
    void (*notify)(void *arg, ks_waiting_pod *w);
    void *notify_arg;
};

ks_waiting_pods *ks_waiting_pods_new(ks_clock *clock) {
    ks_waiting_pods *wp = ks_xcalloc(1, sizeof(*wp));
    wp->clock = clock ? clock : ks_clock_real();
    pthread_mutex_init(&wp->mu, NULL);
    pthread_cond_init(&wp->cv, NULL);
    return wp;
}

static void waiting_pod_unref(ks_waiting_pod *w) {
    if (--w->refs) return;
    ks_pod_unref(w->pod);
    ks_status_free(w->verdict);
    free(w->pending);
    free(w);
}

void ks_waiting_pods_free(ks_waiting_pods *wp) {
    if (!wp) return;
    for (uint32_t i = 0; i < wp->n; i++) waiting_pod_unref(wp->v[i]);
    free(wp->v);
    pthread_mutex_destroy(&wp->mu);
    pthread_cond_destroy(&wp->cv);
    free(wp);
}

void ks_waiting_pods_set_notify(ks_waiting_pods *wp, void (*fn)(void *, ks_waiting_pod *),
                                void *arg) {
    pthread_mutex_lock(&wp->mu);
    wp->notify = fn;
    wp->notify_arg = arg;
    pthread_mutex_unlock(&wp->mu);
}

static int find_locked(ks_waiting_pods *wp, uint64_t key) {
    for (uint32_t i = 0; i < wp->n; i++)
        if (wp->v[i]->pod->key == key) return (int)i;
    return -1;
}

ks_waiting_pod *ks_waiting_pods_add(ks_waiting_pods *wp, ks_pod *pod,
                                    const ks_waiting_plugin *plugins, uint32_t n) {
    ks_waiting_pod *w = ks_xcalloc(1, sizeof(*w));
    w->owner = wp;
    w->pod = ks_pod_ref(pod);
    w->refs = 1;
    int64_t now = ks_clock_now(wp->clock);
    w->pending = ks_xcalloc(n ? n : 1, sizeof(*w->pending));
    for (uint32_t i = 0; i < n; i++) {
        w->pending[i] = plugins[i];
        w->pending[i].deadline_ns = now + plugins[i].timeout_ns;
    }
    w->npending = n;
    pthread_mutex_lock(&wp->mu);
    int old = find_locked(wp, pod->key);
    if (old >= 0) {
        waiting_pod_unref(wp->v[old]);
        wp->v[old] = w;
    } else {
        KS_GROW(wp->v, wp->cap, wp->n + 1);
        wp->v[wp->n++] = w;
    }
    pthread_mutex_unlock(&wp->mu);
    return w;
}

ks_waiting_pod *ks_waiting_pods_get(ks_waiting_pods *wp, uint64_t key) {
    pthread_mutex_lock(&wp->mu);
    int i = find_locked(wp, key);
    ks_waiting_pod *w = i >= 0 ? wp->v[i] : NULL;
    pthread_mutex_unlock(&wp->mu);
    return w;
}

void ks_waiting_pods_remove(ks_waiting_pods *wp, uint64_t key) {
    pthread_mutex_lock(&wp->mu);
    int i = find_locked(wp, key);
    if (i >= 0) {
        ks_waiting_pod *w = wp->v[i];
        memmove(&wp->v[i], &wp->v[i + 1], (wp->n - (uint32_t)i - 1) * sizeof(*wp->v));
        wp->n--;
        waiting_pod_unref(w);
    }
    pthread_mutex_unlock(&wp->mu);
}

size_t ks_waiting_pods_count(ks_waiting_pods *wp) {
    pthread_mutex_lock(&wp->mu);
    size_t n = wp->n;
    pthread_mutex_unlock(&wp->mu);
    return n;
}

/* A waiting pod handed to a plugin is held (framework/holds.h) until the
 * extension point returns, so that the binding cycle of a pod decided
 * meanwhile cannot free it under the plugin. */
static void release_hold(void *p) {
    ks_waiting_pod *w = p;
    ks_waiting_pods *wp = w->owner;
    pthread_mutex_lock(&wp->mu);
    waiting_pod_unref(w);
    pthread_mutex_unlock(&wp->mu);
}

static void hold_locked(ks_waiting_pod *w) {
    w->refs++;
    ks_hold(release_hold, w);
}

size_t ks_waiting_pods_list_held(ks_waiting_pods *wp, ks_waiting_pod **out, size_t max) {
    pthread_mutex_lock(&wp->mu);
    size_t n = wp->n;
    for (size_t i = 0; i < n && i < max; i++) {
        out[i] = wp->v[i];
        hold_locked(wp->v[i]);
    }
    pthread_mutex_unlock(&wp->mu);
    return n;
}

ks_waiting_pod *ks_waiting_pods_find_uid_held(ks_waiting_pods *wp, const char *uid) {
    if (!uid) return NULL;
    ks_waiting_pod *found = NULL;
    pthread_mutex_lock(&wp->mu);
    for (uint32_t i = 0; i < wp->n && !found; i++) {
        const char *u = wp->v[i]->pod->uid;
        if (u && strcmp(u, uid) == 0) found = wp->v[i];
    }
    if (found) hold_locked(found);
    pthread_mutex_unlock(&wp->mu);
    return found;
}

/* Record the verdict (first one wins, like upstream's buffered channel of
 * one). Called with the lock held; returns true when this call decided. */
static bool decide_locked(ks_waiting_pod *w, ks_status *verdict) {
    if (w->done) {
        ks_status_free(verdict);
        return false;
    }
    w->done = true;
    w->verdict = verdict;
    w->npending = 0;
    pthread_cond_broadcast(&w->owner->cv);
    return true;
}

static void notify(ks_waiting_pods *wp, ks_waiting_pod *w) {
    pthread_mutex_lock(&wp->mu);
    void (*fn)(void *, ks_waiting_pod *) = wp->notify;
    void *arg = wp->notify_arg;
    pthread_mutex_unlock(&wp->mu);
    if (fn) fn(arg, w);
}

void ks_waiting_pod_allow(ks_waiting_pod *w, const char *plugin) {
    ks_waiting_pods *wp = w->owner;
    bool decided = false;
    pthread_mutex_lock(&wp->mu);
    if (!w->done) {
        for (uint32_t i = 0; i < w->npending; i++) {
            if (strcmp(w->pending[i].plugin, plugin) == 0) {
                memmove(&w->pending[i], &w->pending[i + 1],
                        (w->npending - i - 1) * sizeof(*w->pending));
                w->npending--;
                break;
            }
        }
        if (w->npending == 0) decided = decide_locked(w, NULL);
    }
    pthread_mutex_unlock(&wp->mu);
    if (decided) notify(wp, w);
}

static bool reject_locked(ks_waiting_pod *w, const char *plugin, const char *msg) {
    ks_status *s = ks_status_new(KS_UNSCHEDULABLE, "%s", msg ? msg : "");
    ks_status_set_plugin(s, plugin);
    return decide_locked(w, s);
}

void ks_waiting_pod_reject(ks_waiting_pod *w, const char *plugin, const char *msg) {
    ks_waiting_pods *wp = w->owner;
    pthread_mutex_lock(&wp->mu);
    bool decided = reject_locked(w, plugin, msg);
    pthread_mutex_unlock(&wp->mu);
    if (decided) notify(wp, w);
}

const ks_pod *ks_waiting_pod_pod(const ks_waiting_pod *w) { return w->pod; }

bool ks_waiting_pods_reject(ks_waiting_pods *wp, uint64_t key, const char *plugin,
                            const char *msg) {
    pthread_mutex_lock(&wp->mu);
    int i = find_locked(wp, key);
    ks_waiting_pod *w = i >= 0 ? wp->v[i] : NULL;
    bool decided = w && reject_locked(w, plugin, msg);
    pthread_mutex_unlock(&wp->mu);
    if (decided) notify(wp, w);
    return w != NULL;
}

void ks_waiting_pods_reject_all(ks_waiting_pods *wp, const char *msg) {
    /* Under the map's lock throughout: a waiting pod whose binding thread
     * finishes is removed and freed under this lock too, so no pointer is
     * used after its owner let it go. Waiters wake on the broadcast; no
     * notify callback, the scheduler is shutting down. */
    pthread_mutex_lock(&wp->mu);
    for (size_t i = 0; i < wp->n; i++) reject_locked(wp->v[i], "", msg);
    pthread_mutex_unlock(&wp->mu);
}

bool ks_waiting_pod_decided(ks_waiting_pod *w) {
    pthread_mutex_lock(&w->owner->mu);
    bool d = w->done;
    pthread_mutex_unlock(&w->owner->mu);
    return d;
}

static int64_t earliest_locked(const ks_waiting_pod *w, uint32_t *which) {
    int64_t best = INT64_MAX;
    for (uint32_t i = 0; i < w->npending; i++) {
        if (w->pending[i].deadline_ns < best) {
            best = w->pending[i].deadline_ns;
            if (which) *which = i;
        }
    }
    return best;
}

/* The plugin whose timer fired rejects, with upstream's message. */
static bool timeout_locked(ks_waiting_pod *w, uint32_t i) {
    char dur[64];
    ks_format_duration(w->pending[i].timeout_ns, dur, sizeof(dur));
    char *msg = ks_xasprintf("rejected due to timeout after waiting %s at plugin %s", dur,
                             w->pending[i].plugin);
    bool d = reject_locked(w, w->pending[i].plugin, msg);
    free(msg);
    return d;
}

bool ks_waiting_pod_wait(ks_waiting_pod *w, bool block, ks_status **verdict) {
    ks_waiting_pods *wp = w->owner;
    bool decided_here = false;
    pthread_mutex_lock(&wp->mu);
    while (!w->done) {
        uint32_t which = 0;
        int64_t dl = earliest_locked(w, &which);
        if (ks_clock_now(wp->clock) >= dl) {
            decided_here = timeout_locked(w, which);
            break;
        }
        /* A clock that does not wait (the simulated one: time moves when
         * its loop moves it) comes back short of the deadline. */
        if (!block || (!ks_clock_cond_wait(wp->clock, &wp->cv, &wp->mu, dl) && ks_clock_now(wp->clock) < dl))
            break;
    }
    bool done = w->done;
    if (done && verdict) {
        *verdict = w->verdict;
        w->verdict = NULL;
    }
    pthread_mutex_unlock(&wp->mu);
    if (decided_here) notify(wp, w);
    return done;
}

int64_t ks_waiting_pods_next_deadline(ks_waiting_pods *wp) {
    int64_t best = INT64_MAX;
    pthread_mutex_lock(&wp->mu);
    for (uint32_t i = 0; i < wp->n; i++) {
        if (wp->v[i]->done) continue;
        int64_t d = earliest_locked(wp->v[i], NULL);
        if (d < best) best = d;
    }
    pthread_mutex_unlock(&wp->mu);
    return best;
}

size_t ks_waiting_pods_expire(ks_waiting_pods *wp, int64_t now) {
    size_t count = 0;
    for (;;) {
        ks_waiting_pod *hit = NULL;
        pthread_mutex_lock(&wp->mu);
        for (uint32_t i = 0; i < wp->n && !hit; i++) {
            ks_waiting_pod *w = wp->v[i];
            uint32_t which = 0;
            if (!w->done && earliest_locked(w, &which) <= now && timeout_locked(w, which)) hit = w;
        }
        pthread_mutex_unlock(&wp->mu);
        if (!hit) break;
        count++;
        notify(wp, hit);
    }
    return count;
}
