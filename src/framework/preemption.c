/* The preemption Evaluator; see preemption.h. Upstream's
 * pkg/scheduler/framework/preemption/preemption.go is the specification. */
#include "framework/preemption.h"
#include "framework/cycle_state.h"
#include "framework/framework_internal.h"
#include "framework/handle.h"
#include "framework/holds.h"
#include "framework/status.h"
#include "metrics/sched_metrics.h"
#include "framework/diagnosis.h"
#include "util/clock.h"
#include "util/gosort.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ksched/framework.h>

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------ */

void ks_victims_free(ks_victims *v) {
    for (uint32_t i = 0; i < v->npods; i++) ks_pod_unref(v->pods[i]);
    free(v->pods);
    memset(v, 0, sizeof(*v));
}

void ks_candidates_free(ks_candidates *c) {
    for (uint32_t i = 0; i < c->n; i++) ks_victims_free(&c->v[i].victims);
    free(c->v);
    memset(c, 0, sizeof(*c));
}

static ks_framework *fw_of(ks_evaluator *ev) { return ks_handle_framework(ev->h); }

/* Upstream NodeToStatus.Get: a node without a status of its own (or no
 * node: id 0) gets the absent-nodes status. */
static const ks_status *status_for(const ks_node_status_map *m, ks_id node) {
    return ks_node_status_map_lookup(m, node);
}

/* Upstream GetPodStartTime: status.startTime, or "now" for a pod that has
 * not started. Now is later than every recorded start time. */
static bool started_before(const ks_pod *a, const ks_pod *b) {
    if (a->has_start_time && b->has_start_time) return a->start_time < b->start_time;
    if (a->has_start_time) return true;  /* a started, b's is now */
    if (b->has_start_time) return false; /* a's is now */
    /* Both "now": upstream reads the clock for a first, then for b. */
    return true;
}

bool ks_more_important_pod(const ks_pod *a, const ks_pod *b) {
    int32_t pa = ks_pod_priority(a), pb = ks_pod_priority(b);
    if (pa != pb) return pa > pb;
    return started_before(a, b);
}

static int cmp_pod_names(const ks_pod *a, const ks_pod *b) {
    int c = strcmp(ks_str(a->ns), ks_str(b->ns));
    return c ? c : strcmp(ks_str(a->name), ks_str(b->name));
}

/* The name tie rule: a pod that has not started reads one fixed "now"
 * (the differential harness gives such pods one start time), and equal
 * start times go by namespace/name. */
static bool more_important_by_name(const ks_pod *a, const ks_pod *b) {
    int32_t pa = ks_pod_priority(a), pb = ks_pod_priority(b);
    if (pa != pb) return pa > pb;
    int64_t ta = a->has_start_time ? a->start_time : INT64_MAX;
    int64_t tb = b->has_start_time ? b->start_time : INT64_MAX;
    if (ta != tb) return ta < tb;
    return cmp_pod_names(a, b) < 0;
}

static bool importance_less(const void *a, const void *b, void *ctx) {
    return ctx ? more_important_by_name(a, b) : ks_more_important_pod(a, b);
}

void ks_sort_by_importance(ks_pod **pods, size_t n, bool by_name) {
    ks_go_sort_ptrs((void **)pods, n, importance_less, by_name ? (void *)1 : NULL);
}

/* ---- PodDisruptionBudgets --------------------------------------------- */

static bool pdb_lists_pod(const ks_pdb *pdb, ks_id name) {
    for (uint32_t i = 0; i < pdb->ndisrupted; i++)
        if (pdb->disrupted_pods[i] == name) return true;
    return false;
}

void ks_filter_pods_with_pdb_violation(ks_pod *const *pods, size_t n, const ks_pdb_list *pdbs,
                                       ks_pod **violating, size_t *nviolating, ks_pod **ok,
                                       size_t *nok) {
    size_t npdbs = pdbs ? pdbs->n : 0;
    int64_t *allowed = ks_xcalloc(npdbs ? npdbs : 1, sizeof(*allowed));
    for (size_t i = 0; i < npdbs; i++) allowed[i] = pdbs->v[i]->disruptions_allowed;
    *nviolating = *nok = 0;
    for (size_t k = 0; k < n; k++) {
        ks_pod *p = pods[k];
        bool violated = false;
        /* A pod without labels matches no PDB. */
        for (size_t i = 0; p->labels.n && i < npdbs; i++) {
            const ks_pdb *pdb = pdbs->v[i];
            if (pdb->ns != p->ns) continue;
            /* A nil or empty selector matches nothing here. */
            if (pdb->selector.nothing || pdb->selector.nreq == 0) continue;
            if (!ks_selector_matches(&pdb->selector, &p->labels)) continue;
            /* Already being evicted through the API: counted by the PDB. */
            if (pdb_lists_pod(pdb, p->name)) continue;
            if (--allowed[i] < 0) violated = true;
        }
        if (violated) violating[(*nviolating)++] = p;
        else ok[(*nok)++] = p;
    }
    free(allowed);
}

/* ---- errors -------------------------------------------------------------- */

/* An Error status carrying s's message (upstream fwk.AsStatus(s.AsError())). */
static ks_status *as_error(ks_status *s) {
    if (!s || s->code == KS_ERROR) return s;
    char *msg = ks_status_message(s);
    ks_status *e = ks_status_new(KS_ERROR, "%s", msg);
    ks_status_set_plugin(e, s->plugin);
    free(msg);
    ks_status_free(s);
    return e;
}

