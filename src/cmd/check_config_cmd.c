/* ksched check-config [FILE]: load a KubeSchedulerConfiguration, report
 * every problem (exit 2), or print the fully defaulted configuration as
 * `kube-scheduler --write-config-to` would (exit 0). Without FILE it
 * prints the defaults. */
#include "cmd/common.h"
#include "cmd/plugin_opts.h"
#include "config/config.h"
#include "framework/framework.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_check_config(int argc, char **argv);

static void usage(FILE *f) {
    fputs("usage: ksched check-config [options] [FILE]\n"
          "\n"
          "Validate a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, YAML or\n"
          "JSON) and print it fully defaulted, as kube-scheduler --write-config-to does.\n"
          "Without FILE, print the defaults. Exit status: 0 valid, 2 invalid.\n"
          "\n"
          "options:\n" KS_PLUGIN_OPTS_USAGE KS_FEATURE_GATES_USAGE "  -h, --help           this text\n",
          f);
}

int cmd_check_config(int argc, char **argv) {
    ks_plugin_opts po = {0};
    const char **gates = calloc((size_t)argc + 1, sizeof(char *));
    size_t ngates = 0;
    const char *file = NULL;
    char *err = NULL;
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        int r = ks_plugin_opts_parse(&po, argc, argv, &i, &err);
        if (r < 0) {
            fprintf(stderr, "ksched check-config: %s\n", err);
            free(err);
            goto out;
        }
        if (r > 0) continue;
        const char *val = NULL;
        if (ks_cli_value(argc, argv, &i, "feature-gates", &val, &err)) {
            if (!val) {
                fprintf(stderr, "ksched check-config: %s\n", err);
                free(err);
                goto out;
            }
            gates[ngates++] = val;
            continue;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            rc = 0;
            goto out;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "ksched check-config: unknown option %s\n", argv[i]);
            usage(stderr);
            goto out;
        }
        if (file) {
            fprintf(stderr, "ksched check-config: only one FILE may be given\n");
            goto out;
        }
        file = argv[i];
    }
    /* the defaults and the validation of plugin args follow the gates */
    if (!ks_feature_gates_apply(gates, ngates, &err) || !ks_plugin_opts_load(&po, ks_default_registry(), &err)) {
        fprintf(stderr, "ksched check-config: %s\n", err);
        free(err);
        goto out;
    }

    ks_config *cfg = ks_cli_load_config(file, ks_default_registry());
    if (cfg) {
        char *yaml = ks_config_to_yaml(cfg);
        fputs(yaml, stdout);
        free(yaml);
        ks_config_free(cfg);
        rc = 0;
    }
out:
    free(gates);
    ks_plugin_opts_free(&po);
    return rc;
}
