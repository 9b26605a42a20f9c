/* Objects as the controllers create them (workloads.h): the common part —
 * pods from a template (controller.GetPodFromTemplate and the API
 * server's generateName), owner references, uids, decoding and admission
 * of what was built. The per-kind rules are in controllers.c. */
#include "sim/workloads/generate.h"
#include "codec/decode.h"
#include "sim/workloads/pod_defaults.h"
#include "util/clock.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t fnv64(const char *s, uint64_t h) {
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uid in the API server's format (a random UUID), derived from what it
 * names so that output is reproducible. */
static const char *uid_of(ks_arena *a, const char *what, uint64_t salt) {
    uint64_t x = fnv64(what, 14695981039346656037ull ^ salt);
    uint64_t hi = splitmix(&x), lo = splitmix(&x);
    return ks_arena_printf(a, "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
                           hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff, (uint64_t)0x8000 | ((lo >> 48) & 0x3fff),
                           lo & (uint64_t)0xffffffffffff);
}

void wl_ctx_init(wl_ctx *x, const ks_workload *w, const ks_cluster *c, const ks_wl_options *o,
                 ks_wl_objects *out, ks_errors *errs) {
    memset(x, 0, sizeof(*x));
    x->w = w;
    x->c = c;
    x->o = o;
    x->out = out;
    x->errs = errs;
    x->a = ks_arena_new(1 << 14);
    x->doc = ks_docref_new(x->a);
    x->ns = ks_str(w->ns);
    x->name = ks_str(w->name);
    x->file = w->source_file;
    x->line = w->source_line;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s/%s", ks_workload_kind_name(w->kind), x->ns, x->name);
    x->rng = fnv64(key, 14695981039346656037ull) ^ (o->seed * 0x9e3779b97f4a7c15ull);
    x->uid = w->uid && *w->uid ? w->uid : uid_of(x->a, key, 0);
    ks_map_init(&x->taken);
    for (uint32_t i = 0; i < c->pods.n; i++) {
        const ks_pod *p = c->pods.v[i];
        char k[600];
        snprintf(k, sizeof(k), "%s/%s", ks_str(p->ns), ks_str(p->name));
        ks_map_put(&x->taken, fnv64(k, 14695981039346656037ull) | 1, (void *)1);
    }
    out->desired = -1;
    out->next_input_index = c->next_input_index;
}

void wl_ctx_fini(wl_ctx *x) {
    ks_map_free(&x->taken);
    ks_docref_unref(x->doc); /* the decoded objects hold their own references */
}

const char *wl_uid(wl_ctx *x, const char *kind, const char *name) {
    char key[600];
    snprintf(key, sizeof(key), "%s/%s/%s", kind, x->ns, name);
    return uid_of(x->a, key, 1);
}

/* utilrand.String's alphabet: no vowels, no 0/1/3. */
static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";

const char *wl_generate_name(wl_ctx *x, const char *prefix) {
    /* names.SimpleNameGenerator: the base cut to 63 - 5 characters */
    char base[64];
    snprintf(base, sizeof(base), "%.58s", prefix);
    for (;;) {
        char name[80], k[600];
        uint64_t r = splitmix(&x->rng);
        char suf[6];
        for (int i = 0; i < 5; i++) suf[i] = alnum[(r >> (i * 8)) % (sizeof(alnum) - 1)];
        suf[5] = 0;
        snprintf(name, sizeof(name), "%s%s", base, suf);
        snprintf(k, sizeof(k), "%s/%s", x->ns, name);
        uint64_t h = fnv64(k, 14695981039346656037ull) | 1;
        if (ks_map_get(&x->taken, h)) continue; /* the API server retries a taken name */
        ks_map_put(&x->taken, h, (void *)1);
        return ks_arena_strdup(x->a, name);
    }
}

bool wl_name_taken(wl_ctx *x, const char *name) {
    char k[600];
    snprintf(k, sizeof(k), "%s/%s", x->ns, name);
    return ks_map_get(&x->taken, fnv64(k, 14695981039346656037ull) | 1) != NULL;
}

