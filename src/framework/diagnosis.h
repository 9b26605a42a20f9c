/* Why a pod did not fit (upstream Diagnosis and FitError) and the
 * FailedScheduling message built from it:
 *
 *   0/N nodes are available: <PreFilter message>. <PostFilter message>
 *   0/N nodes are available: <count reason, ... sorted>. <PostFilter message>
 *
 * Reasons are counted over the nodes with a status of their own plus, for
 * the nodes without one, the absent-nodes status (a PreFilter node set that
 * excluded them); the "count reason" strings are sorted as strings. */
#ifndef KS_DIAGNOSIS_H
#define KS_DIAGNOSIS_H

#include "framework/framework.h"

#include <ksched/framework.h>

#define KS_NO_NODE_AVAILABLE_FMT "0/%zu nodes are available"
#define KS_ERR_NO_NODES_AVAILABLE "no nodes available to schedule pods"

typedef struct ks_diagnosis {
    ks_node_status_map statuses;
    ks_plugin_mask unschedulable_plugins;
    ks_plugin_mask pending_plugins;
    /* an extender filtered nodes out (upstream's "Extender" in
     * UnschedulablePlugins: any cluster event requeues the pod) */
    bool extender_rejected;
    char *pre_filter_msg;  /* malloc'd or NULL */
    char *post_filter_msg; /* malloc'd or NULL */
} ks_diagnosis;

void ks_diagnosis_init(ks_diagnosis *d);
void ks_diagnosis_free(ks_diagnosis *d);
/* Record the plugin of a rejecting / Pending status (upstream
 * AddPluginStatus). */
void ks_diagnosis_add_plugin_status(ks_diagnosis *d, const ks_framework *fw, const ks_status *s);

typedef struct ks_fit_error {
    size_t num_all_nodes;
    ks_diagnosis diagnosis;
} ks_fit_error;

/* The FitError message (malloc'd). */
char *ks_fit_error_message(const ks_fit_error *fe);

/* Upstream truncates event notes to 1024 bytes: "<first 1020> ...". */
#define KS_NOTE_LENGTH_LIMIT 1024
char *ks_truncate_message(const char *msg);

#endif
