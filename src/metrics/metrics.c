#include "metrics/metrics.h"

#include "util/hash.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Histogram shards: enough for the worker pool of a large machine to
 * record without two threads sharing a line most of the time. */
#define NSHARDS 8
#define LINE 64

struct ks_metric {
    ks_metric_vec *vec;
    char **values;     /* label values, definition order */
    ks_metric *hnext;  /* same hash */
    /* counter: n + the double in fbits; gauge: the double in bits */
    _Atomic uint64_t n;
    _Atomic uint64_t bits;
    /* histogram: NSHARDS blocks of `stride` bytes: sum (double bits),
     * then nbuckets + 1 counts (the last is +Inf) */
    unsigned char *shards;
};

struct ks_metric_vec {
    ks_metrics *reg;
    char *name, *help;
    ks_metric_type type;
    ks_stability stability;
    uint32_t nlabels;
    char **labels;     /* definition order */
    uint32_t *order;   /* label indexes sorted by name (the output order) */
    double *buckets;
    size_t nbuckets;
    size_t stride;
    pthread_mutex_t mu;
    ks_map index;      /* key hash -> first series */
    ks_metric **series;
    size_t nseries, cap;
};

typedef struct collector {
    ks_metrics_collect_fn fn;
    void *arg;
} collector;

struct ks_metrics {
    pthread_mutex_t mu;       /* families and collectors */
    pthread_mutex_t write_mu; /* one write (and its collectors) at a time */
    ks_metric_vec **fams;
    size_t nfams, cap;
    collector *colls;
    size_t ncolls, ccap;
    void *process; /* ks_metrics_register_process's state */
};

/* ---- doubles in atomics ---------------------------------------------------- */

static inline uint64_t dbits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static inline double bitsd(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

static void atomic_add_double(_Atomic uint64_t *p, double d) {
    uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(p, &old, dbits(bitsd(old) + d), memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* ---- registry -------------------------------------------------------------- */

ks_metrics *ks_metrics_new(void) {
    ks_metrics *r = ks_xcalloc(1, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->write_mu, NULL);
    return r;
}

static void free_series(ks_metric *m) {
    for (uint32_t i = 0; i < m->vec->nlabels; i++) free(m->values[i]);
    free(m->values);
    free(m->shards);
    free(m);
}

static void free_vec(ks_metric_vec *v) {
    for (size_t i = 0; i < v->nseries; i++) free_series(v->series[i]);
    free(v->series);
    ks_map_free(&v->index);
    for (uint32_t i = 0; i < v->nlabels; i++) free(v->labels[i]);
    free(v->labels);
    free(v->order);
    free(v->buckets);
    free(v->name);
    free(v->help);
    pthread_mutex_destroy(&v->mu);
    free(v);
}

void ks_metrics_free(ks_metrics *r) {
    if (!r) return;
    for (size_t i = 0; i < r->nfams; i++) free_vec(r->fams[i]);
    free(r->fams);
    free(r->colls);
    free(r->process);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->write_mu);
    free(r);
}

static ks_metrics *default_reg;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static void make_default(void) { default_reg = ks_metrics_new(); }

ks_metrics *ks_metrics_default(void) {
    pthread_once(&default_once, make_default);
    return default_reg;
}

static char **split_labels(const char *labels, uint32_t *n) {
    *n = 0;
    if (!labels || !*labels) return NULL;
    uint32_t cap = 1;
    for (const char *p = labels; *p; p++)
        if (*p == ',') cap++;
    char **v = ks_xcalloc(cap, sizeof(*v));
    const char *s = labels;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        v[(*n)++] = ks_xstrndup(s, len);
        if (!e) break;
        s = e + 1;
    }
    return v;
}

static bool same_labels(const ks_metric_vec *v, char **labels, uint32_t n) {
    if (v->nlabels != n) return false;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(v->labels[i], labels[i]) != 0) return false;
    return true;
}

static ks_metric *new_series(ks_metric_vec *v, const char *const *values);

