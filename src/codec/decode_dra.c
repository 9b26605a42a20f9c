/* The resource.k8s.io kinds: DeviceClass, ResourceClaim,
 * ResourceClaimTemplate, ResourceSlice. Version v1 is the reference;
 * v1beta2 has the same shape, and v1beta1 (requests without `exactly`,
 * device fields under `basic`) is converted as the API server converts it.
 * Defaults are the API server's: allocationMode ExactCount, count 1. */
#include "api/dra.h"
#include "api/quantity.h"
#include "codec/decode_internal.h"

#include <stdlib.h>
#include <string.h>

static bool is_v1beta1(const ks_tree *t) {
    const ks_tree *av = kt_get(t, "apiVersion");
    return av && av->type == KT_STRING && strcmp(av->text, "resource.k8s.io/v1beta1") == 0;
}

static const char *str_field(dec *d, const ks_tree *m, const char *key, const kpath *p) {
    const char *s = NULL;
    d_str(d, kt_get(m, key), KP(p, key), &s);
    return dkeep(d, s);
}

/* A list of strings, kept. */
static uint32_t d_strs(dec *d, const ks_tree *v, const kpath *p, const char ***out) {
    *out = NULL;
    if (!d_seq(d, v, p) || !v->n) return 0;
    const char **s = ks_arena_calloc(d->a, v->n, sizeof(char *));
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const char *x = NULL;
        if (d_str(d, v->items[i], KI(p, i), &x)) s[n++] = dkeep(d, x);
    }
    *out = s;
    return n;
}

/* selectors: [{cel: {expression: ...}}]; an entry without cel is kept as
 * NULL (upstream: "CEL expression empty (unsupported selector type?)"). */
static uint32_t d_selectors(dec *d, const ks_tree *v, const kpath *p, const char ***out) {
    *out = NULL;
    if (!d_seq(d, v, p) || !v->n) return 0;
    const char **s = ks_arena_calloc(d->a, v->n, sizeof(char *));
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *sel = v->items[i];
        const kpath *ip = KI(p, i);
        if (!d_map(d, sel, ip)) continue;
        const ks_tree *cel = kt_get(sel, "cel");
        if (!d_map(d, cel, KP(ip, "cel"))) continue;
        const char *e = NULL;
        d_str(d, kt_get(cel, "expression"), KP(KP(ip, "cel"), "expression"), &e);
        s[i] = dkeep(d, e ? e : "");
    }
    *out = s;
    return v->n;
}

/* config: [{requests: [...], opaque: {driver, parameters}}] */
static uint32_t d_configs(dec *d, const ks_tree *v, const kpath *p, ks_device_config **out, bool with_source) {
    *out = NULL;
    if (!d_seq(d, v, p) || !v->n) return 0;
    ks_device_config *c = ks_arena_calloc(d->a, v->n, sizeof(*c));
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *x = v->items[i];
        const kpath *ip = KI(p, i);
        if (!d_map(d, x, ip)) continue;
        ks_device_config *cfg = &c[n++];
        cfg->nrequests = d_strs(d, kt_get(x, "requests"), KP(ip, "requests"), &cfg->requests);
        const ks_tree *op = kt_get(x, "opaque");
        if (d_map(d, op, KP(ip, "opaque"))) {
            cfg->driver = str_field(d, op, "driver", KP(ip, "opaque"));
            /* without a document to reference (API objects), a copy */
            const ks_tree *params = kt_get(op, "parameters");
            cfg->parameters = d->ctx->doc || !params ? params : kt_copy(d->a, params);
        }
        if (with_source) {
            static const char *const sources[] = {"FromClass", "FromClaim", NULL};
            cfg->from_class = d_enum(d, kt_get(x, "source"), KP(ip, "source"), sources) == 0;
        }
    }
    *out = c;
    return n;
}

/* A string field kept, "" when absent. */
static const char *str_or_empty(dec *d, const ks_tree *m, const char *key, const kpath *p) {
    const char *s = str_field(d, m, key, p);
    return s ? s : "";
}

