#include "sim/openb.h"
#include "codec/decode.h"
#include "codec/tree.h"
#include "util/arena.h"
#include "util/xalloc.h"

#include "codec/errors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CSV ------------------------------------------------------------------ */

/* The trace's CSV has no quoting: fields are split at commas. */
static size_t split(char *line, char **f, size_t max) {
    size_t n = 0;
    char *s = line;
    for (;;) {
        if (n < max) f[n] = s;
        n++;
        char *c = strchr(s, ',');
        if (!c) break;
        *c = '\0';
        s = c + 1;
    }
    size_t len = strlen(s);
    while (len && (s[len - 1] == '\n' || s[len - 1] == '\r')) s[--len] = '\0';
    return n;
}

static int column(char **hdr, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return (int)i;
    return -1;
}

static bool num(const char *s, int64_t *out, bool empty_ok) {
    if (!*s || !strcmp(s, "nan")) {
        *out = -1;
        return empty_ok;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno) return false;
    /* outside int64 (or NaN) the conversion is undefined: not a number here */
    if (!(v >= (double)INT64_MIN && v < (double)INT64_MAX)) return false;
    *out = (int64_t)v;
    return true;
}

#define MAXCOLS 32

/* One numeric field, or an error naming the file, line, column and value. */
static bool field(const char *path, int line, const char *col, const char *v, int64_t *out, bool empty_ok,
                  bool nonneg, char **err) {
    bool none = !*v || !strcmp(v, "nan");
    if (num(v, out, empty_ok) && (!nonneg || *out >= 0 || (none && empty_ok))) return true;
    if (!*v) *err = ks_xasprintf("%s:%d: %s: empty", path, line, col);
    else *err = ks_xasprintf("%s:%d: %s: want a%s number, got \"%s\"", path, line, col, nonneg ? " non-negative" : "", v);
    return false;
}

typedef struct csv {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    int lineno;
    char *hdrbuf;
    char *hdr[MAXCOLS];
    size_t nhdr;
} csv;

static bool csv_open(csv *c, const char *path, char **err) {
    memset(c, 0, sizeof(*c));
    c->path = path;
    c->f = fopen(path, "r");
    if (!c->f) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    if (getline(&c->line, &c->cap, c->f) < 0) {
        *err = ks_xasprintf("%s: empty file", path);
        return false;
    }
    c->lineno = 1;
    c->hdrbuf = ks_xstrdup(c->line);
    c->nhdr = split(c->hdrbuf, c->hdr, MAXCOLS);
    if (c->nhdr > MAXCOLS) c->nhdr = MAXCOLS;
    return true;
}

static void csv_close(csv *c) {
    if (c->f) fclose(c->f);
    free(c->line);
    free(c->hdrbuf);
}

/* The next row's fields in f: 1, 0 at the end, -1 (*err) on a short row.
 * Blank lines are skipped. */
static int csv_row(csv *c, char **f, char **err) {
    while (getline(&c->line, &c->cap, c->f) >= 0) {
        c->lineno++;
        size_t nf = split(c->line, f, MAXCOLS);
        if (nf == 1 && !*f[0]) continue;
        if (nf < c->nhdr) {
            *err = ks_xasprintf("%s:%d: %zu fields, want %zu", c->path, c->lineno, nf, c->nhdr);
            return -1;
        }
        return 1;
    }
    return 0;
}

static bool need(csv *c, const char *const *names, int *cols, size_t n, char **err) {
    for (size_t i = 0; i < n; i++) {
        cols[i] = column(c->hdr, c->nhdr, names[i]);
        if (cols[i] < 0) {
            *err = ks_xasprintf("%s:1: no column %s", c->path, names[i]);
            return false;
        }
    }
    return true;
}

