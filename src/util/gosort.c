/* A transcription of the algorithm behind Go's sort.Slice (pdqsort without
 * block partitioning), step for step, so ties resolve as they do upstream.
 * Indices are signed as in Go: a few loops run down to 0 or below a. */
#include "util/gosort.h"

#include <stdint.h>

typedef struct sorter {
    ks_go_less_fn less;
    ks_go_swap_fn swap;
    void *ctx;
} sorter;

typedef long idx;

enum { HINT_UNKNOWN = 0, HINT_INCREASING, HINT_DECREASING };

static inline bool lt(const sorter *s, idx i, idx j) { return s->less((size_t)i, (size_t)j, s->ctx); }
static inline void sw(const sorter *s, idx i, idx j) { s->swap((size_t)i, (size_t)j, s->ctx); }

static int bits_len(unsigned long x) {
    int n = 0;
    while (x) {
        n++;
        x >>= 1;
    }
    return n;
}

static void insertion_sort(const sorter *s, idx a, idx b) {
    for (idx i = a + 1; i < b; i++)
        for (idx j = i; j > a && lt(s, j, j - 1); j--) sw(s, j, j - 1);
}

static void sift_down(const sorter *s, idx lo, idx hi, idx first) {
    idx root = lo;
    for (;;) {
        idx child = 2 * root + 1;
        if (child >= hi) return;
        if (child + 1 < hi && lt(s, first + child, first + child + 1)) child++;
        if (!lt(s, first + root, first + child)) return;
        sw(s, first + root, first + child);
        root = child;
    }
}

static void heap_sort(const sorter *s, idx a, idx b) {
    idx first = a, hi = b - a;
    for (idx i = (hi - 1) / 2; i >= 0; i--) sift_down(s, i, hi, first);
    for (idx i = hi - 1; i >= 0; i--) {
        sw(s, first, first + i);
        sift_down(s, 0, i, first);
    }
}

static idx partition(const sorter *s, idx a, idx b, idx pivot, bool *already) {
    sw(s, a, pivot);
    idx i = a + 1, j = b - 1;
    while (i <= j && lt(s, i, a)) i++;
    while (i <= j && !lt(s, j, a)) j--;
    if (i > j) {
        sw(s, j, a);
        *already = true;
        return j;
    }
    sw(s, i, j);
    i++;
    j--;
    for (;;) {
        while (i <= j && lt(s, i, a)) i++;
        while (i <= j && !lt(s, j, a)) j--;
        if (i > j) break;
        sw(s, i, j);
        i++;
        j--;
    }
    sw(s, j, a);
    *already = false;
    return j;
}

static idx partition_equal(const sorter *s, idx a, idx b, idx pivot) {
    sw(s, a, pivot);
    idx i = a + 1, j = b - 1;
    for (;;) {
        while (i <= j && !lt(s, a, i)) i++;
        while (i <= j && lt(s, a, j)) j--;
        if (i > j) break;
        sw(s, i, j);
        i++;
        j--;
    }
    return i;
}

static bool partial_insertion_sort(const sorter *s, idx a, idx b) {
    const int max_steps = 5;
    const idx shortest_shifting = 50;
    idx i = a + 1;
    for (int step = 0; step < max_steps; step++) {
        while (i < b && !lt(s, i, i - 1)) i++;
        if (i == b) return true;
        if (b - a < shortest_shifting) return false;
        sw(s, i, i - 1);
        if (i - a >= 2) {
            /* Go's bound is 1, not a+1; kept for identical results. */
            for (idx j = i - 1; j >= 1; j--) {
                if (!lt(s, j, j - 1)) break;
                sw(s, j, j - 1);
            }
        }
        if (b - i >= 2) {
            for (idx j = i + 1; j < b; j++) {
                if (!lt(s, j, j - 1)) break;
                sw(s, j, j - 1);
            }
        }
    }
    return false;
}

