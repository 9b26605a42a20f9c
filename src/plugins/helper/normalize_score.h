/* Shared by the score plugins that rescale raw scores to 0..max
 * (upstream plugins/helper/normalize_score.go). */
#ifndef KS_PLUGINS_HELPER_NORMALIZE_SCORE_H
#define KS_PLUGINS_HELPER_NORMALIZE_SCORE_H

#include <ksched/ksched.h>

/* Scale scores so the highest becomes max_priority (integer division, as
 * upstream). With reverse the result is max_priority - scaled. When every
 * score is 0 the scores stay 0, or all become max_priority with reverse. */
void ks_default_normalize_score(int64_t max_priority, bool reverse, ks_node_score *scores,
                                size_t n);

#endif