static ks_metric_vec *define(ks_metrics *r, ks_metric_type type, const char *name, const char *help,
                             ks_stability st, const char *labels, const double *buckets, size_t nbuckets) {
    uint32_t nl;
    char **lv = split_labels(labels, &nl);
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nfams; i++) {
        ks_metric_vec *v = r->fams[i];
        if (strcmp(v->name, name) != 0) continue;
        bool ok = v->type == type && same_labels(v, lv, nl);
        pthread_mutex_unlock(&r->mu);
        for (uint32_t k = 0; k < nl; k++) free(lv[k]);
        free(lv);
        return ok ? v : NULL;
    }
    ks_metric_vec *v = ks_xcalloc(1, sizeof(*v));
    v->reg = r;
    v->name = ks_xstrdup(name);
    v->help = ks_xstrdup(help ? help : "");
    v->type = type;
    v->stability = st;
    v->nlabels = nl;
    v->labels = lv;
    v->order = ks_xcalloc(nl ? nl : 1, sizeof(*v->order));
    for (uint32_t i = 0; i < nl; i++) v->order[i] = i;
    /* insertion sort by label name: a handful of labels */
    for (uint32_t i = 1; i < nl; i++)
        for (uint32_t j = i; j > 0 && strcmp(lv[v->order[j - 1]], lv[v->order[j]]) > 0; j--) {
            uint32_t t = v->order[j];
            v->order[j] = v->order[j - 1];
            v->order[j - 1] = t;
        }
    if (type == KS_HISTOGRAM) {
        v->buckets = ks_xmalloc((nbuckets ? nbuckets : 1) * sizeof(double));
        if (nbuckets) memcpy(v->buckets, buckets, nbuckets * sizeof(double));
        v->nbuckets = nbuckets;
        size_t bytes = (2 + nbuckets) * sizeof(uint64_t);
        v->stride = (bytes + LINE - 1) / LINE * LINE;
    }
    pthread_mutex_init(&v->mu, NULL);
    ks_map_init(&v->index);
    KS_GROW(r->fams, r->cap, r->nfams + 1);
    r->fams[r->nfams++] = v;
    /* A family without labels has its one series from the start, as a
     * plain Go Counter/Gauge/Histogram does (written even when 0). */
    if (nl == 0) {
        pthread_mutex_lock(&v->mu);
        new_series(v, NULL);
        pthread_mutex_unlock(&v->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return v;
}

ks_metric_vec *ks_metrics_counter(ks_metrics *r, const char *name, const char *help, ks_stability st,
                                  const char *labels) {
    return define(r, KS_COUNTER, name, help, st, labels, NULL, 0);
}

ks_metric_vec *ks_metrics_gauge(ks_metrics *r, const char *name, const char *help, ks_stability st,
                                const char *labels) {
    return define(r, KS_GAUGE, name, help, st, labels, NULL, 0);
}

ks_metric_vec *ks_metrics_histogram(ks_metrics *r, const char *name, const char *help, ks_stability st,
                                    const char *labels, const double *buckets, size_t nbuckets) {
    return define(r, KS_HISTOGRAM, name, help, st, labels, buckets, nbuckets);
}

void ks_buckets_exponential(double start, double factor, size_t count, double *out) {
    for (size_t i = 0; i < count; i++) {
        out[i] = start;
        start *= factor;
    }
}

void ks_buckets_linear(double start, double width, size_t count, double *out) {
    for (size_t i = 0; i < count; i++) {
        out[i] = start;
        start += width;
    }
}

ks_metric_type ks_metric_vec_type(const ks_metric_vec *v) { return v->type; }

/* ---- series ------------------------------------------------------------------ */

static inline const char *value_at(const char *const *values, uint32_t i) {
    return values && values[i] ? values[i] : "";
}

/* FNV-1a over the values with a separator; never 0 (the map's empty key). */
static uint64_t hash_values(const ks_metric_vec *v, const char *const *values) {
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t i = 0; i < v->nlabels; i++) {
        for (const unsigned char *p = (const unsigned char *)value_at(values, i); *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
        h = (h ^ 0x1f) * 1099511628211ULL;
    }
    return h | 1;
}

static bool same_values(const ks_metric *m, const char *const *values) {
    for (uint32_t i = 0; i < m->vec->nlabels; i++)
        if (strcmp(m->values[i], value_at(values, i)) != 0) return false;
    return true;
}

/* Under v->mu. */
static ks_metric *new_series(ks_metric_vec *v, const char *const *values) {
    ks_metric *m = ks_xcalloc(1, sizeof(*m));
    m->vec = v;
    m->values = ks_xcalloc(v->nlabels ? v->nlabels : 1, sizeof(char *));
    for (uint32_t i = 0; i < v->nlabels; i++) m->values[i] = ks_xstrdup(values && values[i] ? values[i] : "");
    if (v->type == KS_HISTOGRAM) {
        m->shards = aligned_alloc(LINE, v->stride * NSHARDS);
        if (!m->shards) abort();
        memset(m->shards, 0, v->stride * NSHARDS);
    }
    uint64_t h = hash_values(v, values);
    m->hnext = ks_map_get(&v->index, h);
    ks_map_put(&v->index, h, m);
    KS_GROW(v->series, v->cap, v->nseries + 1);
    v->series[v->nseries++] = m;
    return m;
}

ks_metric *ks_metric_getv(ks_metric_vec *v, const char *const *values) {
    if (!v) return NULL;
    uint64_t h = hash_values(v, values);
    pthread_mutex_lock(&v->mu);
    ks_metric *m = ks_map_get(&v->index, h);
    while (m && !same_values(m, values)) m = m->hnext;
    if (!m) m = new_series(v, values);
    pthread_mutex_unlock(&v->mu);
    return m;
}

ks_metric *ks_metric_get(ks_metric_vec *v, ...) {
    if (!v) return NULL;
    const char *vals[16] = {0};
    va_list ap;
    va_start(ap, v);
    for (uint32_t i = 0; i < v->nlabels && i < 16; i++) vals[i] = va_arg(ap, const char *);
    va_end(ap);
    return ks_metric_getv(v, vals);
}

ks_metric *ks_metric_cached(ks_metric *_Atomic *slot, ks_metric_vec *v, const char *const *values) {
    ks_metric *m = atomic_load_explicit(slot, memory_order_acquire);
    if (m) return m;
    m = ks_metric_getv(v, values);
    /* Two threads may both look it up: they find the same series. */
    atomic_store_explicit(slot, m, memory_order_release);
    return m;
}

/* ---- recording ------------------------------------------------------------- */

void ks_counter_add(ks_metric *m, uint64_t n) {
    if (m) atomic_fetch_add_explicit(&m->n, n, memory_order_relaxed);
}

void ks_gauge_set(ks_metric *m, double v) {
    if (m) atomic_store_explicit(&m->bits, dbits(v), memory_order_relaxed);
}

void ks_gauge_add(ks_metric *m, double d) {
    if (m) atomic_add_double(&m->bits, d);
}

static int my_shard(void) {
    static _Atomic unsigned next;
    /* initial-exec: a plain %fs access, not a __tls_get_addr call (the
     * library is built -fPIC) */
    static _Thread_local int shard __attribute__((tls_model("initial-exec"))) = -1;
    if (shard < 0) shard = (int)(atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % NSHARDS);
    return shard;
}

void ks_histogram_observe_n(ks_metric *m, double v, uint64_t count) {
    if (!m || !count) return;
    const ks_metric_vec *vec = m->vec;
    /* the first bucket whose bound is >= v: a linear scan, as most
     * observations fall in the first few buckets */
    size_t b = 0;
    while (b < vec->nbuckets && v > vec->buckets[b]) b++;
    unsigned char *sh = m->shards + (size_t)my_shard() * vec->stride;
    _Atomic uint64_t *w = (_Atomic uint64_t *)sh;
    atomic_fetch_add_explicit(&w[1 + b], count, memory_order_relaxed);
    atomic_add_double(&w[0], v * (double)count);
}

void ks_histogram_observe(ks_metric *m, double v) { ks_histogram_observe_n(m, v, 1); }

/* ---- reading ----------------------------------------------------------------- */

uint64_t ks_counter_value(const ks_metric *m) {
    return m ? atomic_load_explicit(&((ks_metric *)m)->n, memory_order_relaxed) : 0;
}

double ks_gauge_value(const ks_metric *m) {
    return m ? bitsd(atomic_load_explicit(&((ks_metric *)m)->bits, memory_order_relaxed)) : 0;
}

/* Per-bucket (not cumulative) counts summed over the shards. */
static void histogram_read(const ks_metric *m, uint64_t *counts, double *sum) {
    const ks_metric_vec *v = m->vec;
    memset(counts, 0, (v->nbuckets + 1) * sizeof(uint64_t));
    *sum = 0;
    for (int s = 0; s < NSHARDS; s++) {
        _Atomic uint64_t *w = (_Atomic uint64_t *)(m->shards + (size_t)s * v->stride);
        *sum += bitsd(atomic_load_explicit(&w[0], memory_order_relaxed));
        for (size_t b = 0; b <= v->nbuckets; b++) counts[b] += atomic_load_explicit(&w[1 + b], memory_order_relaxed);
    }
}

void ks_histogram_totals(const ks_metric *m, uint64_t *count, double *sum) {
    *count = 0;
    *sum = 0;
    if (!m || m->vec->type != KS_HISTOGRAM) return;
    uint64_t *c = ks_xmalloc((m->vec->nbuckets + 1) * sizeof(uint64_t));
    histogram_read(m, c, sum);
    for (size_t b = 0; b <= m->vec->nbuckets; b++) *count += c[b];
    free(c);
}

void ks_metric_vec_foreach(ks_metric_vec *v, void (*fn)(void *arg, const char *const *values, ks_metric *m),
                           void *arg) {
    if (!v) return;
    pthread_mutex_lock(&v->mu);
    for (size_t i = 0; i < v->nseries; i++) fn(arg, (const char *const *)v->series[i]->values, v->series[i]);
    pthread_mutex_unlock(&v->mu);
}

void ks_gauge_vec_zero(ks_metric_vec *v) {
    if (!v || v->type != KS_GAUGE) return;
    pthread_mutex_lock(&v->mu);
    for (size_t i = 0; i < v->nseries; i++) ks_gauge_set(v->series[i], 0);
    pthread_mutex_unlock(&v->mu);
}

/* ---- collectors ---------------------------------------------------------------- */

void ks_metrics_add_collector(ks_metrics *r, ks_metrics_collect_fn fn, void *arg) {
    pthread_mutex_lock(&r->mu);
    KS_GROW(r->colls, r->ccap, r->ncolls + 1);
    r->colls[r->ncolls++] = (collector){fn, arg};
    pthread_mutex_unlock(&r->mu);
}

void ks_metrics_remove_collector(ks_metrics *r, ks_metrics_collect_fn fn, void *arg) {
    /* Waits for a write in progress: its collectors may be running. */
    pthread_mutex_lock(&r->write_mu);
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->ncolls; i++) {
        if (r->colls[i].fn != fn || r->colls[i].arg != arg) continue;
        memmove(&r->colls[i], &r->colls[i + 1], (r->ncolls - i - 1) * sizeof(*r->colls));
        r->ncolls--;
        break;
    }
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&r->write_mu);
}

