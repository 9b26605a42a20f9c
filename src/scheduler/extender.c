/* Scheduler extenders over HTTP: request bodies are built with jansson from
 * the objects' decoded source trees (or the fields ksched knows when an
 * object was built in code), answers are read as Go's encoding/json reads
 * them (field names matched case-insensitively). */
#include "scheduler/extender.h"

#include "codec/tree.h"
#include "util/base64.h"
#include "util/curl_lazy.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* upstream DefaultExtenderTimeout */
#define DEFAULT_TIMEOUT_MS 5000

size_t ks_extender_max_answer = (size_t)512 << 20;

struct ks_extender {
    const ks_extender_config *c;
};

ks_extender *ks_extender_new(const ks_extender_config *c) {
    ks_extender *e = ks_xcalloc(1, sizeof(*e));
    e->c = c;
    return e;
}

void ks_extender_free(ks_extender *e) { free(e); }

const ks_extender_config *ks_extender_config_of(const ks_extender *e) { return e->c; }

/* ---- interest ------------------------------------------------------------ */

static bool managed(const ks_extender_config *c, const char *name) {
    for (uint32_t i = 0; i < c->nmanaged_resources; i++)
        if (!strcmp(c->managed_resources[i].name, name)) return true;
    return false;
}

static bool qlist_managed(const ks_extender_config *c, const ks_qlist *l) {
    for (uint32_t i = 0; i < l->n; i++)
        if (managed(c, ks_str(l->v[i].name))) return true;
    return false;
}

/* A resource built in code: the names with a value. */
static bool resource_managed(const ks_extender_config *c, const ks_resource *r) {
    if (r->milli_cpu && managed(c, "cpu")) return true;
    if (r->memory && managed(c, "memory")) return true;
    if (r->ephemeral_storage && managed(c, "ephemeral-storage")) return true;
    for (uint32_t i = 0; i < r->nscalar; i++)
        if (managed(c, ks_str(r->scalars[i].name))) return true;
    return false;
}

static bool containers_managed(const ks_extender_config *c, const ks_container *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const ks_container *k = &v[i];
        if (k->req_q.v || k->lim_q.v) {
            if (qlist_managed(c, &k->req_q) || qlist_managed(c, &k->lim_q)) return true;
        } else if (resource_managed(c, &k->requests) || resource_managed(c, &k->limits)) {
            return true;
        }
    }
    return false;
}

bool ks_extender_interested(const ks_extender_config *c, const ks_pod *pod) {
    if (c->nmanaged_resources == 0) return true;
    return containers_managed(c, pod->containers, pod->ncontainers) ||
           containers_managed(c, pod->init_containers, pod->ninit);
}

/* ---- JSON of objects ------------------------------------------------------- */

static json_t *tree_json(const struct ks_tree *t) {
    char *s = kt_to_json(t, 0);
    json_t *j = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
    free(s);
    return j;
}

static json_t *quantity_nano(__int128 nano) {
    char buf[64];
    long long v;
    if (nano % 1000000000 == 0) {
        v = (long long)(nano / 1000000000);
        snprintf(buf, sizeof(buf), "%lld", v);
    } else if (nano % 1000000 == 0) {
        v = (long long)(nano / 1000000);
        snprintf(buf, sizeof(buf), "%lldm", v);
    } else {
        v = (long long)nano;
        snprintf(buf, sizeof(buf), "%lldn", v);
    }
    return json_string(buf);
}

static json_t *qlist_json(const ks_qlist *l) {
    json_t *o = json_object();
    for (uint32_t i = 0; i < l->n; i++) json_object_set_new(o, ks_str(l->v[i].name), quantity_nano(l->v[i].nano));
    return o;
}

