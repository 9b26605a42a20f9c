#include "backend/cache.h"
#include "api/node.h"
#include "api/pod.h"
#include "framework/status.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* NodeInfos in a list ordered by last change, most recent first: a
 * snapshot update walks from the head and stops at the first NodeInfo it
 * already has (generation not newer than the snapshot's). */
typedef struct cache_node {
    ks_node_info *info;
    struct cache_node *prev, *next;
} cache_node;

typedef struct pod_state {
    ks_pod *pod;
    bool assumed;
    bool binding_finished;
    bool has_deadline;
    int64_t deadline;
} pod_state;

/* Node tree: nodes grouped by zone, zones in order of first appearance;
 * listing takes one node of each zone in turn so that consecutive nodes
 * are spread over zones (upstream nodeTree). */
typedef struct zone {
    ks_id region, name;
    ks_id *nodes;
    uint32_t n, cap;
} zone;

/* ImageStateSummary: the size first reported for an image name, and the
 * set of nodes reporting it. */
typedef struct image_state {
    int64_t size;
    ks_map nodes; /* node id + 1 -> (void*)1 */
} image_state;

struct ks_cache {
    pthread_mutex_t mu;
    ks_clock *clock;
    int64_t ttl;
    ks_map nodes; /* node id + 1 -> cache_node* */
    cache_node *head;
    ks_map pods;  /* pod key + 1 -> pod_state* */
    size_t nassumed;
    zone *zones;
    uint32_t nzones, zones_cap;
    uint32_t tree_nodes;
    ks_map images; /* image name id + 1 -> image_state* */
};

ks_cache *ks_cache_new(ks_clock *clock, int64_t assumed_ttl_ns) {
    ks_cache *c = ks_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    c->clock = clock ? clock : ks_clock_real();
    c->ttl = assumed_ttl_ns;
    return c;
}

void ks_cache_free(ks_cache *c) {
    if (!c) return;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&c->nodes, &it, &k, &v);) {
        cache_node *n = v;
        ks_node_info_free(n->info);
        free(n);
    }
    ks_map_free(&c->nodes);
    for (size_t it = 0; ks_map_next(&c->pods, &it, &k, &v);) {
        pod_state *ps = v;
        ks_pod_unref(ps->pod);
        free(ps);
    }
    ks_map_free(&c->pods);
    for (uint32_t i = 0; i < c->nzones; i++) free(c->zones[i].nodes);
    free(c->zones);
    for (size_t it = 0; ks_map_next(&c->images, &it, &k, &v);) {
        image_state *is = v;
        ks_map_free(&is->nodes);
        free(is);
    }
    ks_map_free(&c->images);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---- node list --------------------------------------------------------- */

static cache_node *get_node(ks_cache *c, ks_id name) {
    return ks_map_get(&c->nodes, (uint64_t)name + 1);
}

static cache_node *get_or_add_node(ks_cache *c, ks_id name) {
    cache_node *n = get_node(c, name);
    if (!n) {
        n = ks_xcalloc(1, sizeof(*n));
        n->info = ks_node_info_new();
        n->info->name = name;
        ks_map_put(&c->nodes, (uint64_t)name + 1, n);
    }
    return n;
}

static void unlink_node(ks_cache *c, cache_node *n) {
    if (n->prev) n->prev->next = n->next;
    if (n->next) n->next->prev = n->prev;
    if (c->head == n) c->head = n->next;
    n->prev = n->next = NULL;
}

static void move_to_head(ks_cache *c, cache_node *n) {
    if (c->head == n) return;
    unlink_node(c, n);
    n->next = c->head;
    if (c->head) c->head->prev = n;
    c->head = n;
}

static void drop_node(ks_cache *c, ks_id name) {
    cache_node *n = get_node(c, name);
    if (!n) return;
    unlink_node(c, n);
    ks_map_del(&c->nodes, (uint64_t)name + 1);
    ks_node_info_free(n->info);
    free(n);
}

/* ---- node tree --------------------------------------------------------- */

static ks_id zone_labels[4]; /* beta zone, zone, beta region, region */
static pthread_once_t zone_labels_once = PTHREAD_ONCE_INIT;

