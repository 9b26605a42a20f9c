/* Capacity for a workload (capacity.h): its replicas as its controller
 * would add them when scaled up, and for a DaemonSet the nodes it targets
 * where its pod does not fit. */
#include "sim/capacity.h"
#include "sim/simulate.h"
#include "sim/workloads/workloads.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *errs_text(ks_errors *e) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (size_t i = 0; i < e->n; i++) ks_sb_printf(&b, "%s%s", i ? "\n" : "", e->v[i]);
    return ks_sb_take(&b);
}

typedef struct sts_source {
    const ks_workload *w;
    ks_cluster *c;
    ks_wl_options o;
    int32_t next; /* next ordinal to try */
    ks_errors errs;
} sts_source;

/* The StatefulSet scaled up one more: the first ordinal the cluster does
 * not hold, with its claims. */
static ks_pod *sts_make(void *ctx, uint32_t i, ks_pvc **pvcs, uint32_t *npvcs, uint32_t max_pvcs) {
    sts_source *s = ctx;
    (void)i;
    for (int guard = 0; guard < 100000; guard++) {
        ks_wl_objects out;
        if (!ks_statefulset_ordinal(s->w, s->c, &s->o, s->next++, &out, &s->errs)) return NULL;
        ks_pod *p = out.pods.n ? out.pods.v[0] : NULL;
        bool taken = false;
        for (uint32_t k = 0; p && k < s->c->pods.n && !taken; k++)
            taken = s->c->pods.v[k]->key == p->key;
        if (taken || !p || out.pvcs.n > max_pvcs) {
            ks_wl_objects_free(&out);
            if (!taken) return NULL;
            continue;
        }
        *npvcs = out.pvcs.n;
        for (uint32_t k = 0; k < out.pvcs.n; k++) pvcs[k] = out.pvcs.v[k];
        free(out.pvcs.v);
        free(out.pods.v);
        for (uint32_t k = 0; k < out.workloads.n; k++) KS_OBJECT_UNREF(out.workloads.v[k]);
        free(out.workloads.v);
        free(out.held.v);
        return p;
    }
    return NULL;
}

bool ks_capacity_workload(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_workload *w,
                          uint64_t seed, uint32_t max, ks_capacity_result *out, ks_pod **first, char **err) {
    *first = NULL;
    memset(out, 0, sizeof(*out));
    ks_wl_options o = {.seed = seed, .now = ks_sim_start_time(cluster) / 1000000000};
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = false;
    if (w->kind == KS_WORKLOAD_STATEFULSET) {
        sts_source s = {.w = w, .c = cluster, .o = o};
        ks_errors_init(&s.errs);
        /* the first replica, for the checks and the header */
        ks_wl_objects one;
        if (!ks_statefulset_ordinal(w, cluster, &o, 0, &one, &s.errs)) {
            *err = errs_text(&s.errs);
            ks_errors_free(&s.errs);
            return false;
        }
        *first = ks_pod_ref(one.pods.v[0]);
        ks_wl_objects_free(&one);
        ks_capacity_source src = {&s, sts_make};
        ok = ks_capacity_from(cluster, cfg, reg, *first, &src, max, out, err);
        if (ok && s.errs.n) {
            *err = errs_text(&s.errs);
            ok = false;
        }
        ks_errors_free(&s.errs);
        return ok;
    }
    /* one pod as the controller makes it (its ReplicaSet or Job joins the
     * cluster, for the spreading plugins), then copies of it */
    ks_workload copy = *w;
    copy.replicas = 1;
    ks_wl_objects made;
    if (!ks_workload_expand(&copy, cluster, &o, &made, &errs)) {
        *err = errs_text(&errs);
        ks_errors_free(&errs);
        return false;
    }
    ks_pod *p = made.pods.n ? made.pods.v[0] : made.held.n ? made.held.v[0] : NULL;
    if (!p) {
        *err = ks_xasprintf("%s %s/%s creates no pod (suspended, or a Job with nothing left to run)",
                            ks_workload_kind_lower(w->kind), ks_str(w->ns), ks_str(w->name));
    } else {
        for (uint32_t i = 0; i < made.workloads.n; i++) KS_VEC_PUSH(cluster->workloads, KS_OBJECT_REF(made.workloads.v[i]));
        *first = ks_pod_ref(p);
        ok = ks_capacity(cluster, cfg, reg, p, max, out, err);
    }
    ks_wl_objects_free(&made);
    ks_errors_free(&errs);
    return ok;
}

bool ks_capacity_daemonset(ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const ks_workload *w,
                           uint64_t seed, ks_sim_result *res, int32_t *targeted, char **err) {
    ks_wl_options o = {.seed = seed, .now = ks_sim_start_time(cluster) / 1000000000};
    ks_errors errs;
    ks_errors_init(&errs);
    ks_wl_objects made;
    if (!ks_workload_expand(w, cluster, &o, &made, &errs)) {
        *err = errs_text(&errs);
        ks_errors_free(&errs);
        return false;
    }
    ks_errors_free(&errs);
    *targeted = made.desired;
    /* only the DaemonSet's pods are the question: others pending in the
     * input run first, as they would */
    for (uint32_t i = 0; i < made.pods.n; i++) KS_VEC_PUSH(cluster->pods, ks_pod_ref(made.pods.v[i]));
    KS_VEC_PUSH(cluster->workloads, KS_OBJECT_REF((ks_workload *)w));
    ks_wl_objects_free(&made);
    ks_sim_options so = {.seed = seed, .percentage_of_nodes_to_score = -1};
    return ks_simulate(cluster, cfg, reg, &so, res, err);
}
