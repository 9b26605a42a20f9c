/* Coscheduling: gang scheduling with PodGroups, behaving like the
 * Coscheduling plugin of kubernetes-sigs/scheduler-plugins.
 *
 * A PodGroup (scheduling.x-k8s.io/v1alpha1) names a gang:
 *
 *     apiVersion: scheduling.x-k8s.io/v1alpha1
 *     kind: PodGroup
 *     metadata: {name: train, namespace: default}
 *     spec:
 *       minMember: 3                # bind none until 3 can be placed
 *       minResources: {cpu: "6"}    # optional: cluster-wide pre-check
 *       scheduleTimeoutSeconds: 10  # optional: how long members wait
 *
 * and pods join it with the label scheduling.x-k8s.io/pod-group: train.
 *
 * How the extension points cooperate:
 *   QueueSort  priority, then the group's creation time, then the group,
 *              then the pod: members of a gang leave the queue together.
 *   PreFilter  refuse early a member whose group has fewer than minMember
 *              pods, gated pods that keep it below minMember, or a cluster
 *              without minResources free (checked once per timeout).
 *   Permit     a member that fits waits; the one that completes the quorum
 *              allows all the waiting members at once.
 *   PostFilter a member that fits nowhere rejects the waiting members: the
 *              gang is all or nothing.
 *   Unreserve  a member that is rejected or times out rejects the others;
 *              the framework then releases what they had reserved.
 *
 * Enable it as scheduler-plugins documents:
 *
 *     plugins:
 *       multiPoint:
 *         enabled:  [{name: Coscheduling}]
 *         disabled: [{name: PrioritySort}]
 *
 * Args (CoschedulingArgs): permitWaitingTimeSeconds (60),
 * podGroupBackoffSeconds (0), podGroupRejectPercentage (10).
 *
 * Differences from scheduler-plugins, both deliberate: when two groups have
 * the same creation time QueueSort orders by group name before pod name,
 * so gangs never interleave; and pods bound before the scheduler started
 * are counted from the pod list rather than from informer add events (the
 * same count).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <ksched/ksched.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "Coscheduling"
#define POD_GROUP_LABEL "scheduling.x-k8s.io/pod-group"
#define DEFAULT_WAIT_SECONDS 60
#define NS_PER_SEC 1000000000LL
#define MAX_MIN_RESOURCES 32

/* What the plugin remembers about a group between cycles (upstream keeps
 * the same in PodGroupManager's caches). */
typedef struct group {
    char *key;               /* "namespace/name" */
    char **assigned;         /* pods that passed Permit and are not unreserved */
    size_t nassigned, cap;
    int64_t last_failed_ns;  /* 0: no recent failure */
    int64_t permitted_until; /* minResources already checked until then */
    int64_t backoff_until;   /* PreFilter refuses the group until then */
    struct group *next;
} group;

#define NBUCKETS 256

typedef struct cosched {
    ks_handle *h;
    int64_t permit_wait_s;
    int64_t backoff_s;
    int64_t reject_pct;
    pthread_mutex_t lock; /* guards the groups: Less, Permit and Unreserve
                             may run on different threads */
    group *buckets[NBUCKETS];
} cosched;

/* The PodGroup as the plugin needs it. */
typedef struct pod_group {
    bool found;
    int64_t min_member;
    bool has_timeout;
    int64_t timeout_s;
    int64_t creation_s;
    const ks_args *min_resources; /* map of resource name -> quantity; NULL */
} pod_group;

static char *xstrdup(const char *s) {
    char *d = strdup(s);
    if (!d) abort();
    return d;
}

