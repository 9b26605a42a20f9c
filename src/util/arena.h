/* Bump allocator: many small allocations, one free. Used per object
 * (a decoded pod owns its arena) and per scheduling cycle. */
#ifndef KS_ARENA_H
#define KS_ARENA_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct ks_arena ks_arena;

ks_arena *ks_arena_new(size_t first_chunk);
void ks_arena_free(ks_arena *a);
/* Drop every allocation but keep the first chunk for reuse. */
void ks_arena_reset(ks_arena *a);
void *ks_arena_alloc(ks_arena *a, size_t n);      /* zeroed, 16-aligned */
void *ks_arena_alloc_uninit(ks_arena *a, size_t n); /* not zeroed */
void *ks_arena_calloc(ks_arena *a, size_t n, size_t size);
char *ks_arena_strndup(ks_arena *a, const char *s, size_t n);
char *ks_arena_strdup(ks_arena *a, const char *s);
char *ks_arena_printf(ks_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
size_t ks_arena_used(const ks_arena *a);

/* First-chunk sizes for objects that own an arena (decoded pods, nodes):
 * a fixed guess wastes most of a block on small objects and splits big
 * ones over two. The hint follows what recent objects of one kind used:
 * it grows at once to fit the largest and shrinks slowly, so alike
 * objects each take one block of about the right size. */
typedef struct ks_arena_hint {
    _Atomic size_t size; /* 0 until the first note */
} ks_arena_hint;

size_t ks_arena_hint_get(ks_arena_hint *h, size_t dflt);
void ks_arena_hint_note(ks_arena_hint *h, const ks_arena *a);

#endif
