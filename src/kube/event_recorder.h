/* Events to the API server as kube-scheduler writes them: client-go's
 * tools/events broadcaster and recorder (events.k8s.io/v1), and its
 * tools/record recorder (core/v1) for the LeaderElection event and as the
 * fallback where events.k8s.io/v1 is not served.
 *
 * events.k8s.io/v1: each event is keyed without its note (type, action,
 * reason, reportingController, reportingInstance, regarding, related). The
 * first occurrence is created; the second within the series window turns
 * the stored Event into a series (one strategic-merge PATCH with
 * series.count 2 and lastObservedTime); later repeats only count in
 * memory, written by the refresh every 30 minutes and by the final patch
 * once the series has been quiet for 6 minutes (checked every 6 minutes),
 * when the key is forgotten. A single event is forgotten 6 minutes after
 * its eventTime. A patch answered 404 re-creates the Event.
 *
 * core/v1 (record's EventCorrelator): identical events (message included)
 * become count/lastTimestamp patches; the 10th distinct message for one
 * object and reason within 10 minutes becomes a "(combined from similar
 * events): " event; a per-object token bucket (burst 25, one per 5
 * minutes) drops floods. Its caches hold 4096 keys each (64-bit hashes).
 *
 * Which API: the first events.k8s.io/v1 POST decides. A 404 that is not
 * about a missing namespace means the API is not served: that event and
 * all later ones go to core/v1, as upstream's adapter does when discovery
 * does not find events.k8s.io/v1.
 *
 * Never blocks the caller: emit copies the event into a bounded queue
 * (1000) and returns; a full queue drops the event and counts it. One
 * thread of the recorder's own writes with ks_kube_do_async through a
 * client of its own (its own rate budget), at most max_outstanding writes
 * in flight or waiting for a retry; a new event waits up to batch_ns
 * (10 ms) for more, so that a burst is one wake-up. A write that fails without an answer
 * is retried every 10 s (jittered) up to 12 times; one the API server
 * refuses is logged and dropped, as upstream. Notes are cut to 1024 bytes
 * (" ..." at the end, on a UTF-8 character boundary). Upstream's
 * series cache is unbounded; this one holds cache_size keys (least
 * recently used evicted, its pending count written first). */
#ifndef KS_KUBE_EVENT_RECORDER_H
#define KS_KUBE_EVENT_RECORDER_H

#include "kube/client.h"

#include <stdbool.h>
#include <stdint.h>

#define KS_EVENT_NOTE_LIMIT 1024

typedef struct ks_event_recorder ks_event_recorder;

/* An ObjectReference; NULL or "" fields are left out. */
typedef struct ks_event_ref {
    const char *kind;        /* "Pod" */
    const char *ns;          /* namespace */
    const char *name;
    const char *uid;
    const char *api_version; /* "v1" */
    const char *resource_version;
    const char *field_path;
} ks_event_ref;

typedef struct ks_event_recorder_options {
    const char *hostname;       /* NULL: gethostname() */
    uint32_t queue_size;        /* 0: 1000 */
    uint32_t max_outstanding;   /* 0: 64 */
    uint32_t cache_size;        /* 0: 4096 series keys */
    int64_t retry_sleep_ns;     /* 0: 10 s */
    int64_t finish_period_ns;   /* 0: 6 min (how often quiet series end) */
    int64_t refresh_period_ns;  /* 0: 30 min */
    int64_t flush_timeout_ns;   /* 0: 5 s (ks_event_recorder_free) */
    /* How long a new event waits for more before they are written
     * together (one wake-up of the recorder's thread and of the client's
     * I/O thread for a burst); 0: 10 ms; < 0: no wait. */
    int64_t batch_ns;
    /* Wall clock for eventTime, series times and ages (tests): NULL is
     * CLOCK_REALTIME. Nanoseconds since the epoch. */
    int64_t (*now)(void *arg);
    void *now_arg;
} ks_event_recorder_options;

/* c: a client made for events (not owned; free it after the recorder).
 * hostname NULL: gethostname(). Starts the recorder's thread. */
ks_event_recorder *ks_event_recorder_new(ks_kube_client *c, const char *hostname, char **err);
ks_event_recorder *ks_event_recorder_new_opts(ks_kube_client *c, const ks_event_recorder_options *o,
                                              char **err);

/* An events.k8s.io/v1 event (upstream EventRecorder.Eventf):
 * reportingController = reporting_controller (the profile's
 * schedulerName), reportingInstance = "<reporting_controller>-<hostname>",
 * eventTime = now with microseconds. type is "Normal" or "Warning"
 * (others are logged and dropped, as upstream). related may be NULL.
 * Thread-safe; never blocks on I/O. */
void ks_event_recorder_emit(ks_event_recorder *r, const char *reporting_controller,
                            const ks_event_ref *regarding, const ks_event_ref *related,
                            const char *type, const char *reason, const char *action,
                            const char *note);

/* A core/v1 event as tools/record's recorder writes it (source component
 * = component, no host): the LeaderElection event goes this way. */
void ks_event_recorder_emit_legacy(ks_event_recorder *r, const char *component,
                                   const ks_event_ref *regarding, const char *type,
                                   const char *reason, const char *message);

/* Stop taking events, write what is queued and the counts of open series,
 * waiting at most flush_timeout; what is left is counted as dropped.
 * Then free. NULL is fine. */
void ks_event_recorder_free(ks_event_recorder *r);

typedef struct ks_event_recorder_stats {
    uint64_t emitted;   /* accepted into the queue */
    uint64_t dropped;   /* queue full (ksched_events_dropped_total) or left at shutdown */
    uint64_t created, patched;  /* writes answered 2xx */
    uint64_t rejected;  /* refused by the API server, not retried */
    uint64_t failed;    /* no answer after the retries */
    uint64_t retries;
    uint64_t correlated; /* folded into a series or count without a write, or spam-filtered */
    uint32_t queued, outstanding, cached;
    const char *api;    /* "events.k8s.io/v1", "v1", or "" while not known */
} ks_event_recorder_stats;
void ks_event_recorder_stats_get(ks_event_recorder *r, ks_event_recorder_stats *out);
/* The dropped count alone (an atomic read). */
uint64_t ks_event_recorder_dropped(ks_event_recorder *r);

/* Upstream's truncateMessage for notes (malloc'd): at most 1024 bytes,
 * " ..." appended when cut, never cutting a UTF-8 character. */
char *ks_event_truncate_note(const char *note);

#endif
