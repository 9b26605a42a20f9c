#include "sim/compare.h"

#include "api/resource.h"
#include "framework/nodeinfo.h"
#include "framework/status.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* qsort, which must not be given a NULL base even for no elements. */
static void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    if (n > 1) qsort(base, n, size, cmp);
}

/* The attempt that bound the pod: the last one with a selected node. */
static const ks_sim_attempt *binding_attempt(const ks_sim_pod *sp) {
    for (uint32_t i = sp->nexplain; i-- > 0;)
        if (sp->explain[i].selected_node) return &sp->explain[i];
    return NULL;
}

static int scored_index(const ks_sim_attempt *a, const char *node) {
    ks_id id = ks_intern_find(node);
    for (uint32_t i = 0; id && i < a->nscored; i++)
        if (a->scored_nodes[i] == id) return (int)i;
    return -1;
}

static int cmp_delta(const void *x, const void *y) {
    const ks_compare_delta *a = x, *b = y;
    int64_t ma = llabs(a->delta), mb = llabs(b->delta);
    if (ma != mb) return ma > mb ? -1 : 1;
    return strcmp(a->plugin, b->plugin);
}

/* Why this side chose `own` over `other`: per-plugin weighted deltas. */
static void side_why(const ks_sim_pod *sp, const char *own, const char *other, ks_compare_side_why *w) {
    const ks_sim_attempt *a = binding_attempt(sp);
    if (!a) {
        w->other_verdict = ks_xstrdup("no attempt recorded");
        return;
    }
    int io = scored_index(a, own), ix = scored_index(a, other);
    if (io < 0 || ix < 0) {
        ks_id id = ks_intern_find(other);
        for (uint32_t i = 0; i < a->nverdicts && !w->other_verdict; i++) {
            const ks_sim_verdict *v = &a->verdicts[i];
            if (v->node != id) continue;
            if (v->code == KS_SUCCESS) {
                w->other_verdict = ks_xstrdup("passed Filter but was not scored (a single feasible node, or sampling)");
            } else {
                size_t n = strlen(v->plugin) + 8;
                for (uint32_t j = 0; j < v->nreasons; j++) n += strlen(v->reasons[j]) + 2;
                char *s = ks_xcalloc(n, 1);
                strcpy(s, v->plugin);
                strcat(s, ": ");
                for (uint32_t j = 0; j < v->nreasons; j++) {
                    if (j) strcat(s, ", ");
                    strcat(s, v->reasons[j]);
                }
                w->other_verdict = s;
            }
        }
        if (!w->other_verdict) w->other_verdict = ks_xstrdup("not evaluated (percentageOfNodesToScore)");
        return;
    }
    w->other_scored = true;
    w->total = a->total[io] - a->total[ix];
    w->deltas = ks_xcalloc(a->nplugins ? a->nplugins : 1, sizeof(ks_compare_delta));
    for (uint32_t j = 0; j < a->nplugins; j++) {
        int64_t d = a->weighted[(size_t)io * a->nplugins + j] - a->weighted[(size_t)ix * a->nplugins + j];
        if (d) w->deltas[w->ndeltas++] = (ks_compare_delta){a->score_plugins[j], d};
    }
    sort_n(w->deltas, w->ndeltas, sizeof(ks_compare_delta), cmp_delta);
}

static void fill_pod(ks_compare_pod *cp, const ks_sim_pod *s[2]) {
    char buf[512];
    cp->pod = ks_xstrdup(ks_pod_fullname(s[0]->input, buf, sizeof(buf)));
    for (int k = 0; k < 2; k++) {
        cp->state[k] = s[k]->state;
        cp->node[k] = s[k]->node ? ks_xstrdup(s[k]->node) : NULL;
        cp->message[k] = s[k]->message && s[k]->state != KS_SIM_SCHEDULED ? ks_xstrdup(s[k]->message) : NULL;
    }
}

