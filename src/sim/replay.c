#include "sim/replay.h"
#include "api/pod.h"
#include "backend/queue.h"
#include "codec/decode.h"
#include "backend/api_dispatcher.h"
#include "scheduler/observer.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler.h"
#include "sim/memory_client.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The replay clock: 2100-01-01T00:00:00Z at the first step, one
 * millisecond more at each step (the reference harness's ReplayStart and
 * ReplayStepDuration). */
#define REPLAY_START_NS (4102444800LL * KS_NS_PER_SEC)
#define REPLAY_STEP_NS (KS_NS_PER_SEC / 1000)

typedef struct replay {
    FILE *out;
    ks_cluster *cluster;
    ks_memory_client *mb;
    ks_scheduler *s;
    ks_queue *q;
    ks_clock *clock;
    int64_t now;
    /* steps that happen while the attempt's pod is in flight (the
     * attempt step's "during"), applied when its scheduling cycle ends */
    json_t *during;
    int during_line;
    char *during_err;
    /* the last attempt, as the observer saw it */
    uint64_t popped;
    char *popped_name;
    const char *result;
    char *node;
} replay;

/* ---- where the queue holds each pod ---------------------------------------- */

/* Pod names are looked up while the pods are there: a name's id (and so
 * a pod key) can be reused once every pod of that name is gone. */
typedef struct where_entry {
    int where; /* 1 active, 2 backoff, 3 unschedulable, 4 gated */
    char *name;
} where_entry;

typedef struct where_set {
    ks_map m; /* pod key + 1 -> where_entry */
} where_set;

static const char *const where_names[] = {"", "active", "backoff", "unschedulable", "gated"};

static void collect_where(void *arg, const ks_queued_pod *qp) {
    where_set *w = arg;
    int v = 0;
    switch (ks_queued_pod_where(qp)) {
    case KS_Q_ACTIVE: v = 1; break;
    case KS_Q_BACKOFF:
    case KS_Q_ERROR_BACKOFF: v = 2; break;
    case KS_Q_UNSCHEDULABLE: v = ks_queued_pod_gating_plugin(qp) >= 0 ? 4 : 3; break;
    default: return;
    }
    where_entry *e = ks_xcalloc(1, sizeof(*e));
    e->where = v;
    const ks_pod *pod = ks_queued_pod_pod(qp);
    e->name = ks_xasprintf("%s/%s", ks_str(pod->ns), ks_str(pod->name));
    ks_map_put(&w->m, pod->key + 1, e);
}

static void free_where(where_set *w) {
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&w->m, &it, &k, &v);) {
        where_entry *e = v;
        free(e->name);
        free(e);
    }
    ks_map_free(&w->m);
}

static void snapshot_where(replay *r, where_set *w) {
    memset(w, 0, sizeof(*w));
    ks_queue_foreach(r->q, collect_where, w);
}

typedef struct move {
    const char *pod;
    const char *from, *to;
} move;

static int cmp_move(const void *a, const void *b) { return strcmp(((const move *)a)->pod, ((const move *)b)->pod); }

static json_t *diff_where(where_set *a, where_set *b) {
    move *mv = NULL;
    size_t n = 0, cap = 0;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&a->m, &it, &k, &v);) {
        where_entry *ea = v, *eb = ks_map_get(&b->m, k);
        /* the same key under another name: a different pod */
        if (eb && strcmp(ea->name, eb->name) != 0) eb = NULL;
        if (eb && eb->where == ea->where) continue;
        KS_GROW(mv, cap, n + 1);
        mv[n++] = (move){ea->name, where_names[ea->where], where_names[eb ? eb->where : 0]};
    }
    for (size_t it = 0; ks_map_next(&b->m, &it, &k, &v);) {
        where_entry *eb = v, *ea = ks_map_get(&a->m, k);
        if (ea && strcmp(ea->name, eb->name) == 0) continue;
        KS_GROW(mv, cap, n + 1);
        mv[n++] = (move){eb->name, "", where_names[eb->where]};
    }
    if (n) qsort(mv, n, sizeof(*mv), cmp_move);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array();
        json_array_append_new(t, json_string(mv[i].pod));
        json_array_append_new(t, json_string(mv[i].from));
        json_array_append_new(t, json_string(mv[i].to));
        json_array_append_new(arr, t);
    }
    free(mv);
    return arr;
}

/* ---- the observer ------------------------------------------------------------ */

static bool apply_change(replay *r, json_t *step, int line, char **err);