static json_t *resource_json(const ks_resource *r) {
    json_t *o = json_object();
    char buf[64];
    if (r->milli_cpu) {
        snprintf(buf, sizeof(buf), "%lldm", (long long)r->milli_cpu);
        json_object_set_new(o, "cpu", json_string(buf));
    }
    if (r->memory) json_object_set_new(o, "memory", quantity_nano((__int128)r->memory * 1000000000));
    if (r->ephemeral_storage)
        json_object_set_new(o, "ephemeral-storage", quantity_nano((__int128)r->ephemeral_storage * 1000000000));
    if (r->allowed_pods) json_object_set_new(o, "pods", quantity_nano((__int128)r->allowed_pods * 1000000000));
    for (uint32_t i = 0; i < r->nscalar; i++)
        json_object_set_new(o, ks_str(r->scalars[i].name), quantity_nano((__int128)r->scalars[i].val * 1000000000));
    return o;
}

static json_t *labels_json(const ks_labels *l) {
    json_t *o = json_object();
    for (uint32_t i = 0; i < l->n; i++)
        json_object_set_new(o, ks_str(l->kv[i].key), json_string(ks_str(l->kv[i].value)));
    return o;
}

static json_t *containers_json(const ks_container *v, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        const ks_container *k = &v[i];
        json_t *c = json_object();
        json_object_set_new(c, "name", json_string(k->name ? k->name : ""));
        if (k->image) json_object_set_new(c, "image", json_string(k->image));
        json_t *res = json_object();
        json_object_set_new(res, "requests", k->req_q.v ? qlist_json(&k->req_q) : resource_json(&k->requests));
        json_object_set_new(res, "limits", k->lim_q.v ? qlist_json(&k->lim_q) : resource_json(&k->limits));
        json_object_set_new(c, "resources", res);
        json_array_append_new(a, c);
    }
    return a;
}

/* The pod as decoded, else what the scheduler knows of it. */
static json_t *pod_json(const ks_pod *p) {
    if (p->tree) {
        json_t *j = tree_json(p->tree);
        if (j) return j;
    }
    json_t *meta = json_object();
    json_object_set_new(meta, "name", json_string(ks_str(p->name)));
    json_object_set_new(meta, "namespace", json_string(ks_str(p->ns)));
    if (p->uid) json_object_set_new(meta, "uid", json_string(p->uid));
    json_t *spec = json_object();
    json_object_set_new(spec, "schedulerName", json_string(ks_str(p->scheduler_name)));
    if (p->node_name) json_object_set_new(spec, "nodeName", json_string(ks_str(p->node_name)));
    if (p->ninit) json_object_set_new(spec, "initContainers", containers_json(p->init_containers, p->ninit));
    json_object_set_new(spec, "containers", containers_json(p->containers, p->ncontainers));
    json_t *o = json_object();
    json_object_set_new(o, "metadata", meta);
    json_object_set_new(o, "spec", spec);
    return o;
}

static json_t *node_json(const ks_node_info *ni) {
    const ks_node *n = ni->node;
    if (n && n->tree) {
        json_t *j = tree_json(n->tree);
        if (j) return j;
    }
    json_t *meta = json_object();
    json_object_set_new(meta, "name", json_string(ks_str(ni->name)));
    json_t *o = json_object();
    if (n) {
        if (n->uid) json_object_set_new(meta, "uid", json_string(n->uid));
        json_object_set_new(meta, "labels", labels_json(&n->labels));
        json_t *status = json_object();
        json_object_set_new(status, "allocatable",
                            n->allocatable_q.v ? qlist_json(&n->allocatable_q) : resource_json(&n->allocatable));
        json_object_set_new(o, "status", status);
    }
    json_object_set_new(o, "metadata", meta);
    return o;
}

