/* Go's sort.Slice (pattern-defeating quicksort, Go 1.19+), reproduced so
 * that elements the comparison considers equal end up in the same order as
 * upstream's. sort.Slice is not stable, and where upstream sorts pods whose
 * keys tie (equal priority and start time), which pod is picked depends on
 * that exact algorithm. Use it wherever the reference calls sort.Slice. */
#ifndef KS_GOSORT_H
#define KS_GOSORT_H

#include <stdbool.h>
#include <stddef.h>

/* less(i, j, ctx): element i sorts before element j. swap(i, j, ctx). */
typedef bool (*ks_go_less_fn)(size_t i, size_t j, void *ctx);
typedef void (*ks_go_swap_fn)(size_t i, size_t j, void *ctx);

void ks_go_sort(size_t n, ks_go_less_fn less, ks_go_swap_fn swap, void *ctx);

/* The common case: an array of pointers and a comparison of two of them. */
void ks_go_sort_ptrs(void **v, size_t n, bool (*less)(const void *a, const void *b, void *ctx),
                     void *ctx);

#endif
