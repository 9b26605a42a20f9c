/* -o html: the page's data. The cluster (nodes with what is allocatable
 * and requested per resource, taints, labels, the pods on them), the
 * pending pods with each attempt's Filter verdicts and Score table, and the
 * inputs, as compact JSON the inline renderer reads (docs/report.md,
 * "Data"). Node and pod rows refer to nodes by position and to repeated
 * text through a string table, so a 1,000-node / 5,000-pod page stays a
 * few megabytes. */
#include "sim/report_html.h"
#include "api/dra.h"
#include "sim/page_json.h"
#include "sim/report.h"
#include "util/hash.h"
#include "util/intern.h"
#include "util/version.h"
#include "util/xalloc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Explain detail is written while the page's data is below this size;
 * pods after that keep their outcome and reasons only (the page says how
 * many). 3.5 MB leaves room for the cluster under the 5 MB a 1,000-node /
 * 5,000-pod page is meant to stay within (docs/report.md, "Size"). */
#define EXPLAIN_BUDGET_BYTES (3500u * 1000u)
/* Score rows kept per attempt: all of them for small clusters; for large
 * ones the best nodes (and the chosen one), as many as fit 25,000 rows
 * over all pods (a row is about 60 bytes), never fewer than 3. */
#define SCORE_ROWS_TOTAL 25000u
#define SCORE_ROWS_MAX 20u
#define SCORE_ROWS_MIN 3u
/* The config file is embedded as text when it is smaller than this. */
#define CONFIG_TEXT_MAX (256u * 1024u)

typedef enum { COL_CPU, COL_MEMORY, COL_PODS, COL_EPHEMERAL, COL_SCALAR, COL_DRA } col_kind;

typedef struct column {
    col_kind kind;
    ks_id scalar;        /* COL_SCALAR */
    const char *driver;  /* COL_DRA */
} column;

typedef struct page {
    ks_strbuf b;
    ks_pj_strings strs;
    const ks_cluster *c;
    ks_map node_pos;     /* node name id + 1 -> position + 1 */
    column *cols;
    size_t ncols, cols_cap;
    uint32_t score_rows; /* per attempt */
    size_t explain_omitted;
    int64_t *preemptor;  /* per victim: the pending pod's position, -1 */
} page;

static void put_strref(page *pg, const char *s) { ks_pj_i64(&pg->b, ks_pj_string(&pg->strs, s)); }

static int64_t node_pos(const page *pg, ks_id name) {
    uintptr_t p = (uintptr_t)ks_map_get(&pg->node_pos, (uint64_t)name + 1);
    return p ? (int64_t)p - 1 : -1;
}

static int64_t node_pos_name(const page *pg, const char *name) {
    if (!name) return -1;
    ks_id id = ks_intern_find(name);
    return id ? node_pos(pg, id) : -1;
}

static bool pod_counts(const ks_pod *p) {
    if (!p->node_name || ks_pod_is_terminating(p)) return false;
    return p->phase != KS_PHASE_SUCCEEDED && p->phase != KS_PHASE_FAILED;
}

