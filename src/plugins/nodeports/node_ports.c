/* NodePorts: the node must have every host port the pod asks for free
 * (an IP of 0.0.0.0 or unset conflicts with every IP). */
#include "framework/nodeinfo.h"
#include "framework/status.h"
#include "plugins/helper/hints.h"
#include "util/xalloc.h"

#include <ksched/ksched.h>

#include <stdlib.h>

typedef struct node_ports {
    ks_state_key pre_filter_key;
} node_ports;

/* The pod's host ports: those of its containers and of its restartable
 * (sidecar) init containers, which run for the pod's whole life. */
typedef struct pre_filter_state {
    uint32_t n;
    const ks_container_port **ports;
} pre_filter_state;

static void *create(const ks_args *args, ks_handle *h, char **err) {
    node_ports *pl = ks_xcalloc(1, sizeof(*pl));
    pl->pre_filter_key = ks_state_key_get("PreFilterNodePorts");
    return pl;
}

static void destroy(void *self) { free(self); }

/* Upstream (queueing hints on): Pod/Delete and Node/Add. */
static size_t events_to_register(void *self, ks_cluster_event *out, size_t max) {
    static const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_DELETE},
        {KS_EV_NODE, KS_ACT_ADD},
    };
    return KS_EVENTS_COPY(ev, out, max);
}

static bool any_ip(ks_id ip) { return ip == 0 || ip == ks_intern("0.0.0.0"); }

static bool ports_conflict(const ks_container_port *a, const ks_container_port *b) {
    if (a->host_port <= 0 || a->host_port != b->host_port || a->protocol != b->protocol) return false;
    return any_ip(a->host_ip) || any_ip(b->host_ip) || a->host_ip == b->host_ip;
}

/* A deleted pod helps only when it was bound or nominated somewhere and
 * held a host port the pod wants. Node adds have no hint (always Queue). */
static ks_queueing_hint queueing_hint(void *self, ks_cluster_event ev, const ks_pod *pod,
                                      const ks_event_object *old_obj, const ks_event_object *new_obj, char **err) {
    if (!(ev.resource & (KS_EV_POD | KS_EV_ASSIGNED_POD | KS_EV_UNSCHEDULED_POD))) return KS_QUEUE;
    const ks_pod *d = ks_hint_pod(old_obj);
    if (!d) return ks_hint_type_error(err, "Pod");
    if (d->node_name == 0 && d->nominated_node == 0) return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < pod->nhost_ports; i++)
        for (uint32_t j = 0; j < d->nhost_ports; j++)
            if (ports_conflict(&pod->host_ports[i], &d->host_ports[j])) return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

static void collect(pre_filter_state *s, const ks_container *c) {
    for (uint32_t i = 0; i < c->nports; i++)
        if (c->ports[i].host_port > 0) {
            if (s->ports) s->ports[s->n] = &c->ports[i];
            s->n++;
        }
}

static void collect_all(pre_filter_state *s, const ks_pod *pod) {
    s->n = 0;
    for (uint32_t i = 0; i < pod->ninit; i++)
        if (pod->init_containers[i].sidecar) collect(s, &pod->init_containers[i]);
    for (uint32_t i = 0; i < pod->ncontainers; i++) collect(s, &pod->containers[i]);
}

static ks_status *pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes,
                             ks_pre_filter_result **result) {
    node_ports *pl = self;
    pre_filter_state count = {0};
    collect_all(&count, pod);
    if (count.n == 0) return ks_status_new(KS_SKIP, NULL);
    pre_filter_state *s = ks_cycle_state_alloc(st, sizeof(*s));
    s->ports = ks_cycle_state_alloc(st, count.n * sizeof(*s->ports));
    collect_all(s, pod);
    ks_cycle_state_write(st, pl->pre_filter_key, s, NULL, NULL);
    return NULL;
}

static ks_status *filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                         const ks_node_info *ni) {
    node_ports *pl = self;
    const pre_filter_state *s = ks_cycle_state_read(st, pl->pre_filter_key);
    if (!s)
        return ks_status_new(KS_ERROR,
                             "reading \"PreFilterNodePorts\" from cycleState: not found");
    for (uint32_t i = 0; i < s->n; i++)
        if (ks_node_info_port_conflict(ni, s->ports[i]))
            return ks_status_new_const(KS_UNSCHEDULABLE,
                                       "node(s) didn't have free ports for the requested pod ports");
    return NULL;
}

const ks_plugin_ops ks_plugin_node_ports = {
    .abi_version = KS_ABI_VERSION,
    .name = "NodePorts",
    .create = create,
    .destroy = destroy,
    .events_to_register = events_to_register,
    .queueing_hint = queueing_hint,
    .pre_filter = pre_filter,
    .filter = filter,
};
