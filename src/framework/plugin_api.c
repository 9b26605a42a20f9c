/* The read-only accessors of the public plugin API (include/ksched/ksched.h)
 * over the internal object model: pods, nodes, NodeInfo, names, logging.
 * Thin on purpose: plugins get strings and integers, never our structs, so
 * the structs can change without breaking the plugin ABI. */
#include "api/node.h"
#include "api/pod.h"
#include "api/quantity.h"
#include "api/resource.h"
#include "codec/tree.h"
#include "framework/holds.h"
#include "framework/plugin_api.h"
#include "framework/framework_internal.h"
#include "framework/nodeinfo.h"
#include "util/intern.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/timefmt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* ---- names ---- */

ks_name_id ks_intern_name(const char *s) { return ks_intern(s ? s : ""); }
const char *ks_name_str(ks_name_id id) { return ks_str(id); }

/* A label value by key string; NULL when absent. Looking the key up
 * without interning it keeps plugins from growing the intern table with
 * keys no object has. */
static const char *label_value(const ks_labels *l, const char *key) {
    if (!key) return NULL;
    ks_id k = ks_intern_find(key);
    ks_id v;
    if (k == KS_ID_INVALID || !ks_labels_get(l, k, &v)) return NULL;
    return ks_str(v);
}

static const char *annotation_value(const ks_annotations *a, const char *key) {
    if (!key) return NULL;
    ks_id k = ks_intern_find(key);
    return k == KS_ID_INVALID ? NULL : ks_annotations_get(a, k);
}

static void label_at(const ks_labels *l, size_t i, const char **key, const char **value) {
    const char *k = NULL, *v = NULL;
    if (i < l->n) {
        k = ks_str(l->kv[i].key);
        v = ks_str(l->kv[i].value);
    }
    if (key) *key = k;
    if (value) *value = v;
}

/* One resource of a vector by name, in the units ks_resource keeps. */
/* ---- pods ---- */

const char *ks_pod_namespace(const ks_pod *p) { return ks_str(p->ns); }
const char *ks_pod_name(const ks_pod *p) { return ks_str(p->name); }
const char *ks_pod_uid(const ks_pod *p) { return p->uid ? p->uid : ""; }
const char *ks_pod_label(const ks_pod *p, const char *key) { return label_value(&p->labels, key); }
const char *ks_pod_annotation(const ks_pod *p, const char *key) {
    return annotation_value(&p->annotations, key);
}
size_t ks_pod_nlabels(const ks_pod *p) { return p->labels.n; }
void ks_pod_label_at(const ks_pod *p, size_t i, const char **key, const char **value) {
    label_at(&p->labels, i, key, value);
}
const char *ks_pod_scheduler_name(const ks_pod *p) { return ks_str(p->scheduler_name); }
const char *ks_pod_node_name(const ks_pod *p) { return ks_str(p->node_name); }
const char *ks_pod_nominated_node_name(const ks_pod *p) { return ks_str(p->nominated_node); }

const char *ks_pod_phase_name(const ks_pod *p) {
    switch (p->phase) {
    case KS_PHASE_PENDING: return "Pending";
    case KS_PHASE_RUNNING: return "Running";
    case KS_PHASE_SUCCEEDED: return "Succeeded";
    case KS_PHASE_FAILED: return "Failed";
    default: return "";
    }
}

int32_t ks_pod_get_priority(const ks_pod *p) { return ks_pod_priority(p); }
size_t ks_pod_nscheduling_gates(const ks_pod *p) { return p->ngates; }
int64_t ks_pod_request(const ks_pod *p, const char *resource) {
    return ks_resource_get_named(&p->requests, resource);
}
int64_t ks_pod_creation_unix(const ks_pod *p) { return p->creation_ts; }

/* The public API hands out const objects; reference counts are the one
 * field that changes, and it is atomic. */
const ks_pod *ks_pod_retain(const ks_pod *p) {
    if (p) ks_pod_ref((ks_pod *)p);
    return p;
}
void ks_pod_release(const ks_pod *p) {
    if (p) ks_pod_unref((ks_pod *)p);
}

/* ---- nodes ---- */

const char *ks_node_name(const ks_node *n) { return ks_str(n->name); }
const char *ks_node_label(const ks_node *n, const char *key) { return label_value(&n->labels, key); }
const char *ks_node_annotation(const ks_node *n, const char *key) {
    return annotation_value(&n->annotations, key);
}
size_t ks_node_nlabels(const ks_node *n) { return n->labels.n; }
void ks_node_label_at(const ks_node *n, size_t i, const char **key, const char **value) {
    label_at(&n->labels, i, key, value);
}
size_t ks_node_ntaints(const ks_node *n) { return n->ntaints; }