/* tolerations: [{key, operator, value, effect, tolerationSeconds}] */
static uint32_t d_tolerations(dec *d, const ks_tree *v, const kpath *p, ks_device_toleration **out) {
    *out = NULL;
    if (!d_seq(d, v, p) || !v->n) return 0;
    ks_device_toleration *t = ks_arena_calloc(d->a, v->n, sizeof(*t));
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *x = v->items[i];
        const kpath *ip = KI(p, i);
        if (!d_map(d, x, ip)) continue;
        ks_device_toleration *o = &t[n++];
        o->key = str_or_empty(d, x, "key", ip);
        o->op = str_or_empty(d, x, "operator", ip);
        o->value = str_or_empty(d, x, "value", ip);
        o->effect = str_or_empty(d, x, "effect", ip);
        int64_t secs;
        d_int64(d, kt_get(x, "tolerationSeconds"), KP(ip, "tolerationSeconds"), &secs);
    }
    *out = t;
    return n;
}

/* taints: [{key, value, effect, timeAdded}] */
static void d_taint(dec *d, const ks_tree *x, const kpath *p, ks_device_taint *o) {
    o->key = str_or_empty(d, x, "key", p);
    o->value = str_or_empty(d, x, "value", p);
    o->effect = str_or_empty(d, x, "effect", p);
    int64_t ts;
    d_time(d, kt_get(x, "timeAdded"), KP(p, "timeAdded"), &ts);
}

static uint32_t d_taints(dec *d, const ks_tree *v, const kpath *p, ks_device_taint **out) {
    *out = NULL;
    if (!d_seq(d, v, p) || !v->n) return 0;
    ks_device_taint *t = ks_arena_calloc(d->a, v->n, sizeof(*t));
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n; i++)
        if (d_map(d, v->items[i], KI(p, i))) d_taint(d, v->items[i], KI(p, i), &t[n++]);
    *out = t;
    return n;
}

/* counters: {name: {value: Q}} */
static uint32_t d_counters(dec *d, const ks_tree *v, const kpath *p, ks_device_counter **out) {
    *out = NULL;
    if (!d_map(d, v, p) || !v->n) return 0;
    ks_device_counter *c = ks_arena_calloc(d->a, v->n, sizeof(*c));
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *x = v->items[i];
        const kpath *kp = KP(p, v->keys[i]);
        if (!d_map(d, x, kp)) continue;
        ks_device_counter *o = &c[n++];
        o->name = dkeep(d, v->keys[i]);
        const ks_tree *val = kt_get(x, "value");
        if (d_absent(val)) derr(d, x, KP(kp, "value"), "required");
        else d_quantity(d, val, KP(kp, "value"), &o->nano);
    }
    *out = c;
    return n;
}

/* sharedCounters: [{name, counters}]; consumesCounters: [{counterSet, counters}] */
static uint32_t d_counter_sets(dec *d, const ks_tree *v, const kpath *p, const char *name_key, ks_counter_set **out) {
    *out = NULL;
    if (!d_seq(d, v, p) || !v->n) return 0;
    ks_counter_set *c = ks_arena_calloc(d->a, v->n, sizeof(*c));
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *x = v->items[i];
        const kpath *ip = KI(p, i);
        if (!d_map(d, x, ip)) continue;
        ks_counter_set *o = &c[n++];
        o->name = str_or_empty(d, x, name_key, ip);
        o->ncounters = d_counters(d, kt_get(x, "counters"), KP(ip, "counters"), &o->counters);
    }
    *out = c;
    return n;
}

/* {name: Q}: quantities by name, as written */
static uint32_t d_named_quantities(dec *d, const ks_tree *v, const kpath *p, ks_named_quantity **out) {
    *out = NULL;
    if (!d_map(d, v, p) || !v->n) return 0;
    ks_named_quantity *q = ks_arena_calloc(d->a, v->n, sizeof(*q));
    for (uint32_t i = 0; i < v->n; i++) {
        q[i].name = dkeep(d, v->keys[i]);
        d_quantity_q(d, v->items[i], KP(p, v->keys[i]), &q[i].q);
    }
    *out = q;
    return v->n;
}

