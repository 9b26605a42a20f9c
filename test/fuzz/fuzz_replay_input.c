/* The inputs of `ksched replay` (sim/replay_input.h): the bytes are a
 * file whose format is recognised from its content, as the command does;
 * the event formats (native YAML or JSON lines, audit logs, openb pod CSV)
 * are read event by event to the end or the first error, an openb node
 * CSV into a cluster. Manifests are the manifest targets' business. An
 * error names the file first (FILE:LINE: ...); nothing crashes, leaks or
 * loops. */
#include "fuzz.h"

#include "sim/replay_input.h"
#include "util/log.h"

#include <unistd.h>

/* Bounds the events read from one input (a CSV line is one event). */
#define MAX_EVENTS 100000

static void check_error(const char *path, const char *err) {
    FZ_CHECK(err && strncmp(err, path, strlen(path)) == 0, "error does not name the file: %s", err ? err : "(none)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    char path[] = "/tmp/fuzz-replay-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) abort();
    if (size && write(fd, data, size) != (ssize_t)size) abort();
    close(fd);
    char *err = NULL;
    ks_tl_format f;
    if (!ks_tl_detect(path, &f, &err)) {
        check_error(path, err);
    } else if (f == KS_TLF_OPENB_NODES) {
        ks_cluster *c = ks_cluster_new();
        if (!ks_tl_openb_nodes(path, c, &err)) check_error(path, err);
        ks_cluster_free(c);
    } else if (f != KS_TLF_MANIFESTS) {
        ks_tl_reader *r = ks_tl_reader_open(path, f, &err);
        if (!r) {
            check_error(path, err);
        } else {
            ks_tl_event *ev;
            bool abs;
            int rc = 0;
            for (int n = 0; n < MAX_EVENTS && (rc = ks_tl_reader_next(r, &ev, &abs, &err)) == 1; n++)
                ks_tl_event_free(ev);
            if (rc < 0) check_error(path, err);
            ks_tl_reader_free(r);
        }
    }
    free(err);
    unlink(path);
    return 0;
}
