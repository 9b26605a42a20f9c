/* The HTML report's page under construction, shared by the writers of
 * each page kind (report_html.c: simulate and capacity; report_html_why.c:
 * why and compare; report_html_replay.c: replay). A page is the JSON data
 * being built, its string table, the cluster's nodes by position and the
 * resource columns; html_write_page wraps it in the shell with the
 * stylesheet and the renderer. Internal to src/sim. */
#ifndef KS_REPORT_HTML_PAGE_H
#define KS_REPORT_HTML_PAGE_H

#include "sim/page_json.h"
#include "sim/report_html.h"
#include "util/hash.h"
#include "util/strbuf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { COL_CPU, COL_MEMORY, COL_PODS, COL_EPHEMERAL, COL_SCALAR, COL_DRA } col_kind;

typedef struct html_column {
    col_kind kind;
    ks_id scalar;        /* COL_SCALAR */
    const char *driver;  /* COL_DRA */
} html_column;

typedef struct html_page {
    ks_strbuf b;
    ks_pj_strings strs;
    const ks_cluster *c;
    ks_map html_node_pos;     /* node name id + 1 -> position + 1 */
    html_column *cols;
    size_t ncols, cols_cap;
    /* simulate pages */
    uint32_t score_rows; /* per attempt */
    size_t explain_omitted;
    int64_t *preemptor;  /* per victim: the pending pod's position, -1 */
} html_page;


/* Start a page on cluster: nodes by position, resource columns. */
void html_page_init(html_page *pg, const ks_cluster *c);
void html_page_free(html_page *pg);
/* s through the string table: its index. */
void html_put_strref(html_page *pg, const char *s);
/* A node's position in the cluster, -1 when not there. */
int64_t html_node_pos(const html_page *pg, ks_id name);
int64_t html_node_pos_name(const html_page *pg, const char *name);
/* A node by position, or by name when the page has no such node; -1 for none. */
void html_write_node_ref(html_page *pg, const char *name);
/* The column's amount in r (pods: the count given). */
int64_t html_col_value(const html_column *col, const ks_resource *r, int64_t pods);
/* ,"key":"RFC 3339 time" */
void html_write_time(html_page *pg, const char *key, int64_t ns);
void html_write_str_list(ks_strbuf *b, char *const *v, uint32_t n);
int html_cmp_str(const void *a, const void *b);
/* A text file's contents when small enough to embed, else NULL (malloc'd). */
char *html_read_small_file(const char *path);
/* "inputs" object; "res" and "nodes". */
void html_write_inputs(html_page *pg, const ks_report_inputs *in);
void html_write_cluster(html_page *pg);
/* Append the string table and close the data object. */
void html_finish_data(html_page *pg);
/* report_html_why.c: "why" (reasons, node classes, fixes) and "compare"
 * objects, for the pages that carry them. */
void html_write_why(html_page *pg, const ks_why_result *r);
void html_write_compare(html_page *pg, const ks_compare_result *r);
/* The whole file: shell, stylesheet, data, renderer. false on a write error. */
bool html_write_page(FILE *out, html_page *pg, const char *title);

#endif
