/* YAML output identical to upstream's: kube-scheduler encodes to JSON and
 * converts with sigs.k8s.io/yaml, i.e. go-yaml v2 over generic maps. go-yaml
 * v2 is a port of libyaml's emitter, so we drive libyaml with the same
 * events and reproduce the two decisions go-yaml makes itself: the order
 * of map keys and which strings must be double-quoted. */
#include "codec/tree.h"
#include "config/internal.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- key order (go-yaml v2 keyList.Less) ---------------------------------- */

static size_t utf8_decode(const char *s, uint32_t *out, size_t max) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p && n < max) {
        uint32_t c = *p;
        int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
        p++;
        if (extra) c &= (uint32_t)(0x3f >> extra);
        for (int i = 0; i < extra && (*p & 0xc0) == 0x80; i++) c = (c << 6) | (*p++ & 0x3f);
        out[n++] = c;
    }
    return n;
}

/* unicode.IsLetter, approximated: ASCII letters, and anything non-ASCII
 * (keys are ASCII in practice). */
static bool is_letter(uint32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
static bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

static bool key_less(const char *as, const char *bs) {
    size_t la = strlen(as), lb = strlen(bs);
    uint32_t *a = ks_xcalloc(la + 1, sizeof *a), *b = ks_xcalloc(lb + 1, sizeof *b);
    size_t na = utf8_decode(as, a, la + 1), nb = utf8_decode(bs, b, lb + 1);
    bool result = na < nb;
    for (size_t i = 0; i < na && i < nb; i++) {
        if (a[i] == b[i]) continue;
        bool al = is_letter(a[i]), bl = is_letter(b[i]);
        if (al && bl) {
            result = a[i] < b[i];
            goto done;
        }
        if (al || bl) {
            result = bl;
            goto done;
        }
        /* digits compare as numbers ("a9" < "a10") */
        int64_t an = 0, bn = 0;
        size_t ai, bi;
        if (a[i] == '0' || b[i] == '0') {
            for (size_t j = i; j-- > 0 && is_digit(a[j]);) {
                if (a[j] != '0') {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        for (ai = i; ai < na && is_digit(a[ai]); ai++) an = an * 10 + (int64_t)(a[ai] - '0');
        for (bi = i; bi < nb && is_digit(b[bi]); bi++) bn = bn * 10 + (int64_t)(b[bi] - '0');
        if (an != bn) {
            result = an < bn;
        } else if (ai != bi) {
            result = ai < bi;
        } else {
            result = a[i] < b[i];
        }
        goto done;
    }
done:
    free(a);
    free(b);
    return result;
}

/* ---- string quoting (go-yaml v2 resolve) --------------------------------- */

static bool all_digits(const char *s, size_t n, int base) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = base == 16 ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                  : base == 8 ? (c >= '0' && c <= '7')
                  : base == 2 ? (c == '0' || c == '1')
                              : (c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

/* strconv.ParseInt/ParseUint(s, 0, 64) succeed (range checks by digit
 * count, good enough to decide quoting). */
static bool go_int_syntax(const char *s) {
    if (*s == '+' || *s == '-') s++;
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return all_digits(s + 2, n - 2, 16) && n - 2 <= 16;
    if (n >= 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) return all_digits(s + 2, n - 2, 8) && n - 2 <= 22;
    if (n >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) return all_digits(s + 2, n - 2, 2) && n - 2 <= 64;
    if (n >= 2 && s[0] == '0') return all_digits(s + 1, n - 1, 8) && n - 1 <= 22;
    return all_digits(s, n, 10) && n <= 20;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s) {
    if (*s == '+' || *s == '-') s++;
    size_t d = 0;
    if (*s == '.') {
        s++;
        while (is_digit((unsigned char)*s)) s++, d++;
        if (!d) return false;
    } else {
        while (is_digit((unsigned char)*s)) s++, d++;
        if (!d) return false;
        if (*s == '.') {
            s++;
            while (is_digit((unsigned char)*s)) s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        size_t e = 0;
        while (is_digit((unsigned char)*s)) s++, e++;
        if (!e) return false;
    }
    return *s == '\0';
}

/* YYYY-M-D, optionally followed by a time: go-yaml's timestamp formats. */
static bool timestamp_like(const char *s) {
    for (int i = 0; i < 4; i++) {
        if (!is_digit((unsigned char)s[i])) return false;
    }
    if (s[4] != '-') return false;
    const char *p = s + 5;
    int parts[2];
    for (int k = 0; k < 2; k++) {
        int n = 0, v = 0;
        while (is_digit((unsigned char)*p) && n < 2) v = v * 10 + (*p++ - '0'), n++;
        if (!n) return false;
        parts[k] = v;
        if (k == 0) {
            if (*p != '-') return false;
            p++;
        }
    }
    if (parts[0] < 1 || parts[0] > 12 || parts[1] < 1 || parts[1] > 31) return false;
    if (*p == '\0') return true;
    bool zone = *p == 'T' || *p == 't';
    if (!zone && *p != ' ') return false;
    p++;
    for (int k = 0; k < 3; k++) {
        int n = 0;
        while (is_digit((unsigned char)*p) && n < 2) p++, n++;
        if (!n) return false;
        if (k < 2) {
            if (*p != ':') return false;
            p++;
        }
    }
    if (*p == '.') {
        p++;
        while (is_digit((unsigned char)*p)) p++;
    }
    if (!zone) return *p == '\0';
    if (*p == 'Z') return p[1] == '\0';
    if (*p == '+' || *p == '-') {
        return is_digit((unsigned char)p[1]) && is_digit((unsigned char)p[2]) && p[3] == ':' &&
               is_digit((unsigned char)p[4]) && is_digit((unsigned char)p[5]) && p[6] == '\0';
    }
    return false;
}

/* ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$ */
static bool base60_float(const char *s) {
    if (!strchr(s, ':')) return false;
    if (*s == '+' || *s == '-') s++;
    if (!is_digit((unsigned char)*s)) return false;
    while (is_digit((unsigned char)*s) || *s == '_') s++;
    int groups = 0;
    while (*s == ':') {
        s++;
        if (is_digit((unsigned char)s[0]) && is_digit((unsigned char)s[1])) {
            if (s[0] > '5') return false;
            s += 2;
        } else if (is_digit((unsigned char)s[0])) {
            s++;
        } else {
            return false;
        }
        groups++;
    }
    if (!groups) return false;
    if (*s == '.') {
        s++;
        while (is_digit((unsigned char)*s) || *s == '_') s++;
    }
    return *s == '\0';
}

static bool needs_double_quotes(const char *s) {
    static const char *const special[] = {
        "y",     "Y",     "yes",   "Yes",    "YES",    "true", "True", "TRUE",  "on",    "On",    "ON",
        "n",     "N",     "no",    "No",     "NO",     "false", "False", "FALSE", "off", "Off", "OFF",
        "",      "~",     "null",  "Null",   "NULL",   ".nan", ".NaN", ".NAN",  ".inf",  ".Inf",  ".INF",
        "+.inf", "+.Inf", "+.INF", "-.inf",  "-.Inf",  "-.INF", "<<",
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        if (strcmp(s, special[i]) == 0) return true;
    }
    char c = s[0];
    if (c == '.') {
        /* ParseFloat of ".5", ".5e3" */
        return yaml_style_float(s);
    }
    if (c == '+' || c == '-' || is_digit((unsigned char)c)) {
        if (timestamp_like(s)) return true;
        /* underscores are dropped before the number checks */
        char *plain = ks_xmalloc(strlen(s) + 1);
        size_t n = 0;
        for (const char *p = s; *p; p++) {
            if (*p != '_') plain[n++] = *p;
        }
        plain[n] = '\0';
        bool num = go_int_syntax(plain) || yaml_style_float(plain);
        free(plain);
        if (num) return true;
    }
    return base60_float(s);
}

/* ---- emitting ------------------------------------------------------------- */

static int out_handler(void *data, unsigned char *buf, size_t size) {
    ks_sb_putn((ks_strbuf *)data, (const char *)buf, size);
    return 1;
}

/* After one failure libyaml's emitter must not be given more events (it
 * can loop on them forever, found by fuzz_config): the rest is dropped. */
static void emit(yaml_emitter_t *em, yaml_event_t *ev) {
    if (em->error != YAML_NO_ERROR) {
        yaml_event_delete(ev);
        return;
    }
    yaml_emitter_emit(em, ev);
}

static void emit_scalar(yaml_emitter_t *em, const char *v, yaml_scalar_style_t style) {
    yaml_event_t ev;
    /* a !!binary scalar can hold any bytes; libyaml refuses invalid UTF-8 */
    char *fixed;
    v = kt_utf8_clean(v, &fixed);
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), 1, 1, style);
    free(fixed);
    emit(em, &ev);
}

static void emit_string(yaml_emitter_t *em, const char *s) {
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
    if (strchr(s, '\n')) {
        style = YAML_LITERAL_SCALAR_STYLE;
    } else if (needs_double_quotes(s)) {
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    }
    emit_scalar(em, s, style);
}

static void emit_node(yaml_emitter_t *em, const ks_tree *t) {
    yaml_event_t ev;
    char buf[48];
    if (!t) {
        emit_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
        return;
    }
    switch (t->type) {
    case KT_NULL: emit_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE); break;
    case KT_BOOL: emit_scalar(em, t->bval ? "true" : "false", YAML_PLAIN_SCALAR_STYLE); break;
    case KT_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)t->ival);
        emit_scalar(em, buf, YAML_PLAIN_SCALAR_STYLE);
        break;
    case KT_FLOAT:
        /* JSON writes integral values without a point, so YAML reads them
         * back as integers */
        if (isfinite(t->fval) && t->fval == floor(t->fval) && t->fval >= -9223372036854775808.0 &&
            t->fval < 18446744073709551616.0 && fabs(t->fval) < 1e21) {
            snprintf(buf, sizeof buf, "%.0f", t->fval);
        } else if (isnan(t->fval)) {
            snprintf(buf, sizeof buf, ".nan");
        } else if (isinf(t->fval)) {
            snprintf(buf, sizeof buf, t->fval > 0 ? ".inf" : "-.inf");
        } else {
            go_format_float(t->fval, 64, buf);
        }
        emit_scalar(em, buf, YAML_PLAIN_SCALAR_STYLE);
        break;
    case KT_STRING: emit_string(em, t->text ? t->text : ""); break;
    case KT_SEQ:
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        emit(em, &ev);
        for (uint32_t i = 0; i < t->n; i++) emit_node(em, t->items[i]);
        yaml_sequence_end_event_initialize(&ev);
        emit(em, &ev);
        break;
    case KT_MAP: {
        uint32_t *order = ks_xcalloc(t->n ? t->n : 1, sizeof *order);
        for (uint32_t i = 0; i < t->n; i++) order[i] = i;
        /* insertion sort: maps are small */
        for (uint32_t i = 1; i < t->n; i++) {
            uint32_t k = order[i];
            uint32_t j = i;
            while (j > 0 && key_less(t->keys[k], t->keys[order[j - 1]])) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = k;
        }
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        emit(em, &ev);
        for (uint32_t i = 0; i < t->n; i++) {
            emit_string(em, t->keys[order[i]]);
            emit_node(em, t->items[order[i]]);
        }
        yaml_mapping_end_event_initialize(&ev);
        emit(em, &ev);
        free(order);
        break;
    }
    }
}

char *yaml_emit(const ks_tree *t) {
    ks_strbuf out;
    ks_sb_init(&out);
    yaml_emitter_t em;
    yaml_event_t ev;
    yaml_emitter_initialize(&em);
    yaml_emitter_set_output(&em, out_handler, &out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(&em, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(&em, &ev);
    emit_node(&em, t);
    yaml_document_end_event_initialize(&ev, 1);
    emit(&em, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(&em, &ev);
    yaml_emitter_flush(&em);
    yaml_emitter_delete(&em);
    if (!out.s) ks_sb_puts(&out, "");
    return ks_sb_take(&out);
}
