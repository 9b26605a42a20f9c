/* Validation helpers for in-tree plugin args: upstream's field-error text
 * ("path: Invalid value: ...") collected into one aggregate message the
 * way apimachinery prints it (one error alone, several as "[e1, e2]"). */
#ifndef KS_PLUGINS_HELPER_ARGS_H
#define KS_PLUGINS_HELPER_ARGS_H

#include "util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct ks_errlist {
    ks_strbuf b;
    int n;
} ks_errlist;

void ks_errlist_init(ks_errlist *e);
void ks_errlist_add(ks_errlist *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The aggregate message (malloc'd), NULL when no error; resets e. */
char *ks_errlist_take(ks_errlist *e);

/* metav1 ValidateLabelName / IsQualifiedName: [dns-subdomain/]name. */
bool ks_is_qualified_name(const char *v);
/* IsValidLabelValue: empty, or up to 63 of [-A-Za-z0-9_.] with
 * alphanumerics at both ends. */
bool ks_is_label_value(const char *v);

#define KS_QUALIFIED_NAME_MSG                                                               \
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start " \
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "         \
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

#define KS_LABEL_VALUE_MSG                                                                  \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', " \
    "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  " \
    "or 'my_value',  or '12345', regex used for validation is "                          \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

#endif
