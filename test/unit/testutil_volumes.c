/* Volume plugin fixtures: see testutil_volumes.h. */
#include "testutil_volumes.h"

#include "backend/api_calls.h"
#include "codec/decode.h"
#include "codec/errors.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static char *base_yaml;

static const ks_objects *env_objects(void *ctx) {
    tv_env *e = ctx;
    e->view = ks_cluster_view(e->c);
    return &e->view;
}

/* The plugins' object writes (backend/api_calls.h), recorded as the
 * tests read them: a PV bound to a claim "pvc=pv", a claim to provision
 * "pvc@node"; claim writes "OP ns/claim pod [request=pool/device...]" and
 * applied to the cluster as the memory client does (the plugin's
 * in-memory form). */
static void record_volume(tv_env *e, const ks_object_write *w) {
    ks_cluster *c = e->c;
    size_t len = strlen(e->bound);
    int n = 0;
    if (!strcmp(w->kind, "PersistentVolume")) {
        for (uint32_t i = 0; i < c->pvs.n; i++) {
            if (strcmp(ks_str(c->pvs.v[i]->name), w->name)) continue;
            ks_pv *nw = w->apply(c->pvs.v[i], w, NULL);
            n = snprintf(e->bound + len, sizeof(e->bound) - len, "%s%s=%s", len ? " " : "", ks_str(nw->claim_name), w->name);
            KS_OBJECT_UNREF(nw);
        }
    } else if (!w->controller) {
        for (uint32_t i = 0; i < c->pvcs.n; i++) {
            if (strcmp(ks_str(c->pvcs.v[i]->name), w->name) || strcmp(ks_str(c->pvcs.v[i]->ns), w->ns)) continue;
            ks_pvc *nw = w->apply(c->pvcs.v[i], w, NULL);
            ks_id node = KS_ID_NONE;
            ks_labels_get(&nw->annotations, ks_intern("volume.kubernetes.io/selected-node"), &node);
            n = snprintf(e->bound + len, sizeof(e->bound) - len, "%s%s@%s", len ? " " : "", w->name,
                         node != KS_ID_NONE ? ks_str(node) : "");
            KS_OBJECT_UNREF(nw);
        }
    }
    if (n > 0 && (size_t)n < sizeof(e->bound) - len) e->nbind_calls++;
}

static ks_status *write_claim(tv_env *e, const ks_api_call *call) {
    const ks_object_write *w = call->write;
    if (!w->apply) return NULL; /* the finalizer: with the status */
    ks_cluster *c = e->c;
    for (uint32_t i = 0; i < c->resource_claims.n; i++) {
        ks_resource_claim *cur = c->resource_claims.v[i];
        if (strcmp(ks_str(cur->name), w->name) || strcmp(ks_str(cur->ns), w->ns)) continue;
        ks_resource_claim *nw = w->apply(cur, w, NULL);
        const char *op = nw->nreserved > cur->nreserved ? "RESERVE" : nw->allocation ? "UNRESERVE" : "DEALLOCATE";
        size_t len = strlen(e->claims);
        len += (size_t)snprintf(e->claims + len, sizeof(e->claims) - len, "%s%s %s/%s", len ? "; " : "", op, w->ns,
                                w->name);
        if (call->pod && len < sizeof(e->claims))
            len += (size_t)snprintf(e->claims + len, sizeof(e->claims) - len, " %s", ks_str(call->pod->name));
        const ks_allocation_result *a = !cur->allocation ? nw->allocation : NULL;
        for (uint32_t k = 0; a && k < a->nresults && len < sizeof(e->claims); k++)
            len += (size_t)snprintf(e->claims + len, sizeof(e->claims) - len, " %s=%s/%s", a->results[k].request,
                                    a->results[k].pool, a->results[k].device);
        c->resource_claims.v[i] = nw;
        if (w->written) *w->written = KS_OBJECT_REF(nw);
        KS_OBJECT_UNREF(cur);
        return NULL;
    }
    return ks_status_new(KS_ERROR, "resourceclaims.resource.k8s.io \"%s\" not found", w->name);
}

