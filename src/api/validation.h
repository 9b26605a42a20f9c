/* The API server's checks of names and labels
 * (k8s.io/apimachinery/pkg/util/validation), with its messages, for
 * manifests that never went through one (docs/manifests.md, "Admission").
 * Each check writes up to KS_VALID_MAX_MSGS messages (static strings, one
 * per failed rule, in upstream's order) and returns how many; 0 means
 * valid. */
#ifndef KS_VALIDATION_H
#define KS_VALIDATION_H

#include "util/strbuf.h"

#include <stddef.h>

#define KS_VALID_MAX_MSGS 4

/* metadata.name of pods, nodes, PriorityClasses (253 characters). */
int ks_valid_dns1123_subdomain(const char *s, const char **msgs);
/* Namespace names (63 characters, no dots). */
int ks_valid_dns1123_label(const char *s, const char **msgs);
/* Label keys: an optional DNS subdomain prefix and '/', then a name of up
 * to 63 alphanumerics, '-', '_', '.'. */
int ks_valid_qualified_name(const char *s, const char **msgs);
/* Label values: empty, or up to 63 characters as a qualified name's. */
int ks_valid_label_value(const char *s, const char **msgs);


#endif