static int cmp_id_name(const void *a, const void *b) {
    return strcmp(ks_str(*(const ks_id *)a), ks_str(*(const ks_id *)b));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add_col(page *pg, column c) {
    KS_GROW(pg->cols, pg->cols_cap, pg->ncols + 1);
    pg->cols[pg->ncols++] = c;
}

/* cpu, memory, pods; ephemeral storage when some pod asks for it; every
 * scalar resource some node offers; one column per DRA driver that
 * publishes devices on a node (devices counted). */
static void choose_columns(page *pg) {
    const ks_cluster *c = pg->c;
    add_col(pg, (column){.kind = COL_CPU});
    add_col(pg, (column){.kind = COL_MEMORY});
    add_col(pg, (column){.kind = COL_PODS});
    bool eph = false;
    for (uint32_t i = 0; i < c->pods.n && !eph; i++) eph = c->pods.v[i]->requests.ephemeral_storage > 0;
    if (eph) add_col(pg, (column){.kind = COL_EPHEMERAL});

    ks_id *sc = NULL;
    size_t nsc = 0, cap = 0;
    for (uint32_t i = 0; i < c->nodes.n; i++) {
        const ks_resource *a = &c->nodes.v[i]->allocatable;
        for (uint32_t j = 0; j < a->nscalar; j++) {
            if (a->scalars[j].val <= 0) continue; /* kind reports hugepages: "0" */
            bool seen = false;
            for (size_t k = 0; k < nsc && !seen; k++) seen = sc[k] == a->scalars[j].name;
            if (seen) continue;
            KS_GROW(sc, cap, nsc + 1);
            sc[nsc++] = a->scalars[j].name;
        }
    }
    if (nsc) qsort(sc, nsc, sizeof(ks_id), cmp_id_name);
    for (size_t k = 0; k < nsc; k++) add_col(pg, (column){.kind = COL_SCALAR, .scalar = sc[k]});
    free(sc);

    const char **drv = NULL;
    size_t ndrv = 0;
    cap = 0;
    for (uint32_t i = 0; i < c->resource_slices.n; i++) {
        const ks_resource_slice *s = c->resource_slices.v[i];
        if (!s->node_name || !s->ndevices || !s->driver) continue;
        bool seen = false;
        for (size_t k = 0; k < ndrv && !seen; k++) seen = strcmp(drv[k], s->driver) == 0;
        if (seen) continue;
        KS_GROW(drv, cap, ndrv + 1);
        drv[ndrv++] = s->driver;
    }
    if (ndrv) qsort(drv, ndrv, sizeof(char *), cmp_str);
    for (size_t k = 0; k < ndrv; k++) add_col(pg, (column){.kind = COL_DRA, .driver = drv[k]});
    free(drv);
}

static void write_columns(page *pg) {
    ks_sb_putc(&pg->b, '[');
    for (size_t i = 0; i < pg->ncols; i++) {
        const column *col = &pg->cols[i];
        const char *name = "", *unit = "count";
        char buf[300];
        switch (col->kind) {
        case COL_CPU: name = "cpu", unit = "cpu"; break;
        case COL_MEMORY: name = "memory", unit = "bytes"; break;
        case COL_PODS: name = "pods"; break;
        case COL_EPHEMERAL: name = "ephemeral-storage", unit = "bytes"; break;
        case COL_SCALAR:
            name = ks_str(col->scalar);
            if (!strncmp(name, "hugepages-", 10)) unit = "bytes";
            break;
        case COL_DRA:
            snprintf(buf, sizeof buf, "%s devices", col->driver);
            name = buf, unit = "devices";
            break;
        }
        if (i) ks_sb_putc(&pg->b, ',');
        ks_sb_puts(&pg->b, "{\"name\":");
        ks_pj_str(&pg->b, name);
        ks_sb_puts(&pg->b, ",\"unit\":");
        ks_pj_str(&pg->b, unit);
        ks_sb_putc(&pg->b, '}');
    }
    ks_sb_putc(&pg->b, ']');
}

static int64_t col_value(const column *col, const ks_resource *r, int64_t pods) {
    switch (col->kind) {
    case COL_CPU: return r->milli_cpu;
    case COL_MEMORY: return r->memory;
    case COL_PODS: return pods;
    case COL_EPHEMERAL: return r->ephemeral_storage;
    case COL_SCALAR: return ks_resource_get(r, col->scalar);
    case COL_DRA: return 0;
    }
    return 0;
}

static const char *effect_name(ks_effect e) {
    switch (e) {
    case KS_EFFECT_NO_SCHEDULE: return "NoSchedule";
    case KS_EFFECT_PREFER_NO_SCHEDULE: return "PreferNoSchedule";
    case KS_EFFECT_NO_EXECUTE: return "NoExecute";
    default: return "";
    }
}

/* Labels every node has in some form and that say nothing a column does
 * not: the hostname and the deprecated beta copies. */
static bool label_shown(const char *key) {
    return strcmp(key, "kubernetes.io/hostname") != 0 && strncmp(key, "beta.kubernetes.io/", 19) != 0;
}

static const char *node_zone(const ks_node *n) {
    static ks_id zone, beta;
    if (!zone) {
        zone = ks_intern("topology.kubernetes.io/zone");
        beta = ks_intern("failure-domain.beta.kubernetes.io/zone");
    }
    ks_id v;
    if (ks_labels_get(&n->labels, zone, &v) || ks_labels_get(&n->labels, beta, &v)) return ks_str(v);
    return "";
}

/* Per node, per column: requested and allocatable, taints, labels, pods. */
static void write_nodes(page *pg) {
    const ks_cluster *c = pg->c;
    uint32_t nn = c->nodes.n;
    ks_resource *req = ks_xcalloc(nn ? nn : 1, sizeof(ks_resource));
    int64_t *npods = ks_xcalloc(nn ? nn : 1, sizeof(int64_t));
    uint32_t **pods = ks_xcalloc(nn ? nn : 1, sizeof(uint32_t *));
    uint32_t *pods_cap = ks_xcalloc(nn ? nn : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (!pod_counts(p)) continue;
        int64_t k = node_pos(pg, p->node_name);
        if (k < 0) continue;
        ks_resource_add(&req[k], NULL, &p->requests);
        KS_GROW(pods[k], pods_cap[k], (size_t)npods[k] + 1);
        pods[k][npods[k]++] = i;
    }
    /* DRA: devices published on each node, and those a claim holds */
    ks_map allocated;
    ks_map_init(&allocated);
    for (uint32_t i = 0; i < c->resource_claims.n; i++) {
        const ks_allocation_result *al = c->resource_claims.v[i]->allocation;
        for (uint32_t k = 0; al && k < al->nresults; k++)
            ks_map_put(&allocated, al->results[k].id_hash | 1, (void *)1);
    }

    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < nn; i++) {
        const ks_node *n = c->nodes.v[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"n\":");
        ks_pj_str(b, ks_str(n->name));
        ks_sb_puts(b, ",\"z\":");
        put_strref(pg, node_zone(n));
        if (n->unschedulable) ks_sb_puts(b, ",\"u\":1");
        ks_sb_puts(b, ",\"a\":[");
        for (size_t k = 0; k < pg->ncols; k++) {
            const column *col = &pg->cols[k];
            int64_t v = col_value(col, &n->allocatable, n->allocatable.allowed_pods);
            int64_t used = col_value(col, &req[i], npods[i]);
            if (col->kind == COL_DRA) {
                v = used = 0;
                for (uint32_t s = 0; s < c->resource_slices.n; s++) {
                    const ks_resource_slice *sl = c->resource_slices.v[s];
                    if (sl->node_name != n->name || !sl->driver || strcmp(sl->driver, col->driver)) continue;
                    v += sl->ndevices;
                    for (uint32_t d = 0; d < sl->ndevices; d++)
                        if (ks_map_get(&allocated, sl->devices[d].id_hash | 1)) used++;
                }
            }
            if (k) ks_sb_putc(b, ',');
            ks_pj_i64(b, v);
            ks_sb_putc(b, ',');
            ks_pj_i64(b, used);
        }
        ks_sb_puts(b, "],\"t\":[");
        for (uint32_t k = 0; k < n->ntaints; k++) {
            const ks_taint *t = &n->taints[k];
            char *s = ks_xasprintf("%s%s%s:%s", ks_str(t->key), t->value ? "=" : "", t->value ? ks_str(t->value) : "",
                                   effect_name(t->effect));
            if (k) ks_sb_putc(b, ',');
            put_strref(pg, s);
            free(s);
        }
        ks_sb_puts(b, "],\"l\":[");
        bool first = true;
        for (uint32_t k = 0; k < n->labels.n; k++) {
            const char *key = ks_str(n->labels.kv[k].key);
            if (!label_shown(key)) continue;
            char *s = ks_xasprintf("%s=%s", key, ks_str(n->labels.kv[k].value));
            if (!first) ks_sb_putc(b, ',');
            first = false;
            put_strref(pg, s);
            free(s);
        }
        ks_sb_puts(b, "],\"p\":[");
        for (int64_t k = 0; k < npods[i]; k++) {
            const ks_pod *p = c->pods.v[pods[i][k]];
            char *s = ks_xasprintf("%s/%s", ks_str(p->ns), ks_str(p->name));
            if (k) ks_sb_putc(b, ',');
            ks_pj_str(b, s);
            free(s);
        }
        ks_sb_puts(b, "]}");
        ks_resource_fini(&req[i]);
        free(pods[i]);
    }
    ks_sb_putc(b, ']');
    ks_map_free(&allocated);
    free(req);
    free(npods);
    free(pods);
    free(pods_cap);
}

static void write_time(page *pg, const char *key, int64_t ns) {
    char t[48];
    ks_format_time(ns, false, t, sizeof t);
    ks_pj_key(&pg->b, key, false);
    ks_pj_str(&pg->b, t);
}

/* A sorted list of node positions as inclusive ranges: [a,b,c,d] is a..b
 * and c..d. Nodes that passed (or failed alike) are mostly contiguous. */
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void write_ranges(ks_strbuf *b, uint32_t *v, size_t n) {
    if (n > 1) qsort(v, n, sizeof(uint32_t), cmp_u32);
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1) j++;
        if (i) ks_sb_putc(b, ',');
        ks_pj_i64(b, v[i]);
        ks_sb_putc(b, ',');
        ks_pj_i64(b, v[j]);
        i = j + 1;
    }
    ks_sb_putc(b, ']');
}

typedef struct vgroup {
    const ks_sim_verdict *first; /* plugin and reasons of the group */
    uint32_t *nodes;
    size_t n, cap;
} vgroup;

