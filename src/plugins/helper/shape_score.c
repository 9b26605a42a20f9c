#include "plugins/helper/shape_score.h"

int64_t ks_broken_linear(const ks_shape_point *shape, size_t n, int64_t p) {
    for (size_t i = 0; i < n; i++) {
        if (p > shape[i].utilization) continue;
        if (i == 0) return shape[0].score;
        const ks_shape_point *a = &shape[i - 1], *b = &shape[i];
        /* Integer division truncates toward zero, as Go's does: for a
         * falling segment the product is negative and rounds up. */
        return a->score + (b->score - a->score) * (p - a->utilization) /
                              (b->utilization - a->utilization);
    }
    return shape[n - 1].score;
}