static char *fmt_alloc(const char *fmt, ...) KS_PRINTF(1, 2);
static char *fmt_alloc(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (!s) abort();
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- the group table ---- */

static unsigned hash_str(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Caller holds the lock. */
static group *group_get(cosched *c, const char *key, bool create) {
    unsigned b = hash_str(key) % NBUCKETS;
    for (group *g = c->buckets[b]; g; g = g->next)
        if (strcmp(g->key, key) == 0) return g;
    if (!create) return NULL;
    group *g = calloc(1, sizeof(*g));
    if (!g) abort();
    g->key = xstrdup(key);
    g->next = c->buckets[b];
    c->buckets[b] = g;
    return g;
}

static bool assigned_has(const group *g, const char *pod) {
    for (size_t i = 0; i < g->nassigned; i++)
        if (strcmp(g->assigned[i], pod) == 0) return true;
    return false;
}

static void assigned_add(group *g, const char *pod) {
    if (assigned_has(g, pod)) return;
    if (g->nassigned == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 8;
        g->assigned = realloc(g->assigned, g->cap * sizeof(*g->assigned));
        if (!g->assigned) abort();
    }
    g->assigned[g->nassigned++] = xstrdup(pod);
}

static void assigned_del(group *g, const char *pod) {
    for (size_t i = 0; i < g->nassigned; i++) {
        if (strcmp(g->assigned[i], pod) == 0) {
            free(g->assigned[i]);
            g->assigned[i] = g->assigned[--g->nassigned];
            return;
        }
    }
}

/* ---- pods and groups ---- */

/* The group name of a pod, NULL when it is in none. */
static const char *group_name(const ks_pod *p) {
    const char *v = ks_pod_label(p, POD_GROUP_LABEL);
    return v && *v ? v : NULL;
}

/* "namespace/group" into buf; false when the pod is in no group. */
static bool group_key(const ks_pod *p, char *buf, size_t n) {
    const char *g = group_name(p);
    if (!g) return false;
    snprintf(buf, n, "%s/%s", ks_pod_namespace(p), g);
    return true;
}

static bool same_group(const ks_pod *a, const char *ns, const char *name) {
    const char *g = group_name(a);
    return g && strcmp(g, name) == 0 && strcmp(ks_pod_namespace(a), ns) == 0;
}

static pod_group get_pod_group(cosched *c, const ks_pod *p) {
    pod_group pg = {0};
    const char *name = group_name(p);
    if (!name) return pg;
    const ks_args *o = ks_handle_get_object(c->h, "PodGroup", ks_pod_namespace(p), name);
    if (!o) return pg;
    const ks_args *spec = ks_args_get(o, "spec");
    pg.found = true;
    if (!ks_args_int(ks_args_get(spec, "minMember"), &pg.min_member)) pg.min_member = 0;
    pg.has_timeout = ks_args_int(ks_args_get(spec, "scheduleTimeoutSeconds"), &pg.timeout_s);
    const ks_args *mr = ks_args_get(spec, "minResources");
    pg.min_resources = ks_args_is_map(mr) ? mr : NULL;
    ks_args_time(ks_args_get(ks_args_get(o, "metadata"), "creationTimestamp"), &pg.creation_s);
    return pg;
}

/* Every pod of the group the scheduler knows; malloc'd array, *n set. */
static const ks_pod **group_pods(cosched *c, const ks_pod *p, size_t *n) {
    const char *ns = ks_pod_namespace(p), *name = group_name(p);
    size_t cap = 64;
    const ks_pod **pods = NULL;
    for (;;) {
        pods = realloc(pods, cap * sizeof(*pods));
        if (!pods) abort();
        size_t total = ks_handle_list_pods(c->h, ns, POD_GROUP_LABEL, name, pods, cap);
        if (total <= cap) {
            *n = total;
            return pods;
        }
        cap = total;
    }
}

/* Members that count toward the quorum among the group's pods: bound
 * ones, plus those that passed Permit in this scheduler (assumed or
 * waiting). Caller holds the lock. */
static size_t assigned_count(const group *g, const ks_pod *const *pods, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (*ks_pod_node_name(pods[i]) || (g && assigned_has(g, ks_pod_name(pods[i])))) count++;
    }
    return count;
}

/* Reject (or allow) every waiting member of a group. The waiting list is
 * copied first: rejecting may run Unreserve, which comes back here. */
static void for_waiting_members(cosched *c, const char *ns, const char *name, bool allow,
                                const char *msg) {
    size_t total = ks_handle_waiting_pods(c->h, NULL, 0);
    if (!total) return;
    ks_waiting_pod **w = malloc(total * sizeof(*w));
    if (!w) abort();
    size_t n = ks_handle_waiting_pods(c->h, w, total);
    if (n > total) n = total;
    /* Take the uids before acting: the list may change under us. */
    char **uids = calloc(n, sizeof(*uids));
    if (!uids) abort();
    for (size_t i = 0; i < n; i++) {
        const ks_pod *wp = ks_waiting_pod_pod(w[i]);
        if (same_group(wp, ns, name)) uids[i] = xstrdup(ks_pod_uid(wp));
    }
    free(w);
    for (size_t i = 0; i < n; i++) {
        if (!uids[i]) continue;
        ks_waiting_pod *wp = ks_handle_get_waiting_pod(c->h, uids[i]);
        if (wp) {
            KS_LOG_INFO(3, "%s %s pod %s/%s of podGroup %s/%s", NAME, allow ? "allows" : "rejects",
                        ns, ks_pod_name(ks_waiting_pod_pod(wp)), ns, name);
            if (allow) ks_waiting_pod_allow(wp, NAME);
            else ks_waiting_pod_reject(wp, NAME, msg);
        }
        free(uids[i]);
    }
    free(uids);
}

/* ---- args ---- */

static void *cs_create(const ks_args *args, ks_handle *h, char **err) {
    int64_t wait = DEFAULT_WAIT_SECONDS, backoff = 0, pct = 10;
    for (size_t i = 0; ks_args_is_map(args) && i < ks_args_len(args); i++) {
        const char *k = ks_args_key(args, i);
        const ks_args *v = ks_args_item(args, i);
        int64_t *dst = NULL;
        if (strcmp(k, "permitWaitingTimeSeconds") == 0) dst = &wait;
        else if (strcmp(k, "podGroupBackoffSeconds") == 0) dst = &backoff;
        else if (strcmp(k, "podGroupRejectPercentage") == 0) dst = &pct;
        else if (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0) continue;
        else {
            *err = fmt_alloc("unknown field \"%s\"", k);
            return NULL;
        }
        if (!ks_args_int(v, dst)) {
            *err = fmt_alloc("%s: must be an integer", k);
            return NULL;
        }
    }
    if (wait < 0) {
        *err = fmt_alloc("permitWaitingTimeSeconds: must be greater than or equal to 0");
        return NULL;
    }
    if (backoff < 0) {
        *err = fmt_alloc("podGroupBackoffSeconds: must be greater than or equal to 0");
        return NULL;
    }
    if (pct < 0 || pct > 100) {
        *err = fmt_alloc("podGroupRejectPercentage: must be between 0 and 100");
        return NULL;
    }
    cosched *c = calloc(1, sizeof(*c));
    if (!c) abort();
    c->h = h;
    c->permit_wait_s = wait;
    c->backoff_s = backoff;
    c->reject_pct = pct;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void cs_destroy(void *self) {
    cosched *c = self;
    for (int b = 0; b < NBUCKETS; b++) {
        for (group *g = c->buckets[b], *next; g; g = next) {
            next = g->next;
            for (size_t i = 0; i < g->nassigned; i++) free(g->assigned[i]);
            free(g->assigned);
            free(g->key);
            free(g);
        }
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static size_t cs_events(void *self, ks_cluster_event *out, size_t max) {
    (void)self;
    const ks_cluster_event ev[] = {
        {KS_EV_POD, KS_ACT_ADD},
        {KS_EV_POD_GROUP, KS_ACT_ADD | KS_ACT_UPDATE},
    };
    size_t n = sizeof(ev) / sizeof(ev[0]);
    if (n > max) n = max;
    memcpy(out, ev, n * sizeof(*ev));
    return n;
}

/* ---- QueueSort ---- */

/* The time a pod sorts by: its group's last failure (so a failing gang
 * does not block the queue head), else the group's creation, else the
 * pod's first attempt. */
static int64_t sort_time(cosched *c, const ks_queued_pod *q) {
    const ks_pod *p = ks_queued_pod_pod(q);
    int64_t ts = ks_queued_pod_initial_attempt_ns(q);
    char key[512];
    if (!group_key(p, key, sizeof(key))) return ts;
    pthread_mutex_lock(&c->lock);
    const group *g = group_get(c, key, false);
    int64_t failed = g ? g->last_failed_ns : 0;
    pthread_mutex_unlock(&c->lock);
    if (failed) return failed;
    pod_group pg = get_pod_group(c, p);
    return pg.found ? pg.creation_s * NS_PER_SEC : ts;
}

static int cmp_keys(const ks_pod *a, const ks_pod *b) {
    int r = strcmp(ks_pod_namespace(a), ks_pod_namespace(b));
    return r ? r : strcmp(ks_pod_name(a), ks_pod_name(b));
}

static bool cs_less(void *self, const ks_queued_pod *qa, const ks_queued_pod *qb) {
    cosched *c = self;
    const ks_pod *a = ks_queued_pod_pod(qa), *b = ks_queued_pod_pod(qb);
    int32_t pa = ks_pod_get_priority(a), pb = ks_pod_get_priority(b);
    if (pa != pb) return pa > pb;
    int64_t ta = sort_time(c, qa), tb = sort_time(c, qb);
    if (ta != tb) return ta < tb;
    /* Same time: keep each gang together, then order by pod. */
    char ka[512], kb[512];
    if (!group_key(a, ka, sizeof(ka))) snprintf(ka, sizeof(ka), "%s/%s", ks_pod_namespace(a), ks_pod_name(a));
    if (!group_key(b, kb, sizeof(kb))) snprintf(kb, sizeof(kb), "%s/%s", ks_pod_namespace(b), ks_pod_name(b));
    int r = strcmp(ka, kb);
    if (r) return r < 0;
    return cmp_keys(a, b) < 0;
}

/* ---- PreFilter ---- */

/* What is left of a resource on a node once the group's own pods are taken
 * off it (they count toward the gang, not against it). */
static int64_t left_on_node(const ks_node_info *ni, const char *res, const char *ns,
                            const char *name) {
    bool pods = strcmp(res, "pods") == 0;
    int64_t alloc = ks_node_info_allocatable(ni, res);
    int64_t used = ks_node_info_requested(ni, res);
    for (size_t i = 0; i < ks_node_info_npods(ni); i++) {
        const ks_pod *p = ks_node_info_pod(ni, i);
        if (same_group(p, ns, name)) used -= pods ? 1 : ks_pod_request(p, res);
    }
    return alloc - used;
}

/* Upstream CheckClusterResource: walk the nodes subtracting what each has
 * left from the gang's minimum (minResources plus minMember pods) until
 * nothing is missing. Returns NULL or a malloc'd description of the gap. */
static char *check_cluster_resources(const pod_group *pg, const char *ns, const char *name,
                                     const ks_node_info *const *nodes, size_t nnodes) {
    const char *res[MAX_MIN_RESOURCES + 1];
    int64_t need[MAX_MIN_RESOURCES + 1];
    size_t nres = 0;
    for (size_t i = 0; i < ks_args_len(pg->min_resources) && nres < MAX_MIN_RESOURCES; i++) {
        const char *r = ks_args_key(pg->min_resources, i);
        if (strcmp(r, "pods") == 0) continue; /* replaced by minMember */
        int64_t v;
        if (!ks_args_quantity(ks_args_item(pg->min_resources, i), r, &v)) continue;
        res[nres] = r;
        need[nres++] = v;
    }
    res[nres] = "pods";
    need[nres++] = pg->min_member;

    for (size_t i = 0; i < nnodes; i++) {
        if (!ks_node_info_node(nodes[i])) continue;
        bool done = true;
        for (size_t r = 0; r < nres; r++) {
            if (need[r] <= 0) continue;
            need[r] -= left_on_node(nodes[i], res[r], ns, name);
            if (need[r] > 0) done = false;
        }
        if (done) return NULL;
    }
    char buf[1024];
    size_t off = (size_t)snprintf(buf, sizeof(buf), "resource gap:");
    for (size_t r = 0; r < nres && off < sizeof(buf); r++) {
        if (need[r] <= 0) continue;
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, " %s=%" PRId64 "%s", res[r], need[r],
                                strcmp(res[r], "cpu") == 0 ? "m" : "");
    }
    return xstrdup(buf);
}

static ks_status *cs_pre_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                const ks_node_info *const *nodes, size_t nnodes,
                                ks_pre_filter_result **result) {
    (void)st, (void)result;
    cosched *c = self;
    char key[512];
    if (!group_key(pod, key, sizeof(key))) return NULL;
    pod_group pg = get_pod_group(c, pod);
    if (!pg.found) return NULL;
    const char *ns = ks_pod_namespace(pod), *name = group_name(pod);
    int64_t now = ks_handle_now_ns(c->h);

    pthread_mutex_lock(&c->lock);
    group *g = group_get(c, key, false);
    bool backed_off = g && g->backoff_until > now;
    bool permitted = g && g->permitted_until > now;
    pthread_mutex_unlock(&c->lock);
    /* UnschedulableAndUnresolvable: preemption cannot help a gang. */
    if (backed_off)
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "podGroup %s failed recently", key);

    size_t n;
    const ks_pod **pods = group_pods(c, pod, &n);
    int64_t gap = pg.min_member - (int64_t)n;
    if (gap > 0) {
        free(pods);
        return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "pre-filter pod %s cannot find enough sibling pods, current pods "
                             "number: %zu, minMember of group: %" PRId64,
                             ks_pod_name(pod), n, pg.min_member);
    }
    /* Gated pods cannot be scheduled yet: too many of them and the quorum
     * is out of reach. */
    for (size_t i = 0; i < n; i++) {
        if (ks_pod_nscheduling_gates(pods[i]) > 0) gap++;
        if (gap > 0) {
            free(pods);
            return ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "pre-filter pod %s cannot proceed due to gated pods in the same "
                                 "PodGroup",
                                 ks_pod_name(pod));
        }
    }
    free(pods);

    if (!pg.min_resources || permitted) return NULL;
    char *gap_msg = check_cluster_resources(&pg, ns, name, nodes, nnodes);
    if (gap_msg) {
        ks_status *s = ks_status_new(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", gap_msg);
        free(gap_msg);
        return s;
    }
    pthread_mutex_lock(&c->lock);
    group_get(c, key, true)->permitted_until = now + c->permit_wait_s * NS_PER_SEC;
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* ---- PostFilter ---- */

static void mark_failed(cosched *c, const char *key, int64_t now) {
    pthread_mutex_lock(&c->lock);
    group *g = group_get(c, key, true);
    g->permitted_until = 0;
    g->last_failed_ns = now;
    pthread_mutex_unlock(&c->lock);
}

static ks_status *cs_post_filter(void *self, ks_cycle_state *st, const ks_pod *pod,
                                 const ks_node_status_map *statuses, ks_post_filter_result *result) {
    (void)st, (void)statuses, (void)result;
    cosched *c = self;
    char key[512];
    pod_group pg = get_pod_group(c, pod);
    if (!pg.found || !group_key(pod, key, sizeof(key)))
        return ks_status_new(KS_UNSCHEDULABLE, "can not find pod group");
    const char *ns = ks_pod_namespace(pod), *name = group_name(pod);

    /* Never call into the framework with the lock held: the queue calls
     * Less (which takes it) under its own lock. */
    size_t n;
    const ks_pod **pods = group_pods(c, pod, &n);
    pthread_mutex_lock(&c->lock);
    size_t assigned = assigned_count(group_get(c, key, false), pods, n);
    pthread_mutex_unlock(&c->lock);
    /* Enough members are placed already: this one failing does not sink
     * the gang. */
    if ((int64_t)assigned >= pg.min_member ||
        /* Only a few members missing: let the next ones try first. */
        (pg.min_member > 0 &&
         (pg.min_member - (int64_t)assigned) * 100 <= c->reject_pct * pg.min_member)) {
        free(pods);
        return ks_status_new(KS_UNSCHEDULABLE, NULL);
    }

    /* One member does not fit, so the others most likely will not either. */
    for_waiting_members(c, ns, name, false, "optimistic rejection in PostFilter");

    int64_t now = ks_handle_now_ns(c->h);
    if (c->backoff_s > 0) {
        if ((int64_t)n >= pg.min_member) {
            pthread_mutex_lock(&c->lock);
            group_get(c, key, true)->backoff_until = now + c->backoff_s * NS_PER_SEC;
            pthread_mutex_unlock(&c->lock);
        }
    }
    free(pods);
    mark_failed(c, key, now);
    return ks_status_new(KS_UNSCHEDULABLE,
                         "PodGroup %s gets rejected due to Pod %s is unschedulable even after "
                         "PostFilter",
                         key, ks_pod_name(pod));
}

/* ---- Reserve / Permit ---- */

static ks_status *cs_reserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)self, (void)st, (void)pod, (void)node;
    return NULL; /* nothing to reserve; being a Reserve plugin gets us Unreserve */
}

