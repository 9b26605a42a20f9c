/* Stand-ins for the object model and codec functions that libksched needs
 * but that have not landed yet (issue 2), included by the core's test
 * files only (one binary each). Every definition is weak: once the real
 * implementation is in libksched.a and gets linked, it wins and these are
 * unused. Delete this file (and its includes) when src/api and src/codec
 * are in.
 *
 * Only what the core tests exercise behaves (pods, nodes, labels,
 * resources); the rest returns "nothing". */
#ifndef KS_CORE_STUBS_H
#define KS_CORE_STUBS_H

#include "api/cluster.h"
#include "api/objects.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/quantity.h"
#include "api/resource.h"
#include "api/selector.h"
#include "api/taint.h"
#include "codec/tree.h"
#include "util/arena.h"

#include <ksched/ksched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEAK __attribute__((weak))

WEAK ks_id KS_RES_CPU, KS_RES_MEMORY, KS_RES_EPHEMERAL, KS_RES_PODS, KS_FIELD_METADATA_NAME;

WEAK void ks_api_init(void) {
    KS_RES_CPU = ks_intern("cpu");
    KS_RES_MEMORY = ks_intern("memory");
    KS_RES_EPHEMERAL = ks_intern("ephemeral-storage");
    KS_RES_PODS = ks_intern("pods");
    KS_FIELD_METADATA_NAME = ks_intern("metadata.name");
}

WEAK bool ks_labels_get(const ks_labels *l, ks_id key, ks_id *value) {
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->kv[i].key == key) {
            if (value) *value = l->kv[i].value;
            return true;
        }
    }
    return false;
}

static int cmp_label(const void *a, const void *b) {
    ks_id x = ((const ks_label *)a)->key, y = ((const ks_label *)b)->key;
    return x < y ? -1 : x > y;
}

WEAK bool ks_labels_sort(ks_labels *l) {
    qsort(l->kv, l->n, sizeof(*l->kv), cmp_label);
    for (uint32_t i = 1; i < l->n; i++)
        if (l->kv[i].key == l->kv[i - 1].key) return false;
    return true;
}

WEAK ks_rclass ks_resource_class(const char *name) {
    if (strcmp(name, "cpu") == 0) return KS_RCLASS_CPU;
    if (strcmp(name, "memory") == 0) return KS_RCLASS_MEMORY;
    if (strcmp(name, "ephemeral-storage") == 0) return KS_RCLASS_EPHEMERAL;
    if (strcmp(name, "pods") == 0) return KS_RCLASS_PODS;
    return KS_RCLASS_SCALAR;
}
WEAK bool ks_resource_is_extended(const char *name) { return strchr(name, '/') != NULL; }
WEAK bool ks_resource_is_hugepages(const char *name) { return strncmp(name, "hugepages-", 10) == 0; }

WEAK int64_t ks_resource_get(const ks_resource *r, ks_id name) {
    for (uint32_t i = 0; i < r->nscalar; i++)
        if (r->scalar_name[i] == name) return r->scalar_val[i];
    return 0;
}

WEAK bool ks_resource_set(ks_resource *r, ks_id name, int64_t v) {
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (r->scalar_name[i] == name) {
            r->scalar_val[i] = v;
            return true;
        }
    }
    if (r->nscalar == KS_MAX_SCALAR) return false;
    r->scalar_name[r->nscalar] = name;
    r->scalar_val[r->nscalar++] = v;
    return true;
}

WEAK bool ks_resource_add_scalar(ks_resource *r, ks_id name, int64_t v) {
    return ks_resource_set(r, name, ks_resource_get(r, name) + v);
}

WEAK void ks_resource_add(ks_resource *d, const ks_resource *s) {
    d->milli_cpu += s->milli_cpu;
    d->memory += s->memory;
    d->ephemeral_storage += s->ephemeral_storage;
    d->allowed_pods += s->allowed_pods;
    for (uint32_t i = 0; i < s->nscalar; i++) ks_resource_add_scalar(d, s->scalar_name[i], s->scalar_val[i]);
}

