/* client-go's Reflector for one resource: LIST (resourceVersion=0 first,
 * or a consistent list in pipelined pages with first_page_size; paginated
 * with limit/continue), then WATCH from the list's
 * resourceVersion with allowWatchBookmarks=true and a timeoutSeconds drawn
 * from [300, 600) s, re-watching at once from the last resourceVersion
 * seen when a watch ends (or is cut); a watch that fails (410 Gone as a
 * status or an ERROR event, other errors) backs off and relists (at the
 * last resourceVersion; after a 410 on the list itself, a consistent list
 * with resourceVersion ""), the result replacing the whole set. A watch
 * that cannot be opened (connection refused, 429) backs off and watches
 * again. Backoff as client-go's: 800 ms doubling to 30 s, each wait
 * jittered up to twice, back to 800 ms once 2 min pass without one.
 *
 * The reflector keeps each object's key (namespace/name) and
 * resourceVersion, so that a relist turns into ADDED / MODIFIED /
 * DELETED events for the handler (unchanged objects produce nothing), as
 * an informer's DeltaFIFO.Replace does.
 *
 * Objects reach the handler as document trees (codec/tree.h) valid for the
 * call, on the reflector's own thread. Bookmarks only move the
 * resourceVersion. An item that is not an object with metadata.name is
 * logged (kind, position) and skipped; the others go on. */
#ifndef KS_REFLECTOR_H
#define KS_REFLECTOR_H

#include "codec/tree.h"
#include "kube/client.h"

typedef enum ks_refl_event { KS_REFL_ADDED = 0, KS_REFL_MODIFIED, KS_REFL_DELETED } ks_refl_event;

typedef struct ks_reflector_handler {
    void *arg;
    /* One change. For DELETED derived from a relist, obj is the last
     * version the reflector delivered (it keeps no copy: obj then holds
     * only apiVersion, kind and metadata name/namespace/uid). */
    void (*event)(void *arg, ks_refl_event type, const ks_tree *obj);
    /* The first list has been delivered completely (called once). */
    void (*synced)(void *arg);
} ks_reflector_handler;

typedef struct ks_reflector_options {
    const char *kind;            /* "Pod": messages, metrics */
    const char *path;            /* collection: "/api/v1/pods" */
    const char *field_selector;  /* optional, unescaped */
    const char *label_selector;  /* optional, unescaped */
    uint32_t page_size;          /* 0: 500 */
    /* 0: the first list as client-go's (resourceVersion 0, page_size:
     * the watch cache answers it whole, in one page). N: a consistent
     * list (resourceVersion unset) in pages of N, each asked for as soon
     * as the previous one's continue token is in, so that the API server
     * prepares page k+1 while it sends page k (docs/differences.md). */
    uint32_t first_page_size;
    int64_t min_watch_timeout_s; /* 0: 300 (tests shorten it) */
    int64_t backoff_initial_ms;  /* 0: 800 (tests shorten it) */
    size_t max_event_bytes;      /* one watch event; 0: 64 MiB (tests shorten it) */
    /* Ask for JSON whatever the client's contentType (a CRD: the API
     * server has no protobuf form of it). Otherwise the client's Accept
     * is sent and lists and watches are read in the form the answer
     * comes in, JSON or protobuf (codec/pb.h). */
    bool json_only;
} ks_reflector_options;

typedef struct ks_reflector ks_reflector;

/* Starts the reflector's thread. */
ks_reflector *ks_reflector_start(ks_kube_client *c, const ks_reflector_options *o,
                                 const ks_reflector_handler *h);
/* Stops the thread (a watch in progress is cancelled) and frees. */
void ks_reflector_stop(ks_reflector *r);
/* True once the first list is handed over and the handler's synced has returned. */
bool ks_reflector_synced(const ks_reflector *r);

typedef struct ks_reflector_stats {
    uint64_t lists, relists, watches, watch_errors, events, bookmarks, decode_errors;
    char last_error[256];
} ks_reflector_stats;
void ks_reflector_stats_get(ks_reflector *r, ks_reflector_stats *out);

#endif
