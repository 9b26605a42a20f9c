/* What the lazily loaded libraries share (util/curl_lazy.c,
 * util/openssl_lazy.c, util/nghttp2_lazy.c, server/evhttp_lazy.c): opening
 * a library by its runtime soname or, when only the development package
 * is installed, its unversioned symlink; and filling a table's function
 * pointer from the first handle that has the symbol. */
#ifndef KS_UTIL_DL_H
#define KS_UTIL_DL_H

#include <stdbool.h>
#include <stddef.h>

/* dlopen(soname), else dlopen(devname), RTLD_NOW | RTLD_LOCAL; NULL when
 * neither loads. */
void *ks_dl_open(const char *soname, const char *devname);

/* Copies the address of `name`, from the first of the n handles that has
 * it, into *fn (a function pointer of `size` bytes: copied, not cast from
 * void *). False, and *fn NULL, when none has it. */
bool ks_dl_sym(void *const *libs, size_t n, const char *name, void *fn, size_t size);

#endif