static void zone_labels_init(void) {
    zone_labels[0] = ks_intern("failure-domain.beta.kubernetes.io/zone");
    zone_labels[1] = ks_intern("topology.kubernetes.io/zone");
    zone_labels[2] = ks_intern("failure-domain.beta.kubernetes.io/region");
    zone_labels[3] = ks_intern("topology.kubernetes.io/region");
}

/* upstream GetZoneKey: the beta labels win over the GA ones; a missing
 * label reads as "". */
static void zone_key(const ks_node *node, ks_id *region, ks_id *zname) {
    pthread_once(&zone_labels_once, zone_labels_init);
    ks_id z = 0, r = 0;
    if (!ks_labels_get(&node->labels, zone_labels[0], &z)) ks_labels_get(&node->labels, zone_labels[1], &z);
    if (!ks_labels_get(&node->labels, zone_labels[2], &r)) ks_labels_get(&node->labels, zone_labels[3], &r);
    *zname = z;
    *region = r;
}

static void tree_add(ks_cache *c, const ks_node *node) {
    ks_id r, z;
    zone_key(node, &r, &z);
    zone *zn = NULL;
    for (uint32_t i = 0; i < c->nzones && !zn; i++)
        if (c->zones[i].region == r && c->zones[i].name == z) zn = &c->zones[i];
    if (zn) {
        for (uint32_t i = 0; i < zn->n; i++)
            if (zn->nodes[i] == node->name) return;
    } else {
        KS_GROW(c->zones, c->zones_cap, c->nzones + 1);
        zn = &c->zones[c->nzones++];
        memset(zn, 0, sizeof(*zn));
        zn->region = r;
        zn->name = z;
    }
    KS_GROW(zn->nodes, zn->cap, zn->n + 1);
    zn->nodes[zn->n++] = node->name;
    c->tree_nodes++;
    /* upstream's zone key: "" without labels, else region ":\x00:" zone
     * (printed escaped) */
    if (r || z)
        ks_infof(2, "\"Added node to NodeTree\" node=\"%s\" zone=\"%s:\\x00:%s\"", ks_str(node->name),
                 r ? ks_str(r) : "", z ? ks_str(z) : "");
    else
        ks_infof(2, "\"Added node to NodeTree\" node=\"%s\" zone=\"\"", ks_str(node->name));
}

static bool tree_remove(ks_cache *c, const ks_node *node) {
    ks_id r, z;
    zone_key(node, &r, &z);
    for (uint32_t i = 0; i < c->nzones; i++) {
        zone *zn = &c->zones[i];
        if (zn->region != r || zn->name != z) continue;
        for (uint32_t j = 0; j < zn->n; j++) {
            if (zn->nodes[j] != node->name) continue;
            memmove(&zn->nodes[j], &zn->nodes[j + 1], (zn->n - j - 1) * sizeof(ks_id));
            zn->n--;
            if (zn->n == 0) {
                free(zn->nodes);
                memmove(&c->zones[i], &c->zones[i + 1], (c->nzones - i - 1) * sizeof(zone));
                c->nzones--;
            }
            c->tree_nodes--;
            return true;
        }
    }
    return false;
}

static void tree_update(ks_cache *c, const ks_node *old_node, const ks_node *new_node) {
    ks_id r1 = 0, z1 = 0, r2, z2;
    if (old_node) zone_key(old_node, &r1, &z1);
    zone_key(new_node, &r2, &z2);
    if (old_node && r1 == r2 && z1 == z2) return;
    if (old_node) tree_remove(c, old_node);
    tree_add(c, new_node);
}

/* Zones interleaved: the i-th node of every zone, for i = 0, 1, ... */
static size_t tree_list(const ks_cache *c, ks_id *out) {
    size_t n = 0;
    for (uint32_t idx = 0; n < c->tree_nodes; idx++) {
        bool any = false;
        for (uint32_t z = 0; z < c->nzones; z++) {
            if (idx < c->zones[z].n) {
                out[n++] = c->zones[z].nodes[idx];
                any = true;
            }
        }
        if (!any) break;
    }
    return n;
}

/* ---- image states ------------------------------------------------------ */

