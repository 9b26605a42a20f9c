#include "framework/status.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_names[] = {
    [KS_SUCCESS] = "Success",
    [KS_ERROR] = "Error",
    [KS_UNSCHEDULABLE] = "Unschedulable",
    [KS_UNSCHEDULABLE_AND_UNRESOLVABLE] = "UnschedulableAndUnresolvable",
    [KS_WAIT] = "Wait",
    [KS_SKIP] = "Skip",
    [KS_PENDING] = "Pending",
};

const char *ks_code_name(ks_code c) {
    if ((unsigned)c < sizeof(code_names) / sizeof(code_names[0])) return code_names[c];
    return "Unknown";
}

static void push_reason(ks_status *s, char *r) {
    KS_GROW(s->reasons, s->cap, s->nreasons + 1);
    s->reasons[s->nreasons++] = r;
}

/* Reasons are formatted for every node a filter rejects, and almost all
 * are a constant or have only %s in them ("Insufficient %s"): those are
 * joined here without printf's two passes. */
static char *format(const char *fmt, va_list ap) {
    size_t n = 0, nargs = 0;
    const char *args[4];
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            n++;
            continue;
        }
        if (p[1] != 's' || nargs == 4) goto slow;
        p++;
        nargs++;
    }
    va_list cp;
    va_copy(cp, ap);
    for (size_t i = 0; i < nargs; i++) {
        args[i] = va_arg(cp, const char *);
        if (!args[i]) args[i] = "(null)";
        n += strlen(args[i]);
    }
    va_end(cp);
    char *r = ks_xmalloc(n + 1), *w = r;
    size_t a = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            *w++ = *p;
            continue;
        }
        size_t len = strlen(args[a]);
        memcpy(w, args[a++], len);
        w += len;
        p++;
    }
    *w = 0;
    return r;
slow:;
    va_list cp2;
    va_copy(cp2, ap);
    int len = vsnprintf(NULL, 0, fmt, cp2);
    va_end(cp2);
    char *out = ks_xmalloc((size_t)len + 1);
    va_copy(cp2, ap);
    vsnprintf(out, (size_t)len + 1, fmt, cp2);
    va_end(cp2);
    return out;
}

ks_status *ks_status_newv(ks_code code, const char *fmt, va_list ap) {
    ks_status *s = ks_xcalloc(1, sizeof(*s));
    s->code = code;
    if (fmt) push_reason(s, format(fmt, ap));
    return s;
}

ks_status *ks_status_new(ks_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ks_status *s = ks_status_newv(code, fmt, ap);
    va_end(ap);
    return s;
}

void ks_status_add_reason(ks_status *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    push_reason(s, format(fmt, ap));
    va_end(ap);
}

ks_code ks_status_code(const ks_status *s) { return s ? s->code : KS_SUCCESS; }
size_t ks_status_nreasons(const ks_status *s) { return s ? s->nreasons : 0; }
const char *ks_status_reason(const ks_status *s, size_t i) {
    return (s && i < s->nreasons) ? s->reasons[i] : NULL;
}
const char *ks_status_plugin(const ks_status *s) { return s && s->plugin ? s->plugin : ""; }
void ks_status_set_plugin(ks_status *s, const char *plugin) {
    if (s) s->plugin = plugin;
}

void ks_status_free(ks_status *s) {
    if (!s) return;
    for (uint32_t i = 0; i < s->nreasons; i++) free(s->reasons[i]);
    free(s->reasons);
    free(s);
}

ks_status *ks_status_clone(const ks_status *s) {
    if (!s) return NULL;
    ks_status *c = ks_xcalloc(1, sizeof(*c));
    c->code = s->code;
    c->plugin = s->plugin;
    for (uint32_t i = 0; i < s->nreasons; i++) push_reason(c, ks_xstrdup(s->reasons[i]));
    return c;
}

char *ks_status_message(const ks_status *s) {
    ks_strbuf b;
    ks_sb_init(&b);
    for (uint32_t i = 0; s && i < s->nreasons; i++) {
        if (i) ks_sb_puts(&b, ", ");
        ks_sb_puts(&b, s->reasons[i]);
    }
    return ks_sb_take(&b);
}

bool ks_code_is_rejected(ks_code c) {
    return c == KS_UNSCHEDULABLE || c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || c == KS_PENDING;
}

void ks_status_log_free(const char *what, ks_status *s) {
    if (!s) return;
    char *m = ks_status_message(s);
    ks_errorf("%s: %s", what, m);
    free(m);
    ks_status_free(s);
}