const char *wl_prefix(wl_ctx *x, const char *controller_name) {
    /* getPodsPrefix: "<name>-" unless that is not a valid pod name prefix
     * (too long), then the name itself */
    size_t n = strlen(controller_name);
    if (n + 1 > 253) return ks_arena_strdup(x->a, controller_name);
    return ks_arena_printf(x->a, "%s-", controller_name);
}

ks_tree *wl_owner_ref(wl_ctx *x, const char *api_version, const char *kind, const char *name, const char *uid) {
    ks_tree *r = kt_new(x->a, KT_MAP, x->line);
    wl_set_str(x->a, r, "apiVersion", api_version);
    wl_set_str(x->a, r, "kind", kind);
    wl_set_str(x->a, r, "name", name);
    wl_set_str(x->a, r, "uid", uid);
    kt_map_set(x->a, r, "controller", kt_bool(x->a, true));
    kt_map_set(x->a, r, "blockOwnerDeletion", kt_bool(x->a, true));
    ks_tree *seq = kt_new(x->a, KT_SEQ, x->line);
    kt_seq_add(x->a, seq, r);
    return seq;
}

const char *wl_now_text(wl_ctx *x) {
    char buf[KS_RFC3339_LEN];
    ks_time_format_rfc3339((int64_t)x->o->now * KS_NS_PER_SEC, false, buf);
    return ks_arena_strdup(x->a, buf);
}

ks_tree *wl_object(wl_ctx *x, const char *api_version, const char *kind, const char *name,
                   const char *generate_name, const char *uid) {
    ks_tree *o = kt_new(x->a, KT_MAP, x->line);
    wl_set_str(x->a, o, "apiVersion", api_version);
    wl_set_str(x->a, o, "kind", kind);
    ks_tree *md = wl_map_child(x->a, o, "metadata");
    wl_set_str(x->a, md, "name", name);
    if (generate_name) wl_set_str(x->a, md, "generateName", generate_name);
    wl_set_str(x->a, md, "namespace", x->ns);
    wl_set_str(x->a, md, "uid", uid);
    wl_set_str(x->a, md, "creationTimestamp", wl_now_text(x));
    return o;
}

ks_tree *wl_pod_tree(wl_ctx *x, const ks_tree *tmpl, const char *name, const char *generate_name,
                     ks_tree *owner_refs) {
    ks_tree *pod = wl_object(x, "v1", "Pod", name, generate_name, wl_uid(x, "Pod", name));
    ks_tree *md = (ks_tree *)kt_get(pod, "metadata");
    const ks_tree *tmd = kt_get(tmpl, "metadata");
    static const char *const copied[] = {"labels", "annotations", "finalizers"};
    for (int i = 0; i < 3; i++) {
        const ks_tree *v = kt_get(tmd, copied[i]);
        if (v && v->type != KT_NULL) kt_map_set(x->a, md, copied[i], kt_copy(x->a, v));
    }
    if (owner_refs) kt_map_set(x->a, md, "ownerReferences", owner_refs);
    const ks_tree *spec = kt_get(tmpl, "spec");
    kt_map_set(x->a, pod, "spec", spec ? kt_copy(x->a, spec) : kt_new(x->a, KT_MAP, x->line));
    return pod;
}

/* The DefaultTolerationSeconds admission plugin (on by default): a pod
 * that does not tolerate the not-ready or unreachable NoExecute taint
 * gets a toleration of it for 300 s. */
static void default_toleration_seconds(wl_ctx *x, ks_tree *spec) {
    static const char *const keys[] = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"};
    ks_tree *list = (ks_tree *)kt_get(spec, "tolerations");
    bool have[2] = {false, false};
    for (uint32_t i = 0; list && list->type == KT_SEQ && i < list->n; i++) {
        const ks_tree *k = kt_get(list->items[i], "key"), *e = kt_get(list->items[i], "effect");
        const char *key = k && k->text ? k->text : "", *eff = e && e->text ? e->text : "";
        for (int j = 0; j < 2; j++)
            if ((!*key || strcmp(key, keys[j]) == 0) && (!*eff || strcmp(eff, "NoExecute") == 0)) have[j] = true;
    }
    for (int j = 0; j < 2; j++) {
        if (have[j]) continue;
        if (!list || list->type != KT_SEQ) {
            list = kt_new(x->a, KT_SEQ, x->line);
            kt_map_set(x->a, spec, "tolerations", list);
        }
        ks_tree *t = kt_new(x->a, KT_MAP, x->line);
        wl_set_str(x->a, t, "key", keys[j]);
        wl_set_str(x->a, t, "operator", "Exists");
        wl_set_str(x->a, t, "effect", "NoExecute");
        kt_map_set(x->a, t, "tolerationSeconds", kt_int(x->a, 300));
        kt_seq_add(x->a, list, t);
    }
}

