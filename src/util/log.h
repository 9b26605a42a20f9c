/* Logging as klog writes it (component-base's logs), in one of its two
 * formats:
 *
 *   text  `I1121 05:27:01.123456   1234 file.c:42] message` (the default)
 *   json  `{"ts":1700000000123.456,"caller":"dir/file.c:42","msg":"...","v":2,"key":"value"}`
 *         (--logging-format=json; "v" on info lines, none on errors)
 *
 * Verbosity set by -v=N; KS_V(n) guards expensive argument building.
 *
 * Messages in klog's structured style — a quoted message then key="value"
 * pairs, as ks_infos writes them or as a format string spells them out —
 * become JSON fields in the json format; any other text is the message. */
#ifndef KS_LOG_H
#define KS_LOG_H

#include <stdbool.h>
#include <stdio.h>

extern int ks_log_verbosity;
void ks_log_set_output(FILE *f);
void ks_log_set_verbosity(int v);

typedef enum ks_log_format { KS_LOG_TEXT = 0, KS_LOG_JSON } ks_log_format;
void ks_log_set_format(ks_log_format f);
ks_log_format ks_log_get_format(void);
/* "text" / "json"; false for anything else. */
bool ks_log_format_parse(const char *name, ks_log_format *out);

/* severity 'I', 'W', 'E'; v is the verbosity the line was logged at. */
void ks_log_write_v(char severity, int v, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void ks_log_write(char severity, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A structured line: the message, then key, value string pairs, ending
 * with NULL. */
void ks_log_s(char severity, int v, const char *file, int line, const char *msg, ...);

#define KS_V(n) (ks_log_verbosity >= (n))
#define ks_infof(v, ...) \
    do { if (KS_V(v)) ks_log_write_v('I', (v), __FILE__, __LINE__, __VA_ARGS__); } while (0)
#define ks_warnf(...) ks_log_write_v('W', 0, __FILE__, __LINE__, __VA_ARGS__)
#define ks_errorf(...) ks_log_write_v('E', 0, __FILE__, __LINE__, __VA_ARGS__)
/* ks_infos(2, "Successfully bound pod to node", "pod", "ns/p", "node", "n") */
#define ks_infos(v, ...) \
    do { if (KS_V(v)) ks_log_s('I', (v), __FILE__, __LINE__, __VA_ARGS__, (const char *)0); } while (0)
#define ks_errors(...) ks_log_s('E', 0, __FILE__, __LINE__, __VA_ARGS__, (const char *)0)

#endif