void ks_node_taint(const ks_node *n, size_t i, const char **key, const char **value,
                   const char **effect) {
    const ks_taint *t = i < n->ntaints ? &n->taints[i] : NULL;
    if (key) *key = t ? ks_str(t->key) : NULL;
    if (value) *value = t ? ks_str(t->value) : NULL;
    if (effect) *effect = t ? ks_effect_name(t->effect) : NULL;
}

bool ks_node_is_unschedulable(const ks_node *n) { return n->unschedulable; }
int64_t ks_node_allocatable(const ks_node *n, const char *resource) {
    return ks_resource_get_named(&n->allocatable, resource);
}
int64_t ks_node_capacity(const ks_node *n, const char *resource) {
    return ks_resource_get_named(&n->capacity, resource);
}
const ks_node *ks_node_retain(const ks_node *n) {
    if (n) ks_node_ref((ks_node *)n);
    return n;
}
void ks_node_release(const ks_node *n) {
    if (n) ks_node_unref((ks_node *)n);
}

/* ---- NodeInfo (the rest is with the framework, src/framework/framework.c) ---- */

const char *ks_node_info_name(const ks_node_info *ni) { return ks_str(ni->name); }
uint64_t ks_node_info_generation(const ks_node_info *ni) { return ni->generation; }

/* ---- logging ---- */

bool ks_log_enabled(int v) { return KS_V(v); }

static void log_v(char severity, int v, const char *file, int line, const char *fmt,
                  va_list ap) {
    if (severity == 'I' && !KS_V(v)) return;
    char buf[1024];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    ks_log_write_v(severity, v, file ? file : "plugin", line, "%s", buf);
}

void ks_log_at(char severity, int v, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_v(severity, v, file, line, fmt, ap);
    va_end(ap);
}

void ks_logf(int v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_v('I', v, "plugin", 0, fmt, ap);
    va_end(ap);
}

/* ---- args: the two readers that need the object model ---- */

bool ks_args_quantity(const ks_args *a, const char *resource, int64_t *out) {
    if (!a || !resource || !a->text) return false;
    if (a->type != KT_STRING && a->type != KT_INT && a->type != KT_FLOAT) return false;
    const char *why;
    bool milli = ks_resource_class(resource) == KS_RCLASS_CPU;
    return ks_quantity_parse_int(a->text, milli, out, &why);
}

/* RFC 3339 as Kubernetes writes metadata timestamps: a date, 'T', a time,
 * optional fraction, then 'Z' or an offset. */
bool ks_args_time(const ks_args *a, int64_t *unix_seconds) {
    int32_t nsec;
    return a && a->type == KT_STRING && a->text && ks_time_parse_rfc3339_sec(a->text, unix_seconds, &nsec);
}

/* ---- objects as trees ---- */

static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;

static ks_tree *quantity_tree(ks_arena *a, ks_id name, int64_t v) {
    char buf[64];
    ks_rclass c = ks_resource_class(ks_str(name));
    if (c == KS_RCLASS_CPU) ks_quantity_format_milli(v, buf, sizeof(buf));
    else if (c == KS_RCLASS_MEMORY || c == KS_RCLASS_EPHEMERAL || ks_resource_is_hugepages(ks_str(name)))
        ks_quantity_format_bytes(v, buf, sizeof(buf));
    else snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return kt_string(a, buf, 0);
}

static void add_resource(ks_arena *a, ks_tree *map, ks_id name, int64_t v) {
    kt_map_add(a, map, ks_str(name), quantity_tree(a, name, v));
}

