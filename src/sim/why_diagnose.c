/* `why`'s diagnosis: the reasons of a pod's last attempt counted per node
 * as kube-scheduler counts them, nodes with the same verdict collapsed
 * into classes with the numbers behind the verdict, and why preemption
 * did not help. */
#include "sim/why_internal.h"

#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The diagnosis: reasons as kube-scheduler counts them, node classes. */

static void add_reason(ks_why_pod *wp, const char *text) {
    for (uint32_t i = 0; i < wp->nreasons; i++) {
        if (strcmp(wp->reasons[i].text, text) == 0) {
            wp->reasons[i].nodes++;
            return;
        }
    }
    wp->reasons = ks_xrealloc(wp->reasons, (wp->nreasons + 1) * sizeof(ks_why_reason));
    wp->reasons[wp->nreasons++] = (ks_why_reason){ks_xstrdup(text), 1};
}

static int cmp_reason(const void *a, const void *b) {
    const ks_why_reason *x = a, *y = b;
    if (x->nodes != y->nodes) return x->nodes > y->nodes ? -1 : 1;
    return strcmp(x->text, y->text);
}

static void class_detail(ks_why_class *c, char *s) {
    c->details = ks_xrealloc(c->details, (c->ndetails + 1) * sizeof(char *));
    c->details[c->ndetails++] = s;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The numbers behind a class's verdict, over its nodes. */
static void explain_class(const ks_pod *p, const why_capture *cap, const ks_cluster *final, ks_why_class *c,
                          const why_node **members,
                          uint32_t nm) {
    const why_node *rep = members[0];
    for (uint32_t j = 0; j < c->nreasons; j++) {
        const char *rn = why_reason_resource(c->reasons[j]);
        if (rn) {
            ks_id res = ks_intern(rn);
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (uint32_t i = 0; i < nm; i++) {
                int64_t v = ks_resource_get(&members[i]->free, res);
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
            char need[32], a[32], b[32];
            why_format_amount(res, ks_resource_get(&p->requests, res), need, sizeof(need));
            if (lo < 0) lo = 0;
            if (hi < 0) hi = 0;
            why_format_amount(res, lo, a, sizeof(a));
            why_format_amount(res, hi, b, sizeof(b));
            if (lo == hi) class_detail(c, ks_xasprintf("%s: needs %s, has %s free", rn, need, a));
            else class_detail(c, ks_xasprintf("%s: needs %s, has %s to %s free", rn, need, a, b));
        } else if (strcmp(c->reasons[j], "Too many pods") == 0) {
            class_detail(c, ks_xasprintf("pods: %u running, %lld allowed", rep->npods,
                                         (long long)rep->node->allocatable.allowed_pods));
        }
    }
    if (!strcmp(c->plugin, "TaintToleration")) {
        const ks_taint *ut[8];
        uint32_t nu = why_untolerated(p, rep->node, ut, 8);
        for (uint32_t i = 0; i < nu; i++) {
            char tt[256];
            why_taint_text(ut[i], tt, sizeof(tt));
            class_detail(c, ks_xasprintf("taint %s is not tolerated by the pod", tt));
        }
    } else if (!strcmp(c->plugin, "NodeAffinity")) {
        for (uint32_t i = 0; i < p->node_selector.n; i++) {
            const ks_label *kv = &p->node_selector.kv[i];
            ks_id v;
            if (!ks_labels_get(&rep->node->labels, kv->key, &v))
                class_detail(c, ks_xasprintf("nodeSelector %s=%s: %s has no %s label", ks_str(kv->key), ks_str(kv->value),
                                             ks_str(rep->node->name), ks_str(kv->key)));
            else if (v != kv->value)
                class_detail(c, ks_xasprintf("nodeSelector %s=%s: %s has %s=%s", ks_str(kv->key), ks_str(kv->value),
                                             ks_str(rep->node->name), ks_str(kv->key), ks_str(v)));
        }
        if (p->has_required_node_affinity && p->required_node_affinity.nterms &&
            !ks_node_selector_matches(&p->required_node_affinity, &rep->node->labels, rep->node->name)) {
            /* each term's first requirement the node fails */
            for (uint32_t ti = 0; ti < p->required_node_affinity.nterms; ti++) {
                const ks_node_selector_term *term = &p->required_node_affinity.terms[ti];
                for (uint32_t j = 0; j < term->nexpr; j++) {
                    const ks_requirement *r = &term->exprs[j];
                    if (ks_requirement_matches(r, &rep->node->labels)) continue;
                    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
                    char vals[256];
                    size_t o = 0;
                    vals[0] = '\0';
                    for (uint32_t k = 0; k < r->nvalues && o < sizeof(vals); k++)
                        o += (size_t)snprintf(vals + o, sizeof(vals) - o, "%s%s", k ? "," : "", ks_str(r->values[k]));
                    if (r->op == KS_OP_GT || r->op == KS_OP_LT) snprintf(vals, sizeof(vals), "%lld", (long long)r->num);
                    ks_id v;
                    bool has = ks_labels_get(&rep->node->labels, r->key, &v);
                    class_detail(c, ks_xasprintf("required node affinity term %u: %s %s%s%s%s: %s %s%s%s", ti,
                                                 ks_str(r->key), ops[r->op], r->nvalues || r->op >= KS_OP_GT ? " [" : "",
                                                 vals, r->nvalues || r->op >= KS_OP_GT ? "]" : "",
                                                 ks_str(rep->node->name), has ? "has " : "has no ",
                                                 has ? ks_str(r->key) : ks_str(r->key), has ? "=" : " label"));
                    if (has) {
                        char *d = c->details[c->ndetails - 1];
                        c->details[c->ndetails - 1] = ks_xasprintf("%s%s", d, ks_str(v));
                        free(d);
                    }
                    break;
                }
            }
        }
    } else if (!strcmp(c->plugin, "NodeUnschedulable")) {
        class_detail(c, ks_xstrdup("spec.unschedulable is true (cordoned)"));
    } else if (!strcmp(c->plugin, "PodTopologySpread")) {
        for (uint32_t k = 0; k < p->nspread; k++) {
            const ks_spread_constraint *s = &p->spread[k];
            if (s->when_unsatisfiable != KS_DO_NOT_SCHEDULE) continue;
            ks_id v;
            if (!ks_labels_get(&rep->node->labels, s->topology_key, &v)) {
                class_detail(c, ks_xasprintf("%s: %s has no such label", ks_str(s->topology_key), ks_str(rep->node->name)));
                continue;
            }
            uint32_t here = 0, minc = UINT32_MAX;
            ks_id minv = 0;
            for (uint32_t d = 0; d < cap->ndom[k]; d++) {
                if (cap->dom[k][d].value == v) here = cap->dom[k][d].count;
                if (cap->dom[k][d].count < minc) minc = cap->dom[k][d].count, minv = cap->dom[k][d].value;
            }
            uint32_t self = ks_selector_matches(&s->selector, &p->labels) ? 1 : 0;
            class_detail(c, ks_xasprintf("%s: %s=%s has %u matching pod(s), the fewest (%s=%s) %u: skew would be "
                                         "%u, maxSkew %d",
                                         ks_str(s->topology_key), ks_str(s->topology_key), ks_str(v), here,
                                         ks_str(s->topology_key), ks_str(minv), minc == UINT32_MAX ? 0 : minc,
                                         here + self - (minc == UINT32_MAX ? 0 : minc), s->max_skew));
        }
    } else if (!strcmp(c->plugin, "NodePorts")) {
        for (uint32_t i = 0; i < final->pods.n; i++) {
            const ks_pod *q = final->pods.v[i];
            if (q->node_name != rep->node->name) continue;
            for (uint32_t a = 0; a < p->nhost_ports; a++)
                for (uint32_t b = 0; b < q->nhost_ports; b++)
                    if (p->host_ports[a].host_port == q->host_ports[b].host_port &&
                        p->host_ports[a].protocol == q->host_ports[b].protocol)
                        class_detail(c, ks_xasprintf("host port %d/%s is taken on %s by %s/%s", p->host_ports[a].host_port,
                                                     ks_str(p->host_ports[a].protocol), ks_str(rep->node->name),
                                                     ks_str(q->ns), ks_str(q->name)));
        }
    } else if (!strcmp(c->plugin, "InterPodAffinity")) {
        for (uint32_t i = 0; i < final->pods.n; i++) {
            const ks_pod *q = final->pods.v[i];
            if (!q->node_name || !q->nreq_anti) continue;
            const ks_node *qn = ks_cluster_node(final, q->node_name);
            for (uint32_t k = 0; qn && k < q->nreq_anti; k++) {
                const ks_pod_affinity_term *t = &q->req_anti[k];
                ks_id a, b;
                if (why_anti_matches(t, q, p) && ks_labels_get(&qn->labels, t->topology_key, &a) &&
                    ks_labels_get(&rep->node->labels, t->topology_key, &b) && a == b)
                    class_detail(c, ks_xasprintf("%s/%s on %s has a required anti-affinity term (topologyKey %s) "
                                                 "matching the pod",
                                                 ks_str(q->ns), ks_str(q->name), ks_str(q->node_name),
                                                 ks_str(t->topology_key)));
            }
        }
        for (uint32_t i = 0; i < p->nreq_affinity; i++)
            class_detail(c, ks_xasprintf("required pod affinity term %u: topologyKey %s", i,
                                         ks_str(p->req_affinity[i].topology_key)));
        for (uint32_t i = 0; i < p->nreq_anti; i++)
            class_detail(c, ks_xasprintf("required pod anti-affinity term %u: topologyKey %s", i,
                                         ks_str(p->req_anti[i].topology_key)));
    }
}

static int cmp_class(const void *a, const void *b) {
    const ks_why_class *x = a, *y = b;
    if (x->nnodes != y->nnodes) return x->nnodes > y->nnodes ? -1 : 1;
    return strcmp(x->nodes[0], y->nodes[0]);
}

void why_diagnose(const ks_pod *p, const why_capture *cap, const ks_cluster *final, ks_why_pod *wp) {
    if (cap->prefilter_plugin) {
        add_reason(wp, cap->prefilter_msg ? cap->prefilter_msg : cap->prefilter_plugin);
        wp->classes = ks_xcalloc(1, sizeof(ks_why_class));
        ks_why_class *c = &wp->classes[wp->nclasses++];
        c->plugin = ks_xstrdup(cap->prefilter_plugin);
        c->reasons = ks_xcalloc(1, sizeof(char *));
        c->reasons[c->nreasons++] = ks_xstrdup(cap->prefilter_msg ? cap->prefilter_msg : "");
        c->nodes = ks_xcalloc(1, sizeof(char *));
        c->nodes[c->nnodes++] = ks_xstrdup("(all nodes, at PreFilter)");
    }
    const why_node **members = ks_xcalloc(cap->nnodes + 1, sizeof(*members));
    bool *done = ks_xcalloc(cap->nnodes + 1, sizeof(bool));
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (!n->plugin) continue;
        for (uint32_t j = 0; j < n->nreasons; j++) add_reason(wp, n->reasons[j]);
    }
    for (uint32_t i = 0; i < cap->nnodes; i++) {
        const why_node *n = &cap->nodes[i];
        if (done[i] || !n->plugin) continue;
        uint32_t nm = 0;
        for (uint32_t k = i; k < cap->nnodes; k++) {
            const why_node *m = &cap->nodes[k];
            if (done[k] || !m->plugin || strcmp(m->plugin, n->plugin) || m->nreasons != n->nreasons) continue;
            bool same = true;
            for (uint32_t j = 0; same && j < n->nreasons; j++) same = !strcmp(m->reasons[j], n->reasons[j]);
            if (!same) continue;
            done[k] = true;
            members[nm++] = m;
        }
        wp->classes = ks_xrealloc(wp->classes, (wp->nclasses + 1) * sizeof(ks_why_class));
        ks_why_class *c = &wp->classes[wp->nclasses++];
        memset(c, 0, sizeof(*c));
        c->plugin = ks_xstrdup(n->plugin);
        c->nreasons = n->nreasons;
        c->reasons = ks_xcalloc(n->nreasons + 1, sizeof(char *));
        for (uint32_t j = 0; j < n->nreasons; j++) c->reasons[j] = ks_xstrdup(n->reasons[j]);
        c->nodes = ks_xcalloc(nm, sizeof(char *));
        for (uint32_t k = 0; k < nm; k++) c->nodes[c->nnodes++] = ks_xstrdup(ks_str(members[k]->node->name));
        why_sort(c->nodes, c->nnodes, sizeof(char *), cmp_str);
        /* The representative is the node closest to fitting. */
        for (uint32_t k = 1; k < nm; k++)
            if (why_cmp_rep(members[k], members[0], p) < 0) {
                const why_node *t = members[0];
                members[0] = members[k];
                members[k] = t;
            }
        /* Named after that node: it goes first, the others by name. */
        for (uint32_t k = 0; k < c->nnodes; k++) {
            if (strcmp(c->nodes[k], ks_str(members[0]->node->name)) == 0) {
                char *t = c->nodes[k];
                memmove(c->nodes + 1, c->nodes, k * sizeof(char *));
                c->nodes[0] = t;
                break;
            }
        }
        explain_class(p, cap, final, c, members, nm);
    }
    free(members);
    free(done);
    if (wp->nclasses > 1)
        why_sort(wp->classes + (cap->prefilter_plugin ? 1 : 0), wp->nclasses - (cap->prefilter_plugin ? 1 : 0),
               sizeof(ks_why_class), cmp_class);
    why_sort(wp->reasons, wp->nreasons, sizeof(ks_why_reason), cmp_reason);
    /* The root cause: the distinct reasons, sorted. */
    ks_strbuf b;
    ks_sb_init(&b);
    char **texts = ks_xcalloc(wp->nreasons + 1, sizeof(char *));
    for (uint32_t i = 0; i < wp->nreasons; i++) texts[i] = wp->reasons[i].text;
    why_sort(texts, wp->nreasons, sizeof(char *), cmp_str);
    for (uint32_t i = 0; i < wp->nreasons; i++) ks_sb_printf(&b, "%s%s", i ? "; " : "", texts[i]);
    free(texts);
    wp->cause = ks_xstrdup(b.len ? ks_sb_str(&b) : "unknown");
    ks_sb_free(&b);
}

/* Why preemption did not make room, in words. */
char *why_preemption_words(const ks_pod *p, const why_capture *cap) {
    if (p->preemption_policy == KS_PREEMPT_NEVER)
        return ks_xasprintf("the pod's preemptionPolicy is Never%s%s%s: it may not evict anything",
                            p->priority_class ? " (priorityClassName " : "",
                            p->priority_class ? ks_str(p->priority_class) : "", p->priority_class ? ")" : "");
    if (cap->postfilter_msg)
        return ks_xasprintf("it cannot help (it may only evict pods of priority below %d, on a node where that makes "
                            "room): %s", ks_pod_priority(p), cap->postfilter_msg);
    return NULL;
}