static void add_images(ks_cache *c, const ks_node *node) {
    for (uint32_t i = 0; i < node->nimages; i++) {
        const ks_node_image *img = &node->images[i];
        for (uint32_t j = 0; j < img->nnames; j++) {
            image_state *is = ks_map_get(&c->images, (uint64_t)img->names[j] + 1);
            if (!is) {
                is = ks_xcalloc(1, sizeof(*is));
                is->size = img->size_bytes;
                ks_map_put(&c->images, (uint64_t)img->names[j] + 1, is);
            }
            ks_map_put(&is->nodes, (uint64_t)node->name + 1, (void *)1);
        }
    }
}

static void remove_images(ks_cache *c, const ks_node *node) {
    if (!node) return;
    for (uint32_t i = 0; i < node->nimages; i++) {
        const ks_node_image *img = &node->images[i];
        for (uint32_t j = 0; j < img->nnames; j++) {
            image_state *is = ks_map_get(&c->images, (uint64_t)img->names[j] + 1);
            if (!is) continue;
            ks_map_del(&is->nodes, (uint64_t)node->name + 1);
            if (is->nodes.len == 0) {
                ks_map_del(&c->images, (uint64_t)img->names[j] + 1);
                ks_map_free(&is->nodes);
                free(is);
            }
        }
    }
}

static int cmp_image(const void *a, const void *b) {
    ks_id x = ((const ks_image_state *)a)->name, y = ((const ks_image_state *)b)->name;
    return x < y ? -1 : x > y;
}

/* The node's image summaries as of now (upstream fills NumNodes when it
 * copies a NodeInfo into the snapshot, so unchanged NodeInfos keep the
 * counts of their last copy). */
static void fill_images(const ks_cache *c, ks_node_info *dst) {
    const ks_node *node = dst->node;
    uint32_t total = 0;
    for (uint32_t i = 0; node && i < node->nimages; i++) total += node->images[i].nnames;
    dst->images = ks_xrealloc(dst->images, (total ? total : 1) * sizeof(*dst->images));
    uint32_t n = 0;
    for (uint32_t i = 0; node && i < node->nimages; i++) {
        for (uint32_t j = 0; j < node->images[i].nnames; j++) {
            ks_id name = node->images[i].names[j];
            image_state *is = ks_map_get(&c->images, (uint64_t)name + 1);
            if (!is) continue;
            dst->images[n++] = (ks_image_state){.name = name, .size = is->size,
                                                .num_nodes = (uint32_t)is->nodes.len};
        }
    }
    qsort(dst->images, n, sizeof(*dst->images), cmp_image);
    uint32_t u = 0; /* one entry per name */
    for (uint32_t i = 0; i < n; i++)
        if (u == 0 || dst->images[u - 1].name != dst->images[i].name) dst->images[u++] = dst->images[i];
    dst->nimages = u;
}

/* ---- nodes ------------------------------------------------------------- */

void ks_cache_add_node(ks_cache *c, ks_node *node) {
    pthread_mutex_lock(&c->mu);
    cache_node *n = get_node(c, node->name);
    if (n) remove_images(c, n->info->node);
    else n = get_or_add_node(c, node->name);
    move_to_head(c, n);
    tree_add(c, node);
    add_images(c, node);
    ks_node_info_set_node(n->info, node);
    pthread_mutex_unlock(&c->mu);
}

void ks_cache_update_node(ks_cache *c, ks_node *old_node, ks_node *new_node) {
    pthread_mutex_lock(&c->mu);
    cache_node *n = get_node(c, new_node->name);
    if (!n) {
        n = get_or_add_node(c, new_node->name);
        tree_add(c, new_node);
    } else {
        remove_images(c, n->info->node);
    }
    move_to_head(c, n);
    tree_update(c, old_node, new_node);
    add_images(c, new_node);
    ks_node_info_set_node(n->info, new_node);
    pthread_mutex_unlock(&c->mu);
}

