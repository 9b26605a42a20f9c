/* ksched check-config [FILE]: load a KubeSchedulerConfiguration, report
 * every problem (exit 2), or print the fully defaulted configuration as
 * `kube-scheduler --write-config-to` would (exit 0). Without FILE it
 * prints the defaults. */
#include "cmd/commands.h"
#include "cmd/common.h"
#include "cmd/flags.h"
#include "cmd/plugin_opts.h"
#include "config/config.h"
#include "framework/framework.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f, const void *arg) {
    fputs("usage: ksched check-config [options] [FILE]\n"
          "\n"
          "Validate a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, YAML or\n"
          "JSON) and print it fully defaulted, as kube-scheduler --write-config-to does.\n"
          "Without FILE, print the defaults. Exit status: 0 valid, 2 invalid.\n"
          "\n"
          "options:\n" KS_PLUGIN_OPTS_USAGE KS_FEATURE_GATES_USAGE "  -h, --help           this text\n",
          f);
}

typedef struct check_cmd {
    ks_plugin_opts po;
    const char **gates;
    size_t ngates;
    const char **files;
    size_t nfiles;
} check_cmd;

static bool add_gate(void *dst, const char *v) {
    check_cmd *c = dst;
    c->gates[c->ngates++] = v;
    return true;
}

static int run(check_cmd *c) {
    char *err = NULL;
    /* the defaults and the validation of plugin args follow the gates */
    if (!ks_feature_gates_apply(c->gates, c->ngates, &err) || !ks_plugin_opts_load(&c->po, ks_default_registry(), &err)) {
        fprintf(stderr, "ksched check-config: %s\n", err);
        free(err);
        return KS_EXIT_BAD_INPUT;
    }
    ks_config *cfg = ks_cli_load_config(c->nfiles ? c->files[0] : NULL, ks_default_registry());
    if (!cfg) return KS_EXIT_BAD_INPUT;
    char *yaml = ks_config_to_yaml(cfg);
    fputs(yaml, stdout);
    free(yaml);
    ks_config_free(cfg);
    return KS_EXIT_OK;
}

int cmd_check_config(int argc, char **argv) {
    check_cmd c = {.gates = calloc((size_t)argc + 1, sizeof(char *)), .files = calloc((size_t)argc + 1, sizeof(char *))};
    const ks_flag flags[] = {KS_FN_FLAG("feature-gates", &c, add_gate)};
    const ks_flag_group groups[] = {ks_flags_plugins(&c.po)};
    ks_cmd_line cl = {.cmd = "check-config", .usage = usage, .flags = flags, .nflags = KS_FLAGS_N(flags),
                      .groups = groups, .ngroups = KS_FLAGS_N(groups), .args = c.files, .nargs = &c.nfiles};
    int rc = ks_cmd_line_parse(&cl, argc, argv);
    if (rc < 0 && c.nfiles > 1) {
        fprintf(stderr, "ksched check-config: only one FILE may be given\n");
        rc = KS_EXIT_BAD_INPUT;
    }
    if (rc < 0) rc = run(&c);
    free(c.gates);
    free(c.files);
    ks_plugin_opts_free(&c.po);
    return rc;
}