/* Allocation per node of each resource some node offers. */
static void aggregate(const ks_sim_result *r, int k, ks_compare_result *out) {
    const ks_cluster *c = r->cluster;
    uint32_t n = c->nodes.n;
    ks_resource *req = ks_xcalloc(n ? n : 1, sizeof(ks_resource));
    uint32_t *pods = ks_xcalloc(n ? n : 1, sizeof(uint32_t));
    ks_map at;
    ks_map_init(&at);
    for (uint32_t i = 0; i < n; i++) ks_map_put(&at, (uint64_t)c->nodes.v[i]->name + 1, (void *)(uintptr_t)(i + 1));
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (!p->node_name || p->phase == KS_PHASE_SUCCEEDED || p->phase == KS_PHASE_FAILED) continue;
        uintptr_t j = (uintptr_t)ks_map_get(&at, (uint64_t)p->node_name + 1);
        if (!j) continue;
        ks_resource_add(&req[j - 1], NULL, &p->requests);
        pods[j - 1]++;
    }
    for (uint32_t i = 0; i < n; i++) out->side[k].nodes_used += pods[i] > 0;
    /* cpu, memory, then every scalar resource a node offers */
    ks_id names[64];
    uint32_t nn = 0;
    names[nn++] = KS_RES_CPU;
    names[nn++] = KS_RES_MEMORY;
    for (uint32_t i = 0; i < n; i++) {
        const ks_resource *a = &c->nodes.v[i]->allocatable;
        for (uint32_t s = 0; s < a->nscalar && nn < 64; s++) {
            bool seen = false;
            for (uint32_t q = 0; q < nn; q++) seen |= names[q] == a->scalars[s].name;
            if (!seen) names[nn++] = a->scalars[s].name;
        }
    }
    for (uint32_t q = 0; q < nn; q++) {
        double sum = 0, sum2 = 0;
        uint32_t cnt = 0;
        for (uint32_t i = 0; i < n; i++) {
            int64_t al = ks_resource_get(&c->nodes.v[i]->allocatable, names[q]);
            if (al <= 0) continue;
            double f = 100.0 * (double)ks_resource_get(&req[i], names[q]) / (double)al;
            sum += f;
            sum2 += f * f;
            cnt++;
        }
        ks_compare_resource *cr = NULL;
        for (uint32_t j = 0; j < out->nresources && !cr; j++)
            if (!strcmp(out->resources[j].name, ks_str(names[q]))) cr = &out->resources[j];
        if (!cr) {
            out->resources = ks_xrealloc(out->resources, (out->nresources + 1) * sizeof(ks_compare_resource));
            cr = &out->resources[out->nresources++];
            memset(cr, 0, sizeof(*cr));
            cr->name = ks_xstrdup(ks_str(names[q]));
        }
        if (cnt) {
            double mean = sum / cnt;
            cr->mean[k] = mean;
            cr->sd[k] = sqrt(fmax(0, sum2 / cnt - mean * mean));
        }
    }
    for (uint32_t i = 0; i < n; i++) ks_resource_fini(&req[i]);
    free(req);
    free(pods);
    ks_map_free(&at);
}

