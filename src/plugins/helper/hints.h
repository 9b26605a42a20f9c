/* Small helpers for the plugins' EventsToRegister and QueueingHints. */
#ifndef KS_PLUGINS_HINTS_H
#define KS_PLUGINS_HINTS_H

#include "api/pod.h"
#include "framework/events.h"

#include <ksched/ksched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy a static list of events into out (at most max); the count. */
static inline size_t ks_events_copy(const ks_cluster_event *list, size_t n, ks_cluster_event *out, size_t max) {
    size_t i = 0;
    for (; i < max && i < n; i++) out[i] = list[i];
    return i;
}
#define KS_EVENTS_COPY(list, out, max) ks_events_copy((list), sizeof(list) / sizeof((list)[0]), (out), (max))

/* The same pod (upstream compares UIDs; a pod without one, as in a
 * manifest, is known by namespace and name). */
static inline bool ks_hint_same_pod(const ks_pod *a, const ks_pod *b) {
    if (!a || !b) return false;
    if (a->uid && b->uid && a->uid[0] && b->uid[0]) return strcmp(a->uid, b->uid) == 0;
    return a->key == b->key;
}

/* The old and new pod / node of an event (NULL when absent or another
 * kind). */
static inline const ks_pod *ks_hint_pod(const ks_event_object *o) { return ks_event_object_pod(o); }
static inline const ks_node *ks_hint_node(const ks_event_object *o) { return ks_event_object_node(o); }

/* upstream util.As failing: the event's object is not what the hint
 * expects; reported as an error (which queues the pod). */
static inline ks_queueing_hint ks_hint_type_error(char **err, const char *want) {
    if (err) {
        const char *fmt = "unexpected object in the event: want %s";
        size_t n = strlen(fmt) + strlen(want) + 1;
        *err = malloc(n);
        if (*err) snprintf(*err, n, fmt, want);
    }
    return KS_QUEUE;
}

#endif
