/* Every write the scheduler makes, as one typed call (upstream's
 * framework/api_calls). The scheduler's own are core types: bindings, pod
 * status patches, deletions (preemption victims; their DisruptionTarget
 * condition is a status patch run first) and events. A plugin's write
 * (VolumeBinding's PV/PVC updates, DynamicResources' ResourceClaim
 * updates, a plugin's pod annotations) is one generic object write
 * (KS_CALL_OBJECT_WRITE, ks_object_write): an object named by kind,
 * namespace, name and subresource, a PATCH body or an edit of the whole
 * object (PUT) for the REST form, and the new version of the decoded
 * object for the in-memory form, all built by the plugin.
 *
 * Each call carries its rules (ks_call_rules: upstream's APICall Merge and
 * IsNoOp, its relevance, and how the dispatcher queues it): a core type's
 * row in api_calls.c, or the rules the plugin puts in the call. The
 * dispatcher (api_dispatcher.h) applies them without knowing the types; a
 * cluster client (cluster_client.h) executes the call: the kube-apiserver
 * client turns it into REST through its kind table, the in-memory cluster
 * applies it to its objects. A wrapper that watches or changes the writes
 * (simulate, trace, shadow) wraps the one execute function.
 *
 * Adding a plugin's write: build a ks_object_write in the plugin and hand
 * it to ks_handle_api_call; nothing else (a kind the in-memory cluster
 * does not store yet: one row in memory_client.c's WRITABLE table).
 * Adding a core type: its value below, its row in api_calls.c, and its
 * execution in the two clients. */
#ifndef KS_API_CALLS_H
#define KS_API_CALLS_H

#include "api/pod.h"
#include "framework/framework.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ks_call_type {
    KS_CALL_EVENT = 0,
    KS_CALL_STATUS_PATCH,
    KS_CALL_BINDING,
    KS_CALL_DELETE,
    KS_CALL_OBJECT_WRITE, /* a plugin's write (ks_object_write) */
    KS_CALL_TYPES
} ks_call_type;

/* upstream's names: "pod_status_patch", "pod_binding", ... */
const char *ks_call_type_name(ks_call_type t);

#define KS_CALL_BIT(t) (1u << (t))
#define KS_CALLS_ALL ((1u << KS_CALL_TYPES) - 1)

/* An event (events.k8s.io/v1) about a pod. */
typedef struct ks_event_record {
    const ks_pod *regarding;
    const ks_pod *related; /* or NULL */
    const char *type;    /* "Normal" / "Warning" */
    const char *reason;  /* "Scheduled", "FailedScheduling", "Preempted" */
    const char *action;  /* "Binding", "Scheduling", "Preempting" */
    const char *note;
    int64_t time_ns;
} ks_event_record;

struct json_t;
typedef struct ks_object_write ks_object_write;

/* How an object write reaches the API server. */
typedef enum ks_write_verb {
    KS_WRITE_MERGE_PATCH,     /* PATCH, application/merge-patch+json (RFC 7386) */
    KS_WRITE_STRATEGIC_PATCH, /* PATCH, application/strategic-merge-patch+json */
    KS_WRITE_JSON_PATCH,      /* PATCH, application/json-patch+json (RFC 6902) */
    /* PUT of the whole object, edited from the client's copy of it, with
     * upstream's retry.RetryOnConflict: a 409 reads the newest version and
     * edits that, up to 5 attempts */
    KS_WRITE_UPDATE,
    /* no request: wait (up to timeout_ms) until the client's copy of the
     * object shows what `until` waits for (VolumeBinding's wait for the PV
     * controller); the in-memory cluster, where nothing changes while one
     * waits, does not wait */
    KS_WRITE_AWAIT,
} ks_write_verb;

/* A write of one object (KS_CALL_OBJECT_WRITE), built by a plugin: both
 * the REST form (the kube-apiserver client) and the in-memory form (the
 * in-memory cluster, which keeps decoded objects, not JSON), side by side
 * in the plugin. Borrowed for the execution. */
