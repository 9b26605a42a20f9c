/* RFC 3339 times as the API server writes them (metav1.Time: seconds,
 * metav1.MicroTime: microseconds; UTC), and read back as Go reads them,
 * with a fraction (nine digits kept) and a Z or ±hh:mm offset. */
#ifndef KS_TIMEFMT_H
#define KS_TIMEFMT_H

#include <stdbool.h>
#include <stdint.h>

#define KS_RFC3339_LEN 40

/* ns since the epoch (negative before it), "2006-01-02T15:04:05Z" or, with
 * micro, "2006-01-02T15:04:05.000000Z". */
void ks_time_format_rfc3339(int64_t ns, bool micro, char out[KS_RFC3339_LEN]);
/* The real clock now, formatted as above. */
void ks_time_format_now_rfc3339(bool micro, char out[KS_RFC3339_LEN]);
/* Go's time.Parse(time.RFC3339, s): false when s is not a whole RFC 3339
 * time (a day the month lacks, second 60, lowercase t or z included);
 * seconds since the epoch and the fraction in ns. */
bool ks_time_parse_rfc3339_sec(const char *s, int64_t *sec, int32_t *nsec);
/* The same in ns since the epoch; a time past 2262 (beyond int64
 * nanoseconds) reads as INT64_MAX. */
bool ks_time_parse_rfc3339(const char *s, int64_t *ns);

#endif