/* utilerrors.NewAggregate(errs).Error(): one message as is, several
 * de-duplicated, joined with ", " and bracketed. */
static ks_status *aggregate_errors(char **msgs, size_t n) {
    if (n == 0) return NULL;
    if (n == 1) return ks_status_new(KS_ERROR, "%s", msgs[0]);
    ks_strbuf b;
    ks_sb_init(&b);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = strcmp(msgs[i], msgs[j]) == 0;
        if (seen) continue;
        if (distinct++) ks_sb_puts(&b, ", ");
        ks_sb_puts(&b, msgs[i]);
    }
    ks_status *s = distinct == 1 ? ks_status_new(KS_ERROR, "%s", ks_sb_str(&b))
                                 : ks_status_new(KS_ERROR, "[%s]", ks_sb_str(&b));
    ks_sb_free(&b);
    return s;
}

/* ---- dry runs ------------------------------------------------------------ */

typedef struct dry_slot {
    bool done;
    ks_status *status; /* NULL: a candidate */
    ks_victims victims;
} dry_slot;

typedef struct dry_run {
    ks_evaluator *ev;
    ks_cycle_state *st;
    const ks_pod *pod;
    const ks_node_info *const *nodes;
    size_t n;
    const ks_pdb_list *pdbs;
    int32_t offset, num;
    dry_slot *slots;
    atomic_int nviolating, nclean;
    atomic_bool stop;
} dry_run;

/* Upstream's candidate lists hold at most num each; the dry runs stop once
 * there is a non-violating candidate and the two lists hold num together. */
static bool enough(int32_t nclean, int32_t nviolating, int32_t num) {
    if (nclean > num) nclean = num;
    if (nviolating > num) nviolating = num;
    return nclean > 0 && nclean + nviolating >= num;
}

static void dry_run_node(size_t i, void *arg) {
    dry_run *d = arg;
    dry_slot *slot = &d->slots[i];
    const ks_node_info *orig = d->nodes[((size_t)d->offset + i) % d->n];
    ks_node_info *ni = ks_node_info_clone(orig);
    ks_cycle_state *st = ks_cycle_state_clone(d->st);
    ks_victims v = {0};
    size_t held = ks_holds_mark(); /* a plugin's code on a worker of the pool */
    ks_status *s = d->ev->ops->select_victims(d->ev->pl, st, d->pod, ni, d->pdbs, &v);
    ks_holds_release_to(held);
    if (ks_status_is_success(s) && v.npods == 0) {
        ks_status_free(s);
        s = ks_status_new(KS_ERROR, "expected at least one victim pod on node \"%s\"",
                          ks_str(orig->name));
    }
    if (ks_status_is_success(s)) {
        ks_status_free(s);
        slot->victims = v;
        int nc, nv;
        if (v.num_pdb_violations == 0) {
            nc = atomic_fetch_add(&d->nclean, 1) + 1;
            nv = atomic_load(&d->nviolating);
        } else {
            nv = atomic_fetch_add(&d->nviolating, 1) + 1;
            nc = atomic_load(&d->nclean);
        }
        /* Enough among those done so far means enough within the prefix
         * the parallelizer will have finished, so a sequential pass over
         * that prefix stops inside it. */
        if (enough(nc, nv, d->num)) atomic_store(&d->stop, true);
    } else {
        ks_victims_free(&v);
        slot->status = s;
    }
    ks_cycle_state_free(st);
    ks_node_info_free(ni);
    slot->done = true;
}

void ks_dry_run_preemption(ks_evaluator *ev, ks_cycle_state *st, const ks_pod *pod,
                           const ks_node_info *const *nodes, size_t n, const ks_pdb_list *pdbs,
                           int32_t offset, int32_t num, ks_candidates *out,
                           ks_node_status_map *statuses, ks_status **err) {
    memset(out, 0, sizeof(*out));
    *err = NULL;
    if (n == 0) return;
    dry_run d = {.ev = ev, .st = st, .pod = pod, .nodes = nodes, .n = n, .pdbs = pdbs,
                 .offset = offset, .num = num};
    d.slots = ks_xcalloc(n, sizeof(*d.slots));
    atomic_init(&d.nviolating, 0);
    atomic_init(&d.nclean, 0);
    atomic_init(&d.stop, false);
    ks_framework *fw = fw_of(ev);
    if (fw && fw->par) ks_parallelize(fw->par, n, dry_run_node, &d, &d.stop);
    else
        for (size_t i = 0; i < n && !atomic_load(&d.stop); i++) dry_run_node(i, &d);

    /* Replay in order what a sequential run would have kept. */
    ks_candidates clean = {0}, violating = {0};
    char **errs = NULL;
    size_t nerrs = 0, errs_cap = 0;
    bool stopped = false;
    for (size_t i = 0; i < n; i++) {
        dry_slot *slot = &d.slots[i];
        if (!slot->done || stopped) {
            if (slot->done) {
                ks_victims_free(&slot->victims);
                ks_status_free(slot->status);
            }
            continue;
        }
        const ks_node_info *ni = nodes[((size_t)offset + i) % n];
        if (!slot->status) {
            ks_candidates *list = slot->victims.num_pdb_violations == 0 ? &clean : &violating;
            if ((int32_t)list->n < num) {
                KS_GROW(list->v, list->cap, list->n + 1);
                list->v[list->n++] = (ks_candidate){ni->name, slot->victims};
            } else {
                ks_victims_free(&slot->victims); /* upstream drops it: list full */
            }
            if (enough((int32_t)clean.n, (int32_t)violating.n, num)) stopped = true;
            continue;
        }
        if (slot->status->code == KS_ERROR) {
            KS_GROW(errs, errs_cap, nerrs + 1);
            errs[nerrs++] = ks_status_message(slot->status);
        }
        if (statuses) ks_node_status_map_put(statuses, ni->name, slot->status);
        else ks_status_free(slot->status);
    }
    free(d.slots);
    /* Non-violating candidates first. */
    *out = clean;
    for (uint32_t i = 0; i < violating.n; i++) {
        KS_GROW(out->v, out->cap, out->n + 1);
        out->v[out->n++] = violating.v[i];
    }
    free(violating.v);
    *err = aggregate_errors(errs, nerrs);
    for (size_t i = 0; i < nerrs; i++) free(errs[i]);
    free(errs);
}

