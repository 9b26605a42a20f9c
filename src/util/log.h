/* klog-style logging: `I1121 05:27:01.123456   1234 file.c:42] message`.
 * Verbosity set by -v=N; KS_V(n) guards expensive argument building. */
#ifndef KS_LOG_H
#define KS_LOG_H

#include <stdbool.h>
#include <stdio.h>

extern int ks_log_verbosity;
void ks_log_set_output(FILE *f);
void ks_log_set_verbosity(int v);
void ks_log_write(char severity, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define KS_V(n) (ks_log_verbosity >= (n))
#define ks_infof(v, ...) \
    do { if (KS_V(v)) ks_log_write('I', __FILE__, __LINE__, __VA_ARGS__); } while (0)
#define ks_warnf(...) ks_log_write('W', __FILE__, __LINE__, __VA_ARGS__)
#define ks_errorf(...) ks_log_write('E', __FILE__, __LINE__, __VA_ARGS__)

#endif
