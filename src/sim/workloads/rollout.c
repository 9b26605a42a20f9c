/* Rollouts of a changed template, one controller sync per step
 * (rollout.h). kube-controller-manager v1.34.1 is the specification:
 * pkg/controller/deployment/{rolling,recreate}.go,
 * pkg/controller/daemon/{update.go, daemon_controller.go podsShouldBeOnNode},
 * pkg/controller/statefulset/stateful_set_control.go. */
#include "sim/workloads/rollout.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void wl_rollout_init(wl_rollout *r, const ks_workload *w, ks_wl_objects *x) {
    memset(r, 0, sizeof(*r));
    r->w = w;
    r->kind = x->rollout.kind;
    r->strategy = x->rollout.strategy ? x->rollout.strategy : "RollingUpdate";
    r->recreate = x->rollout.recreate;
    r->parallel = x->rollout.parallel;
    r->replicas = x->rollout.replicas;
    r->max_surge = x->rollout.max_surge;
    r->max_unavailable = x->rollout.max_unavailable;
    r->partition = x->rollout.partition;
    r->desired = x->rollout.desired;
    r->old = x->rollout.old.v;
    r->nold = x->rollout.old.n;
    r->fresh = x->rollout.fresh.v;
    r->nfresh = x->rollout.fresh.n;
    r->flags = x->rollout.flags.v;
    memset(&x->rollout.old, 0, sizeof(x->rollout.old));
    memset(&x->rollout.fresh, 0, sizeof(x->rollout.fresh));
    memset(&x->rollout.flags, 0, sizeof(x->rollout.flags));
}

void wl_rollout_free(wl_rollout *r) {
    for (uint32_t i = 0; i < r->nold; i++) ks_pod_unref(r->old[i]);
    for (uint32_t i = 0; i < r->nfresh; i++) ks_pod_unref(r->fresh[i]);
    free(r->old);
    free(r->fresh);
    free(r->flags);
    memset(r, 0, sizeof(*r));
}

static bool slots(const wl_rollout *r) { return r->flags != NULL; }

/* ---- Deployment -------------------------------------------------------- */

static uint32_t step_deployment(wl_rollout *r, const ks_wl_step_ops *ops) {
    uint32_t changes = 0;
    uint32_t bound_new = 0;
    for (uint32_t i = 0; i < r->next; i++) bound_new += ops->is_bound(ops->ctx, r->fresh[i]);
    int32_t old_left = (int32_t)(r->nold - r->old_removed);
    if (r->recreate) {
        /* every old pod goes, then every new one comes */
        for (; r->old_removed < r->nold; r->old_removed++, changes++) ops->remove(ops->ctx, r->old[r->old_removed]);
        for (; r->next < r->nfresh; r->next++, changes++) ops->create(ops->ctx, ks_pod_ref(r->fresh[r->next]));
        return changes;
    }
    /* reconcileNewReplicaSet: up to replicas + maxSurge pods in all */
    int32_t total = old_left + (int32_t)r->next;
    int32_t up = r->replicas + r->max_surge - total;
    for (; up > 0 && r->next < r->nfresh; up--, r->next++, changes++)
        ops->create(ops->ctx, ks_pod_ref(r->fresh[r->next]));
    /* reconcileOldReplicaSets: keep replicas - maxUnavailable available */
    int32_t min_available = r->replicas - r->max_unavailable;
    int32_t down = old_left + (int32_t)bound_new - min_available;
    if (down > old_left) down = old_left;
    for (; down > 0; down--, r->old_removed++, changes++) ops->remove(ops->ctx, r->old[r->old_removed]);
    return changes;
}

/* ---- slots: DaemonSet, StatefulSet ------------------------------------- */

static bool live_old(const wl_rollout *r, uint32_t i) { return r->old[i] && !(r->flags[i] & KS_WL_SLOT_GONE); }
static bool live_new(const wl_rollout *r, uint32_t i) { return r->fresh[i] && (r->flags[i] & KS_WL_SLOT_CREATED); }

static void delete_old(wl_rollout *r, uint32_t i, const ks_wl_step_ops *ops) {
    ops->remove(ops->ctx, r->old[i]);
    r->flags[i] |= KS_WL_SLOT_GONE;
}

static void create_new(wl_rollout *r, uint32_t i, const ks_wl_step_ops *ops) {
    ops->create(ops->ctx, ks_pod_ref(r->fresh[i]));
    r->flags[i] |= KS_WL_SLOT_CREATED;
}

