#include "cmd/plugin_opts.h"
#include "framework/loader.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void ks_plugin_opts_add(ks_plugin_opts *o, bool is_dir, const char *path) {
    KS_GROW(o->v, o->cap, o->n + 1);
    o->v[o->n++] = (ks_plugin_source){.is_dir = is_dir, .path = path};
}

/* "--name", "-name", "--name=value" or "-name=value": true when arg is the
 * option; *value is set for the "=" forms. */
static bool match(const char *arg, const char *name, const char **value) {
    if (arg[0] != '-') return false;
    arg += arg[1] == '-' ? 2 : 1;
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return false;
    if (arg[n] == '\0') {
        *value = NULL;
        return true;
    }
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    return false;
}

int ks_plugin_opts_parse(ks_plugin_opts *o, int argc, char **argv, int *i, char **err) {
    const char *arg = argv[*i], *value;
    bool is_dir;
    if (match(arg, "plugin-dir", &value)) is_dir = true;
    else if (match(arg, "plugin", &value)) is_dir = false;
    else return 0;
    if (!value) {
        if (*i + 1 >= argc) {
            *err = ks_xasprintf("%s needs a value (%s)", arg, is_dir ? "a directory" : "a .so file");
            return -1;
        }
        value = argv[++*i];
    }
    if (!*value) {
        *err = ks_xasprintf("%s: empty value", arg);
        return -1;
    }
    ks_plugin_opts_add(o, is_dir, value);
    return 1;
}

bool ks_plugin_opts_load(const ks_plugin_opts *o, ks_registry *reg, char **err) {
    for (size_t i = 0; i < o->n; i++) {
        const ks_plugin_source *s = &o->v[i];
        if (!(s->is_dir ? ks_plugin_load_dir(reg, s->path, err) : ks_plugin_load(reg, s->path, err)))
            return false;
    }
    return true;
}

void ks_plugin_opts_free(ks_plugin_opts *o) {
    free(o->v);
    memset(o, 0, sizeof(*o));
}