/* ---- choosing the node --------------------------------------------------- */

/* Upstream GetEarliestPodStartTime: the earliest start among the victims of
 * the highest priority; INT64_MAX stands for "now" (not started). */
static int64_t earliest_start(const ks_victims *v) {
    int32_t maxp = ks_pod_priority(v->pods[0]);
    const ks_pod *earliest = v->pods[0];
    for (uint32_t i = 0; i < v->npods; i++) {
        const ks_pod *p = v->pods[i];
        int32_t pr = ks_pod_priority(p);
        if (pr == maxp) {
            /* Before(): a later clock reading never precedes an earlier one. */
            if (p->has_start_time &&
                (!earliest->has_start_time || p->start_time < earliest->start_time))
                earliest = p;
        } else if (pr > maxp) {
            maxp = pr;
            earliest = p;
        }
    }
    return earliest->has_start_time ? earliest->start_time : INT64_MAX;
}

enum { CRIT_PDB, CRIT_HIGHEST, CRIT_SUM, CRIT_COUNT, CRIT_START, NCRIT };

static int cmp_candidate_names(const ks_candidate *a, const ks_candidate *b) {
    return strcmp(ks_str(a->node), ks_str(b->node));
}

/* Higher is better, as upstream's score functions. */
static int64_t criterion(const ks_victims *v, int which) {
    switch (which) {
    case CRIT_PDB:
        return -v->num_pdb_violations;
    case CRIT_HIGHEST:
        return -(int64_t)ks_pod_priority(v->pods[0]);
    case CRIT_SUM: {
        /* Shifted by MaxInt32+1 so that more negative-priority victims
         * never look cheaper than fewer. */
        int64_t sum = 0;
        for (uint32_t i = 0; i < v->npods; i++)
            sum += (int64_t)ks_pod_priority(v->pods[i]) + (int64_t)INT32_MAX + 1;
        return -sum;
    }
    case CRIT_COUNT:
        return -(int64_t)v->npods;
    default:
        return earliest_start(v);
    }
}

int ks_pick_one_node_for_preemption(const ks_candidates *c, bool by_name) {
    if (c->n == 0) return -1;
    int *live = ks_xmalloc(c->n * sizeof(*live)), *next = ks_xmalloc(c->n * sizeof(*next));
    size_t nlive = c->n;
    for (uint32_t i = 0; i < c->n; i++) live[i] = (int)i;
    int pick = -1;
    for (int k = 0; k < NCRIT && pick < 0; k++) {
        int64_t best = INT64_MIN;
        size_t nnext = 0;
        for (size_t i = 0; i < nlive; i++) {
            int64_t s = criterion(&c->v[live[i]].victims, k);
            if (s > best) {
                best = s;
                nnext = 0;
            }
            if (s == best) next[nnext++] = live[i];
        }
        if (nnext == 1) pick = next[0];
        int *t = live;
        live = next;
        next = t;
        nlive = nnext;
    }
    if (pick < 0) {
        pick = live[0];
        /* The name tie rule adds one last criterion: the smallest name. */
        for (size_t i = 1; by_name && i < nlive; i++)
            if (cmp_candidate_names(&c->v[live[i]], &c->v[pick]) < 0) pick = live[i];
    }
    free(live);
    free(next);
    return pick;
}

/* ---- evicting ------------------------------------------------------------ */

static uint64_t pod_slot(const ks_pod *p) { return p->key + 1; }

/* The evicting map is pruned when it has grown to twice what the last
 * pruning left, and never below this many entries. */
#define EVICTING_PRUNE_MIN 64

void ks_evaluator_init(ks_evaluator *ev, const char *plugin_name, ks_handle *h,
                       const ks_preemption_ops *ops, void *pl, bool async) {
    memset(ev, 0, sizeof(*ev));
    ev->plugin_name = plugin_name;
    ev->h = h;
    ev->ops = ops;
    ev->pl = pl;
    ev->async = async;
    pthread_mutex_init(&ev->mu, NULL);
    ks_map_init(&ev->preempting);
    ks_map_init(&ev->evicting);
    ev->evicting_prune_at = EVICTING_PRUNE_MIN;
    ks_map_init(&ev->awaiting);
    ev->awaiting_prune_at = EVICTING_PRUNE_MIN;
}

typedef struct evict_wait {
    ks_pod **victims; /* referenced */
    uint32_t n;
} evict_wait;

static void evict_wait_free(evict_wait *w) {
    if (!w) return;
    for (uint32_t i = 0; i < w->n; i++) ks_pod_unref(w->victims[i]);
    free(w->victims);
    free(w);
}

void ks_evaluator_destroy(ks_evaluator *ev) {
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&ev->evicting, &it, &k, &v);) ks_pod_unref(v);
    ks_map_free(&ev->evicting);
    for (size_t it = 0; ks_map_next(&ev->awaiting, &it, &k, &v);) evict_wait_free(v);
    ks_map_free(&ev->awaiting);
    ks_map_free(&ev->preempting);
    pthread_mutex_destroy(&ev->mu);
}

