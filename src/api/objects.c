#include "api/objects.h"

#include <pthread.h>

/* The classes every API server creates at start-up. */
static ks_priority_class builtin_classes[2];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void init_builtin(void) {
    builtin_classes[0].name = ks_intern("system-node-critical");
    builtin_classes[0].value = 2000001000;
    builtin_classes[1].name = ks_intern("system-cluster-critical");
    builtin_classes[1].value = 2000000000;
}

const ks_priority_class *ks_builtin_priority_class(ks_id name) {
    pthread_once(&builtin_once, init_builtin);
    for (size_t i = 0; i < 2; i++)
        if (builtin_classes[i].name == name) return &builtin_classes[i];
    return NULL;
}

const ks_priority_class *ks_objects_priority_class(const ks_objects *o, ks_id name) {
    for (uint32_t i = 0; o && i < o->priority_classes.n; i++)
        if (o->priority_classes.v[i]->name == name) return o->priority_classes.v[i];
    return ks_builtin_priority_class(name);
}

const ks_namespace *ks_objects_namespace(const ks_objects *o, ks_id name) {
    for (uint32_t i = 0; o && i < o->namespaces.n; i++)
        if (o->namespaces.v[i]->name == name) return o->namespaces.v[i];
    return NULL;
}

static const char *const workload_kinds[KS_WORKLOAD_NKINDS][2] = {
    [KS_WORKLOAD_SERVICE] = {"Service", "service"},
    [KS_WORKLOAD_REPLICASET] = {"ReplicaSet", "replicaset"},
    [KS_WORKLOAD_STATEFULSET] = {"StatefulSet", "statefulset"},
    [KS_WORKLOAD_RC] = {"ReplicationController", "replicationcontroller"},
    [KS_WORKLOAD_DEPLOYMENT] = {"Deployment", "deployment"},
    [KS_WORKLOAD_DAEMONSET] = {"DaemonSet", "daemonset"},
    [KS_WORKLOAD_JOB] = {"Job", "job"},
    [KS_WORKLOAD_CRONJOB] = {"CronJob", "cronjob"},
};

const char *ks_workload_kind_name(ks_workload_kind k) { return workload_kinds[k][0]; }
const char *ks_workload_kind_lower(ks_workload_kind k) { return workload_kinds[k][1]; }
