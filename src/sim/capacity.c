#include "sim/capacity.h"
#include "framework/status.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "sim/simulate.h"
#include "util/clock.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define CAPACITY_HARD_LIMIT 100000

typedef struct cap_run {
    ks_capacity_result *out;
    ks_scheduler *s;
    uint64_t watching;     /* key of the replica being scheduled */
    bool failed;
} cap_run;

static ks_status *extender_bound(void *ctx, const ks_pod *pod, const char *node) {
    return ks_sim_extender_bound(((cap_run *)ctx)->s, pod, node);
}

static void add_reason(ks_capacity_result *r, const char *reason) {
    for (uint32_t i = 0; i < r->nreasons; i++)
        if (!strcmp(r->reasons[i].reason, reason)) {
            r->reasons[i].nodes++;
            return;
        }
    r->reasons = ks_xrealloc(r->reasons, (r->nreasons + 1) * sizeof(*r->reasons));
    r->reasons[r->nreasons++] = (ks_capacity_reason){ks_xstrdup(reason), 1};
}

/* Count, per distinct reason, the nodes that gave it in this attempt. */
static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    cap_run *c = ctx;
    if (rec->pod->key != c->watching || rec->result == KS_ATTEMPT_SCHEDULED ||
        rec->result == KS_ATTEMPT_SKIPPED || c->failed)
        return;
    c->failed = true;
    ks_capacity_result *r = c->out;
    r->message = ks_xstrdup(rec->message ? rec->message : "");
    if (!ks_status_is_success(rec->pre_filter_status)) {
        for (uint32_t i = 0; i < rec->pre_filter_status->nreasons; i++)
            add_reason(r, rec->pre_filter_status->reasons[i]);
        return;
    }
    for (size_t i = 0; i < rec->nevaluated; i++) {
        const ks_status *s = rec->verdicts[i];
        for (uint32_t j = 0; s && j < s->nreasons; j++) add_reason(r, s->reasons[j]);
    }
    if (rec->pre_filter_excluded_reason && rec->snapshot && rec->snapshot->nnodes > rec->nevaluated) {
        for (size_t i = rec->nevaluated; i < rec->snapshot->nnodes; i++)
            add_reason(r, rec->pre_filter_excluded_reason);
    }
}

static int cmp_reason(const void *a, const void *b) {
    const ks_capacity_reason *x = a, *y = b;
    if (x->nodes != y->nodes) return x->nodes > y->nodes ? -1 : 1;
    return strcmp(x->reason, y->reason);
}

/* The i-th replica: the template under the name <name>-<i>. */
static ks_pod *replica(const ks_pod *tmpl, uint32_t i) {
    ks_pod *p = ks_pod_clone(tmpl);
    char *name = ks_xasprintf("%s-%u", ks_str(tmpl->name), i);
    p->name = ks_intern(name);
    p->key = ks_pod_key(p->ns, p->name);
    p->uid = ks_arena_printf(p->arena, "capacity-%s", name);
    p->preemption_policy = KS_PREEMPT_NEVER;
    p->node_name = 0;
    p->nominated_node = 0;
    free(name);
    return p;
}

static ks_pod *clone_replica(void *ctx, uint32_t i, ks_pvc **pvcs, uint32_t *npvcs, uint32_t max_pvcs) {
    (void)pvcs;
    (void)max_pvcs;
    *npvcs = 0;
    return replica(ctx, i);
}

bool ks_capacity(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_pod *tmpl,
                 uint32_t max, ks_capacity_result *out, char **err) {
    ks_capacity_source src = {(void *)tmpl, clone_replica};
    return ks_capacity_from(cluster, cfg, reg, tmpl, &src, max, out, err);
}

bool ks_capacity_from(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_pod *tmpl,
                      const ks_capacity_source *src, uint32_t max, ks_capacity_result *out, char **err) {
    memset(out, 0, sizeof(*out));
    if (!ks_config_profile(cfg, ks_str(tmpl->scheduler_name))) {
        *err = ks_xasprintf("pod %s/%s names scheduler \"%s\", which no profile of the configuration has",
                            ks_str(tmpl->ns), ks_str(tmpl->name), ks_str(tmpl->scheduler_name));
        return false;
    }
    cap_run c = {.out = out};
    ks_clock *clock = ks_clock_sim_new(0);
    ks_memory_client *mb = ks_memory_client_new(cluster);
    ks_observer obs = {.ctx = &c, .on_attempt = on_attempt, .extender_bound = extender_bound};
    ks_scheduler_options so = {
        .config = cfg,
        .registry = reg,
        .backend = ks_memory_client_iface(mb),
        .clock = clock,
        .seed = 1,
        .observer = &obs,
    };
    bool ok = false;
    ks_scheduler *s = ks_sim_start(&so, err);
    if (!s) goto done;
    c.s = s;
    /* Pods already pending in the input are scheduled first, as they would
     * be in the cluster. */
    ks_scheduler_run_until_idle(s);
    uint32_t limit = max ? max : CAPACITY_HARD_LIMIT;
    while (out->replicas < limit) {
        ks_pvc *pvcs[16];
        uint32_t npvcs = 0;
        ks_pod *p = src->make(src->ctx, out->replicas + 1, pvcs, &npvcs, 16);
        if (!p) break;
        p->preemption_policy = KS_PREEMPT_NEVER;
        for (uint32_t i = 0; i < npvcs; i++) {
            ks_memory_client_add_object(mb, KS_KIND_PVC, pvcs[i]);
            KS_OBJECT_UNREF(pvcs[i]); /* the cluster took its own */
        }
        c.watching = p->key;
        ks_memory_client_add_pod(mb, p);
        ks_scheduler_run_until_idle(s);
        const ks_pod *now = ks_memory_client_pod(mb, c.watching);
        if (!now || !now->node_name) break;
        out->replicas++;
        uint32_t k = 0;
        while (k < out->nper_node && out->per_node[k].node != now->node_name) k++;
        if (k == out->nper_node) {
            out->per_node = ks_xrealloc(out->per_node, (k + 1) * sizeof(*out->per_node));
            out->per_node[out->nper_node++] = (ks_capacity_node){now->node_name, 0};
        }
        out->per_node[k].replicas++;
    }
    out->hit_max = out->replicas == limit;
    if (out->hit_max) {
        free(out->message);
        out->message = NULL;
        for (uint32_t i = 0; i < out->nreasons; i++) free(out->reasons[i].reason);
        free(out->reasons);
        out->reasons = NULL;
        out->nreasons = 0;
    }
    if (out->nreasons) qsort(out->reasons, out->nreasons, sizeof(*out->reasons), cmp_reason);
    ok = true;
done:
    if (s) ks_scheduler_free(s);
    ks_memory_client_free(mb);
    ks_clock_free(clock);
    return ok;
}

void ks_capacity_result_free(ks_capacity_result *r) {
    free(r->per_node);
    free(r->message);
    for (uint32_t i = 0; i < r->nreasons; i++) free(r->reasons[i].reason);
    free(r->reasons);
    memset(r, 0, sizeof(*r));
}