bool ks_evaluator_is_preempting(ks_evaluator *ev, const ks_pod *pod) {
    pthread_mutex_lock(&ev->mu);
    bool r = ks_map_get(&ev->preempting, pod_slot(pod)) != NULL;
    pthread_mutex_unlock(&ev->mu);
    return r;
}

/* One pod, maybe two versions of it: a victim is updated (its
 * DisruptionTarget condition, its deletion timestamp) before it goes. */
static bool same_pod(const ks_pod *a, const ks_pod *b) {
    if (a == b) return true;
    if (a->key != b->key) return false;
    if (a->uid && b->uid) return strcmp(a->uid, b->uid) == 0;
    return !a->uid && !b->uid;
}

bool ks_evaluator_is_evicting(ks_evaluator *ev, const ks_pod *p) {
    pthread_mutex_lock(&ev->mu);
    const ks_pod *v = ev->evicting.len ? ks_map_get(&ev->evicting, pod_slot(p)) : NULL;
    bool r = v && same_pod(v, p);
    pthread_mutex_unlock(&ev->mu);
    return r;
}

static bool snapshot_holds(const ks_snapshot *snap, const ks_pod *v) {
    const ks_node_info *ni = snap && v->node_name ? ks_snapshot_get(snap, v->node_name) : NULL;
    for (uint32_t i = 0; ni && i < ni->npods; i++)
        if (same_pod(ni->pods[i], v)) return true;
    return false;
}

/* Drop the victims the cycle's snapshot no longer holds (their deletion
 * has been seen). Scheduling thread, ev->mu held. */
static void prune_evicting(ks_evaluator *ev, const ks_snapshot *snap) {
    uint64_t *gone = ks_xcalloc(ev->evicting.len ? ev->evicting.len : 1, sizeof(*gone));
    size_t ngone = 0;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&ev->evicting, &it, &k, &v);)
        if (!snapshot_holds(snap, v)) gone[ngone++] = k;
    for (size_t i = 0; i < ngone; i++) ks_pod_unref(ks_map_del(&ev->evicting, gone[i]));
    free(gone);
    ev->evicting_prune_at = 2 * ev->evicting.len;
    if (ev->evicting_prune_at < EVICTING_PRUNE_MIN) ev->evicting_prune_at = EVICTING_PRUNE_MIN;
}

/* victim is to be deleted (scheduling thread). */
static void note_evicting(ks_evaluator *ev, ks_pod *victim) {
    const ks_snapshot *snap = fw_of(ev)->snapshot;
    pthread_mutex_lock(&ev->mu);
    if (ev->evicting.len >= ev->evicting_prune_at) prune_evicting(ev, snap);
    ks_pod *old = ks_map_put(&ev->evicting, pod_slot(victim), ks_pod_ref(victim));
    pthread_mutex_unlock(&ev->mu);
    if (old) ks_pod_unref(old);
}

/* victim was not deleted after all (rejected on Permit, or the deletion
 * failed). */
static void forget_evicting(ks_evaluator *ev, const ks_pod *victim) {
    ks_pod *v = NULL;
    pthread_mutex_lock(&ev->mu);
    if (ks_map_get(&ev->evicting, pod_slot(victim)) == victim) v = ks_map_del(&ev->evicting, pod_slot(victim));
    pthread_mutex_unlock(&ev->mu);
    if (v) ks_pod_unref(v);
}

/* A victim whose deletionTimestamp is this recent (or now) is going at
 * once: a deletion without grace period, which the API server sends as an
 * update with the timestamp and then the deletion. Older, or in the
 * future (a grace period), it is terminating as upstream knows it. */
#define IMMINENT_DELETION_S 10

/* The scheduler holds v as it was before its deletion (the same object,
 * no deletion timestamp yet) or with its removal imminent. */
static bool held_undeleted(ks_framework *fw, const ks_pod *v) {
    if (!fw->env.lookup_pod) return false;
    ks_pod *p = fw->env.lookup_pod(fw->env.ctx, v->key);
    bool r = false;
    if (p && same_pod(p, v)) {
        int64_t now_s = (fw->env.now ? fw->env.now(fw->env.ctx) : ks_clock_now(ks_clock_real())) / KS_NS_PER_SEC;
        r = !p->has_deletion_ts || (p->deletion_ts <= now_s + 1 && p->deletion_ts > now_s - IMMINENT_DELETION_S);
    }
    if (p) ks_pod_unref(p);
    return r;
}

static bool any_held(ks_framework *fw, const evict_wait *w) {
    for (uint32_t i = 0; i < w->n; i++)
        if (held_undeleted(fw, w->victims[i])) return true;
    return false;
}

/* ev->mu held. */
static void prune_awaiting(ks_evaluator *ev) {
    ks_framework *fw = fw_of(ev);
    uint64_t *gone = ks_xcalloc(ev->awaiting.len ? ev->awaiting.len : 1, sizeof(*gone));
    size_t ngone = 0;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&ev->awaiting, &it, &k, &v);)
        if (!any_held(fw, v)) gone[ngone++] = k;
    for (size_t i = 0; i < ngone; i++) evict_wait_free(ks_map_del(&ev->awaiting, gone[i]));
    free(gone);
    ev->awaiting_prune_at = 2 * ev->awaiting.len;
    if (ev->awaiting_prune_at < EVICTING_PRUNE_MIN) ev->awaiting_prune_at = EVICTING_PRUNE_MIN;
}