static bool same_verdict(const ks_sim_verdict *a, const ks_sim_verdict *b) {
    if ((a->code == KS_SUCCESS) != (b->code == KS_SUCCESS)) return false;
    if (a->code == KS_SUCCESS) return true;
    if (strcmp(a->plugin, b->plugin) || a->nreasons != b->nreasons) return false;
    for (uint32_t i = 0; i < a->nreasons; i++)
        if (strcmp(a->reasons[i], b->reasons[i])) return false;
    return true;
}

/* Filter verdicts grouped by outcome: [plugin or -1 (passed), [reasons],
 * [node ranges]]. Groups are few (one per distinct reason), so the linear
 * search is cheap. */
static void write_verdicts(page *pg, const ks_sim_attempt *a) {
    vgroup *g = NULL;
    size_t ng = 0, gcap = 0;
    for (uint32_t i = 0; i < a->nverdicts; i++) {
        const ks_sim_verdict *v = &a->verdicts[i];
        int64_t pos = node_pos(pg, v->node);
        if (pos < 0) continue;
        size_t k = 0;
        while (k < ng && !same_verdict(g[k].first, v)) k++;
        if (k == ng) {
            KS_GROW(g, gcap, ng + 1);
            memset(&g[ng], 0, sizeof(*g));
            g[ng++].first = v;
        }
        KS_GROW(g[k].nodes, g[k].cap, g[k].n + 1);
        g[k].nodes[g[k].n++] = (uint32_t)pos;
    }
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (size_t k = 0; k < ng; k++) {
        const ks_sim_verdict *v = g[k].first;
        if (k) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        if (v->code == KS_SUCCESS) ks_sb_puts(b, "-1");
        else put_strref(pg, v->plugin);
        ks_sb_puts(b, ",[");
        for (uint32_t r = 0; v->code != KS_SUCCESS && r < v->nreasons; r++) {
            if (r) ks_sb_putc(b, ',');
            put_strref(pg, v->reasons[r]);
        }
        ks_sb_putc(b, ']');
        if (v->code != KS_SUCCESS) {
            ks_sb_putc(b, ',');
            ks_pj_str(b, ks_code_name(v->code));
        } else {
            ks_sb_puts(b, ",\"\"");
        }
        ks_sb_putc(b, ',');
        write_ranges(b, g[k].nodes, g[k].n);
        ks_sb_putc(b, ']');
        free(g[k].nodes);
    }
    ks_sb_putc(b, ']');
    free(g);
}

static const ks_sim_attempt *sort_attempt;

static int cmp_score_row(const void *x, const void *y) {
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const ks_sim_attempt *a = sort_attempt;
    if (a->total[i] != a->total[j]) return a->total[i] > a->total[j] ? -1 : 1;
    return strcmp(ks_str(a->scored_nodes[i]), ks_str(a->scored_nodes[j]));
}

/* The score table: the best rows by total (and the chosen node), each
 * [node, total, raw per plugin..., normalized per plugin...]; weighted is
 * normalized x weight (the page multiplies). */
static void write_scores(page *pg, const ks_sim_attempt *a) {
    ks_strbuf *b = &pg->b;
    uint32_t *rows = ks_xcalloc(a->nscored ? a->nscored : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < a->nscored; i++) rows[i] = i;
    sort_attempt = a;
    if (a->nscored) qsort(rows, a->nscored, sizeof(uint32_t), cmp_score_row);
    uint32_t keep = a->nscored < pg->score_rows ? a->nscored : pg->score_rows;
    ks_id sel = a->selected_node ? ks_intern_find(a->selected_node) : 0;
    bool has_sel = false;
    for (uint32_t i = 0; i < keep; i++) has_sel |= a->scored_nodes[rows[i]] == sel;
    if (!has_sel && sel) {
        for (uint32_t i = keep; i < a->nscored; i++)
            if (a->scored_nodes[rows[i]] == sel) {
                rows[keep++] = rows[i];
                break;
            }
    }
    ks_sb_putc(b, '[');
    for (uint32_t r = 0; r < keep; r++) {
        uint32_t i = rows[r];
        if (r) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_pj_i64(b, node_pos(pg, a->scored_nodes[i]));
        ks_sb_putc(b, ',');
        ks_pj_i64(b, a->total[i]);
        for (uint32_t j = 0; j < a->nplugins; j++) {
            ks_sb_putc(b, ',');
            ks_pj_i64(b, a->raw[(size_t)i * a->nplugins + j]);
        }
        for (uint32_t j = 0; j < a->nplugins; j++) {
            ks_sb_putc(b, ',');
            ks_pj_i64(b, a->normalized[(size_t)i * a->nplugins + j]);
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, ']');
    free(rows);
}

static void write_attempt(page *pg, const ks_sim_attempt *a) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"no\":");
    ks_pj_i64(b, a->number);
    write_time(pg, "t", a->time_ns);
    if (a->requeue_event) {
        ks_pj_key(b, "rq", false);
        ks_pj_str(b, a->requeue_event);
        ks_pj_key(b, "rqp", false);
        ks_pj_str(b, a->requeue_plugin);
    }
    if (a->pre_filter_code != KS_SUCCESS) {
        ks_pj_key(b, "pre", false);
        ks_sb_putc(b, '[');
        put_strref(pg, a->pre_filter_plugin ? a->pre_filter_plugin : "");
        ks_sb_putc(b, ',');
        ks_pj_str(b, ks_code_name(a->pre_filter_code));
        ks_sb_putc(b, ',');
        ks_pj_str(b, a->pre_filter_message ? a->pre_filter_message : "");
        ks_sb_putc(b, ']');
    }
    if (a->pre_filter_narrowed) ks_sb_puts(b, ",\"narrowed\":1");
    ks_pj_key(b, "fp", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < a->nfilter_plugins; i++) {
        if (i) ks_sb_putc(b, ',');
        put_strref(pg, a->filter_plugins[i]);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "nv", false);
    ks_pj_i64(b, a->nverdicts);
    ks_pj_key(b, "vg", false);
    write_verdicts(pg, a);
    ks_pj_key(b, "sp", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < a->nplugins; i++) {
        if (i) ks_sb_putc(b, ',');
        put_strref(pg, a->score_plugins[i]);
    }
    ks_sb_puts(b, "],\"w\":[");
    for (uint32_t i = 0; i < a->nplugins; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_i64(b, a->weights[i]);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "nsc", false);
    ks_pj_i64(b, a->nscored);
    ks_pj_key(b, "sc", false);
    write_scores(pg, a);
    ks_pj_key(b, "sel", false);
    ks_pj_i64(b, node_pos_name(pg, a->selected_node));
    if (a->message) {
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, a->message);
    }
    if (a->post_filter_ran) {
        ks_pj_key(b, "pf", false);
        ks_sb_putc(b, '[');
        put_strref(pg, a->post_filter_plugin && a->post_filter_plugin[0] ? a->post_filter_plugin : "DefaultPreemption");
        ks_sb_putc(b, ',');
        ks_pj_str(b, ks_code_name(a->post_filter_code));
        ks_sb_putc(b, ',');
        ks_pj_str(b, a->post_filter_message ? a->post_filter_message : "");
        ks_sb_putc(b, ',');
        ks_pj_i64(b, node_pos_name(pg, a->nominated_node));
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, '}');
}

