/* Each API call type's rules (api_calls.h): relevance, merge, no-op and
 * how it is queued, as upstream's framework/api_calls defines them per
 * type; and the owned copies the dispatcher queues. */
#include "backend/api_calls.h"
#include "framework/status.h"
#include "util/intern.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? ks_xstrdup(s) : NULL; }
static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* ---- pod status patch ---------------------------------------------------- */

/* upstream PodStatusPatchCall.IsNoOp against the pod the call was made for. */
static bool patch_is_noop(const ks_api_call *c) {
    const ks_status_patch *p = c->patch;
    if (p->set_nominated && c->pod->nominated_node != ks_intern(p->nominated ? p->nominated : "")) return false;
    if (!p->has_condition) return true;
    ks_id type = ks_intern(p->cond_type);
    for (uint32_t i = 0; i < c->pod->nconditions; i++) {
        const ks_pod_condition *pc = &c->pod->conditions[i];
        if (pc->type != type) continue;
        return pc->status == ks_intern(p->cond_status) && str_eq(pc->reason, p->cond_reason) &&
               str_eq(pc->message, p->cond_message);
    }
    return false;
}

/* upstream PodStatusPatchCall.Merge: the newer call keeps what it sets and
 * takes from the older one what it leaves alone. newer is an owned copy. */
static void patch_merge(ks_api_call *newer, const ks_api_call *older) {
    ks_status_patch *n = (ks_status_patch *)newer->patch;
    const ks_status_patch *o = older->patch;
    if (!n->set_nominated && o->set_nominated) {
        n->set_nominated = true;
        n->nominated = dup_or_null(o->nominated);
    }
    if (!n->has_condition && o->has_condition) {
        n->has_condition = true;
        n->cond_type = dup_or_null(o->cond_type);
        n->cond_status = dup_or_null(o->cond_status);
        n->cond_reason = dup_or_null(o->cond_reason);
        n->cond_message = dup_or_null(o->cond_message);
    }
}

static void patch_trace(const ks_api_call *c) {
    if (!c->patch->has_condition || !KS_V(3)) return;
    char name[512];
    ks_infos(3, "Updating pod condition", "pod", ks_pod_fullname(c->pod, name, sizeof(name)), "conditionType",
             c->patch->cond_type, "conditionStatus", c->patch->cond_status, "conditionReason",
             c->patch->cond_reason ? c->patch->cond_reason : "");
}

/* ---- the table -------------------------------------------------------------- */

static const ks_call_rules rules[KS_CALL_TYPES] = {
    [KS_CALL_EVENT] = {.name = "event", .relevance = 0, .queued = true, .forget = true},
    [KS_CALL_STATUS_PATCH] = {.name = "pod_status_patch",
                              .relevance = 1,
                              .queued = true,
                              .merge = patch_merge,
                              .is_noop = patch_is_noop,
                              .trace = patch_trace},
    /* upstream PodBindingCall: Merge overwrites, never a no-op */
    [KS_CALL_BINDING] = {.name = "pod_binding",
                         .relevance = 2,
                         .lane = KS_LANE_BINDING,
                         .queued = true,
                         /* replacing the pod's nomination patch, it does
                          * not wait in that patch's place */
                         .requeues = true,
                         .unmade = "the backend cannot bind pods"},
    /* preemption's evictions (upstream deletes victims outside its
     * dispatcher; here the most relevant call of a pod): the victim's
     * DisruptionTarget patch queued before it still runs, first */
    [KS_CALL_DELETE] = {.name = "pod_deletion",
                        .relevance = 3,
                        .lane = KS_LANE_EVICTION,
                        .queued = true,
                        .keeps_displaced = KS_CALL_BIT(KS_CALL_STATUS_PATCH),
                        .requeues = true,
                        .unmade = "the backend cannot delete pods"},
    /* a plugin's write; the plugin usually puts its own rules in the
     * call (its name, is_noop): made at once, as upstream's plugins make
     * their writes */
    [KS_CALL_OBJECT_WRITE] = {.name = "object_write"},
};

static const ks_call_rules unknown = {.name = "unknown"};

const ks_call_rules *ks_call_rules_of(ks_call_type t) { return t < KS_CALL_TYPES ? &rules[t] : &unknown; }

const char *ks_call_type_name(ks_call_type t) { return ks_call_rules_of(t)->name; }

const ks_call_rules *ks_api_call_rules(const ks_api_call *c) { return c->rules ? c->rules : ks_call_rules_of(c->type); }

/* ---- owned copies ------------------------------------------------------- */

static ks_pod *ref_or_null(const ks_pod *p) { return p ? ks_pod_ref((ks_pod *)p) : NULL; }

static ks_status_patch *patch_clone(const ks_status_patch *p) {
    ks_status_patch *n = ks_xcalloc(1, sizeof(*n));
    n->has_condition = p->has_condition;
    if (p->has_condition) {
        n->cond_type = dup_or_null(p->cond_type);
        n->cond_status = dup_or_null(p->cond_status);
        n->cond_reason = dup_or_null(p->cond_reason);
        n->cond_message = dup_or_null(p->cond_message);
    }
    n->set_nominated = p->set_nominated;
    if (p->set_nominated) n->nominated = ks_xstrdup(p->nominated ? p->nominated : "");
    return n;
}

static ks_event_record *event_clone(const ks_event_record *e) {
    ks_event_record *n = ks_xcalloc(1, sizeof(*n));
    n->regarding = ref_or_null(e->regarding);
    n->related = ref_or_null(e->related);
    n->type = dup_or_null(e->type);
    n->reason = dup_or_null(e->reason);
    n->action = dup_or_null(e->action);
    n->note = dup_or_null(e->note);
    n->time_ns = e->time_ns;
    return n;
}

ks_api_call *ks_api_call_clone(const ks_api_call *c) {
    ks_api_call *n = ks_xcalloc(1, sizeof(*n));
    n->type = c->type;
    n->pod = ref_or_null(c->pod);
    n->node = dup_or_null(c->node);
    if (c->patch) n->patch = patch_clone(c->patch);
    if (c->event) n->event = event_clone(c->event);
    return n;
}

static void patch_free(ks_status_patch *p) {
    if (!p) return;
    free((char *)p->cond_type);
    free((char *)p->cond_status);
    free((char *)p->cond_reason);
    free((char *)p->cond_message);
    free((char *)p->nominated);
    free(p);
}

static void event_free(ks_event_record *e) {
    if (!e) return;
    if (e->regarding) ks_pod_unref((ks_pod *)e->regarding);
    if (e->related) ks_pod_unref((ks_pod *)e->related);
    free((char *)e->type);
    free((char *)e->reason);
    free((char *)e->action);
    free((char *)e->note);
    free(e);
}

void ks_api_call_free(ks_api_call *c) {
    if (!c) return;
    if (c->pod) ks_pod_unref((ks_pod *)c->pod);
    free((char *)c->node);
    patch_free((ks_status_patch *)c->patch);
    event_free((ks_event_record *)c->event);
    free(c);
}
