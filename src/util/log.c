#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int ks_log_verbosity = 0;
static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void ks_log_set_output(FILE *f) { out = f; }
void ks_log_set_verbosity(int v) { ks_log_verbosity = v; }

void ks_log_write(char severity, const char *file, int line, const char *fmt, ...) {
    FILE *f = out ? out : stderr;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    pthread_mutex_lock(&lock);
    fprintf(f, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] ", severity, tm.tm_mon + 1,
            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec, (int)getpid(),
            base, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    pthread_mutex_unlock(&lock);
}
