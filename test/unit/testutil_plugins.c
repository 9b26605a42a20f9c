#include "testutil_plugins.h"

#include "codec/tree.h"
#include "util/arena.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grow an arena array by one element, copying the old contents. */
#define ARENA_PUSH(arena, arr, n)                                              \
    do {                                                                       \
        void *np_ = ks_arena_calloc((arena), (size_t)(n) + 1, sizeof(*(arr))); \
        if (n) memcpy(np_, (arr), (size_t)(n) * sizeof(*(arr)));               \
        (arr) = np_;                                                           \
        (n)++;                                                                 \
    } while (0)

/* ---- nodes ---------------------------------------------------------------- */

ks_node *tp_node(const char *name) {
    ks_node *n = ks_node_new();
    n->name = ks_intern(name);
    n->allocatable.allowed_pods = 110;
    n->capacity = n->allocatable;
    return n;
}

void tp_node_alloc(ks_node *n, int64_t milli_cpu, int64_t memory, int64_t pods) {
    n->allocatable.milli_cpu = milli_cpu;
    n->allocatable.memory = memory;
    n->allocatable.allowed_pods = pods;
    n->capacity = n->allocatable;
}

void tp_node_ephemeral(ks_node *n, int64_t bytes) { n->allocatable.ephemeral_storage = bytes; }

void tp_node_scalar(ks_node *n, const char *resource, int64_t v) {
    ks_resource_set(&n->allocatable, n->arena, ks_intern(resource), v);
}

void tp_node_label(ks_node *n, const char *key, const char *value) {
    ARENA_PUSH(n->arena, n->labels.kv, n->labels.n);
    n->labels.kv[n->labels.n - 1] = (ks_label){ks_intern(key), ks_intern(value)};
    ks_labels_sort(&n->labels);
}

void tp_node_taint(ks_node *n, const char *key, const char *value, ks_effect effect) {
    ARENA_PUSH(n->arena, n->taints, n->ntaints);
    n->taints[n->ntaints - 1] = (ks_taint){ks_intern(key), ks_intern(value), effect};
}

void tp_node_image(ks_node *n, int64_t size, const char *name) {
    ARENA_PUSH(n->arena, n->images, n->nimages);
    ks_node_image *im = &n->images[n->nimages - 1];
    im->size_bytes = size;
    im->nnames = 1;
    im->names = ks_arena_calloc(n->arena, 1, sizeof(ks_id));
    im->names[0] = ks_intern(name);
}

/* ---- pods ----------------------------------------------------------------- */

ks_pod *tp_pod(const char *name) {
    ks_pod *p = ks_pod_new();
    p->ns = ks_intern("default");
    p->name = ks_intern(name);
    p->uid = ks_arena_printf(p->arena, "uid-%s", name);
    p->key = ks_pod_key(p->ns, p->name);
    p->scheduler_name = ks_intern("default-scheduler");
    return p;
}

static void set_requests(ks_container *c, int64_t milli_cpu, int64_t memory) {
    if (milli_cpu != TP_NONE) {
        c->requests.milli_cpu = milli_cpu;
        c->has_cpu_request = true;
    }
    if (memory != TP_NONE) {
        c->requests.memory = memory;
        c->has_memory_request = true;
    }
    c->image = "busybox";
    c->image_id = ks_intern("busybox:latest");
}

ks_container *tp_container(ks_pod *p, int64_t milli_cpu, int64_t memory) {
    ARENA_PUSH(p->arena, p->containers, p->ncontainers);
    ks_container *c = &p->containers[p->ncontainers - 1];
    c->name = ks_arena_printf(p->arena, "c%u", p->ncontainers);
    set_requests(c, milli_cpu, memory);
    return c;
}

ks_container *tp_init_container(ks_pod *p, int64_t milli_cpu, int64_t memory, bool sidecar) {
    ARENA_PUSH(p->arena, p->init_containers, p->ninit);
    ks_container *c = &p->init_containers[p->ninit - 1];
    c->name = ks_arena_printf(p->arena, "i%u", p->ninit);
    set_requests(c, milli_cpu, memory);
    c->sidecar = sidecar;
    return c;
}

