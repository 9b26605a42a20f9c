#include "api/resource.h"
#include "api/quantity.h"
#include "api/selector.h"

#include <pthread.h>
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
        if (r->scalar_name[mid] < name) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->nscalar && r->scalar_name[lo] == name ? (int)lo : -(int)lo - 1;
}

int64_t ks_resource_get(const ks_resource *r, ks_id name) {
    ks_api_init();
    if (name == KS_RES_CPU) return r->milli_cpu;
    if (name == KS_RES_MEMORY) return r->memory;
    if (name == KS_RES_EPHEMERAL) return r->ephemeral_storage;
    if (name == KS_RES_PODS) return r->allowed_pods;
    int i = scalar_index(r, name);
    return i >= 0 ? r->scalar_val[i] : 0;
}

/* Insert or find the slot of a scalar; -1 when full. */
static int scalar_slot(ks_resource *r, ks_id name) {
    int i = scalar_index(r, name);
    if (i >= 0) return i;
    if (r->nscalar >= KS_MAX_SCALAR) return -1;
    uint32_t at = (uint32_t)(-i - 1);
    memmove(r->scalar_name + at + 1, r->scalar_name + at, (r->nscalar - at) * sizeof(ks_id));
    memmove(r->scalar_val + at + 1, r->scalar_val + at, (r->nscalar - at) * sizeof(int64_t));
    r->scalar_name[at] = name;
    r->scalar_val[at] = 0;
    r->nscalar++;
    return (int)at;
}

bool ks_resource_set(ks_resource *r, ks_id name, int64_t v) {
    ks_api_init();
    if (name == KS_RES_CPU) r->milli_cpu = v;
    else if (name == KS_RES_MEMORY) r->memory = v;
    else if (name == KS_RES_EPHEMERAL) r->ephemeral_storage = v;
    else if (name == KS_RES_PODS) r->allowed_pods = v;
    else {
        int i = scalar_slot(r, name);
        if (i < 0) return false;
        r->scalar_val[i] = v;
    }
    return true;
}

bool ks_resource_add_scalar(ks_resource *r, ks_id name, int64_t v) {
    int i = scalar_slot(r, name);
    if (i < 0) return false;
    r->scalar_val[i] += v;
    return true;
}

/* Scalars of src missing from dst are added to it. A full dst drops them,
 * which cannot happen for vectors built through the decoders (each is
 * checked against KS_MAX_SCALAR) unless many different pods' scalars are
 * summed on one node. */
void ks_resource_add(ks_resource *dst, const ks_resource *src) {
    dst->milli_cpu += src->milli_cpu;
    dst->memory += src->memory;
    dst->ephemeral_storage += src->ephemeral_storage;
    dst->allowed_pods += src->allowed_pods;
    for (uint32_t i = 0; i < src->nscalar; i++)
        ks_resource_add_scalar(dst, src->scalar_name[i], src->scalar_val[i]);
}

void ks_resource_sub(ks_resource *dst, const ks_resource *src) {
    dst->milli_cpu -= src->milli_cpu;
    dst->memory -= src->memory;
    dst->ephemeral_storage -= src->ephemeral_storage;
    dst->allowed_pods -= src->allowed_pods;
    for (uint32_t i = 0; i < src->nscalar; i++)
        ks_resource_add_scalar(dst, src->scalar_name[i], -src->scalar_val[i]);
}

void ks_resource_max(ks_resource *dst, const ks_resource *src) {
    if (src->milli_cpu > dst->milli_cpu) dst->milli_cpu = src->milli_cpu;
    if (src->memory > dst->memory) dst->memory = src->memory;
    if (src->ephemeral_storage > dst->ephemeral_storage) dst->ephemeral_storage = src->ephemeral_storage;
    if (src->allowed_pods > dst->allowed_pods) dst->allowed_pods = src->allowed_pods;
    for (uint32_t i = 0; i < src->nscalar; i++) {
        int j = scalar_slot(dst, src->scalar_name[i]);
        if (j >= 0 && src->scalar_val[i] > dst->scalar_val[j]) dst->scalar_val[j] = src->scalar_val[i];
    }
}

bool ks_resource_equal(const ks_resource *a, const ks_resource *b) {
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
        a->ephemeral_storage != b->ephemeral_storage || a->allowed_pods != b->allowed_pods ||
        a->nscalar != b->nscalar)
        return false;
    for (uint32_t i = 0; i < a->nscalar; i++)
        if (a->scalar_name[i] != b->scalar_name[i] || a->scalar_val[i] != b->scalar_val[i]) return false;
    return true;
}

/* ---- exact lists -------------------------------------------------------- */

const ks_qentry *ks_qlist_find(const ks_qlist *l, ks_id name) {
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].name == name) return &l->v[i];
    return NULL;
}

static bool add_i64(int64_t *dst, int64_t v) { return !__builtin_add_overflow(*dst, v, dst); }

bool ks_resource_add_qlist(ks_resource *r, const ks_qlist *l) {
    ks_api_init();
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
            int j = scalar_slot(r, e->name);
            ok = j >= 0 && ks_nano_to_value(e->nano, &v) && add_i64(&r->scalar_val[j], v);
        } else {
            ok = true;
        }
        if (!ok) return false;
    }
    return true;
}