/* ExtenderArgs: the pod, and the nodes in full or by name. */
static json_t *extender_args(const ks_extender *e, const ks_pod *pod, const ks_node_info *const *nodes, size_t n) {
    json_t *args = json_object();
    json_object_set_new(args, "Pod", pod_json(pod));
    if (e->c->node_cache_capable) {
        json_t *names = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(names, json_string(ks_str(nodes[i]->name)));
        json_object_set_new(args, "Nodes", json_null());
        json_object_set_new(args, "NodeNames", names);
    } else {
        json_t *items = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(items, node_json(nodes[i]));
        json_t *list = json_object();
        json_object_set_new(list, "metadata", json_object());
        json_object_set_new(list, "items", items);
        json_object_set_new(args, "Nodes", list);
        json_object_set_new(args, "NodeNames", json_null());
    }
    return args;
}

/* Go's encoding/json matches struct fields case-insensitively. */
static json_t *field(const json_t *o, const char *name) {
    if (!json_is_object(o)) return NULL;
    json_t *v = json_object_get(o, name);
    if (v) return v;
    const char *k;
    json_t *val;
    json_object_foreach((json_t *)o, k, val) {
        if (!strcasecmp(k, name)) return val;
    }
    return NULL;
}

/* ---- HTTP ------------------------------------------------------------------- */

typedef struct body {
    char *p;
    size_t n;
    bool too_big; /* over ks_extender_max_answer: the transfer was stopped */
} body;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg) {
    body *b = arg;
    size_t add = size * nmemb;
    if (add > ks_extender_max_answer - b->n) {
        b->too_big = true;
        return 0;
    }
    b->p = ks_xrealloc(b->p, b->n + add + 1);
    memcpy(b->p + b->n, ptr, add);
    b->n += add;
    b->p[b->n] = '\0';
    return add;
}

/* Base64 (standard alphabet, padding optional) into a malloc'd buffer. */
static void set_blob(CURL *h, CURLoption opt, const char *b64, unsigned char **keep) {
    const ks_curl_api *C = ks_curl(NULL);
    size_t n = strlen(b64), len = 0;
    *keep = ks_xmalloc(n / 4 * 3 + 3);
    /* the config validated it (go_base64_invalid_at) */
    ks_base64_decode(b64, n, *keep, &len);
    struct curl_blob blob = {.data = *keep, .len = len, .flags = CURL_BLOB_COPY};
    C->easy_setopt(h, opt, &blob);
}

/* TLS as upstream's transport: enableHTTPS without a CA skips
 * verification; tlsConfig gives the CA and the client certificate. */