bool ks_openb_read_nodes(const char *path, ks_openb_nodes *out, char **err) {
    memset(out, 0, sizeof(*out));
    csv c;
    if (!csv_open(&c, path, err)) {
        csv_close(&c);
        return false;
    }
    static const char *const names[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
    int col[5];
    bool ok = need(&c, names, col, 5, err);
    size_t cap = 0;
    char *f[MAXCOLS];
    int more = 0;
    while (ok && (more = csv_row(&c, f, err)) > 0) {
        KS_GROW(out->v, cap, out->n + 1);
        ks_openb_node *n = &out->v[out->n++];
        memset(n, 0, sizeof(*n));
        int64_t gpus = 0;
        n->name = ks_xstrdup(f[col[0]]);
        n->line = c.lineno;
        const char *model = f[col[4]];
        n->model = ks_xstrdup(strcmp(model, "nan") ? model : "");
        if (!*n->name) {
            *err = ks_xasprintf("%s:%d: sn: empty", path, c.lineno);
            ok = false;
            break;
        }
        if (!field(path, c.lineno, "cpu_milli", f[col[1]], &n->cpu_milli, false, true, err) ||
            !field(path, c.lineno, "memory_mib", f[col[2]], &n->memory_mib, false, true, err) ||
            !field(path, c.lineno, "gpu", f[col[3]], &gpus, true, false, err)) {
            ok = false;
            break;
        }
        n->gpus = gpus < 0 ? 0 : (int)gpus;
    }
    if (more < 0) ok = false;
    csv_close(&c);
    if (!ok) ks_openb_nodes_free(out);
    return ok;
}

bool ks_openb_read_tasks(const char *path, ks_openb_tasks *out, char **err) {
    memset(out, 0, sizeof(*out));
    csv c;
    if (!csv_open(&c, path, err)) {
        csv_close(&c);
        return false;
    }
    static const char *const names[] = {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"};
    int col[5];
    bool ok = need(&c, names, col, 5, err);
    int spec = column(c.hdr, c.nhdr, "gpu_spec");
    int tc = column(c.hdr, c.nhdr, "creation_time"), td = column(c.hdr, c.nhdr, "deletion_time"),
        ts = column(c.hdr, c.nhdr, "scheduled_time");
    size_t cap = 0;
    char *f[MAXCOLS];
    int more = 0;
    while (ok && (more = csv_row(&c, f, err)) > 0) {
        KS_GROW(out->v, cap, out->n + 1);
        ks_openb_task *t = &out->v[out->n++];
        memset(t, 0, sizeof(*t));
        t->name = ks_xstrdup(f[col[0]]);
        t->line = c.lineno;
        t->creation = t->deletion = t->scheduled = -1;
        int64_t ngpu = 0, milli = 0;
        bool good = *t->name || (*err = ks_xasprintf("%s:%d: name: empty", path, c.lineno), false);
        good = good && field(path, c.lineno, "cpu_milli", f[col[1]], &t->cpu_milli, false, true, err) &&
               field(path, c.lineno, "memory_mib", f[col[2]], &t->memory_mib, false, true, err) &&
               field(path, c.lineno, "num_gpu", f[col[3]], &ngpu, true, false, err) &&
               field(path, c.lineno, "gpu_milli", f[col[4]], &milli, true, false, err);
        if (good && (ngpu < -1 || ngpu > 64)) {
            *err = ks_xasprintf("%s:%d: num_gpu: %lld is not 0 to 64", path, c.lineno, (long long)ngpu);
            good = false;
        }
        if (good && tc >= 0) good = field(path, c.lineno, "creation_time", f[tc], &t->creation, true, true, err);
        if (good && td >= 0) good = field(path, c.lineno, "deletion_time", f[td], &t->deletion, true, true, err);
        if (good && ts >= 0) good = field(path, c.lineno, "scheduled_time", f[ts], &t->scheduled, true, true, err);
        if (!good) {
            ok = false;
            break;
        }
        t->num_gpu = ngpu < 0 ? 0 : (int)ngpu;
        /* pod_csv_to_yaml.py: shares above 1000 are 1000, none is 0 */
        t->gpu_milli = !t->num_gpu ? 0 : milli > 1000 ? 1000 : milli > 0 ? (int)milli : 0;
        /* its model list: the non-empty names, in order */
        const char *sp = spec >= 0 ? f[spec] : "";
        char *m = ks_xstrdup(strcmp(sp, "nan") ? sp : "");
        char *w = m;
        for (char *r = m; *r;) {
            char *bar = strchr(r, '|');
            size_t len = bar ? (size_t)(bar - r) : strlen(r);
            if (len) {
                if (w != m) *w++ = '|';
                memmove(w, r, len);
                w += len;
            }
            r += len + (bar ? 1 : 0);
        }
        *w = '\0';
        t->gpu_spec = m;
    }
    if (more < 0) ok = false;
    csv_close(&c);
    if (!ok) ks_openb_tasks_free(out);
    return ok;
}

void ks_openb_nodes_free(ks_openb_nodes *n) {
    for (size_t i = 0; i < n->n; i++) {
        free(n->v[i].name);
        free(n->v[i].model);
    }
    free(n->v);
    memset(n, 0, sizeof(*n));
}

void ks_openb_tasks_free(ks_openb_tasks *t) {
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].gpu_spec);
    }
    free(t->v);
    memset(t, 0, sizeof(*t));
}

