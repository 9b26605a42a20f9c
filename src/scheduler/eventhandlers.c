/* The handlers of the backend's watch events (upstream eventhandlers.go):
 * the pod store, the cache and the queue follow every change, and each
 * change moves the pods it may make schedulable. */
#include "api/node.h"
#include "api/pod.h"
#include "backend/listers.h"
#include "framework/status.h"
#include "scheduler/scheduler_internal.h"
#include "util/log.h"

/* ---- the pod store (what an informer would hold) ----------------------- */

static void store_pod(ks_scheduler *s, ks_pod *pod) {
    pthread_mutex_lock(&s->pods_mu);
    ks_pod *old = ks_map_put(&s->pods, pod->key + 1, ks_pod_ref(pod));
    pthread_mutex_unlock(&s->pods_mu);
    if (old) ks_pod_unref(old);
}

static void forget_pod(ks_scheduler *s, const ks_pod *pod) {
    pthread_mutex_lock(&s->pods_mu);
    ks_pod *old = ks_map_del(&s->pods, pod->key + 1);
    pthread_mutex_unlock(&s->pods_mu);
    if (old) ks_pod_unref(old);
}

/* ---- handlers ----------------------------------------------------------- */

static bool responsible(ks_scheduler *s, const ks_pod *pod) {
    return ks_sched_framework_for(s, pod->scheduler_name) != NULL;
}

/* upstream MoveAllToActiveOrBackoffQueue for one event and its objects. */
static void move_all(ks_scheduler *s, uint32_t resource, uint32_t action, ks_kind kind, const void *old_obj,
                     const void *new_obj) {
    ks_cluster_event ev = {resource, action};
    ks_queue_move_all(s->queue, ev, kind, old_obj, new_obj, NULL, NULL);
}

typedef struct prio_check {
    int32_t prio;
} prio_check;

static bool le_priority(const ks_pod *pod, void *arg) {
    return ks_pod_priority(pod) <= ((prio_check *)arg)->prio;
}

/* upstream deletePodFromSchedulingQueue. */
static void unassigned_deleted(ks_scheduler *s, ks_pod *pod) {
    ks_queue_delete(s->queue, pod);
    ks_cluster_event ev = {KS_EV_ASSIGNED_POD, KS_ACT_DELETE};
    if (ks_waiting_pods_reject(s->waiting, pod->key, "", "removed")) {
        ks_queue_move_all(s->queue, ev, KS_KIND_POD, pod, NULL, NULL, NULL);
    } else if (pod->nominated_node) {
        /* Its nomination held room that lower-priority pods may now use. */
        prio_check pc = {ks_pod_priority(pod)};
        ks_queue_move_all(s->queue, ev, KS_KIND_POD, pod, NULL, le_priority, &pc);
    }
}

static void assigned_added(ks_scheduler *s, ks_pod *pod) {
    ks_status_log_free("scheduler cache AddPod failed", ks_cache_add_pod(s->cache, pod));
    move_all(s, KS_EV_ASSIGNED_POD, KS_ACT_ADD, KS_KIND_POD, NULL, pod);
}

static void assigned_deleted(ks_scheduler *s, ks_pod *pod) {
    ks_status_log_free("scheduler cache RemovePod failed", ks_cache_remove_pod(s->cache, pod));
    move_all(s, KS_EV_ASSIGNED_POD, KS_ACT_DELETE, KS_KIND_POD, pod, NULL);
}

static bool terminal(const ks_pod *p) {
    return p && (p->phase == KS_PHASE_SUCCEEDED || p->phase == KS_PHASE_FAILED);
}

/* upstream's pod informer lists with the field selector
 * status.phase!=Succeeded,status.phase!=Failed: a finished pod is never
 * seen, and a pod that finishes is seen as deleted. */
static bool phase_filter(const ks_watch_event *ev, ks_watch_event *out) {
    *out = *ev;
    bool ot = terminal(ev->old_pod), nt = terminal(ev->new_pod);
    switch (ev->type) {
    case KS_WATCH_ADDED: return !nt;
    case KS_WATCH_DELETED: return !ot;
    case KS_WATCH_MODIFIED:
        if (ot && nt) return false;
        if (nt) {
            out->type = KS_WATCH_DELETED;
            out->new_pod = NULL;
        } else if (ot) {
            out->type = KS_WATCH_ADDED;
            out->old_pod = NULL;
        }
        return true;
    }
    return true;
}