static void set_awaiting(ks_evaluator *ev, const ks_pod *pod, evict_wait *w) {
    pthread_mutex_lock(&ev->mu);
    if (w && ev->awaiting.len >= ev->awaiting_prune_at) prune_awaiting(ev);
    evict_wait *old = w ? ks_map_put(&ev->awaiting, pod_slot(pod), w) : ks_map_del(&ev->awaiting, pod_slot(pod));
    pthread_mutex_unlock(&ev->mu);
    evict_wait_free(old);
}

bool ks_evaluator_awaits_victims(ks_evaluator *ev, const ks_pod *pod) {
    evict_wait *done = NULL;
    pthread_mutex_lock(&ev->mu);
    evict_wait *w = ev->awaiting.len ? ks_map_get(&ev->awaiting, pod_slot(pod)) : NULL;
    bool r = w && any_held(fw_of(ev), w);
    if (w && !r) done = ks_map_del(&ev->awaiting, pod_slot(pod));
    pthread_mutex_unlock(&ev->mu);
    evict_wait_free(done);
    return r;
}

static void set_preempting(ks_evaluator *ev, const ks_pod *pod, bool on) {
    pthread_mutex_lock(&ev->mu);
    if (on) ks_map_put(&ev->preempting, pod_slot(pod), (void *)1);
    else ks_map_del(&ev->preempting, pod_slot(pod));
    pthread_mutex_unlock(&ev->mu);
}

/* One eviction job: what upstream's preemption goroutine closes over. Its
 * counters are written from the dispatcher's workers as deletions end. */
typedef struct evict_job {
    ks_evaluator *ev;
    ks_pod *preemptor;  /* referenced */
    ks_id node;
    ks_pod **victims;   /* referenced; the ones to delete */
    uint32_t nvictims;
    struct victim_call *calls; /* one per victim: what its done callback needs */
    atomic_uint pending;       /* deletions of the first nvictims-1 not ended */
    atomic_bool failed;
    atomic_bool all_gone;      /* every victim was gone already */
    int64_t t0;
} evict_job;

typedef struct victim_call {
    evict_job *j;
    uint32_t i;
} victim_call;

static void evict_job_free(evict_job *j) {
    for (uint32_t i = 0; i < j->nvictims; i++) ks_pod_unref(j->victims[i]);
    free(j->victims);
    free(j->calls);
    ks_pod_unref(j->preemptor);
    free(j);
}

/* The victim is gone or going already: upstream's NotFound from the
 * delete call, or the dispatcher skipping a deletion it already has. */
static bool already_gone(const ks_status *s) {
    if (ks_status_code(s) == KS_SKIP) return true;
    if (ks_status_nreasons(s) == 0) return false;
    const char *r = ks_status_reason(s, 0);
    size_t n = strlen(r);
    return n >= 9 && strcmp(r + n - 9, "not found") == 0;
}

/* Upstream PreemptPod's first half: a victim waiting on Permit is
 * rejected (true: nothing to delete); otherwise it gets the
 * DisruptionTarget condition, queued before its deletion. */
static bool reject_or_mark(ks_evaluator *ev, const ks_pod *preemptor, ks_id node, ks_pod *victim) {
    ks_framework *fw = fw_of(ev);
    if (fw->waiting && ks_waiting_pods_reject(fw->waiting, victim->key, ev->plugin_name, "preempted")) {
        ks_infof(2, "\"Preemptor pod rejected a waiting pod\" preemptor=\"%s/%s\" waitingPod=\"%s/%s\" node=\"%s\"",
                 ks_str(preemptor->ns), ks_str(preemptor->name), ks_str(victim->ns),
                 ks_str(victim->name), ks_str(node));
        return true;
    }
    if (fw->env.patch_status) {
        char *msg = ks_xasprintf("%s: preempting to accommodate a higher priority pod",
                                 ks_str(preemptor->scheduler_name));
        ks_status_patch p = {.has_condition = true,
                             .cond_type = "DisruptionTarget",
                             .cond_status = "True",
                             .cond_reason = "PreemptionByScheduler",
                             .cond_message = msg};
        fw->env.patch_status(fw->env.ctx, victim, &p);
        free(msg);
    }
    return false;
}

/* Upstream PreemptPod's end: the log line and the Preempted event. */
static void preempted(ks_evaluator *ev, const ks_pod *preemptor, ks_id node, const ks_pod *victim,
                      bool deleted) {
    ks_framework *fw = fw_of(ev);
    if (deleted)
        ks_infof(2, "\"Preemptor Pod preempted victim Pod\" preemptor=\"%s/%s\" victim=\"%s/%s\" node=\"%s\"",
                 ks_str(preemptor->ns), ks_str(preemptor->name), ks_str(victim->ns),
                 ks_str(victim->name), ks_str(node));
    if (fw->env.event) {
        char *note = ks_xasprintf("Preempted by pod %s on node %s",
                                  preemptor->uid ? preemptor->uid : "", ks_str(node));
        fw->env.event(fw->env.ctx, victim, preemptor, "Normal", "Preempted", "Preempting", note);
        free(note);
    }
}

/* Upstream PreemptPod, as the synchronous path (async preemption off)
 * calls it. */