/* ---- objects --------------------------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)(k > 0 ? k : 0) + 4096;
        b->s = ks_xrealloc(b->s, b->cap);
    }
}

/* Names and models come from the trace: letters, digits, '-', '|' only;
 * anything else would need JSON escaping and is refused. */
static bool plain(const char *s) {
    for (; *s; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) return false;
    return true;
}

static bool decode_text(ks_cluster *c, sbuf *b, const char *what, char **err) {
    ks_arena *a = ks_arena_new(b->n * 2 + 4096);
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = kt_parse(a, what, b->s, b->n, &docs, &ndocs, err);
    if (ok) {
        ks_decode_ctx ctx = {.file = what, .errs = &errs, .next_input_index = c->next_input_index};
        for (uint32_t i = 0; i < ndocs; i++) ok &= ks_decode_document(c, docs[i], &ctx);
        c->next_input_index = ctx.next_input_index;
        if (!ok && errs.n) *err = ks_xstrdup(errs.v[0]);
    }
    ks_errors_free(&errs);
    ks_arena_free(a);
    free(b->s);
    if (ok) {
        ks_cluster_add_implicit_namespaces(c);
        ok = ks_cluster_admit(c, err);
    }
    if (!ok && !*err) *err = ks_xasprintf("%s: cannot decode", what);
    return ok;
}

bool ks_openb_add_nodes(ks_cluster *c, const ks_openb_nodes *nodes, const char *const *names, char **err) {
    sbuf b = {0};
    sb_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    for (size_t i = 0; i < nodes->n; i++) {
        const ks_openb_node *n = &nodes->v[i];
        const char *name = names && names[i] ? names[i] : n->name;
        if (!plain(name) || !plain(n->model)) {
            free(b.s);
            *err = ks_xasprintf("node %zu: unexpected characters in its name or model", i + 1);
            return false;
        }
        sb_printf(&b, "%s{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
                  "\"kubernetes.io/hostname\":\"%s\",\"kubernetes.io/os\":\"linux\"",
                  i ? "," : "", name, name);
        if (*n->model) sb_printf(&b, ",\"alibabacloud.com/gpu-card-model\":\"%s\"", n->model);
        sb_printf(&b, "}},\"status\":{");
        for (int k = 0; k < 2; k++) {
            sb_printf(&b, "%s\"%s\":{\"cpu\":\"%lldm\",\"memory\":\"%lldMi\",\"pods\":\"1001\"", k ? "," : "",
                      k ? "capacity" : "allocatable", (long long)n->cpu_milli, (long long)n->memory_mib);
            if (n->gpus)
                sb_printf(&b, ",\"alibabacloud.com/gpu-count\":\"%d\",\"alibabacloud.com/gpu-milli\":\"%d\"", n->gpus,
                          n->gpus * 1000);
            sb_printf(&b, "}");
        }
        sb_printf(&b, "}}");
    }
    sb_printf(&b, "]}");
    return decode_text(c, &b, "openb nodes", err);
}

/* The CEL selector of a model list: model in ["A", "B"]. */
static void model_selector(sbuf *b, const char *spec) {
    sb_printf(b, ",\"selectors\":[{\"cel\":{\"expression\":\"device.attributes[\\\"gpu.openb\\\"].model in [");
    int k = 0;
    for (const char *s = spec; *s;) {
        size_t len = strcspn(s, "|");
        if (len) sb_printf(b, "%s\\\"%.*s\\\"", k++ ? ", " : "", (int)len, s);
        s += len + (s[len] == '|');
    }
    sb_printf(b, "]\"}}]");
}

