/* Allocation that never returns NULL: out of memory aborts with a message.
 * A scheduler that cannot allocate cannot make a correct decision. */
#ifndef KS_XALLOC_H
#define KS_XALLOC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

_Noreturn void ks_oom(void);
void *ks_xmalloc(size_t n);
void *ks_xcalloc(size_t n, size_t size);
void *ks_xrealloc(void *p, size_t n);
char *ks_xstrdup(const char *s);
char *ks_xstrndup(const char *s, size_t n);
char *ks_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ks_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Replace *err (freed) with the formatted message; returns false, so that
 * a failing function can end with `return ks_set_error(err, ...)`. */
bool ks_set_error(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For a long-running process with many threads (ksched run): one malloc
 * arena, unless MALLOC_ARENA_MAX or GLIBC_TUNABLES says otherwise. Call
 * before threads start. */
void ks_malloc_cap_arenas(void);

/* Grow a dynamic array: ensure room for `need` elements. */
#define KS_GROW(ptr, cap, need)                                              \
    do {                                                                     \
        if ((size_t)(need) > (size_t)(cap)) {                                \
            size_t ks_nc_ = (cap) ? (size_t)(cap) * 2 : 8;                   \
            while (ks_nc_ < (size_t)(need)) ks_nc_ *= 2;                     \
            (ptr) = ks_xrealloc((ptr), ks_nc_ * sizeof(*(ptr)));             \
            (cap) = ks_nc_;                                                  \
        }                                                                    \
    } while (0)

#endif