/* The reasons of an attempt's rejected nodes counted as kube-scheduler's
 * FitError counts them: one per reason per node, each printed as
 * "<count> <reason>" and the strings sorted. [[count, reason], ...]. */
static void write_histogram(page *pg, const ks_sim_attempt *a) {
    ks_map counts;
    ks_map_init(&counts);
    ks_id *order = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < a->nverdicts; i++) {
        const ks_sim_verdict *v = &a->verdicts[i];
        if (v->code == KS_SUCCESS) continue;
        for (uint32_t r = 0; r < v->nreasons; r++) {
            ks_id id = ks_intern(v->reasons[r]);
            uintptr_t c = (uintptr_t)ks_map_get(&counts, (uint64_t)id + 1);
            if (!c) {
                KS_GROW(order, cap, n + 1);
                order[n++] = id;
            }
            ks_map_put(&counts, (uint64_t)id + 1, (void *)(c + 1));
        }
    }
    char **lines = ks_xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        lines[i] = ks_xasprintf("%zu %s", (size_t)(uintptr_t)ks_map_get(&counts, (uint64_t)order[i] + 1),
                                ks_str(order[i]));
    if (n) qsort(lines, n, sizeof(char *), cmp_str);
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        char *sp = strchr(lines[i], ' ');
        *sp = 0;
        if (i) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_sb_puts(b, lines[i]);
        ks_sb_putc(b, ',');
        put_strref(pg, sp + 1);
        ks_sb_putc(b, ']');
        free(lines[i]);
    }
    ks_sb_putc(b, ']');
    free(lines);
    free(order);
    ks_map_free(&counts);
}

/* The pending pod that preempted victim v: the one whose UID the
 * Preempted event names, else the last one nominated to v's node before
 * v was deleted. -1 when none is found. */
static int64_t preemptor_of(const ks_sim_result *r, const ks_sim_pod *v) {
    const char *m = v->message;
    const char *pre = "Preempted by pod ";
    if (m && !strncmp(m, pre, strlen(pre))) {
        const char *uid = m + strlen(pre);
        const char *end = strstr(uid, " on node ");
        size_t n = end ? (size_t)(end - uid) : strlen(uid);
        for (uint32_t i = 0; n && i < r->npods; i++) {
            const char *u = r->pods[i].input->uid;
            if (u && strlen(u) == n && !strncmp(u, uid, n)) return i;
        }
    }
    int64_t best = -1, best_t = 0;
    for (uint32_t i = 0; v->node && i < r->npods; i++)
        for (uint32_t k = 0; k < r->pods[i].nexplain; k++) {
            const ks_sim_attempt *a = &r->pods[i].explain[k];
            if (a->nominated_node && !strcmp(a->nominated_node, v->node) && a->time_ns <= v->deleted_ns &&
                (best < 0 || a->time_ns >= best_t))
                best = i, best_t = a->time_ns;
        }
    return best;
}

static void write_pod(page *pg, const ks_sim_result *r, const ks_sim_pod *sp, bool victim, uint32_t idx) {
    ks_strbuf *b = &pg->b;
    const ks_pod *p = sp->input;
    ks_sb_puts(b, "{\"ns\":");
    put_strref(pg, ks_str(p->ns));
    ks_pj_key(b, "n", false);
    ks_pj_str(b, ks_str(p->name));
    ks_pj_key(b, "s", false);
    ks_pj_str(b, ks_sim_state_name(sp->state));
    ks_pj_key(b, "node", false);
    ks_pj_i64(b, node_pos_name(pg, sp->node));
    if (sp->nominated) {
        ks_pj_key(b, "nom", false);
        ks_pj_i64(b, node_pos_name(pg, sp->nominated));
    }
    if (sp->message) {
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, sp->message);
    }
    if (sp->reason) {
        ks_pj_key(b, "why", false);
        ks_pj_str(b, sp->reason);
    }
    if (p->uid) {
        ks_pj_key(b, "uid", false);
        ks_pj_str(b, p->uid);
    }
    ks_pj_key(b, "prio", false);
    ks_pj_i64(b, ks_pod_priority(p));
    ks_pj_key(b, "req", false);
    ks_sb_putc(b, '[');
    for (size_t k = 0; k < pg->ncols; k++) {
        if (k) ks_sb_putc(b, ',');
        ks_pj_i64(b, col_value(&pg->cols[k], &p->requests, 1));
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "att", false);
    ks_pj_i64(b, sp->attempts);
    if (victim) {
        ks_pj_key(b, "by", false);
        ks_pj_i64(b, pg->preemptor[idx]);
        write_time(pg, "deleted", sp->deleted_ns);
    } else {
        ks_pj_key(b, "vic", false);
        ks_sb_putc(b, '[');
        bool first = true;
        for (uint32_t v = 0; v < r->nvictims; v++) {
            if (pg->preemptor[v] != (int64_t)idx) continue;
            if (!first) ks_sb_putc(b, ',');
            first = false;
            ks_pj_i64(b, v);
        }
        ks_sb_putc(b, ']');
    }
    if (sp->nexplain) {
        const ks_sim_attempt *last = &sp->explain[sp->nexplain - 1];
        ks_pj_key(b, "h", false);
        write_histogram(pg, last);
        ks_pj_key(b, "ex", false);
        ks_sb_putc(b, '[');
        /* within the budget every attempt; past it, none */
        if (b->len < EXPLAIN_BUDGET_BYTES) {
            for (uint32_t k = 0; k < sp->nexplain; k++) {
                if (k) ks_sb_putc(b, ',');
                write_attempt(pg, &sp->explain[k]);
            }
        } else {
            pg->explain_omitted++;
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, '}');
}

static void page_init(page *pg, const ks_cluster *c) {
    memset(pg, 0, sizeof(*pg));
    ks_sb_init(&pg->b);
    ks_pj_strings_init(&pg->strs);
    pg->c = c;
    ks_map_init(&pg->node_pos);
    for (uint32_t i = 0; i < c->nodes.n; i++)
        ks_map_put(&pg->node_pos, (uint64_t)c->nodes.v[i]->name + 1, (void *)(uintptr_t)(i + 1));
    choose_columns(pg);
    pg->score_rows = SCORE_ROWS_MAX;
}

static void page_free(page *pg) {
    ks_sb_free(&pg->b);
    ks_pj_strings_free(&pg->strs);
    ks_map_free(&pg->node_pos);
    free(pg->cols);
    free(pg->preemptor);
}

static char *read_small_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = ks_xmalloc(CONFIG_TEXT_MAX + 1);
    size_t n = fread(buf, 1, CONFIG_TEXT_MAX + 1, f);
    fclose(f);
    if (n > CONFIG_TEXT_MAX) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

/* "inputs": how the page was made. No wall-clock time: the same inputs
 * give the same page. */
