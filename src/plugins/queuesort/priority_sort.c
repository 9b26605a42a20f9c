/* PrioritySort: the default QueueSort plugin. Higher priority first; among
 * equal priorities, the pod that entered the queue earlier. */
#include "api/pod.h"

#include <ksched/ksched.h>

static bool less(void *self, const ks_queued_pod *a, const ks_queued_pod *b) {
    int32_t p1 = ks_pod_priority(ks_queued_pod_pod(a));
    int32_t p2 = ks_pod_priority(ks_queued_pod_pod(b));
    return p1 > p2 ||
           (p1 == p2 && ks_queued_pod_timestamp_ns(a) < ks_queued_pod_timestamp_ns(b));
}

const ks_plugin_ops ks_plugin_priority_sort = {
    .abi_version = KS_ABI_VERSION,
    .name = "PrioritySort",
    .less = less,
};