static void set_tls(CURL *h, const ks_extender_config *c, unsigned char *keep[3]) {
    const ks_curl_api *C = ks_curl(NULL);
    const ks_extender_tls *t = c->has_tls ? &c->tls : NULL;
    bool has_ca = t && ((t->ca_file && *t->ca_file) || (t->ca_data && *t->ca_data));
    bool insecure = (t && t->insecure) || (c->enable_https && !has_ca);
    if (insecure) {
        C->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        C->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (!t) return;
    if (t->ca_file && *t->ca_file) C->easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    else if (t->ca_data && *t->ca_data) set_blob(h, CURLOPT_CAINFO_BLOB, t->ca_data, &keep[0]);
    if (t->cert_file && *t->cert_file) C->easy_setopt(h, CURLOPT_SSLCERT, t->cert_file);
    else if (t->cert_data && *t->cert_data) set_blob(h, CURLOPT_SSLCERT_BLOB, t->cert_data, &keep[1]);
    if (t->key_file && *t->key_file) C->easy_setopt(h, CURLOPT_SSLKEY, t->key_file);
    else if (t->key_data && *t->key_data) set_blob(h, CURLOPT_SSLKEY_BLOB, t->key_data, &keep[2]);
}

/* POST args to urlPrefix/verb and parse the JSON answer into *result.
 * Takes args. */
static ks_status *send_verb(const ks_extender *e, const char *verb, json_t *args, json_t **result) {
    *result = NULL;
    char *payload = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    size_t plen = strlen(e->c->url_prefix);
    while (plen && e->c->url_prefix[plen - 1] == '/') plen--;
    char *url = ks_xasprintf("%.*s/%s", (int)plen, e->c->url_prefix, verb);
    ks_status *st = NULL;
    body b = {0};
    unsigned char *keep[3] = {0};
    CURL *h = NULL;
    const char *why = NULL;
    const ks_curl_api *C = ks_curl(&why);
    if (!C) {
        st = ks_status_new(KS_ERROR, "Post \"%s\": %s", url, why);
        goto out;
    }
    h = C->easy_init();
    if (!h || !payload) {
        st = ks_status_new(KS_ERROR, "Post \"%s\": cannot build the request", url);
        goto out;
    }
    struct curl_slist *hdr = C->slist_append(NULL, "Content-Type: application/json");
    int64_t ms = e->c->http_timeout_ns ? e->c->http_timeout_ns / 1000000 : DEFAULT_TIMEOUT_MS;
    if (ms <= 0) ms = 1;
    C->easy_setopt(h, CURLOPT_URL, url);
    C->easy_setopt(h, CURLOPT_POSTFIELDS, payload);
    C->easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    C->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)ms);
    C->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    C->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    C->easy_setopt(h, CURLOPT_WRITEDATA, &b);
    set_tls(h, e->c, keep);
    CURLcode rc = C->easy_perform(h);
    C->slist_free_all(hdr);
    if (b.too_big) {
        st = ks_status_new(KS_ERROR, "Post \"%s\": the answer is larger than the limit of %zu bytes", url,
                           ks_extender_max_answer);
        goto out;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        st = ks_status_new(KS_ERROR, "Post \"%s\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                           url);
        goto out;
    }
    if (rc != CURLE_OK) {
        st = ks_status_new(KS_ERROR, "Post \"%s\": %s", url, C->easy_strerror(rc));
        goto out;
    }
    long code = 0;
    C->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) {
        st = ks_status_new(KS_ERROR, "failed %s with extender at URL %s, code %ld", verb, url, code);
        goto out;
    }
    json_error_t jerr;
    *result = json_loadb(b.p ? b.p : "", b.n, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &jerr);
    if (!*result) st = ks_status_new(KS_ERROR, "decoding the answer of extender at URL %s: %s", url, jerr.text);
out:
    if (h) C->easy_cleanup(h);
    for (int i = 0; i < 3; i++) free(keep[i]);
    free(b.p);
    free(payload);
    free(url);
    return st;
}

/* ---- verbs ------------------------------------------------------------------ */

static const ks_node_info *find_input(const ks_node_info *const *nodes, size_t n, ks_id name) {
    for (size_t i = 0; i < n; i++)
        if (nodes[i]->name == name) return nodes[i];
    return NULL;
}

static void add_failed(ks_extender_filter_result *out, const json_t *map, const json_t *skip, bool unresolvable) {
    if (!json_is_object(map)) return;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v) {
        if (skip && json_object_get(skip, k)) continue;
        out->failed = ks_xrealloc(out->failed, (out->nfailed + 1) * sizeof(*out->failed));
        out->failed[out->nfailed++] = (ks_extender_failed){
            .node = ks_intern(k), .msg = ks_xstrdup(json_is_string(v) ? json_string_value(v) : ""),
            .unresolvable = unresolvable};
    }
}

