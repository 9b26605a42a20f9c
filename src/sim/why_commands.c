/* The kubectl command that makes a verified pod change on a live cluster.
 *
 * The simulation verifies a change by patching the pod's manifest, but
 * the API server refuses most pod changes once the pod exists
 * (ValidatePodUpdate: a pending pod may lose scheduling gates and gain
 * tolerations, nothing else `why` proposes). So a change is made where the
 * pod comes from: its workload's pod template, or, for a pod no controller
 * owns, a new pod replacing it. docs/why.md states the rules. */
#include "sim/why_internal.h"

#include "codec/patch.h"
#include "sim/workloads/workloads.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <string.h>

static bool in_place(ks_why_change_kind k) { return k == KS_WHY_REMOVE_GATES || k == KS_WHY_TOLERATE; }

/* The pod patch with every path moved from /spec under the template at
 * prefix; NULL when an op touches something other than the pod's spec. */
static char *template_patch(const char *patch, const char *prefix) {
    json_t *ops = json_loads(patch, 0, NULL);
    if (!json_is_array(ops)) {
        json_decref(ops);
        return NULL;
    }
    size_t i;
    json_t *o;
    bool ok = true;
    json_array_foreach(ops, i, o) {
        const char *keys[] = {"path", "from"};
        for (int k = 0; k < 2 && ok; k++) {
            const char *p = json_string_value(json_object_get(o, keys[k]));
            if (!p) continue;
            if (strncmp(p, "/spec/", 6) != 0) {
                ok = false;
                break;
            }
            char *moved = ks_xasprintf("%s%s", prefix, p + 5);
            json_object_set_new(o, keys[k], json_string(moved));
            free(moved);
        }
    }
    char *s = ok ? json_dumps(ops, JSON_COMPACT) : NULL;
    json_decref(ops);
    return s;
}

/* The workload's manifest takes the patch (the pod's own fields, such as
 * a DaemonSet's node pin, are not in the template). */
static bool template_takes(const ks_tree *tree, const char *patch) {
    ks_arena *a = ks_arena_new(4096);
    ks_tree *t = kt_copy(a, tree);
    char *err = NULL;
    bool ok = kt_patch_apply(a, t, patch, &err);
    free(err);
    ks_arena_free(a);
    return ok;
}

static const char *update_strategy(const ks_tree *tree) {
    const ks_tree *s = tree ? kt_get(tree, "spec") : NULL;
    const ks_tree *u = s ? kt_get(s, "updateStrategy") : NULL;
    const ks_tree *t = u ? kt_get(u, "type") : NULL;
    return t ? t->text : NULL;
}

/* Where a pod's change is made: the top workload that owns it. `tree` is
 * the manifest the patch is checked against (the workload's own, or the
 * object it made whose template is the same, a ReplicaSet for a Deployment
 * or a Job for a CronJob, with `checked_kind` its kind); NULL when neither
 * is in the cluster, and the patch goes unchecked. */
typedef struct target {
    ks_workload_kind kind, checked_kind;
    ks_id ns;
    const char *name;
    const ks_tree *tree;
} target;

static bool kind_named(ks_id name, ks_workload_kind *out) {
    for (int k = 0; k < KS_WORKLOAD_NKINDS; k++)
        if (k != KS_WORKLOAD_SERVICE && name == ks_intern(ks_workload_kind_name((ks_workload_kind)k))) {
            *out = (ks_workload_kind)k;
            return true;
        }
    return false;
}

/* A ReplicaSet named <deployment>-<pod-template-hash> with that hash on
 * its pods is a Deployment's (the Deployment controller names it so). */
static bool deployment_of(const ks_pod *p, const char *rs, char *out, size_t n) {
    ks_id hv;
    const char *h = ks_labels_get(&p->labels, ks_intern("pod-template-hash"), &hv) ? ks_str(hv) : NULL;
    size_t lr = strlen(rs), lh = h ? strlen(h) : 0;
    if (!h || lh == 0 || lr <= lh + 1 || strcmp(rs + lr - lh, h) || rs[lr - lh - 1] != '-' || lr - lh >= n) return false;
    memcpy(out, rs, lr - lh - 1);
    out[lr - lh - 1] = '\0';
    return true;
}

