#include "testutil_topology.h"
#include "util/arena.h"
#include "util/intern.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small string helpers --------------------------------------------- */

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

/* Split s at top-level separators sep (not inside () or {}); returns count. */
static int split(char *s, char sep, char **out, int max) {
    int n = 0, depth = 0;
    char *start = s;
    for (char *p = s;; p++) {
        if (*p == '(' || *p == '{') depth++;
        else if (*p == ')' || *p == '}') depth--;
        if ((*p == sep && depth == 0) || !*p) {
            bool end = !*p;
            *p = 0;
            if (n < max) out[n++] = start;
            start = p + 1;
            if (end) break;
        }
    }
    return n;
}

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

static int cmp_label(const void *a, const void *b) {
    const ks_label *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static ks_labels parse_labels(ks_arena *a, const char *spec) {
    ks_labels l = {0, NULL};
    if (!spec || !*spec) return l;
    char *buf = ks_arena_strdup(a, spec);
    char *parts[64];
    int n = split(buf, ',', parts, 64);
    l.kv = ks_arena_calloc(a, (size_t)n, sizeof(*l.kv));
    for (int i = 0; i < n; i++) {
        char *kv = trim(parts[i]);
        if (!*kv) continue;
        char *eq = strchr(kv, '=');
        if (eq) *eq = 0;
        l.kv[l.n++] = (ks_label){ks_intern(trim(kv)), ks_intern(eq ? trim(eq + 1) : "")};
    }
    qsort(l.kv, l.n, sizeof(*l.kv), cmp_label);
    return l;
}

static ks_id *parse_ids(ks_arena *a, const char *spec, uint32_t *n) {
    char *buf = ks_arena_strdup(a, spec);
    char *parts[64];
    int k = split(buf, ',', parts, 64);
    ks_id *ids = ks_arena_calloc(a, (size_t)k + 1, sizeof(*ids));
    *n = 0;
    if (!*spec) return ids;
    for (int i = 0; i < k; i++) ids[(*n)++] = ks_intern(trim(parts[i])); /* "" is a name too */
    return ids;
}

/* One requirement in kubectl syntax. */
static void parse_requirement(ks_arena *a, char *s, ks_requirement *r) {
    memset(r, 0, sizeof(*r));
    s = trim(s);
    char *p;
    if (*s == '!') {
        r->key = ks_intern(trim(s + 1));
        r->op = KS_OP_DOES_NOT_EXIST;
        return;
    }
    struct { const char *word; ks_op op; } ops[] = {
        {" notin ", KS_OP_NOT_IN}, {" in ", KS_OP_IN}, {" gt ", KS_OP_GT}, {" lt ", KS_OP_LT},
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if ((p = strstr(s, ops[i].word))) {
            *p = 0;
            r->key = ks_intern(trim(s));
            r->op = ops[i].op;
            char *v = trim(p + strlen(ops[i].word));
            if (r->op == KS_OP_GT || r->op == KS_OP_LT) {
                r->num = strtoll(v, NULL, 10);
                r->values = ks_arena_calloc(a, 1, sizeof(*r->values));
                r->values[0] = ks_intern(v);
                r->nvalues = 1;
                return;
            }
            if (*v == '(') v++;
            char *e = strrchr(v, ')');
            if (e) *e = 0;
            r->values = parse_ids(a, v, &r->nvalues);
            qsort(r->values, r->nvalues, sizeof(*r->values), cmp_id);
            return;
        }
    }
    bool neg = false;
    if ((p = strstr(s, "!="))) neg = true;
    else p = strchr(s, '=');
    if (p) {
        *p = 0;
        char *v = p + (neg ? 2 : 1);
        if (*v == '=') v++;
        r->key = ks_intern(trim(s));
        r->op = neg ? KS_OP_NOT_IN : KS_OP_IN;
        r->values = ks_arena_calloc(a, 1, sizeof(*r->values));
        r->values[0] = ks_intern(trim(v));
        r->nvalues = 1;
        return;
    }
    r->key = ks_intern(s);
    r->op = KS_OP_EXISTS;
}

ks_label_selector tt_selector(ks_arena *a, const char *spec) {
    ks_label_selector sel = {0};
    if (!spec || strcmp(spec, "nil") == 0) {
        sel.nothing = true;
        return sel;
    }
    char *buf = ks_arena_strdup(a, spec);
    char *parts[64];
    int n = split(buf, ',', parts, 64);
    sel.reqs = ks_arena_calloc(a, (size_t)n + 1, sizeof(*sel.reqs));
    for (int i = 0; i < n; i++) {
        if (!*trim(parts[i])) continue;
        parse_requirement(a, parts[i], &sel.reqs[sel.nreq++]);
    }
    return sel;
}

/* Append one element to an arena array. */
static void *push(ks_arena *a, void *arr, uint32_t *n, size_t size) {
    char *na = ks_arena_calloc(a, *n + 1, size);
    if (*n) memcpy(na, arr, *n * size);
    (*n)++;
    return na;
}

static ks_effect parse_effect(const char *s) {
    if (strcmp(s, "NoSchedule") == 0) return KS_EFFECT_NO_SCHEDULE;
    if (strcmp(s, "PreferNoSchedule") == 0) return KS_EFFECT_PREFER_NO_SCHEDULE;
    if (strcmp(s, "NoExecute") == 0) return KS_EFFECT_NO_EXECUTE;
    return KS_EFFECT_ALL;
}

/* "{a|b|c}" -> fields */
static int fields(ks_arena *a, const char *v, char **out, int max) {
    char *buf = ks_arena_strdup(a, v);
    if (*buf == '{') buf++;
    size_t l = strlen(buf);
    if (l && buf[l - 1] == '}') buf[l - 1] = 0;
    return split(buf, '|', out, max);
}

static void term_opts(ks_arena *a, ks_pod_affinity_term *t, char **f, int n) {
    for (int i = 0; i < n; i++) {
        char *o = trim(f[i]);
        if (strncmp(o, "ns=", 3) == 0) t->namespaces = parse_ids(a, o + 3, &t->nnamespaces);
        else if (strncmp(o, "nssel=", 6) == 0) {
            t->has_ns_selector = true;
            t->ns_selector = tt_selector(a, o + 6);
        } else if (strncmp(o, "mlk=", 4) == 0) t->match_label_keys = parse_ids(a, o + 4, &t->nmatch_label_keys);
        else if (strncmp(o, "mmlk=", 5) == 0) t->mismatch_label_keys = parse_ids(a, o + 5, &t->nmismatch_label_keys);
    }
}

ks_pod *tt_pod(const char *spec) {
    ks_pod *p = ks_pod_new();
    ks_arena *a = p->arena;
    const char *ns = "", *name = "pod"; /* upstream test pods live in "" */
    char *buf = ks_arena_strdup(a, spec ? spec : "");
    char *cl[64];
    int n = split(buf, ' ', cl, 64);
    for (int i = 0; i < n; i++) {
        char *c = trim(cl[i]);
        if (!*c) continue;
        char *colon = strchr(c, ':');
        char *v = colon ? colon + 1 : "";
        if (colon) *colon = 0;
        char *f[16];
        int nf;
        if (strcmp(c, "ns") == 0) ns = v;
        else if (strcmp(c, "name") == 0) name = v;
        else if (strcmp(c, "node") == 0) p->node_name = ks_intern(v);
        else if (strcmp(c, "labels") == 0) {
            if (*v == '{') v++;
            char *e = strrchr(v, '}');
            if (e) *e = 0;
            p->labels = parse_labels(a, v);
        } else if (strcmp(c, "terminating") == 0) {
            p->has_deletion_ts = true;
            p->deletion_ts = 1;
        } else if (strcmp(c, "aff") == 0 || strcmp(c, "anti") == 0) {
            nf = fields(a, v, f, 16);
            bool aff = c[0] == 'a' && c[1] == 'f';
            uint32_t *cnt = aff ? &p->nreq_affinity : &p->nreq_anti;
            ks_pod_affinity_term **arr = aff ? &p->req_affinity : &p->req_anti;
            *arr = push(a, *arr, cnt, sizeof(**arr));
            ks_pod_affinity_term *t = &(*arr)[*cnt - 1];
            t->topology_key = ks_intern(trim(f[0]));
            t->selector = tt_selector(a, nf > 1 ? trim(f[1]) : "nil");
            term_opts(a, t, f + 2, nf - 2);
        } else if (strcmp(c, "paff") == 0 || strcmp(c, "panti") == 0) {
            nf = fields(a, v, f, 16);
            bool aff = strcmp(c, "paff") == 0;
            uint32_t *cnt = aff ? &p->npref_affinity : &p->npref_anti;
            ks_pod_affinity_term **arr = aff ? &p->pref_affinity : &p->pref_anti;
            *arr = push(a, *arr, cnt, sizeof(**arr));
            ks_pod_affinity_term *t = &(*arr)[*cnt - 1];
            t->weight = atoi(f[0]);
            t->topology_key = ks_intern(trim(f[1]));
            t->selector = tt_selector(a, nf > 2 ? trim(f[2]) : "nil");
            term_opts(a, t, f + 3, nf - 3);
        } else if (strcmp(c, "spread") == 0) {
            nf = fields(a, v, f, 16);
            p->spread = push(a, p->spread, &p->nspread, sizeof(*p->spread));
            ks_spread_constraint *s = &p->spread[p->nspread - 1];
            s->max_skew = atoi(f[0]);
            s->topology_key = ks_intern(trim(f[1]));
            s->when_unsatisfiable = strcmp(trim(f[2]), "ScheduleAnyway") == 0 ? KS_SCHEDULE_ANYWAY : KS_DO_NOT_SCHEDULE;
            s->selector = tt_selector(a, nf > 3 ? trim(f[3]) : "nil");
            s->node_taints_policy = KS_POLICY_IGNORE;
            for (int k = 4; k < nf; k++) {
                char *o = trim(f[k]);
                if (strncmp(o, "min=", 4) == 0) {
                    s->has_min_domains = true;
                    s->min_domains = atoi(o + 4);
                } else if (strncmp(o, "ap=", 3) == 0) {
                    s->has_node_affinity_policy = true;
                    s->node_affinity_policy = strcmp(o + 3, "Ignore") == 0 ? KS_POLICY_IGNORE : KS_POLICY_HONOR;
                } else if (strncmp(o, "tp=", 3) == 0) {
                    s->has_node_taints_policy = true;
                    s->node_taints_policy = strcmp(o + 3, "Honor") == 0 ? KS_POLICY_HONOR : KS_POLICY_IGNORE;
                } else if (strncmp(o, "mlk=", 4) == 0) {
                    s->match_label_keys = parse_ids(a, o + 4, &s->nmatch_label_keys);
                }
            }
        } else if (strcmp(c, "tol") == 0) {
            nf = fields(a, v, f, 16);
            p->tolerations = push(a, p->tolerations, &p->ntolerations, sizeof(*p->tolerations));
            ks_toleration *t = &p->tolerations[p->ntolerations - 1];
            t->key = ks_intern(trim(f[0]));
            t->op = nf > 1 && strcmp(trim(f[1]), "Exists") == 0 ? KS_TOL_EXISTS : KS_TOL_EQUAL;
            t->value = ks_intern(nf > 2 ? trim(f[2]) : "");
            t->effect = parse_effect(nf > 3 ? trim(f[3]) : "");
        } else if (strcmp(c, "nodesel") == 0) {
            if (*v == '{') v++;
            char *e = strrchr(v, '}');
            if (e) *e = 0;
            p->node_selector = parse_labels(a, v);
        } else if (strcmp(c, "nodeaff") == 0) {
            if (*v == '{') v++;
            char *e = strrchr(v, '}');
            if (e) *e = 0;
            ks_label_selector sel = tt_selector(a, v);
            p->has_node_affinity = p->has_required_node_affinity = true;
            p->required_node_affinity.nterms = 1;
            p->required_node_affinity.terms = ks_arena_calloc(a, 1, sizeof(ks_node_selector_term));
            p->required_node_affinity.terms[0].nexpr = sel.nreq;
            p->required_node_affinity.terms[0].exprs = sel.reqs;
        } else if (strcmp(c, "owner") == 0) {
            nf = fields(a, v, f, 16);
            p->owners = push(a, p->owners, &p->nowners, sizeof(*p->owners));
            ks_owner_ref *o = &p->owners[p->nowners - 1];
            o->kind = ks_intern(trim(f[0]));
            o->api_version = nf > 1 ? trim(f[1]) : "v1";
            o->name = nf > 2 ? trim(f[2]) : "owner";
            o->uid = o->name;
            o->controller = true;
        } else {
            fprintf(stderr, "tt_pod: unknown clause %s\n", c);
            abort();
        }
    }
    p->ns = ks_intern(ns);
    p->name = ks_intern(name);
    p->key = ks_pod_key(p->ns, p->name);
    p->uid = ks_arena_printf(a, "%s/%s", ns, name);
    p->scheduler_name = ks_intern("default-scheduler");
    return p;
}

ks_node *tt_node(const char *spec) {
    ks_node *n = ks_node_new();
    ks_arena *a = n->arena;
    char *buf = ks_arena_strdup(a, spec);
    char *cl[16];
    int k = split(buf, ' ', cl, 16);
    n->name = ks_intern(trim(cl[0]));
    /* room for any test pod, so that resource plugins pass */
    n->allocatable.milli_cpu = n->capacity.milli_cpu = 64000;
    n->allocatable.memory = n->capacity.memory = 256LL << 30;
    n->allocatable.allowed_pods = n->capacity.allowed_pods = 110;
    for (int i = 1; i < k; i++) {
        char *c = trim(cl[i]);
        if (!*c) continue;
        if (strncmp(c, "taint:", 6) == 0) {
            char *f[4];
            int nf = fields(a, c + 6, f, 4);
            n->taints = push(a, n->taints, &n->ntaints, sizeof(*n->taints));
            ks_taint *t = &n->taints[n->ntaints - 1];
            t->key = ks_intern(trim(f[0]));
            t->value = ks_intern(nf > 1 ? trim(f[1]) : "");
            t->effect = parse_effect(nf > 2 ? trim(f[2]) : "NoSchedule");
        } else {
            n->labels = parse_labels(a, c);
        }
    }
    return n;
}

/* ---- env -------------------------------------------------------------- */

static ks_arena *env_arena;

void tt_env_init(tt_env *e, const char *const *nodes, const char *const *pods) {
    memset(e, 0, sizeof(*e));
    if (!env_arena) env_arena = ks_arena_new(4096);
    e->objects = ks_xcalloc(1, sizeof(*e->objects));
    for (size_t i = 0; nodes && nodes[i]; i++) {
        ks_node *n = tt_node(nodes[i]);
        ks_node_info *ni = ks_node_info_new();
        ks_node_info_set_node(ni, n);
        ks_node_unref(n);
        e->nodes[e->n++] = ni;
    }
    for (size_t i = 0; pods && pods[i]; i++) {
        ks_pod *p = tt_pod(pods[i]);
        for (size_t j = 0; j < e->n; j++)
            if (e->nodes[j]->name == p->node_name) ks_node_info_add_pod(e->nodes[j], p);
        ks_pod_unref(p);
    }
}

void tt_env_namespace(tt_env *e, const char *spec) {
    ks_namespace *ns = ks_arena_calloc(env_arena, 1, sizeof(*ns));
    char *buf = ks_arena_strdup(env_arena, spec);
    char *sp = strchr(buf, ' ');
    if (sp) *sp = 0;
    ns->name = ks_intern(buf);
    ns->labels = parse_labels(env_arena, sp ? sp + 1 : "");
    KS_VEC_PUSH(e->objects->namespaces, ns);
}

void tt_env_workload(tt_env *e, ks_workload_kind kind, const char *ns, const char *name, const char *sel) {
    ks_workload *w = ks_arena_calloc(env_arena, 1, sizeof(*w));
    w->kind = kind;
    w->ns = ks_intern(ns);
    w->name = ks_intern(name);
    w->selector = tt_selector(env_arena, sel);
    KS_VEC_PUSH(e->objects->workloads, w);
}

ks_node_info *tt_env_node(tt_env *e, const char *name) {
    ks_id id = ks_intern(name);
    for (size_t i = 0; i < e->n; i++)
        if (e->nodes[i]->name == id) return e->nodes[i];
    return NULL;
}

void tt_env_free(tt_env *e) {
    for (size_t i = 0; i < e->n; i++) ks_node_info_free(e->nodes[i]);
    free(e->objects->namespaces.v);
    free(e->objects->workloads.v);
    free(e->objects);
    memset(e, 0, sizeof(*e));
}

const char *tt_status(ks_status *s) {
    static char buf[512];
    if (!s) return "Success";
    int n = snprintf(buf, sizeof(buf), "%s", ks_code_name(ks_status_code(s)));
    for (size_t i = 0; i < ks_status_nreasons(s) && n < (int)sizeof(buf); i++)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%s", i ? ", " : ": ", ks_status_reason(s, i));
    ks_status_free(s);
    return buf;
}
