#include "framework/loader.h"
#include "framework/framework_internal.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* dlopen and dlerror are not thread-safe together; loading is rare. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

bool ks_plugin_load(ks_registry *reg, const char *path, char **err) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        *err = ks_xasprintf("%s: cannot load plugin: %s", path, strerror(errno));
        return false;
    }
    if (!S_ISREG(sb.st_mode)) {
        *err = ks_xasprintf("%s: cannot load plugin: not a regular file", path);
        return false;
    }
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        *err = ks_xasprintf("%s: cannot load plugin: %s", path, strerror(errno));
        return false;
    }

    pthread_mutex_lock(&load_lock);
    bool ok = false;
    /* RTLD_NOW: a plugin needing a ks_* function this ksched lacks fails
     * here with the symbol's name, not later in the middle of a cycle.
     * RTLD_LOCAL: each plugin's own symbols (ks_plugin_init first of all)
     * stay its own. The real path always has a slash, so dlopen never
     * searches the library path for it. A file loaded twice (say, with
     * --plugin and again through --plugin-dir) maps once, but its init
     * runs again and its names are then refused as duplicates. */
    void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        *err = ks_xasprintf("%s: cannot load plugin: %s", path, why ? why : "dlopen failed");
        goto out;
    }
    dlerror();
    /* POSIX guarantees this void * to function pointer conversion. */
    ks_plugin_init_fn init = (ks_plugin_init_fn)dlsym(dl, KS_PLUGIN_INIT_SYMBOL);
    if (!init) {
        *err = ks_xasprintf("%s: not a ksched plugin: it does not export %s()", path,
                            KS_PLUGIN_INIT_SYMBOL);
        dlclose(dl);
        goto out;
    }

    free(ks_registry_take_error(reg));
    uint32_t before = reg->n;
    int rc = init(reg);
    char *refused = ks_registry_take_error(reg);
    if (refused) {
        /* The registry's message already names the plugin. */
        *err = ks_xasprintf("%s: %s", path, refused);
        free(refused);
    } else if (rc != 0) {
        *err = ks_xasprintf("%s: %s() failed (returned %d)", path, KS_PLUGIN_INIT_SYMBOL, rc);
    } else {
        for (uint32_t i = before; i < reg->n; i++)
            ks_infof(2, "loaded plugin %s from %s", reg->ops[i]->name, path);
        if (reg->n == before) ks_warnf("%s: %s() registered no plugin", path, KS_PLUGIN_INIT_SYMBOL);
        ok = true;
    }
    /* On failure the object stays mapped: plugins registered before the
     * refusal point into it, and the process is about to exit anyway. */
out:
    pthread_mutex_unlock(&load_lock);
    return ok;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_so_suffix(const char *name) {
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0;
}

bool ks_plugin_load_dir(ks_registry *reg, const char *dir, char **err) {
    DIR *d = opendir(dir);
    if (!d) {
        *err = ks_xasprintf("%s: cannot read plugin directory: %s", dir, strerror(errno));
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !has_so_suffix(e->d_name)) continue;
        KS_GROW(names, cap, n + 1);
        names[n++] = ks_xasprintf("%s/%s", dir, e->d_name);
    }
    closedir(d);
    /* Sorted, so that the order (and any duplicate-name error) does not
     * depend on the file system. */
    if (n) qsort(names, n, sizeof(*names), cmp_str);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (ok && !ks_plugin_load(reg, names[i], err)) ok = false;
        free(names[i]);
    }
    free(names);
    return ok;
}