void tp_container_scalar(ks_pod *p, ks_container *c, const char *resource, int64_t v) {
    ks_resource_set(&c->requests, p->arena, ks_intern(resource), v);
}

void tp_container_ephemeral(ks_container *c, int64_t bytes) { c->requests.ephemeral_storage = bytes; }

/* What upstream ImageLocality compares: ":latest" appended when the name
 * has no tag. */
void tp_container_image(ks_container *c, const char *image) {
    c->image = image;
    const char *colon = strrchr(image, ':'), *slash = strrchr(image, '/');
    char buf[512];
    if (!colon || (slash && colon < slash)) snprintf(buf, sizeof(buf), "%s:latest", image);
    else snprintf(buf, sizeof(buf), "%s", image);
    c->image_id = ks_intern(buf);
}

void tp_container_port(ks_pod *p, ks_container *c, int32_t host_port, const char *protocol,
                       const char *host_ip) {
    ks_container_port port = {
        .container_port = host_port ? host_port : 80,
        .host_port = host_port,
        .protocol = ks_intern(protocol ? protocol : "TCP"),
        .host_ip = host_ip ? ks_intern(host_ip) : KS_ID_NONE,
    };
    ARENA_PUSH(p->arena, c->ports, c->nports);
    c->ports[c->nports - 1] = port;
    /* The flattened list NodeInfo accounts: containers and sidecars. */
    bool counted = true;
    for (uint32_t i = 0; i < p->ninit; i++)
        if (&p->init_containers[i] == c && !c->sidecar) counted = false;
    if (counted && host_port > 0) {
        ARENA_PUSH(p->arena, p->host_ports, p->nhost_ports);
        p->host_ports[p->nhost_ports - 1] = port;
    }
}

void tp_pod_overhead(ks_pod *p, int64_t milli_cpu, int64_t memory) {
    ks_pod_level *lv = ks_pod_level_make(p);
    lv->has_overhead = true;
    lv->overhead.milli_cpu = milli_cpu;
    lv->overhead.memory = memory;
}

void tp_pod_priority(ks_pod *p, int32_t prio) {
    p->has_priority = true;
    p->priority = prio;
}

void tp_pod_node_name(ks_pod *p, const char *node) { p->node_name = ks_intern(node); }

void tp_pod_gate(ks_pod *p, const char *gate) {
    ARENA_PUSH(p->arena, p->scheduling_gates, p->ngates);
    p->scheduling_gates[p->ngates - 1] = ks_intern(gate);
}

void tp_pod_toleration(ks_pod *p, const char *key, ks_tol_op op, const char *value,
                       ks_effect effect) {
    ARENA_PUSH(p->arena, p->tolerations, p->ntolerations);
    p->tolerations[p->ntolerations - 1] = (ks_toleration){
        .key = ks_intern(key), .value = ks_intern(value ? value : ""), .op = op, .effect = effect};
}

void tp_pod_node_selector(ks_pod *p, const char *key, const char *value) {
    ARENA_PUSH(p->arena, p->node_selector.kv, p->node_selector.n);
    p->node_selector.kv[p->node_selector.n - 1] = (ks_label){ks_intern(key), ks_intern(value)};
    ks_labels_sort(&p->node_selector);
}

void tp_pod_required_affinity(ks_pod *p) {
    p->has_node_affinity = true;
    p->has_required_node_affinity = true;
}

ks_node_selector_term *tp_pod_required_term(ks_pod *p) {
    tp_pod_required_affinity(p);
    ks_node_selector *s = &p->required_node_affinity;
    ARENA_PUSH(p->arena, s->terms, s->nterms);
    return &s->terms[s->nterms - 1];
}