struct ks_object_write {
    const char *kind; /* its name in the clients' kind tables: "PersistentVolume" */
    const char *ns;   /* NULL: cluster-scoped */
    const char *name;
    const char *subresource; /* NULL, "status" */
    ks_write_verb verb;
    /* PATCH: the body (a new reference) */
    struct json_t *(*patch)(const ks_object_write *w);
    /* UPDATE: change obj (the object as the API server showed it) in
     * place; KS_SKIP: nothing to change, no request; another status: the
     * write fails with it (a check upstream makes before its update) */
    ks_status *(*edit)(struct json_t *obj, const ks_object_write *w);
    /* UPDATE: the version the writer holds, sent by the first attempt
     * (from the client's copy, for a kind it keeps as JSON); NULL: the
     * newest the client has (or reads) */
    const char *resource_version;
    /* The in-memory form: the object's new version (a new object, its
     * first reference the caller's) made from cur, the stored one; NULL:
     * no change (*err: the write fails). NULL apply: the in-memory cluster
     * changes nothing for this write. */
    void *(*apply)(const void *cur, const ks_object_write *w, ks_status **err);
    /* AWAIT: whether the client's copy (NULL: none) is what is waited for */
    bool (*until)(const void *obj, const ks_object_write *w);
    int64_t timeout_ms;
    /* Made by a controller in a cluster (the PV controller binding a
     * claim), which the in-memory cluster does not run: the kube client
     * sends nothing; the in-memory cluster applies it. */
    bool controller;
    /* Its failure reads "<action> <noun>: <error>" (action NULL: the
     * error alone); noun defaults to "<kind> <ns>/<name>". */
    const char *action, *noun;
    const void *arg; /* the plugin's data for its callbacks */
    /* Non-NULL: set to the object as written (a reference on the decoded
     * object), NULL when nothing was written. */
    void **written;
};

struct ks_call_rules;

/* One call, borrowed for the execution: the fields of its type are set. */
typedef struct ks_api_call {
    ks_call_type type;
    const ks_pod *pod;                 /* the pod it is about (events: regarding) */
    const char *node;                  /* BINDING */
    const ks_status_patch *patch;      /* STATUS_PATCH */
    const ks_event_record *event;      /* EVENT */
    const ks_object_write *write;      /* OBJECT_WRITE */
    /* The call's own rules (a plugin's write); NULL: its type's row. */
    const struct ks_call_rules *rules;
} ks_api_call;

/* The dispatcher's queue a call waits in, popped from the highest down
 * (api_dispatcher.c push_key). Evictions also have workers of their own. */
typedef enum ks_call_lane {
    KS_LANE_OTHER,    /* status patches, events: in arrival order */
    KS_LANE_EVICTION, /* preemption's deletions */
    KS_LANE_BINDING,  /* what a scheduled pod waits on */
    KS_LANES
} ks_call_lane;

/* A type's rules (upstream's APICall interface, less Execute, which is the
 * cluster client's). */
typedef struct ks_call_rules {
    const char *name; /* upstream's APICallType: "pod_status_patch", ... */
    /* Queued calls for one pod merge: a call less relevant than the one
     * queued is skipped, a more relevant one replaces it (upstream's
     * APICallRelevances). 0: never merged, each call its own (events). */
    int relevance;
    /* Its queue (bindings, then deletions, ahead of the others). */
    ks_call_lane lane;
    /* Made through the dispatcher's queue; false: executed at once by
     * the binding cycle that makes it (PreBind writes). */
    bool queued;
    /* A client that does not make calls of this type: the call fails
     * with this text; NULL: it is assumed done. */
    const char *unmade;
    /* Replacing a queued call of its pod: the displaced calls of these
     * types (KS_CALL_BIT) run first instead of being dropped, and the
     * pod's place in the queue is taken anew by this call's rules
     * (requeues) instead of kept. */
    uint32_t keeps_displaced;
    bool requeues;
    /* The result is dropped and not measured (events: fire and forget). */
    bool forget;
    /* Take from an older queued call of the same type what this one
     * leaves alone (upstream Merge); NULL: the newer overwrites. */
    void (*merge)(ks_api_call *newer, const ks_api_call *older);
    /* Whether executing it would change nothing (upstream IsNoOp); NULL:
     * never. Checked when queued and, for PreBind writes, when made. */
    bool (*is_noop)(const ks_api_call *c);
    /* Logged as the call starts (klog V(3) lines upstream prints); NULL. */
    void (*trace)(const ks_api_call *c);
} ks_call_rules;

const ks_call_rules *ks_call_rules_of(ks_call_type t);
/* The rules of one call: its own, else its type's. */
const ks_call_rules *ks_api_call_rules(const ks_api_call *c);

/* An owned copy of a queued call (the pods referenced, the strings and
 * the event copied); ks_api_call_free releases it. Only queued core
 * types: an object write is made at once (its rules' queued is false). */
ks_api_call *ks_api_call_clone(const ks_api_call *c);
void ks_api_call_free(ks_api_call *c);

#endif
