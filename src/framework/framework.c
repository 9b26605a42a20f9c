/* Framework creation from a resolved profile, the handle plugins get, and
 * the small containers the run functions hand around (PreFilter node
 * sets, per-node status maps). The run functions are in runtime.c. */
#include "framework/framework_internal.h"
#include "framework/holds.h"
#include "framework/plugin_api.h"
#include "api/node.h"
#include "api/pod.h"
#include "framework/cycle_state.h"
#include "framework/fw_metrics.h"
#include "framework/status.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- creation ------------------------------------------------------------ */

static ks_plugin_inst *find_inst(ks_framework *fw, const char *name) {
    for (uint32_t i = 0; i < fw->nplugins; i++)
        if (strcmp(fw->plugins[i].name, name) == 0) return &fw->plugins[i];
    return NULL;
}

/* Plugins that can reject a pod need events that may undo the rejection
 * (upstream fillEnqueueExtensions). Registering none is read as "any
 * event", so a pod rejected by such a plugin is never stranded. */
static void load_events(ks_plugin_inst *in) {
    const ks_plugin_ops *o = in->ops;
    in->enqueue_ext = o->pre_enqueue || o->pre_filter || o->filter || o->reserve || o->permit;
    if (!in->enqueue_ext) return;
    if (!o->events_to_register) {
        in->all_events = true;
        return;
    }
    ks_cluster_event buf[65];
    size_t n = o->events_to_register(in->self, buf, 64);
    if (n > 64) n = 64;
    if (n == 0) {
        in->all_events = true;
        return;
    }
    /* The generic Update as the union of the finer kinds, once. */
    bool node_add = false, node_taint = false;
    for (size_t i = 0; i < n; i++) {
        buf[i].actions = ks_actions_normalize(buf[i].actions);
        if (buf[i].resource & KS_EV_NODE) {
            node_add |= (buf[i].actions & KS_ACT_ADD) != 0;
            node_taint |= (buf[i].actions & KS_ACT_UPDATE_NODE_TAINT) != 0;
        }
    }
    /* upstream buildQueueingHintMap: a plugin interested in node adds but
     * not in taint updates gets taint updates too, with the default hint
     * (Queue) -- a leftover of the pre-hint node pre-check that v1.34
     * still applies, so such a pod is retried on every taint change. */
    if (node_add && !node_taint) {
        buf[n++] = (ks_cluster_event){KS_EV_NODE, KS_ACT_UPDATE_NODE_TAINT};
        in->taint_added = true;
    }
    in->events = ks_xmalloc(n * sizeof(*in->events));
    memcpy(in->events, buf, n * sizeof(*in->events));
    in->nevents = n;
}

static bool registered(const ks_plugin_inst *pl, ks_cluster_event ev) {
    if (pl->all_events) return true;
    for (size_t i = 0; i < pl->nevents; i++)
        if (ks_event_match(pl->events[i], ev)) return true;
    return false;
}

bool ks_framework_plugin_registered(const ks_framework *fw, unsigned i, ks_cluster_event ev) {
    return i < fw->nplugins && registered(&fw->plugins[i], ev);
}

bool ks_framework_registered(const ks_framework *fw, ks_cluster_event ev) {
    for (uint32_t i = 0; i < fw->nplugins; i++)
        if (fw->plugins[i].enqueue_ext && registered(&fw->plugins[i], ev)) return true;
    return false;
}