static void write_inputs(page *pg, const ks_report_inputs *in) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"ksched\":");
    ks_pj_str(b, KS_VERSION);
    ks_pj_key(b, "decidedAs", false);
    ks_pj_str(b, "kube-scheduler " KS_REFERENCE);
    ks_pj_key(b, "command", false);
    ks_sb_putc(b, '[');
    for (int i = 0; i < in->argc; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_str(b, in->argv[i]);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "paths", false);
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < in->npaths; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_str(b, in->paths[i]);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "config", false);
    ks_pj_str(b, in->config_path);
    if (in->config_path) {
        char *text = read_small_file(in->config_path);
        ks_pj_key(b, "configText", false);
        ks_pj_str(b, text);
        free(text);
    }
    ks_pj_key(b, "seed", false);
    ks_pj_i64(b, (int64_t)in->seed);
    ks_pj_key(b, "tieBreak", false);
    ks_pj_str(b, in->deterministic ? "name" : "random");
    ks_sb_putc(b, '}');
}

static void write_cluster(page *pg) {
    ks_strbuf *b = &pg->b;
    ks_pj_key(b, "res", false);
    write_columns(pg);
    ks_pj_key(b, "nodes", false);
    write_nodes(pg);
}

/* The page: shell, CSS, the data (JSON in a script element; see
 * page_json.h for why it cannot end the element) and the renderer. */
static bool write_page(FILE *out, page *pg, const char *title) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   /* nothing from the network, even by mistake */
                   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                   "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                   "<meta name=\"generator\" content=\"ksched " KS_VERSION "\">\n<title>");
    ks_sb_puts(&b, title); /* a constant: names are set by the renderer */
    ks_sb_puts(&b, "</title>\n<style>\n");
    ks_sb_puts(&b, ks_report_page_css);
    ks_sb_puts(&b, "</style>\n</head>\n<body>\n<noscript>This report is drawn by JavaScript; "
                   "its data is in the ksched-data element of this file.</noscript>\n"
                   "<div id=\"app\"></div>\n<script type=\"application/json\" id=\"ksched-data\">");
    bool ok = fwrite(b.s, 1, b.len, out) == b.len;
    ok = ok && fwrite(pg->b.s, 1, pg->b.len, out) == pg->b.len;
    ks_sb_reset(&b);
    ks_sb_puts(&b, "</script>\n<script>\n");
    ks_sb_puts(&b, ks_report_page_js);
    ks_sb_puts(&b, "</script>\n</body>\n</html>\n");
    ok = ok && fwrite(b.s, 1, b.len, out) == b.len;
    ks_sb_free(&b);
    return fflush(out) == 0 && ok;
}

/* The data is built with the string table last: rows add to it as they
 * are written, so it is appended at the end of the object. */
static void finish_data(page *pg) {
    ks_pj_key(&pg->b, "strings", false);
    ks_pj_strings_write(&pg->b, &pg->strs);
    ks_sb_putc(&pg->b, '}');
}

static void write_str_list(ks_strbuf *b, char *const *v, uint32_t n) {
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_str(b, v[i]);
    }
    ks_sb_putc(b, ']');
}

static void write_fix(page *pg, const ks_why_fix *f) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"changes\":[");
    for (uint32_t i = 0; i < f->nchanges; i++) {
        const ks_why_change *c = &f->changes[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"kind\":");
        ks_pj_str(b, ks_why_change_kind_name(c->kind));
        ks_pj_key(b, "object", false);
        ks_pj_str(b, c->object);
        ks_pj_key(b, "ns", false);
        ks_pj_str(b, c->ns);
        ks_pj_key(b, "name", false);
        ks_pj_str(b, c->name);
        ks_pj_key(b, "like", false);
        ks_pj_str(b, c->like);
        ks_pj_key(b, "summary", false);
        ks_pj_str(b, c->summary);
        ks_pj_key(b, "patch", false);
        ks_pj_str(b, c->patch);
        ks_pj_key(b, "command", false);
        ks_pj_str(b, c->command);
        ks_sb_putc(b, '}');
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "node", false);
    ks_pj_str(b, f->node);
    ks_pj_key(b, "harm", false);
    ks_pj_i64(b, f->harm);
    ks_pj_key(b, "unblocks", false);
    ks_pj_i64(b, f->unblocks);
    ks_pj_key(b, "effects", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < f->neffects; i++) {
        const ks_why_effect *e = &f->effects[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"kind\":");
        ks_pj_str(b, ks_why_effect_kind_name(e->kind));
        ks_pj_key(b, "pod", false);
        ks_pj_str(b, e->pod);
        ks_pj_key(b, "before", false);
        ks_pj_str(b, e->before);
        ks_pj_key(b, "after", false);
        ks_pj_str(b, e->after);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "]}");
}

/* "why": per pod its reasons, node classes and verified fixes; with
 * --all the root-cause groups and the cluster-side fixes. */
static void write_why(page *pg, const ks_why_result *r) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"pods\":[");
    for (uint32_t i = 0; i < r->npods; i++) {
        const ks_why_pod *p = &r->pods[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"pod\":");
        ks_pj_str(b, p->pod);
        ks_pj_key(b, "s", false);
        ks_pj_str(b, ks_sim_state_name(p->state));
        ks_pj_key(b, "node", false);
        ks_pj_str(b, p->node);
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, p->message);
        ks_pj_key(b, "preemption", false);
        ks_pj_str(b, p->preemption);
        ks_pj_key(b, "h", false);
        ks_sb_putc(b, '[');
        for (uint32_t k = 0; k < p->nreasons; k++) {
            if (k) ks_sb_putc(b, ',');
            ks_sb_putc(b, '[');
            ks_pj_i64(b, p->reasons[k].nodes);
            ks_sb_putc(b, ',');
            put_strref(pg, p->reasons[k].text);
            ks_sb_putc(b, ']');
        }
        ks_sb_puts(b, "],\"classes\":[");
        for (uint32_t k = 0; k < p->nclasses; k++) {
            const ks_why_class *c = &p->classes[k];
            if (k) ks_sb_putc(b, ',');
            ks_sb_puts(b, "{\"plugin\":");
            ks_pj_str(b, c->plugin);
            ks_pj_key(b, "reasons", false);
            write_str_list(b, c->reasons, c->nreasons);
            ks_pj_key(b, "nodes", false);
            write_str_list(b, c->nodes, c->nnodes);
            ks_pj_key(b, "details", false);
            write_str_list(b, c->details, c->ndetails);
            ks_sb_putc(b, '}');
        }
        ks_sb_puts(b, "],\"fixes\":[");
        for (uint32_t k = 0; k < p->nfixes; k++) {
            if (k) ks_sb_putc(b, ',');
            write_fix(pg, &p->fixes[k]);
        }
        ks_sb_putc(b, ']');
        ks_pj_key(b, "pairs", false);
        ks_sb_puts(b, p->pairs ? "true" : "false");
        ks_pj_key(b, "tried", false);
        ks_pj_i64(b, p->tried);
        ks_pj_key(b, "cause", false);
        ks_pj_str(b, p->cause);
        ks_pj_key(b, "group", false);
        ks_pj_i64(b, p->group);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "],\"groups\":[");
    for (uint32_t i = 0; i < r->ngroups; i++) {
        const ks_why_group *g = &r->groups[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"cause\":");
        ks_pj_str(b, g->cause);
        ks_pj_key(b, "pods", false);
        write_str_list(b, g->pods, g->npods);
        ks_pj_key(b, "rep", false);
        ks_pj_i64(b, g->representative);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "],\"clusterFixes\":[");
    for (uint32_t i = 0; i < r->ncluster_fixes; i++) {
        if (i) ks_sb_putc(b, ',');
        write_fix(pg, &r->cluster_fixes[i]);
    }
    ks_sb_puts(b, "],\"runs\":");
    ks_pj_i64(b, r->runs);
    ks_sb_putc(b, '}');
}

