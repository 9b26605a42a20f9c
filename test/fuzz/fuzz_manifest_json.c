/* Manifests in JSON (kubectl get -o json, one value after another): the
 * JSON parser forced, each document decoded into a cluster with the
 * document kept (as the loader does) and without (as the API client
 * does), then admission and the emitters. */
#include "fuzz.h"

#include "codec/decode.h"
#include "codec/tree_internal.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (!kt_parse_json(a, "fuzz.json", (const char *)data, size, &docs, &n, &err)) {
        FZ_CHECK(err != NULL, "no message for a parse error");
        free(err);
        ks_arena_free(a);
        return 0;
    }
    for (int keep = 0; keep < 2; keep++) {
        ks_cluster *c = ks_cluster_new();
        ks_errors errs;
        ks_errors_init(&errs);
        ks_docref *doc = keep ? ks_docref_new(ks_arena_new(0)) : NULL;
        ks_decode_ctx ctx = {.file = "fuzz.json", .doc = doc, .errs = &errs};
        for (uint32_t i = 0; i < n; i++) ks_decode_document(c, docs[i], &ctx);
        char *e = NULL;
        ks_cluster_admit(c, &e);
        free(e);
        ks_docref_unref(doc);
        ks_errors_free(&errs);
        ks_cluster_free(c);
    }
    for (uint32_t i = 0; i < n && i < 4; i++) {
        free(kt_to_yaml(docs[i]));
        char *j = kt_to_json(docs[i], 0);
        if (j) {
            /* what we print, we read back */
            ks_arena *b = ks_arena_new(0);
            ks_tree **d2;
            uint32_t n2;
            char *e2 = NULL;
            FZ_CHECK(kt_parse_json(b, "printed", j, strlen(j), &d2, &n2, &e2), "%s\n%s", e2, j);
            free(e2);
            ks_arena_free(b);
        }
        free(j);
    }
    ks_arena_free(a);
    return 0;
}