/* ---- text format ------------------------------------------------------------- */

void ks_format_go_float(double v, char *buf, size_t n) {
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, n, signbit(v) ? "-0" : "0");
        return;
    }
    /* The fewest significant digits that read back as v (Go's shortest). */
    char e[48];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p - 1, v);
        if (strtod(e, NULL) == v) break;
    }
    if (p > 17) p = 17;
    char *ep = strchr(e, 'e');
    int exp = atoi(ep + 1);
    /* Go's 'g' with the shortest precision takes the exponent form when
     * the exponent is below -4 or at least 6. */
    if (exp < -4 || exp >= 6) {
        snprintf(buf, n, "%s", e);
        return;
    }
    /* Fixed form from the same digits. */
    char digits[24];
    size_t nd = 0;
    bool neg = e[0] == '-';
    for (const char *s = e + (neg ? 1 : 0); s < ep; s++)
        if (*s >= '0' && *s <= '9') digits[nd++] = *s;
    char out[64];
    size_t o = 0;
    if (neg) out[o++] = '-';
    if (exp < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp - 1; i++) out[o++] = '0';
        for (size_t i = 0; i < nd; i++) out[o++] = digits[i];
    } else {
        for (int i = 0; i <= exp; i++) out[o++] = (size_t)i < nd ? digits[i] : '0';
        if (nd > (size_t)exp + 1) {
            out[o++] = '.';
            for (size_t i = (size_t)exp + 1; i < nd; i++) out[o++] = digits[i];
        }
    }
    out[o] = 0;
    snprintf(buf, n, "%s", out);
}

