#include "api/resource.h"
#include "api/quantity.h"
#include "api/selector.h"

#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

ks_id KS_RES_CPU, KS_RES_MEMORY, KS_RES_EPHEMERAL, KS_RES_PODS;


static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_ids(void) {
    KS_RES_CPU = ks_intern("cpu");
    KS_RES_MEMORY = ks_intern("memory");
    KS_RES_EPHEMERAL = ks_intern("ephemeral-storage");
    KS_RES_PODS = ks_intern("pods");
    KS_FIELD_METADATA_NAME = ks_intern("metadata.name");
}

void ks_api_init(void) { pthread_once(&init_once, init_ids); }

/* ---- resource names (v1helper / schedutil) ------------------------------ */

static bool has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

bool ks_resource_is_hugepages(const char *name) { return has_prefix(name, "hugepages-"); }

static bool is_prefixed_native(const char *name) { return strstr(name, "kubernetes.io/") != NULL; }

static bool is_native(const char *name) { return !strchr(name, '/') || is_prefixed_native(name); }

static bool alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* DNS-1123 subdomain: dot-separated labels of [a-z0-9-], each starting and
 * ending alphanumeric, at most 253 characters. */
static bool is_dns1123_subdomain(const char *s, size_t n) {
    if (n == 0 || n > 253) return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (i == start) return false;
            if (s[start] == '-' || s[i - 1] == '-') return false;
            start = i + 1;
            continue;
        }
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    return true;
}

/* validation.IsQualifiedName: [prefix/]name, name at most 63 characters of
 * [A-Za-z0-9_.-] starting and ending alphanumeric. */
static bool is_qualified_name(const char *s) {
    const char *slash = strchr(s, '/');
    const char *name = s;
    if (slash) {
        if (strchr(slash + 1, '/')) return false;
        if (!is_dns1123_subdomain(s, (size_t)(slash - s))) return false;
        name = slash + 1;
    }
    size_t n = strlen(name);
    if (n == 0 || n > 63) return false;
    if (!alnum(name[0]) || !alnum(name[n - 1])) return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.') return false;
    return true;
}

bool ks_resource_is_extended(const char *name) {
    if (is_native(name) || has_prefix(name, "requests.")) return false;
    /* it must still be a qualified name once quota prefixes it */
    size_t n = strlen(name);
    char buf[512];
    if (n + 10 > sizeof(buf)) return false;
    memcpy(buf, "requests.", 9);
    memcpy(buf + 9, name, n + 1);
    return is_qualified_name(buf);
}

ks_rclass ks_resource_class(const char *name) {
    if (strcmp(name, "cpu") == 0) return KS_RCLASS_CPU;
    if (strcmp(name, "memory") == 0) return KS_RCLASS_MEMORY;
    if (strcmp(name, "ephemeral-storage") == 0) return KS_RCLASS_EPHEMERAL;
    if (strcmp(name, "pods") == 0) return KS_RCLASS_PODS;
    if (ks_resource_is_extended(name) || ks_resource_is_hugepages(name) || is_prefixed_native(name) ||
        has_prefix(name, "attachable-volumes-"))
        return KS_RCLASS_SCALAR;
    return KS_RCLASS_IGNORED;
}

/* ---- vectors ------------------------------------------------------------ */

static int scalar_index(const ks_resource *r, ks_id name) {
    uint32_t lo = 0, hi = r->nscalar;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (r->scalars[mid].name < name) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->nscalar && r->scalars[lo].name == name ? (int)lo : -(int)lo - 1;
}

int64_t ks_resource_get(const ks_resource *r, ks_id name) {
    ks_api_init();
    if (name == KS_RES_CPU) return r->milli_cpu;
    if (name == KS_RES_MEMORY) return r->memory;
    if (name == KS_RES_EPHEMERAL) return r->ephemeral_storage;
    if (name == KS_RES_PODS) return r->allowed_pods;
    int i = scalar_index(r, name);
    return i >= 0 ? r->scalars[i].val : 0;
}

