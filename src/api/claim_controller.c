/* What kube-controller-manager's resourceclaim controller does before the
 * scheduler sees a pod, for clusters loaded from manifests: a pod entry
 * that names a ResourceClaimTemplate gets a ResourceClaim generated from
 * it, owned by the pod, and the pod's status.resourceClaimStatuses names
 * it. The API server would append 5 random characters to the generated
 * name; ksched derives them from the pod and entry (the reference
 * harness derives them the same way), so that output is reproducible. */
#include "api/cluster.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static void template_unref(void *p) {
    ks_claim_template *t = p;
    KS_OBJECT_UNREF(t);
}

static const ks_claim_template *find_template(const ks_cluster *c, ks_id ns, const char *name) {
    ks_id n = ks_intern_find(name);
    if (n == KS_ID_INVALID) return NULL;
    for (uint32_t i = 0; i < c->claim_templates.n; i++)
        if (c->claim_templates.v[i]->ns == ns && c->claim_templates.v[i]->name == n) return c->claim_templates.v[i];
    return NULL;
}

/* The name: GenerateName as the controller builds it (pod-entry-, both
 * shortened proportionally beyond 57 characters) and a suffix of 5
 * characters from the API server's alphabet. */
static void claim_name(const ks_pod *p, const char *entry, char *out, size_t n) {
    const char *pod = ks_str(p->name);
    size_t pl = strlen(pod), el = strlen(entry);
    size_t gl = pl + 1 + el + 1;
    char base[128];
    if (gl > 57) {
        size_t pk = pl * 57 / gl, ek = el * 57 / gl;
        snprintf(base, sizeof base, "%.*s-%.*s", (int)pk, pod, (int)ek, entry);
    } else {
        snprintf(base, sizeof base, "%s-%s-", pod, entry);
    }
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t h = 1469598103934665603ULL;
    char key[600];
    snprintf(key, sizeof key, "%s/%s/%s", ks_str(p->ns), pod, entry);
    for (const char *s = key; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    char suffix[6];
    for (int i = 0; i < 5; i++) {
        suffix[i] = alphabet[h % 27];
        h /= 27;
    }
    suffix[5] = 0;
    size_t bl = strlen(base);
    if (bl + 6 > n) bl = n - 6;
    memcpy(out, base, bl);
    memcpy(out + bl, suffix, 6);
}

static ks_resource_claim *generate(const ks_claim_template *t, const ks_pod *p, const char *entry) {
    ks_arena *a = ks_arena_new(1024);
    ks_resource_claim *c = ks_arena_alloc(a, sizeof(*c));
    *c = *t->claim; /* the spec, pointing into the template */
    c->arena = a;
    atomic_init(&c->refs, 0);
    c->base = KS_OBJECT_REF((ks_claim_template *)t);
    c->base_unref = template_unref;
    c->doc = NULL;
    c->tree = NULL;
    c->spec_tree = t->spec;
    c->source_file = t->source_file;
    c->source_line = t->source_line;
    char name[128];
    claim_name(p, entry, name, sizeof name);
    c->ns = p->ns;
    c->name = ks_intern(name);
    c->uid = ks_arena_printf(a, "uid-resourceclaim-%s/%s", ks_str(c->ns), name);
    c->owners = ks_arena_calloc(a, 1, sizeof(ks_owner_ref));
    c->owners[0] = (ks_owner_ref){.kind = ks_intern("Pod"), .api_version = "v1",
                                  .name = ks_arena_strdup(a, ks_str(p->name)),
                                  .uid = ks_arena_strdup(a, p->uid ? p->uid : ""), .controller = true};
    c->nowners = 1;
    /* the template's annotations plus the pod entry it was made for */
    ks_labels ann = {0, ks_arena_calloc(a, t->annotations.n + 1, sizeof(ks_label))};
    ks_id key = ks_intern("resource.kubernetes.io/pod-claim-name");
    for (uint32_t i = 0; i < t->annotations.n; i++)
        if (t->annotations.kv[i].key != key) ann.kv[ann.n++] = t->annotations.kv[i];
    ann.kv[ann.n++] = (ks_label){key, ks_intern(entry)};
    ks_labels_sort(&ann);
    c->annotations = ann;
    return c;
}

void ks_cluster_generate_claims(ks_cluster *c) {
    for (uint32_t i = 0; i < c->pods.n; i++) {
        ks_pod *p = c->pods.v[i];
        if (!p->nresource_claims || p->phase == KS_PHASE_SUCCEEDED || p->phase == KS_PHASE_FAILED) continue;
        for (uint32_t k = 0; k < p->nresource_claims; k++) {
            const ks_pod_claim *pc = &p->resource_claims[k];
            if (!pc->template_name || pc->claim_name) continue;
            bool has_status = false;
            for (uint32_t s = 0; s < p->nclaim_statuses; s++)
                has_status |= strcmp(p->claim_statuses[s].name, pc->name) == 0;
            if (has_status) continue;
            const ks_claim_template *t = find_template(c, p->ns, pc->template_name);
            if (!t || !t->claim) continue; /* the controller keeps failing; the pod waits */
            ks_resource_claim *claim = generate(t, p, pc->name);
            claim->input_index = c->next_input_index++;
            KS_VEC_PUSH(c->resource_claims, claim);
            /* the pod's status names the claim */
            ks_pod_claim_status *st = ks_arena_calloc(p->arena, p->nclaim_statuses + 1, sizeof(*st));
            if (p->nclaim_statuses) memcpy(st, p->claim_statuses, p->nclaim_statuses * sizeof(*st));
            st[p->nclaim_statuses].name = pc->name;
            st[p->nclaim_statuses].claim_name = ks_str(claim->name);
            p->claim_statuses = st;
            p->nclaim_statuses++;
        }
    }
}
