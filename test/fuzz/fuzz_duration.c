/* Durations as the configuration reads them (Go's time.ParseDuration):
 * any text parses or is refused with a message; what parses prints as Go
 * prints it, and the print parses back to the same value. Any int64 of
 * nanoseconds prints and reads back. */
#include "fuzz.h"

#include "config/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *s = fz_cstr(data, size);
    int64_t ns, back;
    char *err = NULL;
    char buf[40];
    if (go_parse_duration(s, &ns, &err)) {
        go_format_duration(ns, buf);
        FZ_CHECK(go_parse_duration(buf, &back, &err) && back == ns, "%s -> %lld -> %s", s,
                 (long long)ns, buf);
    } else {
        FZ_CHECK(err != NULL, "refused without a message: %s", s);
        free(err);
    }
    free(s);
    if (size >= 8) {
        memcpy(&ns, data, sizeof(ns));
        go_format_duration(ns, buf);
        err = NULL;
        FZ_CHECK(go_parse_duration(buf, &back, &err) && back == ns, "%lld -> %s: %s", (long long)ns,
                 buf, err ? err : "");
    }
    return 0;
}