/* The first member to wait brings its siblings to the active queue, so the
 * rest of the gang is tried while it waits. */
static void activate_siblings(cosched *c, const ks_pod *pod) {
    size_t n;
    const ks_pod **pods = group_pods(c, pod, &n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(ks_pod_uid(pods[i]), ks_pod_uid(pod)) == 0 || *ks_pod_node_name(pods[i])) continue;
        ks_handle_activate_pod(c->h, pods[i]);
    }
    free(pods);
}

static ks_status *cs_permit(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node,
                            int64_t *timeout_ms) {
    (void)st;
    cosched *c = self;
    char key[512];
    if (!group_key(pod, key, sizeof(key))) return NULL;
    pod_group pg = get_pod_group(c, pod);
    if (!pg.found) return ks_status_new(KS_UNSCHEDULABLE, "PodGroup not found");

    size_t n;
    const ks_pod **pods = group_pods(c, pod, &n);
    pthread_mutex_lock(&c->lock);
    group *g = group_get(c, key, true);
    assigned_add(g, ks_pod_name(pod));
    size_t assigned = assigned_count(g, pods, n);
    free(pods);
    if ((int64_t)assigned >= pg.min_member) {
        g->last_failed_ns = 0;
        pthread_mutex_unlock(&c->lock);
        for_waiting_members(c, ks_pod_namespace(pod), group_name(pod), true, NULL);
        KS_LOG_INFO(3, "%s allows pod %s/%s", NAME, ks_pod_namespace(pod), ks_pod_name(pod));
        return NULL;
    }
    pthread_mutex_unlock(&c->lock);

    KS_LOG_INFO(2, "Pod %s/%s is waiting to be scheduled to node %s", ks_pod_namespace(pod),
                ks_pod_name(pod), node);
    int64_t wait_s = DEFAULT_WAIT_SECONDS;
    if (pg.has_timeout) wait_s = pg.timeout_s;
    else if (c->permit_wait_s) wait_s = c->permit_wait_s;
    *timeout_ms = wait_s * 1000;
    if (assigned == 1) activate_siblings(c, pod);
    return ks_status_new(KS_WAIT, NULL);
}