/* A node by position, or by name when the page has no such node (a
 * replay page has no cluster); -1 for none. */
static void write_node_ref(page *pg, const char *name) {
    int64_t pos = node_pos_name(pg, name);
    if (pos < 0 && name) ks_pj_str(&pg->b, name);
    else ks_pj_i64(&pg->b, pos);
}

static void write_compare_pods(page *pg, const ks_compare_pod *v, uint32_t n) {
    ks_strbuf *b = &pg->b;
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        const ks_compare_pod *p = &v[i];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"pod\":");
        ks_pj_str(b, p->pod);
        ks_pj_key(b, "s", false);
        ks_sb_putc(b, '[');
        ks_pj_str(b, ks_sim_state_name(p->state[0]));
        ks_sb_putc(b, ',');
        ks_pj_str(b, ks_sim_state_name(p->state[1]));
        ks_sb_puts(b, "],\"node\":[");
        write_node_ref(pg, p->node[0]);
        ks_sb_putc(b, ',');
        write_node_ref(pg, p->node[1]);
        ks_sb_puts(b, "],\"msg\":[");
        ks_pj_str(b, p->message[0]);
        ks_sb_putc(b, ',');
        ks_pj_str(b, p->message[1]);
        ks_sb_puts(b, "],\"why\":[");
        for (int s = 0; s < 2; s++) {
            const ks_compare_side_why *w = &p->why[s];
            if (s) ks_sb_putc(b, ',');
            ks_sb_puts(b, "{\"otherScored\":");
            ks_sb_puts(b, w->other_scored ? "true" : "false");
            ks_pj_key(b, "otherVerdict", false);
            ks_pj_str(b, w->other_verdict);
            ks_pj_key(b, "total", false);
            ks_pj_i64(b, w->total);
            ks_pj_key(b, "deltas", false);
            ks_sb_putc(b, '[');
            for (uint32_t k = 0; k < w->ndeltas; k++) {
                if (k) ks_sb_putc(b, ',');
                ks_sb_putc(b, '[');
                put_strref(pg, w->deltas[k].plugin);
                ks_sb_putc(b, ',');
                ks_pj_i64(b, w->deltas[k].delta);
                ks_sb_putc(b, ']');
            }
            ks_sb_puts(b, "]}");
        }
        ks_sb_puts(b, "]}");
    }
    ks_sb_putc(b, ']');
}

static void write_compare(page *pg, const ks_compare_result *r) {
    ks_strbuf *b = &pg->b;
    ks_sb_puts(b, "{\"sides\":[");
    for (int s = 0; s < 2; s++) {
        const ks_compare_side *d = &r->side[s];
        if (s) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"label\":");
        ks_pj_str(b, d->label);
        ks_pj_key(b, "scheduled", false);
        ks_pj_i64(b, d->scheduled);
        ks_pj_key(b, "unschedulable", false);
        ks_pj_i64(b, d->unschedulable);
        ks_pj_key(b, "gated", false);
        ks_pj_i64(b, d->gated);
        ks_pj_key(b, "preempted", false);
        ks_pj_i64(b, d->preempted);
        ks_pj_key(b, "nodesUsed", false);
        ks_pj_i64(b, d->nodes_used);
        ks_pj_key(b, "attempts", false);
        ks_pj_i64(b, (int64_t)d->attempts);
        ks_sb_putc(b, '}');
    }
    ks_sb_puts(b, "],\"pending\":");
    ks_pj_i64(b, r->npending);
    ks_pj_key(b, "moved", false);
    write_compare_pods(pg, r->moved, r->nmoved);
    ks_pj_key(b, "oneSide", false);
    write_compare_pods(pg, r->one_side, r->none_side);
    ks_pj_key(b, "resources", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nresources; i++) {
        const ks_compare_resource *x = &r->resources[i];
        char buf[160];
        if (i) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"name\":");
        ks_pj_str(b, x->name);
        snprintf(buf, sizeof buf, ",\"mean\":[%.2f,%.2f],\"sd\":[%.2f,%.2f]}", x->mean[0], x->mean[1], x->sd[0],
                 x->sd[1]);
        ks_sb_puts(b, buf);
    }
    ks_sb_putc(b, ']');
    ks_sb_putc(b, '}');
}

bool ks_report_html_why(FILE *out, const ks_cluster *cluster, const ks_why_result *r, const ks_report_inputs *in) {
    page pg;
    page_init(&pg, cluster);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"why\",\"inputs\":");
    write_inputs(&pg, in);
    write_cluster(&pg);
    ks_pj_key(b, "why", false);
    write_why(&pg, r);
    finish_data(&pg);
    bool ok = write_page(out, &pg, "ksched why");
    page_free(&pg);
    return ok;
}

bool ks_report_html_compare(FILE *out, const ks_cluster *cluster, const ks_compare_result *r,
                            const char *compare_path, const ks_report_inputs *in) {
    page pg;
    page_init(&pg, cluster);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"compare\",\"inputs\":");
    write_inputs(&pg, in);
    ks_pj_key(b, "compareConfig", false);
    ks_pj_str(b, compare_path);
    if (compare_path) {
        char *text = read_small_file(compare_path);
        ks_pj_key(b, "compareConfigText", false);
        ks_pj_str(b, text);
        free(text);
    }
    write_cluster(&pg);
    ks_pj_key(b, "compare", false);
    write_compare(&pg, r);
    finish_data(&pg);
    bool ok = write_page(out, &pg, "ksched compare");
    page_free(&pg);
    return ok;
}

