/* Regular expressions with RE2 semantics, as cel-go runs them (Go's
 * regexp package): the pattern is parsed with Go's regexp/syntax rules,
 * so that what Go refuses is refused with Go's error text, and rewritten
 * into an equivalent PCRE2 pattern (every literal escaped, Go's ASCII
 * \s, octal escapes, named groups unnamed, each repeated item wrapped in
 * a group). PCRE2 then matches leftmost-first, as Go does. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "cel/cel_internal.h"
#include "util/strbuf.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cel_re {
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
};

/* Go's Error.Error(): "error parsing regexp: <code>: `<expr>`" */
static bool re_fail(char *err, size_t nerr, const char *code, const char *expr, size_t n) {
    snprintf(err, nerr, "error parsing regexp: %s: `%.*s`", code, (int)n, expr);
    return false;
}

/* One UTF-8 rune at s (n bytes left); -1 when invalid. */
static int32_t next_rune(const char *s, size_t n, size_t *w) {
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) {
        *w = 0;
        return -1;
    }
    if (u[0] < 0x80) {
        *w = 1;
        return u[0];
    }
    int len = u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc2 && u[0] < 0xe0 ? 2 : 0;
    if (len == 0 || (size_t)len > n) return *w = 1, -1;
    int32_t r = u[0] & (0x7f >> len);
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xc0) != 0x80) return *w = 1, -1;
        r = (r << 6) | (u[i] & 0x3f);
    }
    if ((len == 3 && r < 0x800) || (len == 4 && (r < 0x10000 || r > 0x10ffff)) || (r >= 0xd800 && r <= 0xdfff))
        return *w = 1, -1;
    *w = (size_t)len;
    return r;
}

