#include "testutil.h"
#include "framework/status.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init_once(void) { ks_api_init(); }
void tu_init(void) { pthread_once(&once, init_once); }

static void set_labels(ks_arena *a, ks_labels *l, va_list ap) {
    const char *kv[64];
    int n = 0;
    for (const char *k; n < 62 && (k = va_arg(ap, const char *));) {
        kv[n++] = k;
        kv[n++] = va_arg(ap, const char *);
    }
    l->n = (uint32_t)(n / 2);
    l->kv = ks_arena_calloc(a, l->n ? l->n : 1, sizeof(ks_label));
    for (uint32_t i = 0; i < l->n; i++) l->kv[i] = (ks_label){ks_intern(kv[2 * i]), ks_intern(kv[2 * i + 1])};
    ks_labels_sort(l);
}

ks_node *tu_node(const char *name, int64_t milli_cpu, int64_t memory, ...) {
    tu_init();
    ks_node *n = ks_node_new();
    n->name = ks_intern(name);
    n->allocatable.milli_cpu = milli_cpu;
    n->allocatable.memory = memory;
    n->allocatable.allowed_pods = 110;
    n->capacity = n->allocatable;
    va_list ap;
    va_start(ap, memory);
    set_labels(n->arena, &n->labels, ap);
    va_end(ap);
    return n;
}

ks_pod *tu_pod(const char *ns, const char *name, int64_t milli_cpu, int64_t memory, int32_t priority) {
    tu_init();
    ks_pod *p = ks_pod_new();
    p->ns = ks_intern(ns);
    p->name = ks_intern(name);
    p->uid = ks_arena_printf(p->arena, "uid-%s-%s", ns, name);
    p->key = ks_pod_key(p->ns, p->name);
    p->scheduler_name = ks_intern(KS_DEFAULT_SCHEDULER_NAME);
    p->has_priority = true;
    p->priority = priority;
    p->requests.milli_cpu = milli_cpu;
    p->requests.memory = memory;
    p->nonzero_requests.milli_cpu = milli_cpu ? milli_cpu : KS_DEFAULT_MILLI_CPU_REQUEST;
    p->nonzero_requests.memory = memory ? memory : KS_DEFAULT_MEMORY_REQUEST;
    p->phase = KS_PHASE_PENDING;
    return p;
}

ks_pod *tu_pod_on(const char *ns, const char *name, int64_t milli_cpu, int64_t memory, const char *node) {
    ks_pod *p = tu_pod(ns, name, milli_cpu, memory, 0);
    p->node_name = ks_intern(node);
    p->phase = KS_PHASE_RUNNING;
    return p;
}

void tu_pod_labels(ks_pod *p, ...) {
    va_list ap;
    va_start(ap, p);
    set_labels(p->arena, &p->labels, ap);
    va_end(ap);
}

/* ---- plugins -------------------------------------------------------------- */

static bool sort_less(void *self, const ks_queued_pod *a, const ks_queued_pod *b) {
    (void)self;
    int32_t p1 = ks_pod_priority(ks_queued_pod_pod(a)), p2 = ks_pod_priority(ks_queued_pod_pod(b));
    return p1 > p2 || (p1 == p2 && ks_queued_pod_timestamp_ns(a) < ks_queued_pod_timestamp_ns(b));
}

const ks_plugin_ops tu_sort_plugin = {.abi_version = KS_ABI_VERSION, .name = "TestSort", .less = sort_less};

static void *bind_create(const ks_args *args, ks_handle *h, char **err) {
    (void)args;
    (void)err;
    return h;
}

static ks_status *bind_bind(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)st;
    return ks_handle_bind(self, pod, node);
}

const ks_plugin_ops tu_bind_plugin = {
    .abi_version = KS_ABI_VERSION, .name = "TestBind", .create = bind_create, .bind = bind_bind};

static ks_status *fit_filter(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni) {
    (void)self;
    (void)st;
    ks_status *s = NULL;
    if (ni->npods + 1 > ni->allocatable.allowed_pods) s = ks_status_new(KS_UNSCHEDULABLE, "Too many pods");
    if (pod->requests.milli_cpu > ni->allocatable.milli_cpu - ni->requested.milli_cpu) {
        if (s) ks_status_add_reason(s, "Insufficient cpu");
        else s = ks_status_new(KS_UNSCHEDULABLE, "Insufficient cpu");
    }
    if (pod->requests.memory > ni->allocatable.memory - ni->requested.memory) {
        if (s) ks_status_add_reason(s, "Insufficient memory");
        else s = ks_status_new(KS_UNSCHEDULABLE, "Insufficient memory");
    }
    return s;
}