static ks_status *env_api_call(void *ctx, const ks_api_call *c) {
    tv_env *e = ctx;
    if (c->type != KS_CALL_OBJECT_WRITE) return NULL;
    const ks_object_write *w = c->write;
    if (w->written) *w->written = NULL;
    if (w->verb == KS_WRITE_AWAIT) return NULL;
    if (!strcmp(w->kind, "ResourceClaim")) {
        if (!e->claim_writes) return ks_status_new(KS_SKIP, "no claim writes");
        return write_claim(e, c);
    }
    record_volume(e, w);
    return NULL;
}

void tv_admit(tv_env *e) {
    char *err = NULL;
    if (!ks_cluster_admit(e->c, &err)) fail_msg("admit: %s", err);
}

void tv_claim_writes(tv_env *e) {
    e->claim_writes = true;
    ks_framework_env env = {.ctx = e, .objects = env_objects, .api_call = env_api_call};
    ks_framework_set_env(e->fw, &env);
}

static ks_cluster *load(const char *yaml) {
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    if (!ks_load_buffer(c, "test.yaml", yaml, strlen(yaml), &errs)) {
        for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
        fail();
    }
    ks_errors_free(&errs);
    return c;
}

static ks_snapshot *snapshot_of(const ks_cluster *c) {
    ks_pod **bound = ks_xcalloc(c->pods.n + 1, sizeof(*bound));
    size_t nb = 0;
    for (uint32_t i = 0; i < c->pods.n; i++)
        if (c->pods.v[i]->node_name != KS_ID_NONE) bound[nb++] = c->pods.v[i];
    ks_snapshot *s = ks_snapshot_from(c->nodes.v, c->nodes.n, bound, nb);
    free(bound);
    return s;
}

void tv_init(tv_env *e, const char *plugins, const char *yaml) {
    memset(e, 0, sizeof(*e));
    free(base_yaml);
    base_yaml = ks_xstrdup(yaml);
    e->c = load(yaml);
    e->snap = snapshot_of(e->c);
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, "apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "kind: KubeSchedulerConfiguration\n"
                   "profiles:\n"
                   "- schedulerName: default-scheduler\n"
                   "  plugins:\n"
                   "    multiPoint:\n"
                   "      enabled:\n"
                   "      - name: PrioritySort\n"
                   "      - name: DefaultBinder\n");
    for (const char *p = plugins; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        ks_sb_printf(&b, "      - name: %.*s\n", (int)n, p);
        p += n + (comma ? 1 : 0);
    }
    ks_sb_puts(&b, "      disabled:\n      - name: '*'\n");
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    e->cfg = ks_config_load_buffer("profile.yaml", ks_sb_str(&b), b.len, &errs);
    if (!e->cfg) {
        for (uint32_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.msgs[i]);
        fail();
    }
    ks_config_errors_free(&errs);
    ks_sb_free(&b);
    char *err = NULL;
    e->fw = ks_framework_new(NULL, &e->cfg->profiles[0], NULL, &err);
    if (!e->fw) {
        fprintf(stderr, "framework: %s\n", err);
        fail();
    }
    ks_framework_env env = {.ctx = e, .objects = env_objects, .api_call = env_api_call};
    ks_framework_set_env(e->fw, &env);
    ks_framework_set_snapshot(e->fw, e->snap);
}

void tv_reload(tv_env *e, const char *yaml) {
    char *all = ks_xasprintf("%s\n---\n%s", base_yaml, yaml);
    ks_cluster *old = e->c;
    ks_snapshot *old_snap = e->snap;
    e->c = load(all);
    free(all);
    e->snap = snapshot_of(e->c);
    ks_framework_set_snapshot(e->fw, e->snap);
    ks_snapshot_free(old_snap);
    ks_cluster_free(old);
}

void tv_free(tv_env *e) {
    if (e->st) ks_cycle_state_free(e->st);
    ks_framework_free(e->fw);
    ks_config_free(e->cfg);
    ks_snapshot_free(e->snap);
    ks_cluster_free(e->c);
    free(base_yaml);
    base_yaml = NULL;
    memset(e, 0, sizeof(*e));
}