bool ks_openb_add_dra(ks_cluster *c, const ks_openb_nodes *nodes, const char *const *names, ks_openb_dra form,
                      char **err) {
    sbuf b = {0};
    sb_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"resource.k8s.io/v1\","
                  "\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.openb\"},\"spec\":{\"selectors\":[{\"cel\":"
                  "{\"expression\":\"device.driver == \\\"gpu.openb\\\"\"}}]}}");
    for (size_t i = 0; i < nodes->n; i++) {
        const ks_openb_node *n = &nodes->v[i];
        if (!n->gpus) continue;
        const char *name = names && names[i] ? names[i] : n->name;
        bool per_gpu = form == KS_OPENB_DRA_GPU_SLICE;
        for (int g = 0; g < n->gpus; g++) {
            if (g == 0 || per_gpu) {
                if (g) sb_printf(&b, "]}}");
                sb_printf(&b, ",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":"
                              "\"%s-gpu.openb",
                          name);
                if (per_gpu) sb_printf(&b, "-%d", g);
                sb_printf(&b, "\"},\"spec\":{\"driver\":\"gpu.openb\",\"nodeName\":\"%s\",\"pool\":{\"name\":"
                              "\"%s\",\"generation\":1,\"resourceSliceCount\":%d},\"devices\":[",
                          name, name, per_gpu ? n->gpus : 1);
            }
            sb_printf(&b, "%s{\"name\":\"gpu-%d\",\"allowMultipleAllocations\":true,\"attributes\":{\"model\":"
                          "{\"string\":\"%s\"}},\"capacity\":{\"milli\":{\"value\":\"1000\"}}}",
                      g && !per_gpu ? "," : "", g, n->model);
        }
        sb_printf(&b, "]}}");
    }
    sb_printf(&b, "]}");
    return decode_text(c, &b, "openb resource slices", err);
}

bool ks_openb_add_pods(ks_cluster *c, const ks_openb_tasks *tasks, const uint32_t *idx, const char *const *names,
                       size_t n, const char *ns, ks_openb_dra dra, char **err) {
    sbuf b = {0};
    sb_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    for (size_t i = 0; i < n; i++) {
        const ks_openb_task *t = &tasks->v[idx[i]];
        const char *name = names && names[i] ? names[i] : t->name;
        if (!plain(name) || !plain(t->gpu_spec) || !plain(ns)) {
            free(b.s);
            *err = ks_xasprintf("task %s: unexpected characters in its name or GPU models", t->name);
            return false;
        }
        if (dra && t->num_gpu) {
            /* a share: one device, gpu_milli of its capacity; whole GPUs:
             * num_gpu devices, all of each (per-GPU slices: one request
             * of one device per GPU) */
            sb_printf(&b, "%s{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":"
                          "{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"claim-%s-%s\"},\"spec\":{\"devices\":{\"requests\":[",
                      i ? "," : "", name, ns, ns, name);
            int nreq = dra == KS_OPENB_DRA_GPU_SLICE ? t->num_gpu : 1;
            for (int q = 0; q < nreq; q++) {
                sb_printf(&b, "%s{\"name\":\"gpu", q ? "," : "");
                if (nreq > 1) sb_printf(&b, "-%d", q);
                sb_printf(&b, "\",\"exactly\":{\"deviceClassName\":\"gpu.openb\",\"allocationMode\":\"ExactCount\","
                              "\"count\":%d,\"capacity\":{\"requests\":{\"milli\":\"%d\"}}",
                          t->num_gpu / nreq, t->gpu_milli);
                if (*t->gpu_spec) model_selector(&b, t->gpu_spec);
                sb_printf(&b, "}}");
            }
            sb_printf(&b, "]}}}");
        }
        sb_printf(&b, "%s{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
                      "\"uid\":\"pod-%s-%s\"",
                  i || (dra && t->num_gpu) ? "," : "", name, ns, ns, name);
        if (t->num_gpu && !dra) {
            sb_printf(&b, ",\"annotations\":{\"alibabacloud.com/gpu-milli\":\"%d\",\"alibabacloud.com/gpu-count\":\"%d\"",
                      t->gpu_milli, t->num_gpu);
            if (*t->gpu_spec) sb_printf(&b, ",\"alibabacloud.com/gpu-card-model\":\"%s\"", t->gpu_spec);
            sb_printf(&b, "}");
        }
        sb_printf(&b, "},\"spec\":{");
        if (dra && t->num_gpu)
            sb_printf(&b, "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"%s\"}],", name);
        sb_printf(&b, "\"containers\":[{\"name\":\"main\",\"image\":\"tensorflow:latest\",\"resources\":{");
        for (int k = 0; k < 2; k++)
            sb_printf(&b, "%s\"%s\":{\"cpu\":\"%lldm\",\"memory\":\"%lldMi\"}", k ? "," : "", k ? "limits" : "requests",
                      (long long)t->cpu_milli, (long long)t->memory_mib);
        sb_printf(&b, "}}]}}");
    }
    sb_printf(&b, "]}");
    return decode_text(c, &b, "openb pods", err);
}