bool ks_compare(const ks_cluster *cluster, const ks_config *a, const char *label_a, const ks_config *b,
                const char *label_b, ks_registry *reg, const ks_sim_options *opts, ks_compare_result *out,
                char **err) {
    memset(out, 0, sizeof(*out));
    const ks_config *cfg[2] = {a, b};
    const char *label[2] = {label_a, label_b};
    ks_cluster *c[2] = {NULL, NULL};
    ks_sim_result res[2];
    memset(res, 0, sizeof(res));
    bool ok = false;
    int ran = 0;
    ks_sim_options so = *opts;
    so.explain = true;
    for (int k = 0; k < 2; k++) {
        c[k] = ks_sim_clone_cluster(cluster);
        if (!ks_simulate(c[k], cfg[k], reg, &so, &res[k], err)) goto out;
        ran = k + 1;
        ks_compare_side *sd = &out->side[k];
        sd->label = ks_xstrdup(label[k]);
        sd->attempts = res[k].attempts;
        sd->preempted = res[k].nvictims;
        for (uint32_t i = 0; i < res[k].npods; i++) {
            ks_sim_state st = res[k].pods[i].state;
            if (st == KS_SIM_SCHEDULED) sd->scheduled++;
            else if (st == KS_SIM_GATED) sd->gated++;
            else sd->unschedulable++;
        }
        aggregate(&res[k], k, out);
    }
    out->npending = res[0].npods;
    /* Pair the pods by key (a pod pending under one configuration is
     * pending under the other: same input, same schedulerName rule). */
    ks_map idx;
    ks_map_init(&idx);
    for (uint32_t i = 0; i < res[1].npods; i++) ks_map_put(&idx, res[1].pods[i].input->key, (void *)(uintptr_t)(i + 1));
    for (uint32_t i = 0; i < res[0].npods; i++) {
        uintptr_t j = (uintptr_t)ks_map_get(&idx, res[0].pods[i].input->key);
        if (!j) continue;
        const ks_sim_pod *s[2] = {&res[0].pods[i], &res[1].pods[j - 1]};
        bool in0 = s[0]->state == KS_SIM_SCHEDULED, in1 = s[1]->state == KS_SIM_SCHEDULED;
        if (in0 && in1 && strcmp(s[0]->node, s[1]->node) != 0) {
            out->moved = ks_xrealloc(out->moved, (out->nmoved + 1) * sizeof(ks_compare_pod));
            ks_compare_pod *cp = &out->moved[out->nmoved++];
            memset(cp, 0, sizeof(*cp));
            fill_pod(cp, s);
            side_why(s[0], s[0]->node, s[1]->node, &cp->why[0]);
            side_why(s[1], s[1]->node, s[0]->node, &cp->why[1]);
        } else if (in0 != in1) {
            out->one_side = ks_xrealloc(out->one_side, (out->none_side + 1) * sizeof(ks_compare_pod));
            ks_compare_pod *cp = &out->one_side[out->none_side++];
            memset(cp, 0, sizeof(*cp));
            fill_pod(cp, s);
        }
    }
    ks_map_free(&idx);
    ok = true;
out:
    for (int k = 0; k < 2; k++) {
        if (k < ran) ks_sim_result_free(&res[k]);
        if (c[k]) ks_cluster_free(c[k]);
    }
    if (!ok) ks_compare_result_free(out);
    return ok;
}

static void free_pod(ks_compare_pod *p) {
    free(p->pod);
    for (int k = 0; k < 2; k++) {
        free(p->node[k]);
        free(p->message[k]);
        free(p->why[k].other_verdict);
        free(p->why[k].deltas);
    }
}

void ks_compare_result_free(ks_compare_result *r) {
    for (int k = 0; k < 2; k++) free(r->side[k].label);
    for (uint32_t i = 0; i < r->nmoved; i++) free_pod(&r->moved[i]);
    free(r->moved);
    for (uint32_t i = 0; i < r->none_side; i++) free_pod(&r->one_side[i]);
    free(r->one_side);
    for (uint32_t i = 0; i < r->nresources; i++) free(r->resources[i].name);
    free(r->resources);
    memset(r, 0, sizeof(*r));
}

/* ---- runs driven by the caller (replays) ---------------------------------- */

typedef struct coll_pod {
    char *name;
    bool seen[2], bound[2], preempted[2];
    char *node[2];
    uint64_t attempts[2];
    ks_compare_side_why why[2];
    bool captured[2];
} coll_pod;

struct ks_compare_collector {
    ks_map index;        /* name hash -> index + 1 (collisions: linear probe on name) */
    coll_pod *pods;
    uint32_t n, cap;
    int capture;         /* side whose deltas are captured now, -1 none */
    bool records;        /* records are taken (not in a repeated run) */
};

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ? h : 1;
}