ks_status *ks_extender_filter(ks_extender *e, const ks_pod *pod, const ks_node_info *const *nodes, size_t n,
                              ks_extender_filter_result *out) {
    memset(out, 0, sizeof(*out));
    out->nodes = ks_xmalloc((n ? n : 1) * sizeof(*out->nodes));
    if (!e->c->filter_verb || !*e->c->filter_verb) {
        memcpy(out->nodes, nodes, n * sizeof(*nodes));
        out->nnodes = n;
        return NULL;
    }
    json_t *res;
    ks_status *st = send_verb(e, e->c->filter_verb, extender_args(e, pod, nodes, n), &res);
    if (st) {
        ks_extender_filter_result_free(out);
        return st;
    }
    const json_t *error = field(res, "Error");
    if (json_is_string(error) && *json_string_value(error)) {
        st = ks_status_new(KS_ERROR, "%s", json_string_value(error));
        goto out;
    }
    const json_t *names = field(res, "NodeNames");
    const json_t *list = field(res, "Nodes");
    if (e->c->node_cache_capable && json_is_array(names)) {
        size_t i;
        json_t *v;
        json_array_foreach(names, i, v) {
            const char *name = json_is_string(v) ? json_string_value(v) : "";
            const ks_node_info *ni = find_input(nodes, n, ks_intern(name));
            if (!ni) {
                st = ks_status_new(KS_ERROR, "extender \"%s\" claims a filtered node \"%s\" which is not found in the input node list",
                                   e->c->url_prefix, name);
                goto out;
            }
            if (out->nnodes < n) out->nodes[out->nnodes++] = ni;
        }
    } else if (json_is_object(list)) {
        /* Upstream keeps the returned Node objects; ksched maps them back
         * to the snapshot's NodeInfos by name (docs/differences.md). */
        const json_t *items = field(list, "Items");
        size_t i;
        json_t *v;
        json_array_foreach(items, i, v) {
            const json_t *name = field(field(v, "Metadata"), "Name");
            const char *s = json_is_string(name) ? json_string_value(name) : "";
            const ks_node_info *ni = find_input(nodes, n, ks_intern(s));
            if (!ni) {
                st = ks_status_new(KS_ERROR, "extender \"%s\" claims a filtered node \"%s\" which is not found in the input node list",
                                   e->c->url_prefix, s);
                goto out;
            }
            if (out->nnodes < n) out->nodes[out->nnodes++] = ni;
        }
    }
    const json_t *unres = field(res, "FailedAndUnresolvableNodes");
    add_failed(out, unres, NULL, true);
    add_failed(out, field(res, "FailedNodes"), json_is_object(unres) ? unres : NULL, false);
out:
    json_decref(res);
    if (st) ks_extender_filter_result_free(out);
    return st;
}

void ks_extender_filter_result_free(ks_extender_filter_result *r) {
    for (size_t i = 0; i < r->nfailed; i++) free(r->failed[i].msg);
    free(r->failed);
    free(r->nodes);
    memset(r, 0, sizeof(*r));
}

ks_status *ks_extender_prioritize(ks_extender *e, const ks_pod *pod, const ks_node_info *const *nodes, size_t n,
                                  ks_id **hosts, int64_t **scores, size_t *count) {
    *hosts = NULL;
    *scores = NULL;
    *count = 0;
    if (!e->c->prioritize_verb || !*e->c->prioritize_verb) return NULL;
    json_t *res;
    ks_status *st = send_verb(e, e->c->prioritize_verb, extender_args(e, pod, nodes, n), &res);
    if (st) return st;
    if (!json_is_array(res)) {
        st = ks_status_new(KS_ERROR, "extender at URL %s: prioritize answer is not a list", e->c->url_prefix);
        json_decref(res);
        return st;
    }
    size_t m = json_array_size(res);
    *hosts = ks_xmalloc((m ? m : 1) * sizeof(ks_id));
    *scores = ks_xmalloc((m ? m : 1) * sizeof(int64_t));
    size_t i;
    json_t *v;
    json_array_foreach(res, i, v) {
        const json_t *h = field(v, "Host");
        const json_t *sc = field(v, "Score");
        (*hosts)[i] = ks_intern(json_is_string(h) ? json_string_value(h) : "");
        (*scores)[i] = json_is_integer(sc) ? (int64_t)json_integer_value(sc) : 0;
    }
    *count = m;
    json_decref(res);
    return NULL;
}