static void on_attempt(void *ctx, const ks_attempt_record *rec) {
    replay *r = ctx;
    /* The cycle has decided and the pod is still in flight: what its
     * PostFilter asked of the API server (preemption's deletions, the
     * nominations it cleared) is answered now, as with the reference's
     * synchronous preemption, then the "during" steps happen; the failure
     * handler (or the binding) comes after. */
    if (rec->result != KS_ATTEMPT_SKIPPED) ks_api_dispatcher_drain(ks_scheduler_dispatcher(r->s));
    if (r->during) {
        size_t i;
        json_t *st;
        json_array_foreach(r->during, i, st) {
            if (r->during_err) break;
            apply_change(r, st, r->during_line, &r->during_err);
        }
        r->during = NULL;
    }
    r->popped = rec->pod->key;
    free(r->popped_name);
    r->popped_name = ks_xasprintf("%s/%s", ks_str(rec->pod->ns), ks_str(rec->pod->name));
    free(r->node);
    r->node = NULL;
    switch (rec->result) {
    case KS_ATTEMPT_SCHEDULED: r->result = "Scheduled"; break;
    case KS_ATTEMPT_UNSCHEDULABLE: r->result = "Unschedulable"; break;
    case KS_ATTEMPT_SKIPPED: r->result = "Skipped"; break;
    default: r->result = "Error"; break;
    }
    if (rec->chosen_node) r->node = ks_xstrdup(rec->chosen_node);
}

/* ---- steps ---------------------------------------------------------------------- */

static ks_pod *find_pod(replay *r, const char *ns, const char *name) {
    for (uint32_t i = 0; i < r->cluster->pods.n; i++) {
        ks_pod *p = r->cluster->pods.v[i];
        if (!strcmp(ks_str(p->ns), ns) && !strcmp(ks_str(p->name), name)) return p;
    }
    return NULL;
}

/* The kinds replayed besides pods and nodes, with their cluster vectors. */
typedef struct kind_info {
    const char *name;
    ks_kind kind;
} kind_info;

static const kind_info kinds[] = {
    {"PersistentVolume", KS_KIND_PV},          {"PersistentVolumeClaim", KS_KIND_PVC},
    {"StorageClass", KS_KIND_STORAGE_CLASS},   {"CSINode", KS_KIND_CSINODE},
    {"CSIDriver", KS_KIND_CSI_DRIVER},         {"CSIStorageCapacity", KS_KIND_CSI_CAPACITY},
    {"VolumeAttachment", KS_KIND_VOLUME_ATTACHMENT},
};

/* The object of kind k named ns/name in c (ns "" for cluster-scoped). */
static void *find_object(ks_cluster *c, ks_kind k, const char *ns, const char *name) {
#define FIND_NAMED(vec)                                                       \
    for (uint32_t i = 0; i < c->vec.n; i++)                                   \
        if (!strcmp(ks_str(c->vec.v[i]->name), name)) return c->vec.v[i];     \
    return NULL
#define FIND_NS(vec)                                                          \
    for (uint32_t i = 0; i < c->vec.n; i++)                                   \
        if (!strcmp(ks_str(c->vec.v[i]->ns), ns) && !strcmp(ks_str(c->vec.v[i]->name), name)) \
            return c->vec.v[i];                                               \
    return NULL
    switch (k) {
    case KS_KIND_PV: FIND_NAMED(pvs);
    case KS_KIND_PVC: FIND_NS(pvcs);
    case KS_KIND_STORAGE_CLASS: FIND_NAMED(storage_classes);
    case KS_KIND_CSINODE: FIND_NAMED(csinodes);
    case KS_KIND_CSI_DRIVER: FIND_NAMED(csi_drivers);
    case KS_KIND_CSI_CAPACITY: FIND_NS(csi_capacities);
    case KS_KIND_VOLUME_ATTACHMENT: FIND_NAMED(volume_attachments);
    default: return NULL;
    }
#undef FIND_NAMED
#undef FIND_NS
}

/* The single object of a step, decoded (and admitted) into a scratch
 * cluster; *kind says what it is. NULL with *err on bad input. */
static ks_cluster *decode_object(replay *r, json_t *obj, int line, char **err) {
    char *js = json_dumps(obj, JSON_COMPACT);
    char name[64];
    snprintf(name, sizeof(name), "step at line %d", line);
    ks_cluster *c = ks_cluster_new();
    /* new pods are admitted with the cluster's PriorityClasses */
    for (uint32_t i = 0; i < r->cluster->priority_classes.n; i++)
        KS_VEC_PUSH(c->priority_classes, KS_OBJECT_REF(r->cluster->priority_classes.v[i]));
    ks_errors errs;
    ks_errors_init(&errs);
    bool ok = ks_load_buffer(c, name, js, strlen(js), &errs);
    free(js);
    if (!ok) {
        *err = ks_xstrdup(errs.n ? errs.v[0] : "invalid object");
        ks_errors_free(&errs);
        ks_cluster_free(c);
        return NULL;
    }
    ks_errors_free(&errs);
    return c;
}

