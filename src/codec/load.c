/* Loading manifests from files, directories and stdin, all or nothing. */
#include "api/validation.h"
#include "codec/decode_internal.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char **v;
    size_t n, cap;
} strvec;

static void sv_push(strvec *s, char *x) {
    KS_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = x;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool manifest_name(const char *name) {
    size_t n = strlen(name);
    return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) || (n > 4 && strcmp(name + n - 4, ".yml") == 0) ||
           (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

/* Every manifest below dir (recursively) into out; sorted by the caller. */
static void walk(const char *dir, strvec *out, ks_errors *errs, int depth) {
    DIR *d = opendir(dir);
    if (!d) {
        ks_errors_add(errs, "%s: %s", dir, strerror(errno));
        return;
    }
    if (depth > 64) {
        closedir(d);
        ks_errors_add(errs, "%s: directories nested too deeply", dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        size_t dl = strlen(dir);
        char *path = ks_xasprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) {
            /* a dangling link or a file gone meanwhile: only an error when
             * it would have been read */
            if (manifest_name(e->d_name)) ks_errors_add(errs, "%s: %s", path, strerror(errno));
            free(path);
        } else if (S_ISDIR(st.st_mode)) {
            walk(path, out, errs, depth + 1);
            free(path);
        } else if (S_ISREG(st.st_mode) && manifest_name(e->d_name)) {
            sv_push(out, path);
        } else {
            free(path);
        }
    }
    closedir(d);
}

static char *read_stream(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = ks_xmalloc(cap);
    for (;;) {
        if (n == cap) buf = ks_xrealloc(buf, cap *= 2);
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Parse one buffer and decode its documents into tmp. */
static void load_one(ks_cluster *tmp, const char *name, const char *buf, size_t len, uint32_t *index,
                     ks_errors *errs) {
    ks_arena *a = ks_arena_new(len < 4096 ? 4096 : len + len / 2);
    ks_docref *doc = ks_docref_new(a);
    const char *kept_name = ks_arena_strdup(a, name);
    ks_tree **docs;
    uint32_t ndocs;
    char *err = NULL;
    if (!kt_parse(a, kept_name, buf, len, &docs, &ndocs, &err)) {
        ks_errors_take(errs, err);
        ks_docref_unref(doc);
        return;
    }
    ks_decode_ctx ctx = {.file = kept_name, .doc = doc, .next_input_index = *index, .errs = errs};
    for (uint32_t i = 0; i < ndocs; i++) ks_decode_document(tmp, docs[i], &ctx);
    *index = ctx.next_input_index;
    ks_docref_unref(doc); /* the objects hold their own references */
}

/* "file:line", or just "file" for sources without lines (JSON). */
static const char *where(const char *file, int line, char *buf, size_t n) {
    if (!file) file = "<input>";
    if (line > 0) snprintf(buf, n, "%s:%d", file, line);
    else snprintf(buf, n, "%s", file);
    return buf;
}

/* Where an object came from, for messages about it. */
#define WHERE(o, buf) where((o)->source_file, (o)->source_line, buf, sizeof(buf))

/* Objects are identified by kind and namespace/name; a second definition
 * is an error, whether in this load or an earlier one. */
static void check_duplicates(const ks_cluster *c, const ks_cluster *tmp, ks_errors *errs) {
    ks_map seen;
    ks_map_init(&seen);
#define CHECK(vec, kindname, nsexpr)                                                   \
    do {                                                                               \
        ks_map_clear(&seen);                                                           \
        for (int pass = 0; pass < 2; pass++) {                                         \
            const ks_cluster *src = pass ? tmp : c;                                    \
            for (uint32_t i = 0; i < src->vec.n; i++) {                                \
                __typeof__(src->vec.v[0]) o = src->vec.v[i];                           \
                uint64_t key = ((uint64_t)(nsexpr) << 32 | o->name) + 1;               \
                __typeof__(o) prev = ks_map_put(&seen, key, (void *)o);                \
                if (prev && pass) {                                                    \
                    const char *ns_ = (nsexpr) ? ks_str(nsexpr) : NULL;                \
                    char w1_[600], w2_[600];                                           \
                    ks_errors_add(errs, "%s: %s %s%s%s: already defined at %s",       \
                                  WHERE(o, w1_), kindname, ns_ ? ns_ : "",             \
                                  ns_ ? "/" : "", ks_str(o->name), WHERE(prev, w2_));  \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    } while (0)
    CHECK(pods, "pod", o->ns);
    CHECK(nodes, "node", 0);
    CHECK(priority_classes, "priorityclass", 0);
    CHECK(namespaces, "namespace", 0);
    CHECK(pvs, "persistentvolume", 0);
    CHECK(pvcs, "persistentvolumeclaim", o->ns);
    CHECK(storage_classes, "storageclass", 0);
    CHECK(csinodes, "csinode", 0);
    CHECK(csi_drivers, "csidriver", 0);
    CHECK(csi_capacities, "csistoragecapacity", o->ns);
    CHECK(volume_attachments, "volumeattachment", 0);
    CHECK(pdbs, "poddisruptionbudget", o->ns);
    CHECK(pod_groups, "podgroup", o->ns);
    CHECK(resource_claims, "resourceclaim", o->ns);
    CHECK(claim_templates, "resourceclaimtemplate", o->ns);
    CHECK(resource_slices, "resourceslice", 0);
    CHECK(device_classes, "deviceclass", 0);
    CHECK(device_taint_rules, "devicetaintrule", 0);
#undef CHECK
    /* workloads: one namespace per kind */
    for (int k = 0; k < KS_WORKLOAD_NKINDS; k++) {
        ks_map_clear(&seen);
        for (int pass = 0; pass < 2; pass++) {
            const ks_cluster *src = pass ? tmp : c;
            for (uint32_t i = 0; i < src->workloads.n; i++) {
                ks_workload *o = src->workloads.v[i];
                if ((int)o->kind != k) continue;
                ks_workload *prev = ks_map_put(&seen, ((uint64_t)o->ns << 32 | o->name) + 1, o);
                char w1[600], w2[600];
                if (prev && pass)
                    ks_errors_add(errs, "%s: %s %s/%s: already defined at %s", WHERE(o, w1),
                                  ks_workload_kind_lower((ks_workload_kind)k),
                                  ks_str(o->ns), ks_str(o->name), WHERE(prev, w2));
            }
        }
    }
    ks_map_free(&seen);
}

/* The line of a field of an object's document (metadata.name, ...), else
 * the object's own line. */
static int field_line(const ks_tree *tree, int line, const char *a, const char *b) {
    const ks_tree *t = kt_get(tree, a);
    if (b) t = kt_get(t, b);
    return t && t->line ? t->line : line;
}

/* One object's identity in messages: "pod ns/name", "node name". */
typedef struct {
    ks_errors *errs;
    const char *file;
    const char *kind;
    const char *ns; /* NULL: cluster-scoped */
    const char *name;
} vctx;

/* An API server field error: "FIELD: Invalid value: "V": MSG", one per
 * message of the check. */
static void invalid(vctx *v, int line, const char *field, const char *value, int nmsgs,
                    const char **msgs) {
    for (int i = 0; i < nmsgs; i++) {
        ks_strbuf b;
        ks_sb_init(&b);
        ks_sb_quote_str(&b, value);
        char w[600];
        ks_errors_add(v->errs, "%s: %s %s%s%s: %s: Invalid value: %s: %s",
                      where(v->file, line, w, sizeof(w)), v->kind, v->ns ? v->ns : "",
                      v->ns ? "/" : "", v->name, field, ks_sb_str(&b), msgs[i]);
        ks_sb_free(&b);
    }
}

static void check_name(vctx *v, int line, bool label_rules) {
    const char *msgs[KS_VALID_MAX_MSGS];
    int n = label_rules ? ks_valid_dns1123_label(v->name, msgs)
                        : ks_valid_dns1123_subdomain(v->name, msgs);
    invalid(v, line, "metadata.name", v->name, n, msgs);
}

/* metav1 ValidateLabels: keys are qualified names, values label values;
 * the field path is the map's, as upstream reports it. */
static void check_labels(vctx *v, int line, const char *field, const ks_labels *l) {
    const char *msgs[KS_VALID_MAX_MSGS];
    for (uint32_t i = 0; i < l->n; i++) {
        const char *k = ks_str(l->kv[i].key), *val = ks_str(l->kv[i].value);
        invalid(v, line, field, k, ks_valid_qualified_name(k, msgs), msgs);
        invalid(v, line, field, val, ks_valid_label_value(val, msgs), msgs);
    }
}

/* What the API server's validation would refuse in the new objects:
 * names, namespaces and labels of pods, nodes, namespaces and
 * PriorityClasses, pods' nodeSelector, PriorityClass values. Objects
 * dumped from a cluster pass by construction. */
static void validate(const ks_cluster *c, const ks_cluster *tmp, ks_errors *errs) {
    for (uint32_t i = 0; i < tmp->pods.n; i++) {
        const ks_pod *p = tmp->pods.v[i];
        vctx v = {errs, p->source_file, "pod", ks_str(p->ns), ks_str(p->name)};
        int line = p->source_line;
        check_name(&v, field_line(p->tree, line, "metadata", "name"), false);
        const char *msgs[KS_VALID_MAX_MSGS];
        invalid(&v, field_line(p->tree, line, "metadata", "namespace"), "metadata.namespace", v.ns,
                ks_valid_dns1123_label(v.ns, msgs), msgs);
        check_labels(&v, field_line(p->tree, line, "metadata", "labels"), "metadata.labels", &p->labels);
        check_labels(&v, field_line(p->tree, line, "spec", "nodeSelector"), "spec.nodeSelector",
                     &p->node_selector);
    }
    for (uint32_t i = 0; i < tmp->nodes.n; i++) {
        const ks_node *n = tmp->nodes.v[i];
        vctx v = {errs, n->source_file, "node", NULL, ks_str(n->name)};
        check_name(&v, field_line(n->tree, n->source_line, "metadata", "name"), false);
        check_labels(&v, field_line(n->tree, n->source_line, "metadata", "labels"), "metadata.labels",
                     &n->labels);
    }
    for (uint32_t i = 0; i < tmp->namespaces.n; i++) {
        const ks_namespace *ns = tmp->namespaces.v[i];
        vctx v = {errs, ns->source_file, "namespace", NULL, ks_str(ns->name)};
        check_name(&v, field_line(ns->tree, ns->source_line, "metadata", "name"), true);
        check_labels(&v, field_line(ns->tree, ns->source_line, "metadata", "labels"),
                     "metadata.labels", &ns->labels);
    }
    /* system classes as every API server defines them */
    static const struct {
        const char *name;
        int32_t value;
    } sys[] = {{"system-node-critical", 2000001000}, {"system-cluster-critical", 2000000000}};
    for (uint32_t i = 0; i < tmp->priority_classes.n; i++) {
        const ks_priority_class *pc = tmp->priority_classes.v[i];
        vctx v = {errs, pc->source_file, "priorityclass", NULL, ks_str(pc->name)};
        int name_line = field_line(pc->tree, pc->source_line, "metadata", "name");
        check_name(&v, name_line, false);
        char w[600];
        if (strncmp(v.name, "system-", 7) == 0) {
            char *why = NULL;
            size_t k = 0;
            while (k < 2 && strcmp(sys[k].name, v.name) != 0) k++;
            if (k == 2) why = ks_xasprintf("%s is not a known system priority class", v.name);
            else if (pc->value != sys[k].value)
                why = ks_xasprintf("value of %s PriorityClass must be %d", v.name, sys[k].value);
            else if (pc->global_default)
                why = ks_xasprintf("globalDefault of %s PriorityClass must be false", v.name);
            if (why)
                ks_errors_add(errs, "%s: priorityclass %s: metadata.name: Forbidden: priority class "
                              "names with 'system-' prefix are reserved for system use only. "
                              "error: %s", where(v.file, name_line, w, sizeof(w)), v.name, why);
            free(why);
        } else if (pc->value > 1000000000) {
            ks_errors_add(errs, "%s: priorityclass %s: value: Forbidden: maximum allowed value of a "
                          "user defined priority is 1000000000",
                          where(v.file, field_line(pc->tree, pc->source_line, "value", NULL),
                                w, sizeof(w)), v.name);
        }
        /* a second global default: admission refuses it, but a cluster
         * can hold two after a race; the lowest value wins, as upstream */
        if (pc->global_default) {
            const ks_priority_class *first = NULL;
            for (uint32_t j = 0; j < c->priority_classes.n && !first; j++)
                if (c->priority_classes.v[j]->global_default) first = c->priority_classes.v[j];
            for (uint32_t j = 0; j < i && !first; j++)
                if (tmp->priority_classes.v[j]->global_default) first = tmp->priority_classes.v[j];
            if (first)
                ks_errors_warn(errs, "%s: priorityclass %s: globalDefault: PriorityClass %s is already "
                               "marked as default. Only one default can exist (an API server would "
                               "refuse this class; ksched uses the default with the lowest value)",
                               where(v.file, pc->source_line, w, sizeof(w)), v.name,
                               ks_str(first->name));
        }
    }
}

/* Priority admission of the new pods, against every class known (loaded
 * before or now). */
static void admit(const ks_cluster *c, ks_cluster *tmp, ks_errors *errs) {
    ks_cluster view;
    memset(&view, 0, sizeof(view));
    for (uint32_t i = 0; i < c->priority_classes.n; i++) KS_VEC_PUSH(view.priority_classes, c->priority_classes.v[i]);
    for (uint32_t i = 0; i < tmp->priority_classes.n; i++)
        KS_VEC_PUSH(view.priority_classes, tmp->priority_classes.v[i]);
    for (uint32_t i = 0; i < tmp->pods.n; i++) {
        ks_pod *p = tmp->pods.v[i];
        ks_admit_result r;
        ks_pod_admit_report(p, &view, &r);
        if (!r.msg) continue;
        /* the line of the field when the document is at hand */
        const char *leaf = strrchr(r.field, '.') + 1;
        char w[600];
        where(p->source_file, field_line(p->tree, p->source_line, "spec", leaf), w, sizeof(w));
        if (r.refused)
            ks_errors_add(errs, "%s: pod %s/%s: %s: %s", w, ks_str(p->ns), ks_str(p->name), r.field,
                          r.msg);
        else
            ks_errors_warn(errs, "%s: pod %s/%s: %s: %s (an API server would refuse this pod; "
                           "ksched keeps its spec.priority)",
                           w, ks_str(p->ns), ks_str(p->name), r.field, r.msg);
        free(r.msg);
    }
    free(view.priority_classes.v);
}

/* A workload given again in a later file (a manifest after a snapshot or
 * a kubectl List) replaces the earlier definition, as `kubectl apply`
 * does, and keeps its uid (the pods it owns point at it). Twice in one
 * file stays an error (check_duplicates). */
static void drop_workloads(ks_cluster *c, ks_map *gone) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->workloads.n; i++) {
        ks_workload *w = c->workloads.v[i];
        if (ks_map_get(gone, (uint64_t)(uintptr_t)w)) KS_OBJECT_UNREF(w);
        else c->workloads.v[k++] = w;
    }
    c->workloads.n = k;
}

static void replace_workloads(ks_cluster *c, ks_cluster *tmp) {
    ks_map seen, gone;
    ks_map_init(&seen);
    ks_map_init(&gone);
    for (int kind = 0; kind < KS_WORKLOAD_NKINDS; kind++) {
        ks_map_clear(&seen);
        for (int pass = 0; pass < 2; pass++) {
            ks_cluster *src = pass ? tmp : c;
            for (uint32_t i = 0; i < src->workloads.n; i++) {
                ks_workload *o = src->workloads.v[i];
                if ((int)o->kind != kind) continue;
                uint64_t key = ((uint64_t)o->ns << 32 | o->name) + 1;
                ks_workload *prev = ks_map_get(&seen, key);
                if (pass && prev && prev->source_file && o->source_file &&
                    strcmp(prev->source_file, o->source_file) != 0) {
                    if (!o->uid && prev->uid) o->uid = ks_arena_strdup(o->arena, prev->uid);
                    ks_map_put(&gone, (uint64_t)(uintptr_t)prev, (void *)1);
                    ks_map_del(&seen, key);
                }
                if (!ks_map_get(&seen, key)) ks_map_put(&seen, key, o);
            }
        }
    }
    if (gone.len) {
        drop_workloads(c, &gone);
        drop_workloads(tmp, &gone);
    }
    ks_map_free(&seen);
    ks_map_free(&gone);
}

static bool finish(ks_cluster *c, ks_cluster *tmp, uint32_t index, ks_errors *errs, size_t nerr0) {
    replace_workloads(c, tmp);
    check_duplicates(c, tmp, errs);
    validate(c, tmp, errs);
    /* a class that failed to decode would make its pods' errors lie */
    if (errs->n == nerr0) admit(c, tmp, errs);
    bool ok = errs->n == nerr0;
    if (ok) {
        ks_cluster_move(c, tmp);
        c->next_input_index = index;
        ks_cluster_add_implicit_namespaces(c);
    }
    ks_cluster_free(tmp);
    return ok;
}

bool ks_load_buffer(ks_cluster *c, const char *name, const char *buf, size_t len, ks_errors *errs) {
    size_t nerr0 = errs->n;
    ks_cluster *tmp = ks_cluster_new();
    uint32_t index = c->next_input_index;
    load_one(tmp, name, buf, len, &index, errs);
    return finish(c, tmp, index, errs, nerr0);
}

bool ks_load_paths(ks_cluster *c, const char *const *paths, size_t n, ks_errors *errs) {
    size_t nerr0 = errs->n;
    ks_cluster *tmp = ks_cluster_new();
    uint32_t index = c->next_input_index;
    for (size_t i = 0; i < n; i++) {
        const char *path = paths[i];
        strvec files = {0};
        bool is_stdin = strcmp(path, "-") == 0;
        struct stat st;
        if (is_stdin) {
            sv_push(&files, ks_xstrdup("-"));
        } else if (stat(path, &st) != 0) {
            ks_errors_add(errs, "%s: %s", path, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            walk(path, &files, errs, 0);
            qsort(files.v, files.n, sizeof(char *), cmp_str);
        } else {
            sv_push(&files, ks_xstrdup(path));
        }
        for (size_t j = 0; j < files.n; j++) {
            size_t len = 0;
            char *buf;
            if (is_stdin) {
                buf = read_stream(stdin, &len);
            } else {
                FILE *f = fopen(files.v[j], "rb");
                buf = f ? read_stream(f, &len) : NULL;
                if (f) fclose(f);
            }
            if (!buf) {
                ks_errors_add(errs, "%s: %s", is_stdin ? "<stdin>" : files.v[j], strerror(errno));
            } else {
                load_one(tmp, is_stdin ? "<stdin>" : files.v[j], buf, len, &index, errs);
                free(buf);
            }
            free(files.v[j]);
        }
        free(files.v);
    }
    return finish(c, tmp, index, errs, nerr0);
}