int64_t ks_resource_get_named(const ks_resource *r, const char *name) {
    if (!name) return 0;
    switch (ks_resource_class(name)) {
    case KS_RCLASS_CPU: return r->milli_cpu;
    case KS_RCLASS_MEMORY: return r->memory;
    case KS_RCLASS_EPHEMERAL: return r->ephemeral_storage;
    case KS_RCLASS_PODS: return r->allowed_pods;
    case KS_RCLASS_SCALAR: {
        ks_id id = ks_intern_find(name);
        return id == KS_ID_INVALID ? 0 : ks_resource_get(r, id);
    }
    default: return 0;
    }
}

/* Give r a private, writable scalar array with room for `extra` more
 * entries (see the ownership notes in resource.h). */
static void make_writable(ks_resource *r, ks_arena *a, uint32_t extra) {
    uint32_t need = r->nscalar + extra;
    if (a) {
        ks_scalar *s = ks_arena_calloc(a, need ? need : 1, sizeof(*s));
        if (r->nscalar) memcpy(s, r->scalars, r->nscalar * sizeof(*s));
        if (r->scalar_cap) free(r->scalars);
        r->scalars = s;
        r->scalar_cap = 0;
        return;
    }
    if (r->scalar_cap && r->scalar_cap >= need) return;
    uint32_t cap = r->scalar_cap * 2 > need ? r->scalar_cap * 2 : need;
    if (cap < 4) cap = 4;
    if (r->scalar_cap) {
        r->scalars = ks_xrealloc(r->scalars, cap * sizeof(*r->scalars));
    } else {
        ks_scalar *s = ks_xmalloc(cap * sizeof(*s));
        if (r->nscalar) memcpy(s, r->scalars, r->nscalar * sizeof(*s));
        r->scalars = s;
    }
    r->scalar_cap = cap;
}

/* The slot of a scalar, inserted at 0 when missing; r must be writable
 * with room for it. */
static ks_scalar *scalar_slot(ks_resource *r, ks_id name) {
    int i = scalar_index(r, name);
    if (i >= 0) return &r->scalars[i];
    uint32_t at = (uint32_t)(-i - 1);
    memmove(r->scalars + at + 1, r->scalars + at, (r->nscalar - at) * sizeof(*r->scalars));
    r->scalars[at] = (ks_scalar){name, 0};
    r->nscalar++;
    return &r->scalars[at];
}

void ks_resource_set(ks_resource *r, ks_arena *a, ks_id name, int64_t v) {
    ks_api_init();
    if (name == KS_RES_CPU) r->milli_cpu = v;
    else if (name == KS_RES_MEMORY) r->memory = v;
    else if (name == KS_RES_EPHEMERAL) r->ephemeral_storage = v;
    else if (name == KS_RES_PODS) r->allowed_pods = v;
    else {
        make_writable(r, a, 1);
        scalar_slot(r, name)->val = v;
    }
}

/* dst += src (sub: dst -= src), scalars of src missing from dst added. */
static void add_or_sub(ks_resource *dst, ks_arena *a, const ks_resource *src, bool sub) {
    if (sub) {
        dst->milli_cpu -= src->milli_cpu;
        dst->memory -= src->memory;
        dst->ephemeral_storage -= src->ephemeral_storage;
        dst->allowed_pods -= src->allowed_pods;
    } else {
        dst->milli_cpu += src->milli_cpu;
        dst->memory += src->memory;
        dst->ephemeral_storage += src->ephemeral_storage;
        dst->allowed_pods += src->allowed_pods;
    }
    uint32_t n = src->nscalar;
    if (!n) return;
    /* dst's array may move: read src's entries from a copy when they are
     * dst's own */
    ks_scalar *tmp = NULL;
    const ks_scalar *sv = src->scalars;
    if (src == dst) {
        tmp = ks_xmalloc(n * sizeof(*tmp));
        memcpy(tmp, sv, n * sizeof(*tmp));
        sv = tmp;
    }
    make_writable(dst, a, n);
    for (uint32_t i = 0; i < n; i++) {
        ks_scalar *d = scalar_slot(dst, sv[i].name);
        if (sub) d->val -= sv[i].val;
        else d->val += sv[i].val;
    }
    free(tmp);
}