ks_queueing_hint ks_framework_plugin_hint(const ks_framework *fw, unsigned plugin, ks_cluster_event ev,
                                          const ks_pod *pod, const ks_event_object *old_obj,
                                          const ks_event_object *new_obj, bool *failed) {
    if (failed) *failed = false;
    const ks_plugin_inst *pl = &fw->plugins[plugin];
    if (pl->all_events || !pl->ops->queueing_hint) return KS_QUEUE;
    if (pl->taint_added) {
        /* the added registration has no hint of the plugin's */
        bool own = false;
        for (size_t i = 0; i + 1 < pl->nevents && !own; i++) own = ks_event_match(pl->events[i], ev);
        if (!own && ks_event_match(pl->events[pl->nevents - 1], ev)) return KS_QUEUE;
    }
    char *err = NULL;
    ks_queueing_hint h = pl->ops->queueing_hint(pl->self, ev, pod, old_obj, new_obj, &err);
    if (err) {
        /* upstream: an error counts as Queue (the pod is never stranded) */
        char buf[80], pb[512];
        ks_errorf("QueueingHintFn returns error: plugin %s, event %s, pod %s: %s", pl->name,
                  ks_event_label(ev, buf, sizeof(buf)), ks_pod_fullname(pod, pb, sizeof(pb)), err);
        free(err);
        if (failed) *failed = true;
        return KS_QUEUE;
    }
    return h == KS_QUEUE_SKIP ? KS_QUEUE_SKIP : KS_QUEUE;
}

static void fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(char **err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    *err = ks_xstrdup(buf);
}

/* Whether every plugin a binding cycle runs (PreBind, Bind, PostBind) is
 * ksched's own (see ks_framework_binding_plugins_own). */
static bool binding_plugins_own(const ks_framework *fw, const ks_registry *reg) {
    static const int eps[] = {KS_EP_PRE_BIND, KS_EP_BIND, KS_EP_POST_BIND};
    for (size_t e = 0; e < sizeof(eps) / sizeof(eps[0]); e++)
        for (uint32_t i = 0; i < fw->ep[eps[e]].n; i++)
            if (!ks_registry_is_own(reg, fw->ep[eps[e]].v[i]->ops)) return false;
    return true;
}

bool ks_framework_binding_plugins_own(const ks_framework *fw) { return fw && fw->binding_own; }

ks_framework *ks_framework_new(ks_registry *reg, const ks_profile_config *profile,
                               const ks_framework_options *opts, char **err) {
    if (!reg) reg = ks_default_registry();
    if (err) *err = NULL;
    ks_framework *fw = ks_xcalloc(1, sizeof(*fw));
    fw->handle.fw = fw;
    fw->profile_name = ks_xstrdup(profile->scheduler_name ? profile->scheduler_name
                                                          : KS_DEFAULT_SCHEDULER_NAME);
    fw->has_percentage = profile->has_percentage;
    fw->percentage_of_nodes_to_score = profile->percentage_of_nodes_to_score;
#ifdef KS_DEBUG
    fw->checksums = true;
#else
    fw->checksums = opts && opts->debug_checksums;
#endif
    /* Before the plugins are created: they read the seed and the gates. */
    fw->features = profile->features_set ? profile->features : ks_feature_gates_current();
    fw->seed = opts ? opts->seed : 0;
    fw->ties = opts ? opts->ties : KS_TIES_RANDOM;
    fw->rng = fw->seed ? fw->seed : 0x6b73636865640001ULL;
    if (opts && opts->parallelism > 0) fw->par = ks_parallelizer_new(opts->parallelism);
    else fw->par = ks_parallelizer_new(KS_DEFAULT_PARALLELISM);
    fw->owns_par = true;

    /* One instance per plugin name, created in order of first appearance
     * across the extension points; all points share it. */
    uint32_t cap = 0;
    for (int ep = 0; ep < KS_EP_COUNT; ep++) cap += profile->resolved[ep].n;
    fw->plugins = ks_xcalloc(cap ? cap : 1, sizeof(*fw->plugins));
    for (int ep = 0; ep < KS_EP_COUNT; ep++) {
        const ks_resolved_list *l = &profile->resolved[ep];
        for (uint32_t i = 0; i < l->n; i++) {
            const char *name = l->plugins[i].name;
            if (find_inst(fw, name)) continue;
            const ks_plugin_ops *ops = ks_registry_find(reg, name);
            if (!ops) {
                fail(err, "%s \"%s\" does not exist", ks_ext_point_type((ks_ext_point)ep), name);
                goto bad;
            }
            if (fw->nplugins == KS_MAX_PLUGINS) {
                fail(err, "profile %s: more than %d plugins", fw->profile_name, KS_MAX_PLUGINS);
                goto bad;
            }
            ks_plugin_inst *in = &fw->plugins[fw->nplugins];
            in->ops = ops;
            in->name = ops->name;
            in->index = fw->nplugins;
            if (ops->create) {
                char *perr = NULL;
                in->self = ops->create(ks_profile_plugin_args(profile, name), &fw->handle, &perr);
                if (!in->self) {
                    fail(err, "initializing plugin \"%s\": %s", name, perr ? perr : "create failed");
                    free(perr);
                    goto bad;
                }
            }
            fw->nplugins++;
            load_events(in);
        }
    }
    for (int ep = 0; ep < KS_EP_COUNT; ep++) {
        const ks_resolved_list *l = &profile->resolved[ep];
        fw->ep[ep].v = ks_xcalloc(l->n ? l->n : 1, sizeof(ks_plugin_inst *));
        for (uint32_t i = 0; i < l->n; i++) {
            ks_plugin_inst *in = find_inst(fw, l->plugins[i].name);
            if (!(ks_plugin_ops_points(in->ops) & KS_EP_BIT(ep))) {
                fail(err, "plugin \"%s\" does not extend %s plugin", in->name,
                     ks_ext_point_type((ks_ext_point)ep));
                goto bad;
            }
            fw->ep[ep].v[fw->ep[ep].n++] = in;
        }
    }
    const ks_resolved_list *sl = &profile->resolved[KS_EP_SCORE];
    fw->score_weights = ks_xcalloc(sl->n ? sl->n : 1, sizeof(int64_t));
    for (uint32_t i = 0; i < sl->n; i++) fw->score_weights[i] = sl->plugins[i].weight > 0 ? sl->plugins[i].weight : 1;

    if (fw->ep[KS_EP_QUEUE_SORT].n != 1) {
        fail(err, "only one queue sort plugin required for profile with scheduler name \"%s\", but got %u",
             fw->profile_name, fw->ep[KS_EP_QUEUE_SORT].n);
        goto bad;
    }
    if (fw->ep[KS_EP_BIND].n == 0) {
        fail(err, "at least one bind plugin is needed for profile with scheduler name \"%s\"",
             fw->profile_name);
        goto bad;
    }
    fw->binding_own = binding_plugins_own(fw, reg);
    fw->metrics = ks_fw_metrics_new(fw);
    fw->node_mask = ks_fwm_node_mask(fw);
    return fw;
bad:
    ks_framework_free(fw);
    return NULL;
}

