/* main() for fuzz targets built without libFuzzer: runs the target once
 * per file named on the command line, and on every regular file below a
 * directory (recursively, in name order), as libFuzzer does with a
 * corpus. Used by make test (regression mode) and to replay a crash with
 * gcc. Prints "N inputs" at the end. */
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static unsigned long ran;

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0, r;
    uint8_t *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0)
        if ((n += r) == cap) buf = realloc(buf, cap *= 2);
    fclose(f);
    if (!buf) abort();
    /* a copy of exactly n bytes, so that ASan sees reads past the end */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    ran++;
    return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_path(const char *path, int depth) {
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return S_ISREG(st.st_mode) ? run_file(path) : 0;
    if (depth > 16) return 0;
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof(*names), cmp);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= run_path(names[i], depth + 1);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue; /* libFuzzer flags, ignored */
        rc |= run_path(argv[i], 0);
    }
    printf("%lu inputs\n", ran);
    return rc;
}
