/* Kubernetes resource quantities ("500m", "1.5Gi", "1e3") with upstream
 * semantics: parse exactly, then read as an integer of base units or of
 * milli-units, rounding up as resource.Quantity's Value()/MilliValue() do. */
#ifndef KS_QUANTITY_H
#define KS_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

/* A parsed quantity: value = mant * 10^exp10 * 2^exp2 (one of the exponents
 * is zero). The mantissa keeps every digit written (up to 36). */
typedef struct ks_quantity {
    __int128 mant;
    int32_t exp10;
    int32_t exp2;
    uint8_t format; /* KS_QFMT_*: how it was written, for printing back */
} ks_quantity;

enum { KS_QFMT_DECIMAL_SI = 0, KS_QFMT_BINARY_SI = 1, KS_QFMT_DECIMAL_EXP = 2 };

/* Returns false and sets *err to a static description on invalid input. */
bool ks_quantity_parse(const char *s, ks_quantity *q, const char **err);
/* Base units rounded up (away from zero); false on int64 overflow. */
bool ks_quantity_value(const ks_quantity *q, int64_t *out);
/* Milli-units rounded up (away from zero); false on int64 overflow. */
bool ks_quantity_milli(const ks_quantity *q, int64_t *out);
/* Convenience: parse and convert in one step (milli when milli is true). */
bool ks_quantity_parse_int(const char *s, bool milli, int64_t *out, const char **err);

/* Canonical text of an integer amount, as kubectl prints requests:
 * format_milli(1500) = "1500m", format_milli(2000) = "2"; bytes in the
 * largest exact binary suffix ("3Gi"), else decimal. */
void ks_quantity_format_milli(int64_t milli, char *buf, int n);
void ks_quantity_format_bytes(int64_t v, char *buf, int n);

#endif
