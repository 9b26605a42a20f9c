/* The ksched subcommands. Each lives in its own file src/cmd/<name>.c as
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the command name;
 * returns the exit status) and gets one line in the table below, which
 * only src/cmd/cli.c (ks_main) includes. */
#ifndef KS_COMMANDS_H
#define KS_COMMANDS_H

typedef int (*ks_cmd_fn)(int argc, char **argv);

typedef struct ks_command {
    const char *name;
    ks_cmd_fn fn;
    const char *summary; /* one line for `ksched help` */
} ks_command;

/* Exit statuses shared by the commands. */
enum { KS_EXIT_OK = 0, KS_EXIT_FAIL = 1, KS_EXIT_BAD_INPUT = 2 };

int cmd_version(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_check_config(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_why(int argc, char **argv);
/* ksched run --shadow (src/cmd/shadow_cmd.c; cmd_run hands over to it). */
int cmd_run_shadow(int argc, char **argv);

static const ks_command ks_commands[] = {
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

#endif