static coll_pod *coll_find(ks_compare_collector *c, const char *name, bool add) {
    uint64_t h = name_hash(name);
    for (;; h++) {
        uintptr_t i = (uintptr_t)ks_map_get(&c->index, h);
        if (!i) break;
        if (!strcmp(c->pods[i - 1].name, name)) return &c->pods[i - 1];
    }
    if (!add) return NULL;
    KS_GROW(c->pods, c->cap, (size_t)c->n + 1);
    coll_pod *p = &c->pods[c->n++];
    memset(p, 0, sizeof(*p));
    p->name = ks_xstrdup(name);
    ks_map_put(&c->index, h, (void *)(uintptr_t)c->n);
    return p;
}

ks_compare_collector *ks_compare_collector_new(void) {
    ks_compare_collector *c = ks_xcalloc(1, sizeof(*c));
    ks_map_init(&c->index);
    c->capture = -1;
    c->records = true;
    return c;
}

static void why_clear(ks_compare_side_why *w) {
    free(w->other_verdict);
    free(w->deltas);
    memset(w, 0, sizeof(*w));
}

void ks_compare_collector_free(ks_compare_collector *c) {
    if (!c) return;
    for (uint32_t i = 0; i < c->n; i++) {
        free(c->pods[i].name);
        for (int k = 0; k < 2; k++) {
            free(c->pods[i].node[k]);
            why_clear(&c->pods[i].why[k]);
        }
    }
    free(c->pods);
    ks_map_free(&c->index);
    free(c);
}

void ks_compare_collect_record(ks_compare_collector *c, int side, const char *pod, const char *node, bool preempted,
                               uint64_t attempts) {
    if (!c->records) return; /* a repeated run: its outcomes are known */
    coll_pod *p = coll_find(c, pod, true);
    p->seen[side] = true;
    p->bound[side] = node != NULL;
    p->preempted[side] = preempted;
    p->attempts[side] = attempts;
    free(p->node[side]);
    p->node[side] = node ? ks_xstrdup(node) : NULL;
}

void ks_compare_collector_capture(ks_compare_collector *c, int side, bool records) {
    c->capture = side;
    c->records = records;
}

void ks_compare_collect_attempt(ks_compare_collector *c, const ks_attempt_record *rec) {
    if (c->capture < 0 || rec->result != KS_ATTEMPT_SCHEDULED || !rec->chosen_node) return;
    char buf[512];
    coll_pod *p = coll_find(c, ks_pod_fullname(rec->pod, buf, sizeof(buf)), false);
    int k = c->capture;
    if (!p || !p->node[1 - k] || !strcmp(p->node[1 - k], rec->chosen_node)) return;
    const char *other = p->node[1 - k];
    ks_compare_side_why *w = &p->why[k];
    why_clear(w);
    p->captured[k] = true;
    ks_id oid = ks_intern_find(other), cid = ks_intern_find(rec->chosen_node);
    const ks_score_result *sr = rec->scores;
    int io = -1, ix = -1;
    for (size_t i = 0; sr && i < sr->nnodes; i++) {
        if (sr->nodes[i]->name == cid) io = (int)i;
        if (sr->nodes[i]->name == oid) ix = (int)i;
    }
    if (io >= 0 && ix >= 0) {
        w->other_scored = true;
        w->total = sr->total[io] - sr->total[ix];
        w->deltas = ks_xcalloc(sr->nplugins ? sr->nplugins : 1, sizeof(ks_compare_delta));
        for (size_t j = 0; j < sr->nplugins; j++) {
            int64_t d = sr->weighted[(size_t)io * sr->nplugins + j] - sr->weighted[(size_t)ix * sr->nplugins + j];
            if (d) w->deltas[w->ndeltas++] = (ks_compare_delta){sr->plugins[j], d};
        }
        sort_n(w->deltas, w->ndeltas, sizeof(ks_compare_delta), cmp_delta);
        return;
    }
    for (size_t i = 0; i < rec->nevaluated && !w->other_verdict; i++) {
        if (rec->evaluated[i]->name != oid) continue;
        const ks_status *st = rec->verdicts[i];
        if (!st || ks_status_code(st) == KS_SUCCESS) {
            w->other_verdict = ks_xstrdup("passed Filter but was not scored (a single feasible node, or sampling)");
        } else {
            char *m = ks_status_message(st);
            w->other_verdict = ks_xasprintf("%s: %s", ks_status_plugin(st), m);
            free(m);
        }
    }
    if (!w->other_verdict)
        w->other_verdict = ks_xstrdup("not in the cluster at that time, or not evaluated (percentageOfNodesToScore)");
}

