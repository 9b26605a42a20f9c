#include "util/arena.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} chunk;

struct ks_arena {
    chunk *head;       /* current chunk; older ones follow */
    size_t first_size;
    size_t total;
};

static chunk *chunk_new(size_t size) {
    chunk *c = ks_xmalloc(sizeof(chunk) + size);
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

ks_arena *ks_arena_new(size_t first_chunk) {
    ks_arena *a = ks_xcalloc(1, sizeof(*a));
    a->first_size = first_chunk ? first_chunk : 4096;
    a->head = chunk_new(a->first_size);
    return a;
}

void ks_arena_free(ks_arena *a) {
    if (!a) return;
    chunk *c = a->head;
    while (c) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void ks_arena_reset(ks_arena *a) {
    /* Keep only the oldest chunk, which is the one of first_size. */
    chunk *c = a->head;
    while (c->next) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    c->used = 0;
    a->head = c;
    a->total = 0;
}

void *ks_arena_alloc(ks_arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    chunk *c = a->head;
    if (c->size - c->used < n) {
        size_t sz = c->size * 2;
        if (sz < n) sz = n;
        /* Link the new chunk in front but keep the first chunk last so
         * reset can find it. */
        chunk *nc = chunk_new(sz);
        nc->next = c;
        a->head = nc;
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->total += n;
    memset(p, 0, n);
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
    /* what it used, a little room, a whole number of 64-byte lines */
    size_t want = (a->total + a->total / 16 + 64 + 63) & ~(size_t)63;
    size_t cur = atomic_load_explicit(&h->size, memory_order_relaxed);
    size_t next = cur - cur / 16;
    if (want > next) next = want;
    /* racing notes may lose one another: only a size hint */
    atomic_store_explicit(&h->size, next, memory_order_relaxed);
}