static bool find_target(const ks_cluster *cl, const ks_pod *p, target *t, char *buf, size_t n) {
    const ks_owner_ref *o = ks_pod_controller(p);
    const ks_workload *w = ks_workload_of_pod(cl, p);
    if (w) {
        *t = (target){w->kind, w->kind, w->ns, ks_str(w->name), w->tree};
        ks_workload_kind up;
        /* its own controller is not in the cluster: the change goes there */
        if (w->owner_kind && kind_named(w->owner_kind, &up) &&
            ((w->kind == KS_WORKLOAD_REPLICASET && up == KS_WORKLOAD_DEPLOYMENT) ||
             (w->kind == KS_WORKLOAD_JOB && up == KS_WORKLOAD_CRONJOB))) {
            t->kind = up;
            t->name = ks_str(w->owner_name);
        }
        return true;
    }
    if (!o || !o->name || !kind_named(o->kind, &t->kind)) return false;
    t->checked_kind = t->kind;
    t->ns = p->ns;
    t->name = o->name;
    t->tree = NULL;
    if (t->kind == KS_WORKLOAD_REPLICASET && deployment_of(p, o->name, buf, n)) {
        t->kind = KS_WORKLOAD_DEPLOYMENT;
        t->name = buf;
    }
    return true;
}

static const char *template_prefix(ks_workload_kind k) {
    return k == KS_WORKLOAD_CRONJOB ? "/spec/jobTemplate/spec/template/spec" : "/spec/template/spec";
}

/* A change made on the workload: its template patched; then the pod
 * deleted where the controller does not replace it by itself (a
 * ReplicaSet or ReplicationController never does; a StatefulSet's rolling
 * update waits for a pending pod forever; an OnDelete DaemonSet waits).
 * A Job's template is immutable (NULL: recreate the Job); a CronJob's
 * change takes effect from its next Job. */
static char *workload_command(const ks_why_change *c, const target *t) {
    bool delete_pod = false;
    switch (t->kind) {
    case KS_WORKLOAD_DEPLOYMENT:
    case KS_WORKLOAD_CRONJOB:
        break;
    case KS_WORKLOAD_DAEMONSET: {
        const char *u = update_strategy(t->tree);
        delete_pod = u && !strcmp(u, "OnDelete");
        break;
    }
    case KS_WORKLOAD_STATEFULSET:
    case KS_WORKLOAD_REPLICASET:
    case KS_WORKLOAD_RC:
        delete_pod = true;
        break;
    default:
        return NULL;
    }
    /* checked where the tree's template is; sent where the change goes
     * (they differ only for a CronJob checked on its Job) */
    const char *at = template_prefix(t->kind), *checked_at = template_prefix(t->checked_kind);
    char *patch = template_patch(c->patch, at);
    char *checked = strcmp(at, checked_at) ? template_patch(c->patch, checked_at) : NULL;
    bool ok = patch && (!t->tree || template_takes(t->tree, checked ? checked : patch));
    free(checked);
    if (!ok) {
        free(patch);
        return NULL;
    }
    ks_strbuf sb;
    ks_sb_init(&sb);
    ks_sb_printf(&sb, "kubectl patch %s %s -n %s --type=json -p '%s'", ks_workload_kind_lower(t->kind), t->name,
                 ks_str(t->ns), patch);
    if (delete_pod) ks_sb_printf(&sb, " && kubectl delete pod %s -n %s", c->name, c->ns);
    free(patch);
    return ks_sb_take(&sb);
}

char *why_pod_command(const ks_cluster *cl, const ks_why_change *c) {
    if (in_place(c->kind))
        return ks_xasprintf("kubectl patch pod %s -n %s --type=json -p '%s'", c->name, c->ns, c->patch);
    int i = why_find_pod(cl, why_pod_key(c->ns, c->name));
    const ks_pod *p = i >= 0 ? cl->pods.v[i] : NULL;
    if (p && ks_pod_controller(p)) {
        target t;
        char buf[256];
        return find_target(cl, p, &t, buf, sizeof(buf)) ? workload_command(c, &t) : NULL;
    }
    /* A pod of its own: replaced by the same pod with the change. */
    return ks_xasprintf("kubectl get pod %s -n %s -o json | kubectl patch --local -f - --type=json -p '%s' -o json"
                        " | kubectl replace --force -f -",
                        c->name, c->ns, c->patch);
}

static void set_commands(const ks_cluster *cl, ks_why_fix *f) {
    for (uint32_t i = 0; i < f->nchanges; i++) {
        ks_why_change *c = &f->changes[i];
        if (strcmp(c->object, "Pod") != 0 || !c->patch) continue;
        free(c->command);
        c->command = why_pod_command(cl, c);
    }
}

void why_set_commands(const ks_cluster *cl, ks_why_result *r) {
    for (uint32_t i = 0; i < r->npods; i++)
        for (uint32_t k = 0; k < r->pods[i].nfixes; k++) set_commands(cl, &r->pods[i].fixes[k]);
    for (uint32_t k = 0; k < r->ncluster_fixes; k++) set_commands(cl, &r->cluster_fixes[k]);
}
