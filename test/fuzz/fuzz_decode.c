/* libFuzzer target for the manifest path: bytes -> document trees (YAML or
 * JSON) -> typed decoders -> admission, plus the emitters on what parsed.
 * Nothing may crash, leak or trip a sanitizer, whatever the input.
 *
 * Build (needs clang; see docs/manifests.md):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE \
 *     -Isrc -Iinclude test/fuzz/fuzz_decode.c $(find src -name '*.c' ! -path 'src/cmd/main.c') \
 *     -lyaml -ljansson -lcurl -lmicrohttpd -lpthread -ldl -lm -o build/fuzz_decode
 *   build/fuzz_decode -max_len=65536 test/fixtures/
 * Without clang, -DKS_FUZZ_MAIN gives a driver that runs the target once
 * per file named on the command line (for replaying crashes with gcc). */
#include "codec/decode.h"
#include "util/log.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    /* the whole loader: parse, decode every kind, duplicates, admission */
    ks_cluster *c = ks_cluster_new();
    ks_errors errs;
    ks_errors_init(&errs);
    ks_load_buffer(c, "fuzz.yaml", (const char *)data, size, &errs);
    ks_errors_free(&errs);
    ks_cluster_free(c);

    /* the emitters on whatever trees the input gave */
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs;
    uint32_t n;
    char *err = NULL;
    if (kt_parse(a, "fuzz", (const char *)data, size, &docs, &n, &err)) {
        for (uint32_t i = 0; i < n && i < 4; i++) {
            free(kt_to_yaml(docs[i]));
            free(kt_to_json(docs[i], 2));
        }
    }
    free(err);
    ks_arena_free(a);
    return 0;
}

#ifdef KS_FUZZ_MAIN
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        size_t cap = 1 << 16, n = 0, r;
        uint8_t *buf = malloc(cap);
        while ((r = fread(buf + n, 1, cap - n, f)) > 0)
            if ((n += r) == cap) buf = realloc(buf, cap *= 2);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    return 0;
}
#endif
