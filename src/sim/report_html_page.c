/* The HTML report's page: the cluster as data (resource columns, nodes
 * with allocatable and requested amounts, taints, labels, the pods on
 * them), the inputs, and the shell the data and the renderer go into.
 * Node rows are referred to by position and repeated text through a string
 * table, so a 1,000-node page stays small (docs/report.md, "Data"). */
#include "sim/report_html_page.h"
#include "api/dra.h"
#include "sim/report.h"
#include "util/intern.h"
#include "util/version.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The config file is embedded as text when it is smaller than this. */
#define CONFIG_TEXT_MAX (256u * 1024u)


void html_put_strref(html_page *pg, const char *s) { ks_pj_i64(&pg->b, ks_pj_string(&pg->strs, s)); }

int64_t html_node_pos(const html_page *pg, ks_id name) {
    uintptr_t p = (uintptr_t)ks_map_get(&pg->html_node_pos, (uint64_t)name + 1);
    return p ? (int64_t)p - 1 : -1;
}

int64_t html_node_pos_name(const html_page *pg, const char *name) {
    if (!name) return -1;
    ks_id id = ks_intern_find(name);
    return id ? html_node_pos(pg, id) : -1;
}

static bool pod_counts(const ks_pod *p) {
    if (!p->node_name || ks_pod_is_terminating(p)) return false;
    return p->phase != KS_PHASE_SUCCEEDED && p->phase != KS_PHASE_FAILED;
}

static int cmp_id_name(const void *a, const void *b) {
    return strcmp(ks_str(*(const ks_id *)a), ks_str(*(const ks_id *)b));
}

int html_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add_col(html_page *pg, html_column c) {
    KS_GROW(pg->cols, pg->cols_cap, pg->ncols + 1);
    pg->cols[pg->ncols++] = c;
}

/* cpu, memory, pods; ephemeral storage when some pod asks for it; every
 * scalar resource some node offers; one column per DRA driver that
 * publishes devices on a node (devices counted). */
static void choose_columns(html_page *pg) {
    const ks_cluster *c = pg->c;
    add_col(pg, (html_column){.kind = COL_CPU});
    add_col(pg, (html_column){.kind = COL_MEMORY});
    add_col(pg, (html_column){.kind = COL_PODS});
    bool eph = false;
    for (uint32_t i = 0; i < c->pods.n && !eph; i++) eph = c->pods.v[i]->requests.ephemeral_storage > 0;
    if (eph) add_col(pg, (html_column){.kind = COL_EPHEMERAL});

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
    for (size_t k = 0; k < nsc; k++) add_col(pg, (html_column){.kind = COL_SCALAR, .scalar = sc[k]});
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
    if (ndrv) qsort(drv, ndrv, sizeof(char *), html_cmp_str);
    for (size_t k = 0; k < ndrv; k++) add_col(pg, (html_column){.kind = COL_DRA, .driver = drv[k]});
    free(drv);
}

static void write_columns(html_page *pg) {
    ks_sb_putc(&pg->b, '[');
    for (size_t i = 0; i < pg->ncols; i++) {
        const html_column *col = &pg->cols[i];
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

int64_t html_col_value(const html_column *col, const ks_resource *r, int64_t pods) {
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
static void write_nodes(html_page *pg) {
    const ks_cluster *c = pg->c;
    uint32_t nn = c->nodes.n;
    ks_resource *req = ks_xcalloc(nn ? nn : 1, sizeof(ks_resource));
    int64_t *npods = ks_xcalloc(nn ? nn : 1, sizeof(int64_t));
    uint32_t **pods = ks_xcalloc(nn ? nn : 1, sizeof(uint32_t *));
    uint32_t *pods_cap = ks_xcalloc(nn ? nn : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        if (!pod_counts(p)) continue;
        int64_t k = html_node_pos(pg, p->node_name);
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
        html_put_strref(pg, node_zone(n));
        if (n->unschedulable) ks_sb_puts(b, ",\"u\":1");
        ks_sb_puts(b, ",\"a\":[");
        for (size_t k = 0; k < pg->ncols; k++) {
            const html_column *col = &pg->cols[k];
            int64_t v = html_col_value(col, &n->allocatable, n->allocatable.allowed_pods);
            int64_t used = html_col_value(col, &req[i], npods[i]);
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
            html_put_strref(pg, s);
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
            html_put_strref(pg, s);
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

void html_write_time(html_page *pg, const char *key, int64_t ns) {
    char t[48];
    ks_format_time(ns, false, t, sizeof t);
    ks_pj_key(&pg->b, key, false);
    ks_pj_str(&pg->b, t);
}

/* A sorted list of node positions as inclusive ranges: [a,b,c,d] is a..b
 * and c..d. Nodes that passed (or failed alike) are mostly contiguous. */

void html_page_init(html_page *pg, const ks_cluster *c) {
    memset(pg, 0, sizeof(*pg));
    ks_sb_init(&pg->b);
    ks_pj_strings_init(&pg->strs);
    pg->c = c;
    ks_map_init(&pg->html_node_pos);
    for (uint32_t i = 0; i < c->nodes.n; i++)
        ks_map_put(&pg->html_node_pos, (uint64_t)c->nodes.v[i]->name + 1, (void *)(uintptr_t)(i + 1));
    choose_columns(pg);
}

void html_page_free(html_page *pg) {
    ks_sb_free(&pg->b);
    ks_pj_strings_free(&pg->strs);
    ks_map_free(&pg->html_node_pos);
    free(pg->cols);
    free(pg->preemptor);
}

char *html_read_small_file(const char *path) {
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
void html_write_inputs(html_page *pg, const ks_report_inputs *in) {
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
        char *text = html_read_small_file(in->config_path);
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

void html_write_cluster(html_page *pg) {
    ks_strbuf *b = &pg->b;
    ks_pj_key(b, "res", false);
    write_columns(pg);
    ks_pj_key(b, "nodes", false);
    write_nodes(pg);
}

/* The page: shell, CSS, the data (JSON in a script element; see
 * page_json.h for why it cannot end the element) and the renderer. */
bool html_write_page(FILE *out, html_page *pg, const char *title) {
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
void html_finish_data(html_page *pg) {
    ks_pj_key(&pg->b, "strings", false);
    ks_pj_strings_write(&pg->b, &pg->strs);
    ks_sb_putc(&pg->b, '}');
}

void html_write_str_list(ks_strbuf *b, char *const *v, uint32_t n) {
    ks_sb_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i) ks_sb_putc(b, ',');
        ks_pj_str(b, v[i]);
    }
    ks_sb_putc(b, ']');
}

/* A node by position, or by name when the page has no such node (a
 * replay page has no cluster); -1 for none. */
void html_write_node_ref(html_page *pg, const char *name) {
    int64_t pos = html_node_pos_name(pg, name);
    if (pos < 0 && name) ks_pj_str(&pg->b, name);
    else ks_pj_i64(&pg->b, pos);
}