WEAK void ks_resource_sub(ks_resource *d, const ks_resource *s) {
    d->milli_cpu -= s->milli_cpu;
    d->memory -= s->memory;
    d->ephemeral_storage -= s->ephemeral_storage;
    d->allowed_pods -= s->allowed_pods;
    for (uint32_t i = 0; i < s->nscalar; i++) ks_resource_add_scalar(d, s->scalar_name[i], -s->scalar_val[i]);
}

WEAK void ks_resource_max(ks_resource *d, const ks_resource *s) {
    if (s->milli_cpu > d->milli_cpu) d->milli_cpu = s->milli_cpu;
    if (s->memory > d->memory) d->memory = s->memory;
}

WEAK bool ks_resource_equal(const ks_resource *a, const ks_resource *b) {
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory || a->ephemeral_storage != b->ephemeral_storage ||
        a->allowed_pods != b->allowed_pods || a->nscalar != b->nscalar)
        return false;
    for (uint32_t i = 0; i < a->nscalar; i++)
        if (ks_resource_get(b, a->scalar_name[i]) != a->scalar_val[i]) return false;
    return true;
}

/* ---- pods and nodes ------------------------------------------------------ */

WEAK ks_pod *ks_pod_new(void) {
    ks_pod *p = calloc(1, sizeof(*p));
    atomic_init(&p->refs, 1);
    p->arena = ks_arena_new(1024);
    return p;
}

/* A clone shares the original's arrays; it keeps the original alive
 * through `tree` (source_line -1 marks it). Test-only convention. */
WEAK ks_pod *ks_pod_clone(const ks_pod *orig) {
    ks_pod *p = malloc(sizeof(*p));
    *p = *orig;
    atomic_init(&p->refs, 1);
    p->arena = ks_arena_new(512);
    ks_pod_ref((ks_pod *)orig);
    p->tree = (struct ks_tree *)orig;
    p->source_line = -1;
    return p;
}

WEAK void ks_pod_unref(ks_pod *p) {
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1) return;
    if (p->source_line == -1) ks_pod_unref((ks_pod *)p->tree);
    ks_arena_free(p->arena);
    free(p);
}

WEAK const char *ks_pod_fullname(const ks_pod *p, char *buf, int n) {
    snprintf(buf, (size_t)n, "%s/%s", ks_str(p->ns), ks_str(p->name));
    return buf;
}

WEAK int32_t ks_pod_priority(const ks_pod *p) { return p->has_priority ? p->priority : 0; }
WEAK bool ks_pod_is_terminating(const ks_pod *p) { return p->has_deletion_ts; }

WEAK ks_node *ks_node_new(void) {
    ks_node *n = calloc(1, sizeof(*n));
    atomic_init(&n->refs, 1);
    n->arena = ks_arena_new(1024);
    return n;
}

WEAK void ks_node_unref(ks_node *n) {
    if (!n || atomic_fetch_sub(&n->refs, 1) != 1) return;
    ks_arena_free(n->arena);
    free(n);
}

WEAK ks_id ks_normalize_image(const char *image) { return ks_intern(image); }

/* ---- everything else: nothing -------------------------------------------- */