ks_pod *tv_pod(tv_env *e, const char *name) {
    for (uint32_t i = 0; i < e->c->pods.n; i++)
        if (strcmp(ks_str(e->c->pods.v[i]->name), name) == 0) return e->c->pods.v[i];
    fail_msg("no pod %s", name);
    return NULL;
}

const char *tv_status(ks_status *s) {
    static char buf[1024];
    if (!s) return "Success";
    int n = snprintf(buf, sizeof(buf), "%s", ks_code_name(ks_status_code(s)));
    for (size_t i = 0; i < ks_status_nreasons(s) && n < (int)sizeof(buf); i++)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%s", i ? ", " : ": ", ks_status_reason(s, i));
    ks_status_free(s);
    return buf;
}

static int cmp_ni(const void *a, const void *b) {
    const ks_node_info *x = *(const ks_node_info *const *)a, *y = *(const ks_node_info *const *)b;
    return strcmp(ks_str(x->name), ks_str(y->name));
}

const char *tv_filter(tv_env *e, const char *pod_name) {
    static char out[4096];
    ks_pod *pod = tv_pod(e, pod_name);
    if (e->st) ks_cycle_state_free(e->st);
    e->st = ks_cycle_state_new();
    ks_pre_filter_result *r = NULL;
    ks_status *s = ks_framework_run_pre_filter(e->fw, e->st, pod, &r, NULL);
    if (s) {
        snprintf(out, sizeof(out), "%s", tv_status(s));
        return out;
    }
    size_t n = e->snap->nnodes;
    const ks_node_info **nis = ks_xcalloc(n + 1, sizeof(*nis));
    for (size_t i = 0; i < n; i++) nis[i] = e->snap->nodes[i];
    qsort(nis, n, sizeof(*nis), cmp_ni);
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = tv_status(ks_framework_run_filter(e->fw, e->st, pod, nis[i]));
        len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s %s", i ? "; " : "", ks_str(nis[i]->name), v);
        if (len >= sizeof(out)) break;
    }
    free(nis);
    /* every filter plugin skipped (index 0 and 1 are sort and binder) */
    bool all_skipped = true;
    for (uint32_t i = 0; i < e->fw->ep[KS_EP_FILTER].n; i++)
        if (!ks_bit_get(e->st->skip_filter, e->fw->ep[KS_EP_FILTER].v[i]->index)) all_skipped = false;
    if (all_skipped && len < sizeof(out)) snprintf(out + len, sizeof(out) - len, " (skip)");
    return out;
}

const char *tv_reserve(tv_env *e, const char *pod, const char *node) {
    return tv_status(ks_framework_run_reserve(e->fw, e->st, tv_pod(e, pod), node));
}

void tv_unreserve(tv_env *e, const char *pod, const char *node) {
    ks_framework_run_unreserve(e->fw, e->st, tv_pod(e, pod), node);
}

const char *tv_pre_bind(tv_env *e, const char *pod, const char *node) {
    ks_status *s = ks_framework_run_pre_bind_pre_flight(e->fw, e->st, tv_pod(e, pod), node);
    if (ks_status_code(s) == KS_SKIP) {
        ks_status_free(s);
        return "Skip";
    }
    if (s) return tv_status(s);
    return tv_status(ks_framework_run_pre_bind(e->fw, e->st, tv_pod(e, pod), node));
}

const char *tv_post_filter(tv_env *e, const char *pod) {
    ks_node_status_map *m = ks_node_status_map_new();
    for (size_t i = 0; i < e->snap->nnodes; i++)
        ks_node_status_map_set(m, ks_str(e->snap->nodes[i]->name), ks_status_new(KS_UNSCHEDULABLE, "x"));
    char *nominated = NULL;
    ks_status *s = ks_framework_run_post_filter(e->fw, e->st, tv_pod(e, pod), m, &nominated);
    free(nominated);
    ks_node_status_map_free(m);
    return tv_status(s);
}
