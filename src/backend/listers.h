/* The scheduler's listers (upstream's informer listers) for every kind a
 * plugin reads other than nodes and pods: filled from the backend's watch
 * events, read by plugins through immutable views.
 *
 * A view is pinned by a thread before it runs plugins and unpinned after;
 * until then the view and every object in it stay valid and unchanged, so
 * a plugin that reads a PVC in PreFilter and again in Filter sees one
 * version, while watch threads keep applying changes. Objects are shared
 * by reference counting (KS_OBJECT_REF). Thread-safe. */
#ifndef KS_LISTERS_H
#define KS_LISTERS_H

#include "api/objects.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ks_listers ks_listers;

ks_listers *ks_listers_new(void);
void ks_listers_free(ks_listers *l);

/* Apply one change of kind k (old/new as in a watch event: NULL old for an
 * add, NULL new for a delete; the listers take their own references).
 * false for a kind the listers do not hold (nodes, pods). */
bool ks_listers_apply(ks_listers *l, ks_kind k, ks_watch_type type, void *old_obj, void *new_obj);

const ks_objects *ks_listers_pin(ks_listers *l, uint64_t *token);
void ks_listers_unpin(ks_listers *l, uint64_t token);

/* Views built, objects held, retired items waiting for pins, object
 * pointers copied into new vectors (a kind's vector is copied when it
 * changes while a view shows it), and the bytes of every vector held
 * (current, spare, retired), for tests and metrics. */
typedef struct ks_listers_stats {
    uint64_t views, objects, retired_pending, copied, vector_bytes;
} ks_listers_stats;
void ks_listers_stats_get(ks_listers *l, ks_listers_stats *out);

#endif