/* a device capacity's requestPolicy */
static const ks_capacity_policy *d_capacity_policy(dec *d, const ks_tree *v, const kpath *p) {
    if (!d_map(d, v, p)) return NULL;
    ks_capacity_policy *o = ks_arena_calloc(d->a, 1, sizeof(*o));
    const ks_tree *f;
    if (!d_absent(f = kt_get(v, "default"))) o->has_default = d_quantity_q(d, f, KP(p, "default"), &o->def);
    const ks_tree *vals = kt_get(v, "validValues");
    if (d_seq(d, vals, KP(p, "validValues")) && vals->n) {
        o->valid = ks_arena_calloc(d->a, vals->n, sizeof(ks_quantity));
        for (uint32_t i = 0; i < vals->n; i++)
            if (d_quantity_q(d, vals->items[i], KI(KP(p, "validValues"), i), &o->valid[o->nvalid])) o->nvalid++;
    }
    const ks_tree *r = kt_get(v, "validRange");
    const kpath *rp = KP(p, "validRange");
    if (d_map(d, r, rp)) {
        o->has_range = true;
        if (!d_absent(f = kt_get(r, "min"))) o->has_min = d_quantity_q(d, f, KP(rp, "min"), &o->min);
        if (!d_absent(f = kt_get(r, "max"))) o->has_max = d_quantity_q(d, f, KP(rp, "max"), &o->max);
        if (!d_absent(f = kt_get(r, "step"))) o->has_step = d_quantity_q(d, f, KP(rp, "step"), &o->step);
    }
    return o;
}

static void d_subrequest(dec *d, const ks_tree *x, const kpath *p, ks_device_subrequest *r) {
    static const char *const modes[] = {"ExactCount", "All", NULL};
    r->device_class = str_field(d, x, "deviceClassName", p);
    if (!r->device_class) r->device_class = "";
    r->nselectors = d_selectors(d, kt_get(x, "selectors"), KP(p, "selectors"), &r->selectors);
    const ks_tree *mv = kt_get(x, "allocationMode");
    const char *mode = NULL;
    if (d_str(d, mv, KP(p, "allocationMode"), &mode) && *mode) {
        r->mode_text = dkeep(d, mode);
        int k = -1;
        for (int i = 0; modes[i]; i++)
            if (strcmp(modes[i], mode) == 0) k = i;
        if (k < 0) r->bad_mode = true;
        else r->mode = (ks_alloc_mode)k;
    } else {
        r->mode = KS_ALLOC_EXACT_COUNT;
        r->mode_text = "ExactCount";
    }
    d_int64(d, kt_get(x, "count"), KP(p, "count"), &r->count);
    if (r->mode == KS_ALLOC_EXACT_COUNT && !r->bad_mode && r->count == 0) r->count = 1;
    const ks_tree *cap = kt_get(x, "capacity");
    r->has_capacity = d_map(d, cap, KP(p, "capacity"));
    if (r->has_capacity)
        r->ncap_requests = d_named_quantities(d, kt_get(cap, "requests"), KP(KP(p, "capacity"), "requests"),
                                              &r->cap_requests);
    r->ntolerations = d_tolerations(d, kt_get(x, "tolerations"), KP(p, "tolerations"), &r->tolerations);
}

