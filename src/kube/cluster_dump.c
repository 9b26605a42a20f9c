/* A live cluster's objects as manifests (see cluster_dump.h). */
#include "kube/cluster_dump.h"

#include "config/feature_gates.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What the scheduler reads (the kube backend's reflectors), plus
 * PriorityClasses (admission of the pods a simulation adds) and DRA's
 * kinds. The numbered file names keep the loader's order: classes and
 * storage before nodes, nodes before pods. */
typedef struct snap_kind {
    const char *file, *kind, *api_version, *path, *field_selector;
} snap_kind;

static const snap_kind kinds[] = {
    {"00-namespaces.json", "Namespace", "v1", "/api/v1/namespaces", NULL},
    {"01-priorityclasses.json", "PriorityClass", "scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1/priorityclasses",
     NULL},
    {"02-storageclasses.json", "StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses", NULL},
    {"03-csidrivers.json", "CSIDriver", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csidrivers", NULL},
    {"04-csinodes.json", "CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes", NULL},
    {"05-csistoragecapacities.json", "CSIStorageCapacity", "storage.k8s.io/v1",
     "/apis/storage.k8s.io/v1/csistoragecapacities", NULL},
    {"06-volumeattachments.json", "VolumeAttachment", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/volumeattachments",
     NULL},
    {"07-persistentvolumes.json", "PersistentVolume", "v1", "/api/v1/persistentvolumes", NULL},
    {"08-persistentvolumeclaims.json", "PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims", NULL},
    {"09-services.json", "Service", "v1", "/api/v1/services", NULL},
    {"10-replicationcontrollers.json", "ReplicationController", "v1", "/api/v1/replicationcontrollers", NULL},
    {"11-replicasets.json", "ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets", NULL},
    {"12-statefulsets.json", "StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets", NULL},
    {"13-poddisruptionbudgets.json", "PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets",
     NULL},
    {"14-deviceclasses.json", "DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses", NULL},
    {"15-resourceslices.json", "ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices",
     NULL},
    /* DRADeviceTaints (alpha; listed only with the gate on, as
     * kube-scheduler's informer and its RBAC role; an API server without
     * it answers 404) */
    {"15a-devicetaintrules.json", "DeviceTaintRule", "resource.k8s.io/v1alpha3",
     "/apis/resource.k8s.io/v1alpha3/devicetaintrules", NULL},
    {"16-resourceclaims.json", "ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims",
     NULL},
    {"17-podgroups.json", "PodGroup", "scheduling.x-k8s.io/v1alpha1",
     "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", NULL},
    {"18-nodes.json", "Node", "v1", "/api/v1/nodes", NULL},
    /* the scheduler's pod informer never sees finished pods */
    {"19-pods.json", "Pod", "v1", "/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed"},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

void ks_kube_snapshot_init(ks_kube_snapshot *s) {
    memset(s, 0, sizeof(*s));
    s->arena = ks_arena_new(1 << 20);
}

void ks_kube_snapshot_free(ks_kube_snapshot *s) {
    if (s->arena) ks_arena_free(s->arena);
    free(s->docs);
    memset(s, 0, sizeof(*s));
}

static ks_tree *new_list(ks_arena *a) {
    ks_tree *l = kt_new(a, KT_MAP, 0);
    kt_map_add(a, l, "apiVersion", kt_string(a, "v1", 0));
    kt_map_add(a, l, "kind", kt_string(a, "List", 0));
    kt_map_add(a, l, "items", kt_new(a, KT_SEQ, 0));
    return l;
}

static void add_doc(ks_kube_snapshot *s, const char *file, ks_tree *list) {
    KS_GROW(s->docs, s->cap, s->n + 1);
    s->docs[s->n++] = (ks_kube_snapshot_doc){ks_arena_strdup(s->arena, file), list};
}

/* ---- small tree helpers ------------------------------------------------------ */

static const char *tstr(const ks_tree *t, const char *key) {
    const ks_tree *v = kt_get(t, key);
    return v && v->type == KT_STRING ? v->text : NULL;
}

static ks_tree *tmap(const ks_tree *t, const char *key) {
    const ks_tree *v = kt_get(t, key);
    return v && v->type == KT_MAP ? (ks_tree *)v : NULL;
}

/* The map under key, created (empty) when missing or not a map. */
static ks_tree *tmap_make(ks_arena *a, ks_tree *t, const char *key) {
    ks_tree *m = tmap(t, key);
    if (!m) {
        m = kt_new(a, KT_MAP, 0);
        kt_map_set(a, t, key, m);
    }
    return m;
}

static void tdel(ks_tree *m, const char *key) {
    if (!m || m->type != KT_MAP) return;
    uint32_t o = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        if (!strcmp(m->keys[i], key)) continue;
        m->keys[o] = m->keys[i];
        m->items[o++] = m->items[i];
    }
    m->n = o;
}

static bool is_list(const ks_tree *t) {
    const char *k = tstr(t, "kind");
    size_t n = k ? strlen(k) : 0;
    return t && t->type == KT_MAP && n >= 4 && !strcmp(k + n - 4, "List");
}

static ks_tree *items_of(const ks_tree *list) {
    const ks_tree *v = kt_get(list, "items");
    return v && v->type == KT_SEQ ? (ks_tree *)v : NULL;
}

static const char *obj_name(const ks_tree *o) { return tstr(tmap(o, "metadata"), "name"); }

/* ---- listing ------------------------------------------------------------------- */

static void url_escape(ks_strbuf *b, const char *s) {
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
            ch == '_' || ch == '.' || ch == '~')
            ks_sb_putc(b, (char)ch);
        else
            ks_sb_printf(b, "%%%c%c", hex[ch >> 4], hex[ch & 15]);
    }
}