void ks_compare_collector_result(const ks_compare_collector *c, const char *label_a, const char *label_b,
                                 ks_compare_result *out) {
    memset(out, 0, sizeof(*out));
    out->side[0].label = ks_xstrdup(label_a);
    out->side[1].label = ks_xstrdup(label_b);
    for (uint32_t i = 0; i < c->n; i++) {
        const coll_pod *p = &c->pods[i];
        out->npending++;
        for (int k = 0; k < 2; k++) {
            ks_compare_side *sd = &out->side[k];
            if (p->bound[k]) sd->scheduled++;
            else sd->unschedulable++;
            if (p->preempted[k]) sd->preempted++;
            sd->attempts += p->attempts[k];
        }
        bool moved = p->bound[0] && p->bound[1] && strcmp(p->node[0], p->node[1]) != 0;
        if (!moved && p->bound[0] == p->bound[1]) continue;
        ks_compare_pod *cp;
        if (moved) {
            out->moved = ks_xrealloc(out->moved, (out->nmoved + 1) * sizeof(ks_compare_pod));
            cp = &out->moved[out->nmoved++];
        } else {
            out->one_side = ks_xrealloc(out->one_side, (out->none_side + 1) * sizeof(ks_compare_pod));
            cp = &out->one_side[out->none_side++];
        }
        memset(cp, 0, sizeof(*cp));
        cp->pod = ks_xstrdup(p->name);
        for (int k = 0; k < 2; k++) {
            cp->state[k] = p->bound[k] ? KS_SIM_SCHEDULED : p->preempted[k] ? KS_SIM_PREEMPTED : KS_SIM_UNSCHEDULABLE;
            cp->node[k] = p->node[k] ? ks_xstrdup(p->node[k]) : NULL;
            if (!moved) continue;
            const ks_compare_side_why *w = &p->why[k];
            cp->why[k].other_scored = w->other_scored;
            cp->why[k].total = w->total;
            cp->why[k].other_verdict = w->other_verdict ? ks_xstrdup(w->other_verdict)
                                       : w->other_scored ? NULL
                                                         : ks_xstrdup("no binding attempt seen");
            if (w->ndeltas) {
                cp->why[k].deltas = ks_xcalloc(w->ndeltas, sizeof(ks_compare_delta));
                memcpy(cp->why[k].deltas, w->deltas, w->ndeltas * sizeof(ks_compare_delta));
                cp->why[k].ndeltas = w->ndeltas;
            }
        }
    }
    /* nodes used: distinct nodes a pod ran on, per side */
    for (int k = 0; k < 2; k++) {
        ks_map seen;
        ks_map_init(&seen);
        for (uint32_t i = 0; i < c->n; i++) {
            const char *nd = c->pods[i].node[k];
            if (!nd) continue;
            uint64_t h = name_hash(nd);
            if (!ks_map_get(&seen, h)) {
                ks_map_put(&seen, h, (void *)1);
                out->side[k].nodes_used++;
            }
        }
        ks_map_free(&seen);
    }
}