static void d_requests(dec *d, const ks_tree *devs, const kpath *dp, bool beta1, ks_resource_claim *c) {
    const ks_tree *reqs = kt_get(devs, "requests");
    const kpath *rp = KP(dp, "requests");
    if (!d_seq(d, reqs, rp) || !reqs->n) return;
    c->requests = ks_arena_calloc(d->a, reqs->n, sizeof(ks_device_request));
    for (uint32_t i = 0; i < reqs->n; i++) {
        const ks_tree *x = reqs->items[i];
        const kpath *ip = KI(rp, i);
        if (!d_map(d, x, ip)) continue;
        ks_device_request *r = &c->requests[c->nrequests++];
        r->name = str_field(d, x, "name", ip);
        if (!r->name) r->name = "";
        const ks_tree *first = kt_get(x, "firstAvailable");
        const kpath *fp = KP(ip, "firstAvailable");
        const ks_tree *ex = beta1 ? x : kt_get(x, "exactly");
        const kpath *ep = beta1 ? ip : KP(ip, "exactly");
        if (d_seq(d, first, fp) && first->n) {
            r->first = ks_arena_calloc(d->a, first->n, sizeof(ks_device_subrequest));
            for (uint32_t k = 0; k < first->n; k++) {
                const ks_tree *s = first->items[k];
                if (!d_map(d, s, KI(fp, k))) continue;
                ks_device_subrequest *sr = &r->first[r->nfirst++];
                sr->name = str_field(d, s, "name", KI(fp, k));
                if (!sr->name) sr->name = "";
                d_subrequest(d, s, KI(fp, k), sr);
            }
        } else if (d_map(d, ex, ep)) {
            r->has_exactly = true;
            r->exactly.name = r->name;
            d_subrequest(d, ex, ep, &r->exactly);
            const ks_tree *aa = kt_get(ex, "adminAccess");
            r->has_admin_access = d_bool(d, aa, KP(ep, "adminAccess"), &r->admin_access);
        }
    }
}

static void d_constraints(dec *d, const ks_tree *v, const kpath *p, ks_resource_claim *c) {
    if (!d_seq(d, v, p) || !v->n) return;
    c->constraints = ks_arena_calloc(d->a, v->n, sizeof(ks_device_constraint));
    for (uint32_t i = 0; i < v->n; i++) {
        const ks_tree *x = v->items[i];
        const kpath *ip = KI(p, i);
        if (!d_map(d, x, ip)) continue;
        ks_device_constraint *k = &c->constraints[c->nconstraints++];
        k->nrequests = d_strs(d, kt_get(x, "requests"), KP(ip, "requests"), &k->requests);
        k->match_attribute = str_field(d, x, "matchAttribute", ip);
        k->distinct_attribute = str_field(d, x, "distinctAttribute", ip);
    }
}

/* status.allocation */
static ks_allocation_result *d_allocation(dec *d, const ks_tree *v, const kpath *p) {
    if (!d_map(d, v, p)) return NULL;
    ks_allocation_result *r = ks_arena_alloc(d->a, sizeof(*r));
    const ks_tree *devs = kt_get(v, "devices");
    const kpath *dp = KP(p, "devices");
    if (d_map(d, devs, dp)) {
        const ks_tree *res = kt_get(devs, "results");
        const kpath *rp = KP(dp, "results");
        if (d_seq(d, res, rp) && res->n) {
            r->results = ks_arena_calloc(d->a, res->n, sizeof(ks_device_result));
            for (uint32_t i = 0; i < res->n; i++) {
                const ks_tree *x = res->items[i];
                const kpath *ip = KI(rp, i);
                if (!d_map(d, x, ip)) continue;
                ks_device_result *dr = &r->results[r->nresults++];
                dr->request = str_field(d, x, "request", ip);
                dr->driver = str_field(d, x, "driver", ip);
                dr->pool = str_field(d, x, "pool", ip);
                dr->device = str_field(d, x, "device", ip);
                if (!dr->request) dr->request = "";
                if (!dr->driver) dr->driver = "";
                if (!dr->pool) dr->pool = "";
                if (!dr->device) dr->device = "";
                dr->id_hash = ks_device_id_hash(dr->driver, dr->pool, dr->device);
                dr->has_admin_access = d_bool(d, kt_get(x, "adminAccess"), KP(ip, "adminAccess"), &dr->admin_access);
                dr->share_id = str_field(d, x, "shareID", ip);
                dr->nconsumed = d_named_quantities(d, kt_get(x, "consumedCapacity"), KP(ip, "consumedCapacity"),
                                                   &dr->consumed);
            }
        }
        r->nconfig = d_configs(d, kt_get(devs, "config"), KP(dp, "config"), &r->config, true);
    }
    const ks_tree *ns = kt_get(v, "nodeSelector");
    if (!d_absent(ns)) r->has_node_selector = d_node_selector(d, ns, KP(p, "nodeSelector"), &r->node_selector);
    return r;
}