bool ks_report_html_simulate(FILE *out, const ks_sim_result *r, const ks_why_result *why, const char *why_skipped,
                             const ks_report_inputs *in) {
    page pg;
    page_init(&pg, r->cluster);
    uint32_t rows = r->npods ? SCORE_ROWS_TOTAL / r->npods : SCORE_ROWS_MAX;
    pg.score_rows = rows > SCORE_ROWS_MAX ? SCORE_ROWS_MAX : rows < SCORE_ROWS_MIN ? SCORE_ROWS_MIN : rows;
    pg.preemptor = ks_xcalloc(r->nvictims ? r->nvictims : 1, sizeof(int64_t));
    for (uint32_t i = 0; i < r->nvictims; i++) pg.preemptor[i] = preemptor_of(r, &r->victims[i]);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"simulate\",\"inputs\":");
    write_inputs(&pg, in);
    write_time(&pg, "simStart", r->start_ns);
    write_time(&pg, "simEnd", r->end_ns);
    ks_pj_key(b, "attempts", false);
    ks_pj_i64(b, (int64_t)r->attempts);
    ks_pj_key(b, "scoreRows", false);
    ks_pj_i64(b, pg.score_rows);
    write_cluster(&pg);
    ks_pj_key(b, "pods", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->npods; i++) {
        if (i) ks_sb_putc(b, ',');
        write_pod(&pg, r, &r->pods[i], false, i);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "victims", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nvictims; i++) {
        if (i) ks_sb_putc(b, ',');
        write_pod(&pg, r, &r->victims[i], true, i);
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "explainOmitted", false);
    ks_pj_i64(b, (int64_t)pg.explain_omitted);
    if (why) {
        ks_pj_key(b, "why", false);
        write_why(&pg, why);
    } else if (why_skipped) {
        ks_pj_key(b, "whySkipped", false);
        ks_pj_str(b, why_skipped);
    }
    finish_data(&pg);
    bool ok = write_page(out, &pg, "ksched simulate");
    page_free(&pg);
    return ok;
}

bool ks_report_html_capacity(FILE *out, const ks_cluster *cluster, const ks_pod *tmpl,
                             const ks_capacity_result *r, const ks_report_inputs *in) {
    page pg;
    page_init(&pg, cluster);
    ks_strbuf *b = &pg.b;
    ks_sb_puts(b, "{\"kind\":\"capacity\",\"inputs\":");
    write_inputs(&pg, in);
    write_cluster(&pg);
    ks_pj_key(b, "capacity", false);
    ks_sb_puts(b, "{\"pod\":");
    char *name = ks_xasprintf("%s/%s", ks_str(tmpl->ns), ks_str(tmpl->name));
    ks_pj_str(b, name);
    free(name);
    ks_pj_key(b, "req", false);
    ks_sb_putc(b, '[');
    for (size_t k = 0; k < pg.ncols; k++) {
        if (k) ks_sb_putc(b, ',');
        ks_pj_i64(b, col_value(&pg.cols[k], &tmpl->requests, 1));
    }
    ks_sb_putc(b, ']');
    ks_pj_key(b, "replicas", false);
    ks_pj_i64(b, r->replicas);
    ks_pj_key(b, "stoppedAtMax", false);
    ks_sb_puts(b, r->hit_max ? "true" : "false");
    ks_pj_key(b, "perNode", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nper_node; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_pj_i64(b, node_pos(&pg, r->per_node[i].node));
        ks_sb_putc(b, ',');
        ks_pj_i64(b, r->per_node[i].replicas);
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, ']');
    if (r->message) {
        ks_pj_key(b, "msg", false);
        ks_pj_str(b, r->message);
    }
    ks_pj_key(b, "h", false);
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < r->nreasons; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_pj_i64(b, r->reasons[i].nodes);
        ks_sb_putc(b, ',');
        put_strref(&pg, r->reasons[i].reason);
        ks_sb_putc(b, ']');
    }
    ks_sb_puts(b, "]}");
    finish_data(&pg);
    bool ok = write_page(out, &pg, "ksched capacity");
    page_free(&pg);
    return ok;
}

/* ---- replay ---- */

/* Samples shown per series: past this, every k-th step is kept (levels
 * as sampled, per-step counts summed over the k steps), so a week at one
 * sample a minute is 2,520 points and the page stays small. */
#define REPLAY_POINTS_MAX 4000u

static void write_series_u32(ks_strbuf *b, const ks_tl_result *r, size_t stride, size_t off, bool sum) {
    ks_sb_putc(b, '[');
    for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
        int64_t v = 0;
        size_t end = i + stride < r->nsamples ? i + stride : r->nsamples;
        if (sum) {
            for (size_t j = i; j < end; j++) v += *(const uint32_t *)((const char *)&r->samples[j] + off);
        } else {
            v = *(const uint32_t *)((const char *)&r->samples[end - 1] + off);
        }
        if (n) ks_sb_putc(b, ',');
        ks_pj_i64(b, v);
    }
    ks_sb_putc(b, ']');
}

static void write_seconds(ks_strbuf *b, const char *key, int64_t ns) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", (double)ns / 1e9);
    ks_pj_key(b, key, false);
    ks_sb_puts(b, buf);
}

void ks_report_waits_add(ks_report_waits *w, int64_t at, int64_t pending_ns) {
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 256;
        w->at = ks_xrealloc(w->at, w->cap * sizeof(int64_t));
        w->pending = ks_xrealloc(w->pending, w->cap * sizeof(int64_t));
    }
    w->at[w->n] = at;
    w->pending[w->n++] = pending_ns;
}

