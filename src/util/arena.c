#include "util/arena.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chunk header is 16 bytes so its data stays 16-aligned; the first
 * chunk shares one block with the arena (one allocation per arena, no
 * padding): small arenas, one per decoded object, are most of them. */
typedef struct chunk {
    struct chunk *next;
    uint32_t size, used;
    _Alignas(16) unsigned char data[];
} chunk;

struct ks_arena {
    chunk *head;  /* current chunk; older ones follow, the first one last */
    size_t total;
};

_Static_assert(sizeof(chunk) == 16 && sizeof(struct ks_arena) == 16, "arena headers");

#define CHUNK_MAX (UINT32_MAX & ~(uint32_t)15)

static chunk *first_chunk(ks_arena *a) { return (chunk *)(a + 1); }

static chunk *chunk_new(size_t size) {
    chunk *c = ks_xmalloc(sizeof(chunk) + size);
    c->next = NULL;
    c->size = (uint32_t)size;
    c->used = 0;
    return c;
}

ks_arena *ks_arena_new(size_t first) {
    if (!first) first = 4096;
    first = (first + 15) & ~(size_t)15;
    if (first > CHUNK_MAX) first = CHUNK_MAX;
    ks_arena *a = ks_xmalloc(sizeof(*a) + sizeof(chunk) + first);
    chunk *c = first_chunk(a);
    c->next = NULL;
    c->size = (uint32_t)first;
    c->used = 0;
    a->head = c;
    a->total = 0;
    return a;
}

void ks_arena_free(ks_arena *a) {
    if (!a) return;
    chunk *first = first_chunk(a);
    for (chunk *c = a->head; c != first;) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void ks_arena_reset(ks_arena *a) {
    chunk *first = first_chunk(a);
    for (chunk *c = a->head; c != first;) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    first->used = 0;
    a->head = first;
    a->total = 0;
}

void *ks_arena_alloc(ks_arena *a, size_t n) {
    void *p = ks_arena_alloc_uninit(a, n);
    memset(p, 0, n);
    return p;
}

void *ks_arena_alloc_uninit(ks_arena *a, size_t n) {
    if (n > CHUNK_MAX) ks_oom();
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    chunk *c = a->head;
    if (c->size - c->used < n) {
        size_t sz = (size_t)c->size * 2;
        if (sz > CHUNK_MAX) sz = CHUNK_MAX;
        if (sz < n) sz = n;
        /* Link the new chunk in front: the first chunk stays last. */
        chunk *nc = chunk_new(sz);
        nc->next = c;
        a->head = nc;
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += (uint32_t)n;
    a->total += n;
    return p;
}

void *ks_arena_calloc(ks_arena *a, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) ks_oom();
    return ks_arena_alloc(a, n * size);
}

char *ks_arena_strndup(ks_arena *a, const char *s, size_t n) {
    char *p = ks_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *ks_arena_strdup(ks_arena *a, const char *s) {
    return ks_arena_strndup(a, s, strlen(s));
}

char *ks_arena_printf(ks_arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = ks_arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

size_t ks_arena_used(const ks_arena *a) { return a->total; }

size_t ks_arena_hint_get(ks_arena_hint *h, size_t dflt) {
    size_t s = atomic_load_explicit(&h->size, memory_order_relaxed);
    return s ? s : dflt;
}

void ks_arena_hint_note(ks_arena_hint *h, const ks_arena *a) {
    /* what it used and a little room */
    size_t want = (a->total + a->total / 32 + 32 + 15) & ~(size_t)15;
    size_t cur = atomic_load_explicit(&h->size, memory_order_relaxed);
    size_t next = cur - cur / 16;
    if (want > next) next = want;
    /* racing notes may lose one another: only a size hint */
    atomic_store_explicit(&h->size, next, memory_order_relaxed);
}