static void d_owners(dec *d, const ks_tree *md, ks_owner_ref **out, uint32_t *n) {
    const ks_tree *owners = kt_get(md, "ownerReferences");
    const kpath *op = KP(KP(NULL, "metadata"), "ownerReferences");
    if (!d_seq(d, owners, op) || !owners->n) return;
    *out = ks_arena_calloc(d->a, owners->n, sizeof(ks_owner_ref));
    for (uint32_t i = 0; i < owners->n; i++) {
        const ks_tree *o = owners->items[i];
        const kpath *ip = KI(op, i);
        if (!d_map(d, o, ip)) continue;
        ks_owner_ref *r = &(*out)[(*n)++];
        r->kind = d_id(d, kt_get(o, "kind"), KP(ip, "kind"));
        r->api_version = str_field(d, o, "apiVersion", ip);
        r->name = str_field(d, o, "name", ip);
        r->uid = str_field(d, o, "uid", ip);
        d_bool(d, kt_get(o, "controller"), KP(ip, "controller"), &r->controller);
    }
}

/* A claim's spec.devices into c (ResourceClaim and the template's spec). */
static void d_claim_spec(dec *d, const ks_tree *spec, const kpath *sp, bool beta1, ks_resource_claim *c) {
    if (!d_map(d, spec, sp)) return;
    const ks_tree *devs = kt_get(spec, "devices");
    const kpath *dp = KP(sp, "devices");
    if (!d_map(d, devs, dp)) return;
    d_requests(d, devs, dp, beta1, c);
    d_constraints(d, kt_get(devs, "constraints"), KP(dp, "constraints"), c);
    c->nconfig = d_configs(d, kt_get(devs, "config"), KP(dp, "config"), &c->config, false);
}

ks_resource_claim *ks_decode_resource_claim(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_resource_claim, o, "resourceclaim", 1024);
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        o->uid = m.uid;
        o->deleting = m.has_deletion;
        o->annotations = m.annotations;
        const ks_tree *md = kt_get(t, "metadata");
        o->resource_version = str_field(d, md, "resourceVersion", KP(NULL, "metadata"));
        o->nfinalizers = d_strs(d, kt_get(md, "finalizers"), KP(KP(NULL, "metadata"), "finalizers"), &o->finalizers);
        d_owners(d, md, &o->owners, &o->nowners);
        bool beta1 = is_v1beta1(t);
        d_claim_spec(d, kt_get(t, "spec"), KP(NULL, "spec"), beta1, o);
        if (ctx->doc && !beta1) o->spec_tree = kt_get(t, "spec");
        const ks_tree *st = kt_get(t, "status");
        const kpath *stp = KP(NULL, "status");
        if (d_map(d, st, stp)) {
            o->allocation = d_allocation(d, kt_get(st, "allocation"), KP(stp, "allocation"));
            const ks_tree *rf = kt_get(st, "reservedFor");
            const kpath *rfp = KP(stp, "reservedFor");
            if (d_seq(d, rf, rfp) && rf->n) {
                o->reserved = ks_arena_calloc(d->a, rf->n, sizeof(ks_claim_consumer));
                for (uint32_t i = 0; i < rf->n; i++) {
                    const ks_tree *x = rf->items[i];
                    if (!d_map(d, x, KI(rfp, i))) continue;
                    ks_claim_consumer *cc = &o->reserved[o->nreserved++];
                    cc->api_group = str_field(d, x, "apiGroup", KI(rfp, i));
                    cc->resource = str_field(d, x, "resource", KI(rfp, i));
                    cc->name = str_field(d, x, "name", KI(rfp, i));
                    cc->uid = str_field(d, x, "uid", KI(rfp, i));
                }
            }
            const ks_tree *ds = kt_get(st, "devices");
            o->has_device_status = d_seq(d, ds, KP(stp, "devices")) && ds->n;
        }
    }
    DEC_FINISH(o);
}

