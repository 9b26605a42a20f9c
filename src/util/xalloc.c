#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

_Noreturn void ks_oom(void) {
    fputs("ksched: out of memory\n", stderr);
    abort();
}

void *ks_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) ks_oom();
    return p;
}

void *ks_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) ks_oom();
    return p;
}

void *ks_xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) ks_oom();
    return p;
}

char *ks_xstrndup(const char *s, size_t n) {
    char *p = ks_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *ks_xstrdup(const char *s) { return ks_xstrndup(s, strlen(s)); }

char *ks_xvasprintf(const char *fmt, va_list ap) {
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) ks_oom();
    char *p = ks_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *ks_xasprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = ks_xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}

bool ks_set_error(char **err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = ks_xvasprintf(fmt, ap);
    va_end(ap);
    free(*err);
    *err = s;
    return false;
}

/* glibc gives a thread that allocates an arena of its own, up to 8 per
 * core, and memory freed in one arena is not reused by another: the
 * reflectors decode objects that other threads free. ksched run has about
 * 50 threads, most of them waiting on the API server, and small blocks
 * come from each thread's cache without the arena's lock. Peak RSS
 * through the API server, 2 cores (docs/performance.md, fourth pass):
 * TopologySpreading 29.7-29.9 MiB with two arenas, 27.1-27.5 with one;
 * DRA at 500 nodes 62.0 against 56.7; CPU the same (0.74-0.86 s against
 * 0.77-0.93, 5.22 against 5.27). */
void ks_malloc_cap_arenas(void) {
#ifdef __GLIBC__
    const char *t = getenv("GLIBC_TUNABLES");
    if (getenv("MALLOC_ARENA_MAX") || (t && strstr(t, "arena_max"))) return;
    mallopt(M_ARENA_MAX, 1);
#endif
}
