#include "util/intern.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Strings live in fixed-size chunks that never move, so a reader can map an
 * id to its string without taking the lock while another thread interns. */
#define CHUNK_BITS 14
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS (1u << 16)

/* refs: PERMANENT for ks_intern's strings (never freed), else the
 * references ks_intern_ref handed out; a freed entry has s NULL and its id
 * waits on the free list for the next new string. */
#define PERMANENT UINT32_MAX

typedef struct {
    const char *s;
    uint32_t len;
    uint32_t refs;
} entry;

static entry *_Atomic chunks[MAX_CHUNKS];
static atomic_uint count;

/* Open-addressing table of ids keyed by string hash; guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *table;
static size_t table_cap;
static uint32_t *free_ids;
static size_t nfree, free_cap;
static size_t live; /* entries with a string */

static entry *slot(ks_id id) {
    entry *c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return &c[id & (CHUNK_SIZE - 1)];
}

static void append(const char *s, size_t n, ks_id id, uint32_t refs) {
    uint32_t ci = id >> CHUNK_BITS;
    entry *c = atomic_load_explicit(&chunks[ci], memory_order_relaxed);
    if (!c) {
        c = ks_xcalloc(CHUNK_SIZE, sizeof(entry));
        atomic_store_explicit(&chunks[ci], c, memory_order_release);
    }
    char *copy = ks_xstrndup(s, n);
    c[id & (CHUNK_SIZE - 1)].s = copy;
    c[id & (CHUNK_SIZE - 1)].len = (uint32_t)n;
    c[id & (CHUNK_SIZE - 1)].refs = refs;
    live++;
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

/* The table position of id, or table_cap when absent. */
static size_t position_locked(const char *s, size_t n, uint64_t h) {
    size_t mask = table_cap - 1;
    for (size_t i = h & mask; table[i] != KS_ID_INVALID; i = (i + 1) & mask) {
        entry *e = slot(table[i]);
        if (e->len == n && memcmp(e->s, s, n) == 0) return i;
    }
    return table_cap;
}

static ks_id lookup_locked(const char *s, size_t n, uint64_t h) {
    if (!table_cap) return KS_ID_INVALID;
    size_t i = position_locked(s, n, h);
    return i == table_cap ? KS_ID_INVALID : table[i];
}

/* Linear probing's deletion: the entries after the hole that hash at or
 * before it move back, so that every probe sequence stays unbroken. */
static void table_remove_at(size_t i) {
    size_t mask = table_cap - 1;
    table[i] = KS_ID_INVALID;
    for (size_t j = (i + 1) & mask; table[j] != KS_ID_INVALID; j = (j + 1) & mask) {
        entry *e = slot(table[j]);
        size_t home = ks_hash_bytes(e->s, e->len) & mask;
        /* j's entry may fill the hole when its home is not in (i, j]. */
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        table[i] = table[j];
        table[j] = KS_ID_INVALID;
        i = j;
    }
}

static void ensure_empty_locked(void) {
    if (atomic_load(&count) == 0) {
        append("", 0, 0, PERMANENT);
        atomic_store(&count, 1);
        table_grow();
        table_insert(0, ks_hash_bytes("", 0));
    }
}

static ks_id intern_locked(const char *s, size_t n, uint32_t refs) {
    uint64_t h = ks_hash_bytes(s, n);
    ensure_empty_locked();
    ks_id id = lookup_locked(s, n, h);
    if (id != KS_ID_INVALID) {
        entry *e = slot(id);
        if (e->refs != PERMANENT) e->refs = refs == PERMANENT ? PERMANENT : e->refs + 1;
        return id;
    }
    if (nfree) {
        /* A freed id: its entry is rewritten before anyone can see it. */
        id = free_ids[--nfree];
        append(s, n, id, refs);
        table_insert(id, h);
        return id;
    }
    id = atomic_load(&count);
    if (id >= (uint32_t)CHUNK_SIZE * MAX_CHUNKS - 1) ks_oom();
    append(s, n, id, refs);
    atomic_store_explicit(&count, id + 1, memory_order_release);
    /* the grown table is rebuilt from the old one, which does not have
     * this id yet: insert it either way */
    if ((size_t)(id + 1) * 2 > table_cap) table_grow();
    table_insert(id, h);
    return id;
}

ks_id ks_intern_n(const char *s, size_t n) {
    pthread_mutex_lock(&lock);
    ks_id id = intern_locked(s, n, PERMANENT);
    pthread_mutex_unlock(&lock);
    return id;
}

ks_id ks_intern(const char *s) { return ks_intern_n(s, strlen(s)); }

ks_id ks_intern_ref_n(const char *s, size_t n) {
    pthread_mutex_lock(&lock);
    ks_id id = intern_locked(s, n, 1);
    pthread_mutex_unlock(&lock);
    return id;
}

ks_id ks_intern_ref(const char *s) { return ks_intern_ref_n(s, strlen(s)); }

void ks_intern_unref(ks_id id) {
    if (id == KS_ID_NONE || id == KS_ID_INVALID) return;
    pthread_mutex_lock(&lock);
    if (id < atomic_load(&count)) {
        entry *e = slot(id);
        if (e->s && e->refs != PERMANENT && --e->refs == 0) {
            table_remove_at(position_locked(e->s, e->len, ks_hash_bytes(e->s, e->len)));
            free((char *)e->s);
            e->s = NULL;
            e->len = 0;
            live--;
            KS_GROW(free_ids, free_cap, nfree + 1);
            free_ids[nfree++] = id;
        }
    }
    pthread_mutex_unlock(&lock);
}

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
    const char *s = slot(id)->s;
    return s ? s : "<?>";
}

size_t ks_strlen(ks_id id) {
    if (id >= atomic_load_explicit(&count, memory_order_acquire)) return 0;
    return slot(id)->len;
}

size_t ks_intern_count(void) {
    pthread_mutex_lock(&lock);
    size_t n = live;
    pthread_mutex_unlock(&lock);
    return n;
}
