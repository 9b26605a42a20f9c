/* --plugin FILE.so and --plugin-dir DIR, shared by every command that
 * builds a scheduler (simulate, run, check-config, ...).
 *
 *     ks_plugin_opts po = {0};
 *     for (int i = 1; i < argc; i++) {
 *         int r = ks_plugin_opts_parse(&po, argc, argv, &i, &err);
 *         if (r < 0) -> usage error (exit 2)
 *         if (r > 0) continue;
 *         ... the command's own options ...
 *     }
 *     if (!ks_plugin_opts_load(&po, ks_default_registry(), &err)) -> exit 2
 *     ... then load the configuration (which may name the plugins) ...
 *     ks_plugin_opts_free(&po);
 *
 * Both options may repeat; files load in command-line order, a directory's
 * *.so files in name order. */
#ifndef KS_PLUGIN_OPTS_H
#define KS_PLUGIN_OPTS_H

#include <ksched/ksched.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct ks_plugin_source {
    bool is_dir;
    const char *path; /* argv's string, not copied */
} ks_plugin_source;

typedef struct ks_plugin_opts {
    ks_plugin_source *v;
    size_t n, cap;
} ks_plugin_opts;

/* If argv[*i] is --plugin or --plugin-dir (as "--plugin F", "--plugin=F",
 * and the same with one dash), record it, leave *i on the last argument it
 * used and return 1. Return 0 when argv[*i] is another argument, -1 with
 * *err (malloc'd) when the value is missing. */
int ks_plugin_opts_parse(ks_plugin_opts *o, int argc, char **argv, int *i, char **err);
/* Record a file or directory directly (for getopt_long users). */
void ks_plugin_opts_add(ks_plugin_opts *o, bool is_dir, const char *path);
/* Load everything recorded into reg, in order. false with *err on the
 * first failure (the message names the file). */
bool ks_plugin_opts_load(const ks_plugin_opts *o, ks_registry *reg, char **err);
void ks_plugin_opts_free(ks_plugin_opts *o);

/* Lines for a command's --help. */
#define KS_PLUGIN_OPTS_USAGE                                                              \
    "  --plugin FILE.so     load out-of-tree plugins from a shared object (repeatable)\n" \
    "  --plugin-dir DIR     load every *.so in DIR, in name order (repeatable)\n"

#endif
