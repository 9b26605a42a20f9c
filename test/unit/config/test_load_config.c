/* The example configurations load, resolve and print exactly as
 * kube-scheduler v1.34 prints them (test/fixtures/config/printed), and every
 * broken file under test/fixtures/config/broken fails with exactly the
 * messages in its .err file. Run from the repository root. */
#include "config/config.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fprintf(stderr, "cannot open %s (run from the repository root)\n", path);
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names in dir ending with suffix. */
static size_t list_dir(const char *dir, const char *suffix, char ***out) {
    DIR *d = opendir(dir);
    if (!d) fprintf(stderr, "cannot open %s (run from the repository root)\n", dir);
    assert_non_null(d);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        if (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    return n;
}

static void test_examples(void **state) {
    (void)state;
    static const char *const exts[] = {".yaml", ".json"};
    size_t total = 0;
    for (int x = 0; x < 2; x++) {
        char **names;
        size_t n = list_dir("examples/config", exts[x], &names);
        for (size_t i = 0; i < n; i++) {
            char path[512], golden[512];
            snprintf(path, sizeof path, "examples/config/%s", names[i]);
            snprintf(golden, sizeof golden, "test/fixtures/config/printed/%.*s.yaml",
                     (int)(strlen(names[i]) - strlen(exts[x])), names[i]);
            ks_config_errors errs;
            ks_config_errors_init(&errs);
            ks_config *cfg = ks_config_load(path, &errs);
            for (uint32_t k = 0; k < errs.n; k++) fprintf(stderr, "%s\n", errs.msgs[k]);
            assert_non_null(cfg);
            assert_true(ks_config_resolve(cfg, NULL, NULL, &errs));
            assert_int_equal(errs.n, 0);
            char *got = ks_config_to_yaml(cfg);
            char *want = slurp(golden, NULL);
            if (strcmp(got, want) != 0) fprintf(stderr, "%s differs from %s\n", path, golden);
            assert_string_equal(got, want);
            /* and the printed form reloads to itself */
            ks_config *again = ks_config_load_buffer(golden, got, strlen(got), &errs);
            assert_non_null(again);
            char *twice = ks_config_to_yaml(again);
            assert_string_equal(got, twice);
            free(twice);
            ks_config_free(again);
            free(got);
            free(want);
            ks_config_free(cfg);
            ks_config_errors_free(&errs);
            free(names[i]);
            total++;
        }
        free(names);
    }
    assert_true(total >= 5);
}

static void test_broken(void **state) {
    (void)state;
    char **names;
    size_t n = list_dir("test/fixtures/config/broken", ".yaml", &names);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        char path[512], errpath[512];
        snprintf(path, sizeof path, "test/fixtures/config/broken/%s", names[i]);
        snprintf(errpath, sizeof errpath, "test/fixtures/config/broken/%.*s.err", (int)(strlen(names[i]) - 5),
                 names[i]);
        size_t len;
        char *yaml = slurp(path, &len);
        char *want = slurp(errpath, NULL);
        /* loaded under its base name so the .err files do not depend on
         * where the tests run */
        ks_config_errors errs;
        ks_config_errors_init(&errs);
        ks_config *cfg = ks_config_load_buffer(names[i], yaml, len, &errs);
        if (cfg) {
            assert_false(ks_config_resolve(cfg, NULL, NULL, &errs));
            ks_config_free(cfg);
        }
        size_t total = 1;
        for (uint32_t k = 0; k < errs.n; k++) total += strlen(errs.msgs[k]) + 1;
        char *got = calloc(1, total);
        for (uint32_t k = 0; k < errs.n; k++) {
            strcat(got, errs.msgs[k]);
            strcat(got, "\n");
        }
        if (strcmp(got, want) != 0) fprintf(stderr, "%s:\n--- want\n%s--- got\n%s", path, want, got);
        assert_string_equal(got, want);
        free(got);
        free(want);
        free(yaml);
        ks_config_errors_free(&errs);
        free(names[i]);
    }
    free(names);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_broken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