static void break_patterns(const sorter *s, idx a, idx b) {
    idx length = b - a;
    if (length < 8) return;
    uint64_t r = (uint64_t)length;
    unsigned long modulus = 1ul << bits_len((unsigned long)length);
    for (idx i = a + (length / 4) * 2 - 1; i <= a + (length / 4) * 2 + 1; i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        idx other = (idx)((unsigned long)r & (modulus - 1));
        if (other >= length) other -= length;
        sw(s, i, a + other);
    }
}

static void order2(const sorter *s, idx *a, idx *b, int *swaps) {
    if (lt(s, *b, *a)) {
        (*swaps)++;
        idx t = *a;
        *a = *b;
        *b = t;
    }
}

static idx median(const sorter *s, idx a, idx b, idx c, int *swaps) {
    order2(s, &a, &b, swaps);
    order2(s, &b, &c, swaps);
    order2(s, &a, &b, swaps);
    return b;
}

static idx choose_pivot(const sorter *s, idx a, idx b, int *hint) {
    const idx shortest_ninther = 50;
    const int max_swaps = 4 * 3;
    idx l = b - a;
    int swaps = 0;
    idx i = a + l / 4 * 1, j = a + l / 4 * 2, k = a + l / 4 * 3;
    if (l >= 8) {
        if (l >= shortest_ninther) {
            i = median(s, i - 1, i, i + 1, &swaps);
            j = median(s, j - 1, j, j + 1, &swaps);
            k = median(s, k - 1, k, k + 1, &swaps);
        }
        j = median(s, i, j, k, &swaps);
    }
    *hint = swaps == 0 ? HINT_INCREASING : swaps == max_swaps ? HINT_DECREASING : HINT_UNKNOWN;
    return j;
}

static void reverse_range(const sorter *s, idx a, idx b) {
    for (idx i = a, j = b - 1; i < j; i++, j--) sw(s, i, j);
}

static void pdqsort(const sorter *s, idx a, idx b, int limit) {
    const idx max_insertion = 12;
    bool was_balanced = true, was_partitioned = true;
    for (;;) {
        idx length = b - a;
        if (length <= max_insertion) {
            insertion_sort(s, a, b);
            return;
        }
        if (limit == 0) {
            heap_sort(s, a, b);
            return;
        }
        if (!was_balanced) {
            break_patterns(s, a, b);
            limit--;
        }
        int hint;
        idx pivot = choose_pivot(s, a, b, &hint);
        if (hint == HINT_DECREASING) {
            reverse_range(s, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = HINT_INCREASING;
        }
        if (was_balanced && was_partitioned && hint == HINT_INCREASING &&
            partial_insertion_sort(s, a, b))
            return;
        if (a > 0 && !lt(s, a - 1, pivot)) {
            a = partition_equal(s, a, b, pivot);
            continue;
        }
        bool already;
        idx mid = partition(s, a, b, pivot, &already);
        was_partitioned = already;
        idx left = mid - a, right = b - mid, threshold = length / 8;
        if (left < right) {
            was_balanced = left >= threshold;
            pdqsort(s, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right >= threshold;
            pdqsort(s, mid + 1, b, limit);
            b = mid;
        }
    }
}

void ks_go_sort(size_t n, ks_go_less_fn less, ks_go_swap_fn swap, void *ctx) {
    sorter s = {less, swap, ctx};
    pdqsort(&s, 0, (idx)n, bits_len(n));
}

typedef struct ptr_ctx {
    void **v;
    bool (*less)(const void *, const void *, void *);
    void *ctx;
} ptr_ctx;

static bool ptr_less(size_t i, size_t j, void *c) {
    ptr_ctx *p = c;
    return p->less(p->v[i], p->v[j], p->ctx);
}

static void ptr_swap(size_t i, size_t j, void *c) {
    ptr_ctx *p = c;
    void *t = p->v[i];
    p->v[i] = p->v[j];
    p->v[j] = t;
}

void ks_go_sort_ptrs(void **v, size_t n, bool (*less)(const void *a, const void *b, void *ctx),
                     void *ctx) {
    ptr_ctx p = {v, less, ctx};
    ks_go_sort(n, ptr_less, ptr_swap, &p);
}