void ks_resource_add(ks_resource *dst, ks_arena *a, const ks_resource *src) { add_or_sub(dst, a, src, false); }

void ks_resource_sub(ks_resource *dst, ks_arena *a, const ks_resource *src) { add_or_sub(dst, a, src, true); }

void ks_resource_copy(ks_resource *dst, const ks_resource *src) {
    if (dst == src) return;
    ks_scalar *block = dst->scalar_cap ? dst->scalars : NULL;
    uint32_t cap = dst->scalar_cap;
    *dst = *src;
    dst->scalars = block;
    dst->scalar_cap = cap;
    dst->nscalar = 0;
    if (!src->nscalar) return;
    make_writable(dst, NULL, src->nscalar);
    memcpy(dst->scalars, src->scalars, src->nscalar * sizeof(*src->scalars));
    dst->nscalar = src->nscalar;
}

void ks_resource_fini(ks_resource *r) {
    if (r->scalar_cap) free(r->scalars);
    r->scalars = NULL;
    r->nscalar = r->scalar_cap = 0;
}

bool ks_resource_equal(const ks_resource *a, const ks_resource *b) {
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
        a->ephemeral_storage != b->ephemeral_storage || a->allowed_pods != b->allowed_pods ||
        a->nscalar != b->nscalar)
        return false;
    for (uint32_t i = 0; i < a->nscalar; i++)
        if (a->scalars[i].name != b->scalars[i].name || a->scalars[i].val != b->scalars[i].val) return false;
    return true;
}

/* ---- exact lists -------------------------------------------------------- */

const ks_qentry *ks_qlist_find(const ks_qlist *l, ks_id name) {
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].name == name) return &l->v[i];
    return NULL;
}

static bool add_i64(int64_t *dst, int64_t v) { return !__builtin_add_overflow(*dst, v, dst); }

bool ks_resource_add_qlist(ks_resource *r, ks_arena *a, const ks_qlist *l) {
    ks_api_init();
    uint32_t nsc = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        ks_id n = l->v[i].name;
        if (n != KS_RES_CPU && n != KS_RES_MEMORY && n != KS_RES_EPHEMERAL && n != KS_RES_PODS &&
            ks_resource_class(ks_str(n)) == KS_RCLASS_SCALAR)
            nsc++;
    }
    if (nsc) make_writable(r, a, nsc);
    for (uint32_t i = 0; i < l->n; i++) {
        const ks_qentry *e = &l->v[i];
        int64_t v;
        bool ok;
        if (e->name == KS_RES_CPU) {
            ok = ks_nano_to_milli(e->nano, &v) && add_i64(&r->milli_cpu, v);
        } else if (e->name == KS_RES_MEMORY) {
            ok = ks_nano_to_value(e->nano, &v) && add_i64(&r->memory, v);
        } else if (e->name == KS_RES_EPHEMERAL) {
            ok = ks_nano_to_value(e->nano, &v) && add_i64(&r->ephemeral_storage, v);
        } else if (e->name == KS_RES_PODS) {
            ok = ks_nano_to_value(e->nano, &v) && add_i64(&r->allowed_pods, v);
        } else if (ks_resource_class(ks_str(e->name)) == KS_RCLASS_SCALAR) {
            ok = ks_nano_to_value(e->nano, &v) && add_i64(&scalar_slot(r, e->name)->val, v);
        } else {
            ok = true;
        }
        if (!ok) return false;
    }
    return true;
}
