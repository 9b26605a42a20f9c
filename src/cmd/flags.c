/* The one command-line parser of the ksched commands (see flags.h). */
#include "cmd/flags.h"
#include "cmd/common.h"
#include "cmd/live.h"
#include "cmd/run_flags.h"
#include "kube/leaderelection.h"
#include "server/ops.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- the shared groups ---------------------------------------------------- */

static int group_common(void *c, int argc, char **argv, int *i, char **err) {
    return ks_cli_common_parse(c, argc, argv, i, err);
}
static int group_live(void *l, int argc, char **argv, int *i, char **err) {
    return ks_cli_live_parse(l, argc, argv, i, err);
}
static int group_run(void *f, int argc, char **argv, int *i, char **err) {
    return ks_run_flag_parse(f, argc, argv, i, err);
}
static int group_ops(void *f, int argc, char **argv, int *i, char **err) {
    return ks_ops_flag_parse(f, argc, argv, i, err);
}
static int group_leader_election(void *f, int argc, char **argv, int *i, char **err) {
    return ks_leader_election_flag_parse(f, argc, argv, i, err);
}
static int group_plugins(void *o, int argc, char **argv, int *i, char **err) {
    return ks_plugin_opts_parse(o, argc, argv, i, err);
}

ks_flag_group ks_flags_common(struct ks_cli_common *c) { return (ks_flag_group){group_common, c}; }
ks_flag_group ks_flags_live(struct ks_cli_live *l) { return (ks_flag_group){group_live, l}; }
ks_flag_group ks_flags_run(struct ks_run_flags *f) { return (ks_flag_group){group_run, f}; }
ks_flag_group ks_flags_ops(struct ks_ops_flags *f) { return (ks_flag_group){group_ops, f}; }
ks_flag_group ks_flags_leader_election(struct ks_leader_election_flags *f) {
    return (ks_flag_group){group_leader_election, f};
}
ks_flag_group ks_flags_plugins(struct ks_plugin_opts *o) { return (ks_flag_group){group_plugins, o}; }

/* ---- one flag of a table -------------------------------------------------- */

bool ks_flag_parse_bool(const char *v, bool *out) {
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
    for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
        if (!strcmp(v, yes[k])) return (*out = true), true;
        if (!strcmp(v, no[k])) return (*out = false), true;
    }
    return false;
}

/* "--name", "-name", with "=V" or not: the name's length in a, the value
 * after '=' in *eq (NULL without one); 0 when a is not a flag. */
static size_t flag_name(const char *a, const char **eq) {
    if (a[0] != '-' || a[1] == '\0') return 0;
    a += a[1] == '-' ? 2 : 1;
    const char *e = strchr(a, '=');
    *eq = e ? e + 1 : NULL;
    return e ? (size_t)(e - a) : strlen(a);
}

static const ks_flag *find_flag(const ks_cmd_line *cl, const char *a, const char **eq) {
    size_t n = flag_name(a, eq);
    if (!n) return NULL;
    const char *name = a + (a[1] == '-' ? 2 : 1);
    for (size_t k = 0; k < cl->nflags; k++)
        if (strlen(cl->flags[k].name) == n && !strncmp(cl->flags[k].name, name, n)) return &cl->flags[k];
    return NULL;
}

/* Set f from argv[*i] (value inline after '=' or the next argument).
 * 1 done, -1 with *err. */
static int set_flag(const ks_flag *f, const char *eq, int argc, char **argv, int *i, char **err) {
    const char *a = argv[*i];
    if (f->type == KS_FLAG_BOOL) {
        bool v = true;
        if (eq && !ks_flag_parse_bool(eq, &v)) goto invalid;
        *(bool *)f->dst = v;
        return 1;
    }
    const char *val = eq;
    if (!val) {
        if (*i + 1 >= argc) {
            *err = ks_xasprintf("option %s needs a value", a);
            return -1;
        }
        val = argv[++*i];
    }
    uint64_t u;
    switch (f->type) {
    case KS_FLAG_STRING: *(const char **)f->dst = val; return 1;
    case KS_FLAG_U64:
        if (!ks_cli_u64(val, &u) || (f->max && u > f->max)) goto invalid;
        *(uint64_t *)f->dst = u;
        return 1;
    case KS_FLAG_FN:
        if (!f->fn(f->dst, val)) goto invalid;
        return 1;
    default: break;
    }
invalid:
    *err = ks_xasprintf("invalid value for %s", a);
    return -1;
}

/* ---- the command line ----------------------------------------------------- */

static int next_arg(const ks_cmd_line *cl, int argc, char **argv, int *i, bool *help, char **err) {
    const char *a = argv[*i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        *help = true;
        return 1;
    }
    for (size_t g = 0; g < cl->ngroups; g++) {
        int r = cl->groups[g].parse(cl->groups[g].ctx, argc, argv, i, err);
        if (r) return r;
    }
    const char *eq;
    const ks_flag *f = find_flag(cl, a, &eq);
    if (f) return set_flag(f, eq, argc, argv, i, err);
    if (a[0] == '-' && a[1] != '\0') return 0;
    if (!cl->args) {
        *err = ks_xasprintf("unexpected argument %s", a);
        return -1;
    }
    cl->args[(*cl->nargs)++] = a;
    return 1;
}

int ks_cmd_line_parse(const ks_cmd_line *cl, int argc, char **argv) {
    bool help = false;
    char *err = NULL;
    if (cl->nargs) *cl->nargs = 0;
    for (int i = 1; i < argc; i++) {
        int r = next_arg(cl, argc, argv, &i, &help, &err);
        if (r > 0) continue;
        if (help) break;
        if (r < 0) {
            fprintf(stderr, "ksched %s: %s\n", cl->cmd, err ? err : "bad command line");
            free(err);
            return 2;
        }
        fprintf(stderr, "ksched %s: unknown option %s\n", cl->cmd, argv[i]);
        cl->usage(stderr, cl->usage_arg);
        return 2;
    }
    free(err);
    if (!help) return -1;
    cl->usage(stdout, cl->usage_arg);
    return 0;
}