static bool apply_object(replay *r, const char *op, json_t *obj, int line, json_t *o, char **err) {
    ks_cluster *c = decode_object(r, obj, line, err);
    if (!c) return false;
    bool add = !strcmp(op, "add");
    bool ok = false;
    char what[512];
    if (c->nodes.n == 1 && c->pods.n == 0) {
        ks_node *n = ks_node_ref(c->nodes.v[0]);
        ks_node *cur = ks_cluster_node(r->cluster, n->name);
        snprintf(what, sizeof(what), "Node %s", ks_str(n->name));
        if (add == (cur != NULL)) {
            *err = ks_xasprintf("line %d: %s of node %s", line, op, ks_str(n->name));
            ks_node_unref(n);
            goto out;
        }
        if (add) ks_memory_client_add_node(r->mb, n);
        else ks_memory_client_update_node(r->mb, n);
        ok = true;
    } else if (c->pods.n == 1 && c->nodes.n == 0) {
        ks_pod *p = ks_pod_ref(c->pods.v[0]);
        ks_pod *cur = ks_memory_client_pod(r->mb, p->key);
        snprintf(what, sizeof(what), "Pod %s/%s", ks_str(p->ns), ks_str(p->name));
        /* The steps were written without knowing what the attempts would
         * do: an update of a pod preempted meanwhile is no change, and one
         * of a pod bound meanwhile keeps its node. */
        if (!add && !cur) {
            ks_pod_unref(p);
            ok = true;
            json_object_set_new(o, "object", json_string(what));
            goto out;
        }
        if (!add && cur->node_name && !p->node_name) p->node_name = cur->node_name;
        if (add == (cur != NULL)) {
            *err = ks_xasprintf("line %d: %s of pod %s/%s", line, op, ks_str(p->ns), ks_str(p->name));
            ks_pod_unref(p);
            goto out;
        }
        ks_memory_client_add_pod(r->mb, p);
        ok = true;
    } else {
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !ok; i++) {
            void *nw = NULL;
            const char *ns = "", *nm = NULL;
            switch (kinds[i].kind) {
#define TAKE_NAMED(vec)                             \
    if (c->vec.n == 1) {                            \
        nw = c->vec.v[0];                           \
        nm = ks_str(c->vec.v[0]->name);             \
    }                                               \
    break
#define TAKE_NS(vec)                                \
    if (c->vec.n == 1) {                            \
        nw = c->vec.v[0];                           \
        ns = ks_str(c->vec.v[0]->ns);               \
        nm = ks_str(c->vec.v[0]->name);             \
    }                                               \
    break
            case KS_KIND_PV: TAKE_NAMED(pvs);
            case KS_KIND_PVC: TAKE_NS(pvcs);
            case KS_KIND_STORAGE_CLASS: TAKE_NAMED(storage_classes);
            case KS_KIND_CSINODE: TAKE_NAMED(csinodes);
            case KS_KIND_CSI_DRIVER: TAKE_NAMED(csi_drivers);
            case KS_KIND_CSI_CAPACITY: TAKE_NS(csi_capacities);
            case KS_KIND_VOLUME_ATTACHMENT: TAKE_NAMED(volume_attachments);
            default: break;
#undef TAKE_NAMED
#undef TAKE_NS
            }
            if (!nw) continue;
            if (*ns) snprintf(what, sizeof(what), "%s %s/%s", kinds[i].name, ns, nm);
            else snprintf(what, sizeof(what), "%s %s", kinds[i].name, nm);
            void *cur = find_object(r->cluster, kinds[i].kind, ns, nm);
            if (add == (cur != NULL)) {
                *err = ks_xasprintf("line %d: %s of %s", line, op, what);
                goto out;
            }
            if (add) ks_memory_client_add_object(r->mb, kinds[i].kind, nw);
            else ks_memory_client_update_object(r->mb, kinds[i].kind, cur, nw);
            ok = true;
        }
        if (!ok) {
            *err = ks_xasprintf("line %d: an add or update step needs exactly one object of a replayed kind", line);
            goto out;
        }
    }
    json_object_set_new(o, "object", json_string(what));
out:
    ks_cluster_free(c);
    return ok;
}