static ks_status *preempt_pod(ks_evaluator *ev, const ks_pod *preemptor, ks_id node,
                              ks_pod *victim) {
    ks_framework *fw = fw_of(ev);
    bool rejected = reject_or_mark(ev, preemptor, node, victim);
    if (rejected) forget_evicting(ev, victim);
    if (!rejected) {
        if (!fw->env.delete_pod)
            return ks_status_new(KS_ERROR, "no backend to delete pod %s/%s",
                                 ks_str(victim->ns), ks_str(victim->name));
        ks_status *s = fw->env.delete_pod(fw->env.ctx, victim);
        if (s) return s;
    }
    preempted(ev, preemptor, node, victim, !rejected);
    return NULL;
}

/* Upstream getLowerPriorityNominatedPods + clearNominatedNodeName: pods of
 * lower priority nominated to the node may no longer fit there; clearing
 * their nomination sends them back to the queue to find another place. */
static void clear_lower_nominated(ks_evaluator *ev, const ks_pod *pod, ks_id node) {
    ks_framework *fw = fw_of(ev);
    if (!fw->env.nominated_pods || !fw->env.patch_status) return;
    size_t n = fw->env.nominated_pods(fw->env.ctx, node, NULL, 0);
    if (n == 0) return;
    ks_pod **v = ks_xcalloc(n, sizeof(*v));
    n = fw->env.nominated_pods(fw->env.ctx, node, v, n);
    int32_t prio = ks_pod_priority(pod);
    for (size_t i = 0; i < n; i++) {
        /* another scheduler's pod is its to nominate, not ours to write */
        bool ours = !fw->env.responsible || fw->env.responsible(fw->env.ctx, v[i]);
        if (ours && ks_pod_priority(v[i]) < prio) {
            ks_status_patch p = {.set_nominated = true, .nominated = ""};
            fw->env.patch_status(fw->env.ctx, v[i], &p);
        }
        ks_pod_unref(v[i]);
    }
    free(v);
}

static void evict_last(evict_job *j);
static void evict_finish(evict_job *j);

/* A victim's PreemptPod ended (st NULL: deleted, or rejected on Permit). */
static void victim_ended(evict_job *j, uint32_t i, const ks_status *st, bool deleted) {
    if (!st) {
        atomic_store(&j->all_gone, false);
        if (!deleted) forget_evicting(j->ev, j->victims[i]);
        preempted(j->ev, j->preemptor, j->node, j->victims[i], deleted);
    } else if (ks_status_code(st) == KS_SKIP) {
        /* A deletion of this victim was queued already (an earlier
         * preemption): it is on its way, and its event will requeue the
         * pod; activating it now would only retry it in vain. */
        atomic_store(&j->all_gone, false);
    } else if (already_gone(st)) {
        ks_infof(2, "\"Victim Pod is already deleted\" preemptor=\"%s/%s\" victim=\"%s/%s\" node=\"%s\"",
                 ks_str(j->preemptor->ns), ks_str(j->preemptor->name), ks_str(j->victims[i]->ns),
                 ks_str(j->victims[i]->name), ks_str(j->node));
    } else {
        char *m = ks_status_message(st);
        ks_errorf("Error occurred during preemption: %s", m);
        free(m);
        forget_evicting(j->ev, j->victims[i]);
        atomic_store(&j->failed, true);
    }
    if (i + 1 == j->nvictims) evict_finish(j);
    else if (atomic_fetch_sub(&j->pending, 1) == 1) evict_last(j);
}

static void victim_deleted(void *arg, const ks_status *st) {
    victim_call *vc = arg;
    victim_ended(vc->j, vc->i, st, true);
}

/* Victim i: rejected on Permit, or marked and deleted; its end is
 * reported to victim_ended, maybe before this returns. */
static void evict_victim(evict_job *j, uint32_t i) {
    ks_framework *fw = fw_of(j->ev);
    ks_pod *victim = j->victims[i];
    if (reject_or_mark(j->ev, j->preemptor, j->node, victim)) {
        victim_ended(j, i, NULL, false);
        return;
    }
    j->calls[i] = (victim_call){.j = j, .i = i};
    if (fw->env.delete_pod_async) {
        /* The last victim goes first: once the pod leaves the preempting
         * set, every event may retry it until this deletion is seen. */
        fw->env.delete_pod_async(fw->env.ctx, victim, i + 1 == j->nvictims, victim_deleted, &j->calls[i]);
        return;
    }
    ks_status *s = fw->env.delete_pod ? fw->env.delete_pod(fw->env.ctx, victim)
                                      : ks_status_new(KS_ERROR, "no backend to delete pod %s/%s",
                                                      ks_str(victim->ns), ks_str(victim->name));
    victim_ended(j, i, s, true);
    ks_status_free(s);
}

/* The first victims are all deleted (or failed): the pod leaves the
 * preempting set, then the last victim goes, so that its deletion event,
 * which is what requeues the pod, is never ignored by PreEnqueue. */
static void evict_last(evict_job *j) {
    set_preempting(j->ev, j->preemptor, false);
    evict_victim(j, j->nvictims - 1);
}

static void evict_finish(evict_job *j) {
    ks_evaluator *ev = j->ev;
    ks_framework *fw = fw_of(ev);
    bool failed = atomic_load(&j->failed);
    /* A failed eviction leaves a victim in place for good. */
    if (failed) set_awaiting(ev, j->preemptor, NULL);
    /* Nothing was deleted by us (no event will come) or something failed:
     * the pod must not wait in the unschedulable pool for an event. */
    if ((failed || atomic_load(&j->all_gone)) && fw->env.activate) fw->env.activate(fw->env.ctx, j->preemptor);
    const char *res = failed ? "error" : "success";
    ks_infof(2, "\"Async Preemption finished completely\" preemptor=\"%s/%s\" node=\"%s\" result=\"%s\"",
             ks_str(j->preemptor->ns), ks_str(j->preemptor->name), ks_str(j->node), res);
    const ks_sched_metrics *sm = ks_sm();
    ks_counter_inc(ks_metric_get(sm->preemption_goroutines_execution, res));
    ks_histogram_observe(ks_metric_get(sm->preemption_goroutines_duration, res),
                         (double)(ks_monotonic_ns() - j->t0) / 1e9);
    evict_job_free(j);
}

