#include "sim/replay_input.h"
#include "codec/decode.h"
#include "sim/openb.h"
#include "config/config.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const format_names[] = {
    [KS_TLF_MANIFESTS] = "manifests",       [KS_TLF_NATIVE] = "events",
    [KS_TLF_AUDIT] = "audit log",           [KS_TLF_OPENB_PODS] = "openb pods",
    [KS_TLF_OPENB_NODES] = "openb nodes",
};

const char *ks_tl_format_name(ks_tl_format f) { return format_names[f]; }

/* ---- detection ------------------------------------------------------------------- */

static bool has_col(const char *header, const char *col) {
    size_t n = strlen(col);
    for (const char *p = header; (p = strstr(p, col)); p += n) {
        bool start = p == header || p[-1] == ',';
        bool end = p[n] == ',' || p[n] == '\0' || p[n] == '\r' || p[n] == '\n';
        if (start && end) return true;
    }
    return false;
}

bool ks_tl_detect(const char *path, ks_tl_format *out, char **err) {
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) != 0) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    *out = KS_TLF_MANIFESTS;
    if (!strcmp(path, "-") || S_ISDIR(st.st_mode)) return true;
    FILE *f = fopen(path, "r");
    if (!f) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        char *p = line;
        if (!strncmp(p, "\xEF\xBB\xBF", 3)) p += 3;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p || *p == '#' || !strncmp(p, "---", 3)) continue;
        if (has_col(p, "cpu_milli") && has_col(p, "creation_time")) *out = KS_TLF_OPENB_PODS;
        else if (has_col(p, "cpu_milli") && has_col(p, "sn")) *out = KS_TLF_OPENB_NODES;
        else if (*p == '{') {
            /* one JSON object per line: an event, an audit Event or a manifest */
            json_like:;
            ks_arena *a = ks_arena_new(4096);
            ks_tree **docs = NULL;
            uint32_t nd = 0;
            char *perr = NULL;
            if (kt_parse(a, path, p, strlen(p), &docs, &nd, &perr) && nd == 1 && docs[0]->type == KT_MAP) {
                const ks_tree *kind = kt_get(docs[0], "kind"), *av = kt_get(docs[0], "apiVersion");
                if (kt_get(docs[0], "at")) *out = KS_TLF_NATIVE;
                else if (kind && kind->type == KT_STRING && !strcmp(kind->text, "Event") && av &&
                         av->type == KT_STRING && !strncmp(av->text, "audit.k8s.io/", 13))
                    *out = KS_TLF_AUDIT;
            }
            free(perr);
            ks_arena_free(a);
        } else if (!strncmp(p, "at:", 3) || !strncmp(p, "- at:", 5)) {
            *out = KS_TLF_NATIVE;
        } else if (!strncmp(p, "- {", 3)) {
            p += 2;
            goto json_like;
        }
        break;
    }
    free(line);
    fclose(f);
    return true;
}

/* ---- the reader ------------------------------------------------------------------ */

/* Audit logs: the recorded bindings, found in a first pass, so that a pod's
 * first attempt can be checked against the node its scheduler chose. */
typedef struct binding {
    char *name; /* ns/name */
    char *node;
    struct binding *next;
} binding;


struct ks_tl_reader {
    ks_tl_format f;
    char *path;
    FILE *in;
    char *line;
    size_t cap;
    int lineno;
    /* native YAML: every document (or list item) read at open */
    bool yaml;
    ks_arena *arena;
    ks_tree **items;
    uint32_t nitems, next;
    /* time order */
    bool have_last, last_abs;
    int64_t last;
    /* openb: the task list, read whole */
    ks_openb_tasks tasks;
    /* audit */
    ks_map bindings; /* hash of ns/name -> binding list */
    uint64_t skipped;
};

