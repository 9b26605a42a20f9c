/* Piecewise linear ("broken linear") functions given by points, used by
 * RequestedToCapacityRatio scoring (upstream plugins/helper/shape_score.go). */
#ifndef KS_PLUGINS_HELPER_SHAPE_SCORE_H
#define KS_PLUGINS_HELPER_SHAPE_SCORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks_shape_point {
    int64_t utilization;
    int64_t score;
} ks_shape_point;

/* Value at p of the function through the points (sorted by utilization,
 * n >= 1): flat before the first and after the last point, linear with
 * integer division in between. */
int64_t ks_broken_linear(const ks_shape_point *shape, size_t n, int64_t p);

#endif
