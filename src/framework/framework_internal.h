/* The framework's insides, for src/framework only (test/sh/layers.sh
 * fails when another folder includes this): one profile's plugin
 * instances, their per-extension-point lists, and the state the run
 * functions keep. Other folders use framework.h's functions. */
#ifndef KS_FRAMEWORK_INTERNAL_H
#define KS_FRAMEWORK_INTERNAL_H

#include "framework/framework.h"

typedef struct ks_plugin_inst {
    const ks_plugin_ops *ops;
    void *self;
    const char *name;   /* ops->name, static */
    unsigned index;
    /* EventsToRegister, for plugins that can reject (PreEnqueue, PreFilter,
     * Filter, Reserve, Permit). all_events: nothing registered means any
     * event may help, so that no pod is ever stranded. */
    bool enqueue_ext;
    bool all_events;
    ks_cluster_event *events;
    size_t nevents;
    /* events[nevents - 1] is {Node, UpdateNodeTaint} added for a plugin
     * that registered node adds but not taint updates, with no hint (it
     * always queues), as upstream's buildQueueingHintMap adds it */
    bool taint_added;
} ks_plugin_inst;

typedef struct ks_ep_list {
    ks_plugin_inst **v;
    uint32_t n;
} ks_ep_list;

struct ks_handle {
    struct ks_framework *fw;
};

struct ks_framework {
    char *profile_name;
    bool has_percentage;
    int32_t percentage_of_nodes_to_score;
    ks_plugin_inst *plugins;
    uint32_t nplugins;
    ks_ep_list ep[KS_EP_COUNT];
    int64_t *score_weights;  /* parallel to ep[KS_EP_SCORE] */
    struct ks_handle handle;
    const ks_snapshot *snapshot;
    ks_framework_env env;
    ks_waiting_pods *waiting;  /* shared by the scheduler's profiles */
    bool owns_waiting;
    ks_parallelizer *par;
    bool owns_par;
    bool checksums;            /* debug immutability check */
    /* ks_framework_options.seed and .ties */
    uint64_t seed;
    ks_tie_rules ties;
    ks_feature_set features;   /* the gates its plugins read (ks_handle_feature_enabled) */
    uint64_t rng;              /* selectHost's generator (ks_framework_rand) */
    struct ks_fw_metrics *metrics; /* the series this profile records (fw_metrics.h) */
    unsigned node_mask;        /* its per-node timing sample (ks_fwm_node_sampled) */
    bool binding_own;       /* ks_framework_binding_plugins_own */
};

/* Plugin statuses carry the plugin name (static string). */
const ks_plugin_inst *ks_framework_plugin(const ks_framework *fw, const char *name);

#endif