/* One kind, page by page, into list. 1 done, 0 not served (404), -1 error. */
static int list_kind(ks_kube_snapshot *s, ks_kube_client *c, const snap_kind *k, uint32_t page, ks_tree *list,
                     char **err) {
    ks_tree *items = items_of(list);
    char *cont = NULL;
    for (int pages = 0;; pages++) {
        ks_strbuf p;
        ks_sb_init(&p);
        ks_sb_printf(&p, "%s?limit=%u", k->path, page);
        if (k->field_selector) {
            ks_sb_printf(&p, "&fieldSelector=");
            url_escape(&p, k->field_selector);
        }
        if (cont) {
            ks_sb_printf(&p, "&continue=");
            url_escape(&p, cont);
        }
        ks_kube_request req = {.method = "GET", .path = ks_sb_str(&p), .idempotent = true};
        ks_kube_response r = {0};
        ks_kube_do(c, &req, &r);
        free(cont);
        cont = NULL;
        if (r.code == 404 && pages == 0) {
            ks_infof(2, "snapshot: %s is not served (%s), left out", k->kind, k->path);
            ks_kube_response_free(&r);
            ks_sb_free(&p);
            return 0;
        }
        if (r.code != 200) {
            char *m = r.code ? ks_kube_status_message(r.body, r.body_len) : NULL;
            *err = ks_xasprintf("listing %s (GET %s): %s%ld %s", k->kind, k->path, r.code ? "" : "no answer ",
                                r.code, m ? m : r.error ? r.error : "");
            free(m);
            ks_kube_response_free(&r);
            ks_sb_free(&p);
            return -1;
        }
        ks_tree **docs = NULL;
        uint32_t ndocs = 0;
        char *perr = NULL;
        bool ok = kt_parse(s->arena, k->path, r.body ? r.body : "", r.body_len, &docs, &ndocs, &perr);
        ks_kube_response_free(&r);
        ks_sb_free(&p);
        if (!ok || ndocs != 1 || docs[0]->type != KT_MAP) {
            *err = ks_xasprintf("listing %s: %s", k->kind, perr ? perr : "the answer is not a list");
            free(perr);
            return -1;
        }
        ks_tree *got = docs[0];
        ks_tree *its = items_of(got);
        for (uint32_t i = 0; its && i < its->n; i++) {
            ks_tree *o = its->items[i];
            if (o->type != KT_MAP) continue;
            /* A list's items carry no kind; the loader dispatches on it. */
            kt_map_set(s->arena, o, "apiVersion", kt_string(s->arena, k->api_version, 0));
            kt_map_set(s->arena, o, "kind", kt_string(s->arena, k->kind, 0));
            tdel(tmap(o, "metadata"), "managedFields");
            kt_seq_add(s->arena, items, o);
        }
        const char *next = tstr(tmap(got, "metadata"), "continue");
        if (!next || !*next) break;
        cont = ks_xstrdup(next);
    }
    return 1;
}

