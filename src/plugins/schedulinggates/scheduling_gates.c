/* SchedulingGates: keep a pod out of the active queue while it has
 * spec.schedulingGates. */
#include "api/pod.h"
#include "plugins/helper/hints.h"
#include "util/strbuf.h"

#include <ksched/ksched.h>

#include <stdlib.h>

static ks_status *pre_enqueue(void *self, const ks_pod *pod) {
    if (pod->ngates == 0) return NULL;
    /* The gate list is printed as Go prints a []string: [a b c]. */
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_putc(&b, '[');
    for (uint32_t i = 0; i < pod->ngates; i++) {
        if (i) ks_sb_putc(&b, ' ');
        ks_sb_puts(&b, ks_str(pod->scheduling_gates[i]));
    }
    ks_sb_putc(&b, ']');
    ks_status *s = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "waiting for scheduling gates: %s", ks_sb_str(&b));
    ks_sb_free(&b);
    return s;
}

/* Upstream (queueing hints on): Pod/UpdatePodSchedulingGatesEliminated. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    if (max < 1) return 0;
    out[0] = (ks_cluster_event){KS_EV_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED};
    return 1;
}

/* Only the gated pod's own gates going away lets it in. */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    const ks_pod *m = ks_hint_pod(new_obj);
    if (!m) return ks_hint_type_error(err, "Pod");
    return ks_hint_same_pod(pod, m) ? KS_QUEUE : KS_QUEUE_SKIP;
}

const ks_plugin_ops ks_plugin_scheduling_gates = {
    .abi_version = KS_ABI_VERSION,
    .name = "SchedulingGates",
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_enqueue = pre_enqueue,
};