static void on_pod(ks_scheduler *s, const ks_watch_event *raw) {
    ks_watch_event filtered;
    if (!phase_filter(raw, &filtered)) return;
    const ks_watch_event *ev = &filtered;
    ks_pod *o = ev->old_pod, *n = ev->new_pod;
    switch (ev->type) {
    case KS_WATCH_ADDED:
        store_pod(s, n);
        if (n->node_name) assigned_added(s, n);
        else if (responsible(s, n)) ks_queue_add(s->queue, n);
        else if (n->nominated_node) ks_queue_add_nominated(s->queue, n, NULL);
        break;
    case KS_WATCH_MODIFIED: {
        store_pod(s, n);
        bool oa = o->node_name != 0, na = n->node_name != 0;
        if (oa && na) {
            ks_status_log_free("scheduler cache UpdatePod failed", ks_cache_update_pod(s->cache, o, n));
            ks_cluster_event evs[5];
            size_t nev = ks_pod_change_events(o, n, evs);
            for (size_t i = 0; i < nev; i++)
                ks_queue_move_all(s->queue, evs[i], KS_KIND_POD, o, n, NULL, NULL);
        } else if (!oa && !na) {
            if (!responsible(s, n)) {
                /* Another scheduler's nomination holds room too (upstream
                 * knows only its own profiles' pods): without it, the two
                 * fill each other's room and preempt again, in a loop. */
                if (o->nominated_node != n->nominated_node) ks_queue_add_nominated(s->queue, n, NULL);
            } else if (ks_cache_is_assumed(s->cache, n)) {
                break;
            } else {
                ks_queue_update(s->queue, o, n);
            }
            if (o->nominated_node && o->nominated_node != n->nominated_node) {
                prio_check pc = {ks_pod_priority(o)};
                ks_cluster_event e = {KS_EV_ASSIGNED_POD, KS_ACT_DELETE};
                ks_queue_move_all(s->queue, e, KS_KIND_POD, o, NULL, le_priority, &pc);
            }
        } else if (!oa && na) {
            /* Bound: it leaves the scheduling queue and joins the cache. */
            if (responsible(s, o)) unassigned_deleted(s, o);
            else if (o->nominated_node) ks_queue_delete_nominated(s->queue, o);
            assigned_added(s, n);
        } else {
            assigned_deleted(s, o);
            if (responsible(s, n)) ks_queue_add(s->queue, n);
        }
        break;
    }
    case KS_WATCH_DELETED:
        forget_pod(s, o);
        if (o->node_name) {
            assigned_deleted(s, o);
        } else if (responsible(s, o)) {
            unassigned_deleted(s, o);
        } else if (o->nominated_node) {
            ks_queue_delete_nominated(s->queue, o);
            prio_check pc = {ks_pod_priority(o)};
            ks_cluster_event e = {KS_EV_ASSIGNED_POD, KS_ACT_DELETE};
            ks_queue_move_all(s->queue, e, KS_KIND_POD, o, NULL, le_priority, &pc);
        }
        break;
    }
}

static void dispatch_watch(ks_scheduler *s, const ks_watch_event *ev);

static void on_node(ks_scheduler *s, const ks_watch_event *ev) {
    switch (ev->type) {
    case KS_WATCH_ADDED:
        ks_cache_add_node(s->cache, ev->new_node);
        move_all(s, KS_EV_NODE, KS_ACT_ADD, KS_KIND_NODE, NULL, ev->new_node);
        break;
    case KS_WATCH_MODIFIED: {
        ks_cache_update_node(s->cache, ev->old_node, ev->new_node);
        ks_cluster_event evs[5];
        size_t nev = ks_node_change_events(ev->old_node, ev->new_node, evs);
        for (size_t i = 0; i < nev; i++)
            ks_queue_move_all(s->queue, evs[i], KS_KIND_NODE, ev->old_node, ev->new_node, NULL, NULL);
        break;
    }
    case KS_WATCH_DELETED:
        move_all(s, KS_EV_NODE, KS_ACT_DELETE, KS_KIND_NODE, ev->old_node, NULL);
        ks_status_log_free("scheduler cache RemoveNode failed", ks_cache_remove_node(s->cache, ev->old_node));
        break;
    }
}

/* The event handlers' log lines, at upstream's levels (eventhandlers.go):
 * what a user greps at -v=3 and -v=4. The handlers that log them are the
 * informer's filtered ones: unscheduled pods only of this scheduler's
 * profiles; a pod bound or unbound leaves one handler for the other. */