ks_node_selector_term *tp_pod_preferred_term(ks_pod *p, int32_t weight) {
    p->has_node_affinity = true;
    ARENA_PUSH(p->arena, p->preferred_node, p->npreferred_node);
    ks_preferred_node_term *t = &p->preferred_node[p->npreferred_node - 1];
    t->weight = weight;
    return &t->term;
}

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

/* Requirement arrays are malloc'd and remembered until tp_reset(). */
static void **tracked;
static size_t ntracked, tracked_cap;

static void *track(void *p) {
    KS_GROW(tracked, tracked_cap, ntracked + 1);
    tracked[ntracked++] = p;
    return p;
}

void tp_reset(void) {
    for (size_t i = 0; i < ntracked; i++) free(tracked[i]);
    free(tracked);
    tracked = NULL;
    ntracked = tracked_cap = 0;
}

static void fill_requirement(ks_requirement *r, const char *key, ks_op op, va_list ap) {
    memset(r, 0, sizeof(*r));
    r->key = ks_intern(key);
    r->op = op;
    const char *v;
    ks_id vals[32];
    while ((v = va_arg(ap, const char *)) && r->nvalues < 32) {
        vals[r->nvalues++] = ks_intern(v);
        if (op == KS_OP_GT || op == KS_OP_LT) r->num = strtoll(v, NULL, 10);
    }
    qsort(vals, r->nvalues, sizeof(ks_id), cmp_id);
    r->values = track(ks_xmalloc((r->nvalues + 1) * sizeof(ks_id)));
    memcpy(r->values, vals, r->nvalues * sizeof(ks_id));
}

/* Terms are copied on growth: keep each generation of the array alive. */
static ks_requirement *grow_reqs(ks_requirement *old, uint32_t n) {
    ks_requirement *r = track(ks_xcalloc(n + 1, sizeof(*r)));
    if (n) memcpy(r, old, n * sizeof(*r));
    return r;
}

void tp_term_expr(ks_node_selector_term *t, const char *key, ks_op op, ...) {
    t->exprs = grow_reqs(t->exprs, t->nexpr);
    va_list ap;
    va_start(ap, op);
    fill_requirement(&t->exprs[t->nexpr++], key, op, ap);
    va_end(ap);
}

void tp_term_field(ks_node_selector_term *t, ks_op op, ...) {
    t->fields = grow_reqs(t->fields, t->nfields);
    va_list ap;
    va_start(ap, op);
    fill_requirement(&t->fields[t->nfields++], "metadata.name", op, ap);
    va_end(ap);
}

ks_pod *tp_pod_done(ks_pod *p) {
    ks_pod_compute_requests(p);
    return p;
}

ks_node_info *tp_node_info(ks_node *n, ks_pod *const *pods, size_t npods) {
    ks_node_info *ni = ks_node_info_new();
    ks_node_info_set_node(ni, n);
    for (size_t i = 0; i < npods; i++) {
        if (pods[i]->node_name == KS_ID_NONE) pods[i]->node_name = n->name;
        ks_node_info_add_pod(ni, pods[i]);
    }
    return ni;
}

/* ---- running a plugin ----------------------------------------------------- */

tp_plugin tp_create(const ks_plugin_ops *ops, const ks_args *args, ks_handle *h) {
    tp_plugin p = {.ops = ops};
    if (ops->create) {
        char *err = NULL;
        p.self = ops->create(args, h, &err);
        if (!p.self) {
            fprintf(stderr, "create %s: %s\n", ops->name, err ? err : "(no error)");
            abort();
        }
    }
    return p;
}

char *tp_create_error(const ks_plugin_ops *ops, const ks_args *args) {
    char *err = NULL;
    void *self = ops->create(args, NULL, &err);
    if (self) {
        if (ops->destroy) ops->destroy(self);
        return NULL;
    }
    return err ? err : ks_xstrdup("(refused without an error)");
}

void tp_free_infos(ks_node_info **nis, size_t n) {
    for (size_t i = 0; i < n; i++) ks_node_info_free(nis[i]);
}

