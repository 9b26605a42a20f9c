#include "framework/status.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <pthread.h>
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

/* The text right after the struct, when the status was made with one. */
static char *inline_text(ks_status *s) { return (char *)(s + 1); }

static void push_reason(ks_status *s, char *r) {
    if (s->reasons == s->first) {
        /* leave the inline slot: the array grows on the heap */
        char **v = ks_xmalloc(4 * sizeof(*v));
        for (uint32_t i = 0; i < s->nreasons; i++) v[i] = s->reasons[i];
        s->reasons = v;
        s->cap = 4;
    }
    KS_GROW(s->reasons, s->cap, s->nreasons + 1);
    s->reasons[s->nreasons++] = r;
}

/* Reasons are formatted for every node a filter rejects, and almost all
 * are a constant or have only %s in them ("Insufficient %s"): those are
 * joined without printf's two passes. format_len returns the length, or
 * -1 when printf is needed; args receives the %s arguments. */
#define MAX_ARGS 4
static long format_len(const char *fmt, va_list ap, const char **args, size_t *nargs) {
    size_t n = 0;
    *nargs = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            n++;
            continue;
        }
        if (p[1] != 's' || *nargs == MAX_ARGS) return -1;
        p++;
        (*nargs)++;
    }
    va_list cp;
    va_copy(cp, ap);
    for (size_t i = 0; i < *nargs; i++) {
        args[i] = va_arg(cp, const char *);
        if (!args[i]) args[i] = "(null)";
        n += strlen(args[i]);
    }
    va_end(cp);
    return (long)n;
}

static void format_into(char *w, const char *fmt, const char **args) {
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
}

/* Freed statuses kept for the next, per thread (linked through
 * `reasons`): a Filter pass makes one for every node a plugin turns down
 * and the cycle's diagnosis frees them all; malloc and free of them were
 * 7% of the instructions of a bench/gen_workloads.py run. A status whose
 * block (struct and text) fits SPARE_BLOCK bytes gets one of that size,
 * constant or formatted ("node(s) had no GPU with enough free share":
 * with the constant ones, ~10 % of an openb study's CPU in malloc and
 * free). Off under ASan, which should see every free. */
#if defined(__SANITIZE_ADDRESS__)
#define SPARE_BLOCK 0
static ks_status *spare_take(void) { return NULL; }
static bool spare_put(ks_status *s) {
    (void)s;
    return false;
}
#else
#define SPARE_BLOCK 96
_Static_assert(sizeof(ks_status) <= SPARE_BLOCK, "a status fits a spare block");
#define SPARE_MAX 4096
static _Thread_local ks_status *spare;
static _Thread_local uint32_t nspare;
static pthread_key_t spare_key; /* its destructor frees a thread's spares */
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;

static void spare_drop(void *unused) {
    (void)unused;
    while (spare) {
        ks_status *next = (ks_status *)(void *)spare->reasons;
        free(spare);
        spare = next;
    }
    nspare = 0;
}

static void spare_key_init(void) { pthread_key_create(&spare_key, spare_drop); }

static ks_status *spare_take(void) {
    ks_status *s = spare;
    if (s) {
        spare = (ks_status *)(void *)s->reasons;
        nspare--;
    }
    return s;
}

static bool spare_put(ks_status *s) {
    if (nspare >= SPARE_MAX) return false;
    if (!nspare) {
        pthread_once(&spare_once, spare_key_init);
        pthread_setspecific(spare_key, (void *)1);
    }
    s->reasons = (char **)(void *)spare;
    spare = s;
    nspare++;
    return true;
}
#endif

/* A block of need bytes for a status: *sb when of the spare size. */
static void *status_block(size_t need, bool *sb) {
    *sb = need <= SPARE_BLOCK;
    if (!*sb) return ks_xmalloc(need);
    void *b = spare_take();
    return b ? b : ks_xmalloc(SPARE_BLOCK);
}

/* A block of `extra` bytes after the struct `before` (0 or sizeof the
 * struct) holding the formatted text; returns the text. A status's block
 * (before > 0) may be of the spare size: *sb. */
static char *format_alloc(const char *fmt, va_list ap, size_t before, void **block, bool *sb) {
    const char *args[MAX_ARGS];
    size_t nargs;
    long n = format_len(fmt, ap, args, &nargs);
    *sb = false;
    if (n >= 0) {
        *block = before ? status_block(before + (size_t)n + 1, sb) : ks_xmalloc((size_t)n + 1);
        char *t = (char *)*block + before;
        format_into(t, fmt, args);
        return t;
    }
    va_list cp;
    va_copy(cp, ap);
    int len = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    *block = before ? status_block(before + (size_t)len + 1, sb) : ks_xmalloc((size_t)len + 1);
    char *t = (char *)*block + before;
    va_copy(cp, ap);
    vsnprintf(t, (size_t)len + 1, fmt, cp);
    va_end(cp);
    return t;
}

ks_status *ks_status_newv(ks_code code, const char *fmt, va_list ap) {
    ks_status *s;
    bool sb;
    if (fmt) {
        void *block;
        char *t = format_alloc(fmt, ap, sizeof(*s), &block, &sb);
        s = block;
        memset(s, 0, sizeof(*s));
        s->first[0] = t;
        s->nreasons = 1;
    } else {
        s = status_block(sizeof(*s), &sb);
        memset(s, 0, sizeof(*s));
    }
    s->spare_block = sb;
    s->reasons = s->first;
    s->cap = 1;
    s->code = code;
    return s;
}


ks_status *ks_status_new_const(ks_code code, const char *reason) {
    bool sb;
    ks_status *s = status_block(sizeof(*s), &sb);
    memset(s, 0, sizeof(*s));
    s->spare_block = sb;
    s->first[0] = (char *)reason;
    s->first_static = true;
    s->nreasons = 1;
    s->reasons = s->first;
    s->cap = 1;
    s->code = code;
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
    void *block;
    bool sb;
    push_reason(s, format_alloc(fmt, ap, 0, &block, &sb));
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
    for (uint32_t i = s->first_static; i < s->nreasons; i++)
        if (s->reasons[i] != inline_text(s)) free(s->reasons[i]);
    if (s->reasons != s->first) free(s->reasons);
    if (!(s->spare_block && spare_put(s))) free(s);
}

ks_status *ks_status_clone(const ks_status *s) {
    if (!s) return NULL;
    ks_status *c;
    if (s->nreasons) c = ks_status_new(s->code, "%s", s->reasons[0]);
    else c = ks_status_new(s->code, NULL);
    c->plugin = s->plugin;
    for (uint32_t i = 1; i < s->nreasons; i++) push_reason(c, ks_xstrdup(s->reasons[i]));
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