ks_claim_template *ks_decode_claim_template(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_claim_template, o, "resourceclaimtemplate", 1024);
    if (d_map(d, t, NULL) && d_meta(d, t, true, &m)) {
        o->ns = m.ns;
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (!d_map(d, spec, sp)) {
            if (d_absent(spec)) derr(d, t, sp, "required");
        } else {
            const ks_tree *md = kt_get(spec, "metadata");
            if (d_map(d, md, KP(sp, "metadata"))) {
                d_labels(d, kt_get(md, "labels"), KP(KP(sp, "metadata"), "labels"), &o->labels);
                d_labels(d, kt_get(md, "annotations"), KP(KP(sp, "metadata"), "annotations"), &o->annotations);
            }
            o->spec = ctx->doc && !is_v1beta1(t) ? kt_get(spec, "spec") : NULL;
            ks_resource_claim *c = ks_arena_alloc(d->a, sizeof(*c));
            c->arena = d->a;
            c->ns = o->ns;
            d_claim_spec(d, kt_get(spec, "spec"), KP(sp, "spec"), is_v1beta1(t), c);
            o->claim = c;
        }
    }
    DEC_FINISH(o);
}

/* ---- ResourceSlice ------------------------------------------------------------- */

/* "domain/id" split; an unqualified name takes the driver as domain. */
static void split_name(dec *d, const char *name, const char *driver, const char **domain, const char **id) {
    const char *slash = strchr(name, '/');
    if (!slash) {
        *domain = driver;
        *id = name;
        return;
    }
    *domain = ks_arena_strndup(d->a, name, (size_t)(slash - name));
    *id = slash + 1;
}

