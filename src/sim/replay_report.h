/* Printing a replay's results (sim/timeline.h): per-pod records as a
 * table, CSV or JSON lines; summaries side by side or as JSON; the time
 * series as CSV or JSON. Times are printed as offsets from the replay's
 * start (seconds in CSV/JSON, Go durations in tables). docs/replay.md
 * documents every field. */
#ifndef KS_REPLAY_REPORT_H
#define KS_REPLAY_REPORT_H

#include "sim/timeline.h"

#include <jansson.h>
#include <stdio.h>

typedef enum { KS_TL_OUT_TABLE = 0, KS_TL_OUT_CSV, KS_TL_OUT_JSON } ks_tl_out;

/* Records: a header (table, CSV) then one line per record. `config`
 * (NULL: none) adds a column naming the configuration. */
void ks_tl_record_header(FILE *f, ks_tl_out how, bool config);
void ks_tl_record_print(FILE *f, ks_tl_out how, const char *config, int64_t start, const ks_tl_record *r);
json_t *ks_tl_record_json(int64_t start, const ks_tl_record *r);

/* Summaries of n runs (names[i], results[i]) side by side. */
void ks_tl_summary_table(FILE *f, size_t n, const char *const *names, const ks_tl_result *const *results);
json_t *ks_tl_summary_json(const ks_tl_summary *s);

/* The recorded nodes ksched finds infeasible (audit logs), a table and
 * a JSON array. */
void ks_tl_disagreements_table(FILE *f, const char *config, const ks_tl_result *r);
json_t *ks_tl_disagreements_json(const ks_tl_result *r);

/* Series: CSV (a config column when config != NULL; header when header)
 * or a JSON array of samples. */
void ks_tl_series_csv(FILE *f, const char *config, bool header, const ks_tl_result *r);
json_t *ks_tl_series_json(const ks_tl_result *r);

#endif
