/* Manifests, the whole loader: bytes -> document trees (YAML, or JSON when
 * the text starts like JSON) -> typed decoders -> duplicates and
 * admission; then the emitters on whatever trees parsed, and a YAML print
 * of each tree must parse again. */
#include "fuzz.h"

#include "codec/decode.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    ks_load_buffer(c, "fuzz.yaml", (const char *)data, size, &errs);
    ks_errors_free(&errs);
    ks_cluster_free(c);

    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (kt_parse(a, "fuzz", (const char *)data, size, &docs, &n, &err)) {
        for (uint32_t i = 0; i < n && i < 4; i++) {
            char *y = kt_to_yaml(docs[i]);
            free(kt_to_json(docs[i], 2));
            if (y) {
                /* what we print, we read back */
                ks_arena *b = ks_arena_new(0);
                ks_tree **d2;
                uint32_t n2;
                char *e2 = NULL;
                FZ_CHECK(kt_parse(b, "printed", y, strlen(y), &d2, &n2, &e2), "%s\n%s", e2, y);
                free(e2);
                ks_arena_free(b);
            }
            free(y);
        }
    }
    free(err);
    ks_arena_free(a);
    return 0;
}