ks_framework *ks_framework_new_default(ks_registry *reg, const ks_framework_options *opts,
                                       char **err) {
    if (!reg) reg = ks_default_registry();
    ks_config *cfg = ks_config_default();
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_framework *fw = NULL;
    if (!ks_config_resolve(cfg, ks_registry_points, reg, &errs)) {
        if (err) *err = ks_xstrdup(errs.n ? errs.msgs[0] : "cannot resolve the default profile");
    } else {
        fw = ks_framework_new(reg, &cfg->profiles[0], opts, err);
    }
    ks_config_errors_free(&errs);
    ks_config_free(cfg);
    return fw;
}

void ks_framework_free(ks_framework *fw) {
    if (!fw) return;
    ks_holds_release();
    for (uint32_t i = 0; i < fw->nplugins; i++) {
        ks_plugin_inst *in = &fw->plugins[i];
        if (in->ops->destroy && in->self) in->ops->destroy(in->self);
        free(in->events);
    }
    free(fw->plugins);
    for (int ep = 0; ep < KS_EP_COUNT; ep++) free(fw->ep[ep].v);
    free(fw->score_weights);
    if (fw->owns_waiting) ks_waiting_pods_free(fw->waiting);
    if (fw->owns_par) ks_parallelizer_free(fw->par);
    ks_fw_metrics_free(fw->metrics);
    free(fw->profile_name);
    free(fw);
}

void ks_framework_set_env(ks_framework *fw, const ks_framework_env *env) {
    if (env) fw->env = *env;
    else memset(&fw->env, 0, sizeof(fw->env));
}