/* The body of upstream's prepareCandidateAsync goroutine, as callbacks:
 * the first victims' deletions are queued at once (upstream sends them in
 * parallel and waits for the answers); the pod stays in the preempting
 * set, gated by PreEnqueue, until the API server has answered every one
 * of them; then the last victim. */
static void evict_async(evict_job *j) {
    j->t0 = ks_monotonic_ns();
    clear_lower_nominated(j->ev, j->preemptor, j->node);
    if (j->nvictims == 1) {
        evict_last(j);
        return;
    }
    /* j may be freed by the time the loop ends (answers can come inline) */
    uint32_t first = j->nvictims - 1;
    atomic_store(&j->pending, first);
    for (uint32_t i = 0; i < first; i++) evict_victim(j, i);
}

static evict_job *new_job(ks_evaluator *ev, const ks_pod *pod, const ks_candidate *c) {
    evict_job *j = ks_xcalloc(1, sizeof(*j));
    j->ev = ev;
    j->preemptor = ks_pod_ref((ks_pod *)pod);
    j->node = c->node;
    j->victims = ks_xcalloc(c->victims.npods ? c->victims.npods : 1, sizeof(*j->victims));
    j->calls = ks_xcalloc(c->victims.npods ? c->victims.npods : 1, sizeof(*j->calls));
    for (uint32_t i = 0; i < c->victims.npods; i++) {
        ks_pod *v = c->victims.pods[i];
        /* Already terminating: no second delete call. */
        if (v->has_deletion_ts) continue;
        j->victims[j->nvictims++] = ks_pod_ref(v);
        note_evicting(ev, v);
    }
    atomic_init(&j->pending, 0);
    atomic_init(&j->failed, false);
    atomic_init(&j->all_gone, true);
    return j;
}

/* Upstream prepareCandidateAsync: the evictions must not hold up the
 * scheduling thread, and the pod is gated (PreEnqueue) until the answers
 * to all but the last have come. */
static void prepare_candidate_async(ks_evaluator *ev, const ks_pod *pod, const ks_candidate *c) {
    ks_histogram_observe(ks_metric_get(ks_sm()->preemption_victims), (double)c->victims.npods);
    evict_job *j = new_job(ev, pod, c);
    if (j->nvictims == 0) {
        evict_job_free(j);
        return;
    }
    evict_wait *w = ks_xcalloc(1, sizeof(*w));
    w->victims = ks_xcalloc(j->nvictims, sizeof(*w->victims));
    for (uint32_t i = 0; i < j->nvictims; i++) w->victims[w->n++] = ks_pod_ref(j->victims[i]);
    set_awaiting(ev, pod, w);
    set_preempting(ev, pod, true);
    evict_async(j);
}

/* Upstream prepareCandidate (async preemption off): evict in parallel,
 * fail on the first error, then clear lower-priority nominations. */
static ks_status *prepare_candidate(ks_evaluator *ev, const ks_pod *pod, const ks_candidate *c) {
    evict_job *j = new_job(ev, pod, c);
    ks_status *err = NULL;
    uint32_t i = 0;
    for (; i < j->nvictims && !err; i++) {
        ks_status *s = preempt_pod(ev, pod, c->node, j->victims[i]);
        if (s && !already_gone(s)) err = as_error(s);
        else ks_status_free(s);
    }
    /* The failed deletion and those not attempted. */
    for (uint32_t k = err ? i - 1 : j->nvictims; k < j->nvictims; k++) forget_evicting(ev, j->victims[k]);
    if (!err) {
        ks_histogram_observe(ks_metric_get(ks_sm()->preemption_victims), (double)c->victims.npods);
        clear_lower_nominated(ev, pod, c->node);
    }
    evict_job_free(j);
    return err;
}

/* ---- Preempt ------------------------------------------------------------- */

/* Whether victims this evaluator is deleting still stand on the node pod
 * is nominated to: the one in its status, or, while the patch that writes
 * it is on its way, the one the nominator holds. Upstream waits (the pod
 * is not eligible) while a lower-priority pod its preemption deleted is
 * terminating on the nominated node; a victim whose deletion ksched has
 * issued is such a pod before the watch says so. */
static bool awaits_own_evictions(ks_evaluator *ev, const ks_pod *pod, const ks_node_status_map *m) {
    ks_framework *fw = fw_of(ev);
    pthread_mutex_lock(&ev->mu);
    bool none = ev->evicting.len == 0;
    pthread_mutex_unlock(&ev->mu);
    if (none) return false;
    ks_id node = pod->nominated_node;
    if (!node && fw->env.nominated_node) node = fw->env.nominated_node(fw->env.ctx, pod);
    if (!node || ks_status_code(status_for(m, node)) == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) return false;
    const ks_node_info *ni = fw->snapshot ? ks_snapshot_get(fw->snapshot, node) : NULL;
    int32_t prio = ks_pod_priority(pod);
    for (uint32_t i = 0; ni && i < ni->npods; i++)
        if (ks_pod_priority(ni->pods[i]) < prio && ks_evaluator_is_evicting(ev, ni->pods[i])) return true;
    return false;
}

