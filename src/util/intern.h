/* String interning: every string the scheduler compares (label keys and
 * values, taint keys, resource and node names, topology values) becomes a
 * 32-bit id once, at decode time; comparisons are then integer compares.
 * Id 0 is the empty string. Ids are process-global and never freed.
 * ks_str() is lock-free; interning takes a mutex. */
#ifndef KS_INTERN_H
#define KS_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t ks_id;
#define KS_ID_NONE 0u
#define KS_ID_INVALID UINT32_MAX

ks_id ks_intern(const char *s);
ks_id ks_intern_n(const char *s, size_t n);
/* The id of s if it was ever interned, else KS_ID_INVALID. */
ks_id ks_intern_find(const char *s);
const char *ks_str(ks_id id);
size_t ks_strlen(ks_id id);
size_t ks_intern_count(void);

#endif