static void put_float(ks_strbuf *b, double v) {
    char buf[48];
    ks_format_go_float(v, buf, sizeof(buf));
    ks_sb_puts(b, buf);
}

static void put_escaped(ks_strbuf *b, const char *s, bool quote) {
    for (; *s; s++) {
        if (*s == '\\') ks_sb_puts(b, "\\\\");
        else if (*s == '\n') ks_sb_puts(b, "\\n");
        else if (quote && *s == '"') ks_sb_puts(b, "\\\"");
        else ks_sb_putc(b, *s);
    }
}

/* {a="x",b="y"} with an optional extra pair (le) last. */
static void put_labels(ks_strbuf *b, const ks_metric_vec *v, const ks_metric *m, const char *extra_name,
                       const char *extra_value) {
    if (v->nlabels == 0 && !extra_name) return;
    ks_sb_putc(b, '{');
    bool first = true;
    for (uint32_t i = 0; i < v->nlabels; i++) {
        uint32_t k = v->order[i];
        if (!first) ks_sb_putc(b, ',');
        first = false;
        ks_sb_puts(b, v->labels[k]);
        ks_sb_puts(b, "=\"");
        put_escaped(b, m->values[k], true);
        ks_sb_putc(b, '"');
    }
    if (extra_name) {
        if (!first) ks_sb_putc(b, ',');
        ks_sb_puts(b, extra_name);
        ks_sb_puts(b, "=\"");
        ks_sb_puts(b, extra_value);
        ks_sb_putc(b, '"');
    }
    ks_sb_putc(b, '}');
}