static void log_pod_event(int v, const char *msg, const ks_pod *p) {
    char name[512];
    ks_infos(v, msg, "pod", ks_pod_fullname(p, name, sizeof(name)));
}

static void log_watch_event(ks_scheduler *s, const ks_watch_event *raw) {
    if (!KS_V(3)) return;
    if (raw->kind == KS_KIND_NODE) {
        const ks_node *n = raw->type == KS_WATCH_DELETED ? raw->old_node : raw->new_node;
        if (raw->type == KS_WATCH_MODIFIED && !KS_V(4)) return;
        ks_infos(raw->type == KS_WATCH_MODIFIED ? 4 : 3,
                 raw->type == KS_WATCH_ADDED      ? "Add event for node"
                 : raw->type == KS_WATCH_MODIFIED ? "Update event for node"
                                                  : "Delete event for node",
                 "node", ks_str(n->name));
        return;
    }
    if (raw->kind != KS_KIND_POD) return;
    ks_watch_event f;
    if (!phase_filter(raw, &f)) return;
    const ks_pod *o = f.old_pod, *n = f.new_pod;
    bool oa = o && o->node_name, na = n && n->node_name;
    bool ou = o && !o->node_name && responsible(s, o), nu = n && !n->node_name && responsible(s, n);
    switch (f.type) {
    case KS_WATCH_ADDED:
        if (na) log_pod_event(3, "Add event for scheduled pod", n);
        else if (nu) log_pod_event(3, "Add event for unscheduled pod", n);
        break;
    case KS_WATCH_DELETED:
        if (oa) log_pod_event(3, "Delete event for scheduled pod", o);
        else if (ou) log_pod_event(3, "Delete event for unscheduled pod", o);
        break;
    case KS_WATCH_MODIFIED:
        if (oa && na) log_pod_event(4, "Update event for scheduled pod", o);
        else if (ou && nu) log_pod_event(4, "Update event for unscheduled pod", n);
        else {
            if (oa) log_pod_event(3, "Delete event for scheduled pod", o);
            else if (ou) log_pod_event(3, "Delete event for unscheduled pod", o);
            if (na) log_pod_event(3, "Add event for scheduled pod", n);
            else if (nu) log_pod_event(3, "Add event for unscheduled pod", n);
        }
        break;
    }
}

void ks_sched_on_watch(void *arg, const ks_watch_event *ev) {
    ks_scheduler *s = arg;
    log_watch_event(s, ev);
    /* The listers first, as an informer updates its store before calling
     * handlers: a queueing hint for a ResourceClaim's add must find that
     * claim (else pods that PreEnqueue held until their claims exist stay
     * held when the claims are listed after the pods). */
    ks_listers_apply(s->listers, ev->kind, ev->type, ev->old_obj, ev->new_obj);
    ks_sched_view_enter(s);
    dispatch_watch(s, ev);
    ks_sched_view_exit(s);
}

static void dispatch_watch(ks_scheduler *s, const ks_watch_event *ev) {
    uint32_t action = ev->type == KS_WATCH_ADDED ? KS_ACT_ADD : ev->type == KS_WATCH_DELETED ? KS_ACT_DELETE : KS_ACT_UPDATE;
    switch (ev->kind) {
    case KS_KIND_POD: on_pod(s, ev); break;
    case KS_KIND_NODE: on_node(s, ev); break;
    case KS_KIND_PVC:
    case KS_KIND_PV:
    case KS_KIND_STORAGE_CLASS:
    case KS_KIND_CSINODE:
    case KS_KIND_CSI_CAPACITY:
    case KS_KIND_VOLUME_ATTACHMENT:
    case KS_KIND_CSI_DRIVER:
    case KS_KIND_POD_GROUP:
    case KS_KIND_RESOURCE_CLAIM:
    case KS_KIND_RESOURCE_SLICE:
    case KS_KIND_DEVICE_CLASS:
        move_all(s, ks_kind_event_resource(ev->kind), action, ev->kind, ev->old_obj, ev->new_obj);
        break;
    case KS_KIND_DEVICE_TAINT_RULE: /* the slices it taints are updated */
        move_all(s, KS_EV_RESOURCE_SLICE, KS_ACT_UPDATE, ev->kind, ev->old_obj, ev->new_obj);
        break;
    default: break; /* read on demand; no requeue */
    }
}