static void d_device(dec *d, const ks_tree *x, const kpath *p, const char *driver, bool beta1, ks_device *dev) {
    dev->name = str_field(d, x, "name", p);
    if (!dev->name) dev->name = "";
    const kpath *basic = KP(p, "basic");
    const ks_tree *body = beta1 ? kt_get(x, "basic") : x;
    const kpath *bp = beta1 ? basic : p;
    if (beta1 && !d_map(d, body, bp)) return;
    dev->cel.driver = driver;
    const ks_tree *attrs = kt_get(body, "attributes");
    const kpath *ap = KP(bp, "attributes");
    if (d_map(d, attrs, ap) && attrs->n) {
        ks_cel_attr *a = ks_arena_calloc(d->a, attrs->n, sizeof(*a));
        for (uint32_t i = 0; i < attrs->n; i++) {
            const ks_tree *v = attrs->items[i];
            const kpath *kp = KP(ap, attrs->keys[i]);
            if (!d_map(d, v, kp)) continue;
            ks_cel_attr *at = &a[dev->cel.nattrs++];
            at->name = dkeep(d, attrs->keys[i]);
            split_name(d, at->name, driver, &at->domain, &at->id);
            at->kind = KS_CEL_ATTR_NONE;
            const ks_tree *f;
            if (!d_absent(f = kt_get(v, "int"))) {
                if (d_int64(d, f, KP(kp, "int"), &at->i)) at->kind = KS_CEL_ATTR_INT;
            } else if (!d_absent(f = kt_get(v, "bool"))) {
                if (d_bool(d, f, KP(kp, "bool"), &at->b)) at->kind = KS_CEL_ATTR_BOOL;
            } else if (!d_absent(f = kt_get(v, "string"))) {
                if (d_str(d, f, KP(kp, "string"), &at->s)) at->kind = KS_CEL_ATTR_STRING;
                at->s = dkeep(d, at->s);
            } else if (!d_absent(f = kt_get(v, "version"))) {
                if (d_str(d, f, KP(kp, "version"), &at->s)) at->kind = KS_CEL_ATTR_VERSION;
                at->s = dkeep(d, at->s);
            }
        }
        dev->cel.attrs = a;
    }
    const ks_tree *caps = kt_get(body, "capacity");
    const kpath *cp = KP(bp, "capacity");
    if (d_map(d, caps, cp) && caps->n) {
        ks_cel_capacity *c = ks_arena_calloc(d->a, caps->n, sizeof(*c));
        dev->cap_values = ks_arena_calloc(d->a, caps->n, sizeof(ks_quantity));
        dev->cap_policies = ks_arena_calloc(d->a, caps->n, sizeof(ks_capacity_policy *));
        for (uint32_t i = 0; i < caps->n; i++) {
            const ks_tree *v = caps->items[i];
            const kpath *kp = KP(cp, caps->keys[i]);
            if (!d_map(d, v, kp)) continue;
            uint32_t k = dev->cel.ncaps++;
            ks_cel_capacity *q = &c[k];
            q->name = dkeep(d, caps->keys[i]);
            split_name(d, q->name, driver, &q->domain, &q->id);
            const ks_tree *val = kt_get(v, "value");
            if (d_absent(val)) derr(d, v, KP(kp, "value"), "required");
            else if (d_quantity_q(d, val, KP(kp, "value"), &dev->cap_values[k])) q->nano = dev->cap_values[k].nano;
            dev->cap_policies[k] = d_capacity_policy(d, kt_get(v, "requestPolicy"), KP(kp, "requestPolicy"));
        }
        dev->cel.caps = c;
    }
    const ks_tree *f;
    dev->nconsumes =
        d_counter_sets(d, kt_get(body, "consumesCounters"), KP(bp, "consumesCounters"), "counterSet", &dev->consumes);
    dev->has_binding_conditions = d_seq(d, f = kt_get(body, "bindingConditions"), KP(bp, "bindingConditions")) && f->n;
    d_bool(d, kt_get(body, "bindsToNode"), KP(bp, "bindsToNode"), &dev->binds_to_node);
    dev->ntaints = d_taints(d, kt_get(body, "taints"), KP(bp, "taints"), &dev->taints);
    d_bool(d, kt_get(body, "allowMultipleAllocations"), KP(bp, "allowMultipleAllocations"),
           &dev->cel.allow_multiple_allocations);
    dev->node_name = d_id(d, kt_get(body, "nodeName"), KP(bp, "nodeName"));
    d_bool(d, kt_get(body, "allNodes"), KP(bp, "allNodes"), &dev->all_nodes);
    const ks_tree *ns = kt_get(body, "nodeSelector");
    if (!d_absent(ns)) dev->has_node_selector = d_node_selector(d, ns, KP(bp, "nodeSelector"), &dev->node_selector);
}