ks_status *ks_extender_bind(ks_extender *e, const ks_pod *pod, const char *node) {
    if (!e->c->bind_verb || !*e->c->bind_verb) return ks_status_new(KS_ERROR, "unexpected empty bindVerb in extender");
    json_t *args = json_object();
    json_object_set_new(args, "PodName", json_string(ks_str(pod->name)));
    json_object_set_new(args, "PodNamespace", json_string(ks_str(pod->ns)));
    json_object_set_new(args, "PodUID", json_string(pod->uid ? pod->uid : ""));
    json_object_set_new(args, "Node", json_string(node));
    json_t *res;
    ks_status *st = send_verb(e, e->c->bind_verb, args, &res);
    if (st) return st;
    const json_t *error = field(res, "Error");
    if (json_is_string(error) && *json_string_value(error)) st = ks_status_new(KS_ERROR, "%s", json_string_value(error));
    json_decref(res);
    return st;
}

/* ---- preemption ------------------------------------------------------------- */

static json_t *victims_json(const ks_victims *v, bool meta) {
    json_t *pods = json_array();
    for (uint32_t i = 0; i < v->npods; i++) {
        const ks_pod *p = v->pods[i];
        json_array_append_new(pods, meta ? json_pack("{s:s}", "UID", p->uid ? p->uid : "") : pod_json(p));
    }
    return json_pack("{s:o,s:I}", "Pods", pods, "NumPDBViolations", (json_int_t)v->num_pdb_violations);
}

static void candidates_push(ks_candidates *c, ks_candidate x) {
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->v = ks_xrealloc(c->v, c->cap * sizeof(*c->v));
    }
    c->v[c->n++] = x;
}

/* upstream convertToVictims for one node. A null entry reads as no
 * victims (upstream dereferences it). */
static ks_status *meta_victims(const ks_extender *e, const ks_snapshot *snap, const char *node,
                               const json_t *mv, ks_candidate *out) {
    memset(out, 0, sizeof(*out));
    const ks_node_info *ni = ks_snapshot_get(snap, ks_intern(node));
    if (!ni || !ni->node) return ks_status_new(KS_ERROR, "nodeinfo not found for node name \"%s\"", node);
    out->node = ni->name;
    const json_t *pods = field(mv, "Pods");
    const json_t *npdb = field(mv, "NumPDBViolations");
    out->victims.num_pdb_violations = json_is_integer(npdb) ? (int64_t)json_integer_value(npdb) : 0;
    size_t m = json_is_array(pods) ? json_array_size(pods) : 0;
    out->victims.pods = ks_xcalloc(m ? m : 1, sizeof(ks_pod *));
    for (size_t i = 0; i < m; i++) {
        const json_t *uid = field(json_array_get(pods, i), "UID");
        const char *u = json_is_string(uid) ? json_string_value(uid) : "";
        ks_pod *found = NULL;
        for (uint32_t k = 0; k < ni->npods && !found; k++)
            if (!strcmp(ni->pods[k]->uid ? ni->pods[k]->uid : "", u)) found = ni->pods[k];
        if (!found) {
            ks_victims_free(&out->victims);
            return ks_status_new(KS_ERROR,
                                 "extender: %s claims to preempt pod (UID: &{%s}) on node: %s, but the pod is not found on that node",
                                 e->c->url_prefix, u, node);
        }
        out->victims.pods[out->victims.npods++] = ks_pod_ref(found);
    }
    return NULL;
}