static int cmp_node_names(const void *a, const void *b) {
    const ks_node_info *x = *(const ks_node_info *const *)a, *y = *(const ks_node_info *const *)b;
    return strcmp(ks_str(x->name), ks_str(y->name));
}

ks_status *ks_evaluator_preempt(ks_evaluator *ev, ks_cycle_state *st, const ks_pod *pod,
                                const ks_node_status_map *m, const char **nominated) {
    *nominated = NULL;
    ks_framework *fw = fw_of(ev);
    const ks_snapshot *snap = fw->snapshot;

    /* 1) Is the pod allowed to preempt at all? */
    const char *why = NULL;
    const ks_status *nominated_status = status_for(m, pod->nominated_node);
    if (!ev->ops->pod_eligible(ev->pl, pod, nominated_status, &why)) {
        ks_infof(5, "\"Pod is not eligible for preemption\" pod=\"%s/%s\" reason=\"%s\"",
                 ks_str(pod->ns), ks_str(pod->name), why ? why : "");
        return ks_status_new(KS_UNSCHEDULABLE, "%s", why ? why : "");
    }
    if (awaits_own_evictions(ev, pod, m)) {
        why = "not eligible due to a terminating pod on the nominated node.";
        ks_infof(5, "\"Pod is not eligible for preemption\" pod=\"%s/%s\" reason=\"%s\"",
                 ks_str(pod->ns), ks_str(pod->name), why);
        return ks_status_new(KS_UNSCHEDULABLE, "%s", why);
    }

    /* 2) Candidates: nodes that failed Filter with Unschedulable, which
     * removing pods might fix. */
    size_t nall = snap ? snap->nnodes : 0;
    if (nall == 0) return ks_status_new(KS_ERROR, "no nodes available");
    const ks_node_info **potential = ks_xcalloc(nall, sizeof(*potential));
    size_t npotential = 0;
    for (size_t i = 0; i < nall; i++) {
        const ks_node_info *ni = snap->nodes[i];
        if (ks_status_code(status_for(m, ni->name)) == KS_UNSCHEDULABLE)
            potential[npotential++] = ni;
    }
    if (fw->ties.preemption_nodes_by_name) qsort(potential, npotential, sizeof(*potential), cmp_node_names);
    ks_node_status_map statuses;
    ks_node_status_map_init(&statuses);
    ks_candidates cands = {0};
    ks_status *err = NULL;
    if (npotential == 0) {
        ks_infof(3, "\"Preemption will not help schedule pod on any node\" pod=\"%s/%s\"",
                 ks_str(pod->ns), ks_str(pod->name));
    } else {
        const ks_objects *objs = fw->env.objects ? fw->env.objects(fw->env.ctx) : NULL;
        ks_pdb_list pdbs = {objs ? (ks_pdb *const *)objs->pdbs.v : NULL, objs ? objs->pdbs.n : 0};
        int32_t offset = 0, num = 0;
        ev->ops->offset_and_num_candidates(ev->pl, (int32_t)npotential, &offset, &num);
        ks_dry_run_preemption(ev, st, pod, potential, npotential, &pdbs, offset, num, &cands,
                              &statuses, &err);
    }
    free(potential);
    if (err && cands.n == 0) {
        ks_node_status_map_clear(&statuses);
        return err;
    }
    ks_status_free(err);

    /* No candidate: a FitError over the dry runs' statuses; the nodes not
     * tried could not be helped. The pod's nomination is to be cleared. */
    if (cands.n == 0) {
        ks_infof(2, "\"No preemption candidate is found; preemption is not helpful for scheduling\" pod=\"%s/%s\"",
                 ks_str(pod->ns), ks_str(pod->name));
        ks_fit_error fe = {.num_all_nodes = nall};
        ks_diagnosis_init(&fe.diagnosis);
        fe.diagnosis.statuses = statuses; /* moved */
        ks_node_status_map_set_absent(
            &fe.diagnosis.statuses, ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                  "Preemption is not helpful for scheduling"));
        char *msg = ks_fit_error_message(&fe);
        ks_diagnosis_free(&fe.diagnosis);
        ks_status *s = ks_status_new(KS_UNSCHEDULABLE, "%s", msg);
        free(msg);
        *nominated = "";
        return s;
    }
    ks_node_status_map_clear(&statuses);

    /* 3) Extenders with a preempt verb narrow the candidates. */
    if (fw->env.preempt_extenders) {
        ks_status *s = fw->env.preempt_extenders(fw->env.ctx, pod, snap, &cands);
        if (s) {
            ks_candidates_free(&cands);
            return as_error(s);
        }
        if (cands.n == 0) return ks_status_new(KS_UNSCHEDULABLE, "no candidate node for preemption");
    }

    /* 4) The best candidate. */
    int best = cands.n == 1 ? 0 : ks_pick_one_node_for_preemption(&cands, fw->ties.preemption_nodes_by_name);
    const ks_candidate *c = &cands.v[best];
    ks_infof(2, "\"the target node for the preemption is determined\" node=\"%s\" pod=\"%s/%s\"",
             ks_str(c->node), ks_str(pod->ns), ks_str(pod->name));

    /* 5) Evict. */
    if (ev->async) {
        prepare_candidate_async(ev, pod, c);
    } else {
        ks_status *s = prepare_candidate(ev, pod, c);
        if (s) {
            ks_candidates_free(&cands);
            return s;
        }
    }
    *nominated = ks_str(c->node);
    ks_candidates_free(&cands);
    return NULL;
}
