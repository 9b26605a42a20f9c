/* A list of error messages (malloc'd strings), collected so that one run
 * over bad input reports every problem, not just the first; and a list of
 * warnings (problems that do not stop a load, such as what an API server
 * would have refused but a simulation can go on with). */
#ifndef KS_ERRORS_H
#define KS_ERRORS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ks_errors {
    char **v;
    size_t n, cap;
    char **w; /* warnings */
    size_t nw, capw;
} ks_errors;

void ks_errors_init(ks_errors *e);
void ks_errors_free(ks_errors *e);
void ks_errors_add(ks_errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ks_errors_warn(ks_errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Take ownership of a malloc'd message. */
void ks_errors_take(ks_errors *e, char *msg);
/* Move every message (and warning) of src to the end of dst. */
void ks_errors_move(ks_errors *dst, ks_errors *src);

#endif