static ks_tree *build_pod_group_tree(const ks_pod_group *pg) {
    ks_arena *a = pg->arena;
    ks_tree *t = kt_new(a, KT_MAP, 0);
    kt_map_add(a, t, "apiVersion", kt_string(a, "scheduling.x-k8s.io/v1alpha1", 0));
    kt_map_add(a, t, "kind", kt_string(a, "PodGroup", 0));
    ks_tree *meta = kt_new(a, KT_MAP, 0);
    kt_map_add(a, meta, "name", kt_string(a, ks_str(pg->name), 0));
    kt_map_add(a, meta, "namespace", kt_string(a, ks_str(pg->ns), 0));
    if (pg->creation_ts) {
        char buf[KS_RFC3339_LEN];
        ks_time_format_rfc3339(pg->creation_ts * KS_NS_PER_SEC, false, buf);
        kt_map_add(a, meta, "creationTimestamp", kt_string(a, buf, 0));
    }
    kt_map_add(a, t, "metadata", meta);
    ks_tree *spec = kt_new(a, KT_MAP, 0);
    kt_map_add(a, spec, "minMember", kt_int(a, pg->min_member));
    if (pg->has_min_resources) {
        const ks_resource *r = &pg->min_resources;
        ks_tree *mr = kt_new(a, KT_MAP, 0);
        if (r->milli_cpu) add_resource(a, mr, KS_RES_CPU, r->milli_cpu);
        if (r->memory) add_resource(a, mr, KS_RES_MEMORY, r->memory);
        if (r->ephemeral_storage) add_resource(a, mr, KS_RES_EPHEMERAL, r->ephemeral_storage);
        if (r->allowed_pods) add_resource(a, mr, KS_RES_PODS, r->allowed_pods);
        for (uint32_t i = 0; i < r->nscalar; i++) add_resource(a, mr, r->scalars[i].name, r->scalars[i].val);
        kt_map_add(a, spec, "minResources", mr);
    }
    if (pg->schedule_timeout_seconds)
        kt_map_add(a, spec, "scheduleTimeoutSeconds", kt_int(a, pg->schedule_timeout_seconds));
    kt_map_add(a, t, "spec", spec);
    return t;
}

const ks_tree *ks_pod_group_tree(const ks_pod_group *pg) {
    pthread_mutex_lock(&tree_lock);
    /* Built once and kept on the object: a cache, not a change to what the
     * object says, hence the cast. */
    ks_pod_group *w = (ks_pod_group *)pg;
    if (!w->tree) w->tree = build_pod_group_tree(pg);
    pthread_mutex_unlock(&tree_lock);
    return pg->tree;
}

/* ---- the handle's reach into the scheduler (see ks_framework_env) ---- */

/* Without a scheduler behind the framework (an embedder's framework), the
 * pods a plugin can see are the ones in the snapshot. */
static size_t list_snapshot_pods(const ks_snapshot *snap, ks_id ns, ks_id key, ks_id value,
                                 const ks_pod **out, size_t max) {
    size_t n = 0;
    for (uint32_t i = 0; snap && i < snap->nnodes; i++) {
        const ks_node_info *ni = snap->nodes[i];
        for (uint32_t j = 0; j < ni->npods; j++) {
            const ks_pod *p = ni->pods[j];
            if (!ks_pod_matches(p, ns, key, value)) continue;
            if (n < max) out[n] = ks_pod_ref((ks_pod *)p);
            n++;
        }
    }
    return n;
}

static void release_pod(void *p) { ks_pod_unref(p); }

bool ks_pod_matches(const ks_pod *p, ks_id ns, ks_id key, ks_id value) {
    if (ns != KS_ID_INVALID && p->ns != ns) return false;
    if (key == KS_ID_INVALID) return true;
    ks_id v;
    return ks_labels_get(&p->labels, key, &v) && v == value;
}

size_t ks_handle_list_pods(ks_handle *h, const char *ns, const char *label_key,
                           const char *label_value, const ks_pod **out, size_t max) {
    ks_id nsid = KS_ID_INVALID, key = KS_ID_INVALID, value = KS_ID_INVALID;
    /* A string never interned is on no object: nothing can match. */
    if (ns && (nsid = ks_intern_find(ns)) == KS_ID_INVALID) return 0;
    if (label_key) {
        key = ks_intern_find(label_key);
        value = ks_intern_find(label_value ? label_value : "");
        if (key == KS_ID_INVALID || value == KS_ID_INVALID) return 0;
    }
    const ks_framework *fw = h->fw;
    size_t n = fw->env.list_pods ? fw->env.list_pods(fw->env.ctx, nsid, key, value, out, max)
                                 : list_snapshot_pods(fw->snapshot, nsid, key, value, out, max);
    /* The pods came referenced: a watch event may replace or delete any of
     * them while the plugin reads it. They are held until the extension
     * point returns. */
    for (size_t i = 0; i < n && i < max; i++) ks_hold(release_pod, (void *)out[i]);
    return n;
}

void ks_handle_activate_pod(ks_handle *h, const ks_pod *pod) {
    const ks_framework *fw = h->fw;
    if (fw->env.activate && pod) fw->env.activate(fw->env.ctx, pod);
}

int64_t ks_handle_now_ns(const ks_handle *h) {
    const ks_framework *fw = h->fw;
    return fw->env.now ? fw->env.now(fw->env.ctx) : ks_clock_now(ks_clock_real());
}