static const ks_metric_vec *sort_vec; /* under write_mu */

static int cmp_series(const void *x, const void *y) {
    const ks_metric *a = *(ks_metric *const *)x, *b = *(ks_metric *const *)y;
    for (uint32_t i = 0; i < sort_vec->nlabels; i++) {
        uint32_t k = sort_vec->order[i];
        int c = strcmp(a->values[k], b->values[k]);
        if (c) return c;
    }
    return 0;
}

static int cmp_fams(const void *x, const void *y) {
    return strcmp((*(ks_metric_vec *const *)x)->name, (*(ks_metric_vec *const *)y)->name);
}

static const char *stability_prefix(ks_stability s) {
    switch (s) {
    case KS_ALPHA: return "[ALPHA] ";
    case KS_BETA: return "[BETA] ";
    case KS_STABLE: return "[STABLE] ";
    default: return "";
    }
}

static void write_family(ks_strbuf *b, ks_metric_vec *v) {
    pthread_mutex_lock(&v->mu);
    size_t n = v->nseries;
    ks_metric **ser = ks_xmalloc((n ? n : 1) * sizeof(*ser));
    if (n) memcpy(ser, v->series, n * sizeof(*ser));
    pthread_mutex_unlock(&v->mu);
    if (n == 0) {
        free(ser);
        return;
    }
    sort_vec = v;
    qsort(ser, n, sizeof(*ser), cmp_series);
    static const char *const types[] = {"counter", "gauge", "histogram"};
    ks_sb_printf(b, "# HELP %s %s", v->name, stability_prefix(v->stability));
    put_escaped(b, v->help, false);
    ks_sb_printf(b, "\n# TYPE %s %s\n", v->name, types[v->type]);
    uint64_t *counts = v->type == KS_HISTOGRAM ? ks_xmalloc((v->nbuckets + 1) * sizeof(uint64_t)) : NULL;
    for (size_t i = 0; i < n; i++) {
        ks_metric *m = ser[i];
        if (v->type == KS_COUNTER || v->type == KS_GAUGE) {
            ks_sb_puts(b, v->name);
            put_labels(b, v, m, NULL, NULL);
            ks_sb_putc(b, ' ');
            double val = v->type == KS_COUNTER
                             ? (double)ks_counter_value(m) + bitsd(atomic_load_explicit(&m->bits, memory_order_relaxed))
                             : ks_gauge_value(m);
            put_float(b, val);
            ks_sb_putc(b, '\n');
            continue;
        }
        double sum;
        histogram_read(m, counts, &sum);
        uint64_t cum = 0;
        for (size_t k = 0; k <= v->nbuckets; k++) {
            cum += counts[k];
            char le[48];
            if (k < v->nbuckets) ks_format_go_float(v->buckets[k], le, sizeof(le));
            else snprintf(le, sizeof(le), "+Inf");
            ks_sb_printf(b, "%s_bucket", v->name);
            put_labels(b, v, m, "le", le);
            ks_sb_putc(b, ' ');
            put_float(b, (double)cum);
            ks_sb_putc(b, '\n');
        }
        ks_sb_printf(b, "%s_sum", v->name);
        put_labels(b, v, m, NULL, NULL);
        ks_sb_putc(b, ' ');
        put_float(b, sum);
        ks_sb_printf(b, "\n%s_count", v->name);
        put_labels(b, v, m, NULL, NULL);
        ks_sb_putc(b, ' ');
        put_float(b, (double)cum);
        ks_sb_putc(b, '\n');
    }
    free(counts);
    free(ser);
}