bool ks_kube_snapshot_list(ks_kube_snapshot *s, ks_kube_client *c, uint32_t page_size, char **err) {
    if (!page_size) page_size = 500;
    for (size_t i = 0; i < NKINDS; i++) {
        if (!strcmp(kinds[i].kind, "DeviceTaintRule") && !ks_feature_enabled(KS_FEAT_DRA_DEVICE_TAINTS)) continue;
        ks_tree *list = new_list(s->arena);
        int r = list_kind(s, c, &kinds[i], page_size, list, err);
        if (r < 0) return false;
        if (r == 0) continue;
        add_doc(s, kinds[i].file, list);
        ks_infof(2, "snapshot: %u %s", items_of(list)->n, kinds[i].kind);
    }
    return true;
}

/* ---- reading files ------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool manifest_name(const char *name) {
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")) ||
           (n > 5 && !strcmp(name + n - 5, ".json"));
}

static bool read_file(ks_kube_snapshot *s, const char *path, const char *base, char **err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    ks_strbuf b;
    ks_sb_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) ks_sb_putn(&b, chunk, n);
    bool rd = !ferror(f);
    fclose(f);
    if (!rd) {
        ks_sb_free(&b);
        *err = ks_xasprintf("%s: read error", path);
        return false;
    }
    ks_tree **docs = NULL;
    uint32_t ndocs = 0;
    bool ok = kt_parse(s->arena, ks_arena_strdup(s->arena, path), ks_sb_str(&b), b.len, &docs, &ndocs, err);
    ks_sb_free(&b);
    if (!ok) return false;
    for (uint32_t i = 0; i < ndocs; i++) {
        ks_tree *d = docs[i];
        if (!is_list(d)) {
            /* one object: a List of one, so the what-ifs see one shape */
            ks_tree *l = new_list(s->arena);
            kt_seq_add(s->arena, items_of(l), d);
            d = l;
        } else if (!items_of(d)) {
            kt_map_set(s->arena, d, "items", kt_new(s->arena, KT_SEQ, 0));
        }
        char *name = ndocs > 1 ? ks_xasprintf("%s.%u", base, i) : ks_xstrdup(base);
        add_doc(s, name, d);
        free(name);
    }
    return true;
}

bool ks_kube_snapshot_read(ks_kube_snapshot *s, const char *path, char **err) {
    struct stat st;
    if (stat(path, &st) != 0) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        const char *base = strrchr(path, '/');
        return read_file(s, path, base ? base + 1 : path, err);
    }
    DIR *d = opendir(path);
    if (!d) {
        *err = ks_xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!manifest_name(e->d_name)) continue;
        KS_GROW(names, cap, n + 1);
        names[n++] = ks_xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_str);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (ok) {
            char *p = ks_xasprintf("%s/%s", path, names[i]);
            ok = read_file(s, p, names[i], err);
            free(p);
        }
        free(names[i]);
    }
    free(names);
    return ok;
}

/* ---- what-ifs -------------------------------------------------------------- */

typedef enum { POD_STAYS, POD_PENDING, POD_GONE } pod_fate;

