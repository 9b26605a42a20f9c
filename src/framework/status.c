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

ks_status *ks_status_newv(ks_code code, const char *fmt, va_list ap) {
    ks_status *s = ks_xcalloc(1, sizeof(*s));
    s->code = code;
    if (fmt) {
        va_list cp;
        va_copy(cp, ap);
        int n = vsnprintf(NULL, 0, fmt, cp);
        va_end(cp);
        char *r = ks_xmalloc((size_t)n + 1);
        vsnprintf(r, (size_t)n + 1, fmt, ap);
        push_reason(s, r);
    }
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
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *r = ks_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(r, (size_t)n + 1, fmt, ap);
    va_end(ap);
    push_reason(s, r);
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