void ks_metrics_write(ks_metrics *r, ks_strbuf *out) {
    pthread_mutex_lock(&r->write_mu);
    pthread_mutex_lock(&r->mu);
    size_t nc = r->ncolls;
    collector *cs = ks_xmalloc((nc ? nc : 1) * sizeof(*cs));
    if (nc) memcpy(cs, r->colls, nc * sizeof(*cs));
    pthread_mutex_unlock(&r->mu);
    for (size_t i = 0; i < nc; i++) cs[i].fn(cs[i].arg);
    free(cs);

    pthread_mutex_lock(&r->mu);
    size_t nf = r->nfams;
    ks_metric_vec **fams = ks_xmalloc((nf ? nf : 1) * sizeof(*fams));
    if (nf) memcpy(fams, r->fams, nf * sizeof(*fams));
    pthread_mutex_unlock(&r->mu);
    qsort(fams, nf, sizeof(*fams), cmp_fams);
    for (size_t i = 0; i < nf; i++) write_family(out, fams[i]);
    free(fams);
    pthread_mutex_unlock(&r->write_mu);
}

/* ---- process metrics --------------------------------------------------------------- */

typedef struct process_metrics {
    ks_metric *cpu, *open_fds, *max_fds, *vsize, *rss, *start;
} process_metrics;

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static void collect_process(void *arg) {
    process_metrics *p = arg;
    FILE *f = fopen("/proc/self/stat", "r");
    if (f) {
        char buf[1024];
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = 0;
        /* fields after the command name, which may hold spaces */
        char *s = strrchr(buf, ')');
        unsigned long long utime = 0, stime = 0, starttime = 0, vsize = 0;
        long long rss = 0;
        if (s && sscanf(s + 2,
                        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
                        &utime, &stime, &starttime, &vsize, &rss) == 5) {
            double tck = (double)sysconf(_SC_CLK_TCK);
            ks_gauge_set(p->cpu, (double)(utime + stime) / tck);
            ks_gauge_set(p->vsize, (double)vsize);
            ks_gauge_set(p->rss, (double)rss * (double)sysconf(_SC_PAGESIZE));
            /* boot time + start ticks */
            FILE *st = fopen("/proc/stat", "r");
            char line[256];
            while (st && fgets(line, sizeof(line), st)) {
                unsigned long long btime;
                if (sscanf(line, "btime %llu", &btime) == 1) {
                    ks_gauge_set(p->start, (double)btime + (double)starttime / tck);
                    break;
                }
            }
            if (st) fclose(st);
        }
    }
    ks_gauge_set(p->open_fds, count_fds());
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) ks_gauge_set(p->max_fds, (double)rl.rlim_cur);
}

void ks_metrics_register_process(ks_metrics *r) {
    pthread_mutex_lock(&r->mu);
    bool done = r->process != NULL;
    pthread_mutex_unlock(&r->mu);
    if (done) return;
    process_metrics *p = ks_xcalloc(1, sizeof(*p));
    /* process_cpu_seconds_total is a counter fed from /proc: a counter
     * series whose double part the collector sets. */
    ks_metric_vec *cpu = ks_metrics_counter(r, "process_cpu_seconds_total",
                                            "Total user and system CPU time spent in seconds.", KS_INTERNAL, NULL);
    p->cpu = ks_metric_get(cpu);
    p->open_fds = ks_metric_get(
        ks_metrics_gauge(r, "process_open_fds", "Number of open file descriptors.", KS_INTERNAL, NULL));
    p->max_fds = ks_metric_get(
        ks_metrics_gauge(r, "process_max_fds", "Maximum number of open file descriptors.", KS_INTERNAL, NULL));
    p->vsize = ks_metric_get(
        ks_metrics_gauge(r, "process_virtual_memory_bytes", "Virtual memory size in bytes.", KS_INTERNAL, NULL));
    p->rss = ks_metric_get(
        ks_metrics_gauge(r, "process_resident_memory_bytes", "Resident memory size in bytes.", KS_INTERNAL, NULL));
    p->start = ks_metric_get(ks_metrics_gauge(r, "process_start_time_seconds",
                                              "Start time of the process since unix epoch in seconds.", KS_ALPHA,
                                              NULL));
    pthread_mutex_lock(&r->mu);
    r->process = p;
    pthread_mutex_unlock(&r->mu);
    ks_metrics_add_collector(r, collect_process, p);
}