/* What a drain does to a pod of the node (see cluster_dump.h). */
static pod_fate drain_fate(const ks_tree *pod) {
    const ks_tree *md = tmap(pod, "metadata");
    if (tstr(tmap(md, "annotations"), "kubernetes.io/config.mirror")) return POD_STAYS;
    const ks_tree *owners = kt_get(md, "ownerReferences");
    for (uint32_t i = 0; owners && owners->type == KT_SEQ && i < owners->n; i++) {
        const ks_tree *ctl = kt_get(owners->items[i], "controller");
        if (!ctl || ctl->type != KT_BOOL || !ctl->bval) continue;
        const char *kind = tstr(owners->items[i], "kind");
        return kind && !strcmp(kind, "DaemonSet") ? POD_STAYS : POD_PENDING;
    }
    return POD_GONE;
}

static void make_pending(ks_arena *a, ks_tree *pod) {
    tdel(tmap(pod, "spec"), "nodeName");
    ks_tree *st = kt_new(a, KT_MAP, 0);
    kt_map_add(a, st, "phase", kt_string(a, "Pending", 0));
    kt_map_set(a, pod, "status", st);
}

static bool is_kind(const ks_tree *o, const char *kind) {
    const char *k = tstr(o, "kind");
    return k && !strcmp(k, kind);
}

/* Apply to every object of the snapshot; fn returns false to drop it. */
typedef bool (*visit_fn)(ks_kube_snapshot *s, ks_tree *o, void *arg);
static void visit(ks_kube_snapshot *s, visit_fn fn, void *arg) {
    for (size_t d = 0; d < s->n; d++) {
        ks_tree *items = items_of(s->docs[d].list);
        if (!items) continue;
        uint32_t o = 0;
        for (uint32_t i = 0; i < items->n; i++)
            if (fn(s, items->items[i], arg)) items->items[o++] = items->items[i];
        items->n = o;
    }
}

typedef struct drain_arg {
    const char *node;
    bool remove;
    uint32_t nodes_found, pending, gone;
} drain_arg;

static bool drain_visit(ks_kube_snapshot *s, ks_tree *o, void *arg) {
    drain_arg *d = arg;
    if (is_kind(o, "Node")) {
        const char *n = obj_name(o);
        if (!n || strcmp(n, d->node)) return true;
        d->nodes_found++;
        if (d->remove) return false;
        kt_map_set(s->arena, tmap_make(s->arena, o, "spec"), "unschedulable", kt_bool(s->arena, true));
        return true;
    }
    if (is_kind(o, "Pod")) {
        const char *n = tstr(tmap(o, "spec"), "nodeName");
        if (!n || strcmp(n, d->node)) return true;
        switch (drain_fate(o)) {
        case POD_STAYS:
            if (!d->remove) return true;
            d->gone++;
            return false;
        case POD_PENDING: make_pending(s->arena, o); d->pending++; return true;
        case POD_GONE: d->gone++; return false;
        }
    }
    if (d->remove && is_kind(o, "CSINode")) {
        const char *n = obj_name(o);
        return !n || strcmp(n, d->node);
    }
    if (d->remove && (is_kind(o, "ResourceSlice") || is_kind(o, "VolumeAttachment"))) {
        const char *n = tstr(tmap(o, "spec"), "nodeName");
        return !n || strcmp(n, d->node);
    }
    return true;
}

static bool drain(ks_kube_snapshot *s, const char *node, bool remove, char **err) {
    drain_arg d = {.node = node, .remove = remove};
    visit(s, drain_visit, &d);
    if (!d.nodes_found) {
        *err = ks_xasprintf("%s: node \"%s\" is not in the cluster", remove ? "--remove-node" : "--drain", node);
        return false;
    }
    ks_infof(1, "%s %s: %u pod(s) pending again, %u gone", remove ? "removed" : "drained", node, d.pending, d.gone);
    return true;
}

bool ks_kube_snapshot_drain(ks_kube_snapshot *s, const char *node, char **err) { return drain(s, node, false, err); }
bool ks_kube_snapshot_remove_node(ks_kube_snapshot *s, const char *node, char **err) { return drain(s, node, true, err); }

typedef struct find_arg {
    const char *name;
    bool found;
} find_arg;