ks_resource_slice *ks_decode_resource_slice(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_resource_slice, o, "resourceslice", 1024);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (!d_map(d, spec, sp)) {
            if (d_absent(spec)) derr(d, t, sp, "required");
        } else {
            o->driver = str_field(d, spec, "driver", sp);
            if (!o->driver || !*o->driver) derr(d, spec, KP(sp, "driver"), "required");
            if (!o->driver) o->driver = "";
            const ks_tree *pool = kt_get(spec, "pool");
            const kpath *pp = KP(sp, "pool");
            if (!d_map(d, pool, pp)) {
                derr(d, spec, pp, "required");
            } else {
                o->pool = str_field(d, pool, "name", pp);
                d_int64(d, kt_get(pool, "generation"), KP(pp, "generation"), &o->generation);
                d_int64(d, kt_get(pool, "resourceSliceCount"), KP(pp, "resourceSliceCount"), &o->slice_count);
            }
            if (!o->pool) o->pool = "";
            o->node_name = d_id(d, kt_get(spec, "nodeName"), KP(sp, "nodeName"));
            d_bool(d, kt_get(spec, "allNodes"), KP(sp, "allNodes"), &o->all_nodes);
            o->has_per_device_node_selection = d_bool(d, kt_get(spec, "perDeviceNodeSelection"),
                                                      KP(sp, "perDeviceNodeSelection"), &o->per_device_node_selection);
            o->nshared_counters = d_counter_sets(d, kt_get(spec, "sharedCounters"), KP(sp, "sharedCounters"), "name",
                                                 &o->shared_counters);
            const ks_tree *ns = kt_get(spec, "nodeSelector");
            if (!d_absent(ns)) o->has_node_selector = d_node_selector(d, ns, KP(sp, "nodeSelector"), &o->node_selector);
            const ks_tree *devs = kt_get(spec, "devices");
            const kpath *dp = KP(sp, "devices");
            if (d_seq(d, devs, dp) && devs->n) {
                o->devices = ks_arena_calloc(d->a, devs->n, sizeof(ks_device));
                bool beta1 = is_v1beta1(t);
                for (uint32_t i = 0; i < devs->n; i++) {
                    if (!d_map(d, devs->items[i], KI(dp, i))) continue;
                    ks_device *dev = &o->devices[o->ndevices++];
                    d_device(d, devs->items[i], KI(dp, i), o->driver, beta1, dev);
                    dev->id_hash = ks_device_id_hash(o->driver, o->pool, dev->name);
                }
                for (uint32_t i = 1; i < o->ndevices && !o->duplicate_device; i++)
                    for (uint32_t k = 0; k < i; k++)
                        if (strcmp(o->devices[i].name, o->devices[k].name) == 0) {
                            o->duplicate_device = o->devices[i].name;
                            break;
                        }
            }
        }
    }
    DEC_FINISH(o);
}

ks_device_class *ks_decode_device_class(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_device_class, o, "deviceclass", 1024);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (d_map(d, spec, sp)) {
            o->nselectors = d_selectors(d, kt_get(spec, "selectors"), KP(sp, "selectors"), &o->selectors);
            o->nconfig = d_configs(d, kt_get(spec, "config"), KP(sp, "config"), &o->config, false);
        }
    }
    DEC_FINISH(o);
}

ks_device_taint_rule *ks_decode_device_taint_rule(const ks_tree *t, ks_decode_ctx *ctx) {
    DEC_NEW_OBJECT(ks_device_taint_rule, o, "devicetaintrule", 1024);
    if (d_map(d, t, NULL) && d_meta(d, t, false, &m)) {
        o->name = m.name;
        const ks_tree *spec = kt_get(t, "spec");
        const kpath *sp = KP(NULL, "spec");
        if (!d_map(d, spec, sp)) {
            if (d_absent(spec)) derr(d, t, sp, "required");
        } else {
            const ks_tree *sel = kt_get(spec, "deviceSelector");
            const kpath *selp = KP(sp, "deviceSelector");
            if (d_map(d, sel, selp)) {
                o->has_selector = true;
                o->device_class = str_field(d, sel, "deviceClassName", selp);
                o->driver = str_field(d, sel, "driver", selp);
                o->pool = str_field(d, sel, "pool", selp);
                o->device = str_field(d, sel, "device", selp);
                o->nselectors = d_selectors(d, kt_get(sel, "selectors"), KP(selp, "selectors"), &o->selectors);
            }
            const ks_tree *taint = kt_get(spec, "taint");
            const kpath *tp = KP(sp, "taint");
            if (d_map(d, taint, tp)) d_taint(d, taint, tp, &o->taint);
            else if (d_absent(taint)) derr(d, spec, tp, "required");
        }
    }
    DEC_FINISH(o);
}
