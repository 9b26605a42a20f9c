/* Builders for plugin table tests: pods, nodes and NodeInfos made by hand
 * (no decoder involved), and small runners for one plugin's extension
 * points. Pods and nodes are reference counted (drop them with
 * ks_pod_unref / ks_node_unref once handed to node infos); requirement
 * arrays of affinity terms are freed by tp_reset(). */
#ifndef KS_TESTUTIL_PLUGINS_H
#define KS_TESTUTIL_PLUGINS_H

#include "api/node.h"
#include "api/pod.h"
#include "framework/cycle_state.h"
#include "framework/nodeinfo.h"
#include "framework/status.h"

#include <ksched/ksched.h>

#define TP_NONE (-1) /* "not set" for request builders */
#define TP_MI(x) ((int64_t)(x) * 1024 * 1024)
#define TP_GI(x) ((int64_t)(x) * 1024 * 1024 * 1024)

/* ---- nodes ---- */
ks_node *tp_node(const char *name);
void tp_node_alloc(ks_node *n, int64_t milli_cpu, int64_t memory, int64_t pods);
void tp_node_ephemeral(ks_node *n, int64_t bytes);
void tp_node_scalar(ks_node *n, const char *resource, int64_t v);
void tp_node_label(ks_node *n, const char *key, const char *value);
void tp_node_taint(ks_node *n, const char *key, const char *value, ks_effect effect);
void tp_node_image(ks_node *n, int64_t size, const char *name);

/* ---- pods ---- */
ks_pod *tp_pod(const char *name);
/* A container requesting cpu (millicores) and memory (bytes); TP_NONE
 * leaves the request unset. Returns the container for further setup
 * (valid until the next container is added). */
ks_container *tp_container(ks_pod *p, int64_t milli_cpu, int64_t memory);
ks_container *tp_init_container(ks_pod *p, int64_t milli_cpu, int64_t memory, bool sidecar);
void tp_container_scalar(ks_pod *p, ks_container *c, const char *resource, int64_t v);
void tp_container_ephemeral(ks_container *c, int64_t bytes);
void tp_container_image(ks_container *c, const char *image);
void tp_container_port(ks_pod *p, ks_container *c, int32_t host_port, const char *protocol,
                       const char *host_ip);
void tp_pod_overhead(ks_pod *p, int64_t milli_cpu, int64_t memory);
void tp_pod_priority(ks_pod *p, int32_t prio);
void tp_pod_node_name(ks_pod *p, const char *node);
void tp_pod_gate(ks_pod *p, const char *gate);
void tp_pod_toleration(ks_pod *p, const char *key, ks_tol_op op, const char *value,
                       ks_effect effect);
void tp_pod_node_selector(ks_pod *p, const char *key, const char *value);
/* Required node affinity: terms are ORed; add requirements to a term. */
void tp_pod_required_affinity(ks_pod *p); /* present with no terms */
ks_node_selector_term *tp_pod_required_term(ks_pod *p);
ks_node_selector_term *tp_pod_preferred_term(ks_pod *p, int32_t weight);
/* values: NULL-terminated list. Gt/Lt take one numeric value. */
void tp_term_expr(ks_node_selector_term *t, const char *key, ks_op op, ...);
void tp_term_field(ks_node_selector_term *t, ks_op op, ...);
/* Compute requests (call after the containers are set). */
ks_pod *tp_pod_done(ks_pod *p);

/* A node info holding node and pods (pods get node_name). */
ks_node_info *tp_node_info(ks_node *n, ks_pod *const *pods, size_t npods);

/* ---- running a plugin ---- */
typedef struct tp_plugin {
    const ks_plugin_ops *ops;
    void *self;
} tp_plugin;

tp_plugin tp_create(const ks_plugin_ops *ops, const ks_args *args, ks_handle *h);
/* Returns the error of a refused create (malloc'd) or NULL. */
char *tp_create_error(const ks_plugin_ops *ops, const ks_args *args);
void tp_destroy(tp_plugin *p);

/* "Success" or "<Code>: reason1, reason2"; the status is freed. The
 * result is a static buffer valid until the next call. */
const char *tp_status_str(ks_status *s);

/* PreFilter then Filter on each node; verdicts[i] receives the
 * tp_status_str of node i (malloc'd), or of PreFilter when it rejects. */
void tp_filter_all(tp_plugin *p, const ks_pod *pod, ks_node_info **nodes, size_t n,
                   char **verdicts);
/* PreScore, Score on each node, NormalizeScore when the plugin has it.
 * Returns the PreScore status string ("Skip" stops there). */
const char *tp_score_all(tp_plugin *p, const ks_pod *pod, ks_node_info **nodes, size_t n,
                         int64_t *scores);

/* PreFilter + Filter of a plugin created without args on one node info;
 * the verdict string is in a static buffer. */
const char *tp_filter1(const ks_plugin_ops *ops, const ks_pod *pod, ks_node_info *ni);

/* Free what tests allocated: node infos (and their pods/nodes when those
 * hold the only references), verdict strings, requirement arrays. */
void tp_free_infos(ks_node_info **nis, size_t n);
void tp_free_verdicts(char **v, size_t n);
void tp_reset(void);

/* Args trees from YAML text (needs the codec). */
const ks_args *tp_args(const char *yaml);

#endif
