#include "plugins/helper/args.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks_errlist_init(ks_errlist *e) {
    ks_sb_init(&e->b);
    e->n = 0;
}

void ks_errlist_add(ks_errlist *e, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (e->n++) ks_sb_puts(&e->b, ", ");
    ks_sb_puts(&e->b, buf);
}

char *ks_errlist_take(ks_errlist *e) {
    char *s = NULL;
    if (e->n == 1) s = ks_sb_take(&e->b);
    else if (e->n > 1) s = ks_xasprintf("[%s]", ks_sb_str(&e->b));
    ks_sb_free(&e->b);
    e->n = 0;
    return s;
}

static bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_dns_subdomain(const char *s, size_t n) {
    if (n == 0 || n > 253) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    }
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1])) return false;
    /* Each dot-separated label starts and ends with an alphanumeric. */
    for (size_t i = 1; i + 1 < n; i++)
        if (s[i] == '.' && (!is_alnum(s[i - 1]) || !is_alnum(s[i + 1]))) return false;
    return true;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] of at most 63 characters. */
static bool is_name_part(const char *s, size_t n) {
    if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1])) return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

bool ks_is_qualified_name(const char *v) {
    const char *slash = strchr(v, '/');
    if (!slash) return is_name_part(v, strlen(v));
    if (strchr(slash + 1, '/')) return false;
    return is_dns_subdomain(v, (size_t)(slash - v)) && is_name_part(slash + 1, strlen(slash + 1));
}

bool ks_is_label_value(const char *v) {
    size_t n = strlen(v);
    return n == 0 || is_name_part(v, n);
}