void ks_report_waits_free(ks_report_waits *w) {
    free(w->at);
    free(w->pending);
    memset(w, 0, sizeof(*w));
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct wait_pair {
    int64_t at, pending;
} wait_pair;

static int cmp_wait_at(const void *a, const void *b) {
    const wait_pair *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* Per drawn sample: p50, p90, p99 (nearest rank, seconds) of the pending
 * time of the pods first bound since the previous drawn sample; null when
 * none was. [[p50...], [p90...], [p99...]]. */
static void write_wait_percentiles(ks_strbuf *b, const ks_tl_result *r, size_t stride, const ks_report_waits *w) {
    wait_pair *v = ks_xcalloc(w->n ? w->n : 1, sizeof(wait_pair));
    for (size_t i = 0; i < w->n; i++) v[i] = (wait_pair){w->at[i], w->pending[i]};
    if (w->n > 1) qsort(v, w->n, sizeof(wait_pair), cmp_wait_at);
    int64_t *bucket = ks_xcalloc(w->n ? w->n : 1, sizeof(int64_t));
    static const int pcts[3] = {50, 90, 99};
    ks_strbuf out[3];
    for (int q = 0; q < 3; q++) ks_sb_init(&out[q]);
    size_t k = 0;
    for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
        size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
        int64_t edge = r->samples[last].t;
        size_t nb = 0;
        while (k < w->n && v[k].at <= edge) bucket[nb++] = v[k++].pending;
        if (nb > 1) qsort(bucket, nb, sizeof(int64_t), cmp_i64);
        for (int q = 0; q < 3; q++) {
            if (n) ks_sb_putc(&out[q], ',');
            if (!nb) {
                ks_sb_puts(&out[q], "null");
                continue;
            }
            size_t rank = (nb * (size_t)pcts[q] + 99) / 100;
            char buf[32];
            snprintf(buf, sizeof buf, "%.3f", (double)bucket[rank ? rank - 1 : 0] / 1e9);
            ks_sb_puts(&out[q], buf);
        }
    }
    ks_sb_putc(b, '[');
    for (int q = 0; q < 3; q++) {
        if (q) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        ks_sb_puts(b, ks_sb_str(&out[q]));
        ks_sb_putc(b, ']');
        ks_sb_free(&out[q]);
    }
    ks_sb_putc(b, ']');
    free(bucket);
    free(v);
}

static void write_replay_run(page *pg, const ks_tl_result *r, size_t stride, const ks_report_waits *waits) {
    ks_strbuf *b = &pg->b;
    const ks_tl_summary *s = &r->summary;
    char t[48];
    ks_sb_puts(b, "{\"summary\":{\"start\":");
    ks_format_time(s->start, false, t, sizeof t);
    ks_pj_str(b, t);
    ks_pj_key(b, "end", false);
    ks_format_time(s->end, false, t, sizeof t);
    ks_pj_str(b, t);
    struct { const char *k; uint64_t v; } counts[] = {
        {"arrived", s->arrived}, {"scheduled", s->scheduled}, {"neverScheduled", s->never_scheduled},
        {"preempted", s->preempted}, {"evicted", s->evicted}, {"finished", s->finished}, {"deleted", s->deleted},
        {"attempts", s->attempts}, {"events", s->events}, {"recorded", s->recorded}, {"sameNode", s->same_node},
        {"recordedInfeasible", s->recorded_infeasible},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        ks_pj_key(b, counts[i].k, false);
        ks_pj_i64(b, (int64_t)counts[i].v);
    }
    write_seconds(b, "p50", s->pending_p50);
    write_seconds(b, "p90", s->pending_p90);
    write_seconds(b, "p99", s->pending_p99);
    write_seconds(b, "max", s->pending_max);
    ks_pj_key(b, "exact", false);
    ks_sb_puts(b, s->pending_exact ? "true" : "false");
    ks_pj_key(b, "bounded", false);
    ks_sb_puts(b, s->bounded ? "true" : "false");
    ks_pj_key(b, "res", false);
    ks_sb_putc(b, '[');
    for (uint32_t k = 0; k < s->nres; k++) {
        char buf[96];
        if (k) ks_sb_putc(b, ',');
        ks_sb_puts(b, "{\"name\":");
        ks_pj_str(b, s->res_names[k]);
        snprintf(buf, sizeof buf, ",\"peak\":%.4f,\"mean\":%.4f}", s->peak_alloc[k], s->mean_alloc[k]);
        ks_sb_puts(b, buf);
    }
    ks_sb_puts(b, "]},\"series\":{\"t\":[");
    int64_t t0 = r->nsamples ? r->samples[0].t : 0;
    for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
        size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
        char buf[32];
        snprintf(buf, sizeof buf, "%s%.0f", n ? "," : "", (double)(r->samples[last].t - t0) / 1e9);
        ks_sb_puts(b, buf);
    }
    ks_sb_putc(b, ']');
#define LEVEL(key, field)                                                                \
    ks_pj_key(b, key, false);                                                            \
    write_series_u32(b, r, stride, offsetof(ks_tl_sample, field), false)
#define PER_STEP(key, field)                                                             \
    ks_pj_key(b, key, false);                                                            \
    write_series_u32(b, r, stride, offsetof(ks_tl_sample, field), true)
    LEVEL("nodes", nodes);
    LEVEL("schedulable", schedulable_nodes);
    LEVEL("pending", pending);
    LEVEL("pendingLong", pending_long);
    LEVEL("running", running);
    PER_STEP("arrived", arrived);
    PER_STEP("scheduled", scheduled);
    PER_STEP("evictions", evictions);
    PER_STEP("preemptions", preemptions);
#undef LEVEL
#undef PER_STEP
    /* allocation per resource in tenths of a percent */
    ks_pj_key(b, "alloc", false);
    ks_sb_putc(b, '[');
    for (uint32_t k = 0; k < s->nres; k++) {
        if (k) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
            size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
            const ks_tl_sample *x = &r->samples[last];
            if (n) ks_sb_putc(b, ',');
            ks_pj_i64(b, x->allocatable[k] > 0 ? (int64_t)((double)x->allocated[k] * 1000.0 / (double)x->allocatable[k]) : 0);
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_putc(b, ']');
    if (waits) {
        ks_pj_key(b, "wait", false);
        write_wait_percentiles(b, r, stride, waits);
    }
    ks_pj_key(b, "extra", false);
    ks_sb_putc(b, '[');
    for (uint32_t e = 0; e < r->nextra; e++) {
        if (e) ks_sb_putc(b, ',');
        ks_sb_putc(b, '[');
        for (size_t i = 0, n = 0; i < r->nsamples; i += stride, n++) {
            size_t last = i + stride < r->nsamples ? i + stride - 1 : r->nsamples - 1;
            char buf[32];
            snprintf(buf, sizeof buf, "%s%.4g", n ? "," : "", r->samples[last].extra ? r->samples[last].extra[e] : 0.0);
            ks_sb_puts(b, buf);
        }
        ks_sb_putc(b, ']');
    }
    ks_sb_puts(b, "]}}");
}

bool ks_report_html_replay(FILE *out, size_t n, const char *const *names, const ks_tl_result *const *results,
                           const ks_report_waits *waits, int64_t pending_long_ns, const ks_compare_result *diff,
                           const ks_report_inputs *in) {
    ks_cluster *empty = ks_cluster_new();
    page pg;
    page_init(&pg, empty);
    ks_strbuf *b = &pg.b;
    size_t most = 0;
    for (size_t i = 0; i < n; i++)
        if (results[i]->nsamples > most) most = results[i]->nsamples;
    size_t stride = most > REPLAY_POINTS_MAX ? (most + REPLAY_POINTS_MAX - 1) / REPLAY_POINTS_MAX : 1;
    ks_sb_puts(b, "{\"kind\":\"replay\",\"inputs\":");
    write_inputs(&pg, in);
    ks_pj_key(b, "replay", false);
    ks_sb_puts(b, "{\"configs\":");
    write_str_list(b, (char *const *)names, (uint32_t)n);
    ks_pj_key(b, "stride", false);
    ks_pj_i64(b, (int64_t)stride);
    write_seconds(b, "pendingLong", pending_long_ns);
    ks_pj_key(b, "extra", false);
    write_str_list(b, n && results[0]->nextra ? (char *const *)results[0]->extra_names : NULL,
                   n ? results[0]->nextra : 0);
    ks_pj_key(b, "runs", false);
    ks_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) ks_sb_putc(b, ',');
        write_replay_run(&pg, results[i], stride, waits ? &waits[i] : NULL);
    }
    ks_sb_puts(b, "]}");
    if (diff) {
        ks_pj_key(b, "compare", false);
        write_compare(&pg, diff);
    }
    finish_data(&pg);
    bool ok = write_page(out, &pg, "ksched replay");
    page_free(&pg);
    ks_cluster_free(empty);
    return ok;
}
