/* String interning: every string the scheduler compares (label keys and
 * values, taint keys, resource and node names, topology values) becomes a
 * 32-bit id once, at decode time; comparisons are then integer compares.
 * Id 0 is the empty string. Ids are process-global. ks_str() is
 * lock-free; interning takes a mutex.
 *
 * Two kinds of ids. ks_intern's are permanent: for the bounded sets above.
 * Strings of unbounded cardinality in a long-running scheduler (pod names)
 * are interned with ks_intern_ref instead: each call takes a reference,
 * ks_intern_unref gives it back, and the string is freed (its id reused)
 * when the last one goes. A counted id is valid only while a reference is
 * held: a pod holds its name's. Interning a counted string with ks_intern
 * makes it permanent. */
#ifndef KS_INTERN_H
#define KS_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t ks_id;
#define KS_ID_NONE 0u
#define KS_ID_INVALID UINT32_MAX

ks_id ks_intern(const char *s);
ks_id ks_intern_n(const char *s, size_t n);
/* Intern with a reference (see above); release with ks_intern_unref,
 * which does nothing for a permanent id. */
ks_id ks_intern_ref(const char *s);
ks_id ks_intern_ref_n(const char *s, size_t n);
void ks_intern_unref(ks_id id);
/* The id of s if it was ever interned, else KS_ID_INVALID. */
ks_id ks_intern_find(const char *s);
const char *ks_str(ks_id id);
size_t ks_strlen(ks_id id);
/* Strings interned now (counted ones until their last reference goes). */
size_t ks_intern_count(void);

#endif