static bool rolling(const wl_rollout *r) { return strcmp(r->strategy, "RollingUpdate") == 0; }

/* podsShouldBeOnNode: a node the set left loses its pods; a node that
 * should run one and has none gets it; with surge, of an old and a new
 * pod neither running, the new one stays. */
static uint32_t daemon_manage(wl_rollout *r, const ks_wl_step_ops *ops, bool surge) {
    uint32_t changes = 0;
    for (uint32_t i = 0; i < r->nold; i++) {
        uint8_t f = r->flags[i];
        bool lo = live_old(r, i), ln = live_new(r, i);
        if (!(f & KS_WL_SLOT_CONTINUE)) {
            if (lo) delete_old(r, i, ops), changes++;
        } else if (!lo && !ln) {
            if ((f & KS_WL_SLOT_RUN) && r->fresh[i]) create_new(r, i, ops), changes++;
        } else if (lo && ln && surge && !ops->is_bound(ops->ctx, r->fresh[i]) &&
                   !ops->is_bound(ops->ctx, r->old[i])) {
            delete_old(r, i, ops), changes++;
        }
    }
    return changes;
}

/* rollingUpdate without surge: delete old pods while fewer than
 * maxUnavailable nodes lack an available pod; the manage loop then
 * creates the new pods. */
static uint32_t daemon_unavailable(wl_rollout *r, const ks_wl_step_ops *ops, uint32_t *cand) {
    int32_t unavailable = 0;
    uint32_t ncand = 0, changes = 0;
    for (uint32_t i = 0; i < r->nold; i++) {
        bool lo = live_old(r, i), ln = live_new(r, i);
        if (!lo && !ln && !(r->flags[i] & KS_WL_SLOT_RUN)) continue; /* not in nodeToDaemonPods */
        if (lo == ln) {
            unavailable++;
        } else if (ln) {
            if (!ops->is_bound(ops->ctx, r->fresh[i])) unavailable++;
        } else if (!ops->is_bound(ops->ctx, r->old[i])) {
            /* an old pod not running is replaced at once */
            delete_old(r, i, ops), changes++;
            unavailable++;
        } else if (unavailable < r->max_unavailable) {
            cand[ncand++] = i;
        }
    }
    int32_t room = r->max_unavailable - unavailable;
    for (uint32_t k = 0; room > 0 && k < ncand; k++, room--) delete_old(r, cand[k], ops), changes++;
    return changes;
}

/* rollingUpdate with surge: a new pod beside each old one, at most
 * maxSurge waiting at a time; an old pod goes once its node's new pod
 * runs. */
static uint32_t daemon_surge(wl_rollout *r, const ks_wl_step_ops *ops, uint32_t *cand) {
    uint32_t *allowed = cand + r->nold, *not_run = cand + 2 * r->nold;
    uint32_t ncand = 0, nallowed = 0, nnot_run = 0, changes = 0;
    int32_t surging = 0, available = 0;
    for (uint32_t i = 0; i < r->nold; i++) {
        uint8_t f = r->flags[i];
        bool lo = live_old(r, i), ln = live_new(r, i);
        if (lo) available += ops->is_bound(ops->ctx, r->old[i]);
        else if (ln) available += ops->is_bound(ops->ctx, r->fresh[i]);
        if (!lo) continue;
        if (!ln) {
            if (!ops->is_bound(ops->ctx, r->old[i])) {
                if (!(f & KS_WL_SLOT_RUN)) delete_old(r, i, ops), changes++;
                else allowed[nallowed++] = i;
            } else if (!(f & KS_WL_SLOT_RUN)) {
                not_run[nnot_run++] = i;
            } else if (surging < r->max_surge) {
                cand[ncand++] = i;
            }
        } else if (!ops->is_bound(ops->ctx, r->fresh[i])) {
            surging++;
        } else {
            delete_old(r, i, ops), changes++;
        }
    }
    /* the set moving from node A to node B: A's pod goes once B's runs */
    int32_t deletable = available - r->desired;
    for (uint32_t k = 0; deletable > 0 && k < nnot_run; k++, deletable--) delete_old(r, not_run[k], ops), changes++;
    int32_t room = r->max_surge - surging;
    for (uint32_t k = 0; k < nallowed; k++)
        if (r->fresh[allowed[k]]) create_new(r, allowed[k], ops), changes++;
    for (uint32_t k = 0; room > 0 && k < ncand; k++, room--)
        if (r->fresh[cand[k]]) create_new(r, cand[k], ops), changes++;
    return changes;
}