ks_status *ks_extender_preempt(ks_extender *e, const ks_pod *pod, const ks_snapshot *snap,
                               const ks_candidates *in, ks_candidates *out) {
    memset(out, 0, sizeof(*out));
    if (!e->c->preempt_verb || !*e->c->preempt_verb)
        return ks_status_new(KS_ERROR, "preempt verb is not defined for extender %s but run into ProcessPreemption",
                             e->c->url_prefix);
    bool meta = e->c->node_cache_capable;
    json_t *m = json_object();
    for (uint32_t i = 0; i < in->n; i++)
        json_object_set_new(m, ks_str(in->v[i].node), victims_json(&in->v[i].victims, meta));
    json_t *args = json_object();
    json_object_set_new(args, "Pod", pod_json(pod));
    json_object_set_new(args, "NodeNameToVictims", meta ? json_null() : m);
    json_object_set_new(args, "NodeNameToMetaVictims", meta ? m : json_null());
    json_t *res;
    ks_status *st = send_verb(e, e->c->preempt_verb, args, &res);
    if (st) return st;
    const json_t *got = field(res, "NodeNameToMetaVictims");
    if (!json_is_object(res) || (got && !json_is_null(got) && !json_is_object(got))) {
        st = ks_status_new(KS_ERROR, "extender at URL %s: preempt answer is not an ExtenderPreemptionResult",
                           e->c->url_prefix);
        goto out;
    }
    /* Go's map order is random; ksched keeps the candidates' order. */
    for (uint32_t i = 0; i < in->n && !st; i++) {
        const json_t *mv = json_is_object(got) ? json_object_get(got, ks_str(in->v[i].node)) : NULL;
        if (!mv) continue;
        ks_candidate c;
        st = meta_victims(e, snap, ks_str(in->v[i].node), mv, &c);
        if (!st) candidates_push(out, c);
    }
    const char *k;
    json_t *mv;
    if (json_is_object(got) && !st) {
        json_object_foreach((json_t *)got, k, mv) {
            ks_id id = ks_intern(k);
            bool known = false;
            for (uint32_t i = 0; i < in->n && !known; i++) known = in->v[i].node == id;
            if (known) continue;
            ks_candidate c;
            st = meta_victims(e, snap, k, mv, &c);
            if (st) break;
            candidates_push(out, c);
        }
    }
out:
    json_decref(res);
    if (st) ks_candidates_free(out);
    return st;
}

bool ks_extenders_support_preemption(ks_extender *const *exts, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (exts[i]->c->preempt_verb && *exts[i]->c->preempt_verb) return true;
    return false;
}

/* upstream's check of an extender's answer: a node without victims is
 * dropped for an ignorable extender, an error otherwise. */
static ks_status *check_victims(const ks_extender *e, ks_candidates *c) {
    for (uint32_t i = 0; i < c->n && !e->c->ignorable; i++)
        if (c->v[i].victims.npods == 0)
            return ks_status_new(KS_ERROR, "expected at least one victim pod on node \"%s\"", ks_str(c->v[i].node));
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->v[i].victims.npods > 0) {
            c->v[kept++] = c->v[i];
            continue;
        }
        ks_infof(2, "\"Ignored node for which the extender didn't report victims\" node=\"%s\" extender=\"%s\"",
                 ks_str(c->v[i].node), e->c->url_prefix);
        ks_victims_free(&c->v[i].victims);
    }
    c->n = kept;
    return NULL;
}

ks_status *ks_extenders_process_preemption(ks_extender *const *exts, size_t n, const ks_pod *pod,
                                           const ks_snapshot *snap, ks_candidates *cands) {
    for (size_t i = 0; i < n && cands->n > 0; i++) {
        ks_extender *e = exts[i];
        if (!e->c->preempt_verb || !*e->c->preempt_verb || !ks_extender_interested(e->c, pod)) continue;
        ks_candidates got;
        ks_status *st = ks_extender_preempt(e, pod, snap, cands, &got);
        if (st && e->c->ignorable) {
            char *msg = ks_status_message(st);
            ks_infof(2, "\"Skipped extender as it returned error and has ignorable flag set\" extender=\"%s\" err=\"%s\"",
                     e->c->url_prefix, msg);
            free(msg);
            ks_status_free(st);
            continue;
        }
        if (!st) st = check_victims(e, &got);
        if (st) {
            ks_candidates_free(&got);
            return st;
        }
        ks_candidates_free(cands);
        *cands = got;
    }
    return NULL;
}