void ks_framework_share(ks_framework *fw, ks_waiting_pods *wp, ks_parallelizer *par) {
    if (wp) {
        if (fw->owns_waiting) ks_waiting_pods_free(fw->waiting);
        fw->waiting = wp;
        fw->owns_waiting = false;
    }
    if (par) {
        if (fw->owns_par) ks_parallelizer_free(fw->par);
        fw->par = par;
        fw->owns_par = false;
    }
}

/* Embedders that never attached a scheduler get a private waiting map on
 * the real clock. */
ks_waiting_pods *ks_framework_waiting(ks_framework *fw) {
    if (!fw->waiting) {
        fw->waiting = ks_waiting_pods_new(NULL);
        fw->owns_waiting = true;
    }
    return fw->waiting;
}

void ks_framework_set_snapshot(ks_framework *fw, const ks_snapshot *snap) { fw->snapshot = snap; }

const char *ks_framework_profile_name(const ks_framework *fw) { return fw->profile_name; }
size_t ks_framework_nplugins(const ks_framework *fw) { return fw->nplugins; }
const char *ks_framework_plugin_name(const ks_framework *fw, size_t i) {
    return i < fw->nplugins ? fw->plugins[i].name : NULL;
}
int ks_framework_plugin_index(const ks_framework *fw, const char *name) {
    if (!name) return -1;
    /* statuses carry the plugin's own name pointer: found without strcmp
     * (the diagnosis asks for every node a filter rejects) */
    for (uint32_t i = 0; i < fw->nplugins; i++)
        if (fw->plugins[i].name == name) return (int)i;
    for (uint32_t i = 0; i < fw->nplugins; i++)
        if (strcmp(fw->plugins[i].name, name) == 0) return (int)i;
    return -1;
}
const ks_plugin_inst *ks_framework_plugin(const ks_framework *fw, const char *name) {
    int i = ks_framework_plugin_index(fw, name);
    return i < 0 ? NULL : &fw->plugins[i];
}
size_t ks_framework_point_nplugins(const ks_framework *fw, ks_ext_point ep) { return fw->ep[ep].n; }
const char *ks_framework_point_plugin(const ks_framework *fw, ks_ext_point ep, size_t i) {
    return i < fw->ep[ep].n ? fw->ep[ep].v[i]->name : NULL;
}
bool ks_framework_percentage_of_nodes_to_score(const ks_framework *fw, int32_t *pct) {
    if (fw->has_percentage) *pct = fw->percentage_of_nodes_to_score;
    return fw->has_percentage;
}
ks_parallelizer *ks_framework_parallelizer(const ks_framework *fw) { return fw->par; }
ks_tie_rules ks_framework_tie_rules(const ks_framework *fw) { return fw->ties; }
uint64_t ks_framework_rand(ks_framework *fw) {
    uint64_t z = (fw->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
bool ks_framework_has_filter_plugins(const ks_framework *fw) { return fw->ep[KS_EP_FILTER].n > 0; }
bool ks_framework_has_score_plugins(const ks_framework *fw) { return fw->ep[KS_EP_SCORE].n > 0; }
bool ks_framework_has_post_filter_plugins(const ks_framework *fw) {
    return fw->ep[KS_EP_POST_FILTER].n > 0;
}

static int cmp_cstr(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t ks_framework_mask_names(const ks_framework *fw, const ks_plugin_mask *m, ks_strbuf *b) {
    const char *names[KS_MAX_PLUGINS];
    size_t n = 0;
    for (uint32_t k = 0; k < fw->nplugins; k++)
        if (ks_plugin_mask_has(m, k)) names[n++] = fw->plugins[k].name;
    qsort(names, n, sizeof(names[0]), cmp_cstr);
    for (size_t k = 0; k < n; k++) {
        if (k) ks_sb_putc(b, ' ');
        ks_sb_puts(b, names[k]);
    }
    return n;
}

/* ---- the handle ---------------------------------------------------------- */

size_t ks_handle_num_nodes(const ks_handle *h) {
    const ks_snapshot *s = h->fw->snapshot;
    return s ? s->nnodes : 0;
}

const ks_node_info *ks_handle_node_info(const ks_handle *h, size_t i) {
    const ks_snapshot *s = h->fw->snapshot;
    return s && i < s->nnodes ? s->nodes[i] : NULL;
}

const ks_node_info *ks_handle_node_info_by_name(const ks_handle *h, const char *name) {
    const ks_snapshot *s = h->fw->snapshot;
    if (!s || !name) return NULL;
    ks_id id = ks_intern_find(name);
    return id == KS_ID_INVALID ? NULL : ks_snapshot_get(s, id);
}

const ks_snapshot *ks_handle_snapshot(const ks_handle *h) { return h->fw->snapshot; }

const ks_objects *ks_handle_objects(const ks_handle *h) {
    const ks_framework *fw = h->fw;
    return fw->env.objects ? fw->env.objects(fw->env.ctx) : NULL;
}

struct ks_framework *ks_handle_framework(ks_handle *h) { return h->fw; }

uint64_t ks_handle_seed(const ks_handle *h) { return h ? h->fw->seed : 0; }
ks_tie_rules ks_handle_tie_rules(const ks_handle *h) { return h && h->fw ? h->fw->ties : KS_TIES_RANDOM; }
bool ks_handle_feature_enabled(const ks_handle *h, ks_feature f) {
    return h && h->fw ? ks_feature_set_has(h->fw->features, f) : ks_feature_enabled(f);
}

int ks_handle_parallelism(const ks_handle *h) { return ks_parallelizer_parallelism(h->fw->par); }

typedef struct plugin_job {
    void (*fn)(size_t i, void *arg);
    void *arg;
} plugin_job;

/* A plugin's function on a worker runs as part of the plugin's extension
 * point: what the handle lends it there is held until it returns. */
static void run_plugin_job(size_t i, void *arg) {
    plugin_job *j = arg;
    size_t held = ks_holds_mark();
    j->fn(i, j->arg);
    ks_holds_release_to(held);
}

void ks_handle_parallelize(ks_handle *h, size_t n, void (*fn)(size_t i, void *arg), void *arg) {
    plugin_job j = {fn, arg};
    ks_parallelize(h->fw->par, n, run_plugin_job, &j, NULL);
}

size_t ks_handle_waiting_pods(ks_handle *h, ks_waiting_pod **out, size_t max) {
    return ks_waiting_pods_list_held(ks_framework_waiting(h->fw), out, max);
}

ks_waiting_pod *ks_handle_get_waiting_pod(ks_handle *h, const char *pod_uid) {
    return ks_waiting_pods_find_uid_held(ks_framework_waiting(h->fw), pod_uid);
}

ks_status *ks_handle_bind(ks_handle *h, const ks_pod *pod, const char *node) {
    ks_framework *fw = h->fw;
    if (!fw->env.bind) return ks_status_new(KS_ERROR, "no backend to bind pods with");
    return fw->env.bind(fw->env.ctx, pod, node);
}

ks_status *ks_handle_api_call(ks_handle *h, const struct ks_api_call *call) {
    ks_framework *fw = h->fw;
    return fw->env.api_call ? fw->env.api_call(fw->env.ctx, call)
                            : ks_status_new(KS_SKIP, "no cluster client to write to");
}

const void *ks_handle_scheduler_key(const ks_handle *h) { return h->fw->env.ctx ? h->fw->env.ctx : (const void *)h; }

ks_status *ks_handle_delete_pod(ks_handle *h, const ks_pod *pod) {
    ks_framework *fw = h->fw;
    if (!fw->env.delete_pod) return ks_status_new(KS_ERROR, "no backend to delete pods with");
    return fw->env.delete_pod(fw->env.ctx, pod);
}

/* Nodes and bound pods come from the cycle's snapshot, the other kinds
 * from the listers' view. An object decoded without its source (listed
 * from an API server) has no tree unless its kind builds one (PodGroup). */
const ks_args *ks_handle_get_object(ks_handle *h, const char *kind, const char *ns,
                                    const char *name) {
    if (!kind || !name) return NULL;
    ks_id nid = ks_intern_find(name);
    ks_id nsid = ns ? ks_intern_find(ns) : 0;
    if (nid == KS_ID_INVALID || nsid == KS_ID_INVALID) return NULL;
    const ks_snapshot *snap = ks_handle_snapshot(h);
    if (strcmp(kind, "Node") == 0) {
        const ks_node_info *ni = snap ? ks_snapshot_get(snap, nid) : NULL;
        return ni && ni->node ? ni->node->tree : NULL;
    }
    if (strcmp(kind, "Pod") == 0) {
        for (uint32_t i = 0; snap && i < snap->nnodes; i++) {
            const ks_node_info *ni = snap->nodes[i];
            for (uint32_t j = 0; j < ni->npods; j++)
                if (ni->pods[j]->name == nid && ni->pods[j]->ns == nsid) return ni->pods[j]->tree;
        }
        return NULL;
    }
    const ks_objects *c = ks_handle_objects(h);
    if (!c) return NULL;
    if (strcmp(kind, "PodGroup") == 0) {
        for (uint32_t i = 0; i < c->pod_groups.n; i++) {
            const ks_pod_group *pg = c->pod_groups.v[i];
            if (pg->name == nid && pg->ns == nsid) return ks_pod_group_tree(pg);
        }
    } else if (strcmp(kind, "PriorityClass") == 0) {
        const ks_priority_class *pc = ks_objects_priority_class(c, nid);
        return pc ? pc->tree : NULL;
    }
    return NULL;
}

void ks_handle_event(ks_handle *h, const ks_pod *regarding, const char *type, const char *reason,
                     const char *action, const char *fmt, ...) {
    ks_framework *fw = h->fw;
    if (!fw->env.event) return;
    va_list ap;
    va_start(ap, fmt);
    char *note = ks_xvasprintf(fmt, ap);
    va_end(ap);
    fw->env.event(fw->env.ctx, regarding, NULL, type, reason, action, note);
    free(note);
}

/* ---- NodeInfo accessors -------------------------------------------------- */

const ks_node *ks_node_info_node(const ks_node_info *ni) { return ni->node; }
size_t ks_node_info_npods(const ks_node_info *ni) { return ni->npods; }
const ks_pod *ks_node_info_pod(const ks_node_info *ni, size_t i) {
    return i < ni->npods ? ni->pods[i] : NULL;
}

int64_t ks_node_info_allocatable(const ks_node_info *ni, const char *resource) {
    return ks_resource_get_named(&ni->allocatable, resource);
}
int64_t ks_node_info_requested(const ks_node_info *ni, const char *resource) {
    /* Pods are counted, not requested (upstream uses len(Pods)). */
    if (ks_resource_class(resource) == KS_RCLASS_PODS) return ni->npods;
    return ks_resource_get_named(&ni->requested, resource);
}

int64_t ks_node_info_image_size(const ks_node_info *ni, const char *image) {
    ks_id id = ks_normalize_image(image);
    uint32_t lo = 0, hi = ni->nimages;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (ni->images[mid].name < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < ni->nimages && ni->images[lo].name == id ? ni->images[lo].size : 0;
}

/* ---- PreFilter results --------------------------------------------------- */

ks_pre_filter_result *ks_pre_filter_result_new(ks_cycle_state *st) {
    ks_pre_filter_result *r = ks_cycle_state_alloc(st, sizeof(*r));
    r->st = st;
    return r;
}

static int cmp_id(const void *a, const void *b) {
    ks_id x = *(const ks_id *)a, y = *(const ks_id *)b;
    return x < y ? -1 : x > y;
}

static void add_id(ks_pre_filter_result *r, ks_id id) {
    /* Keep the set sorted: binary search, then insert. Plugins add few
     * names (a node name selector) or add them in node order (mostly
     * increasing ids: appended). */
    uint32_t lo = 0, hi = r->n;
    if (hi && r->nodes[hi - 1] < id) lo = hi;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (r->nodes[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < r->n && r->nodes[lo] == id) return;
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? r->cap * 2 : 16;
        ks_id *nv = ks_cycle_state_alloc(r->st, nc * sizeof(ks_id));
        if (r->n) memcpy(nv, r->nodes, r->n * sizeof(ks_id));
        r->nodes = nv;
        r->cap = nc;
    }
    memmove(&r->nodes[lo + 1], &r->nodes[lo], (r->n - lo) * sizeof(ks_id));
    r->nodes[lo] = id;
    r->n++;
}

void ks_pre_filter_result_add(ks_pre_filter_result *r, const char *node_name) { add_id(r, ks_intern(node_name)); }
void ks_pre_filter_result_add_node(ks_pre_filter_result *r, const ks_node_info *ni) { add_id(r, ni->name); }

bool ks_pre_filter_result_all_nodes(const ks_pre_filter_result *r) { return r == NULL; }
size_t ks_pre_filter_result_len(const ks_pre_filter_result *r) { return r ? r->n : 0; }
const char *ks_pre_filter_result_node(const ks_pre_filter_result *r, size_t i) {
    return r && i < r->n ? ks_str(r->nodes[i]) : NULL;
}
bool ks_pre_filter_result_has_id(const ks_pre_filter_result *r, ks_id id) {
    if (!r) return true;
    return bsearch(&id, r->nodes, r->n, sizeof(ks_id), cmp_id) != NULL;
}
bool ks_pre_filter_result_has(const ks_pre_filter_result *r, const char *node_name) {
    if (!r) return true;
    ks_id id = ks_intern_find(node_name);
    return id != KS_ID_INVALID && ks_pre_filter_result_has_id(r, id);
}

/* ---- node status maps ---------------------------------------------------- */

void ks_node_status_map_init(ks_node_status_map *m) { memset(m, 0, sizeof(*m)); }

void ks_node_status_map_clear(ks_node_status_map *m) {
    for (uint32_t i = 0; i < m->n; i++) ks_status_free(m->v[i].status);
    free(m->v);
    ks_map_free(&m->index);
    ks_status_free(m->absent);
    memset(m, 0, sizeof(*m));
}

void ks_node_status_map_put(ks_node_status_map *m, ks_id node, ks_status *s) {
    /* one lookup: insert as the next entry, and put back an older one */
    uintptr_t at = (uintptr_t)ks_map_put(&m->index, (uint64_t)node + 1, (void *)(uintptr_t)(m->n + 1));
    if (at) {
        ks_map_put(&m->index, (uint64_t)node + 1, (void *)at);
        ks_status_free(m->v[at - 1].status);
        m->v[at - 1].status = s;
        return;
    }
    KS_GROW(m->v, m->cap, m->n + 1);
    m->v[m->n] = (ks_node_status_entry){.node = node, .status = s};
    m->n++;
}

void ks_node_status_map_reserve(ks_node_status_map *m, size_t more) {
    KS_GROW(m->v, m->cap, m->n + more);
    ks_map_reserve(&m->index, m->n + more);
}

static const ks_status default_absent = {.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE};

const ks_status *ks_node_status_map_absent_status(const ks_node_status_map *m) {
    return m->absent ? m->absent : &default_absent;
}

const ks_status *ks_node_status_map_lookup(const ks_node_status_map *m, ks_id node) {
    uintptr_t at = (uintptr_t)ks_map_get(&m->index, (uint64_t)node + 1);
    return at ? m->v[at - 1].status : ks_node_status_map_absent_status(m);
}

ks_node_status_map *ks_node_status_map_new(void) { return ks_xcalloc(1, sizeof(ks_node_status_map)); }

void ks_node_status_map_set(ks_node_status_map *m, const char *node_name, ks_status *status) {
    ks_node_status_map_put(m, ks_intern(node_name), status);
}

void ks_node_status_map_set_absent(ks_node_status_map *m, ks_status *status) {
    ks_status_free(m->absent);
    m->absent = status;
}

void ks_node_status_map_free(ks_node_status_map *m) {
    if (!m) return;
    ks_node_status_map_clear(m);
    free(m);
}

size_t ks_node_status_map_len(const ks_node_status_map *m) { return m ? m->n : 0; }

const ks_status *ks_node_status_map_get(const ks_node_status_map *m, const char *node_name) {
    ks_id id = ks_intern_find(node_name);
    if (id == KS_ID_INVALID) return ks_node_status_map_absent_status(m);
    return ks_node_status_map_lookup(m, id);
}