static uint32_t step_daemonset(wl_rollout *r, const ks_wl_step_ops *ops) {
    bool surge = rolling(r) && r->max_surge > 0;
    uint32_t changes = daemon_manage(r, ops, surge);
    if (!rolling(r)) return changes;
    uint32_t *scratch = ks_xcalloc(3 * (size_t)r->nold + 1, sizeof(uint32_t));
    changes += surge ? daemon_surge(r, ops, scratch) : daemon_unavailable(r, ops, scratch);
    free(scratch);
    return changes;
}

/* updateStatefulSet (MaxUnavailableStatefulSet off, its v1.34 default):
 * missing ordinals are created (OrderedReady: one at a time, each once
 * every predecessor runs); then, from the highest index down to the
 * partition, the first outdated pod is deleted, and its replacement must
 * run before the next goes. */
static uint32_t step_statefulset(wl_rollout *r, const ks_wl_step_ops *ops) {
    uint32_t changes = 0;
    for (uint32_t i = 0; i < r->nold; i++) {
        bool lo = live_old(r, i), ln = live_new(r, i);
        if (!lo && !ln) {
            if (!r->fresh[i]) continue;
            create_new(r, i, ops), changes++;
            if (!r->parallel) return changes;
            continue;
        }
        if (!r->parallel && !ops->is_bound(ops->ctx, lo ? r->old[i] : r->fresh[i])) return changes;
    }
    if (!rolling(r)) return changes;
    for (int64_t i = (int64_t)r->nold - 1; i >= r->partition && i >= 0; i--) {
        bool lo = live_old(r, (uint32_t)i), ln = live_new(r, (uint32_t)i);
        if (lo && (r->flags[i] & KS_WL_SLOT_REPLACE)) {
            delete_old(r, (uint32_t)i, ops);
            return changes + 1;
        }
        const ks_pod *p = lo ? r->old[i] : ln ? r->fresh[i] : NULL;
        if (!p || !ops->is_bound(ops->ctx, p)) return changes;
    }
    return changes;
}

uint32_t wl_rollout_step(wl_rollout *r, const ks_wl_step_ops *ops) {
    switch (r->kind) {
    case KS_WORKLOAD_DAEMONSET: return step_daemonset(r, ops);
    case KS_WORKLOAD_STATEFULSET: return step_statefulset(r, ops);
    default: return step_deployment(r, ops);
    }
}

void wl_rollout_end(const wl_rollout *r, ks_pod ***gone, uint32_t *ngone, ks_pod ***made, uint32_t *nmade) {
    *gone = ks_xcalloc(r->nold + 1, sizeof(ks_pod *));
    *made = ks_xcalloc(r->nfresh + 1, sizeof(ks_pod *));
    *ngone = *nmade = 0;
    for (uint32_t i = 0; i < r->nold; i++)
        if (r->old[i] && (!slots(r) || (r->flags[i] & KS_WL_SLOT_REPLACE))) (*gone)[(*ngone)++] = r->old[i];
    for (uint32_t i = 0; i < r->nfresh; i++)
        if (r->fresh[i] && (slots(r) ? !(r->flags[i] & KS_WL_SLOT_CREATED) : i >= r->next))
            (*made)[(*nmade)++] = r->fresh[i];
}

void wl_rollout_state(const wl_rollout *r, bool (*is_bound)(void *ctx, const ks_pod *p), void *ctx,
                      ks_wl_rollout_state *out) {
    memset(out, 0, sizeof(*out));
    out->recreate = r->recreate;
    out->strategy = r->strategy;
    if (!slots(r)) {
        out->created = r->next;
        out->total = r->nfresh;
        for (uint32_t j = 0; j < r->next; j++) out->bound += is_bound(ctx, r->fresh[j]);
        out->old_total = r->nold;
        out->old_left = r->nold - r->old_removed;
        return;
    }
    for (uint32_t i = 0; i < r->nold; i++) {
        if (r->fresh[i]) {
            out->total++;
            if (live_new(r, i)) {
                out->created++;
                out->bound += is_bound(ctx, r->fresh[i]);
            }
        }
        if (r->old[i] && (r->flags[i] & KS_WL_SLOT_REPLACE)) {
            out->old_total++;
            out->old_left += live_old(r, i);
        }
    }
}
