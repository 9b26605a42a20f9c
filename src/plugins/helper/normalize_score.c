#include "plugins/helper/normalize_score.h"

void ks_default_normalize_score(int64_t max_priority, bool reverse, ks_node_score *scores,
                                size_t n) {
    int64_t max_count = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max_count) max_count = scores[i].score;

    if (max_count == 0) {
        if (reverse)
            for (size_t i = 0; i < n; i++) scores[i].score = max_priority;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = max_priority * scores[i].score / max_count;
        scores[i].score = reverse ? max_priority - s : s;
    }
}
