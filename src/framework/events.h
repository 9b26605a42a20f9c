/* Cluster events and queueing hints (upstream framework/events.go and the
 * ClusterEvent helpers of framework/types.go).
 *
 * An event is a resource and an action. An update of a pod or a node is
 * split, as upstream does, into the finer update kinds it contains
 * (ks_pod_change_events, ks_node_change_events); the objects of an event
 * are handed to the plugins' QueueingHint as ks_event_object (a kind and a
 * pointer to the core's object). */
#ifndef KS_FW_EVENTS_H
#define KS_FW_EVENTS_H

#include "api/objects.h"

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stddef.h>

struct ks_event_object {
    ks_kind kind;
    const void *obj; /* ks_pod *, ks_node *, ks_pvc *, ... */
};

/* Every finer update kind of pods and nodes. */
#define KS_ACT_UPDATE_ANY                                                                              \
    (KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_ALLOCATABLE | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT | \
     KS_ACT_UPDATE_NODE_CONDITION | KS_ACT_UPDATE_NODE_ANNOTATION | KS_ACT_UPDATE_POD_LABEL |              \
     KS_ACT_UPDATE_POD_SCALE_DOWN | KS_ACT_UPDATE_POD_TOLERATION |                                        \
     KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED | KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM)

/* KS_ACT_UPDATE widened to every update kind (registrations and incoming
 * events alike, as upstream's Update is the union of them). */
static inline uint32_t ks_actions_normalize(uint32_t a) {
    return (a & KS_ACT_UPDATE) ? (a | KS_ACT_UPDATE_ANY) : a;
}

static inline bool ks_event_is_wildcard(ks_cluster_event e) {
    return e.resource == KS_EV_WILDCARD && (e.actions & KS_ACT_ALL) == KS_ACT_ALL;
}

/* upstream MatchClusterEvents: a registered event matches an incoming one
 * when it is the wildcard, or the resources match (Pod covers assigned and
 * unscheduled pods), the actions overlap and the incoming actions, as
 * upstream numbers them, are not above the registered ones (an incoming
 * generic Update matches only registrations of every update kind). */
bool ks_event_match(ks_cluster_event reg, ks_cluster_event in);

/* upstream ClusterEvent.Label(): the resource then the action
 * ("NodeAdd", "AssignedPodDelete", "NodeUpdateNodeTaint"); "UnschedulableTimeout"
 * for the wildcard. Written to buf, which is returned. */
const char *ks_event_label(ks_cluster_event ev, char *buf, size_t n);
/* The action alone ("Add", "UpdateNodeLabel", "Update", "All"). */
const char *ks_action_name(uint32_t actions);

/* The events an update of a pod makes (upstream
 * PodSchedulingPropertiesChange): the resource is KS_EV_ASSIGNED_POD when
 * the new pod is bound, else KS_EV_UNSCHEDULED_POD; one generic update when
 * no finer kind applies. Returns the count (at most 5). */
size_t ks_pod_change_events(const ks_pod *old_pod, const ks_pod *new_pod, ks_cluster_event out[5]);
/* The events an update of a node makes (upstream
 * NodeSchedulingPropertiesChange); none when nothing that scheduling reads
 * changed. Conditions are not kept by ksched, so UpdateNodeCondition is
 * never produced (no default plugin registers it). At most 5. */
size_t ks_node_change_events(const ks_node *old_node, const ks_node *new_node, ks_cluster_event out[5]);

/* The resource bit of an object kind (0 for kinds no event is sent for). */
uint32_t ks_kind_event_resource(ks_kind k);

/* Keep / release an event's object (any kind). */
void ks_kind_object_ref(ks_kind k, const void *obj);
void ks_kind_object_unref(ks_kind k, const void *obj);

/* An event object for obj (NULL obj: NULL). */
static inline const ks_event_object *ks_event_object_of(ks_event_object *slot, ks_kind k, const void *obj) {
    if (!obj) return NULL;
    slot->kind = k;
    slot->obj = obj;
    return slot;
}

#endif
