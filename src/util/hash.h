/* Hashing and a small open-addressing map from 64-bit keys to pointers.
 * Key 0 is reserved (empty slot); callers map their ids to key+1 if needed. */
#ifndef KS_HASH_H
#define KS_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t ks_hash_bytes(const void *p, size_t n);
static inline uint64_t ks_hash_u64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

typedef struct ks_map {
    uint64_t *keys;
    void **vals;
    size_t cap, len;
} ks_map;

void ks_map_init(ks_map *m);
void ks_map_free(ks_map *m);
void *ks_map_get(const ks_map *m, uint64_t key);
/* Insert or replace; returns the previous value or NULL. */
void *ks_map_put(ks_map *m, uint64_t key, void *val);
void *ks_map_del(ks_map *m, uint64_t key);
/* Room for n keys in all without growing. */
void ks_map_reserve(ks_map *m, size_t n);
void ks_map_clear(ks_map *m);
/* Iterate: for (size_t i = 0; ks_map_next(m, &i, &k, &v);) */
int ks_map_next(const ks_map *m, size_t *iter, uint64_t *key, void **val);

#endif