WEAK const char *ks_effect_name(ks_effect e) { (void)e; return ""; }
WEAK bool ks_tolerations_tolerate(const ks_toleration *t, uint32_t n, const ks_taint *taint) {
    (void)t; (void)n; (void)taint;
    return false;
}
WEAK bool ks_node_selector_matches(const ks_node_selector *s, const ks_labels *l, ks_id n) {
    (void)s; (void)l; (void)n;
    return false;
}
WEAK bool ks_node_selector_term_matches(const ks_node_selector_term *t, const ks_labels *l, ks_id n) {
    (void)t; (void)l; (void)n;
    return false;
}
WEAK void ks_quantity_format_bytes(int64_t v, char *buf, int n) { snprintf(buf, (size_t)n, "%lld", (long long)v); }
WEAK void ks_quantity_format_milli(int64_t v, char *buf, int n) { snprintf(buf, (size_t)n, "%lldm", (long long)v); }
WEAK bool ks_quantity_parse_int(const char *s, bool milli, int64_t *out, const char **err) {
    (void)s; (void)milli; (void)out;
    if (err) *err = "not available";
    return false;
}
WEAK const ks_args *ks_args_get(const ks_args *a, const char *key) { (void)a; (void)key; return NULL; }
WEAK bool ks_args_int(const ks_args *a, int64_t *out) { (void)a; (void)out; return false; }
WEAK const ks_args *ks_args_item(const ks_args *a, size_t i) { (void)a; (void)i; return NULL; }
WEAK size_t ks_args_len(const ks_args *a) { (void)a; return 0; }
WEAK const char *ks_args_string(const ks_args *a) { (void)a; return NULL; }
WEAK const ks_tree *kt_get(const ks_tree *t, const char *key) { (void)t; (void)key; return NULL; }
WEAK ks_tree *kt_new(ks_arena *a, kt_type type, int line) {
    ks_tree *t = ks_arena_alloc(a, sizeof(*t));
    t->type = type;
    t->line = line;
    return t;
}
WEAK void kt_map_add(ks_arena *a, ks_tree *map, const char *key, ks_tree *val) { (void)a; (void)map; (void)key; (void)val; }
WEAK void kt_map_set(ks_arena *a, ks_tree *map, const char *key, ks_tree *val) { (void)a; (void)map; (void)key; (void)val; }
WEAK void kt_seq_add(ks_arena *a, ks_tree *seq, ks_tree *item) { (void)a; (void)seq; (void)item; }
WEAK ks_tree *kt_string(ks_arena *a, const char *s, int line) { (void)s; return kt_new(a, KT_STRING, line); }
WEAK ks_tree *kt_int(ks_arena *a, int64_t v) { ks_tree *t = kt_new(a, KT_INT, 0); t->ival = v; return t; }
WEAK ks_tree *kt_bool(ks_arena *a, bool v) { ks_tree *t = kt_new(a, KT_BOOL, 0); t->bval = v; return t; }
WEAK ks_tree *kt_copy(ks_arena *a, const ks_tree *t) { (void)a; return (ks_tree *)t; }
WEAK bool kt_parse(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs, uint32_t *ndocs,
                   char **err) {
    (void)a; (void)name; (void)buf; (void)len; (void)docs; (void)ndocs;
    if (err) *err = strdup("codec not available");
    return false;
}

WEAK ks_cluster *ks_cluster_new(void) { return calloc(1, sizeof(ks_cluster)); }

WEAK void ks_cluster_free(ks_cluster *c) {
    if (!c) return;
    for (uint32_t i = 0; i < c->pods.n; i++) ks_pod_unref(c->pods.v[i]);
    for (uint32_t i = 0; i < c->nodes.n; i++) ks_node_unref(c->nodes.v[i]);
    free(c->pods.v);
    free(c->nodes.v);
    free(c);
}
WEAK bool ks_args_bool(const ks_args *a, bool *out) { (void)a; (void)out; return false; }
WEAK const ks_namespace *ks_cluster_namespace(const ks_cluster *c, ks_id name) { (void)c; (void)name; return NULL; }
WEAK bool ks_selector_matches(const ks_label_selector *sel, const ks_labels *labels) {
    (void)sel; (void)labels;
    return false;
}
WEAK const ks_owner_ref *ks_pod_controller(const ks_pod *p) { (void)p; return NULL; }

WEAK void ks_pod_compute_requests(ks_pod *p) { (void)p; }

#endif
