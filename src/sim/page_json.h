/* JSON text for the HTML report's data block. The page carries its data
 * as JSON inside <script type="application/json">, so the text must never
 * close or confuse that element: '<', '>' and '&' are written as \u003c,
 * \u003e and \u0026 wherever they occur (only strings can hold them), and
 * bytes that are not UTF-8 become U+FFFD (JSON.parse would accept them, the
 * HTML parser would not). A string table keeps repeated text (reasons,
 * labels, plugin names) to one copy: rows refer to it by index. */
#ifndef KS_PAGE_JSON_H
#define KS_PAGE_JSON_H

#include "util/hash.h"
#include "util/strbuf.h"

#include <stdbool.h>
#include <stdint.h>

/* s as a JSON string literal ("null" for NULL). */
void ks_pj_str(ks_strbuf *b, const char *s);
/* "key": with the comma before it unless first. */
void ks_pj_key(ks_strbuf *b, const char *key, bool first);
void ks_pj_i64(ks_strbuf *b, int64_t v);

typedef struct ks_pj_strings {
    ks_map index;   /* interned id + 1 -> position + 1 */
    uint32_t n, cap;
    uint32_t *ids;  /* interned ids, in table order */
} ks_pj_strings;

void ks_pj_strings_init(ks_pj_strings *t);
void ks_pj_strings_free(ks_pj_strings *t);
/* The position of s in the table, added when new. */
uint32_t ks_pj_string(ks_pj_strings *t, const char *s);
/* The table as a JSON array. */
void ks_pj_strings_write(ks_strbuf *b, const ks_pj_strings *t);

#endif
