#include "util/hash.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

uint64_t ks_hash_bytes(const void *p, size_t n) {
    /* FNV-1a, then a final mix so low bits are usable as a table index. */
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return ks_hash_u64(h);
}

void ks_map_init(ks_map *m) { memset(m, 0, sizeof(*m)); }

void ks_map_free(ks_map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

void ks_map_clear(ks_map *m) {
    if (m->cap) memset(m->keys, 0, m->cap * sizeof(uint64_t));
    m->len = 0;
}

static size_t find(const ks_map *m, uint64_t key) {
    size_t mask = m->cap - 1;
    size_t i = ks_hash_u64(key) & mask;
    while (m->keys[i] && m->keys[i] != key) i = (i + 1) & mask;
    return i;
}

static void resize(ks_map *m, size_t cap) {
    ks_map n;
    n.cap = cap;
    n.len = 0;
    n.keys = ks_xcalloc(n.cap, sizeof(uint64_t));
    n.vals = ks_xcalloc(n.cap, sizeof(void *));
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) ks_map_put(&n, m->keys[i], m->vals[i]);
    ks_map_free(m);
    *m = n;
}

static void grow(ks_map *m) { resize(m, m->cap ? m->cap * 2 : 16); }

void ks_map_reserve(ks_map *m, size_t n) {
    size_t cap = m->cap ? m->cap : 16;
    while ((n + 1) * 4 > cap * 3) cap *= 2;
    if (cap > m->cap) resize(m, cap);
}

void *ks_map_get(const ks_map *m, uint64_t key) {
    if (!m->cap) return NULL;
    size_t i = find(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

void *ks_map_put(ks_map *m, uint64_t key, void *val) {
    if ((m->len + 1) * 4 > m->cap * 3) grow(m);
    size_t i = find(m, key);
    void *old = NULL;
    if (m->keys[i]) old = m->vals[i];
    else m->len++;
    m->keys[i] = key;
    m->vals[i] = val;
    return old;
}

void *ks_map_del(ks_map *m, uint64_t key) {
    if (!m->cap) return NULL;
    size_t i = find(m, key);
    if (!m->keys[i]) return NULL;
    void *old = m->vals[i];
    /* Backward-shift deletion keeps probe chains intact without tombstones. */
    size_t mask = m->cap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->keys[j]) break;
        size_t home = ks_hash_u64(m->keys[j]) & mask;
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->len--;
    return old;
}

int ks_map_next(const ks_map *m, size_t *iter, uint64_t *key, void **val) {
    for (size_t i = *iter; i < m->cap; i++) {
        if (m->keys[i]) {
            if (key) *key = m->keys[i];
            if (val) *val = m->vals[i];
            *iter = i + 1;
            return 1;
        }
    }
    return 0;
}
