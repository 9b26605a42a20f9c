/* Resource quantities: parse any text; a quantity that parses converts
 * (or refuses to, on overflow) without trapping, and its canonical print
 * parses back to the same amount (below 1000E, where upstream's print
 * loses its suffix). The integer printers (requests as
 * kubectl shows them) read back exactly too. */
#include "fuzz.h"

#include "api/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *s = fz_cstr(data, size);
    ks_quantity q;
    const char *err = NULL;
    if (ks_quantity_parse(s, &q, &err)) {
        int64_t v, m;
        bool has_v = ks_quantity_value(&q, &v);
        bool has_m = ks_quantity_milli(&q, &m);
        /* Upstream prints amounts of 1000E and more with no suffix (its
         * table stops at E), which reads back smaller; the exponent form
         * has no such limit. */
        __int128 lim = (__int128)1000000000000000LL * 1000000000000000LL; /* 1e30 nano */
        bool printable = q.format == KS_QFMT_DECIMAL_EXP || (q.nano < lim && q.nano > -lim);
        if (!q.huge && printable) {
            char buf[128];
            ks_quantity_format(&q, buf, sizeof(buf));
            ks_quantity q2;
            const char *err2 = NULL;
            FZ_CHECK(ks_quantity_parse(buf, &q2, &err2), "%s -> %s: %s", s, buf, err2);
            FZ_CHECK(q2.nano == q.nano && !q2.huge, "%s -> %s changes the amount", s, buf);
        }
        (void)has_v, (void)has_m;
    } else {
        FZ_CHECK(err != NULL, "refused without a message: %s", s);
    }
    free(s);

    if (size >= 8) {
        int64_t x;
        memcpy(&x, data, sizeof(x));
        char buf[64];
        int64_t back;
        ks_quantity_format_milli(x, buf, sizeof(buf));
        FZ_CHECK(ks_quantity_parse_int(buf, true, &back, &err) && back == x, "milli %lld -> %s",
                 (long long)x, buf);
        ks_quantity_format_bytes(x, buf, sizeof(buf));
        /* INT64_MIN prints as -8Ei, which reads back capped at 2^63-1 in
         * magnitude: upstream's parser caps binary amounts */
        FZ_CHECK(x == INT64_MIN || (ks_quantity_parse_int(buf, false, &back, &err) && back == x),
                 "bytes %lld -> %s", (long long)x, buf);
    }
    return 0;
}
