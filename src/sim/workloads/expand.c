/* Every workload of a cluster expanded into what its controllers create
 * (ks_workloads_expand), and the pods an OrderedReady StatefulSet creates
 * one at a time (ks_wl_held). */
#include "sim/workloads/rollout.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* One StatefulSet's ordinals still to create, in order. */
typedef struct held_seq {
    ks_pod **pods;
    uint32_t n, next;
    ks_pod *last; /* the ordinal created last (referenced) */
} held_seq;

struct ks_wl_held {
    KS_VEC(held_seq) seqs;
    KS_VEC(wl_rollout) rollouts;
};

static void held_free(ks_wl_held *h) {
    if (!h) return;
    for (uint32_t i = 0; i < h->seqs.n; i++) {
        held_seq *s = &h->seqs.v[i];
        for (uint32_t j = s->next; j < s->n; j++) ks_pod_unref(s->pods[j]);
        free(s->pods);
        if (s->last) ks_pod_unref(s->last);
    }
    free(h->seqs.v);
    for (uint32_t i = 0; i < h->rollouts.n; i++) wl_rollout_free(&h->rollouts.v[i]);
    free(h->rollouts.v);
    free(h);
}

void ks_wl_generated_free(ks_wl_generated *g) {
    held_free(g->held);
    free(g->workloads.v);
    free(g->pvcs.v);
    memset(g, 0, sizeof(*g));
}

uint32_t ks_wl_held_list(const ks_wl_held *h, const ks_pod **out, uint32_t max) {
    uint32_t n = 0;
    for (uint32_t i = 0; h && i < h->seqs.n; i++)
        for (uint32_t j = h->seqs.v[i].next; j < h->seqs.v[i].n && n < max; j++) out[n++] = h->seqs.v[i].pods[j];
    return n;
}

uint32_t ks_wl_held_count(const ks_wl_held *h) {
    uint32_t n = 0;
    for (uint32_t i = 0; h && i < h->seqs.n; i++) n += h->seqs.v[i].n - h->seqs.v[i].next;
    return n;
}

uint32_t ks_wl_held_release(ks_wl_held *h, bool (*is_bound)(void *ctx, const ks_pod *p), void *ctx,
                            ks_pod **out, uint32_t max) {
    uint32_t n = 0;
    for (uint32_t i = 0; h && i < h->seqs.n && n < max; i++) {
        held_seq *s = &h->seqs.v[i];
        if (s->next == s->n || (s->last && !is_bound(ctx, s->last))) continue;
        ks_pod *p = s->pods[s->next++];
        if (s->last) ks_pod_unref(s->last);
        s->last = ks_pod_ref(p);
        out[n++] = p;
    }
    return n;
}

uint32_t ks_wl_step(ks_wl_held *h, const ks_wl_step_ops *ops) {
    if (!h) return 0;
    uint32_t changes = 0;
    ks_pod *batch[64];
    uint32_t n;
    while ((n = ks_wl_held_release(h, ops->is_bound, ops->ctx, batch, 64)) > 0) {
        for (uint32_t i = 0; i < n; i++) ops->create(ops->ctx, batch[i]);
        changes += n;
        if (n < 64) break;
    }
    for (uint32_t i = 0; i < h->rollouts.n; i++) changes += wl_rollout_step(&h->rollouts.v[i], ops);
    return changes;
}

bool ks_wl_rollout_state_of(const ks_wl_held *h, const ks_workload *w, const ks_cluster *c,
                            bool (*is_bound)(void *ctx, const ks_pod *p), void *ctx, ks_wl_rollout_state *out) {
    (void)c;
    for (uint32_t i = 0; h && i < h->rollouts.n; i++) {
        if (h->rollouts.v[i].w != w) continue;
        wl_rollout_state(&h->rollouts.v[i], is_bound, ctx, out);
        return true;
    }
    return false;
}

/* A ReplicaSet of a Deployment, a Job of a CronJob: its controller, when
 * the cluster has it, decides. */
static bool managed_by_other(const ks_cluster *c, const ks_workload *w) {
    ks_workload_kind up;
    if (w->kind == KS_WORKLOAD_REPLICASET && w->owner_kind == ks_intern("Deployment")) up = KS_WORKLOAD_DEPLOYMENT;
    else if (w->kind == KS_WORKLOAD_JOB && w->owner_kind == ks_intern("CronJob")) up = KS_WORKLOAD_CRONJOB;
    else return false;
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *o = c->workloads.v[i];
        if (o->kind == up && o->ns == w->ns && o->name == w->owner_name) return true;
    }
    return false;
}

