/* What the fuzz targets share. Each target is one file, fuzz_<name>.c,
 * defining LLVMFuzzerTestOneInput; in MODE=fuzz it links libFuzzer, in the
 * other builds driver.c (a main that replays files and directories), so
 * make test can run every target over its corpus without clang.
 *
 * A target must not crash, leak, trip a sanitizer or hang on any input;
 * where a target checks an invariant (a round trip), a violation aborts
 * with a message on stderr, which libFuzzer reports as a crash. */
#ifndef KS_FUZZ_H
#define KS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (malloc'd; embedded NULs end it). */
static inline char *fz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* An invariant: abort with the message when it does not hold. */
#define FZ_CHECK(cond, ...)                                                  \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz invariant failed: %s: ", #cond);           \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            abort();                                                         \
        }                                                                    \
    } while (0)

#endif