static bool find_node_visit(ks_kube_snapshot *s, ks_tree *o, void *arg) {
    (void)s;
    find_arg *f = arg;
    const char *n = is_kind(o, "Node") ? obj_name(o) : NULL;
    if (n && !strcmp(n, f->name)) f->found = true;
    return true;
}

bool ks_kube_snapshot_add_nodes(ks_kube_snapshot *s, const char *file, uint32_t count, char **err) {
    ks_kube_snapshot tmp;
    ks_kube_snapshot_init(&tmp);
    bool ok = false;
    if (!ks_kube_snapshot_read(&tmp, file, err)) goto out;
    const ks_tree *tmpl = NULL;
    for (size_t d = 0; d < tmp.n && !tmpl; d++) {
        const ks_tree *items = items_of(tmp.docs[d].list);
        for (uint32_t i = 0; items && i < items->n && !tmpl; i++)
            if (is_kind(items->items[i], "Node")) tmpl = items->items[i];
    }
    const char *base = tmpl ? obj_name(tmpl) : NULL;
    if (!base) {
        *err = ks_xasprintf("--add-node %s: no Node with a name in it", file);
        goto out;
    }
    /* Added nodes go with the listed ones when there is a list of them. */
    ks_tree *items = NULL;
    for (size_t d = 0; d < s->n && !items; d++)
        if (!strcmp(s->docs[d].file, "18-nodes.json")) items = items_of(s->docs[d].list);
    if (!items) {
        ks_tree *l = new_list(s->arena);
        add_doc(s, "18-nodes-added.json", l);
        items = items_of(l);
    }
    for (uint32_t i = 1; i <= count; i++) {
        char *name = count == 1 ? ks_xstrdup(base) : ks_xasprintf("%s-%u", base, i);
        find_arg f = {name, false};
        visit(s, find_node_visit, &f);
        if (f.found) {
            *err = ks_xasprintf("--add-node %s: node \"%s\" already exists", file, name);
            free(name);
            goto out;
        }
        ks_tree *n = kt_copy(s->arena, tmpl);
        ks_tree *md = tmap_make(s->arena, n, "metadata");
        kt_map_set(s->arena, md, "name", kt_string(s->arena, name, 0));
        tdel(md, "uid");
        tdel(md, "resourceVersion");
        tdel(md, "creationTimestamp");
        kt_map_set(s->arena, tmap_make(s->arena, md, "labels"), "kubernetes.io/hostname",
                   kt_string(s->arena, name, 0));
        kt_seq_add(s->arena, items, n);
        free(name);
    }
    ok = true;
out:
    ks_kube_snapshot_free(&tmp);
    return ok;
}

/* ---- output --------------------------------------------------------------------- */

bool ks_kube_snapshot_write(const ks_kube_snapshot *s, const char *dir, char **err) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        *err = ks_xasprintf("%s: %s", dir, strerror(errno));
        return false;
    }
    for (size_t i = 0; i < s->n; i++) {
        char *path = ks_xasprintf("%s/%s", dir, s->docs[i].file);
        char *j = kt_to_json(s->docs[i].list, 1);
        FILE *f = fopen(path, "w");
        bool ok = f && j && fputs(j, f) >= 0 && fputc('\n', f) != EOF;
        if (f && fclose(f) != 0) ok = false;
        if (!ok) *err = ks_xasprintf("%s: %s", path, j ? strerror(errno) : "cannot encode");
        free(j);
        free(path);
        if (!ok) return false;
    }
    return true;
}

char *ks_kube_snapshot_json(const ks_kube_snapshot *s, size_t *len) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (size_t i = 0; i < s->n; i++) {
        char *j = kt_to_json(s->docs[i].list, 0);
        if (j) ks_sb_printf(&b, "%s\n", j);
        free(j);
    }
    *len = b.len;
    return ks_sb_take(&b);
}

size_t ks_kube_snapshot_count(const ks_kube_snapshot *s, const char *file) {
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->docs[i].file, file)) return items_of(s->docs[i].list)->n;
    return 0;
}
