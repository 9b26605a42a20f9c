#include "api/validation.h"

#include <stdbool.h>
#include <string.h>

#define RE_LABEL "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define RE_SUBDOMAIN RE_LABEL "(\\." RE_LABEL ")*"
#define RE_QNAME "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define MSG_SUBDOMAIN                                                                          \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "    \
    "regex used for validation is '" RE_SUBDOMAIN "')"
#define MSG_LABEL                                                                              \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " \
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " \
    "regex used for validation is '" RE_LABEL "')"
#define MSG_QNAME                                                                            \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " \
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "    \
    "for validation is '" RE_QNAME "')"
#define MSG_VALUE                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "    \
    "'my_value',  or '12345', regex used for validation is '(" RE_QNAME ")?')"

static bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool is_label(const char *s, size_t n) {
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-') return false;
    return true;
}

static bool is_subdomain(const char *s, size_t n) {
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!is_label(s + start, i - start)) return false;
            start = i + 1;
        }
    }
    return true;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n) */
static bool is_qname(const char *s, size_t n) {
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

int ks_valid_dns1123_subdomain(const char *s, const char **msgs) {
    int n = 0;
    size_t len = strlen(s);
    if (len > 253) msgs[n++] = "must be no more than 253 characters";
    if (!is_subdomain(s, len)) msgs[n++] = MSG_SUBDOMAIN;
    return n;
}

int ks_valid_dns1123_label(const char *s, const char **msgs) {
    int n = 0;
    size_t len = strlen(s);
    if (len > 63) msgs[n++] = "must be no more than 63 characters";
    if (!is_label(s, len)) msgs[n++] = is_subdomain(s, len) ? "must not contain dots" : MSG_LABEL;
    return n;
}

int ks_valid_qualified_name(const char *s, const char **msgs) {
    int n = 0;
    const char *slash = strchr(s, '/');
    const char *name = s;
    if (slash) {
        if (strchr(slash + 1, '/')) {
            msgs[n++] = "a qualified name " MSG_QNAME
                        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
            return n;
        }
        size_t plen = (size_t)(slash - s);
        if (plen == 0) {
            msgs[n++] = "prefix part must be non-empty";
        } else {
            if (plen > 253) msgs[n++] = "prefix part must be no more than 253 characters";
            if (!is_subdomain(s, plen)) msgs[n++] = "prefix part " MSG_SUBDOMAIN;
        }
        name = slash + 1;
    }
    size_t len = strlen(name);
    if (len == 0) msgs[n++] = "name part must be non-empty";
    else if (len > 63) msgs[n++] = "name part must be no more than 63 characters";
    if (!is_qname(name, len)) msgs[n++] = "name part " MSG_QNAME;
    return n;
}

int ks_valid_label_value(const char *s, const char **msgs) {
    int n = 0;
    size_t len = strlen(s);
    if (len > 63) msgs[n++] = "must be no more than 63 characters";
    if (len && !is_qname(s, len)) msgs[n++] = MSG_VALUE;
    return n;
}