static bool apply_delete(replay *r, json_t *step, int line, json_t *o, char **err) {
    const char *kind = json_string_value(json_object_get(step, "kind"));
    const char *ns = json_string_value(json_object_get(step, "namespace"));
    const char *name = json_string_value(json_object_get(step, "name"));
    if (!kind || !name) {
        *err = ks_xasprintf("line %d: delete needs kind and name", line);
        return false;
    }
    if (!ns) ns = "";
    char what[512];
    if (*ns) snprintf(what, sizeof(what), "%s %s/%s", kind, ns, name);
    else snprintf(what, sizeof(what), "%s %s", kind, name);
    json_object_set_new(o, "object", json_string(what));
    if (!strcmp(kind, "Node")) {
        if (!ks_cluster_node(r->cluster, ks_intern(name))) goto missing;
        ks_memory_client_remove_node(r->mb, ks_intern(name));
        return true;
    }
    if (!strcmp(kind, "Pod")) {
        ks_pod *p = find_pod(r, ns, name);
        if (!p) return true; /* preempted meanwhile: no change */
        ks_memory_client_remove_pod(r->mb, p->key);
        return true;
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(kinds[i].name, kind) != 0) continue;
        void *cur = find_object(r->cluster, kinds[i].kind, ns, name);
        if (!cur) goto missing;
        ks_memory_client_remove_object(r->mb, kinds[i].kind, cur);
        return true;
    }
    *err = ks_xasprintf("line %d: kind %s is not replayed", line, kind);
    return false;
missing:
    *err = ks_xasprintf("line %d: %s does not exist", line, what);
    return false;
}

static json_t *plugin_names(const ks_framework *fw, const ks_plugin_mask *m) {
    json_t *a = json_array();
    /* sorted by name, as the reference prints its sets */
    const char *names[KS_MAX_PLUGINS];
    size_t n = 0;
    for (uint32_t i = 0, np = fw ? (uint32_t)ks_framework_nplugins(fw) : 0; i < np; i++)
        if (ks_plugin_mask_has(m, i)) names[n++] = ks_framework_plugin_name(fw, i);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(names[i]));
    return a;
}

static void apply_attempt(replay *r, json_t *o) {
    r->popped = 0;
    r->result = NULL;
    ks_scheduler_attempt_one(r->s);
    ks_api_dispatcher_drain(ks_scheduler_dispatcher(r->s));
    if (!r->popped) return;
    json_object_set_new(o, "pod", json_string(r->popped_name));
    if (r->result) json_object_set_new(o, "result", json_string(r->result));
    if (r->node) json_object_set_new(o, "node", json_string(r->node));
    ks_queued_pod *qp = NULL;
    if (r->result && strcmp(r->result, "Scheduled") != 0 && ks_queue_where(r->q, r->popped, &qp) != KS_Q_NONE) {
        const ks_framework *fw = ks_queued_pod_framework(qp);
        json_t *u = plugin_names(fw, ks_queued_pod_unschedulable_plugins(qp));
        json_t *p = plugin_names(fw, ks_queued_pod_pending_plugins(qp));
        if (json_array_size(u)) json_object_set_new(o, "unschedulable", u);
        else json_decref(u);
        if (json_array_size(p)) json_object_set_new(o, "pending", p);
        else json_decref(p);
    }
    ks_queued_pod_free(qp);
}

/* An add, update or delete step (of an attempt's "during"). */
static bool apply_change(replay *r, json_t *step, int line, char **err) {
    const char *op = json_string_value(json_object_get(step, "op"));
    json_t *scratch = json_object();
    bool ok;
    if (op && (!strcmp(op, "add") || !strcmp(op, "update")) && json_is_object(json_object_get(step, "object")))
        ok = apply_object(r, op, json_object_get(step, "object"), line, scratch, err);
    else if (op && !strcmp(op, "delete"))
        ok = apply_delete(r, step, line, scratch, err);
    else {
        *err = ks_xasprintf("line %d: \"during\" takes add, update and delete steps", line);
        ok = false;
    }
    json_decref(scratch);
    return ok;
}

