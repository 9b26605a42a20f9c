/* ks_main: the ksched command line, dispatching to a subcommand of
 * src/cmd/commands.h. It lives in libksched so that a custom scheduler
 * binary gets the same command line (include/ksched/ksched.h). Global
 * flags: -v=N (klog verbosity), accepted anywhere on the command line. */
#include "cmd/commands.h"
#include "util/log.h"
#include "util/version.h"

#include <ksched/ksched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const ks_command ks_commands[] = {
    {"simulate", cmd_simulate, "schedule a cluster's pending pods from manifests, offline"},
    {"why", cmd_why, "why a pod is pending, and the smallest verified change that fixes it"},
    {"replay", cmd_replay, "replay a trace of pods and node changes on simulated time"},
    {"capacity", cmd_capacity, "how many more replicas of a pod fit, and where"},
    {"snapshot", cmd_snapshot, "write a live cluster's objects as manifests simulate reads"},
    {"run", cmd_run, "schedule a real cluster through its kube-apiserver"},
    {"version", cmd_version, "print the version"},
    {"load", cmd_load, "load manifests and print a summary of the cluster"},
    {"check-config", cmd_check_config, "validate a KubeSchedulerConfiguration, print it defaulted"},
};
const size_t ks_ncommands = sizeof(ks_commands) / sizeof(ks_commands[0]);

int cmd_version(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("ksched %s (decides as kube-scheduler %s)\n", KS_VERSION, KS_COMPAT);
    return KS_EXIT_OK;
}

static void usage(FILE *f) {
    fprintf(f, "usage: ksched [-v=N] <command> [args]\n\ncommands:\n");
    for (size_t i = 0; i < ks_ncommands; i++)
        fprintf(f, "  %-14s %s\n", ks_commands[i].name, ks_commands[i].summary);
    fprintf(f, "\nksched <command> -h shows a command's options.\n");
}

/* Take "-v=N", "--v=N", "-v N" out of argv, wherever they are. */
static bool take_verbosity(int *argc, char **argv) {
    int o = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strncmp(a, "-v=", 3) == 0) val = a + 3;
        else if (strncmp(a, "--v=", 4) == 0) val = a + 4;
        else if ((strcmp(a, "-v") == 0 || strcmp(a, "--v") == 0) && i + 1 < *argc) val = argv[++i];
        if (!val) {
            argv[o++] = argv[i];
            continue;
        }
        char *end;
        long v = strtol(val, &end, 10);
        if (!*val || *end || v < 0 || v > 100) {
            fprintf(stderr, "ksched: invalid verbosity \"%s\"\n", val);
            return false;
        }
        ks_log_set_verbosity((int)v);
    }
    argv[o] = NULL;
    *argc = o;
    return true;
}

int ks_main(int argc, char **argv) {
    if (!take_verbosity(&argc, argv)) return KS_EXIT_BAD_INPUT;
    if (argc < 2) {
        usage(stderr);
        return KS_EXIT_BAD_INPUT;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        usage(stdout);
        return KS_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) return cmd_version(argc - 1, argv + 1);
    for (size_t i = 0; i < ks_ncommands; i++)
        if (strcmp(ks_commands[i].name, name) == 0) return ks_commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ksched: unknown command \"%s\"\n", name);
    usage(stderr);
    return KS_EXIT_BAD_INPUT;
}
