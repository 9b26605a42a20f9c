#include "util/intern.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Strings live in fixed-size chunks that never move, so a reader can map an
 * id to its string without taking the lock while another thread interns. */
#define CHUNK_BITS 14
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS (1u << 16)

typedef struct {
    const char *s;
    uint32_t len;
} entry;

static entry *_Atomic chunks[MAX_CHUNKS];
static atomic_uint count;

/* Open-addressing table of ids keyed by string hash; guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *table;
static size_t table_cap;

static entry *slot(ks_id id) {
    entry *c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return &c[id & (CHUNK_SIZE - 1)];
}

static void append(const char *s, size_t n, ks_id id) {
    uint32_t ci = id >> CHUNK_BITS;
    entry *c = atomic_load_explicit(&chunks[ci], memory_order_relaxed);
    if (!c) {
        c = ks_xcalloc(CHUNK_SIZE, sizeof(entry));
        atomic_store_explicit(&chunks[ci], c, memory_order_release);
    }
    char *copy = ks_xstrndup(s, n);
    c[id & (CHUNK_SIZE - 1)].s = copy;
    c[id & (CHUNK_SIZE - 1)].len = (uint32_t)n;
}

static void table_insert(uint32_t id, uint64_t h) {
    size_t mask = table_cap - 1;
    size_t i = h & mask;
    while (table[i] != KS_ID_INVALID) i = (i + 1) & mask;
    table[i] = id;
}

static void table_grow(void) {
    size_t ncap = table_cap ? table_cap * 2 : 4096;
    uint32_t *old = table;
    size_t ocap = table_cap;
    table = ks_xmalloc(ncap * sizeof(uint32_t));
    memset(table, 0xff, ncap * sizeof(uint32_t));
    table_cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i] == KS_ID_INVALID) continue;
        entry *e = slot(old[i]);
        table_insert(old[i], ks_hash_bytes(e->s, e->len));
    }
    free(old);
}

static ks_id lookup_locked(const char *s, size_t n, uint64_t h) {
    if (!table_cap) return KS_ID_INVALID;
    size_t mask = table_cap - 1;
    for (size_t i = h & mask; table[i] != KS_ID_INVALID; i = (i + 1) & mask) {
        entry *e = slot(table[i]);
        if (e->len == n && memcmp(e->s, s, n) == 0) return table[i];
    }
    return KS_ID_INVALID;
}

static void ensure_empty_locked(void) {
    if (atomic_load(&count) == 0) {
        append("", 0, 0);
        atomic_store(&count, 1);
        table_grow();
        table_insert(0, ks_hash_bytes("", 0));
    }
}

ks_id ks_intern_n(const char *s, size_t n) {
    uint64_t h = ks_hash_bytes(s, n);
    pthread_mutex_lock(&lock);
    ensure_empty_locked();
    ks_id id = lookup_locked(s, n, h);
    if (id == KS_ID_INVALID) {
        id = atomic_load(&count);
        if (id >= (uint32_t)CHUNK_SIZE * MAX_CHUNKS - 1) ks_oom();
        append(s, n, id);
        atomic_store_explicit(&count, id + 1, memory_order_release);
        /* the grown table is rebuilt from the old one, which does not
         * have this id yet: insert it either way */
        if ((size_t)(id + 1) * 2 > table_cap) table_grow();
        table_insert(id, h);
    }
    pthread_mutex_unlock(&lock);
    return id;
}

ks_id ks_intern(const char *s) { return ks_intern_n(s, strlen(s)); }

ks_id ks_intern_find(const char *s) {
    size_t n = strlen(s);
    uint64_t h = ks_hash_bytes(s, n);
    pthread_mutex_lock(&lock);
    ensure_empty_locked();
    ks_id id = lookup_locked(s, n, h);
    pthread_mutex_unlock(&lock);
    return id;
}

const char *ks_str(ks_id id) {
    if (id >= atomic_load_explicit(&count, memory_order_acquire)) return id == 0 ? "" : "<?>";
    return slot(id)->s;
}

size_t ks_strlen(ks_id id) {
    if (id >= atomic_load_explicit(&count, memory_order_acquire)) return 0;
    return slot(id)->len;
}

size_t ks_intern_count(void) { return atomic_load(&count); }
