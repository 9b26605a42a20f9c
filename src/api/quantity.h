/* Kubernetes resource quantities ("500m", "1.5Gi", "1e3") with upstream
 * semantics: parse exactly, then read as an integer of base units or of
 * milli-units, rounding up as resource.Quantity's Value()/MilliValue() do. */
#ifndef KS_QUANTITY_H
#define KS_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

/* A parsed quantity. Upstream keeps an exact decimal and rounds it up (away
 * from zero) to a whole number of nano-units when parsing, and caps binary
 * (Ki..Ei) amounts at 2^63-1; `nano` is exactly that amount. Values beyond
 * what 128 bits of nano-units hold (about 1.7e29) set `huge`: they parse,
 * as upstream, but never convert to an int64. */
typedef struct ks_quantity {
    __int128 nano;
    bool huge;
    uint8_t format; /* KS_QFMT_*: how it was written, for printing back */
} ks_quantity;

enum { KS_QFMT_DECIMAL_SI = 0, KS_QFMT_BINARY_SI = 1, KS_QFMT_DECIMAL_EXP = 2 };

#define KS_NANO_PER_UNIT 1000000000

/* Returns false and sets *err to a static description on invalid input. */
bool ks_quantity_parse(const char *s, ks_quantity *q, const char **err);
/* Base units rounded up (away from zero); false on int64 overflow. */
bool ks_quantity_value(const ks_quantity *q, int64_t *out);
/* Milli-units rounded up (away from zero); false on int64 overflow. */
bool ks_quantity_milli(const ks_quantity *q, int64_t *out);
/* The same conversions from an exact nano-unit amount. */
bool ks_nano_to_value(__int128 nano, int64_t *out);
bool ks_nano_to_milli(__int128 nano, int64_t *out);
/* Convenience: parse and convert in one step (milli when milli is true). */
bool ks_quantity_parse_int(const char *s, bool milli, int64_t *out, const char **err);

/* The canonical text upstream's Quantity.String() prints ("1536Mi" for
 * "1.5Gi", "1500m" for "1.5"). Truncates to n bytes like snprintf. */
void ks_quantity_format(const ks_quantity *q, char *buf, int n);

/* Canonical text of an integer amount, as kubectl prints requests:
 * format_milli(1500) = "1500m", format_milli(2000) = "2"; bytes in the
 * largest exact binary suffix ("3Gi"), else decimal. */
void ks_quantity_format_milli(int64_t milli, char *buf, int n);
void ks_quantity_format_bytes(int64_t v, char *buf, int n);

#endif
