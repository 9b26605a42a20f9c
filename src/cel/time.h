/* CEL timestamps and durations (time.c): google.protobuf.Timestamp and
 * Duration as cel-go has them. */
#ifndef KS_CEL_TIME_H
#define KS_CEL_TIME_H

#include "cel/cel_internal.h"

/* RFC 3339 as Go's time.Parse(time.RFC3339, s) accepts it: Unix seconds,
 * nanoseconds and the offset written (seconds east of UTC). */
bool cel_time_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec, int32_t *off);
/* time.Format(time.RFC3339Nano) at the given offset. */
void cel_time_format(ks_strbuf *b, int64_t sec, int32_t nsec, int32_t off);
/* time.ParseDuration, in nanoseconds. */
bool cel_duration_parse(const char *s, size_t n, int64_t *out);
/* cel-go's string(duration): seconds, shortest form, "s". */
void cel_duration_format(ks_strbuf *b, int64_t d);

/* Ordering of two timestamps or two durations (same kind). */
int cel_time_compare(cel_val a, cel_val b);
void cel_time_print(ks_strbuf *b, cel_val v);
/* cel-go's ValidateTimestampLiterals / ValidateDurationLiterals: whether
 * fn ("timestamp", "duration") of a constant fails. */
bool cel_time_literal_invalid(const char *fn, cel_val lit);

/* Message literals: the kind a type name denotes (CT_TIMESTAMP,
 * CT_DURATION; also for the bare names timestamp and duration, which
 * DRA's environment declares but cannot build) or -1; the value of
 * parse.c's "@msg" call. */
int cel_time_message_type(const char *name);
cel_val cel_time_make_message(cel_eval *ev, const cel_expr *e);

cel_val cel_f_timestamp(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_duration(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_time_int(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_time_string(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_time_add(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_time_sub(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_duration_neg(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_full_year(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_month(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_day_of_year(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_day_of_month(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_date(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_day_of_week(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_hours(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_minutes(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_seconds(cel_eval *ev, const cel_val *args, uint32_t n);
cel_val cel_f_get_milliseconds(cel_eval *ev, const cel_val *args, uint32_t n);

/* The overloads, for funcs.c's table (G: global, M: member, CMP_T: an
 * ordering operator). */
#define CEL_TIME_OVERLOADS(G, M, CMP_T)                                                                            \
    G("timestamp", "timestamp -> timestamp", cel_f_timestamp), G("timestamp", "int -> timestamp", cel_f_timestamp), \
        G("timestamp", "string -> timestamp", cel_f_timestamp),                                                     \
        G("duration", "duration -> duration", cel_f_duration), G("duration", "int -> duration", cel_f_duration),    \
        G("duration", "string -> duration", cel_f_duration), G("int", "timestamp -> int", cel_f_time_int),          \
        G("int", "duration -> int", cel_f_time_int), G("string", "timestamp -> string", cel_f_time_string),         \
        G("string", "duration -> string", cel_f_time_string),                                                       \
        G("_+_", "duration duration -> duration", cel_f_time_add),                                                  \
        G("_+_", "duration timestamp -> timestamp", cel_f_time_add),                                                \
        G("_+_", "timestamp duration -> timestamp", cel_f_time_add),                                                \
        G("_-_", "duration duration -> duration", cel_f_time_sub),                                                  \
        G("_-_", "timestamp duration -> timestamp", cel_f_time_sub),                                                \
        G("_-_", "timestamp timestamp -> duration", cel_f_time_sub), CMP_T("timestamp"), CMP_T("duration"),         \
        M("getFullYear", "timestamp -> int", cel_f_get_full_year),                                                  \
        M("getFullYear", "timestamp string -> int", cel_f_get_full_year),                                           \
        M("getMonth", "timestamp -> int", cel_f_get_month), M("getMonth", "timestamp string -> int", cel_f_get_month), \
        M("getDayOfYear", "timestamp -> int", cel_f_get_day_of_year),                                               \
        M("getDayOfYear", "timestamp string -> int", cel_f_get_day_of_year),                                        \
        M("getDayOfMonth", "timestamp -> int", cel_f_get_day_of_month),                                             \
        M("getDayOfMonth", "timestamp string -> int", cel_f_get_day_of_month),                                      \
        M("getDate", "timestamp -> int", cel_f_get_date), M("getDate", "timestamp string -> int", cel_f_get_date),  \
        M("getDayOfWeek", "timestamp -> int", cel_f_get_day_of_week),                                               \
        M("getDayOfWeek", "timestamp string -> int", cel_f_get_day_of_week),                                        \
        M("getHours", "timestamp -> int", cel_f_get_hours), M("getHours", "timestamp string -> int", cel_f_get_hours), \
        M("getHours", "duration -> int", cel_f_get_hours),                                                          \
        M("getMinutes", "timestamp -> int", cel_f_get_minutes),                                                     \
        M("getMinutes", "timestamp string -> int", cel_f_get_minutes),                                              \
        M("getMinutes", "duration -> int", cel_f_get_minutes),                                                      \
        M("getSeconds", "timestamp -> int", cel_f_get_seconds),                                                     \
        M("getSeconds", "timestamp string -> int", cel_f_get_seconds),                                              \
        M("getSeconds", "duration -> int", cel_f_get_seconds),                                                      \
        M("getMilliseconds", "timestamp -> int", cel_f_get_milliseconds),                                           \
        M("getMilliseconds", "timestamp string -> int", cel_f_get_milliseconds),                                    \
        M("getMilliseconds", "duration -> int", cel_f_get_milliseconds)

#endif