ks_status *ks_cache_remove_node(ks_cache *c, const ks_node *node) {
    pthread_mutex_lock(&c->mu);
    cache_node *n = get_node(c, node->name);
    if (!n) {
        pthread_mutex_unlock(&c->mu);
        return ks_status_new(KS_ERROR, "node %s is not found", ks_str(node->name));
    }
    /* Pods may still point at the node: keep their NodeInfo (without a
     * node, so the snapshot leaves it out) until they go. */
    ks_node_info_set_node(n->info, NULL);
    if (n->info->npods == 0) drop_node(c, node->name);
    else move_to_head(c, n);
    bool found = tree_remove(c, node);
    remove_images(c, node);
    pthread_mutex_unlock(&c->mu);
    if (!found) return ks_status_new(KS_ERROR, "node %s was not found in the node tree", ks_str(node->name));
    return NULL;
}

/* ---- pods --------------------------------------------------------------- */

static const char *pod_ref(const ks_pod *p, char *buf, int n) { return ks_pod_fullname(p, buf, n); }

static pod_state *get_state(ks_cache *c, uint64_t key) { return ks_map_get(&c->pods, key + 1); }

static void add_pod_locked(ks_cache *c, ks_pod *pod, bool assumed) {
    cache_node *n = get_or_add_node(c, pod->node_name);
    ks_node_info_add_pod(n->info, pod);
    move_to_head(c, n);
    pod_state *ps = ks_xcalloc(1, sizeof(*ps));
    ps->pod = ks_pod_ref(pod);
    ps->assumed = assumed;
    if (assumed) c->nassumed++;
    ks_map_put(&c->pods, pod->key + 1, ps);
}

static ks_status *remove_pod_locked(ks_cache *c, const ks_pod *pod) {
    char buf[512];
    cache_node *n = get_node(c, pod->node_name);
    if (!n) {
        ks_errorf("node %s not found when trying to remove pod %s", ks_str(pod->node_name),
                  pod_ref(pod, buf, sizeof(buf)));
    } else {
        if (!ks_node_info_remove_pod(n->info, pod))
            return ks_status_new(KS_ERROR, "no corresponding pod %s in pods of node %s",
                                 ks_str(pod->name), ks_str(pod->node_name));
        if (n->info->npods == 0 && !n->info->node) drop_node(c, pod->node_name);
        else move_to_head(c, n);
    }
    pod_state *ps = ks_map_del(&c->pods, pod->key + 1);
    if (ps) {
        if (ps->assumed) c->nassumed--;
        ks_pod_unref(ps->pod);
        free(ps);
    }
    return NULL;
}

