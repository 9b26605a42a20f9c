#include "util/log.h"

#include "util/strbuf.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int ks_log_verbosity = 0;
static FILE *out;
static ks_log_format format = KS_LOG_TEXT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void ks_log_set_output(FILE *f) { out = f; }
void ks_log_set_verbosity(int v) { ks_log_verbosity = v; }
void ks_log_set_format(ks_log_format f) { format = f; }
ks_log_format ks_log_get_format(void) { return format; }

bool ks_log_format_parse(const char *name, ks_log_format *f) {
    if (strcmp(name, "text") == 0) *f = KS_LOG_TEXT;
    else if (strcmp(name, "json") == 0) *f = KS_LOG_JSON;
    else return false;
    return true;
}

/* ---- text ------------------------------------------------------------------ */

static void text_header(ks_strbuf *b, char severity, const char *file, int line) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    ks_sb_printf(b, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] ", severity, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, (long)tv.tv_usec, (int)getpid(), base, line);
}


/* ---- json -------------------------------------------------------------------- */

static void json_str(ks_strbuf *b, const char *s, size_t n) {
    ks_sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': ks_sb_puts(b, "\\\""); break;
        case '\\': ks_sb_puts(b, "\\\\"); break;
        case '\n': ks_sb_puts(b, "\\n"); break;
        case '\t': ks_sb_puts(b, "\\t"); break;
        case '\r': ks_sb_puts(b, "\\r"); break;
        default:
            if (c < 0x20) ks_sb_printf(b, "\\u%04x", c);
            else ks_sb_putc(b, (char)c);
        }
    }
    ks_sb_putc(b, '"');
}

static void json_header(ks_strbuf *b, const char *file, int line) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* milliseconds since the epoch, as component-base's encoder writes */
    char t[40];
    snprintf(t, sizeof(t), "%lld.%06ld", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
             (long)(ts.tv_nsec % 1000000));
    size_t n = strlen(t);
    while (t[n - 1] == '0') t[--n] = 0;
    if (t[n - 1] == '.') t[--n] = 0;
    /* the caller as zap's short form: the last directory and the file */
    const char *base = file + strlen(file);
    int slashes = 0;
    while (base > file && !(base[-1] == '/' && ++slashes == 2)) base--;
    ks_sb_printf(b, "{\"ts\":%s,\"caller\":\"%s:%d\",\"msg\":", t, base, line);
}

/* A Go-quoted string at *p: its unquoted text appended to out. */
static bool unquote(const char **p, ks_strbuf *dst) {
    const char *s = *p;
    if (*s != '"') return false;
    for (s++; *s && *s != '"'; s++) {
        if (*s != '\\') {
            ks_sb_putc(dst, *s);
            continue;
        }
        s++;
        switch (*s) {
        case 'n': ks_sb_putc(dst, '\n'); break;
        case 't': ks_sb_putc(dst, '\t'); break;
        case 'r': ks_sb_putc(dst, '\r'); break;
        case '"': ks_sb_putc(dst, '"'); break;
        case '\\': ks_sb_putc(dst, '\\'); break;
        default: return false;
        }
    }
    if (*s != '"') return false;
    *p = s + 1;
    return true;
}

static bool is_number(const char *s, size_t n) {
    if (n == 0) return false;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == n) return false;
    bool dot = false;
    for (; i < n; i++) {
        if (s[i] == '.' && !dot) dot = true;
        else if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
}

/* `"msg" k="v" k2=v2` as JSON fields ("msg":...,"v":..,"k":"v",...);
 * false (nothing written) when the text is not in that shape. */
static bool structured_json(ks_strbuf *b, const char *text, const char *vfield) {
    ks_strbuf tmp, val;
    ks_sb_init(&tmp);
    ks_sb_init(&val);
    const char *p = text;
    bool ok = unquote(&p, &val);
    if (ok) {
        json_str(&tmp, val.s ? val.s : "", val.len);
        ks_sb_puts(&tmp, vfield);
    }
    while (ok && *p) {
        if (*p != ' ') {
            ok = false;
            break;
        }
        p++;
        const char *k = p;
        while (*p && *p != '=' && *p != ' ' && *p != '"') p++;
        if (*p != '=' || p == k) {
            ok = false;
            break;
        }
        size_t kn = (size_t)(p - k);
        p++;
        ks_sb_putc(&tmp, ',');
        json_str(&tmp, k, kn);
        ks_sb_putc(&tmp, ':');
        if (*p == '"') {
            ks_sb_reset(&val);
            if (!unquote(&p, &val)) {
                ok = false;
                break;
            }
            json_str(&tmp, val.s ? val.s : "", val.len);
        } else {
            const char *v = p;
            while (*p && *p != ' ') p++;
            if (is_number(v, (size_t)(p - v))) ks_sb_putn(&tmp, v, (size_t)(p - v));
            else json_str(&tmp, v, (size_t)(p - v));
        }
    }
    if (ok) ks_sb_putn(b, tmp.s ? tmp.s : "", tmp.len);
    ks_sb_free(&tmp);
    ks_sb_free(&val);
    return ok;
}

/* ---- writing ------------------------------------------------------------------- */

static void emit(ks_strbuf *b) {
    FILE *f = out ? out : stderr;
    pthread_mutex_lock(&lock);
    fwrite(b->s, 1, b->len, f);
    pthread_mutex_unlock(&lock);
}

static void write_line(char severity, int v, const char *file, int line, const char *text) {
    ks_strbuf b;
    ks_sb_init(&b);
    if (format == KS_LOG_JSON) {
        char vfield[24] = "";
        if (severity != 'E') snprintf(vfield, sizeof(vfield), ",\"v\":%d", v);
        json_header(&b, file, line);
        if (!structured_json(&b, text, vfield)) {
            json_str(&b, text, strlen(text));
            ks_sb_puts(&b, vfield);
        }
        ks_sb_puts(&b, "}\n");
    } else {
        text_header(&b, severity, file, line);
        ks_sb_puts(&b, text);
        ks_sb_putc(&b, '\n');
    }
    emit(&b);
    ks_sb_free(&b);
}

static void vwrite(char severity, int v, const char *file, int line, const char *fmt, va_list ap) {
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof(small)) {
        write_line(severity, v, file, line, small);
    } else {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, ap2);
            write_line(severity, v, file, line, big);
            free(big);
        }
    }
    va_end(ap2);
}

void ks_log_write_v(char severity, int v, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vwrite(severity, v, file, line, fmt, ap);
    va_end(ap);
}

void ks_log_write(char severity, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vwrite(severity, 0, file, line, fmt, ap);
    va_end(ap);
}

void ks_log_s(char severity, int v, const char *file, int line, const char *msg, ...) {
    /* klog's text form; the json form is made from it. */
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_quote_str(&b, msg);
    va_list ap;
    va_start(ap, msg);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k) break;
        const char *val = va_arg(ap, const char *);
        ks_sb_printf(&b, " %s=", k);
        ks_sb_quote_str(&b, val ? val : "");
    }
    va_end(ap);
    write_line(severity, v, file, line, ks_sb_str(&b));
    ks_sb_free(&b);
}