/* ---- Unreserve ---- */

static void cs_unreserve(void *self, ks_cycle_state *st, const ks_pod *pod, const char *node) {
    (void)st, (void)node;
    cosched *c = self;
    char key[512];
    if (!group_key(pod, key, sizeof(key))) return;
    pod_group pg = get_pod_group(c, pod);
    if (!pg.found) return;
    pthread_mutex_lock(&c->lock);
    group *g = group_get(c, key, false);
    if (g) assigned_del(g, ks_pod_name(pod));
    pthread_mutex_unlock(&c->lock);
    for_waiting_members(c, ks_pod_namespace(pod), group_name(pod), false, "rejection in Unreserve");
    mark_failed(c, key, ks_handle_now_ns(c->h));
}

static const ks_plugin_ops coscheduling = {
    .abi_version = KS_ABI_VERSION,
    .name = NAME,
    .create = cs_create,
    .destroy = cs_destroy,
    .events_to_register = cs_events,
    .less = cs_less,
    .pre_filter = cs_pre_filter,
    .post_filter = cs_post_filter,
    .reserve = cs_reserve,
    .unreserve = cs_unreserve,
    .permit = cs_permit,
};

KS_PLUGIN_EXPORT int ks_plugin_init(ks_registry *reg) {
    return ks_registry_add(reg, &coscheduling, NULL) ? 0 : 1;
}