static bool run_step(replay *r, json_t *step, int line, json_t *o, char **err) {
    const char *op = json_string_value(json_object_get(step, "op"));
    if (!op) {
        *err = ks_xasprintf("line %d: no op", line);
        return false;
    }
    json_object_set_new(o, "op", json_string(op));
    if (!strcmp(op, "add") || !strcmp(op, "update")) {
        json_t *obj = json_object_get(step, "object");
        if (!json_is_object(obj)) {
            *err = ks_xasprintf("line %d: %s needs an object", line, op);
            return false;
        }
        return apply_object(r, op, obj, line, o, err);
    }
    if (!strcmp(op, "delete")) return apply_delete(r, step, line, o, err);
    if (!strcmp(op, "attempt")) {
        json_t *during = json_object_get(step, "during");
        r->during = json_is_array(during) ? during : NULL;
        r->during_line = line;
        apply_attempt(r, o);
        if (r->during) {
            /* nothing was popped: they happen all the same */
            size_t i;
            json_t *d;
            json_array_foreach(r->during, i, d) {
                if (r->during_err) break;
                apply_change(r, d, line, &r->during_err);
            }
            r->during = NULL;
        }
        if (r->during_err) {
            *err = r->during_err;
            r->during_err = NULL;
            return false;
        }
        return true;
    }
    if (!strcmp(op, "tick")) {
        double sec = json_number_value(json_object_get(step, "seconds"));
        r->now += (int64_t)(sec * (double)KS_NS_PER_SEC);
        ks_clock_sim_set(r->clock, r->now);
        return true;
    }
    if (!strcmp(op, "flush")) {
        ks_queue_flush_backoff_completed(r->q);
        ks_queue_flush_unschedulable_leftover(r->q);
        return true;
    }
    *err = ks_xasprintf("line %d: unknown op \"%s\"", line, op);
    return false;
}

/* ---- the run ---------------------------------------------------------------------- */

static ks_status *extender_bound(void *ctx, const ks_pod *pod, const char *node) {
    return ks_sim_extender_bound(((replay *)ctx)->s, pod, node);
}

bool ks_replay_run(FILE *out, ks_cluster *cluster, const ks_config *cfg, ks_registry *reg, const char *events_path,
                   char **err) {
    FILE *in = fopen(events_path, "r");
    if (!in) {
        *err = ks_xasprintf("%s: %s", events_path, strerror(errno));
        return false;
    }
    replay r;
    memset(&r, 0, sizeof(r));
    r.out = out;
    r.cluster = cluster;

    /* Every node is evaluated, as in trace mode. */
    ks_config tuned = *cfg;
    tuned.percentage_of_nodes_to_score = 100;
    ks_profile_config *profiles = ks_xcalloc(cfg->nprofiles ? cfg->nprofiles : 1, sizeof(*profiles));
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        profiles[i] = cfg->profiles[i];
        profiles[i].has_percentage = false;
    }
    tuned.profiles = profiles;

    ks_clock *clock = ks_clock_sim_new(REPLAY_START_NS);
    r.now = REPLAY_START_NS;
    r.clock = clock;
    r.mb = ks_memory_client_new(cluster);
    ks_observer obs = {.ctx = &r, .on_attempt = on_attempt, .extender_bound = extender_bound};
    ks_scheduler_options so = {
        .config = &tuned,
        .registry = reg,
        .backend = ks_memory_client_iface(r.mb),
        .clock = clock,
        .ties = KS_TIES_BY_NAME,
        .parallelism = 1,
        .observer = &obs,
    };
    bool ok = false;
    char *line = NULL;
    size_t cap = 0;
    r.s = ks_sim_start(&so, err);
    if (!r.s) goto done;
    r.q = ks_scheduler_queue(r.s);
    fputs("{\"format\":\"ksched-replay/v1\"}\n", out);
    int lineno = 0, step = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\n' || *p == '\0' || *p == '#') continue;
        json_error_t je;
        json_t *st = json_loads(p, 0, &je);
        if (!st) {
            *err = ks_xasprintf("%s:%d: %s", events_path, lineno, je.text);
            goto done;
        }
        step++;
        r.now += REPLAY_STEP_NS;
        ks_clock_sim_set(clock, r.now);
        where_set before, after;
        snapshot_where(&r, &before);
        json_t *o = json_object();
        json_object_set_new(o, "step", json_integer(step));
        bool good = run_step(&r, st, lineno, o, err);
        json_decref(st);
        if (!good) {
            free_where(&before);
            json_decref(o);
            goto done;
        }
        /* changes made by the attempt reach the scheduler through the
         * dispatcher (status patches, preemption's deletions) */
        ks_api_dispatcher_drain(ks_scheduler_dispatcher(r.s));
        snapshot_where(&r, &after);
        json_object_set_new(o, "moves", diff_where(&before, &after));
        free_where(&before);
        free_where(&after);
        char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fprintf(out, "%s\n", s);
        free(s);
        json_decref(o);
    }
    ok = true;
done:
    free(line);
    fclose(in);
    if (r.s) ks_scheduler_free(r.s);
    ks_memory_client_free(r.mb);
    ks_clock_free(clock);
    free(r.node);
    free(r.popped_name);
    free(profiles);
    return ok;
}
