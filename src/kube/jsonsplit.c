#include "kube/jsonsplit.h"

#include <string.h>

ks_split_result ks_json_split_next(const char *b, size_t len, ks_json_splitter *sp, size_t *ostart,
                                   size_t *oend) {
    while (sp->scan < len) {
        char ch = b[sp->scan];
        if (sp->depth == 0) {
            if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
                sp->scan++;
                continue;
            }
            if (ch != '{') {
                /* not an object: skip the rest of the line */
                const char *nl = memchr(b + sp->scan, '\n', len - sp->scan);
                if (!nl) return KS_SPLIT_NONE; /* wait for the line to end */
                *ostart = sp->scan;
                *oend = (size_t)(nl - b);
                sp->scan = *oend + 1;
                return KS_SPLIT_GARBAGE;
            }
            sp->start = sp->scan;
        }
        sp->scan++;
        if (sp->in_str) {
            if (sp->esc) sp->esc = false;
            else if (ch == '\\') sp->esc = true;
            else if (ch == '"') sp->in_str = false;
            continue;
        }
        if (ch == '"') sp->in_str = true;
        else if (ch == '{' || ch == '[') sp->depth++;
        else if ((ch == '}' || ch == ']') && --sp->depth == 0) {
            *ostart = sp->start;
            *oend = sp->scan;
            return KS_SPLIT_OBJECT;
        }
    }
    return KS_SPLIT_NONE;
}

size_t ks_json_split_consumed(ks_json_splitter *sp) {
    /* inside an object: keep it from its start; else all scanned is done */
    size_t keep_from = sp->depth > 0 ? sp->start : sp->scan;
    sp->scan -= keep_from;
    if (sp->depth > 0) sp->start = 0;
    return keep_from;
}