/* A CronJob that already has a Job in the cluster (a snapshot) has fired
 * already; one from a manifest fires now. */
static bool cronjob_fired(const ks_cluster *c, const ks_workload *w) {
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        const ks_workload *o = c->workloads.v[i];
        if (o->kind == KS_WORKLOAD_JOB && o->ns == w->ns && o->owner_kind == ks_intern("CronJob") &&
            o->owner_name == w->name)
            return true;
    }
    return false;
}

/* Runs that cannot step a rollout take its end: the old pods gone, the
 * new ones pending. Returns how many were added. */
static uint32_t rollout_end(ks_cluster *c, wl_rollout *ro) {
    ks_pod **gone, **made;
    uint32_t ngone, nmade;
    wl_rollout_end(ro, &gone, &ngone, &made, &nmade);
    for (uint32_t j = 0; j < ngone; j++)
        for (uint32_t k = 0; k < c->pods.n; k++)
            if (c->pods.v[k] == gone[j]) {
                ks_pod_unref(c->pods.v[k]);
                memmove(&c->pods.v[k], &c->pods.v[k + 1], (c->pods.n - k - 1) * sizeof(ks_pod *));
                c->pods.n--;
                break;
            }
    for (uint32_t j = 0; j < nmade; j++) KS_VEC_PUSH(c->pods, ks_pod_ref(made[j]));
    free(gone);
    free(made);
    wl_rollout_free(ro);
    return nmade;
}

bool ks_workloads_expand(ks_cluster *c, const ks_wl_options *o, ks_wl_generated *gen, ks_errors *errs) {
    memset(gen, 0, sizeof(*gen));
    size_t nerr = errs->n;
    uint32_t nw = c->workloads.n;
    ks_wl_objects *all = ks_xcalloc(nw ? nw : 1, sizeof(*all));
    uint32_t index0 = c->next_input_index;
    for (uint32_t i = 0; i < nw; i++) {
        ks_workload *w = c->workloads.v[i];
        all[i].desired = -1;
        if (w->kind == KS_WORKLOAD_SERVICE || managed_by_other(c, w)) continue;
        if (w->kind == KS_WORKLOAD_CRONJOB && cronjob_fired(c, w)) continue;
        if (ks_workload_expand(w, c, o, &all[i], errs)) c->next_input_index = all[i].next_input_index;
    }
    bool ok = errs->n == nerr;
    ks_wl_held *h = ok ? ks_xcalloc(1, sizeof(*h)) : NULL;
    for (uint32_t i = 0; i < nw; i++) {
        ks_wl_objects *x = &all[i];
        if (!ok) {
            ks_wl_objects_free(x);
            continue;
        }
        c->workloads.v[i]->desired = x->desired;
        for (uint32_t j = 0; j < x->pods.n; j++) KS_VEC_PUSH(c->pods, x->pods.v[j]);
        gen->npods += x->pods.n;
        for (uint32_t j = 0; j < x->pvcs.n; j++) {
            KS_VEC_PUSH(c->pvcs, x->pvcs.v[j]);
            KS_VEC_PUSH(gen->pvcs, x->pvcs.v[j]);
        }
        for (uint32_t j = 0; j < x->workloads.n; j++) {
            KS_VEC_PUSH(c->workloads, x->workloads.v[j]);
            KS_VEC_PUSH(gen->workloads, x->workloads.v[j]);
        }
        if (x->rollout.active) {
            wl_rollout ro;
            wl_rollout_init(&ro, c->workloads.v[i], x);
            if (!o->no_hold) KS_VEC_PUSH(h->rollouts, ro);
            else gen->npods += rollout_end(c, &ro);
        }
        if (x->held.n && o->no_hold) {
            for (uint32_t j = 0; j < x->held.n; j++) KS_VEC_PUSH(c->pods, x->held.v[j]);
            gen->npods += x->held.n;
            free(x->held.v);
        } else if (x->held.n) {
            held_seq s = {.pods = x->held.v, .n = x->held.n};
            if (x->pods.n) s.last = ks_pod_ref(x->pods.v[x->pods.n - 1]);
            KS_VEC_PUSH(h->seqs, s);
        }
        free(x->pods.v);
        free(x->pvcs.v);
        free(x->workloads.v);
    }
    free(all);
    if (!ok) c->next_input_index = index0;
    gen->held = h;
    return ok;
}