static char *line_err(const ks_tl_reader *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static char *line_err(const ks_tl_reader *r, int line, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ks_xasprintf("%s:%d: %s", r->path, line, msg);
}

/* A decoder's first error. Trees built from JSON have no lines, so the
 * decoder names the file alone: the line is put in. (The file name is
 * interned by the decoder: it must not differ per line.) */
static char *decode_err(const char *path, int line, const ks_errors *errs) {
    const char *e = errs->n ? errs->v[0] : "invalid object";
    size_t n = strlen(path);
    if (line > 0 && !strncmp(e, path, n) && e[n] == ':' && e[n + 1] == ' ')
        return ks_xasprintf("%s:%d:%s", path, line, e + n + 1);
    return ks_xstrdup(e);
}

static const char *str_of(const ks_tree *t, const char *key) {
    const ks_tree *v = kt_get(t, key);
    return v && v->type == KT_STRING ? v->text : NULL;
}

/* A Pod or a Node decoded from t (the node keeps a copy of its tree: node
 * changes re-decode it), or a workload (*wl, referenced: Deployment,
 * ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController). */
static bool decode_object(ks_tl_reader *r, const ks_tree *t, int line, ks_pod **pod, ks_node **node, ks_workload **wl,
                          char **err) {
    const char *kind = str_of(t, "kind");
    const char *file = r->path;
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = false;
    if (kind && !strcmp(kind, "Pod")) {
        ks_decode_ctx ctx = {.file = file, .errs = &errs};
        *pod = ks_decode_pod(t, &ctx);
        ok = *pod != NULL;
    } else if (kind && !strcmp(kind, "Node")) {
        ks_arena *a = ks_arena_new(4096);
        ks_tree *copy = kt_copy(a, t);
        ks_docref *doc = ks_docref_new(a);
        ks_decode_ctx ctx = {.file = file, .doc = doc, .errs = &errs};
        *node = ks_decode_node(copy, &ctx);
        ks_docref_unref(doc);
        ok = *node != NULL;
    } else if (kind && wl) {
        ks_arena *a = ks_arena_new(4096);
        ks_tree *copy = kt_copy(a, t);
        ks_docref *doc = ks_docref_new(a);
        ks_decode_ctx ctx = {.file = file, .doc = doc, .errs = &errs};
        ks_cluster *c = ks_cluster_new();
        ok = ks_decode_document(c, copy, &ctx);
        ks_docref_unref(doc);
        if (ok && c->workloads.n == 1 && !c->pods.n && !c->nodes.n) {
            *wl = KS_OBJECT_REF(c->workloads.v[0]);
        } else if (ok) {
            ok = false;
            ks_cluster_free(c);
            ks_errors_free(&errs);
            *err = line_err(r, t->line ? t->line : line,
                            "kind %s cannot be replayed (Pod, Node, or a workload: Deployment, ReplicaSet, "
                            "StatefulSet, DaemonSet, Job, CronJob)", kind);
            return false;
        }
        ks_cluster_free(c);
    } else {
        *err = line_err(r, t->line ? t->line : line, "kind %s cannot be replayed (Pod, Node)", kind ? kind : "(none)");
        ks_errors_free(&errs);
        return false;
    }
    if (!ok) *err = decode_err(r->path, t->line ? 0 : line, &errs);
    ks_errors_free(&errs);
    return ok;
}

/* `ns/name` or `name` (namespace default). */
static void split_name(const char *s, char **ns, char **name) {
    const char *slash = strchr(s, '/');
    if (slash) {
        *ns = ks_xstrndup(s, (size_t)(slash - s));
        *name = ks_xstrdup(slash + 1);
    } else {
        *ns = ks_xstrdup("default");
        *name = ks_xstrdup(s);
    }
}

static bool parse_at(ks_tl_reader *r, const ks_tree *v, int line, int64_t *at, bool *abs, char **err) {
    if (!v) {
        *err = line_err(r, line, "at: missing (a duration like 90s or an RFC 3339 time)");
        return false;
    }
    if (v->type == KT_INT || v->type == KT_FLOAT) {
        double sec = v->type == KT_INT ? (double)v->ival : v->fval;
        if (sec < 0) {
            *err = line_err(r, line, "at: negative time");
            return false;
        }
        *at = (int64_t)(sec * 1e9);
        *abs = false;
        return true;
    }
    if (v->type != KT_STRING) {
        *err = line_err(r, line, "at: want a duration or an RFC 3339 time, got a %s", kt_type_name(v->type));
        return false;
    }
    if (ks_time_parse_rfc3339(v->text, at)) {
        *abs = true;
        return true;
    }
    char *derr = NULL;
    if (!ks_parse_duration(v->text, at, &derr) || *at < 0) {
        *err = line_err(r, line, "at: invalid time \"%s\" (a duration like 90s or an RFC 3339 time)", v->text);
        free(derr);
        return false;
    }
    *abs = false;
    return true;
}

static bool parse_duration_field(ks_tl_reader *r, const ks_tree *v, int line, const char *field, int64_t *out,
                                 char **err) {
    if (v->type == KT_INT || v->type == KT_FLOAT) {
        *out = (int64_t)((v->type == KT_INT ? (double)v->ival : v->fval) * 1e9);
        return *out >= 0 || (*err = line_err(r, line, "%s: negative", field), false);
    }
    char *derr = NULL;
    if (v->type != KT_STRING || !ks_parse_duration(v->text, out, &derr) || *out < 0) {
        *err = line_err(r, line, "%s: invalid duration%s%s", field, v->type == KT_STRING ? " " : "",
                        v->type == KT_STRING ? v->text : "");
        free(derr);
        return false;
    }
    return true;
}

static int native_event(ks_tl_reader *r, const ks_tree *t, int line, ks_tl_event **out, bool *abs, char **err) {
    if (t->line) line = t->line;
    if (t->type != KT_MAP) {
        *err = line_err(r, line, "an event is a map with at: and create:, delete: or node:");
        return -1;
    }
    int64_t at;
    if (!parse_at(r, kt_get(t, "at"), line, &at, abs, err)) return -1;
    if (r->have_last && r->last_abs == *abs && at < r->last) {
        *err = line_err(r, line, "at: earlier than the event before it (events must be in time order)");
        return -1;
    }
    r->have_last = true;
    r->last_abs = *abs;
    r->last = at;
    const ks_tree *create = kt_get(t, "create"), *del = kt_get(t, "delete"), *node = kt_get(t, "node");
    int n = (create != NULL) + (del != NULL) + (node != NULL);
    if (n != 1) {
        *err = line_err(r, line, "an event has exactly one of create:, delete:, node:");
        return -1;
    }
    for (uint32_t i = 0; i < t->n; i++) {
        const char *k = t->keys[i];
        if (strcmp(k, "at") && strcmp(k, "create") && strcmp(k, "delete") && strcmp(k, "node") && strcmp(k, "duration")) {
            *err = line_err(r, line, "unknown field \"%s\"", k);
            return -1;
        }
    }
    ks_tl_event *ev = NULL;
    if (create) {
        ks_pod *pod = NULL;
        ks_node *nd = NULL;
        ks_workload *wl = NULL;
        if (create->type != KT_MAP) {
            *err = line_err(r, line, "create: want a Pod, Node or workload manifest");
            return -1;
        }
        if (!decode_object(r, create, line, &pod, &nd, &wl, err)) return -1;
        ev = ks_tl_event_new(pod ? KS_TL_POD_CREATE : nd ? KS_TL_NODE_ADD : KS_TL_WORKLOAD_CREATE, at);
        ev->pod = pod;
        ev->node = nd;
        ev->workload = wl;
        const ks_tree *d = kt_get(t, "duration");
        if (d && !parse_duration_field(r, d, line, "duration", &ev->run_ns, err)) {
            ks_tl_event_free(ev);
            return -1;
        }
    } else if (kt_get(t, "duration")) {
        *err = line_err(r, line, "duration: only with create:");
        return -1;
    } else if (del) {
        const char *kind = "Pod", *ns = NULL, *name = NULL;
        if (del->type == KT_STRING) {
            name = del->text;
        } else if (del->type == KT_MAP) {
            if (str_of(del, "kind")) kind = str_of(del, "kind");
            ns = str_of(del, "namespace");
            name = str_of(del, "name");
        }
        if (!name || !*name) {
            *err = line_err(r, line, "delete: want NAME, NAMESPACE/NAME or {kind, namespace, name}");
            return -1;
        }
        if (!strcmp(kind, "Node")) {
            ev = ks_tl_event_new(KS_TL_NODE_REMOVE, at);
            ev->name = ks_xstrdup(name);
        } else if (!strcmp(kind, "Pod")) {
            ev = ks_tl_event_new(KS_TL_POD_DELETE, at);
            if (ns) {
                ev->ns = ks_xstrdup(ns);
                ev->name = ks_xstrdup(name);
            } else {
                split_name(name, &ev->ns, &ev->name);
            }
        } else if (!strcmp(kind, "Deployment") || !strcmp(kind, "ReplicaSet") || !strcmp(kind, "StatefulSet") ||
                   !strcmp(kind, "DaemonSet") || !strcmp(kind, "Job") || !strcmp(kind, "CronJob") ||
                   !strcmp(kind, "ReplicationController")) {
            ev = ks_tl_event_new(KS_TL_WORKLOAD_DELETE, at);
            ev->workload_kind = ks_xstrdup(kind);
            if (ns) {
                ev->ns = ks_xstrdup(ns);
                ev->name = ks_xstrdup(name);
            } else {
                split_name(name, &ev->ns, &ev->name);
            }
        } else {
            *err = line_err(r, line, "delete: kind %s cannot be replayed (Pod, Node, a workload)", kind);
            return -1;
        }
    } else {
        if (node->line) line = node->line;
        const char *name = node->type == KT_MAP ? str_of(node, "name") : NULL;
        if (!name) {
            *err = line_err(r, line, "node: want {name: NODE, op: cordon|uncordon|drain|remove|update, ...}");
            return -1;
        }
        const char *op = str_of(node, "op");
        const ks_tree *labels = kt_get(node, "labels"), *taints = kt_get(node, "taints");
        ks_tl_kind k;
        if (!op) op = (labels || taints) ? "update" : "";
        if (!strcmp(op, "cordon")) k = KS_TL_NODE_CORDON;
        else if (!strcmp(op, "uncordon")) k = KS_TL_NODE_UNCORDON;
        else if (!strcmp(op, "drain")) k = KS_TL_NODE_DRAIN;
        else if (!strcmp(op, "remove")) k = KS_TL_NODE_REMOVE;
        else if (!strcmp(op, "update")) k = KS_TL_NODE_UPDATE;
        else {
            *err = line_err(r, line, "node: op \"%s\": want cordon, uncordon, drain, remove or update", op);
            return -1;
        }
        if ((labels || taints) && k != KS_TL_NODE_UPDATE) {
            *err = line_err(r, line, "node: labels and taints go with op: update");
            return -1;
        }
        ev = ks_tl_event_new(k, at);
        ev->name = ks_xstrdup(name);
        if (labels) {
            if (labels->type != KT_MAP) {
                ks_tl_event_free(ev);
                *err = line_err(r, line, "node: labels: want a map (a null value removes the label)");
                return -1;
            }
            ev->nlabels = labels->n;
            ev->label_keys = ks_xcalloc(labels->n + 1, sizeof(char *));
            ev->label_values = ks_xcalloc(labels->n + 1, sizeof(char *));
            for (uint32_t i = 0; i < labels->n; i++) {
                const ks_tree *v = labels->items[i];
                ev->label_keys[i] = ks_xstrdup(labels->keys[i]);
                if (v->type == KT_NULL) continue;
                if (!v->text) {
                    ks_tl_event_free(ev);
                    *err = line_err(r, line, "node: labels: %s: want a string", labels->keys[i]);
                    return -1;
                }
                ev->label_values[i] = ks_xstrdup(v->text);
            }
        }
        if (taints) {
            if (taints->type != KT_SEQ && taints->type != KT_NULL) {
                ks_tl_event_free(ev);
                *err = line_err(r, line, "node: taints: want a list of taints");
                return -1;
            }
            ev->set_taints = true;
            ev->arena = ks_arena_new(1024);
            ev->taints = taints->type == KT_SEQ ? kt_copy(ev->arena, taints) : NULL;
        }
    }
    ev->file = r->path;
    ev->line = line;
    *out = ev;
    return 1;
}

/* ---- openb ---------------------------------------------------------------------- */

/* The CSVs are read by sim/openb.c (shared with the GPU study); here
 * they become objects with whole GPUs as nvidia.com/gpu. */

/* A pod tree for one openb task: cpu, memory and whole GPUs requested,
 * gpu_spec as required node affinity on the model label. */
static ks_tree *openb_pod_tree(ks_arena *a, const ks_openb_task *tk) {
    char buf[64];
    ks_tree *t = kt_new(a, KT_MAP, 0), *md = kt_new(a, KT_MAP, 0), *spec_t = kt_new(a, KT_MAP, 0);
    kt_map_add(a, t, "apiVersion", kt_string(a, "v1", 0));
    kt_map_add(a, t, "kind", kt_string(a, "Pod", 0));
    kt_map_add(a, md, "name", kt_string(a, tk->name, 0));
    kt_map_add(a, md, "namespace", kt_string(a, "default", 0));
    if (tk->gpu_milli > 0 && tk->gpu_milli < 1000) {
        ks_tree *ann = kt_new(a, KT_MAP, 0);
        snprintf(buf, sizeof(buf), "%d", tk->gpu_milli);
        kt_map_add(a, ann, "openb/gpu-milli", kt_string(a, buf, 0));
        kt_map_add(a, md, "annotations", ann);
    }
    kt_map_add(a, t, "metadata", md);
    ks_tree *req = kt_new(a, KT_MAP, 0), *lim = kt_new(a, KT_MAP, 0);
    snprintf(buf, sizeof(buf), "%lldm", (long long)tk->cpu_milli);
    kt_map_add(a, req, "cpu", kt_string(a, buf, 0));
    snprintf(buf, sizeof(buf), "%lldMi", (long long)tk->memory_mib);
    kt_map_add(a, req, "memory", kt_string(a, buf, 0));
    if (tk->num_gpu > 0) {
        snprintf(buf, sizeof(buf), "%d", tk->num_gpu);
        kt_map_add(a, req, "nvidia.com/gpu", kt_string(a, buf, 0));
        kt_map_add(a, lim, "nvidia.com/gpu", kt_string(a, buf, 0));
    }
    ks_tree *res = kt_new(a, KT_MAP, 0);
    kt_map_add(a, res, "requests", req);
    if (lim->n) kt_map_add(a, res, "limits", lim);
    ks_tree *c = kt_new(a, KT_MAP, 0);
    kt_map_add(a, c, "name", kt_string(a, "main", 0));
    kt_map_add(a, c, "image", kt_string(a, "openb-task", 0));
    kt_map_add(a, c, "resources", res);
    ks_tree *cs = kt_new(a, KT_SEQ, 0);
    kt_seq_add(a, cs, c);
    kt_map_add(a, spec_t, "containers", cs);
    if (*tk->gpu_spec) {
        ks_tree *vals = kt_new(a, KT_SEQ, 0);
        char *dup = ks_arena_strdup(a, tk->gpu_spec), *save = NULL;
        for (char *tok = strtok_r(dup, "|", &save); tok; tok = strtok_r(NULL, "|", &save))
            kt_seq_add(a, vals, kt_string(a, tok, 0));
        ks_tree *expr = kt_new(a, KT_MAP, 0);
        kt_map_add(a, expr, "key", kt_string(a, KS_OPENB_GPU_MODEL_LABEL, 0));
        kt_map_add(a, expr, "operator", kt_string(a, "In", 0));
        kt_map_add(a, expr, "values", vals);
        ks_tree *exprs = kt_new(a, KT_SEQ, 0), *term = kt_new(a, KT_MAP, 0), *terms = kt_new(a, KT_SEQ, 0);
        kt_seq_add(a, exprs, expr);
        kt_map_add(a, term, "matchExpressions", exprs);
        kt_seq_add(a, terms, term);
        ks_tree *sel = kt_new(a, KT_MAP, 0), *na = kt_new(a, KT_MAP, 0), *aff = kt_new(a, KT_MAP, 0);
        kt_map_add(a, sel, "nodeSelectorTerms", terms);
        kt_map_add(a, na, "requiredDuringSchedulingIgnoredDuringExecution", sel);
        kt_map_add(a, aff, "nodeAffinity", na);
        kt_map_add(a, spec_t, "affinity", aff);
    }
    kt_map_add(a, t, "spec", spec_t);
    return t;
}

static int openb_event(ks_tl_reader *r, ks_tl_event **out, char **err) {
    if (r->next >= r->tasks.n) return 0;
    const ks_openb_task *tk = &r->tasks.v[r->next++];
    if (tk->creation < 0) {
        *err = line_err(r, tk->line, "creation_time: empty");
        return -1;
    }
    int64_t create = tk->creation * 1000000000LL;
    if (r->have_last && create < r->last) {
        *err = line_err(r, tk->line, "creation_time: earlier than the row before it (rows must be in time order)");
        return -1;
    }
    ks_arena *a = ks_arena_new(4096);
    ks_tree *t = openb_pod_tree(a, tk);
    ks_errors errs;
    ks_errors_init(&errs);
    ks_decode_ctx ctx = {.file = r->path, .errs = &errs};
    ks_pod *p = ks_decode_pod(t, &ctx);
    ks_arena_free(a);
    if (!p) {
        *err = decode_err(r->path, tk->line, &errs);
        ks_errors_free(&errs);
        return -1;
    }
    ks_errors_free(&errs);
    r->have_last = true;
    r->last = create;
    ks_tl_event *ev = ks_tl_event_new(KS_TL_POD_CREATE, create);
    ev->pod = p;
    if (tk->deletion >= 0) ev->delete_at_ns = tk->deletion * 1000000000LL;
    ev->file = r->path;
    ev->line = tk->line;
    *out = ev;
    return 1;
}

bool ks_tl_openb_nodes(const char *path, ks_cluster *c, char **err) {
    ks_openb_nodes nodes;
    if (!ks_openb_read_nodes(path, &nodes, err)) return false;
    bool ok = true;
    for (size_t i = 0; i < nodes.n && ok; i++) {
        const ks_openb_node *on = &nodes.v[i];
        ks_arena *a = ks_arena_new(2048);
        char buf[64];
        ks_tree *t = kt_new(a, KT_MAP, 0), *md = kt_new(a, KT_MAP, 0), *labels = kt_new(a, KT_MAP, 0);
        kt_map_add(a, t, "apiVersion", kt_string(a, "v1", 0));
        kt_map_add(a, t, "kind", kt_string(a, "Node", 0));
        kt_map_add(a, md, "name", kt_string(a, on->name, 0));
        kt_map_add(a, labels, "kubernetes.io/hostname", kt_string(a, on->name, 0));
        if (*on->model) kt_map_add(a, labels, KS_OPENB_GPU_MODEL_LABEL, kt_string(a, on->model, 0));
        kt_map_add(a, md, "labels", labels);
        kt_map_add(a, t, "metadata", md);
        ks_tree *alloc = kt_new(a, KT_MAP, 0);
        snprintf(buf, sizeof(buf), "%lldm", (long long)on->cpu_milli);
        kt_map_add(a, alloc, "cpu", kt_string(a, buf, 0));
        snprintf(buf, sizeof(buf), "%lldMi", (long long)on->memory_mib);
        kt_map_add(a, alloc, "memory", kt_string(a, buf, 0));
        kt_map_add(a, alloc, "pods", kt_string(a, "110", 0));
        if (on->gpus > 0) {
            snprintf(buf, sizeof(buf), "%d", on->gpus);
            kt_map_add(a, alloc, "nvidia.com/gpu", kt_string(a, buf, 0));
        }
        ks_tree *status = kt_new(a, KT_MAP, 0);
        kt_map_add(a, status, "allocatable", alloc);
        kt_map_add(a, status, "capacity", kt_copy(a, alloc));
        kt_map_add(a, t, "status", status);
        ks_errors errs;
        ks_errors_init(&errs);
        ks_docref *doc = ks_docref_new(a);
        ks_decode_ctx ctx = {.file = path, .doc = doc, .next_input_index = c->next_input_index, .errs = &errs};
        ks_node *n = ks_decode_node(t, &ctx);
        ks_docref_unref(doc);
        if (!n) {
            *err = decode_err(path, on->line, &errs);
            ok = false;
        } else if (ks_cluster_node(c, n->name)) {
            *err = ks_xasprintf("%s:%d: node %s appears twice", path, on->line, on->name);
            ks_node_unref(n);
            ok = false;
        } else {
            c->next_input_index = ctx.next_input_index;
            KS_VEC_PUSH(c->nodes, n);
        }
        ks_errors_free(&errs);
    }
    ks_openb_nodes_free(&nodes);
    return ok;
}

/* ---- audit logs ----------------------------------------------------------------------- */

static uint64_t name_hash(const char *s) { return ks_hash_bytes(s, strlen(s)) | 1; }

static void add_binding(ks_tl_reader *r, const char *name, const char *node) {
    binding *b = ks_xcalloc(1, sizeof(*b));
    b->name = ks_xstrdup(name);
    b->node = ks_xstrdup(node);
    uint64_t h = name_hash(name);
    binding *head = ks_map_get(&r->bindings, h);
    if (!head) {
        ks_map_put(&r->bindings, h, b);
        return;
    }
    while (head->next) head = head->next;
    head->next = b;
}

/* The first binding recorded for name after its creation (taken). */
static char *take_binding(ks_tl_reader *r, const char *name) {
    uint64_t h = name_hash(name);
    binding *head = ks_map_get(&r->bindings, h), *prev = NULL;
    for (binding *b = head; b; prev = b, b = b->next) {
        if (strcmp(b->name, name) != 0) continue;
        if (prev) prev->next = b->next;
        else if (b->next) ks_map_put(&r->bindings, h, b->next);
        else ks_map_del(&r->bindings, h);
        char *node = b->node;
        free(b->name);
        free(b);
        return node;
    }
    return NULL;
}

/* What an audit line says, or NULL when it is not about a change replayed. */
typedef struct audit_line {
    const char *resource, *sub, *verb, *ns, *name;
    const ks_tree *req, *resp;
    int64_t at;
} audit_line;

static int audit_parse(ks_tl_reader *r, const ks_tree *t, audit_line *al, char **err) {
    memset(al, 0, sizeof(*al));
    const char *kind = str_of(t, "kind");
    if (t->type != KT_MAP || !kind || strcmp(kind, "Event") != 0) {
        *err = line_err(r, r->lineno, "not an audit.k8s.io Event");
        return -1;
    }
    const char *stage = str_of(t, "stage");
    if (!stage || strcmp(stage, "ResponseComplete") != 0) return 0;
    const ks_tree *code = kt_get(kt_get(t, "responseStatus"), "code");
    if (code && code->type == KT_INT && (code->ival < 200 || code->ival > 299)) return 0;
    const ks_tree *ref = kt_get(t, "objectRef");
    al->verb = str_of(t, "verb");
    al->resource = str_of(ref, "resource");
    al->sub = str_of(ref, "subresource");
    al->ns = str_of(ref, "namespace");
    al->name = str_of(ref, "name");
    al->req = kt_get(t, "requestObject");
    al->resp = kt_get(t, "responseObject");
    const char *ts = str_of(t, "stageTimestamp");
    if (!ts) ts = str_of(t, "requestReceivedTimestamp");
    if (!ts || !ks_time_parse_rfc3339(ts, &al->at)) {
        *err = line_err(r, r->lineno, "stageTimestamp: missing or not an RFC 3339 time");
        return -1;
    }
    if (!al->verb || !al->resource) return 0;
    return 1;
}

static const char *meta_str(const ks_tree *obj, const char *key) { return str_of(kt_get(obj, "metadata"), key); }

static bool prescan_audit(ks_tl_reader *r, char **err) {
    ssize_t len;
    while ((len = getline(&r->line, &r->cap, r->in)) >= 0) {
        r->lineno++;
        if (!strstr(r->line, "\"binding\"")) continue;
        ks_arena *a = ks_arena_new(4096);
        ks_tree **docs = NULL;
        uint32_t nd = 0;
        char *perr = NULL;
        bool ok = kt_parse(a, r->path, r->line, (size_t)len, &docs, &nd, &perr);
        audit_line al;
        if (ok && nd == 1 && audit_parse(r, docs[0], &al, err) == 1 && !strcmp(al.resource, "pods") && al.sub &&
            !strcmp(al.sub, "binding") && !strcmp(al.verb, "create")) {
            const char *node = str_of(kt_get(al.req, "target"), "name");
            if (node && al.name) {
                char name[600];
                snprintf(name, sizeof(name), "%s/%s", al.ns ? al.ns : "default", al.name);
                add_binding(r, name, node);
            }
        }
        free(*err);
        *err = NULL;
        free(perr);
        ks_arena_free(a);
    }
    rewind(r->in);
    r->lineno = 0;
    return true;
}

static int audit_event(ks_tl_reader *r, const ks_tree *t, ks_tl_event **out, char **err) {
    audit_line al;
    int rc = audit_parse(r, t, &al, err);
    if (rc <= 0) return rc;
    /* stageTimestamps of concurrent requests interleave a little: keep order */
    if (r->have_last && al.at < r->last) al.at = r->last;
    r->have_last = true;
    r->last = al.at;
    ks_tl_event *ev = NULL;
    const ks_tree *obj = al.resp && al.resp->type == KT_MAP && str_of(al.resp, "kind") ? al.resp : al.req;
    bool pods = !strcmp(al.resource, "pods"), nodes = !strcmp(al.resource, "nodes");
    if (!pods && !nodes) return 0;
    const char *kind = obj ? str_of(obj, "kind") : NULL;
    bool is_obj = kind && (!strcmp(kind, "Pod") || !strcmp(kind, "Node"));
    if (pods && !al.sub && !strcmp(al.verb, "create")) {
        if (!is_obj) return r->skipped++, 0;
        ks_pod *p = NULL;
        ks_node *n = NULL;
        if (!decode_object(r, obj, r->lineno, &p, &n, NULL, err)) return -1;
        ev = ks_tl_event_new(KS_TL_POD_CREATE, al.at);
        ev->pod = p;
        char name[600];
        ks_pod_fullname(p, name, sizeof(name));
        ev->node_name = take_binding(r, name);
    } else if (pods && al.sub && !strcmp(al.sub, "binding") && !strcmp(al.verb, "create")) {
        const char *node = str_of(kt_get(al.req, "target"), "name");
        if (!node || !al.name) return r->skipped++, 0;
        ev = ks_tl_event_new(KS_TL_POD_BOUND, al.at);
        ev->ns = ks_xstrdup(al.ns ? al.ns : "default");
        ev->name = ks_xstrdup(al.name);
        ev->node_name = ks_xstrdup(node);
    } else if (pods && !al.sub && !strcmp(al.verb, "delete")) {
        if (!al.name) return 0;
        ev = ks_tl_event_new(KS_TL_POD_DELETE, al.at);
        ev->ns = ks_xstrdup(al.ns ? al.ns : "default");
        ev->name = ks_xstrdup(al.name);
    } else if (pods && al.sub && !strcmp(al.sub, "eviction") && !strcmp(al.verb, "create")) {
        ev = ks_tl_event_new(KS_TL_POD_DELETE, al.at);
        ev->ns = ks_xstrdup(al.ns ? al.ns : "default");
        ev->name = ks_xstrdup(al.name ? al.name : "");
    } else if (pods && al.sub && !strcmp(al.sub, "status") && (!strcmp(al.verb, "patch") || !strcmp(al.verb, "update"))) {
        /* a pod that finished leaves the scheduler's view */
        const char *phase = str_of(kt_get(al.resp, "status"), "phase");
        if (!phase || (strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0) || !al.name) return 0;
        ev = ks_tl_event_new(KS_TL_POD_DELETE, al.at);
        ev->ns = ks_xstrdup(al.ns ? al.ns : "default");
        ev->name = ks_xstrdup(al.name);
    } else if (nodes && !al.sub && !strcmp(al.verb, "create")) {
        if (!is_obj) return r->skipped++, 0;
        ks_pod *p = NULL;
        ks_node *n = NULL;
        if (!decode_object(r, obj, r->lineno, &p, &n, NULL, err)) return -1;
        if (p) ks_pod_unref(p);
        if (!n) return 0;
        ev = ks_tl_event_new(KS_TL_NODE_ADD, al.at);
        ev->node = n;
    } else if (nodes && !al.sub && !strcmp(al.verb, "delete")) {
        if (!al.name) return 0;
        ev = ks_tl_event_new(KS_TL_NODE_REMOVE, al.at);
        ev->name = ks_xstrdup(al.name);
    } else if (nodes && (!strcmp(al.verb, "update") || !strcmp(al.verb, "patch"))) {
        /* the whole node after the change: cordon, labels, taints, allocatable */
        if (!al.resp || !str_of(al.resp, "kind")) return r->skipped++, 0;
        ks_pod *p = NULL;
        ks_node *n = NULL;
        if (!decode_object(r, al.resp, r->lineno, &p, &n, NULL, err)) return -1;
        if (p) ks_pod_unref(p);
        if (!n) return 0;
        ev = ks_tl_event_new(KS_TL_NODE_UPDATE, al.at);
        ev->node = n;
        ev->name = ks_xstrdup(ks_str(n->name));
    } else {
        (void)meta_str;
        return 0;
    }
    ev->file = r->path;
    ev->line = r->lineno;
    *out = ev;
    return 1;
}

/* ---- the reader ------------------------------------------------------------------------ */

ks_tl_reader *ks_tl_reader_open(const char *path, ks_tl_format f, char **err) {
    ks_tl_reader *r = ks_xcalloc(1, sizeof(*r));
    r->f = f;
    r->path = ks_xstrdup(path);
    ks_map_init(&r->bindings);
    r->in = !strcmp(path, "-") ? stdin : fopen(path, "r");
    if (!r->in) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        ks_tl_reader_free(r);
        return NULL;
    }
    if (f == KS_TLF_NATIVE) {
        /* JSON lines stream; YAML is read whole */
        int c;
        while ((c = fgetc(r->in)) == ' ' || c == '\n' || c == '\r' || c == '\t') {}
        bool json = c == '{';
        if (c == '#') json = false;
        ungetc(c, r->in);
        if (!json) {
            rewind(r->in);
            r->yaml = true;
            size_t len = 0, cap = 0;
            char *buf = NULL, tmp[65536];
            size_t n;
            while ((n = fread(tmp, 1, sizeof(tmp), r->in)) > 0) {
                KS_GROW(buf, cap, len + n + 1);
                memcpy(buf + len, tmp, n);
                len += n;
            }
            r->arena = ks_arena_new(65536);
            ks_tree **docs = NULL;
            uint32_t nd = 0;
            bool ok = kt_parse(r->arena, path, buf ? buf : "", len, &docs, &nd, err);
            free(buf);
            if (!ok) {
                ks_tl_reader_free(r);
                return NULL;
            }
            if (nd == 1 && docs[0]->type == KT_SEQ) {
                r->items = docs[0]->items;
                r->nitems = docs[0]->n;
            } else {
                r->items = docs;
                r->nitems = nd;
            }
        } else {
            rewind(r->in);
        }
    } else if (f == KS_TLF_OPENB_PODS) {
        if (!ks_openb_read_tasks(path, &r->tasks, err)) {
            ks_tl_reader_free(r);
            return NULL;
        }
    } else if (f == KS_TLF_AUDIT) {
        if (r->in == stdin) {
            *err = ks_xasprintf("an audit log is read twice: give a file, not stdin");
            ks_tl_reader_free(r);
            return NULL;
        }
        prescan_audit(r, err);
    }
    return r;
}

