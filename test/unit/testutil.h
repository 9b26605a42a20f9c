/* Helpers shared by the core's unit tests: building nodes, pods, profiles
 * and configurations by hand, and a few small test plugins (queue sort,
 * binder, resource fit) that every test profile can use. */
#ifndef KS_TESTUTIL_H
#define KS_TESTUTIL_H

#include "api/cluster.h"
#include "api/node.h"
#include "api/pod.h"
#include "config/config.h"
#include "framework/framework_internal.h"

#include <ksched/framework.h>
#include <ksched/ksched.h>

void tu_init(void);

/* A node with cpu (millicores), memory (bytes), pods capacity 110 and the
 * given labels (key, value, ..., NULL). */
ks_node *tu_node(const char *name, int64_t milli_cpu, int64_t memory, ...);
/* A pending pod (scheduler default-scheduler) requesting cpu/memory. */
ks_pod *tu_pod(const char *ns, const char *name, int64_t milli_cpu, int64_t memory, int32_t priority);
/* The same pod bound to node. */
ks_pod *tu_pod_on(const char *ns, const char *name, int64_t milli_cpu, int64_t memory, const char *node);
void tu_pod_labels(ks_pod *p, ...); /* key, value, ..., NULL */

/* Test plugins: "TestSort" (priority, then queue time), "TestBind"
 * (ks_handle_bind), "TestFit" (Filter on cpu/memory requests, Score least
 * allocated cpu, registers node and assigned-pod-delete events). */
extern const ks_plugin_ops tu_sort_plugin;
extern const ks_plugin_ops tu_bind_plugin;
extern const ks_plugin_ops tu_fit_plugin;

/* A registry with the three test plugins plus extra ones. */
ks_registry *tu_registry(const ks_plugin_ops *const *extra, size_t n);

/* A resolved profile built by hand. */
typedef struct tu_profile {
    ks_profile_config p;
    ks_plugin_ref refs[KS_EP_COUNT][32];
} tu_profile;

/* With TestSort (QueueSort) and TestBind (Bind) already in. */
void tu_profile_init(tu_profile *tp, const char *scheduler_name);
void tu_profile_add(tu_profile *tp, ks_ext_point ep, const char *plugin, int32_t weight);
/* Add the plugin at every point its ops implement (weight for Score). */
void tu_profile_add_plugin(tu_profile *tp, const ks_plugin_ops *ops, int32_t weight);

/* A configuration over the given profiles (defaults: parallelism 4,
 * backoff 1 s .. 10 s, adaptive percentage). Profiles are copied. */
ks_config *tu_config(tu_profile *const *profiles, size_t n);
void tu_config_free(ks_config *cfg);

/* The whole of dir/name, NUL-terminated (malloc'd), or NULL when it
 * cannot be read: certificates and keys a test made with openssl(1). */
char *tu_slurp(const char *dir, const char *name);

#endif
