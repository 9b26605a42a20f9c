/* DynamicResources' claim writes: see claim_writes.h. */
#include "plugins/dynamicresources/claim_writes.h"

#include "api/quantity.h"
#include "codec/tree.h"
#include "framework/status.h"
#include "plugins/dynamicresources/allocator.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the REST form -------------------------------------------------------- */

static json_t *str_list(const char *const *v, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *requirements_json(const ks_requirement *r, uint32_t n) {
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        json_t *x = json_pack("{s:s, s:s}", "key", ks_str(r[i].key), "operator", ops[r[i].op]);
        if (r[i].nvalues) {
            json_t *vals = json_array();
            for (uint32_t k = 0; k < r[i].nvalues; k++) json_array_append_new(vals, json_string(ks_str(r[i].values[k])));
            json_object_set_new(x, "values", vals);
        }
        json_array_append_new(a, x);
    }
    return a;
}

/* status.allocation as the allocator's result serializes (v1). */
static json_t *allocation_json(const ks_allocation_result *al) {
    json_t *results = json_array();
    for (uint32_t i = 0; i < al->nresults; i++) {
        const ks_device_result *d = &al->results[i];
        json_t *x = json_pack("{s:s, s:s, s:s, s:s}", "request", d->request, "driver", d->driver, "pool", d->pool,
                              "device", d->device);
        if (d->has_admin_access) json_object_set_new(x, "adminAccess", json_boolean(d->admin_access));
        if (d->share_id) json_object_set_new(x, "shareID", json_string(d->share_id));
        if (d->nconsumed) {
            json_t *cc = json_object();
            for (uint32_t k = 0; k < d->nconsumed; k++) {
                char q[64];
                ks_quantity_format(&d->consumed[k].q, q, sizeof q);
                json_object_set_new(cc, d->consumed[k].name, json_string(q));
            }
            json_object_set_new(x, "consumedCapacity", cc);
        }
        json_array_append_new(results, x);
    }
    json_t *devices = json_pack("{s:o}", "results", results);
    if (al->nconfig) {
        json_t *cfg = json_array();
        for (uint32_t i = 0; i < al->nconfig; i++) {
            const ks_device_config *dc = &al->config[i];
            json_t *x = json_pack("{s:s}", "source", dc->from_class ? "FromClass" : "FromClaim");
            if (dc->nrequests) json_object_set_new(x, "requests", str_list(dc->requests, dc->nrequests));
            json_t *op = json_pack("{s:s}", "driver", dc->driver ? dc->driver : "");
            if (dc->parameters) {
                char *t = kt_to_json(dc->parameters, 0);
                json_t *pj = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
                free(t);
                if (pj) json_object_set_new(op, "parameters", pj);
            }
            json_object_set_new(x, "opaque", op);
            json_array_append_new(cfg, x);
        }
        json_object_set_new(devices, "config", cfg);
    }
    json_t *a = json_pack("{s:o}", "devices", devices);
    if (al->has_node_selector) {
        json_t *terms = json_array();
        for (uint32_t i = 0; i < al->node_selector.nterms; i++) {
            const ks_node_selector_term *t = &al->node_selector.terms[i];
            json_t *x = json_object();
            if (t->nexpr) json_object_set_new(x, "matchExpressions", requirements_json(t->exprs, t->nexpr));
            if (t->nfields) json_object_set_new(x, "matchFields", requirements_json(t->fields, t->nfields));
            json_array_append_new(terms, x);
        }
        json_object_set_new(a, "nodeSelector", json_pack("{s:o}", "nodeSelectorTerms", terms));
    }
    return a;
}


static json_t *status_of(json_t *o) {
    json_t *st = json_object_get(o, "status");
    if (!json_is_object(st)) json_object_set_new(o, "status", st = json_object());
    return st;
}

static bool has_finalizer(json_t *o) {
    json_t *f = json_object_get(json_object_get(o, "metadata"), "finalizers");
    size_t i;
    json_t *v;
    json_array_foreach(f, i, v) if (!strcmp(json_string_value(v) ? json_string_value(v) : "", KS_DRA_FINALIZER)) return true;
    return false;
}

/* upstream bindClaim's checks, on every version it tries */
static ks_status *reserve_checks(json_t *o, const ks_claim_update *u) {
    char ref[600];
    json_t *md = json_object_get(o, "metadata");
    if (json_object_get(md, "deletionTimestamp") && !json_is_null(json_object_get(md, "deletionTimestamp")))
        return ks_status_new(KS_ERROR, "claim %s got deleted in the meantime", ks_dra_claim_ref(u->claim, ref, sizeof ref));
    json_t *cur = json_object_get(json_object_get(o, "status"), "allocation");
    if (u->allocation && cur && !json_is_null(cur))
        return ks_status_new(KS_ERROR, "claim %s got allocated elsewhere in the meantime",
                             ks_dra_claim_ref(u->claim, ref, sizeof ref));
    return NULL;
}

static ks_status *finalizer_edit(json_t *o, const ks_object_write *w) {
    ks_status *st = reserve_checks(o, w->arg);
    if (st) return st;
    if (has_finalizer(o)) return ks_status_new(KS_SKIP, NULL);
    json_t *md = json_object_get(o, "metadata");
    json_t *f = json_object_get(md, "finalizers");
    if (!json_is_array(f)) json_object_set_new(md, "finalizers", f = json_array());
    json_array_append_new(f, json_string(KS_DRA_FINALIZER));
    return NULL;
}