int ks_tl_reader_next(ks_tl_reader *r, ks_tl_event **ev, bool *abs, char **err) {
    *ev = NULL;
    *abs = r->f == KS_TLF_AUDIT;
    if (r->yaml) {
        if (r->next >= r->nitems) return 0;
        return native_event(r, r->items[r->next++], 0, ev, abs, err);
    }
    if (r->f == KS_TLF_OPENB_PODS) return openb_event(r, ev, err);
    ssize_t len;
    while ((len = getline(&r->line, &r->cap, r->in)) >= 0) {
        r->lineno++;
        char *p = r->line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\n' || *p == '\r' || !*p || *p == '#') continue;
        ks_arena *a = ks_arena_new(8192);
        ks_tree **docs = NULL;
        uint32_t nd = 0;
        char *perr = NULL;
        if (*p != '{' || !kt_parse(a, r->path, p, strlen(p), &docs, &nd, &perr) || nd != 1) {
            /* the parser's message names the line of its one-line buffer: drop that */
            const char *why = perr ? perr : "";
            size_t pl = strlen(r->path);
            if (!strncmp(why, r->path, pl) && why[pl] == ':') {
                const char *q = strchr(why + pl + 1, ':');
                why = q ? q + 1 : why + pl + 1;
                while (*why == ' ') why++;
            }
            *err = line_err(r, r->lineno, "not a JSON object%s%s", *why ? ": " : "", why);
            free(perr);
            ks_arena_free(a);
            return -1;
        }
        int rc = r->f == KS_TLF_AUDIT ? audit_event(r, docs[0], ev, err) : native_event(r, docs[0], r->lineno, ev, abs, err);
        ks_arena_free(a);
        if (rc != 0) return rc;
    }
    if (r->skipped) ks_infof(1, "%s: %llu changes without their objects (audit level Metadata?) skipped", r->path,
                             (unsigned long long)r->skipped);
    return 0;
}

void ks_tl_reader_free(ks_tl_reader *r) {
    if (!r) return;
    if (r->in && r->in != stdin) fclose(r->in);
    free(r->line);
    if (r->arena) ks_arena_free(r->arena);
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&r->bindings, &it, &k, &v);) {
        for (binding *b = v, *nx; b; b = nx) {
            nx = b->next;
            free(b->name);
            free(b->node);
            free(b);
        }
    }
    ks_map_free(&r->bindings);
    ks_openb_tasks_free(&r->tasks);
    free(r->path);
    free(r);
}
