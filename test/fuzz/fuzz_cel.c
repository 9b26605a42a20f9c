/* libFuzzer target for CEL: bytes -> an expression, compiled as a DRA
 * device selector and (when it compiles) evaluated against a device with
 * every kind of attribute, under the cost limit. Nothing may crash, leak,
 * loop without bound or trip a sanitizer, whatever the input.
 *
 * Build (needs clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE \
 *     -Isrc -Iinclude test/fuzz/fuzz_cel.c $(find src/cel src/util src/api -name '*.c') \
 *     -ljansson -lyaml -lpcre2-8 -lpthread -ldl -lm -o build/fuzz_cel
 *   build/fuzz_cel -max_len=512 build/corpus-cel
 * Without clang, -DKS_FUZZ_MAIN gives a driver that runs the target once
 * per file named on the command line (for replaying crashes with gcc). */
#include "cel/cel.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ks_cel_attr attrs[] = {
    {"model", "gpu.example.com", "model", KS_CEL_ATTR_STRING, false, 0, "a100"},
    {"memory", "gpu.example.com", "memory", KS_CEL_ATTR_INT, false, 40, NULL},
    {"mig", "gpu.example.com", "mig", KS_CEL_ATTR_BOOL, true, 0, NULL},
    {"driverVersion", "gpu.example.com", "driverVersion", KS_CEL_ATTR_VERSION, false, 0, "1.2.3-rc.1"},
    {"other.example.com/numa", "other.example.com", "numa", KS_CEL_ATTR_INT, false, 1, NULL},
};
static const ks_cel_capacity caps[] = {
    {"memory", "gpu.example.com", "memory", (__int128)40 * 1024 * 1024 * 1024 * 1000000000},
};
static const ks_cel_device dev = {"gpu.example.com", false, 5, 1, attrs, caps};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *expr = malloc(size + 1);
    memcpy(expr, data, size);
    expr[size] = 0;
    static ks_cel_ctx *ctx;
    if (!ctx) ctx = ks_cel_ctx_new();
    char *err = NULL;
    ks_cel_program *p = ks_cel_compile_any(expr, NULL, &err);
    free(err);
    if (p) {
        char *out = ks_cel_eval_print(p, &dev, KS_CEL_SELECTOR_MAX_COST, ctx, &err);
        free(out);
        free(err);
        const char *merr;
        ks_cel_device_matches(p, &dev, KS_CEL_SELECTOR_MAX_COST, ctx, &merr);
        ks_cel_program_free(p);
    }
    free(expr);
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