static ks_status *reserve_edit(json_t *o, const ks_object_write *w) {
    const ks_claim_update *u = w->arg;
    ks_status *st = reserve_checks(o, u);
    if (st) return st;
    if (u->allocation) json_object_set_new(status_of(o), "allocation", allocation_json(u->allocation));
    json_t *s = status_of(o), *rf = json_object_get(s, "reservedFor");
    if (!json_is_array(rf)) json_object_set_new(s, "reservedFor", rf = json_array());
    json_array_append_new(rf, json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", ks_str(u->pod->name), "uid",
                                        u->pod->uid ? u->pod->uid : ""));
    return NULL;
}

/* upstream's Unreserve patch: no need for the latest version */
static json_t *unreserve_patch(const ks_object_write *w) {
    const ks_claim_update *u = w->arg;
    const ks_resource_claim *c = u->claim;
    return json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "uid", c->uid ? c->uid : "", "status", "reservedFor",
                     "$patch", "delete", "uid", u->pod && u->pod->uid ? u->pod->uid : "");
}

/* PostFilter: the plugin's version without reservation and allocation */
static ks_status *deallocate_edit(json_t *o, const ks_object_write *w) {
    (void)w;
    json_t *st = status_of(o);
    json_object_del(st, "reservedFor");
    json_object_del(st, "allocation");
    json_object_del(st, "devices");
    return NULL;
}

/* ---- the in-memory form ------------------------------------------------------ */

/* The finalizer comes with the status below, as one version. */
static void *reserve_apply(const void *cur_, const ks_object_write *w, ks_status **err) {
    const ks_resource_claim *cur = cur_;
    const ks_claim_update *u = w->arg;
    (void)err;
    ks_claim_consumer *r = ks_xcalloc(cur->nreserved + 1, sizeof(*r));
    if (cur->nreserved) memcpy(r, cur->reserved, cur->nreserved * sizeof(*r));
    r[cur->nreserved] = (ks_claim_consumer){NULL, "pods", ks_str(u->pod->name), u->pod->uid ? u->pod->uid : ""};
    ks_resource_claim *nw = ks_claim_with_status(cur, u->allocation ? u->allocation : cur->allocation, r,
                                                 cur->nreserved + 1, u->allocation != NULL);
    free(r);
    return nw;
}

static void *unreserve_apply(const void *cur_, const ks_object_write *w, ks_status **err) {
    const ks_resource_claim *cur = cur_;
    const ks_claim_update *u = w->arg;
    (void)err;
    const char *uid = u->pod && u->pod->uid ? u->pod->uid : "";
    ks_claim_consumer *r = ks_xcalloc(cur->nreserved + 1, sizeof(*r));
    uint32_t n = 0;
    for (uint32_t i = 0; i < cur->nreserved; i++)
        if (!cur->reserved[i].uid || strcmp(cur->reserved[i].uid, uid) != 0) r[n++] = cur->reserved[i];
    ks_resource_claim *nw = ks_claim_with_status(cur, cur->allocation, r, n, false);
    free(r);
    return nw;
}

static void *deallocate_apply(const void *cur, const ks_object_write *w, ks_status **err) {
    (void)w;
    (void)err;
    return ks_claim_with_status(cur, NULL, NULL, 0, false);
}

/* ---- the calls --------------------------------------------------------------- */

static const ks_call_rules rules = {.name = "resource_claim_update"};

static ks_status *make(const ks_object_write *w, ks_call_exec exec, void *ctx, const ks_pod *pod) {
    ks_api_call call = {.type = KS_CALL_OBJECT_WRITE, .pod = pod, .write = w, .rules = &rules};
    return exec(ctx, &call);
}

ks_status *ks_dra_claim_write(const ks_claim_update *u, ks_resource_claim **written, ks_call_exec exec, void *ctx) {
    const ks_resource_claim *c = u->claim;
    if (written) *written = NULL;
    char ns[256], noun[600];
    snprintf(ns, sizeof ns, "%s", ks_str(c->ns));
    snprintf(noun, sizeof noun, "claim %s/%s", ks_str(c->ns), ks_str(c->name));
    ks_object_write w = {.kind = "ResourceClaim",
                         .ns = ns,
                         .name = ks_str(c->name),
                         .subresource = "status",
                         .resource_version = c->resource_version,
                         .noun = noun,
                         .arg = u,
                         .written = (void **)written};
    switch (u->op) {
    case KS_CLAIM_UNRESERVE:
        w.verb = KS_WRITE_STRATEGIC_PATCH;
        w.patch = unreserve_patch;
        w.apply = unreserve_apply;
        return make(&w, exec, ctx, u->pod);
    case KS_CLAIM_DEALLOCATE:
        w.verb = KS_WRITE_UPDATE;
        w.edit = deallocate_edit;
        w.apply = deallocate_apply;
        return make(&w, exec, ctx, u->pod);
    case KS_CLAIM_RESERVE: break;
    }
    ks_resource_claim *fin = NULL;
    if (u->allocation) {
        /* the finalizer first, in the object (no in-memory form: it comes
         * with the status, as one version) */
        ks_object_write f = w;
        f.subresource = NULL;
        f.verb = KS_WRITE_UPDATE;
        f.edit = finalizer_edit;
        f.action = "add finalizer to";
        f.written = (void **)&fin;
        ks_status *st = make(&f, exec, ctx, u->pod);
        if (st) {
            if (fin) KS_OBJECT_UNREF(fin);
            return st;
        }
    }
    /* the status from the version just written, else the plugin's */
    w.resource_version = fin ? fin->resource_version : c->resource_version;
    w.verb = KS_WRITE_UPDATE;
    w.edit = reserve_edit;
    w.apply = reserve_apply;
    w.action = u->allocation ? "add allocation and reservation to" : "add reservation to";
    ks_status *st = make(&w, exec, ctx, u->pod);
    if (fin) KS_OBJECT_UNREF(fin);
    return st;
}