static ks_status *fit_score(void *self, ks_cycle_state *st, const ks_pod *pod, const ks_node_info *ni,
                            int64_t *score) {
    (void)self;
    (void)st;
    int64_t alloc = ni->allocatable.milli_cpu;
    int64_t used = ni->requested.milli_cpu + pod->requests.milli_cpu;
    *score = alloc > 0 ? (alloc - used) * KS_MAX_NODE_SCORE / alloc : 0;
    if (*score < 0) *score = 0;
    return NULL;
}

static size_t fit_events(void *self, ks_cluster_event *out, size_t max) {
    (void)self;
    ks_cluster_event ev[] = {{KS_EV_NODE, KS_ACT_ADD | KS_ACT_UPDATE}, {KS_EV_POD, KS_ACT_DELETE}};
    size_t n = 0;
    for (; n < 2 && n < max; n++) out[n] = ev[n];
    return n;
}

const ks_plugin_ops tu_fit_plugin = {.abi_version = KS_ABI_VERSION,
                                     .name = "TestFit",
                                     .events_to_register = fit_events,
                                     .filter = fit_filter,
                                     .score = fit_score};

ks_registry *tu_registry(const ks_plugin_ops *const *extra, size_t n) {
    ks_registry *r = ks_registry_new();
    ks_registry_add_own(r, &tu_sort_plugin, NULL);
    ks_registry_add_own(r, &tu_bind_plugin, NULL);
    ks_registry_add_own(r, &tu_fit_plugin, NULL);
    for (size_t i = 0; i < n; i++) {
        char *err = NULL;
        if (!ks_registry_add(r, extra[i], &err)) free(err);
    }
    return r;
}

/* ---- profiles and configurations ----------------------------------------- */

void tu_profile_init(tu_profile *tp, const char *scheduler_name) {
    tu_init();
    memset(tp, 0, sizeof(*tp));
    tp->p.scheduler_name = scheduler_name ? scheduler_name : KS_DEFAULT_SCHEDULER_NAME;
    tp->p.resolved_ok = true;
    for (int ep = 0; ep < KS_EP_COUNT; ep++) tp->p.resolved[ep].plugins = tp->refs[ep];
    tu_profile_add(tp, KS_EP_QUEUE_SORT, "TestSort", 0);
    tu_profile_add(tp, KS_EP_BIND, "TestBind", 0);
}

void tu_profile_add(tu_profile *tp, ks_ext_point ep, const char *plugin, int32_t weight) {
    ks_resolved_list *l = &tp->p.resolved[ep];
    l->plugins[l->n++] = (ks_plugin_ref){.name = plugin, .weight = weight};
}

void tu_profile_add_plugin(tu_profile *tp, const ks_plugin_ops *ops, int32_t weight) {
    uint32_t m = ks_plugin_ops_points(ops);
    for (int ep = 0; ep < KS_EP_COUNT; ep++)
        if (m & KS_EP_BIT(ep)) tu_profile_add(tp, (ks_ext_point)ep, ops->name, ep == KS_EP_SCORE ? weight : 0);
}

ks_config *tu_config(tu_profile *const *profiles, size_t n) {
    ks_config *cfg = ks_xcalloc(1, sizeof(*cfg));
    cfg->source = "<test>";
    cfg->parallelism = 4;
    cfg->pod_initial_backoff_seconds = 1;
    cfg->pod_max_backoff_seconds = 10;
    cfg->profiles = ks_xcalloc(n ? n : 1, sizeof(*cfg->profiles));
    cfg->nprofiles = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        cfg->profiles[i] = profiles[i]->p;
        for (int ep = 0; ep < KS_EP_COUNT; ep++) {
            ks_resolved_list *l = &cfg->profiles[i].resolved[ep];
            ks_plugin_ref *v = ks_xcalloc(l->n ? l->n : 1, sizeof(*v));
            if (l->n) memcpy(v, profiles[i]->refs[ep], l->n * sizeof(*v));
            l->plugins = v;
        }
    }
    return cfg;
}

void tu_config_free(ks_config *cfg) {
    if (!cfg) return;
    for (uint32_t i = 0; i < cfg->nprofiles; i++)
        for (int ep = 0; ep < KS_EP_COUNT; ep++) free(cfg->profiles[i].resolved[ep].plugins);
    free(cfg->profiles);
    free(cfg);
}

char *tu_slurp(const char *dir, const char *name) {
    char *path = ks_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f) return NULL;
    ks_strbuf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) ks_sb_putn(&b, chunk, n);
    fclose(f);
    char *out = ks_sb_take(&b);
    return out ? out : ks_xstrdup("");
}