static bool is_alnum(int32_t c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

static int unhex(int32_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

typedef struct re_parse {
    const char *whole;
    size_t nwhole;
    ks_strbuf out;
    char *err;
    size_t nerr;
} re_parse;

#define UTF8_ERR(p, s, e) re_fail((p)->err, (p)->nerr, "invalid UTF-8", (s), (size_t)((e) - (s)))

/* Go's parseEscape: one escaped rune at s ('\\' first); *r the rune. */
static bool parse_escape(re_parse *p, const char *s, const char *e, int32_t *r, const char **rest) {
    const char *t = s + 1;
    if (t >= e) return re_fail(p->err, p->nerr, "trailing backslash at end of expression", "", 0);
    size_t w;
    int32_t c = next_rune(t, (size_t)(e - t), &w);
    if (c < 0) return UTF8_ERR(p, t, e);
    t += w;
    switch (c) {
    case '1': case '2': case '3': case '4': case '5': case '6': case '7':
        /* one non-zero digit alone would be a backreference */
        if (t >= e || *t < '0' || *t > '7') break;
        /* fallthrough */
    case '0': {
        int32_t v = c - '0';
        for (int i = 1; i < 3 && t < e && *t >= '0' && *t <= '7'; i++) v = v * 8 + (*t++ - '0');
        *r = v, *rest = t;
        return true;
    }
    case 'x': {
        if (t >= e) break;
        c = next_rune(t, (size_t)(e - t), &w);
        if (c < 0) return UTF8_ERR(p, t, e);
        t += w;
        if (c == '{') {
            int nhex = 0;
            int32_t v = 0;
            bool ok = false;
            while (t < e) {
                c = next_rune(t, (size_t)(e - t), &w);
                if (c < 0) return UTF8_ERR(p, t, e);
                t += w;
                if (c == '}') {
                    ok = nhex > 0;
                    break;
                }
                int d = unhex(c);
                if (d < 0) break;
                v = v * 16 + d;
                if (v > 0x10ffff) break;
                nhex++;
            }
            if (!ok) break;
            *r = v, *rest = t;
            return true;
        }
        int x = unhex(c);
        if (t >= e) break;
        c = next_rune(t, (size_t)(e - t), &w);
        if (c < 0) return UTF8_ERR(p, t, e);
        t += w;
        int y = unhex(c);
        if (x < 0 || y < 0) break;
        *r = x * 16 + y, *rest = t;
        return true;
    }
    case 'a': *r = '\a', *rest = t; return true;
    case 'f': *r = '\f', *rest = t; return true;
    case 'n': *r = '\n', *rest = t; return true;
    case 'r': *r = '\r', *rest = t; return true;
    case 't': *r = '\t', *rest = t; return true;
    case 'v': *r = '\v', *rest = t; return true;
    default:
        /* escaped punctuation is itself */
        if (c < 0x80 && !is_alnum(c)) {
            *r = c, *rest = t;
            return true;
        }
    }
    return re_fail(p->err, p->nerr, "invalid escape sequence", s, (size_t)(t - s));
}

static void put_rune(ks_strbuf *b, int32_t r) {
    if (is_alnum(r)) ks_sb_putc(b, (char)r);
    else ks_sb_printf(b, "\\x{%x}", (unsigned)r);
}

/* Go's Perl classes, inside a bracket (in=true) or alone. Go's \s is
 * [\t\n\f\r ] (PCRE2's also has \v). */
static bool perl_class(ks_strbuf *b, char c, bool in) {
    const char *body;
    switch (c) {
    case 'd': body = "0-9"; break;
    case 'D': body = "\\D"; break;
    case 'w': body = "0-9A-Za-z_"; break;
    case 'W': body = "\\W"; break;
    case 's': body = "\\t\\n\\f\\r\\x{20}"; break;
    case 'S': body = "\\S\\x{0b}"; break;
    default: return false;
    }
    ks_sb_printf(b, in ? "%s" : "[%s]", body);
    return true;
}

/* Go's unicodeTable name check: canonical name (first letter upper, rest
 * lower, '_' '-' ' ' dropped). PCRE2 decides whether it knows the name;
 * "Assigned" and "Ascii" are Go's own. */
static bool unicode_class(re_parse *p, const char *s, const char *e, const char **rest, bool in, bool fold) {
    bool neg = s[1] == 'P';
    const char *t = s + 2;
    size_t w;
    int32_t c = next_rune(t, (size_t)(e - t), &w);
    const char *name, *ne, *seq_end;
    if (t < e && c < 0) return UTF8_ERR(p, t, e);
    if (c != '{') {
        t += w;
        name = s + 2, ne = t, seq_end = t;
    } else {
        const char *close = memchr(s, '}', (size_t)(e - s));
        if (!close) return re_fail(p->err, p->nerr, "invalid character class range", s, (size_t)(e - s));
        name = s + 3, ne = close, seq_end = close + 1;
        t = close + 1;
    }
    if (name < ne && *name == '^') neg = !neg, name++;
    char canon[64];
    size_t k = 0;
    bool first = true;
    for (const char *q = name; q < ne; q++) {
        char ch = *q;
        if (ch == '_' || ch == '-' || ch == ' ') continue;
        if (k + 1 >= sizeof canon || (unsigned char)ch >= 0x80) {
            k = 0;
            break;
        }
        if (first) ch = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch), first = false;
        else ch = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        canon[k++] = ch;
    }
    canon[k] = 0;
    const char *bad = NULL;
    if (k == 0) bad = "";
    for (size_t i = 0; i < k && !bad; i++)
        if (!is_alnum(canon[i])) bad = canon;
    if (bad) return re_fail(p->err, p->nerr, "invalid character class range", s, (size_t)(seq_end - s));
    /* Go's long names of the general categories (canonical form) */
    static const char *const alias[][2] = {
        {"Casedletter", "Lc"}, {"Closepunctuation", "Pe"}, {"Combiningmark", "M"}, {"Connectorpunctuation", "Pc"},
        {"Control", "Cc"}, {"Currencysymbol", "Sc"}, {"Dashpunctuation", "Pd"}, {"Decimalnumber", "Nd"},
        {"Enclosingmark", "Me"}, {"Finalpunctuation", "Pf"}, {"Format", "Cf"}, {"Initialpunctuation", "Pi"},
        {"Letter", "L"}, {"Letternumber", "Nl"}, {"Lineseparator", "Zl"}, {"Lowercaseletter", "Ll"},
        {"Mark", "M"}, {"Mathsymbol", "Sm"}, {"Modifierletter", "Lm"}, {"Modifiersymbol", "Sk"},
        {"Nonspacingmark", "Mn"}, {"Number", "N"}, {"Openpunctuation", "Ps"}, {"Other", "C"},
        {"Otherletter", "Lo"}, {"Othernumber", "No"}, {"Otherpunctuation", "Po"}, {"Othersymbol", "So"},
        {"Paragraphseparator", "Zp"}, {"Privateuse", "Co"}, {"Punctuation", "P"}, {"Separator", "Z"},
        {"Spaceseparator", "Zs"}, {"Spacingmark", "Mc"}, {"Surrogate", "Cs"}, {"Symbol", "S"},
        {"Titlecaseletter", "Lt"}, {"Unassigned", "Cn"}, {"Uppercaseletter", "Lu"}, {"Cntrl", "Cc"},
        {"Digit", "Nd"}, {"Punct", "P"}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (strcmp(canon, alias[i][0]) == 0) {
            strcpy(canon, alias[i][1]);
            break;
        }
    /* Go folds a cased category under (?i); PCRE2 does not: any cased
     * letter then */
    if (fold && (strcmp(canon, "Lu") == 0 || strcmp(canon, "Ll") == 0 || strcmp(canon, "Lt") == 0))
        strcpy(canon, "Lc");
    ks_strbuf *b = &p->out;
    if (!in) ks_sb_putc(b, '[');
    if (strcmp(canon, "Assigned") == 0) {
        ks_sb_puts(b, neg ? "\\p{Cn}" : "\\P{Cn}");
    } else if (strcmp(canon, "Ascii") == 0) {
        ks_sb_puts(b, neg ? "\\P{Any}" : "\\x{0}-\\x{7f}");
        if (neg) {
            /* [^\x00-\x7f] inside a class: PCRE2 has no nested negation */
            b->len -= strlen("\\P{Any}");
            ks_sb_puts(b, "\\x{80}-\\x{10ffff}");
        }
    } else if (strcmp(canon, "Lc") == 0) {
        ks_sb_printf(b, "\\%c{L&}", neg ? 'P' : 'p');
    } else {
        ks_sb_printf(b, "\\%c{%s}", neg ? 'P' : 'p', canon);
    }
    if (!in) ks_sb_putc(b, ']');
    *rest = t;
    return true;
}

static const char *const posix_names[] = {"alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
                                          "lower", "print", "punct", "space", "upper", "word", "xdigit"};

/* Go's parseClass: a bracket expression at s ('[' first). */
static bool parse_class(re_parse *p, const char *s, const char *e, const char **rest, bool fold) {
    ks_strbuf *b = &p->out;
    const char *t = s + 1;
    ks_sb_putc(b, '[');
    if (t < e && *t == '^') {
        ks_sb_putc(b, '^');
        t++;
    }
    bool first = true;
    while (t >= e || *t != ']' || first) {
        first = false;
        if (e - t > 2 && t[0] == '[' && t[1] == ':') {
            const char *end = NULL;
            for (const char *q = t + 2; q + 1 < e; q++)
                if (q[0] == ':' && q[1] == ']') {
                    end = q;
                    break;
                }
            if (end) {
                const char *nm = t + 2;
                bool neg = nm < end && *nm == '^';
                if (neg) nm++;
                bool ok = false;
                for (size_t i = 0; i < sizeof posix_names / sizeof *posix_names; i++)
                    if (strlen(posix_names[i]) == (size_t)(end - nm) && memcmp(posix_names[i], nm, (size_t)(end - nm)) == 0)
                        ok = true;
                if (!ok) return re_fail(p->err, p->nerr, "invalid character class range", t, (size_t)(end + 2 - t));
                ks_sb_putn(b, t, (size_t)(end + 2 - t));
                t = end + 2;
                continue;
            }
        }
        if (e - t >= 2 && t[0] == '\\' && (t[1] == 'p' || t[1] == 'P')) {
            if (!unicode_class(p, t, e, &t, true, fold)) return false;
            continue;
        }
        if (e - t >= 2 && t[0] == '\\' && perl_class(b, t[1], true)) {
            t += 2;
            continue;
        }
        /* one rune or a range */
        const char *rng = t;
        int32_t lo, hi;
        if (t >= e) return re_fail(p->err, p->nerr, "missing closing ]", s, (size_t)(e - s));
        if (*t == '\\') {
            if (!parse_escape(p, t, e, &lo, &t)) return false;
        } else {
            size_t w;
            lo = next_rune(t, (size_t)(e - t), &w);
            if (lo < 0) return UTF8_ERR(p, t, e);
            t += w;
        }
        hi = lo;
        if (e - t >= 2 && t[0] == '-' && t[1] != ']') {
            t++;
            if (t >= e) return re_fail(p->err, p->nerr, "missing closing ]", s, (size_t)(e - s));
            if (*t == '\\') {
                if (!parse_escape(p, t, e, &hi, &t)) return false;
            } else {
                size_t w;
                hi = next_rune(t, (size_t)(e - t), &w);
                if (hi < 0) return UTF8_ERR(p, t, e);
                t += w;
            }
            if (hi < lo) return re_fail(p->err, p->nerr, "invalid character class range", rng, (size_t)(t - rng));
        }
        ks_sb_printf(b, "\\x{%x}", (unsigned)lo);
        if (hi != lo) ks_sb_printf(b, "-\\x{%x}", (unsigned)hi);
    }
    ks_sb_putc(b, ']');
    *rest = t + 1;
    return true;
}

/* Parse state per open group: where the last item's output starts (for
 * wrapping it in a group when a repetition follows) and the largest
 * product of nested counted repetitions, for Go's repeatIsValid. */
typedef struct re_level {
    long maxp;       /* largest product inside the group so far */
    long lastp;      /* product of the last item, -1 when there is none */
    size_t last_at;  /* where the last item's output starts */
    bool fold;       /* (?i) in effect */
} re_level;

#define RE_MAX_DEPTH 1000

/* Go's parse(): validate and rewrite into p->out. */
static bool translate(re_parse *p) {
    const char *s = p->whole, *e = s + p->nwhole, *t = s;
    re_level *lv = malloc(sizeof(re_level) * (RE_MAX_DEPTH + 1));
    if (!lv) return re_fail(p->err, p->nerr, "expression too large", s, p->nwhole);
    int depth = 0;
    lv[0] = (re_level){1, -1, 0, false};
    const char *last_repeat = NULL; /* the previous item was a repetition */
    bool ok = false;
#define ITEM(start) (lv[depth].lastp = 1, lv[depth].last_at = (start))
    while (t < e) {
        const char *repeat = NULL;
        size_t at = p->out.len;
        bool group_fold = false;
        char c = *t;
        if (c == '(') {
            if (e - t >= 2 && t[1] == '?') {
                bool named = (e - t > 4 && t[2] == 'P' && t[3] == '<') || (e - t > 3 && t[2] == '<');
                if (named) {
                    const char *gt = memchr(t, '>', (size_t)(e - t));
                    size_t start = t[2] == 'P' ? 4 : 3;
                    if (!gt) {
                        size_t w;
                        for (const char *q = t; q < e; q += w)
                            if (next_rune(q, (size_t)(e - q), &w) < 0) {
                                UTF8_ERR(p, q, e);
                                goto out;
                            }
                        re_fail(p->err, p->nerr, "invalid named capture", t, (size_t)(e - t));
                        goto out;
                    }
                    bool valid = gt > t + start;
                    for (const char *q = t + start; q < gt; q++)
                        if (*q != '_' && !is_alnum((unsigned char)*q)) valid = false;
                    if (!valid) {
                        size_t w;
                        for (const char *q = t + start; q < gt; q += w)
                            if (next_rune(q, (size_t)(gt - q), &w) < 0) {
                                UTF8_ERR(p, q, e);
                                goto out;
                            }
                        re_fail(p->err, p->nerr, "invalid named capture", t, (size_t)(gt + 1 - t));
                        goto out;
                    }
                    t = gt + 1;
                    ks_sb_putc(&p->out, '(');
                    group_fold = lv[depth].fold;
                    goto open;
                }
                /* flags and non-capturing groups: (?i) (?-s) (?U:...) */
                const char *q = t + 2;
                int sign = 1;
                bool saw = false, fold = lv[depth].fold;
                for (;;) {
                    if (q >= e) {
                        re_fail(p->err, p->nerr, "invalid or unsupported Perl syntax", t, (size_t)(q - t));
                        goto out;
                    }
                    size_t w;
                    int32_t r = next_rune(q, (size_t)(e - q), &w);
                    if (r < 0) {
                        UTF8_ERR(p, q, e);
                        goto out;
                    }
                    q += w;
                    if (r == 'i' || r == 'm' || r == 's' || r == 'U') {
                        if (r == 'i') fold = sign > 0;
                        saw = true;
                        continue;
                    }
                    if (r == '-' && sign > 0) {
                        sign = -1, saw = false;
                        continue;
                    }
                    if ((r == ':' || r == ')') && (sign > 0 || saw)) break;
                    re_fail(p->err, p->nerr, "invalid or unsupported Perl syntax", t, (size_t)(q - t));
                    goto out;
                }
                /* Go's (?m) turns OneLine off: PCRE2's multiline; the
                 * letters mean the same in PCRE2 */
                ks_sb_putn(&p->out, t, (size_t)(q - t));
                bool group = q[-1] == ':';
                t = q;
                group_fold = fold;
                if (!group) {
                    lv[depth].fold = fold;
                    continue;
                } /* flags only: no item, last_repeat kept as Go keeps it */
                goto open;
            }
            ks_sb_putc(&p->out, '(');
            t++;
            group_fold = lv[depth].fold;
        open:
            if (depth >= RE_MAX_DEPTH) {
                re_fail(p->err, p->nerr, "expression nests too deeply", s, p->nwhole);
                goto out;
            }
            lv[depth].last_at = at; /* the group is the next item of this level */
            lv[depth + 1] = (re_level){1, -1, 0, group_fold};
            depth++;
        } else if (c == '|') {
            ks_sb_putc(&p->out, '|');
            lv[depth].lastp = -1;
            t++;
        } else if (c == ')') {
            if (depth == 0) {
                re_fail(p->err, p->nerr, "unexpected )", s, p->nwhole);
                goto out;
            }
            long inner = lv[depth].maxp;
            if (lv[depth].lastp > inner) inner = lv[depth].lastp;
            depth--;
            lv[depth].lastp = inner; /* last_at was set when the group opened */
            ks_sb_putc(&p->out, ')');
            t++;
        } else if (c == '^' || c == '$' || c == '.') {
            ITEM(at);
            ks_sb_putc(&p->out, c);
            t++;
        } else if (c == '[') {
            ITEM(at);
            if (!parse_class(p, t, e, &t, lv[depth].fold)) goto out;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            const char *before = t;
            long min = 0, max = 0;
            bool counted = c == '{';
            if (counted) {
                /* {n} {n,} {n,m}; anything else is a literal '{' */
                const char *q = t + 1;
                bool form = false, big = false;
                long a = 0, bnum = 0;
                const char *d0 = q;
                if (q < e && *q >= '0' && *q <= '9' && !(q + 1 < e && *q == '0' && q[1] >= '0' && q[1] <= '9')) {
                    for (; q < e && *q >= '0' && *q <= '9'; q++)
                        if (a >= 100000000) big = true;
                        else a = a * 10 + (*q - '0');
                    if (q > d0 && q < e) {
                        if (*q == ',') {
                            q++;
                            if (q < e && *q == '}') {
                                bnum = -1, form = true;
                            } else if (q < e && *q >= '0' && *q <= '9' &&
                                       !(q + 1 < e && *q == '0' && q[1] >= '0' && q[1] <= '9')) {
                                for (; q < e && *q >= '0' && *q <= '9'; q++)
                                    if (bnum >= 100000000) big = true;
                                    else bnum = bnum * 10 + (*q - '0');
                                form = q < e && *q == '}';
                            }
                        } else {
                            bnum = a;
                            form = *q == '}';
                        }
                    }
                }
                if (!form) {
                    ITEM(at);
                    ks_sb_puts(&p->out, "\\x{7b}");
                    t++;
                    last_repeat = NULL;
                    continue;
                }
                t = q + 1;
                min = a, max = bnum;
                if (big || min > 1000 || max > 1000 || (max >= 0 && min > max)) {
                    re_fail(p->err, p->nerr, "invalid repeat count", before, (size_t)(t - before));
                    goto out;
                }
            } else {
                t++;
            }
            bool lazy = t < e && *t == '?';
            if (lazy) t++;
            if (last_repeat) {
                re_fail(p->err, p->nerr, "invalid nested repetition operator", last_repeat, (size_t)(t - last_repeat));
                goto out;
            }
            if (lv[depth].lastp < 0) {
                re_fail(p->err, p->nerr, "missing argument to repetition operator", before, (size_t)(t - before));
                goto out;
            }
            long prod = lv[depth].lastp;
            if (counted && max != 0) {
                long m = max < 0 ? min : max;
                if ((min >= 2 || max >= 2) && m * prod > 1000) {
                    re_fail(p->err, p->nerr, "invalid repeat count", before, (size_t)(t - before));
                    goto out;
                }
                if (m > 0) prod *= m;
            } else if (counted) {
                prod = 1;
            }
            lv[depth].lastp = prod;
            /* wrap the item so that PCRE2 repeats exactly it */
            size_t from = lv[depth].last_at, n = p->out.len - from;
            char *item = malloc(n + 1);
            if (!item) goto out;
            memcpy(item, p->out.s + from, n);
            p->out.len = from;
            ks_sb_puts(&p->out, "(?:");
            ks_sb_putn(&p->out, item, n);
            ks_sb_putc(&p->out, ')');
            free(item);
            if (counted) {
                if (max < 0) ks_sb_printf(&p->out, "{%ld,}", min);
                else if (max == min) ks_sb_printf(&p->out, "{%ld}", min);
                else ks_sb_printf(&p->out, "{%ld,%ld}", min, max);
            } else {
                ks_sb_putc(&p->out, c);
            }
            if (lazy) ks_sb_putc(&p->out, '?');
            repeat = before;
        } else if (c == '\\') {
            if (e - t >= 2) {
                char d = t[1];
                if (d == 'A' || d == 'b' || d == 'B' || d == 'z') {
                    ITEM(at);
                    ks_sb_putn(&p->out, t, 2);
                    t += 2;
                    goto next;
                }
                if (d == 'C') {
                    re_fail(p->err, p->nerr, "invalid escape sequence", t, 2);
                    goto out;
                }
                if (d == 'Q') {
                    const char *q = t + 2, *end = e;
                    for (const char *x = q; x + 1 < e; x++)
                        if (x[0] == '\\' && x[1] == 'E') {
                            end = x;
                            break;
                        }
                    while (q < end) {
                        size_t w;
                        int32_t r = next_rune(q, (size_t)(end - q), &w);
                        if (r < 0) {
                            UTF8_ERR(p, q, e);
                            goto out;
                        }
                        ITEM(p->out.len);
                        put_rune(&p->out, r);
                        q += w;
                    }
                    t = end < e ? end + 2 : e;
                    goto next;
                }
                if (d == 'p' || d == 'P') {
                    ITEM(at);
                    if (!unicode_class(p, t, e, &t, false, lv[depth].fold)) goto out;
                    goto next;
                }
                if (perl_class(&p->out, d, false)) {
                    ITEM(at);
                    t += 2;
                    goto next;
                }
            }
            int32_t r;
            if (!parse_escape(p, t, e, &r, &t)) goto out;
            ITEM(at);
            put_rune(&p->out, r);
        } else {
            size_t w;
            int32_t r = next_rune(t, (size_t)(e - t), &w);
            if (r < 0) {
                UTF8_ERR(p, t, e);
                goto out;
            }
            ITEM(at);
            put_rune(&p->out, r);
            t += w;
        }
    next:
        /* the item's product counts for its group */
        if (lv[depth].lastp > lv[depth].maxp) lv[depth].maxp = lv[depth].lastp;
        last_repeat = repeat;
    }
    if (depth != 0) {
        re_fail(p->err, p->nerr, "missing closing )", s, p->nwhole);
        goto out;
    }
    ok = true;
out:
    free(lv);
    return ok;
#undef ITEM
}

cel_re *cel_re_compile(const char *pat, size_t n, char *err, size_t nerr) {
    re_parse p = {.whole = pat, .nwhole = n, .err = err, .nerr = nerr};
    ks_sb_init(&p.out);
    if (!translate(&p)) {
        ks_sb_free(&p.out);
        return NULL;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        ks_sb_free(&p.out);
        snprintf(err, nerr, "error parsing regexp: expression too large: `%.*s`", (int)n, pat);
        return NULL;
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    pcre2_set_parens_nest_limit(cc, RE_MAX_DEPTH + 10);
    int ec;
    PCRE2_SIZE eo;
    /* Go: $ only at the very end without (?m); with (?m), ^ also after a
     * final newline */
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)ks_sb_str(&p.out), p.out.len,
                                     PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_CIRCUMFLEX |
                                         PCRE2_NEVER_BACKSLASH_C | PCRE2_MATCH_INVALID_UTF,
                                     &ec, &eo, cc);
    pcre2_compile_context_free(cc);
    if (!code) {
        /* what PCRE2 refuses of a valid Go pattern: an unknown Unicode
         * class name (Go: invalid character class range), or a size limit */
        char msg[160];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)msg, sizeof msg);
        if (ec == PCRE2_ERROR_UNKNOWN_UNICODE_PROPERTY || ec == PCRE2_ERROR_MALFORMED_UNICODE_PROPERTY)
            snprintf(err, nerr, "error parsing regexp: invalid character class range: `%.*s`", (int)n, pat);
        else
            snprintf(err, nerr, "error parsing regexp: expression too large: `%.*s`", (int)n, pat);
        ks_sb_free(&p.out);
        return NULL;
    }
    ks_sb_free(&p.out);
    cel_re *re = calloc(1, sizeof *re);
    if (re) {
        re->code = code;
        re->md = pcre2_match_data_create_from_pattern(code, NULL);
        re->mctx = pcre2_match_context_create(NULL);
    }
    if (!re || !re->md || !re->mctx) {
        cel_re_free(re);
        if (!re) pcre2_code_free(code);
        snprintf(err, nerr, "error parsing regexp: expression too large: `%.*s`", (int)n, pat);
        return NULL;
    }
    /* Go's matcher is linear; PCRE2 backtracks: bound it */
    pcre2_set_match_limit(re->mctx, 10000000);
    pcre2_set_depth_limit(re->mctx, 100000);
    return re;
}

void cel_re_free(cel_re *re) {
    if (!re) return;
    if (re->md) pcre2_match_data_free(re->md);
    if (re->mctx) pcre2_match_context_free(re->mctx);
    if (re->code) pcre2_code_free(re->code);
    free(re);
}

int cel_re_search(cel_re *re, const char *s, size_t n, size_t start, size_t *so, size_t *eo) {
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, start, 0, re->md, re->mctx);
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc < 0) return -1;
    if (!so) return 1;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
    *so = ov[0], *eo = ov[1];
    return 1;
}