void tp_free_verdicts(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
}

void tp_destroy(tp_plugin *p) {
    if (p->ops->destroy && p->self) p->ops->destroy(p->self);
    p->self = NULL;
}

const char *tp_status_str(ks_status *s) {
    static char buf[4096];
    if (!s) return "Success";
    char *m = ks_status_message(s);
    if (*m) snprintf(buf, sizeof(buf), "%s: %s", ks_code_name(ks_status_code(s)), m);
    else snprintf(buf, sizeof(buf), "%s", ks_code_name(ks_status_code(s)));
    free(m);
    ks_status_free(s);
    return buf;
}

void tp_filter_all(tp_plugin *p, const ks_pod *pod, ks_node_info **nodes, size_t n,
                   char **verdicts) {
    ks_cycle_state *st = ks_cycle_state_new();
    bool skip = false;
    if (p->ops->pre_filter) {
        ks_pre_filter_result *r = NULL;
        ks_status *s = p->ops->pre_filter(p->self, st, pod, (const ks_node_info *const *)nodes, n, &r);
        if (ks_status_code(s) == KS_SKIP) {
            skip = true;
            ks_status_free(s);
        } else if (s) {
            const char *v = tp_status_str(s);
            for (size_t i = 0; i < n; i++) verdicts[i] = ks_xstrdup(v);
            ks_cycle_state_free(st);
            return;
        }
    }
    for (size_t i = 0; i < n; i++)
        verdicts[i] = ks_xstrdup(skip ? "Success" : tp_status_str(p->ops->filter(p->self, st, pod, nodes[i])));
    ks_cycle_state_free(st);
}

const char *tp_score_all(tp_plugin *p, const ks_pod *pod, ks_node_info **nodes, size_t n,
                         int64_t *scores) {
    static char ret[256];
    ks_cycle_state *st = ks_cycle_state_new();
    snprintf(ret, sizeof(ret), "Success");
    if (p->ops->pre_score) {
        ks_status *s = p->ops->pre_score(p->self, st, pod, (const ks_node_info *const *)nodes, n);
        if (s) {
            snprintf(ret, sizeof(ret), "%s", tp_status_str(s));
            ks_cycle_state_free(st);
            return ret;
        }
    }
    ks_node_score *ns = ks_xcalloc(n ? n : 1, sizeof(*ns));
    for (size_t i = 0; i < n; i++) {
        ns[i].node = nodes[i];
        ks_status *s = p->ops->score(p->self, st, pod, nodes[i], &ns[i].score);
        if (s) {
            snprintf(ret, sizeof(ret), "score: %s", tp_status_str(s));
            break;
        }
    }
    if (p->ops->normalize_score) {
        ks_status *s = p->ops->normalize_score(p->self, st, pod, ns, n);
        if (s) snprintf(ret, sizeof(ret), "normalize: %s", tp_status_str(s));
    }
    for (size_t i = 0; i < n; i++) scores[i] = ns[i].score;
    free(ns);
    ks_cycle_state_free(st);
    return ret;
}

const ks_args *tp_args(const char *yaml) {
    static ks_arena *a;
    if (!a) a = ks_arena_new(4096);
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    char *err = NULL;
    if (!kt_parse(a, "args", yaml, strlen(yaml), &docs, &ndocs, &err) || ndocs != 1) {
        fprintf(stderr, "tp_args: %s\n", err ? err : "want one document");
        abort();
    }
    return docs[0];
}

const char *tp_filter1(const ks_plugin_ops *ops, const ks_pod *pod, ks_node_info *ni) {
    static char buf[4096];
    tp_plugin p = tp_create(ops, NULL, NULL);
    char *v[1];
    tp_filter_all(&p, pod, &ni, 1, v);
    snprintf(buf, sizeof(buf), "%s", v[0]);
    free(v[0]);
    tp_destroy(&p);
    return buf;
}