ks_status *ks_cache_assume_pod(ks_cache *c, ks_pod *pod) {
    char buf[512];
    pthread_mutex_lock(&c->mu);
    if (get_state(c, pod->key)) {
        pthread_mutex_unlock(&c->mu);
        return ks_status_new(KS_ERROR, "pod %s is in the cache, so can't be assumed",
                             pod_ref(pod, buf, sizeof(buf)));
    }
    add_pod_locked(c, pod, true);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

ks_status *ks_cache_finish_binding(ks_cache *c, const ks_pod *pod) {
    int64_t now = ks_clock_now(c->clock);
    pthread_mutex_lock(&c->mu);
    pod_state *ps = get_state(c, pod->key);
    if (ps && ps->assumed) {
        ps->has_deadline = c->ttl != 0;
        ps->deadline = now + c->ttl;
        ps->binding_finished = true;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

ks_status *ks_cache_forget_pod(ks_cache *c, const ks_pod *pod) {
    char buf[512];
    pthread_mutex_lock(&c->mu);
    pod_state *ps = get_state(c, pod->key);
    ks_status *s = NULL;
    if (ps && ps->pod->node_name != pod->node_name) {
        s = ks_status_new(KS_ERROR, "pod %s was assumed on %s but assigned to %s",
                          pod_ref(pod, buf, sizeof(buf)), ks_str(pod->node_name),
                          ks_str(ps->pod->node_name));
    } else if (ps && ps->assumed) {
        s = remove_pod_locked(c, ps->pod);
    } else {
        s = ks_status_new(KS_ERROR, "pod %s wasn't assumed so cannot be forgotten",
                          pod_ref(pod, buf, sizeof(buf)));
    }
    pthread_mutex_unlock(&c->mu);
    return s;
}

ks_status *ks_cache_add_pod(ks_cache *c, ks_pod *pod) {
    char buf[512];
    ks_status *s = NULL;
    pthread_mutex_lock(&c->mu);
    pod_state *ps = get_state(c, pod->key);
    if (ps && ps->assumed) {
        /* The binding went through: the real pod replaces the assumed one
         * (on whatever node the backend says). */
        ks_pod *assumed = ks_pod_ref(ps->pod);
        if (assumed->node_name != pod->node_name)
            ks_infof(1, "pod %s was added to node %s, it was assumed on %s", pod_ref(pod, buf, sizeof(buf)),
                     ks_str(pod->node_name), ks_str(assumed->node_name));
        s = remove_pod_locked(c, assumed);
        if (!s) add_pod_locked(c, pod, false);
        ks_pod_unref(assumed);
    } else if (!ps) {
        add_pod_locked(c, pod, false);
    } else {
        s = ks_status_new(KS_ERROR, "pod %s was already in added state", pod_ref(pod, buf, sizeof(buf)));
    }
    pthread_mutex_unlock(&c->mu);
    return s;
}

ks_status *ks_cache_update_pod(ks_cache *c, ks_pod *old_pod, ks_pod *new_pod) {
    char buf[512];
    ks_status *s = NULL;
    pthread_mutex_lock(&c->mu);
    pod_state *ps = get_state(c, old_pod->key);
    if (!ps) {
        s = ks_status_new(KS_ERROR, "pod %s is not added to scheduler cache, so cannot be updated",
                          pod_ref(old_pod, buf, sizeof(buf)));
    } else if (ps->assumed) {
        s = ks_status_new(KS_ERROR, "assumed pod %s should not be updated", pod_ref(old_pod, buf, sizeof(buf)));
    } else if (ps->pod->node_name != new_pod->node_name) {
        s = ks_status_new(KS_ERROR, "pod %s updated on a different node than previously added to",
                          pod_ref(old_pod, buf, sizeof(buf)));
    } else {
        ks_pod *cur = ks_pod_ref(ps->pod);
        s = remove_pod_locked(c, cur);
        if (!s) add_pod_locked(c, new_pod, false);
        ks_pod_unref(cur);
    }
    pthread_mutex_unlock(&c->mu);
    return s;
}

ks_status *ks_cache_remove_pod(ks_cache *c, const ks_pod *pod) {
    char buf[512];
    ks_status *s = NULL;
    pthread_mutex_lock(&c->mu);
    pod_state *ps = get_state(c, pod->key);
    if (!ps) {
        s = ks_status_new(KS_ERROR, "pod %s is not found in scheduler cache, so cannot be removed from it",
                          pod_ref(pod, buf, sizeof(buf)));
    } else {
        if (ps->pod->node_name != pod->node_name)
            ks_errorf("pod %s was added to node %s but removed from %s", pod_ref(pod, buf, sizeof(buf)),
                      ks_str(ps->pod->node_name), ks_str(pod->node_name));
        ks_pod *cur = ks_pod_ref(ps->pod);
        s = remove_pod_locked(c, cur);
        ks_pod_unref(cur);
    }
    pthread_mutex_unlock(&c->mu);
    return s;
}

bool ks_cache_is_assumed(ks_cache *c, const ks_pod *pod) {
    pthread_mutex_lock(&c->mu);
    pod_state *ps = get_state(c, pod->key);
    bool a = ps && ps->assumed;
    pthread_mutex_unlock(&c->mu);
    return a;
}

void ks_cache_cleanup_assumed(ks_cache *c, int64_t now) {
    pthread_mutex_lock(&c->mu);
    for (;;) {
        pod_state *expired = NULL;
        uint64_t k;
        void *v;
        for (size_t it = 0; !expired && ks_map_next(&c->pods, &it, &k, &v);) {
            pod_state *ps = v;
            if (ps->assumed && ps->binding_finished && ps->has_deadline && now > ps->deadline) expired = ps;
        }
        if (!expired) break;
        char buf[512];
        ks_infof(1, "pod %s expired", pod_ref(expired->pod, buf, sizeof(buf)));
        ks_pod *p = ks_pod_ref(expired->pod);
        ks_status_free(remove_pod_locked(c, p));
        ks_pod_unref(p);
    }
    pthread_mutex_unlock(&c->mu);
}

size_t ks_cache_node_count(ks_cache *c) {
    pthread_mutex_lock(&c->mu);
    size_t n = c->nodes.len;
    pthread_mutex_unlock(&c->mu);
    return n;
}

size_t ks_cache_pod_count(ks_cache *c) {
    pthread_mutex_lock(&c->mu);
    size_t n = c->pods.len;
    pthread_mutex_unlock(&c->mu);
    return n;
}

size_t ks_cache_assumed_count(ks_cache *c) {
    pthread_mutex_lock(&c->mu);
    size_t n = c->nassumed;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---- snapshot ----------------------------------------------------------- */

static void pvc_union(ks_snapshot *s, const ks_node_info *ni) {
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&ni->pvc_refs, &it, &k, &v);) ks_map_put(&s->used_pvcs, k, (void *)1);
}

static bool same_pvc_keys(const ks_node_info *a, const ks_node_info *b) {
    if (a->pvc_refs.len != b->pvc_refs.len) return false;
    uint64_t k;
    void *v;
    for (size_t it = 0; ks_map_next(&b->pvc_refs, &it, &k, &v);)
        if (!ks_map_get(&a->pvc_refs, k)) return false;
    return true;
}

/* A node joined or left one of the with_affinity / with_required_anti
 * lists. Their users sum over them, so order carries nothing: a node that
 * joins goes last, one that leaves takes the last one's place, and every
 * other node keeps its position (plugins keep per-position results across
 * cycles, see plugins/helper/nodememo.h), instead of a pass over every
 * node each time a pod with anti-affinity lands on a new node. */
static void list_set(ks_node_info **list, uint32_t *n, ks_node_info *ni, bool in) {
    uint32_t i = 0;
    while (i < *n && list[i] != ni) i++;
    if (in && i == *n) list[(*n)++] = ni;
    else if (!in && i < *n) list[i] = list[--*n];
}

static void rebuild_pvcs(ks_snapshot *s) {
    ks_map_clear(&s->used_pvcs);
    for (uint32_t i = 0; i < s->nnodes; i++) pvc_union(s, s->nodes[i]);
}

static void rebuild_lists(ks_cache *c, ks_snapshot *s, bool all) {
    s->nwith_affinity = s->nwith_required_anti = 0;
    ks_map_clear(&s->used_pvcs);
    if (all) {
        ks_id *names = ks_xmalloc((c->tree_nodes ? c->tree_nodes : 1) * sizeof(ks_id));
        size_t n = tree_list(c, names);
        s->nnodes = 0;
        KS_GROW(s->nodes, s->nodes_cap, n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            ks_node_info *ni = ks_map_get(&s->by_name, (uint64_t)names[i] + 1);
            if (ni) s->nodes[s->nnodes++] = ni;
            else ks_errorf("node %s is in the node tree but not in the snapshot", ks_str(names[i]));
        }
        free(names);
        s->gens = ks_xrealloc(s->gens, (s->nnodes ? s->nnodes : 1) * sizeof(*s->gens));
        ks_map_clear(&s->pos);
        for (uint32_t i = 0; i < s->nnodes; i++) {
            s->gens[i] = s->nodes[i]->generation;
            ks_map_put(&s->pos, (uint64_t)s->nodes[i]->name + 1, (void *)(uintptr_t)(i + 1));
        }
    }
    KS_GROW(s->with_affinity, s->with_affinity_cap, s->nnodes ? s->nnodes : 1);
    KS_GROW(s->with_required_anti, s->with_required_anti_cap, s->nnodes ? s->nnodes : 1);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        ks_node_info *ni = s->nodes[i];
        if (ni->naffinity) s->with_affinity[s->nwith_affinity++] = ni;
        if (ni->nanti) s->with_required_anti[s->nwith_required_anti++] = ni;
        pvc_union(s, ni);
    }
}

ks_status *ks_cache_update_snapshot(ks_cache *c, ks_snapshot *s) {
    pthread_mutex_lock(&c->mu);
    bool update_all = false, update_affinity = false, update_anti = false, update_pvcs = false;
    uint32_t copied = 0;
    /* nodes whose list membership changed */
    ks_node_info **moved = NULL;
    uint32_t nmoved = 0, moved_cap = 0;
    for (cache_node *n = c->head; n; n = n->next) {
        if (n->info->generation <= s->generation) break;
        if (!n->info->node) continue;
        ks_node_info *ex = ks_map_get(&s->by_name, (uint64_t)n->info->name + 1);
        if (!ex) {
            update_all = true;
            ex = ks_node_info_new();
            ks_map_put(&s->by_name, (uint64_t)n->info->name + 1, ex);
        }
        bool had_aff = ex->naffinity > 0, had_anti = ex->nanti > 0;
        if (!update_pvcs && !same_pvc_keys(ex, n->info)) update_pvcs = true;
        ks_node_info_copy_into(ex, n->info);
        fill_images(c, ex);
        copied++;
        uintptr_t at = (uintptr_t)ks_map_get(&s->pos, (uint64_t)ex->name + 1);
        if (at && at <= s->nnodes && s->nodes[at - 1] == ex) s->gens[at - 1] = ex->generation;
        if (had_aff != (ex->naffinity > 0)) update_affinity = true;
        if (had_anti != (ex->nanti > 0)) update_anti = true;
        if (had_aff != (ex->naffinity > 0) || had_anti != (ex->nanti > 0)) {
            KS_GROW(moved, moved_cap, nmoved + 1);
            moved[nmoved++] = ex;
        }
    }
    if (c->head) s->generation = c->head->info->generation;
    s->copied_last = copied;
    s->copied_total += copied;

    /* Nodes gone from the cache: drop their copies. */
    if (s->by_name.len > c->tree_nodes) {
        size_t extra = s->by_name.len - c->tree_nodes;
        uint64_t *dead = ks_xmalloc(extra * sizeof(uint64_t));
        size_t nd = 0;
        uint64_t k;
        void *v;
        for (size_t it = 0; nd < extra && ks_map_next(&s->by_name, &it, &k, &v);) {
            cache_node *cn = ks_map_get(&c->nodes, k);
            if (!cn || !cn->info->node) dead[nd++] = k;
        }
        for (size_t i = 0; i < nd; i++) ks_node_info_free(ks_map_del(&s->by_name, dead[i]));
        free(dead);
        update_all = true;
    }
    if (update_all) {
        rebuild_lists(c, s, true);
    } else {
        if (update_affinity || update_anti) {
            KS_GROW(s->with_affinity, s->with_affinity_cap, s->nnodes ? s->nnodes : 1);
            KS_GROW(s->with_required_anti, s->with_required_anti_cap, s->nnodes ? s->nnodes : 1);
            for (uint32_t i = 0; i < nmoved; i++) {
                list_set(s->with_affinity, &s->nwith_affinity, moved[i], moved[i]->naffinity > 0);
                list_set(s->with_required_anti, &s->nwith_required_anti, moved[i], moved[i]->nanti > 0);
            }
        }
        if (update_pvcs) rebuild_pvcs(s);
    }
    free(moved);
    ks_status *st = NULL;
    if (s->nnodes != c->tree_nodes) {
        st = ks_status_new(KS_ERROR,
                           "snapshot state is not consistent, length of NodeInfoList=%u not equal to "
                           "length of nodes in tree=%u , length of NodeInfoMap=%zu, length of nodes in "
                           "cache=%zu, trying to recover",
                           s->nnodes, c->tree_nodes, s->by_name.len, c->nodes.len);
        rebuild_lists(c, s, true);
    }
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* ---- embedding (include/ksched/framework.h) ------------------------------ */

/* Built the way the scheduler builds its own: through a cache, so that
 * node order, image summaries and the PVC set are the same. */
ks_snapshot *ks_snapshot_from(ks_node *const *nodes, size_t nnodes, ks_pod *const *pods,
                              size_t npods) {
    ks_cache *c = ks_cache_new(NULL, 0);
    for (size_t i = 0; i < nnodes; i++) ks_cache_add_node(c, nodes[i]);
    for (size_t i = 0; i < npods; i++)
        if (pods[i]->node_name) ks_status_free(ks_cache_add_pod(c, pods[i]));
    ks_snapshot *s = ks_snapshot_new();
    ks_status_free(ks_cache_update_snapshot(c, s));
    ks_cache_free(c);
    return s;
}