ks_pod *wl_decode_pod(wl_ctx *x, const ks_tree *t) {
    ks_tree *spec = (ks_tree *)kt_get(t, "spec");
    if (spec && spec->type == KT_MAP) default_toleration_seconds(x, spec);
    ks_decode_ctx ctx = {.file = x->file, .doc = x->doc, .next_input_index = x->out->next_input_index,
                         .errs = x->errs};
    size_t nerr = x->errs->n;
    ks_pod *p = ks_decode_pod(t, &ctx);
    x->out->next_input_index = ctx.next_input_index;
    if (!p) {
        if (x->errs->n == nerr) wl_error(x, "pod template: invalid");
        return NULL;
    }
    p->source_line = x->line;
    char *err = NULL;
    if (!ks_pod_admit(p, x->c, &err)) {
        wl_error(x, "%s", err ? err : "not admitted");
        free(err);
        ks_pod_unref(p);
        return NULL;
    }
    return p;
}

void wl_error(wl_ctx *x, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char where[600];
    if (x->line > 0) snprintf(where, sizeof(where), "%s:%d", x->file ? x->file : "<input>", x->line);
    else snprintf(where, sizeof(where), "%s", x->file ? x->file : "<input>");
    ks_errors_add(x->errs, "%s: %s %s/%s: %s", where, ks_workload_kind_lower(x->w->kind), x->ns, x->name, msg);
}

ks_workload *wl_decode_workload(wl_ctx *x, const ks_tree *t, ks_workload_kind kind) {
    ks_decode_ctx ctx = {.file = x->file, .doc = x->doc, .next_input_index = x->out->next_input_index,
                         .errs = x->errs};
    ks_workload *w = ks_decode_workload(t, kind, &ctx);
    x->out->next_input_index = ctx.next_input_index;
    if (w) w->source_line = x->line;
    return w;
}

ks_pvc *wl_decode_pvc(wl_ctx *x, const ks_tree *t) {
    ks_decode_ctx ctx = {.file = x->file, .doc = x->doc, .next_input_index = x->out->next_input_index,
                         .errs = x->errs};
    ks_pvc *p = ks_decode_pvc(t, &ctx);
    x->out->next_input_index = ctx.next_input_index;
    if (p) p->source_line = x->line;
    return p;
}

/* Labels of a template (metadata.labels), created when missing. */
ks_tree *wl_labels(wl_ctx *x, ks_tree *tmpl) {
    return wl_map_child(x->a, wl_map_child(x->a, tmpl, "metadata"), "labels");
}

int32_t wl_int(const ks_tree *t, const char *key, int32_t dflt) {
    const ks_tree *v = kt_get(t, key);
    return v && v->type == KT_INT ? (int32_t)v->ival : dflt;
}

void ks_wl_objects_free(ks_wl_objects *o) {
    for (uint32_t i = 0; i < o->pods.n; i++) ks_pod_unref(o->pods.v[i]);
    for (uint32_t i = 0; i < o->held.n; i++) ks_pod_unref(o->held.v[i]);
    for (uint32_t i = 0; i < o->pvcs.n; i++) KS_OBJECT_UNREF(o->pvcs.v[i]);
    for (uint32_t i = 0; i < o->workloads.n; i++) KS_OBJECT_UNREF(o->workloads.v[i]);
    for (uint32_t i = 0; i < o->rollout.old.n; i++) ks_pod_unref(o->rollout.old.v[i]);
    for (uint32_t i = 0; i < o->rollout.fresh.n; i++) ks_pod_unref(o->rollout.fresh.v[i]);
    free(o->rollout.old.v);
    free(o->rollout.fresh.v);
    free(o->rollout.flags.v);
    free(o->pods.v);
    free(o->held.v);
    free(o->pvcs.v);
    free(o->workloads.v);
    memset(o, 0, sizeof(*o));
}
