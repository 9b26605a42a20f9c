/* Whole JSON objects out of a byte stream cut anywhere (a watch response:
 * one event object after another, chunks split at any byte). Braces and
 * brackets are counted outside strings, escapes inside them honoured. A
 * line that does not start an object is handed back as garbage once it
 * has ended. The caller appends bytes to its buffer as they come, takes
 * objects with ks_json_split_next, then drops the bytes done with. */
#ifndef KS_JSONSPLIT_H
#define KS_JSONSPLIT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ks_json_splitter {
    size_t scan, start;
    int depth;
    bool in_str, esc;
} ks_json_splitter;

typedef enum { KS_SPLIT_NONE, KS_SPLIT_OBJECT, KS_SPLIT_GARBAGE } ks_split_result;

/* The next object (or garbage line) of b[0..len) as [*start, *end);
 * KS_SPLIT_NONE when more bytes are needed. */
ks_split_result ks_json_split_next(const char *b, size_t len, ks_json_splitter *sp, size_t *start,
                                   size_t *end);
/* How many leading bytes of the buffer are done with (the caller drops
 * them); the splitter is moved to the rest. */
size_t ks_json_split_consumed(ks_json_splitter *sp);

#endif
